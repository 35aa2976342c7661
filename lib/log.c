// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <stdio.h>
#include "log.h"
#include "clock.h"

int log_verbose;
static const char *prog = "rdma-testbed";

void log_set_prog(const char *name)
{
	prog = name;
}

static void vlog(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 0)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void log_dbg(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 1)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void log_limited(struct log_limit *l, const char *fmt, ...)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	unsigned long long now = rtb_now_ns(), n = 0;
	char msg[512];
	va_list ap;

	pthread_mutex_lock(&mu);
	l->n++;
	if (!l->last_ns || now - l->last_ns >= 1000000000ULL) {
		n = l->n - l->shown;
		l->shown = l->n;
		l->last_ns = now;
	}
	pthread_mutex_unlock(&mu);
	if (!n || log_verbose < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n > 1)
		log_info("%s (%llu like it in the last second or more)", msg, n);
	else
		log_info("%s", msg);
}
