/* SPDX-License-Identifier: MIT */
/*
 * The report room: an arm's accumulation (acc.h), the report JSON built
 * from it, and its renderings, all driven by one metric table (metric.c):
 * text table, summary.csv, report.html (inline SVG, plot.h), HdrHistogram
 * interval logs (.hlog), and the TUI's rows. Below the workload
 * descriptors (ctl/wl/): it never asks which workload a report is of,
 * only what its arms count ("measure").
 */
#ifndef RTB_CTL_REPORT_H
#define RTB_CTL_REPORT_H

#include <stdio.h>
#include <jansson.h>
#include "ctl/report/acc.h"
#include "ctl/report/json.h"

/* what an arm's count counts: workload steps, operations, training steps */
enum measure { MEASURE_STEPS, MEASURE_OPS, MEASURE_TRAIN, MEASURE_EXEC, MEASURE_N };
const char *measure_name(enum measure m);
/* a report's "measure" (MEASURE_STEPS when absent) */
enum measure report_measure(const json_t *report);

/* --- building a report arm (arm.c) */
/* rank 0's streamed intervals of every round, with per-interval loss */
json_t *report_intervals(const json_t *rounds);
/* every rank's result of every round, without the intervals */
json_t *report_results(const json_t *rounds);
/* the keys every arm has: name, count, percentiles, intervals, results */
void report_arm_finish(json_t *arm, const char *name, const struct arm_acc *a,
		       const json_t *rounds);
/* operation workloads (results: clients, then the server; a: their rounds
 * accumulated): latency by operation kind (kinds[], up to 4, NULL ending,
 * e.g. get, put:
 * "<kind>_lat_ns"), the clients' rates (rate_key) added up, averaged over
 * rounds */
/* kv: an arm's linearizability verdict and its failing operations, each
 * line led by lead (text.c) */
void report_print_lin(const json_t *arm, const char *lead, FILE *f);
json_t *report_ops_arm(const struct arm_acc *a, const json_t *rounds, const char *const kinds[],
		       const char *rate_key);

/* --- the metric table (metric.c): one entry per figure a report shows */
enum metric_where {
	MW_TEXT = 1 << 0, MW_CSV = 1 << 1, MW_HTML = 1 << 2,
	MW_TUI_LAT = 1 << 3, MW_TUI_THR = 1 << 4, MW_TUI_TRN = 1 << 5,
	MW_EXPECT = 1 << 6,	/* a name expectations use (ctl/exp/expect.c) */
};
/* an expectation's value: a time (ns us ms s), a fraction (5% or 0.05), a
 * count (2.5k), a rate (1.5GB/s) */
enum metric_unit { MU_TIME, MU_FRAC, MU_COUNT, MU_BW, MU_VERDICT /* ok (1) or failed (0) */ };
#define MW_TUI (MW_TUI_LAT | MW_TUI_THR | MW_TUI_TRN)

enum metric_kind {
	MK_NUM,		/* the value at path (over per, when per is set) / scale */
	MK_PCT,		/* a fraction shown as percent */
	MK_RATIO,	/* the first arm's value over this arm's (not on the first) */
	MK_VERIFY,	/* a boolean "failed": FAILED or ok */
	MK_STR,		/* a string */
};

struct metric {
	const char *name;	/* text, HTML and TUI heading */
	const char *csv;	/* CSV column (raw value, units in the name) */
	unsigned where;		/* MW_* */
	unsigned measures;	/* bit (1 << enum measure): where text and TUI show it */
	enum metric_kind kind;
	const char *path;	/* in the arm JSON */
	const char *per;	/* MK_NUM: divided by this path's value (rates) */
	double scale;		/* shown = value / scale (CSV: raw) */
	const char *fmt;	/* printf of the shown value */
	const char *csv_fmt;	/* printf of the raw value in CSV */
	int width;		/* text column */
	const char *absent;	/* shown when the value is null (TTA: "never") */
	int tui_order;		/* TUI rows: the most telling first (a short terminal
				 * shows the top ones) */
	const char *doc;	/* what it means, for docs/report.md (make docs) */
	enum metric_unit unit;	/* MW_EXPECT: the value's unit */
	int per_role;		/* MW_EXPECT: a role's, on each role of an exec arm */
	int if_any;		/* MW_TEXT: a column only when some arm has a value (a tool's) */
};

extern const struct metric report_metrics[];	/* { NULL } terminated */
/* the metric's cell for arm (first: the first arm, for MK_RATIO): 1 and
 * buf filled, or 0 (no value: buf = absent); csv: raw and csv_fmt */
int metric_cell(const struct metric *m, const json_t *arm, const json_t *first, int csv,
		char *buf, size_t len);
/* m's raw number for arm (over its per path when set): 1 and *v, or 0 */
int metric_value(const struct metric *m, const json_t *arm, double *v);
/* does m show for measure in this rendering (where: one MW_* bit)? */
int metric_shown(const struct metric *m, unsigned where, enum measure measure);
/* is m a column of this table (text or HTML) of arms? a tool's figure
 * (if_any) only when some arm has it */
int metric_column(const struct metric *m, unsigned where, enum measure measure, const json_t *arms);
/* every metric's place and meaning as Markdown (docs/report.md, make docs) */
void metric_doc(FILE *f);

/*
 * Percentiles a sample count cannot support: pX from fewer than 1/(1-X)
 * samples (p50: 2, p90: 10, p99: 100, p99.9: 1000, p99.99: 10000) is only
 * the largest sample or an interpolation near it. The samples are the
 * arm's steps ("iters", train's "steps": its ranks' step times move
 * together, so three ranks are not three samples), else its operations
 * (percentiles.count). report_insufficient: the names ("p99.9", ...) for
 * an arm, its "insufficient_samples"; report_pct_short: whether a path
 * ("percentiles.p99_ns") is one of them for this arm. Text, HTML and TUI
 * mark such a cell with REPORT_SHORT_MARK and say so under the table.
 */
#define REPORT_SHORT_MARK "*"
uint64_t report_samples(const json_t *arm);
json_t *report_insufficient(const json_t *arm);
int report_pct_short(const char *path, const json_t *arm);
/* some arm of arms has such a percentile */
int report_any_short(const json_t *arms);
extern const char report_short_note[];

/* --- renderings of a report JSON (the one written to report.json) */
/* the RC arms' settings, then every pair of arms' p99 ratio and difference
 * with their intervals */
void report_print_compare(const json_t *arms, FILE *f);
/* several seeds (train): each arm's seeds, targets reached, means */
void report_print_seeds(const json_t *arms, FILE *f);
void report_print_text(const json_t *report, FILE *f);
int report_csv(const json_t *report, FILE *f);
int report_html(const json_t *report, FILE *f);
/* one HdrHistogram interval log of an arm (timestamps from the run's start) */
int report_hlog(const json_t *report, const json_t *arm, FILE *f);
/* path written whole or not at all by fn(rep, arg, f): a new file beside it
 * (mkstemp), renamed once complete, removed when anything failed */
int report_write_whole(const char *path, int (*fn)(const json_t *, const void *, FILE *),
		       const json_t *rep, const void *arg, char *err, size_t errlen);
/* report.json, summary.csv, ARM.hlog, report.html, perfetto.json and (a
 * collective's) nccl-tests.json into dir */
int report_write(json_t *report, const char *dir, char *err, size_t errlen);
/* expectations (ctl/exp/expect.h) under the text table, as an HTML table,
 * and as a JUnit XML file at path, written whole (rep NULL: the run did
 * not start, err says why); nothing when the report has none */
void report_print_expectations(const json_t *report, FILE *f);
void report_html_expectations(const json_t *report, FILE *f);
/* exec workloads: every command run, its status and output (roles.c) */
void report_print_roles(const json_t *report, FILE *f);
void report_html_roles(const json_t *report, FILE *f);
int report_junit(const json_t *report, const char *suite, const char *err, const char *path,
		 char *msg, size_t len);
int report_junit_print(const json_t *report, const char *suite, const char *err, FILE *f);
/* other tools' formats (export.c): nccl-tests' -J JSON (collective runs;
 * -EOPNOTSUPP, nothing written, otherwise) and the Trace Event Format (Perfetto,
 * chrome://tracing) */
int report_nccl_tests(const json_t *report, FILE *f);
/* the report's arms have a collective's figures (algbw, busbw) */
int report_nccl_applies(const json_t *report);
int report_trace_events(const json_t *report, FILE *f);
/* rdmactl report A B [C ...] (compare.c): every run against the first, arm
 * by arm, every numeric metric, the change in percent and (step-time
 * percentiles) its 95% bootstrap interval; as JSON, text and HTML */
json_t *report_comparison(const json_t *const *reports, const char *const *dirs, int n);
void report_comparison_text(const json_t *cmp, FILE *f);
void report_comparison_html(const json_t *cmp, FILE *f);

#endif
