// SPDX-License-Identifier: MIT
/*
 * rdmactl validate / run: experiment profiles end to end.
 *
 * run: load and check the profile (exit 2 on any error, nothing touched),
 * reuse the running testbed when it fits or bring one up, open one control
 * connection per node, add the fault rules (leased to those connections:
 * if rdmactl dies, the agents remove them), run the arms -- collective:
 * `rounds` rounds of every arm in turn; train: every arm once -- then
 * gather the injector's counters, remove the rules (and the injector's
 * qdiscs once no rule is left) and write the report directory: it is built
 * as DIR.partial and renamed to DIR when complete, so DIR never holds half
 * a report. Ctrl-C stops the arm in flight and still writes what finished,
 * marked "partial": true, into DIR. Exit 0, or 1 when an arm failed, the
 * run was interrupted, or a verification failed (#wrong without loss).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "ctl.h"
#include "exp.h"
#include "model.h"
#include "profile.h"
#include "report.h"
#include "session.h"
#include "../lib/hist.h"
#include "../lib/log.h"
#include "../lib/proto.h"

static void usage_validate(FILE *f)
{
	fprintf(f, "usage: rdmactl validate PROFILE... [--set key.path=value]...\n"
		   "  checks profiles without running them; errors as file:line:col, exit 2\n");
}

static void usage_run(FILE *f)
{
	fprintf(f,
		"usage: rdmactl [-j] run PROFILE [-o DIR] [--set key.path=value]... [--keep]\n"
		"  runs the experiment and writes DIR (default runs/NAME-YYYYmmdd-HHMMSS):\n"
		"  report.json, summary.csv, ARM.hlog, report.html\n"
		"  --set a.b.0.c=v  overrides a profile key (lists by index), e.g. --set run.iters=10\n"
		"  --keep           leave a testbed this run brought up running\n");
}

/* --set pairs and the positional words */
static int split_args(int argc, char **argv, const char **sets, int *nsets, const char **pos,
		      int *npos, const char **out, int *keep, void (*usage)(FILE *))
{
	int i;

	*nsets = *npos = 0;
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 1;
		}
		if (!strcmp(argv[i], "--set") || !strcmp(argv[i], "-o")) {
			if (i + 1 >= argc) {
				log_err("%s needs a value", argv[i]);
				return 2;
			}
			if (argv[i][1] == 'o' && out)
				*out = argv[++i];
			else if (argv[i][1] == 'o') {
				log_err("unknown option '-o'");
				return 2;
			} else if (*nsets < PROF_MAX_SETS)
				sets[(*nsets)++] = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--keep") && keep) {
			*keep = 1;
			continue;
		}
		if (argv[i][0] == '-') {
			log_err("unknown option '%s'", argv[i]);
			usage(stderr);
			return 2;
		}
		pos[(*npos)++] = argv[i];
	}
	return 0;
}

int cmd_validate(struct ctl *ctl, int argc, char **argv)
{
	const char *sets[PROF_MAX_SETS], *pos[64];
	int nsets, npos, i, bad = 0, r;
	char err[1024];

	if (argc > 64 || (r = split_args(argc, argv, sets, &nsets, pos, &npos, NULL, NULL,
					   usage_validate)))
		return argc > 64 ? 2 : r == 1 ? 0 : 2;
	if (!npos) {
		usage_validate(stderr);
		return 2;
	}
	for (i = 0; i < npos; i++) {
		struct profile p;

		if (profile_load(&p, pos[i], sets, nsets, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			bad = 1;
		} else if (ctl->json) {
			json_t *o = profile_to_json(&p);

			json_object_del(o, "text");
			json_dumpf(o, stdout, JSON_INDENT(2));
			putchar('\n');
			json_decref(o);
		} else {
			printf("%s: ok (%s: %s, %d arm%s, %d fault rule%s)\n", pos[i], p.name, p.workload,
			       p.narms, p.narms == 1 ? "" : "s", p.nfaults, p.nfaults == 1 ? "" : "s");
		}
		profile_free(&p);
	}
	return bad ? 2 : 0;
}

static void on_sigint(int sig)
{
	(void)sig;
	ctl_interrupted = 1;
}

/* a testbed that fits the profile: the running one, or a new one */
static int ensure_testbed(struct ctl *ctl, const struct profile *p, int *brought_up)
{
	struct tb_state s;
	char nodes[8], mtu[8];
	char *av[] = { "up", "--nodes", nodes, "--backend", (char *)p->backend, "--mtu", mtu, NULL };

	*brought_up = 0;
	if (!tb_load(&s)) {
		if (s.nodes < p->nodes || s.mtu != p->mtu) {
			log_err("a testbed of %d nodes, MTU %d is up; the profile wants %d nodes, MTU %d "
				"('rdmactl testbed down' first)", s.nodes, s.mtu, p->nodes, p->mtu);
			return -1;
		}
		log_info("reusing the running testbed (%d nodes)", s.nodes);
		return 0;
	}
	snprintf(nodes, sizeof(nodes), "%d", p->nodes);
	snprintf(mtu, sizeof(mtu), "%d", p->mtu);
	if (cmd_testbed(ctl, 7, av))
		return -1;
	*brought_up = 1;
	return 0;
}

/* one fault rule on one node's agent, leased to that connection; its id */
static int fault_add(struct agentc *c, const struct prof_fault *f, int node,
		     const struct prof_host *hosts, char *err, size_t errlen)
{
	json_t *args = json_array(), *res = NULL;
	char dev[16], buf[256], *tok, *save, t[32];
	int id = -1, rc;

	if (hosts)	/* the host's own interface names */
		snprintf(dev, sizeof(dev), "%s", f->sw ? hosts[node].sw : hosts[node].nic);
	else
		snprintf(dev, sizeof(dev), "%s%d", f->sw ? "sw" : "n", node);
	json_array_append_new(args, json_string("add"));
	json_array_append_new(args, json_string("dev"));
	json_array_append_new(args, json_string(dev));
	json_array_append_new(args, json_string(f->egress ? "egress" : "ingress"));
	snprintf(buf, sizeof(buf), "%s", f->rule);
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
		json_array_append_new(args, json_string(tok));
	if (f->start_ns) {
		snprintf(t, sizeof(t), "%lluus", (unsigned long long)(f->start_ns / 1000));
		json_array_append_new(args, json_string("after"));
		json_array_append_new(args, json_string(t));
	}
	if (f->duration_ns) {
		snprintf(t, sizeof(t), "%lluus", (unsigned long long)(f->duration_ns / 1000));
		json_array_append_new(args, json_string("for"));
		json_array_append_new(args, json_string(t));
	}
	if (agentc_call(c, "inject", json_pack("{s:o,s:b}", "args", args, "lease", 1), &res, 90000,
			err, errlen))
		return -1;
	rc = (int)json_integer_value(json_object_get(res, "rc"));
	if (rc) {	/* the agent says how rdma-inject ended when it printed nothing */
		const char *e = json_string_value(json_object_get(res, "stderr")) ?: "";

		snprintf(err, errlen, "%s: rdma-inject add %s: %.*s", c->where, dev,
			 (int)strcspn(e, "\n"), e);
	}
	else
		id = atoi(json_string_value(json_object_get(res, "stdout")));
	json_decref(res);
	return rc ? -1 : id;
}

/* rdma-inject on one agent, -j, its JSON output (new reference) or NULL */
static json_t *inject_json(struct agentc *c, const char *verb, const char *arg)
{
	json_t *res = NULL, *out = NULL;
	char err[256];

	if (!agentc_call(c, "inject",
			 json_pack("{s:[sss*]}", "args", "-j", verb, arg), &res, 90000, err,
			 sizeof(err)) &&
	    !json_integer_value(json_object_get(res, "rc")))
		out = json_loads(json_string_value(json_object_get(res, "stdout")), 0, NULL);
	json_decref(res);
	return out;
}

/* the node's CLOCK_MONOTONIC (interval timestamps are in it) */
static json_int_t node_now(struct agentc *c)
{
	json_t *res = NULL;
	json_int_t t = 0;
	char err[256];

	if (!agentc_call(c, "hello", NULL, &res, 10000, err, sizeof(err)))
		t = json_integer_value(json_object_get(res, "now_ns"));
	json_decref(res);
	return t;
}

static void iso_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* the arm's options for one run: workload, arm, mode, iterations (collective:
 * steps; kv: operations per client, clients; storage: I/Os) */
static json_t *arm_opts(const struct profile *p, int a, uint64_t iters, uint64_t warm, int nodes)
{
	json_t *o = json_deep_copy(p->wopts);

	json_object_update(o, p->arm[a].opts);
	if (!strcmp(p->workload, "kv")) {
		json_object_set_new(o, "ops", json_integer((json_int_t)iters));
		json_object_set_new(o, "clients", json_integer(nodes - 1));
		return o;
	}
	if (!strcmp(p->workload, "storage")) {
		json_object_set_new(o, "iters", json_integer((json_int_t)iters));
		return o;
	}
	json_object_set_new(o, "mode", json_string(p->arm[a].mode));
	if (!strcmp(p->workload, "collective")) {
		json_object_set_new(o, "iters", json_integer((json_int_t)iters));
		json_object_set_new(o, "warmup", json_integer((json_int_t)warm));
	}
	return o;
}

/* one arm's run on the group: every member a rank (collective, train), or
 * member 1 the server and the others its clients (kv), or member 0 the
 * initiator and member 1 the target (storage) */
static int exp_group_run(struct group *g, const char *wl, json_t *o, json_t **res, char *err,
			 size_t errlen)
{
	struct agentc *cli[TB_MAX_NODES];
	int i, n = 0;

	if (!report_ops(wl))
		return group_run(g, wl, o, res, err, errlen);
	for (i = 0; i < g->n; i++)
		if (i != 1 && (n == 0 || !strcmp(wl, "kv")))
			cli[n++] = &g->c[i];
	if (star_run(&g->c[1], cli, n, wl, o, !strcmp(wl, "kv"), res, err, errlen))
		return -1;
	star_results_fold(wl, *res);
	return 0;
}

/* the report directory: -o, the profile's, or runs/NAME-TIMESTAMP; 2 if it exists */
static int pick_dir(struct exp *e, const char *outarg)
{
	if (outarg)
		snprintf(e->dir, sizeof(e->dir), "%s", outarg);
	else if (e->p.outdir[0])
		snprintf(e->dir, sizeof(e->dir), "%s", e->p.outdir);
	else {
		time_t t = time(NULL);
		struct tm tm;
		char ts[32];

		localtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
		snprintf(e->dir, sizeof(e->dir), "runs/%s-%s", e->p.name, ts);
	}
	if (!access(e->dir, F_OK)) {
		log_err("%s exists: give another -o DIR", e->dir);
		return 2;
	}
	snprintf(e->tmpdir, sizeof(e->tmpdir), "%s.partial", e->dir);
	if (ctl_mkdir_p(e->tmpdir, 0755)) {
		log_err("%s: %s", e->tmpdir, strerror(errno));
		return 1;
	}
	return 0;
}

int exp_open(struct exp *e, struct ctl *ctl, int argc, char **argv, int (*usage_rc)(void))
{
	const char *sets[PROF_MAX_SETS], *pos[4], *outarg = NULL;
	int nsets, npos, r, i;
	char nodes[256] = "";

	(void)usage_rc;
	memset(e, 0, sizeof(*e));
	e->ctl = ctl;
	memset(e->ids, 0xff, sizeof(e->ids));
	if (argc > 4 + 2 * PROF_MAX_SETS ||
	    (r = split_args(argc, argv, sets, &nsets, pos, &npos, &outarg, &e->keep, usage_run)))
		return argc > 4 + 2 * PROF_MAX_SETS ? 2 : r == 1 ? -1 : 2;
	if (npos != 1) {
		usage_run(stderr);
		return 2;
	}
	if (profile_load(&e->p, pos[0], sets, nsets, e->err, sizeof(e->err))) {
		fprintf(stderr, "%s\n", e->err);
		return 2;
	}
	e->loaded = 1;
	if ((r = pick_dir(e, outarg)))
		return r;
	e->t_start = ctl_now();
	iso_now(e->when, sizeof(e->when));
	if (e->p.nhosts) {
		/* the profile's own hosts: agents already running, one shared token */
		struct tb_state s;

		memset(&s, 0, sizeof(s));
		s.backend = TB_HOSTS;
		s.nodes = e->p.nhosts;
		snprintf(s.accel, sizeof(s.accel), "-");
		for (i = 0; i < e->p.nhosts; i++) {
			snprintf(s.node[i].name, sizeof(s.node[i].name), "%s", e->p.host[i].name);
			snprintf(s.node[i].host, sizeof(s.node[i].host), "%s", e->p.host[i].addr);
			snprintf(s.node[i].dev, sizeof(s.node[i].dev), "-");
			s.node[i].port = e->p.host[i].port;
		}
		if (e->p.ssh.on) {	/* we start them: a fresh token, forwarded ports */
			if (!e->ctl->json && !e->m)
				log_info("starting %d agents over ssh", e->p.nhosts);
			if (ssh_agents_start(&e->ssh, &e->p, &s))
				return 1;
		} else {
			r = proto_token_load(e->p.token_file, s.token, sizeof(s.token));
			if (r) {
				log_err("%s: cannot use as token file: %s", e->p.token_file,
					strerror(-r));
				return 1;
			}
		}
		if (group_open_state(&e->g, &s))
			return 1;
	} else {
		if (ensure_testbed(ctl, &e->p, &e->brought_up))
			return 1;
		for (i = 0; i < e->p.nodes; i++)
			snprintf(nodes + strlen(nodes), sizeof(nodes) - strlen(nodes), "%snode%d",
				 i ? "," : "", i);
		if (group_open(&e->g, nodes))
			return 1;
	}
	e->group_open = 1;
	e->faults = json_array();
	for (i = 0; i < PROF_MAX_ARMS; i++)
		e->rounds[i] = json_array();
	e->t0 = node_now(&e->g.c[0]);
	/* faults, on each node's own agent, leased to our connection */
	for (i = 0; i < e->p.nfaults; i++) {
		const struct prof_fault *f = &e->p.fault[i];
		json_t *fj = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:[]}", "name", f->name, "rule",
				       f->rule, "dir", f->egress ? "egress" : "ingress", "port",
				       f->sw ? "switch" : "nic", "start_ns", (json_int_t)f->start_ns,
				       "duration_ns", (json_int_t)f->duration_ns, "rules");

		json_array_append_new(e->faults, fj);
		for (int k = 0; k < e->g.n; k++) {
			if (!(f->nodes & (1u << e->g.node[k])))
				continue;
			e->ids[i][k] = fault_add(&e->g.c[k], f, e->g.node[k],
						 e->p.nhosts ? e->p.host : NULL, e->err, sizeof(e->err));
			if (e->ids[i][k] < 0) {
				log_err("fault %s: %s", f->name, e->err);
				return 1;
			}
			json_array_append_new(json_object_get(fj, "rules"),
					      json_pack("{s:s,s:i}", "node",
							e->g.tb.node[e->g.node[k]].name, "id",
							e->ids[i][k]));
		}
		if (e->m)
			model_event(e->m, "fault %s: %s on %d node(s)", f->name, f->rule,
				    (int)json_array_size(json_object_get(fj, "rules")));
	}
	if (e->p.nfaults && !ctl->json && !e->m)
		log_info("%d fault rule%s added", e->p.nfaults, e->p.nfaults == 1 ? "" : "s");
	return 0;
}

__attribute__((format(printf, 2, 3))) static void say(struct exp *e, const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (e->m && (e->m_quiet || e->ctl->json))
		model_event(e->m, "%s", buf);
	else if (e->m)
		model_event(e->m, "%s", buf);
	if (!e->ctl->json && (!e->m || e->m_quiet)) {
		if (isatty(2))
			fprintf(stderr, "\r%114s\r", "");
		log_info("%s", buf);
	}
}

/* wait while paused (the TUI's p); 1 when told to stop meanwhile */
static int exp_pause_point(struct exp *e)
{
	while (e->m && e->m->paused && !ctl_interrupted)
		usleep(100000);
	return ctl_interrupted;
}

/* one arm's turn: its options, the model told, the results kept */
static void exp_arm(struct exp *e, int a, uint64_t rd, uint64_t n)
{
	struct profile *p = &e->p;
	int rounds = strcmp(p->workload, "train");	/* everything but train runs in rounds */
	json_t *o, *res = NULL;

	if (exp_pause_point(e)) {
		e->rc = 1;
		return;
	}
	o = arm_opts(p, a, n, rd ? 0 : p->warmup, e->g.n);
	if (rounds)
		say(e, "round %llu/%llu: %s (%llu %s)", (unsigned long long)rd + 1,
		    (unsigned long long)p->rounds, p->arm[a].name, (unsigned long long)n,
		    !strcmp(p->workload, "kv") ? "operations per client" :
		    !strcmp(p->workload, "storage") ? "I/Os" : "iterations");
	else
		say(e, "%s: training", p->arm[a].name);
	if (e->m)
		model_arm_begin(e->m, a, rd, rounds ? p->rounds : 1, n);
	if (exp_group_run(&e->g, p->workload, o, &res, e->err, sizeof(e->err))) {
		if (e->m)
			model_event(e->m, "%s failed: %s", p->arm[a].name, e->err);
		else
			log_err("%s: %s", p->arm[a].name, e->err);
		e->rc = 1;
	} else {
		if (e->m)
			model_arm_done(e->m, a, res, n);
		json_array_append_new(e->rounds[a], res);
	}
	json_decref(o);
}

/* collective, kv, storage: rounds of every arm in turn; train: every arm once */
int exp_measure(struct exp *e)
{
	struct profile *p = &e->p;
	int train = !strcmp(p->workload, "train");
	uint64_t rd, rounds = train ? 1 : p->rounds;
	int a;

	for (rd = 0; rd < rounds && !e->rc; rd++)
		for (a = 0; a < p->narms && !e->rc; a++)
			exp_arm(e, a, rd, train ? 0 : p->iters / p->rounds + (rd < p->iters % p->rounds));
	return e->rc;
}

/* counters, rules away, the report written and renamed; the exit code */
int exp_finish(struct exp *e)
{
	struct profile *p = &e->p;
	struct utsname un;
	json_t *arms, *report;
	int i, a;

	if (!e->group_open)
		goto down;
	for (i = 0; i < p->nfaults; i++) {
		json_t *fr = json_object_get(json_array_get(e->faults, (size_t)i), "rules");

		for (int k = 0, j = 0; k < e->g.n; k++) {
			json_t *st, *x, *rule;
			char idb[16];
			size_t m;

			if (e->ids[i][k] < 0)
				continue;
			rule = json_array_get(fr, (size_t)j++);
			st = inject_json(&e->g.c[k], "stats", NULL);
			json_array_foreach(json_object_get(st, "rules"), m, x)
				if (json_integer_value(json_object_get(x, "id")) == e->ids[i][k])
					json_object_set(rule, "counters", json_object_get(x, "counters"));
			json_decref(st);
			snprintf(idb, sizeof(idb), "%d", e->ids[i][k]);
			json_decref(inject_json(&e->g.c[k], "del", idb));
		}
	}
	if (p->nfaults || e->extra_rules) {	/* no rule left: the hooks and qdiscs go too */
		json_t *l = inject_json(&e->g.c[0], "list", NULL);

		if (l && !json_array_size(json_object_get(l, "rules")))
			json_decref(inject_json(&e->g.c[0], "flush", NULL));
		json_decref(l);
	}
	arms = json_array();
	for (a = 0; a < p->narms; a++) {
		json_t *arm = report_arm(p->workload, p->arm[a].name, p->arm[a].mode, e->rounds[a]);

		if (json_is_true(json_object_get(arm, "verification_failed")))
			e->rc = 1;
		json_array_append_new(arms, arm);
	}
	if (ctl_interrupted)
		e->rc = 1;
	uname(&un);
	report = json_pack("{s:i,s:s,s:b,s:s,s:s,s:f,s:{s:s},s:{s:s,s:s,s:s},s:{s:s,s:s,s:i,s:i,s:s},"
			   "s:o,s:s,s:I,s:O,s:o}",
			   "schema_version", 1, "kind", "rdma-testbed-report", "partial",
			   ctl_interrupted || e->rc, "status",
			   ctl_interrupted ? "interrupted" : e->rc ? "failed" : "ok", "created", e->when,
			   "duration_s", ctl_now() - e->t_start, "versions", "rdmactl", RTB_VERSION,
			   "host", "hostname", un.nodename, "kernel", un.release, "machine", un.machine,
			   "testbed", "backend", tb_backend_name(e->g.tb.backend), "accel", e->g.tb.accel,
			   "nodes", e->g.tb.nodes, "mtu", e->g.tb.mtu, "kernel", e->g.tb.kver, "profile",
			   profile_to_json(p), "workload", p->workload, "t0_node_ns", e->t0, "faults",
			   e->faults, "arms", arms);
	if (report && e->rc && !ctl_interrupted)
		json_object_set_new(report, "error", json_string(e->err));
	group_close(&e->g);
	e->group_open = 0;
	if (!report || report_write(report, e->tmpdir, e->err, sizeof(e->err))) {
		log_err("writing %s: %s", e->tmpdir, report ? e->err : "out of memory");
		e->rc = 1;
	} else if (rename(e->tmpdir, e->dir)) {
		log_err("%s -> %s: %s", e->tmpdir, e->dir, strerror(errno));
		e->rc = 1;
	} else if (!e->quiet) {
		if (e->ctl->json)
			json_dumpf(report, stdout, JSON_INDENT(2));
		else
			report_print_text(report, stdout);
		if (!e->ctl->json)
			printf("report: %s/{report.json,summary.csv,report.html,*.hlog}%s\n", e->dir,
			       json_is_true(json_object_get(report, "partial")) ? " (partial)" : "");
	}
	json_decref(report);
down:
	if (e->brought_up && !e->keep) {
		char *av[] = { "down", NULL };

		cmd_testbed(e->ctl, 1, av);
	}
	return e->rc;
}

void exp_close(struct exp *e)
{
	int a;

	if (e->group_open)
		group_close(&e->g);
	ssh_agents_stop(&e->ssh);	/* after our connections: nothing of ours is left in them */
	if (e->tmpdir[0] && access(e->dir, F_OK))
		ctl_rm_rf(e->tmpdir);
	for (a = 0; a < PROF_MAX_ARMS; a++)
		json_decref(e->rounds[a]);
	json_decref(e->faults);
	if (e->loaded)
		profile_free(&e->p);
}

/* run's live line: from the model, on a terminal */
static void run_observer(void *arg, int idx, const json_t *iv, json_int_t progress)
{
	struct exp *e = arg;
	static double shown;
	char line[200];

	model_intervals(e->m, idx, iv, progress);
	model_publish(e->m, 0);	/* for tui --attach */
	if (!isatty(2) || ctl_now() - shown < 1)
		return;
	shown = ctl_now();
	model_status_line(e->m, line, sizeof(line));
	fprintf(stderr, "\r  %-110.110s", line);
}

int cmd_run(struct ctl *ctl, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sigint }, old, oldt;
	static struct exp e;
	static struct model m;
	int r;

	sigaction(SIGINT, &sa, &old);
	sigaction(SIGTERM, &sa, &oldt);
	r = exp_open(&e, ctl, argc, argv, NULL);
	if (r < 0) {	/* --help */
		exp_close(&e);
		r = 0;
		goto out;
	}
	if (r == 2) {
		exp_close(&e);
		goto out;
	}
	if (!r && e.loaded) {
		model_init(&m, &e.p);
		e.m = &m;
		e.m_quiet = 1;
		arms_observer = run_observer;
		arms_observer_arg = &e;
		exp_measure(&e);
		arms_observer = NULL;
		model_unpublish();
		if (isatty(2))
			fprintf(stderr, "\r%114s\r", "");
	} else {
		e.rc = 1;
	}
	r = exp_finish(&e);
	if (e.m)
		model_fini(&m);
	exp_close(&e);
out:
	sigaction(SIGINT, &old, NULL);
	sigaction(SIGTERM, &oldt, NULL);
	return r;
}

static void usage_report(FILE *f)
{
	fprintf(f, "usage: rdmactl report DIR [--format text|json|csv|html]\n"
		   "       rdmactl report DIR_A DIR_B      compare two runs arm by arm\n"
		   "  re-renders a run directory's report.json\n");
}

static json_t *load_report(const char *dir)
{
	char path[PATH_MAX];
	json_error_t je;
	json_t *r;

	snprintf(path, sizeof(path), "%s/report.json", dir);
	r = json_load_file(path, 0, &je);
	if (!r)
		log_err("%s:%d:%d: %s", path, je.line, je.column, je.text);
	else if (json_integer_value(json_object_get(r, "schema_version")) != 1) {
		log_err("%s: not a version 1 rdma-testbed report", path);
		json_decref(r);
		r = NULL;
	}
	return r;
}

int cmd_report(struct ctl *ctl, int argc, char **argv)
{
	const char *fmt = ctl->json ? "json" : "text", *dirs[2];
	int i, n = 0, rc = 0;
	json_t *a, *b;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage_report(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			fmt = argv[++i];
			if (strcmp(fmt, "text") && strcmp(fmt, "json") && strcmp(fmt, "csv") &&
			    strcmp(fmt, "html")) {
				log_err("--format '%s': expected text|json|csv|html", fmt);
				return 2;
			}
		} else if (argv[i][0] == '-' || n == 2) {
			log_err("unexpected '%s'", argv[i]);
			usage_report(stderr);
			return 2;
		} else {
			dirs[n++] = argv[i];
		}
	}
	if (!n) {
		usage_report(stderr);
		return 2;
	}
	if (!(a = load_report(dirs[0])))
		return 1;
	if (n == 1) {
		if (!strcmp(fmt, "json"))
			rc = json_dumpf(a, stdout, JSON_INDENT(2)) ? 1 : (putchar('\n'), 0);
		else if (!strcmp(fmt, "csv"))
			rc = report_csv(a, stdout) ? 1 : 0;
		else if (!strcmp(fmt, "html"))
			rc = report_html(a, stdout) ? 1 : 0;
		else
			report_print_text(a, stdout);
		json_decref(a);
		return rc;
	}
	if (!(b = load_report(dirs[1]))) {
		json_decref(a);
		return 1;
	}
	/* arm by arm (by name): p50/p99/max and lost, B against A */
	printf("# %s vs %s\n# %-10s %12s %12s %8s %12s %12s %8s %10s %10s\n", dirs[0], dirs[1], "arm",
	       "A p50[ms]", "B p50[ms]", "B/A", "A p99[ms]", "B p99[ms]", "B/A", "A lost", "B lost");
	{
		const json_t *x, *y;
		size_t k, m;

		json_array_foreach(json_object_get(a, "arms"), k, x) {
			const char *name = json_string_value(json_object_get(x, "name"));
			const json_t *px = json_object_get(x, "percentiles"), *py;
			double a50, b50, a99, b99;

			y = NULL;
			json_array_foreach(json_object_get(b, "arms"), m, py)
				if (!strcmp(json_string_value(json_object_get(py, "name")), name))
					y = py;
			if (!y) {
				printf("  %-10s (only in %s)\n", name, dirs[0]);
				continue;
			}
			py = json_object_get(y, "percentiles");
			a50 = (double)json_integer_value(json_object_get(px, "p50_ns")) / 1e6;
			b50 = (double)json_integer_value(json_object_get(py, "p50_ns")) / 1e6;
			a99 = (double)json_integer_value(json_object_get(px, "p99_ns")) / 1e6;
			b99 = (double)json_integer_value(json_object_get(py, "p99_ns")) / 1e6;
			printf("  %-10s %12.2f %12.2f %8.2f %12.2f %12.2f %8.2f %9.3f%% %9.3f%%\n", name,
			       a50, b50, a50 > 0 ? b50 / a50 : 0, a99, b99, a99 > 0 ? b99 / a99 : 0,
			       100 * json_real_value(json_object_get(x, "lost_fraction")),
			       100 * json_real_value(json_object_get(y, "lost_fraction")));
		}
	}
	json_decref(a);
	json_decref(b);
	return 0;
}
