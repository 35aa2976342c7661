// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include "fwht.h"
#include "mix.h"
#include "rht.h"

#define GROUP 8	/* blocks transformed together: the interleave then moves 8 floats at a time */

struct rht {
	size_t n, block, nb, len;
	int lg;		/* log2(block) */
	float *sign;	/* the diagonal times 1/sqrt(block), n entries */
	float *tmp;	/* GROUP blocks */
	int64_t *itmp;	/* one block, the fixed-point path */
};

static void fwd_float(struct rht *h, const float *in, size_t st, float *wire);
static void inv_float(struct rht *h, const float *wire, float *out, size_t st, float scale);
static void fwd_fixed(struct rht *h, const float *in, size_t st, float *wire);
static void inv_fixed(struct rht *h, const float *wire, float *out, size_t st, float scale);

/* the sign of element i of the diagonal: one hash bit, the same on every rank */
static float sign_of(uint64_t seed, size_t i)
{
	return rtb_mix64(seed ^ ((uint64_t)i >> 6) * 0x9e3779b97f4a7c15ULL) >> (i & 63) & 1 ? -1.0f : 1.0f;
}

size_t rht_wire_len(size_t n, size_t block)
{
	return (n + block - 1) / block * block;
}

size_t rht_block_for(size_t n)
{
	size_t b;

	for (b = 65536; b > 8; b /= 2)
		if (rht_wire_len(n, b) - n <= n / 64)
			break;
	return b;
}

struct rht *rht_new(size_t n, size_t block, uint64_t seed)
{
	struct rht *h;
	float s = 1.0f / sqrtf((float)block);
	size_t i;

	if (block < 8 || (block & (block - 1)) || !n)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->n = n;
	h->block = block;
	h->len = rht_wire_len(n, block);
	h->nb = h->len / block;
	h->lg = __builtin_ctzll(block);
	h->sign = malloc(n * sizeof(float));
	h->tmp = malloc(GROUP * block * sizeof(float));
	h->itmp = malloc(block * sizeof(int64_t));
	if (!h->sign || !h->tmp || !h->itmp) {
		rht_free(h);
		return NULL;
	}
	for (i = 0; i < n; i++)
		h->sign[i] = sign_of(seed, i) * s;
	return h;
}

void rht_free(struct rht *h)
{
	if (!h)
		return;
	free(h->sign);
	free(h->tmp);
	free(h->itmp);
	free(h);
}

size_t rht_len(const struct rht *h)
{
	return h->len;
}

/* input elements in block b (the last one is short, blocks past n empty) */
static size_t block_n(const struct rht *h, size_t b)
{
	size_t base = b * h->block;

	return base >= h->n ? 0 : h->n - base < h->block ? h->n - base : h->block;
}

/* GROUP blocks at a time: signed and transformed into tmp, then interleaved */
static void fwd_float(struct rht *h, const float *in, size_t st, float *wire)
{
	size_t bs = h->block, nb = h->nb, b0, g, k, i;

	for (b0 = 0; b0 < nb; b0 += GROUP) {
		size_t ng = nb - b0 < GROUP ? nb - b0 : GROUP;

		for (g = 0; g < ng; g++) {
			float *t = h->tmp + g * bs;
			size_t base = (b0 + g) * bs, m = block_n(h, b0 + g);

			for (k = 0; k < m; k++)
				t[k] = in[(base + k) * st] * h->sign[base + k];
			memset(t + m, 0, (bs - m) * sizeof(float));
			fwht(t, bs);
		}
		/* coefficient k of block b goes to wire position k * nb + b */
		for (k = 0; k < bs; k++)
			for (i = 0; i < ng; i++)
				wire[k * nb + b0 + i] = h->tmp[i * bs + k];
	}
}

static void inv_float(struct rht *h, const float *wire, float *out, size_t st, float scale)
{
	size_t bs = h->block, nb = h->nb, b0, g, k, i;

	for (b0 = 0; b0 < nb; b0 += GROUP) {
		size_t ng = nb - b0 < GROUP ? nb - b0 : GROUP;

		for (k = 0; k < bs; k++)
			for (i = 0; i < ng; i++)
				h->tmp[i * bs + k] = wire[k * nb + b0 + i];
		for (g = 0; g < ng; g++) {
			float *t = h->tmp + g * bs;
			size_t base = (b0 + g) * bs, m = block_n(h, b0 + g);

			fwht(t, bs);
			for (k = 0; k < m; k++)
				out[(base + k) * st] = t[k] * scale * h->sign[base + k];
		}
	}
}

/*
 * The fixed-point path: the same transform, on integers. Under qemu's TCG
 * (the testbed's VM on a host without KVM) every floating-point instruction
 * of the guest is a call into softfloat, while integer adds run as host
 * instructions: an FWHT of 2^16 floats took 8-12 ms there, of 64-bit
 * integers 1.3 ms. Each block is converted with its own binary point (from
 * the largest exponent in it) so that log2(block) doublings cannot overflow
 * 63 bits, transformed, and converted back with the scale folded into one
 * 64x64-bit multiply. The conversions are bit manipulation, so no float
 * arithmetic is left at all. Every input at most 2^-(37 - log2(block)) below
 * its block's largest is kept to the bit, the rest rounded at that level:
 * more precise than the float path, whose every sum rounds to 24 bits of the
 * largest terms. Blocks holding an inf or a NaN take the float path.
 */
static uint32_t fbits(const float *f)
{
	uint32_t u;

	memcpy(&u, f, sizeof(u));
	return u;
}

static void setbits(float *f, uint32_t u)
{
	memcpy(f, &u, sizeof(u));
}

/* the largest biased exponent of n floats st apart (255: an inf or a NaN) */
static int max_exp(const float *x, size_t n, size_t st)
{
	uint32_t m = 0, b;
	size_t i;

	for (i = 0; i < n; i++) {
		b = fbits(x + i * st) & 0x7fffffffu;
		m = b > m ? b : m;
	}
	return (int)(m >> 23);
}

/* float bits b as a fixed-point integer, round(x * 2^(sh0 + 150)), without
 * a branch: the mantissa at bit 39 shifted right by at least 4 (fix_sh0) */
static inline int64_t to_fix(uint32_t b, int sh0)
{
	uint32_t e = b >> 23 & 0xff;
	uint64_t m = (uint64_t)((b & 0x7fffff) | (e ? 0x800000u : 0)) << 39;
	int rs = 39 - (int)(e + !e) - sh0;	/* a subnormal's exponent is 1 */
	int64_t q, sg = -(int64_t)(b >> 31);

	rs = rs > 63 ? 63 : rs;
	q = (int64_t)((m + (1ULL << (rs - 1))) >> rs);
	return (q ^ sg) - sg;
}

/* a >> sh rounded to nearest, ties to even */
static uint64_t rshift_rne(uint64_t a, int sh)
{
	uint64_t r, half;

	if (sh <= 0)
		return a << -sh;
	if (sh >= 64)
		return 0;
	r = a & ((1ULL << sh) - 1);
	half = 1ULL << (sh - 1);
	a >>= sh;
	return a + (r > half || (r == half && (a & 1)));
}

/* from_fix's rare cases: a result below the normal range or above it */
static __attribute__((noinline)) uint32_t from_fix_edge(uint64_t a, uint32_t s, int ebase)
{
	int top = 63 - __builtin_clzll(a), e = top + ebase;

	if (e <= 0)	/* subnormal: a * 2^(ebase + 22) units of 2^-149 (2^23 is the
			 * smallest normal's bits, as it should be) */
		return s | (uint32_t)rshift_rne(a, -(ebase + 22));
	a = rshift_rne(a, top - 23);
	e += (int)(a >> 24);
	return e >= 255 ? s | 0x7f800000u : s | (uint32_t)e << 23 | ((uint32_t)(a >> (a >> 24)) & 0x7fffff);
}

/* q * c / 2^64 * 2^(ebase - 127) as float bits, rounded to nearest even;
 * branch-free but for the range's edges */
static inline uint32_t from_fix(int64_t q, uint64_t c, int ebase)
{
	uint64_t sg = (uint64_t)(q >> 63), a = ((uint64_t)q ^ sg) - sg, r, carry;
	uint32_t s = (uint32_t)sg & 0x80000000u;
	int lz, e;

	a = (uint64_t)(((unsigned __int128)a * c) >> 64);
	if (!a)
		return s;
	lz = __builtin_clzll(a);
	e = 63 - lz + ebase;
	if (__builtin_expect(e <= 0 || e >= 254, 0))
		return from_fix_edge(a, s, ebase);
	a <<= lz;	/* the leading 1 at bit 63: 24 bits kept, 40 rounded off */
	r = a & ((1ULL << 40) - 1);
	a >>= 40;
	a += (r > (1ULL << 39)) | ((r == (1ULL << 39)) & a);
	carry = a >> 24;
	a >>= carry;
	return s | (uint32_t)(e + (int)carry) << 23 | ((uint32_t)a & 0x7fffff);
}

/* one radix-8 butterfly: passes h, 2h and 4h on x[0], x[h], ..., x[7h] */
static inline void ibf8(int64_t *x, size_t h)
{
	int64_t a0 = x[0], a1 = x[h], a2 = x[2 * h], a3 = x[3 * h];
	int64_t a4 = x[4 * h], a5 = x[5 * h], a6 = x[6 * h], a7 = x[7 * h];
	int64_t b0 = a0 + a1, b1 = a0 - a1, b2 = a2 + a3, b3 = a2 - a3;
	int64_t b4 = a4 + a5, b5 = a4 - a5, b6 = a6 + a7, b7 = a6 - a7;
	int64_t c0 = b0 + b2, c1 = b1 + b3, c2 = b0 - b2, c3 = b1 - b3;
	int64_t c4 = b4 + b6, c5 = b5 + b7, c6 = b4 - b6, c7 = b5 - b7;

	x[0] = c0 + c4;
	x[h] = c1 + c5;
	x[2 * h] = c2 + c6;
	x[3 * h] = c3 + c7;
	x[4 * h] = c0 - c4;
	x[5 * h] = c1 - c5;
	x[6 * h] = c2 - c6;
	x[7 * h] = c3 - c7;
}

/*
 * x <- H x on n = 2^k integers: radix 8 (three passes a sweep over memory,
 * the eight values in registers), then a radix-4 or radix-2 sweep for what
 * is left. Under TCG every guest load and store goes through the soft TLB:
 * at 2^13, 5 sweeps instead of radix 4's 7 took the transform from 4.9 to
 * 3.9 ms (25 blocks; AVX2 on 4 lanes ran no faster there than scalar code).
 */
static void ifwht(int64_t *x, size_t n)
{
	size_t h = 1, i, j;

	if (n >= 8) {	/* the first sweep on contiguous eights, its strides constants */
		for (i = 0; i < n; i += 8)
			ibf8(x + i, 1);
		h = 8;
	}
	for (; 8 * h <= n; h *= 8)
		for (i = 0; i < n; i += 8 * h)
			for (j = i; j < i + h; j++)
				ibf8(x + j, h);
	if (4 * h <= n) {
		for (i = 0; i < n; i += 4 * h)
			for (j = i; j < i + h; j++) {
				int64_t a = x[j], b = x[j + h], c = x[j + 2 * h], d = x[j + 3 * h];
				int64_t p = a + b, q = a - b, r = c + d, t = c - d;

				x[j] = p + r;
				x[j + h] = q + t;
				x[j + 2 * h] = p - r;
				x[j + 3 * h] = q - t;
			}
		h *= 4;
	}
	if (2 * h <= n)
		for (j = 0; j < h; j++) {
			int64_t a = x[j], b = x[j + h];

			x[j] = a + b;
			x[j + h] = a - b;
		}
}

/* scale * 2^(-lg/2) as c / 2^64 * 2^*es, c in [2^63, 2^64) */
static uint64_t fix_mult(int lg, float scale, int *es)
{
	double m = frexp((double)scale * pow(2.0, -lg / 2.0), es);

	return (uint64_t)ldexp(m, 64);
}

/* the binary point of a block whose largest exponent is emax: its inputs
 * times 2^(sh0 + 150) are integers below 2^(62 - lg) */
static int fix_sh0(const struct rht *h, int emax)
{
	return 38 - h->lg - (emax ? emax : 1);
}

/* one block the float way (the fixed path's fallback), into wire */
static void fwd_float_block(struct rht *h, const float *in, size_t st, float *wire, size_t b)
{
	size_t bs = h->block, base = b * bs, m = block_n(h, b), k;

	for (k = 0; k < m; k++)
		h->tmp[k] = in[(base + k) * st] * h->sign[base + k];
	memset(h->tmp + m, 0, (bs - m) * sizeof(float));
	fwht(h->tmp, bs);
	for (k = 0; k < bs; k++)
		wire[k * h->nb + b] = h->tmp[k];
}

static void inv_float_block(struct rht *h, const float *wire, float *out, size_t st, float scale,
			    size_t b)
{
	size_t bs = h->block, base = b * bs, m = block_n(h, b), k;

	for (k = 0; k < bs; k++)
		h->tmp[k] = wire[k * h->nb + b];
	fwht(h->tmp, bs);
	for (k = 0; k < m; k++)
		out[(base + k) * st] = h->tmp[k] * scale * h->sign[base + k];
}

static void fwd_fixed(struct rht *h, const float *in, size_t st, float *wire)
{
	size_t bs = h->block, nb = h->nb, b, k;
	int64_t *t = h->itmp;
	int es, emax, sh0;
	uint64_t c = fix_mult(h->lg, 1.0f, &es);

	for (b = 0; b < nb; b++) {
		size_t base = b * bs, m = block_n(h, b);

		if ((emax = max_exp(in + base * st, m, st)) == 255) {
			fwd_float_block(h, in, st, wire, b);
			continue;
		}
		sh0 = fix_sh0(h, emax);
		for (k = 0; k < m; k++)	/* D: the sign bit of the diagonal flips the input's */
			t[k] = to_fix(fbits(in + (base + k) * st) ^ (fbits(h->sign + base + k) & 0x80000000u),
				      sh0);
		memset(t + m, 0, (bs - m) * sizeof(*t));
		ifwht(t, bs);
		/* q = x * 2^(sh0 + 150): the exponent comes back down by as much */
		for (k = 0; k < bs; k++)
			setbits(wire + k * nb + b, from_fix(t[k], c, es - sh0 - 150 + 127));
	}
}

static void inv_fixed(struct rht *h, const float *wire, float *out, size_t st, float scale)
{
	size_t bs = h->block, nb = h->nb, b, k;
	int64_t *t = h->itmp;
	int es, emax, sh0, eb;
	uint64_t c = fix_mult(h->lg, scale, &es);

	for (b = 0; b < nb; b++) {
		size_t base = b * bs, m = block_n(h, b);

		if ((emax = max_exp(wire + b, bs, nb)) == 255) {
			inv_float_block(h, wire, out, st, scale, b);
			continue;
		}
		sh0 = fix_sh0(h, emax);
		for (k = 0; k < bs; k++)
			t[k] = to_fix(fbits(wire + k * nb + b), sh0);
		ifwht(t, bs);
		eb = es - sh0 - 150 + 127;
		for (k = 0; k < m; k++)
			setbits(out + (base + k) * st,
				from_fix(t[k], c, eb) ^ (fbits(h->sign + base + k) & 0x80000000u));
	}
}

/* the path rht_fwd and rht_inv take: 1 fixed point, 0 float, -1 not chosen yet */
static int path = -1;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* a round trip of 2^14 floats in one block with path p, ns */
static uint64_t time_path(struct rht *h, float *x, float *w, int p)
{
	uint64_t t = now_ns();

	if (p) {
		fwd_fixed(h, x, 1, w);
		inv_fixed(h, w, x, 1, 1.0f);
	} else {
		fwd_float(h, x, 1, w);
		inv_float(h, w, x, 1, 1.0f);
	}
	return now_ns() - t;
}

/*
 * The faster path here, measured once (as lib/fwht.c picks its kernel): on
 * hardware the float path's vector kernels win; under TCG the fixed one, by
 * 5-8x. Each path's best of four round trips, the two taking turns: the
 * agents of a testbed choose at the same moment on shared vCPUs, and one
 * pause inside a single timing (a busy or throttled host) would pick the
 * slow path for good. RTB_RHT=fixed|float forces one.
 */
static char why[96] = "not chosen yet";

/* qemu's TCG says so in the hypervisor leaf (the "tcg-cpuid" property, on
 * by default): there guest float arithmetic is emulated, whatever a timing
 * taken on a busy host says */
static int under_tcg(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int a, b, c, d;
	char sig[13];

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31)))
		return 0;
	__cpuid(0x40000000, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	sig[12] = 0;
	return !strcmp(sig, "TCGTCGTCGTCG");
#else
	return 0;
#endif
}

static int choose_path(void)
{
	enum { N = 1 << 14 };
	const char *force = getenv("RTB_RHT");
	struct rht *h = NULL;
	float *x = NULL;
	int p = 0;

	if (force && (!strcmp(force, "fixed") || !strcmp(force, "float"))) {
		p = !strcmp(force, "fixed");
		snprintf(why, sizeof(why), "RTB_RHT=%s", force);
	} else if (under_tcg()) {
		p = 1;
		snprintf(why, sizeof(why), "qemu TCG (cpuid): emulated floating point");
	} else if ((h = rht_new(N, N, 1)) && (x = calloc(2 * N, sizeof(float)))) {
		for (size_t i = 0; i < N; i++)
			x[i] = (float)(i % 7) - 3.0f;
		uint64_t best[2] = { UINT64_MAX, UINT64_MAX };

		for (int r = 0; r < 5; r++)	/* the first round warms up */
			for (int k = 0; k < 2; k++) {
				uint64_t t = time_path(h, x, x + N, k);

				if (r && t < best[k])
					best[k] = t;
			}
		p = best[1] < best[0];
		snprintf(why, sizeof(why), "timed: fixed %llu ns, float %llu ns (2^14, best of 4)",
			 (unsigned long long)best[1], (unsigned long long)best[0]);
	}
	free(x);
	rht_free(h);
	__atomic_store_n(&path, p, __ATOMIC_RELEASE);
	return p;
}

static int the_path(void)
{
	int p = __atomic_load_n(&path, __ATOMIC_ACQUIRE);

	return p < 0 ? choose_path() : p;
}

const char *rht_path(void)
{
	return the_path() ? "fixed" : "float";
}

const char *rht_path_why(void)
{
	the_path();
	return why;
}

int rht_use(const char *name)
{
	if (strcmp(name, "fixed") && strcmp(name, "float"))
		return -1;
	snprintf(why, sizeof(why), "set by the program");
	__atomic_store_n(&path, !strcmp(name, "fixed"), __ATOMIC_RELEASE);
	return 0;
}

void rht_fwd_st(struct rht *h, const float *in, size_t stride, float *wire)
{
	if (the_path())
		fwd_fixed(h, in, stride, wire);
	else
		fwd_float(h, in, stride, wire);
}

void rht_inv_st(struct rht *h, const float *wire, float *out, size_t stride, float scale)
{
	if (the_path())
		inv_fixed(h, wire, out, stride, scale);
	else
		inv_float(h, wire, out, stride, scale);
}

void rht_fwd(struct rht *h, const float *in, float *wire)
{
	rht_fwd_st(h, in, 1, wire);
}

void rht_inv(struct rht *h, const float *wire, float *out, float scale)
{
	rht_inv_st(h, wire, out, 1, scale);
}
