/* SPDX-License-Identifier: MIT */
/*
 * Workload plug-ins (fio's ioengine model): every workload is one ops table.
 * The agent drives an *arm* through prepare -> connect -> run -> destroy;
 * run() executes on the arm's own thread and must watch ctx->stop.
 */
#ifndef RTB_WL_H
#define RTB_WL_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>
#include "../lib/clock.h"
#include "../lib/hist.h"
#include "../lib/opt.h"
#include "verbs.h"

enum wl_role { WL_CLIENT, WL_SERVER, WL_RANK };

struct wl_ctx {
	const struct vb_dev *dev;
	enum wl_role role;
	volatile int *stop;
	void *priv;		/* the workload's own state */
	uint64_t progress;	/* operations done so far: bumped by run(), read by the agent */
	char err[256];		/* why the last call failed */
	/* live intervals: run() records into ival; every WL_INTERVAL_NS it
	 * publishes the interval (as hist JSON) to `pending`, which the agent's
	 * control thread takes. Only the run thread touches ival. */
	struct hist *ival;
	uint64_t ival_start;
	pthread_mutex_t ival_lock;
	json_t *pending;	/* [{"t_ns": end, "lat_ns": hist}], under ival_lock */
	/* lossy modes: pieces lost and expected so far, published with every
	 * interval (loss over time) when expected is non-zero */
	uint64_t ival_lost, ival_expected;
	/* train: the latest held-out accuracy and loss, published with every
	 * interval once set (eval_loss > 0) */
	double ival_accuracy, ival_eval_loss;
	int64_t ival_retrans0;	/* the device's retransmission counters at the first sample */
	uint64_t ival_dropped;
};

/* what every workload stamps with: the one clock (= bpf_ktime_get_ns) */
static inline uint64_t wl_now_ns(void)
{
	return rtb_now_ns();
}

#define WL_INTERVAL_NS 250000000ULL
#define WL_MAX_PENDING 64

/* run thread: one latency sample at time now (both ns) */
void wl_record(struct wl_ctx *c, uint64_t now, uint64_t v);
/* run thread, at the end: publish what the current interval holds */
void wl_interval_flush(struct wl_ctx *c, uint64_t now);
/* control thread: the published intervals (new reference, maybe empty) */
json_t *wl_intervals_take(struct wl_ctx *c);
void wl_ctx_init(struct wl_ctx *c);
void wl_ctx_fini(struct wl_ctx *c);

struct wl_ops {
	const char *name;
	const struct opt *opts;
	/* allocate PD/CQ/QP/MR; *ep = what the peer needs to connect */
	int (*prepare)(struct wl_ctx *c, const json_t *opts, json_t **ep);
	int (*connect)(struct wl_ctx *c, const json_t *peer_ep);
	/* *result: workload-specific figures (histograms as hist_to_json) */
	int (*run)(struct wl_ctx *c, json_t **result);
	void (*destroy)(struct wl_ctx *c);
};

const struct wl_ops *wl_find(const char *name);
/* i-th workload, NULL past the end */
const struct wl_ops *wl_at(int i);


#endif
