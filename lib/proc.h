/* SPDX-License-Identifier: MIT */
/*
 * Running another program, the one way every tool does it: spawn with
 * its stdin/stdout/stderr on given descriptors (or inherited), reap with
 * a deadline, stop with grace (SIGTERM, then SIGKILL), or run to the end
 * capturing stdout. Exit statuses are 0..255, or 128+N for signal N, as a
 * shell reports them.
 */
#ifndef RTB_PROC_H
#define RTB_PROC_H

#include <stddef.h>
#include <sys/types.h>

struct proc_io {
	int in, out, err;	/* become the child's 0, 1, 2; -1: inherited */
	int new_session;	/* setsid(): a terminal's Ctrl-C does not reach it */
};

/* argv[0] searched in PATH; 0 and *pid, or -errno */
int proc_spawn(char *const argv[], const struct proc_io *io, pid_t *pid);
/* wait up to timeout_ms (<0: forever) for pid: 0 and *status, -ETIMEDOUT
 * (still running, not reaped), -errno */
int proc_reap(pid_t pid, int timeout_ms, int *status);
/* SIGTERM, up to grace_ms to exit, then SIGKILL; reaped. Its status */
int proc_stop(pid_t pid, int grace_ms);
/* run argv to the end; its stdout into out (NUL-terminated; the rest
 * drained) when out != NULL. The exit status, or -errno when it could not
 * run */
int proc_run(char *const argv[], char *out, size_t outlen);
/* a wait status as 0..255 or 128+signal */
int proc_status(int wstatus);

#endif
