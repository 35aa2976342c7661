// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
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

	raw(sv[0], "{\"v\":1,\"a\":1,\"a\":2}", 19);	/* duplicate key */
	EXPECT(proto_recv(sv[1], &out, 1000) == -EPROTO);
	raw(sv[0], "[1,2,3]", 7);			/* not an object */
	EXPECT(proto_recv(sv[1], &out, 1000) == -EPROTO);
	raw(sv[0], "{\"v\":2}", 7);			/* other version */
	EXPECT(proto_recv(sv[1], &out, 1000) == -EPROTO);
	raw(sv[0], "{\"v\":1,", 7);			/* truncated JSON */
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

static void test_token(void)
{
	char buf[PROTO_TOKEN_MAX + 1];
	char path[] = "/tmp/rtb-token-XXXXXX";
	int fd = mkstemp(path);

	EXPECT(proto_token_equal("abcdef0123456789", "abcdef0123456789"));
	EXPECT(!proto_token_equal("abcdef0123456789", "abcdef012345678"));
	EXPECT(!proto_token_equal("abcdef0123456789", "abcdef0123456788"));
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
	test_token();
	test_endpoint();
	return expect_done("test_proto");
}
