// SPDX-License-Identifier: MIT
/*
 * rdmactl serve: a fleet's agents join this rdmactl (rdma-agent --join),
 * which holds one connection to each and asks every one for its hello at
 * once, round after round: who is there, on which device, in which state,
 * how long a round over all of them takes, and what holding them costs
 * rdmactl in memory. It waits for the agents it expects (a count or
 * names), says how many have joined as they come, and names the missing
 * ones at its deadline.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "ctl/agent/agent.h"
#include "ctl/cmd/cmds.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/num.h"

#define SERVE_MAX 4096

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmactl serve --listen ADDR:PORT --token-file FILE\n"
		"                     (--expect N | --nodes NAME,NAME...) [--wait T] [--rounds N] [-j]\n"
		"  listens for agents that join (rdma-agent --join ADDR:PORT --name NAME), waits\n"
		"  for the ones expected, then asks all of them for their hello at once, --rounds\n"
		"  times (0: every 5 s until Ctrl-C), and prints each round's time and rdmactl's\n"
		"  memory for the fleet\n"
		"  --expect N        this many agents, whatever their names\n"
		"  --nodes A,B,...   these agents (their --name)\n"
		"  --wait T          for them, at most (default 60s); the missing are named\n"
		"  --rounds N        status rounds (default 3)\n"
		"  exit 0: every agent joined and answered; 1: some did not; 2: bad usage\n");
}

static void on_sigint(int sig)
{
	(void)sig;
	ctl_interrupted = 1;
}

/* rdmactl's resident memory, KiB (/proc/self/status VmRSS; 0: unknown) */
static long rss_kib(void)
{
	char line[128];
	long kb = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

struct serve {
	int n;
	char (*name)[32];
	struct agentc *c, **cs;
	json_t **res;
};

/* one round: hello to every agent at once; how many answered, its seconds */
static int round_of(struct serve *v, double *took)
{
	json_t **args = calloc((size_t)v->n, sizeof(*args));
	char err[256];
	double t = rtb_now_s();
	int ok = 0;

	if (!args)
		return 0;
	for (int i = 0; i < v->n; i++) {
		json_decref(v->res[i]);
		v->res[i] = NULL;
		args[i] = json_object();	/* NULL would skip that agent */
	}
	agentc_call_all(v->cs, v->n, "hello", args, v->res, 10000, err, sizeof(err));
	*took = rtb_now_s() - t;
	for (int i = 0; i < v->n; i++)
		ok += v->res[i] != NULL;
	free(args);
	return ok;
}

static int serve_fleet(struct ctl *ctl, struct serve *v, uint64_t rounds, long rss0)
{
	json_t *rj = json_array(), *out;
	double took = 0, best = 1e9;
	long rss1;
	int k, ok = 0, all = 1;

	for (int i = 0; i < v->n; i++) {
		v->cs[i] = &v->c[i];
		if (join_take(&v->c[i], v->name[i], 10000)) {
			log_err("serve: %s: no connection to take", v->name[i]);
			return CTL_FAIL;
		}
	}
	rss1 = rss_kib();
	for (k = 0; !ctl_interrupted && (!rounds || (uint64_t)k < rounds); k++) {
		if (k && !rounds)
			sleep(5);
		ok = round_of(v, &took);
		best = took < best ? took : best;
		all &= ok == v->n;
		json_array_append_new(rj, json_pack("{s:i,s:i,s:f}", "round", k + 1, "answered", ok,
						    "seconds", took));
		if (!ctl->json)
			printf("round %d: %d of %d agents answered in %.3f s\n", k + 1, ok, v->n, took);
		fflush(stdout);
	}
	out = json_pack("{s:s,s:i,s:i,s:o,s:f,s:I,s:I,s:f,s:[]}", "kind", "rdma-testbed-serve",
			"schema_version", CMD_SCHEMA_VERSION, "agents_n", v->n, "rounds", rj,
			"best_round_s", best, "rss_kib", (json_int_t)rss1, "rss_before_kib",
			(json_int_t)rss0, "rss_per_agent_kib",
			v->n ? (double)(rss1 - rss0) / v->n : 0.0, "agents");
	for (int i = 0; i < v->n; i++) {
		json_t *r = v->res[i];
		char peer[64] = "?", dev[32] = "?";

		join_info(v->name[i], peer, sizeof(peer), dev, sizeof(dev));
		json_array_append_new(json_object_get(out, "agents"),
				      json_pack("{s:s,s:s,s:s,s:s*,s:s*,s:b}", "name", v->name[i],
						"from", peer, "dev", dev, "state",
						json_string_value(json_object_get(r, "state")),
						"kernel",
						json_string_value(json_object_get(r, "kernel")),
						"answered", r != NULL));
	}
	if (ctl->json) {
		json_dumpf(out, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		if (v->n <= 64 || ctl->verbose)
			for (int i = 0; i < v->n; i++) {
				json_t *a = json_array_get(json_object_get(out, "agents"), (size_t)i);

				printf("  %-16s from %-15s %-8s %s\n", v->name[i],
				       json_string_value(json_object_get(a, "from")),
				       json_string_value(json_object_get(a, "dev")),
				       json_string_value(json_object_get(a, "state")) ?: "(no answer)");
			}
		printf("serve: %d agents joined; the fastest round %.3f s; rdmactl %ld KiB resident "
		       "(%.1f KiB an agent over the %ld before)\n", v->n, best, rss1,
		       v->n ? (double)(rss1 - rss0) / v->n : 0.0, rss0);
	}
	json_decref(out);
	return all && !ctl_interrupted ? CTL_OK : ctl_interrupted ? CTL_INTERRUPTED : CTL_FAIL;
}

int cmd_serve(struct ctl *ctl, int argc, char **argv)
{
	const char *listen_at = NULL, *token_file = NULL, *nodes = NULL, *why;
	uint64_t expect = 0, rounds = 3, wait_ns = 60000000000ULL;
	struct sigaction sa = { .sa_handler = on_sigint }, old, oldt;
	static struct serve v;
	struct rlimit rl;
	char token[160], err[512];
	long rss0;
	int i, r;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return CTL_OK;
		} else if (!strcmp(a, "--listen") && val) {
			listen_at = argv[++i];
		} else if (!strcmp(a, "--token-file") && val) {
			token_file = argv[++i];
		} else if (!strcmp(a, "--nodes") && val) {
			nodes = argv[++i];
		} else if (!strcmp(a, "--expect") && val) {
			if (num_parse(val, NUM_PLAIN, 1, SERVE_MAX, &expect, &why)) {
				log_err("--expect '%s': %s (1..%d)", val, why, SERVE_MAX);
				return CTL_USAGE;
			}
			i++;
		} else if (!strcmp(a, "--wait") && val) {
			if (num_parse(val, NUM_TIME, 1000000000ULL, 86400000000000ULL, &wait_ns, &why)) {
				log_err("--wait '%s': %s (1s..24h)", val, why);
				return CTL_USAGE;
			}
			i++;
		} else if (!strcmp(a, "--rounds") && val) {
			if (num_parse(val, NUM_PLAIN, 0, 1000000, &rounds, &why)) {
				log_err("--rounds '%s': %s (0..1000000)", val, why);
				return CTL_USAGE;
			}
			i++;
		} else {
			log_err("unexpected '%s'", a);
			usage(stderr);
			return CTL_USAGE;
		}
	}
	if (!listen_at || !token_file || !nodes == !expect) {
		usage(stderr);
		return CTL_USAGE;
	}
	if (agentc_token_load(token_file, token, sizeof(token)))
		return CTL_USAGE;
	/* two connections an agent (one taken, one parked): room for them */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	v.name = calloc(SERVE_MAX, sizeof(*v.name));
	v.c = calloc(SERVE_MAX, sizeof(*v.c));
	v.cs = calloc(SERVE_MAX, sizeof(*v.cs));
	v.res = calloc(SERVE_MAX, sizeof(*v.res));
	if (!v.name || !v.c || !v.cs || !v.res) {
		log_err("serve: %s", strerror(ENOMEM));
		return CTL_FAIL;
	}
	rss0 = rss_kib();
	if (join_listen(listen_at, token, err, sizeof(err))) {
		log_err("%s", err);
		return CTL_FAIL;
	}
	sigaction(SIGINT, &sa, &old);
	sigaction(SIGTERM, &sa, &oldt);
	if (!ctl->json)
		log_info("serve: listening on %s for %s", listen_at, nodes ? nodes : "agents");
	r = join_fleet(nodes, expect, (double)wait_ns / 1e9, ctl->json, v.name, SERVE_MAX);
	if (r >= 0)
		v.n = r;
	r = r == -EINTR ? CTL_INTERRUPTED : r < 0 ? CTL_FAIL : serve_fleet(ctl, &v, rounds, rss0);
	for (i = 0; i < v.n; i++) {
		agentc_close(&v.c[i]);
		json_decref(v.res[i]);
	}
	join_stop();
	sigaction(SIGINT, &old, NULL);
	sigaction(SIGTERM, &oldt, NULL);
	return r;
}
