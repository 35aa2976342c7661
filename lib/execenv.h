/* SPDX-License-Identifier: MIT */
/*
 * The one set of limits on an exec workload command's environment, for the
 * profile checker (ctl/exp/profile_exec.c: refused at validate), the
 * controller (ctl/exp/exec.c) and the runner on the node (runner/main.c):
 * what validates runs, and nothing is cut short on the way.
 */
#ifndef RTB_EXECENV_H
#define RTB_EXECENV_H

/* variables of one command: the facts rdmactl gives (EXECENV_FACTS) and the
 * workload's, the role's and the arm's env: together */
#define EXECENV_MAX 128
/* bytes of one value, placeholders expanded; of one name */
#define EXECENV_VALUE_MAX 1023
#define EXECENV_NAME_MAX 63
/* the facts of a run of n nodes: RDMATB_{NODE,DEV,IP,GID_INDEX,PORT,NODES,
 * PEERS} and RDMATB_NODEi_{DEV,IP,GID_INDEX} for each node */
#define EXECENV_FACTS(n) (7 + 3 * (n))

#endif
