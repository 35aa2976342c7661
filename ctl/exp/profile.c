// SPDX-License-Identifier: MIT
/*
 * Profile loading and checking (see profile.h and profiles/README.md).
 * The first error stops the check: one precise message beats a cascade.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/exp/profile.h"
#include "ctl/testbed/testbed.h"
#include "ctl/wl/wl.h"
#include "injector/inj.h"
#include "lib/num.h"
#include "lib/opt.h"
#include "lib/ytree.h"
#include "workloads/wl.h"

struct pctx {
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 4, 5))) static int perr(struct pctx *x, const struct ynode *n,
						      int key, const char *fmt, ...)
{
	va_list ap;
	int o;

	(void)key;
	o = snprintf(x->err, x->errlen, "%s:%d:%d: ", n->file, n->line, n->col);
	va_start(ap, fmt);
	if (o >= 0 && (size_t)o < x->errlen)
		vsnprintf(x->err + o, x->errlen - (size_t)o, fmt, ap);
	va_end(ap);
	return -1;
}

/* an error at key i of map m */
__attribute__((format(printf, 4, 5))) static int perr_key(struct pctx *x, const struct ynode *m,
							  size_t i, const char *fmt, ...)
{
	va_list ap;
	int o;

	if (m->kline[i])
		o = snprintf(x->err, x->errlen, "%s:%d:%d: ", m->file, m->kline[i], m->kcol[i]);
	else
		o = snprintf(x->err, x->errlen, "--set:1:1: ");
	va_start(ap, fmt);
	if (o >= 0 && (size_t)o < x->errlen)
		vsnprintf(x->err + o, x->errlen - (size_t)o, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *kind_name(const struct ynode *n)
{
	return n->kind == YN_MAP ? "a mapping" : n->kind == YN_SEQ ? "a list" : "a scalar";
}

static int want(struct pctx *x, const struct ynode *n, enum ynode_kind k, const char *what)
{
	static const char *const names[] = { "a value", "a mapping (key: value lines)",
					     "a list (- item lines)" };

	if (n->kind == k && !(k == YN_SCALAR && ytree_is_null(n)))
		return 0;
	return perr(x, n, 0, "%s: expected %s, found %s", what, names[k],
		    ytree_is_null(n) ? "nothing" : kind_name(n));
}

/* every key of map m is one of allowed[] */
static int keys_known(struct pctx *x, const struct ynode *m, const char *const *allowed,
		      const char *where)
{
	size_t i;
	int j;

	for (i = 0; i < m->n; i++) {
		const char *s;

		for (j = 0; allowed[j] && strcmp(allowed[j], m->k[i]); j++)
			;
		if (allowed[j])
			continue;
		s = opt_suggest(m->k[i], allowed);
		if (s)
			return perr_key(x, m, i, "unknown key '%s' in %s (did you mean '%s'?)", m->k[i],
					where, s);
		{
			char list[256] = "";

			for (j = 0; allowed[j]; j++) {
				size_t l = strlen(list);

				snprintf(list + l, sizeof(list) - l, "%s%s", j ? ", " : "", allowed[j]);
			}
			return perr_key(x, m, i, "unknown key '%s' in %s (expected one of: %s)",
					m->k[i], where, list);
		}
	}
	return 0;
}

/* the scalar at key of map m: 0 and *n = NULL when absent, -1 (error
 * reported) when not a scalar; what = "where.key" for messages */
static int scalar_at(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		     char *what, size_t wlen, const struct ynode **n)
{
	*n = ytree_get(m, key, NULL);
	snprintf(what, wlen, "%s.%s", where, key);
	return *n && want(x, *n, YN_SCALAR, what) ? -1 : 0;
}

static int get_str(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		   char *buf, size_t len)
{
	const struct ynode *n;
	char what[96];

	if (scalar_at(x, m, key, where, what, sizeof(what), &n) || !n)
		return n ? -1 : 0;
	if (strlen(n->s) >= len)
		return perr(x, n, 0, "%s: longer than %zu characters", what, len - 1);
	snprintf(buf, len, "%s", n->s);
	return 0;
}

static int get_enum(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		    const char *const *kw, int *out)
{
	const struct ynode *n;
	char what[96], list[128] = "";
	const char *s;
	int j;

	if (scalar_at(x, m, key, where, what, sizeof(what), &n) || !n)
		return n ? -1 : 0;
	for (j = 0; kw[j]; j++) {
		size_t l = strlen(list);

		if (!strcmp(kw[j], n->s)) {
			*out = j;
			return 0;
		}
		snprintf(list + l, sizeof(list) - l, "%s%s", j ? "|" : "", kw[j]);
	}
	s = opt_suggest(n->s, kw);
	if (s)
		return perr(x, n, 0, "%s: unknown value '%s' (did you mean '%s'?)", what, n->s, s);
	return perr(x, n, 0, "%s: unknown value '%s' (expected %s)", what, n->s, list);
}

static int get_num(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		   enum num_kind kind, uint64_t min, uint64_t max, const char *range, uint64_t *out)
{
	const struct ynode *n;
	const char *why;
	char what[96];

	if (scalar_at(x, m, key, where, what, sizeof(what), &n) || !n)
		return n ? -1 : 0;
	if (num_parse(n->s, kind, min, max, out, &why))
		return perr(x, n, 0, "%s: '%s': %s (expected %s)", what, n->s, why, range);
	return 0;
}

/* a workload option map: every key in the workload's table and not one
 * rdmactl sets itself, every value accepted by it (into a scratch
 * configuration, thrown away) */
static int check_wopts(struct pctx *x, const struct ynode *m, const struct wlc *d,
		       const char *where, json_t *dst)
{
	/* every workload's configuration is far smaller than this */
	static uint64_t scratch[1024];
	const struct wl_ops *wl = wl_find(d->name);
	const struct wlc_reserved *rv;
	const char *names[128];
	const struct opt *o;
	char e[256], what[96];
	size_t i;
	int j;

	snprintf(what, sizeof(what), "%s", where);
	if (want(x, m, YN_MAP, what))
		return -1;
	for (j = 0, o = wl->opts; o->name && j < 127; o++)
		names[j++] = o->name;
	names[j] = NULL;
	for (i = 0; i < m->n; i++) {
		const struct ynode *v = m->v[i];
		const char *s;

		for (rv = d->reserved; rv->key && strcmp(rv->key, m->k[i]); rv++)
			;
		if (rv->key)
			return perr_key(x, m, i, "%s.%s: %s", where, m->k[i], rv->why);
		for (o = wl->opts; o->name && strcmp(o->name, m->k[i]); o++)
			;
		if (!o->name) {
			s = opt_suggest(m->k[i], names);
			return perr_key(x, m, i, "unknown %s option '%s'%s%s%s", d->name, m->k[i],
					s ? " (did you mean '" : " (rdma-agent --list shows them)",
					s ? s : "", s ? "'?)" : "");
		}
		snprintf(what, sizeof(what), "%s.%s", where, m->k[i]);
		if (want(x, v, YN_SCALAR, what))
			return -1;
		if (opt_set(wl->opts, scratch, m->k[i], v->s, e, sizeof(e)))
			return perr(x, v, 0, "%s", e);
		json_object_set_new(dst, m->k[i], json_string(v->s));
	}
	return 0;
}

static int check_testbed(struct pctx *x, struct profile *p, const struct ynode *t)
{
	static const char *const keys[] = { "backend", "nodes", "mtu", NULL };
	static const char *const backends[] = { "auto", "vm", "host", NULL };
	uint64_t v;
	int b = 0;

	if (want(x, t, YN_MAP, "testbed") || keys_known(x, t, keys, "testbed") ||
	    get_enum(x, t, "backend", "testbed", backends, &b))
		return -1;
	snprintf(p->backend, sizeof(p->backend), "%s", backends[b]);
	v = (uint64_t)p->nodes;
	if (get_num(x, t, "nodes", "testbed", NUM_PLAIN, 2, TB_MAX_NODES, "2..16", &v))
		return -1;
	p->nodes = (int)v;
	v = (uint64_t)p->mtu;
	if (get_num(x, t, "mtu", "testbed", NUM_PLAIN, 256, 4096, "256|512|1024|2048|4096", &v))
		return -1;
	if (v & (v - 1))
		return perr(x, ytree_get(t, "mtu", NULL), 0,
			    "testbed.mtu: %llu (expected 256|512|1024|2048|4096)", (unsigned long long)v);
	p->mtu = (int)v;
	return 0;
}

/* hosts: agents already running (started by Slurm, systemd, by hand) */
/* a string that goes into an ssh command line or the remote shell: no
 * leading '-' (it would be an option), nothing the shell would expand */
static int safe_word(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		     const char *s)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.@/:";

	if (s[0] == '-' || strspn(s, ok) != strlen(s))
		return perr(x, ytree_get(m, key, NULL), 0,
			    "%s.%s: '%s': letters, digits and _ - . @ / : only, not starting with -",
			    where, key, s);
	return 0;
}

/* hosts.ssh: {config, agent, options} */
static int check_ssh(struct pctx *x, struct profile *p, const struct ynode *m)
{
	static const char *const keys[] = { "config", "agent", "options", NULL };
	const struct ynode *o;
	size_t i;

	if (want(x, m, YN_MAP, "hosts.ssh") || keys_known(x, m, keys, "hosts.ssh") ||
	    get_str(x, m, "config", "hosts.ssh", p->ssh.config, sizeof(p->ssh.config)) ||
	    get_str(x, m, "agent", "hosts.ssh", p->ssh.agent, sizeof(p->ssh.agent)) ||
	    safe_word(x, m, "agent", "hosts.ssh", p->ssh.agent))
		return -1;
	o = ytree_get(m, "options", NULL);
	if (o) {
		if (want(x, o, YN_SEQ, "hosts.ssh.options"))
			return -1;
		if (o->n > PROF_MAX_SSH_OPTS)
			return perr(x, o, 0, "hosts.ssh.options: at most %d", PROF_MAX_SSH_OPTS);
		for (i = 0; i < o->n; i++) {
			const struct ynode *v = o->v[i];

			if (want(x, v, YN_SCALAR, "hosts.ssh.options[]"))
				return -1;
			if (!strchr(v->s, '=') || v->s[0] == '-' || strlen(v->s) >= sizeof(p->ssh.opt[0]))
				return perr(x, v, 0, "hosts.ssh.options: '%s': expected Key=Value "
					    "(ssh -o), e.g. ConnectTimeout=10", v->s);
			snprintf(p->ssh.opt[i], sizeof(p->ssh.opt[i]), "%s", v->s);
		}
		p->ssh.nopts = (int)o->n;
	}
	p->ssh.on = 1;
	return 0;
}

static int check_hosts(struct pctx *x, struct profile *p, const struct ynode *h)
{
	static const char *const keys[] = { "token_file", "ssh", "nodes", NULL };
	static const char *const nkeys[] = { "name", "agent", "ssh", "dev", "port", "nic", "switch",
					     NULL };
	const struct ynode *ns, *sm;
	size_t i, j;

	if (want(x, h, YN_MAP, "hosts") || keys_known(x, h, keys, "hosts"))
		return -1;
	snprintf(p->ssh.agent, sizeof(p->ssh.agent), "rdma-agent");
	sm = ytree_get(h, "ssh", NULL);
	if (sm && check_ssh(x, p, sm))
		return -1;
	if (sm && ytree_get(h, "token_file", NULL))
		return perr(x, ytree_get(h, "token_file", NULL), 0,
			    "hosts.token_file: with ssh: rdmactl gives the agents it starts a fresh "
			    "token (remove token_file)");
	if (!sm && !ytree_get(h, "token_file", NULL))
		return perr(x, h, 0, "hosts: missing key 'token_file' (the agents' shared token), "
			    "or ssh: (rdmactl starts the agents)");
	if (get_str(x, h, "token_file", "hosts", p->token_file, sizeof(p->token_file)))
		return -1;
	ns = ytree_get(h, "nodes", NULL);
	if (!ns)
		return perr(x, h, 0, "hosts: missing key 'nodes' (a list: - name: a, %s)",
			    sm ? "ssh: HOST, dev: DEVICE" : "agent: HOST:PORT");
	if (want(x, ns, YN_SEQ, "hosts.nodes"))
		return -1;
	if (ns->n < 2 || ns->n > 16)
		return perr(x, ns, 0, "hosts.nodes: %zu nodes (expected 2 to 16)", ns->n);
	for (i = 0; i < ns->n; i++) {
		const struct ynode *m = ns->v[i], *ag;
		struct prof_host *ph = &p->host[i];
		char where[32], addr[96], *colon, *end;
		uint64_t aport = 47300 + i;
		long port;

		snprintf(where, sizeof(where), "hosts.nodes[%zu]", i);
		if (want(x, m, YN_MAP, where) || keys_known(x, m, nkeys, where))
			return -1;
		if (get_str(x, m, "name", where, ph->name, sizeof(ph->name)) ||
		    get_str(x, m, "nic", where, ph->nic, sizeof(ph->nic)) ||
		    get_str(x, m, "switch", where, ph->sw, sizeof(ph->sw)))
			return -1;
		if (!ytree_get(m, "name", NULL))
			return perr(x, m, 0, "%s: missing key 'name'", where);
		if (!strcmp(ph->name, "all") || strspn(ph->name, "abcdefghijklmnopqrstuvwxyz"
					     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(ph->name))
			return perr(x, ytree_get(m, "name", NULL), 0,
				    "%s.name: '%s': letters, digits, _ and - only (not 'all')", where,
				    ph->name);
		for (j = 0; j < i; j++)
			if (!strcmp(p->host[j].name, ph->name))
				return perr(x, ytree_get(m, "name", NULL), 0, "%s.name: '%s' twice",
					    where, ph->name);
		p->nhosts = (int)i + 1;
		if (sm) {	/* rdmactl starts this one: ssh destination, device, port */
			if (ytree_get(m, "agent", NULL))
				return perr(x, ytree_get(m, "agent", NULL), 0,
					    "%s.agent: with hosts.ssh rdmactl starts the agent "
					    "(give ssh:, dev: and port:)", where);
			if (!ytree_get(m, "ssh", NULL) || !ytree_get(m, "dev", NULL))
				return perr(x, m, 0, "%s: needs ssh: (the destination) and dev: "
					    "(the RDMA device)", where);
			if (get_str(x, m, "ssh", where, ph->ssh, sizeof(ph->ssh)) ||
			    safe_word(x, m, "ssh", where, ph->ssh) ||
			    get_str(x, m, "dev", where, ph->dev, sizeof(ph->dev)) ||
			    safe_word(x, m, "dev", where, ph->dev) ||
			    get_num(x, m, "port", where, NUM_PLAIN, 1, 65535, "1..65535", &aport))
				return -1;
			ph->aport = (int)aport;
			for (j = 0; j < i; j++)
				if (!strcmp(p->host[j].ssh, ph->ssh) && p->host[j].aport == ph->aport)
					return perr(x, m, 0, "%s: %s port %d: hosts.nodes[%zu] has it "
						    "too (give each a port:)", where, ph->ssh,
						    ph->aport, j);
			continue;
		}
		if (ytree_get(m, "ssh", NULL) || ytree_get(m, "dev", NULL) ||
		    ytree_get(m, "port", NULL))
			return perr(x, ytree_get(m, "ssh", NULL) ?: ytree_get(m, "dev", NULL) ?:
				    ytree_get(m, "port", NULL), 0,
				    "%s: ssh:, dev: and port: need hosts.ssh (rdmactl starts the "
				    "agents); agents already running are given by agent: HOST:PORT",
				    where);
		if (!(ag = ytree_get(m, "agent", NULL)))
			return perr(x, m, 0, "%s: needs name: and agent: HOST:PORT", where);
		if (get_str(x, m, "agent", where, addr, sizeof(addr)))
			return -1;
		colon = strrchr(addr, ':');
		port = colon ? strtol(colon + 1, &end, 10) : 0;
		if (!colon || colon == addr || *end || port < 1 || port > 65535)
			return perr(x, ag, 0, "%s.agent: '%s': expected HOST:PORT", where, addr);
		*colon = 0;
		snprintf(ph->addr, sizeof(ph->addr), "%s", addr);
		ph->port = (int)port;
	}
	p->nodes = p->nhosts;
	snprintf(p->backend, sizeof(p->backend), "hosts");
	return 0;
}

static int check_arms(struct pctx *x, struct profile *p, const struct ynode *a,
		      const struct wlc *wl)
{
	static const char *const keys[] = { "name", "mode", "options", NULL };
	const char *const *modes = rtb_mode_names;
	char mlist[64] = "";
	size_t i, j;

	for (j = 0; modes[j]; j++)
		snprintf(mlist + strlen(mlist), sizeof(mlist) - strlen(mlist), "%s%s", j ? "|" : "",
			 modes[j]);
	if (want(x, a, YN_SEQ, "arms"))
		return -1;
	if (!a->n || a->n > PROF_MAX_ARMS)
		return perr(x, a, 0, "arms: %zu arms (expected 1 to %d)", a->n, PROF_MAX_ARMS);
	for (i = 0; i < a->n; i++) {
		const struct ynode *m = a->v[i], *o, *mode;
		struct prof_arm *arm = &p->arm[i];
		char where[32];
		int k = 0;

		snprintf(where, sizeof(where), "arms[%zu]", i);
		if (want(x, m, YN_MAP, where) || keys_known(x, m, keys, where))
			return -1;
		mode = ytree_get(m, "mode", NULL);
		if (!mode)
			return perr(x, m, 0, "%s: missing key 'mode' (%s)", where, mlist);
		if (get_enum(x, m, "mode", where, modes, &k))
			return -1;
		if (!(wl->modes & (1u << k)))
			return perr(x, mode, 0, "%s.mode: %s: %s (expected rc; compare arms by "
				    "options, e.g. rc_timeout)", where, modes[k], wl->modes_why);
		snprintf(arm->mode, sizeof(arm->mode), "%s", modes[k]);
		snprintf(arm->name, sizeof(arm->name), "%s", modes[k]);
		if (get_str(x, m, "name", where, arm->name, sizeof(arm->name)))
			return -1;
		for (j = 0; j < i; j++)
			if (!strcmp(p->arm[j].name, arm->name))
				return perr(x, ytree_get(m, "name", NULL) ? ytree_get(m, "name", NULL) : m,
					    0, "%s: a second arm named '%s' (give each a name:)", where,
					    arm->name);
		arm->opts = json_object();
		o = ytree_get(m, "options", NULL);
		snprintf(where, sizeof(where), "arms[%zu].options", i);
		if (o && check_wopts(x, o, wl, where, arm->opts))
			return -1;
		p->narms = (int)i + 1;
	}
	return 0;
}

/* "all", "node1", or a list of node names: a bit mask */
static int check_nodes(struct pctx *x, const struct profile *p, const struct ynode *n,
		       const char *where, uint32_t *mask)
{
	size_t i, cnt = n->kind == YN_SEQ ? n->n : 1;

	*mask = 0;
	if (n->kind == YN_SCALAR && !strcmp(n->s, "all")) {
		*mask = (1u << p->nodes) - 1;
		return 0;
	}
	if (n->kind == YN_MAP)
		return perr(x, n, 0, "%s: expected all, a node name or a list of them", where);
	for (i = 0; i < cnt; i++) {
		const struct ynode *e = n->kind == YN_SEQ ? n->v[i] : n;
		unsigned int k;
		char tail;
		int h;

		if (p->nhosts && e->kind == YN_SCALAR) {	/* by the hosts' names */
			for (h = 0; h < p->nhosts && strcmp(p->host[h].name, e->s); h++)
				;
			if (h == p->nhosts)
				return perr(x, e, 0, "%s: '%s': not one of hosts.nodes", where, e->s);
			*mask |= 1u << h;
			continue;
		}
		if (e->kind != YN_SCALAR || sscanf(e->s, "node%u%c", &k, &tail) != 1)
			return perr(x, e, 0, "%s: '%s': expected all or node0..node%d", where,
				    e->kind == YN_SCALAR ? e->s : kind_name(e), p->nodes - 1);
		if ((int)k >= p->nodes)
			return perr(x, e, 0, "%s: node%u: the testbed has %d nodes (node0..node%d)",
				    where, k, p->nodes, p->nodes - 1);
		*mask |= 1u << k;
	}
	return 0;
}

static int check_faults(struct pctx *x, struct profile *p, const struct ynode *f)
{
	static const char *const keys[] = { "name", "rule", "nodes", "dir", "port", "start",
					    "duration", NULL };
	static const char *const dirs[] = { "ingress", "egress", NULL };
	static const char *const ports[] = { "nic", "switch", NULL };
	size_t i;

	if (want(x, f, YN_SEQ, "faults"))
		return -1;
	if (f->n > PROF_MAX_FAULTS)
		return perr(x, f, 0, "faults: %zu rules, at most %d", f->n, PROF_MAX_FAULTS);
	for (i = 0; i < f->n; i++) {
		const struct ynode *m = f->v[i], *rule, *nodes;
		struct prof_fault *pf = &p->fault[i];
		char where[32], buf[256], *argv[64], *tok, *save, e[256];
		struct inj_rule r;
		int argc = 0;

		snprintf(where, sizeof(where), "faults[%zu]", i);
		if (want(x, m, YN_MAP, where) || keys_known(x, m, keys, where))
			return -1;
		snprintf(pf->name, sizeof(pf->name), "fault%zu", i);
		if (get_str(x, m, "name", where, pf->name, sizeof(pf->name)) ||
		    get_enum(x, m, "dir", where, dirs, &pf->egress) ||
		    get_enum(x, m, "port", where, ports, &pf->sw) ||
		    get_num(x, m, "start", where, NUM_TIME, 0, 86400000000000ULL, "a time: 0s..24h",
			    &pf->start_ns) ||
		    get_num(x, m, "duration", where, NUM_TIME, 0, 86400000000000ULL,
			    "a time: 0s..24h (0: to the end)", &pf->duration_ns))
			return -1;
		rule = ytree_get(m, "rule", NULL);
		if (!rule)
			return perr(x, m, 0, "%s: missing key 'rule' (rdma-inject's: e.g. "
				    "\"opcode data drop 1%%\")", where);
		snprintf(buf, sizeof(buf), "%s.rule", where);
		if (want(x, rule, YN_SCALAR, buf))
			return -1;
		if (strlen(rule->s) >= sizeof(pf->rule))
			return perr(x, rule, 0, "%s.rule: too long", where);
		snprintf(pf->rule, sizeof(pf->rule), "%s", rule->s);
		if (strstr(pf->rule, " after ") || strstr(pf->rule, " for "))
			return perr(x, rule, 0, "%s.rule: give the window as start: and duration:, "
				    "not after/for", where);
		snprintf(buf, sizeof(buf), "%s", rule->s);
		for (tok = strtok_r(buf, " \t", &save); tok && argc < 63;
		     tok = strtok_r(NULL, " \t", &save))
			argv[argc++] = tok;
		argv[argc] = NULL;
		memset(&r, 0, sizeof(r));
		if (inj_rule_parse(&r, argc, argv, 0, e, sizeof(e)))
			return perr(x, rule, 0, "%s.rule: %s", where, e);
		pf->nodes = (1u << p->nodes) - 1;
		nodes = ytree_get(m, "nodes", NULL);
		snprintf(buf, sizeof(buf), "%s.nodes", where);
		if (nodes && check_nodes(x, p, nodes, buf, &pf->nodes))
			return -1;
		for (int h = 0; h < p->nhosts; h++)	/* hosts: the interface must be named */
			if ((pf->nodes & (1u << h)) && !(pf->sw ? p->host[h].sw : p->host[h].nic)[0])
				return perr(x, m, 0, "%s: host %s has no %s interface (hosts.nodes: %s:)",
					    where, p->host[h].name, pf->sw ? "switch" : "nic",
					    pf->sw ? "switch" : "nic");
		p->nfaults = (int)i + 1;
	}
	return 0;
}

static int check(struct pctx *x, struct profile *p, const struct ynode *root)
{
	static const char *const keys[] = { "version", "name", "description", "testbed", "hosts",
					    "workload", "arms", "run", "faults", "output", NULL };
	static const char *const wkeys[] = { "type", "options", NULL };
	static const char *const rkeys[] = { "iters", "rounds", "warmup", NULL };
	static const char *const okeys[] = { "dir", NULL };
	const char *types[16];
	const struct ynode *v, *w, *n;
	const struct wlc *wl;
	char tlist[96];
	uint64_t ver = 0;
	int t = 0, nt = 0;

	for (int i = 0; wlc_at(i) && nt < 15; i++)
		if (wlc_at(i)->in_profile)
			types[nt++] = wlc_at(i)->name;
	types[nt] = NULL;
	wlc_profile_names(tlist, sizeof(tlist));
	if (want(x, root, YN_MAP, "the profile") || keys_known(x, root, keys, "the profile"))
		return -1;
	v = ytree_get(root, "version", NULL);
	if (!v)
		return perr(x, root, 0, "missing key 'version' (this is version: 1)");
	if (get_num(x, root, "version", "profile", NUM_PLAIN, 1, 1, "1", &ver))
		return -1;
	if (get_str(x, root, "name", "profile", p->name, sizeof(p->name)) ||
	    get_str(x, root, "description", "profile", p->description, sizeof(p->description)))
		return -1;
	if ((n = ytree_get(root, "testbed", NULL)) && ytree_get(root, "hosts", NULL))
		return perr(x, ytree_get(root, "hosts", NULL), 0,
			    "hosts: a profile has a testbed: or hosts:, not both");
	if ((n = ytree_get(root, "testbed", NULL)) && check_testbed(x, p, n))
		return -1;
	if ((n = ytree_get(root, "hosts", NULL)) && check_hosts(x, p, n))
		return -1;
	w = ytree_get(root, "workload", NULL);
	if (!w)
		return perr(x, root, 0, "missing key 'workload' (type: %s, options: ...)", tlist);
	if (want(x, w, YN_MAP, "workload") || keys_known(x, w, wkeys, "workload"))
		return -1;
	if (!ytree_get(w, "type", NULL))
		return perr(x, w, 0, "workload: missing key 'type' (%s)", tlist);
	if (get_enum(x, w, "type", "workload", types, &t))
		return -1;
	snprintf(p->workload, sizeof(p->workload), "%s", types[t]);
	wl = wlc_find(types[t]);
	if ((n = ytree_get(w, "options", NULL)) && check_wopts(x, n, wl, "workload.options", p->wopts))
		return -1;
	n = ytree_get(root, "arms", NULL);
	if (!n)
		return perr(x, root, 0, "missing key 'arms' (a list: - mode: rc, - mode: lossy, ...)");
	if (check_arms(x, p, n, wl))
		return -1;
	if ((n = ytree_get(root, "run", NULL))) {
		if (want(x, n, YN_MAP, "run") || keys_known(x, n, rkeys, "run") ||
		    get_num(x, n, "iters", "run", NUM_PLAIN, 1, 1000000, "1..1000000", &p->iters) ||
		    get_num(x, n, "rounds", "run", NUM_PLAIN, 1, 1000, "1..1000", &p->rounds) ||
		    get_num(x, n, "warmup", "run", NUM_PLAIN, 0, 100000, "0..100000", &p->warmup))
			return -1;
		if (p->iters < p->rounds)
			return perr(x, n, 0, "run: iters %llu is fewer than rounds %llu",
				    (unsigned long long)p->iters, (unsigned long long)p->rounds);
	}
	if ((n = ytree_get(root, "faults", NULL)) && !ytree_is_null(n) && check_faults(x, p, n))
		return -1;
	if ((n = ytree_get(root, "output", NULL)) &&
	    (want(x, n, YN_MAP, "output") || keys_known(x, n, okeys, "output") ||
	     get_str(x, n, "dir", "output", p->outdir, sizeof(p->outdir))))
		return -1;
	return 0;
}

void profile_init(struct profile *p, const char *workload)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->backend, sizeof(p->backend), "auto");
	snprintf(p->workload, sizeof(p->workload), "%s", workload ? workload : "");
	snprintf(p->name, sizeof(p->name), "%s", workload ? workload : "");
	p->iters = 20;
	p->rounds = 1;
	p->warmup = 2;
	p->sets = json_array();
	p->wopts = json_object();
}

int profile_add_arm(struct profile *p, const char *name, const char *mode, json_t *opts)
{
	struct prof_arm *a = &p->arm[p->narms];

	if (p->narms == PROF_MAX_ARMS)
		return -E2BIG;
	snprintf(a->name, sizeof(a->name), "%s", name);
	snprintf(a->mode, sizeof(a->mode), "%s", mode);
	a->opts = opts ? opts : json_object();
	p->narms++;
	return 0;
}

void profile_free(struct profile *p)
{
	int i;

	for (i = 0; i < PROF_MAX_ARMS; i++)
		json_decref(p->arm[i].opts);
	json_decref(p->wopts);
	json_decref(p->sets);
	free(p->text);
	memset(p, 0, sizeof(*p));
}

int profile_load(struct profile *p, const char *file, const char *const *sets, int nsets, char *err,
		 size_t errlen)
{
	struct pctx x = { err, errlen };
	struct ynode *root = NULL;
	FILE *f;
	long len = 0;
	int i, r = -1;
	const char *base;

	profile_init(p, NULL);
	snprintf(p->file, sizeof(p->file), "%s", file);
	p->nodes = 3;
	p->mtu = 1024;
	base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	snprintf(p->name, sizeof(p->name), "%.*s", (int)strcspn(base, "."), base);
	f = fopen(file, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    len > (1 << 20) || !(p->text = calloc(1, (size_t)len + 1)) ||
	    fread(p->text, 1, (size_t)len, f) != (size_t)len) {
		snprintf(err, errlen, "%s: %s", file,
			 len > (1 << 20) ? "larger than 1 MiB: not a profile" : "cannot read it");
		fclose(f);
		return -1;
	}
	fclose(f);
	if (ytree_parse(file, p->text, (size_t)len, &root, err, errlen))
		return -1;
	for (i = 0; i < nsets; i++) {
		if (ytree_set(&root, sets[i], "--set", err, errlen))
			goto out;
		json_array_append_new(p->sets, json_string(sets[i]));
	}
	r = check(&x, p, root);
out:
	ytree_free(root);
	return r;
}

json_t *profile_to_json(const struct profile *p)
{
	json_t *arms = json_array(), *faults = json_array();
	int i;

	for (i = 0; i < p->narms; i++)
		json_array_append_new(arms, json_pack("{s:s,s:s,s:O}", "name", p->arm[i].name, "mode",
						      p->arm[i].mode, "options", p->arm[i].opts));
	for (i = 0; i < p->nfaults; i++) {
		const struct prof_fault *f = &p->fault[i];

		json_array_append_new(faults,
				      json_pack("{s:s,s:s,s:I,s:s,s:s,s:I,s:I}", "name", f->name, "rule",
						f->rule, "nodes_mask", (json_int_t)f->nodes, "dir",
						f->egress ? "egress" : "ingress", "port",
						f->sw ? "switch" : "nic", "start_ns",
						(json_int_t)f->start_ns, "duration_ns",
						(json_int_t)f->duration_ns));
	}
	json_t *hosts = json_array();

	for (i = 0; i < p->nhosts; i++)
		json_array_append_new(hosts, json_pack("{s:s,s:s,s:i,s:s,s:s}", "name", p->host[i].name,
						       "addr", p->host[i].addr, "port",
						       p->host[i].port, "nic", p->host[i].nic,
						       "switch", p->host[i].sw));
	return json_pack("{s:s,s:s,s:s,s:{s:s,s:i,s:i},s:o,s:{s:s,s:O},s:o,s:{s:I,s:I,s:I},s:o,s:O,s:s}",
			 "file", p->file, "name", p->name, "description", p->description, "testbed",
			 "backend", p->backend, "nodes", p->nodes, "mtu", p->mtu, "hosts", hosts,
			 "workload", "type",
			 p->workload, "options", p->wopts, "arms", arms, "run", "iters",
			 (json_int_t)p->iters, "rounds", (json_int_t)p->rounds, "warmup",
			 (json_int_t)p->warmup, "faults", faults, "sets", p->sets, "text",
			 p->text ? p->text : "");
}
