// SPDX-License-Identifier: MIT
/*
 * rdmatb-mpi-bench (examples/mpi) as figures (tool.h): rank 0's lines
 * "allreduce: key=value ...", "latency: ...", "bandwidth: ..." and
 * "rdmatb-mpi-bench: ranks=N". Times are microseconds there and
 * nanoseconds here; MBps is 10^6 bytes a second. Other lines (mpirun's
 * own) are not ours and are passed over; one of ours that lacks a figure,
 * or no allreduce line at all, fails at that line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/wl/tool_int.h"

/* a line's key=value figures: the keys wanted, their JSON names, scales */
struct fig {
	const char *key, *as;
	double scale;
};

static const struct fig allreduce[] = {
	{ "bytes", "allreduce_bytes", 1 },   { "iters", "allreduce_iters", 1 },
	{ "avg_us", "allreduce_avg_ns", 1e3 }, { "p50_us", "allreduce_p50_ns", 1e3 },
	{ "p99_us", "allreduce_p99_ns", 1e3 }, { "max_us", "allreduce_max_ns", 1e3 },
	{ "busbw_MBps", "busbw_bytes_per_s", 1e6 }, { "wrong", "wrong", 1 }, { NULL, NULL, 0 },
};
static const struct fig latency[] = {
	{ "iters", "lat_iters", 1 },	    { "avg_us", "lat_avg_ns", 1e3 },
	{ "p50_us", "lat_p50_ns", 1e3 },    { "p99_us", "lat_p99_ns", 1e3 },
	{ NULL, NULL, 0 },
};
static const struct fig bandwidth[] = {
	{ "bytes", "bw_msg_bytes", 1 }, { "window", "bw_window", 1 },
	{ "MBps", "bw_bytes_per_s", 1e6 }, { NULL, NULL, 0 },
};
static const struct fig header[] = { { "ranks", "ranks", 1 }, { NULL, NULL, 0 } };

static const struct {
	const char *prefix;
	const struct fig *figs;
} lines[] = {
	{ "rdmatb-mpi-bench:", header },
	{ "allreduce:", allreduce },
	{ "latency:", latency },
	{ "bandwidth:", bandwidth },
};

/* " key=value" in text: its number in *v, or 0 when absent or not a number */
static int figure(const char *text, const char *key, double *v)
{
	size_t kl = strlen(key);

	for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
		char *e;

		if ((p != text && p[-1] != ' ') || p[kl] != '=')
			continue;
		*v = strtod(p + kl + 1, &e);
		return e != p + kl + 1 && (*e == ' ' || !*e);
	}
	return 0;
}

int tool_mpi_parse(const char *buf, size_t len, const char *name, json_t **out, char *err,
		   size_t errlen)
{
	const char *p = buf, *end = buf + len;
	json_t *o = json_object();
	int line = 0, seen = 0;
	char text[512];

	while (p < end) {
		tool_line(&p, end, text, sizeof(text));
		line++;
		for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
			size_t pl = strlen(lines[i].prefix);

			if (strncmp(text, lines[i].prefix, pl))
				continue;
			for (const struct fig *f = lines[i].figs; f->key; f++) {
				double v;

				if (!figure(text + pl, f->key, &v)) {
					snprintf(err, errlen, "%s:%d: rdmatb-mpi-bench: no number for %s",
						 name, line, f->key);
					json_decref(o);
					return -EBADMSG;
				}
				json_object_set_new(o, f->as, f->scale == 1 ? json_integer((json_int_t)v) :
									      json_real(v * f->scale));
			}
			seen |= i == 1;
		}
	}
	if (!seen) {
		snprintf(err, errlen, "%s:%d: rdmatb-mpi-bench: no allreduce: line (did the job end?)",
			 name, line ? line : 1);
		json_decref(o);
		return -EBADMSG;
	}
	json_object_set_new(o, "runs", json_integer(1));
	*out = json_pack("{s:o}", "mpi_bench", o);
	return 0;
}

void tool_mpi_merge(json_t *a, const json_t *b)
{
	json_t *ma = json_object_get(a, "mpi_bench");
	const json_t *mb = json_object_get(b, "mpi_bench");
	json_int_t wa = json_integer_value(json_object_get(ma, "wrong"));
	json_int_t wb = json_integer_value(json_object_get(mb, "wrong"));

	tool_merge_one(a, b, "mpi_bench");
	ma = json_object_get(a, "mpi_bench");
	if (ma && mb)	/* the worst run's wrong elements: the most */
		json_object_set_new(ma, "wrong", json_integer(wa > wb ? wa : wb));
}
