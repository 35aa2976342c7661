/* SPDX-License-Identifier: MIT */
/* The experiment's fault rules on the nodes' agents (inject.c). */
#ifndef RTB_CTL_EXP_INJECT_H
#define RTB_CTL_EXP_INJECT_H

#include <jansson.h>
#include "ctl/agent/agent.h"
#include "ctl/exp/profile.h"

/* one fault rule on dev through c's agent (a node's, or the switch's),
 * leased to that connection: its id, or -errno with the reason in err */
int inject_fault_add(struct agentc *c, const struct prof_fault *f, const char *dev, char *err,
		     size_t errlen);
/* rdma-inject with args (stolen) through c's agent: 0 and its answer in
 * *res ({rc, stdout, stderr, json?}, new reference), or -EIO with how the
 * call or rdma-inject failed in err (what its stderr said first) */
int inject_call(struct agentc *c, json_t *args, json_t **res, char *err, size_t errlen);
/* rdma-inject -j VERB [ARG] on c's node: its JSON output (new reference) or NULL */
json_t *inject_json(struct agentc *c, const char *verb, const char *arg);
/* the same on every agent cs[i] at once (arg NULL: no argument; else
 * arg[i], and none on cs[i] where it is NULL): out[i] (when out) each
 * output, NULL where none */
void inject_json_all(struct agentc *const *cs, int n, const char *verb, const char *const *arg,
		     json_t **out);
/* the node's CLOCK_MONOTONIC (interval timestamps are in it), 0 if unknown */
json_int_t inject_node_now(struct agentc *c);

#endif
