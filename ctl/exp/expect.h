/* SPDX-License-Identifier: MIT */
/*
 * Expectations: a profile's pass/fail conditions on its report, for CI.
 * Each is one line, "[ARM:] METRIC OP VALUE", e.g.
 *   rc: wrong == 0          lossy: lost < 5%          p99 < 500ms
 * (no ARM: every arm). Checked when the profile loads (the metric exists
 * for the workload, the arm exists, the value has the metric's unit),
 * evaluated on the report's arms when the run ends: report.json's
 * "expectations", the text and HTML reports, `rdmactl run --junit FILE`.
 */
#ifndef RTB_CTL_EXP_EXPECT_H
#define RTB_CTL_EXP_EXPECT_H

#include <stddef.h>
#include <jansson.h>
#include "ctl/exp/profile.h"

/* "[ARM:] METRIC OP VALUE" into x, for a workload counting measure (enum
 * measure). 0, or -EINVAL with the message in err and *off the byte offset in
 * s of what is wrong */
int expect_parse(const char *s, unsigned measure, struct prof_expect *x, char *err, size_t len,
		 size_t *off);

/* every expectation on the report's arms: the "expectations" array (one
 * entry per expectation and arm it applies to); *failed: how many failed */
json_t *expect_eval(const struct prof_expect *x, int n, const json_t *arms, int *failed);

/* x's metric is a role's (exit, wall: evaluated on each role of an arm) */
int expect_per_role(const struct prof_expect *x);
/* x's metric's name ("p99") */
const char *expect_metric_name(const struct prof_expect *x);

/* the metrics an expectation may name, for messages: "p50, p90, ..." */
void expect_metric_names(unsigned measure, char *buf, size_t len);

/* x's "ARM:" resolved: an arm of p, all, or a role (exec: moved to
 * x->role). 0; -ENOENT no arm or role of that name; -EINVAL a role with a
 * metric that is not a role's */
int expect_target(struct profile *p, struct prof_expect *x);

#endif
