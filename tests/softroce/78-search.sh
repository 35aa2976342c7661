#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmactl search (issue 39), short form: the three known answers
# (docs/search.md), each found by the guided search as one event and
# replayed from repro.yaml, broken in at least 8 of 10 replays:
#   rdma-core's ibv_rc_pingpong (both roles exit 0 within their timeout):
#     a final ACK, the last PSN of a QP's responses at a node's ingress in
#     the traced run without faults: the peer has exited, and rxe resends
#     to it for ever;
#   RC's p99 (a p2p WRITE latency test): the last packet of a message,
#     whose loss waits a whole ACK timeout; the same schedule moved to a
#     message's middle holds (the receiver NAKs the gap at once);
#   the key-value store's resend_all: one atomic acknowledge lost in every
#     transmission (the QP breaks, the increment runs twice); with recovery
#     log the same search finds nothing, though it broke QPs; and with
#     flaps instead of packets, a window of loss that breaks the QP, shrunk
#     by halving while every confirm run breaks, replayed from the
#     traffic's start in at least 4 of 5 runs.
# A space that cannot break it (one duplicated packet) ends with exit 0 and
# what it tried. The long form, random against guided: make bench-search.
set -u
cd "$(dirname "$0")/../.."
. tests/softroce/lib.sh
C=$RDMACTL
TESTS="pingpong_final_ack repro_replays repro_run_repeat unbreakable_says_so search_log
	p99_last_packet p99_middle_naks kv_resend_twice kv_log_nothing kv_flap_window nothing_left"
W=$(mktemp -d /tmp/rtb-search.XXXXXX)
SUITE_EXIT='rm -rf "$W"'
suite_up || exit 0
P=profiles/search-rc-pingpong.yaml

# --- guided: the known answer, as one event, and its replay rate
g=$W/guided
out=$("$C" search "$P" -o "$g" 2> "$W/g.err"); rc=$?
res=$g/result.json
# the answer from the run without faults: a responses QP at that node's
# ingress (what the trace's hook_qps says the hook numbers it), its last
# PSN, first transmission: a final ACK. Which side's final ACK it is
# depends on which side finished last
base=$(jq -r 'select(.kind == "baseline") | .dir' "$g/search.log" 2>/dev/null)
got=$(jq -r '.minimal | map("\(.node) \(.dir) \(.port): \(.rule)") | join("; ")' "$res" 2>/dev/null)
node=$(jq -r '.minimal[0].node' "$res" 2>/dev/null)
qp=$(jq -r '.minimal[0].rule' "$res" 2>/dev/null | sed -n 's/^qp \([0-9]*\) .*/\1/p')
want=$(jq -r --arg n "$node" --argjson q "${qp:-0}" '[.trace.files[0].captures[] |
	select(.node == $n and .dir == "ingress" and (.switch | not)) | .hook_qps[] |
	select(.qp == $q and .kind == "responses")][0] | "\($n) ingress nic: qp \(.qp) responses rpsn \(.psns - 1) tx 1 drop"' \
	"$base/report.json" 2>/dev/null)
first=$(jq -r '.first_violation_trial' "$res" 2>/dev/null)
if [ $rc = 1 ] && [ -n "$qp" ] && [ "$got" = "$want" ]; then
	pass pingpong_final_ack "found at trial $first of 12 in $(jq -r '.search_wall_s | round' "$res") s: $got (the last ACK toward $node; $(jq -r '.events_before' "$res") event(s) before shrinking, $(jq -r '.events_after' "$res") after)"
else
	fail pingpong_final_ack "rc=$rc want [$want] got [$got]; $(tail -n 4 "$W/g.err" | tr '\n' '|')"
fi

# --- the replay rate, from repro.yaml itself; repro.yaml loads
reps=$(jq -r '.replays' "$res" 2>/dev/null)
broke=$(jq -r '.replays_broke' "$res" 2>/dev/null)
if [ "${reps:-0}" = 10 ] && [ "${broke:-0}" -ge 8 ] && "$C" validate "$g/repro.yaml" > /dev/null &&
	grep -q "replays: broke the expectation in $broke of 10" <<< "$out"; then
	pass repro_replays "broke the expectation in $broke of 10 replays of repro.yaml"
else
	fail repro_replays "replays ${reps:-?}, broke ${broke:-?}; $(tr '\n' '|' <<< "$out")"
fi

# --- rdmactl run repro.yaml --repeat: the same rate by hand (2 runs here):
# the count it prints is the runs whose report has a failed expectation,
# and its exit says whether there was one
out=$("$C" run "$g/repro.yaml" --repeat 2 -o "$W/rep" 2> "$W/rep.err"); rc=$?
out=$(grep '^repeat:' <<< "$out")
n=$(sed -n 's/^repeat: an expectation failed in \([0-9]*\) of 2 runs.*/\1/p' <<< "$out")
m=0
for k in 1 2; do
	[ "$(jq -r '.expectations_failed' "$W/rep/$k/report.json" 2>/dev/null)" -gt 0 ] 2>/dev/null && m=$((m + 1))
done
want_rc=0
[ $m -gt 0 ] && want_rc=1
if [ -n "$n" ] && [ "$n" = $m ] && [ $rc = $want_rc ]; then
	pass repro_run_repeat "$out"
else
	fail repro_run_repeat "rc=$rc, reports with a failed expectation: $m [$out] $(tail -n 3 "$W/rep.err" | tr '\n' '|')"
fi

# --- a space that cannot break it: one duplicated packet is taken in
# stride. Exit 0, and it says what it tried
u=$W/unbreakable
out=$("$C" search "$P" -o "$u" --set "search.actions.0=duplicate" --trials 2 2> "$W/u.err"); rc=$?
if [ $rc = 0 ] && grep -q "^search: no schedule broke the expectations in 2 trials (guided" <<< "$out" &&
	[ "$(jq -r '.result' "$u/result.json")" = held ] && [ ! -e "$u/repro.yaml" ]; then
	pass unbreakable_says_so "$(head -n 1 <<< "$out")"
else
	fail unbreakable_says_so "rc=$rc [$(tr '\n' '|' <<< "$out")] $(tail -n 3 "$W/u.err" | tr '\n' '|')"
fi

# --- the log: a line per run, each with its kind, verdict and directory
kinds=$(jq -r '.kind' "$g/search.log" 2>/dev/null | sort | uniq -c | awk '{ printf "%s %s, ", $1, $2 }')
lines=$(wc -l < "$g/search.log")
dirs=$(jq -r '.dir' "$g/search.log" | while read -r d; do [ -f "$d/report.json" ] && echo ok; done | wc -l)
trials=$(jq -r '.trials' "$res" 2>/dev/null)
if [ "$lines" -ge 12 ] && [ "$lines" = "${trials:-x}" ] && [ "$dirs" = "$lines" ] &&
	jq -s -e 'map(select(.kind == "search" and .verdict == "broke")) | .[0].failed[0]' "$g/search.log" > /dev/null; then
	pass search_log "$lines runs logged ($kinds), each with its report"
else
	fail search_log "$lines lines, $dirs reports, result.json trials ${trials:-?}"
fi

# --- RC's p99: the last packet of a message (requests at a node's
# ingress, rpsn + 1 a whole number of messages, first transmission)
p=$W/p99
out=$("$C" search profiles/search-rc-p99.yaml -o "$p" 2> "$W/p.err"); rc=$?
res=$p/result.json
base=$(jq -r 'select(.kind == "baseline") | .dir' "$p/search.log" 2>/dev/null)
rule=$(jq -r '.minimal[0].rule' "$res" 2>/dev/null)
node=$(jq -r '.minimal[0].node' "$res" 2>/dev/null)
rpsn=$(sed -n 's/^qp 1 requests rpsn \([0-9]*\) tx 1 drop$/\1/p' <<< "$rule")
per=$(jq -r --arg n "$node" '[.trace.files[0].captures[] | select(.node == $n and .dir == "ingress") |
	.hook_qps[] | select(.qp == 1 and .kind == "requests")][0] | .psns / .messages' "$base/report.json" 2>/dev/null)
broke=$(jq -r '.replays_broke' "$res" 2>/dev/null)
if [ $rc = 1 ] && [ "$(jq -r '.events_after' "$res")" = 1 ] && [ -n "$rpsn" ] && [ "${per:-0}" -gt 1 ] 2>/dev/null &&
	[ $(((rpsn + 1) % per)) = 0 ] && [ "${broke:-0}" -ge 8 ]; then
	pass p99_last_packet "found at trial $(jq -r '.first_violation_trial' "$res") of 12 in $(jq -r '.search_wall_s | round' "$res") s: $node ingress: $rule (the last of a message of $per packets); replays: broke it in $broke of 10"
else
	fail p99_last_packet "rc=$rc rule [$rule] at $node, $per packets a message, replays ${broke:-?}; $(tail -n 4 "$W/p.err" | tr '\n' '|')"
fi

# --- the same packet's neighbour in the middle of its message: the gap is
# NAKed at once, the p99 holds, and the drop was made
if [ -n "$rpsn" ] && [ -f "$p/repro.yaml" ]; then
	mid=$((rpsn - per / 2))
	"$C" run "$p/repro.yaml" -o "$W/mid" --set "faults.0.rule=qp 1 requests rpsn $mid tx 1 drop" > /dev/null 2> "$W/mid.err"; rc=$?
	dropped=$(jq -r '.faults[0].rules[0].counters.dropped' "$W/mid/report.json" 2>/dev/null)
	naks=$(jq -r '.arms[0].hw_counters_delta.rcvd_seq_err // 0' "$W/mid/report.json" 2>/dev/null)
	p99=$(jq -r '.arms[0].percentiles.p99_ns / 1e6 | . * 100 | round / 100' "$W/mid/report.json" 2>/dev/null)
	if [ $rc = 0 ] && [ "$dropped" = 1 ] && [ "${naks:-0}" -ge 1 ]; then
		pass p99_middle_naks "rpsn $mid (a message's middle) dropped: p99 $p99 ms, held; NAKs received: $naks"
	else
		fail p99_middle_naks "rc=$rc dropped ${dropped:-?} NAKs ${naks:-?} p99 ${p99:-?} ms; $(tail -n 3 "$W/mid.err" | tr '\n' '|')"
	fi
else
	fail p99_middle_naks "no minimal schedule to move"
fi

# --- the key-value store: an atomic acknowledge lost in every
# transmission (no tx), the client's responses at node0's ingress
k=$W/kv
out=$("$C" search profiles/search-kv-resend.yaml -o "$k" 2> "$W/k.err"); rc=$?
res=$k/result.json
got=$(jq -r '.minimal | map("\(.node) \(.dir): \(.rule)") | join("; ")' "$res" 2>/dev/null)
broke=$(jq -r '.replays_broke' "$res" 2>/dev/null)
dbl=$(jq -s -r 'map(select(.kind == "search" and .verdict == "broke")) | .[0].failed[0] // ""' "$k/search.log" 2>/dev/null)
if [ $rc = 1 ] && grep -Eq '^node0 ingress: qp 1 responses rpsn [0-9]+ drop$' <<< "$got" &&
	grep -q "double_executed == 0 failed" <<< "$dbl" && [ "${broke:-0}" -ge 8 ]; then
	pass kv_resend_twice "found at trial $(jq -r '.first_violation_trial' "$res") of 8 in $(jq -r '.search_wall_s | round' "$res") s: $got ($dbl); replays: broke it in $broke of 10"
else
	fail kv_resend_twice "rc=$rc got [$got] [$dbl] replays ${broke:-?}; $(tail -n 4 "$W/k.err" | tr '\n' '|')"
fi

# --- recovery log: the same search, the same budget, nothing found, though
# its schedules broke QPs (the log recovered them)
l=$W/kv-log
out=$("$C" search profiles/search-kv-resend.yaml -o "$l" --set workload.options.recovery=log 2> "$W/l.err"); rc=$?
hit=0
for d in $(jq -r 'select(.kind == "search") | .dir' "$l/search.log" 2>/dev/null); do
	[ "$(jq -r '[.arms[0].results[][] | .recovery.failures // 0] | add' "$d/report.json" 2>/dev/null)" -gt 0 ] 2>/dev/null && hit=$((hit + 1))
done
if [ $rc = 0 ] && grep -q "^search: no schedule broke the expectations in 8 trials" <<< "$out" && [ $hit -ge 1 ]; then
	pass kv_log_nothing "$(head -n 1 <<< "$out"); $hit of them broke the client's QP, and the log recovered"
else
	fail kv_log_nothing "rc=$rc, QPs broken in $hit trials [$(tr '\n' '|' <<< "$out")] $(tail -n 3 "$W/l.err" | tr '\n' '|')"
fi

# --- flaps: windows of loss at the client, counted from its traffic's
# start; one long enough to outlast the client's retries breaks its QP
# (16 ms ACK timeout, one retry) and resend_all runs an increment twice.
# Shrinking halves the window while it still breaks the run
f=$W/flap
out=$("$C" search profiles/search-kv-resend.yaml -o "$f" --set search.actions.0=flap \
	--set search.targets.time=10ms-80ms --set search.targets.window=40ms-100ms \
	--set search.events=1 --set run.iters=2000 --set workload.options.standby=3 \
	--set search.replays=5 --trials 6 2> "$W/f.err"); rc=$?
res=$f/result.json
fl=$(jq -r '.found[0] | "\(.duration_ms) \(.start_ms)"' "$res" 2>/dev/null)
ml=$(jq -r '.minimal[0] | "\(.duration_ms) \(.start_ms) \(.rule)"' "$res" 2>/dev/null)
broke=$(jq -r '.replays_broke' "$res" 2>/dev/null)
read -r fd fs <<< "$fl"
read -r md ms mr <<< "$ml"
if [ $rc = 1 ] && [ "$mr" = "drop from traffic" ] && [ "${md:-0}" -ge 1 ] 2>/dev/null &&
	[ "$md" -le "$fd" ] && [ "$ms" -ge "$fs" ] && [ $((ms + md)) -le $((fs + fd)) ] &&
	grep -q "rule: \"drop from traffic\"" "$f/repro.yaml" && grep -q "duration: ${md}ms" "$f/repro.yaml" &&
	"$C" validate "$f/repro.yaml" > /dev/null && [ "${broke:-0}" -ge 4 ]; then
	pass kv_flap_window "found at trial $(jq -r '.first_violation_trial' "$res"): flap ${fd}ms at ${fs}ms, shrunk to ${md}ms at ${ms}ms (inside it); replays: broke it in $broke of 5"
else
	fail kv_flap_window "rc=$rc found [$fl] minimal [$ml] replays ${broke:-?}; $(tail -n 4 "$W/f.err" | tr '\n' '|')"
fi

# --- nothing left: no rule on the nodes, the testbed as it was
left=$("$C" -j inject --node node1 list 2>/dev/null | jq '.rules | length' 2>/dev/null)
left0=$("$C" -j inject --node node0 list 2>/dev/null | jq '.rules | length' 2>/dev/null)
if [ "${left:-x}" = 0 ] && [ "${left0:-x}" = 0 ] && "$C" -q testbed status > /dev/null; then
	pass nothing_left "no rules on node0 or node1; the testbed still up"
else
	fail nothing_left "rules left: node0 ${left0:-?}, node1 ${left:-?}"
fi
