// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include "cmd.h"

static void names(const struct cmd_entry *t, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (; t->name && o < len; t++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "|" : "", t->name);
}

int cmd_exec(const struct cmd_entry *t, const char *noun, void *ctx, int argc, char **argv, int *rc,
	     char *err, size_t errlen)
{
	const struct cmd_entry *e;
	char list[256];

	names(t, list, sizeof(list));
	if (argc < 1 || !argv[0]) {
		snprintf(err, errlen, "expected a %s (%s)", noun, list);
		return -EINVAL;
	}
	for (e = t; e->name; e++)
		if (!strcmp(e->name, argv[0])) {
			*rc = e->fn(ctx, argc - 1, argv + 1);
			return 0;
		}
	snprintf(err, errlen, "unknown %s '%s' (expected %s)", noun, argv[0], list);
	return -ENOENT;
}

void cmd_help(const struct cmd_entry *t, FILE *f)
{
	for (; t->name; t++)
		if (t->help)
			fprintf(f, "  %-10s %s\n", t->name, t->help);
}
