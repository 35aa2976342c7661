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
#include "ctl/base/print.h"
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

/* one client: as text, its rates and what went wrong or was recovered;
 * as JSON, its result as the agent sent it */
static void print_client(const json_t *c, const char *name)
{
	const json_t *l = json_object_get(c, "leases"), *cr = json_object_get(c, "crashed");

	print_open(NULL);
	print_merge(c);
	print_del("time_ns");
	print_del("wrong");
	print_del("lin");
	print_str(PRINT_ANY, "node", "  %s: ", name);
	print_text("%.0f ops/s, %lld GETs, %lld PUTs, %lld INCRs, %lld CAS retries, %lld torn reads "
		   "re-read%s\n", jr_real(c, "ops_per_s"), json_integer_value(json_object_get(c, "gets")),
		   json_integer_value(json_object_get(c, "puts")),
		   json_integer_value(json_object_get(c, "incrs")),
		   json_integer_value(json_object_get(c, "cas_retries")),
		   json_integer_value(json_object_get(c, "torn_reads")),
		   !strcmp(jr_str(c, "lock"), "off") ? " (lock=off: PUTs unlocked, unsafe)" : "");
	if (json_object_get(c, "cas"))
		print_text("  %s: %llu CAS updates of counters, %llu CAS that lost to another client's "
			   "update and were retried\n", name, (unsigned long long)jr_u64(c, "cas"),
			   (unsigned long long)jr_u64(c, "cas_fails"));
	if (jr_u64(c, "corrupt_reads") || jr_u64(c, "corrupt_slots"))
		print_text("  %s: %llu reads arrived corrupted (checksum wrong, version unchanged), "
			   "%llu reads of slots corrupt in the server's memory\n", name,
			   (unsigned long long)jr_u64(c, "corrupt_reads"),
			   (unsigned long long)jr_u64(c, "corrupt_slots"));
	if (cr)
		print_text("  %s: crashed (crash=) after %llu operations, in a PUT of key %llu holding "
			   "its lock (%s its body WRITE)\n", name,
			   (unsigned long long)jr_u64(cr, "ops_done"), (unsigned long long)jr_u64(cr, "key"),
			   strcmp(jr_str(cr, "at"), "body") ? "before" : "after");
	if (l)
		print_text("  %s: %llu expired locks taken over (%llu rolled forward, %llu rolled back), "
			   "%llu PUTs begun again when their own lease ran out, %llu unlocks found their "
			   "lock taken over\n", name, (unsigned long long)jr_u64(l, "takeovers"),
			   (unsigned long long)jr_u64(l, "rolled_forward"),
			   (unsigned long long)jr_u64(l, "rolled_back"),
			   (unsigned long long)jr_u64(l, "lease_aborts"),
			   (unsigned long long)jr_u64(l, "late_unlocks"));
	if (!print_json_on()) {
		lat_line("GET", json_object_get(c, "get_lat_ns"));
		lat_line("PUT", json_object_get(c, "put_lat_ns"));
		lat_line("INCR", json_object_get(c, "incr_lat_ns"));
		lat_line("CAS", json_object_get(c, "cas_lat_ns"));
	}
	print_close();
}

/* the run: each client, then the server's verification and the history's
 * verdict (incrs: INCRs, cas: CAS updates; the server's counters hold both) */
static void print_result(const json_t *res, const char *const *names, int n, json_int_t puts,
			 json_int_t incrs, json_int_t cas, const json_t *srv, const json_t *arm,
			 int ok, json_t *opts)
{
	int i;

	print_str(PRINT_JSON, "kind", NULL, "rdma-testbed-kv");
	print_int(PRINT_JSON, "schema_version", NULL, CMD_SCHEMA_VERSION);
	print_str(PRINT_ANY, "server", "kv: server %s, ", names[n]);
	print_text("%d client(s)\n", n);
	print_json("opts", json_incref(opts));
	print_array("clients");
	for (i = 0; i < n; i++)
		print_client(json_array_get(res, (size_t)i), names[i]);
	print_close();
	print_int(PRINT_ANY, "keys_found", "  verify: %lld keys, ", jr_u64(srv, "keys_found"));
	print_int(PRINT_ANY, "bad_slots", "%lld bad slots, ", jr_u64(srv, "bad_slots"));
	print_int(PRINT_ANY, "updates_recorded", "%lld updates recorded for ",
		  jr_u64(srv, "updates_recorded"));
	print_int(PRINT_ANY, "puts", "%lld PUTs, ", puts);
	print_int(PRINT_ANY, "incrs_recorded", "%lld increments for ", jr_u64(srv, "incrs_recorded"));
	print_int(PRINT_TEXT, NULL, "%lld INCRs and CAS updates: ", incrs + cas);
	print_text("%s\n", jr_u64(arm, "wrong") ? "FAILED" : "ok");
	print_int(PRINT_JSON, "incrs", NULL, incrs);
	print_int(PRINT_JSON, "cas", NULL, cas);
	print_json("verified", json_boolean(ok));
	if (json_object_get(arm, "lin_check")) {
		print_json("linearizable", json_incref(json_object_get(arm, "linearizable")));
		print_json("lin_check", json_incref(json_object_get(arm, "lin_check")));
	}
	if (json_object_get(arm, "lin_counterexample"))
		print_json("lin_counterexample", json_incref(json_object_get(arm, "lin_counterexample")));
	if (!print_json_on())	/* its own verdict: a violation fails the arm too */
		report_print_lin(arm, "  ", stdout);
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
		print_begin(ctl->json);
		print_result(res, names, n, puts, incrs, cas, json_array_get(res, (size_t)n), arm, ok,
			     e.p.wopts);
		print_end();
		if (!ok)
			log_err("kv: verification failed (%s)",
				json_is_false(json_object_get(arm, "linearizable")) ?
					"the history is not linearizable" :
					"lost, torn or doubled updates, or corrupted data");
	}
	exp_close(&e);
	return r || !ok ? CTL_FAIL : CTL_OK;
}
