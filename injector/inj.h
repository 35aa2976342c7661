/* SPDX-License-Identifier: MIT */
/*
 * The injector library: rdma-inject's engine, linked by the agent too.
 * All state lives in the kernel: maps pinned under a bpffs directory
 * (default INJ_PIN_DIR) and tc filters (handle/priority INJ_TC_HANDLE), so
 * any process -- or a later `rdma-inject flush` after a crash -- sees and
 * can remove everything. Returns 0 / -errno; pointers NULL + errno.
 */
#ifndef RTB_INJ_H
#define RTB_INJ_H

#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "../ebpf/inject_abi.h"

#define INJ_TC_HANDLE 0x52d3
#define INJ_TC_PRIO 0x52d3
/* rdma-inject forward's slow path on its ports' tc ingress (forward.bpf.c) */
#define INJ_FWD_TC_HANDLE 0x52d4

struct inj_ctx;

/* pin_root NULL: INJ_PIN_DIR (a directory on a BPF filesystem, else
 * ENOTDIR). Creates (or reuses) the pinned maps. */
struct inj_ctx *inj_open(const char *pin_root);
void inj_close(struct inj_ctx *c);
/* inj_open holds the state lock (other rdma-injects wait) until inj_close;
 * this lets it go early, for a context that only reads from now on */
void inj_unlock(struct inj_ctx *c);

/* default rule: any packet of the hook, action count, BERNOULLI 100% */
void inj_rule_init(struct inj_rule *r);
/* validates, picks an id and a slot, attaches the hook on first use */
int inj_rule_add(struct inj_ctx *c, struct inj_rule *r, char *err, size_t errlen);
/* a rule from its text ("qpn 0x11 drop 1%") on hook (ifindex, dir), as
 * rdma-inject add would: its id, or 0 with err said */
uint32_t inj_rule_add_text(struct inj_ctx *c, uint32_t ifindex, int dir, const char *text,
			   char *err, size_t errlen);
int inj_rule_del(struct inj_ctx *c, uint32_t id);
/* replace the rule with r->id in place (live: same slot, counters kept) */
int inj_rule_set(struct inj_ctx *c, const struct inj_rule *r, char *err, size_t errlen);
int inj_rule_get(struct inj_ctx *c, uint32_t id, struct inj_rule *r);
/* all rules in slot order; returns how many */
int inj_rule_list(struct inj_ctx *c, struct inj_rule *out, int max);
int inj_rule_counters(struct inj_ctx *c, uint32_t id, struct inj_rule_ctr *sum);
/* seen-packet counters of one hook (summed over CPUs) */
int inj_hook_counters(struct inj_ctx *c, uint32_t ifindex, int dir, struct inj_hook_ctr *sum);
/* hooks with our filter attached: fills ifindex/dir arrays, returns the count */
int inj_hook_list(struct inj_ctx *c, uint32_t *ifindex, int *dir, int max);
/* fixed PRNG seed (0 = random) for reproducible runs */
int inj_set_seed(struct inj_ctx *c, uint64_t seed);
/* detach every filter, remove the qdiscs we created, clear and unpin the maps */
/* inj_flush when no rule is left (checked under the same lock): what a
 * controller or agent that removed its own rules does last */
int inj_flush_if(const char *pin_root, int only_if_empty);
int inj_flush(const char *pin_root);

/* tracing: the hooks (attached if need be) flagged to put every RoCE
 * packet in the ring, snaplen bytes of each, and tracking on (inj_track_set:
 * the hooks count resent packets, a figure to check the trace against); -EBUSY (said in err) while
 * another live rdma-inject reads it. The lock is not needed after begin
 * (inj_unlock); end takes it again (a new inj_open) and clears every
 * hook's flag, detaching those no rule uses. */
int inj_trace_begin(struct inj_ctx *c, const uint32_t *ifindex, const int *dir, int n,
		    uint32_t snaplen, char *err, size_t errlen);
void inj_trace_stop(struct inj_ctx *c);	/* flags off, hooks kept (counters readable) */
void inj_trace_end(struct inj_ctx *c);
int inj_trace_ring_fd(struct inj_ctx *c);
/* the trace ring's reader (ring.c): cb on every record, as libbpf's
 * ring_buffer's callback; consume drains what is there (the records read,
 * or cb's error), poll waits up to timeout_ms for a wakeup first */
struct inj_ring;
struct inj_ring *inj_ring_new(int map_fd, int (*cb)(void *ctx, void *data, size_t len), void *ctx);
int inj_ring_consume(struct inj_ring *r);
int inj_ring_poll(struct inj_ring *r, int timeout_ms);
void inj_ring_free(struct inj_ring *r);
const char *inj_verdict_name(int v);
/* tracking (inject_abi.h "Relative and transmission-indexed matching"):
 * on by hand (the hooks count resent packets and number QPs even without
 * a rule that asks), what is on, the QPs the hooks saw (returns how many),
 * and a new count (QP indices from 1 again, transmissions forgotten) */
int inj_track_set(struct inj_ctx *c, uint32_t on);
int inj_track_get(struct inj_ctx *c, uint32_t *by_hand, uint32_t *by_rules);
int inj_qp_list(struct inj_ctx *c, struct inj_qp_key *keys, struct inj_qp *qps, int max);
int inj_qp_reset(struct inj_ctx *c);
/* the trace command (trace.c): argv after "trace" */
int cmd_trace(int argc, char **argv, int json_out, const char *pin_root);
/* rdma-inject wait (wait.c): its exit code */
int cmd_wait(int argc, char **argv, int json_out, const char *pin_root);
/* rdma-inject forward (forward.c): its exit code */
int cmd_forward(int argc, char **argv, int json_out, const char *pin_root);

/* qdiscs of the kinds the injector uses (clsact, prio, fq, netem) on any device */
/* prio, fq, netem tried in a throwaway network namespace: bits 1, 2, 4;
 * -1 when that cannot be tried */
int qdisc_kinds_work(void);
int qdisc_scan(void (*cb)(uint32_t ifindex, const char *kind, uint32_t handle, void *arg),
	       void *arg);

/* for tests and the benchmark: the loaded program of a direction, the empty one */
int inj_prog_fd(struct inj_ctx *c, int dir);
int inj_empty_prog_fd(struct inj_ctx *c);

/* rule text, both ways (rule.c). Tokens as on the command line after
 * `dev DEV DIR`: [match...] action [args] [after T] [for T]. update = 1:
 * the tokens change an existing rule and the action may be left out. */
int inj_rule_parse(struct inj_rule *r, int argc, char **argv, int update, char *err,
		   size_t errlen);
/* "qpn 0x11 opcode data drop 1%" */
void inj_rule_format(const struct inj_rule *r, char *buf, size_t len);
/* a parsed rule's window (after/for), counted from now: inj_rule_add and
 * inj_rule_set call it as the rule goes into the table */
void inj_rule_window_start(struct inj_rule *r);
const char *inj_action_name(int action);
/* the counters as JSON, {"matched": n, ...} in INJ_COUNTERS order */
json_t *inj_ctr_json(const struct inj_rule_ctr *k);
/* the counters as text: " matched N dropped N ..." (the same names) */
void inj_ctr_print(FILE *f, const struct inj_rule_ctr *k);
const char *inj_class_name(int cls);

#endif
