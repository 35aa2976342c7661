// SPDX-License-Identifier: MIT
/* The text table of a report and the comparison of two, from the metric table. */
#include <stdio.h>
#include <string.h>
#include "ctl/report/report.h"
#include "ebpf/inject_abi.h"

/* the footnote of the columns a text table may have */
static const char *footnote(enum measure m)
{
	switch (m) {
	case MEASURE_OPS:
		return "p99 x: the first arm's p99 over this arm's; verify: every read and every "
		       "stored update checked\n# linear.: kv: every round's history of operations "
		       "linearizable (FAILED: rdmactl report shows the failing operations)";
	case MEASURE_TRAIN:
		return "TTA x: the first arm's time to accuracy over this arm's";
	case MEASURE_EXEC:
		return "wall: from the first role's start to the last one's end, per run; exit: the "
		       "first role's nonzero status (124: ended at its timeout)";
	default:
		return "p99 x: the first arm's p99 over this arm's; linf: mean per-step L-inf error "
		       "against the exact result\n# codec, xport: a step's p50 time in the transform "
		       "(hadamard's encode and decode) and in the transport (the ring's sends and "
		       "receives)";
	}
}

/* one comparison line (a vs_arms entry v of arm): ratio and difference */
static void print_vs(const json_t *arm, const json_t *v, FILE *f)
{
	const json_t *rc, *dc;

	if ((rc = json_object_get(v, "tta_ratio_ci95")))
		fprintf(f, "#   TTA %s / TTA %s = %.2f (95%% CI %.2f-%.2f; %llu seeds, paired)\n",
			jr_str(v, "arm"), jr_str(arm, "name"), jr_real(v, "tta_ratio"),
			json_real_value(json_array_get(rc, 0)), json_real_value(json_array_get(rc, 1)),
			(unsigned long long)jr_u64(v, "tta_pairs"));
	rc = json_object_get(v, "p99_ratio_ci95");
	dc = json_object_get(v, "p99_diff_ci95_ns");
	fprintf(f, "#   p99 %s / p99 %s = %.2f (95%% CI %.2f-%.2f); p99 %s - p99 %s = %.2f ms "
		"(95%% CI %.2f to %.2f)\n",
		jr_str(v, "arm"), jr_str(arm, "name"), jr_real(v, "p99_ratio"),
		json_real_value(json_array_get(rc, 0)), json_real_value(json_array_get(rc, 1)),
		jr_str(v, "arm"), jr_str(arm, "name"), jr_real(v, "p99_diff_ns") / 1e6,
		json_real_value(json_array_get(dc, 0)) / 1e6, json_real_value(json_array_get(dc, 1)) / 1e6);
}

/* each arm's RC settings (an rc arm's comparisons rest on them), then every
 * pair of arms (vs_arms; a report without: each against the first), p99
 * ratio and difference with their bootstrap intervals */
void report_print_compare(const json_t *arms, FILE *f)
{
	const json_t *arm, *v, *rs;
	size_t i, k;

	json_array_foreach(arms, i, arm) {
		if (!(rs = json_object_get(arm, "rc_settings")))
			continue;
		fprintf(f, "# %s: RC ACK timeout %.1f ms (rc_timeout %llu), rc_retry_cnt %llu%s\n",
			jr_str(arm, "name"), jr_real(rs, "timeout_ns") / 1e6,
			(unsigned long long)jr_u64(rs, "timeout"),
			(unsigned long long)jr_u64(rs, "retry_cnt"),
			jr_u64(rs, "retry_cnt") == 7 ? " (infinite on rxe)" : "");
	}
	json_array_foreach(arms, i, arm) {
		const json_t *all = json_object_get(arm, "vs_arms");

		if (json_is_array(all))
			json_array_foreach(all, k, v)
				print_vs(arm, v, f);
		else if ((v = json_object_get(arm, "vs_first_arm")))
			print_vs(arm, v, f);
	}
}

/* training over several seeds: each arm's seeds, how many reached the
 * target, the TTA's and the accuracy's means */
void report_print_seeds(const json_t *arms, FILE *f)
{
	const json_t *arm;
	size_t i;

	json_array_foreach(arms, i, arm) {
		const json_t *sd = json_object_get(arm, "seeds"), *ci = json_object_get(arm, "tta_ns_ci95");

		if (json_array_size(sd) < 2)
			continue;
		fprintf(f, "# %s: %zu seeds, %llu reached the target", jr_str(arm, "name"),
			json_array_size(sd), (unsigned long long)jr_u64(arm, "tta_reached"));
		if (json_is_array(ci))
			fprintf(f, "; TTA mean %.2f s (95%% CI %.2f-%.2f)", jr_real(arm, "tta_ns_mean") / 1e9,
				json_real_value(json_array_get(ci, 0)) / 1e9,
				json_real_value(json_array_get(ci, 1)) / 1e9);
		fprintf(f, "; accuracy mean %.3f\n", jr_real(arm, "final_accuracy_mean"));
	}
}

void report_print_lin(const json_t *arm, const char *lead, FILE *f)
{
	const json_t *l = json_object_get(arm, "linearizable"), *lc = json_object_get(arm, "lin_check");
	const json_t *ce = json_object_get(arm, "lin_counterexample"), *op;
	size_t i;

	if (!lc)
		return;
	fprintf(f, "%slinearizable: %s (%llu operations checked in %.3f s, %.0f ops/s, %llu search "
		"states)\n", lead,
		json_is_true(l) ? "yes" : json_is_false(l) ? "NO" : "undecided (search budget)",
		(unsigned long long)jr_u64(lc, "ops"), jr_real(lc, "seconds"), jr_real(lc, "ops_per_s"),
		(unsigned long long)jr_u64(lc, "states"));
	if (!ce)
		return;
	fprintf(f, "%sno order of these operations on key %llu%s explains what they saw%s", lead,
		(unsigned long long)jr_u64(ce, "key"),
		!strcmp(jr_str(ce, "object") ?: "", "counter") ? "'s counter" : "",
		json_is_true(json_object_get(ce, "minimal")) ? " (without any one of them, one does)" :
							       "");
	if (jr_u64(ce, "after"))
		fprintf(f, ", starting from %llu (what the key's %llu operations before them left)",
			(unsigned long long)jr_u64(ce, "from"), (unsigned long long)jr_u64(ce, "after"));
	fprintf(f, ":\n");
	json_array_foreach(json_object_get(ce, "ops"), i, op)
		fprintf(f, "%s  client %lld %-4s key %-8llu [%llu, %llu] ns  saw %llu\n", lead,
			json_integer_value(json_object_get(op, "client")), jr_str(op, "op"),
			(unsigned long long)jr_u64(op, "key"), (unsigned long long)jr_u64(op, "call_ns"),
			(unsigned long long)jr_u64(op, "ret_ns"), (unsigned long long)jr_u64(op, "saw"));
}

/* the members' kernels, when they are not all one */
static void report_print_kernels(const json_t *rep, FILE *f)
{
	const json_t *nk = json_object_get(json_object_get(rep, "testbed"), "node_kernels"), *x;
	const char *k0 = jr_str(json_array_get(nk, 0), "kernel");
	size_t i;
	int same = 1;

	json_array_foreach(nk, i, x)
		same &= !strcmp(jr_str(x, "kernel"), k0);
	if (same)
		return;
	fputs("# kernels:", f);
	json_array_foreach(nk, i, x)
		fprintf(f, "%s %s %s", i ? "," : "", jr_str(x, "node"), jr_str(x, "kernel"));
	fputc('\n', f);
}

/* node faults: what happened when, and what it did to each round it met */
static void report_print_node_faults(const json_t *rep, FILE *f)
{
	const json_t *x, *m;
	size_t i, j;

	json_array_foreach(json_object_get(rep, "node_events"), i, x) {
		if (json_is_false(json_object_get(x, "reached")))
			fprintf(f, "# node fault %s: %s %s at %.1f s: not reached (the run ended)\n",
				jr_str(x, "fault"), jr_str(x, "event"), jr_str(x, "node"),
				jr_real(x, "planned_s"));
		else
			fprintf(f, "# node fault %s: %s %s at %.1f s, %.1f s%s%s%s\n", jr_str(x, "fault"),
				jr_str(x, "event"), jr_str(x, "node"), jr_real(x, "t_s"),
				jr_real(x, "took_s"),
				json_is_true(json_object_get(x, "at_run_end")) ? " (at the run's end)" : "",
				json_object_get(x, "error") ? ": " : "",
				json_object_get(x, "error") ? jr_str(x, "error") : "");
	}
	json_array_foreach(json_object_get(rep, "node_fault_effects"), i, x) {
		fprintf(f, "#   %s round %llu: %s", jr_str(x, "arm"),
			(unsigned long long)jr_u64(x, "round"), jr_str(x, "outcome"));
		if (json_object_get(x, "error"))
			fprintf(f, ": %s", jr_str(x, "error"));
		if (json_object_get(x, "members"))
			fprintf(f, " (not in the arm's figures)");
		fputc('\n', f);
		json_array_foreach(json_object_get(x, "members"), j, m) {
			const json_t *res = json_object_get(m, "result");

			if (json_object_get(res, "clients_done")) {	/* a server stopped */
				fprintf(f, "#     %s served; stopped with %llu client(s) done: %llu "
					"slot(s) left locked, %llu bad\n", jr_str(m, "node"),
					(unsigned long long)jr_u64(res, "clients_done"),
					(unsigned long long)jr_u64(res, "locked_slots"),
					(unsigned long long)jr_u64(res, "bad_slots"));
				continue;
			}
			fprintf(f, "#     %s %s after %llu iterations in %.1f s", jr_str(m, "node"),
				jr_str(m, "outcome"), (unsigned long long)jr_u64(m, "ops_streamed"),
				jr_real(m, "streamed_s"));
			if (json_object_get(m, "error"))
				fprintf(f, ": %s", jr_str(m, "error"));
			fputc('\n', f);
		}
	}
}

/* what each arm's traffic met: its fault rules' packets matched and hit */
static void print_faults_met(const json_t *arms, FILE *f)
{
	const json_t *arm, *c;
	const char *name;
	size_t i, k;

	json_array_foreach(arms, i, arm) {
		const json_t *met = json_object_get(arm, "faults_met");
		int first = 1;

		if (!json_object_size(met))
			continue;
		fprintf(f, "# faults met by %s:", jr_str(arm, "name"));
		json_object_foreach((json_t *)met, name, c) {
			fprintf(f, "%s %s matched %llu", first ? "" : ";", name,
				(unsigned long long)jr_u64(c, "matched"));
#define MET_HIT(n)                                                                                 \
	if (strcmp(#n, "matched") && strcmp(#n, "matched_bytes") && jr_u64(c, #n))               \
		fprintf(f, ", %s %llu", #n, (unsigned long long)jr_u64(c, #n));
			INJ_COUNTERS(MET_HIT)
#undef MET_HIT
			first = 0;
		}
		fputc('\n', f);
	}
	json_array_foreach(arms, i, arm) {	/* nodes rebooted after a command's timeout */
		json_array_foreach(json_object_get(arm, "node_resets"), k, c)
			fprintf(f, "# node reset in %s, round %llu: %s %s after %.1f s (%s)%s%s\n",
				jr_str(arm, "name"), (unsigned long long)jr_u64(c, "round"),
				jr_str(c, "node"),
				json_is_true(json_object_get(c, "ok")) ? "rebooted" : "NOT reset",
				json_real_value(json_object_get(c, "seconds")), jr_str(c, "why"),
				json_object_get(c, "error") ? ": " : "", json_object_get(c, "error") ?
				jr_str(c, "error") : "");
	}
}

void report_print_text(const json_t *rep, FILE *f)
{
	const json_t *arms = json_object_get(rep, "arms"), *arm;
	enum measure ms = report_measure(rep);
	const struct metric *m;
	char cell[64];
	size_t i;

	fprintf(f, "# %s: %s, %s%s\n", jr_str(json_object_get(rep, "profile"), "name"),
		jr_str(rep, "workload"), jr_str(rep, "status"),
		json_is_true(json_object_get(rep, "partial")) ? " (partial)" : "");
	fprintf(f, "# %-10s %-8s", "arm", "mode");
	for (m = report_metrics; m->name; m++)
		if (metric_column(m, MW_TEXT, ms, arms))
			fprintf(f, " %*s", m->width, m->name);
	fputc('\n', f);
	json_array_foreach(arms, i, arm) {
		fprintf(f, "  %-10s %-8s", jr_str(arm, "name"), jr_str(arm, "mode"));
		for (m = report_metrics; m->name; m++) {
			if (!metric_column(m, MW_TEXT, ms, arms))
				continue;
			metric_cell(m, arm, json_array_get(arms, 0), 0, cell, sizeof(cell));
			fprintf(f, " %*s", m->width, cell);
		}
		fputc('\n', f);
	}
	if (json_array_size(arms) > 1) {
		fprintf(f, "# %s\n", footnote(ms));
		report_print_compare(arms, f);
	}
	if (report_any_short(arms))
		fprintf(f, "# %s\n", report_short_note);
	{	/* what "retransmissions" counted: once, or per arm when they differ */
		const char *src0 = jr_str(json_array_get(arms, 0), "retransmissions_source");
		int same = 1;

		json_array_foreach(arms, i, arm)
			same = same && !strcmp(jr_str(arm, "retransmissions_source") ?: "", src0 ?: "");
		if (same)
			fprintf(f, "# retransmissions: %s\n", arm_retrans_what(src0, 0));
		else if (!same)
			json_array_foreach(arms, i, arm)
				fprintf(f, "# retransmissions of %s: %s\n", jr_str(arm, "name"),
					arm_retrans_what(jr_str(arm, "retransmissions_source"), 0));
	}
	report_print_seeds(arms, f);
	print_faults_met(arms, f);
	json_array_foreach(arms, i, arm) {	/* losses against errors, per iteration */
		const json_t *ac = json_object_get(arm, "accounting");

		if (jr_u64(ac, "wrong_without_loss"))
			fprintf(f, "# WRONG: %s: %llu of %llu iterations had a wrong element and no "
				"piece lost on any rank\n",
				jr_str(arm, "name"), (unsigned long long)jr_u64(ac, "wrong_without_loss"),
				(unsigned long long)jr_u64(ac, "iterations"));
		if (jr_u64(ac, "loss_without_wrong"))
			fprintf(f, "# late data: %s: %llu of %llu iterations lost a piece yet ended with "
				"nothing wrong (its bytes landed after the step gave up on them)\n",
				jr_str(arm, "name"), (unsigned long long)jr_u64(ac, "loss_without_wrong"),
				(unsigned long long)jr_u64(ac, "iterations"));
	}
	json_array_foreach(arms, i, arm) {	/* kv: the history's check */
		char lead[48];

		snprintf(lead, sizeof(lead), "# %s: ", jr_str(arm, "name"));
		report_print_lin(arm, lead, f);
	}
	report_print_roles(rep, f);
	report_print_kernels(rep, f);
	report_print_node_faults(rep, f);
	report_print_expectations(rep, f);
}

