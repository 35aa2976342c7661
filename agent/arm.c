// SPDX-License-Identifier: MIT
/*
 * Arms: one workload instance each, with its own QPs/CQs, driven by the
 * controller through prepare -> connect -> start -> wait -> destroy. Several
 * arms run at once (the same workload in different recovery modes). The
 * registry lock only guards the table; a running arm owns its thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include <unistd.h>
#include "agent.h"
#include "../workloads/wl.h"
#include "../lib/clock.h"
#include "../lib/hwc.h"

enum arm_state { ARM_PREPARED, ARM_CONNECTED, ARM_RUNNING, ARM_DONE };
static const char *const state_names[] = { "prepared", "connected", "running", "done" };

struct arm {
	struct agent *agent;
	unsigned int id;
	unsigned int owner;	/* the control connection that made it: its lease */
	const struct wl_ops *wl;
	struct wl_ctx ctx;
	enum arm_state state;
	volatile int stop;
	int gone;		/* its objects destroyed, its thread joined (a nic reset) */
	pthread_t thread;
	int rc;
	json_t *result;
};

static struct arm **slot_of(struct agent *a, unsigned int id)
{
	int i;

	for (i = 0; i < AGENT_MAX_ARMS; i++)
		if (a->arms[i] && a->arms[i]->id == id)
			return &a->arms[i];
	return NULL;
}

static int arm_id_arg(json_t *args, unsigned int *id, char *err, size_t errlen)
{
	json_int_t v;

	if (json_unpack(args, "{s:I}", "arm", &v) || v < 0 || v > 0xffffffffLL) {
		snprintf(err, errlen, "missing or invalid 'arm'");
		return -EINVAL;
	}
	*id = (unsigned int)v;
	return 0;
}

/* look an arm up under the lock; returns it locked-in-table (caller unlocks) */
static struct arm *lookup(struct agent *a, json_t *args, char *err, size_t errlen)
{
	struct arm **s;
	unsigned int id;

	if (arm_id_arg(args, &id, err, errlen))
		return NULL;
	s = slot_of(a, id);
	if (!s)
		snprintf(err, errlen, "no arm %u", id);
	return s ? *s : NULL;
}

int arm_prepare(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen)
{
	const char *wname, *role;
	json_t *opts = NULL, *ep = NULL;
	struct arm *arm, **free_slot = NULL;
	int i, r;

	if (json_unpack(args, "{s:s,s:s,s?o}", "workload", &wname, "role", &role, "opts", &opts)) {
		snprintf(err, errlen, "prepare: expected {workload, role, opts}");
		return -EINVAL;
	}
	arm = calloc(1, sizeof(*arm));
	if (!arm)
		return -ENOMEM;
	arm->wl = wl_find(wname);
	if (!arm->wl) {
		snprintf(err, errlen, "unknown workload '%s'", wname);
		free(arm);
		return -EINVAL;
	}
	if (!strcmp(role, "client")) {
		arm->ctx.role = WL_CLIENT;
	} else if (!strcmp(role, "server")) {
		arm->ctx.role = WL_SERVER;
	} else if (!strcmp(role, "rank")) {
		arm->ctx.role = WL_RANK;
	} else {
		snprintf(err, errlen, "unknown role '%s' (expected client|server|rank)", role);
		free(arm);
		return -EINVAL;
	}
	arm->agent = a;
	pthread_rwlock_rdlock(&a->dev_rw);	/* a nic reset waits for the arm to be in the table */
	if (!a->dev.ctx) {
		pthread_rwlock_unlock(&a->dev_rw);
		snprintf(err, errlen, "%s is gone (a nic reset did not bring it back)", a->dev.name);
		free(arm);
		return -ENODEV;
	}
	inject_track_begin(a);	/* before any QP of the arm exists: qp 1 is its first */
	wl_ctx_init(&arm->ctx);
	arm->ctx.dev = &a->dev;
	arm->ctx.stop = &arm->stop;
	arm->owner = conn;
	r = arm->wl->prepare(&arm->ctx, opts, &ep);
	if (r) {
		pthread_rwlock_unlock(&a->dev_rw);
		snprintf(err, errlen, "%s: %s", wname, arm->ctx.err[0] ? arm->ctx.err : strerror(-r));
		wl_ctx_fini(&arm->ctx);
		free(arm);
		return r;
	}
	pthread_mutex_lock(&a->lock);
	for (i = 0; i < AGENT_MAX_ARMS && !free_slot; i++)
		if (!a->arms[i])
			free_slot = &a->arms[i];
	if (free_slot) {
		arm->id = ++a->next_id;
		*free_slot = arm;
	}
	pthread_mutex_unlock(&a->lock);
	pthread_rwlock_unlock(&a->dev_rw);
	if (!free_slot) {
		snprintf(err, errlen, "too many arms (%d)", AGENT_MAX_ARMS);
		arm->wl->destroy(&arm->ctx);
		wl_ctx_fini(&arm->ctx);
		json_decref(ep);
		free(arm);
		return -ENOSPC;
	}
	*result = json_pack("{s:I,s:o}", "arm", (json_int_t)arm->id, "ep", ep);
	return 0;
}

int arm_connect(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen)
{
	(void)conn;
	json_t *peer;
	struct arm *arm;
	int r;

	if (json_unpack(args, "{s:o}", "peer", &peer)) {
		snprintf(err, errlen, "connect: missing 'peer'");
		return -EINVAL;
	}
	pthread_mutex_lock(&a->lock);
	arm = lookup(a, args, err, errlen);
	if (!arm) {
		r = -ENOENT;
	} else if (arm->state != ARM_PREPARED) {
		snprintf(err, errlen, "arm %u is %s, not prepared", arm->id, state_names[arm->state]);
		r = -EBUSY;
	} else {
		r = arm->wl->connect(&arm->ctx, peer);
		if (r)
			snprintf(err, errlen, "%s", arm->ctx.err);
		else
			arm->state = ARM_CONNECTED;
	}
	pthread_mutex_unlock(&a->lock);
	if (!r)
		*result = json_object();
	return r;
}

/* the device's hw counters and the injector's hook counts on its netdev, in one read */
static json_t *counters_now(struct agent *a)
{
	json_t *res = NULL;
	char err[64];

	if (hw_counters(a, 0, NULL, &res, err, sizeof(err)))
		return json_object();
	return res;
}

/*
 * Each run is wrapped in what it cost: the arm thread's CPU time, the
 * device's hw counter deltas and those of the injector's hooks on its
 * netdev, packets and resent packets (per device: arms running at the same
 * time on one device share them).
 */
static void *arm_thread(void *p)
{
	struct arm *arm = p;
	struct timespec c0, c1;
	json_t *res = NULL, *h0, *h1, *ij;
	int r;

	h0 = counters_now(arm->agent);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	r = arm->wl->run(&arm->ctx, &res);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	wl_interval_flush(&arm->ctx, rtb_now_ns());
	h1 = counters_now(arm->agent);
	if (!r && res) {
		json_object_set_new(res, "hw_counters_delta",
				    hwc_delta(json_object_get(h0, "hw_counters"),
					      json_object_get(h1, "hw_counters")));
		ij = hwc_hooks_delta(json_object_get(h0, "injector"), json_object_get(h1, "injector"));
		if (ij)
			json_object_set_new(res, "injector_delta", ij);
		json_object_set_new(res, "cpu_ns",
				    json_integer((json_int_t)((c1.tv_sec - c0.tv_sec) * 1000000000LL +
							      (c1.tv_nsec - c0.tv_nsec))));
	}
	json_decref(h0);
	json_decref(h1);
	arm->result = res;
	arm->rc = r;
	__atomic_store_n(&arm->state, ARM_DONE, __ATOMIC_RELEASE);
	return NULL;
}

int arm_start(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen)
{
	(void)conn;
	struct arm *arm;
	int r;

	pthread_mutex_lock(&a->lock);
	arm = lookup(a, args, err, errlen);
	if (!arm) {
		r = -ENOENT;
	} else if (arm->state != ARM_CONNECTED) {
		snprintf(err, errlen, "arm %u is %s, not connected", arm->id, state_names[arm->state]);
		r = -EBUSY;
	} else {
		arm->state = ARM_RUNNING;
		r = -pthread_create(&arm->thread, NULL, arm_thread, arm);
		if (r) {
			arm->state = ARM_CONNECTED;
			snprintf(err, errlen, "arm %u: cannot start thread: %s", arm->id, strerror(-r));
		}
	}
	pthread_mutex_unlock(&a->lock);
	if (!r)
		*result = json_object();
	return r;
}

int arm_wait(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen)
{
	(void)conn;
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	json_int_t timeout_ms = 0;
	int waited = 0, r;
	enum arm_state st;
	struct arm *arm;

	json_unpack(args, "{s?I}", "timeout_ms", &timeout_ms);
	for (;;) {
		pthread_mutex_lock(&a->lock);
		arm = lookup(a, args, err, errlen);
		if (!arm) {
			pthread_mutex_unlock(&a->lock);
			return -ENOENT;
		}
		/* one read: the arm's thread may finish between two */
		st = __atomic_load_n(&arm->state, __ATOMIC_ACQUIRE);
		if (st == ARM_DONE) {
			r = arm->rc;
			if (r)
				snprintf(err, errlen, "arm %u: %s", arm->id,
					 arm->ctx.err[0] ? arm->ctx.err : strerror(-r));
			else
				*result = json_pack("{s:b,s:O,s:o}", "done", 1, "result", arm->result,
						    "intervals", wl_intervals_take(&arm->ctx));
			pthread_mutex_unlock(&a->lock);
			return r;
		}
		if (st != ARM_RUNNING) {
			snprintf(err, errlen, "arm %u is %s, not started", arm->id, state_names[st]);
			pthread_mutex_unlock(&a->lock);
			return -EINVAL;
		}
		/* the agent shutting down: the answer now, not at the timeout */
		if (waited >= timeout_ms || __atomic_load_n(&a->closing, __ATOMIC_ACQUIRE)) {
			*result = json_pack("{s:b,s:I,s:o}", "done", 0, "progress",
					    (json_int_t)__atomic_load_n(&arm->ctx.progress,
									__ATOMIC_RELAXED),
					    "intervals", wl_intervals_take(&arm->ctx));
			pthread_mutex_unlock(&a->lock);
			return 0;
		}
		pthread_mutex_unlock(&a->lock);
		nanosleep(&ts, NULL);
		waited += 5;
	}
}

/* ask a running arm to stop; its wait then reports "stopped" */
int arm_stop(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
	     size_t errlen)
{
	struct arm *arm;

	(void)conn;
	pthread_mutex_lock(&a->lock);
	arm = lookup(a, args, err, errlen);
	if (arm)
		arm->stop = 1;
	pthread_mutex_unlock(&a->lock);
	if (!arm)
		return -ENOENT;
	*result = json_object();
	return 0;
}

static void arm_free(struct arm *arm)
{
	if (!arm->gone && (arm->state == ARM_RUNNING || arm->state == ARM_DONE)) {
		arm->stop = 1;
		pthread_join(arm->thread, NULL);
	}
	if (!arm->gone)
		arm->wl->destroy(&arm->ctx);
	wl_ctx_fini(&arm->ctx);
	json_decref(arm->result);
	free(arm);
}

int arm_destroy(struct agent *a, unsigned int conn, json_t *args, json_t **result, char *err,
		 size_t errlen)
{
	(void)conn;
	struct arm **s, *arm;
	unsigned int id;

	if (arm_id_arg(args, &id, err, errlen))
		return -EINVAL;
	pthread_mutex_lock(&a->lock);
	s = slot_of(a, id);
	arm = s ? *s : NULL;
	if (s)
		*s = NULL;
	pthread_mutex_unlock(&a->lock);
	if (!arm) {
		snprintf(err, errlen, "no arm %u", id);
		return -ENOENT;
	}
	arm_free(arm);
	*result = json_object();
	return 0;
}

/* conn 0: every arm; else the arms of one control connection (its lease ended) */
int arm_release(struct agent *a, unsigned int conn)
{
	struct arm *arm;
	int i, n = 0;

	for (i = 0; i < AGENT_MAX_ARMS; i++) {
		pthread_mutex_lock(&a->lock);
		arm = a->arms[i];
		if (arm && conn && arm->owner != conn)
			arm = NULL;
		if (arm)
			a->arms[i] = NULL;
		pthread_mutex_unlock(&a->lock);
		if (arm) {
			arm_free(arm);
			n++;
		}
	}
	return n;
}

int arm_reset_all(struct agent *a, const char *why)
{
	int i, n = 0;

	/* under the table's lock: a wait or destroy of one of them waits (the
	 * arm threads never take it) */
	pthread_mutex_lock(&a->lock);
	for (i = 0; i < AGENT_MAX_ARMS; i++) {
		struct arm *arm = a->arms[i];
		int ran, finished;

		if (!arm || arm->gone)
			continue;
		finished = __atomic_load_n(&arm->state, __ATOMIC_ACQUIRE) == ARM_DONE;
		ran = finished || arm->state == ARM_RUNNING;
		if (ran) {
			arm->stop = 1;
			pthread_join(arm->thread, NULL);
		}
		arm->wl->destroy(&arm->ctx);
		arm->gone = 1;
		/* one that had finished keeps its result: only what was cut short fails */
		if (!finished) {
			json_decref(arm->result);
			arm->result = NULL;
			arm->rc = -ENETRESET;
			snprintf(arm->ctx.err, sizeof(arm->ctx.err), "%s", why);
			n++;
		}
		__atomic_store_n(&arm->state, ARM_DONE, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&a->lock);
	return n;
}

json_t *arm_snapshot(struct agent *a)
{
	json_t *out = json_array();
	int i;

	pthread_mutex_lock(&a->lock);
	for (i = 0; i < AGENT_MAX_ARMS; i++) {
		struct arm *x = a->arms[i];

		if (!x)
			continue;
		json_array_append_new(out, json_pack("{s:I,s:s,s:s,s:I}", "id", (json_int_t)x->id,
						     "workload", x->wl->name, "state",
						     state_names[__atomic_load_n(&x->state,
										 __ATOMIC_ACQUIRE)],
						     "progress",
						     (json_int_t)__atomic_load_n(&x->ctx.progress,
										 __ATOMIC_RELAXED)));
	}
	pthread_mutex_unlock(&a->lock);
	return out;
}
