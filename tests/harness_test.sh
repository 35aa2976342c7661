#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The runner itself (tests/harness.sh): suites that pass what did not run
# must fail. Each case is a small suite run through run_suite with its own
# log; the case passes when the runner wrote the FAIL it should have.
set -u
cd "$(dirname "$0")/.."
S=harness
CASES="abort_after_first never_reports exit_nonzero no_plan undeclared_pass silent_timeout honest_suite
       skip_fails_under_ci skip_listed_reason_passes_under_ci skip_passes_outside_ci
       exact_name_mismatch slash_prefix_honest binary_checked_nothing binary_missing binary_skip_under_ci
       deadline_stops_and_counts"
echo "PLAN: $S $(echo $CASES)"
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

# skips: under CI=true one whose reason is not in the reviewed list fails;
# a listed [key] passes; outside CI any skip is only reported
CI=true case_ skip_fails_under_ci "t/b (skipped under CI=true" \
	'echo "PLAN: t a b"; echo "PASS: t/a"; echo "SKIP: t/b (no VM here)"'
printf 'ok-reason\tfor this test only\n' > "$W/reasons"
SKIP_REASONS=$W/reasons CI=true case_ skip_listed_reason_passes_under_ci none \
	'echo "PLAN: t a b c"; echo "PASS: t/a"; echo "PASS: t/b"; echo "SKIP: t/c ([ok-reason] listed)"'
CI=false case_ skip_passes_outside_ci none \
	'echo "PLAN: t a b c"; echo "PASS: t/a"; echo "PASS: t/b"; echo "SKIP: t/c (no VM here)"'
# names compare exactly: plan "first-case" does not declare "first"
case_ exact_name_mismatch "s/first (passed but not declared" \
	'echo "PLAN: s first-case"; echo "PASS: s/first-case"; echo "PASS: s/first"'
# a prefix with a '/' (bpf/inject_cli): its own tests are declared
case_ slash_prefix_honest none 'echo "PLAN: b/c a b"; echo "PASS: b/c/a"; echo "PASS: b/c/b"'

# binary NAME EXPECT-LINE-START C-BODY: a test binary built from C-BODY (or
# none, for "-"), run by run_binaries; the case passes when its line says so
binary() {
	local name=$1 want=$2 body=$3 out
	mkdir -p "$W/src-$name" "$W/bin-$name"
	: > "$W/src-$name/test_$name.c"
	if [ "$body" != - ]; then
		printf '%s\n' "$body" | cc -x c -o "$W/bin-$name/test_$name" - || {
			echo "FAIL: $S/$name (cc failed)"; return; }
	fi
	out=$(run_binaries unit "$W/bin-$name" "" "$W/src-$name/test_$name.c" 2>&1)
	if grep -q "^$want" <<< "$out"; then
		echo "PASS: $S/$name ($(grep -m1 "^$want" <<< "$out"))"
	else
		echo "FAIL: $S/$name (expected '$want...' in: $(tr '\n' '|' <<< "$out"))"
	fi
}
binary binary_checked_nothing "FAIL: unit/test_binary_checked_nothing (exit 0 having checked nothing" \
	'#include <stdio.h>
int main(void) { fprintf(stderr, "t: 0 checks, 0 failed\n"); return 0; }'
binary binary_missing "FAIL: unit/test_binary_missing (not built" -
CI=true binary binary_skip_under_ci "FAIL: unit/test_binary_skip_under_ci (skipped under CI=true" \
	'#include <stdio.h>
int main(void) { fprintf(stderr, "SKIP: needs root\n"); return 77; }'

# the whole run's deadline: the suite under way is stopped, its unreported
# tests fail, a later suite fails as not started, and the summary prints
LOG=$W/deadline.log
: > "$LOG"
printf '%s\n' 'echo "PLAN: d a b c"; echo "PASS: d/a"; sleep 30; echo "PASS: d/b"; echo "PASS: d/c"' > "$W/slow.sh"
printf '%s\n' 'echo "PLAN: e x"; echo "PASS: e/x"' > "$W/later.sh"
t0=$SECONDS
(RUN_DEADLINE=$((SECONDS + 3)); run_suite "$W/slow.sh" '^$'; run_suite "$W/later.sh" '^$') > /dev/null
sum=$(run_summary 2>&1)
if [ $((SECONDS - t0)) -lt 20 ] && grep -q '^FAIL: d/b (declared in the plan, never reported)' "$LOG" &&
   grep -q '^FAIL: slow/deadline (stopped at' "$LOG" && grep -q '^FAIL: later/deadline (not started' "$LOG" &&
   [ "$(tail -n 1 <<< "$sum")" = "1 passed, 5 failed" ] && grep -q '^  slow [0-9]' <<< "$sum"; then
	echo "PASS: $S/deadline_stops_and_counts (stopped after $((SECONDS - t0)) s: $(tail -n 1 <<< "$sum"); per-suite times printed)"
else
	echo "FAIL: $S/deadline_stops_and_counts ($((SECONDS - t0)) s; $(tr '\n' '|' < "$LOG") | $(tr '\n' '|' <<< "$sum"))"
fi
