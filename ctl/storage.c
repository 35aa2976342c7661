// SPDX-License-Identifier: MIT
/*
 * rdmactl storage: fio-like block I/O by one-sided RDMA from an initiator
 * node to a target node's volume, with data verification. fio's figures:
 * IOPS, bandwidth, completion latency percentiles per direction. Exit 1
 * when any block fails verification.
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
		"usage: rdmactl [-j] storage [--client NODE] [--server NODE] [--rw PATTERN] [--bs B]\n"
		"                       [--iodepth N] [--iters N] [--volume B] [--rwmixread P]\n"
		"  the client (initiator) READs/WRITEs blocks of the server's (target's) volume;\n"
		"  PATTERN: read|write|randread|randwrite|rw|randrw (default randrw, bs 4k,\n"
		"  iodepth 16, 2000 I/Os, volume 16M); every read is verified, then every block.\n");
}

static json_t *lat_summary(const json_t *hj, struct hist *h)
{
	if (hist_from_json(h, hj))
		return json_null();
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "count", (json_int_t)h->count, "min",
			 (json_int_t)(h->count ? h->min : 0), "p50",
			 (json_int_t)hist_quantile(h, 0.5), "p99", (json_int_t)hist_quantile(h, 0.99),
			 "p99_9", (json_int_t)hist_quantile(h, 0.999), "max", (json_int_t)h->max);
}

int cmd_storage(struct ctl *ctl, int argc, char **argv)
{
	const char *client = "node0", *server = "node1";
	json_t *opts = json_object(), *cres = NULL, *sres = NULL;
	struct hist hr, hw;
	char err[512];
	struct pair p;
	int i, rc = 1;

	{
		const struct ctl_arg own[] = { { "client", &client }, { "server", &server },
					       { NULL, NULL } };

		i = ctl_args("storage", argc, argv, 0, own, opts, usage);
		if (i) {
			json_decref(opts);
			return i == CLI_EXIT_OK ? 0 : 2;
		}
	}
	if (pair_open(&p, client, server)) {
		json_decref(opts);
		return 1;
	}
	if (pair_run(&p, "storage", opts, &cres, &sres, err, sizeof(err))) {
		log_err("%s", err);
		goto out;
	}
	{
		json_t *rl = lat_summary(json_object_get(cres, "read_lat_ns"), &hr);
		json_t *wl = lat_summary(json_object_get(cres, "write_lat_ns"), &hw);
		json_int_t bad = json_integer_value(json_object_get(cres, "mismatches"));

		if (ctl->json) {
			json_t *o = json_deep_copy(cres);

			json_object_set_new(o, "schema_version", json_integer(1));
			json_object_set_new(o, "initiator", json_string(p.tb.node[p.ci].name));
			json_object_set_new(o, "target", json_string(p.tb.node[p.si].name));
			json_object_set_new(o, "read_lat_summary_ns", rl);
			json_object_set_new(o, "write_lat_summary_ns", wl);
			json_dumpf(o, stdout, JSON_INDENT(2));
			putchar('\n');
			json_decref(o);
		} else {
			struct hist *hs[2] = { &hr, &hw };
			const char *dir[2] = { "read", "write" };

			printf("storage: %s -> %s: rw=%s, bs=%lld, iodepth=%lld, volume=%lld\n",
			       p.tb.node[p.ci].name, p.tb.node[p.si].name,
			       json_string_value(json_object_get(cres, "rw")),
			       json_integer_value(json_object_get(cres, "bs")),
			       json_integer_value(json_object_get(cres, "iodepth")),
			       json_integer_value(json_object_get(cres, "volume")));
			for (int d = 0; d < 2; d++) {
				char k1[32], k2[32];

				if (!hs[d]->count)
					continue;
				snprintf(k1, sizeof(k1), "%s_iops", dir[d]);
				snprintf(k2, sizeof(k2), "%s_bw_bytes_per_s", dir[d]);
				printf("  %5s: IOPS=%.0f, BW=%.2fMiB/s, clat (us): min=%.1f p50=%.1f "
				       "p99=%.1f p99.9=%.1f max=%.1f\n",
				       dir[d], json_real_value(json_object_get(cres, k1)),
				       json_real_value(json_object_get(cres, k2)) / 1048576.0,
				       hs[d]->min / 1e3, hist_quantile(hs[d], 0.5) / 1e3,
				       hist_quantile(hs[d], 0.99) / 1e3, hist_quantile(hs[d], 0.999) / 1e3,
				       hs[d]->max / 1e3);
			}
			printf("  verify: %lld reads checked, %lld mismatches (final pass over every "
			       "block: %lld)\n",
			       json_integer_value(json_object_get(cres, "verified_reads")), bad,
			       json_integer_value(json_object_get(cres, "final_pass_mismatches")));
			json_decref(rl);
			json_decref(wl);
		}
		rc = bad ? 1 : 0;
		if (bad)
			log_err("storage: %lld blocks failed verification", (long long)bad);
	}
out:
	json_decref(cres);
	json_decref(sres);
	json_decref(opts);
	pair_close(&p);
	return rc;
}
