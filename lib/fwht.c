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
 * One kernel body, compiled twice (AVX2 and portable) through this macro:
 * the code is the same, the target attribute decides the instructions.
 */
#define FWHT_KERNEL(name, attr)                                                        \
	attr static void name(float *x, size_t n)                                      \
	{                                                                              \
		const v8 s1 = { 1, -1, 1, -1, 1, -1, 1, -1 };                         \
		const v8 s2 = { 1, 1, -1, -1, 1, 1, -1, -1 };                         \
		const v8 s4 = { 1, 1, 1, 1, -1, -1, -1, -1 };                         \
		size_t i, j, h;                                                        \
		/* stages 1, 2, 4: inside each vector */                               \
		for (i = 0; i < n; i += 8) {                                           \
			v8 v;                                                          \
			memcpy(&v, x + i, sizeof(v));                                  \
			v = SHUF8(v, 0, 0, 2, 2, 4, 4, 6, 6) + s1 * SHUF8(v, 1, 1, 3, 3, 5, 5, 7, 7); \
			v = SHUF8(v, 0, 1, 0, 1, 4, 5, 4, 5) + s2 * SHUF8(v, 2, 3, 2, 3, 6, 7, 6, 7); \
			v = SHUF8(v, 0, 1, 2, 3, 0, 1, 2, 3) + s4 * SHUF8(v, 4, 5, 6, 7, 4, 5, 6, 7); \
			memcpy(x + i, &v, sizeof(v));                                  \
		}                                                                      \
		/* stages h and 2h in one pass: radix-4 butterflies on 4 vectors */    \
		for (h = 8; 2 * h < n; h *= 4)                                         \
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
		/* an odd stage left over: radix 2 */                                  \
		if (h < n)                                                             \
			for (j = 0; j < h; j += 8) {                                   \
				v8 a, b, p;                                            \
				memcpy(&a, x + j, 32);                                 \
				memcpy(&b, x + j + h, 32);                             \
				p = a + b;                                             \
				b = a - b;                                             \
				memcpy(x + j, &p, 32);                                 \
				memcpy(x + j + h, &b, 32);                             \
			}                                                              \
	}

#if defined(__x86_64__) || defined(__i386__)
FWHT_KERNEL(fwht_avx2, __attribute__((target("avx2"))))
#define HAVE_AVX2_KERNEL 1
#endif
FWHT_KERNEL(fwht_portable, )

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
		if (ks[i].k == fwht_avx2 && !__builtin_cpu_supports("avx2"))
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
