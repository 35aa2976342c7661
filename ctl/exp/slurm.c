// SPDX-License-Identifier: MIT
/*
 * rdmactl run --slurm: inside a Slurm allocation (sbatch, salloc), the
 * profile's nodes are the allocation's, and rdmactl starts their agents
 * itself, in one job step:
 *
 *   srun --overlap --nodes=N --ntasks=N --ntasks-per-node=1 --nodelist=A,B,...
 *        --input=all sh -c 'umask 077; f=$(mktemp); head -n 1 > $f; exec 3< $f;
 *        rm -f $f; rdma-agent [--dev DEV] --name $SLURMD_NODENAME
 *        --join ADDR:PORT --token-file /proc/self/fd/3 & ...;
 *        (read stdin to its end; kill $agent) <&4 & wait $agent'
 *
 * (a sh gives a background list /dev/null for stdin unless it is
 * redirected from another descriptor: busybox ignores <&0)
 *
 * Each agent dials rdmactl (hosts.join: no inbound port on the nodes) and
 * picks its node's device (the first with an ACTIVE port, or --dev's).
 * The token, fresh for this run, goes down srun's stdin, which srun gives
 * every task (--input=all): never on a command line, never in a file
 * another user can read, gone with the run. srun's stdin stays open while
 * the run lasts; closing it ends every task's reader, which stops its
 * agent (SIGTERM: arms and leased rules released), and the step ends with
 * them. An agent that fails (no device) ends its task, and the step
 * (--kill-on-bad-exit): rdmactl says why at once.
 * srun runs in its own session: a Ctrl-C on rdmactl's terminal is
 * rdmactl's, which tears down in order (rules, arms, then the step).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "ctl/base/ctl.h"
#include "ctl/exp/exp.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/proto.h"

int slurm_nodes(char (*names)[32], int max, char *err, size_t len)
{
	const char *list = getenv("SLURM_JOB_NODELIST");
	char out[16384], *tok, *save;
	char *argv[] = { "scontrol", "show", "hostnames", (char *)list, NULL };
	int n = 0, r;

	if (!list || !*list || !getenv("SLURM_JOB_ID")) {
		snprintf(err, len, "slurm: not inside a Slurm allocation (no SLURM_JOB_ID and "
			 "SLURM_JOB_NODELIST): run it from an sbatch script or salloc");
		return -ENOENT;
	}
	r = proc_run(argv, out, sizeof(out));	/* its stderr is ours: its words, said */
	if (r) {
		snprintf(err, len, "slurm: scontrol show hostnames %s: %s", list,
			 r == -ENOENT ? "no scontrol in PATH" : r < 0 ? strerror(-r) : "it failed");
		return r < 0 ? r : -EIO;
	}
	for (tok = strtok_r(out, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
		if (n == max) {
			snprintf(err, len, "slurm: the allocation has more than %d nodes", max);
			return -E2BIG;
		}
		if (strlen(tok) >= 32 || strspn(tok, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						     "0123456789_.-") != strlen(tok)) {
			snprintf(err, len, "slurm: node name '%.64s': expected at most 31 of "
				 "[A-Za-z0-9_.-]", tok);
			return -EINVAL;
		}
		snprintf(names[n++], 32, "%s", tok);
	}
	if (!n)
		snprintf(err, len, "slurm: scontrol show hostnames %s: no node", list);
	return n ? n : -ENOENT;
}

/* this host's IPv4 address as the other nodes reach it: its name's
 * (/etc/hosts, DNS), not a loopback one */
static int self_addr(char *ip, size_t len, char *err, size_t elen)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res, *a;
	char host[256];
	int r;

	if (gethostname(host, sizeof(host))) {
		snprintf(err, elen, "slurm: gethostname: %s", strerror(errno));
		return -errno;
	}
	host[sizeof(host) - 1] = 0;
	r = getaddrinfo(host, NULL, &hints, &res);
	if (r) {
		snprintf(err, elen, "slurm: this host's name '%s': %s (give --listen ADDR:PORT, "
			 "an address the nodes reach)", host, gai_strerror(r));
		return -ENOENT;
	}
	r = -ENOENT;
	for (a = res; a && r; a = a->ai_next) {
		const struct sockaddr_in *sa = (const struct sockaddr_in *)a->ai_addr;

		if ((ntohl(sa->sin_addr.s_addr) >> 24) == 127)
			continue;
		inet_ntop(AF_INET, &sa->sin_addr, ip, (socklen_t)len);
		r = 0;
	}
	freeaddrinfo(res);
	if (r)
		snprintf(err, elen, "slurm: this host's name '%s' has only loopback addresses "
			 "(give --listen ADDR:PORT, an address the nodes reach)", host);
	return r;
}

int slurm_listen(const char *listen, char *dial, size_t dlen, char *bind, size_t blen, char *err,
		 size_t len)
{
	char ip[64];
	int port, r;

	if (listen) {
		const char *c = strrchr(listen, ':');

		port = c ? atoi(c + 1) : 0;
		if (!c || c == listen || (size_t)(c - listen) >= sizeof(ip) || port < 1 ||
		    port > 65535 || strspn(c + 1, "0123456789") != strlen(c + 1)) {
			snprintf(err, len, "--listen '%s': expected ADDR:PORT (an address the nodes "
				 "reach)", listen);
			return -EINVAL;
		}
		snprintf(ip, sizeof(ip), "%.*s", (int)(c - listen), listen);
	} else {
		if ((r = self_addr(ip, sizeof(ip), err, len)))
			return r;
		if ((port = net_free_port(INADDR_ANY)) < 0) {
			snprintf(err, len, "slurm: no free port: %s", strerror(-port));
			return port;
		}
	}
	snprintf(dial, dlen, "%s:%d", ip, port);
	snprintf(bind, blen, "%s:%d", listen ? ip : "0.0.0.0", port);
	return 0;
}

int slurm_adopt(struct profile *p, const char *listen, char *err, size_t len)
{
	char names[PROF_MAX_HOSTS][32];
	int n, i, r;

	if (p->nhosts) {
		snprintf(err, len, "%s: --slurm takes the nodes from the allocation: a profile with "
			 "testbed:, not hosts:", p->file);
		return -EINVAL;
	}
	for (i = 0; i < p->nfaults; i++)
		if (p->fault[i].sw) {
			snprintf(err, len, "%s: fault '%s': port: switch: an allocation has no "
				 "testbed switch (port: nic puts the rule on the node's own "
				 "interface)", p->file, p->fault[i].name);
			return -EINVAL;
		}
	n = slurm_nodes(names, PROF_MAX_HOSTS, err, len);
	if (n < 0)
		return n;
	if (n < p->nodes) {
		snprintf(err, len, "slurm: the allocation has %d node%s, the profile wants %d", n,
			 n == 1 ? "" : "s", p->nodes);
		return -EINVAL;
	}
	if ((r = slurm_listen(listen, p->slurm.dial, sizeof(p->slurm.dial), p->join.listen,
			      sizeof(p->join.listen), err, len)))
		return r;
	p->join.on = 1;
	if (!p->join.wait_ns)
		p->join.wait_ns = 60000000000ULL;
	p->slurm.on = 1;
	p->slurm.nalloc = n;
	p->nhosts = p->nodes;
	for (i = 0; i < p->nhosts; i++) {
		memset(&p->host[i], 0, sizeof(p->host[i]));
		snprintf(p->host[i].name, sizeof(p->host[i].name), "%s", names[i]);
		p->host[i].swi = -1;
	}
	snprintf(p->backend, sizeof(p->backend), "hosts");
	return 0;
}

int slurm_agents_start(struct slurm_agents *sa, char (*names)[32], int n, const char *dev,
		       const char *dial, const char *token)
{
	char nodelist[PROF_MAX_HOSTS * 33] = "", nn[16], script[1024], devopt[64] = "";
	char tmpl[] = "/tmp/rdmactl-srun.XXXXXX", agent[PATH_MAX];
	char *argv[] = { "srun", "--overlap", "--nodes", nn, "--ntasks", nn, "--ntasks-per-node=1",
			 "--nodelist", nodelist, "--input=all", "--kill-on-bad-exit=1", "--label",
			 "--job-name=rdma-agent", "sh", "-c", script, NULL };
	int in[2], i, r;

	sa->on = 1;
	sa->pid = 0;
	sa->fd = sa->logfd = -1;
	sa->n = n;
	for (i = 0; i < n; i++) {
		snprintf(nodelist + strlen(nodelist), sizeof(nodelist) - strlen(nodelist), "%s%s",
			 i ? "," : "", names[i]);
		snprintf(sa->names[i], sizeof(sa->names[i]), "%s", names[i]);
	}
	snprintf(nn, sizeof(nn), "%d", n);
	if (dev && dev[0])
		snprintf(devopt, sizeof(devopt), "--dev %s ", dev);
	/* the agent next to this rdmactl: one install path on every node */
	snprintf(agent, sizeof(agent), "%s/rdma-agent", ctl_bin_dir());
	if (access(agent, X_OK))
		snprintf(agent, sizeof(agent), "rdma-agent");
	snprintf(script, sizeof(script),
		 "umask 077; f=$(mktemp) || exit 1; head -n 1 > \"$f\"; exec 3< \"$f\"; "
		 "rm -f \"$f\"; '%s' %s--name \"$SLURMD_NODENAME\" --join %s "
		 "--token-file /proc/self/fd/3 & a=$!; exec 3<&-; "
		 "exec 4<&0; (while read -r _; do :; done; kill $a 2>/dev/null) <&4 & "
		 "exec 4<&-; wait $a; r=$?; "
		 "kill $! 2>/dev/null; exit $r",
		 agent, devopt, dial);
	sa->logfd = mkostemp(tmpl, O_CLOEXEC);
	if (sa->logfd < 0)
		return -errno;
	unlink(tmpl);
	if (pipe2(in, O_CLOEXEC))
		return -errno;
	{	/* its own session: the terminal's Ctrl-C is rdmactl's to handle */
		struct proc_io io = { in[0], open("/dev/null", O_WRONLY | O_CLOEXEC), sa->logfd, 1 };

		r = proc_spawn(argv, &io, &sa->pid);
		if (io.out >= 0)
			close(io.out);
		close(in[0]);
		if (r) {
			close(in[1]);
			sa->pid = 0;
			return r;
		}
	}
	sa->fd = in[1];
	/* srun gone already (a bad node list is quick): EPIPE, and the wait
	 * for the agents says srun's own reason */
	if (dprintf(sa->fd, "%s\n", token) < 0 && errno != EPIPE)
		return -errno;
	return 0;
}

/* the first task srun saw fail by itself ("srun: error: NODE: task N:
 * Exited with exit code C", C not SIGTERM's 143) and its last words
 * (--label: "N: ..."): the task, or -1 */
static int failed_task(const char *buf, char *words, size_t len)
{
	const char *l;
	int task = -1;

	words[0] = 0;
	for (l = buf; *l && task < 0; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
		const char *t = strstr(l, ": task ");
		const char *e = strstr(l, ": Exited with exit code ");
		size_t n = strcspn(l, "\n");

		if (!strncmp(l, "srun: error: ", 13) && t && e && t < l + n && e < l + n &&
		    atoi(e + 24) != 143)
			task = atoi(t + 7);
	}
	for (l = buf; task >= 0 && *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
		const char *c = l + strspn(l, " ");

		if (atoi(c) == task && c[strspn(c, "0123456789")] == ':' && isdigit((unsigned char)*c))
			snprintf(words, len, "%.*s", (int)strcspn(c, "\n") -
				 (int)(strspn(c, "0123456789") + 2), c + strspn(c, "0123456789") + 2);
	}
	return task;
}

int slurm_agents_gone(void *arg, char *why, size_t len)
{
	struct slurm_agents *sa = arg;
	char buf[8192], words[512], *end, *start;
	ssize_t n;
	int st, task;

	if (sa->pid <= 0 || proc_reap(sa->pid, 0, &st))
		return 0;
	sa->pid = 0;
	n = pread(sa->logfd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	task = failed_task(buf, words, sizeof(words));
	end = buf + strlen(buf);
	while (end > buf && (end[-1] == '\n' || end[-1] == '\r'))
		*--end = 0;
	start = strrchr(buf, '\n');
	start = start ? start + 1 : buf;
	if (task >= 0 && task < sa->n && words[0])	/* the agent's own reason first */
		snprintf(why, len, "%s: %s; srun exited %d: %s", sa->names[task], words, st, start);
	else
		snprintf(why, len, "srun exited %d%s%s", st, *start ? ": " : "", start);
	return 1;
}

void slurm_agents_stop(struct slurm_agents *sa)
{
	if (!sa->on)
		return;
	sa->on = 0;
	if (sa->fd >= 0) {	/* EOF on every task's stdin: each stops its agent */
		close(sa->fd);
		sa->fd = -1;
	}
	/* 10 s for the step to end by itself, then srun firmly (it ends the step) */
	if (sa->pid > 0 && proc_reap(sa->pid, 10000, NULL) == -ETIMEDOUT)
		proc_stop(sa->pid, 5000);
	sa->pid = 0;
	if (sa->logfd >= 0) {
		close(sa->logfd);
		sa->logfd = -1;
	}
}
