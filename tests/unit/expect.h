/* SPDX-License-Identifier: MIT */
/* A tiny EXPECT harness: every check prints on failure; main returns the count. */
#ifndef RTB_EXPECT_H
#define RTB_EXPECT_H

#include <stdio.h>

static int expect_failures;
static int expect_checks;

#define EXPECT(cond)                                                                   \
	do {                                                                           \
		expect_checks++;                                                       \
		if (!(cond)) {                                                         \
			expect_failures++;                                             \
			fprintf(stderr, "%s:%d: EXPECT(%s) failed\n", __FILE__, __LINE__, #cond); \
		}                                                                      \
	} while (0)

/* EXPECT with a printf message on failure */
#define EXPECT_MSG(cond, ...)                                                          \
	do {                                                                           \
		expect_checks++;                                                       \
		if (!(cond)) {                                                         \
			expect_failures++;                                             \
			fprintf(stderr, "%s:%d: EXPECT(%s) failed: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                  \
			fputc('\n', stderr);                                           \
		}                                                                      \
	} while (0)

#define EXPECT_EQ_U(a, b)                                                              \
	do {                                                                           \
		unsigned long long _a = (a), _b = (b);                                 \
		expect_checks++;                                                       \
		if (_a != _b) {                                                        \
			expect_failures++;                                             \
			fprintf(stderr, "%s:%d: %s == %llu, expected %s == %llu\n", __FILE__, \
				__LINE__, #a, _a, #b, _b);                             \
		}                                                                      \
	} while (0)

static inline int expect_done(const char *name)
{
	fprintf(stderr, "%s: %d checks, %d failed\n", name, expect_checks, expect_failures);
	return expect_failures ? 1 : 0;
}

#endif
