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
 * data was corrupted on the wire or in memory: counted, see kv_lookup() in kv_ops.c).
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
#include "kv_int.h"



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

/* the options together: 0, or -EINVAL with c->err */
static int check_cfg(struct wl_ctx *c, const struct kv *k, int server)
{
	const struct kv_cfg *f = &k->cfg;

	if (f->recovery == REC_LOG &&
	    (f->ops >= SEQ_MAX || f->clients > 15 || server_bytes(k) > (256u << 20)))
		snprintf(c->err, sizeof(c->err), "recovery=log: at most %llu operations a client and "
			 "a log of 256 MiB (2 x keys x 32 bytes a client)", SEQ_MAX - 1);
	else if (f->recovery == REC_LOG && !server && !f->client)
		snprintf(c->err, sizeof(c->err), "recovery=log: the client's number is not set "
			 "(rdmactl sets it)");
	else if (f->incr + f->cas > 100)
		snprintf(c->err, sizeof(c->err), "incr %llu%% and cas %llu%% of the reads: more than 100%%",
			 (unsigned long long)f->incr, (unsigned long long)f->cas);
	else if (f->lock && f->lease + f->lease / 4 >= f->op_timeout)
		snprintf(c->err, sizeof(c->err), "lease %.3f s: a lock is taken over after 1.25 leases, "
			 "which must come before op_timeout (%.3f s)", f->lease / 1e9,
			 f->op_timeout / 1e9);
	else if (f->lock && f->rc.retry_cnt < 7 && f->rc.timeout &&
		 f->lease / 2 < (f->rc.retry_cnt + 1) * (4096ULL << f->rc.timeout))
		snprintf(c->err, sizeof(c->err), "lease %.3f s: a lock holder's WRITE may be resent for "
			 "%.3f s (rc_retry_cnt + 1 ACK timeouts), half the lease must cover that",
			 f->lease / 1e9,
			 (f->rc.retry_cnt + 1) * (4096.0 * (double)(1ULL << f->rc.timeout)) / 1e9);
	else if (f->recovery != REC_NONE && !f->lock)
		snprintf(c->err, sizeof(c->err), "recovery %s: a PUT's recovery uses its lock, and "
			 "lock=off takes none", kv_recoveries[f->recovery]);
	else if (f->crash && !f->lock)
		snprintf(c->err, sizeof(c->err), "crash: dies holding the lock, and lock=off takes none");
	else if (!server && f->history && f->ops > HIST_MAX)
		snprintf(c->err, sizeof(c->err), "history=on records at most %d operations a client "
			 "(ops %llu): set history=off", HIST_MAX, (unsigned long long)f->ops);
	else
		return 0;
	return -EINVAL;
}

/* recovery: each client's QP and its standby QPs, all connected now (no
 * connection to rebuild when one breaks: the next takes over). *ep: the
 * endpoints (server: per client; with standby QPs, a list each) */
static int create_qps(struct wl_ctx *c, struct kv *k, int server, json_t **ep)
{
	int i, r;

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
			*ep = NULL;
			return r;
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
	return 0;
}

/* a client's own state: latencies, history, log generations, its key
 * distribution */
static int client_init(struct kv *k)
{
	for (size_t h = 0; h < sizeof(k->lat) / sizeof(k->lat[0]); h++)
		hist_init(&k->lat[h]);
	if (k->cfg.history && !(k->hist = calloc(k->cfg.ops, sizeof(*k->hist))))
		return -ENOMEM;
	if (k->cfg.recovery == REC_LOG && !(k->gen = calloc(k->cfg.keys * 2, 1)))
		return -ENOMEM;
	k->rng = rtb_mix64(k->cfg.seed * 7919 + (uint64_t)(uintptr_t)k);
	if (k->cfg.dist == DIST_ZIPF) {
		double s = 0, theta = k->cfg.theta_milli / 1000.0;
		uint64_t n;

		k->zipf_cdf = malloc(k->cfg.keys * sizeof(double));
		if (!k->zipf_cdf)
			return -ENOMEM;
		for (n = 0; n < k->cfg.keys; n++)
			k->zipf_cdf[n] = (s += 1.0 / pow((double)(n + 1), theta));
		for (n = 0; n < k->cfg.keys; n++)
			k->zipf_cdf[n] /= s;
	}
	return 0;
}

static int kv_prepare(struct wl_ctx *c, const json_t *opts, json_t **ep)
{
	int server = c->role == WL_SERVER, r;
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
	if ((r = check_cfg(c, k, server)))
		goto fail;
	r = -ENOMEM;
	if (posix_memalign((void **)&k->mem, 4096, k->memlen))
		goto fail;
	memset(k->mem, 0, k->memlen);
	if ((server && (r = place_all(c, k))) || (r = create_qps(c, k, server, ep)))
		goto fail;
	if (!server && (r = client_init(k))) {
		json_decref(*ep);
		*ep = NULL;
		goto fail;
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

/* one record of the history: [call, ret, kind, key, out] */
static void hist_add(struct kv *k, uint64_t call, uint64_t ret, int kind, uint64_t key, uint64_t out)
{
	uint64_t *h;

	if (!k->hist)
		return;
	h = k->hist[k->nhist++];
	h[0] = call;
	h[1] = ret;
	h[2] = (uint64_t)kind;
	h[3] = key;
	h[4] = out;
}

/* the client's operations, closed loop or at cfg.rate: how many were done
 * (a crash ends them early), or -errno */
static int64_t client_ops(struct wl_ctx *c, struct kv *k)
{
	unsigned int upd_pct = k->cfg.workload == MIX_A ? 50 : k->cfg.workload == MIX_B ? 5 : 0;
	uint64_t i, t_start = wl_now_ns(), t0, t1, seen = 0, read_pct;
	struct kv_slot cur;
	int r, kind;

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
			uint64_t intended = t_start + i * 1000000000ULL / k->cfg.rate;

			while (wl_now_ns() < intended)
				;
			t0 = intended;
		} else {
			t0 = wl_now_ns();
		}
		r = kv_run_op(c, k, kind, key, &seen, &cur);
		if (r == CRASHED) {	/* this PUT never completes: pending in the history */
			hist_add(k, t0, UINT64_MAX, HK_PUT, key, seen);
			break;
		}
		if (r)
			return r;
		t1 = wl_now_ns();
		hist_record(&k->lat[kind], t1 - t0);
		wl_record(c, t1, t1 - t0);
		hist_add(k, t0, t1, kind, kind == HK_INCR || kind == HK_CAS ? key | KEY_COUNTER : key,
			 kind == HK_GET ? cur.val[0] : seen);
		k->puts += kind == HK_PUT;
		k->gets += kind == HK_GET;
		k->incrs += kind == HK_INCR;
		k->cases += kind == HK_CAS;
		__atomic_store_n(&c->progress, i + 1, __ATOMIC_RELAXED);
	}
	return (int64_t)i;
}

/* what only some runs report: leases, recovery, the crash, CAS, history */
static void client_extras(const struct kv *k, uint64_t done, json_t *res)
{
	if (!k->cfg.lock)
		json_object_set_new(res, "torn_slots", json_integer((json_int_t)k->torn_slots));
	if (k->takeovers || k->lease_aborts || k->late_unlocks || k->cfg.crash)
		json_object_set_new(res, "leases",
				    json_pack("{s:I,s:I,s:I,s:I,s:I}", "takeovers",
					      (json_int_t)k->takeovers, "rolled_forward",
					      (json_int_t)k->rolled_forward, "rolled_back",
					      (json_int_t)k->rolled_back, "lease_aborts",
					      (json_int_t)k->lease_aborts, "late_unlocks",
					      (json_int_t)k->late_unlocks));
	if (k->cfg.recovery != REC_NONE) {
		json_t *rn = json_array();

		for (size_t q = 0; rn && q < k->nrec; q++)
			json_array_append_new(rn, json_integer((json_int_t)k->rec_ns[q]));
		json_object_set_new(res, "recovery",
				    json_pack("{s:s,s:I,s:I,s:I,s:I,s:o}", "mode",
					      kv_recoveries[k->cfg.recovery], "standby",
					      (json_int_t)k->cfg.standby, "failures",
					      (json_int_t)k->failures, "reissued",
					      (json_int_t)k->reissued, "restored",
					      (json_int_t)k->restored, "recovery_ns", rn));
	}
	if (k->crashed)	/* the PUT it died in: it may or may not have taken effect */
		json_object_set_new(res, "crashed",
				    json_pack("{s:I,s:I,s:s}", "ops_done", (json_int_t)done, "key",
					      (json_int_t)k->crash_key, "at",
					      kv_crash_ats[k->cfg.crash_at]));
	if (k->cfg.cas) {	/* only when asked: reports stay as they were */
		json_object_set_new(res, "cas", json_integer((json_int_t)k->cases));
		json_object_set_new(res, "cas_fails", json_integer((json_int_t)k->cas_fails));
		json_object_set_new(res, "cas_lat_ns", hist_to_json(&k->lat[HK_CAS]));
	}
	if (k->hist) {	/* [call, ret, kind, key, out] each: kind 0 get, 1 put, 2 incr, 3 cas;
			 * out the count read, the count a PUT added 1 to, the counter before */
		json_t *hj = json_array();

		for (size_t i = 0; hj && i < k->nhist; i++)
			json_array_append_new(hj, json_pack("[I,I,i,I,I]", (json_int_t)k->hist[i][0],
							    (json_int_t)k->hist[i][1],
							    (int)k->hist[i][2],
							    (json_int_t)k->hist[i][3],
							    (json_int_t)k->hist[i][4]));
		json_object_set_new(res, "history", hj);
	}
}

static int kv_run(struct wl_ctx *c, json_t **result)
{
	struct kv *k = c->priv;
	uint64_t t_start;
	int64_t done;
	double secs;
	int r;

	if (c->role == WL_SERVER)
		return server_run(c, k, result);
	t_start = wl_now_ns();
	done = client_ops(c, k);
	if (done < 0)
		return (int)done;
	secs = (double)(wl_now_ns() - t_start) / 1e9;
	if (k->cfg.crash && k->cfg.client == 1 && !k->crashed) {
		snprintf(c->err, sizeof(c->err), "kv: crash=%llu: client 1 made only %llu PUTs",
			 (unsigned long long)k->cfg.crash, (unsigned long long)k->nput);
		return -EINVAL;
	}
	/* tell the server this client is done (a crashed one did, as it died) */
	if (!k->crashed &&
	    (r = kv_rdma(c, k, IBV_WR_ATOMIC_FETCH_AND_ADD, SCRATCH, table_bytes(k), 8, 1, 0)))
		return r;
	*result = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:o,s:o,s:o,s:s}", "role",
			    "client", "workload", kv_mixes[k->cfg.workload], "gets", (json_int_t)k->gets,
			    "puts", (json_int_t)k->puts, "incrs", (json_int_t)k->incrs, "cas_retries",
			    (json_int_t)k->retries, "torn_reads", (json_int_t)k->torn,
			    "corrupt_reads", (json_int_t)k->corrupt_reads, "corrupt_slots",
			    (json_int_t)k->corrupt_slots, "mismatches",
			    (json_int_t)(k->corrupt_reads + k->corrupt_slots), "ops_per_s",
			    (double)done / secs, "get_lat_ns", hist_to_json(&k->lat[0]),
			    "put_lat_ns", hist_to_json(&k->lat[1]), "incr_lat_ns",
			    hist_to_json(&k->lat[2]), "lock", kv_onoff[k->cfg.lock]);
	if (!*result)
		return -ENOMEM;
	client_extras(k, (uint64_t)done, *result);
	return 0;
}

const struct wl_ops wl_kv = {
	.name = "kv",
	.opts = kv_opts,
	.prepare = kv_prepare,
	.connect = kv_connect,
	.run = kv_run,
	.destroy = kv_destroy,
};
