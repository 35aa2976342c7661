// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * RoCE-aware fault injection, tc clsact direct-action program. One object
 * per hook (device, direction); all hooks share the pinned maps, so one
 * rule table and one set of counters serve every attachment.
 *
 * Parse: Ethernet, optional 802.1Q, IPv4 or IPv6, UDP dport 4791, BTH, and
 * AETH where the opcode carries one (to tell ACK from NAK). Other TCP and
 * UDP packets meet only the rules whose `proto` names them; everything
 * else passes untouched. See inject_abi.h for the rule table and its semantics.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "inject_abi.h"

#include "inject_maps.bpf.h"
#include "inject_parse.bpf.h"
#include "inject_rewrite.bpf.h"
#include "inject_cnp.bpf.h"
#include "inject_index.bpf.h"

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
	if (r->start_ns || r->stop_ns) {
		/* the clock only when a window asks: bpf_ktime_get_ns costs ~10 ns */
		if (!*now)
			*now = bpf_ktime_get_ns();
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
	if (!*now)
		*now = bpf_ktime_get_ns();
	return *now >= *dl;
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
	if (r && r->id && matches(r, &sc->p, &sc->now) && !lease_over(r, &sc->now)) {
		sc->found = (__s32)i;
		return 1;
	}
	return 0;
}

static long scan_step(__u32 idx, void *ctx)
{
	return scan_step_inline(idx, ctx);
}

/* a step in a bpf_loop(1, ...) callback (corrupt_cb, notify_cb): its
 * arguments already in cb[0..3]; its result, cb[4] */
static __always_inline __u32 in_callback(struct __sk_buff *skb, struct __sk_buff **self,
					 long (*fn)(__u32, void *))
{
	skb->cb[4] = 0;
	bpf_loop(1, fn, self, 0);
	return skb->cb[4];
}

/* the action of the rule that took the packet: its counter and the verdict
 * (inlined: the verifier sees one program) */
static __always_inline int act(struct __sk_buff *skb, struct __sk_buff **self,
			       const struct inj_rule *r,
			       struct inj_rule_ctr *rc, struct pkt *p, __u64 now, __u8 *verdict,
			       __u64 *delay)
{
	switch (r->action) {
	case INJ_ACT_DROP:
		rc->dropped++;
		*verdict = INJ_VERDICT_DROP;
		/* egress SHOT reports NET_XMIT_DROP back to rxe, which resends at
		 * once (not wire loss); STOLEN frees the skb and reports success */
		return inj_dir == INJ_DIR_EGRESS ? TC_ACT_STOLEN : TC_ACT_SHOT;
	case INJ_ACT_DELAY:
		rc->delayed++;
		*delay = jitter(r);
		*verdict = INJ_VERDICT_DELAY;
		skb->tstamp = now + *delay;
		skb->priority = INJ_TC_CLASS(INJ_PRIO_MAJOR, INJ_BAND_DELAY);
		return TC_ACT_OK;
	case INJ_ACT_REORDER:
		rc->reordered++;
		*verdict = INJ_VERDICT_REORDER;
		skb->priority = INJ_TC_CLASS(INJ_PRIO_MAJOR, INJ_BAND_REORDER);
		return TC_ACT_OK;
	case INJ_ACT_DUP: {
		__u32 mark = skb->mark;

		skb->mark = INJ_MARK_CLONE;
		if (!bpf_clone_redirect(skb, skb->ifindex,
					inj_dir == INJ_DIR_INGRESS ? BPF_F_INGRESS : 0)) {
			rc->duplicated++;
			*verdict = INJ_VERDICT_DUP;
		}
		skb->mark = mark;
		return TC_ACT_OK;
	}
	case INJ_ACT_CORRUPT:
		if (p->cls >= INJ_CLS_MAX)
			return TC_ACT_OK;	/* RoCE's only (the grammar says so) */
		skb->cb[0] = p->ip_off + p->len - 4;
		skb->cb[1] = p->bth_off;
		skb->cb[2] = (__u32)p->cls << 8 | p->opcode;
		skb->cb[3] = r->corrupt;
		if (in_callback(skb, self, corrupt_cb)) {
			rc->corrupted++;
			*verdict = (__u8)skb->cb[4];
		}
		return TC_ACT_OK;
	case INJ_ACT_ECN:
		if (!mark_ce(skb, p)) {
			rc->marked++;
			*verdict = INJ_VERDICT_ECN;
		}
		return TC_ACT_OK;
	case INJ_ACT_CNP:
		if (p->cls >= INJ_CLS_MAX)
			return TC_ACT_OK;
		skb->cb[0] = p->saddr;
		skb->cb[1] = p->daddr;
		skb->cb[2] = p->dqpn;
		if (in_callback(skb, self, notify_cb)) {
			rc->notified++;
			*verdict = INJ_VERDICT_NOTIFY;
		}
		return TC_ACT_OK;
	default:
		return TC_ACT_OK;
	}
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
	struct inj_qp_key k = { hk, p->saddr, p->daddr, p->dqpn };
	struct inj_qp *q = bpf_map_lookup_elem(&inj_qps, &k);

	if (!q) {
		/* the new entry from a per-CPU template whose window stays 0, not
		 * from the stack (528 bytes: more than the program's stack) */
		struct inj_qp *fresh = bpf_map_lookup_elem(&inj_qp_fresh, &inj_zero);
		__u32 slot = hook->slot;
		__u64 *next = bpf_map_lookup_elem(&inj_qp_next, &slot);

		if (!next || !fresh)
			return;
		/* two CPUs meeting one new QP at once may leave a gap in the indices */
		fresh->idx = (__u32)(__sync_fetch_and_add(next, 1) + 1);
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

/* the packet as it leaves the program, into the trace ring (or counted lost) */
static __always_inline void trace_pkt(struct __sk_buff *skb, const struct inj_hook *hook,
				      struct inj_hook_ctr *hc, __u32 hk, __u8 verdict, __u32 rule_id,
				      __u64 delay, __u64 now, __u8 resent)
{
	struct inj_cfg *cfg;
	struct trace_buf *b;
	__u32 zero = 0, cap;
	__u64 wake;

	if (!(hook->flags & INJ_HOOK_TRACE))
		return;
	cfg = bpf_map_lookup_elem(&inj_cfg, &zero);
	b = bpf_map_lookup_elem(&inj_trace_scratch, &zero);
	if (!cfg || !b)
		return;
	cap = skb->len;
	if (cap > cfg->trace_snaplen)
		cap = cfg->trace_snaplen;
	if (cap < 1) {
		hc->trace_lost++;
		return;
	}
	/* 1..INJ_TRACE_SNAP_MAX in a form every verifier keeps the bounds of
	 * (6.1's lost the lower one of two compares: "size=0") */
	cap = ((cap - 1) & (INJ_TRACE_SNAP_MAX - 1)) + 1;
	b->h.ts_ns = now ? now : bpf_ktime_get_ns();
	b->h.delay_ns = delay;
	b->h.hook = hk;
	b->h.wire_len = skb->len;
	b->h.rule_id = rule_id;
	b->h.cap_len = (__u16)cap;
	b->h.verdict = verdict;
	b->h.flags = resent ? INJ_TREC_RESENT : 0;
	/* the reader woken only when a quarter of the ring is waiting: a wakeup
	 * per record (the default when the reader keeps up) cost ~1.5 us; the
	 * reader drains by itself every INJ_TRACE_DRAIN_MS */
	wake = bpf_ringbuf_query(&inj_trace, BPF_RB_AVAIL_DATA) >= INJ_TRACE_RING_BYTES / 4 ?
		       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	if (bpf_skb_load_bytes(skb, 0, b->data, cap) ||
	    bpf_ringbuf_output(&inj_trace, b, sizeof(b->h) + cap, wake)) {
		hc->trace_lost++;
		return;
	}
	hc->traced++;
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

/* the rules' verdict on a parsed RoCE packet: the tc return code (cfg:
 * inj_cfg's entry, looked up once per packet by the caller) */
static __always_inline int judge(struct __sk_buff *skb, struct __sk_buff **self,
				 const struct inj_hook *hook,
				 const struct inj_cfg *cfg, struct scan *sc, __u8 *verdict,
				 __u32 *rule_id, __u64 *delay, __u64 *now)
{
	struct pkt *p = &sc->p;
	struct inj_rule_state *st;
	struct inj_rule_ctr *rc;
	struct inj_rule *r;
	__u32 k, i;
	__u64 cand, *m;

	cand = hook->mask;
	if (!cand)
		return TC_ACT_OK;
	k = p->cls;
	m = bpf_map_lookup_elem(&inj_class_mask, &k);
	cand &= m ? *m : 0;
	if (!cand)
		return TC_ACT_OK;
	sc->cand = cand;
	sc->now = *now;
	if (!index_cands(sc, cfg))
		return TC_ACT_OK;
	sc->found = -1;
	/* the first candidate in line: after the index, it matches but for a
	 * lease (or a table being switched); the loop only when it did not */
	if (!scan_step_inline(0, sc) && sc->cand)
		/* bpf_loop: the verifier checks the step once, not 64 unrolled copies */
		bpf_loop(INJ_MAX_RULES, scan_step, sc, 0);
	if (sc->found < 0)
		return TC_ACT_OK;
	i = (__u32)sc->found;
	r = bpf_map_lookup_elem(&inj_rules, &i);
	if (!r)
		return TC_ACT_OK;
	*now = sc->now;
	if (!*now && r->action == INJ_ACT_DELAY)
		*now = bpf_ktime_get_ns();
	st = bpf_map_lookup_elem(&inj_state, &i);
	rc = bpf_map_lookup_elem(&inj_rule_ctrs, &i);
	if (!st || !rc)
		return TC_ACT_OK;
	*rule_id = r->id;
	rc->matched++;
	rc->matched_bytes += skb->len;
	if (r->action == INJ_ACT_COUNT || !selected(r, st))
		return TC_ACT_OK;
	return act(skb, self, r, rc, p, *now, verdict, delay);
}

SEC("tc")
int inj_tc(struct __sk_buff *skb)
{
	__u32 hk = inj_hook_key(skb->ifindex, inj_dir), zero = 0, k, rule_id = 0, want, *user;
	struct inj_hook_ctr *hc;
	struct inj_hook *hook;
	struct inj_cfg *cfg;
	__u8 verdict = INJ_VERDICT_PASS;
	__u64 now = 0, delay = 0;
	struct scan sc = {};	/* the packet, and the rule scan's state */
	/* the callbacks' argument (one slot, written on every path: the
	 * verifier's states stay equal and are pruned) */
	struct __sk_buff *self = skb;
	int ret, ip;

	/* never true (inj_dir is 0 or 1), but it makes inj_owned one of the
	 * program's maps: rdma-inject finds every map of its state from the
	 * attached program when the pins are gone (a fresh mount namespace) */
	if (inj_dir > INJ_DIR_EGRESS && bpf_map_lookup_elem(&inj_owned, &zero))
		return TC_ACT_OK;
	hook = hook_find(hk);
	if (skb->mark == INJ_MARK_CLONE) {	/* our own duplicate: pass it once */
		skb->mark = 0;
		if (hook && (hook->flags & INJ_HOOK_TRACE)) {
			k = hook->slot;
			hc = bpf_map_lookup_elem(&inj_hook_ctrs, &k);
			if (hc && !parse(skb, &sc.p))
				trace_pkt(skb, hook, hc, hk, INJ_VERDICT_COPY, 0, 0, 0, 0);
		}
		return TC_ACT_OK;
	}
	if ((skb->mark & INJ_MARK_CNP_MASK) == INJ_MARK_CNP) {	/* a cnp rule's copy */
		skb->cb[0] = skb->mark;
		skb->mark = 0;
		bpf_loop(1, cnp_cb, &self, 0);
		if (skb->cb[4])
			bpf_loop(1, cnp_hdr_cb, &self, 0);
		if (skb->cb[4]) {
			bpf_loop(skb->cb[4] & 127, crc_cb, &self, 0);
			bpf_loop(1, cnp_fin_cb, &self, 0);
		}
		if (!skb->cb[4])
			return TC_ACT_SHOT;	/* never let the copy itself out */
		if (hook && (hook->flags & INJ_HOOK_TRACE)) {
			k = hook->slot;
			hc = bpf_map_lookup_elem(&inj_hook_ctrs, &k);
			if (hc)
				trace_pkt(skb, hook, hc, hk, INJ_VERDICT_CNP, 0, 0, 0, 0);
		}
		return TC_ACT_OK;
	}
	if (!hook)
		return TC_ACT_OK;	/* attached, not yet registered: nothing to do */
	k = hook->slot;
	hc = bpf_map_lookup_elem(&inj_hook_ctrs, &k);
	if (!hc)
		return TC_ACT_OK;
	hc->pkts++;
	hc->bytes += skb->len;
	ip = parse(skb, &sc.p);
	if (ip < 0)
		return TC_ACT_OK;
	cfg = bpf_map_lookup_elem(&inj_cfg, &zero);
	if (!cfg)
		return TC_ACT_OK;
	if (!ip) {	/* RoCE; TCP and UDP meet the rules only (no tracking, no trace) */
		hc->roce_pkts++;
		hc->roce_bytes += skb->len;
		user = bpf_map_lookup_elem(&inj_track, &zero);
		want = cfg->track | (user ? *user : 0);
		if (want & (INJ_TRACK_QP | INJ_TRACK_TX))
			track(&sc.p, hook, hc, hk, want);
		if (want & INJ_TRACK_PEER) {
			skb->cb[0] = sc.p.saddr;
			skb->cb[1] = sc.p.daddr;
			skb->cb[2] = sc.p.dqpn;
			skb->cb[3] = sc.p.psn;
			skb->cb[4] = sc.p.opcode | (__u32)sc.p.cls << 8 | sc.p.bth_off << 16;
			bpf_loop(1, learn_cb, &self, 0);
		}
	}
	ret = judge(skb, &self, hook, cfg, &sc, &verdict, &rule_id, &delay, &now);
	if (!ip)
		trace_pkt(skb, hook, hc, hk, verdict, rule_id, delay, now, sc.p.resent);
	return ret;
}

/* the baseline for the per-packet cost benchmark */
SEC("tc")
int inj_empty(struct __sk_buff *skb)
{
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
