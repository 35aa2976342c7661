// SPDX-License-Identifier: MIT
/*
 * kv (workloads/kv.c): one server holds the table, every other member is a
 * client doing GETs by RDMA READ, PUTs by CAS (lock), READ, WRITE (body),
 * WRITE (unlock), INCRs by FETCH_AND_ADD on a key's counter and CAS
 * updates of it (READ, CAS v to v+1). After the run the server checks every
 * slot; the updates it finds must equal the PUTs the clients made, the
 * counters the INCRs and CAS updates. With history=on (the
 * default) every round's operations, all clients' together, are checked
 * for linearizability (lib/lin.h) and the history is dropped from the
 * results: the arm says whether every round was linearizable and, if not,
 * shows the smallest failing part of one.
 */
#include <errno.h>
#include "ctl/wl/wl.h"
#include "lib/clock.h"
#include "lib/lin.h"

static const struct wlc_reserved reserved[] = {
	WLC_RESERVED_RUN,
	{ "ops", "set in run: (run.iters: operations per client)" },
	{ "clients", "set by rdmactl (every node but the server, node1, is a client)" },
	{ "client", "set by rdmactl (each client's number, 1..)" },
	{ NULL, NULL },
};

static const char *const kinds[] = { "get", "put", "incr", "cas", NULL };

static void arm_opts(json_t *o, const char *mode, uint64_t iters, uint64_t warmup, int members)
{
	(void)mode;
	(void)warmup;
	json_object_set_new(o, "ops", json_integer((json_int_t)iters));
	json_object_set_new(o, "clients", json_integer(members - 1));
}

/* one history record [call, ret, kind, key, out] (kind 0 get, 1 put, 2
 * incr, 3 cas) as the checker's: a PUT adds 1 to the key's update count
 * (read under the lock), an INCR or a successful CAS 1 to its counter (a
 * key of its own) */
static int lin_of(const json_t *rec, uint32_t client, const json_t *clk, struct lin_op *o)
{
	int64_t lo = 0, hi = 0;
	int kind;

	if (!json_is_array(rec) || json_array_size(rec) != 5)
		return -EPROTO;
	kind = (int)json_integer_value(json_array_get(rec, 2));
	if (json_array_size(clk) == 2) {	/* its node's clock: [lo, hi] from this host's */
		lo = json_integer_value(json_array_get(clk, 0));
		hi = json_integer_value(json_array_get(clk, 1));
	}
	/* on this host's clock, widened by what is not known of the node's:
	 * called no earlier, returned no later */
	*o = (struct lin_op){
		.call = (uint64_t)(json_integer_value(json_array_get(rec, 0)) - hi),
		.ret = (uint64_t)(json_integer_value(json_array_get(rec, 1)) - lo),
		.key = (uint64_t)json_integer_value(json_array_get(rec, 3)),
		.arg = 1,
		.out = (uint64_t)json_integer_value(json_array_get(rec, 4)),
		.client = client,
		.kind = kind == 0 ? LIN_GET : LIN_FAA,
	};
	return kind < 0 || kind > 3 || o->ret < o->call ? -EPROTO : 0;
}

/*
 * The round's histories (the clients' "history" arrays) checked, and
 * dropped; the verdict on the first client's result as "lin": {checked,
 * linearizable (true, false, or null: undecided), ops, keys, states,
 * check_s, counterexample: the failing sub-history's records, each with
 * its client}. Nothing when no client recorded one.
 */
static void lin_round(json_t *results)
{
	size_t n = json_array_size(results), i, j, nops = 0, k = 0;
	struct lin_op *ops;
	uint8_t *hk;		/* each operation's history kind, for its name */
	struct lin_result r;
	json_t *lin, *ce;
	json_int_t widen = 0;
	double t0;
	int e;

	for (i = 0; i + 1 < n; i++)
		nops += json_array_size(json_object_get(json_array_get(results, i), "history"));
	if (!nops)
		return;
	ops = calloc(nops, sizeof(*ops));
	hk = calloc(nops, 1);
	if (!ops || !hk) {
		free(ops);
		free(hk);
		return;
	}
	for (i = 0; i + 1 < n; i++) {
		json_t *c = json_array_get(results, i), *rec;

		json_array_foreach(json_object_get(c, "history"), j, rec)
			if (!lin_of(rec, (uint32_t)i, json_object_get(c, "clock_offset_ns"), &ops[k]))
				hk[k++] = (uint8_t)json_integer_value(json_array_get(rec, 2));
	}
	for (i = 0; i + 1 < n; i++) {	/* per-node clocks: how much each op was widened */
		const json_t *clk = json_object_get(json_array_get(results, i), "clock_offset_ns");
		json_int_t w = json_integer_value(json_array_get(clk, 1)) -
			       json_integer_value(json_array_get(clk, 0));

		if (w > widen)
			widen = w;
	}
	t0 = rtb_now_s();
	e = lin_check(ops, k, 0, 0, &r);
	lin = json_pack("{s:b,s:I,s:I,s:I,s:f}", "checked", !e, "ops", (json_int_t)k, "keys",
			(json_int_t)r.keys, "states", (json_int_t)r.states, "check_s", rtb_now_s() - t0);
	if (lin && k < nops)
		json_object_set_new(lin, "malformed_records", json_integer((json_int_t)(nops - k)));
	if (lin && widen)	/* clients on separate clocks: ops placed on this host's */
		json_object_set_new(lin, "clock_uncertainty_ns", json_integer(widen));
	if (lin && !e)
		json_object_set_new(lin, "linearizable",
				    r.linearizable < 0 ? json_null() : json_boolean(r.linearizable));
	if (lin && !e && r.linearizable <= 0) {
		const struct lin_op *o;

		/* the key, and which of its registers: its update count or its counter */
		json_object_set_new(lin, "key", json_integer((json_int_t)(r.key & ~(1ULL << 63))));
		json_object_set_new(lin, "object", json_string(r.key >> 63 ? "counter" : "updates"));
		ce = json_array();
		for (i = 0; ce && i < r.nbad; i++) {
			o = &ops[r.bad[i]];
			json_array_append_new(
				ce, json_pack("{s:i,s:s,s:I,s:I,s:I,s:I}", "client", (int)o->client, "op",
					      kinds[hk[r.bad[i]] & 3],
					      "key", (json_int_t)(o->key & ~(1ULL << 63)), "call_ns",
					      (json_int_t)o->call, "ret_ns", (json_int_t)o->ret, "saw",
					      (json_int_t)o->out));
		}
		json_object_set_new(lin, "counterexample", ce);
		json_object_set_new(lin, "counterexample_from", json_integer((json_int_t)r.from));
		json_object_set_new(lin, "counterexample_after", json_integer((json_int_t)r.before));
		json_object_set_new(lin, "counterexample_minimal", json_boolean(r.minimal));
	}
	lin_result_free(&r);
	free(ops);
	free(hk);
	for (i = 0; i + 1 < n; i++)
		json_object_del(json_array_get(results, i), "history");
	if (lin)
		json_object_set_new(json_array_get(results, 0), "lin", lin);
}

/* wrong: the clients' bad reads, the server's bad slots, the updates it
 * holds that no PUT made (or PUTs it does not hold), and the same for the
 * increments. A client that crashed (crash=) died in a PUT that may or may
 * not have taken effect: the updates may be one more. */
static uint64_t fold(json_t *results)
{
	size_t n = json_array_size(results), i;
	const json_t *srv = json_array_get(results, n - 1);
	uint64_t puts = 0, incrs = 0, pending = 0, upd = jr_u64(srv, "updates_recorded");
	uint64_t inc = jr_u64(srv, "incrs_recorded");

	for (i = 0; i + 1 < n; i++) {
		puts += jr_u64(json_array_get(results, i), "puts");
		incrs += jr_u64(json_array_get(results, i), "incrs") +
			 jr_u64(json_array_get(results, i), "cas");
		pending += json_object_get(json_array_get(results, i), "crashed") != NULL;
	}
	if (upd > puts && upd <= puts + pending)
		puts = upd;	/* the dead PUT took effect (its body landed: rolled forward) */
	/* recovery: what the server holds beyond what the clients completed is
	 * operations executed twice; short of it, operations lost */
	json_object_set_new((json_t *)srv, "double_executed",
			    json_integer((json_int_t)((upd > puts ? upd - puts : 0) +
						      (inc > incrs ? inc - incrs : 0))));
	json_object_set_new((json_t *)srv, "lost_ops",
			    json_integer((json_int_t)((upd < puts ? puts - upd : 0) +
						      (inc < incrs ? incrs - inc : 0))));
	lin_round(results);
	return wlc_fold_clients(results, kinds, jr_u64(srv, "bad_slots") +
				(upd > puts ? upd - puts : puts - upd) +
				(inc > incrs ? inc - incrs : incrs - inc));
}

/* the rounds' verdicts: linearizable if every checked round was, false if
 * one was not (its counterexample kept), null if one was undecided */
static void lin_arm(json_t *o, const json_t *rounds)
{
	const json_t *res, *lin, *bad = NULL;
	size_t r;
	int checked = 0, undecided = 0, violations = 0;
	uint64_t ops = 0, states = 0, widen = 0;
	double secs = 0;

	json_array_foreach(rounds, r, res) {
		if (!(lin = json_object_get(json_array_get(res, 0), "lin")) ||
		    !json_is_true(json_object_get(lin, "checked")))
			continue;
		checked++;
		if (jr_u64(lin, "clock_uncertainty_ns") > widen)
			widen = jr_u64(lin, "clock_uncertainty_ns");
		ops += jr_u64(lin, "ops");
		states += jr_u64(lin, "states");
		secs += jr_real(lin, "check_s");
		if (json_is_false(json_object_get(lin, "linearizable"))) {
			violations++;
			bad = bad ? bad : lin;
		}
		undecided += json_is_null(json_object_get(lin, "linearizable"));
	}
	if (!checked)
		return;
	json_object_set_new(o, "linearizable",
			    bad ? json_false() : undecided ? json_null() : json_true());
	json_object_set_new(o, "lin_failed", json_boolean(bad != NULL));
	if (bad)	/* a history no order explains fails the arm, lost updates or not */
		json_object_set_new(o, "verification_failed", json_true());
	json_object_set_new(o, "lin_check",
			    json_pack("{s:i,s:i,s:i,s:I,s:I,s:f,s:f}", "rounds", checked, "violations",
				      violations, "undecided", undecided, "ops", (json_int_t)ops,
				      "states", (json_int_t)states, "seconds", secs, "ops_per_s",
				      secs > 0 ? (double)ops / secs : 0.0));
	if (widen)	/* clients on separate clocks: each op widened by up to this */
		json_object_set_new(json_object_get(o, "lin_check"), "clock_uncertainty_ns",
				    json_integer((json_int_t)widen));
	if (bad)
		json_object_set_new(o, "lin_counterexample",
				    json_pack("{s:O,s:O,s:O,s:O,s:O,s:O}", "key", json_object_get(bad, "key"),
					      "object", json_object_get(bad, "object"),
					      "minimal", json_object_get(bad, "counterexample_minimal"),
					      "from", json_object_get(bad, "counterexample_from"),
					      "after", json_object_get(bad, "counterexample_after"),
					      "ops", json_object_get(bad, "counterexample")));
}

/*
 * recovery= (workloads/kv.c): the rounds' failures (QPs that broke), the
 * operations in flight then issued again or restored from the log, the
 * operations the server holds twice or not at all (its sums against the
 * clients'), and each failure's recovery time (the broken completion to
 * the operation done). Nothing when no client recovers.
 */
static void recovery_arm(json_t *o, const json_t *rounds)
{
	const json_t *res, *c, *t;
	json_t *ns = json_array(), *rec;
	uint64_t f = 0, re = 0, rs = 0, dbl = 0, lost = 0, v[1024];
	const char *mode = NULL;
	size_t r, i, j, n = 0;

	json_array_foreach(rounds, r, res) {
		size_t m = json_array_size(res);

		for (i = 0; i + 1 < m; i++) {
			const json_t *rc = json_object_get(json_array_get(res, i), "recovery");

			if (!rc)
				continue;
			mode = json_string_value(json_object_get(rc, "mode"));
			f += jr_u64(rc, "failures");
			re += jr_u64(rc, "reissued");
			rs += jr_u64(rc, "restored");
			json_array_foreach(json_object_get(rc, "recovery_ns"), j, t) {
				if (n < sizeof(v) / sizeof(v[0]))
					v[n++] = (uint64_t)json_integer_value(t);
				json_array_append(ns, (json_t *)t);
			}
		}
		c = json_array_get(res, m - 1);
		dbl += jr_u64(c, "double_executed");
		lost += jr_u64(c, "lost_ops");
	}
	if (!mode) {
		json_decref(ns);
		return;
	}
	for (i = 1; i < n; i++)	/* a handful: insertion sort */
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	rec = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:o}", "mode", mode, "failures", (json_int_t)f,
			"reissued", (json_int_t)re, "restored", (json_int_t)rs, "double_executed",
			(json_int_t)dbl, "lost_ops", (json_int_t)lost, "recovery_ns", ns);
	if (rec && n)
		json_object_set_new(rec, "recovery_time_ns",
				    json_pack("{s:I,s:I,s:I}", "min", (json_int_t)v[0], "median",
					      (json_int_t)v[n / 2], "max", (json_int_t)v[n - 1]));
	json_object_set_new(o, "recovery", rec);
}

static json_t *arm_json(const struct arm_acc *a, const json_t *rounds)
{
	json_t *o = report_ops_arm(a, rounds, kinds, "ops_per_s");

	if (o) {
		lin_arm(o, rounds);
		recovery_arm(o, rounds);
	}
	return o;
}

const struct wlc wlc_kv = {
	.name = "kv",
	.topo = WLC_STAR,
	.measure = MEASURE_OPS,
	.unit = "operations per client",
	.modes = 1u << M_RC,
	.modes_why = "kv uses RDMA READ and atomics, which need RC",
	.rounds = 1,
	.in_profile = 1,
	.reserved = reserved,
	.arm_opts = arm_opts,
	.fold = fold,
	.arm_json = arm_json,
};
