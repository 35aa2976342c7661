// SPDX-License-Identifier: MIT
/*
 * Report rendering against golden files: every checked-in report.json of
 * a real run (tests/unit/golden/NAME.report.json: a collective, a train
 * and a kv run on the VM testbed) rendered to text, CSV and HTML must
 * equal NAME.txt, NAME.csv and NAME.html byte for byte. After an intended
 * change of the output, UPDATE_GOLDEN=1 rewrites them (and the diff is
 * reviewed like code). Also: every CSV row has the header's columns, the
 * text has one row per arm, the HTML its tables and its charts' data (JSON
 * that parses, a series per arm), and HTML special characters in names
 * are escaped, in the page and in the charts' data. The golden pages hold
 * a placeholder where the inlined chart library and style go (they are
 * Debian's and ours, not the rendering's).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "expect.h"
#include "ctl/report/report.h"

#define GOLDEN "tests/unit/golden"

typedef int (*render_fn)(const json_t *, FILE *);

extern const char rtb_asset_dygraph_js[], rtb_asset_dygraph_css[], rtb_asset_charts_js[],
	rtb_asset_charts_css[];

/* every inlined asset in buf[0..*n) as "[asset NAME]" (its size is its own) */
static void placeholders(char *buf, size_t *n)
{
	static const struct {
		const char *name, *text;
	} a[] = { { "dygraph.min.js", rtb_asset_dygraph_js },
		  { "dygraph.min.css", rtb_asset_dygraph_css },
		  { "charts.js", rtb_asset_charts_js },
		  { "charts.css", rtb_asset_charts_css } };

	for (size_t k = 0; k < sizeof(a) / sizeof(a[0]); k++) {
		size_t l = strlen(a[k].text);
		char *p, ph[96];
		int m;

		while (l && (p = memmem(buf, *n, a[k].text, l))) {
			m = snprintf(ph, sizeof(ph), "[asset %s]", a[k].name);
			memmove(p + m, p + l, (size_t)(buf + *n - (p + l)));
			memcpy(p, ph, (size_t)m);
			*n = *n - l + (size_t)m;
			buf[*n] = 0;
		}
	}
}

static int render_text(const json_t *r, FILE *f)
{
	report_print_text(r, f);
	return 0;
}

/* the rendering into a malloc'd string */
static char *render(render_fn fn, const json_t *rep, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	EXPECT(f != NULL);
	if (!f)
		return NULL;
	EXPECT(fn(rep, f) == 0);
	fclose(f);
	return buf;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = 0;
	*len = (size_t)n;
	fclose(f);
	return buf;
}

static void golden(const char *name, const char *ext, render_fn fn, const json_t *rep)
{
	char path[512];
	size_t n, m = 0;
	char *got = render(fn, rep, &n), *want;

	if (got && fn == report_html)
		placeholders(got, &n);
	snprintf(path, sizeof(path), GOLDEN "/%s.%s", name, ext);
	if (getenv("UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");

		EXPECT(f && fwrite(got, 1, n, f) == n);
		if (f)
			fclose(f);
	}
	want = slurp(path, &m);
	EXPECT(want != NULL);
	EXPECT(want && got && n == m && !memcmp(got, want, n));
	if (want && got && (n != m || memcmp(got, want, n)))
		fprintf(stderr, "%s differs from the rendering (%zu vs %zu bytes): run the test with "
			"UPDATE_GOLDEN=1 if the change is intended\n", path, m, n);
	free(got);
	free(want);
}

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

/*
 * The charts' data: every JSON block parses, has its axes and its series
 * with [x, y] points; the CDF has a series per arm with samples, ending at
 * 1; the step-time chart a p50 and a max series per arm.
 */
static void charts(const char *html, const json_t *rep)
{
	static const char tag[] = "<script type=\"application/json\" class=\"chart-data\">";
	const json_t *arms = json_object_get(rep, "arms"), *arm, *se, *pt;
	const char *p = html, *e;
	size_t i, k, with = 0, blocks = 0;

	json_array_foreach(arms, i, arm)
		with += json_integer_value(json_object_get(arm, "count")) > 0;
	while ((p = strstr(p, tag)) && (e = strstr(p, "</script>"))) {
		json_error_t je;
		json_t *c;
		const char *id;

		p += sizeof(tag) - 1;
		c = json_loadb(p, (size_t)(e - p), 0, &je);
		EXPECT(c != NULL);
		if (!c)
			break;
		blocks++;
		id = json_string_value(json_object_get(c, "id"));
		EXPECT(id && json_is_object(json_object_get(c, "x")) &&
		       json_is_object(json_object_get(c, "y")) &&
		       json_is_array(json_object_get(c, "series")));
		json_array_foreach(json_object_get(c, "series"), k, se)
			json_array_foreach(json_object_get(se, "points"), i, pt)
				EXPECT(json_array_size(pt) == 2 && json_is_number(json_array_get(pt, 0)) &&
				       json_is_number(json_array_get(pt, 1)));
		if (id && !strcmp(id, "cdf")) {
			EXPECT(json_array_size(json_object_get(c, "series")) == with);
			json_array_foreach(json_object_get(c, "series"), k, se) {
				const json_t *pts = json_object_get(se, "points");

				EXPECT(json_number_value(json_array_get(
					       json_array_get(pts, json_array_size(pts) - 1), 1)) == 1.0);
			}
		}
		if (id && !strcmp(id, "timeline"))
			EXPECT(json_array_size(json_object_get(c, "series")) == 2 * json_array_size(arms));
		json_decref(c);
		p = e;
	}
	EXPECT(blocks >= 4);
}

/* structure that holds whatever the numbers are */
static void shape(const json_t *rep)
{
	size_t n, arms = json_array_size(json_object_get(rep, "arms")), lines = 0, cols = 0;
	char *csv = render(report_csv, rep, &n), *txt, *html, *line, *save;

	for (line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save), lines++) {
		if (!lines)
			cols = count_char(line, ',');
		EXPECT(count_char(line, ',') == cols);
	}
	EXPECT(lines == arms + 1);
	free(csv);
	txt = render(render_text, rep, &n);
	lines = 0;
	{	/* the table: the rows between its heading and the first note */
		int in_table = 0;

		for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			if (!strncmp(line, "# arm ", 6))
				in_table = 1;
			else if (line[0] == '#' && in_table)
				break;
			else if (in_table)
				lines += line[0] == ' ';
		}
	}
	EXPECT(lines == arms);
	free(txt);
	html = render(report_html, rep, &n);
	EXPECT(strstr(html, "<table id=\"summary\">") && strstr(html, "<table id=\"faults\">") &&
	       strstr(html, "<table id=\"arm_ci\">"));
	EXPECT(strstr(html, "<figure class=\"chart\" id=\"cdf\">") &&
	       strstr(html, "<figure class=\"chart\" id=\"timeline\">"));
	EXPECT(strstr(html, rtb_asset_dygraph_js) && strstr(html, rtb_asset_charts_js));
	EXPECT(strstr(html, "</body></html>") != NULL);
	charts(html, rep);
	free(html);
}
/* the comparison with its intervals, in the text and on the page */
static void test_vs_first(const json_t *rep)
{
	json_t *r = json_deep_copy(rep), *arms = json_object_get(r, "arms");
	size_t n;
	char *html, *txt;

	if (json_array_size(arms) < 2) {
		json_decref(r);
		return;
	}
	json_object_set_new(json_array_get(arms, 1), "vs_first_arm",
			    json_pack("{s:s,s:f,s:i,s:s,s:f,s:[f,f],s:f,s:[f,f],s:f,s:[f,f],s:f,s:[f,f]}",
				      "arm", "first<", "confidence", 0.95, "resamples", 4000, "method",
				      "percentile bootstrap", "p50_ratio", 2.5, "p50_ratio_ci95", 2.25,
				      2.75, "p50_diff_ns", 3e8, "p50_diff_ci95_ns", 2e8, 4e8, "p99_ratio",
				      3.5, "p99_ratio_ci95", 3.0, 4.0, "p99_diff_ns", 6e8,
				      "p99_diff_ci95_ns", 5e8, 7e8));
	html = render(report_html, r, &n);
	EXPECT(html && strstr(html, "<table id=\"vs_first\">") &&
	       strstr(html, "first&lt; / ") && strstr(html, "<td>2.50 (2.25-2.75)</td><td>300.0 (200.0 to 400.0)</td>") &&
	       strstr(html, "<td>3.50 (3.00-4.00)</td><td>600.0 (500.0 to 700.0)</td>"));
	txt = render(render_text, r, &n);
	EXPECT(txt && strstr(txt, "= 3.50 (95% CI 3.00-4.00)"));
	free(html);
	free(txt);
	json_decref(r);
}

static void test_escape(const json_t *rep)
{
	json_t *r = json_deep_copy(rep);
	size_t n;
	char *html;

	json_object_set_new(json_object_get(r, "profile"), "name", json_string("<b>&\"x\"</b>"));
	html = render(report_html, r, &n);
	EXPECT(!strstr(html, "<b>&") && strstr(html, "&lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;"));
	free(html);
	/* every string a report.json from elsewhere may hold, in every place
	 * the page puts it: arm and fault names in attributes, legends and
	 * bars; the header's fields (they were written unescaped) */
	json_object_set_new(json_array_get(json_object_get(r, "arms"), 0), "name",
			    json_string("\"><script>alert(1)</script>"));
	json_object_set_new(r, "workload", json_string("<img src=x onerror=alert(2)>"));
	json_object_set_new(r, "status", json_string("<script>alert(3)</script>"));
	if (json_array_size(json_object_get(r, "faults")))
		json_object_set_new(json_array_get(json_object_get(r, "faults"), 0), "name",
				    json_string("'><svg onload=alert(4)>"));
	html = render(report_html, r, &n);
	EXPECT(html && !strstr(html, "<script>alert") && !strstr(html, "<img src=x") &&
	       !strstr(html, "<svg onload") && !strstr(html, "\"><script"));
	free(html);
	/* a name that would end the chart's data script and open another */
	json_object_set_new(json_array_get(json_object_get(r, "arms"), 0), "name",
			    json_string("</script><script>alert(5)</script><!--"));
	html = render(report_html, r, &n);
	EXPECT(html && !strstr(html, "</script><script>alert") && !strstr(html, "<!--") &&
	       strstr(html, "\\u003c/script>\\u003cscript>alert(5)"));
	free(html);
	/* an arm without a name (or a name of the wrong type), compared and
	 * rendered: a report from elsewhere, no crash */
	json_object_del(json_array_get(json_object_get(r, "arms"), 0), "name");
	if (json_array_size(json_object_get(r, "arms")) > 1)
		json_object_set_new(json_array_get(json_object_get(r, "arms"), 1), "name",
				    json_integer(7));
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		EXPECT(f != NULL);
		if (f) {
			const json_t *two[2] = { r, rep };
			const char *names[2] = { "a", "b" };
			json_t *c = report_comparison(two, names, 2);

			report_comparison_text(c, f);
			report_comparison_html(c, f);
			json_decref(c);
			report_print_text(r, f);
			report_csv(r, f);
			report_html(r, f);
			fclose(f);
		}
		EXPECT(len > 0);
		free(buf);
	}
	json_decref(r);
}

/* report_write: every file complete; an arm's name never leaves the directory */
static void test_write(const json_t *rep)
{
	json_t *r = json_deep_copy(rep);
	char dir[] = "/tmp/rtb-report-test.XXXXXX", path[512], err[256];
	struct dirent *e;
	DIR *d;
	int hlogs = 0, others = 0;

	EXPECT(mkdtemp(dir) != NULL);
	json_object_set_new(json_array_get(json_object_get(r, "arms"), 0), "name",
			    json_string("../../escape/x"));
	EXPECT(report_write(r, dir, err, sizeof(err)) == 0);
	snprintf(path, sizeof(path), "%s/../escape", dir);
	EXPECT(access(path, F_OK) != 0);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (e->d_name[0] == '.')
			others += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");	/* a temporary left */
		else if (l > 5 && !strcmp(e->d_name + l - 5, ".hlog"))
			hlogs++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.')
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	EXPECT(others == 0);
	EXPECT_EQ_U(hlogs, json_array_size(json_object_get(r, "arms")));
	json_decref(r);
}

/* honest percentiles: pX needs 1/(1-X) samples; short ones listed and marked */
static void test_insufficient(void)
{
	static const struct {
		json_int_t count;
		const char *want;
	} cases[] = {
		{ 1, "[\"p50\",\"p90\",\"p99\",\"p99.9\",\"p99.99\"]" },
		{ 72, "[\"p99\",\"p99.9\",\"p99.99\"]" },
		{ 100, "[\"p99.9\",\"p99.99\"]" },
		{ 999, "[\"p99.9\",\"p99.99\"]" },
		{ 1000, "[\"p99.99\"]" },
		{ 10000, "[]" },
	};
	const struct metric *p99 = NULL, *p50 = NULL;

	for (const struct metric *m = report_metrics; m->name; m++) {
		if (!strcmp(m->name, "p99[ms]"))
			p99 = m;
		if (!strcmp(m->name, "p50[ms]"))
			p50 = m;
	}
	EXPECT(p99 && p50);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *arm = json_pack("{s:{s:I,s:i,s:i,s:i,s:i,s:i}}", "percentiles", "count",
					cases[i].count, "p50_ns", 1000000, "p90_ns", 2000000, "p99_ns",
					3000000, "p99_9_ns", 4000000, "p99_99_ns", 5000000);
		json_t *ins = report_insufficient(arm);
		char *got = json_dumps(ins, JSON_COMPACT), cell[32];

		EXPECT(got && !strcmp(got, cases[i].want));
		if (p99 && p50) {
			metric_cell(p99, arm, NULL, 0, cell, sizeof(cell));
			EXPECT(!strcmp(cell, cases[i].count < 100 ? "3.00*" : "3.00"));
			metric_cell(p99, arm, NULL, 1, cell, sizeof(cell));	/* CSV: raw */
			EXPECT(!strcmp(cell, "3000000"));
			metric_cell(p50, arm, NULL, 0, cell, sizeof(cell));
			EXPECT(!strcmp(cell, cases[i].count < 2 ? "1.00*" : "1.00"));
		}
		free(got);
		json_decref(ins);
		json_decref(arm);
	}
}

int main(void)
{
	DIR *d = opendir(GOLDEN);

	test_insufficient();
	struct dirent *e;
	int n = 0;

	EXPECT(d != NULL);
	while (d && (e = readdir(d))) {
		char name[256], path[512];
		size_t l = strlen(e->d_name);
		json_error_t je;
		json_t *rep;

		if (l < 12 || strcmp(e->d_name + l - 12, ".report.json"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(l - 12), e->d_name);
		snprintf(path, sizeof(path), GOLDEN "/%s", e->d_name);
		rep = json_load_file(path, 0, &je);
		EXPECT(rep != NULL);
		if (!rep)
			continue;
		golden(name, "txt", render_text, rep);
		golden(name, "csv", report_csv, rep);
		golden(name, "html", report_html, rep);
		shape(rep);
		if (!n) {
			test_escape(rep);
			test_vs_first(rep);
			test_write(rep);
		}
		json_decref(rep);
		n++;
	}
	if (d)
		closedir(d);
	EXPECT(n >= 3);
	return expect_done("test_ctl_report");
}
