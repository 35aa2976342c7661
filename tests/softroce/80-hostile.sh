#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The agent under a hostile peer (issue 13), through the real control
# protocol (tests/softroce/ctlpeer.py) to a VM agent: an authenticated peer
# cannot point rdma-inject at other files or block it, and a peer without
# the token cannot make the agent start threads or allocate without bound.
set -u
cd "$(dirname "$0")/../.."
. tests/softroce/lib.sh
C=$RDMACTL
TESTS="inject_pin_refused inject_option_after_verb inject_run_refused inject_control_if_refused
       perftest_option_refused perftest_output_no_path conn_cap first_frame_deadline unauth_big_frame serves_after
       lease_renewed_after_flush lease_outlives_no_agent"
suite_up || exit 0
P=tests/softroce/ctlpeer.py
ST=${RDMATB_STATE_DIR:-/run/rdma-testbed}
TOK=$ST/token
port=$("$C" -j testbed status | jq '.nodes[0].agent_port')
vssh() { timeout 30 ssh -F "$ST/ssh/config" rdma-testbed "$@"; }
apid=$(vssh "ps -o pid,args | awk '/[r]dma-agent --dev rxe0 /{print \$1}'" | head -n 1)
status_of() { vssh "awk '/^$1:/{print \$2}' /proc/$apid/status"; }
num() { [[ "${1:-}" =~ ^[0-9]+$ ]]; }
call() { python3 "$P" call "$port" "$TOK" "$@"; }
refused() {	# name args-json pattern: the agent says no, the victim directory is intact
	local r
	r=$(call inject "$2")
	if jq -e --arg p "$3" '.ok == false and (.error | test($p))' <<< "$r" >/dev/null &&
	   vssh test -f /tmp/victim/file; then
		pass "$1" "$(jq -r .error <<< "$r")"
	else
		fail "$1" "$r; victim: $(vssh ls /tmp/victim 2>&1 | tr '\n' ' ')"
	fi
}
vssh 'mkdir -p /tmp/victim && echo keep > /tmp/victim/file'

# --- rdma-inject's --pin through the agent (it used to empty the directory)
refused inject_pin_refused '{"args": ["--pin", "/tmp/victim", "flush"]}' "not allowed"
refused inject_option_after_verb '{"args": ["flush", "--pin", "/tmp/victim"]}' "not allowed"
# --- run blocks until a signal: not for a peer
refused inject_run_refused '{"args": ["run", "dev", "n0", "ingress", "drop", "1%"]}' "not allowed"

# --- no fault on the interface the controller reaches the agent by
ctl_if=$(vssh "ip -o -4 addr show | awk '/198.19.0.15/{print \$2}'" | head -n 1)
refused inject_control_if_refused "{\"args\": [\"add\", \"dev\", \"$ctl_if\", \"ingress\", \"drop\", \"100%\"]}" \
	"control address"
# --- perftest options: none that writes a file as root
r=$(call perftest_start '{"prog": "ib_write_lat", "port": 18515, "args": ["--out_json", "--out_json_file=/tmp/victim/x"]}')
if jq -e '.ok == false and (.error | test("not allowed"))' <<< "$r" >/dev/null && ! vssh test -e /tmp/victim/x; then
	pass perftest_option_refused "$(jq -r .error <<< "$r")"
else
	fail perftest_option_refused "$r"
fi

# --- a perftest job's output has no path: it used to go to
# /tmp/rdma-agent.PID.jobN, opened as root without O_EXCL or O_NOFOLLOW, so
# a symlink planted there overwrote its target. Symlinks planted at every
# such name of every agent, a perftest run through the agents: the target
# is as it was, the symlinks are still symlinks, and the job's output came back
vssh 'echo keep > /tmp/victim/target
      for p in $(ps -o pid,args | awk "/[r]dma-agent --dev/{print \$1}"); do
	for j in 1 2 3 4 5 6 7 8; do ln -sf /tmp/victim/target /tmp/rdma-agent.$p.job$j; done
      done'
planted=$(vssh 'ls /tmp/rdma-agent.*.job* | wc -l')
out=$("$C" perftest ib_write_lat -s 2 -n 200 2>&1); rc=$?
tgt=$(vssh cat /tmp/victim/target)
links=$(vssh 'n=0; for f in /tmp/rdma-agent.*.job*; do [ -L "$f" ] && n=$((n + 1)); done; echo $n')
if [ $rc = 0 ] && [ "$tgt" = keep ] && [ "$links" = "$planted" ] && [ "${planted:-0}" -ge 24 ] &&
   grep -qE '^ 2 +200 ' <<< "$out"; then
	pass perftest_output_no_path "$planted symlinks planted at /tmp/rdma-agent.PID.jobN, ib_write_lat through the agents: $(grep -E '^ 2 +200 ' <<< "$out" | head -n 1 | tr -s ' \t' ' '); target untouched, symlinks kept"
else
	fail perftest_output_no_path "rc=$rc target '$tgt' links $links/$planted: $(head -c 300 <<< "$out")"
fi
vssh 'rm -f /tmp/rdma-agent.*.job*'

# --- 100 connections that never authenticate: the pool for those keeps
# the newest 16 (a new one evicts the oldest; through qemu's user network
# every host connection comes from one address), the agent's threads stay
# within the cap, and the rest are closed at the handshake's deadline (2 s):
# before, 500 such gave 501 threads, for as long as the peer liked
t0=$(status_of Threads)
out=$(mktemp)
python3 "$P" idle "$port" 100 14 > "$out" &
pp=$!
tmax=0
for _ in 1 2 3 4 5 6; do
	sleep 1
	t=$(status_of Threads)
	num "$t" && [ "$t" -gt "$tmax" ] && tmax=$t
done
wait $pp
early=$(sed -n 1p "$out"); total=$(sed -n 2p "$out"); rm -f "$out"
if num "$t0" && num "$early" && [ "$early" -ge 36 ] && [ "$tmax" -le $((t0 + 64)) ]; then
	pass conn_cap "100 idle connections: $early closed at once, threads $t0 -> at most $tmax (16 not authenticated at a time)"
else
	fail conn_cap "early=$early threads $t0 -> $tmax"
fi
if [ "$total" = 100 ]; then
	pass first_frame_deadline "all 100 closed within 14 s of the first (2 s for the handshake); threads now $(status_of Threads)"
else
	fail first_frame_deadline "closed $total of 100 within 14 s"
fi

# --- frames announcing 16 MiB without the token: closed at once, nothing allocated
r0=$(status_of VmRSS)
n=$(python3 "$P" bigframe "$port" 8)
r1=$(status_of VmRSS)
if [ "$n" = 8 ] && num "$r0" && num "$r1" && [ $((r1 - r0)) -lt 8192 ]; then
	pass unauth_big_frame "8 x 16 MiB announced: all closed at once, RSS $r0 -> $r1 kB"
else
	fail unauth_big_frame "closed $n of 8, RSS $r0 -> $r1 kB"
fi

# --- and the agent still serves its controller
if r=$(call hello '{}') && jq -e '.ok' <<< "$r" >/dev/null && "$C" inject list >/dev/null &&
   "$C" -j testbed status | jq -e '.healthy and ([.nodes[] | .agent_reachable] | all)' >/dev/null; then
	pass serves_after "hello, inject list and testbed status answered"
else
	fail serves_after "$r"
fi
# --- a lease lives as long as its connection, also across a flush (which
# makes the maps anew: a renewer that kept the old map renewed nothing, and
# a CI run's storage arm lost its delay rule 6 s in)
lease_add() { echo "{\"args\": [\"-j\", \"add\", \"dev\", \"n1\", \"ingress\", $1], \"lease\": true}"; }
python3 "$P" hold "$port" "$TOK" inject "$(lease_add '"count"')" 4 > /dev/null
"$C" inject flush > /dev/null
out=$(mktemp)
python3 "$P" hold "$port" "$TOK" inject "$(lease_add '"drop", "1%"')" 30 > "$out" &
hp=$!
sleep 10
n=$(vssh "rdma-inject -j list" | jq '.rules | length')
kill $hp 2>/dev/null; wait $hp 2>/dev/null
for _ in $(seq 20); do	# the agent removes it as the connection closes
	gone=$(vssh "rdma-inject -j list" | jq '.rules | length')
	[ "$gone" = 0 ] && break
	sleep 0.5
done
[ "$n" = 1 ] && [ "$gone" = 0 ] && pass lease_renewed_after_flush "after a flush, a leased rule still there 10 s on (lease 6 s), gone with its connection" ||
	fail lease_renewed_after_flush "rules 10 s on: $n; after the connection closed: $gone; $(head -c 200 "$out")"
rm -f "$out"
"$C" inject flush > /dev/null

# --- an agent killed with -9 leaves its leased faults for its lease (6 s)
# at most: they stop matching, and the next rdma-inject removes them (they
# used to stay until someone flushed)
out=$(mktemp)
python3 "$P" hold "$port" "$TOK" inject '{"args": ["-j", "add", "dev", "n1", "ingress", "drop", "1%"], "lease": true}' 30 > "$out" &
hp=$!
for _ in $(seq 50); do [ -s "$out" ] && break; sleep 0.2; done
before=$(vssh "rdma-inject -j list" | jq -c '[.rules[] | {rule, lease_s}]')
vssh "kill -9 $apid"
sleep 2
during=$(vssh "rdma-inject -j list" | jq '.rules | length')
sleep 7
after=$(vssh "rdma-inject -j list" | jq '.rules | length')
filt=$(vssh "tc filter show dev n1 ingress" | grep -c inj_tc)
kill $hp 2>/dev/null; wait $hp 2>/dev/null
if jq -e '.ok' < "$out" >/dev/null && jq -e 'length == 1 and .[0].lease_s == 6' <<< "$before" >/dev/null &&
   [ "$after" = 0 ] && [ "$filt" = 0 ]; then
	pass lease_outlives_no_agent "leased $(jq -c '.[0]' <<< "$before"); agent killed -9: rules 2 s later $during, 9 s later $after, filter gone"
else
	fail lease_outlives_no_agent "reply $(head -c 200 "$out"); before $before during $during after $after filters $filt"
fi
rm -f "$out"
vssh 'rm -rf /tmp/victim'
"$C" testbed down >/dev/null
# reached the end: a non-zero exit means the suite was cut short
exit 0
