// SPDX-License-Identifier: MIT
/*
 * The randomized Hadamard transform: exact round trip, and the property the
 * hadamard recovery mode is for -- losing 1% of the packets costs far less
 * worst-case (L-inf) error than losing the same packets of raw data. Then
 * the same on real gradients (the train workload's MLP and task), step
 * after step: the transform is orthonormal, so the lost energy is the same
 * in expectation, but it stays close to the lost fraction every time, where
 * zero-filled raw ranges lose a lot or nothing depending on where the
 * packets fell. So hadamard's worst cosine to the true gradient is far
 * better, its spread far smaller, its mean no lower (Jensen: sqrt(1 - lost
 * energy) is concave, an edge too small to measure here) and its L-inf
 * error far lower.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "expect.h"
#include "../../lib/mlp.h"
#include "../../lib/rht.h"

static uint64_t s = 7;

static double u(void)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return (double)(s >> 11) / 9007199254740992.0;
}

/* cosine and L-inf error of e against x */
static void cmp(const float *x, const float *e, size_t n, double *cos, double *linf)
{
	double d = 0, a = 0, b = 0;
	size_t i;

	*linf = 0;
	for (i = 0; i < n; i++) {
		d += (double)x[i] * e[i];
		a += (double)x[i] * x[i];
		b += (double)e[i] * e[i];
		*linf = fmax(*linf, fabs((double)x[i] - e[i]));
	}
	*cos = a > 0 && b > 0 ? d / sqrt(a * b) : 0;
}

/* zero 1% of the PKT-float packets of buf[n], at random */
static void lose(float *buf, size_t n, size_t pkt)
{
	size_t p;

	for (p = 0; p * pkt < n; p++)
		if (u() < 0.01)
			memset(buf + p * pkt, 0, (n - p * pkt < pkt ? n - p * pkt : pkt) * sizeof(float));
}

/* 60 SGD steps of the train workload's MLP (128-512-264-10) on its task;
 * each step's gradient sent both ways through 1% packet loss, 20 times over
 * (fresh losses each time, the same packets on both ways), with the block the engine picks (8192: the
 * wire carries 0.3% padding, so none of the error can hide in it) */
static void gradients(void)
{
	enum { STEPS = 60, TRIES = 20, BATCH = 32, IN = 128, PKT = 256 };
	struct mlp m;
	struct task t;
	struct rht *h;
	float *g, *raw, *out, *wire, xb[BATCH * IN];
	int yb[BATCH], k, i, j;
	double cl = 0, ch = 0, ll = 0, lh = 0, ql = 0, qh = 0, minl = 1, minh = 1, c, l, sl, sh;
	double dsum = 0, dsq = 0, cr, se;	/* hadamard's cosine minus lossy's, per loss */
	size_t n, block;
	const double ns = STEPS * TRIES;

	EXPECT(mlp_init(&m, IN, 512, 264, 10, 1) == 0);
	EXPECT(task_init(&t, IN, 10, 1) == 0);
	n = m.nparams;
	block = rht_block_for(n);
	h = rht_new(n, block, 42);
	EXPECT(h && block == 8192);
	g = malloc(n * sizeof(float));
	raw = malloc(n * sizeof(float));
	out = malloc(n * sizeof(float));
	wire = malloc(rht_len(h) * sizeof(float));
	for (k = 0; k < STEPS; k++) {
		for (i = 0; i < BATCH; i++)
			task_sample(&t, (uint64_t)k * BATCH + (uint64_t)i, xb + i * IN, &yb[i]);
		mlp_grad(&m, xb, yb, BATCH, g);
		for (j = 0; j < TRIES; j++) {
			/* the same packets lost on both paths (the wire has 3 more) */
			uint64_t seed = s;

			memcpy(raw, g, n * sizeof(float));
			lose(raw, n, PKT);
			s = seed;
			rht_fwd(h, g, wire);
			lose(wire, rht_len(h), PKT);
			rht_inv(h, wire, out, 1.0f);
			cmp(g, raw, n, &c, &l);
			cr = c;
			cl += c;
			ql += c * c;
			minl = fmin(minl, c);
			ll += l;
			cmp(g, out, n, &c, &l);
			ch += c;
			qh += c * c;
			minh = fmin(minh, c);
			lh += l;
			dsum += c - cr;
			dsq += (c - cr) * (c - cr);
		}
		mlp_sgd(&m, g, 0.05f, 0.9f);
	}
	cl /= ns, ch /= ns, ll /= ns, lh /= ns;
	sl = sqrt(fmax(ql / ns - cl * cl, 0));
	sh = sqrt(fmax(qh / ns - ch * ch, 0));
	se = sqrt(fmax(dsq / ns - (dsum / ns) * (dsum / ns), 0) / ns);	/* of the mean difference */
	fprintf(stderr, "MLP gradients (%zu floats, block %zu), %d steps x %d losses at 1%%: cosine "
		"hadamard mean %.5f sd %.5f worst %.5f, lossy mean %.5f sd %.5f worst %.5f; mean L-inf "
		"hadamard %.4g, lossy %.4g (%.1fx); paired cosine difference %+.5f (standard error %.5f)\n",
		n, block, STEPS, TRIES, ch, sh, minh, cl, sl, minl, lh, ll, ll / lh, dsum / ns, se);
	/* the same lost energy in expectation (orthonormal), far less spread:
	 * the worst step is much better; the mean, paired over the same
	 * losses, is not lower (Jensen's edge, Var(lost energy) / 8, is about
	 * 3e-5 here: within the noise of 1200 losses, so not asserted) */
	EXPECT(dsum / ns > -3 * se);
	EXPECT(minh > minl + 0.01);
	EXPECT(sh * 3 < sl);
	EXPECT(lh * 5 <= ll);
	free(g);
	free(raw);
	free(out);
	free(wire);
	rht_free(h);
	mlp_free(&m);
	task_free(&t);
}

/* the round trip, and 1% loss against the same loss of raw data */
static void loss_vs_raw(void)
{
	enum { N = 300000, BLOCK = 1024, PKT = 256 };	/* 1 KiB packets: 256 floats */
	float *in = malloc(N * sizeof(float)), *out = malloc(N * sizeof(float));
	size_t wl = rht_wire_len(N, BLOCK), i, p, npk;
	float *wire = malloc(wl * sizeof(float)), *raw = malloc(N * sizeof(float));
	struct rht *h = rht_new(N, BLOCK, 42);
	double err = 0, linf_h = 0, linf_raw = 0, dot = 0, nh = 0, nx = 0, lost_frac;
	char *lost;

	for (i = 0; i < N; i++)	/* gradient-like: mostly small, some large */
		in[i] = (float)((u() - 0.5) * (u() < 0.01 ? 10 : 1));
	EXPECT(wl % BLOCK == 0 && wl >= N);
	EXPECT(h && rht_len(h) == wl);
	rht_fwd(h, in, wire);
	rht_inv(h, wire, out, 1.0f);
	for (i = 0; i < N; i++)
		err = fmax(err, fabs(out[i] - in[i]));
	EXPECT(err < 1e-5);
	EXPECT(rht_new(N, 1000, 42) == NULL);	/* not a power of two */

	/* lose 1% of the packets, the same packets on both paths */
	npk = (wl + PKT - 1) / PKT;
	lost = calloc(npk, 1);
	for (p = 0, lost_frac = 0; p < npk; p++)
		if (u() < 0.01) {
			lost[p] = 1;
			lost_frac++;
		}
	lost_frac /= (double)npk;
	rht_fwd(h, in, wire);
	memcpy(raw, in, N * sizeof(float));
	for (p = 0; p < npk; p++) {
		if (!lost[p])
			continue;
		for (i = p * PKT; i < (p + 1) * PKT && i < wl; i++)
			wire[i] = 0;
		for (i = p * PKT; i < (p + 1) * PKT && i < N; i++)
			raw[i] = 0;	/* "lossy": the range is zero-filled */
	}
	rht_inv(h, wire, out, 1.0f);
	for (i = 0; i < N; i++) {
		linf_h = fmax(linf_h, fabs(out[i] - in[i]));
		linf_raw = fmax(linf_raw, fabs(raw[i] - in[i]));
		dot += (double)out[i] * in[i];
		nh += (double)out[i] * out[i];
		nx += (double)in[i] * in[i];
	}
	fprintf(stderr, "1%% packet loss (%.2f%% lost): L-inf error hadamard %.4f, lossy %.4f (%.1fx); "
		"cosine %.4f\n", lost_frac * 100, linf_h, linf_raw, linf_raw / linf_h,
		dot / sqrt(nh * nx));
	EXPECT(lost_frac > 0.005);
	EXPECT(linf_h * 5 <= linf_raw);
	EXPECT(dot / sqrt(nh * nx) > 0.98);
	free(lost);
	rht_free(h);
	free(in);
	free(out);
	free(wire);
	free(raw);
}

/* the fixed-point and the float path agree, also on what only one of them
 * could get wrong: zeros, subnormals, a huge and a tiny range in one block,
 * an inf (the fixed path hands that block to the float one), a short last
 * block, and the rescale */
static void paths_agree(void)
{
	enum { N = 5000, BLOCK = 1024 };
	float in[N], wf[N + BLOCK], wx[N + BLOCK], of[N], ox[N];
	struct rht *h = rht_new(N, BLOCK, 9);
	size_t wl = rht_wire_len(N, BLOCK), i;
	double dw = 0, dout = 0;

	for (i = 0; i < N; i++)
		in[i] = (float)((u() - 0.5) * pow(10, (double)(i % 9) - 4));
	for (i = 0; i < BLOCK; i++)
		in[i] = 0;			/* block 0: zeros */
	for (i = BLOCK; i < 2 * BLOCK; i++)
		in[i] = (float)(u() * 1e-39);	/* block 1: subnormals */
	in[2 * BLOCK] = 3e38f;			/* block 2: one huge among ordinary values */
	in[3 * BLOCK + 5] = INFINITY;		/* block 3: an inf */
	EXPECT(h != NULL);
	EXPECT(rht_use("float") == 0);
	rht_fwd(h, in, wf);
	rht_inv(h, wf, of, 0.75f);
	EXPECT(rht_use("fixed") == 0 && !strcmp(rht_path(), "fixed"));
	rht_fwd(h, in, wx);
	rht_inv(h, wx, ox, 0.75f);
	EXPECT(rht_use("nope") == -1 && !strcmp(rht_path(), "fixed"));
	/* against each block's largest magnitude (the scale of either path's
	 * rounding), outside the blocks of the inf and the huge value, and of
	 * the subnormals, where float arithmetic itself loses bits (so the
	 * fixed path is checked against the input there) */
	for (size_t b = 0; b < wl / BLOCK; b++) {
		double mw = 0, mi = 0, ew = 0, eo = 0;

		if (b >= 1 && b <= 3)
			continue;
		for (i = 0; i < BLOCK; i++) {
			mw = fmax(mw, fabs(wf[i * (wl / BLOCK) + b]));
			ew = fmax(ew, fabs(wf[i * (wl / BLOCK) + b] - wx[i * (wl / BLOCK) + b]));
		}
		for (i = b * BLOCK; i < (b + 1) * BLOCK && i < N; i++) {
			mi = fmax(mi, fabs(in[i]));
			eo = fmax(eo, fabs(of[i] - ox[i]));
		}
		dw = fmax(dw, mw > 0 ? ew / mw : ew);
		dout = fmax(dout, mi > 0 ? eo / mi : eo);
	}
	fprintf(stderr, "fixed vs float: wire relative difference %.2g, output %.2g\n", dw, dout);
	EXPECT(dw < 1e-5);
	EXPECT(dout < 1e-5);
	for (i = 0; i < BLOCK; i++)
		EXPECT_EQ_U(ox[i] == 0.0f, 1);
	for (i = BLOCK, dout = 0; i < 2 * BLOCK; i++)
		dout = fmax(dout, fabs(ox[i] - 0.75 * in[i]) / 1e-39);
	fprintf(stderr, "fixed path on subnormals: error %.2g of the largest\n", dout);
	EXPECT(dout < 1e-5);
	EXPECT(fabs(ox[2 * BLOCK] - 0.75 * 3e38) < 1e33);	/* the huge value survives */
	for (i = 1; i < BLOCK; i++)	/* the others in its block are below its rounding */
		EXPECT(fabs(ox[2 * BLOCK + i]) < 3e38 * 1e-6);
	EXPECT(isinf(ox[3 * BLOCK + 5]) || isnan(ox[3 * BLOCK + 5]));
	EXPECT(isinf(of[3 * BLOCK + 5]) || isnan(of[3 * BLOCK + 5]));
	rht_free(h);
}

/* every n-th float (a collective's hadamard chunk) transforms as the same
 * floats gathered: the same bits both ways, the elements between untouched */
static void strided(void)
{
	enum { N = 1000, ST = 3 };
	struct rht *h = rht_new(N, 64, 9);
	size_t L = rht_len(h), i;
	float *x = malloc(N * ST * sizeof(float)), *y = malloc(N * sizeof(float));
	float *w1 = malloc(L * sizeof(float)), *w2 = malloc(L * sizeof(float));
	float *o1 = malloc(N * ST * sizeof(float)), *o2 = malloc(N * sizeof(float));
	int same = 1;

	for (i = 0; i < N * ST; i++)
		x[i] = (float)((i * 2654435761u) % 1000) / 100.0f - 5.0f;
	for (i = 0; i < N; i++)
		y[i] = x[1 + i * ST];
	for (i = 0; i < N * ST; i++)
		o1[i] = -7.0f;
	rht_fwd_st(h, x + 1, ST, w1);
	rht_fwd(h, y, w2);
	EXPECT(!memcmp(w1, w2, L * sizeof(float)));
	rht_inv_st(h, w1, o1 + 1, ST, 1.0f);
	rht_inv(h, w2, o2, 1.0f);
	for (i = 0; i < N; i++)
		same = same && !memcmp(&o1[1 + i * ST], &o2[i], sizeof(float)) &&
		       o1[i * ST] == -7.0f && o1[i * ST + 2] == -7.0f;
	EXPECT(same);
	rht_free(h);
	free(x);
	free(y);
	free(w1);
	free(w2);
	free(o1);
	free(o2);
}

int main(void)
{
	static const char *const paths[] = { "float", "fixed" };

	fprintf(stderr, "path chosen here: %s (%s)\n", rht_path(), rht_path_why());
	/* the choice says why: the cpuid signature, the timings or RTB_RHT */
	EXPECT(!strncmp(rht_path_why(), "qemu TCG", 8) || !strncmp(rht_path_why(), "timed: ", 7) ||
	       !strncmp(rht_path_why(), "RTB_RHT=", 8));
	paths_agree();
	for (int k = 0; k < 2; k++) {
		EXPECT(rht_use(paths[k]) == 0);
		fprintf(stderr, "-- path %s\n", paths[k]);
		loss_vs_raw();
		gradients();
		strided();
	}
	return expect_done("test_rht");
}
