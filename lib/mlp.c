// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mix.h"
#include "mlp.h"

/* a standard normal from (seed, i) */
static float gauss(uint64_t seed, uint64_t i)
{
	uint64_t h = rtb_mix64(seed * 0x9e3779b97f4a7c15ULL ^ i);
	double u = ((double)(h >> 11) + 0.5) / 9007199254740992.0;
	double v = ((double)(rtb_mix64(h ^ 0x5851f42d4c957f2dULL) >> 11) + 0.5) / 9007199254740992.0;

	return (float)(sqrt(-2 * log(u)) * cos(2 * M_PI * v));
}

int mlp_init(struct mlp *m, int in, int h1, int h2, int out, uint64_t seed)
{
	size_t i, n1 = (size_t)h1 * in, n2 = (size_t)h2 * h1, n3 = (size_t)out * h2;
	float *p;

	memset(m, 0, sizeof(*m));
	m->in = in;
	m->h1 = h1;
	m->h2 = h2;
	m->out = out;
	m->nparams = n1 + (size_t)h1 + n2 + (size_t)h2 + n3 + (size_t)out;
	m->w = calloc(m->nparams, sizeof(float));
	m->vel = calloc(m->nparams, sizeof(float));
	m->act = calloc(2 * ((size_t)h1 + h2 + out), sizeof(float));
	if (!m->w || !m->vel || !m->act) {
		mlp_free(m);
		return -ENOMEM;
	}
	/* He initialisation, biases zero */
	p = m->w;
	for (i = 0; i < n1; i++)
		p[i] = gauss(seed, i) * sqrtf(2.0f / (float)in);
	p += n1 + h1;
	for (i = 0; i < n2; i++)
		p[i] = gauss(seed + 1, i) * sqrtf(2.0f / (float)h1);
	p += n2 + h2;
	for (i = 0; i < n3; i++)
		p[i] = gauss(seed + 2, i) * sqrtf(1.0f / (float)h2);
	return 0;
}

void mlp_free(struct mlp *m)
{
	free(m->w);
	free(m->vel);
	free(m->act);
	m->w = m->vel = m->act = NULL;
}

/*
 * The inner loops on 4-float vectors (GCC's vector extension: SSE on x86,
 * NEON on arm, plain code elsewhere), whatever the optimisation flags; 128
 * bits on purpose: under qemu's TCG the 256-bit AVX forms of these loops ran
 * 10x slower than the scalar ones. Under TCG, where every guest float
 * operation is a call into softfloat, the vectors save only ~8% (the batch-8
 * gradient of the default model: 50-54 ms against 54-58), on hardware 2.7x.
 * The sums are done in a fixed order, so every rank and every run gets the
 * same bits.
 */
typedef float v4f __attribute__((vector_size(16)));

static inline v4f ld4(const float *p)
{
	v4f v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void st4(float *p, v4f v)
{
	memcpy(p, &v, sizeof(v));
}

/* sum of a[j] * b[j]: two vector partial sums, then the tail */
static float dot(const float *a, const float *b, int n)
{
	v4f s0 = { 0, 0, 0, 0 }, s1 = s0;
	float s;
	int j = 0;

	for (; j + 8 <= n; j += 8) {
		s0 += ld4(a + j) * ld4(b + j);
		s1 += ld4(a + j + 4) * ld4(b + j + 4);
	}
	for (; j + 4 <= n; j += 4)
		s0 += ld4(a + j) * ld4(b + j);
	s0 += s1;
	s = (s0[0] + s0[1]) + (s0[2] + s0[3]);
	for (; j < n; j++)
		s += a[j] * b[j];
	return s;
}

/* y += a * x */
static void axpy(float *y, float a, const float *x, int n)
{
	v4f va = { a, a, a, a };
	int j = 0;

	for (; j + 4 <= n; j += 4)
		st4(y + j, ld4(y + j) + va * ld4(x + j));
	for (; j < n; j++)
		y[j] += a * x[j];
}

/* y += a * x and z += b * w, one pass */
static void axpy2(float *y, float a, const float *x, float *z, float b, const float *w, int n)
{
	v4f va = { a, a, a, a }, vb = { b, b, b, b };
	int j = 0;

	for (; j + 4 <= n; j += 4) {
		st4(y + j, ld4(y + j) + va * ld4(x + j));
		st4(z + j, ld4(z + j) + vb * ld4(w + j));
	}
	for (; j < n; j++) {
		y[j] += a * x[j];
		z[j] += b * w[j];
	}
}

/* forward one sample: a1, a2, p (softmax) in act; returns -log p[y] */
static double forward(struct mlp *m, const float *x, int y)
{
	const float *w1 = m->w, *b1 = w1 + (size_t)m->h1 * m->in, *w2 = b1 + m->h1,
		    *b2 = w2 + (size_t)m->h2 * m->h1, *w3 = b2 + m->h2, *b3 = w3 + (size_t)m->out * m->h2;
	float *a1 = m->act, *a2 = a1 + m->h1, *p = a2 + m->h2, mx = -INFINITY, s = 0;
	int i;

	for (i = 0; i < m->h1; i++) {
		float z = b1[i] + dot(w1 + (size_t)i * m->in, x, m->in);

		a1[i] = z > 0 ? z : 0;
	}
	for (i = 0; i < m->h2; i++) {
		float z = b2[i] + dot(w2 + (size_t)i * m->h1, a1, m->h1);

		a2[i] = z > 0 ? z : 0;
	}
	for (i = 0; i < m->out; i++) {
		float z = b3[i] + dot(w3 + (size_t)i * m->h2, a2, m->h2);

		p[i] = z;
		if (z > mx)
			mx = z;
	}
	for (i = 0; i < m->out; i++)
		s += p[i] = expf(p[i] - mx);
	for (i = 0; i < m->out; i++)
		p[i] /= s;
	return y >= 0 ? -log(fmax(p[y], 1e-30)) : 0;
}

double mlp_grad(struct mlp *m, const float *x, const int *y, int n, float *grad)
{
	float *g1 = grad, *gb1 = g1 + (size_t)m->h1 * m->in, *g2 = gb1 + m->h1,
	      *gb2 = g2 + (size_t)m->h2 * m->h1, *g3 = gb2 + m->h2, *gb3 = g3 + (size_t)m->out * m->h2;
	const float *w2 = m->w + (size_t)m->h1 * m->in + m->h1, *w3 = w2 + (size_t)m->h2 * m->h1 + m->h2;
	float *a1 = m->act, *a2 = a1 + m->h1, *p = a2 + m->h2;
	float *d2 = p + m->out, *d1 = d2 + m->h2;
	float inv = 1.0f / (float)n;
	double loss = 0;
	int s, i;

	memset(grad, 0, m->nparams * sizeof(float));
	for (s = 0; s < n; s++) {
		const float *xs = x + (size_t)s * m->in;

		loss += forward(m, xs, y[s]);
		p[y[s]] -= 1.0f;	/* dloss/dz3 */
		memset(d2, 0, (size_t)m->h2 * sizeof(float));
		for (i = 0; i < m->out; i++) {
			float d = p[i] * inv;

			gb3[i] += d;
			axpy2(g3 + (size_t)i * m->h2, d, a2, d2, p[i], w3 + (size_t)i * m->h2, m->h2);
		}
		memset(d1, 0, (size_t)m->h1 * sizeof(float));
		for (i = 0; i < m->h2; i++) {
			float d;

			if (a2[i] <= 0)
				continue;
			d = d2[i];
			gb2[i] += d * inv;
			axpy2(g2 + (size_t)i * m->h1, d * inv, a1, d1, d, w2 + (size_t)i * m->h1, m->h1);
		}
		for (i = 0; i < m->h1; i++) {
			float d;

			if (a1[i] <= 0)
				continue;
			d = d1[i] * inv;
			gb1[i] += d;
			axpy(g1 + (size_t)i * m->in, d, xs, m->in);
		}
	}
	return loss / n;
}

double mlp_accuracy(struct mlp *m, const float *x, const int *y, int n, double *loss)
{
	const float *p = m->act + m->h1 + m->h2;
	int s, i, best, right = 0;
	double l = 0;

	for (s = 0; s < n; s++) {
		l += forward(m, x + (size_t)s * m->in, y[s]);
		for (best = 0, i = 1; i < m->out; i++)
			if (p[i] > p[best])
				best = i;
		right += best == y[s];
	}
	if (loss)
		*loss = n ? l / n : 0;
	return n ? (double)right / n : 0;
}

void mlp_sgd(struct mlp *m, const float *grad, float lr, float momentum)
{
	v4f vm = { momentum, momentum, momentum, momentum }, vl = { lr, lr, lr, lr };
	size_t i = 0;

	for (; i + 4 <= m->nparams; i += 4) {
		v4f v = vm * ld4(m->vel + i) + ld4(grad + i);

		st4(m->vel + i, v);
		st4(m->w + i, ld4(m->w + i) - vl * v);
	}
	for (; i < m->nparams; i++) {
		m->vel[i] = momentum * m->vel[i] + grad[i];
		m->w[i] -= lr * m->vel[i];
	}
}

int task_init(struct task *t, int in, int out, uint64_t seed)
{
	size_t i, n = (size_t)out * in;

	t->in = in;
	t->out = out;
	t->seed = seed;
	t->mu = malloc(n * sizeof(float));
	if (!t->mu)
		return -ENOMEM;
	/* class means 0.3 * N(0, I): about 4.8 standard deviations apart */
	for (i = 0; i < n; i++)
		t->mu[i] = 0.3f * gauss(seed ^ 0x7ea4e7ULL, i);
	return 0;
}

void task_free(struct task *t)
{
	free(t->mu);
	t->mu = NULL;
}

void task_sample(const struct task *t, uint64_t idx, float *x, int *y)
{
	int j;

	*y = (int)(rtb_mix64(t->seed ^ idx * 0x2545f4914f6cdd1dULL) % (uint64_t)t->out);
	for (j = 0; j < t->in; j++)
		x[j] = t->mu[(size_t)*y * t->in + j] +
		       gauss(t->seed ^ 0xda7aULL, idx * (uint64_t)t->in + (uint64_t)j);
}
