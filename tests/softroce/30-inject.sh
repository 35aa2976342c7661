#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fault injection on real SoftRoCE traffic (3-node VM testbed): measured
# drop rates and receiver-side loss against the rule counters, and the
# effect of every action in rxe's counters or in latency. Node i is n_i;
# sw_i is the switch port toward node i (its egress reaches node i). With
# INJECT_SWITCH=xdp (make test-switch-xdp) on per-node VMs through the XDP
# switch instead (below).
set -u
cd "$(dirname "$0")/../.."
. tests/softroce/lib.sh
C=$RDMACTL
TESTS="lossy_1pct lossy_20pct lossy_flap drop_5pct drop_1pct rc_recovers_5pct delay reorder duplicate corrupt ecn flap_recovers
       flap_retry_exceeded egress_drop_silent corrupt_payload_collective corrupt_payload_kv
       corrupt_payload_storage forward_switch flush_clean"

# INJECT_SWITCH=xdp (make test-switch-xdp): the same tests on per-node VMs,
# a kernel each, whose host switch is rdma-inject forward (XDP). Rules are
# written below as on the shared kernel: "dev nK DIR" at node K's port,
# "dev swK DIR" at the switch's port toward node K. Through the XDP switch
# both are the forwarder's port rtbswK (what enters node K leaves rtbswK:
# nK's ingress is rtbswK's egress), so its hooks and rule engine do the
# faults. A delay or reorder this host cannot queue (rdma-inject probe: no
# sch_prio or sch_fq here) goes to the sending node's egress in its own
# kernel (p2p's pair is node0 and node1); NODE_OWN=1 keeps a rule at the
# node (what arrives there, counted by its kernel)
XDP=
if [ "${INJECT_SWITCH:-}" = xdp ]; then
	XDP=1 SUITE_TOPOLOGY=per-node SUITE_UP_ARGS="--switch xdp"
	HOST_DELAY=$(build/bin/rdma-inject -j probe 2>/dev/null | jq .actions.delay)
fi
SUITE_EXIT='rm -f "$TRAFFIC_LOG" "${CP_OUT:-}" "${CP_ERR:-}"'
suite_up || exit 0

ctr() { "$C" -j counters --node "$1" | jq ".hw_counters.$2 // 0"; }
# rules by AGENT:ID (node0 on the shared kernel)
rule_ctr() { "$C" -j inject --node "${1%%:*}" stats | jq ".rules[] | select(.id == ${1#*:}) | .counters.$2"; }
inject_add() {	# dev DEV DIR RULE...: AGENT:ID
	local dev=$2 dir=$3 agent=node0 k id
	shift 3
	if [ -n "$XDP" ]; then
		k=${dev#sw}; k=${k#n}
		if [ -n "${NODE_OWN:-}" ]; then
			agent=node$k
		elif [ "$dev" = "sw$k" ] && [ "$HOST_DELAY" != true ] && grep -qwE 'delay|reorder' <<< "$*"; then
			agent=node$((1 - k)) dev=n$((1 - k)) dir=egress
		else
			[ "$dev" = "n$k" ] && { [ "$dir" = ingress ] && dir=egress || dir=ingress; }
			agent=switch dev=rtbsw$k
		fi
	fi
	id=$("$C" inject --node "$agent" add dev "$dev" "$dir" "$@") || return 1
	echo "$agent:$id"
}
inject_del() { "$C" inject --node "${1%%:*}" del "${1#*:}"; }
# every rule gone; through the XDP switch its forwarder stays (a flush
# there would end it): the switch's rules deleted one by one
inject_flush() {
	local id n
	if [ -z "$XDP" ]; then "$C" inject flush; return; fi
	for id in $("$C" -j inject --node switch list | jq '.rules[].id'); do
		"$C" inject --node switch del "$id" >/dev/null
	done
	for n in 0 1 2; do "$C" inject --node node$n flush >/dev/null; done
}
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN{exit !(x >= lo && x <= hi)}'; }

# --- the lossy recovery mode (UC, adaptive step timeout) against real drops at
# every node's ingress: it reports about the injected fraction and never hangs
lossy() {	# name pct lo hi args...
	local name=$1 pct=$2 lo=$3 hi=$4 j rc t0 dt; shift 4
	for i in 0 1 2; do inject_add dev n$i ingress opcode data drop "$pct" >/dev/null; done
	t0=$EPOCHREALTIME
	j=$("$C" -j collective allreduce --mode lossy "$@" 2>&1); rc=$?
	dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
	inject_flush >/dev/null
	if [ $rc = 0 ] && jq -e --argjson lo "$lo" --argjson hi "$hi" \
		'.results[0] | .lost_fraction >= $lo and .lost_fraction <= $hi' <<< "$j" >/dev/null; then
		pass "$name" "drop $pct: lost $(jq '.results[0].lost_fraction*10000|floor/100' <<< "$j")% of pieces, p50 $(jq '.results[0].percentiles.p50_ns/1e6*10|floor/10' <<< "$j") ms, p99 $(jq '.results[0].percentiles.p99_ns/1e6*10|floor/10' <<< "$j") ms, ${dt}s"
	else
		fail "$name" "drop $pct: rc=$rc $(head -c 300 <<< "$j")"
	fi
}
lossy lossy_1pct 1% 0.003 0.03 --size 64k --iters 30
lossy lossy_20pct 20% 0.1 0.4 --size 64k --iters 10
# one node's traffic cut for 2 s: steps lose that node's pieces and go on
id=$(inject_add dev sw1 egress opcode data flap 2s)
t0=$EPOCHREALTIME
j=$("$C" -j collective allreduce --mode lossy --size 64k --iters 20 --step_timeout_max 300ms 2>&1); rc=$?
dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
inject_flush >/dev/null
if [ $rc = 0 ] && jq -e '.results[0].lost_pieces > 0' <<< "$j" >/dev/null; then
	pass lossy_flap "2 s cut toward node1: completed in ${dt}s, lost $(jq '.results[0].lost_fraction*10000|floor/100' <<< "$j")%"
else
	fail lossy_flap "rc=$rc $(head -c 300 <<< "$j")"
fi

# --- drop rate: UC WRITEs of one MTU each (no retransmission: every packet
# counts once), 50,000 packets node0 -> node1, rule at node1's ingress
drop_rate() {	# name pct lo hi
	local name=$1 pct=$2 lo=$3 hi=$4 id s0 r0 s1 r1 sent rcvd lost m d rate
	id=$(inject_add dev n1 ingress opcode data drop "$pct")
	s0=$(ctr node0 sent_pkts); r0=$(ctr node1 rcvd_pkts)
	"$C" perftest ib_write_bw -c UC -s 1024 -n 50000 >/dev/null 2>&1
	s1=$(ctr node0 sent_pkts); r1=$(ctr node1 rcvd_pkts)
	sent=$((s1 - s0)); rcvd=$((r1 - r0)); lost=$((sent - rcvd))
	m=$(rule_ctr "$id" matched); d=$(rule_ctr "$id" dropped)
	rate=$(awk -v d="$d" -v m="$m" 'BEGIN{printf "%.3f", m ? 100 * d / m : 0}')
	inject_del "$id"
	if [ "$m" -ge 10000 ] && [ "$d" = "$lost" ] && within "$rate" "$lo" "$hi"; then
		pass "$name" "set $pct: measured $rate% ($d of $m), receiver lost $lost of $sent = rule drops"
	else
		fail "$name" "set $pct: rate $rate% (want $lo..$hi), dropped $d matched $m, receiver lost $lost of $sent"
	fi
}
drop_rate drop_5pct 5% 4 6
drop_rate drop_1pct 1% 0.8 1.2

# --- RC under 5% loss: the NIC retransmits, every iteration completes
id=$(inject_add dev n1 ingress opcode data drop 5%)
q0=$(ctr node1 out_of_seq_request); e0=$(ctr node0 rcvd_seq_err)
out=$("$C" -j p2p lat --iters 400 --size 4k 2>&1); rc=$?
q1=$(ctr node1 out_of_seq_request); e1=$(ctr node0 rcvd_seq_err)
d=$(rule_ctr "$id" dropped)
inject_del "$id"
if [ $rc = 0 ] && [ "$(jq .lat_ns.count <<< "$out")" = 400 ] && [ "$d" -gt 0 ] &&
   [ $((q1 - q0 + e1 - e0)) -gt 0 ]; then
	pass rc_recovers_5pct "400/400 WRITEs done, $d dropped, out_of_seq_request +$((q1 - q0)), rcvd_seq_err +$((e1 - e0)), p99 $(jq '.lat_ns.p99_ns/1000' <<< "$out") us"
else
	fail rc_recovers_5pct "rc=$rc dropped=$d oos+$((q1 - q0)) seqerr+$((e1 - e0)) $(head -c 200 <<< "$out")"
fi

# --- delay toward node1 (sw1 egress): a WRITE ping-pong's RTT grows by the
# delay, its half-RTT latency by half of it. What the mechanism promises is
# a lower bound: fq releases a delayed packet no earlier than its time, so
# every sample, its minimum included, carries at least half the delay. It
# promises no upper bound: fq's timer fires late when the host is short of
# CPU (a CI host 2.5x slower than usual: +8.4 ms for a 2 ms delay; under a
# CPU quota: +9.6 ms), and that lateness is the host's, not the injector's.
# So: both minima at or above half their delay, and the larger delay adds
# more (its p50 at least half the delays' difference above the smaller's,
# 6.25 ms: lateness would have to differ by that between two runs)
base=$("$C" -j p2p lat --iters 300 | jq .lat_ns.p50_ns)
delay_lat() {	# delay: min and p50 in ns, then the rule's delayed counter
	local id j n
	id=$(inject_add dev sw1 egress delay "$1")
	j=$("$C" -j p2p lat --iters 100)
	n=$(rule_ctr "$id" delayed)
	inject_del "$id"
	echo "$(jq .lat_ns.min_ns <<< "$j") $(jq .lat_ns.p50_ns <<< "$j") $n"
}
read -r m1 d1 n1 <<< "$(delay_lat 5ms)"
read -r m2 d2 n2 <<< "$(delay_lat 30ms)"
inc1=$(( (d1 - base) / 1000 )); inc2=$(( (d2 - base) / 1000 )); diff=$(( (d2 - d1) / 1000 ))
if [ "${n1:-0}" -gt 0 ] && [ "${n2:-0}" -gt 0 ] && [ "${m1:-0}" -ge 2500000 ] && [ "${m2:-0}" -ge 15000000 ] &&
	[ $diff -ge 6250 ]; then
	pass delay "p50 $((base / 1000)) us; 5 ms: min $((m1 / 1000)) us (>= 2500), p50 +$inc1 us; 30 ms: min $((m2 / 1000)) us (>= 15000), p50 +$inc2 us; +$diff us for 25 ms more (half the RTT's growth: 12500; the host's timer lateness on top); $n1 and $n2 delayed"
else
	fail delay "p50 $base ns; 5 ms: min ${m1:-?} ns, +$inc1 us ($n1 delayed); 30 ms: min ${m2:-?} ns, +$inc2 us ($n2 delayed); difference +$diff us (wanted minima >= half the delay, difference >= 6250)"
fi

# --- the rest runs on RC WRITE traffic both ways: 4 KiB = 4 packets per message
TRAFFIC_LOG=$(mktemp /tmp/rtb-traffic.XXXXXX)
traffic() { "$C" p2p lat --size 4k --iters 300 > "$TRAFFIC_LOG" 2>&1; }
why_failed() { grep -iE 'error|fail|couldn|timed out|exited' "$TRAFFIC_LOG" | head -3 | tr '\n' '|'; }
effect() {	# name rule-args counter-node counter action-counter
	local name=$1 rule=$2 node=$3 counter=$4 what=$5 id a b k
	# shellcheck disable=SC2086
	id=$(inject_add $rule)
	a=$(ctr "$node" "$counter")
	traffic; local rc=$?
	b=$(ctr "$node" "$counter")
	k=$(rule_ctr "$id" "$what")
	inject_del "$id"
	if [ $rc = 0 ] && [ "$k" -gt 0 ] && [ $((b - a)) -gt 0 ]; then
		pass "$name" "'$rule': $what $k, $node $counter +$((b - a)), transfer completed"
	else
		fail "$name" "'$rule': rc=$rc $what=$k $node $counter +$((b - a)) $(why_failed)"
	fi
}
effect reorder "dev sw1 egress opcode data reorder 10% hold 2ms" node1 out_of_seq_request reordered
effect duplicate "dev n1 ingress opcode data duplicate 10%" node1 duplicate_request duplicated
effect corrupt "dev n1 ingress opcode data corrupt icrc 5%" node1 out_of_seq_request corrupted

# --- ECN: CE marks set at the switch arrive at node1 (counted by a CE-only rule)
m=$(inject_add dev sw1 egress opcode data ecn)
c=$(NODE_OWN=1 inject_add dev n1 ingress ecn ce count)
traffic
mk=$(rule_ctr "$m" marked); seen=$(rule_ctr "$c" matched)
inject_del "$m"; inject_del "$c"
if [ "$mk" -gt 0 ] && [ "$mk" = "$seen" ]; then
	pass ecn "$mk packets marked CE at sw1 egress, $seen arrived CE-marked at n1"
else
	fail ecn "marked=$mk seen_ce=$seen"
fi

# --- link flap: 2 s of total loss toward node1, while traffic flows. A flap
# window starts when its rule is added: added before the traffic, it could end
# before the first WRITE on a slow host (CI: p2p's setup took longer than the
# flap, max half-RTT 77 ms). So the traffic runs first, long enough to outlast
# the flap at this testbed's measured speed (6 s of iterations at the p50 of
# the delay test's base run), and the rule is added once node0 is sending.
flap_iters=$(awk -v b="$base" 'BEGIN{n = int(6e9 / (2 * (b > 1000 ? b : 1000))); print (n < 2000 ? 2000 : n)}')
sending() {	# waits up to 60 s for node0's sent_pkts to grow
	local a b i
	a=$(ctr node0 sent_pkts)
	for i in $(seq 120); do
		sleep 0.5; b=$(ctr node0 sent_pkts)
		[ "$b" -gt "$((a + 20))" ] && return 0
	done
	return 1
}
under_flap() {	# secs p2p-args...: sets $out (p2p lat's output) and $rc
	local secs=$1 p id o; shift
	o=$(mktemp /tmp/rtb-flap.XXXXXX)
	"$C" -j p2p lat --iters "$flap_iters" "$@" > "$o" 2>&1 &
	p=$!
	sending || echo "node0 never started sending" >> "$o"
	id=$(inject_add dev sw1 egress flap "$secs")
	wait $p; rc=$?
	inject_del "$id" >/dev/null 2>&1
	out=$(cat "$o"); rm -f "$o"
}
under_flap 2s
mx=$(jq '.lat_ns.max_ns // 0' <<< "$out" 2>/dev/null || echo 0)
if [ "$rc" = 0 ] && [ "$mx" -ge 700000000 ]; then
	pass flap_recovers "RC (retry_cnt 7) rode out the 2 s flap: $flap_iters/$flap_iters, max half-RTT $((mx / 1000000)) ms"
else
	fail flap_recovers "rc=$rc max=$mx $(head -c 200 <<< "$out")"
fi
under_flap 3s --retry_cnt 1 --qp_timeout 8
if [ "$rc" != 0 ] && grep -qi 'retry' <<< "$out"; then
	pass flap_retry_exceeded "retry_cnt 1: $(grep -io '[^:"]*retry[^;"]*' <<< "$out" | head -1)"
else
	fail flap_retry_exceeded "rc=$rc $out"
fi
"$C" -q testbed status >/dev/null || fail flap_retry_exceeded "agents unhealthy after the failure"

# --- a drop on the SENDER's egress is silent too (TC_ACT_STOLEN): rxe sees no
# send error and does not resend at once; the receiver misses exactly the drops
id=$(inject_add dev n0 egress opcode data drop 5%)
s0=$(ctr node0 sent_pkts); e0=$(ctr node0 send_err); r0=$(ctr node1 rcvd_pkts)
"$C" perftest ib_write_bw -c UC -s 1024 -n 20000 >/dev/null 2>&1
s1=$(ctr node0 sent_pkts); e1=$(ctr node0 send_err); r1=$(ctr node1 rcvd_pkts)
d=$(rule_ctr "$id" dropped)
inject_del "$id"
if [ $((e1 - e0)) = 0 ] && [ "$d" -gt 0 ] && [ $((s1 - s0 - r1 + r0)) = "$d" ]; then
	pass egress_drop_silent "$d dropped at n0 egress, send_err +0, receiver missed $((s1 - s0 - r1 + r0))"
else
	fail egress_drop_silent "dropped $d send_err +$((e1 - e0)) sent $((s1 - s0)) rcvd $((r1 - r0))"
fi

# --- corrupt payload: the ICRC made right again, so rxe accepts the packet
# and its data lands in memory; RC does not resend it (nothing was lost).
# Only the application's own verification can tell, and each workload's
# must: the run exits 1 and says what it found. (The ICRC-wrong mode above
# is a drop: rxe discards it, RC resends, nothing is wrong.)
CP_OUT=$(mktemp /tmp/rtb-cp.XXXXXX) CP_ERR=$(mktemp /tmp/rtb-cp.XXXXXX)
corrupt_run() {	# rules... -- command...: the run's exit (CP_RC) and the rules' corrupted sum (CP_N)
	local ids=() r
	while [ "$1" != -- ]; do
		# shellcheck disable=SC2086
		ids+=("$(inject_add $1)"); shift
	done
	shift
	"$@" > "$CP_OUT" 2> "$CP_ERR"; r=$?
	CP_N=0
	for id in "${ids[@]}"; do CP_N=$((CP_N + $(rule_ctr "$id" corrupted))); done
	inject_flush >/dev/null
	CP_RC=$r
}
corrupt_run "dev n1 ingress opcode data corrupt payload 2%" -- \
	"$C" collective allreduce --mode rc --size 256k --iters 10
wrong=$(awk '$2 == "rc" && $1 ~ /^[0-9]+$/ {print $8}' "$CP_OUT")
if [ "$CP_RC" = 1 ] && [ "$CP_N" -gt 0 ] && [ "${wrong:-0}" -gt 0 ] && grep -q "rc: $wrong wrong elements" "$CP_ERR"; then
	pass corrupt_payload_collective "$CP_N packets tampered at n1 ingress: rc reported $wrong wrong elements, exit 1"
else
	fail corrupt_payload_collective "rc=$CP_RC tampered=$CP_N wrong=${wrong:-?}: $(tail -3 "$CP_OUT" "$CP_ERR" | tr '\n' '|')"
fi
corrupt_run "dev n1 ingress opcode data corrupt payload 3%" "dev n0 ingress opcode read_resp corrupt payload 5%" -- \
	"$C" -j kv --keys 64 --buckets 24 --ops 1000
kv=$(jq -c '{r: ([.clients[].corrupt_reads] | add), s: ([.clients[].corrupt_slots] | add), b: .bad_slots}' "$CP_OUT" 2>/dev/null)
if [ "$CP_RC" = 1 ] && [ "$CP_N" -gt 0 ] && jq -e '.r + .s + .b > 0' <<< "$kv" >/dev/null; then
	pass corrupt_payload_kv "$CP_N packets tampered (WRITEs to the server, READ responses to node0): $kv (corrupt reads, reads of corrupt slots, bad slots at the end), exit 1"
else
	fail corrupt_payload_kv "rc=$CP_RC tampered=$CP_N found=${kv:-?}: $(tail -2 "$CP_ERR" | tr '\n' '|')"
fi
corrupt_run "dev n1 ingress opcode data corrupt payload 2%" "dev n0 ingress opcode read_resp corrupt payload 2%" -- \
	"$C" -j storage
st=$(jq -c '{mismatches, final_pass_mismatches}' "$CP_OUT" 2>/dev/null)
if [ "$CP_RC" = 1 ] && [ "$CP_N" -gt 0 ] && jq -e '.mismatches > 0 and .final_pass_mismatches > 0' <<< "$st" >/dev/null; then
	pass corrupt_payload_storage "$CP_N packets tampered (WRITEs at the target, READ responses at the initiator): $st, exit 1"
else
	fail corrupt_payload_storage "rc=$CP_RC tampered=$CP_N found=${st:-?}: $(tail -2 "$CP_ERR" | tr '\n' '|')"
fi
rm -f "$CP_OUT" "$CP_ERR"

# --- rdma-inject forward in the bridge's place: XDP on sw0..sw2 forwards by
# the nodes' MACs (frames never reach the bridge). RC WRITEs cross it, its
# hooks count what rxe sent, and its slow path (XDP decides, tc does)
# delays, reorders and duplicates. Flush gives the bridge its frames back
G() { "$C" testbed exec node0 -- "$@"; }
hook_roce() {	# DEV DIR: its hook's RoCE packets (the switch's, through the XDP switch)
	"$C" -j inject --node "$([ -n "$XDP" ] && echo switch || echo node0)" stats |
		jq "[.hooks[] | select(.dev == \"$1\" and .dir == \"$2\") | .roce_pkts] | add // 0"
}
forward_switch() {
	local macs="" i fo h0 s0 r0 h1 s1 r1 rc m id dl w
	for i in 0 1 2; do macs="$macs mac $(G cat /sys/class/net/n$i/address)=sw$i"; done
	# shellcheck disable=SC2086
	fo=$(G rdma-inject forward sw0 sw1 sw2 $macs 2>&1) || { echo "forward: $fo"; return 1; }
	h0=$(hook_roce sw0 ingress); s0=$(ctr node0 sent_pkts); r0=$(ctr node1 rcvd_pkts)
	traffic || { echo "through XDP: $(why_failed)"; return 1; }
	h1=$(hook_roce sw0 ingress); s1=$(ctr node0 sent_pkts); r1=$(ctr node1 rcvd_pkts)
	[ $((h1 - h0)) = $((s1 - s0)) ] && [ $((r1 - r0)) -gt 0 ] ||
		{ echo "sw0 ingress saw $((h1 - h0)), node0 sent $((s1 - s0)), node1 got $((r1 - r0))"; return 1; }
	id=$(inject_add dev sw1 egress delay 5ms)
	m=$("$C" -j p2p lat --iters 50 | jq .lat_ns.min_ns); dl=$(rule_ctr "$id" delayed)
	inject_del "$id" >/dev/null
	[ "${m:-0}" -ge 2500000 ] && [ "${dl:-0}" -gt 0 ] || { echo "delay 5ms: min ${m:-?} ns, delayed ${dl:-?}"; return 1; }
	for w in "reorder dev sw1 egress opcode data reorder 10% hold 2ms:out_of_seq_request:reordered" \
		 "duplicate dev sw0 ingress opcode data duplicate 10%:duplicate_request:duplicated"; do
		local rule=${w%%:*} rest=${w#*:} a b k
		id=$(inject_add ${rule#* })
		a=$(ctr node1 "${rest%%:*}"); traffic; rc=$?; b=$(ctr node1 "${rest%%:*}")
		k=$(rule_ctr "$id" "${rest#*:}"); inject_del "$id" >/dev/null
		[ $rc = 0 ] && [ "${k:-0}" -gt 0 ] && [ $((b - a)) -gt 0 ] ||
			{ echo "${rule%% *}: rc=$rc ${rest#*:} $k, node1 ${rest%%:*} +$((b - a))"; return 1; }
		FS_SAW="$FS_SAW; ${rule%% *}: ${rest#*:} $k, node1 ${rest%%:*} +$((b - a))"
	done
	# the VM's own iproute2 (its sh runs busybox's ip, which shows no XDP)
	G /usr/sbin/ip -d link show sw0 | grep -q prog/xdp || { echo "no XDP on sw0 while forwarding"; return 1; }
	inject_flush >/dev/null
	G /usr/sbin/ip -d link show sw0 | grep -q prog/xdp && { echo "flush left XDP on sw0"; return 1; }
	G /usr/sbin/ip -d link show n0 | grep -q prog/xdp && { echo "flush left XDP on n0"; return 1; }
	traffic || { echo "after flush, through the bridge: $(why_failed)"; return 1; }
	echo "$(head -n 2 <<< "$fo" | tr '\n' ' ')| sw0 ingress saw $((h1 - h0)) RoCE packets = node0 sent $((s1 - s0)); delay 5ms: min $((m / 1000)) us, delayed $dl$FS_SAW; after flush the bridge carries it"
}
# through the XDP switch (INJECT_SWITCH=xdp) the testbed's forwarder is the
# switch every test above ran through: over an allreduce of the three
# nodes, each port's ingress hook counted exactly the RoCE packets its
# node's rxe sent, and every port runs XDP
forward_switch_xdp() {
	local i h0=() s0=() h s msg=""
	for i in 0 1 2; do h0[i]=$(hook_roce rtbsw$i ingress); s0[i]=$(ctr node$i sent_pkts); done
	"$C" -q collective allreduce --mode rc --size 256k --iters 5 >/dev/null 2>&1 ||
		{ echo "an allreduce through the forwarder failed"; return 1; }
	for i in 0 1 2; do
		h=$(($(hook_roce rtbsw$i ingress) - h0[i])); s=$(($(ctr node$i sent_pkts) - s0[i]))
		[ "$h" = "$s" ] && [ "$h" -gt 0 ] || { echo "rtbsw$i ingress counted $h, rxe$i sent $s"; return 1; }
		ip -d link show rtbsw$i | grep -q prog/xdp || { echo "no XDP on rtbsw$i"; return 1; }
		msg="$msg rtbsw$i $h = rxe$i $s;"
	done
	echo "the testbed's forwarder, RoCE packets at each port's ingress = its node's rxe sent:$msg all three ports in XDP"
}
FS_SAW=""
if [ -n "$XDP" ]; then fs=$(forward_switch_xdp); else fs=$(forward_switch); fi
if [ $? = 0 ]; then pass forward_switch "$fs"; else fail forward_switch "$fs"; inject_flush >/dev/null 2>&1; fi

# --- flush leaves nothing: no rules, hooks or our qdiscs on any device.
# Through the XDP switch: a rule at the switch and one in node2's kernel;
# afterwards no rule at the switch (its forwarder's hooks stay), none and
# no hook or qdisc in any node's kernel, and the forwarder still carries
if [ -n "$XDP" ]; then
	inject_add dev sw2 egress drop 1% >/dev/null
	NODE_OWN=1 inject_add dev n2 ingress drop 1% >/dev/null
	before=$("$C" -j inject --node switch list | jq -c '[.rules[].dev]')
	before="$before $("$C" -j inject --node node2 list | jq -c '[.hooks[].dev]')"
	inject_flush
	after=$("$C" -j inject --node switch list | jq '.rules | length')
	for n in 0 1 2; do after="$after $("$C" -j inject --node node$n list | jq -c '[.rules, .hooks, .qdiscs] | map(length)')"; done
	if [ "$after" = "0 [0,0,0] [0,0,0] [0,0,0]" ] && [ "$before" = '["rtbsw2"] ["n2"]' ] &&
		ip -d link show rtbsw2 | grep -q prog/xdp && traffic; then
		pass flush_clean "before: switch rules on $before hooked in node2; after: no rule at the switch, none and no hook or qdisc in any node, the forwarder carries RC WRITEs"
	else
		fail flush_clean "before $before after $after $(why_failed)"
	fi
else
	inject_add dev sw2 egress delay 1ms >/dev/null
	inject_add dev n2 ingress drop 1% >/dev/null
	before=$("$C" -j inject list | jq -c '[.qdiscs[].kind] | sort')
	inject_flush
	after=$("$C" -j inject list)
	if [ "$(jq -c '[.rules, .hooks, .qdiscs] | map(length)' <<< "$after")" = "[0,0,0]" ] &&
	   [ "$before" != "[]" ]; then
		pass flush_clean "before: $before; after flush: no rules, hooks, clsact/prio/fq/netem qdiscs"
	else
		fail flush_clean "before $before after $(jq -c . <<< "$after")"
	fi
fi
"$C" testbed down >/dev/null
# reached the end: a non-zero exit means the suite was cut short
exit 0
