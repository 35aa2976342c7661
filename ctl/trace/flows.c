// SPDX-License-Identifier: MIT
/* A capture's flows: one per QP at each capture point, the PSNs each saw,
 * and the flow at the opposite point that answers it (tr.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "ctl/trace/tr.h"
#include "lib/fnv.h"


/* the hash of a flow's addresses (and cap, family), then of more words */
static uint64_t addr_hash(int cap, int v6, const uint8_t *src, const uint8_t *dst)
{
	uint64_t h;
	int k[2] = { cap, v6 };

	h = fnv1a(FNV_OFFSET, k, sizeof(k));
	h = fnv1a(h, src, 16);
	return fnv1a(h, dst, 16);
}

static int ht_grow(struct htab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, i, j;
	struct hslot *ns = calloc(cap, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++) {
		if (!t->s[i].v)
			continue;
		for (j = t->s[i].h & (cap - 1); ns[j].v; j = (j + 1) & (cap - 1))
			;
		ns[j] = t->s[i];
	}
	free(t->s);
	t->s = ns;
	t->cap = cap;
	return 0;
}

static int ht_add(struct htab *t, uint64_t h, uint32_t v, uint32_t psn)
{
	size_t j;

	if ((t->n + 1) * 2 > t->cap && ht_grow(t))
		return -ENOMEM;
	for (j = h & (t->cap - 1); t->s[j].v; j = (j + 1) & (t->cap - 1))
		;
	t->s[j] = (struct hslot){ h, v, psn };
	t->n++;
	return 0;
}

static uint64_t flow_hash(int cap, int v6, const uint8_t *src, const uint8_t *dst, uint32_t dqpn)
{
	return fnv1a(addr_hash(cap, v6, src, dst), &dqpn, sizeof(dqpn));
}

int flow_of(struct tr *s, int cap, const uint8_t *src, const uint8_t *dst, int v6,
		   uint32_t dqpn)
{
	uint64_t h = flow_hash(cap, v6, src, dst, dqpn);
	size_t j;
	struct flow *f;

	for (j = s->fh.cap ? h & (s->fh.cap - 1) : 0; s->fh.cap && s->fh.s[j].v;
	     j = (j + 1) & (s->fh.cap - 1)) {
		f = &s->f[s->fh.s[j].v - 1];
		if (s->fh.s[j].h == h && f->cap == cap && f->dqpn == dqpn && f->v6 == v6 &&
		    !memcmp(f->src, src, 16) && !memcmp(f->dst, dst, 16))
			return (int)(s->fh.s[j].v - 1);
	}
	if (ht_add(&s->fh, h, (uint32_t)s->nf + 1, 0))
		return -ENOMEM;
	if (s->nf == s->cf) {
		size_t n = s->cf ? s->cf * 2 : 16;
		struct flow *nf = realloc(s->f, n * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		s->f = nf;
		s->cf = n;
	}
	f = &s->f[s->nf];
	memset(f, 0, sizeof(*f));
	f->cap = cap;
	f->v6 = v6;
	f->dqpn = dqpn;
	f->peer = -1;
	memcpy(f->src, src, 16);
	memcpy(f->dst, dst, 16);
	return (int)s->nf++;
}

int psn_mark(struct psnset *f, uint32_t psn, int *was)
{
	uint32_t key = psn >> 12, bit = psn & 4095;
	struct blk *b = NULL;
	size_t i;

	if (f->nb && f->b[f->last].key == key)
		b = &f->b[f->last];
	for (i = 0; !b && i < f->nb; i++)
		if (f->b[i].key == key) {
			b = &f->b[i];
			f->last = i;
		}
	if (!b) {
		struct blk *nb = realloc(f->b, (f->nb + 1) * sizeof(*nb));

		if (!nb)
			return -ENOMEM;
		f->b = nb;
		b = &f->b[f->nb];
		memset(b, 0, sizeof(*b));
		b->key = key;
		f->last = f->nb++;
	}
	*was = (int)((b->bits[bit >> 6] >> (bit & 63)) & 1);
	b->bits[bit >> 6] |= 1ull << (bit & 63);
	return 0;
}

int push(struct flow *f, int idx)
{
	if (f->npk == f->cpk) {
		size_t n = f->cpk ? f->cpk * 2 : 64;
		int *np = realloc(f->pk, n * sizeof(*np));

		if (!np)
			return -ENOMEM;
		f->pk = np;
		f->cpk = n;
	}
	f->pk[f->npk++] = idx;
	return 0;
}

void addr_str(const struct flow *f, const uint8_t *a, char *buf, size_t len)
{
	if (!inet_ntop(f->v6 ? AF_INET6 : AF_INET, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* the flows at the opposite capture point paired with each flow: the one
 * whose responses answer most of this flow's PSNs (or whose requests this
 * flow's responses answer); the first such flow on a tie.
 *
 * score(f, g) = c(g, f) + c(f, g), c(a, b) = how many of a's responses have a
 * PSN b has seen, over flows at opposite points with swapped addresses. Each
 * response looks its (addresses, PSN) up in an index of every flow's PSNs,
 * and the scores of the pairs it finds add up in a hash: linear in packets,
 * where the loop over every pair of flows was quadratic. */
static uint64_t psn_key(const struct flow *f, uint32_t psn)
{
	return fnv1a(addr_hash(f->cap, f->v6, f->src, f->dst), &psn, sizeof(psn));
}

/* the pairs' scores: v[2 q] the pair (lo << 32 | hi), v[2 q + 1] its
 * score; h finds a pair's q + 1 */
struct scores {
	struct htab h;
	uint64_t *v;
	size_t room;	/* pairs v has room for */
};

/* one more for the pair of flows lo and hi */
static int score_add(struct scores *sc, uint32_t lo, uint32_t hi)
{
	uint64_t key = (uint64_t)lo << 32 | hi, ph = key * 0x9e3779b97f4a7c15ULL;
	size_t q;

	for (q = sc->h.cap ? ph & (sc->h.cap - 1) : 0; sc->h.cap && sc->h.s[q].v;
	     q = (q + 1) & (sc->h.cap - 1))
		if (sc->h.s[q].h == ph && sc->v[2 * (sc->h.s[q].v - 1)] == key) {
			sc->v[2 * (sc->h.s[q].v - 1) + 1]++;
			return 0;
		}
	if (sc->h.n == sc->room) {	/* doubled: amortised */
		size_t room = sc->room ? 2 * sc->room : 1024;
		uint64_t *nv = realloc(sc->v, room * 2 * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		sc->v = nv;
		sc->room = room;
	}
	sc->v[2 * sc->h.n] = key;
	sc->v[2 * sc->h.n + 1] = 1;
	return ht_add(&sc->h, ph, (uint32_t)sc->h.n + 1, 0);
}

/* every flow's distinct PSNs into idx: a resent packet's was seen before in
 * its flow (psn_mark); a CNP's 0 is no PSN */
static int psn_index(const struct tr *s, struct htab *idx)
{
	size_t i, k;

	for (i = 0; i < s->nf; i++) {
		const struct flow *f = &s->f[i];

		for (k = 0; k < f->npk; k++) {
			const struct tp *t = &s->p[f->pk[k]];

			if (t->cls != C_CNP && !t->resent &&
			    ht_add(idx, psn_key(f, t->psn), (uint32_t)i + 1, t->psn))
				return -ENOMEM;
		}
	}
	return 0;
}

/* c(a, b) for every response of flow a (index i) and every flow b at the
 * opposite point that saw its PSN */
static int score_flow(const struct tr *s, const struct htab *idx, size_t i, struct scores *sc)
{
	const struct flow *a = &s->f[i];
	int opp = s->c[a->cap].opposite;
	size_t j, k;

	for (k = 0; opp >= 0 && k < a->npk; k++) {
		const struct tp *t = &s->p[a->pk[k]];
		uint64_t h = fnv1a(addr_hash(opp, a->v6, a->dst, a->src), &t->psn, sizeof(t->psn));

		if (is_request(t->cls) || t->cls == C_CNP)
			continue;
		for (j = idx->cap ? h & (idx->cap - 1) : 0; idx->cap && idx->s[j].v;
		     j = (j + 1) & (idx->cap - 1)) {
			const struct flow *b = &s->f[idx->s[j].v - 1];
			uint32_t o = idx->s[j].v - 1;

			if (idx->s[j].h != h || idx->s[j].psn != t->psn || b->cap != opp ||
			    b->v6 != a->v6 || memcmp(b->src, a->dst, 16) || memcmp(b->dst, a->src, 16))
				continue;
			if (score_add(sc, (uint32_t)i < o ? (uint32_t)i : o,
				      (uint32_t)i < o ? o : (uint32_t)i))
				return -ENOMEM;
		}
	}
	return 0;
}

/* each flow's best partner: the highest score, the lowest index on a tie */
static void best_partners(const struct scores *sc, int *best, uint64_t *best_n, size_t nf)
{
	size_t i, k;

	for (i = 0; i < nf; i++)
		best[i] = -1;
	for (k = 0; k < sc->h.n; k++) {
		uint32_t lo = (uint32_t)(sc->v[2 * k] >> 32), hi = (uint32_t)sc->v[2 * k];
		uint64_t n = sc->v[2 * k + 1];
		uint32_t e[2][2] = { { lo, hi }, { hi, lo } };

		for (int w = 0; w < 2; w++) {
			uint32_t f = e[w][0], g = e[w][1];

			if (f == g && w)
				continue;
			if (n > best_n[f] || (n == best_n[f] && best[f] >= 0 && (int)g < best[f])) {
				best_n[f] = n;
				best[f] = (int)g;
			}
		}
	}
}

int pair(struct tr *s)
{
	struct htab idx = { 0 };
	struct scores sc = { 0 };
	uint64_t *best_n;
	int *best, r = -ENOMEM;
	size_t i;

	best = calloc(s->nf + 1, sizeof(*best));
	best_n = calloc(s->nf + 1, sizeof(*best_n));
	if (!best || !best_n || psn_index(s, &idx))
		goto out;
	for (i = 0; i < s->nf; i++)
		if (score_flow(s, &idx, i, &sc))
			goto out;
	best_partners(&sc, best, best_n, s->nf);
	for (i = 0; i < s->nf; i++)
		s->f[i].peer = s->c[s->f[i].cap].opposite < 0 ? -1 : best[i];
	r = 0;
out:
	free(idx.s);
	free(sc.h.s);
	free(sc.v);
	free(best);
	free(best_n);
	return r;
}

void tr_free(struct tr *s)
{
	size_t i;

	for (i = 0; i < s->nf; i++) {
		free(s->f[i].pk);
		free(s->f[i].seen.b);
		free(s->f[i].sent.b);
	}
	free(s->f);
	free(s->p);
	free(s->fh.s);
}
