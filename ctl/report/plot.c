// SPDX-License-Identifier: MIT
/* The SVG plot kit of report.html (see plot.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ctl/report/plot.h"

const char *const plot_colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e" };

double plot_tx(const struct plot *p, double x)
{
	double a = p->logx ? log10(x) : x, b0 = p->logx ? log10(p->x0) : p->x0,
	       b1 = p->logx ? log10(p->x1) : p->x1;

	return p->ml + (b1 > b0 ? (a - b0) / (b1 - b0) : 0) * (p->w - p->ml - p->mr);
}

double plot_ty(const struct plot *p, double y)
{
	double a = p->logy ? log10(y) : y, b0 = p->logy ? log10(p->y0) : p->y0,
	       b1 = p->logy ? log10(p->y1) : p->y1;

	return p->h - p->mb - (b1 > b0 ? (a - b0) / (b1 - b0) : 0) * (p->h - p->mt - p->mb);
}

void plot_begin(struct plot *p, FILE *f, const char *id, const char *title, const char *xl,
		       const char *yl)
{
	int i;

	p->f = f;
	p->w = 720;
	p->h = 320;
	p->ml = 70;
	p->mr = 150;
	p->mt = 30;
	p->mb = 45;
	if (p->x1 <= p->x0)
		p->x1 = p->x0 + 1;
	if (p->y1 <= p->y0)
		p->y1 = p->y0 + 1;
	fprintf(f, "<figure><svg class=\"plot\" id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
		   "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n"
		   "<text x=\"%d\" y=\"18\" class=\"title\">%s</text>\n",
		id, p->w, p->h, p->w, p->h, title, p->ml, title);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n", p->ml, p->mt,
		p->w - p->ml - p->mr, p->h - p->mt - p->mb);
	for (i = 0; i <= 4; i++) {	/* ticks */
		double fx = (double)i / 4, vx, vy;
		double X, Y;

		vx = p->logx ? pow(10, log10(p->x0) + fx * (log10(p->x1) - log10(p->x0))) :
			       p->x0 + fx * (p->x1 - p->x0);
		vy = p->logy ? pow(10, log10(p->y0) + fx * (log10(p->y1) - log10(p->y0))) :
			       p->y0 + fx * (p->y1 - p->y0);
		X = plot_tx(p, vx);
		Y = plot_ty(p, vy);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>"
			   "<text x=\"%.1f\" y=\"%d\" class=\"tick\" text-anchor=\"middle\">%.3g</text>\n",
			X, p->mt, X, p->h - p->mb, X, p->h - p->mb + 15, vx);
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/>"
			   "<text x=\"%d\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%.3g</text>\n",
			p->ml, Y, p->w - p->mr, Y, p->ml - 5, Y + 4, vy);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"middle\">%s</text>\n",
		(p->ml + p->w - p->mr) / 2, p->h - 8, xl);
	fprintf(f, "<text x=\"14\" y=\"%d\" class=\"label\" text-anchor=\"middle\" "
		   "transform=\"rotate(-90 14 %d)\">%s</text>\n", p->h / 2, p->h / 2, yl);
}

/* one arm's line; step: a staircase (CDF); gap > 0: a new stroke where x
 * jumps by more than gap (arms take turns: no line across another's turn) */
void plot_series(struct plot *p, const double *x, const double *y, size_t n, int k,
			const char *name, int step, double gap)
{
	size_t i;
	char esc[256];

	name = html_esc(name, esc, sizeof(esc));
	fprintf(p->f, "<path class=\"series\" data-arm=\"%s\" fill=\"none\" stroke=\"%s\" "
		      "stroke-width=\"2\" d=\"", name, plot_colors[k % 5]);
	for (i = 0; i < n; i++) {
		int move = !i || (gap > 0 && x[i] - x[i - 1] > gap);

		if (step && !move)
			fprintf(p->f, "L%.1f,%.1f ", plot_tx(p, x[i]), plot_ty(p, y[i - 1]));
		fprintf(p->f, "%c%.1f,%.1f ", move ? 'M' : 'L', plot_tx(p, x[i]), plot_ty(p, y[i]));
	}
	fprintf(p->f, "\"/>\n<text x=\"%d\" y=\"%d\" fill=\"%s\" class=\"legend\">%s</text>\n",
		p->w - p->mr + 10, p->mt + 15 + 16 * k, plot_colors[k % 5], name);
}

void plot_end(struct plot *p)
{
	fprintf(p->f, "</svg></figure>\n");
}

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

/* an arm's (seconds since t0, value) points */
size_t ival_points(const json_t *arm, json_int_t t0, enum ival_q q, double *x, double *y,
			  size_t cap)
{
	const json_t *e;
	size_t k, n = 0;

	json_array_foreach(json_object_get(arm, "intervals"), k, e) {
		if (n >= cap || !ival_value(e, q, &y[n]))
			continue;
		x[n++] = (double)(json_integer_value(json_object_get(e, "t_ns")) - t0) / 1e9;
	}
	return n;
}

/* a quantity over time, one line per arm that has it */
void time_plot(FILE *f, const json_t *arms, json_int_t t0, const char *id, const char *title,
		      const char *ylabel, enum ival_q q, double ymin, double *x, double *y, size_t cap)
{
	struct plot p;
	const json_t *arm;
	size_t i, k, n;

	memset(&p, 0, sizeof(p));
	p.x1 = 1;
	p.y1 = ymin;
	json_array_foreach(arms, i, arm) {
		n = ival_points(arm, t0, q, x, y, cap);
		for (k = 0; k < n; k++) {
			p.x1 = x[k] > p.x1 ? x[k] : p.x1;
			p.y1 = y[k] > p.y1 ? y[k] : p.y1;
		}
	}
	p.y1 *= 1.1;
	plot_begin(&p, f, id, title, "time since the run's start [s]", ylabel);
	json_array_foreach(arms, i, arm) {
		n = ival_points(arm, t0, q, x, y, cap);
		if (n)
			plot_series(&p, x, y, n, (int)i, json_string_value(json_object_get(arm, "name")),
				    0, 1.0);
	}
	plot_end(&p);
}

