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

/* an RC packet, 198.18.0.1 -> 198.18.0.2 (back: the other way) to QP qpn,
 * dt ns after the last: a SEND only of 16 bytes, or an ACK (opcode 0x11)
 * with its AETH's syndrome syn */
static void put_pkt(FILE *f, uint32_t ifid, int back, uint8_t op, uint32_t qpn, uint32_t psn,
		    uint8_t syn, const char *comment, uint64_t dt)
{
	uint8_t d[14 + 20 + 8 + 12 + 16 + 4] = { 0 };
	uint8_t *ip = d + 14, *udp = ip + 20, *bth = udp + 8;
	size_t len = op == 0x11 ? 14 + 20 + 8 + 12 + 4 + 4 : sizeof(d);
	uint16_t iplen = (uint16_t)(len - 14), udplen = iplen - 20;

	d[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (uint8_t)(iplen >> 8);
	ip[3] = (uint8_t)iplen;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + (back ? 16 : 12), (uint8_t[]){ 198, 18, 0, 1 }, 4);
	memcpy(ip + (back ? 12 : 16), (uint8_t[]){ 198, 18, 0, 2 }, 4);
	udp[0] = 0xc0;
	udp[2] = 0x12;	/* 4791 */
	udp[3] = 0xb7;
	udp[4] = (uint8_t)(udplen >> 8);
	udp[5] = (uint8_t)udplen;
	bth[0] = op;
	bth[2] = 0xff;
	bth[3] = 0xff;
	bth[5] = (uint8_t)(qpn >> 16);
	bth[6] = (uint8_t)(qpn >> 8);
	bth[7] = (uint8_t)qpn;
	bth[8] = 0x80;
	bth[9] = (uint8_t)(psn >> 16);
	bth[10] = (uint8_t)(psn >> 8);
	bth[11] = (uint8_t)psn;
	bth[12] = syn;
	ts += dt;
	EXPECT(pcapng_put_epb(f, ifid, ts, d, (uint32_t)len, (uint32_t)len,
			      back ? PCAPNG_OUTBOUND : PCAPNG_INBOUND, comment) == 0);
}

static void put_send(FILE *f, uint32_t ifid, uint32_t qpn, uint32_t psn, const char *comment)
{
	put_pkt(f, ifid, 0, 0x04, qpn, psn, 0, comment, 1000);
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

/* loss i of capture c: its trigger */
static const char *trigger(const json_t *an, int c, int i)
{
	const json_t *l = json_array_get(json_object_get(capture(an, c), "losses"), (size_t)i);

	return l ? json_string_value(json_object_get(l, "trigger")) : "(none)";
}

/* PSN b + 5 of QP qpn (ACKs to qpn + 0x10) lost at ingress if0 and NAKed
 * at egress if0 + 1; the sender sends b + 8 and falls silent for wait_ns
 * before it resends b + 5; tx2 drops that resend too, and the sender's ACK
 * timer (60 ms) brings the next */
static void nak_case(FILE *f, uint32_t if0, uint32_t qpn, uint32_t b, uint64_t wait_ns, int tx2,
		     int more)
{
	const char *drop = "verdict=dropped rule=1";
	uint32_t psn;

	for (psn = b + 1; psn <= b + 4; psn++)
		put_send(f, if0, qpn, psn, NULL);
	put_pkt(f, if0 + 1, 1, 0x11, qpn + 0x10, b + 4, 0, NULL, 1000);
	put_send(f, if0, qpn, b + 5, drop);
	put_send(f, if0, qpn, b + 6, NULL);
	put_send(f, if0, qpn, b + 7, NULL);
	if (!more)	/* the sender's last packet before the NAK */
		put_send(f, if0, qpn, b + 8, NULL);
	put_pkt(f, if0 + 1, 1, 0x11, qpn + 0x10, b + 5, 0x60, NULL, 1000);	/* NAK: sequence */
	if (more)
		put_send(f, if0, qpn, b + 8, NULL);
	put_pkt(f, if0, 0, 0x04, qpn, b + 5, 0, tx2 ? drop : NULL, wait_ns);
	for (psn = b + 6; psn <= b + 8; psn++)
		put_send(f, if0, qpn, psn, NULL);
	if (tx2) {
		put_pkt(f, if0, 0, 0x04, qpn, b + 5, 0, NULL, 60000000);
		for (psn = b + 6; psn <= b + 8; psn++)
			put_send(f, if0, qpn, psn, NULL);
	}
	put_pkt(f, if0 + 1, 1, 0x11, qpn + 0x10, b + 8, 0, NULL, 1000);
}

/* a NAK acted on after a VM's stall against one ignored until the ACK
 * timer (ctl/trace/judge.c waited_out): a capture that shows the timer
 * (a resend no NAK asked for, 60 ms after the last packet) tells a 5 ms
 * stall (nak) from a wait of the timer (nak_ignored); one that does not
 * takes any wait of 90% of the time as the timer's. A sender silent since
 * before the NAK waited its timer when 30 ms or more passed (none seen) */
static void nak_triggers(void)
{
	char path[] = "/tmp/rtb-trace-unit.XXXXXX", err[256] = "";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	json_t *an;

	if (!f)
		return;
	EXPECT(pcapng_put_shb(f, "test_ctl_trace") == 0);
	EXPECT(pcapng_put_idb(f, "eth1", "eth1 ingress", 256) == 0);
	EXPECT(pcapng_put_idb(f, "eth1", "eth1 egress", 256) == 0);
	EXPECT(pcapng_put_idb(f, "eth2", "eth2 ingress", 256) == 0);
	EXPECT(pcapng_put_idb(f, "eth2", "eth2 egress", 256) == 0);
	EXPECT(pcapng_put_idb(f, "eth3", "eth3 ingress", 256) == 0);
	EXPECT(pcapng_put_idb(f, "eth3", "eth3 egress", 256) == 0);
	EXPECT(pcapng_put_idb(f, "eth4", "eth4 ingress", 256) == 0);
	EXPECT(pcapng_put_idb(f, "eth4", "eth4 egress", 256) == 0);
	nak_case(f, 0, 0x11, 0, 5000000, 1, 1);	/* stalled 5 ms, then the timer */
	nak_case(f, 0, 0x12, 100, 61000000, 0, 1);	/* waited the timer */
	nak_case(f, 2, 0x13, 200, 5000000, 0, 1);	/* no timer seen */
	/* silent since before the NAK, no timer seen: 61 ms is a timer's
	 * wait, 5 ms a stall */
	nak_case(f, 4, 0x14, 300, 61000000, 0, 0);
	nak_case(f, 6, 0x15, 400, 5000000, 0, 0);
	EXPECT(fclose(f) == 0);
	an = trace_analyze(path, NULL, NULL, err, sizeof(err));
	EXPECT_MSG(an != NULL, "%s", err);
	if (an) {
		static const struct {
			int cap, i;
			const char *want;
		} w[] = { { 0, 0, "nak" }, { 0, 1, "timeout" }, { 0, 2, "nak_ignored" },
			  { 2, 0, "nak_ignored" }, { 4, 0, "nak_ignored" }, { 6, 0, "nak" } };

		for (size_t k = 0; k < sizeof(w) / sizeof(w[0]); k++)
			EXPECT_MSG(!strcmp(trigger(an, w[k].cap, w[k].i), w[k].want),
				   "capture %d loss %d: %s, expected %s", w[k].cap, w[k].i,
				   trigger(an, w[k].cap, w[k].i), w[k].want);
		json_decref(an);
	}
	if (getenv("KEEP"))
		fprintf(stderr, "%s\n", path);
	else
		unlink(path);
}

/* the QPs as a hook numbers them for rules (hook_qps): toward QP 0x21 come
 * the ACKs of its own (PSNs from 90) and the peer's SENDs (from 7000): one
 * QP, qp 1, whichever side passed first, a row a side, rpsn counted apart;
 * QP 0x22, seen later, is qp 2; a resent copy is no new message */
static void hook_qps(void)
{
	char path[] = "/tmp/rtb-trace-unit.XXXXXX", err[256] = "";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	const json_t *q1, *q2, *q3, *qs;
	json_t *an;
	uint32_t i;

	if (!f)
		return;
	EXPECT(pcapng_put_shb(f, "test_ctl_trace") == 0);
	EXPECT(pcapng_put_idb(f, "eth1", "eth1 ingress", 256) == 0);
	for (i = 0; i < 5; i++) {
		put_pkt(f, 0, 0, 0x11, 0x21, 90 + i, 0, NULL, 1000);	/* ACK: qp 1 responses */
		put_send(f, 0, 0x21, 7000 + i, NULL);			/* SEND only: qp 1 requests */
		if (i == 2)
			put_send(f, 0, 0x22, 500, NULL);		/* qp 2 */
	}
	put_send(f, 0, 0x21, 7004, NULL);				/* resent */
	EXPECT(fclose(f) == 0);
	an = trace_analyze(path, NULL, NULL, err, sizeof(err));
	EXPECT_MSG(an != NULL, "%s", err);
	qs = json_object_get(capture(an, 0), "hook_qps");
	q1 = json_array_get(qs, 0);
	q2 = json_array_get(qs, 1);
	q3 = json_array_get(qs, 2);
	EXPECT(json_array_size(qs) == 3);
	EXPECT(field(q1, "qp") == 1 && field(q1, "first_psn") == 7000 && field(q1, "psns") == 5 &&
	       field(q1, "packets") == 6 && field(q1, "messages") == 5);
	EXPECT(!strcmp(json_string_value(json_object_get(q1, "kind")) ?: "", "requests"));
	EXPECT(field(q2, "qp") == 1 && field(q2, "first_psn") == 90 && field(q2, "psns") == 5 &&
	       field(q2, "packets") == 5 && field(q2, "messages") == 5);
	EXPECT(!strcmp(json_string_value(json_object_get(q2, "kind")) ?: "", "responses"));
	EXPECT(field(q3, "qp") == 2 && field(q3, "qpn") == 0x22 && field(q3, "packets") == 1);
	json_decref(an);
	unlink(path);
}

int main(void)
{
	char path[] = "/tmp/rtb-trace-unit.XXXXXX", err[256] = "";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	json_t *an;
	uint32_t psn;

	hook_qps();
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

	an = trace_analyze(path, NULL, NULL, err, sizeof(err));
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
	nak_triggers();
	return expect_done("test_ctl_trace");
}
