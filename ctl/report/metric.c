// SPDX-License-Identifier: MIT
/*
 * The metric table: every figure a report, its CSV, its HTML page and the
 * TUI show, once. A renderer walks the table and keeps the entries of its
 * kind (metric_shown); a new figure is one entry here (and, if it is new
 * to the arm JSON, the line that puts it there).
 *
 * Paths are into a report arm (report.json's arms[]); the TUI builds the
 * same JSON from its live accumulator (arm_acc_summary) plus a "live"
 * object for what only a running arm has.
 */
#include <stdio.h>
#include <string.h>
#include "ctl/report/report.h"

#define S (1u << MEASURE_STEPS)
#define O (1u << MEASURE_OPS)
#define T (1u << MEASURE_TRAIN)
#define E (1u << MEASURE_EXEC)
#define ALL (S | O | T | E)
#define TXT MW_TEXT
#define CSV MW_CSV
#define HTM MW_HTML
#define LAT MW_TUI_LAT
#define THR MW_TUI_THR
#define TRN MW_TUI_TRN

/* the columns in the order they appear; CSV names carry the raw unit */
const struct metric report_metrics[] = {
	{ .name = "state", .where = MW_TUI, .measures = ALL, .kind = MK_STR, .path = "live.state",
	  .scale = 1, .fmt = "%s", .absent = "-", .tui_order = 1,
	  .doc = "what the arm is doing now: running, waiting (its rounds done for now) or not "
		"yet" },
	{ .name = "steps done", .where = LAT | THR | TRN, .measures = ALL, .kind = MK_NUM,
	  .path = "live.done", .scale = 1, .fmt = "%.0f", .absent = "-", .tui_order = 2,
	  .doc = "steps done so far by the arm that is running" },
	/* a collective's samples are its steps (the ranks of a step finish together) */
	{ .name = "steps", .where = TXT | HTM, .measures = S, .kind = MK_NUM, .path = "iters",
	  .scale = 1, .fmt = "%.0f", .width = 6, .absent = "-",
	  .doc = "steps measured: the samples of the step-time figures (the ranks of a "
		"collective finish a step together, so a step is one sample, not one a rank)" },
	{ .name = "count", .csv = "count", .where = CSV | HTM, .measures = S, .kind = MK_NUM,
	  .path = "count", .scale = 1, .fmt = "%.0f", .csv_fmt = "%.0f", .width = 6, .absent = "-",
	  .doc = "samples in the latency figures: steps, or operations" },
	{ .name = "ops", .where = TXT, .measures = O, .kind = MK_NUM, .path = "count", .scale = 1,
	  .fmt = "%.0f", .width = 8, .absent = "-",
	  .doc = "operations measured (kv, storage): the samples of the latency figures" },
	{ .name = "runs", .where = TXT, .measures = E, .kind = MK_NUM, .path = "count", .scale = 1,
	  .fmt = "%.0f", .width = 5, .absent = "-",
	  .doc = "runs of the exec roles that were measured" },
	{ .name = "exit", .where = TXT, .measures = E, .kind = MK_NUM, .path = "exit", .scale = 1,
	  .fmt = "%.0f", .width = 5, .absent = "-",
	  .doc = "the exit status of the first run of a role that failed; 0 when every run "
		"succeeded" },
	{ .name = "wall p50[s]", .where = TXT, .measures = E, .kind = MK_NUM,
	  .path = "percentiles.p50_ns", .scale = 1e9, .fmt = "%.3f", .width = 11, .absent = "-",
	  .doc = "median wall time of one run of the exec roles" },
	{ .name = "wall max[s]", .where = TXT, .measures = E, .kind = MK_NUM,
	  .path = "percentiles.max_ns", .scale = 1e9, .fmt = "%.3f", .width = 11, .absent = "-",
	  .doc = "longest wall time of one run of the exec roles" },
	{ .name = "TTA[s]", .csv = "tta_ns", .where = TXT | CSV | HTM, .measures = T,
	  .kind = MK_NUM, .path = "tta_ns", .scale = 1e9, .fmt = "%.2f", .csv_fmt = "%.0f",
	  .width = 9, .absent = "never",
	  .doc = "time to accuracy: training time until the held-out accuracy first reaches the "
		"target; \"never\" when it did not" },
	{ .name = "acc", .csv = "final_accuracy", .where = TXT | CSV | HTM, .measures = T,
	  .kind = MK_NUM, .path = "final_accuracy", .scale = 1, .fmt = "%.3f", .csv_fmt = "%.4f",
	  .width = 8, .absent = "-",
	  .doc = "held-out accuracy at the end of training" },
	{ .name = "accuracy", .where = TRN, .measures = ALL, .kind = MK_NUM,
	  .path = "live.accuracy", .scale = 1, .fmt = "%.3f", .absent = "-", .tui_order = 3,
	  .doc = "held-out accuracy at the latest evaluation of the running arm" },
	{ .name = "eval loss", .where = TRN, .measures = ALL, .kind = MK_NUM,
	  .path = "live.eval_loss", .scale = 1, .fmt = "%.3f", .absent = "-", .tui_order = 4,
	  .doc = "held-out loss at the latest evaluation of the running arm" },
	{ .name = "TTA [s]", .where = TRN, .measures = ALL, .kind = MK_NUM, .path = "live.tta_ns",
	  .scale = 1e9, .fmt = "%.2f", .absent = "never", .tui_order = 5,
	  .doc = "time to accuracy of the running arm, once reached" },
	{ .name = "min_ns", .csv = "min_ns", .where = CSV, .measures = ALL, .kind = MK_NUM,
	  .path = "percentiles.min_ns", .scale = 1, .fmt = "", .csv_fmt = "%.0f", .absent = "-",
	  .doc = "shortest step (operation)" },
	{ .name = "p50[ms]", .csv = "p50_ns", .where = TXT | CSV | HTM, .measures = S | T,
	  .kind = MK_NUM, .path = "percentiles.p50_ns", .scale = 1e6, .fmt = "%.2f",
	  .csv_fmt = "%.0f", .width = 10, .absent = "-",
	  .doc = "median step time (kv, storage: operation latency); from the log-linear "
		"histogram, within 0.8% of a measured value and never below it" },
	{ .name = "p50[us]", .where = TXT, .measures = O, .kind = MK_NUM,
	  .path = "percentiles.p50_ns", .scale = 1e3, .fmt = "%.1f", .width = 9, .absent = "-",
	  .doc = "median step time (kv, storage: operation latency); from the log-linear "
		"histogram, within 0.8% of a measured value and never below it" },
	{ .name = "p50 [ms]", .where = LAT, .measures = ALL, .kind = MK_NUM,
	  .path = "percentiles.p50_ns", .scale = 1e6, .fmt = "%.2f", .absent = "-", .tui_order = 10,
	  .doc = "median step time (kv, storage: operation latency); from the log-linear "
		"histogram, within 0.8% of a measured value and never below it" },
	{ .name = "step p50 [ms]", .where = TRN, .measures = ALL, .kind = MK_NUM,
	  .path = "percentiles.p50_ns", .scale = 1e6, .fmt = "%.2f", .absent = "-", .tui_order = 11,
	  .doc = "median step time (kv, storage: operation latency); from the log-linear "
		"histogram, within 0.8% of a measured value and never below it" },
	{ .name = "p90[ms]", .csv = "p90_ns", .where = CSV | HTM, .measures = ALL, .kind = MK_NUM,
	  .path = "percentiles.p90_ns", .scale = 1e6, .fmt = "%.2f", .csv_fmt = "%.0f", .width = 10,
	  .absent = "-",
	  .doc = "90th percentile of step time (operation latency)" },
	{ .name = "p99[ms]", .csv = "p99_ns", .where = TXT | CSV | HTM, .measures = S | T,
	  .kind = MK_NUM, .path = "percentiles.p99_ns", .scale = 1e6, .fmt = "%.2f",
	  .csv_fmt = "%.0f", .width = 10, .absent = "-",
	  .doc = "99th percentile of step time (operation latency); needs 100 samples, marked * "
		"with fewer" },
	{ .name = "p99[us]", .where = TXT, .measures = O, .kind = MK_NUM,
	  .path = "percentiles.p99_ns", .scale = 1e3, .fmt = "%.1f", .width = 9, .absent = "-",
	  .doc = "99th percentile of step time (operation latency); needs 100 samples, marked * "
		"with fewer" },
	{ .name = "p99 [ms]", .where = LAT, .measures = ALL, .kind = MK_NUM,
	  .path = "percentiles.p99_ns", .scale = 1e6, .fmt = "%.2f", .absent = "-", .tui_order = 12,
	  .doc = "99th percentile of step time (operation latency); needs 100 samples, marked * "
		"with fewer" },
	{ .name = "step p99 [ms]", .where = TRN, .measures = ALL, .kind = MK_NUM,
	  .path = "percentiles.p99_ns", .scale = 1e6, .fmt = "%.2f", .absent = "-", .tui_order = 13,
	  .doc = "99th percentile of step time (operation latency); needs 100 samples, marked * "
		"with fewer" },
	{ .name = "p99.9[ms]", .csv = "p99_9_ns", .where = TXT | CSV | HTM, .measures = S,
	  .kind = MK_NUM, .path = "percentiles.p99_9_ns", .scale = 1e6, .fmt = "%.2f",
	  .csv_fmt = "%.0f", .width = 10, .absent = "-",
	  .doc = "99.9th percentile of step time (operation latency); needs 1000 samples, "
		"marked * with fewer" },
	{ .name = "p99.9[us]", .where = TXT, .measures = O, .kind = MK_NUM,
	  .path = "percentiles.p99_9_ns", .scale = 1e3, .fmt = "%.1f", .width = 10, .absent = "-",
	  .doc = "99.9th percentile of step time (operation latency); needs 1000 samples, "
		"marked * with fewer" },
	{ .name = "p99.9 [ms]", .where = LAT, .measures = ALL, .kind = MK_NUM,
	  .path = "percentiles.p99_9_ns", .scale = 1e6, .fmt = "%.2f", .absent = "-",
	  .tui_order = 14,
	  .doc = "99.9th percentile of step time (operation latency); needs 1000 samples, "
		"marked * with fewer" },
	{ .name = "p99_99_ns", .csv = "p99_99_ns", .where = CSV, .measures = ALL, .kind = MK_NUM,
	  .path = "percentiles.p99_99_ns", .scale = 1, .fmt = "", .csv_fmt = "%.0f", .absent = "-",
	  .doc = "99.99th percentile of step time (operation latency); needs 10000 samples" },
	/* the first arm's p99 over this one's, 95% bootstrap interval (ctl/tui/model.c) */
	{ .name = "p99 1st/this", .where = LAT, .measures = ALL, .kind = MK_STR,
	  .path = "live.p99_vs_first", .scale = 1, .fmt = "%s", .absent = "-", .tui_order = 23,
	  .doc = "the first arm's p99 over this arm's, with its 95% bootstrap interval (above "
		"1: this arm's tail is shorter)" },
	{ .name = "now p50 [ms]", .where = MW_TUI, .measures = ALL, .kind = MK_NUM,
	  .path = "live.p50_ns", .scale = 1e6, .fmt = "%.2f", .absent = "-", .tui_order = 20,
	  .doc = "median step time in the latest 250 ms interval" },
	{ .name = "now p99 [ms]", .where = LAT, .measures = ALL, .kind = MK_NUM,
	  .path = "live.p99_ns", .scale = 1e6, .fmt = "%.2f", .absent = "-", .tui_order = 34,
	  .doc = "99th percentile of step time in the latest 250 ms interval" },
	{ .name = "max[ms]", .csv = "max_ns", .where = TXT | CSV | HTM, .measures = S,
	  .kind = MK_NUM, .path = "percentiles.max_ns", .scale = 1e6, .fmt = "%.2f",
	  .csv_fmt = "%.0f", .width = 10, .absent = "-",
	  .doc = "longest step (operation)" },
	{ .name = "max [ms]", .where = LAT, .measures = ALL, .kind = MK_NUM,
	  .path = "percentiles.max_ns", .scale = 1e6, .fmt = "%.2f", .absent = "-", .tui_order = 33,
	  .doc = "longest step (operation)" },
	{ .name = "max[us]", .where = TXT, .measures = O, .kind = MK_NUM,
	  .path = "percentiles.max_ns", .scale = 1e3, .fmt = "%.1f", .width = 10, .absent = "-",
	  .doc = "longest step (operation)" },
	{ .name = "mean_ns", .csv = "mean_ns", .where = CSV, .measures = ALL, .kind = MK_NUM,
	  .path = "percentiles.mean_ns", .scale = 1, .fmt = "", .csv_fmt = "%.1f", .absent = "-",
	  .doc = "mean step time (operation latency)" },
	{ .name = "mean [ms]", .where = THR, .measures = ALL, .kind = MK_NUM,
	  .path = "percentiles.mean_ns", .scale = 1e6, .fmt = "%.2f", .absent = "-",
	  .tui_order = 17,
	  .doc = "mean step time (operation latency)" },
	/* a collective's step in two parts: the transform (hadamard) and the ring */
	{ .name = "codec[ms]", .csv = "codec_p50_ns", .where = TXT | CSV | HTM, .measures = S,
	  .kind = MK_NUM, .path = "codec_ns.p50_ns", .scale = 1e6, .fmt = "%.2f", .csv_fmt = "%.0f",
	  .width = 10, .absent = "-",
	  .doc = "median time a step spent in the transform (hadamard's encode and decode, ec's "
		"parity): what the computer costs" },
	{ .name = "xport[ms]", .csv = "transport_p50_ns", .where = TXT | CSV | HTM, .measures = S,
	  .kind = MK_NUM, .path = "transport_ns.p50_ns", .scale = 1e6, .fmt = "%.2f",
	  .csv_fmt = "%.0f", .width = 10, .absent = "-",
	  .doc = "median time a step spent in the ring's transfers: what the network costs" },
	{ .name = "codec_mean_ns", .csv = "codec_mean_ns", .where = CSV, .measures = ALL,
	  .kind = MK_NUM, .path = "codec_ns.mean_ns", .scale = 1, .fmt = "", .csv_fmt = "%.1f",
	  .absent = "-",
	  .doc = "mean time a step spent in the transform" },
	{ .name = "transport_mean_ns", .csv = "transport_mean_ns", .where = CSV, .measures = ALL,
	  .kind = MK_NUM, .path = "transport_ns.mean_ns", .scale = 1, .fmt = "", .csv_fmt = "%.1f",
	  .absent = "-",
	  .doc = "mean time a step spent in the ring's transfers" },
	{ .name = "codec p50 [ms]", .where = LAT, .measures = ALL, .kind = MK_NUM,
	  .path = "codec_ns.p50_ns", .scale = 1e6, .fmt = "%.2f", .absent = "-", .tui_order = 35,
	  .doc = "median time a step spent in the transform (hadamard's encode and decode, ec's "
		"parity): what the computer costs" },
	{ .name = "xport p50 [ms]", .where = LAT, .measures = ALL, .kind = MK_NUM,
	  .path = "transport_ns.p50_ns", .scale = 1e6, .fmt = "%.2f", .absent = "-",
	  .tui_order = 36,
	  .doc = "median time a step spent in the ring's transfers: what the network costs" },
	{ .name = "busbw[MB/s]", .csv = "busbw_bytes_per_s", .where = TXT | CSV, .measures = S,
	  .kind = MK_NUM, .path = "busbw_bytes_per_s", .scale = 1e6, .fmt = "%.3f",
	  .csv_fmt = "%.1f", .width = 11, .absent = "-",
	  .doc = "bus bandwidth, nccl-tests' formula: algbw times the collective's factor "
		"(allreduce 2(n-1)/n)" },
	{ .name = "busbw [MB/s]", .where = THR, .measures = ALL, .kind = MK_NUM,
	  .path = "busbw_bytes_per_s", .scale = 1e6, .fmt = "%.3f", .absent = "-", .tui_order = 15,
	  .doc = "bus bandwidth, nccl-tests' formula: algbw times the collective's factor "
		"(allreduce 2(n-1)/n)" },
	{ .name = "algbw [MB/s]", .where = THR, .measures = ALL, .kind = MK_NUM,
	  .path = "algbw_bytes_per_s", .scale = 1e6, .fmt = "%.3f", .absent = "-", .tui_order = 16,
	  .doc = "algorithm bandwidth: the buffer size over the mean step time" },
	{ .name = "ops/s", .csv = "ops_per_s", .where = TXT | CSV, .measures = O, .kind = MK_NUM,
	  .path = "ops_per_s", .scale = 1, .fmt = "%.0f", .csv_fmt = "%.1f", .width = 10,
	  .absent = "-",
	  .doc = "operations completed per second" },
	{ .name = "lost", .csv = "lost_fraction", .where = TXT | CSV | HTM, .measures = S | T,
	  .kind = MK_PCT, .path = "lost_fraction", .scale = 1, .fmt = "%.3f%%", .csv_fmt = "%.6f",
	  .width = 8, .absent = "-",
	  .doc = "share of the data a lossy arm gave up (not there by its step's timeout), over "
		"every measured step" },
	{ .name = "lost [%]", .where = LAT | TRN, .measures = ALL, .kind = MK_NUM,
	  .path = "lost_fraction", .scale = 0.01, .fmt = "%.3f", .absent = "-", .tui_order = 21,
	  .doc = "share of the data a lossy arm gave up (not there by its step's timeout), over "
		"every measured step" },
	{ .name = "now lost [%]", .where = LAT, .measures = ALL, .kind = MK_NUM,
	  .path = "live.lost_fraction", .scale = 0.01, .fmt = "%.3f", .absent = "-",
	  .tui_order = 22,
	  .doc = "share of the data given up in the latest 250 ms interval" },
	{ .name = "lost_pieces", .csv = "lost_pieces", .where = CSV, .measures = ALL,
	  .kind = MK_NUM, .path = "lost_pieces", .scale = 1, .fmt = "", .csv_fmt = "%.0f",
	  .absent = "-",
	  .doc = "pieces (messages) given up" },
	{ .name = "lost bytes", .where = THR, .measures = ALL, .kind = MK_NUM, .path = "lost_bytes",
	  .scale = 1, .fmt = "%.0f", .absent = "-", .tui_order = 23,
	  .doc = "bytes given up" },
	{ .name = "recovered_pieces", .csv = "recovered_pieces", .where = CSV, .measures = ALL,
	  .kind = MK_NUM, .path = "recovered_pieces", .scale = 1, .fmt = "", .csv_fmt = "%.0f",
	  .absent = "-",
	  .doc = "pieces ec rebuilt from parity" },
	{ .name = "rebuilt (ec)", .where = THR, .measures = ALL, .kind = MK_NUM,
	  .path = "recovered_pieces", .scale = 1, .fmt = "%.0f", .absent = "-", .tui_order = 24,
	  .doc = "pieces ec rebuilt from parity" },
	{ .name = "step timeouts", .where = THR, .measures = ALL, .kind = MK_NUM,
	  .path = "step_timeouts", .scale = 1, .fmt = "%.0f", .absent = "-", .tui_order = 25,
	  .doc = "steps that ended at their timeout, with pieces missing" },
	{ .name = "retrans", .csv = "retransmissions", .where = TXT | CSV | HTM,
	  .measures = S | O | E, .kind = MK_NUM, .path = "retransmissions", .scale = 1,
	  .fmt = "%.0f", .csv_fmt = "%.0f", .width = 8, .absent = "-",
	  .doc = "packets resent: counted by the injector at the nodes' hooks when a rule is "
		"there, else rxe's completer_retry_err + rcvd_seq_err events (the report says "
		"which)" },
	{ .name = "retransmits", .where = LAT, .measures = ALL, .kind = MK_NUM,
	  .path = "retransmissions", .scale = 1, .fmt = "%.0f", .absent = "-", .tui_order = 26,
	  .doc = "packets resent: counted by the injector at the nodes' hooks when a rule is "
		"there, else rxe's completer_retry_err + rcvd_seq_err events (the report says "
		"which)" },
	/* rxe's counters over the arm's measured time */
	{ .name = "retries/s", .where = THR, .measures = ALL, .kind = MK_NUM,
	  .path = "hw_counters_delta.completer_retry_err", .per = "time_total_ns", .scale = 1e-9,
	  .fmt = "%.1f", .absent = "-", .tui_order = 27,
	  .doc = "rxe retry events (a request timed out or was NAKed) per second of the arm" },
	{ .name = "seq NAKs/s", .where = THR, .measures = ALL, .kind = MK_NUM,
	  .path = "hw_counters_delta.rcvd_seq_err", .per = "time_total_ns", .scale = 1e-9,
	  .fmt = "%.1f", .absent = "-", .tui_order = 28,
	  .doc = "sequence-error NAKs received per second" },
	{ .name = "out-of-seq/s", .where = THR, .measures = ALL, .kind = MK_NUM,
	  .path = "hw_counters_delta.out_of_seq_request", .per = "time_total_ns", .scale = 1e-9,
	  .fmt = "%.1f", .absent = "-", .tui_order = 29,
	  .doc = "requests that arrived out of sequence per second" },
	{ .name = "dup reqs/s", .where = THR, .measures = ALL, .kind = MK_NUM,
	  .path = "hw_counters_delta.duplicate_request", .per = "time_total_ns", .scale = 1e-9,
	  .fmt = "%.1f", .absent = "-", .tui_order = 30,
	  .doc = "duplicate requests received per second (a resend of what had arrived)" },
	{ .name = "nmse", .csv = "nmse_mean", .where = CSV, .measures = ALL, .kind = MK_NUM,
	  .path = "grad_error.nmse_mean", .scale = 1, .fmt = "%.3g", .csv_fmt = "%.6g", .width = 9,
	  .absent = "-",
	  .doc = "normalized mean squared error of the result against the exact sum, mean over "
		"steps" },
	{ .name = "linf", .csv = "linf_mean", .where = TXT | CSV | HTM, .measures = S,
	  .kind = MK_NUM, .path = "grad_error.linf_mean", .scale = 1, .fmt = "%.3g",
	  .csv_fmt = "%.6g", .width = 9, .absent = "-",
	  .doc = "largest absolute error of an element against the exact sum (L-inf), mean over "
		"steps" },
	{ .name = "L-inf error", .where = LAT | TRN, .measures = ALL, .kind = MK_NUM,
	  .path = "grad_error.linf_mean", .scale = 1, .fmt = "%.3g", .absent = "-", .tui_order = 31,
	  .doc = "largest absolute error of an element against the exact sum (L-inf), mean over "
		"steps" },
	{ .name = "cosine", .csv = "cosine_mean", .where = CSV | HTM | LAT | TRN, .measures = ALL,
	  .kind = MK_NUM, .path = "grad_error.cosine_mean", .scale = 1, .fmt = "%.5f",
	  .csv_fmt = "%.6f", .width = 8, .absent = "-", .tui_order = 32,
	  .doc = "cosine similarity of the result with the exact sum, mean over steps (1: "
		"exact)" },
	{ .name = "cos_min", .csv = "cosine_min", .where = CSV, .measures = ALL, .kind = MK_NUM,
	  .path = "grad_error.cosine_min", .scale = 1, .fmt = "%.5f", .csv_fmt = "%.6f", .width = 8,
	  .absent = "-",
	  .doc = "cosine similarity of the worst step" },
	{ .name = "verify", .where = TXT, .measures = O, .kind = MK_VERIFY,
	  .path = "verification_failed", .scale = 1, .fmt = "%s", .width = 7, .absent = "-",
	  .doc = "every read checked against what was written: ok, or FAILED" },
	/* kv: was every round's history linearizable (ctl/wl/kv.c) */
	{ .name = "linear.", .where = TXT, .measures = O, .kind = MK_VERIFY, .path = "lin_failed",
	  .scale = 1, .fmt = "%s", .width = 7, .absent = "-",
	  .doc = "kv: was every round's history linearizable: ok, or FAILED (rdmactl prints the "
		"operations that prove it)" },
	{ .name = "p99 x", .where = TXT, .measures = S | O, .kind = MK_RATIO,
	  .path = "percentiles.p99_ns", .scale = 1, .fmt = "%.2f", .width = 7, .absent = "-",
	  .doc = "the first arm's p99 over this arm's: above 1, this arm's tail is shorter" },
	{ .name = "TTA x", .where = TXT, .measures = T, .kind = MK_RATIO, .path = "tta_ns",
	  .scale = 1, .fmt = "%.2f", .width = 7, .absent = "-",
	  .doc = "the first arm's time to accuracy over this arm's: above 1, this arm is faster" },
	/* a tool's own figures (an exec role's parse:, ctl/wl/tool.h): columns
	 * of the text and HTML tables only in reports that have them */
#define FIO_COLS(D, d, o)                                                                          \
	{ .name = d " IOPS", .where = TXT | HTM | LAT, .measures = E, .kind = MK_NUM,              \
	  .path = "fio." D ".iops", .scale = 1, .fmt = "%.0f", .width = 8, .absent = "-",          \
	  .if_any = 1, .tui_order = (o),                                                           \
	  .doc = "fio: " D " I/Os a second, its jobs' added up (the worst run's)" },              \
	{ .name = d " p50[ms]", .where = TXT | HTM | LAT, .measures = E, .kind = MK_NUM,           \
	  .path = "fio." D ".clat.p50_ns", .scale = 1e6, .fmt = "%.2f", .width = 10, .absent = "-", \
	  .if_any = 1, .tui_order = (o) + 1,                                                       \
	  .doc = "fio: median " D " completion latency (fio's clat)" },                            \
	{ .name = d " p99[ms]", .where = TXT | HTM | LAT, .measures = E, .kind = MK_NUM,           \
	  .path = "fio." D ".clat.p99_ns", .scale = 1e6, .fmt = "%.2f", .width = 10, .absent = "-", \
	  .if_any = 1, .tui_order = (o) + 2,                                                       \
	  .doc = "fio: 99th percentile " D " completion latency" }
	FIO_COLS("read", "rd", 41),
	FIO_COLS("write", "wr", 44),
	{ .name = "pt MB/s", .where = TXT | HTM | LAT, .measures = E, .kind = MK_NUM,
	  .path = "perftest.bw_avg_bytes_per_s", .scale = 1e6, .fmt = "%.2f", .width = 9,
	  .absent = "-", .if_any = 1, .tui_order = 47,
	  .doc = "perftest (parse: perftest): BW average of its last row, in 10^6 bytes a second "
		"(perftest's own MB/sec is 2^20 bytes)" },
	{ .name = "pt lat[us]", .where = TXT | HTM | LAT, .measures = E, .kind = MK_NUM,
	  .path = "perftest.lat_typical_ns", .scale = 1e3, .fmt = "%.2f", .width = 10,
	  .absent = "-", .if_any = 1, .tui_order = 48,
	  .doc = "perftest: t_typical (its median) of its last row" },
	{ .name = "nvme resets", .where = TXT | HTM | LAT, .measures = E, .kind = MK_NUM,
	  .path = "nvme.error_recoveries", .scale = 1, .fmt = "%.0f", .width = 11, .absent = "-",
	  .if_any = 1, .tui_order = 49,
	  .doc = "NVMe-oF host (parse: nvmf): the controller's error recoveries "
		 "(a broken queue pair or connection), the kernel's count over the runs" },
	{ .name = "nfs retrans", .where = TXT | HTM | LAT, .measures = E, .kind = MK_NUM,
	  .path = "nfs.retrans", .scale = 1, .fmt = "%.0f", .width = 11, .absent = "-",
	  .if_any = 1, .tui_order = 50,
	  .doc = "NFS client (parse: nfs): RPC retransmissions over the runs, from "
		 "the mount's per-operation statistics (/proc/self/mountstats)" },
	{ .name = "verify", .where = TXT | HTM | LAT, .measures = E, .kind = MK_STR,
	  .path = "fio.verify", .scale = 1, .fmt = "%s", .width = 7, .absent = "-", .if_any = 1,
	  .tui_order = 40,
	  .doc = "fio: ok when every job verified what it wrote (verify=crc32c and the like), "
		"failed when one did not, off without verify" },
	/* the names expectations use ("rc: p99 < 5ms"), each with its unit */
	{ .name = "p50", .where = MW_EXPECT, .measures = ALL, .kind = MK_NUM, .path = "percentiles.p50_ns",
	  .scale = 1, .unit = MU_TIME, .doc = "median latency: a step's, an operation's, a run's wall time" },
	{ .name = "p90", .where = MW_EXPECT, .measures = ALL, .kind = MK_NUM, .path = "percentiles.p90_ns",
	  .scale = 1, .unit = MU_TIME, .doc = "90th percentile latency" },
	{ .name = "p99", .where = MW_EXPECT, .measures = ALL, .kind = MK_NUM, .path = "percentiles.p99_ns",
	  .scale = 1, .unit = MU_TIME, .doc = "99th percentile latency" },
	{ .name = "p99.9", .where = MW_EXPECT, .measures = ALL, .kind = MK_NUM, .path = "percentiles.p99_9_ns",
	  .scale = 1, .unit = MU_TIME, .doc = "99.9th percentile latency" },
	{ .name = "p99.99", .where = MW_EXPECT, .measures = ALL, .kind = MK_NUM, .path = "percentiles.p99_99_ns",
	  .scale = 1, .unit = MU_TIME, .doc = "99.99th percentile latency" },
	{ .name = "min", .where = MW_EXPECT, .measures = ALL, .kind = MK_NUM, .path = "percentiles.min_ns",
	  .scale = 1, .unit = MU_TIME, .doc = "the shortest latency" },
	{ .name = "max", .where = MW_EXPECT, .measures = ALL, .kind = MK_NUM, .path = "percentiles.max_ns",
	  .scale = 1, .unit = MU_TIME, .doc = "the longest latency" },
	{ .name = "mean", .where = MW_EXPECT, .measures = ALL, .kind = MK_NUM, .path = "percentiles.mean_ns",
	  .scale = 1, .unit = MU_TIME, .doc = "mean latency" },
	{ .name = "count", .where = MW_EXPECT, .measures = ALL, .kind = MK_NUM, .path = "count",
	  .scale = 1, .unit = MU_COUNT, .doc = "samples measured: steps, operations or runs" },
	{ .name = "lost", .where = MW_EXPECT, .measures = S | T, .kind = MK_NUM, .path = "lost_fraction",
	  .scale = 1, .unit = MU_FRAC, .doc = "fraction of the data pieces lost (lossy modes)" },
	{ .name = "wrong", .where = MW_EXPECT, .measures = S | O | T, .kind = MK_NUM, .path = "wrong",
	  .scale = 1, .unit = MU_COUNT, .doc = "results checked and found wrong" },
	{ .name = "retransmissions", .where = MW_EXPECT, .measures = ALL, .kind = MK_NUM, .path = "retransmissions",
	  .scale = 1, .unit = MU_COUNT, .doc = "packets resent (the trace's, the injector's hooks' or rxe's count)" },
	{ .name = "codec", .where = MW_EXPECT, .measures = S, .kind = MK_NUM, .path = "codec_ns.p50_ns",
	  .scale = 1, .unit = MU_TIME, .doc = "median time of a step's transform (hadamard)" },
	{ .name = "transport", .where = MW_EXPECT, .measures = S, .kind = MK_NUM, .path = "transport_ns.p50_ns",
	  .scale = 1, .unit = MU_TIME, .doc = "median time of a step's transport" },
	{ .name = "busbw", .where = MW_EXPECT, .measures = S, .kind = MK_NUM, .path = "busbw_bytes_per_s",
	  .scale = 1, .unit = MU_BW, .doc = "bus bandwidth, as nccl-tests computes it" },
	{ .name = "algbw", .where = MW_EXPECT, .measures = S, .kind = MK_NUM, .path = "algbw_bytes_per_s",
	  .scale = 1, .unit = MU_BW, .doc = "algorithm bandwidth: bytes per rank over the step time" },
	{ .name = "ops_per_s", .where = MW_EXPECT, .measures = O, .kind = MK_NUM, .path = "ops_per_s",
	  .scale = 1, .unit = MU_COUNT, .doc = "operations a second, the clients' added up" },
	{ .name = "nonlinearizable", .where = MW_EXPECT, .measures = O, .kind = MK_NUM, .path = "lin_check.violations",
	  .scale = 1, .unit = MU_COUNT, .doc = "kv: rounds whose history is not linearizable" },
	{ .name = "double_executed", .where = MW_EXPECT, .measures = O, .kind = MK_NUM, .path = "recovery.double_executed",
	  .scale = 1, .unit = MU_COUNT, .doc = "kv, recovery: operations the server holds twice" },
	{ .name = "lost_ops", .where = MW_EXPECT, .measures = O, .kind = MK_NUM, .path = "recovery.lost_ops",
	  .scale = 1, .unit = MU_COUNT, .doc = "kv, recovery: operations the server does not hold" },
	{ .name = "failures", .where = MW_EXPECT, .measures = O, .kind = MK_NUM, .path = "recovery.failures",
	  .scale = 1, .unit = MU_COUNT, .doc = "kv, recovery: QPs that broke" },
	{ .name = "reissued", .where = MW_EXPECT, .measures = O, .kind = MK_NUM, .path = "recovery.reissued",
	  .scale = 1, .unit = MU_COUNT, .doc = "kv, recovery: operations in flight issued again" },
	{ .name = "restored", .where = MW_EXPECT, .measures = O, .kind = MK_NUM, .path = "recovery.restored",
	  .scale = 1, .unit = MU_COUNT, .doc = "kv, recovery: operations in flight restored from the log" },
	{ .name = "tta", .where = MW_EXPECT, .measures = T, .kind = MK_NUM, .path = "tta_ns",
	  .scale = 1, .unit = MU_TIME, .doc = "time to accuracy" },
	{ .name = "accuracy", .where = MW_EXPECT, .measures = T, .kind = MK_NUM, .path = "final_accuracy",
	  .scale = 1, .unit = MU_FRAC, .doc = "held-out accuracy at the end of training" },
	{ .name = "exit", .where = MW_EXPECT, .measures = E, .kind = MK_NUM, .path = "exit",
	  .scale = 1, .unit = MU_COUNT, .per_role = 1, .doc = "a role's exit status (each role of an exec arm)" },
	{ .name = "wall", .where = MW_EXPECT, .measures = E, .kind = MK_NUM, .path = "wall_ns",
	  .scale = 1, .unit = MU_TIME, .per_role = 1, .doc = "a role's longest wall time (each role of an exec arm)" },
#define FIO_X(D, n, p, u, w)                                                                       \
	{ .name = "fio." D "." n, .where = MW_EXPECT, .measures = E, .kind = MK_NUM,               \
	  .path = "fio." D "." p, .scale = 1, .unit = u, .doc = "fio: " w }
#define FIO_EXPECT(D)                                                                              \
	FIO_X(D, "iops", "iops", MU_COUNT, D " I/Os a second"),                                    \
	FIO_X(D, "bw", "bw_bytes_per_s", MU_BW, D " bandwidth"),                                   \
	FIO_X(D, "clat_p50", "clat.p50_ns", MU_TIME, "median " D " completion latency"),          \
	FIO_X(D, "clat_p90", "clat.p90_ns", MU_TIME, "90th percentile " D " completion latency"), \
	FIO_X(D, "clat_p99", "clat.p99_ns", MU_TIME, "99th percentile " D " completion latency"), \
	FIO_X(D, "clat_p99.9", "clat.p99_9_ns", MU_TIME, "99.9th percentile " D " completion latency"), \
	FIO_X(D, "clat_max", "clat.max_ns", MU_TIME, "the longest " D " completion"),             \
	FIO_X(D, "clat_count", "clat.count", MU_COUNT, D " completions the percentiles come from")
	FIO_EXPECT("read"),
	FIO_EXPECT("write"),
	{ .name = "fio.verify", .where = MW_EXPECT, .measures = E, .kind = MK_NUM,
	  .path = "fio.verify_ok", .scale = 1, .unit = MU_VERDICT,
	  .doc = "fio: ok when every job verified what it wrote; no value without verify" },
/* a tool's figure (parse: TOOL), for expectations: TOOL.n at TOOL.p */
#define TOOL_X(t, n, p, u, w)                                                                      \
	{ .name = t "." n, .where = MW_EXPECT, .measures = E, .kind = MK_NUM, .path = t "." p,    \
	  .scale = 1, .unit = u, .doc = w }
#define PT_X(n, p, u, w) TOOL_X("perftest", n, p, u, "perftest: " w)
	PT_X("bw", "bw_avg_bytes_per_s", MU_BW, "BW average of its last row (the worst run's)"),
	PT_X("bw_peak", "bw_peak_bytes_per_s", MU_BW, "BW peak of its last row"),
	PT_X("msg_rate", "msg_rate_per_s", MU_COUNT, "messages a second"),
	PT_X("lat_typical", "lat_typical_ns", MU_TIME, "t_typical, the median latency"),
	PT_X("lat_avg", "lat_avg_ns", MU_TIME, "t_avg, the mean latency"),
	PT_X("lat_p99", "lat_p99_ns", MU_TIME, "99% percentile latency"),
	PT_X("lat_p99.9", "lat_p99_9_ns", MU_TIME, "99.9% percentile latency"),
	PT_X("lat_max", "lat_max_ns", MU_TIME, "t_max, the longest"),
#define QP_X(t, p, u, w)                                                                           \
	{ .name = "qperf." t, .where = MW_EXPECT, .measures = E, .kind = MK_NUM,                  \
	  .path = "qperf." t "." p, .scale = 1, .unit = u, .doc = "qperf: " t "'s " w }
#define QP_PAIR(t)                                                                                 \
	QP_X(t "_lat", "latency_ns", MU_TIME, "latency"), QP_X(t "_bw", "bw_bytes_per_s", MU_BW, "bandwidth")
	QP_PAIR("rc"), QP_PAIR("uc"), QP_PAIR("ud"), QP_PAIR("rc_rdma_read"), QP_PAIR("rc_rdma_write"),
	QP_PAIR("tcp"), QP_PAIR("udp"),
	TOOL_X("fabtests", "lat", "lat_ns", MU_TIME,
	       "fabtests (fi_pingpong, fi_rdm_*): usec/xfer of the last row, a transfer's time"),
	TOOL_X("fabtests", "bw", "bw_bytes_per_s", MU_BW,
	       "fabtests: MB/sec of the last row (10^6 bytes a second)"),
	TOOL_X("ucx_perftest", "lat", "lat_typical_ns", MU_TIME,
	       "ucx_perftest: the Final line's 50th percentile latency (or overhead, in a "
	       "bandwidth test)"),
	TOOL_X("ucx_perftest", "bw", "bw_bytes_per_s", MU_BW,
	       "ucx_perftest: the Final line's overall bandwidth (UCX's MB/s is 2^20 bytes)"),
	TOOL_X("ucx_perftest", "msg_rate", "msg_rate_per_s", MU_COUNT,
	       "ucx_perftest: the Final line's overall message rate"),
#define MPI_X(n, p, u, w) TOOL_X("mpi_bench", n, p, u, "rdmatb-mpi-bench (parse: mpi_bench): " w)
	MPI_X("allreduce_p50", "allreduce_p50_ns", MU_TIME, "MPI_Allreduce's median, the slowest rank's"),
	MPI_X("allreduce_p99", "allreduce_p99_ns", MU_TIME, "MPI_Allreduce's 99th percentile"),
	MPI_X("busbw", "busbw_bytes_per_s", MU_BW, "MPI_Allreduce's bus bandwidth at its median"),
	MPI_X("wrong", "wrong", MU_COUNT, "allreduce elements with a wrong sum, over every rank"),
	MPI_X("lat", "lat_p50_ns", MU_TIME, "ranks 0 and 1's median half round trip of 8 bytes"),
	MPI_X("bw", "bw_bytes_per_s", MU_BW, "rank 0 to rank 1's bandwidth (10^6 bytes a second)"),
	{ .name = "nvme.resets", .where = MW_EXPECT, .measures = E, .kind = MK_NUM,
	  .path = "nvme.error_recoveries", .scale = 1, .unit = MU_COUNT,
	  .doc = "NVMe-oF host (parse: nvmf): the controller's error recoveries over the runs" },
	{ .name = "nvme.reconnects", .where = MW_EXPECT, .measures = E, .kind = MK_NUM,
	  .path = "nvme.reconnects", .scale = 1, .unit = MU_COUNT,
	  .doc = "NVMe-oF host: the controller's reconnects after a recovery, over the runs" },
	{ .name = "nvme.connect", .where = MW_EXPECT, .measures = E, .kind = MK_NUM,
	  .path = "nvme.connect_ns", .scale = 1, .unit = MU_TIME,
	  .doc = "NVMe-oF host: the longest connect, until the namespace was there" },
	{ .name = "nfs.retrans", .where = MW_EXPECT, .measures = E, .kind = MK_NUM,
	  .path = "nfs.retrans", .scale = 1, .unit = MU_COUNT,
	  .doc = "NFS client (parse: nfs): RPC retransmissions over the runs (mountstats)" },
	{ .name = "nfs.timeouts", .where = MW_EXPECT, .measures = E, .kind = MK_NUM,
	  .path = "nfs.timeouts", .scale = 1, .unit = MU_COUNT,
	  .doc = "NFS client: RPC major timeouts over the runs (mountstats)" },
	{ .name = "nfs.reconnects", .where = MW_EXPECT, .measures = E, .kind = MK_NUM,
	  .path = "nfs.reconnects", .scale = 1, .unit = MU_COUNT,
	  .doc = "NFS client: the transport's connects after the first, over the runs" },
	{ .name = "nfs.mount", .where = MW_EXPECT, .measures = E, .kind = MK_NUM,
	  .path = "nfs.mount_ns", .scale = 1, .unit = MU_TIME,
	  .doc = "NFS client: the longest mount" },
	{ .name = "fio.errors", .where = MW_EXPECT, .measures = E, .kind = MK_NUM,
	  .path = "fio.errors", .scale = 1, .unit = MU_COUNT,
	  .doc = "fio: jobs that ended with an error (a failed verify is one)" },
	{ NULL },
};

int metric_shown(const struct metric *m, unsigned where, enum measure measure)
{
	if (!(m->where & where))
		return 0;
	/* CSV and HTML have one layout for every report: all their columns */
	return where & (MW_CSV | MW_HTML) ? 1 : !!(m->measures & (1u << measure));
}

int metric_column(const struct metric *m, unsigned where, enum measure measure, const json_t *arms)
{
	const json_t *arm;
	size_t i;

	if (!metric_shown(m, where, measure))
		return 0;
	if (!m->if_any)
		return 1;
	json_array_foreach(arms, i, arm)
		if (jr_path(arm, m->path))
			return 1;
	return 0;
}

/* the metric's number in arm: 1 and *v, or 0 */
int metric_value(const struct metric *m, const json_t *arm, double *v)
{
	const json_t *x = jr_path(arm, m->path);

	if (!json_is_number(x))
		return 0;
	*v = json_number_value(x);
	if (m->per) {
		const json_t *d = jr_path(arm, m->per);

		if (!json_is_number(d) || json_number_value(d) <= 0)
			return 0;
		*v /= json_number_value(d);
	}
	return 1;
}

/* the percentiles a report names, the samples each needs */
static const struct {
	const char *name, *key;
	uint64_t need;
} pcts[] = {
	{ "p50", "p50_ns", 2 },       { "p90", "p90_ns", 10 },          { "p99", "p99_ns", 100 },
	{ "p99.9", "p99_9_ns", 1000 }, { "p99.99", "p99_99_ns", 10000 },
};

const char report_short_note[] =
	REPORT_SHORT_MARK ": from fewer steps (operations) than the percentile needs (p99: 100, "
	"p99.9: 1000, p99.99: 10000): it is the largest or next to it";

uint64_t report_samples(const json_t *arm)
{
	if (jr_u64(arm, "iters"))
		return jr_u64(arm, "iters");
	if (jr_u64(arm, "steps"))
		return jr_u64(arm, "steps");
	return jr_u64(json_object_get(arm, "percentiles"), "count");
}

json_t *report_insufficient(const json_t *arm)
{
	const json_t *pc = json_object_get(arm, "percentiles");
	uint64_t n = report_samples(arm);
	json_t *a = json_array();

	for (size_t i = 0; pc && i < sizeof(pcts) / sizeof(pcts[0]); i++)
		if (n < pcts[i].need && json_object_get(pc, pcts[i].key))
			json_array_append_new(a, json_string(pcts[i].name));
	return a;
}

int report_any_short(const json_t *arms)
{
	const json_t *arm;
	size_t i;
	int any = 0;

	json_array_foreach(arms, i, arm) {
		json_t *a = report_insufficient(arm);

		any |= json_array_size(a) > 0;
		json_decref(a);
	}
	return any;
}

int report_pct_short(const char *path, const json_t *arm)
{
	const json_t *pc = json_object_get(arm, "percentiles");

	if (!path || strncmp(path, "percentiles.", 12) || !pc)
		return 0;
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		if (!strcmp(path + 12, pcts[i].key))
			return report_samples(arm) < pcts[i].need;
	return 0;
}

int metric_cell(const struct metric *m, const json_t *arm, const json_t *first, int csv,
		char *buf, size_t len)
{
	const json_t *x = jr_path(arm, m->path);
	double v, v0;

	/* a key present as null is a value that never came (TTA: "never"); a
	 * missing key is a figure this arm does not have */
	snprintf(buf, len, "%s", csv ? "" : json_is_null(x) ? m->absent : "-");
	switch (m->kind) {
	case MK_STR:
		if (!json_is_string(x))
			return 0;
		snprintf(buf, len, m->fmt, json_string_value(x));
		return 1;
	case MK_VERIFY:
		if (!json_is_boolean(x))
			return 0;
		snprintf(buf, len, "%s", json_is_true(x) ? "FAILED" : "ok");
		return 1;
	case MK_RATIO:
		if (!first || arm == first || !metric_value(m, arm, &v) || !metric_value(m, first, &v0) ||
		    v <= 0 || v0 <= 0)
			return 0;
		snprintf(buf, len, m->fmt, v0 / v);
		return 1;
	case MK_PCT:
	case MK_NUM:
		if (!metric_value(m, arm, &v))
			return 0;
		if (csv) {
			snprintf(buf, len, m->csv_fmt, v);
		} else {
			size_t k;

			snprintf(buf, len, m->fmt, (m->kind == MK_PCT ? 100 * v : v) / m->scale);
			k = strlen(buf);
			if (report_pct_short(m->path, arm) && k + 1 < len)
				snprintf(buf + k, len - k, "%s", REPORT_SHORT_MARK);
		}
		return 1;
	}
	return 0;
}

/* "ms" for a _ns path shown at 1e6, ...: the unit a column shows */
static const char *shown_unit(const struct metric *m)
{
	if (m->kind == MK_PCT)
		return "%";
	if (m->kind == MK_RATIO)
		return "ratio";
	if (m->kind != MK_NUM || m->per)
		return m->per ? "per s" : "";
	if (strstr(m->path, "_ns"))
		return m->scale == 1e9 ? "s" : m->scale == 1e6 ? "ms" : m->scale == 1e3 ? "us" : "ns";
	if (strstr(m->path, "bytes_per_s"))
		return m->scale == 1e6 ? "MB/s" : "B/s";
	return m->scale == 0.01 ? "%" : "";
}

static void doc_row(FILE *f, const struct metric *m, const char *name)
{
	fprintf(f, "| `%s` | %s | `%s%s%s` | %s |\n", name, shown_unit(m), m->path,
		m->per ? "` / `" : "", m->per ? m->per : "", m->doc);
}

void metric_doc(FILE *f)
{
	static const struct {
		unsigned bit;
		const char *title;
	} tui[] = { { MW_TUI_LAT, "latency" }, { MW_TUI_THR, "throughput" },
		    { MW_TUI_TRN, "training" } };
	static const char *const kinds[MEASURE_N] = {
		"collectives (steps)", "kv and storage (operations)", "training", "your programs (exec)"
	};
	const struct metric *m;
	int k, o;

	fprintf(f, "### The text table, by workload\n\n");
	for (k = 0; k < MEASURE_N; k++) {
		fprintf(f, "%s:\n\n| column | unit | report.json (arm) | what it is |\n|---|---|---|---|\n",
			kinds[k]);
		for (m = report_metrics; m->name; m++)
			if (metric_shown(m, MW_TEXT, (enum measure)k))
				doc_row(f, m, m->name);
		fprintf(f, "\n");
	}
	fprintf(f, "### summary.csv\n\nOne row an arm; raw values, the unit in the name.\n\n"
		   "| column | unit | report.json (arm) | what it is |\n|---|---|---|---|\n");
	for (m = report_metrics; m->name; m++)
		if (m->csv && (m->where & MW_CSV))
			fprintf(f, "| `%s` | %s | `%s` | %s |\n", m->csv,
				strstr(m->csv, "_ns") ? "ns" : "", m->path, m->doc);
	fprintf(f, "\n### report.html's table\n\n");
	for (m = report_metrics; m->name; m++)
		if (m->where & MW_HTML)
			fprintf(f, "%s`%s`", m == report_metrics ? "" : ", ", m->name);
	fprintf(f, "; as in the text table.\n");
	fprintf(f, "\n### Expectations\n\nThe metrics an expectation names (`ARM: METRIC OP VALUE`), by "
		   "the unit of its value.\n\n| metric | unit | report.json (arm) | what it is |\n"
		   "|---|---|---|---|\n");
	for (m = report_metrics; m->name; m++)
		if (m->where & MW_EXPECT)
			fprintf(f, "| `%s` | %s | `%s` | %s |\n", m->name,
				(const char *const[]){ "time", "fraction", "count", "rate", "ok or failed" }[m->unit],
				m->path, m->doc);
	for (k = 0; k < 3; k++) {
		fprintf(f, "\n### The TUI's %s view\n\nRows, the most telling first.\n\n"
			   "| row | unit | report.json (arm) | what it is |\n|---|---|---|---|\n",
			tui[k].title);
		for (o = 1; o < 100; o++)
			for (m = report_metrics; m->name; m++)
				if ((m->where & tui[k].bit) && m->tui_order == o)
					doc_row(f, m, m->name);
	}
}
