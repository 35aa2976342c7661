#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# hadamard's block size (issue 16): bench/hadamard-block.yaml, 1 MiB of
# real gradients at 1% drop, every arm in one run, taking turns four times.
# One binary for all: under TCG, the same code built twice timed up to 30%
# apart (where it lands on its pages), so builds are not compared. Per arm:
# the step's p50, its codec p50 (the transform's share), the p50 over
# lossy's, and the error of the result.
# Brings a testbed up if none is, and takes it down again.   ITERS=40
set -euo pipefail
cd "$(dirname "$0")/.."
ITERS=${ITERS:-40}
. bench/lib.sh

echo "# hadamard's block: 1 MiB of gradients, 1% of data packets dropped, $ITERS steps an arm"
if ! "$RDMACTL" -q run bench/hadamard-block.yaml -o "$W/r" --set run.iters="$ITERS" > "$W/out" 2>&1; then
	echo "the run failed: $(grep -m1 -i fail "$W/out")"
	exit 1
fi
printf '%-10s %10s %10s %12s %10s %10s %10s\n' arm "p50[ms]" "codec[ms]" "p50/lossy" "linf" "cos_min" lost
jq -r '.arms[0].percentiles.p50_ns as $l | .arms[] |
	[.name, (.percentiles.p50_ns / 1e6 | . * 10 | round / 10),
	 ((.codec_ns.p50_ns // 0) / 1e6 | . * 10 | round / 10),
	 (.percentiles.p50_ns / $l | . * 100 | round / 100),
	 (.grad_error.linf_mean | . * 10000 | round / 10000),
	 (.grad_error.cosine_min | . * 10000 | round / 10000),
	 "\(.lost_fraction * 10000 | round / 100)%"] | @tsv' < "$W/r/report.json" |
	awk -F'\t' '{printf "%-10s %10s %10s %12s %10s %10s %10s\n", $1, $2, $3, $4, $5, $6, $7}'
