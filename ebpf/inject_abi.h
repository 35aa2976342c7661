/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Everything that crosses the BPF / user space boundary of the injector.
 * Used by: ebpf/inject.bpf.c (kernel side) and injector/ (rdma-inject and
 * the agent's library). Fixed-width types, explicit padding, no pointers,
 * no bool, nothing but <linux/types.h>: CI compiles this header alone with
 * gcc and with clang -target bpf.
 */
#ifndef INJECT_ABI_H
#define INJECT_ABI_H

#include <linux/types.h>

#define INJ_ROCE_V2_PORT 4791

/* per-CPU counters, index = enum inj_ctr; one array per direction */
enum inj_ctr {
	INJ_CTR_PKTS = 0,	/* every packet the program saw */
	INJ_CTR_BYTES,
	INJ_CTR_ROCE_PKTS,	/* UDP dport 4791 with a BTH */
	INJ_CTR_ROCE_BYTES,
	INJ_CTR_ROCE_ACKS,	/* opcode 0x11 (RC ACK) */
	INJ_CTR_CNPS,		/* opcode 0x81 */
	INJ_CTR_MAX,
};

/* what the parser extracted from one RoCEv2 packet (also the key of
 * the last-seen record user space reads for `rdma-inject stats`) */
struct inj_pkt {
	__u32 dqpn;		/* BTH destination QP, 24 bits */
	__u32 psn;		/* BTH PSN, 24 bits */
	__u8 opcode;
	__u8 flags;		/* bit 0 solicited, bit 1 ack request */
	__u16 len;		/* L3 length */
};

_Static_assert(sizeof(struct inj_pkt) == 12, "inj_pkt layout");

#endif
