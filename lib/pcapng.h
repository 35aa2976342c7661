/* SPDX-License-Identifier: MIT */
/*
 * pcapng, the little of it the trace needs (pcapng.c): a writer for
 * rdma-inject trace (a section header, an interface per capture point with
 * nanosecond timestamps, enhanced packet blocks with a direction flag and a
 * comment, interface statistics at the end) and a reader for rdmactl
 * analyze that takes what Wireshark and tshark write as well (little- or
 * big-endian sections, any if_tsresol; other blocks skipped). Classic
 * pcap files are read too.
 */
#ifndef RTB_PCAPNG_H
#define RTB_PCAPNG_H

#include <stdint.h>
#include <stdio.h>

/* epb_flags: direction */
#define PCAPNG_INBOUND 1u
#define PCAPNG_OUTBOUND 2u
#define PCAPNG_LINKTYPE_ETHERNET 1u

/* writer: 0, or -1 with errno (a short write) */
int pcapng_put_shb(FILE *f, const char *app);
int pcapng_put_idb(FILE *f, const char *name, const char *desc, uint32_t snaplen);
int pcapng_put_epb(FILE *f, uint32_t ifid, uint64_t ts_ns, const void *data, uint32_t caplen,
		   uint32_t wirelen, uint32_t flags, const char *comment);
/* comment: opt_comment (NULL: none) */
int pcapng_put_isb(FILE *f, uint32_t ifid, uint64_t ts_ns, uint64_t start_ns, uint64_t end_ns,
		   uint64_t recv, uint64_t drop, const char *comment);

#define PCAPNG_MAX_IF 64

struct pcapng_if {
	char name[64];
	char desc[128];
	uint32_t linktype;
	uint64_t ts_div, ts_mul;	/* ns = ts * mul / div */
	int have_stats;
	uint64_t recv, drop;		/* isb_ifrecv, isb_ifdrop of the last ISB */
	char isb_comment[128];		/* its opt_comment ("" if none) */
};

struct pcapng_pkt {
	uint32_t ifid;
	uint64_t ts_ns;
	const uint8_t *data;	/* valid until the next pcapng_next */
	uint32_t caplen, wirelen;
	uint32_t flags;		/* epb_flags, 0 if none */
	char comment[256];
	uint64_t frame;		/* 1-based, as Wireshark numbers them */
};

struct pcapng_r;

/* NULL with the reason in err */
struct pcapng_r *pcapng_open(const char *path, char *err, size_t errlen);
/* 1 a packet, 0 the end, -1 a damaged file (the reason in err) */
int pcapng_next(struct pcapng_r *r, struct pcapng_pkt *p, char *err, size_t errlen);
/* the interfaces seen so far (all of them, and their statistics, at the end) */
int pcapng_nif(const struct pcapng_r *r);
const struct pcapng_if *pcapng_iface(const struct pcapng_r *r, int i);
void pcapng_close(struct pcapng_r *r);

#endif
