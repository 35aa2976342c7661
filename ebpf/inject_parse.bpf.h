/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A RoCEv2 packet parsed: Ethernet, optional 802.1Q, IPv4 or IPv6, UDP
 * dport 4791, BTH, and AETH where the opcode carries one. Other TCP and
 * UDP packets get their class and ports only (rules with `proto`).
 * Part of inject.bpf.c, the one program: included there, nowhere else.
 */
#ifndef RTB_INJECT_PARSE_BPF_H
#define RTB_INJECT_PARSE_BPF_H

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
	__u32 wire;		/* the forwarder's: the frame's length, all its buffers */
	__u16 sport, dport;	/* INJ_CLS_TCP / INJ_CLS_UDP packets */
	__u8 opcode;
	__u8 cls;
	__u8 v6;
	__u8 ecn;
	__u8 resent;		/* tracked: the hook counted it resent (inj_hook_ctr.resent) */
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

/* a TCP segment or a UDP datagram that is not RoCE: its class and ports
 * (the rest of *p as for RoCE, the BTH fields 0); 1, or -1 if too short */
static __always_inline int parse_ip(struct cursor *c, struct pkt *p, __u8 l4)
{
	__u16 *ports = take(c, 4);

	if (!ports)
		return -1;
	p->sport = bpf_ntohs(ports[0]);
	p->dport = bpf_ntohs(ports[1]);
	p->cls = l4 == IPPROTO_TCP ? INJ_CLS_TCP : INJ_CLS_UDP;
	return 1;
}

/* 0 and *p filled when the packet is RoCEv2; 1 when it is another TCP or
 * UDP packet (parse_ip); -1 for anything else */
static __always_inline int parse_data(void *data, void *data_end, struct pkt *p)
{
	struct cursor c = { data, data_end };
	struct ethhdr *eth = take(&c, sizeof(*eth));
	struct udphdr *udp;
	__u8 *bth, *aeth, syn = 0, l4;
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

		if (!ip || ip->ihl != 5)
			return -1;	/* RoCEv2 senders use no IP options, nor does Linux's TCP */
		l4 = ip->protocol;
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

		if (!ip6)
			return -1;
		l4 = ip6->nexthdr;
		p->len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
		p->saddr = 0;
		p->daddr = 0;
		p->ecn = (ip6->flow_lbl[0] >> 4) & 3;
		p->v6 = 1;
	} else {
		return -1;
	}
	p->dqpn = 0;
	p->psn = 0;
	p->opcode = 0;
	if (l4 == IPPROTO_TCP)
		return parse_ip(&c, p, l4);
	if (l4 != IPPROTO_UDP)
		return -1;
	udp = take(&c, sizeof(*udp));
	if (!udp)
		return -1;
	if (udp->dest != bpf_htons(INJ_ROCE_V2_PORT)) {
		c.pos = udp;
		return parse_ip(&c, p, l4);
	}
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

/* a tc program's packet (its linear part: the headers) */
static __always_inline int parse(struct __sk_buff *skb, struct pkt *p)
{
	return parse_data((void *)(long)skb->data, (void *)(long)skb->data_end, p);
}

#endif
