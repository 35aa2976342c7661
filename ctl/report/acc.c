// SPDX-License-Identifier: MIT
/* The arm accumulator (see acc.h). */
#include <errno.h>
#include <string.h>
#include "ctl/report/acc.h"
#include "ctl/report/json.h"
#include "lib/hwc.h"
#include "lib/mode.h"

void arm_acc_init(struct arm_acc *a, const char *name, const char *mode)
{
	memset(a, 0, sizeof(*a));
	a->name = name;
	a->mode = mode;
	hist_init(&a->h);
	hist_init(&a->hc);
	hist_init(&a->hx);
	a->hw = json_object();
}

void arm_acc_fini(struct arm_acc *a)
{
	json_decref(a->hw);
	a->hw = NULL;
}

static void max_of(double *dst, double v)
{
	if (v > *dst)
		*dst = v;
}

/* a rank's result error ("grad_error") into the weighted sums */
static void add_error(struct arm_acc *a, const json_t *g)
{
	uint64_t n = jr_u64(g, "samples");
	double x = jr_real(g, "cosine_min");

	a->nmse_sum += jr_real(g, "nmse_mean") * (double)n;
	a->cos_sum += jr_real(g, "cosine_mean") * (double)n;
	a->linf_sum += jr_real(g, "linf_mean") * (double)n;
	max_of(&a->nmse_max, jr_real(g, "nmse_max"));
	max_of(&a->linf_max, jr_real(g, "linf_max"));
	max_of(&a->linf_rel_max, jr_real(g, "linf_rel_max"));
	a->cos_min = !a->gsamples || x < a->cos_min ? x : a->cos_min;
	a->gsamples += n;
}

/* a loss must make an element wrong: integers (every sum exact, a zero
 * never right), zero-filled, and no transform spreading it below the
 * tolerance */
static int loss_shows(const json_t *e)
{
	int m = rtb_mode_of(jr_str(e, "mode"));

	return !strcmp(jr_str(e, "data"), "ints") && !strcmp(jr_str(e, "fill"), "zero") &&
	       (m == M_LOSSY || m == M_EC);
}

/*
 * A collective round's losses against its errors, iteration by iteration
 * (every rank's "iter_lost" and "iter_wrong"): an element wrong while no
 * rank lost a piece is an engine bug (stale or misplaced data). Where a loss
 * must show, a piece lost with nothing wrong means its bytes came after all,
 * after the step gave up on them: a late write (or a loss counted that did
 * not happen).
 */
static void acct_round(struct arm_acc *a, const json_t *results)
{
	size_t n = 0, k, i;
	const json_t *e;
	int strict = 1;

	json_array_foreach(results, k, e) {
		const json_t *w = json_object_get(e, "iter_wrong"), *l = json_object_get(e, "iter_lost");

		if (!json_is_array(w) || !json_is_array(l) || json_array_size(w) != json_array_size(l) ||
		    (k && json_array_size(w) != n))
			return;
		n = json_array_size(w);
		strict = strict && loss_shows(e);
	}
	if (!n)
		return;
	for (i = 0; i < n; i++) {
		uint64_t wrong = 0, lost = 0;

		json_array_foreach(results, k, e) {
			wrong += (uint64_t)json_integer_value(json_array_get(json_object_get(e, "iter_wrong"), i));
			lost += (uint64_t)json_integer_value(json_array_get(json_object_get(e, "iter_lost"), i));
		}
		a->acct_wrong_iters += wrong > 0;
		a->acct_wrong_noloss += wrong && !lost;
		a->acct_loss_nowrong += strict && lost && !wrong;
	}
	a->acct_strict = (a->acct_iters ? a->acct_strict : 1) && strict;
	a->acct_iters += n;
}

void arm_acc_add(struct arm_acc *a, const json_t *results, uint64_t iters)
{
	double tmax = 0;
	const json_t *e;
	size_t k;

	json_array_foreach(results, k, e) {
		struct hist one;
		double t = jr_real(e, "time_avg_ns");
		const json_t *g = json_object_get(e, "grad_error");
		const json_t *hw = json_object_get(e, "hw_counters_delta"), *v;
		const char *key;

		if (!hist_from_json(&one, json_object_get(e, "time_ns")))
			hist_merge(&a->h, &one);
		if (!hist_from_json(&one, json_object_get(e, "codec_ns")))
			hist_merge(&a->hc, &one);
		if (!hist_from_json(&one, json_object_get(e, "transport_ns")))
			hist_merge(&a->hx, &one);
		if (t > tmax)
			tmax = t;
		a->wrong += jr_u64(e, "wrong");
		a->lost += jr_u64(e, "lost_pieces");
		a->expected += jr_u64(e, "pieces_expected");
		a->lost_bytes += jr_u64(e, "lost_bytes");
		a->recovered += jr_u64(e, "recovered_pieces");
		a->timeouts += jr_u64(e, "step_timeouts");
		a->late += jr_u64(e, "late_landed");
		a->uc = a->uc || json_object_get(e, "lost_pieces");
		a->size = jr_u64(e, "size");
		if (jr_real(e, "algbw_bytes_per_s") > 0)
			a->factor = jr_real(e, "busbw_bytes_per_s") / jr_real(e, "algbw_bytes_per_s");
		if (g)
			add_error(a, g);
		json_object_foreach((json_t *)hw, key, v) {
			json_int_t old = json_integer_value(json_object_get(a->hw, key));

			json_object_set_new(a->hw, key, json_integer(old + json_integer_value(v)));
		}
		a->retrans += hwc_retrans(hw);
		a->results++;
		{
			const json_t *ij = json_object_get(e, "injector_delta");
			const json_t *eg = json_object_get(ij, "egress"), *in = json_object_get(ij, "ingress");

			if (jr_u64(eg, "roce_pkts")) {
				a->eg_ranks++;
				a->eg_resent += jr_u64(eg, "resent");
			}
			if (jr_u64(in, "roce_pkts")) {
				a->in_ranks++;
				a->in_resent += jr_u64(in, "resent");
			}
		}
	}
	a->tsum += tmax * (double)iters;
	a->iters += iters;
	acct_round(a, results);
}

json_t *arm_acc_to_json(const struct arm_acc *a)
{
	json_t *o = json_pack("{s:o,s:o,s:o,s:O}", "hist", hist_to_json(&a->h), "codec_hist",
			      hist_to_json(&a->hc), "transport_hist", hist_to_json(&a->hx), "hw",
			      a->hw);

#define ACC_OUT_U64(f) json_object_set_new(o, #f, json_integer((json_int_t)a->f));
#define ACC_OUT_F64(f) json_object_set_new(o, #f, json_real(a->f));
	ARM_ACC_U64(ACC_OUT_U64)
	ARM_ACC_F64(ACC_OUT_F64)
#undef ACC_OUT_U64
#undef ACC_OUT_F64
	return o;
}

int arm_acc_from_json(struct arm_acc *a, const json_t *j)
{
	const json_t *hw = json_object_get(j, "hw");

	if (!json_is_object(j) || hist_from_json(&a->h, json_object_get(j, "hist")))
		return -EINVAL;
	/* absent from an older rdmactl's: empty */
	if (hist_from_json(&a->hc, json_object_get(j, "codec_hist")))
		hist_init(&a->hc);
	if (hist_from_json(&a->hx, json_object_get(j, "transport_hist")))
		hist_init(&a->hx);
	json_object_clear(a->hw);
	if (json_is_object(hw))
		json_object_update(a->hw, (json_t *)hw);
#define ACC_IN_U64(f) a->f = jr_u64(j, #f);
#define ACC_IN_F64(f) a->f = jr_real(j, #f);
	ARM_ACC_U64(ACC_IN_U64)
	ARM_ACC_F64(ACC_IN_F64)
#undef ACC_IN_U64
#undef ACC_IN_F64
	return 0;
}

json_t *arm_acc_summary(const struct arm_acc *a)
{
	double t = a->iters ? a->tsum / (double)a->iters : 0;
	double algbw = t > 0 ? (double)a->size / (t / 1e9) : 0;
	double n = a->gsamples ? (double)a->gsamples : 1;
	json_t *o;

	o = json_pack("{s:s,s:I,s:o,s:o,s:I,s:I,s:f,s:f,s:f,s:f,s:I,s:I,s:O}", "mode", a->mode,
		      "count", (json_int_t)a->h.count, "percentiles", hist_summary_json(&a->h),
		      "time_hist_ns", hist_to_json(&a->h), "iters", (json_int_t)a->iters, "size",
		      (json_int_t)a->size, "time_avg_ns", t, "time_total_ns", a->tsum,
		      "algbw_bytes_per_s", algbw, "busbw_bytes_per_s", algbw * a->factor, "wrong",
		      (json_int_t)a->wrong, "retransmissions", (json_int_t)a->retrans,
		      "hw_counters_delta", a->hw);
	if (o)	/* insufficient_samples: report_arm_finish, for every workload */
		arm_acc_retrans_json(a, o);
	if (o && a->acct_iters)
		json_object_set_new(o, "accounting",
				    json_pack("{s:I,s:I,s:I,s:I,s:b}", "iterations",
					      (json_int_t)a->acct_iters, "wrong_iterations",
					      (json_int_t)a->acct_wrong_iters, "wrong_without_loss",
					      (json_int_t)a->acct_wrong_noloss, "loss_without_wrong",
					      (json_int_t)a->acct_loss_nowrong, "loss_must_show",
					      (int)a->acct_strict));
	if (o && a->hx.count) {	/* a step's time: the transform's part and the transport's */
		json_object_set_new(o, "codec_ns", hist_summary_json(&a->hc));
		json_object_set_new(o, "transport_ns", hist_summary_json(&a->hx));
	}
	if (o && a->gsamples)
		json_object_set_new(o, "grad_error",
				    json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "nmse_mean",
					      a->nmse_sum / n, "nmse_max", a->nmse_max, "linf_mean",
					      a->linf_sum / n, "linf_max", a->linf_max,
					      "linf_rel_max", a->linf_rel_max,
					      "cosine_mean", a->cos_sum / n, "cosine_min", a->cos_min));
	if (o && (a->uc || rtb_mode_of(a->mode) != M_RC)) {	/* also when it never ran */
		json_object_set_new(o, "lost_pieces", json_integer((json_int_t)a->lost));
		json_object_set_new(o, "lost_bytes", json_integer((json_int_t)a->lost_bytes));
		json_object_set_new(o, "lost_fraction",
				    json_real(a->expected ? (double)a->lost / (double)a->expected : 0));
		json_object_set_new(o, "recovered_pieces", json_integer((json_int_t)a->recovered));
		json_object_set_new(o, "step_timeouts", json_integer((json_int_t)a->timeouts));
		json_object_set_new(o, "late_landed", json_integer((json_int_t)a->late));
	}
	return o;
}

void arm_acc_retrans_json(const struct arm_acc *a, json_t *o)
{
	/* a direction whose hooks were on every rank's netdev counts each resend once */
	int eg = a->results && a->eg_ranks == a->results, in = a->results && a->in_ranks == a->results;
	uint64_t n = eg ? a->eg_resent : in ? a->in_resent : a->retrans;
	json_t *h = json_object();

	json_object_set_new(o, "retransmissions", json_integer((json_int_t)n));
	json_object_set_new(o, "retransmissions_source",
			    json_string(eg ? "injector_egress" : in ? "injector_ingress" : "rxe_events"));
	if (eg)
		json_object_set_new(h, "egress", json_integer((json_int_t)a->eg_resent));
	if (in)
		json_object_set_new(h, "ingress", json_integer((json_int_t)a->in_resent));
	if (eg || in)
		json_object_set_new(o, "resent_by_hooks", h);
	else
		json_decref(h);
	json_object_set_new(o, "retransmission_events", json_integer((json_int_t)a->retrans));
}

const char *arm_retrans_what(const char *source, int brief)
{
	if (!source || !*source || !strcmp(source, "rxe_events"))
		return brief ? "rxe retry events, not packets" :
			       "rxe's retry events (completer_retry_err + rcvd_seq_err), not packets";
	if (!strcmp(source, "trace"))
		return brief ? "packets resent (packet trace)" :
			       "packets resent, from the packet trace (nodes' egress)";
	if (!strcmp(source, "injector_egress"))
		return brief ? "packets resent (injector, egress)" :
			       "packets resent, counted by the injector at the nodes' egress";
	if (!strcmp(source, "injector_ingress"))
		return brief ? "packets resent (injector, ingress)" :
			       "packets resent, counted by the injector at the nodes' ingress";
	return source;
}
