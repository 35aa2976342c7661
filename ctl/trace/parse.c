// SPDX-License-Identifier: MIT
/* A RoCEv2 packet of a capture, read (tr.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "ctl/trace/tr.h"
#include "lib/fnv.h"

const char *const cls_name[C_MAX] = { "data", "read_req", "read_resp", "ack", "nak", "atomic",
				      "cnp", "other" };
#define VERDICT_NAME(e, name) name,
const char *const verdict_name[] = { INJ_VERDICTS(VERDICT_NAME) };
#undef VERDICT_NAME

static uint32_t be(const uint8_t *p, int n)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

int parse(const struct pcapng_pkt *k, struct tp *t, uint8_t *src, uint8_t *dst, int *v6)
{
	const uint8_t *d = k->data, *e, *b;
	uint16_t proto;
	uint32_t iplen;
	size_t at = 14;

	if (!d || k->caplen < 14)	/* (an empty packet has no data: not even d + 0) */
		return 0;
	e = d + k->caplen;
	proto = (uint16_t)be(d + 12, 2);
	if (proto == 0x8100) {
		if (k->caplen < 18)
			return 0;
		proto = (uint16_t)be(d + 16, 2);
		at = 18;
	}
	memset(src, 0, 16);
	memset(dst, 0, 16);
	if (proto == 0x0800) {
		if (d + at + 20 > e || (d[at] & 0x0f) != 5 || d[at + 9] != 17)
			return 0;
		t->ecn = d[at + 1] & 3;
		iplen = be(d + at + 2, 2);
		memcpy(src, d + at + 12, 4);
		memcpy(dst, d + at + 16, 4);
		*v6 = 0;
		at += 20;
	} else if (proto == 0x86dd) {
		if (d + at + 40 > e || d[at + 6] != 17)
			return 0;
		t->ecn = (uint8_t)((be(d + at, 2) >> 4) & 3);
		iplen = be(d + at + 4, 2) + 40;
		memcpy(src, d + at + 8, 16);
		memcpy(dst, d + at + 24, 16);
		*v6 = 1;
		at += 40;
	} else {
		return 0;
	}
	if (d + at + 8 + 12 > e || be(d + at + 2, 2) != INJ_ROCE_V2_PORT)
		return 0;
	at += 8;
	b = d + at;
	t->op = b[0];
	t->dqpn = be(b + 5, 3);
	t->ackreq = b[8] >> 7;
	t->psn = be(b + 9, 3);
	at += 12;
	/* headers after the BTH (IBA 9.2-9.3): DETH (UD), RETH, AtomicETH, AETH */
	{
		uint8_t tt = t->op >> 5, o = t->op & 0x1f;
		int reth = 0, aeth = 0, deth = tt == 3, atomic = 0, ieth_imm = 0;

		if (tt == 0 || tt == 1) {
			reth = o == 0x06 || o == 0x0a || o == 0x0b || o == 0x0c || (tt == 1 && (o == 0x06 || o == 0x0a || o == 0x0b));
			aeth = tt == 0 && (o == 0x0d || o == 0x0f || o == 0x10 || o == 0x11 || o == 0x12);
			atomic = tt == 0 && (o == 0x13 || o == 0x14);
			ieth_imm = o == 0x03 || o == 0x05 || o == 0x09 || o == 0x0b || o == 0x16 || o == 0x17;
		}
		if (tt == 3 && o == 0x05)
			ieth_imm = 1;
		if (deth)
			at += 8;
		if (reth && d + at + 16 <= e) {
			t->va = ((uint64_t)be(d + at, 4) << 32) | be(d + at + 4, 4);
			t->rlen = be(d + at + 12, 4);
			at += 16;
		}
		if (atomic) {
			if (d + at + 28 <= e) {
				t->va = ((uint64_t)be(d + at, 4) << 32) | be(d + at + 4, 4);
				t->rlen = 8;
			}
			at += 28;
		}
		if (aeth && d + at + 4 <= e) {
			t->syn = d[at];
			t->msn = be(d + at + 1, 3);
			at += 4;
		} else if (aeth) {
			at += 4;
		}
		if (t->op == 0x12)
			at += 8;	/* AtomicAckETH */
		if (ieth_imm)
			at += 4;
	}
	t->cls = inj_classify(t->op, t->syn);
	{
		/* payload: the IP length less the headers, the pad count and the ICRC */
		size_t hdr = at - (proto == 0x0800 ? 14 : 14) - (k->caplen >= 18 && be(d + 12, 2) == 0x8100 ? 4 : 0);
		uint32_t pad = (b[1] >> 4) & 3;

		t->payload = iplen > hdr + 4 + pad ? iplen - (uint32_t)hdr - 4 - pad : 0;
	}
	return 1;
}

void verdict_of(const char *c, struct tp *t)
{
	const char *v = strstr(c, "verdict="), *r = strstr(c, "rule=");
	int i;

	t->verdict = INJ_VERDICT_PASS;
	if (v) {
		v += 8;
		for (i = 0; i < INJ_VERDICT_MAX; i++) {
			size_t n = strlen(verdict_name[i]);

			if (!strncmp(v, verdict_name[i], n) && (v[n] == ' ' || !v[n]))
				t->verdict = (uint8_t)i;
		}
	}
	t->rule = r ? (uint32_t)strtoul(r + 5, NULL, 10) : 0;
	r = strstr(c, "resent");
	t->marked = r && (r == c || r[-1] == ' ') && (!r[6] || r[6] == ' ');
}
