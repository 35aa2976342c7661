// SPDX-License-Identifier: MIT
/*
 * collective: nccl-tests-style collectives over N agents, float32, on the
 * collective engine (coll.c) in any of its recovery modes.
 *
 * Out of place: the input never changes, the output is written, so every
 * iteration computes the same result and is compared with the exact one:
 *   data=ints     small integers, every float sum exact: #wrong counts
 *                 elements that differ at all (hadamard: beyond 1e-5 of
 *                 the largest)
 *   data=gauss    normal values, like activations
 *   data=laplace  heavy-tailed values, like gradients
 *   data=grad     real gradients: the train workload's MLP (128-512-264-10)
 *                 at its initialisation, each rank's on its own batches of
 *                 the train task, one gradient after another to fill the
 *                 buffer (allreduce, reduce_scatter)
 * For the random data the exact sum is taken in double on every rank (all
 * ranks can generate every rank's input), and #wrong counts elements off by
 * more than 1e-5 of the largest. Every measured iteration starts from a
 * cleared output and is checked after it ends, outside its timed part:
 * "wrong" is the sum over them, "wrong_iters" how many had one, and per
 * iteration the elements wrong and the pieces this rank lost ("iter_wrong",
 * "iter_lost": rdmactl checks a round's losses against its errors); the
 * error against exact goes into NMSE, L-inf and cosine similarity. Each iteration's time (first send posted to last byte received
 * and every send complete, hadamard encode and decode included) goes to a
 * histogram, and its two parts to two more: the transform's (hadamard's
 * encode and decode, 0 in the other modes) and the transport's (the ring:
 * first post to last completion); algbw = bytes / time, busbw = algbw *
 * 2(n-1)/n (allreduce) or (n-1)/n, as nccl-tests defines them.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll.h"
#include "opts.h"
#include "../lib/rht.h"
#include "../lib/hist.h"
#include "../lib/mix.h"
#include "../lib/mlp.h"


struct cw {
	struct cw_cfg cfg;
	struct coll *c;
	int n, r;
	size_t count, chunk, lo, hi;	/* [lo, hi): the defined part of the output */
	double *exact;
	struct hist hist;
	struct hist hcodec, hxport;	/* each step's transform and transport parts */
	struct grad_err gerr;
	double tol;		/* an element further than this from exact is wrong */
	uint64_t wrong, wrong_iters, wrong_max;	/* over every measured iteration */
	/* per measured iteration (the first ITER_DETAIL): elements wrong, pieces
	 * this rank lost; rdmactl adds them up over the ranks of a round */
	uint32_t *it_wrong, *it_lost;
	size_t ndetail;
};

#define ITER_DETAIL 100000

/* rank r's input element j */
static float val(const struct cw *w, int r, size_t j)
{
	uint64_t h;
	double u, v;

	if (w->cfg.data == D_INTS)	/* small integers: every float sum is exact */
		return (float)((r + 1) * (int)(j % 97 + 1));
	h = rtb_mix64(w->cfg.cc.seed * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)r << 40) ^ j);
	u = ((double)(h >> 11) + 0.5) / 9007199254740992.0;	/* (0, 1) */
	if (w->cfg.data == D_LAPLACE)
		return (float)(u < 0.5 ? log(2 * u) : -log(2 - 2 * u));
	v = ((double)(rtb_mix64(h) >> 11) + 0.5) / 9007199254740992.0;
	return (float)(sqrt(-2 * log(u)) * cos(2 * M_PI * v));
}

/* own: this rank's own input element j, already drawn (the other ranks'
 * are drawn here: under TCG a million draws are a fifth of a second) */
static double exact_of(const struct cw *w, size_t j, float own)
{
	int op = w->cfg.cc.op, k;
	double s = 0;

	switch (op) {
	case C_ALLGATHER:
		return val(w, (int)(j / w->chunk), j);
	case C_BROADCAST:
		return val(w, (int)w->cfg.cc.root, j);
	case C_ALLTOALL:	/* rank j/chunk's chunk r */
		return val(w, (int)(j / w->chunk), (size_t)w->r * w->chunk + j % w->chunk);
	default:
		for (k = 0; k < w->n; k++)	/* the ring's order does not matter for ints */
			s += (double)(k == w->r ? own : val(w, k, j));
		return s;
	}
}

/* data=grad: every rank's gradients (rank k, batch b: the train task's
 * samples ((b * n + k) * 32 ..), as train draws them), ours into in, the
 * sum of all into exact */
static int grad_data(struct cw *w, float *in, char *err, size_t errlen)
{
	enum { IN = 128, BATCH = 32 };
	float xb[BATCH * IN], *g = NULL;
	int yb[BATCH], k, i, r;
	struct mlp m;
	struct task t;
	size_t j, b, np;

	if (w->cfg.cc.op != C_ALLREDUCE && w->cfg.cc.op != C_REDUCE_SCATTER) {
		snprintf(err, errlen, "data grad: allreduce and reduce_scatter only");
		return -EINVAL;
	}
	if ((r = mlp_init(&m, IN, 512, 264, 10, w->cfg.cc.seed)))
		return r;
	if ((r = task_init(&t, IN, 10, w->cfg.cc.seed))) {
		mlp_free(&m);
		return r;
	}
	np = (size_t)m.nparams;
	g = malloc(np * sizeof(float));
	if (!g) {
		r = -ENOMEM;
		goto out;
	}
	for (k = 0; k < w->n; k++)
		for (b = 0; b * np < w->count; b++) {
			for (i = 0; i < BATCH; i++)
				task_sample(&t, ((uint64_t)b * (uint64_t)w->n + (uint64_t)k) * BATCH +
						    (uint64_t)i, xb + i * IN, &yb[i]);
			mlp_grad(&m, xb, yb, BATCH, g);
			for (j = 0; j < np && b * np + j < w->count; j++) {
				if (k == w->r)
					in[b * np + j] = g[j];
				w->exact[b * np + j] += g[j];
			}
		}
	/* reduce_scatter: only the owned chunk is compared */
	for (j = 0; j < w->count; j++)
		if (j < w->lo || j >= w->hi)
			w->exact[j] = 0;
out:
	free(g);
	task_free(&t);
	mlp_free(&m);
	return r;
}

static void cw_destroy(struct wl_ctx *ctx)
{
	struct cw *w = ctx->priv;

	if (!w)
		return;
	coll_close(w->c);
	free(w->exact);
	free(w->it_wrong);
	free(w->it_lost);
	free(w);
	ctx->priv = NULL;
}

static int cw_prepare(struct wl_ctx *ctx, const json_t *opts, json_t **ep)
{
	struct cw *w;
	float *in;
	size_t j;
	int r;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	ctx->priv = w;
	r = opt_apply_json(cw_opts, &w->cfg, opts, ctx->err, sizeof(ctx->err));
	if (r)
		goto fail;
	r = coll_open(ctx, &w->cfg.cc, &w->c, ep);
	if (r)
		goto fail;
	w->n = (int)w->cfg.cc.nranks;
	w->r = (int)w->cfg.cc.rank;
	w->count = coll_count(w->c);
	w->chunk = (w->count + (size_t)w->n - 1) / (size_t)w->n;
	w->lo = 0;
	w->hi = w->count;
	if (w->cfg.cc.op == C_REDUCE_SCATTER) {	/* only the owned chunk is defined */
		w->lo = (size_t)((w->r + 1) % w->n) * w->chunk;
		w->hi = w->lo + w->chunk < w->count ? w->lo + w->chunk : w->count;
	}
	w->exact = calloc(w->count, sizeof(double));
	if (!w->exact) {
		r = -ENOMEM;
		goto fail;
	}
	in = coll_input(w->c);
	if (w->cfg.data == D_GRAD) {
		r = grad_data(w, in, ctx->err, sizeof(ctx->err));
		if (r)
			goto fail;
	} else {
		for (j = 0; j < w->count; j++) {
			in[j] = val(w, w->r, j);
			if (j >= w->lo && j < w->hi)
				w->exact[j] = exact_of(w, j, in[j]);
		}
	}
	/* ints are exact but for hadamard's rounding; the others within 1e-5
	 * of the largest */
	if (w->cfg.data != D_INTS || w->cfg.cc.mode == M_HADAMARD) {
		double xinf = 0;

		for (j = w->lo; j < w->hi; j++)
			xinf = fmax(xinf, fabs(w->exact[j]));
		w->tol = 1e-5 * xinf;
	}
	w->ndetail = w->cfg.iters < ITER_DETAIL ? w->cfg.iters : ITER_DETAIL;
	w->it_wrong = calloc(w->ndetail, sizeof(*w->it_wrong));
	w->it_lost = calloc(w->ndetail, sizeof(*w->it_lost));
	if (!w->it_wrong || !w->it_lost) {
		r = -ENOMEM;
		goto fail;
	}
	hist_init(&w->hist);
	hist_init(&w->hcodec);
	hist_init(&w->hxport);
	return 0;
fail:
	cw_destroy(ctx);
	return r;
}

static int cw_connect(struct wl_ctx *ctx, const json_t *peers)
{
	struct cw *w = ctx->priv;

	return coll_connect_peers(ctx, w->c, peers);
}

/* elements of the output off the exact result (see the top) */
static uint64_t check(const struct cw *w)
{
	const float *out = coll_output(w->c);
	uint64_t wrong = 0;
	size_t j;

	for (j = w->lo; j < w->hi; j++)
		wrong += fabs((double)out[j] - w->exact[j]) > w->tol;
	return wrong;
}

/* warmup, then the measured iterations, each checked: the sum of the
 * measured iterations' times, or -errno */
static int64_t iterate(struct wl_ctx *ctx, struct cw *w)
{
	uint64_t i, ns, total = w->cfg.warmup + w->cfg.iters, sum = 0;
	int r;

	for (i = 0; i < total; i++) {
		r = coll_step(ctx, w->c, &ns);
		if (r)
			return r;
		if (i >= w->cfg.warmup) {
			struct coll_stats cs;
			uint64_t k = i - w->cfg.warmup, bad = check(w);

			coll_get_stats(w->c, &cs);
			/* every measured iteration checked, from a cleared output */
			w->wrong += bad;
			w->wrong_iters += bad > 0;
			w->wrong_max = bad > w->wrong_max ? bad : w->wrong_max;
			if (k < w->ndetail) {
				w->it_wrong[k] = (uint32_t)bad;
				w->it_lost[k] = (uint32_t)cs.step_lost;
			}
			ctx->ival_lost = cs.lost_pieces;
			ctx->ival_expected = cs.pieces_expected;
			hist_record(&w->hist, ns);
			hist_record(&w->hcodec, cs.step_codec_ns);
			hist_record(&w->hxport, cs.step_transport_ns);
			wl_record(ctx, wl_now_ns(), ns);
			sum += ns;
			grad_err_add(&w->gerr, coll_output(w->c) + w->lo, w->exact + w->lo,
				     w->hi - w->lo);
		}
		/* stale data from earlier iterations must not pass the check: every
		 * measured iteration starts from zeros */
		if (i + 1 < total && (r = coll_next(ctx, w->c, i + 1 >= w->cfg.warmup)))
			return r;
		__atomic_store_n(&ctx->progress, i + 1, __ATOMIC_RELAXED);
	}
	return (int64_t)sum;
}

static int cw_run(struct wl_ctx *ctx, json_t **result)
{
	struct cw *w = ctx->priv;
	double t_s, algbw, factor;
	json_t *iw = json_array(), *il = json_array(), *o;
	int64_t sum;
	size_t k;
	int r;

	if ((r = coll_begin(ctx, w->c)) || (sum = iterate(ctx, w)) < 0) {
		json_decref(iw);
		json_decref(il);
		return r ? r : (int)sum;
	}
	t_s = (double)sum / (double)w->cfg.iters / 1e9;
	algbw = (double)w->cfg.cc.size / t_s;
	/* nccl-tests' bus bandwidth factors */
	factor = w->cfg.cc.op == C_ALLREDUCE ? 2.0 * (w->n - 1) / w->n :
		 w->cfg.cc.op == C_BROADCAST ? 1.0 : (double)(w->n - 1) / w->n;
	for (k = 0; k < w->ndetail; k++) {
		json_array_append_new(iw, json_integer(w->it_wrong[k]));
		json_array_append_new(il, json_integer(w->it_lost[k]));
	}
	*result = json_pack("{s:s,s:s,s:s,s:I,s:I,s:i,s:i,s:I,s:f,s:f,s:f,s:I,s:o,s:o,s:I,s:I,s:o,"
			    "s:o,s:s,s:o,s:o}", "op",
			    coll_ops[w->cfg.cc.op], "mode", coll_modes[w->cfg.cc.mode], "data",
			    coll_datas[w->cfg.data], "size", (json_int_t)w->cfg.cc.size, "count",
			    (json_int_t)w->count, "rank", w->r, "nranks", w->n, "iters",
			    (json_int_t)w->cfg.iters, "time_avg_ns", t_s * 1e9, "algbw_bytes_per_s",
			    algbw, "busbw_bytes_per_s", algbw * factor, "wrong", (json_int_t)w->wrong,
			    "time_ns", hist_to_json(&w->hist), "grad_error", grad_err_json(&w->gerr),
			    "wrong_iters", (json_int_t)w->wrong_iters, "wrong_max",
			    (json_int_t)w->wrong_max, "iter_wrong", iw, "iter_lost", il, "fill",
			    coll_fills[w->cfg.cc.fill],
			    /* what the computer and what the network cost, per step */
			    "codec_ns", hist_to_json(&w->hcodec), "transport_ns",
			    hist_to_json(&w->hxport));
	o = coll_stats_json(w->c);
	if (*result && (!o || json_object_update(*result, o))) {
		json_decref(*result);
		*result = NULL;
	}
	json_decref(o);
	return *result ? 0 : -ENOMEM;
}

const struct wl_ops wl_collective = {
	.name = "collective",
	.opts = cw_opts,
	.prepare = cw_prepare,
	.connect = cw_connect,
	.run = cw_run,
	.destroy = cw_destroy,
};
