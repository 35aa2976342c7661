/* SPDX-License-Identifier: MIT */
/* splitmix64's finalizer: a cheap, well-mixed 64-bit hash (data patterns,
 * key placement, Rademacher signs). */
#ifndef RTB_MIX_H
#define RTB_MIX_H

#include <stdint.h>

static inline uint64_t rtb_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

#endif
