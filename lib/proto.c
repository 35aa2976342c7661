// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "proto.h"
#include "clock.h"

static int64_t now_ms(void)
{
	return (int64_t)(rtb_now_ns() / 1000000);
}

/* wait for fd readiness until deadline (ms, CLOCK_MONOTONIC); <0: forever */
static int wait_fd(int fd, short ev, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int r, to;

	for (;;) {
		to = deadline < 0 ? -1 : (int)(deadline - now_ms());
		if (deadline >= 0 && to < 0)
			to = 0;
		r = poll(&p, 1, to);
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static int xfer(int fd, void *buf, size_t len, int sending, int64_t deadline)
{
	char *p = buf;
	ssize_t n;
	int r;

	while (len) {
		r = wait_fd(fd, sending ? POLLOUT : POLLIN, deadline);
		if (r)
			return r;
		n = sending ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return errno == ECONNRESET ? -EPIPE : -errno;
		}
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int64_t deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

/* what is left until a deadline, as a timeout (-1: none) */
static int left_ms(int64_t dl)
{
	int64_t l = dl - now_ms();

	return dl < 0 ? -1 : l > 0 ? (int)l : 0;
}

/* one frame: its length, the JSON text, and (an authenticated session's
 * frame) its tag after the text, counted in the length */
static int frame_send(int fd, const char *s, size_t len, const unsigned char *tag, int64_t dl)
{
	size_t all = len + (tag ? PROTO_TAG_LEN : 0);
	uint32_t be;
	int r;

	if (all > PROTO_MAX_FRAME)
		return -EMSGSIZE;
	be = htonl((uint32_t)all);
	r = xfer(fd, &be, sizeof(be), 1, dl);
	if (!r)
		r = xfer(fd, (void *)s, len, 1, dl);
	if (!r && tag)
		r = xfer(fd, (void *)tag, PROTO_TAG_LEN, 1, dl);
	return r;
}

int proto_send(int fd, json_t *msg, int timeout_ms)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	int r;

	if (!s)
		return -ENOMEM;
	r = frame_send(fd, s, strlen(s), NULL, deadline_of(timeout_ms));
	free(s);
	return r;
}

int proto_recv(int fd, json_t **out, int timeout_ms)
{
	return proto_recv_max(fd, out, timeout_ms, PROTO_MAX_FRAME);
}

/*
 * One frame's bytes into a new buffer: PROTO_MAC_HEAD bytes left free at its
 * start (the tag's direction and sequence number go there), the text after
 * them, NUL-terminated; *len the frame's length.
 */
static int frame_recv(int fd, uint32_t max, int64_t dl, char **out, uint32_t *len)
{
	uint32_t be;
	char *buf;
	int r;

	*out = NULL;
	r = xfer(fd, &be, sizeof(be), 0, dl);
	if (r)
		return r;
	*len = ntohl(be);
	if (*len == 0 || *len > max || *len > PROTO_MAX_FRAME)
		return -EPROTO;
	buf = malloc((size_t)*len + PROTO_MAC_HEAD + 1);
	if (!buf)
		return -ENOMEM;
	r = xfer(fd, buf + PROTO_MAC_HEAD, *len, 0, dl);
	if (r) {
		free(buf);
		return r == -EPIPE ? -EPROTO : r;
	}
	buf[PROTO_MAC_HEAD + *len] = 0;
	*out = buf;
	return 0;
}

/* text -> a message of this version, or -EPROTO */
static int frame_json(const char *text, size_t len, json_t **out)
{
	json_error_t jerr;
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);

	*out = NULL;
	if (!j)
		return -EPROTO;
	if (!json_is_object(j) || json_integer_value(json_object_get(j, "v")) != PROTO_VERSION) {
		json_decref(j);
		return -EPROTO;
	}
	*out = j;
	return 0;
}

int proto_recv_max(int fd, json_t **out, int timeout_ms, uint32_t max)
{
	uint32_t len;
	char *buf;
	int r;

	*out = NULL;
	r = frame_recv(fd, max, deadline_of(timeout_ms), &buf, &len);
	if (r)
		return r;
	r = frame_json(buf + PROTO_MAC_HEAD, len, out);
	free(buf);
	return r;
}

/* --- authentication (proto.h) */

static void hmac(const unsigned char *key, size_t klen, const void *data, size_t len,
		 unsigned char out[PROTO_TAG_LEN])
{
	unsigned int n = PROTO_TAG_LEN;

	HMAC(EVP_sha256(), key, (int)klen, data, len, out, &n);
}

/* HMAC(token, label || agent's nonce || controller's nonce) */
static void derive(const char *token, const char *label, const unsigned char *an,
		   const unsigned char *cn, unsigned char out[PROTO_TAG_LEN])
{
	unsigned char m[16 + 2 * PROTO_NONCE_LEN];
	size_t l = strlen(label);

	memcpy(m, label, l);
	memcpy(m + l, an, PROTO_NONCE_LEN);
	memcpy(m + l + PROTO_NONCE_LEN, cn, PROTO_NONCE_LEN);
	hmac((const unsigned char *)token, strlen(token), m, l + 2 * PROTO_NONCE_LEN, out);
}

static void hex_of(const unsigned char *b, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = 0;
}

/* exactly 2n lowercase hex digits -> n bytes; 0 or -EPROTO */
static int bytes_of(const char *hex, unsigned char *b, size_t n)
{
	if (!hex || strlen(hex) != 2 * n)
		return -EPROTO;
	for (size_t i = 0; i < 2 * n; i++) {
		const char c = hex[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (v < 0)
			return -EPROTO;
		b[i / 2] = (unsigned char)(i & 1 ? (b[i / 2] << 4) | v : v);
	}
	return 0;
}

static int nonce(unsigned char *b)
{
	return getrandom(b, PROTO_NONCE_LEN, 0) == PROTO_NONCE_LEN ? 0 : -EIO;
}

int proto_token_new(char *buf, size_t len)
{
	unsigned char raw[24];

	if (len < 2 * sizeof(raw) + 1)
		return -ENOSPC;
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -EIO;
	hex_of(raw, sizeof(raw), buf);
	return 0;
}

static int same(const unsigned char *a, const unsigned char *b, size_t n)
{
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

static void sess_init(struct proto_sess *s, int fd, char side, const char *token,
		      const unsigned char *an, const unsigned char *cn)
{
	s->fd = fd;
	s->side = side;
	s->tx = s->rx = 0;
	derive(token, "rtb key", an, cn, s->key);
}

/* a message's bytes, a string member's hex, into b: 0 or -EPROTO */
static int member_bytes(const json_t *m, const char *k, unsigned char *b, size_t n)
{
	return bytes_of(json_string_value(json_object_get(m, k)), b, n);
}

int proto_auth_agent(struct proto_sess *s, int fd, const char *token, int timeout_ms,
		     uint32_t max)
{
	unsigned char an[PROTO_NONCE_LEN], cn[PROTO_NONCE_LEN], want[PROTO_TAG_LEN],
		got[PROTO_TAG_LEN];
	char hex[2 * PROTO_TAG_LEN + 1];
	json_t *m;
	int r;

	if (nonce(an))
		return -EIO;
	hex_of(an, PROTO_NONCE_LEN, hex);
	m = json_pack("{s:i,s:s}", "v", PROTO_VERSION, "challenge", hex);
	if (!m)
		return -ENOMEM;
	r = proto_send(fd, m, timeout_ms);
	json_decref(m);
	if (r)
		return r;
	r = proto_recv_max(fd, &m, timeout_ms, max);
	if (r)
		return r;
	r = member_bytes(m, "nonce", cn, sizeof(cn)) ?: member_bytes(m, "proof", got, sizeof(got));
	json_decref(m);
	if (r)
		return r;
	derive(token, "rtb controller", an, cn, want);
	if (!same(want, got, sizeof(want))) {
		/* no hint which part was wrong; the caller closes */
		m = json_pack("{s:i,s:b,s:s}", "v", PROTO_VERSION, "ok", 0, "error",
			      "authentication failed");
		if (m)
			proto_send(fd, m, 1000);
		json_decref(m);
		return -EACCES;
	}
	derive(token, "rtb agent", an, cn, want);
	hex_of(want, sizeof(want), hex);
	m = json_pack("{s:i,s:b,s:s}", "v", PROTO_VERSION, "ok", 1, "proof", hex);
	if (!m)
		return -ENOMEM;
	r = proto_send(fd, m, timeout_ms);
	json_decref(m);
	if (!r)
		sess_init(s, fd, 'a', token, an, cn);
	return r;
}

int proto_auth_ctl(struct proto_sess *s, int fd, const char *token, int timeout_ms, char *err,
		   size_t errlen)
{
	int64_t dl = deadline_of(timeout_ms);
	unsigned char an[PROTO_NONCE_LEN], cn[PROTO_NONCE_LEN], mac[PROTO_TAG_LEN],
		got[PROTO_TAG_LEN];
	char hn[2 * PROTO_NONCE_LEN + 1], hp[2 * PROTO_TAG_LEN + 1];
	json_t *m;
	int r;

	err[0] = 0;
	r = proto_recv_max(fd, &m, left_ms(dl), 4096);
	if (r)
		return r;
	r = member_bytes(m, "challenge", an, sizeof(an));
	json_decref(m);
	if (r) {
		snprintf(err, errlen, "no challenge from the agent (not an rdma-agent of this "
			 "version?)");
		return r;
	}
	if (nonce(cn))
		return -EIO;
	derive(token, "rtb controller", an, cn, mac);
	hex_of(cn, sizeof(cn), hn);
	hex_of(mac, sizeof(mac), hp);
	m = json_pack("{s:i,s:s,s:s}", "v", PROTO_VERSION, "nonce", hn, "proof", hp);
	if (!m)
		return -ENOMEM;
	r = proto_send(fd, m, left_ms(dl));
	json_decref(m);
	if (r)
		return r;
	r = proto_recv_max(fd, &m, left_ms(dl), 4096);
	if (r)
		return r;
	if (!json_is_true(json_object_get(m, "ok"))) {
		const char *e = json_string_value(json_object_get(m, "error"));

		snprintf(err, errlen, "%s", e ? e : "authentication refused");
		json_decref(m);
		return -EACCES;
	}
	r = member_bytes(m, "proof", got, sizeof(got));
	json_decref(m);
	derive(token, "rtb agent", an, cn, mac);
	if (r || !same(mac, got, sizeof(mac))) {
		/* whoever answers on the port does not hold the token */
		snprintf(err, errlen, "the agent did not prove it holds the token (another "
			 "program on its port?)");
		return -EACCES;
	}
	sess_init(s, fd, 'c', token, an, cn);
	return 0;
}

/* the tag of a session's frame: HMAC(key, side || sequence number || text);
 * buf holds PROTO_MAC_HEAD free bytes, then the text */
static void tag_of(const struct proto_sess *s, char side, uint64_t seq, unsigned char *buf,
		   size_t len, unsigned char out[PROTO_TAG_LEN])
{
	buf[0] = (unsigned char)side;
	for (int i = 0; i < 8; i++)
		buf[1 + i] = (unsigned char)(seq >> (56 - 8 * i));
	hmac(s->key, sizeof(s->key), buf, PROTO_MAC_HEAD + len, out);
}

int proto_sess_send(struct proto_sess *s, json_t *msg, int timeout_ms)
{
	unsigned char tag[PROTO_TAG_LEN];
	char *t = json_dumps(msg, JSON_COMPACT), *buf;
	size_t len;
	int r;

	if (!t)
		return -ENOMEM;
	len = strlen(t);
	buf = malloc(len + PROTO_MAC_HEAD);
	if (!buf) {
		free(t);
		return -ENOMEM;
	}
	memcpy(buf + PROTO_MAC_HEAD, t, len);
	free(t);
	tag_of(s, s->side, s->tx++, (unsigned char *)buf, len, tag);
	r = frame_send(s->fd, buf + PROTO_MAC_HEAD, len, tag, deadline_of(timeout_ms));
	free(buf);
	return r;
}

int proto_sess_recv(struct proto_sess *s, json_t **out, int timeout_ms)
{
	unsigned char tag[PROTO_TAG_LEN];
	uint32_t len;
	char *buf;
	int r;

	*out = NULL;
	r = frame_recv(s->fd, PROTO_MAX_FRAME, deadline_of(timeout_ms), &buf, &len);
	if (r)
		return r;
	if (len <= PROTO_TAG_LEN) {
		free(buf);
		return -EPROTO;
	}
	len -= PROTO_TAG_LEN;
	tag_of(s, s->side == 'a' ? 'c' : 'a', s->rx++, (unsigned char *)buf, len, tag);
	if (!same(tag, (unsigned char *)buf + PROTO_MAC_HEAD + len, PROTO_TAG_LEN)) {
		free(buf);
		return -EBADMSG;	/* altered, replayed or out of order */
	}
	r = frame_json(buf + PROTO_MAC_HEAD, len, out);
	free(buf);
	return r;
}

int proto_request(struct proto_sess *s, const char *cmd, json_t *args, int timeout_ms)
{
	json_t *req;
	int r;

	req = json_pack("{s:i,s:s,s:o}", "v", PROTO_VERSION, "cmd", cmd, "args",
			args ? args : json_object());
	if (!req)
		return -ENOMEM;
	r = proto_sess_send(s, req, timeout_ms);
	json_decref(req);
	return r;
}

int proto_reply(struct proto_sess *s, json_t **result, int timeout_ms, char *err, size_t errlen)
{
	json_t *resp, *res;
	int r;

	*result = NULL;
	if (err && errlen)
		err[0] = 0;
	r = proto_sess_recv(s, &resp, timeout_ms);
	if (r)
		return r;
	if (json_is_true(json_object_get(resp, "ok"))) {
		res = json_object_get(resp, "result");
		*result = res ? json_incref(res) : json_object();
		json_decref(resp);
		return 0;
	}
	if (err && errlen) {
		const char *m = json_string_value(json_object_get(resp, "error"));

		snprintf(err, errlen, "%s", m ? m : "malformed error response");
	}
	json_decref(resp);
	return -EREMOTEIO;
}

int proto_call(struct proto_sess *s, const char *cmd, json_t *args, json_t **result,
	       int timeout_ms, char *err, size_t errlen)
{
	int r;

	*result = NULL;
	if (err && errlen)
		err[0] = 0;
	r = proto_request(s, cmd, args, timeout_ms);
	return r ? r : proto_reply(s, result, timeout_ms, err, errlen);
}

int proto_token_load(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	struct stat st;
	size_t n, i;

	if (!f)
		return -errno;
	/* a secret: not readable by others, and ours (or root's) */
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || (st.st_mode & 077) ||
	    (st.st_uid != geteuid() && st.st_uid != 0)) {
		fclose(f);
		return -EACCES;
	}
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	n = strcspn(buf, "\r\n");
	buf[n] = 0;
	if (n < 16 || n > PROTO_TOKEN_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		char c = buf[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_'))
			return -EINVAL;
	}
	return 0;
}

static int split_hostport(const char *hp, char *host, size_t hlen, int *port)
{
	const char *c = strrchr(hp, ':');
	char *end;
	long p;

	if (!c || (size_t)(c - hp) >= hlen)
		return -EINVAL;
	memcpy(host, hp, (size_t)(c - hp));
	host[c - hp] = 0;
	errno = 0;
	p = strtol(c + 1, &end, 10);
	if (errno || *end || end == c + 1 || p < 1 || p > 65535)
		return -EINVAL;
	*port = (int)p;
	return 0;
}

int net_listen(const char *hostport)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char host[64];
	int fd, port, one = 1;

	if (split_hostport(hostport, host, sizeof(host), &port))
		return -EINVAL;
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -EINVAL;
	sa.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

int net_free_port(uint32_t addr)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(addr) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd < 0)
		return -errno;
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(fd);
	return port > 0 ? port : -EADDRNOTAVAIL;
}

void net_peer_ip(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	snprintf(buf, len, "?");
	if (getpeername(fd, (struct sockaddr *)&ss, &sl))
		return;
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, buf, (socklen_t)len);
	else if (ss.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, buf, (socklen_t)len);
}

int net_connect(const char *host, int port, int timeout_ms)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd, r, one = 1, soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (r && errno != EINPROGRESS) {
		r = -errno;
		goto fail;
	}
	if (r) {
		r = wait_fd(fd, POLLOUT, deadline_of(timeout_ms));
		if (r)
			goto fail;
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
		if (soerr) {
			r = -soerr;
			goto fail;
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
fail:
	close(fd);
	return r;
}
