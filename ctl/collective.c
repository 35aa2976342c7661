// SPDX-License-Identifier: MIT
/*
 * rdmactl collective: nccl-tests for the testbed. One line per size, with
 * nccl-tests' columns (time, algbw, busbw, #wrong) plus step-time
 * percentiles from the merged per-rank histograms. Exit 1 if any element is
 * wrong.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
#include "session.h"
#include "../lib/hist.h"
#include "../lib/log.h"
#include "../lib/num.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmactl [-j] collective OP [--nodes node0,node1,...] [--size BYTES | --sizes MIN:MAX]\n"
		"                           [--iters N] [--warmup N] [--op_timeout T]\n"
		"  OP: allreduce | reduce_scatter | allgather (ring, float32 sum, out of place),\n"
		"      broadcast [--root R] (ring pipeline) | alltoall (direct)\n"
		"  --mode rc|lossy: lossy = UC, one WRITE_WITH_IMM per MTU, adaptive step timeout,\n"
		"      losses zero-filled and reported (ring ops; see --step_timeout_min/max)\n"
		"  --sizes MIN:MAX doubles from MIN to MAX (nccl-tests -b/-e/-f 2); default --size 1M\n"
		"  time = the slowest rank's mean; algbw = size/time; busbw as in nccl-tests\n");
}

int cmd_collective(struct ctl *ctl, int argc, char **argv)
{
	const char *nodes = NULL, *why, *op;
	uint64_t lo = 1 << 20, hi = 1 << 20, size;
	json_t *opts, *all = json_array(), *results;
	struct group g;
	char err[512];
	int i, rc = 0, r;
	uint64_t wrong_total = 0;
	int lossy = 0;

	if (argc < 1 || !strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		usage(argc < 1 ? stderr : stdout);
		json_decref(all);
		return argc < 1 ? 2 : 0;
	}
	op = argv[0];
	opts = json_pack("{s:s}", "op", op);
	{
		const char *sizes = NULL;
		const struct ctl_arg own[] = { { "nodes", &nodes }, { "size", &sizes },
					       { "sizes", &sizes }, { NULL, NULL } };
		char a[64], *colon;

		i = ctl_args("collective", argc, argv, 1, own, opts, usage);
		if (i) {
			json_decref(opts);
			json_decref(all);
			return i == CLI_EXIT_OK ? 0 : 2;
		}
		if (sizes) {
			snprintf(a, sizeof(a), "%s", sizes);
			colon = strchr(a, ':');
			if (colon)
				*colon = 0;
			if (num_parse(a, NUM_SIZE, 4, 256ULL << 20, &lo, &why) ||
			    (colon && num_parse(colon + 1, NUM_SIZE, 4, 256ULL << 20, &hi, &why))) {
				log_err("--size '%s': %s (4..256M, or MIN:MAX)", sizes, why);
				goto usage_err;
			}
			if (!colon)
				hi = lo;
			if (hi < lo) {
				log_err("--sizes '%s': MAX below MIN", sizes);
				goto usage_err;
			}
		}
	}
	if (group_open(&g, nodes)) {
		json_decref(opts);
		json_decref(all);
		return 1;
	}
	if (!ctl->json) {
		printf("# rdmactl collective %s: %d ranks (", op, g.n);
		for (i = 0; i < g.n; i++)
			printf("%s%s", i ? " " : "", g.tb.node[g.node[i]].name);
		printf("), float32%s, %s\n",
		       !strcmp(op, "allreduce") || !strcmp(op, "reduce_scatter") ? " sum" : "",
		       json_string_value(json_object_get(opts, "mode")) ?
			       json_string_value(json_object_get(opts, "mode")) : "rc");
		printf("# %10s %10s %12s %12s %12s %12s %12s %8s%s\n", "size", "count", "time[us]",
		       "p50[us]", "p99[us]", "algbw[GB/s]", "busbw[GB/s]", "#wrong",
		       json_string_value(json_object_get(opts, "mode")) &&
				       !strcmp(json_string_value(json_object_get(opts, "mode")), "lossy") ?
			       "     lost" : "");
	}
	for (size = lo; size <= hi; size *= 2) {
		struct hist h;
		double tmax = 0, algbw, busbw, factor;
		json_t *e, *line;
		uint64_t wrong = 0, lost = 0, expected = 0;
		size_t k;

		json_object_set_new(opts, "size", json_integer((json_int_t)size));
		r = group_run(&g, "collective", opts, &results, err, sizeof(err));
		if (r) {
			log_err("%s", err);
			rc = 1;
			break;
		}
		hist_init(&h);
		json_array_foreach(results, k, e) {
			struct hist one;
			double t = json_real_value(json_object_get(e, "time_avg_ns"));

			if (!hist_from_json(&one, json_object_get(e, "time_ns")))
				hist_merge(&h, &one);
			if (t > tmax)
				tmax = t;
			wrong += (uint64_t)json_integer_value(json_object_get(e, "wrong"));
			lost += (uint64_t)json_integer_value(json_object_get(e, "lost_pieces"));
			expected += (uint64_t)json_integer_value(json_object_get(e, "pieces_expected"));
		}
		lossy = lossy || json_object_get(json_array_get(results, 0), "lost_pieces");
		factor = json_real_value(json_object_get(json_array_get(results, 0), "busbw_bytes_per_s")) /
			 json_real_value(json_object_get(json_array_get(results, 0), "algbw_bytes_per_s"));
		algbw = (double)size / (tmax / 1e9);
		busbw = algbw * factor;
		/* wrong elements are a failure unless the lossy mode lost pieces:
		 * then they are what losing data means (zero-filled) */
		if (!lost)
			wrong_total += wrong;
		line = json_pack("{s:I,s:O,s:f,s:I,s:I,s:I,s:f,s:f,s:I,s:o,s:O}", "size",
				 (json_int_t)size, "count",
				 json_object_get(json_array_get(results, 0), "count"), "time_avg_ns", tmax,
				 "time_p50_ns", (json_int_t)hist_quantile(&h, 0.5), "time_p99_ns",
				 (json_int_t)hist_quantile(&h, 0.99), "time_max_ns", (json_int_t)h.max,
				 "algbw_bytes_per_s", algbw, "busbw_bytes_per_s", busbw, "wrong",
				 (json_int_t)wrong, "time_hist_ns", hist_to_json(&h), "ranks", results);
		if (json_object_get(json_array_get(results, 0), "lost_pieces")) {
			json_object_set_new(line, "lost_pieces", json_integer((json_int_t)lost));
			json_object_set_new(line, "lost_fraction",
					    json_real(expected ? (double)lost / (double)expected : 0));
		}
		json_array_append_new(all, line);
		if (!ctl->json && lossy)
			printf("  %10llu %10lld %12.1f %12.1f %12.1f %12.4f %12.4f %8llu %7.3f%%\n",
			       (unsigned long long)size,
			       json_integer_value(json_object_get(json_array_get(results, 0), "count")),
			       tmax / 1e3, hist_quantile(&h, 0.5) / 1e3, hist_quantile(&h, 0.99) / 1e3,
			       algbw / 1e9, busbw / 1e9, (unsigned long long)wrong,
			       expected ? 100.0 * (double)lost / (double)expected : 0);
		else if (!ctl->json)
			printf("  %10llu %10lld %12.1f %12.1f %12.1f %12.4f %12.4f %8llu\n",
			       (unsigned long long)size,
			       json_integer_value(json_object_get(json_array_get(results, 0), "count")),
			       tmax / 1e3, hist_quantile(&h, 0.5) / 1e3, hist_quantile(&h, 0.99) / 1e3,
			       algbw / 1e9, busbw / 1e9, (unsigned long long)wrong);
		json_decref(results);
		fflush(stdout);
	}
	if (ctl->json && !rc) {
		json_t *o = json_pack("{s:i,s:s,s:i,s:O,s:o}", "schema_version", 1, "op", op, "nranks",
				      g.n, "opts", opts, "results", all);

		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
		all = NULL;
	}
	if (!rc && wrong_total) {
		log_err("%llu wrong elements", (unsigned long long)wrong_total);
		rc = 1;
	}
	json_decref(all);
	json_decref(opts);
	group_close(&g);
	return rc;
usage_err:
	json_decref(opts);
	json_decref(all);
	return 2;
}
