/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The candidate rules of a packet: the interval and radix tables by
 * field (inject_abi.h), ANDed into the rules a packet can match.
 * Part of inject.bpf.c, the one program: included there, nowhere else.
 */
#ifndef RTB_INJECT_INDEX_BPF_H
#define RTB_INJECT_INDEX_BPF_H

/*
 * The rules (a mask) of table t whose range covers v: the segment of v by
 * a 4-way search (inject_abi.h), without a branch (BPF has no conditional
 * set, and every branch would double the verifier's paths): each level
 * compares v with three segment starts at once -- v - lo[n] goes below 0
 * (bit 63; all values are below INJ_ITAB_PAD = 2^63 - 1) when v < lo[n] --
 * and moves by as many steps as starts were not above v. Half the
 * dependent loads of a binary search. Inlined: every call and return costs
 * ~10 ns on a host with SRSO's safe RET, more than the search.
 */
static __always_inline __u64 itab_find(__u32 t, __u64 v)
{
	struct inj_itab *tab = bpf_map_lookup_elem(&inj_itabs, &t);
	__u32 j = 0, step, i, m = INJ_ITAB_SEGS - 1;
	__u64 above;

	if (!tab)
		return ~0ULL;	/* cannot happen; the full check still applies */
	step = tab->top;
	for (i = 0; i < 4 && step; i++, step >>= 2) {	/* log4(segments) levels */
		above = ((v - tab->lo[(j + step) & m]) >> 63) +
			((v - tab->lo[(j + 2 * step) & m]) >> 63) +
			((v - tab->lo[(j + 3 * step) & m]) >> 63);
		j += step * (3 - (__u32)above);
	}
	return tab->mask[j & m];
}

/* the rules of radix table t that cover v (inject_abi.h): two loads */
static __always_inline __u64 rtab_find(__u32 t, __u64 v)
{
	struct inj_rtab *tab = bpf_map_lookup_elem(&inj_rtabs, &t);
	__u64 hi = v >> INJ_RADIX_BITS, lo = v;
	struct inj_rtab_hi *h;
	struct inj_rtab_lo *l;

	if (!tab || v > INJ_RADIX_MAX)
		return ~0ULL;	/* cannot happen; the full check still applies */
	/* the masks kept: clang drops them after the test above, and a
	 * verifier that lost the test's bound (6.1's) refused the access */
	barrier_var(hi);
	barrier_var(lo);
	h = &tab->hi[hi & (INJ_RADIX_N - 1)];
	l = &tab->lo[lo & (INJ_RADIX_N - 1)];
	return h->f | (h->a & l->ge) | (h->b & l->le) | (h->ab & l->ge & l->le);
}

/*
 * The rules field f lets through for value v: all when no rule restricts
 * f. cfg->itab is read afresh each time and not kept: what a branch on it
 * teaches the verifier dies with it, so the paths after every field's test
 * stay one state (kept, they were 2^fields: over a million instructions).
 */
static __always_inline __u64 by_field(const struct inj_cfg *cfg, __u32 f, __u64 v)
{
	__u32 itab = *(const volatile __u32 *)&cfg->itab;

	if (!(itab & (1u << f)))
		return ~0ULL;
	if (f < INJ_F_RADIX)
		return rtab_find((itab >> 31) * INJ_F_RADIX + f, v);
	return itab_find((itab >> 31) * INJ_F_MAX + f, v);
}

struct scan {
	struct pkt p;
	__u64 cand;
	__u64 now;
	__s32 found;
	__u32 pad;
};

/*
 * The candidates (sc->cand: the hook's and the class's rules on entry) cut
 * down by every other indexed field (inject_abi.h); sc->now set when a
 * window asked for the clock. 0: no candidate left.
 */
static __always_inline int index_cands(struct scan *sc, const struct inj_cfg *cfg)
{
	struct pkt *p = &sc->p;
	__u64 cand, qm = 0;
	__u32 k;

	cand = sc->cand;
	if (p->ecn != 3)
		cand &= ~cfg->ce_mask;
	if (!p->qidx)
		cand &= ~cfg->rel_mask;
	if (!cand)
		return 0;
	if (cfg->qpn_exact) {
		struct inj_qpn_bucket *b;

		k = p->dqpn & (INJ_QPN_BUCKETS - 1);
		b = bpf_map_lookup_elem(&inj_qpn_mask, &k);
		if (b && b->used && b->qpn == p->dqpn)
			qm = b->mask;
	}
	if (*(const volatile __u32 *)&cfg->itab & (1u << INJ_F_QPN))
		qm |= by_field(cfg, INJ_F_QPN, p->dqpn);
	else
		qm |= cfg->qpn_any_mask;
	cand &= qm;
	if (!(*(const volatile __u32 *)&cfg->itab & ((1u << INJ_F_MAX) - 1 - (1u << INJ_F_QPN))))
		goto out;	/* no rule restricts another field (exact QPNs only, say) */
	/* the other fields, while candidates are left */
	if (cand)
		cand &= by_field(cfg, INJ_F_OPCODE, p->opcode);
	if (cand)
		cand &= by_field(cfg, INJ_F_PSN, p->psn);
	if (cand)
		cand &= by_field(cfg, INJ_F_LEN, p->len);
	if (cand)
		cand &= by_field(cfg, INJ_F_SRC, p->saddr);
	if (cand)
		cand &= by_field(cfg, INJ_F_DST, p->daddr);
	if (cand && p->qidx) {	/* rules on tracked fields need a tracked packet */
		cand &= by_field(cfg, INJ_F_RPSN, p->rpsn);
		if (cand)
			cand &= by_field(cfg, INJ_F_QIDX, p->qidx);
		if (cand)
			cand &= by_field(cfg, INJ_F_TX, p->tx);
	}
	if (cand && (*(const volatile __u32 *)&cfg->itab & (1u << INJ_F_TIME))) {
		/* the clock only when a window asks: bpf_ktime_get_ns costs ~10 ns */
		if (!sc->now)
			sc->now = bpf_ktime_get_ns();
		cand &= by_field(cfg, INJ_F_TIME, sc->now);
	}
out:
	sc->cand = cand;
	return cand != 0;
}

static __always_inline int ctz64(__u64 x)
{
	int n = 0;

	if (!(x & 0xffffffffULL)) { n += 32; x >>= 32; }
	if (!(x & 0xffffULL)) { n += 16; x >>= 16; }
	if (!(x & 0xffULL)) { n += 8; x >>= 8; }
	if (!(x & 0xfULL)) { n += 4; x >>= 4; }
	if (!(x & 0x3ULL)) { n += 2; x >>= 2; }
	if (!(x & 0x1ULL)) { n += 1; }
	return n;
}

#endif
