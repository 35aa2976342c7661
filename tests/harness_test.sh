#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The runner itself (tests/harness.sh): suites that pass what did not run
# must fail. Each case is a small suite run through run_suite with its own
# log; the case passes when the runner wrote the FAIL it should have.
set -u
cd "$(dirname "$0")/.."
S=harness
CASES="abort_after_first never_reports exit_nonzero no_plan undeclared_pass silent_timeout honest_suite"
echo "PLAN: $S $CASES"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
SUITE_CLEANUP=:
. tests/harness.sh

# case NAME EXPECT SUITE-BODY: EXPECT is a FAIL line's start, or "none"
case_() {
	local name=$1 want=$2 body=$3
	LOG=$W/$name.log
	: > "$LOG"
	printf '%s\n' "$body" > "$W/$name.sh"
	run_suite "$W/$name.sh" '^$' > /dev/null
	if [ "$want" = none ]; then
		if ! grep -q '^FAIL:' "$LOG" && [ "$(grep -c '^PASS:' "$LOG")" = 2 ]; then
			echo "PASS: $S/$name (no FAIL added to an honest suite)"
		else
			echo "FAIL: $S/$name ($(tr '\n' '|' < "$LOG"))"
		fi
	elif grep -q "^FAIL: $want" "$LOG"; then
		echo "PASS: $S/$name ($(grep -m1 "^FAIL: $want" "$LOG"))"
	else
		echo "FAIL: $S/$name (expected 'FAIL: $want...' in: $(tr '\n' '|' < "$LOG"))"
	fi
}
case_ abort_after_first "t/b (declared in the plan, never reported)" \
	'echo "PLAN: t a b"; echo "PASS: t/a"; exit 0'
case_ never_reports "t/c (declared" 'echo "PLAN: t a b c"; echo "PASS: t/a"; echo "PASS: t/b"'
case_ exit_nonzero "exit_nonzero/exit (the suite exited 3)" \
	'echo "PLAN: t a"; echo "PASS: t/a"; exit 3'
case_ no_plan "no_plan/plan" 'echo "PASS: t/a"'
case_ undeclared_pass "t/z (passed but not declared" 'echo "PLAN: t a"; echo "PASS: t/a"; echo "PASS: t/z"'
TEST_TIMEOUT=2 case_ silent_timeout "silent_timeout/timeout" \
	'echo "PLAN: t a b"; echo "PASS: t/a"; sleep 30; echo "PASS: t/b"'
case_ honest_suite none 'echo "PLAN: t a b"; echo "PASS: t/a"; echo "PASS: t/b"'
