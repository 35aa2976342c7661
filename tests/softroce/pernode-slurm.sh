# SPDX-License-Identifier: MIT
# Sourced by 12-pernode.sh on its running per-node testbed (3 nodes):
# Slurm on the nodes and `rdmactl run --slurm` through the docs' sbatch
# script. Debian's slurmctld runs on node0, slurmd on every node
# (rdmatb-slurm, started and stopped here). The job runs the script of
# examples/slurm/ (the one docs/cluster.md shows) on its allreduce.yaml
# (hosts.slurm), rc against hadamard with a 1% drop on every node's
# ingress, then on quickstart.yaml (a testbed profile): rdmactl on node0 starts the
# agents with srun, they join it, the run ends, the step with it. A
# device that is not on every node fails at once, naming the node.
# rdmactl doctor --slurm sweeps the allocation's nodes the same way.

# every node: rdmatb-slurm ARG; the nodes' answers, rc 1 when one failed
slurm_all() {
	local n rc=0
	for n in "$@"; do
		timeout 120 "$RDMACTL" testbed exec "$n" -- rdmatb-slurm "$SLURM_VERB" 2>&1 || rc=1
	done
	return $rc
}

# what the job left on a node: agents it started, step daemons, srun
slurm_left() {
	"$RDMACTL" testbed exec "$1" -- sh -c \
		'ps -o pid,args | grep -E "rdma-agent .*--join|slurmstepd|[s]run " | grep -v grep' 2>&1
}

slurm_run() {
	local ok=1 why="" t0 out rc job rep v left n docs_ok=1 line bad
	t0=$EPOCHREALTIME
	SLURM_VERB=start slurm_all node0 node1 node2 > "$W/slurm-start.out" ||
		{ ok=0; why="start: $(tail -n 3 "$W/slurm-start.out" | tr '\n' '|')"; }
	"$RDMACTL" testbed exec node0 -- sh -c "rm -rf /tmp/sl; mkdir -p /tmp/sl"
	"$RDMACTL" testbed cp examples/slurm/rdma-run.sbatch node0:/tmp/sl/ &&
		"$RDMACTL" testbed cp profiles/quickstart.yaml node0:/tmp/sl/ &&
		"$RDMACTL" testbed cp examples/slurm/allreduce.yaml node0:/tmp/sl/ || { ok=0; why="$why cp failed;"; }
	# outside an allocation: refused, nothing started
	out=$("$RDMACTL" testbed exec node0 -- rdmactl run --slurm /tmp/sl/quickstart.yaml 2>&1); rc=$?
	grep -q "slurm: not inside a Slurm allocation" <<< "$out" && [ $rc = 2 ] ||
		{ ok=0; why="$why outside: rc=$rc $out;"; }
	out=$("$RDMACTL" testbed exec node0 -- sh -c 'cd /tmp/sl && timeout 600 sbatch --wait \
		rdma-run.sbatch allreduce.yaml --set run.iters=10 --set run.rounds=1 --set workload.options.size=256k \
		--expect "hadamard: lost > 0.2%"; echo "sbatch exit $?"' 2>&1)
	job=$(grep -oE 'Submitted batch job [0-9]+' <<< "$out" | grep -oE '[0-9]+$')
	grep -q "sbatch exit 0" <<< "$out" || { ok=0; why="$why $(tr '\n' '|' <<< "$out");"; }
	rep="$W/slurm-report.json"
	"$RDMACTL" testbed exec node0 -- cat "/tmp/sl/rdma-$job/report.json" > "$rep" 2>/dev/null
	joblog=$("$RDMACTL" testbed exec node0 -- cat "/tmp/sl/rdma-testbed-$job.out" 2>&1)
	grep -qE "starting 3 agents with srun \(job $job, 3 of its 3 nodes\), joining 198\.18\.0\.1:[0-9]+" <<< "$joblog" ||
		{ ok=0; why="$why job log: $(head -n 3 <<< "$joblog" | tr '\n' '|');"; }
	# the report: the allocation's nodes, three kernels, the fault on each
	# node's own interface, dropping; every expectation held
	v=$(jq -r '[.status, .testbed.backend, ([.testbed.node_kernels[].node] | join(",")),
		([.testbed.node_kernels[].boot_id] | unique | length),
		([.faults[0].rules[] | select(.counters.dropped > 0) | .node] | join(",")),
		.faults[0].port, (.expectations_failed // 0)] | map(tostring) | join(" ")' "$rep" 2>&1)
	[ "$v" = "ok hosts node0,node1,node2 3 node0,node1,node2 nic 0" ] || { ok=0; why="$why report: $v;"; }
	[ -z "$(schema_ok "$rep")" ] || { ok=0; why="$why schema: $(schema_ok "$rep");"; }
	# a testbed profile (quickstart); every node its own device name
	# (rxeI): --dev rxe1 is wrong on node0 and node2, whose agents fail,
	# and the step with them, at once
	out=$("$RDMACTL" testbed exec node0 -- sh -c 'cd /tmp/sl && timeout 300 sbatch --wait \
		rdma-run.sbatch quickstart.yaml --dev rxe1; echo "sbatch exit $?"' 2>&1)
	bjob=$(grep -oE 'Submitted batch job [0-9]+' <<< "$out" | grep -oE '[0-9]+$')
	blog=$("$RDMACTL" testbed exec node0 -- cat "/tmp/sl/rdma-testbed-$bjob.out" 2>&1)
	grep -q "sbatch exit 1" <<< "$out" &&
		grep -qE "join: [0-2] of 3 agents joined 0\.0\.0\.0:[0-9]+; node[02]: rdma-agent: rxe1: cannot open device: No such device; srun exited" <<< "$blog" ||
		{ ok=0; why="$why --dev rxe1: $(tr '\n' '|' <<< "$out$blog");"; }
	# rdmactl doctor --slurm under salloc: the allocation's 3 nodes, their
	# agents started by srun, 3 pairs (all of them: one round of 3 nodes
	# leaves one out), nothing named on a clean fleet
	dout=$("$RDMACTL" testbed exec node0 -- sh -c 'cd /tmp/sl && timeout 300 salloc -N3 \
		rdmactl -j doctor --slurm --rounds 0 --iters 2000 --bw-iters 50 2> doctor.err;
		echo "doctor exit $?" >&2' 2> "$W/slurm-doc.err")
	dv=$(jq -r '[(.named | length), ([.nodes[] | select(.verdict == "ok") | .name] | join(",")),
		(.pairs | length)] | map(tostring) | join(" ")' <<< "$dout" 2>&1)
	if ! grep -q "doctor exit 0" "$W/slurm-doc.err" || [ "$dv" != "0 node0,node1,node2 3" ] ||
	   [ -n "$(cmd_schema "$dout")" ]; then
		ok=0
		why="$why doctor: [$dv] $(cmd_schema "$dout") $(tr '\n' '|' < "$W/slurm-doc.err") $("$RDMACTL" testbed exec node0 -- tail -n 3 /tmp/sl/doctor.err | tr '\n' '|');"
	fi
	# the step ended with the run: no agent it started, no step daemon
	# (a job's last slurmstepd exits a moment after sbatch --wait returns:
	# up to 20 s)
	for _ in $(seq 20); do
		left=""
		for n in node0 node1 node2; do
			line=$(slurm_left "$n")
			[ -n "$line" ] && left="$left $n: $line;"
		done
		[ -z "$left" ] && break
		sleep 1
	done
	[ -z "$left" ] || { ok=0; why="$why left:$left"; }
	# and the run's fault rules, hooks and qdiscs are gone from every node
	for n in node0 node1 node2; do
		line=$("$RDMACTL" testbed exec "$n" -- rdma-inject -j stats 2>&1 |
			jq -c '[.rules, .hooks, .qdiscs] | select(map(length) | add > 0)' 2>&1)
		[ -z "$line" ] || { ok=0; why="$why $n's rdma-inject: $line;"; }
	done
	q=$("$RDMACTL" testbed exec node0 -- squeue -h 2>&1)
	[ -z "$q" ] || { ok=0; why="$why squeue: $q;"; }
	# the docs show the script that ran, line for line
	bad=""
	while IFS= read -r line; do
		grep -qxF -- "$line" docs/cluster.md || bad="$bad [$line]"
	done < examples/slurm/rdma-run.sbatch
	[ -z "$bad" ] || { ok=0; why="$why docs/cluster.md lacks:$bad;"; }
	SLURM_VERB=stop slurm_all node2 node1 node0 > "$W/slurm-stop.out" || { ok=0; why="$why stop failed;"; }
	for n in node0 node1 node2; do
		line=$("$RDMACTL" testbed exec "$n" -- sh -c 'pidof slurmd slurmctld slurmstepd; ls -d /sys/fs/cgroup/system.slice 2>/dev/null' 2>&1)
		[ -z "$line" ] || { ok=0; why="$why $n after stop: $line;"; }
	done
	dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.0f", b - a}')
	if [ $ok = 1 ]; then
		pass slurm_run "job $job: sbatch rdma-run.sbatch allreduce.yaml on node[0-2]: $(jq -c '[.arms[] | {name, lost: .lost_fraction}]' "$rep"); drops on $(jq -r '[.faults[0].rules[].counters.dropped] | map(tostring) | join("/")' "$rep"); --dev rxe1: '$(grep -oE "node[02]: rdma-agent: [^;]*" <<< "$blog" | head -n 1)'; doctor --slurm: 3 pairs in $(jq -r '.cost.wall_s' <<< "$dout") s, nothing named; nothing left (agents, steps, jobs, rules, qdiscs, daemons); ${dt} s"
	else	# a node's virtio NIC that stopped sending says so in its kernel log
		fail slurm_run "$why; the nodes' NICs: $(for n in node0 node1 node2; do
			printf '%s: %s; ' "$n" "$(timeout 20 "$RDMACTL" testbed exec "$n" -- sh -c \
				'dmesg | grep -m 1 "NETDEV WATCHDOG" || echo sending' 2>&1 | head -c 160)"; done)"
	fi
}
