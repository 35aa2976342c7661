/* SPDX-License-Identifier: MIT */
/*
 * The live model of a running experiment: what the TUI draws and what
 * `rdmactl run` prints as its live line. The control loop fills it (the
 * agents' streamed intervals, each finished round through the same arm_acc
 * the report is built from, the injector's counters, events); viewers take
 * the lock and read. No curses here: the TUI cannot show a number the
 * report does not have.
 */
#ifndef RTB_MODEL_H
#define RTB_MODEL_H

#include <pthread.h>
#include <stdint.h>
#include <jansson.h>
#include "ctl/exp/exp.h"
#include "ctl/report/report.h"
#include "injector/inj.h"

#define MODEL_SPARK 120		/* intervals of history per arm (30 s at 250 ms) */
#define MODEL_EVENTS 64
#define MODEL_RULES 64

struct model_arm {
	char name[32], mode[16];
	struct arm_acc acc;	/* finished rounds: the report's numbers */
	uint64_t live_done;	/* iterations of the round in flight (rank 0) */
	double last_p50_ms, last_p99_ms, last_max_ms;	/* the latest interval */
	double last_lost;	/* lost fraction of the latest interval, -1: not a lossy arm */
	uint64_t live_lost0, live_exp0;	/* cumulative counters at the last interval */
	double spark[MODEL_SPARK];	/* p50 per interval, ms */
	int nspark;
	double lspark[MODEL_SPARK];	/* lossy arms: lost fraction per interval */
	int nlspark;
	/* the first arm's p99 over this one's with its 95% bootstrap interval,
	 * for the step counts it was computed at (model_vs_first) */
	double vs_ratio, vs_lo, vs_hi;
	uint64_t vs_n0, vs_n;
	/* train */
	double accuracy, loss;
	int64_t tta_ns;
	int running;
	/* exec: its tools' figures (parse:) over the finished rounds, {} until then */
	json_t *tools;
};

struct model_rule {
	int id, enabled;
	char dev[16], dir[8], action[16], rule[128];
	struct inj_rule parsed;	/* rule, held parsed by rdma-inject's grammar */
	int parsed_ok;		/* 0: the text did not parse (a newer rdma-inject's) */
	uint64_t matched, dropped, delayed, dropped_prev;
	double drop_rate;	/* dropped per matched packet over the last poll */
	double matched_ps, dropped_ps;	/* packets a second over the last poll */
	double t_poll;		/* when the counters were read (rtb_now_s) */
};

struct model_node {
	char name[16], dev[16], state[16];
	int agent_ok;
};

struct model {
	pthread_mutex_t lock;
	const struct profile *p;
	enum measure measure;	/* what the arms count */
	int narms, cur_arm;
	uint64_t round, rounds, iters_per_round;
	struct model_arm arm[PROF_MAX_ARMS];
	int nrules;
	struct model_rule rule[MODEL_RULES];
	int nnodes;
	struct model_node node[16];
	char events[MODEL_EVENTS][160];
	int nevents;		/* total ever; the last MODEL_EVENTS are kept */
	double t_start, elapsed;	/* elapsed: as published (attached viewers) */
	int paused, done;
	char status[64];
	char name[64];		/* the profile's */
	int pid;		/* the process running the experiment */
};

/* text (a rule as rdma-inject lists it) into r: 0, or -EINVAL */
int model_rule_parse(const char *text, struct inj_rule *r);

/* the arms of p; measure: what they count */
void model_init(struct model *m, const struct profile *p, enum measure measure);
void model_fini(struct model *m);
void model_event(struct model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* the control loop: arm a starts round r (of rounds, iters iterations) */
void model_arm_begin(struct model *m, int a, uint64_t r, uint64_t rounds, uint64_t iters);
/* an agent's streamed intervals (rank: its index in the group) */
void model_intervals(struct model *m, int rank, const json_t *intervals, json_int_t progress);
/* a finished round of arm a: per-rank results */
void model_arm_done(struct model *m, int a, const json_t *results, uint64_t iters);
/* rdma-inject stats -j */
void model_rules(struct model *m, const json_t *stats);
/* the experiment's watcher hooks that fill m (exp.h) */
void model_obs(struct model *m, struct exp_obs *o);
/* arm a as the metric table reads it (report.h): the accumulator's summary
 * when a round finished, and "live": what only a running arm has (new
 * reference; call with m->lock held) */
json_t *model_arm_json(const struct model *m, int a);
/* every arm's p99 ratio to the first one's with its interval, recomputed
 * where an arm's finished rounds changed (call with the lock held) */
void model_vs_first(struct model *m);
/* the model as JSON, for viewers in another process (tui --attach) */
json_t *model_to_json(struct model *m);
/* a published model into m (initialised, empty); 0 or -EPROTO */
int model_from_json(struct model *m, const json_t *j);
/* publish to ctl_state_dir()/live.json (at most every 0.5 s unless force) */
void model_publish(struct model *m, int force);
void model_unpublish(void);
/* "round 2/3, lossy: p99 ... ETA" for a terminal line */
void model_status_line(struct model *m, char *buf, size_t len);

#endif
