/* SPDX-License-Identifier: MIT */
/*
 * What a RoCE packet trace says (analyze.c), from pcapng files of
 * rdma-inject trace (verdicts in the packets' comments) or any capture of
 * RoCEv2 (every packet then counts as passed).
 *
 * A capture point is one interface of a file: a device and a direction.
 * A QP, at a capture point, is a flow: source and destination address and
 * destination QPN. A packet is resent when its PSN was already seen on its
 * QP at that capture point (what `tshark` gives with the same key). A loss
 * is a packet the injector dropped or corrupted there; what the NIC did
 * about it is read from the same capture point (the resend) and from the
 * opposite direction of the same device (the NAK, the ACKs), in one clock.
 */
#ifndef RTB_CTL_TRACE_H
#define RTB_CTL_TRACE_H

#include <string.h>
#include <jansson.h>

/* {"file", "captures": [{"file", "iface", "dev", "dir", "node", "switch",
 * "packets", "resent_packets", "verdicts": {...}, "lost_records", "qps":
 * [...], "losses": [...], "go_back_n": {...}, "read_retransmission":
 * {...}}]}. nodes: {"DEV": "node0", ...} or NULL; switches: {"DEV": true}
 * for the switch ports among the devices, or NULL (the testbed's names:
 * trace_switch_port). NULL with the reason in err */
json_t *trace_analyze(const char *path, const json_t *nodes, const json_t *switches, char *err,
		      size_t errlen);

/* a switch port's capture by the testbed's names: swN in a shared kernel's
 * VM, rtbswN on this host */
static inline int trace_switch_port(const char *dev)
{
	return !strncmp(dev, "sw", 2) || !strncmp(dev, "rtbsw", 5);
}

/* a capture of the analysis is a switch port's */
static inline int trace_capture_switch(const json_t *c)
{
	return json_is_true(json_object_get(c, "switch"));
}

/* the resent request packets (data, READ requests, atomics, READ
 * responses) of a trace's nodes' egress capture points: what the NICs
 * resent (a switch port's egress has them again, on their way in) */
json_int_t trace_retransmissions(const json_t *analysis);

/* the text of an analysis, for a terminal */
void trace_print(FILE *f, const json_t *analysis);

#endif
