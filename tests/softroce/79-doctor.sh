#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmactl doctor (issue 40) on an 8-node testbed of one shared kernel:
#   a clean fleet: nothing named, exit 0;
#   one link made lossy (1% drop at one switch port's egress, toward its
#   node, the port chosen at random) and one node slowed (its agent held
#   to 20% of a CPU by a cgroup, the node chosen at random): exactly that
#   link and that node named, exit 1; the same with one round, where each
#   is found by the bisection;
#   wrong facts: a port down and an agent that does not answer, named as
#   such while the others are judged;
#   bad usage refused with exit 2, and nothing left after.
set -u
cd "$(dirname "$0")/../.."
. tests/softroce/lib.sh
C=$RDMACTL
TESTS="clean_names_nothing lossy_link_and_slow_node bisection_one_round facts_port_and_agent
       bad_usage nothing_left"
W=$(mktemp -d /tmp/rtb-doctor.XXXXXX)
SUITE_EXIT='rm -rf "$W"'
SUITE_NODES=8
suite_up || exit 0

pid_of() { "$C" -j testbed status | jq -r --arg n "$1" '.nodes[] | select(.name == $n) | .agent_pid'; }
# the verdicts as "node:verdict" for the nodes not ok, sorted
named() { jq -r '[.nodes[] | select(.verdict != "ok") | "\(.name):\(.verdict)"] | sort | join(" ")' "$1" 2>/dev/null; }

# --- a clean fleet: nothing named, and what a sweep costs
out=$("$C" -j doctor -o "$W/clean" 2> "$W/clean.err"); rc=$?
bad=$(cmd_schema "$out")
if [ $rc = 0 ] && [ -z "$bad" ] && jq -e '(.named | length) == 0 and
	([.nodes[] | select(.verdict == "ok")] | length) == 8 and
	.cost.rounds == 3 and .cost.pairs == 12 and .cost.all_pairs == 28 and .cost.all_pairs_rounds == 7 and
	(.pairs | length) == 12 and ([.pairs[] | select(.sent_ab > 1000 and .sent_ba > 1000 and
	  .lat_mean_ns > 0 and .bw_bytes_per_s > 0 and .lost_permille < 2)] | length) == 12' <<< "$out" >/dev/null &&
	[ "$(jq -S . "$W/clean/doctor.json")" = "$(jq -S . <<< "$out")" ] &&
	[ "$(grep -c '<tr><th>node[0-9]*</th><td' "$W/clean/doctor.html")" = 8 ] && ! ls "$W/clean"/*.tmp >/dev/null 2>&1; then
	pass clean_names_nothing "$(jq -r '"12 pairs in 3 rounds (all pairs: 28 in 7) in \(.cost.wall_s) s; fleet latency \(.fleet.lat_median_ns / 1000 | . * 10 | round / 10) us (MAD \(.fleet.lat_mad_ns / 1000 | . * 10 | round / 10)); worst pair loss \([.pairs[].lost_permille] | max) per mille"' <<< "$out")"
else
	fail clean_names_nothing "rc=$rc ${bad:-} named: $(jq -c '.named' <<< "$out" 2>/dev/null) $(tail -n 3 "$W/clean.err" | tr '\n' '|')"
fi

# --- a lossy link and a slow node, both chosen at random
L=$((RANDOM % 8))
S=$(((L + 1 + RANDOM % 7) % 8))
SP=$(pid_of "node$S")
slow_on() {
	"$C" testbed exec "node$S" -- sh -c "echo +cpu > /sys/fs/cgroup/cgroup.subtree_control &&
		mkdir -p /sys/fs/cgroup/rtb-doctor && echo '20000 100000' > /sys/fs/cgroup/rtb-doctor/cpu.max &&
		echo $SP > /sys/fs/cgroup/rtb-doctor/cgroup.procs" >/dev/null 2>&1
}
slow_off() {
	"$C" testbed exec "node$S" -- sh -c "echo $SP > /sys/fs/cgroup/cgroup.procs; rmdir /sys/fs/cgroup/rtb-doctor" \
		>/dev/null 2>&1
}
SUITE_EXIT='slow_off; rm -rf "$W"'
want=$(tr ' ' '\n' <<< "node$L:lossy_link node$S:slow" | sort | tr '_' ' ' | paste -sd' ')
if "$C" inject add dev "sw$L" egress drop 1% >/dev/null && [ -n "$SP" ] && slow_on; then
	out=$("$C" -j doctor -o "$W/bad" 2> "$W/bad.err"); rc=$?
	got=$(named "$W/bad/doctor.json")
	if [ $rc = 1 ] && [ "$got" = "$want" ] && [ -z "$(cmd_schema "$out")" ] &&
		jq -e --arg l "node$L" --arg s "node$S" '(.nodes[] | select(.name == $l) |
		  .lost_in_permille >= 2 and .lost_out_permille < 2) and
		  (.nodes[] | select(.name == $s) | .z > 3.5)' <<< "$out" >/dev/null; then
		pass lossy_link_and_slow_node "$(jq -r '.named | join("; ")' <<< "$out") (in $(jq -r '.cost.wall_s' <<< "$out") s)"
	else
		fail lossy_link_and_slow_node "rc=$rc want [$want] got [$got]: $(jq -r '.named | join("; ")' <<< "$out" 2>/dev/null) $(tail -n 3 "$W/bad.err" | tr '\n' '|')"
	fi
	# one round: each node has one partner, so a bad pair names both of
	# its ends until the bisection tests each against two well nodes.
	# 10,000 round trips a pair: the held agent stalls 80 ms in every
	# 100, and a test of 3,000 (about 120 ms) saw it once or not at all
	# (a run named nothing slow against a fleet median of 63 us, MAD 31)
	out=$("$C" doctor --rounds 1 --iters 10000 2> "$W/one.err"); rc=$?
	got=$(sed -n 's/^  \(node[0-9]\): \(lossy link\|slow\|lossy pair\|unreachable\|port\|its agent\).*/\1:\2/p' <<< "$out" | sort | paste -sd' ')
	if [ $rc = 1 ] && [ "$got" = "$want" ] && grep -q "^ bisection .*node$L: lossy link" <<< "$out" &&
		grep -q "^doctor: 2 named:" <<< "$out" && grep -q "^ thresholds: slow when" <<< "$out" &&
		grep -q "node$L: lossy link: .*bisected: 2 of 2 pairs with well nodes lost" <<< "$out"; then
		pass bisection_one_round "$(grep '^ bisection' <<< "$out" | sed 's/^ //' | paste -sd';')"
	else
		fail bisection_one_round "rc=$rc want [$want] got [$got]: $(tail -n 6 <<< "$out" | tr '\n' '|')"
	fi
else
	fail lossy_link_and_slow_node "could not make sw$L lossy or slow node$S (agent pid '${SP}')"
	fail bisection_one_round "no faults"
fi
"$C" inject flush >/dev/null 2>&1
slow_off
SUITE_EXIT='rm -rf "$W"'

# --- wrong facts: a port down, an agent stopped (its hello never comes);
# the other nodes still judged
F=$((RANDOM % 8))
G=$(((F + 1 + RANDOM % 7) % 8))
GP=$(pid_of "node$G")
SUITE_EXIT='"$C" testbed exec "node$G" -- sh -c "kill -CONT $GP" >/dev/null 2>&1; rm -rf "$W"'
"$C" testbed exec "node$F" -- sh -c "ip link set n$F down" >/dev/null 2>&1
"$C" testbed exec "node$G" -- sh -c "kill -STOP $GP" >/dev/null 2>&1
out=$("$C" -j doctor --bw-iters 50 2> "$W/facts.err"); rc=$?
"$C" testbed exec "node$G" -- sh -c "kill -CONT $GP" >/dev/null 2>&1
"$C" testbed exec "node$F" -- sh -c "ip link set n$F up" >/dev/null 2>&1
SUITE_EXIT='rm -rf "$W"'
if [ $rc = 1 ] && jq -e --arg f "node$F" --arg g "node$G" '
	([.nodes[] | select(.verdict == "facts") | .name] | sort) == ([$f, $g] | sort) and
	(.nodes[] | select(.name == $f) | .why == "port DOWN" and .reached) and
	(.nodes[] | select(.name == $g) | (.why | startswith("its agent did not answer")) and (.reached | not)) and
	([.nodes[] | select(.verdict == "ok")] | length) == 6 and .cost.nodes == 6' <<< "$out" >/dev/null; then
	pass facts_port_and_agent "$(jq -r '.named | join("; ")' <<< "$out"); 6 nodes judged"
else
	fail facts_port_and_agent "rc=$rc $(jq -r '.named | join("; ")' <<< "$out" 2>/dev/null) $(tail -n 2 "$W/facts.err" | tr '\n' '|')"
fi

# --- bad usage: exit 2, said; an output directory that cannot be: exit 1
bad=""
for a in "--rounds x:--rounds 'x'" "--rounds 99:--rounds '99'" "--nodes node9:unknown node 'node9'" \
	"--nodes node1:pairs need at least 2" "--nodes node1,node1:twice" "--iters 0:--iters '0'" \
	"--size 2G:--size '2G'" "--frob 1:unknown option '--frob'" "--iters:needs a value" \
	"--profile profiles/quickstart.yaml:no hosts: section" "--profile x.yaml --listen x:no --listen or --nodes"; do
	e=$("$C" doctor ${a%%:*} 2>&1 >/dev/null); r=$?
	[ $r = 2 ] && grep -qF -- "${a#*:}" <<< "$e" || bad="$bad [${a%%:*}: rc=$r $(head -n 1 <<< "$e")]"
done
e=$("$C" doctor -o /proc/rtb-doctor 2>&1 >/dev/null); r=$?
[ $r = 1 ] && grep -q "/proc/rtb-doctor" <<< "$e" || bad="$bad [-o /proc/...: rc=$r $e]"
if [ -z "$bad" ]; then pass bad_usage "11 refused with exit 2, said; an -o that cannot be made: exit 1"; else fail bad_usage "$bad"; fi

# --- nothing left: no rule, no cgroup; every port up again (rxe takes a
# moment after its netdev), every agent answering
for i in 1 2 3 4 5 6 7 8 9 10; do
	st=$("$C" -j testbed status | jq -r '[.nodes[] | select(.state != "ACTIVE" or (.agent_reachable | not)) | .name] | join(",")')
	[ -z "$st" ] && break
	sleep 1
done
left=$("$C" -j inject list | jq '(.rules | length) + (.qdiscs | length)')
cg=$("$C" testbed exec node0 -- sh -c 'ls -d /sys/fs/cgroup/rtb-doctor 2>/dev/null | wc -l' 2>/dev/null)
if [ "$left" = 0 ] && [ "$cg" = 0 ] && [ -z "$st" ]; then
	pass nothing_left "no rule or qdisc, no cgroup; all 8 ports ACTIVE, all agents answer"
else
	fail nothing_left "rules+qdiscs $left, cgroups $cg, not well: $st"
fi
