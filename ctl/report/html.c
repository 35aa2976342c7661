// SPDX-License-Identifier: MIT
/*
 * report.html: one self-contained page (inline SVG, no scripts): the
 * summary table from the metric table, latency CDFs, step time over time
 * with the fault windows shaded, loss and retransmissions over time and
 * per arm, training curves, the fault rules and the profile as run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/report/plot.h"

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
	fputs(" - rdma-testbed report</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:2em}\n"
	      "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #bbb;padding:2px 6px;"
	      "text-align:right}th{background:#eee}\n"
	      ".frame{fill:none;stroke:#444}.grid{stroke:#ddd}.tick{font-size:11px}"
	      ".label{font-size:12px}.title{font-size:14px;font-weight:bold}"
	      ".legend{font-size:12px}.fault{fill:#f4a;fill-opacity:0.15}\n"
	      "pre{background:#f6f6f6;padding:1em;overflow:auto}\n.note{color:#555;font-size:90%}\n</style></head><body>\n<h1>", f);
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
	if (head)
		fprintf(pg->f, "</table>\n<p class=\"note\">earlier arm / later arm, and earlier - "
			       "later: %s</p>\n",
			jr_str(json_object_get(json_array_get(pg->arms, 1), "vs_first_arm"), "method") ?:
				"percentile bootstrap over the two arms' samples");
}

static void html_summary(const struct page *pg)
{
	const struct metric *m;
	const json_t *arm;
	char cell[64];
	size_t i;

	fputs("<table id=\"summary\"><tr><th>arm</th><th>mode</th>", pg->f);
	for (m = report_metrics; m->name; m++)
		if (metric_shown(m, MW_HTML, pg->ms)) {
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
			if (!metric_shown(m, MW_HTML, pg->ms))
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

/* 1. latency CDFs */
static void plot_cdfs(const struct page *pg)
{
	const json_t *arm;
	struct plot p;
	size_t i, n;

	memset(&p, 0, sizeof(p));
	p.logx = 1;
	p.x0 = 1e18;
	p.y1 = 1;
	json_array_foreach(pg->arms, i, arm) {
		const json_t *pc = json_object_get(arm, "percentiles");

		if (!json_integer_value(json_object_get(arm, "count")))
			continue;
		if (jr_real(pc, "min_ns") / 1e6 < p.x0)
			p.x0 = jr_real(pc, "min_ns") / 1e6;
		if (jr_real(pc, "max_ns") / 1e6 > p.x1)
			p.x1 = jr_real(pc, "max_ns") / 1e6;
	}
	if (p.x0 > p.x1 || p.x0 <= 0)
		p.x0 = p.x1 > 0 ? p.x1 / 10 : 0.001;
	p.x0 /= 1.2;
	p.x1 *= 1.2;
	plot_begin(&p, pg->f, "cdf", pg->ms == MEASURE_TRAIN ? "Training step time CDF" :
		   pg->ms == MEASURE_OPS ? "Operation latency CDF" : "Step time CDF", "time [ms] (log)",
		   pg->ms == MEASURE_OPS ? "fraction of operations <= time" :
		   "fraction of steps <= time");
	json_array_foreach(pg->arms, i, arm) {
		struct hist h;

		if (hist_from_json(&h, json_object_get(arm, "time_hist_ns")) || !h.count)
			continue;
		n = cdf_points(&h, pg->x, pg->y, pg->cap);
		plot_series(&p, pg->x, pg->y, n, (int)i, jr_str(arm, "name"), 1, 0);
	}
	plot_end(&p);
}

/* the profile's fault windows as shaded rectangles of plot p */
static void fault_windows(const struct page *pg, const struct plot *p)
{
	const json_t *fl;
	size_t i;

	json_array_foreach(json_object_get(pg->rep, "faults"), i, fl) {
		double a = jr_real(fl, "start_ns") / 1e9, d = jr_real(fl, "duration_ns") / 1e9;
		double b = d > 0 ? a + d : p->x1;

		char esc[256];

		fprintf(pg->f, "<rect class=\"fault\" data-fault=\"%s\" x=\"%.1f\" y=\"%d\" "
			       "width=\"%.1f\" height=\"%d\"><title>",
			html_esc(jr_str(fl, "name"), esc, sizeof(esc)), plot_tx(p, a), p->mt,
			plot_tx(p, b > p->x1 ? p->x1 : b) - plot_tx(p, a), p->h - p->mt - p->mb);
		html_escape(pg->f, jr_str(fl, "rule"));
		fputs("</title></rect>\n", pg->f);
	}
}

/* 2. step time over time, fault windows shaded */
static void plot_timeline(const struct page *pg)
{
	const json_t *arm, *e;
	struct plot p;
	size_t i, k, n;
	int ops = pg->ms == MEASURE_OPS;

	memset(&p, 0, sizeof(p));
	json_array_foreach(pg->arms, i, arm)
		json_array_foreach(json_object_get(arm, "intervals"), k, e) {
			double t = (double)(json_integer_value(json_object_get(e, "t_ns")) - pg->t0) / 1e9;
			double v = jr_real(e, "max_ns") / 1e6;

			p.x1 = t > p.x1 ? t : p.x1;
			p.y1 = v > p.y1 ? v : p.y1;
		}
	p.y1 *= 1.1;
	plot_begin(&p, pg->f, "timeline", ops ? "Operation latency over time (per 250 ms interval: "
		   "p50 solid, max dotted)" : "Step time over time (per 250 ms interval: p50 solid, "
		   "max dotted)", "time since the run's start [s]", ops ? "latency [ms]" :
		   "step time [ms]");
	fault_windows(pg, &p);
	json_array_foreach(pg->arms, i, arm) {
		n = ival_points(arm, pg->t0, Q_P50, pg->x, pg->y, pg->cap);
		plot_series(&p, pg->x, pg->y, n, (int)i, jr_str(arm, "name"), 0, 1.0);
		n = ival_points(arm, pg->t0, Q_MAX, pg->x, pg->y, pg->cap);
		fprintf(pg->f, "<path class=\"series-max\" fill=\"none\" stroke=\"%s\" "
			       "stroke-dasharray=\"2,3\" d=\"", plot_colors[i % 5]);
		for (k = 0; k < n; k++)
			fprintf(pg->f, "%c%.1f,%.1f ", !k || pg->x[k] - pg->x[k - 1] > 1.0 ? 'M' : 'L',
				plot_tx(&p, pg->x[k]), plot_ty(&p, pg->y[k]));
		fputs("\"/>\n", pg->f);
	}
	plot_end(&p);
}

/* 3. retransmissions per arm, as bars */
static void plot_retrans_bars(const struct page *pg)
{
	const json_t *arm;
	struct plot p;
	size_t i;

	memset(&p, 0, sizeof(p));
	p.x0 = 0;
	p.x1 = (double)json_array_size(pg->arms);
	json_array_foreach(pg->arms, i, arm)
		if (jr_real(arm, "retransmissions") > p.y1)
			p.y1 = jr_real(arm, "retransmissions");
	p.y1 = p.y1 * 1.1 + 1;
	{	/* what the arms' figures count (the first arm's source; a differing arm says so) */
		const char *src = jr_str(json_array_get(pg->arms, 0), "retransmissions_source");
		char title[200];

		snprintf(title, sizeof(title), "Retransmissions per arm: %s", arm_retrans_what(src, 1));
		plot_begin(&p, pg->f, "retrans", title, "arm",
			   src && *src && strcmp(src, "rxe_events") ? "packets resent" :
								      "retransmission events");
	}
	json_array_foreach(pg->arms, i, arm) {
		double v = jr_real(arm, "retransmissions"), x = (double)i;
		char esc[256];
		const char *nm = html_esc(jr_str(arm, "name"), esc, sizeof(esc));
		const char *src = jr_str(arm, "retransmissions_source");
		int other = strcmp(src ?: "", jr_str(json_array_get(pg->arms, 0),
						      "retransmissions_source") ?: "") != 0;

		fprintf(pg->f, "<rect class=\"bar\" data-arm=\"%s\" x=\"%.1f\" y=\"%.1f\" "
			       "width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/><text x=\"%.1f\" "
			       "y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%s: %.0f%s%s%s</text>\n",
			nm, plot_tx(&p, x + 0.2), plot_ty(&p, v),
			plot_tx(&p, x + 0.8) - plot_tx(&p, x + 0.2), plot_ty(&p, 0) - plot_ty(&p, v),
			plot_colors[i % 5], plot_tx(&p, x + 0.5), plot_ty(&p, v) - 4, nm, v,
			other ? " (" : "", other ? src ?: "?" : "", other ? ")" : "");
	}
	plot_end(&p);
}

/* 4. training curves */
static void plot_training(const struct page *pg)
{
	const json_t *arm, *e;
	struct plot p;
	size_t i, k, n;

	memset(&p, 0, sizeof(p));
	p.y1 = 1;
	json_array_foreach(pg->arms, i, arm)
		json_array_foreach(json_object_get(arm, "curve"), k, e) {
			double t = jr_real(e, "time_ns") / 1e9;

			p.x1 = t > p.x1 ? t : p.x1;
		}
	plot_begin(&p, pg->f, "training", "Held-out accuracy over training time",
		   "training time [s] (evaluation excluded)", "accuracy");
	json_array_foreach(pg->arms, i, arm) {
		n = 0;
		json_array_foreach(json_object_get(arm, "curve"), k, e) {
			if (n >= pg->cap)
				break;
			pg->x[n] = jr_real(e, "time_ns") / 1e9;
			pg->y[n++] = jr_real(e, "accuracy");
		}
		plot_series(&p, pg->x, pg->y, n, (int)i, jr_str(arm, "name"), 0, 0);
	}
	plot_end(&p);
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
	fputs("</pre>\n</body></html>\n", pg->f);
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
		return -1;
	}
	html_head(&pg);
	html_summary(&pg);
	report_html_roles(rep, f);
	report_html_expectations(rep, f);
	plot_cdfs(&pg);
	plot_timeline(&pg);
	time_plot(f, pg.arms, pg.t0, "loss", "Data lost per 250 ms interval (lossy modes; rc "
		  "retransmits instead)", "lost [% of pieces]", Q_LOST, 0.01, pg.x, pg.y, pg.cap);
	time_plot(f, pg.arms, pg.t0, "retrans_time", "NIC retransmissions per 250 ms interval "
		  "(rank 0's node)", "retransmission events", Q_RETRANS, 1, pg.x, pg.y, pg.cap);
	plot_retrans_bars(&pg);
	if (pg.ms == MEASURE_TRAIN)
		plot_training(&pg);
	html_faults(&pg);
	free(pg.x);
	free(pg.y);
	return ferror(f) ? -1 : 0;
}
