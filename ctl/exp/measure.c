// SPDX-License-Identifier: MIT
/*
 * Measuring (exp.h): the one rounds loop of every workload. Arms take
 * turns -- each round every arm once, on the same nodes under the same
 * fault rules -- rather than run at once, so that each has the CPUs (and
 * rxe's kernel threads) to itself while measured: run together, the one
 * stalled in retransmission timeouts would hand its CPU time to the others.
 * Workloads that are a whole job (train) run each arm once.
 */
#include <string.h>
#include <unistd.h>
#include "ctl/exp/exp.h"
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

/* one arm's run on the group, in the workload's topology */
static int run_on_group(struct exp *e, int a, uint64_t rd, json_t *o, json_t **res)
{
	struct agentc *cli[TB_MAX_NODES];
	int i, n = 0;

	if (e->wl->run)	/* the descriptor runs its rounds itself (exec) */
		return e->wl->run(e, a, rd, res);
	if (e->wl->topo == WLC_GROUP)
		return group_run(&e->g, e->wl->name, o, res, e->err, sizeof(e->err));
	/* member 1 serves; a star's clients are every other member, a pair's member 0 */
	for (i = 0; i < e->g.n; i++)
		if (i != 1 && (n == 0 || e->wl->topo == WLC_STAR))
			cli[n++] = &e->g.c[i];
	if (star_run(&e->g.c[1], cli, n, e->wl->name, o, e->wl->topo == WLC_STAR, &e->g.obs, res,
		     e->err, sizeof(e->err)))
		return -1;
	if (e->wl->fold)
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
	if (exp_trace_start(e, a, rd) || run_on_group(e, a, rd, o, &res)) {
		exp_trace_stop(e);
		exp_event(e, "%s failed: %s", arm->name, e->err);
		if (!e->o.print && !e->obs.event)	/* nobody told: say it here */
			log_err("%s: %s", arm->name, e->err);
		e->rc = 1;
	} else {
		exp_trace_stop(e);
		if (e->wl->seeds)	/* which seed each result is of */
			json_array_foreach(res, k, x)
				json_object_set_new(x, "seed", json_integer((json_int_t)seed));
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
	for (rd = 0; rd < rounds && !e->rc; rd++)
		for (a = 0; a < p->narms && !e->rc; a++)
			exp_arm(e, a, rd, rounds,
				e->wl->rounds ? p->iters / p->rounds + (rd < p->iters % p->rounds) : 0);
	e->g.obs.intervals = NULL;
	return e->rc;
}
