/* SPDX-License-Identifier: MIT */
/*
 * Inside the collective engine: the state of one collective (struct coll),
 * shared by the ring (coll.c), the UC transport the lossy modes share
 * (coll_uc.c, with its memory-window guard) and each recovery mode's own
 * file (coll_rc.c, coll_hadamard.c, coll_ec.c, coll_sr.c).
 *
 * A mode is a struct coll_mode_ops, chosen once from its enum rtb_mode
 * when the collective opens (after rdma-core's verbs_context_ops): an
 * operation left NULL means the default, which is doing nothing unless
 * its comment says otherwise. The ring never asks which mode it runs.
 */
#ifndef RTB_COLL_INT_H
#define RTB_COLL_INT_H

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

/* wr_id: bit 63 = recv, bit 62 = READY, bit 61 = UC data, bit 60 = rc READY SEND,
 * low bits = step/rank */
#define WR_RECV (1ULL << 63)
#define WR_READY (1ULL << 62)
#define WR_LOSSY (1ULL << 61)
#define WR_RC_READY (1ULL << 60)	/* rc: a READY SEND, counted as a send */
#define WR_MW (1ULL << 59)	/* guard: a window's bind or revoke (LOCAL_INV) */

struct coll;

struct coll_mode_ops {
	/* the data go on UC QPs as WRITE_WITH_IMM pieces (coll_uc.c); else
	 * as SENDs on the RC QPs */
	int uc;
	/* control RECVs kept posted per peer (READYs, and sr's NACKs) */
	unsigned int ready_recvs;
	/* what only this mode refuses: 0, or -EINVAL with the reason in e */
	int (*check)(const struct coll_cfg *cfg, char *e, size_t n);
	/* c->count and c->chunk from c->ucount (default: the buffer as it is,
	 * in n chunks) */
	void (*layout)(struct coll *c);
	/* parity pieces per step (setting c->groups) */
	size_t (*parity)(struct coll *c);
	/* the mode's own state, once the buffer is registered */
	int (*setup)(struct wl_ctx *w, struct coll *c);
	void (*close)(struct coll *c);
	/* an iteration's input into the wire domain, before the ring; its
	 * output back after it (default: the wire's buffers are the user's) */
	void (*begin)(struct coll *c);
	void (*end)(struct coll *c);
	/* reduce-scatter: chunk k is next to be added to */
	void (*next_sum)(struct coll *c, int k);
	/* allgather: chunk k is final, being forwarded */
	void (*final)(struct coll *c, int k);
	/* every RECV of one ring iteration, in the order the left neighbour
	 * sends (rc: SEND/RECV; UC: the arrival bookkeeping reset) */
	int (*recvs)(struct coll *c);
	/* step gstep: [src, src + len) to the right neighbour, at byte
	 * offset dst_off of its buffer (UC); then wait for its arrival in
	 * [dst, ...) (chunk k), by the deadline */
	int (*send)(struct coll *c, const float *src, size_t len, size_t dst_off, int gstep);
	int (*wait)(struct wl_ctx *w, struct coll *c, int gstep, int k, float *dst,
		    uint64_t deadline);
	/* the ring is done on this rank: what it still owes its neighbours */
	int (*finish)(struct wl_ctx *w, struct coll *c, uint64_t deadline);
	/* the mode's own figures into a run's result o (coll_stats_json) */
	void (*stats)(const struct coll *c, json_t *o);
	/* --- the UC transport's hooks */
	/* after a step's data WRs from index k: more of them (ec: parity);
	 * returns the new count */
	int (*more_wrs)(struct coll *c, const float *src, size_t np, size_t len, int gstep, int k);
	/* piece pc of step gstep arrived (first time) */
	void (*arrival)(struct coll *c, int gstep, uint32_t pc);
	/* step gstep has enough of its need pieces (default: all of them) */
	int (*enough)(const struct coll *c, int gstep, size_t need);
	/* a step cut short: pieces rebuilt in [dst, dst + len) */
	uint64_t (*rebuild)(struct coll *c, int gstep, float *dst, size_t np, size_t len);
	/* a control SEND with an immediate from rank src, its payload in
	 * control RECV slot: 1 handled, 0 a READY, -errno */
	int (*control)(struct coll *c, int src, uint32_t imm, unsigned int slot);
};

extern const struct coll_mode_ops coll_rc_ops, coll_lossy_ops, coll_hadamard_ops, coll_ec_ops,
	coll_sr_ops;

struct coll {
	struct coll_cfg cfg;
	const struct coll_mode_ops *ops;	/* the mode's, chosen once (coll_open) */
	int n, r;
	int uc;		/* ops->uc: the data on UC QPs */
	uint64_t recv_base;	/* rc: data RECVs done before this iteration */
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
	size_t groups;		/* ec groups per chunk (at most); 0 in other modes */
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
	 * from), and the RTO state of the link from the left neighbour;
	 * bmlen: a NACK bitmap's bytes (0: control RECVs carry nothing) */
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

/* --- chunks and steps (the ring's bookkeeping) */
static inline size_t chunk_off(const struct coll *c, int k)
{
	return (size_t)k * c->chunk;
}

static inline size_t chunk_len(const struct coll *c, int k)
{
	size_t off = chunk_off(c, k);

	return off >= c->count ? 0 : (c->count - off < c->chunk ? c->count - off : c->chunk);
}

static inline size_t npieces(const struct coll *c, int k)
{
	return (chunk_len(c, k) + c->piece - 1) / c->piece;
}

/* the chunk rank r holds reduced after reduce-scatter */
static inline int ag_owner(const struct coll *c)
{
	return c->cfg.op == C_ALLGATHER ? c->r : (c->r + 1) % c->n;
}

/* the chunk received in global step gstep (reduce-scatter 0..n-2, then allgather) */
static inline int step_chunk(const struct coll *c, int gstep)
{
	int n = c->n, rs = c->cfg.op != C_ALLGATHER;

	if (rs && gstep < n - 1)
		return (c->r - gstep - 1 + 2 * n) % n;
	return (ag_owner(c) - (gstep - (rs ? n - 1 : 0)) - 1 + 2 * n) % n;
}

/* UC: step gstep's arrival bitmap, and ec's pieces arrived per group */
static inline uint8_t *got_of(struct coll *c, int gstep)
{
	return c->got + (size_t)gstep * c->slots;
}

static inline uint16_t *garr_of(struct coll *c, int gstep)
{
	return c->garr + (size_t)gstep * (c->groups ? c->groups : 1);
}

/* --- coll.c: the ring, posting and polling */
/* the first iteration's RECVs (READYs and data), once (at connect) */
int coll_prime(struct wl_ctx *w, struct coll *c);
int coll_post_recv(struct coll *c, struct ibv_qp *qp, float *dst, size_t n, uint64_t id);
int coll_post_send(struct coll *c, struct ibv_qp *qp, const float *src, size_t n, uint64_t id);
/* control RECV slot of rank j (sr: with a bitmap's room) */
uint8_t *coll_ctl_buf(struct coll *c, int j, unsigned int slot);
/* completions, counted in c: sends outstanding, data RECVs done (ever) and
 * READYs received but not yet used; poll until all three reach the wants
 * (or, with nothing wanted, once) */
int coll_poll(struct wl_ctx *w, struct coll *c, uint64_t want_recvd, int ready_from, int drain,
	      uint64_t deadline);
/* one pass over the CQ while waiting for something: -EINTR once stopped,
 * -ETIMEDOUT past the deadline ("rank R: WHAT in time") */
int coll_poll_pass(struct wl_ctx *w, struct coll *c, uint64_t deadline, const char *what);

/* --- coll_uc.c: the UC transport (lossy, hadamard, ec, sr) */
void uc_arrival(struct coll *c, uint32_t imm, uint64_t *batch_now);
int uc_post_recvs(struct coll *c);
int uc_recvs(struct coll *c);
void uc_wr(struct coll *c, int k, const float *src, size_t n, uint64_t dst_off, uint32_t imm,
	   uint32_t rkey);
int uc_post_burst(struct coll *c, int k, uint32_t hdr);
int uc_send(struct coll *c, const float *src, size_t len, size_t dst_off, int gstep);
int uc_wait(struct wl_ctx *w, struct coll *c, int gstep, int k, float *dst, uint64_t deadline);
uint32_t uc_peer_rkey(const struct coll *c, int g, int t);
/* this rank's timeout estimate, us */
uint32_t uc_est_us(const struct coll *c);
uint64_t uc_step_begin(struct coll *c, size_t need);
uint64_t uc_giveup_at(const struct coll *c, int gstep, uint64_t t0, uint64_t agreed);
void uc_step_ewma(struct coll *c, int gstep, uint64_t t0, size_t need);
/* guard: windows opened, the peer's read, rebound each iteration */
int guard_open(struct wl_ctx *w, struct coll *c);
int guard_peer_windows(struct wl_ctx *w, struct coll *c, const json_t *ep);
int guard_rebind(struct wl_ctx *w, struct coll *c);

#endif
