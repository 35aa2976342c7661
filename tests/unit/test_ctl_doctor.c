// SPDX-License-Identifier: MIT
/*
 * rdmactl doctor's arithmetic (ctl/doctor/plan.c): the rounds of pairs,
 * robust scores, and the fleet's verdict on figures the test makes up
 * (a unit test: the measured fleet is the doctor suite's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "expect.h"
#include "../../ctl/doctor/doctor.h"

/* every round a matching (no node twice), no pair twice, each node in k
 * pairs (n even) */
static void check_plan(int n, int k)
{
	struct dr_pair p[4096];
	static char seen[128][128];
	int cnt = dr_plan(n, k, p, 4096), deg[128] = { 0 }, bad = 0, r, i;
	int rounds, all_rounds;
	long pairs, all_pairs;

	memset(seen, 0, sizeof(seen));
	dr_cost(n, k, &rounds, &pairs, &all_rounds, &all_pairs);
	for (r = 0; r < rounds; r++) {
		char in[128] = { 0 };

		for (i = 0; i < cnt; i++)
			if (p[i].round == r) {
				bad += in[p[i].a]++ || in[p[i].b]++ || p[i].a == p[i].b;
				bad += seen[p[i].a][p[i].b]++ != 0;
				deg[p[i].a]++;
				deg[p[i].b]++;
			}
	}
	for (i = 0; i < n && !(n & 1); i++)
		bad += deg[i] != rounds;
	EXPECT_MSG(bad == 0 && cnt == pairs, "n %d k %d: %d pairs (cost says %ld), %d bad", n, k, cnt,
		   pairs, bad);
}

static void test_plan(void)
{
	int rounds, all_rounds;
	long pairs, all_pairs;

	check_plan(8, 3);
	check_plan(8, 0);	/* all pairs: 7 rounds, 28 pairs */
	check_plan(7, 0);	/* odd: one sits out each round */
	check_plan(64, 3);
	check_plan(100, 5);
	dr_cost(8, 0, &rounds, &pairs, &all_rounds, &all_pairs);
	EXPECT(rounds == 7 && pairs == 28 && all_pairs == 28);
	dr_cost(1024, 3, &rounds, &pairs, &all_rounds, &all_pairs);
	EXPECT(rounds == 3 && pairs == 1536 && all_rounds == 1023 && all_pairs == 523776);
	{	/* odd n, all pairs: each pair once */
		struct dr_pair p[64];

		EXPECT(dr_plan(7, 0, p, 64) == 21);
	}
}

static void test_robust(void)
{
	double v[] = { 10, 11, 9, 10, 12, 10, 50 }, med, mad, z;

	double even[] = { 30, 10, 20, 40 }, one[] = { 7 };

	EXPECT(dr_lower_median(even, 4) == 20 && dr_lower_median(one, 1) == 7 &&
	       dr_lower_median(one, 0) == 0);
	dr_center(v, 7, &med, &mad);
	EXPECT_MSG(med == 10 && mad == 1, "med %g mad %g", med, mad);
	EXPECT(dr_outlier(50, med, mad, &z) && z > 20);
	EXPECT(!dr_outlier(12, med, mad, &z));	/* z 1.3 */
	/* an even fleet (MAD 0): only a clear ratio stands out */
	EXPECT(!dr_outlier(10.4, 10, 0, NULL));
	EXPECT(dr_outlier(25, 10, 0, NULL));
	/* a score above DR_Z but under DR_RATIO times the median: not slow */
	EXPECT(!dr_outlier(11, 10, 0.1, &z) && z > DR_Z);
	EXPECT(!dr_outlier(18, 10, 0.1, &z) && z > DR_Z);	/* a stall's 1.8x */
}

/* an 8-node fleet, 3 rounds: latency 20 us +- 10%, 0.1 permille lost;
 * node slow: its pairs 3 times as long; node lossy: its pairs lose 8
 * permille (1% toward it, about half the packets) */
static int fleet(int slow, int lossy, struct dr_meas *m, unsigned seed)
{
	struct dr_pair p[64];
	int n = dr_plan(8, 3, p, 64);

	srand(seed);
	for (int i = 0; i < n; i++) {
		int a = p[i].a, b = p[i].b;

		m[i] = (struct dr_meas){ a, b, 20000 * (0.9 + 0.2 * rand() / RAND_MAX), 1e9, 1,
					 10000, 0 };
		if (a == slow || b == slow)
			m[i].lat_ns *= 3;
		if (a == lossy || b == lossy)
			m[i].lost = 80;
	}
	return n;
}

static void test_judge(void)
{
	struct dr_meas m[64];
	struct dr_node d[8];
	double med, mad;
	int n, bad, k, falses = 0;

	/* clean, 50 fleets of noise: nothing named */
	for (unsigned s = 1; s <= 50; s++) {
		n = fleet(-1, -1, m, s);
		falses += dr_judge(m, n, 8, d, &med, &mad);
	}
	EXPECT_MSG(falses == 0, "%d nodes named in clean fleets", falses);
	/* node 5 slow, node 2's link lossy: those two, nothing else */
	for (unsigned s = 1; s <= 50; s++) {
		n = fleet(5, 2, m, s);
		bad = dr_judge(m, n, 8, d, &med, &mad);
		EXPECT_MSG(bad == 2 && d[5].v == DR_SLOW && d[2].v == DR_LOSSY_LINK,
			   "seed %u: %d named; node5 %s, node2 %s", s, bad, dr_verdict_name(d[5].v),
			   dr_verdict_name(d[2].v));
	}
	EXPECT(d[5].z > DR_Z && d[5].lat_ns > 2.5 * med);
	/* every placement of the two, the lossy link's pairs 10 times as long
	 * (its timeouts): a node paired with both the lossy and the slow one
	 * has two long pairs of three, and is still not named (lossy pairs
	 * are left out of latency, and of two the lower is taken) */
	for (int sl = 0; sl < 8; sl++)
		for (int lo = 0; lo < 8; lo++) {
			if (sl == lo)
				continue;
			n = fleet(sl, lo, m, (unsigned)(sl * 8 + lo));
			for (k = 0; k < n; k++)
				if (m[k].a == lo || m[k].b == lo)
					m[k].lat_ns *= 10;
			bad = dr_judge(m, n, 8, d, &med, &mad);
			EXPECT_MSG(bad == 2 && d[sl].v == DR_SLOW && d[lo].v == DR_LOSSY_LINK,
				   "slow %d, lossy %d: %d named; %s, %s", sl, lo, bad,
				   dr_verdict_name(d[sl].v), dr_verdict_name(d[lo].v));
		}
	/* a partner of the slow node with one more pair twice as long (a
	 * stall of the host's): two long pairs of three, but once node 5 is
	 * named, its pair no longer counts against the partner */
	for (unsigned s = 1; s <= 50; s++) {
		int x = -1, hit = 0;

		n = fleet(5, -1, m, s);
		for (k = 0; k < n && x < 0; k++)
			if (m[k].a == 5 || m[k].b == 5)
				x = m[k].a == 5 ? m[k].b : m[k].a;
		for (k = 0; k < n && !hit; k++)
			if ((m[k].a == x || m[k].b == x) && m[k].a != 5 && m[k].b != 5) {
				m[k].lat_ns *= 2;
				hit = 1;
			}
		bad = dr_judge(m, n, 8, d, &med, &mad);
		EXPECT_MSG(hit && bad == 1 && d[5].v == DR_SLOW && d[x].v == DR_OK,
			   "seed %u: %d named; node5 %s, node%d %s", s, bad, dr_verdict_name(d[5].v), x,
			   dr_verdict_name(d[x].v));
	}
	/* one lossy pair that no link explains: both its ends, for the
	 * bisection */
	n = fleet(-1, -1, m, 7);
	m[0].lost = 80;
	bad = dr_judge(m, n, 8, d, &med, &mad);
	EXPECT_MSG(bad == 2 && d[m[0].a].v == DR_LOSSY_PAIR && d[m[0].b].v == DR_LOSSY_PAIR,
		   "%d named", bad);
	/* a node whose pairs all failed: unreachable, its partners fine */
	n = fleet(-1, -1, m, 9);
	for (k = 0; k < n; k++)
		if (m[k].a == 4 || m[k].b == 4)
			m[k].failed = 1;
	bad = dr_judge(m, n, 8, d, &med, &mad);
	EXPECT_MSG(bad == 1 && d[4].v == DR_UNREACHABLE, "%d named, node4 %s", bad,
		   dr_verdict_name(d[4].v));
}

int main(void)
{
	test_plan();
	test_robust();
	test_judge();
	return expect_done("test_ctl_doctor");
}
