// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ctl/agent/agent.h"
#include "lib/proto.h"

int agentc_open(struct agentc *c, const char *name, const char *host, int port, const char *token,
		int timeout_ms)
{
	snprintf(c->where, sizeof(c->where), "%s (%s:%d)", name, host, port);
	c->token = token;
	c->fd = net_connect(host, port, timeout_ms);
	return c->fd < 0 ? c->fd : 0;
}

void agentc_close(struct agentc *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

int agentc_call(struct agentc *c, const char *cmd, json_t *args, json_t **res, int timeout_ms,
		char *err, size_t errlen)
{
	char remote[512];
	int r;

	r = proto_call(c->fd, c->token, cmd, args, res, timeout_ms, remote, sizeof(remote));
	if (r == -EREMOTEIO)
		snprintf(err, errlen, "%s: %s: %s", c->where, cmd, remote);
	else if (r == -EPROTO)
		snprintf(err, errlen, "%s: %s: malformed reply", c->where, cmd);
	else if (r)
		snprintf(err, errlen, "%s: %s: %s", c->where, cmd,
			 r == -EPIPE ? "agent closed the connection" : strerror(-r));
	return r;
}

int agentc_do(struct agentc *c, const char *cmd, json_t *args, char *err, size_t errlen)
{
	json_t *res = NULL;
	int r = agentc_call(c, cmd, args, &res, 10000, err, errlen);

	json_decref(res);
	return r;
}
