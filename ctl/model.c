// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "ctl.h"
#include "model.h"

void model_init(struct model *m, const struct profile *p)
{
	int a;

	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	m->p = p;
	m->narms = p->narms;
	m->cur_arm = -1;
	m->t_start = ctl_now();
	for (a = 0; a < p->narms; a++) {
		struct model_arm *x = &m->arm[a];

		snprintf(x->name, sizeof(x->name), "%s", p->arm[a].name);
		snprintf(x->mode, sizeof(x->mode), "%s", p->arm[a].mode);
		arm_acc_init(&x->acc, x->name, x->mode);
		x->last_lost = strcmp(x->mode, "rc") ? 0 : -1;
		x->tta_ns = -1;
	}
	snprintf(m->status, sizeof(m->status), "starting");
}

void model_fini(struct model *m)
{
	int a;

	for (a = 0; a < m->narms; a++)
		arm_acc_fini(&m->arm[a].acc);
	pthread_mutex_destroy(&m->lock);
}

void model_event(struct model *m, const char *fmt, ...)
{
	va_list ap;
	char *e;
	int o;

	pthread_mutex_lock(&m->lock);
	e = m->events[m->nevents % MODEL_EVENTS];
	o = snprintf(e, 160, "%6.1fs ", ctl_now() - m->t_start);
	va_start(ap, fmt);
	vsnprintf(e + o, (size_t)(160 - o), fmt, ap);
	va_end(ap);
	m->nevents++;
	pthread_mutex_unlock(&m->lock);
}

void model_arm_begin(struct model *m, int a, uint64_t r, uint64_t rounds, uint64_t iters)
{
	pthread_mutex_lock(&m->lock);
	if (m->cur_arm >= 0)
		m->arm[m->cur_arm].running = 0;
	m->cur_arm = a;
	m->round = r;
	m->rounds = rounds;
	m->iters_per_round = iters;
	m->arm[a].running = 1;
	m->arm[a].live_done = 0;
	m->arm[a].live_lost0 = m->arm[a].live_exp0 = 0;
	snprintf(m->status, sizeof(m->status), "round %llu/%llu: %s", (unsigned long long)r + 1,
		 (unsigned long long)rounds, m->arm[a].name);
	pthread_mutex_unlock(&m->lock);
}

void model_intervals(struct model *m, int rank, const json_t *iv, json_int_t progress)
{
	struct model_arm *x;
	const json_t *e;
	size_t k;

	pthread_mutex_lock(&m->lock);
	if (m->cur_arm < 0 || rank != 0) {	/* rank 0 speaks for the arm, as in the report */
		pthread_mutex_unlock(&m->lock);
		return;
	}
	x = &m->arm[m->cur_arm];
	x->live_done = (uint64_t)progress;
	json_array_foreach(iv, k, e) {
		struct hist h;

		if (hist_from_json(&h, json_object_get(e, "lat_ns")) || !h.count)
			continue;
		x->last_p50_ms = (double)hist_quantile(&h, 0.5) / 1e6;
		x->last_p99_ms = (double)hist_quantile(&h, 0.99) / 1e6;
		x->last_max_ms = (double)h.max / 1e6;
		if (x->nspark == MODEL_SPARK) {
			memmove(x->spark, x->spark + 1, (MODEL_SPARK - 1) * sizeof(double));
			x->nspark--;
		}
		x->spark[x->nspark++] = x->last_p50_ms;
		if (json_object_get(e, "pieces_expected")) {
			uint64_t l = (uint64_t)json_integer_value(json_object_get(e, "lost_pieces"));
			uint64_t n = (uint64_t)json_integer_value(json_object_get(e, "pieces_expected"));

			x->last_lost = n > x->live_exp0 ?
					       (double)(l - x->live_lost0) / (double)(n - x->live_exp0) : 0;
			x->live_lost0 = l;
			x->live_exp0 = n;
		}
	}
	pthread_mutex_unlock(&m->lock);
}

void model_arm_done(struct model *m, int a, json_t *results, uint64_t iters)
{
	const json_t *r0 = json_array_get(results, 0);

	pthread_mutex_lock(&m->lock);
	if (json_object_get(r0, "final_accuracy")) {	/* train */
		struct hist one;
		size_t k;
		json_t *e;

		json_array_foreach(results, k, e)
			if (!hist_from_json(&one, json_object_get(e, "time_ns")))
				hist_merge(&m->arm[a].acc.h, &one);
		m->arm[a].accuracy = json_real_value(json_object_get(r0, "final_accuracy"));
		m->arm[a].loss = json_real_value(json_object_get(r0, "final_loss"));
		m->arm[a].tta_ns = json_is_integer(json_object_get(r0, "tta_ns")) ?
					   json_integer_value(json_object_get(r0, "tta_ns")) : -1;
		m->arm[a].acc.lost += (uint64_t)json_integer_value(json_object_get(r0, "lost_pieces"));
		m->arm[a].acc.expected +=
			(uint64_t)json_integer_value(json_object_get(r0, "pieces_expected"));
	} else {
		arm_acc_add(&m->arm[a].acc, results, iters);
	}
	m->arm[a].running = 0;
	pthread_mutex_unlock(&m->lock);
}

void model_rules(struct model *m, const json_t *stats)
{
	const json_t *r;
	size_t k;
	int n = 0;

	pthread_mutex_lock(&m->lock);
	json_array_foreach(json_object_get(stats, "rules"), k, r) {
		struct model_rule *x;
		const json_t *c = json_object_get(r, "counters");
		int id = (int)json_integer_value(json_object_get(r, "id")), j;
		uint64_t prev_m = 0, prev_d = 0;

		if (n == MODEL_RULES)
			break;
		for (j = 0; j < m->nrules; j++)
			if (m->rule[j].id == id) {
				prev_m = m->rule[j].matched;
				prev_d = m->rule[j].dropped;
			}
		x = &m->rule[n++];
		x->id = id;
		x->enabled = json_is_true(json_object_get(r, "enabled"));
		snprintf(x->dev, sizeof(x->dev), "%s", json_string_value(json_object_get(r, "dev")));
		snprintf(x->dir, sizeof(x->dir), "%s", json_string_value(json_object_get(r, "dir")));
		snprintf(x->action, sizeof(x->action), "%s",
			 json_string_value(json_object_get(r, "action")));
		snprintf(x->rule, sizeof(x->rule), "%s", json_string_value(json_object_get(r, "rule")));
		x->matched = (uint64_t)json_integer_value(json_object_get(c, "matched"));
		x->dropped = (uint64_t)json_integer_value(json_object_get(c, "dropped"));
		x->delayed = (uint64_t)json_integer_value(json_object_get(c, "delayed"));
		x->drop_rate = x->matched > prev_m ? (double)(x->dropped - prev_d) /
							     (double)(x->matched - prev_m) : 0;
	}
	m->nrules = n;
	pthread_mutex_unlock(&m->lock);
}

void model_status_line(struct model *m, char *buf, size_t len)
{
	struct model_arm *x;
	double el, frac, eta;
	uint64_t total, done;

	pthread_mutex_lock(&m->lock);
	el = ctl_now() - m->t_start;
	if (m->cur_arm < 0) {
		snprintf(buf, len, "%s", m->status);
		pthread_mutex_unlock(&m->lock);
		return;
	}
	x = &m->arm[m->cur_arm];
	total = m->rounds * (uint64_t)m->narms;
	done = m->round * (uint64_t)m->narms + (uint64_t)m->cur_arm;
	frac = total ? ((double)done + (m->iters_per_round ?
					     (double)x->live_done / (double)m->iters_per_round : 0)) /
			       (double)total : 0;
	eta = frac > 0.02 ? el / frac - el : -1;
	if (eta >= 0)
		snprintf(buf, len, "%s: %llu/%llu, last 250 ms p50 %.1f ms p99 %.1f ms%s, ETA %.0f s",
			 m->status, (unsigned long long)x->live_done,
			 (unsigned long long)m->iters_per_round, x->last_p50_ms, x->last_p99_ms,
			 x->last_lost > 0 ? ", losing" : "", eta);
	else
		snprintf(buf, len, "%s: %llu done", m->status, (unsigned long long)x->live_done);
	pthread_mutex_unlock(&m->lock);
}
