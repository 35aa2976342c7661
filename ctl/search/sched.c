// SPDX-License-Identifier: MIT
/*
 * Fault schedules over a profile's search: space (search.h). Nothing here
 * runs anything: the oracle does, so the unit tests drive it with a rule
 * of their own.
 */
#include <stdio.h>
#include <string.h>
#include "ctl/search/search.h"
#include "injector/inj.h"

uint64_t sch_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static uint32_t pick(uint64_t *rng, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(sch_rand(rng) % ((uint64_t)hi - lo + 1));
}

/* the QPs the space names: qp: N-M, or the first two a hook saw */
static void qp_range(const struct prof_search *sp, uint32_t *lo, uint32_t *hi)
{
	*lo = sp->qp_lo ? sp->qp_lo : 1;
	*hi = sp->qp_hi ? sp->qp_hi : 2;
}

static int qp_allowed(const struct prof_search *sp, uint32_t qp)
{
	return !sp->qp_lo || (qp >= sp->qp_lo && qp <= sp->qp_hi);
}

/* an event's place, QP, side and PSNs: from the whole space, or from a
 * flow the map has (its PSNs, as far as the space goes) */
static void draw_where(const struct prof_search *sp, const struct sch_map *m, uint64_t *rng,
		       struct sch_ev *e)
{
	const struct sch_flow *f = NULL;
	uint32_t qlo, qhi, hi = sp->rpsn_hi, w;
	int i, n = 0;

	qp_range(sp, &qlo, &qhi);
	for (i = 0; m && i < m->n; i++)
		n += qp_allowed(sp, m->f[i].qp);
	if (n) {
		int k = (int)pick(rng, 0, (uint32_t)n - 1);

		for (i = 0; i < m->n; i++)
			if (qp_allowed(sp, m->f[i].qp) && !k--)
				break;
		f = &m->f[i];
	}
	if (f) {
		e->place = f->place;
		e->qp = f->qp;
		e->kind = f->kind;
		if (f->extent && f->extent - 1 < hi && f->extent - 1 >= sp->rpsn_lo)
			hi = f->extent - 1;
	} else {
		e->place = (int)pick(rng, 0, (uint32_t)sp->nplaces - 1);
		e->qp = pick(rng, qlo, qhi);
		e->kind = (sch_rand(rng) & 1) ? SCH_RESPONSES : SCH_REQUESTS;
	}
	e->lo = pick(rng, sp->rpsn_lo, hi);
	/* one packet half the time, else a run of up to 8 */
	w = (sch_rand(rng) & 1) ? 0 : pick(rng, 1, 7);
	e->hi = e->lo + w > hi ? hi : e->lo + w;
}

static void draw(const struct prof_search *sp, const struct sch_map *m, uint64_t *rng,
		 struct sched *out)
{
	int i;

	memset(out, 0, sizeof(*out));
	out->n = (int)pick(rng, 1, (uint32_t)(sp->max_events < SCH_MAX_EV ? sp->max_events :
										 SCH_MAX_EV));
	for (i = 0; i < out->n; i++) {
		struct sch_ev *e = &out->ev[i];

		e->action = (int)pick(rng, 0, (uint32_t)sp->nactions - 1);
		e->opcode = -1;
		if (sch_timed(sp, e)) {
			e->place = (int)pick(rng, 0, (uint32_t)sp->nplaces - 1);
			e->t_ms = pick(rng, (uint32_t)(sp->time_lo_ns / 1000000),
				       (uint32_t)(sp->time_hi_ns / 1000000));
			if (sch_windowed(sp, e))
				e->len_ms = pick(rng, (uint32_t)(sp->win_lo_ns / 1000000),
						 (uint32_t)(sp->win_hi_ns / 1000000));
			continue;
		}
		if (sp->opcodes && (sch_rand(rng) & 1)) {
			int c, k = (int)pick(rng, 0, (uint32_t)__builtin_popcount(sp->opcodes) - 1);

			for (c = 0; c < 32; c++)
				if ((sp->opcodes & (1u << c)) && !k--)
					break;
			e->opcode = c;
		}
		draw_where(sp, m, rng, e);
		e->tx = sp->tx_lo ? pick(rng, sp->tx_lo, sp->tx_hi) : (sch_rand(rng) & 1) ? 1 : 0;
	}
}

void sch_random(const struct prof_search *sp, uint64_t *rng, struct sched *out)
{
	draw(sp, NULL, rng, out);
}

void sch_random_in(const struct prof_search *sp, const struct sch_map *m, uint64_t *rng,
		   struct sched *out)
{
	draw(sp, m, rng, out);
}

static int rpsn_allowed(const struct prof_search *sp, uint32_t r)
{
	return r >= sp->rpsn_lo && r <= sp->rpsn_hi;
}

static int add_one(const struct prof_search *sp, struct sched *out, int *n, int max,
		   const struct sch_flow *f, int action, uint32_t rpsn)
{
	struct sched s = { .n = 1 };
	int i;

	if (*n >= max || !qp_allowed(sp, f->qp) || !rpsn_allowed(sp, rpsn))
		return 0;
	/* tx: the space's first, or every transmission when it names none
	 * (shrinking pins it to the first if that still breaks) */
	s.ev[0] = (struct sch_ev){ f->place, action, -1, f->qp, rpsn, rpsn, sp->tx_lo, f->kind };
	for (i = 0; i < *n; i++)
		if (sch_equal(&out[i], &s))
			return 0;
	out[(*n)++] = s;
	return 1;
}

static void push_new(struct sched *out, int *n, int max, const struct sched *s)
{
	for (int i = 0; i < *n; i++)
		if (sch_equal(&out[i], s))
			return;
	if (*n < max)
		out[(*n)++] = *s;
}

int sch_seeds(const struct prof_search *sp, const struct sch_map *m, struct sched *out, int max)
{
	int n = 0, rank, i, a;

	/* by rank, then flow by flow: every flow's last packet is tried
	 * before any flow's first */
	for (rank = 0; rank < 5; rank++)
		for (i = 0; i < m->n; i++) {
			const struct sch_flow *f = &m->f[i];
			uint32_t k = f->msg_pkts ? f->msg_pkts : 1, last = f->extent - 1, r[3];
			int nr = 0;

			if (!f->extent)
				continue;
			switch (rank) {
			case 0:	/* its last packet: nothing after it to show the loss */
				r[nr++] = last;
				break;
			case 1:	/* the first message's last, and the very first */
				r[nr++] = k - 1;
				r[nr++] = 0;
				break;
			case 2:	/* a message's last, half way */
				r[nr++] = (f->extent / 2 / k) * k + k - 1;
				break;
			case 3:	/* a message's middle: the next packet shows the gap */
				if (k > 1)
					r[nr++] = (f->extent / 2 / k) * k + k / 2 - 1;
				break;
			default:	/* the one before the last */
				if (last)
					r[nr++] = last - 1;
			}
			for (int j = 0; j < nr; j++)
				for (a = 0; a < sp->nactions; a++)
					if (r[j] <= last && !sch_timed(sp, &(struct sch_ev){ .action = a }))
						add_one(sp, out, &n, max, f, a, r[j]);
		}
	/* a node fault: at each place's node, its longest window half way
	 * through the times (a freeze, a port down), or half way alone */
	for (a = 0; a < sp->nactions; a++)
		for (i = 0; i < sp->nplaces && n < max; i++) {
			struct sched s = { .n = 1 };
			struct sch_ev *e = &s.ev[0];

			e->action = a;
			e->place = i;
			e->opcode = -1;
			if (!sch_node_event(sp, e))
				continue;
			e->t_ms = (uint32_t)((sp->time_lo_ns + (sp->time_hi_ns - sp->time_lo_ns) / 2) /
					     1000000);
			if (sch_windowed(sp, e))
				e->len_ms = (uint32_t)(sp->win_hi_ns / 1000000);
			push_new(out, &n, max, &s);
		}
	return n;
}

static const struct sch_flow *flow_of(const struct sch_map *m, const struct sch_ev *e)
{
	for (int i = 0; i < m->n; i++)
		if (m->f[i].place == e->place && m->f[i].qp == e->qp &&
		    (!e->kind || m->f[i].kind == e->kind))
			return &m->f[i];
	return NULL;
}


int sch_neighbours(const struct prof_search *sp, const struct sch_map *m, const struct sched *s,
		   const struct sched *extra, int nextra, struct sched *out, int max)
{
	int n = 0, i, p, x;

	for (i = 0; i < s->n; i++) {
		const struct sch_ev *e = &s->ev[i];
		const struct sch_flow *f = flow_of(m, e);
		uint32_t k = f && f->msg_pkts ? f->msg_pkts : 1;
		int64_t d[4] = { 1, -1, (int64_t)k, -(int64_t)k };

		for (x = 0; x < 4 && !sch_timed(sp, e); x++) {
			struct sched t = *s;
			int64_t lo = (int64_t)e->lo + d[x], hi = (int64_t)e->hi + d[x];

			if (lo < sp->rpsn_lo || hi > sp->rpsn_hi || (f && hi >= f->extent) ||
			    (x >= 2 && k == 1))
				continue;
			t.ev[i].lo = (uint32_t)lo;
			t.ev[i].hi = (uint32_t)hi;
			push_new(out, &n, max, &t);
		}
		for (p = 0; p < sp->nplaces; p++) {	/* the same packet elsewhere */
			struct sched t = *s;

			if (p == e->place)
				continue;
			t.ev[i].place = p;
			push_new(out, &n, max, &t);
		}
	}
	for (x = 0; x < nextra && s->n < SCH_MAX_EV && s->n < sp->max_events; x++) {
		struct sched t = *s;

		t.ev[t.n++] = extra[x].ev[0];
		if (!sch_equal(&t, s))
			push_new(out, &n, max, &t);
	}
	return n;
}

int sch_is_flap(const struct prof_search *sp, const struct sch_ev *e)
{
	return !strcmp(sp->action[e->action], "flap");
}

int sch_node_event(const struct prof_search *sp, const struct sch_ev *e)
{
	for (int ev = 1; prof_event_names[ev]; ev++)
		if (!strcmp(sp->action[e->action], prof_event_names[ev]))
			return ev;
	return 0;
}

int sch_timed(const struct prof_search *sp, const struct sch_ev *e)
{
	return sch_is_flap(sp, e) || sch_node_event(sp, e);
}

int sch_windowed(const struct prof_search *sp, const struct sch_ev *e)
{
	int ev = sch_node_event(sp, e);

	return sch_is_flap(sp, e) || ev == PEV_FREEZE || ev == PEV_PORT_DOWN;
}

int sch_rule(const struct prof_search *sp, const struct sch_ev *e, char *buf, size_t len)
{
	char rp[32], tx[16] = "", op[24] = "";
	const char *side = e->kind == SCH_REQUESTS	? "requests "
			   : e->kind == SCH_RESPONSES ? "responses "
						      : "";
	int n;

	if (sch_is_flap(sp, e))	/* every RoCE packet in the fault's window, from the first */
		return snprintf(buf, len, "drop from traffic") >= (int)len ? -1 : 0;
	if (sch_node_event(sp, e))	/* the event's name */
		return snprintf(buf, len, "%s", sp->action[e->action]) >= (int)len ? -1 : 0;
	if (e->opcode >= 0 && e->opcode < INJ_CLS_MAX)
		snprintf(op, sizeof(op), "opcode %s ", inj_class_name(e->opcode));
	if (e->lo == e->hi)
		snprintf(rp, sizeof(rp), "%u", e->lo);
	else
		snprintf(rp, sizeof(rp), "%u-%u", e->lo, e->hi);
	if (e->tx)
		snprintf(tx, sizeof(tx), "tx %u ", e->tx);
	n = snprintf(buf, len, "%sqp %u %srpsn %s %s%s", op, e->qp, side, rp, tx,
		     sp->action[e->action]);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

void sch_text(const struct prof_search *sp, const struct sched *s, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	for (int i = 0; i < s->n && at < len; i++) {
		const struct prof_place *pl = &sp->place[s->ev[i].place];
		char rule[160];
		int n;

		if (sch_node_event(sp, &s->ev[i]) && sch_windowed(sp, &s->ev[i]))
			snprintf(rule, sizeof(rule), "%s %ums at %ums", sp->action[s->ev[i].action],
				 s->ev[i].len_ms, s->ev[i].t_ms);
		else if (sch_node_event(sp, &s->ev[i]))
			snprintf(rule, sizeof(rule), "%s at %ums", sp->action[s->ev[i].action],
				 s->ev[i].t_ms);
		else if (sch_is_flap(sp, &s->ev[i]))
			snprintf(rule, sizeof(rule), "flap %ums at %ums", s->ev[i].len_ms,
				 s->ev[i].t_ms);
		else
			sch_rule(sp, &s->ev[i], rule, sizeof(rule));
		if (sch_node_event(sp, &s->ev[i]))	/* the whole node */
			n = snprintf(buf + at, len - at, "%snode%d: %s", i ? "; " : "", pl->node,
				     rule);
		else
			n = snprintf(buf + at, len - at, "%snode%d%s %s: %s", i ? "; " : "",
				     pl->node, pl->sw ? "'s switch port" : "",
				     pl->egress ? "egress" : "ingress", rule);
		if (n < 0)
			break;
		at += (size_t)n;
	}
}

int sch_equal(const struct sched *a, const struct sched *b)
{
	if (a->n != b->n)
		return 0;
	for (int i = 0; i < a->n; i++) {
		const struct sch_ev *x = &a->ev[i], *y = &b->ev[i];

		if (x->place != y->place || x->action != y->action || x->opcode != y->opcode ||
		    x->qp != y->qp || x->lo != y->lo || x->hi != y->hi || x->tx != y->tx ||
		    x->kind != y->kind || x->t_ms != y->t_ms || x->len_ms != y->len_ms)
			return 0;
	}
	return 1;
}

/* s without its event i */
static void without(const struct sched *s, int i, struct sched *t)
{
	*t = *s;
	memmove(&t->ev[i], &t->ev[i + 1], (size_t)(t->n - i - 1) * sizeof(t->ev[0]));
	t->n--;
}

/* one halving: a, else b, kept if it still breaks. 1 one kept, 0 it
 * takes both, < 0 the oracle's stop */
static int keep_half(struct sched *cur, const struct sched *a, const struct sched *b,
		     sch_oracle *oracle, void *arg)
{
	int r = oracle(arg, a);

	if (!r) {
		a = b;
		r = oracle(arg, b);
	}
	if (r > 0)
		*cur = *a;
	return r;
}

/* event i's PSN range halved, the half that still breaks kept, down to
 * one packet; then its transmission pinned to the first. 0, or the
 * oracle's < 0 (cur: the smallest so far) */
static int narrow_psns(struct sched *cur, int i, sch_oracle *oracle, void *arg)
{
	struct sched lo, hi;
	int r = 1;

	while (r > 0 && cur->ev[i].lo < cur->ev[i].hi) {
		uint32_t mid = cur->ev[i].lo + (cur->ev[i].hi - cur->ev[i].lo) / 2;

		lo = hi = *cur;
		lo.ev[i].hi = mid;
		hi.ev[i].lo = mid + 1;
		r = keep_half(cur, &lo, &hi, oracle, arg);
	}
	if (r < 0)
		return r;
	if (!cur->ev[i].tx) {
		lo = *cur;
		lo.ev[i].tx = 1;
		if ((r = oracle(arg, &lo)) < 0)
			return r;
		if (r)
			*cur = lo;
	}
	return 0;
}

/* a flap's window halved, the half that still breaks kept, down to 1 ms */
static int narrow_window(struct sched *cur, int i, sch_oracle *oracle, void *arg)
{
	struct sched a, b;
	int r = 1;

	while (r > 0 && cur->ev[i].len_ms > 1) {
		uint32_t h = cur->ev[i].len_ms / 2;

		a = b = *cur;
		a.ev[i].len_ms = h;
		b.ev[i].t_ms += h;
		b.ev[i].len_ms -= h;
		r = keep_half(cur, &a, &b, oracle, arg);
	}
	return r < 0 ? r : 0;
}

int sch_shrink(const struct prof_search *sp, const struct sched *in, sch_oracle *oracle, void *arg,
	       struct sched *out)
{
	struct sched cur = *in, t;
	int i, r, again = 1;

	/* fewer events: drop one at a time while it still breaks (a schedule
	 * has at most 8, so one at a time is ddmin's last stage, enough) */
	while (again && cur.n > 1) {
		again = 0;
		for (i = 0; i < cur.n; i++) {
			without(&cur, i, &t);
			r = oracle(arg, &t);
			if (r < 0) {
				*out = cur;
				return r;
			}
			if (r) {
				cur = t;
				again = 1;
				break;
			}
		}
	}
	/* each event narrowed: its PSNs, or a flap's window */
	for (i = 0; i < cur.n; i++) {
		/* a node fault without a window (crash, reboot, nic-reset): nothing to narrow */
		if (sch_node_event(sp, &cur.ev[i]) && !sch_windowed(sp, &cur.ev[i]))
			continue;
		r = cur.ev[i].len_ms ? narrow_window(&cur, i, oracle, arg) :
				       narrow_psns(&cur, i, oracle, arg);
		if (r < 0) {
			*out = cur;
			return r;
		}
	}
	*out = cur;
	return 0;
}
