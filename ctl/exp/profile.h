/* SPDX-License-Identifier: MIT */
/*
 * Experiment profiles (YAML, `version: 1`; every key in profiles/README.md):
 * loaded with libyaml, checked key by key with `file:line:col` errors and
 * "did you mean", numbers with units and ranges, workload options against
 * the workload's own option table, fault rules against rdma-inject's
 * grammar.
 */
#ifndef RTB_PROFILE_H
#define RTB_PROFILE_H

#include <limits.h>
#include <stdint.h>
#include <jansson.h>

#define PROF_MAX_ARMS 6
#define PROF_MAX_FAULTS 32
#define PROF_MAX_SETS 32
#define PROF_MAX_EXPECT 32

/* a node fault of the timeline (per-node VMs): what happens to the node */
enum prof_event { PEV_NONE, PEV_CRASH, PEV_FREEZE, PEV_REBOOT, PEV_PORT_DOWN, PEV_NIC_RESET };
extern const char *const prof_event_names[];	/* "", "crash", ... */

struct prof_fault {
	char name[32];
	char rule[256];		/* rdma-inject rule text (match, action, select); an event: its name */
	int event;		/* an enum prof_event: PEV_NONE a packet rule */
	uint32_t nodes;		/* bit i: node i; all bits: every node */
	int egress;		/* 0: ingress */
	int sw;			/* the switch port toward the node (sw_i), else its NIC (n_i) */
	uint64_t start_ns, duration_ns;	/* from the start of the measured phase; 0: to the end */
	int from_traffic;	/* an event: start counted from the first RoCE packet the
				 * node sends (its switch port's hook), not from the rules */
};

/* a host of the profile's own (instead of a testbed): a running rdma-agent,
 * or one rdmactl starts over ssh */
struct prof_host {
	char name[32];
	char addr[64];		/* the agent's control address */
	int port;
	char nic[16], sw[16];	/* interfaces for faults: port nic / port switch */
	int swi;		/* sw is a port of switch host swi (hosts.switches), -1: this host's */
	char swname[32];	/* switch: SWITCH:PORT's SWITCH ("": unsaid) */
	char ssh[128];		/* ssh: the destination ([user@]host or a Host alias) */
	char dev[32];		/* ssh: the agent's RDMA device */
	int aport;		/* ssh: the agent's port on the remote loopback */
};

#define PROF_MAX_HOSTS 16
#define PROF_MAX_SWITCHES 4
#define PROF_MAX_SWITCH_PORTS 16

/* a switch host (hosts.switches): a Linux box in the path that forwards
 * between its ports in XDP (rdma-inject forward) while the run lasts; the
 * switch-port faults of the nodes cabled to it go there */
struct prof_switch {
	char name[32];
	char ssh[128];		/* hosts.ssh: the destination */
	int aport;		/* hosts.ssh: its agent's port on the remote loopback */
	char addr[64];		/* else: its running agent (rdma-agent --no-rdma), HOST:PORT */
	int port;
	int nports;
	char ports[PROF_MAX_SWITCH_PORTS][16];
};

#define PROF_MAX_SSH_OPTS 8

/* hosts.join: the agents dial rdmactl (rdma-agent --join), no inbound port */
struct prof_join {
	int on;
	char listen[96];	/* ADDR:PORT rdmactl listens on */
	uint64_t wait_ns;	/* for every node's agent, at most (default 60 s) */
};

/* rdmactl run --slurm: the hosts are the allocation's first nodes, their
 * agents started in a job step (ctl/exp/slurm.c) that dial rdmactl */
struct prof_slurm {
	int want;		/* hosts.slurm: the nodes come from the allocation at run time */
	char listen[96];	/* hosts.slurm.listen ("": --listen's, or this host's) */
	int on;			/* adopted: host[] holds the allocation's first nodes */
	char dev[32];		/* --dev: every agent's device ("": each picks its own) */
	char dial[96];		/* ADDR:PORT the agents dial */
	int nalloc;		/* the allocation's nodes */
};

/* hosts.ssh: how rdmactl starts the agents */
struct prof_ssh {
	int on;
	char config[PATH_MAX];	/* ssh -F (optional), as the profile names it */
	/* what ssh reads instead: the config as checked, in a sealed memfd
	 * ("/proc/PID/fd/N"), so the file cannot change between check and use */
	char config_arg[32];
	int config_fd;
	char agent[128];	/* the remote agent command (default rdma-agent) */
	int nopts;
	char opt[PROF_MAX_SSH_OPTS][128];	/* ssh -o OPTION */
};

/* an expectation (ctl/exp/expect.h): "[ARM:] METRIC OP VALUE" */
struct prof_expect {
	char text[128];		/* as written, spaces trimmed */
	char arm[32];		/* "": every arm */
	char role[32];		/* exec: "" every role, else the role's name (arm "") */
	int metric;		/* index into the metric table (report_metrics, MW_EXPECT) */
	int op;			/* EX_LT, ... (expect.c) */
	double value;		/* in the metric's raw unit: ns, a fraction, a count, B/s */
};

#define PROF_MAX_ROLES 8
#define PROF_CMD_MAX 2048

/* how rdmactl knows a role has started before it starts the next */
enum prof_ready { PR_NONE, PR_PORT, PR_LINE, PR_AFTER };

/* an exec workload's role: one command on each of its nodes */
struct prof_role {
	char name[32];
	uint32_t nodes;		/* bit i: node i */
	char cmd[PROF_CMD_MAX];	/* for sh -c, placeholders unexpanded (tpl.h) */
	json_t *env;		/* NAME: value (placeholders unexpanded) */
	int ready;		/* enum prof_ready */
	int ready_port;
	char ready_line[256];	/* POSIX extended regex, on stdout and stderr */
	uint64_t ready_after_ns, ready_timeout_ns, timeout_ns;
	int service;		/* stopped by rdmactl once every other role has ended */
	int parse;		/* enum tool_kind: what its stdout is (ctl/wl/tool.h) */
	int on_timeout;		/* enum prof_on_timeout: its nodes rebooted after its timeout? */
};

/* a role's on_timeout: reboot on per-node VMs (auto), always, never */
enum prof_on_timeout { PR_OT_AUTO, PR_OT_REBOOT, PR_OT_KEEP };

struct prof_arm {
	char name[32];
	char mode[16];
	json_t *opts;		/* workload options of this arm (strings); exec: {vars, env} */
	int wrong_expected;	/* run to show wrong results: its failed verification does not
				 * fail the run (its expectations judge it) */
};


/* search: the fault space rdmactl search draws schedules from (ctl/search/) */
#define PROF_MAX_PLACES 16
#define PROF_MAX_ACTIONS 8

struct prof_place {
	int node;		/* one node (or host) */
	int egress, sw;		/* its direction, and its NIC or its switch port */
};

enum prof_strategy { PS_GUIDED, PS_RANDOM };

struct prof_search {
	int on;
	int nplaces;
	struct prof_place place[PROF_MAX_PLACES];
	int nactions;
	char action[PROF_MAX_ACTIONS][64];	/* rdma-inject actions: "drop", "delay 20ms" */
	uint32_t opcodes;	/* bit c: opcode class c may be named (inj_class_name); 0: none */
	uint32_t qp_lo, qp_hi;	/* the hook's Nth QP (qp N); 0-0: any QP */
	uint32_t rpsn_lo, rpsn_hi;	/* the PSN from the QP's first */
	uint32_t tx_lo, tx_hi;	/* the transmission (1: the first); 0-0: any */
	int flap;		/* actions has "flap" or a node fault: timed, no packets named */
	uint64_t time_lo_ns, time_hi_ns;	/* a window's start, from the measured phase's */
	uint64_t win_lo_ns, win_hi_ns;		/* its length */
	int max_events;		/* events in a schedule, at most */
	uint64_t trials;	/* the budget: trials (schedules run) */
	uint64_t time_ns;	/* and wall time (0: none) */
	int strategy;		/* enum prof_strategy */
	uint64_t replays;	/* runs of the minimal schedule, for the replay rate */
	uint64_t confirm;	/* runs of a schedule while shrinking (a majority decides) */
	uint64_t seed;
};

struct profile {
	char file[PATH_MAX];
	char name[64];
	char description[256];
	char backend[8];
	int topology;		/* testbed.topology: an enum tb_topology, -1 unsaid */
	int sw;			/* testbed.switch: 1 xdp, 0 bridge, -1 unsaid */
	int nodes, mtu;
	int nhosts;		/* > 0: hosts instead of a testbed */
	struct prof_host host[PROF_MAX_HOSTS];
	int nswitches;
	struct prof_switch swh[PROF_MAX_SWITCHES];
	char token_file[PATH_MAX];
	struct prof_join join;
	struct prof_slurm slurm;
	struct prof_ssh ssh;
	char workload[16];	/* collective | train | kv | storage */
	json_t *wopts;		/* the workload's options (strings, as in the file); exec: {vars, env} */
	int nroles;		/* exec */
	struct prof_role role[PROF_MAX_ROLES];
	int narms;
	struct prof_arm arm[PROF_MAX_ARMS];
	int trace;		/* trace: or --trace: every round's packets (ctl/exp/trace.c) */
	unsigned trace_snaplen;
	uint64_t iters, rounds, warmup;	/* collective, kv (ops per client), storage (I/Os) */
	int nfaults;
	struct prof_fault fault[PROF_MAX_FAULTS];
	int nexpect;
	struct prof_expect expect[PROF_MAX_EXPECT];
	struct prof_search search;
	char outdir[PATH_MAX];	/* "" = runs/NAME-TIMESTAMP */
	char *text;		/* the file as read */
	json_t *sets;		/* the --set overrides applied */
};

/* an empty profile of workload (NULL: none yet) with the defaults of a
 * file's: what the per-workload commands fill and run; nodes 0 = every
 * node of the running testbed */
void profile_init(struct profile *p, const char *workload);
/* one more arm (opts stolen; NULL: none): 0 or -E2BIG */
int profile_add_arm(struct profile *p, const char *name, const char *mode, json_t *opts);
/* load and check (load.c); on error a message "file:line:col: ..." in err
 * and -EINVAL (-ENOENT, -EIO: the file) */
int profile_load(struct profile *p, const char *file, const char *const *sets, int nsets, char *err,
		 size_t errlen);
void profile_free(struct profile *p);
/* the profile as JSON (what was run, for the report) */
json_t *profile_to_json(const struct profile *p);

#endif
