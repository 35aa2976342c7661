/* SPDX-License-Identifier: MIT */
/*
 * The controller's side of a workload (fio's ioengine, rdma-core's
 * verbs_context_ops): one descriptor per workload kind says everything the
 * profile checker, the experiment engine, the reports and the TUI need to
 * know about it, so none of them compares workload names. The agent's side
 * (what runs on the node) is workloads/<name>.c behind struct wl_ops.
 *
 * Adding a workload: workloads/<name>.c (agent), ctl/wl/<name>.c (this
 * descriptor, `const struct wlc wlc_<name>`), one line in each registry
 * (workloads/registry.c, ctl/wl/registry.c).
 */
#ifndef RTB_CTL_WL_H
#define RTB_CTL_WL_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "ctl/report/report.h"
#include "lib/mode.h"

/* how the members of a run play the workload */
enum wlc_topo {
	WLC_GROUP,	/* every member a rank, full mesh (collective, train) */
	WLC_STAR,	/* member 1 the server, every other member a client (kv) */
	WLC_PAIR,	/* member 0 the client, member 1 the server (storage, p2p) */
};

/* an option rdmactl sets itself: a profile giving it is told why */
struct wlc_reserved {
	const char *key, *why;
};


struct wlc {
	const char *name;	/* the agent's workload of the same name */
	enum wlc_topo topo;
	enum measure measure;	/* what the report's counts count */
	const char *unit;	/* what run.iters counts, for messages */
	unsigned modes;		/* bit (1 << enum rtb_mode): modes an arm may have */
	const char *modes_why;	/* why not the others */
	int rounds;		/* arms take turns in run.rounds rounds; 0: each arm once */
	/* with rounds 0: run.rounds seeds instead, each arm once per round with
	 * its "seed" option the profile's (1 if none) plus the round, the same
	 * seed for every arm of a round (a paired comparison) */
	int seeds;
	int in_profile;		/* may be a profile's workload.type */
	/* its work is the profile's roles (workload.roles: commands on the
	 * nodes), its arms are variants of them (vars:, env:), not modes; the
	 * engine runs its rounds with the commands runner (ctl/exp/exec.c),
	 * not through the agents' arms */
	int roles;
	const struct wlc_reserved *reserved;	/* { NULL } terminated */
	/* the arm's run options: o holds the profile's and the arm's options */
	void (*arm_opts)(json_t *o, const char *mode, uint64_t iters, uint64_t warmup,
			 int members);
	/* STAR/PAIR: results (clients, then the server) made to look like a
	 * group's: every client gets "time_ns", the first "wrong"; that count */
	uint64_t (*fold)(json_t *results);
	/* each round's measured iterations are rank 0's "iters" (else 0: the
	 * accumulator counts only the members' time histograms) */
	int timed_iters;
	/* the workload's keys of a report arm, from the accumulator of its
	 * rounds (filled by wlc_report_arm) and the rounds themselves */
	json_t *(*arm_json)(const struct arm_acc *a, const json_t *rounds);
};

/* the registry (registry.c): by exact name, NULL if none */
const struct wlc *wlc_find(const char *name);
/* i-th descriptor, NULL past the end */
const struct wlc *wlc_at(int i);
/* "a|b|c": the names of the workloads a profile may have */
void wlc_profile_names(char *buf, size_t len);

/* a recovery mode by exact name, -1 if none */
int wlc_mode(const char *name);
/* "rc,lossy,..." into modes[] (names from lib/mode.h), at most max: the
 * count, or -EINVAL with the message in err */
int wlc_modes_parse(const char *list, const char **modes, int max, char *err, size_t errlen);

/* the options rdmactl sets on every workload's arms, first in each
 * descriptor's reserved list */
#define WLC_RESERVED_RANKS                                                                         \
	{ "rank", "set by rdmactl" }, { "nranks", "set by rdmactl" },                              \
	{ "mode", "set per arm (arms: - mode: ...)" }
#define WLC_RESERVED_RUN                                                                           \
	WLC_RESERVED_RANKS, { "iters", "set in run: (run.iters)" },                                \
	{ "warmup", "set in run: (run.warmup)" }

/* what several descriptors share (common.c) */
void wlc_opts_mode_iters(json_t *o, const char *mode, uint64_t iters, uint64_t warmup,
			 int members);
/* STAR/PAIR folding: "time_ns" of the clients from their kinds' histograms
 * (kinds: NULL-terminated, "<kind>_lat_ns"), "wrong" of the first client
 * from their "mismatches" plus extra */
uint64_t wlc_fold_clients(json_t *results, const char *const *kinds, uint64_t extra);
/* the report arm of one arm's rounds (arrays of per-member results): every
 * round accumulated once, the descriptor's keys, the keys every arm has */
json_t *wlc_report_arm(const struct wlc *d, const char *name, const char *mode,
		       const json_t *rounds);

#endif
