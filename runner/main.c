// SPDX-License-Identifier: MIT
/*
 * rdma-run: the node's side of an exec workload (ctl/exp/exec.c). rdmactl
 * starts every command of a profile's roles through it, on the node where
 * the command's RDMA device is (in the testbed VM over ssh, on this host,
 * or on a profile's host over ssh), so that whatever the command does --
 * hang, crash, fork daemons -- it ends when told and leaves nothing:
 *
 *   rdma-run start ID [-t TIMEOUT_MS] [-e NAME=VALUE]... -- CMD
 *       `sh -c CMD` in a session of its own (and a cgroup of its own where
 *       a cgroup2 hierarchy is writable), stdin from /dev/null, stdout and
 *       stderr ours. When it exits, whatever it left behind in its session
 *       or cgroup is killed (and counted), the status is written, and
 *       rdma-run exits with CMD's status (128+N for signal N). With -t,
 *       everything of it is ended after TIMEOUT_MS (state "timeout", 124 as
 *       timeout(1) says it), timed here, where it runs.
 *   rdma-run stop ID [GRACE_MS]
 *       SIGTERM to everything of ID's command, SIGKILL after GRACE_MS
 *       (default 1000); waits for `start` to record the status, prints it
 *       (one JSON line) and removes ID's state. After a command that ended
 *       by itself it only prints and removes: rdmactl calls it every time.
 *   rdma-run wait-port PORT TIMEOUT_MS
 *       exits 0 once a TCP socket listens on PORT on this node, 1 at the
 *       timeout (/proc/net/tcp and tcp6: no connection is made, so a
 *       server that serves one connection is not used up).
 *
 * State: /run/rdma-run/ID/ (0700): pid (the command's, its session and
 * process group id, and start's own), status (JSON, written whole). IDs
 * are [A-Za-z0-9_.-] and reach paths only after that check.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/listen.h"
#include "lib/execenv.h"

#define STATE_DIR "/run/rdma-run"
#define MAX_ENV EXECENV_MAX

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static int id_ok(const char *id)
{
	size_t n = strlen(id);

	if (!n || n > 120 || id[0] == '.')
		return 0;
	return strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* a small file written whole: a temporary name, then renamed over */
static int write_file(const char *dir, const char *name, const char *text)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	size_t n = strlen(text);
	int fd, r = 0;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		r = -EIO;
	if (close(fd) && !r)
		r = -EIO;
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

static int read_file(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = 0;
	return 0;
}

/* the first cgroup2 mount point, or "" */
static void cgroup2_root(char *buf, size_t len)
{
	char line[1024], dev[256], mnt[512], type[64];
	FILE *f = fopen("/proc/self/mounts", "re");

	buf[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %511s %63s", dev, mnt, type) == 3 && !strcmp(type, "cgroup2")) {
			snprintf(buf, len, "%s", mnt);
			break;
		}
	fclose(f);
}

/* pid's session and whether it is a zombie (gone already: its parent
 * reaps it); -1 when it does not exist */
static int proc_sid(pid_t pid, int *zombie)
{
	char path[64], stat[512], *rp;
	int ppid, pgrp, sid;
	ssize_t k;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	k = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (k <= 0)
		return -1;
	stat[k] = 0;
	rp = strrchr(stat, ')');	/* the command name may hold anything */
	if (!rp || sscanf(rp + 1, " %*c %d %d %d", &ppid, &pgrp, &sid) != 3)
		return -1;
	*zombie = rp[2] == 'Z';
	return sid;
}

#define MAX_MEMBERS 4096

/* the live processes of session sid and of the cgroup (cg: its directory,
 * or ""), without ourselves: into out, how many */
static int members(pid_t sid, const char *cg, pid_t *out)
{
	char path[PATH_MAX], line[64];
	struct dirent *d;
	int n = 0, z, i;
	DIR *p;
	FILE *f;

	if (cg[0]) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
		if ((f = fopen(path, "re"))) {
			while (n < MAX_MEMBERS && fgets(line, sizeof(line), f)) {
				pid_t pid = (pid_t)atoi(line);

				if (pid > 1 && pid != getpid() && proc_sid(pid, &z) >= 0 && !z)
					out[n++] = pid;
			}
			fclose(f);
		}
	}
	if (!(p = opendir("/proc")))
		return n;
	while (n < MAX_MEMBERS && (d = readdir(p))) {
		pid_t pid = (pid_t)atoi(d->d_name);

		if (pid <= 1 || pid == getpid() || proc_sid(pid, &z) != sid || z)
			continue;
		for (i = 0; i < n && out[i] != pid; i++)
			;
		if (i == n)
			out[n++] = pid;
	}
	closedir(p);
	return n;
}

static int signal_all(pid_t sid, const char *cg, int sig)
{
	static pid_t m[MAX_MEMBERS];
	int n = members(sid, cg, m), i;

	for (i = 0; sig && i < n; i++)
		kill(m[i], sig);
	return n;
}

/* everything of the command gone: SIGTERM, grace, SIGKILL until none is
 * left (at most ~3 s more); how many there were */
static int kill_all(pid_t sid, const char *cg, int grace_ms)
{
	int n = signal_all(sid, cg, 0), i;

	if (!n)
		return 0;
	signal_all(sid, cg, SIGTERM);
	for (i = 0; i < grace_ms / 20 && signal_all(sid, cg, 0); i++)
		sleep_ms(20);
	for (i = 0; i < 150 && signal_all(sid, cg, SIGKILL); i++)
		sleep_ms(20);
	return n;
}

/* -E: NAME=VALUE\0... on stdin, into env[] after the n already there: the
 * new count, or -1 (said) */
static int env_stdin(char **env, int n)
{
	static char buf[EXECENV_MAX * (EXECENV_NAME_MAX + EXECENV_VALUE_MAX + 2)];
	size_t have = 0, at = 0;
	ssize_t k;

	while (have < sizeof(buf) && (k = read(0, buf + have, sizeof(buf) - have)) > 0)
		have += (size_t)k;
	if (have == sizeof(buf) || (have && buf[have - 1])) {
		fprintf(stderr, "rdma-run start: -E: the environment on stdin is too long or not "
			"NUL-terminated\n");
		return -1;
	}
	while (at < have) {
		char *e = buf + at;

		if (!strchr(e, '=') || n == MAX_ENV) {
			fprintf(stderr, "rdma-run start: -E: %s\n", n == MAX_ENV ?
				"more variables than the limit" : "an entry without '='");
			return -1;
		}
		env[n++] = e;
		at += strlen(e) + 1;
	}
	return n;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rdma-run start ID [-t TIMEOUT_MS] [-e NAME=VALUE]... [-E] -- CMD\n"
		   "       (-E: NAME=VALUE entries on stdin, each ended by a NUL byte: values\n"
		   "        kept out of the command line, where ps shows them to every user)\n"
		   "       rdma-run stop ID [GRACE_MS]\n"
		   "       rdma-run wait-port PORT TIMEOUT_MS\n");
}

/* what `start` was asked: ID, -t, -e and -E, -- CMD */
struct start_args {
	const char *id, *cmd;
	char *env[MAX_ENV];
	int nenv, from_stdin;
	long long timeout_ms;
};

/* 0, or the exit code (2: usage, said) */
static int start_args(int argc, char **argv, struct start_args *a)
{
	int i;

	a->id = argc > 1 ? argv[1] : "";
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			if (i + 2 == argc)
				a->cmd = argv[i + 1];
			break;
		}
		if (!strcmp(argv[i], "-t") && i + 1 < argc) {
			char *end;

			a->timeout_ms = strtoll(argv[++i], &end, 10);
			if (*end || a->timeout_ms < 1) {
				usage(stderr);
				return 2;
			}
			continue;
		}
		if (!strcmp(argv[i], "-E")) {
			a->from_stdin = 1;
			continue;
		}
		if (strcmp(argv[i], "-e") || i + 1 >= argc || !strchr(argv[i + 1], '=')) {
			usage(stderr);
			return 2;
		}
		if (a->nenv == MAX_ENV) {	/* rdmactl refuses such a profile at validate */
			fprintf(stderr, "rdma-run start: more than %d -e variables\n", MAX_ENV);
			return 2;
		}
		a->env[a->nenv++] = argv[++i];
	}
	if (!id_ok(a->id) || !a->cmd) {
		fprintf(stderr, "rdma-run start: expected ID ([A-Za-z0-9_.-]) and -- CMD\n");
		return 2;
	}
	if (a->from_stdin && (a->nenv = env_stdin(a->env, a->nenv)) < 0)
		return 2;
	return 0;
}

/* the child: a session (and cgroup cg) of its own, stdin /dev/null, the
 * environment set; once the pid file is written (sync), the command */
__attribute__((noreturn)) static void start_child(const struct start_args *a, const char *cg,
						  int sync[2], const sigset_t *chld)
{
	char buf[PATH_MAX + 16], c;
	int fd, i;

	sigprocmask(SIG_UNBLOCK, chld, NULL);
	setsid();
	snprintf(buf, sizeof(buf), "%s/cgroup.procs", cg);
	if (cg[0] && (fd = open(buf, O_WRONLY | O_CLOEXEC)) >= 0) {
		if (write(fd, "0", 1) != 1)
			fprintf(stderr, "rdma-run: %s: %s\n", buf, strerror(errno));
		close(fd);
	}
	fd = open("/dev/null", O_RDONLY);
	if (fd > 0) {
		dup2(fd, 0);
		close(fd);
	}
	for (i = 0; i < a->nenv; i++)
		putenv(a->env[i]);
	close(sync[1]);
	if (read(sync[0], &c, 1) < 0)	/* the pid file is written first */
		_exit(125);
	execl("/bin/sh", "sh", "-c", a->cmd, (char *)NULL);
	fprintf(stderr, "rdma-run: /bin/sh: %s\n", strerror(errno));
	_exit(127);
}

/* pid waited for (SIGCHLD blocked: sigtimedwait), ended with everything in
 * its session or cgroup at the timeout (0: none); *st its status, *killed
 * what was killed then; 1 when it timed out */
static int wait_child(pid_t pid, const char *cg, int64_t t0, long long timeout_ms,
		      const sigset_t *chld, int *st, int *killed)
{
	for (;;) {
		int64_t left_ns = t0 + timeout_ms * 1000000 - (int64_t)rtb_now_ns();
		struct timespec ts;

		if (waitpid(pid, st, WNOHANG) == pid)
			return 0;
		if (timeout_ms && left_ns <= 0) {	/* the whole of it, now */
			*killed = kill_all(pid, cg, 1000);
			while (waitpid(pid, st, 0) < 0 && errno == EINTR)
				;
			return 1;
		}
		ts.tv_sec = timeout_ms ? left_ns / 1000000000 : 3600;
		ts.tv_nsec = timeout_ms ? left_ns % 1000000000 : 0;
		sigtimedwait(chld, NULL, &ts);
	}
}

/* the state directory of id, and a cgroup of its own when this host lets
 * us make one (cg "" otherwise): 0, or 125 (said) */
static int start_state(const char *id, char *dir, size_t dlen, char *cg, size_t clen)
{
	char root[PATH_MAX];

	if (mkdir(STATE_DIR, 0700) && errno != EEXIST) {
		fprintf(stderr, "rdma-run: %s: %s\n", STATE_DIR, strerror(errno));
		return 125;
	}
	snprintf(dir, dlen, "%s/%s", STATE_DIR, id);
	if (mkdir(dir, 0700)) {
		fprintf(stderr, "rdma-run: %s: %s\n", dir, strerror(errno));
		return 125;
	}
	cgroup2_root(root, sizeof(root));
	cg[0] = 0;
	if (root[0]) {
		snprintf(cg, clen, "%s/rdma-run-%s", root, id);
		if (mkdir(cg, 0755))
			cg[0] = 0;	/* not ours to create (a container's): the session only */
	}
	return 0;
}

static int cmd_start(int argc, char **argv)
{
	struct start_args a = { 0 };
	char dir[PATH_MAX], cg[PATH_MAX] = "", buf[512];
	int i, st = 0, code, left, sig = 0, sync[2], timed_out, killed = 0;
	int64_t t0, t1;
	sigset_t chld;
	pid_t pid;

	if ((code = start_args(argc, argv, &a)) ||
	    (code = start_state(a.id, dir, sizeof(dir), cg, sizeof(cg))))
		return code;
	if (pipe2(sync, O_CLOEXEC)) {
		fprintf(stderr, "rdma-run: pipe: %s\n", strerror(errno));
		return 125;
	}
	/* SIGCHLD blocked: waited for with a deadline (sigtimedwait) */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	t0 = (int64_t)rtb_now_ns();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "rdma-run: fork: %s\n", strerror(errno));
		return 125;
	}
	if (!pid)
		start_child(&a, cg, sync, &chld);
	signal(SIGHUP, SIG_IGN);	/* ssh going away must not lose the status */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	snprintf(buf, sizeof(buf), "%d %d %s\n", (int)pid, (int)getpid(), cg[0] ? cg : "-");
	write_file(dir, "pid", buf);
	close(sync[0]);
	close(sync[1]);
	timed_out = wait_child(pid, cg, t0, a.timeout_ms, &chld, &st, &killed);
	t1 = (int64_t)rtb_now_ns();
	left = kill_all(pid, cg, 500);
	if (timed_out) {
		sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
		code = 124;
	} else if (WIFSIGNALED(st)) {
		sig = WTERMSIG(st);
		code = 128 + sig;
	} else {
		code = WEXITSTATUS(st);
	}
	snprintf(buf, sizeof(buf),
		 "{\"state\":\"%s\",\"exit\":%d,\"signal\":%d,\"wall_ns\":%lld,\"leftover\":%d,"
		 "\"killed\":%d,\"cgroup\":%s}\n", timed_out ? "timeout" : sig ? "signaled" : "exited", code, sig,
		 (long long)(t1 - t0),
		 left, killed, cg[0] ? "true" : "false");
	write_file(dir, "status", buf);
	for (i = 0; cg[0] && rmdir(cg) && i < 100; i++)	/* the killed leave it a moment later */
		sleep_ms(10);
	return code;
}

static void remove_state(const char *dir)
{
	char path[PATH_MAX];
	const char *names[] = { "pid", "status", ".pid.tmp", ".status.tmp" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

static int cmd_stop(int argc, char **argv)
{
	char dir[PATH_MAX], buf[512], cg[PATH_MAX] = "";
	const char *id = argc > 1 ? argv[1] : "";
	int grace = argc > 2 ? atoi(argv[2]) : 1000, pid = 0, starter = 0, i, killed = 0;

	if (!id_ok(id) || grace < 0 || grace > 600000) {
		fprintf(stderr, "rdma-run stop: expected ID ([A-Za-z0-9_.-]) [GRACE_MS]\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/%s", STATE_DIR, id);
	if (read_file(dir, "status", buf, sizeof(buf))) {
		char p[512];

		if (read_file(dir, "pid", p, sizeof(p)) || sscanf(p, "%d %d %4095s", &pid, &starter, cg) != 3) {
			/* never started (ssh failed, or it died before its pid file) */
			printf("{\"state\":\"unknown\"}\n");
			remove_state(dir);
			return 0;
		}
		if (!strcmp(cg, "-"))
			cg[0] = 0;
		killed = kill_all(pid, cg, grace);
		for (i = 0; i < 300 && read_file(dir, "status", buf, sizeof(buf)); i++) {
			if (kill(starter, 0) && errno == ESRCH)
				break;	/* start itself is gone (killed): no status will come */
			sleep_ms(10);
		}
		if (read_file(dir, "status", buf, sizeof(buf))) {
			snprintf(buf, sizeof(buf), "{\"state\":\"lost\",\"killed\":%d}\n", killed);
			if (cg[0])
				rmdir(cg);
		}
	}
	/* the status, with how many this stop killed */
	buf[strcspn(buf, "\n")] = 0;
	if (strlen(buf) > 1 && buf[strlen(buf) - 1] == '}')
		buf[strlen(buf) - 1] = 0;
	printf("%s,\"stopped\":%d}\n", buf, killed);
	remove_state(dir);
	return 0;
}

static int cmd_wait_port(int argc, char **argv)
{
	char *end;
	long port = argc > 1 ? strtol(argv[1], &end, 10) : 0, ms;
	int64_t until;

	if (argc != 3 || *end || port < 1 || port > 65535 || (ms = strtol(argv[2], &end, 10)) < 0 ||
	    *end) {
		usage(stderr);
		return 2;
	}
	until = (int64_t)rtb_now_ns() + (int64_t)ms * 1000000;
	for (;;) {
		if (rtb_tcp_listening((int)port))
			return 0;
		if ((int64_t)rtb_now_ns() >= until)
			return 1;
		sleep_ms(50);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "start"))
		return cmd_start(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stop"))
		return cmd_stop(argc - 1, argv + 1);
	if (!strcmp(argv[1], "wait-port"))
		return cmd_wait_port(argc - 1, argv + 1);
	fprintf(stderr, "rdma-run: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
