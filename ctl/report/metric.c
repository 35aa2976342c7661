// SPDX-License-Identifier: MIT
/*
 * The metric table: every figure a report, its CSV, its HTML page and the
 * TUI show, once. A renderer walks the table and keeps the entries of its
 * kind (metric_shown); a new figure is one entry here (and, if it is new
 * to the arm JSON, the line that puts it there).
 *
 * Paths are into a report arm (report.json's arms[]); the TUI builds the
 * same JSON from its live accumulator (arm_acc_summary) plus a "live"
 * object for what only a running arm has.
 */
#include <stdio.h>
#include <string.h>
#include "ctl/report/report.h"

#define S (1u << MEASURE_STEPS)
#define O (1u << MEASURE_OPS)
#define T (1u << MEASURE_TRAIN)
#define E (1u << MEASURE_EXEC)
#define ALL (S | O | T | E)
#define TXT MW_TEXT
#define CSV MW_CSV
#define HTM MW_HTML
#define LAT MW_TUI_LAT
#define THR MW_TUI_THR
#define TRN MW_TUI_TRN

/* the columns in the order they appear; CSV names carry the raw unit */
const struct metric report_metrics[] = {
	/* name          csv                 where              measures kind   path */
	{ "state", NULL, MW_TUI, ALL, MK_STR, "live.state", NULL, 1, "%s", NULL, 0, "-", 1 },
	{ "steps done", NULL, LAT | THR | TRN, ALL, MK_NUM, "live.done", NULL, 1, "%.0f", NULL, 0,
	  "-", 2 },
	/* a collective's samples are its steps (the ranks of a step finish together) */
	{ "steps", NULL, TXT | HTM, S, MK_NUM, "iters", NULL, 1, "%.0f", NULL, 6, "-" },
	{ "count", "count", CSV | HTM, S, MK_NUM, "count", NULL, 1, "%.0f", "%.0f", 6, "-" },
	{ "ops", NULL, TXT, O, MK_NUM, "count", NULL, 1, "%.0f", NULL, 8, "-" },
	{ "runs", NULL, TXT, E, MK_NUM, "count", NULL, 1, "%.0f", NULL, 5, "-" },
	{ "exit", NULL, TXT, E, MK_NUM, "exit", NULL, 1, "%.0f", NULL, 5, "-" },
	{ "wall p50[s]", NULL, TXT, E, MK_NUM, "percentiles.p50_ns", NULL, 1e9, "%.3f", NULL, 11,
	  "-" },
	{ "wall max[s]", NULL, TXT, E, MK_NUM, "percentiles.max_ns", NULL, 1e9, "%.3f", NULL, 11,
	  "-" },
	{ "TTA[s]", "tta_ns", TXT | CSV | HTM, T, MK_NUM, "tta_ns", NULL, 1e9, "%.2f", "%.0f", 9,
	  "never" },
	{ "acc", "final_accuracy", TXT | CSV | HTM, T, MK_NUM, "final_accuracy", NULL, 1, "%.3f",
	  "%.4f", 8, "-" },
	{ "accuracy", NULL, TRN, ALL, MK_NUM, "live.accuracy", NULL, 1, "%.3f", NULL, 0, "-", 3 },
	{ "eval loss", NULL, TRN, ALL, MK_NUM, "live.eval_loss", NULL, 1, "%.3f", NULL, 0, "-", 4 },
	{ "TTA [s]", NULL, TRN, ALL, MK_NUM, "live.tta_ns", NULL, 1e9, "%.2f", NULL, 0, "never", 5 },
	{ "min_ns", "min_ns", CSV, ALL, MK_NUM, "percentiles.min_ns", NULL, 1, "", "%.0f", 0, "-" },
	{ "p50[ms]", "p50_ns", TXT | CSV | HTM, S | T, MK_NUM, "percentiles.p50_ns", NULL, 1e6,
	  "%.2f", "%.0f", 10, "-" },
	{ "p50[us]", NULL, TXT, O, MK_NUM, "percentiles.p50_ns", NULL, 1e3, "%.1f", NULL, 9, "-" },
	{ "p50 [ms]", NULL, LAT, ALL, MK_NUM, "percentiles.p50_ns", NULL, 1e6, "%.2f", NULL, 0, "-", 10 },
	{ "step p50 [ms]", NULL, TRN, ALL, MK_NUM, "percentiles.p50_ns", NULL, 1e6, "%.2f", NULL, 0,
	  "-", 11 },
	{ "p90[ms]", "p90_ns", CSV | HTM, ALL, MK_NUM, "percentiles.p90_ns", NULL, 1e6, "%.2f", "%.0f",
	  10, "-" },
	{ "p99[ms]", "p99_ns", TXT | CSV | HTM, S | T, MK_NUM, "percentiles.p99_ns", NULL, 1e6,
	  "%.2f", "%.0f", 10, "-" },
	{ "p99[us]", NULL, TXT, O, MK_NUM, "percentiles.p99_ns", NULL, 1e3, "%.1f", NULL, 9, "-" },
	{ "p99 [ms]", NULL, LAT, ALL, MK_NUM, "percentiles.p99_ns", NULL, 1e6, "%.2f", NULL, 0, "-", 12 },
	{ "step p99 [ms]", NULL, TRN, ALL, MK_NUM, "percentiles.p99_ns", NULL, 1e6, "%.2f", NULL, 0,
	  "-", 13 },
	{ "p99.9[ms]", "p99_9_ns", TXT | CSV | HTM, S, MK_NUM, "percentiles.p99_9_ns", NULL, 1e6,
	  "%.2f", "%.0f", 10, "-" },
	{ "p99.9[us]", NULL, TXT, O, MK_NUM, "percentiles.p99_9_ns", NULL, 1e3, "%.1f", NULL, 10,
	  "-" },
	{ "p99.9 [ms]", NULL, LAT, ALL, MK_NUM, "percentiles.p99_9_ns", NULL, 1e6, "%.2f", NULL, 0,
	  "-", 14 },
	{ "p99_99_ns", "p99_99_ns", CSV, ALL, MK_NUM, "percentiles.p99_99_ns", NULL, 1, "", "%.0f", 0,
	  "-" },
	/* the first arm's p99 over this one's, 95% bootstrap interval (ctl/tui/model.c) */
	{ "p99 1st/this", NULL, LAT, ALL, MK_STR, "live.p99_vs_first", NULL, 1, "%s", NULL, 0, "-",
	  23 },
	{ "now p50 [ms]", NULL, MW_TUI, ALL, MK_NUM, "live.p50_ns", NULL, 1e6, "%.2f", NULL, 0, "-", 20 },
	{ "now p99 [ms]", NULL, LAT, ALL, MK_NUM, "live.p99_ns", NULL, 1e6, "%.2f", NULL, 0, "-", 34 },
	{ "max[ms]", "max_ns", TXT | CSV | HTM, S, MK_NUM, "percentiles.max_ns", NULL, 1e6, "%.2f",
	  "%.0f", 10, "-" },
	{ "max [ms]", NULL, LAT, ALL, MK_NUM, "percentiles.max_ns", NULL, 1e6, "%.2f", NULL, 0, "-", 33 },
	{ "max[us]", NULL, TXT, O, MK_NUM, "percentiles.max_ns", NULL, 1e3, "%.1f", NULL, 10, "-" },
	{ "mean_ns", "mean_ns", CSV, ALL, MK_NUM, "percentiles.mean_ns", NULL, 1, "", "%.1f", 0, "-" },
	{ "mean [ms]", NULL, THR, ALL, MK_NUM, "percentiles.mean_ns", NULL, 1e6, "%.2f", NULL, 0,
	  "-", 17 },
	/* a collective's step in two parts: the transform (hadamard) and the ring */
	{ "codec[ms]", "codec_p50_ns", TXT | CSV | HTM, S, MK_NUM, "codec_ns.p50_ns", NULL, 1e6,
	  "%.2f", "%.0f", 10, "-" },
	{ "xport[ms]", "transport_p50_ns", TXT | CSV | HTM, S, MK_NUM, "transport_ns.p50_ns", NULL,
	  1e6, "%.2f", "%.0f", 10, "-" },
	{ "codec_mean_ns", "codec_mean_ns", CSV, ALL, MK_NUM, "codec_ns.mean_ns", NULL, 1, "",
	  "%.1f", 0, "-" },
	{ "transport_mean_ns", "transport_mean_ns", CSV, ALL, MK_NUM, "transport_ns.mean_ns", NULL,
	  1, "", "%.1f", 0, "-" },
	{ "codec p50 [ms]", NULL, LAT, ALL, MK_NUM, "codec_ns.p50_ns", NULL, 1e6, "%.2f", NULL, 0,
	  "-", 35 },
	{ "xport p50 [ms]", NULL, LAT, ALL, MK_NUM, "transport_ns.p50_ns", NULL, 1e6, "%.2f", NULL,
	  0, "-", 36 },
	{ "busbw[MB/s]", "busbw_bytes_per_s", TXT | CSV, S, MK_NUM, "busbw_bytes_per_s", NULL, 1e6,
	  "%.3f", "%.1f", 11, "-" },
	{ "busbw [MB/s]", NULL, THR, ALL, MK_NUM, "busbw_bytes_per_s", NULL, 1e6, "%.3f", NULL, 0,
	  "-", 15 },
	{ "algbw [MB/s]", NULL, THR, ALL, MK_NUM, "algbw_bytes_per_s", NULL, 1e6, "%.3f", NULL, 0,
	  "-", 16 },
	{ "ops/s", "ops_per_s", TXT | CSV, O, MK_NUM, "ops_per_s", NULL, 1, "%.0f", "%.1f", 10, "-" },
	{ "lost", "lost_fraction", TXT | CSV | HTM, S | T, MK_PCT, "lost_fraction", NULL, 1,
	  "%.3f%%", "%.6f", 8, "-" },
	{ "lost [%]", NULL, LAT | TRN, ALL, MK_NUM, "lost_fraction", NULL, 0.01, "%.3f", NULL, 0,
	  "-", 21 },
	{ "now lost [%]", NULL, LAT, ALL, MK_NUM, "live.lost_fraction", NULL, 0.01, "%.3f", NULL, 0,
	  "-", 22 },
	{ "lost_pieces", "lost_pieces", CSV, ALL, MK_NUM, "lost_pieces", NULL, 1, "", "%.0f", 0,
	  "-" },
	{ "lost bytes", NULL, THR, ALL, MK_NUM, "lost_bytes", NULL, 1, "%.0f", NULL, 0, "-", 23 },
	{ "recovered_pieces", "recovered_pieces", CSV, ALL, MK_NUM, "recovered_pieces", NULL, 1, "",
	  "%.0f", 0, "-" },
	{ "rebuilt (ec)", NULL, THR, ALL, MK_NUM, "recovered_pieces", NULL, 1, "%.0f", NULL, 0, "-", 24 },
	{ "step timeouts", NULL, THR, ALL, MK_NUM, "step_timeouts", NULL, 1, "%.0f", NULL, 0, "-", 25 },
	{ "retrans", "retransmissions", TXT | CSV | HTM, S | O | E, MK_NUM, "retransmissions", NULL, 1,
	  "%.0f", "%.0f", 8, "-" },
	{ "retransmits", NULL, LAT, ALL, MK_NUM, "retransmissions", NULL, 1, "%.0f", NULL, 0, "-", 26 },
	/* rxe's counters over the arm's measured time */
	{ "retries/s", NULL, THR, ALL, MK_NUM, "hw_counters_delta.completer_retry_err",
	  "time_total_ns", 1e-9, "%.1f", NULL, 0, "-", 27 },
	{ "seq NAKs/s", NULL, THR, ALL, MK_NUM, "hw_counters_delta.rcvd_seq_err", "time_total_ns",
	  1e-9, "%.1f", NULL, 0, "-", 28 },
	{ "out-of-seq/s", NULL, THR, ALL, MK_NUM, "hw_counters_delta.out_of_seq_request",
	  "time_total_ns", 1e-9, "%.1f", NULL, 0, "-", 29 },
	{ "dup reqs/s", NULL, THR, ALL, MK_NUM, "hw_counters_delta.duplicate_request",
	  "time_total_ns", 1e-9, "%.1f", NULL, 0, "-", 30 },
	{ "nmse", "nmse_mean", CSV, ALL, MK_NUM, "grad_error.nmse_mean", NULL, 1, "%.3g", "%.6g", 9,
	  "-" },
	{ "linf", "linf_mean", TXT | CSV | HTM, S, MK_NUM, "grad_error.linf_mean", NULL, 1, "%.3g",
	  "%.6g", 9, "-" },
	{ "L-inf error", NULL, LAT | TRN, ALL, MK_NUM, "grad_error.linf_mean", NULL, 1, "%.3g", NULL,
	  0, "-", 31 },
	{ "cosine", "cosine_mean", CSV | HTM | LAT | TRN, ALL, MK_NUM, "grad_error.cosine_mean", NULL,
	  1, "%.5f", "%.6f", 8, "-", 32 },
	{ "cos_min", "cosine_min", CSV, ALL, MK_NUM, "grad_error.cosine_min", NULL, 1, "%.5f", "%.6f",
	  8, "-" },
	{ "verify", NULL, TXT, O, MK_VERIFY, "verification_failed", NULL, 1, "%s", NULL, 7, "-" },
	/* kv: was every round's history linearizable (ctl/wl/kv.c) */
	{ "linear.", NULL, TXT, O, MK_VERIFY, "lin_failed", NULL, 1, "%s", NULL, 7, "-" },
	{ "p99 x", NULL, TXT, S | O, MK_RATIO, "percentiles.p99_ns", NULL, 1, "%.2f", NULL, 7, "-" },
	{ "TTA x", NULL, TXT, T, MK_RATIO, "tta_ns", NULL, 1, "%.2f", NULL, 7, "-" },
	{ NULL },
};

int metric_shown(const struct metric *m, unsigned where, enum measure measure)
{
	if (!(m->where & where))
		return 0;
	/* CSV and HTML have one layout for every report: all their columns */
	return where & (MW_CSV | MW_HTML) ? 1 : !!(m->measures & (1u << measure));
}

/* the metric's number in arm: 1 and *v, or 0 */
int metric_value(const struct metric *m, const json_t *arm, double *v)
{
	const json_t *x = jr_path(arm, m->path);

	if (!json_is_number(x))
		return 0;
	*v = json_number_value(x);
	if (m->per) {
		const json_t *d = jr_path(arm, m->per);

		if (!json_is_number(d) || json_number_value(d) <= 0)
			return 0;
		*v /= json_number_value(d);
	}
	return 1;
}

/* the percentiles a report names, the samples each needs */
static const struct {
	const char *name, *key;
	uint64_t need;
} pcts[] = {
	{ "p50", "p50_ns", 2 },       { "p90", "p90_ns", 10 },          { "p99", "p99_ns", 100 },
	{ "p99.9", "p99_9_ns", 1000 }, { "p99.99", "p99_99_ns", 10000 },
};

const char report_short_note[] =
	REPORT_SHORT_MARK ": from fewer steps (operations) than the percentile needs (p99: 100, "
	"p99.9: 1000, p99.99: 10000): it is the largest or next to it";

uint64_t report_samples(const json_t *arm)
{
	if (jr_u64(arm, "iters"))
		return jr_u64(arm, "iters");
	if (jr_u64(arm, "steps"))
		return jr_u64(arm, "steps");
	return jr_u64(json_object_get(arm, "percentiles"), "count");
}

json_t *report_insufficient(const json_t *arm)
{
	const json_t *pc = json_object_get(arm, "percentiles");
	uint64_t n = report_samples(arm);
	json_t *a = json_array();

	for (size_t i = 0; pc && i < sizeof(pcts) / sizeof(pcts[0]); i++)
		if (n < pcts[i].need && json_object_get(pc, pcts[i].key))
			json_array_append_new(a, json_string(pcts[i].name));
	return a;
}

int report_any_short(const json_t *arms)
{
	const json_t *arm;
	size_t i;
	int any = 0;

	json_array_foreach(arms, i, arm) {
		json_t *a = report_insufficient(arm);

		any |= json_array_size(a) > 0;
		json_decref(a);
	}
	return any;
}

int report_pct_short(const char *path, const json_t *arm)
{
	const json_t *pc = json_object_get(arm, "percentiles");

	if (!path || strncmp(path, "percentiles.", 12) || !pc)
		return 0;
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		if (!strcmp(path + 12, pcts[i].key))
			return report_samples(arm) < pcts[i].need;
	return 0;
}

int metric_cell(const struct metric *m, const json_t *arm, const json_t *first, int csv,
		char *buf, size_t len)
{
	const json_t *x = jr_path(arm, m->path);
	double v, v0;

	/* a key present as null is a value that never came (TTA: "never"); a
	 * missing key is a figure this arm does not have */
	snprintf(buf, len, "%s", csv ? "" : json_is_null(x) ? m->absent : "-");
	switch (m->kind) {
	case MK_STR:
		if (!json_is_string(x))
			return 0;
		snprintf(buf, len, m->fmt, json_string_value(x));
		return 1;
	case MK_VERIFY:
		if (!json_is_boolean(x))
			return 0;
		snprintf(buf, len, "%s", json_is_true(x) ? "FAILED" : "ok");
		return 1;
	case MK_RATIO:
		if (!first || arm == first || !metric_value(m, arm, &v) || !metric_value(m, first, &v0) ||
		    v <= 0 || v0 <= 0)
			return 0;
		snprintf(buf, len, m->fmt, v0 / v);
		return 1;
	case MK_PCT:
	case MK_NUM:
		if (!metric_value(m, arm, &v))
			return 0;
		if (csv) {
			snprintf(buf, len, m->csv_fmt, v);
		} else {
			size_t k;

			snprintf(buf, len, m->fmt, (m->kind == MK_PCT ? 100 * v : v) / m->scale);
			k = strlen(buf);
			if (report_pct_short(m->path, arm) && k + 1 < len)
				snprintf(buf + k, len - k, "%s", REPORT_SHORT_MARK);
		}
		return 1;
	}
	return 0;
}
