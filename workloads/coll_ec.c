// SPDX-License-Identifier: MIT
/*
 * ec: lossy plus ISA-L parity (lib/ec), on the UC transport (coll_uc.c):
 * m parity pieces per group of k data pieces, sent after a step's data,
 * rebuild up to m lost pieces of the group. A step ends as soon as every
 * group has enough to be rebuilt.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll_int.h"

/* data pieces in group g of a step with np pieces */
static uint32_t group_k(const struct coll *c, uint32_t np, size_t g)
{
	size_t k = c->cfg.ec_k, lo = g * k;

	return lo >= np ? 0 : (uint32_t)(np - lo < k ? np - lo : k);
}

static int ec_check(const struct coll_cfg *cfg, char *e, size_t n)
{
	if (cfg->ec_k + cfg->ec_m <= 255)
		return 0;
	snprintf(e, n, "ec_k + ec_m = %llu: at most 255", (unsigned long long)(cfg->ec_k + cfg->ec_m));
	return -EINVAL;
}

/* parity pieces per step: m per group of k */
static size_t ec_parity_pieces(struct coll *c)
{
	c->groups = (c->pieces + c->cfg.ec_k - 1) / c->cfg.ec_k;
	return c->groups * c->cfg.ec_m;
}

static int ec_setup(struct wl_ctx *w, struct coll *c)
{
	if ((c->ec = ec_new((int)c->cfg.ec_k, (int)c->cfg.ec_m)))
		return 0;
	snprintf(w->err, sizeof(w->err), "ec_k %llu, ec_m %llu: %s",
		 (unsigned long long)c->cfg.ec_k, (unsigned long long)c->cfg.ec_m, strerror(errno));
	return -EINVAL;
}

static void ec_close(struct coll *c)
{
	ec_free(c->ec);
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

/* after a step's data WRs (k of them): its parity, into the right
 * neighbour's parity area of the step */
static int ec_more_wrs(struct coll *c, const float *src, size_t np, size_t len, int gstep, int k)
{
	uint32_t hdr = ((c->iter & 0xff) << 24) | ((uint32_t)gstep << 16);
	/* a parity area per step: the last step's may still be on the wire */
	float *ptx = c->ptx + (size_t)gstep * c->groups * c->cfg.ec_m * c->piece;
	size_t q, par = ((np + c->cfg.ec_k - 1) / c->cfg.ec_k) * c->cfg.ec_m;

	ec_parity(c, src, np, len, ptx);
	for (q = 0; q < par; q++, k++)
		uc_wr(c, k, ptx + q * c->piece, c->piece,
		      (uint64_t)((char *)(c->prx + ((size_t)gstep * c->groups * c->cfg.ec_m + q) *
							 c->piece) - c->mem),
		      hdr | (uint32_t)(c->pieces + q), uc_peer_rkey(c, gstep, 1));
	return k;
}

/* piece pc of step gstep arrived: its group may now be rebuilt */
static void ec_arrival(struct coll *c, int gstep, uint32_t pc)
{
	size_t grp = pc < c->pieces ? pc / c->cfg.ec_k : (pc - c->pieces) / c->cfg.ec_m;
	uint16_t *ga = garr_of(c, gstep);

	if (++ga[grp] == group_k(c, c->step_np[gstep], grp))
		c->gready[gstep]++;
}

/* every group of the step can be rebuilt */
static int ec_enough(const struct coll *c, int gstep, size_t need)
{
	return c->gready[gstep] >= (need + c->cfg.ec_k - 1) / c->cfg.ec_k;
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

const struct coll_mode_ops coll_ec_ops = {
	.uc = 1,
	.ready_recvs = READY_RECVS,
	.check = ec_check,
	.parity = ec_parity_pieces,
	.setup = ec_setup,
	.close = ec_close,
	.recvs = uc_recvs,
	.send = uc_send,
	.wait = uc_wait,
	.more_wrs = ec_more_wrs,
	.arrival = ec_arrival,
	.enough = ec_enough,
	.rebuild = ec_rebuild,
};
