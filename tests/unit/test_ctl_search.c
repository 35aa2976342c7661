// SPDX-License-Identifier: MIT
/*
 * rdmactl search's schedules (ctl/search/sched.c) and its profile section
 * (ctl/exp/profile_search.c). The oracle here is a rule of the test's own,
 * standing in for the runs (a unit test: the real trials are in
 * tests/softroce 78-search): a schedule "breaks" when one of its events
 * reaches the packet the rule names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "expect.h"
#include "../../ctl/exp/profile.h"
#include "../../ctl/search/search.h"

static struct prof_search space(void)
{
	struct prof_search s;

	memset(&s, 0, sizeof(s));
	s.nplaces = 2;
	s.place[0] = (struct prof_place){ 0, 0, 0 };	/* node0 ingress */
	s.place[1] = (struct prof_place){ 1, 0, 0 };	/* node1 ingress */
	s.nactions = 1;
	snprintf(s.action[0], sizeof(s.action[0]), "drop");
	s.qp_lo = 1;
	s.qp_hi = 2;
	s.rpsn_lo = 0;
	s.rpsn_hi = 63;
	s.tx_lo = s.tx_hi = 1;
	s.max_events = 3;
	return s;
}

/* the stand-in: breaks when an event at place 1, QP 2 takes PSN 17's
 * first transmission; counts its calls */
struct target {
	int place;
	uint32_t qp, rpsn;
	int calls;
	int noisy;	/* a run in noisy that should break does not */
};

static int oracle(void *arg, const struct sched *s)
{
	struct target *t = arg;

	t->calls++;
	for (int i = 0; i < s->n; i++) {
		const struct sch_ev *e = &s->ev[i];

		if (e->place == t->place && e->qp == t->qp && e->lo <= t->rpsn && e->hi >= t->rpsn &&
		    e->tx <= 1)
			return !(t->noisy && t->calls % t->noisy == 0);
	}
	return 0;
}

static void test_shrink_to_one_packet(void)
{
	struct prof_search sp = space();
	struct target t = { 1, 2, 17, 0, 0 };
	struct sched in = { .n = 3 }, out;
	char text[512];

	in.ev[0] = (struct sch_ev){ 0, 0, -1, 1, 0, 40, 0 };
	in.ev[1] = (struct sch_ev){ 1, 0, -1, 2, 3, 40, 0 };	/* covers PSN 17 */
	in.ev[2] = (struct sch_ev){ 1, 0, -1, 1, 5, 9, 1 };
	EXPECT(oracle(&t, &in) == 1);
	t.calls = 0;
	EXPECT(sch_shrink(&sp, &in, oracle, &t, &out) == 0);
	EXPECT_EQ_U(out.n, 1);
	EXPECT(out.ev[0].place == 1 && out.ev[0].qp == 2);
	EXPECT_EQ_U(out.ev[0].lo, 17);
	EXPECT_EQ_U(out.ev[0].hi, 17);
	EXPECT_EQ_U(out.ev[0].tx, 1);
	/* 3 events to 1 (at most 3 + 2 tries), 38 PSNs to 1 (about log2: 12) */
	EXPECT_MSG(t.calls <= 20, "%d oracle calls", t.calls);
	sch_text(&sp, &out, text, sizeof(text));
	EXPECT_MSG(!strcmp(text, "node1 ingress: qp 2 rpsn 17 tx 1 drop"), "%s", text);
}

/* an oracle that stops (out of budget) mid-way: the smallest so far */
static int stopping(void *arg, const struct sched *s)
{
	int *n = arg;

	(void)s;
	return ++*n > 2 ? -1 : 1;
}

static void test_shrink_stops(void)
{
	struct prof_search sp = space();
	struct sched in = { .n = 3 }, out;
	int n = 0;

	for (int i = 0; i < 3; i++)
		in.ev[i] = (struct sch_ev){ 0, 0, -1, 1, 0, 10, 0 };
	EXPECT(sch_shrink(&sp, &in, stopping, &n, &out) == -1);
	EXPECT_EQ_U(out.n, 1);	/* two removals held before the stop */
}

static void test_random_in_space(void)
{
	struct prof_search sp = space();
	uint64_t rng = 7;
	int i, j, bad = 0, sizes[4] = { 0 };

	sp.opcodes = (1u << 0) | (1u << 3);	/* data, ack */
	for (i = 0; i < 2000; i++) {
		struct sched s;

		sch_random(&sp, &rng, &s);
		if (s.n < 1 || s.n > 3) {
			bad++;
			continue;
		}
		sizes[s.n]++;
		for (j = 0; j < s.n; j++) {
			const struct sch_ev *e = &s.ev[j];

			bad += e->place < 0 || e->place > 1 || e->qp < 1 || e->qp > 2 ||
			       e->lo > e->hi || e->hi > 63 || e->hi - e->lo > 7 ||
			       (e->opcode != -1 && e->opcode != 0 && e->opcode != 3) || e->tx > 1 ||
			       (e->kind != SCH_REQUESTS && e->kind != SCH_RESPONSES);
		}
	}
	EXPECT_EQ_U(bad, 0);
	EXPECT(sizes[1] > 500 && sizes[2] > 500 && sizes[3] > 500);
}

/* guided's draws once its seeds are spent: on the flows the map has, within
 * the PSNs each used */
static void test_random_in_flows(void)
{
	struct prof_search sp = space();
	struct sch_map m = { .n = 3 };
	uint64_t rng = 11;
	int i, j, bad = 0, on[3] = { 0 };

	m.f[0] = (struct sch_flow){ 1, 1, 40, 4, SCH_REQUESTS };
	m.f[1] = (struct sch_flow){ 0, 1, 10, 1, SCH_RESPONSES };
	m.f[2] = (struct sch_flow){ 0, 3, 10, 1, SCH_REQUESTS };	/* qp 3: not in the space */
	for (i = 0; i < 2000; i++) {
		struct sched s;

		sch_random_in(&sp, &m, &rng, &s);
		for (j = 0; j < s.n; j++) {
			const struct sch_ev *e = &s.ev[j];
			int f = e->place == 1 ? 0 : 1;

			bad += e->qp != 1 || e->kind != m.f[f].kind || e->hi >= m.f[f].extent ||
			       e->lo > e->hi;
			on[f]++;
		}
	}
	EXPECT_EQ_U(bad, 0);
	EXPECT(on[0] > 1000 && on[1] > 1000);
}

/* flap: a window of loss, drawn within targets.time and targets.window,
 * shrunk by halving its window while one half still breaks: the stand-in
 * breaks while the window covers 300..340 ms at place 0 */
static int window_oracle(void *arg, const struct sched *s)
{
	int *calls = arg;

	++*calls;
	for (int i = 0; i < s->n; i++)
		if (s->ev[i].len_ms && s->ev[i].place == 0 && s->ev[i].t_ms <= 300 &&
		    s->ev[i].t_ms + s->ev[i].len_ms >= 340)
			return 1;
	return 0;
}

static void test_flap(void)
{
	struct prof_search sp = space();
	struct sched s, in = { .n = 2 }, out;
	uint64_t rng = 5;
	char text[256], rule[64];
	int i, j, bad = 0, flaps = 0, calls = 0;

	snprintf(sp.action[1], sizeof(sp.action[1]), "flap");
	sp.nactions = 2;
	sp.flap = 1;
	sp.time_lo_ns = 100000000ULL;
	sp.time_hi_ns = 900000000ULL;
	sp.win_lo_ns = 10000000ULL;
	sp.win_hi_ns = 500000000ULL;
	for (i = 0; i < 2000; i++) {
		sch_random(&sp, &rng, &s);
		for (j = 0; j < s.n; j++) {
			const struct sch_ev *e = &s.ev[j];

			if (!sch_is_flap(&sp, e))
				continue;
			flaps++;
			bad += e->t_ms < 100 || e->t_ms > 900 || e->len_ms < 10 || e->len_ms > 500 ||
			       e->qp || e->place < 0 || e->place > 1;
		}
	}
	EXPECT(flaps > 1000 && bad == 0);
	in.ev[0] = (struct sch_ev){ 0, 1, -1, 0, 0, 0, 0, 0, 200, 400 };	/* 200..600 ms */
	in.ev[1] = (struct sch_ev){ 1, 0, -1, 1, 3, 3, 1, SCH_REQUESTS };
	EXPECT(sch_shrink(&sp, &in, window_oracle, &calls, &out) == 0);
	EXPECT_EQ_U(out.n, 1);
	/* 400 ms: 200 keeps 300..340 (200..400), then 100 does not; 50 ms either */
	EXPECT_MSG(out.ev[0].t_ms <= 300 && out.ev[0].t_ms + out.ev[0].len_ms >= 340 &&
		   out.ev[0].len_ms <= 100, "%u ms at %u ms", out.ev[0].len_ms, out.ev[0].t_ms);
	sch_text(&sp, &out, text, sizeof(text));
	EXPECT_MSG(strstr(text, "node0 ingress: flap ") == text && strstr(text, "ms at "), "%s", text);
	EXPECT(sch_rule(&sp, &out.ev[0], rule, sizeof(rule)) == 0 &&
	       !strcmp(rule, "drop from traffic"));
	/* seeds are packets: no flap among them */
	{
		struct sch_map m = { .n = 1 };
		struct sched seeds[32];
		int n;

		m.f[0] = (struct sch_flow){ 1, 1, 40, 4, SCH_REQUESTS };
		n = sch_seeds(&sp, &m, seeds, 32);
		for (i = 0; i < n; i++)
			EXPECT(!sch_is_flap(&sp, &seeds[i].ev[0]));
	}
}

/* the stand-in for node faults: breaks when a freeze at place 1 lasts 160
 * ms or more, or whenever a reboot is in the schedule; counts its calls */
static int node_oracle(void *arg, const struct sched *s)
{
	const struct prof_search *sp = ((void **)arg)[0];
	int *calls = ((void **)arg)[1];

	++*calls;
	for (int i = 0; i < s->n; i++) {
		int ev = sch_node_event(sp, &s->ev[i]);

		if ((ev == PEV_FREEZE && s->ev[i].place == 1 && s->ev[i].len_ms >= 160) ||
		    ev == PEV_REBOOT)
			return 1;
	}
	return 0;
}

static void test_node_faults(void)
{
	struct prof_search sp = space();
	struct sched s, in = { .n = 2 }, out, seeds[16];
	uint64_t rng = 11;
	char text[256], rule[64];
	int i, j, freezes = 0, reboots = 0, bad = 0, calls = 0, n;
	void *arg[2] = { &sp, &calls };

	snprintf(sp.action[0], sizeof(sp.action[0]), "freeze");
	snprintf(sp.action[1], sizeof(sp.action[1]), "reboot");
	sp.nactions = 2;
	sp.flap = 1;
	sp.time_lo_ns = 100000000ULL;
	sp.time_hi_ns = 600000000ULL;
	sp.win_lo_ns = 50000000ULL;
	sp.win_hi_ns = 400000000ULL;
	for (i = 0; i < 2000; i++) {
		sch_random(&sp, &rng, &s);
		for (j = 0; j < s.n; j++) {
			const struct sch_ev *e = &s.ev[j];
			int ev = sch_node_event(&sp, e);

			freezes += ev == PEV_FREEZE;
			reboots += ev == PEV_REBOOT;
			/* timed, no packets; a reboot has no window */
			bad += !sch_timed(&sp, e) || e->qp || e->t_ms < 100 || e->t_ms > 600 ||
			       (ev == PEV_FREEZE ? e->len_ms < 50 || e->len_ms > 400 : e->len_ms != 0);
		}
	}
	EXPECT_MSG(freezes > 1000 && reboots > 1000 && bad == 0, "%d freezes, %d reboots, %d bad",
		   freezes, reboots, bad);
	/* the rule is the event's name; the text names the node, not a hook */
	in.ev[0] = (struct sch_ev){ .place = 1, .action = 0, .opcode = -1, .t_ms = 350,
				    .len_ms = 400 };
	in.ev[1] = (struct sch_ev){ .place = 0, .action = 0, .opcode = -1, .t_ms = 200,
				    .len_ms = 100 };
	EXPECT(sch_rule(&sp, &in.ev[0], rule, sizeof(rule)) == 0 && !strcmp(rule, "freeze"));
	sch_text(&sp, &in, text, sizeof(text));
	EXPECT_MSG(!strcmp(text, "node1: freeze 400ms at 350ms; node0: freeze 100ms at 200ms"),
		   "%s", text);
	/* shrinking: the other event goes, the window halves while it breaks
	 * (400 -> 200 breaks, 100 does not): one freeze of 200 ms */
	EXPECT(sch_shrink(&sp, &in, node_oracle, arg, &out) == 0);
	EXPECT(out.n == 1 && out.ev[0].place == 1);
	EXPECT_MSG(out.ev[0].len_ms == 200, "%u ms at %u ms", out.ev[0].len_ms, out.ev[0].t_ms);
	/* a reboot is one instant: shrinking leaves it as it is (two calls to
	 * leave each event out in turn, none to narrow it) */
	in.ev[0] = (struct sch_ev){ .place = 0, .action = 1, .opcode = -1, .t_ms = 300 };
	in.ev[1] = (struct sch_ev){ .place = 1, .action = 0, .opcode = -1, .t_ms = 200,
				    .len_ms = 100 };
	calls = 0;
	EXPECT(sch_shrink(&sp, &in, node_oracle, arg, &out) == 0);
	EXPECT(out.n == 1 && sch_node_event(&sp, &out.ev[0]) == PEV_REBOOT &&
	       out.ev[0].t_ms == 300 && out.ev[0].tx == 0);
	EXPECT_MSG(calls == 2, "%d calls", calls);
	sch_text(&sp, &out, text, sizeof(text));
	EXPECT_MSG(!strcmp(text, "node0: reboot at 300ms"), "%s", text);
	/* guided's first: at each place's node, the longest window half way */
	n = sch_seeds(&sp, &(struct sch_map){ 0 }, seeds, 16);
	EXPECT_MSG(n == 4, "%d seeds", n);
	for (i = 0; i < n; i++) {
		int ev = sch_node_event(&sp, &seeds[i].ev[0]);

		EXPECT(seeds[i].n == 1 && seeds[i].ev[0].t_ms == 350 &&
		       seeds[i].ev[0].len_ms == (ev == PEV_FREEZE ? 400u : 0u));
	}
}

static void test_seeds_last_first(void)
{
	struct prof_search sp = space();
	struct sch_map m = { .n = 2 };
	struct sched s[64];
	char rule[160];
	int n;

	m.f[0] = (struct sch_flow){ 1, 1, 40, 4, SCH_REQUESTS };	/* data: 10 messages of 4 */
	m.f[1] = (struct sch_flow){ 0, 1, 10, 1, SCH_RESPONSES };	/* its ACKs */
	n = sch_seeds(&sp, &m, s, 64);
	EXPECT(n >= 6);
	/* each flow's last packet first */
	EXPECT(s[0].n == 1 && s[0].ev[0].place == 1 && s[0].ev[0].lo == 39 &&
	       s[0].ev[0].kind == SCH_REQUESTS);
	EXPECT(s[1].n == 1 && s[1].ev[0].place == 0 && s[1].ev[0].lo == 9 &&
	       s[1].ev[0].kind == SCH_RESPONSES);
	/* then the first message's last (3) and the first packet */
	EXPECT(s[2].ev[0].lo == 3 && s[3].ev[0].lo == 0);
	EXPECT(sch_rule(&sp, &s[0].ev[0], rule, sizeof(rule)) == 0);
	EXPECT_MSG(!strcmp(rule, "qp 1 requests rpsn 39 tx 1 drop"), "%s", rule);
	EXPECT(sch_rule(&sp, &s[1].ev[0], rule, sizeof(rule)) == 0);
	EXPECT_MSG(!strcmp(rule, "qp 1 responses rpsn 9 tx 1 drop"), "%s", rule);
	/* a space that names no transmission: every one (tx any) */
	sp.tx_lo = sp.tx_hi = 0;
	n = sch_seeds(&sp, &m, s, 64);
	EXPECT(n >= 6 && s[0].ev[0].tx == 0);
	EXPECT(sch_rule(&sp, &s[0].ev[0], rule, sizeof(rule)) == 0);
	EXPECT_MSG(!strcmp(rule, "qp 1 requests rpsn 39 drop"), "%s", rule);
	/* a space that stops at PSN 20: no seed past it */
	sp.rpsn_hi = 20;
	n = sch_seeds(&sp, &m, s, 64);
	for (int i = 0; i < n; i++)
		EXPECT(s[i].ev[0].hi <= 20);
}

static void test_neighbours(void)
{
	struct prof_search sp = space();
	struct sch_map m = { .n = 1 };
	struct sched s = { .n = 1 }, extra = { .n = 1 }, out[32];
	int n, found_next = 0, found_other = 0, found_two = 0;

	m.f[0] = (struct sch_flow){ 1, 1, 40, 4, SCH_REQUESTS };
	s.ev[0] = (struct sch_ev){ 1, 0, -1, 1, 38, 38, 1, SCH_REQUESTS };
	extra.ev[0] = (struct sch_ev){ 0, 0, -1, 1, 5, 5, 1 };
	n = sch_neighbours(&sp, &m, &s, &extra, 1, out, 32);
	for (int i = 0; i < n; i++) {
		found_next += out[i].n == 1 && out[i].ev[0].lo == 39;
		found_other += out[i].n == 1 && out[i].ev[0].place == 0 && out[i].ev[0].lo == 38;
		found_two += out[i].n == 2;
		EXPECT(out[i].n == 2 || out[i].ev[0].hi < 40);	/* never past the flow */
	}
	EXPECT(found_next == 1 && found_other == 1 && found_two == 1);
}

int main(void)
{
	test_shrink_to_one_packet();
	test_shrink_stops();
	test_random_in_space();
	test_random_in_flows();
	test_flap();
	test_node_faults();
	test_seeds_last_first();
	test_neighbours();
	return expect_done("test_ctl_search");
}
