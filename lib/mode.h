/* SPDX-License-Identifier: MIT */
/*
 * The recovery modes, once: what an experiment arm compares (HACKING.md;
 * docs/recovery.md). The collective engine (workloads/coll.c) implements them;
 * the controller names and parses them from this list.
 */
#ifndef RTB_MODE_H
#define RTB_MODE_H

#define RTB_MODES(X)                                                                               \
	X(M_RC, "rc")             /* RC QPs: the NIC retransmits */                                \
	X(M_LOSSY, "lossy")       /* UC, adaptive timeout, losses zero-filled */                   \
	X(M_HADAMARD, "hadamard") /* lossy on a randomized Hadamard transform */                   \
	X(M_EC, "ec")             /* lossy plus erasure-coded parity */                           \
	X(M_SR, "sr")             /* UC, selective repeat: only missing pieces resent */

#define RTB_MODE_ENUM(e, s) e,
enum rtb_mode { RTB_MODES(RTB_MODE_ENUM) RTB_MODE_N };
#undef RTB_MODE_ENUM

/* NULL-terminated, by enum rtb_mode */
extern const char *const rtb_mode_names[];
/* the enum rtb_mode a name means, or -1 */
int rtb_mode_of(const char *name);

#endif
