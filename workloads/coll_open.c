// SPDX-License-Identifier: MIT
/*
 * Opening a collective (coll_int.h): its mode's operations chosen once,
 * the configuration checked, the buffer laid out and registered, one RC
 * QP per peer (and a UC one in the lossy modes) and the connections;
 * closing it. The ring itself is coll.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <fcntl.h>
#include "coll_int.h"

/* by enum rtb_mode */
static const struct coll_mode_ops *const mode_ops[RTB_MODE_N] = {
	[M_RC] = &coll_rc_ops,
	[M_LOSSY] = &coll_lossy_ops,
	[M_HADAMARD] = &coll_hadamard_ops,
	[M_EC] = &coll_ec_ops,
	[M_SR] = &coll_sr_ops,
};

void coll_close(struct coll *c)
{
	int j;

	if (!c)
		return;
	/* windows first: a bound one holds its QP */
	for (j = 0; j < 2 * MAX_RANKS; j++) {
		if (c->mw[j][0])
			ibv_dealloc_mw(c->mw[j][0]);
		if (c->mw[j][1])
			ibv_dealloc_mw(c->mw[j][1]);
	}
	for (j = 0; j < MAX_RANKS; j++) {
		if (c->qp[j])
			ibv_destroy_qp(c->qp[j]);
		if (c->dq[j])
			ibv_destroy_qp(c->dq[j]);
	}
	if (c->lq)
		ibv_destroy_qp(c->lq);
	if (c->ops && c->ops->close)
		c->ops->close(c);
	free(c->got);
	free(c->garr);
	free(c->swr);
	free(c->sge);
	free(c->rwr);
	free(c->order);
	free(c->mag);
	free(c->prev);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->ch)
		ibv_destroy_comp_channel(c->ch);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	free(c->mem);
	free(c);
}

static int create_uc(struct wl_ctx *w, struct coll *c, int j, json_t *e, enum ibv_mtu mtu,
		     uint32_t wr)
{
	struct ibv_qp_init_attr dqa = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct vb_ep me = { 0 };

	c->dq[j] = ibv_create_qp(c->pd, &dqa);
	if (!c->dq[j]) {
		snprintf(w->err, sizeof(w->err), "%s: failed to create UC QP (%u WRs): %s",
			 w->dev->name, wr, strerror(errno));
		return -errno;
	}
	c->dpsn[j] = c->psn[j] ^ 0x5a5a5a;
	me.qpn = c->dq[j]->qp_num;
	me.psn = c->dpsn[j];
	me.gid = w->dev->gid;
	me.mtu = mtu;
	me.rkey = c->mr->rkey;
	me.addr = (uint64_t)(uintptr_t)c->mem;
	me.len = c->memlen;
	json_object_set_new(e, "uc", vb_ep_to_json(&me));
	if (c->cfg.guard) {	/* our windows, for the left neighbour's writes */
		json_t *a = json_array();
		int g;

		for (g = 0; g < 2 * (c->n - 1); g++)
			json_array_append_new(a, json_pack("[II]", (json_int_t)(c->mw[g][0] ?
									c->mw[g][0]->rkey : 0),
							   (json_int_t)(c->mw[g][1] ?
									c->mw[g][1]->rkey : 0)));
		json_object_set_new(e, "mw", a);
	}
	return 0;
}

static int check_cfg(struct wl_ctx *w, const struct coll_cfg *c)
{
	char *e = w->err;
	size_t n = sizeof(w->err);

	if (c->rank >= c->nranks)
		snprintf(e, n, "rank %llu of %llu ranks", (unsigned long long)c->rank,
			 (unsigned long long)c->nranks);
	else if (c->op == C_BROADCAST && c->root >= c->nranks)
		snprintf(e, n, "root %llu of %llu ranks", (unsigned long long)c->root,
			 (unsigned long long)c->nranks);
	else if (c->op == C_ALLTOALL && c->size % (sizeof(float) * c->nranks))
		snprintf(e, n, "alltoall: size %llu is not a multiple of 4 x %llu ranks",
			 (unsigned long long)c->size, (unsigned long long)c->nranks);
	else if (c->mode < 0 || c->mode >= RTB_MODE_N)
		snprintf(e, n, "mode %d: not a recovery mode", c->mode);
	else if (mode_ops[c->mode]->uc && c->op != C_ALLREDUCE && c->op != C_REDUCE_SCATTER &&
		 c->op != C_ALLGATHER)
		snprintf(e, n, "mode %s: allreduce, reduce_scatter, allgather only", coll_modes[c->mode]);
	else if (c->step_timeout_min > c->step_timeout_max)
		snprintf(e, n, "step_timeout_min is above step_timeout_max");
	else
		return mode_ops[c->mode]->check ? mode_ops[c->mode]->check(c, e, n) : 0;
	return -EINVAL;
}

/* sizes: elements, chunks and, for the UC modes, pieces, parity and the
 * receive slots a step needs (*need); -EINVAL when too many */
static int coll_layout(struct wl_ctx *w, struct coll *c, const struct ibv_port_attr *pa,
		       size_t *par, size_t *need)
{
	const struct coll_cfg *cfg = &c->cfg;

	c->n = (int)cfg->nranks;
	c->r = (int)cfg->rank;
	c->uc = c->ops->uc;
	c->ucount = cfg->size / sizeof(float);
	if (c->ops->layout) {
		c->ops->layout(c);
	} else {
		c->count = c->ucount;
		c->chunk = (c->count + (size_t)c->n - 1) / (size_t)c->n;
	}
	if (!c->uc)
		return 0;
	/* one MTU per WRITE_WITH_IMM by default: a loss costs one piece, not the
	 * rest of the message (UC drops a message's tail after a lost packet) */
	c->piece = (128u << pa->active_mtu) / sizeof(float);
	if (cfg->piece && cfg->piece % (128u << pa->active_mtu)) {
		snprintf(w->err, sizeof(w->err), "piece %llu: not a multiple of the MTU (%u bytes)",
			 (unsigned long long)cfg->piece, 128u << pa->active_mtu);
		return -EINVAL;
	}
	if (cfg->piece)	/* several MTUs a message: fewer completions, coarser loss */
		c->piece = cfg->piece / sizeof(float);
	c->st.piece_bytes = c->piece * sizeof(float);
	c->pieces = (c->chunk + c->piece - 1) / c->piece;
	if (c->ops->parity)
		*par = c->ops->parity(c);	/* parity pieces per step */
	c->slots = c->pieces + *par;
	/* an iteration's pieces, plus a step's worth still arriving from the last
	 * one (ec ends a step before its last parity and markers are in) */
	*need = (2 * (size_t)(c->n - 1) + 1) * (c->slots + 2) + 8;
	if (*need > 12000 || c->slots >= MARKER) {
		snprintf(w->err, sizeof(w->err),
			 "mode %s: %zu pieces per iteration, at most 12000 (a smaller size "
			 "or more ranks)", coll_modes[cfg->mode], *need);
		return -EINVAL;
	}
	return 0;
}

/* the registered buffer and its views, the UC bookkeeping */
static int coll_alloc(struct coll *c, size_t par, size_t need)
{
	const struct coll_cfg *cfg = &c->cfg;
	int g;

	c->memlen = (2 * c->count + (size_t)(c->n - 1) * c->chunk +
		     4 * (size_t)(c->n - 1) * par * c->piece + 2 * c->piece) * sizeof(float);
	if (posix_memalign((void **)&c->mem, 4096, c->memlen))
		return -ENOMEM;
	memset(c->mem, 0, c->memlen);
	c->in = (float *)c->mem;
	c->out = c->in + c->count;
	c->stage = c->out + c->count;
	c->prx = c->stage + (size_t)(c->n - 1) * c->chunk;
	c->ptx = c->prx + 2 * (size_t)(c->n - 1) * par * c->piece;
	c->tail = c->ptx + 2 * (size_t)(c->n - 1) * par * c->piece;
	c->zero = c->tail + c->piece;
	c->uin = c->in;
	c->uout = c->out;
	if (!c->uc)
		return 0;
	if (cfg->fill == F_PREVIOUS && !(c->prev = calloc(c->count, sizeof(float))))
		return -ENOMEM;
	c->got = calloc(2 * (size_t)c->n * c->slots, 1);
	c->garr = calloc(2 * (size_t)c->n * (c->groups ? c->groups : 1), sizeof(*c->garr));
	c->swr = calloc(c->slots + 2, sizeof(*c->swr));
	c->sge = calloc(c->slots + 2, sizeof(*c->sge));
	c->rwr = calloc(need, sizeof(*c->rwr));
	c->order = calloc(c->pieces, sizeof(*c->order));
	c->mag = calloc(c->pieces, sizeof(*c->mag));
	if (!c->got || !c->garr || !c->swr || !c->sge || !c->rwr || !c->order || !c->mag)
		return -ENOMEM;
	for (g = 0; g < 2 * (c->n - 1); g++)
		c->step_np[g] = (uint32_t)npieces(c, step_chunk(c, g));
	return 0;
}

/* one RC QP per peer (and a UC one in the lossy modes): the endpoints */
static int coll_qps(struct wl_ctx *w, struct coll *c, const struct ibv_port_attr *pa, size_t need,
		    json_t *eps)
{
	int j, r;

	for (j = 0; j < c->n; j++) {
		struct ibv_qp_init_attr qia = {
			.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 6 * MAX_RANKS, .max_recv_wr = 4 * MAX_RANKS,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct vb_ep me = { 0 };
		json_t *e;

		if (j == c->r) {
			json_array_append_new(eps, json_null());
			continue;
		}
		c->qp[j] = ibv_create_qp(c->pd, &qia);
		if (!c->qp[j]) {
			snprintf(w->err, sizeof(w->err), "%s: failed to create RC QP: %s", w->dev->name,
				 strerror(errno));
			return -errno;
		}
		if (getrandom(&c->psn[j], sizeof(c->psn[j]), 0) != sizeof(c->psn[j]))
			c->psn[j] = (uint32_t)wl_now_ns();
		c->psn[j] &= 0xffffff;
		me.qpn = c->qp[j]->qp_num;
		me.psn = c->psn[j];
		me.gid = w->dev->gid;
		me.mtu = pa->active_mtu;
		e = vb_ep_to_json(&me);
		json_array_append_new(eps, e);
		if (c->uc && (r = create_uc(w, c, j, e, pa->active_mtu,
					    (uint32_t)(need < 64 ? 64 : need))))
			return r;
	}
	return 0;
}

int coll_open(struct wl_ctx *w, const struct coll_cfg *cfg, struct coll **cp, json_t **ep)
{
	struct ibv_port_attr pa;
	size_t par = 0, need = 0;
	struct coll *c;
	json_t *eps = NULL;
	int r;

	*cp = NULL;
	if ((r = check_cfg(w, cfg)))
		return r;
	if ((r = vb_port_query(w->dev, &pa)))
		return r;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	c->ops = mode_ops[cfg->mode];
	if ((r = coll_layout(w, c, &pa, &par, &need)) || (r = coll_alloc(c, par, need)))
		goto fail;
	c->pd = ibv_alloc_pd(w->dev->ctx);
	if (c->pd && c->cfg.wait == W_EVENT) {
		c->ch = ibv_create_comp_channel(w->dev->ctx);
		if (!c->ch || fcntl(c->ch->fd, F_SETFL, fcntl(c->ch->fd, F_GETFL) | O_NONBLOCK)) {
			snprintf(w->err, sizeof(w->err), "%s: completion channel: %s", w->dev->name,
				 strerror(errno));
			r = errno ? -errno : -ENOMEM;
			goto fail;
		}
	}
	c->cq = c->pd ? ibv_create_cq(w->dev->ctx, (int)need + 8 * MAX_RANKS + 64, NULL, c->ch, 0) :
			NULL;
	c->mr = c->cq ? ibv_reg_mr(c->pd, c->mem, c->memlen,
				   IBV_ACCESS_LOCAL_WRITE | (c->uc ? IBV_ACCESS_REMOTE_WRITE : 0) |
					   (c->cfg.guard ? IBV_ACCESS_MW_BIND : 0)) :
			NULL;
	if (!c->mr) {
		snprintf(w->err, sizeof(w->err), "%s: PD/CQ/MR (%zu bytes): %s", w->dev->name, c->memlen,
			 strerror(errno));
		r = errno ? -errno : -ENOMEM;
		goto fail;
	}
	if (c->ops->setup && (r = c->ops->setup(w, c)))
		goto fail;
	if (!c->uc)
		c->cfg.guard = 0;
	if ((r = guard_open(w, c)))
		goto fail;
	eps = json_array();
	if ((r = coll_qps(w, c, &pa, need, eps)))
		goto fail;
	*ep = eps;
	*cp = c;
	return 0;
fail:
	json_decref(eps);
	coll_close(c);
	return r;
}

/* peers: array, entry j = rank j's endpoint meant for this rank (null for self) */
int coll_connect_peers(struct wl_ctx *w, struct coll *c, const json_t *peers)
{
	/* RNR is the flow control's backstop: retry soon (0.01 ms), forever */
	struct vb_rc_opts o = vb_rc_opts_of(&c->cfg.rc, 1);
	struct vb_ep ep;
	int j, r;

	o.min_rnr_timer = 1;

	if (c->uc) {	/* the RC QPs carry READYs only */
		o.timeout = CTL_TIMEOUT;
		o.retry_cnt = 7;
		o.rnr_retry = 7;
	}
	if (!json_is_array(peers) || json_array_size(peers) != (size_t)c->n) {
		snprintf(w->err, sizeof(w->err), "expected %d peer endpoints", c->n);
		return -EINVAL;
	}
	for (j = 0; j < c->n; j++) {
		if (j == c->r)
			continue;
		if (vb_ep_from_json(&ep, json_array_get(peers, (size_t)j))) {
			snprintf(w->err, sizeof(w->err), "malformed endpoint of rank %d", j);
			return -EINVAL;
		}
		r = vb_qp_connect(c->qp[j], w->dev, c->psn[j], &ep, &o);
		if (!r && c->uc) {
			if (vb_ep_from_json(&c->peer_data[j],
					    json_object_get(json_array_get(peers, (size_t)j), "uc"))) {
				snprintf(w->err, sizeof(w->err), "rank %d: no UC endpoint", j);
				return -EINVAL;
			}
			if (c->peer_data[j].len != c->memlen) {
				snprintf(w->err, sizeof(w->err),
					 "rank %d: buffer of %llu bytes, ours %zu (different options?)",
					 j, (unsigned long long)c->peer_data[j].len, c->memlen);
				return -EINVAL;
			}
			r = vb_qp_connect(c->dq[j], w->dev, c->dpsn[j], &c->peer_data[j], &o);
			if (!r && c->cfg.guard && j == (c->r + 1) % c->n &&
			    (r = guard_peer_windows(w, c, json_array_get(peers, (size_t)j))))
				return r;
		}
		if (r) {
			snprintf(w->err, sizeof(w->err), "rank %d: connect to rank %d failed: %s", c->r, j,
				 strerror(-r));
			return r;
		}
	}
	if (c->lq) {	/* the guard's revoke QP, to itself (no packet ever leaves it) */
		struct vb_ep self = { .qpn = c->lq->qp_num, .psn = c->psn[(c->r + 1) % c->n],
				      .gid = w->dev->gid, .mtu = c->peer_data[(c->r + 1) % c->n].mtu };

		if ((r = vb_qp_connect(c->lq, w->dev, self.psn, &self, &o))) {
			snprintf(w->err, sizeof(w->err), "rank %d: the guard's RC QP: %s", c->r,
				 strerror(-r));
			return r;
		}
	}
	/*
	 * The first iteration's RECVs go in now, not at the start: the
	 * controller connects every rank before it starts any, so no READY or
	 * data can then meet an empty receive queue (RNR stays a backstop).
	 * Posted at the start instead, a rank started last met its neighbour's
	 * READY with an RNR NAK; under a 0.6-CPU quota on qemu, where the
	 * controller took long between starts, node2 sent 164 RNR NAKs in
	 * one side-by-side run, and the rc arm failed at that rank (SEND:
	 * remote operation error, or its RECV: local QP operation error) in
	 * two runs of two (one of six in an earlier session). Now: no RNR.
	 */
	return coll_prime(w, c);
}
