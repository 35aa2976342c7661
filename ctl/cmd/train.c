// SPDX-License-Identifier: MIT
/*
 * rdmactl train: the data-parallel training job (workload `train`) as one
 * experiment (ctl/exp/): one arm per recovery mode, each a whole job run
 * once, one after the other on the same nodes under the same injector
 * rules, and the time-to-accuracy comparison. The figures are the report's
 * (accuracy and TTA are rank 0's; every rank's are in the results); a line
 * is printed as each arm ends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/base/print.h"
#include "ctl/cmd/cmds.h"
#include "ctl/exp/exp.h"
#include "lib/log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmactl [-j] train [--nodes node0,node1,...] [--mode M | --modes M1,M2,...]\n"
		"                      [--steps N] [--batch N] [--lr X] [--target P] [--eval_every N]\n"
		"                      [--seeds N]\n"
		"                      [collective options: --step_timeout_min, --ec_k, ...]\n"
		"  data-parallel SGD of a ~204k-parameter MLP on a synthetic task; gradients\n"
		"  allreduced in each mode (rc, lossy, hadamard, ec); reports time to --target\n"
		"  accuracy (TTA, training clock: evaluation excluded), final accuracy and step times;\n"
		"  --seeds N runs every mode with seeds --seed .. --seed + N - 1 and pools them: mean\n"
		"  TTA with its 95%% interval, and the first mode's TTA over each other's, seed by seed\n");
	ctl_usage_wl(f, "train");
}

struct train_run {
	struct exp e;
	struct ctl *ctl;
	double tta0;
};

/* one arm: a line of the table as it ends, or its report arm in "results" */
static void print_arm(const json_t *o, double tta0, int seed)
{
	const json_t *pc = json_object_get(o, "percentiles");
	double t = jr_real(o, "tta_ns") / 1e9;

	print_open(NULL);
	print_merge(o);
	print_text("  %-8s %6lld ", jr_str(o, "mode"), json_integer_value(json_object_get(o, "steps")));
	if (t > 0)
		print_text("%9.2f", t);
	else
		print_text("%9s", "never");
	print_text(" %9.2f %8.3f %10.1f %10.1f", jr_real(o, "train_time_ns") / 1e9,
		   jr_real(o, "final_accuracy"), jr_real(pc, "p50_ns") / 1e6,
		   jr_real(pc, "p99_ns") / 1e6);
	if (json_object_get(o, "lost_fraction"))
		print_text(" %7.3f%%", 100 * jr_real(o, "lost_fraction"));
	else
		print_text(" %8s", "-");
	if (tta0 > 0 && t > 0)
		print_text(" %8.2f", tta0 / t);
	else if (seed)
		print_text(" %8s", "");
	if (seed)
		print_text("  seed %lld", json_integer_value(json_object_get(o, "seed")));
	print_text("\n");
	print_close();
	fflush(stdout);
}

/* an arm ended: its report arm, now */
static void arm_done(void *arg, int a, json_t *results, uint64_t iters)
{
	struct train_run *tr = arg;
	json_t *rounds = json_pack("[O]", results), *arm;
	double t;

	(void)iters;
	arm = wlc_report_arm(tr->e.wl, tr->e.p.arm[a].name, tr->e.p.arm[a].mode, rounds);
	t = jr_real(arm, "tta_ns") / 1e9;
	if (!a)	/* each seed's first arm is its baseline */
		tr->tta0 = t;
	else if (tr->tta0 > 0 && t > 0)
		json_object_set_new(arm, "tta_ratio_vs_first", json_real(tr->tta0 / t));
	print_arm(arm, a ? tr->tta0 : 0, tr->e.p.rounds > 1);
	json_decref(arm);
	json_decref(rounds);
}

/* argv into the experiment's profile: 0, CTL_HELP after --help, CTL_USAGE */
static int parse(struct train_run *tr, int argc, char **argv, const char **nodes)
{
	const char *modes_s = NULL, *modes[PROF_MAX_ARMS], *seeds_s = NULL;
	const struct ctl_arg own[] = { { "nodes", nodes }, { "modes", &modes_s }, { "seeds", &seeds_s },
				       { NULL, NULL } };
	struct profile *p = &tr->e.p;
	char err[256];
	int r, n, m;

	r = ctl_args("train", argc, argv, 0, own, p->wopts, usage);
	if (r)
		return r;
	if (modes_s && json_object_get(p->wopts, "mode")) {
		log_err("--mode and --modes: give one of them");
		return CTL_USAGE;
	}
	n = wlc_modes_parse(modes_s ? modes_s : json_string_value(json_object_get(p->wopts, "mode")) ?:
			    "rc", modes, PROF_MAX_ARMS, err, sizeof(err));
	if (n < 0) {
		log_err("--modes %s", err);
		return CTL_USAGE;
	}
	json_object_del(p->wopts, "mode");
	if (seeds_s) {	/* each arm once per seed: seed, seed + 1, ... */
		char *end;
		unsigned long v = strtoul(seeds_s, &end, 10);

		if (*seeds_s < '0' || *seeds_s > '9' || *end || v < 1 || v > 100) {
			log_err("--seeds %s: a count of seeds, 1..100", seeds_s);
			return CTL_USAGE;
		}
		p->rounds = v;
	}
	for (m = 0; m < n; m++)
		profile_add_arm(p, modes[m], modes[m], NULL);
	return 0;
}

int cmd_train(struct ctl *ctl, int argc, char **argv)
{
	static struct train_run tr;
	struct exp_opts o = { .no_report = 1, .need_testbed = 1 };
	int r;

	memset(&tr, 0, sizeof(tr));
	tr.ctl = ctl;
	profile_init(&tr.e.p, "train");
	tr.e.loaded = 1;
	r = parse(&tr, argc, argv, &o.nodes);
	if (r) {
		exp_close(&tr.e);
		return ctl_code(r);
	}
	print_begin(ctl->json);
	print_str(PRINT_JSON, "kind", NULL, "rdma-testbed-train");
	print_int(PRINT_JSON, "schema_version", NULL, CMD_SCHEMA_VERSION);
	print_json("opts", json_incref(tr.e.p.wopts));
	print_array("results");	/* each arm as it ended */
	r = exp_open(&tr.e, ctl, &o);
	if (!r) {
		print_text("# rdmactl train: %d ranks, data-parallel SGD; modes run in turn\n"
			   "# %-8s %6s %9s %9s %8s %10s %10s %8s %8s\n", tr.e.g.n, "mode", "steps",
			   "TTA[s]", "train[s]", "acc", "p50[ms]", "p99[ms]", "lost", "TTA x");
		tr.e.obs.arg = &tr;
		tr.e.obs.arm_done = arm_done;
		exp_measure(&tr.e);
	}
	r = exp_finish(&tr.e) || r ? CTL_FAIL : CTL_OK;
	print_close();
	print_int(PRINT_JSON, "nranks", NULL, tr.e.g.n);
	if (!r && tr.e.p.rounds > 1) {	/* the seeds pooled, as the report has them */
		print_json("pooled", json_incref(json_object_get(tr.e.report, "arms")));
		if (!print_json_on()) {
			report_print_seeds(json_object_get(tr.e.report, "arms"), stdout);
			report_print_compare(json_object_get(tr.e.report, "arms"), stdout);
		}
	}
	if (r)
		print_drop();
	else
		print_end();
	exp_close(&tr.e);
	return r;
}
