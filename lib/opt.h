/* SPDX-License-Identifier: MIT */
/*
 * One option table per workload/tool drives the JSON (control channel and,
 * later, YAML profiles), the CLI `--key value` form and `--help`:
 *   { name, kind, offset, min, max, default, help }.
 * Values arrive as strings ("4k", "10ms", "1%") or JSON integers and go
 * through num_parse(); enums list their keywords, matched exactly.
 */
#ifndef RTB_OPT_H
#define RTB_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "num.h"

enum opt_kind { OPT_UINT, OPT_SIZE, OPT_TIME, OPT_PPM, OPT_ENUM };

struct opt {
	const char *name;
	enum opt_kind kind;
	size_t off;		/* of a uint64_t (numbers) or int (enum index) */
	uint64_t min, max;
	const char *def;	/* default, as text */
	const char *const *keywords; /* OPT_ENUM: NULL-terminated */
	const char *help;
};

/* defaults, then every key of obj (NULL: defaults only). Unknown key ->
 * "unknown option 'x' (did you mean 'y'?)" in err, -EINVAL. */
int opt_apply_json(const struct opt *t, void *cfg, const json_t *obj, char *err, size_t errlen);
int opt_set(const struct opt *t, void *cfg, const char *name, const char *val, char *err,
	    size_t errlen);
/* the table's values back as JSON, keywords as strings, numbers as integers */
json_t *opt_to_json(const struct opt *t, const void *cfg);
/* one line per option: --name, help, the accepted values, the default */
void opt_help(const struct opt *t, FILE *f);
/* "usage: SYNOPSIS" and the table's lines: usage generated, never hand-written */
void opt_usage(const char *synopsis, const struct opt *t, FILE *f);
/* defaults, then --name value / --name=value pairs of argv (messages name
 * --name as typed); other words into pos (at most argc; NULL: refused).
 * 0 or -EINVAL with the message in err */
int opt_parse_argv(const struct opt *t, void *cfg, int argc, char **argv, int *npos, char **pos,
		   char *err, size_t errlen);
/* closest of names (NULL-terminated) by edit distance, or NULL if none is close */
const char *opt_suggest(const char *word, const char *const *names);

#endif
