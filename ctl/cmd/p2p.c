// SPDX-License-Identifier: MIT
/*
 * rdmactl p2p lat: the perftest-style latency test run by two agents.
 * Options other than --client/--server go to the workload unchanged; the
 * agent checks them against the workload's option table.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/base/print.h"
#include "ctl/cmd/cmds.h"
#include "ctl/exp/exp.h"
#include "lib/hist.h"
#include "lib/log.h"
#include "ctl/report/report.h"

#define CQ_MODERATION 16	/* the p2p workload's CQ_MOD: a signaled completion every 16 */

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmactl [-j] p2p lat|bw [--client NODE] [--server NODE] [--OPTION VALUE]...\n"
		   "                 [--out_json] [--out_json_file FILE]\n"
		   "  point-to-point tests measured like perftest's ib_{write,read,send,atomic}_{lat,bw};\n"
		   "  lat: WRITE/SEND half round trip, READ full round trip. Defaults: client node0,\n"
		   "  server node1 (bw: size 64k).\n"
		   "  --out_json, --out_json_file FILE  also the result in perftest's out_json form\n"
		   "                   (test_info, results: t_typical, percentile_99, BW_average, ...;\n"
		   "                   valid JSON), to FILE or perftest_out.json here, as perftest\n");
	ctl_usage_wl(f, "p2p");
}

/* the two ends: names and devices */
struct ends {
	const char *cn, *cd, *sn, *sd;
};

/* a latency run: perftest's table as text; its figures, the histogram
 * and what the run cost (each side's CPU, the client's device counters,
 * the intervals) as JSON */
static void print_lat(const struct ends *p, json_t *cres, json_t *sres, const struct hist *h)
{
	const char *op = json_string_value(json_object_get(cres, "op"));
	json_int_t size = json_integer_value(json_object_get(cres, "size"));
	const char *line = "-----------------------------------------------------------------"
			   "-----------------------------";

	print_str(PRINT_JSON, "kind", NULL, "rdma-testbed-p2p");
	print_int(PRINT_JSON, "schema_version", NULL, CMD_SCHEMA_VERSION);
	print_str(PRINT_JSON, "test", NULL, "lat");
	print_str(PRINT_JSON, "op", NULL, op);
	print_json("size", json_incref(json_object_get(cres, "size")));
	print_json("iters", json_incref(json_object_get(cres, "iters")));
	print_str(PRINT_JSON, "client", NULL, p->cn);
	print_str(PRINT_JSON, "server", NULL, p->sn);
	print_json("elapsed_ns", json_incref(json_object_get(cres, "elapsed_ns")));
	print_json("lat_ns", hist_summary_json(h));
	print_json("lat_hist_ns", hist_to_json(h));
	print_text("%s\n", line);
	print_text("                 RDMA %s latency (rdma-agent, %s, %s)\n", op,
		   json_string_value(json_object_get(cres, "qp")),
		   json_is_true(json_object_get(cres, "inline")) ? "inline" : "not inline");
	print_text(" client %s (%s)  ->  server %s (%s)\n", p->cn, p->cd, p->sn, p->sd);
	print_text("%s\n", line);
	print_text(" %-8s %-10s %10s %10s %10s %10s %10s %10s %10s\n", "#bytes", "#iters", "min[us]",
		   "p50[us]", "p90[us]", "p99[us]", "p99.9[us]", "max[us]", "avg[us]");
	print_text(" %-8lld %-10llu %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n",
		   (long long)size, (unsigned long long)h->count, (double)h->min / 1e3,
		   (double)hist_quantile(h, 0.5) / 1e3, (double)hist_quantile(h, 0.9) / 1e3,
		   (double)hist_quantile(h, 0.99) / 1e3, (double)hist_quantile(h, 0.999) / 1e3,
		   (double)h->max / 1e3, hist_mean(h) / 1e3);
	print_text("%s\n", line);
	print_int(PRINT_ANY, "timer_overhead_ns",
		  " timestamp cost taken off each sample: %lld ns (clock_gettime on this node)\n",
		  json_integer_value(json_object_get(cres, "timer_overhead_ns")));
	print_text(" latency = %s; percentiles from a log-linear histogram (<0.8%% error)\n",
		   strcmp(op, "write") && strcmp(op, "send") ?
			   "full round trip (as ib_read_lat, ib_atomic_lat)" : "half round trip");
	/* what the run cost: CPU of each side's arm, the client device's counters */
	print_json("client_cpu_ns", json_incref(json_object_get(cres, "cpu_ns")));
	print_json("server_cpu_ns", json_incref(json_object_get(sres, "cpu_ns")));
	print_json("client_hw_counters_delta", json_incref(json_object_get(cres, "hw_counters_delta")));
	print_json("intervals", json_incref(json_object_get(cres, "intervals")));
}

/* a bandwidth run: perftest's line as text, the same figures as JSON */
static void print_bw(const struct ends *p, json_t *cres, json_t *sres)
{
	json_t *recv = json_object_get(sres, "received");
	double bw = json_real_value(json_object_get(cres, "bw_bytes_per_s"));
	double rate = json_real_value(json_object_get(cres, "msg_rate_per_s"));
	const char *op = json_string_value(json_object_get(cres, "op"));

	print_str(PRINT_JSON, "kind", NULL, "rdma-testbed-p2p");
	print_int(PRINT_JSON, "schema_version", NULL, CMD_SCHEMA_VERSION);
	print_str(PRINT_JSON, "test", NULL, "bw");
	print_str(PRINT_ANY, "op", " RDMA %s bandwidth (rdma-agent, RC): ", op);
	print_str(PRINT_ANY, "client", "client %s ", p->cn);
	print_text("(%s) -> ", p->cd);
	print_str(PRINT_ANY, "server", "server %s ", p->sn);
	print_text("(%s)\n", p->sd);
	print_text(" %-8s %-12s %16s %14s\n", "#bytes", "#iterations", "BW average[MiB/s]",
		   "MsgRate[Mpps]");
	print_int(PRINT_ANY, "size", " %-8lld ", json_integer_value(json_object_get(cres, "size")));
	print_int(PRINT_ANY, "iters", "%-12lld ", json_integer_value(json_object_get(cres, "iters")));
	print_json("elapsed_ns", json_incref(json_object_get(cres, "elapsed_ns")));
	print_real(PRINT_JSON, "bw_bytes_per_s", NULL, bw);
	print_real(PRINT_JSON, "msg_rate_per_s", NULL, rate);
	print_text("%16.2f %14.6f\n", bw / 1048576.0, rate / 1e6);
	if (recv)	/* SEND: what arrived (UD may drop) */
		print_int(PRINT_ANY, "received",
			  " received by the server: %lld (warm-up included)\n", json_integer_value(recv));
}

/* perftest's name of the test (its out_json "test") */
static const char *pt_test(const char *test, const char *op)
{
	static const struct {
		const char *test, *op, *name;
	} names[] = {
		{ "lat", "write", "RDMA_Write_Latency_Test" }, { "lat", "send", "Send_Latency_Test" },
		{ "lat", "read", "RDMA_Read_Latency_Test" },
		{ "lat", "faa", "Atomic_FETCH_AND_ADD_Latency_Test" },
		{ "lat", "cas", "Atomic_CMP_AND_SWAP_Latency_Test" },
		{ "bw", "write", "RDMA_Write_BW_Test" }, { "bw", "send", "Send_BW_Test" },
		{ "bw", "read", "RDMA_Read_BW_Test" },
		{ "bw", "faa", "Atomic_FETCH_AND_ADD_BW_Test" },
		{ "bw", "cas", "Atomic_CMP_AND_SWAP_BW_Test" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i].test, test) && !strcmp(names[i].op, op))
			return names[i].name;
	return "unknown";
}

static double us2(double ns)	/* perftest's two decimals, in us */
{
	return round(ns / 10.0) / 100.0;
}

/*
 * The result as perftest's --out_json writes it (perftest 4.5: its keys,
 * sections and units; tests/formats/perftest-4.5 holds its own files), but
 * valid JSON (4.5's has bare keys and trailing commas). Latency: t_typical
 * is our p50, percentile_99/99.9 ours, t_stdev the histogram's; bandwidth
 * in MB/sec = 2^20 B/s (perftest's default unit) and BW_peak 0.00, as
 * perftest writes it with --noPeak: we measure no peak.
 */
static json_t *perftest_json(const struct ends *p, json_t *cres, const struct hist *h, int mtu)
{
	const char *test = jr_str(cres, "test"), *op = jr_str(cres, "op"), *qp = jr_str(cres, "qp");
	int lat = !strcmp(test, "lat"), one_sided = !strcmp(op, "read") || !strcmp(op, "faa") ||
						    !strcmp(op, "cas");
	json_t *info, *res;
	char ct[8];

	snprintf(ct, sizeof(ct), "%s", qp);
	for (char *c = ct; *c; c++)
		*c = (char)(*c - ('a' <= *c && *c <= 'z' ? 32 : 0));
	info = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s,s:s,s:s,s:s,s:I}", "test", pt_test(test, op),
			 "Dual_port", "OFF", "Device", p->cd, "Number_of_qps", 1, "Transport_type",
			 "IB", "Connection_type", ct, "Using_SRQ", "OFF", "PCIe_relax_order", "ON",
			 "ibv_wr_API", "OFF", "TX_depth", (json_int_t)jr_u64(cres, "tx_depth"));
	if (!lat)
		json_object_set_new(info, "CQ_Moderation", json_integer(CQ_MODERATION));
	json_object_update_new(info, json_pack("{s:i,s:s,s:I}", "Mtu", mtu, "Link_type", "Ethernet",
					       "GID_index",
					       json_integer_value(json_object_get(cres, "gid_index"))));
	if (one_sided)
		json_object_set_new(info, "Outstand_reads",
				    json_integer((json_int_t)jr_u64(cres, "outstanding_reads")));
	else
		json_object_set_new(info, "Max_inline_data",
				    json_integer((json_int_t)jr_u64(cres, "max_inline")));
	json_object_update_new(info, json_pack("{s:s,s:s}", "rdma_cm_QPs", "OFF", "Data_ex_method",
					       "Ethernet"));
	if (lat)
		res = json_pack("{s:I,s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "MsgSize",
				(json_int_t)jr_u64(cres, "size"), "n_iterations", (json_int_t)h->count,
				"t_min", us2((double)h->min), "t_max", us2((double)h->max), "t_typical",
				us2((double)hist_quantile(h, 0.5)), "t_avg", us2(hist_mean(h)),
				"t_stdev", us2(hist_stdev(h)), "percentile_99",
				us2((double)hist_quantile(h, 0.99)), "percentile_99.9",
				us2((double)hist_quantile(h, 0.999)));
	else
		res = json_pack("{s:I,s:I,s:f,s:f,s:f}", "MsgSize", (json_int_t)jr_u64(cres, "size"),
				"n_iterations", (json_int_t)jr_u64(cres, "iters"), "BW_peak", 0.0,
				"BW_average",
				round(jr_real(cres, "bw_bytes_per_s") / 1048576.0 * 100) / 100,
				"MsgRate", round(jr_real(cres, "msg_rate_per_s") / 1e6 * 1e6) / 1e6);
	return json_pack("{s:o,s:o}", "test_info", info, "results", res);
}

static int write_perftest(const char *path, const struct ends *p, json_t *cres,
			  const struct hist *h, int mtu)
{
	json_t *o = perftest_json(p, cres, h, mtu);
	int r = !o || json_dump_file(o, path, JSON_INDENT(1) | JSON_REAL_PRECISION(10));

	if (r)
		log_err("%s: cannot write", path);
	json_decref(o);
	return r;
}

/* the two ends must be two devices: endpoints on one rxe device loop back
 * inside rxe and never touch the wire */
static int two_nodes(const char *client, const char *server)
{
	struct tb_state tb;
	int ci, si;

	if (tb_load_rdma(&tb)) {
		log_err("no testbed is up (rdmactl testbed up)");
		return -ENOENT;
	}
	ci = tb_node_index(&tb, client);
	si = tb_node_index(&tb, server);
	if (ci < 0 || si < 0) {
		log_err("unknown node '%s' (testbed has node0..node%d)", ci < 0 ? client : server,
			tb.nodes - 1);
		return -EINVAL;
	}
	if (ci == si) {
		log_err("client and server are the same node (%s): endpoints on one rxe device "
			"loop back inside rxe and never touch the wire", tb.node[ci].name);
		return -EINVAL;
	}
	return 0;
}

/* argv into the experiment: 0, CTL_HELP after --help, CTL_USAGE */
static int parse(struct exp *e, int argc, char **argv, const char **client, const char **server,
		 const char **out_json)
{
	const struct ctl_arg own[] = { { "client", client }, { "server", server },
				       { "out_json_file", out_json }, { NULL, NULL } };

	if (argc < 1 || !strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		usage(argc < 1 ? stderr : stdout);
		return argc < 1 ? CTL_USAGE : CTL_HELP;
	}
	if (strcmp(argv[0], "lat") && strcmp(argv[0], "bw")) {
		log_err("p2p: unknown test '%s' (expected lat|bw)", argv[0]);
		return CTL_USAGE;
	}
	json_object_set_new(e->p.wopts, "test", json_string(argv[0]));
	if (!strcmp(argv[0], "bw"))
		json_object_set_new(e->p.wopts, "size", json_string("64k"));
	return ctl_args("p2p", argc, argv, 1, own, e->p.wopts, usage);
}

int cmd_p2p(struct ctl *ctl, int argc, char **argv)
{
	const char *client = "node0", *server = "node1", *out_json = NULL;
	char *args[128];
	int n = 0, i;
	struct exp_opts o = { .no_report = 1, .need_testbed = 1 };
	static struct exp e;
	json_t *res, *cres, *sres;
	struct ends ends;
	char nodes[128];
	struct hist h;
	int r;

	memset(&e, 0, sizeof(e));
	profile_init(&e.p, "p2p");
	e.loaded = 1;
	/* --out_json alone: perftest's default file name */
	for (i = 0; i < argc && n < 127; i++) {
		if (!strcmp(argv[i], "--out_json"))
			out_json = out_json ? out_json : "perftest_out.json";
		else
			args[n++] = argv[i];
	}
	args[n] = NULL;
	r = parse(&e, n, args, &client, &server, &out_json);
	if (!r && (ctl_take_opt(e.p.wopts, "p2p", "iters", &e.p.iters) ||
		   ctl_take_opt(e.p.wopts, "p2p", "warmup", &e.p.warmup)))
		r = CTL_USAGE;
	if (!r && two_nodes(client, server))
		r = CTL_FAIL;
	if (r) {
		exp_close(&e);
		return ctl_code(r);
	}
	profile_add_arm(&e.p, "rc", "rc", NULL);
	snprintf(nodes, sizeof(nodes), "%s,%s", client, server);	/* member 0 the client */
	o.nodes = nodes;
	r = exp_open(&e, ctl, &o);
	if (!r)
		exp_measure(&e);
	r = exp_finish(&e) || r;
	/* the round's results as the agents sent them */
	res = json_array_get(e.rounds[0], 0);
	cres = json_array_get(res, 0);
	sres = json_array_get(res, 1);
	if (!r && cres) {
		ends = (struct ends){ e.g.tb.node[e.g.node[0]].name, e.g.tb.node[e.g.node[0]].dev,
				      e.g.tb.node[e.g.node[1]].name, e.g.tb.node[e.g.node[1]].dev };
		if (!strcmp(jr_str(cres, "test"), "bw") || !json_object_get(cres, "lat_ns")) {
			print_begin(ctl->json);
			print_bw(&ends, cres, sres);
			print_end();
			memset(&h, 0, sizeof(h));
			if (out_json && write_perftest(out_json, &ends, cres, &h, e.g.tb.mtu))
				r = 1;
		} else if (hist_from_json(&h, json_object_get(cres, "lat_ns"))) {
			log_err("%s: malformed latency histogram", ends.cn);
			r = 1;
		} else {
			print_begin(ctl->json);
			print_lat(&ends, cres, sres, &h);
			print_end();
			if (out_json && write_perftest(out_json, &ends, cres, &h, e.g.tb.mtu))
				r = 1;
		}
	}
	exp_close(&e);
	return r ? CTL_FAIL : CTL_OK;
}
