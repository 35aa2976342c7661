/* SPDX-License-Identifier: MIT */
/*
 * Placeholders in an exec workload's commands and environment values:
 *   {self.ip} {self.dev} {self.gid_index} {self.port} {self.name}
 *                              the node the command runs on
 *   {node1.ip} ...             node1 of the run (node0..nodeN-1)
 *   {server.ip} ...            a role's (first) node, by the role's name
 *   {size}                     a variable (workload vars:, an arm's vars:)
 *   {arm} {round}              the arm's name, the round (1, 2, ...)
 * {{ is a literal {. A { right after $ is the shell's (${HOME}), left as
 * it is. Checked when the profile loads (with stand-in facts: the names,
 * not the values), expanded when the command starts.
 */
#ifndef RTB_CTL_EXP_TPL_H
#define RTB_CTL_EXP_TPL_H

#include <stddef.h>
#include <jansson.h>

struct tpl_node {
	char name[32], dev[32], ip[64];
	int gid_index, port;	/* gid_index < 0: not known */
};

struct tpl_ctx {
	const struct tpl_node *node;	/* the run's nodes, by index */
	int nnodes, self;
	const char *const *roles;	/* role names, NULL-terminated */
	const int *role_node;		/* each role's first node */
	const json_t *vars;		/* name: string */
	const char *arm;
	int round;
};

struct profile;

/* the facts of a node from its agent's hello, each checked against its form
 * (dev a name, ip an IP literal, gid_index and port numbers in range):
 * 0, or -EPROTO with err ("NAME: ...": n->name is set before) */
int tpl_node_facts(struct tpl_node *n, const json_t *hello, char *err, size_t errlen);

/* c's roles (into roles[], role_node[]: PROF_MAX_ROLES + 1 and
 * PROF_MAX_ROLES), variables (the workload's, then arm a's) and arm name
 * for arm a of an exec profile p; the nodes, self and round stay the
 * caller's. The variables object, the caller's to json_decref
 * (profile_exec.c) */
json_t *tpl_arm_ctx(const struct profile *p, int a, const char **roles, int *role_node,
		    struct tpl_ctx *c);

/* in expanded into out (len bytes). 0, or -EINVAL with err and *off (the byte
 * offset in `in` of the bad placeholder) */
int tpl_expand(const char *in, const struct tpl_ctx *c, char *out, size_t len, size_t *off,
	       char *err, size_t errlen);

#endif
