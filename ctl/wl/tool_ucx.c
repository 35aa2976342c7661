// SPDX-License-Identifier: MIT
/*
 * UCX's ucx_perftest as figures (tool.h): its table's "Final:" line, the
 * whole run's. The header says whether the time columns are latency
 * (a latency test) or overhead (a bandwidth test); after the iterations
 * come that time's 50th percentile, its moment's and its overall average
 * (usec), the bandwidth's (MB/s: UCX's MB is 2^20 bytes) and the message
 * rate's (msg/s). Its four-column form (several threads) has the overall
 * averages only. Anything else on the Final line fails at that line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/wl/tool_int.h"

int tool_ucx_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
		   size_t errlen)
{
	const char *p = buf, *end = buf + len, *fin = NULL;
	int line = 0, fline = 0, overhead = -1, n = 0;
	double v[9];
	json_t *o;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		line++;
		if (l > 6 && !strncmp(p, "Final:", 6)) {
			fin = p + 6;
			fline = line;
		} else if (memmem(p, l, "latency (usec)", 14)) {
			overhead = 0;
		} else if (memmem(p, l, "overhead (usec)", 15)) {
			overhead = 1;
		}
		p = nl ? nl + 1 : end;
	}
	if (!fin) {
		snprintf(err, errlen, "%s:%d: ucx_perftest: no Final: line (the run did not end?)",
			 name, line ? line : 1);
		return -EBADMSG;
	}
	{
		char text[256], *s = text, *e;
		size_t l = strcspn(fin, "\n");

		if (l >= sizeof(text))
			l = sizeof(text) - 1;
		memcpy(text, fin, l);
		text[l] = 0;
		for (n = 0; n < 9; n++, s = e) {
			v[n] = strtod(s, &e);
			if (e == s)
				break;
		}
		while (*s == ' ' || *s == '\t')
			s++;
		if ((n != 8 && n != 4) || *s || overhead < 0) {
			snprintf(err, errlen, "%s:%d: ucx_perftest: %s", name, fline,
				 overhead < 0 ? "no latency or overhead header above the Final: line" :
						"a Final: line of 8 (or 4) numbers expected");
			return -EBADMSG;
		}
	}
	o = json_pack("{s:s,s:I}", "time_is", overhead ? "overhead" : "latency", "iters",
		      (json_int_t)v[0]);
	if (n == 8) {
		json_object_set_new(o, "lat_typical_ns", json_real(v[1] * 1e3));
		json_object_set_new(o, "lat_avg_ns", json_real(v[3] * 1e3));
		json_object_set_new(o, "bw_bytes_per_s", json_real(v[5] * 1048576));
		json_object_set_new(o, "msg_rate_per_s", json_real(v[7]));
	} else {
		json_object_set_new(o, "lat_avg_ns", json_real(v[1] * 1e3));
		json_object_set_new(o, "bw_bytes_per_s", json_real(v[2] * 1048576));
		json_object_set_new(o, "msg_rate_per_s", json_real(v[3]));
	}
	json_object_set_new(o, "runs", json_integer(1));
	*out = json_pack("{s:o}", "ucx_perftest", o);
	return 0;
}
