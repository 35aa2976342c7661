// SPDX-License-Identifier: MIT
/*
 * hadamard: lossy (coll_uc.c) on the randomized Hadamard transform of the
 * buffer (lib/rht): a loss becomes small noise spread over many elements;
 * exact within float rounding when nothing is lost. The whole buffer is
 * transformed before the ring and back after it. pipeline=on transforms
 * each rank's chunk (every n-th element) on its own instead, beside the
 * transport: a chunk encoded while the one before is on the wire, decoded
 * as soon as it is final (but with rescale).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll_int.h"

static int had_check(const struct coll_cfg *c, char *e, size_t n)
{
	if (c->op != C_ALLREDUCE)
		snprintf(e, n, "mode hadamard: allreduce only (the transform commutes with the sum)");
	else if (c->block && (c->block < 8 || (c->block & (c->block - 1))))
		snprintf(e, n, "block %llu: expected a power of two >= 8 (or 0: chosen by size)",
			 (unsigned long long)c->block);
	else
		return 0;
	return -EINVAL;
}

/* the wire's elements: the transform's length (padded to whole blocks) */
static void had_layout(struct coll *c)
{
	if (c->cfg.pipeline) {	/* by chunk, each whole blocks */
		c->uchunk = (c->ucount + (size_t)c->n - 1) / (size_t)c->n;
		if (!c->cfg.block)
			c->cfg.block = rht_block_for(c->uchunk);
		c->chunk = rht_wire_len(c->uchunk, c->cfg.block);
		c->count = c->chunk * (size_t)c->n;
	} else {	/* the whole buffer */
		if (!c->cfg.block)
			c->cfg.block = rht_block_for(c->ucount);
		c->count = rht_wire_len(c->ucount, c->cfg.block);
		c->chunk = (c->count + (size_t)c->n - 1) / (size_t)c->n;
	}
	c->st.block = c->cfg.block;
}

/* the user's buffers apart from the wire's, and the transforms */
static int had_setup(struct wl_ctx *w, struct coll *c)
{
	int g;

	(void)w;
	c->uin = calloc(c->ucount, sizeof(float));
	c->uout = calloc(c->ucount, sizeof(float));
	if (!c->uin || !c->uout)
		return -ENOMEM;
	if (!c->cfg.pipeline)
		return (c->rht = rht_new(c->ucount, (size_t)c->cfg.block, c->cfg.seed)) ? 0 : -ENOMEM;
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
	return 0;
}

static void had_close(struct coll *c)
{
	rht_free(c->rht);
	rht_free(c->rht_last);
	if (c->uin != c->in)
		free(c->uin);
	if (c->uout != c->out)
		free(c->uout);
}

/* hadamard, pipeline: chunk k of the input into the wire domain, once a step */
static void enc_chunk(struct coll *c, int k)
{
	uint64_t t0;

	if (!c->cfg.pipeline || (c->enc_done >> k & 1))
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

	if (!c->cfg.pipeline || (c->dec_done >> k & 1))
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
	return c->cfg.pipeline && !c->cfg.rescale;
}

/* the whole buffer encoded before the ring; pipelined, only this rank's
 * chunk (the ring encodes and decodes the rest beside the transport) */
static void had_begin(struct coll *c)
{
	uint64_t t0 = wl_now_ns();
	int k;

	if (!c->cfg.pipeline) {
		rht_fwd(c->rht, c->uin, c->in);
		c->st.step_codec_ns = wl_now_ns() - t0;
	}
	for (k = 0; k < c->n; k++)
		if (!pipelined(c) || k == c->r)
			enc_chunk(c, k);
}

/* the output back: with rescale, scaled by 1/q, the fraction of
 * coefficients that made it through this rank; pipelined, what the ring
 * left (its last chunk) */
static void had_end(struct coll *c)
{
	float scale = c->cfg.rescale && c->it_expected > c->it_lost ?
			      (float)((double)c->it_expected /
				      (double)(c->it_expected - c->it_lost)) : 1.0f;
	uint64_t t1 = wl_now_ns();
	int k;

	if (!c->cfg.pipeline) {
		rht_inv(c->rht, c->out, c->uout, scale);
		c->st.step_codec_ns += wl_now_ns() - t1;
	}
	for (k = 0; k < c->n; k++)
		dec_chunk(c, k, scale);
}

/* allgather: chunk k is final, decoded while its step is on the wire (the
 * send only reads it) */
static void had_final(struct coll *c, int k)
{
	if (pipelined(c))
		dec_chunk(c, k, 1.0f);
}

/* its block, and how the transform ran: float or fixed point (lib/rht.h) */
static void had_stats(const struct coll *c, json_t *o)
{
	json_object_set_new(o, "block", json_integer((json_int_t)c->st.block));
	json_object_set_new(o, "transform", json_string(rht_path()));
	json_object_set_new(o, "transform_why", json_string(rht_path_why()));
}

const struct coll_mode_ops coll_hadamard_ops = {
	.uc = 1,
	.ready_recvs = READY_RECVS,
	.check = had_check,
	.layout = had_layout,
	.setup = had_setup,
	.close = had_close,
	.begin = had_begin,
	.end = had_end,
	.next_sum = enc_chunk,
	.final = had_final,
	.recvs = uc_recvs,
	.send = uc_send,
	.wait = uc_wait,
	.stats = had_stats,
};
