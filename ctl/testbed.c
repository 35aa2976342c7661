// SPDX-License-Identifier: MIT
/*
 * rdmactl testbed up|status|down: N SoftRoCE nodes with one agent each,
 * in a VM (any Linux host) or directly on a host whose kernel has rdma_rxe.
 * The state of the one running testbed is $STATE/testbed.json (+ token);
 * `down` removes the whole state directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ctl.h"
#include "../lib/log.h"
#include "../lib/num.h"

static const char *const backend_names[] = { "auto", "vm", "host", NULL };

/* Ctrl-C / SIGTERM during `up`: stop waiting and tear down what was started */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

const char *tb_backend_name(enum tb_backend b)
{
	return b == TB_HOSTS ? "hosts" : backend_names[b];
}

static int path_in_state(char *buf, size_t len, const char *file)
{
	return snprintf(buf, len, "%s/%s", ctl_state_dir(), file) >= (int)len ? -ENAMETOOLONG : 0;
}

int tb_gen_token(char *buf, size_t len)
{
	unsigned char raw[24];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	size_t i;

	if (fd < 0 || read(fd, raw, sizeof(raw)) != (ssize_t)sizeof(raw)) {
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	close(fd);
	for (i = 0; i < sizeof(raw) && 2 * i + 2 < len; i++)
		snprintf(buf + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

int tb_save(const struct tb_state *s)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	json_t *o, *nodes;
	int i, r, fd;
	FILE *f;

	nodes = json_array();
	for (i = 0; i < s->nodes; i++)
		json_array_append_new(nodes, json_pack("{s:s,s:s,s:s,s:i,s:i}", "name",
						       s->node[i].name, "dev", s->node[i].dev, "host",
						       s->node[i].host, "port", s->node[i].port,
						       "agent_pid", (int)s->node[i].agent_pid));
	o = json_pack("{s:i,s:s,s:i,s:i,s:i,s:i,s:s,s:s,s:s,s:f,s:f,s:f,s:b,s:o}", "schema_version",
		      TB_SCHEMA, "backend", tb_backend_name(s->backend), "nodes_n", s->nodes, "mtu",
		      s->mtu, "netdev_mtu", s->netdev_mtu, "qemu_pid", (int)s->qemu_pid, "accel",
		      s->accel, "accel_why", s->accel_why, "kernel", s->kver, "up_s", s->up_s,
		      "image_s", s->image_s, "boot_s", s->boot_s, "image_built", s->image_built,
		      "nodes", nodes);
	if (!o)
		return -ENOMEM;
	path_in_state(path, sizeof(path), "token");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || dprintf(fd, "%s\n", s->token) < 0) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		json_decref(o);
		return r;
	}
	close(fd);
	path_in_state(path, sizeof(path), "testbed.json");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f) {
		json_decref(o);
		return -errno;
	}
	r = json_dumpf(o, f, JSON_INDENT(2));
	json_decref(o);
	if (fclose(f) || r || rename(tmp, path)) {
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

int tb_load(struct tb_state *s)
{
	char path[PATH_MAX];
	const char *backend, *accel, *why, *kver;
	json_error_t jerr;
	json_t *o, *nodes, *n;
	size_t i;
	int r;

	memset(s, 0, sizeof(*s));
	path_in_state(path, sizeof(path), "testbed.json");
	if (access(path, F_OK))
		return -ENOENT;
	o = json_load_file(path, 0, &jerr);
	if (!o) {
		log_err("%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	r = json_unpack(o, "{s:s,s:i,s:i,s:i,s:i,s:s,s:s,s:s,s:F,s:F,s:F,s:b,s:o}", "backend",
			&backend, "nodes_n", &s->nodes, "mtu", &s->mtu, "netdev_mtu", &s->netdev_mtu,
			"qemu_pid", &s->qemu_pid, "accel", &accel, "accel_why", &why, "kernel", &kver,
			"up_s", &s->up_s, "image_s", &s->image_s, "boot_s", &s->boot_s,
			"image_built", &s->image_built, "nodes", &nodes);
	if (r || s->nodes < 1 || s->nodes > TB_MAX_NODES || json_array_size(nodes) != (size_t)s->nodes)
		goto bad;
	s->backend = !strcmp(backend, "host") ? TB_HOST : TB_VM;
	snprintf(s->accel, sizeof(s->accel), "%s", accel);
	snprintf(s->accel_why, sizeof(s->accel_why), "%s", why);
	snprintf(s->kver, sizeof(s->kver), "%s", kver);
	json_array_foreach(nodes, i, n) {
		const char *name, *dev, *host;
		struct tb_node *d = &s->node[i];

		if (json_unpack(n, "{s:s,s:s,s:s,s:i,s:i}", "name", &name, "dev", &dev, "host", &host,
				"port", &d->port, "agent_pid", &d->agent_pid))
			goto bad;
		snprintf(d->name, sizeof(d->name), "%s", name);
		snprintf(d->dev, sizeof(d->dev), "%s", dev);
		snprintf(d->host, sizeof(d->host), "%s", host);
	}
	json_decref(o);
	path_in_state(path, sizeof(path), "token");
	r = proto_token_load(path, s->token, sizeof(s->token));
	if (r) {
		log_err("%s: unreadable token: %s", path, strerror(-r));
		return r;
	}
	return 0;
bad:
	log_err("%s: malformed testbed state", path);
	json_decref(o);
	return -EINVAL;
}

int tb_node_index(const struct tb_state *s, const char *name)
{
	char *end;
	long i;
	int k;

	for (k = 0; k < s->nodes; k++)
		if (!strcmp(s->node[k].name, name))
			return k;
	i = strtol(name, &end, 10);
	if (*name && !*end && i >= 0 && i < s->nodes)
		return (int)i;
	return -1;
}

int tb_wait_agents(const struct tb_state *s, int timeout_s, int (*alive)(const struct tb_state *))
{
	int ok[TB_MAX_NODES] = { 0 }, nok = 0, i, last_report = -1;
	double t0 = ctl_now();
	struct timespec ts = { 0, 250 * 1000 * 1000 };
	char err[256];

	while (nok < s->nodes) {
		for (i = 0; i < s->nodes; i++) {
			struct agentc c;
			json_t *res;

			if (ok[i] || agentc_open(&c, s, i, 1000))
				continue;
			if (!agentc_call(&c, "hello", NULL, &res, 3000, err, sizeof(err))) {
				const char *st = json_string_value(json_object_get(res, "state"));

				/* reachable is not enough: the port must be ACTIVE */
				if (st && !strcmp(st, "ACTIVE")) {
					ok[i] = 1;
					nok++;
				}
				json_decref(res);
			}
			agentc_close(&c);
		}
		if (nok == s->nodes)
			break;
		if (interrupted)
			return -EINTR;
		if (!alive(s))
			return -ECHILD;
		if (ctl_now() - t0 > timeout_s)
			return -ETIMEDOUT;
		if ((int)(ctl_now() - t0) / 10 != last_report) {
			last_report = (int)(ctl_now() - t0) / 10;
			if (last_report)
				log_info("testbed: %d/%d agents ready after %.0f s", nok, s->nodes,
					 ctl_now() - t0);
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* serialises up/down: one testbed per state directory */
static int lock_state(void)
{
	char path[PATH_MAX];
	int fd, r;

	r = ctl_mkdir_p(ctl_state_dir(), 0700);
	if (r) {
		log_err("%s: cannot create state directory: %s", ctl_state_dir(), strerror(-r));
		return r;
	}
	path_in_state(path, sizeof(path), "lock");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		log_err("another rdmactl is bringing the testbed up or down; waiting");
		flock(fd, LOCK_EX);
	}
	return fd;
}

static int backend_alive(const struct tb_state *s)
{
	return s->backend == TB_HOST ? host_alive(s) : vm_alive(s);
}

static int teardown(const struct tb_state *s)
{
	int r = s->backend == TB_HOST ? host_down(s) : vm_down(s);
	int r2 = ctl_rm_rf(ctl_state_dir());

	return r ? r : r2;
}

static void up_usage(FILE *f)
{
	fprintf(f, "usage: rdmactl testbed up [--nodes N] [--backend auto|vm|host] [--mtu M]\n"
		   "                          [--timeout SECONDS] [--mem MiB] [--accel auto|kvm|tcg]\n"
		   "  --nodes N      SoftRoCE nodes (1..%d, default 3)\n"
		   "  --backend B    vm: qemu VM with Debian's kernel (works anywhere);\n"
		   "                 host: this kernel's rdma_rxe; auto: host if rdma_rxe loads\n"
		   "  --mtu M        RoCE path MTU: 256|512|1024|2048|4096 (default 1024)\n"
		   "  --timeout S    give up when the agents are not ready after S s (default 300)\n"
		   "  --mem MiB      VM memory (default 1024 + 64 per node above 3)\n"
		   "  --accel A      VM accelerator; auto probes KVM and falls back to TCG\n",
		TB_MAX_NODES);
}

static int parse_u(const char *opt, const char *v, uint64_t min, uint64_t max, int *out)
{
	const char *why;
	uint64_t x;

	if (num_parse(v, NUM_PLAIN, min, max, &x, &why)) {
		log_err("%s '%s': %s (%llu..%llu)", opt, v, why, (unsigned long long)min,
			(unsigned long long)max);
		return -EINVAL;
	}
	*out = (int)x;
	return 0;
}

static int testbed_up(struct ctl *ctl, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "backend", required_argument, NULL, 'b' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "mem", required_argument, NULL, 'M' },
		{ "accel", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tb_up_opts o = { .nodes = 3, .mtu = 1024, .timeout_s = 300, .accel = "auto" };
	enum tb_backend backend = TB_AUTO;
	struct tb_state s, cur;
	int c, r, lockfd, i;
	double t0 = ctl_now();

	(void)ctl;
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:b:m:t:M:a:h", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_u("--nodes", optarg, 1, TB_MAX_NODES, &o.nodes))
				return 2;
			break;
		case 'b':
			for (i = 0; backend_names[i] && strcmp(backend_names[i], optarg); i++)
				;
			if (!backend_names[i]) {
				log_err("--backend '%s': expected auto|vm|host", optarg);
				return 2;
			}
			backend = (enum tb_backend)i;
			break;
		case 'm':
			if (parse_u("--mtu", optarg, 256, 4096, &o.mtu))
				return 2;
			if (o.mtu & (o.mtu - 1)) {
				log_err("--mtu '%s': expected 256|512|1024|2048|4096", optarg);
				return 2;
			}
			break;
		case 't':
			if (parse_u("--timeout", optarg, 10, 3600, &o.timeout_s))
				return 2;
			break;
		case 'M':
			if (parse_u("--mem", optarg, 256, 65536, &o.mem_mb))
				return 2;
			break;
		case 'a':
			if (strcmp(optarg, "auto") && strcmp(optarg, "kvm") && strcmp(optarg, "tcg")) {
				log_err("--accel '%s': expected auto|kvm|tcg", optarg);
				return 2;
			}
			o.accel = optarg;
			break;
		case 'h':
			up_usage(stdout);
			return 0;
		default:
			up_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		log_err("testbed up: unexpected argument '%s'", argv[optind]);
		return 2;
	}
	if (!o.mem_mb)
		o.mem_mb = 1024 + (o.nodes > 3 ? 64 * (o.nodes - 3) : 0);
	if (geteuid() != 0) {
		log_err("testbed up: needs root (qemu's image build reads kernel modules; the host "
			"backend changes routing)");
		return 1;
	}
	lockfd = lock_state();
	if (lockfd < 0)
		return 1;
	r = tb_load(&cur);
	if (!r && backend_alive(&cur)) {
		log_err("a testbed is already up: %d nodes, backend %s, state in %s; run "
			"'rdmactl testbed down' first",
			cur.nodes, tb_backend_name(cur.backend), ctl_state_dir());
		close(lockfd);
		return 1;
	}
	if (!r || r == -EINVAL) {
		log_info("removing the state of a testbed that is no longer running");
		if (!r)
			teardown(&cur);
		else
			ctl_rm_rf(ctl_state_dir());
		close(lockfd);
		lockfd = lock_state();
		if (lockfd < 0)
			return 1;
	}
	if (backend == TB_AUTO) {
		backend = host_rxe_available() ? TB_HOST : TB_VM;
		log_info("backend auto: %s", backend == TB_HOST ?
				"host (this kernel has rdma_rxe)" :
				"vm (this kernel has no rdma_rxe)");
	}
	{
		struct sigaction sa = { .sa_handler = on_interrupt };

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	memset(&s, 0, sizeof(s));
	s.backend = backend;
	s.nodes = o.nodes;
	s.mtu = o.mtu;
	s.netdev_mtu = o.mtu + 128; /* rxe: active MTU = netdev MTU - headers, rounded down */
	r = backend == TB_HOST ? host_up(&s, &o) : vm_up(&s, &o);
	if (!r && interrupted)
		r = -EINTR;
	if (r) {
		if (r == -EINTR)
			log_err("testbed up: interrupted; tearing down what was started");
		teardown(&s);
		close(lockfd);
		return r == -EINTR ? 130 : 1;
	}
	s.up_s = ctl_now() - t0;
	r = tb_save(&s);
	if (r) {
		log_err("%s: cannot save testbed state: %s", ctl_state_dir(), strerror(-r));
		teardown(&s);
		close(lockfd);
		return 1;
	}
	close(lockfd);
	if (s.backend == TB_VM)
		printf("testbed up: %d nodes, backend vm, accel %s, %.1f s (image %.1f s, %s; "
		       "boot to agents ready %.1f s)\n",
		       s.nodes, s.accel, s.up_s, s.image_s, s.image_built ? "built" : "cached",
		       s.boot_s);
	else
		printf("testbed up: %d nodes, backend host, %.1f s\n", s.nodes, s.up_s);
	return 0;
}

static json_t *node_status(const struct tb_state *s, int i)
{
	struct agentc c;
	json_t *res = NULL, *o;
	char err[256] = "";
	int r;

	r = agentc_open(&c, s, i, 2000);
	if (!r) {
		r = agentc_call(&c, "hello", NULL, &res, 5000, err, sizeof(err));
		agentc_close(&c);
	} else {
		snprintf(err, sizeof(err), "%s: %s", c.where, strerror(-r));
	}
	o = json_pack("{s:s,s:s,s:s,s:i}", "name", s->node[i].name, "dev", s->node[i].dev,
		      "agent_host", s->node[i].host, "agent_port", s->node[i].port);
	json_object_set_new(o, "agent_reachable", json_boolean(!r));
	if (r) {
		json_object_set_new(o, "state", json_string("unknown"));
		json_object_set_new(o, "error", json_string(err));
		return o;
	}
	json_object_set(o, "state", json_object_get(res, "state"));
	json_object_set(o, "active_mtu", json_object_get(res, "active_mtu"));
	json_object_set(o, "gid", json_object_get(res, "gid"));
	json_object_set(o, "gid_index", json_object_get(res, "gid_index"));
	json_object_set(o, "ip", json_object_get(res, "ip"));
	json_object_set(o, "agent_pid", json_object_get(res, "pid"));
	json_object_set(o, "agent_version", json_object_get(res, "version"));
	json_object_set(o, "hw_counters", json_object_get(res, "hw_counters"));
	json_object_set(o, "arms", json_object_get(res, "arms"));
	json_object_set(o, "clocksource", json_object_get(res, "clocksource"));
	json_object_set(o, "clock_gettime_ns", json_object_get(res, "clock_gettime_ns"));
	json_decref(res);
	return o;
}

static int testbed_status(struct ctl *ctl, int argc, char **argv)
{
	struct tb_state s;
	json_t *o, *nodes;
	int r, i, bad = 0, alive;

	if (argc > 1) {
		log_err("testbed status: unexpected argument '%s'", argv[1]);
		return 2;
	}
	r = tb_load(&s);
	if (r == -ENOENT) {
		if (ctl->json)
			printf("{\"schema_version\": %d, \"up\": false}\n", TB_SCHEMA);
		else
			printf("no testbed is up\n");
		return 1;
	}
	if (r)
		return 1;
	alive = backend_alive(&s);
	nodes = json_array();
	for (i = 0; i < s.nodes; i++) {
		json_t *n = alive ? node_status(&s, i) :
				    json_pack("{s:s,s:s,s:b,s:s}", "name", s.node[i].name, "dev",
					      s.node[i].dev, "agent_reachable", 0, "state", "unknown");

		if (!json_is_true(json_object_get(n, "agent_reachable")) ||
		    strcmp(json_string_value(json_object_get(n, "state")), "ACTIVE"))
			bad++;
		json_array_append_new(nodes, n);
	}
	o = json_pack("{s:i,s:b,s:b,s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:f,s:o}", "schema_version",
		      TB_SCHEMA, "up", 1, "healthy", alive && !bad, "backend",
		      tb_backend_name(s.backend), "accel", s.accel, "accel_reason", s.accel_why,
		      "kernel", s.kver, "qemu_pid", (int)s.qemu_pid, "mtu", s.mtu, "netdev_mtu",
		      s.netdev_mtu, "up_s", s.up_s, "nodes", nodes);
	if (ctl->json) {
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		printf("testbed: %d nodes, backend %s", s.nodes, tb_backend_name(s.backend));
		if (s.backend == TB_VM)
			printf(" (qemu pid %d, %s: %s, kernel %s)", (int)s.qemu_pid, s.accel,
			       s.accel_why, s.kver);
		printf("%s\n", alive ? "" : " -- NOT RUNNING");
		printf("%-8s %-8s %-12s %6s %-24s %4s %-16s %s\n", "NODE", "DEVICE", "STATE", "MTU",
		       "GID", "IDX", "AGENT", "REACHABLE");
		for (i = 0; i < s.nodes; i++) {
			json_t *n = json_array_get(nodes, i);
			const char *st = json_string_value(json_object_get(n, "state"));
			char ep[48];

			snprintf(ep, sizeof(ep), "%s:%d", s.node[i].host, s.node[i].port);
			printf("%-8s %-8s %-12s %6lld %-24s %4lld %-16s %s\n", s.node[i].name,
			       s.node[i].dev, st,
			       json_integer_value(json_object_get(n, "active_mtu")),
			       json_string_value(json_object_get(n, "gid")) ?: "-",
			       json_integer_value(json_object_get(n, "gid_index")), ep,
			       json_is_true(json_object_get(n, "agent_reachable")) ? "yes" : "NO");
		}
	}
	json_decref(o);
	return alive && !bad ? 0 : 1;
}

static int testbed_down(struct ctl *ctl, int argc, char **argv)
{
	struct tb_state s;
	int r, lockfd;

	(void)ctl;
	if (argc > 1) {
		log_err("testbed down: unexpected argument '%s'", argv[1]);
		return 2;
	}
	if (access(ctl_state_dir(), F_OK)) {
		printf("no testbed is up\n");
		return 0;
	}
	lockfd = lock_state();
	if (lockfd < 0)
		return 1;
	r = tb_load(&s);
	if (r == -ENOENT) {
		close(lockfd);
		ctl_rm_rf(ctl_state_dir());
		printf("no testbed is up\n");
		return 0;
	}
	if (r) {
		close(lockfd);
		ctl_rm_rf(ctl_state_dir());
		return 1;
	}
	r = teardown(&s);
	close(lockfd);
	if (r) {
		log_err("testbed down: incomplete: %s", strerror(-r));
		return 1;
	}
	printf("testbed down: %d nodes, backend %s\n", s.nodes, tb_backend_name(s.backend));
	return 0;
}

int cmd_testbed(struct ctl *ctl, int argc, char **argv)
{
	static const struct {
		const char *verb;
		int (*fn)(struct ctl *, int, char **);
	} verbs[] = {
		{ "up", testbed_up },
		{ "status", testbed_status },
		{ "down", testbed_down },
		{ NULL, NULL },
	};
	int i;

	if (argc < 1) {
		log_err("testbed: expected up|status|down");
		return 2;
	}
	for (i = 0; verbs[i].verb; i++)
		if (!strcmp(verbs[i].verb, argv[0]))
			return verbs[i].fn(ctl, argc, argv);
	log_err("testbed: unknown verb '%s' (expected up|status|down)", argv[0]);
	return 2;
}
