// SPDX-License-Identifier: MIT
/*
 * rdmactl validate / run / report: experiment profiles end to end.
 *
 * run: load and check the profile (exit 2 on any error, nothing touched),
 * then the experiment (ctl/exp/): the testbed reused or brought up, the
 * fault rules leased, the arms in rounds, the report directory written.
 * Its live model is published for `tui --attach`. Exit 0, or 1 when an
 * arm failed, the run was interrupted, or a verification failed (#wrong
 * without loss), or an expectation failed (report.json says which).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctl/cmd/cmds.h"
#include "ctl/exp/exp.h"
#include "ctl/tui/model.h"
#include "lib/log.h"

static void usage_validate(FILE *f)
{
	fprintf(f, "usage: rdmactl validate PROFILE... [--set key.path=value]... [--expect E]...\n"
		   "                        [--keys]\n"
		   "  checks profiles without running them; errors as file:line:col, exit 2\n"
		   "  --keys   the profile's keys as --set takes them (key.path=value), one a line\n");
}

static void usage_run(FILE *f)
{
	fprintf(f,
		"usage: rdmactl [-j] run PROFILE [-o DIR] [--set key.path=value]... [--keep]\n"
		"                  [--expect '[ARM:] METRIC OP VALUE']... [--junit FILE] [--trace]\n"
		"                  [--no-reach-check] [--repeat N] [--slurm [--dev DEV] [--listen A:P]]\n"
		"  runs the experiment and writes DIR (default runs/NAME-YYYYmmdd-HHMMSS):\n"
		"  report.json, summary.csv, ARM.hlog, report.html\n"
		"  --set a.b.0.c=v  overrides a profile key (lists by index), e.g. --set run.iters=10\n"
		"  --expect E       one more expectation, as in the profile's expect:,\n"
		"                   e.g. 'rc: p99 < 2s', 'all: lost < 5%%', 'busbw > 1MB/s'\n"
		"  --junit FILE     the expectations (and whether the run completed) as JUnit XML\n"
		"  --keep           leave a testbed this run brought up running\n"
		"  --trace          every round's RoCE packets as pcapng in DIR/trace/, analysed\n"
		"                   into report.json (as a profile's trace: key; rdmactl analyze DIR)\n"
		"  --no-reach-check run even when a fault's hooks saw none of the first round's\n"
		"                   traffic (by default the run fails there: the fault is off the path)\n"
		"  --repeat N       N runs, each in DIR/K (DIR: -o's, or runs/NAME-...-repeat),\n"
		"                   and in how many an expectation failed (a replay rate)\n"
		"  --slurm          inside a Slurm allocation: the profile's nodes are the\n"
		"                   allocation's first ones, their agents started by srun, one a\n"
		"                   node, each on its first ACTIVE device (--dev: that one); they\n"
		"                   dial this host (--listen: ADDR:PORT they reach it at)\n"
		"  exit 0: done, every expectation held; 1: the run failed or an expectation\n"
		"  failed (report.json: status, expectations_failed); 2: bad usage or profile\n");
}

/* every scalar below o as "path=value" (lists by index) that --set takes:
 * tried on file, printed when the profile still loads with it (the JSON
 * has a few names of its own, start_ns for start, that --set refuses) */
static void print_keys(const char *file, const json_t *o, char *path, size_t len, size_t at)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_object(o)) {
		json_object_foreach((json_t *)o, k, v) {
			int n = snprintf(path + at, len - at, "%s%s", at ? "." : "", k);

			if (n > 0 && (size_t)n < len - at)
				print_keys(file, v, path, len, at + (size_t)n);
		}
	} else if (json_is_array(o)) {
		json_array_foreach(o, i, v) {
			int n = snprintf(path + at, len - at, "%s%zu", at ? "." : "", i);

			if (n > 0 && (size_t)n < len - at)
				print_keys(file, v, path, len, at + (size_t)n);
		}
	} else if (at) {
		char *s = json_dumps(o, JSON_ENCODE_ANY), set[1024], err[256];
		const char *sets[1] = { set };
		struct profile p;

		path[at] = '\0';
		/* strings without their quotes: the value as typed after = */
		snprintf(set, sizeof(set), "%s=%s", path,
			 json_is_string(o) ? json_string_value(o) : s ? s : "");
		if (!profile_load(&p, file, sets, 1, err, sizeof(err)))
			printf("%s\n", set);
		profile_free(&p);
		free(s);
	}
}

static void print_valid(const struct ctl *ctl, const char *file, struct profile *p, int keys)

{
	if (keys) {
		json_t *o = profile_to_json(p);
		char path[512];
		static const char *const not_keys[] = { "file", "text", "sets", "expect", NULL };

		for (int i = 0; not_keys[i]; i++)
			json_object_del(o, not_keys[i]);
		print_keys(file, o, path, sizeof(path), 0);
		json_decref(o);
	} else if (ctl->json) {
		json_t *o = profile_to_json(p);

		json_object_del(o, "text");
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	} else {
		printf("%s: ok (%s: %s, %d arm%s, %d fault rule%s)\n", file, p->name, p->workload,
		       p->narms, p->narms == 1 ? "" : "s", p->nfaults, p->nfaults == 1 ? "" : "s");
	}
}

int cmd_validate(struct ctl *ctl, int argc, char **argv)
{
	static struct exp_argv a;
	const char *pos[64];
	char *args[64];
	int npos, i, n = 0, bad = 0, r, keys = 0;
	char err[1024];

	if (argc > 64) {
		log_err("validate: at most 64 arguments");
		return CTL_USAGE;
	}
	for (i = 0; i < argc; i++) {	/* --keys: ours; the rest as run takes them */
		if (!strcmp(argv[i], "--keys"))
			keys = 1;
		else
			args[n++] = argv[i];
	}
	argc = n;
	argv = args;
	memset(&a, 0, sizeof(a));
	r = exp_args(argc, argv, &a, pos, 64, &npos, usage_validate);
	if (r)
		return ctl_code(r);
	if (!npos) {
		usage_validate(stderr);
		return CTL_USAGE;
	}
	for (i = 0; i < npos; i++) {
		struct profile p;

		if (profile_load(&p, pos[i], a.sets, a.nsets, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			bad = 1;
		} else if (exp_add_expects(&p, a.expects, a.nexpects)) {
			bad = 1;
		} else {
			print_valid(ctl, pos[i], &p, keys);
		}
		profile_free(&p);
	}
	return bad ? CTL_USAGE : CTL_OK;
}

static void on_sigint(int sig)
{
	(void)sig;
	ctl_interrupted = 1;
}

/* run's live line: from the model, on a terminal; the model published */
static void run_intervals(void *arg, int idx, const json_t *iv, json_int_t progress)
{
	struct model *m = arg;
	static double shown;
	char line[200];

	model_intervals(m, idx, iv, progress);
	model_publish(m, 0);	/* for tui --attach */
	if (!isatty(2) || rtb_now_s() - shown < 1)
		return;
	shown = rtb_now_s();
	model_status_line(m, line, sizeof(line));
	fprintf(stderr, "\r  %-110.110s", line);
}

/* one run; outdir (NULL: -o's, or the default) */
static int run_once(struct ctl *ctl, int argc, char **argv, const char *outdir, int *broke)
{
	static struct exp e;
	static struct model m;
	struct exp_opts o;
	int r;

	memset(&e, 0, sizeof(e));
	r = exp_load(&e, argc, argv, &o, usage_run);
	if (r) {
		exp_close(&e);
		return ctl_code(r);
	}
	if (outdir)
		o.outdir = outdir;
	o.print = 1;
	r = exp_open(&e, ctl, &o);
	if (r == CTL_USAGE) {
		exp_close(&e);
		return r;
	}
	if (!r) {
		model_init(&m, &e.p, e.wl->measure);
		model_obs(&m, &e.obs);
		e.obs.intervals = run_intervals;
		exp_measure(&e);
		model_unpublish();
		if (isatty(2))
			fprintf(stderr, "\r%114s\r", "");
	} else {
		e.rc = 1;
	}
	r = exp_finish(&e);
	if (broke)
		*broke = e.expect_failed > 0;
	if (e.obs.arg)
		model_fini(&m);
	exp_close(&e);
	return r;
}

/* --repeat N: N runs, each in DIR/K (DIR: -o's, made here, or
 * runs/NAME-YYYYmmdd-HHMMSS-repeat), and how many broke an expectation:
 * rdmactl search's replay rate, by hand */
static int run_repeat(struct ctl *ctl, int argc, char **argv, long n)
{
	char dir[PATH_MAX], sub[PATH_MAX + 16], ts[32];
	int i, r = 0, broke, nbroke = 0, nfailed = 0, done = 0;

	{	/* the profile and options checked before DIR is made */
		static struct exp chk;
		struct exp_opts o;

		memset(&chk, 0, sizeof(chk));
		r = exp_load(&chk, argc, argv, &o, usage_run);
		if (!r && o.outdir) {
			snprintf(dir, sizeof(dir), "%s", o.outdir);
		} else if (!r) {
			exp_default_dir(dir, sizeof(dir), chk.p.name, "-repeat");
			mkdir("runs", 0755);
		}
		exp_close(&chk);
		if (r)
			return ctl_code(r);
	}
	if (mkdir(dir, 0755)) {
		log_err("%s: %s (--repeat makes it, a run in each DIR/K)", dir, strerror(errno));
		return CTL_USAGE;
	}
	for (i = 1; i <= n && !ctl_interrupted; i++) {
		snprintf(sub, sizeof(sub), "%s/%d", dir, i);
		broke = 0;
		r = run_once(ctl, argc, argv, sub, &broke);
		if (r == CTL_USAGE)
			return r;
		done++;
		nbroke += broke;
		nfailed += r && !broke;
		fprintf(stderr, "repeat: run %d of %ld: %s\n", i, n,
			broke ? "an expectation failed" : r ? "failed" : "held");
	}
	printf("repeat: an expectation failed in %d of %d runs%s%s (%s/1..%d)\n", nbroke, done,
	       nfailed ? "; other failures: " : "",
	       nfailed ? (snprintf(ts, sizeof(ts), "%d", nfailed), ts) : "", dir, done);
	return ctl_interrupted ? CTL_INTERRUPTED : nbroke || nfailed ? CTL_FAIL : CTL_OK;
}

int cmd_run(struct ctl *ctl, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sigint }, old, oldt;
	char *args[7 + 2 * (PROF_MAX_SETS + PROF_MAX_EXPECT) + 1];
	long repeat = 0;
	int i, n = 0, r;

	for (i = 0; i < argc; i++) {	/* --repeat N: ours; the rest as exp_load takes them */
		if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
			char *end;

			repeat = strtol(argv[++i], &end, 10);
			if (*end || repeat < 1 || repeat > 10000) {
				log_err("--repeat '%s': expected 1..10000", argv[i]);
				return CTL_USAGE;
			}
		} else if (n < (int)(sizeof(args) / sizeof(args[0])) - 1) {
			args[n++] = argv[i];
		} else {
			log_err("too many arguments");
			return CTL_USAGE;
		}
	}
	args[n] = NULL;
	sigaction(SIGINT, &sa, &old);
	sigaction(SIGTERM, &sa, &oldt);
	if (repeat && n && args[0][0] != '-')
		r = run_repeat(ctl, n, args, repeat);
	else
		r = run_once(ctl, n, args, NULL, NULL);
	sigaction(SIGINT, &old, NULL);
	sigaction(SIGTERM, &oldt, NULL);
	return r;
}

static void usage_report(FILE *f)
{
	fprintf(f, "usage: rdmactl report DIR [--format text|json|csv|html|junit|nccl-tests|perfetto]\n"
		   "       rdmactl report DIR_A DIR_B [DIR_C...] [--format text|json|html]\n"
		   "         compares runs arm by arm: every metric, each run's change from the\n"
		   "         first in %%, with a 95%% bootstrap interval for step-time percentiles\n"
		   "  re-renders a run directory's report.json\n"
		   "       rdmactl report --metrics\n"
		   "         every column and figure: where it shows, its unit, its path in\n"
		   "         report.json, what it means (Markdown: docs/report.md)\n");
}

static json_t *load_report(const char *dir)
{
	char path[PATH_MAX];
	json_error_t je;
	json_t *r;

	snprintf(path, sizeof(path), "%s/report.json", dir);
	r = json_load_file(path, 0, &je);
	if (!r)
		log_err("%s:%d:%d: %s", path, je.line, je.column, je.text);
	else if (json_integer_value(json_object_get(r, "schema_version")) != 1) {
		log_err("%s: not a version 1 rdma-testbed report", path);
		json_decref(r);
		r = NULL;
	}
	return r;
}

/* the formats of `report DIR`, one renderer each */
static int fmt_text(const json_t *r, FILE *f)
{
	report_print_text(r, f);
	return 0;
}

static int fmt_json(const json_t *r, FILE *f)
{
	return json_dumpf(r, f, JSON_INDENT(2)) || fputc('\n', f) == EOF;
}

static int fmt_junit(const json_t *r, FILE *f)
{
	return report_junit_print(r, jr_str(json_object_get(r, "profile"), "name"), NULL, f);
}

static int fmt_nccl(const json_t *r, FILE *f)
{
	if (!report_nccl_applies(r)) {
		log_err("nccl-tests' format is for collective runs; this one is '%s'",
			jr_str(r, "workload"));
		return -EOPNOTSUPP;
	}
	return report_nccl_tests(r, f);
}

static const struct {
	const char *name;
	int (*render)(const json_t *, FILE *);
} formats[] = {
	{ "text", fmt_text },
	{ "json", fmt_json },
	{ "csv", report_csv },
	{ "html", report_html },
	{ "junit", fmt_junit },
	{ "nccl-tests", fmt_nccl },
	{ "perfetto", report_trace_events },
	{ NULL, NULL },
};

#define REPORT_MAX_RUNS 16

/* report A B [C ...]: the comparison in text, json or html */
static int compare_runs(const char *const *dirs, int n, const char *fmt)
{
	json_t *reps[REPORT_MAX_RUNS] = { NULL }, *cmp;
	int i, rc = CTL_OK;

	if (strcmp(fmt, "text") && strcmp(fmt, "json") && strcmp(fmt, "html")) {
		log_err("--format '%s': runs compare as text, json or html", fmt);
		return CTL_USAGE;
	}
	for (i = 0; i < n; i++)
		if (!(reps[i] = load_report(dirs[i])))
			rc = CTL_FAIL;
	if (!rc) {
		cmp = report_comparison((const json_t *const *)reps, dirs, n);
		if (!cmp)
			rc = CTL_FAIL;
		else if (!strcmp(fmt, "json"))
			rc = json_dumpf(cmp, stdout, JSON_INDENT(2)) || putchar('\n') == EOF ? CTL_FAIL :
												   CTL_OK;
		else if (!strcmp(fmt, "html"))
			report_comparison_html(cmp, stdout);
		else
			report_comparison_text(cmp, stdout);
		json_decref(cmp);
	}
	for (i = 0; i < n; i++)
		json_decref(reps[i]);
	return rc;
}

int cmd_report(struct ctl *ctl, int argc, char **argv)
{
	const char *dirs[REPORT_MAX_RUNS];
	int i, n = 0, rc = 0, fmt = ctl->json ? 1 : 0;
	json_t *a;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage_report(stdout);
			return CTL_OK;
		}
		if (!strcmp(argv[i], "--metrics") && argc == 1) {
			metric_doc(stdout);
			return CTL_OK;
		}
		if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			for (fmt = 0; formats[fmt].name && strcmp(formats[fmt].name, argv[i + 1]); fmt++)
				;
			if (!formats[fmt].name) {
				log_err("--format '%s': expected text|json|csv|html|junit|nccl-tests|perfetto",
					argv[i + 1]);
				return CTL_USAGE;
			}
			i++;
		} else if (argv[i][0] == '-' || n == REPORT_MAX_RUNS) {
			log_err("unexpected '%s'", argv[i]);
			usage_report(stderr);
			return CTL_USAGE;
		} else {
			dirs[n++] = argv[i];
		}
	}
	if (!n) {
		usage_report(stderr);
		return CTL_USAGE;
	}
	if (n > 1)
		return compare_runs(dirs, n, formats[fmt].name);
	if (!(a = load_report(dirs[0])))
		return CTL_FAIL;
	rc = formats[fmt].render(a, stdout) ? CTL_FAIL : CTL_OK;
	json_decref(a);
	return rc;
}
