// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fwht.h"

static int pow2(size_t n)
{
	return n && !(n & (n - 1));
}

int fwht_naive(float *x, size_t n)
{
	size_t h, i, j;

	if (!pow2(n))
		return -1;
	for (h = 1; h < n; h *= 2)
		for (i = 0; i < n; i += 2 * h)
			for (j = i; j < i + h; j++) {
				float a = x[j], b = x[j + h];

				x[j] = a + b;
				x[j + h] = a - b;
			}
	return 0;
}

typedef float v8 __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

/* a shuffle of one vector by constant lanes, in GCC's and clang's words */
#ifdef __clang__
#define SHUF8(v, a, b, c, d, e, f, g, h) __builtin_shufflevector(v, v, a, b, c, d, e, f, g, h)
#else
#define SHUF8(v, a, b, c, d, e, f, g, h) __builtin_shuffle(v, (v8i){ a, b, c, d, e, f, g, h })
#endif

/*
 * Cache blocking (FFHT's approach): a transform of n floats is the
 * transforms of its blocks followed by the stages that cross blocks. So
 * blocks of FWHT_L1 floats are done whole while they sit in L1 (the three
 * stages inside a vector, then radix-4 passes), and blocks of FWHT_L2
 * floats, made of those, while they sit in L2; only the stages with a
 * stride of FWHT_L2 or more pass over all of x. At 2^20 that is 3 passes
 * over memory instead of 9 (the naive loop makes 20).
 */
#define FWHT_L1 (1u << 12)	/* 16 KiB: in any L1d */
#define FWHT_L2 (1u << 16)	/* 256 KiB: in any L2 */

/*
 * One kernel body, compiled twice (AVX2 and portable) through this macro:
 * the code is the same, the target attribute decides the instructions.
 *
 * FMA: half the radix-8 sums as multiply-adds by 1 (exact: the same result
 * as the add). A transform is all adds and subtracts, and x86 cores issue
 * vector adds on two ports but FMAs on two others: the 2^16 transform was
 * bound by the add ports (1 cycle per float), and this spreads it on four.
 */
#define SUM(fma, a, b) ((fma) ? (a) * one + (b) : (a) + (b))
/* 1, read as a volatile: the compiler cannot fold the multiply away */
static volatile const float fwht_one = 1.0f;
#define FWHT_KERNEL(name, attr, FMA)                                                   \
	/* stages 1, 2, 4: inside a vector */                                         \
	attr static inline __attribute__((always_inline)) void name##_in(v8 *p)        \
	{                                                                              \
		/* out = partner + sign * own: the sum where the float is its pair's  \
		 * first, the difference where it is the second -- one shuffle (the    \
		 * partner) and a multiply-add per stage */                             \
		const v8 s1 = { 1, -1, 1, -1, 1, -1, 1, -1 };                         \
		const v8 s2 = { 1, 1, -1, -1, 1, 1, -1, -1 };                         \
		const v8 s4 = { 1, 1, 1, 1, -1, -1, -1, -1 };                         \
		v8 v = *p;                                                             \
		v = SHUF8(v, 1, 0, 3, 2, 5, 4, 7, 6) + s1 * v;                         \
		v = SHUF8(v, 2, 3, 0, 1, 6, 7, 4, 5) + s2 * v;                         \
		v = SHUF8(v, 4, 5, 6, 7, 0, 1, 2, 3) + s4 * v;                         \
		*p = v;                                                                \
	}                                                                              \
	attr static void name##_vec(float *x, size_t n)                                \
	{                                                                              \
		size_t i;                                                              \
		for (i = 0; i < n; i += 8) {                                           \
			v8 v;                                                          \
			memcpy(&v, x + i, sizeof(v));                                  \
			name##_in(&v);                                                 \
			memcpy(x + i, &v, sizeof(v));                                  \
		}                                                                      \
	}                                                                              \
	/* stages h, 2h, 4h on the 8 vectors at x + k h (k = 0..7), in registers */  \
	attr static inline __attribute__((always_inline)) void name##_r8(float *x, size_t h, \
									  int first) \
	{                                                                              \
		v8 a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7;     \
		const float o = fwht_one;	/* opaque: a * one + b stays an FMA */ \
		const v8 one = { o, o, o, o, o, o, o, o };                             \
		memcpy(&a0, x, 32);                                                    \
		memcpy(&a1, x + h, 32);                                                \
		memcpy(&a2, x + 2 * h, 32);                                            \
		memcpy(&a3, x + 3 * h, 32);                                            \
		memcpy(&a4, x + 4 * h, 32);                                            \
		memcpy(&a5, x + 5 * h, 32);                                            \
		memcpy(&a6, x + 6 * h, 32);                                            \
		memcpy(&a7, x + 7 * h, 32);                                            \
		if (first) {	/* h = 8: the 64 floats' stages 1, 2, 4 too */         \
			name##_in(&a0); name##_in(&a1); name##_in(&a2); name##_in(&a3); \
			name##_in(&a4); name##_in(&a5); name##_in(&a6); name##_in(&a7); \
		}                                                                      \
		b0 = SUM(FMA, a0, a1); b1 = a0 - a1; b2 = SUM(FMA, a2, a3); b3 = a2 - a3;        \
		b4 = SUM(FMA, a4, a5); b5 = a4 - a5; b6 = SUM(FMA, a6, a7); b7 = a6 - a7;        \
		a0 = SUM(FMA, b0, b2); a1 = SUM(FMA, b1, b3); a2 = b0 - b2; a3 = b1 - b3;        \
		a4 = SUM(FMA, b4, b6); a5 = SUM(FMA, b5, b7); a6 = b4 - b6; a7 = b5 - b7;        \
		b0 = SUM(FMA, a0, a4); b1 = SUM(FMA, a1, a5); b2 = SUM(FMA, a2, a6); b3 = SUM(FMA, a3, a7); \
		b4 = a0 - a4; b5 = a1 - a5; b6 = a2 - a6; b7 = a3 - a7;                \
		memcpy(x, &b0, 32);                                                    \
		memcpy(x + h, &b1, 32);                                                \
		memcpy(x + 2 * h, &b2, 32);                                            \
		memcpy(x + 3 * h, &b3, 32);                                            \
		memcpy(x + 4 * h, &b4, 32);                                            \
		memcpy(x + 5 * h, &b5, 32);                                            \
		memcpy(x + 6 * h, &b6, 32);                                            \
		memcpy(x + 7 * h, &b7, 32);                                            \
	}                                                                              \
	/* the stages of stride h and up (h >= 8) over x[0, n): three per pass         \
	 * (radix-8 butterflies on 8 vectors), what is left in radix 4 or 2: each      \
	 * pass loads and stores every float once, and stores bound the speed */       \
	attr static void name##_stages(float *x, size_t n, size_t h)                   \
	{                                                                              \
		size_t i, j;                                                           \
		for (; 8 * h <= n; h *= 8)                                             \
			for (i = 0; i < n; i += 8 * h)                                 \
				for (j = i; j < i + h; j += 8)                         \
					name##_r8(x + j, h, 0);                        \
		if (4 * h <= n) {                                                      \
			for (i = 0; i < n; i += 4 * h)                                 \
				for (j = i; j < i + h; j += 8) {                       \
					v8 a, b, c, d, p, q, r, s;                     \
					memcpy(&a, x + j, 32);                         \
					memcpy(&b, x + j + h, 32);                     \
					memcpy(&c, x + j + 2 * h, 32);                 \
					memcpy(&d, x + j + 3 * h, 32);                 \
					p = a + b;                                     \
					q = a - b;                                     \
					r = c + d;                                     \
					s = c - d;                                     \
					a = p + r;                                     \
					b = q + s;                                     \
					c = p - r;                                     \
					d = q - s;                                     \
					memcpy(x + j, &a, 32);                         \
					memcpy(x + j + h, &b, 32);                     \
					memcpy(x + j + 2 * h, &c, 32);                 \
					memcpy(x + j + 3 * h, &d, 32);                 \
				}                                                      \
			h *= 4;                                                        \
		}                                                                      \
		if (2 * h <= n)                                                        \
			for (j = 0; j < h; j += 8) {                                   \
				v8 a, b, p;                                            \
				memcpy(&a, x + j, 32);                                 \
				memcpy(&b, x + j + h, 32);                             \
				p = a + b;                                             \
				b = a - b;                                             \
				memcpy(x + j, &p, 32);                                 \
				memcpy(x + j + h, &b, 32);                             \
			}                                                              \
	}                                                                              \
	/* a block of at most FWHT_L1 floats, whole: from 64 floats on, its first  \
	 * six stages in one pass (in each vector, then radix 8 across 8) */          \
	attr static void name##_l1(float *x, size_t n)                                 \
	{                                                                              \
		size_t i;                                                              \
		if (n < 64) {                                                          \
			name##_vec(x, n);                                              \
			name##_stages(x, n, 8);                                        \
			return;                                                        \
		}                                                                      \
		for (i = 0; i < n; i += 64)                                            \
			name##_r8(x + i, 8, 1);                                        \
		name##_stages(x, n, 64);                                               \
	}                                                                              \
	/* x whole: its blocks of at most `block` floats (FWHT_L2 ones made of    \
	 * FWHT_L1 ones, those done whole), then the stages across them */         \
	attr static void name##_blocks(float *x, size_t n, size_t block)             \
	{                                                                              \
		size_t b, m = n < block ? n : block;                                   \
		for (b = 0; b < n; b += m)                                             \
			if (block == FWHT_L1)                                          \
				name##_l1(x + b, m);                                   \
			else                                                           \
				name##_blocks(x + b, m, FWHT_L1);                      \
		if (m < n)                                                             \
			name##_stages(x, n, m);                                        \
	}                                                                              \
	attr static void name(float *x, size_t n)                                      \
	{                                                                              \
		name##_blocks(x, n, FWHT_L2);                                          \
	}

#if defined(__x86_64__) || defined(__i386__)
FWHT_KERNEL(fwht_avx2, __attribute__((target("avx2,fma"))), 1)
#define HAVE_AVX2_KERNEL 1
#endif
FWHT_KERNEL(fwht_portable, , 0)

static void naive_kernel(float *x, size_t n)
{
	fwht_naive(x, n);
}

static void (*kernel)(float *, size_t);
static const char *kernel_name = "portable";

/* the time of a few transforms of 2^12 floats with k, ns */
static uint64_t time_kernel(void (*k)(float *, size_t))
{
	static float x[1 << 12];
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int r = 0; r < 3; r++)
		k(x, 1 << 12);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ULL + (uint64_t)b.tv_nsec -
	       (uint64_t)a.tv_nsec;
}

/*
 * The fastest kernel here, measured once (FFTW's habit): on hardware the
 * AVX2 one wins by 2x; under qemu's TCG, which emulates the vector
 * instructions, it was the slowest of the three (13.7 ms per 2^16 against
 * 10.5 portable and 11.4 naive, measured in the testbed's VM).
 * RTB_FWHT=avx2|portable|naive forces one.
 */
static void choose(void)
{
	static const struct {
		const char *name;
		void (*k)(float *, size_t);
	} ks[] = {
#ifdef HAVE_AVX2_KERNEL
		{ "avx2", fwht_avx2 },
#endif
		{ "portable", fwht_portable },
		{ "naive", naive_kernel },
	};
	const char *force = getenv("RTB_FWHT");
	uint64_t best = UINT64_MAX;
	size_t i, pick = sizeof(ks) / sizeof(ks[0]) - 2;	/* portable */

#ifdef HAVE_AVX2_KERNEL
	__builtin_cpu_init();
#endif
	for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		uint64_t t;

#ifdef HAVE_AVX2_KERNEL
		if (ks[i].k == fwht_avx2 &&
		    !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
			continue;
#endif
		if (force) {
			if (!strcmp(force, ks[i].name))
				pick = i;
			continue;
		}
		time_kernel(ks[i].k);	/* warm: caches, first-touch */
		t = time_kernel(ks[i].k);
		if (t < best) {
			best = t;
			pick = i;
		}
	}
	kernel_name = ks[pick].name;
	__atomic_store_n(&kernel, ks[pick].k, __ATOMIC_RELEASE);
}

const char *fwht_kernel(void)
{
	if (!__atomic_load_n(&kernel, __ATOMIC_ACQUIRE))
		choose();
	return kernel_name;
}

int fwht(float *x, size_t n)
{
	void (*k)(float *, size_t) = __atomic_load_n(&kernel, __ATOMIC_ACQUIRE);

	if (!pow2(n))
		return -1;
	if (n < 8)
		return fwht_naive(x, n);
	if (!k) {
		choose();
		k = kernel;
	}
	k(x, n);
	return 0;
}
