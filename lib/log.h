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

#endif
