// SPDX-License-Identifier: MIT
/*
 * The linearizability checker (lib/lin.c): hand-made histories with known
 * answers; random histories from a simulated linearizable store (each
 * operation takes effect at a random instant inside its interval) that it
 * must accept, with pending operations that did or did not take effect;
 * the same histories with one result changed, which it must reject with
 * that operation in its minimal sub-history; an unsafe store (fetch-and-add
 * as a read and a later write, as a PUT without the lock does) that it must
 * catch whenever an update was lost; the budget; and its speed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "expect.h"
#include "../../lib/lin.h"

static uint64_t s = 11;

static uint64_t rnd(void)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

static struct lin_op op(int kind, uint64_t call, uint64_t ret, uint64_t arg, uint64_t out)
{
	return (struct lin_op){ .kind = (uint8_t)kind, .call = call, .ret = ret, .arg = arg,
				.out = out, .key = 1 };
}

static int check(const struct lin_op *h, size_t n, struct lin_result *r)
{
	int e = lin_check(h, n, 0, 0, r);

	EXPECT(e == 0);
	return r->linearizable;
}

static int has(const struct lin_result *r, size_t i)
{
	for (size_t k = 0; k < r->nbad; k++)
		if (r->bad[k] == i)
			return 1;
	return 0;
}

static void by_hand(void)
{
	struct lin_result r;
	struct lin_op h[8];

	/* sequential: put 1, get 1 */
	h[0] = op(LIN_PUT, 0, 10, 1, 0);
	h[1] = op(LIN_GET, 20, 30, 0, 1);
	EXPECT(check(h, 2, &r) == 1 && r.keys == 1);
	lin_result_free(&r);
	/* a stale read after the write completed */
	h[1].out = 0;
	EXPECT(check(h, 2, &r) == 0 && r.key == 1 && r.nbad == 2 && has(&r, 0) && has(&r, 1));
	lin_result_free(&r);
	/* concurrent with the write: either value */
	h[1] = op(LIN_GET, 5, 6, 0, 0);
	EXPECT(check(h, 2, &r) == 1);
	h[1].out = 1;
	EXPECT(check(h, 2, &r) == 1);
	h[1].out = 2;	/* never written */
	EXPECT(check(h, 2, &r) == 0 && r.nbad == 1 && has(&r, 1));
	lin_result_free(&r);
	/* touching intervals (a completion and an invocation at one instant) are concurrent */
	h[1] = op(LIN_GET, 10, 12, 0, 0);
	EXPECT(check(h, 2, &r) == 1);
	/* two reads that see the writes in opposite orders: not linearizable */
	h[0] = op(LIN_PUT, 0, 100, 1, 0);
	h[1] = op(LIN_PUT, 0, 100, 2, 0);
	h[2] = op(LIN_GET, 10, 20, 0, 1);
	h[3] = op(LIN_GET, 30, 40, 0, 2);
	h[4] = op(LIN_GET, 50, 60, 0, 1);
	EXPECT(check(h, 5, &r) == 0 && r.nbad == 5);	/* no read may lose its write */
	lin_result_free(&r);
	EXPECT(check(h, 4, &r) == 1);
	/* fetch-and-add done twice: +1 +1 seen as 0, 1, and then 3 */
	h[0] = op(LIN_FAA, 0, 10, 1, 0);
	h[1] = op(LIN_FAA, 20, 30, 1, 1);
	h[2] = op(LIN_GET, 40, 50, 0, 3);
	EXPECT(check(h, 3, &r) == 0 && has(&r, 2));
	lin_result_free(&r);
	h[2].out = 2;
	EXPECT(check(h, 3, &r) == 1);
	/* a lost update: both adds saw 0 and both completed */
	h[1] = op(LIN_FAA, 5, 30, 1, 0);
	EXPECT(check(h, 2, &r) == 0 && r.nbad == 2);
	lin_result_free(&r);
	/* compare-and-swap: only one of two concurrent CAS 0 -> x wins */
	h[0] = (struct lin_op){ .kind = LIN_CAS, .call = 0, .ret = 10, .arg = 0, .arg2 = 7, .out = 1, .key = 1 };
	h[1] = (struct lin_op){ .kind = LIN_CAS, .call = 0, .ret = 10, .arg = 0, .arg2 = 8, .out = 0, .key = 1 };
	h[2] = op(LIN_GET, 20, 30, 0, 7);
	EXPECT(check(h, 3, &r) == 1);
	h[1].out = 1;	/* both won */
	EXPECT(check(h, 3, &r) == 0);
	lin_result_free(&r);
	/* an operation that never completed may have taken effect, or not */
	h[0] = op(LIN_PUT, 0, LIN_PENDING, 5, 0);
	h[1] = op(LIN_GET, 10, 11, 0, 5);
	h[2] = op(LIN_GET, 20, 21, 0, 5);
	EXPECT(check(h, 3, &r) == 1);
	h[1].out = 0;
	EXPECT(check(h, 3, &r) == 1);	/* took effect between the reads */
	h[1].out = 5;
	h[2].out = 0;			/* ... but not undone */
	EXPECT(check(h, 3, &r) == 0);
	lin_result_free(&r);
	/* keys are independent; the failing one is named */
	h[0] = op(LIN_PUT, 0, 10, 1, 0);
	h[1] = op(LIN_GET, 20, 30, 0, 1);
	h[2] = op(LIN_PUT, 0, 10, 1, 0);
	h[3] = op(LIN_GET, 20, 30, 0, 0);
	h[2].key = h[3].key = 9;
	EXPECT(check(h, 4, &r) == 0 && r.key == 9 && r.keys == 2 && has(&r, 2) && has(&r, 3));
	lin_result_free(&r);
	/* a lost update after 6 clean adds: the counterexample is the two adds
	 * that saw the same value, starting from what the six left */
	{
		struct lin_op a[8];
		int i;

		for (i = 0; i < 6; i++)
			a[i] = op(LIN_FAA, (uint64_t)i * 10, (uint64_t)i * 10 + 5, 1, (uint64_t)i);
		a[6] = op(LIN_FAA, 100, 120, 1, 6);
		a[7] = op(LIN_FAA, 110, 130, 1, 6);
		EXPECT(check(a, 8, &r) == 0 && r.nbad == 2 && has(&r, 6) && has(&r, 7) &&
		       r.from == 6 && r.before == 6);
		lin_result_free(&r);
	}
	/* bad input */
	h[0].ret = 0;
	h[0].call = 5;
	EXPECT(lin_check(h, 1, 0, 0, &r) == -EINVAL);
	h[0] = op(9, 0, 1, 0, 0);
	EXPECT(lin_check(h, 1, 0, 0, &r) == -EINVAL);
	EXPECT(lin_check(h, 0, 0, 0, &r) == 0 && r.linearizable == 1);
}

/*
 * A random history of a linearizable store: nc clients, each one operation
 * at a time, on nk keys; every operation takes effect at a random instant
 * of its interval (or, for a client that dies, at a random instant after
 * its invocation or never). unsafe: a fetch-and-add reads at one instant
 * and writes at a later one (a read-modify-write without the lock).
 * Returns the number of updates lost (unsafe only).
 */
struct ev {
	uint64_t t;
	size_t i;
	int write;	/* unsafe FAA: the write half */
};

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

static size_t simulate(struct lin_op *h, size_t n, int nc, int nk, int unsafe, int pending)
/* unsafe: adds and reads only, so that a lost update always shows */
{
	struct ev *ev = calloc(2 * n, sizeof(*ev));
	uint64_t *t = calloc((size_t)nc, sizeof(*t)), val[64] = { 0 }, readv[4096];
	size_t i, ne = 0, lost = 0;

	for (i = 0; i < n; i++) {
		int c = (int)(rnd() % (size_t)nc), k = (int)(rnd() % (uint64_t)nk);
		uint64_t call = t[c] + rnd() % 50, dur = 1 + rnd() % 200, lp = call + rnd() % dur;
		int kind = unsafe ? (rnd() % 2 ? LIN_FAA : LIN_GET) : (int)(rnd() % 4);

		h[i] = (struct lin_op){ .kind = (uint8_t)kind, .call = call, .ret = call + dur,
					.key = (uint64_t)k, .client = (uint32_t)c };
		h[i].arg = kind == LIN_PUT ? rnd() % 5 : kind == LIN_FAA ? 1 + rnd() % 3 : rnd() % 5;
		h[i].arg2 = rnd() % 5;
		t[c] = call + dur + 1;
		if (pending && rnd() % 20 == 0) {	/* its QP breaks: an error completion */
			h[i].maybe = 1;
			if (rnd() % 2)
				continue;	/* and it never took effect */
		}
		if (unsafe && kind == LIN_FAA) {
			ev[ne++] = (struct ev){ .t = call, .i = i };
			ev[ne++] = (struct ev){ .t = call + dur - 1, .i = i, .write = 1 };
		} else {
			ev[ne++] = (struct ev){ .t = lp, .i = i };
		}
	}
	qsort(ev, ne, sizeof(*ev), ev_cmp);
	for (i = 0; i < ne; i++) {
		struct lin_op *o = &h[ev[i].i];
		uint64_t *v = &val[o->key];

		switch (o->kind) {
		case LIN_GET:
			o->out = *v;
			break;
		case LIN_PUT:
			*v = o->arg;
			break;
		case LIN_FAA:
			if (unsafe && !ev[i].write) {
				readv[ev[i].i % 4096] = o->out = *v;
			} else if (unsafe) {
				lost += *v != readv[ev[i].i % 4096];
				*v = readv[ev[i].i % 4096] + o->arg;
			} else {
				o->out = *v;
				*v += o->arg;
			}
			break;
		default:
			o->out = *v == o->arg;
			if (o->out)
				*v = o->arg2;
		}
	}
	free(ev);
	free(t);
	return lost;
}

static void random_histories(void)
{
	enum { N = 400 };
	struct lin_op h[N];
	struct lin_result r;
	int trial, ok = 0, caught = 0, lossy = 0, named = 0, clean_unsafe = 0, ucaught = 0;

	for (trial = 0; trial < 200; trial++) {
		int nc = 2 + trial % 6, nk = 1 + trial % 4;
		size_t i;

		simulate(h, N, nc, nk, 0, trial % 2);
		ok += check(h, N, &r) == 1;
		lin_result_free(&r);
		/* one completed read or add changed to a value nothing wrote */
		for (i = rnd() % N; h[i].maybe || (h[i].kind != LIN_GET && h[i].kind != LIN_FAA);
		     i = (i + 1) % N)
			;
		h[i].out = 1000000 + (uint64_t)trial;
		caught += check(h, N, &r) == 0;
		named += has(&r, i);
		lin_result_free(&r);
	}
	fprintf(stderr, "random histories: %d of 200 linearizable ones accepted, %d of 200 with one "
		"wrong result rejected (%d with that operation in the minimal sub-history)\n", ok, caught,
		named);
	EXPECT(ok == 200 && caught == 200 && named == 200);
	/* the unsafe store: caught whenever it lost an update, and only then
	 * (few clients on one key: the adds overlap often) */
	for (trial = 0; trial < 200; trial++) {
		size_t lost = simulate(h, 60, 1 + trial % 3, 1, 1, 0);	/* 1 client: no overlap */
		int x = check(h, 60, &r);

		lin_result_free(&r);
		if (lost) {
			lossy++;
			ucaught += x == 0;
			if (x != 0)
				fprintf(stderr, "unsafe trial %d: %zu updates lost, checker said %d\n", trial,
					lost, x);
		} else {
			clean_unsafe += x == 1;
		}
	}
	fprintf(stderr, "unsafe store: %d of 200 histories lost updates, all %s; the other %d: %d "
		"accepted\n", lossy, ucaught == lossy ? "caught" : "NOT all caught", 200 - lossy, clean_unsafe);
	EXPECT(lossy >= 50 && ucaught == lossy && clean_unsafe == 200 - lossy);
}

/* many concurrent writes and a read of a value none wrote: the search must
 * try every order; a small budget gives up (undecided) instead */
static void budget(void)
{
	struct lin_op h[41];
	struct lin_result r;
	int i;

	for (i = 0; i < 40; i++)
		h[i] = op(LIN_PUT, 0, 1000, (uint64_t)i, 0);
	h[40] = op(LIN_GET, 10, 20, 0, 77);
	EXPECT(lin_check(h, 41, 0, 1000, &r) == 0 && r.linearizable == -1 && r.key == 1 &&
	       r.states >= 1000);
	lin_result_free(&r);
}

/* checked operations per second on a store-like history (printed, not
 * asserted: machines differ) */
static void speed(void)
{
	enum { N = 200000 };
	struct lin_op *h = malloc(N * sizeof(*h));
	struct lin_result r;
	struct timespec a, b;
	double sec;

	simulate(h, N, 8, 64, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	EXPECT(check(h, N, &r) == 1 && r.keys == 64);
	clock_gettime(CLOCK_MONOTONIC, &b);
	sec = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
	fprintf(stderr, "speed: %d operations (8 clients, 64 keys) checked in %.3f s: %.0f ops/s, %llu "
		"search states\n", N, sec, N / sec, (unsigned long long)r.states);
	lin_result_free(&r);
	free(h);
}

int main(void)
{
	by_hand();
	random_histories();
	budget();
	speed();
	return expect_done("test_lin");
}
