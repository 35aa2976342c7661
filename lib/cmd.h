/* SPDX-License-Identifier: MIT */
/*
 * One dispatch table type and one executor for every tool: rdmactl's
 * objects and the testbed's verbs, rdma-inject's commands, the agent's
 * requests (iproute2's rd_exec_cmd, but exact names only, and an unknown
 * name is an error the caller turns into a non-zero exit). A handler
 * takes the tool's context and the words after its name.
 */
#ifndef RTB_CMD_H
#define RTB_CMD_H

#include <stddef.h>
#include <stdio.h>

struct cmd_entry {
	const char *name;
	int (*fn)(void *ctx, int argc, char **argv);
	const char *help;	/* one line for the tool's usage; NULL: not listed */
};

/* argv[0] looked up exactly in t ({ NULL } terminated): *rc = its
 * fn(ctx, argc - 1, argv + 1), 0. -ENOENT for an unknown name, -EINVAL
 * for none, with the message in err ("unknown NOUN 'x' (expected
 * a|b|c)"; noun: "command", "verb", "object") */
int cmd_exec(const struct cmd_entry *t, const char *noun, void *ctx, int argc, char **argv, int *rc,
	     char *err, size_t errlen);
/* "  NAME  HELP" for every listed entry */
void cmd_help(const struct cmd_entry *t, FILE *f);

#endif
