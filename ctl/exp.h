/* SPDX-License-Identifier: MIT */
/*
 * One experiment from a profile, in steps that `rdmactl run` and the TUI
 * share: open (check the profile, the testbed, the control connections,
 * the fault rules), measure (the arms, feeding the model when there is
 * one), finish (counters, rules removed, report written, testbed down if
 * this run brought it up).
 */
#ifndef RTB_EXP_H
#define RTB_EXP_H

#include <limits.h>
#include "ctl.h"
#include "profile.h"
#include "session.h"

struct model;

/* agents rdmactl started over ssh for a profile's hosts (ctl/ssh.c) */
struct ssh_agents {
	int n;
	pid_t pid[TB_MAX_NODES];
	int fd[TB_MAX_NODES];		/* ssh's stdin: closing it stops the agent */
	int logfd[TB_MAX_NODES];	/* ssh's stderr */
	int lport[TB_MAX_NODES];	/* our end of the forward */
};

/* start one agent per host over ssh, fill s (loopback ports, fresh token) */
int ssh_agents_start(struct ssh_agents *sa, const struct profile *p, struct tb_state *s);
void ssh_agents_stop(struct ssh_agents *sa);

struct exp {
	struct ctl *ctl;
	struct profile p;
	int loaded, keep, brought_up, group_open, rc, quiet, m_quiet, extra_rules;
	struct group g;
	int ids[PROF_MAX_FAULTS][TB_MAX_NODES];
	json_t *faults, *rounds[PROF_MAX_ARMS];
	json_int_t t0;
	double t_start;
	char when[32], dir[PATH_MAX + 16], tmpdir[PATH_MAX + 32], err[1024];
	struct model *m;	/* NULL: no live model */
	struct ssh_agents ssh;
};

/* 0 ready; 2 bad usage/profile (message printed); 1 failed; -1 help shown */
int exp_open(struct exp *e, struct ctl *ctl, int argc, char **argv, int (*unused)(void));
int exp_measure(struct exp *e);
int exp_finish(struct exp *e);
void exp_close(struct exp *e);

#endif
