/* SPDX-License-Identifier: MIT */
/*
 * Linearizability of a key-value store's history (issue 17). Every client
 * records each operation's invocation and completion times, its arguments
 * and its result; lin_check decides whether one total order of the
 * operations, each taking effect at one instant between its invocation and
 * its completion, explains every result against a sequential store.
 *
 * Keys are independent (a history is linearizable iff each key's is:
 * Herlihy and Wing's locality), so each key's operations are searched on
 * their own: Wing and Gong's search with Lowe's memoization of (the
 * operations linearized so far, the value), as Porcupine and Knossos do.
 * An operation that never completed (its client died, its QP broke) may
 * have taken effect at any instant after its invocation, or never.
 * Completion and invocation at the same nanosecond count as concurrent.
 */
#ifndef RTB_LIN_H
#define RTB_LIN_H

#include <stddef.h>
#include <stdint.h>

enum lin_kind {
	LIN_GET,	/* out: the value read */
	LIN_PUT,	/* arg: the value written */
	LIN_FAA,	/* arg: the addend; out: the value before */
	LIN_CAS,	/* arg: expected, arg2: new; out: 1 swapped, 0 not */
};

#define LIN_PENDING UINT64_MAX	/* ret of an operation that never completed */

struct lin_op {
	uint64_t call, ret;	/* ns, any common clock; ret >= call or LIN_PENDING */
	uint64_t key;
	uint64_t arg, arg2, out;
	uint32_t client;
	uint8_t kind;		/* enum lin_kind */
	uint8_t maybe;		/* its outcome is unknown (it completed in error: a QP that
				 * broke): it took effect at one instant of [call, ret], or
				 * never; out is not used. LIN_PENDING implies it */
};

struct lin_result {
	int linearizable;	/* 1 yes, 0 no, -1 undecided (the search ran out of budget) */
	uint64_t key;		/* no or undecided: the key whose history is */
	size_t *bad, nbad;	/* no: a failing sub-history of that key, indices into the
				 * ops in invocation order (malloc'd); minimal: without any
				 * one of them (but writes a read in it needs) the rest is
				 * linearizable */
	int minimal;		/* 0: the search budget ran out while cutting it down */
	uint64_t from;		/* the value the sub-history starts from: init, or what the
				 * key's first `before` operations (reads and adds that all
				 * completed before it, so one value only) left */
	size_t before;
	size_t keys;		/* keys checked */
	uint64_t states;	/* search states visited, all keys */
};

/*
 * Check n operations, every key starting at init. budget: search states
 * one key may visit before it is called undecided (0: 10^7). Returns 0, or
 * -EINVAL (an unknown kind, ret before call) or -ENOMEM; r is filled in
 * either way (free with lin_result_free).
 */
int lin_check(const struct lin_op *ops, size_t n, uint64_t init, uint64_t budget,
	      struct lin_result *r);
void lin_result_free(struct lin_result *r);

#endif
