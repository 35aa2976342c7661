/* SPDX-License-Identifier: MIT */
/* Messages on stderr: "prog: object: verb: reason". */
#ifndef RTB_LOG_H
#define RTB_LOG_H

#include <stdarg.h>

extern int log_verbose;

void log_set_prog(const char *name);
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A message a peer can make us print at will (a refused or dropped
 * connection): at most one a second per limiter, saying how many there were
 * since the last one printed; logs live in tmpfs. Thread-safe.
 */
struct log_limit {
	unsigned long long last_ns, n, shown;
};
void log_limited(struct log_limit *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
