// SPDX-License-Identifier: MIT
/*
 * The agent's side of the control channel: one thread per connection, one
 * request at a time per connection, verbs from one table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/magic.h>
#include "agent.h"
#include "../lib/log.h"
#include "../workloads/wl.h"
#include "../lib/clock.h"
#include "../lib/cmd.h"

#ifndef RTB_VERSION
#define RTB_VERSION "0.0.0"
#endif

/* names of the device's hw counters (they vary by kernel: discovered) */
static json_t *hw_counter_names(struct agent *a)
{
	json_t *names = json_array(), *res = NULL, *v;
	const char *k;
	char err[128];

	if (!hw_counters(a, 0, NULL, &res, err, sizeof(err)))
		json_object_foreach(json_object_get(res, "hw_counters"), k, v)
			json_array_append_new(names, json_string(k));
	json_decref(res);
	return names;
}

/* the kernel the agent runs on: release, boot id, CPUs, memory (what tells
 * per-node VMs apart, and what a report says of each node) */
static void host_facts(json_t *o)
{
	char boot[64] = "";
	struct utsname u;
	struct sysinfo si;
	struct statfs sf;
	struct stat sb;
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	if (f) {
		if (fgets(boot, sizeof(boot), f))
			boot[strcspn(boot, "\n")] = 0;
		fclose(f);
	}
	if (!uname(&u)) {
		json_object_set_new(o, "kernel", json_string(u.release));
		json_object_set_new(o, "hostname", json_string(u.nodename));
	}
	json_object_set_new(o, "boot_id", json_string(boot));
	/* the bpffs rdma-inject keeps its rules in, as this agent sees it:
	 * agents with the same boot id and bpffs share one injector, and a
	 * controller asks one of them for its counters */
	if (!statfs("/sys/fs/bpf", &sf) && sf.f_type == BPF_FS_MAGIC && !stat("/sys/fs/bpf", &sb))
		json_object_set_new(o, "bpffs", json_sprintf("%u:%u", major(sb.st_dev),
							     minor(sb.st_dev)));
	json_object_set_new(o, "cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	if (!sysinfo(&si))
		json_object_set_new(o, "mem_mb", json_integer((json_int_t)((uint64_t)si.totalram *
								      si.mem_unit >> 20)));
}

/* the RoCE GID's netdev and its MAC (what a switch host's MAC table needs) */
static void netdev_facts(const struct agent *a, json_t *o)
{
	char nd[32], path[96], mac[32] = "";
	FILE *f;

	if (agent_gid_netdev(a, nd, sizeof(nd)))
		return;
	snprintf(path, sizeof(path), "/sys/class/net/%s/address", nd);
	if ((f = fopen(path, "re"))) {
		if (fgets(mac, sizeof(mac), f))
			mac[strcspn(mac, "\n")] = 0;
		fclose(f);
	}
	json_object_set_new(o, "netdev", json_string(nd));
	if (mac[0])
		json_object_set_new(o, "mac", json_string(mac));
}

static int cmd_hello(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen)
{
	(void)conn;
	char gid[64], ip[32];
	struct ibv_port_attr pa;
	json_t *wls;
	const struct wl_ops *w;
	int i, r, narms = 0, njobs = 0;

	(void)args;
	if (a->no_rdma) {	/* no device: who it is, and that it runs nothing */
		*result = json_pack("{s:s,s:s,s:s,s:s,s:i,s:[],s:i,s:i}", "version", RTB_VERSION,
				    "name", a->name, "dev", "-", "state", "NO-RDMA", "pid",
				    (int)getpid(), "workloads", "arms", 0, "perftest_jobs", 0);
		if (*result)
			host_facts(*result);
		return *result ? 0 : -ENOMEM;
	}
	pthread_rwlock_rdlock(&a->dev_rw);	/* not while a nic reset has it closed */
	r = a->dev.ctx ? vb_port_query(&a->dev, &pa) : -ENODEV;
	if (r) {
		snprintf(err, errlen, "%s: port %u: %s", a->dev.name, a->dev.port,
			 r == -ENODEV ? "gone (a nic reset did not bring it back)" : strerror(-r));
		pthread_rwlock_unlock(&a->dev_rw);
		return r;
	}
	vb_gid_str(&a->dev.gid, gid, sizeof(gid));
	vb_gid_ipv4(&a->dev.gid, ip, sizeof(ip));
	pthread_mutex_lock(&a->lock);
	for (i = 0; i < AGENT_MAX_ARMS; i++)
		narms += a->arms[i] != NULL;
	for (i = 0; i < AGENT_MAX_JOBS; i++)
		njobs += a->jobs[i] != NULL;
	pthread_mutex_unlock(&a->lock);
	wls = json_array();
	for (i = 0; (w = wl_at(i)); i++)
		json_array_append_new(wls, json_string(w->name));
	*result = json_pack("{s:s,s:s,s:s,s:i,s:s,s:i,s:i,s:s,s:i,s:s,s:i,s:o,s:o,s:{s:i,s:i,s:i}}",
			    "version", RTB_VERSION, "name", a->name, "dev", a->dev.name, "port",
			    a->dev.port, "state", vb_port_state_name(pa.state), "active_mtu",
			    128 << pa.active_mtu, "max_mtu", 128 << pa.max_mtu, "gid", gid,
			    "gid_index", a->dev.gid_index, "ip", ip, "pid", (int)getpid(),
			    "workloads", wls, "hw_counters", hw_counter_names(a), "limits",
			    "max_qp", a->dev.attr.max_qp, "max_mr_size_mb",
			    (int)(a->dev.attr.max_mr_size >> 20), "max_qp_wr",
			    a->dev.attr.max_qp_wr);
	pthread_rwlock_unlock(&a->dev_rw);
	if (*result)
		netdev_facts(a, *result);
	if (*result) {
		char cs[64] = "";
		FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource",
				"re");
		uint64_t t0, t1;
		int k;

		if (f) {
			if (fgets(cs, sizeof(cs), f))
				cs[strcspn(cs, "\n")] = 0;
			fclose(f);
		}
		/* what one timestamp costs here (latencies include one) */
		t0 = rtb_now_ns();
		for (k = 0; k < 1000; k++)
			(void)rtb_now_ns();
		t1 = rtb_now_ns();
		json_object_set_new(*result, "clocksource", json_string(cs));
		json_object_set_new(*result, "clock_gettime_ns",
				    json_integer((json_int_t)(t1 - t0) / 1000));
		/* the node's CLOCK_MONOTONIC: what interval timestamps are in */
		json_object_set_new(*result, "now_ns",
				    json_integer((json_int_t)t1));
		json_object_set_new(*result, "qp_types", json_pack("[sss]", "rc", "uc", "ud"));
		json_object_set_new(*result, "arms", json_integer(narms));
		json_object_set_new(*result, "perftest_jobs", json_integer(njobs));
		host_facts(*result);
	}
	return *result ? 0 : -ENOMEM;
}

/* nothing but the answer: is the connection alive and served */
static int cmd_ping(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		    size_t errlen)
{
	(void)a;
	(void)args;
	(void)err;
	(void)errlen;
	/* now_ns: the node's CLOCK_MONOTONIC, for rdmactl to place this node's
	 * clock against its own (a kernel a node: each its own clock) */
	*result = json_pack("{s:I,s:I}", "conn", (json_int_t)conn, "now_ns",
			    (json_int_t)rtb_now_ns());
	return *result ? 0 : -ENOMEM;
}

/* a request as the dispatch table's handlers see it */
struct agent_req {
	struct agent *a;
	unsigned int conn;
	json_t *args, **result;
	char *err;
	size_t errlen;
};

/* every verb: its handler under the one dispatch table type (lib/cmd.h) */
#define VERB(fn)                                                                                   \
	static int verb_##fn(void *ctx, int argc, char **argv)                                     \
	{                                                                                          \
		struct agent_req *q = ctx;                                                         \
		(void)argc;                                                                        \
		(void)argv;                                                                        \
		return fn(q->a, q->conn, q->args, q->result, q->err, q->errlen);                   \
	}
VERB(cmd_ping)
VERB(cmd_hello)
VERB(arm_prepare)
VERB(arm_connect)
VERB(arm_start)
VERB(arm_wait)
VERB(arm_stop)
VERB(arm_destroy)
VERB(job_start)
VERB(job_wait)
VERB(inject_run)
VERB(hw_counters)
VERB(nic_reset)

static const struct cmd_entry cmds[] = {
	{ "ping", verb_cmd_ping, NULL },
	{ "hello", verb_cmd_hello, NULL },
	{ "prepare", verb_arm_prepare, NULL },
	{ "connect", verb_arm_connect, NULL },
	{ "start", verb_arm_start, NULL },
	{ "wait", verb_arm_wait, NULL },
	{ "stop", verb_arm_stop, NULL },
	{ "destroy", verb_arm_destroy, NULL },
	{ "perftest_start", verb_job_start, NULL },
	{ "perftest_wait", verb_job_wait, NULL },
	{ "inject", verb_inject_run, NULL },
	{ "counters", verb_hw_counters, NULL },
	{ "nic_reset", verb_nic_reset, NULL },
	{ NULL, NULL, NULL },
};

int agent_dispatch(struct agent *a, unsigned int conn, const char *cmd, json_t *args,
		   json_t **result, char *err, size_t errlen)
{
	struct agent_req q = { a, conn, args, result, err, errlen };
	char *word = (char *)cmd;
	int rc;

	if (a->no_rdma && strcmp(cmd, "ping") && strcmp(cmd, "hello") && strcmp(cmd, "inject")) {
		snprintf(err, errlen, "%s: this agent has no RDMA device (--no-rdma: the control "
			 "plane only)", cmd);
		return -EOPNOTSUPP;
	}
	if (cmd_exec(cmds, "command", &q, 1, &word, &rc, err, errlen))
		return -EINVAL;
	return rc;
}

static int reply(struct proto_sess *ps, int ok, json_t *result, const char *err)
{
	json_t *m;
	int r;

	if (ok)
		m = json_pack("{s:i,s:b,s:o}", "v", PROTO_VERSION, "ok", 1, "result",
			      result ? result : json_object());
	else
		m = json_pack("{s:i,s:b,s:s}", "v", PROTO_VERSION, "ok", 0, "error", err);
	if (!m)
		return -ENOMEM;
	r = proto_sess_send(ps, m, 10000);
	json_decref(m);
	return r;
}

/*
 * The lease: arms (and injector rules added with "lease") belong to the
 * connection that made them. When it closes -- the controller exited,
 * crashed or was killed, or keepalive found it gone (~4 s) -- its arms are
 * stopped and destroyed and its rules removed.
 */
static void keepalive(int fd)
{
	int on = 1, idle = 2, intvl = 1, cnt = 2;
	unsigned int silence = PROTO_SILENCE_MS;

	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	/* a reply unacknowledged this long: the controller is gone (not the
	 * kernel's default of about 15 minutes of retransmissions) */
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &silence, sizeof(silence));
}

/* strangers' failures: printed at most once a second (logs live in tmpfs) */
static struct log_limit auth_log, drop_log;

/* the handshake (lib/proto.h) and the authenticated pool: 0, or -1 (closed) */
static int authenticate(struct agent *a, int fd, int slot, struct proto_sess *ps)
{
	const char *why;
	int r;

	r = proto_auth_agent(ps, fd, a->token, AGENT_AUTH_TIMEOUT_MS, AGENT_AUTH_MAX_FRAME);
	if (r == -EPIPE)	/* closed at once: a port probe (wait-port, a scanner) */
		return -1;
	if (r) {
		log_limited(&auth_log, "control: %s from %s: %s", r == -EACCES ?
			    "authentication failed" : "no handshake", a->conns[slot].peer,
			    r == -EACCES ? "wrong proof" : strerror(-r));
		return -1;
	}
	if (agent_conn_authed(a, slot, &why)) {
		reply(ps, 0, NULL, why);
		log_limited(&drop_log, "control: refused an authenticated connection: %s", why);
		return -1;
	}
	return 0;
}

void agent_serve_conn(struct agent *a, int fd, int slot, void (*taken)(void *), void *arg)
{
	struct proto_sess ps;
	char err[512];
	json_t *req, *args, *result;
	const char *cmd;
	unsigned int conn;
	int r, n, nreq = 0;

	pthread_mutex_lock(&a->lock);
	conn = ++a->next_conn ? a->next_conn : ++a->next_conn;	/* never 0 */
	pthread_mutex_unlock(&a->lock);
	keepalive(fd);

	if (authenticate(a, fd, slot, &ps))
		goto out;
	for (;;) {
		r = proto_sess_recv(&ps, &req, -1);
		if (r) {
			if (r != -EPIPE)
				log_limited(&drop_log, "control: dropping connection %u: %s", conn,
					    r == -EBADMSG ? "a frame failed its authentication" :
							    strerror(-r));
			break;
		}
		if (++nreq == 2 && taken)	/* past the controller's park hello: in use */
			taken(arg);
		cmd = json_string_value(json_object_get(req, "cmd"));
		args = json_object_get(req, "args");
		if (!cmd || (args && !json_is_object(args))) {
			reply(&ps, 0, NULL, "malformed request");
			json_decref(req);
			continue;
		}
		result = NULL;
		err[0] = 0;
		if (!args)
			json_object_set_new(req, "args", args = json_object());
		r = agent_dispatch(a, conn, cmd, args, &result, err, sizeof(err));
		log_dbg("cmd %s: %s", cmd, r ? err : "ok");
		if (r && !err[0])
			snprintf(err, sizeof(err), "%s: %s", cmd, strerror(-r));
		r = reply(&ps, !r, result, err);
		json_decref(req);
		if (r)
			break;
	}
out:
	agent_conn_closing(a, slot);
	close(fd);
	/* the rules first: releasing an arm can wait on a stuck step (RC
	 * retrying forever), and an agent stopped meanwhile must not leave them */
	n = inject_release(a, conn);
	if (n)
		log_info("control connection %u closed: removed its %d leased rule(s)", conn, n);
	n = arm_release(a, conn);
	if (n)
		log_info("control connection %u closed: released its %d arm(s)", conn, n);
}

void agent_shutdown(struct agent *a)
{
	int n;

	/* a SIGTERM (e.g. its ssh session ending) must not leave rules behind:
	 * they go first, before anything that may wait */
	n = inject_release(a, 0);
	if (n)
		log_info("removed %d leased rule(s) on the way out", n);
	inject_quiesce(a, 20000);	/* a closing connection's, under way */
	/* every connection woken; their threads release what they own and
	 * exit before anything they may still touch is freed */
	if (agent_conns_close(a, 20000))
		log_info("some control connections still busy after 20 s");
	job_kill_all(a);
	arm_release(a, 0);
	inject_renewer_stop(a);
}
