// SPDX-License-Identifier: MIT
/*
 * rdmactl storage: fio-like block I/O by one-sided RDMA from an initiator
 * node to a target node's volume, with data verification, run as an
 * experiment of one rc arm (ctl/exp/). fio's figures: IOPS, bandwidth,
 * completion latency percentiles per direction. Exit 1 when any block
 * fails verification.
 */
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
		"usage: rdmactl [-j] storage [--client NODE] [--server NODE] [--rw PATTERN] [--bs B]\n"
		"                       [--iodepth N] [--iters N] [--volume B] [--rwmixread P]\n"
		"  the client (initiator) READs/WRITEs blocks of the server's (target's) volume;\n"
		"  PATTERN: read|write|randread|randwrite|rw|randrw (default randrw, bs 4k,\n"
		"  iodepth 16, 2000 I/Os, volume 16M); every read is verified, then every block.\n");
	ctl_usage_wl(f, "storage");
}

/* fio's figures, as text or as JSON: the initiator's result as the agent
 * sent it, and per direction IOPS, bandwidth and completion latency */
static void print_result(const json_t *c, const char *client, const char *server)
{
	static const char *const dir[2] = { "read", "write" };

	print_merge(c);
	print_del("time_ns");
	print_del("wrong");
	print_str(PRINT_JSON, "kind", NULL, "rdma-testbed-storage");
	print_int(PRINT_JSON, "schema_version", NULL, CMD_SCHEMA_VERSION);
	print_str(PRINT_ANY, "initiator", "storage: %s -> ", client);
	print_str(PRINT_ANY, "target", "%s: ", server);
	print_text("rw=%s, bs=%lld, iodepth=%lld, volume=%lld\n", jr_str(c, "rw"),
		   json_integer_value(json_object_get(c, "bs")),
		   json_integer_value(json_object_get(c, "iodepth")),
		   json_integer_value(json_object_get(c, "volume")));
	print_open("lat_summary");
	for (int d = 0; d < 2; d++) {
		char k[32];
		struct hist h;

		snprintf(k, sizeof(k), "%s_lat_ns", dir[d]);
		if (hist_from_json(&h, json_object_get(c, k)))
			continue;
		print_json(dir[d], hist_summary_json(&h));
		if (!h.count)
			continue;
		snprintf(k, sizeof(k), "%s_iops", dir[d]);
		print_text("  %5s: IOPS=%.0f, ", dir[d], jr_real(c, k));
		snprintf(k, sizeof(k), "%s_bw_bytes_per_s", dir[d]);
		print_text("BW=%.2fMiB/s, clat (us): min=%.1f p50=%.1f p99=%.1f p99.9=%.1f max=%.1f\n",
			   jr_real(c, k) / 1048576.0, h.min / 1e3, hist_quantile(&h, 0.5) / 1e3,
			   hist_quantile(&h, 0.99) / 1e3, hist_quantile(&h, 0.999) / 1e3, h.max / 1e3);
	}
	print_close();
	print_text("  verify: %lld reads checked, %lld mismatches (final pass over every block: %lld)\n",
		   json_integer_value(json_object_get(c, "verified_reads")),
		   json_integer_value(json_object_get(c, "mismatches")),
		   json_integer_value(json_object_get(c, "final_pass_mismatches")));
}

int cmd_storage(struct ctl *ctl, int argc, char **argv)
{
	const char *client = "node0", *server = "node1";
	const struct ctl_arg own[] = { { "client", &client }, { "server", &server },
				       { NULL, NULL } };
	struct exp_opts o = { .no_report = 1, .need_testbed = 1 };
	static struct exp e;
	const json_t *c;
	char nodes[128];
	int r;

	memset(&e, 0, sizeof(e));
	profile_init(&e.p, "storage");
	e.loaded = 1;
	r = ctl_args("storage", argc, argv, 0, own, e.p.wopts, usage);
	if (!r && ctl_take_opt(e.p.wopts, "storage", "iters", &e.p.iters))
		r = CTL_USAGE;
	if (r) {
		exp_close(&e);
		return ctl_code(r);
	}
	profile_add_arm(&e.p, "rc", "rc", NULL);
	/* member 0 the initiator, member 1 the target */
	snprintf(nodes, sizeof(nodes), "%s,%s", client, server);
	o.nodes = nodes;
	r = exp_open(&e, ctl, &o);
	if (!r)
		exp_measure(&e);
	r = exp_finish(&e) || r;
	/* the initiator's result as the agent sent it (with its intervals) */
	c = json_array_get(json_array_get(e.rounds[0], 0), 0);
	if (c) {
		const char *cn = e.g.tb.node[e.g.node[0]].name, *sn = e.g.tb.node[e.g.node[1]].name;

		print_begin(ctl->json);
		print_result(c, cn, sn);
		print_end();
		if (json_integer_value(json_object_get(c, "mismatches")))
			log_err("storage: %lld blocks failed verification",
				json_integer_value(json_object_get(c, "mismatches")));
	}
	exp_close(&e);
	return r ? CTL_FAIL : CTL_OK;
}
