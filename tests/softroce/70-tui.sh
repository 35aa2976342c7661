#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdmactl tui (issue 7), driven for real in tmux against a testbed run: the
# arm columns fill with numbers, a key-typed :drop and the +/- keys change
# the injector's rules (seen by rdma-inject) and move the numbers, q quits
# leaving nothing behind; 80x24, 200x60 and a too-small terminal. The
# screens at 0% and 5% loss are kept in build/tui-0pct.txt, build/tui-5pct.txt.
set -u
cd "$(dirname "$0")/../.."
. tests/softroce/lib.sh
C=$RDMACTL
TESTS="tui_columns_80x24 tui_drop_by_keys tui_plus_key tui_quit_clean tui_200x60 tui_too_small tui_attach
       tui_expectations tui_ascii_fallback"
W=$(mktemp -d /tmp/rtb-tui.XXXXXX)
SUITE_EXIT='tmux -L rtbtest kill-server 2>/dev/null; rm -rf "$W"'
command -v tmux >/dev/null || { for t in $TESTS; do fail "$t" "no tmux (make deps)"; done; exit 0; }
suite_up || exit 0
T="tmux -L rtbtest"
screen() { $T capture-pane -t "$1" -p; }
rules() { "$C" -j inject stats | jq -c '[.rules[] | .rule]'; }
# the rules a key changed, node by node between the run's steps: up to 30 s
# for them to read RULES (3 s saw two of three on a slow CI host); $r is the last read
wait_rules() { local i; for i in $(seq 60); do sleep 0.5; r=$(rules); [ "$r" = "$1" ] && return 0; done; return 1; }
arms_left() { "$C" -j testbed status | jq '[.nodes[].arms] | add'; }
start() {	# session cols rows args... (a UTF-8 locale, a colour terminal; ENV: others)
	local s=$1 x=$2 y=$3; shift 3
	$T new-session -d -s "$s" -x "$x" -y "$y" \
		"env ${ENV:-LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color} $C tui $* ; echo \$? > $W/$s.rc; sleep 3600"
}
BLOCKS='[▁▂▃▄▅▆▇█]'
# the foreground colours a pane shows: SGR 30-37, 90-97 and 38;5;N (not 39,
# the default tmux writes back), counted distinct
colours() {
	$T capture-pane -t "$1" -p -e | grep -oE $'\e\\[[0-9;]*m' | tr -d $'\e[m' | tr ';' '\n' |
		awk 'p == 38 && $1 == 5 { q = 1; p = $1; next } q { print "38;5;" $1; q = 0; p = $1; next }
		     ($1 >= 30 && $1 <= 37) || ($1 >= 90 && $1 <= 97) { print $1 } { p = $1 }' | sort -u | wc -l
}
wait_for() {	# session pattern seconds
	local i
	for i in $(seq $(($3 * 2))); do screen "$1" | grep -qE -- "$2" && return 0; sleep 0.5; done
	return 1
}
# the p50 row with a number in every arm column
P50_ALL='^\| p50 \[ms\] +[0-9.]+ +[0-9.]+ +[0-9.]+'

# --- 80x24, no faults at first (0% loss). The keys below raise the drop to
# 5 and 10%: there one rc step of 1 MiB can take longer than op_timeout's
# 30 s (40 steps at 10% took over 5 minutes), and an arm that fails ends the
# run before q can stop it, so this run lets a step take 10 minutes
start a 80 24 profiles/quickstart.yaml -o "$W/a" --set run.iters=600 --set run.rounds=60 --set faults= \
	--set workload.options.op_timeout=10m
if wait_for a "$P50_ALL" 120 && wait_for a "p50 trend .*$BLOCKS" 30; then
	screen a > build/tui-0pct.txt
	pass tui_columns_80x24 "$(grep -E '^\| (arm|p50|p99|p50 trend) ' build/tui-0pct.txt | tr -s ' ' | tr '\n' '|')"
else
	fail tui_columns_80x24 "$(screen a | tr -s ' ' | head -c 600)"
fi

# --- :drop 5% typed in: rules appear at every node's ingress; lossy arms lose ~5%
$T send-keys -t a ":drop 5%" Enter
if wait_rules '["opcode data drop 5%","opcode data drop 5%","opcode data drop 5%"]' &&
	wait_for a '^\| now lost \[%\] +- +([3-9]|1[0-9])\.[0-9]+' 120; then
	screen a > build/tui-5pct.txt
	pass tui_drop_by_keys "rules $r; $(grep -E '^\| (p99|now lost) ' build/tui-5pct.txt | tr -s ' ' | tr '\n' '|')"
else
	fail tui_drop_by_keys "rules $r; $(screen a | grep -E '^\| (now lost|p99) ' | tr -s ' ' | tr '\n' '|')"
fi

# --- Tab to the faults pane, + doubles the first rule's rate
$T send-keys -t a Tab
sleep 0.5
$T send-keys -t a "+"
for _ in $(seq 60); do
	sleep 0.5; r1=$("$C" -j inject stats | jq -r '.rules[0].rule')
	[ "$r1" = "opcode data drop 10%" ] && screen a | grep -q "drop 10%" && break
done
if [ "$r1" = "opcode data drop 10%" ] && screen a | grep -q "drop 10%"; then
	pass tui_plus_key "first rule now: $r1 (rdma-inject stats and the faults pane agree)"
else
	fail tui_plus_key "first rule: $r1"
fi

# --- q: the arm in flight stops, rules and report, exit 1 (a partial run)
$T send-keys -t a q
for _ in $(seq 120); do [ -s "$W/a.rc" ] && break; sleep 0.5; done
# the agents release a stopped arm as soon as its ranks see the stop: on a
# slow host that can come a moment after rdmactl has exited (CI: the check
# ran first and failed with no rule, qdisc or process left), so wait for it
for _ in $(seq 60); do [ "$(arms_left)" = 0 ] && break; sleep 0.5; done
if [ "$(cat "$W/a.rc" 2>/dev/null)" = 1 ] && jq -e '.partial == true and .status == "interrupted"' < "$W/a/report.json" >/dev/null &&
	[ "$("$C" -j inject list | jq '(.rules | length) + (.qdiscs | length)')" = 0 ] &&
	[ "$(arms_left)" = 0 ] && ! pgrep -x rdmactl >/dev/null; then
	pass tui_quit_clean "exit 1 (partial report written), no rules, qdiscs, arms or tui process left"
else
	fail tui_quit_clean "rc=$(cat "$W/a.rc" 2>/dev/null) rules=$("$C" -j inject list | jq -c '[.rules, .qdiscs]') partial=$(jq -c '[.partial, .status, .error]' < "$W/a/report.json" 2>&1) arms=$(arms_left) rdmactl: $(pgrep -a -x rdmactl | tr '\n' '|')"
fi

# --- 200x60: the nodes pane and a longer event log; v switches the view
start b 200 60 profiles/quickstart.yaml -o "$W/b" --set run.iters=600 --set run.rounds=60
# the first arm's p99 over each other's, with its interval, once every arm has a round
VS_ALL='^\| p99 1st/this +- +[0-9.]+ \([0-9.]+-[0-9.]+\) +[0-9.]+ \([0-9.]+-[0-9.]+\)'
if wait_for b "$P50_ALL" 120 && screen b | grep -q "Nodes" && [ "$(screen b | grep -c 'agent ok')" = 3 ] &&
	wait_for b "$VS_ALL" 10; then
	vs=$(screen b | grep -E "$VS_ALL" | tr -s ' ')
	# colour per arm, Unicode sparklines, the selected arm's histogram,
	# rates of the injector's counters (wait for a finished round's histogram)
	# (the histogram pane sits right of the events: its rows follow "||")
	wait_for b "Step times: rc .*" 60
	wait_for b "\|\| +[0-9.]+ ms +[0-9]+ +█" 120
	trend=$(screen b | grep -m1 "p50 trend" | tr -s ' ')
	hist=$(screen b | grep -cE "[0-9.]+ ms +[0-9]+ +[█▏▎▍▌▋▊▉]")
	cols=$(colours b)
	rates=$(screen b | grep -c "match/s")
	cp <(screen b) build/tui-200x60.txt 2>/dev/null
	$T send-keys -t b v
	sleep 1
	if screen b | grep -q "Arms: throughput" && screen b | grep -qE '^\| busbw \[MB/s\] +[0-9.]+' &&
		grep -qE "$BLOCKS" <<< "$trend" && [ "$hist" -ge 3 ] && [ "$cols" -ge 4 ] && [ "$rates" = 1 ]; then
		pass tui_200x60 "nodes pane with 3 agents ok, ${vs:-?}, $(screen b | grep -c . ) lines drawn; $trend; histogram $hist bars; $cols colours; match/s drop/s; v: throughput view"
	else
		fail tui_200x60 "trend [$trend] hist $hist colours $cols rates $rates: $(screen b | head -5 | tr '\n' '|')"
	fi
else
	fail tui_200x60 "$(screen b | head -8 | tr '\n' '|')"
fi
$T send-keys -t b q
for _ in $(seq 120); do [ -s "$W/b.rc" ] && break; sleep 0.5; done

# --- too small: a message, not garbage; q still quits cleanly
start c 60 20 profiles/quickstart.yaml -o "$W/c" --set run.iters=600 --set run.rounds=60 --set faults=
if wait_for c "terminal too small: 60x20, need at least 80x24" 60; then
	msg=$(screen c | grep -m1 'too small')
	$T send-keys -t c q
	for _ in $(seq 120); do [ -s "$W/c.rc" ] && break; sleep 0.5; done
	[ -s "$W/c.rc" ] && pass tui_too_small "\"$msg\"; q quit (exit $(cat "$W/c.rc"))" ||
		fail tui_too_small "q did not quit"
else
	fail tui_too_small "$(screen c | head -3 | tr '\n' '|')"
fi

# --- --attach: a headless run publishes its model; the viewer shows it and
# steers its faults; q detaches and the run goes on
"$C" run profiles/quickstart.yaml -o "$W/d" --set run.iters=600 --set run.rounds=60 > "$W/d.out" 2>&1 &
rp=$!
for _ in $(seq 120); do grep -q "round 2/60" "$W/d.out" && break; sleep 0.5; done
$T new-session -d -s d -x 120 -y 40 "$C tui --attach; echo \$? > $W/d.rc; sleep 3600"
if wait_for d "$P50_ALL" 120 && screen d | grep -q "attached"; then
	$T send-keys -t d ":drop 3%" Enter
	wait_rules '["opcode data drop 3%","opcode data drop 3%","opcode data drop 3%"]'
	$T send-keys -t d q
	for _ in $(seq 60); do [ -s "$W/d.rc" ] && break; sleep 0.5; done
	if [ "$(cat "$W/d.rc" 2>/dev/null)" = 0 ] && kill -0 $rp 2>/dev/null &&
		[ "$r" = '["opcode data drop 3%","opcode data drop 3%","opcode data drop 3%"]' ]; then
		pass tui_attach "the run's arms on screen, :drop 3% reached its rules ($r), q detached (exit 0) and the run went on"
	else
		fail tui_attach "rc=$(cat "$W/d.rc" 2>/dev/null) rules=$r run alive: $(kill -0 $rp 2>/dev/null && echo yes || echo no)"
	fi
else
	fail tui_attach "$(screen d | head -6 | tr '\n' '|')"
fi
kill -INT $rp 2>/dev/null; wait $rp 2>/dev/null

# --- a run to its end: the expectations in the title and one event each;
# one that cannot hold makes the exit 1, and the report has it
start e 120 40 profiles/quickstart.yaml -o "$W/e" --set run.iters=3 --set run.rounds=1 --expect "'rc: p99 < 1us'"
if wait_for e "expectations 6 of 7 held" 240 && screen e | grep -q "FAILED rc: p99 < 1us failed: " &&
	screen e | grep -q "ok rc: wrong == 0 held: 0"; then
	screen e > build/tui-expect.txt
	$T send-keys -t e q
	for _ in $(seq 60); do [ -s "$W/e.rc" ] && break; sleep 0.5; done
	if [ "$(cat "$W/e.rc" 2>/dev/null)" = 1 ] &&
		jq -e '.status == "ok" and .expectations_failed == 1' < "$W/e/report.json" >/dev/null; then
		pass tui_expectations "$(grep -oE 'all rounds done, expectations [0-9]+ of [0-9]+ held' build/tui-expect.txt); $(grep -c 'held: \|failed: ' build/tui-expect.txt) event lines; q: exit 1, report.json agrees"
	else
		fail tui_expectations "rc=$(cat "$W/e.rc" 2>/dev/null) $(jq -c '{status, expectations_failed}' < "$W/e/report.json" 2>&1)"
	fi
else
	fail tui_expectations "$(screen e | grep -E 'rdmactl tui|held|failed' | tr -s ' ' | head -c 600)"
fi
# --- TERM=vt100 LANG=C: plain ASCII, no colour (the same numbers)
ENV="LANG=C LC_ALL=C TERM=vt100" start v 100 30 profiles/quickstart.yaml -o "$W/v" --set run.iters=600 \
	--set run.rounds=60 --set faults=
if wait_for v "$P50_ALL" 120 && wait_for v "p50 trend +[ .:=+*#%@-]+" 30; then
	nonascii=$(screen v | LC_ALL=C grep -c $'[\x80-\xff]')
	cols=$(colours v)
	trend=$(screen v | grep -m1 "p50 trend" | tr -s ' ')
	$T send-keys -t v q
	for _ in $(seq 120); do [ -s "$W/v.rc" ] && break; sleep 0.5; done
	if [ "$nonascii" = 0 ] && [ "$cols" = 0 ]; then
		pass tui_ascii_fallback "vt100, LANG=C: no byte above 127, no colour; $trend"
	else
		fail tui_ascii_fallback "$nonascii non-ASCII lines, $cols colours: $(screen v | grep -m1 'p50 trend')"
	fi
else
	fail tui_ascii_fallback "$(screen v | head -8 | tr '\n' '|')"
	$T send-keys -t v q
fi

# reached the end: a non-zero exit means the suite was cut short
exit 0

