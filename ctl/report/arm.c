// SPDX-License-Identifier: MIT
/*
 * Report arms from the agents' results: the parts every workload shares.
 * What differs by workload is in its descriptor (ctl/wl/), which calls
 * these.
 */
#include <stdio.h>
#include <string.h>
#include "ctl/report/report.h"

static const char *const measure_names[MEASURE_N] = { "steps", "ops", "train", "exec" };

const char *measure_name(enum measure m)
{
	return measure_names[m];
}

enum measure report_measure(const json_t *rep)
{
	const char *s = jr_str(rep, "measure");
	int m;

	for (m = 0; m < MEASURE_N; m++)
		if (!strcmp(measure_names[m], s))
			return (enum measure)m;
	return MEASURE_STEPS;
}

/* a rank's running totals in one round's intervals (the agent streams
 * totals; the report keeps each interval's own) */
struct ival_run {
	uint64_t lost, exp, rt;
};

/* interval e's lost pieces, pieces expected and retransmissions (rank's
 * device) into o as deltas from the last interval's; 1 if e has any */
static int ival_deltas(const json_t *e, json_t *o, struct ival_run *run)
{
	int any = 0;

	if (json_object_get(e, "pieces_expected")) {
		uint64_t l = jr_u64(e, "lost_pieces"), x = jr_u64(e, "pieces_expected");

		json_object_set_new(o, "lost_pieces", json_integer((json_int_t)(l - run->lost)));
		json_object_set_new(o, "pieces_expected", json_integer((json_int_t)(x - run->exp)));
		run->lost = l;
		run->exp = x;
		any = 1;
	}
	if (json_object_get(e, "retrans")) {
		uint64_t t = jr_u64(e, "retrans");

		json_object_set_new(o, "retrans", json_integer((json_int_t)(t - run->rt)));
		run->rt = t;
		any = 1;
	}
	return any;
}

/* rank 0's streamed intervals of every round, with per-interval loss */
json_t *report_intervals(const json_t *rounds)
{
	json_t *out = json_array();
	const json_t *res, *e;
	size_t r, k;

	json_array_foreach(rounds, r, res) {
		struct ival_run run = { 0, 0, 0 };

		json_array_foreach(json_object_get(json_array_get(res, 0), "intervals"), k, e) {
			struct hist h;
			json_t *o;

			if (hist_from_json(&h, json_object_get(e, "lat_ns")))
				continue;
			o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:O}", "t_start_ns",
				      json_integer_value(json_object_get(e, "t_start_ns")), "t_ns",
				      json_integer_value(json_object_get(e, "t_ns")), "count",
				      (json_int_t)h.count, "p50_ns", (json_int_t)hist_quantile(&h, 0.5),
				      "p99_ns", (json_int_t)hist_quantile(&h, 0.99), "max_ns",
				      (json_int_t)h.max, "lat_ns", json_object_get(e, "lat_ns"));
			ival_deltas(e, o, &run);
			json_array_append_new(out, o);
		}
	}
	return out;
}

/*
 * Every rank's loss and retransmissions per interval, where two ranks or
 * more have them: per rank, over the rounds, {t_ns, lost_pieces,
 * pieces_expected, retrans} as deltas. A rank's times are on its own
 * node's clock, moved so that its round begins where rank 0's does (the
 * ranks of a round start together; the nodes' clocks are not one clock).
 * NULL where fewer than two ranks have them.
 */
static json_t *rank_intervals(const json_t *rounds)
{
	json_t *out = json_array();
	const json_t *res, *e, *iv;
	size_t r, k, nr = 0, rank, with = 0;

	json_array_foreach(rounds, r, res)
		nr = json_array_size(res) > nr ? json_array_size(res) : nr;
	for (rank = 0; rank < nr; rank++) {
		json_t *mine = json_array();
		int any = 0;

		json_array_foreach(rounds, r, res) {
			const json_t *i0 = json_object_get(json_array_get(res, 0), "intervals");
			struct ival_run run = { 0, 0, 0 };
			json_int_t shift;

			iv = json_object_get(json_array_get(res, rank), "intervals");
			if (!json_array_size(iv) || !json_array_size(i0))
				continue;
			shift = json_integer_value(json_object_get(json_array_get(i0, 0), "t_start_ns")) -
				json_integer_value(json_object_get(json_array_get(iv, 0), "t_start_ns"));
			json_array_foreach(iv, k, e) {
				json_t *o = json_pack("{s:I}", "t_ns",
						      json_integer_value(json_object_get(e, "t_ns")) + shift);

				any |= ival_deltas(e, o, &run);
				json_array_append_new(mine, o);
			}
		}
		with += any;
		json_array_append_new(out, mine);
	}
	if (with < 2) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* the per-rank results without their intervals (those are in "intervals") */
json_t *report_results(const json_t *rounds)
{
	json_t *c = json_deep_copy(rounds), *res, *e;
	size_t r, k;

	json_array_foreach(c, r, res)
		json_array_foreach(res, k, e)
			json_object_del(e, "intervals");
	return c;
}

json_t *report_ops_arm(const struct arm_acc *a, const json_t *rounds, const char *const kinds[],
		       const char *rate_key)
{
	struct hist by[4];
	double rate = 0;
	const json_t *res, *c;
	json_t *o, *kj;
	size_t r, i;
	int k;

	for (k = 0; k < 4; k++)
		hist_init(&by[k]);
	json_array_foreach(rounds, r, res) {
		json_array_foreach(res, i, c) {
			if (i + 1 == json_array_size(res))	/* the server */
				break;
			/* the clients run at once: their rates add up */
			rate += jr_real(c, rate_key);
			for (k = 0; k < 4 && kinds[k]; k++) {
				char key[32];
				struct hist h;

				snprintf(key, sizeof(key), "%s_lat_ns", kinds[k]);
				if (!hist_from_json(&h, json_object_get(c, key)))
					hist_merge(&by[k], &h);
			}
		}
	}
	kj = json_object();
	for (k = 0; k < 4 && kinds[k]; k++)
		if (by[k].count)
			json_object_set_new(kj, kinds[k], hist_summary_json(&by[k]));
	o = json_pack("{s:s,s:o,s:f,s:I,s:b,s:I,s:O,s:o}", "mode", a->mode, "op_kinds", kj,
		      "ops_per_s", json_array_size(rounds) ? rate / (double)json_array_size(rounds) : 0.0,
		      "wrong", (json_int_t)a->wrong, "verification_failed", a->wrong > 0,
		      "retransmissions", (json_int_t)a->retrans, "hw_counters_delta", a->hw,
		      "time_hist_ns", hist_to_json(&a->h));
	if (o)
		arm_acc_retrans_json(a, o);
	return o;
}

void report_arm_finish(json_t *o, const char *name, const struct arm_acc *a, const json_t *rounds)
{
	/* the RC settings an rc arm ran with (rank 0's, first round: every
	 * rank and round has the arm's options) */
	const json_t *rs = json_object_get(json_array_get(json_array_get(rounds, 0), 0),
					   "rc_settings");

	if (json_is_object(rs))
		json_object_set(o, "rc_settings", (json_t *)rs);
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "count", json_integer((json_int_t)a->h.count));
	json_object_set_new(o, "percentiles", hist_summary_json(&a->h));
	json_object_set_new(o, "insufficient_samples", report_insufficient(o));
	json_object_set_new(o, "intervals", report_intervals(rounds));
	json_object_set_new(o, "results", report_results(rounds));
	{
		json_t *ri = rank_intervals(rounds);

		if (ri)
			json_object_set_new(o, "rank_intervals", ri);
	}
}
