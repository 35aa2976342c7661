// SPDX-License-Identifier: MIT
/*
 * kv: a key-value store on one-sided RDMA (the server's CPU serves nothing).
 *
 * Layout, in the server's registered memory: `buckets` buckets of 4 slots of
 * 64 bytes, then one 8-byte "clients done" counter. A slot is
 *   lockver  the lock word: bits 8 and up the version (+1 per update: the
 *            unlocked word is version << 8); bit 0 locked, and while locked
 *            the owner (bits 1-4, the client's number) and the epoch (bits
 *            5-7, +1 at each takeover), so that every holder's word is its own
 *   key      0 = empty
 *   val[5]   val[0] = how many updates this key has had; val[1..4] = data
 *   sum      checksum of (key, version, val)
 * Key k lives in the first bucket from hash(k) on (linear probing, at most
 * 4 buckets) with a free slot; the server places every key at prepare.
 *
 * GET: one READ of the bucket; the slot must be unlocked and its checksum
 * right (else the read was torn by a concurrent update: read again; or the
 * data was corrupted on the wire or in memory: counted, see lookup()).
 * PUT: CAS lockver from v (unlocked) to the locked word; READ the slot;
 * WRITE the slot body with val[0] + 1, new data and the checksum for the
 * next version; CAS the locked word to the next version (the unlock). A
 * failed CAS retries.
 * Lock leases: a lock held longer than `lease` may be taken over, so a
 * client that died or lost its QP between its lock and its unlock does not
 * block the slot for ever. Any client that sees the same locked word for
 * lease + lease/4 (its own clock: durations only) CASes it to its own word
 * with the epoch + 1, READs the slot and keeps whichever version its
 * checksum proves (the next one: the dead PUT's body landed, rolled
 * forward; the same one: it did not, rolled back; a single-packet WRITE is
 * never half there), and unlocks to that version. The owner writes its
 * body only while now - (when it posted the lock) < lease - lease/4, else
 * it leaves the lock to be taken over and starts again; a WRITE it posted
 * in time lands before any takeover as long as the network delivers within
 * lease/2 -- hence a lease longer than the QP's whole retry time (a dead
 * owner's WRITE can be resent that long). Its unlock is a CAS: when it
 * fails, the slot was taken over after the body landed (rolled forward):
 * the PUT took effect. crash=N (a test): client 1 stops dead at its Nth
 * PUT holding the lock (crash_at: before or after its body WRITE), its QP
 * moved to the error state as a dead process's is; the history has that
 * PUT pending (it may or may not have taken effect) and the others must
 * take the slot over.
 * lock=off (unsafe, to show what the checker catches): PUT without the CAS,
 * a READ and two WRITEs (body, version); two at once on one key lose an
 * update.
 * INCR: one FETCH_AND_ADD of 1 on the key's counter (an array of 8-byte
 * counters after the table): not idempotent, so an increment executed
 * twice or lost shows in the sum.
 * CAS: the same counter + 1 by compare-and-swap: READ it, CAS(v, v + 1),
 * and on a failed CAS again from the value it returned (cas_fails). An
 * update by CAS executed twice either fails (the value moved on) or, once
 * a client takes the failure for its own and retries, adds 2.
 * Recovery from link failure (recovery=, Varuna's failure-type-aware design
 * without its NIC): each client has standby QPs to the server, connected up
 * front (a standby link: nothing to rebuild when one breaks). When a
 * completion says the QP broke (retries exhausted, flushed), the next QP
 * takes over and the operation in flight -- the one whose completion never
 * came, executed at the server or not -- is, by recovery=: none, the run's
 * error (as before); resend_all, issued again (what an RC application
 * does: an increment that had executed executes twice, a PUT that held its
 * lock waits out its own lease); log, looked up first. For that, under
 * recovery=log, a counter's word is value << 32 | the tag (client,
 * generation, operation number) of its last update, INCR and CAS updates
 * are a READ and a CAS to value + 1 with this operation's tag, and a PUT's
 * body carries its tag in val[2]; whoever replaces another client's tag
 * writes that client's log entry for the object and generation (the
 * operation took effect, its result) in the same post, before the verb that
 * replaces it. The owner reads the object first (its tag, or for a PUT its
 * lock still held), then its entry: executed means restored with its
 * result, not executed means issued again; nothing runs twice and nothing
 * is lost. Four generations per object keep a late entry of an older
 * operation from covering the one in flight.
 * Closed loop (one operation at a time) or open loop at `rate` ops/s, where
 * latency counts from the intended start (no coordinated omission).
 * Mixes as YCSB: a = 50% updates, b = 5%, c = read only, and of the rest
 * `incr` percent increments and `cas` percent CAS updates; keys uniform
 * or zipf(theta).
 *
 * Verification: each client FETCH_ADDs the done counter when it finishes;
 * the server waits for all, then checks every slot's checksum and that the
 * update counts add up to the PUTs the clients made, and the counters to
 * their increments (the controller compares): a lost update, a torn write,
 * an increment lost or done twice cannot pass.
 *
 * History (history=on, at most HIST_MAX operations a client): every
 * operation's invocation and completion (wl_now_ns: one clock for the
 * nodes of one host or VM), key and result, for the controller's
 * linearizability check (lib/lin.h). A key's update count is a register
 * a PUT adds 1 to (it reads the count under the lock and writes one more:
 * a fetch-and-add in the model) and a GET reads; its counter is another
 * (key | KEY_COUNTER), which INCR adds 1 to.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "wl.h"
#include "../lib/mix.h"
#include "../lib/hist.h"

#define SLOTS 4
#define PROBE 4
#define MAX_CLIENTS 15
#define HIST_MAX 100000	/* operations a client records at most (history=on) */
/* a client's memory: a probe's buckets, then where an atomic's result lands */
#define SCRATCH (PROBE * SLOTS * sizeof(struct kv_slot))
#define KEY_COUNTER (1ULL << 63)	/* the history's name of key k's counter: k | this */
#define LV_VER 256ULL			/* the lock word's version step (bits 8 and up) */
#define CRASHED 1			/* put(): this client crashed as crash= asked */
#define MAX_STANDBY 7			/* standby QPs a client may fail over to */
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

enum kv_mix { MIX_A, MIX_B, MIX_C };
static const char *const mixes[] = { "a", "b", "c", NULL };
enum kv_dist { DIST_ZIPF, DIST_UNIFORM };
static const char *const dists[] = { "zipf", "uniform", NULL };
static const char *const onoff[] = { "off", "on", NULL };
enum kv_crash_at { CRASH_LOCK, CRASH_BODY };
static const char *const crash_ats[] = { "lock", "body", NULL };
enum kv_recovery { REC_NONE, REC_RESEND, REC_LOG };
static const char *const recoveries[] = { "none", "resend_all", "log", NULL };
enum { HK_GET, HK_PUT, HK_INCR, HK_CAS };	/* a history record's kind (lib/lin.h: get, faa, faa, faa) */

struct kv_cfg {
	int workload;
	int dist;
	uint64_t keys;
	uint64_t buckets;
	uint64_t ops;
	uint64_t rate;		/* ops/s, 0 = closed loop */
	uint64_t theta_milli;	/* zipf theta x 1000 */
	uint64_t clients;
	uint64_t seed;
	uint64_t op_timeout;
	uint64_t incr;		/* percent of the non-update operations that are INCR */
	uint64_t cas;		/* ... and CAS updates of the same counter */
	int lock;		/* off: PUT without the lock (unsafe) */
	int history;
	uint64_t lease;		/* ns a lock may be held before it can be taken over */
	uint64_t client;	/* this client's number, 1.. (set by rdmactl; 0: unknown) */
	uint64_t crash;		/* client 1 dies at its crash-th PUT, holding the lock */
	int crash_at;		/* enum kv_crash_at */
	int recovery;		/* enum kv_recovery */
	uint64_t standby;	/* recovery: standby QPs per client, connected up front */
	struct vb_rc_knobs rc;
};

#define O(f) offsetof(struct kv_cfg, f)
static const struct opt kv_opts[] = {
	{ "workload", OPT_ENUM, O(workload), 0, 0, "a", mixes, "YCSB mix: a (50% updates), b (5%), c (reads)" },
	{ "dist", OPT_ENUM, O(dist), 0, 0, "zipf", dists, "key distribution: zipf|uniform" },
	{ "keys", OPT_UINT, O(keys), 1, 10000000, "10000", NULL, "keys in the store" },
	{ "buckets", OPT_UINT, O(buckets), 0, 10000000, "0", NULL, "buckets of 4 slots (0 = as many as keys)" },
	{ "ops", OPT_UINT, O(ops), 1, 100000000, "2000", NULL, "operations per client" },
	{ "rate", OPT_UINT, O(rate), 0, 10000000, "0", NULL, "open loop ops/s per client (0: closed)" },
	{ "theta", OPT_UINT, O(theta_milli), 0, 3000, "990", NULL, "zipf theta x 1000" },
	{ "clients", OPT_UINT, O(clients), 1, MAX_CLIENTS, "1", NULL, "clients (set by rdmactl)" },
	{ "seed", OPT_UINT, O(seed), 0, UINT64_MAX, "1", NULL, "random seed" },
	{ "op_timeout", OPT_TIME, O(op_timeout), 1000000, 3600000000000ULL, "10s", NULL,
	  "fail when one operation takes longer" },
	{ "incr", OPT_UINT, O(incr), 0, 100, "0", NULL,
	  "percent of the reads made increments (FETCH_AND_ADD on the key's counter)" },
	{ "cas", OPT_UINT, O(cas), 0, 100, "0", NULL,
	  "percent of the reads made CAS updates of the key's counter (READ, CAS v to v+1, retry)" },
	{ "lock", OPT_ENUM, O(lock), 0, 0, "on", onoff,
	  "off: PUT without its CAS lock (unsafe: concurrent PUTs lose updates)" },
	{ "history", OPT_ENUM, O(history), 0, 0, "on", onoff,
	  "record every operation for the linearizability check (ops <= 100000)" },
	{ "lease", OPT_TIME, O(lease), 1000000, 600000000000ULL, "1s", NULL,
	  "a lock held longer may be taken over (longer than the QP's whole retry time)" },
	{ "client", OPT_UINT, O(client), 0, MAX_CLIENTS, "0", NULL, "this client's number (set by rdmactl)" },
	{ "crash", OPT_UINT, O(crash), 0, 100000000, "0", NULL,
	  "test: client 1 dies at its Nth PUT holding the lock (its QP to the error state)" },
	{ "crash_at", OPT_ENUM, O(crash_at), 0, 0, "lock", crash_ats,
	  "crash: lock (before the body WRITE: rolled back) or body (after it: rolled forward)" },
	{ "recovery", OPT_ENUM, O(recovery), 0, 0, "none", recoveries,
	  "when a QP breaks: none (the run fails), resend_all (re-issue the operation in flight), "
	  "log (a completion log tells whether it executed: restored or re-issued)" },
	{ "standby", OPT_UINT, O(standby), 1, MAX_STANDBY, "3", NULL,
	  "recovery: standby QPs per client, connected up front, failed over to in turn" },
	VB_RC_KNOB_OPTS(O(rc)),
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};
#undef O

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

static uint64_t slot_sum(const struct kv_slot *s, uint64_t version)
{
	uint64_t h = rtb_mix64(s->key ^ rtb_mix64(version));
	int i;

	for (i = 0; i < 5; i++)
		h = rtb_mix64(h ^ s->val[i]);
	return h | 1;	/* never 0: an empty slot has sum 0 */
}

static uint64_t bucket_of(const struct kv *k, uint64_t key)
{
	return rtb_mix64(key * 0x9e3779b97f4a7c15ULL) % k->nb;
}

static size_t table_bytes(const struct kv *k)
{
	return (size_t)(k->nb + PROBE) * SLOTS * sizeof(struct kv_slot);	/* probing never wraps */
}

/* the server's memory: the table, the done counter, a counter per key (1..keys) */
static size_t counter_off(const struct kv *k, uint64_t key)
{
	return table_bytes(k) + 8 + (size_t)key * 8;
}

/* then (recovery=log) each client's completion log, client 1..: an 8-byte
 * entry per object (key k's slot 2(k-1), its counter 2(k-1)+1) and generation */
static size_t log_bytes(const struct kv *k)
{
	return k->cfg.recovery == REC_LOG ? (size_t)k->cfg.keys * 2 * 4 * 8 : 0;
}

static size_t log_off(const struct kv *k, uint64_t client, uint64_t obj, uint64_t gen)
{
	return counter_off(k, k->cfg.keys + 1) + (size_t)(client - 1) * log_bytes(k) +
	       (size_t)(obj * 4 + (gen & 3)) * 8;
}

static size_t server_bytes(const struct kv *k)
{
	return counter_off(k, k->cfg.keys + 1) + (size_t)k->cfg.clients * log_bytes(k);
}

static uint64_t obj_of(uint64_t key, int counter)
{
	return (key - 1) * 2 + (counter ? 1 : 0);
}

static void kv_destroy(struct wl_ctx *c)
{
	struct kv *k = c->priv;
	int i;

	if (!k)
		return;
	for (i = 0; i < k->nqp; i++)
		vb_rc_destroy(&k->rc[i]);
	free(k->mem);
	free(k->zipf_cdf);
	free(k->hist);
	free(k->gen);
	free(k);
	c->priv = NULL;
}

static int place_all(struct wl_ctx *c, struct kv *k)
{
	struct kv_slot *t = (struct kv_slot *)k->mem;
	uint64_t key, b, j;
	int s;

	for (key = 1; key <= k->cfg.keys; key++) {
		b = bucket_of(k, key);
		for (j = 0; j < PROBE; j++) {
			for (s = 0; s < SLOTS; s++) {
				struct kv_slot *sl = &t[(b + j) * SLOTS + (uint64_t)s];

				if (sl->key)
					continue;
				sl->key = key;
				sl->val[1] = rtb_mix64(key);
				sl->sum = slot_sum(sl, 0);
				goto placed;
			}
		}
		snprintf(c->err, sizeof(c->err), "key %llu does not fit in %d buckets from its own: "
			 "use more buckets", (unsigned long long)key, PROBE);
		return -ENOSPC;
placed:;
	}
	return 0;
}

static int kv_prepare(struct wl_ctx *c, const json_t *opts, json_t **ep)
{
	int server = c->role == WL_SERVER, i, r;
	struct kv *k;

	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	c->priv = k;
	r = opt_apply_json(kv_opts, &k->cfg, opts, c->err, sizeof(c->err));
	if (r)
		goto fail;
	k->nb = k->cfg.buckets ? k->cfg.buckets : k->cfg.keys;	/* 25% full: probing rarely needed */
	k->memlen = server ? server_bytes(k) : SCRATCH + 64;
	if (k->cfg.recovery == REC_LOG && (k->cfg.ops >= SEQ_MAX || k->cfg.clients > 15 ||
					   server_bytes(k) > (256u << 20))) {
		snprintf(c->err, sizeof(c->err), "recovery=log: at most %llu operations a client and "
			 "a log of 256 MiB (2 x keys x 32 bytes a client)", SEQ_MAX - 1);
		r = -EINVAL;
		goto fail;
	}
	if (k->cfg.recovery == REC_LOG && !server && !k->cfg.client) {
		snprintf(c->err, sizeof(c->err), "recovery=log: the client's number is not set "
			 "(rdmactl sets it)");
		r = -EINVAL;
		goto fail;
	}
	if (k->cfg.incr + k->cfg.cas > 100) {
		snprintf(c->err, sizeof(c->err), "incr %llu%% and cas %llu%% of the reads: more than 100%%",
			 (unsigned long long)k->cfg.incr, (unsigned long long)k->cfg.cas);
		r = -EINVAL;
		goto fail;
	}
	if (k->cfg.lock && k->cfg.lease + k->cfg.lease / 4 >= k->cfg.op_timeout) {
		snprintf(c->err, sizeof(c->err), "lease %.3f s: a lock is taken over after 1.25 leases, "
			 "which must come before op_timeout (%.3f s)", k->cfg.lease / 1e9,
			 k->cfg.op_timeout / 1e9);
		r = -EINVAL;
		goto fail;
	}
	if (k->cfg.lock && k->cfg.rc.retry_cnt < 7 && k->cfg.rc.timeout &&
	    k->cfg.lease / 2 < (k->cfg.rc.retry_cnt + 1) * (4096ULL << k->cfg.rc.timeout)) {
		snprintf(c->err, sizeof(c->err), "lease %.3f s: a lock holder's WRITE may be resent for "
			 "%.3f s (rc_retry_cnt + 1 ACK timeouts), half the lease must cover that",
			 k->cfg.lease / 1e9,
			 (k->cfg.rc.retry_cnt + 1) * (4096.0 * (double)(1ULL << k->cfg.rc.timeout)) / 1e9);
		r = -EINVAL;
		goto fail;
	}
	if (k->cfg.recovery != REC_NONE && !k->cfg.lock) {
		snprintf(c->err, sizeof(c->err), "recovery %s: a PUT's recovery uses its lock, and "
			 "lock=off takes none", recoveries[k->cfg.recovery]);
		r = -EINVAL;
		goto fail;
	}
	if (k->cfg.crash && !k->cfg.lock) {
		snprintf(c->err, sizeof(c->err), "crash: dies holding the lock, and lock=off takes none");
		r = -EINVAL;
		goto fail;
	}
	if (!server && k->cfg.history && k->cfg.ops > HIST_MAX) {
		snprintf(c->err, sizeof(c->err), "history=on records at most %d operations a client "
			 "(ops %llu): set history=off", HIST_MAX, (unsigned long long)k->cfg.ops);
		r = -EINVAL;
		goto fail;
	}
	r = -ENOMEM;
	if (posix_memalign((void **)&k->mem, 4096, k->memlen))
		goto fail;
	memset(k->mem, 0, k->memlen);
	if (server && (r = place_all(c, k)))
		goto fail;
	/* recovery: each client's QP and its standby QPs, all connected now
	 * (no connection to rebuild when one breaks: the next takes over) */
	k->per = 1 + (k->cfg.recovery != REC_NONE ? (int)k->cfg.standby : 0);
	k->nqp = server ? (int)k->cfg.clients * k->per : k->per;
	*ep = server || k->per > 1 ? json_array() : NULL;
	for (i = 0; i < k->nqp; i++) {
		json_t *e;

		r = vb_rc_create(&k->rc[i], c->dev, k->mem, k->memlen,
				 IBV_ACCESS_LOCAL_WRITE |
					 (server ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE |
							   IBV_ACCESS_REMOTE_ATOMIC : 0),
				 16, 1, c->err, sizeof(c->err));
		if (r) {
			json_decref(*ep);
			goto fail;
		}
		e = vb_rc_endpoint(&k->rc[i], c->dev, k->mem, k->memlen);
		if (k->per == 1 && !server) {
			*ep = e;
		} else if (k->per == 1 || !server) {
			json_array_append_new(*ep, e);	/* a client each; its QPs */
		} else {	/* server with standby QPs: per client, a list */
			if (i % k->per == 0)
				json_array_append_new(*ep, json_array());
			json_array_append_new(json_array_get(*ep, (size_t)(i / k->per)), e);
		}
	}
	if (!server) {
		for (size_t h = 0; h < sizeof(k->lat) / sizeof(k->lat[0]); h++)
			hist_init(&k->lat[h]);
		if (k->cfg.history && !(k->hist = calloc(k->cfg.ops, sizeof(*k->hist))))
			goto fail;
		if (k->cfg.recovery == REC_LOG && !(k->gen = calloc(k->cfg.keys * 2, 1)))
			goto fail;
		k->rng = rtb_mix64(k->cfg.seed * 7919 + (uint64_t)(uintptr_t)k);
		if (k->cfg.dist == DIST_ZIPF) {
			double s = 0, theta = k->cfg.theta_milli / 1000.0;
			uint64_t n;

			k->zipf_cdf = malloc(k->cfg.keys * sizeof(double));
			if (!k->zipf_cdf)
				goto fail;
			for (n = 0; n < k->cfg.keys; n++)
				k->zipf_cdf[n] = (s += 1.0 / pow((double)(n + 1), theta));
			for (n = 0; n < k->cfg.keys; n++)
				k->zipf_cdf[n] /= s;
		}
	}
	return 0;
fail:
	if (r == -ENOMEM && !c->err[0])
		snprintf(c->err, sizeof(c->err), "out of memory");
	kv_destroy(c);
	return r;
}

/* server: array, entry i for client i (a list of its QPs' with standby
 * QPs); client: the server's entry for it (the same form) */
static int kv_connect(struct wl_ctx *c, const json_t *peer)
{
	struct kv *k = c->priv;
	struct vb_rc_opts o = vb_rc_opts_of(&k->cfg.rc, 16);
	struct vb_ep ep;
	int i, r;

	for (i = 0; i < k->nqp; i++) {
		const json_t *e = c->role == WL_SERVER ? json_array_get(peer, (size_t)(i / k->per)) : peer;

		if (k->per > 1)
			e = json_array_get(e, (size_t)(i % k->per));
		if (vb_ep_from_json(&ep, e)) {
			snprintf(c->err, sizeof(c->err), "malformed endpoint %d", i);
			return -EINVAL;
		}
		r = vb_qp_connect(k->rc[i].qp, c->dev, k->rc[i].psn, &ep, &o);
		if (r) {
			snprintf(c->err, sizeof(c->err), "kv: connect %d failed: %s", i, strerror(-r));
			return r;
		}
		if (c->role == WL_CLIENT)
			k->peers[i] = ep;
	}
	k->peer = k->peers[0];
	k->cur = 0;
	if (c->role == WL_CLIENT && k->peer.len < server_bytes(k)) {
		snprintf(c->err, sizeof(c->err), "server table smaller than the layout asked for");
		return -EINVAL;
	}
	return 0;
}

/* one verb, waited for: READ/WRITE of len bytes at remote offset, CAS, FAA */
static int rdma(struct wl_ctx *c, struct kv *k, enum ibv_wr_opcode op, size_t local_off,
		uint64_t remote_off, uint32_t len, uint64_t cmp, uint64_t swap)
{
	struct vb_rc *rc = &k->rc[k->cur];
	struct ibv_sge sge = { .addr = (uintptr_t)(k->mem + local_off), .length = len,
			       .lkey = rc->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad, *first = &wr;
	/* a log entry (log_write) goes first, in the same post, unsignaled:
	 * in order on the QP, without a round trip of its own */
	struct ibv_sge lsge = { .addr = (uintptr_t)(k->mem + SCRATCH + 16), .length = 8,
				.lkey = rc->mr->lkey };
	struct ibv_send_wr lwr = { .sg_list = &lsge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				   .next = &wr };
	struct ibv_wc wc;
	uint64_t start = wl_now_ns();
	int n, r;

	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = k->peer.addr + remote_off;
		wr.wr.atomic.rkey = k->peer.rkey;
		wr.wr.atomic.compare_add = cmp;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = k->peer.addr + remote_off;
		wr.wr.rdma.rkey = k->peer.rkey;
	}
	if (k->pre) {
		lwr.wr.rdma.remote_addr = k->peer.addr + k->pre_off;
		lwr.wr.rdma.rkey = k->peer.rkey;
		first = &lwr;
		k->pre = 0;
	}
	r = ibv_post_send(rc->qp, first, &bad);
	if (r) {
		snprintf(c->err, sizeof(c->err), "kv: post failed: %s", strerror(r));
		return -r;
	}
	while (!(n = ibv_poll_cq(rc->cq, 1, &wc))) {
		if (wl_now_ns() - start > k->cfg.op_timeout) {
			snprintf(c->err, sizeof(c->err), "kv: no completion within %.0f s",
				 k->cfg.op_timeout / 1e9);
			return -ETIMEDOUT;
		}
		if (*c->stop) {
			snprintf(c->err, sizeof(c->err), "stopped");
			return -EINTR;
		}
	}
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		snprintf(c->err, sizeof(c->err), "kv: operation completed with %s",
			 n < 0 ? "a poll error" : ibv_wc_status_str(wc.status));
		/* the QP broke (the link: its retries ran out, or it was flushed):
		 * what recovery= handles */
		return n > 0 && (wc.status == IBV_WC_RETRY_EXC_ERR ||
				 wc.status == IBV_WC_RNR_RETRY_EXC_ERR ||
				 wc.status == IBV_WC_WR_FLUSH_ERR) ? -ECONNRESET : -EIO;
	}
	return 0;
}

/* the lock word a holder writes: the version's, locked, owner and epoch */
static uint64_t lv_locked(uint64_t ver, uint64_t epoch, uint64_t owner)
{
	return (ver & ~(LV_VER - 1)) | (epoch & 7) << 5 | (owner & 15) << 1 | 1;
}

/*
 * A lock held past its lease, taken over (the file's head comment): CAS
 * the word seen to this client's with the next epoch, READ the slot, keep
 * the version its checksum proves, unlock to it. 0 also when another
 * client moved the word first (read again); -EIO when the slot holds
 * neither version (corrupt).
 */
static int take_over(struct wl_ctx *c, struct kv *k, uint64_t idx, uint64_t word)
{
	uint64_t *cas = (uint64_t *)(k->mem + SCRATCH), off = idx * sizeof(struct kv_slot);
	uint64_t mine = lv_locked(word, ((word >> 5) & 7) + 1, k->cfg.client), ver = word & ~(LV_VER - 1);
	struct kv_slot *w = (struct kv_slot *)k->mem;
	int r;

	if ((r = rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, off, 8, word, mine)))
		return r;
	if (*cas != word)
		return 0;
	k->takeovers++;
	if ((r = rdma(c, k, IBV_WR_RDMA_READ, 0, off, sizeof(*w), 0, 0)))
		return r;
	if (w->sum == slot_sum(w, ver + LV_VER)) {
		ver += LV_VER;	/* the dead PUT's body landed: its update stands */
		k->rolled_forward++;
	} else if (w->sum == slot_sum(w, ver)) {
		k->rolled_back++;
	} else {
		snprintf(c->err, sizeof(c->err), "kv: key %llu: the slot taken over holds neither "
			 "version (corrupt)", (unsigned long long)w->key);
		return -EIO;
	}
	return rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, off, 8, mine, ver);
}

/*
 * find key's slot: read its buckets; *idx = slot index in the table.
 * An unlocked slot with a wrong checksum is a read torn by an update in
 * flight: read again. With the lock (an update sets the lock bit before it
 * writes anything, and READs copy in address order, the version first), a
 * torn read is always followed by another version; so a bad read followed
 * by a good one of the same version is data corrupted on its way
 * (corrupt_reads), and the same bad bytes twice are a slot corrupt in the
 * server's memory (corrupt_slots): returned as read, counted, not retried.
 * Without the lock (lock=off) two PUTs can leave a slot torn for good (one's
 * body, the other's version): the same bad bytes twice are taken as they
 * are (torn_slots), so that the unsafe variant's reads end (they used to
 * spin to "stayed locked" and fail the run). A locked slot is read again
 * until it is unlocked, or taken over once the same locked word has been
 * seen for lease + lease/4; op_timeout bounds it all.
 */
static int lookup(struct wl_ctx *c, struct kv *k, uint64_t key, uint64_t *idx, struct kv_slot *out)
{
	uint64_t b = bucket_of(k, key), j, start = wl_now_ns(), held = 0, held_since = 0;
	struct kv_slot *sl = (struct kv_slot *)k->mem, bad;
	int s, r, have_bad = 0;

	while (wl_now_ns() - start < k->cfg.op_timeout) {
		int torn = 0;

		for (j = 0; j < PROBE; j++) {
			r = rdma(c, k, IBV_WR_RDMA_READ, 0, (b + j) * SLOTS * sizeof(*sl),
				 SLOTS * sizeof(*sl), 0, 0);
			if (r)
				return r;
			for (s = 0; s < SLOTS; s++) {
				if (sl[s].key != key)
					continue;
				if (sl[s].lockver & 1) {
					uint64_t now = wl_now_ns(), w = sl[s].lockver;

					torn = 1;	/* an update in flight: read again */
					have_bad = 0;
					if (w != held) {
						held = w;
						held_since = now;
					} else if (k->cfg.lock &&
						   now - held_since > k->cfg.lease + k->cfg.lease / 4) {
						r = take_over(c, k, (b + j) * SLOTS + (uint64_t)s, w);
						if (r)
							return r;
						held = 0;
					}
					break;
				}
				if (sl[s].sum != slot_sum(&sl[s], sl[s].lockver)) {
					if (have_bad && !memcmp(&bad, &sl[s], sizeof(bad))) {
						/* the same bad bytes twice: take them. Locked,
						 * corrupt where it is kept; unlocked (lock=off),
						 * two PUTs' bodies and versions crossed, and the
						 * slot stays torn until the next PUT */
						if (k->cfg.lock)
							k->corrupt_slots++;
						else
							k->torn_slots++;
						break;
					}
					bad = sl[s];
					have_bad = 1;
					torn = 1;
					break;
				}
				if (k->cfg.lock && have_bad && bad.lockver == sl[s].lockver)
					k->corrupt_reads++;
				break;
			}
			if (s < SLOTS && !torn) {
				*idx = (b + j) * SLOTS + (uint64_t)s;
				*out = sl[s];
				return 0;
			}
			if (torn)
				break;
		}
		if (!torn) {
			snprintf(c->err, sizeof(c->err), "kv: key %llu not found", (unsigned long long)key);
			return -ENOENT;
		}
		k->torn++;
		if (*c->stop) {
			snprintf(c->err, sizeof(c->err), "stopped");
			return -EINTR;
		}
	}
	snprintf(c->err, sizeof(c->err), "kv: key %llu stayed locked for %.0f s (op_timeout)",
		 (unsigned long long)key, k->cfg.op_timeout / 1e9);
	return -EBUSY;
}

/* recovery=log: the entry of the writer of tag on obj: its operation took
 * effect, with this result. Posted with the next verb, before it. */
static void log_write(struct kv *k, uint64_t tag, uint64_t obj, uint64_t result)
{
	uint64_t *e = (uint64_t *)(k->mem + SCRATCH + 16);

	*e = TAG_SEQ(tag) << 32 | (result & 0xffffffffULL);
	k->pre = 1;
	k->pre_off = log_off(k, TAG_CLIENT(tag), obj, TAG_GEN(tag));
}

/* this client's tag for its operation in flight on obj (k->gen[obj] was
 * moved on when it began) */
static uint64_t my_tag(const struct kv *k, uint64_t obj)
{
	return TAG(k->cfg.client, k->gen[obj], k->seq);
}

/*
 * recovery=log: INCR and CAS updates of a counter as one CAS from the word
 * read to value + 1 tagged with this operation, so that the word itself
 * says whose update it holds; the tag it replaces is its writer's proof of
 * execution, written to that writer's log first (in order on the QP: it
 * lands before the tag can go). *old: the value before.
 */
static int tagged_incr(struct wl_ctx *c, struct kv *k, uint64_t key, uint64_t *old)
{
	uint64_t *v = (uint64_t *)(k->mem + SCRATCH), off = counter_off(k, key), w;
	int r = rdma(c, k, IBV_WR_RDMA_READ, SCRATCH, off, 8, 0, 0);

	for (w = *v; !r; w = *v) {
		uint64_t pc = TAG_CLIENT(w);

		if (pc && pc != k->cfg.client)
			log_write(k, w & 0xffffffffULL, obj_of(key, 1), (w >> 32) - 1);
		r = rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, off, 8, w,
			 ((w >> 32) + 1) << 32 | my_tag(k, obj_of(key, 1)));
		if (!r && *v == w) {
			*old = w >> 32;
			return 0;
		}
		if (!r)
			k->cas_fails++;
		if (*c->stop) {
			snprintf(c->err, sizeof(c->err), "stopped");
			return -EINTR;
		}
	}
	return r;
}

/* crash=: client 1 dies here, holding the lock (the file's head comment):
 * the server told it is done (the harness's signal, not the protocol's),
 * then its QP to the error state, as a dead process's */
static int crash_now(struct wl_ctx *c, struct kv *k, uint64_t key)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	int r = rdma(c, k, IBV_WR_ATOMIC_FETCH_AND_ADD, SCRATCH, table_bytes(k), 8, 1, 0);

	if (r)
		return r;
	if (ibv_modify_qp(k->rc[k->cur].qp, &a, IBV_QP_STATE)) {
		snprintf(c->err, sizeof(c->err), "kv: crash: QP to the error state failed");
		return -EIO;
	}
	k->crashed = 1;
	k->crash_key = key;
	return CRASHED;
}

/* *seen: the update count this PUT added one to; CRASHED: crash= */
static int put(struct wl_ctx *c, struct kv *k, uint64_t key, uint64_t *seen)
{
	uint64_t *cas = (uint64_t *)(k->mem + SCRATCH);
	struct kv_slot cur, *w = (struct kv_slot *)k->mem;
	uint64_t idx, off, v, mine = 0, t_lock = 0;
	int r, crash = k->cfg.crash && k->cfg.client == 1 && ++k->nput == k->cfg.crash;

	for (;;) {
		if ((r = lookup(c, k, key, &idx, &cur)))
			return r;
		off = idx * sizeof(struct kv_slot);
		v = cur.lockver;
		if (!k->cfg.lock)
			break;	/* unsafe: no lock, the body as the lookup read it */
		mine = lv_locked(v, 0, k->cfg.client);
		t_lock = wl_now_ns();	/* the lease runs from before the CAS is posted */
		/* in flight: if the QP breaks from here on, the lock may be ours */
		k->inf_locked = 1;
		k->inf_off = off;
		k->inf_v = v;
		k->inf_mine = mine;
		/* the CAS result lands in cas[0]: the old value */
		r = rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, off, 8, v, mine);
		if (r)
			return r;
		if (*cas != v) {
			k->inf_locked = 0;
			k->retries++;	/* someone else got there first */
			continue;
		}
		/* locked: the body as it is now (the lookup may predate the last update) */
		if ((r = rdma(c, k, IBV_WR_RDMA_READ, 0, off, sizeof(*w), 0, 0)))
			return r;
		if (wl_now_ns() - t_lock < k->cfg.lease - k->cfg.lease / 4)
			break;
		/* the lease ran out before the body: leave the lock to be taken
		 * over (releasing it could free another holder's) and start again */
		k->lease_aborts++;
	}
	if (!k->cfg.lock)
		*w = cur;
	if (k->cfg.recovery == REC_LOG) {
		/* the body's last writer learns here that its PUT took effect (it may
		 * have lost the completion): its log entry, before this body
		 * replaces its tag (in order on the QP) */
		uint64_t prev = w->val[2], pc = TAG_CLIENT(prev);

		if (pc && pc != k->cfg.client)
			log_write(k, prev, obj_of(key, 0), w->val[0] - 1);
		w->val[2] = my_tag(k, obj_of(key, 0));
	}
	*seen = w->val[0]++;
	w->val[1] = rtb_mix64(w->val[1] + key);
	w->lockver = mine;
	w->sum = slot_sum(w, v + LV_VER);
	if (crash && k->cfg.crash_at == CRASH_LOCK)
		return crash_now(c, k, key);
	/* body (without lockver), then the unlock: in order on one RC QP */
	if ((r = rdma(c, k, IBV_WR_RDMA_WRITE, 8, off + 8, sizeof(*w) - 8, 0, 0)))
		return r;
	if (crash)
		return crash_now(c, k, key);
	if (!k->cfg.lock) {
		*(uint64_t *)k->mem = v + LV_VER;
		return rdma(c, k, IBV_WR_RDMA_WRITE, 0, off, 8, 0, 0);
	}
	if ((r = rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, off, 8, mine, v + LV_VER)))
		return r;
	if (*cas != mine)	/* taken over after the body landed: rolled forward */
		k->late_unlocks++;
	return 0;
}

/* INCR: the key's counter + 1; *old: its value before */
static int incr(struct wl_ctx *c, struct kv *k, uint64_t key, uint64_t *old)
{
	int r = rdma(c, k, IBV_WR_ATOMIC_FETCH_AND_ADD, SCRATCH, counter_off(k, key), 8, 1, 0);

	*old = *(uint64_t *)(k->mem + SCRATCH);
	return r;
}

/* *old: the counter the successful CAS replaced */
static int cas_incr(struct wl_ctx *c, struct kv *k, uint64_t key, uint64_t *old)
{
	uint64_t *v = (uint64_t *)(k->mem + SCRATCH), off = counter_off(k, key), want;
	int r = rdma(c, k, IBV_WR_RDMA_READ, SCRATCH, off, 8, 0, 0);

	for (want = *v; !r; want = *v) {
		r = rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, off, 8, want, want + 1);
		if (!r && *v == want) {
			*old = want;
			return 0;
		}
		k->cas_fails++;	/* another client's update came first: from its value */
		if (*c->stop) {
			snprintf(c->err, sizeof(c->err), "stopped");
			return -EINTR;
		}
	}
	return r;
}

/* one operation, once */
static int do_op(struct wl_ctx *c, struct kv *k, int kind, uint64_t key, uint64_t *seen,
		 struct kv_slot *cur)
{
	uint64_t idx;

	k->inf_locked = 0;
	if (kind == HK_GET)
		return lookup(c, k, key, &idx, cur);
	if (kind == HK_PUT)
		return put(c, k, key, seen);
	if (k->cfg.recovery == REC_LOG)
		return tagged_incr(c, k, key, seen);
	return kind == HK_INCR ? incr(c, k, key, seen) : cas_incr(c, k, key, seen);
}

/*
 * recovery=log, on the next QP: did the operation in flight take effect?
 * What the server's memory says, read in this order: the place it changes
 * first (its tag there, or, for a PUT, its lock still held), then its log
 * entry (a later writer puts it there before the tag goes, so a tag gone
 * means the entry is already there). Executed: its result restored (1);
 * not: 0, to be issued again (a lock of ours released first).
 */
static int logged(struct wl_ctx *c, struct kv *k, int kind, uint64_t key, uint64_t *seen)
{
	uint64_t *v = (uint64_t *)(k->mem + SCRATCH), *e = (uint64_t *)(k->mem + SCRATCH + 16);
	uint64_t obj = obj_of(key, kind != HK_PUT), tag = my_tag(k, obj);
	struct kv_slot *w = (struct kv_slot *)k->mem;
	int r;

	if (kind == HK_PUT) {
		if (!k->inf_locked)
			return 0;	/* no lock CAS posted: nothing of it can be there */
		if ((r = rdma(c, k, IBV_WR_RDMA_READ, 0, k->inf_off, sizeof(*w), 0, 0)))
			return r;
		if (w->lockver == k->inf_mine) {	/* our lock, still: the body? */
			int landed = w->sum == slot_sum(w, k->inf_v + LV_VER);

			if (landed)
				*seen = w->val[0] - 1;
			r = rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, k->inf_off, 8,
				 k->inf_mine, k->inf_v + (landed ? LV_VER : 0));
			return r ? r : landed;
		}
		if (w->val[2] == tag) {	/* our body, the last one written */
			*seen = w->val[0] - 1;
			return 1;
		}
	} else {
		if ((r = rdma(c, k, IBV_WR_RDMA_READ, SCRATCH, counter_off(k, key), 8, 0, 0)))
			return r;
		if ((*v & 0xffffffffULL) == tag) {
			*seen = (*v >> 32) - 1;
			return 1;
		}
	}
	if ((r = rdma(c, k, IBV_WR_RDMA_READ, SCRATCH + 16,
		      log_off(k, k->cfg.client, obj, k->gen[obj]), 8, 0, 0)))
		return r;
	if (*e >> 32 == TAG_SEQ(k->seq)) {
		*seen = *e & 0xffffffffULL;
		return 1;
	}
	return 0;
}

/*
 * An operation with recovery: when the QP breaks (-ECONNRESET), the next
 * standby QP takes over and, by recovery=, the operation is issued again
 * (resend_all: what an RC application does, executed twice if it had
 * taken effect) or first looked up in the log (log: restored if it had,
 * issued again if not; GETs are simply issued again). none: the error.
 */
static int run_op(struct wl_ctx *c, struct kv *k, int kind, uint64_t key, uint64_t *seen,
		  struct kv_slot *cur)
{
	uint64_t t_fail;
	int r;

	k->seq++;
	if (k->gen && kind != HK_GET)	/* its tag's generation on the object */
		k->gen[obj_of(key, kind != HK_PUT)]++;
	r = do_op(c, k, kind, key, seen, cur);
	if (r != -ECONNRESET || k->cfg.recovery == REC_NONE)
		return r;
	t_fail = wl_now_ns();
	do {
		k->failures++;
		if (k->cur + 1 >= k->per) {
			snprintf(c->err, sizeof(c->err), "kv: all %d QPs to the server broke "
				 "(standby %llu)", k->per, (unsigned long long)k->cfg.standby);
			return -ECONNRESET;
		}
		k->peer = k->peers[++k->cur];
		r = k->cfg.recovery == REC_LOG && kind != HK_GET ? logged(c, k, kind, key, seen) : 0;
		if (r == 1) {
			k->restored++;
			r = 0;
		} else if (!r) {
			k->reissued++;
			r = do_op(c, k, kind, key, seen, cur);
		}
	} while (r == -ECONNRESET);
	if (!r && k->nrec < sizeof(k->rec_ns) / sizeof(k->rec_ns[0]))
		k->rec_ns[k->nrec++] = wl_now_ns() - t_fail;
	return r;
}

static uint64_t pick_key(struct kv *k)
{
	double u;
	uint64_t lo = 0, hi, mid;

	k->rng = rtb_mix64(k->rng + 0x9e3779b97f4a7c15ULL);
	if (k->cfg.dist == DIST_UNIFORM)
		return k->rng % k->cfg.keys + 1;
	u = (double)(k->rng >> 11) / 9007199254740992.0;
	hi = k->cfg.keys - 1;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (k->zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* scatter the popular ranks over the key space */
	return rtb_mix64(lo + 1) % k->cfg.keys + 1;
}

static int server_run(struct wl_ctx *c, struct kv *k, json_t **result)
{
	volatile uint64_t *done = (volatile uint64_t *)(k->mem + table_bytes(k));
	struct kv_slot *t = (struct kv_slot *)k->mem;
	const uint64_t *ctr = (const uint64_t *)(k->mem + counter_off(k, 0));
	uint64_t i, updates = 0, bad = 0, found = 0, incrs = 0, locked = 0;
	int stopped = 0;

	/* clients FETCH_ADD the counter when they finish; stopped before (a
	 * client's node crashed: it never will), the table is read as it is */
	while (*done < k->cfg.clients) {
		struct timespec ts = { 0, 2000000 };

		if (*c->stop) {
			stopped = 1;
			break;
		}
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < (k->nb + PROBE) * SLOTS; i++) {
		if (!t[i].key)
			continue;
		found++;
		locked += t[i].lockver & 1;
		if ((t[i].lockver & 1) || t[i].sum != slot_sum(&t[i], t[i].lockver))
			bad++;
		updates += t[i].val[0];
	}
	for (i = 1; i <= k->cfg.keys; i++)	/* recovery=log: value << 32 | tag */
		incrs += k->cfg.recovery == REC_LOG ? ctr[i] >> 32 : ctr[i];
	*result = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I}", "role", "server", "keys_found",
			    (json_int_t)found, "bad_slots", (json_int_t)bad, "locked_slots",
			    (json_int_t)locked, "updates_recorded", (json_int_t)updates,
			    "incrs_recorded", (json_int_t)incrs);
	if (*result && stopped)	/* what a client's crash leaves: who finished */
		json_object_update_new(*result, json_pack("{s:b,s:I}", "stopped", 1, "clients_done",
							  (json_int_t)*done));
	return *result ? 0 : -ENOMEM;
}

static int kv_run(struct wl_ctx *c, json_t **result)
{
	struct kv *k = c->priv;
	uint64_t i, t_start, intended, t0, t1, seen = 0, read_pct;
	struct kv_slot cur;
	unsigned int upd_pct = k->cfg.workload == MIX_A ? 50 : k->cfg.workload == MIX_B ? 5 : 0;
	double secs;
	json_t *hj = NULL;
	int r, kind;

	if (c->role == WL_SERVER)
		return server_run(c, k, result);
	t_start = wl_now_ns();
	for (i = 0; i < k->cfg.ops; i++) {
		uint64_t key = pick_key(k);

		k->rng = rtb_mix64(k->rng + 1);
		read_pct = (k->rng >> 32) % 100;	/* of the reads: increments, CAS, GETs */
		kind = k->rng % 100 < upd_pct			? HK_PUT :
		       read_pct < k->cfg.incr			? HK_INCR :
		       read_pct < k->cfg.incr + k->cfg.cas	? HK_CAS :
								  HK_GET;
		if (k->cfg.rate) {
			/* open loop: each op has its slot in time; if we are late the
			 * wait counts in its latency (no coordinated omission) */
			intended = t_start + i * 1000000000ULL / k->cfg.rate;
			while (wl_now_ns() < intended)
				;
			t0 = intended;
		} else {
			t0 = wl_now_ns();
		}
		r = run_op(c, k, kind, key, &seen, &cur);
		if (r == CRASHED) {	/* this PUT never completes: pending in the history */
			if (k->hist) {
				uint64_t *h = k->hist[k->nhist++];

				h[0] = t0;
				h[1] = UINT64_MAX;
				h[2] = HK_PUT;
				h[3] = key;
				h[4] = seen;
			}
			break;
		}
		if (r)
			return r;
		t1 = wl_now_ns();
		hist_record(&k->lat[kind], t1 - t0);
		wl_record(c, t1, t1 - t0);
		if (k->hist) {
			uint64_t *h = k->hist[k->nhist++];

			h[0] = t0;
			h[1] = t1;
			h[2] = (uint64_t)kind;
			h[3] = kind == HK_INCR || kind == HK_CAS ? key | KEY_COUNTER : key;
			h[4] = kind == HK_GET ? cur.val[0] : seen;
		}
		k->puts += kind == HK_PUT;
		k->gets += kind == HK_GET;
		k->incrs += kind == HK_INCR;
		k->cases += kind == HK_CAS;
		__atomic_store_n(&c->progress, i + 1, __ATOMIC_RELAXED);
	}
	secs = (double)(wl_now_ns() - t_start) / 1e9;
	if (k->cfg.crash && k->cfg.client == 1 && !k->crashed) {
		snprintf(c->err, sizeof(c->err), "kv: crash=%llu: client 1 made only %llu PUTs",
			 (unsigned long long)k->cfg.crash, (unsigned long long)k->nput);
		return -EINVAL;
	}
	/* tell the server this client is done (a crashed one did, as it died) */
	if (!k->crashed &&
	    (r = rdma(c, k, IBV_WR_ATOMIC_FETCH_AND_ADD, SCRATCH, table_bytes(k), 8, 1, 0)))
		return r;
	if (k->hist) {	/* [call, ret, kind, key, out] each: kind 0 get, 1 put, 2 incr, 3 cas;
			 * out the count read, the count a PUT added 1 to, the counter before */
		hj = json_array();
		for (i = 0; hj && i < k->nhist; i++)
			json_array_append_new(hj, json_pack("[I,I,i,I,I]", (json_int_t)k->hist[i][0],
							    (json_int_t)k->hist[i][1],
							    (int)k->hist[i][2],
							    (json_int_t)k->hist[i][3],
							    (json_int_t)k->hist[i][4]));
	}
	*result = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:o,s:o,s:o,s:s}", "role",
			    "client", "workload", mixes[k->cfg.workload], "gets", (json_int_t)k->gets,
			    "puts", (json_int_t)k->puts, "incrs", (json_int_t)k->incrs, "cas_retries",
			    (json_int_t)k->retries, "torn_reads", (json_int_t)k->torn,
			    "corrupt_reads", (json_int_t)k->corrupt_reads, "corrupt_slots",
			    (json_int_t)k->corrupt_slots, "mismatches",
			    (json_int_t)(k->corrupt_reads + k->corrupt_slots), "ops_per_s",
			    (double)i / secs, "get_lat_ns", hist_to_json(&k->lat[0]),
			    "put_lat_ns", hist_to_json(&k->lat[1]), "incr_lat_ns",
			    hist_to_json(&k->lat[2]), "lock", onoff[k->cfg.lock]);
	if (*result && !k->cfg.lock)
		json_object_set_new(*result, "torn_slots", json_integer((json_int_t)k->torn_slots));
	if (*result && (k->takeovers || k->lease_aborts || k->late_unlocks || k->cfg.crash))
		json_object_set_new(*result, "leases",
				    json_pack("{s:I,s:I,s:I,s:I,s:I}", "takeovers",
					      (json_int_t)k->takeovers, "rolled_forward",
					      (json_int_t)k->rolled_forward, "rolled_back",
					      (json_int_t)k->rolled_back, "lease_aborts",
					      (json_int_t)k->lease_aborts, "late_unlocks",
					      (json_int_t)k->late_unlocks));
	if (*result && k->cfg.recovery != REC_NONE) {
		json_t *rn = json_array();

		for (size_t q = 0; rn && q < k->nrec; q++)
			json_array_append_new(rn, json_integer((json_int_t)k->rec_ns[q]));
		json_object_set_new(*result, "recovery",
				    json_pack("{s:s,s:I,s:I,s:I,s:I,s:o}", "mode",
					      recoveries[k->cfg.recovery], "standby",
					      (json_int_t)k->cfg.standby, "failures",
					      (json_int_t)k->failures, "reissued",
					      (json_int_t)k->reissued, "restored",
					      (json_int_t)k->restored, "recovery_ns", rn));
	}
	if (*result && k->crashed)	/* the PUT it died in: it may or may not have taken effect */
		json_object_set_new(*result, "crashed",
				    json_pack("{s:I,s:I,s:s}", "ops_done", (json_int_t)i, "key",
					      (json_int_t)k->crash_key, "at",
					      crash_ats[k->cfg.crash_at]));
	if (*result && k->cfg.cas) {	/* only when asked: reports stay as they were */
		json_object_set_new(*result, "cas", json_integer((json_int_t)k->cases));
		json_object_set_new(*result, "cas_fails", json_integer((json_int_t)k->cas_fails));
		json_object_set_new(*result, "cas_lat_ns", hist_to_json(&k->lat[HK_CAS]));
	}
	if (*result && hj)
		json_object_set_new(*result, "history", hj);
	else
		json_decref(hj);
	return *result ? 0 : -ENOMEM;
}

const struct wl_ops wl_kv = {
	.name = "kv",
	.opts = kv_opts,
	.prepare = kv_prepare,
	.connect = kv_connect,
	.run = kv_run,
	.destroy = kv_destroy,
};
