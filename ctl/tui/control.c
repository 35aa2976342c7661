// SPDX-License-Identifier: MIT
/*
 * What the TUI's keys and `:` commands do (tui.h): rdma-inject calls on
 * node 0's agent (one injector state for the whole testbed), the rules'
 * and nodes' polling, the run paused or stopped. Changes the model and
 * the faults; never draws.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctl/tui/tui.h"
#include "injector/inj.h"
#include "lib/log.h"

void tui_flash_msg(struct tui *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	model_event(t->m, "%s", t->msg);
}

/* rdma-inject ARGS... on node 0's agent (one injector state for the whole
 * testbed); its stdout in out, 0 on success */
int tui_inject(struct tui *t, json_t *args, int lease, char *out, size_t outlen)
{
	json_t *res = NULL;
	char err[256];
	int rc;

	if (agentc_call(&t->ctl[0], "inject", json_pack("{s:o,s:b}", "args", args, "lease", lease),
			&res, 30000, err, sizeof(err))) {
		snprintf(out, outlen, "%s", err);
		return -EIO;
	}
	rc = (int)json_integer_value(json_object_get(res, "rc"));
	snprintf(out, outlen, "%s",
		 json_string_value(json_object_get(res, rc ? "stderr" : "stdout")) ?: "");
	out[strcspn(out, "\n")] = 0;
	json_decref(res);
	return rc ? -EIO : 0;
}

int tui_add(struct tui *t, const char *words, char *out, size_t outlen)
{
	json_t *args = tui_words(words), *res = NULL;
	char err[256];
	int rc, id = -1;

	json_array_insert_new(args, 0, json_string("-j"));
	if (agentc_call(&t->ctl[0], "inject", json_pack("{s:o,s:b}", "args", args, "lease", 1), &res,
			30000, err, sizeof(err))) {
		snprintf(out, outlen, "%s", err);
		return -EIO;
	}
	rc = (int)json_integer_value(json_object_get(res, "rc"));
	if (!rc)
		id = (int)json_integer_value(json_object_get(json_object_get(res, "json"), "id"));
	snprintf(out, outlen, "%s", rc ? json_string_value(json_object_get(res, "stderr")) ?: "" :
		 id > 0 ? "" : "no rule in rdma-inject's answer");
	out[strcspn(out, "\n")] = 0;
	json_decref(res);
	if (id > 0 && t->nadded < 64)	/* removed at the end */
		t->added[t->nadded++] = id;
	return id > 0 ? id : -EIO;
}

json_t *tui_words(const char *s)
{
	json_t *a = json_array();
	char buf[256], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
		json_array_append_new(a, json_string(tok));
	return a;
}

/* set ID to rule text (same slot, counters kept); 0 on success */
int tui_rule_set(struct tui *t, int id, const char *rule, char *out, size_t outlen)
{
	json_t *a = tui_words(rule);

	json_array_insert_new(a, 0, json_sprintf("%d", id));
	json_array_insert_new(a, 0, json_string("set"));
	return tui_inject(t, a, 0, out, outlen);
}

void tui_poll_rules(struct tui *t)
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

void tui_poll_nodes(struct tui *t)
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

/* the rule text with its drop probability set to pct: the text parsed by
 * rdma-inject's own grammar (injector/rule.c, linked in), the rule changed,
 * formatted back; 0, or -EINVAL when pct or the rule do not parse */
int tui_with_drop(const struct inj_rule *rule, const char *pct, char *out, size_t len)
{
	char *pargv[] = { "drop", (char *)pct }, err[128];
	struct inj_rule r = *rule, p;

	/* "drop PCT" alone: its selection replaces the rule's */
	inj_rule_init(&p);
	if (inj_rule_parse(&p, 2, pargv, 0, err, sizeof(err)))
		return -EINVAL;
	r.action = INJ_ACT_DROP;
	r.model = p.model;
	r.prob = p.prob;
	r.nth = p.nth;
	inj_rule_format(&r, out, len);
	return 0;
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
			if (strcmp(r.dev, dev) || strcmp(r.dir, dir) || !r.parsed_ok ||
			    r.parsed.action != INJ_ACT_DROP)
				continue;
			if (tui_with_drop(&r.parsed, pct, rule, sizeof(rule)))
				tui_flash_msg(t, "rule %d: cannot set drop %s", r.id, pct);
			else if (tui_rule_set(t, r.id, rule, out, sizeof(out)))
				tui_flash_msg(t, "set rule %d: %s", r.id, out);
			else
				set++;
			found = 1;
		}
		if (!found) {
			char rule[160];

			snprintf(rule, sizeof(rule), "add dev %s %s opcode data drop %s", dev, dir, pct);
			if (tui_add(t, rule, out, sizeof(out)) < 0)
				tui_flash_msg(t, "%s: %s", rule, out);
			else
				set++;
		}
	}
	if (!n)
		tui_flash_msg(t, "no node '%s' (all, node0..node%d)", node, t->nctl - 1);
	else if (set)
		tui_flash_msg(t, "drop %s at %s %s: %d rule%s", pct, node, dir, set, set == 1 ? "" : "s");
	tui_poll_rules(t);
}

void tui_cmd_add(struct tui *t, const char *what, const char *node_name, const char *arg)
{
	char rule[160], out[256];
	int k = -1, i;

	for (i = 0; i < t->nctl; i++)
		if (!strcmp(node_name, t->m->node[i].name))
			k = i;
	if (k < 0) {
		tui_flash_msg(t, "no node '%s' (node0..node%d)", node_name, t->nctl - 1);
		return;
	}
	/* toward node k: the switch port's egress (delay needs an egress hook) */
	snprintf(rule, sizeof(rule), "add dev sw%d egress opcode data %s %s", k, what, arg);
	i = tui_add(t, rule, out, sizeof(out));
	if (i < 0)
		tui_flash_msg(t, "%s: %s", rule, out);
	else
		tui_flash_msg(t, "%s %s toward %s (rule %d)", what, arg, node_name, i);
	tui_poll_rules(t);
}

void tui_rule_onoff(struct tui *t, int id, int on)
{
	char out[256];

	if (tui_inject(t, json_pack("[sos]", "set", json_sprintf("%d", id), on ? "on" : "off"), 0, out,
		   sizeof(out)))
		tui_flash_msg(t, "rule %d: %s", id, out);
	else
		tui_flash_msg(t, "rule %d %s", id, on ? "on" : "off");
	tui_poll_rules(t);
}

int tui_quit_asked(struct tui *t)
{
	if (!t->attach)	/* attached: just detach */
		ctl_interrupted = 1;
	return 1;
}

/* a `:` command; 1 to quit */
/* a node fault typed in: on its own thread (a reboot takes seconds), on
 * the run's node fault timeline (the report's node_events) */
struct node_act {
	struct tui *t;
	int node, event, undo;
	char what[48];
};

static void *node_act_thread(void *p)
{
	struct node_act *x = p;
	char err[512];
	int r = exp_nodes_act(x->t->e, x->node, x->event, x->undo, err, sizeof(err));

	if (r)
		tui_flash_msg(x->t, "%s: %s", x->what, err);
	__atomic_sub_fetch(&x->t->acting, 1, __ATOMIC_RELEASE);
	free(x);
	return NULL;
}

/* the node faults typed in: :VERB NODE (port: :port NODE down|up) */
static const struct {
	const char *verb;
	int event, undo, port;
} node_verbs[] = {
	{ "crash", PEV_CRASH, 0, 0 },	  { "freeze", PEV_FREEZE, 0, 0 },
	{ "thaw", PEV_FREEZE, 1, 0 },	  { "reboot", PEV_REBOOT, 0, 0 },
	{ "nic-reset", PEV_NIC_RESET, 0, 0 }, { "port", PEV_PORT_DOWN, 0, 1 },
};
#define NODE_VERBS (int)(sizeof(node_verbs) / sizeof(node_verbs[0]))

/* verb's entry in node_verbs, or -ENOENT */
static int node_verb(const char *verb)
{
	int v;

	for (v = 0; v < NODE_VERBS; v++)
		if (!strcmp(node_verbs[v].verb, verb))
			return v;
	return -ENOENT;
}

static void cmd_node(struct tui *t, int v, const char *node, const char *arg)
{
	const char *verb = node_verbs[v].verb;
	int port = node_verbs[v].port, i;
	struct node_act *x;
	pthread_t th;

	if (t->attach) {
		tui_flash_msg(t, "%s: in the tui that runs the experiment, not when attached", verb);
		return;
	}
	i = tb_node_index(&t->e->g.tb, node);
	if (i < 0) {
		tui_flash_msg(t, "%s: no node '%s'", verb, node);
		return;
	}
	if (port && (!arg || (strcmp(arg, "down") && strcmp(arg, "up")))) {
		tui_flash_msg(t, "port: :port NODE down|up");
		return;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return;
	x->t = t;
	x->node = i;
	x->event = node_verbs[v].event;
	x->undo = node_verbs[v].undo || (port && !strcmp(arg, "up"));
	snprintf(x->what, sizeof(x->what), "%s %s%s%s", verb, node, port ? " " : "",
		 port ? arg : "");
	tui_flash_msg(t, "%s ...", x->what);
	__atomic_add_fetch(&t->acting, 1, __ATOMIC_ACQUIRE);
	if (pthread_create(&th, NULL, node_act_thread, x)) {
		__atomic_sub_fetch(&t->acting, 1, __ATOMIC_RELEASE);
		tui_flash_msg(t, "%s: no thread", x->what);
		free(x);
		return;
	}
	pthread_detach(th);
}

/* a : command's words: a[0] the command, n of them; line as typed */
struct words {
	char a[5][64];
	int n;
	const char *line;
};

static int c_drop(struct tui *t, const struct words *w)
{
	if (!strchr(w->a[1], '%')) {
		tui_flash_msg(t, "drop: give a rate like 2%%");
		return 0;
	}
	cmd_drop(t, w->a[1], w->n >= 3 ? w->a[2] : "all", w->n >= 4 ? w->a[3] : "ingress");
	return 0;
}

static int c_add(struct tui *t, const struct words *w)
{
	tui_cmd_add(t, w->a[0], w->n >= 3 ? w->a[2] : "node1", w->a[1]);
	return 0;
}

/* :set ID RULE...: any change, e.g. a burst model or a delay */
static int c_set(struct tui *t, const struct words *w)
{
	const char *rule = w->line + strspn(w->line, " ");
	char out[256];

	rule += strlen("set");
	rule += strspn(rule, " ");
	rule += strcspn(rule, " ");
	if (tui_rule_set(t, atoi(w->a[1]), rule, out, sizeof(out)))
		tui_flash_msg(t, "set %s: %s", w->a[1], out);
	else
		tui_flash_msg(t, "rule %s:%s", w->a[1], rule);
	tui_poll_rules(t);
	return 0;
}

static int c_onoff(struct tui *t, const struct words *w)
{
	tui_rule_onoff(t, atoi(w->a[1]), !strcmp(w->a[0], "on"));
	return 0;
}

static int c_pause(struct tui *t, const struct words *w)
{
	t->m->paused = !strcmp(w->a[0], "pause");
	tui_flash_msg(t, "%s", t->m->paused ? "pausing after the arm in flight" : "resumed");
	return 0;
}

static int c_view(struct tui *t, const struct words *w)
{
	int v;

	for (v = 0; v < V_N && strcmp(tui_view_names[v], w->a[1]); v++)
		;
	if (v == V_N)
		tui_flash_msg(t, "view: latency | throughput | training");
	else
		t->view = v;
	return 0;
}

static int c_quit(struct tui *t, const struct words *w)
{
	(void)w;
	return tui_quit_asked(t);
}

/* the : commands: name, words (at least, at most), what it does. The node
 * faults are node_verbs' */
static const struct command {
	const char *name;
	int min, max;
	int (*run)(struct tui *t, const struct words *w);
} commands[] = {
	{ "drop", 2, 5, c_drop },   { "delay", 2, 5, c_add },	 { "flap", 2, 5, c_add },
	{ "set", 3, 5, c_set },	    { "on", 2, 2, c_onoff },	 { "off", 2, 2, c_onoff },
	{ "pause", 1, 5, c_pause }, { "resume", 1, 5, c_pause }, { "view", 2, 2, c_view },
	{ "q", 1, 5, c_quit },	    { "quit", 1, 5, c_quit },	 { NULL, 0, 0, NULL },
};

int tui_command(struct tui *t, const char *line)
{
	struct words w = { .line = line };
	const struct command *c;
	int v;

	w.n = sscanf(line, "%63s %63s %63s %63s %63s", w.a[0], w.a[1], w.a[2], w.a[3], w.a[4]);
	if (w.n <= 0)
		return 0;
	for (c = commands; c->name; c++)
		if (!strcmp(c->name, w.a[0]) && w.n >= c->min && w.n <= c->max)
			return c->run(t, &w);
	if ((v = node_verb(w.a[0])) >= 0 && w.n == 2 + node_verbs[v].port) {
		cmd_node(t, v, w.a[1], w.n == 3 ? w.a[2] : NULL);
		return 0;
	}
	tui_flash_msg(t, "unknown command '%s' (? for help)", line);
	return 0;
}

