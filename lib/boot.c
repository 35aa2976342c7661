// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "boot.h"
#include "mix.h"

struct rng {
	uint64_t s;
};

/* splitmix64: a counter through the finalizer */
static uint64_t next(struct rng *g)
{
	return rtb_mix64(g->s += 0x9e3779b97f4a7c15ULL);
}

/* uniform in (0, 1): 53 bits, never 0 */
static double unif(struct rng *g)
{
	return ((double)(next(g) >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(struct rng *g)
{
	return sqrt(-2 * log(unif(g))) * cos(2 * M_PI * unif(g));
}

/* Gamma(k, 1) for k >= 1: Marsaglia and Tsang's squeeze */
static double gamma1(struct rng *g, double k)
{
	double d = k - 1.0 / 3, c = 1 / sqrt(9 * d), x, v, u;

	for (;;) {
		do {
			x = normal(g);
			v = 1 + c * x;
		} while (v <= 0);
		v = v * v * v;
		u = unif(g);
		if (u < 1 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1 - v + log(v)))
			return d * v;
	}
}

/* a histogram's samples in order, as the cumulative counts of its
 * non-empty buckets and each one's value */
struct sorted {
	uint64_t *cum;
	double *val;
	size_t nb;
	uint64_t n, rank;	/* samples; the quantile's rank, 1-based */
};

static int sorted_of(const struct hist *h, double q, struct sorted *s)
{
	uint64_t seen = 0, v;
	unsigned int i;
	size_t k = 0;

	for (i = 0; i < HIST_NBUCKETS; i++)
		k += h->counts[i] != 0;
	s->cum = malloc(k * sizeof(*s->cum));
	s->val = malloc(k * sizeof(*s->val));
	if (!s->cum || !s->val)
		return -ENOMEM;
	for (i = 0, k = 0; i < HIST_NBUCKETS; i++) {
		if (!h->counts[i])
			continue;
		seen += h->counts[i];
		v = hist_bucket_hi(i);
		v = v > h->max ? h->max : v < h->min ? h->min : v;
		s->cum[k] = seen;
		s->val[k++] = (double)v;
	}
	s->nb = k;
	s->n = h->count;
	s->rank = (uint64_t)ceil(q * (double)h->count);
	if (s->rank < 1)
		s->rank = 1;
	return 0;
}

/* the sample at 0-based position j of the sorted samples */
static double at(const struct sorted *s, uint64_t j)
{
	size_t lo = 0, hi = s->nb - 1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->cum[mid] > j)
			hi = mid;
		else
			lo = mid + 1;
	}
	return s->val[lo];
}

/* one resample's quantile */
static double resample(const struct sorted *s, struct rng *g)
{
	double x = gamma1(g, (double)s->rank), y = gamma1(g, (double)(s->n + 1 - s->rank));
	uint64_t j = (uint64_t)(x / (x + y) * (double)s->n);

	return at(s, j < s->n ? j : s->n - 1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the conf interval's ends of v[n], sorted in place */
static void ends(double *v, int n, double conf, double *lo, double *hi)
{
	double t = (1 - conf) / 2;
	int i = (int)floor(t * (n - 1)), j = (int)ceil((1 - t) * (n - 1));

	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	*lo = v[i];
	*hi = v[j];
}

int boot_compare(const struct hist *a, const struct hist *b, double q, double conf,
		 int resamples, uint64_t seed, struct boot_cmp *out)
{
	struct sorted sa = { 0 }, sb = { 0 };
	struct rng g = { seed };
	double *rat = NULL, *dif = NULL;
	int i, ret = -EINVAL;

	if (!a->count || !b->count || !(q > 0 && q < 1) || !(conf > 0 && conf < 1) ||
	    resamples < 2)
		return -EINVAL;
	ret = -ENOMEM;
	rat = malloc((size_t)resamples * sizeof(*rat));
	dif = malloc((size_t)resamples * sizeof(*dif));
	if (!rat || !dif || sorted_of(a, q, &sa) || sorted_of(b, q, &sb))
		goto out;
	out->a = (double)hist_quantile(a, q);
	out->b = (double)hist_quantile(b, q);
	out->ratio = out->b > 0 ? out->a / out->b : 0;
	out->diff = out->a - out->b;
	for (i = 0; i < resamples; i++) {
		double x = resample(&sa, &g), y = resample(&sb, &g);

		rat[i] = y > 0 ? x / y : 0;
		dif[i] = x - y;
	}
	ends(rat, resamples, conf, &out->ratio_lo, &out->ratio_hi);
	ends(dif, resamples, conf, &out->diff_lo, &out->diff_hi);
	ret = 0;
out:
	free(sa.cum);
	free(sa.val);
	free(sb.cum);
	free(sb.val);
	free(rat);
	free(dif);
	return ret;
}

/* log P(B = k), B ~ Binomial(n, q) */
static double binom_lpmf(uint64_t n, double q, uint64_t k)
{
	return lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) +
	       (double)k * log(q) + (double)(n - k) * log1p(-q);
}

/* the 1-based ranks l <= u of quantile_ci for n samples (u may be n + 1:
 * unbounded), and the probability P(l <= B < u) they give */
static double ci_ranks(uint64_t n, double q, double conf, uint64_t *l, uint64_t *u)
{
	double a = (1 - conf) / 2, sd = sqrt((double)n * q * (1 - q)), c = 0, in = 0;
	double mid = (double)n * q;
	uint64_t k0 = mid - 14 * sd - 2 > 0 ? (uint64_t)(mid - 14 * sd - 2) : 0;
	uint64_t k1 = mid + 14 * sd + 2 < (double)n ? (uint64_t)(mid + 14 * sd + 2) : n, k;

	/* l: the largest with P(B < l) <= a; u: the smallest with P(B >= u) <= a
	 * (terms beyond 14 sd are below 1e-40) */
	*l = 0;
	*u = n + 1;
	for (k = k0; k <= k1; k++) {
		double p = exp(binom_lpmf(n, q, k));

		if (c + p <= a)
			*l = k + 1;	/* P(B < k + 1) = c + p */
		c += p;
		if (*u == n + 1 && 1 - c <= a)
			*u = k + 1;	/* P(B >= k + 1) = 1 - c */
	}
	if (*l < 1)
		*l = 1;
	for (k = *l; k < *u && k <= n; k++)
		in += exp(binom_lpmf(n, q, k));
	return in;
}

int quantile_ci(const struct hist *h, double q, double conf, double *v, double *lo, double *hi,
		int *open_hi)
{
	struct sorted s = { 0 };
	uint64_t l, u;
	int ret = -EINVAL;

	if (!h->count || !(q > 0 && q < 1) || !(conf > 0 && conf < 1))
		return -EINVAL;
	ret = -ENOMEM;
	if (sorted_of(h, q, &s))
		goto out;
	ci_ranks(h->count, q, conf, &l, &u);
	*v = (double)hist_quantile(h, q);
	*lo = at(&s, l - 1);
	*open_hi = u > h->count;
	*hi = at(&s, (*open_hi ? h->count : u) - 1);
	/* the estimate's own rounding (the bucket's value against the order
	 * statistic's) must not put it outside */
	*lo = *lo < *v ? *lo : *v;
	*hi = *hi > *v ? *hi : *v;
	ret = 0;
out:
	free(s.cum);
	free(s.val);
	return ret;
}

double quantile_ci_coverage(uint64_t n, double q, double conf)
{
	uint64_t l, u;

	return n ? ci_ranks(n, q, conf, &l, &u) : 0;
}

double boot_t975(size_t df)
{
	static const double t[] = { 0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
				    2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110,
				    2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
				    2.052, 2.048, 2.045, 2.042 };

	if (!df)
		return 0;
	return df < sizeof(t) / sizeof(t[0]) ? t[df] : 1.96 + 2.4 / (double)df;
}

void boot_mean_t95(const double *v, size_t n, double *m, double *lo, double *hi)
{
	double sum = 0, ss = 0, h = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += v[i];
	*m = n ? sum / (double)n : 0;
	for (i = 0; i < n; i++)
		ss += (v[i] - *m) * (v[i] - *m);
	if (n > 1)
		h = boot_t975(n - 1) * sqrt(ss / (double)(n - 1) / (double)n);
	*lo = *m - h;
	*hi = *m + h;
}
