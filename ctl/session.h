/* SPDX-License-Identifier: MIT */
#ifndef RTB_SESSION_H
#define RTB_SESSION_H

#include "ctl.h"

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

#endif
