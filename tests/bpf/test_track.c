// SPDX-License-Identifier: MIT
/*
 * The tc program's QP tracking (qp, rpsn, tx: each hook's QPs numbered,
 * PSNs from each QP's first, each PSN's transmissions) and its CNPs (the
 * QP pairs learned, a CNP made on the device's other direction), under
 * BPF_PROG_TEST_RUN on crafted frames (prog.h).
 */
#include <pthread.h>
#include "prog.h"

/* qp / rpsn / tx: the hook's QPs numbered in the order it saw them, PSNs
 * from each QP's first, each PSN's transmissions; resent packets counted */
static void test_track(void)
{
	struct frame_spec f = { .opcode = 0x0a, .payload = 64 };
	static struct inj_qp_key keys[16];
	static struct inj_qp qps[16];
	struct inj_rule r;
	char text[256], *argv[8];
	int n, i;
	uint32_t hand, rules;

	/* the grammar, both ways */
	argv[0] = "qp";
	argv[1] = "1-2";
	argv[2] = "rpsn";
	argv[3] = "5";
	argv[4] = "tx";
	argv[5] = "2";
	argv[6] = "drop";
	inj_rule_init(&r);
	EXPECT(inj_rule_parse(&r, 7, argv, 0, text, sizeof(text)) == 0);
	inj_rule_format(&r, text, sizeof(text));
	if (strcmp(text, "qp 1-2 rpsn 5 tx 2 drop 100%"))
		fprintf(stderr, "formatted: %s\n", text);
	EXPECT(strcmp(text, "qp 1-2 rpsn 5 tx 2 drop 100%") == 0);

	del_all();
	EXPECT(inj_qp_reset(ctx) == 0);
	EXPECT(inj_track_set(ctx, 0) == 0);
	/* no rule asks and nobody switched it on: nothing tracked */
	EXPECT(add(INJ_DIR_INGRESS, "qpn 0x999 drop") != 0);
	f.dqpn = 0x100;
	f.psn = 1000;
	verdict(INJ_DIR_INGRESS, &f);
	EXPECT(inj_qp_list(ctx, keys, qps, 16) == 0);
	del_all();

	/* qp 2 rpsn 3: the second QP's fourth packet, whatever its PSNs */
	EXPECT(add(INJ_DIR_INGRESS, "qp 2 rpsn 3 opcode data drop") != 0);
	inj_track_get(ctx, &hand, &rules);
	EXPECT(hand == 0 && rules == INJ_TRACK_QP);
	f.dqpn = 0x100, f.psn = 1000;
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);	/* qp 1 */
	f.dqpn = 0x200, f.psn = 0xfffffe;			/* qp 2, rpsn 0; wraps */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	f.psn = 0x000001;					/* rpsn 3 */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
	f.dqpn = 0x100, f.psn = 1003;				/* qp 1, rpsn 3 */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	n = inj_qp_list(ctx, keys, qps, 16);
	EXPECT(n == 2);
	for (i = 0; i < n; i++)
		EXPECT(qps[i].idx == (keys[i].dqpn == 0x100 ? 1u : 2u) &&
		       qps[i].first_psn == (keys[i].dqpn == 0x100 ? 1000u : 0xfffffeu));
	del_all();

	del_all();
}

/* a QP's two sides at a hook: one number, each side its own rpsn; the
 * grammar's requests and responses */
static void test_track_sides(void)
{
	struct frame_spec f = { .opcode = 0x0a, .payload = 64 };
	static struct inj_qp_key keys[16];
	static struct inj_qp qps[16];
	struct inj_rule r;
	char text[256], *argv[] = { "qp", "1", "responses", "rpsn", "7", "drop" };
	int n, i;

	inj_rule_init(&r);
	EXPECT(inj_rule_parse(&r, 6, argv, 0, text, sizeof(text)) == 0);
	inj_rule_format(&r, text, sizeof(text));
	EXPECT_MSG(!strcmp(text, "qp 1 responses rpsn 7 drop 100%"), "%s", text);
	argv[2] = "requests";	/* qp 1 requests responses drop */
	argv[3] = "responses";
	argv[4] = "drop";
	inj_rule_init(&r);
	EXPECT(inj_rule_parse(&r, 5, argv, 0, text, sizeof(text)) != 0);
	EXPECT_MSG(strstr(text, "one side of a QP") != NULL, "%s", text);

	/* a QP whose peer sends too (ibv_rc_pingpong): toward it come the
	 * peer's SENDs, in the peer's PSNs, and the ACKs of its own, in its
	 * own. One QP, one number, whichever side came first (two numbers in
	 * arrival order swapped from run to run when an ACK and the peer's
	 * first SEND raced); each side counts rpsn from its own first PSN:
	 * qp 1 responses rpsn 1 is the second ACK however far apart the two
	 * sides' PSNs start */
	EXPECT(inj_qp_reset(ctx) == 0);
	EXPECT(add(INJ_DIR_INGRESS, "qp 1 responses rpsn 1 drop") != 0);
	f.dqpn = 0x700, f.opcode = 0x04, f.psn = 7;		/* SEND only: qp 1, requests */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	f.opcode = 0x11, f.syndrome = 0, f.psn = 0x500000;	/* an ACK: qp 1, responses, rpsn 0 */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	f.opcode = 0x04, f.psn = 8;				/* requests, rpsn 1 */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	f.opcode = 0x11, f.psn = 0x500001;			/* responses, rpsn 1 */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
	n = inj_qp_list(ctx, keys, qps, 16);
	EXPECT(n == 2);
	for (i = 0; i < n; i++)
		EXPECT(keys[i].dqpn == 0x700 && qps[i].idx == 1 &&
		       qps[i].first_psn == (keys[i].resp ? 0x500000u : 7u));
	del_all();
	/* the other order (the ACK first): the same number; requests picks
	 * the peer's side, and a rule that names no side matches both */
	EXPECT(inj_qp_reset(ctx) == 0);
	EXPECT(add(INJ_DIR_INGRESS, "qp 1 requests rpsn 1 drop") != 0);
	EXPECT(add(INJ_DIR_INGRESS, "qp 1 rpsn 2 drop") != 0);
	f.dqpn = 0x800, f.opcode = 0x11, f.psn = 0x300000;	/* the ACK first */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	f.opcode = 0x04, f.psn = 20;				/* requests, rpsn 0 */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	f.opcode = 0x11, f.psn = 0x300001;			/* responses, rpsn 1 */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	f.opcode = 0x04, f.psn = 21;				/* requests, rpsn 1 */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
	f.opcode = 0x11, f.psn = 0x300002;			/* responses, rpsn 2 */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
	f.opcode = 0x04, f.psn = 22;				/* requests, rpsn 2 */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
	n = inj_qp_list(ctx, keys, qps, 16);
	EXPECT(n == 2);
	for (i = 0; i < n; i++)
		EXPECT(keys[i].dqpn == 0x800 && qps[i].idx == 1);
	del_all();
}

/* tx: each PSN's transmissions; resent packets counted (an ACK and UD
 * never, a packet overtaken on the way neither); tracking by hand */
static void test_track_tx(void)
{
	struct frame_spec f = { .opcode = 0x0a, .payload = 64 };
	static struct inj_qp_key keys[16];
	static struct inj_qp qps[16];
	struct inj_hook_ctr k0, k1;
	int drops = 0, i;
	uint32_t hand, rules;

	/* tx 2 of rpsn 2: the first resend of one packet, nothing else */
	EXPECT(inj_qp_reset(ctx) == 0);
	EXPECT(add(INJ_DIR_INGRESS, "rpsn 2 tx 2 drop") != 0);
	inj_track_get(ctx, &hand, &rules);
	EXPECT(rules == (INJ_TRACK_QP | INJ_TRACK_TX));
	k0 = hook_ctr(INJ_DIR_INGRESS);
	f.dqpn = 0x300;
	for (i = 0; i < 3; i++) {	/* 10 11 12, then go-back-N from 11 twice */
		f.psn = 10 + (uint32_t)i;
		drops += verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT;
	}
	EXPECT(drops == 0);
	for (int round = 0; round < 2; round++)
		for (i = 1; i < 3; i++) {
			f.psn = 10 + (uint32_t)i;
			if (verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT)
				drops += f.psn == 12 && round == 0 ? 1 : 100;
		}
	EXPECT(drops == 1);
	/* an ACK of a PSN already seen, and UD, are never "resent" */
	f.opcode = 0x11, f.syndrome = 0, f.psn = 12;
	verdict(INJ_DIR_INGRESS, &f);
	verdict(INJ_DIR_INGRESS, &f);
	f.opcode = 0x64, f.dqpn = 0x400, f.psn = 7;
	verdict(INJ_DIR_INGRESS, &f);
	verdict(INJ_DIR_INGRESS, &f);
	k1 = hook_ctr(INJ_DIR_INGRESS);
	EXPECT(k1.resent - k0.resent == 4);
	EXPECT(k1.roce_pkts - k0.roce_pkts == 11);
	/* overtaken on the way (or handled on another CPU first) is not resent;
	 * a PSN had already is, and so is one older than the window */
	f.opcode = 0x0a, f.dqpn = 0x600;
	k0 = hook_ctr(INJ_DIR_INGRESS);
	for (i = 0; i < 7; i++) {
		static const uint32_t psns[7] = { 100, 102, 101, 101, 300, 236, 237 };

		f.psn = psns[i];	/* resent: the second 101, then 236 (64 behind 300) */
		verdict(INJ_DIR_INGRESS, &f);
	}
	k1 = hook_ctr(INJ_DIR_INGRESS);
	EXPECT(k1.resent - k0.resent == 2);
	del_all();

	/* by hand: tracked (and counted) without a rule that asks */
	EXPECT(inj_qp_reset(ctx) == 0);
	EXPECT(inj_track_set(ctx, 1) == 0);
	EXPECT(add(INJ_DIR_INGRESS, "qpn 0x999 drop") != 0);
	f.opcode = 0x0a, f.dqpn = 0x500, f.psn = 1;
	verdict(INJ_DIR_INGRESS, &f);
	EXPECT(inj_qp_list(ctx, keys, qps, 16) == 1 && qps[0].idx == 1);
	EXPECT(inj_track_set(ctx, 0) == 0);
	del_all();
}

/* is the program attached to (DEV, dir)? */
static int hooked(int dir)
{
	uint32_t ifs[INJ_MAX_HOOKS];
	int dirs[INJ_MAX_HOOKS], n = inj_hook_list(ctx, ifs, dirs, INJ_MAX_HOOKS), i;

	for (i = 0; i < n; i++)
		if (ifs[i] == ifx && dirs[i] == dir)
			return 1;
	return 0;
}

/* IPv6: the UDP checksum of a frame verifies */
static int udp6_ok(const uint8_t *f, size_t n)
{
	uint32_t s = 0;
	size_t i, len = n - 54;

	for (i = 0; i < 32; i += 2)	/* source and destination */
		s += (uint32_t)f[22 + i] << 8 | f[22 + i + 1];
	s += (uint32_t)len + 17;
	for (i = 0; i < len; i += 2)
		s += (uint32_t)f[54 + i] << 8 | (i + 1 < len ? f[54 + i + 1] : 0);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff && (f[60] || f[61]);
}

/* a well-formed CNP of n bytes to QPN qpn, IPv4 or IPv6, from the frame
 * spec's destination to its source */
static int cnp_ok(const uint8_t *o, size_t n, int v6, uint32_t qpn)
{
	size_t bth = v6 ? 62 : 42;
	int ok = 1;

#define CK(c)                                                                      \
	do {                                                                       \
		if (!(c)) {                                                        \
			fprintf(stderr, "cnp: %s (n=%zu)\n", #c, n);               \
			ok = 0;                                                    \
		}                                                                  \
	} while (0)
	CK(n == bth + 12 + INJ_CNP_PAYLOAD + 4);
	if (!ok)
		return 0;
	CK(!memcmp(o, "\x02\x00\x00\x00\x00\x01", 6));	/* back to the sender's MAC */
	CK(!memcmp(o + 6, "\x02\x00\x00\x00\x00\x02", 6));
	if (!v6) {
		uint8_t a[4];

		inet_pton(AF_INET, "198.18.0.1", a);
		CK(!memcmp(o + 30, a, 4));			/* to the sender */
		CK(ip_csum(o + 14, 20) == 0);
		CK((o[15] & 3) == 0);				/* Not-ECT */
		CK((size_t)(o[16] << 8 | o[17]) == n - 14);
		CK(!o[40] && !o[41]);				/* no UDP checksum */
	} else {
		CK(o[37] == 2 && o[53] == 1);			/* fd00::2 -> fd00::1 */
		CK(udp6_ok(o, n));
	}
	CK((o[bth - 4] << 8 | o[bth - 3]) == 8 + 12 + INJ_CNP_PAYLOAD + 4);	/* UDP length */
	CK(o[bth] == 0x81);
	CK(o[bth + 4] == 0x40);					/* BECN */
	CK((uint32_t)(o[bth + 5] << 16 | o[bth + 6] << 8 | o[bth + 7]) == qpn);
	CK(!o[bth + 9] && !o[bth + 10] && !o[bth + 11]);	/* PSN 0 */
	for (size_t i = bth + 12; i < n - 4; i++)
		CK(!o[i]);
	CK(frame_icrc(o, n) == frame_icrc_sent(o, n));
#undef CK
	return ok;
}

/* the next UDP over IPv4 on the veth's other end (what else arrives,
 * IPv6 ND, skipped): its length, 0 or less when none came */
static ssize_t recv_cnp(int fd, uint8_t *got, size_t len)
{
	ssize_t n = 0;

	while (fd >= 0) {
		n = recv(fd, got, len, 0);
		if (n <= 0 || (n > 42 && got[12] == 0x08 && got[13] == 0x00 && got[23] == 17))
			break;
	}
	return n;
}

/*
 * cnp: the pairs learned from a request and its ACK; the copy sent out
 * the device's other direction made a CNP there (caught on the veth's
 * other end, as the sender would get it); each form (IPv4, IPv6, VLAN,
 * a short packet) made on the copy's own pass; the other hook attached
 * and detached with the rule.
 */
static void test_cnp(void)
{
	struct frame_spec f = base, ack = base;
	struct inj_rule_ctr k;
	struct run r;
	uint8_t in[2048], got[2048];
	struct timeval tv = { .tv_sec = 1 };
	ssize_t n = 0;
	uint32_t id;
	int fd;

	del_all();
	EXPECT(!hooked(INJ_DIR_EGRESS));
	id = add(INJ_DIR_INGRESS, "opcode data cnp");
	EXPECT(id != 0);
	EXPECT(hooked(INJ_DIR_INGRESS) && hooked(INJ_DIR_EGRESS));
	/* S (198.18.0.1, QP 0x22) writes to R (198.18.0.2, QP 0x11) */
	f.dqpn = 0x11;
	f.psn = 0x123456;
	EXPECT(run_frame(INJ_DIR_INGRESS, &f, &r) == TC_ACT_OK);
	k = ctr(id);
	EXPECT_EQ_U(k.matched, 1);
	EXPECT_EQ_U(k.notified, 0);	/* S's QPN not known yet */
	ack.opcode = 0x11;
	ack.syndrome = 0x1f;
	ack.src = "198.18.0.2";
	ack.dst = "198.18.0.1";
	ack.dqpn = 0x22;
	ack.psn = 0x123456;
	ack.payload = 0;
	EXPECT(run_frame(INJ_DIR_EGRESS, &ack, &r) == TC_ACT_OK);

	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	EXPECT(fd >= 0);
	if (fd >= 0) {
		struct sockaddr_ll sl = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
					  .sll_ifindex = (int)if_nametoindex(PEER) };

		EXPECT(bind(fd, (struct sockaddr *)&sl, sizeof(sl)) == 0);
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	f.psn = 0x123457;
	EXPECT(run_frame(INJ_DIR_INGRESS, &f, &r) == TC_ACT_OK);
	EXPECT(r.out_len == frame_build(in, &f));	/* the packet itself passes as it was */
	k = ctr(id);
	EXPECT_EQ_U(k.notified, 1);
	n = recv_cnp(fd, got, sizeof(got));
	EXPECT(n > 0 && cnp_ok(got, (size_t)n, 0, 0x22));
	/* READ: R (QP 0x33) reads from S (QP 0x44); S's response pairs them,
	 * and a later response notifies S */
	del_all();
	id = add(INJ_DIR_INGRESS, "opcode read_resp cnp");
	f = ack;	/* R to S, at egress */
	f.opcode = 0x0c;
	f.dqpn = 0x44;
	f.psn = 77;
	f.payload = 16;	/* the RETH */
	EXPECT(run_frame(INJ_DIR_EGRESS, &f, &r) == TC_ACT_OK);
	f = base;	/* S to R, at ingress: READ response only */
	f.opcode = 0x10;
	f.dqpn = 0x33;
	f.psn = 77;
	EXPECT(run_frame(INJ_DIR_INGRESS, &f, &r) == TC_ACT_OK);
	EXPECT_EQ_U(ctr(id).notified, 1);
	n = recv_cnp(fd, got, sizeof(got));
	EXPECT(n > 0 && cnp_ok(got, (size_t)n, 0, 0x44));
	if (fd >= 0)
		close(fd);
	del_all();
	EXPECT(!hooked(INJ_DIR_INGRESS) && !hooked(INJ_DIR_EGRESS));
}

/* the CNP copy's own pass, each form: the mark carries the QPN; a copy
 * that is not IP is dropped, never let out as it was */
static void test_cnp_forms(void)
{
	struct frame_spec f;
	uint8_t in[2048], got[2048];

	{
		static const struct {
			int v6, vlan;
			uint16_t payload;
		} forms[] = { { 0, 0, 64 }, { 1, 0, 64 }, { 0, 1, 64 }, { 0, 0, 0 }, { 1, 0, 1000 } };

		EXPECT(add(INJ_DIR_INGRESS, "qpn 0x999 count") != 0);	/* a hook, no CNP rule */
		for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
			struct __sk_buff skb = { 0 }, out = { 0 };
			LIBBPF_OPTS(bpf_test_run_opts, o);
			size_t len;
			uint8_t vin[2048];

			f = base;
			f.v6 = forms[i].v6;
			f.payload = forms[i].payload;
			len = frame_build(in, &f);
			if (forms[i].vlan) {	/* 802.1Q tag after the MACs */
				memcpy(vin, in, 12);
				vin[12] = 0x81;
				vin[13] = 0;
				vin[14] = 0;
				vin[15] = 5;
				memcpy(vin + 16, in + 12, len - 12);
				memcpy(in, vin, len + 4);
				len += 4;
			}
			skb.ifindex = ifx;
			skb.mark = INJ_MARK_CNP | 0xabcdef;
			o.data_in = in;
			o.data_size_in = (uint32_t)len;
			o.data_out = got;
			o.data_size_out = sizeof(got);
			o.ctx_in = &skb;
			o.ctx_size_in = sizeof(skb);
			o.ctx_out = &out;
			o.ctx_size_out = sizeof(out);
			EXPECT(bpf_prog_test_run_opts(inj_prog_fd(ctx, INJ_DIR_EGRESS), &o) == 0);
			EXPECT(o.retval == TC_ACT_OK && out.mark == 0);
			if (forms[i].vlan) {	/* checked without its tag */
				EXPECT(o.data_size_out == 78 && got[12] == 0x81 && got[15] == 5);
				memmove(got + 12, got + 16, o.data_size_out - 16);
				o.data_size_out -= 4;
			}
			if (!cnp_ok(got, o.data_size_out, f.v6, 0xabcdef)) {
				fprintf(stderr, "  form %zu\n", i);
				expect_failures++;
			}
		}
		/* not IP: the copy is dropped, never let out as it was */
		{
			struct __sk_buff skb = { 0 };
			LIBBPF_OPTS(bpf_test_run_opts, o);

			memset(in, 0, 64);
			in[12] = 0x08;
			in[13] = 0x06;	/* ARP */
			skb.ifindex = ifx;
			skb.mark = INJ_MARK_CNP | 1;
			o.data_in = in;
			o.data_size_in = 64;
			o.ctx_in = &skb;
			o.ctx_size_in = sizeof(skb);
			EXPECT(bpf_prog_test_run_opts(inj_prog_fd(ctx, INJ_DIR_EGRESS), &o) == 0);
			EXPECT(o.retval == TC_ACT_SHOT);
		}
		del_all();
	}
}

/* two CPUs on one QP at once: thread t sends PSN 2i + t, then that PSN
 * again, every resend must be counted. The threads stay within a few PSNs
 * of each other (a first transmission more than INJ_QP_WIN behind the
 * highest is taken for a resend). A highest PSN moved on by a plain store
 * lost the higher of two updates now and then: the next resend of that
 * PSN looked new */
enum { RACE_N = 60000 };
static volatile int race_step[2];

static void pin_cpu(int cpu)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
}

static void *race_side(void *arg)
{
	int t = (int)(long)arg, i, miss = 0;
	struct frame_spec f = { .opcode = 0x0a, .payload = 64, .dqpn = 0x700 };

	pin_cpu(t % 2);
	for (i = 0; i < RACE_N; i++) {
		while (race_step[!t] < i - 4)
			;
		f.psn = 5000 + 2 * (uint32_t)i + (uint32_t)t;
		miss += verdict(INJ_DIR_INGRESS, &f) < 0;
		miss += verdict(INJ_DIR_INGRESS, &f) < 0;
		race_step[t] = i;
	}
	race_step[t] = RACE_N + 8;
	return (void *)(long)miss;
}

/* two threads running side on two CPUs (steps: their progress, reset
 * here), tracking by hand; the hook must count want resends */
static void race_run(const char *name, void *(*side)(void *), volatile int *steps,
		     unsigned long long want)
{
	struct inj_hook_ctr k0, k1;
	pthread_t th[2];
	void *miss[2];
	int t;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "%s: one CPU, nothing to race\n", name);
		return;
	}
	EXPECT(inj_qp_reset(ctx) == 0);
	EXPECT(inj_track_set(ctx, 1) == 0);
	EXPECT(add(INJ_DIR_INGRESS, "qpn 0x999 drop") != 0);
	k0 = hook_ctr(INJ_DIR_INGRESS);
	steps[0] = steps[1] = -1;
	for (t = 0; t < 2; t++)
		EXPECT(pthread_create(&th[t], NULL, side, (void *)(long)t) == 0);
	for (t = 0; t < 2; t++)
		pthread_join(th[t], &miss[t]);
	k1 = hook_ctr(INJ_DIR_INGRESS);
	EXPECT(miss[0] == NULL && miss[1] == NULL);
	if (k1.resent - k0.resent != want)
		fprintf(stderr, "%s: %llu resends counted, %llu sent\n", name,
			(unsigned long long)(k1.resent - k0.resent), want);
	EXPECT(k1.resent - k0.resent == want);
	EXPECT(inj_track_set(ctx, 0) == 0);
	del_all();
}

static void test_track_race(void)
{
	race_run("test_track_race", race_side, race_step, 2ull * RACE_N);
}

/* one PSN on two CPUs at once (a late first copy and its go-back-N resend
 * can meet at a hook): each PSN is sent once by each thread, so exactly one
 * of its two copies is a resend, whichever CPU comes second */
static volatile int same_step[2];

static void *same_side(void *arg)
{
	int t = (int)(long)arg, i, miss = 0;
	struct frame_spec f = { .opcode = 0x0a, .payload = 64, .dqpn = 0x701 };

	pin_cpu(t % 2);
	for (i = 0; i < RACE_N; i++) {
		same_step[t] = i;
		while (same_step[!t] < i)
			;
		f.psn = 9000 + (uint32_t)i;
		miss += verdict(INJ_DIR_INGRESS, &f) < 0;
	}
	same_step[t] = RACE_N + 8;
	return (void *)(long)miss;
}

static void test_track_same_psn(void)
{
	race_run("test_track_same_psn", same_side, same_step, RACE_N);
}

/* a new QP's two sides on two CPUs at once (an ACK and the peer's first
 * request often meet so at a hook): SIDES_N QPs, each met by a request on
 * one CPU and an ACK on the other in the same instant. Each QP one number
 * for both sides, and the numbers 1..SIDES_N without a gap (before, each
 * side took its own, in whichever order they came) */
enum { SIDES_N = 500 };
static volatile int sides_step[2];

static void *sides_side(void *arg)
{
	int t = (int)(long)arg, i, miss = 0;
	struct frame_spec f = { .opcode = t ? 0x11 : 0x0a, .payload = t ? 0 : 64 };

	pin_cpu(t % 2);
	for (i = 0; i < SIDES_N; i++) {
		sides_step[t] = i;
		while (sides_step[!t] < i)
			;
		f.dqpn = 0x1000 + (uint32_t)i;
		f.psn = t ? 0x400000 : 77;
		miss += verdict(INJ_DIR_INGRESS, &f) < 0;
	}
	sides_step[t] = SIDES_N + 8;
	return (void *)(long)miss;
}

static void test_track_sides_race(void)
{
	static struct inj_qp_key keys[2 * SIDES_N + 8];
	static struct inj_qp qps[2 * SIDES_N + 8];
	static uint32_t idx_of[SIDES_N][2], seen[SIDES_N + 1];
	int n, i, bad = 0, gaps = 0;

	race_run("test_track_sides_race", sides_side, sides_step, 0);
	/* race_run switched tracking off; the numbers are still there */
	n = inj_qp_list(ctx, keys, qps, 2 * SIDES_N + 8);
	EXPECT_MSG(n == 2 * SIDES_N, "%d sides listed", n);
	for (i = 0; i < n; i++) {
		uint32_t q = keys[i].dqpn - 0x1000;

		if (q >= SIDES_N || keys[i].resp > 1 || qps[i].idx < 1 || qps[i].idx > SIDES_N) {
			bad++;
			continue;
		}
		idx_of[q][keys[i].resp] = qps[i].idx;
	}
	for (i = 0; i < SIDES_N; i++) {
		if ((!idx_of[i][0] || idx_of[i][0] != idx_of[i][1]) && bad < 5)
			fprintf(stderr, "qp %d: requests %u, responses %u\n", i, idx_of[i][0], idx_of[i][1]);
		bad += !idx_of[i][0] || idx_of[i][0] != idx_of[i][1];
		if (idx_of[i][0] && idx_of[i][0] <= SIDES_N)
			seen[idx_of[i][0]]++;
	}
	for (i = 1; i <= SIDES_N; i++)
		gaps += seen[i] != 1;
	EXPECT_MSG(bad == 0 && gaps == 0, "%d QPs whose sides differ, %d numbers not once", bad, gaps);
	EXPECT(inj_qp_reset(ctx) == 0);
}

/* the trace ring read by inj_ring (injector/ring.c), as rdma-inject trace
 * reads it: 60,000 traced packets (PSNs 0..59999) in three runs of
 * 20,000, drained after each, past the 8 MiB ring's end: every record
 * whole, its frame's PSN the next one, the header the hook's; none lost */
struct ring_seen {
	uint32_t n, bad, next_psn;
};

static int ring_rec(void *c, void *d, size_t len)
{
	struct ring_seen *s = c;
	const struct inj_trace_hdr *h = d;
	const uint8_t *f = (const uint8_t *)(h + 1);
	uint32_t psn;

	if (len < sizeof(*h) + 54 || len != sizeof(*h) + h->cap_len ||
	    h->hook != inj_hook_key(ifx, INJ_DIR_INGRESS) || h->cap_len != h->wire_len) {
		s->bad++;
		return 0;
	}
	psn = (uint32_t)f[14 + 20 + 8 + 9] << 16 | (uint32_t)f[14 + 20 + 8 + 10] << 8 | f[14 + 20 + 8 + 11];
	s->bad += psn != s->next_psn;
	s->next_psn = psn + 1;
	s->n++;
	return 0;
}

static void test_trace_ring(void)
{
	uint32_t ifs[1] = { ifx };
	int dirs[1] = { INJ_DIR_INGRESS };
	struct ring_seen seen = { 0 };
	struct frame_spec f = base;
	struct inj_ring *rb;
	struct run r;
	char err[256] = "";
	int k, got = 0;

	EXPECT_MSG(inj_trace_begin(ctx, ifs, dirs, 1, INJ_TRACE_SNAP_DEFAULT, err, sizeof(err)) == 0,
		   "%s", err);
	rb = inj_ring_new(inj_trace_ring_fd(ctx), ring_rec, &seen);
	EXPECT(rb != NULL);
	if (!rb)
		return;
	for (k = 0; k < 3; k++) {
		for (uint32_t i = 0; i < 20000; i++) {
			f.psn = (uint32_t)k * 20000 + i;
			run_frame(INJ_DIR_INGRESS, &f, &r);
		}
		got += inj_ring_consume(rb);
	}
	EXPECT_EQ_U(got, 60000);
	EXPECT_EQ_U(seen.n, 60000);
	EXPECT_EQ_U(seen.bad, 0);
	EXPECT_EQ_U(hook_ctr(INJ_DIR_INGRESS).trace_lost, 0);
	EXPECT_EQ_U(inj_ring_consume(rb), 0);	/* nothing twice */
	inj_ring_free(rb);
	inj_trace_stop(ctx);
	inj_trace_end(ctx);
	inj_track_set(ctx, 0);
}

static void tests(void)
{
	test_trace_ring();
	test_track();
	test_track_sides();
	test_track_tx();
	test_track_race();
	test_track_same_psn();
	test_track_sides_race();
	test_cnp();
	test_cnp_forms();
}

int main(void)
{
	return prog_main("test_track", tests);
}
