// SPDX-License-Identifier: MIT
/* pcapng writer and reader (pcapng.h); block layout from the pcapng
 * specification (draft-ietf-opsawg-pcapng): type, total length, body,
 * total length again; options as code, length, value padded to 4. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pcapng.h"

#define BT_SHB 0x0A0D0D0Au
#define BT_IDB 1u
#define BT_ISB 5u
#define BT_EPB 6u
#define BOM 0x1A2B3C4Du

/* --- writer: a block is built in memory, then written in one go */

struct blk {
	uint8_t *b;
	size_t n, cap;
};

static int put(struct blk *k, const void *p, size_t n)
{
	if (k->n + n + 4 > k->cap) {
		size_t cap = (k->cap ? k->cap * 2 : 256) + n;
		uint8_t *b = realloc(k->b, cap);

		if (!b)
			return -1;
		k->b = b;
		k->cap = cap;
	}
	memcpy(k->b + k->n, p, n);
	k->n += n;
	return 0;
}

static int put32(struct blk *k, uint32_t v)
{
	return put(k, &v, 4);
}

static int pad4(struct blk *k)
{
	static const uint8_t z[4];

	return put(k, z, (4 - k->n % 4) % 4);
}

static int opt(struct blk *k, uint16_t code, const void *v, size_t len)
{
	uint16_t h[2] = { code, (uint16_t)len };

	return put(k, h, 4) || put(k, v, len) || pad4(k);
}

static int opt_str(struct blk *k, uint16_t code, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!n)
		return 0;
	return opt(k, code, s, n > 65535 ? 65535 : n);
}

static int opt_u64(struct blk *k, uint16_t code, uint64_t v)
{
	return opt(k, code, &v, 8);
}

/* the timestamp as two 32-bit halves, high first (as in EPB and ISB) */
static int opt_ts(struct blk *k, uint16_t code, uint64_t ns)
{
	uint32_t v[2] = { (uint32_t)(ns >> 32), (uint32_t)ns };

	return opt(k, code, v, 8);
}

static int begin(struct blk *k, uint32_t type)
{
	k->n = 0;
	return put32(k, type) || put32(k, 0);
}

static int finish(FILE *f, struct blk *k, int opts)
{
	uint32_t len;
	int r;

	if (opts && put32(k, 0))	/* opt_endofopt */
		return -1;
	len = (uint32_t)k->n + 4;
	memcpy(k->b + 4, &len, 4);
	r = put32(k, len) || fwrite(k->b, 1, k->n, f) != k->n ? -1 : 0;
	free(k->b);
	k->b = NULL;
	k->cap = 0;
	if (r && !errno)
		errno = EIO;
	return r;
}

int pcapng_put_shb(FILE *f, const char *app)
{
	struct blk k = { 0 };
	uint16_t ver[2] = { 1, 0 };
	int64_t seclen = -1;

	if (begin(&k, BT_SHB) || put32(&k, BOM) || put(&k, ver, 4) || put(&k, &seclen, 8) ||
	    opt_str(&k, 4, app)) {	/* shb_userappl */
		free(k.b);
		return -1;
	}
	return finish(f, &k, 1);
}

int pcapng_put_idb(FILE *f, const char *name, const char *desc, uint32_t snaplen)
{
	struct blk k = { 0 };
	uint16_t lt[2] = { PCAPNG_LINKTYPE_ETHERNET, 0 };
	uint8_t res = 9;	/* if_tsresol: 10^-9 s */

	if (begin(&k, BT_IDB) || put(&k, lt, 4) || put32(&k, snaplen) || opt_str(&k, 2, name) ||
	    opt_str(&k, 3, desc) || opt(&k, 9, &res, 1)) {
		free(k.b);
		return -1;
	}
	return finish(f, &k, 1);
}

int pcapng_put_epb(FILE *f, uint32_t ifid, uint64_t ts_ns, const void *data, uint32_t caplen,
		   uint32_t wirelen, uint32_t flags, const char *comment)
{
	struct blk k = { 0 };
	int opts = flags || (comment && *comment);

	if (begin(&k, BT_EPB) || put32(&k, ifid) || put32(&k, (uint32_t)(ts_ns >> 32)) ||
	    put32(&k, (uint32_t)ts_ns) || put32(&k, caplen) || put32(&k, wirelen) ||
	    put(&k, data, caplen) || pad4(&k) || opt_str(&k, 1, comment) ||
	    (flags && opt(&k, 2, &flags, 4))) {
		free(k.b);
		return -1;
	}
	return finish(f, &k, opts);
}

int pcapng_put_isb(FILE *f, uint32_t ifid, uint64_t ts_ns, uint64_t start_ns, uint64_t end_ns,
		   uint64_t recv, uint64_t drop, const char *comment)
{
	struct blk k = { 0 };

	if (begin(&k, BT_ISB) || put32(&k, ifid) || put32(&k, (uint32_t)(ts_ns >> 32)) ||
	    put32(&k, (uint32_t)ts_ns) || opt_str(&k, 1, comment) || opt_ts(&k, 2, start_ns) ||
	    opt_ts(&k, 3, end_ns) ||
	    opt_u64(&k, 4, recv) || opt_u64(&k, 5, drop)) {
		free(k.b);
		return -1;
	}
	return finish(f, &k, 1);
}

/* --- reader */

struct pcapng_r {
	FILE *f;
	int swap;		/* the section's byte order is not ours */
	int classic;		/* a pcap file, not pcapng */
	uint32_t classic_lt;
	uint64_t classic_mul;
	uint8_t *buf;
	size_t cap;
	uint64_t frame;
	/* every section's interfaces, in file order: a section's interface id i
	 * is ifs[base + i] (ids start anew in each section; a multi-section file
	 * paired them by the last section's ids) */
	int nif, base;
	struct pcapng_if ifs[PCAPNG_MAX_IF];
};

static uint32_t sw32(const struct pcapng_r *r, uint32_t v)
{
	return r->swap ? __builtin_bswap32(v) : v;
}

static uint16_t sw16(const struct pcapng_r *r, uint16_t v)
{
	return r->swap ? __builtin_bswap16(v) : v;
}

static uint32_t rd32(const struct pcapng_r *r, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return sw32(r, v);
}

static uint64_t rd64(const struct pcapng_r *r, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return r->swap ? __builtin_bswap64(v) : v;
}

struct pcapng_r *pcapng_open(const char *path, char *err, size_t errlen)
{
	struct pcapng_r *r = calloc(1, sizeof(*r));
	uint32_t magic;

	if (!r)
		return NULL;
	r->f = fopen(path, "rbe");
	if (!r->f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(r);
		return NULL;
	}
	if (fread(&magic, 4, 1, r->f) != 1) {
		snprintf(err, errlen, "%s: empty, not a capture", path);
		pcapng_close(r);
		return NULL;
	}
	if (magic == 0xa1b2c3d4u || magic == 0xd4c3b2a1u || magic == 0xa1b23c4du ||
	    magic == 0x4d3cb2a1u) {
		uint8_t h[20];

		r->classic = 1;
		r->swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
		r->classic_mul = (magic == 0xa1b2c3d4u || magic == 0xd4c3b2a1u) ? 1000 : 1;
		if (fread(h, sizeof(h), 1, r->f) != 1) {
			snprintf(err, errlen, "%s: a pcap header cut short", path);
			pcapng_close(r);
			return NULL;
		}
		r->classic_lt = rd32(r, h + 16);
		r->nif = 1;
		snprintf(r->ifs[0].name, sizeof(r->ifs[0].name), "pcap");
		r->ifs[0].linktype = r->classic_lt;
		r->ifs[0].ts_mul = r->classic_mul;
		r->ifs[0].ts_div = 1;
		return r;
	}
	if (magic != BT_SHB) {
		snprintf(err, errlen, "%s: neither pcapng nor pcap (magic 0x%08x)", path, magic);
		pcapng_close(r);
		return NULL;
	}
	rewind(r->f);
	return r;
}

static void idb(struct pcapng_r *r, const uint8_t *b, size_t n)
{
	struct pcapng_if *i;
	size_t at = 8;

	if (r->nif >= PCAPNG_MAX_IF || n < 8)
		return;
	i = &r->ifs[r->nif++];
	memset(i, 0, sizeof(*i));
	i->linktype = sw16(r, *(const uint16_t *)b);
	i->ts_mul = 1000;	/* default: microseconds */
	i->ts_div = 1;
	while (at + 4 <= n) {
		uint16_t code = sw16(r, *(const uint16_t *)(b + at)),
			 len = sw16(r, *(const uint16_t *)(b + at + 2));
		const uint8_t *v = b + at + 4;

		if (!code || at + 4 + len > n)
			break;
		if (code == 2)
			snprintf(i->name, sizeof(i->name), "%.*s", (int)len, (const char *)v);
		else if (code == 3)
			snprintf(i->desc, sizeof(i->desc), "%.*s", (int)len, (const char *)v);
		else if (code == 9 && len >= 1) {
			uint8_t t = v[0], e = t & 0x7f;
			uint64_t p = 1;
			int k;

			/* 10^-e or 2^-e seconds per unit */
			if (t & 0x80) {
				i->ts_mul = 1000000000ull;
				i->ts_div = e < 63 ? 1ull << e : 1ull << 62;
			} else if (e <= 9) {
				for (k = 0; k < 9 - e; k++)
					p *= 10;
				i->ts_mul = p;
			} else {
				for (k = 0; k < e - 9 && k < 18; k++)
					p *= 10;
				i->ts_mul = 1;
				i->ts_div = p;
			}
		}
		at += 4 + ((len + 3u) & ~3u);
	}
}

static void isb(struct pcapng_r *r, const uint8_t *b, size_t n)
{
	uint32_t id;
	size_t at = 12;
	struct pcapng_if *i;

	if (n < 12)
		return;
	id = rd32(r, b);
	if (id >= (uint32_t)(r->nif - r->base))
		return;
	i = &r->ifs[r->base + id];
	while (at + 4 <= n) {
		uint16_t code = sw16(r, *(const uint16_t *)(b + at)),
			 len = sw16(r, *(const uint16_t *)(b + at + 2));

		if (!code || at + 4 + len > n)
			break;
		if ((code == 4 || code == 5) && len == 8) {
			i->have_stats = 1;
			if (code == 4)
				i->recv = rd64(r, b + at + 4);
			else
				i->drop = rd64(r, b + at + 4);
		}
		if (code == 1) {
			size_t m = len < sizeof(i->isb_comment) - 1 ? len : sizeof(i->isb_comment) - 1;

			memcpy(i->isb_comment, b + at + 4, m);
			i->isb_comment[m] = 0;
		}
		at += 4 + ((len + 3u) & ~3u);
	}
}

static uint64_t to_ns(const struct pcapng_if *i, uint64_t t)
{
	if (i->ts_div == 1)
		return t * i->ts_mul;
	return (uint64_t)((unsigned __int128)t * i->ts_mul / i->ts_div);
}

static int next_classic(struct pcapng_r *r, struct pcapng_pkt *p, char *err, size_t errlen)
{
	uint8_t h[16];
	uint32_t cap;

	if (fread(h, sizeof(h), 1, r->f) != 1)
		return 0;
	cap = rd32(r, h + 8);
	if (cap > (64u << 20)) {
		snprintf(err, errlen, "a packet of %u bytes: damaged", cap);
		return -1;
	}
	if (cap > r->cap) {
		uint8_t *b = realloc(r->buf, cap);

		if (!b)
			return -1;
		r->buf = b;
		r->cap = cap;
	}
	if (cap && fread(r->buf, cap, 1, r->f) != 1) {
		snprintf(err, errlen, "the last packet is cut short");
		return -1;
	}
	memset(p, 0, sizeof(*p));
	p->ts_ns = (uint64_t)rd32(r, h) * 1000000000ull + (uint64_t)rd32(r, h + 4) * r->classic_mul;
	p->data = r->buf;
	p->caplen = cap;
	p->wirelen = rd32(r, h + 12);
	p->frame = ++r->frame;
	return 1;
}

int pcapng_next(struct pcapng_r *r, struct pcapng_pkt *p, char *err, size_t errlen)
{
	if (r->classic)
		return next_classic(r, p, err, errlen);
	for (;;) {
		uint32_t h[2], type, len;
		const uint8_t *b;
		size_t n;

		if (fread(h, 4, 2, r->f) != 2)
			return 0;
		type = h[0];
		if (type == BT_SHB) {
			uint32_t bom;

			if (fread(&bom, 4, 1, r->f) != 1) {
				snprintf(err, errlen, "a section header cut short");
				return -1;
			}
			if (bom == BOM)
				r->swap = 0;
			else if (bom == __builtin_bswap32(BOM))
				r->swap = 1;
			else {
				snprintf(err, errlen, "a section header with a bad byte-order magic");
				return -1;
			}
			r->base = r->nif;	/* interfaces are per section */
			len = sw32(r, h[1]);
			if (len < 28 || len % 4 || fseek(r->f, (long)len - 12, SEEK_CUR)) {
				snprintf(err, errlen, "a damaged section header");
				return -1;
			}
			continue;
		}
		type = sw32(r, type);
		len = sw32(r, h[1]);
		if (len < 12 || len % 4 || len > (64u << 20)) {
			snprintf(err, errlen, "a block of %u bytes: damaged", len);
			return -1;
		}
		n = len - 8;
		if (n > r->cap) {
			uint8_t *nb = realloc(r->buf, n);

			if (!nb)
				return -1;
			r->buf = nb;
			r->cap = n;
		}
		if (fread(r->buf, n, 1, r->f) != 1) {
			snprintf(err, errlen, "the last block is cut short (a capture still being "
				 "written, or one that was cut off)");
			return -1;
		}
		b = r->buf;
		n -= 4;	/* the trailing length */
		if (type == BT_IDB) {
			idb(r, b, n);
		} else if (type == BT_ISB) {
			isb(r, b, n);
		} else if (type == BT_EPB && n >= 20) {
			uint32_t id = rd32(r, b), cap = rd32(r, b + 12);
			size_t at = 20 + ((cap + 3u) & ~3u);

			if (id >= (uint32_t)(r->nif - r->base) || 20 + (size_t)cap > n) {
				snprintf(err, errlen, "a packet of an unknown interface or too long");
				return -1;
			}
			id += (uint32_t)r->base;
			memset(p, 0, sizeof(*p));
			p->ifid = id;
			p->ts_ns = to_ns(&r->ifs[id], ((uint64_t)rd32(r, b + 4) << 32) | rd32(r, b + 8));
			p->caplen = cap;
			p->wirelen = rd32(r, b + 16);
			p->data = b + 20;
			while (at + 4 <= n) {
				uint16_t code = sw16(r, *(const uint16_t *)(b + at)),
					 ol = sw16(r, *(const uint16_t *)(b + at + 2));

				if (!code || at + 4 + ol > n)
					break;
				if (code == 1 && !p->comment[0])
					snprintf(p->comment, sizeof(p->comment), "%.*s", (int)ol,
						 (const char *)(b + at + 4));
				else if (code == 2 && ol == 4)
					p->flags = rd32(r, b + at + 4);
				at += 4 + ((ol + 3u) & ~3u);
			}
			p->frame = ++r->frame;
			return 1;
		}
		/* anything else (name resolution, custom, simple packets): skipped */
	}
}

int pcapng_nif(const struct pcapng_r *r)
{
	return r->nif;
}

const struct pcapng_if *pcapng_iface(const struct pcapng_r *r, int i)
{
	return i >= 0 && i < r->nif ? &r->ifs[i] : NULL;
}

void pcapng_close(struct pcapng_r *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	free(r->buf);
	free(r);
}
