/* SPDX-License-Identifier: MIT */
/*
 * Inside the experiment room: the profile checker's helpers, shared by
 * profile.c and profile_hosts.c. Every one reports the first error as
 * "file:line:col: message" into x->err and returns -EINVAL.
 */
#ifndef RTB_CTL_EXP_CHECK_H
#define RTB_CTL_EXP_CHECK_H

#include "ctl/exp/profile.h"
#include "lib/num.h"
#include "lib/ytree.h"

struct pctx {
	char *err;
	size_t errlen;
};

int prof_perr(struct pctx *x, const struct ynode *n, int key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* an error at key i of map m */
int prof_perr_key(struct pctx *x, const struct ynode *m, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
const char *prof_kind_name(const struct ynode *n);
/* n is of kind k (a scalar: not null) */
int prof_want(struct pctx *x, const struct ynode *n, enum ynode_kind k, const char *what);
/* every key of map m is one of allowed[] (else "did you mean") */
int prof_keys_known(struct pctx *x, const struct ynode *m, const char *const *allowed,
		    const char *where);
/* the scalar at key of map m: 0 and *n = NULL when absent */
int prof_scalar_at(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		   char *what, size_t wlen, const struct ynode **n);
int prof_get_str(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		 char *buf, size_t len);
/* a name that may become a file name and an HTML attribute: 1.. of
 * [A-Za-z0-9._-], not first '.' or '-' */
int prof_name_ok(const char *s);
/* m's "name" into buf (left as it is when absent), checked by prof_name_ok */
int prof_get_name(struct pctx *x, const struct ynode *m, const char *where, char *buf, size_t len);
int prof_get_enum(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		  const char *const *kw, int *out);
int prof_get_num(struct pctx *x, const struct ynode *m, const char *key, const char *where,
		 enum num_kind kind, uint64_t min, uint64_t max, const char *range, uint64_t *out);
/* nodes: all, a node's name or a list of them, into a bit mask */
int prof_check_nodes(struct pctx *x, const struct profile *p, const struct ynode *n,
		     const char *where, uint32_t *mask);
/* an exec workload (profile_exec.c): its roles, vars and env; an arm of
 * it; every placeholder for every arm (once the arms are known) */
int prof_check_exec(struct pctx *x, struct profile *p, const struct ynode *w);
int prof_check_exec_arm(struct pctx *x, struct profile *p, const struct ynode *m, size_t i);
int prof_check_exec_texts(struct pctx *x, struct profile *p, const struct ynode *w);
/* search: (profile_search.c), once expect: is known */
int prof_check_search(struct pctx *x, struct profile *p, const struct ynode *n);
/* hosts: (profile_hosts.c) */
int prof_check_hosts(struct pctx *x, struct profile *p, const struct ynode *h);

#endif
