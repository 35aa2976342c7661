// SPDX-License-Identifier: MIT
/*
 * The collective engine (see coll.h for the modes): the ring, and what
 * every mode shares (the QPs, READYs, the completion loop). Each mode is
 * a struct coll_mode_ops in a file of its own (coll_int.h), chosen once
 * when the collective opens: coll_rc.c; coll_uc.c, the UC transport of
 * the lossy modes, which is lossy; coll_hadamard.c, coll_ec.c, coll_sr.c.
 *
 * Every rank has one RC QP per peer (a full mesh; the ring algorithms use
 * the left and right neighbours) on one CQ. In rc mode the data are SENDs
 * into RECVs posted ahead of time: the receive queue is FIFO and a
 * neighbour's messages arrive in order, so each RECV names the slot its
 * message belongs to. Flow control: once a rank has posted an iteration's
 * RECVs it sends a 0-byte READY to its left neighbour, which waits for it
 * before sending (leaning on RNR retries instead costs a jiffy a miss).
 *
 *   allreduce       ring: reduce-scatter (N-1 steps) then allgather (N-1)
 *   reduce_scatter  the first half; rank r ends with chunk r+1 reduced
 *   allgather       the second half, from each rank's own chunk
 *   broadcast       the root's buffer down the ring, chunk by chunk (pipelined)
 *   alltoall        chunk j of rank i goes to rank j (chunk i there), directly
 *
 * The UC modes (lossy, hadamard, ec), after OptiReduce and Celeris: the
 * data go on a UC QP per peer as one WRITE_WITH_IMM per MTU piece straight
 * into the receiver's buffer, chained into one post per step (on rxe each
 * post is a doorbell system call). The immediate names (iteration, step,
 * piece). Each step ends with two 0-byte end markers. The receiver keeps an
 * arrival bitmap per step and ends it when
 *   - every piece is there (ec: every group has enough to be rebuilt), or
 *   - an end marker came and the link then idled for idle_grace (UC keeps
 *     a QP's packets in order: after the marker nothing more is coming), or
 *   - the agreed timeout passed since the step began and nothing came for
 *     as long again (both markers lost, or the sender went quiet), or
 *   - step_timeout_max passed (a silent peer costs this per step, no more;
 *     while nothing at all has come, a late sender is waited for till then).
 * The agreed timeout (OptiReduce's adaptive timeout): every rank estimates
 * timeout_mult x an EWMA of its steps' times (from its sends to the last
 * arrival, extrapolated by the fraction received when pieces were lost) and sends it, as the immediate
 * of its READYs, to every rank; each uses min(median of the estimates,
 * step_timeout_max), at least step_timeout_min. Missing pieces are counted
 * and zero-filled, or with fill=previous given the same piece's value one
 * iteration earlier (hadamard: the same coefficients): in reduce-scatter the
 * partial sum its stage slot still holds, in allgather the result kept from
 * the iteration before (the output's chunks hold this iteration's partial
 * sums by then). READYs stay on RC with a short ACK timeout (a
 * lost READY costs a jiffy or two, not the 67 ms of the data QPs' default).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include "coll_int.h"


float *coll_input(struct coll *c)
{
	return c->uin;
}

const float *coll_output(const struct coll *c)
{
	return c->uout;
}

size_t coll_count(const struct coll *c)
{
	return c->ucount;
}

void coll_get_stats(const struct coll *c, struct coll_stats *s)
{
	*s = c->st;
}

json_t *coll_stats_json(const struct coll *c)
{
	const struct coll_stats *st = &c->st;
	json_t *o;

	if (!c->uc) {
		o = json_object();
	} else {
		o = json_pack("{s:I,s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:I,s:I,s:I}", "steps",
			      (json_int_t)st->steps, "lost_pieces", (json_int_t)st->lost_pieces,
			      "pieces_expected", (json_int_t)st->pieces_expected, "lost_bytes",
			      (json_int_t)st->lost_bytes, "lost_fraction",
			      st->pieces_expected ? (double)st->lost_pieces /
						    (double)st->pieces_expected : 0.0,
			      "recovered_pieces", (json_int_t)st->recovered_pieces, "step_timeouts",
			      (json_int_t)st->timeouts, "marker_ends", (json_int_t)st->marker_ends,
			      "silent_steps", (json_int_t)st->silent_steps, "agreed_timeout_ns",
			      (json_int_t)st->agreed_timeout_ns, "late_looks",
			      (json_int_t)st->late_looks);
		/* late writes: stopped by memory windows (guard on), or landing */
		json_object_set_new(o, "guard", json_string(coll_onoff[c->cfg.guard]));
		json_object_set_new(o, "revoked_steps", json_integer((json_int_t)st->revoked));
		json_object_set_new(o, "late_landed", json_integer((json_int_t)st->late_landed));
		json_object_set_new(o, "piece_bytes", json_integer((json_int_t)st->piece_bytes));
	}
	if (o && c->ops->stats)
		c->ops->stats(c, o);
	return o;
}

/* what a work request was, for an error message */
static const char *wr_kind(const struct coll *c, uint64_t id)
{
	if (id & WR_MW)
		return "memory window bind or revoke";
	if (id & WR_LOSSY)
		return id & WR_RECV ? "UC data RECV" : "UC data SEND";
	if (id & WR_READY)
		return id & WR_RECV ? "READY RECV" : "READY SEND";
	if (id & WR_RECV)
		return "data RECV";
	if (id & WR_RC_READY)
		return "READY SEND";
	return c->uc ? "SEND" : "data SEND";
}

int coll_post_recv(struct coll *c, struct ibv_qp *qp, float *dst, size_t n, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)dst, .length = (uint32_t)(n * sizeof(float)),
			       .lkey = c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = WR_RECV | id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return -ibv_post_recv(qp, &wr, &bad);
}

int coll_post_send(struct coll *c, struct ibv_qp *qp, const float *src, size_t n, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = (uint32_t)(n * sizeof(float)),
			       .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	return -ibv_post_send(qp, &wr, &bad);
}

uint8_t *coll_ctl_buf(struct coll *c, int j, unsigned int slot)
{
	return c->cbuf + ((size_t)j * SR_RECVS + slot) * c->bmlen;
}

/* a control RECV toward rank j: READYs carry nothing; sr's control RECVs
 * also take NACKs, so each has a bitmap's room, slot `slot` of rank j's */
static int ctl_recv(struct coll *c, int j, unsigned int slot)
{
	uint64_t id = WR_RECV | WR_READY | (uint64_t)j | (uint64_t)slot << 8;
	struct ibv_sge sge = { 0 };
	struct ibv_recv_wr wr = { .wr_id = id }, *bad;

	if (c->bmlen) {
		sge = (struct ibv_sge){ .addr = (uintptr_t)coll_ctl_buf(c, j, slot),
					.length = (uint32_t)c->bmlen, .lkey = c->cmr->lkey };
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	return -ibv_post_recv(c->qp[j], &wr, &bad);
}

/*
 * A poll found nothing. wait=spin: yield now and then (ranks may outnumber
 * CPUs: 3 agents on 2 vCPUs, and rxe does its work in kernel threads).
 * wait=event: after SPIN_POLLS empty polls request a completion event and
 * poll once more (what completed before the request raises none), then
 * sleep on the channel until an event, the deadline or SLEEP_MAX_NS. On an
 * oversubscribed machine a spinning rank takes the CPU its neighbours need
 * for their own step: with 3 ranks on 2 vCPUs under TCG, while one rank ran
 * its transform the two waiting ones slowed it down from 45-50 to 140 ms.
 */
static int cq_idle(struct coll *c, uint64_t deadline)
{
	struct pollfd pfd;
	struct timespec ts;
	struct ibv_cq *cq;
	uint64_t now, d;
	void *ctx;

	if (++c->idle < SPIN_POLLS)
		return 0;
	if (!c->ch) {
		if (!(c->idle & (SPIN_POLLS - 1)))
			sched_yield();
		return 0;
	}
	if (!c->armed) {
		if (ibv_req_notify_cq(c->cq, 0))
			return -EIO;
		c->armed = 1;
		return 0;
	}
	now = wl_now_ns();
	if (now >= deadline)
		return 0;
	d = deadline - now < SLEEP_MAX_NS ? deadline - now : SLEEP_MAX_NS;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)d;
	pfd.fd = c->ch->fd;
	pfd.events = POLLIN;
	if (ppoll(&pfd, 1, &ts, NULL) > 0 && !ibv_get_cq_event(c->ch, &cq, &ctx)) {
		ibv_ack_cq_events(cq, 1);
		c->armed = 0;
	}
	return 0;
}

/*
 * Completions, counted in c: sends outstanding, data RECVs done (ever) and
 * READYs received but not yet used. Poll until all three reach the wants
 * (or, with nothing wanted, once).
 */
int coll_poll(struct wl_ctx *w, struct coll *c, uint64_t want_recvd, int ready_from, int drain,
	      uint64_t deadline)
{
	struct ibv_wc wc[64];
	unsigned int spin = 0;
	int n, i, once = !want_recvd && ready_from < 0 && !drain, single = once;

	while (once-- > 0 || c->recvd < want_recvd || (ready_from >= 0 && c->ready[ready_from] < 1) ||
	       (drain && c->sends)) {
		uint64_t batch_now = 0;

		n = ibv_poll_cq(c->cq, 64, wc);
		if (n < 0)
			return -EIO;
		for (i = 0; i < n; i++) {
			uint64_t id = wc[i].wr_id;

			if (wc[i].status != IBV_WC_SUCCESS) {
				snprintf(w->err, sizeof(w->err),
					 "rank %d: %s (wr_id %#llx, QP %#x) completed with %s", c->r,
					 wr_kind(c, id), (unsigned long long)id, wc[i].qp_num,
					 ibv_wc_status_str(wc[i].status));
				return -EIO;
			}
			if (id & WR_MW) {
				c->mw_pending--;
			} else if (id & WR_LOSSY) {
				if (id & WR_RECV)
					uc_arrival(c, ntohl(wc[i].imm_data), &batch_now);
				else
					c->sends--;
			} else if ((id & (WR_RECV | WR_READY)) == (WR_RECV | WR_READY)) {
				int src = (int)(id & 0xff);
				unsigned int slot = (unsigned int)(id >> 8) & 0xff;
				uint32_t imm = wc[i].wc_flags & IBV_WC_WITH_IMM ?
						       ntohl(wc[i].imm_data) : 0;

				int e = c->ops->control && imm ? c->ops->control(c, src, imm, slot) : 0;

				if (e < 0) {	/* sr: a NACK's resends */
					snprintf(w->err, sizeof(w->err),
						 "rank %d: resend to rank %d: post failed: %s", c->r,
						 src, strerror(-e));
					return -EIO;
				} else if (!e) {
					c->ready[src]++;
					if (c->uc && (wc[i].wc_flags & IBV_WC_WITH_IMM))
						c->est_us[src] = imm;	/* the peer's estimate */
				}
				/* keep the RECVs topped up (the slot is read) */
				if (c->uc && ctl_recv(c, src, slot))
					return -EIO;
			} else if (id & WR_RECV) {
				c->recvd++;	/* in order: the RQ is FIFO */
			} else if (id & WR_READY) {
				c->csends--;
			} else {
				c->sends--;
			}
		}
		if (n) {
			c->idle = 0;
			continue;
		}
		if (cq_idle(c, deadline))
			return -EIO;
		if (!single && (!(++spin & 63) || c->armed)) {
			if (*w->stop) {
				snprintf(w->err, sizeof(w->err), "stopped");
				return -EINTR;
			}
			if (wl_now_ns() > deadline) {
				int rdy = ready_from >= 0 && c->ready[ready_from] < 1;

				snprintf(w->err, sizeof(w->err), "rank %d: %s rank %d in time", c->r,
					 rdy ? "no READY from" :
					 c->recvd < want_recvd ? "no data from" : "sends unacknowledged by",
					 rdy ? ready_from : (c->r + c->n - 1) % c->n);
				return -ETIMEDOUT;
			}
		}
	}
	return 0;
}

/* one pass over the CQ while waiting for something: -EINTR once stopped,
 * -ETIMEDOUT past the deadline ("rank R: WHAT in time") */
int coll_poll_pass(struct wl_ctx *w, struct coll *c, uint64_t deadline, const char *what)
{
	int r;

	if ((r = coll_poll(w, c, 0, -1, 0, deadline)))
		return r;
	if (*w->stop) {
		snprintf(w->err, sizeof(w->err), "stopped");
		return -EINTR;
	}
	if (wl_now_ns() > deadline) {
		snprintf(w->err, sizeof(w->err), "rank %d: %s in time", c->r, what);
		return -ETIMEDOUT;
	}
	return 0;
}

static int post_recvs_other(struct coll *c);

/* every RECV of one iteration: the ring's are the mode's */
static int post_recvs(struct coll *c)
{
	if (c->cfg.op == C_BROADCAST || c->cfg.op == C_ALLTOALL)
		return post_recvs_other(c);
	return c->ops->recvs(c);
}

/* broadcast and alltoall have their own RECVs (ring ops: post_recvs) */
static int post_recvs_other(struct coll *c)
{
	int n = c->n, r = c->r, k, ret = 0;

	if (c->cfg.op == C_BROADCAST) {
		if (r == (int)c->cfg.root)
			return 0;
		for (k = 0; k < n && !ret; k++)
			ret = coll_post_recv(c, c->qp[(r + n - 1) % n], c->out + chunk_off(c, k),
					chunk_len(c, k), (uint64_t)k);
		return ret;
	}
	for (k = 0; k < n && !ret; k++)	/* alltoall: rank k's chunk r into our chunk k */
		if (k != r)
			ret = coll_post_recv(c, c->qp[k], c->out + chunk_off(c, k), c->chunk, (uint64_t)k);
	return ret;
}

/* alltoall: READY from every peer, our chunk j straight to rank j */
static int alltoall_once(struct wl_ctx *w, struct coll *c, uint64_t deadline)
{
	int n = c->n, r = c->r, j, ret;
	uint64_t base = c->recvd;

	memcpy(c->out + chunk_off(c, r), c->in + chunk_off(c, r), c->chunk * sizeof(float));
	for (j = 0; j < n; j++) {
		if (j == r)
			continue;
		if ((ret = coll_poll(w, c, 0, j, 0, deadline)))
			return ret;
		c->ready[j]--;
		if ((ret = coll_post_recv(c, c->qp[j], NULL, 0, WR_READY | (uint64_t)j)) ||
		    (ret = coll_post_send(c, c->qp[j], c->in + chunk_off(c, j), c->chunk, (uint64_t)j))) {
			snprintf(w->err, sizeof(w->err), "rank %d: post failed: %s", r, strerror(-ret));
			return ret;
		}
		c->sends++;
	}
	return coll_poll(w, c, base + (uint64_t)(n - 1), -1, 1, deadline);
}

static void add_chunk(struct coll *c, int k, const float *stage)
{
	size_t off = chunk_off(c, k), len = chunk_len(c, k), e;

	for (e = 0; e < len; e++)
		c->out[off + e] = c->in[off + e] + stage[e];
}

/* broadcast: the root's buffer chunk by chunk down the ring, each chunk
 * forwarded as it arrives */
static int broadcast_once(struct wl_ctx *w, struct coll *c, uint64_t deadline)
{
	int n = c->n, r = c->r, k, ret, root = (int)c->cfg.root;
	struct ibv_qp *right = c->qp[(r + 1) % n];

	if (r == root)
		memcpy(c->out, c->in, c->count * sizeof(float));
	for (k = 0; k < n; k++) {
		if (r != root && (ret = coll_poll(w, c, c->recv_base + k + 1, -1, 0, deadline)))
			return ret;
		if ((r + 1) % n == root)
			continue;	/* the ring ends here */
		if ((ret = coll_post_send(c, right, c->out + chunk_off(c, k), chunk_len(c, k), k))) {
			snprintf(w->err, sizeof(w->err), "rank %d: post failed: %s", r, strerror(-ret));
			return ret;
		}
		c->sends++;
	}
	return coll_poll(w, c, 0, -1, 1, deadline);
}

/* reduce-scatter: step s sends chunk r-s, receives chunk r-s-1 and adds it;
 * rank r ends with chunk r+1 fully reduced */
static int reduce_scatter(struct wl_ctx *w, struct coll *c, uint64_t deadline)
{
	const struct coll_mode_ops *o = c->ops;
	int n = c->n, r = c->r, s, k, ret;

	if (o->next_sum)
		o->next_sum(c, r);
	memcpy(c->out + chunk_off(c, r), c->in + chunk_off(c, r), chunk_len(c, r) * sizeof(float));
	for (s = 0; s < n - 1; s++) {
		float *st = c->stage + (size_t)s * c->chunk;
		int kr = (r - s - 1 + 2 * n) % n;

		k = (r - s + 2 * n) % n;
		if ((ret = o->send(c, c->out + chunk_off(c, k), chunk_len(c, k),
				   (size_t)((char *)st - c->mem), s))) {
			snprintf(w->err, sizeof(w->err), "rank %d: post failed: %s", r, strerror(-ret));
			return ret;
		}
		/* hadamard: the chunk this step's arrival is added to, encoded
		 * while the step is on the wire */
		if (o->next_sum)
			o->next_sum(c, kr);
		if ((ret = o->wait(w, c, s, kr, st, deadline)))
			return ret;
		add_chunk(c, kr, st);
	}
	return 0;
}

/* allgather: step s forwards what arrived the step before (first: the
 * chunk this rank owns), in global steps from g0 */
static int allgather(struct wl_ctx *w, struct coll *c, int g0, uint64_t deadline)
{
	const struct coll_mode_ops *o = c->ops;
	int n = c->n, r = c->r, s, k, ret, own = ag_owner(c);

	if (!g0)
		memcpy(c->out + chunk_off(c, r), c->in + chunk_off(c, r),
		       chunk_len(c, r) * sizeof(float));
	for (s = 0; s < n - 1; s++) {
		int kr = (own - s - 1 + 2 * n) % n;

		k = (own - s + 2 * n) % n;
		if ((ret = o->send(c, c->out + chunk_off(c, k), chunk_len(c, k),
				   (size_t)((char *)(c->out + chunk_off(c, k)) - c->mem), g0 + s))) {
			snprintf(w->err, sizeof(w->err), "rank %d: post failed: %s", r, strerror(-ret));
			return ret;
		}
		/* hadamard: the chunk being forwarded is final, decoded while the
		 * step is on the wire (the send only reads it) */
		if (o->final)
			o->final(c, k);
		if ((ret = o->wait(w, c, g0 + s, kr, c->out + chunk_off(c, kr), deadline)))
			return ret;
	}
	return 0;
}

/* one collective, its RECVs already posted */
static int ring_once(struct wl_ctx *w, struct coll *c)
{
	int ret, right_rank = (c->r + 1) % c->n;
	int rs = c->cfg.op != C_ALLGATHER, ag = c->cfg.op != C_REDUCE_SCATTER;
	uint64_t deadline = wl_now_ns() + c->cfg.op_timeout;

	c->recv_base = c->recvd;
	if (c->cfg.op == C_ALLTOALL)
		return alltoall_once(w, c, deadline);
	/* the right neighbour has posted its RECVs. rc: keep one READY RECV posted
	 * for the next iteration (its next READY cannot come before our sends);
	 * the UC modes repost as READYs complete */
	if ((ret = coll_poll(w, c, 0, right_rank, 0, deadline)))
		return ret;
	c->ready[right_rank]--;
	if (!c->uc &&
	    (ret = coll_post_recv(c, c->qp[right_rank], NULL, 0, WR_READY | (uint64_t)right_rank))) {
		snprintf(w->err, sizeof(w->err), "rank %d: post failed: %s", c->r, strerror(-ret));
		return ret;
	}
	if (c->cfg.op == C_BROADCAST)
		return broadcast_once(w, c, deadline);
	if (rs && (ret = reduce_scatter(w, c, deadline)))
		return ret;
	if (ag && (ret = allgather(w, c, rs ? c->n - 1 : 0, deadline)))
		return ret;
	if (c->ops->finish && (ret = c->ops->finish(w, c, deadline)))
		return ret;
	return coll_poll(w, c, 0, -1, 1, deadline);
}

/* this rank's RECVs for the next iteration are posted: tell the left
 * neighbour (UC modes: every rank, with our timeout estimate) */
static int send_ready(struct coll *c)
{
	int j, ret = 0, left = (c->r + c->n - 1) % c->n;
	uint32_t est = c->uc ? uc_est_us(c) : 0;

	for (j = 0; j < c->n && !ret; j++) {
		struct ibv_send_wr wr = { .wr_id = WR_READY, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		if (j == c->r || (!c->uc && c->cfg.op != C_ALLTOALL && j != left))
			continue;
		if (c->uc) {
			wr.opcode = IBV_WR_SEND_WITH_IMM;
			wr.imm_data = htonl(est);
			ret = -ibv_post_send(c->qp[j], &wr, &bad);
			c->csends += !ret;	/* reaped whenever; never waited for */
		} else {
			wr.wr_id = WR_RC_READY;
			ret = -ibv_post_send(c->qp[j], &wr, &bad);
			c->sends += !ret;	/* reaped with the next iteration's sends */
		}
	}
	return ret;
}

/* READY RECVs posted toward every rank we will hear from */
static int post_ready_recvs(struct coll *c)
{
	int j, i, ret = 0, right = (c->r + 1) % c->n;

	for (j = 0; j < c->n && !ret; j++) {
		if (j == c->r || (!c->uc && c->cfg.op != C_ALLTOALL && j != right))
			continue;
		for (i = 0; i < (int)c->ops->ready_recvs && !ret; i++)
			ret = ctl_recv(c, j, (unsigned int)i);
	}
	return ret;
}

/* the first iteration's RECVs (READYs and data), once */
int coll_prime(struct wl_ctx *w, struct coll *c)
{
	int r;

	if (c->primed)
		return 0;
	if ((r = post_ready_recvs(c)) || (r = post_recvs(c))) {
		snprintf(w->err, sizeof(w->err), "rank %d: post RECV failed: %s", c->r, strerror(-r));
		return r;
	}
	if ((r = guard_rebind(w, c)))
		return r;
	c->primed = 1;
	return 0;
}

int coll_begin(struct wl_ctx *w, struct coll *c)
{
	int r;

	if ((r = coll_prime(w, c)))
		return r;
	if ((r = send_ready(c)))
		snprintf(w->err, sizeof(w->err), "rank %d: post READY failed: %s", c->r, strerror(-r));
	return r;
}

int coll_step(struct wl_ctx *w, struct coll *c, uint64_t *ns)
{
	uint64_t t0 = wl_now_ns(), tr;
	int r;

	c->it_lost = c->it_expected = 0;
	c->st.step_codec_ns = 0;
	c->enc_done = c->dec_done = 0;
	if (c->ops->begin)	/* hadamard: the input into the wire domain */
		c->ops->begin(c);
	tr = wl_now_ns();
	if ((r = ring_once(w, c)))
		return r;
	c->st.step_transport_ns = wl_now_ns() - tr;
	if (c->prev)
		memcpy(c->prev, c->out, c->count * sizeof(float));
	if (c->ops->end)	/* and the output back */
		c->ops->end(c);
	c->st.codec_ns += c->st.step_codec_ns;
	c->st.step_lost = c->it_lost;
	*ns = wl_now_ns() - t0;
	return 0;
}

int coll_next(struct wl_ctx *w, struct coll *c, int clear)
{
	int r;

	if (clear)	/* the next one is checked: nothing stale may pass */
		memset(c->out, 0, c->count * sizeof(float));
	if ((r = post_recvs(c))) {
		snprintf(w->err, sizeof(w->err), "rank %d: post RECV failed: %s", c->r, strerror(-r));
		return r;
	}
	/* the windows bound before the left neighbour is told to write */
	if ((r = guard_rebind(w, c)))
		return r;
	if ((r = send_ready(c))) {
		snprintf(w->err, sizeof(w->err), "rank %d: post READY failed: %s", c->r, strerror(-r));
		return r;
	}
	return 0;
}

void grad_err_add(struct grad_err *g, const float *got, const double *exact, size_t n)
{
	double se = 0, sx = 0, sg = 0, dot = 0, linf = 0, xinf = 0, nmse, cs;
	size_t i;

	for (i = 0; i < n; i++) {
		double d = (double)got[i] - exact[i];

		se += d * d;
		sx += exact[i] * exact[i];
		sg += (double)got[i] * (double)got[i];
		dot += (double)got[i] * exact[i];
		if (fabs(d) > linf)
			linf = fabs(d);
		if (fabs(exact[i]) > xinf)
			xinf = fabs(exact[i]);
	}
	nmse = sx > 0 ? se / sx : se;
	cs = sx > 0 && sg > 0 ? dot / sqrt(sx * sg) : (se == 0 ? 1 : 0);
	if (!g->n++) {
		g->cos_min = cs;
		g->nmse_max = g->linf_max = g->linf_rel_max = 0;
	}
	g->nmse_sum += nmse;
	g->linf_sum += linf;
	g->cos_sum += cs;
	if (nmse > g->nmse_max)
		g->nmse_max = nmse;
	if (linf > g->linf_max)
		g->linf_max = linf;
	if (xinf > 0 && linf / xinf > g->linf_rel_max)
		g->linf_rel_max = linf / xinf;
	if (cs < g->cos_min)
		g->cos_min = cs;
}

json_t *grad_err_json(const struct grad_err *g)
{
	double n = g->n ? (double)g->n : 1;

	return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "samples", (json_int_t)g->n,
			 "nmse_mean", g->nmse_sum / n, "nmse_max", g->nmse_max, "linf_mean",
			 g->linf_sum / n, "linf_max", g->linf_max,
			 "linf_rel_max", g->linf_rel_max, "cosine_mean", g->n ? g->cos_sum / n : 1.0,
			 "cosine_min", g->n ? g->cos_min : 1.0);
}
