// SPDX-License-Identifier: MIT
/*
 * A NIC reset, as SoftRoCE can have one: the rxe device removed and added
 * again on the same netdev (`rdma link delete`, `rdma link add`). A real
 * RNIC's reset ends every process's verbs objects on it; rxe cannot take
 * a device from a process that holds it (the delete waits, unkillable,
 * until every holder has closed it). So the agent first lets go itself:
 * its arms are stopped, their objects destroyed, each one done with the
 * reset as its error; its perftest jobs are killed; its device closed.
 * Another process still holding the device (a user's program) makes the
 * reset refuse, naming it, with the device reopened as it was.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "agent.h"
#include "../lib/clock.h"
#include "../lib/log.h"
#include "../lib/proc.h"

/* one line of a small sysfs file into buf (its newline gone); 0 or -errno */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* the character device a process opens to use dev: /dev/infiniband/uverbsN */
static int uverbs_of(const char *dev, char *path, size_t len)
{
	char p[PATH_MAX], name[64];
	struct dirent *e;
	DIR *d = opendir("/sys/class/infiniband_verbs");
	int r = -ENOENT;

	if (!d)
		return -errno;
	while (r && (e = readdir(d))) {
		if (strncmp(e->d_name, "uverbs", 6))
			continue;
		snprintf(p, sizeof(p), "/sys/class/infiniband_verbs/%s/ibdev", e->d_name);
		if (!read_line(p, name, sizeof(name)) && !strcmp(name, dev)) {
			snprintf(path, len, "/dev/infiniband/%s", e->d_name);
			r = 0;
		}
	}
	closedir(d);
	return r;
}

/* the first process with uverbs open: its pid (and comm), 0 when none */
static pid_t holder_of(const char *uverbs, char *comm, size_t len)
{
	char p[PATH_MAX], link[PATH_MAX];
	struct dirent *e, *f;
	DIR *proc = opendir("/proc"), *fds;
	pid_t found = 0;
	ssize_t n;

	if (!proc)
		return 0;
	while (!found && (e = readdir(proc))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(p, sizeof(p), "/proc/%s/fd", e->d_name);
		fds = opendir(p);
		if (!fds)
			continue;
		while (!found && (f = readdir(fds))) {
			snprintf(p, sizeof(p), "/proc/%s/fd/%s", e->d_name, f->d_name);
			n = readlink(p, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = 0;
			if (!strcmp(link, uverbs))
				found = (pid_t)atoi(e->d_name);
		}
		closedir(fds);
	}
	closedir(proc);
	if (found) {
		snprintf(p, sizeof(p), "/proc/%d/comm", (int)found);
		if (read_line(p, comm, len))
			snprintf(comm, len, "?");
	}
	return found;
}

/* `rdma ARGS...` to its end (at most 30 s): 0, or -errno with its words in err */
static int rdma_cmd(char *const argv[], char *err, size_t errlen)
{
	struct proc_io io = { .in = -1, .new_session = 1 };
	FILE *out = tmpfile();
	char words[256] = "";
	int r, st = 0;
	pid_t pid;

	if (!out)
		return -errno;
	io.out = io.err = fileno(out);
	r = proc_spawn(argv, &io, &pid);
	if (!r) {
		r = proc_reap(pid, 30000, &st);
		if (r == -ETIMEDOUT) {
			snprintf(err, errlen, "'rdma %s %s %s' still running after 30 s", argv[1],
				 argv[2], argv[3]);
			fclose(out);
			return r;	/* a delete that waits in the kernel cannot be killed */
		}
	}
	if (r) {
		snprintf(err, errlen, "cannot run rdma: %s", strerror(-r));
	} else if (st) {
		rewind(out);
		if (!fgets(words, sizeof(words), out))
			words[0] = 0;
		words[strcspn(words, "\n")] = 0;
		snprintf(err, errlen, "'rdma %s %s %s' exited %d: %s", argv[1], argv[2], argv[3], st,
			 words[0] ? words : "(no message)");
		r = -EIO;
	}
	fclose(out);
	return r;
}

/* the device open again as the agent was started with, its port ACTIVE (10 s) */
static int reopen(struct agent *a, const char *dev, uint8_t port, char *err, size_t errlen)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	struct ibv_port_attr pa;
	struct vb_dev d;
	int r, k;

	/* opened aside, then taken whole: a->dev keeps its name meanwhile (the
	 * counters read sysfs by it) */
	r = vb_dev_open(&d, dev, port, a->gid_index_arg, 10000);
	if (r) {
		snprintf(err, errlen, "%s: cannot open it again: %s", dev,
			 r == -ENOENT ? "no RoCE v2 IPv4 GID in 10 s" : strerror(-r));
		return r;
	}
	a->dev = d;
	for (k = 0; k < 200; k++) {
		if (!vb_port_query(&a->dev, &pa) && pa.state == IBV_PORT_ACTIVE)
			return 0;
		nanosleep(&ts, NULL);
	}
	snprintf(err, errlen, "%s: port %u not ACTIVE 10 s after the reset", dev, port);
	return -ETIMEDOUT;
}

int nic_reset(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
	      size_t errlen)
{
	char dev[sizeof(a->dev.name)], netdev[64] = "", uverbs[PATH_MAX] = "";
	char why[160], comm[32];
	double t0 = rtb_now_s(), t_closed, t_deleted, t_added;
	uint8_t port = a->dev.port;
	int r, narms, gidx = a->dev.gid_index;
	pid_t holder;

	(void)conn;
	(void)args;
	if (a->no_rdma) {
		snprintf(err, errlen, "no RDMA device here (rdma-agent --no-rdma)");
		return -EOPNOTSUPP;
	}
	pthread_rwlock_wrlock(&a->dev_rw);
	snprintf(dev, sizeof(dev), "%s", a->dev.name);
	if (!a->dev.ctx) {	/* a reset before failed to bring it back: try again */
		r = reopen(a, dev, port, err, errlen);
		pthread_rwlock_unlock(&a->dev_rw);
		return r ? r : -EAGAIN;
	}
	if (agent_gid_netdev(a, netdev, sizeof(netdev))) {
		snprintf(err, errlen, "%s: no netdev under its GID %d", dev, gidx);
		pthread_rwlock_unlock(&a->dev_rw);
		return -ENODEV;
	}
	uverbs_of(dev, uverbs, sizeof(uverbs));
	snprintf(why, sizeof(why), "%s was reset (nic reset): the arm's QPs are gone", dev);
	narms = arm_reset_all(a, why);
	job_kill_all(a);
	vb_dev_close(&a->dev);
	t_closed = rtb_now_s();
	holder = uverbs[0] ? holder_of(uverbs, comm, sizeof(comm)) : 0;
	if (holder) {
		snprintf(err, errlen, "%s: process %d (%s) holds it: rxe removes a device only once "
			 "every process has closed it; stop that process first", dev, (int)holder,
			 comm);
		r = reopen(a, dev, port, err + strlen(err), errlen - strlen(err)) ? -EIO : -EBUSY;
		pthread_rwlock_unlock(&a->dev_rw);
		return r;
	}
	r = rdma_cmd((char *const[]){ "rdma", "link", "delete", dev, NULL }, err, errlen);
	t_deleted = rtb_now_s();
	if (r) {
		char more[160] = "";

		if (r != -ETIMEDOUT)
			reopen(a, dev, port, more, sizeof(more));
		snprintf(err + strlen(err), errlen - strlen(err), "%s%s", more[0] ? "; " : "", more);
		pthread_rwlock_unlock(&a->dev_rw);
		return r;
	}
	r = rdma_cmd((char *const[]){ "rdma", "link", "add", dev, "type", "rxe", "netdev", netdev,
				      NULL }, err, errlen);
	t_added = rtb_now_s();
	if (!r)
		r = reopen(a, dev, port, err, errlen);
	pthread_rwlock_unlock(&a->dev_rw);
	if (r) {
		log_err("nic reset: %s", err);
		return r;
	}
	log_info("nic reset: %s on %s removed and added again in %.0f ms (%d arm(s) ended)", dev,
		 netdev, (rtb_now_s() - t0) * 1000, narms);
	*result = json_pack("{s:s,s:s,s:i,s:f,s:f,s:f,s:f}", "dev", dev, "netdev", netdev,
			    "arms_reset", narms, "closed_s", t_closed - t0, "deleted_s",
			    t_deleted - t0, "added_s", t_added - t0, "ready_s", rtb_now_s() - t0);
	return *result ? 0 : -ENOMEM;
}
