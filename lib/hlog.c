// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "hlog.h"

/* HdrHistogram V2 encoding (ZigZag LEB128 counts, zero runs negative),
 * deflated, base64. Our layout is HdrHistogram's with 2 significant
 * digits, unit 1 ns: bucket indices are its counts indices. */
static size_t put_zz(unsigned char *p, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	do {
		unsigned char b = z & 0x7f;

		z >>= 7;
		p[n++] = (unsigned char)(b | (z ? 0x80 : 0));
	} while (z && n < 8);
	if (z)
		p[n++] = (unsigned char)z;	/* the 9th byte holds 8 bits */
	return n;
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void put_be64(unsigned char *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

static char *base64(const unsigned char *in, size_t n)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		*o++ = t[v >> 18];
		*o++ = t[(v >> 12) & 63];
		*o++ = t[(v >> 6) & 63];
		*o++ = t[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);

		*o++ = t[v >> 18];
		*o++ = t[(v >> 12) & 63];
		*o++ = i + 1 < n ? t[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = 0;
	return out;
}

char *hist_hdr_base64(const struct hist *h)
{
	unsigned char *raw, *z;
	size_t last = 0, i, n = 40;
	uLongf zlen;
	char *out = NULL;
	double one = 1.0;
	uint64_t bits;

	for (i = 0; i < HIST_NBUCKETS; i++)
		if (h->counts[i])
			last = i + 1;
	raw = malloc(40 + 9 * (last + 1));
	if (!raw)
		return NULL;
	for (i = 0; i < last;) {
		uint64_t c = h->counts[i++], zeros = 0;

		if (!c) {
			zeros = 1;
			while (i < last && !h->counts[i]) {
				zeros++;
				i++;
			}
		}
		n += put_zz(raw + n, zeros > 1 ? -(int64_t)zeros : (int64_t)c);
	}
	put_be32(raw, 0x1c849313);	/* V2 encoding cookie */
	put_be32(raw + 4, (uint32_t)(n - 40));
	put_be32(raw + 8, 0);		/* normalizing index offset */
	put_be32(raw + 12, 2);		/* significant value digits */
	put_be64(raw + 16, 1);		/* lowest discernible value */
	put_be64(raw + 24, 1ULL << HIST_MAX_BITS);	/* highest trackable value */
	memcpy(&bits, &one, sizeof(bits));
	put_be64(raw + 32, bits);	/* integer to double ratio */
	zlen = compressBound((uLong)n);
	z = malloc(8 + zlen);
	if (z && compress2(z + 8, &zlen, raw, (uLong)n, 6) == Z_OK) {
		put_be32(z, 0x1c849314);	/* V2 compressed encoding cookie */
		put_be32(z + 4, (uint32_t)zlen);
		out = base64(z, 8 + zlen);
	}
	free(z);
	free(raw);
	return out;
}

