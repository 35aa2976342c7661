/* SPDX-License-Identifier: MIT */
/*
 * Every workload's configuration and option table, apart from its data
 * path: rdmactl checks profiles and prints --help from these (opts.c)
 * without linking the workloads or libibverbs; each workload applies them
 * to its configuration (opt_apply_json).
 */
#ifndef RTB_WL_OPTS_H
#define RTB_WL_OPTS_H

#include <stdint.h>
#include "../lib/opt.h"
#include "coll.h"

/* --- p2p */
enum p2p_test { P2P_LAT, P2P_BW };
enum p2p_op { P2P_WRITE, P2P_READ, P2P_SEND, P2P_CAS, P2P_FAA };
enum p2p_qp { QP_RC, QP_UC, QP_UD };
struct p2p_cfg {
	int test;
	int op;
	uint64_t size;
	uint64_t iters;
	uint64_t warmup;
	uint64_t op_timeout;	/* ns: give up when the peer is silent this long */
	uint64_t qp_timeout;
	uint64_t retry_cnt;
	uint64_t rnr_retry;
	uint64_t tx_depth;
	int qp;
};
extern const char *const p2p_tests[], *const p2p_op_names[], *const p2p_qp_types[];

/* --- collective */
enum coll_data { D_INTS, D_GAUSS, D_LAPLACE, D_GRAD };
struct cw_cfg {
	struct coll_cfg cc;
	uint64_t iters, warmup;
	int data;
};
extern const char *const coll_datas[];

/* --- train */
struct train_cfg {
	struct coll_cfg cc;
	uint64_t steps, batch, lr_ppm, momentum_ppm, target_ppm, eval_every, eval_samples, final_samples;
	uint64_t input, hidden1, hidden2, classes;
	int schedule;
};
extern const char *const train_schedules[];

/* --- storage */
enum st_rw { RW_READ, RW_WRITE, RW_RANDREAD, RW_RANDWRITE, RW_RW, RW_RANDRW };
struct st_cfg {
	int rw;
	uint64_t bs;
	uint64_t volume;
	uint64_t iodepth;
	uint64_t iters;
	uint64_t rwmixread;	/* percent of reads in rw/randrw */
	uint64_t seed;
	uint64_t op_timeout;
	struct vb_rc_knobs rc;
};
extern const char *const st_rw_names[];

/* --- kv */
#define MAX_CLIENTS 15
#define MAX_STANDBY 7	/* standby QPs a client may fail over to */
enum kv_mix { MIX_A, MIX_B, MIX_C };
enum kv_dist { DIST_ZIPF, DIST_UNIFORM };
enum kv_crash_at { CRASH_LOCK, CRASH_BODY };
enum kv_recovery { REC_NONE, REC_RESEND, REC_LOG };
enum { HK_GET, HK_PUT, HK_INCR, HK_CAS };	/* a history record's kind (lib/lin.h: get, faa, faa, faa) */

struct kv_cfg {
	int workload;
	int dist;
	uint64_t keys;
	uint64_t buckets;
	uint64_t ops;
	uint64_t rate;		/* ops/s, 0 = closed loop */
	uint64_t theta_milli;	/* zipf theta x 1000 */
	uint64_t clients;
	uint64_t seed;
	uint64_t op_timeout;
	uint64_t incr;		/* percent of the non-update operations that are INCR */
	uint64_t cas;		/* ... and CAS updates of the same counter */
	int lock;		/* off: PUT without the lock (unsafe) */
	int history;
	uint64_t lease;		/* ns a lock may be held before it can be taken over */
	uint64_t client;	/* this client's number, 1.. (set by rdmactl; 0: unknown) */
	uint64_t crash;		/* client 1 dies at its crash-th PUT, holding the lock */
	int crash_at;		/* enum kv_crash_at */
	int recovery;		/* enum kv_recovery */
	uint64_t standby;	/* recovery: standby QPs per client, connected up front */
	struct vb_rc_knobs rc;
};
extern const char *const kv_mixes[], *const kv_dists[], *const kv_onoff[], *const kv_crash_ats[],
	*const kv_recoveries[];

extern const struct opt p2p_opts[], cw_opts[], train_opts[], st_opts[], kv_opts[];

/* a workload's option table by its name, NULL if none */
const struct opt *wl_opts(const char *name);

#endif
