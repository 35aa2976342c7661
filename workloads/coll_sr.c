// SPDX-License-Identifier: MIT
/*
 * sr: selective repeat in software (the IRN / SRNIC class), on the UC
 * transport (coll_uc.c). The receiver asks for the pieces it misses with a
 * bitmap (a NACK on the RC control QP) and the sender resends those only;
 * every step completes exactly. When a NACK goes out, and the
 * retransmission timeout after it: sr_wait's comment.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "coll_int.h"

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

	if (src != right || it != (c->iter & 0xff) || gs >= 2 * MAX_RANKS ||
	    !(c->sent_mask >> gs & 1)) {
		c->st.stale_nacks++;
		return 0;
	}
	len = c->sent_len[gs];
	np = (len + c->piece - 1) / c->piece;
	rkey = uc_peer_rkey(c, (int)gs, 0);
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

/* a control SEND from rank src with an immediate: a NACK (its bitmap in
 * control RECV slot), or DONE */
static int sr_control(struct coll *c, int src, uint32_t imm, unsigned int slot)
{
	if (imm & CTL_NACK)
		return sr_on_nack(c, src, imm, coll_ctl_buf(c, src, slot)) ?: 1;
	if (imm & CTL_DONE) {
		c->sr_done[src] = ((imm >> 16) & 0xff) + 1;
		return 1;
	}
	return 0;
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
static int sr_wait(struct wl_ctx *w, struct coll *c, int gstep, int k, float *dst,
		   uint64_t deadline)
{
	size_t need = npieces(c, k);
	uint64_t t0 = wl_now_ns(), now, dl, tn = 0, agreed = uc_step_begin(c, need);
	uint64_t fail = t0 + c->cfg.op_timeout, missing0 = 0;
	uint32_t had = 0;
	unsigned int spin = 0, unanswered = 0, nacks = 0;
	int r;

	(void)dst;	/* the pieces land in place */
	(void)deadline;	/* op_timeout from the step's start */
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
			dl = tn ? tn + c->rto_ns : uc_giveup_at(c, gstep, t0, agreed);
			if (now < dl) {
				uint64_t d = dl < fail ? dl : fail;

				if (c->marker[gstep] && c->last_arrival[gstep] + c->cfg.idle_grace < d)
					d = c->last_arrival[gstep] + c->cfg.idle_grace;
				if ((r = coll_poll(w, c, 0, -1, 0, d)))
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
			if ((r = coll_poll(w, c, 0, -1, 0, 0)))
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
	uc_step_ewma(c, gstep, t0, need);
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
		if ((r = coll_poll_pass(w, c, deadline, what)))
			return r;
	return 0;
}

/* the control RECVs' bitmaps and the NACK send ring, registered */
static int sr_setup(struct wl_ctx *w, struct coll *c)
{
	size_t len;

	c->bmlen = ((c->slots + 63) / 64) * 8;	/* a step's bitmap, whole 8-byte words */
	len = ((size_t)MAX_RANKS * SR_RECVS + SR_NACK_RING) * c->bmlen;
	c->rto_ns = c->cfg.step_timeout_min;
	c->cbuf = calloc(1, len);
	if (c->cbuf)
		c->cmr = ibv_reg_mr(c->pd, c->cbuf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!c->cmr) {
		snprintf(w->err, sizeof(w->err), "%s: sr control buffers (%zu bytes): %s",
			 w->dev->name, len, strerror(errno));
		return errno ? -errno : -ENOMEM;
	}
	return 0;
}

static void sr_close(struct coll *c)
{
	if (c->cmr)
		ibv_dereg_mr(c->cmr);
	free(c->cbuf);
}

/* what the selective repeat did */
static void sr_stats(const struct coll *c, json_t *o)
{
	json_object_update_new(o, json_pack("{s:I,s:I,s:I,s:I,s:I}", "nacks",
					    (json_int_t)c->st.nacks, "resent_pieces",
					    (json_int_t)c->st.resent_pieces, "stale_nacks",
					    (json_int_t)c->st.stale_nacks, "rto_ns",
					    (json_int_t)c->st.rto_ns, "srtt_ns",
					    (json_int_t)c->st.srtt_ns));
}

const struct coll_mode_ops coll_sr_ops = {
	.uc = 1,
	.ready_recvs = SR_RECVS,
	.setup = sr_setup,
	.close = sr_close,
	.recvs = uc_recvs,
	.send = uc_send,
	.wait = sr_wait,
	.finish = sr_finish,
	.control = sr_control,
	.stats = sr_stats,
};
