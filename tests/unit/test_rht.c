// SPDX-License-Identifier: MIT
/*
 * The randomized Hadamard transform: exact round trip, and the property the
 * hadamard recovery mode is for -- losing 1% of the packets costs far less
 * worst-case (L-inf) error than losing the same packets of raw data.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "expect.h"
#include "../../lib/rht.h"

static uint64_t s = 7;

static double u(void)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return (double)(s >> 11) / 9007199254740992.0;
}

int main(void)
{
	enum { N = 300000, BLOCK = 1024, PKT = 256 };	/* 1 KiB packets: 256 floats */
	float *in = malloc(N * sizeof(float)), *out = malloc(N * sizeof(float));
	size_t wl = rht_wire_len(N, BLOCK), i, p, npk;
	float *wire = malloc(wl * sizeof(float)), *raw = malloc(N * sizeof(float));
	double err = 0, linf_h = 0, linf_raw = 0, dot = 0, nh = 0, nx = 0, lost_frac;
	char *lost;

	for (i = 0; i < N; i++)	/* gradient-like: mostly small, some large */
		in[i] = (float)((u() - 0.5) * (u() < 0.01 ? 10 : 1));
	EXPECT(wl % BLOCK == 0 && wl >= N);
	EXPECT(rht_encode(in, N, wire, BLOCK, 42) == 0);
	EXPECT(rht_decode(wire, N, out, BLOCK, 42, 1.0f) == 0);
	for (i = 0; i < N; i++)
		err = fmax(err, fabs(out[i] - in[i]));
	EXPECT(err < 1e-5);
	EXPECT(rht_encode(in, N, wire, 1000, 42) == -1);	/* not a power of two */

	/* lose 1% of the packets, the same packets on both paths */
	npk = (wl + PKT - 1) / PKT;
	lost = calloc(npk, 1);
	for (p = 0, lost_frac = 0; p < npk; p++)
		if (u() < 0.01) {
			lost[p] = 1;
			lost_frac++;
		}
	lost_frac /= (double)npk;
	EXPECT(rht_encode(in, N, wire, BLOCK, 42) == 0);
	memcpy(raw, in, N * sizeof(float));
	for (p = 0; p < npk; p++) {
		if (!lost[p])
			continue;
		for (i = p * PKT; i < (p + 1) * PKT && i < wl; i++)
			wire[i] = 0;
		for (i = p * PKT; i < (p + 1) * PKT && i < N; i++)
			raw[i] = 0;	/* "lossy": the range is zero-filled */
	}
	EXPECT(rht_decode(wire, N, out, BLOCK, 42, 1.0f) == 0);
	for (i = 0; i < N; i++) {
		linf_h = fmax(linf_h, fabs(out[i] - in[i]));
		linf_raw = fmax(linf_raw, fabs(raw[i] - in[i]));
		dot += (double)out[i] * in[i];
		nh += (double)out[i] * out[i];
		nx += (double)in[i] * in[i];
	}
	fprintf(stderr, "1%% packet loss (%.2f%% lost): L-inf error hadamard %.4f, lossy %.4f (%.1fx); "
		"cosine %.4f\n", lost_frac * 100, linf_h, linf_raw, linf_raw / linf_h,
		dot / sqrt(nh * nx));
	EXPECT(lost_frac > 0.005);
	EXPECT(linf_h * 5 <= linf_raw);
	EXPECT(dot / sqrt(nh * nx) > 0.98);
	free(lost);
	free(in);
	free(out);
	free(wire);
	free(raw);
	return expect_done("test_rht");
}
