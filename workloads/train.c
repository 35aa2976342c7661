// SPDX-License-Identifier: MIT
/*
 * train: data-parallel SGD over N agents, the gradients allreduced through
 * the collective engine in the arm's recovery mode.
 *
 * Every rank holds a replica of the MLP (lib/mlp.h, about 204k parameters
 * with the defaults: a gradient is 800 KiB, hundreds of MTU packets). Step
 * t: rank r computes the gradient of its own batch (samples (t*N + r)*batch
 * onwards of the synthetic task), the engine sums the gradients, every rank
 * applies the mean (SGD with momentum, the learning rate on a cosine
 * schedule by default). A lossy mode may hand ranks slightly different sums;
 * the replicas then drift apart a little, as they would in a real job.
 *
 * The training clock counts the steps (compute and allreduce) and stops
 * while the model is evaluated on a fixed held-out set every eval_every
 * steps, so evaluation costs no arm anything: after it the ranks meet at a
 * barrier (a tiny RC allreduce on the side) before the clock runs again, or
 * a rank still busy off the clock (a lossy arm's exact sum on the side goes
 * through RC retransmissions) would stall its neighbours' next timed step
 * and, in the lossy modes, time it out. Time to accuracy (TTA) is the
 * training clock when the held-out accuracy reaches `target`, linearly
 * interpolated between the evaluation below it and the first one at or
 * above it: without the interpolation TTA would move by a whole
 * eval_every steps when an evaluation falls just short.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll.h"
#include "opts.h"
#include "../lib/hist.h"
#include "../lib/mlp.h"
#include "../lib/rht.h"


struct train {
	struct train_cfg cfg;
	struct coll *c;
	/* lossy modes: an RC allreduce on the side, at evaluation steps, off
	 * the clock: the exact sum the arm's result is compared with */
	struct coll *exact;
	struct coll *sync;	/* the barrier after an evaluation */
	struct grad_err gerr;
	double *exact_d;
	struct mlp m;
	struct task t;
	float *xb, *xe, *g;
	int *yb, *ye;
	struct hist step_h;
	uint64_t compute_ns, comm_ns;	/* all steps: gradient and update, the allreduce */
};

static void train_destroy(struct wl_ctx *w)
{
	struct train *t = w->priv;

	if (!t)
		return;
	coll_close(t->c);
	coll_close(t->exact);
	coll_close(t->sync);
	free(t->exact_d);
	mlp_free(&t->m);
	task_free(&t->t);
	free(t->xb);
	free(t->xe);
	free(t->g);
	free(t->yb);
	free(t->ye);
	free(t);
	w->priv = NULL;
}

/* an RC allreduce engine of size bytes on the side of the arm's; its
 * endpoints ride along in the arm's under key */
static int side_open(struct wl_ctx *w, const struct coll_cfg *cc, uint64_t size, const char *key,
		     json_t *ep, struct coll **c)
{
	struct coll_cfg x = *cc;
	json_t *xep = NULL, *e;
	size_t j;
	int r;

	x.mode = M_RC;
	x.size = size;
	if ((r = coll_open(w, &x, c, &xep))) {
		json_decref(xep);
		return r;
	}
	json_array_foreach(ep, j, e)
		if (json_is_object(e))
			json_object_set(e, key, json_array_get(xep, j));
	json_decref(xep);
	return 0;
}

/* connect a side engine to the peers' endpoints under key */
static int side_connect(struct wl_ctx *w, struct coll *c, const json_t *peers, const char *key)
{
	json_t *side = json_array();
	size_t j;
	int r;

	for (j = 0; j < json_array_size(peers); j++) {
		json_t *e = json_object_get(json_array_get(peers, j), key);

		json_array_append(side, e ? e : json_null());
	}
	r = coll_connect_peers(w, c, side);
	json_decref(side);
	return r;
}

static int train_prepare(struct wl_ctx *w, const json_t *opts, json_t **ep)
{
	struct train *t;
	struct train_cfg *k;
	uint64_t i;
	int r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	w->priv = t;
	k = &t->cfg;
	r = opt_apply_json(train_opts, k, opts, w->err, sizeof(w->err));
	if (r)
		goto fail;
	r = -ENOMEM;
	/* the same initial model on every rank: the seed is shared */
	if (mlp_init(&t->m, (int)k->input, (int)k->hidden1, (int)k->hidden2, (int)k->classes,
		     k->cc.seed) ||
	    task_init(&t->t, (int)k->input, (int)k->classes, k->cc.seed))
		goto fail;
	t->xb = malloc(k->batch * k->input * sizeof(float));
	t->yb = malloc(k->batch * sizeof(int));
	i = k->eval_samples > k->final_samples ? k->eval_samples : k->final_samples;
	t->xe = malloc(i * k->input * sizeof(float));
	t->ye = malloc(i * sizeof(int));
	t->g = malloc(t->m.nparams * sizeof(float));
	if (!t->xb || !t->yb || !t->xe || !t->ye || !t->g)
		goto fail;
	i = k->eval_samples > k->final_samples ? k->eval_samples : k->final_samples;
	while (i--)	/* held out: far from any training index */
		task_sample(&t->t, (1ULL << 40) + i, t->xe + i * k->input, &t->ye[i]);
	k->cc.op = C_ALLREDUCE;
	k->cc.size = t->m.nparams * sizeof(float);
	r = coll_open(w, &k->cc, &t->c, ep);
	if (r)
		goto fail;
	if (k->cc.mode != M_RC) {
		t->exact_d = calloc(t->m.nparams, sizeof(double));
		if (!t->exact_d) {
			r = -ENOMEM;
			goto fail;
		}
		if ((r = side_open(w, &k->cc, k->cc.size, "exact", *ep, &t->exact)))
			goto fail;
	}
	if ((r = side_open(w, &k->cc, k->cc.nranks * sizeof(float), "sync", *ep, &t->sync)))
		goto fail;
	hist_init(&t->step_h);
	return 0;
fail:
	train_destroy(w);
	return r;
}

static int train_connect(struct wl_ctx *w, const json_t *peers)
{
	struct train *t = w->priv;
	int r = coll_connect_peers(w, t->c, peers);

	if (!r && t->exact)
		r = side_connect(w, t->exact, peers, "exact");
	return r ? r : side_connect(w, t->sync, peers, "sync");
}

/* time to accuracy: the crossing interpolated between two evaluations */
struct tta_track {
	uint64_t tta, prev_clock;	/* the evaluation before, at prev_clock (0: the start) */
	uint64_t tta_comm, prev_comm;	/* the same on the allreduce's clock */
	double prev_acc;
};

/* off the clock after step: the exact sum on the side, the accuracy, the
 * TTA, a curve point, then every rank meets before anyone's clock runs */
static int train_eval(struct wl_ctx *w, struct train *t, uint64_t step, uint64_t clock,
		      double loss, struct tta_track *tt, json_t *curve)
{
	struct train_cfg *k = &t->cfg;
	double acc, eloss = 0, target = (double)k->target_ppm / 1e6;
	uint64_t i, xns, n = k->cc.nranks;
	int r;

	if (t->exact && !((step + 1) % k->eval_every)) {
		if ((r = coll_step(w, t->exact, &xns)))
			return r;
		for (i = 0; i < t->m.nparams; i++)
			t->exact_d[i] = coll_output(t->exact)[i];
		/* t->g holds this step's result / n: compare sums */
		for (i = 0; i < t->m.nparams; i++)
			t->g[i] *= (float)n;
		grad_err_add(&t->gerr, t->g, t->exact_d, t->m.nparams);
		if (step + 1 + k->eval_every <= k->steps && (r = coll_next(w, t->exact, 0)))
			return r;
	}
	acc = mlp_accuracy(&t->m, t->xe, t->ye, (int)k->eval_samples, &eloss);
	if (!tt->tta && acc >= target) {
		double f = acc > tt->prev_acc && target > tt->prev_acc ?
				   (target - tt->prev_acc) / (acc - tt->prev_acc) : 1.0;

		tt->tta = tt->prev_clock + (uint64_t)(f * (double)(clock - tt->prev_clock));
		tt->tta = tt->tta ? tt->tta : 1;
		tt->tta_comm = tt->prev_comm + (uint64_t)(f * (double)(t->comm_ns - tt->prev_comm));
		tt->tta_comm = tt->tta_comm ? tt->tta_comm : 1;
	}
	tt->prev_acc = acc;
	tt->prev_clock = clock;
	tt->prev_comm = t->comm_ns;
	w->ival_accuracy = acc;
	w->ival_eval_loss = eloss;
	json_array_append_new(curve, json_pack("{s:I,s:I,s:f,s:f,s:f}", "step", (json_int_t)step + 1,
					       "time_ns", (json_int_t)clock, "train_loss", loss,
					       "eval_loss", eloss, "accuracy", acc));
	if (step + 1 < k->steps &&
	    ((r = coll_step(w, t->sync, &xns)) ||
	     (step + 1 + k->eval_every < k->steps && (r = coll_next(w, t->sync, 0)))))
		return r;
	return 0;
}

/* the job's figures; the final accuracy on the larger held-out set (the
 * evaluations use its first eval_samples) */
static json_t *train_result(struct train *t, uint64_t clock, const struct tta_track *tt,
			    json_t *curve)
{
	struct train_cfg *k = &t->cfg;
	double eloss = 0, acc = mlp_accuracy(&t->m, t->xe, t->ye, (int)k->final_samples, &eloss);
	struct coll_stats st;
	json_t *res;

	coll_get_stats(t->c, &st);
	res = json_pack("{s:s,s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:I,s:o,s:o,s:o}", "mode",
			coll_modes[k->cc.mode], "params", (json_int_t)t->m.nparams, "steps",
			(json_int_t)k->steps, "batch", (json_int_t)k->batch, "rank",
			(json_int_t)k->cc.rank, "target", (double)k->target_ppm / 1e6,
			"final_accuracy", acc, "final_loss", eloss, "train_time_ns", (json_int_t)clock,
			"tta_ns", tt->tta ? json_integer((json_int_t)tt->tta) : json_null(), "time_ns",
			hist_to_json(&t->step_h), "curve", curve);
	/* per step, where the training clock went: the model's work (gradient
	 * and update), the allreduce, and of that the transform (hadamard) */
	/* of the time to accuracy, the part spent in the allreduce: what the
	 * recovery mode decides (the model's work is the same in every mode) */
	if (res)
		json_object_set_new(res, "tta_comm_ns", tt->tta_comm ?
				    json_integer((json_int_t)tt->tta_comm) : json_null());
	if (res && k->steps)
		json_object_update_new(res, json_pack("{s:I,s:I,s:I}", "compute_ns_mean",
						      (json_int_t)(t->compute_ns / k->steps),
						      "comm_ns_mean", (json_int_t)(t->comm_ns / k->steps),
						      "codec_ns_mean",
						      (json_int_t)(st.codec_ns / k->steps)));
	if (res && k->cc.mode == M_RC)
		json_object_set_new(res, "rc_settings", vb_rc_knobs_json(&k->cc.rc));
	if (res && k->cc.mode == M_HADAMARD) {	/* float or fixed point: lib/rht.h */
		json_object_set_new(res, "transform", json_string(rht_path()));
		json_object_set_new(res, "transform_why", json_string(rht_path_why()));
	}
	if (res && k->cc.mode != M_RC)
		json_object_update_new(res, json_pack("{s:I,s:I,s:f,s:I,s:I}", "lost_pieces",
						      (json_int_t)st.lost_pieces, "pieces_expected",
						      (json_int_t)st.pieces_expected, "lost_fraction",
						      st.pieces_expected ? (double)st.lost_pieces /
									   (double)st.pieces_expected :
									   0.0,
						      "recovered_pieces", (json_int_t)st.recovered_pieces,
						      "step_timeouts", (json_int_t)st.timeouts));
	if (res && t->exact)
		json_object_set_new(res, "grad_error", grad_err_json(&t->gerr));
	return res;
}

static int train_run(struct wl_ctx *w, json_t **result)
{
	struct train *t = w->priv;
	struct train_cfg *k = &t->cfg;
	uint64_t step, i, clock = 0, ns, n = k->cc.nranks;
	float lr = (float)k->lr_ppm / 1e6f, mom = (float)k->momentum_ppm / 1e6f;
	struct tta_track tt = { 0, 0, 0, 0, 0 };
	json_t *curve = json_array();
	struct coll_stats st;
	double loss = 0;
	int r;

	if ((r = coll_begin(w, t->c)) || (t->exact && (r = coll_begin(w, t->exact))) ||
	    (r = coll_begin(w, t->sync)))
		goto out;
	for (step = 0; step < k->steps; step++) {
		uint64_t t0 = wl_now_ns(), t1, base = (step * n + k->cc.rank) * k->batch;
		float *in = coll_input(t->c);
		const float *sum;

		for (i = 0; i < k->batch; i++)
			task_sample(&t->t, base + i, t->xb + i * k->input, &t->yb[i]);
		loss = mlp_grad(&t->m, t->xb, t->yb, (int)k->batch, in);
		t1 = wl_now_ns();
		t->compute_ns += t1 - t0;
		if (t->exact && !((step + 1) % k->eval_every))	/* kept for the side sum */
			memcpy(coll_input(t->exact), in, t->m.nparams * sizeof(float));
		if ((r = coll_step(w, t->c, &ns)))
			goto out;
		t->comm_ns += ns;
		t1 = wl_now_ns();
		sum = coll_output(t->c);
		for (i = 0; i < t->m.nparams; i++)
			t->g[i] = sum[i] / (float)n;
		mlp_sgd(&t->m, t->g,
			k->schedule ? lr : lr * 0.5f * (1.0f + cosf((float)M_PI * (float)step /
								   (float)k->steps)),
			mom);
		t->compute_ns += wl_now_ns() - t1;
		if (step + 1 < k->steps && (r = coll_next(w, t->c, 0)))
			goto out;
		ns = wl_now_ns() - t0;
		clock += ns;
		coll_get_stats(t->c, &st);
		w->ival_lost = st.lost_pieces;
		w->ival_expected = st.pieces_expected;
		hist_record(&t->step_h, ns);
		wl_record(w, wl_now_ns(), ns);
		__atomic_store_n(&w->progress, step + 1, __ATOMIC_RELAXED);
		if (((step + 1) % k->eval_every == 0 || step + 1 == k->steps) &&
		    (r = train_eval(w, t, step, clock, loss, &tt, curve)))
			goto out;
	}
	*result = train_result(t, clock, &tt, curve);
	curve = NULL;
	r = *result ? 0 : -ENOMEM;
out:
	json_decref(curve);
	return r;
}

const struct wl_ops wl_train = {
	.name = "train",
	.opts = train_opts,
	.prepare = train_prepare,
	.connect = train_connect,
	.run = train_run,
	.destroy = train_destroy,
};
