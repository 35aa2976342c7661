#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmactl doctor (issue 40), the long form of tests/softroce/79-doctor.sh
# on an 8-node testbed of one shared kernel: RUNS clean sweeps (how often
# a node is named that should not be), RUNS sweeps with a lossy switch
# port and a slowed agent at random places (how often exactly the two are
# named), the same with one round (through the bisection), and what a
# sweep costs: 3 rounds against all pairs, A B A B.
#   RUNS=10 make bench-doctor
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
UP_ARGS="--nodes 8 --topology shared"
. bench/lib.sh
C=$RDMACTL
n=$("$C" -j testbed status | jq '.nodes | length')
[ "$n" = 8 ] || { echo "doctor bench: needs an 8-node testbed, this one has $n (testbed down first)"; exit 1; }

pid_of() { "$C" -j testbed status | jq -r --arg n "$1" '.nodes[] | select(.name == $n) | .agent_pid'; }
named() { jq -r '[.nodes[] | select(.verdict != "ok") | "\(.name):\(.verdict)"] | sort | join(" ")' "$1"; }
slow() {	# NODE on|off
	local p; p=$(pid_of "$1")
	if [ "$2" = on ]; then
		"$C" testbed exec "$1" -- sh -c "echo +cpu > /sys/fs/cgroup/cgroup.subtree_control &&
			mkdir -p /sys/fs/cgroup/rtb-doctor && echo '20000 100000' > /sys/fs/cgroup/rtb-doctor/cpu.max &&
			echo $p > /sys/fs/cgroup/rtb-doctor/cgroup.procs" >/dev/null
	else
		"$C" testbed exec "$1" -- sh -c "echo $p > /sys/fs/cgroup/cgroup.procs; rmdir /sys/fs/cgroup/rtb-doctor" >/dev/null
	fi
}

clean_ok=0 faulted_ok=0 one_ok=0
printf '# rdmactl doctor on 8 nodes, %s runs of each\n' "$RUNS"
printf '%-4s %-22s %-40s %-40s %s\n' run clean faulted "(want)" "one round"
for i in $(seq "$RUNS"); do
	"$C" -j doctor -o "$W/c$i" > /dev/null 2>&1 || true
	c=$(named "$W/c$i/doctor.json"); [ -z "$c" ] && clean_ok=$((clean_ok + 1))
	L=$((RANDOM % 8)); S=$(((L + 1 + RANDOM % 7) % 8))
	want=$(printf '%s\n' "node$L:lossy link" "node$S:slow" | sort | paste -sd' ')
	"$C" inject add dev "sw$L" egress drop 1% >/dev/null
	slow "node$S" on
	"$C" -j doctor -o "$W/f$i" > /dev/null 2>&1 || true
	"$C" -j doctor --rounds 1 --iters 10000 -o "$W/o$i" > /dev/null 2>&1 || true
	"$C" inject flush >/dev/null
	slow "node$S" off
	f=$(named "$W/f$i/doctor.json"); o=$(named "$W/o$i/doctor.json")
	[ "$f" = "$want" ] && faulted_ok=$((faulted_ok + 1))
	[ "$o" = "$want" ] && one_ok=$((one_ok + 1))
	printf '%-4s %-22s %-40s %-40s %s\n' "$i" "${c:-nothing named}" "$f" "($want)" "$o"
done
printf '# clean: nothing named in %s of %s; faulted: exactly the two in %s of %s (3 rounds), %s of %s (1 round)\n' \
	"$clean_ok" "$RUNS" "$faulted_ok" "$RUNS" "$one_ok" "$RUNS"

# the cost: 3 rounds against all pairs, A B A B
t3="" ta=""
for i in 1 2; do
	t3="$t3 $("$C" -j doctor --rounds 3 | jq '.cost.wall_s')"
	ta="$ta $("$C" -j doctor --rounds 0 | jq '.cost.wall_s')"
done
printf '# a sweep: 3 rounds (12 pairs) %s s; all pairs (7 rounds, 28 pairs) %s s\n' "${t3# }" "${ta# }"
