/* SPDX-License-Identifier: MIT */
/*
 * Running an exec workload's round (exec.c): every role's command on its
 * nodes through rdma-run (runner/main.c), in order, each started once the
 * one before is ready; output kept in the run directory, every command
 * ended at its timeout and cleaned up after, whatever it did.
 */
#ifndef RTB_CTL_EXP_EXEC_H
#define RTB_CTL_EXP_EXEC_H

#include <stdint.h>
#include <stddef.h>
#include <jansson.h>

struct exp;

/* arm a's round: 0 and the per-member results (a command that failed is
 * a result, not an error); -errno with the reason in err when the run
 * itself could not go on (no way to reach the nodes, interrupted) */
int exec_round(struct exp *e, int a, uint64_t round, json_t **results, char *err, size_t errlen);

#endif
