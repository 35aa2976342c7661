// SPDX-License-Identifier: MIT
/*
 * A profile's switch hosts (hosts.switches, exp.h): Linux boxes in the path
 * that forward between their ports in XDP while the run lasts. Their
 * agents (started over ssh with --no-rdma, or running already) run
 * rdma-inject forward at the start -- more than two ports by the MAC
 * table the nodes' agents give -- and forward stop at the end, once the
 * run's rules there are gone; the ports' hook counters go in the report.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl/exp/exp.h"
#include "ctl/exp/inject.h"
#include "lib/log.h"

/* "MAC=PORT" of every member cabled to switch host j (the MAC of its RoCE
 * netdev, from the hello exp_open made) into args: 0, or -ENOENT said */
static int switch_macs(struct exp *e, int j, json_t *args)
{
	for (int k = 0; k < e->g.n; k++) {
		const struct prof_host *h = &e->p.host[e->g.node[k]];
		char mac[64];

		if (h->swi != j)
			continue;
		if (!e->mac[k][0]) {
			log_err("switch %s: host %s's agent gave no MAC for %s (an older rdma-agent?): "
				"a switch of more than two ports forwards by the nodes' MACs",
				e->p.swh[j].name, h->name, h->dev);
			return -ENOENT;
		}
		snprintf(mac, sizeof(mac), "%s=%s", e->mac[k], h->sw);
		json_array_append_new(args, json_string("mac"));
		json_array_append_new(args, json_string(mac));
	}
	return 0;
}

/* the profile's switch hosts: their agents, then the forwarder on each
 * (rdma-inject forward between its ports; more than two by the MAC table
 * the nodes' agents give). It lives with our connection: if we die, the
 * agent stops it. 0, or -errno said */
int exp_switches_open(struct exp *e)
{
	int j, r, k;

	e->switches = json_array();
	for (j = 0; j < e->p.nswitches; j++) {
		const struct prof_switch *sw = &e->p.swh[j];
		json_t *args = json_array(), *res = NULL, *ports = json_array(), *out;
		char err[512];
		const char *mode;

		r = agentc_open(&e->swh[j], sw->name, e->p.ssh.on ? "127.0.0.1" : sw->addr,
				e->p.ssh.on ? e->ssh.lport[e->p.nhosts + j] : sw->port, e->g.tb.token,
				5000);
		if (r) {
			log_err("switch %s: %s", e->swh[j].where, strerror(-r));
			json_decref(args);
			json_decref(ports);
			return r;
		}
		json_array_append_new(args, json_string("-j"));
		json_array_append_new(args, json_string("forward"));
		for (k = 0; k < sw->nports; k++) {
			json_array_append_new(args, json_string(sw->ports[k]));
			json_array_append_new(ports, json_string(sw->ports[k]));
		}
		if (sw->nports > 2 && switch_macs(e, j, args)) {
			json_decref(args);
			json_decref(ports);
			return -ENOENT;
		}
		r = inject_call(&e->swh[j], json_pack("{s:o}", "args", args), &res, err, sizeof(err));
		if (r) {
			log_err("switch %s", err);
			json_decref(ports);
			return r;
		}
		e->fwd_on[j] = 1;
		out = json_object_get(res, "json");
		mode = json_string_value(json_object_get(out, "mode")) ?: "?";
		json_array_append_new(e->switches,
				      json_pack("{s:s,s:s,s:o,s:s,s:i}", "name", sw->name, "where",
						e->swh[j].where, "ports", ports, "xdp", mode,
						"macs", (int)json_integer_value(json_object_get(out,
												"macs"))));
		if (e->o.print && !e->ctl->json)
			log_info("switch %s: forwarding between %d ports (%s XDP)", sw->name,
				 sw->nports, mode);
		json_decref(res);
	}
	return 0;
}

/* each switch host's forwarder, once its rules are gone: its ports' hook
 * counters into the report's testbed.switches, then stopped (forward stop
 * takes nothing else there down) */
void exp_switches_stop(struct exp *e)
{
	for (int j = 0; j < e->p.nswitches; j++) {
		json_t *o = json_array_get(e->switches, (size_t)j), *st, *h, *hooks = json_object();
		struct agentc *c = &e->swh[j];
		json_t *res = NULL;
		char err[256];
		size_t m;

		if (!e->fwd_on[j] || c->fd < 0)
			continue;
		st = inject_json(c, "stats", NULL);
		json_array_foreach(json_object_get(st, "hooks"), m, h)
			for (int k = 0; k < e->p.swh[j].nports; k++)
				if (!strcmp(jr_str(h, "dev"), e->p.swh[j].ports[k])) {
					char key[40];

					snprintf(key, sizeof(key), "%s %s", jr_str(h, "dev"),
						 jr_str(h, "dir"));
					json_object_set_new(hooks, key, json_deep_copy(h));
				}
		json_decref(st);
		json_object_set_new(o, "hooks", hooks);
		if (inject_call(c, json_pack("{s:[ss]}", "args", "forward", "stop"), &res, err,
				sizeof(err)))
			log_err("switch %s", err);
		else
			e->fwd_on[j] = 0;
		json_object_set_new(o, "stopped", json_boolean(!e->fwd_on[j]));
		json_decref(res);
	}
}

