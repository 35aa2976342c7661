// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fwht.h"
#include "mix.h"
#include "rht.h"

/* the sign of element i of the diagonal: one hash bit, the same on every rank */
static float sign_of(uint64_t seed, size_t i)
{
	return rtb_mix64(seed ^ ((uint64_t)i >> 6) * 0x9e3779b97f4a7c15ULL) >> (i & 63) & 1 ? -1.0f : 1.0f;
}

size_t rht_wire_len(size_t n, size_t block)
{
	return (n + block - 1) / block * block;
}

static int block_ok(size_t block)
{
	return block >= 8 && !(block & (block - 1));
}

int rht_encode(const float *in, size_t n, float *wire, size_t block, uint64_t seed)
{
	size_t len = rht_wire_len(n, block), nb = len / block, b, k;
	float s = 1.0f / sqrtf((float)block), *tmp;

	if (!block_ok(block))
		return -1;
	tmp = malloc(block * sizeof(float));
	if (!tmp)
		return -1;
	for (b = 0; b < nb; b++) {
		for (k = 0; k < block; k++) {
			size_t i = b * block + k;

			tmp[k] = i < n ? in[i] * sign_of(seed, i) : 0.0f;
		}
		fwht(tmp, block);
		/* coefficient k of block b goes to wire position k * nb + b */
		for (k = 0; k < block; k++)
			wire[k * nb + b] = tmp[k] * s;
	}
	free(tmp);
	return 0;
}

int rht_decode(float *wire, size_t n, float *out, size_t block, uint64_t seed, float scale)
{
	size_t len = rht_wire_len(n, block), nb = len / block, b, k;
	float s = scale / sqrtf((float)block), *tmp;

	if (!block_ok(block))
		return -1;
	tmp = malloc(block * sizeof(float));
	if (!tmp)
		return -1;
	for (b = 0; b < nb; b++) {
		for (k = 0; k < block; k++)
			tmp[k] = wire[k * nb + b];
		fwht(tmp, block);
		for (k = 0; k < block; k++) {
			size_t i = b * block + k;

			if (i < n)
				out[i] = tmp[k] * s * sign_of(seed, i);
		}
	}
	free(tmp);
	return 0;
}
