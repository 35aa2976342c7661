/* SPDX-License-Identifier: MIT */
/*
 * Fast Walsh-Hadamard transform, in place, unnormalised: x <- H x for a
 * power-of-two length n, H the Sylvester-ordered Hadamard matrix. H H = n I,
 * so the inverse is fwht() again followed by a 1/n scale (the Hadamard
 * recovery mode folds that scale into its rescaling).
 *
 * fwht() picks its kernel once, at run time: AVX2 and FMA (8 floats per
 * vector) when the CPU has them, else the portable one (GCC vector
 * extensions, SSE2 on x86-64, whatever the target offers elsewhere). Both
 * work in cache blocks (2^12 floats in L1, 2^16 in L2, then the stages that
 * cross them): the first three stages inside a vector with a shuffle and a
 * multiply-add each, fused with the next three (radix 8 across 8 vectors),
 * then three stages per pass over memory (radix 8; a last one or two in
 * radix 4 or 2). fwht_naive() is the textbook radix-2 loop, the reference
 * for tests and the benchmark.
 */
#ifndef RTB_FWHT_H
#define RTB_FWHT_H

#include <stddef.h>

/* n must be a power of two; returns -1 (and leaves x) otherwise */
int fwht(float *x, size_t n);
int fwht_naive(float *x, size_t n);
/* the kernel fwht() uses: "avx2" or "portable" */
const char *fwht_kernel(void);

#endif
