/* SPDX-License-Identifier: MIT */
/*
 * The base room of rdmactl: what every other room may use and nothing
 * above it. Where our files live, running a program, the flags of one
 * invocation, the exit codes.
 *
 * Error convention: functions below the commands return 0 or -errno (a
 * message, when there is one to give, already printed or in an err
 * buffer); the commands (cmd_*) return an exit code, ctl_exit() maps one
 * to the other in one place.
 */
#ifndef RTB_CTL_BASE_H
#define RTB_CTL_BASE_H

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>
#include "lib/clock.h"

/* global flags of one rdmactl invocation */
struct ctl {
	int json;
	int verbose;
};

/* exit codes of every command: ok, failed, bad usage (nothing touched),
 * stopped by Ctrl-C before anything was done (as a shell reports SIGINT) */
enum ctl_exit { CTL_OK = 0, CTL_FAIL = 1, CTL_USAGE = 2, CTL_INTERRUPTED = 130 };
/* what an argument parser returns after printing --help: neither an exit
 * code (0..255) nor -errno (ctl_code() makes it CTL_OK), so that it never
 * reads as a failure */
#define CTL_HELP 256
static inline int ctl_code(int r)
{
	return r == CTL_HELP ? CTL_OK : r;
}
/* 0 -> CTL_OK, -EINVAL -> CTL_USAGE, -EINTR -> CTL_INTERRUPTED, any other
 * -errno -> CTL_FAIL */
int ctl_exit(int r);

/* set by SIGINT/SIGTERM handlers: waits in every room return -EINTR */
extern volatile sig_atomic_t ctl_interrupted;

/* --- paths.c: where our files live (build tree or installed) */
const char *ctl_libexec_dir(void);	/* mkimage.sh, topology.sh, init.sh */
const char *ctl_bin_dir(void);		/* rdma-agent, rdma-inject */
const char *ctl_bpf_dir(void);
const char *ctl_state_dir(void);	/* one running testbed */
const char *ctl_cache_dir(void);	/* VM image, kernel */
int ctl_mkdir_p(const char *path, mode_t mode);
/* src's bytes into dst, opened O_WRONLY | O_CREAT | oflags (O_TRUNC, or
 * O_EXCL | O_NOFOLLOW for a fresh file) with mode; 0 or -errno */
int ctl_copy_file(const char *src, const char *dst, int oflags, mode_t mode);
/* the same from an open descriptor (read from where it stands) */
int ctl_copy_fd(int in, const char *dst, int oflags, mode_t mode);
int ctl_rm_rf(const char *path);

#endif
