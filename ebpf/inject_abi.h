/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Everything that crosses the BPF / user space boundary of the injector.
 * Used by: ebpf/inject.bpf.c (kernel side), injector/ (rdma-inject and the
 * library the agent links) and tests/bpf. Fixed-width types, explicit
 * padding, no pointers, no bool, nothing but <linux/types.h>: CI compiles
 * this header alone with gcc and with clang -target bpf.
 *
 * Rules live in an array of INJ_MAX_RULES slots. A packet's candidate rules
 * are the AND of bitmasks (bit i: slot i) that user space keeps in step
 * with the table, one per match field: the hook's rules, its opcode
 * class's, its exact QPN's (direct-mapped buckets), and for every other
 * field some rule restricts, the rules whose range covers the packet's
 * value, from a radix table or an interval table (below).
 * So the rule count hardly changes the cost: a packet's candidates are
 * the rules that match it on every indexed field. Candidates are then
 * checked in slot order and the FIRST rule whose match fields all hold
 * (only a lease is not indexed) takes the packet (its `matched` counts;
 * its action fires when its selection model says so); later rules are
 * not looked at.
 */
#ifndef INJECT_ABI_H
#define INJECT_ABI_H

#include <linux/types.h>
#include <linux/bpf.h>

#define INJ_ROCE_V2_PORT 4791
#define INJ_MAX_RULES 64
#define INJ_PIN_DIR "/sys/fs/bpf/rdma-inject"
/* rdma-inject's state lock and last rule id (injector/inj.c) */
#define INJ_LOCK_PATH "/run/rdma-inject.lock"

/* skb->mark bit set on packets the injector itself re-injects (duplicates) */
#define INJ_MARK_CLONE 0x52444d41u
/* skb->mark of the copy a cnp rule sends the other way, to be made a CNP on
 * its own pass: this in the top byte, the CNP's destination QPN below */
#define INJ_MARK_CNP 0x43000000u
#define INJ_MARK_CNP_MASK 0xff000000u

enum inj_dir {
	INJ_DIR_INGRESS = 0,
	INJ_DIR_EGRESS = 1,
};

/*
 * The lists every side is generated from (X-macros, iproute2's
 * RDMA_DEV_FLAGS style): the enums here, the rule grammar's keywords and
 * names (injector/rule.c), the counters' JSON and text (injector/main.c,
 * the TUI). Adding an action: one INJ_ACTIONS line (and its counter in
 * INJ_COUNTERS), its case in ebpf/inject.bpf.c, its arguments, if any,
 * in injector/rule.c's parser.
 */

/* opcode classes (bit i of a class mask): X(enum suffix, keyword) */
#define INJ_CLASSES(X)                                                                             \
	X(DATA, "data")           /* SEND / WRITE (RC, UC, UD), incl. immediate, invalidate */     \
	X(READ_REQ, "read_req")   /* RDMA READ request */                                          \
	X(READ_RESP, "read_resp") /* RDMA READ response first/middle/last/only */                  \
	X(ACK, "ack")             /* ACK with a positive AETH syndrome */                          \
	X(NAK, "nak")             /* ACK opcode with a NAK or RNR-NAK syndrome */                  \
	X(ATOMIC, "atomic")       /* CmpSwap / FetchAdd request, atomic acknowledge */             \
	X(CNP, "cnp")             /* congestion notification packet (0x81) */                      \
	X(OTHER, "other")

/* per-rule counters, in struct inj_rule_ctr's order */
#define INJ_COUNTERS(X)                                                                            \
	X(matched)                                                                                 \
	X(dropped)                                                                                 \
	X(delayed)                                                                                 \
	X(reordered)                                                                               \
	X(duplicated)                                                                              \
	X(corrupted)                                                                               \
	X(marked)                                                                                  \
	X(matched_bytes)                                                                           \
	X(notified)

/* actions: X(enum suffix, keyword, the counter of the packets it hit) */
#define INJ_ACTIONS(X)                                                                             \
	X(COUNT, "count", matched)        /* match and count only */                               \
	X(DROP, "drop", dropped)          /* ingress: TC_ACT_SHOT; egress: TC_ACT_STOLEN */        \
	X(DELAY, "delay", delayed)        /* EDT timestamp, held by fq in INJ_BAND_DELAY */        \
	X(REORDER, "reorder", reordered)  /* steered to INJ_BAND_REORDER: later ones overtake */   \
	X(DUP, "duplicate", duplicated)   /* clone and re-inject once */                           \
	X(CORRUPT, "corrupt", corrupted)  /* flip payload bits; ICRC left wrong or made right */  \
	X(ECN, "ecn", marked)             /* set ECN to CE (IPv4: checksum fixed) */               \
	X(CNP, "cnp", notified)           /* a CNP sent back to the packet's sender (below) */

#define INJ_CLS_ENUM(e, kw) INJ_CLS_##e,
enum inj_class { INJ_CLASSES(INJ_CLS_ENUM) INJ_CLS_MAX };
#undef INJ_CLS_ENUM

/*
 * Other IP traffic, for rules with `proto` (NVMe/TCP beside NVMe/RDMA): a
 * TCP segment, or a UDP datagram not to port 4791. Classes after the RoCE
 * ones; a rule's class_mask 0 means every RoCE class, never these.
 */
#define INJ_PROTOS(X)                                                                              \
	X(TCP, "tcp")                                                                              \
	X(UDP, "udp")
#define INJ_CLS_PROTO_ENUM(e, kw) INJ_CLS_##e,
enum inj_class_ip { INJ_CLS_IP_FIRST = INJ_CLS_MAX - 1, INJ_PROTOS(INJ_CLS_PROTO_ENUM) INJ_CLS_ALL };
#undef INJ_CLS_PROTO_ENUM
#define INJ_CLS_ROCE_MASK ((1u << INJ_CLS_MAX) - 1)

#define INJ_ACT_ENUM(e, kw, ctr) INJ_ACT_##e,
enum inj_action { INJ_ACTIONS(INJ_ACT_ENUM) INJ_ACT_MAX };
#undef INJ_ACT_ENUM

/*
 * The queue contract between the program and rdma-inject's qdiscs
 * (injector/qdisc.c): on an egress hook that has delay or reorder rules,
 * the root is a prio qdisc with handle INJ_PRIO_MAJOR: and three bands;
 * the program steers a packet with skb->priority (prio honours a priority
 * whose major is its handle):
 *   INJ_BAND_DELAY    1:1  fq: leaves at its skb->tstamp (EDT, CLOCK_MONOTONIC)
 *   INJ_BAND_PASS     1:2  the normal path (every other priority)
 *   INJ_BAND_REORDER  1:3  netem delay HOLD: packets behind it overtake
 */
#define INJ_PRIO_MAJOR 1u
#define INJ_BAND_DELAY 1u
#define INJ_BAND_PASS 2u
#define INJ_BAND_REORDER 3u
/* skb->priority / tc handle of a band: major:minor */
#define INJ_TC_CLASS(major, minor) (((major) << 16) | (minor))

/* which matched packets the action hits */
enum inj_model {
	INJ_MODEL_BERNOULLI = 0,	/* independently with probability prob */
	INJ_MODEL_GEMODEL,		/* Gilbert-Elliott, netem's p r 1-h 1-k */
	INJ_MODEL_EVERY_NTH,		/* the nth, 2nth, ... matched packet */
	INJ_MODEL_ONLY_NTH,		/* exactly the nth matched packet, once */
};

enum inj_jitter {
	INJ_JITTER_UNIFORM = 0,
	INJ_JITTER_NORMAL,		/* Irwin-Hall(4) approximation, sigma = jitter */
};

/* probabilities are fractions of INJ_PROB_ONE */
#define INJ_PROB_ONE 0xffffffffu

/* inj_rule.flags: start_ns and stop_ns are offsets from the moment the rule
 * enters the table (0: that moment / never), as the parser leaves them;
 * inj_rule_add and inj_rule_set make them times then, after the program is
 * loaded and attached (which can take seconds on a slow host) */
#define INJ_RULE_F_WINDOW_REL 1

struct inj_rule {
	__u32 id;		/* user-visible id; 0 = free slot */
	__u32 ifindex;		/* the hook it belongs to (also in inj_hook_mask) */
	__u8 dir;		/* enum inj_dir */
	__u8 action;		/* enum inj_action */
	__u8 model;		/* enum inj_model */
	__u8 jitter_dist;	/* enum inj_jitter */
	__u8 ecn_ce;		/* match only packets already marked CE */
	__u8 disabled;		/* kept in the table, out of the candidate masks */
	__u16 flags;		/* INJ_RULE_F_*: user space only, never set in the table */
	__u32 class_mask;	/* bit per class (RoCE's, then INJ_PROTOS'); 0 = every RoCE class */
	__s32 opcode;		/* exact BTH opcode, -1 = any */
	__u32 qpn_lo;		/* destination QPN range, inclusive (0..0xffffff = any) */
	__u32 qpn_hi;
	__u32 psn_lo;		/* PSN range, inclusive */
	__u32 psn_hi;
	__u32 len_min;		/* IP packet length range */
	__u32 len_max;
	__u32 src_ip;		/* IPv4, network order, 0 = any */
	__u32 dst_ip;
	__u32 prob;		/* BERNOULLI: selection probability */
	__u32 ge_p;		/* GEMODEL: good -> bad */
	__u32 ge_r;		/* GEMODEL: bad -> good */
	__u32 ge_h;		/* GEMODEL: P(hit | bad) (netem: 1-h) */
	__u32 ge_k;		/* GEMODEL: P(hit | good) (netem: 1-k) */
	__u32 nth;		/* EVERY_NTH / ONLY_NTH: n; BERNOULLI: gap (only every nth is a candidate) */
	__u64 hold_ns;		/* REORDER: how long a selected packet is held (netem band) */
	__u64 delay_ns;		/* DELAY: base delay */
	__u64 jitter_ns;	/* DELAY: +- jitter */
	__u64 start_ns;		/* active from this bpf_ktime_get_ns(); 0 = always */
	__u64 stop_ns;		/* inactive from this time; 0 = never */
	__u64 lease_ns;		/* leased: inactive once inj_leases[id] (a deadline its
				 * owner keeps pushing on by this much) has passed; 0 = no lease */
	__u32 rel;		/* INJ_REL_*: which of the tracked fields below apply */
	__u32 qp_lo;		/* INJ_REL_QP: the QP's index on the hook (1 = first seen) */
	__u32 qp_hi;
	__u32 tx_lo;		/* INJ_REL_TX: the packet's transmission of its PSN (1 = first) */
	__u32 tx_hi;
	__u32 corrupt;		/* CORRUPT: enum inj_corrupt */
	__u16 port_lo;		/* TCP / UDP (not RoCE) packets: source or destination port */
	__u16 port_hi;		/* in port_lo..port_hi; 0..0xffff = any */
	__u32 from_traffic;	/* start_ns, stop_ns: offsets from the first packet that
				 * met the rule's other fields (inj_rule_state.anchor) */
};

/* how a corrupt rule corrupts */
enum inj_corrupt {
	INJ_CORRUPT_ICRC,	/* a payload bit flipped, the ICRC left: the receiver discards it */
	INJ_CORRUPT_PAYLOAD,	/* a payload bit flipped and the ICRC made right again: it is
				 * accepted and lands in memory (only the application can tell) */
};

/*
 * Relative and transmission-indexed matching (Lumina's `iter`), from what
 * the program tracks per hook while some rule asks or tracking is on
 * (inj_track): the QPs in the order the hook first saw a packet for them
 * (key: hook, IPv4 source and destination, destination QPN; the index
 * starts at 1), each side's first PSN (inj_qp_key.resp), and -- only while a rule matches on
 * it -- how often each PSN has been seen (1 = its first transmission).
 */
#define INJ_REL_QP 1u		/* qp_lo..qp_hi instead of (besides) qpn */
#define INJ_REL_PSN 2u		/* psn_lo..psn_hi counted from the QP's first PSN */
#define INJ_REL_TX 4u		/* tx_lo..tx_hi */
/* one side of a QP: its requests or its responses (ACK, NAK, READ response,
 * atomic acknowledge). Both sides share the QP's index; each counts rpsn
 * from its own first PSN */
#define INJ_REL_REQ 8u
#define INJ_REL_RESP 16u
#define INJ_REL_KIND (INJ_REL_REQ | INJ_REL_RESP)

/* per-rule runtime state shared by all CPUs (benign races: statistics) */
struct inj_rule_state {
	__u64 seen;		/* matched packets, for the nth models */
	__u32 ge_bad;		/* GEMODEL state */
	__u32 pad0;
	__u64 anchor;		/* from_traffic: when its first packet came (0: none yet) */
};

/* per-rule, per-CPU counters (summed by user space) */
#define INJ_CTR_FIELD(f) __u64 f;
struct inj_rule_ctr {
	INJ_COUNTERS(INJ_CTR_FIELD)
};
#undef INJ_CTR_FIELD

#define INJ_MAX_HOOKS 256

/* exact-QPN rules, direct-mapped by the QPN's low bits (an array lookup is
 * ~1 ns, a hash lookup ~8): two QPNs that collide both fall back to the
 * qpn_any_mask, where the full QPN check still applies */
#define INJ_QPN_BUCKETS 4096

struct inj_qpn_bucket {
	__u32 qpn;
	__u32 used;
	__u64 mask;
};

/* one attached hook (device, direction): value of the inj_hooks hash map,
 * key inj_hook_key(); user space owns it from attach to detach. The
 * program reads a copy by the hook's slot (inj_hook_slots), found through
 * a direct-mapped bucket (inj_hook_idx[key % INJ_HOOK_BUCKETS]): two array
 * lookups instead of a hash lookup (~2 ns against ~40 on a 2-core VM). A
 * hook that lost its bucket to another is found through the hash. */
struct inj_hook {
	__u64 mask;		/* rules of this hook */
	__u32 slot;		/* index into inj_hook_ctrs */
	__u32 flags;		/* INJ_HOOK_* */
};

#define INJ_HOOK_BUCKETS 1024

struct inj_hook_bucket {
	__u32 key;		/* inj_hook_key() + 1; 0: free */
	__u32 slot;
};

/* the hook's packets go to the trace ring (rdma-inject trace): the hook
 * stays attached while it has this flag, rules or not */
#define INJ_HOOK_TRACE 1u
/* in inj_hook_slots only: the slot holds a registered hook */
#define INJ_HOOK_LIVE 2u

/* per-hook, per-CPU counters: inj_hook_ctrs[slot] */
struct inj_hook_ctr {
	__u64 pkts;
	__u64 bytes;
	__u64 roce_pkts;
	__u64 roce_bytes;
	__u64 traced;		/* records put in the trace ring */
	__u64 trace_lost;	/* records the ring had no room for */
	__u64 resent;		/* while tracking: RoCE packets resent -- a request, READ
				 * response or atomic acknowledge (RC, UC) whose PSN its
				 * QP already had on this hook (struct inj_qp) */
};

/* per-QP tracking (inj_qps, an LRU hash) */
struct inj_qp_key {
	__u32 hook;		/* inj_hook_key */
	__u32 saddr;		/* IPv4, network order (IPv6: 0) */
	__u32 daddr;
	__u32 dqpn;
	/* 1: the responses (ACK, NAK, READ response, atomic acknowledge).
	 * They carry the PSNs of the other side's requests: a QP whose peer
	 * sends too has two PSN spaces toward it, each its own qp N, so that
	 * rpsn counts one space from its own first PSN in every run */
	__u32 resp;		/* or INJ_QP_ID: the QP's number, both sides' */
};
/* the entry that numbers a QP (its idx alone): made by the first packet of
 * either side, so that both sides share the number even when their first
 * packets meet on two CPUs at once */
#define INJ_QP_ID 2u

/* inj_qp_next: a hook's last QP number. The lock makes a QP's number once,
 * by whichever CPU comes first, with no number skipped */
struct inj_qp_next {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 last;
};

/* "already had": the PSN is in the window of the last INJ_QP_WIN PSNs up to
 * the highest (win[psn % INJ_QP_WIN] == psn + 1), or older than that window (a
 * first transmission never comes that late). So a packet overtaken on the
 * way, or handled on another CPU a moment before its predecessor, is not
 * taken for a resend: the same rule as the trace analysis's "a PSN already
 * seen on that QP", which the checks compare it with. The highest PSN moves
 * on only by compare-and-swap: two CPUs with two new PSNs of one QP at once
 * must not leave it at the lower (a later resend of the higher one would look
 * new). */
#define INJ_QP_WIN 64
/* inj_qp.top: 0 until a request was seen, then this bit and its highest PSN */
#define INJ_QP_SEEN (1ull << 32)

struct inj_qp {
	__u32 idx;		/* 1, 2, ...: the order this hook first saw the QP in */
	__u32 first_psn;	/* the PSN of that first packet */
	__u64 top;		/* INJ_QP_SEEN | the highest request PSN (serial
				 * arithmetic); 0 before the first request */
	__u64 win[INJ_QP_WIN];	/* the PSNs seen + 1, by psn % INJ_QP_WIN (0: none);
				 * 64-bit for the atomic swap BPF's v1 ISA has */
};

/* per-PSN transmissions (inj_tx, an LRU hash), kept while a rule uses tx */
struct inj_tx_key {
	struct inj_qp_key qp;
	__u32 psn;
};

#define INJ_QP_MAX 4096
#define INJ_TX_MAX 65536
/* inj_track[0]: tracking switched on by hand or by an agent (rdma-inject track) */
#define INJ_TRACK_QP 1u
#define INJ_TRACK_TX 2u
#define INJ_TRACK_PEER 4u	/* a cnp rule: learn each QP's peer (below) */

/*
 * CNPs (action cnp): a congestion notification packet goes to the sender of
 * the matched packet, as a receiving NIC (the notification point) sends one
 * for a CE-marked packet: BTH opcode 0x81, BECN set, the SENDER's QPN, 16
 * reserved bytes, its own ICRC. No packet toward the receiver carries the
 * sender's QPN, so while a cnp rule is in the table every hook learns the
 * pairs from what passes both ways: an RC request with AckReq leaves its
 * (source, destination, PSN) and destination QPN in inj_reqs; the ACK, READ
 * response or atomic acknowledge of that PSN coming back names the
 * requester's QPN, and inj_peers gets both directions (key: the packet's
 * source, destination and destination QPN; value: the QPN that sent it).
 * Until then a selected packet sends no CNP. IPv4 addresses (IPv6: 0, the
 * random PSNs keep pairs apart). The matched packet passes (verdict
 * notified); a copy of it goes the other way (egress to ingress and back),
 * with INJ_MARK_CNP, and the program on that hook (attached with the rule)
 * makes it the CNP (verdict cnp).
 */
struct inj_peer_key {
	__u32 saddr;
	__u32 daddr;
	__u32 n;		/* inj_reqs: the PSN; inj_peers: the destination QPN */
};

#define INJ_PEER_MAX 4096
#define INJ_CNP_PAYLOAD 16

/*
 * The rule index's per-field tables. Every field value some rule restricts
 * (inj_cfg.itab: bit f) has a table giving the mask of the rules whose
 * range covers a value (rules that do not restrict the field cover all).
 * QPN: the rules not in an exact bucket; PSN: rules on the absolute PSN,
 * RPSN: on the relative one; TIME: the rules' windows [start, stop) on
 * bpf_ktime_get_ns (read only then).
 *
 * Fields of fewer than 24 bits (the first INJ_F_RADIX) have a radix table
 * (struct inj_rtab): the value split into 12 high and 12 low bits; a rule
 * covers v = (h, l) when its range spans h whole (f[h]), or h is the high
 * part of its low end and l >= its low end's low part (a[h] & ge[l]), or of
 * its high end and l <= that end's (b[h] & le[l]), or of both (ab[h] & ge[l]
 * & le[l]). Two loads that do not wait on each other, whatever the rules:
 * a search's steps do (~4 ns each, and up to 8 of them for 64 rules).
 * The others (addresses, time) are cut into segments at every range end
 * (struct inj_itab) and searched 4 ways (three compares at once per level,
 * at most log4(INJ_ITAB_SEGS) levels).
 *
 * Two sets of tables (inj_rtabs[half * INJ_F_RADIX + field], inj_itabs[half
 * * INJ_F_MAX + field]): user space writes the idle set, then switches
 * inj_cfg.itab, so a packet never meets a table half rewritten.
 */
#define INJ_FIELDS(X) X(QPN) X(OPCODE) X(PSN) X(RPSN) X(LEN) X(QIDX) X(TX) X(SRC) X(DST) X(TIME)
#define INJ_F_ENUM(e) INJ_F_##e,
enum inj_field { INJ_FIELDS(INJ_F_ENUM) INJ_F_MAX };
#undef INJ_F_ENUM
#define INJ_F_RADIX INJ_F_SRC	/* the fields before it have radix tables */

#define INJ_ITAB_HALF 0x80000000u	/* inj_cfg.itab: the second set is live */

#define INJ_RADIX_BITS 12
#define INJ_RADIX_N (1u << INJ_RADIX_BITS)
#define INJ_RADIX_MAX ((1u << (2 * INJ_RADIX_BITS)) - 1)	/* larger values: no table */

struct inj_rtab_hi {
	__u64 f;		/* ranges that span this high part whole */
	__u64 a;		/* ranges whose low end (only) is in it */
	__u64 b;		/* ranges whose high end (only) is in it */
	__u64 ab;		/* ranges with both ends in it */
};

struct inj_rtab_lo {
	__u64 ge;		/* bit i: this low part >= the low part of rule i's low end */
	__u64 le;		/* bit i: this low part <= the low part of rule i's high end */
};

struct inj_rtab {
	struct inj_rtab_hi hi[INJ_RADIX_N];
	struct inj_rtab_lo lo[INJ_RADIX_N];
};

#define INJ_ITAB_SEGS 256	/* >= 2 * INJ_MAX_RULES + 1, a power of four */
#define INJ_ITAB_PAD 0x7fffffffffffffffULL	/* above every value (ns since boot too) */

struct inj_itab {
	__u32 top;		/* the search's first step: the largest power of four whose
				 * triple is below the segment count (0: one segment) */
	__u32 pad0;
	__u64 lo[INJ_ITAB_SEGS];	/* segment starts, ascending, lo[0] = 0; unused: INJ_ITAB_PAD */
	__u64 mask[INJ_ITAB_SEGS];	/* the rules that match a value of the segment */
};

/* global knobs: array map with one entry */
struct inj_cfg {
	__u64 qpn_any_mask;	/* rules without an exact single QPN */
	__u64 seed;		/* PRNG seed; 0 = from bpf_get_prandom_u32 */
	__u32 generation;	/* bumped on every table change: PRNG reseed */
	__u32 qpn_exact;	/* some rule names one QPN: look inj_qpn_mask up */
	__u32 trace_snaplen;	/* bytes of a traced packet kept (1..INJ_TRACE_SNAP_MAX) */
	__u32 trace_pid;	/* the rdma-inject that reads the ring; 0 = none */
	__u32 track;		/* INJ_TRACK_*: what the rules need tracked */
	__u32 itab;		/* bit f: field f's table is in use; INJ_ITAB_HALF: which set */
	__u64 ce_mask;		/* rules that match only CE-marked packets */
	__u64 rel_mask;		/* rules on tracked fields (an untracked packet matches none) */
};

/*
 * Tracing: every RoCEv2 packet of a hook with INJ_HOOK_TRACE goes to the
 * inj_trace ring buffer as it leaves the program -- a header, then its
 * first trace_snaplen bytes from the Ethernet header on, after the action
 * (a corrupted packet as corrupted, a marked one with CE). A record the ring
 * has no room for is counted in the hook's trace_lost, never silently lost.
 * Timestamps are bpf_ktime_get_ns (CLOCK_MONOTONIC): the program's time,
 * before any delay the action adds (delay_ns says how much).
 */
#define INJ_TRACE_SNAP_MAX 512
#define INJ_TRACE_SNAP_DEFAULT 128
#define INJ_TRACE_RING_BYTES (8u << 20)
/* the ring's reader drains it at least this often: the program wakes it
 * only when a quarter of the ring waits */
#define INJ_TRACE_DRAIN_MS 20

/* what the program did with a packet: X(enum suffix, name) */
#define INJ_VERDICTS(X)                                                                            \
	X(PASS, "passed")                                                                          \
	X(DROP, "dropped")                                                                         \
	X(DELAY, "delayed")                                                                        \
	X(REORDER, "reordered")                                                                    \
	X(DUP, "duplicated")     /* the original, passed; its copy follows as "copy" */            \
	X(CORRUPT, "corrupted")                                                                    \
	X(ECN, "marked")                                                                           \
	X(COPY, "copy")          /* the duplicate a duplicate rule made, on its own pass */       \
	X(TAMPER, "tampered")    /* payload corrupted, ICRC recomputed: delivered */               \
	X(NOTIFY, "notified")    /* passed; a CNP went back to its sender */                      \
	X(CNP, "cnp")            /* the CNP a cnp rule made, on its own pass */

#define INJ_VERDICT_ENUM(e, name) INJ_VERDICT_##e,
enum inj_verdict { INJ_VERDICTS(INJ_VERDICT_ENUM) INJ_VERDICT_MAX };
#undef INJ_VERDICT_ENUM

struct inj_trace_hdr {
	__u64 ts_ns;		/* bpf_ktime_get_ns */
	__u64 delay_ns;		/* DELAY: how much later it leaves */
	__u32 hook;		/* inj_hook_key(ifindex, dir) */
	__u32 wire_len;		/* skb->len */
	__u32 rule_id;		/* the rule that took the packet, 0 = none */
	__u16 cap_len;		/* bytes that follow */
	__u8 verdict;		/* enum inj_verdict */
	__u8 flags;		/* INJ_TREC_* */
};

/* inj_trace_hdr.flags: the hook counted the packet resent (struct inj_qp) */
#define INJ_TREC_RESENT 0x01

/* a BTH opcode's class (AETH syndrome for the ACK opcode: bits 6:5 00 ACK,
 * 01 RNR NAK, 11 NAK): the program's and the trace analysis's one rule.
 * Always inlined: clang made it a BPF subprogram, and the call and return
 * cost ~10 ns a packet on a host with SRSO's safe RET */
static inline __attribute__((always_inline)) __u8 inj_classify(__u8 op, __u8 syndrome)
{
	__u8 t = op >> 5, o = op & 0x1f;

	if (op == 0x81)
		return INJ_CLS_CNP;
	if (t == 3)	/* UD: SEND only (+imm) */
		return o == 0x04 || o == 0x05 ? INJ_CLS_DATA : INJ_CLS_OTHER;
	if (t != 0 && t != 1)
		return INJ_CLS_OTHER;
	if (o <= 0x0b || o == 0x16 || o == 0x17)
		return INJ_CLS_DATA;
	if (t == 1)
		return INJ_CLS_OTHER;
	if (o == 0x0c)
		return INJ_CLS_READ_REQ;
	if (o >= 0x0d && o <= 0x10)
		return INJ_CLS_READ_RESP;
	if (o == 0x11)
		return (syndrome & 0x60) ? INJ_CLS_NAK : INJ_CLS_ACK;
	if (o >= 0x12 && o <= 0x14)
		return INJ_CLS_ATOMIC;
	return INJ_CLS_OTHER;
}

/* key of the hook maps */
static inline __u32 inj_hook_key(__u32 ifindex, __u32 dir)
{
	return (ifindex << 1) | (dir & 1);
}

/* user space: which qdiscs rdma-inject created on a device (inj_owned map) */
#define INJ_OWN_CLSACT 1u
#define INJ_OWN_PRIO 2u
#define INJ_OWN_XDP 4u	/* rdma-inject forward's XDP program (injector/forward.c) */
#define INJ_OWN_XDP_PEER 8u	/* its pass-all program on a veth port's peer (the same) */

/*
 * rdma-inject forward's tables (ebpf/forward.bpf.c, injector/forward.c).
 * A port's slot: its place in the device maps (arrays). Two ports: each
 * one's peer by its ifindex modulo INJ_FWD_PEER_IDX (in: whose entry it
 * is). More: the sending port by the destination MAC.
 */
#define INJ_FWD_MAX_PORTS 64
#define INJ_FWD_PEER_IDX 4096

struct inj_fwd_to {
	__u32 ifindex;
	__u32 slot;
};

struct inj_fwd_peer {
	__u32 in;
	struct inj_fwd_to to;
};

struct inj_fwd_mac {
	__u8 a[6];
	__u16 pad;
};

/* a slot's port name (user space's: `forward port` finds where a port that
 * came back as a new device, a rebooted VM's tap, goes) */
struct inj_fwd_name {
	char name[16];
};

#endif
