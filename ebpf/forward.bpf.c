// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * rdma-inject forward, the injector as a bump in the wire. An XDP program
 * on every port forwards each frame to its port (the other one of two, or
 * by a static MAC table) through a device map, after the rules of the
 * receiving port's ingress hook and the sending port's egress hook. A
 * frame the table does not name is flooded; the device map's program runs
 * each sending port's egress rules on its copy. The maps are the tc
 * program's (pinned by name): one rule table, one set of counters.
 *
 * Two speeds:
 *   in XDP     count, drop, ECN mark, corrupt (bpf_xdp_load/store_bytes,
 *              checksums by hand)
 *   slow path  delay, reorder, duplicate, cnp: the XDP program decides (so a
 *              rule's odds are drawn once), writes what to do into the
 *              frame's metadata and passes it up; the tc program on the
 *              same port (inj_fwd_slow) does it to the skb and redirects it
 *              to the sending port, whose egress qdiscs hold it (the tc
 *              program's queue contract, inject_abi.h)
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
#include "inject_index.bpf.h"
#include "inject_engine.bpf.h"
#include "inject_icrc.bpf.h"
/* the CNP's making (cnp_make) on the slow path's skb; its learning and
 * notifying are the tc program's, done here over XDP (fwd_learn, fwd_act) */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-function"
#include "inject_cnp.bpf.h"
#pragma clang diagnostic pop

/* the XDP program's word to the slow path, in the frame's metadata */
#define FWD_META_MAGIC 0x52544246u	/* "RTBF" */
#define FWD_SLOW 16	/* fwd_rules: the slow path's (not an XDP action) */

struct fwd_meta {
	__u32 magic;
	__u32 out;	/* the sending port's ifindex */
	__u32 action;	/* INJ_ACT_DELAY, _REORDER, _DUP or _CNP */
	__u32 pad;
	__u64 delay_ns;	/* DELAY: how long; CNP: the sender's QPN */
};

/* a slow action decided by fwd_rules */
struct fwd_slow {
	__u32 action;
	__u32 pad;
	__u64 delay_ns;
};

/*
 * A cnp rule's learning, as the tc program's learn_cb (inject_abi.h): an
 * RC request with AckReq leaves its destination QPN by (source,
 * destination, PSN); the answer to that PSN the other way pairs the QPs,
 * both directions into inj_peers. A global function, checked apart (in
 * fwd_rules the program passed the verifier's 1M instructions)
 */
__attribute__((noinline)) int fwd_learn(struct xdp_md *ctx, const struct pkt *p)
{
	struct inj_peer_key k = {};
	__u32 op, qpn, peer, *q;
	__u8 a = 0;

	if (!p)
		return 0;
	k.saddr = p->saddr;
	k.daddr = p->daddr;
	k.n = p->psn;
	op = p->opcode;
	qpn = p->dqpn;
	if (op >> 5)	/* RC only */
		return 0;
	if (p->cls == INJ_CLS_DATA || p->cls == INJ_CLS_READ_REQ || op == 0x13 || op == 0x14) {
		if (!bpf_xdp_load_bytes(ctx, p->bth_off + 8, &a, 1) && (a & 0x80))
			bpf_map_update_elem(&inj_reqs, &k, &qpn, BPF_ANY);
		return 0;
	}
	if (p->cls != INJ_CLS_ACK && op != 0x0d && op != 0x10 && op != 0x12)
		return 0;
	k.saddr = p->daddr;	/* the answer from B to A (QPN qpn) to A's request */
	k.daddr = p->saddr;
	q = bpf_map_lookup_elem(&inj_reqs, &k);
	if (!q)
		return 0;
	peer = *q;
	k.n = peer;		/* A to B's QP peer: sent by qpn */
	bpf_map_update_elem(&inj_peers, &k, &qpn, BPF_ANY);
	k.saddr = p->saddr;	/* B to A's QP qpn: sent by peer */
	k.daddr = p->daddr;
	k.n = qpn;
	bpf_map_update_elem(&inj_peers, &k, &peer, BPF_ANY);
	return 0;
}

/* the ports, by slot: where a frame for one port goes (no program: its
 * egress rules ran in inj_fwd) */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, INJ_FWD_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_fwd_ports SEC(".maps");

/* the same ports for a flood: each entry's program is inj_fwd_eg */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, INJ_FWD_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_fwd_flood SEC(".maps");

/* two ports: the other one (inject_abi.h); its lookup costs a few
 * instructions, a hash's about 8 ns */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_FWD_PEER_IDX);
	__type(key, __u32);
	__type(value, struct inj_fwd_peer);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_fwd_peer SEC(".maps");

/* N ports: by the destination MAC */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct inj_fwd_mac);
	__type(value, struct inj_fwd_to);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_fwd_macs SEC(".maps");

/* each slot's port name (inject_abi.h): user space's alone */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_FWD_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct inj_fwd_name);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_fwd_names SEC(".maps");

/* a one's complement sum folded to 16 bits */
static __always_inline __u16 fold64(__u64 c)
{
	c = (c & 0xffff) + (c >> 16);
	c = (c & 0xffff) + (c >> 16);
	c = (c & 0xffff) + (c >> 16);
	return (__u16)c;
}

/* ECN CE on the frame (IPv4: its header checksum kept right, RFC 1624):
 * 0, or -1 when the header is not where the parser said */
static __always_inline int xdp_mark_ce(struct xdp_md *ctx, const struct pkt *p)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 off = p->ip_off;
	__u8 *ip;

	if (off > 18)
		return -1;
	ip = data + off;
	if ((void *)(ip + 20) > end)
		return -1;
	if (!p->v6) {
		__u16 old = *(__u16 *)ip, new, *check = (__u16 *)(ip + 10);

		ip[1] |= 3;
		new = *(__u16 *)ip;
		*check = (__u16)~fold64((__u64)(__u16)~*check + (__u16)~old + new);
	} else {
		ip[1] |= 0x30;	/* traffic class straddles bytes 0 and 1 */
	}
	return 0;
}

/* the last payload byte's bits flipped, as the tc program does
 * (inject_rewrite.bpf.h corrupt_cb): the verdict, 0 when nothing was */
static __always_inline __u8 xdp_corrupt(struct xdp_md *ctx, const struct pkt *p, __u32 mode,
					__u32 len)
{
	__u32 w[2], icrc_off = p->ip_off + p->len - 4, bth_off = p->bth_off, payload = mode & 1;
	__u32 old[2];
	__u16 check;
	__u64 sel;
	int pad;

	if ((p->cls != INJ_CLS_DATA && p->cls != INJ_CLS_READ_RESP) ||
	    bpf_xdp_load_bytes(ctx, bth_off + 1, w, 1))
		return 0;
	pad = (w[0] >> 4) & 3;
	if (icrc_off + 4 > len ||
	    (int)icrc_off - pad - (int)(bth_off + 12) - (int)ext_len(p->opcode) < 1)
		return 0;	/* no payload byte */
	if (bpf_xdp_load_bytes(ctx, icrc_off - 4, w, 8))
		return 0;
	old[0] = w[0];
	old[1] = w[1];
	w[0] ^= (__u32)CORRUPT_MASK << (8 * (3 - pad));
	sel = ICRC_DELTA_01 ^ ((ICRC_DELTA_01 ^ ICRC_DELTA_23) & -(__u64)(pad >> 1));
	w[1] ^= (__u32)(sel >> (32 * (pad & 1))) & -payload;
	if (bpf_xdp_store_bytes(ctx, icrc_off - 4, w, 8))
		return 0;
	/* a UDP checksum (RoCEv2 senders leave it 0) kept right for the words */
	if (!bpf_xdp_load_bytes(ctx, bth_off - 2, &check, 2) && check) {
		__s64 d = bpf_csum_diff(old, 8, w, 8, (__u16)~check);

		check = (__u16)~fold64((__u64)d);
		bpf_xdp_store_bytes(ctx, bth_off - 2, &check, 2);
	}
	return payload ? INJ_VERDICT_TAMPER : INJ_VERDICT_CORRUPT;
}

/* the frame as the hook leaves it, into the trace ring (or counted lost):
 * the tc program's trace_pkt over XDP. The caller wrote the record's
 * header into the per-CPU scratch (but cap_len; ts_ns 0: now). A global
 * function: checked once, apart */
__attribute__((noinline)) int fwd_trace(struct xdp_md *ctx)
{
	__u32 zero = 0, cap, k;
	struct inj_hook_ctr *hc;
	struct inj_hook *hook;
	struct inj_cfg *cfg;
	struct trace_buf *b;
	__u64 wake;

	b = bpf_map_lookup_elem(&inj_trace_scratch, &zero);
	if (!b)
		return 0;
	hook = hook_find(b->h.hook);
	if (!hook)
		return 0;
	k = hook->slot;
	hc = bpf_map_lookup_elem(&inj_hook_ctrs, &k);
	cfg = bpf_map_lookup_elem(&inj_cfg, &zero);
	if (!hc || !cfg)
		return 0;
	cap = b->h.wire_len < cfg->trace_snaplen ? b->h.wire_len : cfg->trace_snaplen;
	if (cap < 1) {
		hc->trace_lost++;
		return 0;
	}
	cap = ((cap - 1) & (INJ_TRACE_SNAP_MAX - 1)) + 1;	/* as trace_pkt's bounds */
	if (!b->h.ts_ns)
		b->h.ts_ns = bpf_ktime_get_ns();
	b->h.cap_len = (__u16)cap;
	wake = trace_wake(hc);
	if (bpf_xdp_load_bytes(ctx, 0, b->data, cap) ||
	    bpf_ringbuf_output(&inj_trace, b, sizeof(b->h) + cap, wake)) {
		hc->trace_lost++;
		return 0;
	}
	hc->traced++;
	return 0;
}

/* the action of the rule that took the frame: its counter, the verdict
 * (*verdict), and what to return (as fwd_rules) */
static __always_inline int fwd_act(struct xdp_md *ctx, const struct inj_rule *r,
				   struct inj_rule_ctr *rc, struct pkt *p, __u32 len,
				   struct fwd_slow *slow, __u8 *verdict)
{
	__u8 v;

	switch (r->action) {
	case INJ_ACT_DROP:
		rc->dropped++;
		*verdict = INJ_VERDICT_DROP;
		return XDP_DROP;
	case INJ_ACT_ECN:
		if (!xdp_mark_ce(ctx, p)) {
			p->ecn = 3;	/* as the sending port's hook sees it */
			rc->marked++;
			*verdict = INJ_VERDICT_ECN;
		}
		return XDP_PASS;
	case INJ_ACT_CORRUPT:
		v = p->cls < INJ_CLS_MAX ? xdp_corrupt(ctx, p, r->corrupt, len) : 0;
		if (v) {
			rc->corrupted++;
			*verdict = v;
		}
		return XDP_PASS;
	case INJ_ACT_DELAY:
	case INJ_ACT_REORDER:
	case INJ_ACT_DUP:
		if (!slow)
			return XDP_PASS;
		slow->action = r->action;
		slow->delay_ns = r->action == INJ_ACT_DELAY ? jitter(r) : 0;
		if (r->action == INJ_ACT_DELAY) {
			rc->delayed++;
			*verdict = INJ_VERDICT_DELAY;
		} else if (r->action == INJ_ACT_REORDER) {
			rc->reordered++;
			*verdict = INJ_VERDICT_REORDER;
		} else {
			rc->duplicated++;
			*verdict = INJ_VERDICT_DUP;
		}
		return FWD_SLOW;
	case INJ_ACT_CNP: {	/* the frame goes on; the slow path sends its sender a CNP */
		struct inj_peer_key k = { .saddr = p->saddr, .daddr = p->daddr, .n = p->dqpn };
		__u32 *q;

		if (!slow || p->cls >= INJ_CLS_MAX)
			return XDP_PASS;
		q = bpf_map_lookup_elem(&inj_peers, &k);
		if (!q)
			return XDP_PASS;	/* its sender's QPN not learned yet */
		slow->action = INJ_ACT_CNP;
		slow->delay_ns = *q;
		rc->notified++;
		*verdict = INJ_VERDICT_NOTIFY;
		return FWD_SLOW;
	}
	default:
		return XDP_PASS;
	}
}

/* the frame's length, all its buffers (multi-buffer XDP: a frame larger
 * than a page): the helper only when the IP header says more than the
 * first buffer holds, or for a frame that is not IP */
static __always_inline __u32 fwd_wire(struct xdp_md *ctx, const struct pkt *p, int ip,
				      __u32 linear)
{
	if (ip >= 0 && p->ip_off + p->len <= linear)
		return linear;
	return (__u32)bpf_xdp_get_buff_len(ctx);
}

/* what the rules need tracked on every hook (inj_cfg's and a trace's) */
static __always_inline __u32 fwd_want(const struct inj_cfg *cfg)
{
	__u32 zero = 0, *user = bpf_map_lookup_elem(&inj_track, &zero);

	return (cfg ? cfg->track : 0) | (user ? *user : 0);
}

/* hook hk's counters for the frame (ip: parse_data's answer); 1 when its
 * rules, tracking or trace have work for fwd_rules. Inlined, and a hook
 * with nothing to do costs no call: a call and its return cost ~10 ns on a
 * host with SRSO's safe RET, a fifth of plain XDP forwarding */
static __always_inline int fwd_count(__u32 hk, int ip, __u32 len, __u32 want)
{
	struct inj_hook_ctr *hc;
	struct inj_hook *hook = hook_find(hk);
	__u32 k;

	if (!hook)
		return 0;
	k = hook->slot;
	hc = bpf_map_lookup_elem(&inj_hook_ctrs, &k);
	if (!hc)
		return 0;
	hc->pkts++;
	hc->bytes += len;
	if (ip < 0)
		return 0;
	if (!ip) {
		hc->roce_pkts++;
		hc->roce_bytes += len;
	}
	return hook->mask || (!ip && (want || (hook->flags & INJ_HOOK_TRACE)));
}

/* the rules of hook hk on the frame (counted by fwd_count; pk: the frame
 * parsed once for both hooks, ip parse_data's answer): XDP_DROP, XDP_PASS
 * to go on, or FWD_SLOW with *slow what the slow path is to do (slow 0: a
 * flood's copy, which has none); pk's ECN as the rules leave it. A global
 * function: the verifier checks it once, apart from its callers' states
 * (inlined into both programs it passed the 1M instructions) */
__attribute__((noinline)) int fwd_rules(struct xdp_md *ctx, __u32 hk, struct fwd_slow *slow,
					struct pkt *pk, int ip)
{
	struct scan scan = {}, *sc = &scan;	/* on this stack: bpf_loop's argument */
	__u32 zero = 0, k, rule_id = 0, want, len;
	struct inj_rule_ctr *rc = 0;
	struct inj_rule *r = 0;
	struct inj_hook_ctr *hc;
	struct inj_hook *hook;
	struct inj_cfg *cfg;
	__u8 verdict = INJ_VERDICT_PASS;
	__u64 now = 0;
	int ret = XDP_PASS;

	if (!pk || ip < 0)
		return XDP_PASS;
	hook = hook_find(hk);
	if (!hook)
		return XDP_PASS;
	k = hook->slot;
	hc = bpf_map_lookup_elem(&inj_hook_ctrs, &k);
	cfg = bpf_map_lookup_elem(&inj_cfg, &zero);
	if (!hc || !cfg)
		return XDP_PASS;
	sc->p = *pk;
	/* the tracked fields are this hook's */
	len = sc->p.wire;
	sc->p.qidx = 0;
	sc->p.rpsn = 0;
	sc->p.tx = 0;
	sc->p.resent = 0;
	if (!ip) {
		want = fwd_want(cfg);
		if (want & (INJ_TRACK_QP | INJ_TRACK_TX))
			track(&sc->p, hook, hc, hk, want);
		if (want & INJ_TRACK_PEER)
			fwd_learn(ctx, &sc->p);
	}
	if (pick(hook, cfg, sc, len, &rule_id, &now, &r, &rc) && r && rc)
		ret = fwd_act(ctx, r, rc, &sc->p, len, slow, &verdict);
	pk->ecn = sc->p.ecn;	/* marked CE: so the next hook sees it */
	if (!ip && (hook->flags & INJ_HOOK_TRACE)) {
		struct trace_buf *b = bpf_map_lookup_elem(&inj_trace_scratch, &zero);

		if (b) {
			b->h.ts_ns = now;
			b->h.delay_ns = ret == FWD_SLOW && slow ? slow->delay_ns : 0;
			b->h.hook = hk;
			b->h.wire_len = len;
			b->h.rule_id = rule_id;
			b->h.verdict = verdict;
			b->h.flags = sc->p.resent ? INJ_TREC_RESENT : 0;
			fwd_trace(ctx);
		}
	}
	return ret;
}


/* the frame to the slow path: what to do in its metadata, up to the tc
 * program (or, without room for it, on at XDP speed) */
static __always_inline int to_slow(struct xdp_md *ctx, const struct inj_fwd_to *out,
				   const struct fwd_slow *slow)
{
	struct fwd_meta *m;

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return bpf_redirect_map(&inj_fwd_ports, out->slot, 0);
	m = (void *)(long)ctx->data_meta;
	if ((void *)(m + 1) > (void *)(long)ctx->data)
		return XDP_DROP;
	m->magic = FWD_META_MAGIC;
	m->out = out->ifindex;
	m->action = slow->action;
	m->pad = 0;
	m->delay_ns = slow->delay_ns;
	return XDP_PASS;
}

SEC("xdp.frags")
int inj_fwd(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 in = ctx->ingress_ifindex, k = in & (INJ_FWD_PEER_IDX - 1), zero = 0, hk, want, len;
	struct fwd_slow slow = {}, slow_eg = {};
	struct ethhdr *eth = data;
	struct inj_fwd_mac m = {};
	struct inj_fwd_peer *pe;
	struct inj_fwd_to *out = 0, to;
	struct pkt p = {};	/* parsed once, for both hooks */
	int v = XDP_PASS, v_eg = XDP_PASS, ip;

	if ((void *)(eth + 1) > end)
		return XDP_DROP;
	pe = bpf_map_lookup_elem(&inj_fwd_peer, &k);
	if (pe && pe->in == in) {
		out = &pe->to;
	} else {
		__builtin_memcpy(m.a, eth->h_dest, 6);
		out = bpf_map_lookup_elem(&inj_fwd_macs, &m);
	}
	ip = parse_data(data, end, &p);
	len = p.wire = fwd_wire(ctx, &p, ip, (__u32)(end - data));
	want = fwd_want(bpf_map_lookup_elem(&inj_cfg, &zero));
	hk = inj_hook_key(in, INJ_DIR_INGRESS);
	if (fwd_count(hk, ip, len, want))
		v = fwd_rules(ctx, hk, out ? &slow : 0, &p, ip);
	if (v == XDP_DROP)
		return XDP_DROP;
	if (!out)	/* flooded to every other port, their egress rules on each copy */
		return bpf_redirect_map(&inj_fwd_flood, 0, BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS);
	to = *out;
	/* the sending port's egress rules, here: a slow action needs this program */
	hk = inj_hook_key(to.ifindex, INJ_DIR_EGRESS);
	if (fwd_count(hk, ip, len, want))
		v_eg = fwd_rules(ctx, hk, &slow_eg, &p, ip);
	if (v_eg == XDP_DROP)
		return XDP_DROP;
	if (v == FWD_SLOW)	/* one slow action a frame: the ingress hook's first */
		return to_slow(ctx, &to, &slow);
	if (v_eg == FWD_SLOW)
		return to_slow(ctx, &to, &slow_eg);
	/* a port gone (its device removed): up to the stack (a bridge there) */
	return bpf_redirect_map(&inj_fwd_ports, to.slot, XDP_PASS);
}

/* on a veth port's peer: a veth takes redirected frames only with its
 * peer's NAPI on, which an XDP program turns on (injector/forward.c) */
SEC("xdp.frags")
int inj_fwd_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

/* the flood map's program: the sending port's egress hook, on its copy */
SEC("xdp.frags/devmap")
int inj_fwd_eg(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 hk = inj_hook_key(ctx->egress_ifindex, INJ_DIR_EGRESS), zero = 0;
	struct pkt p = {};
	int ip = parse_data(data, end, &p);

	p.wire = fwd_wire(ctx, &p, ip, (__u32)(end - data));
	if (!fwd_count(hk, ip, p.wire, fwd_want(bpf_map_lookup_elem(&inj_cfg, &zero))))
		return XDP_PASS;
	return fwd_rules(ctx, hk, 0, &p, ip) == XDP_DROP ? XDP_DROP : XDP_PASS;
}

/* cnp: the frame on to the sending port, and this skb made the CNP to its
 * sender (cb[0]: the sender's QPN), out the port it came in on. Nothing
 * that failed to become a CNP leaves */
static __noinline int fwd_cnp(struct __sk_buff *skb, __u32 out)
{
	struct __sk_buff *self = skb;
	__u32 in = skb->ifindex;

	bpf_clone_redirect(skb, out, 0);
	return cnp_make(skb, &self) ? bpf_redirect(in, 0) : TC_ACT_SHOT;
}

/* the slow path, tc ingress on every port: what the XDP program wrote in
 * the metadata done to the skb, then on to the sending port's egress */
SEC("tc")
int inj_fwd_slow(struct __sk_buff *skb)
{
	struct fwd_meta *m = (void *)(long)skb->data_meta;
	__u32 out;

	if ((void *)(m + 1) > (void *)(long)skb->data || m->magic != FWD_META_MAGIC)
		return TC_ACT_OK;	/* not the forwarder's: the host's own */
	out = m->out;	/* read before a clone moves the data */
	if (m->action == INJ_ACT_CNP) {
		skb->cb[0] = (__u32)m->delay_ns;
		return fwd_cnp(skb, out);
	}
	switch (m->action) {
	case INJ_ACT_DELAY:
		/* a delivery time kept across the redirect, for fq's band */
		bpf_skb_set_tstamp(skb, bpf_ktime_get_ns() + m->delay_ns,
				   BPF_SKB_TSTAMP_DELIVERY_MONO);
		skb->priority = INJ_TC_CLASS(INJ_PRIO_MAJOR, INJ_BAND_DELAY);
		break;
	case INJ_ACT_REORDER:
		skb->priority = INJ_TC_CLASS(INJ_PRIO_MAJOR, INJ_BAND_REORDER);
		break;
	case INJ_ACT_DUP:
		bpf_clone_redirect(skb, out, 0);
		break;
	}
	return bpf_redirect(out, 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
