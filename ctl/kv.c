// SPDX-License-Identifier: MIT
/*
 * rdmactl kv: one server agent holds the table, client agents GET by RDMA
 * READ and PUT by CAS + WRITE (workloads/kv.c). After the run the server
 * checks every slot; the updates it finds must equal the PUTs the clients
 * made: exit 1 otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl.h"
#include "report.h"
#include "session.h"
#include "../lib/hist.h"
#include "../lib/log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmactl [-j] kv [--server NODE] [--clients NODE,NODE,..] [--workload a|b|c]\n"
		"                  [--dist zipf|uniform] [--theta 990] [--keys N] [--ops N] [--rate OPS/S]\n"
		"  defaults: server node1, clients every other node, YCSB a, zipf 0.99, 10000 keys,\n"
		"  2000 ops per client, closed loop (--rate: open loop, latency from intended start)\n");
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

int cmd_kv(struct ctl *ctl, int argc, char **argv)
{
	const char *server = "node1", *clients = NULL;
	json_t *opts = json_object(), *res = NULL, *srv;
	struct agentc *cs[TB_MAX_NODES];
	int i, n, rc = 1;
	struct group g;
	char err[512], buf[256];
	json_int_t puts = 0, wrong;

	{
		const struct ctl_arg own[] = { { "server", &server }, { "clients", &clients },
					       { NULL, NULL } };

		i = ctl_args("kv", argc, argv, 0, own, opts, usage);
		if (i) {
			json_decref(opts);
			return i == CLI_EXIT_OK ? 0 : 2;
		}
	}
	/* the server first, then the clients: one group, member 0 = server */
	if (!clients) {
		struct tb_state tb;

		if (tb_load(&tb)) {
			log_err("no testbed is up (rdmactl testbed up)");
			json_decref(opts);
			return 1;
		}
		snprintf(buf, sizeof(buf), "%s", server);
		for (i = 0; i < tb.nodes; i++)
			if (i != tb_node_index(&tb, server))
				snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ",%s", tb.node[i].name);
	} else {
		snprintf(buf, sizeof(buf), "%s,%s", server, clients);
	}
	if (group_open(&g, buf)) {
		json_decref(opts);
		return 1;
	}
	n = g.n - 1;
	for (i = 0; i < n; i++)
		cs[i] = &g.c[i + 1];
	json_object_set_new(opts, "clients", json_integer(n));
	if (star_run(&g.c[0], cs, n, "kv", opts, 1, &res, err, sizeof(err))) {
		log_err("%s", err);
		goto out;
	}
	wrong = (json_int_t)star_results_fold("kv", res);
	srv = json_array_get(res, (size_t)n);
	for (i = 0; i < n; i++)
		puts += json_integer_value(json_object_get(json_array_get(res, (size_t)i), "puts"));
	{
		json_int_t found = json_integer_value(json_object_get(srv, "keys_found"));
		json_int_t bad = json_integer_value(json_object_get(srv, "bad_slots"));
		json_int_t upd = json_integer_value(json_object_get(srv, "updates_recorded"));
		int ok = !wrong;

		if (ctl->json) {
			json_t *cl = json_array(), *o;

			for (i = 0; i < n; i++) {
				json_t *c = json_array_get(res, (size_t)i);

				json_object_set_new(c, "node", json_string(g.tb.node[g.node[i + 1]].name));
				json_object_del(c, "time_ns");
				json_object_del(c, "wrong");
				json_array_append(cl, c);
			}
			o = json_pack("{s:i,s:s,s:O,s:o,s:I,s:I,s:I,s:I,s:b}", "schema_version", 1,
				      "server", g.tb.node[g.node[0]].name, "opts", opts, "clients", cl,
				      "keys_found", found, "bad_slots", bad, "updates_recorded", upd,
				      "puts", puts, "verified", ok);
			json_dumpf(o, stdout, JSON_INDENT(2));
			putchar('\n');
			json_decref(o);
		} else {
			printf("kv: server %s, %d client(s)\n", g.tb.node[g.node[0]].name, n);
			for (i = 0; i < n; i++) {
				const json_t *c = json_array_get(res, (size_t)i);

				printf("  %s: %.0f ops/s, %lld GETs, %lld PUTs, %lld CAS retries, %lld torn "
				       "reads re-read\n",
				       g.tb.node[g.node[i + 1]].name,
				       json_real_value(json_object_get(c, "ops_per_s")),
				       json_integer_value(json_object_get(c, "gets")),
				       json_integer_value(json_object_get(c, "puts")),
				       json_integer_value(json_object_get(c, "cas_retries")),
				       json_integer_value(json_object_get(c, "torn_reads")));
				lat_line("GET", json_object_get(c, "get_lat_ns"));
				lat_line("PUT", json_object_get(c, "put_lat_ns"));
			}
			printf("  verify: %lld keys, %lld bad slots, %lld updates recorded for %lld PUTs: "
			       "%s\n", found, bad, upd, puts, ok ? "ok" : "FAILED");
		}
		rc = ok ? 0 : 1;
		if (!ok)
			log_err("kv: verification failed (lost or torn updates)");
	}
out:
	json_decref(res);
	json_decref(opts);
	group_close(&g);
	return rc;
}
