// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "wl.h"
#include "../lib/hwc.h"

/* every workload, once: a line here and its file (workloads/<name>.c) */
#define WORKLOADS(X) X(p2p) X(collective) X(train) X(storage) X(kv)

#define WL_EXTERN(n) extern const struct wl_ops wl_##n;
WORKLOADS(WL_EXTERN)
#define WL_ENTRY(n) &wl_##n,
static const struct wl_ops *const all[] = { WORKLOADS(WL_ENTRY) NULL };

const struct wl_ops *wl_find(const char *name)
{
	int i;

	for (i = 0; all[i]; i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

const struct wl_ops *wl_at(int i)
{
	return i >= 0 && i < (int)(sizeof(all) / sizeof(all[0])) ? all[i] : NULL;
}

void wl_ctx_init(struct wl_ctx *c)
{
	pthread_mutex_init(&c->ival_lock, NULL);
	c->pending = json_array();
}

void wl_ctx_fini(struct wl_ctx *c)
{
	free(c->ival);
	c->ival = NULL;
	json_decref(c->pending);
	c->pending = NULL;
	pthread_mutex_destroy(&c->ival_lock);
}

/* the device's retransmission events so far (lib/hwc.h), -1 when the
 * counters are not there */
static int64_t hw_retrans(const struct vb_dev *d)
{
	const char *const *names = hwc_retrans_names;
	int64_t sum = 0;
	unsigned int i;

	for (i = 0; d && names[i]; i++) {
		char path[256];
		long long v;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/hw_counters/%s",
			 d->name, d->port, names[i]);
		f = fopen(path, "r");
		if (!f)
			return -1;
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
		if (v < 0)
			return -1;
		sum += v;
	}
	return d ? sum : -1;
}

void wl_interval_flush(struct wl_ctx *c, uint64_t now)
{
	int64_t rt;
	json_t *e;

	if (!c->ival || !c->ival->count)
		return;
	e = json_pack("{s:I,s:I,s:o}", "t_start_ns", (json_int_t)c->ival_start, "t_ns",
		      (json_int_t)now, "lat_ns", hist_to_json(c->ival));
	if (e && c->ival_expected)
		json_object_update_new(e, json_pack("{s:I,s:I}", "lost_pieces",
						    (json_int_t)c->ival_lost, "pieces_expected",
						    (json_int_t)c->ival_expected));
	/* retransmissions over time: cumulative since the workload's first sample */
	if (e && c->ival_retrans0 >= 0 && (rt = hw_retrans(c->dev)) >= 0)
		json_object_set_new(e, "retrans", json_integer((json_int_t)(rt - c->ival_retrans0)));
	if (e && c->ival_eval_loss > 0)
		json_object_update_new(e, json_pack("{s:f,s:f}", "accuracy", c->ival_accuracy,
						    "eval_loss", c->ival_eval_loss));
	pthread_mutex_lock(&c->ival_lock);
	if (json_array_size(c->pending) >= WL_MAX_PENDING) {	/* nobody is listening */
		json_array_remove(c->pending, 0);
		c->ival_dropped++;
	}
	json_array_append_new(c->pending, e);
	pthread_mutex_unlock(&c->ival_lock);
	hist_init(c->ival);
	c->ival_start = now;
}

void wl_record(struct wl_ctx *c, uint64_t now, uint64_t v)
{
	if (!c->ival) {
		c->ival = malloc(sizeof(*c->ival));
		if (!c->ival)
			return;
		hist_init(c->ival);
		c->ival_start = now;
		c->ival_retrans0 = hw_retrans(c->dev);
	}
	if (now - c->ival_start >= WL_INTERVAL_NS)
		wl_interval_flush(c, now);
	hist_record(c->ival, v);
}

json_t *wl_intervals_take(struct wl_ctx *c)
{
	json_t *out;

	pthread_mutex_lock(&c->ival_lock);
	out = c->pending;
	c->pending = json_array();
	pthread_mutex_unlock(&c->ival_lock);
	return out;
}
