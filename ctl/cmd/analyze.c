// SPDX-License-Identifier: MIT
/*
 * rdmactl analyze RUN_DIR|CAPTURE... [-j]: what the packets of a traced
 * run (or of any pcapng/pcap of RoCEv2) say: per capture point and QP the
 * packets and the resent ones, every loss with its trigger and Lumina's
 * latencies, the go-back-N and READ retransmission checks; for a run, the
 * consistency checks its report holds (trace against the injector's rule
 * counters and rxe's hw counters).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "ctl/cmd/cmds.h"
#include "ctl/trace/trace.h"
#include "lib/log.h"

static void usage_analyze(FILE *f)
{
	fprintf(f, "usage: rdmactl analyze RUN_DIR|CAPTURE.pcapng... [-j]\n"
		   "  RUN_DIR   a run made with --trace (or a profile's trace:): its trace/ files\n"
		   "  CAPTURE   any pcapng or pcap of RoCEv2 (rdma-inject trace, tcpdump, tshark)\n");
}

/* the device -> node names a run's report gives its captures, and which
 * are switch ports ({"DEV": true}; NULL from a report that does not say) */
static json_t *run_nodes(const json_t *rep, json_t **switches)
{
	json_t *nodes = json_object(), *f, *c;
	size_t i, j;

	*switches = NULL;
	json_array_foreach(json_object_get(json_object_get(rep, "trace"), "files"), i, f)
		json_array_foreach(json_object_get(f, "captures"), j, c) {
			const char *dev = json_string_value(json_object_get(c, "dev"));

			if (!dev)
				continue;
			if (json_is_string(json_object_get(c, "node")))
				json_object_set(nodes, dev, json_object_get(c, "node"));
			if (json_is_boolean(json_object_get(c, "switch"))) {
				if (!*switches)
					*switches = json_object();
				json_object_set(*switches, dev, json_object_get(c, "switch"));
			}
		}
	return nodes;
}

static int add_file(json_t *out, const char *path, const char *rel, const json_t *nodes,
		    const json_t *switches)
{
	char err[512];
	json_t *an = trace_analyze(path, nodes, switches, err, sizeof(err)), *c;
	size_t i;

	if (!an) {
		log_err("%s", err);
		return -EINVAL;
	}
	if (rel) {
		json_object_set_new(an, "file", json_string(rel));
		json_array_foreach(json_object_get(an, "captures"), i, c)
			json_object_set_new(c, "file", json_string(rel));
	}
	json_array_extend(json_object_get(out, "captures"), json_object_get(an, "captures"));
	json_array_append_new(json_object_get(out, "files"), an);
	return 0;
}

int cmd_analyze(struct ctl *ctl, int argc, char **argv)
{
	json_t *out = json_pack("{s:[],s:[]}", "captures", "files"), *an;
	int i, n = 0, rc = CTL_OK, json = ctl->json;
	size_t k;

	for (i = 0; i < argc && rc == CTL_OK; i++) {
		struct stat st;

		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage_analyze(stdout);
			json_decref(out);
			return CTL_OK;
		}
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			json = 1;
			continue;
		}
		if (argv[i][0] == '-') {
			log_err("analyze: unknown option '%s'", argv[i]);
			usage_analyze(stderr);
			json_decref(out);
			return CTL_USAGE;
		}
		n++;
		if (stat(argv[i], &st)) {
			log_err("analyze: %s: %s", argv[i], strerror(errno));
			rc = CTL_FAIL;
		} else if (S_ISDIR(st.st_mode)) {
			char path[4096];
			json_error_t je;
			json_t *rep, *files, *f, *nodes, *sws;

			snprintf(path, sizeof(path), "%s/report.json", argv[i]);
			rep = json_load_file(path, 0, &je);
			if (!rep) {
				log_err("analyze: %s: %s", path, je.text);
				rc = CTL_FAIL;
				continue;
			}
			files = json_object_get(json_object_get(rep, "trace"), "files");
			if (!json_array_size(files)) {
				log_err("analyze: %s was not traced (rdmactl run --trace, or a profile's "
					"trace: key)", argv[i]);
				rc = CTL_FAIL;
			}
			nodes = run_nodes(rep, &sws);
			json_array_foreach(files, k, f) {
				const char *rel = json_string_value(json_object_get(f, "file"));

				if (!rel || strstr(rel, "..") || rel[0] == '/') {
					log_err("analyze: %s: a trace file outside the run", path);
					rc = CTL_FAIL;
					break;
				}
				snprintf(path, sizeof(path), "%s/%s", argv[i], rel);
				if (add_file(out, path, rel, nodes, sws)) {
					rc = CTL_FAIL;
					break;
				}
				an = json_array_get(json_object_get(out, "files"),
						    json_array_size(json_object_get(out, "files")) - 1);
				json_object_set(an, "arm", json_object_get(f, "arm"));
				json_object_set(an, "round", json_object_get(f, "round"));
			}
			json_object_set(out, "checks",
					json_object_get(json_object_get(rep, "trace"), "checks"));
			json_decref(nodes);
			json_decref(sws);
			json_decref(rep);
		} else if (add_file(out, argv[i], NULL, NULL, NULL)) {
			rc = CTL_FAIL;
		}
	}
	if (!n) {
		usage_analyze(stderr);
		json_decref(out);
		return CTL_USAGE;
	}
	if (rc == CTL_OK) {
		if (json) {
			json_dumpf(out, stdout, JSON_INDENT(2));
			putchar('\n');
		} else {
			json_t *c;

			json_array_foreach(json_object_get(out, "files"), k, an)
				trace_print(stdout, an);
			json_array_foreach(json_object_get(out, "checks"), k, c)
				printf("check %-4s %s: trace %lld, counter %lld%s%s\n",
				       json_is_true(json_object_get(c, "ok")) ? "ok" : "FAIL",
				       json_string_value(json_object_get(c, "check")),
				       (long long)json_integer_value(json_object_get(c, "trace")),
				       (long long)json_integer_value(json_object_get(c, "counter")),
				       json_object_get(c, "note") ? " -- " : "",
				       json_string_value(json_object_get(c, "note")) ?: "");
		}
	}
	json_decref(out);
	return rc;
}
