// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <string.h>
#include "hist.h"

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t hist_bucket_lo(unsigned int i)
{
	unsigned int shift, sub;

	if (i < HIST_LINEAR)
		return i;
	shift = (i - HIST_LINEAR) / (1u << HIST_SUB_BITS) + 1;
	sub = (i - HIST_LINEAR) % (1u << HIST_SUB_BITS) + (1u << HIST_SUB_BITS);
	return (uint64_t)sub << shift;
}

uint64_t hist_bucket_hi(unsigned int i)
{
	if (i == HIST_NBUCKETS - 1)
		return UINT64_MAX;
	return hist_bucket_lo(i + 1) - 1;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	unsigned int i;

	if (!src->count)
		return;
	dst->count += src->count;
	dst->sum += src->sum;
	dst->saturated += src->saturated;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	for (i = 0; i < HIST_NBUCKETS; i++)
		dst->counts[i] += src->counts[i];
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0, v;
	unsigned int i;

	if (!h->count)
		return 0;
	if (q <= 0)
		return h->min;
	if (q >= 1)
		return h->max;
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < HIST_NBUCKETS; i++) {
		seen += h->counts[i];
		if (seen >= rank)
			break;
	}
	if (i == HIST_NBUCKETS)
		return h->max;
	v = hist_bucket_hi(i);
	if (v > h->max)
		v = h->max;
	if (v < h->min)
		v = h->min;
	return v;
}

double hist_mean(const struct hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0;
}

/* from bucket midpoints: exact enough for a spread figure (<1%) */
double hist_stdev(const struct hist *h)
{
	double mean = hist_mean(h), acc = 0;
	unsigned int i;

	if (h->count < 2)
		return 0;
	for (i = 0; i < HIST_NBUCKETS; i++) {
		double mid, d;

		if (!h->counts[i])
			continue;
		mid = ((double)hist_bucket_lo(i) + (double)(i == HIST_NBUCKETS - 1 ?
							    hist_bucket_lo(i) : hist_bucket_hi(i))) / 2;
		d = mid - mean;
		acc += d * d * (double)h->counts[i];
	}
	return sqrt(acc / (double)(h->count - 1));
}

json_t *hist_to_json(const struct hist *h)
{
	json_t *b = json_array();
	unsigned int i;

	for (i = 0; b && i < HIST_NBUCKETS; i++) {
		if (h->counts[i] &&
		    json_array_append_new(b, json_pack("[II]", (json_int_t)i, (json_int_t)h->counts[i]))) {
			json_decref(b);
			return NULL;
		}
	}
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:i,s:o}", "count", (json_int_t)h->count, "sum_ns",
			 (json_int_t)h->sum, "min_ns", (json_int_t)(h->count ? h->min : 0), "max_ns",
			 (json_int_t)h->max, "saturated", (json_int_t)h->saturated, "sub_bits",
			 HIST_SUB_BITS, "buckets", b);
}

int hist_from_json(struct hist *h, const json_t *j)
{
	json_int_t count, sum, min, max, sat;
	json_t *b, *e;
	int sub_bits;
	uint64_t total = 0;
	size_t i;

	hist_init(h);
	if (json_unpack((json_t *)j, "{s:I,s:I,s:I,s:I,s:I,s:i,s:o}", "count", &count, "sum_ns", &sum,
			"min_ns", &min, "max_ns", &max, "saturated", &sat, "sub_bits", &sub_bits,
			"buckets", &b))
		return -EINVAL;
	if (sub_bits != HIST_SUB_BITS || !json_is_array(b) || count < 0 || sum < 0 || min < 0 ||
	    max < 0 || sat < 0 || min > max)
		return -EINVAL;
	json_array_foreach(b, i, e) {
		json_int_t idx, c;

		if (json_unpack(e, "[II]", &idx, &c) || idx < 0 || idx >= HIST_NBUCKETS || c < 0)
			return -EINVAL;
		h->counts[idx] += (uint64_t)c;
		total += (uint64_t)c;
	}
	if (total != (uint64_t)count)
		return -EINVAL;
	h->count = (uint64_t)count;
	h->sum = (uint64_t)sum;
	h->min = count ? (uint64_t)min : UINT64_MAX;
	h->max = (uint64_t)max;
	h->saturated = (uint64_t)sat;
	return 0;
}

json_t *hist_summary_json(const struct hist *h)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f}", "count", (json_int_t)h->count,
			 "min_ns", (json_int_t)(h->count ? h->min : 0), "p50_ns",
			 (json_int_t)hist_quantile(h, 0.5), "p90_ns", (json_int_t)hist_quantile(h, 0.9),
			 "p99_ns", (json_int_t)hist_quantile(h, 0.99), "p99_9_ns",
			 (json_int_t)hist_quantile(h, 0.999), "p99_99_ns",
			 (json_int_t)hist_quantile(h, 0.9999), "max_ns", (json_int_t)h->max, "mean_ns",
			 hist_mean(h), "stdev_ns", hist_stdev(h));
}
