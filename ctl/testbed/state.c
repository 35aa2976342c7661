// SPDX-License-Identifier: MIT
/*
 * The state of the one running testbed: $STATE/testbed.json and the token
 * beside it, its nodes, their agents (see testbed.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ctl/testbed/backend.h"
#include "lib/log.h"

static const char *const backend_names[] = { "auto", "vm", "host", "agents", NULL };

const char *tb_backend_name(enum tb_backend b)
{
	return b == TB_HOSTS ? "hosts" : backend_names[b];
}

int tb_backend_parse(const char *name, enum tb_backend *b)
{
	int i;

	for (i = 0; backend_names[i]; i++)
		if (!strcmp(backend_names[i], name)) {
			*b = (enum tb_backend)i;
			return 0;
		}
	return -EINVAL;
}

const char *tb_topology_name(enum tb_topology t)
{
	return t == TB_PER_NODE ? "per-node" : t == TB_SHARED ? "shared" : "auto";
}

int tb_per_node(const struct tb_state *s)
{
	return s->backend == TB_VM && s->topology == TB_PER_NODE;
}

const char *tb_ssh_host(int node, char *buf, size_t len)
{
	snprintf(buf, len, "rdma-testbed-node%d", node);
	return buf;
}

int tb_state_path(char *buf, size_t len, const char *file)
{
	return snprintf(buf, len, "%s/%s", ctl_state_dir(), file) >= (int)len ? -ENAMETOOLONG : 0;
}

/* node i's console log */
void tb_serial_path(const struct tb_state *s, int i, char *buf, size_t len)
{
	char name[32];

	if (s->topology == TB_PER_NODE)
		snprintf(name, sizeof(name), "serial-node%d.log", i);
	else
		snprintf(name, sizeof(name), "serial.log");
	tb_state_path(buf, len, name);
}

int tb_vm_kernel_said(const struct tb_state *s, int node, char *buf, size_t len)
{
	static const char *const bad[] = { "soft lockup", "hard LOCKUP", "Kernel panic", "BUG:",
					   "Oops", "hung_task", "blocked for more than" };
	char path[PATH_MAX], line[512];
	FILE *f;
	int found = 0;

	if (s->backend != TB_VM || node < 0 || node >= s->nodes)
		return 0;
	tb_serial_path(s, node, path, sizeof(path));
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f)) {	/* the first: what went wrong first */
		for (size_t k = 0; !found && k < sizeof(bad) / sizeof(bad[0]); k++)
			if (strstr(line, bad[k])) {
				line[strcspn(line, "\r\n")] = 0;
				snprintf(buf, len, "%s (%s)", line, path);
				found = 1;
			}
		if (found)
			break;
	}
	fclose(f);
	return found;
}

int tb_agent_open(struct agentc *c, const struct tb_state *s, int node, int timeout_ms)
{
	const struct tb_node *n = &s->node[node];
	char said[640];
	int r = agentc_open(c, n->name, n->host, n->port, s->token, timeout_ms);

	if (r && tb_vm_kernel_said(s, node, said, sizeof(said)))
		log_err("%s: its kernel: %s", n->name, said);
	return r;
}

int tb_is_agent(pid_t pid, const char *arg)
{
	char path[64], cmd[1024];
	size_t n, k;
	FILE *f;
	int exe = 0, has = 0;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	n = fread(cmd, 1, sizeof(cmd) - 1, f);
	fclose(f);
	cmd[n] = 0;
	for (k = 0; k < n; k += strlen(cmd + k) + 1) {
		const char *a = cmd + k, *b = strrchr(a, '/');

		if (!k)
			exe = !strcmp(b ? b + 1 : a, "rdma-agent");
		else if (!strcmp(a, arg))
			has = 1;
	}
	return exe && has;
}

int tb_switch_open(struct agentc *c, const struct tb_state *s, int timeout_ms)
{
	if (s->sw.port <= 0) {
		c->fd = -1;
		snprintf(c->where, sizeof(c->where), "switch");
		return -ENOENT;
	}
	return agentc_open(c, s->sw.name, s->sw.host, s->sw.port, s->token, timeout_ms);
}

int tb_save(const struct tb_state *s)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	json_t *o, *nodes;
	int i, r, fd;
	FILE *f;

	nodes = json_array();
	for (i = 0; i < s->nodes; i++) {
		json_t *n = json_pack("{s:s,s:s,s:s,s:i,s:i,s:i,s:i}", "name", s->node[i].name,
				      "dev", s->node[i].dev, "host", s->node[i].host, "port",
				      s->node[i].port, "agent_pid", (int)s->node[i].agent_pid,
				      "qemu_pid", (int)s->node[i].qemu_pid, "ssh_port",
				      s->node[i].ssh_port);

		if (n && s->node[i].kver[0])	/* its own kernel (testbed up --kernel) */
			json_object_set_new(n, "kernel", json_string(s->node[i].kver));
		json_array_append_new(nodes, n);
	}
	o = json_pack("{s:i,s:s,s:i,s:i,s:i,s:i,s:s,s:s,s:s,s:f,s:f,s:f,s:b,s:o}", "schema_version",
		      TB_SCHEMA, "backend", tb_backend_name(s->backend), "nodes_n", s->nodes, "mtu",
		      s->mtu, "netdev_mtu", s->netdev_mtu, "qemu_pid", (int)s->qemu_pid, "accel",
		      s->accel, "accel_why", s->accel_why, "kernel", s->kver, "up_s", s->up_s,
		      "image_s", s->image_s, "boot_s", s->boot_s, "image_built", s->image_built,
		      "nodes", nodes);
	if (!o)
		return -ENOMEM;
	json_object_set_new(o, "topology", json_string(tb_topology_name(s->topology)));
	json_object_set_new(o, "node_mem_mb", json_integer(s->node_mem_mb));
	if (s->kernel_path[0])
		json_object_set_new(o, "kernel_path", json_string(s->kernel_path));
	if (s->sw.port > 0)
		json_object_set_new(o, "switch", json_pack("{s:s,s:i,s:i,s:s}", "host", s->sw.host,
							   "port", s->sw.port, "agent_pid",
							   (int)s->sw.agent_pid, "kind",
							   s->switch_xdp ? "xdp" : "bridge"));
	/* written aside and renamed over: an agent reading the token while
	 * a later save writes it sees the whole of it, never an empty file */
	tb_state_path(path, sizeof(path), "token");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	r = fd < 0 ? -errno : dprintf(fd, "%s\n", s->token) < 0 ? -errno : 0;
	if (fd >= 0 && close(fd) && !r)
		r = -errno;
	if (!r && rename(tmp, path))
		r = -errno;
	if (r) {
		if (fd >= 0)
			unlink(tmp);
		json_decref(o);
		return r;
	}
	tb_state_path(path, sizeof(path), "testbed.json");
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

int tb_load_rdma(struct tb_state *s)
{
	int r = tb_load(s);

	if (!r && s->backend == TB_AGENTS) {
		log_err("the testbed up is agents only (--backend agents, %d agents without RDMA): "
			"no workload runs there ('rdmactl testbed down' first)", s->nodes);
		return -EOPNOTSUPP;
	}
	return r;
}

int tb_load(struct tb_state *s)
{
	char path[PATH_MAX];
	const char *backend, *accel, *why, *kver, *topo;
	json_error_t jerr;
	json_t *o, *nodes, *n;
	size_t i;
	int r;

	memset(s, 0, sizeof(*s));
	tb_state_path(path, sizeof(path), "testbed.json");
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
	if (r || s->nodes < 1 || s->nodes > TB_MAX_AGENTS ||
	    json_array_size(nodes) != (size_t)s->nodes)
		goto bad;
	s->backend = !strcmp(backend, "host") ? TB_HOST : !strcmp(backend, "agents") ? TB_AGENTS : TB_VM;
	if (s->backend != TB_AGENTS && s->nodes > TB_MAX_NODES)
		goto bad;
	topo = json_string_value(json_object_get(o, "topology"));
	s->topology = topo && !strcmp(topo, "per-node") ? TB_PER_NODE : TB_SHARED;
	s->node_mem_mb = (int)json_integer_value(json_object_get(o, "node_mem_mb"));
	snprintf(s->kernel_path, sizeof(s->kernel_path), "%s",
		 json_string_value(json_object_get(o, "kernel_path")) ?: "");
	{
		json_t *sw = json_object_get(o, "switch");
		const char *h = json_string_value(json_object_get(sw, "host"));

		if (sw && h) {
			const char *kind = json_string_value(json_object_get(sw, "kind"));

			s->switch_xdp = kind && !strcmp(kind, "xdp");
			snprintf(s->sw.name, sizeof(s->sw.name), "switch");
			snprintf(s->sw.dev, sizeof(s->sw.dev), "-");
			snprintf(s->sw.host, sizeof(s->sw.host), "%s", h);
			s->sw.port = (int)json_integer_value(json_object_get(sw, "port"));
			s->sw.agent_pid = (pid_t)json_integer_value(json_object_get(sw, "agent_pid"));
		}
	}
	snprintf(s->accel, sizeof(s->accel), "%s", accel);
	snprintf(s->accel_why, sizeof(s->accel_why), "%s", why);
	snprintf(s->kver, sizeof(s->kver), "%s", kver);
	json_array_foreach(nodes, i, n) {
		const char *name, *dev, *host;
		struct tb_node *d = &s->node[i];

		if (json_unpack(n, "{s:s,s:s,s:s,s:i,s:i}", "name", &name, "dev", &dev, "host", &host,
				"port", &d->port, "agent_pid", &d->agent_pid))
			goto bad;
		d->qemu_pid = (pid_t)json_integer_value(json_object_get(n, "qemu_pid"));
		d->ssh_port = (int)json_integer_value(json_object_get(n, "ssh_port"));
		snprintf(d->kver, sizeof(d->kver), "%s",
			 json_string_value(json_object_get(n, "kernel")) ?: "");
		snprintf(d->name, sizeof(d->name), "%s", name);
		snprintf(d->dev, sizeof(d->dev), "%s", dev);
		snprintf(d->host, sizeof(d->host), "%s", host);
	}
	json_decref(o);
	tb_state_path(path, sizeof(path), "token");
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
	return -ENOENT;
}

double tb_cache_seconds(const char *name, double set)
{
	char path[PATH_MAX];
	double v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.s", ctl_cache_dir(), name);
	if (set > 0) {
		f = fopen(path, "we");
		if (f) {
			fprintf(f, "%.1f\n", set);
			fclose(f);
		}
		return set;
	}
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%lf", &v) != 1 || v < 0 || v > 3600)
			v = 0;
		fclose(f);
	}
	return v;
}

/* how long the last wait for this backend's agents took (the cache keeps
 * it): the ETA of the next; 0 when unknown */
static double last_wait_s(const struct tb_state *s, double set)
{
	char name[64];

	if (s->backend == TB_VM)	/* a kernel a node boots in another time than one */
		snprintf(name, sizeof(name), "wait-vm-%s-%d", tb_topology_name(s->topology), s->nodes);
	else
		snprintf(name, sizeof(name), "wait-%s-%d", tb_backend_name(s->backend), s->nodes);
	return tb_cache_seconds(name, set);
}

void tb_progress(const char *what, double el, double eta_total, int done)
{
	if (!isatty(2) || log_verbose < 0)
		return;
	if (done)
		fprintf(stderr, "\r%-72s\r", "");
	else if (eta_total > el)
		fprintf(stderr, "\r  %s, %.0f s, ETA %.0f s   ", what, el, eta_total - el);
	else
		fprintf(stderr, "\r  %s, %.0f s   ", what, el);
}

/* on a terminal: a line that says how far the wait is, with an ETA from
 * the last wait of the same kind */
static void wait_progress(int nok, int n, double el, double eta_total, int done)
{
	char what[64];

	snprintf(what, sizeof(what), "waiting for the agents: %d/%d ready", nok, n);
	tb_progress(what, el, eta_total, done);
}

int tb_wait_agents(const struct tb_state *s, int timeout_s, int (*alive)(const struct tb_state *))
{
	int ok[TB_MAX_AGENTS] = { 0 }, nok = 0, i, last_report = -1, r = 0;
	double t0 = rtb_now_s(), eta = last_wait_s(s, 0);
	struct timespec ts = { 0, 250 * 1000 * 1000 };
	char err[256];

	while (nok < s->nodes) {
		for (i = 0; i < s->nodes; i++) {
			struct agentc c;
			json_t *res;

			if (ok[i] || tb_agent_open(&c, s, i, 1000))
				continue;
			if (!agentc_call(&c, "hello", NULL, &res, 3000, err, sizeof(err))) {
				const char *st = json_string_value(json_object_get(res, "state"));

				/* reachable is not enough: the port must be ACTIVE */
				if (st && !strcmp(st, s->backend == TB_AGENTS ? "NO-RDMA" : "ACTIVE")) {
					ok[i] = 1;
					nok++;
				}
				json_decref(res);
			}
			agentc_close(&c);
		}
		if (nok == s->nodes)
			break;
		if (ctl_interrupted)
			r = -EINTR;
		else if (!alive(s))
			r = -ECHILD;
		else if (rtb_now_s() - t0 > timeout_s)
			r = -ETIMEDOUT;
		if (r)
			break;
		wait_progress(nok, s->nodes, rtb_now_s() - t0, eta, 0);
		if (!isatty(2) && (int)(rtb_now_s() - t0) / 10 != last_report) {
			last_report = (int)(rtb_now_s() - t0) / 10;
			if (last_report)
				log_info("testbed: %d/%d agents ready after %.0f s", nok, s->nodes,
					 rtb_now_s() - t0);
		}
		nanosleep(&ts, NULL);
	}
	wait_progress(nok, s->nodes, 0, 0, 1);
	if (!r)
		last_wait_s(s, rtb_now_s() - t0);
	return r;
}

