// SPDX-License-Identifier: MIT
/*
 * Agents started over ssh for a profile's hosts (hosts.ssh): one OpenSSH
 * client per host, key-based (BatchMode: never a password prompt), that
 * forwards a free port on our loopback to the agent's port on the remote
 * loopback and runs there
 *
 *   umask 077; f=$(mktemp); head -n 1 > $f; exec 3< $f; rm -f $f
 *   rdma-agent --dev DEV --name NAME --listen 127.0.0.1:PORT --token-file /proc/self/fd/3 &
 *   cat > /dev/null; kill $agent; wait
 *
 * The token, fresh for this run, goes down ssh's stdin: it is never on a
 * command line (remote `ps` would show it) and never in a file anyone else
 * can read, and its file is gone before the agent starts. ssh's stdin
 * stays open while the run lasts: closing it -- or rdmactl dying, which
 * closes it too -- ends `cat`, which stops the agent (SIGTERM: it releases
 * its arms and leased fault rules), and ssh exits. The clients run in their
 * own session, so a Ctrl-C on rdmactl's terminal does not reach them:
 * rdmactl tears down in order (rules, arms, then the agents).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ctl/exp/exp.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/proto.h"

#define SSH_READY_MS 30000

/* a test's pause at a named point (RDMACTL_TEST_AT=NAME; only the run
 * suite sets it): the ordering a busy machine makes now and then, made
 * certain */
static void test_point(const char *name)
{
	const char *at = getenv("RDMACTL_TEST_AT");

	if (at && !strcmp(at, name))
		usleep(500000);
}

/* the last line ssh wrote on stderr (its reason), into buf */
static void ssh_reason(int logfd, char *buf, size_t len)
{
	char tmp[4096], *end, *start;
	ssize_t n = pread(logfd, tmp, sizeof(tmp) - 1, 0);

	buf[0] = 0;
	if (n <= 0)
		return;
	tmp[n] = 0;
	end = tmp + strlen(tmp);
	while (end > tmp && (end[-1] == '\n' || end[-1] == '\r'))
		*--end = 0;
	start = strrchr(tmp, '\n');
	snprintf(buf, len, "%s", start ? start + 1 : tmp);
}

int ssh_host_argv(const struct profile *p, char **argv)
{
	int n = 0, k;

	argv[n++] = "ssh";
	if (p->ssh.config_arg[0]) {	/* the config as checked (profile_hosts.c) */
		argv[n++] = "-F";
		argv[n++] = (char *)p->ssh.config_arg;
	}
	argv[n++] = "-o";
	argv[n++] = "BatchMode=yes";
	for (k = 0; k < p->ssh.nopts; k++) {
		argv[n++] = "-o";
		argv[n++] = (char *)p->ssh.opt[k];
	}
	return n;
}

/* agent i: a node's (on its device) or, past the nodes, a switch host's
 * (--no-rdma): its ssh destination, name, remote port and device option */
static void ssh_target(const struct profile *p, int i, const char **dest, const char **name,
		       int *aport, char *devopt, size_t len)
{
	if (i < p->nhosts) {
		*dest = p->host[i].ssh;
		*name = p->host[i].name;
		*aport = p->host[i].aport;
		snprintf(devopt, len, "--dev %s", p->host[i].dev);
	} else {
		*dest = p->swh[i - p->nhosts].ssh;
		*name = p->swh[i - p->nhosts].name;
		*aport = p->swh[i - p->nhosts].aport;
		snprintf(devopt, len, "--no-rdma");
	}
}

static int ssh_spawn(struct ssh_agents *sa, int i, const struct profile *p, const char *token)
{
	const char *dest, *name;
	char fwd[96], cmd[1024], devopt[48], tmpl[] = "/tmp/rdmactl-ssh.XXXXXX";
	int aport;
	char *argv[32 + 2 * PROF_MAX_SSH_OPTS];
	int in[2], n;
	pid_t pid;

	ssh_target(p, i, &dest, &name, &aport, devopt, sizeof(devopt));
	sa->lport[i] = net_free_port(INADDR_LOOPBACK);
	if (sa->lport[i] < 0)
		return sa->lport[i];
	snprintf(fwd, sizeof(fwd), "127.0.0.1:%d:127.0.0.1:%d", sa->lport[i], aport);
	snprintf(cmd, sizeof(cmd),
		 "umask 077; f=$(mktemp) || exit 1; head -n 1 > \"$f\"; exec 3< \"$f\"; "
		 "rm -f \"$f\"; %s %s --name %s --listen 127.0.0.1:%d --token-file /proc/self/fd/3 "
		 "& a=$!; exec 3<&-; cat > /dev/null; kill $a 2>/dev/null; wait $a",
		 p->ssh.agent, devopt, name, aport);
	n = ssh_host_argv(p, argv);
	argv[n++] = "-o";
	argv[n++] = "ExitOnForwardFailure=yes";
	argv[n++] = "-o";
	argv[n++] = "ServerAliveInterval=5";
	argv[n++] = "-L";
	argv[n++] = fwd;
	argv[n++] = "--";
	argv[n++] = (char *)dest;
	argv[n++] = cmd;
	argv[n] = NULL;

	sa->logfd[i] = mkostemp(tmpl, O_CLOEXEC);
	if (sa->logfd[i] < 0)
		return -errno;
	unlink(tmpl);
	if (pipe2(in, O_CLOEXEC))
		return -errno;
	{
		/* its own session: the terminal's Ctrl-C is rdmactl's to handle */
		struct proc_io io = { in[0], open("/dev/null", O_WRONLY | O_CLOEXEC), sa->logfd[i], 1 };
		int r = proc_spawn(argv, &io, &pid);

		if (io.out >= 0)
			close(io.out);
		close(in[0]);
		if (r) {
			close(in[1]);
			return r;
		}
	}
	sa->pid[i] = pid;
	sa->fd[i] = in[1];
	test_point("ssh-token-late");
	/* an ssh that has already given up (a refused connection is quick)
	 * closed its stdin: EPIPE here, and ssh_ready reports its own status
	 * and reason, not a "Broken pipe" */
	if (dprintf(sa->fd[i], "%s\n", token) < 0 && errno != EPIPE)
		return -errno;
	return 0;
}

/* wait until the agent answers through the tunnel, or ssh gave up */
static int ssh_ready(struct ssh_agents *sa, int i, const char *name, const char *token,
		     char *err, size_t errlen)
{
	double t0 = rtb_now_s();
	struct agentc c;
	int st;

	while ((rtb_now_s() - t0) * 1000 < SSH_READY_MS && !ctl_interrupted) {
		json_t *res = NULL;
		char e[256];

		if (!proc_reap(sa->pid[i], 0, &st)) {
			char why[512];

			sa->pid[i] = 0;
			ssh_reason(sa->logfd[i], why, sizeof(why));
			snprintf(err, errlen, "ssh exited %d%s%s", st, why[0] ? ": " : "", why);
			return -EIO;
		}
		if (!agentc_open(&c, name, "127.0.0.1", sa->lport[i], token, 1000)) {
			int r = agentc_call(&c, "hello", NULL, &res, 2000, e, sizeof(e));

			json_decref(res);
			agentc_close(&c);
			if (!r)
				return 0;
		}
		usleep(200000);
	}
	snprintf(err, errlen, "%s", ctl_interrupted ? "interrupted" :
		 "the agent did not answer within 30 s (ssh up, agent not listening?)");
	return -ETIMEDOUT;
}

int ssh_agents_start(struct ssh_agents *sa, const struct profile *p, struct tb_state *s)
{
	char err[640];
	int i, r;

	memset(sa, 0, sizeof(*sa));
	for (i = 0; i < SSH_MAX_AGENTS; i++)
		sa->fd[i] = sa->logfd[i] = -1;
	if (p->ssh.config[0] && !p->ssh.config_arg[0]) {	/* absent when the profile loaded */
		log_err("hosts.ssh.config: %s: no such file (it is checked when the profile loads)",
			p->ssh.config);
		return -ENOENT;
	}
	if (proto_token_new(s->token, sizeof(s->token))) {
		log_err("cannot make a token: no random bytes from the kernel");
		return -EIO;
	}
	sa->n = p->nhosts + p->nswitches;
	/* every ssh at once: their handshakes overlap */
	for (i = 0; i < sa->n; i++) {
		const char *dest, *name;
		char devopt[48];
		int aport;

		ssh_target(p, i, &dest, &name, &aport, devopt, sizeof(devopt));
		r = ssh_spawn(sa, i, p, s->token);
		if (r) {
			log_err("%s %s (ssh %s): %s", i < p->nhosts ? "host" : "switch", name, dest,
				strerror(-r));
			ssh_agents_stop(sa);
			return r;
		}
		if (i >= p->nhosts)
			continue;
		snprintf(s->node[i].host, sizeof(s->node[i].host), "127.0.0.1");
		s->node[i].port = sa->lport[i];
		snprintf(s->node[i].dev, sizeof(s->node[i].dev), "%s", p->host[i].dev);
	}
	for (i = 0; i < sa->n; i++) {
		const char *dest, *name;
		char devopt[48];
		int aport;

		ssh_target(p, i, &dest, &name, &aport, devopt, sizeof(devopt));
		r = ssh_ready(sa, i, name, s->token, err, sizeof(err));
		if (r) {
			log_err("%s %s (ssh %s): %s", i < p->nhosts ? "host" : "switch", name, dest,
				err);
			ssh_agents_stop(sa);
			return r;
		}
	}
	return 0;
}

void ssh_agents_stop(struct ssh_agents *sa)
{
	int i;

	/* EOF on their stdin: each remote side stops its agent, ssh exits */
	for (i = 0; i < sa->n; i++)
		if (sa->fd[i] >= 0) {
			close(sa->fd[i]);
			sa->fd[i] = -1;
		}
	for (i = 0; i < sa->n; i++) {
		/* 10 s to go by themselves, then firmly */
		if (sa->pid[i] > 0 && proc_reap(sa->pid[i], 10000, NULL) == -ETIMEDOUT)
			proc_stop(sa->pid[i], -1);
		sa->pid[i] = 0;
		if (sa->logfd[i] >= 0) {
			close(sa->logfd[i]);
			sa->logfd[i] = -1;
		}
	}
	sa->n = 0;
}
