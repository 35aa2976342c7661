// SPDX-License-Identifier: MIT
/*
 * rdma-agent --metrics ADDR:PORT: an OpenMetrics (Prometheus text) endpoint,
 * off unless asked for, for people who watch their testbeds in Grafana.
 * GET /metrics answers with what the agent knows at that moment, read-only:
 * its identity, its arms (state, operations done), the RDMA device's hw
 * counters and the injector's counts on its RoCE netdev. Nothing can be
 * changed through it and it needs no token, so it listens where the user
 * says (loopback in the examples); one request at a time, each connection
 * closed after its answer, a slow client cut off after 2 s.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "agent.h"
#include "../lib/log.h"
#include "../lib/clock.h"
#include "../lib/proto.h"

#ifndef RTB_VERSION
#define RTB_VERSION "0.0.0"
#endif

static int mfd = -1;
static pthread_t mthread;
static volatile int mstop;

/* a label value, escaped as OpenMetrics wants (\\, \", \n) */
static void label(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* one counter family of the injector's per-direction counts (key: in each
 * direction's object) */
static void inject_family(FILE *f, const json_t *inj, const char *key, const char *name,
			  const char *help)
{
	const char *dir;
	const json_t *d;

	fprintf(f, "# TYPE rdma_inject_%s counter\n# HELP rdma_inject_%s %s\n", name, name, help);
	json_object_foreach((json_t *)inj, dir, d) {
		fprintf(f, "rdma_inject_%s_total{dir=\"", name);
		label(f, dir);
		fprintf(f, "\"} %lld\n", (long long)json_integer_value(json_object_get(d, key)));
	}
}

/* the exposition, into f */
static void exposition(struct agent *a, FILE *f)
{
	json_t *arms = arm_snapshot(a), *hw = NULL, *x;
	static const char *const states[] = { "prepared", "connected", "running", "done" };
	const char *k;
	char err[128];
	size_t i;

	fputs("# TYPE rdma_agent info\n# HELP rdma_agent This agent: its node, device and version.\n"
	      "rdma_agent_info{node=\"", f);
	label(f, a->name);
	fputs("\",dev=\"", f);
	label(f, a->dev.name);
	fputs("\",version=\"" RTB_VERSION "\"} 1\n", f);

	fputs("# TYPE rdma_agent_arms gauge\n# HELP rdma_agent_arms Arms (workload runs) on this "
	      "agent by state.\n", f);
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		size_t j, n = 0;

		json_array_foreach(arms, j, x)
			n += !strcmp(json_string_value(json_object_get(x, "state")), states[i]);
		fprintf(f, "rdma_agent_arms{state=\"%s\"} %zu\n", states[i], n);
	}
	fputs("# TYPE rdma_agent_arm_operations counter\n# HELP rdma_agent_arm_operations "
	      "Operations (steps) an arm has done.\n", f);
	json_array_foreach(arms, i, x) {
		fprintf(f, "rdma_agent_arm_operations_total{arm=\"%lld\",workload=\"",
			(long long)json_integer_value(json_object_get(x, "id")));
		label(f, json_string_value(json_object_get(x, "workload")));
		fprintf(f, "\"} %lld\n", (long long)json_integer_value(json_object_get(x, "progress")));
	}
	json_decref(arms);

	if (!a->no_rdma && !hw_counters(a, 0, NULL, &hw, err, sizeof(err))) {
		fputs("# TYPE rdma_hw_counter counter\n# HELP rdma_hw_counter The RDMA device's "
		      "port hw counters (/sys/class/infiniband/DEV/ports/N/hw_counters).\n", f);
		json_object_foreach(json_object_get(hw, "hw_counters"), k, x) {
			if (!json_is_integer(x))
				continue;
			fputs("rdma_hw_counter_total{dev=\"", f);
			label(f, a->dev.name);
			fputs("\",counter=\"", f);
			label(f, k);
			fprintf(f, "\"} %lld\n", (long long)json_integer_value(x));
		}
		inject_family(f, json_object_get(hw, "injector"), "roce_pkts", "roce_packets",
			      "RoCE packets the injector's hooks on the device's netdev saw.");
		inject_family(f, json_object_get(hw, "injector"), "resent", "resent_packets",
			      "Resent packets the injector's hooks counted (tracking on).");
	}
	json_decref(hw);
	fputs("# EOF\n", f);
}

/*
 * One client at a time: the whole request, read and answer, has
 * METRICS_REQUEST_MS, whatever its pace (a byte every 1.5 s under a
 * per-read timeout held the only thread 17.5 s).
 */
#define METRICS_REQUEST_MS 2000

/* read or write some of buf before the deadline: bytes moved, 0 at the
 * end of the stream or the deadline, -1 on error */
static ssize_t io_until(int fd, int writing, char *buf, size_t len, uint64_t deadline)
{
	uint64_t now = rtb_now_ns();
	struct pollfd p = { fd, writing ? POLLOUT : POLLIN, 0 };

	if (now >= deadline || poll(&p, 1, (int)((deadline - now) / 1000000) + 1) <= 0)
		return 0;
	return writing ? send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) :
			 recv(fd, buf, len, MSG_DONTWAIT);
}

/* all of buf before the deadline: 0, or -1 */
static int send_all(int fd, char *buf, size_t len, uint64_t deadline)
{
	ssize_t n;

	for (size_t at = 0; at < len; at += (size_t)n)
		if ((n = io_until(fd, 1, buf + at, len - at, deadline)) <= 0)
			return -1;
	return 0;
}

static void answer(struct agent *a, int fd)
{
	uint64_t deadline = rtb_now_ns() + METRICS_REQUEST_MS * 1000000ULL;
	char req[2048], *body = NULL;
	size_t len = 0, got = 0;
	const char *status = "200 OK", *ctype =
		"application/openmetrics-text; version=1.0.0; charset=utf-8";
	char head[256];
	FILE *f;
	ssize_t n;

	/* the request line and headers, up to the blank line (or 2 KiB) */
	while (got < sizeof(req) - 1 && (n = io_until(fd, 0, req + got, sizeof(req) - 1 - got,
						      deadline)) > 0) {
		got += (size_t)n;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[got] = '\0';
	f = open_memstream(&body, &len);
	if (!f)
		return;
	if (!strncmp(req, "GET /metrics ", 13) || !strncmp(req, "GET /metrics?", 13)) {
		exposition(a, f);
	} else if (!strncmp(req, "GET ", 4)) {
		status = "404 Not Found";
		ctype = "text/plain; charset=utf-8";
		fputs("rdma-agent: the metrics are at /metrics\n", f);
	} else {
		status = "405 Method Not Allowed";
		ctype = "text/plain; charset=utf-8";
		fputs("rdma-agent: GET /metrics only\n", f);
	}
	fclose(f);
	n = snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: "
		     "%zu\r\nConnection: close\r\n\r\n", status, ctype, len);
	if (!send_all(fd, head, (size_t)n, deadline))
		send_all(fd, body, len, deadline);
	free(body);
}

static void *metrics_thread(void *p)
{
	struct agent *a = p;

	while (!mstop) {
		struct pollfd pfd = { mfd, POLLIN, 0 };
		int fd;

		if (poll(&pfd, 1, 200) <= 0)
			continue;
		fd = accept4(mfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		answer(a, fd);
		close(fd);
	}
	return NULL;
}

int metrics_start(struct agent *a, const char *addr)
{
	int r;

	mfd = net_listen(addr);
	if (mfd < 0)
		return mfd;
	mstop = 0;
	r = -pthread_create(&mthread, NULL, metrics_thread, a);
	if (r) {
		close(mfd);
		mfd = -1;
	}
	return r;
}

void metrics_stop(void)
{
	if (mfd < 0)
		return;
	mstop = 1;
	pthread_join(mthread, NULL);
	close(mfd);
	mfd = -1;
}
