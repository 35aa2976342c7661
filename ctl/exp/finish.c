// SPDX-License-Identifier: MIT
/*
 * Finishing an experiment (exp.h): the rules' counters gathered and the
 * rules removed (and the injector's hooks and qdiscs once no rule is
 * left), the report built from every arm's rounds by the workload's
 * descriptor, written and renamed into place (or kept for the caller),
 * and the testbed taken down if this run brought it up. Ctrl-C stops the
 * arm in flight; what finished is still written, marked "partial".
 */
#include <errno.h>
#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "ctl/exp/exp.h"
#include "ctl/exp/expect.h"
#include "ctl/exp/inject.h"
#include "lib/boot.h"
#include "lib/hist.h"
#include "lib/log.h"

#define FIN_AGENTS (TB_MAX_NODES + 1 + PROF_MAX_SWITCHES)

/* the slot of agent c in at[] (taken when new) */
static int agent_slot(struct agentc **at, int *n, struct agentc *c)
{
	int a;

	for (a = 0; a < *n && at[a] != c; a++)
		;
	if (a == *n)
		at[(*n)++] = c;
	return a;
}

/*
 * Every fault's rules: their counters into the report's faults, then the
 * rules removed. Each agent is asked once for its stats, then for one rule
 * a round, every agent at once: under TCG a node's rdma-inject takes about
 * 0.1 s, and asking node by node made the end of a run wait n times that.
 */
static void remove_rules(struct exp *e)
{
	struct {
		int a, id;
		json_t *rule;
	} r[PROF_MAX_FAULTS * TB_MAX_NODES];
	struct agentc *at[FIN_AGENTS];
	json_t *st[FIN_AGENTS], *x;
	const char *del[FIN_AGENTS];
	char idb[PROF_MAX_FAULTS * TB_MAX_NODES][16], dev[32];
	int na = 0, nr = 0, i, k, a, more;
	size_t m;

	for (i = 0; i < e->p.nfaults; i++) {
		json_t *fr = json_object_get(json_array_get(e->faults, (size_t)i), "rules");
		int j = 0;

		for (k = 0; k < e->g.n; k++) {
			struct agentc *c = exp_fault_at(e, &e->p.fault[i], k, dev, sizeof(dev));

			if (e->ids[i][k] < 0 || !c || na == FIN_AGENTS)
				continue;
			r[nr].a = agent_slot(at, &na, c);
			r[nr].id = e->ids[i][k];
			r[nr++].rule = json_array_get(fr, (size_t)j++);
		}
	}
	if (!nr)
		return;
	exp_stats_fetch(e, at, na, st);
	for (i = 0; i < nr; i++)
		json_array_foreach(json_object_get(st[r[i].a], "rules"), m, x)
			if (json_integer_value(json_object_get(x, "id")) == r[i].id)
				json_object_set(r[i].rule, "counters", json_object_get(x, "counters"));
	for (a = 0; a < na; a++)
		json_decref(st[a]);
	do {
		more = 0;
		for (a = 0; a < na; a++)
			del[a] = NULL;
		for (i = 0; i < nr; i++)
			if (r[i].id > 0 && !del[r[i].a]) {
				snprintf(idb[i], sizeof(idb[i]), "%d", r[i].id);
				del[r[i].a] = idb[i];
				r[i].id = 0;
				more = 1;
			}
		if (more)
			inject_json_all(at, na, "del", del, NULL);
	} while (more);
}

static void remove_faults(struct exp *e)
{
	int k, lost = 0, live = -1;

	if (!e->p.nfaults && !e->extra_rules) {
		exp_switches_stop(e);
		return;
	}
	remove_rules(e);
	exp_switches_stop(e);	/* before any flush: one would take a forwarder down unasked */
	for (k = 0; k < e->g.n; k++) {
		if (e->g.c[k].fd < 0)
			lost++;
		else if (live < 0)
			live = k;
	}
	/*
	 * A lost agent's rules cannot be removed through it; they stop acting
	 * when their lease runs out. On a testbed every node shares one
	 * kernel, so a live node's rdma-inject can then take the hooks and
	 * qdiscs away (flush if-empty counts an expired rule as gone). A
	 * profile's own hosts are separate machines: theirs stay until the
	 * next rdma-inject there.
	 */
	if (exp_per_node(e) || e->g.tb.backend == TB_HOSTS) {
		/* a kernel a node (per-node VMs, a profile's hosts, an
		 * allocation's), and the switch's: each live one takes its own
		 * hooks away; a lost node's rules stop with their lease */
		for (k = 0; k < e->g.n; k++)
			if (e->g.c[k].fd >= 0)
				json_decref(inject_json(&e->g.c[k], "flush", "if-empty"));
		if (e->sw.fd >= 0)
			json_decref(inject_json(&e->sw, "flush", "if-empty"));
		if (lost)
			log_info("%d agent%s lost: %s rules stop within %d ms (their lease); the "
				 "hooks stay in %s kernel until the next rdma-inject there", lost,
				 lost > 1 ? "s" : "", lost > 1 ? "their" : "its", PROTO_LEASE_MS,
				 lost > 1 ? "their" : "its");
		return;
	}
	if (lost && live < 0) {
		log_info("%d agent%s lost: %s rules stop within %d ms (their lease); their hooks "
			 "and qdiscs stay until the next rdma-inject there", lost, lost > 1 ? "s" : "",
			 lost > 1 ? "their" : "its", PROTO_LEASE_MS);
		return;
	}
	if (lost) {
		double until = rtb_now_s() + (PROTO_LEASE_MS + 500) / 1e3;

		log_info("%d agent%s lost: waiting %d ms for %s leased rules to run out, then "
			 "removing the hooks and qdiscs", lost, lost > 1 ? "s" : "",
			 PROTO_LEASE_MS + 500, lost > 1 ? "their" : "its");
		while (rtb_now_s() < until)
			usleep(100000);
	}
	/* no rule left: the hooks and qdiscs go too (checked and flushed by one
	 * rdma-inject, so another user's rule added meanwhile stays) */
	json_decref(inject_json(&e->g.c[live], "flush", "if-empty"));
}

/*
 * Training over several seeds: the first arm's TTA over this one's, seed by
 * seed (the same seed in both: a paired comparison), as the geometric mean
 * of the per-seed ratios with a 95% t-interval on their logarithms. Seeds
 * where either arm never reached the target are left out and counted.
 */
void exp_tta_pairs(const json_t *first, const json_t *arm, json_t *o)
{
	const json_t *sa = json_object_get(first, "seeds"), *sb = json_object_get(arm, "seeds");
	size_t n = json_array_size(sa), i, k = 0;
	double l[64], m, lo, hi;

	if (n < 2 || n != json_array_size(sb))
		return;
	for (i = 0; i < n && k < 64; i++) {
		double a = jr_real(json_array_get(sa, i), "tta_ns"), b = jr_real(json_array_get(sb, i),
										 "tta_ns");

		if (a > 0 && b > 0)
			l[k++] = log(a / b);
	}
	json_object_set_new(o, "tta_pairs", json_integer((json_int_t)k));
	if (k < 2)
		return;
	boot_mean_t95(l, k, &m, &lo, &hi);
	json_object_set_new(o, "tta_ratio", json_real(exp(m)));
	json_object_set_new(o, "tta_ratio_ci95", json_pack("[ff]", exp(lo), exp(hi)));
}

/*
 * One arm against an earlier one (the baseline a comparison reads from left
 * to right, "p99 rc / p99 lossy"): the p50 and p99 ratios
 * and differences, each with its 95% bootstrap interval over the steps (or
 * operations), so a ratio is never printed without how sure it is.
 */
static json_t *vs_arm(const json_t *first, const json_t *arm)
{
	static const struct {
		const char *name;
		double q;
	} qs[] = { { "p50", 0.5 }, { "p99", 0.99 } };
	struct hist *ha = malloc(sizeof(*ha)), *hb = malloc(sizeof(*hb));
	json_t *o = NULL;
	size_t i;

	if (!ha || !hb || hist_from_json(ha, json_object_get(first, "time_hist_ns")) ||
	    hist_from_json(hb, json_object_get(arm, "time_hist_ns")) || !ha->count || !hb->count)
		goto out;
	o = json_pack("{s:s,s:f,s:i,s:s}", "arm", jr_str(first, "name"), "confidence", 0.95,
		      "resamples", BOOT_RESAMPLES, "method",
		      "percentile bootstrap over each arm's samples, resampled independently");
	for (i = 0; o && i < sizeof(qs) / sizeof(qs[0]); i++) {
		struct boot_cmp c;
		char k[64];

		if (boot_compare(ha, hb, qs[i].q, 0.95, BOOT_RESAMPLES, 0x5eed + i, &c))
			continue;
		snprintf(k, sizeof(k), "%s_ratio", qs[i].name);
		json_object_set_new(o, k, json_real(c.ratio));
		snprintf(k, sizeof(k), "%s_ratio_ci95", qs[i].name);
		json_object_set_new(o, k, json_pack("[ff]", c.ratio_lo, c.ratio_hi));
		snprintf(k, sizeof(k), "%s_diff_ns", qs[i].name);
		json_object_set_new(o, k, json_real(c.diff));
		snprintf(k, sizeof(k), "%s_diff_ci95_ns", qs[i].name);
		json_object_set_new(o, k, json_pack("[ff]", c.diff_lo, c.diff_hi));
	}
	if (o)
		exp_tta_pairs(first, arm, o);
out:
	free(ha);
	free(hb);
	return o;
}

json_t *exp_report(struct exp *e)
{
	const struct profile *p = &e->p;
	struct utsname un;
	json_t *arms = json_array(), *rep;
	int a;

	for (a = 0; a < p->narms; a++) {
		json_t *arm = wlc_report_arm(e->wl, p->arm[a].name, p->arm[a].mode, e->rounds[a]);

		if (json_is_true(json_object_get(arm, "verification_failed")) &&
		    p->arm[a].wrong_expected) {	/* run to show them: its expectations judge it */
			if (!e->o.no_report)
				log_info("arm %s: %llu wrong results%s (wrong_expected: the profile runs it "
					 "to show them)", p->arm[a].name,
					 (unsigned long long)jr_u64(arm, "wrong"),
					 json_is_false(json_object_get(arm, "linearizable")) ?
						 ", history not linearizable" : "");
		} else if (json_is_true(json_object_get(arm, "verification_failed"))) {
			if (!e->rc && !e->err[0])	/* the run's first error stays its error */
				snprintf(e->err, sizeof(e->err),
					 "arm %s: verification failed: %llu wrong results%s",
					 p->arm[a].name, (unsigned long long)jr_u64(arm, "wrong"),
					 json_is_false(json_object_get(arm, "linearizable")) ?
						 ", history not linearizable" : "");
			if (!e->rc && !e->o.no_report)
				log_err("%s", e->err);
			e->rc = 1;
		}
		json_array_append_new(arms, arm);
	}
	/* every pair: arm b against each arm a before it (vs_first_arm: a = 0) */
	for (a = 1; a < p->narms; a++) {
		json_t *arm = json_array_get(arms, (size_t)a), *all = json_array();
		int b;

		for (b = 0; b < a; b++) {
			json_t *v = vs_arm(json_array_get(arms, (size_t)b), arm);

			if (!v)
				continue;
			if (!b)
				json_object_set(arm, "vs_first_arm", v);
			json_array_append_new(all, v);
		}
		json_object_set_new(arm, "vs_arms", all);
	}
	if (ctl_interrupted)
		e->rc = 1;
	uname(&un);
	rep = json_pack("{s:i,s:s,s:b,s:s,s:s,s:f,s:{s:s},s:{s:s,s:s,s:s},s:{s:s,s:s,s:i,s:i,s:s},"
			"s:o,s:s,s:s,s:I,s:O,s:o}",
			"schema_version", 1, "kind", "rdma-testbed-report", "partial",
			ctl_interrupted || e->rc, "status",
			ctl_interrupted ? "interrupted" : e->rc ? "failed" : "ok", "created", e->when,
			"duration_s", rtb_now_s() - e->t_start, "versions", "rdmactl", RTB_VERSION,
			"host", "hostname", un.nodename, "kernel", un.release, "machine", un.machine,
			"testbed", "backend", tb_backend_name(e->g.tb.backend), "accel", e->g.tb.accel,
			"nodes", e->g.tb.nodes, "mtu", e->g.tb.mtu, "kernel", e->g.tb.kver, "profile",
			profile_to_json(p), "workload", p->workload, "measure",
			measure_name(e->wl->measure), "t0_node_ns", e->t0, "faults", e->faults, "arms",
			arms);
	if (rep) {
		json_t *tb = json_object_get(rep, "testbed");

		json_object_set_new(rep, "t0_unix_ns", json_integer(e->t0_unix_ns));
		if (!p->nhosts)
			json_object_set_new(tb, "topology",
					    json_string(tb_topology_name(e->g.tb.topology)));
		if (!p->nhosts && e->g.tb.backend == TB_VM && e->g.tb.topology == TB_PER_NODE)
			json_object_set_new(tb, "switch",
					    json_string(e->g.tb.switch_xdp ? "xdp" : "bridge"));
		if (e->node_kernels)
			json_object_set(tb, "node_kernels", e->node_kernels);
		if (e->switches)
			json_object_set(tb, "switches", e->switches);
	}
	if (rep && e->nf) {
		json_object_set_new(rep, "node_events", exp_nodes_report(e));
		json_object_set(rep, "node_fault_effects", e->hits ? e->hits : json_array());
	}
	exp_trace_analyze(e);
	if (rep && e->traces)
		json_object_set_new(rep, "trace", exp_trace_report(e, arms));
	if (rep && e->rc && !ctl_interrupted)
		json_object_set_new(rep, "error", json_string(e->err));
	if (rep)
		json_object_set_new(rep, "reach_check", json_boolean(!e->o.no_reach_check));
	if (rep && p->nexpect) {
		json_object_set_new(rep, "expectations",
				    expect_eval(p->expect, p->nexpect, arms, &e->expect_failed));
		json_object_set_new(rep, "expectations_failed", json_integer(e->expect_failed));
	}
	return rep;
}

/* msg with the descriptor's path of DIR.partial ("/proc/self/fd/N") put
 * back as its name, for people */
static void own_names(const struct exp *e, char *msg, size_t len)
{
	char out[sizeof(e->err)] = "";
	size_t n = strlen(e->tmpdir);
	const char *p = msg, *at;

	while (n && (at = strstr(p, e->tmpdir))) {
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%.*s%s", (int)(at - p), p,
			 e->tmpname);
		p = at + n;
	}
	if (p == msg)
		return;
	snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s", p);
	snprintf(msg, len, "%s", out);
}

/* the directory: written as DIR.partial, renamed when complete */
static int write_dir(struct exp *e)
{
	if (report_write(e->report, e->tmpdir, e->err, sizeof(e->err))) {
		own_names(e, e->err, sizeof(e->err));
		/* what was written whole stays (each file is complete or absent) */
		log_err("writing %s: %s (the files written whole are kept there)", e->tmpname,
			e->err);
		return -EIO;
	}
	if (!exp_partial_is_ours(e, e->tmpname)) {
		log_err("%s: not the directory this run made (replaced under it?): the report is "
			"not moved to %s", e->tmpname, e->dir);
		return -EXDEV;
	}
	if (rename(e->tmpname, e->dir)) {
		log_err("%s -> %s: %s", e->tmpname, e->dir, strerror(errno));
		return -errno;
	}
	if (!exp_partial_is_ours(e, e->dir)) {	/* swapped between the check and the rename */
		log_err("%s: not the directory this run made (replaced under it?)", e->dir);
		return -EXDEV;
	}
	if (e->o.quiet) {
		return 0;
	} else if (!e->ctl->json) {
		report_print_text(e->report, stdout);
		printf("report: %s/{report.json,summary.csv,report.html,*.hlog}%s\n", e->dir,
		       json_is_true(json_object_get(e->report, "partial")) ? " (partial)" : "");
	} else {
		json_dumpf(e->report, stdout, JSON_INDENT(2));
	}
	return 0;
}

/* --junit FILE: whatever happened, a file CI can read (no report: the run
 * did not get as far as its arms, e->err says why) */
static void write_junit(struct exp *e)
{
	char msg[PATH_MAX + 64];

	if (!e->o.junit)
		return;
	if (report_junit(e->report, e->p.name, e->err[0] ? e->err : "the run did not start",
			 e->o.junit, msg, sizeof(msg))) {
		log_err("--junit: %s", msg);
		e->rc = 1;
	}
}

int exp_finish(struct exp *e)
{
	own_names(e, e->err, sizeof(e->err));
	if (e->group_open) {
		exp_nodes_stop(e);	/* the timeline ends with the run */
		remove_faults(e);
		e->report = exp_report(e);
		group_close(&e->g);
		e->group_open = 0;
		if (!e->report) {
			log_err("report: out of memory");
			e->rc = 1;
		} else if (!e->o.no_report && write_dir(e)) {
			e->rc = 1;
		}
	}
	write_junit(e);
	if (e->brought_up && !e->o.keep)
		tb_down();
	return e->rc ? e->rc : e->expect_failed ? CTL_FAIL : CTL_OK;
}
