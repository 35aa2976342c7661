// SPDX-License-Identifier: MIT
/*
 * A stack that hangs must not hang the run (issue 37, item 6). A command
 * that ended at its timeout on per-node VMs may have left its kernel stuck
 * (NVMe/RDMA's I/O in uninterruptible sleep, a hung NFS mount): the nodes
 * of that round's commands are rebooted before the next one, their agents
 * reached again and their NIC's fault rules added again, so one stuck
 * kernel costs one arm. A role's on_timeout says whether: reboot, keep,
 * or auto (reboot on per-node VMs, keep elsewhere: a shared kernel holds
 * every node, a host backend is this machine).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl/exp/exec_int.h"
#include "lib/clock.h"
#include "lib/log.h"

/* may a timed-out command of role k reboot its round's nodes? */
static int reboots(const struct run *r, int k)
{
	int ot = r->p->role[k].on_timeout;

	if (ot == PR_OT_AUTO)
		return r->e->g.tb.backend == TB_VM && r->e->g.tb.topology == TB_PER_NODE;
	return ot == PR_OT_REBOOT;
}

/* fault rules on member k's own NIC, placed again after its reboot (a
 * switch port's live on this host and were never lost) */
static int faults_again(struct exp *e, int k, char *err, size_t errlen)
{
	for (int i = 0; i < e->p.nfaults; i++) {
		const struct prof_fault *f = &e->p.fault[i];

		if (!f->event && !f->sw && (f->nodes & (1u << e->g.node[k])) &&
		    exp_fault_place(e, i, k, err, errlen))
			return -EIO;
	}
	return 0;
}

/* reboot member m's node and reach its agent again: the reset's record */
static json_t *reset_one(struct run *r, int m, const char *why)
{
	struct exp *e = r->e;
	static struct tb_state s;
	char err[512] = "";
	const char *name = e->g.tb.node[e->g.node[m]].name;
	double t0 = rtb_now_s();
	pid_t old;
	int rc;

	exp_event(e, "%s: rebooting %s (%s)", r->p->arm[r->a].name, name, why);
	agentc_close(&e->g.c[m]);
	rc = tb_fault_node(name, TB_REBOOT, 300, &s, &old, err, sizeof(err));
	if (rc >= 0) {
		e->g.tb.node[e->g.node[m]] = s.node[rc];
		rc = tb_agent_open(&e->g.c[m], &e->g.tb, e->g.node[m], 10000);
		if (rc)
			snprintf(err, sizeof(err), "its agent cannot be reached: %s", strerror(-rc));
		else if (faults_again(e, m, err, sizeof(err)))
			rc = -EIO;
	}
	if (rc < 0)
		exp_event(e, "%s: %s not reset: %s", r->p->arm[r->a].name, name, err);
	else
		exp_event(e, "%s: %s rebooted in %.1f s, its agent reached again",
			  r->p->arm[r->a].name, name, rtb_now_s() - t0);
	return json_pack("{s:s,s:s,s:I,s:f,s:b,s:s*}", "node", name, "why", why, "round",
			 (json_int_t)r->round + 1, "seconds", rtb_now_s() - t0, "ok", rc >= 0,
			 "error", rc < 0 ? err : NULL);
}

json_t *exec_resets(struct run *r, const json_t *ex, int *failed)
{
	char why[256] = "";
	unsigned todo = 0;
	json_t *out;
	int i, m;

	*failed = 0;
	for (i = 0; i < r->n; i++) {	/* ex[i]: r->in[i]'s outcome (exec_outcome) */
		const struct inst *in = &r->in[i];
		const char *st = json_string_value(json_object_get(json_array_get(ex, (size_t)i),
								   "status"));

		todo |= 1u << in->member;
		if (st && !strcmp(st, "timeout") && reboots(r, in->role) && !why[0])
			snprintf(why, sizeof(why), "%s on %s ended at its timeout (%.0f s)",
				 r->p->role[in->role].name, r->node[in->member].name,
				 (double)r->p->role[in->role].timeout_ns / 1e9);
	}
	if (!why[0] || ctl_interrupted)
		return NULL;
	out = json_array();
	for (m = 0; m < r->e->g.n; m++)
		if (todo & (1u << m)) {
			json_t *x = reset_one(r, m, why);

			*failed |= !json_is_true(json_object_get(x, "ok"));
			json_array_append_new(out, x);
		}
	return out;
}
