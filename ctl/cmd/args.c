// SPDX-License-Identifier: MIT
/* The per-workload commands' arguments (cmds.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl/cmd/cmds.h"
#include "lib/log.h"
#include "lib/num.h"
#include "workloads/opts.h"

int ctl_args(const char *cmd, int argc, char **argv, int from, const struct ctl_arg *own,
	     json_t *opts, void (*usage)(FILE *))
{
	const struct ctl_arg *a;
	int i;

	for (i = from; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return CTL_HELP;
		}
		if (strncmp(argv[i], "--", 2) || i + 1 >= argc) {
			log_err("%s: expected --option value, got '%s'", cmd, argv[i]);
			return CTL_USAGE;
		}
		for (a = own; a && a->flag && strcmp(a->flag, argv[i] + 2); a++)
			;
		if (a && a->flag)
			*a->dst = argv[i + 1];
		else	/* the workload's option: the agent checks it against its table */
			json_object_set_new(opts, argv[i] + 2, json_string(argv[i + 1]));
		i++;
	}
	return 0;
}

int ctl_take_opt(json_t *opts, const char *workload, const char *key, uint64_t *v)
{
	const char *s = json_string_value(json_object_get(opts, key)), *why;
	const struct opt *o;

	for (o = wl_opts(workload); o && o->name && strcmp(o->name, key); o++)
		;
	if (!o || !o->name || o->kind == OPT_ENUM)
		return -ENOENT;
	if (num_parse(s ? s : o->def, NUM_PLAIN, o->min, o->max, v, &why)) {
		log_err("--%s '%s': %s (%llu..%llu)", key, s ? s : o->def, why,
			(unsigned long long)o->min, (unsigned long long)o->max);
		return -EINVAL;
	}
	json_object_del(opts, key);
	return 0;
}

void ctl_usage_wl(FILE *f, const char *workload)
{
	const struct opt *opts = wl_opts(workload);

	if (!opts)
		return;
	fprintf(f, "workload options of %s (as --name value; the agent checks them):\n", workload);
	opt_help(opts, f);
}
