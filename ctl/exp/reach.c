// SPDX-License-Identifier: MIT
/*
 * Reachability: every fault's hooks must see the run's traffic. Their
 * packet counters are read before the first round and after it (the warm-up
 * is in it); a fault none of whose hooks saw a packet of its kind (RoCE, or
 * the TCP and UDP a `proto` rule names) fails the run there, before the
 * rounds that would measure a fault that never happened. A hardware NIC's
 * RoCE never meets the host's qdiscs, nor does traffic a rule's direction
 * does not carry. A `count` rule only watches: it may see nothing.
 * `rdmactl run --no-reach-check` turns the check off.
 */
#include <errno.h>
#include <string.h>
#include <jansson.h>
#include "ctl/exp/exp.h"
#include "lib/log.h"

/* RoCE (0), or only the TCP and UDP the rule's proto names (1) */
static int other_ip(const char *rule)
{
	const char *p = strstr(rule, "proto ");

	return p && !strstr(p, "roce");
}

/* the packets of the fault's kind that its hook on agent c (dev, dir) has
 * counted, from that agent's stats; -ENOENT: no such hook */
static json_int_t hook_pkts(const json_t *st, const char *dev, int egress, int other)
{
	const json_t *h;
	size_t i;

	json_array_foreach(json_object_get(st, "hooks"), i, h) {
		json_int_t all = json_integer_value(json_object_get(h, "pkts"));
		json_int_t roce = json_integer_value(json_object_get(h, "roce_pkts"));

		if (!strcmp(json_string_value(json_object_get(h, "dev")) ?: "", dev) &&
		    !strcmp(json_string_value(json_object_get(h, "dir")) ?: "",
			    egress ? "egress" : "ingress"))
			return other ? all - roce : roce;
	}
	return -ENOENT;
}

/* the action of rule id in an agent's stats ("" when not found) */
static const char *rule_action(const json_t *stats, json_int_t id)
{
	const json_t *r;
	size_t i;

	json_array_foreach(json_object_get(stats, "rules"), i, r)
		if (json_integer_value(json_object_get(r, "id")) == id)
			return json_string_value(json_object_get(r, "action")) ?: "";
	return "";
}

/* fault i's hook on member k: its packets of the fault's kind into
 * per[NODE]; -1 for a count rule, which only watches: never checked */
static void hook_count(struct exp *e, int i, int k, const json_t *stats, const char *dev,
		       json_t *per)
{
	const struct prof_fault *f = &e->p.fault[i];
	json_int_t v = hook_pkts(stats, dev, f->egress, other_ip(f->rule));

	if (!strcmp(rule_action(stats, e->ids[i][k]), "count"))
		v = -1;
	else if (v < 0)
		v = 0;	/* no such hook: it saw nothing */
	json_object_set_new(per, e->g.tb.node[e->g.node[k]].name, json_integer(v));
}

/* each fault's hooks' packets now: {NAME: {NODE: N}} (a new object) */
static json_t *reach_read(struct exp *e)
{
	return exp_faults_each(e, hook_count);
}

void exp_reach_begin(struct exp *e)
{
	json_decref(e->reach0);
	e->reach0 = e->o.no_reach_check ? NULL : reach_read(e);
}

/* the RoCE packets the members' NICs sent in the results so far (rxe's
 * sent_pkts in every hw_counters_delta) */
static json_int_t sent_pkts(const json_t *x)
{
	json_int_t n = 0;
	const char *key;
	const json_t *v;
	size_t i;

	if (json_is_array(x))
		json_array_foreach(x, i, v)
			n += sent_pkts(v);
	else if (json_is_object(x))
		json_object_foreach((json_t *)x, key, v)
			n += !strcmp(key, "hw_counters_delta") ?
				     json_integer_value(json_object_get(v, "sent_pkts")) :
				     sent_pkts(v);
	return n;
}

/* where fault i sits, for the message: "node1 n1 ingress" or "3 nodes' ... */
static void where(struct exp *e, int i, char *buf, size_t len)
{
	const struct prof_fault *f = &e->p.fault[i];
	char dev[32] = "";
	int k, n = 0, first = -1;

	for (k = 0; k < e->g.n; k++)
		if (e->ids[i][k] >= 0 && (f->nodes & (1u << e->g.node[k]))) {
			if (first < 0)
				first = k;
			n++;
		}
	if (first < 0) {
		snprintf(buf, len, "no node");
		return;
	}
	exp_fault_at(e, f, first, dev, sizeof(dev));
	if (n == 1)
		snprintf(buf, len, "%s %s %s", e->g.tb.node[e->g.node[first]].name, dev,
			 f->egress ? "egress" : "ingress");
	else
		snprintf(buf, len, "%d nodes' %s %s", n, f->sw ? "switch ports" : "NICs",
			 f->egress ? "egress" : "ingress");
}

int exp_reach_check(struct exp *e)
{
	json_t *now, *v;
	json_int_t sent = 0;
	int i, bad = 0, a;

	if (!e->reach0)
		return 0;
	now = reach_read(e);
	for (a = 0; a < e->p.narms; a++)
		sent += sent_pkts(e->rounds[a]);
	for (i = 0; i < e->p.nfaults; i++) {
		const struct prof_fault *f = &e->p.fault[i];
		const json_t *before = json_object_get(e->reach0, f->name), *x;
		const char *node;
		json_int_t d = 0;
		int watch = 0;
		char at[96];

		if (f->event || !(v = json_object_get(now, f->name)))
			continue;
		json_object_foreach(v, node, x) {	/* a node rebooted: its hook counts anew */
			json_int_t n1 = json_integer_value(x);
			json_int_t n0 = json_integer_value(json_object_get(before, node));

			watch |= n1 < 0;
			if (n1 >= 0)
				d += n1 >= n0 ? n1 - n0 : n1;
		}
		if (watch)	/* a count rule only watches: zero is its answer */
			continue;
		json_object_set_new(json_array_get(e->faults, (size_t)i), "reach_packets",
				    json_integer(d));
		if (d > 0)
			continue;
		where(e, i, at, sizeof(at));
		if (bad++)
			continue;
		if (other_ip(f->rule))
			snprintf(e->err, sizeof(e->err),
				 "fault %s on %s saw no TCP or UDP packet of this run in its first "
				 "round: the traffic does not pass there. A rule on the wrong "
				 "direction sees nothing. Put the rule on the path, or run with "
				 "--no-reach-check", f->name, at);
		else
			snprintf(e->err, sizeof(e->err),
				 "fault %s on %s saw none of this run's %lld RoCE packets in its "
				 "first round: the traffic does not pass there. Hardware RoCE "
				 "bypasses the host's qdiscs, and a rule on the wrong direction "
				 "sees nothing either. Put the rule on the path or on a switch "
				 "host, or run with --no-reach-check", f->name, at, (long long)sent);
	}
	json_decref(now);
	if (bad) {
		exp_event(e, "%s", e->err);
		if (!e->o.print && !e->obs.event)
			log_err("%s", e->err);
		e->rc = 1;
	}
	return bad ? -EHOSTUNREACH : 0;
}
