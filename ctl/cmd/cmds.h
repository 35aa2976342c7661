/* SPDX-License-Identifier: MIT */
/*
 * The command room: rdmactl's objects (main.c's table), each a thin
 * translation of argv into the rooms below -- an experiment (ctl/exp/),
 * a session of arms (ctl/session/), the testbed (ctl/testbed/) -- and its
 * output. Commands return exit codes (ctl/base/ctl.h).
 */
#ifndef RTB_CTL_CMDS_H
#define RTB_CTL_CMDS_H

#include <stdio.h>
#include <jansson.h>
#include "ctl/base/ctl.h"

/* the workload commands' -j output (p2p, collective, kv, storage, train):
 * one object with "kind": "rdma-testbed-<command>" and this version,
 * described by schemas/commands.schema.json */
#define CMD_SCHEMA_VERSION 1

int cmd_p2p(struct ctl *ctl, int argc, char **argv);
int cmd_perftest(struct ctl *ctl, int argc, char **argv);
int cmd_inject(struct ctl *ctl, int argc, char **argv);
int cmd_counters(struct ctl *ctl, int argc, char **argv);
int cmd_collective(struct ctl *ctl, int argc, char **argv);
int cmd_train(struct ctl *ctl, int argc, char **argv);
int cmd_storage(struct ctl *ctl, int argc, char **argv);
int cmd_kv(struct ctl *ctl, int argc, char **argv);
int cmd_validate(struct ctl *ctl, int argc, char **argv);
int cmd_run(struct ctl *ctl, int argc, char **argv);
int cmd_search(struct ctl *ctl, int argc, char **argv);
int cmd_serve(struct ctl *ctl, int argc, char **argv);
int cmd_doctor(struct ctl *ctl, int argc, char **argv);
int cmd_report(struct ctl *ctl, int argc, char **argv);
int cmd_analyze(struct ctl *ctl, int argc, char **argv);

/* the controller's own --flags of a command, the rest go to the workload */
struct ctl_arg {
	const char *flag;	/* without the dashes */
	const char **dst;
};

/* --flag value pairs from argv[from]: own flags (NULL-terminated table) set
 * their dst, any other --key value lands in opts (the agent checks it
 * against the workload's option table). 0, CTL_HELP after -h/--help (usage
 * printed), CTL_USAGE (message printed) */
int ctl_args(const char *cmd, int argc, char **argv, int from, const struct ctl_arg *own,
	     json_t *opts, void (*usage)(FILE *));

/* a count option of the workload taken out of opts (the experiment sets
 * it from run.iters): its value, or the workload's default; 0, -EINVAL
 * (message printed) */
int ctl_take_opt(json_t *opts, const char *workload, const char *key, uint64_t *v);

/* "workload options of W:" and every option of its table (lib/opt.h):
 * the usage text generated, never written by hand */
void ctl_usage_wl(FILE *f, const char *workload);

#endif
