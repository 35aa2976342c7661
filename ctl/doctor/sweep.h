/* SPDX-License-Identifier: MIT */
/*
 * rdmactl doctor's sweep (sweep.c) and its output (out.c): the nodes'
 * facts, the rounds of pairs on their agents, the fleet's verdict with
 * the bisection, and the table, JSON and HTML of it. The arithmetic is
 * doctor.h's.
 */
#ifndef RTB_CTL_DOCTOR_SWEEP_H
#define RTB_CTL_DOCTOR_SWEEP_H

#include <stdint.h>
#include <jansson.h>
#include "ctl/agent/agent.h"
#include "ctl/base/ctl.h"
#include "ctl/doctor/doctor.h"
#include "ctl/testbed/testbed.h"

#define DOC_MAX TB_MAX_NODES
#define DOC_PAIRS (DOC_MAX * DOC_MAX)
#define DOC_ROUNDS 3	/* partners per node: a node is judged by the median of 3 */
#define DOC_QP_TIMEOUT 12	/* the pairs' RC ACK timeout exponent: 16.8 ms */
#define DOC_SCHEMA_VERSION 1	/* its -j output, as the workload commands' */

/* one node: what its hello said, and the verdict */
struct dnode {
	int tb;			/* index in the testbed */
	struct agentc c;
	int reached;		/* its agent answered its hello */
	char dev[32], state[24], gid[64], ip[32];
	int mtu;
	char fact[160];		/* a fact that is wrong ("" when none) */
	struct dr_node v;
	char why[320], bis[64];	/* the verdict in words; what the bisection found */
	double lost_in, sent_in, lost_out, sent_out;	/* packets toward it, from it */
};

struct doc {
	struct ctl *ctl;
	struct tb_state tb;
	int n;
	struct dnode d[DOC_MAX];
	int k, at_once;		/* rounds; pairs at once (0: a round's all) */
	const char *size;
	uint64_t iters, bw_iters;
	/* the sweep's pairs over the nodes that passed their facts */
	int idx[DOC_MAX], ni;	/* sweep index -> node */
	struct dr_pair plan[DOC_PAIRS];
	struct dr_meas m[DOC_PAIRS];
	int np;
	json_t *pairs, *rounds, *bisect;
	double lat_med, lat_mad, t0, wall;
	int named;
};

/* each node's agent and hello: its facts, and whether it takes part */
void doc_facts(struct doc *dc);
/* the rounds of pairs: 0, -EINTR, or -errno when a round could not run */
int doc_sweep(struct doc *dc);
/* the fleet's verdict, the bisections, each node's in words */
void doc_judge(struct doc *dc);

/* the sweep as one JSON object (new reference) */
json_t *doc_json(const struct doc *dc);
/* the table, the pairs, the bisections, the thresholds and who is named */
void doc_print(const struct doc *dc, const json_t *o);
/* DIR/doctor.json and DIR/doctor.html, each whole or not at all */
int doc_write(const char *dir, const struct doc *dc, const json_t *o);

/* node x's name (an index among the nodes swept); lost per thousand */
const char *doc_name(const struct doc *dc, int x);
double doc_pm(double lost, double sent);

#endif
