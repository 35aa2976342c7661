// SPDX-License-Identifier: MIT
/*
 * The agent's control connections: a fixed table, so that a peer cannot
 * make it start threads without end (AGENT_MAX_CONNS at once, at most
 * AGENT_MAX_CONNS_PEER from one address), and so that shutdown can wake
 * every connection and wait for its thread to finish its clean-up.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include "agent.h"

void agent_conns_init(struct agent *a)
{
	pthread_condattr_t ca;

	for (int i = 0; i < AGENT_MAX_CONNS; i++)
		a->conns[i].fd = -1;
	a->nconns = 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->conns_gone, &ca);
	pthread_condattr_destroy(&ca);
}

int agent_conn_take(struct agent *a, int fd, const char *peer, const char **why)
{
	int i, free_slot = -1, same = 0, open_n = 0;

	pthread_mutex_lock(&a->lock);
	/* the caps count open connections: a closed one whose thread still
	 * releases its arms (an RC arm can take seconds) holds a slot, not a
	 * place under the caps (a CI run's next arm was refused that way) */
	for (i = 0; i < AGENT_MAX_CONNS; i++) {
		if (a->conns[i].fd == -1) {
			if (free_slot < 0)
				free_slot = i;
		} else if (a->conns[i].fd >= 0) {
			same += !strcmp(a->conns[i].peer, peer);
			open_n++;
		}
	}
	if (free_slot < 0 || open_n >= AGENT_MAX_CONNS_OPEN)
		*why = "too many control connections", free_slot = -1;
	else if (same >= AGENT_MAX_CONNS_PEER) {
		*why = "too many control connections from this peer";
		free_slot = -1;
	} else {
		a->conns[free_slot].fd = fd;
		snprintf(a->conns[free_slot].peer, sizeof(a->conns[free_slot].peer), "%s", peer);
		a->nconns++;
	}
	pthread_mutex_unlock(&a->lock);
	return free_slot;
}

void agent_conn_closing(struct agent *a, int slot)
{
	pthread_mutex_lock(&a->lock);
	a->conns[slot].fd = -2;	/* closed, its thread still cleaning up */
	pthread_mutex_unlock(&a->lock);
}

void agent_conn_put(struct agent *a, int slot)
{
	pthread_mutex_lock(&a->lock);
	a->conns[slot].fd = -1;
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
