// SPDX-License-Identifier: MIT
/*
 * Keys (tui.h): htop's habits (? help, q quit, Tab pane, space toggles,
 * : command line, Esc back). The bindings are one table of (key, action),
 * after htop's Action_setBindings: an action changes the view state or
 * calls a control action; it never draws.
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
#include "ctl/tui/tui.h"
#include "lib/log.h"

/* + / -: the selected drop rule's rate doubled or halved (0.01%..100%) */
static void rate_step(struct tui *t, int up)
{
	struct model *m = t->m;
	struct model_rule r;
	char rule[256], pct[32], out[256];
	double v = 100;

	if (t->sel_rule >= m->nrules)
		return;
	pthread_mutex_lock(&m->lock);
	r = m->rule[t->sel_rule];
	pthread_mutex_unlock(&m->lock);
	if (!r.parsed_ok || r.parsed.action != INJ_ACT_DROP) {
		tui_flash_msg(t, "rule %d is not a drop rule", r.id);
		return;
	}
	if (r.parsed.model == INJ_MODEL_BERNOULLI)	/* drop P%: P; every N, nth N: 100 */
		v = (double)r.parsed.prob / INJ_PROB_ONE * 100;
	v = up ? (v * 2 > 100 ? 100 : v * 2) : v / 2;
	if (v < 0.01)
		v = 0.01;
	snprintf(pct, sizeof(pct), "%.2f%%", v);
	if (tui_with_drop(&r.parsed, pct, rule, sizeof(rule)))
		tui_flash_msg(t, "rule %d: cannot set drop %s", r.id, pct);
	else if (tui_rule_set(t, r.id, rule, out, sizeof(out)))
		tui_flash_msg(t, "rule %d: %s", r.id, out);
	else
		tui_flash_msg(t, "rule %d: drop %s", r.id, pct);
	tui_poll_rules(t);
}

/* the : command line being typed */
static int cmdline_key(struct tui *t, int ch)
{
	if (ch == '\n' || ch == KEY_ENTER) {
		t->incmd = 0;
		return tui_command(t, t->cmd);
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

static int act_quit(struct tui *t, int ch)
{
	(void)ch;
	return tui_quit_asked(t);
}

static int act_help(struct tui *t, int ch)
{
	(void)ch;
	t->help = 1;
	return 0;
}

static int act_pane(struct tui *t, int ch)
{
	(void)ch;
	t->pane = (t->pane + 1) % P_N;
	return 0;
}

/* up and down: the selected rule or arm, in the pane that has the focus */
static int act_updown(struct tui *t, int ch)
{
	int d = ch == KEY_UP ? -1 : 1;

	if (t->pane == P_FAULTS && t->sel_rule + d >= 0 && t->sel_rule + d < t->m->nrules)
		t->sel_rule += d;
	else if (t->pane == P_ARMS && t->sel_arm + d >= 0 && t->sel_arm + d < t->m->narms)
		t->sel_arm += d;
	return 0;
}

/* left and right: the selected arm, in any pane */
static int act_arm(struct tui *t, int ch)
{
	int d = ch == KEY_LEFT ? -1 : 1;

	if (t->sel_arm + d >= 0 && t->sel_arm + d < t->m->narms)
		t->sel_arm += d;
	return 0;
}

static int act_rate(struct tui *t, int ch)
{
	rate_step(t, ch == '+');
	return 0;
}

/* space: the selected rule on or off */
static int act_toggle(struct tui *t, int ch)
{
	struct model *m = t->m;

	(void)ch;
	if (t->sel_rule < m->nrules)
		tui_rule_onoff(t, m->rule[t->sel_rule].id, !m->rule[t->sel_rule].enabled);
	return 0;
}

/* f: node1's link down for 2 s */
static int act_flap(struct tui *t, int ch)
{
	(void)ch;
	tui_cmd_add(t, "flap", "node1", "2s");
	return 0;
}

static int act_pause(struct tui *t, int ch)
{
	(void)ch;
	if (t->attach) {
		tui_flash_msg(t, "p pauses in the tui that runs the experiment, not when attached");
		return 0;
	}
	t->m->paused = !t->m->paused;
	tui_flash_msg(t, "%s", t->m->paused ? "pausing after the arm in flight" : "resumed");
	return 0;
}

/* r: the selected arm's numbers on screen start again (not the report's) */
static int act_reset(struct tui *t, int ch)
{
	struct model *m = t->m;
	struct model_arm *a = &m->arm[t->sel_arm];

	(void)ch;
	pthread_mutex_lock(&m->lock);
	arm_acc_fini(&a->acc);
	arm_acc_init(&a->acc, a->name, a->mode);
	a->nspark = 0;
	a->nlspark = 0;
	pthread_mutex_unlock(&m->lock);
	tui_flash_msg(t, "%s: numbers reset (the report keeps every round)", a->name);
	return 0;
}

static int act_view(struct tui *t, int ch)
{
	(void)ch;
	t->view = (t->view + 1) % V_N;
	return 0;
}

static int act_cmdline(struct tui *t, int ch)
{
	(void)ch;
	t->incmd = 1;
	t->cmdlen = 0;
	t->cmd[0] = 0;
	return 0;
}

static int act_resize(struct tui *t, int ch)
{
	(void)t;
	(void)ch;
	clear();
	return 0;
}

/* the keys, each to its action (1 from an action: quit) */
static const struct binding {
	int key;
	int (*act)(struct tui *t, int ch);
} bindings[] = {
	{ 'q', act_quit },	{ KEY_F(10), act_quit }, { '?', act_help },
	{ KEY_F(1), act_help },	{ '\t', act_pane },	  { KEY_UP, act_updown },
	{ KEY_DOWN, act_updown }, { KEY_LEFT, act_arm },  { KEY_RIGHT, act_arm },
	{ '+', act_rate },	{ '-', act_rate },	  { ' ', act_toggle },
	{ 'f', act_flap },	{ 'p', act_pause },	  { 'r', act_reset },
	{ 'v', act_view },	{ ':', act_cmdline },	  { KEY_RESIZE, act_resize },
	{ 0, NULL },
};

int tui_key(struct tui *t, int ch)
{
	const struct binding *b;

	if (t->help) {
		t->help = 0;
		return 0;
	}
	if (t->incmd)
		return cmdline_key(t, ch);
	for (b = bindings; b->act; b++)
		if (b->key == ch)
			return b->act(t, ch);
	return 0;
}

