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
#include "ctl/tui/tui.h"
#include "lib/log.h"

static void *worker(void *arg)
{
	struct tui *t = arg;

	char verdict[48] = "";
	json_t *rep, *x;
	size_t i, n;

	exp_measure(t->e);
	/* the expectations on what ran, as the report will have them: one
	 * event each and the count in the title (the report is written when
	 * the TUI quits) */
	if (t->e->p.nexpect && !ctl_interrupted && (rep = exp_report(t->e))) {
		n = json_array_size(json_object_get(rep, "expectations"));
		json_array_foreach(json_object_get(rep, "expectations"), i, x)
			model_event(t->m, "%s %s", json_is_true(json_object_get(x, "held")) ? "ok" :
				    "FAILED", json_string_value(json_object_get(x, "message")));
		snprintf(verdict, sizeof(verdict), ", expectations %zu of %zu held",
			 n - (size_t)t->e->expect_failed, n);
		json_decref(rep);
	}
	pthread_mutex_lock(&t->m->lock);
	t->worker_stopped = ctl_interrupted;
	t->worker_done = 1;
	t->m->done = 1;
	snprintf(t->m->status, sizeof(t->m->status), "%s%s",
		 ctl_interrupted ? "stopped" : t->e->rc ? "an arm failed" : "all rounds done", verdict);
	pthread_mutex_unlock(&t->m->lock);
	return NULL;
}

static void on_sig(int sig)
{
	(void)sig;
	ctl_interrupted = 1;
}

/* a key; 1 to quit */
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
	if (tb_load_rdma(&s)) {
		log_err("tui --attach: no testbed is up");
		return CTL_FAIL;
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
		return CTL_FAIL;
	}
	for (i = 0; i < s.nodes && i < 16; i++) {
		if (tb_agent_open(&t.ctl[i], &s, i, 3000)) {
			log_err("tui --attach: %s: no control connection", s.node[i].name);
			break;
		}
		snprintf(m.node[i].name, sizeof(m.node[i].name), "%s", s.node[i].name);
		t.nctl = i + 1;
	}
	m.nnodes = t.nctl;
	tui_curses_start(&t);
	while (!quit) {
		int ch = getch();

		if (ch != ERR)
			quit = tui_key(&t, ch);
		if (rtb_now_s() - t.polled >= 1 && t.nctl) {
			tui_poll_rules(&t);
			t.polled = rtb_now_s();
		}
		if (rtb_now_s() - t.nodes_polled >= 3 && t.nctl) {
			tui_poll_nodes(&t);
			t.nodes_polled = rtb_now_s();
		}
		if (load_live(&t) && !gone) {
			gone = 1;
			m.done = 1;
			model_event(&m, "the run is over (no %s)", t.live);
		}
		tui_draw(&t);
	}
	endwin();
	for (i = 0; i < t.nctl; i++)
		agentc_close(&t.ctl[i]);
	json_decref(t.stats);
	model_fini(&m);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmactl tui PROFILE [-o DIR] [--set key.path=value]... [--keep]\n"
		   "       rdmactl tui --attach\n"
		   "  runs the profile like 'rdmactl run', live on screen (80x24 or more);\n"
		   "  --attach views the experiment a running 'rdmactl run' publishes\n"
		   "  press ? inside for every key\n");
}

/* the screen's loop: keys, the rules polled each second and the nodes
 * every 3 s, the model published (tui --attach) and drawn, until a quit */
static void screen_loop(struct tui *t)
{
	int quit = 0;

	while (!quit) {
		int ch = getch();

		if (ch != ERR)
			quit = tui_key(t, ch);
		if (ctl_interrupted)
			quit = 1;
		if (rtb_now_s() - t->polled >= 1) {
			tui_poll_rules(t);
			t->polled = rtb_now_s();
		}
		if (rtb_now_s() - t->nodes_polled >= 3) {
			tui_poll_nodes(t);
			t->nodes_polled = rtb_now_s();
		}
		model_publish(t->m, 0);
		tui_draw(t);
	}
}

/* the model of the run, and a control connection to every node: 0, or
 * -EIO when one cannot be reached (said) */
static int tui_setup(struct tui *t, struct exp *e, struct model *m)
{
	int i;

	model_init(m, &e->p, e->wl->measure);
	model_obs(m, &e->obs);
	t->e = e;
	t->m = m;
	m->nnodes = e->g.n;
	t->nctl = 0;
	for (i = 0; i < e->g.n; i++) {
		snprintf(m->node[i].name, sizeof(m->node[i].name), "%s",
			 e->g.tb.node[e->g.node[i]].name);
		snprintf(m->node[i].dev, sizeof(m->node[i].dev), "%s", e->g.tb.node[e->g.node[i]].dev);
		if (tb_agent_open(&t->ctl[i], &e->g.tb, e->g.node[i], 3000)) {
			log_err("tui: %s: no control connection", m->node[i].name);
			return -EIO;
		}
		t->nctl = i + 1;
	}
	return 0;
}

/* the run on screen, its worker beside it; the rules typed in removed at
 * the end */
static void tui_run(struct tui *t)
{
	pthread_t th;
	int i;

	model_event(t->m, "profile %s: %d arm(s), %d fault rule(s); ? for help", t->e->p.name,
		    t->e->p.narms, t->e->p.nfaults);
	tui_curses_start(t);
	tui_poll_nodes(t);
	tui_poll_rules(t);
	pthread_create(&th, NULL, worker, t);
	screen_loop(t);
	model_unpublish();
	/* a quit before the last round ended interrupts the run, also when the
	 * worker, told to stop, finished before this line (it said so); a quit
	 * after all rounds does not */
	pthread_mutex_lock(&t->m->lock);
	ctl_interrupted = !t->worker_done || t->worker_stopped;
	pthread_mutex_unlock(&t->m->lock);
	mvprintw(LINES - 1, 0, "%-*s", COLS, " stopping: the arm in flight, then rules and report...");
	refresh();
	pthread_join(th, NULL);
	endwin();
	for (i = 0; i < t->nadded; i++) {	/* the rules we added */
		char id[16], out[256];

		snprintf(id, sizeof(id), "%d", t->added[i]);
		tui_inject(t, json_pack("[ss]", "del", id), 0, out, sizeof(out));
	}
	t->e->extra_rules = t->nadded;
}

int cmd_tui(struct ctl *ctl, int argc, char **argv)
{
	static struct exp e;
	static struct model m;
	static struct tui t;
	struct sigaction sa = { .sa_handler = on_sig }, old_int, old_term;
	struct exp_opts o;
	int r, i;

	for (i = 0; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
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
	r = exp_load(&e, argc, argv, &o, usage);
	o.node_faults_by_hand = 1;	/* :crash node2 and the like */
	if (!r)
		r = exp_open(&e, ctl, &o);
	if (r) {
		exp_close(&e);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		return ctl_code(r);
	}
	if (tui_setup(&t, &e, &m))
		e.rc = 1;
	else
		tui_run(&t);
	for (i = 0; i < t.nctl; i++)
		agentc_close(&t.ctl[i]);
	r = exp_finish(&e);	/* waits for a node fault typed in and under way */
	while (__atomic_load_n(&t.acting, __ATOMIC_ACQUIRE))	/* then for its last words */
		usleep(20 * 1000);
	model_fini(&m);
	exp_close(&e);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return r;
}

