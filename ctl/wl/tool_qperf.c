// SPDX-License-Identifier: MIT
/*
 * qperf's output (rc_lat, rc_bw, ud_lat, tcp_bw, ...) as figures (tool.h):
 * a test's name on a line of its own ("rc_lat:"), then its results, one
 * "key = value unit" a line. Values are kept in one unit each: times in
 * ns, rates in bytes or messages a second, sizes in bytes, CPU use in
 * percent. qperf's prefixes are SI (K 1e3, M 1e6, G 1e9), its thousands
 * separated by commas. A unit or line this parser does not know fails at
 * its line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/wl/tool_int.h"

/* a unit: what follows its SI prefix, the key's suffix, the factor to it */
static const struct {
	const char *unit, *suffix;
	double mult;
	int prefixed;	/* takes K, M, G, T */
} units[] = {
	{ "ns", "_ns", 1, 0 },	       { "us", "_ns", 1e3, 0 },
	{ "ms", "_ns", 1e6, 0 },       { "sec", "_ns", 1e9, 0 },
	{ "bytes/sec", "_bytes_per_s", 1, 0 }, { "bits/sec", "_bytes_per_s", 0.125, 0 },
	{ "B/sec", "_bytes_per_s", 1, 1 }, { "b/sec", "_bytes_per_s", 0.125, 1 },
	{ "/sec", "_per_s", 1, 1 },    { "bytes", "_bytes", 1, 0 },
	{ "B", "_bytes", 1, 1 },       { "% cpus", "_pct", 1, 0 },
	{ "", "", 1, 1 },
};

/* "1.95 GB/sec" after the '=': *v in the unit's base, *suffix its key's */
static int value(const char *s, double *v, const char **suffix)
{
	char num[64], *end;
	size_t n = 0;
	double mult = 1;

	while (isspace((unsigned char)*s))
		s++;
	for (; (isdigit((unsigned char)*s) || *s == '.' || *s == ',') && n < sizeof(num) - 1; s++)
		if (*s != ',')
			num[n++] = *s;
	num[n] = 0;
	*v = strtod(num, &end);
	if (!n || *end)
		return -EBADMSG;
	while (isspace((unsigned char)*s))
		s++;
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		const char *t = s;

		mult = 1;
		if (units[u].prefixed && *t && strchr("KMGT", *t) && strcmp(t, units[u].unit)) {
			mult = *t == 'K' ? 1e3 : *t == 'M' ? 1e6 : *t == 'G' ? 1e9 : 1e12;
			t++;
		}
		if (!strcmp(t, units[u].unit)) {
			*v *= mult * units[u].mult;
			*suffix = units[u].suffix;
			return 0;
		}
	}
	return -EBADMSG;
}

int tool_qperf_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
		     size_t errlen)
{
	const char *p = buf, *end = buf + len;
	json_t *tests = json_object(), *cur = NULL;
	int line = 0;

	while (p < end) {
		char text[256], key[64], *eq;
		size_t l = tool_line(&p, end, text, sizeof(text));
		const char *suffix;
		double v;

		line++;
		while (l && isspace((unsigned char)text[l - 1]))
			text[--l] = 0;
		if (!l)
			continue;
		if (!isspace((unsigned char)text[0]) && text[l - 1] == ':' &&
		    strspn(text, "abcdefghijklmnopqrstuvwxyz0123456789_") == l - 1) {
			text[l - 1] = 0;	/* a test: "rc_lat:" */
			cur = json_object();
			json_object_set_new(tests, text, cur);
			continue;
		}
		eq = strchr(text, '=');
		if (!cur || !isspace((unsigned char)text[0]) || !eq ||
		    sscanf(text, " %63[a-z0-9_] =", key) != 1 || value(eq + 1, &v, &suffix)) {
			json_decref(tests);
			snprintf(err, errlen, "%s:%d: qperf: %s", name, line,
				 !cur ? "a line before any test's name (rc_lat:)" :
					"not 'key = value unit' with a unit qperf prints");
			return -EBADMSG;
		}
		strncat(key, suffix, sizeof(key) - strlen(key) - 1);
		json_object_set_new(cur, key, json_real(v));
	}
	if (!json_object_size(tests)) {
		json_decref(tests);
		snprintf(err, errlen, "%s:%d: qperf: no test's results (rc_lat: and its lines)", name,
			 line ? line : 1);
		return -EBADMSG;
	}
	json_object_set_new(tests, "runs", json_integer(1));
	*out = json_pack("{s:o}", "qperf", tests);
	return 0;
}

void tool_qperf_merge(json_t *a, const json_t *b)
{
	json_t *qa = json_object_get(a, "qperf"), *tb;
	const json_t *qb = json_object_get(b, "qperf");
	const char *test;

	if (!qb)
		return;
	if (!qa) {
		json_object_set_new(a, "qperf", json_deep_copy(qb));
		return;
	}
	json_object_foreach((json_t *)qb, test, tb) {
		json_t *ta = json_object_get(qa, test);

		if (!json_is_object(tb))
			continue;
		if (!ta)
			json_object_set_new(qa, test, json_deep_copy(tb));
		else
			tool_worst(ta, tb);
	}
	tool_runs_add(qa, qb);
}
