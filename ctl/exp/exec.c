// SPDX-License-Identifier: MIT
/*
 * An exec workload's round (exec.h). Each command runs on its node as
 *   rdma-run start ID -e NAME=VALUE... -- CMD
 * reached the way the node is: over the testbed VM's ssh, directly on
 * this host (host backend), or over ssh to a profile's host (hosts.ssh).
 * rdmactl reads its stdout and stderr through that pipe into the run
 * directory (each capped; what is over the cap is counted, not kept),
 * watches for readiness (a line, a listening port, a delay), and ends it
 * with `rdma-run stop ID` at its timeout, when the others are done (a
 * service), or when the run is interrupted. `stop` runs after every
 * command, ended or not: it reports the status and removes what is left
 * (a session's or cgroup's stray processes, rdma-run's state).
 *
 * Statuses, as a shell and timeout(1) give them: the exit code, 128+N for
 * signal N, 124 ended at its timeout, 125 never started (rdma-run or the
 * way to the node failed, or an earlier role never got ready), 255 lost
 * (its status could not be read).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ctl/wl/tool.h"
#include "ctl/exp/exec_int.h"
#include "lib/clock.h"
#include "lib/hwc.h"
#include "lib/log.h"
#include "lib/proc.h"

/* --- one command */

/* every command of role k ready: 0, or -EIO (r->err says which was not) */
static int wait_ready(struct run *r, int k)
{
	const struct prof_role *ro = &r->p->role[k];
	double until = 0;
	int i, all;

	for (i = 0; i < r->n; i++)
		if (r->in[i].role == k && r->in[i].t0 > until)
			until = r->in[i].t0;
	until += (double)(ro->ready == PR_AFTER ? ro->ready_after_ns : ro->ready_timeout_ns) / 1e9;
	for (;;) {
		all = 1;
		for (i = 0; i < r->n; i++) {
			struct inst *in = &r->in[i];

			if (in->role != k || in->ready)
				continue;
			if (in->state != S_RUNNING && ro->ready != PR_AFTER) {
				snprintf(r->err, r->errlen, "%s on %s ended before it was "
					 "ready", ro->name, r->node[in->member].name);
				return -EIO;
			}
			if (in->state != S_RUNNING || (ro->ready == PR_AFTER && rtb_now_s() >= until))
				in->ready = 1;
			else if (ro->ready == PR_PORT && !in->waiter && in->note[0]) {
				snprintf(r->err, r->errlen, "%s on %s: %s", ro->name,
					 r->node[in->member].name, in->note);
				in->why = WHY_NOT_READY;
				return -EIO;
			} else
				all = 0;
		}
		if (all) {
			if (ro->ready != PR_NONE)
				exp_event(r->e, "%s: %s ready", r->p->arm[r->a].name, ro->name);
			return 0;
		}
		if (rtb_now_s() >= until && ro->ready != PR_AFTER) {
			for (i = 0; i < r->n && (r->in[i].role != k || r->in[i].ready); i++)
				;
			snprintf(r->err, r->errlen, "%s on %s: not ready after %.3g s (%s)",
				 ro->name, r->node[r->in[i].member].name,
				 (double)ro->ready_timeout_ns / 1e9,
				 ro->ready == PR_LINE ? "no line of its output matched ready.line" :
							"its port was not listening");
			r->in[i].why = WHY_NOT_READY;
			return -EIO;
		}
		exec_pump(r, 20);
		if (exec_watch(r))
			return -EIO;
	}
}

/* --- the round */

/* every member's address, device and GID index, from its agent */
static int facts(struct run *r)
{
	int i, rc;

	for (i = 0; i < r->e->g.n; i++) {
		json_t *res = NULL;
		struct tpl_node *n = &r->node[i];

		snprintf(n->name, sizeof(n->name), "%s", r->e->g.tb.node[r->e->g.node[i]].name);
		rc = agentc_call(&r->e->g.c[i], "hello", NULL, &res, 10000, r->err,
				 sizeof(r->err));
		if (!rc)
			rc = tpl_node_facts(n, res, r->err, r->errlen);
		json_decref(res);
		if (rc)
			return rc;
	}
	return 0;
}

/* the node's hw counters and its injector hooks' counts ({"hw_counters",
 * "injector"}); begin: the injector's QP numbering starts anew (the round's
 * programs start after it) */
static json_t *counters(struct run *r, int m, int begin)
{
	json_t *res = NULL;
	char err[256];

	if (agentc_call(&r->e->g.c[m], "counters", json_pack("{s:b}", "track_begin", begin), &res,
			10000, err, sizeof(err)))
		return json_object();
	return res ? res : json_object();
}

/*
 * Traced or with rules: the counters are read once the wire is quiet. A
 * packet still on its way when the commands ended (a last ACK, a retry
 * toward a QP that is gone) lands in the trace and the rules' counters,
 * which are read later; so wait until every member's rxe sent and received
 * nothing for 150 ms (at most 3 s), and the windows hold the same packets.
 */
static void wire_quiet(struct run *r)
{
	json_int_t last = -1;
	double until = rtb_now_s() + 3;
	int m;

	while (rtb_now_s() < until && !ctl_interrupted) {
		json_int_t sum = 0;

		for (m = 0; m < r->e->g.n; m++) {
			json_t *c = counters(r, m, 0), *hw = json_object_get(c, "hw_counters");

			sum += json_integer_value(json_object_get(hw, "sent_pkts")) +
			       json_integer_value(json_object_get(hw, "rcvd_pkts"));
			json_decref(c);
		}
		if (sum == last)
			return;
		last = sum;
		usleep(150000);
	}
}

static int mkdirs(struct run *r)
{
	if (!r->e->tmpdir[0] || r->e->o.no_report)
		return 0;
	snprintf(r->dir, sizeof(r->dir), "%s/exec/%s/r%llu", r->e->tmpdir, r->p->arm[r->a].name,
		 (unsigned long long)r->round + 1);
	if (ctl_mkdir_p(r->dir, 0755)) {
		snprintf(r->err, r->errlen, "%s: %s", r->dir, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* every role's commands started in order, each role waited for until
 * ready before the next starts: 0, or 1 when one was not (r->err) and the
 * rest were not started */
static int start_roles(struct run *r)
{
	const struct profile *p = r->p;
	int k, m, broke = 0;

	for (k = 0; k < p->nroles; k++) {
		for (m = 0; m < r->e->g.n; m++) {
			struct inst *in = &r->in[r->n];
			char node[sizeof(r->node[m].name)];	/* in r too: not an overlap, said once */

			if (!(p->role[k].nodes & (1u << m)))
				continue;
			memset(in, 0, sizeof(*in));
			in->role = k;
			in->member = m;
			in->fd[0] = in->fd[1] = in->file[0] = in->file[1] = -1;
			memcpy(node, r->node[m].name, sizeof(node));
			snprintf(in->id, sizeof(in->id), "rdmactl-%d-%s-%llu-%s-%s", (int)getpid(),
				 p->arm[r->a].name, (unsigned long long)r->round + 1, p->role[k].name,
				 node);
			r->n++;
			if (broke) {
				in->why = WHY_ABORTED;
				in->state = S_DONE;
				snprintf(in->note, sizeof(in->note), "not started: %s", r->err);
				continue;
			}
			exec_start_inst(r, in);
		}
		if (!broke && wait_ready(r, k)) {
			exp_event(r->e, "%s: %s", p->arm[r->a].name, r->err);
			broke = 1;
		}
	}
	return broke;
}

/* every role that is not a service to its end (or its timeout), then
 * every command ended: 2 when interrupted, else broke */
static int end_roles(struct run *r, int broke)
{
	int i, again;

	do {
		again = 0;
		for (i = 0; i < r->n; i++)
			if (r->in[i].state == S_RUNNING && !r->p->role[r->in[i].role].service &&
			    !broke)
				again = 1;
		if (again) {
			exec_pump(r, 50);
			if (exec_watch(r))
				broke = 2;
		}
	} while (again);
	for (i = 0; i < r->n; i++) {
		struct inst *in = &r->in[i];

		if (broke == 2)
			exec_end_inst(r, in, WHY_INTERRUPTED, "stopped (interrupted)");
		else if (broke)
			exec_end_inst(r, in, in->why == WHY_NOT_READY ? WHY_NOT_READY : WHY_BROKEN,
				 in->why == WHY_NOT_READY ? "stopped (not ready)" :
							    "stopped (another role was not ready)");
		else
			exec_end_inst(r, in, WHY_SERVICE, "stopped (a service: the others are done)");
	}
	return broke;
}

/* a role's tool output (its parse:) read into the outcome o; -EBADMSG
 * (r->err says the file and line) when a command that exited 0 printed
 * what its tool does not. A command that failed without the tool's output
 * (fio never ran: a connect failed), timed out or was killed gives no
 * figures: its status says why; o's "parse" has the parser's word. */
static int parsed(struct run *r, const struct inst *in, json_t *o)
{
	int kind = r->p->role[in->role].parse;
	char path[2][PATH_MAX * 2], why[512];
	struct tool_out to = { { path[0], path[1] }, { in->rel[0], in->rel[1] } };
	json_t *fig;
	int rc;

	if (!kind || !in->rel[0][0] || strcmp(jr_str(o, "status"), "exited"))
		return 0;
	for (int s = 0; s < 2; s++)
		snprintf(path[s], sizeof(path[s]), "%s/%s", r->e->tmpdir, in->rel[s]);
	rc = tool_parse(kind, &to, &fig, why, sizeof(why));
	if (rc && json_integer_value(json_object_get(o, "exit"))) {
		json_object_set_new(o, "parse", json_string(why));
		return 0;
	}
	if (rc) {
		snprintf(r->err, r->errlen, "%s", why);
		return rc;
	}
	json_object_update(o, fig);
	json_decref(fig);
	return 0;
}

/* every command's outcome (its status taken, nothing of it left); *bad
 * set when a tool's output was not understood (r->err) */
static json_t *outcomes(struct run *r, int *bad)
{
	json_t *ex = json_array();
	int i, k;

	for (i = 0; i < r->n; i++) {
		struct inst *in = &r->in[i];
		json_t *o;

		if (in->why != WHY_ABORTED)
			exec_stop_inst(r, in);
		o = exec_outcome(r, in);
		exec_summary(r, in, o);
		if (!*bad && parsed(r, in, o)) {
			*bad = 1;
			exp_event(r->e, "%s: %s", r->p->arm[r->a].name, r->err);
		}
		json_array_append_new(ex, o);
		for (k = 0; k < 2; k++)
			if (in->file[k] >= 0)
				close(in->file[k]);
		json_decref(in->status);
	}
	return ex;
}

/* the round's results, one per member as the agents' would be: its hw
 * counters' and hooks' deltas; member 0 also the wall time and ex */
static json_t *member_results(struct run *r, json_t **before, double wall_s, json_t *ex)
{
	json_t *results = json_array();
	int m;

	for (m = 0; m < r->e->g.n; m++) {
		json_t *after = counters(r, m, 0), *res, *ij;

		res = json_pack("{s:s,s:o}", "node", r->node[m].name, "hw_counters_delta",
				hwc_delta(json_object_get(before[m], "hw_counters"),
					  json_object_get(after, "hw_counters")));
		ij = hwc_hooks_delta(json_object_get(before[m], "injector"),
				     json_object_get(after, "injector"));
		if (ij)
			json_object_set_new(res, "injector_delta", ij);
		json_decref(after);
		json_decref(before[m]);
		if (!m) {
			struct hist h;

			hist_init(&h);
			hist_record(&h, (uint64_t)(wall_s * 1e9));
			json_object_set_new(res, "time_ns", hist_to_json(&h));
			json_object_set_new(res, "iters", json_integer(1));
			json_object_set_new(res, "exec", ex);
		}
		json_array_append_new(results, res);
	}
	return results;
}

static int round_run(struct run *r, json_t **results)
{
	const struct profile *p = r->p;
	json_t *before[TB_MAX_NODES], *ex, *f0;
	double t0, t1;
	int k, m, bad = 0;

	if (r->e->g.tb.backend != TB_VM && r->e->g.tb.backend != TB_HOST && !p->ssh.on) {
		snprintf(r->err, r->errlen, "an exec workload starts its commands on the "
			 "nodes: a testbed (vm or host) or hosts.ssh, not agents already running");
		return -EIO;
	}
	if (r->e->g.tb.backend == TB_VM && tb_ssh_config(r->cfg, sizeof(r->cfg))) {
		snprintf(r->err, r->errlen, "no ssh into the testbed VM");
		return -EIO;
	}
	if (facts(r) || mkdirs(r))
		return -EIO;
	for (k = 0; k < p->nroles; k++)
		if (p->role[k].ready == PR_LINE) {
			regcomp(&r->re[k], p->role[k].ready_line, REG_EXTENDED | REG_NOSUB);
			r->nre = k + 1;
		}
	for (m = 0; m < r->e->g.n; m++)
		before[m] = counters(r, m, 1);
	f0 = r->p->nfaults ? exp_faults_read(r->e) : NULL;
	t0 = rtb_now_s();
	end_roles(r, start_roles(r));
	t1 = rtb_now_s();
	ex = outcomes(r, &bad);
	for (k = 0; k < r->nre; k++)
		if (p->role[k].ready == PR_LINE)
			regfree(&r->re[k]);
	if (r->e->trace || r->e->p.nfaults)	/* traces and rule counters compared with these */
		wire_quiet(r);
	*results = member_results(r, before, t1 - t0, ex);
	if (f0) {	/* what the round's traffic met: each fault's counters */
		json_t *f1 = exp_faults_read(r->e);

		json_object_set_new(json_array_get(*results, 0), "faults_met",
				    exp_faults_delta(f0, f1));
		json_decref(f0);
		json_decref(f1);
	}
	{	/* a command that ended at its timeout: its round's nodes rebooted */
		int failed;
		json_t *resets = exec_resets(r, ex, &failed);

		if (resets)
			json_object_set_new(json_array_get(*results, 0), "node_resets", resets);
		if (failed) {
			snprintf(r->err, r->errlen, "a node could not be reset after a command's timeout "
				 "(report.json: node_resets)");
			bad = 1;
		}
	}
	if (bad) {	/* a parser that did not understand: the run fails, never zeros */
		json_decref(*results);
		*results = NULL;
		return -EBADMSG;
	}
	/* interrupted: the round is kept (its commands "interrupted"); the
	 * report is partial and no arm runs after it (ctl_interrupted) */
	return 0;
}

int exec_round(struct exp *e, int a, uint64_t round, json_t **results, char *err, size_t errlen)
{
	struct run *r = calloc(1, sizeof(*r));
	int rc;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->e = e;
	r->p = &e->p;
	r->a = a;
	r->round = round;
	r->err = err;
	r->errlen = errlen;
	rc = round_run(r, results);
	free(r);
	return rc;
}

void exp_exec_tools(json_t *into, const json_t *res)
{
	const json_t *run;
	size_t k;

	json_array_foreach(json_object_get(json_array_get(res, 0), "exec"), k, run)
		tool_merge(into, run);
}
