#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmactl search (issue 39), short form: the known answer for rdma-core's
# ibv_rc_pingpong (profiles/search-rc-pingpong.yaml: both roles exit 0
# within their timeout). The guided search must find the single lost packet
# that hangs it, a final ACK, as one event equal to that packet in the
# traced run without faults (a responses QP at a node's ingress, its last
# PSN, first transmission): the peer has exited, and rxe resends to it for
# ever;
# repro.yaml must load and break the expectation in at least 8 of 10
# replays. A space that cannot break it (one duplicated packet) ends with
# exit 0 and what it tried. The long form, random against guided: make
# bench-search.
set -u
cd "$(dirname "$0")/../.."
. tests/softroce/lib.sh
C=$RDMACTL
TESTS="pingpong_final_ack repro_replays repro_run_repeat unbreakable_says_so search_log nothing_left"
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
	select(.qp == $q and .kind == "responses")][0] | "\($n) ingress nic: qp \(.qp) rpsn \(.psns - 1) tx 1 drop"' \
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

# --- nothing left: no rule on the nodes, the testbed as it was
left=$("$C" -j inject --node node1 list 2>/dev/null | jq '.rules | length' 2>/dev/null)
left0=$("$C" -j inject --node node0 list 2>/dev/null | jq '.rules | length' 2>/dev/null)
if [ "${left:-x}" = 0 ] && [ "${left0:-x}" = 0 ] && "$C" -q testbed status > /dev/null; then
	pass nothing_left "no rules on node0 or node1; the testbed still up"
else
	fail nothing_left "rules left: node0 ${left0:-?}, node1 ${left:-?}"
fi
