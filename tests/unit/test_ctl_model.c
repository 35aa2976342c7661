// SPDX-License-Identifier: MIT
/*
 * The live model (ctl/tui/model.c): filled the way the control loop fills
 * it, published as JSON and read back by an attached viewer. The round
 * trip is lossless: the second model's JSON equals the first's, field for
 * field (the clock-dependent elapsed_s aside), and its accumulators equal
 * the first's. The TUI's arm rows are the metric table's over the same
 * JSON as the report.
 */
#include <string.h>
#include "expect.h"
#include "ctl_fixtures.h"
#include "ctl/tui/model.h"

static void fill(struct model *m)
{
	json_t *iv = json_pack("[{s:I,s:I,s:o,s:I,s:I,s:f,s:f}]", "t_start_ns", (json_int_t)0, "t_ns",
			       (json_int_t)250000000, "lat_ns", fx_hist(5, 900000, 1000),
			       "lost_pieces", (json_int_t)3, "pieces_expected", (json_int_t)300,
			       "accuracy", 0.5, "eval_loss", 1.25);
	json_t *stats = json_pack("{s:[{s:i,s:b,s:s,s:s,s:s,s:s,s:{s:I,s:I,s:I}}]}", "rules", "id", 3,
				  "enabled", 1, "dev", "n1", "dir", "ingress", "action", "drop",
				  "rule", "opcode data drop 1%", "counters", "matched",
				  (json_int_t)1000, "dropped", (json_int_t)10, "delayed",
				  (json_int_t)0);
	json_t *r0 = fx_round(3, 8, 300000, 0), *r1 = fx_round(3, 8, 400000, 1);

	model_event(m, "fault %s on %d node(s)", "drop-1pct", 3);
	model_arm_begin(m, 0, 0, 2, 8);
	model_arm_done(m, 0, r0, 8);
	model_arm_begin(m, 1, 0, 2, 8);
	model_intervals(m, 0, iv, 5);
	model_arm_done(m, 1, r1, 8);
	model_rules(m, stats);
	{	/* an exec round's tools' figures: the worst of its runs */
		json_t *ex = json_pack("[{s:[{s:s,s:{s:{s:f}}},{s:s,s:{s:{s:f}}}]}]", "exec", "role",
				       "host", "fio", "write", "iops", 900.0, "role", "host", "fio",
				       "write", "iops", 700.0);

		exp_exec_tools(m->arm[1].tools, ex);
		json_decref(ex);
	}
	m->nnodes = 1;
	snprintf(m->node[0].name, sizeof(m->node[0].name), "node0");
	snprintf(m->node[0].state, sizeof(m->node[0].state), "ACTIVE");
	m->node[0].agent_ok = 1;
	json_decref(iv);
	json_decref(stats);
	json_decref(r0);
	json_decref(r1);
}

static void test_round_trip(void)
{
	static struct model a, b;
	struct profile p;
	json_t *ja, *jb;

	profile_init(&p, "collective");
	profile_add_arm(&p, "rc", "rc", NULL);
	profile_add_arm(&p, "lossy", "lossy", NULL);
	model_init(&a, &p, MEASURE_STEPS);
	fill(&a);
	ja = model_to_json(&a);
	memset(&b, 0, sizeof(b));
	pthread_mutex_init(&b.lock, NULL);
	for (int i = 0; i < PROF_MAX_ARMS; i++)
		arm_acc_init(&b.arm[i].acc, "", "");
	EXPECT(!model_from_json(&b, ja));
	jb = model_to_json(&b);
	json_object_del(ja, "elapsed_s");
	json_object_del(jb, "elapsed_s");
	EXPECT(json_equal(ja, jb));
	if (!json_equal(ja, jb)) {
		char *x = json_dumps(ja, JSON_SORT_KEYS | JSON_COMPACT), *y = json_dumps(jb, JSON_SORT_KEYS | JSON_COMPACT);

		fprintf(stderr, "published: %.600s\nread back: %.600s\n", x, y);
		free(x);
		free(y);
	}
	EXPECT(b.narms == 2 && b.measure == MEASURE_STEPS && b.nrules == 1 && b.nevents == 1);
	{	/* the tools' figures: read back, in the arm's JSON, the worse run's */
		json_t *arm1 = model_arm_json(&b, 1), *arm0 = model_arm_json(&b, 0);

		EXPECT(json_real_value(json_object_get(json_object_get(json_object_get(arm1, "fio"),
						"write"), "iops")) == 700.0);
		EXPECT(!json_object_get(arm0, "fio"));
		json_decref(arm1);
		json_decref(arm0);
	}
	for (int i = 0; i < 2; i++) {
		struct arm_acc *x = &a.arm[i].acc, *y = &b.arm[i].acc;

		EXPECT(!memcmp(&x->h, &y->h, sizeof(x->h)));
#define SAME_U64(f) EXPECT_EQ_U(x->f, y->f);
#define SAME_F64(f) EXPECT(x->f == y->f);
		ARM_ACC_U64(SAME_U64)
		ARM_ACC_F64(SAME_F64)
		EXPECT(json_equal(x->hw, y->hw));
	}
	/* what the live arm adds: the latest interval's loss */
	EXPECT(b.arm[1].last_lost == 0.01);
	EXPECT(b.arm[1].accuracy == 0.5);
	json_decref(ja);
	json_decref(jb);
	model_fini(&a);
	model_fini(&b);
	profile_free(&p);
}

/* the rows the TUI draws come from the metric table over model_arm_json */
static void test_rows(void)
{
	static struct model m;
	const struct metric *x;
	struct profile p;
	char cell[64];
	json_t *j;
	int rows = 0;

	profile_init(&p, "collective");
	profile_add_arm(&p, "rc", "rc", NULL);
	profile_add_arm(&p, "lossy", "lossy", NULL);
	model_init(&m, &p, MEASURE_STEPS);
	fill(&m);
	model_vs_first(&m);
	j = model_arm_json(&m, 1);
	for (x = report_metrics; x->name; x++) {
		if (!(x->where & MW_TUI_LAT) || !x->tui_order)
			continue;
		rows++;
		metric_cell(x, j, NULL, 0, cell, sizeof(cell));
		if (!strcmp(x->name, "state"))
			EXPECT(!strcmp(cell, "waiting"));
		if (!strcmp(x->name, "lost [%]"))	/* 33 of 3000 pieces */
			EXPECT(!strcmp(cell, "1.100"));
		if (!strcmp(x->name, "now lost [%]"))
			EXPECT(!strcmp(cell, "1.000"));
		if (!strcmp(x->name, "retransmits"))	/* (3+2) + (4+2) + (5+2) */
			EXPECT(!strcmp(cell, "18"));
		if (!strcmp(x->name, "p99 1st/this")) {	/* rc's p99 over lossy's, its interval */
			double r = 0, lo = 0, hi = 0, want = (double)hist_quantile(&m.arm[0].acc.h, 0.99) /
							   (double)hist_quantile(&m.arm[1].acc.h, 0.99);

			EXPECT(sscanf(cell, "%lf (%lf-%lf)", &r, &lo, &hi) == 3);
			EXPECT(r > want - 0.01 && r < want + 0.01 && lo <= r && r <= hi && r < 1);
		}
	}
	EXPECT(rows >= 10);
	json_decref(j);
	model_fini(&m);
	/* an arm that never ran shows its state and no numbers */
	model_init(&m, &p, MEASURE_STEPS);
	model_vs_first(&m);
	j = model_arm_json(&m, 1);
	EXPECT(!json_object_get(json_object_get(j, "live"), "p99_vs_first"));
	json_decref(j);
	j = model_arm_json(&m, 0);
	for (x = report_metrics; x->name; x++)
		if ((x->where & MW_TUI_LAT) && x->tui_order && strcmp(x->name, "state") &&
		    strcmp(x->name, "steps done"))
			EXPECT(!metric_cell(x, j, NULL, 0, cell, sizeof(cell)) && !strcmp(cell, "-"));
	json_decref(j);
	model_fini(&m);
	profile_free(&p);
}

int main(void)
{
	test_round_trip();
	test_rows();
	return expect_done("test_ctl_model");
}
