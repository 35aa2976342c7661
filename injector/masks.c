// SPDX-License-Identifier: MIT
/*
 * The program's masks, rebuilt from the rule table after every change
 * (inj_int.h): which rules each hook, class and QPN can match, and per
 * field an interval table (or radix table) of the rules that restrict it.
 * The program ANDs them, so a packet meets only the rules it could match.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "inj_int.h"

/* one field's range in a rule: restricts (1) or not (0) */
struct span {
	uint64_t lo, hi;
};

static int field_span(const struct inj_rule *r, int f, struct span *v)
{
	switch (f) {
	case INJ_F_QPN:
		*v = (struct span){ r->qpn_lo, r->qpn_hi };
		return r->qpn_lo > 0 || r->qpn_hi < 0xffffff;
	case INJ_F_OPCODE:
		*v = (struct span){ (uint64_t)r->opcode, (uint64_t)r->opcode };
		return r->opcode >= 0;
	case INJ_F_PSN:
	case INJ_F_RPSN:
		*v = (struct span){ r->psn_lo, r->psn_hi };
		return !(r->rel & INJ_REL_PSN) == (f == INJ_F_PSN) &&
		       (r->psn_lo > 0 || r->psn_hi < 0xffffff);
	case INJ_F_LEN:
		*v = (struct span){ r->len_min, r->len_max };
		return r->len_min > 0 || r->len_max < 0xffff;	/* an IP length's range */
	case INJ_F_SRC:
		*v = (struct span){ r->src_ip, r->src_ip };
		return r->src_ip != 0;
	case INJ_F_DST:
		*v = (struct span){ r->dst_ip, r->dst_ip };
		return r->dst_ip != 0;
	case INJ_F_QIDX:
		*v = (struct span){ r->qp_lo, r->qp_hi };
		return !!(r->rel & INJ_REL_QP);
	case INJ_F_TX:
		*v = (struct span){ r->tx_lo, r->tx_hi };
		return !!(r->rel & INJ_REL_TX);
	case INJ_F_TIME:
		*v = (struct span){ r->start_ns, r->stop_ns ? r->stop_ns - 1 : UINT64_MAX - 1 };
		return (r->start_ns || r->stop_ns) && !r->from_traffic;	/* its own: no clock yet */
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Field f's interval table for the rules in `in` (bit i: slot i, r[i] its
 * rule): 1 when some rule restricts the field (the table is needed), 0
 * when none does. A window that ends at or before it starts covers nothing.
 */
static int itab_build(struct inj_itab *t, int f, const struct inj_rule *r, uint64_t in)
{
	uint64_t ends[2 * INJ_MAX_RULES + 1];
	struct span v[INJ_MAX_RULES];
	uint64_t restr = 0;
	int n = 0, m = 0, i, j;

	ends[n++] = 0;
	for (i = 0; i < INJ_MAX_RULES; i++) {
		if (!(in & (1ULL << i)) || !field_span(&r[i], f, &v[i]))
			continue;
		restr |= 1ULL << i;
		if (v[i].lo > v[i].hi)
			continue;
		if (v[i].lo < INJ_ITAB_PAD)	/* one from there on never matches */
			ends[n++] = v[i].lo;
		if (v[i].hi < INJ_ITAB_PAD - 1)	/* to the end: no end */
			ends[n++] = v[i].hi + 1;
	}
	if (!restr)
		return 0;
	qsort(ends, (size_t)n, sizeof(ends[0]), cmp_u64);
	for (i = 0; i < n; i++)
		if (!m || ends[i] != t->lo[m - 1])
			t->lo[m++] = ends[i];
	/* the 4-way search's first step: levels of 4 reach 4 * top segments */
	for (t->top = 1; t->top * 4 < (uint32_t)m; t->top *= 4)
		;
	if (m == 1)
		t->top = 0;
	for (j = 0; j < m; j++) {
		uint64_t mask = in & ~restr;

		for (i = 0; i < INJ_MAX_RULES; i++)
			if ((restr & (1ULL << i)) && v[i].lo <= t->lo[j] && t->lo[j] <= v[i].hi)
				mask |= 1ULL << i;
		t->mask[j] = mask;
	}
	for (j = m; j < INJ_ITAB_SEGS; j++) {
		t->lo[j] = INJ_ITAB_PAD;
		t->mask[j] = 0;
	}
	return 1;
}

/*
 * Field f's radix table (inject_abi.h) for the rules in `in`: 1 when some
 * rule restricts the field, 0 when none does. Ranges are cut to the
 * table's values (0..INJ_RADIX_MAX).
 */
static int rtab_build(struct inj_rtab *t, int f, const struct inj_rule *r, uint64_t in)
{
	uint64_t restr = 0, all;
	struct span v;
	uint32_t h, l;
	int i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < INJ_MAX_RULES; i++) {
		uint64_t bit = 1ULL << i;
		uint32_t ah, al, bh, bl;

		if (!(in & bit) || !field_span(&r[i], f, &v))
			continue;
		restr |= bit;
		if (v.lo > v.hi || v.lo > INJ_RADIX_MAX)
			continue;	/* covers no value the table holds */
		if (v.hi > INJ_RADIX_MAX)
			v.hi = INJ_RADIX_MAX;
		ah = (uint32_t)(v.lo >> INJ_RADIX_BITS);
		al = (uint32_t)(v.lo & (INJ_RADIX_N - 1));
		bh = (uint32_t)(v.hi >> INJ_RADIX_BITS);
		bl = (uint32_t)(v.hi & (INJ_RADIX_N - 1));
		if (ah == bh) {
			t->hi[ah].ab |= bit;
		} else {
			t->hi[ah].a |= bit;
			t->hi[bh].b |= bit;
			for (h = ah + 1; h < bh; h++)
				t->hi[h].f |= bit;
		}
		for (l = al; l < INJ_RADIX_N; l++)
			t->lo[l].ge |= bit;
		for (l = 0; l <= bl; l++)
			t->lo[l].le |= bit;
	}
	if (!restr)
		return 0;
	all = in & ~restr;	/* the rules that do not restrict f: every value */
	for (h = 0; h < INJ_RADIX_N; h++)
		t->hi[h].f |= all;
	return 1;
}

/* what the enabled rules ask of the program's masks, gathered from the
 * rule table: every rule by slot, and per hook, class and QPN the rules
 * that apply (bit i: slot i) */
struct kmask {
	uint32_t key;
	uint64_t mask;
};

struct masks {
	struct inj_rule all[INJ_MAX_RULES];
	uint64_t in, ce, rel, any, cls[INJ_CLS_ALL];
	uint32_t track;
	struct kmask hooks[INJ_MAX_RULES], qpns[INJ_MAX_RULES];
	int nh, nq;
};

/* key's mask in a list of n (key, mask) pairs, the pair added when new */
static uint64_t *mask_of(struct kmask *list, int *n, uint32_t key)
{
	int i;

	for (i = 0; i < *n && list[i].key != key; i++)
		;
	if (i == *n) {
		list[i].key = key;
		list[(*n)++].mask = 0;
	}
	return &list[i].mask;
}

static void masks_collect(struct inj_ctx *c, struct masks *m)
{
	struct inj_rule r;
	uint32_t i;
	int k;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < INJ_MAX_RULES; i++) {
		uint64_t bit = 1ULL << i;

		if (inj_rule_read(c, i, &r) || !r.id || r.disabled)
			continue;
		m->all[i] = r;
		m->in |= bit;
		if (r.ecn_ce)
			m->ce |= bit;
		if (r.rel)
			m->rel |= bit;
		*mask_of(m->hooks, &m->nh, inj_hook_key(r.ifindex, r.dir)) |= bit;
		if (r.rel)
			m->track |= INJ_TRACK_QP;
		if (r.rel & INJ_REL_TX)
			m->track |= INJ_TRACK_TX;
		if (r.action == INJ_ACT_CNP)
			m->track |= INJ_TRACK_PEER;
		for (k = 0; k < INJ_CLS_ALL; k++)
			if ((r.class_mask ? r.class_mask : INJ_CLS_ROCE_MASK) & (1u << k))
				m->cls[k] |= bit;
		if (r.qpn_lo == r.qpn_hi)
			*mask_of(m->qpns, &m->nq, r.qpn_lo) |= bit;
		else
			m->any |= bit;
	}
}

/* every registered hook gets its mask (0 when its rules are gone) */
static int hook_masks_put(struct inj_ctx *c, const struct masks *m)
{
	int hfd = bpf_map__fd(inj_maps(c)->maps.inj_hooks), nk, j, k;
	uint32_t keys[INJ_MAX_HOOKS];
	struct inj_hook hv;

	nk = inj_hook_keys(hfd, keys);
	for (j = 0; j < nk; j++) {
		if (bpf_map_lookup_elem(hfd, &keys[j], &hv))
			continue;
		hv.mask = 0;
		for (k = 0; k < m->nh; k++)
			if (m->hooks[k].key == keys[j])
				hv.mask = m->hooks[k].mask;
		if ((k = inj_hook_put(c, keys[j], &hv, BPF_EXIST)))
			return k;
	}
	return 0;
}

/* direct-mapped QPN buckets; a collision sends both QPNs' rules to "any" */
static int qpn_buckets_put(struct inj_ctx *c, struct masks *m)
{
	static struct inj_qpn_bucket b[INJ_QPN_BUCKETS];
	int qfd = bpf_map__fd(inj_maps(c)->maps.inj_qpn_mask), k;
	uint32_t i;

	memset(b, 0, sizeof(b));
	for (k = 0; k < m->nq; k++) {
		struct inj_qpn_bucket *e = &b[m->qpns[k].key & (INJ_QPN_BUCKETS - 1)];

		if (!e->used) {
			e->used = 1;
			e->qpn = m->qpns[k].key;
			e->mask = m->qpns[k].mask;
		} else {
			m->any |= m->qpns[k].mask;
		}
	}
	for (k = 0; k < m->nq; k++) {	/* a bucket that lost a collision goes too */
		struct inj_qpn_bucket *e = &b[m->qpns[k].key & (INJ_QPN_BUCKETS - 1)];

		if (e->used && e->qpn != m->qpns[k].key) {
			m->any |= e->mask;
			e->used = 2;	/* marked: cleared below */
		}
	}
	for (i = 0; i < INJ_QPN_BUCKETS; i++) {
		if (b[i].used == 2)
			memset(&b[i], 0, sizeof(b[i]));
		if (bpf_map_update_elem(qfd, &i, &b[i], BPF_ANY))
			return -errno;
	}
	return 0;
}

/* the interval tables into the idle set (of the config's itab); the
 * config's switch makes them live. Returns the new itab, or -errno */
static int64_t tables_put(struct inj_ctx *c, const struct masks *m, uint32_t live)
{
	static struct inj_itab tab;
	static struct inj_rtab rtab;
	struct inject_bpf *s = inj_maps(c);
	int tfd = bpf_map__fd(s->maps.inj_itabs), rfd = bpf_map__fd(s->maps.inj_rtabs), f;
	uint32_t itab = (live & INJ_ITAB_HALF) ^ INJ_ITAB_HALF;

	for (f = 0; f < INJ_F_MAX; f++) {
		uint64_t rules = f == INJ_F_QPN ? m->any : m->in;
		uint32_t key;
		int fd;
		void *val;

		if (f < INJ_F_RADIX) {
			if (!rtab_build(&rtab, f, m->all, rules))
				continue;
			key = (itab & INJ_ITAB_HALF ? INJ_F_RADIX : 0) + (uint32_t)f;
			fd = rfd;
			val = &rtab;
		} else {
			if (!itab_build(&tab, f, m->all, rules))
				continue;
			key = (itab & INJ_ITAB_HALF ? INJ_F_MAX : 0) + (uint32_t)f;
			fd = tfd;
			val = &tab;
		}
		if (bpf_map_update_elem(fd, &key, val, BPF_ANY))
			return -errno;
		itab |= 1u << f;
	}
	return itab;
}

/* rebuild hook / class / QPN masks from the rule table */
int inj_masks_sync(struct inj_ctx *c)
{
	static struct masks m;
	struct inject_bpf *s = inj_maps(c);
	struct inj_cfg cfg;
	uint32_t i, zero = 0;
	int64_t itab;
	int r;

	masks_collect(c, &m);
	if ((r = hook_masks_put(c, &m)) || (r = qpn_buckets_put(c, &m)))
		return r;
	for (i = 0; i < INJ_CLS_ALL; i++)
		if (bpf_map_update_elem(bpf_map__fd(s->maps.inj_class_mask), &i, &m.cls[i], BPF_ANY))
			return -errno;
	if (bpf_map_lookup_elem(bpf_map__fd(s->maps.inj_cfg), &zero, &cfg))
		memset(&cfg, 0, sizeof(cfg));
	itab = tables_put(c, &m, cfg.itab);
	if (itab < 0)
		return (int)itab;
	cfg.itab = (uint32_t)itab;
	cfg.ce_mask = m.ce;
	cfg.rel_mask = m.rel;
	cfg.qpn_any_mask = m.any;
	cfg.qpn_exact = m.nq > 0;
	cfg.track = m.track;
	cfg.generation++;
	return bpf_map_update_elem(bpf_map__fd(s->maps.inj_cfg), &zero, &cfg, BPF_ANY) ? -errno : 0;
}
