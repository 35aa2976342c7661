// SPDX-License-Identifier: MIT
/*
 * The node's injector and counters, for the controller:
 *   inject   runs rdma-inject (installed next to the agent) with the given
 *            arguments and -j, and returns its exit code and output. The
 *            injector keeps its state in the kernel, so any later call, or
 *            a flush, sees what earlier ones did.
 *   counters the device's hw counters (names discovered at run time).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "agent.h"

extern char **environ;

#define INJECT_MAX_ARGS 48
#define INJECT_TIMEOUT_MS 60000

static int inject_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -errno;
	exe[n] = 0;
	snprintf(buf, len, "%s/rdma-inject", dirname(exe));
	return access(buf, X_OK) ? -errno : 0;
}

/* read both pipes until EOF or the deadline */
static void drain(int fds[2], char *bufs[2], size_t caps[2], int timeout_ms)
{
	size_t used[2] = { 0, 0 };
	int open_n = 2, i;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (open_n) {
		struct pollfd p[2];
		int n = 0, idx[2], ms;

		for (i = 0; i < 2; i++)
			if (fds[i] >= 0) {
				p[n].fd = fds[i];
				p[n].events = POLLIN;
				idx[n++] = i;
			}
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = timeout_ms - (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (ms <= 0 || poll(p, (nfds_t)n, ms) <= 0)
			break;
		for (i = 0; i < n; i++) {
			int k = idx[i];
			char sink[4096];
			ssize_t r;

			if (!(p[i].revents & (POLLIN | POLLHUP)))
				continue;
			if (used[k] + 1 < caps[k])
				r = read(fds[k], bufs[k] + used[k], caps[k] - 1 - used[k]);
			else
				r = read(fds[k], sink, sizeof(sink));
			if (r <= 0) {
				close(fds[k]);
				fds[k] = -1;
				open_n--;
			} else if (used[k] + 1 < caps[k]) {
				used[k] += (size_t)r;
			}
		}
	}
	for (i = 0; i < 2; i++) {
		bufs[i][used[i]] = 0;
		if (fds[i] >= 0)
			close(fds[i]);
	}
}

int inject_run(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen)
{
	(void)conn;
	char path[PATH_MAX], *argv[INJECT_MAX_ARGS + 3], *bufs[2];
	size_t caps[2] = { 1 << 20, 64 << 10 }, k;
	int out[2], errp[2], fds[2], st, rc, n = 0;
	posix_spawn_file_actions_t fa;
	json_t *list, *v;
	pid_t pid;

	(void)a;
	if (json_unpack(args, "{s:o}", "args", &list) || !json_is_array(list) ||
	    json_array_size(list) > INJECT_MAX_ARGS) {
		snprintf(err, errlen, "inject: expected {args: [...]} (at most %d)", INJECT_MAX_ARGS);
		return -EINVAL;
	}
	if (inject_path(path, sizeof(path))) {
		snprintf(err, errlen, "inject: rdma-inject is not installed next to the agent");
		return -ENOENT;
	}
	argv[n++] = path;
	json_array_foreach(list, k, v) {
		if (!json_is_string(v)) {
			snprintf(err, errlen, "inject: argument %zu is not a string", k);
			return -EINVAL;
		}
		argv[n++] = (char *)json_string_value(v);
	}
	argv[n] = NULL;
	if (pipe2(out, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		close(out[0]);
		close(out[1]);
		return -errno;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	rc = posix_spawn(&pid, path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	close(errp[1]);
	if (rc) {
		close(out[0]);
		close(errp[0]);
		snprintf(err, errlen, "inject: cannot run %s: %s", path, strerror(rc));
		return -rc;
	}
	bufs[0] = malloc(caps[0]);
	bufs[1] = malloc(caps[1]);
	if (!bufs[0] || !bufs[1]) {
		free(bufs[0]);
		free(bufs[1]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(out[0]);
		close(errp[0]);
		return -ENOMEM;
	}
	fds[0] = out[0];
	fds[1] = errp[0];
	drain(fds, bufs, caps, INJECT_TIMEOUT_MS);
	if (waitpid(pid, &st, WNOHANG) != pid) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	*result = json_pack("{s:i,s:s,s:s}", "rc", rc, "stdout", bufs[0], "stderr", bufs[1]);
	free(bufs[0]);
	free(bufs[1]);
	return *result ? 0 : -ENOMEM;
}

int hw_counters(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen)
{
	(void)conn;
	char dir[256], path[512], line[64];
	struct dirent **ents;
	json_t *o;
	int n, i;

	(void)args;
	snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports/%u/hw_counters", a->dev.name,
		 a->dev.port);
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		snprintf(err, errlen, "%s: no hw counters: %s", dir, strerror(errno));
		return -errno;
	}
	o = json_object();
	for (i = 0; i < n; i++) {
		FILE *f;

		if (ents[i]->d_name[0] != '.' && strcmp(ents[i]->d_name, "lifespan")) {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			f = fopen(path, "re");
			if (f) {
				if (fgets(line, sizeof(line), f))
					json_object_set_new(o, ents[i]->d_name,
							    json_integer(strtoll(line, NULL, 10)));
				fclose(f);
			}
		}
		free(ents[i]);
	}
	free(ents);
	*result = json_pack("{s:s,s:o}", "dev", a->dev.name, "hw_counters", o);
	return 0;
}
