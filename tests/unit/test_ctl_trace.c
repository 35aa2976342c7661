// SPDX-License-Identifier: MIT
/*
 * The trace analysis against the hook's own marks (ctl/trace/analyze.c
 * hook_marks): a pcapng written here, as rdma-inject trace writes one, with
 * the packets a hook counted resent marked "resent" in their comments. Of a
 * PSN's c copies the hook marks c - 1 in whatever order two CPUs wrote
 * them, or c when the first came 64 or more PSNs below the QP's highest;
 * anything else is named unexplained.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "expect.h"
#include "ctl/trace/trace.h"
#include "lib/pcapng.h"

static uint64_t ts = 1000000000ull;

/* an RC SEND only of 16 bytes, 198.18.0.1 -> 198.18.0.2, to QP qpn */
static void put_send(FILE *f, uint32_t ifid, uint32_t qpn, uint32_t psn, const char *comment)
{
	uint8_t d[14 + 20 + 8 + 12 + 16 + 4] = { 0 };
	uint8_t *ip = d + 14, *udp = ip + 20, *bth = udp + 8;
	uint16_t iplen = sizeof(d) - 14, udplen = iplen - 20;

	d[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (uint8_t)(iplen >> 8);
	ip[3] = (uint8_t)iplen;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, (uint8_t[]){ 198, 18, 0, 1 }, 4);
	memcpy(ip + 16, (uint8_t[]){ 198, 18, 0, 2 }, 4);
	udp[0] = 0xc0;
	udp[2] = 0x12;	/* 4791 */
	udp[3] = 0xb7;
	udp[4] = (uint8_t)(udplen >> 8);
	udp[5] = (uint8_t)udplen;
	bth[0] = 0x04;	/* RC SEND only */
	bth[2] = 0xff;
	bth[3] = 0xff;
	bth[5] = (uint8_t)(qpn >> 16);
	bth[6] = (uint8_t)(qpn >> 8);
	bth[7] = (uint8_t)qpn;
	bth[8] = 0x80;
	bth[9] = (uint8_t)(psn >> 16);
	bth[10] = (uint8_t)(psn >> 8);
	bth[11] = (uint8_t)psn;
	ts += 1000;
	EXPECT(pcapng_put_epb(f, ifid, ts, d, sizeof(d), sizeof(d), PCAPNG_INBOUND, comment) == 0);
}

static const json_t *capture(const json_t *an, int i)
{
	return json_array_get(json_object_get(an, "captures"), (size_t)i);
}

static long long field(const json_t *c, const char *k)
{
	const json_t *v = json_object_get(c, k);

	return v ? json_integer_value(v) : -1;
}

int main(void)
{
	char path[] = "/tmp/rtb-trace-unit.XXXXXX", err[256] = "";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	json_t *an;
	uint32_t psn;

	if (!f)
		return 1;
	EXPECT(pcapng_put_shb(f, "test_ctl_trace") == 0);
	EXPECT(pcapng_put_idb(f, "eth1", "eth1 ingress", 256) == 0);
	EXPECT(pcapng_put_idb(f, "eth2", "eth2 ingress", 256) == 0);
	/* QP 0x11 on eth1: PSNs 100-230, 120 and 150 late */
	for (psn = 100; psn <= 230; psn++)
		if (psn != 120 && psn != 150)
			put_send(f, 0, 0x11, psn, NULL);
	put_send(f, 0, 0x11, 110, "resent");	/* a resend */
	put_send(f, 0, 0x11, 120, "resent");	/* first and resend at once: the */
	put_send(f, 0, 0x11, 120, NULL);	/* resend's record written first */
	put_send(f, 0, 0x11, 150, "resent");	/* its first copy, 80 below the highest */
	/* QP 0x22 on eth1: a resend the hook missed, a new PSN it took for one */
	for (psn = 10; psn <= 20; psn++)
		put_send(f, 0, 0x22, psn, NULL);
	put_send(f, 0, 0x22, 15, NULL);
	put_send(f, 0, 0x22, 21, "verdict=drop rule=2 resent");
	/* eth2: an older trace's hook, no marks */
	put_send(f, 1, 0x33, 5, NULL);
	put_send(f, 1, 0x33, 5, NULL);
	EXPECT(pcapng_put_isb(f, 0, ts, 0, ts, 146, 0, "injector resent=4 marked") == 0);
	EXPECT(pcapng_put_isb(f, 1, ts, 0, ts, 2, 0, "injector resent=1") == 0);
	EXPECT(fclose(f) == 0);

	an = trace_analyze(path, NULL, err, sizeof(err));
	EXPECT_MSG(an != NULL, "%s", err);
	if (an) {
		const json_t *c0 = capture(an, 0), *c1 = capture(an, 1);

		EXPECT_EQ_U(field(c0, "injector_resent"), 4);
		EXPECT_EQ_U(field(c0, "injector_marked"), 4);
		/* 0x11: 150's mark explained; 0x22: 15 (2 copies, 0 marks) and
		 * 21 (1 copy, 1 mark, nothing 64 above) are not */
		EXPECT_EQ_U(field(c0, "overtaken_past_window"), 1);
		EXPECT_EQ_U(field(c0, "injector_unexplained"), 2);
		EXPECT_EQ_U(field(c0, "resent_requests"), 3);	/* 110, 120, 15 */
		/* no "marked" in its statistics: no count to check against */
		EXPECT(field(c1, "injector_resent") == -1);
		EXPECT(field(c1, "injector_marked") == -1);
		json_decref(an);
	}
	unlink(path);
	return expect_done("test_ctl_trace");
}
