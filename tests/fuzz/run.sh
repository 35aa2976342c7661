#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The libFuzzer harnesses (tests/fuzz/fuzz_*.c, built by `make fuzz` with
# ASan and UBSan), each for FUZZ_SECONDS (default 10) from its seed corpus
# in tests/fuzz/corpus/NAME (copied: the repository is not changed). A crash,
# a leak, a sanitizer report or a timeout fails the harness; the input that
# did it is kept as build/fuzz/crash-NAME-*, to replay with
#   build/fuzz/fuzz_NAME build/fuzz/crash-NAME-...
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}/fuzz
S=fuzz
NAMES="profile frame rule report trace"
SECS=${FUZZ_SECONDS:-10}
echo "PLAN: $S $NAMES"
# one harness: its PASS or FAIL lines
fuzz_one() {
	local n=$1 bin=$B/fuzz_$1 w out rc runs cov
	if [ ! -x "$bin" ]; then
		echo "FAIL: $S/$n (no $bin: make fuzz)"
		return
	fi
	w=$(mktemp -d)
	cp tests/fuzz/corpus/"$n"/* "$w"/
	out=$("$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$B/crash-$n-" "$w" 2>&1); rc=$?
	runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' <<< "$out" | grep -o '[0-9]*$')
	cov=$(grep -oE 'cov: [0-9]+' <<< "$out" | tail -n 1)
	if [ $rc = 0 ]; then
		echo "PASS: $S/$n (${runs:-?} inputs in ${SECS} s from $(ls tests/fuzz/corpus/"$n" | wc -l) seeds, $cov, corpus $(ls "$w" | wc -l))"
	else
		echo "$out" | grep -E 'ERROR|SUMMARY|runtime error|artifact' | head -n 8 | sed 's/^/    /'
		echo "FAIL: $S/$n (exit $rc; reproducer: $(ls "$B"/crash-"$n"-* 2>/dev/null | head -n 1))"
	fi
	rm -rf "$w"
}
# two at a time (this host's two cores), each one's lines together
O=$(mktemp -d)
set -- $NAMES
while [ $# -gt 0 ]; do
	fuzz_one "$1" > "$O/$1" &
	[ $# -gt 1 ] && fuzz_one "$2" > "$O/$2" &
	wait
	cat "$O/$1"; [ $# -gt 1 ] && cat "$O/$2"
	shift; [ $# -gt 0 ] && shift
done
rm -rf "$O"
exit 0
