// SPDX-License-Identifier: MIT
/*
 * rdma-inject: RoCE-aware fault injection with eBPF tc programs.
 * This version: `probe` (what the running kernel supports) on the shared
 * RoCEv2 parser program; rules and attach verbs come next.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "inject.skel.h"
#include "../ebpf/inject_abi.h"
#include "../lib/cli.h"
#include "../lib/log.h"

static int quiet_libbpf(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBBPF_DEBUG && log_verbose < 1)
		return 0;
	if (log_verbose < 0)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* "builtin" | "loaded" | "module" | "missing" for a kernel module name */
static const char *module_state(const char *name)
{
	char path[512], line[512];
	struct utsname u;
	FILE *f;
	const char *st = "missing";

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	if (access(path, F_OK) == 0) {
		snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
		return access(path, F_OK) == 0 ? "loaded" : "builtin";
	}
	if (uname(&u))
		return st;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", u.release);
	f = fopen(path, "re");
	if (!f)
		return st;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *base;
		size_t n = strlen(name);

		if (!colon)
			continue;
		*colon = 0;
		base = strrchr(line, '/');
		base = base ? base + 1 : line;
		if (!strncmp(base, name, n) && !strncmp(base + n, ".ko", 3)) {
			st = "module";
			break;
		}
	}
	fclose(f);
	return st;
}

struct probe_item {
	const char *name;
	const char *what;
	enum bpf_func_id helper;
};

static const struct probe_item helpers[] = {
	{ "random", "probabilistic drop (bpf_get_prandom_u32)", BPF_FUNC_get_prandom_u32 },
	{ "edt_tstamp", "delay via EDT timestamps (bpf_skb_set_tstamp)", BPF_FUNC_skb_set_tstamp },
	{ "clone", "duplicate (bpf_clone_redirect)", BPF_FUNC_clone_redirect },
	{ "store_bytes", "corrupt / ECN mark (bpf_skb_store_bytes)", BPF_FUNC_skb_store_bytes },
	{ NULL, NULL, 0 },
};

static const char *const qdisc_modules[] = { "sch_ingress", "cls_bpf", "sch_fq", "sch_prio",
					     "sch_netem", NULL };

static int cmd_probe(int json)
{
	struct inject_bpf *skel;
	struct utsname u;
	json_t *o, *h, *q;
	int load_err, i;

	uname(&u);
	skel = inject_bpf__open();
	load_err = skel ? inject_bpf__load(skel) : -errno;
	inject_bpf__destroy(skel);
	o = json_object();
	json_object_set_new(o, "schema_version", json_integer(1));
	json_object_set_new(o, "kernel", json_string(u.release));
	json_object_set_new(o, "tc_program_loads", json_boolean(load_err == 0));
	if (load_err)
		json_object_set_new(o, "load_error", json_string(strerror(-load_err)));
	h = json_object();
	for (i = 0; helpers[i].name; i++)
		json_object_set_new(h, helpers[i].name,
				    json_boolean(libbpf_probe_bpf_helper(BPF_PROG_TYPE_SCHED_CLS,
									 helpers[i].helper, NULL) == 1));
	json_object_set_new(o, "helpers", h);
	q = json_object();
	for (i = 0; qdisc_modules[i]; i++)
		json_object_set_new(q, qdisc_modules[i], json_string(module_state(qdisc_modules[i])));
	json_object_set_new(o, "modules", q);

	if (json) {
		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		printf("kernel %s\n", u.release);
		printf("  %-12s %s\n", "tc program", load_err ? "FAILS to load" : "loads (verifier ok)");
		if (load_err)
			printf("  %-12s %s\n", "", strerror(-load_err));
		for (i = 0; helpers[i].name; i++)
			printf("  %-12s %-3s %s\n", helpers[i].name,
			       json_is_true(json_object_get(h, helpers[i].name)) ? "yes" : "no",
			       helpers[i].what);
		for (i = 0; qdisc_modules[i]; i++)
			printf("  %-12s %s\n", qdisc_modules[i],
			       json_string_value(json_object_get(q, qdisc_modules[i])));
	}
	json_decref(o);
	return load_err ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rdma-inject [-j] [-v|-q] probe\n"
		   "  probe   tell which injector features the running kernel supports\n"
		   "  -j      JSON output\n");
}

int main(int argc, char **argv)
{
	int json = 0, i;

	log_set_prog("rdma-inject");
	libbpf_set_print(quiet_libbpf);
	i = cli_globals(argc, argv, &json, usage);
	if (i < 0)
		return i == CLI_EXIT_OK ? 0 : 2;
	if (!strcmp(argv[i], "probe") && i + 1 == argc)
		return cmd_probe(json);
	log_err("unknown command '%s'", argv[i]);
	usage(stderr);
	return 2;
}
