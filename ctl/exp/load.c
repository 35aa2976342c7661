// SPDX-License-Identifier: MIT
/*
 * Loading a profile: reading the file and checking it (see profile.h and
 * profiles/README.md). The first error stops the check: one precise
 * message beats a cascade. The checker's helpers are in check.c, the
 * exec workload's and hosts' parts in profile_exec.c and profile_hosts.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/exp/check.h"
#include "ebpf/inject_abi.h"
#include "ctl/exp/expect.h"
#include "ctl/testbed/testbed.h"
#include "ctl/wl/wl.h"
#include "injector/inj.h"
#include "lib/num.h"
#include "lib/opt.h"
#include "lib/proc.h"
#include "lib/ytree.h"
#include "workloads/opts.h"

/* a workload option map: every key in the workload's table and not one
 * rdmactl sets itself, every value accepted by it (into a scratch
 * configuration, thrown away) */
static int check_wopts(struct pctx *x, const struct ynode *m, const struct wlc *d,
		       const char *where, json_t *dst)
{
	/* every workload's configuration is far smaller than this */
	static uint64_t scratch[1024];
	const struct opt *opts = wl_opts(d->name);
	const struct wlc_reserved *rv;
	const char *names[128];
	const struct opt *o;
	char e[256], what[96];
	size_t i;
	int j;

	snprintf(what, sizeof(what), "%s", where);
	if (prof_want(x, m, YN_MAP, what))
		return -EINVAL;
	if (!opts)
		return prof_perr(x, m, 0, "%s: the %s workload takes no options", where, d->name);
	for (j = 0, o = opts; o->name && j < 127; o++)
		names[j++] = o->name;
	names[j] = NULL;
	for (i = 0; i < m->n; i++) {
		const struct ynode *v = m->v[i];
		const char *s;

		for (rv = d->reserved; rv->key && strcmp(rv->key, m->k[i]); rv++)
			;
		if (rv->key)
			return prof_perr_key(x, m, i, "%s.%s: %s", where, m->k[i], rv->why);
		for (o = opts; o->name && strcmp(o->name, m->k[i]); o++)
			;
		if (!o->name) {
			s = opt_suggest(m->k[i], names);
			return prof_perr_key(x, m, i, "unknown %s option '%s'%s%s%s", d->name, m->k[i],
					s ? " (did you mean '" : " (rdma-agent --list shows them)",
					s ? s : "", s ? "'?)" : "");
		}
		snprintf(what, sizeof(what), "%s.%s", where, m->k[i]);
		if (prof_want(x, v, YN_SCALAR, what))
			return -EINVAL;
		if (opt_set(opts, scratch, m->k[i], v->s, e, sizeof(e)))
			return prof_perr(x, v, 0, "%s", e);
		json_object_set_new(dst, m->k[i], json_string(v->s));
	}
	return 0;
}

static int check_testbed(struct pctx *x, struct profile *p, const struct ynode *t)
{
	static const char *const keys[] = { "backend", "topology", "nodes", "mtu", "switch", NULL };
	static const char *const backends[] = { "auto", "vm", "host", NULL };
	/* in enum tb_topology's order */
	static const char *const topologies[] = { "per-node", "shared", NULL };
	static const char *const switches[] = { "bridge", "xdp", NULL };
	uint64_t v;
	int b = 0, tp = p->topology, sw = p->sw;

	if (prof_want(x, t, YN_MAP, "testbed") || prof_keys_known(x, t, keys, "testbed") ||
	    prof_get_enum(x, t, "backend", "testbed", backends, &b) ||
	    prof_get_enum(x, t, "topology", "testbed", topologies, &tp) ||
	    prof_get_enum(x, t, "switch", "testbed", switches, &sw))
		return -EINVAL;
	snprintf(p->backend, sizeof(p->backend), "%s", backends[b]);
	if (sw == 1 && tp == TB_SHARED)
		return prof_perr(x, ytree_get(t, "switch", NULL), 0,
			    "testbed.switch: xdp is per-node's switch (topology: per-node, or unsaid)");
	if (sw == 1)
		tp = TB_PER_NODE;
	p->topology = tp;
	p->sw = sw;
	if (tp == TB_PER_NODE && !strcmp(p->backend, "host") && sw == 1)
		return prof_perr(x, ytree_get(t, "switch", NULL), 0,
			    "testbed.switch: xdp is the per-node VMs' switch (backend: vm or auto)");
	if (tp == TB_PER_NODE && !strcmp(p->backend, "host"))
		return prof_perr(x, ytree_get(t, "topology", NULL), 0,
			    "testbed.topology: per-node is the vm backend's (backend: vm or auto)");
	v = (uint64_t)p->nodes;
	if (prof_get_num(x, t, "nodes", "testbed", NUM_PLAIN, 2, TB_MAX_NODES, "2..16", &v))
		return -EINVAL;
	p->nodes = (int)v;
	v = (uint64_t)p->mtu;
	if (prof_get_num(x, t, "mtu", "testbed", NUM_PLAIN, 256, 4096, "256|512|1024|2048|4096", &v))
		return -EINVAL;
	if (v & (v - 1))
		return prof_perr(x, ytree_get(t, "mtu", NULL), 0,
			    "testbed.mtu: %llu (expected 256|512|1024|2048|4096)", (unsigned long long)v);
	p->mtu = (int)v;
	return 0;
}

static int check_arms(struct pctx *x, struct profile *p, const struct ynode *a,
		      const struct wlc *wl)
{
	static const char *const keys[] = { "name", "mode", "options", "wrong_expected", NULL };
	static const char *const bools[] = { "false", "true", NULL };
	const char *const *modes = rtb_mode_names;
	char mlist[64] = "";
	size_t i, j;

	for (j = 0; modes[j]; j++)
		snprintf(mlist + strlen(mlist), sizeof(mlist) - strlen(mlist), "%s%s", j ? "|" : "",
			 modes[j]);
	if (prof_want(x, a, YN_SEQ, "arms"))
		return -EINVAL;
	if (!a->n || a->n > PROF_MAX_ARMS)
		return prof_perr(x, a, 0, "arms: %zu arms (expected 1 to %d)", a->n, PROF_MAX_ARMS);
	for (i = 0; i < a->n; i++) {
		const struct ynode *m = a->v[i], *o, *mode;
		struct prof_arm *arm = &p->arm[i];
		char where[32];
		int k = 0;

		snprintf(where, sizeof(where), "arms[%zu]", i);
		if (wl->roles) {	/* variants of the commands, not modes */
			if (prof_check_exec_arm(x, p, m, i))
				return -EINVAL;
			goto named;
		}
		if (prof_want(x, m, YN_MAP, where) || prof_keys_known(x, m, keys, where))
			return -EINVAL;
		mode = ytree_get(m, "mode", NULL);
		if (!mode)
			return prof_perr(x, m, 0, "%s: missing key 'mode' (%s)", where, mlist);
		if (prof_get_enum(x, m, "mode", where, modes, &k))
			return -EINVAL;
		if (!(wl->modes & (1u << k)))
			return prof_perr(x, mode, 0, "%s.mode: %s: %s (expected rc; compare arms by "
				    "options, e.g. rc_timeout)", where, modes[k], wl->modes_why);
		snprintf(arm->mode, sizeof(arm->mode), "%s", modes[k]);
		snprintf(arm->name, sizeof(arm->name), "%s", modes[k]);
		if (prof_get_name(x, m, where, arm->name, sizeof(arm->name)) ||
		    prof_get_enum(x, m, "wrong_expected", where, bools, &arm->wrong_expected))
			return -EINVAL;
named:
		for (j = 0; j < i; j++)
			if (!strcmp(p->arm[j].name, arm->name))
				return prof_perr(x, ytree_get(m, "name", NULL) ? ytree_get(m, "name", NULL) : m,
					    0, "%s: a second arm named '%s' (give each a name:)", where,
					    arm->name);
		if (wl->roles) {
			p->narms = (int)i + 1;
			continue;
		}
		arm->opts = json_object();
		o = ytree_get(m, "options", NULL);
		snprintf(where, sizeof(where), "arms[%zu].options", i);
		if (o && check_wopts(x, o, wl, where, arm->opts))
			return -EINVAL;
		p->narms = (int)i + 1;
	}
	return 0;
}

/*
 * Whether this host's kernel runs an action (rdma-inject -j probe, asked
 * once): 1 yes, 0 no, -ENOENT unknown (no rdma-inject, or not root). A switch
 * port of per-node VMs is this host's device, so its rules run here.
 */
static int host_can(const char *action)
{
	static json_t *acts;
	static int asked;

	if (!asked) {
		char inj[PATH_MAX], out[8192];
		char *argv[] = { inj, "-j", "-q", "probe", NULL };

		asked = 1;
		snprintf(inj, sizeof(inj), "%s/rdma-inject", ctl_bin_dir());
		if (geteuid() == 0 && !access(inj, X_OK) && proc_run(argv, out, sizeof(out)) >= 0) {
			json_t *o = json_loads(strchr(out, '{') ?: "", JSON_DISABLE_EOF_CHECK, NULL);

			acts = json_incref(json_object_get(o, "actions"));
			json_decref(o);
		}
	}
	if (!json_is_boolean(json_object_get(acts, action)))
		return -ENOENT;
	return json_is_true(json_object_get(acts, action));
}

/* faults[i].event: a node fault at start (freeze and port-down for duration) */
static int check_event(struct pctx *x, struct profile *p, const struct ynode *m,
		       struct prof_fault *pf, const char *where)
{
	static const char *const needs_dur[] = { "", "", "how long the node stays frozen",
						 "", "how long the port stays down", "" };
	static const char *const no_dur[] = { "", "a crashed node stays down; a later event: "
					      "reboot brings it back", "",
					      "the node is back when its agent is", "",
					      "the device is back when its agent has opened it again" };
	static const char *const froms[] = { "rules", "traffic", NULL };
	const struct ynode *ev = ytree_get(m, "event", NULL), *k;
	int v = 0;

	if (ytree_get(m, "rule", NULL))
		return prof_perr(x, ytree_get(m, "rule", NULL), 0,
			    "%s: a rule or an event, not both", where);
	if ((k = ytree_get(m, "dir", NULL)) || (k = ytree_get(m, "port", NULL)))
		return prof_perr(x, k, 0, "%s: an event acts on the whole node: no port or dir",
			    where);
	if (prof_get_enum(x, m, "event", where, prof_event_names + 1, &v))
		return -EINVAL;
	pf->event = v + 1;
	if (prof_get_enum(x, m, "from", where, froms, &pf->from_traffic))
		return -EINVAL;
	snprintf(pf->rule, sizeof(pf->rule), "%s", prof_event_names[pf->event]);
	if (p->nhosts || p->topology != TB_PER_NODE)
		return prof_perr(x, ev, 0, "%s: event %s needs a kernel a node: testbed: "
			    "{topology: per-node}%s", where, pf->rule,
			    p->nhosts ? " (a profile's hosts are not the testbed's to crash)" : "");
	if ((pf->event == PEV_FREEZE || pf->event == PEV_PORT_DOWN) && !pf->duration_ns)
		return prof_perr(x, ev, 0, "%s: event %s needs duration: (%s)", where, pf->rule,
			    needs_dur[pf->event]);
	if (no_dur[pf->event][0] && pf->duration_ns)
		return prof_perr(x, ytree_get(m, "duration", NULL), 0,
			    "%s: event %s has no duration (%s)", where, pf->rule, no_dur[pf->event]);
	return 0;
}

/* a fault's port on its nodes: hosts name the interface; an allocation
 * (hosts.slurm) has no switch. 0, or -EINVAL said */
static int fault_port_ok(struct pctx *x, const struct profile *p, const struct ynode *m,
			 const struct prof_fault *pf, const char *where)
{
	if (p->slurm.want && pf->sw)
		return prof_perr(x, ytree_get(m, "port", NULL) ?: m, 0, "%s.port: switch: an "
				 "allocation (hosts.slurm) has no testbed switch (port: nic puts "
				 "the rule on the node's own interface)", where);
	for (int h = 0; h < p->nhosts; h++)	/* hosts: the interface must be named */
		if ((pf->nodes & (1u << h)) && !(pf->sw ? p->host[h].sw : p->host[h].nic)[0])
			return prof_perr(x, m, 0, "%s: host %s has no %s interface (hosts.nodes: %s:)",
					 where, p->host[h].name, pf->sw ? "switch" : "nic",
					 pf->sw ? "switch" : "nic");
	return 0;
}

static int check_faults(struct pctx *x, struct profile *p, const struct ynode *f)
{
	static const char *const keys[] = { "name", "rule", "event", "nodes", "dir", "port",
					    "start", "duration", "from", NULL };
	static const char *const dirs[] = { "ingress", "egress", NULL };
	static const char *const ports[] = { "nic", "switch", NULL };
	size_t i;

	if (prof_want(x, f, YN_SEQ, "faults"))
		return -EINVAL;
	if (f->n > PROF_MAX_FAULTS)
		return prof_perr(x, f, 0, "faults: %zu rules, at most %d", f->n, PROF_MAX_FAULTS);
	for (i = 0; i < f->n; i++) {
		const struct ynode *m = f->v[i], *rule, *nodes;
		struct prof_fault *pf = &p->fault[i];
		char where[32], buf[256], *argv[64], *tok, *save, e[256];
		struct inj_rule r;
		int argc = 0;

		snprintf(where, sizeof(where), "faults[%zu]", i);
		if (prof_want(x, m, YN_MAP, where) || prof_keys_known(x, m, keys, where))
			return -EINVAL;
		snprintf(pf->name, sizeof(pf->name), "fault%zu", i);
		if (prof_get_name(x, m, where, pf->name, sizeof(pf->name)) ||
		    prof_get_enum(x, m, "dir", where, dirs, &pf->egress) ||
		    prof_get_enum(x, m, "port", where, ports, &pf->sw) ||
		    prof_get_num(x, m, "start", where, NUM_TIME, 0, 86400000000000ULL, "a time: 0s..24h",
			    &pf->start_ns) ||
		    prof_get_num(x, m, "duration", where, NUM_TIME, 0, 86400000000000ULL,
			    "a time: 0s..24h (0: to the end)", &pf->duration_ns))
			return -EINVAL;
		rule = ytree_get(m, "rule", NULL);
		if (ytree_get(m, "event", NULL)) {
			if (check_event(x, p, m, pf, where))
				return -EINVAL;
			goto members;
		}
		if (ytree_get(m, "from", NULL))
			return prof_perr(x, ytree_get(m, "from", NULL), 0, "%s: from: is an event's; "
					 "a rule says it in its words (\"drop from traffic\")", where);
		if (!rule)
			return prof_perr(x, m, 0, "%s: missing key 'rule' (rdma-inject's: e.g. "
				    "\"opcode data drop 1%%\") or 'event' (crash, freeze, reboot, "
				    "port-down)", where);
		snprintf(buf, sizeof(buf), "%s.rule", where);
		if (prof_want(x, rule, YN_SCALAR, buf))
			return -EINVAL;
		if (strlen(rule->s) >= sizeof(pf->rule))
			return prof_perr(x, rule, 0, "%s.rule: too long", where);
		snprintf(pf->rule, sizeof(pf->rule), "%s", rule->s);
		snprintf(buf, sizeof(buf), "%s", rule->s);
		for (tok = strtok_r(buf, " \t", &save); tok && argc < 63;
		     tok = strtok_r(NULL, " \t", &save)) {
			/* a word of the rule, wherever it is (first, after a tab) */
			if (!strcmp(tok, "after") || !strcmp(tok, "for"))
				return prof_perr(x, rule, 0, "%s.rule: give the window as start: and "
					    "duration:, not after/for", where);
			argv[argc++] = tok;
		}
		/* the window as the agent will give it (start:, duration:), so
		 * that from traffic is checked with it */
		if (pf->start_ns && argc < 62) {
			argv[argc++] = "after";
			argv[argc++] = "1ns";
		}
		if (pf->duration_ns && argc < 62) {
			argv[argc++] = "for";
			argv[argc++] = "1ns";
		}
		argv[argc] = NULL;
		inj_rule_init(&r);
		if (inj_rule_parse(&r, argc, argv, 0, e, sizeof(e)))
			return prof_perr(x, rule, 0, "%s.rule: %s%s", where, e,
					 strstr(e, "from traffic") ? " (in a profile: start:, duration:)" : "");
		/* per-node VMs: a switch port is this host's, its actions this
		 * kernel's (delay needs sch_prio and sch_fq, reorder sch_netem) */
		if (p->topology == TB_PER_NODE && pf->sw && !p->nhosts &&
		    (r.action == INJ_ACT_DELAY || r.action == INJ_ACT_REORDER) &&
		    host_can(inj_action_name(r.action)) == 0)
			return prof_perr(x, rule, 0, "%s.rule: %s at a switch port runs on this host, "
				    "whose kernel cannot (rdma-inject probe: %s=no; it needs "
				    "sch_prio and %s): put it at port: nic with dir: egress, at the "
				    "sending nodes (each node's kernel has them)", where,
				    inj_action_name(r.action), inj_action_name(r.action),
				    r.action == INJ_ACT_DELAY ? "sch_fq" : "sch_netem");
members:
		pf->nodes = (1u << p->nodes) - 1;
		nodes = ytree_get(m, "nodes", NULL);
		snprintf(buf, sizeof(buf), "%s.nodes", where);
		if (nodes && prof_check_nodes(x, p, nodes, buf, &pf->nodes))
			return -EINVAL;
		if (fault_port_ok(x, p, m, pf, where))
			return -EINVAL;
		p->nfaults = (int)i + 1;
	}
	return 0;
}

/* one expectation: the scalar v, of the arm named by key i of map m (NULL:
 * v carries its own "ARM:", if any) */
static int add_expect(struct pctx *x, struct profile *p, const struct wlc *wl,
		      const struct ynode *v, const struct ynode *m, size_t i, const char *where)
{
	struct prof_expect *pe = &p->expect[p->nexpect];
	char text[192], msg[400], names[160] = "";
	size_t off = 0, pre = 0;
	int j;

	if (prof_want(x, v, YN_SCALAR, where))
		return -EINVAL;
	if (p->nexpect == PROF_MAX_EXPECT)
		return prof_perr(x, v, 0, "%s: more than %d expectations", where, PROF_MAX_EXPECT);
	/* an arm's name is short (prof_name_ok): a long key is none, and must
	 * not run past text (the fuzzer's key of 200 characters did) */
	if (m && strlen(m->k[i]) >= sizeof(pe->arm))
		return prof_perr_key(x, m, i, "%s: no arm has a name that long (at most %zu "
				"characters)", where, sizeof(pe->arm) - 1);
	if (m)
		pre = (size_t)snprintf(text, sizeof(text), "%s: ", m->k[i]);
	snprintf(text + pre, sizeof(text) - pre, "%s", v->s);
	if (expect_parse(text, wl->measure, pe, msg, sizeof(msg), &off)) {
		struct ynode at = *v;

		if (off < pre)	/* in the key */
			return prof_perr_key(x, m, i, "%s: %s", where, msg);
		if (!strchr(v->s, '\n'))	/* the bad part's column, on one line */
			at.col += (int)(off - pre) + !v->plain;
		return prof_perr(x, &at, 0, "%s: %s", where, msg);
	}
	j = expect_target(p, pe);
	if (j == -EINVAL)
		return prof_perr(x, v, 0, "%s: '%s' is a role: a role has exit and wall; %s is an "
				 "arm's (give an arm, or all)", where, pe->arm, expect_metric_name(pe));
	if (j == -ENOENT) {
		for (j = 0; j < p->narms; j++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 j ? ", " : "", p->arm[j].name);
		for (j = 0; j < p->nroles; j++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 !j ? "; the roles: " : ", ", p->role[j].name);
		if (m)	/* at the arm's name */
			return prof_perr_key(x, m, i, "%s: no arm named '%s' (the arms: %s; all: "
					"every arm)", where, pe->arm, names);
		return prof_perr(x, v, 0, "%s: no arm named '%s' (the arms: %s; all: every arm)",
			    where, pe->arm, names);
	}
	p->nexpect++;
	return 0;
}

/*
 * expect: conditions by arm (after k6's thresholds),
 *   all: [wrong == 0]          every arm
 *   lossy: [lost < 2%, ...]    one arm by name (a single one needs no list)
 * or a list of "[ARM:] METRIC OP VALUE" lines (unquoted, "- rc: p99 < 2s"
 * is YAML's one-key mapping, and means the same)
 */
static int check_expect(struct pctx *x, struct profile *p, const struct ynode *l,
			const struct wlc *wl)
{
	char where[64];
	size_t i, k;

	if (l->kind == YN_MAP) {
		for (i = 0; i < l->n; i++) {
			const struct ynode *v = l->v[i];

			if (v->kind != YN_SEQ) {
				snprintf(where, sizeof(where), "expect.%.40s", l->k[i]);
				if (add_expect(x, p, wl, v, l, i, where))
					return -EINVAL;
				continue;
			}
			for (k = 0; k < v->n; k++) {
				snprintf(where, sizeof(where), "expect.%.40s[%zu]", l->k[i], k);
				if (add_expect(x, p, wl, v->v[k], l, i, where))
					return -EINVAL;
			}
		}
		return 0;
	}
	if (l->kind != YN_SEQ)
		return prof_perr(x, l, 0, "expect: expected a mapping (ARM: [METRIC OP VALUE, ...], "
			    "all: every arm) or a list, found %s", prof_kind_name(l));
	for (i = 0; i < l->n; i++) {
		const struct ynode *e = l->v[i];

		snprintf(where, sizeof(where), "expect[%zu]", i);
		if (e->kind == YN_MAP && e->n == 1) {
			if (add_expect(x, p, wl, e->v[0], e, 0, where))
				return -EINVAL;
		} else if (add_expect(x, p, wl, e, NULL, 0, where)) {
			return -EINVAL;
		}
	}
	return 0;
}

/* workload: its type (one a profile may name) and its options; an exec
 * workload's roles, vars and env. *wlp: its descriptor */
static int check_workload(struct pctx *x, struct profile *p, const struct ynode *root,
			  const struct wlc **wlp)
{
	static const char *const wkeys[] = { "type", "options", NULL };
	static const char *const xkeys[] = { "type", "roles", "vars", "env", NULL };
	const struct ynode *w = ytree_get(root, "workload", NULL), *n;
	const char *types[16];
	const struct wlc *wl;
	char tlist[96];
	int t = 0, nt = 0;

	for (int i = 0; wlc_at(i) && nt < 15; i++)
		if (wlc_at(i)->in_profile)
			types[nt++] = wlc_at(i)->name;
	types[nt] = NULL;
	wlc_profile_names(tlist, sizeof(tlist));
	if (!w)
		return prof_perr(x, root, 0, "missing key 'workload' (type: %s, options: ...)", tlist);
	if (prof_want(x, w, YN_MAP, "workload"))
		return -EINVAL;
	if (!ytree_get(w, "type", NULL))
		return prof_perr(x, w, 0, "workload: missing key 'type' (%s)", tlist);
	if (prof_get_enum(x, w, "type", "workload", types, &t))
		return -EINVAL;
	snprintf(p->workload, sizeof(p->workload), "%s", types[t]);
	*wlp = wl = wlc_find(types[t]);
	if (prof_keys_known(x, w, wl->roles ? xkeys : wkeys, "workload"))
		return -EINVAL;
	if (wl->roles && prof_check_exec(x, p, w))
		return -EINVAL;
	if ((n = ytree_get(w, "options", NULL)) && check_wopts(x, n, wl, "workload.options", p->wopts))
		return -EINVAL;
	return 0;
}

/* run: iters, rounds, warmup (an exec workload: rounds only, a round one
 * run of the roles) */
static int check_run(struct pctx *x, struct profile *p, const struct ynode *n,
		     const struct wlc *wl)
{
	static const char *const rkeys[] = { "iters", "rounds", "warmup", NULL };
	static const char *const xrkeys[] = { "rounds", NULL };

	if (n) {
		if (prof_want(x, n, YN_MAP, "run") ||
		    prof_keys_known(x, n, wl->roles ? xrkeys : rkeys,
				    wl->roles ? "run (an exec workload's: how many times each arm "
						"runs its roles)" : "run") ||
		    prof_get_num(x, n, "iters", "run", NUM_PLAIN, 1, 1000000, "1..1000000", &p->iters) ||
		    prof_get_num(x, n, "rounds", "run", NUM_PLAIN, 1, 1000, "1..1000", &p->rounds) ||
		    prof_get_num(x, n, "warmup", "run", NUM_PLAIN, 0, 100000, "0..100000", &p->warmup))
			return -EINVAL;
		if (!wl->roles && !wl->seeds && p->iters < p->rounds)
			return prof_perr(x, n, 0, "run: iters %llu is fewer than rounds %llu",
				    (unsigned long long)p->iters, (unsigned long long)p->rounds);
	}
	if (wl->roles)
		p->iters = p->rounds;
	return 0;
}

/* trace: (snaplen) */
static int check_trace(struct pctx *x, struct profile *p, const struct ynode *root)
{
	static const char *const tkeys[] = { "snaplen", NULL };
	const struct ynode *n;

	p->trace_snaplen = INJ_TRACE_SNAP_DEFAULT;
	if ((n = ytree_get(root, "trace", NULL)) && !ytree_is_null(n)) {
		uint64_t sl = INJ_TRACE_SNAP_DEFAULT;

		if (prof_want(x, n, YN_MAP, "trace") || prof_keys_known(x, n, tkeys, "trace") ||
		    prof_get_num(x, n, "snaplen", "trace", NUM_SIZE, 64, INJ_TRACE_SNAP_MAX,
				 "64..512 (bytes of each packet kept)", &sl))
			return -EINVAL;
		p->trace = 1;
		p->trace_snaplen = (unsigned)sl;
	}
	return 0;
}

static int check(struct pctx *x, struct profile *p, const struct ynode *root)
{
	static const char *const keys[] = { "version", "name", "description", "testbed", "hosts",
					    "workload", "arms", "run", "faults", "expect", "output",
					    "trace", "search", NULL };
	static const char *const okeys[] = { "dir", NULL };
	const struct ynode *n;
	const struct wlc *wl = NULL;
	uint64_t ver = 0;

	if (prof_want(x, root, YN_MAP, "the profile") || prof_keys_known(x, root, keys, "the profile"))
		return -EINVAL;
	if (!ytree_get(root, "version", NULL))
		return prof_perr(x, root, 0, "missing key 'version' (this is version: 1)");
	if (prof_get_num(x, root, "version", "profile", NUM_PLAIN, 1, 1, "1", &ver))
		return -EINVAL;
	if (prof_get_str(x, root, "name", "profile", p->name, sizeof(p->name)) ||
	    prof_get_str(x, root, "description", "profile", p->description, sizeof(p->description)))
		return -EINVAL;
	if ((n = ytree_get(root, "testbed", NULL)) && ytree_get(root, "hosts", NULL))
		return prof_perr(x, ytree_get(root, "hosts", NULL), 0,
			    "hosts: a profile has a testbed: or hosts:, not both");
	if ((n = ytree_get(root, "testbed", NULL)) && check_testbed(x, p, n))
		return -EINVAL;
	if ((n = ytree_get(root, "hosts", NULL)) && prof_check_hosts(x, p, n))
		return -EINVAL;
	if (check_workload(x, p, root, &wl))
		return -EINVAL;
	n = ytree_get(root, "arms", NULL);
	if (!n && wl->roles) {	/* the commands as they are: one arm */
		profile_add_arm(p, "run", "exec", json_pack("{s:{},s:{}}", "vars", "env"));
	} else if (!n) {
		return prof_perr(x, root, 0, "missing key 'arms' (a list: - mode: rc, - mode: lossy, ...)");
	} else if (check_arms(x, p, n, wl)) {
		return -EINVAL;
	}
	if (wl->roles && prof_check_exec_texts(x, p, ytree_get(root, "workload", NULL)))
		return -EINVAL;
	if (check_run(x, p, ytree_get(root, "run", NULL), wl))
		return -EINVAL;
	if ((n = ytree_get(root, "faults", NULL)) && !ytree_is_null(n) && check_faults(x, p, n))
		return -EINVAL;
	if (check_trace(x, p, root))
		return -EINVAL;
	if ((n = ytree_get(root, "expect", NULL)) && !ytree_is_null(n) && check_expect(x, p, n, wl))
		return -EINVAL;
	if ((n = ytree_get(root, "search", NULL)) && !ytree_is_null(n) && prof_check_search(x, p, n))
		return -EINVAL;
	if ((n = ytree_get(root, "output", NULL)) &&
	    (prof_want(x, n, YN_MAP, "output") || prof_keys_known(x, n, okeys, "output") ||
	     prof_get_str(x, n, "dir", "output", p->outdir, sizeof(p->outdir))))
		return -EINVAL;
	return 0;
}

static int load(struct profile *p, const char *file, const char *const *sets, int nsets, char *err,
		size_t errlen)
{
	struct pctx x = { err, errlen };
	struct ynode *root = NULL;
	FILE *f;
	long len = 0;
	int i, r = -EINVAL;
	const char *base;

	profile_init(p, NULL);
	snprintf(p->file, sizeof(p->file), "%s", file);
	p->nodes = 3;
	p->mtu = 1024;
	base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	snprintf(p->name, sizeof(p->name), "%.*s", (int)strcspn(base, "."), base);
	/* a regular file only: a FIFO or a device would block or never end */
	{
		int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		struct stat st;

		if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			snprintf(err, errlen, "%s: %s", file,
				 fd < 0 ? strerror(errno) : "not a regular file");
			if (fd >= 0)
				close(fd);
			return -EINVAL;
		}
		f = fdopen(fd, "r");
		if (!f) {
			snprintf(err, errlen, "%s: %s", file, strerror(errno));
			close(fd);
			return -EINVAL;
		}
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    len > (1 << 20) || !(p->text = calloc(1, (size_t)len + 1)) ||
	    fread(p->text, 1, (size_t)len, f) != (size_t)len) {
		snprintf(err, errlen, "%s: %s", file,
			 len > (1 << 20) ? "larger than 1 MiB: not a profile" : "cannot read it");
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	if (memchr(p->text, 0, (size_t)len)) {	/* it would cut a scalar short, silently */
		const char *z = memchr(p->text, 0, (size_t)len), *c;
		int line = 1, col = 1;

		for (c = p->text; c < z; c++, col++)
			if (*c == '\n')
				line++, col = 0;
		snprintf(err, errlen, "%s:%d:%d: a NUL byte: not a text file", file, line, col);
		return -EINVAL;
	}
	if (ytree_parse(file, p->text, (size_t)len, &root, err, errlen))
		return -EINVAL;
	for (i = 0; i < nsets; i++) {
		if (ytree_set(&root, sets[i], "--set", err, errlen))
			goto out;
		json_array_append_new(p->sets, json_string(sets[i]));
	}
	r = check(&x, p, root);
out:
	ytree_free(root);
	return r;
}

/* a profile that does not load holds nothing (the fuzzer found the text and
 * the overrides leaked on every refused profile) */
int profile_load(struct profile *p, const char *file, const char *const *sets, int nsets, char *err,
		 size_t errlen)
{
	int r = load(p, file, sets, nsets, err, errlen);

	if (r)
		profile_free(p);
	return r;
}
