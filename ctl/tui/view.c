// SPDX-License-Identifier: MIT
/*
 * Drawing the model (tui.h): arms side by side (their rows from the
 * report's metric table), the injector's rules, the nodes, the events, a
 * key bar. Reads the model under its lock; changes nothing but its cache of
 * the ratios between arms (model_vs_first).
 */
#include <ctype.h>
#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctl/tui/tui.h"
#include "lib/log.h"

const char *const tui_view_names[] = { "latency", "throughput", "training" };

/* --- drawing */

static void attr(struct tui *t, int pair, int on)
{
	int a = t->color ? COLOR_PAIR(pair) : (pair == C_SEL ? A_REVERSE : A_BOLD);

	if (pair == C_HEAD || pair == C_TITLE)
		a |= A_BOLD;
	if (on)
		attron(a);
	else
		attroff(a);
}

/* plain ASCII frames: they read the same in every terminal, font and
 * screen capture (line-drawing characters come out as letters there) */
static void box_at(struct tui *t, int y, int x, int h, int w, const char *title, int focus)
{
	int i;

	if (focus)
		attr(t, C_HEAD, 1);
	mvaddch(y, x, '+');
	mvhline(y, x + 1, '-', w - 2);
	mvaddch(y, x + w - 1, '+');
	for (i = 1; i < h - 1; i++) {
		mvaddch(y + i, x, '|');
		mvaddch(y + i, x + w - 1, '|');
	}
	mvaddch(y + h - 1, x, '+');
	mvhline(y + h - 1, x + 1, '-', w - 2);
	mvaddch(y + h - 1, x + w - 1, '+');
	mvprintw(y, x + 2, " %.*s ", w - 6, title);
	if (focus)
		attr(t, C_HEAD, 0);
}

/* the last width values of v as a sparkline into out (room for 3 bytes a
 * value and a NUL): Unicode's eight block heights where the locale is
 * UTF-8, else ten ASCII levels. zero: the scale starts at 0 (losses), not
 * at the smallest value (step times) */
static void spark(const struct tui *t, const double *v, int n, int width, int zero, char *out)
{
	static const char lv[] = " .:-=+*#%@";
	static const char *const blk[] = { "\u2581", "\u2582", "\u2583", "\u2584",
					   "\u2585", "\u2586", "\u2587", "\u2588" };
	double lo = zero ? 0 : 1e300, hi = 0;
	int i, from = n > width ? n - width : 0, k;

	for (i = from; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	for (i = from; i < n; i++) {
		if (t->utf8) {
			k = hi > lo ? (int)((v[i] - lo) / (hi - lo) * 7 + 0.5) : 0;
			memcpy(out, blk[k], 3);
			out += 3;
		} else {
			*out++ = lv[hi > lo ? (int)((v[i] - lo) / (hi - lo) * 9 + 0.5) : 1];
		}
	}
	*out = 0;
}

/* a bar of frac (0..1) of width cells: whole and eighth blocks in UTF-8,
 * '#' in ASCII */
static void bar(const struct tui *t, double frac, int width, char *out)
{
	static const char *const part[] = { "", "\u258f", "\u258e", "\u258d", "\u258c",
					    "\u258b", "\u258a", "\u2589" };
	int eighths = (int)(frac * width * 8 + 0.5), i;

	if (eighths > width * 8)
		eighths = width * 8;
	for (i = 0; i < eighths / 8; i++) {
		if (t->utf8) {
			memcpy(out, "\u2588", 3);
			out += 3;
		} else {
			*out++ = '#';
		}
	}
	if (t->utf8 && eighths % 8) {
		memcpy(out, part[eighths % 8], 3);
		out += 3;
	}
	*out = 0;
}

/* does some arm have a tool's figure m (exec: its roles' parse:)? */
static int some_arm_has(const struct model *md, const struct metric *m)
{
	for (int a = 0; a < md->narms; a++)
		if (md->arm[a].tools && jr_path(md->arm[a].tools, m->path))
			return 1;
	return 0;
}

/* the metric table's rows of this view, most telling first; a tool's
 * figures only once an arm has them */
static int view_rows(const struct model *md, int view, const struct metric **rows, int max)
{
	static const unsigned bits[V_N] = { MW_TUI_LAT, MW_TUI_THR, MW_TUI_TRN };
	const struct metric *m;
	int n = 0, i, j;

	for (m = report_metrics; m->name && n < max; m++)
		if ((m->where & bits[view]) && m->tui_order && (!m->if_any || some_arm_has(md, m)))
			rows[n++] = m;
	for (i = 1; i < n; i++)	/* insertion sort by tui_order: a few dozen rows */
		for (j = i; j > 0 && rows[j]->tui_order < rows[j - 1]->tui_order; j--) {
			const struct metric *x = rows[j];

			rows[j] = rows[j - 1];
			rows[j - 1] = x;
		}
	return n;
}

static void draw_arms(struct tui *t, int y, int x, int h, int w)
{
	struct model *m = t->m;
	int cw = (w - 18) / (m->narms ? m->narms : 1), a, row = y + 1, nrows, r, ntrend;
	const struct metric *rows[64];
	json_t *arm[PROF_MAX_ARMS];

	if (cw > 24)
		cw = 24;
	model_vs_first(m);
	box_at(t, y, x, h, w, t->view == V_LATENCY ? "Arms: step time (finished rounds; now = last 250 ms)" :
		   t->view == V_THROUGHPUT ? "Arms: throughput" : "Arms: training", t->pane == P_ARMS);
	attr(t, C_HEAD, 1);
	mvprintw(row, x + 2, "%-15s", "arm");
	for (a = 0; a < m->narms; a++) {
		if (a == t->sel_arm && t->pane == P_ARMS)
			attr(t, C_SEL, 1);
		else if (t->color)
			attron(COLOR_PAIR(C_ARM0 + a));
		mvprintw(row, x + 17 + a * cw, "%*.*s", cw - 1, cw - 1, m->arm[a].name);
		if (a == t->sel_arm && t->pane == P_ARMS)
			attr(t, C_SEL, 0);
		else if (t->color)
			attroff(COLOR_PAIR(C_ARM0 + a));
		arm[a] = model_arm_json(m, a);
	}
	attr(t, C_HEAD, 0);
	row++;
	nrows = view_rows(m, t->view, rows, 64);
	/* the trend rows always (80x24 too): the metric rows give way, the least
	 * telling first */
	for (a = 0; a < m->narms && m->arm[a].nlspark == 0; a++)
		;
	ntrend = 1 + (a < m->narms && h >= 16);	/* 80x24: the p50 trend alone */
	for (r = 0; r < nrows && row < y + h - 1 - ntrend; r++, row++) {
		mvprintw(row, x + 2, "%-15s", rows[r]->name);
		for (a = 0; a < m->narms; a++) {
			char v[32];

			metric_cell(rows[r], arm[a], NULL, 0, v, sizeof(v));
			mvprintw(row, x + 17 + a * cw, "%*.*s", cw - 1, cw - 1, v);
		}
	}
	for (a = 0; a < m->narms; a++)
		json_decref(arm[a]);
	if (row < y + h - 1) {
		mvprintw(row, x + 2, "%-15s", "p50 trend");
		for (a = 0; a < m->narms; a++) {
			char s[200];

			spark(t, m->arm[a].spark, m->arm[a].nspark, cw - 2 < 60 ? cw - 2 : 60, 0, s);
			if (t->color)
				attron(COLOR_PAIR(C_ARM0 + a));
			/* right-aligned by cells, not bytes (a block is 3) */
			mvprintw(row, x + 17 + a * cw + (cw - 1) - (m->arm[a].nspark < cw - 2 ?
								     m->arm[a].nspark : cw - 2),
				 "%s", s);
			if (t->color)
				attroff(COLOR_PAIR(C_ARM0 + a));
		}
		row++;
	}
	/* the lossy arms' lost fraction per interval, from 0 */
	if (row < y + h - 1 && ntrend > 1) {
		mvprintw(row, x + 2, "%-15s", "loss trend");
		for (a = 0; a < m->narms; a++) {
			char s[200];
			int n = m->arm[a].nlspark < cw - 2 ? m->arm[a].nlspark : cw - 2;

			if (!m->arm[a].nlspark)
				continue;
			spark(t, m->arm[a].lspark, m->arm[a].nlspark, cw - 2, 1, s);
			if (t->color)
				attron(COLOR_PAIR(C_ARM0 + a));
			mvprintw(row, x + 17 + a * cw + (cw - 1) - n, "%s", s);
			if (t->color)
				attroff(COLOR_PAIR(C_ARM0 + a));
		}
	}
}

static void draw_faults(struct tui *t, int y, int x, int h, int w)
{
	struct model *m = t->m;
	int i, row = y + 1;

	/* wide: the counters as rates too (packets a second over the last poll) */
	int rates = w >= 100, rw = w - 44 - (rates ? 18 : 0);

	box_at(t, y, x, h, w, "Faults (rdma-inject rules, live)", t->pane == P_FAULTS);
	attr(t, C_HEAD, 1);
	mvprintw(row++, x + 2, "%-3s %-4s %-4s %-*.*s %9s %8s %6s", "id", "dev", "dir", rw, rw,
		 "rule", "matched", "dropped", "now%");
	if (rates)
		printw(" %8s %8s", "match/s", "drop/s");
	attr(t, C_HEAD, 0);
	for (i = 0; i < m->nrules && row < y + h - 1; i++, row++) {
		struct model_rule *r = &m->rule[i];
		int sel = t->pane == P_FAULTS && i == t->sel_rule;

		if (sel)
			attr(t, C_SEL, 1);
		mvprintw(row, x + 2, "%-3d %-4s %-4.4s %-*.*s %9llu %8llu %6.2f", r->id, r->dev, r->dir,
			 rw, rw, r->enabled ? r->rule : "(off)", (unsigned long long)r->matched,
			 (unsigned long long)r->dropped, 100 * r->drop_rate);
		if (rates)
			printw(" %8.0f %8.0f", r->matched_ps, r->dropped_ps);
		if (sel)
			attr(t, C_SEL, 0);
	}
	if (!m->nrules)
		mvprintw(row, x + 2, "no rules (:drop 1%% adds one)");
}

static void draw_nodes(struct tui *t, int y, int x, int h, int w)
{
	struct model *m = t->m;
	int i;

	box_at(t, y, x, h, w, "Nodes", 0);
	for (i = 0; i < m->nnodes && i < h - 2; i++) {
		if (!m->node[i].agent_ok)
			attr(t, C_WARN, 1);
		mvprintw(y + 1 + i, x + 2, "%-6.6s %-6.6s %-7.7s %s", m->node[i].name, m->node[i].dev,
			 m->node[i].state, m->node[i].agent_ok ? "agent ok" : "NO AGENT");
		if (!m->node[i].agent_ok)
			attr(t, C_WARN, 0);
	}
	(void)w;
}

/* the selected arm's step times over its finished rounds: log-spaced
 * buckets from its fastest to its slowest step, a bar each */
static void draw_hist(struct tui *t, int y, int x, int h, int w)
{
	struct model_arm *a = &t->m->arm[t->sel_arm < t->m->narms ? t->sel_arm : 0];
	const struct hist *hs = &a->acc.h;
	int rows = h - 2, i, bw = w - 26;
	uint64_t cnt[64] = { 0 }, top = 0;
	double lo, hi, ratio;
	char title[80], b[400];
	unsigned int k;

	snprintf(title, sizeof(title), "Step times: %s (finished rounds)", a->name);
	box_at(t, y, x, h, w, title, 0);
	if (!hs->count || rows < 2 || bw < 4) {
		mvprintw(y + 1, x + 2, "no finished round yet");
		return;
	}
	if (rows > 64)
		rows = 64;
	lo = (double)(hs->min ? hs->min : 1);
	hi = (double)hs->max + 1;
	ratio = hi > lo ? hi / lo : 2;
	for (k = 0; k < HIST_NBUCKETS; k++) {
		double v;

		if (!hs->counts[k])
			continue;
		v = (double)hist_bucket_lo(k);
		i = v <= lo ? 0 : (int)(log(v / lo) / log(ratio) * rows);
		i = i < 0 ? 0 : i >= rows ? rows - 1 : i;
		cnt[i] += hs->counts[k];
	}
	for (i = 0; i < rows; i++)
		top = cnt[i] > top ? cnt[i] : top;
	for (i = 0; i < rows; i++) {
		double from = lo * pow(ratio, (double)i / rows) / 1e6;

		bar(t, top ? (double)cnt[i] / (double)top : 0, bw, b);
		mvprintw(y + 1 + i, x + 2, "%9.2f ms %7llu ", from, (unsigned long long)cnt[i]);
		if (t->color)
			attron(COLOR_PAIR(C_ARM0 + (t->sel_arm < t->m->narms ? t->sel_arm : 0)));
		printw("%s", b);
		if (t->color)
			attroff(COLOR_PAIR(C_ARM0 + (t->sel_arm < t->m->narms ? t->sel_arm : 0)));
	}
}

static void draw_events(struct tui *t, int y, int x, int h, int w)
{
	struct model *m = t->m;
	int i, n = h - 2, first = m->nevents > n ? m->nevents - n : 0;

	box_at(t, y, x, h, w, "Events", t->pane == P_EVENTS);
	for (i = first; i < m->nevents; i++)
		mvprintw(y + 1 + i - first, x + 2, "%-*.*s", w - 4, w - 4, m->events[i % MODEL_EVENTS]);
}

static const char *const help_text[] = {
	"The profile's experiment, live; arms take turns (rounds).",
	"Arms pane: one column per arm. p50/p99/p99.9/max: step time over the",
	"  finished rounds (the report's numbers); now: the latest 250 ms interval;",
	"  lost: data a lossy arm gave up; retransmits: packets resent (the report",
	"  says where counted); L-inf/cosine: error of the result against the exact sum.",
	"  *: fewer steps than the percentile needs (p99: 100, p99.9: 1000 samples).",
	"Faults pane: the injector's rules, their counters, now%: drops per matched",
	"  packet since the last poll (1 s).",
	"  ? F1     this help (any key closes it)",
	"  Tab      next pane            Up/Down  select arm / rule",
	"  + -      selected rule: drop rate x2 / /2",
	"  space    selected rule on/off",
	"  f        2 s link flap toward node1",
	"  p        pause after the arm in flight / resume",
	"  r        reset the selected arm's numbers",
	"  v        view: latency / throughput / training",
	"  :        command line:",
	"             :drop 2% [all|nodeN] [ingress|egress]   set or add drop rules",
	"             :delay 2ms [nodeN]   :flap 2s [nodeN]   :on ID   :off ID",
	"             :set ID RULE   e.g. :set 1 opcode data drop gemodel 1% 10%",
	"             :crash|:freeze|:thaw|:reboot|:nic-reset nodeN   :port nodeN down|up",
	"               (a kernel a node: the node itself; the report's node_events)",
	"             :pause  :resume  :view latency|throughput|training  :quit",
	"  q F10    quit: stop the arm in flight, remove rules, write the report",
	NULL,
};

void tui_draw(struct tui *t)
{
	int H = LINES, W = COLS, i, arms_h, mid_h;
	char st[200];

	erase();
	if (H < MIN_H || W < MIN_W) {
		mvprintw(0, 0, "terminal too small: %dx%d, need at least %dx%d", W, H, MIN_W, MIN_H);
		mvprintw(1, 0, "(q quits)");
		refresh();
		return;
	}
	pthread_mutex_lock(&t->m->lock);
	attr(t, C_TITLE, 1);
	mvhline(0, 0, ' ', W);
	mvprintw(0, 0, " rdmactl tui%s: %s | %s | %.0f s%s", t->attach ? " --attach" : "",
		 t->m->name, t->m->status,
		 t->attach ? t->m->elapsed : rtb_now_s() - t->m->t_start,
		 t->m->paused ? " | PAUSED (p resumes)" :
		 t->attach && t->m->done ? " | the run ended (q quits)" :
		 t->attach ? " | attached: q detaches, the run goes on" :
		 t->worker_done ? " | finished (q quits)" : "");
	attr(t, C_TITLE, 0);
	{
		/* 80x24: arms, faults and a line of events, nodes on one line;
		 * wide: nodes in their own pane; tall: more events */
		int small = W < 120, avail = H - 2 - small;
		const struct metric *vr[64];
		/* the arms pane as tall as its rows, two trend rows and the frame */
		int ev_h = H >= 40 ? 10 : 3, want = view_rows(t->m, t->view, vr, 64) + 5;

		mid_h = H >= 40 ? 10 : 6;
		arms_h = avail - mid_h - ev_h;
		if (arms_h > want) {
			ev_h += arms_h - want;
			arms_h = want;
		}
		draw_arms(t, 1, 0, arms_h, W);
		draw_faults(t, 1 + arms_h, 0, mid_h, small ? W : W - 40);
		if (!small) {
			draw_nodes(t, 1 + arms_h, W - 40, mid_h, 40);
		} else {
			move(H - 2, 0);
			for (i = 0; i < t->m->nnodes; i++) {
				if (!t->m->node[i].agent_ok)
					attr(t, C_WARN, 1);
				printw("%s%s %s %s", i ? " | " : " nodes: ", t->m->node[i].name,
				       t->m->node[i].state, t->m->node[i].agent_ok ? "ok" : "NO AGENT");
				if (!t->m->node[i].agent_ok)
					attr(t, C_WARN, 0);
			}
		}
		/* tall and wide: the selected arm's histogram beside the events */
		if (H >= 40 && W >= 160) {
			draw_events(t, 1 + arms_h + mid_h, 0, ev_h, W - 70);
			draw_hist(t, 1 + arms_h + mid_h, W - 70, ev_h, 70);
		} else {
			draw_events(t, 1 + arms_h + mid_h, 0, ev_h, W);
		}
	}
	pthread_mutex_unlock(&t->m->lock);
	if (t->incmd) {
		mvprintw(H - 1, 0, ":%-*s", W - 2, t->cmd);
	} else {
		attr(t, C_HEAD, 1);
		mvprintw(H - 1, 0, "%-*.*s", W, W,
			 " ?:help Tab:pane +/-:drop rate space:on/off f:flap p:pause v:view ::cmd q:quit");
		attr(t, C_HEAD, 0);
		if (t->msg[0] && W > 90)
			mvprintw(H - 1, 80, "%.*s", W - 81, t->msg);
	}
	if (t->help) {
		int hw = 78, hh = 0, y0, x0;

		while (help_text[hh])
			hh++;
		y0 = (H - hh - 2) / 2 > 0 ? (H - hh - 2) / 2 : 0;
		x0 = (W - hw) / 2;
		for (i = 0; i < hh + 2 && y0 + i < H; i++)
			mvhline(y0 + i, x0, ' ', hw);
		box_at(t, y0, x0, hh + 2 < H ? hh + 2 : H, hw, "Help", 1);
		for (i = 0; i < hh && y0 + 1 + i < H - 1; i++)
			mvprintw(y0 + 1 + i, x0 + 2, "%.*s", hw - 4, help_text[i]);
	}
	(void)st;
	refresh();
}


void tui_curses_start(struct tui *t)
{
	/* the user's locale: ncursesw then writes UTF-8; blocks only there */
	setlocale(LC_ALL, "");
	t->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	initscr();
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	timeout(250);
	t->color = has_colors() && !getenv("NO_COLOR");
	if (t->color) {
		start_color();
		use_default_colors();
		init_pair(C_TITLE, COLOR_BLACK, COLOR_CYAN);
		init_pair(C_HEAD, COLOR_CYAN, -1);
		init_pair(C_SEL, COLOR_BLACK, COLOR_YELLOW);
		init_pair(C_WARN, COLOR_RED, -1);
		init_pair(C_ARM0, COLOR_BLUE, -1);
		init_pair(C_ARM0 + 1, COLOR_RED, -1);
		init_pair(C_ARM0 + 2, COLOR_GREEN, -1);
		init_pair(C_ARM0 + 3, COLOR_MAGENTA, -1);
	}
}

/* the published model (rdmactl run / tui write it) into ours; 0 or -errno */
