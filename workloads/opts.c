// SPDX-License-Identifier: MIT
/* Every workload's option table (opts.h), and the names its values take. */
#include <stddef.h>
#include <string.h>
#include "opts.h"

const char *const coll_ops[] = { "allreduce", "reduce_scatter", "allgather", "broadcast",
				 "alltoall", NULL };
const char *const coll_prios[] = { "none", "magnitude", NULL };
const char *const coll_onoff[] = { "off", "on", NULL };
const char *const coll_fills[] = { "zero", "previous", NULL };
const char *const coll_waits[] = { "event", "spin", NULL };

const char *const p2p_tests[] = { "lat", "bw", NULL };
const char *const p2p_op_names[] = { "write", "read", "send", "cas", "faa", NULL };
const char *const p2p_qp_types[] = { "rc", "uc", "ud", NULL };
const char *const coll_datas[] = { "ints", "gauss", "laplace", "grad", NULL };
const char *const train_schedules[] = { "cosine", "constant", NULL };
const char *const st_rw_names[] = { "read", "write", "randread", "randwrite", "rw", "randrw",
				    NULL };
const char *const kv_mixes[] = { "a", "b", "c", NULL };
const char *const kv_dists[] = { "zipf", "uniform", NULL };
const char *const kv_onoff[] = { "off", "on", NULL };
const char *const kv_crash_ats[] = { "lock", "body", NULL };
const char *const kv_recoveries[] = { "none", "resend_all", "log", NULL };

#define O(f) offsetof(struct p2p_cfg, f)
const struct opt p2p_opts[] = {
	{ "test", OPT_ENUM, O(test), 0, 0, "lat", p2p_tests, "test: lat|bw" },
	{ "op", OPT_ENUM, O(op), 0, 0, "write", p2p_op_names, "RDMA operation: write|read|send|cas|faa" },
	{ "qp", OPT_ENUM, O(qp), 0, 0, "rc", p2p_qp_types,
	  "transport: rc|uc|ud (uc: write, send; ud: send of one MTU at most)" },
	{ "size", OPT_SIZE, O(size), 1, 1 << 20, "2", NULL, "message size in bytes" },
	{ "iters", OPT_UINT, O(iters), 1, 100000000, "1000", NULL, "measured iterations" },
	{ "warmup", OPT_UINT, O(warmup), 0, 1000000, "0", NULL, "unmeasured iterations first" },
	{ "op_timeout", OPT_TIME, O(op_timeout), 1000000, 3600000000000ULL, "10s", NULL,
	  "fail when one iteration takes longer" },
	{ "qp_timeout", OPT_UINT, O(qp_timeout), 0, 31, "14", NULL,
	  "RC ACK timeout exponent: 4.096 us * 2^n" },
	{ "retry_cnt", OPT_UINT, O(retry_cnt), 0, 7, "7", NULL, "RC retries (7 = infinite on rxe)" },
	{ "rnr_retry", OPT_UINT, O(rnr_retry), 0, 7, "7", NULL, "RNR retries (7 = infinite)" },
	{ "tx_depth", OPT_UINT, O(tx_depth), 1, 120, "120", NULL, "bw: operations in flight" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};
#undef O

#define O(f) offsetof(struct cw_cfg, f)
const struct opt cw_opts[] = {
	{ "op", OPT_ENUM, O(cc.op), 0, 0, "allreduce", coll_ops,
	  "collective: allreduce|reduce_scatter|allgather|broadcast|alltoall" },
	{ "root", OPT_UINT, O(cc.root), 0, COLL_MAX_RANKS - 1, "0", NULL, "broadcast: the root rank" },
	{ "size", OPT_SIZE, O(cc.size), 4, 256ULL << 20, "1M", NULL, "bytes per rank (float32)" },
	{ "iters", OPT_UINT, O(iters), 1, 1000000, "20", NULL, "measured iterations" },
	{ "warmup", OPT_UINT, O(warmup), 0, 100000, "2", NULL, "unmeasured iterations first" },
	{ "data", OPT_ENUM, O(data), 0, 0, "ints", coll_datas,
	  "input values: ints (exact sums) | gauss | laplace (gradient-like) | grad (real MLP "
	  "gradients)" },
	COLL_OPTS(O(cc)),
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};
#undef O

#define O(f) offsetof(struct train_cfg, f)
const struct opt train_opts[] = {
	{ "steps", OPT_UINT, O(steps), 1, 1000000, "150", NULL, "training steps" },
	{ "batch", OPT_UINT, O(batch), 1, 4096, "8", NULL, "samples per rank per step" },
	{ "lr", OPT_PPM, O(lr_ppm), 1, 10000000, "2%", NULL, "learning rate (2% = 0.02)" },
	{ "schedule", OPT_ENUM, O(schedule), 0, 0, "cosine", train_schedules,
	  "learning rate over the steps: cosine (decays to 0 at the last step) | constant" },
	{ "momentum", OPT_PPM, O(momentum_ppm), 0, 999999, "90%", NULL, "SGD momentum" },
	{ "target", OPT_PPM, O(target_ppm), 1, 1000000, "70%", NULL,
	  "accuracy whose first reaching is the time to accuracy (on the curve's steep part: "
	  "from ~73% the curve pauses and wobbles for some 20 steps before it climbs to ~86%, "
	  "and there the evaluation's noise decides when a target is crossed)" },
	{ "eval_every", OPT_UINT, O(eval_every), 1, 1000000, "5", NULL,
	  "evaluate every N steps (off the training clock)" },
	{ "eval_samples", OPT_UINT, O(eval_samples), 16, 100000, "256", NULL,
	  "held-out samples per evaluation" },
	{ "final_samples", OPT_UINT, O(final_samples), 16, 1000000, "2048", NULL,
	  "held-out samples for the final accuracy" },
	{ "input", OPT_UINT, O(input), 2, 4096, "128", NULL, "input dimension" },
	{ "hidden1", OPT_UINT, O(hidden1), 1, 8192, "512", NULL, "first hidden layer" },
	{ "hidden2", OPT_UINT, O(hidden2), 1, 8192, "264", NULL, "second hidden layer" },
	{ "classes", OPT_UINT, O(classes), 2, 1000, "10", NULL, "classes" },
	COLL_OPTS(O(cc)),
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};
#undef O

#define O(f) offsetof(struct st_cfg, f)
const struct opt st_opts[] = {
	{ "rw", OPT_ENUM, O(rw), 0, 0, "randrw", st_rw_names,
	  "pattern: read|write|randread|randwrite|rw|randrw" },
	{ "bs", OPT_SIZE, O(bs), 512, 1 << 20, "4k", NULL, "block size" },
	{ "volume", OPT_SIZE, O(volume), 4096, 1ULL << 30, "16M", NULL, "target volume size" },
	{ "iodepth", OPT_UINT, O(iodepth), 1, 120, "16", NULL, "I/Os in flight" },
	{ "iters", OPT_UINT, O(iters), 1, 100000000, "2000", NULL, "I/Os to issue" },
	{ "rwmixread", OPT_UINT, O(rwmixread), 0, 100, "50", NULL, "percent reads (rw, randrw)" },
	{ "seed", OPT_UINT, O(seed), 0, UINT64_MAX, "1", NULL, "data pattern and offsets seed" },
	{ "op_timeout", OPT_TIME, O(op_timeout), 1000000, 3600000000000ULL, "30s", NULL,
	  "fail when one I/O takes longer" },
	VB_RC_KNOB_OPTS(O(rc)),
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};
#undef O

#define O(f) offsetof(struct kv_cfg, f)
const struct opt kv_opts[] = {
	{ "workload", OPT_ENUM, O(workload), 0, 0, "a", kv_mixes, "YCSB mix: a (50% updates), b (5%), c (reads)" },
	{ "dist", OPT_ENUM, O(dist), 0, 0, "zipf", kv_dists, "key distribution: zipf|uniform" },
	{ "keys", OPT_UINT, O(keys), 1, 10000000, "10000", NULL, "keys in the store" },
	{ "buckets", OPT_UINT, O(buckets), 0, 10000000, "0", NULL, "buckets of 4 slots (0 = as many as keys)" },
	{ "ops", OPT_UINT, O(ops), 1, 100000000, "2000", NULL, "operations per client" },
	{ "rate", OPT_UINT, O(rate), 0, 10000000, "0", NULL, "open loop ops/s per client (0: closed)" },
	{ "theta", OPT_UINT, O(theta_milli), 0, 3000, "990", NULL, "zipf theta x 1000" },
	{ "clients", OPT_UINT, O(clients), 1, MAX_CLIENTS, "1", NULL, "clients (set by rdmactl)" },
	{ "seed", OPT_UINT, O(seed), 0, UINT64_MAX, "1", NULL, "random seed" },
	{ "op_timeout", OPT_TIME, O(op_timeout), 1000000, 3600000000000ULL, "10s", NULL,
	  "fail when one operation takes longer" },
	{ "incr", OPT_UINT, O(incr), 0, 100, "0", NULL,
	  "percent of the reads made increments (FETCH_AND_ADD on the key's counter)" },
	{ "cas", OPT_UINT, O(cas), 0, 100, "0", NULL,
	  "percent of the reads made CAS updates of the key's counter (READ, CAS v to v+1, retry)" },
	{ "lock", OPT_ENUM, O(lock), 0, 0, "on", kv_onoff,
	  "off: PUT without its CAS lock (unsafe: concurrent PUTs lose updates)" },
	{ "history", OPT_ENUM, O(history), 0, 0, "on", kv_onoff,
	  "record every operation for the linearizability check (ops <= 100000)" },
	{ "lease", OPT_TIME, O(lease), 1000000, 600000000000ULL, "1s", NULL,
	  "a lock held longer may be taken over (longer than the QP's whole retry time)" },
	{ "client", OPT_UINT, O(client), 0, MAX_CLIENTS, "0", NULL, "this client's number (set by rdmactl)" },
	{ "crash", OPT_UINT, O(crash), 0, 100000000, "0", NULL,
	  "test: client 1 dies at its Nth PUT holding the lock (its QP to the error state)" },
	{ "crash_at", OPT_ENUM, O(crash_at), 0, 0, "lock", kv_crash_ats,
	  "crash: lock (before the body WRITE: rolled back) or body (after it: rolled forward)" },
	{ "recovery", OPT_ENUM, O(recovery), 0, 0, "none", kv_recoveries,
	  "when a QP breaks: none (the run fails), resend_all (re-issue the operation in flight), "
	  "log (a completion log tells whether it executed: restored or re-issued)" },
	{ "standby", OPT_UINT, O(standby), 1, MAX_STANDBY, "3", NULL,
	  "recovery: standby QPs per client, connected up front, failed over to in turn" },
	VB_RC_KNOB_OPTS(O(rc)),
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};
#undef O

const struct opt *wl_opts(const char *name)
{
	static const struct {
		const char *name;
		const struct opt *opts;
	} all[] = { { "p2p", p2p_opts }, { "collective", cw_opts }, { "train", train_opts },
		    { "storage", st_opts }, { "kv", kv_opts } };
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i].name, name))
			return all[i].opts;
	return NULL;
}
