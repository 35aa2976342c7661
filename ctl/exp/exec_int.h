/* SPDX-License-Identifier: MIT */
/*
 * Inside the exec runner (exec.h): a round's commands (struct inst) and the
 * round (struct run). exec_cmd.c runs one command (started on its node,
 * its output pumped into the run directory, ended, its outcome); exec.c
 * runs the round (the roles in order, readiness, the counters around it).
 */
#ifndef RTB_CTL_EXP_EXEC_INT_H
#define RTB_CTL_EXP_EXEC_INT_H

#include <limits.h>
#include <regex.h>
#include <sys/types.h>
#include "ctl/exp/exec.h"
#include "ctl/exp/exp.h"
#include "ctl/exp/tpl.h"
#include "lib/execenv.h"

#define OUT_CAP (8ull << 20)	/* bytes kept of each stream of each command */
#define STOP_GRACE_MS 1000
#define BACKSTOP_S 20.0
#define MAX_INST (PROF_MAX_ROLES * TB_MAX_NODES)

enum { S_NEW, S_RUNNING, S_DONE };
/* why rdmactl ended a command (or never started it) */
enum { WHY_NONE, WHY_TIMEOUT, WHY_SERVICE, WHY_NOT_READY, WHY_BROKEN, WHY_INTERRUPTED,
       WHY_ABORTED };

struct inst {
	int role, member, state, why, ready;
	char id[160], rel[2][PATH_MAX];
	pid_t pid, waiter;	/* ssh or rdma-run; rdma-run wait-port (ready: port) */
	int fd[2], file[2];	/* its stdout and stderr; our copies of them */
	uint64_t bytes[2], dropped[2];
	char line[2][1024];
	size_t ll[2];
	double t0, t1, deadline;
	json_t *status;		/* rdma-run stop's answer */
	char note[256];
};

/* NAME=VALUE of one variable, at the limits the checker enforces */
#define ENV_WORD (EXECENV_NAME_MAX + 1 + EXECENV_VALUE_MAX + 1)

struct run {
	struct exp *e;
	const struct profile *p;
	int a, n;
	uint64_t round;
	struct inst in[MAX_INST];
	struct tpl_node node[TB_MAX_NODES];
	regex_t re[PROF_MAX_ROLES];
	int nre;
	char cfg[PATH_MAX], dir[PATH_MAX];
	char *err;	/* exec_round's: why the run could not go on */
	size_t errlen;
};

/* --- exec_reset.c */
/* after a round: when a command ended at its timeout (ex: the round's
 * outcomes, in r->in's order) and its role may reboot (on_timeout), every
 * node of the round's commands rebooted, its agent reached again and its
 * NIC's fault rules added again; NULL when none was, else [{node, why,
 * round, seconds, ok, error}] (*failed: one could not be reset) */
json_t *exec_resets(struct run *r, const json_t *ex, int *failed);

/* --- exec_cmd.c */
/* start one command: 0, or -EIO (the instance is done, "not started") */
int exec_start_inst(struct run *r, struct inst *in);
/* wait up to ms for output, take it; reap what exited */
void exec_pump(struct run *r, int ms);
/* timeouts of every running command; 1 when interrupted */
int exec_watch(struct run *r);
/* end a running command now (why: WHY_*), its status kept */
void exec_end_inst(struct run *r, struct inst *in, int why, const char *what);
/* rdma-run stop ID on the instance's node: its answer kept */
void exec_stop_inst(struct run *r, struct inst *in);
/* what happened to one command, for the report */
json_t *exec_outcome(struct run *r, const struct inst *in);
/* its outcome in one line on the event line */
void exec_summary(struct run *r, const struct inst *in, const json_t *o);

#endif
