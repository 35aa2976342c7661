// SPDX-License-Identifier: MIT
/*
 * rc: the data as SENDs on the RC QPs into RECVs posted ahead of time; the
 * NIC retransmits (go-back-N on rxe). A neighbour's messages arrive in
 * order and the receive queue is FIFO, so each RECV names the slot its
 * message belongs to, and a step is done when the RECVs done reach it.
 */
#include <errno.h>
#include "coll_int.h"

/* every RECV of one ring iteration, in the order the left neighbour sends */
static int rc_recvs(struct coll *c)
{
	int n = c->n, r = c->r, s, k, ret = 0;
	int rs = c->cfg.op != C_ALLGATHER, ag = c->cfg.op != C_REDUCE_SCATTER;
	struct ibv_qp *left = c->qp[(r + n - 1) % n];

	for (s = 0; rs && !ret && s < n - 1; s++) {
		k = (r - s - 1 + 2 * n) % n;	/* reduce-scatter step s: chunk r-s-1 */
		ret = coll_post_recv(c, left, c->stage + (size_t)s * c->chunk, chunk_len(c, k),
				     (uint64_t)s);
	}
	for (s = 0; ag && !ret && s < n - 1; s++) {
		k = (ag_owner(c) - s - 1 + 2 * n) % n;	/* allgather step s: owner-s-1 */
		ret = coll_post_recv(c, left, c->out + chunk_off(c, k), chunk_len(c, k),
				     (uint64_t)(n + s));
	}
	return ret;
}

static int rc_send(struct coll *c, const float *src, size_t len, size_t dst_off, int gstep)
{
	int r = coll_post_send(c, c->qp[(c->r + 1) % c->n], src, len, (uint64_t)gstep);

	(void)dst_off;	/* the RECV posted for it says where */
	c->sends += !r;
	return r;
}

/* the step's RECV is done: the ones before it are (the RQ is FIFO) */
static int rc_wait(struct wl_ctx *w, struct coll *c, int gstep, int k, float *dst,
		   uint64_t deadline)
{
	(void)k;
	(void)dst;
	return coll_poll(w, c, c->recv_base + (uint64_t)gstep + 1, -1, 0, deadline);
}

/* the RC knobs the QPs ran with */
static void rc_stats(const struct coll *c, json_t *o)
{
	json_object_set_new(o, "rc_settings", vb_rc_knobs_json(&c->cfg.rc));
}

const struct coll_mode_ops coll_rc_ops = {
	.ready_recvs = 1,
	.recvs = rc_recvs,
	.send = rc_send,
	.wait = rc_wait,
	.stats = rc_stats,
};
