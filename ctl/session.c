// SPDX-License-Identifier: MIT
/*
 * A pair of agents driven together: the common frame of every two-node
 * command (p2p, perftest): load the testbed, resolve --client/--server
 * node names, open both control connections, close them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl.h"
#include "session.h"
#include "../lib/log.h"

int pair_open(struct pair *p, const char *client, const char *server)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->c.fd = p->s.fd = -1;
	r = tb_load(&p->tb);
	if (r) {
		if (r == -ENOENT)
			log_err("no testbed is up (rdmactl testbed up)");
		return r;
	}
	p->ci = tb_node_index(&p->tb, client);
	p->si = tb_node_index(&p->tb, server);
	if (p->ci < 0 || p->si < 0) {
		log_err("unknown node '%s' (testbed has node0..node%d)", p->ci < 0 ? client : server,
			p->tb.nodes - 1);
		return -EINVAL;
	}
	if (p->ci == p->si) {
		log_err("client and server are the same node (%s): endpoints on one rxe device "
			"loop back inside rxe and never touch the wire",
			p->tb.node[p->ci].name);
		return -EINVAL;
	}
	r = agentc_open(&p->c, &p->tb, p->ci, 3000);
	if (!r)
		r = agentc_open(&p->s, &p->tb, p->si, 3000);
	if (r) {
		log_err("%s: cannot reach the agent: %s", r == 0 ? "" :
			(p->c.fd < 0 ? p->c.where : p->s.where), strerror(-r));
		pair_close(p);
	}
	return r;
}

void pair_close(struct pair *p)
{
	agentc_close(&p->c);
	agentc_close(&p->s);
}
