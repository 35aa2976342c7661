/* SPDX-License-Identifier: MIT */
/*
 * A percentile of one arm against another's, with a confidence interval:
 * the ratio a/b and the difference a - b of quantile q of two latency
 * histograms, each with a percentile-bootstrap interval over resamples of
 * the samples (the two arms resampled independently, every sample with its
 * bucket's value, as hist_quantile reports it).
 *
 * A resample's q-quantile is the order statistic of rank r = ceil(q n) of
 * n draws with replacement; the r-th smallest of n draws from the sorted
 * samples is the sample at floor(n U), U the r-th smallest of n uniforms,
 * which is Beta(r, n + 1 - r). So one resample costs one Beta variate
 * (two gammas), whatever n: exact for the bootstrap, not an approximation,
 * and as cheap for a million operations as for 300 steps.
 */
#ifndef RTB_BOOT_H
#define RTB_BOOT_H

#include <stddef.h>
#include <stdint.h>
#include "hist.h"

struct boot_cmp {
	double a, b;		/* the two quantiles, ns (hist_quantile's) */
	double ratio, ratio_lo, ratio_hi;	/* a / b and its interval */
	double diff, diff_lo, diff_hi;		/* a - b, ns */
};

#define BOOT_RESAMPLES 4000

/* q in (0, 1), conf in (0, 1) (0.95: the 2.5% and 97.5% points of the
 * resampled figures); seed makes the interval reproducible. -EINVAL for an
 * empty histogram or arguments out of range, -ENOMEM */
int boot_compare(const struct hist *a, const struct hist *b, double q, double conf,
		 int resamples, uint64_t seed, struct boot_cmp *out);

/*
 * The q-quantile of one histogram (hist_quantile's) into *v and its
 * distribution-free conf interval into lo, hi: the order statistics
 * X(l) <= X(u) with P(l <= B < u) >= conf for B ~ Binomial(n, q), the
 * number of samples below the true quantile (exact and conservative for
 * any continuous distribution; the percentile bootstrap undercovers the
 * tails: 83% for a p99 of 300 samples where it claims 95%). Where u would
 * pass the n-th sample the upper end is unbounded: *hi is the largest
 * sample and *open_hi is set. -EINVAL for an empty histogram or arguments
 * out of range, -ENOMEM
 */
int quantile_ci(const struct hist *h, double q, double conf, double *v, double *lo, double *hi,
		int *open_hi);
/* the probability that quantile_ci's interval holds the true quantile of a
 * continuous distribution, for n samples (what its tests check against) */
double quantile_ci_coverage(uint64_t n, double q, double conf);

/* Student's t distribution's 97.5% point for df degrees of freedom (a 95%
 * two-sided interval): exact to 3 decimals for df <= 30, then within 0.01 */
double boot_t975(size_t df);
/* the mean of v[0..n) into *m and its 95% t-interval into lo, hi (n < 2:
 * both the mean) */
void boot_mean_t95(const double *v, size_t n, double *m, double *lo, double *hi);

#endif
