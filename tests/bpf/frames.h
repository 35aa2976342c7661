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
#include <zlib.h>

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
	uint8_t pad;		/* the BTH's pad count: the payload's last bytes that are not data */
	uint8_t udp_csum;	/* IPv4: a UDP checksum (RoCEv2 senders leave it 0) */
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

/*
 * The RoCEv2 ICRC of a frame of n bytes (Ethernet, IP, UDP, BTH ... ICRC):
 * the CRC-32 of 8 bytes of ones, then the IP, UDP and BTH headers with their
 * variant fields as ones (IPv4 TOS, TTL, checksum; IPv6 traffic class, flow
 * label, hop limit; UDP checksum; BTH resv8a), then the rest up to the ICRC,
 * sent least significant byte first (IBA annex 17, rxe_icrc.c's order).
 */
static inline uint32_t frame_icrc(const uint8_t *f, size_t n)
{
	uint8_t h[40 + 8 + 12];
	size_t ip = 14, l = (f[12] == 0x86 && f[13] == 0xdd) ? 40 : 20, hl = l + 8 + 12;
	uint32_t crc;

	memset(h, 0xff, 8);
	crc = (uint32_t)crc32(0, h, 8);	/* zlib's: the ICRC's CRC-32 */
	memcpy(h, f + ip, hl);
	if (l == 20) {
		h[1] = 0xff;			/* TOS */
		h[8] = 0xff;			/* TTL */
		h[10] = h[11] = 0xff;		/* checksum */
	} else {
		h[0] |= 0x0f;			/* traffic class and flow label */
		h[1] = h[2] = h[3] = 0xff;
		h[7] = 0xff;			/* hop limit */
	}
	h[l + 6] = h[l + 7] = 0xff;		/* UDP checksum */
	h[l + 8 + 4] = 0xff;			/* BTH resv8a */
	crc = (uint32_t)crc32(crc, h, (uInt)hl);
	return (uint32_t)crc32(crc, f + ip + hl, (uInt)(n - ip - hl - 4));
}

static inline uint32_t frame_icrc_sent(const uint8_t *f, size_t n)
{
	const uint8_t *p = f + n - 4;

	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* IPv4: the one's complement sum of the UDP pseudo-header and segment */
static inline uint16_t frame_udp_sum(const uint8_t *f, size_t n)
{
	uint8_t ph[12];
	uint32_t s = 0;
	size_t i, len = n - 34;

	memcpy(ph, f + 26, 8);	/* saddr, daddr */
	ph[8] = 0;
	ph[9] = IPPROTO_UDP;
	ph[10] = (uint8_t)(len >> 8);
	ph[11] = (uint8_t)len;
	for (i = 0; i < 12; i += 2)
		s += (uint32_t)ph[i] << 8 | ph[i + 1];
	for (i = 0; i < len; i += 2)
		s += (uint32_t)f[34 + i] << 8 | (i + 1 < len ? f[34 + i + 1] : 0);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* IPv4: no UDP checksum, or one that verifies */
static inline int frame_udp_ok(const uint8_t *f, size_t n)
{
	return (!f[40] && !f[41]) || frame_udp_sum(f, n) == 0xffff;
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
	buf[bth + 1] = (uint8_t)(0x40 | (f->pad & 3) << 4);	/* migreq, pad count */
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
	{
		uint32_t c = frame_icrc(buf, n);

		for (int k = 0; k < 4; k++)
			buf[n - 4 + k] = (uint8_t)(c >> (8 * k));
	}
	if (f->udp_csum && !f->v6) {
		uint16_t c = (uint16_t)~frame_udp_sum(buf, n);	/* with check 0 */

		udp->check = htons(c ? c : 0xffff);
	}
	return n;
}

#endif
