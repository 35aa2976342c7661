// SPDX-License-Identifier: MIT
/*
 * The UC transport of the lossy modes (lossy, hadamard, ec, sr), after
 * OptiReduce and Celeris; the comment at the top of coll.c says how a
 * step ends. Here: a step's pieces as chained WRITE_WITH_IMMs, their
 * arrival bookkeeping, the agreed timeout, the wait that gives up on
 * what is missing, and the memory-window guard against late writes. The
 * lossy mode is this transport and nothing more (coll_lossy_ops, below).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "coll_int.h"


/* batch_now: one timestamp per polled batch (a clock read costs ~1.4 us under
 * TCG's hpet: not once per piece) */
void uc_arrival(struct coll *c, uint32_t imm, uint64_t *batch_now)
{
	uint32_t it = imm >> 24, gstep = (imm >> 16) & 0xff, pc = imm & 0xffff;
	uint8_t *g;

	c->recv_posted--;
	if (gstep >= 2 * (uint32_t)(c->n - 1))
		return;
	if (it != (c->iter & 0xff)) {	/* late, from an iteration already given up on */
		c->st.late_landed += pc != MARKER && c->live;
		return;
	}
	if (!*batch_now)
		*batch_now = wl_now_ns();
	if (pc == MARKER) {
		c->marker[gstep] = 1;
		c->last_arrival[gstep] = *batch_now;
		return;
	}
	if (pc >= c->slots)
		return;
	g = got_of(c, (int)gstep);
	if (g[pc])
		return;
	if (c->ended[gstep]) {	/* its step was given up on: it landed after all */
		c->st.late_landed++;
		return;
	}
	g[pc] = 1;
	if (pc < c->pieces)
		c->arrived[gstep]++;
	if (c->ops->arrival)
		c->ops->arrival(c, (int)gstep, pc);
	c->last_arrival[gstep] = *batch_now;
}

int uc_post_recvs(struct coll *c)
{
	int left = (c->r + c->n - 1) % c->n;
	int need = (int)((2 * (size_t)(c->n - 1) + 1) * (c->slots + 2)) + 8;
	struct ibv_recv_wr *bad;
	int k = 0, ret;

	/* RECVs of lost pieces were never used: top up to what one iteration
	 * needs, in one chained call */
	while (c->recv_posted + k < need) {
		c->rwr[k] = (struct ibv_recv_wr){ .wr_id = WR_RECV | WR_LOSSY, .num_sge = 0 };
		if (k)
			c->rwr[k - 1].next = &c->rwr[k];
		k++;
	}
	if (!k)
		return 0;
	ret = -ibv_post_recv(c->dq[left], c->rwr, &bad);
	if (!ret)
		c->recv_posted += k;
	return ret;
}

/* a new iteration's RECVs: its arrivals count from zero */
int uc_recvs(struct coll *c)
{
	c->iter++;
	memset(c->got, 0, 2 * (size_t)c->n * c->slots);
	memset(c->garr, 0, 2 * (size_t)c->n * (c->groups ? c->groups : 1) * sizeof(*c->garr));
	memset(c->arrived, 0, sizeof(c->arrived));
	memset(c->gready, 0, sizeof(c->gready));
	memset(c->marker, 0, sizeof(c->marker));
	memset(c->last_arrival, 0, sizeof(c->last_arrival));
	c->sent_mask = 0;
	memset(c->ended, 0, sizeof(c->ended));
	c->live = !c->cfg.guard;	/* guard: once the windows are bound */
	return uc_post_recvs(c);
}

/* guard: the windows' receive regions: step g's data, [1] its parity (ec) */
static float *step_region(struct coll *c, int g, int t, size_t *len)
{
	int k = step_chunk(c, g);

	if (t) {
		*len = c->groups * c->cfg.ec_m * c->piece;	/* ec only: groups 0 otherwise */
		return c->prx + (size_t)g * c->groups * c->cfg.ec_m * c->piece;
	}
	*len = chunk_len(c, k);
	if (c->cfg.op != C_ALLGATHER && g < c->n - 1)	/* reduce-scatter: a stage slot */
		return c->stage + (size_t)g * c->chunk;
	return c->out + chunk_off(c, k);
}

/* guard: a type 2 memory window per step and region (UC modes) */
int guard_open(struct wl_ctx *w, struct coll *c)
{
	size_t len;
	int g, t;

	for (g = 0; c->cfg.guard && g < 2 * (c->n - 1); g++) {
		for (t = 0; t < 2; t++) {
			step_region(c, g, t, &len);
			if (!len)
				continue;
			if (!(c->mw[g][t] = ibv_alloc_mw(c->pd, IBV_MW_TYPE_2))) {
				snprintf(w->err, sizeof(w->err),
					 "%s: memory window (type 2) for guard=on: %s (guard=off runs "
					 "without: late writes then land)", w->dev->name, strerror(errno));
				return errno ? -errno : -ENOMEM;
			}
		}
	}
	if (c->cfg.guard) {
		/*
		 * The revokes' own RC QP (rxe runs LOCAL_INV on RC QPs only), to
		 * itself and carrying nothing else: on the RC QP to the left
		 * neighbour they completed behind its READYs, and a READY dropped
		 * and resent (20% loss) once held them past op_timeout (CI:
		 * "memory windows not bound in time", 1 run in 30 or so)
		 */
		struct ibv_qp_init_attr la = {
			.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4 * MAX_RANKS + 4, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		if (!(c->lq = ibv_create_qp(c->pd, &la))) {
			snprintf(w->err, sizeof(w->err), "%s: failed to create the guard's RC QP: %s",
				 w->dev->name, strerror(errno));
			return errno ? -errno : -ENOMEM;
		}
	}
	return 0;
}

/* guard: the right neighbour's windows, one pair per step */
int guard_peer_windows(struct wl_ctx *w, struct coll *c, const json_t *ep)
{
	const json_t *a = json_object_get(ep, "mw");
	int g, t;

	if (!json_is_array(a) || json_array_size(a) != (size_t)(2 * (c->n - 1))) {
		snprintf(w->err, sizeof(w->err), "rank %d: no memory windows (guard on one rank only?)",
			 (c->r + 1) % c->n);
		return -EINVAL;
	}
	for (g = 0; g < 2 * (c->n - 1); g++)
		for (t = 0; t < 2; t++)
			c->peer_mw[g][t] = (uint32_t)json_integer_value(
				json_array_get(json_array_get(a, (size_t)g), (size_t)t));
	return 0;
}

/* guard: k work requests as one chained post on qp, the last signaled
 * (guard_wait) */
static int guard_post(struct coll *c, struct ibv_qp *qp, struct ibv_send_wr *wr, int k)
{
	struct ibv_send_wr *bad;
	int i;

	if (!k)
		return 0;
	for (i = 0; i + 1 < k; i++)
		wr[i].next = &wr[i + 1];
	wr[k - 1].next = NULL;
	wr[k - 1].send_flags = IBV_SEND_SIGNALED;
	c->mw_pending++;
	return -ibv_post_send(qp, wr, &bad);
}

/*
 * guard: revoke windows (LOCAL_INV): step g's, or every bound one (g < 0).
 * Posted on the guard's own RC QP (c->lq): rxe runs LOCAL_INV as a local
 * operation on RC QPs only, and a window is revoked from any QP of its PD.
 * Chained, the last signaled (guard_wait).
 */
static int guard_inv(struct coll *c, int g)
{
	int t, k = 0, lo = g < 0 ? 0 : g, hi = g < 0 ? 2 * (c->n - 1) : g + 1;
	struct ibv_send_wr wr[4 * MAX_RANKS];

	for (g = lo; c->cfg.guard && g < hi; g++) {
		for (t = 0; t < 2; t++) {
			if (!c->mw_key[g][t])
				continue;
			wr[k] = (struct ibv_send_wr){ .wr_id = WR_MW, .opcode = IBV_WR_LOCAL_INV };
			wr[k++].invalidate_rkey = c->mw_key[g][t];
			c->mw_key[g][t] = 0;
		}
	}
	return guard_post(c, c->lq, wr, k);
}

/*
 * guard: bind every (free) window again with this iteration's key (once
 * c->iter is the new one), in one chained post on the UC QP from the left
 * neighbour (a type 2 window serves the QP that bound it); the last one
 * signaled (guard_wait). A write of an earlier iteration carries an earlier
 * key: rxe's responder finds no valid window for it and drops it (UC,
 * class E: silently, the QP going on).
 */
static int guard_bind(struct coll *c)
{
	int left = (c->r + c->n - 1) % c->n, g, t, k = 0;
	struct ibv_send_wr wr[4 * MAX_RANKS];
	struct ibv_mw *bound[4 * MAX_RANKS];
	size_t len;
	float *p;
	int r;

	for (g = 0; c->cfg.guard && g < 2 * (c->n - 1); g++) {
		for (t = 0; t < 2; t++) {
			if (!c->mw[g][t])
				continue;
			p = step_region(c, g, t, &len);
			c->mw_key[g][t] = (c->mw[g][t]->rkey & ~0xffu) | (c->iter & 0xff);
			wr[k] = (struct ibv_send_wr){ .wr_id = WR_MW, .opcode = IBV_WR_BIND_MW };
			wr[k].bind_mw.mw = c->mw[g][t];
			wr[k].bind_mw.rkey = c->mw_key[g][t];
			wr[k].bind_mw.bind_info = (struct ibv_mw_bind_info){
				.mr = c->mr, .addr = (uintptr_t)p, .length = len * sizeof(float),
				.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
			bound[k++] = c->mw[g][t];
		}
	}
	if ((r = guard_post(c, c->dq[left], wr, k)))
		return r;
	/* the window's rkey is now the bound one (the next bind names it) */
	while (k--)
		bound[k]->rkey = wr[k].bind_mw.rkey;
	return 0;
}

/* guard: until the binds or revokes posted are done */
static int guard_wait(struct wl_ctx *w, struct coll *c)
{
	uint64_t deadline = wl_now_ns() + c->cfg.op_timeout;
	int r;

	while (c->mw_pending)
		if ((r = coll_poll_pass(w, c, deadline, "memory windows not bound")))
			return r;
	return 0;
}

/* guard: the new iteration's windows, bound before its READY goes out */
int guard_rebind(struct wl_ctx *w, struct coll *c)
{
	int r;

	if (!c->cfg.guard || c->cfg.op == C_BROADCAST || c->cfg.op == C_ALLTOALL)
		return 0;
	if ((r = guard_inv(c, -1)) || (r = guard_wait(w, c)) || (r = guard_bind(c))) {
		if (r != -ETIMEDOUT && r != -EINTR && r != -EIO)
			snprintf(w->err, sizeof(w->err),
				 "rank %d: memory windows: post failed: %s", c->r, strerror(-r));
		return r;
	}
	if ((r = guard_wait(w, c)))
		return r;
	c->live = 1;
	return 0;
}

static int cmp_mag(const void *a, const void *b, void *arg)
{
	const float *mag = arg;
	float x = mag[*(const uint32_t *)a], y = mag[*(const uint32_t *)b];

	return x < y ? 1 : x > y ? -1 : 0;
}

/* guard: the rkey of the right neighbour's window t of step g, this iteration */
uint32_t uc_peer_rkey(const struct coll *c, int g, int t)
{
	int right = (c->r + 1) % c->n;

	if (!c->cfg.guard)
		return c->peer_data[right].rkey;
	return (c->peer_mw[g][t] & ~0xffu) | (c->iter & 0xff);
}

void uc_wr(struct coll *c, int k, const float *src, size_t n, uint64_t dst_off, uint32_t imm,
		  uint32_t rkey)
{
	int right = (c->r + 1) % c->n;

	c->sge[k] = (struct ibv_sge){ .addr = (uintptr_t)src, .length = (uint32_t)(n * sizeof(float)),
				      .lkey = c->mr->lkey };
	c->swr[k] = (struct ibv_send_wr){ .wr_id = WR_LOSSY, .sg_list = n ? &c->sge[k] : NULL,
					  .num_sge = n ? 1 : 0,
					  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM };
	c->swr[k].imm_data = htonl(imm);
	c->swr[k].wr.rdma.remote_addr = c->peer_data[right].addr + dst_off;
	c->swr[k].wr.rdma.rkey = rkey;
	if (k)
		c->swr[k - 1].next = &c->swr[k];
}

/* the k pieces in c->swr, then the step's two end markers (header hdr), in
 * one chained post to the right neighbour; one completion: it frees the SQ
 * slots */
int uc_post_burst(struct coll *c, int k, uint32_t hdr)
{
	struct ibv_send_wr *bad;

	uc_wr(c, k++, NULL, 0, 0, hdr | MARKER, 0);
	uc_wr(c, k++, NULL, 0, 0, hdr | MARKER, 0);
	c->swr[k - 1].next = NULL;
	c->swr[k - 1].send_flags = IBV_SEND_SIGNALED;
	c->sends++;
	return -ibv_post_send(c->dq[(c->r + 1) % c->n], c->swr, &bad);
}

/* one step: our chunk region [src, src + len) to the right neighbour's byte
 * offset dst_off, parity after the data (ec), then two end markers; all in
 * one chained post (on rxe every post is a doorbell system call) */
int uc_send(struct coll *c, const float *src, size_t len, size_t dst_off, int gstep)
{
	int k = 0;
	size_t p, np = (len + c->piece - 1) / c->piece, q;
	uint32_t hdr = ((c->iter & 0xff) << 24) | ((uint32_t)gstep << 16);
	uint32_t rkey = uc_peer_rkey(c, gstep, 0);	/* the step's window, this iteration */

	c->sent_src[gstep] = src;	/* sr: what a NACK's resends come from */
	c->sent_len[gstep] = len;
	c->sent_off[gstep] = dst_off;
	c->sent_mask |= 1u << gstep;
	for (p = 0; p < np; p++)
		c->order[p] = (uint32_t)p;
	if (c->cfg.priority == P_MAGNITUDE && np > 1) {
		/* Celeris-style: the pieces that carry the most go first, so a step cut
		 * short by its timeout loses the least */
		for (p = 0; p < np; p++) {
			size_t e, hi = len - p * c->piece < c->piece ? len - p * c->piece : c->piece;
			float s = 0;

			for (e = 0; e < hi; e++)
				s += fabsf(src[p * c->piece + e]);
			c->mag[p] = s;
		}
		qsort_r(c->order, np, sizeof(*c->order), cmp_mag, c->mag);
	}
	for (q = 0; q < np; q++, k++) {
		p = c->order[q];
		uc_wr(c, k, src + p * c->piece,
		      len - p * c->piece < c->piece ? len - p * c->piece : c->piece,
		      dst_off + p * c->piece * sizeof(float), hdr | (uint32_t)p, rkey);
	}
	if (c->ops->more_wrs)	/* ec: the parity */
		k = c->ops->more_wrs(c, src, np, len, gstep, k);
	return uc_post_burst(c, k, hdr);
}

/* this rank's timeout estimate, us: timeout_mult x its step-time EWMA */
uint32_t uc_est_us(const struct coll *c)
{
	double e = c->ewma_ns * (double)c->cfg.timeout_mult_ppm / 1e6 / 1e3;

	return e < (double)CTL_EST_MAX ? (uint32_t)e : CTL_EST_MAX;
}

/* min(median of the ranks' estimates, cap), at least step_timeout_min */
static uint64_t agreed_timeout(struct coll *c)
{
	uint64_t v[MAX_RANKS], t;
	int i, j, m = 0;

	c->est_us[c->r] = uc_est_us(c);
	for (i = 0; i < c->n; i++) {
		if (!c->est_us[i])
			continue;
		for (j = m++; j > 0 && v[j - 1] > c->est_us[i]; j--)
			v[j] = v[j - 1];
		v[j] = c->est_us[i];
	}
	t = m ? (m & 1 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2) * 1000 : c->cfg.step_timeout_max;
	if (t > c->cfg.step_timeout_max)
		t = c->cfg.step_timeout_max;
	if (t < c->cfg.step_timeout_min)
		t = c->cfg.step_timeout_min;
	return t;
}

/* a step of need pieces begins (lossy and sr): counted; the agreed timeout */
uint64_t uc_step_begin(struct coll *c, size_t need)
{
	uint64_t agreed = agreed_timeout(c);

	c->st.agreed_timeout_ns = agreed;
	c->st.steps++;
	c->st.pieces_expected += need;
	c->it_expected += need;
	return agreed;
}

/* when a step that began at t0 gives up on what is missing: past the
 * agreed timeout with the link idle for as long again (the end markers were
 * lost, or the peer went quiet); nothing at all yet: a late sender is not a
 * loss, wait to the cap (t0 + step_timeout_max) */
uint64_t uc_giveup_at(const struct coll *c, int gstep, uint64_t t0, uint64_t agreed)
{
	uint64_t hard = t0 + c->cfg.step_timeout_max, idle, dl;

	if (!c->arrived[gstep])
		return hard;
	idle = c->last_arrival[gstep] +
	       (agreed > c->cfg.step_timeout_min ? agreed : c->cfg.step_timeout_min);
	dl = t0 + agreed > idle ? t0 + agreed : idle;
	return dl < hard ? dl : hard;
}

/* the step's time (its last arrival, as polled), extrapolated to all of it
 * when pieces are missing, into the EWMA the timeout estimate comes from */
void uc_step_ewma(struct coll *c, int gstep, uint64_t t0, size_t need)
{
	double d, a = (double)c->cfg.ewma_ppm / 1e6;

	if (!c->arrived[gstep] || c->last_arrival[gstep] <= t0)
		return;
	d = (double)(c->last_arrival[gstep] - t0) * (double)need / (double)c->arrived[gstep];
	c->ewma_ns = c->ewma_ns ? (1 - a) * c->ewma_ns + a * d : d;
}

/*
 * Wait for step gstep (chunk k into [dst, dst + len)), as the comment at the
 * top says; then rebuild (ec), fill what is still missing (zero or the
 * previous value), and update this rank's estimate.
 */
int uc_wait(struct wl_ctx *w, struct coll *c, int gstep, int k, float *dst,
		   uint64_t deadline)
{
	uint8_t *g = got_of(c, gstep);
	size_t need = npieces(c, k), p, len = chunk_len(c, k);
	uint64_t t0, now, dl, agreed;
	unsigned int spin = 0;
	int r, timed_out = 0;

	(void)deadline;	/* a step ends by its own timeouts */
	t0 = wl_now_ns();
	agreed = uc_step_begin(c, need);
	for (;;) {
		if (c->arrived[gstep] >= need ||
		    (c->ops->enough && c->ops->enough(c, gstep, need)))
			break;
		now = wl_now_ns();
		if (c->marker[gstep] && now - c->last_arrival[gstep] >= c->cfg.idle_grace) {
			c->st.marker_ends++;
			break;
		}
		dl = uc_giveup_at(c, gstep, t0, agreed);	/* then the rest is lost */
		if (now >= dl) {
			/* a last look at the CQ first: the deadline can have passed
			 * while this rank was not running (a busy host: the sleep
			 * below returns late), with the pieces already there */
			uint32_t had = c->arrived[gstep];
			uint8_t had_marker = c->marker[gstep];

			if ((r = coll_poll(w, c, 0, -1, 0, 0)))
				return r;
			if (c->arrived[gstep] != had || c->marker[gstep] != had_marker) {
				c->st.late_looks++;	/* it was not idle: wait on */
				continue;
			}
			timed_out = 1;
			c->st.silent_steps += !c->arrived[gstep];
			break;
		}
		/* one pass over the CQ, then (if it was empty) maybe a sleep till
		 * dl, or the end of the idle grace once the marker is in */
		if (c->marker[gstep] && c->last_arrival[gstep] + c->cfg.idle_grace < dl)
			dl = c->last_arrival[gstep] + c->cfg.idle_grace;
		if ((r = coll_poll(w, c, 0, -1, 0, dl)))
			return r;
		if (!(++spin & 63) && *w->stop)
			return -EINTR;
	}
	c->st.timeouts += (uint64_t)timed_out;
	uc_step_ewma(c, gstep, t0, need);
	if (c->arrived[gstep] >= need)
		return 0;
	/* what is missing stays out from now on, late or not */
	if ((r = guard_inv(c, gstep))) {
		snprintf(w->err, sizeof(w->err), "rank %d: revoke memory window: post failed: %s",
			 c->r, strerror(-r));
		return r;
	}
	if ((r = guard_wait(w, c)))
		return r;
	c->st.revoked += (uint64_t)c->cfg.guard;
	c->ended[gstep] = 1;
	if (c->ops->rebuild)
		c->st.recovered_pieces += c->ops->rebuild(c, gstep, dst, need, len);
	for (p = 0; p < need; p++) {
		size_t n = len - p * c->piece < c->piece ? len - p * c->piece : c->piece;

		if (g[p])
			continue;
		c->st.lost_pieces++;
		c->st.lost_bytes += n * sizeof(float);
		c->it_lost++;
		if (!c->prev)
			memset(dst + p * c->piece, 0, n * sizeof(float));
		else if (dst >= c->out && dst < c->out + c->count)	/* allgather */
			memcpy(dst + p * c->piece, c->prev + (dst - c->out) + p * c->piece,
			       n * sizeof(float));
	}
	return 0;
}

const struct coll_mode_ops coll_lossy_ops = {
	.uc = 1,
	.ready_recvs = READY_RECVS,
	.recvs = uc_recvs,
	.send = uc_send,
	.wait = uc_wait,
};
