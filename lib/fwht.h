/* SPDX-License-Identifier: MIT */
/*
 * Fast Walsh-Hadamard transform, in place, unnormalised: x <- H x for a
 * power-of-two length n, H the Sylvester-ordered Hadamard matrix. H H = n I,
 * so the inverse is fwht() again followed by a 1/n scale (the Hadamard
 * recovery mode folds that scale into its rescaling).
 *
 * fwht() picks its kernel once, at run time: AVX2 (8 floats per vector) when
 * the CPU has it, else the portable one (GCC vector extensions, SSE2 on
 * x86-64, whatever the target offers elsewhere). Both do the first three
 * stages inside a vector with shuffles and the rest two stages per pass over
 * memory (radix 4). fwht_naive() is the textbook radix-2 loop, the
 * reference for tests and the benchmark.
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
