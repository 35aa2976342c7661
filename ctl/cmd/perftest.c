// SPDX-License-Identifier: MIT
/*
 * rdmactl perftest: run a real perftest pair (server on one node, client on
 * another) through the agents, for side-by-side comparisons in one run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ctl/cmd/cmds.h"
#include "ctl/session/session.h"
#include "ctl/session/session.h"
#include "lib/log.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmactl [-j] perftest [--client NODE] [--server NODE] [--timeout S]\n"
		   "                         PROG [ARGS...]\n"
		   "  PROG is a perftest tool (ib_write_lat, ib_write_bw, ib_read_lat, ...); the\n"
		   "  agents add -d DEV -x GID_INDEX -p PORT and the server address.\n");
}

int cmd_perftest(struct ctl *ctl, int argc, char **argv)
{
	const char *client = "node0", *server = "node1", *peer;
	json_t *args, *res = NULL, *sout = NULL, *cout = NULL, *hello = NULL;
	json_int_t sjob = -1, cjob = -1;
	int i, r, rc = 1, port, timeout_s = 300;
	char err[512];
	struct pair p;

	for (i = 0; i < argc && !strncmp(argv[i], "-", 1); i += 2) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (i + 1 >= argc) {
			usage(stderr);
			return 2;
		}
		if (!strcmp(argv[i], "--client")) {
			client = argv[i + 1];
		} else if (!strcmp(argv[i], "--server")) {
			server = argv[i + 1];
		} else if (!strcmp(argv[i], "--timeout")) {
			timeout_s = atoi(argv[i + 1]);
			if (timeout_s < 1 || timeout_s > 86400) {
				log_err("--timeout '%s': expected 1..86400 seconds", argv[i + 1]);
				return 2;
			}
		} else {
			log_err("perftest: unknown option '%s'", argv[i]);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	args = json_array();
	for (int k = i + 1; k < argc; k++)
		json_array_append_new(args, json_string(argv[k]));
	if (pair_open(&p, client, server)) {
		json_decref(args);
		return 1;
	}
	r = agentc_call(&p.s, "hello", NULL, &hello, 5000, err, sizeof(err));
	if (r)
		goto fail;
	peer = json_string_value(json_object_get(hello, "ip"));
	srand((unsigned int)time(NULL) ^ (unsigned int)getpid());
	port = 20000 + rand() % 20000;
	r = agentc_call(&p.s, "perftest_start",
			json_pack("{s:s,s:i,s:O}", "prog", argv[i], "port", port, "args", args), &res,
			20000, err, sizeof(err));
	if (r)
		goto fail;
	sjob = json_integer_value(json_object_get(res, "job"));
	json_decref(res);
	r = agentc_call(&p.c, "perftest_start",
			json_pack("{s:s,s:i,s:O,s:s}", "prog", argv[i], "port", port, "args", args,
				  "peer", peer ? peer : ""),
			&res, 20000, err, sizeof(err));
	if (r)
		goto fail;
	cjob = json_integer_value(json_object_get(res, "job"));
	json_decref(res);
	r = agentc_call(&p.c, "perftest_wait",
			json_pack("{s:I,s:i}", "job", cjob, "timeout_ms", timeout_s * 1000), &cout,
			timeout_s * 1000 + 30000, err, sizeof(err));
	cjob = -1;
	if (r)
		goto fail;
	/* the server ends with the client; a few seconds of grace, then it is killed */
	r = agentc_call(&p.s, "perftest_wait", json_pack("{s:I,s:i}", "job", sjob, "timeout_ms", 15000),
			&sout, 60000, err, sizeof(err));
	sjob = -1;
	if (r)
		goto fail;
	if (ctl->json) {
		json_t *o = json_pack("{s:i,s:s,s:s,s:s,s:O,s:O}", "schema_version", 1, "prog", argv[i],
				      "client", p.tb.node[p.ci].name, "server", p.tb.node[p.si].name,
				      "client_result", cout, "server_result", sout);

		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	} else {
		printf("=== %s client on %s ===\n%s", argv[i], p.tb.node[p.ci].name,
		       json_string_value(json_object_get(cout, "output")));
		printf("=== %s server on %s ===\n%s", argv[i], p.tb.node[p.si].name,
		       json_string_value(json_object_get(sout, "output")));
	}
	rc = json_integer_value(json_object_get(cout, "rc")) ||
	     json_integer_value(json_object_get(sout, "rc"));
	if (rc)
		log_err("%s exited with client rc %lld, server rc %lld", argv[i],
			json_integer_value(json_object_get(cout, "rc")),
			json_integer_value(json_object_get(sout, "rc")));
	goto out;
fail:
	log_err("%s", err);
	/* reap what was started: perftest_wait with no time kills a running job */
	if (cjob >= 0 && !agentc_call(&p.c, "perftest_wait", json_pack("{s:I}", "job", cjob), &res,
				      10000, err, sizeof(err)))
		json_decref(res);
	if (sjob >= 0 && !agentc_call(&p.s, "perftest_wait", json_pack("{s:I}", "job", sjob), &res,
				      10000, err, sizeof(err)))
		json_decref(res);
out:
	json_decref(cout);
	json_decref(sout);
	json_decref(hello);
	json_decref(args);
	pair_close(&p);
	return rc ? 1 : 0;
}
