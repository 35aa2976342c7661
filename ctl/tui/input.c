// SPDX-License-Identifier: MIT
/*
 * Keys (tui.h): htop's habits (? help, q quit, Tab pane, space toggles,
 * : command line, Esc back). A key changes the view state or calls a
 * control action; it never draws. One switch over the keys: a dispatch
 * table, read top to bottom.
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
	const char *p;
	double v = 100;

	if (t->sel_rule >= m->nrules)
		return;
	pthread_mutex_lock(&m->lock);
	r = m->rule[t->sel_rule];
	pthread_mutex_unlock(&m->lock);
	if (strcmp(r.action, "drop")) {
		tui_flash_msg(t, "rule %d is not a drop rule", r.id);
		return;
	}
	p = strstr(r.rule, "drop ");
	if (p && strchr(p, '%'))
		v = atof(p + 5);
	v = up ? (v * 2 > 100 ? 100 : v * 2) : v / 2;
	if (v < 0.01)
		v = 0.01;
	snprintf(pct, sizeof(pct), "%.2f%%", v);
	if (tui_with_drop(r.rule, pct, rule, sizeof(rule)))
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

int tui_key(struct tui *t, int ch)
{
	struct model *m = t->m;

	if (t->help) {
		t->help = 0;
		return 0;
	}
	if (t->incmd)
		return cmdline_key(t, ch);
	switch (ch) {
	case 'q':
	case KEY_F(10):
		return tui_quit_asked(t);
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
		rate_step(t, ch == '+');
		break;
	case ' ':
		if (t->sel_rule < m->nrules)
			tui_rule_onoff(t, m->rule[t->sel_rule].id, !m->rule[t->sel_rule].enabled);
		break;
	case 'f':
		tui_cmd_add(t, "flap", "node1", "2s");
		break;
	case 'p':
		if (t->attach) {
			tui_flash_msg(t, "p pauses in the tui that runs the experiment, not when attached");
			break;
		}
		m->paused = !m->paused;
		tui_flash_msg(t, "%s", m->paused ? "pausing after the arm in flight" : "resumed");
		break;
	case 'r':
		pthread_mutex_lock(&m->lock);
		arm_acc_fini(&m->arm[t->sel_arm].acc);
		arm_acc_init(&m->arm[t->sel_arm].acc, m->arm[t->sel_arm].name, m->arm[t->sel_arm].mode);
		m->arm[t->sel_arm].nspark = 0;
		m->arm[t->sel_arm].nlspark = 0;
		pthread_mutex_unlock(&m->lock);
		tui_flash_msg(t, "%s: numbers reset (the report keeps every round)", m->arm[t->sel_arm].name);
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

