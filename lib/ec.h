/* SPDX-License-Identifier: MIT */
/*
 * Erasure coding for the "ec" recovery mode, on Intel's ISA-L (Debian's
 * libisal): k data chunks get m parity chunks from a Cauchy matrix over
 * GF(2^8) (every k x k submatrix is invertible), so any m lost chunks of a
 * group are rebuilt from the k that arrived, without retransmission.
 */
#ifndef RTB_EC_H
#define RTB_EC_H

#include <stddef.h>

struct ec;

/* 1 <= k, 0 <= m, k + m <= 255; NULL + errno otherwise */
struct ec *ec_new(int k, int m);
void ec_free(struct ec *e);
/* parity[0..m) from data[0..k), each len bytes */
int ec_encode(struct ec *e, size_t len, unsigned char **data, unsigned char **parity);
/* chunks[0..k+m): data then parity; present[i] = 1 if chunk i arrived.
 * Rebuilds every missing data chunk in place; -1 when more than m are missing. */
int ec_recover(struct ec *e, size_t len, unsigned char **chunks, const unsigned char *present);

#endif
