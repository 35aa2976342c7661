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

/* wrong elements are a failure unless pieces were lost in the same
 * iteration (acc.c): then they are what losing data means. A loss that left
 * nothing wrong is reported, not failed: a piece given up whose bytes landed
 * later (the inputs never change, so late bytes are right ones) */
static json_t *arm_json(const struct arm_acc *a, const json_t *rounds)
{
	json_t *o = arm_acc_summary(a);

	(void)rounds;
	json_object_set_new(o, "verification_failed",
			    json_boolean((a->wrong && !a->lost) || a->acct_wrong_noloss));
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
	.timed_iters = 1,
	.arm_json = arm_json,
};
