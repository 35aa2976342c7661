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
 * lat/send (ib_send_lat): the same ping-pong with SEND into pre-posted RECVs;
 * half the round trip. lat/read (ib_read_lat) and lat/cas|faa
 * (ib_atomic_lat, 8 bytes): the client issues the operation and waits for
 * its completion; the whole round trip (as perftest reports it). qp uc runs
 * write and send over UC (no ACKs, no retransmission).
 * bw/write|read|send (ib_*_bw): the client keeps tx_depth operations in
 * flight for iters operations; bandwidth = bytes / elapsed, plus the message
 * rate; the server (SEND) keeps RECVs posted.
 *
 * The end is a handshake by construction: every operation of either side is
 * complete (ACKed) before run() returns, and a SEND server returns only
 * after the last message arrived, so no packet is in flight when the
 * controller destroys the QPs (rxe with retry_cnt 7 would retry an un-ACKed
 * one forever, see HACKING.md "Hang trap").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "wl.h"
#include "opts.h"
#include "../lib/hist.h"

static const enum ibv_wr_opcode wr_opcode[] = { IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_SEND,
						IBV_WR_ATOMIC_CMP_AND_SWP,
						IBV_WR_ATOMIC_FETCH_AND_ADD };
static const enum ibv_qp_type qp_type_of[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
#define GRH 40	/* a UD RECV buffer starts with the GRH */

/* READ and atomics: the requester waits for the responder's NIC */
static int one_sided(int op)
{
	return op == P2P_READ || op == P2P_CAS || op == P2P_FAA;
}

#define RECV_RING 128	/* RECVs kept posted by a SEND receiver */
/*
 * Completions cost CPU (in rxe: a kernel round through the completer), so
 * like perftest only every CQ_MOD-th operation (and the last) asks for one;
 * it stands for the unsignaled ones before it.
 */
#define CQ_MOD 16



struct p2p {
	struct p2p_cfg cfg;
	struct vb_rc rc;
	struct ibv_cq *cq;	/* shorthands for rc's */
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;		/* [0, size): the peer writes/sends here; [size, 2 size): we send from */
	uint64_t recvd;		/* SEND receiver: messages received */
	uint64_t sends_done;	/* completions of our own operations */
	uint64_t unsignaled;	/* posted since the last signaled one */
	uint64_t cq_mod;	/* signal every cq_mod-th: CQ_MOD, at most tx_depth */
	uint64_t timer_ns;	/* what one clock_gettime costs here */
	uint32_t psn;
	uint32_t max_inline;
	struct vb_ep peer;
	struct ibv_ah *ah;	/* UD: the peer's address */
	struct hist hist;
};

/*
 * A measured interval t1 - t0 contains about one clock_gettime() call (the
 * end of the first, the start of the second). With a TSC clocksource that is
 * ~20 ns, but a VM under TCG runs on hpet, where one call is an emulated
 * MMIO read of ~1.5 us. perftest reads the TSC directly; to measure the same
 * thing, the median cost of a call, measured here, is taken off.
 */
static uint64_t timer_cost(void)
{
	uint64_t d[15], t, tmp;
	int i, k, j;

	for (i = 0; i < 15; i++) {
		t = wl_now_ns();
		for (k = 0; k < 64; k++)
			tmp = wl_now_ns();
		d[i] = (tmp - t) / 64;
	}
	for (i = 1; i < 15; i++)	/* insertion sort: 15 values */
		for (j = i; j > 0 && d[j - 1] > d[j]; j--) {
			t = d[j];
			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	return d[7];
}

static void p2p_destroy(struct wl_ctx *c)
{
	struct p2p *p = c->priv;

	if (!p)
		return;
	if (p->ah)
		ibv_destroy_ah(p->ah);
	vb_rc_destroy(&p->rc);
	free(p->buf);
	free(p);
	c->priv = NULL;
}

static int p2p_prepare(struct wl_ctx *c, const json_t *opts, json_t **ep)
{
	struct p2p *p;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	c->priv = p;
	r = opt_apply_json(p2p_opts, &p->cfg, opts, c->err, sizeof(c->err));
	if (r)
		goto fail;
	r = -EINVAL;
	if (p->cfg.qp == QP_UC && one_sided(p->cfg.op)) {
		snprintf(c->err, sizeof(c->err), "UC has no %s (only write and send): use --qp rc",
			 p2p_op_names[p->cfg.op]);
		goto fail;
	}
	if (p->cfg.qp == QP_UD) {
		struct ibv_port_attr pa;

		if (p->cfg.op != P2P_SEND) {
			snprintf(c->err, sizeof(c->err), "UD has only send: use --op send");
			goto fail;
		}
		if (!vb_port_query(c->dev, &pa) && p->cfg.size > (128u << pa.active_mtu)) {
			snprintf(c->err, sizeof(c->err), "UD messages are one MTU at most (%u bytes)",
				 128u << pa.active_mtu);
			goto fail;
		}
	}
	if (p->cfg.op == P2P_CAS || p->cfg.op == P2P_FAA)
		p->cfg.size = 8;	/* atomics are 8 bytes, as in ib_atomic_lat */
	r = -ENOMEM;
	/* [0, size + GRH): what the peer sends or writes here; then what we send from */
	if (posix_memalign((void **)&p->buf, 4096, 2 * p->cfg.size + GRH))
		goto fail;
	memset(p->buf, 0, 2 * p->cfg.size + GRH);
	r = vb_qp_create(&p->rc, c->dev, qp_type_of[p->cfg.qp], p->buf, 2 * p->cfg.size + GRH,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 (p->cfg.qp ? 0 : IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC),
			 128, RECV_RING, c->err, sizeof(c->err));
	if (r)
		goto fail;
	p->qp = p->rc.qp;
	p->cq = p->rc.cq;
	p->mr = p->rc.mr;
	p->max_inline = p->rc.max_inline;
	p->psn = p->rc.psn;
	hist_init(&p->hist);
	p->cq_mod = p->cfg.tx_depth < CQ_MOD ? p->cfg.tx_depth : CQ_MOD;
	p->timer_ns = timer_cost();
	*ep = vb_rc_endpoint(&p->rc, c->dev, p->buf, p->cfg.size);
	return *ep ? 0 : -EIO;
fail:
	if (r == -ENOMEM && !c->err[0])
		snprintf(c->err, sizeof(c->err), "out of memory");
	p2p_destroy(c);
	return r;
}

static int post_recv(struct p2p *p);

static int p2p_connect(struct wl_ctx *c, const json_t *peer)
{
	struct p2p *p = c->priv;
	struct vb_rc_opts o;
	int r, k;

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
	o.max_rd_atomic = 16;	/* READs and atomics in flight (bw) */
	o.min_rnr_timer = 0;
	if (p->cfg.qp == QP_UD)
		r = vb_ud_connect(p->qp, p->rc.pd, c->dev, p->psn, &p->peer, &p->ah);
	else
		r = vb_qp_connect(p->qp, c->dev, p->psn, &p->peer, &o);
	if (r) {
		snprintf(c->err, sizeof(c->err), "qp 0x%x: connect to qp 0x%x failed: %s",
			 p->qp->qp_num, p->peer.qpn, strerror(-r));
		return r;
	}
	/* the receive ring now, not in run(): both sides connect before either
	 * starts, and a SEND that finds no RECV is dropped on UC and UD (RC
	 * would only delay it with RNR retries) */
	for (k = 0; p->cfg.op == P2P_SEND && k < RECV_RING; k++)
		if ((r = post_recv(p))) {
			snprintf(c->err, sizeof(c->err), "post RECV: %s", strerror(-r));
			return r;
		}
	return 0;
}

static int post_recv(struct p2p *p)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf,
			       .length = (uint32_t)p->cfg.size + (p->cfg.qp == QP_UD ? GRH : 0),
			       .lkey = p->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	return -ibv_post_recv(p->qp, &wr, &bad);
}

/* reap completions: ours count down *outstanding, RECVs count up p->recvd
 * and are re-posted; -EIO with a message on a failed one */
static int reap(struct wl_ctx *c, struct p2p *p, uint64_t *outstanding)
{
	struct ibv_wc wc[16];
	int n, i, r;

	n = ibv_poll_cq(p->cq, 16, wc);
	if (n < 0) {
		snprintf(c->err, sizeof(c->err), "cq: poll failed");
		return -EIO;
	}
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			snprintf(c->err, sizeof(c->err), "qp 0x%x: %s completed with %s",
				 p->qp->qp_num, wc[i].opcode & IBV_WC_RECV ? "RECV" :
				 p2p_op_names[p->cfg.op], ibv_wc_status_str(wc[i].status));
			return -EIO;
		}
		if (wc[i].opcode & IBV_WC_RECV) {
			p->recvd++;
			if ((r = post_recv(p))) {
				snprintf(c->err, sizeof(c->err), "qp 0x%x: re-post RECV: %s",
					 p->qp->qp_num, strerror(-r));
				return r;
			}
		} else {
			/* a signaled WR completes the unsignaled ones posted before it:
			 * its wr_id says how many it covers */
			*outstanding -= wc[i].wr_id;
			p->sends_done += wc[i].wr_id;
		}
	}
	return 0;
}

static int post_op(struct wl_ctx *c, struct p2p *p, uint8_t seq, int last)
{
	char *tx = p->buf + p->cfg.size + GRH;
	int read = one_sided(p->cfg.op);
	struct ibv_sge sge = {
		/* a READ lands in our receive half; WRITE/SEND go out of the send half */
		.addr = (uintptr_t)(read ? p->buf : tx), .length = (uint32_t)p->cfg.size,
		.lkey = p->mr->lkey
	};
	struct ibv_send_wr wr = { 0 }, *bad;
	int r;

	if (!read)
		tx[p->cfg.size - 1] = (char)seq;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = wr_opcode[p->cfg.op];
	p->unsignaled++;
	if (p->unsignaled >= p->cq_mod || last || read) {
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr_id = p->unsignaled;
		p->unsignaled = 0;
	}
	if (!read && p->cfg.size <= p->max_inline)
		wr.send_flags |= IBV_SEND_INLINE;
	if (p->cfg.qp == QP_UD) {
		wr.wr.ud.ah = p->ah;
		wr.wr.ud.remote_qpn = p->peer.qpn;
		wr.wr.ud.remote_qkey = VB_UD_QKEY;
	} else if (p->cfg.op == P2P_CAS || p->cfg.op == P2P_FAA) {
		wr.wr.atomic.remote_addr = p->peer.addr;	/* page aligned: 8 is enough */
		wr.wr.atomic.rkey = p->peer.rkey;
		wr.wr.atomic.compare_add = p->cfg.op == P2P_FAA ? 1 : seq - 1;
		wr.wr.atomic.swap = seq;
	} else {
		wr.wr.rdma.remote_addr = p->peer.addr;
		wr.wr.rdma.rkey = p->peer.rkey;
	}
	r = ibv_post_send(p->qp, &wr, &bad);
	if (r) {
		snprintf(c->err, sizeof(c->err), "qp 0x%x: post %s failed: %s", p->qp->qp_num,
			 p2p_op_names[p->cfg.op], strerror(r));
		return -r;
	}
	return 0;
}

/* wait for: the last byte of our buffer to read seq (WRITE ping-pong), the
 * RECV count to reach want_recvd (SEND), or *outstanding to drop to
 * want_out -- whichever the caller asks; reaping all the while */
static int wait_for(struct wl_ctx *c, struct p2p *p, int byte, uint8_t seq, uint64_t want_recvd,
		    uint64_t *outstanding, uint64_t want_out)
{
	volatile uint8_t *rx = (volatile uint8_t *)p->buf + p->cfg.size - 1;
	uint64_t start = 0;
	unsigned int spin = 0;
	int r;

	for (;;) {
		if (byte ? *rx == seq : (p->recvd >= want_recvd && *outstanding <= want_out))
			return 0;
		/* the byte test is the hot path: reap only now and then */
		if (byte && (++spin & 1023))
			continue;
		if ((*outstanding || p->cfg.op == P2P_SEND) && (r = reap(c, p, outstanding)))
			return r;
		if (!byte && ++spin & 1023)
			continue;
		if (*c->stop) {
			snprintf(c->err, sizeof(c->err), "stopped");
			return -EINTR;
		}
		if (!start) {
			start = wl_now_ns();
		} else if (wl_now_ns() - start > p->cfg.op_timeout) {
			snprintf(c->err, sizeof(c->err), "qp 0x%x: %s within %.1f s", p->qp->qp_num,
				 byte || want_recvd > p->recvd ? "no message from the peer" :
								"operations not completed",
				 (double)p->cfg.op_timeout / 1e9);
			return -ETIMEDOUT;
		}
	}
}

/* ping-pong (WRITE, SEND) or request-response (READ) latency */
static int run_lat(struct wl_ctx *c, struct p2p *p)
{
	uint64_t i, total = p->cfg.warmup + p->cfg.iters, outstanding = 0, t0, t1;
	int client = c->role == WL_CLIENT, byte = p->cfg.op == P2P_WRITE, r = 0;

	if (one_sided(p->cfg.op) && !client)
		return 0;	/* one-sided: the server's NIC answers */
	for (i = 0; i < total; i++) {
		uint8_t seq = (uint8_t)(i % 255 + 1);

		if (!client && (r = wait_for(c, p, byte, seq, i + 1, &outstanding, ~0ULL)))
			return r;
		if (outstanding >= 96 && (r = wait_for(c, p, 0, 0, 0, &outstanding, 64)))
			return r;
		t0 = wl_now_ns();
		if ((r = post_op(c, p, seq, i + 1 == total)))
			return r;
		outstanding++;
		if (!client)
			continue;
		if (one_sided(p->cfg.op))
			r = wait_for(c, p, 0, 0, 0, &outstanding, 0);
		else
			r = wait_for(c, p, byte, seq, i + 1, &outstanding, ~0ULL);
		if (r)
			return r;
		t1 = wl_now_ns();
		if (i >= p->cfg.warmup) {
			uint64_t dt = t1 - t0 > p->timer_ns ? t1 - t0 - p->timer_ns : 0;
			uint64_t v = one_sided(p->cfg.op) ? dt : dt / 2;

			hist_record(&p->hist, v);
			wl_record(c, t1, v);
		}
		__atomic_store_n(&c->progress, i + 1, __ATOMIC_RELAXED);
	}
	/* closing handshake: every operation of ours is ACKed before we return */
	return wait_for(c, p, 0, 0, 0, &outstanding, 0);
}

/* streaming: tx_depth operations in flight; the SEND server counts arrivals */
static int run_bw(struct wl_ctx *c, struct p2p *p, uint64_t *elapsed)
{
	uint64_t total = p->cfg.warmup + p->cfg.iters, posted = 0, outstanding = 0, t0 = 0;
	int r;

	if (c->role == WL_SERVER && p->cfg.qp == QP_UD) {
		/* UD drops what finds no RECV: count arrivals until the sender is done
		 * and the line has been idle for a second */
		uint64_t last = wl_now_ns(), seen = 0;

		while (p->recvd < total && wl_now_ns() - last < 1000000000ULL) {
			if ((r = reap(c, p, &outstanding)))
				return r;
			if (p->recvd != seen) {
				seen = p->recvd;
				last = wl_now_ns();
			}
			if (*c->stop)
				return -EINTR;
		}
		return 0;
	}
	if (c->role == WL_SERVER)
		return p->cfg.op == P2P_SEND ? wait_for(c, p, 0, 0, total, &outstanding, ~0ULL) : 0;
	while (posted < total) {
		if (posted == p->cfg.warmup) {
			/* the measured part starts with nothing in flight */
			if ((r = wait_for(c, p, 0, 0, 0, &outstanding, 0)))
				return r;
			t0 = wl_now_ns();
		}
		if (outstanding >= p->cfg.tx_depth &&
		    (r = wait_for(c, p, 0, 0, 0, &outstanding, p->cfg.tx_depth - 1)))
			return r;
		/* the warm-up's last operation is signaled: the measured part starts empty */
		if ((r = post_op(c, p, (uint8_t)posted,
				 posted + 1 == total || posted + 1 == p->cfg.warmup)))
			return r;
		outstanding++;
		posted++;
		__atomic_store_n(&c->progress, posted, __ATOMIC_RELAXED);
	}
	r = wait_for(c, p, 0, 0, 0, &outstanding, 0);
	*elapsed = wl_now_ns() - t0;
	return r;
}

static int p2p_run(struct wl_ctx *c, json_t **result)
{
	struct p2p *p = c->priv;
	uint64_t elapsed = 0, start = wl_now_ns();
	int r;

	if (p->cfg.test == P2P_LAT) {
		r = run_lat(c, p);
		elapsed = wl_now_ns() - start;
	} else {
		r = run_bw(c, p, &elapsed);
	}
	if (r)
		return r;
	*result = json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I}", "test", p2p_tests[p->cfg.test], "op",
			    p2p_op_names[p->cfg.op], "role", c->role == WL_CLIENT ? "client" : "server",
			    "size", (json_int_t)p->cfg.size, "iters", (json_int_t)p->cfg.iters,
			    "elapsed_ns", (json_int_t)elapsed, "inline",
			    (json_int_t)(!one_sided(p->cfg.op) && p->cfg.size <= p->max_inline));
	if (*result) {
		json_object_set_new(*result, "qp", json_string(p2p_qp_types[p->cfg.qp]));
		/* the QP as perftest's out_json describes its own */
		json_object_update_new(*result,
				       json_pack("{s:I,s:I,s:i,s:i}", "max_inline",
						 (json_int_t)p->max_inline, "tx_depth",
						 (json_int_t)(p->cfg.test == P2P_LAT ? 1 : p->cfg.tx_depth),
						 "outstanding_reads", 16, "gid_index",
						 c->dev ? c->dev->gid_index : -1));
	}
	if (!*result)
		return -ENOMEM;
	if (p->cfg.test == P2P_LAT && c->role == WL_CLIENT) {
		json_object_set_new(*result, "lat_ns", hist_to_json(&p->hist));
		json_object_set_new(*result, "timer_overhead_ns", json_integer((json_int_t)p->timer_ns));
	}
	if (p->cfg.op == P2P_SEND && c->role == WL_SERVER)
		json_object_set_new(*result, "received", json_integer((json_int_t)p->recvd));
	if (p->cfg.test == P2P_BW && c->role == WL_CLIENT && elapsed) {
		double secs = (double)elapsed / 1e9;

		json_object_set_new(*result, "bw_bytes_per_s",
				    json_real((double)(p->cfg.iters * p->cfg.size) / secs));
		json_object_set_new(*result, "msg_rate_per_s", json_real((double)p->cfg.iters / secs));
	}
	return 0;
}

const struct wl_ops wl_p2p = {
	.name = "p2p",
	.opts = p2p_opts,
	.prepare = p2p_prepare,
	.connect = p2p_connect,
	.run = p2p_run,
	.destroy = p2p_destroy,
};
