#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdma-inject's command line on this host's kernel (root, no VM): the forms
# the documentation promises, JSON output, bad input, and clean detach on
# SIGTERM, SIGINT, flush and after a crash. A veth pair made for the test.
set -u
cd "$(dirname "$0")/../.."
B=build/bin/rdma-inject
PIN=/sys/fs/bpf/rdma-inject-clitest-$$
S=bpf/inject_cli
pass() { echo "PASS: $S/$1${2:+ ($2)}"; }
fail() { echo "FAIL: $S/$1${2:+ ($2)}"; }
T="add_forms list_json stats_json set_live bad_input run_sigTERM run_sigINT run_window_end flush
   flush_after_crash flush_stale_pins list_creates_nothing final_clean pin_only_before_command
   pin_outside_bpffs concurrent_adds ids_not_reused netns_exec_keeps_rules users_root_qdisc_kept
   flush_if_empty leases_all_64 expired_lease_is_gone lock_holder_named hooks_64_no_spin
   track_and_qps flush_after_kill_in_hook"
echo "PLAN: $S" $T
if [ "$(id -u)" != 0 ]; then for t in $T; do echo "SKIP: $S/$t (needs root)"; done; exit 0; fi
I() { "$B" --pin "$PIN" "$@"; }
clean() { # nothing of ours on the test devices
	! tc qdisc show dev $C0 | grep -qE 'clsact|prio' && ! tc filter show dev $C0 ingress | grep -q . &&
	! tc filter show dev $C0 egress | grep -q .
}
# device names of this run only (a run killed before its trap must not
# make the next one fail): at most 11 characters with a 7-digit pid
P=ri$$ C0=ri$$c0 C1=ri$$c1 N0=ri$$n0 N1=ri$$n1
cleanup() {
	I flush >/dev/null 2>&1
	ip link del "$C0" 2>/dev/null; ip link del "$N1" 2>/dev/null; ip netns del "rtbinj$$" 2>/dev/null
	for i in $(seq 0 31); do ip link del "${P}m$i" 2>/dev/null; done
	rm -rf "$PIN"
}
trap cleanup EXIT
if ! e=$(ip link add $C0 type veth peer name $C1 2>&1 && ip link set $C0 up 2>&1 && ip link set $C1 up 2>&1); then
	fail setup "veth pair $C0/$C1: $e"; exit 0
fi

ok=1
for r in "drop 10%" "qpn 0x11 opcode data drop 1%" "psn 100-200 drop 100%" "drop gemodel 1% 10%" \
	 "duplicate 1%" "corrupt 0.5%" "ecn 10%" "count" "flap 2s after 1s" "drop every 100" "drop once" \
	 "opcode data corrupt payload 1%" "opcode data cnp 10%"; do
	# shellcheck disable=SC2086
	id=$(I add dev $C0 ingress $r 2>&1) || { ok=0; echo "  add $r: $id"; }
done
# a cnp rule hooks the device's other direction too (the CNP is made there)
tc filter show dev $C0 egress | grep -q inj_tc || { ok=0; echo "  cnp: no egress filter"; }
[ $ok = 1 ] && pass add_forms "13 rule forms accepted, cnp hooked both ways" || fail add_forms
n=$(I -j list | jq '.rules | length')
[ "$n" = 13 ] && pass list_json "13 rules" || fail list_json "$n rules"
st=$(I stats -j)
jq -e '.rules[0].counters | has("matched") and has("dropped") and has("duplicated") and has("marked") and has("notified")' <<< "$st" >/dev/null &&
	jq -e --arg d "$C0" '.hooks[0].dev == $d and .hooks[0].dir == "ingress"' <<< "$st" >/dev/null &&
	pass stats_json || fail stats_json "$(head -c 300 <<< "$st")"
id1=$(I -j list | jq '.rules[0].id')	# ids grow for as long as the host is up
I set "$id1" drop 20% >/dev/null && I -j list | jq -e '.rules[0].rule == "drop 20%"' >/dev/null &&
	I set "$id1" off && I -j list | jq -e '.rules[0].enabled == false' >/dev/null && pass set_live || fail set_live
ok=1
for bad in "add dev nosuch0 ingress drop 1%:no such device" "add dev $C0 sideways drop 1%:ingress|egress" \
	   "add dev $C0 ingress drop 150%:probability" "add dev $C0 ingress dorp 1%:did you mean 'drop'" \
	   "add dev $C0 ingress qpn 0x1000000 drop:qpn" "del 999:no such rule" "set 999 drop 1%:no such rule" \
	   "frobnicate:unknown command" "add dev $C0 ingress gap 5 drop 10%:gap: goes after" \
	   "add dev $C0 ingress drop every 400 gap 5:gap: goes after" \
	   "add dev $C0 ingress qpn 000000000000000000000000000000000000017 drop:too long"; do
	args=${bad%%:*}; pat=${bad#*:}
	# shellcheck disable=SC2086
	out=$(I $args 2>&1); rc=$?
	if [ $rc = 0 ] || ! grep -q -- "$pat" <<< "$out"; then ok=0; echo "  '$args' -> rc=$rc: $out"; fi
done
[ $ok = 1 ] && pass bad_input "11 bad commands rejected with a message" || fail bad_input
I flush && clean && [ ! -e "$PIN" ] && pass flush "no clsact, filter or pinned map left" || fail flush

# crash: a rule added and its process gone (as after kill -9): the state is in
# the kernel, flush still removes it
I add dev $C0 egress drop 5% >/dev/null
I flush && clean && pass flush_after_crash || fail flush_after_crash
# killed (-9) between making the device's clsact and the rest of the add
# (90-chaos once left a clsact so): flush still knows it for ours
RDMA_INJECT_CRASH_AT=clsact-made I add dev $C0 ingress drop 5% >/dev/null 2>&1; rc=$?
made=$(tc qdisc show dev $C0 | grep -c clsact)
if [ $rc = 137 ] && [ "$made" = 1 ] && I flush && clean; then
	pass flush_after_kill_in_hook "killed with the clsact made and nothing attached: flush removed it"
else
	fail flush_after_kill_in_hook "rc=$rc clsact made=$made; left: $(tc qdisc show dev $C0 | tr '\n' '|')"
fi
# foreground rules detach on SIGTERM and SIGINT
for sig in TERM INT; do
	"$B" --pin "$PIN" run dev $C0 ingress drop 1% > /dev/null 2>&1 &	# not via I(): $! must be rdma-inject
	p=$!
	# up to 60 s: its first load after a flush verifies the program (8-10 s on a 6.18 host)
	for _ in $(seq 600); do tc filter show dev $C0 ingress | grep -q inj_tc && break; sleep 0.1; done
	attached=$(tc filter show dev $C0 ingress | grep -c inj_tc)
	kill -$sig $p; wait $p; rc=$?
	if [ "$attached" = 1 ] && [ $rc = 0 ] && ! tc filter show dev $C0 ingress | grep -q . &&
	   [ "$(I -j list | jq '.rules | length')" = 0 ]; then
		pass run_sig$sig "attached while running, gone after SIG$sig"
	else
		fail run_sig$sig "attached=$attached rc=$rc"
	fi
done
I run dev $C0 ingress drop 1% for 1s > /dev/null 2>&1; rc=$?
[ $rc = 0 ] && ! tc filter show dev $C0 ingress | grep -q . && pass run_window_end || fail run_window_end "rc=$rc"
I flush >/dev/null
clean && pass final_clean || fail final_clean
# listing a clean system creates no state; flush also removes pins of older versions
I -j list > /dev/null
[ ! -e "$PIN" ] && pass list_creates_nothing || fail list_creates_nothing "$PIN exists after list"
mkdir -p "$PIN" && bpftool map create "$PIN/inj_old_name" type array key 4 value 4 entries 1 name inj_old 2>/dev/null
I flush && [ ! -e "$PIN" ] && pass flush_stale_pins "a pinned map of an unknown name is removed too" ||
	fail flush_stale_pins "$(ls "$PIN" 2>&1)"
# 20 adds at once: one at a time under the state lock, 20 rules, 20 ids
for k in $(seq 20); do I add dev $C0 ingress qpn $k drop 1% > "/tmp/rtb-cadd.$$.$k" 2>&1 & done
wait
ids=$(cat /tmp/rtb-cadd.$$.* | sort -n | uniq | wc -l); rm -f /tmp/rtb-cadd.$$.*
n=$(I -j list | jq '.rules | length')
nq=$(I -j list | jq '[.rules[].rule] | unique | length')
[ "$ids" = 20 ] && [ "$n" = 20 ] && [ "$nq" = 20 ] &&
	pass concurrent_adds "20 parallel adds: 20 distinct ids, 20 rules listed" ||
	fail concurrent_adds "distinct ids $ids, rules $n, distinct rules $nq"
# a deleted rule's id is never handed out again (a lease on it must not
# remove a newer rule)
last=$(I -j list | jq '[.rules[].id] | max')
I del "$last" && a=$(I add dev $C0 ingress drop 1%)
[ -n "${a:-}" ] && [ "$a" -gt "$last" ] && pass ids_not_reused "deleted $last, next add got $a" ||
	fail ids_not_reused "deleted $last, next add got ${a:-nothing}"
I flush >/dev/null
# under ip netns exec every command gets a fresh sysfs, so a fresh bpffs:
# the state is found from the kernel (our filter, its program, its maps),
# so a second add joins the first (it used to replace it, list showed
# nothing and stats had no counters)
NS=rtbinj$$
if ip netns add "$NS" && ip link add $N0 type veth peer name $N1 && ip link set $N0 netns "$NS" &&
   ip -n "$NS" link set $N0 up && ip link set $N1 up; then
	E() { ip netns exec "$NS" "$B" "$@"; }
	E add dev $N0 ingress qpn 1 drop 1% >/dev/null && E add dev $N0 ingress qpn 2 drop 2% >/dev/null
	l=$(E -j list); st=$(E -j stats)
	if jq -e '[.rules[].rule] == ["qpn 0x1 drop 1%", "qpn 0x2 drop 2%"]' <<< "$l" >/dev/null &&
	   jq -e '(.rules | length) == 2 and ([.rules[] | .counters | has("matched")] | all)' <<< "$st" >/dev/null; then
		pass netns_exec_keeps_rules "two adds under ip netns exec: $(jq -c '[.rules[].rule]' <<< "$l"), counters in stats"
	else
		fail netns_exec_keeps_rules "list: $(jq -c . <<< "$l" | head -c 300) stats: $(head -c 200 <<< "$st")"
	fi
	E flush >/dev/null 2>&1
	ip netns exec "$NS" tc qdisc show dev $N0 | grep -q clsact &&
		fail netns_exec_keeps_rules "flush left the clsact qdisc it made"
else
	fail netns_exec_keeps_rules "could not make a netns with a veth"
fi
ip link del $N1 2>/dev/null; ip netns del "$NS" 2>/dev/null
# a root qdisc of the user's is never replaced by delay/reorder's prio, and
# flush leaves it (it used to be replaced, then deleted by flush)
if tc qdisc add dev $C0 root handle 5: pfifo 2>/dev/null; then
	out=$(I add dev $C0 egress delay 1ms 2>&1); rc=$?
	I flush >/dev/null
	q=$(tc qdisc show dev $C0 root)
	[ $rc = 1 ] && grep -q "root qdisc of its own (pfifo)" <<< "$out" && grep -q "pfifo 5:" <<< "$q" &&
		pass users_root_qdisc_kept "add delay: exit 1 ($(sed 's/^rdma-inject: //' <<< "$out" | cut -c1-90)...); after flush: $q" ||
		fail users_root_qdisc_kept "rc=$rc $out; root after flush: $q"
	tc qdisc del dev $C0 root 2>/dev/null
else
	fail users_root_qdisc_kept "cannot add a pfifo root qdisc here"
fi
# flush if-empty: checked and flushed under one lock (a list then a flush
# could flush a rule added in between, as an agent's clean-up once did)
id=$(I add dev $C0 ingress drop 1%)
I flush if-empty && k=$(I -j list | jq '.rules | length')
I del "$id" && I flush if-empty && clean && [ ! -e "$PIN" ] && [ "${k:-}" = 1 ] &&
	pass flush_if_empty "a rule left: kept (1 rule); none left: flushed" ||
	fail flush_if_empty "rules after the first: ${k:-?}; $(tc qdisc show dev $C0)"
I flush >/dev/null
# every one of the 64 rules can be leased (there used to be fewer lease
# slots than rules: leases past them were silently dropped), and the 65th
# rule is refused with the table full
ok=1
for i in $(seq 64); do I add dev $C0 ingress drop 1% lease 60s >/dev/null 2>&1 || { ok=0; break; }; done
out65=$(I add dev $C0 ingress drop 1% lease 60s 2>&1); rc65=$?
nl=$(I -j list | jq '[.rules[] | select(.lease_s > 0)] | length')
[ $ok = 1 ] && [ $rc65 != 0 ] && [ "$nl" = 64 ] &&
	pass leases_all_64 "64 leased rules, each with its lease; the 65th: $out65" ||
	fail leases_all_64 "adds ok=$ok, 65th rc=$rc65 ($out65), leased $nl"
I flush >/dev/null
# a leased rule whose lease ran out (its owner died) is gone for flush
# if-empty: the hooks and qdiscs go (the controller's clean-up after a
# lost agent relies on it)
I add dev $C0 ingress drop 1% lease 300ms >/dev/null
sleep 0.6
I flush if-empty >/dev/null
clean && pass expired_lease_is_gone "a rule 300 ms past its lease: flush if-empty removed hook and qdisc" ||
	fail expired_lease_is_gone "$(tc qdisc show dev $C0 | tr '\n' ' ')"
I flush >/dev/null
# --pin is an option of rdma-inject, not a word of a command: after the
# command it is refused (it used to be taken from anywhere, and `flush`
# then emptied the directory it named)
D=$(mktemp -d /tmp/rtb-pin.XXXXXX)
echo keep > "$D/file"
out=$("$B" flush --pin "$D" 2>&1); rc=$?
[ $rc = 2 ] && [ -f "$D/file" ] && grep -q "flush" <<< "$out" &&
	pass pin_only_before_command "flush --pin DIR: exit 2, DIR untouched" ||
	fail pin_only_before_command "rc=$rc $(ls "$D") $out"
# and only ever a directory on a BPF filesystem: flush unlinks nothing
# elsewhere, add makes no directory elsewhere
out2=$("$B" --pin "$D" flush 2>&1); rc2=$?
out3=$("$B" --pin "$D/new" add dev $C0 ingress drop 1% 2>&1); rc3=$?
if [ $rc2 = 1 ] && [ $rc3 = 1 ] && [ -f "$D/file" ] && [ ! -e "$D/new" ] && clean &&
   grep -q "BPF filesystem\|Not a directory" <<< "$out2$out3"; then
	pass pin_outside_bpffs "--pin /tmp/DIR: flush and add exit 1 ($(head -n1 <<< "$out3")), nothing unlinked or made"
else
	fail pin_outside_bpffs "rc=$rc2/$rc3 left: $(ls "$D" | tr '\n' ' ') | $out2 | $out3"
fi
rm -rf "$D"
# a holder of the state lock that never lets go (a hung command): the next
# command gives up after its wait and names the holder, rather than waiting
# behind it for ever (the agent kills an rdma-inject after 60 s: in CI t11
# every add, del and flush of a run then took those 60 s)
L=$(mktemp /tmp/rtb-lock.XXXXXX)
flock "$L" sleep 30 & hp=$!
for _ in $(seq 50); do grep -q "FLOCK.* $hp " /proc/locks && break; sleep 0.1; done
t0=$EPOCHREALTIME
out=$(RTB_INJ_LOCK=$L RTB_INJ_LOCK_WAIT_MS=700 I flush 2>&1); rc=$?
dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%d", (b - a) * 1000}')
# what bounds the wait is the command's own deadline, not the holder: it
# gave up while the lock was still held (no upper bound in ms: a loaded
# host may be slow to run it, never slow to hold the lock for 30 s)
held=$(grep -q "FLOCK.* $hp " /proc/locks && kill -0 $hp 2>/dev/null && echo yes || echo no)
pkill -P $hp 2>/dev/null; wait $hp 2>/dev/null
out2=$(RTB_INJ_LOCK=$L I flush 2>&1); rc2=$?
rm -f "$L"
if [ $rc = 1 ] && [ "$dt" -ge 700 ] && [ $held = yes ] && grep -q "held by pid $hp (flock)" <<< "$out" && [ $rc2 = 0 ]; then
	pass lock_holder_named "gave up after $dt ms (its wait 700), the lock still held: $(head -n 1 <<< "$out"); once released: flush done"
else
	fail lock_holder_named "rc=$rc after $dt ms (still held when it ended: $held), holder $hp: $out | then rc=$rc2"
fi
# 64 hooks (a rule on each of 64 devices): their keys share buckets of the
# hooks' hash map for certain (256 buckets: no two alike has odds of
# e^-8). Updating the masks while walking the map went round such a pair for
# ever (the previous injector spun on the 4th add: timeout, rc 124); each
# add must finish, and the table must hold all 64
for i in $(seq 0 31); do ip link add ${P}m$i type veth peer name ${P}n$i && ip link set ${P}m$i up && ip link set ${P}n$i up; done
hung="" t0=$EPOCHREALTIME
for i in $(seq 0 31); do
	for d in ${P}m$i ${P}n$i; do
		timeout 15 "$B" --pin "$PIN" add dev $d ingress drop 1% >/dev/null 2>&1 || { hung="$hung $d(rc $?)"; break 2; }
	done
done
dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b - a}')
nh=$(I -j stats | jq '.hooks | length'); nr=$(I -j list | jq '.rules | length')
I flush >/dev/null 2>&1
for i in $(seq 0 31); do ip link del ${P}m$i 2>/dev/null; done
if [ -z "$hung" ] && [ "$nh" = 64 ] && [ "$nr" = 64 ]; then
	pass hooks_64_no_spin "64 adds on 64 devices in $dt s: $nh hooks, $nr rules"
else
	fail hooks_64_no_spin "timed out or failed:${hung:- none}; hooks $nh rules $nr after $dt s"
fi
# tracking by hand and the QP listing: words, JSON, a rule that asks, bad words
o1=$(I add dev $C0 ingress qp 1 rpsn 30 tx 1-2 drop 2>&1); r1=$?
t1=$(I -j track 2>&1)
l1=$(I -j list | jq -r '.rules[0].rule' 2>&1)
I track on >/dev/null 2>&1; t2=$(I -j track 2>&1)
I track off >/dev/null 2>&1; t3=$(I track 2>&1)
q1=$(I -j qps 2>&1); I qps reset >/dev/null 2>&1; rq=$?
b1=$(I track sideways 2>&1); rb1=$?; b2=$(I qps forget 2>&1); rb2=$?
b3=$(I add dev $C0 ingress qp 0 drop 2>&1); rb3=$?
I flush >/dev/null 2>&1
if [ $r1 = 0 ] && [ "$l1" = "qp 1 rpsn 30 tx 1-2 drop 100%" ] &&
	jq -e '.qps and .transmissions and (.by_hand | not)' <<< "$t1" >/dev/null &&
	jq -e '.by_hand' <<< "$t2" >/dev/null && grep -q "tracking on (a rule asks)" <<< "$t3" &&
	jq -e '.qps == []' <<< "$q1" >/dev/null && [ $rq = 0 ] &&
	[ $rb1 = 2 ] && [ $rb2 = 2 ] && [ $rb3 != 0 ] && grep -q "counts from 1" <<< "$b3"; then
	pass track_and_qps "a qp/rpsn/tx rule turns tracking on; by hand on/off; bad words exit 2"
else
	fail track_and_qps "r1=$r1 '$o1' l1='$l1' t1=$t1 t2=$t2 t3=$t3 q1=$q1 rb=$rb1/$rb2/$rb3 $b3"
fi
# reached the end: a non-zero exit means the suite was cut short
exit 0
