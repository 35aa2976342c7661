// SPDX-License-Identifier: MIT
/*
 * A report directory's files from its report JSON: report.json itself,
 * summary.csv, report.html and one HdrHistogram interval log per arm. Every
 * rendering reads the JSON written to report.json, so `rdmactl report DIR`
 * redraws exactly what the run saw.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "ctl/report/report.h"
#include "lib/hlog.h"

/* the wall clock at t0_node_ns, the moment interval times count from, in
 * ms since the epoch: t0_unix_ns, or (a report from before it) "created" */
static long long start_ms(const json_t *rep)
{
	json_int_t t = json_integer_value(json_object_get(rep, "t0_unix_ns"));
	struct tm tm;

	if (t > 0)
		return (long long)(t / 1000000);
	memset(&tm, 0, sizeof(tm));
	if (!strptime(jr_str(rep, "created"), "%Y-%m-%dT%H:%M:%SZ", &tm))
		return 0;
	return (long long)timegm(&tm) * 1000;
}

int report_hlog(const json_t *rep, const json_t *arm, FILE *f)
{
	json_int_t t0_ns = json_integer_value(json_object_get(rep, "t0_node_ns"));
	long long start = start_ms(rep);
	time_t secs = (time_t)(start / 1000);
	char when[40] = "";
	const json_t *e;
	struct tm tm;
	size_t i;

	/* HdrHistogram's own line: seconds with 3 decimals, then the date */
	if (gmtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%a %b %d %H:%M:%S UTC %Y", &tm);

	fprintf(f, "#[Histogram log format version 1.3]\n"
		   "#[rdma-testbed: arm %s (mode %s), step/operation time in ns; timestamps in s "
		   "from the run's start]\n"
		   "#[StartTime: %lld.%03lld (seconds since epoch), %s]\n"
		   "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
		   "\"Interval_Compressed_Histogram\"\n",
		json_string_value(json_object_get(arm, "name")),
		json_string_value(json_object_get(arm, "mode")), start / 1000, start % 1000, when);
	json_array_foreach(json_object_get(arm, "intervals"), i, e) {
		struct hist h;
		char *b;
		json_int_t ts = json_integer_value(json_object_get(e, "t_start_ns")),
			   te = json_integer_value(json_object_get(e, "t_ns"));

		if (hist_from_json(&h, json_object_get(e, "lat_ns")) || !(b = hist_hdr_base64(&h)))
			return -ENOMEM;
		/* Interval_Max in milliseconds: HdrHistogram's default unit ratio 1e6 */
		fprintf(f, "Tag=%s,%.3f,%.3f,%.3f,%s\n", json_string_value(json_object_get(arm, "name")),
			(double)(ts - t0_ns) / 1e9, (double)(te - ts) / 1e9, (double)h.max / 1e6, b);
		free(b);
	}
	return ferror(f) ? -EIO : 0;
}

/*
 * dir/name written whole or not at all: into a new file of its own
 * (mkstemp: O_EXCL, nothing planted can be followed), renamed into place
 * once complete, removed when anything failed.
 */
int report_write_whole(const char *path, int (*fn)(const json_t *, const void *, FILE *),
		       const json_t *rep, const void *arg, char *err, size_t errlen)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char tmp[PATH_MAX];
	FILE *f = NULL;
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%.*s.%s.XXXXXX", (int)(base - path), path, base) >=
	    (int)sizeof(tmp)) {
		snprintf(err, errlen, "%s: name too long", path);
		return -ENAMETOOLONG;
	}
	fd = mkstemp(tmp);
	if (fd < 0 || fchmod(fd, 0644) || !(f = fdopen(fd, "w"))) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return r;
	}
	errno = 0;
	r = fn(rep, arg, f);
	if (fflush(f) || ferror(f) || r || fsync(fd)) {
		r = errno ? -errno : r ? r : -EIO;
		snprintf(err, errlen, "%s: write failed%s%s", path, errno ? ": " : "",
			 errno ? strerror(errno) : "");
		fclose(f);
		unlink(tmp);
		return r;
	}
	if (fclose(f) || rename(tmp, path)) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		unlink(tmp);
		return r;
	}
	return 0;
}

static int write_file(const char *dir, const char *name, int (*fn)(const json_t *, const void *,
								  FILE *),
		      const json_t *rep, const void *arg, char *err, size_t errlen)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return report_write_whole(path, fn, rep, arg, err, errlen);
}

static int w_json(const json_t *rep, const void *arg, FILE *f)
{
	(void)arg;
	/* full precision: re-rendering from the file gives the same text */
	return json_dumpf(rep, f, JSON_INDENT(1) | JSON_REAL_PRECISION(17)) || fputc('\n', f) == EOF;
}

static int w_csv(const json_t *rep, const void *arg, FILE *f)
{
	(void)arg;
	return report_csv(rep, f);
}

static int w_html(const json_t *rep, const void *arg, FILE *f)
{
	(void)arg;
	return report_html(rep, f);
}

static int w_nccl(const json_t *rep, const void *arg, FILE *f)
{
	(void)arg;
	return report_nccl_tests(rep, f);
}

static int w_perfetto(const json_t *rep, const void *arg, FILE *f)
{
	(void)arg;
	return report_trace_events(rep, f);
}

static int w_hlog(const json_t *rep, const void *arm, FILE *f)
{
	return report_hlog(rep, arm, f);
}

int report_write(json_t *rep, const char *dir, char *err, size_t errlen)
{
	const json_t *arm;
	size_t i;
	int r;

	if ((r = write_file(dir, "report.json", w_json, rep, NULL, err, errlen)) ||
	    (r = write_file(dir, "summary.csv", w_csv, rep, NULL, err, errlen)) ||
	    (r = write_file(dir, "report.html", w_html, rep, NULL, err, errlen)) ||
	    (r = write_file(dir, "perfetto.json", w_perfetto, rep, NULL, err, errlen)) ||
	    (report_nccl_applies(rep) &&
	     (r = write_file(dir, "nccl-tests.json", w_nccl, rep, NULL, err, errlen))))
		return r;
	json_array_foreach(json_object_get(rep, "arms"), i, arm) {
		char name[80], *c;

		/* the arm's name as a file name in dir: profiles allow no other
		 * characters (ctl/exp/check.h), a report.json from elsewhere may */
		snprintf(name, sizeof(name), "%.64s.hlog", json_string_value(json_object_get(arm, "name")));
		for (c = name; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || (*c == '.' && c > name)))
				*c = '_';
		r = write_file(dir, name, w_hlog, rep, arm, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

/* JUnit XML (report_junit_print, expect.c), written whole like the rest */
struct junit_arg {
	const char *suite, *err;
};

static int w_junit(const json_t *rep, const void *arg, FILE *f)
{
	const struct junit_arg *j = arg;

	return report_junit_print(rep, j->suite, j->err, f);
}

int report_junit(const json_t *rep, const char *suite, const char *err, const char *path,
		 char *msg, size_t len)
{
	struct junit_arg j = { suite, err };

	return report_write_whole(path, w_junit, rep, &j, msg, len);
}
