// SPDX-License-Identifier: MIT
/*
 * File locations. Binaries find their companions relative to themselves
 * (build/bin/rdmactl -> build/libexec/rdma-testbed, the same under PREFIX),
 * so the build tree and an installed tree work alike. Environment overrides:
 * RDMATB_LIBEXEC, RDMATB_STATE_DIR, RDMATB_CACHE_DIR.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ctl/base/ctl.h"

static char prefix[PATH_MAX];	/* parent of the bin/ directory holding rdmactl */

static const char *self_prefix(void)
{
	char exe[PATH_MAX];
	ssize_t n;

	if (prefix[0])
		return prefix;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return strcpy(prefix, "/usr/local");
	exe[n] = 0;
	snprintf(prefix, sizeof(prefix), "%s", dirname(dirname(exe)));
	return prefix;
}

static const char *env_or(const char *env, char *buf, size_t len, const char *fmt, const char *arg)
{
	const char *e = getenv(env);

	if (e && *e)
		snprintf(buf, len, "%s", e);
	else
		snprintf(buf, len, fmt, arg);
	return buf;
}

const char *ctl_libexec_dir(void)
{
	static char b[PATH_MAX];

	return env_or("RDMATB_LIBEXEC", b, sizeof(b), "%s/libexec/rdma-testbed", self_prefix());
}

const char *ctl_bin_dir(void)
{
	static char b[PATH_MAX];

	return env_or("RDMATB_BIN", b, sizeof(b), "%s/bin", self_prefix());
}

const char *ctl_bpf_dir(void)
{
	static char b[PATH_MAX];

	return env_or("RDMATB_BPF", b, sizeof(b), "%s/lib/rdma-testbed/bpf", self_prefix());
}

const char *ctl_state_dir(void)
{
	static char b[PATH_MAX];
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (getuid() == 0)
		return env_or("RDMATB_STATE_DIR", b, sizeof(b), "%s", "/run/rdma-testbed");
	if (xdg)
		return env_or("RDMATB_STATE_DIR", b, sizeof(b), "%s/rdma-testbed", xdg);
	/* no XDG_RUNTIME_DIR: a name of this user's own in /tmp (one shared
	 * name could be made first by another user) */
	{
		char u[32];

		snprintf(u, sizeof(u), "%u", (unsigned)getuid());
		return env_or("RDMATB_STATE_DIR", b, sizeof(b), "/tmp/rdma-testbed-%s", u);
	}
}

const char *ctl_cache_dir(void)
{
	static char b[PATH_MAX];
	const char *home = getenv("HOME");

	if (getuid() == 0 || !home)
		return env_or("RDMATB_CACHE_DIR", b, sizeof(b), "%s", "/var/cache/rdma-testbed");
	return env_or("RDMATB_CACHE_DIR", b, sizeof(b), "%s/.cache/rdma-testbed", home);
}

int ctl_copy_file(const char *src, const char *dst, int oflags, mode_t mode)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), r;

	if (in < 0)
		return -errno;
	r = ctl_copy_fd(in, dst, oflags, mode);
	close(in);
	return r;
}

int ctl_copy_fd(int in, const char *dst, int oflags, mode_t mode)
{
	char buf[65536];
	int out, r = 0;
	ssize_t n;

	out = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC | oflags, mode);
	if (out < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			r = -EIO;
			break;
		}
	if (n < 0)
		r = -errno;
	if (!r && fchmod(out, mode))	/* exactly mode, whatever the umask */
		r = -errno;
	if (close(out) && !r)
		r = -errno;
	return r;
}

int ctl_mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX], *p;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p) && errno != ENOENT ? -errno : 0;
}

int ctl_rm_rf(const char *path)
{
	if (access(path, F_OK))
		return 0;
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

volatile sig_atomic_t ctl_interrupted;

int ctl_exit(int r)
{
	switch (r) {
	case 0:
		return CTL_OK;
	case -EINVAL:
		return CTL_USAGE;
	case -EINTR:
		return CTL_INTERRUPTED;
	default:
		return CTL_FAIL;
	}
}
