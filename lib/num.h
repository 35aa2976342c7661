/* SPDX-License-Identifier: MIT */
/*
 * One number parser for options, profiles and CLI verbs: strtoull with an
 * end pointer, unit suffixes and a range check. Units by kind:
 *   NUM_PLAIN  "123", "0x7b"
 *   NUM_SIZE   bytes: "4k"/"4K"/"4KiB" = 4096, "1M", "2G" (binary)
 *   NUM_TIME   nanoseconds: "250ns", "10us", "5ms", "2s", "1m"; bare = ns
 *   NUM_PPM    parts per million: "1%" = 10000, "0.5%", "250ppm"; bare 0..1 fraction
 */
#ifndef RTB_NUM_H
#define RTB_NUM_H

#include <stdint.h>

enum num_kind { NUM_PLAIN, NUM_SIZE, NUM_TIME, NUM_PPM };

/* 0 or -EINVAL (syntax) / -ERANGE (outside [min, max]); *why names the problem */
int num_parse(const char *s, enum num_kind kind, uint64_t min, uint64_t max, uint64_t *out,
	      const char **why);

/* v in its kind's largest unit that divides it ("4M", "100us", "1%", "7") */
void num_format(enum num_kind kind, uint64_t v, char *buf, unsigned int len);

#endif
