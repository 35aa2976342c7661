// SPDX-License-Identifier: MIT
/*
 * The injector's tc program under BPF_PROG_TEST_RUN on crafted RoCEv2
 * frames: parsing (IPv4, IPv6, every opcode class), each match field, each
 * action's verdict and side effects, the selection models (fixed seeds,
 * statistical tolerances), windows, first-match order, 64 rules, live
 * changes. Real kernel, real maps; needs root. No packets leave: the
 * frames only run through the program, on a veth pair made for the test.
 */
#include <errno.h>
#include <sched.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/pkt_cls.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../unit/expect.h"
#include "../../injector/inj.h"
#include "frames.h"
#include "../../lib/clock.h"

#define DEV "injut0"
#define PEER "injut1"

static struct inj_ctx *ctx;
static uint32_t ifx;
static char pin[128];

struct run {
	int verdict;
	uint32_t priority;
	uint64_t tstamp;
	uint8_t out[2048];
	uint32_t out_len;
};

/* n bytes of a frame through the program of a direction */
static int run_bytes(int dir, uint8_t *in, size_t n, struct run *res)
{
	struct __sk_buff skb = { 0 }, skb_out = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o);
	int r;

	o.data_size_in = (uint32_t)n;
	o.data_in = in;
	o.data_out = res->out;
	o.data_size_out = sizeof(res->out);
	skb.ifindex = ifx;
	o.ctx_in = &skb;
	o.ctx_size_in = sizeof(skb);
	o.ctx_out = &skb_out;
	o.ctx_size_out = sizeof(skb_out);
	o.repeat = 1;
	r = bpf_prog_test_run_opts(inj_prog_fd(ctx, dir), &o);
	if (r) {
		fprintf(stderr, "test_run: %s\n", strerror(errno));
		return -1;
	}
	res->verdict = (int)o.retval;
	res->priority = skb_out.priority;
	res->tstamp = skb_out.tstamp;
	res->out_len = o.data_size_out;
	return res->verdict;
}

static int run_frame(int dir, const struct frame_spec *f, struct run *res)
{
	uint8_t in[2048];

	return run_bytes(dir, in, frame_build(in, f), res);
}

static int verdict(int dir, const struct frame_spec *f)
{
	struct run r;

	return run_frame(dir, f, &r);
}

static uint32_t add(int dir, const char *text)
{
	char buf[512], *argv[64], err[256] = "", *save;
	struct inj_rule r;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " ", &save); t && argc < 64; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	inj_rule_init(&r);
	r.ifindex = ifx;
	r.dir = (uint8_t)dir;
	if (inj_rule_parse(&r, argc, argv, 0, err, sizeof(err)) ||
	    inj_rule_add(ctx, &r, err, sizeof(err))) {
		fprintf(stderr, "add '%s': %s\n", text, err);
		return 0;
	}
	return r.id;
}

static void del_all(void)
{
	struct inj_rule rules[INJ_MAX_RULES];
	int n = inj_rule_list(ctx, rules, INJ_MAX_RULES), i;

	for (i = 0; i < n; i++)
		inj_rule_del(ctx, rules[i].id);
}

static struct inj_rule_ctr ctr(uint32_t id)
{
	struct inj_rule_ctr k = { 0 };

	inj_rule_counters(ctx, id, &k);
	return k;
}

static const struct frame_spec base = { .opcode = 0x0a, .dqpn = 0x11, .psn = 150, .payload = 64 };

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

static void test_parse_errors(void)
{
	static const char *const bad[][6] = {
		{ "drop", "150%" }, { "qpn", "0x1000000", "drop" }, { "psn", "200-100", "drop" },
		{ "dorp", "10%" }, { "drop", "every", "0" }, { "src", "300.1.1.1", "drop" },
		{ "opcode", "dta", "drop" }, { "delay" }, { "qpn", "1" },
		{ "drop", "10%", "corrupt" }, { "qp", "0", "drop" }, { "tx", "0", "drop" },
		{ "psn", "5", "rpsn", "6", "drop" }, { "tx", "3-2", "drop" },
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

static struct inj_hook_ctr hook_ctr(int dir)
{
	struct inj_hook_ctr k;

	inj_hook_counters(ctx, ifx, dir, &k);
	return k;
}

/* qp / rpsn / tx: the hook's QPs numbered in the order it saw them, PSNs
 * from each QP's first, each PSN's transmissions; resent packets counted */
static void test_track(void)
{
	struct frame_spec f = { .opcode = 0x0a, .payload = 64 };
	static struct inj_qp_key keys[16];
	static struct inj_qp qps[16];
	struct inj_hook_ctr k0, k1;
	struct inj_rule r;
	char text[256], *argv[8];
	int n, drops = 0, i;
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
	while (fd >= 0) {	/* the veth's other end: skip what else arrives (IPv6 ND) */
		n = recv(fd, got, sizeof(got), 0);
		if (n <= 0 || (n > 42 && got[12] == 0x08 && got[13] == 0x00 && got[23] == 17))
			break;
	}
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
	while (fd >= 0) {
		n = recv(fd, got, sizeof(got), 0);
		if (n <= 0 || (n > 42 && got[12] == 0x08 && got[13] == 0x00 && got[23] == 17))
			break;
	}
	EXPECT(n > 0 && cnp_ok(got, (size_t)n, 0, 0x44));
	if (fd >= 0)
		close(fd);
	del_all();
	EXPECT(!hooked(INJ_DIR_INGRESS) && !hooked(INJ_DIR_EGRESS));

	/* the copy's own pass, each form: the mark carries the QPN */
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

static int quiet(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	return lvl == LIBBPF_WARN && getenv("V") ? vfprintf(stderr, fmt, ap) : 0;
}

int main(void)
{
	char cmd[256];

	libbpf_set_print(quiet);
	{
		/* the PRNG is per CPU (seeded with the CPU's number): "same seed,
		 * same draws" holds on one CPU, so every test run stays on one
		 * (CI t8: a migration mid-sequence gave 1998 drops, then 2036) */
		cpu_set_t one;
		int cpu = sched_getcpu();

		CPU_ZERO(&one);
		CPU_SET(cpu < 0 ? 0 : cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			perror("sched_setaffinity");
	}
	if (geteuid() != 0) {
		fprintf(stderr, "SKIP: needs root (BPF, tc)\n");
		return 77;
	}
	snprintf(pin, sizeof(pin), "/sys/fs/bpf/rdma-inject-test-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "ip link add " DEV " type veth peer name " PEER " 2>/dev/null;"
		 "ip link set " DEV " up; ip link set " PEER " up");
	if (system(cmd)) {
		fprintf(stderr, "cannot create the test veth pair\n");
		return 1;
	}
	ifx = if_nametoindex(DEV);
	ctx = inj_open(pin);
	EXPECT(ctx != NULL);
	if (ctx) {
		test_parse_errors();
		test_classes();
		test_parse_and_hooks();
		test_match_fields();
		test_index_random();
		test_actions();
		test_models();
		test_windows_order_live();
		test_track();
		test_cnp();
		inj_close(ctx);
	}
	EXPECT(inj_flush(pin) == 0);
	EXPECT(access(pin, F_OK) != 0);
	if (system("tc qdisc show dev " DEV " | grep -q clsact") == 0) {
		fprintf(stderr, "clsact left on " DEV " after flush\n");
		expect_failures++;
	}
	if (system("ip link del " DEV " 2>/dev/null"))
		fprintf(stderr, "could not delete " DEV "\n");
	return expect_done("test_inject");
}
