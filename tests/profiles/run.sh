#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Profiles without a testbed: every shipped profile validates; every file
# of the broken corpus (tests/profiles/bad, first line "# expect: L:C: msg")
# is refused with exit 2 and exactly that file:line:col message; --set
# overrides and its own errors.
set -u
cd "$(dirname "$0")/../.."
SUITE=profiles
. tests/softroce/lib.sh
C=$RDMACTL
plan shipped_validate broken_corpus set_overrides expect_cli sigpipe_is_not_death too_many_arguments not_regular_file nul_byte many_keys token_file_mode \
     nonroot_state_dir down_keeps_state_qemu_alive

ok=1 n=0
for f in profiles/*.yaml; do
	n=$((n + 1))
	out=$("$C" validate "$f" 2>&1) || { ok=0; echo "  $f: $out"; }
done
[ $ok = 1 ] && [ $n -ge 1 ] && pass shipped_validate "$n shipped profiles validate" || fail shipped_validate "see above"

ok=1 n=0
for f in tests/profiles/bad/*.yaml; do
	n=$((n + 1))
	exp=$(sed -n '1s/^# expect: //p' "$f")
	out=$("$C" validate "$f" 2>&1); rc=$?
	if [ -z "$exp" ] || [ $rc != 2 ] || [[ "$out" != "$f:$exp"* ]] || [ "$(wc -l <<< "$out")" != 1 ]; then
		ok=0
		echo "  $f: exit $rc"
		echo "    want: $f:$exp"
		echo "    got:  $out"
	fi
done
[ $ok = 1 ] && [ $n -ge 20 ] && pass broken_corpus "$n broken profiles: each exit 2 with its file:line:col message" ||
	fail broken_corpus "$n files, see above"

# --set: overrides are checked like the file, errors point at the argument
q=profiles/quickstart.yaml
ok=1
out=$("$C" -j validate "$q" --set run.iters=6 --set arms.2.mode=ec 2>&1) &&
	jq -e '.run.iters == 6 and .arms[2].mode == "ec" and (.sets | length) == 2' <<< "$out" >/dev/null || { ok=0; echo "  set ok: $out"; }
for a in "arms.1.mode=lossi:--set:1:13: arms[1].mode: unknown value 'lossi' (did you mean 'lossy'?)" \
	 "arms.9.mode=rc:--set:1:1: 'arms.9.mode=rc': no item 9" \
	 "workload.options.sise=1M:--set:1:1: unknown collective option 'sise' (did you mean 'size'?)" \
	 "testbed.nodes=1:--set:1:15: testbed.nodes: '1': out of range" \
	 "nonsense:--set: expected key.path=value"; do
	set_arg=${a%%:*}; want=${a#*:}
	out=$("$C" validate "$q" --set "$set_arg" 2>&1); rc=$?
	[ $rc = 2 ] && [[ "$out" == "$want"* ]] || { ok=0; echo "  --set $set_arg: exit $rc: $out (want $want)"; }
done
out=$("$C" validate profiles/nonexistent.yaml 2>&1); rc=$?
[ $rc = 2 ] && grep -q "No such file" <<< "$out" || { ok=0; echo "  missing file: $rc $out"; }
[ $ok = 1 ] && pass set_overrides "overrides applied and checked; bad ones point at --set:1:col" || fail set_overrides "see above"
# --expect: checked like the profile's expect: list, against its arms and
# its workload's metrics; a bad one is exit 2 with what is wrong
ok=1
out=$("$C" -j validate "$q" --expect 'rc: p99 < 2s' --expect 'busbw > 1MB/s' 2>&1) &&
	jq -e '.expect == ["rc: wrong == 0", "sr: wrong == 0", "all: lost < 5%", "rc: p99 < 2s", "busbw > 1MB/s"]' <<< "$out" >/dev/null ||
	{ ok=0; echo "  expect ok: $out"; }
for a in "p99 < 2|'2': a time needs its unit" "ec: lost < 1%|no arm named 'ec'" "tta < 9s|metric 'tta': not one this workload reports" \
	 "p99 => 1s|expected an operator"; do
	e=${a%%|*}; want="rdmactl: --expect '$e': ${a#*|}"
	out=$("$C" validate "$q" --expect "$e" 2>&1); rc=$?
	[ $rc = 2 ] && [[ "$out" == "$want"* ]] || { ok=0; echo "  --expect $e: exit $rc: $out (want $want)"; }
done
[ $ok = 1 ] && pass expect_cli "--expect added after the profile's own; bad ones exit 2 with the reason" || fail expect_cli "see above"

# a reader that went away (the read end closed before rdmactl writes) is an
# EPIPE, not a death by SIGPIPE (exit 141, as an ssh that had exited once
# caused in run_ssh_refused)
rcs="" rcf=$(mktemp)
for a in "--help" "validate profiles/quickstart.yaml" "-j validate profiles/quickstart.yaml"; do
	# shellcheck disable=SC2086
	( sleep 0.2; "$C" $a 2>/dev/null; echo $? > "$rcf" ) | (exec 0<&-; sleep 0.5)
	rcs="$rcs $(cat "$rcf")"
done
rm -f "$rcf"
grep -q 141 <<< "$rcs" && fail sigpipe_is_not_death "exit codes:$rcs" ||
	pass sigpipe_is_not_death "output to a closed pipe: exit codes$rcs"
# more profiles than a command takes: a usage error, not a stack overflow
out=$("$C" run a b c d e f 2>&1); rc=$?
out2=$("$C" validate $(printf 'x%d ' $(seq 70)) 2>&1); rc2=$?
[ $rc = 2 ] && [ $rc2 = 2 ] && grep -q "at most" <<< "$out" &&
	pass too_many_arguments "run a b c d e f: exit 2 ($out)" ||
	fail too_many_arguments "rc=$rc/$rc2: $out | $(head -c 200 <<< "$out2")"
# what is not a profile is refused at once: a FIFO (it blocked forever), a
# NUL byte (it cut a scalar short), 80k keys (seconds of duplicate checks)
T=$(mktemp -d)
mkfifo "$T/fifo"
out=$(timeout 10 "$C" validate "$T/fifo" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "not a regular file" <<< "$out" && pass not_regular_file "$out" ||
	fail not_regular_file "rc=$rc $out"
printf 'version: 1\nname: "a\0b"\nworkload: {type: collective}\narms: [{mode: rc}]\n' > "$T/nul.yaml"
out=$("$C" validate "$T/nul.yaml" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "$T/nul.yaml:2:9: a NUL byte" <<< "$out" && pass nul_byte "$out" ||
	fail nul_byte "rc=$rc $out"
{ echo "version: 1"; echo "x:"; seq 1 80000 | sed 's/.*/ k&: 1/'; } > "$T/keys.yaml"
t0=$SECONDS
out=$(timeout 60 "$C" validate "$T/keys.yaml" 2>&1); rc=$?
[ $rc = 2 ] && grep -q "more than 1024 keys" <<< "$out" && [ $((SECONDS - t0)) -le 5 ] &&
	pass many_keys "80000 keys: $(sed "s|$T/||" <<< "$out") in $((SECONDS - t0)) s" ||
	fail many_keys "rc=$rc in $((SECONDS - t0)) s: $out"
# a token file others can read is refused (by the agent, before anything else)
tr -dc 'a-z0-9' < /dev/urandom | head -c 32 > "$T/tok"; echo >> "$T/tok"
chmod 0644 "$T/tok"
o1=$(build/bin/rdma-agent --dev none0 --token-file "$T/tok" 2>&1); r1=$?
chmod 0600 "$T/tok"
o2=$(build/bin/rdma-agent --dev none0 --token-file "$T/tok" 2>&1); r2=$?
[ $r1 = 2 ] && grep -q "cannot use as token file: Permission denied" <<< "$o1" && ! grep -q "token file" <<< "$o2" &&
	pass token_file_mode "mode 0644: $(sed "s|$T/||" <<< "$o1"); 0600: accepted (then: $(sed "s|$T/||" <<< "$o2" | head -n 1))" ||
	fail token_file_mode "0644: rc=$r1 $o1 | 0600: rc=$r2 $o2"
rm -rf "$T"

# --- a user's state directory is its own: /tmp/rdma-testbed-UID (not one
# shared name another user could make first), and one that is not a
# directory of that user's, closed to others, is refused (not followed)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	T=$(mktemp -d /tmp/rtb-nonroot.XXXXXX); chmod 0755 "$T"
	cp "$C" "$T/rdmactl"
	U=65534 D=/tmp/rdma-testbed-65534
	as_nobody() { env -u XDG_RUNTIME_DIR -u RDMATB_STATE_DIR setpriv --reuid=$U --regid=$U --clear-groups "$T/rdmactl" "$@"; }
	rm -rf "$D"
	o0=$(as_nobody testbed down 2>&1); r0=$?
	mkdir -m 0700 "$D"		# root's, in nobody's place
	o1=$(as_nobody testbed down 2>&1); r1=$?
	rmdir "$D"; ln -s /etc "$D"	# a symlink to elsewhere
	o2=$(as_nobody testbed down 2>&1); r2=$?
	rm -f "$D"; mkdir -m 0777 "$D"; chown $U "$D"	# nobody's, but writable by all
	o3=$(as_nobody testbed down 2>&1); r3=$?
	rm -rf "$D"
	if [ $r0 = 0 ] && [ "$o0" = "no testbed is up" ] && [ $r1 != 0 ] && [ $r2 != 0 ] && [ $r3 != 0 ] &&
		grep -q "^rdmactl: $D: not a directory of this user's" <<< "$o1$o2$o3" && [ -f /etc/passwd ] &&
		[ "$(grep -c "not a directory of this user's" <<< "$o1
$o2
$o3")" = 3 ]; then
		pass nonroot_state_dir "uid $U: $D (absent: '$o0'); root's, a symlink to /etc, mode 0777: each refused ($(sed "s|^rdmactl: ||" <<< "$o1" | head -c 80)...)"
	else
		fail nonroot_state_dir "absent: rc=$r0 $o0 | root's: rc=$r1 $o1 | symlink: rc=$r2 $o2 | 0777: rc=$r3 $o3"
	fi
	rm -rf "$T"
else
	skip nonroot_state_dir "needs root and setpriv to act as another user"
fi
# --- testbed down when qemu does not stop: its state stays, so that down
# can be tried again (it used to remove the state whatever happened, and
# the next up then booted a second VM beside the first). The "qemu" is a
# process named so, frozen in a cgroup, the freeze confirmed first. Under
# the v1 freezer SIGTERM and SIGKILL stay pending until it is thawed: that
# is the qemu that does not stop. cgroup v2's cgroup.freeze keeps SIGTERM
# pending but a frozen task dies of SIGKILL (the kernel's rule): where only
# v2 exists, the test says so and checks what still applies, that down
# escalates to SIGKILL and then removes the state and leaves no process
FZ=$(mktemp -d /tmp/rtb-frz.XXXXXX)
fz_kind=""
if [ "$(id -u)" = 0 ]; then
	# RTB_TEST_CGROUP=v2 takes the v2 branch on a host that has both
	if [ "${RTB_TEST_CGROUP:-}" != v2 ] && mount -t cgroup -o freezer rtbfrz "$FZ" 2>/dev/null &&
	   mkdir -p "$FZ/rtb-$$"; then
		fz_kind=v1
	elif { ! mountpoint -q "$FZ" || umount "$FZ"; } && mount -t cgroup2 none "$FZ" 2>/dev/null &&
	     mkdir "$FZ/rtb-$$" 2>/dev/null && [ -e "$FZ/rtb-$$/cgroup.freeze" ]; then
		fz_kind=v2
	fi
fi
fz_set() {	# fz_set 1|0: freeze or thaw the test's cgroup
	if [ "$fz_kind" = v2 ]; then echo "$1" > "$FZ/rtb-$$/cgroup.freeze"
	else echo "$([ "$1" = 1 ] && echo FROZEN || echo THAWED)" > "$FZ/rtb-$$/freezer.state"; fi
}
fz_frozen() {
	if [ "$fz_kind" = v2 ]; then grep -qx 'frozen 1' "$FZ/rtb-$$/cgroup.events"
	else [ "$(cat "$FZ/rtb-$$/freezer.state")" = FROZEN ]; fi
}
if [ -n "$fz_kind" ]; then
	SD=$(mktemp -d /tmp/rtb-down.XXXXXX)
	cp /bin/sleep "$SD/qemu-system-rdma-testbed"	# what down checks a pid's command line for
	"$SD/qemu-system-rdma-testbed" 120 &
	qp=$!
	echo $qp > "$FZ/rtb-$$/cgroup.procs" && fz_set 1
	frozen=no
	for _ in $(seq 100); do fz_frozen && { frozen=yes; break; }; sleep 0.1; done
	jq -n --argjson p $qp '{schema_version: 1, backend: "vm", nodes_n: 1, mtu: 1024, netdev_mtu: 1100,
		qemu_pid: $p, accel: "tcg", accel_why: "test", kernel: "test", up_s: 1, image_s: 0, boot_s: 1,
		image_built: false, nodes: [{name: "node0", dev: "rxe0", host: "127.0.0.1", port: 1, agent_pid: 0}]}' \
		> "$SD/testbed.json"
	(umask 077; echo 0123456789abcdef0123 > "$SD/token")
	o1=$(RDMATB_STATE_DIR=$SD "$C" testbed down 2>&1); r1=$?
	kept=$([ -f "$SD/testbed.json" ] && [ -f "$SD/token" ] && echo yes || echo no)
	alive=$(kill -0 $qp 2>/dev/null && echo yes || echo no)
	fz_set 0
	wait $qp 2>/dev/null
	o2=$(RDMATB_STATE_DIR=$SD "$C" testbed down 2>&1); r2=$?
	if [ $frozen = no ]; then
		fail down_keeps_state_qemu_alive "the stand-in qemu did not freeze within 10 s (cgroup $fz_kind)"
	elif [ $fz_kind = v1 ] && [ $r1 != 0 ] && [ $kept = yes ] && grep -q "did not stop cleanly" <<< "$o1" &&
	     [ $r2 = 0 ] && [ ! -e "$SD/testbed.json" ] && ! kill -0 $qp 2>/dev/null; then
		pass down_keeps_state_qemu_alive "frozen qemu (cgroup v1 freezer): exit $r1, state kept ($(grep -m1 -o 'qemu pid [0-9]* does not exit' <<< "$o1")); thawed, it died: down again exit 0, state gone"
	elif [ $fz_kind = v2 ] && [ $r1 = 0 ] && [ $kept = no ] && [ $alive = no ]; then
		pass down_keeps_state_qemu_alive "premise absent: no v1 freezer, and a task frozen by cgroup v2 dies of SIGKILL, so no qemu here outlives down; what applies: a qemu deaf to SIGTERM was killed, state removed, no process left"
	else
		fail down_keeps_state_qemu_alive "frozen (cgroup $fz_kind): rc=$r1 kept=$kept alive=$alive $o1 | thawed: rc=$r2 $o2"
	fi
	kill -9 $qp 2>/dev/null
	wait $qp 2>/dev/null
	rm -rf "$SD"
else
	skip down_keeps_state_qemu_alive "needs root and a cgroup freezer (v1, or v2's cgroup.freeze)"
fi
rmdir "$FZ/rtb-$$" 2>/dev/null
mountpoint -q "$FZ" && umount "$FZ"
rmdir "$FZ"
# reached the end: a non-zero exit means the suite was cut short
exit 0
