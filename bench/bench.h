/* SPDX-License-Identifier: MIT */
/* Shared bits of the micro-benchmarks: a monotonic clock and medians. */
#ifndef RTB_BENCH_H
#define RTB_BENCH_H

#include <stdlib.h>
#include "../lib/clock.h"

static inline double bench_now(void)
{
	return rtb_now_s();
}

static inline int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* sorts v */
static inline double bench_median(double *v, size_t n)
{
	qsort(v, n, sizeof(double), bench_cmp);
	return v[n / 2];
}

#endif
