// SPDX-License-Identifier: MIT
/*
 * The profile checker's helpers (check.h): typed reads of the YAML tree
 * with file:line:col errors and "did you mean".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "ctl/exp/check.h"
#include "lib/word.h"
#include "lib/opt.h"

__attribute__((format(printf, 4, 5))) int prof_perr(struct pctx *x, const struct ynode *n,
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
	return -EINVAL;
}

/* an error at key i of map m */
__attribute__((format(printf, 4, 5))) int prof_perr_key(struct pctx *x, const struct ynode *m,
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
	return -EINVAL;
}

const char *prof_kind_name(const struct ynode *n)
{
	return n->kind == YN_MAP ? "a mapping" : n->kind == YN_SEQ ? "a list" : "a scalar";
}

int prof_want(struct pctx *x, const struct ynode *n, enum ynode_kind k, const char *what)
{
	static const char *const names[] = { "a value", "a mapping (key: value lines)",
					     "a list (- item lines)" };

	if (n->kind == k && !(k == YN_SCALAR && ytree_is_null(n)))
		return 0;
	return prof_perr(x, n, 0, "%s: expected %s, found %s", what, names[k],
		    ytree_is_null(n) ? "nothing" : prof_kind_name(n));
}

/* every key of map m is one of allowed[] */
int prof_keys_known(struct pctx *x, const struct ynode *m, const char *const *allowed,
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
			return prof_perr_key(x, m, i, "unknown key '%s' in %s (did you mean '%s'?)", m->k[i],
					where, s);
		{
			char list[256] = "";

			for (j = 0; allowed[j]; j++) {
				size_t l = strlen(list);

				snprintf(list + l, sizeof(list) - l, "%s%s", j ? ", " : "", allowed[j]);
			}
			return prof_perr_key(x, m, i, "unknown key '%s' in %s (expected one of: %s)",
					m->k[i], where, list);
		}
	}
	return 0;
}

/* the scalar at key of map m: 0 and *n = NULL when absent, -EINVAL (error
 * reported) when not a scalar; what = "where.key" for messages */
int prof_scalar_at(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		     char *what, size_t wlen, const struct ynode **n)
{
	*n = ytree_get(m, key, NULL);
	snprintf(what, wlen, "%s.%s", where, key);
	return *n && prof_want(x, *n, YN_SCALAR, what) ? -EINVAL : 0;
}

int prof_get_str(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		   char *buf, size_t len)
{
	const struct ynode *n;
	char what[96];

	if (prof_scalar_at(x, m, key, where, what, sizeof(what), &n) || !n)
		return n ? -EINVAL : 0;
	if (strlen(n->s) >= len)
		return prof_perr(x, n, 0, "%s: longer than %zu characters", what, len - 1);
	snprintf(buf, len, "%s", n->s);
	return 0;
}

int prof_name_ok(const char *s)
{
	return word_name_ok(s, 0);
}

int prof_get_name(struct pctx *x, const struct ynode *m, const char *where, char *buf, size_t len)
{
	const struct ynode *n = ytree_get(m, "name", NULL);

	if (prof_get_str(x, m, "name", where, buf, len))
		return -EINVAL;
	if (n && !prof_name_ok(buf))
		return prof_perr(x, n, 0, "%s.name: '%s': expected letters, digits, '.', '_' and '-', "
			    "not first '.' or '-' (it names files of the run and labels in report.html)",
			    where, buf);
	return 0;
}

int prof_get_enum(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		    const char *const *kw, int *out)
{
	const struct ynode *n;
	char what[96], list[128] = "";
	const char *s;
	int j;

	if (prof_scalar_at(x, m, key, where, what, sizeof(what), &n) || !n)
		return n ? -EINVAL : 0;
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
		return prof_perr(x, n, 0, "%s: unknown value '%s' (did you mean '%s'?)", what, n->s, s);
	return prof_perr(x, n, 0, "%s: unknown value '%s' (expected %s)", what, n->s, list);
}

int prof_get_num(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		   enum num_kind kind, uint64_t min, uint64_t max, const char *range, uint64_t *out)
{
	const struct ynode *n;
	const char *why;
	char what[96];

	if (prof_scalar_at(x, m, key, where, what, sizeof(what), &n) || !n)
		return n ? -EINVAL : 0;
	if (num_parse(n->s, kind, min, max, out, &why))
		return prof_perr(x, n, 0, "%s: '%s': %s (expected %s)", what, n->s, why, range);
	return 0;
}

/* "all", "node1", or a list of node names: a bit mask */
int prof_check_nodes(struct pctx *x, const struct profile *p, const struct ynode *n,
		       const char *where, uint32_t *mask)
{
	size_t i, cnt = n->kind == YN_SEQ ? n->n : 1;

	*mask = 0;
	if (n->kind == YN_SCALAR && !strcmp(n->s, "all")) {
		*mask = (1u << p->nodes) - 1;
		return 0;
	}
	if (n->kind == YN_MAP)
		return prof_perr(x, n, 0, "%s: expected all, a node name or a list of them", where);
	for (i = 0; i < cnt; i++) {
		const struct ynode *e = n->kind == YN_SEQ ? n->v[i] : n;
		unsigned int k;
		int h;

		if (p->nhosts && e->kind == YN_SCALAR) {	/* by the hosts' names */
			for (h = 0; h < p->nhosts && strcmp(p->host[h].name, e->s); h++)
				;
			if (h == p->nhosts)
				return prof_perr(x, e, 0, "%s: '%s': not one of hosts.nodes", where, e->s);
			*mask |= 1u << h;
			continue;
		}
		/* node, then 1..3 digits and nothing else: no sign, no space, no
		 * wrap-around (node-1 once read as node4294967295) */
		if (e->kind != YN_SCALAR || strncmp(e->s, "node", 4) || !e->s[4] ||
		    strspn(e->s + 4, "0123456789") != strlen(e->s + 4) || strlen(e->s + 4) > 3)
			return prof_perr(x, e, 0, "%s: '%s': expected all or node0..node%d", where,
				    e->kind == YN_SCALAR ? e->s : prof_kind_name(e), p->nodes - 1);
		k = (unsigned int)atoi(e->s + 4);
		if ((int)k >= p->nodes)
			return prof_perr(x, e, 0, "%s: node%u: the testbed has %d nodes (node0..node%d)",
				    where, k, p->nodes, p->nodes - 1);
		*mask |= 1u << k;
	}
	return 0;
}
