/* SPDX-License-Identifier: MIT */
/*
 * The harness of the tc program's tests (test_inject.c, test_track.c):
 * the program under BPF_PROG_TEST_RUN on crafted RoCEv2 frames (frames.h).
 * Real kernel, real maps; needs root. No packets leave: the frames only
 * run through the program, on a veth pair made for the test.
 */
#ifndef RTB_TESTS_BPF_PROG_H
#define RTB_TESTS_BPF_PROG_H

#include <errno.h>
#include <sched.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/pkt_cls.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../unit/expect.h"
#include "../../injector/inj.h"
#include "frames.h"
#include "../../lib/clock.h"
#include "../../lib/proc.h"

#define DEV "injut0"
#define PEER "injut1"

static struct inj_ctx *ctx;
static uint32_t ifx;
static char pin[128];

struct run {
	int verdict;
	uint32_t priority;
	uint64_t tstamp;
	uint8_t out[2048];
	uint32_t out_len;
};

/* n bytes of a frame through the program of a direction */
static inline int run_bytes(int dir, uint8_t *in, size_t n, struct run *res)
{
	struct __sk_buff skb = { 0 }, skb_out = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o);
	int r;

	o.data_size_in = (uint32_t)n;
	o.data_in = in;
	o.data_out = res->out;
	o.data_size_out = sizeof(res->out);
	skb.ifindex = ifx;
	o.ctx_in = &skb;
	o.ctx_size_in = sizeof(skb);
	o.ctx_out = &skb_out;
	o.ctx_size_out = sizeof(skb_out);
	o.repeat = 1;
	r = bpf_prog_test_run_opts(inj_prog_fd(ctx, dir), &o);
	if (r) {
		fprintf(stderr, "test_run: %s\n", strerror(errno));
		return -1;
	}
	res->verdict = (int)o.retval;
	res->priority = skb_out.priority;
	res->tstamp = skb_out.tstamp;
	res->out_len = o.data_size_out;
	return res->verdict;
}

static inline int run_frame(int dir, const struct frame_spec *f, struct run *res)
{
	uint8_t in[2048];

	return run_bytes(dir, in, frame_build(in, f), res);
}

static inline int verdict(int dir, const struct frame_spec *f)
{
	struct run r;

	return run_frame(dir, f, &r);
}

static inline uint32_t add(int dir, const char *text)
{
	char err[256] = "";
	uint32_t id = inj_rule_add_text(ctx, ifx, dir, text, err, sizeof(err));

	if (!id)
		fprintf(stderr, "add '%s': %s\n", text, err);
	return id;
}

static inline void del_all(void)
{
	struct inj_rule rules[INJ_MAX_RULES];
	int n = inj_rule_list(ctx, rules, INJ_MAX_RULES), i;

	for (i = 0; i < n; i++)
		inj_rule_del(ctx, rules[i].id);
}

static inline struct inj_rule_ctr ctr(uint32_t id)
{
	struct inj_rule_ctr k = { 0 };

	inj_rule_counters(ctx, id, &k);
	return k;
}

static const struct frame_spec base = { .opcode = 0x0a, .dqpn = 0x11, .psn = 150, .payload = 64 };

static inline struct inj_hook_ctr hook_ctr(int dir)
{
	struct inj_hook_ctr k;

	inj_hook_counters(ctx, ifx, dir, &k);
	return k;
}

static inline int quiet(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	return lvl == LIBBPF_WARN && getenv("V") ? vfprintf(stderr, fmt, ap) : 0;
}

/* the veth pair and the injector's state made, tests() run, all of it
 * removed and checked gone: the test's exit code (77: not root) */
static inline int prog_main(const char *name, void (*tests)(void))
{
	char *ip_add[] = { "ip", "link", "add", DEV, "type", "veth", "peer", "name", PEER, NULL };
	char *ip_up_dev[] = { "ip", "link", "set", DEV, "up", NULL };
	char *ip_up_peer[] = { "ip", "link", "set", PEER, "up", NULL };
	char *ip_del[] = { "ip", "link", "del", DEV, NULL };
	char *tc_show[] = { "tc", "qdisc", "show", "dev", DEV, NULL };
	char qdiscs[4096];

	libbpf_set_print(quiet);
	{
		/* the PRNG is per CPU (seeded with the CPU's number): "same seed,
		 * same draws" holds on one CPU, so every test run stays on one
		 * (CI t8: a migration mid-sequence gave 1998 drops, then 2036) */
		cpu_set_t one;
		int cpu = sched_getcpu();

		CPU_ZERO(&one);
		CPU_SET(cpu < 0 ? 0 : cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			perror("sched_setaffinity");
	}
	if (geteuid() != 0) {
		fprintf(stderr, "SKIP: needs root (BPF, tc)\n");
		return 77;
	}
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/rdma-inject-test-%d", (int)getpid());
	/* the pair may be left from a run that died: made if absent, then up */
	if (!if_nametoindex(DEV))
		proc_run(ip_add, NULL, 0);
	if (proc_run(ip_up_dev, NULL, 0) || proc_run(ip_up_peer, NULL, 0)) {
		fprintf(stderr, "cannot create the test veth pair\n");
		return 1;
	}
	ifx = if_nametoindex(DEV);
	ctx = inj_open(pin);
	EXPECT(ctx != NULL);
	if (ctx) {
		tests();
		inj_close(ctx);
	}
	EXPECT(inj_flush(pin) == 0);
	EXPECT(access(pin, F_OK) != 0);
	if (proc_run(tc_show, qdiscs, sizeof(qdiscs)) == 0 && strstr(qdiscs, "clsact")) {
		fprintf(stderr, "clsact left on " DEV " after flush\n");
		expect_failures++;
	}
	if (proc_run(ip_del, NULL, 0))
		fprintf(stderr, "could not delete " DEV "\n");
	return expect_done(name);
}

#endif
