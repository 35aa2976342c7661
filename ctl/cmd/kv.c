// SPDX-License-Identifier: MIT
/*
 * rdmactl kv: one server agent holds the table, client agents GET by RDMA
 * READ and PUT by CAS (lock), READ, WRITE, WRITE (unlock) (workloads/kv.c), run as an experiment
 * of one rc arm (ctl/exp/). After the run the server checks every slot;
 * the updates it finds must equal the PUTs the clients made: exit 1
 * otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl/cmd/cmds.h"
#include "ctl/exp/exp.h"
#include "lib/hist.h"
#include "lib/log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmactl [-j] kv [--server NODE] [--clients NODE,NODE,..] [--workload a|b|c]\n"
		"                  [--dist zipf|uniform] [--theta 990] [--keys N] [--ops N] [--rate OPS/S]\n"
		"                  [--incr PCT] [--cas PCT] [--lock on|off] [--history on|off]\n"
		"  defaults: server node1, clients every other node, YCSB a, zipf 0.99, 10000 keys,\n"
		"  2000 ops per client, closed loop (--rate: open loop, latency from intended start),\n"
		"  no increments, PUTs locked, every operation recorded and the history checked for\n"
		"  linearizability (exit 1 if it is not)\n");
	ctl_usage_wl(f, "kv");
}

static void lat_line(const char *what, const json_t *hj)
{
	struct hist h;

	if (hist_from_json(&h, hj) || !h.count)
		return;
	printf("    %-4s n=%-7llu p50=%8.1f us  p99=%8.1f us  p99.9=%8.1f us  max=%8.1f us\n", what,
	       (unsigned long long)h.count, hist_quantile(&h, 0.5) / 1e3,
	       hist_quantile(&h, 0.99) / 1e3, hist_quantile(&h, 0.999) / 1e3, h.max / 1e3);
}

/* the members: the first client, the server (member 1 serves), the others */
static int members(const char *server, const char *clients, char *buf, size_t len)
{
	struct tb_state tb;
	char cl[256] = "", *first, *rest;
	int i;

	if (tb_load_rdma(&tb)) {
		log_err("no testbed is up (rdmactl testbed up)");
		return -ENOENT;
	}
	if (clients)
		snprintf(cl, sizeof(cl), "%s", clients);
	else
		for (i = 0; i < tb.nodes; i++)
			if (i != tb_node_index(&tb, server))
				snprintf(cl + strlen(cl), sizeof(cl) - strlen(cl), "%s%s", cl[0] ? "," : "",
					 tb.node[i].name);
	first = cl;
	rest = strchr(cl, ',');
	if (rest)
		*rest++ = 0;
	snprintf(buf, len, "%s,%s%s%s", first, server, rest ? "," : "", rest ? rest : "");
	return 0;
}

static void print_text(const json_t *res, const char *const *names, int n, json_int_t puts,
		       json_int_t incrs, const json_t *srv, const json_t *arm)
{
	int i;

	printf("kv: server %s, %d client(s)\n", names[n], n);
	for (i = 0; i < n; i++) {
		const json_t *c = json_array_get(res, (size_t)i);

		printf("  %s: %.0f ops/s, %lld GETs, %lld PUTs, %lld INCRs, %lld CAS retries, %lld torn "
		       "reads re-read%s\n", names[i], jr_real(c, "ops_per_s"),
		       json_integer_value(json_object_get(c, "gets")),
		       json_integer_value(json_object_get(c, "puts")),
		       json_integer_value(json_object_get(c, "incrs")),
		       json_integer_value(json_object_get(c, "cas_retries")),
		       json_integer_value(json_object_get(c, "torn_reads")),
		       !strcmp(jr_str(c, "lock"), "off") ? " (lock=off: PUTs unlocked, unsafe)" : "");
		if (json_object_get(c, "cas"))
			printf("  %s: %llu CAS updates of counters, %llu CAS that lost to another client's "
			       "update and were retried\n",
			       names[i], (unsigned long long)jr_u64(c, "cas"),
			       (unsigned long long)jr_u64(c, "cas_fails"));
		if (jr_u64(c, "corrupt_reads") || jr_u64(c, "corrupt_slots"))
			printf("  %s: %llu reads arrived corrupted (checksum wrong, version unchanged), "
			       "%llu reads of slots corrupt in the server's memory\n",
			       names[i], (unsigned long long)jr_u64(c, "corrupt_reads"),
			       (unsigned long long)jr_u64(c, "corrupt_slots"));
		if (json_object_get(c, "crashed"))
			printf("  %s: crashed (crash=) after %llu operations, in a PUT of key %llu holding "
			       "its lock (%s its body WRITE)\n", names[i],
			       (unsigned long long)jr_u64(json_object_get(c, "crashed"), "ops_done"),
			       (unsigned long long)jr_u64(json_object_get(c, "crashed"), "key"),
			       strcmp(jr_str(json_object_get(c, "crashed"), "at"), "body") ? "before" :
											       "after");
		if (json_object_get(c, "leases")) {
			const json_t *l = json_object_get(c, "leases");

			printf("  %s: %llu expired locks taken over (%llu rolled forward, %llu rolled "
			       "back), %llu PUTs begun again when their own lease ran out, %llu unlocks "
			       "found their lock taken over\n", names[i],
			       (unsigned long long)jr_u64(l, "takeovers"),
			       (unsigned long long)jr_u64(l, "rolled_forward"),
			       (unsigned long long)jr_u64(l, "rolled_back"),
			       (unsigned long long)jr_u64(l, "lease_aborts"),
			       (unsigned long long)jr_u64(l, "late_unlocks"));
		}
		lat_line("GET", json_object_get(c, "get_lat_ns"));
		lat_line("PUT", json_object_get(c, "put_lat_ns"));
		lat_line("INCR", json_object_get(c, "incr_lat_ns"));
		lat_line("CAS", json_object_get(c, "cas_lat_ns"));
	}
	printf("  verify: %lld keys, %lld bad slots, %lld updates recorded for %lld PUTs, %lld "
	       "increments for %lld INCRs and CAS updates: %s\n",
	       json_integer_value(json_object_get(srv, "keys_found")),
	       json_integer_value(json_object_get(srv, "bad_slots")),
	       json_integer_value(json_object_get(srv, "updates_recorded")), puts,
	       json_integer_value(json_object_get(srv, "incrs_recorded")), incrs,
	       jr_u64(arm, "wrong") ? "FAILED" : "ok");
	report_print_lin(arm, "  ", stdout);	/* its own verdict: a violation fails the arm too */
}

static void print_json(const json_t *res, const char *const *names, int n, json_int_t puts,
		       json_int_t incrs, json_int_t cas, const json_t *srv, const json_t *arm, int ok,
		       json_t *opts)
{
	json_t *cl = json_array(), *o;
	int i;

	for (i = 0; i < n; i++) {
		json_t *c = json_deep_copy(json_array_get(res, (size_t)i));

		json_object_set_new(c, "node", json_string(names[i]));
		json_object_del(c, "time_ns");
		json_object_del(c, "wrong");
		json_object_del(c, "lin");
		json_array_append_new(cl, c);
	}
	o = json_pack("{s:i,s:s,s:O,s:o,s:O,s:O,s:O,s:I,s:b}", "schema_version", 1, "server",
		      names[n], "opts", opts, "clients", cl, "keys_found",
		      json_object_get(srv, "keys_found"), "bad_slots",
		      json_object_get(srv, "bad_slots"), "updates_recorded",
		      json_object_get(srv, "updates_recorded"), "puts", puts, "verified", ok);
	json_object_set(o, "incrs_recorded", json_object_get(srv, "incrs_recorded"));
	/* incrs_recorded counts both: INCRs and CAS updates of the counters */
	json_object_set_new(o, "incrs", json_integer(incrs));
	json_object_set_new(o, "cas", json_integer(cas));
	if (json_object_get(arm, "lin_check")) {
		json_object_set(o, "linearizable", json_object_get(arm, "linearizable"));
		json_object_set(o, "lin_check", json_object_get(arm, "lin_check"));
	}
	if (json_object_get(arm, "lin_counterexample"))
		json_object_set(o, "lin_counterexample", json_object_get(arm, "lin_counterexample"));
	json_dumpf(o, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(o);
}

int cmd_kv(struct ctl *ctl, int argc, char **argv)
{
	const char *server = "node1", *clients = NULL, *names[TB_MAX_NODES];
	const struct ctl_arg own[] = { { "server", &server }, { "clients", &clients },
				       { NULL, NULL } };
	struct exp_opts o = { .no_report = 1, .need_testbed = 1 };
	static struct exp e;
	const json_t *res, *arm;
	char nodes[256];
	json_int_t puts = 0, incrs = 0, cas = 0;
	int i, n, r, ok = 1;

	memset(&e, 0, sizeof(e));
	profile_init(&e.p, "kv");
	e.loaded = 1;
	r = ctl_args("kv", argc, argv, 0, own, e.p.wopts, usage);
	if (!r && ctl_take_opt(e.p.wopts, "kv", "ops", &e.p.iters))
		r = CTL_USAGE;
	if (!r && members(server, clients, nodes, sizeof(nodes)))
		r = CTL_FAIL;
	if (r) {
		exp_close(&e);
		return ctl_code(r);
	}
	profile_add_arm(&e.p, "rc", "rc", NULL);
	o.nodes = nodes;
	r = exp_open(&e, ctl, &o);
	if (!r)
		exp_measure(&e);
	r = exp_finish(&e) || r;
	/* the round's results as the agents sent them (with their intervals) */
	arm = json_array_get(json_object_get(e.report, "arms"), 0);
	res = json_array_get(e.rounds[0], 0);
	n = (int)json_array_size(res) - 1;
	if (n > 0) {
		/* failed: wrong results, or a history no order explains */
		ok = !json_is_true(json_object_get(arm, "verification_failed"));
		/* the star's results: its clients in member order, then the server */
		for (i = 0; i < e.g.n; i++)
			names[i < 1 ? 0 : i == 1 ? e.g.n - 1 : i - 1] = e.g.tb.node[e.g.node[i]].name;
		for (i = 0; i < n; i++) {
			puts += json_integer_value(json_object_get(json_array_get(res, (size_t)i), "puts"));
			incrs += json_integer_value(json_object_get(json_array_get(res, (size_t)i), "incrs"));
			cas += json_integer_value(json_object_get(json_array_get(res, (size_t)i), "cas"));
		}
		if (ctl->json)
			print_json(res, names, n, puts, incrs, cas, json_array_get(res, (size_t)n), arm,
				   ok, e.p.wopts);
		else	/* the server's counters hold both */
			print_text(res, names, n, puts, incrs + cas, json_array_get(res, (size_t)n), arm);
		if (!ok)
			log_err("kv: verification failed (%s)",
				json_is_false(json_object_get(arm, "linearizable")) ?
					"the history is not linearizable" :
					"lost, torn or doubled updates, or corrupted data");
	}
	exp_close(&e);
	return r || !ok ? CTL_FAIL : CTL_OK;
}
