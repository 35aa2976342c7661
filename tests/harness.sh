# SPDX-License-Identifier: MIT
# The runner's checks (sourced by tests/run.sh and tests/harness_test.sh):
# LOG is the caller's; TEST_TIMEOUT the seconds a suite may go without
# reporting a test; SUITE_CLEANUP what runs after a silent suite is killed.
TEST_TIMEOUT=${TEST_TIMEOUT:-900}
SUITE_CLEANUP=${SUITE_CLEANUP:-build/bin/rdmactl -q testbed down}

# a FAIL the runner itself found: in the log and on the terminal
runner_fail() { echo "FAIL: $1 ($2)" | tee -a "$LOG"; }

# run_binary KIND PATH: one compiled test, its exit code decides
run_binary() {
	local kind=$1 t=$2 n out rc
	n=$(basename "$t")
	out=$(timeout -k 10 "$TEST_TIMEOUT" "$t" 2>&1); rc=$?
	if [ $rc = 0 ]; then
		echo "PASS: $kind/$n ($(tail -n 1 <<< "$out"))"
	elif [ $rc = 77 ]; then
		echo "SKIP: $kind/$n ($(tail -n 1 <<< "$out"))"
	else
		echo "$out" | sed 's/^/    /'
		[ $rc = 124 ] && echo "FAIL: $kind/$n (timed out after ${TEST_TIMEOUT} s)" ||
			echo "FAIL: $kind/$n (exit $rc)"
	fi
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
			grep -qw -- "${t#"$prefix"/}" <<< " $declared " ||
				runner_fail "$t" "passed but not declared in the plan of $name"
		done
	fi
	[ "$rc" = 0 ] || runner_fail "$name/exit" "the suite exited $rc"
}

# run_suite FILE FILTER: a script suite, its lines matching FILTER shown as
# they come (all of them in the log), watched for silence, checked by plan
run_suite() {
	local s=$1 filter=$2 name out pid seen=0 total last rc alive
	name=$(basename "$s" .sh)
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
		if [ $((SECONDS - last)) -ge "$TEST_TIMEOUT" ]; then
			kill -TERM -- -"$pid" 2>/dev/null
			sleep 5
			kill -KILL -- -"$pid" 2>/dev/null
			runner_fail "$name/timeout" "no test reported for $TEST_TIMEOUT s: killed"
			$SUITE_CLEANUP >/dev/null 2>&1
			break
		fi
		sleep 1
	done
	wait "$pid"; rc=$?
	total=$(wc -l < "$out")
	[ "$total" -gt "$seen" ] && sed -n "$((seen + 1)),${total}p" "$out" | tee -a "$LOG" | grep -E "$filter"
	check_plan "$out" "$rc" "$name"
	rm -f "$out"
}

