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
#include <sys/socket.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
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

int proto_send(int fd, json_t *msg, int timeout_ms)
{
	int64_t dl = deadline_of(timeout_ms);
	char *s = json_dumps(msg, JSON_COMPACT);
	uint32_t be;
	size_t len;
	int r;

	if (!s)
		return -ENOMEM;
	len = strlen(s);
	if (len > PROTO_MAX_FRAME) {
		free(s);
		return -EMSGSIZE;
	}
	be = htonl((uint32_t)len);
	r = xfer(fd, &be, sizeof(be), 1, dl);
	if (!r)
		r = xfer(fd, s, len, 1, dl);
	free(s);
	return r;
}

int proto_recv(int fd, json_t **out, int timeout_ms)
{
	return proto_recv_max(fd, out, timeout_ms, PROTO_MAX_FRAME);
}

int proto_recv_max(int fd, json_t **out, int timeout_ms, uint32_t max)
{
	int64_t dl = deadline_of(timeout_ms);
	json_error_t jerr;
	uint32_t be, len;
	char *buf;
	json_t *j;
	int r;

	*out = NULL;
	r = xfer(fd, &be, sizeof(be), 0, dl);
	if (r)
		return r;
	len = ntohl(be);
	if (len == 0 || len > max || len > PROTO_MAX_FRAME)
		return -EPROTO;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	r = xfer(fd, buf, len, 0, dl);
	if (r) {
		free(buf);
		return r == -EPIPE ? -EPROTO : r;
	}
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	if (!j)
		return -EPROTO;
	if (!json_is_object(j) || json_integer_value(json_object_get(j, "v")) != PROTO_VERSION) {
		json_decref(j);
		return -EPROTO;
	}
	*out = j;
	return 0;
}

int proto_request(int fd, const char *token, const char *cmd, json_t *args, int timeout_ms)
{
	json_t *req;
	int r;

	req = json_pack("{s:i,s:s,s:s,s:o}", "v", PROTO_VERSION, "token", token, "cmd", cmd, "args",
			args ? args : json_object());
	if (!req)
		return -ENOMEM;
	r = proto_send(fd, req, timeout_ms);
	json_decref(req);
	return r;
}

int proto_reply(int fd, json_t **result, int timeout_ms, char *err, size_t errlen)
{
	json_t *resp, *res;
	int r;

	*result = NULL;
	if (err && errlen)
		err[0] = 0;
	r = proto_recv(fd, &resp, timeout_ms);
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

int proto_call(int fd, const char *token, const char *cmd, json_t *args, json_t **result,
	       int timeout_ms, char *err, size_t errlen)
{
	int r;

	*result = NULL;
	if (err && errlen)
		err[0] = 0;
	r = proto_request(fd, token, cmd, args, timeout_ms);
	return r ? r : proto_reply(fd, result, timeout_ms, err, errlen);
}

int proto_token_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char d = la != lb;

	for (i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
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
