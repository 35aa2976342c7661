/* SPDX-License-Identifier: MIT */
/*
 * rdmactl doctor's arithmetic (plan.c, pure: the unit tests drive it with
 * figures of their own): which pairs of nodes to measure in which round,
 * and which nodes and links stand out from the fleet.
 *
 * Rounds are perfect matchings (the circle method): in one round every
 * node is in at most one pair, so a round's pairs run at once and do not
 * share a NIC. k rounds give each node k partners: k * n / 2 pairs in k
 * rounds, where all pairs take n - 1 rounds and n (n - 1) / 2 pairs.
 *
 * A figure stands out by its modified z-score (Iglewicz and Hoaglin):
 * 0.6745 (x - median) / MAD over the fleet, above DR_Z, and x at least
 * DR_RATIO times the median (a fleet so even that its MAD is near 0 must
 * not flag a node a few microseconds slower than the rest, nor a host's
 * stall during a short test: 1.8x was seen on a clean VM testbed; a node
 * held to 20% of a CPU shows 5-7x).
 */
#ifndef RTB_CTL_DOCTOR_H
#define RTB_CTL_DOCTOR_H

#include <stddef.h>

#define DR_Z 3.5
#define DR_RATIO 2.0
/* a pair's lost packets per thousand sent, above which it is lossy
 * whatever the fleet does (a fleet where every link loses is not well) */
#define DR_LOSS_PERMILLE 2.0
/* below it, a pair's loss never stands out, however even the fleet */
#define DR_LOSS_OUTLIER_MIN 0.5

struct dr_pair {
	int a, b;		/* nodes */
	int round;		/* 0..k-1 */
};

/* the pairs of k rounds over n nodes (k <= n - 1, or n - 1 when k <= 0 or
 * larger: all pairs), round by round; how many (<= max) */
int dr_plan(int n, int k, struct dr_pair *out, int max);
/* rounds and pairs: k rounds against all pairs (n - 1 rounds, n even; n
 * rounds, n odd) */
void dr_cost(int n, int k, int *rounds, long *pairs, int *all_rounds, long *all_pairs);

/* the median of v[0..n) (v is sorted in place) */
double dr_median(double *v, int n);
/* the lower median: of an even count, the smaller middle one (v sorted
 * in place; 0 when n is 0) */
double dr_lower_median(double *v, int n);
/* median and MAD of v[0..n) (v kept) */
void dr_center(const double *v, int n, double *med, double *mad);
/* x stands out above the fleet (median med, MAD mad): its modified z-score
 * above DR_Z and x >= DR_RATIO * med. *z: the score (0 when mad is 0) */
int dr_outlier(double x, double med, double mad, double *z);

/* what a pair measured */
struct dr_meas {
	int a, b;
	double lat_ns;		/* its latency (rdmactl doctor: the mean round trip / 2) */
	double bw;		/* bytes/s */
	/* packets of the pair's worse direction: lost, those one end sent
	 * and the other never received (their counters: sent_pkts,
	 * rcvd_pkts), or where a NIC counts no packets, its retransmissions */
	double lost, sent;
	int failed;		/* the pair could not run */
};

enum dr_verdict { DR_OK, DR_SLOW, DR_LOSSY_LINK, DR_LOSSY_PAIR, DR_UNREACHABLE };

/* one node's verdict, and why */
struct dr_node {
	enum dr_verdict v;
	double lat_ns;		/* the lower median of its pairs' latencies, lossy pairs
				 * left out (0: none) */
	double z;		/* that median's score over the fleet */
	int pairs, lossy, failed;	/* its pairs; those lossy; those that did not run */
};

/*
 * The fleet's verdict from its pairs' figures: a node whose pairs are
 * mostly lossy has a lossy link (its port, its cable: every path through
 * it); one lossy pair alone is that pair's (the bisection then measures
 * each end against others); a node whose pairs mostly failed is
 * unreachable; a node whose latency (the lower median of its pairs' not
 * lossy) stands out is slow, the slowest first, its pairs then left out
 * of its partners' latencies. nodes[n]
 * filled; the number of nodes not DR_OK. *lat_med, *lat_mad: the fleet's.
 */
int dr_judge(const struct dr_meas *m, int nm, int n, struct dr_node *nodes, double *lat_med,
	     double *lat_mad);
/* a pair's loss: lost per thousand sent */
double dr_loss_permille(const struct dr_meas *m);
const char *dr_verdict_name(enum dr_verdict v);

#endif
