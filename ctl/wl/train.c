// SPDX-License-Identifier: MIT
/*
 * train (workloads/train.c): the data-parallel training job, gradients
 * allreduced in the arm's recovery mode. A training run is a whole job:
 * each arm runs once, and its accuracy and time-to-accuracy figures are
 * rank 0's (every rank's are in the results).
 */
#include "ctl/wl/wl.h"

static const struct wlc_reserved reserved[] = {
	WLC_RESERVED_RANKS,
	{ NULL, NULL },
};

static void arm_opts(json_t *o, const char *mode, uint64_t iters, uint64_t warmup, int members)
{
	(void)iters;
	(void)warmup;
	(void)members;
	json_object_set_new(o, "mode", json_string(mode));
}

/* rank 0's figures of the job; the step times of every rank, merged */
static json_t *arm_json(const struct arm_acc *a, const json_t *rounds)
{
	static const char *const keys[] = { "tta_ns", "tta_comm_ns", "final_accuracy", "final_loss",
					    "train_time_ns", "curve", "params", "target",
					    "lost_pieces", "lost_fraction", "recovered_pieces",
					    "step_timeouts", "grad_error", NULL };
	const json_t *r0 = json_array_get(json_array_get(rounds, 0), 0);
	json_t *o;

	o = json_pack("{s:s,s:I,s:o}", "mode", a->mode, "steps", (json_int_t)jr_u64(r0, "steps"),
		      "time_hist_ns", hist_to_json(&a->h));
	if (o)
		arm_acc_retrans_json(a, o);
	for (int k = 0; r0 && keys[k]; k++)
		if (json_object_get(r0, keys[k]))
			json_object_set(o, keys[k], json_object_get(r0, keys[k]));
	return o;
}

const struct wlc wlc_train = {
	.name = "train",
	.topo = WLC_GROUP,
	.measure = MEASURE_TRAIN,
	.unit = "steps",
	.modes = (1u << RTB_MODE_N) - 1,
	.rounds = 0,
	.in_profile = 1,
	.reserved = reserved,
	.arm_opts = arm_opts,
	.arm_json = arm_json,
};
