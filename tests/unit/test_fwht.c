// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "expect.h"
#include "../../lib/fwht.h"

static uint64_t seed = 12345;

static float rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (float)((double)(seed >> 11) / 9007199254740992.0 * 2 - 1);
}

int main(void)
{
	size_t n, i;
	int bad_fast = 0, bad_inv = 0;

	/* against the textbook loop at every size from 1 to 2^20: past both
	 * cache blocks of the fast kernel (2^12 and 2^16 floats) */
	for (n = 1; n <= (1 << 20); n *= 2) {
		float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
		float *orig = malloc(n * sizeof(float));
		double err = 0, norm = 0;

		for (i = 0; i < n; i++)
			a[i] = b[i] = orig[i] = rnd();
		EXPECT(fwht(a, n) == 0);
		EXPECT(fwht_naive(b, n) == 0);
		for (i = 0; i < n; i++) {
			err = fmax(err, fabs(a[i] - b[i]));
			norm = fmax(norm, fabs(b[i]));
		}
		if (err > 1e-5 * (norm + 1))
			bad_fast++;
		/* H H = n I: the transform applied twice gives n x */
		memcpy(a, orig, n * sizeof(float));
		fwht(a, n);
		fwht(a, n);
		for (i = 0; i < n; i++)
			if (fabs(a[i] - (double)n * orig[i]) > 1e-5 * n)
				bad_inv++;
		free(a);
		free(b);
		free(orig);
	}
	EXPECT(bad_fast == 0);
	EXPECT(bad_inv == 0);
	/* a unit vector becomes a row of H: all entries +-1 */
	{
		float v[64] = { 0 };
		int ok = 1;

		v[5] = 1;
		fwht(v, 64);
		for (i = 0; i < 64; i++)
			ok &= fabsf(fabsf(v[i]) - 1) < 1e-7;
		EXPECT(ok);
		EXPECT(v[0] == 1 && v[1] == -1);	/* row 5 = 0b101: (-1)^popcount(5 & j) */
	}
	EXPECT(fwht((float[3]){ 1, 2, 3 }, 3) == -1);
	EXPECT(fwht_naive((float[6]){ 0 }, 6) == -1);
	fprintf(stderr, "fwht kernel: %s\n", fwht_kernel());
	return expect_done("test_fwht");
}
