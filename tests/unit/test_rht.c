// SPDX-License-Identifier: MIT
/*
 * The randomized Hadamard transform: exact round trip, and the property the
 * hadamard recovery mode is for -- losing 1% of the packets costs far less
 * worst-case (L-inf) error than losing the same packets of raw data. Then
 * the same on real gradients (the train workload's MLP and task), step
 * after step: the transform keeps the lost energy close to the lost
 * fraction every step, where zero-filled raw ranges lose a lot or nothing
 * depending on where the packets fell, so hadamard's mean cosine to the
 * true gradient is the higher one (Jensen: sqrt(1 - lost energy) is
 * concave) and its L-inf error far lower.
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

/* 60 SGD steps of the train workload's MLP (128-512-264-10) on its task:
 * each step's gradient sent both ways through 1% packet loss */
static void gradients(void)
{
	enum { STEPS = 60, BATCH = 32, IN = 128, PKT = 256, BLOCK = 65536 };
	struct mlp m;
	struct task t;
	float *g, *raw, *out, *wire, xb[BATCH * IN];
	int yb[BATCH], k, i;
	double cl = 0, ch = 0, ll = 0, lh = 0, c, l;
	size_t n, wl;

	EXPECT(mlp_init(&m, IN, 512, 264, 10, 1) == 0);
	EXPECT(task_init(&t, IN, 10, 1) == 0);
	n = m.nparams;
	wl = rht_wire_len(n, BLOCK);
	g = malloc(n * sizeof(float));
	raw = malloc(n * sizeof(float));
	out = malloc(n * sizeof(float));
	wire = malloc(wl * sizeof(float));
	for (k = 0; k < STEPS; k++) {
		for (i = 0; i < BATCH; i++)
			task_sample(&t, (uint64_t)k * BATCH + (uint64_t)i, xb + i * IN, &yb[i]);
		mlp_grad(&m, xb, yb, BATCH, g);
		memcpy(raw, g, n * sizeof(float));
		lose(raw, n, PKT);
		EXPECT(rht_encode(g, n, wire, BLOCK, 42) == 0);
		lose(wire, wl, PKT);
		EXPECT(rht_decode(wire, n, out, BLOCK, 42, 1.0f) == 0);
		cmp(g, raw, n, &c, &l);
		cl += c / STEPS;
		ll += l / STEPS;
		cmp(g, out, n, &c, &l);
		ch += c / STEPS;
		lh += l / STEPS;
		mlp_sgd(&m, g, 0.05f, 0.9f);
	}
	fprintf(stderr, "MLP gradients (%zu floats), %d steps at 1%% packet loss: mean cosine "
		"hadamard %.5f, lossy %.5f; mean L-inf hadamard %.4g, lossy %.4g (%.1fx)\n", n,
		STEPS, ch, cl, lh, ll, ll / lh);
	EXPECT(ch > cl);
	EXPECT(lh * 5 <= ll);
	free(g);
	free(raw);
	free(out);
	free(wire);
	mlp_free(&m);
	task_free(&t);
}

int main(void)
{
	enum { N = 300000, BLOCK = 1024, PKT = 256 };	/* 1 KiB packets: 256 floats */
	float *in = malloc(N * sizeof(float)), *out = malloc(N * sizeof(float));
	size_t wl = rht_wire_len(N, BLOCK), i, p, npk;
	float *wire = malloc(wl * sizeof(float)), *raw = malloc(N * sizeof(float));
	double err = 0, linf_h = 0, linf_raw = 0, dot = 0, nh = 0, nx = 0, lost_frac;
	char *lost;

	for (i = 0; i < N; i++)	/* gradient-like: mostly small, some large */
		in[i] = (float)((u() - 0.5) * (u() < 0.01 ? 10 : 1));
	EXPECT(wl % BLOCK == 0 && wl >= N);
	EXPECT(rht_encode(in, N, wire, BLOCK, 42) == 0);
	EXPECT(rht_decode(wire, N, out, BLOCK, 42, 1.0f) == 0);
	for (i = 0; i < N; i++)
		err = fmax(err, fabs(out[i] - in[i]));
	EXPECT(err < 1e-5);
	EXPECT(rht_encode(in, N, wire, 1000, 42) == -1);	/* not a power of two */

	/* lose 1% of the packets, the same packets on both paths */
	npk = (wl + PKT - 1) / PKT;
	lost = calloc(npk, 1);
	for (p = 0, lost_frac = 0; p < npk; p++)
		if (u() < 0.01) {
			lost[p] = 1;
			lost_frac++;
		}
	lost_frac /= (double)npk;
	EXPECT(rht_encode(in, N, wire, BLOCK, 42) == 0);
	memcpy(raw, in, N * sizeof(float));
	for (p = 0; p < npk; p++) {
		if (!lost[p])
			continue;
		for (i = p * PKT; i < (p + 1) * PKT && i < wl; i++)
			wire[i] = 0;
		for (i = p * PKT; i < (p + 1) * PKT && i < N; i++)
			raw[i] = 0;	/* "lossy": the range is zero-filled */
	}
	EXPECT(rht_decode(wire, N, out, BLOCK, 42, 1.0f) == 0);
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
	free(in);
	free(out);
	free(wire);
	free(raw);
	gradients();
	return expect_done("test_rht");
}
