// SPDX-License-Identifier: MIT
/*
 * report.html: one self-contained page that opens offline: the summary
 * table from the metric table, each arm's percentiles with their
 * confidence intervals, the comparisons of arms, and charts drawn in the
 * browser by dygraphs (inlined, with charts.js: see assets.c): latency
 * CDFs, step time over time with the fault windows shaded, loss and
 * retransmissions over time (per rank where the ranks differ) and per
 * arm, training curves; then the fault rules and the profile as run.
 * Each chart's data is a JSON block in its figure, written here from
 * report.json alone (a re-rendered page is the same page).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/report/plot.h"
#include "lib/boot.h"
#include "lib/hwc.h"

/* x, y: scratch arrays of cap points for every plot */
struct page {
	FILE *f;
	const json_t *rep, *arms;
	json_int_t t0;
	enum measure ms;
	double *x, *y;
	size_t cap;
};

static void html_head(const struct page *pg)
{
	const json_t *rep = pg->rep, *tb = json_object_get(rep, "testbed");
	const char *name = jr_str(json_object_get(rep, "profile"), "name");
	FILE *f = pg->f;

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
	html_escape(f, name);
	fputs(" - rdma-testbed report</title>\n<style>\n", f);
	fputs(rtb_asset_dygraph_css, f);
	fputs(rtb_asset_charts_css, f);
	fputs("</style></head><body>\n<noscript><p class=\"note\">The charts of this page are drawn "
	      "by its scripts; every figure is in report.json.</p></noscript>\n<h1>", f);
	html_escape(f, name);
	/* every string from report.json escaped: a re-rendered report may come
	 * from anywhere */
	char e[7][160];

	fprintf(f, "</h1>\n<p>%s run, status <b>%s</b>%s, created %s, %.1f s. Testbed: %s (%s), %lld "
		   "nodes, MTU %lld, kernel %s. rdmactl %s.</p>\n",
		html_esc(jr_str(rep, "workload"), e[0], sizeof(e[0])),
		html_esc(jr_str(rep, "status"), e[1], sizeof(e[1])),
		json_is_true(json_object_get(rep, "partial")) ? " (partial)" : "",
		html_esc(jr_str(rep, "created"), e[2], sizeof(e[2])), jr_real(rep, "duration_s"),
		html_esc(jr_str(tb, "backend"), e[3], sizeof(e[3])),
		html_esc(jr_str(tb, "accel"), e[4], sizeof(e[4])),
		json_integer_value(json_object_get(tb, "nodes")),
		json_integer_value(json_object_get(tb, "mtu")),
		html_esc(jr_str(tb, "kernel"), e[5], sizeof(e[5])),
		html_esc(jr_str(json_object_get(rep, "versions"), "rdmactl"), e[6], sizeof(e[6])));
}

/* the summary table: the metric table's HTML columns */
/* one comparison row: vs_arms entry v of arm */
static void html_vs_row(const struct page *pg, const json_t *arm, const json_t *v)
{
	static const char *const q[2] = { "p50", "p99" };

	fputs("<tr><td>", pg->f);
	html_escape(pg->f, jr_str(v, "arm"));
	fputs(" / ", pg->f);
	html_escape(pg->f, jr_str(arm, "name"));
	fputs("</td>", pg->f);
	for (int k = 0; k < 2; k++) {
		char key[32], ci[40], dkey[32], dci[40];
		const json_t *r, *d;

		snprintf(key, sizeof(key), "%s_ratio", q[k]);
		snprintf(ci, sizeof(ci), "%s_ratio_ci95", q[k]);
		snprintf(dkey, sizeof(dkey), "%s_diff_ns", q[k]);
		snprintf(dci, sizeof(dci), "%s_diff_ci95_ns", q[k]);
		r = json_object_get(v, ci);
		d = json_object_get(v, dci);
		fprintf(pg->f, "<td>%.2f (%.2f-%.2f)</td><td>%.1f (%.1f to %.1f)</td>",
			jr_real(v, key), json_number_value(json_array_get(r, 0)),
			json_number_value(json_array_get(r, 1)), jr_real(v, dkey) / 1e6,
			json_number_value(json_array_get(d, 0)) / 1e6,
			json_number_value(json_array_get(d, 1)) / 1e6);
	}
	fputs("</tr>\n", pg->f);
}

/* the RC arms' settings, then every pair of arms with the bootstrap
 * intervals (report.json's vs_arms; a report without: vs_first_arm) */
static void html_vs_first(const struct page *pg)
{
	const json_t *arm, *v, *rs, *all;
	size_t i, j;
	int head = 0;

	json_array_foreach(pg->arms, i, arm) {
		if (!(rs = json_object_get(arm, "rc_settings")))
			continue;
		fputs("<p class=\"note\">", pg->f);
		html_escape(pg->f, jr_str(arm, "name"));
		fprintf(pg->f, ": RC ACK timeout %.1f ms (rc_timeout %llu), rc_retry_cnt %llu</p>\n",
			jr_real(rs, "timeout_ns") / 1e6, (unsigned long long)jr_u64(rs, "timeout"),
			(unsigned long long)jr_u64(rs, "retry_cnt"));
	}
	json_array_foreach(pg->arms, i, arm) {
		all = json_object_get(arm, "vs_arms");
		for (j = 0; j < (json_is_array(all) ? json_array_size(all) : 1); j++) {
			v = json_is_array(all) ? json_array_get(all, j) :
						 json_object_get(arm, "vs_first_arm");
			if (!v)
				continue;
			if (!head++)
				fprintf(pg->f, "<table id=\"vs_first\"><tr><th>comparison</th><th>p50 "
					       "ratio (95%% CI)</th><th>p50 difference [ms] (95%% CI)</th>"
					       "<th>p99 ratio (95%% CI)</th><th>p99 difference [ms] (95%% "
					       "CI)</th></tr>\n");
			html_vs_row(pg, arm, v);
		}
	}
	if (head) {
		fputs("</table>\n<p class=\"note\">earlier arm / later arm, and earlier - later: ",
		      pg->f);
		html_escape(pg->f, jr_str(json_object_get(json_array_get(pg->arms, 1), "vs_first_arm"),
					  "method") ?: "percentile bootstrap over the two arms' samples");
		fputs("</p>\n", pg->f);
	}
}

static void html_summary(const struct page *pg)
{
	const struct metric *m;
	const json_t *arm;
	char cell[64];
	size_t i;

	fputs("<table id=\"summary\"><tr><th>arm</th><th>mode</th>", pg->f);
	for (m = report_metrics; m->name; m++)
		if (metric_column(m, MW_HTML, pg->ms, pg->arms)) {
			fputs("<th>", pg->f);
			html_escape(pg->f, m->name);
			fputs("</th>", pg->f);
		}
	fputs("</tr>\n", pg->f);
	json_array_foreach(pg->arms, i, arm) {
		fputs("<tr><td>", pg->f);
		html_escape(pg->f, jr_str(arm, "name"));
		fputs("</td><td>", pg->f);
		html_escape(pg->f, jr_str(arm, "mode"));
		fputs("</td>", pg->f);
		for (m = report_metrics; m->name; m++) {
			if (!metric_column(m, MW_HTML, pg->ms, pg->arms))
				continue;
			metric_cell(m, arm, json_array_get(pg->arms, 0), 0, cell, sizeof(cell));
			fputs("<td>", pg->f);
			html_escape(pg->f, cell);
			fputs("</td>", pg->f);
		}
		fputs("</tr>\n", pg->f);
	}
	fputs("</table>\n", pg->f);
	if (report_any_short(pg->arms)) {
		fputs("<p class=\"note\">", pg->f);
		html_escape(pg->f, report_short_note);
		fputs("</p>\n", pg->f);
	}
	html_vs_first(pg);
}

/* --- charts: each a <figure> with its data as JSON for charts.js */

/* a JSON value inside <script>: every '<' as \u003c, so that nothing in a
 * name or rule can end the script or open a comment */
static void json_in_script(FILE *f, const json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(9)), *c;

	for (c = s; c && *c; c++)
		if (*c == '<')
			fputs("\\u003c", f);
		else
			fputc(*c, f);
	free(s);
}

static json_t *axis(const char *label, const char *unit, int logscale)
{
	json_t *a = json_pack("{s:s,s:s}", "label", label, "unit", unit ?: "");

	if (a && logscale)
		json_object_set_new(a, "log", json_true());
	return a;
}

/* one series of arm k: points (x[i], y[i]), the non-finite left out */
static json_t *series(const char *name, const json_t *arm, int k, int dash, const double *x,
		      const double *y, size_t n)
{
	json_t *pts = json_array(), *s;
	size_t i;

	for (i = 0; i < n; i++)
		if (isfinite(x[i]) && isfinite(y[i]))
			json_array_append_new(pts, json_pack("[f,f]", x[i], y[i]));
	s = json_pack("{s:s,s:s,s:s,s:b,s:o}", "name", name, "arm", jr_str(arm, "name") ?: "",
		      "color", plot_colors[k % 5], "dash", dash, "points", pts);
	return s;
}

struct chart {
	json_t *o;		/* the spec charts.js reads */
	const char *id, *title;
	const char *note;	/* under the chart, or NULL */
	int zoom;		/* a "reset zoom" button */
};

static void chart_init(struct chart *c, const char *id, const char *title, const char *kind,
		       json_t *x, json_t *y)
{
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->title = title;
	c->zoom = strcmp(kind, "bar") != 0;
	c->o = json_pack("{s:s,s:s,s:o,s:o,s:[]}", "id", id, "kind", kind, "x", x, "y", y,
			 "series");
}

static void chart_add(struct chart *c, json_t *s)
{
	json_array_append_new(json_object_get(c->o, "series"), s);
}

/* whether arm a has a series in the chart (any view) */
static int chart_has_arm(const json_t *o, const char *arm)
{
	const json_t *v, *s;
	size_t i, k;

	json_array_foreach(json_object_get(o, "series"), k, s)
		if (!strcmp(jr_str(s, "arm") ?: "", arm) && json_array_size(json_object_get(s, "points")))
			return 1;
	json_array_foreach(json_object_get(o, "views"), i, v)
		json_array_foreach(json_object_get(v, "series"), k, s)
			if (!strcmp(jr_str(s, "arm") ?: "", arm) &&
			    json_array_size(json_object_get(s, "points")))
				return 1;
	return 0;
}

/* the figure: title, a check box per arm, the views' select box, the
 * chart, the hover box, the fault windows in words, the data */
static void chart_emit(const struct page *pg, struct chart *c)
{
	const json_t *arm, *v, *fl;
	char esc[256];
	size_t i;

	fprintf(pg->f, "<figure class=\"chart\" id=\"%s\"><figcaption>", c->id);
	html_escape(pg->f, c->title);
	fputs("</figcaption>\n<div class=\"controls\"><span class=\"arms\">", pg->f);
	json_array_foreach(pg->arms, i, arm) {
		const char *nm = jr_str(arm, "name") ?: "";

		if (!chart_has_arm(c->o, nm))
			continue;
		html_esc(nm, esc, sizeof(esc));
		fprintf(pg->f, "<label style=\"color:%s\"><input type=\"checkbox\" data-arm=\"%s\" "
			       "checked> %s</label>", plot_colors[i % 5], esc, esc);
	}
	fputs("</span>", pg->f);
	if (json_array_size(json_object_get(c->o, "views"))) {
		fputs(" <select class=\"view\">", pg->f);
		json_array_foreach(json_object_get(c->o, "views"), i, v) {
			fputs("<option>", pg->f);
			html_escape(pg->f, jr_str(v, "label"));
			fputs("</option>", pg->f);
		}
		fputs("</select>", pg->f);
	}
	if (c->zoom)
		fputs(" <button class=\"reset\" type=\"button\">reset zoom</button>", pg->f);
	fputs("</div>\n<div class=\"graph\"></div>\n<div class=\"values\"></div>\n", pg->f);
	json_array_foreach(json_object_get(c->o, "faults"), i, fl) {
		fputs(i ? "; " : "<p class=\"faults\">shaded: fault ", pg->f);
		html_escape(pg->f, jr_str(fl, "name"));
		fputs(" (", pg->f);
		html_escape(pg->f, jr_str(fl, "rule"));
		if (json_is_null(json_object_get(fl, "to")))
			fprintf(pg->f, ") from %.2f s on", jr_real(fl, "from"));
		else
			fprintf(pg->f, ") %.2f-%.2f s", jr_real(fl, "from"), jr_real(fl, "to"));
	}
	if (json_array_size(json_object_get(c->o, "faults")))
		fputs("</p>\n", pg->f);
	if (c->note) {
		fputs("<p class=\"note\">", pg->f);
		html_escape(pg->f, c->note);
		fputs("</p>\n", pg->f);
	}
	fputs("<script type=\"application/json\" class=\"chart-data\">", pg->f);
	json_in_script(pg->f, c->o);
	fputs("</script></figure>\n", pg->f);
	json_decref(c->o);
	c->o = NULL;
}

/* the profile's fault windows, in seconds since the run's start */
static json_t *fault_windows(const struct page *pg)
{
	json_t *out = json_array();
	const json_t *fl;
	size_t i;

	json_array_foreach(json_object_get(pg->rep, "faults"), i, fl) {
		double a = jr_real(fl, "start_ns") / 1e9, d = jr_real(fl, "duration_ns") / 1e9;

		json_array_append_new(out, json_pack("{s:s,s:s,s:f,s:o}", "name",
						     jr_str(fl, "name") ?: "", "rule",
						     jr_str(fl, "rule") ?: "", "from", a, "to",
						     d > 0 ? json_real(a + d) : json_null()));
	}
	return out;
}

/* 1. latency CDFs */
static void plot_cdfs(const struct page *pg)
{
	const json_t *arm;
	struct chart c;
	size_t i, n;
	int ops = pg->ms == MEASURE_OPS;

	chart_init(&c, "cdf", pg->ms == MEASURE_TRAIN ? "Training step time CDF" :
		   ops ? "Operation latency CDF" : "Step time CDF", "step",
		   axis(ops ? "latency" : "step time", "ms", 1),
		   axis(ops ? "fraction of operations <= x" : "fraction of steps <= x", "", 0));
	json_object_set_new(json_object_get(c.o, "y"), "min", json_integer(0));
	json_object_set_new(json_object_get(c.o, "y"), "max", json_real(1.02));
	json_array_foreach(pg->arms, i, arm) {
		struct hist h;

		if (hist_from_json(&h, json_object_get(arm, "time_hist_ns")) || !h.count)
			continue;
		n = cdf_points(&h, pg->x, pg->y, pg->cap);
		chart_add(&c, series(jr_str(arm, "name") ?: "", arm, (int)i, 0, pg->x, pg->y, n));
	}
	chart_emit(pg, &c);
}

/* 2. step time over time, fault windows shaded */
static void plot_timeline(const struct page *pg)
{
	const json_t *arm;
	struct chart c;
	size_t i, n;
	int ops = pg->ms == MEASURE_OPS;
	char nm[160];

	chart_init(&c, "timeline", ops ? "Operation latency over time (per 250 ms interval: p50 "
		   "solid, max dotted)" : "Step time over time (per 250 ms interval: p50 solid, max "
		   "dotted)", "line", axis("time since the run's start", "s", 0),
		   axis(ops ? "latency" : "step time", "ms", 0));
	json_object_set_new(c.o, "gap", json_real(1.0));
	json_object_set_new(c.o, "faults", fault_windows(pg));
	json_array_foreach(pg->arms, i, arm) {
		n = ival_points(json_object_get(arm, "intervals"), pg->t0, Q_P50, pg->x, pg->y, pg->cap);
		snprintf(nm, sizeof(nm), "%s p50", jr_str(arm, "name") ?: "");
		chart_add(&c, series(nm, arm, (int)i, 0, pg->x, pg->y, n));
		n = ival_points(json_object_get(arm, "intervals"), pg->t0, Q_MAX, pg->x, pg->y, pg->cap);
		snprintf(nm, sizeof(nm), "%s max", jr_str(arm, "name") ?: "");
		chart_add(&c, series(nm, arm, (int)i, 1, pg->x, pg->y, n));
	}
	chart_emit(pg, &c);
}

/* 3, 4. loss and retransmissions over time: rank 0's view, and where two
 * ranks or more have it, a view per rank */
static void plot_over_time(const struct page *pg, const char *id, const char *title,
			   const char *ylabel, const char *unit, enum ival_q q)
{
	const json_t *arm;
	struct chart c;
	size_t i, r, n, nr = 0;

	chart_init(&c, id, title, "line", axis("time since the run's start", "s", 0),
		   axis(ylabel, unit, 0));
	json_object_set_new(c.o, "gap", json_real(1.0));
	json_object_set_new(json_object_get(c.o, "y"), "min", json_integer(0));
	json_object_set_new(c.o, "faults", fault_windows(pg));
	json_array_foreach(pg->arms, i, arm) {
		size_t m = json_array_size(json_object_get(arm, "rank_intervals"));

		nr = m > nr ? m : nr;
		n = ival_points(json_object_get(arm, "intervals"), pg->t0, q, pg->x, pg->y, pg->cap);
		if (n)
			chart_add(&c, series(jr_str(arm, "name") ?: "", arm, (int)i, 0, pg->x, pg->y, n));
	}
	if (nr >= 2) {
		json_t *views = json_array();
		int any = 0;

		for (r = 0; r < nr; r++) {
			json_t *ss = json_array();
			char label[32];

			json_array_foreach(pg->arms, i, arm) {
				n = ival_points(json_array_get(json_object_get(arm, "rank_intervals"), r), pg->t0,
						 q, pg->x, pg->y, pg->cap);
				any |= r > 0 && n > 0;
				json_array_append_new(ss, series(jr_str(arm, "name") ?: "", arm, (int)i, 0,
								 pg->x, pg->y, n));
			}
			snprintf(label, sizeof(label), "rank %zu", r);
			json_array_append_new(views, json_pack("{s:s,s:o}", "label", label, "series", ss));
		}
		if (any) {	/* view 0 is rank 0's: the intervals' lines are not kept twice */
			json_object_set_new(c.o, "views", views);
			json_object_set_new(c.o, "series", json_array());
			c.note = "Each rank as its node saw it (the select box); the other ranks' times "
				 "are moved so that each round starts where rank 0's does.";
		} else {
			json_decref(views);
		}
	}
	if (json_array_size(json_object_get(c.o, "series")) || json_object_get(c.o, "views"))
		chart_emit(pg, &c);
	else
		json_decref(c.o);
}

/* 5. retransmissions per arm, as bars */
static void plot_retrans_bars(const struct page *pg)
{
	const json_t *arm;
	struct chart c;
	json_t *cats = json_array();
	size_t i;
	const char *src = jr_str(json_array_get(pg->arms, 0), "retransmissions_source");
	char title[200], note[400] = "";

	snprintf(title, sizeof(title), "Retransmissions per arm: %s", arm_retrans_what(src, 1));
	json_array_foreach(pg->arms, i, arm)
		json_array_append_new(cats, json_string(jr_str(arm, "name") ?: ""));
	chart_init(&c, "retrans", title, "bar", axis("arm", "", 0),
		   axis(src && *src && strcmp(src, "rxe_events") ? "packets resent" :
		   "retransmission events", "", 0));
	json_object_set_new(json_object_get(c.o, "x"), "categories", cats);
	json_object_set_new(json_object_get(c.o, "y"), "min", json_integer(0));
	json_array_foreach(pg->arms, i, arm) {
		double x = (double)i, v = jr_real(arm, "retransmissions");
		const char *s = jr_str(arm, "retransmissions_source");

		chart_add(&c, series(jr_str(arm, "name") ?: "", arm, (int)i, 0, &x, &v, 1));
		if (strcmp(s ?: "", src ?: "")) {
			size_t l = strlen(note);

			snprintf(note + l, sizeof(note) - l, "%s%s counts %s.", l ? " " : "",
				 jr_str(arm, "name") ?: "?", s ?: "nothing");
		}
	}
	if (*note)
		c.note = note;
	chart_emit(pg, &c);
}

/* 6. training curves */
static void plot_training(const struct page *pg)
{
	const json_t *arm, *e;
	struct chart c;
	size_t i, k, n;

	chart_init(&c, "training", "Held-out accuracy over training time", "line",
		   axis("training time (evaluation excluded)", "s", 0), axis("accuracy", "", 0));
	json_object_set_new(json_object_get(c.o, "y"), "min", json_integer(0));
	json_object_set_new(json_object_get(c.o, "y"), "max", json_integer(1));
	json_array_foreach(pg->arms, i, arm) {
		n = 0;
		json_array_foreach(json_object_get(arm, "curve"), k, e) {
			if (n >= pg->cap)
				break;
			pg->x[n] = jr_real(e, "time_ns") / 1e9;
			pg->y[n++] = jr_real(e, "accuracy");
		}
		chart_add(&c, series(jr_str(arm, "name") ?: "", arm, (int)i, 0, pg->x, pg->y, n));
	}
	chart_emit(pg, &c);
}

/* each arm's p50 and p99 with their 95% intervals (lib/boot.h's
 * quantile_ci: distribution-free, from the order statistics) */
static void ci_cell(FILE *f, const struct hist *h, double q, int *open_any)
{
	double v, lo, hi;
	int open_hi;

	if (quantile_ci(h, q, 0.95, &v, &lo, &hi, &open_hi)) {
		fputs("<td>-</td>", f);
		return;
	}
	fprintf(f, "<td>%.4g (%.4g to %s%.4g)</td>", v / 1e6, lo / 1e6, open_hi ? "over " : "",
		hi / 1e6);
	*open_any |= open_hi;
}

static void html_arm_ci(const struct page *pg)
{
	const json_t *arm;
	size_t i;
	int open_any = 0, head = 0;

	json_array_foreach(pg->arms, i, arm) {
		struct hist h;

		if (hist_from_json(&h, json_object_get(arm, "time_hist_ns")) || !h.count)
			continue;
		if (!head++)
			fprintf(pg->f, "<table id=\"arm_ci\"><tr><th>arm</th><th>%s</th><th>p50 [ms] "
				       "(95%% CI)</th><th>p99 [ms] (95%% CI)</th></tr>\n",
				pg->ms == MEASURE_OPS ? "operations" : "steps");
		fputs("<tr><td>", pg->f);
		html_escape(pg->f, jr_str(arm, "name"));
		fprintf(pg->f, "</td><td>%llu</td>", (unsigned long long)h.count);
		ci_cell(pg->f, &h, 0.5, &open_any);
		ci_cell(pg->f, &h, 0.99, &open_any);
		fputs("</tr>\n", pg->f);
	}
	if (!head)
		return;
	fputs("</table>\n<p class=\"note\">95% intervals from the order statistics (exact for any "
	      "continuous distribution, no resampling)", pg->f);
	if (open_any)
		fputs("; \"over\": too few samples lie above the percentile to bound it from above "
		      "(the largest sample is shown)", pg->f);
	fputs(".</p>\n", pg->f);
}

/* where two ranks or more report loss or retransmissions: each rank's,
 * over the arm's rounds (the agents' own totals) */
static void html_by_rank(const struct page *pg)
{
	const json_t *arm, *res, *c;
	size_t i, r, k, nr = 0;
	int head = 0;

	json_array_foreach(pg->arms, i, arm)
		json_array_foreach(json_object_get(arm, "results"), r, res)
			nr = json_array_size(res) > nr ? json_array_size(res) : nr;
	if (nr < 2 || nr > 64)
		return;
	json_array_foreach(pg->arms, i, arm) {
		uint64_t lost[64] = { 0 }, exp[64] = { 0 }, rt[64] = { 0 };
		int has = 0;

		json_array_foreach(json_object_get(arm, "results"), r, res)
			json_array_foreach(res, k, c) {
				const json_t *hw = json_object_get(c, "hw_counters_delta");

				if (k >= nr)
					break;
				if (json_object_get(c, "pieces_expected")) {
					lost[k] += jr_u64(c, "lost_pieces");
					exp[k] += jr_u64(c, "pieces_expected");
					has = 1;
				}
				rt[k] += hwc_retrans(hw);
				has |= hw != NULL;
			}
		if (!has)
			continue;
		if (!head++) {
			fputs("<h2>By rank</h2>\n<table id=\"by_rank\"><tr><th>arm</th>", pg->f);
			for (k = 0; k < nr; k++)
				fprintf(pg->f, "<th>rank %zu lost</th><th>rank %zu retransmission events"
					       "</th>", k, k);
			fputs("</tr>\n", pg->f);
		}
		fputs("<tr><td>", pg->f);
		html_escape(pg->f, jr_str(arm, "name"));
		fputs("</td>", pg->f);
		for (k = 0; k < nr; k++) {
			if (exp[k])
				fprintf(pg->f, "<td>%.3g%% (%llu of %llu)</td>", 100.0 * (double)lost[k] /
					(double)exp[k], (unsigned long long)lost[k],
					(unsigned long long)exp[k]);
			else
				fputs("<td>-</td>", pg->f);
			fprintf(pg->f, "<td>%llu</td>", (unsigned long long)rt[k]);
		}
		fputs("</tr>\n", pg->f);
	}
	if (head)
		fputs("</table>\n<p class=\"note\">lost: pieces the rank missed, of those it expected; "
		      "retransmission events: rxe's completer_retry_err + rcvd_seq_err on the rank's "
		      "device.</p>\n", pg->f);
}

static void html_faults(const struct page *pg)
{
	const json_t *fl, *r;
	size_t i, k;

	fputs("<h2>Fault rules</h2>\n<table id=\"faults\"><tr><th>name</th><th>rule</th><th>dir</th>"
	      "<th>start s</th><th>duration s</th><th>nodes</th><th>matched</th><th>dropped</th></tr>\n",
	      pg->f);
	json_array_foreach(json_object_get(pg->rep, "faults"), i, fl) {
		uint64_t matched = 0, dropped = 0;
		char esc[64];

		json_array_foreach(json_object_get(fl, "rules"), k, r) {
			matched += jr_u64(json_object_get(r, "counters"), "matched");
			dropped += jr_u64(json_object_get(r, "counters"), "dropped");
		}
		fputs("<tr><td>", pg->f);
		html_escape(pg->f, jr_str(fl, "name"));
		fputs("</td><td>", pg->f);
		html_escape(pg->f, jr_str(fl, "rule"));
		fprintf(pg->f, "</td><td>%s</td><td>%.1f</td><td>%.1f</td><td>%zu</td><td>%llu</td>"
			       "<td>%llu</td></tr>\n",
			html_esc(jr_str(fl, "dir"), esc, sizeof(esc)), jr_real(fl, "start_ns") / 1e9, jr_real(fl, "duration_ns") / 1e9,
			json_array_size(json_object_get(fl, "rules")), (unsigned long long)matched,
			(unsigned long long)dropped);
	}
	fputs("</table>\n<h2>Profile</h2>\n<pre>", pg->f);
	html_escape(pg->f, jr_str(json_object_get(pg->rep, "profile"), "text"));
	fputs("</pre>\n<script>", pg->f);
	fputs(rtb_asset_dygraph_js, pg->f);
	fputs("</script>\n<script>", pg->f);
	fputs(rtb_asset_charts_js, pg->f);
	fputs("</script>\n</body></html>\n", pg->f);
}

int report_html(const json_t *rep, FILE *f)
{
	struct page pg = { .f = f, .rep = rep, .arms = json_object_get(rep, "arms"),
			   .t0 = json_integer_value(json_object_get(rep, "t0_node_ns")),
			   .ms = report_measure(rep), .cap = 4096 };

	pg.x = malloc(pg.cap * sizeof(double));
	pg.y = malloc(pg.cap * sizeof(double));
	if (!pg.x || !pg.y) {
		free(pg.x);
		free(pg.y);
		return -ENOMEM;
	}
	html_head(&pg);
	html_summary(&pg);
	html_arm_ci(&pg);
	report_html_roles(rep, f);
	report_html_expectations(rep, f);
	plot_cdfs(&pg);
	plot_timeline(&pg);
	plot_over_time(&pg, "loss", "Data lost per 250 ms interval (lossy modes; rc retransmits "
		       "instead)", "lost", "% of pieces", Q_LOST);
	plot_over_time(&pg, "retrans_time", "NIC retransmission events per 250 ms interval",
		       "retransmission events", "", Q_RETRANS);
	plot_retrans_bars(&pg);
	if (pg.ms == MEASURE_TRAIN)
		plot_training(&pg);
	html_by_rank(&pg);
	html_faults(&pg);
	free(pg.x);
	free(pg.y);
	return ferror(f) ? -EIO : 0;
}
