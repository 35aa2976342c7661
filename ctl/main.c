// SPDX-License-Identifier: MIT
/*
 * rdmactl: the controller. parse -> dispatch (object -> verb tables, exact
 * keywords) -> exit code: 0 ok, 1 failure, 2 bad usage.
 */
#include <stdio.h>
#include <string.h>
#include "ctl/cmd/cmds.h"
#include "ctl/testbed/testbed.h"
#include "ctl/tui/tui.h"
#include "lib/cli.h"
#include "lib/log.h"

#ifndef RTB_VERSION
#define RTB_VERSION "0.0.0"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmactl [-j] [-v|-q] OBJECT VERB [ARGS]\n"
		"  testbed up [--nodes N] [--backend auto|vm|host] [--mtu M]\n"
		"                          bring up N SoftRoCE nodes, one rdma-agent each\n"
		"  testbed status          nodes, devices, port state, MTU, GID, agents\n"
		"  testbed down            stop everything the testbed started\n"
		"  p2p lat [OPTIONS]       RC RDMA WRITE latency between two nodes (p2p lat -h)\n"
		"  perftest [--client N] [--server N] PROG [ARGS]\n"
		"                          run a real perftest pair on the testbed\n"
		"  collective OP [--nodes A,B,..] [--size S|--sizes MIN:MAX] [--iters N]\n"
		"                          nccl-tests-style allreduce/reduce_scatter/allgather\n"
		"      [--mode M | --modes rc,lossy,hadamard,ec]  recovery modes, side by side\n"
		"  train [--modes rc,hadamard] [--steps N]\n"
		"                          data-parallel SGD; time to accuracy per recovery mode\n"
		"  validate PROFILE... [--set k.path=v]   check experiment profiles (file:line:col)\n"
		"  run PROFILE [-o DIR] [--set k.path=v]  run one; report.json, summary.csv, *.hlog,\n"
		"                          report.html in DIR\n"
		"  report DIR [--format text|json|csv|html] | report DIR_A DIR_B   re-render, compare\n"
		"  tui PROFILE [-o DIR] [--set k.path=v]  the run, live: arms side by side, faults\n"
		"                          steered by keys (? inside for help)\n"
		"  storage [--rw P] [--bs B] [--iodepth N] [--iters N]\n"
		"                          fio-like verified block I/O by RDMA READ/WRITE\n"
		"  kv [--server N] [--clients A,B] [--workload a|b|c] [--ops N] [--rate R]\n"
		"                          key-value store on one-sided READ/CAS, verified\n"
		"  inject [--node N] ARGS  the node's rdma-inject (add/del/set/list/stats/flush/probe)\n"
		"  counters [--node N]     the node's RDMA device hw counters\n"
		"  version\n"
		"  -j, --json   JSON output    -v  verbose    -q  quiet\n");
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(struct ctl *, int, char **);
	} objs[] = {
		{ "testbed", cmd_testbed },
		{ "p2p", cmd_p2p },
		{ "perftest", cmd_perftest },
		{ "inject", cmd_inject },
		{ "collective", cmd_collective },
		{ "train", cmd_train },
		{ "validate", cmd_validate },
		{ "run", cmd_run },
		{ "report", cmd_report },
		{ "tui", cmd_tui },
		{ "storage", cmd_storage },
		{ "kv", cmd_kv },
		{ "counters", cmd_counters },
		{ NULL, NULL },
	};
	struct ctl ctl = { 0 };
	int i, k;

	log_set_prog("rdmactl");
	i = cli_globals(&argc, argv, &ctl.json, usage);
	if (i < 0)
		return i == CLI_EXIT_OK ? CTL_OK : CTL_USAGE;
	if (!strcmp(argv[i], "version")) {
		printf("rdmactl %s\n", RTB_VERSION);
		return 0;
	}
	if (!strcmp(argv[i], "help")) {
		usage(stdout);
		return 0;
	}
	for (k = 0; objs[k].name; k++)
		if (!strcmp(objs[k].name, argv[i]))
			return objs[k].fn(&ctl, argc - i - 1, argv + i + 1);
	log_err("unknown object '%s'", argv[i]);
	usage(stderr);
	return CTL_USAGE;
}
