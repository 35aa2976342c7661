// SPDX-License-Identifier: MIT
/*
 * Agents that join (rdma-agent --join HOST:PORT): rdmactl listens, and each
 * agent dials it. A thread takes every connection through the handshake
 * (the agent's challenge, both sides proving the token) and one hello,
 * which names the agent, then parks it under that name. agentc_open with
 * JOIN_HOST as its host takes a parked connection instead of dialing: its
 * first request tells the agent, which dials the next (agent/join.c).
 *
 * A name is one agent (its address, boot id and pid): another joining under
 * it is refused, and said, while the first answers; once it does not, the
 * newcomer takes its place (an agent restarted). A parked connection whose
 * agent has gone is found out when it is taken (its ping fails), dropped.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>
#include "ctl/agent/agent.h"
#include "ctl/base/ctl.h"
#include "lib/clock.h"
#include "lib/log.h"

#define JOIN_MAX 4096		/* agents */
#define JOIN_PARK 4		/* parked connections an agent */

struct joined {
	char name[32], peer[64], dev[32];
	char who[96];			/* its address, boot id and pid: one agent */
	double at;			/* when it first joined (rtb_now_s) */
	int npark;
	struct agentc park[JOIN_PARK];
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
	int lfd, stop, started, n;
	char token[160], at[96];
	struct joined *a;	/* JOIN_MAX of them */
} J = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, -1, 0, 0, 0, "", "", NULL };

static struct joined *find(const char *name)
{
	for (int i = 0; i < J.n; i++)
		if (!strcmp(J.a[i].name, name))
			return &J.a[i];
	return NULL;
}

/* j's agent still answers on one of its parked connections (J.mu held;
 * let go while asking) */
static int alive(struct joined *j)
{
	struct agentc c;
	json_t *res = NULL;
	char err[128];
	int r;

	if (!j->npark)
		return 0;
	c = j->park[--j->npark];
	pthread_mutex_unlock(&J.mu);
	r = agentc_call(&c, "ping", NULL, &res, 1000, err, sizeof(err));
	json_decref(res);
	pthread_mutex_lock(&J.mu);
	/* the ping counted as its use: close it, the agent dials another */
	agentc_close(&c);
	return !r;
}

/* one new connection: the handshake, a hello, parked under its name */
static void admit(int fd)
{
	static struct log_limit lim;
	struct agentc c = { .fd = fd };
	char why[256] = "", ip[64], who[96];
	const char *name, *dev;
	struct joined *j;
	json_t *res = NULL;
	int one = 1, r;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	net_peer_ip(fd, ip, sizeof(ip));
	snprintf(c.where, sizeof(c.where), "an agent joining from %s", ip);
	/* a stranger that stalls holds the door no longer than this */
	r = proto_auth_ctl(&c.s, fd, J.token, 2000, why, sizeof(why));
	if (r || agentc_call(&c, "hello", NULL, &res, 5000, why, sizeof(why))) {
		log_limited(&lim, "join: refused a connection from %s: %s", ip,
			    r ? (why[0] ? why : strerror(-r)) : why);
		agentc_close(&c);
		return;
	}
	name = json_string_value(json_object_get(res, "name"));
	dev = json_string_value(json_object_get(res, "dev"));
	if (!name || !name[0] || strlen(name) >= sizeof(j->name)) {
		log_limited(&lim, "join: refused an agent from %s: no name in its hello", ip);
		json_decref(res);
		agentc_close(&c);
		return;
	}
	snprintf(who, sizeof(who), "%s %s %lld", ip,
		 json_string_value(json_object_get(res, "boot_id")) ?: "",
		 (long long)json_integer_value(json_object_get(res, "pid")));
	pthread_mutex_lock(&J.mu);
	j = find(name);
	if (j && strcmp(j->who, who) && alive(j)) {
		log_limited(&lim, "join: refused an agent named %s from %s: another agent from %s "
			    "has that name (give each rdma-agent its own --name)", name, ip, j->peer);
		j = NULL;
		r = -EEXIST;
	} else if (j && strcmp(j->who, who)) {	/* the old one is gone: restarted */
		while (j->npark)
			agentc_close(&j->park[--j->npark]);
		snprintf(j->who, sizeof(j->who), "%s", who);
		snprintf(j->peer, sizeof(j->peer), "%s", ip);
		snprintf(j->dev, sizeof(j->dev), "%s", dev ? dev : "-");
	} else if (!j && J.n == JOIN_MAX) {
		log_limited(&lim, "join: refused %s from %s: %d agents already", name, ip, JOIN_MAX);
		r = -ENOSPC;
	} else if (!j) {
		j = &J.a[J.n++];
		memset(j, 0, sizeof(*j));
		snprintf(j->name, sizeof(j->name), "%s", name);
		snprintf(j->peer, sizeof(j->peer), "%s", ip);
		snprintf(j->who, sizeof(j->who), "%s", who);
		snprintf(j->dev, sizeof(j->dev), "%s", dev ? dev : "-");
		j->at = rtb_now_s();
	}
	if (j && j->npark == JOIN_PARK) {	/* the oldest is the likeliest dead */
		agentc_close(&j->park[0]);
		memmove(&j->park[0], &j->park[1], sizeof(j->park[0]) * (JOIN_PARK - 1));
		j->npark--;
	}
	if (j) {
		snprintf(c.where, sizeof(c.where), "%s (joined from %s)", name, ip);
		j->park[j->npark++] = c;
		pthread_cond_broadcast(&J.cv);
	}
	pthread_mutex_unlock(&J.mu);
	json_decref(res);
	if (!j)
		agentc_close(&c);
}

static void *accept_thread(void *arg)
{
	(void)arg;
	while (!J.stop) {
		struct pollfd p = { .fd = J.lfd, .events = POLLIN };
		int fd;

		if (poll(&p, 1, 200) <= 0)
			continue;
		fd = accept4(J.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			admit(fd);
	}
	return NULL;
}

int join_listen(const char *at, const char *token, char *err, size_t len)
{
	int r;

	if (J.started) {
		snprintf(err, len, "join: already listening on %s", J.at);
		return -EBUSY;
	}
	if (!J.a && !(J.a = calloc(JOIN_MAX, sizeof(*J.a)))) {
		snprintf(err, len, "join: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	J.lfd = net_listen(at);
	if (J.lfd < 0) {
		snprintf(err, len, "join: %s: cannot listen: %s", at, strerror(-J.lfd));
		return J.lfd;
	}
	snprintf(J.token, sizeof(J.token), "%s", token);
	snprintf(J.at, sizeof(J.at), "%s", at);
	J.stop = 0;
	J.n = 0;
	if ((r = pthread_create(&J.th, NULL, accept_thread, NULL))) {
		close(J.lfd);
		J.lfd = -1;
		snprintf(err, len, "join: a thread: %s", strerror(r));
		return -r;
	}
	J.started = 1;
	agentc_join_hook(join_take);
	return 0;
}

void join_stop(void)
{
	if (!J.started)
		return;
	J.stop = 1;
	pthread_join(J.th, NULL);
	close(J.lfd);
	J.lfd = -1;
	pthread_mutex_lock(&J.mu);
	for (int i = 0; i < J.n; i++)
		while (J.a[i].npark)
			agentc_close(&J.a[i].park[--J.a[i].npark]);
	J.n = 0;
	pthread_mutex_unlock(&J.mu);
	J.started = 0;
}

/* "node2" before "node10": the digits at the end by their value */
static int name_cmp(const void *x, const void *y)
{
	const char *a = x, *b = y;
	size_t la = strlen(a), lb = strlen(b), da = la, db = lb;

	while (da && a[da - 1] >= '0' && a[da - 1] <= '9')
		da--;
	while (db && b[db - 1] >= '0' && b[db - 1] <= '9')
		db--;
	if (da == db && !strncmp(a, b, da) && da < la && db < lb) {
		unsigned long na = strtoul(a + da, NULL, 10), nb = strtoul(b + db, NULL, 10);

		if (na != nb)
			return na < nb ? -1 : 1;
	}
	return strcmp(a, b);
}

int join_names(char (*names)[32], int max)
{
	int n = 0;

	pthread_mutex_lock(&J.mu);
	for (int i = 0; i < J.n && n < max; i++)
		snprintf(names[n++], 32, "%s", J.a[i].name);
	pthread_mutex_unlock(&J.mu);
	qsort(names, (size_t)n, 32, name_cmp);
	return n;
}

int join_info(const char *name, char *peer, size_t plen, char *dev, size_t dlen)
{
	struct joined *j;

	pthread_mutex_lock(&J.mu);
	j = find(name);
	if (j) {
		snprintf(peer, plen, "%s", j->peer);
		snprintf(dev, dlen, "%s", j->dev);
	}
	pthread_mutex_unlock(&J.mu);
	return j ? 0 : -ENOENT;
}

int join_take(struct agentc *c, const char *name, int timeout_ms)
{
	double until = rtb_now_s() + timeout_ms / 1e3;
	char err[256];
	int r = -ETIMEDOUT;

	c->fd = -1;
	snprintf(c->where, sizeof(c->where), "%s (joined)", name);
	pthread_mutex_lock(&J.mu);
	while (!ctl_interrupted) {
		struct joined *j = J.started ? find(name) : NULL;
		struct timespec ts;
		json_t *res = NULL;

		if (j && j->npark) {
			*c = j->park[--j->npark];
			pthread_mutex_unlock(&J.mu);
			/* taken: the agent dials the next; a dead one is dropped */
			r = agentc_call(c, "ping", NULL, &res, 5000, err, sizeof(err));
			json_decref(res);
			pthread_mutex_lock(&J.mu);
			if (!r)
				break;
			agentc_close(c);
			continue;
		}
		if (!J.started || rtb_now_s() >= until) {
			r = J.started ? -ETIMEDOUT : -ENOTCONN;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100000000;	/* a tenth of a second: the interrupt flag read */
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&J.cv, &J.mu, &ts);
	}
	pthread_mutex_unlock(&J.mu);
	if (ctl_interrupted && r)
		r = -EINTR;
	return r;
}

int join_wait(const char *const *names, int n, double wait_s, int quiet, char *err, size_t len,
	      int (*gone)(void *arg, char *why, size_t len), void *arg)
{
	double t0 = rtb_now_s(), said = t0;
	int i, have = 0;

	for (;;) {
		char peer[64], dev[32];
		size_t o = 0;

		have = 0;
		err[0] = 0;
		for (i = 0; i < n; i++) {
			if (!join_info(names[i], peer, sizeof(peer), dev, sizeof(dev)))
				have++;
			else if (o < len)	/* the missing ones, named */
				o += (size_t)snprintf(err + o, len - o, "%s%s", o ? " " : "", names[i]);
		}
		if (have == n || ctl_interrupted || rtb_now_s() - t0 >= wait_s)
			break;
		if (gone && gone(arg, err, len)) {	/* what starts them has ended */
			char why[512];

			snprintf(why, sizeof(why), "%s", err);
			snprintf(err, len, "join: %d of %d agents joined %s; %s", have, n, J.at, why);
			return -EIO;
		}
		if (!quiet && rtb_now_s() - said >= 2) {
			log_info("join: %d of %d agents joined at %s; waiting for %s (%.0f s of %.0f)",
				 have, n, J.at, err, rtb_now_s() - t0, wait_s);
			said = rtb_now_s();
		}
		usleep(50000);
	}
	if (have == n)
		return 0;
	if (ctl_interrupted)
		return -EINTR;
	{
		char missing[512];

		snprintf(missing, sizeof(missing), "%s", err);
		snprintf(err, len, "join: %d of %d agents did not join %s within %.0f s: %s", n - have,
			 n, J.at, wait_s, missing);
	}
	return -ETIMEDOUT;
}

int join_fleet(const char *nodes, uint64_t expect, double wait_s, int quiet, char (*names)[32],
	       int max)
{
	double t0 = rtb_now_s(), said = t0;
	char err[2048];

	if (nodes) {
		const char **want = calloc((size_t)max + 1, sizeof(*want));
		char *copy = strdup(nodes), *tok, *save;
		int n = 0, r;

		if (!copy || !want) {
			free(copy);
			free(want);
			return -ENOMEM;
		}
		for (tok = strtok_r(copy, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) {
			snprintf(names[n], 32, "%s", tok);
			want[n] = names[n];
			n++;
		}
		free(copy);
		r = join_wait(want, n, wait_s, quiet, err, sizeof(err), NULL, NULL);
		free(want);
		if (r)
			log_err("%s", r == -EINTR ? "interrupted" : err);
		return r ? r : n;
	}
	for (;;) {
		int have = join_names(names, max);

		if ((uint64_t)have >= expect)
			return (int)expect;
		if (ctl_interrupted)
			return -EINTR;
		if (rtb_now_s() - t0 >= wait_s) {
			log_err("%d of %llu agents joined within %.0f s", have, (unsigned long long)expect,
				wait_s);
			return -ETIMEDOUT;
		}
		if (!quiet && rtb_now_s() - said >= 1) {
			log_info("%d of %llu agents joined (%.0f s)", have, (unsigned long long)expect,
				 rtb_now_s() - t0);
			said = rtb_now_s();
		}
		usleep(20000);
	}
}
