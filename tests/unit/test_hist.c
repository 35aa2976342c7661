// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "expect.h"
#include "../../lib/hist.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* every bucket boundary maps back to its bucket, buckets tile the range */
static void test_layout(void)
{
	unsigned int i;
	int bad = 0;

	for (i = 0; i + 1 < HIST_NBUCKETS; i++) {
		if (hist_index(hist_bucket_lo(i)) != i || hist_index(hist_bucket_hi(i)) != i)
			bad++;
		if (hist_bucket_hi(i) + 1 != hist_bucket_lo(i + 1))
			bad++;
		/* the width bound that the header promises: < 1/128 of the low edge */
		if (i >= HIST_LINEAR &&
		    (double)(hist_bucket_hi(i) - hist_bucket_lo(i) + 1) > hist_bucket_lo(i) / 128.0)
			bad++;
	}
	EXPECT(bad == 0);
	EXPECT_EQ_U(hist_index(0), 0);
	EXPECT_EQ_U(hist_index(255), 255);
	EXPECT_EQ_U(hist_index(256), 256);
	EXPECT_EQ_U(hist_index(UINT64_MAX), HIST_NBUCKETS - 1);
}

/* quantiles against the exact sorted samples: within 0.8%, never below */
static void test_quantiles(void)
{
	enum { N = 200000 };
	static const double qs[] = { 0.01, 0.5, 0.9, 0.99, 0.999, 0.9999 };
	uint64_t *v = malloc(N * sizeof(*v)), seed = 88172645463325252ULL;
	struct hist *h = malloc(sizeof(*h));
	size_t i, k;
	int bad = 0;

	hist_init(h);
	for (i = 0; i < N; i++) {
		/* log-uniform from 100 ns to ~100 ms: latency-like spread */
		uint64_t e = rnd(&seed) % 20;

		v[i] = 100 + (rnd(&seed) % (1ULL << (e + 1))) * (1 + e * 50);
		hist_record(h, v[i]);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	EXPECT_EQ_U(h->count, N);
	EXPECT_EQ_U(h->min, v[0]);
	EXPECT_EQ_U(h->max, v[N - 1]);
	for (k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		size_t rank = (size_t)(qs[k] * N + 0.999999);
		uint64_t exact = v[rank - 1], got = hist_quantile(h, qs[k]);

		if (got < exact || (double)got > (double)exact * 1.008 + 1) {
			fprintf(stderr, "q=%g exact=%llu got=%llu\n", qs[k], (unsigned long long)exact,
				(unsigned long long)got);
			bad++;
		}
	}
	EXPECT(bad == 0);
	EXPECT_EQ_U(hist_quantile(h, 0), v[0]);
	EXPECT_EQ_U(hist_quantile(h, 1), v[N - 1]);
	free(v);
	free(h);
}

static void test_merge_json(void)
{
	struct hist *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)), *all = malloc(sizeof(*all));
	struct hist *back = malloc(sizeof(*back));
	uint64_t seed = 12345, x;
	json_t *j, *bad;
	int i;

	hist_init(a);
	hist_init(b);
	hist_init(all);
	for (i = 0; i < 10000; i++) {
		x = rnd(&seed) % 5000000;
		hist_record(i & 1 ? a : b, x);
		hist_record(all, x);
	}
	hist_record(a, 1ULL << 45);	/* saturates */
	hist_record(all, 1ULL << 45);
	hist_merge(a, b);
	EXPECT(memcmp(a, all, sizeof(*a)) == 0);
	EXPECT_EQ_U(a->saturated, 1);

	j = hist_to_json(a);
	EXPECT(j != NULL);
	EXPECT(hist_from_json(back, j) == 0);
	EXPECT(memcmp(back, a, sizeof(*a)) == 0);

	/* a count that does not add up is rejected */
	bad = json_deep_copy(j);
	json_object_set_new(bad, "count", json_integer(3));
	EXPECT(hist_from_json(back, bad) != 0);
	json_decref(bad);
	/* an index past the end is rejected */
	bad = json_deep_copy(j);
	json_array_append_new(json_object_get(bad, "buckets"), json_pack("[ii]", 99999, 1));
	EXPECT(hist_from_json(back, bad) != 0);
	json_decref(bad);
	/* another layout is rejected */
	bad = json_deep_copy(j);
	json_object_set_new(bad, "sub_bits", json_integer(5));
	EXPECT(hist_from_json(back, bad) != 0);
	json_decref(bad);
	json_decref(j);

	hist_init(b);
	EXPECT_EQ_U(hist_quantile(b, 0.5), 0);
	j = hist_to_json(b);
	EXPECT(hist_from_json(back, j) == 0 && back->count == 0 && back->min == UINT64_MAX);
	json_decref(j);
	free(a);
	free(b);
	free(all);
	free(back);
}

int main(void)
{
	test_layout();
	test_quantiles();
	test_merge_json();
	return expect_done("test_hist");
}
