// SPDX-License-Identifier: MIT
/*
 * Per-packet cost of the injector's tc program, measured in the kernel with
 * BPF_PROG_TEST_RUN (repeat) against an empty tc program, in the same run,
 * alternating, median of rounds. The frame is a 1 KiB RoCEv2 WRITE to QPN
 * 0x11; rule sets:
 *   hook only   the hook has a rule, for another opcode class (masks say no)
 *   N rules     N-1 rules for other QPNs + 1 counting rule for this QPN, last
 *               (the best case: the exact-QPN bucket alone finds it)
 *   N ranges    N rules whose QPN range covers the packet but whose PSN range
 *               does not: each one a candidate a linear scan checks (the
 *               worst case before the rule index)
 *   N spread    N-1 rules, each with QPN, PSN and length ranges of its own
 *               (2N+1 segments per table: the longest binary searches),
 *               none taking the packet, + 1 counting rule that does, last
 *               (the worst case of the index: three full searches, a match)
 *   The summary gives, per rule count, the best and the worst of these and
 *   the worst next to the time a 1538-byte frame takes at 100 Gb/s. These
 *   nine sets are measured in PASSES passes over all of them; each line is
 *   the median pass.
 *   traced      the same with the hook traced (rdma-inject trace): every
 *               packet's first 128 bytes into the ring, which a thread
 *               drains as rdma-inject does; records lost are said (a trace
 *               also tracks: its cost includes the tracked line's)
 *   tracked     the same with tracking on (rdma-inject track on, as the
 *               agent does for its runs): the QP looked up, resent counted
 *   qp and tx   a rule on the QP's index and the PSN's transmission: the
 *               QP and the PSN looked up
 */
#include <pthread.h>
#include <net/if.h>
#include <stdio.h>
#include "bench.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../injector/inj.h"
#include "inj_bench.h"
#include "../tests/bpf/frames.h"

#define REPEAT 200000
/* a 1538-byte frame on the wire (preamble, IFG, FCS in) at 100 Gb/s */
#define FRAME_100G_NS (1538.0 * 8 / 100.0)
#define ROUNDS 11
#define PASSES 3

static struct inj_ctx *ctx;
/* measure with the hook traced and the ring drained meanwhile */
static void measure_traced(const char *name, const uint8_t *frame, uint32_t len);
static uint32_t ifx;

static double run_ns(int fd, const uint8_t *frame, uint32_t len)
{
	struct __sk_buff skb = { .ifindex = ifx };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = len, .ctx_in = &skb,
		    .ctx_size_in = sizeof(skb), .repeat = REPEAT);

	if (bpf_prog_test_run_opts(fd, &o)) {
		perror("test_run");
		exit(1);
	}
	return (double)o.duration;
}

static void add(const char *text)
{
	bench_rule_add(ctx, ifx, text);
}

static void clear(void)
{
	struct inj_rule rules[INJ_MAX_RULES];
	int n = inj_rule_list(ctx, rules, INJ_MAX_RULES), i;

	for (i = 0; i < n; i++)
		inj_rule_del(ctx, rules[i].id);
}

static double median_of(double *v, int n)
{
	double t[16];
	int i;

	for (i = 0; i < n && i < 16; i++)
		t[i] = v[i];
	qsort(t, (size_t)i, sizeof(double), bench_cmp);
	return t[i / 2];
}

/* the medians of ROUNDS rounds, empty and injector taking turns: the cost */
static double measure_cost(const uint8_t *frame, uint32_t len, double *empty, double *injector)
{
	double e[ROUNDS], p[ROUNDS], d[ROUNDS];
	int i;

	for (i = 0; i < ROUNDS; i++) {
		e[i] = run_ns(inj_empty_prog_fd(ctx), frame, len);
		p[i] = run_ns(inj_prog_fd(ctx, INJ_DIR_INGRESS), frame, len);
		d[i] = p[i] - e[i];
	}
	*empty = median_of(e, ROUNDS);
	*injector = median_of(p, ROUNDS);
	return median_of(d, ROUNDS);
}

static double measure(const char *name, const uint8_t *frame, uint32_t len)
{
	double e, p, d = measure_cost(frame, len, &e, &p);

	printf("%-28s %10.1f %12.1f %14.1f\n", name, e, p, d);
	return d;
}

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

int main(void)
{
	struct frame_spec f = { .opcode = 0x0a, .dqpn = 0x11, .psn = 1000, .payload = 1024 };
	uint8_t frame[2048];
	uint32_t len = (uint32_t)frame_build(frame, &f);
	char pin[96], rule[96];
	int n, i;
	static const int sizes[] = { 1, 16, 64 };
	double best[3], worst[3], cost[9][PASSES], emp[9][PASSES], inj[9][PASSES];
	int k;

	if (geteuid()) {
		fprintf(stderr, "inject_cost: needs root\n");
		return 77;
	}
	libbpf_set_print(quiet);
	if (system("ip link add injb0 type veth peer name injb1 2>/dev/null; ip link set injb0 up"))
		return 1;
	ifx = if_nametoindex("injb0");
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/rdma-inject-bench-%d", (int)getpid());
	ctx = inj_open(pin);
	if (!ctx) {
		perror("inj_open");
		return 1;
	}
	printf("BPF_PROG_TEST_RUN, %d repeats x %d rounds (median), 1 KiB RoCEv2 WRITE\n", REPEAT,
	       ROUNDS);
	printf("%-28s %10s %12s %14s\n", "rule set", "empty[ns]", "injector[ns]", "cost[ns/pkt]");
	add("opcode ack count");
	measure("hook, no candidate", frame, len);
	measure_traced("hook, no candidate, traced", frame, len);
	clear();
	add("qpn 0x11 count");
	measure("1 rule (matching)", frame, len);
	measure_traced("1 rule (matching), traced", frame, len);
	inj_track_set(ctx, 1);	/* the QPs numbered, resent packets counted (the agent's runs) */
	measure("1 rule (matching), tracked", frame, len);
	inj_track_set(ctx, 0);
	clear();
	inj_qp_reset(ctx);
	add("qp 1 tx 1-1000000 count");	/* every packet: one QP and one PSN looked up */
	measure("1 rule on qp and tx", frame, len);
	clear();
	/* the rule-count table: every set measured in each of PASSES passes over
	 * all of them, the median pass kept, so a noisy minute on the host moves
	 * one pass of every set, not every round of one */
	for (k = 0; k < PASSES; k++)
		for (i = 0; i < 9; i++) {
			int kind = i / 3, size = sizes[i % 3];

			for (n = 0; n < size - 1; n++) {
				if (kind == 0)
					snprintf(rule, sizeof(rule), "qpn %d drop 1%%", 100000 + n);
				else if (kind == 1)
					snprintf(rule, sizeof(rule), "qpn 0-100 psn 0-10 drop");
				else
					snprintf(rule, sizeof(rule), "qpn %d-%d psn %d-%d len %d-%d drop",
						 1 + n, 1000 + n, 2000 + n, 3000 + n, 100 + n, 1500 + n);
				add(rule);
			}
			add(kind == 0 ? "qpn 0x11 count" : kind == 1 ? "qpn 0-100 psn 0-10 drop" :
					"qpn 0x11 psn 900-1100 len 1000-1200 count");
			cost[i][k] = measure_cost(frame, len, &emp[i][k], &inj[i][k]);
			clear();
		}
	for (i = 0; i < 9; i++) {
		static const char *const kinds[] = { "rules (1 matching)", "ranges (all candidates)",
						     "spread (1 matching)" };
		char name[64];
		double c = median_of(cost[i], PASSES);

		snprintf(name, sizeof(name), "%d %s", sizes[i % 3], kinds[i / 3]);
		printf("%-28s %10.1f %12.1f %14.1f\n", name, median_of(emp[i], PASSES),
		       median_of(inj[i], PASSES), c);
		if (i / 3 == 0)
			best[i % 3] = c;
		else if (i / 3 == 1 || c > worst[i % 3])
			worst[i % 3] = c;
	}
	printf("\n%-8s %12s %12s %12s\n", "rules", "best[ns]", "worst[ns]", "worst/best");
	for (i = 0; i < 3; i++)
		printf("%-8d %12.1f %12.1f %12.2f\n", sizes[i], best[i], worst[i],
		       best[i] > 0 ? worst[i] / best[i] : 0.0);
	printf("64 rules, worst case: %.1f ns/pkt over an empty program = %.0f%% of the %.1f ns a "
	       "1538-byte frame takes at 100 Gb/s (target: <= 30 ns)\n",
	       worst[2], 100.0 * worst[2] / FRAME_100G_NS, FRAME_100G_NS);
	inj_close(ctx);
	inj_flush(pin);
	if (system("ip link del injb0 2>/dev/null"))
		return 1;
	return 0;
}

static void measure_traced(const char *name, const uint8_t *frame, uint32_t len)
{
	uint32_t ifs[1] = { ifx };
	int dirs[1] = { INJ_DIR_INGRESS };
	struct inj_hook_ctr k0, k1;
	struct inj_ring *rb;
	pthread_t th;
	char err[256];

	if (inj_trace_begin(ctx, ifs, dirs, 1, INJ_TRACE_SNAP_DEFAULT, err, sizeof(err))) {
		fprintf(stderr, "trace: %s\n", err);
		exit(1);
	}
	rb = inj_ring_new(inj_trace_ring_fd(ctx), bench_count_rec, NULL);
	if (!rb) {
		perror("the trace ring");
		exit(1);
	}
	bench_drain_stop = 0;
	bench_drained = 0;
	inj_hook_counters(ctx, ifx, INJ_DIR_INGRESS, &k0);
	pthread_create(&th, NULL, bench_drain, rb);
	measure(name, frame, len);
	bench_drain_stop = 1;
	pthread_join(th, NULL);
	inj_hook_counters(ctx, ifx, INJ_DIR_INGRESS, &k1);
	printf("%-28s %llu records, %llu lost (the ring had no room)\n", "",
	       (unsigned long long)bench_drained, (unsigned long long)(k1.trace_lost - k0.trace_lost));
	inj_ring_free(rb);
	inj_trace_stop(ctx);
	inj_trace_end(ctx);
	inj_track_set(ctx, 0);	/* a trace leaves tracking on: the next lines measure without */
}
