// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctl/agent/agent.h"
#include "lib/log.h"
#include "lib/proto.h"

/* join.c's join_take, once it listens (a pointer: the two files do not
 * call each other in a circle) */
static int (*join_hook)(struct agentc *c, const char *name, int timeout_ms);

void agentc_join_hook(int (*take)(struct agentc *c, const char *name, int timeout_ms))
{
	join_hook = take;
}

int agentc_open(struct agentc *c, const char *name, const char *host, int port, const char *token,
		int timeout_ms)
{
	char why[256];
	int r, tries = 0;

	if (!strcmp(host, JOIN_HOST))	/* it dialed us: one of its parked connections */
		return join_hook ? join_hook(c, name, timeout_ms) : -ENOTCONN;
	snprintf(c->where, sizeof(c->where), "%s (%s:%d)", name, host, port);
	do {
		c->fd = net_connect(host, port, timeout_ms);
		if (c->fd < 0)
			return c->fd;
		/*
		 * Authenticate now, both ways. Strangers' connections can push a
		 * new one out of the agent's pool before its handshake ends (the
		 * agent closes it: -EPIPE): a fresh one gets the same chance.
		 */
		r = proto_auth_ctl(&c->s, c->fd, token, timeout_ms, why, sizeof(why));
		if (r)
			agentc_close(c);
	} while (r == -EPIPE && ++tries < 3);
	if (r == -EACCES || (r == -EPROTO && why[0]))
		log_err("%s: %s", c->where, why);
	if (r == -EPROTO && why[0])
		r = -EACCES;
	return r;
}

void agentc_close(struct agentc *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* err for a failed cmd; a stream out of step or gone is closed: nothing more on it */
static int call_failed(struct agentc *c, const char *cmd, int r, const char *remote, char *err,
		       size_t errlen)
{
	if (r == -EREMOTEIO)
		snprintf(err, errlen, "%s: %s: %s", c->where, cmd, remote);
	else if (r == -EPROTO)
		snprintf(err, errlen, "%s: %s: malformed reply", c->where, cmd);
	else if (r == -EBADMSG)
		snprintf(err, errlen, "%s: %s: a reply failed its authentication (altered on "
			 "the way?)", c->where, cmd);
	else if (r)
		snprintf(err, errlen, "%s: %s: %s", c->where, cmd,
			 r == -EPIPE ? "agent closed the connection" :
			 r == -ETIMEDOUT ? "no answer (the agent or the channel is gone)" :
					   strerror(-r));
	if (r && r != -EREMOTEIO)
		agentc_close(c);
	return r;
}

/* a connection lost before: said at once, not after a timeout */
static int lost_before(struct agentc *c, const char *cmd, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s: the connection was lost before", c->where, cmd);
	return -ENOTCONN;
}

int agentc_send(struct agentc *c, const char *cmd, json_t *args, int timeout_ms, char *err,
		size_t errlen)
{
	if (c->fd < 0) {
		json_decref(args);
		return lost_before(c, cmd, err, errlen);
	}
	return call_failed(c, cmd, proto_request(&c->s, cmd, args, timeout_ms), "", err,
			   errlen);
}

int agentc_reply(struct agentc *c, const char *cmd, json_t **res, int timeout_ms, char *err,
		 size_t errlen)
{
	char remote[512];

	*res = NULL;
	if (c->fd < 0)
		return lost_before(c, cmd, err, errlen);
	return call_failed(c, cmd, proto_reply(&c->s, res, timeout_ms, remote, sizeof(remote)),
			   remote, err, errlen);
}

int agentc_call(struct agentc *c, const char *cmd, json_t *args, json_t **res, int timeout_ms,
		char *err, size_t errlen)
{
	int r = agentc_send(c, cmd, args, timeout_ms, err, errlen);

	if (r) {
		*res = NULL;
		return r;
	}
	return agentc_reply(c, cmd, res, timeout_ms, err, errlen);
}

/*
 * cmd on every agent cs[i] that has args[i] (stolen), at once: every
 * request sent, then every reply read, so that n agents under TCG take
 * about one agent's time, not n. res[i] (when res) the results, NULL where
 * none; 0, or the first failure's -errno with its err (every reply is read
 * whatever failed: each stream stays in step).
 */
int agentc_call_all(struct agentc *const *cs, int n, const char *cmd, json_t **args, json_t **res,
		    int timeout_ms, char *err, size_t errlen)
{
	char *sent = calloc((size_t)(n > 0 ? n : 1), 1), e[512];
	int i, r = 0, ri;

	for (i = 0; i < n; i++) {
		if (res)
			res[i] = NULL;
		if (!sent) {
			json_decref(args[i]);
			args[i] = NULL;
		}
	}
	if (!sent) {
		snprintf(err, errlen, "%s: %s", cmd, strerror(ENOMEM));
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (!args[i])
			continue;
		ri = agentc_send(cs[i], cmd, args[i], timeout_ms, e, sizeof(e));
		args[i] = NULL;
		sent[i] = !ri;
		if (ri && !r) {
			r = ri;
			snprintf(err, errlen, "%s", e);
		}
	}
	for (i = 0; i < n; i++) {
		json_t *x = NULL;

		if (!sent[i])
			continue;
		ri = agentc_reply(cs[i], cmd, &x, timeout_ms, e, sizeof(e));
		if (ri && !r) {
			r = ri;
			snprintf(err, errlen, "%s", e);
		}
		if (res)
			res[i] = x;
		else
			json_decref(x);
	}
	free(sent);
	return r;
}

int agentc_do(struct agentc *c, const char *cmd, json_t *args, char *err, size_t errlen)
{
	json_t *res = NULL;
	int r = agentc_call(c, cmd, args, &res, PROTO_SILENCE_MS, err, errlen);

	json_decref(res);
	return r;
}

int agentc_token_load(const char *path, char *buf, size_t len)
{
	int r = proto_token_load(path, buf, len);

	if (r)
		log_err("%s: cannot use as token file: %s", path,
			r == -EINVAL ? "expected one line of 16..128 [A-Za-z0-9_-]" : strerror(-r));
	return r;
}
