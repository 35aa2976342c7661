// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/erasure_code.h>
#include "ec.h"

struct ec {
	int k, m;
	unsigned char *matrix;	/* (k + m) x k: identity, then the Cauchy rows */
	unsigned char *tbls;	/* ISA-L's expanded tables for the m parity rows */
};

struct ec *ec_new(int k, int m)
{
	struct ec *e;

	if (k < 1 || m < 0 || k + m > 255) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->k = k;
	e->m = m;
	e->matrix = malloc((size_t)(k + m) * (size_t)k);
	e->tbls = malloc(32 * (size_t)k * (size_t)(m ? m : 1));
	if (!e->matrix || !e->tbls) {
		ec_free(e);
		errno = ENOMEM;
		return NULL;
	}
	gf_gen_cauchy1_matrix(e->matrix, k + m, k);
	if (m)
		ec_init_tables(k, m, e->matrix + (size_t)k * (size_t)k, e->tbls);
	return e;
}

void ec_free(struct ec *e)
{
	if (!e)
		return;
	free(e->matrix);
	free(e->tbls);
	free(e);
}

int ec_encode(struct ec *e, size_t len, unsigned char **data, unsigned char **parity)
{
	if (e->m)
		ec_encode_data((int)len, e->k, e->m, e->tbls, data, parity);
	return 0;
}

int ec_recover(struct ec *e, size_t len, unsigned char **chunks, const unsigned char *present)
{
	int k = e->k, n = e->k + e->m, i, j, r, nmiss = 0, rows = 0;
	unsigned char *sub, *inv, *dec, *tbls, **src, **dst;
	int miss[255], use[255];

	for (i = 0; i < k; i++)
		if (!present[i])
			miss[nmiss++] = i;
	if (!nmiss)
		return 0;
	for (i = 0; i < n && rows < k; i++)	/* the first k chunks that arrived */
		if (present[i])
			use[rows++] = i;
	if (rows < k)
		return -1;
	sub = malloc((size_t)k * k);
	inv = malloc((size_t)k * k);
	dec = malloc((size_t)nmiss * k);
	tbls = malloc(32 * (size_t)k * (size_t)nmiss);
	src = malloc(sizeof(*src) * (size_t)k);
	dst = malloc(sizeof(*dst) * (size_t)nmiss);
	r = -1;
	if (!sub || !inv || !dec || !tbls || !src || !dst)
		goto out;
	for (i = 0; i < k; i++) {
		memcpy(sub + (size_t)i * k, e->matrix + (size_t)use[i] * k, (size_t)k);
		src[i] = chunks[use[i]];
	}
	if (gf_invert_matrix(sub, inv, k))
		goto out;	/* cannot happen with a Cauchy matrix */
	/* a missing data chunk i is row i of the inverse applied to the k we have */
	for (j = 0; j < nmiss; j++) {
		memcpy(dec + (size_t)j * k, inv + (size_t)miss[j] * k, (size_t)k);
		dst[j] = chunks[miss[j]];
	}
	ec_init_tables(k, nmiss, dec, tbls);
	ec_encode_data((int)len, k, nmiss, tbls, src, dst);
	r = 0;
out:
	free(sub);
	free(inv);
	free(dec);
	free(tbls);
	free(src);
	free(dst);
	return r;
}
