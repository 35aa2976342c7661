// SPDX-License-Identifier: MIT
/* lib/boot.c: the Beta shortcut against brute-force resampling, the
 * intervals' coverage against a known truth, and bad arguments */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "expect.h"
#include "../../lib/boot.h"

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double unif(uint64_t *s)
{
	return ((double)(rnd(s) >> 11) + 0.5) / 9007199254740992.0;
}

/* n exponential step times of the given mean, ns */
static void fill_exp(struct hist *h, int n, double mean, uint64_t *s)
{
	hist_init(h);
	for (int i = 0; i < n; i++)
		hist_record(h, (uint64_t)(-log(unif(s)) * mean) + 1000);
}

/*
 * The interval of one arm against a copy of itself (b = a, a point mass at
 * one value for the reference): the Beta draw must give the same spread of
 * resampled quantiles as drawing n samples with replacement and sorting.
 * Compared: the 2.5% and 97.5% points of the resampled p90 of 50 samples.
 */
static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void test_against_brute_force(void)
{
	enum { N = 50, R = 20000 };
	struct hist *a = malloc(sizeof(*a)), *one = malloc(sizeof(*one));
	uint64_t v[N], s = 7, pick[N];
	double *q = malloc(R * sizeof(*q));
	struct boot_cmp c;
	int i, r, rank = (int)ceil(0.9 * N);

	hist_init(a);
	for (i = 0; i < N; i++) {
		v[i] = 1000000 + (uint64_t)i * 100000;	/* 1.0 .. 5.9 ms, one a bucket */
		hist_record(a, v[i]);
	}
	hist_init(one);
	hist_record(one, 1000000);
	EXPECT(boot_compare(a, one, 0.9, 0.95, R, 42, &c) == 0);
	/* brute force: the rank-th smallest of N draws with replacement */
	for (r = 0; r < R; r++) {
		int cnt[N] = { 0 }, k = 0;

		for (i = 0; i < N; i++)
			cnt[rnd(&s) % N]++;
		for (i = 0; i < N; i++)
			while (cnt[i]--)
				pick[k++] = i;
		q[r] = (double)v[pick[rank - 1]];
	}
	qsort(q, R, sizeof(*q), cmp_d);
	/* the difference's interval is the quantile's minus 1 ms; bucket values
	 * are upper edges (<0.8% above), so compare within 1% */
	{
		double lo = q[(int)floor(0.025 * (R - 1))], hi = q[(int)ceil(0.975 * (R - 1))];
		double blo = c.diff_lo + (double)hist_quantile(one, 0.9);
		double bhi = c.diff_hi + (double)hist_quantile(one, 0.9);

		fprintf(stderr, "p90 of 50: brute [%.0f, %.0f], beta [%.0f, %.0f]\n", lo, hi, blo, bhi);
		EXPECT(fabs(blo - lo) <= 0.01 * lo + 100000 && fabs(bhi - hi) <= 0.01 * hi + 100000);
		/* and the interval is not a point: 50 samples do not pin a p90 */
		EXPECT(bhi - blo >= 300000);
	}
	free(a);
	free(one);
	free(q);
}

/*
 * Coverage: arm a exponential with twice arm b's mean, so the true p99
 * ratio is 2 and the true difference is the mean times ln 100. Over 1000
 * experiments of 300 samples an arm (the side-by-side test's count), the
 * 95% intervals must contain the truth about 950 times: a binomial 1000 at
 * 0.95 has a standard deviation of 6.9, so [910, 985] is more than four of
 * them either way (here: 966 for the ratio, 946 for the difference). Too
 * many covering would mean intervals too wide to be worth printing, too
 * few a claim more certain than the data.
 */
static void test_coverage(void)
{
	struct hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	double mean = 20e6, truth_r = 2, truth_d = 2 * mean * log(100) - mean * log(100);
	uint64_t s = 99;
	int cov_r = 0, cov_d = 0, t, T = 1000;
	double width = 0;

	for (t = 0; t < T; t++) {
		struct boot_cmp c;

		fill_exp(a, 300, 2 * mean, &s);
		fill_exp(b, 300, mean, &s);
		if (boot_compare(a, b, 0.99, 0.95, 2000, (uint64_t)t, &c)) {
			EXPECT(0);
			break;
		}
		cov_r += c.ratio_lo <= truth_r && truth_r <= c.ratio_hi;
		cov_d += c.diff_lo <= truth_d && truth_d <= c.diff_hi;
		width += (c.ratio_hi - c.ratio_lo) / T;
		EXPECT(c.ratio_lo <= c.ratio && c.ratio <= c.ratio_hi * 1.0001);
	}
	fprintf(stderr, "coverage of the true p99 ratio %d/%d, difference %d/%d, mean width %.2f\n",
		cov_r, T, cov_d, T, width);
	EXPECT(cov_r >= 910 && cov_r <= 985);
	EXPECT(cov_d >= 910 && cov_d <= 985);
	EXPECT(width > 0.2 && width < 3);
	free(a);
	free(b);
}

/*
 * One arm's own quantile: the interval of the p50 and p99 of 300
 * exponential step times must hold the true quantile as often as the
 * binomial says it does (quantile_ci_coverage, >= 95%), within 4 standard
 * errors of 1000 trials; and hold the estimate. The percentile bootstrap
 * fails this at p99 (826/1000 where 950 are claimed).
 */
static void test_quantile_coverage(void)
{
	struct hist *a = malloc(sizeof(*a)), *e = malloc(sizeof(*e));
	static const double qs[2] = { 0.5, 0.99 };
	double mean = 20e6, v, lo, hi;
	uint64_t s = 1234;
	int cov[2] = { 0, 0 }, opened = 0, t, k, T = 1000, open_hi;

	for (t = 0; t < T; t++) {
		fill_exp(a, 300, mean, &s);
		for (k = 0; k < 2; k++) {
			double truth = -log(1 - qs[k]) * mean + 1000;

			if (quantile_ci(a, qs[k], 0.95, &v, &lo, &hi, &open_hi)) {
				EXPECT(0);
				break;
			}
			/* the bucket's rounding (< 1%) is the estimate's own */
			cov[k] += lo <= truth * 1.008 && (open_hi || truth <= hi * 1.008);
			opened += open_hi;
			EXPECT(lo <= v && v <= hi);
		}
	}
	for (k = 0; k < 2; k++) {
		double c = quantile_ci_coverage(300, qs[k], 0.95), se = sqrt(c * (1 - c) / T);

		fprintf(stderr, "coverage of the true p%g: %d/%d, the binomial's %.4f\n",
			qs[k] * 100, cov[k], T, c);
		EXPECT(c >= 0.95);
		EXPECT(fabs(cov[k] / (double)T - c) <= 4 * se + 0.002);
	}
	/* 300 samples: p99's upper end is past the largest (P(B >= 300) > 2.5%) */
	EXPECT(opened == T);
	EXPECT(quantile_ci_coverage(100000, 0.99, 0.95) < 0.96);
	hist_init(e);
	EXPECT(quantile_ci(e, 0.5, 0.95, &v, &lo, &hi, &open_hi) == -EINVAL);
	EXPECT(quantile_ci(a, 0, 0.95, &v, &lo, &hi, &open_hi) == -EINVAL);
	EXPECT(quantile_ci(a, 0.5, 1, &v, &lo, &hi, &open_hi) == -EINVAL);
	hist_record(e, 5000000);
	EXPECT(quantile_ci(e, 0.5, 0.95, &v, &lo, &hi, &open_hi) == 0 && v == lo && v == hi &&
	       open_hi);
	free(a);
	free(e);
}

static void test_bad_args(void)
{
	struct hist *a = malloc(sizeof(*a)), *e = malloc(sizeof(*e));
	struct boot_cmp c;
	uint64_t s = 3;

	fill_exp(a, 100, 1e6, &s);
	hist_init(e);
	EXPECT(boot_compare(a, e, 0.99, 0.95, 100, 1, &c) == -EINVAL);
	EXPECT(boot_compare(e, a, 0.99, 0.95, 100, 1, &c) == -EINVAL);
	EXPECT(boot_compare(a, a, 1.0, 0.95, 100, 1, &c) == -EINVAL);
	EXPECT(boot_compare(a, a, 0.5, 0, 100, 1, &c) == -EINVAL);
	EXPECT(boot_compare(a, a, 0.5, 0.95, 1, 1, &c) == -EINVAL);
	/* one sample an arm: a point, interval and all */
	hist_init(e);
	hist_record(e, 5000000);
	EXPECT(boot_compare(e, e, 0.99, 0.95, 100, 1, &c) == 0 && c.ratio == 1 &&
	       c.ratio_lo == 1 && c.ratio_hi == 1 && c.diff_lo == 0 && c.diff_hi == 0);
	free(a);
	free(e);
}

int main(void)
{
	test_against_brute_force();
	test_coverage();
	test_quantile_coverage();
	test_bad_args();
	return expect_done("test_boot");
}
