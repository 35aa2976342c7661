// SPDX-License-Identifier: MIT
/*
 * collective (workloads/collective.c): nccl-tests-style ring collectives
 * on every member, in any recovery mode, steps timed per rank.
 */
#include "ctl/wl/wl.h"

static const struct wlc_reserved reserved[] = {
	WLC_RESERVED_RUN,
	{ NULL, NULL },
};

/* every round's own iteration count (rank 0 says it); wrong elements are a
 * failure unless the arm lost pieces: then they are what losing data means */
static json_t *report_arm(const char *name, const char *mode, const json_t *rounds)
{
	struct arm_acc a;
	const json_t *res;
	json_t *o;
	size_t r;

	arm_acc_init(&a, name, mode);
	json_array_foreach(rounds, r, res)
		arm_acc_add(&a, res, jr_u64(json_array_get(res, 0), "iters"));
	o = arm_acc_summary(&a);
	json_object_set_new(o, "verification_failed", json_boolean(a.wrong && !a.lost));
	report_arm_finish(o, name, &a, rounds);
	arm_acc_fini(&a);
	return o;
}

const struct wlc wlc_collective = {
	.name = "collective",
	.topo = WLC_GROUP,
	.measure = MEASURE_STEPS,
	.unit = "iterations",
	.modes = (1u << RTB_MODE_N) - 1,
	.rounds = 1,
	.in_profile = 1,
	.reserved = reserved,
	.arm_opts = wlc_opts_mode_iters,
	.report_arm = report_arm,
};
