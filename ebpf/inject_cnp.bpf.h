/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CNPs: the QP pairs learned from the traffic, and a CNP forged and sent
 * back to a selected packet's sender.
 * Part of inject.bpf.c, the one program: included there, nowhere else.
 */
#ifndef RTB_INJECT_CNP_BPF_H
#define RTB_INJECT_CNP_BPF_H

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

/* the skb made the CNP (cb[0]: its QPN in the low 24 bits): cnp_cb,
 * cnp_hdr_cb, the CRC, cnp_fin_cb; nonzero when it is one. self: a slot
 * holding skb, the callbacks' argument */
static __always_inline __u32 cnp_make(struct __sk_buff *skb, struct __sk_buff **self)
{
	bpf_loop(1, cnp_cb, self, 0);
	if (skb->cb[4])
		bpf_loop(1, cnp_hdr_cb, self, 0);
	if (skb->cb[4]) {
		bpf_loop(skb->cb[4] & 127, crc_cb, self, 0);
		bpf_loop(1, cnp_fin_cb, self, 0);
	}
	return skb->cb[4];
}

#endif
