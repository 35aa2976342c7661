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
TESTS="controller_served_under_unauth_flood"
plan $TESTS
W=$(mktemp -d /tmp/rtb-security.XXXXXX)
AST=$W/agents-state
trap 'RDMATB_STATE_DIR=$AST "$C" -q testbed down >/dev/null 2>&1; [ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
A() { RDMATB_STATE_DIR=$AST "$C" "$@"; }

# --- 1. Strangers that hold 64 idle connections from each of two addresses,
# reopening each as the agent closes it, never keep the controller out: every
# status in the flood reaches the agent (before: "too many control
# connections from this peer", then refused from both addresses)
if A testbed up --backend agents --nodes 1 > "$W/up.out" 2>&1; then
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
	if [ $ok = 10 ] && [ "${opened:-0}" -ge 128 ]; then
		pass controller_served_under_unauth_flood "10 of 10 statuses reached the agent while strangers opened $opened idle connections from 2 addresses (64 each at a time)"
	else
		fail controller_served_under_unauth_flood "$ok of 10 statuses reached the agent (${bad:-}); strangers opened ${opened:-?}"
	fi
else
	fail controller_served_under_unauth_flood "testbed up --backend agents: $(tail -n 3 "$W/up.out")"
fi
A -q testbed down >/dev/null 2>&1
exit 0
