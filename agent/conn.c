// SPDX-License-Identifier: MIT
/*
 * The agent's control connections: a fixed table, so that a peer cannot
 * make it start threads without end, and so that shutdown can wake every
 * connection and wait for its thread to finish its clean-up.
 *
 * Two caps, never one shared by strangers and the controller: at most
 * AGENT_MAX_CONNS_PRE connections that have not authenticated (a new one
 * evicts the oldest: whatever strangers do, a controller's connection lives
 * at least until AGENT_MAX_CONNS_PRE newer ones arrive, and it needs one
 * round trip), and at most AGENT_MAX_CONNS_OPEN authenticated ones. The
 * slots beyond both hold closed connections whose threads still clean up.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include "agent.h"
#include "../lib/clock.h"

void agent_conns_init(struct agent *a)
{
	pthread_condattr_t ca;

	for (int i = 0; i < AGENT_MAX_CONNS; i++) {
		a->conns[i].fd = -1;
		a->conns[i].state = CONN_FREE;
	}
	a->nconns = 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->conns_gone, &ca);
	pthread_condattr_destroy(&ca);
}

/* the oldest connection not authenticated: woken, its thread ends it */
static void evict_oldest(struct agent *a)
{
	int i, old = -1;

	for (i = 0; i < AGENT_MAX_CONNS; i++)
		if (a->conns[i].state == CONN_PRE &&
		    (old < 0 || a->conns[i].since_ns < a->conns[old].since_ns))
			old = i;
	if (old >= 0) {
		shutdown(a->conns[old].fd, SHUT_RDWR);
		a->conns[old].state = CONN_CLOSING;
	}
}

int agent_conn_take(struct agent *a, int fd, const char *peer, const char **why)
{
	int i, free_slot = -1, pre = 0;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < AGENT_MAX_CONNS; i++) {
		if (a->conns[i].state == CONN_FREE && free_slot < 0)
			free_slot = i;
		pre += a->conns[i].state == CONN_PRE;
	}
	if (pre >= AGENT_MAX_CONNS_PRE)
		evict_oldest(a);
	if (free_slot < 0) {
		*why = "too many control connections (all slots closing)";
	} else {
		a->conns[free_slot].fd = fd;
		a->conns[free_slot].state = CONN_PRE;
		a->conns[free_slot].since_ns = rtb_now_ns();
		snprintf(a->conns[free_slot].peer, sizeof(a->conns[free_slot].peer), "%s", peer);
		a->nconns++;
	}
	pthread_mutex_unlock(&a->lock);
	return free_slot;
}

int agent_conn_authed(struct agent *a, int slot, const char **why)
{
	int i, open_n = 0, r = 0;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < AGENT_MAX_CONNS; i++)
		open_n += a->conns[i].state == CONN_AUTHED;
	if (a->conns[slot].state != CONN_PRE) {
		*why = "evicted before it authenticated (too many strangers' connections)";
		r = -1;
	} else if (open_n >= AGENT_MAX_CONNS_OPEN) {
		*why = "too many control connections";
		r = -1;
	} else {
		a->conns[slot].state = CONN_AUTHED;
	}
	pthread_mutex_unlock(&a->lock);
	return r;
}

void agent_conn_closing(struct agent *a, int slot)
{
	pthread_mutex_lock(&a->lock);
	a->conns[slot].state = CONN_CLOSING;	/* closed, its thread still cleaning up */
	a->conns[slot].fd = -1;
	pthread_mutex_unlock(&a->lock);
}

void agent_conn_put(struct agent *a, int slot)
{
	pthread_mutex_lock(&a->lock);
	a->conns[slot].fd = -1;
	a->conns[slot].state = CONN_FREE;
	a->conns[slot].peer[0] = 0;
	a->nconns--;
	pthread_cond_broadcast(&a->conns_gone);
	pthread_mutex_unlock(&a->lock);
}

/* shut every connection's socket down (its thread's read returns, it
 * releases what it owned and exits); wait for them: 0, or -ETIMEDOUT */
int agent_conns_close(struct agent *a, int timeout_ms)
{
	struct timespec dl;
	int r = 0;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	__atomic_store_n(&a->closing, 1, __ATOMIC_RELEASE);	/* perftest_wait, wait */
	pthread_mutex_lock(&a->lock);
	for (int i = 0; i < AGENT_MAX_CONNS; i++)
		if (a->conns[i].fd >= 0)
			shutdown(a->conns[i].fd, SHUT_RDWR);
	while (a->nconns > 0 && !r)
		r = pthread_cond_timedwait(&a->conns_gone, &a->lock, &dl);
	r = a->nconns > 0 ? -ETIMEDOUT : 0;
	pthread_mutex_unlock(&a->lock);
	return r;
}
