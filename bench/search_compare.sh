#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmactl search (issue 39), random against guided on a known answer: the
# lost final ACK that hangs ibv_rc_pingpong (profiles/search-rc-pingpong.yaml).
# For each strategy and seed: the trials and wall time to the first
# violation, the schedule's events before and after shrinking, whether the
# minimal schedule is the known answer, and the replay rate. The budget is
# the same for both (TRIALS, default 40). Brings a testbed up if none is.
#   SEEDS="1 2 3" TRIALS=40 REPLAYS=5
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-1 2 3}
TRIALS=${TRIALS:-40}
REPLAYS=${REPLAYS:-5}
. bench/lib.sh
P=profiles/search-rc-pingpong.yaml

printf '# rdmactl search on %s: budget %s trials, %s replays\n' "$P" "$TRIALS" "$REPLAYS"
printf '%-8s %4s %12s %10s %8s %8s %-40s %s\n' strategy seed first_trial wall_s before after minimal replays
for strategy in guided random; do
	for seed in $SEEDS; do
		d=$W/$strategy-$seed
		"$RDMACTL" search "$P" -o "$d" --strategy "$strategy" --trials "$TRIALS" \
			--set "search.seed=$seed" --set "search.replays=$REPLAYS" > "$d.out" 2> "$d.err" || true
		jq -r --arg s "$strategy" --arg seed "$seed" '
			"\($s)\t\($seed)\t\(.first_violation_trial // "none")\t\(.search_wall_s | round)\t\(.events_before // "-")\t\(.events_after // "-")\t\((.minimal // []) | map("\(.node) \(.dir): \(.rule)") | join("; ") | if . == "" then "-" else . end)\t\(if .replays then "\(.replays_broke) of \(.replays)" else "-" end)"' \
			"$d/result.json" | awk -F'\t' '{ printf "%-8s %4s %12s %10s %8s %8s %-40s %s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
	done
done
