// SPDX-License-Identifier: MIT
/*
 * A traced run (rdmactl run --trace, a profile's trace: key): around every
 * round of every arm, `rdma-inject trace` on each kernel of the run (the
 * testbed VM or this host: one for every node; hosts.ssh: one per host),
 * started through rdma-run so that `rdma-run stop` ends it cleanly, its
 * pcapng streamed into trace/ARM.rROUND[.NODE].pcapng of the run directory.
 * Hooks: every member's NIC device, both directions, and its switch port
 * when a fault is on one. The capture is analysed when it ends
 * (ctl/trace/), and the report gets it (exp_report).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctl/exp/exp.h"
#include "ctl/trace/trace.h"
#include "ebpf/inject_abi.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/proc.h"

#define READY_S 60.0	/* rdma-inject's program load takes seconds under TCG */

#define TR_MAX (TB_MAX_NODES + PROF_MAX_SWITCHES)

struct exp_trace {
	/* kernels traced: the members', then per-node VMs' switch (member -1,
	 * on this host) or a profile's switch hosts (member -2 - j, over ssh) */
	int n;
	int member[TR_MAX];
	pid_t pid[TR_MAX];
	int errfd[TR_MAX];
	char id[TR_MAX][64], rel[TR_MAX][PATH_MAX], cfg[PATH_MAX];
	char errtxt[TR_MAX][1024];
	json_t *nodes;		/* device -> node name */
	json_t *switches;	/* device -> whether it is a switch port */
	int a;
	uint64_t rd;
};

/* member m's node name, as the report says it */
static const char *node_name(const struct exp *e, int m)
{
	static char buf[4][40];
	static int k;
	int node = e->g.node[m];

	k = (k + 1) % 4;
	if (e->p.nhosts)
		snprintf(buf[k], sizeof(buf[k]), "%s", e->p.host[node].name);
	else
		snprintf(buf[k], sizeof(buf[k]), "node%d", node);
	return buf[k];
}

static void dev_of(const struct exp *e, int m, int sw, char *dev, size_t len)
{
	int node = e->g.node[m];

	if (e->p.nhosts)
		snprintf(dev, len, "%s", sw ? e->p.host[node].sw : e->p.host[node].nic);
	else
		snprintf(dev, len, "%s%d", sw ? "sw" : "n", node);
}

/* a fault of the profile is on a switch port */
static int switch_faults(const struct exp *e)
{
	int i;

	for (i = 0; i < e->p.nfaults; i++)
		if (e->p.fault[i].sw)
			return 1;
	return 0;
}

/* "rdma-inject trace snaplen N to - dev D both..." for the members from..to */
static void trace_cmd(struct exp *e, int from, int to, char *cmd, size_t len, json_t *nodes,
		      json_t *sws)
{
	size_t at;
	/* a per-node VM's switch ports are this host's, not a node's */
	int m, sw = switch_faults(e) && !exp_per_node(e);

	snprintf(cmd, len, "exec %s trace snaplen %u to -", exp_node_tool(e, "rdma-inject"),
		 e->p.trace_snaplen);
	for (m = from; m <= to; m++) {
		char dev[40];
		int k;

		for (k = 0; k <= sw; k++) {
			dev_of(e, m, k, dev, sizeof(dev));
			/* a switch host's port is not on the node's host */
			if (!dev[0] || (k && e->p.nhosts && e->p.host[e->g.node[m]].swi >= 0))
				continue;
			at = strlen(cmd);
			snprintf(cmd + at, len - at, " dev %s both", dev);
			json_object_set_new(nodes, dev, json_string(node_name(e, m)));
			json_object_set_new(sws, dev, json_boolean(k));
		}
	}
}

static void read_err(struct exp_trace *t, int k, int ms)
{
	size_t have = strlen(t->errtxt[k]);
	struct pollfd pf = { t->errfd[k], POLLIN, 0 };

	while (t->errfd[k] >= 0 && poll(&pf, 1, ms) > 0) {
		ssize_t n = read(t->errfd[k], t->errtxt[k] + have, sizeof(t->errtxt[k]) - 1 - have);

		if (n <= 0) {
			close(t->errfd[k]);
			t->errfd[k] = -1;
			break;
		}
		have += (size_t)n;
		t->errtxt[k][have] = 0;
		if (strstr(t->errtxt[k], "rdma-inject: tracing") || have + 1 >= sizeof(t->errtxt[k]))
			break;
		ms = 100;
	}
}

static void stop_one(struct exp *e, struct exp_trace *t, int k)
{
	static char line[4096];
	char *argv[32], out[1024];
	const char *words[] = { exp_node_tool(e, "rdma-run"), "stop", t->id[k], "5000", NULL };
	int st;

	if (t->member[k] == -1 && t->pid[k] > 0)	/* the switch's, here: it ends on SIGTERM */
		kill(t->pid[k], SIGTERM);
	else if (t->member[k] == -1)
		;
	else if (!(t->member[k] < -1 ?
		   exp_ssh_argv(e, e->p.swh[-2 - t->member[k]].ssh, words, argv, line,
				sizeof(line)) :
		   exp_node_argv(e, t->cfg, t->member[k], words, argv, line, sizeof(line))))
		proc_run(argv, out, sizeof(out));
	if (t->pid[k] > 0 && proc_reap(t->pid[k], 15000, &st))
		proc_stop(t->pid[k], 1000);
	t->pid[k] = 0;
	read_err(t, k, 200);
	if (t->errfd[k] >= 0)
		close(t->errfd[k]);
	t->errfd[k] = -1;
}

/* argv started as trace k, its pcapng into fd (closed here), its stderr
 * read until it says it traces: 0, or -errno with err (who: where it runs) */
static int spawn_trace(struct exp_trace *t, int k, char **argv, int fd, char *err, size_t errlen,
		       const char *who)
{
	struct proc_io io = { -1, fd, -1, 1 };
	double t0;
	int pe[2], rc;

	if (pipe2(pe, O_CLOEXEC)) {
		snprintf(err, errlen, "trace: pipe: %s", strerror(errno));
		close(fd);
		return -EIO;
	}
	io.in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	io.err = pe[1];
	rc = proc_spawn(argv, &io, &t->pid[k]);
	close(io.in);
	close(fd);
	close(pe[1]);
	t->errfd[k] = pe[0];
	t->n = k + 1;
	if (rc) {
		snprintf(err, errlen, "trace: %s: %s", argv[0], strerror(-rc));
		return -EIO;
	}
	t0 = rtb_now_s();
	while (!strstr(t->errtxt[k], "rdma-inject: tracing") && t->errfd[k] >= 0 &&
	       rtb_now_s() - t0 < READY_S && !ctl_interrupted)
		read_err(t, k, 500);
	if (!strstr(t->errtxt[k], "rdma-inject: tracing")) {
		snprintf(err, errlen, "trace on %s did not start: %.*s", who,
			 (int)strcspn(t->errtxt[k], "\n"),
			 t->errtxt[k][0] ? t->errtxt[k] : "(no message)");
		return -EIO;
	}
	return 0;
}

/* per-node VMs with a fault on a switch port: the switch's ports are traced
 * too, on this host */
static int per_node_switch(const struct exp *e)
{
	return switch_faults(e) && exp_per_node(e);
}

/* rdma-inject trace on this host's switch ports (rtbswN of every member),
 * streamed into trace/ARM.rROUND.switch.pcapng: entry t->n, member -1 */
static int switch_trace_start(struct exp *e, struct exp_trace *t, char *err, size_t errlen)
{
	char inj[PATH_MAX], snap[16], path[PATH_MAX * 2], devs[TB_MAX_NODES][16];
	char *argv[16 + 3 * TB_MAX_NODES];
	int k = t->n, n = 0, m, fd;

	snprintf(inj, sizeof(inj), "%s/rdma-inject", ctl_bin_dir());
	snprintf(snap, sizeof(snap), "%u", e->p.trace_snaplen);
	argv[n++] = inj;
	argv[n++] = "trace";
	argv[n++] = "snaplen";
	argv[n++] = snap;
	argv[n++] = "to";
	argv[n++] = "-";
	for (m = 0; m < e->g.n; m++) {
		tb_switch_port(e->g.node[m], devs[m], sizeof(devs[m]));
		argv[n++] = "dev";
		argv[n++] = devs[m];
		argv[n++] = "both";
		json_object_set_new(t->nodes, devs[m], json_string(node_name(e, m)));
		json_object_set_new(t->switches, devs[m], json_true());
	}
	argv[n] = NULL;
	t->member[k] = -1;
	t->errfd[k] = -1;
	snprintf(t->id[k], sizeof(t->id[k]), "switch");
	snprintf(t->rel[k], sizeof(t->rel[k]), "trace/%s.r%llu.switch.pcapng", e->p.arm[t->a].name,
		 (unsigned long long)t->rd + 1);
	snprintf(path, sizeof(path), "%s/%s", e->tmpdir, t->rel[k]);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "trace: %s: %s", path, strerror(errno));
		return -EIO;
	}
	if (spawn_trace(t, k, argv, fd, err, errlen, "the switch"))
		return -EIO;
	exp_event(e, "%s: tracing (%s and %s)", e->p.arm[t->a].name, t->rel[0], t->rel[k]);
	return 0;
}

/* rdma-inject trace on switch host j's ports the members are cabled to,
 * over ssh like the nodes' (rdma-run start), streamed into
 * trace/ARM.rROUND.SWITCH.pcapng: entry t->n, member -2 - j */
static int switch_host_trace_start(struct exp *e, struct exp_trace *t, int j, char *err,
				   size_t errlen)
{
	static char line[8192], cmd[4096];
	int k = t->n, m, fd, any = 0;
	const char *words[] = { exp_node_tool(e, "rdma-run"), "start", t->id[k], "--", cmd, NULL };
	char *argv[40], path[PATH_MAX * 2];
	size_t at;

	snprintf(cmd, sizeof(cmd), "exec %s trace snaplen %u to -", exp_node_tool(e, "rdma-inject"),
		 e->p.trace_snaplen);
	for (m = 0; m < e->g.n; m++) {
		const struct prof_host *h = &e->p.host[e->g.node[m]];

		if (h->swi != j)
			continue;
		at = strlen(cmd);
		snprintf(cmd + at, sizeof(cmd) - at, " dev %s both", h->sw);
		json_object_set_new(t->nodes, h->sw, json_string(node_name(e, m)));
		json_object_set_new(t->switches, h->sw, json_true());
		any = 1;
	}
	if (!any)
		return 0;
	t->member[k] = -2 - j;
	t->errfd[k] = -1;
	snprintf(t->id[k], sizeof(t->id[k]), "trace-%d-s%d", (int)getpid(), j);
	snprintf(t->rel[k], sizeof(t->rel[k]), "trace/%s.r%llu.%s.pcapng", e->p.arm[t->a].name,
		 (unsigned long long)t->rd + 1, e->p.swh[j].name);
	snprintf(path, sizeof(path), "%s/%s", e->tmpdir, t->rel[k]);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || exp_ssh_argv(e, e->p.swh[j].ssh, words, argv, line, sizeof(line))) {
		snprintf(err, errlen, "trace: %s: %s", path,
			 fd < 0 ? strerror(errno) : "command line too long");
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	return spawn_trace(t, k, argv, fd, err, errlen, e->p.swh[j].name) ? -EIO : 0;
}

int exp_trace_start(struct exp *e, int a, uint64_t rd, char *err, size_t errlen)
{
	static char line[8192], cmd[4096];
	struct exp_trace *t;
	/* a kernel a node: hosts.ssh, per-node VMs */
	int k, per_host = e->p.ssh.on || exp_per_node(e), nk;
	char dir[PATH_MAX + 40];

	if (!e->p.trace)
		return 0;
	if (e->g.tb.backend != TB_VM && e->g.tb.backend != TB_HOST && !e->p.ssh.on) {
		snprintf(err, errlen, "trace: rdma-inject trace runs on the nodes' kernels: "
			 "a testbed (vm or host) or hosts.ssh, not agents already running");
		return -EIO;
	}
	t = e->trace = calloc(1, sizeof(*t));
	if (!t)
		return -EIO;
	t->a = a;
	t->rd = rd;
	t->nodes = json_object();
	t->switches = json_object();
	if (e->g.tb.backend == TB_VM && tb_ssh_config(t->cfg, sizeof(t->cfg))) {
		snprintf(err, errlen, "trace: no ssh into the testbed VM");
		return -EIO;
	}
	snprintf(dir, sizeof(dir), "%s/trace", e->tmpdir);
	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "trace: %s: %s", dir, strerror(errno));
		return -EIO;
	}
	nk = per_host ? e->g.n : 1;
	for (k = 0; k < nk; k++) {
		const char *words[] = { exp_node_tool(e, "rdma-run"), "start", t->id[k], "--", cmd, NULL };
		char *argv[40], path[PATH_MAX * 2];
		int fd;

		t->member[k] = k;
		t->errfd[k] = -1;
		snprintf(t->id[k], sizeof(t->id[k]), "trace-%d-%d", (int)getpid(), k);
		trace_cmd(e, per_host ? k : 0, per_host ? k : e->g.n - 1, cmd, sizeof(cmd), t->nodes,
			  t->switches);
		if (per_host)
			snprintf(t->rel[k], sizeof(t->rel[k]), "trace/%s.r%llu.%s.pcapng",
				 e->p.arm[a].name, (unsigned long long)rd + 1, node_name(e, k));
		else
			snprintf(t->rel[k], sizeof(t->rel[k]), "trace/%s.r%llu.pcapng", e->p.arm[a].name,
				 (unsigned long long)rd + 1);
		snprintf(path, sizeof(path), "%s/%s", e->tmpdir, t->rel[k]);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 || exp_node_argv(e, t->cfg, k, words, argv, line, sizeof(line))) {
			snprintf(err, errlen, "trace: %s: %s", path,
				 fd < 0 ? strerror(errno) : "command line too long");
			if (fd >= 0)
				close(fd);
			t->n = k;
			return -EIO;
		}
		if (spawn_trace(t, k, argv, fd, err, errlen, node_name(e, k)))
			return -EIO;
	}
	if (per_node_switch(e))
		return switch_trace_start(e, t, err, errlen);
	for (k = 0; e->p.nhosts && switch_faults(e) && k < e->p.nswitches; k++)
		if (switch_host_trace_start(e, t, k, err, errlen))
			return -EIO;
	if (t->n > nk)
		exp_event(e, "%s: tracing (%s and %d at switch hosts)", e->p.arm[a].name, t->rel[0],
			  t->n - nk);
	else
		exp_event(e, "%s: tracing (%s)", e->p.arm[a].name, t->rel[0]);
	return 0;
}

void exp_trace_stop(struct exp *e)
{
	struct exp_trace *t = e->trace;
	int k;

	if (!t)
		return;
	if (!e->captures)
		e->captures = json_array();
	for (k = 0; k < t->n; k++) {
		char path[PATH_MAX * 2];

		stop_one(e, t, k);
		snprintf(path, sizeof(path), "%s/%s", e->tmpdir, t->rel[k]);
		json_array_append_new(e->captures,
				      json_pack("{s:s,s:s,s:s,s:I,s:b,s:O,s:O}", "path", path, "file",
						t->rel[k], "arm", e->p.arm[t->a].name, "round",
						(json_int_t)t->rd + 1, "incomplete",
						strstr(t->errtxt[k], "records lost") != NULL, "nodes",
						t->nodes, "switches", t->switches));
	}
	json_decref(t->nodes);
	json_decref(t->switches);
	free(t);
	e->trace = NULL;
}

void exp_trace_analyze(struct exp *e)
{
	json_t *c;
	size_t i;

	json_array_foreach(e->captures, i, c) {
		char err[512];
		json_t *an = trace_analyze(jr_str(c, "path"), json_object_get(c, "nodes"),
					   json_object_get(c, "switches"), err,
					   sizeof(err)), *cap;
		size_t j;

		if (!an) {
			log_err("trace: %s", err);
			an = json_pack("{s:s}", "error", err);
		}
		/* the path as the run directory will have it */
		json_object_set(an, "file", json_object_get(c, "file"));
		json_array_foreach(json_object_get(an, "captures"), j, cap)
			json_object_set(cap, "file", json_object_get(c, "file"));
		json_object_set(an, "arm", json_object_get(c, "arm"));
		json_object_set(an, "round", json_object_get(c, "round"));
		if (json_is_true(json_object_get(c, "incomplete")))
			json_object_set_new(an, "incomplete", json_true());
		if (!e->traces)
			e->traces = json_array();
		json_array_append_new(e->traces, an);
	}
	json_decref(e->captures);
	e->captures = NULL;
}

static json_int_t jint(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static void check(json_t *checks, const char *what, json_int_t trace, json_int_t counter,
		  const char *note)
{
	json_t *c = json_pack("{s:s,s:I,s:I,s:b}", "check", what, "trace", trace, "counter", counter,
			      "ok", trace == counter);

	if (note && trace != counter)
		json_object_set_new(c, "note", json_string(note));
	json_array_append_new(checks, c);
}

/* the captures of one node's device (NIC: the node's own name) */
static void sum_node(const json_t *traces, const char *node, const char *dir, int passed_only,
		     json_int_t *n)
{
	const json_t *an, *c;
	size_t i, j;

	json_array_foreach(traces, i, an)
		json_array_foreach(json_object_get(an, "captures"), j, c) {
			const json_t *v = json_object_get(c, "verdicts");

			if (strcmp(json_string_value(json_object_get(c, "node")) ?: "", node) ||
			    strcmp(json_string_value(json_object_get(c, "dir")) ?: "", dir) ||
			    trace_capture_switch(c))
				continue;
			/* CNPs: rxe sends none, and one it receives it discards
			 * before counting (rdma-inject's, inject_abi.h) */
			*n += jint(c, "packets") - jint(c, "cnp_packets");
			if (passed_only)
				*n -= jint(v, "dropped") + jint(v, "corrupted");
		}
}

/*
 * The CNPs of the run's traces (rdma-inject's cnp rules) and the senders'
 * reaction: the median over the notified QPs of the packet gap after a CNP
 * against before (analyze.c). NULL when the run sent none.
 */
static json_t *cnp_summary(const json_t *traces)
{
	const json_t *an, *c, *q;
	json_int_t n = 0, qps = 0;
	double r[64];
	size_t i, j, k, nr = 0;

	json_array_foreach(traces, i, an)
		json_array_foreach(json_object_get(an, "captures"), j, c) {
			/* each CNP is seen where it was made and where it arrived:
			 * count it once, at the egress hook that sent it */
			if (strcmp(json_string_value(json_object_get(c, "dir")) ?: "", "egress"))
				continue;
			json_array_foreach(json_object_get(c, "cnp_reaction"), k, q) {
				n += jint(q, "cnps");
				qps++;
				if (json_is_number(json_object_get(q, "gap_ratio")) && nr < 64)
					r[nr++] = json_number_value(json_object_get(q, "gap_ratio"));
			}
		}
	if (!n)
		return NULL;
	for (i = 1; i < nr; i++)	/* insertion sort: a handful */
		for (j = i; j > 0 && r[j - 1] > r[j]; j--) {
			double t = r[j];

			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	return json_pack("{s:I,s:I,s:o,s:s}", "cnps", n, "notified_qps", qps, "gap_ratio_median",
			 nr ? json_real(r[nr / 2]) : json_null(), "note",
			 "a CNP asks its sender to slow down (DCQCN's reaction point): a sender "
			 "that does spaces its packets out, gap_ratio > 1. rxe (SoftRoCE) "
			 "implements no DCQCN and ignores CNPs, so its ratio stays near 1; the same "
			 "rules on a bridge port in front of a hardware NIC show that NIC's "
			 "reaction");
}

/* each arm's resent packets from its traces (arm.retransmissions), and per
 * direction the trace's count against the hooks' own over the same windows
 * (each capture's statistics block, injector/trace.c) */
static void check_resent(struct exp *e, json_t *arms, json_t *checks)
{
	static const char *const dirs[2] = { "egress", "ingress" };
	json_t *arm, *an, *c;
	size_t i, j, k;

	json_array_foreach(arms, i, arm) {
		const char *name = json_string_value(json_object_get(arm, "name"));
		json_int_t n = 0, tr[2] = { 0, 0 }, inj[2] = { 0, 0 }, odd[2] = { 0, 0 };
		int any = 0, have[2] = { 0, 0 };

		json_array_foreach(e->traces, j, an) {
			if (strcmp(json_string_value(json_object_get(an, "arm")) ?: "", name ?: ""))
				continue;
			n += trace_retransmissions(an);
			json_array_foreach(json_object_get(an, "captures"), k, c) {
				int d = !strcmp(json_string_value(json_object_get(c, "dir")) ?: "",
						"ingress");

				if (!json_object_get(c, "injector_resent"))
					continue;
				tr[d] += jint(c, "injector_marked");
				odd[d] += jint(c, "injector_unexplained");
				inj[d] += jint(c, "injector_resent");
				have[d] = 1;
			}
			any = 1;
		}
		for (int d = 0; d < 2; d++) {
			char what[160];

			if (!have[d])
				continue;
			snprintf(what, sizeof(what), "%s: %s resent packets = the injector's count", name,
				 dirs[d]);
			check(checks, what, tr[d], inj[d],
			      "the packets the hooks marked resent in the trace, against their "
			      "counters over the trace's window");
			snprintf(what, sizeof(what), "%s: %s resent marks fit the trace's copies", name,
				 dirs[d]);
			check(checks, what, odd[d], 0,
			      "PSNs whose marks the trace does not explain: of a PSN's c copies "
			      "the hook marks c - 1, or c when it met the first 64 or more PSNs "
			      "below its QP's highest (it remembers a QP's last 64)");
		}
		if (any) {
			json_object_set_new(arm, "retransmissions", json_integer(n));
			json_object_set_new(arm, "retransmissions_source", json_string("trace"));
		}
	}
}

/* each rule counter is named as the trace's verdict (a corrupt payload
 * rule's packets are also "tampered"); matched_bytes counts bytes, which no
 * verdict does */
#define CTR_NAME(c) #c,
static const char *const kinds[] = { INJ_COUNTERS(CTR_NAME) };
#undef CTR_NAME
enum { NK = sizeof(kinds) / sizeof(kinds[0]) };

/* the verdicts the traces recorded for rule id of a node (at the switch or
 * at the node's own NIC) into t[] */
static void rule_verdicts(const json_t *traces, const char *id, const char *node, int sw,
			  json_int_t t[NK])
{
	const json_t *an, *c;
	size_t k, m;
	int q;

	json_array_foreach(traces, k, an)
		json_array_foreach(json_object_get(an, "captures"), m, c) {
			json_t *r = json_object_get(json_object_get(c, "rules"), id);

			/* ids are a kernel's: the switch's and a node's may meet */
			if (!r || strcmp(json_string_value(json_object_get(c, "node")) ?: "", node) ||
			    trace_capture_switch(c) != sw)
				continue;
			for (q = 0; q < NK; q++)
				t[q] += jint(r, kinds[q]) +
					(!strcmp(kinds[q], "corrupted") ? jint(r, "tampered") : 0);
		}
}

/* the injector's rule counters against the verdicts the trace recorded */
static void check_rules(struct exp *e, json_t *checks)
{
	json_t *fl, *ru;
	size_t i, j;
	int q;

	json_array_foreach(e->faults, i, fl)
		json_array_foreach(json_object_get(fl, "rules"), j, ru) {
			const char *node = json_string_value(json_object_get(ru, "node")) ?: "";
			json_t *ctr = json_object_get(ru, "counters");
			json_int_t t[NK] = { 0 };
			char id[16], what[160];

			snprintf(id, sizeof(id), "%lld", (long long)jint(ru, "id"));
			rule_verdicts(e->traces, id, node,
				      !strcmp(json_string_value(json_object_get(fl, "port")) ?: "",
					      "switch"), t);
			for (q = 0; q < NK; q++) {
				if (!strcmp(kinds[q], "matched_bytes") ||
				    (q && !t[q] && !jint(ctr, kinds[q])))
					continue;
				snprintf(what, sizeof(what), "rule %s on %s: %s", id, node, kinds[q]);
				check(checks, what, t[q], jint(ctr, kinds[q]),
				      "the rule also saw packets outside the traced rounds");
			}
		}
}

/* rxe's hw counters against the trace of the node's NIC */
static void check_hw(struct exp *e, json_t *arms, json_t *checks)
{
	json_t *nodes = json_object(), *arm, *c, *acc;
	const char *node;
	size_t i, j;

	json_array_foreach(arms, i, arm)
		json_array_foreach(json_object_get(arm, "nodes"), j, c) {
			json_t *hw = json_object_get(c, "hw_counters_delta");

			node = json_string_value(json_object_get(c, "node"));
			if (!node || !hw)
				continue;
			acc = json_object_get(nodes, node);
			if (!acc) {
				acc = json_pack("{s:I,s:I}", "sent_pkts", (json_int_t)0, "rcvd_pkts",
						(json_int_t)0);
				json_object_set_new(nodes, node, acc);
			}
			json_object_set_new(acc, "sent_pkts", json_integer(jint(acc, "sent_pkts") +
									   jint(hw, "sent_pkts")));
			json_object_set_new(acc, "rcvd_pkts", json_integer(jint(acc, "rcvd_pkts") +
									   jint(hw, "rcvd_pkts")));
		}
	json_object_foreach(nodes, node, acc) {
		json_int_t out = 0, in = 0;
		char what[160];

		sum_node(e->traces, node, "egress", 0, &out);
		sum_node(e->traces, node, "ingress", 1, &in);
		snprintf(what, sizeof(what), "%s: egress packets = rxe sent_pkts", node);
		check(checks, what, out, jint(acc, "sent_pkts"),
		      "the counters' window (each round) and the trace's differ");
		snprintf(what, sizeof(what), "%s: ingress packets passed = rxe rcvd_pkts", node);
		check(checks, what, in, jint(acc, "rcvd_pkts"),
		      "the counters' window (each round) and the trace's differ");
	}
	json_decref(nodes);
}

json_t *exp_trace_report(struct exp *e, json_t *arms)
{
	json_t *checks = json_array(), *an, *c, *out, *cnp;
	int ok = 1, incomplete = 0;
	size_t i;

	check_resent(e, arms, checks);
	json_array_foreach(e->traces, i, an)
		if (json_is_true(json_object_get(an, "incomplete")) || json_object_get(an, "error"))
			incomplete = 1;
	check_rules(e, checks);
	check_hw(e, arms, checks);
	json_array_foreach(checks, i, c)
		ok &= json_is_true(json_object_get(c, "ok"));
	out = json_pack("{s:I,s:O,s:o,s:b,s:b,s:s}", "snaplen", (json_int_t)e->p.trace_snaplen,
			"files", e->traces, "checks", checks, "consistent", ok && !incomplete,
			"complete", !incomplete, "retransmissions",
			"resent request packets (and READ responses) at the nodes' egress, from the "
			"trace");
	cnp = cnp_summary(e->traces);
	if (cnp)
		json_object_set_new(out, "cnp", cnp);
	return out;
}
