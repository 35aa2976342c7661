// SPDX-License-Identifier: MIT
/* What a capture's packets say (tr.h): how each loss was recovered and how
 * fast, whether go-back-N and READ retransmission went by the book, how a
 * sender reacted to CNPs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "ctl/trace/tr.h"
#include "lib/fnv.h"


/* index (into f->pk) of the first packet after position from that fn accepts */
static long after(const struct tr *s, const struct flow *f, uint64_t ts, size_t from,
		  int (*fn)(const struct tp *, const void *), const void *arg)
{
	size_t k;

	for (k = from; k < f->npk; k++) {
		const struct tp *t = &s->p[f->pk[k]];

		if (t->ts >= ts && fn(t, arg))
			return (long)k;
	}
	return -ENOENT;
}

static long first_ts(const struct tr *s, const struct flow *f, uint64_t ts)
{
	size_t lo = 0, hi = f->npk;

	while (lo < hi) {
		size_t m = (lo + hi) / 2;

		if (s->p[f->pk[m]].ts < ts)
			lo = m + 1;
		else
			hi = m;
	}
	return (long)lo;
}

static int same_psn(const struct tp *t, const void *a)
{
	const struct tp *l = a;

	return t->psn == l->psn && (is_request(l->cls) ? is_request(t->cls) : t->cls == l->cls);
}

static int nak_seq_for(const struct tp *t, const void *a)
{
	const struct tp *l = a;

	return t->cls == C_NAK && (t->syn & 0x60) == 0x60 && (t->syn & 0x1f) == 0 && t->psn == l->psn;
}

static int rereq_for(const struct tp *t, const void *a)
{
	const struct tp *l = a;

	return t->cls == C_READ_REQ && t->psn == l->psn;
}

static int any_pkt(const struct tp *t, const void *a)
{
	(void)t;
	(void)a;
	return 1;
}

static int ack_covers(const struct tp *t, const void *a)
{
	const struct tp *l = a;

	return (t->cls == C_ACK || t->cls == C_ATOMIC) && psn_cmp(t->psn, l->psn) >= 0;
}

static int later_resp(const struct tp *t, const void *a)
{
	const struct tp *l = a;

	return t->cls == C_READ_RESP && psn_cmp(t->psn, l->psn) > 0;
}

static int resent_req_upto(const struct tp *t, const void *a)
{
	const struct tp *l = a;

	return is_request(t->cls) && t->resent_req && psn_cmp(t->psn, l->psn) <= 0;
}

static void lat(json_t *o, const char *k, uint64_t a, uint64_t b)
{
	json_object_set_new(o, k, b >= a ? json_integer((json_int_t)(b - a)) : json_null());
}

/* whether the sender of flow f sat out a timer before its packet at index r:
 * the notice (a NAK, a later READ response) left the receiver at ts and
 * r came a millisecond or more later. A sender that went on sending after
 * the notice must then have fallen silent for at least 90% of the time
 * from ts to r, and (when the capture showed its timer: s->timer_ns) for
 * at least half of that timer. One silent since before the notice must
 * have waited half its timer, or 30 ms when none was seen (a stalled VM
 * took 12 ms to act on a NAK here; rxe waits 67 ms at QP timeout 14,
 * perftest's and ibv_rc_pingpong's): a sender that acts on the notice
 * goes back at once, and one that stalled (a busy VM) waits less than its
 * timer. */
static int waited_out(const struct tr *s, const struct flow *f, long r, uint64_t ts)
{
	uint64_t at = s->p[f->pk[r]].ts, prev;

	if (r <= 0 || at < ts + 1000000)
		return 0;
	prev = s->p[f->pk[r - 1]].ts;
	if (prev < ts)
		return at - ts >= (s->timer_ns ? s->timer_ns / 2 : 30000000);
	return prev <= at && (at - prev) * 10 >= (at - ts) * 9 && (at - prev) * 2 >= s->timer_ns;
}

/* a lost request's resend (r) and the NAK for it (n, in the peer flow g),
 * each an index or negative */
static void req_recovery(const struct tr *s, const struct tp *l, size_t pos, long *r, long *n)
{
	const struct flow *f = &s->f[l->flow], *g = f->peer >= 0 ? &s->f[f->peer] : NULL;

	*r = after(s, f, l->ts, pos + 1, same_psn, l);
	*n = g ? after(s, g, l->ts, (size_t)first_ts(s, g, l->ts), nak_seq_for, l) : -1;
}

uint64_t ack_timer(const struct tr *s, int cap)
{
	uint64_t best = 0;

	for (size_t j = 0; j < s->nf; j++) {
		const struct flow *f = &s->f[j];

		if (f->cap != cap)
			continue;
		for (size_t q = 0; q < f->npk; q++) {
			const struct tp *l = &s->p[f->pk[q]];
			uint64_t at, prev;
			long r, n;

			if ((l->verdict != INJ_VERDICT_DROP && l->verdict != INJ_VERDICT_CORRUPT) ||
			    !is_request(l->cls))
				continue;
			req_recovery(s, l, q, &r, &n);
			if (r <= 0 || (n >= 0 && s->p[s->f[f->peer].pk[n]].ts <= s->p[f->pk[r]].ts))
				continue;	/* not resent, or after a NAK */
			at = s->p[f->pk[r]].ts;
			prev = s->p[f->pk[r - 1]].ts;
			if (prev <= at && (!best || at - prev < best))
				best = at - prev;
		}
	}
	return best;
}

/* one loss: what the NIC did about it */
json_t *loss(struct tr *s, const struct tp *l, size_t pos)
{
	const struct flow *f = &s->f[l->flow], *g = f->peer >= 0 ? &s->f[f->peer] : NULL;
	json_t *o = json_pack("{s:I,s:I,s:I,s:s,s:I,s:s,s:I,s:I}", "frame", (json_int_t)l->frame,
			      "psn", (json_int_t)l->psn, "qpn", (json_int_t)l->dqpn, "class",
			      cls_name[l->cls], "opcode", (json_int_t)l->op, "verdict",
			      verdict_name[l->verdict], "rule", (json_int_t)l->rule, "time_ns",
			      (json_int_t)(l->ts - s->t0));
	const char *trigger = "unrecovered";
	long r = -1, n = -1, k;

	if (is_request(l->cls)) {
		size_t q;

		req_recovery(s, l, pos, &r, &n);
		for (q = 0; r < 0 && q < pos; q++) {	/* an earlier copy got through */
			const struct tp *t = &s->p[f->pk[q]];

			if (same_psn(t, l) && t->verdict != INJ_VERDICT_DROP &&
			    t->verdict != INJ_VERDICT_CORRUPT)
				trigger = "duplicate";
		}
		if (r >= 0) {
			const struct tp *rs = &s->p[f->pk[r]];

			trigger = n >= 0 && s->p[g->pk[n]].ts <= rs->ts ? "nak" : "timeout";
			if (!strcmp(trigger, "nak") && waited_out(s, f, r, s->p[g->pk[n]].ts))
				trigger = "nak_ignored";
			lat(o, "retransmission_latency_ns", l->ts, rs->ts);
			json_object_set_new(o, "resend_frame", json_integer((json_int_t)rs->frame));
			if (n >= 0 && strcmp(trigger, "timeout")) {
				const struct tp *nk = &s->p[g->pk[n]];
				long nx = after(s, f, l->ts, pos + 1, any_pkt, NULL);

				if (nx >= 0 && nx != r)
					lat(o, "nak_generation_latency_ns", s->p[f->pk[nx]].ts, nk->ts);
				lat(o, "nak_response_latency_ns", nk->ts, rs->ts);
				json_object_set_new(o, "nak_frame", json_integer((json_int_t)nk->frame));
			}
		}
	} else if (l->cls == C_READ_RESP) {
		r = after(s, f, l->ts, pos + 1, same_psn, l);
		k = g ? after(s, g, l->ts, (size_t)first_ts(s, g, l->ts), rereq_for, l) : -1;
		n = after(s, f, l->ts, pos + 1, later_resp, l);
		if (r >= 0 || k >= 0) {
			uint64_t rq = k >= 0 ? s->p[g->pk[k]].ts : UINT64_MAX;

			trigger = n >= 0 && s->p[f->pk[n]].ts <= rq ? "sequence" : "timeout";
			if (k >= 0 && !strcmp(trigger, "sequence") &&
			    waited_out(s, g, k, s->p[f->pk[n]].ts))
				trigger = "sequence_ignored";
			if (r >= 0) {
				lat(o, "retransmission_latency_ns", l->ts, s->p[f->pk[r]].ts);
				json_object_set_new(o, "resend_frame",
						    json_integer((json_int_t)s->p[f->pk[r]].frame));
			}
			if (k >= 0)
				lat(o, "rerequest_latency_ns", l->ts, rq);
		}
	} else if (l->cls == C_ACK || l->cls == C_NAK || l->cls == C_ATOMIC) {
		long cv = after(s, f, l->ts, pos + 1, ack_covers, l);

		k = g ? after(s, g, l->ts, (size_t)first_ts(s, g, l->ts), resent_req_upto, l) : -1;
		if (cv >= 0 && (k < 0 || s->p[f->pk[cv]].ts <= s->p[g->pk[k]].ts)) {
			trigger = "covered";	/* a later ACK said as much */
		} else if (k >= 0) {
			trigger = "timeout";
			lat(o, "retransmission_latency_ns", l->ts, s->p[g->pk[k]].ts);
			json_object_set_new(o, "resend_frame",
					    json_integer((json_int_t)s->p[g->pk[k]].frame));
		}
	} else {
		trigger = "none";	/* no recovery is expected (UD, CNP, ...) */
	}
	json_object_set_new(o, "trigger", json_string(trigger));
	return o;
}

static void deviation(json_t *arr, const struct flow *f, const struct tp *t, const char *fmt,
		      unsigned a, unsigned b)
{
	char msg[256];

	if (json_array_size(arr) >= 50)
		return;
	snprintf(msg, sizeof(msg), fmt, a, b);
	json_array_append_new(arr, json_pack("{s:I,s:I,s:s}", "qpn", (json_int_t)f->dqpn, "frame",
					     (json_int_t)t->frame, "what", msg));
}

/* SEND/WRITE: every resend starts at the NAK's PSN (or at or before the
 * first unacknowledged one, after a timeout) and goes on in order up to
 * the last PSN sent before it */
void go_back_n(struct tr *s, const struct flow *f, json_t *res)
{
	const struct flow *g = f->peer >= 0 ? &s->f[f->peer] : NULL;
	json_t *dev = json_object_get(res, "deviations");
	uint32_t maxpsn = 0, prev = 0, acked = 0, nak = 0;
	int have = 0, in_ep = 0, have_ack = 0, nak_pending = 0;
	size_t k, gi = 0;
	json_int_t episodes = 0;
	struct psnset tmp = { 0 };

	for (k = 0; k < f->npk; k++) {
		const struct tp *t = &s->p[f->pk[k]];
		int was, d;

		if (t->cls != C_DATA && t->cls != C_ATOMIC)
			continue;
		while (g && gi < g->npk && s->p[g->pk[gi]].ts <= t->ts) {
			const struct tp *a = &s->p[g->pk[gi++]];

			if (a->verdict == INJ_VERDICT_DROP || a->verdict == INJ_VERDICT_CORRUPT)
				continue;	/* the sender never got it */
			if (a->cls == C_ACK || a->cls == C_ATOMIC) {
				if (!have_ack || psn_cmp(a->psn, acked) > 0)
					acked = a->psn;
				have_ack = 1;
			} else if (a->cls == C_NAK && (a->syn & 0x60) == 0x60 && !(a->syn & 0x1f)) {
				if (!have_ack || psn_cmp(a->psn - 1, acked) > 0)
					acked = (a->psn - 1) & 0xffffff;
				have_ack = 1;
				nak = a->psn;
				nak_pending = 1;
			}
		}
		if (psn_mark(&tmp, t->psn, &was))
			break;
		if (!have) {
			maxpsn = prev = t->psn;
			have = 1;
			continue;
		}
		d = psn_cmp(t->psn, prev);
		if (was) {
			if (!in_ep || d <= 0) {
				episodes++;
				if (nak_pending && t->psn != nak)
					deviation(dev, f, t, "after a NAK for PSN %u the resend started at "
						  "PSN %u", nak, t->psn);
				else if (!nak_pending && have_ack && psn_cmp(t->psn, acked + 1) > 0)
					deviation(dev, f, t, "after a timeout the resend started at PSN "
						  "%u, past the first unacknowledged one (%u)", t->psn,
						  (acked + 1) & 0xffffff);
				nak_pending = 0;
				in_ep = 1;
			} else if (d != 1) {
				deviation(dev, f, t, "in a resend PSN %u came after %u (go-back-N "
					  "resends every packet in order)", t->psn, prev);
			}
		} else {
			if (in_ep && psn_cmp(prev, maxpsn) < 0)
				deviation(dev, f, t, "the resend stopped at PSN %u, before the last one "
					  "sent (%u)", prev, maxpsn);
			else if (psn_cmp(t->psn, maxpsn) != 1)
				deviation(dev, f, t, "new PSN %u after %u (not the next one)", t->psn,
					  maxpsn);
			in_ep = 0;
		}
		prev = t->psn;
		if (psn_cmp(t->psn, maxpsn) > 0)
			maxpsn = t->psn;
	}
	free(tmp.b);
	json_object_set_new(res, "episodes",
			    json_integer(json_integer_value(json_object_get(res, "episodes")) +
					 episodes));
}

/* READ: a READ request re-issued after lost responses asks for the first
 * response PSN the requester had not received, from the matching address,
 * for the rest of the length */
void read_check(struct tr *s, const struct flow *f, json_t *res)
{
	const struct flow *g = f->peer >= 0 ? &s->f[f->peer] : NULL;
	json_t *dev = json_object_get(res, "deviations");
	uint32_t pmtu = 0;
	size_t k, j;
	json_int_t checked = 0;

	if (!g)
		return;
	for (k = 0; k < g->npk; k++) {	/* the path MTU: a FIRST or MIDDLE response's payload */
		const struct tp *t = &s->p[g->pk[k]];

		if ((t->op == 0x0d || t->op == 0x0e) && t->payload > pmtu)
			pmtu = t->payload;
	}
	for (k = 0; k < f->npk; k++) {
		const struct tp *r2 = &s->p[f->pk[k]];

		if (r2->cls != C_READ_REQ)
			continue;
		/* a re-issued READ follows its original closely: the 64 requests before */
		for (j = k; j-- > 0 && k - j <= 64;) {
			const struct tp *r1 = &s->p[f->pk[j]];
			uint32_t n, off, miss;
			size_t q;

			if (r1->cls != C_READ_REQ)
				continue;
			n = pmtu && r1->rlen ? (r1->rlen + pmtu - 1) / pmtu : 1;
			off = (r2->psn - r1->psn) & 0xffffff;
			if (off >= n || (off == 0 && r2->va == r1->va && r2->rlen == r1->rlen &&
					 r1->psn != r2->psn))
				continue;
			/* r2 re-asks for part of r1 */
			checked++;
			for (miss = 0; miss < n; miss++) {
				/* the responses between the original and the re-issue */
				for (q = (size_t)first_ts(s, g, r1->ts); q < g->npk; q++) {
					const struct tp *rp = &s->p[g->pk[q]];

					if (rp->ts >= r2->ts) {
						q = g->npk;
						break;
					}
					if (rp->cls == C_READ_RESP &&
					    rp->psn == ((r1->psn + miss) & 0xffffff) &&
					    rp->verdict != INJ_VERDICT_DROP &&
					    rp->verdict != INJ_VERDICT_CORRUPT)
						break;
				}
				if (q == g->npk)
					break;
			}
			if (miss < n && off != miss)
				deviation(dev, f, r2, "the READ was re-issued from PSN offset %u, but the "
					  "first response not received was at offset %u", off, miss);
			else if (pmtu && (r2->va != r1->va + (uint64_t)off * pmtu ||
					  r2->rlen + off * pmtu != r1->rlen))
				deviation(dev, f, r2, "the re-issued READ at PSN offset %u asks for the "
					  "wrong address or length (path MTU %u)", off, pmtu);
			break;
		}
	}
	json_object_set_new(res, "rereads",
			    json_integer(json_integer_value(json_object_get(res, "rereads")) +
					 checked));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* {"median": , "max": , "n": } of one latency over the losses */
json_t *lat_summary(json_t *losses, const char *key)
{
	size_t i, n = 0;
	uint64_t *v = calloc(json_array_size(losses) + 1, sizeof(*v));
	json_t *o;

	if (!v)
		return json_null();
	for (i = 0; i < json_array_size(losses); i++) {
		json_t *x = json_object_get(json_array_get(losses, i), key);

		if (json_is_integer(x))
			v[n++] = (uint64_t)json_integer_value(x);
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	o = n ? json_pack("{s:I,s:I,s:I,s:I}", "n", (json_int_t)n, "min", (json_int_t)v[0],
			  "median", (json_int_t)v[n / 2], "max", (json_int_t)v[n - 1]) :
		json_pack("{s:I}", "n", (json_int_t)0);
	free(v);
	return o;
}

/* the median of n values (sorted in place); 0 when none */
static uint64_t median(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

/* the median gap between a flow's packets k0..k1-1 (indices into f->pk) */
static int gap_of(const struct tr *s, const struct flow *f, long k0, long k1, uint64_t *out)
{
	uint64_t g[CNP_WINDOW];
	size_t n = 0;
	long k;

	if (k0 < 0 || k1 > (long)f->npk || k1 - k0 < 2)
		return -ERANGE;
	for (k = k0 + 1; k < k1 && n < CNP_WINDOW; k++)
		g[n++] = s->p[f->pk[k]].ts - s->p[f->pk[k - 1]].ts;
	*out = median(g, n);
	return 0;
}

/*
 * The CNPs a capture point saw (crafted there or arriving) and what each
 * one's sender did next: its packets to the notifying end on the QP the CNP
 * names (the flow at the opposite capture point of the device, from the
 * CNP's destination to its source, paired with the CNP's QPN), the time to
 * its next packet and the median gap between its CNP_WINDOW packets before
 * and after. A sender that reacts (DCQCN's rate limiter) spaces its packets
 * out; one that does not keeps its gap. Per notified QP.
 */
json_t *cnp_reaction(struct tr *s, int cap)
{
	json_t *out = json_array();
	int opp = s->c[cap].opposite;
	size_t j;

	for (j = 0; j < s->nf; j++) {
		const struct flow *cf = &s->f[j], *g = NULL;
		uint64_t *nx, *gb, *ga;
		size_t q, n = 0, nn = 0, ng = 0, cand = 0;
		char a[64], b[64];
		json_t *o;

		if (cf->cap != cap)
			continue;
		for (q = 0; q < cf->npk; q++)
			n += s->p[cf->pk[q]].cls == C_CNP;
		if (!n)
			continue;
		for (q = 0; opp >= 0 && q < s->nf; q++) {	/* the notified sender's flow */
			const struct flow *h = &s->f[q];

			if (h->cap != opp || h->v6 != cf->v6 || memcmp(h->src, cf->dst, 16) ||
			    memcmp(h->dst, cf->src, 16))
				continue;
			cand++;
			if (h->peer >= 0 && s->f[h->peer].dqpn == cf->dqpn)
				g = h;
			else if (!g && cand == 1)
				g = h;	/* the only one so far */
		}
		if (g && (g->peer < 0 || s->f[g->peer].dqpn != cf->dqpn) && cand > 1)
			g = NULL;	/* several, none paired: not guessed */
		addr_str(cf, cf->src, a, sizeof(a));
		addr_str(cf, cf->dst, b, sizeof(b));
		o = json_pack("{s:s,s:s,s:I,s:I}", "from", a, "to", b, "qpn", (json_int_t)cf->dqpn,
			      "cnps", (json_int_t)n);
		nx = calloc(n, sizeof(*nx));
		gb = calloc(n, sizeof(*gb));
		ga = calloc(n, sizeof(*ga));
		if (g && nx && gb && ga) {
			for (q = 0; q < cf->npk; q++) {
				const struct tp *t = &s->p[cf->pk[q]];
				long k = 0;

				if (t->cls != C_CNP)
					continue;
				while (k < (long)g->npk && s->p[g->pk[k]].ts <= t->ts)
					k++;
				if (k < (long)g->npk)
					nx[nn++] = s->p[g->pk[k]].ts - t->ts;
				if (!gap_of(s, g, k - CNP_WINDOW, k, &gb[ng]) &&
				    !gap_of(s, g, k, k + CNP_WINDOW, &ga[ng]))
					ng++;
			}
			json_object_set_new(o, "sender_flow_qpn", json_integer((json_int_t)g->dqpn));
			json_object_set_new(o, "sender_packets", json_integer((json_int_t)g->npk));
			json_object_set_new(o, "next_packet_ns", nn ? json_integer((json_int_t)median(nx, nn)) :
								       json_null());
			json_object_set_new(o, "measured", json_integer((json_int_t)ng));
			if (ng) {
				uint64_t mb = median(gb, ng), ma = median(ga, ng);

				json_object_set_new(o, "gap_before_ns", json_integer((json_int_t)mb));
				json_object_set_new(o, "gap_after_ns", json_integer((json_int_t)ma));
				json_object_set_new(o, "gap_ratio", mb ? json_real((double)ma / (double)mb) :
									 json_null());
			}
		} else {
			json_object_set_new(o, "sender_flow_qpn", json_null());
		}
		free(nx);
		free(gb);
		free(ga);
		json_array_append_new(out, o);
	}
	return out;
}
