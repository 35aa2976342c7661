// SPDX-License-Identifier: MIT
/*
 * p2p (workloads/p2p.c): perftest-like point-to-point latency and
 * bandwidth between a client (member 0) and a server (member 1). Not a
 * profile workload: `rdmactl p2p` runs it.
 */
#include "ctl/wl/wl.h"

static const struct wlc_reserved reserved[] = {
	{ NULL, NULL },
};

const struct wlc wlc_p2p = {
	.name = "p2p",
	.topo = WLC_PAIR,
	.measure = MEASURE_OPS,
	.unit = "iterations",
	.modes = 1u << M_RC,
	.modes_why = "p2p chooses its QP type with qp:",
	.rounds = 1,
	.in_profile = 0,
	.reserved = reserved,
};
