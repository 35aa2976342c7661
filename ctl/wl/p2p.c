// SPDX-License-Identifier: MIT
/*
 * p2p (workloads/p2p.c): perftest-like point-to-point latency and
 * bandwidth between a client (member 0) and a server (member 1):
 * `rdmactl p2p`, or a profile's workload (one arm, mode rc: the QP type is
 * its qp: option).
 */
#include "ctl/wl/wl.h"

static const struct wlc_reserved reserved[] = {
	{ "iters", "set in run: (run.iters)" },
	{ "warmup", "set in run: (run.warmup)" },
	{ NULL, NULL },
};

/* run: iters and warmup are the test's (one round: the first is all) */
static void arm_opts(json_t *o, const char *mode, uint64_t iters, uint64_t warmup, int members)
{
	(void)mode;
	(void)members;
	json_object_set_new(o, "iters", json_integer((json_int_t)iters));
	json_object_set_new(o, "warmup", json_integer((json_int_t)warmup));
}

/* the client's latencies are the arm's times */
static uint64_t fold(json_t *results)
{
	json_t *c = json_array_get(results, 0);

	if (json_object_get(c, "lat_ns"))
		json_object_set(c, "time_ns", json_object_get(c, "lat_ns"));
	return 0;
}

static json_t *arm_json(const struct arm_acc *a, const json_t *rounds)
{
	(void)rounds;
	json_t *o = json_pack("{s:s,s:o,s:O}", "mode", a->mode, "time_hist_ns",
			      hist_to_json(&a->h), "hw_counters_delta", a->hw);

	if (o)
		arm_acc_retrans_json(a, o);
	return o;
}

const struct wlc wlc_p2p = {
	.name = "p2p",
	.topo = WLC_PAIR,
	.measure = MEASURE_OPS,
	.unit = "iterations",
	.modes = 1u << M_RC,
	.modes_why = "p2p chooses its QP type with qp:",
	.rounds = 1,
	.in_profile = 1,
	.reserved = reserved,
	.arm_opts = arm_opts,
	.fold = fold,
	.arm_json = arm_json,
};
