/* SPDX-License-Identifier: MIT */
/*
 * Inside the trace room: a capture's packets and flows as the analysis
 * holds them. Reading a packet is parse.c's, the flows and their pairing
 * flows.c's, the judgements (losses, go-back-N, READ retransmission, CNP
 * reaction) judge.c's, and analyze.c puts them together (trace.h).
 */
#ifndef RTB_CTL_TRACE_TR_H
#define RTB_CTL_TRACE_TR_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "ebpf/inject_abi.h"
#include "lib/pcapng.h"

/* the injector's classes (inject_abi.h), short */
enum { C_DATA = INJ_CLS_DATA, C_READ_REQ = INJ_CLS_READ_REQ, C_READ_RESP = INJ_CLS_READ_RESP,
       C_ACK = INJ_CLS_ACK, C_NAK = INJ_CLS_NAK, C_ATOMIC = INJ_CLS_ATOMIC, C_CNP = INJ_CLS_CNP,
       C_OTHER = INJ_CLS_OTHER, C_MAX = INJ_CLS_MAX };
extern const char *const cls_name[C_MAX];
extern const char *const verdict_name[];

struct tp {
	uint64_t ts, frame;
	uint64_t va;
	uint32_t dqpn, psn, rlen, msn, rule, payload;
	int cap, flow, resent;	/* its PSN was seen before in its flow, in any packet */
	int resent_req;		/* nic_resendable and its PSN was seen before in one */
	int marked;		/* the hook counted it resent ("resent" in its comment) */
	uint8_t op, cls, syn, verdict, ackreq, ecn;
};

/* packets on each side of a CNP whose gaps tell the sender's pace */
#define CNP_WINDOW 16

struct blk {
	uint32_t key;
	uint64_t bits[64];
};

/* a set of PSNs, in blocks of 4096 */
struct psnset {
	struct blk *b;
	size_t nb, last;
};

struct flow {
	int cap, v6, peer;
	uint8_t src[16], dst[16];
	uint32_t dqpn, first_psn, last_psn;
	uint64_t packets, resent, req;
	/* as the injector numbers a hook's QPs (qp N, rpsn): the flow's
	 * requests and its responses apart, each from its own first PSN */
	struct {
		size_t first;		/* its first packet's index (order of appearance) */
		uint32_t first_psn, top;	/* top: the highest PSN from the first */
		uint64_t packets, msgs;	/* msgs: first copies that end a message */
	} side[2];
	/* the hook's marks against the trace (analyze.c hook_marks): first
	 * copies it counted resent, 64 or more below a PSN of the flow; PSNs
	 * whose marks nothing explains */
	uint64_t overtaken, unexplained, marked;
	int has_read, has_data;
	int *pk;	/* its packets' indices, in order */
	size_t npk, cpk;
	struct psnset seen;	/* the PSNs of every packet */
	/* those of the packets the NIC may resend: a flow carries ACKs and
	 * READ responses in one PSN space */
	struct psnset sent;
};

struct cap {
	char dev[64];
	int dir;	/* 0 ingress, 1 egress, -1 unknown */
	uint64_t packets, resent, lost_records, verdicts[INJ_VERDICT_MAX];
	int opposite;
	long long inj_resent;	/* the hook's own count of resent packets, -1: not given
				 * (or its packets not marked: an older trace) */
};

/*
 * An open-addressing hash of flow indices (flows by their identity; and
 * (flow, PSN) pairs by the flow's addresses and a PSN, for pairing): the
 * analysis is linear in packets and flows, not quadratic in flows (80k QPs
 * in a 7 MB capture took 5.6 s before). Slots hold index + 1 (0: empty) and
 * the key's hash; whoever probes compares the real key.
 */
struct hslot {
	uint64_t h;
	uint32_t v;	/* flow index + 1 */
	uint32_t psn;
};

struct htab {
	struct hslot *s;
	size_t cap, n;	/* cap a power of two, n <= cap / 2 */
};

struct tr {
	struct tp *p;
	size_t np, cp;
	struct flow *f;
	size_t nf, cf;
	struct htab fh;	/* flows by (cap, v6, src, dst, dqpn) */
	struct cap c[PCAPNG_MAX_IF];
	int nc;
	uint64_t t0;
	uint64_t timer_ns;	/* the capture being judged: its shortest wait for an
				 * ACK timer (ack_timer), 0 when none was seen */
};


static inline int psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static inline int is_request(int cls)
{
	return cls == C_DATA || cls == C_READ_REQ || cls == C_ATOMIC;
}

/* what an RC or UC NIC may send again (the injector's resendable()): a
 * request, a READ response or an atomic acknowledge; a UD datagram (a CM
 * MAD) is never resent by the NIC */
static inline int nic_resendable(const struct tp *t)
{
	return (is_request(t->cls) || t->cls == C_READ_RESP) && (t->op >> 5) <= 1;
}

/* --- parse.c */
/* 1 and *t filled for a RoCEv2 packet; addresses into src/dst */
int parse(const struct pcapng_pkt *k, struct tp *t, uint8_t *src, uint8_t *dst, int *v6);
/* the injector's verdict and rule, from the packet's comment */
void verdict_of(const char *c, struct tp *t);

/* --- flows.c: per-QP state */
/* the flow of these addresses and QPN (added when new): its index, or -ENOMEM */
int flow_of(struct tr *s, int cap, const uint8_t *src, const uint8_t *dst, int v6, uint32_t dqpn);
/* psn seen in f (*was: before): 0, or -ENOMEM */
int psn_mark(struct psnset *ps, uint32_t psn, int *was);
/* packet idx appended to f: 0, or -ENOMEM */
int push(struct flow *f, int idx);
void addr_str(const struct flow *f, const uint8_t *a, char *buf, size_t len);
/* each flow's partner at the opposite capture point: 0, or -ENOMEM */
int pair(struct tr *s);
void tr_free(struct tr *s);

/* --- judge.c */
/* the loss of packet l (position pos of its flow): how it was recovered */
json_t *loss(struct tr *s, const struct tp *l, size_t pos);
/* capture point cap's shortest wait for an ACK timer: the silence before
 * the resend of a lost request that no NAK asked for; 0 when none */
uint64_t ack_timer(const struct tr *s, int cap);
void go_back_n(struct tr *s, const struct flow *f, json_t *res);
void read_check(struct tr *s, const struct flow *f, json_t *res);
/* key's values over losses: count, median, p99, max */
json_t *lat_summary(json_t *losses, const char *key);
json_t *cnp_reaction(struct tr *s, int cap);

#endif
