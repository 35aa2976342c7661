/* SPDX-License-Identifier: MIT */
/*
 * Inside the kv workload (kv.c says what it is): the server's layout, a
 * slot, the configuration, one agent's state, and the one-sided
 * operations (kv_ops.c) that kv.c's prepare, connect and run use.
 */
#ifndef RTB_KV_INT_H
#define RTB_KV_INT_H

#include <stddef.h>
#include <stdint.h>
#include "wl.h"
#include "opts.h"
#include "../lib/mix.h"
#include "../lib/hist.h"

#define SLOTS 4
#define PROBE 4
#define HIST_MAX 100000	/* operations a client records at most (history=on) */
/* a client's memory: a probe's buckets, then where an atomic's result lands */
#define SCRATCH (PROBE * SLOTS * sizeof(struct kv_slot))
#define KEY_COUNTER (1ULL << 63)	/* the history's name of key k's counter: k | this */
#define LV_VER 256ULL			/* the lock word's version step (bits 8 and up) */
#define CRASHED 1			/* put(): this client crashed as crash= asked */
#define MAX_QPS (MAX_CLIENTS * (1 + MAX_STANDBY))
/*
 * recovery=log: a counter word is value << 32 | the tag of its last update,
 * and a PUT's body carries its writer's tag in val[2]. A tag is the client
 * (bits 28-31), the generation (bits 26-27: that client's operations on
 * that object, mod 4) and the operation's number (bits 0-25). Each client
 * has a log entry per object (a key's slot, a key's counter) and
 * generation: seq << 32 | result, written by whoever replaces its tag.
 */
#define TAG(client, gen, seq) \
	(((uint64_t)(client) & 15) << 28 | ((uint64_t)(gen) & 3) << 26 | ((seq) & 0x3ffffff))
#define TAG_CLIENT(t) (((t) >> 28) & 15)
#define TAG_GEN(t) (((t) >> 26) & 3)
#define TAG_SEQ(t) ((t) & 0x3ffffff)
#define SEQ_MAX 0x3ffffffULL

struct kv_slot {
	uint64_t lockver;
	uint64_t key;
	uint64_t val[5];
	uint64_t sum;
};
_Static_assert(sizeof(struct kv_slot) == 64, "kv slot is one 64-byte line");


struct kv {
	struct kv_cfg cfg;
	uint64_t nb;			/* buckets */
	char *mem;			/* server: table + done counter; client: scratch */
	size_t memlen;
	int nqp, per;			/* QPs; per client: 1 + its standby QPs */
	struct vb_rc rc[MAX_QPS];	/* server: client i's are i*per..; client: its own */
	struct vb_ep peers[1 + MAX_STANDBY];	/* client: the server's QP for each of its own */
	struct vb_ep peer;		/* client: the server's QP in use (peers[cur]) */
	int cur;			/* client: the QP in use */
	uint64_t rng;
	double *zipf_cdf;		/* client, zipf: P(rank <= i) */
	struct hist lat[4];		/* by kind: GET, PUT, INCR, CAS */
	uint64_t gets, puts, incrs, cases, retries, torn, cas_fails;
	uint64_t corrupt_reads;		/* a bad read, then the same version good */
	uint64_t corrupt_slots;		/* reads of a slot bad in the server's memory */
	uint64_t torn_slots;		/* lock=off: reads of a slot left torn by crossed PUTs */
	uint64_t takeovers, rolled_forward, rolled_back;	/* expired locks taken over */
	uint64_t lease_aborts;		/* PUTs that found their own lease over before the body */
	uint64_t late_unlocks;		/* unlock CASes that found the lock taken over */
	uint64_t nput;			/* PUTs begun (crash=) */
	uint64_t crash_key;		/* the PUT it crashed in */
	int crashed;
	uint64_t seq;			/* recovery=log: the operation's number (tags, log) */
	uint8_t *gen;			/* recovery=log: per object, this client's operations */
	int pre;			/* a log entry to post before the next verb, at: */
	uint64_t pre_off;
	int inf_locked;			/* the PUT in flight posted its lock CAS: */
	uint64_t inf_off, inf_v, inf_mine;	/* where, from which version, its word */
	uint64_t failures, reissued, restored;	/* recovery */
	uint64_t rec_ns[64];		/* recovery: each failure to its operation done, ns */
	size_t nrec;
	uint64_t (*hist)[5];		/* client, history=on: call, ret, kind, key, out */
	size_t nhist;
};

static inline uint64_t slot_sum(const struct kv_slot *s, uint64_t version)
{
	uint64_t h = rtb_mix64(s->key ^ rtb_mix64(version));
	int i;

	for (i = 0; i < 5; i++)
		h = rtb_mix64(h ^ s->val[i]);
	return h | 1;	/* never 0: an empty slot has sum 0 */
}

static inline uint64_t bucket_of(const struct kv *k, uint64_t key)
{
	return rtb_mix64(key * 0x9e3779b97f4a7c15ULL) % k->nb;
}

static inline size_t table_bytes(const struct kv *k)
{
	return (size_t)(k->nb + PROBE) * SLOTS * sizeof(struct kv_slot);	/* probing never wraps */
}

/* the server's memory: the table, the done counter, a counter per key (1..keys) */
static inline size_t counter_off(const struct kv *k, uint64_t key)
{
	return table_bytes(k) + 8 + (size_t)key * 8;
}

/* then (recovery=log) each client's completion log, client 1..: an 8-byte
 * entry per object (key k's slot 2(k-1), its counter 2(k-1)+1) and generation */
static inline size_t log_bytes(const struct kv *k)
{
	return k->cfg.recovery == REC_LOG ? (size_t)k->cfg.keys * 2 * 4 * 8 : 0;
}

static inline size_t log_off(const struct kv *k, uint64_t client, uint64_t obj, uint64_t gen)
{
	return counter_off(k, k->cfg.keys + 1) + (size_t)(client - 1) * log_bytes(k) +
	       (size_t)(obj * 4 + (gen & 3)) * 8;
}

static inline size_t server_bytes(const struct kv *k)
{
	return counter_off(k, k->cfg.keys + 1) + (size_t)k->cfg.clients * log_bytes(k);
}

static inline uint64_t obj_of(uint64_t key, int counter)
{
	return (key - 1) * 2 + (counter ? 1 : 0);
}

/* --- kv_ops.c */
/* one verb, waited for: READ/WRITE of len bytes at remote offset, CAS, FAA */
int kv_rdma(struct wl_ctx *c, struct kv *k, enum ibv_wr_opcode op, size_t local_off,
		uint64_t remote_off, uint32_t len, uint64_t cmp, uint64_t swap);
/* key's slot, read whole and checked (idx: its index in the table) */
int kv_lookup(struct wl_ctx *c, struct kv *k, uint64_t key, uint64_t *idx, struct kv_slot *out);
/* one operation of kind (HK_*) on key, recovered as recovery= says when
 * its QP breaks (kv_ops.c); *seen: what it read */
int kv_run_op(struct wl_ctx *c, struct kv *k, int kind, uint64_t key, uint64_t *seen,
		  struct kv_slot *cur);

#endif
