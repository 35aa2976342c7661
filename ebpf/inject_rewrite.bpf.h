/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Rewriting a packet in place: corrupted payload bytes with the ICRC kept
 * right, and the ECN CE mark.
 * Part of inject.bpf.c, the one program: included there, nowhere else.
 */
#ifndef RTB_INJECT_REWRITE_BPF_H
#define RTB_INJECT_REWRITE_BPF_H

#include "inject_icrc.bpf.h"

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

#endif
