// SPDX-License-Identifier: MIT
/*
 * Run the real perftest tools (ib_write_lat, ...) on this agent's device, so
 * that our own numbers can be compared with perftest's on the same testbed
 * in the same run. Only perftest's binaries can be started; the agent adds
 * the device, GID index and port (-d, -x, -p) itself. Output is captured in
 * a file and returned whole by job_wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>
#include "agent.h"
#include "../lib/listen.h"
#include "../lib/proc.h"

extern char **environ;

static const char *const allowed[] = {
	"ib_write_lat", "ib_write_bw", "ib_read_lat", "ib_read_bw", "ib_send_lat",
	"ib_send_bw", "ib_atomic_lat", "ib_atomic_bw", NULL,
};

#define JOB_MAX_ARGS 32

struct job {
	unsigned int id;
	pid_t pid;
	int done;
	int status;
	int out;	/* its stdout and stderr: a memfd, no path anyone can plant */
};

static int valid_arg(const char *s)
{
	if (!*s || strlen(s) > 64)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("-_.=,:", *s)))
			return 0;
	return 1;
}

/* the perftest options a peer may pass (the values after them are plain
 * words): none that writes a file (--out_json_file) or picks another
 * device, GID or port than the agent's */
static int option_allowed(const char *a)
{
	static const char *const opts[] = {
		"-s", "--size", "-n", "--iters", "-a", "--all", "-F", "--CPU-freq", "-D",
		"--duration", "-t", "--tx-depth", "-r", "--rx-depth", "-q", "--qp", "-m", "--mtu",
		"-I", "--inline_size", "-c", "--connection", "-b", "--bidirectional", "-e",
		"--events", "-l", "--post_list", "-U", "--report-unsorted", "-Q", "--cq-mod",
		"-R", "--rdma_cm", "--report_gbits", "-N", "--noPeak", "-C", "--report-cycles",
		"-H", "--report-histogram", "-u", "--qp-timeout", "-S", "--sl", "-T", "--tos",
		"--use_old_post_send", "-W", "--report-counters", NULL
	};
	size_t n = strcspn(a, "=");

	if (a[0] != '-')
		return 1;	/* a value */
	for (int i = 0; opts[i]; i++)
		if (strlen(opts[i]) == n && !strncmp(opts[i], a, n))
			return 1;
	return 0;
}

/* the perftest command line: an allowed binary, our device, GID index and
 * port, the caller's plain words, the server's address (client); argv's
 * strings stay the request's */
static int job_argv(struct agent *a, json_t *args, const char **argv, char *gidx, char *portbuf,
		    int *port, const char **peer, char *err, size_t errlen)
{
	const char *prog;
	json_t *extra = NULL, *v;
	int i, n = 0;
	size_t k;

	if (json_unpack(args, "{s:s,s:i,s?o,s?s}", "prog", &prog, "port", port, "args", &extra,
			"peer", peer) ||
	    *port < 1024 || *port > 65535 || (extra && !json_is_array(extra))) {
		snprintf(err, errlen, "perftest: expected {prog, port 1024..65535, args[], peer?}");
		return -EINVAL;
	}
	for (i = 0; allowed[i] && strcmp(allowed[i], prog); i++)
		;
	if (!allowed[i]) {
		snprintf(err, errlen, "perftest: '%s' is not a perftest binary", prog);
		return -EPERM;
	}
	if ((extra && json_array_size(extra) > JOB_MAX_ARGS) || (*peer && !valid_arg(*peer))) {
		snprintf(err, errlen, "perftest: bad arguments");
		return -EINVAL;
	}
	snprintf(gidx, 16, "%d", a->dev.gid_index);
	snprintf(portbuf, 16, "%d", *port);
	argv[n++] = prog;
	argv[n++] = "-d";
	argv[n++] = a->dev.name;
	argv[n++] = "-x";
	argv[n++] = gidx;
	argv[n++] = "-p";
	argv[n++] = portbuf;
	json_array_foreach(extra, k, v) {
		if (!json_is_string(v) || !valid_arg(json_string_value(v))) {
			snprintf(err, errlen, "perftest: argument %zu is not a plain word", k);
			return -EINVAL;
		}
		if (!option_allowed(json_string_value(v))) {
			snprintf(err, errlen, "perftest: option '%.40s' is not allowed (-s, -n, -a, "
				 "-D, -q, -t, -m, -I, ...; device, GID, port and output files are "
				 "the agent's)", json_string_value(v));
			return -EPERM;
		}
		argv[n++] = json_string_value(v);
	}
	if (*peer)
		argv[n++] = *peer;
	argv[n] = NULL;
	return 0;
}

/* a slot for a new job: its index, or -1 (too many) */
static int job_slot(struct agent *a, struct job *job)
{
	int i, slot = -1;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < AGENT_MAX_JOBS && slot < 0; i++)
		if (!a->jobs[i])
			slot = i;
	if (slot >= 0) {
		job->id = ++a->next_id;
		a->jobs[slot] = job;
	}
	pthread_mutex_unlock(&a->lock);
	return slot;
}

int job_start(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
	      size_t errlen)
{
	const char *peer = NULL, *argv[JOB_MAX_ARGS + 12];
	char gidx[16], portbuf[16];
	struct proc_io io = { -1, -1, -1, 0 };
	struct job *job;
	int port, i, r, slot;

	(void)conn;
	r = job_argv(a, args, argv, gidx, portbuf, &port, &peer, err, errlen);
	if (r)
		return r;
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->out = -1;
	slot = job_slot(a, job);
	if (slot < 0) {
		free(job);
		snprintf(err, errlen, "perftest: too many jobs");
		return -ENOSPC;
	}
	/* no file in /tmp (a name root opens there can be planted as a symlink) */
	job->out = memfd_create("rdma-agent-perftest", MFD_CLOEXEC);
	if (job->out < 0) {
		r = -errno;
		snprintf(err, errlen, "perftest: memfd_create: %s", strerror(errno));
		goto fail;
	}
	io.out = io.err = job->out;
	io.in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	r = proc_spawn((char *const *)argv, &io, &job->pid);
	if (io.in >= 0)
		close(io.in);
	if (r) {
		snprintf(err, errlen, "perftest: cannot run %s: %s", argv[0], strerror(-r));
		goto fail;
	}
	if (!peer) {	/* server: return once it listens, so the client can connect */
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		for (i = 0; i < 500 && !rtb_tcp_listening(port); i++) {
			if (waitpid(job->pid, &job->status, WNOHANG) == job->pid) {
				job->done = 1;
				break;
			}
			nanosleep(&ts, NULL);
		}
	}
	*result = json_pack("{s:I,s:i}", "job", (json_int_t)job->id, "pid", (int)job->pid);
	return 0;
fail:
	pthread_mutex_lock(&a->lock);
	a->jobs[slot] = NULL;
	pthread_mutex_unlock(&a->lock);
	if (job->out >= 0)
		close(job->out);
	free(job);
	return r;
}

/* what the job wrote, from the start of its memfd */
static char *slurp(int fd, size_t max)
{
	char *buf = malloc(max + 1);
	size_t n = 0;
	ssize_t r;

	if (!buf)
		return NULL;
	while (n < max && (r = pread(fd, buf + n, max - n, (off_t)n)) > 0)
		n += (size_t)r;
	buf[n] = 0;
	return buf;
}

static void job_reap(struct job *j, int kill_it)
{
	if (!j->done && kill_it) {
		kill(j->pid, SIGKILL);
		waitpid(j->pid, &j->status, 0);
		j->done = 1;
	}
	close(j->out);
	free(j);
}

int job_wait(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen)
{
	(void)conn;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	json_int_t id, timeout_ms = 0;
	struct job *job = NULL;
	int i, slot = -1, waited = 0, rc;
	char *out;

	if (json_unpack(args, "{s:I,s?I}", "job", &id, "timeout_ms", &timeout_ms)) {
		snprintf(err, errlen, "perftest_wait: expected {job, timeout_ms}");
		return -EINVAL;
	}
	pthread_mutex_lock(&a->lock);
	for (i = 0; i < AGENT_MAX_JOBS; i++)
		if (a->jobs[i] && a->jobs[i]->id == id)
			slot = i;
	if (slot >= 0) {
		job = a->jobs[slot];
		a->jobs[slot] = NULL;	/* ours while we wait */
	}
	pthread_mutex_unlock(&a->lock);
	if (!job) {
		snprintf(err, errlen, "no perftest job %lld", (long long)id);
		return -ENOENT;
	}
	while (!job->done) {
		if (waitpid(job->pid, &job->status, WNOHANG) == job->pid) {
			job->done = 1;
			break;
		}
		if (waited >= timeout_ms || __atomic_load_n(&a->closing, __ATOMIC_ACQUIRE))
			break;	/* the agent shutting down kills the job now, as a timeout does */
		nanosleep(&ts, NULL);
		waited += 10;
	}
	if (!job->done) {	/* a hung perftest is killed: its output still returns */
		kill(job->pid, SIGKILL);
		waitpid(job->pid, &job->status, 0);
		job->done = 1;
		rc = -1;
	} else {
		rc = WIFEXITED(job->status) ? WEXITSTATUS(job->status) : 128 + WTERMSIG(job->status);
	}
	out = slurp(job->out, 1 << 20);
	*result = json_pack("{s:i,s:b,s:s}", "rc", rc, "timed_out", rc == -1, "output",
			    out ? out : "");
	free(out);
	job_reap(job, 1);
	return 0;
}

void job_kill_all(struct agent *a)
{
	int i;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < AGENT_MAX_JOBS; i++) {
		if (a->jobs[i])
			job_reap(a->jobs[i], 1);
		a->jobs[i] = NULL;
	}
	pthread_mutex_unlock(&a->lock);
}
