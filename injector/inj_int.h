/* SPDX-License-Identifier: MIT */
/*
 * Inside the injector's library (inj.h): the state of one rdma-inject
 * (struct inj_ctx) and what its files share. inj.c opens the state (the
 * lock, the pinned maps, the programs) and keeps the rule table; masks.c
 * rebuilds the program's masks from it; hooks.c attaches and registers the
 * tc hooks, and sets their tracing and tracking; flush.c removes it all.
 */
#ifndef RTB_INJ_INT_H
#define RTB_INJ_INT_H

#include <stddef.h>
#include <stdint.h>
#include "inj.h"
#include "inject.skel.h"

struct inj_ctx {
	char pin_root[256];
	struct inject_bpf *skel[2];	/* per direction, loaded on first use */
	int prog[2];	/* per direction, the pinned tc program when reused (else 0) */
	int ncpu;
	int lock;	/* INJ_LOCK_PATH, held (flock) from inj_open to inj_close */
};

/* --- forward.c */
/* the actions the forwarder does: in XDP, or on its slow path (tc) */
static inline int inj_xdp_action(int a)
{
	return a == INJ_ACT_COUNT || a == INJ_ACT_DROP || a == INJ_ACT_ECN || a == INJ_ACT_CORRUPT ||
	       a == INJ_ACT_DELAY || a == INJ_ACT_REORDER || a == INJ_ACT_DUP || a == INJ_ACT_CNP;
}

/* --- hooks.c */
/* the hook's entry in inj_hooks, with a counter slot of its own (0 when
 * it has one already), or -errno */
int inj_hook_register(struct inj_ctx *c, uint32_t hk);

/* --- inj.c */
/* any loaded skeleton: they share the maps */
struct inject_bpf *inj_maps(struct inj_ctx *c);
/* the rule in table slot slot: 0, or -errno */
int inj_rule_read(struct inj_ctx *c, uint32_t slot, struct inj_rule *r);
/* the config entry read, changed by fn, written back */
int inj_cfg_update(struct inj_ctx *c, void (*fn)(struct inj_cfg *, const void *), const void *arg);
/* a per-CPU value made of u64 counters, summed over the CPUs */
int inj_percpu_sum(struct inj_ctx *c, int fd, uint32_t key, void *out, size_t size);
/* fn(map fd, its kernel name, arg) for every map of program prog_id */
void inj_for_prog_maps(uint32_t prog_id, void (*fn)(int, const char *, void *), void *arg);
/* path is a directory on a BPF filesystem */
int inj_is_bpffs(const char *path);
/* the program of one of our tc filters on this host, 0 when none */
uint32_t inj_our_prog_id(void);
/* the inj_owned map: pinned, or found through our attached program */
int inj_owned_map_fd(const char *root);
/* the state's lock (INJ_LOCK_PATH): its fd, or -errno said */
int inj_state_lock(void);

/* --- qdisc.c */
int qdisc_prio_ensure(uint32_t ifindex, uint64_t hold_ns, char *err, size_t errlen);
int qdisc_prio_remove(uint32_t ifindex);

/* --- masks.c: rebuild hook / class / QPN masks and the field tables */
int inj_masks_sync(struct inj_ctx *c);

/* --- hooks.c */
/* a veth's peer's ifindex (as /sys/class/net sees it), else 0 */
uint32_t inj_veth_peer(uint32_t ifindex);
struct bpf_tc_hook;
/* the device's clsact (hook: a tc hook of it), made and recorded as ours
 * if it has none: 0 or -errno */
int inj_clsact_ensure(struct inj_ctx *c, uint32_t ifindex, struct bpf_tc_hook *hook);
/* every registered hook's key (never updating while walking) */
int inj_hook_keys(int hfd, uint32_t keys[INJ_MAX_HOOKS]);
/* a hook's entry where the program looks (flags: the hash update's) */
int inj_hook_put(struct inj_ctx *c, uint32_t hk, const struct inj_hook *hv, uint64_t flags);
int inj_hook_attach(struct inj_ctx *c, uint32_t ifindex, int dir);
int inj_hook_detach(uint32_t ifindex, int dir);
/* a hook no rule uses any more is detached */
void inj_hook_gc(struct inj_ctx *c, uint32_t ifindex, int dir);
/* the device's flags of what we added to it (INJ_OWNED_*) */
uint32_t inj_owned_get(struct inj_ctx *c, uint32_t ifindex);
int inj_owned_set(struct inj_ctx *c, uint32_t ifindex, uint32_t v);
/* a delay or reorder rule on a veth's ingress moved to its peer's egress */
int inj_place_on_egress(struct inj_rule *r, char *err, size_t errlen);

/* --- flush.c */
/* a trace that reads the ring (its rdma-inject alive): its pid, else 0 */
uint32_t inj_trace_owner(const char *root);

#endif
