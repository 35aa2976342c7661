#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Training's time to accuracy at 1% loss, the long form of 50-recovery's
# train_tta_1pct (about 6 minutes under TCG): four runs of rc against
# hadamard, their figures pooled, and the claims held at 95% confidence.
# Brings a testbed up if none is, and takes it down again.
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
C=$RDMACTL
RTO_NS=$((4096 << 14))
drop_all() { for i in 0 1 2; do "$C" inject add dev n$i ingress opcode data drop "$@" >/dev/null || return 1; done; }
flush() { "$C" inject flush >/dev/null; }
trap 'flush 2>/dev/null; cleanup' EXIT

echo "# training to 65% at 1% drop: rc against hadamard, 4 runs pooled"
# --- training at 1% loss: rc (whose gradients are exact: the lossless run)
# against hadamard, four times, the runs' times to accuracy pooled.
# hadamard reaches the target every time, ends within 1 point of rc's
# accuracy (the mean of the runs' differences), gets there sooner on the
# training clock, and spends at least 1.5x less time in the allreduce on
# the way (tta_comm_ns: the part of the TTA spent in the allreduce, codec
# included). The 1.5 is held on the allreduce's share because that is what
# the recovery mode decides: the model's gradient and update cost the same
# in both arms, and under TCG they run on softfloat, so on a slower host
# they grow with the host (compute 65 ms a step here, 99-131 ms in a CI
# run) while rc's retransmission waits do not; that CI run's wall-clock
# ratio was 1.50 with an allreduce ratio of 1.73. 60 steps a run (four runs
# of 120 steps took 1160 s under TCG, past the runner's 900 s for one test,
# CI t11); the learning rate's cosine then ends at step 60 and the curve
# pauses between ~67% and ~71% from step 25 to 35. The target is 65%, on
# the steep part before that pause (61% at step 20, 67.5% at 25, every run,
# either mode): at 70%, in the pause, a hadamard run crossed anywhere from
# step 25 to 36 (rc at 29, the same every run), so one run's ratio moved by
# a third with no change in speed. rc's curve is the same every run; what
# varies is the clock.
# What the network costs: RC's allreduce against hadamard's transport (its
# allreduce without the transform, which is the computer's cost and is
# reported apart as codec) must be longer by at least one RC ACK timeout a
# step, at 95% confidence over the runs (t interval, 3 degrees of freedom;
# here 329.6 ms more, 4.4 timeouts at the interval's low end; with qemu
# held to 0.6 of a CPU 287.8 ms, 2.4). A ratio of the two (>= 1.5 until
# now) is a bound on the host's speed: there every part of a step but RC's
# timer took 4-5x longer and the ratio was 1.25.
TTA_RUNS=4	# the t interval below takes 3.182 for its 3 degrees of freedom
drop_all 1% || { echo "inject add failed"; exit 1; }
jall="" rcs=""
for _ in $(seq $TTA_RUNS); do
	jk=$("$C" -j train --modes rc,hadamard --steps 60 --target 65% 2>&1); rcs="$rcs$?"
	jall="$jall$jk"
done
flush
if [ "$rcs" = "$(printf '0%.0s' $(seq $TTA_RUNS))" ]; then
	j=$(jq -s '{runs: [.[] | [.results[] | {mode, tta_s: ((.tta_ns // 0)/1e9),
			tta_comm_s: ((.tta_comm_ns // 0)/1e9), acc: .final_accuracy,
			step_p50_ms: (.percentiles.p50_ns/1e6|floor), lost: .lost_fraction,
			rank0_ms: (.results[0][0] | {compute: (.compute_ns_mean/1e6|floor),
				comm: (.comm_ns_mean/1e6|floor), codec: (.codec_ns_mean/1e6|floor)})}]],
		    tta_ratio: (([.[] | .results[0].tta_ns] | add) / ([.[] | .results[1].tta_ns // 1e18] | add)),
		    tta_comm_ratio: (([.[] | .results[0].tta_comm_ns // 0] | add) /
				     ([.[] | .results[1].tta_comm_ns // 1e18] | add)),
		    transport_diff_ms: [.[] | ((([.results[0].results[][] | .comm_ns_mean] | add / length) -
				([.results[1].results[][] | .comm_ns_mean - .codec_ns_mean] | add / length)) / 1e5 | round / 10)],
		    transform: ([.[] | .results[1].results[][] | .transform] | unique),
		    reached: ([.[] | .results[1].tta_ns != null] | all),
		    acc_diff_mean: (([.[] | .results[1].final_accuracy - .results[0].final_accuracy] | add) / length),
		    hadamard_gradient_vs_exact: (.[0].results[1].results[0][0].grad_error | {samples, nmse_mean, cosine_mean})}' \
		<<< "$jall")
	# the difference's mean and the low end of its 95% t interval (4 runs: t 3.182)
	j=$(jq -c --argjson t "$RTO_NS" '.transport_diff_ms as $d | ($d | add / length) as $m |
		(($d | map((. - $m) * (. - $m)) | add) / (($d | length) - 1) | sqrt) as $s |
		. + {transport_diff_mean_ms: ($m*10|round/10), transport_diff_ci95_low_ms: (($m - 3.182 * $s / 2)*10|round/10),
		     in_timeouts: (($m - 3.182 * $s / 2) * 1e6 / $t * 10 | floor / 10)}' <<< "$j")
	if jq -e '.reached and .tta_ratio > 1 and .in_timeouts >= 1 and (.acc_diff_mean | fabs) <= 0.01 and
		.hadamard_gradient_vs_exact.samples >= 10 and .hadamard_gradient_vs_exact.cosine_mean > 0.9' <<< "$j" >/dev/null; then
		echo "holds: $(jq -c . <<< "$j")"
	else
		echo "DOES NOT HOLD: $(jq -c . <<< "$j")"
		exit 1
	fi
else
	echo "a run failed: exit codes $rcs $(head -c 300 <<< "$jall")"
	exit 1
fi

