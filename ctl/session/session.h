/* SPDX-License-Identifier: MIT */
/*
 * The session room: arms of one workload on a set of agents, driven
 * together through prepare -> connect -> start -> wait -> destroy, in the
 * three shapes a workload can have (ctl/wl/wl.h): a group (every member a
 * rank, full mesh), a star (one server, n clients) and a pair (a star of
 * one). Above the testbed room (it opens the testbed's nodes), below the
 * experiment engine.
 */
#ifndef RTB_CTL_SESSION_H
#define RTB_CTL_SESSION_H

#include <jansson.h>
#include "ctl/testbed/testbed.h"

/* who watches the arms while they run: every batch of streamed intervals
 * (idx: the arm's index in the call). When set, arms_wait prints no live
 * line of its own. */
struct arms_obs {
	void (*intervals)(void *arg, int idx, const json_t *intervals, json_int_t progress);
	/* a member's failure, told by whoever knows of node faults: 0 the
	 * arm's failure (as without the hook); 1 a node fault elsewhere explains
	 * it, 2 its own node's: the member is recorded ({"failed": err} or
	 * {"lost": err}) and the others go on */
	int (*lost)(void *arg, const struct agentc *c);
	void *arg;
	int serve;	/* the last serve members serve the others (star_run: 1) */
};

/* wait for several arms at once (round robin): results[i] new references,
 * with the intervals as streamed; the first failure returns at once with
 * the node in err (unless obs->lost explains it: then once a member is
 * lost, the serving members are stopped when everyone else is through, and
 * everyone left after ARMS_LOST_GRACE_S); -EINTR when ctl_interrupted */
#define ARMS_LOST_GRACE_S 60
int arms_wait(struct agentc **c, const json_int_t *arm, int n, const struct arms_obs *obs,
	      json_t **results, char *err, size_t errlen);

/* N agents running one workload together (rank i on nodes[i]) */
struct group {
	struct tb_state tb;
	int n;
	int node[TB_MAX_NODES];
	struct agentc c[TB_MAX_NODES];
	struct arms_obs obs;	/* optional */
};

/* "node0,node1,node2" or NULL = every node of the testbed */
int group_open(struct group *g, const char *nodes);
/* every node of s (agents not started by a testbed: a profile's hosts) */
int group_open_state(struct group *g, const struct tb_state *s);
void group_close(struct group *g);
/* prepare rank i with opts + {rank, nranks}, connect the full mesh, start,
 * wait for all (a failing rank is reported at once, by node), destroy all;
 * each step sent to every rank at once.
 * *results: array of per-rank results (new reference). */
int group_run(struct group *g, const char *workload, json_t *opts, json_t **results, char *err,
	      size_t errlen);

/* one server arm and ncli client arms of a workload: prepare (server
 * first), connect (the server gets the clients' endpoints as a list when
 * peer_list, else the one; client i gets the server's entry i, or its
 * endpoint), start, wait, destroy (always). *results: the clients' results
 * in order, then the server's (new reference). */
int star_run(struct agentc *srv, struct agentc *const *cli, int ncli, const char *wl,
	     json_t *opts, int peer_list, const struct arms_obs *obs, json_t **results, char *err,
	     size_t errlen);

/* m pairs of one pair workload at once (a doctor's round, no node in two
 * pairs): client i on cli[i], its server on srv[i]. Every server prepared,
 * then every client; each pair connected; the servers started, then the
 * clients; all waited for; all destroyed (always). A pair whose arm fails
 * is recorded, and the others go on: that member's result is {"failed":
 * err}. *results: m arrays [client, server] (new reference). 0, or the
 * first failure of a step before the wait. */
int pairs_run(struct agentc *const *cli, struct agentc *const *srv, int m, const char *wl,
	      json_t *opts, json_t **results, char *err, size_t errlen);

/* a client and a server node of the testbed, for what is not an
 * experiment of arms (perftest's own programs) */
struct pair {
	struct tb_state tb;
	int ci, si;		/* node indices */
	struct agentc c, s;	/* client, server */
};

int pair_open(struct pair *p, const char *client, const char *server);
void pair_close(struct pair *p);

#endif
