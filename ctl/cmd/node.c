// SPDX-License-Identifier: MIT
/*
 * One-node commands: rdmactl inject (the node's rdma-inject) and rdmactl
 * counters (its device's hw counters). On a shared kernel's VM every node
 * shares one kernel, so any node's injector reaches every device (n0..,
 * sw0..); per-node VMs each have their own (nN), and `--node switch` is the
 * switch's agent on this host, for its ports (rtbsw0..).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl/cmd/cmds.h"
#include "ctl/testbed/testbed.h"
#include "lib/log.h"

static int open_node(struct tb_state *s, struct agentc *c, const char *node)
{
	int i, r;

	r = tb_load(s);
	if (r) {
		if (r == -ENOENT)
			log_err("no testbed is up (rdmactl testbed up)");
		return r;
	}
	if (!strcmp(node, "switch")) {
		r = tb_switch_open(c, s, 3000);
		if (r == -ENOENT)
			log_err("--node switch: this testbed's switch is in its VM (reach its "
				"ports, sw0.., through any node)");
		else if (r)
			log_err("%s: cannot reach the switch's agent: %s", c->where, strerror(-r));
		return r;
	}
	i = tb_node_index(s, node);
	if (i < 0) {
		log_err("unknown node '%s' (testbed has node0..node%d)", node, s->nodes - 1);
		return -EINVAL;
	}
	r = tb_agent_open(c, s, i, 3000);
	if (r)
		log_err("%s: cannot reach the agent: %s", c->where, strerror(-r));
	return r;
}

int cmd_inject(struct ctl *ctl, int argc, char **argv)
{
	const char *node = "node0";
	struct tb_state s;
	struct agentc c;
	json_t *args, *res = NULL;
	char err[512];
	int i = 0, r, rc;

	if (argc >= 2 && !strcmp(argv[0], "--node")) {
		node = argv[1];
		i = 2;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: rdmactl [-j] inject [--node NODE|switch] RDMA-INJECT-ARGS...\n"
				"  e.g. rdmactl inject add dev n1 ingress drop 5%%; rdmactl inject stats\n");
		return CTL_USAGE;
	}
	if (open_node(&s, &c, node))
		return CTL_FAIL;
	args = json_array();
	if (ctl->json)
		json_array_append_new(args, json_string("-j"));
	for (; i < argc; i++)
		json_array_append_new(args, json_string(argv[i]));
	r = agentc_call(&c, "inject", json_pack("{s:o}", "args", args), &res, 90000, err,
			sizeof(err));
	agentc_close(&c);
	if (r) {
		log_err("%s", err);
		return CTL_FAIL;
	}
	{
		const char *o = json_string_value(json_object_get(res, "stdout"));
		const char *e = json_string_value(json_object_get(res, "stderr"));
		json_t *jrc = json_object_get(res, "rc");

		if (!o || !e || !json_is_integer(jrc)) {
			log_err("%s: a malformed inject reply (no stdout, stderr or rc)", c.where);
			json_decref(res);
			return CTL_FAIL;
		}
		fputs(o, stdout);
		fputs(e, stderr);
		rc = (int)json_integer_value(jrc);
	}
	json_decref(res);
	return rc;
}

int cmd_counters(struct ctl *ctl, int argc, char **argv)
{
	struct tb_state s;
	struct agentc c;
	json_t *res = NULL, *v;
	const char *node = "node0", *k;
	char err[512];

	if (argc == 2 && !strcmp(argv[0], "--node")) {
		node = argv[1];
	} else if (argc) {
		fprintf(stderr, "usage: rdmactl [-j] counters [--node NODE]\n");
		return CTL_USAGE;
	}
	if (open_node(&s, &c, node))
		return CTL_FAIL;
	if (agentc_call(&c, "counters", NULL, &res, 10000, err, sizeof(err))) {
		agentc_close(&c);
		log_err("%s", err);
		return CTL_FAIL;
	}
	agentc_close(&c);
	if (ctl->json) {
		json_object_set_new(res, "schema_version", json_integer(1));
		json_object_set_new(res, "node", json_string(node));
		json_dumpf(res, stdout, JSON_INDENT(2));
		putchar('\n');
	} else {
		printf("%s (%s) hw counters\n", node, json_string_value(json_object_get(res, "dev")));
		json_object_foreach(json_object_get(res, "hw_counters"), k, v)
			printf("  %-28s %lld\n", k, json_integer_value(v));
	}
	json_decref(res);
	return CTL_OK;
}
