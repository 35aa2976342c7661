// SPDX-License-Identifier: MIT
/*
 * kv (workloads/kv.c): one server holds the table, every other member is a
 * client doing GETs by RDMA READ and PUTs by CAS (lock), READ, WRITE (body), WRITE (unlock). After the
 * run the server checks every slot; the updates it finds must equal the
 * PUTs the clients made.
 */
#include "ctl/wl/wl.h"

static const struct wlc_reserved reserved[] = {
	WLC_RESERVED_RUN,
	{ "ops", "set in run: (run.iters: operations per client)" },
	{ "clients", "set by rdmactl (every node but the server, node1, is a client)" },
	{ NULL, NULL },
};

static const char *const kinds[] = { "get", "put", NULL };

static void arm_opts(json_t *o, const char *mode, uint64_t iters, uint64_t warmup, int members)
{
	(void)mode;
	(void)warmup;
	json_object_set_new(o, "ops", json_integer((json_int_t)iters));
	json_object_set_new(o, "clients", json_integer(members - 1));
}

/* wrong: the clients' bad reads, the server's bad slots and the updates it
 * holds that no PUT made (or PUTs it does not hold) */
static uint64_t fold(json_t *results)
{
	size_t n = json_array_size(results), i;
	const json_t *srv = json_array_get(results, n - 1);
	uint64_t puts = 0, upd = jr_u64(srv, "updates_recorded");

	for (i = 0; i + 1 < n; i++)
		puts += jr_u64(json_array_get(results, i), "puts");
	return wlc_fold_clients(results, kinds, jr_u64(srv, "bad_slots") +
				(upd > puts ? upd - puts : puts - upd));
}

static json_t *arm_json(const struct arm_acc *a, const json_t *rounds)
{
	return report_ops_arm(a, rounds, kinds, "ops_per_s");
}

const struct wlc wlc_kv = {
	.name = "kv",
	.topo = WLC_STAR,
	.measure = MEASURE_OPS,
	.unit = "operations per client",
	.modes = 1u << M_RC,
	.modes_why = "kv uses RDMA READ and atomics, which need RC",
	.rounds = 1,
	.in_profile = 1,
	.reserved = reserved,
	.arm_opts = arm_opts,
	.fold = fold,
	.arm_json = arm_json,
};
