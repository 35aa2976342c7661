// SPDX-License-Identifier: MIT
/*
 * rdmactl: the controller. parse -> dispatch (object -> verb tables, exact
 * keywords) -> exit code: 0 ok, 1 failure, 2 bad usage.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "ctl/cmd/cmds.h"
#include "ctl/testbed/testbed.h"
#include "ctl/tui/tui.h"
#include "lib/cli.h"
#include "lib/cmd.h"
#include "lib/log.h"

#ifndef RTB_VERSION
#define RTB_VERSION "0.0.0"
#endif

/* the commands take rdmactl's flags as their context */
#define OBJ(fn)                                                                                    \
	static int obj_##fn(void *ctl, int argc, char **argv)                                      \
	{                                                                                          \
		return fn(ctl, argc, argv);                                                        \
	}
OBJ(cmd_testbed)
OBJ(cmd_p2p)
OBJ(cmd_perftest)
OBJ(cmd_inject)
OBJ(cmd_counters)
OBJ(cmd_collective)
OBJ(cmd_train)
OBJ(cmd_kv)
OBJ(cmd_storage)
OBJ(cmd_validate)
OBJ(cmd_run)
OBJ(cmd_search)
OBJ(cmd_serve)
OBJ(cmd_doctor)
OBJ(cmd_report)
OBJ(cmd_analyze)
OBJ(cmd_tui)

static int obj_version(void *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	(void)argv;
	printf("rdmactl %s\n", RTB_VERSION);
	return CTL_OK;
}

static int obj_help(void *ctl, int argc, char **argv);

static const struct cmd_entry objs[] = {
	{ "testbed", obj_cmd_testbed, "up [--nodes N] [--backend auto|vm|host] | status | down" },
	{ "validate", obj_cmd_validate, "PROFILE... [--set k.path=v]: check profiles (file:line:col)" },
	{ "run", obj_cmd_run, "PROFILE [-o DIR] [--set k.path=v]: report.json, summary.csv, *.hlog, "
				"report.html in DIR" },
	{ "search", obj_cmd_search, "PROFILE [-o DIR] [--strategy guided|random]: the smallest fault "
				      "schedule that breaks the expectations, and repro.yaml" },
	{ "serve", obj_cmd_serve, "--listen ADDR:PORT --token-file F --expect N|--nodes A,B: agents "
				    "that join (rdma-agent --join), status rounds over all" },
	{ "doctor", obj_cmd_doctor, "[--nodes A,B] [--rounds K] [-o DIR]: a health sweep: facts, pairs "
				      "in O(n) rounds, the slow node and the lossy link named" },
	{ "report", obj_cmd_report, "DIR [--format text|json|csv|html|junit|nccl-tests|perfetto] | "
				      "DIR_A DIR_B (compare)" },
	{ "analyze", obj_cmd_analyze, "RUN_DIR|CAPTURE... [-j]: a packet trace's losses, their triggers "
				      "and latencies, go-back-N and READ checks" },
	{ "tui", obj_cmd_tui, "PROFILE [-o DIR] | --attach: the run live, faults steered by keys" },
	{ "collective", obj_cmd_collective, "OP [--modes rc,lossy,hadamard,ec] [--size S]: "
					    "nccl-tests-style, modes side by side" },
	{ "train", obj_cmd_train, "[--modes rc,hadamard] [--steps N]: data-parallel SGD, time to "
				  "accuracy per mode" },
	{ "kv", obj_cmd_kv, "[--workload a|b|c] [--ops N]: key-value store on one-sided READ/CAS" },
	{ "storage", obj_cmd_storage, "[--rw P] [--bs B] [--iodepth N]: fio-like verified block I/O" },
	{ "p2p", obj_cmd_p2p, "lat|bw [--op write|read|send|cas|faa]: perftest-like, two nodes" },
	{ "perftest", obj_cmd_perftest, "[--client N] [--server N] PROG [ARGS]: a real perftest pair" },
	{ "inject", obj_cmd_inject, "[--node N] ARGS: the node's rdma-inject (add/del/set/list/...)" },
	{ "counters", obj_cmd_counters, "[--node N]: the node's RDMA device hw counters" },
	{ "version", obj_version, NULL },
	{ "help", obj_help, NULL },
	{ NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmactl [-j] [-v|-q] OBJECT [ARGS]   (OBJECT -h: its options)\n");
	cmd_help(objs, f);
	fprintf(f, "  -j, --json   JSON output    -v  verbose    -q  quiet\n");
}

static int obj_help(void *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	(void)argv;
	usage(stdout);
	return CTL_OK;
}

int main(int argc, char **argv)
{
	struct ctl ctl = { 0 };
	char err[512];
	int i, rc;

	log_set_prog("rdmactl");
	/* a peer gone (an ssh that exited, a closed pipe) is an EPIPE to
	 * report, never a silent exit 141 */
	signal(SIGPIPE, SIG_IGN);
	i = cli_globals(&argc, argv, &ctl.json, usage);
	if (i < 0)
		return i == CLI_EXIT_OK ? CTL_OK : CTL_USAGE;
	if (cmd_exec(objs, "object", &ctl, argc - i, argv + i, &rc, err, sizeof(err))) {
		log_err("%s", err);
		usage(stderr);
		return CTL_USAGE;
	}
	return rc;
}
