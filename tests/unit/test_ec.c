// SPDX-License-Identifier: MIT
/* Erasure coding: every pattern of up to m lost chunks is rebuilt exactly;
 * m + 1 lost chunks are refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "expect.h"
#include "../../lib/ec.h"

enum { K = 8, M = 2, LEN = 1024 };

int main(void)
{
	unsigned char *orig[K + M], *work[K + M], present[K + M];
	struct ec *e = ec_new(K, M);
	uint64_t s = 99;
	int a, b, i, bad = 0, patterns = 0;
	size_t j;

	EXPECT(e != NULL);
	EXPECT(ec_new(0, 1) == NULL && ec_new(200, 100) == NULL);
	for (i = 0; i < K + M; i++) {
		orig[i] = malloc(LEN);
		work[i] = malloc(LEN);
	}
	for (i = 0; i < K; i++)
		for (j = 0; j < LEN; j++) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			orig[i][j] = (unsigned char)s;
		}
	EXPECT(ec_encode(e, LEN, orig, orig + K) == 0);
	/* every pair (a, b) of lost chunks, a == b meaning one lost, -1 none */
	for (a = -1; a < K + M; a++)
		for (b = a; b < K + M; b++) {
			for (i = 0; i < K + M; i++) {
				memcpy(work[i], orig[i], LEN);
				present[i] = i != a && i != b;
				if (!present[i])
					memset(work[i], 0xee, LEN);	/* garbage where it was lost */
			}
			patterns++;
			if (ec_recover(e, LEN, work, present)) {
				bad++;
				continue;
			}
			for (i = 0; i < K; i++)
				bad += memcmp(work[i], orig[i], LEN) != 0;
		}
	EXPECT(bad == 0);
	for (i = 0; i < K + M; i++)
		present[i] = i > 2;	/* three lost: more than m */
	EXPECT(ec_recover(e, LEN, work, present) == -1);
	fprintf(stderr, "ec k=%d m=%d: %d loss patterns rebuilt exactly\n", K, M, patterns);
	for (i = 0; i < K + M; i++) {
		free(orig[i]);
		free(work[i]);
	}
	ec_free(e);
	return expect_done("test_ec");
}
