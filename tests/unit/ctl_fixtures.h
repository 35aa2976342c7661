/* SPDX-License-Identifier: MIT */
/*
 * Agent results made up for the controller's unit tests: the shapes the
 * agents send (workloads/, one file each), with known numbers, so that folding,
 * accumulation and rendering can be checked without a VM.
 */
#ifndef RTB_CTL_FIXTURES_H
#define RTB_CTL_FIXTURES_H

#include <jansson.h>
#include "lib/hist.h"

/* a histogram JSON of n values base, base + step, ... */
static inline json_t *fx_hist(uint64_t n, uint64_t base, uint64_t step)
{
	struct hist h;

	hist_init(&h);
	for (uint64_t i = 0; i < n; i++)
		hist_record(&h, base + i * step);
	return hist_to_json(&h);
}

/* one collective rank's result; lossy: lost pieces and an error figure */
static inline json_t *fx_rank(int rank, uint64_t iters, uint64_t base_ns, int lossy)
{
	json_t *r = json_pack("{s:i,s:s,s:I,s:I,s:o,s:f,s:f,s:f,s:I,s:{s:I,s:I,s:I}}", "rank", rank,
			      "mode", lossy ? "lossy" : "rc", "iters", (json_int_t)iters, "size",
			      (json_int_t)1048576, "time_ns", fx_hist(iters, base_ns, 1000),
			      "time_avg_ns", (double)base_ns + 500.0 * (double)iters,
			      "algbw_bytes_per_s", 1e8, "busbw_bytes_per_s", 1.333e8, "wrong",
			      (json_int_t)(lossy ? 1000 : 0), "hw_counters_delta",
			      "completer_retry_err", (json_int_t)(3 + rank), "rcvd_seq_err",
			      (json_int_t)2, "out_of_seq_request", (json_int_t)7);

	if (lossy) {
		json_object_update_new(r, json_pack("{s:I,s:I,s:I,s:I,s:I}", "lost_pieces",
						    (json_int_t)(10 + rank), "pieces_expected",
						    (json_int_t)1000, "lost_bytes",
						    (json_int_t)(10240 + 1024 * rank), "recovered_pieces",
						    (json_int_t)0, "step_timeouts", (json_int_t)1));
		json_object_set_new(r, "grad_error",
				    json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "samples",
					      (json_int_t)iters, "nmse_mean", 0.01 * (rank + 1),
					      "nmse_max", 0.05, "linf_mean", 1.5, "linf_max",
					      3.0 + rank, "linf_rel_max", 0.2, "cosine_mean",
					      0.99 - 0.001 * rank, "cosine_min", 0.97 - 0.01 * rank));
	}
	json_object_set_new(r, "intervals",
			    json_pack("[{s:I,s:I,s:o,s:I,s:I,s:I}]", "t_start_ns", (json_int_t)1000,
				      "t_ns", (json_int_t)250001000, "lat_ns",
				      fx_hist(iters, base_ns, 1000), "lost_pieces",
				      (json_int_t)(lossy ? 10 : 0), "pieces_expected",
				      (json_int_t)(lossy ? 1000 : 0), "retrans", (json_int_t)5));
	return r;
}

/* one round of n ranks */
static inline json_t *fx_round(int n, uint64_t iters, uint64_t base_ns, int lossy)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(a, fx_rank(i, iters, base_ns + 10000 * (uint64_t)i, lossy));
	return a;
}

/* a kv round: two clients (gets, puts), then the server */
static inline json_t *fx_kv_round(json_int_t puts0, json_int_t puts1, json_int_t upd, json_int_t bad)
{
	return json_pack("[{s:I,s:I,s:o,s:o,s:f,s:I},{s:I,s:I,s:o,s:o,s:f,s:I},{s:I,s:I,s:I}]",
			 "gets", (json_int_t)100, "puts", puts0, "get_lat_ns", fx_hist(100, 20000, 100),
			 "put_lat_ns", fx_hist((uint64_t)puts0, 60000, 100), "ops_per_s", 500.0,
			 "mismatches", (json_int_t)0, "gets", (json_int_t)100, "puts", puts1,
			 "get_lat_ns", fx_hist(100, 21000, 100), "put_lat_ns",
			 fx_hist((uint64_t)puts1, 61000, 100), "ops_per_s", 400.0, "mismatches",
			 (json_int_t)0, "keys_found", (json_int_t)2000, "updates_recorded", upd,
			 "bad_slots", bad);
}

#endif
