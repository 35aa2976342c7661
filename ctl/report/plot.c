// SPDX-License-Identifier: MIT
/* What report.html's charts are made of (see plot.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ctl/report/plot.h"

const char *const plot_colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e" };

/* the latency CDF of one arm from its histogram: (value, fraction <= value) */
size_t cdf_points(const struct hist *h, double *x, double *y, size_t max)
{
	uint64_t seen = 0;
	size_t n = 0;
	unsigned int i;

	for (i = 0; i < HIST_NBUCKETS && n < max; i++) {
		if (!h->counts[i])
			continue;
		seen += h->counts[i];
		x[n] = (double)(hist_bucket_hi(i) < h->max ? hist_bucket_hi(i) : h->max) / 1e6;
		if (x[n] < (double)h->min / 1e6)
			x[n] = (double)h->min / 1e6;
		y[n++] = (double)seen / (double)h->count;
	}
	return n;
}

void html_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else if (*s == '\'')
			fputs("&#39;", f);
		else
			fputc(*s, f);
	}
}

const char *html_esc(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (; s && *s && n + 7 < len; s++) {
		const char *e = *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;" :
				*s == '"' ? "&quot;" : *s == '\'' ? "&#39;" : NULL;

		if (e)
			n += (size_t)snprintf(buf + n, len - n, "%s", e);
		else
			buf[n++] = *s;
	}
	buf[n < len ? n : len - 1] = 0;
	return buf;
}

/* one quantity of a 250 ms interval; 0 when the interval does not have it */
int ival_value(const json_t *e, enum ival_q q, double *v)
{
	double xp;

	switch (q) {
	case Q_P50:
		*v = jr_real(e, "p50_ns") / 1e6;
		return 1;
	case Q_MAX:
		*v = jr_real(e, "max_ns") / 1e6;
		return 1;
	case Q_LOST:	/* % of pieces */
		if (!json_object_get(e, "pieces_expected"))
			return 0;
		xp = jr_real(e, "pieces_expected");
		*v = xp > 0 ? 100 * jr_real(e, "lost_pieces") / xp : 0;
		return 1;
	default:
		if (!json_object_get(e, "retrans"))
			return 0;
		*v = jr_real(e, "retrans");
		return 1;
	}
}

/* (seconds since t0, value) points of an array of intervals: an arm's
 * "intervals", or one rank's of its "rank_intervals" */
size_t ival_points(const json_t *ivals, json_int_t t0, enum ival_q q, double *x, double *y,
		   size_t cap)
{
	const json_t *e;
	size_t k, n = 0;

	json_array_foreach(ivals, k, e) {
		if (n >= cap || !ival_value(e, q, &y[n]))
			continue;
		x[n++] = (double)(json_integer_value(json_object_get(e, "t_ns")) - t0) / 1e9;
	}
	return n;
}
