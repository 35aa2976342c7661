// SPDX-License-Identifier: MIT
#include <errno.h>
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

#define FAIL(line, col, ...)                                                                       \
	do {                                                                                       \
		int o_ = snprintf(err, errlen, "%s:%d:%d: ", file, (line), (col));                 \
		if (o_ >= 0 && (size_t)o_ < errlen)                                                \
			snprintf(err + o_, errlen - (size_t)o_, __VA_ARGS__);                       \
		goto fail;                                                                         \
	} while (0)

/*
 * Events to tree. A stack of open collections; in a map, a scalar alternates
 * key and value (keys must be scalars here). One state machine over
 * libyaml's events, one case per event: longer than 100 lines on purpose,
 * so that the whole of it reads in one place.
 */
int ytree_parse(const char *file, const char *buf, size_t len, struct ynode **root, char *err,
		size_t errlen)
{
	struct ynode *stack[64], *doc = NULL, *cur;
	char *pending_key[64] = { NULL };
	int pk_line[64], pk_col[64], depth = 0, done = 0, docs = 0;
	yaml_parser_t p;
	yaml_event_t ev;
	size_t i;

	*root = NULL;
	if (!yaml_parser_initialize(&p)) {
		snprintf(err, errlen, "%s: libyaml: out of memory", file);
		return -1;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done) {
		int line, col;

		if (!yaml_parser_parse(&p, &ev)) {
			int l = (int)p.problem_mark.line + 1, c = (int)p.problem_mark.column + 1;

			/* where the unclosed construct began, as well as where the
			 * parser noticed (often the end of the file) */
			if (p.context && (p.context_mark.line != p.problem_mark.line ||
					  p.context_mark.column != p.problem_mark.column))
				FAIL(l, c, "%s %s that began at %d:%d",
				     p.problem ? p.problem : "bad YAML", p.context,
				     (int)p.context_mark.line + 1, (int)p.context_mark.column + 1);
			if (p.context)
				FAIL(l, c, "%s %s", p.problem ? p.problem : "bad YAML", p.context);
			FAIL(l, c, "%s", p.problem ? p.problem : "bad YAML");
		}
		line = (int)ev.start_mark.line + 1;
		col = (int)ev.start_mark.column + 1;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (docs++) {
				yaml_event_delete(&ev);
				FAIL(line, col, "a second YAML document: one profile per file");
			}
			break;
		case YAML_ALIAS_EVENT:
			yaml_event_delete(&ev);
			FAIL(line, col, "aliases (*name) are not supported in profiles");
		case YAML_SCALAR_EVENT:
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT: {
			struct ynode *n;

			if (ev.type == YAML_SCALAR_EVENT && ev.data.scalar.anchor) {
				yaml_event_delete(&ev);
				FAIL(line, col, "anchors (&name) are not supported in profiles");
			}
			cur = depth ? stack[depth - 1] : NULL;
			if (cur && cur->kind == YN_MAP && !pending_key[depth - 1]) {
				/* a key */
				if (ev.type != YAML_SCALAR_EVENT) {
					yaml_event_delete(&ev);
					FAIL(line, col, "a mapping key must be a plain name");
				}
				/* each key is checked against the others: a bound keeps
				 * that quick (100k keys took 20 s) */
				if (cur->n >= YTREE_MAX_KEYS) {
					yaml_event_delete(&ev);
					FAIL(line, col, "more than %d keys in one mapping", YTREE_MAX_KEYS);
				}
				if (ytree_get(cur, (const char *)ev.data.scalar.value, &i)) {
					char k[64];

					snprintf(k, sizeof(k), "%s", (const char *)ev.data.scalar.value);
					yaml_event_delete(&ev);
					FAIL(line, col, "duplicate key '%s' (first at line %d)", k,
					     cur->kline[i]);
				}
				pending_key[depth - 1] = strdup((const char *)ev.data.scalar.value);
				pk_line[depth - 1] = line;
				pk_col[depth - 1] = col;
				break;
			}
			n = node_new(ev.type == YAML_SCALAR_EVENT ? YN_SCALAR :
				     ev.type == YAML_MAPPING_START_EVENT ? YN_MAP : YN_SEQ, file, line, col);
			if (!n) {
				yaml_event_delete(&ev);
				FAIL(line, col, "out of memory");
			}
			if (ev.type == YAML_SCALAR_EVENT) {
				n->s = strndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
				n->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			}
			if (!cur) {
				doc = n;
			} else if (grow(cur)) {
				ytree_free(n);
				yaml_event_delete(&ev);
				FAIL(line, col, "out of memory");
			} else {
				cur->v[cur->n] = n;
				if (cur->kind == YN_MAP) {
					cur->k[cur->n] = pending_key[depth - 1];
					cur->kline[cur->n] = pk_line[depth - 1];
					cur->kcol[cur->n] = pk_col[depth - 1];
					pending_key[depth - 1] = NULL;
				}
				cur->n++;
			}
			if (ev.type != YAML_SCALAR_EVENT) {
				if (depth == 64) {
					yaml_event_delete(&ev);
					FAIL(line, col, "nested too deep");
				}
				stack[depth++] = n;
			}
			break;
		}
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			depth--;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	if (!doc) {
		snprintf(err, errlen, "%s:1:1: empty file: expected a profile (version: 1, ...)", file);
		return -1;
	}
	*root = doc;
	return 0;
fail:
	for (i = 0; i < 64; i++)
		free(pending_key[i]);
	yaml_parser_delete(&p);
	ytree_free(doc);
	return -1;
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
