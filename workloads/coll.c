// SPDX-License-Identifier: MIT
/*
 * The collective engine (see coll.h for the modes).
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
#include "coll.h"
#include "../lib/ec.h"
#include "../lib/rht.h"

#define MAX_RANKS COLL_MAX_RANKS
#define MARKER 0xffffu
#define READY_RECVS 4	/* READY RECVs kept posted per peer (UC modes) */
#define SR_RECVS 8	/* sr: control RECVs (READY, NACK, DONE) kept posted per peer */
#define SR_NACK_RING 16	/* sr: NACK send buffers, used in turn */
#define SR_RTO_MIN_NS 1000000ULL	/* sr: the retransmission timeout's floor */
/* the immediate of a control SEND (UC modes): a READY's carries the timeout
 * estimate in us (below 2^30); sr's NACK and DONE name (iteration, step) */
#define CTL_NACK 0x80000000u
#define CTL_DONE 0x40000000u
#define CTL_EST_MAX 0x3fffffffu
#define CTL_TIMEOUT 10	/* UC modes' READY QPs: 4.2 ms, about a jiffy */
#define SPIN_POLLS 64	/* empty polls before a rank sleeps on its CQ (wait=event) */
#define SLEEP_MAX_NS 1000000ULL	/* and at most this long at a time */

const char *const coll_ops[] = { "allreduce", "reduce_scatter", "allgather", "broadcast",
				 "alltoall", NULL };
const char *const coll_prios[] = { "none", "magnitude", NULL };
const char *const coll_onoff[] = { "off", "on", NULL };
const char *const coll_fills[] = { "zero", "previous", NULL };
const char *const coll_waits[] = { "event", "spin", NULL };

struct coll {
	struct coll_cfg cfg;
	int n, r, uc;
	size_t ucount;		/* floats of the user's buffer */
	size_t count, chunk;	/* floats on the wire (hadamard: padded), per chunk */
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;	/* wait=event */
	struct ibv_cq *cq;
	unsigned int idle;	/* empty polls in a row */
	int primed;		/* the first iteration's RECVs are posted (at connect) */
	int armed;		/* a completion event requested and not yet taken */
	struct ibv_qp *qp[MAX_RANKS];	/* qp[j] talks to rank j; qp[r] unused */
	struct ibv_qp *lq;		/* guard: an RC QP to itself, for the revokes (LOCAL_INV) alone */
	uint32_t psn[MAX_RANKS];
	struct ibv_mr *mr;
	float *in, *out, *stage;	/* stage: N-1 chunks for reduce-scatter */
	float *uin, *uout;	/* user domain: in/out, or the hadamard buffers */
	char *mem;
	size_t memlen;
	int sends;		/* data sends not yet completed */
	int csends;		/* UC modes: READY sends not yet completed (never waited for) */
	uint64_t recvd;		/* data RECVs completed since the start */
	int ready[MAX_RANKS];	/* READYs received from each rank and not yet used */
	/* UC modes */
	struct ibv_qp *dq[MAX_RANKS];
	uint32_t dpsn[MAX_RANKS];
	struct vb_ep peer_data[MAX_RANKS];	/* the peer's UC QP and its buffer */
	size_t piece;		/* floats per piece (one MTU) */
	size_t pieces;		/* data pieces per chunk (at most) */
	size_t groups;		/* ec groups per chunk (at most) */
	size_t slots;		/* piece numbers per step: data, then parity */
	float *prx, *ptx, *tail, *zero;	/* parity received / sent (per step), scratch */
	float *prev;		/* fill=previous: the last iteration's output */
	uint8_t *got;		/* [gstep][slot] arrival bitmap of this iteration */
	uint16_t *garr;		/* ec: [gstep][group] pieces arrived */
	uint32_t arrived[2 * MAX_RANKS];	/* data pieces seen per step */
	uint32_t gready[2 * MAX_RANKS];	/* ec: groups that can be rebuilt */
	uint32_t step_np[2 * MAX_RANKS];	/* data pieces of each step */
	uint8_t marker[2 * MAX_RANKS];
	uint64_t last_arrival[2 * MAX_RANKS];	/* as polled, not as arrived */
	int recv_posted;	/* WRITE_WITH_IMM RECVs outstanding on the left UC QP */
	uint32_t iter;		/* iteration number, in the immediate */
	struct ibv_send_wr *swr;	/* one step's chained WRITE_WITH_IMMs */
	struct ibv_sge *sge;
	struct ibv_recv_wr *rwr;
	uint32_t *order;	/* priority: the pieces' send order */
	float *mag;
	double ewma_ns;
	uint32_t est_us[MAX_RANKS];	/* every rank's latest timeout estimate */
	struct ec *ec;
	/* hadamard: rht, the whole buffer's transform. pipeline=on: each rank's
	 * chunk is transformed on its own instead, so that a chunk can be
	 * encoded while another is on the wire and decoded as soon as it is
	 * final. Chunk k is every n-th element from k (uchunk of them or one
	 * fewer, rht or rht_last): each chunk samples the whole buffer, so a loss
	 * is spread over it, not over one region's elements; rhtk[k]: chunk k's
	 * (NULL: empty) */
	struct rht *rht, *rht_last, *rhtk[MAX_RANKS];
	size_t uchunk;
	uint32_t enc_done, dec_done;	/* this step's chunks, a bit each */
	/* sr: control RECV buffers ([peer][SR_RECVS] of bmlen bytes), then the
	 * NACK send ring; what each step of this iteration sent (to resend
	 * from), and the RTO state of the link from the left neighbour */
	int sr;
	size_t bmlen;
	uint8_t *cbuf;
	struct ibv_mr *cmr;
	unsigned int nack_next;
	const float *sent_src[2 * MAX_RANKS];
	size_t sent_len[2 * MAX_RANKS], sent_off[2 * MAX_RANKS];
	uint32_t sent_mask;	/* steps of this iteration sent, a bit each */
	uint32_t sr_done[MAX_RANKS];	/* 1 + the iteration each rank said DONE for */
	double srtt_ns, rttvar_ns;
	uint64_t rto_ns;
	/* guard: a memory window (type 2, bound on the UC QP from the left)
	 * over each step's receive region, [0] data, [1] ec parity; its key
	 * byte is the iteration's, so the sender knows it. mw_key: as bound
	 * now (0: free); peer_mw: the right neighbour's windows (their rkeys'
	 * index part) */
	struct ibv_mw *mw[2 * MAX_RANKS][2];
	uint32_t mw_key[2 * MAX_RANKS][2], peer_mw[2 * MAX_RANKS][2];
	int mw_pending;	/* signaled binds and revokes not yet complete */
	/* late writes that landed: a piece's completion for a step this
	 * iteration gave up on, after its windows were revoked (ended), or of an
	 * earlier iteration once this one's windows are bound (live) */
	uint8_t ended[2 * MAX_RANKS];
	int live;
	struct coll_stats st;
	uint64_t it_lost, it_expected;	/* this iteration's */
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

static size_t npieces(const struct coll *c, int k)
{
	return (chunk_len(c, k) + c->piece - 1) / c->piece;
}

/* ring chunk bookkeeping: the chunk rank r holds reduced after reduce-scatter */
static int ag_owner(const struct coll *c)
{
	return c->cfg.op == C_ALLGATHER ? c->r : (c->r + 1) % c->n;
}

/* the chunk received in global step gstep (reduce-scatter 0..n-2, then allgather) */
static int step_chunk(const struct coll *c, int gstep)
{
	int n = c->n, rs = c->cfg.op != C_ALLGATHER;

	if (rs && gstep < n - 1)
		return (c->r - gstep - 1 + 2 * n) % n;
	return (ag_owner(c) - (gstep - (rs ? n - 1 : 0)) - 1 + 2 * n) % n;
}

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
	free(c->got);
	free(c->garr);
	free(c->swr);
	free(c->sge);
	free(c->rwr);
	free(c->order);
	free(c->mag);
	ec_free(c->ec);
	rht_free(c->rht);
	rht_free(c->rht_last);
	free(c->prev);
	if (c->cmr)
		ibv_dereg_mr(c->cmr);
	free(c->cbuf);
	if (c->uin != c->in)
		free(c->uin);
	if (c->uout != c->out)
		free(c->uout);
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
	else if (c->mode != M_RC && c->op != C_ALLREDUCE && c->op != C_REDUCE_SCATTER &&
		 c->op != C_ALLGATHER)
		snprintf(e, n, "mode %s: allreduce, reduce_scatter, allgather only", coll_modes[c->mode]);
	else if (c->mode == M_HADAMARD && c->op != C_ALLREDUCE)
		snprintf(e, n, "mode hadamard: allreduce only (the transform commutes with the sum)");
	else if (c->mode == M_HADAMARD && c->block && (c->block < 8 || (c->block & (c->block - 1))))
		snprintf(e, n, "block %llu: expected a power of two >= 8 (or 0: chosen by size)",
			 (unsigned long long)c->block);
	else if (c->mode == M_EC && c->ec_k + c->ec_m > 255)
		snprintf(e, n, "ec_k + ec_m = %llu: at most 255",
			 (unsigned long long)(c->ec_k + c->ec_m));
	else if (c->step_timeout_min > c->step_timeout_max)
		snprintf(e, n, "step_timeout_min is above step_timeout_max");
	else
		return 0;
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
	c->uc = cfg->mode != M_RC;
	c->sr = cfg->mode == M_SR;
	c->ucount = cfg->size / sizeof(float);
	if (cfg->mode == M_HADAMARD && cfg->pipeline) {	/* by chunk, each whole blocks */
		c->uchunk = (c->ucount + (size_t)c->n - 1) / (size_t)c->n;
		if (!cfg->block)
			c->cfg.block = rht_block_for(c->uchunk);
		c->st.block = c->cfg.block;
		c->chunk = rht_wire_len(c->uchunk, c->cfg.block);
		c->count = c->chunk * (size_t)c->n;
	} else if (cfg->mode == M_HADAMARD) {	/* the whole buffer */
		if (!cfg->block)
			c->cfg.block = rht_block_for(c->ucount);
		c->st.block = c->cfg.block;
		c->count = rht_wire_len(c->ucount, c->cfg.block);
		c->chunk = (c->count + (size_t)c->n - 1) / (size_t)c->n;
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
	if (cfg->mode == M_EC) {
		c->groups = (c->pieces + cfg->ec_k - 1) / cfg->ec_k;
		*par = c->groups * cfg->ec_m;	/* parity pieces per step */
	}
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

/* the registered buffer and its views, the transform, the UC bookkeeping */
static int coll_alloc(struct wl_ctx *w, struct coll *c, size_t par, size_t need)
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
	if (cfg->mode == M_HADAMARD) {
		c->uin = calloc(c->ucount, sizeof(float));
		c->uout = calloc(c->ucount, sizeof(float));
		if (!c->uin || !c->uout)
			return -ENOMEM;
	}
	if (cfg->mode == M_HADAMARD && !cfg->pipeline &&
	    !(c->rht = rht_new(c->ucount, (size_t)c->cfg.block, c->cfg.seed)))
		return -ENOMEM;
	if (cfg->mode == M_HADAMARD && cfg->pipeline) {
		/* chunk g holds every n-th element from g: uchunk of them or one fewer */
		c->rht = rht_new(c->uchunk, (size_t)c->cfg.block, c->cfg.seed);
		if (c->ucount % (size_t)c->n && c->uchunk > 1)
			c->rht_last = rht_new(c->uchunk - 1, (size_t)c->cfg.block, c->cfg.seed);
		if (!c->rht || (c->ucount % (size_t)c->n && c->uchunk > 1 && !c->rht_last))
			return -ENOMEM;
		for (g = 0; g < c->n; g++) {
			size_t ug = (size_t)g < c->ucount ? (c->ucount - (size_t)g + (size_t)c->n - 1) /
							    (size_t)c->n : 0;

			c->rhtk[g] = !ug ? NULL : ug == c->uchunk ? c->rht : c->rht_last;
		}
	}
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
	if (c->sr) {	/* a step's bitmap, whole 8-byte words */
		c->bmlen = ((c->slots + 63) / 64) * 8;
		c->cbuf = calloc((size_t)MAX_RANKS * SR_RECVS + SR_NACK_RING, c->bmlen);
		if (!c->cbuf)
			return -ENOMEM;
		c->rto_ns = cfg->step_timeout_min;
	}
	if (cfg->mode == M_EC && !(c->ec = ec_new((int)cfg->ec_k, (int)cfg->ec_m))) {
		snprintf(w->err, sizeof(w->err), "ec_k %llu, ec_m %llu: %s",
			 (unsigned long long)cfg->ec_k, (unsigned long long)cfg->ec_m, strerror(errno));
		return -EINVAL;
	}
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

/* guard: the windows' receive regions: step g's data, [1] its parity (ec) */
static float *step_region(struct coll *c, int g, int t, size_t *len)
{
	int k = step_chunk(c, g);

	if (t) {
		*len = c->ec ? c->groups * c->cfg.ec_m * c->piece : 0;
		return c->prx + (size_t)g * c->groups * c->cfg.ec_m * c->piece;
	}
	*len = chunk_len(c, k);
	if (c->cfg.op != C_ALLGATHER && g < c->n - 1)	/* reduce-scatter: a stage slot */
		return c->stage + (size_t)g * c->chunk;
	return c->out + chunk_off(c, k);
}

/* guard: a type 2 memory window per step and region (UC modes) */
static int guard_open(struct wl_ctx *w, struct coll *c)
{
	size_t len;
	int g, t;

	if (!c->uc)
		c->cfg.guard = 0;
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
	if ((r = coll_layout(w, c, &pa, &par, &need)) || (r = coll_alloc(w, c, par, need)))
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
	if (c->mr && c->sr)
		c->cmr = ibv_reg_mr(c->pd, c->cbuf, ((size_t)MAX_RANKS * SR_RECVS + SR_NACK_RING) *
						    c->bmlen, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr || (c->sr && !c->cmr)) {
		snprintf(w->err, sizeof(w->err), "%s: PD/CQ/MR (%zu bytes): %s", w->dev->name, c->memlen,
			 strerror(errno));
		r = errno ? -errno : -ENOMEM;
		goto fail;
	}
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

static int prime(struct wl_ctx *w, struct coll *c);

/* guard: the right neighbour's windows, one pair per step */
static int peer_windows(struct wl_ctx *w, struct coll *c, const json_t *ep)
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
			    (r = peer_windows(w, c, json_array_get(peers, (size_t)j))))
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
	return prime(w, c);
}

/* wr_id: bit 63 = recv, bit 62 = READY, bit 61 = UC data, bit 60 = rc READY SEND,
 * low bits = step/rank */
#define WR_RECV (1ULL << 63)
#define WR_READY (1ULL << 62)
#define WR_LOSSY (1ULL << 61)
#define WR_RC_READY (1ULL << 60)	/* rc: a READY SEND, counted as a send */
#define WR_MW (1ULL << 59)	/* guard: a window's bind or revoke (LOCAL_INV) */

static void uc_arrival(struct coll *c, uint32_t imm, uint64_t *batch_now);

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

static uint8_t *ctl_buf(struct coll *c, int j, unsigned int slot)
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

	if (c->sr) {
		sge = (struct ibv_sge){ .addr = (uintptr_t)ctl_buf(c, j, slot),
					.length = (uint32_t)c->bmlen, .lkey = c->cmr->lkey };
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	return -ibv_post_recv(c->qp[j], &wr, &bad);
}

static int sr_on_nack(struct coll *c, int src, uint32_t imm, const uint8_t *bm);

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
static int poll_until(struct wl_ctx *w, struct coll *c, uint64_t want_recvd, int ready_from,
		      int drain, uint64_t deadline)
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

				if (c->uc && (imm & CTL_NACK)) {
					int e = sr_on_nack(c, src, imm, ctl_buf(c, src, slot));

					if (e) {
						snprintf(w->err, sizeof(w->err),
							 "rank %d: resend to rank %d: post failed: %s",
							 c->r, src, strerror(-e));
						return -EIO;
					}
				} else if (c->uc && (imm & CTL_DONE)) {
					c->sr_done[src] = ((imm >> 16) & 0xff) + 1;
				} else {
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

static uint8_t *got_of(struct coll *c, int gstep)
{
	return c->got + (size_t)gstep * c->slots;
}

static uint16_t *garr_of(struct coll *c, int gstep)
{
	return c->garr + (size_t)gstep * (c->groups ? c->groups : 1);
}

/* data pieces in group g of a step with np pieces */
static uint32_t group_k(const struct coll *c, uint32_t np, size_t g)
{
	size_t k = c->cfg.ec_k, lo = g * k;

	return lo >= np ? 0 : (uint32_t)(np - lo < k ? np - lo : k);
}

/* batch_now: one timestamp per polled batch (a clock read costs ~1.4 us under
 * TCG's hpet: not once per piece) */
static void uc_arrival(struct coll *c, uint32_t imm, uint64_t *batch_now)
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
	if (c->ec) {
		size_t grp = pc < c->pieces ? pc / c->cfg.ec_k : (pc - c->pieces) / c->cfg.ec_m;
		uint16_t *ga = garr_of(c, (int)gstep);

		if (++ga[grp] == group_k(c, c->step_np[gstep], grp))
			c->gready[gstep]++;
	}
	c->last_arrival[gstep] = *batch_now;
}

static int uc_post_recvs(struct coll *c)
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

/* one pass over the CQ while waiting for something: -EINTR once stopped,
 * -ETIMEDOUT past the deadline ("rank R: WHAT in time") */
static int poll_pass(struct wl_ctx *w, struct coll *c, uint64_t deadline, const char *what)
{
	int r;

	if ((r = poll_until(w, c, 0, -1, 0, deadline)))
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

/* guard: until the binds or revokes posted are done */
static int guard_wait(struct wl_ctx *w, struct coll *c)
{
	uint64_t deadline = wl_now_ns() + c->cfg.op_timeout;
	int r;

	while (c->mw_pending)
		if ((r = poll_pass(w, c, deadline, "memory windows not bound")))
			return r;
	return 0;
}

/* guard: the new iteration's windows, bound before its READY goes out */
static int guard_rebind(struct wl_ctx *w, struct coll *c)
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
static uint32_t peer_rkey(const struct coll *c, int g, int t)
{
	int right = (c->r + 1) % c->n;

	if (!c->cfg.guard)
		return c->peer_data[right].rkey;
	return (c->peer_mw[g][t] & ~0xffu) | (c->iter & 0xff);
}

static void uc_wr(struct coll *c, int k, const float *src, size_t n, uint64_t dst_off, uint32_t imm,
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
static int uc_post_burst(struct coll *c, int k, uint32_t hdr)
{
	struct ibv_send_wr *bad;

	uc_wr(c, k++, NULL, 0, 0, hdr | MARKER, 0);
	uc_wr(c, k++, NULL, 0, 0, hdr | MARKER, 0);
	c->swr[k - 1].next = NULL;
	c->swr[k - 1].send_flags = IBV_SEND_SIGNALED;
	c->sends++;
	return -ibv_post_send(c->dq[(c->r + 1) % c->n], c->swr, &bad);
}

/* ec: the parity of every group of the chunk at src (np pieces, len floats) */
static void ec_parity(struct coll *c, const float *src, size_t np, size_t len, float *ptx)
{
	unsigned char *data[256], *par[256];
	size_t g, i, kk = c->cfg.ec_k, m = c->cfg.ec_m;

	for (g = 0; g * kk < np; g++) {
		for (i = 0; i < kk; i++) {
			size_t p = g * kk + i;

			if (p >= np) {
				data[i] = (unsigned char *)c->zero;
			} else if ((p + 1) * c->piece > len) {	/* the short last piece */
				memset(c->tail, 0, c->piece * sizeof(float));
				memcpy(c->tail, src + p * c->piece, (len - p * c->piece) * sizeof(float));
				data[i] = (unsigned char *)c->tail;
			} else {
				data[i] = (unsigned char *)(src + p * c->piece);
			}
		}
		for (i = 0; i < m; i++)
			par[i] = (unsigned char *)(ptx + (g * m + i) * c->piece);
		ec_encode(c->ec, c->piece * sizeof(float), data, par);
	}
}

/* one step: our chunk region [src, src + len) to the right neighbour's byte
 * offset dst_off, parity after the data (ec), then two end markers; all in
 * one chained post (on rxe every post is a doorbell system call) */
static int uc_send(struct coll *c, const float *src, size_t len, size_t dst_off, int gstep)
{
	int k = 0;
	size_t p, np = (len + c->piece - 1) / c->piece, q, par;
	uint32_t hdr = ((c->iter & 0xff) << 24) | ((uint32_t)gstep << 16);
	uint32_t rkey = peer_rkey(c, gstep, 0);	/* the step's window, this iteration */

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
	if (c->ec) {
		/* a parity area per step: the last step's may still be on the wire */
		float *ptx = c->ptx + (size_t)gstep * c->groups * c->cfg.ec_m * c->piece;

		ec_parity(c, src, np, len, ptx);
		par = ((np + c->cfg.ec_k - 1) / c->cfg.ec_k) * c->cfg.ec_m;
		for (q = 0; q < par; q++, k++)
			uc_wr(c, k, ptx + q * c->piece, c->piece,
			      (uint64_t)((char *)(c->prx + ((size_t)gstep * c->groups * c->cfg.ec_m + q) *
								 c->piece) - c->mem),
			      hdr | (uint32_t)(c->pieces + q), peer_rkey(c, gstep, 1));
	}
	return uc_post_burst(c, k, hdr);
}

/* this rank's timeout estimate, us: timeout_mult x its step-time EWMA */
static uint32_t est_us(const struct coll *c)
{
	double e = c->ewma_ns * (double)c->cfg.timeout_mult_ppm / 1e6 / 1e3;

	return e < (double)CTL_EST_MAX ? (uint32_t)e : CTL_EST_MAX;
}

/* min(median of the ranks' estimates, cap), at least step_timeout_min */
static uint64_t agreed_timeout(struct coll *c)
{
	uint64_t v[MAX_RANKS], t;
	int i, j, m = 0;

	c->est_us[c->r] = est_us(c);
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

/* ec: rebuild what the groups' parity can; returns pieces rebuilt */
static uint64_t ec_rebuild(struct coll *c, int gstep, float *dst, size_t np, size_t len)
{
	unsigned char *ch[256], present[256];
	uint8_t *got = got_of(c, gstep);
	size_t g, i, kk = c->cfg.ec_k, m = c->cfg.ec_m;
	uint64_t fixed = 0;

	for (g = 0; g * kk < np; g++) {
		size_t miss = 0, dmiss = 0, tailp = SIZE_MAX;

		for (i = 0; i < kk + m; i++) {
			size_t p = g * kk + i;

			if (i < kk) {
				present[i] = p >= np || got[p];
				if (p >= np)
					ch[i] = (unsigned char *)c->zero;
				else if ((p + 1) * c->piece > len) {
					tailp = p;
					memset(c->tail, 0, c->piece * sizeof(float));
					if (got[p])
						memcpy(c->tail, dst + p * c->piece,
						       (len - p * c->piece) * sizeof(float));
					ch[i] = (unsigned char *)c->tail;
				} else
					ch[i] = (unsigned char *)(dst + p * c->piece);
				dmiss += !present[i];
			} else {
				present[i] = got[c->pieces + g * m + (i - kk)];
				ch[i] = (unsigned char *)(c->prx + ((size_t)gstep * c->groups * m +
								    g * m + (i - kk)) * c->piece);
			}
			miss += !present[i];
		}
		if (!dmiss || miss > m)
			continue;
		if (ec_recover(c->ec, c->piece * sizeof(float), ch, present))
			continue;
		for (i = 0; i < kk; i++) {
			size_t p = g * kk + i;

			if (p < np && !got[p]) {
				got[p] = 1;
				fixed++;
				if (p == tailp)
					memcpy(dst + p * c->piece, c->tail,
					       (len - p * c->piece) * sizeof(float));
			}
		}
	}
	return fixed;
}

/*
 * sr, as the sender: the right neighbour's NACK for step gs of this
 * iteration names the pieces it misses (a bit each); resend those from
 * where the step sent them (still unchanged: a step's source is overwritten
 * only by an arrival that the ring orders after the right neighbour has the
 * whole step), then the two end markers, in one chained post. A NACK of a
 * step not (yet) sent this iteration is counted and ignored: the receiver's
 * timer asks again.
 */
static int sr_on_nack(struct coll *c, int src, uint32_t imm, const uint8_t *bm)
{
	uint32_t it = (imm >> 16) & 0xff, gs = imm & 0xff;
	uint32_t hdr = ((c->iter & 0xff) << 24) | (gs << 16);
	int right = (c->r + 1) % c->n, k = 0;
	size_t p, np, len;
	uint32_t rkey;

	if (!c->sr || src != right || it != (c->iter & 0xff) || gs >= 2 * MAX_RANKS ||
	    !(c->sent_mask >> gs & 1)) {
		c->st.stale_nacks++;
		return 0;
	}
	len = c->sent_len[gs];
	np = (len + c->piece - 1) / c->piece;
	rkey = peer_rkey(c, (int)gs, 0);
	for (p = 0; p < np && p < c->bmlen * 8; p++) {
		if (!(bm[p >> 3] >> (p & 7) & 1))
			continue;
		uc_wr(c, k++, c->sent_src[gs] + p * c->piece,
		      len - p * c->piece < c->piece ? len - p * c->piece : c->piece,
		      c->sent_off[gs] + p * c->piece * sizeof(float), hdr | (uint32_t)p, rkey);
	}
	if (!k)
		return 0;
	c->st.resent_pieces += (uint64_t)k;
	return uc_post_burst(c, k, hdr);
}

/* sr: a control SEND to the left neighbour, the one this rank receives from:
 * a NACK (bm: the bitmap) or DONE */
static int sr_ctl_send(struct coll *c, uint32_t imm, uint8_t *bm)
{
	int left = (c->r + c->n - 1) % c->n, r;
	struct ibv_sge sge = { .addr = (uintptr_t)bm, .length = (uint32_t)c->bmlen,
			       .lkey = c->cmr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_READY, .sg_list = bm ? &sge : NULL,
				  .num_sge = bm ? 1 : 0, .opcode = IBV_WR_SEND_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.imm_data = htonl(imm);
	r = -ibv_post_send(c->qp[left], &wr, &bad);
	c->csends += !r;	/* reaped whenever */
	return r;
}

/* sr: ask the left neighbour for step gstep's missing pieces (of np); RECVs
 * for their arrival are posted first. Returns 1 when not sent now (too many
 * control SENDs unacknowledged: the RC QP is itself recovering) */
static int sr_nack(struct coll *c, int gstep, size_t np)
{
	uint8_t *bm = c->cbuf + ((size_t)MAX_RANKS * SR_RECVS + c->nack_next % SR_NACK_RING) *
					c->bmlen;
	uint8_t *g = got_of(c, gstep);
	size_t p;
	int r;

	if (c->csends >= MAX_RANKS)
		return 1;
	c->nack_next++;
	memset(bm, 0, c->bmlen);
	for (p = 0; p < np; p++)
		if (!g[p])
			bm[p >> 3] |= (uint8_t)(1u << (p & 7));
	if ((r = uc_post_recvs(c)) ||
	    (r = sr_ctl_send(c, CTL_NACK | (c->iter & 0xff) << 16 | (uint32_t)gstep, bm)))
		return r;
	c->st.nacks++;
	return 0;
}

/* a step of need pieces begins (lossy and sr): counted; the agreed timeout */
static uint64_t step_begin(struct coll *c, size_t need)
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
static uint64_t giveup_at(const struct coll *c, int gstep, uint64_t t0, uint64_t agreed)
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
static void step_ewma(struct coll *c, int gstep, uint64_t t0, size_t need)
{
	double d, a = (double)c->cfg.ewma_ppm / 1e6;

	if (!c->arrived[gstep] || c->last_arrival[gstep] <= t0)
		return;
	d = (double)(c->last_arrival[gstep] - t0) * (double)need / (double)c->arrived[gstep];
	c->ewma_ns = c->ewma_ns ? (1 - a) * c->ewma_ns + a * d : d;
}

/* sr: a NACK-to-first-resend time (RFC 6298's SRTT and RTTVAR) */
static void sr_rtt(struct coll *c, uint64_t sample)
{
	double x = (double)sample, rto;

	if (!c->srtt_ns) {
		c->srtt_ns = x;
		c->rttvar_ns = x / 2;
	} else {
		c->rttvar_ns = 0.75 * c->rttvar_ns + 0.25 * fabs(c->srtt_ns - x);
		c->srtt_ns = 0.875 * c->srtt_ns + 0.125 * x;
	}
	rto = c->srtt_ns + 4 * c->rttvar_ns;
	c->rto_ns = rto < (double)SR_RTO_MIN_NS ? SR_RTO_MIN_NS :
		    rto > (double)c->cfg.step_timeout_max ? c->cfg.step_timeout_max : (uint64_t)rto;
	c->st.srtt_ns = (uint64_t)c->srtt_ns;
}

/*
 * sr: wait for step gstep (chunk k) until every piece is in. A NACK for the
 * missing ones goes out when
 *   - an end marker came and the link then idled for idle_grace (the burst,
 *     first or resent, is over: what is missing was lost), or
 *   - before the first NACK, the deadline lossy gives up at (the agreed
 *     timeout with the link idle as long again; nothing at all yet: the
 *     cap), or after one, the retransmission timeout (RTO) since it:
 *     RFC 6298's SRTT + 4 RTTVAR of the NACK-to-resend times (Karn: only a
 *     NACK answered without another sent), at least 1 ms, step_timeout_max
 *     at most, step_timeout_min before the first sample, doubled on each
 *     expiry.
 * An iteration still short after op_timeout fails.
 */
static int sr_wait(struct wl_ctx *w, struct coll *c, int gstep, int k)
{
	size_t need = npieces(c, k);
	uint64_t t0 = wl_now_ns(), now, dl, tn = 0, agreed = step_begin(c, need);
	uint64_t fail = t0 + c->cfg.op_timeout, missing0 = 0;
	uint32_t had = 0;
	unsigned int spin = 0, unanswered = 0, nacks = 0;
	int r;

	while (c->arrived[gstep] < need) {
		now = wl_now_ns();
		if (now >= fail) {
			snprintf(w->err, sizeof(w->err),
				 "rank %d: step %d: %u of %zu pieces from rank %d after %u NACKs",
				 c->r, gstep, c->arrived[gstep], need, (c->r + c->n - 1) % c->n, nacks);
			return -ETIMEDOUT;
		}
		if (c->marker[gstep] && now - c->last_arrival[gstep] >= c->cfg.idle_grace) {
			c->st.marker_ends++;
		} else {
			dl = tn ? tn + c->rto_ns : giveup_at(c, gstep, t0, agreed);
			if (now < dl) {
				uint64_t d = dl < fail ? dl : fail;

				if (c->marker[gstep] && c->last_arrival[gstep] + c->cfg.idle_grace < d)
					d = c->last_arrival[gstep] + c->cfg.idle_grace;
				if ((r = poll_until(w, c, 0, -1, 0, d)))
					return r;
				if (c->arrived[gstep] > had) {
					if (tn && unanswered == 1)
						sr_rtt(c, c->last_arrival[gstep] - tn);
					unanswered = 0;
					had = c->arrived[gstep];
				}
				if (!(++spin & 63) && *w->stop)
					return -EINTR;
				continue;
			}
			/* a last look first, as lossy's (a late wake-up) */
			had = c->arrived[gstep];
			if ((r = poll_until(w, c, 0, -1, 0, 0)))
				return r;
			if (c->arrived[gstep] != had) {
				c->st.late_looks++;
				continue;
			}
			if (c->marker[gstep])	/* the burst's end: its grace first */
				continue;
			c->st.timeouts++;
			if (tn) {	/* the NACK or its resends were lost: back off */
				c->rto_ns = 2 * c->rto_ns < c->cfg.step_timeout_max ?
						    2 * c->rto_ns : c->cfg.step_timeout_max;
			}
		}
		if (!tn)
			missing0 = need - c->arrived[gstep];
		if ((r = sr_nack(c, gstep, need)) < 0) {
			snprintf(w->err, sizeof(w->err), "rank %d: NACK post failed: %s", c->r,
				 strerror(-r));
			return r;
		}
		nacks += !r;
		c->marker[gstep] = 0;
		tn = wl_now_ns();
		had = c->arrived[gstep];
		unanswered += !r;
	}
	c->st.recovered_pieces += missing0;
	c->st.rto_ns = c->rto_ns;
	step_ewma(c, gstep, t0, need);
	return 0;
}

/* sr: this rank has all of the iteration (DONE to the left neighbour); wait
 * till the right one has all we sent: until then a NACK may need our
 * buffers as they are */
static int sr_finish(struct wl_ctx *w, struct coll *c, uint64_t deadline)
{
	int right = (c->r + 1) % c->n, r;
	uint32_t want = (c->iter & 0xff) + 1;
	char what[48];

	if ((r = sr_ctl_send(c, CTL_DONE | (c->iter & 0xff) << 16, NULL))) {
		snprintf(w->err, sizeof(w->err), "rank %d: DONE post failed: %s", c->r, strerror(-r));
		return r;
	}
	snprintf(what, sizeof(what), "no DONE from rank %d", right);
	while (c->sr_done[right] != want)
		if ((r = poll_pass(w, c, deadline, what)))
			return r;
	return 0;
}

/*
 * Wait for step gstep (chunk k into [dst, dst + len)), as the comment at the
 * top says; then rebuild (ec), fill what is still missing (zero or the
 * previous value), and update this rank's estimate.
 */
static int uc_wait(struct wl_ctx *w, struct coll *c, int gstep, int k, float *dst)
{
	uint8_t *g = got_of(c, gstep);
	size_t need = npieces(c, k), p, len = chunk_len(c, k);
	size_t ngroups = c->ec ? (need + c->cfg.ec_k - 1) / c->cfg.ec_k : 0;
	uint64_t t0, now, dl, agreed;
	unsigned int spin = 0;
	int r, timed_out = 0;

	if (c->sr)
		return sr_wait(w, c, gstep, k);
	t0 = wl_now_ns();
	agreed = step_begin(c, need);
	for (;;) {
		if (c->arrived[gstep] >= need || (c->ec && c->gready[gstep] >= ngroups))
			break;
		now = wl_now_ns();
		if (c->marker[gstep] && now - c->last_arrival[gstep] >= c->cfg.idle_grace) {
			c->st.marker_ends++;
			break;
		}
		dl = giveup_at(c, gstep, t0, agreed);	/* then the rest is lost */
		if (now >= dl) {
			/* a last look at the CQ first: the deadline can have passed
			 * while this rank was not running (a busy host: the sleep
			 * below returns late), with the pieces already there */
			uint32_t had = c->arrived[gstep];
			uint8_t had_marker = c->marker[gstep];

			if ((r = poll_until(w, c, 0, -1, 0, 0)))
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
		if ((r = poll_until(w, c, 0, -1, 0, dl)))
			return r;
		if (!(++spin & 63) && *w->stop)
			return -EINTR;
	}
	c->st.timeouts += (uint64_t)timed_out;
	step_ewma(c, gstep, t0, need);
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
	if (c->ec)
		c->st.recovered_pieces += ec_rebuild(c, gstep, dst, need, len);
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

/* every RECV of one iteration, in the order the left neighbour sends */
static int post_recvs_other(struct coll *c);

static int post_recvs(struct coll *c)
{
	int n = c->n, r = c->r, s, k, ret = 0;
	int rs = c->cfg.op != C_ALLGATHER, ag = c->cfg.op != C_REDUCE_SCATTER;
	struct ibv_qp *left = c->qp[(r + n - 1) % n];

	if (c->cfg.op == C_BROADCAST || c->cfg.op == C_ALLTOALL)
		return post_recvs_other(c);
	if (c->uc) {
		/* a new iteration: its arrivals count from zero */
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
static int alltoall_once(struct wl_ctx *w, struct coll *c, uint64_t deadline)
{
	int n = c->n, r = c->r, j, ret;
	uint64_t base = c->recvd;

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
	return poll_until(w, c, base + (uint64_t)(n - 1), -1, 1, deadline);
}

static void add_chunk(struct coll *c, int k, const float *stage)
{
	size_t off = chunk_off(c, k), len = chunk_len(c, k), e;

	for (e = 0; e < len; e++)
		c->out[off + e] = c->in[off + e] + stage[e];
}

/* hadamard, pipeline: chunk k of the input into the wire domain, once a step */
static void enc_chunk(struct coll *c, int k)
{
	uint64_t t0;

	if (!c->rht || !c->cfg.pipeline || (c->enc_done >> k & 1))
		return;
	t0 = wl_now_ns();
	if (c->rhtk[k])
		rht_fwd_st(c->rhtk[k], c->uin + k, (size_t)c->n, c->in + chunk_off(c, k));
	c->enc_done |= 1u << k;
	c->st.step_codec_ns += wl_now_ns() - t0;
}

/* hadamard, pipeline: chunk k of the (final) output back, scaled */
static void dec_chunk(struct coll *c, int k, float scale)
{
	uint64_t t0;

	if (!c->rht || !c->cfg.pipeline || (c->dec_done >> k & 1))
		return;
	t0 = wl_now_ns();
	if (c->rhtk[k])
		rht_inv_st(c->rhtk[k], c->out + chunk_off(c, k), c->uout + k, (size_t)c->n, scale);
	c->dec_done |= 1u << k;
	c->st.step_codec_ns += wl_now_ns() - t0;
}

/* hadamard, pipeline, without rescale: the transform beside the transport
 * (a chunk encoded while the one before is on the wire, decoded once final) */
static int pipelined(const struct coll *c)
{
	return c->rht && c->cfg.pipeline && !c->cfg.rescale;
}

/* one ring collective, its RECVs already posted */
static int ring_once(struct wl_ctx *w, struct coll *c)
{
	int n = c->n, r = c->r, s, ret, k, right_rank = (r + 1) % n;
	int rs = c->cfg.op != C_ALLGATHER, ag = c->cfg.op != C_REDUCE_SCATTER;
	struct ibv_qp *right = c->qp[right_rank];
	uint64_t deadline = wl_now_ns() + c->cfg.op_timeout, base = c->recvd;

	if (c->cfg.op == C_ALLTOALL)
		return alltoall_once(w, c, deadline);
	/* the right neighbour has posted its RECVs. rc: keep one READY RECV posted
	 * for the next iteration (its next READY cannot come before our sends);
	 * the UC modes repost as READYs complete */
	if ((ret = poll_until(w, c, 0, right_rank, 0, deadline)))
		return ret;
	c->ready[right_rank]--;
	if (!c->uc && (ret = post_recv(c, right, NULL, 0, WR_READY | (uint64_t)right_rank)))
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
		enc_chunk(c, r);
		memcpy(c->out + chunk_off(c, r), c->in + chunk_off(c, r), chunk_len(c, r) * sizeof(float));
		for (s = 0; s < n - 1; s++) {
			float *st = c->stage + (size_t)s * c->chunk;

			k = (r - s + 2 * n) % n;
			if (c->uc) {
				if ((ret = uc_send(c, c->out + chunk_off(c, k), chunk_len(c, k),
						   (size_t)((char *)st - c->mem), s)))
					goto post_fail;
				/* hadamard: the chunk this step's arrival is added to, encoded
				 * while the step is on the wire */
				enc_chunk(c, (r - s - 1 + 2 * n) % n);
				if ((ret = uc_wait(w, c, s, (r - s - 1 + 2 * n) % n, st)))
					return ret;
			} else {
				if ((ret = post_send(c, right, c->out + chunk_off(c, k), chunk_len(c, k),
						     s)))
					goto post_fail;
				c->sends++;
				if ((ret = poll_until(w, c, base + s + 1, -1, 0, deadline)))
					return ret;
			}
			add_chunk(c, (r - s - 1 + 2 * n) % n, st);
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
			if (c->uc) {
				int gs = (rs ? n - 1 : 0) + s, kr = (own - s - 1 + 2 * n) % n;

				if ((ret = uc_send(c, c->out + chunk_off(c, k), chunk_len(c, k),
						   (size_t)((char *)(c->out + chunk_off(c, k)) - c->mem),
						   gs)))
					goto post_fail;
				/* hadamard: the chunk being forwarded is final, decoded while
				 * the step is on the wire (the send only reads it) */
				if (pipelined(c))
					dec_chunk(c, k, 1.0f);
				if ((ret = uc_wait(w, c, gs, kr, c->out + chunk_off(c, kr))))
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
	if (c->sr && (ret = sr_finish(w, c, deadline)))
		return ret;
	return poll_until(w, c, 0, -1, 1, deadline);
post_fail:
	snprintf(w->err, sizeof(w->err), "rank %d: post failed: %s", r, strerror(-ret));
	return ret;
}

/* this rank's RECVs for the next iteration are posted: tell the left
 * neighbour (UC modes: every rank, with our timeout estimate) */
static int send_ready(struct coll *c)
{
	int j, ret = 0, left = (c->r + c->n - 1) % c->n;
	uint32_t est = est_us(c);

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
		for (i = 0; i < (c->sr ? SR_RECVS : c->uc ? READY_RECVS : 1) && !ret; i++)
			ret = ctl_recv(c, j, (unsigned int)i);
	}
	return ret;
}

/* the first iteration's RECVs (READYs and data), once */
static int prime(struct wl_ctx *w, struct coll *c)
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

	if ((r = prime(w, c)))
		return r;
	if ((r = send_ready(c)))
		snprintf(w->err, sizeof(w->err), "rank %d: post READY failed: %s", c->r, strerror(-r));
	return r;
}

int coll_step(struct wl_ctx *w, struct coll *c, uint64_t *ns)
{
	uint64_t t0 = wl_now_ns(), tr;
	int r, k;

	c->it_lost = c->it_expected = 0;
	c->st.step_codec_ns = 0;
	c->enc_done = c->dec_done = 0;
	/* hadamard: the whole buffer encoded before the ring; pipelined, only
	 * the first chunk sent (ring_once encodes and decodes the rest beside
	 * the transport) */
	if (c->rht && !c->cfg.pipeline) {
		rht_fwd(c->rht, c->uin, c->in);
		c->st.step_codec_ns = wl_now_ns() - t0;
	}
	for (k = 0; c->rht && k < c->n; k++)
		if (!pipelined(c) || k == c->r)
			enc_chunk(c, k);
	tr = wl_now_ns();
	if ((r = ring_once(w, c)))
		return r;
	c->st.step_transport_ns = wl_now_ns() - tr;
	if (c->prev)
		memcpy(c->prev, c->out, c->count * sizeof(float));
	if (c->rht) {
		/* 1/q: the fraction of coefficients that made it through this rank */
		float scale = c->cfg.rescale && c->it_expected > c->it_lost ?
				      (float)((double)c->it_expected /
					      (double)(c->it_expected - c->it_lost)) : 1.0f;
		uint64_t t1 = wl_now_ns();

		if (!c->cfg.pipeline) {
			rht_inv(c->rht, c->out, c->uout, scale);
			c->st.step_codec_ns += wl_now_ns() - t1;
		}
		for (k = 0; k < c->n; k++)	/* what the ring left: the last chunk, or all */
			dec_chunk(c, k, scale);
	}
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
