#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Storage over RDMA against the same over TCP, under faults (issue 37): the
# tables of docs/stacks.md. STACK=nvmf (the default) runs
# profiles/nvmf-rdma-tcp.yaml (NVMe over Fabrics, fio on the namespace),
# STACK=nfs profiles/nfs-rdma-tcp.yaml (NFSv4.2, fio in the mount; its
# table adds the client's RPC retransmissions and reconnects). One
# transport a run (a fault's time window counts from the run's start), for
# two jobs (4 KiB
# random writes at iodepth 16, 1 MiB sequential writes at iodepth 4, both
# verified with crc32c) and three faults at the switch (none, 1% of both
# transports' packets dropped each way, a 2 s flap 3 s into the run).
# Per run: fio's write IOPS, bandwidth, p50 and p99 completion latency
# (with the completions they come from), the verify pass's read p99, the
# verify verdict, the wall time. The flap starts 3 s into the run.
# Brings a testbed up if none is, and takes it down again.
#   STACK=nvmf|nfs SIZE4K=2M SIZE1M=16M
set -euo pipefail
cd "$(dirname "$0")/.."
STACK=${STACK:-nvmf}
case $STACK in
nvmf) P=profiles/nvmf-rdma-tcp.yaml ROLE=host ;;
nfs) P=profiles/nfs-rdma-tcp.yaml ROLE=client
	# 6.1's rxe stalls NFS/RDMA under loss (docs/stacks.md): 6.12 on both
	kv=$(bash scripts/newest-kernel.sh 6.12 || true)
	UP_ARGS="--nodes 2 --topology per-node${kv:+ --kernel node0=$kv --kernel node1=$kv}" ;;
*) echo "bench/storage.sh: STACK '$STACK': nvmf or nfs" >&2; exit 2 ;;
esac
SIZE4K=${SIZE4K:-2M}
SIZE1M=${SIZE1M:-16M}
. bench/lib.sh

echo "| job | fault | transport | write IOPS | MB/s | p50 | p99 | writes | verify reads p99 | verify | wall | resets/retrans |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for job in "4k-randwrite-qd16 randwrite 4k 16 $SIZE4K" "1M-write-qd4 write 1M 4 $SIZE1M"; do
	set -- $job
	name=$1 rw=$2 bs=$3 depth=$4 size=$5
	for fault in none "1% loss" "2s flap"; do
		case $fault in
		none) fs=(--set faults=) ;;
		"1% loss") fs=() ;;
		*) fs=(--set "faults.0.rule=proto roce,tcp drop 100%" --set faults.0.start=3s
			--set faults.0.duration=2s) ;;
		esac
		for t in rdma tcp; do
			other=tcp; [ $t = tcp ] && other=rdma
			grep -v "{name: $other," "$P" > "$W/p-$t.yaml"
			d="$W/$name-${fault// /}-$t"
			"$RDMACTL" -q run "$W/p-$t.yaml" -o "$d" "${fs[@]}" --set workload.vars.rw=$rw \
				--set workload.vars.bs=$bs --set workload.vars.depth=$depth \
				--set workload.vars.size=$size > "$d.out" 2>&1 || true
			if [ ! -f "$d/report.json" ]; then
				echo "| $name | $fault | $t | the run failed: $(grep -m1 -i 'fail' "$d.out" || tail -n1 "$d.out") |"
				continue
			fi
			jq -r --arg j "$name" --arg f "$fault" --arg r "$ROLE" '.arms[0] as $a | $a.fio.write as $w |
				if $w == null then "| \($j) | \($f) | \($a.name) | no figures: \($r) \($a.roles[] |
					select(.name == $r) | .runs[0] | .status + " " + (.exit | tostring) +
					" after " + (.wall_ns / 1e9 | . * 10 | round / 10 | tostring) + " s") | | | | | | | | | |" else
				"| \($j) | \($f) | \($a.name) | \($w.iops | round) | \($w.bw_bytes_per_s / 1e6 | . * 10 | round / 10) | " +
				"\($w.clat.p50_ns / 1e6 | . * 100 | round / 100) ms | \($w.clat.p99_ns / 1e6 | . * 100 | round / 100) ms | " +
				"\($w.clat.count) | \($a.fio.read.clat.p99_ns // 0 | . / 1e6 | . * 100 | round / 100) ms | " +
				"\($a.fio.verify) | \($a.percentiles.max_ns / 1e9 | . * 10 | round / 10) s | " +
				(if $a.nvme then "\($a.nvme.error_recoveries) resets, \($a.nvme.reconnects) reconnects"
				 else "\($a.nfs.retrans) retrans, \($a.nfs.timeouts) timeouts, \($a.nfs.reconnects) reconnects" end) + " |" end' \
				"$d/report.json"
		done
	done
done
