// SPDX-License-Identifier: MIT
/*
 * FWHT: the vectorised kernel against the naive radix-2 loop, in the same
 * run, for 2^10 .. 2^20 floats: ns per element (median of 7 timed batches)
 * and the speed-up.
 */
#include <stdio.h>
#include "bench.h"
#include <stdlib.h>
#include <time.h>
#include "../lib/fwht.h"

static double per_elem(int (*f)(float *, size_t), float *x, size_t n)
{
	double t[7];
	size_t reps = (1 << 24) / n + 1, r, k;

	for (k = 0; k < 7; k++) {
		double t0 = bench_now();

		for (r = 0; r < reps; r++)
			f(x, n);
		t[k] = (bench_now() - t0) / (double)reps / (double)n * 1e9;
	}
	qsort(t, 7, sizeof(double), bench_cmp);
	return t[3];
}

int main(void)
{
	size_t n, i;
	float *x = aligned_alloc(64, (1 << 20) * sizeof(float));

	for (i = 0; i < (1 << 20); i++)
		x[i] = (float)(i % 7) - 3;	/* the values do not change the cost */
	printf("FWHT, kernel %s: ns per element (median of 7)\n", fwht_kernel());
	printf("%10s %12s %12s %10s\n", "n", "naive", "fast", "speed-up");
	for (n = 1 << 10; n <= 1 << 20; n <<= 2) {
		double a = per_elem(fwht_naive, x, n), b = per_elem(fwht, x, n);

		printf("%10zu %12.3f %12.3f %9.1fx\n", n, a, b, a / b);
	}
	{
		double a = per_elem(fwht_naive, x, 1 << 16), b = per_elem(fwht, x, 1 << 16);

		printf("2^16: %.3f ns/element, %.1fx the naive loop (targets: <= 0.7 ns, >= 5x)\n", b,
		       a / b);
	}
	free(x);
	return 0;
}
