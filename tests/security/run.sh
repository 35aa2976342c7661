#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Root-safety (issue 34), without a VM: each test is named after what it
# proves and fails on the code before its fix. The agents are real
# (rdma-agent --no-rdma on this host: the agents-only testbed), the peers
# hostile (tests/softroce/ctlpeer.py). Loopback only.
set -u
cd "$(dirname "$0")/../.."
SUITE=security
. tests/softroce/lib.sh
C=$RDMACTL
P=tests/softroce/ctlpeer.py
TESTS="controller_served_under_unauth_flood report_html_escapes_every_string
       completion_runs_nothing_from_a_profile run_dir_planted_link_refused
       metrics_slow_client_bounded analyze_linear_in_flows pcapng_sections_kept_apart"
plan $TESTS
W=$(mktemp -d /tmp/rtb-security.XXXXXX)
AST=$W/agents-state
trap 'RDMATB_STATE_DIR=$AST "$C" -q testbed down >/dev/null 2>&1; [ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
A() { RDMATB_STATE_DIR=$AST "$C" "$@"; }

# --- 1. Strangers that hold 64 idle connections from each of two
# addresses, reopening each as the agent closes it, never keep the
# controller out: every status in the flood reaches the agent (before: "too
# many control connections from this peer", then refused from both
# addresses). 9: the agent logs them at most once a second a kind
# (before: a line for each)
if A testbed up --backend agents --nodes 3 > "$W/up.out" 2>&1; then
	port=$(jq ".nodes[0].port" < "$AST/testbed.json")
	python3 "$P" flood "$port" 64 12 127.0.0.1 127.0.0.2 > "$W/flood.out" &
	fp=$!
	sleep 2
	ok=0 bad=""
	for i in $(seq 1 10); do
		if A -j testbed status 2> "$W/st.err" | jq -e '.nodes[0].agent_reachable' >/dev/null; then
			ok=$((ok + 1))
		else
			bad="$(head -c 200 "$W/st.err")"
		fi
		sleep 0.5
	done
	wait $fp
	opened=$(cat "$W/flood.out")
	# and the agent's log (tmpfs) says so at most once a second a kind (two
	# kinds: a failed handshake, a dropped connection): 12 s, 2 a second, +4
	nlog=$(grep -c "control:" "$AST/agent0.log" 2>/dev/null)
	if [ $ok = 10 ] && [ "${opened:-0}" -ge 128 ] && [ "${nlog:-99}" -le 28 ]; then
		pass controller_served_under_unauth_flood "10 of 10 statuses reached the agent while strangers opened $opened idle connections from 2 addresses (64 each at a time); $nlog log lines about them"
	else
		fail controller_served_under_unauth_flood "$ok of 10 statuses reached the agent (${bad:-}); strangers opened ${opened:-?}; ${nlog:-?} log lines (at most 28)"
	fi
else
	fail controller_served_under_unauth_flood "testbed up --backend agents: $(tail -n 3 "$W/up.out")"
fi

# --- 7. A run's directory is made as DIR.partial, then renamed. A symlink
# planted at DIR.partial (by another user, in a shared /tmp) was accepted,
# and root wrote the report into the directory it names; now the run
# refuses the name, and the victim stays empty. The agents refuse the
# workload (no RDMA here): the run still writes its (partial) report, which
# is what went through the link
if [ -f "$AST/testbed.json" ]; then
	{ echo "version: 1"; echo "hosts:"; echo "  token_file: $AST/token"; echo "  nodes:"
	  for i in 0 1 2; do echo "    - {name: h$i, agent: \"127.0.0.1:$(jq ".nodes[$i].port" < "$AST/testbed.json")\"}"; done
	  echo "workload: {type: collective}"; echo "arms: [{mode: rc}]"; } > "$W/hosts.yaml"
	mkdir "$W/victim"
	ln -s "$W/victim" "$W/out.partial"
	out=$("$C" run "$W/hosts.yaml" -o "$W/out" 2>&1); rc=$?
	# the same run with nothing planted: the report is written (what the link would have got)
	"$C" run "$W/hosts.yaml" -o "$W/clean" > /dev/null 2>&1
	if [ $rc != 0 ] && [ -z "$(ls -A "$W/victim")" ] && [ -L "$W/out.partial" ] && [ ! -e "$W/out" ] &&
	   grep -q "out.partial exists" <<< "$out" && [ -f "$W/clean/report.json" ]; then
		pass run_dir_planted_link_refused "exit $rc: $(grep -m1 'out.partial exists' <<< "$out" | head -c 120); victim empty (unplanted, the run writes $(ls "$W/clean" | wc -l) files)"
	else
		fail run_dir_planted_link_refused "exit $rc, victim: $(ls "$W/victim" | tr '\n' ' '): $(tail -n 2 <<< "$out")"
	fi
else
	fail run_dir_planted_link_refused "no agents testbed"
fi
A -q testbed down >/dev/null 2>&1

# --- 9. The metrics endpoint serves one client at a time: a client that
# sends its request a byte every 1.5 s held it for as long as it liked (the
# 2 s timeout was per read). Now the whole request has 2 s: a second client
# is answered before the slow one has sent 6 of its 25 bytes (7.5 s; the
# mechanism gives about 2 s, the rest is margin for a loaded host)
mp=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cp=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(umask 077; head -c 24 /dev/urandom | base64 | tr '+/' '-_' > "$W/mtok")
build/bin/rdma-agent --no-rdma --token-file "$W/mtok" --listen "127.0.0.1:$cp" --metrics "127.0.0.1:$mp" \
	--name m0 2> "$W/magent.log" &
ap=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$mp/metrics" && break; sleep 0.1; done
read -r waited slow status < <(python3 tests/security/slowclient.py "$mp")
kill $ap 2>/dev/null; wait $ap 2>/dev/null
if [ "$status" = "HTTP/1.1 200 OK" ] && [ "${slow:-99}" -lt 6 ]; then
	pass metrics_slow_client_bounded "the second client waited $waited s, answered ($status) when the slow one had sent $slow of 25 bytes"
else
	fail metrics_slow_client_bounded "the second client waited ${waited:-?} s ($status); the slow one had sent ${slow:-?} bytes"
fi

# --- 9. rdmactl analyze paired every flow with every other (80k QPs in a
# 7 MB capture: 5.6 s; a crafted capture could hold it for hours): 10 times
# the QPs must take well under 10x10 times as long. The best of 3 runs each,
# as a ratio in one run (a linear analysis gives about 10, a quadratic 100)
python3 bench/trace_gen.py 2000 "$W/t2k.pcapng" && python3 bench/trace_gen.py 20000 "$W/t20k.pcapng"
best_of3() {
	local b=999 t0 t
	for _ in 1 2 3; do
		t0=$EPOCHREALTIME
		"$C" -j analyze "$1" > "$W/an.json" 2>&1 || { echo 999; return; }
		t=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.4f", b - a}')
		b=$(awk -v a="$b" -v c="$t" 'BEGIN{print (c < a ? c : a)}')
	done
	echo "$b"
}
ts=$(best_of3 "$W/t2k.pcapng"); tl=$(best_of3 "$W/t20k.pcapng")
pk=$(jq '[.captures[].packets] | add' < "$W/an.json" 2>/dev/null)
if [ "$pk" = 200000 ] && awk -v s="$ts" -v l="$tl" 'BEGIN{exit !(l / s < 30)}'; then
	pass analyze_linear_in_flows "2,000 QPs ${ts} s, 20,000 QPs (200,000 packets) ${tl} s: x$(awk -v s="$ts" -v l="$tl" 'BEGIN{printf "%.1f", l / s}') for 10x the QPs"
else
	fail analyze_linear_in_flows "2,000 QPs ${ts} s, 20,000 QPs ${tl} s ($pk packets): x$(awk -v s="$ts" -v l="$tl" 'BEGIN{printf "%.1f", l / s}')"
fi

# --- 9. A pcapng file of two sections (two captures joined: cat a b), whose
# interface ids both start at 0: each section's packets stay with its own
# interfaces. They were read by the last section's ids: 4 captures of twice
# the packets, half of them "resent", where there are 8
python3 - "$W/two.pcapng" <<'PY'
import struct, sys
d = open("tests/fuzz/corpus/trace/rc-pingpong-1pct.pcapng", "rb").read()
out, at = bytearray(), 0
while at < len(d):	# the same capture again, its interfaces renamed n -> m
    t, l = struct.unpack_from("<II", d, at)
    b = bytearray(d[at:at + l])
    out += b.replace(b"n0", b"m0").replace(b"n1", b"m1") if t == 1 else b
    at += l
open(sys.argv[1], "wb").write(d + bytes(out))
PY
got=$("$C" -j analyze "$W/two.pcapng" 2>&1 | jq -c '[.captures[] | "\(.dev) \(.dir) \(.packets) \(.resent_packets)"]' 2>&1)
if [ "$got" = '["n0 ingress 30 0","n0 egress 30 0","n1 ingress 30 0","n1 egress 30 0","m0 ingress 30 0","m0 egress 30 0","m1 ingress 30 0","m1 egress 30 0"]' ]; then
	pass pcapng_sections_kept_apart "8 captures of 30 packets, none resent: $got"
else
	fail pcapng_sections_kept_apart "$got"
fi

# --- 5. A report from elsewhere, every string of it ending in live HTML
# (an <img onerror>, a </script>): report.html and the comparison page print
# none of it as markup (vs_first_arm.method was printed with %s)
ok=1 msg=""
for n in collective train kv; do
	mkdir -p "$W/html/$n" "$W/html/$n.g"
	cp "tests/unit/golden/$n.report.json" "$W/html/$n.g/report.json"
	k=$(python3 tests/security/poison.py "tests/unit/golden/$n.report.json" "$W/html/$n/report.json")
	if "$C" report "$W/html/$n" --format html > "$W/html/$n.html" 2> "$W/html/$n.err" &&
	   "$C" report "$W/html/$n" "$W/html/$n.g" --format html > "$W/html/$n.cmp.html" 2>> "$W/html/$n.err"; then
		live=$(cat "$W/html/$n.html" "$W/html/$n.cmp.html" | grep -c -e '<img' -e '<script>alert')
		[ "$live" = 0 ] || ok=0
		msg+="$n: $k strings poisoned, $live live; "
	else
		ok=0 msg+="$n: render failed: $(head -c 200 "$W/html/$n.err"); "
	fi
done
[ $ok = 1 ] && pass report_html_escapes_every_string "$msg" || fail report_html_escapes_every_string "$msg"

# --- 6. Tab after --set offers a profile's keys with their values: a
# description of $(touch FILE) and a backquoted fault rule name ran as the
# user pressing Tab (compgen -W expands its word list); now nothing runs and
# each value comes back quoted for the command line, whole
sed -e "s|^description:.*|description: \"\$(touch $W/pwned-desc) and \`touch $W/pwned-bq\`\"|" \
	profiles/quickstart.yaml > "$W/evil.yaml"
out=$(bash -c '
	export PATH="$PWD/build/bin:$PATH"
	. scripts/completion.bash
	COMP_WORDS=(rdmactl run "$1" --set "$2"); COMP_CWORD=4; COMPREPLY=()
	_rtb_rdmactl rdmactl "$2" --set
	printf "%s\n" "${COMPREPLY[@]}"' _ "$W/evil.yaml" desc 2>&1)
got=$(eval "printf '%s' $out" 2>/dev/null)
if [ ! -e "$W/pwned-desc" ] && [ ! -e "$W/pwned-bq" ] && [ "$(wc -l <<< "$out")" = 1 ] &&
   [ "$got" = "description=\$(touch $W/pwned-desc) and \`touch $W/pwned-bq\`" ]; then
	pass completion_runs_nothing_from_a_profile "offered: $out (nothing ran; read back whole)"
else
	fail completion_runs_nothing_from_a_profile "ran: $(ls "$W" | grep pwned | tr '\n' ' '); offered: $out"
fi
exit 0
