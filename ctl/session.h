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

#endif
