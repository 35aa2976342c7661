// SPDX-License-Identifier: MIT
/*
 * An exec workload's commands (report arms' "roles", made by ctl/wl/exec.c)
 * rendered: a line per command run under the text table, and a table in
 * report.html whose output cells link to the files kept in the run
 * directory (paths relative to it, so the page works where the run is).
 */
#include <stdio.h>
#include <string.h>
#include "ctl/report/plot.h"

/* "253 B", "8.0 MiB (+1.2 MiB dropped)" */
static void bytes(char *buf, size_t len, const json_t *run, const char *key)
{
	char k[32];
	double n, d;

	n = (double)jr_u64(run, key);
	snprintf(k, sizeof(k), "%s_dropped", key[3] == 'o' ? "stdout" : "stderr");
	d = (double)jr_u64(run, k);
	if (n < 10240)
		snprintf(buf, len, "%.0f B", n);
	else
		snprintf(buf, len, "%.1f MiB", n / 1048576);
	if (d > 0)
		snprintf(buf + strlen(buf), len - strlen(buf), " (+%.1f MiB dropped)", d / 1048576);
}

/* fn on every command run of every role of every arm, in order (n: how
 * many came before); how many there were */
static int each_run(const json_t *rep, FILE *f,
		    void (*fn)(FILE *f, int n, const json_t *arm, const json_t *role,
			       const json_t *run))
{
	const json_t *arm, *role, *run;
	size_t i, j, k;
	int n = 0;

	json_array_foreach(json_object_get(rep, "arms"), i, arm)
		json_array_foreach(json_object_get(arm, "roles"), j, role)
			json_array_foreach(json_object_get(role, "runs"), k, run)
				fn(f, n++, arm, role, run);
	return n;
}

static void text_row(FILE *f, int n, const json_t *arm, const json_t *role, const json_t *run)
{
	char o[64], e[64], who[80];

	if (!n)
		fprintf(f, "# %-22s %-8s %5s %-12s %5s %9s %10s %10s %s\n", "command", "node",
			"round", "status", "exit", "wall[s]", "stdout", "stderr", "left behind");
	snprintf(who, sizeof(who), "%s/%s", jr_str(arm, "name"), jr_str(role, "name"));
	bytes(o, sizeof(o), run, "stdout_bytes");
	bytes(e, sizeof(e), run, "stderr_bytes");
	fprintf(f, "  %-22s %-8s %5llu %-12s %5lld %9.3f %10s %10s %llu%s%s\n", who,
		jr_str(run, "node"), (unsigned long long)jr_u64(run, "round"), jr_str(run, "status"),
		(long long)json_integer_value(json_object_get(run, "exit")),
		jr_real(run, "wall_ns") / 1e9, o, e, (unsigned long long)jr_u64(run, "leftover"),
		json_object_get(run, "note") ? "  " : "",
		json_object_get(run, "note") ? jr_str(run, "note") : "");
}

void report_print_roles(const json_t *rep, FILE *f)
{
	each_run(rep, f, text_row);
}

static void link_to(FILE *f, const json_t *run, const char *key, const char *text)
{
	const char *path = jr_str(run, key);

	/* a report read back may come from anywhere: only our own relative
	 * paths become links (no javascript:, no ../) */
	if (strncmp(path, "exec/", 5) || strstr(path, "..") || strpbrk(path, ":\\")) {
		html_escape(f, text);
		return;
	}
	fputs("<a href=\"", f);
	html_escape(f, path);
	fputs("\">", f);
	html_escape(f, text);
	fputs("</a>", f);
}

static void html_row(FILE *f, int n, const json_t *arm, const json_t *role, const json_t *run)
{
	int ok = !strcmp(jr_str(run, "status"), "exited") &&
		 !json_integer_value(json_object_get(run, "exit"));
	char o[64], e[64], num[64];

	if (!n)
		fputs("<h2>Commands</h2>\n<table id=\"commands\"><tr><th>arm</th><th>role</th>"
		      "<th>node</th><th>round</th><th>status</th><th>exit</th><th>wall [s]</th>"
		      "<th>stdout</th><th>stderr</th><th>left behind</th></tr>\n", f);
	fputs("<tr><td>", f);
	html_escape(f, jr_str(arm, "name"));
	fputs("</td><td>", f);
	html_escape(f, jr_str(role, "name"));
	fputs("</td><td>", f);
	html_escape(f, jr_str(run, "node"));
	fprintf(f, "</td><td>%llu</td><td style=\"%s\">", (unsigned long long)jr_u64(run, "round"),
		ok || !strcmp(jr_str(run, "status"), "stopped") ? "" : "color:#c00;font-weight:bold");
	html_escape(f, jr_str(run, "status"));
	if (json_object_get(run, "note")) {
		fputs(": ", f);
		html_escape(f, jr_str(run, "note"));
	}
	snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(json_object_get(run, "exit")));
	fputs("</td><td>", f);
	html_escape(f, num);
	fprintf(f, "</td><td>%.3f</td><td>", jr_real(run, "wall_ns") / 1e9);
	bytes(o, sizeof(o), run, "stdout_bytes");
	bytes(e, sizeof(e), run, "stderr_bytes");
	link_to(f, run, "stdout", o);
	fputs("</td><td>", f);
	link_to(f, run, "stderr", e);
	fprintf(f, "</td><td>%llu</td></tr>\n", (unsigned long long)jr_u64(run, "leftover"));
}

void report_html_roles(const json_t *rep, FILE *f)
{
	if (each_run(rep, f, html_row))
		fputs("</table>\n", f);
}
