/* SPDX-License-Identifier: MIT */
/*
 * A YAML document as a tree that remembers where everything was: every
 * node and every mapping key carries its line and column (1-based), so a
 * checker can say `file:line:col: what was expected`. Parsed with libyaml;
 * one document, no anchors or aliases, no duplicate keys.
 */
#ifndef RTB_YTREE_H
#define RTB_YTREE_H

#include <stddef.h>

enum ynode_kind { YN_SCALAR, YN_MAP, YN_SEQ };

struct ynode {
	enum ynode_kind kind;
	int line, col;
	char *s;		/* scalar: its text */
	int plain;		/* scalar: unquoted (so `null`, `true`, `3` mean what they say) */
	size_t n;		/* map: pairs; seq: items */
	struct ynode **v;	/* map: the values; seq: the items */
	char **k;		/* map: the keys */
	int *kline, *kcol;	/* map: where each key is (line 0: made by ytree_set) */
	const char *file;	/* the source's name, for messages (not owned) */
};

/* keys in one mapping, at most (a profile has a few dozen) */
#define YTREE_MAX_KEYS 1024

/* parse buf (len bytes) named `file`; on error -1 and err = "file:line:col: msg" */
int ytree_parse(const char *file, const char *buf, size_t len, struct ynode **root, char *err,
		size_t errlen);
void ytree_free(struct ynode *n);
/* map lookup: the value (NULL if absent); *idx = its position if idx */
struct ynode *ytree_get(const struct ynode *map, const char *key, size_t *idx);
/* `a.b.0.c=value` (sequence items by index): set a scalar, creating maps on
 * the way; what it creates is positioned at line 1, col 1 of `origin` */
int ytree_set(struct ynode **root, const char *assignment, const char *origin, char *err,
	      size_t errlen);
/* a scalar that is YAML's null (~, null, empty and plain) */
int ytree_is_null(const struct ynode *n);

#endif
