// SPDX-License-Identifier: MIT
/*
 * A report in other tools' formats, so that their users' scripts and
 * viewers read it unchanged:
 *  - nccl-tests' JSON (its -J file, format version 2): a collective run's
 *    arms as result rows, one per arm ("experiment_name"), with nccl-tests'
 *    own keys and units (time in us, alg_bw and bus_bw in GB/s = 1e9 B/s,
 *    nwrong). The ring reduces from one buffer into another, so the
 *    figures are "out_of_place" and "in_place" is null, as nccl-tests
 *    writes for a variant it did not run.
 *  - the Trace Event Format (Chrome's JSON, which ui.perfetto.dev and
 *    chrome://tracing open): every arm a thread of steps (a slice per step
 *    where a reporting interval holds one, else one per interval named by
 *    its step count), the fault windows a thread each, the resent packets
 *    and lost pieces per interval as counter tracks, and the per-node
 *    injector counters of every fault as counters at its end. Times are
 *    microseconds from the run's t0 (the .hlog's StartTime).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "ctl/report/report.h"

/* --- nccl-tests -J */

/* nccl-tests' reduction name and root field for our collective op */
static void nccl_op(const char *op, const char **redop, const char **root)
{
	*redop = !strcmp(op, "allreduce") || !strcmp(op, "reduce_scatter") ? "sum" : "none";
	/* printed "%6i": -1 where the collective has no root */
	*root = !strcmp(op, "broadcast") ? "     0" : "    -1";
}

static json_t *nccl_row(const json_t *arm, const char *op)
{
	double t_us = jr_real(arm, "time_avg_ns") / 1e3;
	const char *redop, *root;
	uint64_t size = jr_u64(arm, "size");

	nccl_op(op, &redop, &root);
	return json_pack("{s:I,s:I,s:s,s:s,s:s,s:{s:f,s:f,s:f,s:f},s:n,s:I,s:s}", "size",
			 (json_int_t)size, "count", (json_int_t)(size / 4), "type", "float", "redop",
			 redop, "root", root, "out_of_place", "time", t_us, "alg_bw",
			 jr_real(arm, "algbw_bytes_per_s") / 1e9, "bus_bw",
			 jr_real(arm, "busbw_bytes_per_s") / 1e9, "nwrong",
			 (double)jr_u64(arm, "wrong"), "in_place", "actual_iterations",
			 (json_int_t)jr_u64(arm, "iters"), "experiment_name", jr_str(arm, "name"));
}

/* nccl-tests' time stamps ("%Y-%m-%d %H:%M:%S"; ours are UTC): the run's
 * creation plus secs */
static void nccl_time(const json_t *rep, double secs, char *buf, size_t len)
{
	struct tm tm;
	time_t t;

	memset(&tm, 0, sizeof(tm));
	buf[0] = '\0';
	if (!strptime(jr_str(rep, "created"), "%Y-%m-%dT%H:%M:%SZ", &tm))
		return;
	t = timegm(&tm) + (time_t)secs;
	if (gmtime_r(&t, &tm))
		strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

int report_nccl_applies(const json_t *rep)
{
	const json_t *arm;
	size_t i, n = 0;

	/* what the arms count, not which workload: nccl-tests' rows need a
	 * collective's algbw/busbw on every arm */
	json_array_foreach(json_object_get(rep, "arms"), i, arm) {
		if (!json_is_number(json_object_get(arm, "algbw_bytes_per_s")))
			return 0;
		n++;
	}
	return n > 0;
}

int report_nccl_tests(const json_t *rep, FILE *f)
{
	char t_start[32], t_end[32];
	const json_t *arms = json_object_get(rep, "arms"), *arm, *opts;
	const char *op;
	json_t *out, *rows, *devs;
	double bw = 0;
	uint64_t wrong = 0, size = 0;
	size_t i;
	int n = 0, r;

	if (!report_nccl_applies(rep))
		return -EOPNOTSUPP;
	nccl_time(rep, 0, t_start, sizeof(t_start));
	nccl_time(rep, jr_real(rep, "duration_s"), t_end, sizeof(t_end));
	opts = jr_path(rep, "profile.workload.options");
	op = json_is_string(json_object_get(opts, "op")) ? jr_str(opts, "op") : "allreduce";
	rows = json_array();
	json_array_foreach(arms, i, arm) {
		json_array_append_new(rows, nccl_row(arm, op));
		bw += jr_real(arm, "busbw_bytes_per_s") / 1e9;
		wrong += jr_u64(arm, "wrong");
		size = jr_u64(arm, "size");
		n++;
	}
	devs = json_array();
	for (r = 0; r < (int)jr_u64(json_object_get(rep, "testbed"), "nodes"); r++) {
		char host[32];

		snprintf(host, sizeof(host), "node%d", r);
		json_array_append_new(devs, json_pack("{s:i,s:i,s:i,s:s,s:i,s:s,s:s}", "rank", r,
						      "group", 0, "pid", 0, "hostname", host,
						      "device", 0, "device_hex", "", "device_info",
						      "rdma-agent (libibverbs)"));
	}
	out = json_pack("{s:i,s:s,s:[s,s],s:[],s:i,s:{s:i,s:i,s:I,s:I,s:I,s:I,s:I,s:i,s:i,s:i,"
			"s:s,s:s,s:s,s:o},s:o,s:{s:I,s:s},s:{s:f,s:s},s:[],s:s}",
			"version", 2, "start_time", t_start, "args", "rdmactl",
			jr_str(jr_path(rep, "profile"), "name"), "env", "nccl_version", 0, "config",
			"nthreads", 1, "ngpus", 1, "minimum_bytes", (json_int_t)size, "maximum_bytes",
			(json_int_t)size, "step_bytes", (json_int_t)0, "warmup_iters",
			(json_int_t)jr_u64(jr_path(rep, "profile.run"), "warmup"), "iterations",
			(json_int_t)jr_u64(jr_path(rep, "profile.run"), "iters"),
			"aggregated_iterations", 1, "validation", 1, "graph", 0,
			"blocking_collectives", "true", "per_iter_timing", "false", "parallel_init",
			"false", "devices", devs, "results", rows, "out_of_bounds", "count",
			(json_int_t)wrong, "okay", wrong ? "false" : "true", "average_bus_bandwidth",
			"bandwidth", n ? bw / n : 0.0, "okay", "unchecked", "errors", "end_time", t_end);
	if (!out)
		return -EOPNOTSUPP;
	r = json_dumpf(out, f, JSON_INDENT(1)) || fputc('\n', f) == EOF;
	json_decref(out);
	return r;
}

/* --- Trace Event Format */

#define PID_ARMS 1
#define PID_FAULTS 2
#define PID_COUNTERS 3

static double us(json_int_t ns)
{
	return (double)ns / 1e3;
}

static void meta(json_t *ev, int pid, int tid, const char *what, const char *name)
{
	json_array_append_new(ev, json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", what, "ph", "M",
					    "pid", pid, "tid", tid, "args", "name", name));
}

static void counter(json_t *ev, const char *name, double ts, const char *series, double v)
{
	json_array_append_new(ev, json_pack("{s:s,s:s,s:f,s:i,s:i,s:{s:f}}", "name", name, "ph",
					    "C", "ts", ts, "pid", PID_COUNTERS, "tid", 0, "args",
					    series, v));
}

/* an arm's steps: one slice per interval [t_start_ns, t_ns), which holds
 * the steps that ended in it; the step itself where it holds one (it ended
 * at t_start_ns, the sample that opened the interval, and took max_ns).
 * Never before the slice before it ended: the track stays well nested */
static void arm_track(json_t *ev, const json_t *arm, int tid, json_int_t t0)
{
	const char *name = jr_str(arm, "name");
	double prev_end = -1e300;
	const json_t *iv;
	char cname[96];
	size_t i;

	meta(ev, PID_ARMS, tid, "thread_name", name);
	json_array_foreach(json_object_get(arm, "intervals"), i, iv) {
		json_int_t ts = json_integer_value(json_object_get(iv, "t_start_ns")),
			   te = json_integer_value(json_object_get(iv, "t_ns"));
		uint64_t count = jr_u64(iv, "count");
		double b = us(ts - t0), e = us(te - t0);
		char sname[48];

		if (count == 1) {
			e = b;
			b = e - (double)jr_u64(iv, "max_ns") / 1e3;
			snprintf(sname, sizeof(sname), "step");
		} else {
			snprintf(sname, sizeof(sname), "%llu steps", (unsigned long long)count);
		}
		if (b < prev_end)
			b = prev_end;
		if (e < b)
			e = b;
		if (count)
			json_array_append_new(
				ev, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:{s:I,s:I,s:I,s:I}}",
					      "name", sname, "cat", name, "ph", "X", "ts", b, "dur",
					      e - b, "pid", PID_ARMS, "tid", tid, "args", "steps",
					      (json_int_t)count, "p50_ns", (json_int_t)jr_u64(iv, "p50_ns"),
					      "p99_ns", (json_int_t)jr_u64(iv, "p99_ns"), "max_ns",
					      (json_int_t)jr_u64(iv, "max_ns")));
		prev_end = e;
		snprintf(cname, sizeof(cname), "%s resent packets", name);
		counter(ev, cname, e, "resent", (double)jr_u64(iv, "retrans"));
		if (json_object_get(iv, "lost_pieces")) {
			snprintf(cname, sizeof(cname), "%s lost pieces", name);
			counter(ev, cname, e, "lost", (double)jr_u64(iv, "lost_pieces"));
		}
	}
}

/* a fault's window (duration 0: to the end of the run) and, at its end,
 * what its rules counted on each node */
static void fault_track(json_t *ev, const json_t *fault, int tid, double end_us)
{
	const char *name = jr_str(fault, "name");
	double b = us((json_int_t)jr_u64(fault, "start_ns")), e;
	uint64_t dur = jr_u64(fault, "duration_ns");
	const json_t *rule, *c;
	const char *k;
	char cname[96];
	size_t i;

	e = dur ? b + (double)dur / 1e3 : end_us;
	if (e < b)
		e = b;
	meta(ev, PID_FAULTS, tid, "thread_name", name);
	json_array_append_new(ev, json_pack("{s:s,s:s,s:s,s:f,s:f,s:i,s:i,s:{s:s,s:s,s:s}}",
					    "name", name, "cat", "fault", "ph", "X", "ts", b, "dur",
					    e - b, "pid", PID_FAULTS, "tid", tid, "args", "rule",
					    jr_str(fault, "rule"), "dir", jr_str(fault, "dir"), "port",
					    jr_str(fault, "port")));
	json_array_foreach(json_object_get(fault, "rules"), i, rule) {
		json_t *args = json_object();

		json_object_foreach((json_t *)json_object_get(rule, "counters"), k, c)
			if (json_is_integer(c))
				json_object_set_new(args, k, json_real((double)json_integer_value(c)));
		snprintf(cname, sizeof(cname), "%s on %s", name, jr_str(rule, "node"));
		json_array_append_new(ev, json_pack("{s:s,s:s,s:f,s:i,s:i,s:o}", "name", cname,
						    "ph", "C", "ts", e, "pid", PID_COUNTERS, "tid",
						    0, "args", args));
	}
}

int report_trace_events(const json_t *rep, FILE *f)
{
	json_int_t t0 = json_integer_value(json_object_get(rep, "t0_node_ns"));
	const json_t *arm, *fault, *iv;
	double end_us = 0;
	json_t *ev = json_array(), *out;
	size_t i, j;
	int r;

	meta(ev, PID_ARMS, 0, "process_name", "arms");
	meta(ev, PID_FAULTS, 0, "process_name", "faults");
	meta(ev, PID_COUNTERS, 0, "process_name", "counters");
	json_array_foreach(json_object_get(rep, "arms"), i, arm) {
		arm_track(ev, arm, (int)i + 1, t0);
		json_array_foreach(json_object_get(arm, "intervals"), j, iv) {
			double e = us(json_integer_value(json_object_get(iv, "t_ns")) - t0);

			if (e > end_us)
				end_us = e;
		}
	}
	json_array_foreach(json_object_get(rep, "faults"), i, fault)
		fault_track(ev, fault, (int)i + 1, end_us);
	out = json_pack("{s:o,s:s,s:{s:s,s:s,s:s,s:I}}", "traceEvents", ev, "displayTimeUnit", "ns",
			"otherData", "tool", "rdma-testbed", "profile",
			jr_str(jr_path(rep, "profile"), "name"), "created", jr_str(rep, "created"),
			"t0_unix_ns", json_integer_value(json_object_get(rep, "t0_unix_ns")));
	if (!out)
		return -ENOMEM;
	r = json_dumpf(out, f, JSON_COMPACT) || fputc('\n', f) == EOF;
	json_decref(out);
	return r;
}
