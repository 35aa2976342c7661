#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end on real SoftRoCE: testbed up (3 nodes: by default a kernel a
# node) / status / the agents' RC WRITE latency / perftest on the same
# testbed / bad inputs / down; then one shared kernel, which refuses node
# faults.
set -u
cd "$(dirname "$0")/../.."
. tests/softroce/lib.sh
TESTS="up_bad_nodes up_bad_backend up_bad_mtu up_per_node_not_host unknown_verb unknown_object down_foreign_dir up status_json status_text
       second_up p2p_lat p2p_lat_pair2 p2p_bad_inputs no_leaked_arms perftest
       exec_devinfo exec_exit_status exec_signal exec_env exec_stdin exec_bad_input cp_user_program
       cp_strips_setuid_refuses_links down interrupt_up_cleans up_cached up_shared node_fault_needs_per_node
       nic_reset_shared up_progress_image"
plan $TESTS

# bad arguments never touch a VM: checked first
bad() {	# name expected-rc pattern cmd...
	local n=$1 want=$2 pat=$3 out rc; shift 3
	out=$("$@" 2>&1); rc=$?
	if [ "$rc" = "$want" ] && grep -q -- "$pat" <<< "$out"; then pass "$n" "exit $rc"
	else fail "$n" "exit $rc, want $want and '$pat' in: $(head -c 200 <<< "$out")"; fi
}
bad up_bad_nodes 2 "--nodes '0'" "$RDMACTL" testbed up --nodes 0
bad up_bad_backend 2 "expected auto|vm|host" "$RDMACTL" testbed up --backend qemu
bad up_bad_mtu 2 "--mtu '1500'" "$RDMACTL" testbed up --mtu 1500
bad up_per_node_not_host 2 "per-node is the vm backend's" "$RDMACTL" testbed up --topology per-node --backend host
bad unknown_verb 2 "unknown verb 'upp'" "$RDMACTL" testbed upp
bad unknown_object 2 "unknown object" "$RDMACTL" testbedd up
# a state directory that holds no testbed (RDMATB_STATE_DIR set to some
# directory of the user's): down removes nothing of what is in it
fd=$(mktemp -d /tmp/rtb-foreign.XXXXXX); echo keep > "$fd/notes.txt"; mkdir "$fd/sub"
out=$(RDMATB_STATE_DIR=$fd "$RDMACTL" testbed down 2>&1); rc=$?
[ $rc = 0 ] && [ -f "$fd/notes.txt" ] && [ -d "$fd/sub" ] &&
	pass down_foreign_dir "exit 0 ($out), the directory's files kept" ||
	fail down_foreign_dir "rc=$rc $out; left: $(ls "$fd" 2>&1 | tr '\n' ' ')"
rm -rf "$fd"

why=$(vm_unavailable)
if [ -n "$why" ]; then
	for t in up status_json status_text second_up p2p_lat p2p_lat_pair2 p2p_bad_inputs \
		 no_leaked_arms perftest exec_devinfo exec_exit_status exec_signal exec_env exec_stdin \
		 exec_bad_input cp_user_program cp_strips_setuid_refuses_links down interrupt_up_cleans \
		 up_cached up_shared node_fault_needs_per_node nic_reset_shared up_progress_image; do
		skip "$t" "$why"; done
	exit 0
fi
W_TS=$(mktemp /tmp/rtb-ts.XXXXXX)
trap 'tb_cleanup; rm -f "$W_TS"' EXIT
tb_cleanup

# no --topology: 3 nodes are 3 VMs, a kernel each (auto: per-node up to 4)
if out=$("$RDMACTL" testbed up --nodes 3 2>&1) && grep -q "a kernel per node" <<< "$out" &&
	grep -q "topology auto: per-node" <<< "$out"; then
	pass up "$(tail -n 1 <<< "$out")"
else
	fail up "$(tail -n 30 <<< "$out" | tr '\n' '|')"
	exit 0
fi
note "$(tail -n 1 <<< "$out")"

st=$("$RDMACTL" -j testbed status); rc=$?
if [ $rc = 0 ] && jq -e '
	.up and .healthy and .topology == "per-node" and (.nodes | length == 3) and
	([.nodes[].qemu_pid] | unique | length == 3) and
	([.nodes[] | .state == "ACTIVE" and .agent_reachable and .active_mtu == 1024] | all) and
	([.nodes | to_entries[] | .value.gid == "::ffff:198.18.0.\(.key + 1)"] | all) and
	([.nodes[] | .hw_counters | index("sent_pkts") != null] | all)' <<< "$st" >/dev/null; then
	pass status_json "$(jq -c '[.nodes[] | "\(.name)=\(.dev)/\(.state)/\(.active_mtu)/\(.gid)"]' <<< "$st")"
else
	fail status_json "rc=$rc $(head -c 300 <<< "$st")"
fi
txt=$("$RDMACTL" testbed status)
if [ "$(grep -c ' ACTIVE .* yes$' <<< "$txt")" = 3 ]; then pass status_text; else fail status_text "$txt"; fi

out=$("$RDMACTL" testbed up --nodes 2 2>&1); rc=$?
if [ $rc != 0 ] && grep -q 'already up' <<< "$out" && "$RDMACTL" -q testbed status >/dev/null; then
	pass second_up "exit $rc: $out"
else
	fail second_up "exit $rc: $out"
fi

lat=$("$RDMACTL" -j p2p lat --iters 2000 --size 2); rc=$?
if [ $rc = 0 ] && jq -e '(.lat_ns | .count == 2000 and .min_ns > 0 and .min_ns <= .p50_ns and
	.p50_ns <= .p99_ns and .p99_ns <= .p99_9_ns and .p99_9_ns <= .max_ns) and .client_cpu_ns > 0 and
	.client_hw_counters_delta.sent_pkts >= 2000 and
	(.intervals | map(.lat_ns.count) | add) == 2000' <<< "$lat" >/dev/null; then
	pass p2p_lat "$(jq -r '.lat_ns | "p50 \(.p50_ns/1000) us, p99 \(.p99_ns/1000) us, max \(.max_ns/1000) us"' <<< "$lat")"
else
	fail p2p_lat "rc=$rc $(head -c 300 <<< "$lat")"
fi
out=$("$RDMACTL" p2p lat --client node2 --server node0 --size 4k --iters 300 2>&1); rc=$?
if [ $rc = 0 ] && grep -qE '^ 4096 +300 ' <<< "$out"; then pass p2p_lat_pair2 "node2 -> node0, 4 KiB"
else fail p2p_lat_pair2 "rc=$rc $out"; fi

ok=1
for args in "--size 0:size" "--iterz 5:did you mean 'iters'" "--client node7:unknown node 'node7'" \
	    "--server node0:same node" "--op fetch:unknown value 'fetch'" "--size 2M:out of range" \
	    "--qp uc --op read:UC has no read" "--qp ud:UD has only send" \
	    "--qp ud --op send --size 4k:one MTU at most"; do
	a=${args%%:*}; pat=${args#*:}
	# shellcheck disable=SC2086
	out=$("$RDMACTL" p2p lat $a 2>&1); rc=$?
	if [ $rc = 0 ] || ! grep -q -- "$pat" <<< "$out"; then ok=0; note "p2p lat $a: exit $rc: $out"; fi
done
[ $ok = 1 ] && pass p2p_bad_inputs "9 bad option sets rejected with a message" || fail p2p_bad_inputs

arms=$("$RDMACTL" -j testbed status | jq '[.nodes[].agent_reachable] | all')
leak=$(for i in 0 1 2; do "$RDMACTL" -j p2p lat --client node$i --server node$(( (i + 1) % 3 )) --iters 10 >/dev/null 2>&1; done
       python3 - "$st" <<'PY'
import json, sys, os
sys.path.insert(0, "tests/softroce")
from ctlpeer import Session, token_of
st = json.loads(sys.argv[1])
tok = token_of(os.environ.get("RDMATB_STATE_DIR", "/run/rdma-testbed") + "/token")
total = 0
for n in st["nodes"]:
    s = Session(n["agent_port"], tok, host=n["agent_host"], timeout=5)
    r = s.call("hello")
    s.close()
    total += r["result"]["arms"] + r["result"]["perftest_jobs"]
print(total)
PY
)
if [ "$arms" = true ] && [ "$leak" = 0 ]; then pass no_leaked_arms "agents healthy, 0 arms/jobs left after runs and failures"
else fail no_leaked_arms "reachable=$arms arms_left=$leak"; fi

out=$("$RDMACTL" perftest ib_write_lat -s 2 -n 500 2>&1); rc=$?
if [ $rc = 0 ] && grep -qE '^ 2 +500 ' <<< "$out"; then
	pass perftest "ib_write_lat: $(grep -E '^ 2 +500 ' <<< "$out" | head -1 | tr -s ' \t' ' ')"
else
	fail perftest "rc=$rc $(tail -n 5 <<< "$out" | tr '\n' '|')"
fi

# --- testbed exec: a command at a node, its status and streams passed through
out=$("$RDMACTL" testbed exec node1 -- ibv_devinfo -d rxe1 2>&1); rc=$?
if [ $rc = 0 ] && grep -q "hca_id:.*rxe1" <<< "$out" && grep -q PORT_ACTIVE <<< "$out"; then
	pass exec_devinfo "$(grep -E 'hca_id|state:' <<< "$out" | tr -s ' \t' ' ' | tr '\n' ';')"
else
	fail exec_devinfo "rc=$rc $(head -c 300 <<< "$out")"
fi
"$RDMACTL" testbed exec node0 -- sh -c 'exit 7' >/dev/null 2>&1; r1=$?
"$RDMACTL" testbed exec node2 -- false >/dev/null 2>&1; r2=$?
"$RDMACTL" testbed exec node0 -- true >/dev/null 2>&1; r3=$?
[ $r1 = 7 ] && [ $r2 = 1 ] && [ $r3 = 0 ] && pass exec_exit_status "exit 7, false 1, true 0" ||
	fail exec_exit_status "got $r1 $r2 $r3, want 7 1 0"
"$RDMACTL" testbed exec node0 -- sh -c 'kill -TERM $$' >/dev/null 2>&1; r1=$?
"$RDMACTL" testbed exec node0 -- sh -c 'kill -KILL $$' >/dev/null 2>&1; r2=$?
[ $r1 = 143 ] && [ $r2 = 137 ] && pass exec_signal "SIGTERM 143, SIGKILL 137" ||
	fail exec_signal "got $r1 $r2, want 143 137"
out=$("$RDMACTL" testbed exec node2 --env MY_VAR="a b'c" -- sh -c 'echo "$RDMATB_NODE $RDMATB_DEV $RDMATB_PORT $RDMATB_GID_INDEX $RDMATB_IP $RDMATB_NODES [$RDMATB_PEERS] $RDMATB_NODE0_IP $RDMATB_NODE1_DEV [$MY_VAR] $1" ' sh "x  y" 2>&1); rc=$?
want="node2 rxe2 1 1 198.18.0.3 3 [198.18.0.1 198.18.0.2] 198.18.0.1 rxe1 [a b'c] x  y"
[ $rc = 0 ] && [ "$out" = "$want" ] && pass exec_env "$out" || fail exec_env "rc=$rc got '$out' want '$want'"
out=$(printf 'one\ntwo\n' | "$RDMACTL" testbed exec node1 -- wc -l 2>&1); rc=$?
err=$("$RDMACTL" testbed exec node1 -- sh -c 'echo to-stderr >&2' 2>&1 >/dev/null)
[ $rc = 0 ] && [ "$(tr -d ' ' <<< "$out")" = 2 ] && [ "$err" = to-stderr ] &&
	pass exec_stdin "stdin 2 lines counted there, stderr passed through" ||
	fail exec_stdin "rc=$rc out='$out' err='$err'"
bad=""
for a in "node9 -- true" "node1" "node1 --env 1X=2 -- true" "node1 --env NOEQUALS -- true" "node1 -- /no/such/cmd"; do
	# shellcheck disable=SC2086
	out=$("$RDMACTL" testbed exec $a 2>&1); rc=$?
	case "$a" in *no/such*) want=127 ;; *) want=2 ;; esac
	[ $rc = $want ] && [ -n "$out" ] || bad="$bad [$a: exit $rc want $want: $out]"
done
for a in "/etc/hostname" "/nonexistent node1:/root/" "/etc/hostname node1:relative" "/etc node1:/root/"; do
	# shellcheck disable=SC2086
	out=$("$RDMACTL" testbed cp $a 2>&1); rc=$?
	[ $rc != 0 ] && [ -n "$out" ] || bad="$bad [cp $a: exit $rc: $out]"
done
[ -z "$bad" ] && pass exec_bad_input "5 bad execs and 4 bad copies refused with messages" ||
	fail exec_bad_input "$bad"
# a user's verbs program built here, copied to two nodes (a filesystem a
# node: node1 never got it), run at both
ub=$(mktemp -d /tmp/rtb-user.XXXXXX)
if cc -O2 -o "$ub/portinfo" examples/exec/portinfo.c -libverbs 2>"$ub/cc.err"; then
	"$RDMACTL" testbed cp "$ub/portinfo" node0:/root/bin/ 2>&1 &&
		"$RDMACTL" testbed cp "$ub/portinfo" node2:/root/bin/ 2>&1; r1=$?
	"$RDMACTL" testbed exec node1 -- test -e /root/bin/portinfo 2>&1; r4=$?
	o1=$("$RDMACTL" testbed exec node0 -- /root/bin/portinfo 2>&1); r2=$?
	o2=$("$RDMACTL" testbed exec node2 -- /root/bin/portinfo 2>&1); r3=$?
	[ $r1 = 0 ] && [ $r2 = 0 ] && [ $r3 = 0 ] && [ $r4 = 1 ] && [ "$o1" = "rxe0 port 1 active mtu 1024" ] &&
		[ "$o2" = "rxe2 port 1 active mtu 1024" ] &&
		pass cp_user_program "$o1 / $o2; not on node1" ||
		fail cp_user_program "cp $r1, exec $r2 '$o1', $r3 '$o2', on node1: test -e exit $r4"
else
	fail cp_user_program "cc: $(head -c 200 "$ub/cc.err")"
fi
# issue 34: a nobody-owned mode 4755 file arrived root-owned and setuid
# (stat, then open and chmod by name); now the bits go and a link is refused
install -o nobody -m 4755 /bin/true "$ub/suid"
ln -s /etc/shadow "$ub/link"
"$RDMACTL" testbed cp "$ub/suid" node0:/root/suid > "$ub/cp.out" 2>&1; r1=$?
m=$("$RDMACTL" testbed exec node0 -- stat -c %a /root/suid 2>&1)
"$RDMACTL" testbed cp "$ub/link" node0:/root/link > "$ub/cp2.out" 2>&1; r2=$?
l=$("$RDMACTL" testbed exec node0 -- sh -c 'test -e /root/link && echo there || echo absent' 2>&1)
if [ $r1 = 0 ] && [ "$m" = 755 ] && [ $r2 != 0 ] && grep -q "symbolic link" "$ub/cp2.out" && [ "$l" = absent ]; then
	pass cp_strips_setuid_refuses_links "4755 arrived as $m ($(head -c 90 "$ub/cp.out")); a link: exit $r2, $(head -c 80 "$ub/cp2.out")"
else
	fail cp_strips_setuid_refuses_links "cp $r1, mode '$m'; link cp $r2 ($(head -c 120 "$ub/cp2.out")), there: $l"
fi
rm -rf "$ub"

out=$("$RDMACTL" testbed down 2>&1); rc=$?
if [ $rc = 0 ] && no_leftovers && ! "$RDMACTL" -q testbed status >/dev/null 2>&1; then pass down "$out"
else fail down "rc=$rc $out"; fi

"$RDMACTL" testbed up --nodes 2 > /tmp/rtb-int.out 2>&1 &
p=$!
sleep 4
kill -INT $p
wait $p; rc=$?
if [ $rc = 130 ] && grep -q interrupted /tmp/rtb-int.out && no_leftovers; then
	pass interrupt_up_cleans "Ctrl-C during up: exit 130, no qemu, no state"
else
	fail interrupt_up_cleans "rc=$rc $(tr '\n' '|' < /tmp/rtb-int.out)"
fi
rm -f /tmp/rtb-int.out

# on a terminal (script(1)), the wait for the agents has a progress line
# with an ETA from the last up of 3 nodes (the first up of this suite)
script -qec "$RDMACTL testbed up --nodes 3" "$W_TS" >/dev/null 2>&1; rc=$?
out=$(tr '\r' '\n' < "$W_TS")
if [ $rc = 0 ] && grep -qE '^  waiting for the agents: [0-3]/3 ready, [0-9]+ s, ETA [0-9]+ s' <<< "$out"; then
	pass up_cached "$(grep '^testbed up' <<< "$out" | tail -n 1); on a terminal: $(grep -m1 -E 'ETA' <<< "$out" | sed 's/ *$//')"
else
	fail up_cached "rc=$rc $(tail -n 20 <<< "$out" | tr '\n' '|')"
fi
"$RDMACTL" testbed down >/dev/null 2>&1
no_leftovers || fail down_final "leftovers after the second down"

# --- one shared kernel, asked for: one qemu holds every node
out=$("$RDMACTL" testbed up --nodes 2 --topology shared 2>&1); rc=$?
st=$("$RDMACTL" -j testbed status 2>&1)
if [ $rc = 0 ] && grep -q "one shared kernel" <<< "$out" &&
	jq -e '.topology == "shared" and .healthy and (.nodes | length == 2) and .qemu_pid > 0' <<< "$st" >/dev/null; then
	pass up_shared "$(tail -n 1 <<< "$out")"
else
	fail up_shared "rc=$rc $(tail -n 3 <<< "$out" | tr '\n' '|') $(head -c 200 <<< "$st")"
fi
# on it, no node can crash, freeze or reboot alone
out=$("$RDMACTL" testbed crash node1 2>&1); rc=$?
if [ $rc = 2 ] && grep -q "needs a kernel a node" <<< "$out" && "$RDMACTL" -q testbed status >/dev/null; then
	pass node_fault_needs_per_node "exit 2: $out"
else
	fail node_fault_needs_per_node "exit $rc: $out"
fi
# but a nic reset is the device's: node1's rxe1 goes and comes back, node0 untouched
out=$("$RDMACTL" testbed nic-reset node1 2>&1); rc=$?
p2p=$("$RDMACTL" -q p2p lat --client node1 --server node0 --iters 200 2>&1); r2=$?
if [ $rc = 0 ] && grep -qE "^node1: rxe1 removed and added again on [a-z0-9]+ in [0-9]+ ms" <<< "$out" && [ $r2 = 0 ]; then
	pass nic_reset_shared "$out; RC node1 -> node0 after it"
else
	fail nic_reset_shared "exit $rc: $out; p2p exit $r2: $(tail -n 2 <<< "$p2p" | tr '\n' '|')"
fi
"$RDMACTL" testbed down >/dev/null 2>&1
no_leftovers || fail down_final "leftovers after the shared kernel's down"

# the image built from a cache without a base layer shows "building the VM
# image, N s, ETA M s", the ETA from the last base build the cache keeps
# (set here to 30 s). The unpacked kernel and packages are the cache's own,
# linked: their download is not what this checks, and took 15 s of it
C2=$(mktemp -d /tmp/rtb-cache.XXXXXX)
CD=${RDMATB_CACHE_DIR:-/var/cache/rdma-testbed}
for d in "$CD"/kernel-* "$CD"/nfs-* "$CD"/openssh-server-* "$CD"/slurm*-[0-9]*; do
	[ -d "$d" ] && cp -al "$d" "$C2/" 2>/dev/null
done
echo 30.0 > "$C2/image-base.s"
RDMATB_CACHE_DIR=$C2 script -qec "$RDMACTL testbed up --nodes 2" "$W_TS" >/dev/null 2>&1; rc=$?
out=$(tr '\r' '\n' < "$W_TS")
RDMATB_CACHE_DIR=$C2 "$RDMACTL" testbed down >/dev/null 2>&1
built=$(cat "$C2/image-base.s" 2>/dev/null)
if [ $rc = 0 ] && grep -qE '^  building the VM image, [0-9]+ s, ETA [0-9]+ s' <<< "$out" &&
	[ "$built" != 30.0 ] && [ -n "$built" ]; then
	pass up_progress_image "$(grep -E 'building the VM image' <<< "$out" | sed -n '1p;$p' | sed 's/ *$//' | paste -sd'|'); base built in $built s (kept as the next ETA)"
else
	fail up_progress_image "rc=$rc built=$built $(tail -n 20 <<< "$out" | tr '\n' '|')"
fi
rm -rf "$C2"
no_leftovers || fail down_final "leftovers after the up from an empty cache"
# reached the end: a non-zero exit means the suite was cut short
exit 0
