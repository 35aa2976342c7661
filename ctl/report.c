// SPDX-License-Identifier: MIT
/*
 * The run model and its renderings (see report.h). Everything a report
 * shows is computed here from the agents' results, and every rendering
 * (text, CSV, .hlog, HTML) reads the same report JSON: the one written to
 * report.json, so `rdmactl report DIR` redraws exactly what the run saw.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include "ctl.h"
#include "report.h"

void arm_acc_init(struct arm_acc *a, const char *name, const char *mode)
{
	memset(a, 0, sizeof(*a));
	a->name = name;
	a->mode = mode;
	hist_init(&a->h);
	a->hw = json_object();
	a->rounds = json_array();
}

void arm_acc_fini(struct arm_acc *a)
{
	json_decref(a->hw);
	json_decref(a->rounds);
	a->hw = a->rounds = NULL;
}

static double jreal(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
}

static uint64_t juint(const json_t *o, const char *k)
{
	return (uint64_t)json_integer_value(json_object_get(o, k));
}

void arm_acc_add(struct arm_acc *a, json_t *results, uint64_t iters)
{
	double tmax = 0;
	json_t *e;
	size_t k;

	json_array_foreach(results, k, e) {
		struct hist one;
		double t = jreal(e, "time_avg_ns");
		json_t *g = json_object_get(e, "grad_error"), *hw = json_object_get(e, "hw_counters_delta");
		const char *key;
		json_t *v;

		if (!hist_from_json(&one, json_object_get(e, "time_ns")))
			hist_merge(&a->h, &one);
		if (t > tmax)
			tmax = t;
		a->wrong += juint(e, "wrong");
		a->lost += juint(e, "lost_pieces");
		a->expected += juint(e, "pieces_expected");
		a->lost_bytes += juint(e, "lost_bytes");
		a->recovered += juint(e, "recovered_pieces");
		a->timeouts += juint(e, "step_timeouts");
		a->uc = a->uc || json_object_get(e, "lost_pieces");
		a->size = juint(e, "size");
		if (jreal(e, "algbw_bytes_per_s") > 0)
			a->factor = jreal(e, "busbw_bytes_per_s") / jreal(e, "algbw_bytes_per_s");
		if (g) {
			uint64_t n = juint(g, "samples");
			double x;

			a->nmse_sum += jreal(g, "nmse_mean") * (double)n;
			a->cos_sum += jreal(g, "cosine_mean") * (double)n;
			a->linf_sum += jreal(g, "linf_mean") * (double)n;
			x = jreal(g, "nmse_max");
			a->nmse_max = x > a->nmse_max ? x : a->nmse_max;
			x = jreal(g, "linf_max");
			a->linf_max = x > a->linf_max ? x : a->linf_max;
			x = jreal(g, "linf_rel_max");
			a->linf_rel_max = x > a->linf_rel_max ? x : a->linf_rel_max;
			x = jreal(g, "cosine_min");
			a->cos_min = !a->gsamples || x < a->cos_min ? x : a->cos_min;
			a->gsamples += n;
		}
		json_object_foreach(hw, key, v) {
			json_int_t old = json_integer_value(json_object_get(a->hw, key));

			json_object_set_new(a->hw, key, json_integer(old + json_integer_value(v)));
		}
		/* rxe: a timeout retransmission, or go-back-N after a NAK */
		a->retrans += juint(hw, "completer_retry_err") + juint(hw, "rcvd_seq_err");
	}
	a->tsum += tmax * (double)iters;
	a->iters += iters;
	json_array_append(a->rounds, results);
}

uint64_t star_results_fold(const char *wl, json_t *results)
{
	static const char *const kv_keys[] = { "get_lat_ns", "put_lat_ns", NULL };
	static const char *const st_keys[] = { "read_lat_ns", "write_lat_ns", NULL };
	const char *const *keys = strcmp(wl, "kv") ? st_keys : kv_keys;
	size_t n = json_array_size(results), i;
	const json_t *srv = json_array_get(results, n - 1);
	uint64_t wrong = 0, puts = 0;

	if (n < 2)
		return 0;
	for (i = 0; i + 1 < n; i++) {
		json_t *c = json_array_get(results, i);
		struct hist all, one;

		hist_init(&all);
		for (int k = 0; keys[k]; k++)
			if (!hist_from_json(&one, json_object_get(c, keys[k])))
				hist_merge(&all, &one);
		json_object_set_new(c, "time_ns", hist_to_json(&all));
		puts += juint(c, "puts");
		wrong += juint(c, "mismatches");	/* storage: reads that failed verification */
	}
	if (!strcmp(wl, "kv")) {	/* the server's count of the updates it holds */
		uint64_t upd = juint(srv, "updates_recorded");

		wrong += juint(srv, "bad_slots") + (upd > puts ? upd - puts : puts - upd);
	}
	json_object_set_new(json_array_get(results, 0), "wrong", json_integer((json_int_t)wrong));
	return wrong;
}

static json_t *percentiles(const struct hist *h)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f}", "min_ns",
			 (json_int_t)(h->count ? h->min : 0), "p50_ns",
			 (json_int_t)hist_quantile(h, 0.5), "p90_ns", (json_int_t)hist_quantile(h, 0.9),
			 "p99_ns", (json_int_t)hist_quantile(h, 0.99), "p99_9_ns",
			 (json_int_t)hist_quantile(h, 0.999), "p99_99_ns",
			 (json_int_t)hist_quantile(h, 0.9999), "max_ns", (json_int_t)h->max, "mean_ns",
			 hist_mean(h), "stdev_ns", hist_stdev(h));
}

json_t *arm_acc_json(const struct arm_acc *a)
{
	double t = a->iters ? a->tsum / (double)a->iters : 0;
	double algbw = t > 0 ? (double)a->size / (t / 1e9) : 0, n = a->gsamples ? (double)a->gsamples : 1;
	json_t *o;

	o = json_pack("{s:I,s:s,s:I,s:f,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:I,s:I,s:o,s:O,s:O}", "size",
		      (json_int_t)a->size, "mode", a->mode, "iters", (json_int_t)a->iters,
		      "time_avg_ns", t, "time_p50_ns", (json_int_t)hist_quantile(&a->h, 0.5),
		      "time_p90_ns", (json_int_t)hist_quantile(&a->h, 0.9), "time_p99_ns",
		      (json_int_t)hist_quantile(&a->h, 0.99), "time_p999_ns",
		      (json_int_t)hist_quantile(&a->h, 0.999), "time_max_ns", (json_int_t)a->h.max,
		      "algbw_bytes_per_s", algbw, "busbw_bytes_per_s", algbw * a->factor, "wrong",
		      (json_int_t)a->wrong, "retransmissions", (json_int_t)a->retrans, "time_hist_ns",
		      hist_to_json(&a->h), "hw_counters_delta", a->hw, "ranks",
		      json_array_size(a->rounds) ? json_array_get(a->rounds, json_array_size(a->rounds) - 1) :
						   json_null());
	if (o && json_array_size(a->rounds) > 1)	/* "ranks": the last round's */
		json_object_set(o, "rounds", a->rounds);
	if (o && a->gsamples)
		json_object_set_new(o, "grad_error",
				    json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "nmse_mean",
					      a->nmse_sum / n, "nmse_max", a->nmse_max, "linf_mean",
					      a->linf_sum / n, "linf_max", a->linf_max,
					      "linf_rel_max", a->linf_rel_max,
					      "cosine_mean", a->cos_sum / n, "cosine_min", a->cos_min));
	if (o && (a->uc || strcmp(a->mode, "rc"))) {	/* also when it never ran */
		json_object_set_new(o, "lost_pieces", json_integer((json_int_t)a->lost));
		json_object_set_new(o, "lost_bytes", json_integer((json_int_t)a->lost_bytes));
		json_object_set_new(o, "lost_fraction",
				    json_real(a->expected ? (double)a->lost / (double)a->expected : 0));
		json_object_set_new(o, "recovered_pieces", json_integer((json_int_t)a->recovered));
		json_object_set_new(o, "step_timeouts", json_integer((json_int_t)a->timeouts));
	}
	return o;
}

/* rank 0's streamed intervals of every round, with per-interval loss */
static json_t *arm_intervals(json_t *rounds)
{
	json_t *out = json_array(), *res, *e;
	size_t r, k;

	json_array_foreach(rounds, r, res) {
		uint64_t lost0 = 0, exp0 = 0, rt0 = 0;

		json_array_foreach(json_object_get(json_array_get(res, 0), "intervals"), k, e) {
			struct hist h;
			json_t *o;

			if (hist_from_json(&h, json_object_get(e, "lat_ns")))
				continue;
			o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:O}", "t_start_ns",
				      json_integer_value(json_object_get(e, "t_start_ns")), "t_ns",
				      json_integer_value(json_object_get(e, "t_ns")), "count",
				      (json_int_t)h.count, "p50_ns", (json_int_t)hist_quantile(&h, 0.5),
				      "p99_ns", (json_int_t)hist_quantile(&h, 0.99), "max_ns",
				      (json_int_t)h.max, "lat_ns", json_object_get(e, "lat_ns"));
			if (json_object_get(e, "pieces_expected")) {
				uint64_t l = juint(e, "lost_pieces"), x = juint(e, "pieces_expected");

				json_object_set_new(o, "lost_pieces", json_integer((json_int_t)(l - lost0)));
				json_object_set_new(o, "pieces_expected",
						    json_integer((json_int_t)(x - exp0)));
				lost0 = l;
				exp0 = x;
			}
			if (json_object_get(e, "retrans")) {	/* rank 0's device */
				uint64_t t = juint(e, "retrans");

				json_object_set_new(o, "retrans", json_integer((json_int_t)(t - rt0)));
				rt0 = t;
			}
			json_array_append_new(out, o);
		}
	}
	return out;
}

/* the per-rank results without their intervals (those are in "intervals") */
static json_t *strip_intervals(json_t *rounds)
{
	json_t *c = json_deep_copy(rounds), *res, *e;
	size_t r, k;

	json_array_foreach(c, r, res)
		json_array_foreach(res, k, e)
			json_object_del(e, "intervals");
	return c;
}

int report_ops(const char *workload)
{
	return !strcmp(workload, "kv") || !strcmp(workload, "storage");
}

/* kv, storage: operation latencies, by kind, and the clients' rates */
static json_t *ops_arm(struct arm_acc *a, const char *workload, const char *mode, json_t *rounds)
{
	static const char *const kinds[2][3] = { { "get", "put", NULL },
						 { "read", "write", NULL } };
	int st = !strcmp(workload, "storage");
	struct hist by[2];
	double rate = 0;
	json_t *res, *c, *o, *kj;
	size_t r, i;
	int k;

	hist_init(&by[0]);
	hist_init(&by[1]);
	json_array_foreach(rounds, r, res) {
		arm_acc_add(a, res, 0);
		json_array_foreach(res, i, c) {
			if (i + 1 == json_array_size(res))	/* the server */
				break;
			/* the clients run at once: their rates add up */
			rate += jreal(c, st ? "iops" : "ops_per_s");
			for (k = 0; k < 2; k++) {
				char key[32];
				struct hist h;

				snprintf(key, sizeof(key), "%s_lat_ns", kinds[st][k]);
				if (!hist_from_json(&h, json_object_get(c, key)))
					hist_merge(&by[k], &h);
			}
		}
	}
	kj = json_object();
	for (k = 0; k < 2; k++)
		if (by[k].count) {
			json_t *pk = percentiles(&by[k]);

			json_object_set_new(pk, "count", json_integer((json_int_t)by[k].count));
			json_object_set_new(kj, kinds[st][k], pk);
		}
	o = json_pack("{s:s,s:o,s:f,s:I,s:b,s:I,s:O,s:o}", "mode", mode, "op_kinds", kj,
		      "ops_per_s", json_array_size(rounds) ? rate / (double)json_array_size(rounds) : 0.0,
		      "wrong", (json_int_t)a->wrong, "verification_failed", a->wrong > 0,
		      "retransmissions", (json_int_t)a->retrans, "hw_counters_delta", a->hw,
		      "time_hist_ns", hist_to_json(&a->h));
	return o;
}

json_t *report_arm(const char *workload, const char *name, const char *mode, json_t *rounds)
{
	struct arm_acc a;
	json_t *o, *res;
	size_t r;

	arm_acc_init(&a, name, mode);
	if (!strcmp(workload, "collective")) {
		json_array_foreach(rounds, r, res)
			arm_acc_add(&a, res, juint(json_array_get(res, 0), "iters"));
		o = arm_acc_json(&a);
		json_object_del(o, "ranks");
		json_object_del(o, "rounds");
		json_object_set_new(o, "verification_failed", json_boolean(a.wrong && !a.lost));
	} else if (report_ops(workload)) {
		o = ops_arm(&a, workload, mode, rounds);
	} else {
		json_t *r0 = json_array_get(json_array_get(rounds, 0), 0);
		size_t k;

		if (r0)	/* the step times of every rank, merged as for collective */
			arm_acc_add(&a, json_array_get(rounds, 0), 0);
		o = json_pack("{s:s,s:I,s:o}", "mode", mode, "steps",
			      json_integer_value(json_object_get(r0, "steps")), "time_hist_ns",
			      hist_to_json(&a.h));
		if (r0) {
			static const char *const keys[] = { "tta_ns", "final_accuracy", "final_loss",
							    "train_time_ns", "curve", "params", "target",
							    "lost_pieces", "lost_fraction",
							    "recovered_pieces", "step_timeouts",
							    "grad_error", NULL };

			for (k = 0; keys[k]; k++)
				if (json_object_get(r0, keys[k]))
					json_object_set(o, keys[k], json_object_get(r0, keys[k]));
		}
	}
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "count", json_integer((json_int_t)a.h.count));
	json_object_set_new(o, "percentiles", percentiles(&a.h));
	json_object_set_new(o, "intervals", arm_intervals(rounds));
	json_object_set_new(o, "results", strip_intervals(rounds));
	arm_acc_fini(&a);
	return o;
}

/* --- text */
/* kv, storage: per arm the operations, their latency in us (fio's unit for
 * completion latency), the rate, retransmissions and the verification */
static void ops_text(const json_t *rep, FILE *f)
{
	const json_t *arm, *first = NULL;
	size_t i;

	fprintf(f, "# %-10s %-5s %8s %9s %9s %10s %10s %10s %8s %7s %7s\n", "arm", "mode", "ops",
		"p50[us]", "p99[us]", "p99.9[us]", "max[us]", "ops/s", "retrans", "verify",
		"p99 x");
	json_array_foreach(json_object_get(rep, "arms"), i, arm) {
		const json_t *pc = json_object_get(arm, "percentiles");
		double p99 = jreal(pc, "p99_ns");

		if (!first)
			first = arm;
		fprintf(f, "  %-10s %-5s %8lld %9.1f %9.1f %10.1f %10.1f %10.0f %8lld %7s",
			json_string_value(json_object_get(arm, "name")),
			json_string_value(json_object_get(arm, "mode")),
			json_integer_value(json_object_get(arm, "count")), jreal(pc, "p50_ns") / 1e3,
			p99 / 1e3, jreal(pc, "p99_9_ns") / 1e3, jreal(pc, "max_ns") / 1e3,
			jreal(arm, "ops_per_s"),
			json_integer_value(json_object_get(arm, "retransmissions")),
			!json_object_get(arm, "verification_failed") ? "-" :
			json_is_true(json_object_get(arm, "verification_failed")) ? "FAILED" : "ok");
		if (arm != first && p99 > 0)
			fprintf(f, " %7.2f", jreal(json_object_get(first, "percentiles"), "p99_ns") / p99);
		fputc('\n', f);
	}
	if (json_array_size(json_object_get(rep, "arms")) > 1)
		fprintf(f, "# p99 x: the first arm's p99 over this arm's; verify: every read and every "
			   "stored update checked\n");
}

void report_print_text(const json_t *rep, FILE *f)
{
	const json_t *arm, *first = NULL;
	size_t i;
	int train = !strcmp(json_string_value(json_object_get(rep, "workload")) ?: "", "train");
	int ops = report_ops(json_string_value(json_object_get(rep, "workload")) ?: "");

	fprintf(f, "# %s: %s, %s%s\n",
		json_string_value(json_object_get(json_object_get(rep, "profile"), "name")),
		json_string_value(json_object_get(rep, "workload")),
		json_string_value(json_object_get(rep, "status")),
		json_is_true(json_object_get(rep, "partial")) ? " (partial)" : "");
	if (ops) {
		ops_text(rep, f);
		return;
	}
	if (train)
		fprintf(f, "# %-10s %-8s %9s %8s %10s %10s %8s %8s\n", "arm", "mode", "TTA[s]", "acc",
			"p50[ms]", "p99[ms]", "lost", "TTA x");
	else
		fprintf(f, "# %-10s %-8s %6s %10s %10s %10s %10s %11s %8s %8s %9s %9s\n", "arm", "mode",
			"count", "p50[ms]", "p99[ms]", "p99.9[ms]", "max[ms]", "busbw[MB/s]", "retrans",
			"lost", "linf", "p99 x");
	json_array_foreach(json_object_get(rep, "arms"), i, arm) {
		const json_t *pc = json_object_get(arm, "percentiles");
		double p99 = jreal(pc, "p99_ns");

		if (!first)
			first = arm;
		if (train) {
			double tta = jreal(arm, "tta_ns");

			fprintf(f, "  %-10s %-8s ", json_string_value(json_object_get(arm, "name")),
				json_string_value(json_object_get(arm, "mode")));
			if (tta > 0)
				fprintf(f, "%9.2f", tta / 1e9);
			else
				fprintf(f, "%9s", "never");
			fprintf(f, " %8.3f %10.1f %10.1f", jreal(arm, "final_accuracy"),
				jreal(pc, "p50_ns") / 1e6, p99 / 1e6);
		} else {
			fprintf(f, "  %-10s %-8s %6lld %10.2f %10.2f %10.2f %10.2f %11.3f %8lld",
				json_string_value(json_object_get(arm, "name")),
				json_string_value(json_object_get(arm, "mode")),
				json_integer_value(json_object_get(arm, "count")),
				jreal(pc, "p50_ns") / 1e6, p99 / 1e6, jreal(pc, "p99_9_ns") / 1e6,
				jreal(pc, "max_ns") / 1e6, jreal(arm, "busbw_bytes_per_s") / 1e6,
				json_integer_value(json_object_get(arm, "retransmissions")));
		}
		if (json_object_get(arm, "lost_fraction"))
			fprintf(f, " %7.3f%%", 100 * jreal(arm, "lost_fraction"));
		else
			fprintf(f, " %8s", "-");
		if (train) {
			double tta = jreal(arm, "tta_ns"), tta0 = jreal(first, "tta_ns");

			if (arm != first && tta > 0 && tta0 > 0)
				fprintf(f, " %8.2f", tta0 / tta);
		} else {
			const json_t *g = json_object_get(arm, "grad_error");
			double p0 = jreal(json_object_get(first, "percentiles"), "p99_ns");

			fprintf(f, " %9.3g", g ? jreal(g, "linf_mean") : 0.0);
			if (arm != first && p99 > 0)
				fprintf(f, " %9.2f", p0 / p99);
		}
		fputc('\n', f);
	}
	if (!train && json_array_size(json_object_get(rep, "arms")) > 1)
		fprintf(f, "# p99 x: the first arm's p99 over this arm's; linf: mean per-step "
			   "L-inf error against the exact result\n");
}

/* --- CSV: one row per arm */
int report_csv(const json_t *rep, FILE *f)
{
	const json_t *arm;
	size_t i;

	fprintf(f, "arm,mode,count,min_ns,p50_ns,p90_ns,p99_ns,p99_9_ns,p99_99_ns,max_ns,mean_ns,"
		   "busbw_bytes_per_s,retransmissions,lost_fraction,lost_pieces,recovered_pieces,"
		   "nmse_mean,linf_mean,cosine_mean,tta_ns,final_accuracy,ops_per_s\n");
	json_array_foreach(json_object_get(rep, "arms"), i, arm) {
		const json_t *pc = json_object_get(arm, "percentiles"), *g = json_object_get(arm, "grad_error");

		fprintf(f, "%s,%s,%lld,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.1f,%.1f,%lld,",
			json_string_value(json_object_get(arm, "name")),
			json_string_value(json_object_get(arm, "mode")),
			json_integer_value(json_object_get(arm, "count")), jreal(pc, "min_ns"),
			jreal(pc, "p50_ns"), jreal(pc, "p90_ns"), jreal(pc, "p99_ns"),
			jreal(pc, "p99_9_ns"), jreal(pc, "p99_99_ns"), jreal(pc, "max_ns"),
			jreal(pc, "mean_ns"), jreal(arm, "busbw_bytes_per_s"),
			json_integer_value(json_object_get(arm, "retransmissions")));
		if (json_object_get(arm, "lost_fraction"))
			fprintf(f, "%.6f,%lld,%lld,", jreal(arm, "lost_fraction"),
				json_integer_value(json_object_get(arm, "lost_pieces")),
				json_integer_value(json_object_get(arm, "recovered_pieces")));
		else
			fputs(",,,", f);
		if (g)
			fprintf(f, "%.6g,%.6g,%.6f,", jreal(g, "nmse_mean"), jreal(g, "linf_mean"),
				jreal(g, "cosine_mean"));
		else
			fputs(",,,", f);
		if (json_is_integer(json_object_get(arm, "tta_ns")))
			fprintf(f, "%lld", json_integer_value(json_object_get(arm, "tta_ns")));
		fputc(',', f);
		if (json_object_get(arm, "final_accuracy"))
			fprintf(f, "%.4f", jreal(arm, "final_accuracy"));
		fputc(',', f);
		if (json_object_get(arm, "ops_per_s"))
			fprintf(f, "%.1f", jreal(arm, "ops_per_s"));
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

/* --- HdrHistogram: V2 encoding (ZigZag LEB128 counts, zero runs negative),
 * deflated, base64. Our layout is HdrHistogram's with 2 significant
 * digits, unit 1 ns: bucket indices are its counts indices. */
static size_t put_zz(unsigned char *p, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	do {
		unsigned char b = z & 0x7f;

		z >>= 7;
		p[n++] = (unsigned char)(b | (z ? 0x80 : 0));
	} while (z && n < 8);
	if (z)
		p[n++] = (unsigned char)z;	/* the 9th byte holds 8 bits */
	return n;
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void put_be64(unsigned char *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

static char *base64(const unsigned char *in, size_t n)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		*o++ = t[v >> 18];
		*o++ = t[(v >> 12) & 63];
		*o++ = t[(v >> 6) & 63];
		*o++ = t[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);

		*o++ = t[v >> 18];
		*o++ = t[(v >> 12) & 63];
		*o++ = i + 1 < n ? t[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = 0;
	return out;
}

char *hist_hdr_base64(const struct hist *h)
{
	unsigned char *raw, *z;
	size_t last = 0, i, n = 40;
	uLongf zlen;
	char *out = NULL;
	double one = 1.0;
	uint64_t bits;

	for (i = 0; i < HIST_NBUCKETS; i++)
		if (h->counts[i])
			last = i + 1;
	raw = malloc(40 + 9 * (last + 1));
	if (!raw)
		return NULL;
	for (i = 0; i < last;) {
		uint64_t c = h->counts[i++], zeros = 0;

		if (!c) {
			zeros = 1;
			while (i < last && !h->counts[i]) {
				zeros++;
				i++;
			}
		}
		n += put_zz(raw + n, zeros > 1 ? -(int64_t)zeros : (int64_t)c);
	}
	put_be32(raw, 0x1c849313);	/* V2 encoding cookie */
	put_be32(raw + 4, (uint32_t)(n - 40));
	put_be32(raw + 8, 0);		/* normalizing index offset */
	put_be32(raw + 12, 2);		/* significant value digits */
	put_be64(raw + 16, 1);		/* lowest discernible value */
	put_be64(raw + 24, 1ULL << HIST_MAX_BITS);	/* highest trackable value */
	memcpy(&bits, &one, sizeof(bits));
	put_be64(raw + 32, bits);	/* integer to double ratio */
	zlen = compressBound((uLong)n);
	z = malloc(8 + zlen);
	if (z && compress2(z + 8, &zlen, raw, (uLong)n, 6) == Z_OK) {
		put_be32(z, 0x1c849314);	/* V2 compressed encoding cookie */
		put_be32(z + 4, (uint32_t)zlen);
		out = base64(z, 8 + zlen);
	}
	free(z);
	free(raw);
	return out;
}

int report_hlog(const json_t *arm, json_int_t t0_ns, FILE *f)
{
	const json_t *e;
	size_t i;
	time_t now = time(NULL);

	fprintf(f, "#[Histogram log format version 1.3]\n"
		   "#[rdma-testbed: arm %s (mode %s), step/operation time in ns; timestamps in s "
		   "from the run's start]\n"
		   "#[StartTime: %lld.000 (seconds since epoch)]\n"
		   "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
		   "\"Interval_Compressed_Histogram\"\n",
		json_string_value(json_object_get(arm, "name")),
		json_string_value(json_object_get(arm, "mode")), (long long)now);
	json_array_foreach(json_object_get(arm, "intervals"), i, e) {
		struct hist h;
		char *b;
		json_int_t ts = json_integer_value(json_object_get(e, "t_start_ns")),
			   te = json_integer_value(json_object_get(e, "t_ns"));

		if (hist_from_json(&h, json_object_get(e, "lat_ns")) || !(b = hist_hdr_base64(&h)))
			return -1;
		/* Interval_Max in milliseconds: HdrHistogram's default unit ratio 1e6 */
		fprintf(f, "Tag=%s,%.3f,%.3f,%.3f,%s\n", json_string_value(json_object_get(arm, "name")),
			(double)(ts - t0_ns) / 1e9, (double)(te - ts) / 1e9, (double)h.max / 1e6, b);
		free(b);
	}
	return ferror(f) ? -1 : 0;
}

/* --- HTML with inline SVG */
static const char *const colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e" };

struct plot {
	FILE *f;
	double x0, x1, y0, y1;
	int logx, logy;
	int w, h, ml, mr, mt, mb;
};

static double tx(const struct plot *p, double x)
{
	double a = p->logx ? log10(x) : x, b0 = p->logx ? log10(p->x0) : p->x0,
	       b1 = p->logx ? log10(p->x1) : p->x1;

	return p->ml + (b1 > b0 ? (a - b0) / (b1 - b0) : 0) * (p->w - p->ml - p->mr);
}

static double ty(const struct plot *p, double y)
{
	double a = p->logy ? log10(y) : y, b0 = p->logy ? log10(p->y0) : p->y0,
	       b1 = p->logy ? log10(p->y1) : p->y1;

	return p->h - p->mb - (b1 > b0 ? (a - b0) / (b1 - b0) : 0) * (p->h - p->mt - p->mb);
}

static void plot_begin(struct plot *p, FILE *f, const char *id, const char *title, const char *xl,
		       const char *yl)
{
	int i;

	p->f = f;
	p->w = 720;
	p->h = 320;
	p->ml = 70;
	p->mr = 150;
	p->mt = 30;
	p->mb = 45;
	if (p->x1 <= p->x0)
		p->x1 = p->x0 + 1;
	if (p->y1 <= p->y0)
		p->y1 = p->y0 + 1;
	fprintf(f, "<figure><svg class=\"plot\" id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
		   "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n"
		   "<text x=\"%d\" y=\"18\" class=\"title\">%s</text>\n",
		id, p->w, p->h, p->w, p->h, title, p->ml, title);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"frame\"/>\n", p->ml, p->mt,
		p->w - p->ml - p->mr, p->h - p->mt - p->mb);
	for (i = 0; i <= 4; i++) {	/* ticks */
		double fx = (double)i / 4, vx, vy;
		double X, Y;

		vx = p->logx ? pow(10, log10(p->x0) + fx * (log10(p->x1) - log10(p->x0))) :
			       p->x0 + fx * (p->x1 - p->x0);
		vy = p->logy ? pow(10, log10(p->y0) + fx * (log10(p->y1) - log10(p->y0))) :
			       p->y0 + fx * (p->y1 - p->y0);
		X = tx(p, vx);
		Y = ty(p, vy);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>"
			   "<text x=\"%.1f\" y=\"%d\" class=\"tick\" text-anchor=\"middle\">%.3g</text>\n",
			X, p->mt, X, p->h - p->mb, X, p->h - p->mb + 15, vx);
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/>"
			   "<text x=\"%d\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%.3g</text>\n",
			p->ml, Y, p->w - p->mr, Y, p->ml - 5, Y + 4, vy);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"middle\">%s</text>\n",
		(p->ml + p->w - p->mr) / 2, p->h - 8, xl);
	fprintf(f, "<text x=\"14\" y=\"%d\" class=\"label\" text-anchor=\"middle\" "
		   "transform=\"rotate(-90 14 %d)\">%s</text>\n", p->h / 2, p->h / 2, yl);
}

/* one arm's line; step: a staircase (CDF); gap > 0: a new stroke where x
 * jumps by more than gap (arms take turns: no line across another's turn) */
static void plot_series(struct plot *p, const double *x, const double *y, size_t n, int k,
			const char *name, int step, double gap)
{
	size_t i;

	fprintf(p->f, "<path class=\"series\" data-arm=\"%s\" fill=\"none\" stroke=\"%s\" "
		      "stroke-width=\"2\" d=\"", name, colors[k % 5]);
	for (i = 0; i < n; i++) {
		int move = !i || (gap > 0 && x[i] - x[i - 1] > gap);

		if (step && !move)
			fprintf(p->f, "L%.1f,%.1f ", tx(p, x[i]), ty(p, y[i - 1]));
		fprintf(p->f, "%c%.1f,%.1f ", move ? 'M' : 'L', tx(p, x[i]), ty(p, y[i]));
	}
	fprintf(p->f, "\"/>\n<text x=\"%d\" y=\"%d\" fill=\"%s\" class=\"legend\">%s</text>\n",
		p->w - p->mr + 10, p->mt + 15 + 16 * k, colors[k % 5], name);
}

static void plot_end(struct plot *p)
{
	fprintf(p->f, "</svg></figure>\n");
}

/* the latency CDF of one arm from its histogram: (value, fraction <= value) */
static size_t cdf_points(const struct hist *h, double *x, double *y, size_t max)
{
	uint64_t seen = 0;
	size_t n = 0;
	unsigned int i;

	for (i = 0; i < HIST_NBUCKETS && n < max; i++) {
		if (!h->counts[i])
			continue;
		seen += h->counts[i];
		x[n] = (double)(hist_bucket_hi(i) < h->max ? hist_bucket_hi(i) : h->max) / 1e6;
		if (x[n] < (double)h->min / 1e6)
			x[n] = (double)h->min / 1e6;
		y[n++] = (double)seen / (double)h->count;
	}
	return n;
}

static void html_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

/* one quantity of a 250 ms interval; 0 when the interval does not have it */
enum ival_q { Q_P50, Q_MAX, Q_LOST, Q_RETRANS };

static int ival_value(const json_t *e, enum ival_q q, double *v)
{
	double xp;

	switch (q) {
	case Q_P50:
		*v = jreal(e, "p50_ns") / 1e6;
		return 1;
	case Q_MAX:
		*v = jreal(e, "max_ns") / 1e6;
		return 1;
	case Q_LOST:	/* % of pieces */
		if (!json_object_get(e, "pieces_expected"))
			return 0;
		xp = jreal(e, "pieces_expected");
		*v = xp > 0 ? 100 * jreal(e, "lost_pieces") / xp : 0;
		return 1;
	default:
		if (!json_object_get(e, "retrans"))
			return 0;
		*v = jreal(e, "retrans");
		return 1;
	}
}

/* an arm's (seconds since t0, value) points */
static size_t ival_points(const json_t *arm, json_int_t t0, enum ival_q q, double *x, double *y,
			  size_t cap)
{
	const json_t *e;
	size_t k, n = 0;

	json_array_foreach(json_object_get(arm, "intervals"), k, e) {
		if (n >= cap || !ival_value(e, q, &y[n]))
			continue;
		x[n++] = (double)(json_integer_value(json_object_get(e, "t_ns")) - t0) / 1e9;
	}
	return n;
}

/* a quantity over time, one line per arm that has it */
static void time_plot(FILE *f, const json_t *arms, json_int_t t0, const char *id, const char *title,
		      const char *ylabel, enum ival_q q, double ymin, double *x, double *y, size_t cap)
{
	struct plot p;
	const json_t *arm;
	size_t i, k, n;

	memset(&p, 0, sizeof(p));
	p.x1 = 1;
	p.y1 = ymin;
	json_array_foreach(arms, i, arm) {
		n = ival_points(arm, t0, q, x, y, cap);
		for (k = 0; k < n; k++) {
			p.x1 = x[k] > p.x1 ? x[k] : p.x1;
			p.y1 = y[k] > p.y1 ? y[k] : p.y1;
		}
	}
	p.y1 *= 1.1;
	plot_begin(&p, f, id, title, "time since the run's start [s]", ylabel);
	json_array_foreach(arms, i, arm) {
		n = ival_points(arm, t0, q, x, y, cap);
		if (n)
			plot_series(&p, x, y, n, (int)i, json_string_value(json_object_get(arm, "name")),
				    0, 1.0);
	}
	plot_end(&p);
}

int report_html(const json_t *rep, FILE *f)
{
	const json_t *arms = json_object_get(rep, "arms"), *arm, *e, *fl;
	json_int_t t0 = json_integer_value(json_object_get(rep, "t0_node_ns"));
	size_t i, k, n, cap = 4096;
	double *x = malloc(cap * sizeof(double)), *y = malloc(cap * sizeof(double));
	struct plot p;
	int train = !strcmp(json_string_value(json_object_get(rep, "workload")) ?: "", "train");
	int ops = report_ops(json_string_value(json_object_get(rep, "workload")) ?: "");

	if (!x || !y) {
		free(x);
		free(y);
		return -1;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
	html_escape(f, json_string_value(json_object_get(json_object_get(rep, "profile"), "name")));
	fputs(" - rdma-testbed report</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:2em}\n"
	      "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #bbb;padding:2px 6px;"
	      "text-align:right}th{background:#eee}\n"
	      ".frame{fill:none;stroke:#444}.grid{stroke:#ddd}.tick{font-size:11px}"
	      ".label{font-size:12px}.title{font-size:14px;font-weight:bold}"
	      ".legend{font-size:12px}.fault{fill:#f4a;fill-opacity:0.15}\n"
	      "pre{background:#f6f6f6;padding:1em;overflow:auto}\n</style></head><body>\n", f);
	fputs("<h1>", f);
	html_escape(f, json_string_value(json_object_get(json_object_get(rep, "profile"), "name")));
	fprintf(f, "</h1>\n<p>%s run, status <b>%s</b>%s, created %s, %.1f s. Testbed: %s (%s), %lld "
		   "nodes, MTU %lld, kernel %s. rdmactl %s.</p>\n",
		json_string_value(json_object_get(rep, "workload")),
		json_string_value(json_object_get(rep, "status")),
		json_is_true(json_object_get(rep, "partial")) ? " (partial)" : "",
		json_string_value(json_object_get(rep, "created")), jreal(rep, "duration_s"),
		json_string_value(json_object_get(json_object_get(rep, "testbed"), "backend")),
		json_string_value(json_object_get(json_object_get(rep, "testbed"), "accel")),
		json_integer_value(json_object_get(json_object_get(rep, "testbed"), "nodes")),
		json_integer_value(json_object_get(json_object_get(rep, "testbed"), "mtu")),
		json_string_value(json_object_get(json_object_get(rep, "testbed"), "kernel")),
		json_string_value(json_object_get(json_object_get(rep, "versions"), "rdmactl")));
	/* summary table */
	fputs("<table id=\"summary\"><tr><th>arm</th><th>mode</th><th>count</th><th>p50 ms</th>"
	      "<th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th><th>lost</th>"
	      "<th>retransmissions</th><th>L-inf (mean)</th><th>cosine</th><th>TTA s</th>"
	      "<th>accuracy</th></tr>\n", f);
	json_array_foreach(arms, i, arm) {
		const json_t *pc = json_object_get(arm, "percentiles"), *g = json_object_get(arm, "grad_error");

		fputs("<tr><td>", f);
		html_escape(f, json_string_value(json_object_get(arm, "name")));
		fprintf(f, "</td><td>%s</td><td>%lld</td><td>%.2f</td><td>%.2f</td><td>%.2f</td>"
			   "<td>%.2f</td><td>%.2f</td>",
			json_string_value(json_object_get(arm, "mode")),
			json_integer_value(json_object_get(arm, "count")), jreal(pc, "p50_ns") / 1e6,
			jreal(pc, "p90_ns") / 1e6, jreal(pc, "p99_ns") / 1e6, jreal(pc, "p99_9_ns") / 1e6,
			jreal(pc, "max_ns") / 1e6);
		if (json_object_get(arm, "lost_fraction"))
			fprintf(f, "<td>%.3f%%</td>", 100 * jreal(arm, "lost_fraction"));
		else
			fputs("<td>-</td>", f);
		fprintf(f, "<td>%lld</td>", json_integer_value(json_object_get(arm, "retransmissions")));
		if (g)
			fprintf(f, "<td>%.3g</td><td>%.5f</td>", jreal(g, "linf_mean"),
				jreal(g, "cosine_mean"));
		else
			fputs("<td>-</td><td>-</td>", f);
		if (json_is_integer(json_object_get(arm, "tta_ns")))
			fprintf(f, "<td>%.2f</td>", jreal(arm, "tta_ns") / 1e9);
		else
			fprintf(f, "<td>%s</td>", train ? "never" : "-");
		if (json_object_get(arm, "final_accuracy"))
			fprintf(f, "<td>%.3f</td>", jreal(arm, "final_accuracy"));
		else
			fputs("<td>-</td>", f);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);

	/* 1. latency CDFs */
	memset(&p, 0, sizeof(p));
	p.logx = 1;
	p.x0 = 1e18;
	p.y1 = 1;
	json_array_foreach(arms, i, arm) {
		const json_t *pc = json_object_get(arm, "percentiles");

		if (!json_integer_value(json_object_get(arm, "count")))
			continue;
		if (jreal(pc, "min_ns") / 1e6 < p.x0)
			p.x0 = jreal(pc, "min_ns") / 1e6;
		if (jreal(pc, "max_ns") / 1e6 > p.x1)
			p.x1 = jreal(pc, "max_ns") / 1e6;
	}
	if (p.x0 > p.x1 || p.x0 <= 0)
		p.x0 = p.x1 > 0 ? p.x1 / 10 : 0.001;
	p.x0 /= 1.2;
	p.x1 *= 1.2;
	plot_begin(&p, f, "cdf", train ? "Training step time CDF" : ops ? "Operation latency CDF" :
		   "Step time CDF", "time [ms] (log)",
		   ops ? "fraction of operations <= time" : "fraction of steps <= time");
	json_array_foreach(arms, i, arm) {
		struct hist h;

		if (hist_from_json(&h, json_object_get(arm, "time_hist_ns")) || !h.count)
			continue;
		n = cdf_points(&h, x, y, cap);
		plot_series(&p, x, y, n, (int)i, json_string_value(json_object_get(arm, "name")), 1, 0);
	}
	plot_end(&p);

	/* 2. step time over time, fault windows shaded */
	memset(&p, 0, sizeof(p));
	json_array_foreach(arms, i, arm)
		json_array_foreach(json_object_get(arm, "intervals"), k, e) {
			double t = (double)(json_integer_value(json_object_get(e, "t_ns")) - t0) / 1e9;
			double v = jreal(e, "max_ns") / 1e6;

			p.x1 = t > p.x1 ? t : p.x1;
			p.y1 = v > p.y1 ? v : p.y1;
		}
	p.y1 *= 1.1;
	plot_begin(&p, f, "timeline", ops ? "Operation latency over time (per 250 ms interval: p50 "
		   "solid, max dotted)" : "Step time over time (per 250 ms interval: p50 solid, max "
		   "dotted)", "time since the run's start [s]", ops ? "latency [ms]" : "step time [ms]");
	json_array_foreach(json_object_get(rep, "faults"), i, fl) {
		double a = jreal(fl, "start_ns") / 1e9, d = jreal(fl, "duration_ns") / 1e9;
		double b = d > 0 ? a + d : p.x1;

		fprintf(f, "<rect class=\"fault\" data-fault=\"%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			   "height=\"%d\"><title>",
			json_string_value(json_object_get(fl, "name")), tx(&p, a), p.mt,
			tx(&p, b > p.x1 ? p.x1 : b) - tx(&p, a), p.h - p.mt - p.mb);
		html_escape(f, json_string_value(json_object_get(fl, "rule")));
		fputs("</title></rect>\n", f);
	}
	json_array_foreach(arms, i, arm) {
		n = ival_points(arm, t0, Q_P50, x, y, cap);
		plot_series(&p, x, y, n, (int)i, json_string_value(json_object_get(arm, "name")), 0, 1.0);
		n = ival_points(arm, t0, Q_MAX, x, y, cap);
		fprintf(f, "<path class=\"series-max\" fill=\"none\" stroke=\"%s\" "
			   "stroke-dasharray=\"2,3\" d=\"", colors[i % 5]);
		for (k = 0; k < n; k++)
			fprintf(f, "%c%.1f,%.1f ", !k || x[k] - x[k - 1] > 1.0 ? 'M' : 'L', tx(&p, x[k]),
				ty(&p, y[k]));
		fputs("\"/>\n", f);
	}
	plot_end(&p);

	/* 3. loss and retransmissions over time, retransmissions per arm */
	time_plot(f, arms, t0, "loss", "Data lost per 250 ms interval (lossy modes; rc retransmits instead)",
		  "lost [% of pieces]", Q_LOST, 0.01, x, y, cap);
	time_plot(f, arms, t0, "retrans_time", "NIC retransmissions per 250 ms interval (rank 0's node)",
		  "retransmission events", Q_RETRANS, 1, x, y, cap);
	memset(&p, 0, sizeof(p));
	p.x0 = 0;
	p.x1 = (double)json_array_size(arms);
	json_array_foreach(arms, i, arm)
		if (jreal(arm, "retransmissions") > p.y1)
			p.y1 = jreal(arm, "retransmissions");
	p.y1 = p.y1 * 1.1 + 1;
	plot_begin(&p, f, "retrans", "NIC retransmissions per arm (rxe completer_retry_err + rcvd_seq_err)",
		   "arm", "retransmission events");
	json_array_foreach(arms, i, arm) {
		double v = jreal(arm, "retransmissions");

		fprintf(f, "<rect class=\"bar\" data-arm=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			   "height=\"%.1f\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" class=\"tick\" "
			   "text-anchor=\"middle\">%s: %.0f</text>\n",
			json_string_value(json_object_get(arm, "name")), tx(&p, (double)i + 0.2),
			ty(&p, v), tx(&p, (double)i + 0.8) - tx(&p, (double)i + 0.2),
			ty(&p, 0) - ty(&p, v), colors[i % 5], tx(&p, (double)i + 0.5), ty(&p, v) - 4,
			json_string_value(json_object_get(arm, "name")), v);
	}
	plot_end(&p);

	/* 4. training curves */
	if (train) {
		memset(&p, 0, sizeof(p));
		p.y1 = 1;
		json_array_foreach(arms, i, arm)
			json_array_foreach(json_object_get(arm, "curve"), k, e) {
				double t = jreal(e, "time_ns") / 1e9;

				p.x1 = t > p.x1 ? t : p.x1;
			}
		plot_begin(&p, f, "training", "Held-out accuracy over training time",
			   "training time [s] (evaluation excluded)", "accuracy");
		json_array_foreach(arms, i, arm) {
			n = 0;
			json_array_foreach(json_object_get(arm, "curve"), k, e) {
				if (n >= cap)
					break;
				x[n] = jreal(e, "time_ns") / 1e9;
				y[n++] = jreal(e, "accuracy");
			}
			plot_series(&p, x, y, n, (int)i, json_string_value(json_object_get(arm, "name")),
				    0, 0);
		}
		plot_end(&p);
	}
	fputs("<h2>Fault rules</h2>\n<table id=\"faults\"><tr><th>name</th><th>rule</th><th>dir</th>"
	      "<th>start s</th><th>duration s</th><th>nodes</th><th>matched</th><th>dropped</th></tr>\n",
	      f);
	json_array_foreach(json_object_get(rep, "faults"), i, fl) {
		uint64_t matched = 0, dropped = 0;
		const json_t *r;

		json_array_foreach(json_object_get(fl, "rules"), k, r) {
			matched += juint(json_object_get(r, "counters"), "matched");
			dropped += juint(json_object_get(r, "counters"), "dropped");
		}
		fputs("<tr><td>", f);
		html_escape(f, json_string_value(json_object_get(fl, "name")));
		fputs("</td><td>", f);
		html_escape(f, json_string_value(json_object_get(fl, "rule")));
		fprintf(f, "</td><td>%s</td><td>%.1f</td><td>%.1f</td><td>%zu</td><td>%llu</td>"
			   "<td>%llu</td></tr>\n",
			json_string_value(json_object_get(fl, "dir")), jreal(fl, "start_ns") / 1e9,
			jreal(fl, "duration_ns") / 1e9, json_array_size(json_object_get(fl, "rules")),
			(unsigned long long)matched, (unsigned long long)dropped);
	}
	fputs("</table>\n<h2>Profile</h2>\n<pre>", f);
	html_escape(f, json_string_value(json_object_get(json_object_get(rep, "profile"), "text")));
	fputs("</pre>\n</body></html>\n", f);
	free(x);
	free(y);
	return ferror(f) ? -1 : 0;
}

static int write_file(const char *dir, const char *name, int (*fn)(const json_t *, const void *,
								  FILE *),
		      const json_t *rep, const void *arg, char *err, size_t errlen)
{
	char path[PATH_MAX];
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	r = fn(rep, arg, f);
	if (fclose(f) || r) {
		snprintf(err, errlen, "%s: write failed", path);
		return -1;
	}
	return 0;
}

static int w_json(const json_t *rep, const void *arg, FILE *f)
{
	(void)arg;
	/* full precision: re-rendering from the file gives the same text */
	return json_dumpf(rep, f, JSON_INDENT(1) | JSON_REAL_PRECISION(17)) || fputc('\n', f) == EOF;
}

static int w_csv(const json_t *rep, const void *arg, FILE *f)
{
	(void)arg;
	return report_csv(rep, f);
}

static int w_html(const json_t *rep, const void *arg, FILE *f)
{
	(void)arg;
	return report_html(rep, f);
}

static int w_hlog(const json_t *rep, const void *arm, FILE *f)
{
	return report_hlog(arm, json_integer_value(json_object_get(rep, "t0_node_ns")), f);
}

int report_write(json_t *rep, const char *dir, char *err, size_t errlen)
{
	const json_t *arm;
	size_t i;

	if (write_file(dir, "report.json", w_json, rep, NULL, err, errlen) ||
	    write_file(dir, "summary.csv", w_csv, rep, NULL, err, errlen) ||
	    write_file(dir, "report.html", w_html, rep, NULL, err, errlen))
		return -1;
	json_array_foreach(json_object_get(rep, "arms"), i, arm) {
		char name[64];

		snprintf(name, sizeof(name), "%s.hlog", json_string_value(json_object_get(arm, "name")));
		if (write_file(dir, name, w_hlog, rep, arm, err, errlen))
			return -1;
	}
	return 0;
}
