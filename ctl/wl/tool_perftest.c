// SPDX-License-Identifier: MIT
/*
 * perftest's result table (ib_write_bw, ib_send_lat and the rest) as
 * figures (tool.h). The table is a header line that starts with "#bytes"
 * and one row a message size below it; lines between them that are not
 * rows (perftest's CPU frequency warnings) are passed over, a line of
 * dashes ends it. Units are perftest's: MB/sec is 0x100000 bytes a second
 * (its format_factor), Gb/sec 125000000 bytes, usec 1000 ns, Mpps 1e6.
 * A column this parser does not know fails at the header's line: its
 * figures are never guessed.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/wl/tool_int.h"

/* a header's column: its text before the unit, the unit, our key, the factor */
static const struct {
	const char *name, *unit, *key;
	double mult;
} cols[] = {
	{ "#bytes", NULL, "bytes", 1 },
	{ "#iterations", NULL, "iterations", 1 },
	{ "#sl", NULL, "sl", 1 },
	{ "BW peak", "MB/sec", "bw_peak_bytes_per_s", 1048576 },
	{ "BW peak", "MiB/sec", "bw_peak_bytes_per_s", 1048576 },
	{ "BW peak", "Gb/sec", "bw_peak_bytes_per_s", 125000000 },
	{ "BW average", "MB/sec", "bw_avg_bytes_per_s", 1048576 },
	{ "BW average", "MiB/sec", "bw_avg_bytes_per_s", 1048576 },
	{ "BW average", "Gb/sec", "bw_avg_bytes_per_s", 125000000 },
	{ "MsgRate", "Mpps", "msg_rate_per_s", 1e6 },
	{ "t_min", "usec", "lat_min_ns", 1e3 },
	{ "t_max", "usec", "lat_max_ns", 1e3 },
	{ "t_typical", "usec", "lat_typical_ns", 1e3 },
	{ "t_avg", "usec", "lat_avg_ns", 1e3 },
	{ "t_stdev", "usec", "lat_stdev_ns", 1e3 },
	{ "99% percentile", "usec", "lat_p99_ns", 1e3 },
	{ "99.9% percentile", "usec", "lat_p99_9_ns", 1e3 },
	{ "CPU_Util", "%", "cpu_util_pct", 1 },
};

#define NCOLS (sizeof(cols) / sizeof(cols[0]))
#define MAXCOL 16

/* one column's text ("BW average[MB/sec]") as its index into cols, or -ENOENT */
static int column(const char *text)
{
	const char *br = strchr(text, '[');
	size_t k = br ? (size_t)(br - text) : strlen(text), c;

	for (c = 0; c < NCOLS; c++) {
		if (strlen(cols[c].name) != k || strncmp(cols[c].name, text, k))
			continue;
		if (!cols[c].unit ? !br :
		    br && !strncmp(br + 1, cols[c].unit, strlen(cols[c].unit)) &&
			    !strcmp(br + 1 + strlen(cols[c].unit), "]"))
			return (int)c;
	}
	return -ENOENT;
}

/* the header's columns (words joined up to one that ends in its "[unit]",
 * or one "#word"): their indices into cols; the count, or -EBADMSG with *why */
static int header(const char *line, size_t len, int *idx, char *why, size_t wlen)
{
	char text[64];
	size_t i = 0, t = 0;
	int n = 0;

	while (i <= len) {
		size_t w;

		while (i < len && isspace((unsigned char)line[i]))
			i++;
		if (i >= len)
			break;
		w = i;
		while (i < len && !isspace((unsigned char)line[i]))
			i++;
		if (t + 1 + (i - w) >= sizeof(text)) {
			snprintf(why, wlen, "perftest: a column's name too long");
			return -EBADMSG;
		}
		if (t)
			text[t++] = ' ';
		memcpy(text + t, line + w, i - w);
		t += i - w;
		text[t] = 0;
		if (line[w] != '#' && line[i - 1] != ']')
			continue;	/* "BW", then "average[MB/sec]" */
		if (n >= MAXCOL || (idx[n] = column(text)) < 0) {
			snprintf(why, wlen, "perftest: column '%s' unknown", text);
			return -EBADMSG;
		}
		n++;
		t = 0;
	}
	if (t) {
		snprintf(why, wlen, "perftest: column '%s' has no [unit]", text);
		return -EBADMSG;
	}
	return n;
}

/* a row of n numbers into a new object, or NULL. A column perftest
 * printed as inf or nan (its CPU clock calibration failed: "Correlation
 * coefficient r^2 < 0.9" on its stderr, a busy machine) has no figure; its
 * key and what was printed go in "unmeasured" */
static json_t *row(const char *line, size_t len, const int *idx, int n)
{
	char buf[512], *p, *end;
	json_t *o = json_object();
	int k;

	if (len >= sizeof(buf))
		return json_decref(o), NULL;
	memcpy(buf, line, len);
	buf[len] = 0;
	p = buf;
	for (k = 0; k < n; k++) {
		double v;

		while (isspace((unsigned char)*p))
			p++;
		v = strtod(p, &end);

		if (end == p || (*end && !isspace((unsigned char)*end)))
			return json_decref(o), NULL;
		if (!isfinite(v)) {
			json_t *u = json_object_get(o, "unmeasured");

			if (!u)
				json_object_set_new(o, "unmeasured", u = json_object());
			json_object_set_new(u, cols[idx[k]].key,
					    json_stringn(p, (size_t)(end - p)));
			p = end;
			continue;
		}
		p = end;
		v *= cols[idx[k]].mult;
		json_object_set_new(o, cols[idx[k]].key,
				    cols[idx[k]].mult == 1 && !strstr(cols[idx[k]].key, "pct") ?
					    json_integer((json_int_t)v) : json_real(v));
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p)
		return json_decref(o), NULL;
	return o;
}

int tool_perftest_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
			size_t errlen)
{
	const char *p = buf, *end = buf + len;
	int idx[MAXCOL], n = -1, line = 0, hline = 0;
	json_t *rows = NULL;
	char why[160];

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *s = p;

		line++;
		p = nl ? nl + 1 : end;
		while (l && isspace((unsigned char)*s))
			s++, l--;
		if (!strncmp(s, "#bytes", 6)) {
			if (rows)	/* a second table (a server's, say): the first one's */
				break;
			n = header(s, l, idx, why, sizeof(why));
			if (n < 0) {
				snprintf(err, errlen, "%s:%d: %s", name, line, why);
				return -EBADMSG;
			}
			hline = line;
			rows = json_array();
			continue;
		}
		if (!rows)
			continue;
		if (!l)
			continue;
		if (s[0] == '-') {
			if (json_array_size(rows))
				break;
			continue;
		}
		if (!isdigit((unsigned char)s[0]))
			continue;	/* perftest's warnings between the header and its rows */
		{
			json_t *r = row(s, l, idx, n);

			if (!r) {
				json_decref(rows);
				snprintf(err, errlen, "%s:%d: perftest: a row of %d numbers expected "
					 "under the header of line %d", name, line, n, hline);
				return -EBADMSG;
			}
			json_array_append_new(rows, r);
		}
	}
	if (!rows || !json_array_size(rows)) {
		json_decref(rows);
		snprintf(err, errlen, "%s:%d: perftest: %s", name, rows ? hline : line,
			 rows ? "a header and no rows under it" : "no result table (a #bytes line)");
		return -EBADMSG;
	}
	{	/* the last row (the largest size with -a) at the top, all of them in rows */
		json_t *o = json_deep_copy(json_array_get(rows, json_array_size(rows) - 1));

		json_object_set_new(o, "rows", rows);
		json_object_set_new(o, "runs", json_integer(1));
		*out = json_pack("{s:o}", "perftest", o);
	}
	return 0;
}
