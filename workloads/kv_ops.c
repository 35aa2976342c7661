// SPDX-License-Identifier: MIT
/*
 * The kv workload's one-sided operations (kv_int.h): a verb waited for,
 * a key looked up (torn and corrupted reads told apart, expired locks
 * taken over), PUT under the slot's lock, INCR and CAS on a key's counter,
 * and recovery when a QP breaks (a completion log, or issued again).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kv_int.h"

/* one verb, waited for: READ/WRITE of len bytes at remote offset, CAS, FAA */
int kv_rdma(struct wl_ctx *c, struct kv *k, enum ibv_wr_opcode op, size_t local_off,
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

	if ((r = kv_rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, off, 8, word, mine)))
		return r;
	if (*cas != word)
		return 0;
	k->takeovers++;
	if ((r = kv_rdma(c, k, IBV_WR_RDMA_READ, 0, off, sizeof(*w), 0, 0)))
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
	return kv_rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, off, 8, mine, ver);
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
int kv_lookup(struct wl_ctx *c, struct kv *k, uint64_t key, uint64_t *idx, struct kv_slot *out)
{
	uint64_t b = bucket_of(k, key), j, start = wl_now_ns(), held = 0, held_since = 0;
	struct kv_slot *sl = (struct kv_slot *)k->mem, bad;
	int s, r, have_bad = 0;

	while (wl_now_ns() - start < k->cfg.op_timeout) {
		int torn = 0;

		for (j = 0; j < PROBE; j++) {
			r = kv_rdma(c, k, IBV_WR_RDMA_READ, 0, (b + j) * SLOTS * sizeof(*sl),
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
	int r = kv_rdma(c, k, IBV_WR_RDMA_READ, SCRATCH, off, 8, 0, 0);

	for (w = *v; !r; w = *v) {
		uint64_t pc = TAG_CLIENT(w);

		if (pc && pc != k->cfg.client)
			log_write(k, w & 0xffffffffULL, obj_of(key, 1), (w >> 32) - 1);
		r = kv_rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, off, 8, w,
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
	int r = kv_rdma(c, k, IBV_WR_ATOMIC_FETCH_AND_ADD, SCRATCH, table_bytes(k), 8, 1, 0);

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
		if ((r = kv_lookup(c, k, key, &idx, &cur)))
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
		r = kv_rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, off, 8, v, mine);
		if (r)
			return r;
		if (*cas != v) {
			k->inf_locked = 0;
			k->retries++;	/* someone else got there first */
			continue;
		}
		/* locked: the body as it is now (the lookup may predate the last update) */
		if ((r = kv_rdma(c, k, IBV_WR_RDMA_READ, 0, off, sizeof(*w), 0, 0)))
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
	if ((r = kv_rdma(c, k, IBV_WR_RDMA_WRITE, 8, off + 8, sizeof(*w) - 8, 0, 0)))
		return r;
	if (crash)
		return crash_now(c, k, key);
	if (!k->cfg.lock) {
		*(uint64_t *)k->mem = v + LV_VER;
		return kv_rdma(c, k, IBV_WR_RDMA_WRITE, 0, off, 8, 0, 0);
	}
	if ((r = kv_rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, off, 8, mine, v + LV_VER)))
		return r;
	if (*cas != mine)	/* taken over after the body landed: rolled forward */
		k->late_unlocks++;
	return 0;
}

/* INCR: the key's counter + 1; *old: its value before */
static int incr(struct wl_ctx *c, struct kv *k, uint64_t key, uint64_t *old)
{
	int r = kv_rdma(c, k, IBV_WR_ATOMIC_FETCH_AND_ADD, SCRATCH, counter_off(k, key), 8, 1, 0);

	*old = *(uint64_t *)(k->mem + SCRATCH);
	return r;
}

/* *old: the counter the successful CAS replaced */
static int cas_incr(struct wl_ctx *c, struct kv *k, uint64_t key, uint64_t *old)
{
	uint64_t *v = (uint64_t *)(k->mem + SCRATCH), off = counter_off(k, key), want;
	int r = kv_rdma(c, k, IBV_WR_RDMA_READ, SCRATCH, off, 8, 0, 0);

	for (want = *v; !r; want = *v) {
		r = kv_rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, off, 8, want, want + 1);
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
		return kv_lookup(c, k, key, &idx, cur);
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
		if ((r = kv_rdma(c, k, IBV_WR_RDMA_READ, 0, k->inf_off, sizeof(*w), 0, 0)))
			return r;
		if (w->lockver == k->inf_mine) {	/* our lock, still: the body? */
			int landed = w->sum == slot_sum(w, k->inf_v + LV_VER);

			if (landed)
				*seen = w->val[0] - 1;
			r = kv_rdma(c, k, IBV_WR_ATOMIC_CMP_AND_SWP, SCRATCH, k->inf_off, 8,
				 k->inf_mine, k->inf_v + (landed ? LV_VER : 0));
			return r ? r : landed;
		}
		if (w->val[2] == tag) {	/* our body, the last one written */
			*seen = w->val[0] - 1;
			return 1;
		}
	} else {
		if ((r = kv_rdma(c, k, IBV_WR_RDMA_READ, SCRATCH, counter_off(k, key), 8, 0, 0)))
			return r;
		if ((*v & 0xffffffffULL) == tag) {
			*seen = (*v >> 32) - 1;
			return 1;
		}
	}
	if ((r = kv_rdma(c, k, IBV_WR_RDMA_READ, SCRATCH + 16,
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
int kv_run_op(struct wl_ctx *c, struct kv *k, int kind, uint64_t key, uint64_t *seen,
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
