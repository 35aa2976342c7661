/* SPDX-License-Identifier: MIT */
/* The benchmarks' rules: a rule's text added as rdma-inject add would. */
#ifndef RTB_INJ_BENCH_H
#define RTB_INJ_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include "../injector/inj.h"

/* "RULE" on the ingress of ifindex ifx; on a bad one, says so and exits */
static inline void bench_rule_add(struct inj_ctx *c, uint32_t ifx, const char *text)
{
	char err[256] = "";

	if (!inj_rule_add_text(c, ifx, INJ_DIR_INGRESS, text, err, sizeof(err))) {
		fprintf(stderr, "add '%s': %s\n", text, err);
		exit(1);
	}
}

#endif
