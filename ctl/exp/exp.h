/* SPDX-License-Identifier: MIT */
/*
 * The experiment room: a profile (profile.h) run as one experiment, in
 * steps that `rdmactl run`, the TUI and the per-workload commands share:
 *   open    the testbed (or the profile's hosts), the control connections,
 *           the fault rules (leased to those connections)
 *   measure the arms: rounds of every arm in turn (or each arm once, as the
 *           workload's descriptor says), one rounds loop for every workload
 *   finish  counters, rules removed, the report built and written (or kept
 *           for the caller), the testbed down if this run brought it up.
 * Whoever watches (the live model) is an ops table, never called by name.
 */
#ifndef RTB_CTL_EXP_H
#define RTB_CTL_EXP_H

#include <limits.h>
#include <stdio.h>
#include "ctl/exp/profile.h"
#include "ctl/session/session.h"
#include "ctl/wl/wl.h"

/* agents rdmactl started over ssh for a profile's hosts (ssh.c) */
#define SSH_MAX_AGENTS (TB_MAX_NODES + PROF_MAX_SWITCHES)
struct ssh_agents {
	int n;				/* the nodes', then the switch hosts' */
	pid_t pid[SSH_MAX_AGENTS];
	int fd[SSH_MAX_AGENTS];		/* ssh's stdin: closing it stops the agent */
	int logfd[SSH_MAX_AGENTS];	/* ssh's stderr */
	int lport[SSH_MAX_AGENTS];	/* our end of the forward */
};

/* --- slurm.c: rdmactl run --slurm */
struct slurm_agents {
	int on;			/* started: stop has something to do */
	pid_t pid;		/* srun, in its own session */
	int fd;			/* srun's stdin (every task's): closing it stops the agents */
	int logfd;		/* srun's stderr */
	int n;			/* tasks: task i on names[i] */
	char names[PROF_MAX_HOSTS][32];
};
/* the allocation's nodes (SLURM_JOB_NODELIST, as scontrol show hostnames
 * gives them): how many, or -errno with the reason in err */
int slurm_nodes(char (*names)[32], int max, char *err, size_t len);
/* a testbed profile onto the allocation: its first p->nodes nodes as hosts
 * that join at listen (NULL: this host's address, any free port). 0, or
 * -errno with the reason in err */
int slurm_adopt(struct profile *p, const char *listen, char *err, size_t len);
/* where the agents dial (dial) and rdmactl listens (bind) from --listen
 * ADDR:PORT, or NULL: this host's address and a free port. 0, or -errno
 * with the reason in err */
int slurm_listen(const char *listen, char *dial, size_t dlen, char *bind, size_t blen, char *err,
		 size_t len);
/* srun: one agent on each of the n nodes (on dev, or each its first
 * ACTIVE device), dialing dial with token. 0 or -errno */
int slurm_agents_start(struct slurm_agents *sa, char (*names)[32], int n, const char *dev,
		       const char *dial, const char *token);
/* 1 (why said) when srun has exited, else 0 (a join_wait watch) */
int slurm_agents_gone(void *arg, char *why, size_t len);
/* stdin closed (the agents stop, the step ends), srun reaped */
void slurm_agents_stop(struct slurm_agents *sa);

/* start one agent per host over ssh (and one per switch host, --no-rdma,
 * at lport[nhosts + j]), fill s (loopback ports, fresh token) */
int ssh_agents_start(struct ssh_agents *sa, const struct profile *p, struct tb_state *s);
void ssh_agents_stop(struct ssh_agents *sa);
/* "ssh [-F config] -o BatchMode=yes [-o OPTION]..." of the profile's
 * hosts.ssh into argv (at most 5 + 2 * PROF_MAX_SSH_OPTS words): how many */
int ssh_host_argv(const struct profile *p, char **argv);

/* who watches an experiment; any hook may be NULL */
struct exp_obs {
	void *arg;
	void (*event)(void *arg, const char *msg);
	/* arm a starts round r of rounds, iters iterations */
	void (*arm_begin)(void *arg, int a, uint64_t r, uint64_t rounds, uint64_t iters);
	/* the round's per-member results */
	void (*arm_done)(void *arg, int a, json_t *results, uint64_t iters);
	/* streamed intervals of member idx */
	void (*intervals)(void *arg, int idx, const json_t *intervals, json_int_t progress);
	/* nonzero: wait before the next arm */
	int (*paused)(void *arg);
};

struct exp_opts {
	const char *outdir;	/* NULL: the profile's output.dir, or runs/NAME-TIMESTAMP */
	int keep;		/* leave a testbed this run brought up running */
	int trace;		/* --trace */
	int no_reach_check;	/* --no-reach-check: faults no traffic meets allowed */
	int no_report;		/* keep the report JSON in e->report, write no directory */
	int need_testbed;	/* do not bring one up: the testbed must be running */
	const char *nodes;	/* the members ("node0,node2"); NULL: the first p.nodes */
	int print;		/* progress lines on stderr */
	int node_faults_by_hand;	/* the TUI: a node fault timeline even with no event */
	const char *junit;	/* --junit FILE: the expectations as JUnit XML */
	int quiet;		/* the report in its directory only, not on stdout (a search's trials) */
	int slurm;		/* --slurm: the nodes are the Slurm allocation's */
	const char *slurm_dev;	/* --dev (with --slurm) */
	const char *listen;	/* --listen ADDR:PORT (with --slurm) */
};

struct exp {
	struct ctl *ctl;
	struct profile p;	/* loaded by exp_load, or filled by a front-end */
	const struct wlc *wl;
	struct exp_opts o;
	struct exp_obs obs;
	int loaded, brought_up, group_open, rc, extra_rules, expect_failed;
	int arm_failed;		/* an arm could not run to its end (e->err: the first) */
	struct group g;
	struct agentc sw;	/* per-node VMs: the switch's agent (fd -1: none) */
	/* a profile's switch hosts (hosts.switches): their agents, whether the
	 * forwarder runs there, and what the report says of each */
	struct agentc swh[PROF_MAX_SWITCHES];
	int fwd_on[PROF_MAX_SWITCHES];
	json_t *switches;
	char mac[TB_MAX_NODES][24];	/* each member's RoCE netdev MAC, as its hello said */
	char inj_key[TB_MAX_NODES][96];	/* its boot id and bpffs: whose injector it shares */
	int ids[PROF_MAX_FAULTS][TB_MAX_NODES];
	json_t *faults, *rounds[PROF_MAX_ARMS];
	json_t *reach0;		/* each fault's hooks' packets before the first round */
	json_t *report;		/* after exp_finish */
	json_int_t t0;
	json_int_t t0_unix_ns;	/* the host's CLOCK_REALTIME when t0 was read */
	double t_start;
	char when[32], dir[PATH_MAX + 16], err[1024];
	/* the report directory while it is written: DIR.partial, made by us
	 * (mkdir, never an existing one) and held open; every file goes in
	 * through tmpdir, "/proc/self/fd/N" of that descriptor, so whatever is
	 * renamed or planted at the name later, nothing lands elsewhere;
	 * tmpname for messages and the final rename */
	char tmpdir[48], tmpname[PATH_MAX + 32];
	int tmpfd;
	struct ssh_agents ssh;
	struct slurm_agents slurm;
	struct exp_nodes *nf;	/* the timeline's node faults (nodefault.c), NULL: none */
	int joined;		/* hosts.join: listening for the agents (join_stop at close) */
	unsigned arm_gen[TB_MAX_NODES];	/* each node's events when the arm began */
	double arm_t;		/* when it began, on the node faults' clock */
	json_t *hits;		/* what node faults did to arms: the report's node_fault_effects */
	json_t *node_kernels;	/* each member's kernel and boot id when the run began */
	int res_member[TB_MAX_NODES + 1];	/* a run's result i is member res_member[i]'s */
	int nodes_gone;		/* a member's node is down for good: no arm runs any more */
	/* per-node VMs: each member's clock against this host's (node - host)
	 * in [clk_lo, clk_hi] ns through the arm; clk_ok 1 known (measure.c) */
	int64_t clk_lo[TB_MAX_NODES], clk_hi[TB_MAX_NODES];
	int clk_ok[TB_MAX_NODES];
	struct exp_trace *trace;	/* the round's trace, while it runs */
	json_t *captures;		/* stopped traces, not analysed yet */
	json_t *traces;			/* every analysed trace */
};

/* the round's trace (when the profile asks, trace.c): started before it
 * (0 or -errno with err), stopped after it into e->captures; every capture
 * analysed into e->traces when the report is made */
int exp_trace_start(struct exp *e, int a, uint64_t rd, char *err, size_t errlen);
void exp_trace_stop(struct exp *e);
void exp_trace_analyze(struct exp *e);
/* the report's "trace" object from e->traces, the arms' retransmissions
 * taken from it (arms: the report's), NULL when nothing was traced */
json_t *exp_trace_report(struct exp *e, json_t *arms);

/* node faults (nodefault.c): started once the rules are in (0, or -errno
 * with err); stopped at the run's end (what is frozen or cut off comes back,
 * events not reached are said); freed with the exp */
int exp_nodes_start(struct exp *e, char *err, size_t errlen);
void exp_nodes_stop(struct exp *e);
void exp_nodes_free(struct exp *e);
/* the events as they happened (new reference), NULL without node faults */
json_t *exp_nodes_report(struct exp *e);
/* each node's count of events so far (TB_MAX_NODES of them) */
void exp_nodes_gens(struct exp *e, unsigned *gen);
/* seconds since the node faults' t0 */
double exp_nodes_now(const struct exp *e);
/* wait while node is booting or frozen (or down with a reboot to come): 0 up (its agent may be reached),
 * -ENODEV down for good (why says since when and by which fault) */
int exp_nodes_wait_up(struct exp *e, int node, char *why, size_t len);
/* a node fault by hand (the TUI), on the run's timeline: event (enum
 * prof_event), or its undo (thaw, port up); 0 or -errno, what it did or
 * why not in err (the report's node_events has it too) */
int exp_nodes_act(struct exp *e, int node, int event, int undo, char *err, size_t len);

/* run's and tui's arguments: PROFILE [-o DIR] [--set k.path=v]... [--keep]
 * [--expect 'ARM: METRIC OP VALUE']... [--junit FILE] (junit: run only):
 * the profile loaded into e->p, o filled. 0; CTL_HELP after --help; CTL_USAGE
 * (message printed, nothing touched) */
int exp_load(struct exp *e, int argc, char **argv, struct exp_opts *o, void (*usage)(FILE *));
/* the options exp_load and validate read (NULL: not accepted) */
struct exp_argv {
	const char *sets[PROF_MAX_SETS], *expects[PROF_MAX_EXPECT];
	int nsets, nexpects;
	const char **out, **junit;
	int *keep;
	int *trace;
	int *no_reach;
	int *slurm;			/* --slurm, --dev DEV, --listen ADDR:PORT */
	const char **slurm_dev, **listen;
};
/* PROFILE... and the options of a: *npos (at most maxpos) files in pos */
int exp_args(int argc, char **argv, struct exp_argv *a, const char **pos, int maxpos, int *npos,
	     void (*usage)(FILE *));
/* --expect texts into p (after its own): 0, or CTL_USAGE with the message printed */
int exp_add_expects(struct profile *p, const char *const *texts, int n);

/* --- node.c: reaching the nodes */
/* argv for words run on member m's node: over the testbed VM's ssh (cfg:
 * its ssh config), directly on this host, or over ssh to the profile's
 * host (line: the buffer a remote command line, and a VM's ssh Host, are
 * built in); 0 or -E2BIG */
int exp_node_argv(struct exp *e, const char *cfg, int m, const char *const *words, char **argv,
		  char *line, size_t len);
/* argv for words run over the profile's ssh (hosts.ssh) at dest */
int exp_ssh_argv(struct exp *e, const char *dest, const char *const *words, char **argv,
		 char *line, size_t len);
/* --- switchhost.c: a profile's switch hosts. Their agents reached and
 * the forwarder started on each: 0, or -errno said */
int exp_switches_open(struct exp *e);
/* once the run's rules are gone: the ports' hook counters into
 * e->switches, each forwarder stopped */
void exp_switches_stop(struct exp *e);
/* the path of one of our tools (rdma-run, rdma-inject) on the nodes */
const char *exp_node_tool(const struct exp *e, const char *tool);
/* the run's testbed is per-node VMs (not a profile's hosts) */
int exp_per_node(const struct exp *e);
/* a progress line: to the watcher, and on stderr when printing */
void exp_event(struct exp *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* a run directory's default name: runs/NAME-YYYYmmdd-HHMMSS then suffix */
void exp_default_dir(char *buf, size_t len, const char *name, const char *suffix);
/* e->p loaded: 0 ready; CTL_USAGE (bad output directory); CTL_FAIL */
int exp_open(struct exp *e, struct ctl *ctl, const struct exp_opts *o);
int exp_measure(struct exp *e);
/* the exit code: 1 when an arm failed, the run was interrupted, or a
 * verification failed, or an expectation failed (report.json tells which) */
int exp_finish(struct exp *e);
void exp_close(struct exp *e);
/* the agent and device of fault f on member k: the switch's agent and
 * rtbswN for a switch port of per-node VMs, else member k's agent and its
 * NIC or switch port (a profile's hosts: their own names) */
/* fn for each placement of each packet fault whose agent is connected:
 * fault i on member k, that agent's stats (NULL: none), the rule's device,
 * and the fault's object in the result ({NAME: {...}}, a new object) */
typedef void exp_place_fn(struct exp *e, int i, int k, const json_t *stats, const char *dev,
			  json_t *into);
json_t *exp_faults_each(struct exp *e, exp_place_fn *fn);
/* `rdma-inject stats` of each agent cs[i] into st[i] (new references, NULL
 * where none), every injector asked at once and once: members that share
 * a kernel and bpffs (exp_open's hello said) share one answer */
void exp_stats_fetch(struct exp *e, struct agentc *const *cs, int n, json_t **st);
/* every fault rule's counters now, summed over its nodes: {NAME: {matched,
 * dropped, ...}} (a new object; rules of node faults and lost agents left out) */
json_t *exp_faults_read(struct exp *e);
/* --- reach.c: every fault must meet the run's traffic. Its hooks'
 * packets before the first round (NULL with --no-reach-check) */
void exp_reach_begin(struct exp *e);
/* after the first round: each fault's reach_packets into e->faults; a
 * fault whose hooks saw none fails the run (e->rc 1, e->err said): -EHOSTUNREACH */
int exp_reach_check(struct exp *e);
/* b - a of two exp_faults_read objects (a new object) */
json_t *exp_faults_delta(const json_t *a, const json_t *b);
struct agentc *exp_fault_at(struct exp *e, const struct prof_fault *f, int k, char *dev,
			    size_t len);
/* fault i's rule on member k's agent (exp_fault_at), its id in e->ids and
 * in e->faults' rules (added, or replaced when placed again after a node's
 * reboot); -EIO with err */
int exp_fault_place(struct exp *e, int i, int k, char *err, size_t errlen);
/* path names the directory e->tmpfd holds (lstat: a link never does) */
/* exec: a round's results' tools' figures (their parse:) merged into into,
 * the worst of each (tool_merge): what the TUI shows of an exec arm */
void exp_exec_tools(json_t *into, const json_t *res);
int exp_partial_is_ours(const struct exp *e, const char *path);

/* arm a's options for one run of iters (warm: unmeasured first) on members
 * agents: the workload's, the arm's, then what the descriptor sets (mode,
 * iterations, clients); new reference */
json_t *exp_arm_opts(const struct profile *p, const struct wlc *wl, int a, uint64_t iters,
		     uint64_t warm, int members);

/* the report JSON of the arms run so far (what exp_finish writes) */
json_t *exp_report(struct exp *e);

/* training over several seeds: the first arm's TTA over arm's, seed by
 * seed, into o ("tta_ratio", "tta_ratio_ci95", "tta_pairs"; finish.c) */
void exp_tta_pairs(const json_t *first, const json_t *arm, json_t *o);

#endif
