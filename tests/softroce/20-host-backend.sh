#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The host backend (a kernel with rdma_rxe) cannot run on a host without
# RDMA, so it runs inside a VM built by the same mkimage.sh: the guest's
# /init hands over to guest-host-backend.sh, which drives rdmactl's host
# backend for real and prints PASS/FAIL lines on the console.
set -u
cd "$(dirname "$0")/../.."
. tests/softroce/lib.sh
SUITE=20-host-backend
TESTS="up_auto_picks_host status p2p_lat agent_killed exec_cp join_run doctor_joined_rxe second_up_refused down_restores"
plan $TESTS

vm_or_skip || exit 0
W=$(mktemp -d /tmp/rtb-hosttest.XXXXXX)
QPID=
cleanup() { [ -n "$QPID" ] && kill "$QPID" 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT

O=$W/overlay
mkdir -p "$O/usr/bin" "$O/usr/libexec/rdma-testbed" "$O/etc/rdmatb"
install -m 0755 testbed/init.sh "$O/init"
install -m 0755 testbed/topology.sh "$O/usr/libexec/rdma-testbed/"
install -m 0755 build/bin/rdmactl build/bin/rdma-agent "$O/usr/bin/"
install -m 0755 tests/softroce/guest-host-backend.sh "$O/etc/rdmatb/guest-test"
printf 'NODES=0\nNETDEV_MTU=1152\nPORT_BASE=0\nCTRL_IP=198.19.0.15\n' > "$O/etc/rdmatb/config"
CACHE=${RDMATB_CACHE_DIR:-/var/cache/rdma-testbed}
mkdir -p "$CACHE"
if ! img=$(bash testbed/mkimage.sh --cache "$CACHE" --out "$W/initrd.cpio" --overlay-dir "$O"); then
	for t in $TESTS; do fail "$t" "mkimage.sh failed"; done
	exit 0
fi
kernel=$(sed -n 's/^KERNEL=//p' <<< "$img")
qemu-system-x86_64 -name rdma-testbed-test -m 512 -smp 2 -no-reboot -display none -vga none \
	-monitor none -serial "file:$W/serial.log" -nic none -accel tcg,thread=multi -cpu max \
	-kernel "$kernel" -initrd "$W/initrd.cpio" \
	-append "console=ttyS0 quiet loglevel=4 panic=-1 mitigations=off" </dev/null >"$W/qemu.log" 2>&1 &
QPID=$!
for _ in $(seq 1 600); do
	grep -q '@@GUEST-TEST-DONE' "$W/serial.log" 2>/dev/null && break
	kill -0 "$QPID" 2>/dev/null || break
	sleep 0.5
done
tr -d '\r' < "$W/serial.log" > "$W/serial.txt"
sed 's/^/  | /' "$W/serial.txt"
for t in $TESTS; do
	grep -q "^[A-Z]*: $SUITE/$t" "$W/serial.txt" || fail "$t" "no result from the guest (see the console above)"
done
grep -E '^(PASS|FAIL|SKIP): ' "$W/serial.txt"
wait "$QPID" 2>/dev/null
QPID=
exit 0
