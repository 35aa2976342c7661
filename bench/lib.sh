# SPDX-License-Identifier: MIT
# Sourced by the bench scripts that run profiles: RDMACTL, a scratch
# directory W, and a testbed (brought up if none is, with UP_ARGS if the
# script sets them, and then taken down again on exit, with W).
RDMACTL=${RDMACTL:-build/bin/rdmactl}
W=$(mktemp -d)
ours_up=0
if ! "$RDMACTL" -q testbed status >/dev/null 2>&1; then
	"$RDMACTL" testbed up ${UP_ARGS:---nodes 3}
	ours_up=1
fi
cleanup() { [ $ours_up = 1 ] && "$RDMACTL" -q testbed down >/dev/null 2>&1; rm -rf "$W"; return 0; }
trap cleanup EXIT
