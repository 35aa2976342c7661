/* SPDX-License-Identifier: MIT */
/*
 * Randomized Hadamard transform for loss-tolerant transfers (the
 * "hadamard" recovery mode, after OptiReduce): a buffer is cut into blocks
 * of `block` floats (a power of two; the tail is zero-padded), each block is
 * multiplied by a seeded Rademacher (+-1) diagonal D and transformed by the
 * orthonormal Walsh-Hadamard matrix H/sqrt(block). Coefficients are then
 * interleaved so that consecutive wire positions belong to different blocks:
 * a lost packet removes a few coefficients from many blocks instead of a
 * whole range of the buffer, and after decoding the loss is small noise
 * spread over every element rather than zeros in one place. The transform
 * is orthonormal and self-inverse up to D, so with nothing lost decoding
 * returns the input within float rounding. Every rank must use the same
 * seed and block.
 */
#ifndef RTB_RHT_H
#define RTB_RHT_H

#include <stddef.h>
#include <stdint.h>

/* floats on the wire for n input floats */
size_t rht_wire_len(size_t n, size_t block);
/* in[n] -> wire[rht_wire_len(n, block)]; -1 if block is not a power of two >= 8 */
int rht_encode(const float *in, size_t n, float *wire, size_t block, uint64_t seed);
/* wire -> out[n]; wire is used as scratch. scale: 1 for plain decoding, or
 * 1/q (q = fraction of coefficients received, lost ones zero) for an
 * unbiased estimate */
int rht_decode(float *wire, size_t n, float *out, size_t block, uint64_t seed, float scale);

#endif
