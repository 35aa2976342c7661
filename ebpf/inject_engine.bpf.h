/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The rule engine, apart from how a packet is held: the random draws, a
 * rule's match and selection, the scan over the candidates, per-QP
 * tracking, and the rule that takes a packet. The tc program (inject.bpf.c)
 * and the XDP forwarder act on what it picks.
 * Included by the programs only, after the maps, parser and index.
 */
#ifndef RTB_INJECT_ENGINE_BPF_H
#define RTB_INJECT_ENGINE_BPF_H

static __always_inline __u32 rnd(void)
{
	struct inj_cfg *cfg;
	struct prng *st;
	__u32 k = 0;
	__u64 x;

	st = bpf_map_lookup_elem(&inj_prng, &k);
	cfg = bpf_map_lookup_elem(&inj_cfg, &k);
	if (!st || !cfg)
		return bpf_get_prandom_u32();
	if (!st->s || st->gen != cfg->generation) {
		/* a fixed seed makes every run of a test draw the same sequence */
		st->s = cfg->seed ? cfg->seed * 0x9e3779b97f4a7c15ULL + bpf_get_smp_processor_id() + 1 :
				    ((__u64)bpf_get_prandom_u32() << 32) | bpf_get_prandom_u32() | 1;
		st->gen = cfg->generation;
	}
	/* xorshift64* */
	x = st->s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	st->s = x;
	return (__u32)((x * 0x2545f4914f6cdd1dULL) >> 32);
}

static __always_inline int chance(__u32 p)
{
	if (p == INJ_PROB_ONE)
		return 1;
	return p && rnd() < p;
}

/* a packet of the responder's: it carries the requester's PSNs */
static __always_inline __u32 is_response(const struct pkt *p)
{
	return p->cls == INJ_CLS_ACK || p->cls == INJ_CLS_NAK || p->cls == INJ_CLS_READ_RESP ||
	       (p->cls == INJ_CLS_ATOMIC && (p->opcode & 0x1f) == 0x12);
}

/* the clock, read once a packet and only when something asks: about 10 ns */
static __always_inline void clock_once(__u64 *now)
{
	if (!*now)
		*now = bpf_ktime_get_ns();
}

static __always_inline int matches(const struct inj_rule *r, const struct pkt *p, __u64 *now)
{
	__u32 psn = p->psn;

	if (!((r->class_mask ? r->class_mask : INJ_CLS_ROCE_MASK) & (1u << p->cls)))
		return 0;
	if (p->cls >= INJ_CLS_MAX &&	/* TCP, UDP: either port in the range */
	    (p->sport < r->port_lo || p->sport > r->port_hi) &&
	    (p->dport < r->port_lo || p->dport > r->port_hi))
		return 0;
	if (r->opcode >= 0 && r->opcode != p->opcode)
		return 0;
	if (p->dqpn < r->qpn_lo || p->dqpn > r->qpn_hi)
		return 0;
	if (r->rel) {	/* a packet the program could not track matches no such rule */
		if (!p->qidx)
			return 0;
		if ((r->rel & INJ_REL_QP) && (p->qidx < r->qp_lo || p->qidx > r->qp_hi))
			return 0;
		if ((r->rel & INJ_REL_TX) && (p->tx < r->tx_lo || p->tx > r->tx_hi))
			return 0;
		if ((r->rel & INJ_REL_KIND) &&
		    !(r->rel & (is_response(p) ? INJ_REL_RESP : INJ_REL_REQ)))
			return 0;
		if (r->rel & INJ_REL_PSN)
			psn = p->rpsn;
	}
	if (psn < r->psn_lo || psn > r->psn_hi)
		return 0;
	if (p->len < r->len_min || p->len > r->len_max)
		return 0;
	if (r->src_ip && r->src_ip != p->saddr)
		return 0;
	if (r->dst_ip && r->dst_ip != p->daddr)
		return 0;
	if (r->ecn_ce && p->ecn != 3)
		return 0;
	if ((r->start_ns || r->stop_ns) && !r->from_traffic) {
		clock_once(now);
		if (*now < r->start_ns || (r->stop_ns && *now >= r->stop_ns))
			return 0;
	}
	return 1;
}

/* does the action hit this matched packet? */
static __always_inline int selected(const struct inj_rule *r, struct inj_rule_state *st)
{
	__u64 n = __sync_fetch_and_add(&st->seen, 1) + 1;

	switch (r->model) {
	case INJ_MODEL_EVERY_NTH:
		return r->nth && n % r->nth == 0;
	case INJ_MODEL_ONLY_NTH:
		return n == r->nth;
	case INJ_MODEL_GEMODEL:
		/* transition first, then draw in the new state (netem's order) */
		if (st->ge_bad) {
			if (chance(r->ge_r))
				st->ge_bad = 0;
		} else if (chance(r->ge_p)) {
			st->ge_bad = 1;
		}
		return chance(st->ge_bad ? r->ge_h : r->ge_k);
	default:
		if (r->nth > 1 && n % r->nth)
			return 0;
		return chance(r->prob);
	}
}

static __always_inline __u64 jitter(const struct inj_rule *r)
{
	__u64 mag, j;
	int neg;

	if (!r->jitter_ns)
		return r->delay_ns;
	if (r->jitter_dist == INJ_JITTER_NORMAL) {
		/* Irwin-Hall: the sum of 4 uniforms on [0, 2^30) has mean 2^31 and
		 * sigma 2^30/sqrt(3); scale the distance from the mean to sigma =
		 * jitter. Unsigned only: BPF has no signed division. */
		__u64 s = (__u64)(rnd() >> 2) + (rnd() >> 2) + (rnd() >> 2) + (rnd() >> 2);

		neg = s < (1ULL << 31);
		mag = neg ? (1ULL << 31) - s : s - (1ULL << 31);
		j = (((mag >> 10) * r->jitter_ns) >> 20) * 1732 / 1000;
	} else {
		/* [0, 2 jitter): 2 jitter rnd / 2^32 = jitter rnd / 2^31, in two
		 * halves of jitter so that no product passes 2^64 (a jitter of 2^31
		 * ns or more used to wrap) */
		__u64 x = rnd(), jh = r->jitter_ns >> 16, jl = r->jitter_ns & 0xffff;
		__u64 u = ((x * jh) >> 15) + ((x * jl) >> 31);

		neg = u < r->jitter_ns;
		j = neg ? r->jitter_ns - u : u - r->jitter_ns;
	}
	if (neg)
		return j >= r->delay_ns ? 0 : r->delay_ns - j;
	return r->delay_ns + j;
}

/* one candidate per step, lowest slot first; stop at the first full match */
/* a leased rule whose owner stopped renewing (or no deadline at all): as
 * if it were not there, so a later rule may take the packet */
static __always_inline int lease_over(const struct inj_rule *r, __u64 *now)
{
	__u32 id = r->id;
	__u64 *dl;

	if (!r->lease_ns)
		return 0;
	dl = bpf_map_lookup_elem(&inj_leases, &id);
	if (!dl)
		return 1;
	clock_once(now);
	return *now >= *dl;
}

/* a window from the traffic: it opens its offsets after the first packet
 * that met the rule's other fields (that packet anchors it, on any CPU,
 * once), so that it lands on the same part of a run each time */
static __always_inline int traffic_window(const struct inj_rule *r, __u32 i, __u64 *now)
{
	struct inj_rule_state *st;
	__u64 a;

	if (!r->from_traffic)
		return 1;
	st = bpf_map_lookup_elem(&inj_state, &i);
	if (!st)
		return 0;
	clock_once(now);
	a = st->anchor;
	if (!a) {
		__sync_val_compare_and_swap(&st->anchor, 0, *now);
		a = st->anchor;
	}
	return *now >= a + r->start_ns && (!r->stop_ns || *now < a + r->stop_ns);
}

static __always_inline long scan_step_inline(__u32 idx, void *ctx)
{
	struct scan *sc = ctx;
	struct inj_rule *r;
	__u32 i;

	if (!sc->cand)
		return 1;
	i = ctz64(sc->cand);
	sc->cand &= sc->cand - 1;
	r = bpf_map_lookup_elem(&inj_rules, &i);
	if (r && r->id && matches(r, &sc->p, &sc->now) && !lease_over(r, &sc->now) &&
	    traffic_window(r, i, &sc->now)) {
		sc->found = (__s32)i;
		return 1;
	}
	return 0;
}

static long scan_step(__u32 idx, void *ctx)
{
	return scan_step_inline(idx, ctx);
}

/* a packet the NIC may resend: an RC or UC request, READ response or
 * atomic acknowledge (its first transmissions go out in PSN order) */
static __always_inline int resendable(const struct pkt *p)
{
	return (p->opcode >> 5) <= 1 &&
	       (p->cls == INJ_CLS_DATA || p->cls == INJ_CLS_READ_REQ ||
		p->cls == INJ_CLS_READ_RESP || p->cls == INJ_CLS_ATOMIC);
}


/* the QP's highest PSN to psn unless it is there or past it already; a
 * failed swap means another CPU moved it meanwhile: look again */
static __always_inline void raise_top(struct inj_qp *q, __u32 psn)
{
	for (int i = 0; i < 4; i++) {
		__u64 old = q->top;

		if (old && (((__u32)old - psn) & 0xffffff) < 0x800000)
			return;
		if (__sync_val_compare_and_swap(&q->top, old, INJ_QP_SEEN | psn) == old)
			return;
	}
}

/* the packet's QP index, relative PSN, resend and transmission counts */
static __always_inline void track(struct pkt *p, const struct inj_hook *hook,
				  struct inj_hook_ctr *hc, __u32 hk, __u32 want)
{
	__u32 side = is_response(p);
	struct inj_qp_key k = { hk, p->saddr, p->daddr, p->dqpn, side };
	struct inj_qp *q = bpf_map_lookup_elem(&inj_qps, &k), *id;

	if (!q) {
		/* the new entry from a per-CPU template whose window stays 0, not
		 * from the stack (528 bytes: more than the program's stack) */
		struct inj_qp *fresh = bpf_map_lookup_elem(&inj_qp_fresh, &inj_zero);
		__u32 slot = hook->slot, idx;
		struct inj_qp_next *next = bpf_map_lookup_elem(&inj_qp_next, &slot);

		if (!next || !fresh)
			return;
		/* the QP's number, both sides' (its requests, its responses): an
		 * entry of its own, made by the first packet of either; its number
		 * given under the hook's lock by whichever CPU comes first (an ACK
		 * and the peer's first request often meet so) */
		k.resp = INJ_QP_ID;
		id = bpf_map_lookup_elem(&inj_qps, &k);
		if (!id) {
			fresh->idx = 0;
			fresh->first_psn = 0;
			fresh->top = 0;
			bpf_map_update_elem(&inj_qps, &k, fresh, BPF_NOEXIST);
			id = bpf_map_lookup_elem(&inj_qps, &k);
		}
		k.resp = side;
		if (!id)
			return;
		if (!*(volatile __u32 *)&id->idx) {
			bpf_spin_lock(&next->lock);
			if (!id->idx)
				id->idx = (__u32)++next->last;
			bpf_spin_unlock(&next->lock);
		}
		idx = *(volatile __u32 *)&id->idx;
		fresh->idx = idx;
		fresh->first_psn = p->psn;
		fresh->top = 0;
		bpf_map_update_elem(&inj_qps, &k, fresh, BPF_NOEXIST);
		q = bpf_map_lookup_elem(&inj_qps, &k);
		if (!q)
			return;
	}
	p->qidx = q->idx;
	p->rpsn = (p->psn - q->first_psn) & 0xffffff;
	if (resendable(p)) {
		__u64 top = q->top;
		__u32 back = ((__u32)top - p->psn) & 0xffffff, slot = p->psn & (INJ_QP_WIN - 1);

		/* older than the window, or in it: the slot swapped, not read then
		 * written, so that of two copies on two CPUs at once one is new */
		if ((top && back < 0x800000 && back >= INJ_QP_WIN) ||
		    __sync_lock_test_and_set(&q->win[slot], (__u64)p->psn + 1) == (__u64)p->psn + 1) {
			hc->resent++;
			p->resent = 1;
		} else {
			raise_top(q, p->psn);
		}
	}
	if (want & INJ_TRACK_TX) {
		struct inj_tx_key t = { k, p->psn };
		__u64 *c = bpf_map_lookup_elem(&inj_tx, &t), one = 1;

		if (c) {
			p->tx = (__u32)(__sync_fetch_and_add(c, 1) + 1);
		} else {
			bpf_map_update_elem(&inj_tx, &t, &one, BPF_NOEXIST);
			p->tx = 1;
		}
	}
}

/* the hook's entry (inject_abi.h): its bucket's slot, or the hash's on a
 * collision; 0 when the hook is not registered */
static __always_inline struct inj_hook *hook_find(__u32 hk)
{
	__u32 b = hk & (INJ_HOOK_BUCKETS - 1), slot;
	__u64 *e = bpf_map_lookup_elem(&inj_hook_idx, &b), v;
	struct inj_hook *h;

	v = e ? *e : 0;	/* key and slot in one load: never half of an update */
	if (e && (__u32)v == hk + 1) {
		slot = (__u32)(v >> 32);
	} else {
		h = bpf_map_lookup_elem(&inj_hooks, &hk);
		if (!h)
			return 0;
		slot = h->slot;
	}
	h = bpf_map_lookup_elem(&inj_hook_slots, &slot);
	return h && (h->flags & INJ_HOOK_LIVE) ? h : 0;
}

/* the rule that takes a parsed packet, counted as matched: 1 with *rp and
 * *rcp when its action is due (selected, and not count), else 0; *rule_id
 * the id of the rule that took it (0: none) */
static __always_inline int pick(const struct inj_hook *hook, const struct inj_cfg *cfg,
				struct scan *sc, __u32 len, __u32 *rule_id, __u64 *now,
				struct inj_rule **rp, struct inj_rule_ctr **rcp)
{
	struct pkt *p = &sc->p;
	struct inj_rule_state *st;
	struct inj_rule_ctr *rc;
	struct inj_rule *r;
	__u32 k, i;
	__u64 cand, *m;

	cand = hook->mask;
	if (!cand)
		return 0;
	k = p->cls;
	m = bpf_map_lookup_elem(&inj_class_mask, &k);
	cand &= m ? *m : 0;
	if (!cand)
		return 0;
	sc->cand = cand;
	sc->now = *now;
	if (!index_cands(sc, cfg))
		return 0;
	sc->found = -1;
	/* the first candidate in line: after the index, it matches but for a
	 * lease (or a table being switched); the loop only when it did not */
	if (!scan_step_inline(0, sc) && sc->cand)
		/* bpf_loop: the verifier checks the step once, not 64 unrolled copies */
		bpf_loop(INJ_MAX_RULES, scan_step, sc, 0);
	if (sc->found < 0)
		return 0;
	i = (__u32)sc->found;
	r = bpf_map_lookup_elem(&inj_rules, &i);
	if (!r)
		return 0;
	*now = sc->now;
	if (!*now && r->action == INJ_ACT_DELAY)
		*now = bpf_ktime_get_ns();
	st = bpf_map_lookup_elem(&inj_state, &i);
	rc = bpf_map_lookup_elem(&inj_rule_ctrs, &i);
	if (!st || !rc)
		return 0;
	*rule_id = r->id;
	rc->matched++;
	rc->matched_bytes += len;
	if (r->action == INJ_ACT_COUNT || !selected(r, st))
		return 0;
	*rp = r;
	*rcp = rc;
	return 1;
}

/* the trace ring's reader woken only when a quarter of the ring is
 * waiting: a wakeup per record (the default when the reader keeps up) cost
 * ~1.5 us, and the reader drains by itself every INJ_TRACE_DRAIN_MS. The
 * ring asked on a hook's every INJ_TRACE_ASK_EVERY-th record on a CPU only:
 * a helper call is ~10 ns on a host with SRSO's safe RET */
#define INJ_TRACE_ASK_EVERY 64
static __always_inline __u64 trace_wake(const struct inj_hook_ctr *hc)
{
	if (hc->traced & (INJ_TRACE_ASK_EVERY - 1))
		return BPF_RB_NO_WAKEUP;
	return bpf_ringbuf_query(&inj_trace, BPF_RB_AVAIL_DATA) >= INJ_TRACE_RING_BYTES / 4 ?
		       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

#endif
