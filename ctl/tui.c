// SPDX-License-Identifier: MIT
/*
 * rdmactl tui PROFILE: the experiment of `rdmactl run`, watched and steered
 * live. A worker thread runs the arms (exp_measure) and fills the model;
 * this thread draws the model every 250 ms, polls the injector's counters
 * and the agents, and turns keys and `:` commands into rdma-inject calls
 * through its own control connections. q ends the run cleanly: the arm in
 * flight stops, the rules go, the (partial) report is written.
 */
#include <ctype.h>
#include <curses.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exp.h"
#include "model.h"
#include "report.h"
#include "../lib/log.h"

#define MIN_W 80
#define MIN_H 24

enum pane { P_ARMS, P_FAULTS, P_EVENTS, P_N };
enum view { V_LATENCY, V_THROUGHPUT, V_TRAINING, V_N };
static const char *const view_names[] = { "latency", "throughput", "training" };

struct tui {
	struct exp *e;
	struct model *m;
	struct agentc ctl[16];	/* our own connections, one per node */
	int nctl;
	int pane, view, sel_arm, sel_rule, help, color;
	char cmd[128];
	int cmdlen, incmd;
	char msg[160];
	int added[64], nadded;	/* rules we added: removed at the end */
	double polled, nodes_polled;
	int worker_done;
	int attach;		/* viewing another process's run (tui --attach) */
	json_t *stats;		/* attach: our latest rdma-inject stats */
	char live[PATH_MAX];
};

static void flash_msg(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void flash_msg(struct tui *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	model_event(t->m, "%s", t->msg);
}

/* rdma-inject ARGS... on node 0's agent (one injector state for the whole
 * testbed); its stdout in out, 0 on success */
static int inject(struct tui *t, json_t *args, int lease, char *out, size_t outlen)
{
	json_t *res = NULL;
	char err[256];
	int rc;

	if (agentc_call(&t->ctl[0], "inject", json_pack("{s:o,s:b}", "args", args, "lease", lease),
			&res, 30000, err, sizeof(err))) {
		snprintf(out, outlen, "%s", err);
		return -1;
	}
	rc = (int)json_integer_value(json_object_get(res, "rc"));
	snprintf(out, outlen, "%s",
		 json_string_value(json_object_get(res, rc ? "stderr" : "stdout")) ?: "");
	out[strcspn(out, "\n")] = 0;
	json_decref(res);
	return rc ? -1 : 0;
}

static json_t *words(const char *s)
{
	json_t *a = json_array();
	char buf[256], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
		json_array_append_new(a, json_string(tok));
	return a;
}

/* set ID to rule text (same slot, counters kept); 0 on success */
static int rule_set(struct tui *t, int id, const char *rule, char *out, size_t outlen)
{
	json_t *a = words(rule);

	json_array_insert_new(a, 0, json_sprintf("%d", id));
	json_array_insert_new(a, 0, json_string("set"));
	return inject(t, a, 0, out, outlen);
}

static void poll_rules(struct tui *t)
{
	json_t *res = NULL, *st;
	char err[256];

	if (agentc_call(&t->ctl[0], "inject", json_pack("{s:[ss]}", "args", "-j", "stats"), &res,
			30000, err, sizeof(err)))
		return;
	st = json_loads(json_string_value(json_object_get(res, "stdout")) ?: "", 0, NULL);
	if (st)
		model_rules(t->m, st);
	json_decref(t->stats);
	t->stats = st;
	json_decref(res);
}

static void poll_nodes(struct tui *t)
{
	int i;

	for (i = 0; i < t->nctl && i < 16; i++) {
		json_t *res = NULL;
		char err[256];
		int ok = !agentc_call(&t->ctl[i], "hello", NULL, &res, 3000, err, sizeof(err));

		pthread_mutex_lock(&t->m->lock);
		t->m->node[i].agent_ok = ok;
		if (ok) {
			snprintf(t->m->node[i].state, sizeof(t->m->node[i].state), "%s",
				 json_string_value(json_object_get(res, "state")) ?: "?");
			snprintf(t->m->node[i].dev, sizeof(t->m->node[i].dev), "%s",
				 json_string_value(json_object_get(res, "dev")) ?: "?");
		}
		pthread_mutex_unlock(&t->m->lock);
		if (!ok)
			model_event(t->m, "%s: agent not answering: %s", t->m->node[i].name, err);
		json_decref(res);
	}
}

/* the rule text with its drop probability set to pct */
static void with_drop(const char *rule, const char *pct, char *out, size_t len)
{
	char buf[256], *tok, *save;
	int after_drop = 0, replaced = 0;

	out[0] = 0;
	snprintf(buf, sizeof(buf), "%s", rule);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		const char *w = tok;

		if (after_drop && !replaced && strchr(tok, '%')) {
			w = pct;
			replaced = 1;
		}
		snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? " " : "", w);
		if (!strcmp(tok, "drop")) {
			after_drop = 1;
			if (!save || !*save || !strchr(save, '%')) {	/* "drop" alone: 100% */
				snprintf(out + strlen(out), len - strlen(out), " %s", pct);
				replaced = 1;
			}
		}
	}
}

/* :drop P% [all|nodeN] [ingress|egress]: every matching drop rule to P%,
 * or a new rule where there is none */
static void cmd_drop(struct tui *t, const char *pct, const char *node, const char *dir)
{
	char out[256], dev[16];
	int i, n = 0, set = 0;

	for (i = 0; i < t->nctl; i++) {
		int j, found = 0;

		if (strcmp(node, "all") && strcmp(node, t->m->node[i].name))
			continue;
		n++;
		snprintf(dev, sizeof(dev), "n%d", i);
		for (j = 0; j < t->m->nrules; j++) {
			struct model_rule r;
			char rule[256];

			pthread_mutex_lock(&t->m->lock);
			r = t->m->rule[j];
			pthread_mutex_unlock(&t->m->lock);
			if (strcmp(r.dev, dev) || strcmp(r.dir, dir) || strcmp(r.action, "drop"))
				continue;
			with_drop(r.rule, pct, rule, sizeof(rule));
			if (rule_set(t, r.id, rule, out, sizeof(out)))
				flash_msg(t, "set rule %d: %s", r.id, out);
			else
				set++;
			found = 1;
		}
		if (!found) {
			char rule[160];

			snprintf(rule, sizeof(rule), "add dev %s %s opcode data drop %s", dev, dir, pct);
			if (inject(t, words(rule), 1, out, sizeof(out)))
				flash_msg(t, "%s: %s", rule, out);
			else {
				if (t->nadded < 64)
					t->added[t->nadded++] = atoi(out);
				set++;
			}
		}
	}
	if (!n)
		flash_msg(t, "no node '%s' (all, node0..node%d)", node, t->nctl - 1);
	else if (set)
		flash_msg(t, "drop %s at %s %s: %d rule%s", pct, node, dir, set, set == 1 ? "" : "s");
	poll_rules(t);
}

static void cmd_add(struct tui *t, const char *what, const char *node_name, const char *arg)
{
	char rule[160], out[256];
	int k = -1, i;

	for (i = 0; i < t->nctl; i++)
		if (!strcmp(node_name, t->m->node[i].name))
			k = i;
	if (k < 0) {
		flash_msg(t, "no node '%s' (node0..node%d)", node_name, t->nctl - 1);
		return;
	}
	/* toward node k: the switch port's egress (delay needs an egress hook) */
	snprintf(rule, sizeof(rule), "add dev sw%d egress opcode data %s %s", k, what, arg);
	if (inject(t, words(rule), 1, out, sizeof(out)))
		flash_msg(t, "%s: %s", rule, out);
	else {
		if (t->nadded < 64)
			t->added[t->nadded++] = atoi(out);
		flash_msg(t, "%s %s toward %s (rule %s)", what, arg, node_name, out);
	}
	poll_rules(t);
}

static void rule_onoff(struct tui *t, int id, int on)
{
	char out[256];

	if (inject(t, json_pack("[sos]", "set", json_sprintf("%d", id), on ? "on" : "off"), 0, out,
		   sizeof(out)))
		flash_msg(t, "rule %d: %s", id, out);
	else
		flash_msg(t, "rule %d %s", id, on ? "on" : "off");
	poll_rules(t);
}

static int quit_asked(struct tui *t)
{
	if (!t->attach)	/* attached: just detach */
		ctl_interrupted = 1;
	return 1;
}

/* a `:` command; 1 to quit */
static int command(struct tui *t, const char *line)
{
	char a[5][64] = { { 0 } };
	int n = sscanf(line, "%63s %63s %63s %63s %63s", a[0], a[1], a[2], a[3], a[4]);

	if (n <= 0)
		return 0;
	if (!strcmp(a[0], "drop") && n >= 2) {
		if (!strchr(a[1], '%')) {
			flash_msg(t, "drop: give a rate like 2%%");
			return 0;
		}
		cmd_drop(t, a[1], n >= 3 ? a[2] : "all", n >= 4 ? a[3] : "ingress");
	} else if ((!strcmp(a[0], "delay") || !strcmp(a[0], "flap")) && n >= 2) {
		cmd_add(t, a[0], n >= 3 ? a[2] : "node1", a[1]);
	} else if (!strcmp(a[0], "set") && n >= 3) {
		/* :set ID RULE...: any change, e.g. a burst model or a delay */
		const char *rule = line + strspn(line, " ");
		char out[256];

		rule += strlen("set");
		rule += strspn(rule, " ");
		rule += strcspn(rule, " ");
		if (rule_set(t, atoi(a[1]), rule, out, sizeof(out)))
			flash_msg(t, "set %s: %s", a[1], out);
		else
			flash_msg(t, "rule %s:%s", a[1], rule);
		poll_rules(t);
	} else if ((!strcmp(a[0], "on") || !strcmp(a[0], "off")) && n == 2) {
		rule_onoff(t, atoi(a[1]), !strcmp(a[0], "on"));
	} else if (!strcmp(a[0], "pause") || !strcmp(a[0], "resume")) {
		t->m->paused = !strcmp(a[0], "pause");
		flash_msg(t, "%s", t->m->paused ? "pausing after the arm in flight" : "resumed");
	} else if (!strcmp(a[0], "view") && n == 2) {
		int v;

		for (v = 0; v < V_N && strcmp(view_names[v], a[1]); v++)
			;
		if (v == V_N)
			flash_msg(t, "view: latency | throughput | training");
		else
			t->view = v;
	} else if (!strcmp(a[0], "q") || !strcmp(a[0], "quit")) {
		return quit_asked(t);
	} else {
		flash_msg(t, "unknown command '%s' (? for help)", line);
	}
	return 0;
}

/* --- drawing */
enum { C_TITLE = 1, C_HEAD, C_SEL, C_WARN, C_ARM0 };

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

static void spark(const double *v, int n, int width, char *out)
{
	static const char lv[] = " .:-=+*#%@";
	double lo = 1e300, hi = 0;
	int i, from = n > width ? n - width : 0;

	for (i = from; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	for (i = from; i < n; i++)
		*out++ = lv[hi > lo ? (int)((v[i] - lo) / (hi - lo) * 9 + 0.5) : 1];
	*out = 0;
}

static void draw_arms(struct tui *t, int y, int x, int h, int w)
{
	struct model *m = t->m;
	int cw = (w - 18) / (m->narms ? m->narms : 1), a, row = y + 1;
	/* the most telling rows first: a short terminal shows the top ones */
	static const char *const lat_rows[] = { "state", "p50 [ms]", "p99 [ms]", "p99.9 [ms]",
						"now p50 [ms]", "lost [%]", "now lost [%]",
						"retransmits", "L-inf error", "cosine", "steps done",
						"max [ms]", "now p99 [ms]", NULL };
	static const char *const thr_rows[] = { "state", "busbw [MB/s]", "algbw [MB/s]",
						"mean [ms]", "now p50 [ms]", "lost bytes",
						"rebuilt (ec)", "step timeouts", "retries/s",
						"seq NAKs/s", "out-of-seq/s", "dup reqs/s",
						"steps done", NULL };
	static const char *const trn_rows[] = { "state", "steps done", "accuracy", "eval loss",
						"TTA [s]", "now p50 [ms]", "step p50 [ms]",
						"step p99 [ms]", "lost [%]", "L-inf error", "cosine",
						NULL };
	const char *const *rows = t->view == V_LATENCY ? lat_rows :
				  t->view == V_THROUGHPUT ? thr_rows : trn_rows;
	int r;

	if (cw > 24)
		cw = 24;
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
	}
	attr(t, C_HEAD, 0);
	row++;
	for (r = 0; rows[r] && row < y + h - 1 - (h > 14); r++, row++) {
		mvprintw(row, x + 2, "%-15s", rows[r]);
		for (a = 0; a < m->narms; a++) {
			struct model_arm *z = &m->arm[a];
			struct hist *hh = &z->acc.h;
			char v[32] = "-";
			const char *k = rows[r];
			double t_s = z->acc.iters ? z->acc.tsum / (double)z->acc.iters / 1e9 : 0;
			double algbw = t_s > 0 ? (double)z->acc.size / t_s : 0;

			if (!strcmp(k, "state"))
				snprintf(v, sizeof(v), "%s", z->running ? "running" :
					 hh->count ? "waiting" : "not yet");
			else if (!strcmp(k, "steps done") && z->accuracy > 0 && !hh->count)
				snprintf(v, sizeof(v), "%llu", (unsigned long long)z->live_done);
			else if (!strcmp(k, "steps done"))
				snprintf(v, sizeof(v), "%llu", (unsigned long long)(z->acc.iters + (z->running ? z->live_done : 0)));
			else if (!hh->count && strncmp(k, "now", 3) && strcmp(k, "accuracy") &&
				 strcmp(k, "eval loss"))
				;
			else if (!strcmp(k, "p50 [ms]") || !strcmp(k, "step p50 [ms]"))
				snprintf(v, sizeof(v), "%.2f", (double)hist_quantile(hh, 0.5) / 1e6);
			else if (!strcmp(k, "p99 [ms]") || !strcmp(k, "step p99 [ms]"))
				snprintf(v, sizeof(v), "%.2f", (double)hist_quantile(hh, 0.99) / 1e6);
			else if (!strcmp(k, "p99.9 [ms]"))
				snprintf(v, sizeof(v), "%.2f", (double)hist_quantile(hh, 0.999) / 1e6);
			else if (!strcmp(k, "max [ms]"))
				snprintf(v, sizeof(v), "%.2f", (double)hh->max / 1e6);
			else if (!strcmp(k, "mean [ms]"))
				snprintf(v, sizeof(v), "%.2f", hist_mean(hh) / 1e6);
			else if (!strcmp(k, "now p50 [ms]") && z->nspark)
				snprintf(v, sizeof(v), "%.2f", z->last_p50_ms);
			else if (!strcmp(k, "now p99 [ms]") && z->nspark)
				snprintf(v, sizeof(v), "%.2f", z->last_p99_ms);
			else if (!strcmp(k, "lost [%]") && strcmp(z->mode, "rc") && z->acc.expected)
				snprintf(v, sizeof(v), "%.3f", 100.0 * (double)z->acc.lost / (double)z->acc.expected);
			else if (!strcmp(k, "now lost [%]") && z->last_lost >= 0 && z->nspark)
				snprintf(v, sizeof(v), "%.3f", 100.0 * z->last_lost);
			else if (!strcmp(k, "retransmits"))
				snprintf(v, sizeof(v), "%llu", (unsigned long long)z->acc.retrans);
			else if (!strcmp(k, "L-inf error") && z->acc.gsamples)
				snprintf(v, sizeof(v), "%.3g", z->acc.linf_sum / (double)z->acc.gsamples);
			else if (!strcmp(k, "cosine") && z->acc.gsamples)
				snprintf(v, sizeof(v), "%.5f", z->acc.cos_sum / (double)z->acc.gsamples);
			else if (!strcmp(k, "busbw [MB/s]"))
				snprintf(v, sizeof(v), "%.3f", algbw * z->acc.factor / 1e6);
			else if (!strcmp(k, "algbw [MB/s]"))
				snprintf(v, sizeof(v), "%.3f", algbw / 1e6);
			else if (!strcmp(k, "lost bytes") && strcmp(z->mode, "rc"))
				snprintf(v, sizeof(v), "%llu", (unsigned long long)z->acc.lost_bytes);
			else if (!strcmp(k, "rebuilt (ec)") && !strcmp(z->mode, "ec"))
				snprintf(v, sizeof(v), "%llu", (unsigned long long)z->acc.recovered);
			else if (!strcmp(k, "step timeouts") && strcmp(z->mode, "rc"))
				snprintf(v, sizeof(v), "%llu", (unsigned long long)z->acc.timeouts);
			else if (!strcmp(k, "retries/s") || !strcmp(k, "seq NAKs/s") ||
				 !strcmp(k, "out-of-seq/s") || !strcmp(k, "dup reqs/s")) {
				/* rxe hw counter deltas over the arm's measured time */
				const char *c = k[0] == 'r' ? "completer_retry_err" :
						k[0] == 's' ? "rcvd_seq_err" :
						k[0] == 'o' ? "out_of_seq_request" : "duplicate_request";
				double secs = z->acc.tsum / 1e9;

				if (secs > 0)
					snprintf(v, sizeof(v), "%.1f",
						 (double)json_integer_value(json_object_get(z->acc.hw, c)) /
							 secs);
			} else if (!strcmp(k, "accuracy") && z->accuracy > 0)
				snprintf(v, sizeof(v), "%.3f", z->accuracy);
			else if (!strcmp(k, "eval loss") && z->accuracy > 0)
				snprintf(v, sizeof(v), "%.3f", z->loss);
			else if (!strcmp(k, "TTA [s]") && hh->count)
				snprintf(v, sizeof(v), z->tta_ns >= 0 ? "%.2f" : "never",
					 (double)z->tta_ns / 1e9);
			mvprintw(row, x + 17 + a * cw, "%*.*s", cw - 1, cw - 1, v);
		}
	}
	if (row < y + h - 1 && !rows[r]) {
		mvprintw(row, x + 2, "%-15s", "p50 trend");
		for (a = 0; a < m->narms; a++) {
			char s[64];

			spark(m->arm[a].spark, m->arm[a].nspark, cw - 2 < 60 ? cw - 2 : 60, s);
			if (t->color)
				attron(COLOR_PAIR(C_ARM0 + a));
			mvprintw(row, x + 17 + a * cw, "%*s", cw - 1, s);
			if (t->color)
				attroff(COLOR_PAIR(C_ARM0 + a));
		}
	}
}

static void draw_faults(struct tui *t, int y, int x, int h, int w)
{
	struct model *m = t->m;
	int i, row = y + 1;

	box_at(t, y, x, h, w, "Faults (rdma-inject rules, live)", t->pane == P_FAULTS);
	attr(t, C_HEAD, 1);
	mvprintw(row++, x + 2, "%-3s %-4s %-4s %-*.*s %9s %8s %6s", "id", "dev", "dir", w - 44,
		 w - 44, "rule", "matched", "dropped", "now%");
	attr(t, C_HEAD, 0);
	for (i = 0; i < m->nrules && row < y + h - 1; i++, row++) {
		struct model_rule *r = &m->rule[i];
		int sel = t->pane == P_FAULTS && i == t->sel_rule;

		if (sel)
			attr(t, C_SEL, 1);
		mvprintw(row, x + 2, "%-3d %-4s %-4.4s %-*.*s %9llu %8llu %6.2f", r->id, r->dev, r->dir,
			 w - 44, w - 44, r->enabled ? r->rule : "(off)", (unsigned long long)r->matched,
			 (unsigned long long)r->dropped, 100 * r->drop_rate);
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
	"  lost: data a lossy arm gave up; retransmits: rxe completer_retry_err +",
	"  rcvd_seq_err; L-inf/cosine: error of the result against the exact sum.",
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
	"             :pause  :resume  :view latency|throughput|training  :quit",
	"  q F10    quit: stop the arm in flight, remove rules, write the report",
	NULL,
};

static void draw(struct tui *t)
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
		 t->attach ? t->m->elapsed : ctl_now() - t->m->t_start,
		 t->m->paused ? " | PAUSED (p resumes)" :
		 t->attach && t->m->done ? " | the run ended (q quits)" :
		 t->attach ? " | attached: q detaches, the run goes on" :
		 t->worker_done ? " | finished (q quits)" : "");
	attr(t, C_TITLE, 0);
	{
		/* 80x24: arms, faults and a line of events, nodes on one line;
		 * wide: nodes in their own pane; tall: more events */
		int small = W < 120, avail = H - 2 - small;
		int ev_h = H >= 40 ? 10 : 3, want = t->view == V_TRAINING ? 12 : 18;

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
		draw_events(t, 1 + arms_h + mid_h, 0, ev_h, W);
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

static void *worker(void *arg)
{
	struct tui *t = arg;

	exp_measure(t->e);
	pthread_mutex_lock(&t->m->lock);
	t->worker_done = 1;
	t->m->done = 1;
	snprintf(t->m->status, sizeof(t->m->status), "%s",
		 ctl_interrupted ? "stopped" : t->e->rc ? "an arm failed" : "all rounds done");
	pthread_mutex_unlock(&t->m->lock);
	return NULL;
}

static void observer(void *arg, int idx, const json_t *iv, json_int_t progress)
{
	model_intervals(arg, idx, iv, progress);
}

static void on_sig(int sig)
{
	(void)sig;
	ctl_interrupted = 1;
}

/* a key; 1 to quit */
static int key(struct tui *t, int ch)
{
	struct model *m = t->m;

	if (t->help) {
		t->help = 0;
		return 0;
	}
	if (t->incmd) {
		if (ch == '\n' || ch == KEY_ENTER) {
			t->incmd = 0;
			return command(t, t->cmd);
		}
		if (ch == 27) {
			t->incmd = 0;
		} else if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && t->cmdlen) {
			t->cmd[--t->cmdlen] = 0;
		} else if (isprint(ch) && t->cmdlen < (int)sizeof(t->cmd) - 1) {
			t->cmd[t->cmdlen++] = (char)ch;
			t->cmd[t->cmdlen] = 0;
		}
		return 0;
	}
	switch (ch) {
	case 'q':
	case KEY_F(10):
		return quit_asked(t);
	case '?':
	case KEY_F(1):
		t->help = 1;
		break;
	case '\t':
		t->pane = (t->pane + 1) % P_N;
		break;
	case KEY_UP:
		if (t->pane == P_FAULTS && t->sel_rule > 0)
			t->sel_rule--;
		else if (t->pane == P_ARMS && t->sel_arm > 0)
			t->sel_arm--;
		break;
	case KEY_DOWN:
		if (t->pane == P_FAULTS && t->sel_rule + 1 < m->nrules)
			t->sel_rule++;
		else if (t->pane == P_ARMS && t->sel_arm + 1 < m->narms)
			t->sel_arm++;
		break;
	case KEY_LEFT:
		if (t->sel_arm > 0)
			t->sel_arm--;
		break;
	case KEY_RIGHT:
		if (t->sel_arm + 1 < m->narms)
			t->sel_arm++;
		break;
	case '+':
	case '-':
		if (t->sel_rule < m->nrules) {
			struct model_rule r;
			char rule[256], pct[32], out[256];
			const char *p;
			double v = 100;

			pthread_mutex_lock(&m->lock);
			r = m->rule[t->sel_rule];
			pthread_mutex_unlock(&m->lock);
			if (strcmp(r.action, "drop")) {
				flash_msg(t, "rule %d is not a drop rule", r.id);
				break;
			}
			p = strstr(r.rule, "drop ");
			if (p && strchr(p, '%'))
				v = atof(p + 5);
			v = ch == '+' ? (v * 2 > 100 ? 100 : v * 2) : v / 2;
			if (v < 0.01)
				v = 0.01;
			snprintf(pct, sizeof(pct), "%.2f%%", v);
			with_drop(r.rule, pct, rule, sizeof(rule));
			if (rule_set(t, r.id, rule, out, sizeof(out)))
				flash_msg(t, "rule %d: %s", r.id, out);
			else
				flash_msg(t, "rule %d: drop %s", r.id, pct);
			poll_rules(t);
		}
		break;
	case ' ':
		if (t->sel_rule < m->nrules)
			rule_onoff(t, m->rule[t->sel_rule].id, !m->rule[t->sel_rule].enabled);
		break;
	case 'f':
		cmd_add(t, "flap", "node1", "2s");
		break;
	case 'p':
		if (t->attach) {
			flash_msg(t, "p pauses in the tui that runs the experiment, not when attached");
			break;
		}
		m->paused = !m->paused;
		flash_msg(t, "%s", m->paused ? "pausing after the arm in flight" : "resumed");
		break;
	case 'r':
		pthread_mutex_lock(&m->lock);
		arm_acc_fini(&m->arm[t->sel_arm].acc);
		arm_acc_init(&m->arm[t->sel_arm].acc, m->arm[t->sel_arm].name, m->arm[t->sel_arm].mode);
		m->arm[t->sel_arm].nspark = 0;
		pthread_mutex_unlock(&m->lock);
		flash_msg(t, "%s: numbers reset (the report keeps every round)", m->arm[t->sel_arm].name);
		break;
	case 'v':
		t->view = (t->view + 1) % V_N;
		break;
	case ':':
		t->incmd = 1;
		t->cmdlen = 0;
		t->cmd[0] = 0;
		break;
	case KEY_RESIZE:
		clear();
		break;
	default:
		break;
	}
	return 0;
}

static void curses_start(struct tui *t)
{
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

/* the published model (rdmactl run / tui write it) into ours; 0 or -1 */
static int load_live(struct tui *t)
{
	json_t *j = json_load_file(t->live, 0, NULL);
	struct model_node nodes[16];
	int n = t->m->nnodes, r;

	memcpy(nodes, t->m->node, sizeof(nodes));
	r = j ? model_from_json(t->m, j) : -1;
	json_decref(j);
	if (!r && t->stats)	/* our own, fresher view of the rules */
		model_rules(t->m, t->stats);
	if (!r && !t->m->nnodes) {	/* and of the nodes */
		memcpy(t->m->node, nodes, sizeof(nodes));
		t->m->nnodes = n;
	}
	return r;
}

/* rdmactl tui --attach: view the experiment another rdmactl runs, steer
 * its faults; q detaches and the run goes on */
static int tui_attach(struct ctl *ctl)
{
	static struct model m;
	static struct tui t;
	struct tb_state s;
	int i, quit = 0, a, gone = 0;

	(void)ctl;
	snprintf(t.live, sizeof(t.live), "%s/live.json", ctl_state_dir());
	if (tb_load(&s)) {
		log_err("tui --attach: no testbed is up");
		return 1;
	}
	memset(&m, 0, sizeof(m));
	pthread_mutex_init(&m.lock, NULL);
	for (a = 0; a < PROF_MAX_ARMS; a++)
		arm_acc_init(&m.arm[a].acc, "", "");
	t.m = &m;
	t.attach = 1;
	if (load_live(&t)) {
		log_err("tui --attach: no experiment is running (%s: %s); 'rdmactl run PROFILE' "
			"publishes one", t.live, strerror(errno));
		model_fini(&m);
		return 1;
	}
	for (i = 0; i < s.nodes && i < 16; i++) {
		if (agentc_open(&t.ctl[i], &s, i, 3000)) {
			log_err("tui --attach: %s: no control connection", s.node[i].name);
			break;
		}
		snprintf(m.node[i].name, sizeof(m.node[i].name), "%s", s.node[i].name);
		t.nctl = i + 1;
	}
	m.nnodes = t.nctl;
	curses_start(&t);
	while (!quit) {
		int ch = getch();

		if (ch != ERR)
			quit = key(&t, ch);
		if (ctl_now() - t.polled >= 1 && t.nctl) {
			poll_rules(&t);
			t.polled = ctl_now();
		}
		if (ctl_now() - t.nodes_polled >= 3 && t.nctl) {
			poll_nodes(&t);
			t.nodes_polled = ctl_now();
		}
		if (load_live(&t) && !gone) {
			gone = 1;
			m.done = 1;
			model_event(&m, "the run is over (no %s)", t.live);
		}
		draw(&t);
	}
	endwin();
	for (i = 0; i < t.nctl; i++)
		agentc_close(&t.ctl[i]);
	json_decref(t.stats);
	model_fini(&m);
	return 0;
}

int cmd_tui(struct ctl *ctl, int argc, char **argv)
{
	static struct exp e;
	static struct model m;
	static struct tui t;
	struct sigaction sa = { .sa_handler = on_sig }, old_int, old_term;
	pthread_t th;
	int r, i, quit = 0;

	for (i = 0; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: rdmactl tui PROFILE [-o DIR] [--set key.path=value]... [--keep]\n"
			       "       rdmactl tui --attach\n"
			       "  runs the profile like 'rdmactl run', live on screen (80x24 or more);\n"
			       "  --attach views the experiment a running 'rdmactl run' publishes\n"
			       "  press ? inside for every key\n");
			return 0;
		}
	if (!isatty(0) || !isatty(1)) {
		log_err("tui: needs a terminal (use 'rdmactl run' for headless runs)");
		return 2;
	}
	if (argc == 1 && !strcmp(argv[0], "--attach"))
		return tui_attach(ctl);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	r = exp_open(&e, ctl, argc, argv, NULL);
	if (r) {
		exp_close(&e);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		return r < 0 ? 0 : r;
	}
	model_init(&m, &e.p);
	e.m = &m;
	e.quiet = 0;
	t.e = &e;
	t.m = &m;
	m.nnodes = e.g.n;
	t.nctl = 0;
	for (i = 0; i < e.g.n; i++) {
		snprintf(m.node[i].name, sizeof(m.node[i].name), "%s", e.g.tb.node[e.g.node[i]].name);
		snprintf(m.node[i].dev, sizeof(m.node[i].dev), "%s", e.g.tb.node[e.g.node[i]].dev);
		if (agentc_open(&t.ctl[i], &e.g.tb, e.g.node[i], 3000)) {
			log_err("tui: %s: no control connection", m.node[i].name);
			e.rc = 1;
			goto finish;
		}
		t.nctl = i + 1;
	}
	model_event(&m, "profile %s: %d arm(s), %d fault rule(s); ? for help", e.p.name, e.p.narms,
		    e.p.nfaults);
	arms_observer = observer;
	arms_observer_arg = &m;
	curses_start(&t);
	poll_nodes(&t);
	poll_rules(&t);
	pthread_create(&th, NULL, worker, &t);
	while (!quit) {
		int ch = getch();

		if (ch != ERR)
			quit = key(&t, ch);
		if (ctl_interrupted)
			quit = 1;
		if (ctl_now() - t.polled >= 1) {
			poll_rules(&t);
			t.polled = ctl_now();
		}
		if (ctl_now() - t.nodes_polled >= 3) {
			poll_nodes(&t);
			t.nodes_polled = ctl_now();
		}
		model_publish(&m, 0);	/* for tui --attach */
		draw(&t);
	}
	model_unpublish();
	ctl_interrupted = !t.worker_done;
	mvprintw(LINES - 1, 0, "%-*s", COLS, " stopping: the arm in flight, then rules and report...");
	refresh();
	pthread_join(th, NULL);
	endwin();
	arms_observer = NULL;
	for (i = 0; i < t.nadded; i++) {	/* the rules we added */
		char id[16], out[256];

		snprintf(id, sizeof(id), "%d", t.added[i]);
		inject(&t, json_pack("[ss]", "del", id), 0, out, sizeof(out));
	}
	e.extra_rules = t.nadded;
finish:
	for (i = 0; i < t.nctl; i++)
		agentc_close(&t.ctl[i]);
	r = exp_finish(&e);
	model_fini(&m);
	exp_close(&e);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return r;
}
