// SPDX-License-Identifier: MIT
/*
 * rdmactl doctor's output (sweep.h): one JSON object, the text table,
 * and the HTML page with the pairs' heat map (agents' words escaped).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ctl/doctor/sweep.h"
#include "ctl/report/plot.h"
#include "lib/log.h"

json_t *doc_json(const struct doc *dc)
{
	json_t *nodes = json_array(), *named = json_array(), *o;
	int rounds, all_rounds;
	long pairs, all_pairs;

	for (int i = 0; i < dc->n; i++) {
		const struct dnode *d = &dc->d[i];
		const char *name = dc->tb.node[d->tb].name;
		const char *why = d->fact[0] ? d->fact : d->why;
		json_t *x = json_pack("{s:s,s:b}", "name", name, "reached", d->reached);

		if (d->reached)
			json_object_update_new(x, json_pack("{s:s,s:s,s:i,s:s,s:s}", "dev", d->dev,
							    "state", d->state, "mtu", d->mtu, "gid",
							    d->gid, "ip", d->ip));
		if (d->fact[0]) {
			json_object_set_new(x, "verdict", json_string("facts"));
		} else {
			json_object_update_new(x, json_pack("{s:s,s:i,s:i,s:i,s:f,s:f,s:f,s:f}",
				"verdict", dr_verdict_name(d->v.v), "pairs", d->v.pairs, "lossy",
				d->v.lossy, "failed", d->v.failed, "lat_ns", d->v.lat_ns, "z",
				round(d->v.z * 100) / 100, "lost_in_permille",
				round(doc_pm(d->lost_in, d->sent_in) * 100) / 100, "lost_out_permille",
				round(doc_pm(d->lost_out, d->sent_out) * 100) / 100));
		}
		if (why[0]) {
			json_object_set_new(x, "why", json_string(why));
			json_array_append_new(named, json_sprintf("%s: %s", name, why));
		}
		json_array_append_new(nodes, x);
	}
	dr_cost(dc->ni, dc->k, &rounds, &pairs, &all_rounds, &all_pairs);
	o = json_pack("{s:s,s:i,s:o,s:O,s:O,s:O,s:{s:f,s:f,s:f,s:f},s:{s:f,s:f},"
		      "s:{s:i,s:i,s:I,s:i,s:I,s:f},s:o}",
		      "kind", "rdma-testbed-doctor", "schema_version", DOC_SCHEMA_VERSION, "nodes",
		      nodes, "pairs", dc->pairs, "rounds", dc->rounds, "bisection", dc->bisect,
		      "thresholds", "z", DR_Z, "ratio", DR_RATIO, "loss_permille", DR_LOSS_PERMILLE,
		      "outlier_loss_permille", DR_LOSS_OUTLIER_MIN, "fleet", "lat_median_ns", dc->lat_med,
		      "lat_mad_ns", dc->lat_mad, "cost", "nodes", dc->ni, "rounds", rounds, "pairs",
		      (json_int_t)pairs, "all_pairs_rounds", all_rounds, "all_pairs",
		      (json_int_t)all_pairs, "wall_s", round(dc->wall * 1000) / 1000, "named", named);
	return o;
}

void doc_print(const struct doc *dc, const json_t *o)
{
	json_t *p, *c = json_object_get(o, "cost");
	size_t i;

	printf(" %-10s %-8s %-8s %6s  %-28s %-12s %9s %6s %8s %8s\n", "node", "dev", "state", "mtu",
	       "gid", "verdict", "lat[us]", "z", "in[‰]", "out[‰]");
	for (int k = 0; k < dc->n; k++) {
		const struct dnode *d = &dc->d[k];

		printf(" %-10s %-8s %-8s %6d  %-28s %-12s", dc->tb.node[d->tb].name,
		       d->reached ? d->dev : "-", d->reached ? d->state : "-", d->mtu,
		       d->reached ? d->gid : "-", d->fact[0] ? "facts" : dr_verdict_name(d->v.v));
		if (d->fact[0])
			printf("\n");
		else if (d->v.lat_ns > 0)
			printf(" %9.1f %6.1f %8.2f %8.2f\n", d->v.lat_ns / 1e3, d->v.z,
			       doc_pm(d->lost_in, d->sent_in), doc_pm(d->lost_out, d->sent_out));
		else	/* every pair of it lost: its latency is the loss's */
			printf(" %9s %6s %8.2f %8.2f\n", "-", "-", doc_pm(d->lost_in, d->sent_in),
			       doc_pm(d->lost_out, d->sent_out));
	}
	printf("\n %-20s %5s %10s %10s %10s %10s %8s %8s %8s  %s\n", "pair", "round", "p50[us]",
	       "mean[us]", "p99[us]", "bw[MiB/s]", "sent", "lost", "lost[‰]", "retries");
	json_array_foreach(json_object_get(o, "pairs"), i, p) {
		char pair[48];

		snprintf(pair, sizeof(pair), "%s-%s", json_string_value(json_object_get(p, "a")),
			 json_string_value(json_object_get(p, "b")));
		if (json_object_get(p, "failed")) {
			printf(" %-20s %5lld  failed: %s\n", pair,
			       (long long)json_integer_value(json_object_get(p, "round")),
			       json_string_value(json_object_get(p, "failed")));
			continue;
		}
		printf(" %-20s %5lld %10.1f %10.1f %10.1f %10.2f %8lld %8lld %8.2f  %lld\n", pair,
		       (long long)json_integer_value(json_object_get(p, "round")),
		       json_number_value(json_object_get(p, "lat_p50_ns")) / 1e3,
		       json_number_value(json_object_get(p, "lat_mean_ns")) / 1e3,
		       json_number_value(json_object_get(p, "lat_p99_ns")) / 1e3,
		       json_number_value(json_object_get(p, "bw_bytes_per_s")) / 1048576.0,
		       (long long)(json_integer_value(json_object_get(p, "sent_ab")) +
				   json_integer_value(json_object_get(p, "sent_ba"))),
		       (long long)(json_integer_value(json_object_get(p, "lost_ab")) +
				   json_integer_value(json_object_get(p, "lost_ba"))),
		       json_number_value(json_object_get(p, "lost_permille")),
		       (long long)json_integer_value(json_object_get(p, "retries")));
	}
	json_array_foreach(json_object_get(o, "bisection"), i, p)
		printf("%s bisection %s-%s: %s\n", i ? "" : "\n", json_string_value(json_object_get(p, "a")),
		       json_string_value(json_object_get(p, "b")),
		       json_string_value(json_object_get(p, "verdict")));
	printf("\n lost[‰]: the pair's worse direction. A node's latency: the lower median of its "
	       "pairs' means (a lossy pair left out)\n");
	printf(" thresholds: slow when a node's latency has a modified z-score > %.1f and it is "
	       ">= %.1fx the fleet's median (%.1f us, MAD %.1f us); lossy when a pair loses >= %.1f "
	       "per mille of its packets, or stands out above %.1f\n",
	       DR_Z, DR_RATIO, dc->lat_med / 1e3, dc->lat_mad / 1e3, DR_LOSS_PERMILLE,
	       DR_LOSS_OUTLIER_MIN);
	printf(" cost: %lld nodes, %lld rounds, %lld pairs in %.1f s (all pairs: %lld rounds, "
	       "%lld pairs)\n", (long long)json_integer_value(json_object_get(c, "nodes")),
	       (long long)json_integer_value(json_object_get(c, "rounds")),
	       (long long)json_integer_value(json_object_get(c, "pairs")), dc->wall,
	       (long long)json_integer_value(json_object_get(c, "all_pairs_rounds")),
	       (long long)json_integer_value(json_object_get(c, "all_pairs")));
	if (!dc->named) {
		printf("doctor: %d nodes, nothing named\n", dc->n);
		return;
	}
	printf("doctor: %d named:\n", dc->named);
	json_array_foreach(json_object_get(o, "named"), i, p)
		printf("  %s\n", json_string_value(p));
}

/* the heat map: a cell a pair, its colour its loss, its text the
 * latency; the pairs not measured left grey */
static int write_html(const struct doc *dc, const json_t *o, FILE *f)
{
	json_t *p;
	size_t i;

	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>rdmactl doctor</title>\n"
		   "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
		   "td,th{border:1px solid #ccc;padding:4px 6px;text-align:right;font-size:13px}"
		   "td.na{background:#eee}th{background:#f6f6f6}.bad{color:#b00;font-weight:bold}"
		   "td.l{text-align:left}"
		   "</style></head><body>\n<h1>rdmactl doctor</h1>\n");
	fprintf(f, "<p>%d nodes; %s.</p>\n", dc->n, dc->named ? "named below" : "nothing named");
	if (dc->named) {
		fprintf(f, "<ul>\n");
		json_array_foreach(json_object_get(o, "named"), i, p) {
			fprintf(f, "<li class=\"bad\">");
			html_escape(f, json_string_value(p));
			fprintf(f, "</li>\n");
		}
		fprintf(f, "</ul>\n");
	}
	fprintf(f, "<h2>Pairs</h2>\n<p>Each cell: the pair's lost packets per mille, its worse "
		   "direction (colour: white 0, red %.0f or more), and its mean WRITE latency (half a "
		   "round trip) in microseconds. Grey: not measured (the sweep measures %d "
		   "partner%s a node, not all pairs).</p>\n<table><tr><th></th>",
		4 * DR_LOSS_PERMILLE, dc->k ? dc->k : dc->ni - 1, dc->k == 1 ? "" : "s");
	for (int b = 0; b < dc->ni; b++) {
		fprintf(f, "<th>");
		html_escape(f, doc_name(dc, b));
		fprintf(f, "</th>");
	}
	fprintf(f, "</tr>\n");
	for (int a = 0; a < dc->ni; a++) {
		fprintf(f, "<tr><th>");
		html_escape(f, doc_name(dc, a));
		fprintf(f, "</th>");
		for (int b = 0; b < dc->ni; b++) {
			int k = -1;

			for (int x = 0; x < dc->np; x++)
				if ((dc->m[x].a == a && dc->m[x].b == b) ||
				    (dc->m[x].a == b && dc->m[x].b == a))
					k = x;
			if (k < 0 || a == b) {
				fprintf(f, "<td class=\"na\"></td>");
			} else if (dc->m[k].failed) {
				fprintf(f, "<td style=\"background:#600;color:#fff\">failed</td>");
			} else {
				double l = dr_loss_permille(&dc->m[k]);
				int sh = (int)(255 * (1 - fmin(l / (4 * DR_LOSS_PERMILLE), 1)));

				fprintf(f, "<td style=\"background:rgb(255,%d,%d)\">%.1f&#8240;<br>%.0f us"
					   "</td>", sh, sh, l, dc->m[k].lat_ns / 1e3);
			}
		}
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table>\n<h2>Nodes</h2>\n<table><tr><th>node</th><th>dev</th><th>state</th>"
		   "<th>MTU</th><th>GID</th><th>verdict</th><th>why</th></tr>\n");
	json_array_foreach(json_object_get(o, "nodes"), i, p) {	/* agents' words: escaped */
		const char *cells[] = { json_string_value(json_object_get(p, "name")),
					json_string_value(json_object_get(p, "dev")) ?: "-",
					json_string_value(json_object_get(p, "state")) ?: "-", NULL,
					json_string_value(json_object_get(p, "gid")) ?: "-",
					json_string_value(json_object_get(p, "verdict")),
					json_string_value(json_object_get(p, "why")) ?: "" };

		fprintf(f, "<tr>");
		for (size_t c = 0; c < sizeof(cells) / sizeof(cells[0]); c++) {
			if (!cells[c]) {
				fprintf(f, "<td>%lld</td>",
					(long long)json_integer_value(json_object_get(p, "mtu")));
				continue;
			}
			fprintf(f, "<td class=\"l\">");
			html_escape(f, cells[c]);
			fprintf(f, "</td>");
		}
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</table>\n<p>Thresholds: slow when a node's median latency has a modified "
		   "z-score above %.1f and is at least %.1fx the fleet's median; lossy when a pair "
		   "loses %.1f per mille or more.</p>\n</body></html>\n", DR_Z, DR_RATIO,
		DR_LOSS_PERMILLE);
	return ferror(f) ? -EIO : 0;
}

/* DIR/name written whole or not at all */
static int write_file(const char *dir, const char *name, const struct doc *dc, const json_t *o)
{
	char path[4096], tmp[4200];
	FILE *f;
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "we"))) {
		log_err("%s: %s", tmp, strerror(errno));
		return -errno;
	}
	r = strstr(name, ".json") ? (json_dumpf(o, f, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) ? -EIO : 0)
				  : write_html(dc, o, f);
	if (fclose(f) && !r)
		r = -EIO;
	if (!r && rename(tmp, path))
		r = -errno;
	if (r) {
		log_err("%s: cannot write: %s", path, strerror(-r));
		unlink(tmp);
	}
	return r;
}

int doc_write(const char *dir, const struct doc *dc, const json_t *o)
{
	return write_file(dir, "doctor.json", dc, o) || write_file(dir, "doctor.html", dc, o) ? -EIO : 0;
}
