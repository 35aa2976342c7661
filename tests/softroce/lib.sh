# SPDX-License-Identifier: MIT
# Helpers for the SoftRoCE suites: PASS/FAIL/SKIP lines, a testbed that is
# always torn down, and the skip rule (skip only when qemu cannot run at all).
RDMACTL=${RDMACTL:-build/bin/rdmactl}
SUITE=${SUITE:-$(basename "$0" .sh)}

# plan TEST...: the tests this suite reports, each once (tests/run.sh fails
# a declared test that never reports and an undeclared one that passes)
plan() { echo "PLAN: $SUITE $*"; }
# each result is followed by how long its test took (since the previous
# result), to find where a suite's time goes
_rtb_t=$SECONDS
_took() { echo "# took $((SECONDS - _rtb_t)) s"; _rtb_t=$SECONDS; }
pass() { echo "PASS: $SUITE/$1${2:+ ($2)}"; _took; }
fail() { echo "FAIL: $SUITE/$1${2:+ ($2)}"; _took; }
skip() { echo "SKIP: $SUITE/$1 ($2)"; }
note() { echo "# $*"; }
# cmd_schema JSON: nothing when a workload command's -j output fits
# schemas/commands.schema.json, else the first line of why not
cmd_schema() {
	python3 -c 'import json, sys, jsonschema
try:
    jsonschema.validate(json.loads(sys.stdin.read()), json.load(open(sys.argv[1])))
except Exception as e:
    print(str(e).splitlines()[0])' schemas/commands.schema.json <<< "$1" 2>&1 | head -n 1
}
# check NAME CMD...: PASS when CMD succeeds
check() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n" "command failed: $*"; fi; }

# why the VM testbed cannot run here, or "" when it can
vm_unavailable() {
	[ "$(id -u)" = 0 ] || { echo "not root"; return; }
	command -v "${RDMATB_QEMU:-qemu-system-x86_64}" >/dev/null || { echo "no qemu-system-x86_64 (make deps)"; return; }
	command -v apt-get >/dev/null || { echo "no apt-get to fetch Debian's kernel"; return; }
	echo ""
}

# vm_or_skip: 0 when the VM testbed can run here; else every test of
# $TESTS is marked SKIP with the reason, and 1 (the caller exits 0)
vm_or_skip() {
	local why t
	why=$(vm_unavailable)
	[ -z "$why" ] && return 0
	for t in $TESTS; do skip "$t" "$why"; done
	return 1
}

tb_cleanup() {
	"$RDMACTL" -q testbed down >/dev/null 2>&1 || true
}

# the ids of report.html's charts (comma-separated), for tests/html/check.js
charts_of() { grep -o '<figure class="chart" id="[a-z_]*"' "$1" 2>/dev/null | sed 's/.*id="//; s/"//' | paste -sd,; }

no_leftovers() {	# nothing of the testbed remains
	local why=""
	pgrep -f 'qemu-system.*rdma-testbed' >/dev/null &&
		why="qemu still running: $(pgrep -af 'qemu-system.*rdma-testbed' | cut -c1-100 | tr '\n' ' ')$(ps -o pid=,stat=,etime= -p "$(pgrep -d, -f 'qemu-system.*rdma-testbed')" 2>/dev/null | tr '\n' ' ')"
	[ -e "${RDMATB_STATE_DIR:-/run/rdma-testbed}" ] && why="$why state dir left"
	[ -z "$why" ] || { echo "leftovers: $why" >&2; return 1; }
}

# jq -e succeeds on empty input (no output, exit 0): in these tests an empty
# answer is a failure, so -e also requires input
jq() {
	if [ "${1:-}" = -e ]; then
		local input
		input=$(cat)
		[ -n "$input" ] || return 1
		command jq "$@" <<< "$input"
	else
		command jq "$@"
	fi
}

# suite_up: a fresh 3-node testbed for the suite's $TESTS, torn down at exit
# (and $SUITE_EXIT run first, if set). Returns 1 after every test was marked
# SKIP (no VM here) or FAIL (it would not come up): the caller exits 0.
# Its topology is $SUITE_TOPOLOGY, shared unless set: these suites' bounds
# were measured on one shared kernel, where a collective runs about twice
# as fast (bench/pernode_cost.sh). 10-testbed and 12-pernode run per-node,
# testbed up's default for up to 4 nodes. $SUITE_UP_ARGS: more of testbed
# up's options (30-inject's --switch xdp).
suite_up() {
	local out
	plan $TESTS
	vm_or_skip || return 1
	trap 'eval "${SUITE_EXIT:-:}"; tb_cleanup' EXIT
	tb_cleanup
	# shellcheck disable=SC2086
	if ! out=$("$RDMACTL" testbed up --nodes "${SUITE_NODES:-3}" --topology "${SUITE_TOPOLOGY:-shared}" ${SUITE_UP_ARGS:-} 2>&1); then
		for t in $TESTS; do fail "$t" "testbed up failed: $(tail -n 3 <<< "$out" | tr '\n' '|')"; done
		return 1
	fi
}
