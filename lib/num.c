// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "num.h"

struct unit {
	const char *name;
	double mult;
};

static const struct unit size_units[] = {
	{ "", 1 },	     { "b", 1 },	{ "k", 1024.0 },	{ "kb", 1024.0 },
	{ "kib", 1024.0 },   { "m", 1048576.0 }, { "mb", 1048576.0 }, { "mib", 1048576.0 },
	{ "g", 1073741824.0 }, { "gb", 1073741824.0 }, { "gib", 1073741824.0 }, { NULL, 0 },
};

static const struct unit time_units[] = {
	{ "", 1 },	  { "ns", 1 },	      { "us", 1e3 }, { "ms", 1e6 },
	{ "s", 1e9 },	  { "m", 60e9 },      { "min", 60e9 }, { "h", 3600e9 }, { NULL, 0 },
};

static const struct unit ppm_units[] = {
	{ "", 1e6 }, { "%", 1e4 }, { "ppm", 1 }, { NULL, 0 },
};

static const struct unit *units_of(enum num_kind kind)
{
	switch (kind) {
	case NUM_SIZE:
		return size_units;
	case NUM_TIME:
		return time_units;
	case NUM_PPM:
		return ppm_units;
	default:
		return NULL;
	}
}

int num_parse(const char *s, enum num_kind kind, uint64_t min, uint64_t max, uint64_t *out,
	      const char **why)
{
	const struct unit *u = units_of(kind);
	const char *why_dummy;
	char *end;
	double v;

	if (!why)
		why = &why_dummy;
	if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+') {
		*why = "expected a non-negative number";
		return -EINVAL;
	}
	if (!u) {
		unsigned long long x;

		/* decimal, or hex with 0x; never octal: 010 is ten, as a reader
		 * of a rule or a profile means it */
		errno = 0;
		x = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
		if (errno || end == s || *end) {
			*why = "expected an integer";
			return -EINVAL;
		}
		if (x < min || x > max) {
			*why = "out of range";
			return -ERANGE;
		}
		*out = x;
		return 0;
	}
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))) {
		*why = "expected a number";
		return -EINVAL;
	}
	for (; u->name; u++) {
		if (strcasecmp(end, u->name))
			continue;
		v *= u->mult;
		if (v > 18446744073709549568.0) {
			*why = "out of range";
			return -ERANGE;
		}
		/* sizes and counts must be whole after scaling: "1.5" bytes is a typo */
		if (kind != NUM_PPM && v != floor(v)) {
			*why = "not a whole number of the base unit";
			return -EINVAL;
		}
		if (v < (double)min || v > (double)max) {
			*why = "out of range";
			return -ERANGE;
		}
		*out = (uint64_t)llround(v);
		return 0;
	}
	*why = kind == NUM_SIZE ? "unknown size unit (use k, M, G)" :
	       kind == NUM_TIME ? "unknown time unit (use ns, us, ms, s, m, h)" :
				  "unknown unit (use % or ppm)";
	return -EINVAL;
}

void num_format(enum num_kind kind, uint64_t v, char *buf, unsigned int len)
{
	static const struct {
		enum num_kind kind;
		uint64_t mult;
		const char *unit;
	} u[] = {
		{ NUM_SIZE, 1ULL << 30, "G" },	{ NUM_SIZE, 1ULL << 20, "M" },
		{ NUM_SIZE, 1ULL << 10, "k" },	{ NUM_TIME, 3600000000000ULL, "h" },
		{ NUM_TIME, 60000000000ULL, "m" }, { NUM_TIME, 1000000000ULL, "s" },
		{ NUM_TIME, 1000000ULL, "ms" },	{ NUM_TIME, 1000ULL, "us" },
		{ NUM_TIME, 1, "ns" },		{ NUM_PPM, 10000, "%" },
		{ NUM_PPM, 1, "ppm" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (u[i].kind == kind && v && v % u[i].mult == 0 && v / u[i].mult < 100000) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(v / u[i].mult), u[i].unit);
			return;
		}
	snprintf(buf, len, "%llu%s", (unsigned long long)v,
		 kind == NUM_TIME ? "ns" : kind == NUM_PPM ? "ppm" : "");
}
