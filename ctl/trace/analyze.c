// SPDX-License-Identifier: MIT
/*
 * A RoCE packet trace, read and judged (trace.h): the packets parsed
 * (parse.c), each capture point's flows and their pairing (flows.c), then
 * per capture point a summary of what the judgements found (judge.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl/trace/trace.h"
#include "ctl/trace/tr.h"

/* every RoCEv2 packet of the file into s, with its flow: 0, -ENOMEM, or
 * -EIO with the reader's err */
static int read_packets(struct pcapng_r *r, struct tr *s, char *err, size_t errlen)
{
	struct pcapng_pkt k;
	int rc;

	while ((rc = pcapng_next(r, &k, err, errlen)) == 1) {
		uint8_t src[16], dst[16];
		struct tp t = { 0 };
		int v6 = 0, was, fi;
		const struct pcapng_if *ifc = pcapng_iface(r, (int)k.ifid);

		if (!ifc || ifc->linktype != PCAPNG_LINKTYPE_ETHERNET || !parse(&k, &t, src, dst, &v6))
			continue;
		verdict_of(k.comment, &t);
		t.ts = k.ts_ns;
		t.frame = k.frame;
		t.cap = (int)k.ifid;
		if (!s->np || t.ts < s->t0)
			s->t0 = t.ts;
		fi = flow_of(s, t.cap, src, dst, v6, t.dqpn);
		was = 0;	/* a CNP (PSN 0 always) is never a resend */
		if (fi < 0 || (t.cls != C_CNP && psn_mark(&s->f[fi].seen, t.psn, &was)))
			return -ENOMEM;
		t.flow = fi;
		t.resent = was;
		if (nic_resendable(&t)) {
			if (psn_mark(&s->f[fi].sent, t.psn, &t.resent_req))
				return -ENOMEM;
		}
		if (s->np == s->cp) {
			size_t n = s->cp ? s->cp * 2 : 1024;
			struct tp *np = realloc(s->p, n * sizeof(*np));

			if (!np)
				return -ENOMEM;
			s->p = np;
			s->cp = n;
		}
		s->p[s->np] = t;
		if (push(&s->f[fi], (int)s->np))
			return -ENOMEM;
		s->np++;
	}
	return rc < 0 ? -EIO : 0;
}

/* the capture points (interfaces): device, direction (from the capture's
 * description), records lost, the hook's own count of resent packets, and
 * the point that sees the same device the other way */
static void read_caps(struct pcapng_r *r, struct tr *s)
{
	int i, o;

	s->nc = pcapng_nif(r);
	for (i = 0; i < s->nc; i++) {
		const struct pcapng_if *ifc = pcapng_iface(r, i);
		char dir[32] = "";

		s->c[i].dir = -1;
		s->c[i].opposite = -1;
		snprintf(s->c[i].dev, sizeof(s->c[i].dev), "%s", ifc->name);
		if (sscanf(ifc->desc, "%*63s %31s", dir) == 1)
			s->c[i].dir = !strcmp(dir, "egress") ? 1 : !strcmp(dir, "ingress") ? 0 : -1;
		s->c[i].lost_records = ifc->have_stats ? ifc->drop : 0;
		s->c[i].inj_resent = -1;
		if (sscanf(ifc->isb_comment, "injector resent=%lld marked", &s->c[i].inj_resent) != 1 ||
		    !strstr(ifc->isb_comment, " marked"))
			s->c[i].inj_resent = -1;
	}
	for (i = 0; i < s->nc; i++)
		for (o = 0; o < s->nc; o++)
			if (o != i && s->c[i].dir >= 0 && s->c[o].dir == 1 - s->c[i].dir &&
			    !strcmp(s->c[o].dev, s->c[i].dev))
				s->c[i].opposite = o;
}

/* a packet the NIC may resend, by its PSN from the flow's first (serial,
 * so that one past a wrap sorts after) and whether the hook marked it */
struct mark {
	int32_t rel;
	int marked;
};

static int mark_cmp(const void *a, const void *b)
{
	const struct mark *x = a, *y = b;

	return (x->rel > y->rel) - (x->rel < y->rel);
}

static int32_t rel_psn(uint32_t psn, uint32_t first)
{
	uint32_t d = (psn - first) & 0xffffff;

	return d < 0x800000 ? (int32_t)d : (int32_t)d - 0x1000000;
}

/* the hook's marks of one flow against its copies. Of a PSN's c copies the
 * hook must mark c - 1 (it swaps the PSN into its window: whichever copy
 * came second on whichever CPU), or c when it met the first one 64 or more
 * below its highest (inject_abi.h): an overtaken packet, possible only if
 * the flow has a PSN that far above. Ring order does not matter, since two
 * CPUs may write their records in the other order. -ENOMEM or 0 */
static int hook_marks(const struct tr *s, struct flow *f)
{
	struct mark *m = malloc((f->npk ? f->npk : 1) * sizeof(*m));
	size_t n = 0, k, e;
	int32_t hi = INT32_MIN;

	if (!m)
		return -ENOMEM;
	for (k = 0; k < f->npk; k++) {
		const struct tp *t = &s->p[f->pk[k]];

		if (!nic_resendable(t) || t->verdict == INJ_VERDICT_COPY)
			continue;	/* the injector's own duplicate is never tracked */
		f->marked += t->marked;
		m[n].rel = rel_psn(t->psn, f->first_psn);
		m[n].marked = t->marked;
		if (m[n].rel > hi)
			hi = m[n].rel;
		n++;
	}
	qsort(m, n, sizeof(*m), mark_cmp);
	for (k = 0; k < n; k = e) {
		long marks = 0, extra;

		for (e = k; e < n && m[e].rel == m[k].rel; e++)
			marks += m[e].marked;
		extra = marks - (long)(e - k - 1);
		if (extra == 1 && (int64_t)hi - m[k].rel >= INJ_QP_WIN)
			f->overtaken++;
		else if (extra)
			f->unexplained++;
	}
	free(m);
	return 0;
}

/* a BTH opcode (RC, UC, RD, UD, XRC alike: its low 5 bits) that ends a
 * message: SEND or WRITE LAST and ONLY, READ response LAST and ONLY, an
 * ACK, an atomic and its acknowledge, a READ request (one packet each) */
static int ends_message(uint8_t op)
{
	switch (op & 0x1f) {
	case 0x02: case 0x03: case 0x04: case 0x05:	/* SEND last, only (+imm) */
	case 0x08: case 0x09: case 0x0a: case 0x0b:	/* WRITE last, only (+imm) */
	case 0x0c:					/* READ request */
	case 0x0f: case 0x10: case 0x11: case 0x12:	/* READ resp last, only; ACK; atomic ack */
	case 0x13: case 0x14:				/* CmpSwap, FetchAdd */
	case 0x16: case 0x17:				/* SEND last, only with invalidate */
		return 1;
	}
	return 0;
}

/* a packet of the responder's (as the injector's is_response) */
static int is_response(const struct tp *t)
{
	return t->cls == C_ACK || t->cls == C_NAK || t->cls == C_READ_RESP ||
	       (t->cls == C_ATOMIC && (t->op & 0x1f) == 0x12);
}

static void side_tally(struct flow *f, const struct tp *t, size_t j)
{
	int k = is_response(t);
	uint32_t r;

	if (!f->side[k].packets++) {
		f->side[k].first = j;
		f->side[k].first_psn = t->psn;
	}
	r = (t->psn - f->side[k].first_psn) & 0xffffff;
	if (r < 0x800000 && r > f->side[k].top)
		f->side[k].top = r;
	if (!t->resent && ends_message(t->op))
		f->side[k].msgs++;
}

/* each capture point's and flow's counts */
static void tally(struct tr *s)
{
	size_t j;

	for (j = 0; j < s->np; j++) {
		struct tp *t = &s->p[j];
		struct flow *f = &s->f[t->flow];

		s->c[t->cap].packets++;
		s->c[t->cap].verdicts[t->verdict < INJ_VERDICT_MAX ? t->verdict : 0]++;
		f->packets++;
		if (t->resent) {
			s->c[t->cap].resent++;
			f->resent++;
		}
		side_tally(f, t, j);
		if (f->packets == 1)
			f->first_psn = t->psn;
		f->last_psn = t->psn;
		if (t->cls == C_READ_REQ)
			f->has_read = 1;
		if (t->cls == C_DATA)
			f->has_data = 1;
		if (is_request(t->cls))
			f->req++;
	}
}

struct hq {
	size_t first;
	int flow;
};

static int hq_cmp(const void *a, const void *b)
{
	const struct hq *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* capture point i's QPs as its hook numbers them (qp N: the order it first
 * saw each QP, by either side's packets; its requests and its responses
 * share the number, each side a row), what rdma-inject rules name */
static json_t *hook_qps(const struct tr *s, int i)
{
	json_t *out = json_array();
	struct hq *v = calloc(s->nf + 1, sizeof(*v));
	size_t n = 0, j;

	if (!v)
		return out;
	for (j = 0; j < s->nf; j++) {
		const struct flow *f = &s->f[j];
		int k0 = f->side[0].packets ? 0 : 1;

		if (f->cap != i || !f->side[k0].packets)
			continue;
		v[n++] = (struct hq){ f->side[1].packets && f->side[1].first < f->side[k0].first ?
					      f->side[1].first : f->side[k0].first, (int)j };
	}
	qsort(v, n, sizeof(*v), hq_cmp);
	for (j = 0; j < n; j++) {
		const struct flow *f = &s->f[v[j].flow];
		char a[64], b[64];

		addr_str(f, f->src, a, sizeof(a));
		addr_str(f, f->dst, b, sizeof(b));
		for (int k = 0; k < 2; k++)
			if (f->side[k].packets)
				json_array_append_new(
					out, json_pack("{s:I,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I}", "qp",
						       (json_int_t)j + 1, "kind",
						       k ? "responses" : "requests", "src", a, "dst", b,
						       "qpn", (json_int_t)f->dqpn, "packets",
						       (json_int_t)f->side[k].packets, "first_psn",
						       (json_int_t)f->side[k].first_psn, "psns",
						       (json_int_t)f->side[k].top + 1, "messages",
						       (json_int_t)f->side[k].msgs));
	}
	free(v);
	return out;
}

/* o[k] += 1 */
static void count(json_t *o, const char *k)
{
	json_object_set_new(o, k, json_integer(json_integer_value(json_object_get(o, k)) + 1));
}

/* capture point i's verdicts, and per rule the packets it matched, by verdict */
static void verdicts_json(const struct tr *s, int i, json_t *c)
{
	json_t *verd = json_object(), *rules = json_object();
	size_t j;
	int v;

	for (v = 0; v < INJ_VERDICT_MAX; v++)
		if (s->c[i].verdicts[v])
			json_object_set_new(verd, verdict_name[v],
					    json_integer((json_int_t)s->c[i].verdicts[v]));
	for (j = 0; j < s->np; j++) {
		const struct tp *t = &s->p[j];
		char id[16];
		json_t *ro;

		if (t->cap != i || !t->rule)
			continue;
		snprintf(id, sizeof(id), "%u", t->rule);
		ro = json_object_get(rules, id);
		if (!ro) {
			ro = json_pack("{s:I}", "matched", (json_int_t)0);
			json_object_set_new(rules, id, ro);
		}
		count(ro, "matched");
		if (t->verdict != INJ_VERDICT_PASS)
			count(ro, verdict_name[t->verdict]);
	}
	json_object_set_new(c, "verdicts", verd);
	json_object_set_new(c, "rules", rules);
}

/* whether a flow's new PSNs skip one: at an ingress capture point, packets
 * lost before it (at a switch) that it never saw; go-back-N cannot be judged
 * there */
static int lost_upstream(const struct tr *s, const struct flow *f)
{
	uint32_t max = 0;
	int have = 0;
	size_t q;

	for (q = 0; q < f->npk; q++) {
		const struct tp *t = &s->p[f->pk[q]];

		if ((t->cls != C_DATA && t->cls != C_ATOMIC) || t->resent_req)
			continue;
		if (have && psn_cmp(t->psn, max) > 1)
			return 1;
		if (!have || psn_cmp(t->psn, max) > 0)
			max = t->psn;
		have = 1;
	}
	return 0;
}

/* capture point i's flows into c: "qps", "losses" (each judged), the
 * go-back-N and READ checks, and the resent requests */
static void flows_json(struct tr *s, int i, json_t *c)
{
	json_t *qps = json_array(), *losses = json_array();
	json_t *gbn = json_pack("{s:i,s:i,s:[]}", "checked_qps", 0, "episodes", 0, "deviations");
	json_t *rd = json_pack("{s:i,s:[]}", "rereads", 0, "deviations");
	json_int_t nresent_req = 0, novertaken = 0, nunexplained = 0, nmarked = 0;
	size_t j, q;

	s->timer_ns = ack_timer(s, i);
	for (j = 0; j < s->nf; j++) {
		struct flow *f = &s->f[j];
		char a[64], b[64];

		if (f->cap != i)
			continue;
		novertaken += (json_int_t)f->overtaken;
		nunexplained += (json_int_t)f->unexplained;
		nmarked += (json_int_t)f->marked;
		addr_str(f, f->src, a, sizeof(a));
		addr_str(f, f->dst, b, sizeof(b));
		json_array_append_new(qps, json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:o}", "src", a,
						     "dst", b, "qpn", (json_int_t)f->dqpn, "packets",
						     (json_int_t)f->packets, "resent_packets",
						     (json_int_t)f->resent, "first_psn",
						     (json_int_t)f->first_psn, "last_psn",
						     (json_int_t)f->last_psn, "peer_qpn",
						     f->peer >= 0 ? json_integer((json_int_t)s->f[f->peer].dqpn) :
								    json_null()));
		for (q = 0; q < f->npk; q++) {
			const struct tp *t = &s->p[f->pk[q]];

			nresent_req += t->resent_req;
			if (t->verdict == INJ_VERDICT_DROP || t->verdict == INJ_VERDICT_CORRUPT)
				json_array_append_new(losses, loss(s, t, q));
		}
		if (f->has_data && !f->has_read && s->c[i].dir == 0 && lost_upstream(s, f)) {
			count(gbn, "lost_upstream_qps");
		} else if (f->has_data && !f->has_read) {
			count(gbn, "checked_qps");
			go_back_n(s, f, gbn);
		}
		if (f->has_read)
			read_check(s, f, rd);
	}
	json_object_set_new(c, "resent_requests", json_integer(nresent_req));
	json_object_set_new(c, "overtaken_past_window", json_integer(novertaken));
	if (s->c[i].inj_resent >= 0) {	/* the hook marked its resent packets */
		json_object_set_new(c, "injector_marked", json_integer(nmarked));
		json_object_set_new(c, "injector_unexplained", json_integer(nunexplained));
	}
	json_object_set_new(c, "qps", qps);
	json_object_set_new(c, "hook_qps", hook_qps(s, i));
	json_object_set_new(c, "losses", losses);
	json_object_set_new(c, "go_back_n", gbn);
	json_object_set_new(c, "read_retransmission", rd);
}

/* capture point i: what it saw and what the judgements found */
static json_t *capture_json(struct tr *s, int i, const char *path, const json_t *nodes,
			    const json_t *switches)
{
	const json_t *node = nodes ? json_object_get(nodes, s->c[i].dev) : NULL;
	int sw = switches ? json_is_true(json_object_get(switches, s->c[i].dev)) :
			    trace_switch_port(s->c[i].dev);
	json_t *c, *trig = json_object(), *losses;
	json_int_t ncnp = 0;
	size_t j;

	c = json_pack("{s:s,s:i,s:s,s:s,s:O,s:I,s:I,s:I}", "file", path, "iface", i, "dev",
		      s->c[i].dev, "dir", s->c[i].dir == 1 ? "egress" : s->c[i].dir == 0 ?
		      "ingress" : "unknown", "node", node ? node : json_null(), "packets",
		      (json_int_t)s->c[i].packets, "resent_packets", (json_int_t)s->c[i].resent,
		      "lost_records", (json_int_t)s->c[i].lost_records);
	json_object_set_new(c, "switch", json_boolean(sw));
	verdicts_json(s, i, c);
	flows_json(s, i, c);
	losses = json_object_get(c, "losses");
	for (j = 0; j < json_array_size(losses); j++)
		count(trig, json_string_value(json_object_get(json_array_get(losses, j), "trigger")));
	if (s->c[i].inj_resent >= 0) {	/* the hook's own count (injector/trace.c) */
		json_object_set_new(c, "injector_resent", json_integer(s->c[i].inj_resent));
	}
	json_object_set_new(c, "loss_triggers", trig);
	json_object_set_new(c, "latency_ns",
			    json_pack("{s:o,s:o,s:o}", "retransmission",
				      lat_summary(losses, "retransmission_latency_ns"), "nak_generation",
				      lat_summary(losses, "nak_generation_latency_ns"), "nak_response",
				      lat_summary(losses, "nak_response_latency_ns")));
	for (j = 0; j < s->np; j++)
		ncnp += s->p[j].cap == i && s->p[j].cls == C_CNP;
	json_object_set_new(c, "cnp_packets", json_integer(ncnp));
	if (ncnp)
		json_object_set_new(c, "cnp_reaction", cnp_reaction(s, i));
	return c;
}

json_t *trace_analyze(const char *path, const json_t *nodes, const json_t *switches, char *err,
		      size_t errlen)
{
	struct pcapng_r *r = pcapng_open(path, err, errlen);
	struct tr s = { 0 };
	json_t *out = NULL;
	int rc, i;

	if (!r)
		return NULL;
	rc = read_packets(r, &s, err, errlen);
	if (rc == -EIO) {
		char e2[256];

		snprintf(e2, sizeof(e2), "%s", err);
		snprintf(err, errlen, "%s: %s", path, e2);
		goto out;
	}
	read_caps(r, &s);
	tally(&s);
	for (size_t j = 0; !rc && j < s.nf; j++)
		if (s.c[s.f[j].cap].inj_resent >= 0)
			rc = hook_marks(&s, &s.f[j]);
	if (rc || pair(&s)) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	out = json_pack("{s:s,s:[]}", "file", path, "captures");
	for (i = 0; i < s.nc; i++)
		json_array_append_new(json_object_get(out, "captures"),
				      capture_json(&s, i, path, nodes, switches));
out:
	pcapng_close(r);
	tr_free(&s);
	return out;
}

json_int_t trace_retransmissions(const json_t *a)
{
	json_t *caps = json_object_get(a, "captures"), *c;
	json_int_t n = 0;
	size_t i;

	json_array_foreach(caps, i, c)
		if (!strcmp(json_string_value(json_object_get(c, "dir")) ?: "", "egress") &&
		    !trace_capture_switch(c))
			n += json_integer_value(json_object_get(c, "resent_requests"));
	return n;
}

void trace_print(FILE *f, const json_t *a)
{
	json_t *caps = json_object_get(a, "captures"), *c;
	size_t i;

	fprintf(f, "%s\n", json_string_value(json_object_get(a, "file")));
	fprintf(f, "  %-10s %-8s %-7s %9s %7s %6s %6s  %s\n", "DEV", "DIR", "NODE", "PACKETS",
		"RESENT", "LOST", "GBN", "LOSSES BY TRIGGER (median retransmission latency)");
	json_array_foreach(caps, i, c) {
		json_t *tr = json_object_get(c, "loss_triggers"), *v, *gb = json_object_get(c, "go_back_n");
		json_t *m = json_object_get(json_object_get(json_object_get(c, "latency_ns"),
							    "retransmission"), "median");
		const char *k;
		int first = 1;
		size_t di;

		fprintf(f, "  %-10s %-8s %-7s %9lld %7lld %6zu %6s  ",
			json_string_value(json_object_get(c, "dev")),
			json_string_value(json_object_get(c, "dir")),
			json_string_value(json_object_get(c, "node")) ?: "-",
			(long long)json_integer_value(json_object_get(c, "packets")),
			(long long)json_integer_value(json_object_get(c, "resent_packets")),
			json_array_size(json_object_get(c, "losses")),
			!json_integer_value(json_object_get(gb, "checked_qps")) ? "-" :
			json_array_size(json_object_get(gb, "deviations")) ? "DEV" : "ok");
		json_object_foreach(tr, k, v) {
			fprintf(f, "%s%s %lld", first ? "" : ", ", k, (long long)json_integer_value(v));
			first = 0;
		}
		if (json_is_integer(m))
			fprintf(f, " (%.3f ms)", (double)json_integer_value(m) / 1e6);
		if (json_integer_value(json_object_get(c, "lost_records")))
			fprintf(f, "  [%lld records lost: incomplete]",
				(long long)json_integer_value(json_object_get(c, "lost_records")));
		fputc('\n', f);
		json_array_foreach(json_object_get(gb, "deviations"), di, v)
			fprintf(f, "    go-back-N: qpn 0x%llx frame %lld: %s\n",
				(long long)json_integer_value(json_object_get(v, "qpn")),
				(long long)json_integer_value(json_object_get(v, "frame")),
				json_string_value(json_object_get(v, "what")));
		json_array_foreach(json_object_get(json_object_get(c, "read_retransmission"), "deviations"), di, v)
			fprintf(f, "    READ: qpn 0x%llx frame %lld: %s\n",
				(long long)json_integer_value(json_object_get(v, "qpn")),
				(long long)json_integer_value(json_object_get(v, "frame")),
				json_string_value(json_object_get(v, "what")));
		json_array_foreach(json_object_get(c, "cnp_reaction"), di, v) {
			json_t *nx = json_object_get(v, "next_packet_ns");

			fprintf(f, "    CNP: %lld from %s to %s qpn 0x%llx: ",
				(long long)json_integer_value(json_object_get(v, "cnps")),
				json_string_value(json_object_get(v, "from")),
				json_string_value(json_object_get(v, "to")),
				(long long)json_integer_value(json_object_get(v, "qpn")));
			if (!json_is_integer(json_object_get(v, "sender_flow_qpn"))) {
				fprintf(f, "its sender's packets are not in this trace\n");
				continue;
			}
			if (json_is_integer(nx))
				fprintf(f, "the sender's next packet %.1f us later",
					(double)json_integer_value(nx) / 1e3);
			if (json_integer_value(json_object_get(v, "measured")))
				fprintf(f, ", its packet gap %.1f us before, %.1f us after (x%.2f; a "
					"DCQCN sender spaces out, rxe has none)",
					(double)json_integer_value(json_object_get(v, "gap_before_ns")) / 1e3,
					(double)json_integer_value(json_object_get(v, "gap_after_ns")) / 1e3,
					json_real_value(json_object_get(v, "gap_ratio")));
			fputc('\n', f);
		}
	}
}
