/* SPDX-License-Identifier: MIT */
/* Crafted RoCEv2 frames for BPF_PROG_TEST_RUN (tests and the benchmark). */
#ifndef RTB_FRAMES_H
#define RTB_FRAMES_H

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <stdint.h>
#include <string.h>

struct frame_spec {
	int v6;
	uint8_t opcode;
	uint8_t syndrome;	/* AETH, for opcode 0x11 */
	uint32_t dqpn;
	uint32_t psn;
	const char *src, *dst;	/* IPv4 text */
	uint8_t ecn;
	uint16_t payload;	/* bytes between the headers and the ICRC */
	uint16_t dport;		/* 0 = 4791 */
	uint16_t frag_off;	/* IPv4 flags and fragment offset, host order */
};

static inline uint16_t ip_csum(const void *p, size_t len)
{
	const uint16_t *w = p;
	uint32_t s = 0;

	for (; len > 1; len -= 2)
		s += *w++;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* builds the frame into buf, returns its length */
static inline size_t frame_build(uint8_t *buf, const struct frame_spec *f)
{
	struct ethhdr *eth = (struct ethhdr *)buf;
	size_t l3 = sizeof(*eth), l4, bth, n;
	struct udphdr *udp;
	int aeth = (f->opcode & 0x1f) == 0x11 || (f->opcode & 0x1f) == 0x0d ||
		   (f->opcode & 0x1f) == 0x0f || (f->opcode & 0x1f) == 0x10;
	size_t tail = 12 + (aeth ? 4 : 0) + f->payload + 4;

	memset(buf, 0, 14);
	memcpy(eth->h_dest, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x01", 6);
	if (!f->v6) {
		struct iphdr *ip = (struct iphdr *)(buf + l3);

		eth->h_proto = htons(ETH_P_IP);
		memset(ip, 0, sizeof(*ip));
		ip->version = 4;
		ip->ihl = 5;
		ip->tos = f->ecn & 3;
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->tot_len = htons((uint16_t)(sizeof(*ip) + sizeof(*udp) + tail));
		inet_pton(AF_INET, f->src ? f->src : "198.18.0.1", &ip->saddr);
		inet_pton(AF_INET, f->dst ? f->dst : "198.18.0.2", &ip->daddr);
		ip->frag_off = htons(f->frag_off);
		ip->check = ip_csum(ip, sizeof(*ip));
		l4 = l3 + sizeof(*ip);
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)(buf + l3);

		eth->h_proto = htons(ETH_P_IPV6);
		memset(ip6, 0, sizeof(*ip6));
		ip6->version = 6;
		ip6->flow_lbl[0] = (uint8_t)((f->ecn & 3) << 4);
		ip6->payload_len = htons((uint16_t)(sizeof(*udp) + tail));
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = 64;
		inet_pton(AF_INET6, "fd00::1", &ip6->saddr);
		inet_pton(AF_INET6, "fd00::2", &ip6->daddr);
		l4 = l3 + sizeof(*ip6);
	}
	udp = (struct udphdr *)(buf + l4);
	udp->source = htons(49152);
	udp->dest = htons(f->dport ? f->dport : 4791);
	udp->len = htons((uint16_t)(sizeof(*udp) + tail));
	udp->check = 0;
	bth = l4 + sizeof(*udp);
	memset(buf + bth, 0, tail);
	buf[bth] = f->opcode;
	buf[bth + 1] = 0x40;	/* migreq */
	buf[bth + 2] = 0xff;	/* pkey 0xffff */
	buf[bth + 3] = 0xff;
	buf[bth + 5] = (uint8_t)(f->dqpn >> 16);
	buf[bth + 6] = (uint8_t)(f->dqpn >> 8);
	buf[bth + 7] = (uint8_t)f->dqpn;
	buf[bth + 8] = 0x80;	/* ack request */
	buf[bth + 9] = (uint8_t)(f->psn >> 16);
	buf[bth + 10] = (uint8_t)(f->psn >> 8);
	buf[bth + 11] = (uint8_t)f->psn;
	if (aeth)
		buf[bth + 12] = f->syndrome;
	n = bth + tail;
	for (size_t i = bth + 12 + (aeth ? 4 : 0); i < n - 4; i++)
		buf[i] = (uint8_t)i;
	return n;
}

#endif
