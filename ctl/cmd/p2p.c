// SPDX-License-Identifier: MIT
/*
 * rdmactl p2p lat: the perftest-style latency test run by two agents.
 * Options other than --client/--server go to the workload unchanged; the
 * agent checks them against the workload's option table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/cmd/cmds.h"
#include "ctl/session/session.h"
#include "lib/hist.h"
#include "lib/log.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmactl [-j] p2p lat|bw [--client NODE] [--server NODE] [--OPTION VALUE]...\n"
		   "  point-to-point tests measured like perftest's ib_{write,read,send,atomic}_{lat,bw};\n"
		   "  lat: WRITE/SEND half round trip, READ full round trip. Defaults: client node0,\n"
		   "  server node1 (bw: size 64k).\n");
	ctl_usage_wl(f, "p2p");
}

static void print_text(const struct pair *p, json_t *cres, const struct hist *h)
{
	const char *op = json_string_value(json_object_get(cres, "op"));
	json_int_t size = json_integer_value(json_object_get(cres, "size"));
	const char *line = "-----------------------------------------------------------------"
			   "-----------------------------";

	printf("%s\n", line);
	printf("                 RDMA %s latency (rdma-agent, %s, %s)\n", op,
	       json_string_value(json_object_get(cres, "qp")),
	       json_is_true(json_object_get(cres, "inline")) ? "inline" : "not inline");
	printf(" client %s (%s)  ->  server %s (%s)\n", p->tb.node[p->ci].name,
	       p->tb.node[p->ci].dev, p->tb.node[p->si].name, p->tb.node[p->si].dev);
	printf("%s\n", line);
	printf(" %-8s %-10s %10s %10s %10s %10s %10s %10s %10s\n", "#bytes", "#iters", "min[us]",
	       "p50[us]", "p90[us]", "p99[us]", "p99.9[us]", "max[us]", "avg[us]");
	printf(" %-8lld %-10llu %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n",
	       (long long)size, (unsigned long long)h->count, (double)h->min / 1e3,
	       (double)hist_quantile(h, 0.5) / 1e3, (double)hist_quantile(h, 0.9) / 1e3,
	       (double)hist_quantile(h, 0.99) / 1e3, (double)hist_quantile(h, 0.999) / 1e3,
	       (double)h->max / 1e3, hist_mean(h) / 1e3);
	printf("%s\n", line);
	printf(" timestamp cost taken off each sample: %lld ns (clock_gettime on this node)\n",
	       json_integer_value(json_object_get(cres, "timer_overhead_ns")));
	printf(" latency = %s; percentiles from a log-linear histogram (<0.8%% error)\n",
	       strcmp(op, "write") && strcmp(op, "send") ? "full round trip (as ib_read_lat, ib_atomic_lat)" :
							  "half round trip");
}

static void print_bw(const struct ctl *ctl, const struct pair *p, json_t *cres, json_t *sres)
{
	json_t *recv = json_object_get(sres, "received");
	double bw = json_real_value(json_object_get(cres, "bw_bytes_per_s"));
	double rate = json_real_value(json_object_get(cres, "msg_rate_per_s"));
	const char *op = json_string_value(json_object_get(cres, "op"));

	if (ctl->json) {
		json_t *o = json_pack("{s:i,s:s,s:s,s:O,s:O,s:s,s:s,s:O,s:f,s:f}", "schema_version", 1,
				      "test", "bw", "op", op, "size", json_object_get(cres, "size"),
				      "iters", json_object_get(cres, "iters"), "client",
				      p->tb.node[p->ci].name, "server", p->tb.node[p->si].name,
				      "elapsed_ns", json_object_get(cres, "elapsed_ns"),
				      "bw_bytes_per_s", bw, "msg_rate_per_s", rate);

		if (recv)	/* SEND: what arrived (UD may drop) */
			json_object_set(o, "received", recv);
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
		return;
	}
	printf(" RDMA %s bandwidth (rdma-agent, RC): client %s (%s) -> server %s (%s)\n", op,
	       p->tb.node[p->ci].name, p->tb.node[p->ci].dev, p->tb.node[p->si].name,
	       p->tb.node[p->si].dev);
	printf(" %-8s %-12s %16s %14s\n", "#bytes", "#iterations", "BW average[MiB/s]",
	       "MsgRate[Mpps]");
	printf(" %-8lld %-12lld %16.2f %14.6f\n", json_integer_value(json_object_get(cres, "size")),
	       json_integer_value(json_object_get(cres, "iters")), bw / 1048576.0, rate / 1e6);
	if (recv)
		printf(" received by the server: %lld (warm-up included)\n", json_integer_value(recv));
}

int cmd_p2p(struct ctl *ctl, int argc, char **argv)
{
	const char *client = "node0", *server = "node1";
	json_t *opts, *cres = NULL, *sres = NULL, *out;
	char err[512];
	struct pair p;
	struct hist h;
	int i, rc = 1;

	if (argc < 1 || !strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		usage(argc < 1 ? stderr : stdout);
		return argc < 1 ? 2 : 0;
	}
	if (strcmp(argv[0], "lat") && strcmp(argv[0], "bw")) {
		log_err("p2p: unknown test '%s' (expected lat|bw)", argv[0]);
		return 2;
	}
	opts = json_pack("{s:s}", "test", argv[0]);
	if (!strcmp(argv[0], "bw"))
		json_object_set_new(opts, "size", json_string("64k"));
	{
		const struct ctl_arg own[] = { { "client", &client }, { "server", &server },
					       { NULL, NULL } };

		i = ctl_args("p2p", argc, argv, 1, own, opts, usage);
		if (i) {
			json_decref(opts);
			return i == 1 ? 0 : 2;
		}
	}
	if (pair_open(&p, client, server)) {
		json_decref(opts);
		return 1;
	}
	if (pair_run(&p, "p2p", opts, &cres, &sres, err, sizeof(err)))
		goto fail;
	if (!strcmp(argv[0], "bw")) {
		print_bw(ctl, &p, cres, sres);
		rc = 0;
		goto out;
	}
	if (hist_from_json(&h, json_object_get(cres, "lat_ns"))) {
		snprintf(err, sizeof(err), "%s: malformed latency histogram", p.c.where);
		goto fail;
	}
	if (ctl->json) {
		out = json_pack("{s:i,s:s,s:s,s:O,s:O,s:s,s:s,s:O,s:o,s:o}", "schema_version", 2,
				"test", "lat", "op", json_string_value(json_object_get(cres, "op")),
				"size", json_object_get(cres, "size"), "iters",
				json_object_get(cres, "iters"), "client", p.tb.node[p.ci].name,
				"server", p.tb.node[p.si].name, "elapsed_ns",
				json_object_get(cres, "elapsed_ns"), "lat_ns", hist_summary_json(&h),
				"lat_hist_ns", hist_to_json(&h));
		json_object_set(out, "timer_overhead_ns", json_object_get(cres, "timer_overhead_ns"));
		/* what the run cost: CPU of each side's arm, the client device's counters */
		json_object_set(out, "client_cpu_ns", json_object_get(cres, "cpu_ns"));
		json_object_set(out, "server_cpu_ns", json_object_get(sres, "cpu_ns"));
		json_object_set(out, "client_hw_counters_delta",
				json_object_get(cres, "hw_counters_delta"));
		json_object_set(out, "intervals", json_object_get(cres, "intervals"));
		json_dumpf(out, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(out);
	} else {
		print_text(&p, cres, &h);
	}
	rc = 0;
	goto out;
fail:
	log_err("%s", err);
out:
	json_decref(cres);
	json_decref(sres);
	json_decref(opts);
	pair_close(&p);
	return rc;
}
