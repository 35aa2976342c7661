// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * RoCE-aware fault injection, tc clsact direct-action program. One object
 * per hook (device, direction); all hooks share the pinned maps, so one
 * rule table and one set of counters serve every attachment.
 *
 * Parse: Ethernet, optional 802.1Q, IPv4 or IPv6, UDP dport 4791, BTH, and
 * AETH where the opcode carries one (to tell ACK from NAK). Everything else
 * passes untouched. See inject_abi.h for the rule table and its semantics.
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

/* set between open and load */
const volatile __u32 inj_dir = INJ_DIR_INGRESS;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_MAX_RULES);
	__type(key, __u32);
	__type(value, struct inj_rule);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_MAX_RULES);
	__type(key, __u32);
	__type(value, struct inj_rule_state);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_state SEC(".maps");

/* rule id -> the deadline of its lease (bpf_ktime_get_ns); the agent that
 * owns the rule pushes it on while it lives (injector/inj.h) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INJ_MAX_RULES);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_leases SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, INJ_MAX_RULES);
	__type(key, __u32);
	__type(value, struct inj_rule_ctr);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_rule_ctrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, INJ_MAX_HOOKS);
	__type(key, __u32);
	__type(value, struct inj_hook_ctr);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_hook_ctrs SEC(".maps");

/* candidate masks: hook -> rules (+ its counter slot), class -> rules, exact QPN -> rules */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, INJ_MAX_HOOKS);
	__type(key, __u32);
	__type(value, struct inj_hook);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_hooks SEC(".maps");

/* the program's way to a hook (inject_abi.h): bucket -> slot -> hook */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_HOOK_BUCKETS);
	__type(key, __u32);
	__type(value, struct inj_hook_bucket);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_hook_idx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_MAX_HOOKS);
	__type(key, __u32);
	__type(value, struct inj_hook);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_hook_slots SEC(".maps");

/* the rule index's radix and interval tables, two sets each (inject_abi.h) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * INJ_F_RADIX);
	__type(key, __u32);
	__type(value, struct inj_rtab);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_rtabs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * INJ_F_MAX);
	__type(key, __u32);
	__type(value, struct inj_itab);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_itabs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_CLS_MAX);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_class_mask SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_QPN_BUCKETS);
	__type(key, __u32);
	__type(value, struct inj_qpn_bucket);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_qpn_mask SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inj_cfg);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_cfg SEC(".maps");

/* user space bookkeeping: ifindex -> INJ_OWN_* (qdiscs to remove on flush) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_owned SEC(".maps");

/* the trace (inject_abi.h): one ring for every hook, read by one rdma-inject */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, INJ_TRACE_RING_BYTES);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_trace SEC(".maps");

struct trace_buf {
	struct inj_trace_hdr h;
	__u8 data[INJ_TRACE_SNAP_MAX];
};

/* tracking (inject_abi.h): the QPs a hook saw, their PSNs' transmissions,
 * each hook's next QP index (by its counter slot), the switch by hand */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, INJ_QP_MAX);
	__type(key, struct inj_qp_key);
	__type(value, struct inj_qp);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_qps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, INJ_TX_MAX);
	__type(key, struct inj_tx_key);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_tx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, INJ_MAX_HOOKS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_qp_next SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_track SEC(".maps");

/* a record is built here, then copied into the ring at its real size */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_buf);
} inj_trace_scratch SEC(".maps");

/* CNPs (inject_abi.h): requests' destination QPNs by PSN, QPs' peers */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, INJ_PEER_MAX);
	__type(key, struct inj_peer_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_reqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, INJ_PEER_MAX);
	__type(key, struct inj_peer_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} inj_peers SEC(".maps");

/* a CNP is built here (at most 18 + 40 + 8 + 12 + 16 + 4 bytes), with
 * the CNP callbacks' variables */
struct cnp_buf {
	__u8 b[128];
	__u8 m[128];	/* the ICRC's input */
	__u8 t[16];
	struct inj_peer_key k;
	__u32 qpn, peer, hk, ip_off, l3, end, crc;
	__u16 ck;
};

static const __u32 inj_zero = 0;

/* track()'s template of a new QP entry (its window never written: zeros) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct inj_qp);
} inj_qp_fresh SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cnp_buf);
} inj_cnp_scratch SEC(".maps");

struct prng {
	__u64 s;
	__u32 gen;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct prng);
} inj_prng SEC(".maps");

struct pkt {
	__u32 dqpn;
	__u32 psn;
	__u32 len;		/* IP length */
	__u32 saddr, daddr;	/* IPv4 only, else 0 */
	__u32 ip_off;		/* offset of the IP header */
	__u32 bth_off;
	__u32 qidx;		/* tracked: the QP's index on the hook (0: not tracked) */
	__u32 rpsn;		/* tracked: PSN counted from the QP's first */
	__u32 tx;		/* tracked with INJ_TRACK_TX: this PSN's transmission (1 = first) */
	__u8 opcode;
	__u8 cls;
	__u8 v6;
	__u8 ecn;
};

struct cursor {
	void *pos;
	void *end;
};

static __always_inline void *take(struct cursor *c, __u32 len)
{
	void *p = c->pos;

	if (p + len > c->end)
		return 0;
	c->pos = p + len;
	return p;
}

/* 0 and *p filled when the packet is RoCEv2 */
static __always_inline int parse(struct __sk_buff *skb, struct pkt *p)
{
	void *data = (void *)(long)skb->data;
	struct cursor c = { data, (void *)(long)skb->data_end };
	struct ethhdr *eth = take(&c, sizeof(*eth));
	struct udphdr *udp;
	__u8 *bth, *aeth, syn = 0;
	__u16 proto;

	if (!eth)
		return -1;
	proto = eth->h_proto;
	if (proto == bpf_htons(ETH_P_8021Q)) {
		__u16 *vlan = take(&c, 4);

		if (!vlan)
			return -1;
		proto = vlan[1];
	}
	p->ip_off = c.pos - data;
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = take(&c, sizeof(*ip));

		if (!ip || ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
			return -1;	/* RoCEv2 senders use no IP options */
		if (ip->frag_off & bpf_htons(0x3fff))
			return -1;	/* a fragment (MF or an offset): RoCE is never fragmented,
					 * and a later fragment has no UDP or BTH to read */
		p->len = bpf_ntohs(ip->tot_len);
		p->saddr = ip->saddr;
		p->daddr = ip->daddr;
		p->ecn = ip->tos & 3;
		p->v6 = 0;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = take(&c, sizeof(*ip6));

		if (!ip6 || ip6->nexthdr != IPPROTO_UDP)
			return -1;
		p->len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
		p->saddr = 0;
		p->daddr = 0;
		p->ecn = (ip6->flow_lbl[0] >> 4) & 3;
		p->v6 = 1;
	} else {
		return -1;
	}
	udp = take(&c, sizeof(*udp));
	if (!udp || udp->dest != bpf_htons(INJ_ROCE_V2_PORT))
		return -1;
	p->bth_off = c.pos - data;
	bth = take(&c, 12);
	if (!bth)
		return -1;
	p->opcode = bth[0];
	/* one load and a byte swap each (BTH: 8 reserved bits, then the QPN;
	 * AckReq and 7 reserved bits, then the PSN) */
	p->dqpn = bpf_ntohl(*(__u32 *)(bth + 4)) & 0xffffff;
	p->psn = bpf_ntohl(*(__u32 *)(bth + 8)) & 0xffffff;
	if ((p->opcode & 0x1f) == 0x11) {
		aeth = take(&c, 4);
		if (aeth)
			syn = aeth[0];
	}
	p->cls = inj_classify(p->opcode, syn);
	return 0;
}

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

	if (r->class_mask && !(r->class_mask & (1u << p->cls)))
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

/*
 * The bytes between the BTH and the payload of a packet that carries data:
 * by opcode (low 5 bits), 2 bits each in EXT_CODES, code c meaning 4c + 8(c/2)
 * bytes (0; IMMDT, AETH or IETH 4; RETH 16; RETH and IMMDT 20); UD (transport
 * 3) adds its DETH (8). Arithmetic, no branch for the verifier to walk.
 */
#define EXT_CODES 0x500144e42440ULL
#define CORRUPT_MASK 0x5a
/* the ICRC's change when CORRUPT_MASK is flipped in the byte pad bytes
 * before the ICRC, by pad count (0 and 1, 2 and 3): the reflected CRC-32
 * (poly 0xedb88320, no init, no final XOR) of the error bytes; tests/bpf
 * checks every pad count against an ICRC computed from the whole packet */
#define ICRC_DELTA_01 0x4054b5de8bbeb8eaULL
#define ICRC_DELTA_23 0xa4b0efc6612bab66ULL

static __always_inline __u32 ext_len(__u32 op)
{
	__u32 c = (__u32)(EXT_CODES >> (2 * (op & 0x1f))) & 3, t = op >> 5;

	return 4 * c + 8 * (c >> 1) + 8 * ((t & (t >> 1) & ~(t >> 2)) & 1);
}

/*
 * Flip bits of the last payload byte (the one before the pad bytes and the
 * 4-byte ICRC). icrc: leave the ICRC, so the receiver discards the packet.
 * payload: make the ICRC right again, so the receiver accepts the packet and
 * its data lands in memory. The CRC is linear: the ICRC of the corrupted
 * packet is the old one XOR the CRC (no init, no final XOR) of the error
 * pattern, the last word before the ICRC with only the flipped bits set
 * (both words are sent least significant byte first, as loaded here). The
 * UDP checksum, when not 0 (RoCEv2 senders leave it 0), is kept right.
 *
 * A bpf_loop callback: its paths end in it, not in the rest of the program
 * (the verifier's budget: inlined, a few more branches took the program past
 * 1M processed instructions). Its arguments and result in the skb's control
 * block (tc's own scratch), so that the program's stack (near its 512 bytes)
 * grows by the skb's pointer only: cb[0] the ICRC's offset, cb[1] the BTH's,
 * cb[2] class << 8 | opcode, cb[3] the mode; out: cb[4] the verdict
 * (corrupted or tampered), 0 when nothing was corrupted (no payload).
 */
static long corrupt_cb(__u32 idx, void *ctx)
{
	struct __sk_buff *skb = *(struct __sk_buff **)ctx;
	__u32 w[2], icrc_off = skb->cb[0], bth_off = skb->cb[1], op_cls = skb->cb[2];
	__u32 cls = op_cls >> 8, payload = skb->cb[3] & 1;	/* 1: INJ_CORRUPT_PAYLOAD */
	__u32 old0, old1;
	__u64 sel;
	int pad;

	skb->cb[4] = 0;
	if ((cls != INJ_CLS_DATA && cls != INJ_CLS_READ_RESP) ||
	    bpf_skb_load_bytes(skb, bth_off + 1, w, 1))
		return 1;
	pad = (w[0] >> 4) & 3;	/* BTH byte 1: migreq, pad count, version */
	if (icrc_off + 4 > skb->len ||
	    (int)icrc_off - pad - (int)(bth_off + 12) - (int)ext_len(op_cls & 0xff) < 1)
		return 1;	/* no payload byte */
	if (bpf_skb_load_bytes(skb, icrc_off - 4, w, 8))
		return 1;
	old0 = w[0];
	old1 = w[1];
	w[0] ^= (__u32)CORRUPT_MASK << (8 * (3 - pad));
	/* the pad count's ICRC change, picked without a branch */
	sel = ICRC_DELTA_01 ^ ((ICRC_DELTA_01 ^ ICRC_DELTA_23) & -(__u64)(pad >> 1));
	w[1] ^= (__u32)(sel >> (32 * (pad & 1))) & -payload;
	if (bpf_skb_store_bytes(skb, icrc_off - 4, w, 8, 0))
		return 1;
	/* a UDP checksum (RoCEv2 senders leave it 0; MANGLED_0 leaves a 0 as
	 * it is) made right for the two words: 16-bit aligned in the segment
	 * (payload and pad fill whole words), and a one's complement sum is the
	 * same in either byte order. So only the ICRC can tell. */
	if (bpf_l4_csum_replace(skb, bth_off - 2, old0, w[0], BPF_F_MARK_MANGLED_0 | 4) ||
	    bpf_l4_csum_replace(skb, bth_off - 2, old1, w[1], BPF_F_MARK_MANGLED_0 | 4))
		return 1;
	skb->cb[4] = INJ_VERDICT_CORRUPT + payload * (INJ_VERDICT_TAMPER - INJ_VERDICT_CORRUPT);
	return 1;
}

static __always_inline int mark_ce(struct __sk_buff *skb, const struct pkt *p)
{
	if (!p->v6) {
		__u32 off = p->ip_off + 1;	/* TOS */
		__u8 tos, new;

		if (bpf_skb_load_bytes(skb, off, &tos, 1))
			return -1;
		new = tos | 3;
		if (new == tos)
			return 0;
		/* the checksum covers 16-bit words: TOS is the low byte of word 0 */
		if (bpf_l3_csum_replace(skb, p->ip_off + 10, bpf_htons(tos), bpf_htons(new), 2))
			return -1;
		return bpf_skb_store_bytes(skb, off, &new, 1, 0);
	} else {
		__u8 b;	/* traffic class straddles bytes 0 and 1; ECN = bits 5:4 of byte 1 */

		if (bpf_skb_load_bytes(skb, p->ip_off + 1, &b, 1))
			return -1;
		b |= 0x30;
		return bpf_skb_store_bytes(skb, p->ip_off + 1, &b, 1, 0);
	}
}

/*
 * CNPs (inject_abi.h). Each step runs in a bpf_loop callback, like
 * corrupt_cb and for the same reason (the verifier's budget), with its
 * arguments in the skb's control block and its variables in the per-CPU
 * scratch, not on the stack: the kernel counts a callback's stack with its
 * caller's, and the program's is near the 512 bytes.
 *
 * learn_cb, on every RoCE packet while a cnp rule exists: cb[0] source,
 * cb[1] destination, cb[2] destination QPN, cb[3] PSN, cb[4] opcode |
 * class << 8 | BTH offset << 16. An RC request with AckReq is remembered by
 * its PSN; the answer to it (ACK, READ response first or only, atomic
 * acknowledge: the same PSN the other way) pairs the two QPs.
 */
static long learn_cb(__u32 idx, void *ctx)
{
	struct __sk_buff *skb = *(struct __sk_buff **)ctx;
	__u32 op = skb->cb[4] & 0xff, cls = (skb->cb[4] >> 8) & 0xff;
	struct cnp_buf *c = bpf_map_lookup_elem(&inj_cnp_scratch, &inj_zero);
	__u32 *q;

	if (!c || (op >> 5))	/* RC only */
		return 1;
	c->k.saddr = skb->cb[0];
	c->k.daddr = skb->cb[1];
	c->k.n = skb->cb[3];
	c->qpn = skb->cb[2];
	if (cls == INJ_CLS_DATA || cls == INJ_CLS_READ_REQ || op == 0x13 || op == 0x14) {
		if (!bpf_skb_load_bytes(skb, (skb->cb[4] >> 16) + 8, c->t, 1) && (c->t[0] & 0x80))
			bpf_map_update_elem(&inj_reqs, &c->k, &c->qpn, BPF_ANY);
		return 1;
	}
	if (cls != INJ_CLS_ACK && op != 0x0d && op != 0x10 && op != 0x12)
		return 1;
	/* the answer from B to A (QPN qpn) to A's request of this PSN to B */
	c->k.saddr = skb->cb[1];
	c->k.daddr = skb->cb[0];
	q = bpf_map_lookup_elem(&inj_reqs, &c->k);
	if (!q)
		return 1;
	c->peer = *q;
	c->k.n = c->peer;		/* A to B's QP peer: sent by qpn */
	bpf_map_update_elem(&inj_peers, &c->k, &c->qpn, BPF_ANY);
	c->k.saddr = skb->cb[0];	/* B to A's QP qpn: sent by peer */
	c->k.daddr = skb->cb[1];
	c->k.n = c->qpn;
	bpf_map_update_elem(&inj_peers, &c->k, &c->peer, BPF_ANY);
	return 1;
}

/*
 * notify_cb, for a packet a cnp rule selected: cb[0] source, cb[1]
 * destination, cb[2] destination QPN. When its sender's QPN is known and the
 * other direction of the device is attached (it makes the CNP), a copy goes
 * that way marked with the QPN; out: cb[4] 1 when it went.
 */
static long notify_cb(__u32 idx, void *ctx)
{
	struct __sk_buff *skb = *(struct __sk_buff **)ctx;
	struct cnp_buf *c = bpf_map_lookup_elem(&inj_cnp_scratch, &inj_zero);
	__u32 *q, mark = skb->mark;

	skb->cb[4] = 0;
	if (!c)
		return 1;
	c->k.saddr = skb->cb[0];
	c->k.daddr = skb->cb[1];
	c->k.n = skb->cb[2];
	c->hk = inj_hook_key(skb->ifindex, !inj_dir);
	q = bpf_map_lookup_elem(&inj_peers, &c->k);
	if (!q || !bpf_map_lookup_elem(&inj_hooks, &c->hk))
		return 1;
	skb->mark = INJ_MARK_CNP | (*q & 0xffffff);
	/* back the way it came: ingress -> the device's egress, egress -> its
	 * ingress (the copy's pass there uses the scratch: nothing of it is
	 * read here after this) */
	if (!bpf_clone_redirect(skb, skb->ifindex, inj_dir == INJ_DIR_INGRESS ? 0 : BPF_F_INGRESS))
		skb->cb[4] = 1;
	skb->mark = mark;
	return 1;
}

static __always_inline __u32 crc_byte(__u32 crc, __u8 v)
{
	crc ^= v;
#pragma unroll
	for (int k = 0; k < 8; k++)
		crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	return crc;
}

/* one's complement sum of n 16-bit big-endian words at b (n <= 40) */
static __always_inline __u32 sum16(const __u8 *b, __u32 n)
{
	__u32 s = 0;

	for (__u32 i = 0; i < 40; i++) {
		if (i >= n)
			break;
		s += (__u32)b[2 * i] << 8 | b[2 * i + 1];
	}
	return s;
}

static __always_inline __u16 fold(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

/*
 * The copy's own pass (its mark: INJ_MARK_CNP and the CNP's destination
 * QPN): the copy of a packet from S to R becomes R's CNP to S. Ethernet and
 * IP addresses swapped, ECN Not-ECT, the same UDP source port (S's flow),
 * BTH opcode 0x81, P_Key kept, BECN set, the QPN, PSN 0, 16 zero bytes, the
 * ICRC computed as the receiver checks it (the CRC-32 of 8 bytes of ones
 * and the headers with their variant fields as ones); the IPv4 header
 * checksum, the IPv6 UDP checksum. Three steps: cnp_cb builds the bytes in
 * the scratch (cb[0]: the mark; out: cb[4] the bytes from the IP header the
 * ICRC covers, 0 when it failed), crc_cb runs the CRC over them, cnp_fin_cb
 * puts the ICRC in and the bytes into the packet (out: cb[4] 1 when done).
 */
static long cnp_cb(__u32 idx, void *ctx)
{
	struct __sk_buff *skb = *(struct __sk_buff **)ctx;
	struct cnp_buf *c = bpf_map_lookup_elem(&inj_cnp_scratch, &inj_zero);
	__u64 ip_off = 14, l3, end;

	skb->cb[4] = 0;
	if (!c || bpf_skb_load_bytes(skb, 12, c->t, 2))
		return 1;
	if (c->t[0] == 0x81 && c->t[1] == 0x00) {	/* 802.1Q */
		ip_off = 18;
		if (bpf_skb_load_bytes(skb, 16, c->t, 2))
			return 1;
	}
	if (c->t[0] == 0x08 && c->t[1] == 0x00)
		l3 = 20;
	else if (c->t[0] == 0x86 && c->t[1] == 0xdd)
		l3 = 40;
	else
		return 1;
	end = ip_off + l3 + 8 + 12 + INJ_CNP_PAYLOAD + 4;
	c->ip_off = (__u32)ip_off;
	c->l3 = (__u32)l3;
	c->end = (__u32)end;
	if (bpf_skb_change_tail(skb, (__u32)end, 0) ||
	    bpf_skb_load_bytes(skb, 0, c->b, ip_off + l3 + 8 + 12))
		return 1;
	skb->cb[4] = 1;
	return 1;
}

/* the headers rewritten (cnp_cb's second half, its own frame: the stack) */
static long cnp_hdr_cb(__u32 idx, void *ctx)
{
	struct __sk_buff *skb = *(struct __sk_buff **)ctx;
	struct cnp_buf *c = bpf_map_lookup_elem(&inj_cnp_scratch, &inj_zero);
	__u32 qpn = skb->cb[0] & 0xffffff, ip_off, l3, end;
	__u8 *b, *ip, *u, *h;

	skb->cb[4] = 0;
	if (!c)
		return 1;
	ip_off = c->ip_off & 31;
	l3 = c->l3 == 40 ? 40 : 20;
	end = c->end & 127;
	b = c->b;
	ip = b + ip_off;
	u = ip + l3;
	h = u + 8;
	__builtin_memcpy(c->t, b, 6);
	__builtin_memcpy(b, b + 6, 6);
	__builtin_memcpy(b + 6, c->t, 6);
	if (l3 == 20) {
		ip[1] &= 0xfc;
		ip[2] = 0;
		ip[3] = (__u8)(end - ip_off);
		__builtin_memcpy(c->t, ip + 12, 4);
		__builtin_memcpy(ip + 12, ip + 16, 4);
		__builtin_memcpy(ip + 16, c->t, 4);
		ip[10] = ip[11] = 0;
		c->ck = fold(sum16(ip, 10));
		ip[10] = (__u8)(c->ck >> 8);
		ip[11] = (__u8)c->ck;
	} else {
		ip[1] &= 0xcf;
		ip[4] = 0;
		ip[5] = (__u8)(end - ip_off - 40);
		__builtin_memcpy(c->t, ip + 8, 16);
		__builtin_memcpy(ip + 8, ip + 24, 16);
		__builtin_memcpy(ip + 24, c->t, 16);
	}
	u[4] = 0;
	u[5] = (__u8)(end - ip_off - l3);
	u[6] = u[7] = 0;
	h[0] = 0x81;
	h[1] = 0;
	h[4] = 0x40;	/* BECN */
	h[5] = (__u8)(qpn >> 16);
	h[6] = (__u8)(qpn >> 8);
	h[7] = (__u8)qpn;
	h[8] = h[9] = h[10] = h[11] = 0;
	__builtin_memset(h + 12, 0, INJ_CNP_PAYLOAD);
	/* the ICRC's input in m: the bytes from the IP header on, the variant
	 * fields as ones */
	__builtin_memcpy(c->m, ip, 40 + 8 + 12 + INJ_CNP_PAYLOAD);
	if (l3 == 20) {
		c->m[1] = 0xff;
		c->m[8] = 0xff;
		c->m[10] = c->m[11] = 0xff;
		c->m[20 + 6] = c->m[20 + 7] = 0xff;
		c->m[20 + 8 + 4] = 0xff;
	} else {
		c->m[0] |= 0x0f;
		c->m[1] = c->m[2] = c->m[3] = 0xff;
		c->m[7] = 0xff;
		c->m[40 + 6] = c->m[40 + 7] = 0xff;
		c->m[40 + 8 + 4] = 0xff;
	}
	c->crc = 0xdebb20e3;	/* the CRC-32 register after 8 bytes of ones */
	skb->cb[4] = end - 4 - ip_off;
	return 1;
}

static long crc_cb(__u32 idx, void *ctx)
{
	struct cnp_buf *c = bpf_map_lookup_elem(&inj_cnp_scratch, &inj_zero);

	if (!c)
		return 1;
	c->crc = crc_byte(c->crc, c->m[idx & 127]);
	return 0;
}

static long cnp_fin_cb(__u32 idx, void *ctx)
{
	struct __sk_buff *skb = *(struct __sk_buff **)ctx;
	struct cnp_buf *c = bpf_map_lookup_elem(&inj_cnp_scratch, &inj_zero);
	__u32 crc, i;
	__u64 n;
	__u8 *u;

	skb->cb[4] = 0;
	if (!c)
		return 1;
	crc = ~c->crc;
	i = c->end - 4;
	c->b[i & 127] = (__u8)crc;
	c->b[(i + 1) & 127] = (__u8)(crc >> 8);
	c->b[(i + 2) & 127] = (__u8)(crc >> 16);
	c->b[(i + 3) & 127] = (__u8)(crc >> 24);
	if (c->l3 == 40) {	/* UDP over IPv6: pseudo-header, segment (ICRC included) */
		u = c->b + (c->ip_off & 31) + 40;
		c->ck = fold(sum16(c->b + (c->ip_off & 31) + 8, 16) + (c->end - c->ip_off - 40) +
			     17 + sum16(u, (c->end - c->ip_off - 40) / 2));
		if (!c->ck)
			c->ck = 0xffff;
		u[6] = (__u8)(c->ck >> 8);
		u[7] = (__u8)c->ck;
	}
	n = c->end & 127;	/* 64 bits: no zero extension between check and use */
	if (n < 60 || bpf_skb_store_bytes(skb, 0, c->b, n, 0))
		return 1;
	/* brought in on an ingress hook: for this host now (it was for the peer) */
	if (inj_dir == INJ_DIR_INGRESS && bpf_skb_change_type(skb, 0 /* PACKET_HOST */))
		return 1;
	skb->cb[4] = 1;
	return 1;
}

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

/* the packet's QP index, relative PSN, resend and transmission counts */
static __always_inline void track(struct pkt *p, const struct inj_hook *hook,
				  struct inj_hook_ctr *hc, __u32 hk, __u32 want)
{
	struct inj_qp_key k = { hk, p->saddr, p->daddr, p->dqpn };
	struct inj_qp *q = bpf_map_lookup_elem(&inj_qps, &k);

	if (!q) {
		/* the new entry from a per-CPU template whose window stays 0, not
		 * from the stack (272 bytes of the program's 512) */
		struct inj_qp *fresh = bpf_map_lookup_elem(&inj_qp_fresh, &inj_zero);
		__u32 slot = hook->slot;
		__u64 *next = bpf_map_lookup_elem(&inj_qp_next, &slot);

		if (!next || !fresh)
			return;
		/* two CPUs meeting one new QP at once may leave a gap in the indices */
		fresh->idx = (__u32)(__sync_fetch_and_add(next, 1) + 1);
		fresh->first_psn = p->psn;
		fresh->max_psn = 0;
		fresh->seen = 0;
		bpf_map_update_elem(&inj_qps, &k, fresh, BPF_NOEXIST);
		q = bpf_map_lookup_elem(&inj_qps, &k);
		if (!q)
			return;
	}
	p->qidx = q->idx;
	p->rpsn = (p->psn - q->first_psn) & 0xffffff;
	if (resendable(p)) {
		__u32 back = (q->max_psn - p->psn) & 0xffffff, slot = p->psn & (INJ_QP_WIN - 1);

		if (q->seen && back < 0x800000 &&	/* not past the highest: had it? */
		    (back >= INJ_QP_WIN || q->win[slot] == p->psn + 1)) {
			hc->resent++;
		} else {
			q->win[slot] = p->psn + 1;	/* 0: an empty slot */
			if (!q->seen || back >= 0x800000)
				q->max_psn = p->psn;
			q->seen = 1;
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
				      __u64 delay, __u64 now)
{
	struct inj_cfg *cfg;
	struct trace_buf *b;
	__u32 zero = 0, cap;

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
	b->h.pad0 = 0;
	if (bpf_skb_load_bytes(skb, 0, b->data, cap) ||
	    bpf_ringbuf_output(&inj_trace, b, sizeof(b->h) + cap, 0)) {
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
	int ret;

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
				trace_pkt(skb, hook, hc, hk, INJ_VERDICT_COPY, 0, 0, 0);
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
				trace_pkt(skb, hook, hc, hk, INJ_VERDICT_CNP, 0, 0, 0);
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
	if (parse(skb, &sc.p))
		return TC_ACT_OK;
	hc->roce_pkts++;
	hc->roce_bytes += skb->len;
	cfg = bpf_map_lookup_elem(&inj_cfg, &zero);
	if (!cfg)
		return TC_ACT_OK;
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
	ret = judge(skb, &self, hook, cfg, &sc, &verdict, &rule_id, &delay, &now);
	trace_pkt(skb, hook, hc, hk, verdict, rule_id, delay, now);
	return ret;
}

/* the baseline for the per-packet cost benchmark */
SEC("tc")
int inj_empty(struct __sk_buff *skb)
{
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
