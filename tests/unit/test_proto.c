// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "expect.h"
#include "../../lib/proto.h"
#include "../../workloads/verbs.h"

static void raw(int fd, const char *s, uint32_t len_field)
{
	uint32_t be = htonl(len_field);

	if (write(fd, &be, 4) != 4 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		perror("write");
}

static void test_frames(void)
{
	int sv[2];
	json_t *in, *out;

	EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	in = json_pack("{s:i,s:s,s:{s:i}}", "v", PROTO_VERSION, "cmd", "hello", "args", "x", 1);
	EXPECT(proto_send(sv[0], in, 1000) == 0);
	EXPECT(proto_recv(sv[1], &out, 1000) == 0);
	EXPECT(out && json_equal(in, out));
	json_decref(in);
	json_decref(out);

	raw(sv[0], "{\"v\":2,\"a\":1,\"a\":2}", 19);	/* duplicate key */
	EXPECT(proto_recv(sv[1], &out, 1000) == -EPROTO);
	raw(sv[0], "[1,2,3]", 7);			/* not an object */
	EXPECT(proto_recv(sv[1], &out, 1000) == -EPROTO);
	raw(sv[0], "{\"v\":1}", 7);			/* other version (1 sent the token) */
	EXPECT(proto_recv(sv[1], &out, 1000) == -EPROTO);
	raw(sv[0], "{\"v\":2,", 7);			/* truncated JSON */
	EXPECT(proto_recv(sv[1], &out, 1000) == -EPROTO);
	raw(sv[0], "", PROTO_MAX_FRAME + 1);		/* oversized length */
	EXPECT(proto_recv(sv[1], &out, 1000) == -EPROTO);
	close(sv[0]);
	close(sv[1]);

	EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	EXPECT(proto_recv(sv[1], &out, 50) == -ETIMEDOUT);	/* nothing sent */
	raw(sv[0], "{\"v\"", 100);				/* peer dies mid-frame */
	close(sv[0]);
	EXPECT(proto_recv(sv[1], &out, 1000) == -EPROTO);
	close(sv[1]);
}

#define TOKEN "unit-test-token-0123456789abcdef"

/* the agent's end of a handshake, in a thread */
struct agent_end {
	int fd, r;
	const char *token;
	struct proto_sess s;
};

static void *agent_auth(void *p)
{
	struct agent_end *ae = p;

	ae->r = proto_auth_agent(&ae->s, ae->fd, ae->token, 2000, 1024);
	return NULL;
}

/* a handshake over sv with these tokens: the controller's result, err */
static int handshake(int sv[2], const char *ctl_token, const char *agent_token,
		     struct proto_sess *c, struct agent_end *ae, char *err, size_t errlen)
{
	pthread_t th;
	int r;

	EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	*ae = (struct agent_end){ .fd = sv[1], .token = agent_token };
	EXPECT(pthread_create(&th, NULL, agent_auth, ae) == 0);
	r = proto_auth_ctl(c, sv[0], ctl_token, 2000, err, errlen);
	pthread_join(th, NULL);
	return r;
}

/* both ends prove the token; then frames pass both ways */
static void test_auth_both_ways(void)
{
	struct agent_end ae;
	struct proto_sess c;
	json_t *m, *out = NULL;
	char err[256];
	int sv[2];

	EXPECT(handshake(sv, TOKEN, TOKEN, &c, &ae, err, sizeof(err)) == 0 && ae.r == 0);
	EXPECT(!memcmp(c.key, ae.s.key, sizeof(c.key)) && c.side == 'c' && ae.s.side == 'a');
	m = json_pack("{s:i,s:s}", "v", PROTO_VERSION, "cmd", "hello");
	EXPECT(proto_sess_send(&c, m, 1000) == 0);
	EXPECT(proto_sess_recv(&ae.s, &out, 1000) == 0 && json_equal(m, out));
	json_decref(out);
	EXPECT(proto_sess_send(&ae.s, m, 1000) == 0);
	EXPECT(proto_sess_recv(&c, &out, 1000) == 0 && json_equal(m, out));
	json_decref(out);
	json_decref(m);
	close(sv[0]);
	close(sv[1]);

	/* a controller with another token: refused, and told so */
	EXPECT(handshake(sv, "another-token-0123456789", TOKEN, &c, &ae, err, sizeof(err)) ==
	       -EACCES);
	EXPECT(ae.r == -EACCES && !strcmp(err, "authentication failed"));
	close(sv[0]);
	close(sv[1]);
}

/* a program squatting on the agent's port sees no token and, without it,
 * cannot pass for the agent */
static void test_port_squatter_learns_nothing(void)
{
	char seen[4096], err[256];
	struct proto_sess c;
	json_t *m;
	ssize_t n;
	int sv[2];

	EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	m = json_pack("{s:i,s:s}", "v", PROTO_VERSION, "challenge",
		      "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
	EXPECT(proto_send(sv[1], m, 1000) == 0);
	json_decref(m);
	/* its "ok" with a made-up proof, queued before the controller speaks */
	m = json_pack("{s:i,s:b,s:s}", "v", PROTO_VERSION, "ok", 1, "proof",
		      "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100");
	EXPECT(proto_send(sv[1], m, 1000) == 0);
	json_decref(m);
	EXPECT(proto_auth_ctl(&c, sv[0], TOKEN, 2000, err, sizeof(err)) == -EACCES);
	EXPECT(strstr(err, "did not prove") != NULL);
	n = recv(sv[1], seen, sizeof(seen) - 1, MSG_DONTWAIT);
	EXPECT(n > 0);
	seen[n > 0 ? n : 0] = 0;
	EXPECT(n > 0 && !memmem(seen, (size_t)n, TOKEN, strlen(TOKEN)));
	EXPECT(strstr(seen + 4, "\"proof\"") != NULL);	/* what it got: a proof, bound to nonces */
	close(sv[0]);
	close(sv[1]);

	/* nor can anything answer without a challenge (an old agent, another service) */
	EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	m = json_pack("{s:i,s:b}", "v", PROTO_VERSION, "ok", 1);
	EXPECT(proto_send(sv[1], m, 1000) == 0);
	json_decref(m);
	EXPECT(proto_auth_ctl(&c, sv[0], TOKEN, 2000, err, sizeof(err)) == -EPROTO && err[0]);
	close(sv[0]);
	close(sv[1]);
}

/* whoever sits on the path cannot alter, replay or insert a frame */
static void test_frames_tagged(void)
{
	struct agent_end ae;
	struct proto_sess c, mitm;
	char buf[4096], err[256];
	json_t *m, *out = NULL;
	int sv[2], w[2];
	ssize_t n;

	EXPECT(handshake(sv, TOKEN, TOKEN, &c, &ae, err, sizeof(err)) == 0 && ae.r == 0);
	EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, w) == 0);
	ae.s.fd = w[1];		/* the agent reads what the path passes on */
	m = json_pack("{s:i,s:s,s:{s:s}}", "v", PROTO_VERSION, "cmd", "inject", "args", "x",
		      "list");
	EXPECT(proto_sess_send(&c, m, 1000) == 0);
	n = recv(sv[1], buf, sizeof(buf), 0);
	EXPECT(n > 40);
	if (n <= 40)
		return;
	/* passed on as it is: accepted; again (a replay): refused */
	EXPECT(write(w[0], buf, (size_t)n) == n);
	EXPECT(proto_sess_recv(&ae.s, &out, 1000) == 0 && json_equal(m, out));
	json_decref(out);
	EXPECT(write(w[0], buf, (size_t)n) == n);
	EXPECT(proto_sess_recv(&ae.s, &out, 1000) == -EBADMSG && !out);
	/* one byte of the text changed: refused */
	EXPECT(proto_sess_send(&c, m, 1000) == 0);
	n = recv(sv[1], buf, sizeof(buf), 0);
	buf[12] ^= 0x01;
	EXPECT(write(w[0], buf, (size_t)n) == n);
	ae.s.rx = 1;
	EXPECT(proto_sess_recv(&ae.s, &out, 1000) == -EBADMSG);
	/* a frame of the path's own, tagged with a key it guesses: refused */
	mitm = c;
	memset(mitm.key, 0x5a, sizeof(mitm.key));
	mitm.fd = w[0];
	EXPECT(proto_sess_send(&mitm, m, 1000) == 0);
	ae.s.rx = 2;
	EXPECT(proto_sess_recv(&ae.s, &out, 1000) == -EBADMSG);
	/* and a frame too short to hold a tag */
	raw(w[0], "{}", 2);
	EXPECT(proto_sess_recv(&ae.s, &out, 1000) == -EPROTO);
	json_decref(m);
	close(sv[0]);
	close(sv[1]);
	close(w[0]);
	close(w[1]);
}

static void test_token(void)
{
	char buf[PROTO_TOKEN_MAX + 1];
	char path[] = "/tmp/rtb-token-XXXXXX";
	int fd = mkstemp(path);

	EXPECT(fd >= 0);
	EXPECT(write(fd, "0123456789abcdef0123\n", 21) == 21);
	EXPECT(proto_token_load(path, buf, sizeof(buf)) == 0 && !strcmp(buf, "0123456789abcdef0123"));
	EXPECT(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0);
	EXPECT(write(fd, "short\n", 6) == 6);
	EXPECT(proto_token_load(path, buf, sizeof(buf)) == -EINVAL);
	EXPECT(ftruncate(fd, 0) == 0 && lseek(fd, 0, SEEK_SET) == 0);
	EXPECT(write(fd, "0123456789abcdef;rm -rf\n", 24) == 24);
	EXPECT(proto_token_load(path, buf, sizeof(buf)) == -EINVAL);
	close(fd);
	unlink(path);
	EXPECT(proto_token_load("/nonexistent/token", buf, sizeof(buf)) == -ENOENT);
}

static void test_endpoint(void)
{
	struct vb_ep a, b;
	json_t *j;

	memset(&a, 0, sizeof(a));
	a.qpn = 0x11;
	a.psn = 0xabcdef;
	a.rkey = 0xdeadbeef;
	a.addr = 0x7f0000001000ULL;
	a.len = 4096;
	a.mtu = IBV_MTU_1024;
	EXPECT(vb_gid_parse("::ffff:198.18.0.1", &a.gid) == 0);
	j = vb_ep_to_json(&a);
	EXPECT(vb_ep_from_json(&b, j) == 0);
	EXPECT(!memcmp(&a.gid, &b.gid, sizeof(a.gid)) && a.qpn == b.qpn && a.psn == b.psn &&
	       a.rkey == b.rkey && a.addr == b.addr && a.len == b.len && a.mtu == b.mtu);
	json_object_set_new(j, "qpn", json_integer(1 << 24));	/* QPNs are 24 bits */
	EXPECT(vb_ep_from_json(&b, j) == -EINVAL);
	json_object_set_new(j, "qpn", json_integer(5));
	json_object_set_new(j, "mtu", json_integer(1500));
	EXPECT(vb_ep_from_json(&b, j) == -EINVAL);
	json_object_set_new(j, "mtu", json_integer(4096));
	json_object_set_new(j, "gid", json_string("not-a-gid"));
	EXPECT(vb_ep_from_json(&b, j) == -EINVAL);
	json_decref(j);
}

int main(void)
{
	test_frames();
	test_auth_both_ways();
	test_port_squatter_learns_nothing();
	test_frames_tagged();
	test_token();
	test_endpoint();
	return expect_done("test_proto");
}
