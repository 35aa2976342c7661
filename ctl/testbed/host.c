// SPDX-License-Identifier: MIT
/*
 * Host backend: the VM's topology (testbed/topology.sh, same script) built
 * directly in this kernel when it has rdma_rxe, with names prefixed "rtb"
 * so nothing collides with the user's devices; agents are local processes
 * listening on 127.0.0.1. Changed sysctls and the moved "local" rule are
 * recorded in the state directory and restored by `down`.
 *
 * Agents-only backend (--backend agents): the same local agents with
 * --no-rdma and nothing else (no topology, no device): what the control
 * plane does with up to TB_MAX_AGENTS agents, on any machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ctl/testbed/backend.h"
#include "lib/log.h"
#include "lib/proc.h"

#define HOST_PREFIX "rtb"
#define HOST_PORT_BASE 47300
/* 28400..28655: below the kernel's ephemeral range (32768..), so that no
 * outgoing connection holds one of the 256 ports when an agent binds it */
#define AGENTS_PORT_BASE 28400

static int host_rxe_available(void)
{
	char *argv[] = { "modprobe", "-q", "rdma_rxe", NULL };

	if (!access("/sys/module/rdma_rxe", F_OK))
		return 1;
	return geteuid() == 0 && proc_run(argv, NULL, 0) == 0;
}

static int topology(const char *verb, const struct tb_state *s)
{
	char script[PATH_MAX], n[16], mtu[16];
	char *argv[] = { "sh", script, (char *)verb, n, mtu, (char *)ctl_state_dir(), NULL };

	snprintf(script, sizeof(script), "%s/topology.sh", ctl_libexec_dir());
	snprintf(n, sizeof(n), "%d", s->nodes);
	snprintf(mtu, sizeof(mtu), "%d", s->netdev_mtu);
	if (!strcmp(verb, "down")) {	/* down N STATE */
		argv[4] = (char *)ctl_state_dir();
		argv[5] = NULL;
	}
	setenv("TB_PREFIX", HOST_PREFIX, 1);
	return proc_run(argv, NULL, 0);
}

/* the testbed exists while its switch does; a dead agent is a node problem
 * (status shows it unreachable), not the end of the testbed */
static int host_alive(const struct tb_state *s)
{
	(void)s;
	return access("/sys/class/net/" HOST_PREFIX "br0", F_OK) == 0;
}

/* while coming up: every agent process must still be running. They are
 * our children here: one that exited is reaped (a zombie answers kill 0,
 * and an agent that could not listen was waited for until the timeout) */
static int agents_running(const struct tb_state *s)
{
	int i;

	for (i = 0; i < s->nodes; i++) {
		pid_t p = s->node[i].agent_pid;

		if (p <= 0 || waitpid(p, NULL, WNOHANG) == p || kill(p, 0))
			return 0;
	}
	return 1;
}

static pid_t spawn_agent(const struct tb_state *s, int i, const char *token_file)
{
	char agent[PATH_MAX], listen_at[64], logf[PATH_MAX];
	pid_t pid;

	snprintf(agent, sizeof(agent), "%s/rdma-agent", ctl_bin_dir());
	snprintf(listen_at, sizeof(listen_at), "%s:%d", s->node[i].host, s->node[i].port);
	snprintf(logf, sizeof(logf), "%s/agent%d.log", ctl_state_dir(), i);
	{
		char *argv[] = { agent, "--dev", (char *)s->node[i].dev, "--name",
				 (char *)s->node[i].name, "--listen", listen_at, "--token-file",
				 (char *)token_file, NULL };
		char *argv_nordma[] = { agent, "--no-rdma", "--name", (char *)s->node[i].name,
					"--listen", listen_at, "--token-file", (char *)token_file,
					NULL };
		struct proc_io io = { open("/dev/null", O_RDONLY | O_CLOEXEC),
				      open(logf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), -1,
				      1 };
		int r;

		io.err = io.out;
		r = proc_spawn(s->backend == TB_AGENTS ? argv_nordma : argv, &io, &pid);
		if (io.in >= 0)
			close(io.in);
		if (io.out >= 0)
			close(io.out);
		if (r) {
			errno = -r;
			return -ECHILD;
		}
	}
	return pid;
}

/* each agent that exited while coming up, with the last line of its log
 * (what it said as it gave up: a port in use, a token it could not read) */
static void say_exited(const struct tb_state *s)
{
	int i;

	for (i = 0; i < s->nodes; i++) {
		char logf[PATH_MAX], line[512], last[512] = "";
		pid_t p = s->node[i].agent_pid;
		FILE *f;

		if (p > 0 && waitpid(p, NULL, WNOHANG) != p && !kill(p, 0))
			continue;
		snprintf(logf, sizeof(logf), "%s/agent%d.log", ctl_state_dir(), i);
		f = fopen(logf, "re");
		while (f && fgets(line, sizeof(line), f))
			if (line[strspn(line, " \t\r\n")])
				snprintf(last, sizeof(last), "%.*s", (int)strcspn(line, "\r\n"), line);
		if (f)
			fclose(f);
		log_err("testbed up: %s's agent exited: %s (%s)", s->node[i].name,
			last[0] ? last : "it said nothing", logf);
	}
}

/*
 * Both local backends: nodes named, the token saved (the agents read it),
 * the topology built when there is one, one agent per node started and
 * waited for. dev_fmt names node i's device ("-": none, --no-rdma).
 */
static int local_up(struct tb_state *s, const struct tb_up_opts *o, const char *dev_fmt,
		    int port_base, int with_topology)
{
	char token_file[PATH_MAX];
	double t0 = rtb_now_s();
	int i, r;

	for (i = 0; i < o->nodes; i++) {
		snprintf(s->node[i].name, sizeof(s->node[i].name), "node%d", i);
		snprintf(s->node[i].dev, sizeof(s->node[i].dev), dev_fmt, i);
		snprintf(s->node[i].host, sizeof(s->node[i].host), "127.0.0.1");
		s->node[i].port = port_base + i;
	}
	if (proto_token_new(s->token, sizeof(s->token)))
		return -EIO;
	r = tb_save(s);	/* token file first: the agents read it */
	if (r)
		return r;
	if (with_topology && (r = topology("up", s))) {
		log_err("host topology: topology.sh up failed (exit %d)", r);
		return -EIO;
	}
	snprintf(token_file, sizeof(token_file), "%s/token", ctl_state_dir());
	for (i = 0; i < s->nodes; i++) {
		s->node[i].agent_pid = spawn_agent(s, i, token_file);
		if (s->node[i].agent_pid < 0)
			return -errno;
	}
	r = tb_save(s);
	if (r)
		return r;
	r = tb_wait_agents(s, o->timeout_s, agents_running);
	s->boot_s = rtb_now_s() - t0;
	if (r == -ECHILD)
		say_exited(s);
	else if (r)
		log_err("testbed up: agents not ready; see %s/agent*.log", ctl_state_dir());
	return r;
}

static int host_up(struct tb_state *s, const struct tb_up_opts *o)
{
	FILE *f = fopen("/proc/sys/kernel/osrelease", "re");

	if (f) {
		if (fgets(s->kver, sizeof(s->kver), f))
			s->kver[strcspn(s->kver, "\n")] = 0;
		fclose(f);
	}
	snprintf(s->accel, sizeof(s->accel), "none");
	snprintf(s->accel_why, sizeof(s->accel_why), "host kernel rdma_rxe");
	return local_up(s, o, HOST_PREFIX "rxe%d", HOST_PORT_BASE, 1);
}

/* pid is still the agent started for node i: an rdma-agent whose
 * command line names the node's device, or with --no-rdma its name */
static int is_our_agent(const struct tb_state *s, int i, pid_t pid)
{
	return tb_is_agent(pid, s->backend == TB_AGENTS ? s->node[i].name : s->node[i].dev);
}

static void agents_stop(const struct tb_state *s)
{
	int i, k;

	for (i = 0; i < s->nodes; i++) {
		pid_t p = s->node[i].agent_pid;

		if (p <= 0 || !is_our_agent(s, i, p)) {
			if (p > 0 && !kill(p, 0))
				log_info("node%d: pid %d is no longer its agent: left alone", i, (int)p);
			continue;
		}
		kill(p, SIGTERM);
	}
	/* all told at once, then waited for: 256 agents stop in one wait */
	for (i = 0; i < s->nodes; i++) {
		pid_t p = s->node[i].agent_pid;

		if (p <= 0 || !is_our_agent(s, i, p))
			continue;
		/* started by the rdmactl that ran `up`: not our child, polled */
		for (k = 0; k < 50 && !kill(p, 0); k++) {
			struct timespec ts = { 0, 100 * 1000 * 1000 };

			waitpid(p, NULL, WNOHANG);
			if (kill(p, 0))
				break;
			nanosleep(&ts, NULL);
		}
		if (!kill(p, 0))
			kill(p, SIGKILL);
	}
}

static int host_down(const struct tb_state *s)
{
	int r;

	agents_stop(s);
	r = topology("down", s);
	return r ? -EIO : 0;
}

static int agents_available(void)
{
	return 1;
}

static int agents_up(struct tb_state *s, const struct tb_up_opts *o)
{
	snprintf(s->accel, sizeof(s->accel), "none");
	snprintf(s->accel_why, sizeof(s->accel_why), "agents only (--no-rdma)");
	snprintf(s->kver, sizeof(s->kver), "-");
	return local_up(s, o, "-", AGENTS_PORT_BASE, 0);
}

static int agents_down(const struct tb_state *s)
{
	agents_stop(s);
	return 0;
}

/* the testbed is its agents: it exists while one of them runs */
static int agents_alive(const struct tb_state *s)
{
	int i;

	for (i = 0; i < s->nodes; i++)
		if (s->node[i].agent_pid > 0 && is_our_agent(s, i, s->node[i].agent_pid))
			return 1;
	return 0;
}

const struct tb_backend_ops tb_agents_ops = {
	.kind = TB_AGENTS,
	.available = agents_available,
	.up = agents_up,
	.down = agents_down,
	.alive = agents_alive,
};

const struct tb_backend_ops tb_host_ops = {
	.kind = TB_HOST,
	.available = host_rxe_available,
	.up = host_up,
	.down = host_down,
	.alive = host_alive,
};
