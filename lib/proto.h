/* SPDX-License-Identifier: MIT */
/*
 * Control channel between rdmactl and rdma-agent: TCP, one JSON object per
 * frame, framed by a 4-byte big-endian length (at most PROTO_MAX_FRAME).
 *
 * Both ends prove they hold the token; it never goes on the wire:
 *   agent       {"v":2, "challenge":AN}                    32 random bytes, hex
 *   controller  {"v":2, "nonce":CN, "proof":HMAC(token, "rtb controller"|AN|CN)}
 *   agent       {"v":2, "ok":true, "proof":HMAC(token, "rtb agent"|AN|CN)}
 *               | {"v":2, "ok":false, "error":"authentication failed"}, closed
 * (HMAC-SHA256, nonces as bytes). A port squatter gets a proof bound to
 * nonces it cannot reuse; an agent's answers are the token holder's.
 * Then every frame is the JSON text followed by a 32-byte tag,
 * HMAC(K, side|seq|text), K = HMAC(token, "rtb key"|AN|CN), side 'c' or 'a'
 * (who sent it), seq counting that side's frames from 0 (8 bytes, big
 * endian): a frame altered, replayed, reordered or inserted by whoever sits
 * on the path is refused (-EBADMSG) and the connection ends.
 *   request  {"v":2, "cmd":"<verb>", "args":{...}}
 *   response {"v":2, "ok":true, "result":{...}} | {"v":2, "ok":false, "error":"..."}
 * Decoding is defensive: size cap, duplicate keys rejected, types checked.
 * tests/softroce/ctlpeer.py speaks it from Python.
 */
#ifndef RTB_PROTO_H
#define RTB_PROTO_H

#include <stdint.h>
#include <jansson.h>

#define PROTO_VERSION 2
#define PROTO_MAX_FRAME (16u << 20)
#define PROTO_TOKEN_MAX 128
#define PROTO_NONCE_LEN 32
#define PROTO_TAG_LEN 32
#define PROTO_MAC_HEAD 9	/* side and sequence number, before the text */

/* an authenticated connection: its key and both directions' counts */
struct proto_sess {
	int fd;
	char side;		/* 'c' controller, 'a' agent: what our frames say */
	uint64_t tx, rx;
	unsigned char key[PROTO_TAG_LEN];
};
/*
 * The two ends' promises when the channel goes quiet (docs/testbed.md,
 * "When a piece fails mid-run"). A leased fault rule lives PROTO_LEASE_MS past
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

/* The agent's end of the handshake on a new connection (frames up to max
 * bytes): 0 with *s ready; -EACCES for a wrong proof (answered, the caller
 * closes); -EPROTO, -ETIMEDOUT, -EPIPE, -errno. */
int proto_auth_agent(struct proto_sess *s, int fd, const char *token, int timeout_ms,
		     uint32_t max);
/* The controller's end, timeout_ms for all of it: 0 with *s ready; -EACCES
 * (the agent refused our proof, or gave a wrong one: err says which); -EPROTO
 * (no challenge: err says), -errno. */
int proto_auth_ctl(struct proto_sess *s, int fd, const char *token, int timeout_ms, char *err,
		   size_t errlen);
/* a session's frames, tagged and checked: as proto_send/proto_recv, and
 * -EBADMSG for a frame whose tag is wrong */
int proto_sess_send(struct proto_sess *s, json_t *msg, int timeout_ms);
int proto_sess_recv(struct proto_sess *s, json_t **out, int timeout_ms);

/* one request/response; *result is a new reference on success. On failure
 * returns -errno (transport) or -EREMOTEIO with the agent's message in err. */
int proto_call(struct proto_sess *s, const char *cmd, json_t *args_stolen, json_t **result,
	       int timeout_ms, char *err, size_t errlen);
/* its two halves, for requests to several peers at once: the request sent,
 * then its response read (as proto_call's) */
int proto_request(struct proto_sess *s, const char *cmd, json_t *args_stolen, int timeout_ms);
int proto_reply(struct proto_sess *s, json_t **result, int timeout_ms, char *err, size_t errlen);

/* a fresh token: 48 hex characters of the kernel's random bytes; 0, -errno */
int proto_token_new(char *buf, size_t len);
/* read a token file (one line, [A-Za-z0-9_-], 16..128 chars) */
int proto_token_load(const char *path, char *buf, size_t len);

/* "host:port" -> listening socket (SO_REUSEADDR), or -errno */
int net_listen(const char *hostport);
/* a free TCP port on addr (host order: INADDR_LOOPBACK, INADDR_ANY), or
 * -errno; the caller binds it right after (a small race) */
int net_free_port(uint32_t addr);
/* connect with a deadline; -errno */
int net_connect(const char *host, int port, int timeout_ms);
/* the peer's address of a connected socket, for messages ("?" if none) */
void net_peer_ip(int fd, char *buf, size_t len);

#endif
