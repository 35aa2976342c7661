// SPDX-License-Identifier: MIT
/*
 * Tools' output as figures (ctl/wl/tool.h), on real fio: Debian's fio runs
 * here on a file with verify, and its JSON must give the figures fio
 * itself printed; output fio did not write (cut short, text only, text
 * after it, a corrupted job) fails with its file and line, never zeros.
 * The worst-of merge of runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "expect.h"
#include "ctl/wl/tool.h"
#include "lib/proc.h"

static char dir[] = "/tmp/rtb-tool.XXXXXX";

static void put(const char *name, const char *text, size_t len)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	fwrite(text, 1, len, f);
	fclose(f);
}

static int parse(const char *name, json_t **out, char *err, size_t len)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return tool_parse(TOOL_FIO, p, name, out, err, len);
}

static char *slurp(const char *name, size_t *len)
{
	char p[256], *b;
	FILE *f;
	long n;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc((size_t)n + 1);
	*len = fread(b, 1, (size_t)n, f);
	b[*len] = 0;
	fclose(f);
	return b;
}

/* fio's own JSON, read by jansson, against our figures */
static void real_fio(void)
{
	char file[256], out[128], err[256];
	char *argv[] = { "fio", "--name=t", file, "--size=2M", "--rw=randwrite", "--bs=4k",
			 "--iodepth=1", "--verify=crc32c", "--verify_state_save=0",
			 "--output-format=json", NULL };
	struct proc_io io = { -1, -1, -1, 0 };
	json_t *fig = NULL, *doc, *w;
	const json_t *job;
	char *buf;
	size_t len = 0;
	pid_t pid;
	int r, st = -1;

	snprintf(file, sizeof(file), "--filename=%s/data", dir);
	snprintf(out, sizeof(out), "%s/fio.out", dir);
	io.out = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (io.out >= 0 && write(io.out, "a wrapper line before it\n", 25) == 25 &&
	    !proc_spawn(argv, &io, &pid))
		proc_reap(pid, -1, &st);
	if (io.out >= 0)
		close(io.out);
	r = st;
	EXPECT_MSG(r == 0, "fio did not run (make deps installs it): %d", r);
	if (r)
		return;
	r = parse("fio.out", &fig, err, sizeof(err));
	EXPECT_MSG(r == 0, "%s", err);
	if (r)
		return;
	buf = slurp("fio.out", &len);
	EXPECT(buf != NULL);
	if (!buf)
		return;
	doc = json_loads(strchr(buf, '{'), 0, NULL);
	job = json_array_get(json_object_get(doc, "jobs"), 0);
	w = json_object_get(json_object_get(fig, "fio"), "write");
	EXPECT(w != NULL);
	EXPECT_EQ_U(json_integer_value(json_object_get(w, "ios")), 512);
	EXPECT_EQ_U(json_integer_value(json_object_get(json_object_get(w, "clat"), "count")),
		    json_integer_value(json_object_get(
			    json_object_get(json_object_get(job, "write"), "clat_ns"), "N")));
	EXPECT(json_real_value(json_object_get(w, "iops")) ==
	       json_number_value(json_object_get(json_object_get(job, "write"), "iops")));
	EXPECT(json_integer_value(json_object_get(json_object_get(w, "clat"), "p99_ns")) ==
	       (json_int_t)json_number_value(json_object_get(
		       json_object_get(json_object_get(json_object_get(job, "write"), "clat_ns"),
				       "percentile"),
		       "99.000000")));
	EXPECT(!strcmp(json_string_value(json_object_get(json_object_get(fig, "fio"), "verify")) ?: "",
		       "ok"));
	/* the verify pass read it all back */
	EXPECT_EQ_U(json_integer_value(json_object_get(
			    json_object_get(json_object_get(fig, "fio"), "read"), "ios")), 512);

	/* cut short: jansson's line, counted from the file's first */
	put("cut.out", buf, len / 2);
	json_decref(fig);
	r = parse("cut.out", &fig, err, sizeof(err));
	EXPECT_MSG(r == -EBADMSG && strstr(err, "cut.out:") && strstr(err, "not JSON"), "%d %s", r, err);
	EXPECT_MSG(atoi(strchr(err, ':') + 1) > 2, "line: %s", err);
	/* a job whose error is set: verify failed */
	{
		char *e = strstr(buf, "\"error\" : 0,");

		if (e) {
			memcpy(e, "\"error\" : 5,", 12);	/* EIO */
			put("bad.out", buf, len);
			r = parse("bad.out", &fig, err, sizeof(err));
			EXPECT(r == 0);
			EXPECT(!strcmp(json_string_value(json_object_get(json_object_get(fig, "fio"),
									 "verify")) ?: "", "failed"));
			EXPECT(json_integer_value(json_object_get(json_object_get(fig, "fio"),
								  "verify_ok")) == 0);
			json_decref(fig);
		} else {
			EXPECT_MSG(0, "fio's JSON has no '\"error\" : 0'");
		}
	}
	json_decref(doc);
	free(buf);
}

static void not_fio(void)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "hello\nworld\n", "text.out:3: fio: no JSON" },
		{ "", "text.out:1: fio: no JSON" },
		{ "x\n{\"jobs\": []}\n", "text.out:2: fio: no jobs" },
		{ "{\"jobs\": [{\"error\": 0}]}\n", "text.out:1: fio: a job's read or write" },
		{ "{\"jobs\": [{\"error\": 0, \"read\": {\"iops\": 1, \"bw_bytes\": 1, \"total_ios\": 0, "
		  "\"clat_ns\": {}}, \"write\": {\"iops\": 1, \"bw_bytes\": 1, \"total_ios\": 0, "
		  "\"clat_ns\": {}}}]}\nafter\n", "text.out:2: fio: text after" },
	};
	char err[256];
	json_t *fig;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put("text.out", bad[i].text, strlen(bad[i].text));
		err[0] = 0;
		EXPECT_MSG(parse("text.out", &fig, err, sizeof(err)) == -EBADMSG && !fig &&
				   !strncmp(err, bad[i].want, strlen(bad[i].want)),
			   "#%zu: '%s'", i, err);
	}
	EXPECT(tool_parse(TOOL_FIO, "/nonexistent/x", "x", &fig, err, sizeof(err)) == -ENOENT);
	EXPECT(tool_by_name("fio") == TOOL_FIO && tool_by_name("perftest") == -ENOENT);
}

static json_t *run(double iops, json_int_t p99, const char *verify, json_int_t n)
{
	return json_pack("{s:{s:{s:f,s:I,s:I,s:{s:I,s:I,s:I}},s:I,s:I,s:s,s:I}}", "fio", "write",
			 "iops", iops, "bw_bytes_per_s", (json_int_t)(iops * 4096), "ios", n, "clat",
			 "count", n, "p99_ns", p99, "max_ns", p99, "jobs", (json_int_t)1, "errors",
			 (json_int_t)!strcmp(verify, "failed"), "verify", verify, "runs",
			 (json_int_t)1);
}

static void merge(void)
{
	json_t *a = json_object(), *r1 = run(100, 5000, "ok", 10), *r2 = run(50, 3000, "failed", 20),
	       *f, *w;

	tool_merge(a, r1);
	tool_merge(a, r2);
	f = json_object_get(a, "fio");
	w = json_object_get(f, "write");
	EXPECT(json_real_value(json_object_get(w, "iops")) == 50);	/* the lower rate */
	EXPECT(json_integer_value(json_object_get(json_object_get(w, "clat"), "p99_ns")) == 5000);
	EXPECT(json_integer_value(json_object_get(json_object_get(w, "clat"), "count")) == 30);
	EXPECT(!strcmp(json_string_value(json_object_get(f, "verify")), "failed"));
	EXPECT(json_integer_value(json_object_get(f, "runs")) == 2);
	EXPECT(json_integer_value(json_object_get(f, "errors")) == 1);
	json_decref(a);
	json_decref(r1);
	json_decref(r2);
}

int main(void)
{
	static const char *const files[] = { "data", "fio.out", "cut.out", "bad.out", "text.out",
					     "t.0.0", NULL };
	char p[256];

	if (!mkdtemp(dir))
		return 1;
	real_fio();
	not_fio();
	merge();
	for (int i = 0; files[i]; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	EXPECT_MSG(rmdir(dir) == 0, "%s: left behind", dir);
	return expect_done("test_ctl_tool");
}
