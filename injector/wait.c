// SPDX-License-Identifier: MIT
/*
 * rdma-inject wait: until a hook counts a RoCE packet, and when. What a
 * controller asks to count a node fault's time from the node's traffic
 * (rdmactl's from: traffic): its answer is the moment, on CLOCK_MONOTONIC,
 * within the 0.2 ms it polls at.
 */
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "inj.h"
#include "../lib/clock.h"
#include "../lib/log.h"
#include "../lib/num.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void print_json(json_t *o)
{
	json_dumpf(o, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(o);
}

/* wait dev DEV ingress|egress [above N] [for T]: until the hook there (a
 * rule's) has counted more RoCE packets than N (unsaid: than when called);
 * when, on CLOCK_MONOTONIC. 0 seen, 1 not within T (60 s unsaid) */
int cmd_wait(int argc, char **argv, int json_out, const char *pin_root)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct inj_hook_ctr h;
	uint64_t limit = 60000000000ULL, above = 0, t0, t;
	int dir, i, has_above = 0, seen = 0;
	struct inj_ctx *c;
	const char *why;
	uint32_t ifx;

	if (argc < 3 || strcmp(argv[0], "dev") ||
	    (strcmp(argv[2], "ingress") && strcmp(argv[2], "egress")))
		goto usage;
	for (i = 3; i + 1 < argc; i += 2)
		if (!strcmp(argv[i], "for")) {
			if (num_parse(argv[i + 1], NUM_TIME, 1000000, 3600000000000ULL, &limit, &why))
				goto usage;
		} else if (!strcmp(argv[i], "above")) {
			if (num_parse(argv[i + 1], NUM_PLAIN, 0, UINT64_MAX, &above, &why))
				goto usage;
			has_above = 1;
		} else {
			goto usage;
		}
	if (i != argc)
		goto usage;
	if (!(ifx = if_nametoindex(argv[1]))) {
		log_err("wait: no device %s", argv[1]);
		return 2;
	}
	dir = !strcmp(argv[2], "egress") ? INJ_DIR_EGRESS : INJ_DIR_INGRESS;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	c = inj_open(pin_root);
	if (!c) {
		log_err("cannot load the injector (%s): %s", pin_root ? pin_root : INJ_PIN_DIR,
			strerror(errno));
		return 1;
	}
	inj_unlock(c);	/* it only reads counters while it waits */
	if (inj_hook_counters(c, ifx, dir, &h)) {
		log_err("wait: no hook on %s %s (a rule there attaches it: add dev %s %s count)",
			argv[1], argv[2], argv[1], argv[2]);
		inj_close(c);
		return 1;
	}
	if (!has_above)
		above = h.roce_pkts;
	t0 = rtb_now_ns();
	for (t = t0; !stop; t = rtb_now_ns()) {
		struct timespec ts = { 0, 200000 };	/* 0.2 ms: the grain of the answer */

		if (!inj_hook_counters(c, ifx, dir, &h) && h.roce_pkts > above) {
			seen = 1;
			break;
		}
		if (t - t0 >= limit)
			break;
		nanosleep(&ts, NULL);
	}
	inj_close(c);
	if (json_out)
		print_json(json_pack("{s:s,s:s,s:b,s:I,s:I,s:I}", "dev", argv[1], "dir", argv[2],
				     "seen", seen, "t_ns", (json_int_t)t, "waited_ns",
				     (json_int_t)(t - t0), "roce_pkts", (json_int_t)h.roce_pkts));
	else if (seen)
		printf("%s %s: RoCE at %.6f s (after %.3f s), %llu packets\n", argv[1], argv[2],
		       (double)t / 1e9, (double)(t - t0) / 1e9, (unsigned long long)h.roce_pkts);
	if (!seen && !json_out)
		log_err("wait: no RoCE packet at %s %s in %.3f s", argv[1], argv[2],
			(double)(t - t0) / 1e9);
	return seen ? 0 : 1;
usage:
	log_err("expected: wait dev DEV ingress|egress [above N] [for T] (T: 1ms..1h)");
	return 2;
}
