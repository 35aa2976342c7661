/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A RoCE packet's layout after the BTH and the ICRC's change when payload
 * bits are flipped: what the tc program and the XDP forwarder corrupt by.
 */
#ifndef RTB_INJECT_ICRC_BPF_H
#define RTB_INJECT_ICRC_BPF_H

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

#endif
