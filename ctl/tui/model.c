// SPDX-License-Identifier: MIT
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ctl/tui/model.h"
#include "lib/boot.h"

void model_init(struct model *m, const struct profile *p, enum measure measure)
{
	int a;

	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	m->p = p;
	m->measure = measure;
	m->narms = p->narms;
	m->cur_arm = -1;
	m->t_start = rtb_now_s();
	for (a = 0; a < p->narms; a++) {
		struct model_arm *x = &m->arm[a];

		snprintf(x->name, sizeof(x->name), "%s", p->arm[a].name);
		snprintf(x->mode, sizeof(x->mode), "%s", p->arm[a].mode);
		arm_acc_init(&x->acc, x->name, x->mode);
		x->last_lost = strcmp(x->mode, "rc") ? 0 : -1;
		x->tta_ns = -1;
		x->tools = json_object();
	}
	snprintf(m->status, sizeof(m->status), "starting");
	snprintf(m->name, sizeof(m->name), "%s", p->name);
	m->pid = (int)getpid();
}

void model_fini(struct model *m)
{
	int a;

	/* every slot: an attached viewer's model may hold more than it shows */
	for (a = 0; a < PROF_MAX_ARMS; a++) {
		arm_acc_fini(&m->arm[a].acc);
		json_decref(m->arm[a].tools);
		m->arm[a].tools = NULL;
	}
	pthread_mutex_destroy(&m->lock);
}

void model_event(struct model *m, const char *fmt, ...)
{
	va_list ap;
	char *e;
	int o;

	pthread_mutex_lock(&m->lock);
	e = m->events[m->nevents % MODEL_EVENTS];
	o = snprintf(e, 160, "%6.1fs ", rtb_now_s() - m->t_start);
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
		if (json_object_get(e, "eval_loss")) {	/* train: the latest evaluation */
			x->accuracy = json_real_value(json_object_get(e, "accuracy"));
			x->loss = json_real_value(json_object_get(e, "eval_loss"));
		}
		if (json_object_get(e, "pieces_expected")) {
			uint64_t l = (uint64_t)json_integer_value(json_object_get(e, "lost_pieces"));
			uint64_t n = (uint64_t)json_integer_value(json_object_get(e, "pieces_expected"));

			x->last_lost = n > x->live_exp0 ?
					       (double)(l - x->live_lost0) / (double)(n - x->live_exp0) : 0;
			x->live_lost0 = l;
			x->live_exp0 = n;
			if (x->nlspark == MODEL_SPARK) {
				memmove(x->lspark, x->lspark + 1, (MODEL_SPARK - 1) * sizeof(double));
				x->nlspark--;
			}
			x->lspark[x->nlspark++] = x->last_lost;
		}
	}
	pthread_mutex_unlock(&m->lock);
}

void model_arm_done(struct model *m, int a, const json_t *results, uint64_t iters)
{
	const json_t *r0 = json_array_get(results, 0);

	pthread_mutex_lock(&m->lock);
	/* the report's accumulation, for train arms too (step times, loss, error) */
	arm_acc_add(&m->arm[a].acc, results, iters);
	if (json_object_get(r0, "final_accuracy")) {	/* train */
		m->arm[a].accuracy = json_real_value(json_object_get(r0, "final_accuracy"));
		m->arm[a].loss = json_real_value(json_object_get(r0, "final_loss"));
		m->arm[a].tta_ns = json_is_integer(json_object_get(r0, "tta_ns")) ?
					   json_integer_value(json_object_get(r0, "tta_ns")) : -1;
	}
	if (m->arm[a].tools)
		exp_exec_tools(m->arm[a].tools, results);
	m->arm[a].running = 0;
	pthread_mutex_unlock(&m->lock);
}

int model_rule_parse(const char *text, struct inj_rule *r)
{
	char buf[256], *argv[64], *tok, *save, err[128];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	for (tok = strtok_r(buf, " \t", &save); tok && argc < 63; tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	inj_rule_init(r);
	return inj_rule_parse(r, argc, argv, 0, err, sizeof(err)) ? -EINVAL : 0;
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
		double prev_t = 0, now = rtb_now_s();

		if (n == MODEL_RULES)
			break;
		for (j = 0; j < m->nrules; j++)
			if (m->rule[j].id == id) {
				prev_m = m->rule[j].matched;
				prev_d = m->rule[j].dropped;
				prev_t = m->rule[j].t_poll;
			}
		x = &m->rule[n++];
		x->id = id;
		x->enabled = json_is_true(json_object_get(r, "enabled"));
		snprintf(x->dev, sizeof(x->dev), "%s", json_string_value(json_object_get(r, "dev")));
		snprintf(x->dir, sizeof(x->dir), "%s", json_string_value(json_object_get(r, "dir")));
		snprintf(x->action, sizeof(x->action), "%s",
			 json_string_value(json_object_get(r, "action")));
		snprintf(x->rule, sizeof(x->rule), "%s", json_string_value(json_object_get(r, "rule")));
		x->parsed_ok = !model_rule_parse(x->rule, &x->parsed);
		x->matched = (uint64_t)json_integer_value(json_object_get(c, "matched"));
		x->dropped = (uint64_t)json_integer_value(json_object_get(c, "dropped"));
		x->delayed = (uint64_t)json_integer_value(json_object_get(c, "delayed"));
		x->drop_rate = x->matched > prev_m ? (double)(x->dropped - prev_d) /
							     (double)(x->matched - prev_m) : 0;
		/* rates over the last poll (none on a rule's first: no interval yet) */
		x->matched_ps = prev_t > 0 && now > prev_t && x->matched >= prev_m ?
					(double)(x->matched - prev_m) / (now - prev_t) : 0;
		x->dropped_ps = prev_t > 0 && now > prev_t && x->dropped >= prev_d ?
					(double)(x->dropped - prev_d) / (now - prev_t) : 0;
		x->t_poll = now;
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
	el = rtb_now_s() - m->t_start;
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

json_t *model_to_json(struct model *m)
{
	json_t *o, *arms = json_array(), *rules = json_array(), *nodes = json_array(), *ev = json_array();
	int a, i;

	pthread_mutex_lock(&m->lock);
	for (a = 0; a < m->narms; a++) {
		struct model_arm *x = &m->arm[a];
		json_t *sp = json_array(), *lsp = json_array();

		for (i = 0; i < x->nspark; i++)
			json_array_append_new(sp, json_real(x->spark[i]));
		for (i = 0; i < x->nlspark; i++)
			json_array_append_new(lsp, json_real(x->lspark[i]));
		json_array_append_new(
			arms, json_pack("{s:s,s:s,s:b,s:I,s:f,s:f,s:f,s:f,s:I,s:I,s:o,s:f,s:f,s:I,s:o}",
					"name", x->name, "mode", x->mode, "running", x->running,
					"live_done", (json_int_t)x->live_done, "last_p50_ms",
					x->last_p50_ms, "last_p99_ms", x->last_p99_ms, "last_max_ms",
					x->last_max_ms, "last_lost", x->last_lost, "live_lost0",
					(json_int_t)x->live_lost0, "live_exp0", (json_int_t)x->live_exp0,
					"spark", sp, "accuracy", x->accuracy, "loss", x->loss, "tta_ns",
					(json_int_t)x->tta_ns, "acc", arm_acc_to_json(&x->acc)));
		json_object_set_new(json_array_get(arms, json_array_size(arms) - 1), "lspark", lsp);
		json_object_set_new(json_array_get(arms, json_array_size(arms) - 1), "tools",
				    x->tools ? json_deep_copy(x->tools) : json_object());
	}
	for (i = 0; i < m->nrules; i++) {
		struct model_rule *r = &m->rule[i];

		json_array_append_new(rules, json_pack("{s:i,s:b,s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:f}",
						       "id", r->id, "enabled", r->enabled, "dev", r->dev,
						       "dir", r->dir, "action", r->action, "rule",
						       r->rule, "matched", (json_int_t)r->matched,
						       "dropped", (json_int_t)r->dropped, "delayed",
						       (json_int_t)r->delayed, "dropped_prev",
						       (json_int_t)r->dropped_prev, "drop_rate",
						       r->drop_rate));
		json_object_update_new(json_array_get(rules, json_array_size(rules) - 1),
				       json_pack("{s:f,s:f}", "matched_ps", r->matched_ps,
						 "dropped_ps", r->dropped_ps));
	}
	for (i = 0; i < m->nnodes; i++)
		json_array_append_new(nodes, json_pack("{s:s,s:s,s:s,s:b}", "name", m->node[i].name,
						       "dev", m->node[i].dev, "state",
						       m->node[i].state, "agent_ok",
						       m->node[i].agent_ok));
	for (i = m->nevents > MODEL_EVENTS ? m->nevents - MODEL_EVENTS : 0; i < m->nevents; i++)
		json_array_append_new(ev, json_string(m->events[i % MODEL_EVENTS]));
	o = json_pack("{s:i,s:i,s:s,s:s,s:s,s:b,s:b,s:i,s:I,s:I,s:I,s:f,s:o,s:o,s:o,s:o,s:i}",
		      "schema_version", 2, "pid", m->pid, "name", m->name, "status", m->status,
		      "measure", measure_name(m->measure), "paused", m->paused, "done", m->done,
		      "cur_arm", m->cur_arm, "round", (json_int_t)m->round, "rounds",
		      (json_int_t)m->rounds, "iters_per_round", (json_int_t)m->iters_per_round,
		      "elapsed_s", rtb_now_s() - m->t_start,
		      "arms", arms, "rules", rules, "nodes", nodes, "events", ev, "nevents",
		      m->nevents);
	pthread_mutex_unlock(&m->lock);
	return o;
}

static void str_of(char *dst, size_t len, const json_t *o, const char *k)
{
	snprintf(dst, len, "%s", json_string_value(json_object_get(o, k)) ?: "");
}

static double num_of(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
}

/* one published arm into a */
static void arm_from_json(struct model_arm *a, const json_t *x)
{
	const json_t *e;
	size_t k;

	str_of(a->name, sizeof(a->name), x, "name");
	str_of(a->mode, sizeof(a->mode), x, "mode");
	arm_acc_fini(&a->acc);
	arm_acc_init(&a->acc, a->name, a->mode);
	json_decref(a->tools);
	a->tools = json_is_object(json_object_get(x, "tools")) ?
			   json_deep_copy(json_object_get(x, "tools")) : json_object();
	a->running = json_is_true(json_object_get(x, "running"));
	a->live_done = (uint64_t)num_of(x, "live_done");
	a->last_p50_ms = num_of(x, "last_p50_ms");
	a->last_p99_ms = num_of(x, "last_p99_ms");
	a->last_max_ms = num_of(x, "last_max_ms");
	a->last_lost = num_of(x, "last_lost");
	a->accuracy = num_of(x, "accuracy");
	a->loss = num_of(x, "loss");
	a->tta_ns = (int64_t)num_of(x, "tta_ns");
	a->nspark = 0;
	json_array_foreach(json_object_get(x, "spark"), k, e)
		if (a->nspark < MODEL_SPARK)
			a->spark[a->nspark++] = json_number_value(e);
	a->nlspark = 0;
	json_array_foreach(json_object_get(x, "lspark"), k, e)
		if (a->nlspark < MODEL_SPARK)
			a->lspark[a->nlspark++] = json_number_value(e);
	a->live_lost0 = (uint64_t)num_of(x, "live_lost0");
	a->live_exp0 = (uint64_t)num_of(x, "live_exp0");
	if (arm_acc_from_json(&a->acc, json_object_get(x, "acc")))
		arm_acc_init(&a->acc, a->name, a->mode);
}

int model_from_json(struct model *m, const json_t *j)
{
	const json_t *x;
	size_t i;

	if (json_integer_value(json_object_get(j, "schema_version")) != 2)
		return -EPROTO;
	pthread_mutex_lock(&m->lock);
	str_of(m->name, sizeof(m->name), j, "name");
	str_of(m->status, sizeof(m->status), j, "status");
	m->pid = (int)num_of(j, "pid");
	m->paused = json_is_true(json_object_get(j, "paused"));
	m->done = json_is_true(json_object_get(j, "done"));
	m->cur_arm = (int)num_of(j, "cur_arm");
	m->round = (uint64_t)num_of(j, "round");
	m->rounds = (uint64_t)num_of(j, "rounds");
	m->iters_per_round = (uint64_t)num_of(j, "iters_per_round");
	m->elapsed = num_of(j, "elapsed_s");
	{
		const char *ms = json_string_value(json_object_get(j, "measure")) ?: "";

		for (int q = 0; q < MEASURE_N; q++)
			if (!strcmp(measure_name((enum measure)q), ms))
				m->measure = (enum measure)q;
	}
	m->narms = 0;
	json_array_foreach(json_object_get(j, "arms"), i, x) {
		if (i >= PROF_MAX_ARMS)
			break;
		arm_from_json(&m->arm[i], x);
		m->narms = (int)i + 1;
	}
	m->nrules = 0;
	json_array_foreach(json_object_get(j, "rules"), i, x) {
		struct model_rule *r;

		if (i >= MODEL_RULES)
			break;
		r = &m->rule[i];
		r->id = (int)num_of(x, "id");
		r->enabled = json_is_true(json_object_get(x, "enabled"));
		str_of(r->dev, sizeof(r->dev), x, "dev");
		str_of(r->dir, sizeof(r->dir), x, "dir");
		str_of(r->action, sizeof(r->action), x, "action");
		str_of(r->rule, sizeof(r->rule), x, "rule");
		r->parsed_ok = !model_rule_parse(r->rule, &r->parsed);
		r->matched = (uint64_t)num_of(x, "matched");
		r->dropped = (uint64_t)num_of(x, "dropped");
		r->delayed = (uint64_t)num_of(x, "delayed");
		r->dropped_prev = (uint64_t)num_of(x, "dropped_prev");
		r->drop_rate = num_of(x, "drop_rate");
		r->matched_ps = num_of(x, "matched_ps");
		r->dropped_ps = num_of(x, "dropped_ps");
		m->nrules = (int)i + 1;
	}
	m->nnodes = 0;
	json_array_foreach(json_object_get(j, "nodes"), i, x) {
		if (i >= 16)
			break;
		str_of(m->node[i].name, sizeof(m->node[i].name), x, "name");
		str_of(m->node[i].dev, sizeof(m->node[i].dev), x, "dev");
		str_of(m->node[i].state, sizeof(m->node[i].state), x, "state");
		m->node[i].agent_ok = json_is_true(json_object_get(x, "agent_ok"));
		m->nnodes = (int)i + 1;
	}
	/* the last MODEL_EVENTS of nevents, in order */
	m->nevents = (int)num_of(j, "nevents");
	if (m->nevents < (int)json_array_size(json_object_get(j, "events")))
		m->nevents = (int)json_array_size(json_object_get(j, "events"));
	{
		int first = m->nevents - (int)json_array_size(json_object_get(j, "events"));

		json_array_foreach(json_object_get(j, "events"), i, x)
			snprintf(m->events[(first + (int)i) % MODEL_EVENTS], 160, "%s",
				 json_string_value(x) ?: "");
	}
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static void live_path(char *buf, size_t len, const char *suffix)
{
	snprintf(buf, len, "%s/live.json%s", ctl_state_dir(), suffix);
}

void model_publish(struct model *m, int force)
{
	static double last;
	char path[PATH_MAX], tmp[PATH_MAX];
	json_t *j;

	if (!force && rtb_now_s() - last < 0.5)
		return;
	last = rtb_now_s();
	live_path(path, sizeof(path), "");
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	j = model_to_json(m);
	if (j && !json_dump_file(j, tmp, JSON_COMPACT))
		rename(tmp, path);
	else
		unlink(tmp);
	json_decref(j);
}

void model_unpublish(void)
{
	char path[PATH_MAX];

	live_path(path, sizeof(path), "");
	unlink(path);
}

void model_vs_first(struct model *m)
{
	const struct hist *h0 = &m->arm[0].acc.h;
	int a;

	for (a = 1; a < m->narms; a++) {
		struct model_arm *z = &m->arm[a];
		struct boot_cmp c;

		if (z->vs_n0 == h0->count && z->vs_n == z->acc.h.count)
			continue;
		z->vs_n0 = h0->count;
		z->vs_n = z->acc.h.count;
		z->vs_ratio = 0;
		/* the report's method and seed (ctl/exp/finish.c), fewer resamples */
		if (h0->count && z->acc.h.count &&
		    !boot_compare(h0, &z->acc.h, 0.99, 0.95, 1000, 0x5eed + 1, &c)) {
			z->vs_ratio = c.ratio;
			z->vs_lo = c.ratio_lo;
			z->vs_hi = c.ratio_hi;
		}
	}
}

json_t *model_arm_json(const struct model *m, int a)
{
	const struct model_arm *z = &m->arm[a];
	int done = z->acc.h.count > 0;
	json_t *o = done ? arm_acc_summary(&z->acc) : json_pack("{s:s}", "mode", z->mode);
	json_t *live = json_object();

	json_object_set_new(live, "state", json_string(z->running ? "running" : done ? "waiting" :
						      "not yet"));
	json_object_set_new(live, "done", json_integer((json_int_t)(z->accuracy > 0 && !done ?
				    z->live_done : z->acc.iters + (z->running ? z->live_done : 0))));
	if (z->nspark) {
		json_object_set_new(live, "p50_ns", json_real(z->last_p50_ms * 1e6));
		json_object_set_new(live, "p99_ns", json_real(z->last_p99_ms * 1e6));
		if (z->last_lost >= 0)
			json_object_set_new(live, "lost_fraction", json_real(z->last_lost));
	}
	if (z->accuracy > 0) {
		json_object_set_new(live, "accuracy", json_real(z->accuracy));
		json_object_set_new(live, "eval_loss", json_real(z->loss));
	}
	if (done)	/* null: the target was never reached */
		json_object_set_new(live, "tta_ns", z->tta_ns >= 0 ? json_integer(z->tta_ns) :
				    json_null());
	if (a > 0 && z->vs_ratio > 0) {
		char v[48];

		snprintf(v, sizeof(v), "%.2f (%.2f-%.2f)", z->vs_ratio, z->vs_lo, z->vs_hi);
		json_object_set_new(live, "p99_vs_first", json_string(v));
	}
	json_object_set_new(o, "live", live);
	if (z->tools && json_object_size(z->tools)) {	/* exec: fio's, perftest's, ... */
		json_t *c = json_deep_copy(z->tools);

		json_object_update(o, c);
		json_decref(c);
	}
	return o;
}

static void obs_event(void *arg, const char *msg)
{
	model_event(arg, "%s", msg);
}

static void obs_arm_begin(void *arg, int a, uint64_t r, uint64_t rounds, uint64_t iters)
{
	model_arm_begin(arg, a, r, rounds, iters);
}

static void obs_arm_done(void *arg, int a, json_t *results, uint64_t iters)
{
	model_arm_done(arg, a, results, iters);
}

static void obs_intervals(void *arg, int idx, const json_t *iv, json_int_t progress)
{
	model_intervals(arg, idx, iv, progress);
}

static int obs_paused(void *arg)
{
	return ((struct model *)arg)->paused;
}

void model_obs(struct model *m, struct exp_obs *o)
{
	o->arg = m;
	o->event = obs_event;
	o->arm_begin = obs_arm_begin;
	o->arm_done = obs_arm_done;
	o->intervals = obs_intervals;
	o->paused = obs_paused;
}
