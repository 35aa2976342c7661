// SPDX-License-Identifier: MIT
/*
 * libfabric's fabtests (fi_pingpong, fi_rdm_tagged_bw, ...) as figures
 * (tool.h): their performance table, a header that starts with "bytes"
 * and a row a message size. Sizes and totals carry fabtests' binary
 * suffixes (1k is 1024), "#ack" its '=' and "time" its 's'; MB/sec is
 * bytes a microsecond (10^6 bytes a second), usec/xfer the time of one
 * transfer. A column or cell this parser does not know fails at its line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/wl/tool_int.h"

static const struct {
	const char *name, *key;
	double mult;
} cols[] = {
	{ "bytes", "bytes", 1 },	{ "#sent", "sent", 1 },
	{ "#ack", "acked", 1 },		{ "iters", "iters", 1 },
	{ "total", "total_bytes", 1 },	{ "time", "time_ns", 1e9 },
	{ "MB/sec", "bw_bytes_per_s", 1e6 }, { "usec/xfer", "lat_ns", 1e3 },
	{ "Mxfers/sec", "xfers_per_s", 1e6 },
};

#define NCOLS (sizeof(cols) / sizeof(cols[0]))
#define MAXCOL 12

/* one cell: a number with fabtests' decorations ("=50", "6.2k", "0.41s") */
static int cell(const char *s, double *v)
{
	char *end;

	if (*s == '=')
		s++;
	*v = strtod(s, &end);
	if (end == s)
		return -EBADMSG;
	switch (*end) {
	case 'k':
		*v *= 1024, end++;
		break;
	case 'm':
		*v *= 1048576, end++;
		break;
	case 'g':
		*v *= 1073741824.0, end++;
		break;
	case 's':
		end++;
		break;
	}
	return *end ? -EBADMSG : 0;
}

/* a line's words (at most max, in place): how many */
static int words(char *s, char **w, int max)
{
	int n = 0;

	for (char *save = NULL, *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		if (n < max + 1)
			w[n++] = t;
	return n;
}

int tool_fabtests_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
			size_t errlen)
{
	const char *p = buf, *end = buf + len;
	int idx[MAXCOL], n = 0, line = 0, hline = 0;
	json_t *rows = NULL;

	while (p < end) {
		char text[512], *w[MAXCOL + 1];
		int k, m;

		tool_line(&p, end, text, sizeof(text));
		line++;
		if (!rows && !strncmp(text, "bytes", 5) && isspace((unsigned char)text[5])) {
			n = words(text, w, MAXCOL);
			for (k = 0; k < n && k < MAXCOL; k++) {
				size_t c;

				for (c = 0; c < NCOLS && strcmp(cols[c].name, w[k]); c++)
					;
				if (c == NCOLS || n > MAXCOL) {
					snprintf(err, errlen, "%s:%d: fabtests: column '%s' unknown", name,
						 line, w[k]);
					return -EBADMSG;
				}
				idx[k] = (int)c;
			}
			rows = json_array();
			hline = line;
			continue;
		}
		if (!rows || !isdigit((unsigned char)text[0]))
			continue;	/* before the table, or a warning in it */
		m = words(text, w, MAXCOL);
		{
			json_t *r = json_object();

			for (k = 0; k < m && m == n; k++) {
				double v;

				if (cell(w[k], &v))
					break;
				json_object_set_new(r, cols[idx[k]].key, json_real(v * cols[idx[k]].mult));
			}
			if (m != n || k < m) {
				json_decref(r);
				json_decref(rows);
				snprintf(err, errlen, "%s:%d: fabtests: a row of %d cells expected under "
					 "the header of line %d", name, line, n, hline);
				return -EBADMSG;
			}
			json_array_append_new(rows, r);
		}
	}
	if (!rows || !json_array_size(rows)) {
		json_decref(rows);
		snprintf(err, errlen, "%s:%d: fabtests: %s", name, rows ? hline : line ? line : 1,
			 rows ? "a header and no rows under it" : "no result table (a bytes ... line)");
		return -EBADMSG;
	}
	{	/* the last row (the largest size with -S all) at the top, all in rows */
		json_t *o = json_deep_copy(json_array_get(rows, json_array_size(rows) - 1));

		json_object_set_new(o, "rows", rows);
		json_object_set_new(o, "runs", json_integer(1));
		*out = json_pack("{s:o}", "fabtests", o);
	}
	return 0;
}
