// SPDX-License-Identifier: MIT
/*
 * rdmactl testbed up|status|down: N SoftRoCE nodes with one agent each,
 * in a VM (any Linux host) or directly on a host whose kernel has rdma_rxe.
 * The backends are ops tables (backend.h); this file drives them and owns
 * the lock that serialises up and down. `down` removes the whole state
 * directory.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctl/testbed/backend.h"
#include "lib/cmd.h"
#include "lib/log.h"
#include "lib/opt.h"

static void on_interrupt(int sig)
{
	(void)sig;
	ctl_interrupted = 1;
}

/* serialises up/down: one testbed per state directory */
static int lock_state(void)
{
	char path[PATH_MAX];
	int fd, r;

	struct stat st;

	r = ctl_mkdir_p(ctl_state_dir(), 0700);
	if (r) {
		log_err("%s: cannot create state directory: %s", ctl_state_dir(), strerror(-r));
		return r;
	}
	/* it holds the token and ssh keys: a real directory of ours, closed to others */
	if (lstat(ctl_state_dir(), &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		log_err("%s: not a directory of this user's that only it can write (make another "
			"RDMATB_STATE_DIR)", ctl_state_dir());
		return -EPERM;
	}
	tb_state_path(path, sizeof(path), "lock");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		log_err("another rdmactl is bringing the testbed up or down; waiting");
		flock(fd, LOCK_EX);
	}
	return fd;
}

/*
 * The state directory's own entries, and only those: RDMATB_STATE_DIR may
 * name a directory that holds other things (it used to be removed whole).
 * The directory itself goes once it is empty.
 */
static int state_remove(void)
{
	static const char *const files[] = { "testbed.json", "testbed.json.tmp", "token", "lock",
					     "qemu.pid", "qemu.log", "serial.log", "kvm-probe.log",
					     "initrd.cpio", "live.json", "live.json.tmp",
					     "switch-agent.log", NULL };
	static const char *const dirs[] = { "ssh", "overlay", NULL };
	char path[PATH_MAX];
	int i, r = 0;

	for (i = 0; files[i]; i++) {
		tb_state_path(path, sizeof(path), files[i]);
		if (unlink(path) && errno != ENOENT && !r)
			r = -errno;
	}
	for (i = 0; i < TB_MAX_AGENTS; i++) {	/* the host backends' agent logs */
		static const char *const per_node[] = { "agent%d.log", "qemu-node%d.pid",
							 "qemu-node%d.log", "serial-node%d.log", NULL };
		char name[32];
		int k;

		for (k = 0; per_node[k] && (!k || i < TB_MAX_NODES); k++) {
			snprintf(name, sizeof(name), per_node[k], i);
			tb_state_path(path, sizeof(path), name);
			if (unlink(path) && errno != ENOENT && !r)
				r = -errno;
		}
	}
	for (i = 0; dirs[i]; i++) {
		tb_state_path(path, sizeof(path), dirs[i]);
		if (!access(path, F_OK) && ctl_rm_rf(path) && !r)
			r = -EIO;
	}
	{	/* per-node VMs with kernels of their own: initrd-KVER.cpio each */
		DIR *d = opendir(ctl_state_dir());
		struct dirent *de;

		while (d && (de = readdir(d))) {
			size_t n = strlen(de->d_name);

			if (strncmp(de->d_name, "initrd-", 7) || n < 13 ||
			    strcmp(de->d_name + n - 5, ".cpio"))
				continue;
			tb_state_path(path, sizeof(path), de->d_name);
			if (unlink(path) && errno != ENOENT && !r)
				r = -errno;
		}
		if (d)
			closedir(d);
	}
	if (rmdir(ctl_state_dir()) && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST && !r)
		r = -errno;
	return r;
}

/* the backend down, then its state; the state stays when something of the
 * testbed may still be running (qemu did not stop): down can be tried again */
static int teardown(const struct tb_state *s)
{
	int r = tb_ops(s->backend)->down(s);

	if (r) {
		log_err("the testbed did not stop cleanly (%s): its state stays in %s for another "
			"'rdmactl testbed down'", strerror(-r), ctl_state_dir());
		return r;
	}
	return state_remove();
}

/* under the lock: no live testbed, and no state of a dead one left */
static int clear_stale(int *lockfd)
{
	struct tb_state cur;
	int r = tb_load(&cur);

	if (!r && tb_ops(cur.backend)->alive(&cur)) {
		log_err("a testbed is already up: %d nodes, backend %s, state in %s; run "
			"'rdmactl testbed down' first",
			cur.nodes, tb_backend_name(cur.backend), ctl_state_dir());
		return -EEXIST;
	}
	if (r && r != -EINVAL)
		return 0;
	log_info("removing the state of a testbed that is no longer running");
	if (!r)
		teardown(&cur);
	else
		state_remove();
	close(*lockfd);
	*lockfd = lock_state();
	return *lockfd < 0 ? *lockfd : 0;
}

static void print_up(const struct tb_state *s)
{
	if (s->backend == TB_VM)
		printf("testbed up: %d nodes, backend vm (%s), accel %s, %.1f s (image %.1f s, %s; "
		       "boot to agents ready %.1f s)\n",
		       s->nodes, s->topology != TB_PER_NODE ? "one shared kernel" :
		       s->switch_xdp ? "a kernel per node, switch rdma-inject forward (XDP)" :
				       "a kernel per node",
		       s->accel, s->up_s, s->image_s, s->image_built ? "built" : "cached", s->boot_s);
	else
		printf("testbed up: %d nodes, backend %s, %.1f s\n", s->nodes,
		       tb_backend_name(s->backend), s->up_s);
}

int tb_up(const struct tb_up_opts *o)
{
	struct sigaction sa = { .sa_handler = on_interrupt }, oldi, oldt;
	enum tb_backend backend = o->backend;
	double t0 = rtb_now_s();
	struct tb_up_opts eff = *o;
	struct tb_state s;
	int r, lockfd;

	if (geteuid() != 0) {
		log_err("testbed up: needs root (qemu's image build reads kernel modules; the host "
			"backend changes routing)");
		return -EPERM;
	}
	lockfd = lock_state();
	if (lockfd < 0)
		return lockfd;
	r = clear_stale(&lockfd);
	if (r) {
		if (lockfd >= 0)
			close(lockfd);
		return r;
	}
	if (backend == TB_AUTO) {
		backend = tb_host_ops.available() ? TB_HOST : TB_VM;
		log_info("backend auto: %s", backend == TB_HOST ? "host (this kernel has rdma_rxe)" :
				"vm (this kernel has no rdma_rxe)");
	}
	if (eff.topology == TB_TOPO_AUTO) {
		eff.topology = backend == TB_VM && eff.nodes <= TB_PER_NODE_AUTO_MAX ?
			       TB_PER_NODE : TB_SHARED;
		if (backend == TB_VM)
			log_info("topology auto: %s", eff.topology == TB_PER_NODE ?
				 "per-node (a kernel a node, at most " TB_STR(TB_PER_NODE_AUTO_MAX) " nodes)" :
				 "shared (one kernel for more than " TB_STR(TB_PER_NODE_AUTO_MAX) " nodes)");
	}
	if (!eff.mem_mb && eff.topology == TB_SHARED)
		eff.mem_mb = 1024 + (eff.nodes > 3 ? 64 * (eff.nodes - 3) : 0);
	sigaction(SIGINT, &sa, &oldi);
	sigaction(SIGTERM, &sa, &oldt);
	memset(&s, 0, sizeof(s));
	s.backend = backend;
	s.nodes = eff.nodes;
	s.mtu = eff.mtu;
	s.netdev_mtu = eff.mtu + 128; /* rxe: active MTU = netdev MTU - headers, rounded down */
	s.switch_xdp = eff.switch_xdp;
	r = tb_ops(backend)->up(&s, &eff);
	if (!r && ctl_interrupted)
		r = -EINTR;
	if (!r) {
		s.up_s = rtb_now_s() - t0;
		r = tb_save(&s);
		if (r)
			log_err("%s: cannot save testbed state: %s", ctl_state_dir(), strerror(-r));
	}
	if (r) {
		if (r == -EINTR)
			log_err("testbed up: interrupted; tearing down what was started");
		teardown(&s);
	} else {
		print_up(&s);
	}
	close(lockfd);
	sigaction(SIGINT, &oldi, NULL);
	sigaction(SIGTERM, &oldt, NULL);
	return r;
}

int tb_down(void)
{
	struct tb_state s;
	int r, lockfd;

	if (access(ctl_state_dir(), F_OK)) {
		printf("no testbed is up\n");
		return 0;
	}
	lockfd = lock_state();
	if (lockfd < 0)
		return lockfd;
	r = tb_load(&s);
	if (r) {
		close(lockfd);
		state_remove();
		if (r == -ENOENT)
			printf("no testbed is up\n");
		return r == -ENOENT ? 0 : r;
	}
	r = teardown(&s);
	close(lockfd);
	if (r) {
		log_err("testbed down: incomplete: %s", strerror(-r));
		return r;
	}
	printf("testbed down: %d nodes, backend %s\n", s.nodes, tb_backend_name(s.backend));
	return 0;
}

/* testbed up's options: the table drives parsing, --help and the checks */
struct up_cfg {
	uint64_t nodes, mtu, timeout, mem;
	int backend, accel, topology, sw;
};

/* in enum tb_backend's order */
static const char *const up_backends[] = { "auto", "vm", "host", "agents", NULL };
static const char *const up_accels[] = { "auto", "kvm", "tcg", NULL };
/* in enum tb_topology's order */
static const char *const up_topologies[] = { "per-node", "shared", "auto", NULL };
static const char *const up_switches[] = { "bridge", "xdp", NULL };

#define UP_OPT(n, k, f, lo, hi, d, kw, h) { n, k, offsetof(struct up_cfg, f), lo, hi, d, kw, h }
static const struct opt up_opts[] = {
	UP_OPT("nodes", OPT_UINT, nodes, 1, TB_MAX_AGENTS, "3", NULL,
	       "SoftRoCE nodes (1..16; agents: 1..256)"),
	UP_OPT("backend", OPT_ENUM, backend, 0, 0, "auto", up_backends,
	       "vm: qemu VM with Debian's kernel (works anywhere); host: this kernel's rdma_rxe; "
	       "auto: host if rdma_rxe loads; agents: only rdma-agent --no-rdma processes here, "
	       "for control-plane scale tests (no workload runs on them)"),
	UP_OPT("mtu", OPT_UINT, mtu, 256, 4096, "1024", NULL, "RoCE path MTU: 256|512|1024|2048|4096"),
	UP_OPT("timeout", OPT_UINT, timeout, 10, 3600, "300", NULL,
	       "seconds to wait for the agents to be ready"),
	UP_OPT("topology", OPT_ENUM, topology, 0, 0, "auto", up_topologies,
	       "vm backend: per-node (a VM and kernel for every node, joined by a bridge on this "
	       "host: the RDMA CM and kernel stacks cross a real wire), shared (one VM whose "
	       "kernel holds every node: cheaper, for many nodes) or auto (per-node up to "
	       TB_STR(TB_PER_NODE_AUTO_MAX) " nodes, shared above)"),
	UP_OPT("mem", OPT_UINT, mem, 0, 65536, "0", NULL,
	       "VM memory in MiB (0: shared 1024 + 64 per node above 3; "
	       "per-node 3x the image + 256, 512 at least)"),
	UP_OPT("accel", OPT_ENUM, accel, 0, 0, "auto", up_accels,
	       "VM accelerator auto|kvm|tcg: auto probes KVM and falls back to TCG"),
	UP_OPT("switch", OPT_ENUM, sw, 0, 0, "bridge", up_switches,
	       "per-node: what forwards between the nodes: bridge (the kernel's), or xdp "
	       "(rdma-inject forward on the bridge's ports, as a box in the path of hardware "
	       "RNICs would run it; docs/hardware.md)"),
	{ NULL },
};

static const char up_synopsis[] = "rdmactl testbed up [--OPTION VALUE]... [--kernel NODE=VERSION]...";
static const char up_kernel_help[] =
	"  --kernel NODE=VERSION  per-node: NODE boots Debian's linux-image-VERSION instead\n"
	"                         (e.g. node2=6.12.118+deb12-amd64; apt-cache search\n"
	"                         '^linux-image-[0-9].*-amd64$' lists them); repeatable\n";

/* --kernel NODE=VERSION (or --kernel=...) taken out of argv into o->kver:
 * the rest left in argv, *argc updated; 0 or CTL_USAGE (said) */
static int up_kernels(struct tb_up_opts *o, int *argc, char **argv)
{
	int i, n = 0;

	for (i = 0; i < *argc; i++) {
		const char *v, *eq;
		char *end;
		long k;

		if (!strcmp(argv[i], "--kernel") && i + 1 < *argc)
			v = argv[++i];
		else if (!strncmp(argv[i], "--kernel=", 9))
			v = argv[i] + 9;
		else if (!strcmp(argv[i], "--kernel")) {
			log_err("testbed up: --kernel needs NODE=VERSION");
			return CTL_USAGE;
		} else {
			argv[n++] = argv[i];
			continue;
		}
		eq = strchr(v, '=');
		k = eq && !strncmp(v, "node", 4) ? strtol(v + 4, &end, 10) : -1;
		if (!eq || k < 0 || k >= TB_MAX_NODES || end != eq || eq == v + 4) {
			log_err("testbed up: --kernel '%s': expected NODE=VERSION (node0..node%d)", v,
				TB_MAX_NODES - 1);
			return CTL_USAGE;
		}
		if (!eq[1] || strlen(eq + 1) > 48 || !isdigit((unsigned char)eq[1]) ||
		    strspn(eq + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+~-") !=
			    strlen(eq + 1)) {
			log_err("testbed up: --kernel '%s': VERSION is a Debian kernel's, as in "
				"linux-image-VERSION (e.g. 6.12.118+deb12-amd64)", v);
			return CTL_USAGE;
		}
		if (o->kver[k]) {
			log_err("testbed up: --kernel: node%ld given twice", k);
			return CTL_USAGE;
		}
		o->kver[k] = eq + 1;
	}
	*argc = n;
	return 0;
}

static int testbed_up(void *ctl, int argc, char **argv)
{
	struct tb_up_opts o = TB_UP_DEFAULTS;
	struct up_cfg c;
	char err[256];
	int i;

	(void)ctl;
	if (argc > 0 && (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help"))) {
		opt_usage(up_synopsis, up_opts, stdout);
		fputs(up_kernel_help, stdout);
		return CTL_OK;
	}
	if (up_kernels(&o, &argc, argv))
		return CTL_USAGE;
	if (opt_parse_argv(up_opts, &c, argc, argv, NULL, NULL, err, sizeof(err))) {
		log_err("testbed up: %s", err);
		opt_usage(up_synopsis, up_opts, stderr);
		return CTL_USAGE;
	}
	if (c.mtu & (c.mtu - 1)) {
		log_err("testbed up: --mtu '%llu': expected 256|512|1024|2048|4096",
			(unsigned long long)c.mtu);
		return CTL_USAGE;
	}
	if (c.mem && c.mem < 256) {
		log_err("testbed up: --mem '%llu': at least 256 MiB", (unsigned long long)c.mem);
		return CTL_USAGE;
	}
	if (c.backend != TB_AGENTS && c.nodes > TB_MAX_NODES) {
		log_err("testbed up: --nodes '%llu': at most %d SoftRoCE nodes (%d with --backend "
			"agents)", (unsigned long long)c.nodes, TB_MAX_NODES, TB_MAX_AGENTS);
		return CTL_USAGE;
	}
	o.nodes = (int)c.nodes;
	o.mtu = (int)c.mtu;
	o.timeout_s = (int)c.timeout;
	o.mem_mb = (int)c.mem;
	o.backend = (enum tb_backend)c.backend;
	o.accel = up_accels[c.accel];
	o.topology = (enum tb_topology)c.topology;
	o.switch_xdp = c.sw == 1;
	if (o.switch_xdp && o.topology == TB_SHARED) {
		log_err("testbed up: --switch xdp is per-node's (its switch is on this host); on "
			"the shared kernel, run rdma-inject forward on the sw ports in the VM");
		return CTL_USAGE;
	}
	if (o.switch_xdp)
		o.topology = TB_PER_NODE;
	if (o.topology == TB_PER_NODE && o.backend != TB_VM) {
		if (o.backend != TB_AUTO) {
			log_err("testbed up: --topology per-node is the vm backend's (a qemu a node), "
				"not --backend %s's", tb_backend_name(o.backend));
			return CTL_USAGE;
		}
		o.backend = TB_VM;	/* auto: only the vm backend has one */
	}
	for (i = 0; i < TB_MAX_NODES; i++) {
		if (!o.kver[i])
			continue;
		if (o.topology == TB_TOPO_AUTO) {	/* a kernel of its own: per-node asked for */
			o.topology = TB_PER_NODE;
			if (o.backend == TB_AUTO)
				o.backend = TB_VM;
		}
		if (o.topology != TB_PER_NODE) {
			log_err("testbed up: --kernel: a kernel of its own needs --topology per-node "
				"(on the shared kernel every node is one kernel)");
			return CTL_USAGE;
		}
		if (i >= o.nodes) {
			log_err("testbed up: --kernel node%d: the testbed has node0..node%d", i,
				o.nodes - 1);
			return CTL_USAGE;
		}
	}
	return ctl_exit(tb_up(&o));
}

/* node i's status through c, opened with open_r (0 or -errno) */
static json_t *node_status(const struct tb_state *s, int i, struct agentc *c, int open_r)
{
	json_t *res = NULL, *o;
	char err[256] = "";
	int r = open_r;

	if (!r)
		r = agentc_call(c, "hello", NULL, &res, 5000, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "%s: %s", c->where, strerror(-r));
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
	json_object_set(o, "kernel", json_object_get(res, "kernel"));
	json_object_set(o, "boot_id", json_object_get(res, "boot_id"));
	json_object_set(o, "cpus", json_object_get(res, "cpus"));
	json_object_set(o, "mem_mb", json_object_get(res, "mem_mb"));
	if (tb_per_node(s))
		json_object_set_new(o, "qemu_pid", json_integer(s->node[i].qemu_pid));
	json_decref(res);
	return o;
}

static int testbed_status(void *vctl, int argc, char **argv)
{
	const struct ctl *ctl = vctl;
	static struct agentc conns[TB_MAX_AGENTS];
	static int open_r[TB_MAX_AGENTS];
	static struct tb_state s;
	json_t *o, *nodes;
	int r, i, bad = 0, alive;

	if (argc > 0) {
		log_err("testbed status: unexpected argument '%s'", argv[0]);
		return CTL_USAGE;
	}
	r = tb_load(&s);
	if (r == -ENOENT) {
		if (ctl->json)
			printf("{\"schema_version\": %d, \"up\": false}\n", TB_SCHEMA);
		else
			printf("no testbed is up\n");
		return CTL_FAIL;
	}
	if (r)
		return CTL_FAIL;
	alive = tb_ops(s.backend)->alive(&s);
	/* every agent connected at once, then asked: one rdmactl holding the
	 * whole control plane, as a run does (up to TB_MAX_AGENTS) */
	for (i = 0; alive && i < s.nodes; i++)
		open_r[i] = tb_agent_open(&conns[i], &s, i, 2000);
	nodes = json_array();
	for (i = 0; i < s.nodes; i++) {
		json_t *n = alive ? node_status(&s, i, &conns[i], open_r[i]) :
				    json_pack("{s:s,s:s,s:b,s:s}", "name", s.node[i].name, "dev",
					      s.node[i].dev, "agent_reachable", 0, "state", "unknown");

		if (!json_is_true(json_object_get(n, "agent_reachable")) ||
		    strcmp(json_string_value(json_object_get(n, "state")),
			   s.backend == TB_AGENTS ? "NO-RDMA" : "ACTIVE"))
			bad++;
		json_array_append_new(nodes, n);
	}
	for (i = 0; alive && i < s.nodes; i++)
		if (!open_r[i])
			agentc_close(&conns[i]);
	o = json_pack("{s:i,s:b,s:b,s:s,s:s,s:s,s:s,s:i,s:i,s:i,s:f,s:o}", "schema_version",
		      TB_SCHEMA, "up", 1, "healthy", alive && !bad, "backend",
		      tb_backend_name(s.backend), "accel", s.accel, "accel_reason", s.accel_why,
		      "kernel", s.kver, "qemu_pid", (int)s.qemu_pid, "mtu", s.mtu, "netdev_mtu",
		      s.netdev_mtu, "up_s", s.up_s, "nodes", nodes);
	if (s.backend == TB_VM)
		json_object_set_new(o, "topology", json_string(tb_topology_name(s.topology)));
	if (tb_per_node(&s))
		json_object_set_new(o, "switch", json_string(s.switch_xdp ? "xdp" : "bridge"));
	if (ctl->json) {
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		int pn = tb_per_node(&s);

		printf("testbed: %d nodes, backend %s", s.nodes, tb_backend_name(s.backend));
		if (pn)
			printf(" (a VM and kernel a node, switch rtbbr0%s; %s: %s)",
			       s.switch_xdp ? " forwarded by XDP (rdma-inject forward)" : "", s.accel,
			       s.accel_why);
		else if (s.backend == TB_VM)
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
		if (pn) {	/* each node's own kernel */
			printf("\n%-8s %-8s %-20s %-36s %4s %7s\n", "NODE", "QEMU", "KERNEL",
			       "BOOT ID", "CPUS", "MEM MiB");
			for (i = 0; i < s.nodes; i++) {
				json_t *n = json_array_get(nodes, i);

				printf("%-8s %-8d %-20s %-36s %4lld %7lld\n", s.node[i].name,
				       (int)s.node[i].qemu_pid,
				       json_string_value(json_object_get(n, "kernel")) ?: "-",
				       json_string_value(json_object_get(n, "boot_id")) ?: "-",
				       json_integer_value(json_object_get(n, "cpus")),
				       json_integer_value(json_object_get(n, "mem_mb")));
			}
		}
	}
	json_decref(o);
	return alive && !bad ? CTL_OK : CTL_FAIL;
}

static int testbed_down(void *ctl, int argc, char **argv)
{
	(void)ctl;
	if (argc > 0) {
		log_err("testbed down: unexpected argument '%s'", argv[0]);
		return CTL_USAGE;
	}
	return tb_down() ? CTL_FAIL : CTL_OK;
}

/* node i's agent resets its rxe device: 0 and what it did in err, or -errno */
static int nic_reset(const struct tb_state *s, int i, int timeout_s, char *err, size_t errlen)
{
	struct agentc c;
	json_t *res = NULL;
	int r = tb_agent_open(&c, s, i, 5000);

	if (r) {
		snprintf(err, errlen, "%s: its agent: %s", s->node[i].name, strerror(-r));
		return r;
	}
	r = agentc_call(&c, "nic_reset", NULL, &res, timeout_s * 1000, err, errlen);
	agentc_close(&c);
	if (r)
		return r;
	snprintf(err, errlen, "%s removed and added again on %s in %.0f ms (%d arm(s) ended)",
		 json_string_value(json_object_get(res, "dev")) ?: "?",
		 json_string_value(json_object_get(res, "netdev")) ?: "?",
		 json_real_value(json_object_get(res, "ready_s")) * 1000,
		 (int)json_integer_value(json_object_get(res, "arms_reset")));
	json_decref(res);
	return 0;
}

int tb_fault_node(const char *name, enum tb_node_fault f, int timeout_s, struct tb_state *s,
		  pid_t *old, char *err, size_t errlen)
{
	int i, r, lockfd = lock_state();

	if (lockfd < 0) {
		snprintf(err, errlen, "the testbed's state: %s", strerror(-lockfd));
		return lockfd;
	}
	r = tb_load_rdma(s);
	if (r) {
		snprintf(err, errlen, r == -ENOENT ? "no testbed is up (rdmactl testbed up)" :
			 "the testbed's state: %s", strerror(-r));
		close(lockfd);
		return r;
	}
	i = tb_node_index(s, name);
	if (i < 0) {
		snprintf(err, errlen, "no node '%s' (node0..node%d)", name, s->nodes - 1);
		close(lockfd);
		return -EINVAL;
	}
	*old = s->node[i].qemu_pid;
	r = f == TB_NIC_RESET ? nic_reset(s, i, timeout_s, err, errlen) :
				tb_node_fault(s, i, f, timeout_s, err, errlen);
	if (!r && f == TB_REBOOT)
		r = tb_save(s);
	close(lockfd);
	return r < 0 ? r : r ? -EIO : i;
}

/* rdmactl testbed crash|freeze|thaw|reboot NODE, port NODE down|up: one
 * node of per-node VMs, under the testbed's lock */
static int node_fault(const char *verb, enum tb_node_fault f, int argc, char **argv)
{
	static struct tb_state s;
	char err[512];
	int i, want = f == TB_PORT_DOWN ? 2 : 1;
	pid_t old = 0;

	if (argc != want || (f == TB_PORT_DOWN && strcmp(argv[1], "down") && strcmp(argv[1], "up"))) {
		log_err("usage: rdmactl testbed %s NODE%s", verb, f == TB_PORT_DOWN ? " down|up" : "");
		return CTL_USAGE;
	}
	if (f == TB_PORT_DOWN && !strcmp(argv[1], "up"))
		f = TB_PORT_UP;
	i = tb_fault_node(argv[0], f, 300, &s, &old, err, sizeof(err));
	if (i < 0) {
		log_err("testbed %s: %s", verb, err);
		return i == -EOPNOTSUPP || i == -EINVAL ? CTL_USAGE : CTL_FAIL;
	}
	switch (f) {
	case TB_CRASH:
		printf("%s: crashed (qemu %d killed)\n", s.node[i].name, (int)old);
		break;
	case TB_FREEZE:
		printf("%s: frozen (qemu %d stopped; rdmactl testbed thaw %s)\n", s.node[i].name,
		       (int)old, s.node[i].name);
		break;
	case TB_THAW:
		printf("%s: thawed (qemu %d continued)\n", s.node[i].name, (int)old);
		break;
	case TB_REBOOT:
		printf("%s: rebooted (qemu %d, was %d), its agent ready\n", s.node[i].name,
		       (int)s.node[i].qemu_pid, (int)old);
		break;
	case TB_NIC_RESET:
		printf("%s: %s\n", s.node[i].name, err);
		break;
	default: {
		char port[16];

		tb_switch_port(i, port, sizeof(port));
		printf("%s: switch port %s %s\n", s.node[i].name, port, argv[1]);
	}
	}
	return CTL_OK;
}

#define NODE_FAULT(name, verb, f)                                                                  \
	static int name(void *ctl, int argc, char **argv)                                          \
	{                                                                                          \
		(void)ctl;                                                                         \
		return node_fault(verb, f, argc, argv);                                            \
	}
NODE_FAULT(testbed_crash, "crash", TB_CRASH)
NODE_FAULT(testbed_freeze, "freeze", TB_FREEZE)
NODE_FAULT(testbed_thaw, "thaw", TB_THAW)
NODE_FAULT(testbed_reboot, "reboot", TB_REBOOT)
NODE_FAULT(testbed_port, "port", TB_PORT_DOWN)
NODE_FAULT(testbed_nic_reset, "nic-reset", TB_NIC_RESET)

int cmd_testbed(struct ctl *ctl, int argc, char **argv)
{
	static const struct cmd_entry verbs[] = {
		{ "up", testbed_up, "bring up N SoftRoCE nodes, one rdma-agent each" },
		{ "status", testbed_status, "nodes, devices, port state, MTU, GID, agents" },
		{ "down", testbed_down, "stop everything the testbed started" },
		{ "exec", tb_cmd_exec, "run a command at a node: NODE [--env K=V]... -- CMD [ARG...]" },
		{ "cp", tb_cmd_cp, "copy files to the nodes: FILE... NODE:PATH" },
		{ "crash", testbed_crash, "per-node VMs: kill NODE's qemu (its kernel gone without a word)" },
		{ "freeze", testbed_freeze, "per-node VMs: stop NODE's qemu (a hung host) until thaw" },
		{ "thaw", testbed_thaw, "per-node VMs: continue a frozen NODE" },
		{ "reboot", testbed_reboot, "per-node VMs: NODE's qemu killed and booted again, its "
					   "agent back" },
		{ "port", testbed_port, "per-node VMs: NODE's switch port down|up" },
		{ "nic-reset", testbed_nic_reset, "NODE's rxe device removed and added again (its "
						  "agent's arms end; refused while another process holds it)" },
		{ NULL, NULL, NULL },
	};
	char err[128];
	int rc;

	if (cmd_exec(verbs, "verb", ctl, argc, argv, &rc, err, sizeof(err))) {
		log_err("testbed: %s", err);
		return CTL_USAGE;
	}
	return rc;
}
