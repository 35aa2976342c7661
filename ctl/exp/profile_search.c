// SPDX-License-Identifier: MIT
/*
 * A profile's search: section (rdmactl search, ctl/search/): the fault
 * space schedules are drawn from. Checked like every other key, with
 * file:line:col errors:
 *
 *   search:
 *     where: [{nodes: node0, dir: ingress}, {nodes: node1, port: switch, dir: egress}]
 *     actions: [drop]                 # rdma-inject actions, no selection
 *     targets: {opcodes: [data, ack], qp: 1-2, rpsn: 0-63, tx: 1}
 *     events: 2                       # at most, in a schedule
 *     budget: {trials: 40, time: 10m}
 *     strategy: guided                # or random
 *     replays: 10
 *     confirm: 3
 *     seed: 1
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/exp/check.h"
#include "ctl/testbed/testbed.h"
#include "ebpf/inject_abi.h"
#include "injector/inj.h"

/* "N" or "N-M" within [min, max] into *lo, *hi */
static int get_range(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		     uint32_t min, uint32_t max, uint32_t *lo, uint32_t *hi)
{
	const struct ynode *n;
	char what[96], *end;
	unsigned long a, b;

	if (prof_scalar_at(x, m, key, where, what, sizeof(what), &n) || !n)
		return n ? -EINVAL : 0;
	errno = 0;
	a = strtoul(n->s, &end, 10);
	b = a;
	if (end != n->s && *end == '-')
		b = strtoul(end + 1, &end, 10);
	if (errno || end == n->s || *end || n->s[0] == '-' || a > b || a < min || b > max)
		return prof_perr(x, n, 0, "%s: '%s': expected N or N-M within %u-%u", what, n->s, min,
				 max);
	*lo = (uint32_t)a;
	*hi = (uint32_t)b;
	return 0;
}

static int check_places(struct pctx *x, struct profile *p, const struct ynode *w,
			struct prof_search *s)
{
	static const char *const keys[] = { "nodes", "dir", "port", NULL };
	static const char *const dirs[] = { "ingress", "egress", NULL };
	static const char *const ports[] = { "nic", "switch", NULL };
	size_t i;

	if (prof_want(x, w, YN_SEQ, "search.where"))
		return -EINVAL;
	if (!w->n || w->n > PROF_MAX_PLACES)
		return prof_perr(x, w, 0, "search.where: %zu places, expected 1..%d", w->n,
				 PROF_MAX_PLACES);
	for (i = 0; i < w->n; i++) {
		const struct ynode *m = w->v[i], *nodes;
		struct prof_place *pl = &s->place[i];
		char where[48];
		uint32_t mask = 0;

		snprintf(where, sizeof(where), "search.where[%zu]", i);
		if (prof_want(x, m, YN_MAP, where) || prof_keys_known(x, m, keys, where) ||
		    prof_get_enum(x, m, "dir", where, dirs, &pl->egress) ||
		    prof_get_enum(x, m, "port", where, ports, &pl->sw))
			return -EINVAL;
		nodes = ytree_get(m, "nodes", NULL);
		if (!nodes)
			return prof_perr(x, m, 0, "%s: missing key 'nodes' (one node: a place is "
					 "one hook)", where);
		if (prof_check_nodes(x, p, nodes, where, &mask))
			return -EINVAL;
		if (__builtin_popcount(mask) != 1)
			return prof_perr(x, nodes, 0, "%s.nodes: one node, not %d (a place is one "
					 "hook; list more places)", where, __builtin_popcount(mask));
		pl->node = __builtin_ctz(mask);
		s->nplaces = (int)i + 1;
	}
	return 0;
}

/* an action as rdma-inject takes it, with no selection of its own: the
 * schedule says which packets */
static int check_actions(struct pctx *x, const struct profile *p, const struct ynode *a,
			 struct prof_search *s)
{
	static const char *const select_words[] = { "every", "nth", "once", "gemodel", "after",
						     "for", "gap", "lease", "flap", NULL };
	size_t i;

	if (prof_want(x, a, YN_SEQ, "search.actions"))
		return -EINVAL;
	if (!a->n || a->n > PROF_MAX_ACTIONS)
		return prof_perr(x, a, 0, "search.actions: %zu actions, expected 1..%d", a->n,
				 PROF_MAX_ACTIONS);
	for (i = 0; i < a->n; i++) {
		const struct ynode *n = a->v[i];
		char buf[64], where[48], e[256], *argv[16], *tok, *save;
		struct inj_rule r;
		int argc = 0;

		snprintf(where, sizeof(where), "search.actions[%zu]", i);
		if (prof_want(x, n, YN_SCALAR, where))
			return -EINVAL;
		if (!strcmp(n->s, "flap")) {	/* a window of loss: targets.time, targets.window */
			snprintf(s->action[i], sizeof(s->action[i]), "flap");
			s->flap = 1;
			s->nactions = (int)i + 1;
			continue;
		}
		for (int ev = 1; prof_event_names[ev]; ev++)
			if (!strcmp(n->s, prof_event_names[ev])) {
				if (p->topology != TB_PER_NODE)
					return prof_perr(x, n, 0, "%s: '%s' is a node fault: it needs "
							 "a kernel a node (testbed: {topology: "
							 "per-node})", where, n->s);
				snprintf(s->action[i], sizeof(s->action[i]), "%s", n->s);
				s->flap = 1;	/* timed: targets.time, targets.window */
				s->nactions = (int)i + 1;
				break;
			}
		if (s->nactions == (int)i + 1)
			continue;
		if (!strncmp(n->s, "flap ", 5))
			return prof_perr(x, n, 0, "%s: '%s': flap alone (targets.window gives its "
					 "length, targets.time its start)", where, n->s);
		if (strlen(n->s) >= sizeof(s->action[0]))
			return prof_perr(x, n, 0, "%s: too long", where);
		snprintf(buf, sizeof(buf), "%s", n->s);
		for (tok = strtok_r(buf, " \t", &save); tok && argc < 15;
		     tok = strtok_r(NULL, " \t", &save)) {
			for (int k = 0; select_words[k]; k++)
				if (!strcmp(tok, select_words[k]) || strchr(tok, '%'))
					return prof_perr(x, n, 0, "%s: '%s': an action alone (drop, "
							 "delay 20ms, duplicate, corrupt, reorder, "
							 "ecn): the schedule selects the packets", where,
							 n->s);
			argv[argc++] = tok;
		}
		argv[argc] = NULL;
		inj_rule_init(&r);
		if (!argc || inj_rule_parse(&r, argc, argv, 0, e, sizeof(e)))
			return prof_perr(x, n, 0, "%s: %s", where, argc ? e : "empty");
		if (r.action == INJ_ACT_COUNT || r.action == INJ_ACT_CNP)
			return prof_perr(x, n, 0, "%s: '%s' breaks nothing a packet at a time (drop, "
					 "delay, duplicate, corrupt, reorder, ecn)", where, n->s);
		snprintf(s->action[i], sizeof(s->action[i]), "%s", n->s);
		s->nactions = (int)i + 1;
	}
	return 0;
}

/* key: "T" or "T1-T2", times within min..max: *lo, *hi */
static int get_time_range(struct pctx *x, const struct ynode *m, const char *key,
			  uint64_t min, uint64_t max, uint64_t *lo, uint64_t *hi)
{
	const struct ynode *n;
	char what[96], buf[64], *dash;
	const char *why = NULL;

	if (prof_scalar_at(x, m, key, "search.targets", what, sizeof(what), &n) || !n)
		return n ? -EINVAL : 0;
	snprintf(buf, sizeof(buf), "%s", n->s);
	dash = strchr(buf, '-');
	if (dash)
		*dash = 0;
	if (num_parse(buf, NUM_TIME, min, max, lo, &why) ||
	    num_parse(dash ? dash + 1 : buf, NUM_TIME, min, max, hi, &why) || *lo > *hi)
		return prof_perr(x, n, 0, "%s: '%s': %s (a time or T1-T2, as 10ms-500ms, within "
				 "%llums-%llus)", what, n->s, why ? why : "the first is past the second",
				 (unsigned long long)(min / 1000000), (unsigned long long)(max / 1000000000));
	return 0;
}

static int check_targets(struct pctx *x, const struct ynode *t, struct prof_search *s)
{
	static const char *const keys[] = { "opcodes", "qp", "rpsn", "tx", "time", "window", NULL };
	const struct ynode *o;

	if (prof_want(x, t, YN_MAP, "search.targets") ||
	    prof_keys_known(x, t, keys, "search.targets") ||
	    get_time_range(x, t, "time", 0, 3600000000000ULL, &s->time_lo_ns, &s->time_hi_ns) ||
	    get_time_range(x, t, "window", 1000000, 3600000000000ULL, &s->win_lo_ns,
			   &s->win_hi_ns) ||
	    get_range(x, t, "qp", "search.targets", 1, 1024, &s->qp_lo, &s->qp_hi) ||
	    get_range(x, t, "rpsn", "search.targets", 0, (1u << 24) - 1, &s->rpsn_lo,
		      &s->rpsn_hi) ||
	    get_range(x, t, "tx", "search.targets", 1, 255, &s->tx_lo, &s->tx_hi))
		return -EINVAL;
	o = ytree_get(t, "opcodes", NULL);
	if (!o)
		return 0;
	if (o->kind != YN_SCALAR && prof_want(x, o, YN_SEQ, "search.targets.opcodes"))
		return -EINVAL;
	/* a class, or a list of them: each by rdma-inject's own names */
	for (size_t i = 0; i < (o->kind == YN_SCALAR ? 1 : o->n); i++) {
		const struct ynode *e = o->kind == YN_SCALAR ? o : o->v[i];
		int c;

		for (c = 0; c < INJ_CLS_MAX && (e->kind != YN_SCALAR ||
						strcmp(e->s, inj_class_name(c)));
		     c++)
			;
		if (c == INJ_CLS_MAX)
			return prof_perr(x, e, 0, "search.targets.opcodes: '%s': expected data, "
					 "read_req, read_resp, ack, nak, atomic, cnp or other",
					 e->kind == YN_SCALAR ? e->s : prof_kind_name(e));
		s->opcodes |= 1u << c;
	}
	return 0;
}

int prof_check_search(struct pctx *x, struct profile *p, const struct ynode *n)
{
	static const char *const keys[] = { "where", "actions", "targets", "events", "budget",
					    "strategy", "replays", "confirm", "seed", NULL };
	static const char *const bkeys[] = { "trials", "time", NULL };
	static const char *const strategies[] = { "guided", "random", NULL };
	struct prof_search *s = &p->search;
	const struct ynode *w, *a, *t, *b;
	uint64_t ev = 2;

	memset(s, 0, sizeof(*s));
	s->rpsn_hi = 63;
	s->time_hi_ns = 2000000000ULL;		/* flap: windows from 0-2s */
	s->win_lo_ns = 10000000ULL;		/* of 10ms-500ms */
	s->win_hi_ns = 500000000ULL;
	s->trials = 50;
	s->replays = 10;
	s->confirm = 3;
	s->seed = 1;
	if (prof_want(x, n, YN_MAP, "search") || prof_keys_known(x, n, keys, "search"))
		return -EINVAL;
	if (p->nhosts)
		return prof_perr(x, n, 0, "search: runs on a testbed (each trial one short run "
				 "there), not on a profile's hosts");
	if (!(w = ytree_get(n, "where", NULL)))
		return prof_perr(x, n, 0, "search: missing key 'where' (a list of places: "
				 "- {nodes: node1, dir: ingress})");
	if (!(a = ytree_get(n, "actions", NULL)))
		return prof_perr(x, n, 0, "search: missing key 'actions' (a list: [drop])");
	if (check_places(x, p, w, s) || check_actions(x, p, a, s))
		return -EINVAL;
	if ((t = ytree_get(n, "targets", NULL)) && check_targets(x, t, s))
		return -EINVAL;
	if (prof_get_num(x, n, "events", "search", NUM_PLAIN, 1, 8, "1..8", &ev) ||
	    prof_get_enum(x, n, "strategy", "search", strategies, &s->strategy) ||
	    prof_get_num(x, n, "replays", "search", NUM_PLAIN, 1, 1000, "1..1000", &s->replays) ||
	    prof_get_num(x, n, "confirm", "search", NUM_PLAIN, 1, 9, "1..9", &s->confirm) ||
	    prof_get_num(x, n, "seed", "search", NUM_PLAIN, 0, UINT32_MAX, "0..4294967295",
			 &s->seed))
		return -EINVAL;
	s->max_events = (int)ev;
	if ((b = ytree_get(n, "budget", NULL)) &&
	    (prof_want(x, b, YN_MAP, "search.budget") ||
	     prof_keys_known(x, b, bkeys, "search.budget") ||
	     prof_get_num(x, b, "trials", "search.budget", NUM_PLAIN, 1, 100000, "1..100000",
			  &s->trials) ||
	     prof_get_num(x, b, "time", "search.budget", NUM_TIME, 1000000000ULL,
			  7 * 86400000000000ULL, "a time: 1s..7d", &s->time_ns)))
		return -EINVAL;
	if (!p->nexpect)
		return prof_perr(x, n, 0, "search: the profile has no expect: (what the search "
				 "tries to break)");
	s->on = 1;
	return 0;
}
