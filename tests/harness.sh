# SPDX-License-Identifier: MIT
# The runner's checks (sourced by tests/run.sh and tests/harness_test.sh):
# LOG is the caller's; TEST_TIMEOUT the seconds a suite may go without
# reporting a test; RUN_DEADLINE the seconds (of $SECONDS) after which the
# whole run stops, every unfinished test failed; SUITE_CLEANUP what runs
# after a suite is killed; SKIP_REASONS the reviewed list of skips CI
# accepts (CI=true: any other skip is a failure).
TEST_TIMEOUT=${TEST_TIMEOUT:-900}
# a hung or crawling run stopped, well before the CI's 90 minutes. The
# suites took 3,150 to 3,350 s until the Slurm test and the Slurm image
# (2026-12-07: about 3,600 s, over the 60-minute target with the make
# deps and build of a clean clone, about 280 s: to be cut back); this
# leaves a slow host's run about 240 s above that before it fails
RUN_DEADLINE=${RUN_DEADLINE:-3840}
SUITE_CLEANUP=${SUITE_CLEANUP:-build/bin/rdmactl -q testbed down}
SKIP_REASONS=${SKIP_REASONS:-tests/skip-reasons}

# a FAIL the runner itself found: in the log and on the terminal
runner_fail() { echo "FAIL: $1 ($2)" | tee -a "$LOG"; }

# seconds left before the run's deadline (0: passed)
run_left() { local l=$((RUN_DEADLINE - SECONDS)); echo $((l > 0 ? l : 0)); }

# skip_ok WHY: a skip with this reason may pass (not CI, or a [key] of
# SKIP_REASONS first)
skip_ok() {
	local key
	[ "${CI:-}" = true ] || return 0
	key=$(sed -nE 's/^\[([a-z0-9-]+)\].*/\1/p' <<< "$1")
	[ -n "$key" ] && grep -qE "^$key[[:space:]]" "$SKIP_REASONS" 2>/dev/null
}
skip_fail_why() { echo "skipped under CI=true, and its reason is not one of $SKIP_REASONS: $1"; }

# check_skips OUT: every SKIP line of OUT that may not pass, failed
check_skips() {
	local line t why
	while IFS= read -r line; do
		t=${line#SKIP: }; t=${t%% *}
		why=${line#*(}; why=${why%)}
		skip_ok "$why" || runner_fail "$t" "$(skip_fail_why "$why")"
	done < <(grep '^SKIP: ' "$1")
}

# run_binary KIND PATH: one compiled test; passes when it exits 0 having
# made at least one check ("N checks, M failed", tests/unit/expect.h)
run_binary() {
	local kind=$1 t=$2 n out rc left checks why
	n=$(basename "$t")
	left=$(run_left)
	if [ "$left" = 0 ]; then
		echo "FAIL: $kind/$n (not started: the run's deadline of $RUN_DEADLINE s had passed)"
		return
	fi
	[ "$left" -gt "$TEST_TIMEOUT" ] && left=$TEST_TIMEOUT
	out=$(timeout -k 10 "$left" "$t" 2>&1); rc=$?
	checks=$(grep -oE '[0-9]+ checks, [0-9]+ failed' <<< "$out" | tail -n 1 | cut -d' ' -f1)
	if [ $rc = 0 ] && [ "${checks:-0}" -gt 0 ]; then
		echo "PASS: $kind/$n ($(tail -n 1 <<< "$out"))"
	elif [ $rc = 0 ]; then
		echo "FAIL: $kind/$n (exit 0 having checked nothing: no 'N checks' line, or 0)"
	elif [ $rc = 77 ]; then
		why=$(tail -n 1 <<< "$out" | sed 's/^SKIP: //')
		echo "SKIP: $kind/$n ($why)"
		skip_ok "$why" || echo "FAIL: $kind/$n ($(skip_fail_why "$why"))"
	else
		echo "$out" | sed 's/^/    /'
		[ $rc = 124 ] && echo "FAIL: $kind/$n (timed out after $left s)" ||
			echo "FAIL: $kind/$n (exit $rc)"
	fi
}

# run_binaries KIND DIR PREFIX SRC...: every test source has its binary,
# run; a missing one fails (a build that made none passed nothing)
run_binaries() {
	local kind=$1 dir=$2 prefix=$3 src b
	shift 3
	for src; do
		b=$dir/$prefix$(basename "$src" .c)
		if [ -x "$b" ]; then
			run_binary "$kind" "$b"
		else
			echo "FAIL: $kind/$(basename "$b") (not built: $b is missing; make test-unit builds it)"
		fi
	done
}

# run_summary: the counts of LOG, the line CI reads last
run_summary() {
	local pass fail skip
	pass=$(grep -c '^PASS:' "$LOG")
	fail=$(grep -c '^FAIL:' "$LOG")
	skip=$(grep -c '^SKIP:' "$LOG")
	echo
	if [ "$fail" -gt 0 ]; then
		echo "failed:"
		grep '^FAIL:' "$LOG" | sed 's/^FAIL: /  /'
	fi
	if [ "$skip" -gt 0 ]; then
		echo "skipped ($skip):"
		grep '^SKIP:' "$LOG" | sed 's/^SKIP: /  /'
	fi
	if grep -q '^time: ' "$LOG"; then
		echo "wall time by suite (s):"
		grep '^time: ' "$LOG" | sed 's/^time: /  /'
	fi
	echo "full log: $LOG"
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

# check_plan OUT RC NAME: the suite's report against its plan and exit code
check_plan() {
	local out=$1 rc=$2 name=$3 prefix declared t reported
	if ! grep -q '^PLAN: ' "$out"; then
		runner_fail "$name/plan" "no PLAN line: the suite declares no tests"
	else
		read -r prefix declared <<< "$(grep -m1 '^PLAN: ' "$out" | cut -d' ' -f2-)"
		reported=$(grep -E '^(PASS|FAIL|SKIP): ' "$out" | cut -d' ' -f2 | sed 's/:$//')
		for t in $declared; do
			grep -qxF "$prefix/$t" <<< "$reported" ||
				runner_fail "$prefix/$t" "declared in the plan, never reported"
		done
		for t in $(grep '^PASS: ' "$out" | cut -d' ' -f2); do
			# exactly a declared name under the plan's prefix (not a word of one;
			# a prefix may hold a '/': bpf/inject_cli)
			[[ $t == "$prefix/"* ]] && [[ " $declared " == *" ${t#"$prefix"/} "* ]] ||
				runner_fail "$t" "passed but not declared in the plan of $name"
		done
	fi
	check_skips "$out"
	[ "$rc" = 0 ] || runner_fail "$name/exit" "the suite exited $rc"
}

# run_suite FILE FILTER: a script suite, its lines matching FILTER shown as
# they come (all of them in the log), watched for silence, checked by plan
run_suite() {
	local s=$1 filter=$2 name out pid seen=0 total last rc alive t0=$SECONDS
	name=$(basename "$s" .sh)
	[ "$name" = run ] && name=$(basename "$(dirname "$s")")
	if [ "$(run_left)" = 0 ]; then
		runner_fail "$name/deadline" "not started: the run's deadline of $RUN_DEADLINE s had passed"
		return
	fi
	out=$(mktemp)
	setsid bash "$s" > "$out" 2>&1 &
	pid=$!
	last=$SECONDS
	while :; do
		kill -0 "$pid" 2>/dev/null && alive=1 || alive=0
		total=$(wc -l < "$out")
		if [ "$total" -gt "$seen" ]; then
			sed -n "$((seen + 1)),${total}p" "$out" | tee -a "$LOG" | grep -E "$filter"
			sed -n "$((seen + 1)),${total}p" "$out" | grep -qE '^(PASS|FAIL|SKIP): ' && last=$SECONDS
			seen=$total
		fi
		[ $alive = 1 ] || break
		if [ $((SECONDS - last)) -ge "$TEST_TIMEOUT" ] || [ "$(run_left)" = 0 ]; then
			kill -TERM -- -"$pid" 2>/dev/null
			sleep 5
			kill -KILL -- -"$pid" 2>/dev/null
			if [ "$(run_left)" = 0 ]; then
				runner_fail "$name/deadline" "stopped at the run's deadline of $RUN_DEADLINE s: its unreported tests fail"
			else
				runner_fail "$name/timeout" "no test reported for $TEST_TIMEOUT s: killed"
			fi
			$SUITE_CLEANUP >/dev/null 2>&1
			break
		fi
		sleep 1
	done
	wait "$pid"; rc=$?
	total=$(wc -l < "$out")
	[ "$total" -gt "$seen" ] && sed -n "$((seen + 1)),${total}p" "$out" | tee -a "$LOG" | grep -E "$filter"
	check_plan "$out" "$rc" "$name"
	echo "time: $name $((SECONDS - t0))" | tee -a "$LOG"
	rm -f "$out"
}

