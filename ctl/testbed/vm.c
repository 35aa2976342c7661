// SPDX-License-Identifier: MIT
/*
 * VM backend: Debian's own kernel in qemu, SoftRoCE inside. The image comes
 * from testbed/mkimage.sh (cached base layer + per-up overlay with our
 * binaries, config and token); qemu runs daemonized. The host reaches the
 * agents only through qemu user networking: restrict=on (the guest cannot
 * open connections out) and one port per agent (and sshd) forwarded from
 * 127.0.0.1.
 *
 * Two topologies. per-node: a qemu for every node, each its own kernel with
 * rxe on a second virtio NIC, a tap that is a port of the switch on this
 * host (switch.c): RoCE crosses the host, the RDMA CM meets a real peer, a
 * node can crash on its own. shared: one qemu whose kernel holds every node
 * (testbed/topology.sh: veths on a bridge inside it): cheaper for many
 * nodes, but the nodes' addresses are all local to that kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>
#include "ctl/testbed/backend.h"
#include "lib/log.h"
#include "lib/proc.h"

#define CTRL_NET "198.19.0.0/24"
#define CTRL_HOST_IP "198.19.0.2"
#define CTRL_GUEST_IP "198.19.0.15"
#define PORT_BASE_MIN 47100
#define KVM_PROBE_S 45

static const char *qemu_bin(void)
{
	const char *q = getenv("RDMATB_QEMU");

	return q && *q ? q : "qemu-system-x86_64";
}

/* can qemu's user network forward this port: it binds with SO_REUSEADDR,
 * so a connection of an earlier testbed in TIME_WAIT there does not take it
 * (without, the ports moved on by a block, and a profile naming 47100 found
 * nothing: CI 60-run run_hosts_profile) */
static int port_free(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok, one = 1;

	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* first block of n consecutive free loopback ports */
static int find_ports(int n)
{
	int base, i;

	for (base = PORT_BASE_MIN; base < 60000; base += n) {
		for (i = 0; i < n && port_free(base + i); i++)
			;
		if (i == n)
			return base;
	}
	return -EADDRINUSE;
}

/* the overlay layer: our files at their guest paths */
static int stage_overlay(const struct tb_state *s, const char *dir, int port_base)
{
	static const struct {
		const char *(*from)(void);
		const char *name;
		const char *to;
		mode_t mode;
	} files[] = {
		{ ctl_libexec_dir, "init.sh", "init", 0755 },
		{ ctl_libexec_dir, "topology.sh", "usr/libexec/rdma-testbed/topology.sh", 0755 },
		{ ctl_bin_dir, "rdma-agent", "usr/bin/rdma-agent", 0755 },
		{ ctl_bin_dir, "rdma-inject", "usr/bin/rdma-inject", 0755 },
		{ ctl_bin_dir, "rdma-run", "usr/bin/rdma-run", 0755 },
		{ ctl_bpf_dir, "inject.bpf.o", "usr/lib/rdma-testbed/bpf/inject.bpf.o", 0644 },
		{ NULL, NULL, NULL, 0 },
	};
	char src[PATH_MAX], dst[PATH_MAX], d[PATH_MAX];
	FILE *f;
	int i, r;

	ctl_rm_rf(dir);
	for (i = 0; files[i].name; i++) {
		snprintf(src, sizeof(src), "%s/%s", files[i].from(), files[i].name);
		snprintf(dst, sizeof(dst), "%s/%s", dir, files[i].to);
		snprintf(d, sizeof(d), "%s", dst);
		*strrchr(d, '/') = 0;
		r = ctl_mkdir_p(d, 0755);
		if (!r)
			r = ctl_copy_file(src, dst, O_TRUNC, files[i].mode);
		if (r) {
			log_err("%s: cannot stage for the VM image: %s (did 'make' run?)", src,
				strerror(-r));
			return r;
		}
	}
	snprintf(d, sizeof(d), "%s/etc/rdmatb", dir);
	r = ctl_mkdir_p(d, 0700);
	if (r)
		return r;
	snprintf(dst, sizeof(dst), "%s/config", d);
	f = fopen(dst, "we");
	if (!f)
		return -errno;
	fprintf(f, "NODES=%d\nNETDEV_MTU=%d\nPORT_BASE=%d\nCTRL_IP=%s\nTOPOLOGY=%s\n", s->nodes,
		s->netdev_mtu, port_base, CTRL_GUEST_IP, tb_topology_name(s->topology));
	if (fclose(f))
		return -EIO;
	snprintf(dst, sizeof(dst), "%s/token", d);
	f = fopen(dst, "we");
	if (!f)
		return -errno;
	fchmod(fileno(f), 0600);
	fprintf(f, "%s\n", s->token);
	return fclose(f) ? -EIO : 0;
}

/* parse "KEY=VALUE" lines of mkimage.sh */
static void kv(const char *out, const char *key, char *val, size_t len)
{
	size_t kl = strlen(key);
	const char *p = out;

	val[0] = 0;
	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, "\n");

			snprintf(val, len, "%.*s", (int)(n < len ? n : len - 1), p + kl + 1);
			return;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
}

static int file_has(const char *path, const char *needle)
{
	char buf[4096];
	size_t keep = strlen(needle), n;
	FILE *f = fopen(path, "re");
	int found = 0;

	if (!f)
		return 0;
	memset(buf, 0, sizeof(buf));
	/* sliding window so a marker split across reads is still found */
	while (!found && (n = fread(buf + keep, 1, sizeof(buf) - 1 - keep, f)) > 0) {
		buf[keep + n] = 0;
		found = memmem(buf, keep + n, needle, strlen(needle)) != NULL;
		memmove(buf, buf + n, keep);
	}
	fclose(f);
	return found;
}

/* the last lines of path on stderr (no shell: the path may hold any byte) */
static void tail_file(const char *path, int lines)
{
	char n[16], *argv[] = { "tail", "-n", n, "--", (char *)path, NULL };
	struct proc_io io = { -1, 2, 2, 0 };
	pid_t pid;
	int st;

	snprintf(n, sizeof(n), "%d", lines);
	if (proc_spawn(argv, &io, &pid) || proc_reap(pid, 10000, &st))
		log_err("cannot show %s", path);
}

/* qemu's arguments up to the NICs; the strings live until the next call */
static void base_args(char **a, int *n, const char *name, const char *kernel, const char *initrd,
		      const char *serial, int mem_mb, int cpus, const char *accel, const char *append)
{
	static char mem[16], ser[PATH_MAX + 8], smp[16];

	snprintf(mem, sizeof(mem), "%d", mem_mb);
	snprintf(smp, sizeof(smp), "%d", cpus);
	snprintf(ser, sizeof(ser), "file:%s", serial);
	a[(*n)++] = (char *)qemu_bin();
	a[(*n)++] = "-name";
	a[(*n)++] = (char *)name;
	a[(*n)++] = "-m";
	a[(*n)++] = mem;
	a[(*n)++] = "-smp";
	a[(*n)++] = smp;
	a[(*n)++] = "-no-reboot";
	a[(*n)++] = "-display";
	a[(*n)++] = "none";
	a[(*n)++] = "-vga";
	a[(*n)++] = "none";
	a[(*n)++] = "-monitor";
	a[(*n)++] = "none";
	a[(*n)++] = "-serial";
	a[(*n)++] = ser;
	a[(*n)++] = "-kernel";
	a[(*n)++] = (char *)kernel;
	a[(*n)++] = "-initrd";
	a[(*n)++] = (char *)initrd;
	a[(*n)++] = "-append";
	a[(*n)++] = (char *)append;
	a[(*n)++] = "-accel";
	if (!strcmp(accel, "kvm")) {
		a[(*n)++] = "kvm";
		a[(*n)++] = "-cpu";
		a[(*n)++] = "host";
	} else {
		a[(*n)++] = "tcg,thread=multi";
		a[(*n)++] = "-cpu";
		a[(*n)++] = "max";
	}
}

#define APPEND "console=ttyS0 quiet loglevel=4 panic=-1 mitigations=off"

/*
 * KVM when it works, TCG otherwise -- decided by booting the image once with
 * KVM and waiting for the guest's /init (some hosts expose /dev/kvm but fail
 * on real guests, e.g. an MSR assertion). The verdict is cached per host
 * kernel, qemu and guest kernel.
 *
 * The probe decides fast either way: qemu exiting (the MSR assertion,
 * "failed to initialize kvm") is a failure at once, with qemu's own words
 * for the log; the probe guest boots without "quiet", so a KVM guest that
 * runs prints its first kernel lines within a second -- no console output
 * after KVM_PROBE_SILENT_S, or none new for KVM_PROBE_STALL_S, is a guest
 * that does not run (a hang that used to cost the whole KVM_PROBE_S).
 */
#define KVM_PROBE_SILENT_S 5
#define KVM_PROBE_STALL_S 10
#define PROBE_APPEND "console=ttyS0 loglevel=7 panic=-1 mitigations=off rdmatb.probe=1"

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_size;
}

/* the first line of a file, trimmed, into buf ("" when none) */
static void first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* boot the image once with KVM: 1 when the guest reached /init; why not in
 * why (qemu's first error line, or what the console showed) */
static int kvm_probe(const char *kernel, const char *initrd, char *why, size_t whylen)
{
	char serial[PATH_MAX], errlog[PATH_MAX], *args[64];
	int n = 0, ok = 0, null = open("/dev/null", O_RDWR | O_CLOEXEC), efd, st = 0;
	struct proc_io io = { null, null, null, 0 };
	double t0, grew;
	off_t size = 0, now;
	pid_t pid;

	log_info("probing KVM: booting the image once with -accel kvm (up to %d s)", KVM_PROBE_S);
	tb_state_path(serial, sizeof(serial), "kvm-probe.log");
	tb_state_path(errlog, sizeof(errlog), "kvm-probe.err");
	unlink(serial);
	efd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (efd >= 0)
		io.err = efd;
	base_args(args, &n, "rdma-testbed-probe", kernel, initrd, serial, 256, 1, "kvm", PROBE_APPEND);
	args[n++] = "-nic";
	args[n++] = "none";
	args[n] = NULL;
	if (proc_spawn(args, &io, &pid))
		pid = 0;
	if (null >= 0)
		close(null);
	if (efd >= 0)
		close(efd);
	snprintf(why, whylen, "qemu did not start");
	t0 = grew = rtb_now_s();
	while (pid > 0 && rtb_now_s() - t0 < KVM_PROBE_S) {
		if (file_has(serial, "@@PROBE-OK")) {
			ok = 1;
			break;
		}
		if (!proc_reap(pid, 100, &st)) {
			char line[160];

			pid = 0;
			first_line(errlog, line, sizeof(line));
			snprintf(why, whylen, "qemu exited (status %d)%s%s", st, line[0] ? ": " : "",
				 line);
			break;
		}
		now = file_size(serial);
		if (now > size) {
			size = now;
			grew = rtb_now_s();
		}
		if (!size && rtb_now_s() - t0 >= KVM_PROBE_SILENT_S) {
			snprintf(why, whylen, "no console output in %d s", KVM_PROBE_SILENT_S);
			break;
		}
		if (size && rtb_now_s() - grew >= KVM_PROBE_STALL_S) {
			snprintf(why, whylen, "the guest's console stopped for %d s before /init",
				 KVM_PROBE_STALL_S);
			break;
		}
	}
	if (pid > 0 && !ok && rtb_now_s() - t0 >= KVM_PROBE_S)
		snprintf(why, whylen, "the guest did not reach /init in %d s", KVM_PROBE_S);
	if (pid > 0)
		proc_stop(pid, 0);
	log_info("KVM probe: %s in %.1f s", ok ? "the guest reached /init" : why, rtb_now_s() - t0);
	unlink(serial);
	unlink(errlog);
	return ok;
}

/* KVM when a probe boot shows it works here (the verdict cached per host
 * kernel, qemu and guest kernel), TCG otherwise */
static void choose_accel(struct tb_state *s, const char *want, const char *kernel,
			 const char *initrd)
{
	char cache[PATH_MAX], line[256] = "", qver[128] = "", why[128];
	char *vargs[] = { (char *)qemu_bin(), "--version", NULL };
	struct utsname u;
	unsigned long h = 5381;
	const char *p;
	FILE *f;
	int ok = 0;

	if (!strcmp(want, "tcg")) {
		snprintf(s->accel, sizeof(s->accel), "tcg");
		snprintf(s->accel_why, sizeof(s->accel_why), "asked for (--accel tcg)");
		return;
	}
	if (access("/dev/kvm", R_OK | W_OK)) {
		snprintf(s->accel, sizeof(s->accel), "tcg");
		snprintf(s->accel_why, sizeof(s->accel_why), "/dev/kvm: %s", strerror(errno));
		if (!strcmp(want, "kvm"))
			log_err("--accel kvm: %s; using TCG", s->accel_why);
		return;
	}
	uname(&u);
	proc_run(vargs, qver, sizeof(qver));
	for (p = u.release; *p; p++)
		h = h * 33 + (unsigned char)*p;
	for (p = qver; *p && *p != '\n'; p++)
		h = h * 33 + (unsigned char)*p;
	for (p = s->kver; *p; p++)
		h = h * 33 + (unsigned char)*p;
	snprintf(cache, sizeof(cache), "%s/accel-%08lx", ctl_cache_dir(), h & 0xffffffffUL);
	f = fopen(cache, "re");
	if (f) {
		if (fgets(line, sizeof(line), f) && !strncmp(line, "kvm", 3))
			ok = 1;
		fclose(f);
		snprintf(s->accel, sizeof(s->accel), ok ? "kvm" : "tcg");
		snprintf(s->accel_why, sizeof(s->accel_why), "%s", ok ? "KVM probe passed (cached)" :
			 "KVM probe failed earlier on this host (cached)");
		return;
	}
	ok = kvm_probe(kernel, initrd, why, sizeof(why));
	snprintf(s->accel, sizeof(s->accel), ok ? "kvm" : "tcg");
	snprintf(s->accel_why, sizeof(s->accel_why), "%s%s", ok ? "KVM probe passed" :
		 "KVM probe failed: ", ok ? "" : why);
	f = fopen(cache, "we");
	if (f) {
		fprintf(f, "%s\n", s->accel);
		fclose(f);
	}
}

/* pid is still a testbed qemu (not a recycled pid) */
/* /proc/PID/WHAT into buf (NUL-terminated): its length, or <= 0 */
static ssize_t proc_read(pid_t pid, const char *what, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	if (pid <= 0 || kill(pid, 0))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

static int qemu_ours(pid_t pid)
{
	char cmd[512];
	ssize_t n = proc_read(pid, "cmdline", cmd, sizeof(cmd));

	if (n <= 0)
		return 0;
	return strstr(cmd, "qemu") != NULL && memmem(cmd, (size_t)n, "rdma-testbed", 12) != NULL;
}

/* node i's console log */
static void serial_path(const struct tb_state *s, int i, char *buf, size_t len)
{
	char name[32];

	if (s->topology == TB_PER_NODE)
		snprintf(name, sizeof(name), "serial-node%d.log", i);
	else
		snprintf(name, sizeof(name), "serial.log");
	tb_state_path(buf, len, name);
}

/* the testbed exists while a qemu of it runs (a crashed node is a node
 * fault, not the end of the testbed) or, per node, while its switch does */
static int vm_alive(const struct tb_state *s)
{
	int i;

	if (s->topology != TB_PER_NODE)
		return qemu_ours(s->qemu_pid);
	for (i = 0; i < s->nodes; i++)
		if (qemu_ours(s->node[i].qemu_pid))
			return 1;
	return tb_switch_exists();
}

/* while booting: every qemu runs and no guest reported a failure */
static int vm_booting(const struct tb_state *s)
{
	char serial[PATH_MAX];
	int i, n = s->topology == TB_PER_NODE ? s->nodes : 1;

	for (i = 0; i < n; i++) {
		serial_path(s, i, serial, sizeof(serial));
		if (!qemu_ours(s->topology == TB_PER_NODE ? s->node[i].qemu_pid : s->qemu_pid) ||
		    file_has(serial, "@@ERROR") || file_has(serial, "@@AGENT-EXIT"))
			return 0;
	}
	return 1;
}

/*
 * ssh into the VM (rdmactl's ssh path, and a shell for looking around):
 * a fresh host key and client key per testbed, the host key and the
 * authorized key staged into the overlay, and in the state directory
 * ssh/config (Host rdma-testbed), ssh/id_ed25519, ssh/known_hosts:
 *   ssh -F /run/rdma-testbed/ssh/config rdma-testbed
 * Without ssh-keygen the VM simply gets no sshd.
 */
static int stage_ssh(const struct tb_state *s, const char *overlay)
{
	char dir[PATH_MAX], hk[PATH_MAX], ck[PATH_MAX], pub[PATH_MAX], path[PATH_MAX];
	char out[1024], key[1024];
	FILE *f;
	int r, i;

	tb_state_path(dir, sizeof(dir), "ssh");
	snprintf(hk, sizeof(hk), "%s/etc/ssh/ssh_host_ed25519_key", overlay);
	snprintf(ck, sizeof(ck), "%s/id_ed25519", dir);
	snprintf(path, sizeof(path), "%s/etc/ssh", overlay);
	ctl_rm_rf(dir);
	if ((r = ctl_mkdir_p(dir, 0700)) || (r = ctl_mkdir_p(path, 0755)))
		return r;
	{
		char *hargv[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rdma-testbed-vm",
				  "-f", hk, NULL };
		char *cargv[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rdma-testbed",
				  "-f", ck, NULL };

		if (proc_run(hargv, out, sizeof(out)) || proc_run(cargv, out, sizeof(out)))
			return -ENOENT;
	}
	/* the client key may log in as root */
	snprintf(pub, sizeof(pub), "%s.pub", ck);
	snprintf(path, sizeof(path), "%s/etc/ssh/authorized_keys", overlay);
	if ((r = ctl_copy_file(pub, path, O_TRUNC, 0600)))
		return r;
	/* the host key, pinned (every VM of the testbed has the one) */
	snprintf(pub, sizeof(pub), "%s.pub", hk);
	f = fopen(pub, "re");
	if (!f)
		return -errno;
	if (!fgets(key, sizeof(key), f))
		key[0] = 0;
	fclose(f);
	snprintf(path, sizeof(path), "%s/known_hosts", dir);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	for (i = 0; i < s->nodes; i++)
		if (!i || s->node[i].ssh_port != s->node[0].ssh_port)
			fprintf(f, "[127.0.0.1]:%d %s", s->node[i].ssh_port, key);
	if (fclose(f))
		return -EIO;
	snprintf(path, sizeof(path), "%s/config", dir);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f,
		"# the testbed's sshd (root, key only): ssh -F %s rdma-testbed-nodeN\n"
		"# (rdma-testbed: node0's)\n", path);
	for (i = -1; i < s->nodes; i++) {
		char host[32];

		if (i < 0)
			snprintf(host, sizeof(host), "rdma-testbed");
		else
			tb_ssh_host(i, host, sizeof(host));
		fprintf(f,
			"Host %s\n"
			"\tHostName 127.0.0.1\n"
			"\tPort %d\n"
			"\tUser root\n"
			"\tIdentityFile %s\n"
			"\tIdentitiesOnly yes\n"
			"\tUserKnownHostsFile %s/known_hosts\n"
			"\tStrictHostKeyChecking yes\n"
			"\tBatchMode yes\n",
			host, s->node[i < 0 ? 0 : i].ssh_port, ck, dir);
	}
	return fclose(f) ? -EIO : 0;
}

/* nodes, ports and token; the state saved before qemu starts, so that a
 * failed up can always be torn down. The first port; -errno */
static int vm_plan(struct tb_state *s, const struct tb_up_opts *o)
{
	int r, i, base, nports;

	r = ctl_mkdir_p(ctl_cache_dir(), 0755);
	if (r) {
		log_err("%s: cannot create cache directory: %s", ctl_cache_dir(), strerror(-r));
		return r;
	}
	/* the agents', then the sshd's (one a VM), then the switch's agent */
	nports = o->nodes + (s->topology == TB_PER_NODE ? o->nodes + 1 : 1);
	base = find_ports(nports);
	if (base < 0) {
		log_err("no %d free consecutive loopback ports above %d", nports, PORT_BASE_MIN);
		return base;
	}
	if (proto_token_new(s->token, sizeof(s->token))) {
		log_err("cannot make a token: no random bytes from the kernel");
		return -EIO;
	}
	for (i = 0; i < o->nodes; i++) {
		snprintf(s->node[i].name, sizeof(s->node[i].name), "node%d", i);
		snprintf(s->node[i].dev, sizeof(s->node[i].dev), "rxe%d", i);
		snprintf(s->node[i].host, sizeof(s->node[i].host), "127.0.0.1");
		s->node[i].port = base + i;
		s->node[i].ssh_port = base + o->nodes + (s->topology == TB_PER_NODE ? i : 0);
	}
	r = tb_save(s);
	if (r) {
		log_err("%s: cannot write state: %s", ctl_state_dir(), strerror(-r));
		return r;
	}
	return base;
}

/*
 * While mkimage.sh runs, on a terminal: "building the VM image, N s" and,
 * past 2 s, an ETA from the last build of a base layer (a cached image
 * takes about a second: one that takes longer is building its base,
 * downloading the kernel package first when the cache has none).
 */
struct img_ticker {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
	double t0, eta;
};

static void *img_tick(void *arg)
{
	struct img_ticker *t = arg;
	struct timespec ts;

	pthread_mutex_lock(&t->mu);
	while (!t->done) {
		double el = rtb_now_s() - t->t0;

		if (el >= 2)
			tb_progress("building the VM image", el, t->eta, 0);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 500 * 1000 * 1000;
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&t->cv, &t->mu, &ts);
	}
	if (rtb_now_s() - t->t0 >= 2)
		tb_progress("", 0, 0, 1);
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

enum { IMG_STAGE = 1, IMG_LAST = 2 };

/* the image built for kernel package kpkg (NULL: Debian's default), with
 * the overlay staged first (IMG_STAGE: *ssh 0 when the VM has an sshd) and
 * removed after (IMG_LAST); kernel and kver (its version) filled */
static int vm_image(struct tb_state *s, int base, const char *kpkg, char *kernel, size_t klen,
		    char *kver, size_t kvlen, const char *initrd, int *ssh, int flags)
{
	char overlay[PATH_MAX], out[4096], buf[64], mk[PATH_MAX];
	char *mkargv[] = { "bash", mk, "--cache", (char *)ctl_cache_dir(), "--out", (char *)initrd,
			   "--overlay-dir", overlay, kpkg ? "--kernel-pkg" : NULL, (char *)kpkg, NULL };
	double t0;
	int r;

	tb_state_path(overlay, sizeof(overlay), "overlay");
	if (flags & IMG_STAGE) {
		r = stage_overlay(s, overlay, base);
		if (r)
			return r;
		*ssh = stage_ssh(s, overlay);
		if (*ssh) {
			char d[PATH_MAX];

			log_info("note: no ssh into the VM (ssh-keygen: %s; make deps)",
				 strerror(-*ssh));
			tb_state_path(d, sizeof(d), "ssh");
			ctl_rm_rf(d);
		}
	}
	t0 = rtb_now_s();
	snprintf(mk, sizeof(mk), "%s/mkimage.sh", ctl_libexec_dir());
	{
		struct img_ticker t = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, t0,
					tb_cache_seconds("image-base", 0) };
		pthread_t th;
		int ticking = isatty(2) && log_verbose >= 0 && !pthread_create(&th, NULL, img_tick, &t);

		r = proc_run(mkargv, out, sizeof(out));
		if (ticking) {
			pthread_mutex_lock(&t.mu);
			t.done = 1;
			pthread_cond_signal(&t.cv);
			pthread_mutex_unlock(&t.mu);
			pthread_join(th, NULL);
		}
	}
	if ((flags & IMG_LAST) || r)
		ctl_rm_rf(overlay);
	if (r) {
		log_err("VM image%s%s: mkimage.sh failed (exit %d)", kpkg ? " of " : "", kpkg ? kpkg : "",
			r);
		return -EIO;
	}
	s->image_s = rtb_now_s() - t0;
	kv(out, "KERNEL", kernel, klen);
	kv(out, "KVER", kver, kvlen);
	kv(out, "BASE_BUILT", buf, sizeof(buf));
	s->image_built = !strcmp(buf, "1");
	if (s->image_built)
		tb_cache_seconds("image-base", s->image_s);
	if (!kernel[0] || access(kernel, R_OK)) {
		log_err("VM image: mkimage.sh named no readable kernel");
		return -EIO;
	}
	return 0;
}

/* the pid in $STATE/FILE, 0 when none */
static pid_t pid_file(const char *file)
{
	char path[PATH_MAX];
	FILE *f;
	int pid = 0;

	tb_state_path(path, sizeof(path), file);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = 0;
		fclose(f);
	}
	return (pid_t)pid;
}

/* args (n of them, room for 4 more) run daemonized: its output in
 * $STATE/NAME.log, its pid from $STATE/NAME.pid into *pid; who: for messages */
static int qemu_start(char **args, int n, const char *name, pid_t *pid, const char *who)
{
	char pidf[PATH_MAX], qlog[PATH_MAX], file[64];
	struct proc_io io = { -1, -1, -1, 0 };
	int r, i, st = 255;
	pid_t child;

	snprintf(file, sizeof(file), "%s.log", name);
	tb_state_path(qlog, sizeof(qlog), file);
	snprintf(file, sizeof(file), "%s.pid", name);
	tb_state_path(pidf, sizeof(pidf), file);
	args[n++] = "-daemonize";
	args[n++] = "-pidfile";
	args[n++] = pidf;
	args[n] = NULL;
	if (log_verbose > 0) {
		for (i = 0; args[i]; i++)
			fprintf(stderr, "%s ", args[i]);
		fputc('\n', stderr);
	}
	io.out = io.err = open(qlog, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	r = proc_spawn(args, &io, &child);
	if (io.out >= 0)
		close(io.out);
	if (r || proc_reap(child, -1, &st) || st) {
		log_err("%s: qemu failed to start:", who);
		tail_file(qlog, 10);
		return -EIO;
	}
	*pid = pid_file(file);
	if (*pid <= 0) {
		log_err("%s: qemu wrote no pid", pidf);
		return -EIO;
	}
	return 0;
}

/* qemu daemonized with the control ports forwarded; its pid in s */
static int vm_boot(struct tb_state *s, const struct tb_up_opts *o, int base, int ssh,
		   const char *kernel, const char *initrd)
{
	char serial[PATH_MAX], nic[2048], *args[64];
	int i, n;

	tb_state_path(serial, sizeof(serial), "serial.log");
	n = snprintf(nic, sizeof(nic),
		     "user,model=virtio-net-pci,restrict=on,ipv6=off,net=%s,host=%s", CTRL_NET,
		     CTRL_HOST_IP);
	for (i = 0; i < o->nodes; i++)
		n += snprintf(nic + n, sizeof(nic) - (size_t)n, ",hostfwd=tcp:127.0.0.1:%d-%s:%d",
			      base + i, CTRL_GUEST_IP, base + i);
	if (!ssh)
		n += snprintf(nic + n, sizeof(nic) - (size_t)n, ",hostfwd=tcp:127.0.0.1:%d-%s:22",
			      base + o->nodes, CTRL_GUEST_IP);
	n = 0;
	base_args(args, &n, "rdma-testbed", kernel, initrd, serial, o->mem_mb, 2, s->accel, APPEND);
	args[n++] = "-nic";
	args[n++] = nic;
	log_info("booting %d nodes in qemu (%s), kernel %s", o->nodes, s->accel, s->kver);
	return qemu_start(args, n, "qemu", &s->qemu_pid, "the VM");
}

/* the MACs of node i's NICs: control (qemu user networking) and RoCE (the
 * switch port); the guest's /init tells them apart by these */
#define MAC_CTRL "52:54:00:72:63:%02x"
#define MAC_DATA "52:54:00:72:64:%02x"

/* node i's qemu, daemonized: a control NIC forwarding its agent's and
 * sshd's ports, a RoCE NIC as tap rtbswI (made by qemu, gone with it) */
static int vm_boot_node(struct tb_state *s, int i, int ssh, const char *kernel,
			const char *initrd)
{
	char serial[PATH_MAX], name[48], file[48], append[256];
	char ctrl[512], cdev[64], data[128], ddev[64], port[16], *args[64];
	int r, n = 0;

	serial_path(s, i, serial, sizeof(serial));
	snprintf(name, sizeof(name), "rdma-testbed-node%d", i);
	snprintf(append, sizeof(append), APPEND " rdmatb.node=%d", i);
	n = snprintf(ctrl, sizeof(ctrl),
		     "user,id=ctl,restrict=on,ipv6=off,net=%s,host=%s,hostfwd=tcp:127.0.0.1:%d-%s:%d",
		     CTRL_NET, CTRL_HOST_IP, s->node[i].port, CTRL_GUEST_IP, s->node[i].port);
	if (!ssh)
		snprintf(ctrl + n, sizeof(ctrl) - (size_t)n, ",hostfwd=tcp:127.0.0.1:%d-%s:22",
			 s->node[i].ssh_port, CTRL_GUEST_IP);
	snprintf(cdev, sizeof(cdev), "virtio-net-pci,netdev=ctl,mac=" MAC_CTRL, i);
	tb_switch_port(i, port, sizeof(port));
	snprintf(data, sizeof(data), "tap,id=roce,ifname=%s,script=no,downscript=no", port);
	snprintf(ddev, sizeof(ddev), "virtio-net-pci,netdev=roce,mac=" MAC_DATA, i);
	n = 0;
	base_args(args, &n, name, kernel, initrd, serial, s->node_mem_mb, 1, s->accel, append);
	args[n++] = "-netdev";
	args[n++] = ctrl;
	args[n++] = "-device";
	args[n++] = cdev;
	args[n++] = "-netdev";
	args[n++] = data;
	args[n++] = "-device";
	args[n++] = ddev;
	snprintf(file, sizeof(file), "qemu-node%d", i);
	r = qemu_start(args, n, file, &s->node[i].qemu_pid, s->node[i].name);
	if (!r)
		r = tb_save(s);
	return r ? r : tb_switch_attach(i, s->netdev_mtu);
}

/* the last lines of every VM's console */
static void tell_consoles(const struct tb_state *s)
{
	char serial[PATH_MAX];
	int i, n = s->topology == TB_PER_NODE ? s->nodes : 1;

	for (i = 0; i < n; i++) {
		serial_path(s, i, serial, sizeof(serial));
		log_err("last lines of %s's console (%s):",
			s->topology == TB_PER_NODE ? s->node[i].name : "the VM", serial);
		tail_file(serial, n > 1 ? 12 : 25);
	}
}

/* the switch's agent answers (it started with the first VM: long ready) */
static int switch_agent_ready(const struct tb_state *s)
{
	double t0 = rtb_now_s();
	struct agentc c;
	int r;

	do {
		r = tb_switch_open(&c, s, 1000);
		if (!r) {
			agentc_close(&c);
			return 0;
		}
		usleep(100 * 1000);
	} while (rtb_now_s() - t0 < 10 && tb_switch_agent_running(s) && !ctl_interrupted);
	log_err("the switch's agent (%s:%d) does not answer: %s; see %s/switch-agent.log",
		s->sw.host, s->sw.port, strerror(-r), ctl_state_dir());
	return r ? r : -ETIMEDOUT;
}

/* node i's kernel and initrd: its own (testbed up --kernel) or the testbed's */
static void node_image(const struct tb_state *s, int i, char *kernel, size_t klen, char *initrd,
		       size_t ilen)
{
	char f[96];

	if (!s->node[i].kver[0]) {
		snprintf(kernel, klen, "%s", s->kernel_path);
		tb_state_path(initrd, ilen, "initrd.cpio");
		return;
	}
	snprintf(kernel, klen, "%s/kernel-%s/boot/vmlinuz-%s", ctl_cache_dir(), s->node[i].kver,
		 s->node[i].kver);
	snprintf(f, sizeof(f), "initrd-%s.cpio", s->node[i].kver);
	tb_state_path(initrd, ilen, f);
}

/* per-node VMs: an image for each kernel asked for by --kernel, beside the
 * default's (the same overlay: one token, one ssh key) */
static int other_kernels(struct tb_state *s, const struct tb_up_opts *o, int base)
{
	int i, j, r, ssh, last = -1;

	for (i = 0; i < s->nodes; i++)
		if (o->kver[i])
			last = i;
	for (i = 0; i < s->nodes; i++) {
		char pkg[96], kernel[PATH_MAX], kver[64], initrd[PATH_MAX], f[96];

		if (!o->kver[i])
			continue;
		for (j = 0; j < i && !(o->kver[j] && !strcmp(o->kver[j], o->kver[i])); j++)
			;
		if (j < i) {	/* built for an earlier node */
			memcpy(s->node[i].kver, s->node[j].kver, sizeof(s->node[i].kver));
			continue;
		}
		snprintf(pkg, sizeof(pkg), "linux-image-%s", o->kver[i]);
		snprintf(f, sizeof(f), "initrd-%s.cpio", o->kver[i]);
		tb_state_path(initrd, sizeof(initrd), f);
		log_info("%s: kernel %s (its own image)", s->node[i].name, o->kver[i]);
		r = vm_image(s, base, pkg, kernel, sizeof(kernel), kver, sizeof(kver), initrd, &ssh,
			     i == last ? IMG_LAST : 0);
		if (r)
			return r;
		snprintf(s->node[i].kver, sizeof(s->node[i].kver), "%s", kver);
	}
	return 0;
}

static int vm_up(struct tb_state *s, const struct tb_up_opts *o)
{
	char initrd[PATH_MAX], kernel[PATH_MAX] = "";
	int r, base, ssh = 1, i, others = 0;
	double t0;

	s->topology = o->topology;
	if (s->topology == TB_PER_NODE)
		s->node_mem_mb = o->mem_mb ? o->mem_mb : 512;
	for (i = 0; s->topology == TB_PER_NODE && i < o->nodes && i < TB_MAX_NODES; i++)
		others |= o->kver[i] != NULL;
	base = vm_plan(s, o);
	if (base < 0)
		return base;
	tb_state_path(initrd, sizeof(initrd), "initrd.cpio");
	r = vm_image(s, base, NULL, kernel, sizeof(kernel), s->kver, sizeof(s->kver), initrd, &ssh,
		     IMG_STAGE | (others ? 0 : IMG_LAST));
	if (r)
		return r;
	if (s->topology == TB_PER_NODE)	/* what a node boots (again, at a reboot) */
		snprintf(s->kernel_path, sizeof(s->kernel_path), "%s", kernel);
	if (others && (r = other_kernels(s, o, base)))
		return r;
	choose_accel(s, o->accel, kernel, initrd);
	t0 = rtb_now_s();
	if (s->topology == TB_PER_NODE) {
		log_info("booting %d nodes, a qemu (%s) and kernel %s each, %d MiB, joined by the "
			 "switch rtbbr0", s->nodes, s->accel, s->kver, s->node_mem_mb);
		r = tb_switch_create(s->netdev_mtu);
		if (!r)
			r = tb_switch_agent_start(s, base + 2 * s->nodes);
		for (i = 0; !r && i < s->nodes && !ctl_interrupted; i++) {
			char k[PATH_MAX], rd[PATH_MAX];

			node_image(s, i, k, sizeof(k), rd, sizeof(rd));
			r = vm_boot_node(s, i, ssh, k, rd);
		}
	} else {
		r = vm_boot(s, o, base, ssh, kernel, initrd);
	}
	if (r)
		return r;
	if (s->topology != TB_PER_NODE)
		unlink(initrd);	/* qemu has loaded it into guest memory */
	r = tb_save(s);
	if (r)
		return r;
	r = tb_wait_agents(s, o->timeout_s, vm_booting);
	if (!r && s->topology == TB_PER_NODE)
		r = switch_agent_ready(s);
	s->boot_s = rtb_now_s() - t0;
	if (r && r != -EINTR) {
		log_err("testbed up: %s after %.0f s", r == -ECHILD ? "a VM failed" :
			"agents not ready", s->boot_s);
		tell_consoles(s);
	}
	return r;
}

/* pid still runs: it exists and is not a zombie waiting for its reaper (a
 * qemu that lets go of its guest's memory can take seconds to exit, and
 * its command line may read empty meanwhile) */
static int still_running(pid_t pid)
{
	char st[256];
	const char *p;

	if (proc_read(pid, "stat", st, sizeof(st)) <= 0)
		return 0;
	p = strrchr(st, ')');	/* "pid (comm) S ...": comm may hold anything */
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* wait up to ms for pid to be gone: 0, or -ETIMEDOUT */
static int wait_gone(pid_t pid, int ms)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int i;

	for (i = 0; i < ms / 20; i++) {
		if (!still_running(pid))
			return 0;
		nanosleep(&ts, NULL);
	}
	return still_running(pid) ? -ETIMEDOUT : 0;
}

/* our qemu stopped: SIGTERM, then SIGKILL; back once the process is gone
 * (its command line goes before its files do: the tap, the pid file) */
static int stop_qemu(pid_t pid)
{
	if (!qemu_ours(pid))
		return 0;
	kill(pid, SIGTERM);
	if (!wait_gone(pid, 10000))
		return 0;
	kill(pid, SIGKILL);
	if (!wait_gone(pid, 10000))
		return 0;
	log_err("qemu pid %d does not exit", (int)pid);
	return -EBUSY;
}

/* every node's qemu (by the state, and by its pid file: an up killed before
 * it saved a pid), then the switch */
static int down_per_node(const struct tb_state *s)
{
	int i, r = 0;

	for (i = 0; i < s->nodes; i++) {
		char file[48];

		snprintf(file, sizeof(file), "qemu-node%d.pid", i);
		if (stop_qemu(s->node[i].qemu_pid) || stop_qemu(pid_file(file)))
			r = -EBUSY;
	}
	tb_switch_agent_stop(s);
	if (!r)
		r = tb_switch_remove(s->nodes);
	return r;
}

static int vm_down(const struct tb_state *s)
{
	char serial[PATH_MAX], keep[PATH_MAX];
	int r, i;

	r = s->topology == TB_PER_NODE ? down_per_node(s) :
	    stop_qemu(s->qemu_pid) ? -EBUSY : stop_qemu(pid_file("qemu.pid"));
	if (r)
		return r;
	/* the console logs outlive the state: where to look after a failure */
	for (i = 0; i < (s->topology == TB_PER_NODE ? s->nodes : 1); i++) {
		char name[48];

		serial_path(s, i, serial, sizeof(serial));
		if (s->topology == TB_PER_NODE)
			snprintf(name, sizeof(name), "last-serial-node%d.log", i);
		else
			snprintf(name, sizeof(name), "last-serial.log");
		snprintf(keep, sizeof(keep), "%s/%s", ctl_cache_dir(), name);
		if (!access(serial, R_OK) && rename(serial, keep))
			ctl_copy_file(serial, keep, O_TRUNC, 0600);	/* EXDEV: /run and /var */
	}
	return 0;
}

/* node i's agent answers hello with its port ACTIVE, within timeout_s */
static int node_ready(const struct tb_state *s, int i, int timeout_s, char *err, size_t errlen)
{
	double t0 = rtb_now_s();
	char e2[256] = "";

	while (rtb_now_s() - t0 < timeout_s && !ctl_interrupted) {
		struct agentc c;
		json_t *res = NULL;

		if (!tb_agent_open(&c, s, i, 1000)) {
			int ok = !agentc_call(&c, "hello", NULL, &res, 3000, e2, sizeof(e2)) &&
				 !strcmp(json_string_value(json_object_get(res, "state")) ?: "", "ACTIVE");

			json_decref(res);
			agentc_close(&c);
			if (ok)
				return 0;
		}
		if (!qemu_ours(s->node[i].qemu_pid)) {
			snprintf(err, errlen, "%s: its qemu exited while booting (see %s)",
				 s->node[i].name, "serial-nodeN.log in the state directory");
			return -ECHILD;
		}
		usleep(250 * 1000);
	}
	snprintf(err, errlen, "%s: its agent not ready after %d s", s->node[i].name, timeout_s);
	return ctl_interrupted ? -EINTR : -ETIMEDOUT;
}

int tb_node_fault(struct tb_state *s, int i, enum tb_node_fault f, int timeout_s, char *err,
		  size_t errlen)
{
	pid_t pid = s->node[i].qemu_pid;
	char initrd[PATH_MAX], cfg[PATH_MAX], kernel[PATH_MAX];
	int r;

	if (s->backend != TB_VM || s->topology != TB_PER_NODE) {
		snprintf(err, errlen, "a node fault needs a kernel a node (testbed up --topology "
			 "per-node); this testbed's nodes share %s",
			 s->backend == TB_VM ? "one VM's kernel" : "this host's kernel");
		return -EOPNOTSUPP;
	}
	switch (f) {
	case TB_CRASH:
	case TB_FREEZE:
	case TB_THAW:
		if (!qemu_ours(pid)) {
			snprintf(err, errlen, "%s: its qemu is not running (crashed?)", s->node[i].name);
			return -ESRCH;
		}
		kill(pid, f == TB_CRASH ? SIGKILL : f == TB_FREEZE ? SIGSTOP : SIGCONT);
		if (f == TB_CRASH && wait_gone(pid, 10000)) {
			snprintf(err, errlen, "%s: qemu %d does not exit", s->node[i].name, (int)pid);
			return -EBUSY;
		}
		return 0;
	case TB_PORT_DOWN:
	case TB_PORT_UP:
		return tb_switch_port_set(i, f == TB_PORT_UP, err, errlen);
	case TB_REBOOT:
		break;
	case TB_NIC_RESET:	/* the agent's (up.c), on any backend */
		snprintf(err, errlen, "a nic reset is the node agent's");
		return -EINVAL;
	}
	/* reboot: the same kernel and image, the same ports; its agent back */
	node_image(s, i, kernel, sizeof(kernel), initrd, sizeof(initrd));
	if (!kernel[0] || access(kernel, R_OK) || access(initrd, R_OK)) {
		snprintf(err, errlen, "%s: no image to boot again (%s)", s->node[i].name, initrd);
		return -ENOENT;
	}
	if (qemu_ours(pid)) {
		kill(pid, SIGCONT);	/* a frozen one dies too */
		if (stop_qemu(pid)) {
			snprintf(err, errlen, "%s: qemu %d does not exit", s->node[i].name, (int)pid);
			return -EBUSY;
		}
	}
	tb_state_path(cfg, sizeof(cfg), "ssh/config");
	r = vm_boot_node(s, i, access(cfg, R_OK) ? 1 : 0, kernel, initrd);
	if (r) {
		snprintf(err, errlen, "%s: qemu did not start again", s->node[i].name);
		return r;
	}
	return node_ready(s, i, timeout_s, err, errlen);
}

/* qemu runs anywhere: KVM when it works, TCG otherwise */
static int vm_available(void)
{
	return 1;
}

const struct tb_backend_ops tb_vm_ops = {
	.kind = TB_VM,
	.available = vm_available,
	.up = vm_up,
	.down = vm_down,
	.alive = vm_alive,
};
