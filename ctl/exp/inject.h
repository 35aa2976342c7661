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
/* rdma-inject -j VERB [ARG] on c's node: its JSON output (new reference) or NULL */
json_t *inject_json(struct agentc *c, const char *verb, const char *arg);
/* the node's CLOCK_MONOTONIC (interval timestamps are in it), 0 if unknown */
json_int_t inject_node_now(struct agentc *c);

#endif
