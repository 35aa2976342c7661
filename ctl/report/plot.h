/* SPDX-License-Identifier: MIT */
/*
 * The SVG plot kit of report.html: a frame with ticks and labels, lines
 * (one per arm, in the arm's colour), CDFs from histograms, quantities of
 * the 250 ms intervals over time. Inside the report room only.
 */
#ifndef RTB_CTL_REPORT_PLOT_H
#define RTB_CTL_REPORT_PLOT_H

#include <stdio.h>
#include <jansson.h>
#include "ctl/report/report.h"

extern const char *const plot_colors[];	/* 5, by arm index */

struct plot {
	FILE *f;
	double x0, x1, y0, y1;
	int logx, logy;
	int w, h, ml, mr, mt, mb;
};

double plot_tx(const struct plot *p, double x);
double plot_ty(const struct plot *p, double y);
void plot_begin(struct plot *p, FILE *f, const char *id, const char *title, const char *xl,
		const char *yl);
/* one arm's line; step: a staircase (CDF); gap > 0: a new stroke where x
 * jumps by more than gap (arms take turns: no line across another's turn) */
void plot_series(struct plot *p, const double *x, const double *y, size_t n, int k,
		 const char *name, int step, double gap);
void plot_end(struct plot *p);
/* the latency CDF of one arm from its histogram: (value ms, fraction <= value) */
size_t cdf_points(const struct hist *h, double *x, double *y, size_t max);
void html_escape(FILE *f, const char *s);
/* s escaped for HTML text and attributes into buf (cut short to fit) */
const char *html_esc(const char *s, char *buf, size_t len);

/* one quantity of a 250 ms interval */
enum ival_q { Q_P50, Q_MAX, Q_LOST, Q_RETRANS };
/* 0 when the interval does not have it */
int ival_value(const json_t *e, enum ival_q q, double *v);
/* an arm's (seconds since t0, value) points */
size_t ival_points(const json_t *arm, json_int_t t0, enum ival_q q, double *x, double *y,
		   size_t cap);
/* a quantity over time, one line per arm that has it */
void time_plot(FILE *f, const json_t *arms, json_int_t t0, const char *id, const char *title,
	       const char *ylabel, enum ival_q q, double ymin, double *x, double *y, size_t cap);

#endif
