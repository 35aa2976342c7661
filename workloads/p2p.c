// SPDX-License-Identifier: MIT
/*
 * p2p: perftest-style point-to-point tests between two agents.
 *
 * lat/write (ib_write_lat's method): client and server each own a buffer the
 * other WRITEs into. The client stamps t0, WRITEs iteration number k into the
 * last byte of the server's buffer, the server busy-polls that byte, WRITEs k
 * back, the client sees it and stamps t1. Latency = (t1 - t0) / 2, recorded
 * in a log-linear histogram (lib/hist.h) per iteration: the agent ships the
 * histogram, the controller computes percentiles.
 *
 * The end is a handshake by construction: the server's last WRITE is
 * complete (ACKed) before it returns, and the client returns only after its
 * last WRITE's completion, so no packet is in flight when the controller
 * destroys the QPs (rxe with retry_cnt 7 would retry an un-ACKed one
 * forever, see DESIGN.md "Hang trap").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "wl.h"
#include "../lib/hist.h"

enum p2p_test { P2P_LAT };
enum p2p_op { P2P_WRITE };

static const char *const tests[] = { "lat", NULL };
static const char *const ops[] = { "write", NULL };

struct p2p_cfg {
	int test;
	int op;
	uint64_t size;
	uint64_t iters;
	uint64_t warmup;
	uint64_t op_timeout;	/* ns: give up when the peer is silent this long */
	uint64_t qp_timeout;
	uint64_t retry_cnt;
	uint64_t rnr_retry;
};

#define O(f) offsetof(struct p2p_cfg, f)
static const struct opt p2p_opts[] = {
	{ "test", OPT_ENUM, O(test), 0, 0, "lat", tests, "test: lat" },
	{ "op", OPT_ENUM, O(op), 0, 0, "write", ops, "RDMA operation: write" },
	{ "size", OPT_SIZE, O(size), 1, 1 << 20, "2", NULL, "message size in bytes" },
	{ "iters", OPT_UINT, O(iters), 1, 100000000, "1000", NULL, "measured iterations" },
	{ "warmup", OPT_UINT, O(warmup), 0, 1000000, "0", NULL, "unmeasured iterations first" },
	{ "op_timeout", OPT_TIME, O(op_timeout), 1000000, 3600000000000ULL, "10s", NULL,
	  "fail when one iteration takes longer" },
	{ "qp_timeout", OPT_UINT, O(qp_timeout), 0, 31, "14", NULL,
	  "RC ACK timeout exponent: 4.096 us * 2^n" },
	{ "retry_cnt", OPT_UINT, O(retry_cnt), 0, 7, "7", NULL, "RC retries (7 = infinite on rxe)" },
	{ "rnr_retry", OPT_UINT, O(rnr_retry), 0, 7, "7", NULL, "RNR retries (7 = infinite)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};
#undef O

struct p2p {
	struct p2p_cfg cfg;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;		/* [0, size): the peer writes here; [size, 2 size): we send from */
	uint32_t psn;
	uint32_t max_inline;
	struct vb_ep peer;
	struct hist hist;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void p2p_destroy(struct wl_ctx *c)
{
	struct p2p *p = c->priv;

	if (!p)
		return;
	if (p->qp)
		ibv_destroy_qp(p->qp);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	free(p->buf);
	free(p);
	c->priv = NULL;
}

static int p2p_prepare(struct wl_ctx *c, const json_t *opts, json_t **ep)
{
	struct ibv_qp_init_attr qia;
	struct ibv_port_attr pa;
	struct vb_ep me;
	struct p2p *p;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->priv = p;
	r = opt_apply_json(p2p_opts, &p->cfg, opts, c->err, sizeof(c->err));
	if (r)
		goto fail;
	r = -ENOMEM;
	if (posix_memalign((void **)&p->buf, 4096, 2 * p->cfg.size))
		goto fail;
	memset(p->buf, 0, 2 * p->cfg.size);
	p->pd = ibv_alloc_pd(c->dev->ctx);
	if (!p->pd) {
		snprintf(c->err, sizeof(c->err), "%s: failed to allocate PD: %s", c->dev->name,
			 strerror(errno));
		goto fail;
	}
	p->cq = ibv_create_cq(c->dev->ctx, 256, NULL, NULL, 0);
	if (!p->cq) {
		snprintf(c->err, sizeof(c->err), "%s: failed to create CQ: %s", c->dev->name,
			 strerror(errno));
		goto fail;
	}
	p->mr = ibv_reg_mr(p->pd, p->buf, 2 * p->cfg.size,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!p->mr) {
		snprintf(c->err, sizeof(c->err), "%s: failed to register %llu bytes: %s",
			 c->dev->name, (unsigned long long)(2 * p->cfg.size), strerror(errno));
		goto fail;
	}
	memset(&qia, 0, sizeof(qia));
	qia.send_cq = p->cq;
	qia.recv_cq = p->cq;
	qia.qp_type = IBV_QPT_RC;
	qia.cap.max_send_wr = 128;
	qia.cap.max_recv_wr = 1;
	qia.cap.max_send_sge = 1;
	qia.cap.max_recv_sge = 1;
	qia.cap.max_inline_data = 236;	/* perftest's default for latency tests */
	p->qp = ibv_create_qp(p->pd, &qia);
	if (!p->qp) {
		qia.cap.max_inline_data = 0;
		p->qp = ibv_create_qp(p->pd, &qia);
	}
	if (!p->qp) {
		snprintf(c->err, sizeof(c->err), "%s: failed to create RC QP: %s", c->dev->name,
			 strerror(errno));
		goto fail;
	}
	p->max_inline = qia.cap.max_inline_data;
	r = vb_port_query(c->dev, &pa);
	if (r) {
		snprintf(c->err, sizeof(c->err), "%s: failed to query port", c->dev->name);
		goto fail;
	}
	if (getrandom(&p->psn, sizeof(p->psn), 0) != sizeof(p->psn))
		p->psn = (uint32_t)now_ns();
	p->psn &= 0xffffff;
	hist_init(&p->hist);
	memset(&me, 0, sizeof(me));
	me.qpn = p->qp->qp_num;
	me.psn = p->psn;
	me.rkey = p->mr->rkey;
	me.addr = (uint64_t)(uintptr_t)p->buf;
	me.len = p->cfg.size;
	me.gid = c->dev->gid;
	me.mtu = pa.active_mtu;
	*ep = vb_ep_to_json(&me);
	return *ep ? 0 : -ENOMEM;
fail:
	if (r == -ENOMEM && !c->err[0])
		snprintf(c->err, sizeof(c->err), "out of memory");
	p2p_destroy(c);
	return r ? r : -EIO;
}

static int p2p_connect(struct wl_ctx *c, const json_t *peer)
{
	struct p2p *p = c->priv;
	struct vb_rc_opts o;
	int r;

	if (vb_ep_from_json(&p->peer, peer)) {
		snprintf(c->err, sizeof(c->err), "malformed peer endpoint");
		return -EINVAL;
	}
	if (p->peer.len < p->cfg.size) {
		snprintf(c->err, sizeof(c->err), "peer buffer (%llu bytes) smaller than size %llu",
			 (unsigned long long)p->peer.len, (unsigned long long)p->cfg.size);
		return -EINVAL;
	}
	o.timeout = (uint8_t)p->cfg.qp_timeout;
	o.retry_cnt = (uint8_t)p->cfg.retry_cnt;
	o.rnr_retry = (uint8_t)p->cfg.rnr_retry;
	o.max_rd_atomic = 1;
	r = vb_qp_connect(p->qp, c->dev, p->psn, &p->peer, &o);
	if (r)
		snprintf(c->err, sizeof(c->err), "qp 0x%x: connect to qp 0x%x failed: %s",
			 p->qp->qp_num, p->peer.qpn, strerror(-r));
	return r;
}

/* reap send completions; -EIO with a message on a failed one */
static int reap(struct wl_ctx *c, struct p2p *p, uint64_t *outstanding)
{
	struct ibv_wc wc[16];
	int n, i;

	n = ibv_poll_cq(p->cq, 16, wc);
	if (n < 0) {
		snprintf(c->err, sizeof(c->err), "cq: poll failed");
		return -EIO;
	}
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			snprintf(c->err, sizeof(c->err), "qp 0x%x: WRITE completed with %s",
				 p->qp->qp_num, ibv_wc_status_str(wc[i].status));
			return -EIO;
		}
	}
	*outstanding -= (uint64_t)n;
	return 0;
}

static int post_write(struct wl_ctx *c, struct p2p *p, uint8_t seq)
{
	char *tx = p->buf + p->cfg.size;
	struct ibv_sge sge = {
		.addr = (uintptr_t)tx, .length = (uint32_t)p->cfg.size, .lkey = p->mr->lkey
	};
	struct ibv_send_wr wr = { 0 }, *bad;
	int r;

	tx[p->cfg.size - 1] = (char)seq;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED | (p->cfg.size <= p->max_inline ? IBV_SEND_INLINE : 0);
	wr.wr.rdma.remote_addr = p->peer.addr;
	wr.wr.rdma.rkey = p->peer.rkey;
	r = ibv_post_send(p->qp, &wr, &bad);
	if (r) {
		snprintf(c->err, sizeof(c->err), "qp 0x%x: post WRITE failed: %s", p->qp->qp_num,
			 strerror(r));
		return -r;
	}
	return 0;
}

/* busy-poll the last byte of our receive buffer (what ib_write_lat does) */
static int wait_byte(struct wl_ctx *c, struct p2p *p, uint8_t seq, uint64_t *outstanding)
{
	volatile uint8_t *rx = (volatile uint8_t *)p->buf + p->cfg.size - 1;
	uint64_t start = 0;
	unsigned int spin = 0;
	int r;

	while (*rx != seq) {
		if (++spin & 1023)
			continue;
		if (*outstanding && (r = reap(c, p, outstanding)))
			return r;
		if (*c->stop) {
			snprintf(c->err, sizeof(c->err), "stopped");
			return -EINTR;
		}
		if (!start)
			start = now_ns();
		else if (now_ns() - start > p->cfg.op_timeout) {
			snprintf(c->err, sizeof(c->err),
				 "qp 0x%x: no WRITE from the peer within %.1f s", p->qp->qp_num,
				 (double)p->cfg.op_timeout / 1e9);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

static int p2p_run(struct wl_ctx *c, json_t **result)
{
	struct p2p *p = c->priv;
	uint64_t i, total = p->cfg.warmup + p->cfg.iters, outstanding = 0, t0, t1, start, end;
	uint64_t deadline;
	int r = 0;

	start = now_ns();
	for (i = 0; i < total; i++) {
		uint8_t seq = (uint8_t)(i % 255 + 1);

		if (c->role == WL_SERVER && (r = wait_byte(c, p, seq, &outstanding)))
			goto out;
		while (outstanding >= 64 && !(r = reap(c, p, &outstanding)))
			;
		if (r)
			goto out;
		t0 = now_ns();
		r = post_write(c, p, seq);
		if (r)
			goto out;
		outstanding++;
		if (c->role == WL_CLIENT) {
			r = wait_byte(c, p, seq, &outstanding);
			if (r)
				goto out;
			t1 = now_ns();
			if (i >= p->cfg.warmup)
				hist_record(&p->hist, (t1 - t0) / 2);
		}
	}
	end = now_ns();
	/* closing handshake: every WRITE of ours is ACKed before we return */
	deadline = now_ns() + p->cfg.op_timeout;
	while (outstanding && !(r = reap(c, p, &outstanding))) {
		if (now_ns() > deadline) {
			snprintf(c->err, sizeof(c->err), "qp 0x%x: %llu WRITEs never completed",
				 p->qp->qp_num, (unsigned long long)outstanding);
			r = -ETIMEDOUT;
			break;
		}
	}
out:
	if (r)
		return r;
	*result = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:o}", "test", tests[p->cfg.test], "op",
			    ops[p->cfg.op], "role", c->role == WL_CLIENT ? "client" : "server",
			    "size", (json_int_t)p->cfg.size, "iters", (json_int_t)p->cfg.iters,
			    "elapsed_ns", (json_int_t)(end - start), "inline",
			    (json_int_t)(p->cfg.size <= p->max_inline), "lat_ns",
			    c->role == WL_CLIENT ? hist_to_json(&p->hist) : json_null());
	return *result ? 0 : -ENOMEM;
}

const struct wl_ops wl_p2p = {
	.name = "p2p",
	.opts = p2p_opts,
	.prepare = p2p_prepare,
	.connect = p2p_connect,
	.run = p2p_run,
	.destroy = p2p_destroy,
};
