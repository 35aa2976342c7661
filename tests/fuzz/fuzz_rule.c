// SPDX-License-Identifier: MIT
/* libFuzzer: rdma-inject's rule grammar (injector/rule.c): words in, a rule
 * or an error out, and a parsed rule formats and parses again */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "injector/inj.h"

static int split(char *s, char **argv, int max)
{
	int n = 0;

	for (char *t = strtok(s, " \t\n"); t && n < max; t = strtok(NULL, " \t\n"))
		argv[n++] = t;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[1024], text[512], err[256], *argv[64];
	struct inj_rule r, r2;
	int n;

	if (size >= sizeof(buf))
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	n = split(buf, argv, 64);
	inj_rule_init(&r);
	if (inj_rule_parse(&r, n, argv, 0, err, sizeof(err)))
		return 0;
	inj_rule_format(&r, text, sizeof(text));
	n = split(text, argv, 64);
	inj_rule_init(&r2);
	inj_rule_parse(&r2, n, argv, 0, err, sizeof(err));
	return 0;
}
