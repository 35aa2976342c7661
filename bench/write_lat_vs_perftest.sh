#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The agent's RC RDMA WRITE latency against perftest's ib_write_lat, side by
# side on the same testbed, same nodes, same size, in one run. Rounds
# alternate (agent, perftest, agent, ...) so drift on a noisy machine hits
# both; the verdict compares the medians over rounds of each tool's p50
# ("t_typical" in perftest). Brings a testbed up if none is, and then takes
# it down again.
#   ROUNDS=5 ITERS=5000 SIZE=2 CLIENT=node0 SERVER=node1
set -euo pipefail
cd "$(dirname "$0")/.."
RDMACTL=${RDMACTL:-build/bin/rdmactl}
ROUNDS=${ROUNDS:-5}
ITERS=${ITERS:-5000}
SIZE=${SIZE:-2}
CLIENT=${CLIENT:-node0}
SERVER=${SERVER:-node1}

ours_up=0
if ! "$RDMACTL" -q testbed status >/dev/null 2>&1; then
	"$RDMACTL" testbed up --nodes 3
	ours_up=1
fi
cleanup() { [ $ours_up = 1 ] && "$RDMACTL" -q testbed down >/dev/null 2>&1; return 0; }
trap cleanup EXIT

median() { sort -g | awk '{a[NR]=$1} END{if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

# perftest's data line: #bytes #iter t_min t_max t_typical t_avg t_stdev p99 p99.9
pt_line() {
	awk '/^=== .* client/{c=1} /^=== .* server/{c=0; s=1}
	     /#bytes/{h=1; next} h && $1 ~ /^[0-9]+$/ { if (c && !cl) cl=$0; else if (s && !sl) sl=$0 }
	     END{ if (cl !~ /inf|nan/ && cl != "") print cl; else print sl }'
}

printf '%-6s %-10s %10s %10s %10s %10s\n' round tool "min[us]" "p50[us]" "p99[us]" "p99.9[us]"
a_p50=() p_p50=()
for r in $(seq 1 "$ROUNDS"); do
	j=$("$RDMACTL" -j p2p lat --client "$CLIENT" --server "$SERVER" --size "$SIZE" --iters "$ITERS")
	read -r mn p50 p99 p999 < <(jq -r '.lat_ns | "\(.min/1000) \(.p50/1000) \(.p99/1000) \(.p99_9/1000)"' <<< "$j")
	printf '%-6s %-10s %10.2f %10.2f %10.2f %10.2f\n' "$r" rdma-agent "$mn" "$p50" "$p99" "$p999"
	a_p50+=("$p50")
	out=$("$RDMACTL" perftest --client "$CLIENT" --server "$SERVER" ib_write_lat -s "$SIZE" -n "$ITERS")
	read -r _ _ mn _ typ _ _ p99 p999 < <(pt_line <<< "$out")
	printf '%-6s %-10s %10.2f %10.2f %10.2f %10.2f\n' "$r" ib_write_lat "$mn" "$typ" "$p99" "$p999"
	p_p50+=("$typ")
done
A=$(printf '%s\n' "${a_p50[@]}" | median)
P=$(printf '%s\n' "${p_p50[@]}" | median)
ratio=$(awk -v a="$A" -v p="$P" 'BEGIN{printf "%.3f", a/p}')
echo
echo "median p50 over $ROUNDS rounds of $ITERS x ${SIZE} B, $CLIENT -> $SERVER:"
echo "  rdma-agent p2p lat     ${A} us"
echo "  perftest ib_write_lat  ${P} us"
echo "  ratio agent/perftest   ${ratio}  (target <= 1.10)"
