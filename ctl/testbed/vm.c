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
		{ ctl_libexec_dir, "nvmf.sh", "usr/bin/rdmatb-nvmf", 0755 },
		{ ctl_libexec_dir, "nfs.sh", "usr/bin/rdmatb-nfs", 0755 },
		{ ctl_libexec_dir, "slurm.sh", "usr/bin/rdmatb-slurm", 0755 },
		{ ctl_libexec_dir, "storage-lib.sh", "usr/lib/rdma-testbed/storage-lib.sh", 0644 },
		{ ctl_bin_dir, "rdma-agent", "usr/bin/rdma-agent", 0755 },
		{ ctl_bin_dir, "rdma-inject", "usr/bin/rdma-inject", 0755 },
		{ ctl_bin_dir, "rdma-run", "usr/bin/rdma-run", 0755 },
		/* rdmactl run --slurm inside the nodes' allocation (rdmatb-slurm) */
		{ ctl_bin_dir, "rdmactl", "usr/bin/rdmactl", 0755 },
		{ ctl_bpf_dir, "inject.bpf.o", "usr/lib/rdma-testbed/bpf/inject.bpf.o", 0644 },
		/* built only where Open MPI's mpicc is (make deps): optional */
		{ ctl_bin_dir, "rdmatb-mpi-bench", "usr/bin/rdmatb-mpi-bench", 0755 | S_ISVTX },
		{ NULL, NULL, NULL, 0 },
	};
	char src[PATH_MAX], dst[PATH_MAX], d[PATH_MAX];
	FILE *f;
	int i, r;

	ctl_rm_rf(dir);
	for (i = 0; files[i].name; i++) {
		snprintf(src, sizeof(src), "%s/%s", files[i].from(), files[i].name);
		snprintf(dst, sizeof(dst), "%s/%s", dir, files[i].to);
		if ((files[i].mode & S_ISVTX) && access(src, F_OK))
			continue;
		snprintf(d, sizeof(d), "%s", dst);
		*strrchr(d, '/') = 0;
		r = ctl_mkdir_p(d, 0755);
		if (!r)
			r = ctl_copy_file(src, dst, O_TRUNC, files[i].mode & 0777);
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

/* loglevel 5: a soft lockup's or an oops's stack (KERN_WARNING) reaches
 * the console log too, every CPU's for a lockup */
#define APPEND "console=ttyS0 quiet loglevel=5 softlockup_all_cpu_backtrace=1 panic=-1 " \
	       "mitigations=off"

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
		tb_serial_path(s, i, serial, sizeof(serial));
		if (!qemu_ours(s->topology == TB_PER_NODE ? s->node[i].qemu_pid : s->qemu_pid) ||
		    tb_file_has(serial, "@@ERROR") || tb_file_has(serial, "@@AGENT-EXIT"))
			return 0;
	}
	return 1;
}

/*
 * ssh from node to node over the testbed's network (Open MPI's mpirun
 * starts orted that way): a key of the nodes' own in root's ~/.ssh, which
 * authorized_keys (path) also takes, and the testbed's host key pinned for
 * the nodes' addresses (known_hosts is written with the host key's, later)
 */
static int stage_node_key(const char *overlay, const char *authorized)
{
	char key[PATH_MAX], pub[PATH_MAX], out[1024];
	char *argv[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "rdma-testbed-nodes",
			 "-f", key, NULL };
	int r;

	snprintf(key, sizeof(key), "%s/root/.ssh", overlay);
	if ((r = ctl_mkdir_p(key, 0700)))
		return r;
	snprintf(key, sizeof(key), "%s/root/.ssh/id_ed25519", overlay);
	if (proc_run(argv, out, sizeof(out)))
		return -ENOENT;
	snprintf(pub, sizeof(pub), "%s.pub", key);
	return ctl_copy_file(pub, authorized, O_APPEND, 0600);
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
	/* the client key may log in as root, and so may the nodes' own */
	snprintf(pub, sizeof(pub), "%s.pub", ck);
	snprintf(path, sizeof(path), "%s/etc/ssh/authorized_keys", overlay);
	if ((r = ctl_copy_file(pub, path, O_TRUNC, 0600)) || (r = stage_node_key(overlay, path)))
		return r;
	/* the host key, pinned (every VM of the testbed has the one) */
	snprintf(pub, sizeof(pub), "%s.pub", hk);
	f = fopen(pub, "re");
	if (!f)
		return -errno;
	if (!fgets(key, sizeof(key), f))
		key[0] = 0;
	fclose(f);
	/* the nodes' own: every testbed address, and the nodes' names */
	snprintf(path, sizeof(path), "%s/root/.ssh/known_hosts", overlay);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f, "198.18.*,node* %s", key);
	if (fclose(f))
		return -EIO;
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
	qemu_base_args(args, &n, "rdma-testbed", kernel, initrd, serial, o->mem_mb, 2, s->accel, APPEND);
	args[n++] = "-nic";
	args[n++] = nic;
	log_info("booting %d nodes in qemu (%s), kernel %s", o->nodes, s->accel, s->kver);
	return qemu_start(args, n, "qemu", &s->qemu_pid, "the VM");
}

/* the MACs of node i's NICs: control (qemu user networking) and RoCE (the
 * switch port); the guest's /init tells them apart by these */
#define MAC_CTRL "52:54:00:72:63:%02x"
#define MAC_DATA TB_MAC_DATA

/* node i's qemu, daemonized: a control NIC forwarding its agent's and
 * sshd's ports, a RoCE NIC as tap rtbswI (made by qemu, gone with it) */
int vm_boot_node(struct tb_state *s, int i, int ssh, const char *kernel,
			const char *initrd)
{
	char serial[PATH_MAX], name[48], file[48], append[256];
	char ctrl[512], cdev[64], data[128], ddev[64], port[16], *args[64];
	int r, n = 0;

	tb_serial_path(s, i, serial, sizeof(serial));
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
	/* an XDP switch forwards frames as they are: the node's NIC sends them
	 * with their checksums done, as a real NIC puts them on the wire (with
	 * csum on, qemu hands the tap TCP segments whose checksum the other
	 * end's NIC was to finish; the bridge keeps that note, XDP cannot) */
	snprintf(ddev, sizeof(ddev), "virtio-net-pci,netdev=roce,mac=" MAC_DATA "%s", i,
		 s->switch_xdp ? ",csum=off" : "");
	n = 0;
	qemu_base_args(args, &n, name, kernel, initrd, serial, s->node_mem_mb, 1, s->accel, append);
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
		tb_serial_path(s, i, serial, sizeof(serial));
		log_err("last lines of %s's console (%s):",
			s->topology == TB_PER_NODE ? s->node[i].name : "the VM", serial);
		tb_tail_file(serial, n > 1 ? 12 : 25);
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
void vm_node_image(const struct tb_state *s, int i, char *kernel, size_t klen, char *initrd,
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

/* "6.1.0-57-amd64", or with other kernels "6.1.0-57-amd64 (node1: 6.12.118+deb12-amd64)" */
static void node_kernels(const struct tb_state *s, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", s->kver);
	const char *sep = " (";
	int i;

	for (i = 0; i < s->nodes && i < TB_MAX_NODES && n < len; i++) {
		if (!s->node[i].kver[0])
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%snode%d: %s", sep, i, s->node[i].kver);
		sep = ", ";
	}
	if (*sep == ',' && n < len)
		snprintf(buf + n, len - n, ")");
}

/* a per-node VM's memory: the kernel unpacks the image into a tmpfs of
 * half the memory the kernel and the image leave (a 156 MiB image in 704
 * MiB: a 208 MiB root, 63 MiB of it free), so three times the image, and
 * room to run and write (512 MiB at least; 64 MiB steps) */
static int node_mem_default(const char *initrd)
{
	struct stat st;
	long mib, need;

	if (stat(initrd, &st))
		return 512;
	mib = (long)(st.st_size >> 20);
	need = 3 * mib + 256;
	need = (need + 63) / 64 * 64;
	return need > 512 ? (int)need : 512;
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
	if (s->topology == TB_PER_NODE && !o->mem_mb)
		s->node_mem_mb = node_mem_default(initrd);
	if (others && (r = other_kernels(s, o, base)))
		return r;
	qemu_choose_accel(s, o->accel, kernel, initrd);
	t0 = rtb_now_s();
	if (s->topology == TB_PER_NODE) {
		char kv[512];

		node_kernels(s, kv, sizeof(kv));
		log_info("booting %d nodes, a qemu (%s) and kernel %s each, %d MiB, joined by the "
			 "switch rtbbr0", s->nodes, s->accel, kv, s->node_mem_mb);
		r = tb_switch_create(s->netdev_mtu);
		if (!r)
			r = tb_switch_agent_start(s, base + 2 * s->nodes);
		for (i = 0; !r && i < s->nodes && !ctl_interrupted; i++) {
			char k[PATH_MAX], rd[PATH_MAX];

			vm_node_image(s, i, k, sizeof(k), rd, sizeof(rd));
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
	if (!r && s->switch_xdp)
		r = tb_switch_xdp_start(s);
	s->boot_s = rtb_now_s() - t0;
	if (r && r != -EINTR) {
		log_err("testbed up: %s after %.0f s", r == -ECHILD ? "a VM failed" :
			"agents not ready", s->boot_s);
		tell_consoles(s);
	}
	return r;
}

/* every node's qemu (by the state, and by its pid file: an up killed before
 * it saved a pid), then the switch */
static int down_per_node(const struct tb_state *s)
{
	int i, r = 0;

	for (i = 0; i < s->nodes; i++) {
		char file[48];

		snprintf(file, sizeof(file), "qemu-node%d.pid", i);
		if (qemu_stop(s->node[i].qemu_pid) || qemu_stop(qemu_pid_file(file)))
			r = -EBUSY;
	}
	tb_switch_agent_stop(s);
	if (!r)
		r = tb_switch_remove(s->nodes);
	if (!r && s->switch_xdp)
		tb_switch_xdp_stop();
	return r;
}

static int vm_down(const struct tb_state *s)
{
	char serial[PATH_MAX], keep[PATH_MAX];
	int r, i;

	r = s->topology == TB_PER_NODE ? down_per_node(s) :
	    qemu_stop(s->qemu_pid) ? -EBUSY : qemu_stop(qemu_pid_file("qemu.pid"));
	if (r)
		return r;
	/* the console logs outlive the state: where to look after a failure */
	for (i = 0; i < (s->topology == TB_PER_NODE ? s->nodes : 1); i++) {
		char name[48];

		tb_serial_path(s, i, serial, sizeof(serial));
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
