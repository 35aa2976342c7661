// SPDX-License-Identifier: MIT
/*
 * Cost of hist_record() in the hot path: ns per call over 200M recorded
 * latency-like values, against the same loop without the call, in the same
 * run (median of 5). The values come from a precomputed table so the
 * generator's cost is in both loops.
 */
#include <stdio.h>
#include "bench.h"
#include <stdlib.h>
#include <time.h>
#include "../lib/hist.h"

#define N (1 << 16)
#define REPS 3000

int main(void)
{
	static uint64_t v[N];
	static struct hist h;
	volatile uint64_t sink = 0;
	double base[5], rec[5], per[5];
	uint64_t s = 88172645463325252ULL;
	int i, k, r;

	for (i = 0; i < N; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		v[i] = 20000 + s % (1 << (8 + s % 16));	/* 20 us plus a long tail */
	}
	hist_init(&h);
	for (r = 0; r < 5; r++) {
		double t0 = bench_now();

		for (k = 0; k < REPS; k++)
			for (i = 0; i < N; i++)
				sink += v[i];
		base[r] = bench_now() - t0;
		t0 = bench_now();
		for (k = 0; k < REPS; k++)
			for (i = 0; i < N; i++)
				hist_record(&h, v[i]);
		rec[r] = bench_now() - t0;
		per[r] = (rec[r] - base[r]) / ((double)REPS * N) * 1e9;
	}
	qsort(per, 5, sizeof(double), bench_cmp);
	qsort(rec, 5, sizeof(double), bench_cmp);
	printf("hist_record: %.2f ns per call (%.2f ns with the loop; %llu samples, p50 %.1f us)\n",
	       per[2], rec[2] / ((double)REPS * N) * 1e9, (unsigned long long)h.count,
	       hist_quantile(&h, 0.5) / 1e3);
	return sink == 42;
}
