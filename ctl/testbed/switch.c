// SPDX-License-Identifier: MIT
/*
 * The switch of a testbed of per-node VMs: a Linux bridge on this host,
 * rtbbr0, whose ports are the nodes' NICs (rtbsw0, rtbsw1, ...: each the tap
 * of a node's virtio NIC, made by its qemu and gone with it). It is the
 * "Linux box in the path" of a hardware fabric: what crosses between nodes
 * crosses it, and faults on its ports reach every kernel's traffic.
 *
 * The bridge holds no address (this host is not on the testbed network, so
 * nothing of it leaves for any other address), IPv6 is off on it and its
 * ports (no ND or MLD: the port counters are RoCE and ARP), STP is off, and
 * netfilter never sees its frames (a host firewall's FORWARD policy, such
 * as Docker's DROP, would otherwise cut the nodes apart).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ctl/testbed/backend.h"
#include "lib/log.h"
#include "lib/proc.h"

#define SWITCH "rtbbr0"

void tb_switch_port(int node, char *buf, size_t len)
{
	snprintf(buf, len, "rtbsw%d", node);
}

int tb_switch_exists(void)
{
	return access("/sys/class/net/" SWITCH, F_OK) == 0;
}

static int link_exists(const char *dev)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/class/net/%s", dev);
	return access(path, F_OK) == 0;
}

static void no_ipv6(const char *dev)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", dev);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1\n", 2) != 2)
			log_info("note: %s: IPv6 stays on", dev);
		close(fd);
	}
}

/* ip ARGS...; its first output line into err on failure */
static int ip(char *err, size_t errlen, char *const argv[])
{
	char out[512] = "";
	int r = proc_run(argv, out, sizeof(out));

	if (r && err)
		snprintf(err, errlen, "%.*s", (int)strcspn(out, "\n"), out[0] ? out : "failed");
	return r;
}

int tb_switch_create(int mtu)
{
	char m[16], err[256];
	char *add[] = { "ip", "link", "add", SWITCH, "type", "bridge", "stp_state", "0",
			"forward_delay", "0", "nf_call_iptables", "0", "nf_call_ip6tables", "0",
			"nf_call_arptables", "0", NULL };
	char *up[] = { "ip", "link", "set", SWITCH, "mtu", m, "up", NULL };

	if (tb_switch_exists()) {
		log_err("%s exists: another testbed's switch (rdmactl testbed down, or ip link del %s)",
			SWITCH, SWITCH);
		return -EEXIST;
	}
	if (ip(err, sizeof(err), add)) {
		log_err("cannot create the switch (bridge %s): %s", SWITCH, err);
		return -EIO;
	}
	no_ipv6(SWITCH);
	snprintf(m, sizeof(m), "%d", mtu);
	if (ip(err, sizeof(err), up)) {
		log_err("cannot bring the switch %s up: %s", SWITCH, err);
		return -EIO;
	}
	return 0;
}

int tb_switch_attach(int node, int mtu)
{
	char dev[16], m[16], err[256];
	char *set[] = { "ip", "link", "set", dev, "master", SWITCH, "mtu", m, "up", NULL };

	tb_switch_port(node, dev, sizeof(dev));
	snprintf(m, sizeof(m), "%d", mtu);
	no_ipv6(dev);
	if (ip(err, sizeof(err), set)) {
		log_err("node%d: cannot make %s a port of the switch: %s", node, dev, err);
		return -EIO;
	}
	return 0;
}

int tb_switch_port_set(int node, int up, char *err, size_t errlen)
{
	char dev[16], e2[256];
	char *set[] = { "ip", "link", "set", dev, up ? "up" : "down", NULL };

	tb_switch_port(node, dev, sizeof(dev));
	if (ip(e2, sizeof(e2), set)) {
		snprintf(err, errlen, "node%d: ip link set %s %s: %s", node, dev, set[4], e2);
		return -EIO;
	}
	return 0;
}

int tb_switch_remove(int nodes)
{
	char dev[16], err[256];
	char *del[] = { "ip", "link", "del", dev, NULL };
	int i, r = 0;

	for (i = 0; i < nodes; i++) {	/* a tap outlives its qemu only if made persistent */
		tb_switch_port(i, dev, sizeof(dev));
		/* one going away with its qemu is not ours to remove */
		if (link_exists(dev) && ip(err, sizeof(err), del) && link_exists(dev)) {
			log_err("cannot remove %s: %s", dev, err);
			r = -EIO;
		}
	}
	snprintf(dev, sizeof(dev), "%s", SWITCH);
	if (link_exists(dev) && ip(err, sizeof(err), del)) {
		log_err("cannot remove the switch %s: %s", SWITCH, err);
		r = -EIO;
	}
	return r;
}

/*
 * --switch xdp: rdma-inject forward on every port, the nodes' MACs named,
 * so XDP moves every frame and the bridge sees none. The switch's agent
 * puts rules on the same ports; they run in the forwarder's program.
 */
int tb_switch_xdp_start(const struct tb_state *s)
{
	char inj[PATH_MAX], port[TB_MAX_NODES][16], mac[TB_MAX_NODES][40], out[512] = "";
	char *argv[4 + 3 * TB_MAX_NODES + 1];
	int i, n = 0, r;

	snprintf(inj, sizeof(inj), "%s/rdma-inject", ctl_bin_dir());
	argv[n++] = inj;
	argv[n++] = "forward";
	for (i = 0; i < s->nodes && i < TB_MAX_NODES; i++) {
		tb_switch_port(i, port[i], sizeof(port[i]));
		argv[n++] = port[i];
	}
	for (i = 0; i < s->nodes && i < TB_MAX_NODES; i++) {
		snprintf(mac[i], sizeof(mac[i]), TB_MAC_DATA "=%s", i, port[i]);
		argv[n++] = "mac";
		argv[n++] = mac[i];
	}
	argv[n] = NULL;
	r = proc_run(argv, out, sizeof(out));
	if (r) {
		log_err("the XDP switch (rdma-inject forward): %.*s", (int)strcspn(out, "\n"),
			out[0] ? out : "failed");
		return -EIO;
	}
	log_info("switch: %.*s", (int)strcspn(out, "\n"), out);
	return 0;
}

/* a node's new tap (its VM booted again) taken into the XDP switch in its
 * old place: 0 or -EIO (said) */
int tb_switch_xdp_port(int i)
{
	char inj[PATH_MAX], port[16], out[512] = "";
	char *argv[] = { inj, "forward", "port", port, NULL };

	snprintf(inj, sizeof(inj), "%s/rdma-inject", ctl_bin_dir());
	tb_switch_port(i, port, sizeof(port));
	if (proc_run(argv, out, sizeof(out))) {
		log_err("the XDP switch: %.*s", (int)strcspn(out, "\n"), out[0] ? out : "failed");
		return -EIO;
	}
	return 0;
}

void tb_switch_xdp_stop(void)
{
	char inj[PATH_MAX], out[256];
	char *argv[] = { inj, "flush", "if-empty", NULL };

	snprintf(inj, sizeof(inj), "%s/rdma-inject", ctl_bin_dir());
	if (proc_run(argv, out, sizeof(out)))
		log_info("note: rdma-inject flush if-empty: %.*s", (int)strcspn(out, "\n"), out);
}

/*
 * The switch's agent: rdma-agent --no-rdma on 127.0.0.1, named "switch".
 * Its rdma-inject puts rules, counters and traces on the switch ports,
 * leased to the connection that added them, as a node's agent does on its
 * NIC. It reads the testbed's token file; its log is $STATE/switch-agent.log.
 */
int tb_switch_agent_start(struct tb_state *s, int port)
{
	char agent[PATH_MAX], at[64], logf[PATH_MAX], tok[PATH_MAX];
	char *argv[] = { agent, "--no-rdma", "--name", "switch", "--listen", at, "--token-file", tok,
			 NULL };
	struct proc_io io = { open("/dev/null", O_RDONLY | O_CLOEXEC), -1, -1, 1 };
	pid_t pid;
	int r;

	snprintf(agent, sizeof(agent), "%s/rdma-agent", ctl_bin_dir());
	snprintf(at, sizeof(at), "127.0.0.1:%d", port);
	tb_state_path(logf, sizeof(logf), "switch-agent.log");
	tb_state_path(tok, sizeof(tok), "token");
	io.out = io.err = open(logf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	r = proc_spawn(argv, &io, &pid);
	if (io.in >= 0)
		close(io.in);
	if (io.out >= 0)
		close(io.out);
	if (r) {
		log_err("the switch's agent (%s): %s", agent, strerror(-r));
		return r;
	}
	snprintf(s->sw.name, sizeof(s->sw.name), "switch");
	snprintf(s->sw.dev, sizeof(s->sw.dev), "-");
	snprintf(s->sw.host, sizeof(s->sw.host), "127.0.0.1");
	s->sw.port = port;
	s->sw.agent_pid = pid;
	return tb_save(s);
}

/* pid is still the switch's agent (a saved pid may be reused) */
static int switch_agent_ours(pid_t pid)
{
	return tb_is_agent(pid, "switch");
}

int tb_switch_agent_running(const struct tb_state *s)
{
	return switch_agent_ours(s->sw.agent_pid);
}

void tb_switch_agent_stop(const struct tb_state *s)
{
	pid_t p = s->sw.agent_pid;
	int k;

	if (!switch_agent_ours(p))
		return;
	kill(p, SIGTERM);
	for (k = 0; k < 50; k++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		waitpid(p, NULL, WNOHANG);
		if (kill(p, 0))
			return;
		nanosleep(&ts, NULL);
	}
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}
