// SPDX-License-Identifier: MIT
/*
 * train (workloads/train.c): the data-parallel training job, gradients
 * allreduced in the arm's recovery mode. A training run is a whole job:
 * each arm runs once per seed (run.rounds seeds, 1 by default), and its
 * accuracy and time-to-accuracy figures are rank 0's (every rank's are in
 * the results), pooled over the seeds.
 */
#include <math.h>
#include <stdlib.h>
#include "ctl/wl/wl.h"
#include "lib/boot.h"

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

/* mean of v[0..n) and its 95% t-interval (n >= 2) into o as KEY_mean and
 * KEY_ci95 */
static void mean_ci(json_t *o, const char *key, const double *v, size_t n)
{
	double m, lo, hi;
	char k[64];

	boot_mean_t95(v, n, &m, &lo, &hi);
	snprintf(k, sizeof(k), "%s_mean", key);
	json_object_set_new(o, k, json_real(m));
	snprintf(k, sizeof(k), "%s_ci95", key);
	json_object_set_new(o, k, n > 1 ? json_pack("[ff]", lo, hi) : json_null());
}

/*
 * Several seeds (run.rounds > 1): each seed's TTA and final accuracy
 * (rank 0's), their means with 95% t-intervals over the seeds, how many
 * reached the target; "tta_ns" is the mean when every seed reached it, else
 * null (a mean of the ones that did would flatter the arm)
 */
static void pool_seeds(json_t *o, const json_t *rounds)
{
	size_t n = json_array_size(rounds), i, k = 0;
	double *tta = calloc(n, sizeof(double)), *acc = calloc(n, sizeof(double));
	json_t *seeds = json_array();
	const json_t *res;

	if (!tta || !acc || !seeds)
		goto out;
	json_array_foreach(rounds, i, res) {
		const json_t *r0 = json_array_get(res, 0), *t = json_object_get(r0, "tta_ns");

		json_array_append_new(seeds, json_pack("{s:I,s:O,s:f}", "seed",
						       (json_int_t)jr_u64(r0, "seed"), "tta_ns",
						       t ? (json_t *)t : json_null(), "final_accuracy",
						       jr_real(r0, "final_accuracy")));
		if (json_is_number(t) && json_number_value(t) > 0)
			tta[k++] = json_number_value(t);
		acc[i] = jr_real(r0, "final_accuracy");
	}
	json_object_set_new(o, "seeds", seeds);
	seeds = NULL;
	json_object_set_new(o, "tta_reached", json_integer((json_int_t)k));
	if (k)
		mean_ci(o, "tta_ns", tta, k);
	json_object_set_new(o, "tta_ns", k == n ? json_integer((json_int_t)llround(jr_real(o, "tta_ns_mean")))
					 : json_null());
	mean_ci(o, "final_accuracy", acc, n);
	json_object_set_new(o, "final_accuracy", json_real(jr_real(o, "final_accuracy_mean")));
out:
	json_decref(seeds);
	free(tta);
	free(acc);
}

/* rank 0's figures of the job; the step times of every rank, merged; with
 * several seeds, the seeds pooled */
static json_t *arm_json(const struct arm_acc *a, const json_t *rounds)
{
	static const char *const keys[] = { "tta_ns", "tta_comm_ns", "final_accuracy", "final_loss",
					    "train_time_ns", "curve", "params", "target",
					    "lost_pieces", "lost_fraction", "recovered_pieces",
					    "step_timeouts", "grad_error", "seed", NULL };
	const json_t *r0 = json_array_get(json_array_get(rounds, 0), 0);
	json_t *o;

	o = json_pack("{s:s,s:I,s:o}", "mode", a->mode, "steps", (json_int_t)jr_u64(r0, "steps"),
		      "time_hist_ns", hist_to_json(&a->h));
	if (o)
		arm_acc_retrans_json(a, o);
	for (int k = 0; r0 && keys[k]; k++)
		if (json_object_get(r0, keys[k]))
			json_object_set(o, keys[k], json_object_get(r0, keys[k]));
	if (o && json_array_size(rounds) > 1)
		pool_seeds(o, rounds);
	return o;
}

const struct wlc wlc_train = {
	.name = "train",
	.topo = WLC_GROUP,
	.measure = MEASURE_TRAIN,
	.unit = "steps",
	.modes = (1u << RTB_MODE_N) - 1,
	.rounds = 0,
	.seeds = 1,
	.in_profile = 1,
	.reserved = reserved,
	.arm_opts = arm_opts,
	.arm_json = arm_json,
};
