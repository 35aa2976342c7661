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
if [ "$(id -u)" != 0 ]; then echo "SKIP: $S (needs root)"; exit 0; fi
I() { "$B" --pin "$PIN" "$@"; }
clean() { # nothing of ours on the test devices
	! tc qdisc show dev injc0 | grep -qE 'clsact|prio' && ! tc filter show dev injc0 ingress | grep -q . &&
	! tc filter show dev injc0 egress | grep -q .
}
ip link add injc0 type veth peer name injc1 && ip link set injc0 up && ip link set injc1 up || { fail setup; exit 0; }
trap 'I flush >/dev/null 2>&1; ip link del injc0 2>/dev/null' EXIT

ok=1
for r in "drop 10%" "qpn 0x11 opcode data drop 1%" "psn 100-200 drop 100%" "drop gemodel 1% 10%" \
	 "duplicate 1%" "corrupt 0.5%" "ecn 10%" "count" "flap 2s after 1s" "drop every 100" "drop once"; do
	# shellcheck disable=SC2086
	id=$(I add dev injc0 ingress $r 2>&1) || { ok=0; echo "  add $r: $id"; }
done
[ $ok = 1 ] && pass add_forms "11 rule forms accepted" || fail add_forms
n=$(I -j list | jq '.rules | length')
[ "$n" = 11 ] && pass list_json "11 rules" || fail list_json "$n rules"
st=$(I stats -j)
jq -e '.rules[0].counters | has("matched") and has("dropped") and has("duplicated") and has("marked")' <<< "$st" >/dev/null &&
	jq -e '.hooks[0].dev == "injc0" and .hooks[0].dir == "ingress"' <<< "$st" >/dev/null &&
	pass stats_json || fail stats_json "$(head -c 300 <<< "$st")"
I set 1 drop 20% >/dev/null && I -j list | jq -e '.rules[0].rule == "drop 20%"' >/dev/null &&
	I set 1 off && I -j list | jq -e '.rules[0].enabled == false' >/dev/null && pass set_live || fail set_live
ok=1
for bad in "add dev nosuch0 ingress drop 1%:no such device" "add dev injc0 sideways drop 1%:ingress|egress" \
	   "add dev injc0 ingress drop 150%:probability" "add dev injc0 ingress dorp 1%:did you mean 'drop'" \
	   "add dev injc0 ingress qpn 0x1000000 drop:qpn" "del 999:no such rule" "set 999 drop 1%:no such rule" \
	   "frobnicate:unknown command"; do
	args=${bad%%:*}; pat=${bad#*:}
	# shellcheck disable=SC2086
	out=$(I $args 2>&1); rc=$?
	if [ $rc = 0 ] || ! grep -q -- "$pat" <<< "$out"; then ok=0; echo "  '$args' -> rc=$rc: $out"; fi
done
[ $ok = 1 ] && pass bad_input "8 bad commands rejected with a message" || fail bad_input
I flush && clean && [ ! -e "$PIN" ] && pass flush "no clsact, filter or pinned map left" || fail flush

# crash: a rule added and its process gone (as after kill -9): the state is in
# the kernel, flush still removes it
I add dev injc0 egress drop 5% >/dev/null
I flush && clean && pass flush_after_crash || fail flush_after_crash
# foreground rules detach on SIGTERM and SIGINT
for sig in TERM INT; do
	"$B" --pin "$PIN" run dev injc0 ingress drop 1% > /dev/null 2>&1 &	# not via I(): $! must be rdma-inject
	p=$!
	for _ in $(seq 50); do tc filter show dev injc0 ingress | grep -q inj_tc && break; sleep 0.1; done
	attached=$(tc filter show dev injc0 ingress | grep -c inj_tc)
	kill -$sig $p; wait $p; rc=$?
	if [ "$attached" = 1 ] && [ $rc = 0 ] && ! tc filter show dev injc0 ingress | grep -q . &&
	   [ "$(I -j list | jq '.rules | length')" = 0 ]; then
		pass run_sig$sig "attached while running, gone after SIG$sig"
	else
		fail run_sig$sig "attached=$attached rc=$rc"
	fi
done
I run dev injc0 ingress drop 1% for 1s > /dev/null 2>&1; rc=$?
[ $rc = 0 ] && ! tc filter show dev injc0 ingress | grep -q . && pass run_window_end || fail run_window_end "rc=$rc"
I flush >/dev/null
clean && pass final_clean || fail final_clean
# listing a clean system creates no state; flush also removes pins of older versions
I -j list > /dev/null
[ ! -e "$PIN" ] && pass list_creates_nothing || fail list_creates_nothing "$PIN exists after list"
mkdir -p "$PIN" && bpftool map create "$PIN/inj_old_name" type array key 4 value 4 entries 1 name inj_old 2>/dev/null
I flush && [ ! -e "$PIN" ] && pass flush_stale_pins "a pinned map of an unknown name is removed too" ||
	fail flush_stale_pins "$(ls "$PIN" 2>&1)"
