// SPDX-License-Identifier: MIT
/*
 * rdmactl collective: nccl-tests-style collectives between agents, each
 * size an experiment of the workload `collective` (ctl/exp/): its modes
 * are the arms, taking turns in --rounds rounds, the testbed's nodes the
 * members, no fault rules of its own (rdmactl inject's stay). The numbers
 * are the report's; this file only reads argv and prints lines. Exit 1 if
 * any element is wrong where nothing was lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/base/print.h"
#include "ctl/cmd/cmds.h"
#include "ctl/exp/exp.h"
#include "ctl/report/report.h"
#include "lib/log.h"
#include "lib/num.h"

#define MAX_MODES PROF_MAX_ARMS

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmactl [-j] collective OP [--nodes node0,node1,...] [--size BYTES | --sizes MIN:MAX]\n"
		"                           [--mode M | --modes M1,M2,... [--rounds R]] [--iters N]\n"
		"                           [--warmup N] [--data ints|gauss|laplace|grad] [workload options]\n"
		"  OP: allreduce | reduce_scatter | allgather (ring, float32 sum, out of place),\n"
		"      broadcast [--root R] (ring pipeline) | alltoall (direct)\n"
		"  --mode rc|lossy|hadamard|ec|sr (ring ops; hadamard: allreduce only):\n"
		"      rc        RC QPs, the NIC retransmits (--rc_timeout, --rc_retry_cnt)\n"
		"      lossy     UC, one WRITE_WITH_IMM per MTU, end markers, adaptive step\n"
		"                timeout; losses zero-filled (--fill previous: the piece's\n"
		"                value one iteration earlier) and reported\n"
		"      hadamard  lossy on a randomized Hadamard transform (--block, --rescale)\n"
		"      ec        lossy plus ISA-L parity (--ec_k, --ec_m)\n"
		"      sr        UC with selective repeat: NACKs name the missing pieces, only\n"
		"                those are resent (RTO from the measured NACK-to-resend time)\n"
		"  --modes compares modes in one run, taking turns in --rounds rounds (default 5)\n"
		"  --sizes MIN:MAX doubles from MIN to MAX (nccl-tests -b/-e/-f 2); default --size 1M\n"
		"  time = the slowest rank's mean; algbw = size/time; busbw as in nccl-tests\n");
	ctl_usage_wl(f, "collective");
}

/* what argv asks for */
struct coll_args {
	const char *op, *nodes;
	uint64_t lo, hi, rounds, iters, warmup;
	const char *modes[MAX_MODES];
	int nm, nranks;
	json_t *opts;		/* the workload's options (strings) */
};

/* one arm of one size: a line of the table (nccl-tests' habit: printed as
 * it comes), or the report's arm in "results" */
static void print_arm(const json_t *o)
{
	const json_t *g = json_object_get(o, "grad_error"), *pc = json_object_get(o, "percentiles");

	print_open(NULL);
	print_merge(o);
	print_text("  %10lld %-8s %10.1f %10.1f %10.1f %10.1f %10.4f %8lld %8lld",
		   json_integer_value(json_object_get(o, "size")), jr_str(o, "mode"),
		   jr_real(o, "time_avg_ns") / 1e3, jr_real(pc, "p50_ns") / 1e3,
		   jr_real(pc, "p99_ns") / 1e3, jr_real(pc, "max_ns") / 1e3,
		   jr_real(o, "busbw_bytes_per_s") / 1e9, json_integer_value(json_object_get(o, "wrong")),
		   json_integer_value(json_object_get(o, "retransmissions")));
	if (json_object_get(o, "lost_pieces"))
		print_text(" %7.3f%%", jr_real(o, "lost_fraction") * 100);
	else
		print_text(" %8s", "-");
	if (g)
		print_text(" %9.2e %9.3g %8.5f %8.5f", jr_real(g, "nmse_mean"), jr_real(g, "linf_mean"),
			   jr_real(g, "cosine_mean"), jr_real(g, "cosine_min"));
	print_text("\n");
	print_close();
}

/* the table's head (text only) */
static void print_head(const struct coll_args *a, const struct exp *e)
{
	int i;

	print_text("# rdmactl collective %s: %d ranks (", a->op, e->g.n);
	for (i = 0; i < e->g.n; i++)
		print_text("%s%s", i ? " " : "", e->g.tb.node[e->g.node[i]].name);
	print_text("), float32%s", !strcmp(a->op, "allreduce") || !strcmp(a->op, "reduce_scatter") ?
					   " sum" : "");
	if (a->nm > 1)
		print_text(", %llu rounds of %d modes taking turns", (unsigned long long)a->rounds,
			   a->nm);
	print_text("\n# %10s %-8s %10s %10s %10s %10s %10s %8s %8s %8s %9s %9s %8s %8s\n", "size",
		   "mode", "time[us]", "p50[us]", "p99[us]", "max[us]", "busbw[GB/s]", "#wrong",
		   "retrans", "lost", "nmse", "linf", "cosine", "cos_min");
}

/* a numeric option taken out of the workload's options */
static int take_num(json_t *opts, const char *key, uint64_t min, uint64_t max, uint64_t *v)
{
	const char *s = json_string_value(json_object_get(opts, key)), *why;

	if (!s)
		return 0;
	if (num_parse(s, NUM_PLAIN, min, max, v, &why)) {
		log_err("--%s '%s': %s (%llu..%llu)", key, s, why, (unsigned long long)min,
			(unsigned long long)max);
		return -EINVAL;
	}
	json_object_del(opts, key);
	return 0;
}

static int parse_sizes(const char *sizes, uint64_t *lo, uint64_t *hi)
{
	char a[64], *colon;
	const char *why;

	snprintf(a, sizeof(a), "%s", sizes);
	colon = strchr(a, ':');
	if (colon)
		*colon = 0;
	if (num_parse(a, NUM_SIZE, 4, 256ULL << 20, lo, &why) ||
	    (colon && num_parse(colon + 1, NUM_SIZE, 4, 256ULL << 20, hi, &why))) {
		log_err("--size '%s': %s (4..256M, or MIN:MAX)", sizes, why);
		return -EINVAL;
	}
	if (!colon)
		*hi = *lo;
	if (*hi < *lo) {
		log_err("--sizes '%s': MAX below MIN", sizes);
		return -EINVAL;
	}
	return 0;
}

/* 0, CTL_HELP after --help, CTL_USAGE */
static int parse(struct coll_args *a, int argc, char **argv)
{
	const char *sizes = NULL, *modes_s = NULL, *rounds_s = NULL, *why;
	const struct ctl_arg own[] = { { "nodes", &a->nodes }, { "size", &sizes },
				       { "sizes", &sizes }, { "modes", &modes_s },
				       { "rounds", &rounds_s }, { NULL, NULL } };
	char err[256];
	int r;

	a->op = argv[0];
	a->lo = a->hi = 1 << 20;
	a->iters = 20;
	a->warmup = 2;
	a->opts = json_pack("{s:s}", "op", a->op);
	r = ctl_args("collective", argc, argv, 1, own, a->opts, usage);
	if (r)
		return r;
	if (sizes && parse_sizes(sizes, &a->lo, &a->hi))
		return CTL_USAGE;
	if (modes_s && json_object_get(a->opts, "mode")) {
		log_err("--mode and --modes: give one of them");
		return CTL_USAGE;
	}
	a->nm = wlc_modes_parse(modes_s ? modes_s : json_string_value(json_object_get(a->opts, "mode")) ?:
				"rc", a->modes, MAX_MODES, err, sizeof(err));
	if (a->nm < 0) {
		log_err("--mode%s %s", modes_s ? "s" : "", err);
		return CTL_USAGE;
	}
	json_object_del(a->opts, "mode");
	a->rounds = modes_s ? 5 : 1;
	if (rounds_s && num_parse(rounds_s, NUM_PLAIN, 1, 1000, &a->rounds, &why)) {
		log_err("--rounds '%s': %s (1..1000)", rounds_s, why);
		return CTL_USAGE;
	}
	if (take_num(a->opts, "iters", 1, 1000000, &a->iters) ||
	    take_num(a->opts, "warmup", 0, 100000, &a->warmup))
		return CTL_USAGE;
	if (a->iters < a->rounds) {
		log_err("--iters %llu: fewer than --rounds %llu", (unsigned long long)a->iters,
			(unsigned long long)a->rounds);
		return CTL_USAGE;
	}
	return 0;
}

/* one size: the experiment, its arms printed; the exit code */
static int run_size(struct ctl *ctl, struct coll_args *a, uint64_t size, int first)
{
	static struct exp e;
	struct exp_opts o = { .no_report = 1, .need_testbed = 1, .nodes = a->nodes };
	const json_t *arm;
	size_t i;
	int m, r;

	memset(&e, 0, sizeof(e));
	profile_init(&e.p, "collective");
	e.loaded = 1;
	json_object_update(e.p.wopts, a->opts);
	json_object_set_new(e.p.wopts, "size", json_integer((json_int_t)size));
	for (m = 0; m < a->nm; m++)
		profile_add_arm(&e.p, a->modes[m], a->modes[m], NULL);
	e.p.iters = a->iters;
	e.p.rounds = a->rounds;
	e.p.warmup = a->warmup;
	r = exp_open(&e, ctl, &o);
	if (!r) {
		a->nranks = e.g.n;
		if (first)
			print_head(a, &e);
		exp_measure(&e);
	}
	r = exp_finish(&e) || r ? CTL_FAIL : CTL_OK;
	json_array_foreach(json_object_get(e.report, "arms"), i, arm) {
		print_arm(arm);
		/* wrong elements are a failure unless the arm lost pieces: then
		 * they are what losing data means (zero-filled) */
		if (json_is_true(json_object_get(arm, "verification_failed")))
			log_err("%s: %lld wrong elements", jr_str(arm, "mode"),
				json_integer_value(json_object_get(arm, "wrong")));
	}
	if (!ctl->json && a->nm > 1 && !r)
		report_print_compare(json_object_get(e.report, "arms"), stdout);
	if (!ctl->json && first && !r)	/* what the retrans column counts (docs/traces.md) */
		printf("# retrans: %s\n",
		       arm_retrans_what(jr_str(json_array_get(json_object_get(e.report, "arms"), 0),
					       "retransmissions_source"), 0));
	fflush(stdout);
	exp_close(&e);
	return r;
}

int cmd_collective(struct ctl *ctl, int argc, char **argv)
{
	struct coll_args a;
	uint64_t size;
	int r;

	memset(&a, 0, sizeof(a));
	if (argc < 1 || !strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		usage(argc < 1 ? stderr : stdout);
		return argc < 1 ? CTL_USAGE : CTL_OK;
	}
	r = parse(&a, argc, argv);
	if (r) {
		json_decref(a.opts);
		return ctl_code(r);
	}
	print_begin(ctl->json);
	print_str(PRINT_JSON, "kind", NULL, "rdma-testbed-collective");
	print_int(PRINT_JSON, "schema_version", NULL, CMD_SCHEMA_VERSION);
	print_str(PRINT_JSON, "op", NULL, a.op);
	print_int(PRINT_JSON, "rounds", NULL, (long long)a.rounds);
	print_json("opts", json_incref(a.opts));
	print_array("results");	/* every size's arms, as the report has them */
	for (size = a.lo; size <= a.hi && !r; size *= 2)
		r = run_size(ctl, &a, size, size == a.lo);
	print_close();
	print_int(PRINT_JSON, "nranks", NULL, a.nranks);
	if (r)
		print_drop();
	else
		print_end();
	json_decref(a.opts);
	return r;
}
