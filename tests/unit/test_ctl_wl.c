// SPDX-License-Identifier: MIT
/*
 * The controller's workload descriptors and the arm accumulator: results
 * folded (kv, storage), accumulated (weighted error means, extremes,
 * retransmissions by the one definition), the report arm each descriptor
 * builds, and the registry.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "expect.h"
#include "ctl_fixtures.h"
#include "ctl/wl/wl.h"

/* the descriptors as the registry gives them */
#define wlc_collective (*wlc_find("collective"))
#define wlc_kv (*wlc_find("kv"))
#define wlc_storage (*wlc_find("storage"))

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1);
}

static void test_registry(void)
{
	char names[96], err[128];
	const char *modes[4];

	EXPECT(wlc_find("collective") && !strcmp(wlc_find("collective")->name, "collective"));
	EXPECT(wlc_find("kv") && wlc_find("kv")->topo == WLC_STAR);
	EXPECT(wlc_find("colective") == NULL);
	wlc_profile_names(names, sizeof(names));
	EXPECT(!strcmp(names, "collective|train|kv|storage|exec"));
	/* exec: the profile's roles, run by the controller itself, no modes */
	EXPECT(wlc_find("exec") && wlc_find("exec")->roles && wlc_find("exec")->run &&
	       !wlc_find("exec")->modes && wlc_find("exec")->measure == MEASURE_EXEC);
	EXPECT(!wlc_find("collective")->roles && !wlc_find("collective")->run);
	EXPECT(wlc_modes_parse("rc,hadamard", modes, 4, err, sizeof(err)) == 2);
	EXPECT(!strcmp(modes[1], "hadamard"));
	EXPECT(wlc_modes_parse("rc,bogus", modes, 4, err, sizeof(err)) < 0);
	EXPECT(strstr(err, "expected rc, lossy, hadamard or ec") != NULL);
	EXPECT(wlc_modes_parse("rc,rc,rc,rc,rc", modes, 4, err, sizeof(err)) < 0);
	EXPECT(wlc_mode("ec") == M_EC);
	/* only rc for the one-sided workloads */
	EXPECT(wlc_kv.modes == 1u << M_RC && wlc_storage.modes == 1u << M_RC);
	EXPECT(wlc_collective.modes & (1u << M_HADAMARD));
}

static void test_acc(void)
{
	json_t *r1 = fx_round(3, 10, 100000, 1), *r2 = fx_round(3, 20, 200000, 1), *j;
	struct arm_acc a, b;

	arm_acc_init(&a, "lossy", "lossy");
	arm_acc_add(&a, r1, 10);
	arm_acc_add(&a, r2, 20);
	EXPECT_EQ_U(a.iters, 30);
	EXPECT_EQ_U(a.h.count, 3 * 10 + 3 * 20);
	EXPECT_EQ_U(a.lost, 2 * (10 + 11 + 12));
	EXPECT_EQ_U(a.expected, 6000);
	/* retransmissions: completer_retry_err + rcvd_seq_err of every rank */
	EXPECT_EQ_U(a.retrans, 2 * ((3 + 2) + (4 + 2) + (5 + 2)));
	EXPECT_EQ_U(json_integer_value(json_object_get(a.hw, "out_of_seq_request")), 6 * 7);
	/* the error: means weighted by samples, extremes over ranks and rounds */
	EXPECT_EQ_U(a.gsamples, 3 * 10 + 3 * 20);
	EXPECT(near(a.nmse_sum / (double)a.gsamples, (0.01 + 0.02 + 0.03) / 3));
	EXPECT(near(a.linf_max, 5.0));
	EXPECT(near(a.cos_min, 0.95));
	/* the slowest rank's mean time per round, weighted by iterations */
	EXPECT(near(a.tsum, (120000 + 500.0 * 10) * 10 + (220000 + 500.0 * 20) * 20));
	/* the accumulator as published and back: every field */
	j = arm_acc_to_json(&a);
	arm_acc_init(&b, "lossy", "lossy");
	EXPECT(!arm_acc_from_json(&b, j));
	EXPECT(!memcmp(&a.h, &b.h, sizeof(a.h)));
#define SAME_U64(f) EXPECT_EQ_U(a.f, b.f);
#define SAME_F64(f) EXPECT(a.f == b.f);
	ARM_ACC_U64(SAME_U64)
	ARM_ACC_F64(SAME_F64)
	EXPECT(json_equal(a.hw, b.hw));
	EXPECT(arm_acc_from_json(&b, json_object_get(j, "hist")) == -EINVAL);
	json_decref(j);
	arm_acc_fini(&a);
	arm_acc_fini(&b);
	json_decref(r1);
	json_decref(r2);
}

/* the retransmission figure: resent packets where one direction's hooks
 * covered every rank, else rxe's events, and the source said */
static void test_retrans_source(void)
{
	static const struct {
		const char *eg[3], *in[3];
		const char *src;
		json_int_t n;
	} cases[] = {
		{ { "100/4", "90/5", "80/6" }, { NULL, NULL, NULL }, "injector_egress", 15 },
		{ { "100/4", "90/5", "80/6" }, { "7/1", "7/1", "7/1" }, "injector_egress", 15 },
		{ { "100/4", NULL, "80/6" }, { "7/1", "7/1", "7/1" }, "injector_ingress", 3 },
		{ { "100/4", NULL, "80/6" }, { NULL, "7/1", "7/1" }, "rxe_events", 3 * 7 },
		{ { "0/0", "90/5", "80/6" }, { NULL, NULL, NULL }, "rxe_events", 3 * 7 },
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		json_t *r = json_array(), *o = json_object();
		struct arm_acc a;

		for (int k = 0; k < 3; k++) {
			json_t *ij = json_object();
			unsigned p, q;

			if (cases[c].eg[k] && sscanf(cases[c].eg[k], "%u/%u", &p, &q) == 2)
				json_object_set_new(ij, "egress", json_pack("{s:i,s:i}", "roce_pkts", p,
									      "resent", q));
			if (cases[c].in[k] && sscanf(cases[c].in[k], "%u/%u", &p, &q) == 2)
				json_object_set_new(ij, "ingress", json_pack("{s:i,s:i}", "roce_pkts", p,
									       "resent", q));
			json_array_append_new(r, json_pack("{s:{s:i,s:i},s:o}", "hw_counters_delta",
							   "completer_retry_err", 5, "rcvd_seq_err", 2,
							   "injector_delta", ij));
		}
		arm_acc_init(&a, "rc", "rc");
		arm_acc_add(&a, r, 1);
		arm_acc_retrans_json(&a, o);
		EXPECT(!strcmp(jr_str(o, "retransmissions_source"), cases[c].src));
		EXPECT_EQ_U(json_integer_value(json_object_get(o, "retransmissions")), cases[c].n);
		EXPECT_EQ_U(json_integer_value(json_object_get(o, "retransmission_events")), 3 * 7);
		arm_acc_fini(&a);
		json_decref(r);
		json_decref(o);
	}
}

static void test_collective_arm(void)
{
	json_t *rounds = json_pack("[oo]", fx_round(3, 10, 100000, 0), fx_round(3, 10, 150000, 0));
	json_t *arm = wlc_report_arm(&wlc_collective, "rc", "rc", rounds), *lossy;
	const json_t *pc = json_object_get(arm, "percentiles");

	EXPECT_EQ_U(json_integer_value(json_object_get(arm, "count")), 60);
	EXPECT_EQ_U(json_integer_value(json_object_get(arm, "iters")), 20);
	EXPECT(json_is_false(json_object_get(arm, "verification_failed")));
	EXPECT(!json_object_get(arm, "lost_fraction"));	/* rc lost nothing: no loss keys */
	EXPECT(jr_real(pc, "p50_ns") <= jr_real(pc, "p99_ns"));
	EXPECT(json_array_size(json_object_get(arm, "results")) == 2);
	EXPECT(!json_object_get(json_array_get(json_array_get(json_object_get(arm, "results"), 0), 0),
				"intervals"));
	EXPECT(json_array_size(json_object_get(arm, "intervals")) == 2);	/* rank 0's */
	json_decref(arm);
	json_decref(rounds);
	/* wrong elements without loss fail the arm, with loss they are the loss */
	rounds = json_pack("[o]", fx_round(3, 10, 100000, 1));
	lossy = wlc_report_arm(&wlc_collective, "lossy", "lossy", rounds);
	EXPECT(json_is_false(json_object_get(lossy, "verification_failed")));
	EXPECT(near(jr_real(lossy, "lost_fraction"), 33.0 / 3000));
	EXPECT(json_object_get(lossy, "grad_error") != NULL);
	json_decref(lossy);
	json_decref(rounds);
	rounds = json_pack("[o]", fx_round(2, 10, 100000, 0));
	json_object_set_new(json_array_get(json_array_get(rounds, 0), 1), "wrong", json_integer(3));
	arm = wlc_report_arm(&wlc_collective, "rc", "rc", rounds);
	EXPECT(json_is_true(json_object_get(arm, "verification_failed")));
	json_decref(arm);
	json_decref(rounds);
}

static void test_kv_fold(void)
{
	json_t *ok = fx_kv_round(30, 20, 50, 0), *bad = fx_kv_round(30, 20, 47, 1), *rounds, *arm;
	const json_t *kinds;

	EXPECT_EQ_U(wlc_kv.fold(ok), 0);
	/* every client has its operations' times merged, the first the count */
	EXPECT_EQ_U(json_integer_value(json_object_get(json_object_get(json_array_get(ok, 0),
								       "time_ns"), "count")), 130);
	EXPECT_EQ_U(json_integer_value(json_object_get(json_array_get(ok, 0), "wrong")), 0);
	/* 3 updates missing and a bad slot */
	EXPECT_EQ_U(wlc_kv.fold(bad), 4);
	rounds = json_pack("[O,O]", ok, bad);
	arm = wlc_report_arm(&wlc_kv, "ycsb-a", "rc", rounds);
	kinds = json_object_get(arm, "op_kinds");
	EXPECT_EQ_U(json_integer_value(json_object_get(json_object_get(kinds, "get"), "count")), 400);
	EXPECT_EQ_U(json_integer_value(json_object_get(json_object_get(kinds, "put"), "count")), 100);
	EXPECT(near(jr_real(arm, "ops_per_s"), 900));	/* clients add up, rounds average */
	EXPECT_EQ_U(json_integer_value(json_object_get(arm, "wrong")), 4);
	EXPECT(json_is_true(json_object_get(arm, "verification_failed")));
	EXPECT_EQ_U(json_integer_value(json_object_get(arm, "count")), 2 * (130 + 120));
	json_decref(arm);
	json_decref(rounds);
	json_decref(ok);
	json_decref(bad);
}

static void test_storage_fold(void)
{
	json_t *r = json_pack("[{s:o,s:o,s:I,s:f},{s:I}]", "read_lat_ns", fx_hist(70, 30000, 10),
			      "write_lat_ns", fx_hist(30, 50000, 10), "mismatches", (json_int_t)2,
			      "iops", 1000.0, "blocks", (json_int_t)16);

	EXPECT_EQ_U(wlc_storage.fold(r), 2);
	EXPECT_EQ_U(json_integer_value(json_object_get(json_object_get(json_array_get(r, 0),
								       "time_ns"), "count")), 100);
	json_decref(r);
}

int main(void)
{
	test_registry();
	test_acc();
	test_retrans_source();
	test_collective_arm();
	test_kv_fold();
	test_storage_fold();
	return expect_done("test_ctl_wl");
}
