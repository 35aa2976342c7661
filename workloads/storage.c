// SPDX-License-Identifier: MIT
/*
 * storage: fio-like block I/O on a remote volume by one-sided RDMA.
 *
 * The target (server role) registers a volume of `volume` bytes and fills
 * every block with a known pattern; its CPU takes no further part. The
 * initiator (client role) issues `iters` block I/Os of `bs` bytes with up to
 * `iodepth` in flight: READ for reads, WRITE for writes, sequential or
 * random (rw = read|write|randread|randwrite|rw|randrw, rwmixread% reads).
 *
 * Verification: block b's content is a function of (seed, b, gen[b]); the
 * initiator bumps gen[b] when a WRITE of b completes and checks every READ
 * against the pattern of the generation it expects. No two I/Os to the same
 * block are ever in flight, so the expectation is exact. At the end every
 * block of the volume is read back once and checked (not timed).
 * Latency per I/O (post to completion) goes to one histogram per direction.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "wl.h"
#include "opts.h"
#include "../lib/mix.h"
#include "../lib/hist.h"


struct slot {
	uint64_t block;
	uint64_t t0;
	int write;
	int busy;
};

struct st {
	struct st_cfg cfg;
	struct vb_rc rc;
	char *mem;		/* target: the volume; initiator: iodepth buffers */
	size_t memlen;
	uint64_t nblocks;
	struct vb_ep peer;
	/* initiator */
	uint32_t *gen;		/* per block: generation of its content */
	uint8_t *inflight;	/* per block */
	struct slot slot[120];
	struct hist lat[2];	/* [0] reads, [1] writes */
	uint64_t ios[2], mismatches, verified, rng;
};

static void pattern(const struct st *s, uint64_t block, uint32_t gen, uint64_t *w, size_t words)
{
	uint64_t base = rtb_mix64(s->cfg.seed ^ rtb_mix64(block * 0x9e3779b97f4a7c15ULL + gen));
	size_t i;

	for (i = 0; i < words; i++)
		w[i] = rtb_mix64(base + i);
}

static int pattern_ok(const struct st *s, uint64_t block, uint32_t gen, const uint64_t *w,
		      size_t words)
{
	uint64_t base = rtb_mix64(s->cfg.seed ^ rtb_mix64(block * 0x9e3779b97f4a7c15ULL + gen));
	size_t i;

	for (i = 0; i < words; i++)
		if (w[i] != rtb_mix64(base + i))
			return 0;
	return 1;
}

static void st_destroy(struct wl_ctx *c)
{
	struct st *s = c->priv;

	if (!s)
		return;
	vb_rc_destroy(&s->rc);
	free(s->mem);
	free(s->gen);
	free(s->inflight);
	free(s);
	c->priv = NULL;
}

static int st_prepare(struct wl_ctx *c, const json_t *opts, json_t **ep)
{
	int target = c->role == WL_SERVER;
	struct st *s;
	uint64_t b;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	c->priv = s;
	r = opt_apply_json(st_opts, &s->cfg, opts, c->err, sizeof(c->err));
	if (r)
		goto fail;
	r = -EINVAL;
	if (s->cfg.volume % s->cfg.bs || s->cfg.bs % 8) {
		snprintf(c->err, sizeof(c->err), "volume %llu is not a multiple of bs %llu (bs: of 8)",
			 (unsigned long long)s->cfg.volume, (unsigned long long)s->cfg.bs);
		goto fail;
	}
	s->nblocks = s->cfg.volume / s->cfg.bs;
	if (s->nblocks < s->cfg.iodepth) {
		snprintf(c->err, sizeof(c->err), "the volume has %llu blocks, fewer than iodepth",
			 (unsigned long long)s->nblocks);
		goto fail;
	}
	s->memlen = target ? s->cfg.volume : s->cfg.iodepth * s->cfg.bs;
	r = -ENOMEM;
	if (posix_memalign((void **)&s->mem, 4096, s->memlen))
		goto fail;
	if (target) {
		for (b = 0; b < s->nblocks; b++)
			pattern(s, b, 0, (uint64_t *)(s->mem + b * s->cfg.bs), s->cfg.bs / 8);
	} else {
		s->gen = calloc(s->nblocks, sizeof(*s->gen));
		s->inflight = calloc(s->nblocks, 1);
		if (!s->gen || !s->inflight)
			goto fail;
		hist_init(&s->lat[0]);
		hist_init(&s->lat[1]);
		s->rng = rtb_mix64(s->cfg.seed + 1);
	}
	r = vb_rc_create(&s->rc, c->dev, s->mem, s->memlen,
			 IBV_ACCESS_LOCAL_WRITE |
				 (target ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE : 0),
			 128, 1, c->err, sizeof(c->err));
	if (r)
		goto fail;
	*ep = vb_rc_endpoint(&s->rc, c->dev, s->mem, s->memlen);
	return *ep ? 0 : -EIO;
fail:
	if (r == -ENOMEM && !c->err[0])
		snprintf(c->err, sizeof(c->err), "out of memory (%zu bytes)", s->memlen);
	st_destroy(c);
	return r;
}

static int st_connect(struct wl_ctx *c, const json_t *peer)
{
	struct st *s = c->priv;
	struct vb_rc_opts o = vb_rc_opts_of(&s->cfg.rc, 16);
	int r;

	if (vb_ep_from_json(&s->peer, peer)) {
		snprintf(c->err, sizeof(c->err), "malformed peer endpoint");
		return -EINVAL;
	}
	if (c->role == WL_CLIENT && s->peer.len < s->cfg.volume) {
		snprintf(c->err, sizeof(c->err), "target volume %llu bytes, asked for %llu",
			 (unsigned long long)s->peer.len, (unsigned long long)s->cfg.volume);
		return -EINVAL;
	}
	r = vb_qp_connect(s->rc.qp, c->dev, s->rc.psn, &s->peer, &o);
	if (r)
		snprintf(c->err, sizeof(c->err), "qp 0x%x: connect failed: %s", s->rc.qp->qp_num,
			 strerror(-r));
	return r;
}

static uint64_t rnd(struct st *s)
{
	s->rng = rtb_mix64(s->rng + 0x9e3779b97f4a7c15ULL);
	return s->rng;
}

/* the next block and direction of the job; never a block with an I/O in flight */
static void next_io(struct st *s, uint64_t n, uint64_t *block, int *write)
{
	int rw = s->cfg.rw, random = rw == RW_RANDREAD || rw == RW_RANDWRITE || rw == RW_RANDRW;
	uint64_t b = random ? rnd(s) % s->nblocks : n % s->nblocks;

	while (s->inflight[b])
		b = (b + 1) % s->nblocks;
	*block = b;
	if (rw == RW_READ || rw == RW_RANDREAD)
		*write = 0;
	else if (rw == RW_WRITE || rw == RW_RANDWRITE)
		*write = 1;
	else
		*write = rnd(s) % 100 >= s->cfg.rwmixread;
}

static int post_io(struct wl_ctx *c, struct st *s, int k, uint64_t block, int write)
{
	char *buf = s->mem + (size_t)k * s->cfg.bs;
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = (uint32_t)s->cfg.bs,
			       .lkey = s->rc.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = (uint64_t)k, .sg_list = &sge, .num_sge = 1,
				  .opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int r;

	if (write)
		pattern(s, block, s->gen[block] + 1, (uint64_t *)buf, s->cfg.bs / 8);
	wr.wr.rdma.remote_addr = s->peer.addr + block * s->cfg.bs;
	wr.wr.rdma.rkey = s->peer.rkey;
	s->slot[k] = (struct slot){ .block = block, .write = write, .busy = 1, .t0 = wl_now_ns() };
	s->inflight[block] = 1;
	r = ibv_post_send(s->rc.qp, &wr, &bad);
	if (r)
		snprintf(c->err, sizeof(c->err), "qp 0x%x: post %s failed: %s", s->rc.qp->qp_num,
			 write ? "WRITE" : "READ", strerror(r));
	return -r;
}

/* wait for at least one completion; *done gets the slots that finished */
static int complete(struct wl_ctx *c, struct st *s, int record, int *freed, int nfree_max)
{
	struct ibv_wc wc[16];
	uint64_t start = wl_now_ns();
	int n, i, got = 0;

	while (!got) {
		n = ibv_poll_cq(s->rc.cq, nfree_max < 16 ? nfree_max : 16, wc);
		if (n < 0)
			return -EIO;
		for (i = 0; i < n; i++) {
			int k = (int)wc[i].wr_id;
			struct slot *sl = &s->slot[k];
			uint64_t t = wl_now_ns();

			if (wc[i].status != IBV_WC_SUCCESS) {
				snprintf(c->err, sizeof(c->err), "block %llu: %s completed with %s",
					 (unsigned long long)sl->block, sl->write ? "WRITE" : "READ",
					 ibv_wc_status_str(wc[i].status));
				return -EIO;
			}
			if (sl->write) {
				s->gen[sl->block]++;
			} else {
				s->verified++;
				if (!pattern_ok(s, sl->block, s->gen[sl->block],
						(uint64_t *)(s->mem + (size_t)k * s->cfg.bs),
						s->cfg.bs / 8))
					s->mismatches++;
			}
			if (record) {
				hist_record(&s->lat[sl->write], t - sl->t0);
				wl_record(c, t, t - sl->t0);
				s->ios[sl->write]++;
			}
			s->inflight[sl->block] = 0;
			sl->busy = 0;
			freed[got++] = k;
		}
		if (!n) {
			if (*c->stop) {
				snprintf(c->err, sizeof(c->err), "stopped");
				return -EINTR;
			}
			if (wl_now_ns() - start > s->cfg.op_timeout) {
				snprintf(c->err, sizeof(c->err), "I/O not completed within %.0f s",
					 s->cfg.op_timeout / 1e9);
				return -ETIMEDOUT;
			}
		}
	}
	return got;
}

static int st_run(struct wl_ctx *c, json_t **result)
{
	struct st *s = c->priv;
	uint64_t issued = 0, done = 0, t0, elapsed, b, final_bad;
	int freelist[120], nfree, k, r, write, i;
	double secs;

	if (c->role == WL_SERVER)
		return (*result = json_pack("{s:s}", "role", "target")) ? 0 : -ENOMEM;
	nfree = (int)s->cfg.iodepth;
	for (k = 0; k < nfree; k++)
		freelist[k] = nfree - 1 - k;
	t0 = wl_now_ns();
	while (done < s->cfg.iters) {
		while (nfree && issued < s->cfg.iters) {
			k = freelist[--nfree];
			next_io(s, issued, &b, &write);
			if ((r = post_io(c, s, k, b, write)))
				return r;
			issued++;
		}
		r = complete(c, s, 1, freelist + nfree, (int)s->cfg.iodepth - nfree);
		if (r < 0)
			return r;
		nfree += r;
		done += (uint64_t)r;
		__atomic_store_n(&c->progress, done, __ATOMIC_RELAXED);
	}
	elapsed = wl_now_ns() - t0;
	/* final pass: every block read back once, expected at its last generation */
	final_bad = s->mismatches;
	for (b = 0; b < s->nblocks;) {
		int batch = 0;

		for (k = 0; k < (int)s->cfg.iodepth && b < s->nblocks; k++, b++, batch++)
			if ((r = post_io(c, s, k, b, 0)))
				return r;
		for (i = 0; i < batch;) {
			int f[120];

			r = complete(c, s, 0, f, batch - i);
			if (r < 0)
				return r;
			i += r;
		}
	}
	final_bad = s->mismatches - final_bad;
	secs = (double)elapsed / 1e9;
	*result = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:f,s:I,s:I,s:f,s:f,s:f,s:f,s:I,s:I,s:I,s:o,s:o}",
			    "role", "initiator", "rw", st_rw_names[s->cfg.rw], "bs",
			    (json_int_t)s->cfg.bs, "iodepth", (json_int_t)s->cfg.iodepth, "volume",
			    (json_int_t)s->cfg.volume, "elapsed_ns", (json_int_t)elapsed,
			    "iops", (double)done / secs, "read_ios", (json_int_t)s->ios[0],
			    "write_ios", (json_int_t)s->ios[1], "read_iops", (double)s->ios[0] / secs,
			    "write_iops", (double)s->ios[1] / secs, "read_bw_bytes_per_s",
			    (double)(s->ios[0] * s->cfg.bs) / secs, "write_bw_bytes_per_s",
			    (double)(s->ios[1] * s->cfg.bs) / secs, "verified_reads",
			    (json_int_t)s->verified, "mismatches", (json_int_t)s->mismatches,
			    "final_pass_mismatches", (json_int_t)final_bad, "read_lat_ns",
			    hist_to_json(&s->lat[0]), "write_lat_ns", hist_to_json(&s->lat[1]));
	return *result ? 0 : -ENOMEM;
}

const struct wl_ops wl_storage = {
	.name = "storage",
	.opts = st_opts,
	.prepare = st_prepare,
	.connect = st_connect,
	.run = st_run,
	.destroy = st_destroy,
};
