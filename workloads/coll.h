/* SPDX-License-Identifier: MIT */
/*
 * The collective engine: ring collectives over one agent per rank, with the
 * recovery mode chosen per arm. The `collective` workload times it; the
 * `train` workload allreduces its gradients through it.
 *
 *   rc        RC QPs, SEND/RECV; the NIC retransmits (go-back-N on rxe)
 *   lossy     UC QPs, one WRITE_WITH_IMM per MTU piece, arrival bitmaps,
 *             end-of-step markers and an adaptive step timeout; what is
 *             lost is zero-filled and counted, never retransmitted
 *   hadamard  lossy, on the randomized Hadamard transform of the buffer
 *             (lib/rht): a loss becomes small noise spread over many
 *             elements; exact within float rounding when nothing is lost.
 *             pipeline=on transforms each rank's chunk (every n-th element)
 *             on its own instead, beside the transport: a chunk encoded
 *             while the one before is on the wire, decoded as soon as it is
 *             final (but with rescale); faster, but its smaller blocks
 *             spread a loss less
 *   ec        lossy plus ISA-L parity (lib/ec): m parity pieces per group
 *             of k rebuild up to m lost pieces of the group
 *   sr        selective repeat in software (the IRN / SRNIC class): lossy's
 *             pieces, but the receiver asks for the missing ones with a
 *             bitmap (a NACK on the RC control QP) and the sender resends
 *             those only; a NACK when a burst's end marker came and the
 *             link idled, or when the retransmission timeout (RFC 6298's
 *             SRTT + 4 RTTVAR of the NACK-to-resend times, doubled on each
 *             expiry) passed; every step completes exactly
 */
#ifndef RTB_COLL_H
#define RTB_COLL_H

#include <stddef.h>
#include <stdint.h>
#include "verbs.h"
#include "wl.h"
#include "../lib/mode.h"

#define COLL_MAX_RANKS 16

enum coll_op { C_ALLREDUCE, C_REDUCE_SCATTER, C_ALLGATHER, C_BROADCAST, C_ALLTOALL };
/* the recovery modes: lib/mode.h (M_RC, M_LOSSY, M_HADAMARD, M_EC, M_SR) */
enum coll_prio { P_NONE, P_MAGNITUDE };
enum coll_fill { F_ZERO, F_PREVIOUS };
enum coll_wait { W_EVENT, W_SPIN };

extern const char *const coll_ops[];
#define coll_modes rtb_mode_names

/* the transport knobs, shared by every workload built on the engine */
struct coll_cfg {
	int op;
	uint64_t size;		/* bytes of the (full) buffer per rank */
	uint64_t rank, nranks, root;
	uint64_t op_timeout;
	int mode;
	uint64_t step_timeout_min, step_timeout_max, idle_grace;
	uint64_t timeout_mult_ppm, ewma_ppm;
	int priority;
	uint64_t block;		/* hadamard */
	int rescale;		/* hadamard: 1/q */
	int pipeline;		/* hadamard: chunk by chunk, beside the transport */
	int fill;		/* lost pieces: zero or the previous iteration's */
	int wait;		/* idle: sleep on a completion event, or spin */
	int guard;		/* UC modes: late writes stopped by memory windows */
	uint64_t piece;		/* UC modes: bytes per WRITE_WITH_IMM (0: one MTU) */
	uint64_t ec_k, ec_m;
	struct vb_rc_knobs rc;
	uint64_t seed;		/* hadamard diagonal; shared by every rank */
};

/* option table entries for struct coll_cfg at offset BASE in a workload's cfg */
#define COLL_OPTS(BASE)                                                                            \
	{ "mode", OPT_ENUM, (BASE) + offsetof(struct coll_cfg, mode), 0, 0, "rc", coll_modes,      \
	  "recovery: rc (NIC retransmits) | lossy (UC, losses zero-filled) | hadamard (lossy on "  \
	  "a randomized Hadamard transform) | ec (lossy + ISA-L parity) | sr (UC, selective "    \
	  "repeat: only the missing pieces resent)" },                         \
	{ "step_timeout_min", OPT_TIME, (BASE) + offsetof(struct coll_cfg, step_timeout_min),      \
	  100000, 60000000000ULL, "50ms", NULL, "lossy: a step's timeout is at least this" },      \
	{ "step_timeout_max", OPT_TIME, (BASE) + offsetof(struct coll_cfg, step_timeout_max),      \
	  100000, 60000000000ULL, "500ms", NULL,                                                   \
	  "lossy: cap of the agreed timeout (a silent peer costs this per step)" },                \
	{ "idle_grace", OPT_TIME, (BASE) + offsetof(struct coll_cfg, idle_grace), 0,               \
	  10000000000ULL, "1ms", NULL,                                                             \
	  "lossy: after a step's end marker, end once the link idled this long" },                 \
	{ "timeout_mult", OPT_PPM, (BASE) + offsetof(struct coll_cfg, timeout_mult_ppm), 1000000,  \
	  100000000, "150%", NULL, "lossy: a rank's timeout estimate = this x its step-time EWMA" }, \
	{ "ewma", OPT_PPM, (BASE) + offsetof(struct coll_cfg, ewma_ppm), 1000, 1000000, "20%",     \
	  NULL, "lossy: weight of the newest step in the step-time average" },                     \
	{ "priority", OPT_ENUM, (BASE) + offsetof(struct coll_cfg, priority), 0, 0, "none",        \
	  coll_prios, "lossy: send order within a step: none | magnitude (largest pieces first)" }, \
	{ "block", OPT_UINT, (BASE) + offsetof(struct coll_cfg, block), 0, 1 << 20, "0", NULL,    \
	  "hadamard: transform block (floats, a power of two; 0: the largest up to 64k that "      \
	  "pads the buffer (pipeline: a rank's chunk) by at most 1/64)" },                         \
	{ "pipeline", OPT_ENUM, (BASE) + offsetof(struct coll_cfg, pipeline), 0, 0, "off",         \
	  coll_onoff, "hadamard: transform each rank's chunk (every n-th element) on its own, "    \
	  "encoded and decoded beside the transport: faster, but smaller blocks spread a loss "    \
	  "less" },                                                                                \
	{ "fill", OPT_ENUM, (BASE) + offsetof(struct coll_cfg, fill), 0, 0, "zero", coll_fills,     \
	  "lossy: a lost piece is zero | previous (what the same piece held the iteration before)" }, \
	{ "wait", OPT_ENUM, (BASE) + offsetof(struct coll_cfg, wait), 0, 0, "event", coll_waits,   \
	  "an idle rank: event (64 empty polls, then sleep on a completion event) | spin "         \
	  "(busy-poll, yielding now and then)" },                                                  \
	{ "piece", OPT_SIZE, (BASE) + offsetof(struct coll_cfg, piece), 0, 1 << 20, "0", NULL,    \
	  "UC modes: bytes per WRITE_WITH_IMM, a multiple of the MTU (0: one MTU); the unit "     \
	  "of loss: a packet lost loses its whole piece. rxe (6.1): once a message's last "        \
	  "packet is lost, its UC QP drops every later multi-packet message: one MTU there" },     \
	{ "guard", OPT_ENUM, (BASE) + offsetof(struct coll_cfg, guard), 0, 0, "on", coll_onoff,  \
	  "UC modes: each step's receive region behind a memory window, rebound every "           \
	  "iteration with a new key and revoked when the step gives up: a late write of a step "  \
	  "given up cannot land (off: written through the buffer's own rkey)" },                   \
	{ "rescale", OPT_ENUM, (BASE) + offsetof(struct coll_cfg, rescale), 0, 0, "off",           \
	  coll_onoff, "hadamard: scale by 1/q (q = fraction received) for an unbiased estimate" },  \
	{ "ec_k", OPT_UINT, (BASE) + offsetof(struct coll_cfg, ec_k), 1, 128, "8", NULL,           \
	  "ec: data pieces per group" },                                                           \
	{ "ec_m", OPT_UINT, (BASE) + offsetof(struct coll_cfg, ec_m), 0, 16, "1", NULL,            \
	  "ec: parity pieces per group (rebuild up to m lost)" },                                  \
	VB_RC_KNOB_OPTS((BASE) + offsetof(struct coll_cfg, rc)),                                  \
	{ "seed", OPT_UINT, (BASE) + offsetof(struct coll_cfg, seed), 0, UINT64_MAX, "1", NULL,    \
	  "hadamard diagonal and synthetic data seed (the same on every rank)" },                  \
	{ "rank", OPT_UINT, (BASE) + offsetof(struct coll_cfg, rank), 0, COLL_MAX_RANKS - 1, "0",  \
	  NULL, "this agent's rank (set by rdmactl)" },                                            \
	{ "nranks", OPT_UINT, (BASE) + offsetof(struct coll_cfg, nranks), 2, COLL_MAX_RANKS, "2",  \
	  NULL, "ranks (set by rdmactl)" },                                                        \
	{ "op_timeout", OPT_TIME, (BASE) + offsetof(struct coll_cfg, op_timeout), 1000000,         \
	  3600000000000ULL, "30s", NULL, "fail when one iteration takes longer" }

extern const char *const coll_prios[];
extern const char *const coll_onoff[];
extern const char *const coll_fills[];
extern const char *const coll_waits[];

struct coll;

/* what a run lost, recovered and how far its results were from exact */
struct coll_stats {
	uint64_t steps, pieces_expected, lost_pieces, lost_bytes, recovered_pieces, timeouts,
		marker_ends, silent_steps,
		late_looks;	/* deadline passed, but a last poll found the step going on */
	uint64_t agreed_timeout_ns;	/* the last one used */
	uint64_t block;		/* hadamard: the block used */
	uint64_t piece_bytes;	/* UC modes: bytes per WRITE_WITH_IMM */
	uint64_t codec_ns;	/* hadamard: time in the transform, both ways, all steps */
	/* the last step's parts: the transform (encode and decode; 0 but for
	 * hadamard) and the transport (the ring, first post to last completion) */
	uint64_t step_codec_ns, step_transport_ns;
	uint64_t step_lost;	/* the last step's pieces lost on this rank */
	/* sr: NACKs sent (as receiver), pieces resent (as sender), NACKs that
	 * named a step no longer or not yet sent (ignored); the retransmission
	 * timeout and smoothed NACK-to-resend time now (0: no sample yet) */
	uint64_t nacks, resent_pieces, stale_nacks, rto_ns, srtt_ns;
	uint64_t revoked;	/* guard: steps whose windows were revoked (given up) */
	/* pieces that landed late: after their step gave up on them (and, guard
	 * on, revoked its windows), or of an earlier iteration (guard on: once
	 * this one's windows were bound); guard on keeps this 0 */
	uint64_t late_landed;
};

/* cfg->op and cfg->size set; *ep: this rank's endpoints (JSON array by rank) */
int coll_open(struct wl_ctx *w, const struct coll_cfg *cfg, struct coll **cp, json_t **ep);
int coll_connect_peers(struct wl_ctx *w, struct coll *c, const json_t *peers);
/* the buffer the next step reduces (user domain, size bytes) and its result */
float *coll_input(struct coll *c);
const float *coll_output(const struct coll *c);
size_t coll_count(const struct coll *c);
/* post the first iteration's receives; once, after connect */
int coll_begin(struct wl_ctx *w, struct coll *c);
/* one collective over coll_input() into coll_output(); *ns = its time */
int coll_step(struct wl_ctx *w, struct coll *c, uint64_t *ns);
/* after the output was used: post the next step's receives. clear: zero the
 * output first (the next step is checked: nothing stale may pass) */
int coll_next(struct wl_ctx *w, struct coll *c, int clear);
void coll_get_stats(const struct coll *c, struct coll_stats *s);
/* the transport's figures for a run's result: the UC modes' losses, steps
 * and late writes, and what the mode adds (rc: its settings) */
json_t *coll_stats_json(const struct coll *c);
void coll_close(struct coll *c);

/* gradient error of got[] against exact[] (n elements), accumulated */
struct grad_err {
	uint64_t n;		/* samples (steps) */
	double nmse_sum, nmse_max, linf_sum, linf_max, linf_rel_max, cos_sum, cos_min;
};
void grad_err_add(struct grad_err *g, const float *got, const double *exact, size_t n);
json_t *grad_err_json(const struct grad_err *g);

#endif
