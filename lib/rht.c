// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fwht.h"
#include "mix.h"
#include "rht.h"

#define GROUP 8	/* blocks transformed together: the interleave then moves 8 floats at a time */

struct rht {
	size_t n, block, nb, len;
	float *sign;	/* the diagonal times 1/sqrt(block), n entries */
	float *tmp;	/* GROUP blocks */
};

/* the sign of element i of the diagonal: one hash bit, the same on every rank */
static float sign_of(uint64_t seed, size_t i)
{
	return rtb_mix64(seed ^ ((uint64_t)i >> 6) * 0x9e3779b97f4a7c15ULL) >> (i & 63) & 1 ? -1.0f : 1.0f;
}

size_t rht_wire_len(size_t n, size_t block)
{
	return (n + block - 1) / block * block;
}

size_t rht_block_for(size_t n)
{
	size_t b;

	for (b = 65536; b > 8; b /= 2)
		if (rht_wire_len(n, b) - n <= n / 64)
			break;
	return b;
}

struct rht *rht_new(size_t n, size_t block, uint64_t seed)
{
	struct rht *h;
	float s = 1.0f / sqrtf((float)block);
	size_t i;

	if (block < 8 || (block & (block - 1)) || !n)
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->n = n;
	h->block = block;
	h->len = rht_wire_len(n, block);
	h->nb = h->len / block;
	h->sign = malloc(n * sizeof(float));
	h->tmp = malloc(GROUP * block * sizeof(float));
	if (!h->sign || !h->tmp) {
		rht_free(h);
		return NULL;
	}
	for (i = 0; i < n; i++)
		h->sign[i] = sign_of(seed, i) * s;
	return h;
}

void rht_free(struct rht *h)
{
	if (!h)
		return;
	free(h->sign);
	free(h->tmp);
	free(h);
}

size_t rht_len(const struct rht *h)
{
	return h->len;
}

/* input elements in block b (the last one is short, blocks past n empty) */
static size_t block_n(const struct rht *h, size_t b)
{
	size_t base = b * h->block;

	return base >= h->n ? 0 : h->n - base < h->block ? h->n - base : h->block;
}

/* GROUP blocks at a time: signed and transformed into tmp, then interleaved */
void rht_fwd(struct rht *h, const float *in, float *wire)
{
	size_t bs = h->block, nb = h->nb, b0, g, k, i;

	for (b0 = 0; b0 < nb; b0 += GROUP) {
		size_t ng = nb - b0 < GROUP ? nb - b0 : GROUP;

		for (g = 0; g < ng; g++) {
			float *t = h->tmp + g * bs;
			size_t base = (b0 + g) * bs, m = block_n(h, b0 + g);

			for (k = 0; k < m; k++)
				t[k] = in[base + k] * h->sign[base + k];
			memset(t + m, 0, (bs - m) * sizeof(float));
			fwht(t, bs);
		}
		/* coefficient k of block b goes to wire position k * nb + b */
		for (k = 0; k < bs; k++)
			for (i = 0; i < ng; i++)
				wire[k * nb + b0 + i] = h->tmp[i * bs + k];
	}
}

void rht_inv(struct rht *h, const float *wire, float *out, float scale)
{
	size_t bs = h->block, nb = h->nb, b0, g, k, i;

	for (b0 = 0; b0 < nb; b0 += GROUP) {
		size_t ng = nb - b0 < GROUP ? nb - b0 : GROUP;

		for (k = 0; k < bs; k++)
			for (i = 0; i < ng; i++)
				h->tmp[i * bs + k] = wire[k * nb + b0 + i];
		for (g = 0; g < ng; g++) {
			float *t = h->tmp + g * bs;
			size_t base = (b0 + g) * bs, m = block_n(h, b0 + g);

			fwht(t, bs);
			for (k = 0; k < m; k++)
				out[base + k] = t[k] * scale * h->sign[base + k];
		}
	}
}
