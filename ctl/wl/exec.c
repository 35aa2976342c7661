// SPDX-License-Identifier: MIT
/*
 * exec: the user's own programs, a command per role on the role's nodes
 * (ctl/exp/exec.c runs them; profiles/README.md, "Your own programs").
 * A round of an arm is one run of every role; the arm's times are the
 * runs' wall times. Each round's results are one per member, as the
 * agents' would be: the member's hw counter deltas, and on member 0 the
 * run's wall time and "exec", every command's outcome. A role with a
 * parse: has its tool's figures on each run, the role and the arm (the
 * worst run's: ctl/wl/tool.h).
 */
#include <string.h>
#include "ctl/wl/tool.h"
#include "ctl/wl/wl.h"

static const struct wlc_reserved reserved[] = {
	{ NULL, NULL },
};

/* a command's outcome worse than another's: a failure beats success, the
 * first failure stays */
static int failed(const json_t *run)
{
	return jr_u64(run, "exit") != 0 ||
	       (strcmp(jr_str(run, "status"), "exited") && strcmp(jr_str(run, "status"), "stopped"));
}

/* the roles of the arm: each one's runs over every round, its first
 * failing status (else 0) and its longest wall time */
static json_t *roles_of(const json_t *rounds, json_int_t *arm_exit)
{
	json_t *roles = json_array(), *res, *run;
	size_t r, k, i;

	*arm_exit = 0;
	json_array_foreach(rounds, r, res) {
		json_array_foreach(json_object_get(json_array_get(res, 0), "exec"), k, run) {
			const char *name = jr_str(run, "role");
			json_t *role = NULL;

			for (i = 0; i < json_array_size(roles); i++)
				if (!strcmp(jr_str(json_array_get(roles, i), "name"), name))
					role = json_array_get(roles, i);
			if (!role) {
				role = json_pack("{s:s,s:s,s:I,s:I,s:[]}", "name", name, "status", "ok",
						 "exit", (json_int_t)0, "wall_ns", (json_int_t)0,
						 "runs");
				json_array_append_new(roles, role);
			}
			json_array_append(json_object_get(role, "runs"), run);
			tool_merge(role, run);	/* a tool's figures: the worst run's */
			if (jr_u64(run, "wall_ns") > jr_u64(role, "wall_ns"))
				json_object_set(role, "wall_ns", json_object_get(run, "wall_ns"));
			if (failed(run) && !strcmp(jr_str(role, "status"), "ok")) {
				json_object_set(role, "status", json_object_get(run, "status"));
				json_object_set(role, "exit", json_object_get(run, "exit"));
				if (!*arm_exit)
					*arm_exit = json_integer_value(json_object_get(run, "exit"));
			}
		}
	}
	return roles;
}

/* each member's hw counter deltas summed over the rounds, by node */
static json_t *nodes_of(const json_t *rounds)
{
	json_t *nodes = json_array(), *res, *m, *v;
	const char *key;
	size_t r, k;

	json_array_foreach(rounds, r, res) {
		json_array_foreach(res, k, m) {
			json_t *n = json_array_get(nodes, k), *hw;

			if (!n) {
				n = json_pack("{s:s,s:{}}", "node", jr_str(m, "node"), "hw_counters_delta");
				json_array_append_new(nodes, n);
			}
			hw = json_object_get(n, "hw_counters_delta");
			json_object_foreach(json_object_get(m, "hw_counters_delta"), key, v)
				json_object_set_new(hw, key,
						    json_integer(json_integer_value(json_object_get(hw, key)) +
								 json_integer_value(v)));
		}
	}
	return nodes;
}

/* each fault's counters over the rounds: what the arm's traffic met */
static json_t *faults_of(const json_t *rounds)
{
	json_t *out = NULL, *res, *f, *v;
	const char *name, *key;
	size_t r;

	json_array_foreach(rounds, r, res) {
		json_object_foreach(json_object_get(json_array_get(res, 0), "faults_met"), name, f) {
			json_t *sum;

			if (!out)
				out = json_object();
			sum = json_object_get(out, name);
			if (!sum) {
				sum = json_object();
				json_object_set_new(out, name, sum);
			}
			json_object_foreach(f, key, v)
				json_object_set_new(sum, key, json_integer(
					json_integer_value(json_object_get(sum, key)) +
					json_integer_value(v)));
		}
	}
	return out;
}

static json_t *arm_json(const struct arm_acc *a, const json_t *rounds)
{
	json_int_t ex;
	json_t *roles = roles_of(rounds, &ex);

	json_t *o = json_pack("{s:s,s:o,s:O,s:I,s:O,s:o}", "mode", "exec", "time_hist_ns",
			      hist_to_json(&a->h), "hw_counters_delta", a->hw, "exit", ex, "roles",
			      roles, "nodes", nodes_of(rounds));
	const json_t *role;
	size_t k;

	json_t *met = faults_of(rounds), *resets = json_array(), *res;

	if (met && o)
		json_object_set_new(o, "faults_met", met);
	else
		json_decref(met);
	json_array_foreach(rounds, k, res) {	/* nodes rebooted after a command's timeout */
		json_t *nr = json_object_get(json_array_get(res, 0), "node_resets");

		if (nr)
			json_array_extend(resets, nr);
	}
	if (json_array_size(resets) && o)
		json_object_set_new(o, "node_resets", resets);
	else
		json_decref(resets);
	if (o) {
		arm_acc_retrans_json(a, o);
		json_array_foreach(roles, k, role)	/* the arm's: its roles' (worst) */
			tool_merge(o, role);
	}
	json_decref(roles);
	return o;
}

const struct wlc wlc_exec = {
	.name = "exec",
	.topo = WLC_GROUP,
	.measure = MEASURE_EXEC,
	.unit = "runs",
	.modes = 0,
	.modes_why = "an exec workload's program chooses its own transport",
	.rounds = 1,
	.in_profile = 1,
	.roles = 1,
	.reserved = reserved,
	.arm_json = arm_json,
};
