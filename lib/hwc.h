/* SPDX-License-Identifier: MIT */
/*
 * What the toolkit calls the NIC's retransmissions, in one place: rxe's
 * hw counters of a retransmission event, a timeout retry
 * (completer_retry_err) or a go-back-N after a sequence NAK
 * (rcvd_seq_err). They count events, not packets resent.
 */
#ifndef RTB_HWC_H
#define RTB_HWC_H

#include <stdint.h>
#include <jansson.h>

/* NULL-terminated */
extern const char *const hwc_retrans_names[];
/* the sum of those counters in a {"name": value} object (absent: 0) */
uint64_t hwc_retrans(const json_t *counters);
/* what a run added to counters: each integer of after minus the same key
 * of before (absent: 0); a new object */
json_t *hwc_delta(const json_t *before, const json_t *after);
/* the same for the injector's hook counts, {"egress": {...}, "ingress":
 * {...}} (agent/inject.c): NULL when after has no hook */
json_t *hwc_hooks_delta(const json_t *before, const json_t *after);

#endif
