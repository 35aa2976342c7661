// SPDX-License-Identifier: MIT
/*
 * rdmactl doctor's arithmetic (doctor.h): the rounds of pairs, robust
 * centres and scores, and the fleet's verdict. Pure: nothing here runs.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/doctor/doctor.h"

int dr_plan(int n, int k, struct dr_pair *out, int max)
{
	int m = n + (n & 1);	/* odd: a ghost node; its partner sits the round out */
	int r, i, cnt = 0;

	if (n < 2)
		return 0;
	if (k <= 0 || k > m - 1)
		k = m - 1;
	for (r = 0; r < k; r++)
		for (i = 0; i < m / 2; i++) {
			/* position 0 stays; the others turn by one each round */
			int p = i ? 1 + (i - 1 + r) % (m - 1) : 0;
			int q = 1 + (m - 2 - i + r) % (m - 1);

			if (p >= n || q >= n)	/* the ghost's */
				continue;
			if (cnt == max)
				return cnt;
			out[cnt++] = (struct dr_pair){ p < q ? p : q, p < q ? q : p, r };
		}
	return cnt;
}

void dr_cost(int n, int k, int *rounds, long *pairs, int *all_rounds, long *all_pairs)
{
	int m = n + (n & 1);

	if (k <= 0 || k > m - 1)
		k = m - 1;
	*rounds = n < 2 ? 0 : k;
	*pairs = n < 2 ? 0 : (long)k * (n / 2);
	*all_rounds = n < 2 ? 0 : m - 1;
	*all_pairs = (long)n * (n - 1) / 2;
}

static int dcmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

double dr_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double dr_lower_median(double *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	return v[(n - 1) / 2];
}

void dr_center(const double *v, int n, double *med, double *mad)
{
	double *w = n > 0 ? malloc((size_t)n * sizeof(*w)) : NULL;

	*med = *mad = 0;
	if (!w)
		return;
	memcpy(w, v, (size_t)n * sizeof(*w));
	*med = dr_median(w, n);
	for (int i = 0; i < n; i++)
		w[i] = fabs(v[i] - *med);
	*mad = dr_median(w, n);
	free(w);
}

int dr_outlier(double x, double med, double mad, double *z)
{
	double s = mad > 0 ? 0.6745 * (x - med) / mad : 0;

	if (z)
		*z = s;
	if (x < DR_RATIO * med || x <= 0)
		return 0;
	/* a MAD of 0 (more than half the fleet alike): the ratio alone */
	return mad > 0 ? s > DR_Z : 1;
}

double dr_loss_permille(const struct dr_meas *m)
{
	return m->sent > 0 ? 1000.0 * m->lost / m->sent : 0;
}

const char *dr_verdict_name(enum dr_verdict v)
{
	static const char *const names[] = { "ok", "slow", "lossy link", "lossy pair",
					     "unreachable" };

	return v <= DR_UNREACHABLE ? names[v] : "?";
}

/*
 * Each node's latency: the lower median of its pairs' that neither lose
 * (a loss explains their time) nor have a partner named slow. A slow node
 * slows every pair it is in; its partners have one slow pair each, which
 * the lower median passes over even among two. 0: none to judge by. The
 * fleet's centre over them; then the slowest node not yet named, named
 * slow when it stands out: 1, else 0.
 */
static int slowest(const struct dr_meas *m, int nm, const char *lossy, struct dr_node *nodes, int n,
		   double *lat, double *lat_med, double *lat_mad)
{
	int i, k, c, best = -1;

	for (k = 0; k < n; k++) {
		if (nodes[k].v == DR_SLOW)	/* as it was when named */
			continue;
		for (i = 0, c = 0; i < nm; i++)
			if (!m[i].failed && !lossy[i] && (m[i].a == k || m[i].b == k) &&
			    nodes[m[i].a == k ? m[i].b : m[i].a].v != DR_SLOW)
				lat[c++] = m[i].lat_ns;
		nodes[k].lat_ns = dr_lower_median(lat, c);
	}
	for (k = 0, c = 0; k < n; k++)
		if (nodes[k].lat_ns > 0)
			lat[c++] = nodes[k].lat_ns;
	dr_center(lat, c, lat_med, lat_mad);
	for (k = 0; k < n; k++)
		if (nodes[k].v == DR_OK && nodes[k].lat_ns > 0 &&
		    (best < 0 || nodes[k].lat_ns > nodes[best].lat_ns))
			best = k;
	if (best < 0 || !dr_outlier(nodes[best].lat_ns, *lat_med, *lat_mad, NULL))
		return 0;
	nodes[best].v = DR_SLOW;
	return 1;
}

int dr_judge(const struct dr_meas *m, int nm, int n, struct dr_node *nodes, double *lat_med,
	     double *lat_mad)
{
	double *lat = calloc((size_t)(nm > n ? nm : n) + 1, sizeof(*lat)), *loss;
	char *lossy = calloc((size_t)nm + 1, 1);
	double lmed, lmad;
	int i, k, bad = 0, nl = 0;

	loss = calloc((size_t)nm + 1, sizeof(*loss));
	memset(nodes, 0, sizeof(*nodes) * (size_t)n);
	*lat_med = *lat_mad = 0;
	if (!lat || !loss || !lossy) {
		free(lat);
		free(loss);
		free(lossy);
		return -ENOMEM;
	}
	/* the pairs' losses across the fleet: a lossy one stands out from it,
	 * or passes the absolute bound */
	for (i = 0; i < nm; i++)
		if (!m[i].failed)
			loss[nl++] = dr_loss_permille(&m[i]);
	dr_center(loss, nl, &lmed, &lmad);
	for (i = 0; i < nm; i++) {
		double l = dr_loss_permille(&m[i]);

		lossy[i] = !m[i].failed && (l >= DR_LOSS_PERMILLE ||
					    (l > DR_LOSS_OUTLIER_MIN && dr_outlier(l, lmed, lmad, NULL)));
		for (k = 0; k < 2; k++) {
			struct dr_node *d = &nodes[k ? m[i].b : m[i].a];

			d->pairs++;
			d->failed += m[i].failed;
			d->lossy += lossy[i];
		}
	}
	/* first the nodes most of whose pairs fail or lose */
	for (k = 0; k < n; k++) {
		struct dr_node *d = &nodes[k];
		int ran = d->pairs - d->failed;

		if (d->pairs && 3 * d->failed >= 2 * d->pairs)
			d->v = DR_UNREACHABLE;
		else if (ran >= 2 && 3 * d->lossy >= 2 * ran)
			d->v = DR_LOSSY_LINK;
	}
	/* then the slow, the slowest first: once a node is named slow, its
	 * pairs no longer count against its partners, and the rest are
	 * judged again */
	while (slowest(m, nm, lossy, nodes, n, lat, lat_med, lat_mad))
		;
	/* and the rest: a lossy pair that no lossy link explains (the
	 * bisection's to tell which end) */
	for (k = 0; k < n; k++) {
		struct dr_node *d = &nodes[k];
		int unexplained = 0;

		dr_outlier(d->lat_ns, *lat_med, *lat_mad, &d->z);
		if (d->v != DR_OK || !d->pairs) {
			bad += d->v != DR_OK;
			continue;
		}
		for (i = 0; i < nm; i++)
			if (lossy[i] && (m[i].a == k || m[i].b == k) &&
			    nodes[m[i].a == k ? m[i].b : m[i].a].v != DR_LOSSY_LINK)
				unexplained++;
		if (unexplained)
			d->v = DR_LOSSY_PAIR;
		bad += d->v != DR_OK;
	}
	free(lat);
	free(loss);
	free(lossy);
	return bad;
}
