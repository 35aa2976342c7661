// SPDX-License-Identifier: MIT
/*
 * Expectations: parsing (units, operators, arms, the workload's metrics,
 * where an error points), evaluation on report arms (held, failed, no
 * value, rc's loss, an arm that never ran), and the renderings: text lines,
 * the HTML table, and JUnit XML written whole.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "expect.h"
#include "ctl/exp/expect.h"
#include "ctl/report/report.h"

static int parse(const char *s, unsigned measure, struct prof_expect *x, size_t *off)
{
	char err[400];

	return expect_parse(s, measure, x, err, sizeof(err), off);
}

static int err_has(const char *s, unsigned measure, const char *want, size_t want_off)
{
	struct prof_expect x;
	char err[400];
	size_t off = 999;

	if (!expect_parse(s, measure, &x, err, sizeof(err), &off))
		return 0;
	if (!strstr(err, want) || off != want_off) {
		fprintf(stderr, "'%s': error '%s' at %zu (expected '%s' at %zu)\n", s, err, off, want,
			want_off);
		return 0;
	}
	return 1;
}

static void test_parse(void)
{
	struct prof_expect x;
	size_t off;

	EXPECT(!parse("rc: wrong == 0", MEASURE_STEPS, &x, &off));
	EXPECT(!strcmp(x.arm, "rc") && !strcmp(x.text, "rc: wrong == 0") && x.value == 0);
	EXPECT(!parse("  p99 < 500ms  ", MEASURE_STEPS, &x, &off));
	EXPECT(!x.arm[0] && !strcmp(x.text, "p99 < 500ms") && x.value == 500e6);
	EXPECT(!parse("lossy:lost<5%", MEASURE_STEPS, &x, &off) && fabs(x.value - 0.05) < 1e-12);
	EXPECT(!parse("all: p99 < 1s", MEASURE_STEPS, &x, &off) && !x.arm[0]);	/* every arm */
	EXPECT(!parse("lost <= 0.05", MEASURE_TRAIN, &x, &off) && fabs(x.value - 0.05) < 1e-12);
	EXPECT(!parse("p99.9 >= 1.5us", MEASURE_OPS, &x, &off) && x.value == 1500);
	EXPECT(!parse("p99.99 != 2s", MEASURE_OPS, &x, &off) && x.value == 2e9);
	EXPECT(!parse("busbw > 1.5GB/s", MEASURE_STEPS, &x, &off) && x.value == 1.5e9);
	EXPECT(!parse("algbw > 200M", MEASURE_STEPS, &x, &off) && x.value == 200e6);
	EXPECT(!parse("ops_per_s >= 2.5k", MEASURE_OPS, &x, &off) && x.value == 2500);
	EXPECT(!parse("tta < 30s", MEASURE_TRAIN, &x, &off) && x.value == 30e9);
	EXPECT(!parse("hadamard: accuracy >= 70%", MEASURE_TRAIN, &x, &off) &&
	       fabs(x.value - 0.7) < 1e-12);
	/* what is wrong, and where (0-based, in the text as given) */
	EXPECT(err_has("p99 < 5", MEASURE_STEPS, "needs its unit", 6));
	EXPECT(err_has("p99 < 5x", MEASURE_STEPS, "unknown time unit", 6));
	EXPECT(err_has("  p99 < 5", MEASURE_STEPS, "needs its unit", 8));
	EXPECT(err_has("rc: p42 < 5s", MEASURE_STEPS, "unknown metric 'p42'", 4));
	EXPECT(err_has("tta < 5s", MEASURE_STEPS, "not one this workload reports", 0));
	EXPECT(err_has("busbw > 1", MEASURE_OPS, "not one this workload reports", 0));
	EXPECT(err_has("p99 2s", MEASURE_STEPS, "expected an operator", 4));
	EXPECT(err_has("p99 =< 2s", MEASURE_STEPS, "expected an operator", 4));
	EXPECT(err_has("p99 <", MEASURE_STEPS, "expected a value", 5));
	EXPECT(err_has("p99 < -2s", MEASURE_STEPS, "not negative", 6));
	EXPECT(err_has("wrong == 0 junk", MEASURE_STEPS, "unexpected text", 11));
	EXPECT(err_has("lost < 101%", MEASURE_STEPS, "at most 100%", 7));
	EXPECT(err_has("lost < 5", MEASURE_STEPS, "at most 100%", 7));
	EXPECT(err_has("busbw > 1.5GB", MEASURE_STEPS, "expected a rate", 8));
	/* a long value is read whole: its bad end is not cut off */
	EXPECT(err_has("count >= 1000000000000000000000000000000000000000000000000000000000000000000000x",
		       MEASURE_STEPS, "expected a count", 9));
	EXPECT(err_has(": p99 < 1s", MEASURE_STEPS, "expected an arm name", 0));
	EXPECT(err_has("", MEASURE_STEPS, "expected '[ARM:] METRIC OP VALUE'", 0));
	EXPECT(err_has("rc: wrong == 0 0000000000000000000000000000000000000000000000000000000000"
		       "000000000000000000000000000000000000000000000000000000000000000000000",
		       MEASURE_STEPS, "too long", 0));
}

static json_t *arm(const char *name, const char *mode, double p99_ns, double lost, int wrong)
{
	json_t *a = json_pack("{s:s,s:s,s:{s:f},s:i,s:I}", "name", name, "mode", mode,
			      "percentiles", "p99_ns", p99_ns, "wrong", wrong, "count", (json_int_t)72);

	if (lost >= 0)
		json_object_set_new(a, "lost_fraction", json_real(lost));
	return a;
}

static const json_t *entry(const json_t *ev, const char *arm, const char *expect)
{
	const json_t *e;
	size_t i;

	json_array_foreach(ev, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "arm")), arm) &&
		    !strcmp(json_string_value(json_object_get(e, "expect")), expect))
			return e;
	return NULL;
}

static int held(const json_t *ev, const char *arm, const char *expect)
{
	return json_is_true(json_object_get(entry(ev, arm, expect), "held"));
}

static void test_eval(void)
{
	const char *texts[] = { "rc: wrong == 0", "all: lost < 5%", "p99 < 100ms", "lossy: count >= 72",
				"ec: p99 < 1s", "hadamard: lost < 1%" };
	struct prof_expect x[6];
	json_t *arms = json_array(), *ev;
	size_t off;
	int i, failed = -1;

	for (i = 0; i < 6; i++)
		EXPECT(!parse(texts[i], MEASURE_STEPS, &x[i], &off));
	json_array_append_new(arms, arm("rc", "rc", 250e6, -1, 0));
	json_array_append_new(arms, arm("lossy", "lossy", 80e6, 0.012, 3));
	json_array_append_new(arms, arm("hadamard", "hadamard", 90e6, -1, 0));
	ev = expect_eval(x, 6, arms, &failed);
	/* 1 + 3 + 3 + 1 + 1 (no arm ec) + 1 */
	EXPECT_EQ_U(json_array_size(ev), 10);
	EXPECT(held(ev, "rc", "rc: wrong == 0"));
	EXPECT(held(ev, "rc", "all: lost < 5%"));	/* rc: no loss reported, none had */
	EXPECT(held(ev, "lossy", "all: lost < 5%"));
	EXPECT(!held(ev, "hadamard", "all: lost < 5%"));	/* a lossy mode without the figure */
	EXPECT(!strcmp(json_string_value(json_object_get(entry(ev, "hadamard", "all: lost < 5%"), "shown")),
		       "no value"));
	EXPECT(!held(ev, "rc", "p99 < 100ms"));
	EXPECT(!strcmp(json_string_value(json_object_get(entry(ev, "rc", "p99 < 100ms"), "message")),
		       "rc: p99 < 100ms failed: 250 ms"));
	EXPECT(!strcmp(json_string_value(json_object_get(entry(ev, "lossy", "all: lost < 5%"),
							 "message")), "lossy: lost < 5% held: 1.2%"));
	EXPECT(held(ev, "lossy", "p99 < 100ms") && held(ev, "hadamard", "p99 < 100ms"));
	EXPECT(held(ev, "lossy", "lossy: count >= 72"));
	EXPECT(!held(ev, "ec", "ec: p99 < 1s"));
	EXPECT(json_is_null(json_object_get(entry(ev, "ec", "ec: p99 < 1s"), "actual")));
	EXPECT(!held(ev, "hadamard", "hadamard: lost < 1%"));
	EXPECT_EQ_U(failed, 4);
	json_decref(ev);
	json_decref(arms);
}

/* a tool's figure printed as inf (tool_perftest.c's "unmeasured") */
static void test_unmeasured(void)
{
	struct prof_expect x;
	json_t *arms = json_array(), *ev;
	size_t off;
	int failed = -1;

	EXPECT(!parse("lat: perftest.lat_p99 < 1s", MEASURE_EXEC, &x, &off));
	json_array_append_new(arms, json_pack("{s:s,s:s,s:{s:i,s:{s:s}}}", "name", "lat", "mode",
					      "exec", "perftest", "iterations", 300, "unmeasured",
					      "lat_p99_ns", "inf"));
	ev = expect_eval(&x, 1, arms, &failed);
	EXPECT_EQ_U(failed, 1);
	EXPECT_MSG(!strcmp(json_string_value(json_object_get(entry(ev, "lat", x.text), "shown")),
			   "no value (perftest printed inf)"),
		   "%s", json_string_value(json_object_get(entry(ev, "lat", x.text), "shown")));
	json_decref(ev);
	json_decref(arms);
}

static void test_tta_never(void)
{
	struct prof_expect x;
	json_t *arms = json_array(), *ev;
	size_t off;
	int failed;

	EXPECT(parse("tta < 1h", MEASURE_TRAIN, &x, &off) == -EINVAL);	/* no such unit */
	EXPECT(!parse("tta < 60s", MEASURE_TRAIN, &x, &off));
	json_array_append_new(arms, json_pack("{s:s,s:s,s:n}", "name", "rc", "mode", "rc", "tta_ns"));
	json_array_append_new(arms, json_pack("{s:s,s:s,s:I}", "name", "h", "mode", "hadamard",
					      "tta_ns", (json_int_t)9000000000LL));
	ev = expect_eval(&x, 1, arms, &failed);
	EXPECT(failed == 1 && !held(ev, "rc", "tta < 60s") && held(ev, "h", "tta < 60s"));
	EXPECT(!strcmp(json_string_value(json_object_get(entry(ev, "rc", "tta < 60s"), "shown")),
		       "never reached"));
	json_decref(ev);
	json_decref(arms);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[16384];
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void test_render(void)
{
	const char *texts[] = { "rc: wrong == 0", "p99 < 100ms" };
	struct prof_expect x[2];
	json_t *arms = json_array(), *rep;
	char dir[] = "/tmp/rtb-expect.XXXXXX", path[64], msg[256], *s, *t;
	size_t off, tn;
	FILE *f;
	int failed;

	for (int i = 0; i < 2; i++)
		EXPECT(!parse(texts[i], MEASURE_STEPS, &x[i], &off));
	json_array_append_new(arms, arm("rc", "rc", 250e6, -1, 0));
	json_array_append_new(arms, arm("a<b>&\"'", "lossy", 80e6, 0.01, 0));
	rep = json_pack("{s:s,s:s,s:f,s:O}", "status", "ok", "created", "2026-12-02T06:00:00Z",
			"duration_s", 12.5, "arms", arms);
	json_object_set_new(rep, "expectations", expect_eval(x, 2, arms, &failed));
	json_object_set_new(rep, "expectations_failed", json_integer(failed));
	EXPECT(failed == 1);
	/* text */
	f = open_memstream(&t, &tn);
	report_print_expectations(rep, f);
	fclose(f);
	EXPECT(strstr(t, "# expectations: 2 of 3 held") != NULL);
	EXPECT(strstr(t, "FAILED rc: p99 < 100ms failed: 250 ms") != NULL);
	free(t);
	/* HTML: escaped */
	f = open_memstream(&t, &tn);
	report_html_expectations(rep, f);
	fclose(f);
	EXPECT(strstr(t, "a&lt;b&gt;&amp;&quot;&#39;") && !strstr(t, "a<b>"));
	EXPECT(strstr(t, "Expectations: 1 failed of 3") != NULL);
	free(t);
	/* JUnit: whole, escaped, the run and three cases, one failure */
	EXPECT(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	EXPECT(!report_junit(rep, "quick&start", NULL, path, msg, sizeof(msg)));
	s = slurp(path);
	EXPECT(s && strstr(s, "<testsuite name=\"quick&amp;start\" tests=\"4\" failures=\"1\" "
			      "errors=\"0\" time=\"12.500\" timestamp=\"2026-12-02T06:00:00Z\">"));
	EXPECT(s && strstr(s, "<testcase classname=\"quick&amp;start\" name=\"run\" time=\"12.500\"/>"));
	EXPECT(s && strstr(s, "<failure message=\"rc: p99 &lt; 100ms failed: 250 ms\" "
			      "type=\"expectation\">"));
	EXPECT(s && strstr(s, "classname=\"quick&amp;start.a&lt;b&gt;&amp;&quot;&apos;\""));
	EXPECT(s && !strstr(s, "a<b>"));
	/* no report: the run did not start; the error is the one case */
	EXPECT(!report_junit(NULL, "q", "testbed up: no qemu", path, msg, sizeof(msg)));
	s = slurp(path);
	EXPECT(s && strstr(s, "tests=\"1\" failures=\"0\" errors=\"1\"") &&
	       strstr(s, "<error message=\"testbed up: no qemu\" type=\"run\">"));
	/* a directory that is not there: an error, nothing left behind */
	EXPECT(report_junit(rep, "q", NULL, "/nonexistent-dir/j.xml", msg, sizeof(msg)) == -ENOENT);
	EXPECT(strstr(msg, "/nonexistent-dir/j.xml") != NULL);
	unlink(path);
	EXPECT(!rmdir(dir));
	json_decref(rep);
	json_decref(arms);
}

int main(void)
{
	test_parse();
	test_eval();
	test_unmeasured();
	test_tta_never();
	test_render();
	return expect_done("test_ctl_expect");
}
