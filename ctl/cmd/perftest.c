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

struct pt_args {
	const char *client, *server, *prog;
	int timeout_s;
	json_t *args;		/* the tool's own arguments */
};

/* [--client N] [--server N] [--timeout S] PROG [ARGS]: 0, CTL_HELP, CTL_USAGE */
static int parse(struct pt_args *a, int argc, char **argv)
{
	int i;

	a->client = "node0";
	a->server = "node1";
	a->timeout_s = 300;
	for (i = 0; i < argc && !strncmp(argv[i], "-", 1); i += 2) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return CTL_HELP;
		}
		if (i + 1 >= argc) {
			usage(stderr);
			return CTL_USAGE;
		}
		if (!strcmp(argv[i], "--client")) {
			a->client = argv[i + 1];
		} else if (!strcmp(argv[i], "--server")) {
			a->server = argv[i + 1];
		} else if (!strcmp(argv[i], "--timeout")) {
			a->timeout_s = atoi(argv[i + 1]);
			if (a->timeout_s < 1 || a->timeout_s > 86400) {
				log_err("--timeout '%s': expected 1..86400 seconds", argv[i + 1]);
				return CTL_USAGE;
			}
		} else {
			log_err("perftest: unknown option '%s'", argv[i]);
			return CTL_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return CTL_USAGE;
	}
	a->prog = argv[i];
	a->args = json_array();
	for (int k = i + 1; k < argc; k++)
		json_array_append_new(a->args, json_string(argv[k]));
	return 0;
}

/* a job on one side: its id in *job */
static int start(struct agentc *c, const struct pt_args *a, int port, const char *peer,
		 json_int_t *job, char *err, size_t errlen)
{
	json_t *res = NULL, *req = json_pack("{s:s,s:i,s:O}", "prog", a->prog, "port", port, "args",
					     a->args);
	int r;

	if (peer)
		json_object_set_new(req, "peer", json_string(peer));
	r = agentc_call(c, "perftest_start", req, &res, 20000, err, errlen);
	if (!r)
		*job = json_integer_value(json_object_get(res, "job"));
	json_decref(res);
	return r;
}

/* the server, then the client, then both to their end: the outputs */
static int run_pair(struct pair *p, const struct pt_args *a, json_t **cout, json_t **sout,
		    char *err, size_t errlen)
{
	json_int_t sjob = -1, cjob = -1;
	json_t *hello = NULL, *res = NULL;
	const char *peer;
	int r, port;

	r = agentc_call(&p->s, "hello", NULL, &hello, 5000, err, errlen);
	if (r)
		return r;
	peer = json_string_value(json_object_get(hello, "ip"));
	srand((unsigned int)time(NULL) ^ (unsigned int)getpid());
	port = 20000 + rand() % 20000;
	r = start(&p->s, a, port, NULL, &sjob, err, errlen);
	if (!r)
		r = start(&p->c, a, port, peer ? peer : "", &cjob, err, errlen);
	if (!r) {
		r = agentc_call(&p->c, "perftest_wait",
				json_pack("{s:I,s:i}", "job", cjob, "timeout_ms", a->timeout_s * 1000),
				cout, a->timeout_s * 1000 + 30000, err, errlen);
		cjob = -1;
	}
	/* the server ends with the client; a few seconds of grace, then it is killed */
	if (!r) {
		r = agentc_call(&p->s, "perftest_wait",
				json_pack("{s:I,s:i}", "job", sjob, "timeout_ms", 15000), sout, 60000,
				err, errlen);
		sjob = -1;
	}
	/* reap what was started: perftest_wait with no time kills a running job */
	if (cjob >= 0 && !agentc_call(&p->c, "perftest_wait", json_pack("{s:I}", "job", cjob), &res,
				      10000, err + strlen(err), 1))
		json_decref(res);
	if (sjob >= 0 && !agentc_call(&p->s, "perftest_wait", json_pack("{s:I}", "job", sjob), &res,
				      10000, err + strlen(err), 1))
		json_decref(res);
	json_decref(hello);
	return r;
}

int cmd_perftest(struct ctl *ctl, int argc, char **argv)
{
	json_t *sout = NULL, *cout = NULL;
	struct pt_args a;
	char err[512] = "";
	struct pair p;
	int r, rc = 1;

	r = parse(&a, argc, argv);
	if (r)
		return ctl_code(r);
	if (pair_open(&p, a.client, a.server)) {
		json_decref(a.args);
		return CTL_FAIL;
	}
	if (run_pair(&p, &a, &cout, &sout, err, sizeof(err))) {
		log_err("%s", err);
	} else if (ctl->json) {
		json_t *o = json_pack("{s:i,s:s,s:s,s:s,s:O,s:O}", "schema_version", 1, "prog", a.prog,
				      "client", p.tb.node[p.ci].name, "server", p.tb.node[p.si].name,
				      "client_result", cout, "server_result", sout);

		json_dumpf(o, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(o);
	} else {
		printf("=== %s client on %s ===\n%s", a.prog, p.tb.node[p.ci].name,
		       json_string_value(json_object_get(cout, "output")));
		printf("=== %s server on %s ===\n%s", a.prog, p.tb.node[p.si].name,
		       json_string_value(json_object_get(sout, "output")));
	}
	if (cout && sout) {
		rc = json_integer_value(json_object_get(cout, "rc")) ||
		     json_integer_value(json_object_get(sout, "rc"));
		if (rc)
			log_err("%s exited with client rc %lld, server rc %lld", a.prog,
				json_integer_value(json_object_get(cout, "rc")),
				json_integer_value(json_object_get(sout, "rc")));
	}
	json_decref(cout);
	json_decref(sout);
	json_decref(a.args);
	pair_close(&p);
	return rc ? CTL_FAIL : CTL_OK;
}
