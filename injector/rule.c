// SPDX-License-Identifier: MIT
/*
 * Rule text <-> struct inj_rule. The grammar (exact keywords, tc-like):
 *
 *   MATCH*  ACTION [SELECT] [gap N] [hold T] [after T] [for T] [lease T]
 *
 *   MATCH   qpn N[-M] | psn N[-M] | len N[-M] | src IPV4 | dst IPV4 | ecn ce
 *           | opcode CLASS[,CLASS...] | opcode 0xNN
 *           | qp N[-M]    the hook's Nth QP, in the order it first saw them (1 = first)
 *           | rpsn N[-M]  PSN counted from the QP's first PSN (0 = its first packet)
 *           | tx N[-M]    the packet's transmission of its PSN (1 = first, 2 = first resend)
 *           | proto roce|tcp|udp[,...]  which packets: RoCE's (the default),
 *             TCP segments, UDP datagrams not to port 4791; a list (roce,tcp)
 *           | port N[-M]  a TCP or UDP packet's source or destination port
 *           CLASS: data read_req read_resp ack nak atomic cnp other
 *   ACTION  count | drop | delay T [jitter T [uniform|normal]] | reorder
 *           | duplicate | corrupt [icrc|payload] | ecn | cnp | flap T
 *           (corrupt: a payload bit flipped; icrc (default) leaves the ICRC
 *           wrong, so the receiver discards it; payload makes it right, so
 *           the data lands in memory. cnp: the packet passes and a CNP goes
 *           back to its sender's QP, learned from the ACKs that pass)
 *   SELECT  P% (Bernoulli, default 100%) | every N | nth N | once
 *           | gemodel P R [H [K]]  (netem's p r 1-h 1-k: good->bad, bad->good,
 *             hit probability in the bad state (default 100%), in the good
 *             state (default 0%))
 *   gap N   with P%: only every Nth matched packet is a candidate
 *   hold T  reorder: how long a selected packet is held (default 1ms)
 *   after T / for T   the rule's time window, from when it is in the table
 *                     (flap T = drop 100% for T)
 *   lease T  the rule lives T unless its owner renews the lease (the agent
 *            does, for as long as the connection that added the rule)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "inj.h"
#include "../lib/num.h"
#include "../lib/opt.h"
#include "../lib/clock.h"

/* names from the ABI header's lists: one source of truth */
#define ACT_NAME(e, kw, ctr) kw,
static const char *const actions[INJ_ACT_MAX + 1] = { INJ_ACTIONS(ACT_NAME) NULL };
#define CLS_NAME(e, kw) kw,
static const char *const classes[INJ_CLS_MAX + 1] = { INJ_CLASSES(CLS_NAME) NULL };
/* proto's words: roce (every RoCE class), then INJ_PROTOS' in class order */
static const char *const protos[] = { "roce", INJ_PROTOS(CLS_NAME) NULL };

/* every keyword of the grammar, for "did you mean" ("ecn" is a match and an action) */
static const char *const keywords[] = {
	"qpn", "psn", "len", "src", "dst", "opcode", "qp", "rpsn", "tx", "requests", "responses",
	INJ_ACTIONS(ACT_NAME) "flap", "proto", "port",	/* a tie goes to the first: dorp is drop */
	"every", "nth",
	"once", "gemodel", "gap", "hold", "after", "for", "from", "lease", "jitter", "uniform", "normal",
	NULL,
};

void inj_rule_init(struct inj_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->opcode = -1;
	r->qpn_hi = 0xffffff;
	r->psn_hi = 0xffffff;
	r->len_max = 0xffff;
	r->port_hi = 0xffff;
	r->prob = INJ_PROB_ONE;
	r->action = INJ_ACT_COUNT;
}

const char *inj_action_name(int a)
{
	return a >= 0 && a < INJ_ACT_MAX ? actions[a] : "?";
}

const char *inj_class_name(int c)
{
	return c >= 0 && c < INJ_CLS_MAX ? classes[c] : "?";
}

struct parser {
	int argc, i;
	char **argv;
	char *err;
	size_t errlen;
};

static const char *next(struct parser *p, const char *what)
{
	if (p->i >= p->argc) {
		snprintf(p->err, p->errlen, "expected %s after '%s'", what, p->argv[p->i - 1]);
		return NULL;
	}
	return p->argv[p->i++];
}

static int number(struct parser *p, const char *what, enum num_kind kind, uint64_t max,
		  uint64_t *v)
{
	const char *s = next(p, what), *why;

	if (!s)
		return -EINVAL;
	if (num_parse(s, kind, 0, max, v, &why)) {
		snprintf(p->err, p->errlen, "%s '%s': %s", what, s, why);
		return -EINVAL;
	}
	return 0;
}

static int range(struct parser *p, const char *what, uint64_t max, uint32_t *lo, uint32_t *hi)
{
	const char *s = next(p, what), *why;
	char a[32], *dash;
	uint64_t x, y;

	if (!s)
		return -EINVAL;
	if (strlen(s) >= sizeof(a)) {	/* cut short it would mean another number */
		snprintf(p->err, p->errlen, "%s '%.40s...': too long", what, s);
		return -EINVAL;
	}
	snprintf(a, sizeof(a), "%s", s);
	dash = strchr(a, '-');
	if (dash)
		*dash = 0;
	if (num_parse(a, NUM_PLAIN, 0, max, &x, &why) ||
	    (dash && num_parse(dash + 1, NUM_PLAIN, 0, max, &y, &why))) {
		snprintf(p->err, p->errlen, "%s '%s': %s (0..%llu, or N-M)", what, s, why,
			 (unsigned long long)max);
		return -EINVAL;
	}
	if (!dash)
		y = x;
	if (x > y) {
		snprintf(p->err, p->errlen, "%s '%s': empty range", what, s);
		return -EINVAL;
	}
	*lo = (uint32_t)x;
	*hi = (uint32_t)y;
	return 0;
}

static uint32_t ppm_to_prob(uint64_t ppm)
{
	return ppm >= 1000000 ? INJ_PROB_ONE : (uint32_t)(ppm * (double)INJ_PROB_ONE / 1e6);
}

/* looks like a probability; prob() then checks its value and range */
static int is_percent(const char *s)
{
	return s && strchr(s, '%');
}

static int prob(struct parser *p, const char *what, uint32_t *out)
{
	uint64_t v;
	int r = number(p, what, NUM_PPM, 1000000, &v);

	if (!r)
		*out = ppm_to_prob(v);
	return r;
}

/* SELECT after an action: optional */
static int selector(struct parser *p, struct inj_rule *r)
{
	const char *s = p->i < p->argc ? p->argv[p->i] : NULL;
	uint64_t v;

	if (!s)
		return 0;
	if (is_percent(s))
		return prob(p, "probability", &r->prob);
	if (!strcmp(s, "every") || !strcmp(s, "nth")) {
		p->i++;
		r->model = s[0] == 'e' ? INJ_MODEL_EVERY_NTH : INJ_MODEL_ONLY_NTH;
		if (number(p, s, NUM_PLAIN, 0xffffffff, &v))
			return -EINVAL;
		if (!v) {
			snprintf(p->err, p->errlen, "%s: must be at least 1", s);
			return -EINVAL;
		}
		r->nth = (uint32_t)v;
		return 0;
	}
	if (!strcmp(s, "once")) {
		p->i++;
		r->model = INJ_MODEL_ONLY_NTH;
		r->nth = 1;
		return 0;
	}
	if (!strcmp(s, "gemodel")) {
		p->i++;
		r->model = INJ_MODEL_GEMODEL;
		r->ge_h = INJ_PROB_ONE;
		r->ge_k = 0;
		if (prob(p, "gemodel p (good->bad)", &r->ge_p) ||
		    prob(p, "gemodel r (bad->good)", &r->ge_r))
			return -EINVAL;
		if (is_percent(p->i < p->argc ? p->argv[p->i] : NULL) &&
		    prob(p, "gemodel 1-h (hit when bad)", &r->ge_h))
			return -EINVAL;
		if (is_percent(p->i < p->argc ? p->argv[p->i] : NULL) &&
		    prob(p, "gemodel 1-k (hit when good)", &r->ge_k))
			return -EINVAL;
	}
	return 0;
}

static int unknown(struct parser *p, const char *s)
{
	const char *near = opt_suggest(s, keywords);

	if (near && !strcmp(near, s))	/* a keyword, out of its place */
		snprintf(p->err, p->errlen, "'%s' cannot go here (one selection after the "
			 "action: drop 1%% | drop every 3 | drop once)", s);
	else if (near)
		snprintf(p->err, p->errlen, "unknown keyword '%s' (did you mean '%s'?)", s, near);
	else
		snprintf(p->err, p->errlen, "unknown keyword '%s'", s);
	return -EINVAL;
}

static int opcode(struct parser *p, struct inj_rule *r)
{
	const char *s = next(p, "an opcode class or 0xNN");
	char buf[128], *tok, *save;
	uint64_t v;
	int k;

	if (!s)
		return -EINVAL;
	if (!num_parse(s, NUM_PLAIN, 0, 255, &v, NULL)) {
		r->opcode = (int32_t)v;
		return 0;
	}
	if (strlen(s) >= sizeof(buf)) {
		snprintf(p->err, p->errlen, "opcode '%.40s...': too long", s);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; classes[k] && strcmp(classes[k], tok); k++)
			;
		if (!classes[k]) {
			snprintf(p->err, p->errlen,
				 "opcode '%s': expected 0..255 or classes "
				 "data|read_req|read_resp|ack|nak|atomic|cnp|other",
				 tok);
			return -EINVAL;
		}
		r->class_mask |= 1u << k;
	}
	return 0;
}

/* proto roce|tcp|udp[,...]: the RoCE classes (those of opcode, if it says
 * any) and other TCP or UDP packets; *ip set to the other protocols' bits */
static int proto(struct parser *p, uint32_t *ip)
{
	const char *s = next(p, "roce, tcp or udp");
	char buf[64], *tok, *save;
	int k;

	if (!s)
		return -EINVAL;
	if (strlen(s) >= sizeof(buf)) {
		snprintf(p->err, p->errlen, "proto '%.40s...': too long", s);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	*ip = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; protos[k] && strcmp(protos[k], tok); k++)
			;
		if (!protos[k]) {
			snprintf(p->err, p->errlen, "proto '%s': expected roce, tcp or udp "
				 "(a list: roce,tcp)", tok);
			return -EINVAL;
		}
		*ip |= k ? 1u << (INJ_CLS_MAX + k - 1) : INJ_CLS_ROCE_MASK;
	}
	return 0;
}

/* what the words so far said beyond the rule itself */
struct said {
	uint64_t after, dur;
	int from_traffic;
	uint32_t proto;		/* proto's class bits; 0: not said (RoCE) */
	int have_action, have_for, have_port;
};

/* a match word (qpn, psn, rpsn, qp, tx, requests, responses, len, src,
 * dst, opcode, ecn ce):
 * 1 taken, 0 not one, -EINVAL */
static int match_word(struct parser *p, struct inj_rule *r, const char *s, struct said *w)
{
	struct in_addr ip;
	uint32_t lo, hi;

	if (!strcmp(s, "qpn"))
		return range(p, "qpn", 0xffffff, &r->qpn_lo, &r->qpn_hi) ? -EINVAL : 1;
	if (!strcmp(s, "psn") || !strcmp(s, "rpsn")) {
		uint32_t rel = s[0] == 'r' ? INJ_REL_PSN : 0;

		if ((r->psn_lo || r->psn_hi != 0xffffff) && (r->rel & INJ_REL_PSN) != rel) {
			snprintf(p->err, p->errlen, "%s: the rule has %s already (one PSN range)", s,
				 rel ? "psn" : "rpsn");
			return -EINVAL;
		}
		if (range(p, s, 0xffffff, &r->psn_lo, &r->psn_hi))
			return -EINVAL;
		r->rel = (r->rel & ~INJ_REL_PSN) | rel;
		return 1;
	}
	if (!strcmp(s, "qp") || !strcmp(s, "tx")) {
		int q = s[0] == 'q';

		if (range(p, s, 0xffffffff, q ? &r->qp_lo : &r->tx_lo, q ? &r->qp_hi : &r->tx_hi))
			return -EINVAL;
		if (!(q ? r->qp_lo : r->tx_lo)) {
			snprintf(p->err, p->errlen, "%s: counts from 1 (%s 1 is the %s)", s, s,
				 q ? "first QP the hook sees" : "first transmission");
			return -EINVAL;
		}
		r->rel |= q ? INJ_REL_QP : INJ_REL_TX;
		return 1;
	}
	if (!strcmp(s, "requests") || !strcmp(s, "responses")) {
		uint32_t k = s[2] == 'q' ? INJ_REL_REQ : INJ_REL_RESP;

		if ((r->rel & INJ_REL_KIND) && (r->rel & INJ_REL_KIND) != k) {
			snprintf(p->err, p->errlen, "%s: the rule has %s already (one side of a QP)",
				 s, k == INJ_REL_REQ ? "responses" : "requests");
			return -EINVAL;
		}
		r->rel |= k;
		return 1;
	}
	if (!strcmp(s, "len"))
		return range(p, "len", 0xffff, &r->len_min, &r->len_max) ? -EINVAL : 1;
	if (!strcmp(s, "src") || !strcmp(s, "dst")) {
		const char *a4 = next(p, "an IPv4 address");

		if (!a4 || inet_pton(AF_INET, a4, &ip) != 1) {
			if (a4)
				snprintf(p->err, p->errlen, "%s '%s': expected an IPv4 address", s, a4);
			return -EINVAL;
		}
		*(s[0] == 's' ? &r->src_ip : &r->dst_ip) = ip.s_addr;
		return 1;
	}
	if (!strcmp(s, "opcode"))
		return opcode(p, r) ? -EINVAL : 1;
	if (!strcmp(s, "proto"))
		return proto(p, &w->proto) ? -EINVAL : 1;
	if (!strcmp(s, "port")) {
		if (range(p, "port", 0xffff, &lo, &hi))
			return -EINVAL;
		r->port_lo = (uint16_t)lo;
		r->port_hi = (uint16_t)hi;
		w->have_port = 1;
		return 1;
	}
	if (!strcmp(s, "ecn") && p->i < p->argc && !strcmp(p->argv[p->i], "ce")) {
		p->i++;
		r->ecn_ce = 1;
		return 1;
	}
	return 0;
}

/* a word of when and how long (after, for, gap, lease, hold, jitter):
 * 1 taken, 0 not one, -EINVAL */
static int time_word(struct parser *p, struct inj_rule *r, const char *s, struct said *w)
{
	uint64_t v;

	if (!strcmp(s, "after"))
		return number(p, "after", NUM_TIME, 365ULL * 86400 * 1000000000ULL, &w->after) ?
			       -EINVAL : 1;
	if (!strcmp(s, "for")) {
		w->have_for = 1;
		return number(p, "for", NUM_TIME, 365ULL * 86400 * 1000000000ULL, &w->dur) ?
			       -EINVAL : 1;
	}
	if (!strcmp(s, "from")) {	/* from traffic: the window counts from its first packet */
		const char *t = next(p, "traffic");

		if (!t || strcmp(t, "traffic")) {
			if (t)
				snprintf(p->err, p->errlen, "from '%s': expected 'from traffic' (after "
					 "and for count from the rule's first packet)", t);
			return -EINVAL;
		}
		w->from_traffic = 1;
		return 1;
	}
	if (!strcmp(s, "gap")) {
		/* the action resets its selection: a gap before it would be
		 * lost, and every/nth/once use the same counter */
		if (!w->have_action || r->model != INJ_MODEL_BERNOULLI) {
			snprintf(p->err, p->errlen, "gap: goes after an action with a P%% selection "
				 "(drop 10%% gap 5)");
			return -EINVAL;
		}
		if (number(p, "gap", NUM_PLAIN, 0xffffffff, &v))
			return -EINVAL;
		r->nth = (uint32_t)v;
		return 1;
	}
	if (!strcmp(s, "lease")) {
		if (number(p, "lease", NUM_TIME, 3600000000000ULL, &v))
			return -EINVAL;
		if (v < 100000000ULL) {
			snprintf(p->err, p->errlen, "lease: at least 100ms");
			return -EINVAL;
		}
		r->lease_ns = v;
		return 1;
	}
	if (!strcmp(s, "hold")) {
		if (number(p, "hold", NUM_TIME, 10000000000ULL, &v))
			return -EINVAL;
		r->hold_ns = v;
		return 1;
	}
	if (!strcmp(s, "jitter")) {
		if (number(p, "jitter", NUM_TIME, 10000000000ULL, &v))
			return -EINVAL;
		r->jitter_ns = v;
		if (p->i < p->argc &&
		    (!strcmp(p->argv[p->i], "normal") || !strcmp(p->argv[p->i], "uniform")))
			r->jitter_dist = !strcmp(p->argv[p->i++], "normal") ? INJ_JITTER_NORMAL :
									     INJ_JITTER_UNIFORM;
		return 1;
	}
	return 0;
}

/* an action (flap, or one of actions[] with its argument and selection):
 * 0, or -EINVAL (an unknown word: said, with "did you mean") */
static int action_word(struct parser *p, struct inj_rule *r, const char *s, struct said *w)
{
	uint64_t v;
	int a;

	if (!strcmp(s, "flap")) {
		if (w->have_action++) {
			snprintf(p->err, p->errlen, "one action per rule ('flap' after another)");
			return -EINVAL;
		}
		r->action = INJ_ACT_DROP;
		r->prob = INJ_PROB_ONE;
		w->have_for = 1;
		return number(p, "flap duration", NUM_TIME, 365ULL * 86400 * 1000000000ULL, &w->dur) ?
			       -EINVAL : 0;
	}
	for (a = 0; actions[a] && strcmp(actions[a], s); a++)
		;
	if (!actions[a])
		return unknown(p, s);
	if (w->have_action++) {
		snprintf(p->err, p->errlen, "one action per rule ('%s' after another)", s);
		return -EINVAL;
	}
	r->action = (uint8_t)a;
	r->model = INJ_MODEL_BERNOULLI;	/* a new action starts a new selection */
	r->prob = INJ_PROB_ONE;
	r->nth = 0;
	if (a == INJ_ACT_DELAY) {
		if (number(p, "delay", NUM_TIME, 10000000000ULL, &v))
			return -EINVAL;
		r->delay_ns = v;
	}
	r->corrupt = INJ_CORRUPT_ICRC;
	if (a == INJ_ACT_CORRUPT && p->i < p->argc &&
	    (!strcmp(p->argv[p->i], "icrc") || !strcmp(p->argv[p->i], "payload")))
		r->corrupt = !strcmp(p->argv[p->i++], "payload") ? INJ_CORRUPT_PAYLOAD :
								    INJ_CORRUPT_ICRC;
	return selector(p, r) ? -EINVAL : 0;
}

/* proto and port against the rest of the rule: RoCE's fields and actions
 * need RoCE alone; a port needs tcp or udp. The class mask made whole. */
static int proto_check(struct inj_rule *r, const struct said *w, char *err, size_t errlen)
{
	uint32_t ip = w->proto & ~INJ_CLS_ROCE_MASK;
	const char *roce_only = NULL;

	if (w->have_port && !ip) {
		snprintf(err, errlen, "port: matches TCP or UDP packets: say proto tcp or udp "
			 "(proto roce,tcp port 4420)");
		return -EINVAL;
	}
	if (!ip)
		return 0;
	if (r->qpn_lo || r->qpn_hi != 0xffffff)
		roce_only = "qpn";
	else if (r->psn_lo || r->psn_hi != 0xffffff)
		roce_only = "psn";
	else if (r->opcode >= 0)
		roce_only = "opcode 0xNN";
	else if (r->rel)
		roce_only = "qp, rpsn, tx, requests and responses";
	else if (r->ecn_ce)
		roce_only = "ecn ce";
	else if (r->action == INJ_ACT_CORRUPT || r->action == INJ_ACT_CNP || r->action == INJ_ACT_ECN)
		roce_only = inj_action_name(r->action);
	if (roce_only) {
		snprintf(err, errlen, "%s: RoCE's alone; this rule's proto has tcp or udp", roce_only);
		return -EINVAL;
	}
	if ((w->proto & INJ_CLS_ROCE_MASK) && r->class_mask)
		r->class_mask |= ip;	/* opcode's classes, and the others */
	else if (w->proto & INJ_CLS_ROCE_MASK)
		r->class_mask = w->proto;
	else if (r->class_mask) {
		snprintf(err, errlen, "opcode: RoCE's alone; say proto roce,tcp to match both");
		return -EINVAL;
	} else
		r->class_mask = ip;
	return 0;
}

/* The grammar at the top of this file, word by word: what to match, when,
 * then the action */
int inj_rule_parse(struct inj_rule *r, int argc, char **argv, int update, char *err, size_t errlen)
{
	struct parser p = { argc, 0, argv, err, errlen };
	struct said w = { 0 };
	int k;

	while (p.i < argc) {
		const char *s = argv[p.i++];

		if ((k = match_word(&p, r, s, &w)) || (k = time_word(&p, r, s, &w)))
			if (k < 0)
				return k;
		if (!k && (k = action_word(&p, r, s, &w)))
			return k;
	}
	if (!w.have_action && !update) {
		snprintf(err, errlen, "no action (count|drop|delay|reorder|duplicate|corrupt|ecn|cnp|flap)");
		return -EINVAL;
	}
	if (proto_check(r, &w, err, errlen))
		return -EINVAL;
	if (r->action == INJ_ACT_REORDER && !r->hold_ns)
		r->hold_ns = 1000000;
	if (w.from_traffic && !w.after && !w.have_for) {
		snprintf(err, errlen, "from traffic: with after or for (drop after 100ms for 40ms "
			 "from traffic)");
		return -EINVAL;
	}
	if (w.after || w.have_for) {	/* from when the rule is in the table, or its traffic */
		r->start_ns = w.after;
		r->stop_ns = w.have_for ? w.after + w.dur : 0;
		r->from_traffic = (__u32)w.from_traffic;
		if (!w.from_traffic)
			r->flags |= INJ_RULE_F_WINDOW_REL;
	}
	return 0;
}

void inj_rule_window_start(struct inj_rule *r)
{
	uint64_t now;

	if (!(r->flags & INJ_RULE_F_WINDOW_REL))
		return;
	now = rtb_now_ns();
	r->start_ns += now;	/* never 0: the window is on */
	if (r->stop_ns)
		r->stop_ns += now;
	r->flags &= (__u16)~INJ_RULE_F_WINDOW_REL;
}

static size_t pct(char *b, size_t len, uint32_t p)
{
	return (size_t)snprintf(b, len, "%.6g%%", p == INJ_PROB_ONE ? 100.0 : p * 100.0 / 4294967296.0);
}

#define APPEND(...)                                                               \
	do {                                                                      \
		if (n < len)                                                      \
			n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__);     \
	} while (0)

/* the match words of r at buf (len): the length they would take */
static size_t format_match(const struct inj_rule *r, char *buf, size_t len)
{
	char a[32];
	size_t n = 0;
	int k, first = 1;

	buf[0] = 0;
	if (r->qpn_lo || r->qpn_hi != 0xffffff)
		APPEND(r->qpn_lo == r->qpn_hi ? "qpn 0x%x " : "qpn 0x%x-0x%x ", r->qpn_lo, r->qpn_hi);
	if (r->opcode >= 0)
		APPEND("opcode 0x%02x ", r->opcode);
	if (r->class_mask & ~INJ_CLS_ROCE_MASK) {
		APPEND("proto %s", r->class_mask & INJ_CLS_ROCE_MASK ? "roce" : "");
		first = !(r->class_mask & INJ_CLS_ROCE_MASK);
		for (k = 1; protos[k]; k++)
			if (r->class_mask & (1u << (INJ_CLS_MAX + k - 1))) {
				APPEND("%s%s", first ? "" : ",", protos[k]);
				first = 0;
			}
		APPEND(" ");
		if (r->port_lo || r->port_hi != 0xffff)
			APPEND(r->port_lo == r->port_hi ? "port %u " : "port %u-%u ", r->port_lo,
			       r->port_hi);
		first = 1;
	}
	if ((r->class_mask & INJ_CLS_ROCE_MASK) != INJ_CLS_ROCE_MASK &&
	    (r->class_mask & INJ_CLS_ROCE_MASK)) {
		APPEND("opcode ");
		for (k = 0; k < INJ_CLS_MAX; k++)
			if (r->class_mask & (1u << k)) {
				APPEND("%s%s", first ? "" : ",", classes[k]);
				first = 0;
			}
		APPEND(" ");
	}
	if (r->rel & INJ_REL_QP)
		APPEND(r->qp_lo == r->qp_hi ? "qp %u " : "qp %u-%u ", r->qp_lo, r->qp_hi);
	if (r->rel & INJ_REL_KIND)
		APPEND("%s ", r->rel & INJ_REL_REQ ? "requests" : "responses");
	if (r->psn_lo || r->psn_hi != 0xffffff)
		APPEND(r->psn_lo == r->psn_hi ? "%spsn %u " : "%spsn %u-%u ",
		       r->rel & INJ_REL_PSN ? "r" : "", r->psn_lo, r->psn_hi);
	if (r->rel & INJ_REL_TX)
		APPEND(r->tx_lo == r->tx_hi ? "tx %u " : "tx %u-%u ", r->tx_lo, r->tx_hi);
	if (r->len_min || r->len_max != 0xffff)
		APPEND("len %u-%u ", r->len_min, r->len_max);
	if (r->src_ip)
		APPEND("src %s ", inet_ntop(AF_INET, &r->src_ip, a, sizeof(a)));
	if (r->dst_ip)
		APPEND("dst %s ", inet_ntop(AF_INET, &r->dst_ip, a, sizeof(a)));
	if (r->ecn_ce)
		APPEND("ecn ce ");
	return n;
}

void inj_rule_format(const struct inj_rule *r, char *buf, size_t len)
{
	size_t n = format_match(r, buf, len);

	APPEND("%s", inj_action_name(r->action));
	if (r->action == INJ_ACT_CORRUPT)
		APPEND(r->corrupt == INJ_CORRUPT_PAYLOAD ? " payload" : " icrc");
	if (r->action == INJ_ACT_DELAY) {
		APPEND(" %.3gms", r->delay_ns / 1e6);
		if (r->jitter_ns)
			APPEND(" jitter %.3gms%s", r->jitter_ns / 1e6,
			       r->jitter_dist == INJ_JITTER_NORMAL ? " normal" : "");
	}
	switch (r->model) {
	case INJ_MODEL_EVERY_NTH:
		APPEND(" every %u", r->nth);
		break;
	case INJ_MODEL_ONLY_NTH:
		APPEND(" nth %u", r->nth);
		break;
	case INJ_MODEL_GEMODEL:
		APPEND(" gemodel ");
		n += pct(buf + n, n < len ? len - n : 0, r->ge_p);
		APPEND(" ");
		n += pct(buf + n, n < len ? len - n : 0, r->ge_r);
		APPEND(" ");
		n += pct(buf + n, n < len ? len - n : 0, r->ge_h);
		APPEND(" ");
		n += pct(buf + n, n < len ? len - n : 0, r->ge_k);
		break;
	default:
		if (r->action != INJ_ACT_COUNT) {
			APPEND(" ");
			n += pct(buf + n, n < len ? len - n : 0, r->prob);
		}
		if (r->nth > 1)
			APPEND(" gap %u", r->nth);
	}
	if (r->action == INJ_ACT_REORDER)
		APPEND(" hold %.3gms", r->hold_ns / 1e6);
	if ((r->flags & INJ_RULE_F_WINDOW_REL) || r->from_traffic) {	/* offsets */
		if (r->start_ns)
			APPEND(" after %.3gs", r->start_ns / 1e9);
		if (r->stop_ns)
			APPEND(" for %.3gs", (r->stop_ns - r->start_ns) / 1e9);
		if (r->from_traffic)
			APPEND(" from traffic");
	} else if (r->start_ns || r->stop_ns) {
		uint64_t now = rtb_now_ns();

		if (r->stop_ns && now >= r->stop_ns)
			APPEND(" (window over)");
		else if (now < r->start_ns)
			APPEND(" after %.3gs", (r->start_ns - now) / 1e9);
		if (r->stop_ns && now < r->stop_ns)
			APPEND(" for %.3gs", (r->stop_ns - (now > r->start_ns ? now : r->start_ns)) / 1e9);
	}
	if (r->disabled)
		APPEND(" (off)");
}

json_t *inj_ctr_json(const struct inj_rule_ctr *k)
{
	json_t *o = json_object();

#define CTR_JSON(f) json_object_set_new(o, #f, json_integer((json_int_t)k->f));
	INJ_COUNTERS(CTR_JSON)
#undef CTR_JSON
	return o;
}

void inj_ctr_print(FILE *f, const struct inj_rule_ctr *k)
{
#define CTR_TEXT(n) fprintf(f, " %s %llu", #n, (unsigned long long)k->n);
	INJ_COUNTERS(CTR_TEXT)
#undef CTR_TEXT
}
