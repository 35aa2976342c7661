// SPDX-License-Identifier: MIT
/*
 * Node faults on the run's timeline (a profile's faults with event:, per-node
 * VMs only): a thread that, from when the rules are added (t0), crashes,
 * freezes, reboots a node or takes its switch port down at each event's
 * start, and thaws it or brings the port up at start + duration. What it did
 * and when is the report's "node_events". The measuring side asks it which
 * nodes an event has hit (a generation count per node) and waits for a node
 * to be back before an arm uses it again. The TUI adds faults by hand to
 * the same timeline (exp_nodes_act): the same bookkeeping, "by hand" as
 * their fault's name.
 *
 * An event with from: traffic counts its start from the first RoCE packet
 * the node sends: a thread a node puts a count rule on its switch port (the
 * switch's agent, leased to that thread's connection) and asks rdma-inject
 * wait when a packet came; until then the event has no time.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ctl/exp/exp.h"
#include "ctl/exp/inject.h"
#include "ctl/testbed/testbed.h"
#include "lib/clock.h"
#include "lib/log.h"

enum { NF_UP, NF_DOWN, NF_BOOTING, NF_FROZEN, NF_CUT };
static const char *const nf_state_names[] = { "up", "down", "booting", "frozen", "cut off" };

struct nf_act {
	double at;	/* seconds from t0 */
	int fault;	/* index in the profile's faults; -1: by hand (the TUI) */
	int node;	/* testbed node */
	int undo;	/* thaw or port up, at start + duration */
	int event;	/* an enum prof_event */
	int traffic;	/* from traffic: at is off + when the node's traffic began */
	double off;	/* from traffic: seconds from it */
};

#define NF_NOT_YET 1e12	/* a time to come once the node's traffic has begun */

struct exp_nodes {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started, stop, nact, next;
	int busy;		/* actions by hand under way: stop waits for them */
	double t0;
	struct nf_act act[PROF_MAX_FAULTS * TB_MAX_NODES * 2];
	int state[TB_MAX_NODES];
	unsigned gen[TB_MAX_NODES];
	char why[TB_MAX_NODES][160];	/* the last event's words, for "not run" */
	json_t *log;
	const struct profile *p;
	struct exp *e;		/* its events told (the TUI's events pane, the log) */
	char name[TB_MAX_NODES][32];
	/* from traffic: a thread a node waiting for its first RoCE packet, its
	 * connection (shut down to stop it), when the packet came (s from t0) */
	pthread_t wt[TB_MAX_NODES];
	int wfd[TB_MAX_NODES], waiting[TB_MAX_NODES];
	double traffic[TB_MAX_NODES];
};

static int act_cmp(const void *a, const void *b)
{
	const struct nf_act *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->fault != y->fault ? x->fault - y->fault : x->node - y->node;
}

static enum tb_node_fault tb_fault_of(int event, int undo)
{
	switch (event) {
	case PEV_CRASH:
		return TB_CRASH;
	case PEV_FREEZE:
		return undo ? TB_THAW : TB_FREEZE;
	case PEV_REBOOT:
		return TB_REBOOT;
	case PEV_NIC_RESET:
		return TB_NIC_RESET;
	default:
		return undo ? TB_PORT_UP : TB_PORT_DOWN;
	}
}

static const char *act_name(int event, int undo)
{
	if (!undo)
		return prof_event_names[event];
	return event == PEV_FREEZE ? "thaw" : "port-up";
}

static const char *fault_name(const struct exp_nodes *nf, const struct nf_act *a)
{
	return a->fault < 0 ? "by hand" : nf->p->fault[a->fault].name;
}

/* o with what from traffic meant for a: when the node's traffic began
 * (seconds from t0, null: not before the run ended) */
static json_t *traffic_note(const struct exp_nodes *nf, const struct nf_act *a, json_t *o)
{
	if (o && a->traffic) {
		json_object_set_new(o, "from_traffic_s", json_real(a->off));
		json_object_set_new(o, "traffic_s", nf->traffic[a->node] > 0 ?
					   json_real(nf->traffic[a->node]) : json_null());
		if (a->at >= NF_NOT_YET)
			json_object_set_new(o, "planned_s", json_null());
	}
	return o;
}

/* node's events from traffic get their times: traffic began at t (s from
 * t0); the actions to come sorted again (nf->mu held) */
static void nf_anchor(struct exp_nodes *nf, int node, double t)
{
	nf->traffic[node] = t;
	for (int i = nf->next; i < nf->nact; i++)
		if (nf->act[i].node == node && nf->act[i].traffic)
			nf->act[i].at = t + nf->act[i].off;
	qsort(nf->act + nf->next, (size_t)(nf->nact - nf->next), sizeof(nf->act[0]), act_cmp);
	pthread_cond_broadcast(&nf->cv);
}

struct nf_wait {
	struct exp_nodes *nf;
	int node;
};

/* the first RoCE packet node i sends, at its switch port: a count rule
 * there, leased to this thread's connection, and rdma-inject wait, a second
 * at a time (so that a stop is never long in coming) */
static void *nf_wait_thread(void *arg)
{
	struct nf_wait *w = arg;
	struct exp_nodes *nf = w->nf;
	struct prof_fault cf = { .rule = "count" };
	char dev[16], err[256], above[24] = "";
	struct agentc c;
	int n = w->node, id;

	free(w);
	tb_switch_port(n, dev, sizeof(dev));
	if (tb_switch_open(&c, &nf->e->g.tb, 5000)) {
		exp_event(nf->e, "node faults from traffic: %s: the switch's agent does not answer",
			  nf->name[n]);
		return NULL;
	}
	pthread_mutex_lock(&nf->mu);
	nf->wfd[n] = nf->stop ? -1 : c.fd;
	pthread_mutex_unlock(&nf->mu);
	if (nf->wfd[n] < 0 || (id = inject_fault_add(&c, &cf, dev, err, sizeof(err))) < 0) {
		if (nf->wfd[n] >= 0)
			exp_event(nf->e, "node faults from traffic: %s: %s", nf->name[n], err);
		goto out;
	}
	for (;;) {
		json_t *res = NULL, *o, *args;
		int seen, r;

		pthread_mutex_lock(&nf->mu);
		r = nf->stop;
		pthread_mutex_unlock(&nf->mu);
		if (r)
			break;
		args = json_pack("[sssss]", "-j", "wait", "dev", dev, "ingress");
		if (above[0]) {	/* counted since the first ask */
			json_array_append_new(args, json_string("above"));
			json_array_append_new(args, json_string(above));
		}
		json_array_append_new(args, json_string("for"));
		json_array_append_new(args, json_string("1s"));
		r = agentc_call(&c, "inject", json_pack("{s:o}", "args", args), &res, 10000, err,
				sizeof(err));
		o = r ? NULL : json_loads(json_string_value(json_object_get(res, "stdout")) ?: "",
					  0, NULL);
		json_decref(res);
		if (!o) {
			if (!nf->stop)
				exp_event(nf->e, "node faults from traffic: %s: rdma-inject wait: %s",
					  nf->name[n], r ? err : "no answer");
			break;
		}
		seen = json_is_true(json_object_get(o, "seen"));
		/* the switch's agent is on this host: its clock is ours */
		double t = (double)json_integer_value(json_object_get(o, "t_ns")) / 1e9;

		snprintf(above, sizeof(above), "%lld",
			 (long long)json_integer_value(json_object_get(o, "roce_pkts")));
		json_decref(o);
		if (seen) {
			double now = rtb_now_s();

			if (t > now || t < now - 5)
				t = now;
			pthread_mutex_lock(&nf->mu);
			nf_anchor(nf, n, t - nf->t0);
			pthread_mutex_unlock(&nf->mu);
			break;
		}
	}
out:
	pthread_mutex_lock(&nf->mu);
	nf->wfd[n] = -1;
	pthread_mutex_unlock(&nf->mu);
	agentc_close(&c);	/* the count rule goes with its lease */
	return NULL;
}

/* one action, nf->mu held (let go while the testbed acts; the testbed's
 * lock puts actions from the thread and the TUI one after the other) */
static int nf_do(struct exp_nodes *nf, const struct nf_act *a, int at_end)
{
	struct tb_state *s = malloc(sizeof(*s));	/* large: up to 256 nodes */
	double t = rtb_now_s() - nf->t0, took;
	char err[512] = "";
	pid_t old = 0;
	int r = -ENOMEM, n = a->node, ev = a->event;

	if (!a->undo) {
		nf->gen[n]++;
		nf->state[n] = ev == PEV_CRASH ? NF_DOWN : ev == PEV_FREEZE ? NF_FROZEN :
			       ev == PEV_REBOOT || ev == PEV_NIC_RESET ? NF_BOOTING : NF_CUT;
		snprintf(nf->why[n], sizeof(nf->why[n]), "%s at %.1f s (fault %s)",
			 ev == PEV_CRASH ? "crashed" : act_name(ev, 0), t, fault_name(nf, a));
	}
	pthread_mutex_unlock(&nf->mu);
	if (s)
		r = tb_fault_node(nf->name[n], tb_fault_of(ev, a->undo), 300, s, &old, err,
				  sizeof(err));
	else
		snprintf(err, sizeof(err), "%s", strerror(ENOMEM));
	free(s);
	took = rtb_now_s() - nf->t0 - t;
	pthread_mutex_lock(&nf->mu);
	if (a->undo || ev == PEV_REBOOT || ev == PEV_NIC_RESET)
		nf->state[n] = r < 0 && ev == PEV_REBOOT ? NF_DOWN : NF_UP;
	if (r < 0 && !a->undo && ev != PEV_REBOOT)
		nf->state[n] = NF_UP;	/* it did not happen: the node is as it was */
	if (r < 0)
		snprintf(nf->why[n], sizeof(nf->why[n]), "%s failed at %.1f s: %s",
			 act_name(ev, a->undo), t, err);
	json_array_append_new(nf->log, traffic_note(nf, a,
			      json_pack("{s:s,s:s,s:s,s:f,s:f,s:f,s:b,s:s*,s:s*}", "fault",
					fault_name(nf, a), "event", act_name(ev, a->undo), "node",
					nf->name[n], "planned_s", a->at, "t_s", t, "took_s", took,
					"at_run_end", at_end, "error", r < 0 ? err : NULL, "detail",
					r >= 0 && err[0] ? err : NULL)));
	if (nf->e)
		exp_event(nf->e, "node fault %s: %s %s at %.1f s%s%s", fault_name(nf, a),
			  act_name(ev, a->undo), nf->name[n], t, r < 0 ? ": " : "",
			  r < 0 ? err : "");
	pthread_cond_broadcast(&nf->cv);
	return r < 0 ? r : 0;
}

static void *nf_thread(void *arg)
{
	struct exp_nodes *nf = arg;

	pthread_mutex_lock(&nf->mu);
	while (!nf->stop && nf->next < nf->nact) {
		struct nf_act *a = &nf->act[nf->next];
		double wait = a->at - (rtb_now_s() - nf->t0);

		if (wait > 0) {
			struct timespec ts;

			rtb_deadline(&ts, wait);
			pthread_cond_timedwait(&nf->cv, &nf->mu, &ts);
			continue;
		}
		nf->next++;
		nf_do(nf, a, 0);
	}
	pthread_mutex_unlock(&nf->mu);
	return NULL;
}

int exp_nodes_start(struct exp *e, char *err, size_t errlen)
{
	struct exp_nodes *nf;
	pthread_condattr_t ca;
	int i, k, r;

	for (i = 0; i < e->p.nfaults && !e->p.fault[i].event; i++)
		;
	if (i == e->p.nfaults && !(e->o.node_faults_by_hand && exp_per_node(e)))
		return 0;
	if (i < e->p.nfaults && !exp_per_node(e)) {
		snprintf(err, errlen, "fault %s: event %s needs a kernel a node "
			 "(testbed up --topology per-node)", e->p.fault[i].name, e->p.fault[i].rule);
		return -EOPNOTSUPP;
	}
	nf = calloc(1, sizeof(*nf));
	if (!nf) {
		snprintf(err, errlen, "node faults: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	nf->p = &e->p;
	nf->e = e;
	nf->log = json_array();
	e->hits = json_array();
	for (i = 0; i < e->g.tb.nodes && i < TB_MAX_NODES; i++)
		snprintf(nf->name[i], sizeof(nf->name[i]), "%s", e->g.tb.node[i].name);
	for (i = 0; i < e->p.nfaults; i++) {
		const struct prof_fault *f = &e->p.fault[i];

		if (!f->event)
			continue;
		for (k = 0; k < e->g.n; k++) {
			struct nf_act a = { f->start_ns / 1e9, i, e->g.node[k], 0, f->event,
					    f->from_traffic, f->start_ns / 1e9 };

			if (!(f->nodes & (1u << e->g.node[k])))
				continue;
			if (a.traffic) {
				a.at = NF_NOT_YET;
				nf->waiting[a.node] = 1;
			}
			nf->act[nf->nact++] = a;
			if (f->duration_ns) {
				a.at += a.traffic ? 0 : f->duration_ns / 1e9;
				a.off += f->duration_ns / 1e9;
				a.undo = 1;
				nf->act[nf->nact++] = a;
			}
		}
	}
	qsort(nf->act, (size_t)nf->nact, sizeof(nf->act[0]), act_cmp);
	pthread_mutex_init(&nf->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&nf->cv, &ca);
	pthread_condattr_destroy(&ca);
	for (i = 0; i < TB_MAX_NODES; i++)
		nf->wfd[i] = -1;
	nf->t0 = rtb_now_s();
	if ((r = pthread_create(&nf->th, NULL, nf_thread, nf))) {
		snprintf(err, errlen, "node faults: a thread: %s", strerror(r));
		json_decref(nf->log);
		free(nf);
		return -r;
	}
	nf->started = 1;
	e->nf = nf;
	for (i = 0; i < TB_MAX_NODES; i++) {	/* events from traffic: its first packet */
		struct nf_wait *w;

		if (!nf->waiting[i])
			continue;
		nf->waiting[i] = 0;
		w = malloc(sizeof(*w));
		if (w) {
			*w = (struct nf_wait){ nf, i };
			if (!pthread_create(&nf->wt[i], NULL, nf_wait_thread, w)) {
				nf->waiting[i] = 1;
				continue;
			}
			free(w);
		}
		exp_event(e, "node faults from traffic: %s: no thread to wait with", nf->name[i]);
	}
	return 0;
}

void exp_nodes_stop(struct exp *e)
{
	struct exp_nodes *nf = e->nf;
	int i;

	if (!nf || !nf->started)
		return;
	pthread_mutex_lock(&nf->mu);
	nf->stop = 1;
	for (i = 0; i < TB_MAX_NODES; i++)	/* a wait for traffic ends now */
		if (nf->wfd[i] >= 0)
			shutdown(nf->wfd[i], SHUT_RDWR);
	pthread_cond_broadcast(&nf->cv);
	pthread_mutex_unlock(&nf->mu);
	pthread_join(nf->th, NULL);
	for (i = 0; i < TB_MAX_NODES; i++)
		if (nf->waiting[i]) {
			pthread_join(nf->wt[i], NULL);
			nf->waiting[i] = 0;
		}
	pthread_mutex_lock(&nf->mu);
	while (nf->busy)	/* a reboot by hand: until its agent is back */
		pthread_cond_wait(&nf->cv, &nf->mu);
	nf->started = 0;
	/* what the run did not reach: its undo now (nothing stays frozen or cut
	 * off), its events never */
	for (i = nf->next; i < nf->nact; i++) {
		struct nf_act *a = &nf->act[i];

		if (a->undo && (nf->state[a->node] == NF_FROZEN || nf->state[a->node] == NF_CUT))
			nf_do(nf, a, 1);
		else if (!a->undo)
			json_array_append_new(nf->log, traffic_note(nf, a,
					      json_pack("{s:s,s:s,s:s,s:f,s:b}", "fault",
							fault_name(nf, a), "event",
							act_name(a->event, 0), "node",
							nf->name[a->node], "planned_s", a->at,
							"reached", 0)));
	}
	nf->next = nf->nact;
	/* what was done by hand and not undone: undone now */
	for (i = 0; i < TB_MAX_NODES; i++)
		if (nf->state[i] == NF_FROZEN || nf->state[i] == NF_CUT) {
			struct nf_act a = { rtb_now_s() - nf->t0, -1, i, 1,
					    nf->state[i] == NF_FROZEN ? PEV_FREEZE : PEV_PORT_DOWN };

			nf_do(nf, &a, 1);
		}
	pthread_mutex_unlock(&nf->mu);
}

int exp_nodes_act(struct exp *e, int node, int event, int undo, char *err, size_t len)
{
	struct exp_nodes *nf = e->nf;
	struct nf_act a = { 0, -1, node, undo, event };
	int r;

	if (!nf) {
		snprintf(err, len, "node faults need a kernel a node (testbed up --topology "
			 "per-node)");
		return -EOPNOTSUPP;
	}
	if (node < 0 || node >= e->g.tb.nodes || node >= TB_MAX_NODES) {
		snprintf(err, len, "no node %d", node);
		return -EINVAL;
	}
	pthread_mutex_lock(&nf->mu);
	if (!nf->started || nf->stop) {
		pthread_mutex_unlock(&nf->mu);
		snprintf(err, len, "the run is over");
		return -ESRCH;
	}
	nf->busy++;
	a.at = rtb_now_s() - nf->t0;
	r = nf_do(nf, &a, 0);
	snprintf(err, len, "%s", nf->why[node]);
	nf->busy--;
	pthread_cond_broadcast(&nf->cv);
	pthread_mutex_unlock(&nf->mu);
	return r;
}

void exp_nodes_free(struct exp *e)
{
	struct exp_nodes *nf = e->nf;

	if (!nf)
		return;
	exp_nodes_stop(e);
	json_decref(nf->log);
	pthread_mutex_destroy(&nf->mu);
	pthread_cond_destroy(&nf->cv);
	free(nf);
	e->nf = NULL;
}

json_t *exp_nodes_report(struct exp *e)
{
	struct exp_nodes *nf = e->nf;
	json_t *r;

	if (!nf)
		return NULL;
	pthread_mutex_lock(&nf->mu);
	r = json_deep_copy(nf->log);
	pthread_mutex_unlock(&nf->mu);
	return r;
}

void exp_nodes_gens(struct exp *e, unsigned *gen)
{
	struct exp_nodes *nf = e->nf;

	memset(gen, 0, sizeof(*gen) * TB_MAX_NODES);
	if (!nf)
		return;
	pthread_mutex_lock(&nf->mu);
	memcpy(gen, nf->gen, sizeof(nf->gen));
	pthread_mutex_unlock(&nf->mu);
}

double exp_nodes_now(const struct exp *e)
{
	return e->nf ? rtb_now_s() - e->nf->t0 : 0;
}

/* node is down, but a reboot of it is still to come (nf->mu held) */
static int reboot_ahead(const struct exp_nodes *nf, int node)
{
	int i;

	for (i = nf->next; i < nf->nact; i++)
		if (nf->act[i].node == node && !nf->act[i].undo &&
		    nf->p->fault[nf->act[i].fault].event == PEV_REBOOT)
			return 1;
	return 0;
}

int exp_nodes_wait_up(struct exp *e, int node, char *why, size_t len)
{
	struct exp_nodes *nf = e->nf;
	double until = rtb_now_s() + 330;	/* a boot's time, with room */
	int st, i;

	if (!nf)
		return 0;
	pthread_mutex_lock(&nf->mu);
	for (i = nf->next; i < nf->nact; i++)	/* and until the last event to come */
		if (nf->act[i].node == node && nf->act[i].at < NF_NOT_YET &&
		    nf->t0 + nf->act[i].at + 330 > until)
			until = nf->t0 + nf->act[i].at + 330;
	while ((nf->state[node] == NF_BOOTING || nf->state[node] == NF_FROZEN ||
		(nf->state[node] == NF_DOWN && reboot_ahead(nf, node))) &&
	       rtb_now_s() < until && !ctl_interrupted) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&nf->cv, &nf->mu, &ts);
	}
	st = nf->state[node];
	snprintf(why, len, "%s is %s: %s", nf->name[node], nf_state_names[st], nf->why[node]);
	pthread_mutex_unlock(&nf->mu);
	return st == NF_UP || st == NF_CUT ? 0 : -ENODEV;
}
