/* SPDX-License-Identifier: MIT */
/*
 * The search room: rdmactl search, the smallest packet-level fault
 * schedule that breaks a profile's expectations.
 *
 *   sched.c  schedules over a profile's search: space, pure: drawn at
 *            random, or guided by what a trial showed (the flows each place
 *            saw, how near the expectations came); shrunk by delta
 *            debugging against an oracle that runs them
 *   drive.c  the trials: each schedule one short run of the profile on
 *            the running testbed (ctl/exp/), its verdict, the search's log,
 *            repro.yaml and the replay rate
 */
#ifndef RTB_CTL_SEARCH_H
#define RTB_CTL_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include "ctl/exp/profile.h"

#define SCH_MAX_EV 8
#define SCH_MAX_FLOWS 64
/* a QP's two sides at a hook (rdma-inject's requests and responses): they
 * share its number, each counts its PSNs from its own first */
#define SCH_REQUESTS 1
#define SCH_RESPONSES 2

/* one event: one rule at one place, on the packets it names */
struct sch_ev {
	int place;		/* the space's where[] */
	int action;		/* its actions[] */
	int opcode;		/* an opcode class named, -1: none */
	uint32_t qp;		/* the hook's Nth QP */
	uint32_t lo, hi;	/* PSNs from that QP's first (rpsn) */
	uint32_t tx;		/* the transmission, 0: any */
	int kind;		/* the QP's side: SCH_REQUESTS, SCH_RESPONSES, 0: both */
	uint32_t t_ms, len_ms;	/* a flap, a node fault: when, from the first packet
				 * at its place (its node's, for a node fault), and how long */
};

struct sched {
	int n;
	struct sch_ev ev[SCH_MAX_EV];
};

/* what a run without faults showed at the places: each flow (one side of
 * the hook's Nth QP), how many PSNs it used, and how many packets make a
 * message */
struct sch_flow {
	int place;
	uint32_t qp;
	uint32_t extent;	/* PSNs from its first: last - first + 1 */
	uint32_t msg_pkts;	/* packets a message (1: single-packet messages) */
	int kind;		/* SCH_REQUESTS or SCH_RESPONSES */
};

struct sch_map {
	int n;
	struct sch_flow f[SCH_MAX_FLOWS];
};

/* xorshift64*: the search's own draws, from search.seed */
uint64_t sch_rand(uint64_t *state);
/* a schedule drawn uniformly from the space: 1..max_events events */
void sch_random(const struct prof_search *sp, uint64_t *rng, struct sched *out);
/* the same, each event on a flow of m (its place, QP and side, within the
 * PSNs it used): what guided draws once its seeds are spent */
void sch_random_in(const struct prof_search *sp, const struct sch_map *m, uint64_t *rng,
		   struct sched *out);
/* the guided strategy's first schedules, single events in the order they
 * are tried: per flow the packets where recovery is slowest (its last; a
 * message's last; its first), then a message's middle. How many (<= max) */
int sch_seeds(const struct prof_search *sp, const struct sch_map *m, struct sched *out, int max);
/* schedules next to s (a PSN on, one back, a message on, the same packet
 * at the other places, one event more from extra): how many (<= max) */
int sch_neighbours(const struct prof_search *sp, const struct sch_map *m, const struct sched *s,
		   const struct sched *extra, int nextra, struct sched *out, int max);
/* is e a flap: a window of 100% loss at its place, from t_ms for len_ms */
int sch_is_flap(const struct prof_search *sp, const struct sch_ev *e);
/* e's node fault (an enum prof_event: crash, freeze, reboot, port-down,
 * nic-reset on its place's node at t_ms, freeze and port-down for len_ms),
 * 0: a packet rule or a flap */
int sch_node_event(const struct prof_search *sp, const struct sch_ev *e);
/* e is timed (a flap or a node fault): t_ms, len_ms, no packets named */
int sch_timed(const struct prof_search *sp, const struct sch_ev *e);
/* e has a window (a flap, a freeze, a port down): len_ms */
int sch_windowed(const struct prof_search *sp, const struct sch_ev *e);
/* event e as an rdma-inject rule ("qp 1 responses rpsn 12 tx 1 drop"; a
 * flap: "drop from traffic", its window the fault's start and duration,
 * counted from the first packet at its place) */
int sch_rule(const struct prof_search *sp, const struct sch_ev *e, char *buf, size_t len);
/* s, readable: "node1 ingress: qp 1 responses rpsn 12 tx 1 drop; ..." */
void sch_text(const struct prof_search *sp, const struct sched *s, char *buf, size_t len);
int sch_equal(const struct sched *a, const struct sched *b);

/* does s still break the expectation: 1 yes, 0 no, < 0 stop (interrupted,
 * out of budget, a run that could not be made) */
typedef int sch_oracle(void *arg, const struct sched *s);
/* the smallest schedule that still breaks it (delta debugging): fewer
 * events, then each event's PSN range halved down to one packet (a flap's
 * window, down to 1 ms; a node fault without a window as it is). in must
 * break it. 0 with out set, or the oracle's < 0 (out: the smallest so far) */
int sch_shrink(const struct prof_search *sp, const struct sched *in, sch_oracle *oracle, void *arg,
	       struct sched *out);

#endif
