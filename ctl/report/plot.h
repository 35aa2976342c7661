/* SPDX-License-Identifier: MIT */
/*
 * What report.html's charts are made of: the arms' colours, CDFs from
 * histograms, quantities of the 250 ms intervals over time, HTML escaping,
 * and the inlined chart library and page style. Inside the report room
 * only.
 */
#ifndef RTB_CTL_REPORT_PLOT_H
#define RTB_CTL_REPORT_PLOT_H

#include <stdio.h>
#include <jansson.h>
#include "ctl/report/report.h"

extern const char *const plot_colors[];	/* 5, by arm index */

/* report.html's inlined script and style (assets.c), NUL-terminated */
extern const char rtb_asset_dygraph_js[], rtb_asset_dygraph_css[], rtb_asset_charts_js[],
	rtb_asset_charts_css[];

/* the latency CDF of one arm from its histogram: (value ms, fraction <= value) */
size_t cdf_points(const struct hist *h, double *x, double *y, size_t max);
void html_escape(FILE *f, const char *s);
/* s escaped for HTML text and attributes into buf (cut short to fit) */
const char *html_esc(const char *s, char *buf, size_t len);

/* one quantity of a 250 ms interval */
enum ival_q { Q_P50, Q_MAX, Q_LOST, Q_RETRANS };
/* 0 when the interval does not have it */
int ival_value(const json_t *e, enum ival_q q, double *v);
/* (seconds since t0, value) points of an array of intervals: an arm's
 * "intervals", or one rank's of its "rank_intervals" */
size_t ival_points(const json_t *ivals, json_int_t t0, enum ival_q q, double *x, double *y,
		   size_t cap);

#endif
