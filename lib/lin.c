// SPDX-License-Identifier: MIT
/*
 * The linearizability checker (see lin.h). One key's search, after Wing and
 * Gong with Lowe's improvements:
 *
 *   The operations' invocations and completions, in time order, form a
 *   doubly linked list. Walking it from the front, an invocation may be
 *   linearized now if the sequential store accepts the operation in the
 *   current state: it is then taken out of the list (with its completion),
 *   pushed on a stack with the state before it, and the walk starts again
 *   at the front. Reaching a completion means an operation that has already
 *   returned was not linearized before it: pop the last choice, put it back,
 *   and try the invocation after it instead. The history is linearizable
 *   when no completion is left; it is not when a completion is reached with
 *   nothing to pop.
 *
 * Lowe's cache: the same set of linearized operations with the same value
 * behaves the same whatever order got there, so a (set, value) pair seen
 * before is not explored again. It is what makes the search fast on real
 * histories; the budget bounds it on adversarial ones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lin.h"
#include "mix.h"

#define DEF_BUDGET 10000000ULL
#define CACHE_MAX_BYTES (512ULL << 20)	/* a key's memo beyond this: undecided */

struct ent {
	struct ent *prev, *next;
	struct ent *match;	/* an invocation's completion (NULL: it never completed) */
	uint64_t t;
	uint32_t id;		/* the operation, an index into the key's group */
	uint8_t call;
};

struct memo {
	size_t w;		/* words of the linearized set */
	uint64_t *arena;	/* blobs of 1 + w words: value, set */
	size_t nblob, cap;
	uint32_t *tab;		/* blob index + 1, 0 empty */
	size_t tcap;
};

/* the sequential store: op o on value s; 0 if its result contradicts s.
 * An operation whose outcome is unknown contradicts nothing */
static int apply(const struct lin_op *o, uint64_t s, uint64_t *s2)
{
	int unknown = o->maybe || o->ret == LIN_PENDING;

	switch (o->kind) {
	case LIN_GET:
		*s2 = s;
		return unknown || o->out == s;
	case LIN_PUT:
		*s2 = o->arg;
		return 1;
	case LIN_FAA:
		*s2 = s + o->arg;
		return unknown || o->out == s;
	default: {
		int swapped = s == o->arg;

		*s2 = swapped ? o->arg2 : s;
		return unknown || o->out == (uint64_t)swapped;
	}
	}
}

static uint64_t memo_hash(const struct memo *m, uint64_t s, const uint64_t *bits)
{
	uint64_t h = rtb_mix64(s ^ 0x5bd1e995u);
	size_t i;

	for (i = 0; i < m->w; i++)
		h = rtb_mix64(h ^ bits[i]);
	return h;
}

static int memo_grow(struct memo *m)
{
	size_t ncap = m->tcap ? 2 * m->tcap : 1024, i;
	uint32_t *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (i = 0; i < m->nblob; i++) {
		const uint64_t *b = m->arena + i * (1 + m->w);
		size_t p = memo_hash(m, b[0], b + 1) & (ncap - 1);

		while (nt[p])
			p = (p + 1) & (ncap - 1);
		nt[p] = (uint32_t)(i + 1);
	}
	free(m->tab);
	m->tab = nt;
	m->tcap = ncap;
	return 0;
}

/* 1: (s, bits) is new and now remembered; 0: seen before; -ENOMEM; -ENOSPC:
 * the memo is full */
static int memo_add(struct memo *m, uint64_t s, const uint64_t *bits)
{
	size_t bw = 1 + m->w, p;
	uint64_t *b;
	int r;

	if (2 * (m->nblob + 1) > m->tcap && (r = memo_grow(m)))
		return r;
	p = memo_hash(m, s, bits) & (m->tcap - 1);
	for (; m->tab[p]; p = (p + 1) & (m->tcap - 1)) {
		b = m->arena + (m->tab[p] - 1) * bw;
		if (b[0] == s && !memcmp(b + 1, bits, m->w * sizeof(*bits)))
			return 0;
	}
	if (m->nblob == m->cap) {
		size_t ncap = m->cap ? 2 * m->cap : 1024;

		if ((uint64_t)ncap * bw * sizeof(uint64_t) > CACHE_MAX_BYTES || ncap >= UINT32_MAX)
			return -ENOSPC;
		if (!(b = realloc(m->arena, ncap * bw * sizeof(uint64_t))))
			return -ENOMEM;
		m->arena = b;
		m->cap = ncap;
	}
	b = m->arena + m->nblob * bw;
	b[0] = s;
	memcpy(b + 1, bits, m->w * sizeof(*bits));
	m->tab[p] = (uint32_t)++m->nblob;
	return 1;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->call != y->call)	/* at the same instant: invocations first (concurrent) */
		return x->call ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* take an invocation (and its completion) out of the list, and back */
static void lift(struct ent *e)
{
	e->prev->next = e->next;
	if (e->next)
		e->next->prev = e->prev;
	if (e->match) {
		e->match->prev->next = e->match->next;
		if (e->match->next)
			e->match->next->prev = e->match->prev;
	}
}

static void unlift(struct ent *e)
{
	if (e->match) {
		e->match->prev->next = e->match;
		if (e->match->next)
			e->match->next->prev = e->match;
	}
	e->prev->next = e;
	if (e->next)
		e->next->prev = e;
}

/* operation i of a key's: ops[idx[i]], or ops[i] without idx */
static inline const struct lin_op *op_at(const struct lin_op *ops, const size_t *idx, size_t i)
{
	return &ops[idx ? idx[i] : i];
}

/* the entries of a key's m operations into ents (2 m + 1), sorted by
 * time and linked: the completed operations from head, the invocations
 * that never completed from phead, each invocation to its completion.
 * Returns how many completed, or -ENOMEM */
static int entries(const struct lin_op *ops, const size_t *idx, size_t m, struct ent *ents,
		   struct ent *head, struct ent *phead)
{
	struct ent **callof = calloc(m + 1, sizeof(*callof)), *last = head, *plast = phead;
	size_t ne = 0, i;
	int rets = 0;

	if (!callof)
		return -ENOMEM;
	for (i = 0; i < m; i++) {
		const struct lin_op *o = op_at(ops, idx, i);

		if (o->kind == LIN_GET && (o->maybe || o->ret == LIN_PENDING))
			continue;	/* a read without a result constrains nothing */
		ents[ne++] = (struct ent){ .t = o->call, .id = (uint32_t)i, .call = 1 };
		if (o->ret != LIN_PENDING) {
			ents[ne++] = (struct ent){ .t = o->ret, .id = (uint32_t)i };
			rets++;
		}
	}
	qsort(ents, ne, sizeof(*ents), ent_cmp);
	for (i = 0; i < ne; i++) {
		struct ent **tail = ents[i].call && op_at(ops, idx, ents[i].id)->ret == LIN_PENDING ?
					    &plast : &last;

		ents[i].prev = *tail;
		(*tail)->next = &ents[i];
		*tail = &ents[i];
		if (ents[i].call)
			callof[ents[i].id] = &ents[i];
		else
			callof[ents[i].id]->match = &ents[i];
	}
	free(callof);
	return rets;
}

/*
 * One key's m operations (op_at, in invocation order): 1 linearizable, 0
 * not, -1 undecided, -ENOMEM.
 *
 * Operations that never completed sit in a list of their own and are tried
 * after the completed ones: one may take effect anywhere after its
 * invocation, so tried first (at their place in time) each would be
 * linearized early on every path and multiply the search; tried last they
 * are placed only where a read needs them. The choices at a state are the
 * same either way (the completed invocations before the first completion
 * left, then the pending ones invoked no later than it), so nothing is
 * missed.
 */
static int search(const struct lin_op *ops, const size_t *idx, size_t m, uint64_t init,
		  uint64_t budget, uint64_t *states)
{
	struct ent *ents = calloc(2 * m + 1, sizeof(*ents)), head = { 0 }, phead = { 0 };
	struct ent **stk = NULL, *e;
	struct memo memo = { .w = (m + 63) / 64 };
	uint64_t *bits = calloc(memo.w + 1, sizeof(*bits)), *olds = NULL, *lims = NULL, s = init, s2;
	uint64_t visited = 0, lim = 0;
	uint8_t *vars = NULL;
	size_t rets, sp = 0;
	int ret = -ENOMEM, r, ok, pend = 0;	/* pend: walking the pending list, up to time lim */
	int v = 0;	/* the variant of the invocation at e: 0 its effect, 1 none (maybe only) */

	stk = malloc((m + 1) * sizeof(*stk));
	olds = malloc((m + 1) * sizeof(*olds));
	lims = malloc((m + 1) * sizeof(*lims));
	vars = malloc(m + 1);
	if (!ents || !bits || !stk || !olds || !lims || !vars)
		goto out;
	if ((r = entries(ops, idx, m, ents, &head, &phead)) < 0)
		goto out;
	rets = (size_t)r;
	e = head.next;
	while (rets) {
		if (!pend && e && !e->call) {	/* the first completion left: now the pending */
			pend = 1;
			lim = e->t;
			e = phead.next;
		}
		if (e && e->call && (!pend || e->t <= lim)) {
			const struct lin_op *o = op_at(ops, idx, e->id);

			if (v)
				s2 = s, ok = 1;
			else
				ok = apply(o, s, &s2);
			if (ok) {
				bits[e->id / 64] |= 1ULL << (e->id % 64);
				r = memo_add(&memo, s2, bits);
				if (r == 1) {
					if (++visited > budget) {
						ret = -1;
						goto out;
					}
					stk[sp] = e;
					olds[sp] = s;
					vars[sp] = (uint8_t)v;
					lims[sp++] = pend ? lim : 0;
					s = s2;
					rets -= e->match != NULL;
					lift(e);
					e = head.next;
					pend = v = 0;
					continue;
				}
				bits[e->id / 64] &= ~(1ULL << (e->id % 64));
				if (r < 0) {
					ret = r == -ENOSPC ? -1 : r;
					goto out;
				}
			}
			if (!v && o->maybe && e->match) {	/* then as if it never happened */
				v = 1;
				continue;
			}
			e = e->next;
			v = 0;
			continue;
		}
		/* no choice left here: undo the last one, try the one after it */
		if (!sp) {
			ret = 0;
			goto out;
		}
		e = stk[--sp];
		s = olds[sp];
		bits[e->id / 64] &= ~(1ULL << (e->id % 64));
		unlift(e);
		rets += e->match != NULL;
		pend = op_at(ops, idx, e->id)->ret == LIN_PENDING;	/* (the stack holds invocations) */
		lim = lims[sp];
		if (!vars[sp] && op_at(ops, idx, e->id)->maybe && e->match) {
			v = 1;	/* its other outcome, at the same place */
			continue;
		}
		e = e->next;
		v = 0;
	}
	ret = 1;
out:
	*states += visited;
	free(ents);
	free(bits);
	free(stk);
	free(olds);
	free(lims);
	free(vars);
	free(memo.arena);
	free(memo.tab);
	return ret;
}

/* could w have left the value r saw (a GET's value, an add's value
 * before, a compare-and-swap's expected value, or for one that failed, a
 * value other than it)? */
static int may_source(const struct lin_op *w, const struct lin_op *r)
{
	uint64_t x;

	switch (w->kind) {
	case LIN_PUT:
		x = w->arg;
		break;
	case LIN_CAS:
		if (!w->maybe && w->ret != LIN_PENDING && !w->out)
			return 0;	/* it failed: wrote nothing */
		x = w->arg2;
		break;
	default:
		return 0;
	}
	if (r->kind == LIN_CAS)
		return r->out ? r->arg == x : r->arg != x;
	return r->out == x;
}

/* cur[i] may be cut from cur[]: a read, or a write no read left in it
 * could have read from (and none, with adds among them, whose values are
 * sums of earlier ones). Reads never change what others see; a write that
 * goes must be one nobody saw, else the cut trades the real conflict for
 * a made-up one (a value nobody wrote, or writes in an order they were not) */
static int may_cut(const struct lin_op *ops, const size_t *cur, size_t k, size_t i)
{
	const struct lin_op *w = &ops[cur[i]];
	size_t j;

	if (w->kind == LIN_GET)
		return 1;
	for (j = 0; j < k; j++)	/* adds build values from earlier writes: none goes */
		if (ops[cur[j]].kind == LIN_FAA)
			return 0;
	for (j = 0; j < k; j++) {
		const struct lin_op *r = &ops[cur[j]];

		if (j != i && r->kind != LIN_PUT && !r->maybe && r->ret != LIN_PENDING &&
		    may_source(w, r))
			return 0;
	}
	return 1;
}

/* a key's m ops (ops[idx[]], in invocation order) as seen at time t, into
 * obs[]: those invoked by then, and of them what had not completed by then
 * pending. If the history is linearizable, so is what was seen of it at
 * any time; and what fails at t fails at every later time (a plain prefix
 * need not: a read may take its value from a write invoked after it).
 * Returns how many */
static size_t observe(const struct lin_op *ops, const size_t *idx, size_t m, uint64_t t,
		      struct lin_op *obs)
{
	size_t i;

	for (i = 0; i < m && ops[idx[i]].call <= t; i++) {
		obs[i] = ops[idx[i]];
		if (obs[i].ret != LIN_PENDING && obs[i].ret > t) {
			obs[i].ret = LIN_PENDING;
			obs[i].maybe = 1;
		}
	}
	return i;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A failing key's history, cut down. First what was seen of it at the
 * earliest completion that makes it fail (observe; a binary search over
 * the completions). Then, until nothing changes, each operation (last
 * first) that may go (may_cut) is left out if the rest still fails. What
 * is left fails, and without any one of its reads, or of the writes none
 * of them could have read, it would not; unless the cutting spent a search
 * budget of states (minimal 0).
 */
static int minimize(const struct lin_op *ops, const size_t *idx, size_t m, uint64_t init,
		    uint64_t budget, uint64_t *states, struct lin_result *r)
{
	struct lin_op *obs = malloc((m + 1) * sizeof(*obs));
	size_t *cur = malloc((m + 1) * sizeof(*cur)), *tmp = malloc((m + 1) * sizeof(*tmp));
	uint64_t *rt = malloc((m + 1) * sizeof(*rt)), start = *states;
	size_t i, j, n, k, nr = 0, lo, hi;
	int x = -ENOMEM, changed = 1;

	if (!obs || !cur || !tmp || !rt)
		goto out;
	for (i = 0; i < m; i++)
		if (ops[idx[i]].ret != LIN_PENDING)
			rt[nr++] = ops[idx[i]].ret;
	qsort(rt, nr, sizeof(*rt), u64_cmp);
	lo = 0;
	hi = nr;	/* rt[hi - 1] fails (all of it was seen then), rt[< lo] do not */
	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2 - 1;

		n = observe(ops, idx, m, rt[mid], obs);
		if (search(obs, NULL, n, init, budget, states) == 0)
			hi = mid + 1;
		else
			lo = mid + 1;
	}
	k = observe(ops, idx, m, nr ? rt[hi - 1] : UINT64_MAX, obs);
	for (i = 0; i < k; i++)	/* what is left of it: indices into obs */
		cur[i] = i;
	/* the latest quiet point (nothing in flight) after which the rest still
	 * fails, when what came before it can have left one value only (reads
	 * and adds that completed: the sum of the adds): the rest starts there */
	{
		uint64_t v = init, end = 0, bestv = init;
		size_t best = 0;

		for (i = 0; i < k; i++) {
			if (i && end < obs[i].call) {
				n = k - i;
				if (search(obs, cur + i, n, v, budget, states) == 0) {
					best = i;
					bestv = v;
				}
			}
			if (obs[i].maybe || obs[i].ret == LIN_PENDING ||
			    (obs[i].kind != LIN_GET && obs[i].kind != LIN_FAA))
				break;
			v += obs[i].kind == LIN_FAA ? obs[i].arg : 0;
			end = obs[i].ret > end ? obs[i].ret : end;
		}
		if (best) {
			memmove(cur, cur + best, (k - best) * sizeof(*cur));
			k -= best;
			init = bestv;
			r->before = best;
		}
		r->from = init;
	}
	r->minimal = 1;
	while (changed) {
		changed = 0;
		for (i = k; i-- > 0;) {
			if (*states - start > budget) {
				r->minimal = 0;
				changed = 0;
				break;
			}
			if (!may_cut(obs, cur, k, i))
				continue;
			for (j = 0, n = 0; j < k; j++)
				if (j != i)
					tmp[n++] = cur[j];
			if ((x = search(obs, tmp, n, init, budget, states)) == 0) {
				memcpy(cur, tmp, n * sizeof(*cur));
				k = n;
				changed = 1;
			} else if (x < -1) {
				goto out;
			}
		}
	}
	for (i = 0; i < k; i++)	/* back to the caller's indices */
		cur[i] = idx[cur[i]];
	r->bad = cur;
	r->nbad = k;
	cur = NULL;
	x = 0;
out:
	free(obs);
	free(cur);
	free(tmp);
	free(rt);
	return x;
}

static int idx_cmp(const void *a, const void *b, void *arg)
{
	const struct lin_op *ops = arg;
	const struct lin_op *x = &ops[*(const size_t *)a], *y = &ops[*(const size_t *)b];
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->call != y->call)
		return x->call < y->call ? -1 : 1;
	return i < j ? -1 : i > j;
}

int lin_check(const struct lin_op *ops, size_t n, uint64_t init, uint64_t budget,
	      struct lin_result *r)
{
	size_t *idx, i, j;
	int undecided = 0, x = 0;
	uint64_t ukey = 0;

	memset(r, 0, sizeof(*r));
	r->linearizable = 1;
	for (i = 0; i < n; i++)
		if (ops[i].kind > LIN_CAS || (ops[i].ret != LIN_PENDING && ops[i].ret < ops[i].call))
			return -EINVAL;
	if (!n)
		return 0;
	if (!budget)
		budget = DEF_BUDGET;
	if (!(idx = malloc(n * sizeof(*idx))))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), idx_cmp, (void *)ops);
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && ops[idx[j]].key == ops[idx[i]].key; j++)
			;
		r->keys++;
		x = search(ops, idx + i, j - i, init, budget, &r->states);
		if (x == -1 && !undecided) {
			undecided = 1;
			ukey = ops[idx[i]].key;
		} else if (x == 0) {
			r->linearizable = 0;
			r->key = ops[idx[i]].key;
			x = minimize(ops, idx + i, j - i, init, budget, &r->states, r);
			break;
		}
		if (x < -1)
			break;
		x = 0;
	}
	free(idx);
	if (x < 0)
		return x;
	if (r->linearizable && undecided) {
		r->linearizable = -1;
		r->key = ukey;
	}
	return 0;
}

void lin_result_free(struct lin_result *r)
{
	free(r->bad);
	r->bad = NULL;
	r->nbad = 0;
}
