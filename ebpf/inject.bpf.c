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
#include "inject_engine.bpf.h"

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
	wake = trace_wake(hc);
	if (bpf_skb_load_bytes(skb, 0, b->data, cap) ||
	    bpf_ringbuf_output(&inj_trace, b, sizeof(b->h) + cap, wake)) {
		hc->trace_lost++;
		return;
	}
	hc->traced++;
}

/* the rules' verdict on a parsed RoCE packet: the tc return code (cfg:
 * inj_cfg's entry, looked up once per packet by the caller) */
static __always_inline int judge(struct __sk_buff *skb, struct __sk_buff **self,
				 const struct inj_hook *hook,
				 const struct inj_cfg *cfg, struct scan *sc, __u8 *verdict,
				 __u32 *rule_id, __u64 *delay, __u64 *now)
{
	struct inj_rule_ctr *rc = 0;
	struct inj_rule *r = 0;

	if (!pick(hook, cfg, sc, skb->len, rule_id, now, &r, &rc) || !r || !rc)
		return TC_ACT_OK;
	return act(skb, self, r, rc, &sc->p, *now, verdict, delay);
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
		if (!cnp_make(skb, &self))
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
