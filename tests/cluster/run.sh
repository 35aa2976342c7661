#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cluster mode without a VM (issue 40): agents that join rdmactl
# (rdma-agent --join), real agent processes on this host (--no-rdma: the
# control plane only), rdmactl serve listening on loopback. The run over
# joined agents with RDMA is in 20-host-backend (join_run); 1,024 joined
# agents in make test-scale (95-scale).
set -u
cd "$(dirname "$0")/../.."
SUITE=cluster
. tests/softroce/lib.sh
C=$RDMACTL
AG=build/bin/rdma-agent
TESTS="join_status join_again join_no_inbound_port join_wrong_token_named join_name_twice
       join_rounds_scale doctor_joined"
plan $TESTS
W=$(mktemp -d /tmp/rtb-cluster.XXXXXX)
PIDS=""
trap 'kill $PIDS 2>/dev/null; wait 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
PORT=$((47700 + RANDOM % 200))
tr -dc a-z0-9 < /dev/urandom | head -c 32 > "$W/tok"
tr -dc a-z0-9 < /dev/urandom | head -c 32 > "$W/bad"
chmod 600 "$W/tok" "$W/bad"

# N agents named PREFIX0.. joining PORT with TOKEN, in the background
start_agents() {	# PREFIX N TOKEN
	local i
	for i in $(seq 0 $(($2 - 1))); do
		"$AG" --no-rdma --name "$1$i" --join "127.0.0.1:$PORT" --token-file "$3" \
			> "$W/$1$i.log" 2>&1 &
		PIDS="$PIDS $!"
	done
}

# --- 32 agents started before rdmactl listens: they dial until it does;
# serve waits for 32, and every one answers every round
start_agents a 32 "$W/tok"
sleep 1
"$C" -j serve --listen "127.0.0.1:$PORT" --token-file "$W/tok" --expect 32 --rounds 3 \
	> "$W/s1.json" 2> "$W/s1.err"; rc=$?
v=$(jq -r '[.agents_n, ([.rounds[].answered] | unique | join(",")), (.agents | map(.name) | unique | length),
	(.agents | all(.state == "NO-RDMA" and .from == "127.0.0.1"))] | map(tostring) | join(" ")' "$W/s1.json" 2>&1)
if [ $rc = 0 ] && [ "$v" = "32 32 32 true" ]; then
	pass join_status "32 agents joined 127.0.0.1:$PORT; 3 rounds, 32 of 32 answered each (fastest $(jq '.best_round_s * 1000 | round' "$W/s1.json") ms)"
else
	fail join_status "exit $rc [$v] $(tail -n 3 "$W/s1.err" | tr '\n' '|')"
fi

# --- rdmactl went away: each agent dials again on its own, and a second
# serve gets them back, by name
sleep 1
said=$(grep -l "dialing again" "$W"/a*.log 2>/dev/null | wc -l)
"$C" -j serve --listen "127.0.0.1:$PORT" --token-file "$W/tok" --nodes a0,a7,a31 --rounds 1 \
	> "$W/s2.json" 2> "$W/s2.err"; rc=$?
v=$(jq -r '[.agents_n, .rounds[0].answered, (.agents | map(.name) | join(","))] | map(tostring) | join(" ")' "$W/s2.json" 2>&1)
if [ $rc = 0 ] && [ "$v" = "3 3 a0,a7,a31" ] && [ "$said" -ge 1 ]; then
	pass join_again "after the first serve ended, $said agents said they dial again; the second serve had a0, a7, a31 back"
else
	fail join_again "exit $rc [$v] said $said $(tail -n 3 "$W/s2.err" | tr '\n' '|')"
fi

# --- the joined agents listen on no port
pids=$(pgrep -f "rdma-agent --no-rdma --name a[0-9]+ --join" | paste -sd'|')
lis=$(ss -Hltnp 2>/dev/null | grep -cE "pid=($pids),")
if [ -n "$pids" ] && [ "$lis" = 0 ]; then
	pass join_no_inbound_port "$(tr '|' '\n' <<< "$pids" | wc -l) agents, 0 listening sockets among them (ss -ltnp)"
else
	fail join_no_inbound_port "listening: $lis ($(ss -Hltnp | grep -E "pid=($pids)," | head -n 2 | tr '\n' '|'))"
fi

# --- an agent with another token never joins: named at the deadline, its
# connections refused and said
start_agents b 1 "$W/bad"
"$C" serve --listen "127.0.0.1:$PORT" --token-file "$W/tok" --nodes a1,b0 --wait 3s \
	> "$W/s3.out" 2> "$W/s3.err"; rc=$?
if [ $rc = 1 ] && grep -q "1 of 2 agents did not join 127.0.0.1:$PORT within 3 s: b0" "$W/s3.err" &&
	grep -q "join: refused a connection from 127.0.0.1" "$W/s3.err"; then
	pass join_wrong_token_named "exit 1: $(grep -m1 'did not join' "$W/s3.err" | sed 's/^rdmactl: //'); $(grep -m1 'refused a connection' "$W/s3.err" | sed 's/^rdmactl: //' | cut -c1-90)"
else
	fail join_wrong_token_named "exit $rc $(tail -n 3 "$W/s3.err" | tr '\n' '|')"
fi

# --- two agents under one name: the second is refused while the first
# answers, and said (serve waits 4 s for a "nobody" that never comes, so
# that both have dialed in by then)
start_agents twin 1 "$W/tok"
"$AG" --no-rdma --name twin0 --join "127.0.0.1:$PORT" --token-file "$W/tok" > "$W/twin0b.log" 2>&1 &
PIDS="$PIDS $!"
"$C" serve --listen "127.0.0.1:$PORT" --token-file "$W/tok" --nodes twin0,nobody --wait 4s \
	> "$W/s4.out" 2> "$W/s4.err"; rc=$?
if [ $rc = 1 ] && grep -q "1 of 2 agents did not join 127.0.0.1:$PORT within 4 s: nobody\$" "$W/s4.err" &&
	grep -q "refused an agent named twin0 from 127.0.0.1: another agent from 127.0.0.1 has that name" "$W/s4.err"; then
	pass join_name_twice "$(grep -m1 'refused an agent named' "$W/s4.err" | sed 's/^rdmactl: //')"
else
	fail join_name_twice "exit $rc $(tail -n 3 "$W/s4.err" | tr '\n' '|')"
fi
kill $PIDS 2>/dev/null; wait 2>/dev/null
PIDS=""

# --- a status round over 256 joined agents against 64, in one run: the
# medians of 7 rounds. Linear is x4, quadratic x16: at most twice linear
# (x8) passes; rdmactl's memory an agent is said
r64=x r256=x
start_agents s 64 "$W/tok"
"$C" -j serve --listen "127.0.0.1:$PORT" --token-file "$W/tok" --expect 64 --rounds 7 > "$W/s64.json" 2> "$W/s64.err" &&
	r64=$(jq '[.rounds[].seconds] | sort | .[3]' "$W/s64.json")
kill $PIDS 2>/dev/null; wait 2>/dev/null
PIDS=""
start_agents t 256 "$W/tok"
"$C" -j serve --listen "127.0.0.1:$PORT" --token-file "$W/tok" --expect 256 --rounds 7 --wait 120s > "$W/s256.json" 2> "$W/s256.err" &&
	r256=$(jq '[.rounds[].seconds] | sort | .[3]' "$W/s256.json")
kill $PIDS 2>/dev/null; wait 2>/dev/null
PIDS=""
all=$(jq '[.rounds[].answered] | unique == [256]' "$W/s256.json" 2>/dev/null)
if [ "$r64" != x ] && [ "$r256" != x ] && [ "$all" = true ] &&
	awk -v a="$r256" -v b="$r64" 'BEGIN{exit !(a <= 8 * b)}'; then
	pass join_rounds_scale "median round of 7: 256 agents $(awk -v a="$r256" 'BEGIN{printf "%.1f", a * 1000}') ms, 64 agents $(awk -v a="$r64" 'BEGIN{printf "%.1f", a * 1000}') ms (x$(awk -v a="$r256" -v b="$r64" 'BEGIN{printf "%.1f", a / b}'); linear x4, quadratic x16); rdmactl $(jq '.rss_per_agent_kib | . * 10 | round / 10' "$W/s256.json") KiB an agent"
else
	fail join_rounds_scale "64: $r64 s, 256: $r256 s, all answered: $all $(tail -n 2 "$W/s256.err" | tr '\n' '|')"
fi
# --- rdmactl doctor over joined agents: it waits for them as serve does,
# and checks each one's facts. These agents have no RDMA device, so each
# is named for it and no pair runs (the sweep over joined agents with
# rxe: 20-host-backend); fewer than expected: the wait says so
start_agents d 3 "$W/tok"
"$C" -j doctor --listen "127.0.0.1:$PORT" --token-file "$W/tok" --expect 3 --wait 20s > "$W/d.json" 2> "$W/d.err"; rc=$?
v=$(jq -r '[.nodes[] | "\(.name):\(.verdict):\(.why)"] | join(" ")' "$W/d.json" 2>/dev/null)
"$C" doctor --listen "127.0.0.1:$PORT" --token-file "$W/tok" --expect 4 --wait 2s > /dev/null 2> "$W/d4.err"; rc4=$?
"$C" doctor --listen "127.0.0.1:$PORT" --expect 3 > /dev/null 2> "$W/du.err"; rcu=$?
kill $PIDS 2>/dev/null; wait 2>/dev/null
PIDS=""
if [ $rc = 1 ] && [ "$v" = "d0:facts:no RDMA device (rdma-agent --no-rdma) d1:facts:no RDMA device (rdma-agent --no-rdma) d2:facts:no RDMA device (rdma-agent --no-rdma)" ] &&
	[ "$(jq '.cost.nodes' "$W/d.json")" = 0 ] && [ -z "$(cmd_schema "$(cat "$W/d.json")")" ] &&
	[ $rc4 = 1 ] && grep -q "3 of 4 agents joined within 2 s" "$W/d4.err" &&
	[ $rcu = 2 ] && grep -q "go together" "$W/du.err"; then
	pass doctor_joined "3 joined agents, each named: no RDMA device; 4 expected: '$(grep -o '3 of 4 agents joined within 2 s' "$W/d4.err")', exit 1; --listen without --token-file: exit 2"
else
	fail doctor_joined "rc=$rc [$v] rc4=$rc4 rcu=$rcu $(tail -n 2 "$W/d.err" "$W/d4.err" | tr '\n' '|')"
fi
exit 0
