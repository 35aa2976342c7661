// SPDX-License-Identifier: MIT
/*
 * Fuzz the control channel's decoders with mutated frames (bit flips,
 * truncation, insertion, hostile lengths, type swaps) from fixed seeds:
 * proto_recv and, on what it accepts, the endpoint, histogram and option
 * decoders. Built with ASan and UBSan (no recovery): the test passes when
 * nothing crashes or trips a sanitizer, and every decoder either accepts
 * or returns an error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "expect.h"
#include "../../lib/hist.h"
#include "../../lib/opt.h"
#include "../../lib/proto.h"
#include "../../workloads/verbs.h"

static uint64_t seed = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static const char *const corpus[] = {
	"{\"v\":2,\"cmd\":\"hello\",\"args\":{}}",
	"{\"v\":2,\"cmd\":\"connect\",\"args\":{\"arm\":3,\"peer\":{\"qpn\":17,"
	"\"psn\":123,\"rkey\":4660,\"addr\":140737488355328,\"len\":4096,\"gid\":\"::ffff:198.18.0.1\","
	"\"mtu\":1024}}}",
	"{\"v\":2,\"ok\":true,\"result\":{\"count\":3,\"sum_ns\":300,\"min_ns\":90,\"max_ns\":120,"
	"\"saturated\":0,\"sub_bits\":7,\"buckets\":[[90,1],[100,1],[120,1]]}}",
	"{\"v\":2,\"cmd\":\"prepare\",\"args\":{\"workload\":\"p2p\",\"role\":\"client\","
	"\"opts\":{\"size\":\"4k\",\"iters\":100,\"op\":\"write\",\"op_timeout\":\"10s\"}}}",
};

struct cfg {
	uint64_t size, iters, t;
	int op;
};
static const char *const ops[] = { "write", "read", NULL };
static const struct opt table[] = {
	{ "size", OPT_SIZE, offsetof(struct cfg, size), 1, 1 << 20, "2", NULL, "" },
	{ "iters", OPT_UINT, offsetof(struct cfg, iters), 1, 1000000, "1", NULL, "" },
	{ "op_timeout", OPT_TIME, offsetof(struct cfg, t), 1, UINT64_MAX, "1s", NULL, "" },
	{ "op", OPT_ENUM, offsetof(struct cfg, op), 0, 0, "write", ops, "" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

static size_t mutate(const char *src, char *dst, size_t cap)
{
	size_t n = strlen(src), k, m = rnd() % 6;

	if (n > cap)
		n = cap;
	memcpy(dst, src, n);
	for (k = 0; k <= rnd() % 8; k++) {
		size_t at = n ? rnd() % n : 0;

		switch ((m + k) % 6) {
		case 0: /* bit flip */
			if (n)
				dst[at] ^= (char)(1 << (rnd() % 8));
			break;
		case 1: /* truncate */
			n = at;
			break;
		case 2: /* insert a structural character */
			if (n + 1 < cap) {
				memmove(dst + at + 1, dst + at, n - at);
				dst[at] = "{}[]\":,-0e9\\"[rnd() % 12];
				n++;
			}
			break;
		case 3: /* swap a number for a huge or negative one */
			if (n + 24 < cap) {
				const char *h = rnd() & 1 ? "-99999999999" : "18446744073709551616";
				size_t hl = strlen(h);

				memmove(dst + at + hl, dst + at, n - at);
				memcpy(dst + at, h, hl);
				n += hl;
			}
			break;
		case 4: /* delete a run */
			if (n) {
				size_t len = rnd() % (n - at + 1);

				memmove(dst + at, dst + at + len, n - at - len);
				n -= len;
			}
			break;
		default: /* random bytes */
			if (n)
				dst[at] = (char)rnd();
		}
	}
	return n;
}

static void decode_all(json_t *j)
{
	struct vb_ep ep;
	struct hist *h = malloc(sizeof(*h));
	struct cfg c;
	char err[256];
	json_t *args = json_object_get(j, "args");

	vb_ep_from_json(&ep, json_object_get(args, "peer"));
	vb_ep_from_json(&ep, j);
	hist_from_json(h, json_object_get(j, "result"));
	hist_from_json(h, j);
	opt_apply_json(table, &c, json_object_get(args, "opts"), err, sizeof(err));
	opt_apply_json(table, &c, args, err, sizeof(err));
	free(h);
}

int main(void)
{
	static char buf[8192];
	int sv[2], i, accepted = 0, rejected = 0;

	EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	for (i = 0; i < 60000; i++) {
		size_t n = mutate(corpus[rnd() % 4], buf, sizeof(buf));
		uint32_t len = htonl((uint32_t)n);
		json_t *j = NULL;
		int r;

		if (rnd() % 16 == 0)	/* a hostile length field */
			len = htonl((uint32_t)rnd());
		if (write(sv[0], &len, 4) != 4 || write(sv[0], buf, n) != (ssize_t)n) {
			perror("write");
			break;
		}
		if (ntohl(len) > n) {	/* the frame claims more than was sent: reset the pair */
			r = proto_recv(sv[1], &j, 5);
			EXPECT(r != 0);
			close(sv[0]);
			close(sv[1]);
			EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
			fcntl(sv[0], F_SETFL, O_NONBLOCK);
			rejected++;
			continue;
		}
		r = proto_recv(sv[1], &j, 1000);
		if (r) {
			rejected++;
			if (ntohl(len) < n) {	/* bytes left over: resynchronise */
				close(sv[0]);
				close(sv[1]);
				EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
				fcntl(sv[0], F_SETFL, O_NONBLOCK);
			}
			continue;
		}
		accepted++;
		decode_all(j);
		json_decref(j);
	}
	fprintf(stderr, "fuzz: %d frames accepted, %d rejected\n", accepted, rejected);
	EXPECT(accepted > 100 && rejected > 100);
	close(sv[0]);
	close(sv[1]);
	return expect_done("test_fuzz_decode");
}
