#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The test runner behind `make test`: unit tests (no root, no VM), then the
# SoftRoCE suites (root, real rxe in the VM testbed). Every test prints
#   PASS: name (figures) | FAIL: name (why) | SKIP: name (reason)
# and the last line is the count the CI reads: "N passed, N failed".
# TESTS=unit|profiles|bpf|fuzz|asan|softroce|all (default all) selects suites;
# TESTS=switch-xdp runs 30-inject through the XDP switch (make test-switch-xdp);
# TESTS=scale the scale suite (make test-scale).
#
# Nothing passes by not running. Every script suite first prints
#   PLAN: PREFIX test1 test2 ...
# and the runner adds a FAIL for each of these:
#   - a declared test that never reported (the suite died or skipped a branch);
#   - a PASS the plan did not declare;
#   - no PLAN line at all;
#   - a suite that exits non-zero;
#   - a suite that reports nothing for TEST_TIMEOUT seconds (default 900):
#     it is killed (its process group) and the testbed taken down;
#   - a unit or BPF test binary that runs longer than TEST_TIMEOUT;
#   - a unit or BPF test binary that is missing, or exits 0 having made no
#     check ("N checks" from tests/unit/expect.h);
#   - with CI=true, any test skipped (a suite's or a binary's exit 77),
#     unless its reason starts with a [key] from tests/skip-reasons;
#   - at RUN_DEADLINE seconds (default 3840) the run stops: the suite under
#     way is killed and its unreported tests fail, later suites fail as not
#     started, and the counts are still printed. Each suite's wall time is
#     printed after it ("time: NAME SECONDS") and again at the end.
set -u
cd "$(dirname "$0")/.."
TESTS=${TESTS:-all}
LOG=${TEST_LOG:-build/test.log}
mkdir -p "$(dirname "$LOG")"
: > "$LOG"

. tests/harness.sh

if [ "$TESTS" = all ] || [ "$TESTS" = unit ]; then
	echo "== unit tests" | tee -a "$LOG"
	run_binaries unit build/tests "" tests/unit/test_*.c 2>&1 | tee -a "$LOG"
	run_suite tests/harness_test.sh '^(PASS|FAIL|SKIP):|^  '
	# the BPF/user ABI header must stand alone for both compilers
	ma=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
	if echo '#include "inject_abi.h"' | gcc -std=gnu11 -Wall -Wextra -Werror -Iebpf -x c -c -o /dev/null - 2>&1 &&
	   echo '#include "inject_abi.h"' | clang -target bpf -Wall -Werror -Iebpf -I/usr/include/"$ma" -x c -c -o /dev/null - 2>&1; then
		echo "PASS: unit/abi_header (ebpf/inject_abi.h alone: gcc and clang -target bpf)"
	else
		echo "FAIL: unit/abi_header (ebpf/inject_abi.h does not compile alone)"
	fi 2>&1 | tee -a "$LOG"
fi

if [ "$TESTS" = all ] || [ "$TESTS" = profiles ] || [ "$TESTS" = unit ]; then
	echo "== profile tests (rdmactl validate: shipped profiles, broken corpus, --set)" | tee -a "$LOG"
	run_suite tests/profiles/run.sh '^(PASS|FAIL|SKIP):|^  '
	echo "== format tests (nccl-tests JSON, Perfetto trace events: other tools' readers)" | tee -a "$LOG"
	run_suite tests/formats/run.sh '^(PASS|FAIL|SKIP):|^  '
	echo "== habit tests (bash completion, man pages)" | tee -a "$LOG"
	run_suite tests/habits/run.sh '^(PASS|FAIL|SKIP):|^  '
	echo "== security tests (root-safety: hostile peers, profiles, reports, files; no VM)" | tee -a "$LOG"
	run_suite tests/security/run.sh '^(PASS|FAIL|SKIP):|^  '
	echo "== cluster tests (agents that join rdmactl: rdma-agent --join, rdmactl serve; no VM)" | tee -a "$LOG"
	run_suite tests/cluster/run.sh '^(PASS|FAIL|SKIP):|^  '
fi

if [ "$TESTS" = all ] || [ "$TESTS" = bpf ]; then
	echo "== bpf tests (BPF_PROG_TEST_RUN on crafted RoCEv2 frames, root, no VM)" | tee -a "$LOG"
	run_binaries bpf build/tests bpf_ tests/bpf/*.c 2>&1 | tee -a "$LOG"
	for s in tests/bpf/*.sh; do
		run_suite "$s" '^(PASS|FAIL|SKIP):|^  '
	done
fi

if [ "$TESTS" = all ] || [ "$TESTS" = fuzz ]; then
	echo "== fuzz (libFuzzer harnesses with ASan + UBSan, ${FUZZ_SECONDS:-10} s each)" | tee -a "$LOG"
	run_suite tests/fuzz/run.sh '^(PASS|FAIL|SKIP):|^    '
fi

if [ "$TESTS" = all ] || [ "$TESTS" = asan ]; then
	echo "== asan (unit tests, profile checks and a testbed run under ASan + UBSan; valgrind)" | tee -a "$LOG"
	run_suite tests/asan/run.sh '^(PASS|FAIL|SKIP):|^# '
fi

if [ "$TESTS" = all ] || [ "$TESTS" = softroce ]; then
	echo "== softroce tests (real rdma_rxe in the VM testbed)" | tee -a "$LOG"
	for s in tests/softroce/[0-9]*.sh; do
		# 95-scale is make test-scale's (the 60-minute CI has no room for it)
		[ "$s" = tests/softroce/95-scale.sh ] && continue
		# full output in the log; PASS/FAIL/SKIP and '#' notes on the terminal
		run_suite "$s" '^(PASS|FAIL|SKIP):|^# '
	done
fi

# scale: 256 agents on one rdmactl, an allreduce on 16 VMs (make test-scale)
if [ "$TESTS" = scale ]; then
	echo "== scale (256 agents on one rdmactl, a 16-node VM testbed)" | tee -a "$LOG"
	run_suite tests/softroce/95-scale.sh '^(PASS|FAIL|SKIP):|^# '
fi

# the injection suite again, on per-node VMs through the XDP switch
# (make test-switch-xdp; not part of all: the suite's shared-kernel run is)
if [ "$TESTS" = switch-xdp ]; then
	echo "== the injection suite through the XDP switch (per-node VMs, rdma-inject forward)" | tee -a "$LOG"
	export INJECT_SWITCH=xdp
	run_suite tests/softroce/30-inject.sh '^(PASS|FAIL|SKIP):|^# '
fi

run_summary
