/* SPDX-License-Identifier: MIT */
/*
 * Control channel between rdmactl and rdma-agent: TCP, one JSON object per
 * frame, framed by a 4-byte big-endian length (at most PROTO_MAX_FRAME).
 *   request  {"v":1, "token":"<secret>", "cmd":"<verb>", "args":{...}}
 *   response {"v":1, "ok":true, "result":{...}} | {"v":1, "ok":false, "error":"..."}
 * Every request carries the token; the agent compares it in constant time.
 * Decoding is defensive: size cap, duplicate keys rejected, types checked.
 */
#ifndef RTB_PROTO_H
#define RTB_PROTO_H

#include <stdint.h>
#include <jansson.h>

#define PROTO_VERSION 1
#define PROTO_MAX_FRAME (16u << 20)
#define PROTO_TOKEN_MAX 128
/*
 * The two ends' promises when the channel goes quiet (README "When the
 * control channel is cut"). A leased fault rule lives PROTO_LEASE_MS past
 * its agent's last renewal, so one whose agent died stops acting that long
 * after at most. A request may stay unanswered for PROTO_SILENCE_MS (a cut
 * cable, a frozen VM) before the controller calls the agent lost, and the
 * agent keeps a connection with unacknowledged data as long, then drops it
 * and releases what the connection held.
 */
#define PROTO_LEASE_MS 6000
#define PROTO_SILENCE_MS 30000

int proto_send(int fd, json_t *msg, int timeout_ms);
/* 0, -ETIMEDOUT, -EPIPE (peer closed), -EPROTO (bad frame), -errno */
int proto_recv(int fd, json_t **out, int timeout_ms);
/* the same with a smaller size cap (a frame above max: -EPROTO, nothing
 * allocated): what a peer that has not authenticated yet may send */
int proto_recv_max(int fd, json_t **out, int timeout_ms, uint32_t max);

/* one request/response; *result is a new reference on success. On failure
 * returns -errno (transport) or -EREMOTEIO with the agent's message in err. */
int proto_call(int fd, const char *token, const char *cmd, json_t *args_stolen,
	       json_t **result, int timeout_ms, char *err, size_t errlen);
/* its two halves, for requests to several peers at once: the request sent,
 * then its response read (as proto_call's) */
int proto_request(int fd, const char *token, const char *cmd, json_t *args_stolen, int timeout_ms);
int proto_reply(int fd, json_t **result, int timeout_ms, char *err, size_t errlen);

int proto_token_equal(const char *a, const char *b);
/* read a token file (one line, [A-Za-z0-9_-], 16..128 chars) */
int proto_token_load(const char *path, char *buf, size_t len);

/* "host:port" -> listening socket (SO_REUSEADDR), or -errno */
int net_listen(const char *hostport);
/* connect with a deadline; -errno */
int net_connect(const char *host, int port, int timeout_ms);

#endif
