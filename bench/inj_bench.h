/* SPDX-License-Identifier: MIT */
/* The benchmarks' rules: a rule's text added as rdma-inject add would. */
#ifndef RTB_INJ_BENCH_H
#define RTB_INJ_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <bpf/libbpf.h>
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

/* a trace's ring drained by a thread, as rdma-inject trace does: records
 * counted in bench_drained; bench_drain_stop set ends it */
static volatile int bench_drain_stop;
static uint64_t bench_drained;

static inline int bench_count_rec(void *c, void *d, size_t n)
{
	(void)c;
	(void)d;
	(void)n;
	bench_drained++;
	return 0;
}

static inline void *bench_drain(void *rb)
{
	while (!bench_drain_stop)
		inj_ring_poll(rb, INJ_TRACE_DRAIN_MS);
	inj_ring_consume(rb);
	return NULL;
}

#endif
