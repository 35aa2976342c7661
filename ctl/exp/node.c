// SPDX-License-Identifier: MIT
/*
 * Reaching an experiment's nodes (exp.h): the argv that runs words on a
 * member's node (the testbed VM's ssh, this host, or a profile host's
 * ssh), where our tools are there, whether each node has a kernel of its
 * own, and the experiment's event line. Used by the exec runner, traces
 * and node faults alike; it calls nothing above it.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "ctl/exp/exp.h"
#include "lib/log.h"

int exp_ssh_argv(struct exp *e, const char *dest, const char *const *words, char **argv,
		 char *line, size_t len)
{
	size_t at;
	int n, i;

	snprintf(line, len, "cd /root 2>/dev/null || cd /; exec ");
	at = strlen(line);
	for (i = 0; words[i]; i++)
		if (tb_sh_quote(line, len, &at, words[i]))
			return -E2BIG;
	n = ssh_host_argv(&e->p, argv);
	argv[n++] = "-q";
	argv[n++] = "--";
	argv[n++] = (char *)dest;
	argv[n++] = line;
	argv[n] = NULL;
	return 0;
}

int exp_node_argv(struct exp *e, const char *cfg, int m, const char *const *words, char **argv,
		  char *line, size_t len)
{
	size_t at = 0;
	int n = 0, i;
	char *host = line;	/* a VM's: line holds it, then the command */

	if (e->g.tb.backend == TB_HOST) {
		for (i = 0; words[i]; i++)
			argv[n++] = (char *)words[i];
		argv[n] = NULL;
		return 0;
	}
	if (e->g.tb.backend != TB_VM)	/* a profile's host */
		return exp_ssh_argv(e, e->p.host[e->g.node[m]].ssh, words, argv, line, len);
	tb_ssh_host(e->g.node[m], host, len < 32 ? len : 32);
	at = strlen(host) + 1;
	line += at;
	len -= at;
	snprintf(line, len, "cd /root 2>/dev/null || cd /; exec ");
	at = strlen(line);
	for (i = 0; words[i]; i++)
		if (tb_sh_quote(line, len, &at, words[i]))
			return -E2BIG;
	argv[n++] = "ssh";	/* its config says BatchMode */
	argv[n++] = "-F";
	argv[n++] = (char *)cfg;
	argv[n++] = "-q";
	argv[n++] = "--";
	argv[n++] = host;
	argv[n++] = line;
	argv[n] = NULL;
	return 0;
}

const char *exp_node_tool(const struct exp *e, const char *tool)
{
	static char path[2][PATH_MAX];
	int k = !strcmp(tool, "rdma-inject");

	if (e->g.tb.backend == TB_HOST)
		snprintf(path[k], sizeof(path[k]), "%s/%s", ctl_bin_dir(), tool);
	else
		snprintf(path[k], sizeof(path[k]), "%s%s", e->g.tb.backend == TB_VM ? "/usr/bin/" : "",
			 tool);
	return path[k];
}

void exp_event(struct exp *e, const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (e->obs.event)
		e->obs.event(e->obs.arg, buf);
	if (e->o.print && !e->ctl->json) {
		if (isatty(2))
			fprintf(stderr, "\r%114s\r", "");
		log_info("%s", buf);
	}
}

int exp_per_node(const struct exp *e)
{
	return !e->p.nhosts && tb_per_node(&e->g.tb);
}
