#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmactl search (issue 39), random against guided on the four known
# answers (docs/search.md): the lost final ACK that hangs ibv_rc_pingpong,
# the lost last packet of a message that costs RC an ACK timeout, the lost
# atomic acknowledge that makes the key-value store's resend_all run an
# increment twice, the freeze of a node (per-node VMs: each search brings
# its own up, and takes it down) that breaks a bound on the latency. For each profile, strategy and seed: the trials and wall
# time to the first violation, the schedule's events before and after
# shrinking, the minimal schedule, and the replay rate. The budget is the
# same for both (TRIALS, default 40). Brings a testbed up if none is.
#   SEEDS="1 2 3" TRIALS=40 REPLAYS=5 PROFILES="profiles/search-rc-p99.yaml"
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-1 2 3}
TRIALS=${TRIALS:-40}
REPLAYS=${REPLAYS:-5}
. bench/lib.sh
PROFILES=${PROFILES:-profiles/search-rc-pingpong.yaml profiles/search-rc-p99.yaml profiles/search-kv-resend.yaml profiles/search-node-freeze.yaml}

for P in $PROFILES; do
# a kernel a node: not on the shared testbed this script brought up
if grep -q 'topology: per-node' "$P" && [ $ours_up = 1 ]; then
	"$RDMACTL" -q testbed down >/dev/null 2>&1
	ours_up=0
fi
printf '# rdmactl search on %s: budget %s trials, %s replays\n' "$P" "$TRIALS" "$REPLAYS"
printf '%-8s %4s %12s %10s %8s %8s %-40s %s\n' strategy seed first_trial wall_s before after minimal replays
for strategy in guided random; do
	for seed in $SEEDS; do
		d=$W/$(basename "$P" .yaml)-$strategy-$seed
		"$RDMACTL" search "$P" -o "$d" --strategy "$strategy" --trials "$TRIALS" \
			--set "search.seed=$seed" --set "search.replays=$REPLAYS" > "$d.out" 2> "$d.err" || true
		jq -r --arg s "$strategy" --arg seed "$seed" '
			"\($s)\t\($seed)\t\(.first_violation_trial // "none")\t\(.search_wall_s | round)\t\(.events_before // "-")\t\(.events_after // "-")\t\((.minimal // []) | map(if .event then "\(.node): \(.event)" + (if .duration_ms then " \(.duration_ms)ms" else "" end) + " at \(.start_ms)ms" else "\(.node) \(.dir): \(.rule)" end) | join("; ") | if . == "" then "-" else . end)\t\(if .replays then "\(.replays_broke) of \(.replays)" else "-" end)"' \
			"$d/result.json" | awk -F'\t' '{ printf "%-8s %4s %12s %10s %8s %8s %-40s %s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
	done
done
done
