// SPDX-License-Identifier: MIT
/*
 * rdmactl report A B [C ...]: runs against the first, arm by arm (arms
 * matched by name), every numeric figure of the metric table (its CSV
 * columns, raw: the units in their names). Each later run's change from
 * the first in percent; for the step-time percentiles (p50 ... p99.99) with
 * its 95% bootstrap interval from the two arms' histograms (lib/boot.h:
 * the ratio's interval, as a change). Other figures are one value per run,
 * with no interval to give: said so, not invented. Text, JSON and a
 * self-contained HTML page, all from one table built here.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ctl/report/plot.h"
#include "ctl/report/report.h"
#include "lib/boot.h"

#define CMP_MAX_RUNS 16

/* the quantile a percentile column names, 0 if it is not one */
static double col_q(const char *csv)
{
	static const struct {
		const char *col;
		double q;
	} qs[] = { { "p50_ns", 0.5 }, { "p90_ns", 0.9 }, { "p99_ns", 0.99 },
		   { "p99_9_ns", 0.999 }, { "p99_99_ns", 0.9999 } };

	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
		if (!strcmp(csv, qs[i].col))
			return qs[i].q;
	return 0;
}

static const json_t *arm_named(const json_t *rep, const char *name)
{
	const json_t *a;
	size_t i;

	json_array_foreach(json_object_get(rep, "arms"), i, a)
		if (!strcmp(jr_str(a, "name"), name))
			return a;
	return NULL;
}

/* one metric of one arm across the runs: values, changes, intervals */
static json_t *metric_row(const struct metric *m, const json_t *const *arms, int n)
{
	json_t *vals = json_array(), *chg = json_array(), *ci = json_array(), *shrt = json_array();
	double v0 = 0, q = col_q(m->csv);
	int have0 = 0, any = 0, r;
	struct hist h0, h;

	for (r = 0; r < n; r++) {
		double v;
		int have = arms[r] && metric_value(m, arms[r], &v);

		json_array_append_new(vals, have ? json_real(v) : json_null());
		/* a percentile its arm has too few samples for (report.h): no interval */
		json_array_append_new(shrt, json_boolean(have && q > 0 &&
							 report_pct_short(m->path, arms[r])));
		any |= have;
		if (r == 0) {
			have0 = have && v != 0;
			v0 = v;
			json_array_append_new(chg, json_null());
			json_array_append_new(ci, json_null());
			continue;
		}
		json_array_append_new(chg, have && have0 ? json_real(100 * (v / v0 - 1)) : json_null());
		if (have && have0 && q > 0 && !report_pct_short(m->path, arms[0]) &&
		    !report_pct_short(m->path, arms[r]) &&
		    !hist_from_json(&h0, json_object_get(arms[0], "time_hist_ns")) &&
		    !hist_from_json(&h, json_object_get(arms[r], "time_hist_ns")) && h0.count &&
		    h.count) {
			struct boot_cmp c;

			if (!boot_compare(&h, &h0, q, 0.95, BOOT_RESAMPLES, 0x5eed + (uint64_t)r, &c)) {
				json_array_append_new(ci, json_pack("[f,f]", 100 * (c.ratio_lo - 1),
								    100 * (c.ratio_hi - 1)));
				continue;
			}
		}
		json_array_append_new(ci, json_null());
	}
	if (!any) {
		json_decref(vals);
		json_decref(chg);
		json_decref(ci);
		json_decref(shrt);
		return NULL;
	}
	return json_pack("{s:s,s:o,s:o,s:o,s:o}", "metric", m->csv, "values", vals, "change_pct", chg,
			 "ci95_pct", ci, "insufficient_samples", shrt);
}

json_t *report_comparison(const json_t *const *reps, const char *const *dirs, int n)
{
	json_t *runs = json_array(), *arms = json_array();
	const json_t *a;
	size_t i;
	int r;

	for (r = 0; r < n; r++)
		json_array_append_new(runs, json_pack("{s:s,s:s,s:s,s:s}", "dir", dirs[r], "created",
						      jr_str(reps[r], "created"), "profile",
						      jr_str(json_object_get(reps[r], "profile"), "name"),
						      "status", jr_str(reps[r], "status")));
	/* the first run's arms in its order, then arms only later runs have */
	for (r = 0; r < n; r++) {
		json_array_foreach(json_object_get(reps[r], "arms"), i, a) {
			const char *name = jr_str(a, "name");
			const json_t *per[CMP_MAX_RUNS];
			const struct metric *m;
			json_t *rows;
			int k, seen = 0;

			/* listed once: where it first appears (a name twice in one run
			 * from elsewhere: its first arm) */
			for (k = 0; k < r; k++)
				seen |= arm_named(reps[k], name) != NULL;
			if (seen || arm_named(reps[r], name) != a)
				continue;
			rows = json_array();
			for (k = 0; k < n; k++)
				per[k] = arm_named(reps[k], name);
			for (m = report_metrics; m->name; m++) {
				json_t *row;

				if (!(m->where & MW_CSV) || !m->csv ||
				    (m->kind != MK_NUM && m->kind != MK_PCT))
					continue;
				if ((row = metric_row(m, per, n)))
					json_array_append_new(rows, row);
			}
			json_array_append_new(arms, json_pack("{s:s,s:o}", "name", name, "metrics", rows));
		}
	}
	return json_pack("{s:s,s:i,s:o,s:o,s:s}", "kind", "rdma-testbed-comparison", "schema_version",
			 1, "runs", runs, "arms", arms, "note",
			 "change_pct: (run / first run - 1) x 100; ci95_pct: a 95% bootstrap interval "
			 "of the change, for step-time percentiles (from the arms' histograms); null "
			 "where a figure is one value per run, or where insufficient_samples: the "
			 "percentile needs more steps than the arm has (p99: 100, p99.9: 1000)");
}

static int ends(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && !strcmp(s + n - k, tail);
}

/* a raw value in a unit people read: ns as ms, B/s as MB/s, fractions as % */
static void cell_value(const char *metric, const json_t *v, const json_t *shrt, char *buf,
		       size_t len)
{
	double x = json_number_value(v);

	if (!json_is_number(v))
		snprintf(buf, len, "-");
	else if (ends(metric, "_ns"))
		snprintf(buf, len, "%.3f ms", x / 1e6);
	else if (ends(metric, "_bytes_per_s"))
		snprintf(buf, len, "%.3f MB/s", x / 1e6);
	else if (ends(metric, "_fraction"))
		snprintf(buf, len, "%.3f%%", 100 * x);
	else
		snprintf(buf, len, "%.6g", x);
	if (json_is_true(shrt) && strlen(buf) + 1 < len)
		strcat(buf, REPORT_SHORT_MARK);
}

/* run k's cells of a metric row: its value, its change from the first (with
 * the interval when there is one); ci: that interval or NULL */
static void row_cells(const json_t *row, size_t k, char *v, size_t vlen, char *c, size_t clen,
		      const json_t **ci);

static void cell_change(const json_t *c, const json_t *ci, char *buf, size_t len)
{
	if (!json_is_number(c))
		snprintf(buf, len, "-");
	else if (json_is_array(ci))
		snprintf(buf, len, "%+.1f%% [%+.1f, %+.1f]", json_number_value(c),
			 json_number_value(json_array_get(ci, 0)),
			 json_number_value(json_array_get(ci, 1)));
	else
		snprintf(buf, len, "%+.1f%%", json_number_value(c));
}

static void row_cells(const json_t *row, size_t k, char *v, size_t vlen, char *c, size_t clen,
		      const json_t **ci)
{
	*ci = json_array_get(json_object_get(row, "ci95_pct"), k);
	cell_value(jr_str(row, "metric"), json_array_get(json_object_get(row, "values"), k),
		   json_array_get(json_object_get(row, "insufficient_samples"), k), v, vlen);
	cell_change(json_array_get(json_object_get(row, "change_pct"), k), *ci, c, clen);
}

void report_comparison_text(const json_t *cmp, FILE *f)
{
	const json_t *runs = json_object_get(cmp, "runs"), *arm, *row, *r;
	size_t i, j, k, n = json_array_size(runs);

	fprintf(f, "# runs against the first: change in %% [95%% bootstrap interval, step-time "
		   "percentiles only]\n");
	json_array_foreach(runs, i, r)
		fprintf(f, "#   %c = %s (%s, %s)%s\n", (int)('A' + i), jr_str(r, "dir"),
			jr_str(r, "profile"), jr_str(r, "created"), i ? "" : ", the baseline");
	fprintf(f, "# %s: a percentile from fewer steps than it needs (p99: 100, p99.9: 1000), "
		   "given without an interval\n", REPORT_SHORT_MARK);
	fprintf(f, "# %-10s %-22s %14s", "arm", "metric", "A");
	for (k = 1; k < n; k++)
		fprintf(f, " %14c %-28s", (int)('A' + k), "vs A");
	fputc('\n', f);
	json_array_foreach(json_object_get(cmp, "arms"), i, arm) {
		json_array_foreach(json_object_get(arm, "metrics"), j, row) {
			const json_t *ci;
			char v[32], c[64];

			row_cells(row, 0, v, sizeof(v), c, sizeof(c), &ci);
			fprintf(f, "  %-10s %-22s %14s", jr_str(arm, "name"), jr_str(row, "metric"), v);
			for (k = 1; k < n; k++) {
				row_cells(row, k, v, sizeof(v), c, sizeof(c), &ci);
				fprintf(f, " %14s %-28s", v, c);
			}
			fputc('\n', f);
		}
	}
}

void report_comparison_html(const json_t *cmp, FILE *f)
{
	const json_t *runs = json_object_get(cmp, "runs"), *arm, *row, *r;
	size_t i, j, k, n = json_array_size(runs);

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<title>rdma-testbed: runs compared</title><style>"
	      "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}"
	      "table{border-collapse:collapse;margin:0 0 1.5em}"
	      "td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}"
	      "th{background:#f3f3f3}td.m{text-align:left;font-family:monospace}"
	      "td.up{background:#fde2e1}td.down{background:#e1f5e4}"
	      "</style></head><body>\n<h1>Runs compared</h1>\n<p>Each run against the first: the "
	      "change in percent and, for the step-time percentiles, its 95% bootstrap interval "
	      "(shaded where the interval excludes no change: red higher, green lower). *: a "
	      "percentile from fewer steps than it needs, given without an interval.</p>\n<ul>\n",
	      f);
	json_array_foreach(runs, i, r) {
		fprintf(f, "<li>%c: ", (int)('A' + i));
		html_escape(f, jr_str(r, "dir"));
		fputs(" (", f);
		html_escape(f, jr_str(r, "profile"));
		fputs(", ", f);
		html_escape(f, jr_str(r, "created"));
		fprintf(f, ")%s</li>\n", i ? "" : ", the baseline");
	}
	fputs("</ul>\n", f);
	json_array_foreach(json_object_get(cmp, "arms"), i, arm) {
		fputs("<h2>", f);
		html_escape(f, jr_str(arm, "name"));
		fputs("</h2>\n<table class=\"cmp\"><tr><th>metric</th><th>A</th>", f);
		for (k = 1; k < n; k++)
			fprintf(f, "<th>%c</th><th>%c vs A</th>", (int)('A' + k), (int)('A' + k));
		fputs("</tr>\n", f);
		json_array_foreach(json_object_get(arm, "metrics"), j, row) {
			const json_t *ci;
			char v[32], c[64];

			row_cells(row, 0, v, sizeof(v), c, sizeof(c), &ci);
			fputs("<tr><td class=\"m\">", f);
			html_escape(f, jr_str(row, "metric"));
			fprintf(f, "</td><td>%s</td>", v);
			for (k = 1; k < n; k++) {
				const char *cls = "";

				row_cells(row, k, v, sizeof(v), c, sizeof(c), &ci);
				if (json_is_array(ci) && json_number_value(json_array_get(ci, 0)) > 0)
					cls = " class=\"up\"";
				else if (json_is_array(ci) && json_number_value(json_array_get(ci, 1)) < 0)
					cls = " class=\"down\"";
				fprintf(f, "<td>%s</td><td%s>%s</td>", v, cls, c);
			}
			fputs("</tr>\n", f);
		}
		fputs("</table>\n", f);
	}
	fputs("</body></html>\n", f);
}
