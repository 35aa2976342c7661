#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Packet traces (issue 15): a traced run of ibv_rc_pingpong under 1% loss on
# rxe; its pcapng files checked against tshark's own RoCE dissection (packets
# and resent packets per capture point), every loss with a trigger, the
# go-back-N check, the trace against the injector's rule counters and rxe's
# hw counters; rdma-inject trace's bad inputs and its one-reader rule; a
# rule that drops a packet and then its first resend (qp / rpsn / tx), so
# that recovery must come from the NAK and then from the timeout; the
# report's retransmissions from the trace and the injector's own count at
# the same hooks; and nothing left on the node afterwards.
set -u
cd "$(dirname "$0")/../.."
. tests/softroce/lib.sh
C=$RDMACTL
TESTS="traced_run_tshark losses_and_checks traced_quickstart transmission_targeting resent_counts nak_during_retry
	cnp_notification cnp_at_switch trace_cli nothing_left"
W=$(mktemp -d /tmp/rtb-trace.XXXXXX)
SUITE_EXIT='rm -rf "$W"'
suite_up || exit 0
command -v tshark >/dev/null || { for t in $TESTS; do fail "$t" "no tshark (make deps)"; done; exit 1; }

d=$W/run
out=$("$C" run profiles/exec-rc-pingpong.yaml --trace -o "$d" 2>&1); rc=$?
"$C" analyze -j "$d" > "$W/an.json" 2> "$W/an.err"; arc=$?

# --- tshark's count of packets, of resent ones (a PSN already seen on
# that QP: source, destination, destination QPN) and of CNPs (opcode 129,
# PSN 0 always: never resent) per file and interface
ts_counts() {
	local f d=${1:-$d}
	for f in "$d"/trace/*.pcapng; do
		tshark -r "$f" -Y infiniband -T fields -e frame.interface_id -e ip.src -e ip.dst \
			-e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.opcode 2>/dev/null |
			awk -v f="trace/${f##*/}" '{ n[$1]++; k = $1 " " $2 " " $3 " " $4 " " $5
				if ($6 == 129) { c[$1]++; next }
				if (k in seen) r[$1]++; seen[k] = 1 }
				END { for (i in n) print f, i, n[i], r[i] + 0, c[i] + 0 }'
	done | sort
}
# ours, in the same form
an_counts() {
	jq -r '.captures[] | select(.packets > 0) | "\(.file) \(.iface) \(.packets) \(.resent_packets) \(.cnp_packets)"' < "$1" | sort
}
# where they differ (file iface packets resent cnps), for a failure's line
counts_diff() {
	echo "ours only: $(comm -23 <(echo "$1") <(echo "$2") | head -n 6 | tr '\n' '|')" \
		"tshark only: $(comm -13 <(echo "$1") <(echo "$2") | head -n 6 | tr '\n' '|')"
}
ours=$(an_counts "$W/an.json")
theirs=$(ts_counts)
if [ $rc = 0 ] && [ $arc = 0 ] && [ -n "$ours" ] && [ "$ours" = "$theirs" ] &&
	[ "$(ls "$d"/trace/*.pcapng | wc -l)" = 2 ]; then
	pass traced_run_tshark "$(wc -l <<< "$ours") capture points agree with tshark: $(awk '{p += $3; r += $4} END {print p " packets, " r " resent"}' <<< "$ours")"
else
	fail traced_run_tshark "rc=$rc analyze=$arc ours=[$(tr '\n' '|' <<< "$ours")] tshark=[$(tr '\n' '|' <<< "$theirs")] $(tail -n 3 <<< "$out" | tr '\n' '|') $(tr '\n' '|' < "$W/an.err")"
fi

# --- every loss has a trigger (a NAK, a timeout, or no need: a later ACK
# said as much, an earlier copy got through) and, when resent, a latency;
# go-back-N holds or names where it did not; the counters agree
if jq -e '
	([.captures[].losses[]] | length) > 0 and
	([.captures[].losses[] | select(.trigger | IN("nak", "nak_ignored", "timeout", "covered", "duplicate", "sequence", "sequence_ignored") | not)] | length) == 0 and
	([.captures[].losses[] | select(.trigger | IN("nak", "nak_ignored", "timeout")) |
	  select((.retransmission_latency_ns | type) != "number")] | length) == 0 and
	([.captures[].losses[] | select(.trigger == "nak")] | length) > 0 and
	([.captures[].go_back_n.deviations[] | select((.what | type) != "string")] | length) == 0 and
	(.checks | length) >= 4 and ([.checks[] | select(.ok | not)] | length) == 0' < "$W/an.json" >/dev/null &&
	jq -e '.trace.consistent and ([.arms[] | select(.retransmissions_source == "trace")] | length) == 2 and
	       .arms[0].retransmissions == ([.trace.files[] | select(.arm == "4k") | .captures[] |
	         select(.dir == "egress") | .resent_requests] | add)' < "$d/report.json" >/dev/null; then
	pass losses_and_checks "$(jq -r '[.captures[].losses[].trigger] | group_by(.) | map("\(.[0]) \(length)") | join(", ")' < "$W/an.json"); median retransmission latency $(jq -r '[.captures[].losses[].retransmission_latency_ns | numbers] | sort | .[length / 2 | floor] / 1e6' < "$W/an.json") ms; go-back-N deviations $(jq '[.captures[].go_back_n.deviations[]] | length' < "$W/an.json"); $(jq '.checks | length' < "$W/an.json") consistency checks hold"
else
	fail losses_and_checks "$(jq -c '{t: [.captures[].loss_triggers], c: [.checks[] | select(.ok | not)], g: [.captures[].go_back_n.deviations[]][:3]}' < "$W/an.json" 2>&1 | head -c 600)"
fi

# --- the demo's own experiment traced (scaled down): 3 nodes, rc, lossy on
# UC, hadamard, sr; every capture point agrees with tshark, every loss of
# the rc arm has a trigger, the checks hold
q=$W/quick
out=$("$C" run profiles/quickstart.yaml --trace -o "$q" --set run.iters=4 --set run.rounds=3 2>&1); rc=$?
"$C" analyze -j "$q" > "$W/q.json" 2> "$W/q.err"; arc=$?
ours=$(an_counts "$W/q.json")
theirs=$(ts_counts "$q")
if [ $rc = 0 ] && [ $arc = 0 ] && [ -n "$ours" ] && [ "$ours" = "$theirs" ] &&
	[ "$(ls "$q"/trace/*.pcapng | wc -l)" = 12 ] &&
	jq -e '.trace.consistent and ([.arms[] | select(.retransmissions_source == "trace")] | length) == 4' \
	< "$q/report.json" >/dev/null &&
	jq -e '([.captures[] | select(.file | test("rc\\.")) | .losses[] |
	  select(.trigger | IN("nak", "nak_ignored", "timeout", "covered", "duplicate", "sequence", "sequence_ignored") | not)] | length) == 0' \
	< "$W/q.json" >/dev/null; then
	pass traced_quickstart "$(wc -l <<< "$ours") capture points agree with tshark ($(awk '{p += $3; r += $4} END {print p " packets, " r " resent"}' <<< "$ours")); rc arm's losses: $(jq -r '[.captures[] | select(.file | test("rc\\.")) | .losses[].trigger] | group_by(.) | map("\(.[0]) \(length)") | join(", ")' < "$W/q.json"); $(jq '.trace.checks | length' < "$q/report.json") checks hold"
else
	fail traced_quickstart "rc=$rc analyze=$arc $(wc -l <<< "$ours") vs $(wc -l <<< "$theirs") capture points; $(counts_diff "$ours" "$theirs") $(head -c 300 "$W/q.err" | tr '\n' '|') rc triggers $(jq -c '[.captures[] | select(.file | test("rc\\.")) | .losses[].trigger] | unique' < "$W/q.json" 2>&1 | head -c 100) $(jq -c '[.trace.checks[] | select(.ok | not)][:3]' < "$q/report.json" 2>&1 | head -c 300) $(tail -n 3 <<< "$out" | tr '\n' '|')"
fi

# --- the 31st packet of the server's first QP dropped, then its first
# resend: the NAK path, then (rxe NAKs a sequence error once) the timeout
# path, in every arm, deterministically
t=$W/tx
out=$("$C" run profiles/exec-rc-pingpong.yaml --trace -o "$t" \
	--set "faults.0.rule=opcode data qp 1 rpsn 30 tx 1-2 drop" --set faults.0.nodes=node1 2>&1); rc=$?
"$C" analyze -j "$t" > "$W/tx.json" 2> "$W/tx.err"
if [ $rc = 0 ] && jq -e '
	[.captures[] | select(.node == "node1" and .dir == "ingress")] as $c |
	($c | length) == 2 and
	([$c[] | select((.losses | length) == 2 and .losses[0].psn == .losses[1].psn and
	  .losses[0].trigger == "nak" and .losses[1].trigger == "timeout" and
	  .losses[1].retransmission_latency_ns > .losses[0].retransmission_latency_ns)] | length) == 2 and
	([.captures[] | select(.node != "node1" or .dir != "ingress") | .losses[]] | length) == 0' \
	< "$W/tx.json" >/dev/null &&
	jq -e '.faults[0].rules[0].counters.dropped == 4' < "$t/report.json" >/dev/null; then
	pass transmission_targeting "$(jq -r '[.captures[] | select(.node == "node1" and .dir == "ingress") | .losses[] | "\(.trigger) \(.retransmission_latency_ns / 1e6 | . * 10 | round / 10) ms"] | join(", ")' < "$W/tx.json") (psn+30 of qp 1, tx 1 and 2, both arms)"
else
	fail transmission_targeting "rc=$rc $(jq -c '[.captures[] | {node, dir, l: [.losses[] | {psn, trigger}]}]' < "$W/tx.json" 2>&1 | head -c 500) $(tail -n 2 <<< "$out" | tr '\n' '|')"
fi

# --- retransmissions: the trace's, and the injector's own count at the
# same hooks agrees packet for packet (untraced runs: 60-run, 75-exec)
if jq -e '([.arms[] | select(.retransmissions_source == "trace" and .retransmissions > 0)] | length) == 2 and
	  ([.trace.checks[] | select(.check | test("resent packets = the injector"))] | length) == 4 and
	  ([.trace.checks[] | select(.check | test("resent packets")) | select(.ok | not)] | length) == 0' \
	< "$t/report.json" >/dev/null; then
	pass resent_counts "traced: $(jq -r '[.arms[] | "\(.name) \(.retransmissions) resent (rxe events \(.retransmission_events))"] | join(", ")' < "$t/report.json"), trace = injector at 4 hooks"
else
	fail resent_counts "$(jq -c '[.arms[] | {name, retransmissions, retransmissions_source, resent_by_hooks}], [.trace.checks[] | select(.check | test("resent"))]' < "$t/report.json" 2>&1 | head -c 600)"
fi

# --- a NAK that comes while a retry runs: the 31st packet of a 64 KiB
# message dropped (NAK, go-back-N from it), then the first resend of the
# 32nd. The receiver NAKs PSN 31; rxe's sender has not had a positive ACK
# since its retry began, so it ignores that NAK and waits for its ACK
# timer (docs/stacks.md). The trace names it nak_ignored, and its resend
# waited for that timer: ibv_rc_pingpong's QP timeout 14 is 67 ms, 16
# jiffies at the VM's HZ of 250, so at least 15 whole jiffies (60 ms)
# pass. The NAK'd resend took 0.5 to 14 ms here under TCG.
ni=$W/nakign
sed -e '/^faults:/,$d' -e '/^  - name: 4k/d' profiles/exec-rc-pingpong.yaml > "$W/nakign.yaml"
cat >> "$W/nakign.yaml" <<'EOP'
faults:
  - {name: first, rule: opcode data qp 1 rpsn 30 tx 1 drop, nodes: node1}
  - {name: during-retry, rule: opcode data qp 1 rpsn 31 tx 2 drop, nodes: node1}
EOP
out=$("$C" run "$W/nakign.yaml" --trace -o "$ni" 2>&1); rc=$?
"$C" analyze -j "$ni" > "$W/ni.json" 2> "$W/ni.err"
if [ $rc = 0 ] && jq -e '
	[.captures[] | select(.node == "node1" and .dir == "ingress") | .losses[]] as $l |
	($l | length) == 2 and $l[0].trigger == "nak" and $l[1].trigger == "nak_ignored" and
	$l[1].psn == $l[0].psn + 1 and
	$l[1].retransmission_latency_ns >= 60000000' < "$W/ni.json" >/dev/null; then
	pass nak_during_retry "$(jq -r '[.captures[] | select(.node == "node1" and .dir == "ingress") | .losses[] | "\(.trigger) \(.retransmission_latency_ns / 1e6 | . * 10 | round / 10) ms"] | join(", ")' < "$W/ni.json")"
else
	fail nak_during_retry "rc=$rc $(jq -c '[.captures[] | {node, dir, l: [.losses[] | {psn, trigger, retransmission_latency_ns}]}]' < "$W/ni.json" 2>&1 | head -c 500) $(tail -n 2 <<< "$out" | tr '\n' '|')"
fi

# --- CNPs (issue 15 item 6): node1, the receiver, notifies node0 for 10%
# of its data packets; the CNPs leave node1 and reach node0 (tshark
# dissects them as opcode 129 on both capture points), the rule's notified
# counter is the trace's, rxe's counters still agree with the trace (it
# discards a CNP uncounted), and the trace says what node0 did next
cn=$W/cnp
out=$("$C" run profiles/exec-rc-pingpong.yaml --trace -o "$cn" \
	--set "faults.0.rule=opcode data cnp 10%" --set faults.0.nodes=node1 2>&1); rc=$?
"$C" analyze -j "$cn" > "$W/cnp.json" 2> "$W/cnp.err"; arc=$?
ours=$(an_counts "$W/cnp.json")
theirs=$(ts_counts "$cn")
sent=$(jq '[.captures[] | select(.node == "node1" and .dir == "egress") | .cnp_packets] | add' < "$W/cnp.json")
if [ $rc = 0 ] && [ $arc = 0 ] && [ "$ours" = "$theirs" ] && [ "${sent:-0}" -gt 0 ] && jq -e --argjson n "$sent" '
	([.captures[] | select(.node == "node0" and .dir == "ingress") | .cnp_packets] | add) == $n and
	([.captures[] | select(.node == "node1" and .dir == "egress") | .verdicts.cnp] | add) == $n and
	([.captures[] | select(.node == "node1" and .dir == "ingress") | .verdicts.notified] | add) == $n and
	([.captures[] | select(.node == "node1" and .dir == "egress") | .cnp_reaction[] |
	  select((.sender_flow_qpn | type) == "number" and .measured > 0 and (.gap_ratio | type) == "number")] | length) == 2' \
	< "$W/cnp.json" >/dev/null &&
	jq -e --argjson n "$sent" '.trace.consistent and .trace.cnp.cnps == $n and (.trace.cnp.note | test("DCQCN")) and
	  ([.faults[0].rules[].counters.notified] | add) == $n' < "$cn/report.json" >/dev/null; then
	pass cnp_notification "$sent CNPs node1 -> node0, tshark agrees at $(wc -l <<< "$ours") capture points; node0's packet gap after/before a CNP: $(jq -r '[.captures[] | select(.dir == "egress") | .cnp_reaction[]? | "x\(.gap_ratio * 100 | round / 100) (\(.measured) CNPs)"] | join(", ")' < "$W/cnp.json") (rxe: no DCQCN)"
else
	fail cnp_notification "rc=$rc analyze=$arc sent=$sent ours=[$(tr '\n' '|' <<< "$ours")] tshark=[$(tr '\n' '|' <<< "$theirs")] $(jq -c '[.captures[] | {node, dir, cnp_packets, verdicts, r: .cnp_reaction}]' < "$W/cnp.json" 2>&1 | head -c 700) $(jq -c '[.trace.checks[] | select(.ok | not)][:3], .trace.cnp' < "$cn/report.json" 2>&1 | head -c 300) $(tail -n 3 <<< "$out" | tr '\n' '|')"
fi

# --- the same rule on a switch port (how the toolkit reaches a hardware
# NIC): node0's data notified at its port of the bridge, the CNP sent
# back out of that port to node0
cs=$W/cnpsw
out=$("$C" run profiles/exec-rc-pingpong.yaml --trace -o "$cs" --set arms.1.vars.iters=50 \
	--set "faults.0.rule=opcode data cnp 10%" --set faults.0.nodes=node0 --set faults.0.port=switch 2>&1); rc=$?
"$C" analyze -j "$cs" > "$W/cnpsw.json" 2> /dev/null
n0=$(jq '[.captures[] | select(.node == "node0" and .dir == "ingress" and (.dev | startswith("sw") | not)) | .cnp_packets] | add // 0' < "$W/cnpsw.json")
if [ $rc = 0 ] && [ "${n0:-0}" -gt 0 ] &&
	jq -e --argjson n "$n0" '([.faults[0].rules[].counters.notified] | add) == $n' < "$cs/report.json" >/dev/null; then
	pass cnp_at_switch "$n0 CNPs from the switch port reached node0 (notified $n0)"
else
	fail cnp_at_switch "rc=$rc n0=$n0 $(jq -c '[.captures[] | {dev, node, dir, cnp_packets, verdicts}]' < "$W/cnpsw.json" 2>&1 | head -c 600) $(jq -c '[.faults[0].rules[].counters]' < "$cs/report.json" 2>&1 | head -c 200) $(tail -n 3 <<< "$out" | tr '\n' '|')"
fi

# --- rdma-inject trace by hand: bad words exit 2; one reader at a time
o1=$("$C" testbed exec node0 -- rdma-inject trace snaplen 9999 dev n0 to /tmp/x.pcapng 2>&1); r1=$?
o2=$("$C" testbed exec node0 -- rdma-inject trace to /tmp/x.pcapng 2>&1); r2=$?
o3=$("$C" testbed exec node0 -- sh -c 'rdma-inject trace for 6s to /tmp/a.pcapng dev n0 2>/dev/null & sleep 4;
	rdma-inject trace for 1s to /tmp/b.pcapng dev n1; echo "second=$?"; wait; rdma-inject -j trace for 1s to /tmp/c.pcapng dev n1 >/dev/null 2>&1; echo "third=$?";
	ls /tmp/a.pcapng /tmp/b.pcapng /tmp/b.pcapng.part 2>&1; rm -f /tmp/a.pcapng /tmp/c.pcapng' 2>&1)
if [ $r1 = 2 ] && grep -q "snaplen '9999'" <<< "$o1" && [ $r2 = 2 ] && grep -q "which hooks" <<< "$o2" &&
	grep -q "already running" <<< "$o3" && grep -q "second=1" <<< "$o3" && grep -q "third=0" <<< "$o3" &&
	grep -q "^/tmp/a.pcapng" <<< "$o3" && ! grep -q "^/tmp/b.pcapng" <<< "$o3"; then
	pass trace_cli "snaplen 9999 and no hooks: exit 2; a second trace while one runs: refused, exit 1, no file"
else
	fail trace_cli "r1=$r1 r2=$r2 $(tr '\n' '|' <<< "$o1$o2$o3" | head -c 600)"
fi

# --- nothing of the traces left: no filter, no hook, no rdma-run state
left=$("$C" testbed exec node0 -- sh -c 'ls /run/rdma-run 2>/dev/null | wc -l; ps -o args | grep -c "^[r]dma-inject trace"; for i in n0 n1 n2; do /usr/sbin/tc filter show dev $i ingress; /usr/sbin/tc filter show dev $i egress; done | wc -l' 2>&1 | tr '\n' ' ')
if [ "$left" = "0 0 0 " ] && [ "$("$C" -j inject list | jq '(.rules | length) + (.qdiscs | length)')" = 0 ]; then
	pass nothing_left "no rdma-run state, no trace process, no tc filter"
else
	fail nothing_left "left: $left"
fi
