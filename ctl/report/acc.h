/* SPDX-License-Identifier: MIT */
/*
 * What one arm gathered over its rounds: the per-rank results of every
 * round added up (one histogram merge for every workload), the figure every
 * report, live line and TUI row is computed from. Its scalar fields are
 * one X-macro list, so the JSON it is published as (tui --attach) is
 * generated from the struct and the round trip is lossless.
 */
#ifndef RTB_CTL_REPORT_ACC_H
#define RTB_CTL_REPORT_ACC_H

#include <stdint.h>
#include <jansson.h>
#include "lib/hist.h"

/* counts */
#define ARM_ACC_U64(X)                                                                             \
	X(iters)      /* measured iterations */                                                    \
	X(wrong)      /* elements (or operations) off the exact result */                          \
	X(lost)       /* lossy modes: pieces lost, expected, their bytes */                        \
	X(expected)                                                                                \
	X(lost_bytes)                                                                              \
	X(recovered)  /* ec: pieces rebuilt from parity; sr: pieces missing and resent */          \
	X(timeouts)   /* lossy steps ended by the adaptive timeout */                              \
	X(late)       /* UC modes: pieces landed after their step gave up (lost is too low) */     \
	X(retrans)    /* NIC retransmission events (lib/hwc.h) */                                  \
	X(results)    /* rank results added (a rank of a round each) */                            \
	X(eg_ranks)   /* results whose netdev's injector egress hook saw RoCE packets */           \
	X(eg_resent)  /* packets those hooks counted resent */                                     \
	X(in_ranks)   /* the same for the ingress hooks */                                         \
	X(in_resent)                                                                               \
	X(gsamples)   /* steps whose result error was measured */                                  \
	X(size)       /* bytes per rank per step */                                                \
	X(uc)         /* 1: an arm on UC QPs (reports lost data) */                                \
	X(acct_iters) /* collectives: iterations whose ranks' losses and errors were compared */  \
	X(acct_wrong_iters) /* those with a wrong element on some rank */                          \
	X(acct_wrong_noloss) /* with a wrong element though no rank lost a piece */                \
	X(acct_loss_nowrong) /* a piece lost, nothing wrong (where a loss must show) */             \
	X(acct_strict) /* 1: a loss must show (ints, zero fill, lossy or ec) */
/* reals */
#define ARM_ACC_F64(X)                                                                             \
	X(tsum)       /* sum over rounds of the slowest rank's mean step time x iters, ns */       \
	X(nmse_sum)   /* sums weighted by gsamples, and extremes, of the result error */           \
	X(nmse_max)                                                                                \
	X(linf_sum)                                                                                \
	X(linf_max)                                                                                \
	X(linf_rel_max)                                                                            \
	X(cos_sum)                                                                                 \
	X(cos_min)                                                                                 \
	X(factor)     /* busbw / algbw */

struct arm_acc {
	const char *name, *mode;	/* not owned */
	struct hist h;			/* step (or operation) times of every rank */
	struct hist hc, hx;		/* collectives: their transform and transport parts */
	json_t *hw;			/* hw counter deltas summed over ranks and rounds */
#define ACC_FIELD_U64(f) uint64_t f;
#define ACC_FIELD_F64(f) double f;
	ARM_ACC_U64(ACC_FIELD_U64)
	ARM_ACC_F64(ACC_FIELD_F64)
#undef ACC_FIELD_U64
#undef ACC_FIELD_F64
};

void arm_acc_init(struct arm_acc *a, const char *name, const char *mode);
void arm_acc_fini(struct arm_acc *a);
/* one round's per-rank results of iters measured iterations (0: a rank's
 * "time_ns" histogram counts, nothing else) */
void arm_acc_add(struct arm_acc *a, const json_t *results, uint64_t iters);
/* the accumulator itself, every field (published for tui --attach) */
json_t *arm_acc_to_json(const struct arm_acc *a);
/* back from arm_acc_to_json into an initialised a; 0 or -EINVAL */
int arm_acc_from_json(struct arm_acc *a, const json_t *j);
/* the arm's figures as a report shows them (the summary "percentiles",
 * step time, bandwidths, loss, error, retransmissions) */
json_t *arm_acc_summary(const struct arm_acc *a);
/*
 * The arm's retransmission figure into o: "retransmissions" (packets
 * resent, where they were counted), "retransmissions_source" and
 * "retransmission_events" (rxe's counters, lib/hwc.h). Resent packets come
 * from the injector's hooks when one direction's hook was on the netdev of
 * every rank (each resent packet then counted once: egress preferred), else
 * the figure is rxe's events ("rxe_events"). A traced run overrides it with
 * the trace's count (ctl/exp/trace.c, "trace").
 */
void arm_acc_retrans_json(const struct arm_acc *a, json_t *o);
/* what a "retransmissions_source" counts (brief: for a plot's title) */
const char *arm_retrans_what(const char *source, int brief);

#endif
