/* SPDX-License-Identifier: MIT */
/*
 * Log-linear latency histogram (HdrHistogram's layout, fixed parameters).
 *
 * Values are nanoseconds. 0..255 ns are counted exactly; above, every power
 * of two [2^k, 2^(k+1)) is split into 128 equal buckets, so a bucket is at
 * most 1/128 of its lower bound wide: any reported value is within 0.79% of
 * a recorded one. Values up to 2^40 ns (~18 min) are distinguished; larger
 * ones land in the last bucket and are counted in `saturated`. Memory is
 * fixed (4352 x 8 bytes), recording is a clz, a shift and an increment
 * (no allocation, no lock: one histogram per recording thread), and two
 * histograms merge by adding counts. min and max are kept exactly.
 *
 * Percentiles walk the counts: the value at rank ceil(q * count) is the
 * upper edge of its bucket, clamped to [min, max], i.e. never optimistic.
 */
#ifndef RTB_HIST_H
#define RTB_HIST_H

#include <stdint.h>
#include <jansson.h>

#define HIST_SUB_BITS 7			/* 128 sub-buckets per octave */
#define HIST_LINEAR (1u << (HIST_SUB_BITS + 1)) /* 256 exact values */
#define HIST_MAX_BITS 40
#define HIST_NBUCKETS (HIST_LINEAR + (HIST_MAX_BITS - HIST_SUB_BITS - 1) * (1u << HIST_SUB_BITS))

struct hist {
	uint64_t count;
	uint64_t sum;		/* ns; wraps after ~584 years of samples */
	uint64_t min;
	uint64_t max;
	uint64_t saturated;
	uint64_t counts[HIST_NBUCKETS];
};

void hist_init(struct hist *h);

static inline unsigned int hist_index(uint64_t v)
{
	unsigned int msb, shift;

	if (v < HIST_LINEAR)
		return (unsigned int)v;
	msb = 63 - (unsigned int)__builtin_clzll(v);
	if (msb >= HIST_MAX_BITS)
		return HIST_NBUCKETS - 1;
	shift = msb - HIST_SUB_BITS;
	return HIST_LINEAR + (shift - 1) * (1u << HIST_SUB_BITS) +
	       (unsigned int)((v >> shift) - (1u << HIST_SUB_BITS));
}

static inline void hist_record(struct hist *h, uint64_t v)
{
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	if (v >> HIST_MAX_BITS)
		h->saturated++;
	h->counts[hist_index(v)]++;
}

/* lowest and highest value that map to bucket i */
uint64_t hist_bucket_lo(unsigned int i);
uint64_t hist_bucket_hi(unsigned int i);

void hist_merge(struct hist *dst, const struct hist *src);
/* q in [0, 1]; 0 for an empty histogram */
uint64_t hist_quantile(const struct hist *h, double q);
double hist_mean(const struct hist *h);
double hist_stdev(const struct hist *h);

/* {"count":..,"sum_ns":..,"min_ns":..,"max_ns":..,"saturated":..,"sub_bits":7,
 *  "buckets":[[index,count],...]} (sparse) */
json_t *hist_to_json(const struct hist *h);
/* the one summary shape, units in the names, everywhere a histogram is
 * summarised: {"count", "min_ns", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns",
 * "p99_99_ns", "max_ns", "mean_ns", "stdev_ns"} */
json_t *hist_summary_json(const struct hist *h);
/* strict: rejects wrong layout, bad indices, counts that do not add up */
int hist_from_json(struct hist *h, const json_t *j);

#endif
