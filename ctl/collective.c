// SPDX-License-Identifier: MIT
/*
 * rdmactl collective: nccl-tests for the testbed, and the side-by-side
 * comparison of the recovery modes.
 *
 * One line per size and mode, with nccl-tests' columns (time, algbw, busbw,
 * #wrong) plus step-time percentiles from the merged per-rank histograms,
 * and for the lossy modes the lost fraction, gradient error and NIC
 * retransmissions. `--modes rc,lossy,hadamard` compares modes in one run:
 * the iterations are split into --rounds rounds, and each round runs every
 * mode in turn on the same nodes under the same injector rules. Modes take
 * turns rather than run at once so that each has the CPUs (and rxe's kernel
 * threads) to itself while measured: run together, the one stalled in
 * retransmission timeouts would hand its CPU time to the others. Exit 1 if
 * any element is wrong where nothing was lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctl.h"
#include "report.h"
#include "session.h"
#include "../lib/hist.h"
#include "../lib/log.h"
#include "../lib/num.h"

#define MAX_MODES 4

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmactl [-j] collective OP [--nodes node0,node1,...] [--size BYTES | --sizes MIN:MAX]\n"
		"                           [--mode M | --modes M1,M2,... [--rounds R]] [--iters N]\n"
		"                           [--warmup N] [--data ints|gauss|laplace|grad] [workload options]\n"
		"  OP: allreduce | reduce_scatter | allgather (ring, float32 sum, out of place),\n"
		"      broadcast [--root R] (ring pipeline) | alltoall (direct)\n"
		"  --mode rc|lossy|hadamard|ec (ring ops; hadamard: allreduce only):\n"
		"      rc        RC QPs, the NIC retransmits (--rc_timeout, --rc_retry_cnt)\n"
		"      lossy     UC, one WRITE_WITH_IMM per MTU, end markers, adaptive step\n"
		"                timeout; losses zero-filled (--fill previous: the piece's\n"
		"                value one iteration earlier) and reported\n"
		"      hadamard  lossy on a randomized Hadamard transform (--block, --rescale)\n"
		"      ec        lossy plus ISA-L parity (--ec_k, --ec_m)\n"
		"  --modes compares modes in one run, taking turns in --rounds rounds (default 5)\n"
		"  --sizes MIN:MAX doubles from MIN to MAX (nccl-tests -b/-e/-f 2); default --size 1M\n"
		"  time = the slowest rank's mean; algbw = size/time; busbw as in nccl-tests\n"
		"  `rdma-agent --list` (or -h on the agent) lists every workload option\n");
}

static void print_line(const json_t *o)
{
	double p = json_real_value(json_object_get(o, "lost_fraction")) * 100;
	const json_t *g = json_object_get(o, "grad_error");

	printf("  %10lld %-8s %10.1f %10.1f %10.1f %10.1f %10.4f %8lld %8lld",
	       json_integer_value(json_object_get(o, "size")),
	       json_string_value(json_object_get(o, "mode")),
	       json_real_value(json_object_get(o, "time_avg_ns")) / 1e3,
	       (double)json_integer_value(json_object_get(o, "time_p50_ns")) / 1e3,
	       (double)json_integer_value(json_object_get(o, "time_p99_ns")) / 1e3,
	       (double)json_integer_value(json_object_get(o, "time_max_ns")) / 1e3,
	       json_real_value(json_object_get(o, "busbw_bytes_per_s")) / 1e9,
	       json_integer_value(json_object_get(o, "wrong")),
	       json_integer_value(json_object_get(o, "retransmissions")));
	if (json_object_get(o, "lost_pieces"))
		printf(" %7.3f%%", p);
	else
		printf(" %8s", "-");
	if (g)
		printf(" %9.2e %9.3g %8.5f %8.5f", json_real_value(json_object_get(g, "nmse_mean")),
		       json_real_value(json_object_get(g, "linf_mean")),
		       json_real_value(json_object_get(g, "cosine_mean")),
		       json_real_value(json_object_get(g, "cosine_min")));
	putchar('\n');
}

static int parse_modes(const char *s, const char **modes, char *buf, size_t len)
{
	static const char *const known[] = { "rc", "lossy", "hadamard", "ec", NULL };
	int n = 0, i;
	char *tok, *save;

	snprintf(buf, len, "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; known[i] && strcmp(known[i], tok); i++)
			;
		if (!known[i] || n == MAX_MODES) {
			log_err("--modes '%s': %s", s, !known[i] ? "expected rc, lossy, hadamard or ec" :
				"at most 4 modes");
			return -1;
		}
		modes[n++] = known[i];
	}
	if (!n)
		log_err("--modes '%s': expected rc, lossy, hadamard or ec", s);
	return n ? n : -1;
}

int cmd_collective(struct ctl *ctl, int argc, char **argv)
{
	const char *nodes = NULL, *why, *op, *sizes = NULL, *modes_s = NULL, *rounds_s = NULL;
	const char *modes[MAX_MODES] = { NULL };
	uint64_t lo = 1 << 20, hi = 1 << 20, size, rounds = 1, iters = 20, warm;
	json_t *opts, *all = json_array(), *results;
	struct group g;
	char err[512], mbuf[64];
	int i, m, nm = 1, rc = 0, r, any_uc = 0;
	uint64_t wrong_total = 0;

	if (argc < 1 || !strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		usage(argc < 1 ? stderr : stdout);
		json_decref(all);
		return argc < 1 ? 2 : 0;
	}
	op = argv[0];
	opts = json_pack("{s:s}", "op", op);
	{
		const struct ctl_arg own[] = { { "nodes", &nodes }, { "size", &sizes },
					       { "sizes", &sizes }, { "modes", &modes_s },
					       { "rounds", &rounds_s }, { NULL, NULL } };
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
		if (modes_s && json_object_get(opts, "mode")) {
			log_err("--mode and --modes: give one of them");
			goto usage_err;
		}
		if (modes_s && (nm = parse_modes(modes_s, modes, mbuf, sizeof(mbuf))) < 0)
			goto usage_err;
		if (!modes_s)
			modes[0] = json_string_value(json_object_get(opts, "mode")) ?
					   json_string_value(json_object_get(opts, "mode")) : "rc";
		rounds = modes_s ? 5 : 1;
		if (rounds_s && num_parse(rounds_s, NUM_PLAIN, 1, 1000, &rounds, &why)) {
			log_err("--rounds '%s': %s (1..1000)", rounds_s, why);
			goto usage_err;
		}
		if (json_object_get(opts, "iters") &&
		    num_parse(json_string_value(json_object_get(opts, "iters")), NUM_PLAIN, 1, 1000000,
			      &iters, &why)) {
			log_err("--iters '%s': %s (1..1000000)",
				json_string_value(json_object_get(opts, "iters")), why);
			goto usage_err;
		}
		if (iters < rounds) {
			log_err("--iters %llu: fewer than --rounds %llu", (unsigned long long)iters,
				(unsigned long long)rounds);
			goto usage_err;
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
		printf("), float32%s", !strcmp(op, "allreduce") || !strcmp(op, "reduce_scatter") ?
					       " sum" : "");
		if (nm > 1)
			printf(", %llu rounds of %d modes taking turns", (unsigned long long)rounds, nm);
		printf("\n# %10s %-8s %10s %10s %10s %10s %10s %8s %8s %8s %9s %9s %8s %8s\n", "size",
		       "mode", "time[us]", "p50[us]", "p99[us]", "max[us]", "busbw[GB/s]", "#wrong",
		       "retrans", "lost", "nmse", "linf", "cosine", "cos_min");
	}
	for (size = lo; size <= hi && !rc; size *= 2) {
		struct arm_acc acc[MAX_MODES];
		uint64_t done = 0;

		for (m = 0; m < nm; m++)
			arm_acc_init(&acc[m], modes[m], modes[m]);
		json_object_set_new(opts, "size", json_integer((json_int_t)size));
		for (uint64_t rd = 0; rd < rounds && !rc; rd++) {
			/* spread iters over the rounds; warm-up in the first round only */
			uint64_t n = iters / rounds + (rd < iters % rounds);

			warm = rd ? 0 : 2;
			if (json_object_get(opts, "warmup") && !rd)
				warm = (uint64_t)atoll(json_string_value(json_object_get(opts, "warmup")));
			for (m = 0; m < nm && !rc; m++) {
				json_t *o = json_deep_copy(opts);

				json_object_set_new(o, "mode", json_string(modes[m]));
				json_object_set_new(o, "iters", json_integer((json_int_t)n));
				json_object_set_new(o, "warmup", json_integer((json_int_t)warm));
				r = group_run(&g, "collective", o, &results, err, sizeof(err));
				json_decref(o);
				if (r) {
					log_err("%s%s%s", nm > 1 ? modes[m] : "", nm > 1 ? ": " : "", err);
					rc = 1;
					break;
				}
				arm_acc_add(&acc[m], results, n);
				json_decref(results);
			}
			done += n;
			if (!ctl->json && nm > 1 && isatty(2))
				fprintf(stderr, "\r  %llu: round %llu/%llu, %llu/%llu iterations per mode ",
					(unsigned long long)size, (unsigned long long)rd + 1,
					(unsigned long long)rounds, (unsigned long long)done,
					(unsigned long long)iters);
		}
		if (!ctl->json && nm > 1 && isatty(2))
			fprintf(stderr, "\r%60s\r", "");
		for (m = 0; m < nm && !rc; m++) {
			json_t *line = arm_acc_json(&acc[m]);

			/* wrong elements are a failure unless a lossy mode lost pieces:
			 * then they are what losing data means (zero-filled) */
			if (!acc[m].lost)
				wrong_total += acc[m].wrong;
			any_uc = any_uc || acc[m].uc;
			if (!ctl->json)
				print_line(line);
			json_array_append_new(all, line);
		}
		if (!rc && nm > 1 && !ctl->json) {
			for (m = 1; m < nm; m++) {
				double p = (double)hist_quantile(&acc[m].h, 0.99);

				printf("#   p99 %s / p99 %s = %.2f\n", modes[0], modes[m],
				       p > 0 ? (double)hist_quantile(&acc[0].h, 0.99) / p : 0);
			}
		}
		for (m = 0; m < nm; m++)
			arm_acc_fini(&acc[m]);
		fflush(stdout);
	}
	(void)any_uc;
	if (ctl->json && !rc) {
		json_t *o = json_pack("{s:i,s:s,s:i,s:I,s:O,s:o}", "schema_version", 2, "op", op,
				      "nranks", g.n, "rounds", (json_int_t)rounds, "opts", opts,
				      "results", all);

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
