// SPDX-License-Identifier: MIT
/*
 * rdmactl doctor: a health sweep over a fleet's nodes (ctl/doctor/): each
 * node's facts, rounds of pairs that cover every node in O(n), the nodes
 * and links that stand out, the bisection; a table, JSON, and with -o DIR
 * doctor.json and doctor.html. Exit 1 when something is named.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctl/agent/agent.h"
#include "ctl/cmd/cmds.h"
#include "ctl/doctor/sweep.h"
#include "ctl/exp/exp.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/num.h"
#include "lib/proto.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmactl [-j] doctor [--nodes A,B,...] [--rounds K] [--iters N] [--bw-iters N]\n"
		"                           [--size S] [--at-once N] [-o DIR]\n"
		"       rdmactl [-j] doctor --profile FILE [--rounds K] ...\n"
		"       rdmactl [-j] doctor --listen ADDR:PORT --token-file F (--expect N | --nodes A,B)\n"
		"                           [--wait T] [--rounds K] ...\n"
		"       rdmactl [-j] doctor --slurm [--dev DEV] [--listen ADDR:PORT] [--rounds K] ...\n"
		"  a health sweep over the testbed's nodes, a profile's hosts, or the agents that\n"
		"  join (rdma-agent --join ADDR:PORT: a cluster, a batch job's nodes): each node's\n"
		"  agent, device, port state, MTU and GID; then K rounds of pairs (every node in one\n"
		"  pair a round, a round's pairs at once): WRITE latency, bandwidth, and the packets\n"
		"  each end sent and the other received; the nodes and links that stand out from\n"
		"  the fleet; each pair named for itself alone, bisected (each end against two well\n"
		"  nodes)\n"
		"  --nodes A,B,...   these nodes (default: all of the testbed's; joined: their names)\n"
		"  --profile FILE    the hosts: of a profile (agents by address, over ssh, or joined)\n"
		"  --listen ADDR:PORT, --token-file F, --expect N, --wait T (default 60s): listen\n"
		"                    for the agents that join, as rdmactl serve does; at most %d\n"
		"  --slurm           inside a Slurm allocation: its nodes, an agent on each started\n"
		"                    by srun (each on its first ACTIVE device, or --dev's), joining\n"
		"                    this host (--listen: ADDR:PORT they reach it at)\n"
		"  --rounds K        partners per node (default %d; 0: all pairs, n - 1 rounds)\n"
		"  --iters N         latency round trips a pair (default 5000)\n"
		"  --bw-iters N      bandwidth messages a pair (default 200)\n"
		"  --size S          bandwidth message size (default 64k)\n"
		"  --at-once N       pairs of a round run at once (default: all of them; on a\n"
		"                    testbed of one shared kernel 1: its nodes share its CPUs)\n"
		"  -o DIR            doctor.json and doctor.html (the pairs' heat map) in DIR\n"
		"  exit 0: nothing named; 1: something named; 2: bad usage\n",
		DOC_MAX, DOC_ROUNDS);
}

/* the command line's words that are not the sweep's own */
struct dopts {
	const char *nodes, *outdir, *listen, *token_file, *expect_s, *wait_s, *profile, *dev;
	uint64_t expect, wait_ns;
	int slurm;
	struct slurm_agents sa;	/* --slurm: the step of agents */
};

static int parse(struct doc *dc, int argc, char **argv, struct dopts *o)
{
	const char *rounds = NULL, *iters = NULL, *bw = NULL, *at = NULL;
	uint64_t k, at_once = 0;

	for (int i = 0; i < argc; i++) {
		const char **dst = !strcmp(argv[i], "--nodes") ? &o->nodes :
				   !strcmp(argv[i], "--profile") ? &o->profile :
				   !strcmp(argv[i], "--listen") ? &o->listen :
				   !strcmp(argv[i], "--token-file") ? &o->token_file :
				   !strcmp(argv[i], "--expect") ? &o->expect_s :
				   !strcmp(argv[i], "--wait") ? &o->wait_s :
				   !strcmp(argv[i], "--rounds") ? &rounds :
				   !strcmp(argv[i], "--iters") ? &iters :
				   !strcmp(argv[i], "--bw-iters") ? &bw :
				   !strcmp(argv[i], "--size") ? &dc->size :
				   !strcmp(argv[i], "--at-once") ? &at :
				   !strcmp(argv[i], "-o") ? &o->outdir : NULL;

		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return CTL_HELP;
		}
		if (!strcmp(argv[i], "--slurm")) {
			o->slurm = 1;
			continue;
		}
		if (!strcmp(argv[i], "--dev"))
			dst = &o->dev;
		if (!dst) {
			log_err("doctor: unknown option '%s'", argv[i]);
			usage(stderr);
			return CTL_USAGE;
		}
		if (i + 1 >= argc) {
			log_err("doctor: %s needs a value", argv[i]);
			return CTL_USAGE;
		}
		*dst = argv[++i];
	}
	const struct {
		const char *name, *v;
		uint64_t min, max, *dst;
	} nums[] = { { "rounds", rounds, 0, DOC_MAX - 1, &k },
		     { "iters", iters, 10, 10000000, &dc->iters },
		     { "bw-iters", bw, 1, 10000000, &dc->bw_iters },
		     { "at-once", at, 0, DOC_MAX / 2, &at_once },
		     { "expect", o->expect_s, 2, DOC_MAX, &o->expect } };
	uint64_t sz;
	const char *why;

	k = (uint64_t)dc->k;
	for (size_t j = 0; j < sizeof(nums) / sizeof(nums[0]); j++)
		if (nums[j].v && num_parse(nums[j].v, NUM_PLAIN, nums[j].min, nums[j].max,
					   nums[j].dst, &why)) {
			log_err("doctor: --%s '%s': %s (%llu..%llu)", nums[j].name, nums[j].v, why,
				(unsigned long long)nums[j].min, (unsigned long long)nums[j].max);
			return CTL_USAGE;
		}
	dc->k = (int)k;
	dc->at_once = at ? (int)at_once : -1;
	if (num_parse(dc->size, NUM_SIZE, 1, 1 << 20, &sz, &why)) {
		log_err("doctor: --size '%s': %s (1..1M)", dc->size, why);
		return CTL_USAGE;
	}
	o->wait_ns = 60000000000ULL;
	if (o->wait_s && num_parse(o->wait_s, NUM_TIME, 1000000000ULL, 86400000000000ULL, &o->wait_ns,
				   &why)) {
		log_err("doctor: --wait '%s': %s (1s..24h)", o->wait_s, why);
		return CTL_USAGE;
	}
	if (o->slurm && (o->profile || o->token_file || o->nodes || o->expect_s)) {
		log_err("doctor: --slurm takes the allocation's nodes and makes the token: no "
			"--profile, --token-file, --nodes or --expect with it");
		return CTL_USAGE;
	}
	if (o->dev && !o->slurm) {
		log_err("doctor: --dev only with --slurm");
		return CTL_USAGE;
	}
	if (o->slurm)
		return 0;
	if (o->profile && (o->listen || o->nodes)) {
		log_err("doctor: --profile names its own hosts: no --listen or --nodes with it");
		return CTL_USAGE;
	}
	/* joined: where, the token, and whom to wait for, or none of it */
	if (!o->listen != !o->token_file || (o->listen && !o->nodes == !o->expect_s) ||
	    (!o->listen && (o->expect_s || o->wait_s))) {
		log_err("doctor: --listen and --token-file go together, with --expect N or --nodes; "
			"--expect and --wait only with them");
		return CTL_USAGE;
	}
	return 0;
}

/* the n joined agents as the sweep's nodes, each reached through one of
 * its parked connections */
static void joined_nodes(struct doc *dc, char (*names)[32], int n)
{
	struct tb_state *s = &dc->tb;
	char peer[64];

	s->nodes = n;
	for (int i = 0; i < n; i++) {
		snprintf(s->node[i].name, sizeof(s->node[i].name), "%s", names[i]);
		snprintf(s->node[i].host, sizeof(s->node[i].host), "%s", JOIN_HOST);
		if (join_info(names[i], peer, sizeof(peer), s->node[i].dev, sizeof(s->node[i].dev)))
			snprintf(s->node[i].dev, sizeof(s->node[i].dev), "-");
		dc->d[dc->n++].tb = i;
	}
}

/* the agents that join: a state of hosts, each reached through one of
 * its parked connections. 0, or CTL_USAGE / CTL_FAIL (said) */
static int join_state(struct doc *dc, const struct dopts *o)
{
	char names[DOC_MAX][32], err[512];
	struct tb_state *s = &dc->tb;
	int n;

	memset(s, 0, sizeof(*s));
	s->backend = TB_HOSTS;
	snprintf(s->accel, sizeof(s->accel), "-");
	if (agentc_token_load(o->token_file, s->token, sizeof(s->token)))
		return CTL_USAGE;
	if (join_listen(o->listen, s->token, err, sizeof(err))) {
		log_err("%s", err);
		return CTL_FAIL;
	}
	if (!dc->ctl->json)
		log_info("doctor: listening on %s for %s", o->listen, o->nodes ? o->nodes : "agents");
	n = join_fleet(o->nodes, o->expect, (double)o->wait_ns / 1e9, dc->ctl->json, names, DOC_MAX);
	if (n < 0)
		return n == -EINTR ? CTL_INTERRUPTED : CTL_FAIL;
	joined_nodes(dc, names, n);
	return 0;
}

/* --slurm: the allocation's nodes, their agents started by srun and
 * joined (ctl/exp/slurm.c). 0, or CTL_USAGE / CTL_FAIL (said) */
static int slurm_state(struct doc *dc, struct dopts *o)
{
	char names[DOC_MAX][32], err[1024], dial[96], bind[96];
	const char *want[DOC_MAX];
	struct tb_state *s = &dc->tb;
	int n, i, r;

	memset(s, 0, sizeof(*s));
	s->backend = TB_HOSTS;
	snprintf(s->accel, sizeof(s->accel), "-");
	n = slurm_nodes(names, DOC_MAX, err, sizeof(err));
	if (n < 0 || (r = slurm_listen(o->listen, dial, sizeof(dial), bind, sizeof(bind), err,
				       sizeof(err)))) {
		log_err("doctor: %s", err);
		return CTL_USAGE;
	}
	if (proto_token_new(s->token, sizeof(s->token))) {
		log_err("doctor: cannot make a token: no random bytes from the kernel");
		return CTL_FAIL;
	}
	if (join_listen(bind, s->token, err, sizeof(err))) {
		log_err("%s", err);
		return CTL_FAIL;
	}
	if (!dc->ctl->json)
		log_info("doctor: starting %d agents with srun (job %s), joining %s", n,
			 getenv("SLURM_JOB_ID") ?: "?", dial);
	if ((r = slurm_agents_start(&o->sa, names, n, o->dev, dial, s->token))) {
		log_err("doctor: srun: %s", strerror(-r));
		return CTL_FAIL;
	}
	for (i = 0; i < n; i++)
		want[i] = names[i];
	r = join_wait(want, n, (double)o->wait_ns / 1e9, dc->ctl->json, err, sizeof(err),
		      slurm_agents_gone, &o->sa);
	if (r) {
		log_err("%s", r == -EINTR ? "interrupted" : err);
		return r == -EINTR ? CTL_INTERRUPTED : CTL_FAIL;
	}
	joined_nodes(dc, names, n);
	return 0;
}

/* --nodes, or every node of the testbed: dc->d[].tb; 0 or CTL_USAGE */
static int pick_nodes(struct doc *dc, const char *nodes)
{
	char buf[512], *tok, *save;
	int i;

	if (!nodes) {
		for (i = 0; i < dc->tb.nodes; i++)
			dc->d[dc->n++].tb = i;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", nodes);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k = tb_node_index(&dc->tb, tok), twice = 0;

		for (i = 0; i < dc->n && k >= 0; i++)
			twice |= dc->d[i].tb == k;
		if (k < 0 || twice) {
			log_err("doctor: --nodes: %s '%s' (the testbed has node0..node%d)",
				twice ? "twice:" : "unknown node", tok, dc->tb.nodes - 1);
			return CTL_USAGE;
		}
		dc->d[dc->n++].tb = k;
	}
	return 0;
}

/* the sweep and the verdict: 0, or -errno (nothing to write) */
static int run(struct doc *dc)
{
	int r, i;

	for (i = 0; i < dc->n; i++)
		dc->d[i].c.fd = -1;
	dc->t0 = rtb_now_s();
	doc_facts(dc);
	r = dc->ni >= 2 ? doc_sweep(dc) : 0;
	if (!r && dc->ni >= 2)
		doc_judge(dc);
	dc->wall = rtb_now_s() - dc->t0;
	for (i = 0; i < dc->n; i++)
		agentc_close(&dc->d[i].c);
	return r;
}

/* a profile's hosts (agents by address, started over ssh, or joined),
 * opened as a run opens them; its faults left out: the sweep is of the
 * fleet as it is. 0, or CTL_USAGE / CTL_FAIL (said) */
static int profile_state(struct doc *dc, const char *file, struct exp *e)
{
	char *av[] = { (char *)file, NULL };
	struct exp_opts o;
	int r = exp_load(e, 1, av, &o, usage);

	if (r)
		return r;
	if (!e->p.nhosts) {
		log_err("%s: no hosts: section (on the testbed, rdmactl doctor needs no profile)",
			file);
		return CTL_USAGE;
	}
	e->p.nfaults = 0;
	o.no_report = 1;
	o.print = !dc->ctl->json;
	if (exp_open(e, dc->ctl, &o))
		return CTL_FAIL;
	dc->tb = e->g.tb;
	for (int i = 0; i < e->g.n; i++)
		dc->d[dc->n++].tb = e->g.node[i];
	return 0;
}

/* the agents let go: joined ones dial again; a profile's closed (agents it
 * started over ssh stopped) */
static void leave(struct exp *e, struct dopts *op)
{
	join_stop();
	slurm_agents_stop(&op->sa);	/* --slurm: the step ends with its agents */
	if (op->profile)
		exp_close(e);
}

static void on_signal(int sig)
{
	(void)sig;
	ctl_interrupted = 1;
}

/* the sweep and its output, Ctrl-C and SIGTERM ending its arms (each
 * destroyed on its agent) and writing nothing */
static int doctor(struct ctl *ctl, struct doc *dc, struct dopts *op);

int cmd_doctor(struct ctl *ctl, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal }, oi, ot;
	static struct doc dc;
	struct dopts op = { 0 };
	int r;

	memset(&dc, 0, sizeof(dc));
	dc.ctl = ctl;
	dc.k = DOC_ROUNDS;
	dc.size = "64k";
	dc.iters = 5000;
	dc.bw_iters = 200;
	if ((r = parse(&dc, argc, argv, &op)))
		return ctl_code(r);
	sigaction(SIGINT, &sa, &oi);
	sigaction(SIGTERM, &sa, &ot);
	r = doctor(ctl, &dc, &op);
	sigaction(SIGINT, &oi, NULL);
	sigaction(SIGTERM, &ot, NULL);
	return r;
}

static int doctor(struct ctl *ctl, struct doc *dc, struct dopts *op)
{
	static struct exp e;	/* a profile's hosts, when --profile */
	const char *outdir = op->outdir;
	json_t *o = NULL;
	int r, made = 0;

	if (op->profile) {
		r = profile_state(dc, op->profile, &e);
	} else if (op->slurm) {
		r = slurm_state(dc, op);
	} else if (op->listen) {
		r = join_state(dc, op);
	} else if ((r = tb_load_rdma(&dc->tb))) {
		log_err(r == -ENOENT ? "no testbed is up (rdmactl testbed up)" : "the testbed's state: %s",
			strerror(-r));
		r = CTL_FAIL;
	} else {
		r = pick_nodes(dc, op->nodes);
	}
	if (!r && dc->n < 2) {
		log_err("doctor: %d node: pairs need at least 2", dc->n);
		r = CTL_USAGE;
	}
	if (r) {
		leave(&e, op);
		return ctl_code(r);
	}
	/* nodes of one kernel share its CPUs: pairs at once would measure
	 * their contention, not the nodes */
	if (dc->at_once < 0) {
		dc->at_once = tb_per_node(&dc->tb) || dc->tb.backend == TB_HOSTS ? 0 : 1;
		if (dc->at_once && !ctl->json)
			log_info("doctor: the testbed's nodes share one kernel and its CPUs: a round's "
				 "pairs run one after another (--at-once N to change)");
	}
	/* the directory first: a sweep is not run for nothing */
	if (outdir && !(made = !mkdir(outdir, 0755)) && errno != EEXIST) {
		log_err("%s: %s", outdir, strerror(errno));
		leave(&e, op);
		return CTL_FAIL;
	}
	dc->pairs = json_array();
	dc->rounds = json_array();
	dc->bisect = json_array();
	r = run(dc);
	leave(&e, op);	/* joined agents dial again, for the next */
	if (!r && !(o = doc_json(dc)))
		r = -ENOMEM;
	json_decref(dc->pairs);
	json_decref(dc->rounds);
	json_decref(dc->bisect);
	if (r) {
		log_err("doctor: %s: nothing written", r == -EINTR ? "interrupted" :
			r == -ENOMEM ? strerror(ENOMEM) : "the sweep could not run");
		if (made)
			rmdir(outdir);
		return r == -EINTR ? CTL_INTERRUPTED : CTL_FAIL;
	}
	if (outdir && doc_write(outdir, dc, o))
		r = -EIO;
	if (ctl->json) {
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		printf("\n");
	} else {
		doc_print(dc, o);
	}
	json_decref(o);
	return r ? CTL_FAIL : dc->named ? CTL_FAIL : CTL_OK;
}
