#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The completion log's steady-state cost (issue 17): bench/kv-log-cost.yaml,
# no faults, recovery none, resend_all and log taking turns in 5 rounds;
# each arm's p50 and throughput over none's (95% bootstrap interval of the
# p50 ratio), and the p50 of each operation kind. Two mixes: the profile's
# (80% of the reads increments and CAS updates: the log turns each
# FETCH_AND_ADD into a READ and a tagged CAS) and YCSB a (GET and PUT only:
# a PUT's log costs a WRITE when it replaces another client's tag).
# Brings a testbed up if none is, and takes it down again.
#   ITERS=4000
set -euo pipefail
cd "$(dirname "$0")/.."
ITERS=${ITERS:-4000}
. bench/lib.sh

echo "# kv recovery's cost without faults: p50 and ops/s of each arm over recovery none's (95% CI of the p50 ratio)"
for mix in counters ycsb-a; do
	set_mix=()
	[ $mix = ycsb-a ] && set_mix=(--set workload.options.workload=a --set workload.options.incr=0
		--set workload.options.cas=0)
	if ! "$RDMACTL" -q run bench/kv-log-cost.yaml -o "$W/$mix" --set run.iters="$ITERS" \
		"${set_mix[@]}" > "$W/$mix.out" 2>&1; then
		echo "$mix: the run failed: $(grep -m1 -i failed "$W/$mix.out")"
		continue
	fi
	jq -r --arg m "$mix" '.arms as $a | $a[1:][] |
		"\($m)\t\(.name)\tp50 x\(1 / .vs_first_arm.p50_ratio | . * 1000 | round / 1000) (\(1 / .vs_first_arm.p50_ratio_ci95[1] | . * 1000 | round / 1000)-\(1 / .vs_first_arm.p50_ratio_ci95[0] | . * 1000 | round / 1000))\tops/s x\(.ops_per_s / $a[0].ops_per_s | . * 1000 | round / 1000)\t" +
		([.op_kinds | to_entries[] | select(.value.count > 0) | .key as $k |
		  "\($k) \(.value.p50_ns / 1e3 | . * 10 | round / 10)us (none \($a[0].op_kinds[$k].p50_ns / 1e3 | . * 10 | round / 10))"] | join(", "))' \
		< "$W/$mix/report.json"
done
