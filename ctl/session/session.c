// SPDX-License-Identifier: MIT
/*
 * Arms on a set of agents (see session.h): the shapes group, star, pair,
 * and the wait that watches them all at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctl/session/session.h"
#include "lib/hist.h"
#include "lib/log.h"

int pair_open(struct pair *p, const char *client, const char *server)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->c.fd = p->s.fd = -1;
	r = tb_load_rdma(&p->tb);
	if (r) {
		if (r == -ENOENT)
			log_err("no testbed is up (rdmactl testbed up)");
		return r;
	}
	p->ci = tb_node_index(&p->tb, client);
	p->si = tb_node_index(&p->tb, server);
	if (p->ci < 0 || p->si < 0) {
		log_err("unknown node '%s' (testbed has node0..node%d)", p->ci < 0 ? client : server,
			p->tb.nodes - 1);
		return -EINVAL;
	}
	if (p->ci == p->si) {
		log_err("client and server are the same node (%s): endpoints on one rxe device "
			"loop back inside rxe and never touch the wire",
			p->tb.node[p->ci].name);
		return -EINVAL;
	}
	r = tb_agent_open(&p->c, &p->tb, p->ci, 3000);
	if (!r)
		r = tb_agent_open(&p->s, &p->tb, p->si, 3000);
	if (r) {
		log_err("%s: cannot reach the agent: %s", r == 0 ? "" :
			(p->c.fd < 0 ? p->c.where : p->s.where), strerror(-r));
		pair_close(p);
	}
	return r;
}

void pair_close(struct pair *p)
{
	agentc_close(&p->c);
	agentc_close(&p->s);
}

/* only serving members are still running */
static int serving_left(json_t **results, int n, int serve)
{
	int i;

	if (!serve)
		return 0;
	for (i = 0; i < n - serve; i++)
		if (!results[i])
			return 0;
	return 1;
}

/* the wait of arms_wait: its arms, what came back, and the progress line */
struct waiting {
	struct agentc **c;
	const json_int_t *arm;
	int n, left, serve, stopped, tty;
	const struct arms_obs *obs;
	json_t **results, *ivals[TB_MAX_NODES + 1];
	json_int_t prog[TB_MAX_NODES + 1];
	double t0, shown, grace;
	struct hist *last;	/* the latest 250 ms intervals, all arms */
};

/* on a terminal, once a second: the operations done, the latest intervals */
static void progress_line(struct waiting *s)
{
	json_int_t sum = 0;
	int i;

	if (!s->tty || rtb_now_s() - s->shown < 1 || rtb_now_s() - s->t0 < 1)
		return;
	for (i = 0; i < s->n && i <= TB_MAX_NODES; i++)
		sum += s->prog[i];
	fprintf(stderr, "\r  running %.0f s: %lld operations done", rtb_now_s() - s->t0,
		(long long)sum);
	if (s->last->count)
		fprintf(stderr, ", last interval p50 %.1f us p99 %.1f us",
			hist_quantile(s->last, 0.5) / 1e3, hist_quantile(s->last, 0.99) / 1e3);
	fprintf(stderr, "   ");
	hist_init(s->last);
	s->shown = rtb_now_s();
}

/* after a loss: the servers once their clients are through, everyone
 * left after the grace (their wait then ends) */
static void stop_after_loss(struct waiting *s)
{
	int i;

	if (!s->grace || s->stopped >= 2 ||
	    (rtb_now_s() <= s->grace && (s->stopped || !serving_left(s->results, s->n, s->serve))))
		return;
	for (i = 0; i < s->n; i++) {
		json_t *x = NULL;
		char e[256];

		if (!s->results[i] && (rtb_now_s() > s->grace || i >= s->n - s->serve) &&
		    !agentc_call(s->c[i], "stop", json_pack("{s:I}", "arm", s->arm[i]), &x, 5000, e,
				 sizeof(e)))
			json_decref(x);
	}
	s->stopped = rtb_now_s() > s->grace ? 2 : 1;
}

/* one short wait on arm i: its intervals streamed, its result when done;
 * a member lost to a node fault recorded (the others go on). 0 or -errno */
static int wait_one(struct waiting *s, int i, char *err, size_t errlen)
{
	const struct arms_obs *obs = s->obs;
	json_t *w = NULL, *iv, *e;
	size_t k;
	int r, why;

	r = agentc_call(s->c[i], "wait", json_pack("{s:I,s:i}", "arm", s->arm[i], "timeout_ms", 100),
			&w, PROTO_SILENCE_MS, err, errlen);
	if (r && obs && obs->lost && (why = obs->lost(obs->arg, s->c[i]))) {
		s->results[i] = json_pack("{s:s,s:O}", why == 2 ? "lost" : "failed", err, "intervals",
					  s->ivals[i]);
		s->left--;
		if (!s->grace)
			s->grace = rtb_now_s() + ARMS_LOST_GRACE_S;
		return 0;
	}
	if (r)
		return r;
	iv = json_object_get(w, "intervals");
	json_array_foreach(iv, k, e) {
		struct hist h;

		if (!hist_from_json(&h, json_object_get(e, "lat_ns")))
			hist_merge(s->last, &h);
	}
	json_array_extend(s->ivals[i], iv);
	if (obs && obs->intervals)
		obs->intervals(obs->arg, i, iv, json_integer_value(json_object_get(w, "progress")));
	if (json_is_true(json_object_get(w, "done"))) {
		s->results[i] = json_deep_copy(json_object_get(w, "result"));
		/* the intervals as streamed, for reports */
		json_object_set(s->results[i], "intervals", s->ivals[i]);
		s->left--;
	} else {
		s->prog[i] = json_integer_value(json_object_get(w, "progress"));
	}
	json_decref(w);
	return 0;
}

int arms_wait(struct agentc **c, const json_int_t *arm, int n, const struct arms_obs *obs,
	      json_t **results, char *err, size_t errlen)
{
	struct waiting s = { .c = c, .arm = arm, .n = n, .left = n, .obs = obs,
			     .serve = obs ? obs->serve : 0, .results = results, .t0 = rtb_now_s(),
			     .tty = isatty(2) && log_verbose >= 0 && !(obs && obs->intervals) };
	int i, r = 0;

	if (!(s.last = malloc(sizeof(*s.last))))
		return -ENOMEM;
	hist_init(s.last);
	for (i = 0; i < n; i++) {
		results[i] = NULL;
		s.ivals[i] = json_array();
	}
	/* short waits in turn: whichever arm fails is reported at once */
	while (s.left > 0 && !r) {
		if (ctl_interrupted) {
			snprintf(err, errlen, "interrupted");
			r = -EINTR;
			break;
		}
		progress_line(&s);
		stop_after_loss(&s);
		for (i = 0; i < n && !r; i++)
			if (!results[i])
				r = wait_one(&s, i, err, errlen);
	}
	if (s.tty && s.shown)
		fprintf(stderr, "\r%100s\r", "");
	for (i = 0; i < n; i++)
		json_decref(s.ivals[i]);
	free(s.last);
	if (r)
		for (i = 0; i < n; i++) {
			json_decref(results[i]);
			results[i] = NULL;
		}
	return r;
}

/* prepare on cs[i] where opts[i] (stolen) is set: arm[i] its id, ep[i] its
 * endpoint(s) (new reference), for every agent that prepared one */
static int prepare_all(struct agentc *const *cs, int n, const char *wl, const char *role,
		       json_t **opts, json_int_t *arm, json_t **ep, char *err, size_t errlen)
{
	json_t *args[TB_MAX_NODES + 1], *res[TB_MAX_NODES + 1];
	int i, r, nomem = 0;

	for (i = 0; i < n; i++) {
		args[i] = opts[i] ? json_pack("{s:s,s:s,s:o}", "workload", wl, "role", role, "opts",
					      opts[i]) : NULL;
		nomem |= !args[i];
	}
	r = agentc_call_all(cs, n, "prepare", args, res, PROTO_SILENCE_MS, err, errlen);
	if (!r && nomem) {
		snprintf(err, errlen, "prepare: %s", strerror(ENOMEM));
		r = -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (res[i]) {
			arm[i] = json_integer_value(json_object_get(res[i], "arm"));
			ep[i] = json_incref(json_object_get(res[i], "ep"));
			json_decref(res[i]);
		}
	return r;
}

/* connect, start or destroy every arm[i] >= 0 (connect: with peer[i], stolen) */
static int arms_do(struct agentc *const *cs, int n, const char *cmd, const json_int_t *arm,
		   json_t **peer, char *err, size_t errlen)
{
	json_t *args[TB_MAX_NODES + 1];
	int i, r, nomem = 0;

	for (i = 0; i < n; i++) {
		args[i] = arm[i] < 0 ? NULL : json_pack("{s:I}", "arm", arm[i]);
		nomem |= arm[i] >= 0 && (!args[i] || (peer && !peer[i]));
		if (peer && peer[i])	/* taken: set or let go */
			json_object_set_new(args[i], "peer", peer[i]);
	}
	r = agentc_call_all(cs, n, cmd, args, NULL, PROTO_SILENCE_MS, err, errlen);
	if (!r && nomem) {
		snprintf(err, errlen, "%s: %s", cmd, strerror(ENOMEM));
		r = -ENOMEM;
	}
	return r;
}

int star_run(struct agentc *srv, struct agentc *const *cli, int ncli, const char *wl,
	     json_t *opts, int peer_list, const struct arms_obs *obs, json_t **results, char *err,
	     size_t errlen)
{
	json_int_t arm[TB_MAX_NODES + 1];
	json_t *ep[TB_MAX_NODES + 1] = { 0 }, *res[TB_MAX_NODES + 1] = { 0 };
	json_t *o[TB_MAX_NODES + 1] = { 0 }, *peer[TB_MAX_NODES + 1] = { 0 };
	struct agentc *cs[TB_MAX_NODES + 1];
	char derr[256];
	int i, r = 0;

	*results = NULL;
	if (ncli < 1 || ncli > TB_MAX_NODES || (!peer_list && ncli != 1)) {
		snprintf(err, errlen, "%s: %d clients", wl, ncli);
		return -EINVAL;
	}
	/* index 0..ncli-1: the clients, ncli: the server */
	for (i = 0; i <= ncli; i++) {
		cs[i] = i < ncli ? cli[i] : srv;
		arm[i] = -1;
	}
	/* the server first: a bad option fails before any client QP exists;
	 * then every client at once (kv's several: each its number, 1..) */
	o[0] = json_incref(opts);
	r = prepare_all(&srv, 1, wl, "server", o, &arm[ncli], &ep[ncli], err, errlen);
	for (i = 0; i < ncli && !r; i++) {
		o[i] = peer_list ? json_deep_copy(opts) : json_incref(opts);
		if (peer_list)
			json_object_set_new(o[i], "client", json_integer(i + 1));
	}
	if (!r)
		r = prepare_all(cs, ncli, wl, "client", o, arm, ep, err, errlen);
	if (!r) {
		/* the server: every client's endpoint (a list, or the one) */
		json_t *all = json_array();

		for (i = 0; i < ncli; i++)
			json_array_append(all, ep[i]);
		peer[0] = peer_list ? all : json_incref(json_array_get(all, 0));
		if (!peer_list)
			json_decref(all);
		r = arms_do(&srv, 1, "connect", &arm[ncli], peer, err, errlen);
	}
	/* a client: the server's endpoint meant for it */
	for (i = 0; i < ncli && !r; i++)
		peer[i] = json_incref(peer_list ? json_array_get(ep[ncli], (size_t)i) : ep[ncli]);
	if (!r)
		r = arms_do(cs, ncli, "connect", arm, peer, err, errlen);
	/* the server first, then the clients */
	if (!r)
		r = arms_do(&srv, 1, "start", &arm[ncli], NULL, err, errlen);
	if (!r)
		r = arms_do(cs, ncli, "start", arm, NULL, err, errlen);
	if (!r) {
		struct arms_obs so = { 0 };

		if (obs)
			so = *obs;
		so.serve = 1;	/* the server, last */
		r = arms_wait(cs, arm, ncli + 1, &so, res, err, errlen);
	}
	/* every arm is released whatever failed; a failure there is not the headline */
	arms_do(cs, ncli + 1, "destroy", arm, NULL, derr, sizeof(derr));
	for (i = 0; i <= ncli; i++)
		json_decref(ep[i]);
	if (!r) {
		*results = json_array();
		for (i = 0; i <= ncli; i++)
			json_array_append_new(*results, res[i]);
	}
	return r;
}

/* every failure is the pair's own: recorded, the others go on */
static int pair_lost(void *arg, const struct agentc *c)
{
	(void)arg;
	(void)c;
	return 1;
}

int pairs_run(struct agentc *const *cli, struct agentc *const *srv, int m, const char *wl,
	      json_t *opts, json_t **results, char *err, size_t errlen)
{
	/* index 0..m-1: the clients, m..2m-1: their servers (served last) */
	json_int_t arm[TB_MAX_NODES + 1];
	json_t *ep[TB_MAX_NODES + 1] = { 0 }, *res[TB_MAX_NODES + 1] = { 0 };
	json_t *o[TB_MAX_NODES + 1] = { 0 }, *peer[TB_MAX_NODES + 1] = { 0 };
	struct agentc *cs[TB_MAX_NODES + 1];
	struct arms_obs obs = { .lost = pair_lost, .serve = m };
	char derr[256];
	int i, r;

	*results = NULL;
	if (m < 1 || 2 * m > TB_MAX_NODES) {
		snprintf(err, errlen, "%s: %d pairs at once (at most %d)", wl, m, TB_MAX_NODES / 2);
		return -EINVAL;
	}
	for (i = 0; i < 2 * m; i++) {
		cs[i] = i < m ? cli[i] : srv[i - m];
		arm[i] = -1;
		o[i] = json_incref(opts);
	}
	r = prepare_all(cs + m, m, wl, "server", o + m, arm + m, ep + m, err, errlen);
	if (!r)
		r = prepare_all(cs, m, wl, "client", o, arm, ep, err, errlen);
	else
		for (i = 0; i < m; i++)
			json_decref(o[i]);
	/* each end gets the other's endpoint */
	for (i = 0; i < 2 * m && !r; i++)
		peer[i] = json_incref(ep[i < m ? i + m : i - m]);
	if (!r)
		r = arms_do(cs, 2 * m, "connect", arm, peer, err, errlen);
	if (!r)
		r = arms_do(cs + m, m, "start", arm + m, NULL, err, errlen);
	if (!r)
		r = arms_do(cs, m, "start", arm, NULL, err, errlen);
	if (!r)
		r = arms_wait(cs, arm, 2 * m, &obs, res, err, errlen);
	arms_do(cs, 2 * m, "destroy", arm, NULL, derr, sizeof(derr));
	for (i = 0; i < 2 * m; i++)
		json_decref(ep[i]);
	if (!r) {
		*results = json_array();
		for (i = 0; i < m; i++)
			json_array_append_new(*results, json_pack("[OO]", res[i], res[i + m]));
	}
	for (i = 0; i < 2 * m; i++)
		json_decref(res[i]);
	return r;
}

static int group_connect(struct group *g);

int group_open(struct group *g, const char *nodes)
{
	char buf[256], *tok, *save;
	int r, i;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < TB_MAX_NODES; i++)
		g->c[i].fd = -1;
	r = tb_load_rdma(&g->tb);
	if (r) {
		if (r == -ENOENT)
			log_err("no testbed is up (rdmactl testbed up)");
		return r;
	}
	if (!nodes) {
		for (i = 0; i < g->tb.nodes; i++)
			g->node[g->n++] = i;
	} else {
		snprintf(buf, sizeof(buf), "%s", nodes);
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int k = tb_node_index(&g->tb, tok);

			if (k < 0) {
				log_err("unknown node '%s' (testbed has node0..node%d)", tok,
					g->tb.nodes - 1);
				return -EINVAL;
			}
			for (i = 0; i < g->n; i++)
				if (g->node[i] == k) {
					log_err("node '%s' listed twice", tok);
					return -EINVAL;
				}
			g->node[g->n++] = k;
		}
	}
	return group_connect(g);
}

int group_open_state(struct group *g, const struct tb_state *s)
{
	int i;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < TB_MAX_NODES; i++)
		g->c[i].fd = -1;
	g->tb = *s;
	for (i = 0; i < s->nodes; i++)
		g->node[g->n++] = i;
	return group_connect(g);
}

/* one control connection per member */
static int group_connect(struct group *g)
{
	int i, r;

	if (g->n < 2) {
		log_err("a collective needs at least 2 nodes");
		return -EINVAL;
	}
	for (i = 0; i < g->n; i++) {
		r = tb_agent_open(&g->c[i], &g->tb, g->node[i], 3000);
		if (r) {
			log_err("%s: cannot reach the agent: %s", g->c[i].where, strerror(-r));
			group_close(g);
			return r;
		}
	}
	return 0;
}

void group_close(struct group *g)
{
	int i;

	for (i = 0; i < TB_MAX_NODES; i++)
		if (g->c[i].fd >= 0)
			agentc_close(&g->c[i]);
}

int group_run(struct group *g, const char *wl, json_t *opts, json_t **results, char *err,
	      size_t errlen)
{
	json_int_t arm[TB_MAX_NODES];
	json_t *eps[TB_MAX_NODES] = { 0 }, *res[TB_MAX_NODES] = { 0 }, *o[TB_MAX_NODES];
	json_t *peers[TB_MAX_NODES];
	struct agentc *cs[TB_MAX_NODES];
	char derr[256];
	int i, j, r = 0;

	*results = NULL;
	/* every step on every rank at once: each agent's own time, not n of them */
	for (i = 0; i < g->n; i++) {
		cs[i] = &g->c[i];
		arm[i] = -1;
		o[i] = json_deep_copy(opts);
		json_object_set_new(o[i], "rank", json_integer(i));
		json_object_set_new(o[i], "nranks", json_integer(g->n));
	}
	r = prepare_all(cs, g->n, wl, "rank", o, arm, eps, err, errlen);
	for (i = 0; i < g->n && !r; i++) {
		peers[i] = json_array();
		for (j = 0; j < g->n; j++)
			json_array_append(peers[i], j == i ? json_null() :
					  json_array_get(eps[j], (size_t)i));
	}
	if (!r)
		r = arms_do(cs, g->n, "connect", arm, peers, err, errlen);
	if (!r)
		r = arms_do(cs, g->n, "start", arm, NULL, err, errlen);
	if (!r)
		r = arms_wait(cs, arm, g->n, &g->obs, res, err, errlen);
	arms_do(cs, g->n, "destroy", arm, NULL, derr, sizeof(derr));
	for (i = 0; i < g->n; i++)
		json_decref(eps[i]);
	if (!r) {
		*results = json_array();
		for (i = 0; i < g->n; i++)
			json_array_append(*results, res[i]);
	}
	for (i = 0; i < g->n; i++)
		json_decref(res[i]);
	return r;
}
