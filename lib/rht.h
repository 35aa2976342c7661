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

struct rht;

/* floats on the wire for n input floats */
size_t rht_wire_len(size_t n, size_t block);
/* the engine's default block for n floats: the largest power of two up to
 * 65536 that pads n by at most 1/64 (larger blocks spread a loss thinner) */
size_t rht_block_for(size_t n);
/* a transform of n floats: the diagonal computed once (a step's encode and
 * decode then cost the FWHT and a multiply per element); NULL if block is
 * not a power of two >= 8, n is 0 or memory ran out */
struct rht *rht_new(size_t n, size_t block, uint64_t seed);
void rht_free(struct rht *h);
size_t rht_len(const struct rht *h);	/* rht_wire_len(n, block) */
/* in[n] -> wire[rht_len] */
void rht_fwd(struct rht *h, const float *in, float *wire);
/* wire -> out[n]. scale: 1 for plain decoding, or 1/q (q = fraction of
 * coefficients received, lost ones zero) for an unbiased estimate */
void rht_inv(struct rht *h, const float *wire, float *out, float scale);
/* the same on every stride-th float: in[0], in[stride], ... (n of them),
 * out likewise (a collective's chunk of every n-th element) */
void rht_fwd_st(struct rht *h, const float *in, size_t stride, float *wire);
void rht_inv_st(struct rht *h, const float *wire, float *out, size_t stride, float scale);
/* how rht_fwd and rht_inv compute, chosen once by timing both:
 * "float" (lib/fwht.h's kernels) or "fixed" (64-bit integers: under qemu's
 * TCG, where guest float arithmetic is emulated, 5-8x faster); under qemu's
 * TCG (its cpuid signature) always fixed, elsewhere the faster of the two
 * by timing; RTB_RHT=fixed or float forces one */
const char *rht_path(void);
/* why that path: "qemu TCG (cpuid)", the timings, or RTB_RHT */
const char *rht_path_why(void);
/* make every transform take path "fixed" or "float" from now on (tests and
 * benchmarks); -1 for another name */
int rht_use(const char *name);

#endif
