// SPDX-License-Identifier: MIT
/*
 * The experiment's fault rules, through each node's agent (its "inject"
 * verb runs that node's rdma-inject) or, on per-node VMs, the switch's
 * agent for the switch ports: add one leased to our connection, ask for
 * counters, remove.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/exp/inject.h"

/* one fault rule on one node's agent, leased to that connection; its id */
int inject_fault_add(struct agentc *c, const struct prof_fault *f, const char *dev, char *err,
		     size_t errlen)
{
	json_t *args = json_array(), *res = NULL;
	char buf[256], *tok, *save, t[32];
	int id = -1, rc;

	json_array_append_new(args, json_string("-j"));
	json_array_append_new(args, json_string("add"));
	json_array_append_new(args, json_string("dev"));
	json_array_append_new(args, json_string(dev));
	json_array_append_new(args, json_string(f->egress ? "egress" : "ingress"));
	snprintf(buf, sizeof(buf), "%s", f->rule);
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
		json_array_append_new(args, json_string(tok));
	if (f->start_ns) {
		snprintf(t, sizeof(t), "%lluus", (unsigned long long)(f->start_ns / 1000));
		json_array_append_new(args, json_string("after"));
		json_array_append_new(args, json_string(t));
	}
	if (f->duration_ns) {
		snprintf(t, sizeof(t), "%lluus", (unsigned long long)(f->duration_ns / 1000));
		json_array_append_new(args, json_string("for"));
		json_array_append_new(args, json_string(t));
	}
	rc = inject_call(c, json_pack("{s:o,s:b}", "args", args, "lease", 1), &res, err, errlen);
	if (!rc)
		id = (int)json_integer_value(json_object_get(json_object_get(res, "json"), "id"));
	json_decref(res);
	if (!rc && id <= 0)
		snprintf(err, errlen, "%s: rdma-inject add %s: no rule in its answer", c->where, dev);
	return rc ? rc : id <= 0 ? -EPROTO : id;
}

int inject_call(struct agentc *c, json_t *args, json_t **res, char *err, size_t errlen)
{
	const char *e;

	*res = NULL;
	if (agentc_call(c, "inject", args, res, 90000, err, errlen))
		return -EIO;
	if (!json_integer_value(json_object_get(*res, "rc")))
		return 0;
	/* the agent says how rdma-inject ended when it printed nothing */
	e = json_string_value(json_object_get(*res, "stderr")) ?: "";
	snprintf(err, errlen, "%s: rdma-inject: %.*s", c->where, (int)strcspn(e, "\n"), e);
	json_decref(*res);
	*res = NULL;
	return -EIO;
}

/* rdma-inject on one agent, -j, its JSON output (new reference) or NULL */
json_t *inject_json(struct agentc *c, const char *verb, const char *arg)
{
	json_t *out = NULL;

	inject_json_all(&c, 1, verb, arg ? &arg : NULL, &out);
	return out;
}

void inject_json_all(struct agentc *const *cs, int n, const char *verb, const char *const *arg,
		     json_t **out)
{
	json_t **args = calloc((size_t)(n > 0 ? n : 1), sizeof(*args)), **res;
	char err[256];
	int i;

	res = calloc((size_t)(n > 0 ? n : 1), sizeof(*res));
	for (i = 0; i < n; i++)
		if (out)
			out[i] = NULL;
	if (!args || !res) {
		free(args);
		free(res);
		return;
	}
	for (i = 0; i < n; i++)
		if (!arg || arg[i])
			args[i] = json_pack("{s:[sss*]}", "args", "-j", verb, arg ? arg[i] : NULL);
	agentc_call_all(cs, n, "inject", args, res, 90000, err, sizeof(err));
	for (i = 0; i < n; i++) {
		if (out && res[i] && !json_integer_value(json_object_get(res[i], "rc")))
			out[i] = json_loads(json_string_value(json_object_get(res[i], "stdout")), 0,
					    NULL);
		json_decref(res[i]);
	}
	free(args);
	free(res);
}

/* the node's CLOCK_MONOTONIC (interval timestamps are in it) */
json_int_t inject_node_now(struct agentc *c)
{
	json_t *res = NULL;
	json_int_t t = 0;
	char err[256];

	if (!agentc_call(c, "hello", NULL, &res, 10000, err, sizeof(err)))
		t = json_integer_value(json_object_get(res, "now_ns"));
	json_decref(res);
	return t;
}

