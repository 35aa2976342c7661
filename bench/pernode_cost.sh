#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a kernel per node costs against one shared kernel, in one run on this
# host: `testbed up --nodes 3` from the image cache (its own up_s), the
# memory the qemu processes hold (VmRSS, a node), and a 1 MiB allreduce's
# p50 without faults (rc). The two topologies take turns, A B A B
# (ROUNDS pairs), so that drift hits both; each figure is the median over
# rounds, the p50 ratio per-node / shared the median of the pairs' ratios.
# Needs no testbed up (it brings each one up and down).   ROUNDS=3 ITERS=40 NODES=3
set -euo pipefail
cd "$(dirname "$0")/.."
RDMACTL=${RDMACTL:-build/bin/rdmactl}
ROUNDS=${ROUNDS:-3}
ITERS=${ITERS:-40}
NODES=${NODES:-3}
W=$(mktemp -d)
trap '"$RDMACTL" -q testbed down >/dev/null 2>&1 || true; rm -rf "$W"' EXIT
if "$RDMACTL" -q testbed status >/dev/null 2>&1; then
	echo "pernode_cost: a testbed is up; this bench brings its own up and down ('rdmactl testbed down' first)" >&2
	exit 1
fi

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

one() {	# topology round
	local t=$1 r=$2 st pids rss j
	"$RDMACTL" -q testbed up --nodes "$NODES" --topology "$t" > /dev/null
	st=$("$RDMACTL" -j testbed status)
	if [ "$t" = per-node ]; then pids=$(jq -r '.nodes[].qemu_pid' <<< "$st")
	else pids=$(jq -r '.qemu_pid' <<< "$st"); fi
	rss=0
	for p in $pids; do rss=$((rss + $(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status"))); done
	j=$("$RDMACTL" -j collective allreduce --mode rc --size 1M --iters "$ITERS" --warmup 2)
	"$RDMACTL" -q testbed down > /dev/null
	printf '%s %s %s %s %s\n' "$t" "$r" "$(jq -r .up_s <<< "$st")" "$((rss / 1024 / NODES))" \
		"$(jq '.results[0].percentiles.p50_ns' <<< "$j")" >> "$W/rows"
}

for r in $(seq 1 "$ROUNDS"); do
	one shared "$r"
	one per-node "$r"
done
echo "# topology round up_s rss_mib_per_node allreduce_1M_p50_ns"
cat "$W/rows"
for t in shared per-node; do
	printf '%-9s %d nodes: up %5.1f s, %4.0f MiB a node (qemu VmRSS), allreduce 1 MiB p50 %.2f ms (medians of %d)\n' "$t" "$NODES" \
		"$(awk -v t="$t" '$1 == t { print $3 }' "$W/rows" | median)" \
		"$(awk -v t="$t" '$1 == t { print $4 }' "$W/rows" | median)" \
		"$(awk -v t="$t" '$1 == t { print $5 / 1e6 }' "$W/rows" | median)" "$ROUNDS"
done
ratio=$(awk '$1 == "shared" { s[$2] = $5 } $1 == "per-node" { p[$2] = $5 }
	END { for (r in p) if (s[r] > 0) print p[r] / s[r] }' "$W/rows" | median)
printf 'allreduce 1 MiB p50, per-node / shared: x%.2f (median of %d paired rounds)\n' "$ratio" "$ROUNDS"
