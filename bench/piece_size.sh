#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The UC modes' per-piece cost (issue 16): bench/piece-size.yaml at 64 KiB,
# 256 KiB, 1 MiB and 4 MiB without faults, each arm's p50 over rc's (the
# arms take turns in each run, so drift hits all), then what a piece size
# costs under 1% drop: the fraction of the data lost at 1, 4 and 16 KiB
# pieces; last, what guard costs a lossy step (bench/guard-cost.yaml).
# Brings a testbed up if none is, and takes it down again.
#   SIZES="64k 256k 1M 4M" ITERS=40
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-64k 256k 1M 4M}
ITERS=${ITERS:-40}
. bench/lib.sh

echo "# p50 step time over rc's, no faults (95% bootstrap interval of the p50 ratio rc/arm, inverted)"
printf '%-6s %10s' size "rc[ms]"
for a in lossy-1k lossy-4k lossy-16k hadamard-1k hadamard-16k; do printf ' %22s' "$a"; done
echo
for s in $SIZES; do
	it=$ITERS
	[ "$s" = 4M ] && it=$((ITERS / 2))
	if ! "$RDMACTL" -q run bench/piece-size.yaml -o "$W/$s" --set workload.options.size="$s" \
		--set run.iters="$it" --set faults= > "$W/$s.out" 2>&1; then
		echo "$s: the run failed: $(grep -m1 failed "$W/$s.out")"
		continue
	fi
	jq -r --arg s "$s" '.arms as $a | [$s, ($a[0].percentiles.p50_ns / 1e6 | . * 10 | round / 10)] +
		[$a[1:][] | .vs_first_arm | "\(1 / .p50_ratio | . * 100 | round / 100) (\(1 / .p50_ratio_ci95[1] | . * 100 | round / 100)-\(1 / .p50_ratio_ci95[0] | . * 100 | round / 100))"] |
		"\(.[0])\t\(.[1])\t" + (.[2:] | join("\t"))' < "$W/$s/report.json" |
		awk -F'\t' '{printf "%-6s %10s", $1, $2; for (i = 3; i <= NF; i++) printf " %22s", $i; print ""}'
done

echo
echo "# loss granularity: 1 MiB, 1% of data packets dropped at every ingress"
"$RDMACTL" -q run bench/piece-size.yaml -o "$W/loss" --set run.iters="$ITERS" --set run.rounds=1 \
	> "$W/loss.out" 2>&1 || echo "the run failed: $(grep -m1 failed "$W/loss.out")"
jq -r '.arms[1:][] | "\(.name)\tlost \(.lost_fraction * 10000 | round / 100)%\tp50 \(.percentiles.p50_ns / 1e6 | . * 10 | round / 10) ms\tL-inf \(.grad_error.linf_mean | . * 100 | round / 100)"' \
	< "$W/loss/report.json" 2>/dev/null || true

echo
echo "# guard's cost: lossy with and without its memory windows, 1 MiB, no faults"
"$RDMACTL" -q run bench/guard-cost.yaml -o "$W/guard" --set run.iters="$ITERS" > "$W/guard.out" 2>&1 ||
	echo "the run failed: $(grep -m1 failed "$W/guard.out")"
jq -r '.arms[1].vs_first_arm | "p50 guard on / off = \(.p50_ratio | . * 100 | round / 100) (95% CI \(.p50_ratio_ci95[0] | . * 100 | round / 100)-\(.p50_ratio_ci95[1] | . * 100 | round / 100))"' \
	< "$W/guard/report.json" 2>/dev/null || true
