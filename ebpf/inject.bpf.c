// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * RoCEv2-aware tc (clsact, direct-action) program. This first version parses
 * Ethernet / optional VLAN / IPv4 or IPv6 / UDP 4791 / BTH and counts per
 * direction; the fault rules build on this parser (issue: RoCE-aware fault
 * injection).
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

/* set by user space between open and load: 0 = ingress, 1 = egress */
const volatile __u32 inj_dir = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, INJ_CTR_MAX);
	__type(key, __u32);
	__type(value, __u64);
} inj_counters SEC(".maps");

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

static __always_inline void count(__u32 k, __u64 v)
{
	__u64 *p = bpf_map_lookup_elem(&inj_counters, &k);

	if (p)
		*p += v;
}

/* 0 and *pkt filled when the packet is RoCEv2 */
static __always_inline int parse_roce(struct __sk_buff *skb, struct inj_pkt *pkt)
{
	struct cursor c = { (void *)(long)skb->data, (void *)(long)skb->data_end };
	struct ethhdr *eth = take(&c, sizeof(*eth));
	struct udphdr *udp;
	__u8 *bth;
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
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = take(&c, sizeof(*ip));

		if (!ip || ip->ihl < 5 || ip->protocol != IPPROTO_UDP)
			return -1;
		if (ip->ihl > 5 && !take(&c, (ip->ihl - 5) * 4))
			return -1;
		pkt->len = bpf_ntohs(ip->tot_len);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = take(&c, sizeof(*ip6));

		if (!ip6 || ip6->nexthdr != IPPROTO_UDP)
			return -1;
		pkt->len = bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
	} else {
		return -1;
	}
	udp = take(&c, sizeof(*udp));
	if (!udp || udp->dest != bpf_htons(INJ_ROCE_V2_PORT))
		return -1;
	bth = take(&c, 12);
	if (!bth)
		return -1;
	pkt->opcode = bth[0];
	pkt->flags = (bth[1] >> 7) | ((bth[8] >> 6) & 2);
	pkt->dqpn = ((__u32)bth[5] << 16) | ((__u32)bth[6] << 8) | bth[7];
	pkt->psn = ((__u32)bth[9] << 16) | ((__u32)bth[10] << 8) | bth[11];
	return 0;
}

SEC("tc")
int inj_tc(struct __sk_buff *skb)
{
	struct inj_pkt pkt = {};

	count(INJ_CTR_PKTS, 1);
	count(INJ_CTR_BYTES, skb->len);
	if (parse_roce(skb, &pkt))
		return TC_ACT_OK;
	count(INJ_CTR_ROCE_PKTS, 1);
	count(INJ_CTR_ROCE_BYTES, skb->len);
	if (pkt.opcode == 0x11)
		count(INJ_CTR_ROCE_ACKS, 1);
	else if (pkt.opcode == 0x81)
		count(INJ_CTR_CNPS, 1);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
