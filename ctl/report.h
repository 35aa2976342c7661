/* SPDX-License-Identifier: MIT */
/*
 * Run results as one model: per-arm accumulation of the agents' results
 * (used by `collective`, `run` and the TUI alike), the report JSON built
 * from it, and its renderings: text table, summary.csv, HdrHistogram
 * interval logs (.hlog), report.html (inline SVG).
 */
#ifndef RTB_REPORT_H
#define RTB_REPORT_H

#include <stdio.h>
#include <jansson.h>
#include "../lib/hist.h"

/* what one arm gathered over its rounds */
struct arm_acc {
	const char *name, *mode;
	struct hist h;
	double tsum;		/* sum over rounds of the slowest rank's mean x iters */
	uint64_t iters, wrong, lost, expected, lost_bytes, recovered, timeouts, retrans;
	double nmse_sum, nmse_max, linf_sum, linf_max, linf_rel_max, cos_sum, cos_min;
	uint64_t gsamples;
	double factor;		/* busbw / algbw */
	uint64_t size;
	json_t *hw;		/* hw counter deltas summed over ranks and rounds */
	json_t *rounds;		/* the per-rank results of every round */
	int uc;
};

void arm_acc_init(struct arm_acc *a, const char *name, const char *mode);
void arm_acc_fini(struct arm_acc *a);
/* one round's per-rank results (collective) of iters measured iterations */
void arm_acc_add(struct arm_acc *a, json_t *results, uint64_t iters);
/* kv, storage (results: the clients', then the server's): every client
 * gains "time_ns", its operations' latencies of every kind merged, and the
 * first one "wrong", the failed verifications (kv: bad slots and updates
 * the server does not hold; storage: mismatched reads), so that arm_acc
 * takes them as it takes collective ranks. Returns that count. */
uint64_t star_results_fold(const char *workload, json_t *results);
/* workloads measured per operation, not per step (kv, storage) */
int report_ops(const char *workload);
/* the arm's summary (collective figures; "ranks": the last round's) */
json_t *arm_acc_json(const struct arm_acc *a);

/* a report arm from its rounds (array of per-rank result arrays) */
json_t *report_arm(const char *workload, const char *name, const char *mode, json_t *rounds);
/* report.json, summary.csv, ARM.hlog, report.html into dir */
int report_write(json_t *report, const char *dir, char *err, size_t errlen);
void report_print_text(const json_t *report, FILE *f);
int report_csv(const json_t *report, FILE *f);
int report_html(const json_t *report, FILE *f);
/* one HdrHistogram interval log of an arm */
int report_hlog(const json_t *arm, json_int_t t0_ns, FILE *f);
/* HdrHistogram V2 compressed encoding of h, base64 (malloc'd) */
char *hist_hdr_base64(const struct hist *h);

#endif
