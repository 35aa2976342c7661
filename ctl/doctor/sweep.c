// SPDX-License-Identifier: MIT
/*
 * rdmactl doctor's sweep (sweep.h): each node's facts from its hello;
 * rounds of pairs on the agents (a round's pairs at once, or some at a
 * time where the nodes share CPUs), each pair's latency and bandwidth
 * and both ends' packet counters around it; the fleet's verdict; the
 * bisection of a pair named for itself alone.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/doctor/sweep.h"
#include "ctl/session/session.h"
#include "lib/clock.h"
#include "lib/hist.h"
#include "lib/hwc.h"
#include "lib/log.h"

const char *doc_name(const struct doc *dc, int x)
{
	return dc->tb.node[dc->d[dc->idx[x]].tb].name;
}

double doc_pm(double lost, double sent)
{
	return sent > 0 ? 1000.0 * lost / sent : 0;
}

/* one device counter of a delta (-1: the NIC has no such counter) */
static double ctr(const json_t *delta, const char *name)
{
	json_t *v = json_object_get(delta, name);

	return json_is_integer(v) ? (double)json_integer_value(v) : -1;
}

/* the pair's figures from one run (lat or bw) of its two ends, into *m
 * and the pair's JSON */
static void take(struct dr_meas *m, json_t *pj, json_t *cres, json_t *sres, int lat)
{
	const char *f = json_string_value(json_object_get(cres, "failed"));

	if (!f)
		f = json_string_value(json_object_get(sres, "failed"));
	if (!f && (!cres || !sres))
		f = "no result";
	if (f) {
		m->failed = 1;
		if (!json_object_get(pj, "failed"))
			json_object_set_new(pj, "failed", json_string(f));
		return;
	}
	if (lat) {
		struct hist h;

		/* judged by the mean: a node held back now and then (a CPU
		 * quota, a noisy neighbour) slows every job, and its median
		 * does not show it */
		if (!hist_from_json(&h, json_object_get(cres, "lat_ns")) && h.count) {
			m->lat_ns = hist_mean(&h);
			json_object_set_new(pj, "lat_mean_ns", json_integer((json_int_t)m->lat_ns));
			json_object_set_new(pj, "lat_p50_ns",
					    json_integer((json_int_t)hist_quantile(&h, 0.5)));
			json_object_set_new(pj, "lat_p99_ns",
					    json_integer((json_int_t)hist_quantile(&h, 0.99)));
		}
	} else {
		m->bw = json_number_value(json_object_get(cres, "bw_bytes_per_s"));
		json_object_set_new(pj, "bw_bytes_per_s", json_real(m->bw));
	}
}

/*
 * The pair's packets over the round, from each end's device counters
 * before and after it (a node is in one pair a round: its device's
 * packets are the pair's). Lost one way: what one end sent and the other
 * never received. A NIC without packet counters: its retransmissions.
 */
static void count(struct dr_meas *m, json_t *pj, const json_t *da, const json_t *db)
{
	double as = ctr(da, "sent_pkts"), ar = ctr(da, "rcvd_pkts");
	double bs = ctr(db, "sent_pkts"), br = ctr(db, "rcvd_pkts");
	double ab = as > br ? as - br : 0, ba = bs > ar ? bs - ar : 0;
	uint64_t retries = hwc_retrans(da) + hwc_retrans(db);

	json_object_set_new(pj, "retries", json_integer((json_int_t)retries));
	if (as < 0 || ar < 0 || bs < 0 || br < 0) {
		m->lost = (double)retries;
		json_object_set_new(pj, "loss_from", json_string("retries"));
		return;
	}
	/* judged by its worse direction: a port that drops toward its node
	 * loses the same share whichever way a pair's bulk goes */
	if (doc_pm(ab, as) >= doc_pm(ba, bs)) {
		m->lost = ab;
		m->sent = as;
	} else {
		m->lost = ba;
		m->sent = bs;
	}
	json_object_update_new(pj, json_pack("{s:I,s:I,s:I,s:I}", "sent_ab", (json_int_t)as, "lost_ab",
					     (json_int_t)ab, "sent_ba", (json_int_t)bs, "lost_ba",
					     (json_int_t)ba));
}

/* every agent of cs[0..n)'s device counters: out[i] (new reference, NULL
 * when it did not answer) */
static void counters_all(struct agentc *const *cs, int n, json_t **out)
{
	json_t *args[DOC_MAX];
	char err[256];

	for (int i = 0; i < n; i++)
		args[i] = json_object();
	agentc_call_all(cs, n, "counters", args, out, 10000, err, sizeof(err));
}

/* the pairs pr[0..cnt) at once: latency, then bandwidth. m[i] and pj[i]
 * filled (sweep indices in pr). 0, or -errno when the round could not run */
static int run_pairs(struct doc *dc, const struct dr_pair *pr, int cnt, struct dr_meas *m,
		     json_t **pj)
{
	struct agentc *cs[DOC_MAX];	/* the clients, then their servers */
	json_t *c0[DOC_MAX] = { 0 }, *c1[DOC_MAX] = { 0 };
	char err[512];
	int i, t, r = 0;

	for (i = 0; i < cnt; i++) {
		cs[i] = &dc->d[dc->idx[pr[i].a]].c;
		cs[cnt + i] = &dc->d[dc->idx[pr[i].b]].c;
		m[i] = (struct dr_meas){ .a = pr[i].a, .b = pr[i].b };
		pj[i] = json_pack("{s:s,s:s,s:i}", "a", doc_name(dc, pr[i].a), "b", doc_name(dc, pr[i].b),
				  "round", pr[i].round + 1);
	}
	counters_all(cs, 2 * cnt, c0);
	for (t = 0; t < 2 && !r; t++) {
		/* an ACK timeout of 16.8 ms (4.096 us * 2^12): a lost packet
		 * costs a pair that, not a default 67 ms */
		json_t *opts = t ? json_pack("{s:s,s:s,s:I,s:i}", "test", "bw", "size", dc->size,
					     "iters", (json_int_t)dc->bw_iters, "qp_timeout",
					     DOC_QP_TIMEOUT)
				 : json_pack("{s:s,s:I,s:i}", "test", "lat", "iters",
					     (json_int_t)dc->iters, "qp_timeout", DOC_QP_TIMEOUT);
		json_t *res = NULL;

		r = pairs_run(cs, cs + cnt, cnt, "p2p", opts, &res, err, sizeof(err));
		json_decref(opts);
		if (r) {
			log_err("doctor: %s", err);
			break;
		}
		for (i = 0; i < cnt; i++) {
			json_t *x = json_array_get(res, (size_t)i);

			take(&m[i], pj[i], json_array_get(x, 0), json_array_get(x, 1), !t);
		}
		json_decref(res);
	}
	counters_all(cs, 2 * cnt, c1);
	for (i = 0; i < cnt && !r; i++) {
		json_t *da = NULL, *db = NULL;

		if (c0[i] && c1[i] && c0[cnt + i] && c1[cnt + i]) {
			da = hwc_delta(json_object_get(c0[i], "hw_counters"),
				       json_object_get(c1[i], "hw_counters"));
			db = hwc_delta(json_object_get(c0[cnt + i], "hw_counters"),
				       json_object_get(c1[cnt + i], "hw_counters"));
		}
		if (da && db && !m[i].failed)
			count(&m[i], pj[i], da, db);
		else if (!m[i].failed) {
			m[i].failed = 1;
			json_object_set_new(pj[i], "failed", json_string("its counters did not answer"));
		}
		json_decref(da);
		json_decref(db);
		json_object_set_new(pj[i], "lost_permille",
				    json_real(round(dr_loss_permille(&m[i]) * 100) / 100));
	}
	for (i = 0; i < 2 * cnt; i++) {
		json_decref(c0[i]);
		json_decref(c1[i]);
	}
	if (r)
		for (i = 0; i < cnt; i++) {
			json_decref(pj[i]);
			pj[i] = NULL;
		}
	return r;
}

void doc_facts(struct doc *dc)
{
	int i, mtus[DOC_MAX], nm = 0, best = 0, bestc = 0;

	for (i = 0; i < dc->n; i++) {
		struct dnode *d = &dc->d[i];
		json_t *h = NULL;
		char err[512];
		int r = tb_agent_open(&d->c, &dc->tb, d->tb, 3000);

		if (!r)
			r = agentc_call(&d->c, "hello", NULL, &h, 10000, err, sizeof(err));
		else
			snprintf(err, sizeof(err), "%s: %s", d->c.where, strerror(-r));
		if (r) {
			snprintf(d->fact, sizeof(d->fact), "its agent did not answer: %s", err);
			continue;
		}
		d->reached = 1;
		snprintf(d->dev, sizeof(d->dev), "%s", json_string_value(json_object_get(h, "dev")) ?: "-");
		snprintf(d->state, sizeof(d->state), "%s",
			 json_string_value(json_object_get(h, "state")) ?: "?");
		snprintf(d->gid, sizeof(d->gid), "%s", json_string_value(json_object_get(h, "gid")) ?: "-");
		snprintf(d->ip, sizeof(d->ip), "%s", json_string_value(json_object_get(h, "ip")) ?: "");
		d->mtu = (int)json_integer_value(json_object_get(h, "active_mtu"));
		json_decref(h);
		if (strcmp(d->state, "ACTIVE"))
			snprintf(d->fact, sizeof(d->fact), "%s%s", strcmp(d->state, "NO-RDMA") ? "port " : "",
				 strcmp(d->state, "NO-RDMA") ? d->state :
							       "no RDMA device (rdma-agent --no-rdma)");
		else
			mtus[nm++] = d->mtu;
	}
	/* the fleet's MTU: the most common among the active ports */
	for (i = 0; i < nm; i++) {
		int c = 0;

		for (int j = 0; j < nm; j++)
			c += mtus[j] == mtus[i];
		if (c > bestc) {
			bestc = c;
			best = mtus[i];
		}
	}
	for (i = 0; i < dc->n; i++) {
		struct dnode *d = &dc->d[i];

		if (d->reached && !d->fact[0] && d->mtu != best)
			snprintf(d->fact, sizeof(d->fact), "MTU %d, the fleet's %d", d->mtu, best);
		if (!d->fact[0])
			dc->idx[dc->ni++] = i;
		else
			dc->named++;
	}
}

/* pairs pr[0..cnt), dc->at_once at a time (0: all at once) */
static int run_chunked(struct doc *dc, const struct dr_pair *pr, int cnt, struct dr_meas *m,
		       json_t **pj)
{
	int r = 0;

	for (int c = 0; c < cnt && !r; c += dc->at_once ? dc->at_once : cnt)
		r = run_pairs(dc, pr + c, dc->at_once && dc->at_once < cnt - c ? dc->at_once : cnt - c,
			      m + c, pj + c);
	return r;
}

int doc_sweep(struct doc *dc)
{
	int r = 0, i = 0;

	dc->np = dr_plan(dc->ni, dc->k, dc->plan, DOC_PAIRS);
	while (i < dc->np && !r && !ctl_interrupted) {
		int j = i, rd = dc->plan[i].round;
		json_t *pj[DOC_MAX] = { 0 };
		double t0 = rtb_now_s(), w;

		while (j < dc->np && dc->plan[j].round == rd)
			j++;
		r = run_chunked(dc, dc->plan + i, j - i, dc->m + i, pj);
		w = rtb_now_s() - t0;
		for (int x = 0; x < j - i; x++)	/* a round that failed: nothing kept */
			if (r)
				json_decref(pj[x]);
			else
				json_array_append_new(dc->pairs, pj[x]);
		json_array_append_new(dc->rounds, json_pack("{s:i,s:i,s:f}", "round", rd + 1, "pairs",
							     j - i, "wall_s", round(w * 1000) / 1000));
		if (!dc->ctl->json)
			fprintf(stderr, "doctor: round %d of %d: %d pairs in %.1f s\n", rd + 1,
				dc->plan[dc->np - 1].round + 1, j - i, w);
		i = j;
	}
	return r ? r : ctl_interrupted ? -EINTR : 0;
}

/* a pair's packets (pj: sent_ab, lost_ab, ...) to its ends' counts,
 * toward each and from each */
static void add_packets(struct dnode *a, struct dnode *b, const json_t *pj)
{
	double sab = (double)json_integer_value(json_object_get(pj, "sent_ab"));
	double lab = (double)json_integer_value(json_object_get(pj, "lost_ab"));
	double sba = (double)json_integer_value(json_object_get(pj, "sent_ba"));
	double lba = (double)json_integer_value(json_object_get(pj, "lost_ba"));

	if (a) {
		a->sent_out += sab;
		a->lost_out += lab;
		a->sent_in += sba;
		a->lost_in += lba;
	}
	if (b) {
		b->sent_in += sab;
		b->lost_in += lab;
		b->sent_out += sba;
		b->lost_out += lba;
	}
}

/* each node's packets toward it and from it, over its pairs */
static void directions(struct doc *dc)
{
	size_t i;
	json_t *p;

	json_array_foreach(dc->pairs, i, p)
		if (!dc->m[i].failed)
			add_packets(&dc->d[dc->idx[dc->m[i].a]], &dc->d[dc->idx[dc->m[i].b]], p);
}

/* a measured pair is bad the way `kind` says: it loses, or it is slow
 * against the fleet */
static int bad_as(const struct doc *dc, const struct dr_meas *m, enum dr_verdict kind)
{
	if (m->failed)
		return 0;
	if (kind == DR_LOSSY_PAIR)
		return dr_loss_permille(m) >= DR_LOSS_PERMILLE;
	return dr_outlier(m->lat_ns, dc->lat_med, dc->lat_mad, NULL);
}

/*
 * A pair whose two ends are both named for it alone (a lossy pair no
 * lossy link explains; with one round, a slow pair): each end against two
 * nodes judged well. An end whose two new pairs are both bad is the one
 * (a lossy link, a slow node); when neither end is bad with others, it is
 * the path between the two (an ECMP path, a cable between switches).
 */
static void bisect(struct doc *dc)
{
	int w[DOC_MAX], nw = 0, x, done[DOC_MAX] = { 0 };

	/* well: judged so on pairs of its own */
	for (x = 0; x < dc->ni; x++)
		if (dc->d[dc->idx[x]].v.v == DR_OK && dc->d[dc->idx[x]].v.lat_ns > 0)
			w[nw++] = x;
	for (int i = 0; i < dc->np; i++) {
		const struct dr_meas *m = &dc->m[i];
		struct dnode *da = &dc->d[dc->idx[m->a]], *db = &dc->d[dc->idx[m->b]];
		enum dr_verdict kind = da->v.v;
		struct dr_pair pr[4];
		struct dr_meas mm[4];
		json_t *pj[4] = { 0 }, *o;
		int lossy[2] = { 0, 0 }, slow[2] = { 0, 0 }, rr;

		/* a slow pair one of whose ends was named on it alone: the
		 * other end had no pair of its own left to judge it by */
		if (da->v.v == DR_OK && db->v.v == DR_SLOW && !da->v.lat_ns)
			kind = DR_SLOW;
		if ((kind != DR_LOSSY_PAIR && kind != DR_SLOW) || !bad_as(dc, m, kind) ||
		    done[m->a] || done[m->b] ||
		    (db->v.v != kind && !(kind == DR_SLOW && db->v.v == DR_OK && !db->v.lat_ns)))
			continue;
		done[m->a] = done[m->b] = 1;
		o = json_pack("{s:s,s:s,s:s}", "a", doc_name(dc, m->a), "b", doc_name(dc, m->b), "as",
			      dr_verdict_name(kind));
		if (nw < 2) {
			json_object_set_new(o, "verdict", json_string("not bisected: fewer than two well "
								      "nodes to test against"));
			json_array_append_new(dc->bisect, o);
			continue;
		}
		/* a-w0 b-w1, then a-w1 b-w0 */
		for (int r = 0; r < 2; r++) {
			pr[2 * r] = (struct dr_pair){ m->a, w[r], r };
			pr[2 * r + 1] = (struct dr_pair){ m->b, w[1 - r], r };
		}
		/* two rounds: a node is in one pair at a time */
		if (!(rr = run_chunked(dc, pr, 2, mm, pj)) &&
		    (rr = run_chunked(dc, pr + 2, 2, mm + 2, pj + 2))) {
			json_decref(pj[0]);
			json_decref(pj[1]);
		}
		if (rr) {
			json_object_set_new(o, "verdict", json_string("not bisected: its pairs could not run"));
			json_array_append_new(dc->bisect, o);
			continue;
		}
		json_object_set_new(o, "pairs", json_pack("[oooo]", pj[0], pj[1], pj[2], pj[3]));
		/* each end's two new pairs, judged both ways: a lossy pair's
		 * loss hides its ends' latency, which the new pairs show */
		for (int k = 0; k < 4; k++) {
			lossy[k % 2] += bad_as(dc, &mm[k], DR_LOSSY_PAIR);
			slow[k % 2] += bad_as(dc, &mm[k], DR_SLOW);
		}
		for (int e = 0; e < 2; e++) {
			struct dnode *d = e ? db : da;

			d->v.v = lossy[e] == 2 ? DR_LOSSY_LINK : slow[e] == 2 ? DR_SLOW : DR_OK;
			snprintf(d->bis, sizeof(d->bis), "bisected: %d of 2 pairs with well nodes %s",
				 d->v.v == DR_SLOW ? slow[e] : lossy[e],
				 d->v.v == DR_SLOW ? "slow" : "lost");
			/* a lossy link's verdict counts its packets there too
			 * (it is each new pair's a end) */
			for (int k = e; k < 4; k += 2)
				add_packets(d, NULL, pj[k]);
			if (d->v.v == DR_SLOW) {	/* its latency: with the well nodes */
				d->v.lat_ns = fmin(mm[e].lat_ns, mm[e + 2].lat_ns);
				dr_outlier(d->v.lat_ns, dc->lat_med, dc->lat_mad, &d->v.z);
			}
		}
		if (da->v.v != DR_OK || db->v.v != DR_OK) {
			char v[160] = "";

			for (int e = 0; e < 2; e++)
				if ((e ? db : da)->v.v != DR_OK)
					snprintf(v + strlen(v), sizeof(v) - strlen(v), "%s%s: %s",
						 v[0] ? "; " : "", doc_name(dc, e ? m->b : m->a),
						 dr_verdict_name((e ? db : da)->v.v));
			json_object_set_new(o, "verdict", json_string(v));
		} else if (!lossy[0] && !lossy[1] && !slow[0] && !slow[1]) {
			da->v.v = db->v.v = kind;
			json_object_set_new(o, "verdict", json_string("the path between the two: each end "
								      "is well with others"));
		} else {
			da->v.v = db->v.v = kind;
			json_object_set_new(o, "verdict", json_string("undecided: one of an end's two "
								      "pairs with others was bad"));
		}
		json_array_append_new(dc->bisect, o);
	}
}

/* each node's verdict in words */
static void explain(struct doc *dc)
{
	for (int x = 0; x < dc->ni; x++) {
		struct dnode *d = &dc->d[dc->idx[x]];
		char other[160] = "";

		switch (d->v.v) {
		case DR_OK:
			break;
		case DR_SLOW:
			snprintf(d->why, sizeof(d->why),
				 "slow: latency %.1f us (its pairs' means, their lower median), the "
				 "fleet's %.1f us (%.1fx; modified z %.1f > %.1f)", d->v.lat_ns / 1e3,
				 dc->lat_med / 1e3,
				 dc->lat_med > 0 ? d->v.lat_ns / dc->lat_med : 0, d->v.z, DR_Z);
			break;
		case DR_LOSSY_LINK:
			snprintf(d->why, sizeof(d->why),
				 "lossy link: %.1f per mille of the packets toward it lost, %.1f of its "
				 "own (%d of %d pairs lossy)", doc_pm(d->lost_in, d->sent_in),
				 doc_pm(d->lost_out, d->sent_out), d->v.lossy, d->v.pairs - d->v.failed);
			break;
		case DR_LOSSY_PAIR:
			for (int i = 0; i < dc->np; i++)
				if (!dc->m[i].failed && dr_loss_permille(&dc->m[i]) >= DR_LOSS_PERMILLE &&
				    (dc->m[i].a == x || dc->m[i].b == x))
					snprintf(other + strlen(other), sizeof(other) - strlen(other),
						 "%s%s %.1f per mille", other[0] ? ", " : "",
						 doc_name(dc, dc->m[i].a == x ? dc->m[i].b : dc->m[i].a),
						 dr_loss_permille(&dc->m[i]));
			snprintf(d->why, sizeof(d->why), "lossy pair: with %s", other);
			break;
		case DR_UNREACHABLE:
			snprintf(d->why, sizeof(d->why), "unreachable: %d of %d pairs failed",
				 d->v.failed, d->v.pairs);
			break;
		}
		if (d->v.v != DR_OK && d->bis[0]) {
			char b[sizeof(d->bis)];
			size_t l = strlen(d->why);

			memcpy(b, d->bis, sizeof(b));
			snprintf(d->why + l, sizeof(d->why) - l, "; %s", b);
		}
		dc->named += d->v.v != DR_OK;
	}
}


void doc_judge(struct doc *dc)
{
	struct dr_node v[DOC_MAX];

	dr_judge(dc->m, dc->np, dc->ni, v, &dc->lat_med, &dc->lat_mad);
	for (int i = 0; i < dc->ni; i++)
		dc->d[dc->idx[i]].v = v[i];
	directions(dc);
	bisect(dc);
	explain(dc);
}
