// SPDX-License-Identifier: MIT
/* What several workload descriptors share. */
#include "ctl/wl/wl.h"

void wlc_opts_mode_iters(json_t *o, const char *mode, uint64_t iters, uint64_t warmup,
			 int members)
{
	(void)members;
	json_object_set_new(o, "mode", json_string(mode));
	json_object_set_new(o, "iters", json_integer((json_int_t)iters));
	json_object_set_new(o, "warmup", json_integer((json_int_t)warmup));
}

uint64_t wlc_fold_clients(json_t *results, const char *const *kinds, uint64_t extra)
{
	size_t n = json_array_size(results), i;
	uint64_t wrong = extra;

	if (n < 2)
		return 0;
	for (i = 0; i + 1 < n; i++) {
		json_t *c = json_array_get(results, i);
		struct hist all, one;

		hist_init(&all);
		for (int k = 0; kinds[k]; k++) {
			char key[32];

			snprintf(key, sizeof(key), "%s_lat_ns", kinds[k]);
			if (!hist_from_json(&one, json_object_get(c, key)))
				hist_merge(&all, &one);
		}
		json_object_set_new(c, "time_ns", hist_to_json(&all));
		wrong += jr_u64(c, "mismatches");	/* storage: reads that failed verification */
	}
	json_object_set_new(json_array_get(results, 0), "wrong", json_integer((json_int_t)wrong));
	return wrong;
}

json_t *wlc_report_arm(const struct wlc *d, const char *name, const char *mode,
		       const json_t *rounds)
{
	struct arm_acc a;
	const json_t *res;
	json_t *o;
	size_t r;

	arm_acc_init(&a, name, mode);
	json_array_foreach(rounds, r, res)
		arm_acc_add(&a, res, d->timed_iters ? jr_u64(json_array_get(res, 0), "iters") : 0);
	o = d->arm_json(&a, rounds);
	if (o)
		report_arm_finish(o, name, &a, rounds);
	arm_acc_fini(&a);
	return o;
}
