#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make demo: the first end-to-end path. Brings up 3 SoftRoCE nodes: a VM
# and a kernel each, joined by a switch on this host (or, when this kernel
# has rdma_rxe, on this host), shows them, runs the agents' RC RDMA WRITE
# latency test node0 -> node1 and perftest's ib_write_lat on the same
# nodes, then profiles/quickstart.yaml: the recovery modes side by side, an
# allreduce in rc, lossy, hadamard and sr mode under 1% dropped data
# packets. On per-node VMs (256 KiB) the drops are at the switch (this host's ports
# toward each node, as a Linux box in the path of hardware RNICs); on the
# host backend (1 MiB) at every node's ingress. Its report directory goes under
# runs/. Then takes the testbed down (KEEP=1 keeps it up for your own
# commands).
set -euo pipefail
cd "$(dirname "$0")/.."
RDMACTL=build/bin/rdmactl
KEEP=${KEEP:-0}
SWITCH=${SWITCH:-}	# SWITCH=xdp: the per-node switch is rdma-inject forward

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

brought_up=0
if "$RDMACTL" -q testbed status >/dev/null 2>&1; then
	step "reusing the running testbed"
else	# this host's kernel if it has rdma_rxe, else a VM and kernel a node
	step "rdmactl testbed up --nodes 3${SWITCH:+ --switch $SWITCH}"
	"$RDMACTL" testbed up --nodes 3 ${SWITCH:+--switch "$SWITCH"}
	brought_up=1
fi
# per-node VMs: the faults at the switch, and a 256 KiB allreduce (every
# packet crosses this host's bridge: 1 MiB took 224 s of demo, 256 KiB 102 s)
sets=()
if "$RDMACTL" -j testbed status 2>/dev/null | jq -e '.topology == "per-node"' >/dev/null; then
	sets=(--set faults.0.port=switch --set faults.0.dir=egress --set workload.options.size=256k)
fi
done_() { if [ "$brought_up" = 1 ] && [ "$KEEP" != 1 ]; then step "rdmactl testbed down"; "$RDMACTL" testbed down; fi; }
trap done_ EXIT

step "rdmactl testbed status"
"$RDMACTL" testbed status

step "rdmactl p2p lat --client node0 --server node1 --size 2 --iters 5000"
"$RDMACTL" p2p lat --client node0 --server node1 --size 2 --iters 5000

step "the same on perftest: rdmactl perftest ib_write_lat -s 2 -n 5000 (client side)"
"$RDMACTL" perftest ib_write_lat -s 2 -n 5000 | awk '/server on/{exit} /#bytes/{h=1} h'

step "rdmactl run profiles/quickstart.yaml ${sets[*]}: rc vs lossy vs hadamard vs sr, 1% of data packets dropped"
out=runs/quickstart-demo-$(date +%Y%m%d-%H%M%S)
"$RDMACTL" run profiles/quickstart.yaml ${sets[@]+"${sets[@]}"} -o "$out"
echo
echo "open $out/report.html in a browser; 'rdmactl report $out' prints the table again"

[ "$KEEP" = 1 ] && echo && echo "testbed kept up: 'rdmactl testbed status', 'rdmactl testbed down' when done"
exit 0
