#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs INSIDE a test VM (a kernel with rdma_rxe): the host backend of
# `rdmactl testbed` for real -- topology.sh with the rtb prefix, local
# agents, status, a latency run, down -- and checks that down restores
# the links, rules, rxe devices and sysctls exactly.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export RDMATB_LIBEXEC=/usr/libexec/rdma-testbed RDMATB_BIN=/usr/bin
S=host-backend
pass() { echo "PASS: 20-$S/$1${2:+ ($2)}"; }
fail() { echo "FAIL: 20-$S/$1${2:+ ($2)}"; }
RDMA=$(ls /usr/sbin/rdma /usr/bin/rdma /sbin/rdma /bin/rdma 2>/dev/null | head -n 1)
[ -n "$RDMA" ] || { fail down_restores "no rdma tool in the image"; exit 0; }
agents() { for p in /proc/[0-9]*; do grep -qx rdma-agent "$p/comm" 2>/dev/null && echo "${p#/proc/}"; done; }
snapshot() {
	/usr/sbin/ip rule show
	/usr/sbin/ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//'
	"$RDMA" link show
	cat /proc/sys/net/ipv4/conf/all/rp_filter /proc/sys/net/ipv4/conf/all/accept_local
}
snapshot > /tmp/before

out=$(rdmactl testbed up --backend auto --nodes 3 2>&1); rc=$?
echo "$out"
case "$out" in *"backend host"*) ;; *) rc=99 ;; esac
[ $rc = 0 ] && pass up_auto_picks_host "$(echo "$out" | tail -n 1)" || fail up_auto_picks_host "rc=$rc"

st=$(rdmactl testbed status 2>&1); rc=$?
echo "$st"
n=$(echo "$st" | grep -cE '^node[0-2] +rtbrxe[0-2] +ACTIVE +1024 +::ffff:198\.18\.0\.[1-3] .* yes$')
[ $rc = 0 ] && [ "$n" = 3 ] && pass status "3 rtbrxe nodes ACTIVE, agents reachable" || fail status "rc=$rc rows=$n"

/usr/sbin/ip rule show
out=$(rdmactl -j p2p lat --iters 500 --client node1 --server node2 2>&1); rc=$?
echo "$out" | head -c 400; echo
case "$out" in *'"count": 500'*) ;; *) rc=98 ;; esac
[ $rc = 0 ] && pass p2p_lat "node1 -> node2 over rtbbr0" || fail p2p_lat "rc=$rc"

# kill -9 of one agent mid-collective: rdmactl names the node fast, the others let go
rdmactl collective allreduce --size 256k --iters 100000 > /tmp/coll.out 2>&1 &
cp=$!
n=0
while [ $n -lt 100 ]; do
	[ "$(rdmactl -j testbed status | grep -c '"arms": 1')" = 3 ] && break
	sleep 0.1; n=$((n + 1))
done
victim=$(rdmactl -j testbed status | grep -A 30 '"name": "node1"' | grep -m1 '"agent_pid"' | tr -dc 0-9)
read -r t0 _ < /proc/uptime
kill -9 "$victim"
wait $cp; rc=$?
read -r t1 _ < /proc/uptime
dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
msg=$(grep -m1 'rdmactl:' /tmp/coll.out)
sleep 1
left=$(rdmactl -j testbed status | grep -o '"arms": [0-9]*' | tr -dc 0-9)
if [ $rc != 0 ] && echo "$msg" | grep -q node1 && awk -v d="$dt" 'BEGIN{exit !(d < 5)}' && [ "$left" = "00" ]; then
	pass agent_killed "node1's agent killed -9: rdmactl failed after ${dt}s naming it ($msg); node0/node2 arms released"
else
	fail agent_killed "rc=$rc after ${dt}s msg='$msg' arms left on the others: '$left'"
fi

# testbed exec / cp on the host backend: the command runs here, with the
# node's facts (node1's agent, killed above, leaves its address empty)
out=$(rdmactl testbed exec node2 -- sh -c 'echo "$RDMATB_DEV $RDMATB_IP $RDMATB_PEERS [$RDMATB_NODE1_IP]"; exit 5' 2>/dev/null); rc=$?
echo "exec: rc=$rc $out"
rdmactl testbed exec node0 -- sh -c 'kill -TERM $$'; r2=$?
echo x > /tmp/cpsrc; chmod 0751 /tmp/cpsrc
rdmactl testbed cp /tmp/cpsrc node2:/tmp/cpdir/ 2>&1; r3=$?
mkdir -p /tmp/cpdir; rdmactl testbed cp /tmp/cpsrc node2:/tmp/cpdir/ 2>&1; r4=$?
m=$(stat -c %a /tmp/cpdir/cpsrc 2>/dev/null)
if [ $rc = 5 ] && [ "$out" = "rtbrxe2 198.18.0.3 198.18.0.1 []" ] && [ $r2 = 143 ] && [ $r3 != 0 ] &&
	[ $r4 = 0 ] && [ "$m" = 751 ]; then
	pass exec_cp "exec: '$out' exit 5, SIGTERM 143; cp into a missing directory refused, into one: mode $m"
else
	fail exec_cp "exec rc=$rc '$out', signal $r2, cp $r3/$r4 mode '$m'"
fi

# agents that join (rdma-agent --join): no inbound port; rdmactl run with
# hosts.join listens, waits for them by name, and runs a p2p latency test
# over their connections; they dial again for the next run. One with the
# wrong token never joins: named at the deadline
tr -dc a-z0-9 < /dev/urandom | head -c 32 > /tmp/jtok; chmod 600 /tmp/jtok
tr -dc a-z0-9 < /dev/urandom | head -c 32 > /tmp/jbad; chmod 600 /tmp/jbad
# NAME DEV PORT TOKEN: an agent that joins 127.0.0.1:PORT, in the
# background ($! its pid), its output in /tmp/NAME.log
join_agent() { rdma-agent --dev "$2" --name "$1" --join "127.0.0.1:$3" --token-file "$4" > "/tmp/$1.log" 2>&1 & }
join_agent j0 rtbrxe0 47500 /tmp/jtok; j0=$!
join_agent j1 rtbrxe2 47500 /tmp/jtok; j1=$!
join_agent j2 rtbrxe2 47500 /tmp/jbad; j2=$!
cat > /tmp/join.yaml <<'EOF2'
version: 1
name: joined
hosts:
  token_file: /tmp/jtok
  join: {listen: "127.0.0.1:47500", wait: 30s}
  nodes:
    - {name: j0}
    - {name: j1}
workload:
  type: p2p
  options: {test: lat, op: write, size: 64}
arms:
  - mode: rc
run: {iters: 200}
EOF2
sed 's/name: j1/name: j2/; s/wait: 30s/wait: 3s/' /tmp/join.yaml > /tmp/join-bad.yaml
rdmactl run /tmp/join.yaml -o /tmp/jr1 > /tmp/jr1.out 2>&1; r1=$?
rdmactl run /tmp/join.yaml -o /tmp/jr2 > /tmp/jr2.out 2>&1; r2=$?
rdmactl run /tmp/join-bad.yaml -o /tmp/jr3 > /tmp/jr3.out 2>&1; r3=$?
c1=$(grep -o '"count": [0-9]*' /tmp/jr1/report.json 2>/dev/null | head -n 1 | tr -dc 0-9)
c2=$(grep -o '"count": [0-9]*' /tmp/jr2/report.json 2>/dev/null | head -n 1 | tr -dc 0-9)
miss=$(grep -o 'did not join 127.0.0.1:47500 within 3 s: j2' /tmp/jr3.out)
kill $j0 $j1 $j2 2>/dev/null; wait $j0 $j1 $j2 2>/dev/null
if [ $r1 = 0 ] && [ $r2 = 0 ] && [ "$c1" = 200 ] && [ "$c2" = 200 ] && [ $r3 != 0 ] && [ -n "$miss" ] &&
	grep -q 'j0: joined 127.0.0.1:47500' /tmp/j0.log && ! grep -q 'serving .* on ' /tmp/j0.log; then
	pass join_run "two runs over joined agents j0 (rtbrxe0) and j1 (rtbrxe2), which listen on no port: 200 WRITE round trips each; the agent with the wrong token: '$miss' (exit $r3)"
else
	fail join_run "runs $r1 $r2 counts '$c1' '$c2'; bad: $r3 '$miss'; $(tail -n 3 /tmp/jr1.out | tr '\n' '|') j0: $(tr '\n' '|' < /tmp/j0.log | tail -c 300)"
fi

# rdmactl doctor over three joined agents on rxe: it waits for them, and
# each pair of the three (one a round, the odd node sitting out) runs
# its latency and bandwidth tests and counts its packets; nothing named
join_agent d0 rtbrxe0 47501 /tmp/jtok; d0=$!
join_agent d1 rtbrxe1 47501 /tmp/jtok; d1=$!
join_agent d2 rtbrxe2 47501 /tmp/jtok; d2=$!
rdmactl -j doctor --listen 127.0.0.1:47501 --token-file /tmp/jtok --expect 3 --wait 30s --iters 2000 \
	--bw-iters 50 > /tmp/doc.json 2> /tmp/doc.err; rc=$?
kill $d0 $d1 $d2 2>/dev/null; wait $d0 $d1 $d2 2>/dev/null
# and a profile's hosts: two agents by address (dial-in)
rdma-agent --dev rtbrxe0 --name h0 --listen 127.0.0.1:47510 --token-file /tmp/jtok > /tmp/h0.log 2>&1 &
h0=$!
rdma-agent --dev rtbrxe1 --name h1 --listen 127.0.0.1:47511 --token-file /tmp/jtok > /tmp/h1.log 2>&1 &
h1=$!
cat > /tmp/hosts.yaml <<'EOF2'
version: 1
name: two-hosts
hosts:
  token_file: /tmp/jtok
  nodes:
    - {name: h0, agent: "127.0.0.1:47510"}
    - {name: h1, agent: "127.0.0.1:47511"}
workload: {type: p2p}
arms: [{mode: rc}]
EOF2
sleep 1
rdmactl -j doctor --profile /tmp/hosts.yaml --iters 2000 --bw-iters 50 > /tmp/doch.json 2> /tmp/doch.err; rch=$?
kill $h0 $h1 2>/dev/null; wait $h0 $h1 2>/dev/null
okh=$(grep -c '"verdict": "ok"' /tmp/doch.json)
nph=$(grep -c '"lost_permille"' /tmp/doch.json)
ok=$(grep -c '"verdict": "ok"' /tmp/doc.json)
np=$(grep -c '"lost_permille"' /tmp/doc.json)
if [ $rc = 0 ] && [ "$ok" = 3 ] && [ "$np" = 3 ] && grep -q '"named": \[\]' /tmp/doc.json &&
	grep -q '"sent_ab": [1-9]' /tmp/doc.json && [ $rch = 0 ] && [ "$okh" = 2 ] && [ "$nph" = 1 ] &&
	grep -q '"named": \[\]' /tmp/doch.json; then
	pass doctor_joined_rxe "3 joined agents on rtbrxe0-2: 3 pairs in $(grep -o '"wall_s": [0-9.]*' /tmp/doc.json | tail -n 1 | tr -dc 0-9.) s, nothing named; a profile's 2 hosts by address: 1 pair, nothing named"
else
	fail doctor_joined_rxe "rc=$rc ok=$ok pairs=$np $(tail -n 3 /tmp/doc.err | tr '\n' '|') $(grep -A2 '"named"' /tmp/doc.json | tr -d '\n ' | head -c 300); profile: rc=$rch ok=$okh pairs=$nph $(tail -n 3 /tmp/doch.err | tr '\n' '|')"
fi

out=$(rdmactl testbed up --backend host 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q 'already up' && pass second_up_refused || fail second_up_refused "rc=$rc $out"

out=$(rdmactl testbed down 2>&1); rc=$?
echo "$out"
snapshot > /tmp/after
if [ $rc = 0 ] && cmp -s /tmp/before /tmp/after && [ ! -e /run/rdma-testbed ] && [ -z "$(agents)" ]; then
	pass down_restores "rules, links, rxe devices, sysctls as before; no agents, no state"
else
	diff /tmp/before /tmp/after
	fail down_restores "rc=$rc"
fi
exit 0
