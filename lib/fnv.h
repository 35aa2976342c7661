/* SPDX-License-Identifier: MIT */
/* FNV-1a, 64 bits: a hash of bytes, continued from h (start: FNV_OFFSET). */
#ifndef RTB_FNV_H
#define RTB_FNV_H

#include <stddef.h>
#include <stdint.h>

#define FNV_OFFSET 0xcbf29ce484222325ULL

static inline uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

#endif
