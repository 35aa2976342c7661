// SPDX-License-Identifier: MIT
/*
 * FWHT: the vectorised kernel against the naive radix-2 loop, in the same
 * run, for every size from 2^10 to 2^20 floats: ns per element and the
 * speed-up (medians of rounds in which the two take turns), the smallest
 * speed-up, and 2^16 against the targets.
 */
#include <stdio.h>
#include "bench.h"
#include <stdlib.h>
#include <time.h>
#include "../lib/fwht.h"

/* one batch of transforms: ns per element */
static double batch(int (*f)(float *, size_t), float *x, size_t n)
{
	size_t reps = (1 << 24) / n + 1, r;
	double t0 = bench_now();

	for (r = 0; r < reps; r++)
		f(x, n);
	return (bench_now() - t0) / (double)reps / (double)n * 1e9;
}

#define ROUNDS 9

/*
 * naive and fast batches taking turns (which goes first alternates), so
 * that a noisy neighbour slows both: the medians of each, and the median
 * of the rounds' ratios
 */
static void compare(float *x, size_t n, double *naive, double *fast, double *ratio)
{
	double a[ROUNDS], b[ROUNDS], q[ROUNDS];
	int k;

	batch(fwht, x, n);	/* warm */
	for (k = 0; k < ROUNDS; k++) {
		if (k & 1) {
			b[k] = batch(fwht, x, n);
			a[k] = batch(fwht_naive, x, n);
		} else {
			a[k] = batch(fwht_naive, x, n);
			b[k] = batch(fwht, x, n);
		}
		q[k] = a[k] / b[k];
	}
	qsort(a, ROUNDS, sizeof(double), bench_cmp);
	qsort(b, ROUNDS, sizeof(double), bench_cmp);
	qsort(q, ROUNDS, sizeof(double), bench_cmp);
	*naive = a[ROUNDS / 2];
	*fast = b[ROUNDS / 2];
	*ratio = q[ROUNDS / 2];
}

int main(void)
{
	size_t n, i, at = 0;
	double worst = 1e9, f16 = 0, q16 = 0;
	float *x = aligned_alloc(64, (1 << 20) * sizeof(float));

	for (i = 0; i < (1 << 20); i++)
		x[i] = (float)(i % 7) - 3;	/* the values do not change the cost */
	printf("FWHT, kernel %s: ns per element (medians of %d rounds, naive and fast taking "
	       "turns)\n", fwht_kernel(), ROUNDS);
	printf("%10s %12s %12s %10s\n", "n", "naive", "fast", "speed-up");
	for (n = 1 << 10; n <= 1 << 20; n <<= 1) {
		double a, b, q;

		compare(x, n, &a, &b, &q);
		printf("%10zu %12.3f %12.3f %9.1fx\n", n, a, b, q);
		if (q < worst) {
			worst = q;
			at = n;
		}
		if (n == 1 << 16) {
			f16 = b;
			q16 = q;
		}
	}
	printf("smallest speed-up from 2^10 to 2^20: %.1fx at %zu (target: >= 4x at every size)\n",
	       worst, at);
	printf("2^16: %.3f ns/element, %.1fx the naive loop (targets: <= 0.7 ns, >= 5x)\n", f16,
	       q16);
	free(x);
	return 0;
}
