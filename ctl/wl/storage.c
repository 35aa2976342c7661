// SPDX-License-Identifier: MIT
/*
 * storage (workloads/storage.c): fio-like block I/O by one-sided RDMA from
 * an initiator (member 0) to a target's volume (member 1), every read
 * verified.
 */
#include "ctl/wl/wl.h"

static const struct wlc_reserved reserved[] = {
	WLC_RESERVED_RUN,
	{ NULL, NULL },
};

static const char *const kinds[] = { "read", "write", NULL };

static void arm_opts(json_t *o, const char *mode, uint64_t iters, uint64_t warmup, int members)
{
	(void)mode;
	(void)warmup;
	(void)members;
	json_object_set_new(o, "iters", json_integer((json_int_t)iters));
}

static uint64_t fold(json_t *results)
{
	return wlc_fold_clients(results, kinds, 0);
}

static json_t *arm_json(const struct arm_acc *a, const json_t *rounds)
{
	return report_ops_arm(a, rounds, kinds, "iops");
}

const struct wlc wlc_storage = {
	.name = "storage",
	.topo = WLC_PAIR,
	.measure = MEASURE_OPS,
	.unit = "I/Os",
	.modes = 1u << M_RC,
	.modes_why = "storage uses RDMA READ and WRITE, which need RC",
	.rounds = 1,
	.in_profile = 1,
	.reserved = reserved,
	.arm_opts = arm_opts,
	.fold = fold,
	.arm_json = arm_json,
};
