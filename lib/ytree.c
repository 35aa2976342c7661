// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "ytree.h"

static struct ynode *node_new(enum ynode_kind kind, const char *file, int line, int col)
{
	struct ynode *n = calloc(1, sizeof(*n));

	if (n) {
		n->kind = kind;
		n->file = file;
		n->line = line;
		n->col = col;
	}
	return n;
}

void ytree_free(struct ynode *n)
{
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n->n; i++) {
		ytree_free(n->v[i]);
		if (n->k)
			free(n->k[i]);
	}
	free(n->v);
	free(n->k);
	free(n->kline);
	free(n->kcol);
	free(n->s);
	free(n);
}

static int grow(struct ynode *n)
{
	size_t m = n->n + 1;
	struct ynode **v = realloc(n->v, m * sizeof(*v));

	if (!v)
		return -1;
	n->v = v;
	if (n->kind == YN_MAP) {
		char **k = realloc(n->k, m * sizeof(*k));
		int *kl, *kc;

		if (!k)
			return -1;
		n->k = k;
		kl = realloc(n->kline, m * sizeof(*kl));
		if (!kl)
			return -1;
		n->kline = kl;
		kc = realloc(n->kcol, m * sizeof(*kc));
		if (!kc)
			return -1;
		n->kcol = kc;
	}
	return 0;
}

struct ynode *ytree_get(const struct ynode *map, const char *key, size_t *idx)
{
	size_t i;

	if (!map || map->kind != YN_MAP)
		return NULL;
	for (i = 0; i < map->n; i++)
		if (!strcmp(map->k[i], key)) {
			if (idx)
				*idx = i;
			return map->v[i];
		}
	return NULL;
}

int ytree_is_null(const struct ynode *n)
{
	return n && n->kind == YN_SCALAR && n->plain &&
	       (!*n->s || !strcmp(n->s, "~") || !strcmp(n->s, "null") || !strcmp(n->s, "Null") ||
		!strcmp(n->s, "NULL"));
}

/* a tree being built from libyaml's events: a stack of open collections;
 * in a map, a scalar alternates key and value (keys must be scalars here) */
struct ybuild {
	const char *file;
	char *err;
	size_t errlen;
	struct ynode *stack[64], *doc;
	char *pending_key[64];
	int pk_line[64], pk_col[64], depth, docs;
};

__attribute__((format(printf, 4, 5))) static int yfail(struct ybuild *b, int line, int col,
						      const char *fmt, ...)
{
	int o = snprintf(b->err, b->errlen, "%s:%d:%d: ", b->file, line, col);
	va_list ap;

	if (o >= 0 && (size_t)o < b->errlen) {
		va_start(ap, fmt);
		vsnprintf(b->err + o, b->errlen - (size_t)o, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* the parser's own complaint, with where the unclosed construct began as
 * well as where the parser noticed (often the end of the file) */
static int yparse_err(struct ybuild *b, const yaml_parser_t *p)
{
	int l = (int)p->problem_mark.line + 1, c = (int)p->problem_mark.column + 1;
	const char *what = p->problem ? p->problem : "bad YAML";

	if (p->context && (p->context_mark.line != p->problem_mark.line ||
			   p->context_mark.column != p->problem_mark.column))
		return yfail(b, l, c, "%s %s that began at %d:%d", what, p->context,
			     (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
	if (p->context)
		return yfail(b, l, c, "%s %s", what, p->context);
	return yfail(b, l, c, "%s", what);
}

/* a key of the open map cur, kept until its value comes */
static int ykey(struct ybuild *b, struct ynode *cur, const yaml_event_t *ev, int line, int col)
{
	size_t i;

	if (ev->type != YAML_SCALAR_EVENT)
		return yfail(b, line, col, "a mapping key must be a plain name");
	/* each key is checked against the others: a bound keeps that quick
	 * (100k keys took 20 s) */
	if (cur->n >= YTREE_MAX_KEYS)
		return yfail(b, line, col, "more than %d keys in one mapping", YTREE_MAX_KEYS);
	if (ytree_get(cur, (const char *)ev->data.scalar.value, &i))
		return yfail(b, line, col, "duplicate key '%.63s' (first at line %d)",
			     (const char *)ev->data.scalar.value, cur->kline[i]);
	b->pending_key[b->depth - 1] = strdup((const char *)ev->data.scalar.value);
	b->pk_line[b->depth - 1] = line;
	b->pk_col[b->depth - 1] = col;
	return 0;
}

/* a scalar or a collection's start: a key of the open map, or a node of
 * the open collection (or the document); a collection is opened */
static int yvalue(struct ybuild *b, const yaml_event_t *ev, int line, int col)
{
	struct ynode *cur = b->depth ? b->stack[b->depth - 1] : NULL, *n;
	int d = b->depth - 1;

	if (ev->type == YAML_SCALAR_EVENT && ev->data.scalar.anchor)
		return yfail(b, line, col, "anchors (&name) are not supported in profiles");
	if (cur && cur->kind == YN_MAP && !b->pending_key[d])
		return ykey(b, cur, ev, line, col);
	n = node_new(ev->type == YAML_SCALAR_EVENT ? YN_SCALAR :
		     ev->type == YAML_MAPPING_START_EVENT ? YN_MAP : YN_SEQ, b->file, line, col);
	if (!n)
		return yfail(b, line, col, "out of memory");
	if (ev->type == YAML_SCALAR_EVENT) {
		n->s = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	}
	if (!cur) {
		b->doc = n;
	} else if (grow(cur)) {
		ytree_free(n);
		return yfail(b, line, col, "out of memory");
	} else {
		cur->v[cur->n] = n;
		if (cur->kind == YN_MAP) {
			cur->k[cur->n] = b->pending_key[d];
			cur->kline[cur->n] = b->pk_line[d];
			cur->kcol[cur->n] = b->pk_col[d];
			b->pending_key[d] = NULL;
		}
		cur->n++;
	}
	if (ev->type != YAML_SCALAR_EVENT) {
		if (b->depth == 64)
			return yfail(b, line, col, "nested too deep");
		b->stack[b->depth++] = n;
	}
	return 0;
}

/* one event into the tree: 0, 1 at the stream's end, -1 with b->err */
static int yevent(struct ybuild *b, const yaml_event_t *ev)
{
	int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;

	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		return 1;
	case YAML_DOCUMENT_START_EVENT:
		return b->docs++ ? yfail(b, line, col, "a second YAML document: one profile per file") :
				   0;
	case YAML_ALIAS_EVENT:
		return yfail(b, line, col, "aliases (*name) are not supported in profiles");
	case YAML_SCALAR_EVENT:
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT:
		return yvalue(b, ev, line, col);
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		b->depth--;
		return 0;
	default:
		return 0;
	}
}

int ytree_parse(const char *file, const char *buf, size_t len, struct ynode **root, char *err,
		size_t errlen)
{
	struct ybuild b = { .file = file, .err = err, .errlen = errlen };
	yaml_parser_t p;
	yaml_event_t ev;
	int r = 0;
	size_t i;

	*root = NULL;
	if (!yaml_parser_initialize(&p)) {
		snprintf(err, errlen, "%s: libyaml: out of memory", file);
		return -1;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!r) {
		if (!yaml_parser_parse(&p, &ev)) {
			r = yparse_err(&b, &p);
			break;
		}
		r = yevent(&b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	for (i = 0; i < 64; i++)
		free(b.pending_key[i]);
	if (r < 0) {
		ytree_free(b.doc);
		return -1;
	}
	if (!b.doc) {
		snprintf(err, errlen, "%s:1:1: empty file: expected a profile (version: 1, ...)", file);
		return -1;
	}
	*root = b.doc;
	return 0;
}

int ytree_set(struct ynode **root, const char *assignment, const char *origin, char *err,
	      size_t errlen)
{
	char path[512], *val, *tok, *save, *next;
	struct ynode *cur, *n;

	snprintf(path, sizeof(path), "%s", assignment);
	val = strchr(path, '=');
	if (!val || val == path) {
		snprintf(err, errlen, "%s: expected key.path=value", origin);
		return -1;
	}
	*val++ = 0;
	if (!*root && !(*root = node_new(YN_MAP, origin, 1, 1)))
		return -1;
	cur = *root;
	for (tok = strtok_r(path, ".", &save); tok; tok = next) {
		size_t i;
		char *end;

		next = strtok_r(NULL, ".", &save);
		if (cur->kind == YN_SEQ) {
			unsigned long k = strtoul(tok, &end, 10);

			if (*end || k >= cur->n) {
				snprintf(err, errlen, "%s:1:1: '%s': no item %s (the list has %zu)", origin,
					 assignment, tok, cur->n);
				return -1;
			}
			n = cur->v[k];
		} else if (cur->kind == YN_MAP) {
			n = ytree_get(cur, tok, &i);
			if (!n) {
				if (!(n = node_new(next ? YN_MAP : YN_SCALAR, origin, 1, 1)) || grow(cur)) {
					ytree_free(n);
					return -1;
				}
				n->s = next ? NULL : strdup("");
				n->plain = 1;
				cur->v[cur->n] = n;
				cur->k[cur->n] = strdup(tok);
				cur->kline[cur->n] = 0;	/* 0: made by --set */
				cur->kcol[cur->n] = 1;
				cur->n++;
			}
		} else {
			snprintf(err, errlen, "%s:1:1: '%s': '%s' is inside a value, not a mapping",
				 origin, assignment, tok);
			return -1;
		}
		if (!next) {
			/* replace whatever was there by the scalar */
			size_t j;

			for (j = 0; j < n->n; j++) {
				ytree_free(n->v[j]);
				if (n->k)
					free(n->k[j]);
			}
			free(n->v);
			free(n->k);
			free(n->kline);
			free(n->kcol);
			free(n->s);
			n->v = NULL;
			n->k = NULL;
			n->kline = n->kcol = NULL;
			n->n = 0;
			n->kind = YN_SCALAR;
			n->s = strdup(val);
			n->plain = 1;
			n->file = origin;
			n->line = 1;
			n->col = (int)(val - path) + 1;
			return n->s ? 0 : -1;
		}
		cur = n;
	}
	return 0;
}
