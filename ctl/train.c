// SPDX-License-Identifier: MIT
/*
 * rdmactl train: the data-parallel training job (workload `train`) once per
 * recovery mode, one after the other on the same nodes under the same
 * injector rules, and the time-to-accuracy comparison. A training run is a
 * whole job, so modes run in turn, not interleaved; the accuracy and TTA
 * figures are rank 0's (every rank's are in the JSON).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
#include "session.h"
#include "../lib/hist.h"
#include "../lib/log.h"

#define MAX_MODES 4

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmactl [-j] train [--nodes node0,node1,...] [--mode M | --modes M1,M2,...]\n"
		"                      [--steps N] [--batch N] [--lr X] [--target P] [--eval_every N]\n"
		"                      [collective options: --step_timeout_min, --ec_k, ...]\n"
		"  data-parallel SGD of a ~204k-parameter MLP on a synthetic task; gradients\n"
		"  allreduced in each mode (rc, lossy, hadamard, ec); reports time to --target\n"
		"  accuracy (TTA, training clock: evaluation excluded), final accuracy and step times\n");
}

int cmd_train(struct ctl *ctl, int argc, char **argv)
{
	static const char *const known[] = { "rc", "lossy", "hadamard", "ec", NULL };
	const char *nodes = NULL, *modes_s = NULL, *modes[MAX_MODES];
	json_t *opts = json_object(), *all = json_array(), *results;
	struct group g;
	char err[512], buf[64], *tok, *save;
	int i, m, nm = 0, rc = 0;
	double tta0 = 0;

	{
		const struct ctl_arg own[] = { { "nodes", &nodes }, { "modes", &modes_s }, { NULL, NULL } };

		i = ctl_args("train", argc, argv, 0, own, opts, usage);
		if (i) {
			json_decref(opts);
			json_decref(all);
			return i == CLI_EXIT_OK ? 0 : 2;
		}
	}
	if (modes_s && json_object_get(opts, "mode")) {
		log_err("--mode and --modes: give one of them");
		goto usage_err;
	}
	snprintf(buf, sizeof(buf), "%s",
		 modes_s ? modes_s : json_object_get(opts, "mode") ?
		 json_string_value(json_object_get(opts, "mode")) : "rc");
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; known[i] && strcmp(known[i], tok); i++)
			;
		if (!known[i] || nm == MAX_MODES) {
			log_err("--modes: '%s': %s", tok, known[i] ? "at most 4 modes" :
				"expected rc, lossy, hadamard or ec");
			goto usage_err;
		}
		modes[nm++] = known[i];
	}
	if (group_open(&g, nodes)) {
		json_decref(opts);
		json_decref(all);
		return 1;
	}
	if (!ctl->json)
		printf("# rdmactl train: %d ranks, data-parallel SGD; modes run in turn\n"
		       "# %-8s %6s %9s %9s %8s %10s %10s %8s %8s\n", g.n, "mode", "steps", "TTA[s]",
		       "train[s]", "acc", "p50[ms]", "p99[ms]", "lost", "TTA x");
	for (m = 0; m < nm && !rc; m++) {
		json_t *o = json_deep_copy(opts), *r0, *line;
		struct hist h;
		json_t *e, *tta;
		size_t k;
		double t;

		json_object_set_new(o, "mode", json_string(modes[m]));
		if (group_run(&g, "train", o, &results, err, sizeof(err))) {
			log_err("%s: %s", modes[m], err);
			json_decref(o);
			rc = 1;
			break;
		}
		json_decref(o);
		hist_init(&h);
		json_array_foreach(results, k, e) {
			struct hist one;

			if (!hist_from_json(&one, json_object_get(e, "time_ns")))
				hist_merge(&h, &one);
		}
		r0 = json_array_get(results, 0);
		tta = json_object_get(r0, "tta_ns");
		t = json_is_integer(tta) ? (double)json_integer_value(tta) / 1e9 : 0;
		if (!m)
			tta0 = t;
		line = json_pack("{s:s,s:O,s:O,s:O,s:O,s:I,s:I,s:I,s:o,s:O}", "mode", modes[m], "tta_ns",
				 tta, "final_accuracy", json_object_get(r0, "final_accuracy"),
				 "train_time_ns", json_object_get(r0, "train_time_ns"), "curve",
				 json_object_get(r0, "curve"), "step_p50_ns",
				 (json_int_t)hist_quantile(&h, 0.5), "step_p99_ns",
				 (json_int_t)hist_quantile(&h, 0.99), "step_max_ns", (json_int_t)h.max,
				 "step_hist_ns", hist_to_json(&h), "ranks", results);
		if (json_object_get(r0, "lost_fraction"))
			json_object_set(line, "lost_fraction", json_object_get(r0, "lost_fraction"));
		if (m && tta0 > 0 && t > 0)
			json_object_set_new(line, "tta_ratio_vs_first", json_real(tta0 / t));
		if (!ctl->json) {
			printf("  %-8s %6lld ", modes[m],
			       json_integer_value(json_object_get(r0, "steps")));
			if (t > 0)
				printf("%9.2f", t);
			else
				printf("%9s", "never");
			printf(" %9.2f %8.3f %10.1f %10.1f",
			       (double)json_integer_value(json_object_get(r0, "train_time_ns")) / 1e9,
			       json_real_value(json_object_get(r0, "final_accuracy")),
			       (double)hist_quantile(&h, 0.5) / 1e6, (double)hist_quantile(&h, 0.99) / 1e6);
			if (json_object_get(r0, "lost_fraction"))
				printf(" %7.3f%%",
				       100 * json_real_value(json_object_get(r0, "lost_fraction")));
			else
				printf(" %8s", "-");
			if (m && tta0 > 0 && t > 0)
				printf(" %8.2f", tta0 / t);
			putchar('\n');
			fflush(stdout);
		}
		json_decref(results);
		json_array_append_new(all, line);
	}
	if (ctl->json && !rc) {
		json_t *o = json_pack("{s:i,s:i,s:O,s:o}", "schema_version", 1, "nranks", g.n, "opts",
				      opts, "results", all);

		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
		all = NULL;
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
