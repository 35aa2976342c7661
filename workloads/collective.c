// SPDX-License-Identifier: MIT
/*
 * collective: nccl-tests-style collectives over N agents, float32 sum.
 *
 * Every rank has one RC QP per peer (a full mesh; the ring algorithms use
 * the left and right neighbours only) on one CQ. Transfers are SENDs into
 * RECVs posted ahead of time: the receive queue is FIFO and a neighbour's
 * messages arrive in order, so each posted RECV names the slot its message
 * belongs to. Flow control: once a rank has posted an iteration's RECVs it
 * sends a 0-byte READY to its left neighbour, which waits for it before
 * sending. (Leaning on RNR retries instead costs a jiffy per miss on rxe.)
 *
 *   allreduce       ring: reduce-scatter (N-1 steps) then allgather (N-1)
 *   reduce_scatter  the first half; rank r ends with chunk r+1 reduced
 *   allgather       the second half, from each rank's own chunk
 *   broadcast       the root's buffer down the ring, chunk by chunk (pipelined)
 *   alltoall        chunk j of rank i goes to rank j (chunk i there), directly
 *
 * Out of place: `in` never changes, `out` is written, so every iteration
 * computes the same result and is checked against the exact one (inputs are
 * small integers, their float sums exact): #wrong counts elements that differ.
 * Each iteration's time (first send posted to last byte received and every
 * send complete) goes to a histogram; figures follow nccl-tests: algbw =
 * bytes / time, busbw = algbw * 2(n-1)/n (allreduce) or (n-1)/n.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <arpa/inet.h>
#include <sched.h>
#include <time.h>
#include "wl.h"
#include "../lib/hist.h"

#define MAX_RANKS 16

enum coll_op { C_ALLREDUCE, C_REDUCE_SCATTER, C_ALLGATHER, C_BROADCAST, C_ALLTOALL };
static const char *const coll_ops[] = { "allreduce", "reduce_scatter", "allgather", "broadcast",
					"alltoall", NULL };

struct coll_cfg {
	int op;
	uint64_t size;		/* bytes of the (full) buffer per rank */
	uint64_t iters;
	uint64_t warmup;
	uint64_t rank;
	uint64_t nranks;
	uint64_t op_timeout;
	uint64_t root;
	int mode;
	uint64_t step_timeout_min;	/* lossy: a step waits at least this long */
	uint64_t step_timeout_max;	/* lossy: and at most this long */
};

enum coll_mode { M_RC, M_LOSSY };
static const char *const modes[] = { "rc", "lossy", NULL };

#define O(f) offsetof(struct coll_cfg, f)
static const struct opt coll_opts[] = {
	{ "op", OPT_ENUM, O(op), 0, 0, "allreduce", coll_ops,
	  "collective: allreduce|reduce_scatter|allgather|broadcast|alltoall" },
	{ "root", OPT_UINT, O(root), 0, MAX_RANKS - 1, "0", NULL, "broadcast: the root rank" },
	{ "mode", OPT_ENUM, O(mode), 0, 0, "rc", modes,
	  "recovery: rc (NIC retransmits) | lossy (UC, adaptive step timeout, losses zero-filled)" },
	{ "step_timeout_min", OPT_TIME, O(step_timeout_min), 100000, 60000000000ULL, "20ms", NULL,
	  "lossy: shortest step timeout" },
	{ "step_timeout_max", OPT_TIME, O(step_timeout_max), 100000, 60000000000ULL, "500ms", NULL,
	  "lossy: longest step timeout (a silent peer costs this per step)" },
	{ "size", OPT_SIZE, O(size), 4, 256ULL << 20, "1M", NULL, "bytes per rank (float32)" },
	{ "iters", OPT_UINT, O(iters), 1, 1000000, "20", NULL, "measured iterations" },
	{ "warmup", OPT_UINT, O(warmup), 0, 100000, "2", NULL, "unmeasured iterations first" },
	{ "rank", OPT_UINT, O(rank), 0, MAX_RANKS - 1, "0", NULL, "this agent's rank (set by rdmactl)" },
	{ "nranks", OPT_UINT, O(nranks), 2, MAX_RANKS, "2", NULL, "ranks (set by rdmactl)" },
	{ "op_timeout", OPT_TIME, O(op_timeout), 1000000, 3600000000000ULL, "30s", NULL,
	  "fail when one iteration takes longer" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};
#undef O

struct coll {
	struct coll_cfg cfg;
	int n, r;
	size_t count, chunk;	/* floats: total, per chunk (the last may be shorter) */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[MAX_RANKS];	/* qp[j] talks to rank j; qp[r] unused */
	uint32_t psn[MAX_RANKS];
	struct ibv_mr *mr;
	float *in, *out, *stage;	/* stage: N-1 chunks for reduce-scatter */
	char *mem;
	size_t memlen;
	struct hist hist;
	uint64_t wrong;
	int sends;		/* SENDs not yet completed */
	uint64_t recvd;		/* data RECVs completed since the start */
	int ready[MAX_RANKS];	/* READYs received from each rank and not yet used */
	/* lossy mode: data on UC QPs as WRITE_WITH_IMM, one per MTU piece */
	struct ibv_qp *dq[MAX_RANKS];
	uint32_t dpsn[MAX_RANKS];
	struct vb_ep peer_data[MAX_RANKS];	/* the peer's UC QP and its buffer */
	size_t piece;		/* floats per piece (one MTU) */
	size_t pieces;		/* pieces per chunk */
	uint8_t *got;		/* [step][piece] arrival bitmap of this iteration */
	uint32_t arrived[2 * MAX_RANKS];	/* pieces seen per step */
	uint64_t last_arrival[2 * MAX_RANKS];	/* when the latest piece of a step came */
	int recv_posted;	/* WRITE_WITH_IMM RECVs outstanding on the left UC QP */
	uint32_t iter;		/* iteration number, in the immediate */
	double step_ewma_ns;	/* adaptive timeout: recent step durations */
	uint64_t lost_pieces, pieces_expected, timeouts;
};

static size_t chunk_off(const struct coll *c, int k)
{
	return (size_t)k * c->chunk;
}

static size_t chunk_len(const struct coll *c, int k)
{
	size_t off = chunk_off(c, k);

	return off >= c->count ? 0 : (c->count - off < c->chunk ? c->count - off : c->chunk);
}

/* rank r's input element j: small integers, so every float sum is exact */
static float input_of(int r, size_t j)
{
	return (float)((r + 1) * (int)(j % 97 + 1));
}

static void coll_destroy(struct wl_ctx *w)
{
	struct coll *c = w->priv;
	int j;

	if (!c)
		return;
	for (j = 0; j < MAX_RANKS; j++) {
		if (c->qp[j])
			ibv_destroy_qp(c->qp[j]);
		if (c->dq[j])
			ibv_destroy_qp(c->dq[j]);
	}
	free(c->got);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	free(c->mem);
	free(c);
	w->priv = NULL;
}

static int coll_prepare(struct wl_ctx *w, const json_t *opts, json_t **ep)
{
	struct ibv_port_attr pa;
	struct coll *c;
	json_t *eps, *e;
	int j, r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	w->priv = c;
	r = opt_apply_json(coll_opts, &c->cfg, opts, w->err, sizeof(w->err));
	if (r)
		goto fail;
	c->n = (int)c->cfg.nranks;
	c->r = (int)c->cfg.rank;
	r = -EINVAL;
	if (c->r >= c->n) {
		snprintf(w->err, sizeof(w->err), "rank %d of %d ranks", c->r, c->n);
		goto fail;
	}
	if (c->cfg.op == C_BROADCAST && c->cfg.root >= c->cfg.nranks) {
		snprintf(w->err, sizeof(w->err), "root %llu of %d ranks",
			 (unsigned long long)c->cfg.root, c->n);
		goto fail;
	}
	if (c->cfg.op == C_ALLTOALL && c->cfg.size % (sizeof(float) * (uint64_t)c->n)) {
		snprintf(w->err, sizeof(w->err), "alltoall: size %llu is not a multiple of 4 x %d ranks",
			 (unsigned long long)c->cfg.size, c->n);
		goto fail;
	}
	c->count = c->cfg.size / sizeof(float);
	c->chunk = (c->count + (size_t)c->n - 1) / (size_t)c->n;
	c->memlen = (2 * c->count + (size_t)(c->n - 1) * c->chunk) * sizeof(float);
	r = -ENOMEM;
	if (posix_memalign((void **)&c->mem, 4096, c->memlen))
		goto fail;
	c->in = (float *)c->mem;
	c->out = c->in + c->count;
	c->stage = c->out + c->count;
	for (size_t k = 0; k < c->count; k++)
		c->in[k] = input_of(c->r, k);
	memset(c->out, 0, (c->count + (size_t)(c->n - 1) * c->chunk) * sizeof(float));
	c->pd = ibv_alloc_pd(w->dev->ctx);
	if (c->cfg.mode == M_LOSSY &&
	    c->cfg.op != C_ALLREDUCE && c->cfg.op != C_REDUCE_SCATTER && c->cfg.op != C_ALLGATHER) {
		snprintf(w->err, sizeof(w->err), "mode lossy: allreduce, reduce_scatter, allgather only");
		r = -EINVAL;
		goto fail;
	}
	if (c->cfg.mode == M_LOSSY && c->pd)	/* bigger CQ: a completion per piece */
		c->cq = ibv_create_cq(w->dev->ctx, 8192, NULL, NULL, 0);
	else
		c->cq = c->pd ? ibv_create_cq(w->dev->ctx, 4 * MAX_RANKS * 2 + 64, NULL, NULL, 0) : NULL;
	c->mr = c->cq ? ibv_reg_mr(c->pd, c->mem, c->memlen,
				   IBV_ACCESS_LOCAL_WRITE |
					   (c->cfg.mode == M_LOSSY ? IBV_ACCESS_REMOTE_WRITE : 0)) :
			NULL;
	if (!c->mr) {
		snprintf(w->err, sizeof(w->err), "%s: PD/CQ/MR (%zu bytes): %s", w->dev->name, c->memlen,
			 strerror(errno));
		r = errno ? -errno : -ENOMEM;
		goto fail;
	}
	r = vb_port_query(w->dev, &pa);
	if (r)
		goto fail;
	eps = json_array();
	for (j = 0; j < c->n; j++) {
		struct ibv_qp_init_attr qia = {
			.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 2 * MAX_RANKS, .max_recv_wr = 4 * MAX_RANKS,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct vb_ep me = { 0 };

		if (j == c->r) {
			json_array_append_new(eps, json_null());
			continue;
		}
		c->qp[j] = ibv_create_qp(c->pd, &qia);
		if (!c->qp[j]) {
			snprintf(w->err, sizeof(w->err), "%s: failed to create RC QP: %s", w->dev->name,
				 strerror(errno));
			json_decref(eps);
			r = -errno;
			goto fail;
		}
		if (getrandom(&c->psn[j], sizeof(c->psn[j]), 0) != sizeof(c->psn[j]))
			c->psn[j] = (uint32_t)wl_now_ns();
		c->psn[j] &= 0xffffff;
		me.qpn = c->qp[j]->qp_num;
		me.psn = c->psn[j];
		me.gid = w->dev->gid;
		me.mtu = pa.active_mtu;
		e = vb_ep_to_json(&me);
		if (c->cfg.mode == M_LOSSY) {
			struct ibv_qp_init_attr dqa = {
				.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_UC,
				.cap = { .max_send_wr = 4096, .max_recv_wr = 4096,
					 .max_send_sge = 1, .max_recv_sge = 1 },
			};

			c->dq[j] = ibv_create_qp(c->pd, &dqa);
			if (!c->dq[j]) {
				snprintf(w->err, sizeof(w->err), "%s: failed to create UC QP: %s",
					 w->dev->name, strerror(errno));
				json_decref(e);
				json_decref(eps);
				r = -errno;
				goto fail;
			}
			c->dpsn[j] = c->psn[j] ^ 0x5a5a5a;
			me.qpn = c->dq[j]->qp_num;
			me.psn = c->dpsn[j];
			me.rkey = c->mr->rkey;
			me.addr = (uint64_t)(uintptr_t)c->mem;
			me.len = c->memlen;
			json_object_set_new(e, "uc", vb_ep_to_json(&me));
		}
		json_array_append_new(eps, e);
	}
	if (c->cfg.mode == M_LOSSY) {
		/* one MTU per WRITE_WITH_IMM: a loss costs one piece, not the rest of
		 * the message (UC drops a message's tail after a lost packet) */
		c->piece = (128u << pa.active_mtu) / sizeof(float);
		c->pieces = (c->chunk + c->piece - 1) / c->piece;
		if (2 * (size_t)(c->n - 1) * c->pieces > 4000 || c->pieces > 0xffff) {
			snprintf(w->err, sizeof(w->err), "mode lossy: %zu pieces per iteration, at most "
				 "4000 (use a smaller size or more ranks)",
				 2 * (size_t)(c->n - 1) * c->pieces);
			json_decref(eps);
			r = -EINVAL;
			goto fail;
		}
		c->got = calloc(2 * (size_t)c->n * c->pieces, 1);
		if (!c->got) {
			json_decref(eps);
			r = -ENOMEM;
			goto fail;
		}
	}
	hist_init(&c->hist);
	*ep = eps;
	return 0;
fail:
	coll_destroy(w);
	return r;
}

/* peer: array, entry j = rank j's endpoint meant for this rank (null for self) */
static int coll_connect(struct wl_ctx *w, const json_t *peers)
{
	struct coll *c = w->priv;
	/* RNR is the flow control here: retry soon (0.01 ms), forever */
	struct vb_rc_opts o = { .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 1,
				.min_rnr_timer = 1 };
	struct vb_ep ep;
	int j, r;

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
		if (!r && c->cfg.mode == M_LOSSY) {
			if (vb_ep_from_json(&c->peer_data[j],
					    json_object_get(json_array_get(peers, (size_t)j), "uc"))) {
				snprintf(w->err, sizeof(w->err), "rank %d: no UC endpoint", j);
				return -EINVAL;
			}
			r = vb_qp_connect(c->dq[j], w->dev, c->dpsn[j], &c->peer_data[j], &o);
		}
		if (r) {
			snprintf(w->err, sizeof(w->err), "rank %d: connect to rank %d failed: %s", c->r, j,
				 strerror(-r));
			return r;
		}
	}
	return 0;
}

/* wr_id: bit 63 = recv, bit 62 = READY, bit 61 = lossy data, low bits = step */
#define WR_RECV (1ULL << 63)
#define WR_READY (1ULL << 62)
#define WR_LOSSY (1ULL << 61)

static void lossy_arrival(struct coll *c, uint32_t imm, uint64_t *batch_now);

static int post_recv(struct coll *c, struct ibv_qp *qp, float *dst, size_t n, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)dst, .length = (uint32_t)(n * sizeof(float)),
			       .lkey = c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = WR_RECV | id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return -ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct coll *c, struct ibv_qp *qp, const float *src, size_t n, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = (uint32_t)(n * sizeof(float)),
			       .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	return -ibv_post_send(qp, &wr, &bad);
}

/*
 * Completions, counted in c: sends outstanding, data RECVs done (ever) and
 * READYs received but not yet used. Poll until all three reach the wants.
 */
static int poll_until(struct wl_ctx *w, struct coll *c, uint64_t want_recvd, int ready_from,
		      int drain, uint64_t deadline)
{
	struct ibv_wc wc[16];
	unsigned int spin = 0;
	int n, i;

	int once = !want_recvd && ready_from < 0 && !drain;	/* just one pass */

	while (once-- > 0 || c->recvd < want_recvd || (ready_from >= 0 && c->ready[ready_from] < 1) ||
	       (drain && c->sends)) {
		uint64_t batch_now = 0;

		n = ibv_poll_cq(c->cq, 16, wc);
		if (n < 0)
			return -EIO;
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				snprintf(w->err, sizeof(w->err), "rank %d: %s completed with %s", c->r,
					 wc[i].wr_id & WR_RECV ? "RECV" : "SEND",
					 ibv_wc_status_str(wc[i].status));
				return -EIO;
			}
			if (wc[i].wr_id & WR_LOSSY) {
				if (wc[i].wr_id & WR_RECV)
					lossy_arrival(c, ntohl(wc[i].imm_data), &batch_now);
				else
					c->sends--;
			} else if ((wc[i].wr_id & (WR_RECV | WR_READY)) == (WR_RECV | WR_READY))
				c->ready[wc[i].wr_id & 0xff]++;
			else if (wc[i].wr_id & WR_RECV)
				c->recvd++;	/* in order: the RQ is FIFO */
			else
				c->sends--;
		}
		if (!n && !(++spin & 63)) {
			/* ranks may outnumber CPUs (3 agents, 2 vCPUs), and rxe does its
			 * work in kernel threads: spinning without yielding would stall
			 * everyone for a scheduler tick */
			sched_yield();
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

/*
 * Lossy mode (after OptiReduce / Celeris): data moves on UC QPs as one
 * WRITE_WITH_IMM per MTU piece straight into the receiver's buffer; the
 * immediate names (iteration, step, piece), the receiver keeps an arrival
 * bitmap per step and ends a step when every piece is there or its timeout
 * fires. Missing pieces are zero-filled and counted: nothing is
 * retransmitted and a step never hangs. The timeout adapts: three times a
 * moving average of recent complete steps, clamped to [step_timeout_min,
 * step_timeout_max]. READY (flow control) stays on the RC QPs.
 */
static size_t npieces(const struct coll *c, int k)
{
	return (chunk_len(c, k) + c->piece - 1) / c->piece;
}

static uint8_t *got_of(struct coll *c, int gstep)
{
	return c->got + (size_t)gstep * c->pieces;
}

/* batch_now: one timestamp per polled batch (a clock read costs ~1.4 us under
 * TCG's hpet: not once per piece) */
static void lossy_arrival(struct coll *c, uint32_t imm, uint64_t *batch_now)
{
	uint32_t it = imm >> 24, gstep = (imm >> 16) & 0xff, pc = imm & 0xffff;
	uint8_t *g;

	c->recv_posted--;
	if (it != (c->iter & 0xff) || gstep >= 2 * (uint32_t)c->n || pc >= c->pieces)
		return;	/* late, from an iteration already given up on */
	g = got_of(c, (int)gstep);
	if (!g[pc]) {
		g[pc] = 1;
		c->arrived[gstep]++;
		if (!*batch_now)
			*batch_now = wl_now_ns();
		c->last_arrival[gstep] = *batch_now;
	}
}

static int lossy_post_recvs(struct coll *c)
{
	int left = (c->r + c->n - 1) % c->n, need = (int)(2 * (size_t)(c->n - 1) * c->pieces) + 8;
	struct ibv_recv_wr wr = { .wr_id = WR_RECV | WR_LOSSY, .num_sge = 0 }, *bad;
	int ret = 0;

	/* RECVs of lost pieces were never used: top up to what one iteration needs */
	while (!ret && c->recv_posted < need) {
		ret = -ibv_post_recv(c->dq[left], &wr, &bad);
		if (!ret)
			c->recv_posted++;
	}
	return ret;
}

/* our chunk region [src, src + len) to the right neighbour's byte offset dst */
static int lossy_send(struct coll *c, const float *src, size_t len, size_t dst_off, int gstep)
{
	int right = (c->r + 1) % c->n, ret;
	size_t p, np = (len + c->piece - 1) / c->piece;

	for (p = 0; p < np; p++) {
		size_t n = len - p * c->piece < c->piece ? len - p * c->piece : c->piece;
		struct ibv_sge sge = { .addr = (uintptr_t)(src + p * c->piece),
				       .length = (uint32_t)(n * sizeof(float)), .lkey = c->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = WR_LOSSY, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM }, *bad;

		wr.imm_data = htonl(((c->iter & 0xff) << 24) | ((uint32_t)gstep << 16) | (uint32_t)p);
		wr.wr.rdma.remote_addr = c->peer_data[right].addr + dst_off +
					 p * c->piece * sizeof(float);
		wr.wr.rdma.rkey = c->peer_data[right].rkey;
		if (p + 1 == np) {	/* one completion per step: it frees the SQ slots */
			wr.send_flags = IBV_SEND_SIGNALED;
			c->sends++;
		}
		ret = -ibv_post_send(c->dq[right], &wr, &bad);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Wait for step gstep (chunk k into [dst, dst + len)); zero-fill what missed it.
 * The deadline follows OptiReduce's estimate: when a fraction f of the step
 * had arrived by time t (the latest arrival), the whole should take t / f;
 * wait 1.5 times that plus step_timeout_min. Before anything arrived the sender may just be late (a
 * straggler is not a loss): wait, but never beyond step_timeout_max from the
 * start of the step -- a silent peer costs that much per step, and no more.
 */
static int lossy_wait(struct wl_ctx *w, struct coll *c, int gstep, int k, float *dst)
{
	uint8_t *g = got_of(c, gstep);
	size_t need = npieces(c, k), p, len = chunk_len(c, k);
	uint64_t t0 = wl_now_ns(), now, dl, hard = t0 + c->cfg.step_timeout_max;
	double lo = (double)c->cfg.step_timeout_min;
	unsigned int spin = 0;
	int r;

	c->pieces_expected += need;
	for (;;) {
		if (c->arrived[gstep] >= need)
			break;
		now = wl_now_ns();
		/* a late sender is not a loss: nothing arrived yet means wait (to the cap).
		 * Else extrapolate from when the last piece came: if a fraction f
		 * arrived by then, all of it should by t / f */
		dl = c->arrived[gstep] ?
			     t0 + (uint64_t)(1.5 * (double)(c->last_arrival[gstep] > t0 ?
							    c->last_arrival[gstep] - t0 : 0) *
					     (double)need / (double)c->arrived[gstep] + lo) :
			     hard;
		if (dl > hard)
			dl = hard;
		if (now >= dl)
			break;
		r = poll_until(w, c, 0, -1, 0, dl);	/* one pass over the CQ */
		if (r)
			return r;
		if (!(++spin & 63)) {
			sched_yield();	/* ranks and rxe share the CPUs */
			if (*w->stop)
				return -EINTR;
		}
	}
	if (c->arrived[gstep] >= need) {
		double d = (double)(wl_now_ns() - t0);

		c->step_ewma_ns = c->step_ewma_ns ? 0.8 * c->step_ewma_ns + 0.2 * d : d;
		return 0;
	}
	c->timeouts++;
	for (p = 0; p < need; p++) {
		if (g[p])
			continue;
		c->lost_pieces++;
		memset(dst + p * c->piece, 0,
		       (len - p * c->piece < c->piece ? len - p * c->piece : c->piece) * sizeof(float));
	}
	return 0;
}

/* ring chunk bookkeeping: the chunk rank r holds reduced after reduce-scatter */
static int ag_owner(const struct coll *c)
{
	return c->cfg.op == C_ALLGATHER ? c->r : (c->r + 1) % c->n;
}

/* every RECV of one iteration, in the order the left neighbour sends */
static int post_recvs_other(struct coll *c);

static int post_recvs(struct coll *c)
{
	int n = c->n, r = c->r, s, k, ret = 0;
	int rs = c->cfg.op != C_ALLGATHER, ag = c->cfg.op != C_REDUCE_SCATTER;
	struct ibv_qp *left = c->qp[(r + n - 1) % n];

	if (c->cfg.op == C_BROADCAST || c->cfg.op == C_ALLTOALL)
		return post_recvs_other(c);
	if (c->cfg.mode == M_LOSSY) {
		/* a new iteration: its arrivals count from zero */
		c->iter++;
		memset(c->got, 0, 2 * (size_t)c->n * c->pieces);
		memset(c->arrived, 0, sizeof(c->arrived));
		return lossy_post_recvs(c);
	}
	for (s = 0; rs && !ret && s < n - 1; s++) {
		k = (r - s - 1 + 2 * n) % n;	/* reduce-scatter step s: chunk r-s-1 */
		ret = post_recv(c, left, c->stage + (size_t)s * c->chunk, chunk_len(c, k), (uint64_t)s);
	}
	for (s = 0; ag && !ret && s < n - 1; s++) {
		k = (ag_owner(c) - s - 1 + 2 * n) % n;	/* allgather step s: owner-s-1 */
		ret = post_recv(c, left, c->out + chunk_off(c, k), chunk_len(c, k),
				(uint64_t)(n + s));
	}
	return ret;
}

/* broadcast and alltoall have their own RECVs (ring ops: post_recvs) */
static int post_recvs_other(struct coll *c)
{
	int n = c->n, r = c->r, k, ret = 0;

	if (c->cfg.op == C_BROADCAST) {
		if (r == (int)c->cfg.root)
			return 0;
		for (k = 0; k < n && !ret; k++)
			ret = post_recv(c, c->qp[(r + n - 1) % n], c->out + chunk_off(c, k),
					chunk_len(c, k), (uint64_t)k);
		return ret;
	}
	for (k = 0; k < n && !ret; k++)	/* alltoall: rank k's chunk r into our chunk k */
		if (k != r)
			ret = post_recv(c, c->qp[k], c->out + chunk_off(c, k), c->chunk, (uint64_t)k);
	return ret;
}

/* alltoall: READY from every peer, our chunk j straight to rank j */
static int alltoall_once(struct wl_ctx *w, struct coll *c, uint64_t *ns)
{
	int n = c->n, r = c->r, j, ret;
	uint64_t t0 = wl_now_ns(), deadline = t0 + c->cfg.op_timeout, base = c->recvd;

	memcpy(c->out + chunk_off(c, r), c->in + chunk_off(c, r), c->chunk * sizeof(float));
	for (j = 0; j < n; j++) {
		if (j == r)
			continue;
		if ((ret = poll_until(w, c, 0, j, 0, deadline)))
			return ret;
		c->ready[j]--;
		if ((ret = post_recv(c, c->qp[j], NULL, 0, WR_READY | (uint64_t)j)) ||
		    (ret = post_send(c, c->qp[j], c->in + chunk_off(c, j), c->chunk, (uint64_t)j))) {
			snprintf(w->err, sizeof(w->err), "rank %d: post failed: %s", r, strerror(-ret));
			return ret;
		}
		c->sends++;
	}
	ret = poll_until(w, c, base + (uint64_t)(n - 1), -1, 1, deadline);
	*ns = wl_now_ns() - t0;
	return ret;
}

/* one ring collective (its RECVs already posted); the elapsed ns in *ns */
static int ring_once(struct wl_ctx *w, struct coll *c, uint64_t *ns)
{
	int n = c->n, r = c->r, s, ret, k;
	int rs = c->cfg.op != C_ALLGATHER, ag = c->cfg.op != C_REDUCE_SCATTER;
	struct ibv_qp *right = c->qp[(r + 1) % n];
	uint64_t t0 = wl_now_ns(), deadline = t0 + c->cfg.op_timeout, base = c->recvd;
	size_t off, len;

	/* the right neighbour has posted its RECVs; keep one READY RECV posted for
	 * the next iteration (its next READY cannot come before our sends) */
	if (c->cfg.op == C_ALLTOALL)
		return alltoall_once(w, c, ns);
	if ((ret = poll_until(w, c, 0, (r + 1) % n, 0, deadline)))
		return ret;
	c->ready[(r + 1) % n]--;
	if ((ret = post_recv(c, right, NULL, 0, WR_READY | (uint64_t)((r + 1) % n))))
		goto post_fail;
	if (c->cfg.op == C_BROADCAST) {
		/* chunk by chunk down the ring: forward each as it arrives */
		int root = (int)c->cfg.root;

		if (r == root)
			memcpy(c->out, c->in, c->count * sizeof(float));
		for (k = 0; k < n; k++) {
			if (r != root && (ret = poll_until(w, c, base + k + 1, -1, 0, deadline)))
				return ret;
			if ((r + 1) % n == root)
				continue;	/* the ring ends here */
			if ((ret = post_send(c, right, c->out + chunk_off(c, k), chunk_len(c, k), k)))
				goto post_fail;
			c->sends++;
		}
		rs = ag = 0;
	}
	if (rs) {
		/* reduce-scatter: step s sends chunk r-s, receives chunk r-s-1 and adds it */
		memcpy(c->out + chunk_off(c, r), c->in + chunk_off(c, r), chunk_len(c, r) * sizeof(float));
		for (s = 0; s < n - 1; s++) {
			k = (r - s + 2 * n) % n;
			if (c->cfg.mode == M_LOSSY) {
				if ((ret = lossy_send(c, c->out + chunk_off(c, k), chunk_len(c, k),
						      (size_t)((char *)(c->stage + (size_t)s * c->chunk) -
							       c->mem), s)))
					goto post_fail;
				k = (r - s - 1 + 2 * n) % n;
				if ((ret = lossy_wait(w, c, s, k, c->stage + (size_t)s * c->chunk)))
					return ret;
			} else {
				if ((ret = post_send(c, right, c->out + chunk_off(c, k), chunk_len(c, k),
						     s)))
					goto post_fail;
				c->sends++;
				if ((ret = poll_until(w, c, base + s + 1, -1, 0, deadline)))
					return ret;
			}
			k = (r - s - 1 + 2 * n) % n;
			off = chunk_off(c, k);
			len = chunk_len(c, k);
			for (size_t e = 0; e < len; e++)
				c->out[off + e] = c->in[off + e] + c->stage[(size_t)s * c->chunk + e];
		}
		/* rank r now holds chunk r+1 fully reduced */
		base += n - 1;
	}
	if (ag) {
		int own = ag_owner(c);

		if (!rs)
			memcpy(c->out + chunk_off(c, r), c->in + chunk_off(c, r),
			       chunk_len(c, r) * sizeof(float));
		for (s = 0; s < n - 1; s++) {
			k = (own - s + 2 * n) % n;	/* forward what arrived last step */
			if (c->cfg.mode == M_LOSSY) {
				int gs = (rs ? n - 1 : 0) + s, kr = (own - s - 1 + 2 * n) % n;

				if ((ret = lossy_send(c, c->out + chunk_off(c, k), chunk_len(c, k),
						      (size_t)((char *)(c->out + chunk_off(c, k)) - c->mem),
						      gs)))
					goto post_fail;
				if ((ret = lossy_wait(w, c, gs, kr, c->out + chunk_off(c, kr))))
					return ret;
				continue;
			}
			if ((ret = post_send(c, right, c->out + chunk_off(c, k), chunk_len(c, k), n + s)))
				goto post_fail;
			c->sends++;
			if ((ret = poll_until(w, c, base + s + 1, -1, 0, deadline)))
				return ret;
		}
	}
	ret = poll_until(w, c, 0, -1, 1, deadline);
	*ns = wl_now_ns() - t0;
	return ret;
post_fail:
	snprintf(w->err, sizeof(w->err), "rank %d: post failed: %s", r, strerror(-ret));
	return ret;
}

/* this rank's RECVs for the next iteration are posted: tell the left neighbour */
static int send_ready(struct coll *c)
{
	int j, ret = 0, left = (c->r + c->n - 1) % c->n;

	for (j = 0; j < c->n && !ret; j++) {
		if (j == c->r || (c->cfg.op != C_ALLTOALL && j != left))
			continue;
		ret = post_send(c, c->qp[j], NULL, 0, WR_READY);
		if (!ret)
			c->sends++;	/* reaped with the next iteration's sends */
	}
	return ret;
}

/* one READY RECV posted toward every rank we will wait for */
static int post_ready_recvs(struct coll *c)
{
	int j, ret = 0, right = (c->r + 1) % c->n;

	for (j = 0; j < c->n && !ret; j++)
		if (j != c->r && (c->cfg.op == C_ALLTOALL || j == right))
			ret = post_recv(c, c->qp[j], NULL, 0, WR_READY | (uint64_t)j);
	return ret;
}

/* elements of out that differ from the exact result */
static uint64_t check(const struct coll *c)
{
	int n = c->n, r = c->r;
	float mult = (float)(n * (n + 1) / 2);
	uint64_t wrong = 0;
	size_t j, lo = 0, hi = c->count;

	if (c->cfg.op == C_REDUCE_SCATTER) {	/* only the owned chunk is defined */
		lo = chunk_off(c, (r + 1) % n);
		hi = lo + chunk_len(c, (r + 1) % n);
	}
	for (j = lo; j < hi; j++) {
		float want;

		if (c->cfg.op == C_ALLGATHER)
			want = input_of((int)(j / c->chunk), j);
		else if (c->cfg.op == C_BROADCAST)
			want = input_of((int)c->cfg.root, j);
		else if (c->cfg.op == C_ALLTOALL)	/* rank j/chunk's chunk r */
			want = input_of((int)(j / c->chunk), (size_t)r * c->chunk + j % c->chunk);
		else
			want = mult * (float)(j % 97 + 1);

		wrong += c->out[j] != want;
	}
	return wrong;
}

static int coll_run(struct wl_ctx *w, json_t **result)
{
	struct coll *c = w->priv;
	uint64_t i, ns, total = c->cfg.warmup + c->cfg.iters, sum = 0;
	double t_s, algbw, busbw, factor;
	int r;

	/* stale data from earlier iterations must not pass the check: the last
	 * iteration starts from zeros, cleared before its RECVs can land */
	if (total == 1)
		memset(c->out, 0, c->count * sizeof(float));
	if ((r = post_ready_recvs(c)) || (r = post_recvs(c)) || (r = send_ready(c)))
		goto post_fail;
	for (i = 0; i < total; i++) {
		r = ring_once(w, c, &ns);
		if (r)
			return r;
		/* the next iteration's RECVs, then READY to the left neighbour */
		if (i + 2 == total)
			memset(c->out, 0, c->count * sizeof(float));
		if (i + 1 < total && ((r = post_recvs(c)) || (r = send_ready(c))))
			goto post_fail;
		if (i >= c->cfg.warmup) {
			hist_record(&c->hist, ns);
			wl_record(w, wl_now_ns(), ns);
			sum += ns;
		}
		__atomic_store_n(&w->progress, i + 1, __ATOMIC_RELAXED);
		if (i + 1 == total)
			c->wrong = check(c);
	}
	t_s = (double)sum / (double)c->cfg.iters / 1e9;
	algbw = (double)c->cfg.size / t_s;
	/* nccl-tests' bus bandwidth factors */
	factor = c->cfg.op == C_ALLREDUCE ? 2.0 * (c->n - 1) / c->n :
		 c->cfg.op == C_BROADCAST ? 1.0 : (double)(c->n - 1) / c->n;
	busbw = algbw * factor;
	goto done;
post_fail:
	snprintf(w->err, sizeof(w->err), "rank %d: post RECV failed: %s", c->r, strerror(-r));
	return r;
done:
	*result = json_pack("{s:s,s:I,s:I,s:i,s:i,s:I,s:f,s:f,s:f,s:I,s:o}", "op",
			    coll_ops[c->cfg.op], "size", (json_int_t)c->cfg.size, "count",
			    (json_int_t)c->count, "rank", c->r, "nranks", c->n, "iters",
			    (json_int_t)c->cfg.iters, "time_avg_ns", t_s * 1e9, "algbw_bytes_per_s",
			    algbw, "busbw_bytes_per_s", busbw, "wrong", (json_int_t)c->wrong,
			    "time_ns", hist_to_json(&c->hist));
	if (*result) {
		json_object_set_new(*result, "mode", json_string(modes[c->cfg.mode]));
		if (c->cfg.mode == M_LOSSY) {
			json_object_set_new(*result, "lost_pieces", json_integer((json_int_t)c->lost_pieces));
			json_object_set_new(*result, "pieces_expected",
					    json_integer((json_int_t)c->pieces_expected));
			json_object_set_new(*result, "lost_fraction",
					    json_real(c->pieces_expected ? (double)c->lost_pieces /
									   (double)c->pieces_expected : 0));
			json_object_set_new(*result, "step_timeouts", json_integer((json_int_t)c->timeouts));
		}
	}
	return *result ? 0 : -ENOMEM;
}

const struct wl_ops wl_collective = {
	.name = "collective",
	.opts = coll_opts,
	.prepare = coll_prepare,
	.connect = coll_connect,
	.run = coll_run,
	.destroy = coll_destroy,
};
