// SPDX-License-Identifier: MIT
/*
 * The TUI edits parsed rules, not strings: + / - and :drop change a rule's
 * selection through rdma-inject's own grammar, and whatever else the rule
 * says survives.
 */
#include <errno.h>
#include <string.h>
#include "expect.h"
#include "ctl/tui/tui.h"

static int with(const char *rule, const char *pct, const char *want)
{
	struct inj_rule r;
	char out[256];

	if (model_rule_parse(rule, &r) || tui_with_drop(&r, pct, out, sizeof(out)))
		return 0;
	if (strcmp(out, want))
		fprintf(stderr, "'%s' with drop %s: '%s', expected '%s'\n", rule, pct, out, want);
	return !strcmp(out, want);
}

int main(void)
{
	char out[256];

	EXPECT(with("opcode data drop 1%", "5%", "opcode data drop 5%"));
	EXPECT(with("opcode data drop 1.00%", "0.50%", "opcode data drop 0.5%"));
	EXPECT(with("drop", "2%", "drop 2%"));
	EXPECT(with("qpn 0x11 psn 100-200 opcode data drop 10%", "20%",
		    "qpn 0x11 opcode data psn 100-200 drop 20%"));	/* the formatter's order */
	/* a burst model gives way to the rate asked for */
	EXPECT(with("opcode data drop gemodel 1% 10%", "3%", "opcode data drop 3%"));
	struct inj_rule r;

	EXPECT(model_rule_parse("opcode data drop 1%", &r) == 0);
	EXPECT(tui_with_drop(&r, "lots", out, sizeof(out)) == -EINVAL);
	EXPECT(model_rule_parse("opcod data drop 1%", &r) == -EINVAL);
	return expect_done("test_ctl_tui");
}
