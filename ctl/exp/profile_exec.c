// SPDX-License-Identifier: MIT
/*
 * An exec workload's part of a profile (profiles/README.md, "Your own
 * programs"): the roles, the variables and environment, the arms as
 * variants of them. Every placeholder is checked here, for every arm,
 * with the column of the bad one where the command is on one line.
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include "ctl/exp/check.h"
#include "lib/execenv.h"
#include "ctl/exp/tpl.h"
#include "ctl/wl/tool.h"

#define DEFAULT_TIMEOUT_NS 60000000000ULL

/* a map of NAME: scalar into dst (strings); names as the shell's */
static int check_strmap(struct pctx *x, const struct ynode *m, const char *where, json_t *dst,
			int shell_names)
{
	char what[96];
	size_t i;

	if (prof_want(x, m, YN_MAP, where))
		return -EINVAL;
	for (i = 0; i < m->n; i++) {
		const char *k = m->k[i];
		size_t n = strlen(k);

		if (!n || n > EXECENV_NAME_MAX || (!(k[0] >= 'A' && k[0] <= 'Z') && !(k[0] >= 'a' && k[0] <= 'z') &&
				     k[0] != '_') ||
		    strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != n)
			return prof_perr_key(x, m, i, "%s: '%.64s': expected a name of letters, digits "
					     "and _ (not first a digit)", where, k);
		if (!shell_names && (!strcmp(k, "arm") || !strcmp(k, "round")))
			return prof_perr_key(x, m, i, "%s: '%s' is set by rdmactl ({%s})", where, k, k);
		snprintf(what, sizeof(what), "%s.%s", where, k);
		if (prof_want(x, m->v[i], YN_SCALAR, what))
			return -EINVAL;
		if (strlen(m->v[i]->s) > EXECENV_VALUE_MAX)
			return prof_perr(x, m->v[i], 0, "%s: longer than %d characters", what,
					 EXECENV_VALUE_MAX);
		json_object_set_new(dst, k, json_string(m->v[i]->s));
	}
	return 0;
}

static int check_ready(struct pctx *x, struct prof_role *r, const struct ynode *m,
		       const char *where)
{
	static const char *const keys[] = { "port", "line", "after", "timeout", NULL };
	const struct ynode *v;
	uint64_t n = 0;
	int kinds = 0;
	regex_t re;
	int rc;

	if (prof_want(x, m, YN_MAP, where) || prof_keys_known(x, m, keys, where))
		return -EINVAL;
	if (prof_get_num(x, m, "port", where, NUM_PLAIN, 1, 65535, "a TCP port: 1..65535", &n))
		return -EINVAL;
	if (ytree_get(m, "port", NULL)) {
		r->ready = PR_PORT;
		r->ready_port = (int)n;
		kinds++;
	}
	if ((v = ytree_get(m, "line", NULL))) {
		char buf[160], what[96];

		snprintf(what, sizeof(what), "%s.line", where);
		if (prof_want(x, v, YN_SCALAR, what))
			return -EINVAL;
		if (!v->s[0] || strlen(v->s) >= sizeof(r->ready_line))
			return prof_perr(x, v, 0, "%s: expected a regular expression of 1 to %zu "
					 "characters", what, sizeof(r->ready_line) - 1);
		rc = regcomp(&re, v->s, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			regerror(rc, &re, buf, sizeof(buf));
			regfree(&re);
			return prof_perr(x, v, 0, "%s: '%s': %s (a POSIX extended regular expression)",
					 what, v->s, buf);
		}
		regfree(&re);
		snprintf(r->ready_line, sizeof(r->ready_line), "%s", v->s);
		r->ready = PR_LINE;
		kinds++;
	}
	if (ytree_get(m, "after", NULL)) {
		if (prof_get_num(x, m, "after", where, NUM_TIME, 1, 3600000000000ULL, "a time: 1ns..1h",
				 &r->ready_after_ns))
			return -EINVAL;
		r->ready = PR_AFTER;
		kinds++;
	}
	if (kinds != 1)
		return prof_perr(x, m, 0, "%s: expected one of port: (a TCP port listening on the "
				 "role's node), line: (a regular expression its output matches) or "
				 "after: (a time)", where);
	r->ready_timeout_ns = r->timeout_ns;
	return prof_get_num(x, m, "timeout", where, NUM_TIME, 1000000, 86400000000000ULL,
			    "a time: 1ms..24h", &r->ready_timeout_ns);
}

static int check_role(struct pctx *x, struct profile *p, const struct ynode *m, size_t i)
{
	static const char *const keys[] = { "name", "nodes", "cmd", "env", "ready", "timeout",
					    "service", "parse", "on_timeout", NULL };
	static const char *const yesno[] = { "false", "true", NULL };
	static const char *const on_timeout[] = { "auto", "reboot", "keep", NULL };
	struct prof_role *r = &p->role[i];
	const struct ynode *n;
	char where[48], what[64];
	size_t j;

	snprintf(where, sizeof(where), "workload.roles[%zu]", i);
	if (prof_want(x, m, YN_MAP, where) || prof_keys_known(x, m, keys, where))
		return -EINVAL;
	snprintf(r->name, sizeof(r->name), "role%zu", i);
	if (prof_get_name(x, m, where, r->name, sizeof(r->name)))
		return -EINVAL;
	for (j = 0; j < i; j++)
		if (!strcmp(p->role[j].name, r->name))
			return prof_perr(x, ytree_get(m, "name", NULL) ?: m, 0,
					 "%s: a second role named '%s'", where, r->name);
	if (!strcmp(r->name, "all") || !strcmp(r->name, "self") || !strcmp(r->name, "arm") ||
	    !strcmp(r->name, "round") || (!strncmp(r->name, "node", 4) && r->name[4] &&
					  strspn(r->name + 4, "0123456789") == strlen(r->name + 4)))
		return prof_perr(x, ytree_get(m, "name", NULL) ?: m, 0,
				 "%s: '%s' names something else already (all, self, arm, round, "
				 "nodeN): give the role another name", where, r->name);
	if (!(n = ytree_get(m, "nodes", NULL)))
		return prof_perr(x, m, 0, "%s: missing key 'nodes' (node0, [node0, node1] or all: "
				 "where its command runs)", where);
	snprintf(what, sizeof(what), "%s.nodes", where);
	if (prof_check_nodes(x, p, n, what, &r->nodes))
		return -EINVAL;
	if (!(n = ytree_get(m, "cmd", NULL)))
		return prof_perr(x, m, 0, "%s: missing key 'cmd' (the command, run by sh -c on each "
				 "of its nodes)", where);
	snprintf(what, sizeof(what), "%s.cmd", where);
	if (prof_want(x, n, YN_SCALAR, what))
		return -EINVAL;
	if (!n->s[0] || strlen(n->s) >= sizeof(r->cmd))
		return prof_perr(x, n, 0, "%s: expected a command of 1 to %zu characters", what,
				 sizeof(r->cmd) - 1);
	snprintf(r->cmd, sizeof(r->cmd), "%s", n->s);
	r->timeout_ns = DEFAULT_TIMEOUT_NS;
	if (prof_get_num(x, m, "timeout", where, NUM_TIME, 1000000, 86400000000000ULL,
			 "a time: 1ms..24h", &r->timeout_ns) ||
	    prof_get_enum(x, m, "service", where, yesno, &r->service) ||
	    prof_get_enum(x, m, "on_timeout", where, on_timeout, &r->on_timeout))
		return -EINVAL;
	r->env = json_object();
	snprintf(what, sizeof(what), "%s.env", where);
	if ((n = ytree_get(m, "env", NULL)) && check_strmap(x, n, what, r->env, 1))
		return -EINVAL;
	snprintf(what, sizeof(what), "%s.ready", where);
	if ((n = ytree_get(m, "ready", NULL)) && check_ready(x, r, n, what))
		return -EINVAL;
	snprintf(what, sizeof(what), "%s.parse", where);
	if ((n = ytree_get(m, "parse", NULL))) {
		int k;

		if (prof_want(x, n, YN_SCALAR, what))
			return -EINVAL;
		k = tool_by_name(n->s);
		if (k < 0)
			return prof_perr(x, n, 0, "%s: '%s': no parser of that name (one of: %s)",
					 what, n->s, tool_names());
		r->parse = k;
	}
	return 0;
}

/* the variables a command of role r gets in arm a: the facts, then the
 * workload's, the role's and the arm's env (a name in several counts once) */
static int env_count(const struct profile *p, int a, int r)
{
	const json_t *maps[] = { json_object_get(p->wopts, "env"), p->role[r].env,
				 json_object_get(p->arm[a].opts, "env") };
	json_t *all = json_object();
	const char *k;
	json_t *v;
	int n;

	for (int i = 0; i < 3; i++)
		json_object_foreach((json_t *)maps[i], k, v)
			json_object_set(all, k, v);
	n = EXECENV_FACTS(p->nodes) + (int)json_object_size(all);
	json_decref(all);
	return n;
}

/* one text (a command, an environment value) for one arm: its
 * placeholders known. The error points at the bad one where it can */
static int check_text(struct pctx *x, const struct profile *p, const struct ynode *n,
		      const char *where, const struct tpl_ctx *c)
{
	static char out[8192];
	char msg[256];
	size_t off = 0;

	if (!tpl_expand(n->s, c, out, sizeof(out), &off, msg, sizeof(msg)))
		return 0;
	{
		struct ynode at = *n;

		if (!strchr(n->s, '\n'))	/* the column of the placeholder */
			at.col += (int)off + !n->plain;
		return prof_perr(x, &at, 0, "%s: %s%s%s%s", where, msg, p->narms > 1 ? " (arm " : "",
				 p->narms > 1 ? c->arm : "", p->narms > 1 ? ")" : "");
	}
}

json_t *tpl_arm_ctx(const struct profile *p, int a, const char **roles, int *role_node,
		    struct tpl_ctx *c)
{
	json_t *vars = json_deep_copy(json_object_get(p->wopts, "vars"));
	int i;

	for (i = 0; i < p->nroles; i++) {
		roles[i] = p->role[i].name;
		role_node[i] = __builtin_ctz(p->role[i].nodes);
	}
	roles[i] = NULL;
	json_object_update(vars, json_object_get(p->arm[a].opts, "vars"));
	c->roles = roles;
	c->role_node = role_node;
	c->vars = vars;
	c->arm = p->arm[a].name;
	return vars;
}

/* every placeholder of every role for every arm (after check_arms) */
int prof_check_exec_texts(struct pctx *x, struct profile *p, const struct ynode *w)
{
	struct tpl_node nodes[32];
	const char *roles[PROF_MAX_ROLES + 1];
	int role_node[PROF_MAX_ROLES];
	const struct ynode *rl = ytree_get(w, "roles", NULL);
	int a, i, k;

	for (i = 0; i < p->nodes && i < 32; i++) {
		snprintf(nodes[i].name, sizeof(nodes[i].name), "node%d", i);
		snprintf(nodes[i].dev, sizeof(nodes[i].dev), "rxe%d", i);
		snprintf(nodes[i].ip, sizeof(nodes[i].ip), "198.18.0.%d", i + 1);
		nodes[i].gid_index = 1;
		nodes[i].port = 1;
	}
	for (a = 0; a < p->narms; a++) {
		struct tpl_ctx c = { .node = nodes, .nnodes = p->nodes, .round = 1 };
		json_t *vars = tpl_arm_ctx(p, a, roles, role_node, &c);

		for (i = 0; i < p->nroles; i++) {
			const struct ynode *m = rl->v[i], *env = ytree_get(m, "env", NULL), *wenv;
			char where[64];
			int nenv;

			c.self = role_node[i];
			/* every variable a command of this role gets in this arm, the facts
			 * first: the runner's limit, refused here rather than at run */
			nenv = env_count(p, a, i);
			if (nenv > EXECENV_MAX) {
				prof_perr(x, env ? env : ytree_get(w, "env", NULL) ?: m, 0,
					  "workload.roles[%d]: %d environment variables in arm %s "
					  "(%d facts of %d nodes and the workload's, role's and arm's "
					  "env): at most %d", i, nenv, p->arm[a].name,
					  EXECENV_FACTS(p->nodes), p->nodes, EXECENV_MAX);
				goto bad;
			}
			snprintf(where, sizeof(where), "workload.roles[%d].cmd", i);
			if (check_text(x, p, ytree_get(m, "cmd", NULL), where, &c))
				goto bad;
			for (k = 0; env && k < (int)env->n; k++) {
				snprintf(where, sizeof(where), "workload.roles[%d].env.%.20s", i, env->k[k]);
				if (check_text(x, p, env->v[k], where, &c))
					goto bad;
			}
			wenv = ytree_get(w, "env", NULL);
			for (k = 0; wenv && k < (int)wenv->n; k++) {
				snprintf(where, sizeof(where), "workload.env.%.20s", wenv->k[k]);
				if (check_text(x, p, wenv->v[k], where, &c))
					goto bad;
			}
		}
		json_decref(vars);
		continue;
bad:
		json_decref(vars);
		return -EINVAL;
	}
	return 0;
}

int prof_check_exec(struct pctx *x, struct profile *p, const struct ynode *w)
{
	const struct ynode *rl = ytree_get(w, "roles", NULL), *n;
	json_t *vars = json_object(), *env = json_object();
	size_t i;

	json_object_set_new(p->wopts, "vars", vars);
	json_object_set_new(p->wopts, "env", env);
	if ((n = ytree_get(w, "vars", NULL)) && check_strmap(x, n, "workload.vars", vars, 0))
		return -EINVAL;
	if ((n = ytree_get(w, "env", NULL)) && check_strmap(x, n, "workload.env", env, 1))
		return -EINVAL;
	if (!rl)
		return prof_perr(x, w, 0, "workload: missing key 'roles' (a list: - name: server, "
				 "nodes: node1, cmd: ...)");
	if (prof_want(x, rl, YN_SEQ, "workload.roles"))
		return -EINVAL;
	if (!rl->n || rl->n > PROF_MAX_ROLES)
		return prof_perr(x, rl, 0, "workload.roles: %zu roles (expected 1 to %d)", rl->n,
				 PROF_MAX_ROLES);
	for (i = 0; i < rl->n; i++) {
		p->nroles = (int)i + 1;	/* so that its env is freed whatever happens */
		if (check_role(x, p, rl->v[i], i))
			return -EINVAL;
	}
	for (i = 0; i < rl->n; i++)
		if (!p->role[i].service)
			return 0;
	return prof_perr(x, rl, 0, "workload.roles: every role is a service: which one ends the "
			 "run? (service: true is stopped once the others have ended)");
}

/* an exec arm: name, vars, env (no mode: the program chooses its transport) */
int prof_check_exec_arm(struct pctx *x, struct profile *p, const struct ynode *m, size_t i)
{
	static const char *const keys[] = { "name", "vars", "env", NULL };
	struct prof_arm *arm = &p->arm[i];
	const struct ynode *n;
	char where[32], what[48];

	snprintf(where, sizeof(where), "arms[%zu]", i);
	if (prof_want(x, m, YN_MAP, where))
		return -EINVAL;
	if ((n = ytree_get(m, "mode", NULL)))
		return prof_perr(x, n, 0, "%s.mode: an exec workload's program chooses its own "
				 "transport; its arms differ by vars: and env:", where);
	if (prof_keys_known(x, m, keys, where))
		return -EINVAL;
	snprintf(arm->mode, sizeof(arm->mode), "exec");
	snprintf(arm->name, sizeof(arm->name), "arm%zu", i);
	if (prof_get_name(x, m, where, arm->name, sizeof(arm->name)))
		return -EINVAL;
	for (int r = 0; r < p->nroles; r++)
		if (!strcmp(p->role[r].name, arm->name))
			return prof_perr(x, ytree_get(m, "name", NULL) ?: m, 0, "%s: '%s' is a role's "
					 "name: expectations could not tell them apart", where,
					 arm->name);
	arm->opts = json_pack("{s:{},s:{}}", "vars", "env");
	snprintf(what, sizeof(what), "%s.vars", where);
	if ((n = ytree_get(m, "vars", NULL)) &&
	    check_strmap(x, n, what, json_object_get(arm->opts, "vars"), 0))
		return -EINVAL;
	snprintf(what, sizeof(what), "%s.env", where);
	if ((n = ytree_get(m, "env", NULL)) &&
	    check_strmap(x, n, what, json_object_get(arm->opts, "env"), 1))
		return -EINVAL;
	return 0;
}
