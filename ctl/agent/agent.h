/* SPDX-License-Identifier: MIT */
/*
 * The controller's end of the control channel (lib/proto.c): one TCP
 * connection to one rdma-agent, both ends proven to hold the token (it is
 * never sent), every frame tagged, structured requests. Knows addresses, not testbeds: the testbed room opens these
 * for its nodes, a profile's hosts for theirs.
 */
#ifndef RTB_CTL_AGENT_H
#define RTB_CTL_AGENT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/proto.h"

struct agentc {
	int fd;
	char where[96];		/* "node0 (127.0.0.1:47100)", for messages */
	struct proto_sess s;	/* the authenticated session on fd */
};

/* 0 or -errno (c->where is set either way; -EACCES: the agent refused our
 * proof or failed to give its own, said on stderr) */
int agentc_open(struct agentc *c, const char *name, const char *host, int port, const char *token,
		int timeout_ms);
void agentc_close(struct agentc *c);
/* *res new reference; on error err holds "node0 (...): cmd: reason". A
 * transport failure closes the connection (c->fd -1): later calls fail at
 * once with -ENOTCONN. */
int agentc_call(struct agentc *c, const char *cmd, json_t *args_stolen, json_t **res,
		int timeout_ms, char *err, size_t errlen);
/* its halves, for one request to several agents at once: every request
 * sent, then every reply read (errors as agentc_call's) */
int agentc_send(struct agentc *c, const char *cmd, json_t *args_stolen, int timeout_ms, char *err,
		size_t errlen);
int agentc_reply(struct agentc *c, const char *cmd, json_t **res, int timeout_ms, char *err,
		 size_t errlen);
/* cmd on each cs[i] with args[i] (stolen) at once; res[i] (when res) the
 * replies; 0 or the first failure's -errno, said in err */
int agentc_call_all(struct agentc *const *cs, int n, const char *cmd, json_t **args, json_t **res,
		    int timeout_ms, char *err, size_t errlen);
/* the token file into buf (proto_token_load), what is wrong with it
 * said: 0 or -errno */
int agentc_token_load(const char *path, char *buf, size_t len);
/* a request whose result is not needed (PROTO_SILENCE_MS to answer) */
int agentc_do(struct agentc *c, const char *cmd, json_t *args_stolen, char *err, size_t errlen);

/*
 * Agents that join (join.c, rdma-agent --join): rdmactl listens at `at`;
 * each agent that dials in and proves the token is parked under its name.
 * agentc_open with JOIN_HOST as the host takes one of its connections.
 */
#define JOIN_HOST "join"
int join_listen(const char *at, const char *token, char *err, size_t len);
void join_stop(void);
/* the names joined so far, node2 before node10; how many (<= max) */
int join_names(char (*names)[32], int max);
/* where name joined from, its device: 0, -ENOENT */
int join_info(const char *name, char *peer, size_t plen, char *dev, size_t dlen);
/* until every one of names has joined (a progress line every 2 s unless
 * quiet): 0, -ETIMEDOUT after wait_s (err names the missing), -EINTR;
 * -EIO when gone (not NULL) says what starts them has ended (err: why) */
int join_wait(const char *const *names, int n, double wait_s, int quiet, char *err, size_t len,
	      int (*gone)(void *arg, char *why, size_t len), void *arg);
/* the fleet: the names given ("A,B,...", each waited for as join_wait
 * does), or else the first `expect` to join (node2 before node10), a line
 * a second unless quiet. Their names into names[0..max); how many, or
 * -ETIMEDOUT, -EINTR (said) */
int join_fleet(const char *nodes, uint64_t expect, double wait_s, int quiet, char (*names)[32],
	       int max);
/* agentc_open's way to join_take (join_listen sets it) */
void agentc_join_hook(int (*take)(struct agentc *c, const char *name, int timeout_ms));
/* one of name's connections, waiting for one up to timeout_ms: 0,
 * -ETIMEDOUT, -ENOTCONN (not listening), -EINTR */
int join_take(struct agentc *c, const char *name, int timeout_ms);

#endif
