// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "opt.h"

static const struct opt *find(const struct opt *t, const char *name)
{
	for (; t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

/* edits from a to b: insertions, deletions, substitutions and swaps of two
 * neighbours ("dorp" is one from "drop"), each counting 1 */
static size_t lev(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, v;
	size_t d[3][64];	/* rows i-2, i-1, i (mod 3) */

	if (lb >= 64 || la >= 64)
		return 64;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		size_t *r = d[i % 3], *p = d[(i - 1) % 3], *pp = d[(i + 1) % 3];

		r[0] = i;
		for (j = 1; j <= lb; j++) {
			v = p[j - 1] + (a[i - 1] != b[j - 1]);
			if (p[j] + 1 < v)
				v = p[j] + 1;
			if (r[j - 1] + 1 < v)
				v = r[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < v)
				v = pp[j - 2] + 1;
			r[j] = v;
		}
	}
	return d[la % 3][lb];
}

const char *opt_suggest(const char *word, const char *const *names)
{
	const char *best = NULL;
	size_t bd = (size_t)-1, d;

	for (; *names; names++) {
		d = lev(word, *names);
		if (d < bd) {
			bd = d;
			best = *names;
		}
	}
	return bd <= 2 || (best && bd <= strlen(best) / 3) ? best : NULL;
}

static void unknown(const struct opt *t, const char *name, char *err, size_t errlen)
{
	const char *names[64], *s;
	size_t n = 0;

	for (; t->name && n < 63; t++)
		names[n++] = t->name;
	names[n] = NULL;
	s = opt_suggest(name, names);
	if (s)
		snprintf(err, errlen, "unknown option '%s' (did you mean '%s'?)", name, s);
	else
		snprintf(err, errlen, "unknown option '%s'", name);
}

static enum num_kind num_kind_of(enum opt_kind k)
{
	switch (k) {
	case OPT_SIZE:
		return NUM_SIZE;
	case OPT_TIME:
		return NUM_TIME;
	case OPT_PPM:
		return NUM_PPM;
	default:
		return NUM_PLAIN;
	}
}

/* cli: messages name the option as the command line does (--name 'v') */
static int set_one_as(const struct opt *o, void *cfg, const char *val, int cli, char *err,
		      size_t errlen)
{
	const char *why;
	uint64_t v;
	int i, r;

	if (o->kind == OPT_ENUM) {
		for (i = 0; o->keywords[i]; i++) {
			if (!strcmp(o->keywords[i], val)) {
				*(int *)((char *)cfg + o->off) = i;
				return 0;
			}
		}
		if (cli)
			snprintf(err, errlen, "--%s '%s': unknown value", o->name, val);
		else
			snprintf(err, errlen, "%s: unknown value '%s'", o->name, val);
		for (i = 0; o->keywords[i]; i++) {
			size_t l = strlen(err);

			snprintf(err + l, errlen - l, "%s%s", i ? "|" : " (expected ", o->keywords[i]);
		}
		if (strlen(err) + 2 < errlen)
			strcat(err, ")");
		return -EINVAL;
	}
	r = num_parse(val, num_kind_of(o->kind), o->min, o->max, &v, &why);
	if (r) {
		char lo[32], hi[32];

		num_format(num_kind_of(o->kind), o->min, lo, sizeof(lo));
		num_format(num_kind_of(o->kind), o->max, hi, sizeof(hi));
		snprintf(err, errlen, cli ? "--%s '%s': %s (%s..%s)" : "%s: '%s': %s (%s..%s)", o->name,
			 val, why, lo, hi);
		return r;
	}
	*(uint64_t *)((char *)cfg + o->off) = v;
	return 0;
}

static int set_one(const struct opt *o, void *cfg, const char *val, char *err, size_t errlen)
{
	return set_one_as(o, cfg, val, 0, err, errlen);
}

int opt_set(const struct opt *t, void *cfg, const char *name, const char *val, char *err,
	    size_t errlen)
{
	const struct opt *o = find(t, name);

	if (!o) {
		unknown(t, name, err, errlen);
		return -EINVAL;
	}
	return set_one(o, cfg, val, err, errlen);
}

int opt_apply_json(const struct opt *t, void *cfg, const json_t *obj, char *err, size_t errlen)
{
	const struct opt *o;
	const char *k;
	json_t *v;
	char buf[32];
	int r;

	for (o = t; o->name; o++) {
		r = set_one(o, cfg, o->def, err, errlen);
		if (r)
			return r;	/* a bad default is a bug: the unit test catches it */
	}
	if (!obj)
		return 0;
	if (!json_is_object(obj)) {
		snprintf(err, errlen, "options must be an object");
		return -EINVAL;
	}
	json_object_foreach((json_t *)obj, k, v) {
		const char *s;

		o = find(t, k);
		if (!o) {
			unknown(t, k, err, errlen);
			return -EINVAL;
		}
		if (json_is_string(v)) {
			s = json_string_value(v);
		} else if (json_is_integer(v) && o->kind != OPT_ENUM) {
			snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
			s = buf;
		} else {
			snprintf(err, errlen, "%s: expected %s", k,
				 o->kind == OPT_ENUM ? "a keyword" : "a number or string");
			return -EINVAL;
		}
		r = set_one(o, cfg, s, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

json_t *opt_to_json(const struct opt *t, const void *cfg)
{
	json_t *o = json_object();

	for (; o && t->name; t++) {
		const char *p = (const char *)cfg + t->off;

		if (t->kind == OPT_ENUM)
			json_object_set_new(o, t->name, json_string(t->keywords[*(const int *)p]));
		else
			json_object_set_new(o, t->name, json_integer((json_int_t) * (const uint64_t *)p));
	}
	return o;
}

void opt_help(const struct opt *t, FILE *f)
{
	for (; t->name; t++) {
		fprintf(f, "  --%-18s %s (", t->name, t->help);
		if (t->kind != OPT_ENUM)
			fprintf(f, "%s; ", t->kind == OPT_SIZE ? "bytes" : t->kind == OPT_TIME ? "time" :
				t->kind == OPT_PPM ? "percent" : "number");
		else if (!strstr(t->help, t->keywords[0]))	/* the help names them, or we do */
			for (int i = 0; t->keywords[i]; i++)
				fprintf(f, "%s%s", t->keywords[i], t->keywords[i + 1] ? "|" : "; ");
		fprintf(f, "default %s)\n", t->def && *t->def ? t->def : "none");
	}
}

void opt_usage(const char *synopsis, const struct opt *t, FILE *f)
{
	fprintf(f, "usage: %s\n", synopsis);
	opt_help(t, f);
}

int opt_parse_argv(const struct opt *t, void *cfg, int argc, char **argv, int *npos, char **pos,
		   char *err, size_t errlen)
{
	int i, r, n = 0;

	r = opt_apply_json(t, cfg, NULL, err, errlen);
	if (r)
		return r;
	for (i = 0; i < argc; i++) {
		const struct opt *o;
		char name[64];
		const char *val, *eq;

		if (strncmp(argv[i], "--", 2) || !argv[i][2]) {
			if (argv[i][0] == '-' || !pos) {
				snprintf(err, errlen, "unexpected argument '%s'", argv[i]);
				return -EINVAL;
			}
			pos[n++] = argv[i];
			continue;
		}
		eq = strchr(argv[i], '=');
		snprintf(name, sizeof(name), "%.*s", (int)(eq ? eq - argv[i] - 2 : (long)strlen(argv[i]) - 2),
			 argv[i] + 2);
		o = find(t, name);
		if (!o) {
			unknown(t, name, err, errlen);
			return -EINVAL;
		}
		if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			snprintf(err, errlen, "--%s needs a value", name);
			return -EINVAL;
		}
		r = set_one_as(o, cfg, val, 1, err, errlen);
		if (r)
			return r;
	}
	if (npos)
		*npos = n;
	return 0;
}
