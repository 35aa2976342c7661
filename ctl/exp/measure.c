// SPDX-License-Identifier: MIT
/*
 * Measuring (exp.h): the one rounds loop of every workload. Arms take
 * turns -- each round every arm once, on the same nodes under the same
 * fault rules -- rather than run at once, so that each has the CPUs (and
 * rxe's kernel threads) to itself while measured: run together, the one
 * stalled in retransmission timeouts would hand its CPU time to the others.
 * Workloads that are a whole job (train) run each arm once.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "ctl/exp/exec.h"
#include "ctl/exp/exp.h"
#include "lib/hist.h"
#include "lib/log.h"

json_t *exp_arm_opts(const struct profile *p, const struct wlc *wl, int a, uint64_t iters,
		     uint64_t warm, int members)
{
	json_t *o = json_deep_copy(p->wopts);

	json_object_update(o, p->arm[a].opts);
	if (wl->arm_opts)
		wl->arm_opts(o, p->arm[a].mode, iters, warm, members);
	return o;
}

/* a member of the run's results was lost or failed to a node fault */
static int members_hit(const json_t *res)
{
	const json_t *x;
	size_t i;

	json_array_foreach(res, i, x)
		if (json_object_get(x, "lost") || json_object_get(x, "failed"))
			return 1;
	return 0;
}

/* a member's result as the node fault left it: its outcome, how far it got
 * (the intervals it streamed), what it said, without its bulk */
static json_t *member_effect(struct exp *e, int i, const json_t *x)
{
	const json_t *iv = json_object_get(x, "intervals"), *v;
	json_t *o = json_object(), *res;
	json_int_t ops = 0, lost = 0, first = 0, last = 0;
	const char *k;
	size_t j;
	int m = e->res_member[i];

	json_object_set_new(o, "node", json_string(e->g.tb.node[e->g.node[m]].name));
	json_object_set_new(o, "outcome", json_string(json_object_get(x, "lost") ? "lost" :
						      json_object_get(x, "failed") ? "failed" :
						      "completed"));
	if ((v = json_object_get(x, "lost")) || (v = json_object_get(x, "failed")))
		json_object_set(o, "error", (json_t *)v);
	json_array_foreach(iv, j, v) {
		struct hist h;

		if (!hist_from_json(&h, json_object_get(v, "lat_ns")))
			ops += (json_int_t)h.count;
		lost += json_integer_value(json_object_get(v, "lost_pieces"));
		if (!j)
			first = json_integer_value(json_object_get(v, "t_start_ns"));
		last = json_integer_value(json_object_get(v, "t_ns"));
	}
	/* its steps through the fault: the samples it streamed, and over how long */
	json_object_set_new(o, "intervals", json_integer((json_int_t)json_array_size(iv)));
	json_object_set_new(o, "ops_streamed", json_integer(ops));
	json_object_set_new(o, "streamed_s", json_real(iv && last > first ? (last - first) / 1e9 : 0));
	if (lost)
		json_object_set_new(o, "lost_pieces_streamed", json_integer(lost));
	if (!json_object_get(x, "lost") && !json_object_get(x, "failed")) {
		res = json_object();
		json_object_foreach((json_t *)x, k, v)	/* its figures, not its histograms */
			if (!json_is_array(v) && !json_is_object(v))
				json_object_set(res, k, (json_t *)v);
		json_object_set_new(o, "result", res);
	}
	return o;
}

/* what the node faults since the arm began did to it: into e->hits */
static void record_hit(struct exp *e, int a, uint64_t rd, const json_t *res, const char *err)
{
	json_t *h, *evs = json_array(), *all = exp_nodes_report(e), *x;
	double now = exp_nodes_now(e);
	size_t i;

	json_array_foreach(all, i, x) {
		double t = json_real_value(json_object_get(x, "t_s"));

		if (json_object_get(x, "t_s") && t >= e->arm_t - 0.001 && t <= now)
			json_array_append(evs, x);
	}
	json_decref(all);
	h = json_pack("{s:s,s:I,s:f,s:f,s:o}", "arm", e->p.arm[a].name, "round", (json_int_t)rd + 1,
		      "began_s", e->arm_t, "ended_s", now, "events", evs);
	if (err) {
		json_object_set_new(h, "outcome", json_string("failed"));
		json_object_set_new(h, "error", json_string(err));
	} else {
		json_t *ms = json_array();

		json_object_set_new(h, "outcome", json_string(members_hit(res) ? "members lost" :
							      "completed"));
		json_array_foreach(res, i, x)
			json_array_append_new(ms, member_effect(e, (int)i, x));
		json_object_set_new(h, "members", ms);
	}
	json_array_append_new(e->hits, h);
	exp_event(e, "%s round %llu: %s through node faults", e->p.arm[a].name,
		  (unsigned long long)rd + 1, err ? "failed" : members_hit(res) ? "members lost" :
		  "completed");
}

/* node faults: every member's node back (reconnected when its agent was
 * lost) before the arm; -ENODEV when one is down for good (the arm not
 * run, said in e->hits), an agent's -errno (with err) */
static int members_back(struct exp *e, int a, uint64_t rd, char *err, size_t errlen)
{
	char why[256];
	int k, r;

	if (!e->nf)
		return 0;
	for (k = 0; k < e->g.n; k++) {
		if (exp_nodes_wait_up(e, e->g.node[k], why, sizeof(why))) {
			json_array_append_new(e->hits, json_pack("{s:s,s:I,s:s,s:s}", "arm",
								 e->p.arm[a].name, "round",
								 (json_int_t)rd + 1, "outcome",
								 "not run", "error", why));
			exp_event(e, "%s round %llu not run: %s", e->p.arm[a].name,
				  (unsigned long long)rd + 1, why);
			e->nodes_gone = 1;
			return -ENODEV;
		}
		if (e->g.c[k].fd >= 0)
			continue;
		r = tb_agent_open(&e->g.c[k], &e->g.tb, e->g.node[k], 10000);
		if (r) {
			snprintf(err, errlen, "%s: back from a node fault, but its agent "
				 "cannot be reached: %s", e->g.c[k].where, strerror(-r));
			return r;
		}
		exp_event(e, "%s: agent reached again", e->g.tb.node[e->g.node[k]].name);
	}
	exp_nodes_gens(e, e->arm_gen);
	e->arm_t = exp_nodes_now(e);
	return 0;
}

/* the node faults' count changed since the arm began */
static int nodes_changed(struct exp *e)
{
	unsigned gen[TB_MAX_NODES];

	if (!e->nf)
		return 0;
	exp_nodes_gens(e, gen);
	return memcmp(gen, e->arm_gen, sizeof(gen)) != 0;
}

/*
 * A kernel a node: each node's CLOCK_MONOTONIC is its own. Node k's offset
 * against this host's clock (node - host) lies in [lo, hi]: the node read
 * its clock between our send and our receipt of a ping, so of 5 pings the
 * tightest gives the narrowest interval. 0, or -errno (-EPROTO: an agent
 * without now_ns).
 */
static int clock_sample(struct agentc *c, int64_t *lo, int64_t *hi)
{
	int i, r, ok = 0;

	for (i = 0; i < 5; i++) {
		json_t *res = NULL;
		char err[256];
		int64_t t1 = (int64_t)rtb_now_ns(), t2, now;

		if ((r = agentc_call(c, "ping", NULL, &res, 5000, err, sizeof(err))))
			return r;
		t2 = (int64_t)rtb_now_ns();
		now = json_integer_value(json_object_get(res, "now_ns"));
		json_decref(res);
		if (!now)
			return -EPROTO;
		if (!ok || now - t2 > *lo || now - t1 < *hi) {	/* the intersection */
			*lo = ok && *lo > now - t2 ? *lo : now - t2;
			*hi = ok && *hi < now - t1 ? *hi : now - t1;
			ok = 1;
		}
	}
	return 0;
}

/* every member's clock interval, before (0) or after (1) the arm; the union
 * of the two bounds it through the arm (a drift inside is covered) */
static void clocks(struct exp *e, int after)
{
	int k;

	for (k = 0; k < e->g.n; k++) {
		int64_t lo, hi;

		if (!after)
			e->clk_ok[k] = 0;
		if (e->g.c[k].fd < 0 || clock_sample(&e->g.c[k], &lo, &hi)) {
			e->clk_ok[k] = -1;
			continue;
		}
		if (!after || !e->clk_ok[k]) {
			e->clk_lo[k] = lo;
			e->clk_hi[k] = hi;
			e->clk_ok[k] = 1;
		} else if (e->clk_ok[k] > 0) {
			e->clk_lo[k] = lo < e->clk_lo[k] ? lo : e->clk_lo[k];
			e->clk_hi[k] = hi > e->clk_hi[k] ? hi : e->clk_hi[k];
		}
	}
}

/* each member's result told its clock's offset interval (kv's history
 * check places every client's operations on this host's clock with it) */
static void clocks_into(struct exp *e, json_t *res)
{
	json_t *x;
	size_t i;

	json_array_foreach(res, i, x) {
		int k = e->res_member[i];

		if (e->clk_ok[k] > 0)
			json_object_set_new(x, "clock_offset_ns",
					    json_pack("[II]", (json_int_t)e->clk_lo[k],
						      (json_int_t)e->clk_hi[k]));
	}
}

/* one arm's run on the group, in the workload's topology */
static int run_on_group(struct exp *e, int a, uint64_t rd, json_t *o, json_t **res, char *err,
			size_t errlen)
{
	struct agentc *cli[TB_MAX_NODES];
	int i, n = 0;

	if (e->wl->roles)	/* the profile's own commands (exec) */
		return exec_round(e, a, rd, res, err, errlen);
	if (e->wl->topo == WLC_GROUP) {
		for (i = 0; i < e->g.n; i++)
			e->res_member[i] = i;
		return group_run(&e->g, e->wl->name, o, res, err, errlen);
	}
	/* member 1 serves; a star's clients are every other member, a pair's member 0 */
	for (i = 0; i < e->g.n; i++)
		if (i != 1 && (n == 0 || e->wl->topo == WLC_STAR)) {
			e->res_member[n] = i;
			cli[n++] = &e->g.c[i];
		}
	e->res_member[n] = 1;
	if (exp_per_node(e))
		clocks(e, 0);
	if (star_run(&e->g.c[1], cli, n, e->wl->name, o, e->wl->topo == WLC_STAR, &e->g.obs, res,
		     err, errlen))
		return -EIO;
	if (exp_per_node(e)) {
		clocks(e, 1);
		clocks_into(e, *res);
	}
	if (e->wl->fold && !members_hit(*res))	/* a lost member's result: nothing to fold */
		e->wl->fold(*res);
	return 0;
}

/* wait while paused (the TUI's p); 1 when told to stop meanwhile */
static int pause_point(struct exp *e)
{
	while (e->obs.paused && e->obs.paused(e->obs.arg) && !ctl_interrupted)
		usleep(100000);
	return ctl_interrupted;
}

/* one arm's turn: its options, the watcher told, the results kept */
static void exp_arm(struct exp *e, int a, uint64_t rd, uint64_t rounds, uint64_t n)
{
	const struct prof_arm *arm = &e->p.arm[a];
	json_t *o, *res = NULL, *x;
	uint64_t seed = 0;
	size_t k;

	if (pause_point(e)) {
		e->rc = 1;
		return;
	}
	o = exp_arm_opts(&e->p, e->wl, a, n, rd ? 0 : e->p.warmup, e->g.n);
	if (e->wl->seeds) {	/* every arm of round rd: the profile's seed + rd */
		const json_t *s0 = json_object_get(e->p.wopts, "seed");

		seed = (json_is_integer(s0) ? (uint64_t)json_integer_value(s0) : 1) + rd;
		json_object_set_new(o, "seed", json_integer((json_int_t)seed));
	}
	if (e->wl->seeds && rounds > 1)
		exp_event(e, "seed %llu (%llu/%llu): %s", (unsigned long long)seed,
			  (unsigned long long)rd + 1, (unsigned long long)rounds, arm->name);
	else if (e->wl->rounds)
		exp_event(e, "round %llu/%llu: %s (%llu %s)", (unsigned long long)rd + 1,
			  (unsigned long long)rounds, arm->name, (unsigned long long)n, e->wl->unit);
	else
		exp_event(e, "%s: running", arm->name);
	if (e->obs.arm_begin)
		e->obs.arm_begin(e->obs.arg, a, rd, rounds, n);
	if (members_back(e, a, rd, e->err, sizeof(e->err))) {
		if (!e->nodes_gone) {	/* a node came back but its agent did not */
			exp_event(e, "%s failed: %s", arm->name, e->err);
			e->rc = e->arm_failed = 1;
		}
		json_decref(o);
		return;
	}
	if (exp_trace_start(e, a, rd, e->err, sizeof(e->err)) ||
	    run_on_group(e, a, rd, o, &res, e->err, sizeof(e->err))) {
		exp_trace_stop(e);
		if (nodes_changed(e) && !ctl_interrupted) {	/* a node fault's doing */
			record_hit(e, a, rd, NULL, e->err);
			e->err[0] = '\0';
			json_decref(o);
			return;
		}
		exp_event(e, "%s failed: %s", arm->name, e->err);
		if (!e->o.print && !e->obs.event)	/* nobody told: say it here */
			log_err("%s: %s", arm->name, e->err);
		e->rc = e->arm_failed = 1;
	} else {
		exp_trace_stop(e);
		if (e->wl->seeds)	/* which seed each result is of */
			json_array_foreach(res, k, x)
				json_object_set_new(x, "seed", json_integer((json_int_t)seed));
		if (nodes_changed(e) || members_hit(res))
			record_hit(e, a, rd, res, NULL);
		if (members_hit(res)) {	/* not a round of the arm's figures */
			json_decref(res);
			json_decref(o);
			return;
		}
		if (e->obs.arm_done)
			e->obs.arm_done(e->obs.arg, a, res, n);
		json_array_append_new(e->rounds[a], res);
	}
	json_decref(o);
}

static void intervals_hook(void *arg, int idx, const json_t *iv, json_int_t progress)
{
	struct exp *e = arg;

	if (e->obs.intervals)
		e->obs.intervals(e->obs.arg, idx, iv, progress);
}

int exp_measure(struct exp *e)
{
	const struct profile *p = &e->p;
	uint64_t rd, rounds = e->wl->rounds || e->wl->seeds ? p->rounds : 1;
	int a;

	if (e->obs.intervals) {
		e->g.obs.intervals = intervals_hook;
		e->g.obs.arg = e;
	}
	exp_reach_begin(e);
	for (rd = 0; rd < rounds && !e->rc && !e->nodes_gone; rd++) {
		for (a = 0; a < p->narms && !e->rc && !e->nodes_gone; a++)
			exp_arm(e, a, rd, rounds,
				e->wl->rounds ? p->iters / p->rounds + (rd < p->iters % p->rounds) : 0);
		if (!rd && !e->rc && !e->nodes_gone)	/* the warm-up was in it */
			exp_reach_check(e);
	}
	e->g.obs.intervals = NULL;
	return e->rc;
}
