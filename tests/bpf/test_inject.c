// SPDX-License-Identifier: MIT
/*
 * The injector's tc program under BPF_PROG_TEST_RUN on crafted RoCEv2
 * frames: parsing (IPv4, IPv6, every opcode class), each match field, each
 * action's verdict and side effects, the selection models (fixed seeds,
 * statistical tolerances), windows, first-match order, 64 rules, live
 * changes (prog.h runs them; tracking and CNPs: test_track.c).
 */
#include "prog.h"

static void test_classes(void)
{
	static const struct {
		uint8_t op, syn;
		const char *cls;
	} cases[] = {
		{ 0x04, 0, "data" },	  { 0x0a, 0, "data" },	    { 0x2a, 0, "data" },
		{ 0x64, 0, "data" },	  { 0x0c, 0, "read_req" },  { 0x10, 0, "read_resp" },
		{ 0x11, 0x1f, "ack" },	  { 0x11, 0x60, "nak" },    { 0x11, 0x20, "nak" },
		{ 0x13, 0, "atomic" },	  { 0x12, 0, "atomic" },    { 0x81, 0, "cnp" },
	};
	const char *names[] = { "data", "read_req", "read_resp", "ack", "nak", "atomic", "cnp" };
	size_t i, k;
	int bad = 0;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		char rule[64];
		uint32_t id;

		snprintf(rule, sizeof(rule), "opcode %s drop", names[k]);
		id = add(INJ_DIR_INGRESS, rule);
		EXPECT(id != 0);
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct frame_spec f = base;
			int want = !strcmp(cases[i].cls, names[k]) ? TC_ACT_SHOT : TC_ACT_OK;

			f.opcode = cases[i].op;
			f.syndrome = cases[i].syn;
			if (verdict(INJ_DIR_INGRESS, &f) != want) {
				fprintf(stderr, "class %s: opcode 0x%02x syndrome 0x%02x: wrong verdict\n",
					names[k], cases[i].op, cases[i].syn);
				bad++;
			}
		}
		del_all();
	}
	EXPECT(bad == 0);
}

static void test_parse_and_hooks(void)
{
	struct frame_spec f = base;
	struct inj_hook_ctr h0, h1;
	uint32_t id;

	id = add(INJ_DIR_INGRESS, "qpn 0x11 drop");
	EXPECT(inj_hook_counters(ctx, ifx, INJ_DIR_INGRESS, &h0) == 0);
	f.v6 = 1;
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);	/* IPv6 parses too */
	f.v6 = 0;
	f.dport = 53;						/* not RoCE: untouched */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	EXPECT(inj_hook_counters(ctx, ifx, INJ_DIR_INGRESS, &h1) == 0);
	EXPECT_EQ_U(h1.pkts - h0.pkts, 2);
	EXPECT_EQ_U(h1.roce_pkts - h0.roce_pkts, 1);
	EXPECT_EQ_U(ctr(id).matched, 1);
	EXPECT_EQ_U(ctr(id).dropped, 1);
	/* an egress rule does not see ingress packets and vice versa */
	del_all();
	add(INJ_DIR_EGRESS, "drop");
	f = base;
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	/* egress drops are STOLEN: the sender is told nothing, like wire loss */
	EXPECT(verdict(INJ_DIR_EGRESS, &f) == TC_ACT_STOLEN);
	del_all();
}

/* an IPv4 TCP segment (l4 6) or UDP datagram (17) from sport to dport */
static int ip_verdict(int dir, uint8_t l4, uint16_t sport, uint16_t dport)
{
	uint8_t f[14 + 20 + 20 + 16] = { 0 };
	struct iphdr *ip = (struct iphdr *)(f + 14);
	uint16_t *ports = (uint16_t *)(f + 34);
	struct run r;

	f[12] = 0x08;	/* IPv4 */
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = l4;
	ip->tot_len = htons((uint16_t)(sizeof(f) - 14));
	ip->saddr = htonl(0xc6120001);	/* 198.18.0.1 */
	ip->daddr = htonl(0xc6120002);
	ip->check = ip_csum(ip, 20);
	ports[0] = htons(sport);
	ports[1] = htons(dport);
	if (l4 == 17)
		ports[2] = htons(sizeof(f) - 34);
	else
		f[34 + 12] = 5 << 4;	/* TCP data offset */
	return run_bytes(dir, f, sizeof(f), &r);
}

/* proto and port: TCP and other UDP packets meet only the rules that name
 * them; a rule without proto is RoCE's, as it always was */
static void test_proto(void)
{
	struct frame_spec f = base;
	uint32_t plain, tcp, both;

	plain = add(INJ_DIR_INGRESS, "drop");
	EXPECT(ip_verdict(INJ_DIR_INGRESS, 6, 40000, 4420) == TC_ACT_OK);
	EXPECT(ip_verdict(INJ_DIR_INGRESS, 17, 40000, 53) == TC_ACT_OK);
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
	EXPECT_EQ_U(ctr(plain).matched, 1);
	del_all();
	tcp = add(INJ_DIR_INGRESS, "proto tcp port 4420-4421 drop");
	EXPECT(ip_verdict(INJ_DIR_INGRESS, 6, 40000, 4420) == TC_ACT_SHOT);	/* to the port */
	EXPECT(ip_verdict(INJ_DIR_INGRESS, 6, 4421, 40000) == TC_ACT_SHOT);	/* from it */
	EXPECT(ip_verdict(INJ_DIR_INGRESS, 6, 40000, 22) == TC_ACT_OK);
	EXPECT(ip_verdict(INJ_DIR_INGRESS, 17, 40000, 4420) == TC_ACT_OK);	/* UDP: not tcp */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);			/* RoCE: not tcp */
	EXPECT_EQ_U(ctr(tcp).matched, 2);
	EXPECT_EQ_U(ctr(tcp).dropped, 2);
	del_all();
	/* one rule for both, a later one for what it leaves: first match wins */
	both = add(INJ_DIR_EGRESS, "proto roce,tcp opcode data drop");
	add(INJ_DIR_EGRESS, "proto udp count");
	EXPECT(verdict(INJ_DIR_EGRESS, &f) == TC_ACT_STOLEN);
	EXPECT(ip_verdict(INJ_DIR_EGRESS, 6, 1, 2) == TC_ACT_STOLEN);
	EXPECT(ip_verdict(INJ_DIR_EGRESS, 17, 1, 2) == TC_ACT_OK);
	f.opcode = 0x11;	/* an ACK: not data */
	EXPECT(verdict(INJ_DIR_EGRESS, &f) == TC_ACT_OK);
	EXPECT_EQ_U(ctr(both).matched, 2);
	EXPECT_EQ_U(ctr(both + 1).matched, 1);
	del_all();
}

static void test_match_fields(void)
{
	static const struct {
		const char *rule;
		struct frame_spec hit, miss;
	} cases[] = {
		{ "qpn 0x11 drop", { .opcode = 4, .dqpn = 0x11 }, { .opcode = 4, .dqpn = 0x12 } },
		{ "qpn 16-32 drop", { .opcode = 4, .dqpn = 32 }, { .opcode = 4, .dqpn = 33 } },
		{ "psn 100-200 drop", { .opcode = 4, .psn = 100 }, { .opcode = 4, .psn = 201 } },
		{ "len 100-200 drop", { .opcode = 4, .payload = 60 }, { .opcode = 4, .payload = 200 } },
		{ "src 198.18.0.3 drop", { .opcode = 4, .src = "198.18.0.3" }, { .opcode = 4 } },
		{ "dst 198.18.0.9 drop", { .opcode = 4, .dst = "198.18.0.9" }, { .opcode = 4 } },
		{ "ecn ce drop", { .opcode = 4, .ecn = 3 }, { .opcode = 4, .ecn = 2 } },
		{ "opcode 0x0a drop", { .opcode = 0x0a }, { .opcode = 0x0b } },
		{ "opcode data,ack drop", { .opcode = 0x11, .syndrome = 0 }, { .opcode = 0x0c } },
	};
	size_t i;
	int bad = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct frame_spec h = cases[i].hit, m = cases[i].miss;

		if (!add(INJ_DIR_INGRESS, cases[i].rule)) {
			bad++;
			continue;
		}
		if (!h.payload)
			h.payload = 64;
		if (!m.payload)
			m.payload = 64;
		if (verdict(INJ_DIR_INGRESS, &h) != TC_ACT_SHOT ||
		    verdict(INJ_DIR_INGRESS, &m) != TC_ACT_OK) {
			fprintf(stderr, "match '%s' wrong\n", cases[i].rule);
			bad++;
		}
		del_all();
	}
	EXPECT(bad == 0);
}

/*
 * The rule index against a plain first-match scan: random rule sets (1 to
 * 64 rules, overlapping ranges on QPN, PSN, length, opcode, addresses,
 * CE, windows; exact QPNs that collide in the direct-mapped buckets; rules
 * deleted and added between rounds, so the tables' two sets take turns)
 * and random packets (IPv4 and IPv6) through the program; every rule's `matched` must be
 * what the scan, written here from the rule's documented meaning, says.
 */
static uint64_t lcg_state = 0x9e3779b97f4a7c15ULL;

static uint32_t lcg(uint32_t n)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(lcg_state >> 33) % n;
}

static const char *const ips[] = { "198.18.0.1", "198.18.0.2", "198.18.0.3" };
static const uint8_t ops[] = { 0x04, 0x0a, 0x06, 0x0c, 0x10, 0x11, 0x12, 0x64 };

static void rand_rule(char *buf, size_t len)
{
	size_t n = 0;
	uint32_t a, b;

#define R_APPEND(...) n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__)
	switch (lcg(4)) {	/* QPN: exact (some colliding: x and x + 4096), range, any */
	case 0:
		R_APPEND("qpn %u ", lcg(6) + (lcg(2) ? 4096 : 0));
		break;
	case 1:
		a = lcg(6);
		R_APPEND("qpn %u-%u ", a, a + lcg(4));
		break;
	case 2:
		R_APPEND("qpn %u-%u ", 4096 + lcg(3), 4096 + 3 + lcg(3));
		break;
	}
	if (lcg(2)) {
		a = lcg(300);
		b = a + lcg(120);
		R_APPEND("psn %u-%u ", a, b);
	}
	if (!lcg(3)) {
		a = 60 + lcg(120);
		R_APPEND("len %u-%u ", a, a + lcg(80));
	}
	if (!lcg(4))
		R_APPEND("opcode 0x%02x ", ops[lcg(sizeof(ops))]);
	else if (!lcg(4))
		R_APPEND("opcode %s ", lcg(2) ? "data" : "ack,read_req");
	if (!lcg(5))
		R_APPEND("src %s ", ips[lcg(3)]);
	if (!lcg(5))
		R_APPEND("dst %s ", ips[lcg(3)]);
	if (!lcg(8))
		R_APPEND("ecn ce ");
	if (!lcg(8))
		R_APPEND("%s ", lcg(2) ? "after 1h" : "for 1h");	/* never yet / all along */
	R_APPEND("count");
#undef R_APPEND
}

/* a rule's meaning (inject_abi.h), on a packet's fields */
static int ref_match(const struct inj_rule *r, uint8_t op, uint8_t syn, uint32_t qpn, uint32_t psn,
		     uint32_t len, uint32_t saddr, uint32_t daddr, uint8_t ecn, uint64_t now)
{
	uint8_t cls = inj_classify(op, syn);

	return (!r->class_mask || (r->class_mask & (1u << cls))) &&
	       (r->opcode < 0 || r->opcode == op) && qpn >= r->qpn_lo && qpn <= r->qpn_hi &&
	       psn >= r->psn_lo && psn <= r->psn_hi && len >= r->len_min && len <= r->len_max &&
	       (!r->src_ip || r->src_ip == saddr) && (!r->dst_ip || r->dst_ip == daddr) &&
	       (!r->ecn_ce || ecn == 3) && now >= r->start_ns && (!r->stop_ns || now < r->stop_ns);
}

static void test_index_random(void)
{
	struct inj_rule rules[INJ_MAX_RULES];
	uint64_t want[INJ_MAX_RULES], base_m[INJ_MAX_RULES];
	int set, bad = 0, checked = 0, took = 0, n, i, k;
	char text[256];

	for (set = 0; set < 40; set++) {
		int nr = set < 5 ? INJ_MAX_RULES : 1 + (int)lcg(INJ_MAX_RULES);

		if (set % 4 == 0)
			del_all();
		else	/* some rules go, others come: slots reused, tables rebuilt */
			for (n = inj_rule_list(ctx, rules, INJ_MAX_RULES), i = 0; i < n; i++)
				if (lcg(3) == 0)
					inj_rule_del(ctx, rules[i].id);
		for (n = inj_rule_list(ctx, rules, INJ_MAX_RULES); n < nr; n++) {
			rand_rule(text, sizeof(text));
			if (!add(INJ_DIR_INGRESS, text))
				bad++;
		}
		n = inj_rule_list(ctx, rules, INJ_MAX_RULES);
		for (i = 0; i < n; i++) {
			want[i] = 0;
			base_m[i] = ctr(rules[i].id).matched;
		}
		for (k = 0; k < 150; k++) {
			struct frame_spec f = { 0 };
			uint8_t in[2048];
			struct run r;
			size_t fl;
			uint32_t saddr, daddr, len;
			uint64_t now;

			f.opcode = ops[lcg(sizeof(ops))];
			f.syndrome = lcg(3) ? 0 : 0x60;	/* ACK or NAK */
			f.dqpn = lcg(4) ? lcg(12) : 4096 + lcg(10);
			f.psn = lcg(450);
			f.payload = (uint16_t)(lcg(3) ? lcg(160) : 0);
			f.src = ips[lcg(3)];
			f.dst = ips[lcg(3)];
			f.ecn = (uint8_t)lcg(4);
			f.v6 = !lcg(8);
			fl = frame_build(in, &f);
			if (f.v6) {	/* the program's length: the payload's + 40; no addresses */
				len = (((uint32_t)in[18] << 8) | in[19]) + 40;
				saddr = daddr = 0;
			} else {
				len = ((uint32_t)in[16] << 8) | in[17];
				memcpy(&saddr, in + 26, 4);
				memcpy(&daddr, in + 30, 4);
			}
			now = rtb_now_ns();
			run_bytes(INJ_DIR_INGRESS, in, fl, &r);
			for (i = 0; i < n; i++)
				if (ref_match(&rules[i], f.opcode, f.syndrome, f.dqpn, f.psn, len, saddr,
					      daddr, f.ecn, now)) {
					want[i]++;
					took++;
					break;
				}
			checked++;
		}
		for (i = 0; i < n; i++) {
			uint64_t got = ctr(rules[i].id).matched - base_m[i];

			if (got != want[i]) {
				if (bad < 5) {
					char fmt[256];

					inj_rule_format(&rules[i], fmt, sizeof(fmt));
					fprintf(stderr, "  rule: %s\n", fmt);
				}
				if (bad < 5)
					fprintf(stderr, "index: set %d, rule %u (slot order %d): matched %llu, "
						"a first-match scan says %llu\n", set, rules[i].id, i,
						(unsigned long long)got, (unsigned long long)want[i]);
				bad++;
			}
		}
	}
	del_all();
	fprintf(stderr, "index: %d packets against 40 random rule sets, %d taken by a rule\n",
		checked, took);
	EXPECT(bad == 0);
	EXPECT(took > checked / 4 && took < checked);	/* both outcomes seen often */
}

/* one frame through a corrupt rule: what changed, and is its ICRC right */
static void corrupt_one(const char *rule, struct frame_spec *f, int pad, int want_changed,
			int want_icrc_ok)
{
	uint8_t in[2048];
	struct run r;
	size_t n, i, diffs = 0, at = 0;
	uint32_t id = add(INJ_DIR_INGRESS, rule);

	f->pad = (uint8_t)pad;
	n = frame_build(in, f);
	EXPECT(frame_icrc(in, n) == frame_icrc_sent(in, n) && (f->v6 || frame_udp_ok(in, n)));
	EXPECT(run_bytes(INJ_DIR_INGRESS, in, n, &r) == TC_ACT_OK && r.out_len == n);
	for (i = 0; i < n - 4; i++)
		if (in[i] != r.out[i] && !(f->udp_csum && (i == 40 || i == 41))) {
			diffs++;
			at = i;
		}
	if (want_changed) {
		EXPECT(diffs == 1 && at == n - 5 - (size_t)pad);	/* the last payload byte */
		EXPECT_EQ_U(ctr(id).corrupted, 1);
	} else {
		EXPECT(diffs == 0 && !memcmp(in, r.out, n));
		EXPECT_EQ_U(ctr(id).corrupted, 0);
	}
	EXPECT((frame_icrc(r.out, n) == frame_icrc_sent(r.out, n)) == want_icrc_ok);
	if (!f->v6)
		EXPECT(frame_udp_ok(r.out, n));
	if (f->udp_csum)
		EXPECT(r.out[40] || r.out[41]);
	if (diffs != (size_t)(want_changed ? 1 : 0))
		fprintf(stderr, "  %s: %zu bytes changed, the last at %zu of %zu\n", rule, diffs, at, n);
	del_all();
}

/* corrupt icrc: the receiver's ICRC check fails; corrupt payload: the ICRC is
 * made right again, with any pad count, over IPv4 and IPv6, and a non-zero
 * UDP checksum stays right; a packet with no payload is passed as it is */
static void test_corrupt_modes(struct frame_spec *f)
{
	struct frame_spec g = *f;
	int pad;

	corrupt_one("corrupt", &g, 0, 1, 0);
	corrupt_one("corrupt icrc", &g, 0, 1, 0);
	for (pad = 0; pad < 4; pad++)
		corrupt_one("corrupt payload", &g, pad, 1, 1);
	g.v6 = 1;
	corrupt_one("corrupt payload", &g, 3, 1, 1);
	corrupt_one("corrupt icrc", &g, 1, 1, 0);
	g.v6 = 0;
	g.opcode = 0x10;	/* READ response only: AETH, then data */
	corrupt_one("corrupt payload", &g, 2, 1, 1);
	g.opcode = 0x0c;	/* READ request: no payload */
	g.payload = 16;
	corrupt_one("corrupt payload", &g, 0, 0, 1);
	g.opcode = 0x0a;	/* WRITE only: 16 bytes of RETH and no data */
	corrupt_one("corrupt payload", &g, 0, 0, 1);
	g.opcode = 0x11;	/* an ACK */
	g.payload = 0;
	corrupt_one("corrupt payload", &g, 0, 0, 1);
	g = *f;
	g.udp_csum = 1;		/* a UDP checksum that is not 0 stays right */
	for (pad = 0; pad < 4; pad++)
		corrupt_one("corrupt payload", &g, pad, 1, 1);
	{	/* the mode in the rule's text both ways; a wrong word refused */
		static const char *const in[][2] = { { "corrupt", "corrupt icrc 100%" },
						     { "corrupt payload 50%", "corrupt payload 50%" },
						     { "corrupt icrc every 3", "corrupt icrc every 3" } };
		char buf[64], txt[128], err[256], *argv[8];
		struct inj_rule r;
		int i, argc;

		for (i = 0; i < 3; i++) {
			snprintf(buf, sizeof(buf), "%s", in[i][0]);
			argc = 0;
			for (char *t = strtok(buf, " "); t && argc < 8; t = strtok(NULL, " "))
				argv[argc++] = t;
			inj_rule_init(&r);
			EXPECT(inj_rule_parse(&r, argc, argv, 0, err, sizeof(err)) == 0);
			inj_rule_format(&r, txt, sizeof(txt));
			EXPECT(!strcmp(txt, in[i][1]));
			if (strcmp(txt, in[i][1]))
				fprintf(stderr, "  '%s' printed as '%s'\n", in[i][0], txt);
		}
		snprintf(buf, sizeof(buf), "corrupt");
		argv[0] = buf;
		argv[1] = (char *)"sideways";
		inj_rule_init(&r);
		EXPECT(inj_rule_parse(&r, 2, argv, 0, err, sizeof(err)) != 0 && strstr(err, "sideways"));
	}
}

static void test_actions(void)
{
	struct frame_spec f = base;
	struct run r;
	uint32_t id;

	id = add(INJ_DIR_EGRESS, "delay 2ms");
	if (id) {	/* needs sch_prio/sch_fq on this kernel for the qdisc: else skip loudly */
		EXPECT(run_frame(INJ_DIR_EGRESS, &f, &r) == TC_ACT_OK);
		EXPECT(r.priority == 0x10001);
		EXPECT(r.tstamp >= 2000000);
		EXPECT_EQ_U(ctr(id).delayed, 1);
		del_all();
		/* uniform jitter of 3 s (above 2^31 ns, where the draw used to
		 * wrap): delays within [0, 1 s + 3 s] (draws below 0 clamp at 0),
		 * and some of them above 3 s */
		id = add(INJ_DIR_EGRESS, "delay 1s jitter 3s uniform");
		{
			uint64_t lo = UINT64_MAX, hi = 0, t0;

			for (int k = 0; k < 200; k++) {
				t0 = rtb_now_ns();
				run_frame(INJ_DIR_EGRESS, &f, &r);
				if (r.tstamp) {
					uint64_t d = r.tstamp > t0 ? r.tstamp - t0 : 0;

					lo = d < lo ? d : lo;
					hi = d > hi ? d : hi;
				}
			}
			fprintf(stderr, "jitter 3s uniform around 1s: delays %.2f..%.2f s\n", lo / 1e9,
				hi / 1e9);
			EXPECT(hi <= 4100000000ULL && hi >= 3000000000ULL);	/* up to 1 s + 3 s */
		}
		del_all();
	} else {
		fprintf(stderr, "SKIP delay/reorder verdicts: no sch_prio/sch_fq/sch_netem here\n");
	}
	/* IPv4 fragments are not RoCE: a first fragment (MF) and a later one
	 * (an offset) pass a drop-everything rule untouched, the whole frame not */
	id = add(INJ_DIR_INGRESS, "drop");
	f.frag_off = 0x2000;
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	f.frag_off = 0x0010;
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	f.frag_off = 0;
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
	EXPECT_EQ_U(ctr(id).matched, 1);
	del_all();
	test_corrupt_modes(&f);

	id = add(INJ_DIR_INGRESS, "ecn");
	EXPECT(run_frame(INJ_DIR_INGRESS, &f, &r) == TC_ACT_OK);
	EXPECT((r.out[15] & 3) == 3);			/* CE */
	EXPECT(ip_csum(r.out + 14, 20) == 0);		/* header checksum still valid */
	EXPECT_EQ_U(ctr(id).marked, 1);
	f.v6 = 1;
	EXPECT(run_frame(INJ_DIR_INGRESS, &f, &r) == TC_ACT_OK);
	EXPECT(((r.out[15] >> 4) & 3) == 3);
	f.v6 = 0;
	del_all();

	id = add(INJ_DIR_INGRESS, "duplicate");
	EXPECT(run_frame(INJ_DIR_INGRESS, &f, &r) == TC_ACT_OK);
	EXPECT_EQ_U(ctr(id).duplicated, 1);
	del_all();

	id = add(INJ_DIR_INGRESS, "count");
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	EXPECT_EQ_U(ctr(id).matched, 1);
	EXPECT(ctr(id).matched_bytes > 100);
	del_all();
}

/* drops among n frames; the PRNG seed is fixed so every run is the same */
static uint64_t drops(int n)
{
	struct frame_spec f = base;
	uint64_t d = 0;
	int i;

	for (i = 0; i < n; i++) {
		f.psn = (uint32_t)i & 0xffffff;
		d += verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT;
	}
	return d;
}

static void test_models(void)
{
	uint64_t a, b, d;
	uint32_t id;
	int i, lost_run = 0, bursts = 0, in_burst = 0;
	struct frame_spec f = base;

	inj_set_seed(ctx, 42);
	id = add(INJ_DIR_INGRESS, "drop 10%");
	a = drops(20000);
	/* 2000 expected, sigma 42: +-10% is 4.7 sigma */
	EXPECT(a > 1800 && a < 2200);
	EXPECT_EQ_U(ctr(id).dropped, a);
	EXPECT_EQ_U(ctr(id).matched, 20000);
	inj_set_seed(ctx, 42);		/* same seed: the same draws */
	b = drops(20000);
	EXPECT_EQ_U(a, b);
	del_all();

	add(INJ_DIR_INGRESS, "drop every 5");
	EXPECT_EQ_U(drops(1000), 200);
	del_all();
	add(INJ_DIR_INGRESS, "drop nth 3");
	for (i = 1; i <= 5; i++)
		EXPECT((verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT) == (i == 3));
	del_all();
	add(INJ_DIR_INGRESS, "drop 50% gap 4");	/* candidates: every 4th, half of them */
	d = drops(40000);
	EXPECT(d > 4500 && d < 5500);
	del_all();

	/* Gilbert-Elliott p=1% r=10%, always lost when bad: loss p/(p+r) = 9.1%,
	 * mean burst 1/r = 10 packets */
	inj_set_seed(ctx, 7);
	id = add(INJ_DIR_INGRESS, "drop gemodel 1% 10%");
	for (i = 0; i < 100000; i++) {
		int lost = verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT;

		if (lost && !in_burst)
			bursts++;
		in_burst = lost;
		lost_run += lost;
	}
	EXPECT(lost_run > 8000 && lost_run < 10200);
	EXPECT(bursts && (double)lost_run / bursts > 8 && (double)lost_run / bursts < 12.5);
	fprintf(stderr, "gemodel: loss %.2f%% mean burst %.1f\n", lost_run / 1000.0,
		bursts ? (double)lost_run / bursts : 0);
	EXPECT_EQ_U(ctr(id).dropped, (uint64_t)lost_run);
	del_all();
	inj_set_seed(ctx, 0);
}

static void test_windows_order_live(void)
{
	struct frame_spec f = base;
	struct inj_rule r;
	uint32_t a, b, ids[INJ_MAX_RULES];
	char err[256];
	int i;

	add(INJ_DIR_INGRESS, "drop after 1h");		/* not yet */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	del_all();
	add(INJ_DIR_INGRESS, "flap 1h");		/* link down now, for an hour */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
	del_all();
	{	/* a window counts from when the rule is in the table, not from its
		 * parsing: loading and attaching took longer than a 2 s flap on a
		 * slow host, and the flap was over before it acted (CI) */
		char buf[] = "flap 200ms", *argv[] = { buf, buf + 5 };
		char txt[128];

		buf[4] = 0;
		inj_rule_init(&r);
		r.ifindex = ifx;
		r.dir = INJ_DIR_INGRESS;
		EXPECT(inj_rule_parse(&r, 2, argv, 0, err, sizeof(err)) == 0);
		inj_rule_format(&r, txt, sizeof(txt));
		EXPECT(strstr(txt, "for 0.2s") != NULL);
		usleep(300000);			/* past the window, had it started */
		EXPECT(inj_rule_add(ctx, &r, err, sizeof(err)) == 0);
		EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
		EXPECT(r.start_ns && r.stop_ns - r.start_ns == 200000000ULL);
		del_all();
	}

	/* first match wins: the count rule takes the packet, the drop never sees it */
	a = add(INJ_DIR_INGRESS, "qpn 0x11 count");
	b = add(INJ_DIR_INGRESS, "drop");
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	EXPECT_EQ_U(ctr(a).matched, 1);
	EXPECT_EQ_U(ctr(b).matched, 0);
	/* live: switch the first rule off, the second takes over */
	EXPECT(inj_rule_get(ctx, a, &r) == 0);
	r.disabled = 1;
	EXPECT(inj_rule_set(ctx, &r, err, sizeof(err)) == 0);
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
	/* live probability change keeps the slot and the counters */
	EXPECT(inj_rule_get(ctx, b, &r) == 0);
	r.prob = 0;
	EXPECT(inj_rule_set(ctx, &r, err, sizeof(err)) == 0);
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	EXPECT_EQ_U(ctr(b).matched, 2);
	EXPECT_EQ_U(ctr(b).dropped, 1);
	del_all();

	/* QPNs sharing a direct-mapped bucket (same low 12 bits) both still work */
	a = add(INJ_DIR_INGRESS, "qpn 0x11 drop");
	b = add(INJ_DIR_INGRESS, "qpn 0x1011 drop");
	f.dqpn = 0x1011;
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
	f.dqpn = 0x11;
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
	f.dqpn = 0x2011;
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	EXPECT_EQ_U(ctr(a).dropped, 1);
	EXPECT_EQ_U(ctr(b).dropped, 1);
	del_all();
	f = base;

	/* 64 rules: the table fills, the last slot still works, a 65th is refused */
	for (i = 0; i < INJ_MAX_RULES; i++) {
		char rule[64];

		snprintf(rule, sizeof(rule), "qpn %d drop", 1000 + i);
		ids[i] = add(INJ_DIR_INGRESS, rule);
	}
	EXPECT(ids[INJ_MAX_RULES - 1] != 0);
	f.dqpn = 1000 + INJ_MAX_RULES - 1;
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_SHOT);
	f.dqpn = 999;
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	inj_rule_init(&r);
	r.ifindex = ifx;
	r.action = INJ_ACT_DROP;
	EXPECT(inj_rule_add(ctx, &r, err, sizeof(err)) == -ENOSPC);
	del_all();
}

/* a window from the traffic: after and for count from the first packet
 * that met the rule's other fields, not from when the rule went in (a
 * search's flap lands on the same part of a run each time). Each check
 * is of the time measured since that packet; one within 20 ms of an edge
 * is not judged (a slow host's sleep) */
static int window_says(uint64_t t0, uint64_t lo_ms, uint64_t hi_ms, int *judged)
{
	uint64_t ms = (rtb_now_ns() - t0) / 1000000;

	*judged = ms + 20 < lo_ms || (ms > lo_ms + 20 && ms + 20 < hi_ms) || ms > hi_ms + 20;
	return ms >= lo_ms && ms < hi_ms ? TC_ACT_SHOT : TC_ACT_OK;
}

static void test_window_from_traffic(void)
{
	struct frame_spec f = base;
	char txt[160];
	struct inj_rule r;
	uint64_t t0;
	int judged, want, checks = 0, drops = 0;
	uint32_t id;

	id = add(INJ_DIR_INGRESS, "qpn 0x11 drop after 100ms for 300ms from traffic");
	EXPECT(id != 0 && inj_rule_get(ctx, id, &r) == 0);
	inj_rule_format(&r, txt, sizeof(txt));
	EXPECT_MSG(strstr(txt, "after 0.1s for 0.3s from traffic") != NULL, "%s", txt);
	usleep(150000);		/* in the table for longer than its after: nothing yet */
	f.dqpn = 0x22;		/* another QP's packet anchors nothing */
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);
	f.dqpn = 0x11;
	t0 = rtb_now_ns();
	EXPECT(verdict(INJ_DIR_INGRESS, &f) == TC_ACT_OK);	/* the anchor */
	usleep(200000);		/* ~200 ms: in [100, 400) */
	want = window_says(t0, 100, 400, &judged);
	if (judged) {
		EXPECT(verdict(INJ_DIR_INGRESS, &f) == want);
		drops += want == TC_ACT_SHOT;
		checks++;
	}
	usleep(300000);		/* ~500 ms: past it */
	want = window_says(t0, 100, 400, &judged);
	if (judged) {
		EXPECT(verdict(INJ_DIR_INGRESS, &f) == want);
		drops += want == TC_ACT_SHOT;
		checks++;
	}
	EXPECT_MSG(checks >= 1, "no check judged: this host's sleeps overshot by > 80 ms");
	EXPECT_EQ_U(ctr(id).dropped, drops);
	del_all();
	/* without after or for it means nothing: refused */
	{
		char b1[] = "drop", b2[] = "from", b3[] = "traffic", *argv[] = { b1, b2, b3 };
		char err[256];

		inj_rule_init(&r);
		EXPECT(inj_rule_parse(&r, 3, argv, 0, err, sizeof(err)) != 0);
		EXPECT_MSG(strstr(err, "from traffic: with after or for") != NULL, "%s", err);
	}
}

static void test_parse_errors(void)
{
	static const char *const bad[][6] = {
		{ "drop", "150%" }, { "qpn", "0x1000000", "drop" }, { "psn", "200-100", "drop" },
		{ "dorp", "10%" }, { "drop", "every", "0" }, { "src", "300.1.1.1", "drop" },
		{ "opcode", "dta", "drop" }, { "delay" }, { "qpn", "1" },
		{ "drop", "10%", "corrupt" }, { "qp", "0", "drop" }, { "tx", "0", "drop" },
		{ "psn", "5", "rpsn", "6", "drop" }, { "tx", "3-2", "drop" },
		{ "port", "4420", "drop" }, { "proto", "sctp", "drop" },
		{ "proto", "tcp", "qpn", "3", "drop" }, { "proto", "udp", "corrupt" },
		{ "proto", "tcp", "opcode", "data", "drop" }, { "proto", "tcp", "port", "70000", "drop" },
	};
	char err[256], *argv[6];
	struct inj_rule r;
	size_t i, k;
	int accepted = 0;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (k = 0; k < 6 && bad[i][k]; k++)
			argv[k] = (char *)bad[i][k];
		inj_rule_init(&r);
		err[0] = 0;
		if (!inj_rule_parse(&r, (int)k, argv, 0, err, sizeof(err)) || !err[0]) {
			fprintf(stderr, "accepted bad rule #%zu\n", i);
			accepted++;
		}
	}
	EXPECT(accepted == 0);
	inj_rule_init(&r);
	argv[0] = "dorp";
	inj_rule_parse(&r, 1, argv, 0, err, sizeof(err));
	EXPECT(strstr(err, "did you mean 'drop'") != NULL);
}

static void tests(void)
{
	test_parse_errors();
	test_classes();
	test_parse_and_hooks();
	test_proto();
	test_match_fields();
	test_index_random();
	test_actions();
	test_models();
	test_windows_order_live();
	test_window_from_traffic();
}

int main(void)
{
	return prog_main("test_inject", tests);
}
