/* SPDX-License-Identifier: MIT */
#ifndef RTB_SESSION_H
#define RTB_SESSION_H

#include <signal.h>
#include <stdio.h>
#include "ctl.h"
#include "../lib/cli.h"

struct pair {
	struct tb_state tb;
	int ci, si;		/* node indices */
	struct agentc c, s;	/* client, server */
};

int pair_open(struct pair *p, const char *client, const char *server);
void pair_close(struct pair *p);
/* one workload on a client/server pair of arms: prepare, connect, start,
 * wait for both, destroy both (always). Results are new references. */
int pair_run(struct pair *p, const char *workload, json_t *opts, json_t **cres, json_t **sres,
	     char *err, size_t errlen);

/* one server arm and ncli client arms of a workload: prepare (server
 * first), connect (the server gets the clients' endpoints as a list when
 * peer_list, else the one; client i gets the server's entry i, or its
 * endpoint), start, wait, destroy (always). *results: the clients' results
 * in order, then the server's (new reference). */
int star_run(struct agentc *srv, struct agentc *const *cli, int ncli, const char *wl,
	     json_t *opts, int peer_list, json_t **results, char *err, size_t errlen);

/* one agent request whose result is not needed */
int arm_call(struct agentc *c, const char *cmd, json_t *args, char *err, size_t errlen);
/* prepare an arm of a workload: *arm its id, *ep its endpoint(s) (new reference) */
int arm_prepare_on(struct agentc *c, const char *wl, const char *role, json_t *opts,
		   json_int_t *arm, json_t **ep, char *err, size_t errlen);
/* set by a SIGINT handler: arms_wait returns -EINTR ("interrupted") */
extern volatile sig_atomic_t ctl_interrupted;
/* called by arms_wait with every batch of streamed intervals (idx: the arm's
 * index in the call); when set, arms_wait prints no live line of its own */
extern void (*arms_observer)(void *arg, int idx, const json_t *intervals, json_int_t progress);
extern void *arms_observer_arg;
/* wait for several arms at once (round robin): results[i] new references;
 * the first failure returns at once with the node in err */
int arms_wait(struct agentc **c, const json_int_t *arm, int n, json_t **results, char *err,
	      size_t errlen);

/* N agents running one workload together (rank i on nodes[i]) */
struct group {
	struct tb_state tb;
	int n;
	int node[TB_MAX_NODES];
	struct agentc c[TB_MAX_NODES];
};

/* "node0,node1,node2" or NULL = every node of the testbed */
int group_open(struct group *g, const char *nodes);
/* every node of s (agents not started by a testbed: a profile's hosts) */
int group_open_state(struct group *g, const struct tb_state *s);
void group_close(struct group *g);
/* prepare rank i with opts + {rank, nranks}, connect the full mesh, start,
 * wait for all (a failing rank is reported at once, by node), destroy all.
 * *results: array of per-rank results (new reference). */
int group_run(struct group *g, const char *workload, json_t *opts, json_t **results, char *err,
	      size_t errlen);

/* the controller's own --flags of a command, the rest go to the workload */
struct ctl_arg {
	const char *flag;	/* without the dashes */
	const char **dst;
};

/* --flag value pairs from argv[from]: own flags (NULL-terminated table) set
 * their dst, any other --key value lands in opts. 0, CLI_EXIT_OK after
 * -h/--help, CLI_EXIT_USAGE (message printed) */
int ctl_args(const char *cmd, int argc, char **argv, int from, const struct ctl_arg *own,
	     json_t *opts, void (*usage)(FILE *));

#endif
