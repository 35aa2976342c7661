// SPDX-License-Identifier: MIT
/*
 * A report's expectations (report.json "expectations", made by
 * ctl/exp/expect.c) rendered: lines under the text table, a table in
 * report.html, and a JUnit XML file that CI systems (GitLab, Jenkins,
 * GitHub's test reporters) show as test cases: "run" (did the experiment
 * complete) and one per expectation and arm.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl/report/plot.h"

void report_print_expectations(const json_t *rep, FILE *f)
{
	const json_t *ex = json_object_get(rep, "expectations"), *e;
	size_t i, n = json_array_size(ex);

	if (!json_is_array(ex))
		return;
	fprintf(f, "# expectations: %zu of %zu held\n", n - jr_u64(rep, "expectations_failed"), n);
	json_array_foreach(ex, i, e)
		fprintf(f, "  %-6s %s\n", json_is_true(json_object_get(e, "held")) ? "ok" : "FAILED",
			jr_str(e, "message"));
}

void report_html_expectations(const json_t *rep, FILE *f)
{
	const json_t *ex = json_object_get(rep, "expectations"), *e;
	size_t i;

	if (!json_is_array(ex))
		return;
	fprintf(f, "<h2>Expectations: %llu failed of %zu</h2>\n<table id=\"expectations\"><tr>"
		   "<th>arm</th><th>expectation</th><th>measured</th><th>result</th></tr>\n",
		(unsigned long long)jr_u64(rep, "expectations_failed"), json_array_size(ex));
	json_array_foreach(ex, i, e) {
		int ok = json_is_true(json_object_get(e, "held"));

		fputs("<tr><td>", f);
		html_escape(f, jr_str(e, "arm"));
		if (json_object_get(e, "role")) {
			fputc('/', f);
			html_escape(f, jr_str(e, "role"));
		}
		fputs("</td><td>", f);
		html_escape(f, jr_str(e, "expect"));
		fputs("</td><td>", f);
		html_escape(f, jr_str(e, "shown"));
		fprintf(f, "</td><td style=\"%s\">%s</td></tr>\n",
			ok ? "color:#070" : "color:#c00;font-weight:bold", ok ? "held" : "FAILED");
	}
	fputs("</table>\n", f);
}

/* text as XML character data or an attribute value: the five escapes, and
 * no control characters (XML 1.0 has none but tab and newline) */
static void xml_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '&')
			fputs("&amp;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c == '\'')
			fputs("&apos;", f);
		else if (c < 0x20 && c != '\t' && c != '\n')
			fputc(' ', f);
		else
			fputc(c, f);
	}
}

int report_junit_print(const json_t *rep, const char *suite, const char *err, FILE *f)
{
	const json_t *ex = json_object_get(rep, "expectations"), *e;
	const char *status = rep ? jr_str(rep, "status") : "failed";
	int run_ok = rep && !strcmp(status, "ok");
	size_t i, n = json_array_size(ex), failed = rep ? jr_u64(rep, "expectations_failed") : 0;
	double t = rep ? jr_real(rep, "duration_s") : 0;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"rdmactl\"", f);
	fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"%d\" time=\"%.3f\">\n", n + 1, failed,
		!run_ok, t);
	fputs("  <testsuite name=\"", f);
	xml_escape(f, suite);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%d\" time=\"%.3f\"", n + 1, failed,
		!run_ok, t);
	if (rep) {
		fputs(" timestamp=\"", f);
		xml_escape(f, jr_str(rep, "created"));
		fputs("\"", f);
	}
	fputs(">\n    <testcase classname=\"", f);
	xml_escape(f, suite);
	fprintf(f, "\" name=\"run\" time=\"%.3f\"", t);
	if (run_ok) {
		fputs("/>\n", f);
	} else {
		const char *why = rep && jr_str(rep, "error")[0] ? jr_str(rep, "error") :
				  err && err[0] ? err : status;

		fputs(">\n      <error message=\"", f);
		xml_escape(f, why);
		fputs("\" type=\"run\">", f);
		xml_escape(f, why);
		fputs("</error>\n    </testcase>\n", f);
	}
	json_array_foreach(ex, i, e) {
		fputs("    <testcase classname=\"", f);
		xml_escape(f, suite);
		fputc('.', f);
		xml_escape(f, jr_str(e, "arm"));
		if (json_object_get(e, "role")) {	/* exec: one case per arm and role */
			fputc('.', f);
			xml_escape(f, jr_str(e, "role"));
		}
		fputs("\" name=\"", f);
		xml_escape(f, jr_str(e, "expect"));
		fputs("\" time=\"0\"", f);
		if (json_is_true(json_object_get(e, "held"))) {
			fputs(">\n      <system-out>", f);
			xml_escape(f, jr_str(e, "message"));
			fputs("</system-out>\n    </testcase>\n", f);
			continue;
		}
		fputs(">\n      <failure message=\"", f);
		xml_escape(f, jr_str(e, "message"));
		fputs("\" type=\"expectation\">", f);
		xml_escape(f, jr_str(e, "message"));
		fputs("</failure>\n    </testcase>\n", f);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return ferror(f) ? -EIO : 0;
}
