// SPDX-License-Identifier: MIT
/* A RoCE packet trace, read and judged (trace.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "ctl/trace/trace.h"
#include "lib/fnv.h"
#include "ebpf/inject_abi.h"
#include "lib/pcapng.h"

/* the injector's classes (inject_abi.h), short */
enum { C_DATA = INJ_CLS_DATA, C_READ_REQ = INJ_CLS_READ_REQ, C_READ_RESP = INJ_CLS_READ_RESP,
       C_ACK = INJ_CLS_ACK, C_NAK = INJ_CLS_NAK, C_ATOMIC = INJ_CLS_ATOMIC, C_CNP = INJ_CLS_CNP,
       C_OTHER = INJ_CLS_OTHER, C_MAX = INJ_CLS_MAX };
static const char *const cls_name[C_MAX] = { "data", "read_req", "read_resp", "ack", "nak",
					     "atomic", "cnp", "other" };
#define VERDICT_NAME(e, name) name,
static const char *const verdict_name[] = { INJ_VERDICTS(VERDICT_NAME) };
#undef VERDICT_NAME

struct tp {
	uint64_t ts, frame;
	uint64_t va;
	uint32_t dqpn, psn, rlen, msn, rule, payload;
	int cap, flow, resent;
	uint8_t op, cls, syn, verdict, ackreq, ecn;
};

/* packets on each side of a CNP whose gaps tell the sender's pace */
#define CNP_WINDOW 16

struct blk {
	uint32_t key;
	uint64_t bits[64];
};

struct flow {
	int cap, v6, peer;
	uint8_t src[16], dst[16];
	uint32_t dqpn, first_psn, last_psn;
	uint64_t packets, resent, req;
	int has_read, has_data;
	int *pk;	/* its packets' indices, in order */
	size_t npk, cpk;
	struct blk *b;	/* the PSNs seen */
	size_t nb;
	size_t last;
};

struct cap {
	char dev[64];
	int dir;	/* 0 ingress, 1 egress, -1 unknown */
	uint64_t packets, resent, lost_records, verdicts[INJ_VERDICT_MAX];
	int opposite;
	long long inj_resent;	/* the hook's own count of resent packets, -1: not given */
};

/*
 * An open-addressing hash of flow indices (flows by their identity; and
 * (flow, PSN) pairs by the flow's addresses and a PSN, for pairing): the
 * analysis is linear in packets and flows, not quadratic in flows (80k QPs
 * in a 7 MB capture took 5.6 s before). Slots hold index + 1 (0: empty) and
 * the key's hash; whoever probes compares the real key.
 */
struct hslot {
	uint64_t h;
	uint32_t v;	/* flow index + 1 */
	uint32_t psn;
};

struct htab {
	struct hslot *s;
	size_t cap, n;	/* cap a power of two, n <= cap / 2 */
};

struct tr {
	struct tp *p;
	size_t np, cp;
	struct flow *f;
	size_t nf, cf;
	struct htab fh;	/* flows by (cap, v6, src, dst, dqpn) */
	struct cap c[PCAPNG_MAX_IF];
	int nc;
	uint64_t t0;
};

static int psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static int is_request(int cls)
{
	return cls == C_DATA || cls == C_READ_REQ || cls == C_ATOMIC;
}

static uint32_t be(const uint8_t *p, int n)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* 1 and *t filled for a RoCEv2 packet; addresses into src/dst */
static int parse(const struct pcapng_pkt *k, struct tp *t, uint8_t *src, uint8_t *dst, int *v6)
{
	const uint8_t *d = k->data, *e, *b;
	uint16_t proto;
	uint32_t iplen;
	size_t at = 14;

	if (!d || k->caplen < 14)	/* (an empty packet has no data: not even d + 0) */
		return 0;
	e = d + k->caplen;
	proto = (uint16_t)be(d + 12, 2);
	if (proto == 0x8100) {
		if (k->caplen < 18)
			return 0;
		proto = (uint16_t)be(d + 16, 2);
		at = 18;
	}
	memset(src, 0, 16);
	memset(dst, 0, 16);
	if (proto == 0x0800) {
		if (d + at + 20 > e || (d[at] & 0x0f) != 5 || d[at + 9] != 17)
			return 0;
		t->ecn = d[at + 1] & 3;
		iplen = be(d + at + 2, 2);
		memcpy(src, d + at + 12, 4);
		memcpy(dst, d + at + 16, 4);
		*v6 = 0;
		at += 20;
	} else if (proto == 0x86dd) {
		if (d + at + 40 > e || d[at + 6] != 17)
			return 0;
		t->ecn = (uint8_t)((be(d + at, 2) >> 4) & 3);
		iplen = be(d + at + 4, 2) + 40;
		memcpy(src, d + at + 8, 16);
		memcpy(dst, d + at + 24, 16);
		*v6 = 1;
		at += 40;
	} else {
		return 0;
	}
	if (d + at + 8 + 12 > e || be(d + at + 2, 2) != INJ_ROCE_V2_PORT)
		return 0;
	at += 8;
	b = d + at;
	t->op = b[0];
	t->dqpn = be(b + 5, 3);
	t->ackreq = b[8] >> 7;
	t->psn = be(b + 9, 3);
	at += 12;
	/* headers after the BTH (IBA 9.2-9.3): DETH (UD), RETH, AtomicETH, AETH */
	{
		uint8_t tt = t->op >> 5, o = t->op & 0x1f;
		int reth = 0, aeth = 0, deth = tt == 3, atomic = 0, ieth_imm = 0;

		if (tt == 0 || tt == 1) {
			reth = o == 0x06 || o == 0x0a || o == 0x0b || o == 0x0c || (tt == 1 && (o == 0x06 || o == 0x0a || o == 0x0b));
			aeth = tt == 0 && (o == 0x0d || o == 0x0f || o == 0x10 || o == 0x11 || o == 0x12);
			atomic = tt == 0 && (o == 0x13 || o == 0x14);
			ieth_imm = o == 0x03 || o == 0x05 || o == 0x09 || o == 0x0b || o == 0x16 || o == 0x17;
		}
		if (tt == 3 && o == 0x05)
			ieth_imm = 1;
		if (deth)
			at += 8;
		if (reth && d + at + 16 <= e) {
			t->va = ((uint64_t)be(d + at, 4) << 32) | be(d + at + 4, 4);
			t->rlen = be(d + at + 12, 4);
			at += 16;
		}
		if (atomic) {
			if (d + at + 28 <= e) {
				t->va = ((uint64_t)be(d + at, 4) << 32) | be(d + at + 4, 4);
				t->rlen = 8;
			}
			at += 28;
		}
		if (aeth && d + at + 4 <= e) {
			t->syn = d[at];
			t->msn = be(d + at + 1, 3);
			at += 4;
		} else if (aeth) {
			at += 4;
		}
		if (t->op == 0x12)
			at += 8;	/* AtomicAckETH */
		if (ieth_imm)
			at += 4;
	}
	t->cls = inj_classify(t->op, t->syn);
	{
		/* payload: the IP length less the headers, the pad count and the ICRC */
		size_t hdr = at - (proto == 0x0800 ? 14 : 14) - (k->caplen >= 18 && be(d + 12, 2) == 0x8100 ? 4 : 0);
		uint32_t pad = (b[1] >> 4) & 3;

		t->payload = iplen > hdr + 4 + pad ? iplen - (uint32_t)hdr - 4 - pad : 0;
	}
	return 1;
}

static void verdict_of(const char *c, struct tp *t)
{
	const char *v = strstr(c, "verdict="), *r = strstr(c, "rule=");
	int i;

	t->verdict = INJ_VERDICT_PASS;
	if (v) {
		v += 8;
		for (i = 0; i < INJ_VERDICT_MAX; i++) {
			size_t n = strlen(verdict_name[i]);

			if (!strncmp(v, verdict_name[i], n) && (v[n] == ' ' || !v[n]))
				t->verdict = (uint8_t)i;
		}
	}
	t->rule = r ? (uint32_t)strtoul(r + 5, NULL, 10) : 0;
}

/* the hash of a flow's addresses (and cap, family), then of more words */
static uint64_t addr_hash(int cap, int v6, const uint8_t *src, const uint8_t *dst)
{
	uint64_t h;
	int k[2] = { cap, v6 };

	h = fnv1a(FNV_OFFSET, k, sizeof(k));
	h = fnv1a(h, src, 16);
	return fnv1a(h, dst, 16);
}

static int ht_grow(struct htab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, i, j;
	struct hslot *ns = calloc(cap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		if (!t->s[i].v)
			continue;
		for (j = t->s[i].h & (cap - 1); ns[j].v; j = (j + 1) & (cap - 1))
			;
		ns[j] = t->s[i];
	}
	free(t->s);
	t->s = ns;
	t->cap = cap;
	return 0;
}

static int ht_add(struct htab *t, uint64_t h, uint32_t v, uint32_t psn)
{
	size_t j;

	if ((t->n + 1) * 2 > t->cap && ht_grow(t))
		return -ENOMEM;
	for (j = h & (t->cap - 1); t->s[j].v; j = (j + 1) & (t->cap - 1))
		;
	t->s[j] = (struct hslot){ h, v, psn };
	t->n++;
	return 0;
}

static uint64_t flow_hash(int cap, int v6, const uint8_t *src, const uint8_t *dst, uint32_t dqpn)
{
	return fnv1a(addr_hash(cap, v6, src, dst), &dqpn, sizeof(dqpn));
}

static int flow_of(struct tr *s, int cap, const uint8_t *src, const uint8_t *dst, int v6,
		   uint32_t dqpn)
{
	uint64_t h = flow_hash(cap, v6, src, dst, dqpn);
	size_t j;
	struct flow *f;

	for (j = s->fh.cap ? h & (s->fh.cap - 1) : 0; s->fh.cap && s->fh.s[j].v;
	     j = (j + 1) & (s->fh.cap - 1)) {
		f = &s->f[s->fh.s[j].v - 1];
		if (s->fh.s[j].h == h && f->cap == cap && f->dqpn == dqpn && f->v6 == v6 &&
		    !memcmp(f->src, src, 16) && !memcmp(f->dst, dst, 16))
			return (int)(s->fh.s[j].v - 1);
	}
	if (ht_add(&s->fh, h, (uint32_t)s->nf + 1, 0))
		return -ENOMEM;
	if (s->nf == s->cf) {
		size_t n = s->cf ? s->cf * 2 : 16;
		struct flow *nf = realloc(s->f, n * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		s->f = nf;
		s->cf = n;
	}
	f = &s->f[s->nf];
	memset(f, 0, sizeof(*f));
	f->cap = cap;
	f->v6 = v6;
	f->dqpn = dqpn;
	f->peer = -1;
	memcpy(f->src, src, 16);
	memcpy(f->dst, dst, 16);
	return (int)s->nf++;
}

/* the PSN's bit in the flow's set: *was its old value; -1 no memory */
static int psn_mark(struct flow *f, uint32_t psn, int *was)
{
	uint32_t key = psn >> 12, bit = psn & 4095;
	struct blk *b = NULL;
	size_t i;

	if (f->nb && f->b[f->last].key == key)
		b = &f->b[f->last];
	for (i = 0; !b && i < f->nb; i++)
		if (f->b[i].key == key) {
			b = &f->b[i];
			f->last = i;
		}
	if (!b) {
		struct blk *nb = realloc(f->b, (f->nb + 1) * sizeof(*nb));

		if (!nb)
			return -ENOMEM;
		f->b = nb;
		b = &f->b[f->nb];
		memset(b, 0, sizeof(*b));
		b->key = key;
		f->last = f->nb++;
	}
	*was = (int)((b->bits[bit >> 6] >> (bit & 63)) & 1);
	b->bits[bit >> 6] |= 1ull << (bit & 63);
	return 0;
}

static int push(struct flow *f, int idx)
{
	if (f->npk == f->cpk) {
		size_t n = f->cpk ? f->cpk * 2 : 64;
		int *np = realloc(f->pk, n * sizeof(*np));

		if (!np)
			return -ENOMEM;
		f->pk = np;
		f->cpk = n;
	}
	f->pk[f->npk++] = idx;
	return 0;
}

static void addr_str(const struct flow *f, const uint8_t *a, char *buf, size_t len)
{
	if (!inet_ntop(f->v6 ? AF_INET6 : AF_INET, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* the flows at the opposite capture point paired with each flow: the one
 * whose responses answer most of this flow's PSNs (or whose requests this
 * flow's responses answer); the first such flow on a tie.
 *
 * score(f, g) = c(g, f) + c(f, g), c(a, b) = how many of a's responses have a
 * PSN b has seen, over flows at opposite points with swapped addresses. Each
 * response looks its (addresses, PSN) up in an index of every flow's PSNs,
 * and the scores of the pairs it finds add up in a hash: linear in packets,
 * where the loop over every pair of flows was quadratic. */
static uint64_t psn_key(const struct flow *f, uint32_t psn)
{
	return fnv1a(addr_hash(f->cap, f->v6, f->src, f->dst), &psn, sizeof(psn));
}

static int pair(struct tr *s)
{
	struct htab idx = { 0 }, sc = { 0 };
	uint64_t *score = NULL, *best_n;
	size_t nscore = 0;	/* pairs score[] has room for */
	int *best, r = -ENOMEM;
	size_t i, j, k;

	best = calloc(s->nf + 1, sizeof(*best));
	best_n = calloc(s->nf + 1, sizeof(*best_n));
	if (!best || !best_n)
		goto out;
	/* every flow's distinct PSNs: a resent packet's was seen before in its
	 * flow (psn_mark); a CNP's 0 is no PSN */
	for (i = 0; i < s->nf; i++) {
		const struct flow *f = &s->f[i];

		for (k = 0; k < f->npk; k++) {
			const struct tp *t = &s->p[f->pk[k]];

			if (t->cls != C_CNP && !t->resent &&
			    ht_add(&idx, psn_key(f, t->psn), (uint32_t)i + 1, t->psn))
				goto out;
		}
	}
	/* c(a, b) for every response of every flow a: the pair's score in sc
	 * (key: the pair; v: its slot in score[]) */
	for (i = 0; i < s->nf; i++) {
		const struct flow *a = &s->f[i];
		int opp = s->c[a->cap].opposite;

		if (opp < 0)
			continue;
		for (k = 0; k < a->npk; k++) {
			const struct tp *t = &s->p[a->pk[k]];
			uint64_t h = fnv1a(addr_hash(opp, a->v6, a->dst, a->src), &t->psn, sizeof(t->psn));

			if (is_request(t->cls) || t->cls == C_CNP)
				continue;
			for (j = idx.cap ? h & (idx.cap - 1) : 0; idx.cap && idx.s[j].v;
			     j = (j + 1) & (idx.cap - 1)) {
				const struct flow *b = &s->f[idx.s[j].v - 1];
				uint32_t lo, hi;
				uint64_t ph;
				size_t q;

				if (idx.s[j].h != h || idx.s[j].psn != t->psn || b->cap != opp ||
				    b->v6 != a->v6 || memcmp(b->src, a->dst, 16) ||
				    memcmp(b->dst, a->src, 16))
					continue;
				lo = (uint32_t)(i < idx.s[j].v - 1 ? i : idx.s[j].v - 1);
				hi = (uint32_t)(i < idx.s[j].v - 1 ? idx.s[j].v - 1 : i);
				ph = ((uint64_t)lo << 32 | hi) * 0x9e3779b97f4a7c15ULL;
				for (q = sc.cap ? ph & (sc.cap - 1) : 0; sc.cap && sc.s[q].v;
				     q = (q + 1) & (sc.cap - 1))
					if (sc.s[q].h == ph && score[2 * (sc.s[q].v - 1)] ==
								  ((uint64_t)lo << 32 | hi))
						break;
				if (!sc.cap || !sc.s[q].v) {
					if (sc.n == nscore) {	/* doubled: amortised */
						uint64_t *ns;

						nscore = nscore ? 2 * nscore : 1024;
						ns = realloc(score, nscore * 2 * sizeof(*ns));
						if (!ns)
							goto out;
						score = ns;
					}
					score[2 * sc.n] = (uint64_t)lo << 32 | hi;
					score[2 * sc.n + 1] = 0;
					if (ht_add(&sc, ph, (uint32_t)sc.n + 1, 0))
						goto out;
					q = sc.n - 1;
				} else {
					q = sc.s[q].v - 1;
				}
				score[2 * q + 1]++;
			}
		}
	}
	/* each flow's best partner: the highest score, the lowest index on a tie */
	for (i = 0; i < s->nf; i++)
		best[i] = -1;
	for (k = 0; k < sc.n; k++) {
		uint32_t lo = (uint32_t)(score[2 * k] >> 32), hi = (uint32_t)score[2 * k];
		uint64_t n = score[2 * k + 1];
		uint32_t e[2][2] = { { lo, hi }, { hi, lo } };

		for (int w = 0; w < 2; w++) {
			uint32_t f = e[w][0], g = e[w][1];

			if (f == g && w)
				continue;
			if (n > best_n[f] || (n == best_n[f] && best[f] >= 0 && (int)g < best[f])) {
				best_n[f] = n;
				best[f] = (int)g;
			}
		}
	}
	for (i = 0; i < s->nf; i++)
		s->f[i].peer = s->c[s->f[i].cap].opposite < 0 ? -1 : best[i];
	r = 0;
out:
	free(idx.s);
	free(sc.s);
	free(score);
	free(best);
	free(best_n);
	return r;
}

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

	return is_request(t->cls) && t->resent && psn_cmp(t->psn, l->psn) <= 0;
}

static void lat(json_t *o, const char *k, uint64_t a, uint64_t b)
{
	json_object_set_new(o, k, b >= a ? json_integer((json_int_t)(b - a)) : json_null());
}

/* one loss: what the NIC did about it */
static json_t *loss(struct tr *s, const struct tp *l, size_t pos)
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

		r = after(s, f, l->ts, pos + 1, same_psn, l);
		for (q = 0; r < 0 && q < pos; q++) {	/* an earlier copy got through */
			const struct tp *t = &s->p[f->pk[q]];

			if (same_psn(t, l) && t->verdict != INJ_VERDICT_DROP &&
			    t->verdict != INJ_VERDICT_CORRUPT)
				trigger = "duplicate";
		}
		if (g)
			n = after(s, g, l->ts, (size_t)first_ts(s, g, l->ts), nak_seq_for, l);
		if (r >= 0) {
			const struct tp *rs = &s->p[f->pk[r]];

			trigger = n >= 0 && s->p[g->pk[n]].ts <= rs->ts ? "nak" : "timeout";
			lat(o, "retransmission_latency_ns", l->ts, rs->ts);
			json_object_set_new(o, "resend_frame", json_integer((json_int_t)rs->frame));
			if (!strcmp(trigger, "nak")) {
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
static void go_back_n(struct tr *s, const struct flow *f, json_t *res)
{
	const struct flow *g = f->peer >= 0 ? &s->f[f->peer] : NULL;
	json_t *dev = json_object_get(res, "deviations");
	uint32_t maxpsn = 0, prev = 0, acked = 0, nak = 0;
	int have = 0, in_ep = 0, have_ack = 0, nak_pending = 0;
	size_t k, gi = 0;
	json_int_t episodes = 0;
	struct flow *tmp = calloc(1, sizeof(*tmp));

	if (!tmp)
		return;
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
		if (psn_mark(tmp, t->psn, &was))
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
	free(tmp->b);
	free(tmp);
	json_object_set_new(res, "episodes",
			    json_integer(json_integer_value(json_object_get(res, "episodes")) +
					 episodes));
}

/* READ: a READ request re-issued after lost responses asks for the first
 * response PSN the requester had not received, from the matching address,
 * for the rest of the length */
static void read_check(struct tr *s, const struct flow *f, json_t *res)
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
static json_t *lat_summary(json_t *losses, const char *key)
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
static json_t *cnp_reaction(struct tr *s, int cap)
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

static void tr_free(struct tr *s)
{
	size_t i;

	for (i = 0; i < s->nf; i++) {
		free(s->f[i].pk);
		free(s->f[i].b);
	}
	free(s->f);
	free(s->p);
	free(s->fh.s);
}

json_t *trace_analyze(const char *path, const json_t *nodes, char *err, size_t errlen)
{
	struct pcapng_r *r = pcapng_open(path, err, errlen);
	struct pcapng_pkt k;
	struct tr s = { 0 };
	json_t *out, *caps;
	int rc, i;
	size_t j;

	if (!r)
		return NULL;
	while ((rc = pcapng_next(r, &k, err, errlen)) == 1) {
		uint8_t src[16], dst[16];
		struct tp t = { 0 };
		int v6 = 0, was, fi;
		const struct pcapng_if *ifc = pcapng_iface(r, (int)k.ifid);

		if (!ifc || ifc->linktype != PCAPNG_LINKTYPE_ETHERNET || !parse(&k, &t, src, dst, &v6))
			continue;
		verdict_of(k.comment, &t);
		t.ts = k.ts_ns;
		t.frame = k.frame;
		t.cap = (int)k.ifid;
		if (!s.np || t.ts < s.t0)
			s.t0 = t.ts;
		fi = flow_of(&s, t.cap, src, dst, v6, t.dqpn);
		was = 0;	/* a CNP (PSN 0 always) is never a resend */
		if (fi < 0 || (t.cls != C_CNP && psn_mark(&s.f[fi], t.psn, &was)))
			goto nomem;
		t.flow = fi;
		t.resent = was;
		if (s.np == s.cp) {
			size_t n = s.cp ? s.cp * 2 : 1024;
			struct tp *np = realloc(s.p, n * sizeof(*np));

			if (!np)
				goto nomem;
			s.p = np;
			s.cp = n;
		}
		s.p[s.np] = t;
		if (push(&s.f[fi], (int)s.np))
			goto nomem;
		s.np++;
	}
	if (rc < 0) {
		char e2[256];

		snprintf(e2, sizeof(e2), "%s", err);
		snprintf(err, errlen, "%s: %s", path, e2);
		pcapng_close(r);
		tr_free(&s);
		return NULL;
	}
	s.nc = pcapng_nif(r);
	for (i = 0; i < s.nc; i++) {
		const struct pcapng_if *ifc = pcapng_iface(r, i);
		char dir[32] = "";

		s.c[i].dir = -1;
		s.c[i].opposite = -1;
		snprintf(s.c[i].dev, sizeof(s.c[i].dev), "%s", ifc->name);
		if (sscanf(ifc->desc, "%*63s %31s", dir) == 1)
			s.c[i].dir = !strcmp(dir, "egress") ? 1 : !strcmp(dir, "ingress") ? 0 : -1;
		s.c[i].lost_records = ifc->have_stats ? ifc->drop : 0;
		s.c[i].inj_resent = -1;
		if (sscanf(ifc->isb_comment, "injector resent=%lld", &s.c[i].inj_resent) != 1)
			s.c[i].inj_resent = -1;
	}
	for (i = 0; i < s.nc; i++) {
		int o;

		for (o = 0; o < s.nc; o++)
			if (o != i && s.c[i].dir >= 0 && s.c[o].dir == 1 - s.c[i].dir &&
			    !strcmp(s.c[o].dev, s.c[i].dev))
				s.c[i].opposite = o;
	}
	for (j = 0; j < s.np; j++) {
		struct tp *t = &s.p[j];
		struct flow *f = &s.f[t->flow];

		s.c[t->cap].packets++;
		s.c[t->cap].verdicts[t->verdict < INJ_VERDICT_MAX ? t->verdict : 0]++;
		f->packets++;
		if (t->resent) {
			s.c[t->cap].resent++;
			f->resent++;
		}
		if (f->packets == 1)
			f->first_psn = t->psn;
		f->last_psn = t->psn;
		if (t->cls == C_READ_REQ)
			f->has_read = 1;
		if (t->cls == C_DATA)
			f->has_data = 1;
		if (is_request(t->cls))
			f->req++;
	}
	if (pair(&s))
		goto nomem;
	out = json_pack("{s:s,s:[]}", "file", path, "captures");
	caps = json_object_get(out, "captures");
	for (i = 0; i < s.nc; i++) {
		json_t *c, *qps, *losses, *verd, *trig, *gbn, *rd;
		const json_t *node = nodes ? json_object_get(nodes, s.c[i].dev) : NULL;
		json_int_t nresent_req = 0;
		int v;

		c = json_pack("{s:s,s:i,s:s,s:s,s:O,s:I,s:I,s:I}", "file", path, "iface", i, "dev",
			      s.c[i].dev, "dir", s.c[i].dir == 1 ? "egress" : s.c[i].dir == 0 ?
			      "ingress" : "unknown", "node", node ? node : json_null(), "packets",
			      (json_int_t)s.c[i].packets, "resent_packets", (json_int_t)s.c[i].resent,
			      "lost_records", (json_int_t)s.c[i].lost_records);
		verd = json_object();
		for (v = 0; v < INJ_VERDICT_MAX; v++)
			if (s.c[i].verdicts[v])
				json_object_set_new(verd, verdict_name[v],
						    json_integer((json_int_t)s.c[i].verdicts[v]));
		json_object_set_new(c, "verdicts", verd);
		{	/* per rule: the packets it matched, by verdict */
			json_t *rules = json_object();

			for (j = 0; j < s.np; j++) {
				const struct tp *t = &s.p[j];
				char id[16];
				json_t *ro;

				if (t->cap != i || !t->rule)
					continue;
				snprintf(id, sizeof(id), "%u", t->rule);
				ro = json_object_get(rules, id);
				if (!ro) {
					ro = json_pack("{s:I}", "matched", (json_int_t)0);
					json_object_set_new(rules, id, ro);
				}
				json_object_set_new(ro, "matched", json_integer(json_integer_value(json_object_get(ro, "matched")) + 1));
				if (t->verdict != INJ_VERDICT_PASS)
					json_object_set_new(ro, verdict_name[t->verdict],
							    json_integer(json_integer_value(json_object_get(ro, verdict_name[t->verdict])) + 1));
			}
			json_object_set_new(c, "rules", rules);
		}
		qps = json_array();
		losses = json_array();
		gbn = json_pack("{s:i,s:i,s:[]}", "checked_qps", 0, "episodes", 0, "deviations");
		rd = json_pack("{s:i,s:[]}", "rereads", 0, "deviations");
		for (j = 0; j < s.nf; j++) {
			struct flow *f = &s.f[j];
			char a[64], b[64];
			size_t q;

			if (f->cap != i)
				continue;
			addr_str(f, f->src, a, sizeof(a));
			addr_str(f, f->dst, b, sizeof(b));
			json_array_append_new(qps, json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:o}", "src", a,
							     "dst", b, "qpn", (json_int_t)f->dqpn,
							     "packets", (json_int_t)f->packets,
							     "resent_packets", (json_int_t)f->resent,
							     "first_psn", (json_int_t)f->first_psn,
							     "last_psn", (json_int_t)f->last_psn,
							     "peer_qpn", f->peer >= 0 ?
							     json_integer((json_int_t)s.f[f->peer].dqpn) :
							     json_null()));
			for (q = 0; q < f->npk; q++) {
				const struct tp *t = &s.p[f->pk[q]];

				if (t->resent && (is_request(t->cls) || t->cls == C_READ_RESP))
					nresent_req++;
				if (t->verdict == INJ_VERDICT_DROP || t->verdict == INJ_VERDICT_CORRUPT)
					json_array_append_new(losses, loss(&s, t, q));
			}
			if (f->has_data && !f->has_read) {
				json_object_set_new(gbn, "checked_qps",
						    json_integer(json_integer_value(json_object_get(gbn, "checked_qps")) + 1));
				go_back_n(&s, f, gbn);
			}
			if (f->has_read)
				read_check(&s, f, rd);
		}
		trig = json_object();
		for (j = 0; j < json_array_size(losses); j++) {
			const char *tg = json_string_value(json_object_get(json_array_get(losses, j),
									   "trigger"));

			json_object_set_new(trig, tg, json_integer(json_integer_value(json_object_get(trig, tg)) + 1));
		}
		json_object_set_new(c, "resent_requests", json_integer(nresent_req));
		if (s.c[i].inj_resent >= 0)	/* the hook's own count (injector/trace.c) */
			json_object_set_new(c, "injector_resent", json_integer(s.c[i].inj_resent));
		json_object_set_new(c, "qps", qps);
		json_object_set_new(c, "loss_triggers", trig);
		json_object_set_new(c, "latency_ns", json_pack("{s:o,s:o,s:o}", "retransmission",
							       lat_summary(losses, "retransmission_latency_ns"),
							       "nak_generation",
							       lat_summary(losses, "nak_generation_latency_ns"),
							       "nak_response",
							       lat_summary(losses, "nak_response_latency_ns")));
		json_object_set_new(c, "losses", losses);
		json_object_set_new(c, "go_back_n", gbn);
		json_object_set_new(c, "read_retransmission", rd);
		{
			json_int_t ncnp = 0;

			for (j = 0; j < s.np; j++)
				ncnp += s.p[j].cap == i && s.p[j].cls == C_CNP;
			json_object_set_new(c, "cnp_packets", json_integer(ncnp));
			if (ncnp)
				json_object_set_new(c, "cnp_reaction", cnp_reaction(&s, i));
		}
		json_array_append_new(caps, c);
	}
	pcapng_close(r);
	tr_free(&s);
	return out;
nomem:
	pcapng_close(r);
	tr_free(&s);
	snprintf(err, errlen, "%s: out of memory", path);
	return NULL;
}

json_int_t trace_retransmissions(const json_t *a)
{
	json_t *caps = json_object_get(a, "captures"), *c;
	json_int_t n = 0;
	size_t i;

	json_array_foreach(caps, i, c)
		if (!strcmp(json_string_value(json_object_get(c, "dir")) ?: "", "egress"))
			n += json_integer_value(json_object_get(c, "resent_requests"));
	return n;
}

void trace_print(FILE *f, const json_t *a)
{
	json_t *caps = json_object_get(a, "captures"), *c;
	size_t i;

	fprintf(f, "%s\n", json_string_value(json_object_get(a, "file")));
	fprintf(f, "  %-10s %-8s %-7s %9s %7s %6s %6s  %s\n", "DEV", "DIR", "NODE", "PACKETS",
		"RESENT", "LOST", "GBN", "LOSSES BY TRIGGER (median retransmission latency)");
	json_array_foreach(caps, i, c) {
		json_t *tr = json_object_get(c, "loss_triggers"), *v, *gb = json_object_get(c, "go_back_n");
		json_t *m = json_object_get(json_object_get(json_object_get(c, "latency_ns"),
							    "retransmission"), "median");
		const char *k;
		int first = 1;
		size_t di;

		fprintf(f, "  %-10s %-8s %-7s %9lld %7lld %6zu %6s  ",
			json_string_value(json_object_get(c, "dev")),
			json_string_value(json_object_get(c, "dir")),
			json_string_value(json_object_get(c, "node")) ?: "-",
			(long long)json_integer_value(json_object_get(c, "packets")),
			(long long)json_integer_value(json_object_get(c, "resent_packets")),
			json_array_size(json_object_get(c, "losses")),
			!json_integer_value(json_object_get(gb, "checked_qps")) ? "-" :
			json_array_size(json_object_get(gb, "deviations")) ? "DEV" : "ok");
		json_object_foreach(tr, k, v) {
			fprintf(f, "%s%s %lld", first ? "" : ", ", k, (long long)json_integer_value(v));
			first = 0;
		}
		if (json_is_integer(m))
			fprintf(f, " (%.3f ms)", (double)json_integer_value(m) / 1e6);
		if (json_integer_value(json_object_get(c, "lost_records")))
			fprintf(f, "  [%lld records lost: incomplete]",
				(long long)json_integer_value(json_object_get(c, "lost_records")));
		fputc('\n', f);
		json_array_foreach(json_object_get(gb, "deviations"), di, v)
			fprintf(f, "    go-back-N: qpn 0x%llx frame %lld: %s\n",
				(long long)json_integer_value(json_object_get(v, "qpn")),
				(long long)json_integer_value(json_object_get(v, "frame")),
				json_string_value(json_object_get(v, "what")));
		json_array_foreach(json_object_get(json_object_get(c, "read_retransmission"), "deviations"), di, v)
			fprintf(f, "    READ: qpn 0x%llx frame %lld: %s\n",
				(long long)json_integer_value(json_object_get(v, "qpn")),
				(long long)json_integer_value(json_object_get(v, "frame")),
				json_string_value(json_object_get(v, "what")));
		json_array_foreach(json_object_get(c, "cnp_reaction"), di, v) {
			json_t *nx = json_object_get(v, "next_packet_ns");

			fprintf(f, "    CNP: %lld from %s to %s qpn 0x%llx: ",
				(long long)json_integer_value(json_object_get(v, "cnps")),
				json_string_value(json_object_get(v, "from")),
				json_string_value(json_object_get(v, "to")),
				(long long)json_integer_value(json_object_get(v, "qpn")));
			if (!json_is_integer(json_object_get(v, "sender_flow_qpn"))) {
				fprintf(f, "its sender's packets are not in this trace\n");
				continue;
			}
			if (json_is_integer(nx))
				fprintf(f, "the sender's next packet %.1f us later",
					(double)json_integer_value(nx) / 1e3);
			if (json_integer_value(json_object_get(v, "measured")))
				fprintf(f, ", its packet gap %.1f us before, %.1f us after (x%.2f; a "
					"DCQCN sender spaces out, rxe has none)",
					(double)json_integer_value(json_object_get(v, "gap_before_ns")) / 1e3,
					(double)json_integer_value(json_object_get(v, "gap_after_ns")) / 1e3,
					json_real_value(json_object_get(v, "gap_ratio")));
			fputc('\n', f);
		}
	}
}
