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
	json_t *opts = json_object(), *sep = NULL, *cep[TB_MAX_NODES] = { 0 };
	json_t *res[TB_MAX_NODES + 1] = { 0 }, *peers;
	struct agentc *cs[TB_MAX_NODES + 1];
	json_int_t arm[TB_MAX_NODES + 1];
	int i, n = 0, si, r = 0, rc = 1, node[TB_MAX_NODES];
	struct group g;
	char err[512], derr[256], buf[256];
	json_int_t puts = 0;

	{
		const struct ctl_arg own[] = { { "server", &server }, { "clients", &clients },
					       { NULL, NULL } };

		i = ctl_args("kv", argc, argv, 0, own, opts, usage);
		if (i) {
			json_decref(opts);
			return i == CLI_EXIT_OK ? 0 : 2;
		}
	}
	/* the server first, then the clients: one group, rank 0 = server */
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
	si = 0;
	for (i = 0; i <= n; i++) {
		cs[i] = &g.c[i];
		arm[i] = -1;
		node[i % TB_MAX_NODES] = g.node[i];
	}
	json_object_set_new(opts, "clients", json_integer(n));
	r = arm_prepare_on(cs[si], "kv", "server", opts, &arm[0], &sep, err, sizeof(err));
	for (i = 1; i <= n && !r; i++)
		r = arm_prepare_on(cs[i], "kv", "client", opts, &arm[i], &cep[i - 1], err, sizeof(err));
	if (!r) {
		peers = json_array();
		for (i = 0; i < n; i++)
			json_array_append(peers, cep[i]);
		r = arm_call(cs[0], "connect", json_pack("{s:I,s:o}", "arm", arm[0], "peer", peers), err,
			     sizeof(err));
	}
	for (i = 1; i <= n && !r; i++)
		r = arm_call(cs[i], "connect",
			     json_pack("{s:I,s:O}", "arm", arm[i], "peer",
				       json_array_get(sep, (size_t)(i - 1))),
			     err, sizeof(err));
	for (i = 0; i <= n && !r; i++)
		r = arm_call(cs[i], "start", json_pack("{s:I}", "arm", arm[i]), err, sizeof(err));
	if (!r)
		r = arms_wait(cs, arm, n + 1, res, err, sizeof(err));
	for (i = 0; i <= n; i++)
		if (arm[i] >= 0)
			arm_call(cs[i], "destroy", json_pack("{s:I}", "arm", arm[i]), derr, sizeof(derr));
	if (r) {
		log_err("%s", err);
		goto out;
	}
	for (i = 1; i <= n; i++)
		puts += json_integer_value(json_object_get(res[i], "puts"));
	{
		json_int_t found = json_integer_value(json_object_get(res[0], "keys_found"));
		json_int_t bad = json_integer_value(json_object_get(res[0], "bad_slots"));
		json_int_t upd = json_integer_value(json_object_get(res[0], "updates_recorded"));
		int ok = !bad && upd == puts;

		if (ctl->json) {
			json_t *cl = json_array(), *o;

			for (i = 1; i <= n; i++) {
				json_object_set_new(res[i], "node",
						    json_string(g.tb.node[node[i]].name));
				json_array_append(cl, res[i]);
			}
			o = json_pack("{s:i,s:s,s:O,s:o,s:I,s:I,s:I,s:I,s:b}", "schema_version", 1,
				      "server", g.tb.node[node[0]].name, "opts", opts, "clients", cl,
				      "keys_found", found, "bad_slots", bad, "updates_recorded", upd,
				      "puts", puts, "verified", ok);
			json_dumpf(o, stdout, JSON_INDENT(2));
			putchar('\n');
			json_decref(o);
		} else {
			printf("kv: server %s, %d client(s)\n", g.tb.node[node[0]].name, n);
			for (i = 1; i <= n; i++) {
				printf("  %s: %.0f ops/s, %lld GETs, %lld PUTs, %lld CAS retries, %lld torn "
				       "reads re-read\n",
				       g.tb.node[node[i]].name,
				       json_real_value(json_object_get(res[i], "ops_per_s")),
				       json_integer_value(json_object_get(res[i], "gets")),
				       json_integer_value(json_object_get(res[i], "puts")),
				       json_integer_value(json_object_get(res[i], "cas_retries")),
				       json_integer_value(json_object_get(res[i], "torn_reads")));
				lat_line("GET", json_object_get(res[i], "get_lat_ns"));
				lat_line("PUT", json_object_get(res[i], "put_lat_ns"));
			}
			printf("  verify: %lld keys, %lld bad slots, %lld updates recorded for %lld PUTs: "
			       "%s\n", found, bad, upd, puts, ok ? "ok" : "FAILED");
		}
		rc = ok ? 0 : 1;
		if (!ok)
			log_err("kv: verification failed (lost or torn updates)");
	}
out:
	for (i = 0; i <= n; i++)
		json_decref(res[i]);
	for (i = 0; i < n; i++)
		json_decref(cep[i]);
	json_decref(sep);
	json_decref(opts);
	group_close(&g);
	return rc;
}
