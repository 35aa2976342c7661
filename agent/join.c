// SPDX-License-Identifier: MIT
/*
 * rdma-agent --join HOST:PORT: the agent dials the controller instead of
 * waiting for it, so that a node needs no inbound port. Each connection it
 * makes is served as an accepted one (the same handshake: the agent's
 * challenge first, both sides proving the token, which never crosses the
 * wire). The controller parks it after one hello; its next request means
 * the controller took it, and the agent dials the next. So one connection
 * always waits for the controller, however many it uses. A controller that
 * is not there yet, or went away, is dialed again after 0.2 s, doubling to
 * 5 s, said once every 30 s.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "agent.h"
#include "../lib/clock.h"
#include "../lib/log.h"

struct joiner {
	struct agent *a;
	char host[256];
	int port;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int spare;		/* dialed, not taken yet */
	int refused;		/* one closed untaken at once: the controller said no */
	double backoff;		/* before the next dial after a failure: 0.2 s doubling to 5 */
	int stop, started;
};

struct jconn {
	struct joiner *j;
	int fd, slot, taken;
	double t0;
};

static struct joiner joiner;

/* c is no spare any more: taken by the controller (used), or closed; the
 * next one is dialed */
static void spare_gone(struct jconn *c, int used)
{
	pthread_mutex_lock(&c->j->mu);
	if (!c->taken) {
		c->taken = 1;
		c->j->spare--;
		if (used)	/* the controller uses us: failures counted from scratch */
			c->j->backoff = 0.2;
		pthread_cond_broadcast(&c->j->cv);
	}
	pthread_mutex_unlock(&c->j->mu);
}

/* the controller took c (its second request) */
static void jconn_taken(void *arg)
{
	spare_gone(arg, 1);
}

static void *jconn_thread(void *arg)
{
	struct jconn *c = arg;

	agent_serve_conn(c->j->a, c->fd, c->slot, jconn_taken, c);
	pthread_mutex_lock(&c->j->mu);
	/* closed untaken within 2 s: refused (another agent has our name, a
	 * wrong token): dialed again no sooner than a failed dial would be */
	if (!c->taken && rtb_now_s() - c->t0 < 2)
		c->j->refused = 1;
	pthread_mutex_unlock(&c->j->mu);
	spare_gone(c, 0);	/* closed before it was taken */
	{	/* freed first: the shutdown waits for agent_conn_put only */
		struct agent *a = c->j->a;
		int slot = c->slot;

		free(c);
		agent_conn_put(a, slot);
	}
	return NULL;
}

/* wait up to s seconds, or until stopped (j->mu held) */
static void nap(struct joiner *j, double s)
{
	struct timespec ts;

	rtb_deadline(&ts, s);
	if (!j->stop)
		pthread_cond_timedwait(&j->cv, &j->mu, &ts);
}

static void *join_thread(void *arg)
{
	struct joiner *j = arg;
	static struct log_limit lim;
	double said = -30;
	pthread_attr_t attr;
	int joined = 0;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_mutex_lock(&j->mu);
	while (!j->stop) {
		struct jconn *c;
		const char *why;
		char peer[300];
		pthread_t t;
		int fd, one = 1;

		if (j->spare > 0) {	/* woken when it is taken or closed */
			nap(j, 60);
			continue;
		}
		if (j->refused) {
			j->refused = 0;
			if (rtb_now_s() - said >= 30) {
				log_info("join: %s:%d closed our connection before using it (a wrong "
					 "token? another agent named %s?); dialing again, every 5 s "
					 "at most", j->host, j->port, j->a->name);
				said = rtb_now_s();
			}
			nap(j, j->backoff);
			j->backoff = j->backoff * 2 > 5 ? 5 : j->backoff * 2;
			continue;
		}
		pthread_mutex_unlock(&j->mu);
		fd = net_connect(j->host, j->port, 5000);
		pthread_mutex_lock(&j->mu);
		if (fd < 0) {
			if (rtb_now_s() - said >= 30) {	/* a controller away for hours: a line a half minute */
				log_info("join: %s:%d: %s (dialing again, every 5 s at most)", j->host,
					 j->port, strerror(-fd));
				said = rtb_now_s();
			}
			nap(j, j->backoff);
			j->backoff = j->backoff * 2 > 5 ? 5 : j->backoff * 2;
			joined = 0;
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		snprintf(peer, sizeof(peer), "%s:%d (joined)", j->host, j->port);
		c = calloc(1, sizeof(*c));
		if (!c || (c->slot = agent_conn_take(j->a, fd, peer, &why)) < 0) {
			log_limited(&lim, "join: %s:%d: no room for a connection: %s", j->host,
				    j->port, c ? why : strerror(ENOMEM));
			free(c);
			close(fd);
			nap(j, 1);
			continue;
		}
		c->j = j;
		c->fd = fd;
		c->t0 = rtb_now_s();
		j->spare++;
		if (pthread_create(&t, &attr, jconn_thread, c)) {
			j->spare--;
			agent_conn_put(j->a, c->slot);
			close(fd);
			free(c);
			nap(j, 1);
			continue;
		}
		if (!joined)
			log_info("%s: joined %s:%d", j->a->name, j->host, j->port);
		joined = 1;
	}
	pthread_mutex_unlock(&j->mu);
	pthread_attr_destroy(&attr);
	return NULL;
}

int agent_join_start(struct agent *a, const char *hostport)
{
	struct joiner *j = &joiner;
	const char *colon = strrchr(hostport, ':');
	pthread_condattr_t ca;
	char *end;
	long port;

	if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof(j->host))
		return -EINVAL;
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return -EINVAL;
	snprintf(j->host, sizeof(j->host), "%.*s", (int)(colon - hostport), hostport);
	if (j->host[0] == '[' && j->host[strlen(j->host) - 1] == ']') {	/* [v6]:port */
		memmove(j->host, j->host + 1, strlen(j->host));
		j->host[strlen(j->host) - 1] = 0;
	}
	j->port = (int)port;
	j->a = a;
	j->backoff = 0.2;
	pthread_mutex_init(&j->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&j->th, NULL, join_thread, j))
		return -EAGAIN;
	j->started = 1;
	return 0;
}

void agent_join_stop(void)
{
	struct joiner *j = &joiner;

	if (!j->started)
		return;
	pthread_mutex_lock(&j->mu);
	j->stop = 1;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
	pthread_join(j->th, NULL);
	j->started = 0;
}
