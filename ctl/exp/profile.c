// SPDX-License-Identifier: MIT
/*
 * A profile, the data the experiment engine runs (profile.h): made empty,
 * given arms, freed, written into report.json. Loading and checking one
 * from YAML is load.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctl/wl/tool.h"
#include "ctl/exp/profile.h"

const char *const prof_event_names[] = { "", "crash", "freeze", "reboot", "port-down", "nic-reset",
					 NULL };

void profile_init(struct profile *p, const char *workload)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->backend, sizeof(p->backend), "auto");
	p->topology = -1;
	p->sw = -1;
	snprintf(p->workload, sizeof(p->workload), "%s", workload ? workload : "");
	snprintf(p->name, sizeof(p->name), "%s", workload ? workload : "");
	p->iters = 20;
	p->rounds = 1;
	p->warmup = 2;
	p->sets = json_array();
	p->wopts = json_object();
}

int profile_add_arm(struct profile *p, const char *name, const char *mode, json_t *opts)
{
	struct prof_arm *a = &p->arm[p->narms];

	if (p->narms == PROF_MAX_ARMS)
		return -E2BIG;
	snprintf(a->name, sizeof(a->name), "%s", name);
	snprintf(a->mode, sizeof(a->mode), "%s", mode);
	a->opts = opts ? opts : json_object();
	p->narms++;
	return 0;
}

void profile_free(struct profile *p)
{
	int i;

	for (i = 0; i < PROF_MAX_ARMS; i++)
		json_decref(p->arm[i].opts);
	for (i = 0; i < PROF_MAX_ROLES; i++)
		json_decref(p->role[i].env);
	json_decref(p->wopts);
	json_decref(p->sets);
	free(p->text);
	if (p->ssh.config_arg[0])
		close(p->ssh.config_fd);
	memset(p, 0, sizeof(*p));
}

json_t *profile_to_json(const struct profile *p)
{
	json_t *arms = json_array(), *faults = json_array();
	int i;

	for (i = 0; i < p->narms; i++)
		json_array_append_new(arms, json_pack("{s:s,s:s,s:O,s:b}", "name", p->arm[i].name,
						      "mode", p->arm[i].mode, "options", p->arm[i].opts,
						      "wrong_expected", p->arm[i].wrong_expected));
	for (i = 0; i < p->nfaults; i++) {
		const struct prof_fault *f = &p->fault[i];

		json_array_append_new(faults,
				      json_pack("{s:s,s:s,s:s,s:I,s:s,s:s,s:I,s:I}", "name", f->name,
						"rule", f->event ? "" : f->rule, "event",
						prof_event_names[f->event], "nodes_mask", (json_int_t)f->nodes, "dir",
						f->egress ? "egress" : "ingress", "port",
						f->sw ? "switch" : "nic", "start_ns",
						(json_int_t)f->start_ns, "duration_ns",
						(json_int_t)f->duration_ns));
	}
	json_t *hosts = json_array(), *expect = json_array(), *roles = json_array();
	static const char *const ready[] = { "none", "port", "line", "after" };

	for (i = 0; i < p->nroles; i++) {
		const struct prof_role *r = &p->role[i];

		json_array_append_new(roles,
				      json_pack("{s:s,s:I,s:s,s:O,s:s,s:i,s:s,s:I,s:I,s:I,s:b}",
						"name", r->name, "nodes_mask", (json_int_t)r->nodes,
						"cmd", r->cmd, "env", r->env, "ready",
						ready[r->ready], "ready_port", r->ready_port,
						"ready_line", r->ready_line, "ready_after_ns",
						(json_int_t)r->ready_after_ns, "ready_timeout_ns",
						(json_int_t)r->ready_timeout_ns, "timeout_ns",
						(json_int_t)r->timeout_ns, "service", r->service));
		if (r->parse)
			json_object_set_new(json_array_get(roles, json_array_size(roles) - 1),
					    "parse", json_string(tool_name(r->parse)));
		json_object_set_new(json_array_get(roles, json_array_size(roles) - 1), "on_timeout",
				    json_string(r->on_timeout == PR_OT_REBOOT ? "reboot" :
						r->on_timeout == PR_OT_KEEP ? "keep" : "auto"));
	}

	for (i = 0; i < p->nexpect; i++)
		json_array_append_new(expect, json_string(p->expect[i].text));

	for (i = 0; i < p->nhosts; i++)
		json_array_append_new(hosts, json_pack("{s:s,s:s,s:i,s:s,s:s}", "name", p->host[i].name,
						       "addr", p->host[i].addr, "port",
						       p->host[i].port, "nic", p->host[i].nic,
						       "switch", p->host[i].sw));
	return json_pack("{s:s,s:s,s:s,s:{s:s,s:i,s:i},s:o,s:{s:s,s:O,s:o},s:o,s:{s:I,s:I,s:I},s:o,s:o,s:O,"
			 "s:s}",
			 "file", p->file, "name", p->name, "description", p->description, "testbed",
			 "backend", p->backend, "nodes", p->nodes, "mtu", p->mtu, "hosts", hosts,
			 "workload", "type",
			 p->workload, "options", p->wopts, "roles", roles, "arms", arms, "run", "iters",
			 (json_int_t)p->iters, "rounds", (json_int_t)p->rounds, "warmup",
			 (json_int_t)p->warmup, "faults", faults, "expect", expect, "sets", p->sets, "text",
			 p->text ? p->text : "");
}
