// SPDX-License-Identifier: MIT
/* Spawning and reaping (see proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "proc.h"

extern char **environ;

int proc_status(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
}

int proc_spawn(char *const argv[], const struct proc_io *io, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int r;

	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	if (io && io->in >= 0)
		posix_spawn_file_actions_adddup2(&fa, io->in, 0);
	if (io && io->out >= 0)
		posix_spawn_file_actions_adddup2(&fa, io->out, 1);
	if (io && io->err >= 0)
		posix_spawn_file_actions_adddup2(&fa, io->err, 2);
	{
		/* the tools ignore SIGPIPE (an EPIPE is an error, not a death);
		 * what they start gets the default back, as a shell gives it */
		sigset_t def;
		short fl = POSIX_SPAWN_SETSIGDEF;

		sigemptyset(&def);
		sigaddset(&def, SIGPIPE);
		posix_spawnattr_setsigdefault(&at, &def);
		if (io && io->new_session)
			fl |= POSIX_SPAWN_SETSID;
		posix_spawnattr_setflags(&at, fl);
	}
	r = posix_spawnp(pid, argv[0], &fa, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return -r;
}

int proc_reap(pid_t pid, int timeout_ms, int *status)
{
	uint64_t end = rtb_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ULL;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int st = 0;

	for (;;) {
		pid_t r = waitpid(pid, &st, timeout_ms < 0 ? 0 : WNOHANG);

		if (r == pid) {
			if (status)
				*status = proc_status(st);
			return 0;
		}
		if (r < 0 && errno != EINTR)
			return -errno;
		if (timeout_ms >= 0 && rtb_now_ns() >= end)
			return -ETIMEDOUT;
		if (r == 0)
			nanosleep(&ts, NULL);
	}
}

int proc_stop(pid_t pid, int grace_ms)
{
	int st = 255;

	if (pid <= 0)
		return -EINVAL;
	kill(pid, SIGTERM);
	if (proc_reap(pid, grace_ms, &st) == -ETIMEDOUT) {
		kill(pid, SIGKILL);
		proc_reap(pid, -1, &st);
	}
	return st;
}

int proc_run(char *const argv[], char *out, size_t outlen)
{
	struct proc_io io = { -1, -1, -1, 0 };
	int pfd[2] = { -1, -1 }, st, r;
	size_t used = 0;
	pid_t pid;

	if (out && pipe2(pfd, O_CLOEXEC))
		return -errno;
	io.out = pfd[1];
	r = proc_spawn(argv, &io, &pid);
	if (out)
		close(pfd[1]);
	if (r) {
		if (out)
			close(pfd[0]);
		return r;
	}
	while (out) {
		char sink[4096];
		ssize_t n = used + 1 < outlen ? read(pfd[0], out + used, outlen - 1 - used) :
						read(pfd[0], sink, sizeof(sink));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (used + 1 < outlen)
			used += (size_t)n;
	}
	if (out) {
		out[used] = 0;
		close(pfd[0]);
	}
	r = proc_reap(pid, -1, &st);
	return r ? r : st;
}
