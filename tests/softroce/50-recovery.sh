#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The recovery modes (issue 5) on the 3-node testbed: rc, lossy, hadamard,
# ec and sr (selective repeat, issue 16) side by side under the same real drops at every node's ingress, their
# exactness without loss, ec's rebuilds, never hanging at 20% loss or with a
# node cut off, and the training job's time to accuracy.
set -u
cd "$(dirname "$0")/../.."
. tests/softroce/lib.sh
C=$RDMACTL
TESTS="modes_exact wait_spin side_by_side_1pct real_gradients_1pct ec_rebuilds_single_losses fill_previous hang_free_20pct
       hang_free_flap late_writes_guarded train_tta_1pct train_seeds hadamard_pipeline modes_bad_input"

suite_up || exit 0
drop_all() { for i in 0 1 2; do "$C" inject add dev n$i ingress opcode data drop "$@" >/dev/null || return 1; done; }
flush() { "$C" inject flush >/dev/null; }
mode() { jq -c --arg m "$2" '.results[] | select(.mode == $m)' <<< "$1"; }
# for the tests that check data, not timing: a step times out only past 1 s
# (see modes_exact)
DATA_TIMEOUTS="--step_timeout_min 1s --step_timeout_max 2s"

# --- without loss: rc, lossy, ec and sr exact; hadamard within 1e-5 of the largest element.
# What is checked is the data path, not the step timeout: with no fault, a
# piece is "lost" only when the emulated CPUs pause a sender past the agreed
# timeout's 50 ms floor (a CI run on a host 2.5x slower than usual failed so),
# so the floor is raised as in ec_rebuilds_single_losses below
# shellcheck disable=SC2086
j=$("$C" -j collective allreduce --modes rc,lossy,hadamard,ec,sr --size 256k --iters 4 --rounds 1 --data gauss $DATA_TIMEOUTS 2>&1); rc=$?
if [ $rc = 0 ] && jq -e '[.results[] | .wrong == 0 and (.lost_pieces // 0) == 0] | all' <<< "$j" >/dev/null &&
	jq -e '.results[] | select(.mode == "hadamard") | .grad_error.linf_rel_max <= 1e-5' <<< "$j" >/dev/null; then
	pass modes_exact "$(jq -c '[.results[] | {mode, wrong, linf_rel: .grad_error.linf_rel_max}]' <<< "$j")"
else
	fail modes_exact "rc=$rc $(jq -c '[.results[] | {mode, wrong, lost_pieces, step_timeouts, linf_rel: .grad_error.linf_rel_max}]' <<< "$j" 2>/dev/null || head -c 400 <<< "$j")"
fi

# --- --wait spin (busy-poll) is exact too
# (every other test here runs the default, --wait event)
# shellcheck disable=SC2086
j=$("$C" -j collective allreduce --modes rc,lossy --size 256k --iters 4 --rounds 1 --wait spin $DATA_TIMEOUTS 2>&1); rc=$?
if [ $rc = 0 ] && jq -e '[.results[] | .wrong == 0 and (.lost_pieces // 0) == 0] | all' <<< "$j" >/dev/null; then
	pass wait_spin "$(jq -c '[.results[] | {mode, wrong, p50_ms: (.percentiles.p50_ns/1e6|floor)}]' <<< "$j")"
else
	fail wait_spin "rc=$rc $(head -c 400 <<< "$j")"
fi

# --- 1% Bernoulli drop of RoCE data packets at every node's ingress, a
# 256 KiB allreduce (SBS_SIZE; 1 MiB took 142 s of the suite, 256 KiB about
# a third: `rdmactl run profiles/quickstart.yaml` is the 1 MiB form), modes
# taking turns: RC's tail against the lossy modes', the lost fraction
# against the injected rate, and hadamard's error against lossy's. 100
# iterations an arm (300 step times with 3 ranks; with 90, p99 was the
# largest time). At 256 KiB a rank still sends about 340 data packets a
# step, so at 1% nearly every RC step waits for its timer, as at 1 MiB.
#
# What is claimed about time is what RC's recovery costs: its p50 and its
# p99 step are longer than lossy's and hadamard's by at least one of its
# ACK timeouts (rc_timeout 14: 4.096 us x 2^14 = 67.1 ms), each with 95%
# confidence: the lower end of the bootstrap interval of the difference
# (vs_first_arm, 4000 resamples of each arm's steps). RC's steps wait for
# its timer; the lossy modes' never do. The figures are in the message:
# here +698 ms at p99 (95% CI 663-744, 9.8 timeouts) and ~400 ms at p50.
# A bound on the p99 *ratio* (>= 2.0 and >= 1.8 until now) is a bound on
# the host's speed instead: under TCG a step takes the emulated CPUs' time
# (1 MiB without loss: ~120 ms here, 840 ms with qemu held to 0.6 of a
# CPU, the speed of a CI host that failed this test), while RC's extra
# time is its timer's, so the ratio fell to x1.26-1.48 there with nothing
# wrong. Nor can the difference's bound be several timeouts: on that host
# the lowest 95% lower ends seen were 144 ms at p99 and 167 ms at p50
# (hadamard, with rdmactl throttled too), the tail being the host's stalls
# as much as RC's timer.
# The p50 bound of one timeout is lossy's alone: lossy is the step with
# nothing added, so rc's median step less lossy's is what RC's timers cost.
# hadamard's transform and sr's resends cost time of their own (their p50
# was 11 and 19 ms above lossy's in a CI run that failed on this). When
# rc's median step holds one timeout, not two, their p50 lead is a timeout
# less that cost: that run had 95% lower ends of 79 ms for lossy, 68 for
# hadamard and 60 for sr, against 67.1. So for hadamard and sr the test
# claims a shorter p50 than rc's with 95% confidence, an own cost over
# lossy's p50 below one timeout (they never wait for RC's timer), and the
# p99 bound of one timeout.
# sr (selective repeat) is reliable too: no element wrong, nothing lost,
# every dropped piece resent (recovered_pieces about the drop rate). Where
# it lands between rc and lossy is in the message (p99, busbw).
RTO_NS=$((4096 << 14))
drop_all 1% || fail side_by_side_1pct "inject add failed"
SBS_SIZE=${SBS_SIZE:-256k}
j=$("$C" -j collective allreduce --modes rc,lossy,hadamard,sr --size "$SBS_SIZE" --iters 100 --rounds 3 --data laplace 2>&1); rc=$?
flush
if [ $rc = 0 ]; then
	# one arm against rc: ratio (CI), difference in ms (CI) and in timeouts (its CI's lower end)
	vs() { mode "$j" "$1" | jq -r --argjson t "$RTO_NS" '.vs_first_arm |
		"x\(.p99_ratio*100|round/100) (95% CI \(.p99_ratio_ci95[0]*100|round/100)-\(.p99_ratio_ci95[1]*100|round/100)), +\(.p99_diff_ns/1e6|round) ms (95% CI \(.p99_diff_ci95_ns[0]/1e6|round) to \(.p99_diff_ci95_ns[1]/1e6|round)) = \(.p99_diff_ci95_ns[0]/$t*10|floor/10)+ timeouts, p50 +\(.p50_diff_ns/1e6|round) ms (95% CI \(.p50_diff_ci95_ns[0]/1e6|round) to \(.p50_diff_ci95_ns[1]/1e6|round))"'; }
	rcp=$(mode "$j" rc | jq .percentiles.p99_ns); lp=$(mode "$j" lossy | jq .percentiles.p99_ns); hp=$(mode "$j" hadamard | jq .percentiles.p99_ns); sp=$(mode "$j" sr | jq .percentiles.p99_ns)
	# L-inf: each step's worst element error, averaged over the steps
	ll=$(mode "$j" lossy | jq .grad_error.linf_mean); hl=$(mode "$j" hadamard | jq .grad_error.linf_mean)
	msg="$(mode "$j" rc | jq .percentiles.count) step times an arm; p99 rc $((rcp/1000000)) ms, lossy $((lp/1000000)) ms, hadamard $((hp/1000000)) ms, sr $((sp/1000000)) ms; rc vs lossy $(vs lossy), rc vs hadamard $(vs hadamard), rc vs sr $(vs sr); busbw MB/s rc/lossy/hadamard/sr $(jq -c '[.results[] | .busbw_bytes_per_s/1e4|floor/100]' <<< "$j"); sr resent $(mode "$j" sr | jq .recovered_pieces) pieces, wrong $(mode "$j" sr | jq .wrong); p50 rc/lossy/hadamard/sr $(jq -c '[.results[] | .percentiles.p50_ns/1e6|floor]' <<< "$j") ms; lost $(mode "$j" lossy | jq '.lost_fraction*10000|floor/100')% / $(mode "$j" hadamard | jq '.lost_fraction*10000|floor/100')%; mean step L-inf lossy $ll hadamard $hl (worst $(mode "$j" lossy | jq .grad_error.linf_max) / $(mode "$j" hadamard | jq .grad_error.linf_max)); cosine $(mode "$j" lossy | jq .grad_error.cosine_mean) / $(mode "$j" hadamard | jq .grad_error.cosine_mean); retrans rc $(mode "$j" rc | jq .retransmissions); transform $(mode "$j" hadamard | jq -c '[.results[][] | .transform] | unique')"
	# cosine: the transform is orthonormal, so at equal loss the lost energy is
	# the same in expectation; hadamard must not be worse beyond noise
	lc=$(mode "$j" lossy | jq .grad_error.cosine_mean); hc=$(mode "$j" hadamard | jq .grad_error.cosine_mean)
	if awk -v ll="$ll" -v hl="$hl" -v lc="$lc" -v hc="$hc" 'BEGIN{exit !(hl * 5 <= ll && hc >= lc - 0.005)}' &&
		jq -e --argjson t "$RTO_NS" '(.results[] | select(.mode == "lossy") | .percentiles.p50_ns) as $lp |
			[.results[] | select(.mode != "rc") | .vs_first_arm.p99_diff_ci95_ns[0] >= $t and
			 if .mode == "lossy" then .vs_first_arm.p50_diff_ci95_ns[0] >= $t
			 else .vs_first_arm.p50_diff_ci95_ns[0] > 0 and .percentiles.p50_ns - $lp < $t end] |
			all and length == 3' <<< "$j" >/dev/null &&
		jq -e '[.results[] | select(.mode == "lossy" or .mode == "hadamard") | .lost_fraction >= 0.004 and .lost_fraction <= 0.025] | all' <<< "$j" >/dev/null &&
		mode "$j" sr | jq -e '.wrong == 0 and .lost_pieces == 0 and .verification_failed == false and
			.recovered_pieces >= 0.004 * .count * 4 * 342 * .size / 1048576' >/dev/null &&
		jq -e '.results[] | select(.mode == "rc") | .wrong == 0 and .retransmissions > 0' <<< "$j" >/dev/null; then
		pass side_by_side_1pct "$msg"
	else
		fail side_by_side_1pct "$msg"
	fi
else
	fail side_by_side_1pct "rc=$rc $(head -c 400 <<< "$j")"
fi

# --- the same on real gradients (--data grad: the train workload's MLP,
# each rank's own batches): there much of the energy sits in few packets, so
# zero-filled raw ranges lose a lot or nothing depending on where the packets
# fell, while the transform loses about the lost fraction every step. The
# transform is orthonormal: the lost energy, so the mean cosine, is the same
# in expectation (tests/unit/test_rht.c, 1200 losses paired: +0.00025,
# standard error 0.0002). What it changes is the spread: hadamard's worst step must have the
# higher cosine, its L-inf error must be 1/5 of lossy's or less, and its mean
# cosine no lower than lossy's beyond noise: 0.003 (a simulation of this
# ring at 1% on such gradients, 12 runs of 90 steps: hadamard - lossy =
# -0.0004 +- 0.0007 on one set of batches, +0.00003 on another: with fixed
# data, where each rank's energy sits relative to the ring's order of the
# chunks tilts lossy's expected loss either way. CI runs gave -0.0004,
# +0.0041, -0.0017). What is compared is the error at the drops' loss, not
# the step timeout: the timeout floor is raised as in modes_exact, so that a
# host pause (a CI host 2.5x slower than usual) does not lose whole steps
# A step that timed out measures a host pause, not the codec (CI: hadamard's
# one timed-out step made its worst cosine 0.0001 lower than lossy's): a
# measurement where any step timed out is taken again, up to 3 times in all,
# and only one without is judged; the note says how many were set aside
try=0 paused=0 j="" rc=1
while [ $try -lt 3 ]; do
	try=$((try + 1))
	drop_all 1% || { fail real_gradients_1pct "inject add failed"; break; }
	# shellcheck disable=SC2086
	j=$("$C" -j collective allreduce --modes lossy,hadamard --size 1M --iters 30 --rounds 3 --data grad \
		$DATA_TIMEOUTS 2>&1); rc=$?
	flush
	[ $rc = 0 ] || break
	jq -e '[.results[].step_timeouts] | add == 0' <<< "$j" >/dev/null && break
	paused=$((paused + 1))
done
if [ $rc = 0 ] && [ $paused = 3 ]; then
	fail real_gradients_1pct "every one of 3 measurements had a step time out (a host this loaded measures itself): $(jq -c '[.results[] | {mode, step_timeouts}]' <<< "$j")"
elif [ $rc = 0 ]; then
	msg=$(jq -c '[.results[] | {mode, lost: (.lost_fraction*10000|floor/100), step_timeouts, nmse: .grad_error.nmse_mean, linf: .grad_error.linf_mean, cosine: .grad_error.cosine_mean, cosine_min: .grad_error.cosine_min}]' <<< "$j")
	[ $paused -gt 0 ] && msg="$msg ($paused measurement(s) with a timed-out step set aside)"
	if jq -e '(.results | map({(.mode): .grad_error}) | add) as $g |
		$g.hadamard.linf_mean * 5 <= $g.lossy.linf_mean and $g.hadamard.cosine_min > $g.lossy.cosine_min and
		$g.hadamard.cosine_mean >= $g.lossy.cosine_mean - 0.003' <<< "$j" >/dev/null; then
		pass real_gradients_1pct "$msg"
	else
		fail real_gradients_1pct "$msg"
	fi
else
	fail real_gradients_1pct "rc=$rc $(head -c 400 <<< "$j")"
fi

# --- ec: with at most one loss per step (drop every 400th data packet; a
# step is about 390 packets) every loss is rebuilt from parity: exact result.
# What is checked is the rebuild, not the step timeout: a CI run lost 48
# pieces here with no second drop in any step, as a sender the emulated CPUs
# paused past the 50 ms floor of the agreed timeout would; the floor is
# raised so that only drops can lose pieces (step_timeouts says if one fired)
drop_all every 400 || fail ec_rebuilds_single_losses "inject add failed"
j=$("$C" -j collective allreduce --mode ec --ec_k 8 --ec_m 1 --size 1M --iters 8 --step_timeout_min 400ms 2>&1); rc=$?
drops=$("$C" -j inject stats | jq '[.rules[].counters.dropped] | add')
flush
if [ $rc = 0 ] && jq -e '.results[0] | .lost_pieces == 0 and .recovered_pieces > 0 and .wrong == 0' <<< "$j" >/dev/null; then
	pass ec_rebuilds_single_losses "$drops packets dropped, $(jq '.results[0].recovered_pieces' <<< "$j") pieces rebuilt, 0 lost, 0 wrong"
else
	fail ec_rebuilds_single_losses "rc=$rc drops=$drops $(jq -c '.results[0] | {lost_pieces, recovered_pieces, wrong, step_timeouts, count}' <<< "$j" 2>/dev/null || head -c 300 <<< "$j")"
fi

# --- fill=previous: a lost piece keeps its value from the iteration before.
# The collective sends the same input every iteration, so any earlier
# iteration's value is the right one, except the first's (zeros): after 3
# warm-up iterations a piece is wrong only if it was lost 4 times in a row
# (about 1e-5 per run), and the result is exact although 1% was lost (with
# zero fill, in the same run, it is not)
drop_all 1% || fail fill_previous "inject add failed"
jz=$("$C" -j collective allreduce --mode lossy --size 256k --iters 10 --data gauss 2>&1); rz=$?
jp=$("$C" -j collective allreduce --mode lossy --fill previous --size 256k --iters 10 --warmup 3 --data gauss 2>&1); rp=$?
flush
if [ $rz = 0 ] && [ $rp = 0 ] &&
	jq -e '.results[0] | .lost_fraction >= 0.004 and .wrong == 0 and .grad_error.nmse_max < 1e-9' <<< "$jp" >/dev/null &&
	jq -e '.results[0] | .grad_error.nmse_mean > 1e-3' <<< "$jz" >/dev/null; then
	pass fill_previous "$(jq -c '.results[0] | {fill: "previous", lost: .lost_fraction, wrong, nmse_max: .grad_error.nmse_max}' <<< "$jp") vs $(jq -c '.results[0] | {fill: "zero", lost: .lost_fraction, wrong, nmse: .grad_error.nmse_mean}' <<< "$jz")"
else
	fail fill_previous "rc=$rz/$rp $(head -c 300 <<< "$jp")"
fi

# --- 20% loss: every UC mode completes and reports about that much lost;
# sr completes exact, having resent about that much (a resend is lost at
# 20% too: several NACK rounds a step). 256 KiB on 3 ranks: 86 pieces a
# step, 4 steps an iteration
drop_all 20% || fail hang_free_20pct "inject add failed"
t0=$EPOCHREALTIME
j=$(timeout 300 "$C" -j collective allreduce --modes lossy,hadamard,ec,sr --size 256k --iters 6 --rounds 1 --data ints 2>&1); rc=$?
dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
flush
if [ $rc = 0 ] && jq -e '[.results[] | select(.mode != "sr") | .lost_fraction >= 0.05 and .lost_fraction <= 0.5] | all' <<< "$j" >/dev/null &&
	mode "$j" sr | jq -e '.wrong == 0 and .lost_pieces == 0 and .recovered_pieces >= 0.05 * .count * 4 * 86' >/dev/null; then
	pass hang_free_20pct "${dt}s: lost $(jq -c '[.results[] | {mode, lost: (.lost_fraction*1000|floor/10), resent: .recovered_pieces, wrong, p99_ms: (.percentiles.p99_ns/1e6|floor)}]' <<< "$j")"
else
	fail hang_free_20pct "rc=$rc ${dt}s $(head -c 400 <<< "$j")"
fi

# --- node1's traffic cut for 2 s (from the rule's start): the steps lose
# its pieces and go on. Then again for sr alone, without warm-up: it waits
# the cut out (its timer firing, backing off to the 300 ms cap) and ends
# exact
"$C" inject add dev sw1 egress opcode data flap 2s >/dev/null || fail hang_free_flap "inject add failed"
t0=$EPOCHREALTIME
j=$(timeout 300 "$C" -j collective allreduce --modes hadamard,ec --size 256k --iters 16 --rounds 1 --step_timeout_max 300ms 2>&1); rc=$?
dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
flush
"$C" inject add dev sw1 egress opcode data flap 2s >/dev/null || fail hang_free_flap "inject add failed"
js=$(timeout 300 "$C" -j collective allreduce --mode sr --size 256k --iters 16 --warmup 0 --step_timeout_max 300ms --data ints 2>&1); rs=$?
flush
if [ $rc = 0 ] && [ $rs = 0 ] && jq -e '[.results[] | .lost_pieces > 0] | any' <<< "$j" >/dev/null &&
	jq -e '.results[0] | .wrong == 0 and .lost_pieces == 0 and .recovered_pieces > 0 and .step_timeouts > 0' <<< "$js" >/dev/null; then
	pass hang_free_flap "${dt}s: $(jq -c '[.results[] | {mode, lost: (.lost_fraction*1000|floor/10), max_ms: (.percentiles.max_ns/1e6|floor)}]' <<< "$j"); $(jq -c '.results[0] | {mode, wrong, resent: .recovered_pieces, step_timeouts, max_ms: (.percentiles.max_ns/1e6|floor)}' <<< "$js")"
else
	fail hang_free_flap "rc=$rc/$rs ${dt}s $(head -c 400 <<< "$j") $(jq -c '.results[0] | {mode, wrong, lost_pieces, recovered_pieces, max_ns: .percentiles.max_ns}' <<< "$js" 2>/dev/null || head -c 400 <<< "$js")"
fi

# --- late writes (issue 16): 2% of the data packets held back 10-70 ms and
# 2% reordered (5 ms), so that lossy gives those pieces up (their step ends at its
# end marker) and their bytes come later. guard=off: they land (late_landed
# counts the pieces whose completion came after their step gave up, or in
# a later iteration: the hazard is real and the count sees it); guard=on
# (the default): each step's receive region is behind a memory window,
# rebound every iteration with a new key and revoked when its step gives
# up, so none lands, and the losses and errors agree iteration by
# iteration (no loss without a wrong element: every piece given up stayed
# so; no wrong element without a loss)
# (delay and reorder hold packets on an egress hook: the switch port toward
# each node delays, each node's own egress reorders)
for i in 0 1 2; do
	"$C" inject add dev sw$i egress opcode data delay 40ms 2% jitter 30ms uniform >/dev/null &&
		"$C" inject add dev n$i egress opcode data reorder 2% hold 5ms >/dev/null ||
		fail late_writes_guarded "inject add failed"
done
joff=$("$C" -j collective allreduce --mode lossy --guard off --size 256k --iters 20 --data ints 2>&1); roff=$?
jon=$("$C" -j collective allreduce --mode lossy --size 256k --iters 20 --data ints 2>&1); ron=$?
flush
late() { jq '[.results[0].results[][] | .late_landed] | add' <<< "$1"; }
if [ $roff = 0 ] && [ $ron = 0 ] && [ "$(late "$joff")" -gt 0 ] && [ "$(late "$jon")" = 0 ] &&
	jq -e '.results[0] | .lost_fraction > 0 and ([.results[][] | .revoked_steps] | add) > 0 and
		.accounting.loss_without_wrong == 0 and .accounting.wrong_without_loss == 0' <<< "$jon" >/dev/null; then
	pass late_writes_guarded "guard off: $(late "$joff") pieces landed late ($(jq -c '.results[0].accounting' <<< "$joff")); guard on: 0 landed, $(jq '[.results[0].results[][] | .revoked_steps] | add' <<< "$jon") steps revoked, lost $(jq '.results[0].lost_fraction*10000|floor/100' <<< "$jon")%, $(jq -c '.results[0].accounting' <<< "$jon"); p50 off/on $(jq '.results[0].percentiles.p50_ns/1e6|floor' <<< "$joff")/$(jq '.results[0].percentiles.p50_ns/1e6|floor' <<< "$jon") ms"
else
	fail late_writes_guarded "rc=$roff/$ron late off/on $(late "$joff" 2>/dev/null)/$(late "$jon" 2>/dev/null) $(jq -c '.results[0] | {lost_fraction, accounting}' <<< "$jon" 2>/dev/null || head -c 400 <<< "$jon")"
fi

# --- training at 1% loss, the short form: one run of rc (whose gradients
# are exact: the lossless run) against hadamard, 60 steps to 65% (the
# long form, four runs with the time-to-accuracy and network-cost claims at
# 95% confidence, is bench/train_tta.sh in `make bench`: 333 s here). Both
# finish; hadamard reaches the target, loses about the injected 1%, and its
# gradients stay close to the exact ones (cosine > 0.9 over >= 10 samples);
# each arm's allreduce time is part of its time to accuracy.
drop_all 1% || fail train_tta_1pct "inject add failed"
j=$("$C" -j train --modes rc,hadamard --steps 60 --target 65% 2>&1); rc=$?
flush
if [ $rc = 0 ] && [ -z "$(cmd_schema "$j")" ] && jq -e '[.results[] | .mode] == ["rc", "hadamard"] and
	(.results[1] | .tta_ns != null and .lost_fraction >= 0.004 and .lost_fraction <= 0.025 and
		.results[0][0].grad_error.samples >= 10 and .results[0][0].grad_error.cosine_mean > 0.9) and
	all(.results[] | select(.tta_ns != null); .tta_comm_ns > 0 and .tta_comm_ns <= .tta_ns)' <<< "$j" >/dev/null; then
	pass train_tta_1pct "$(jq -c '[.results[] | {mode, tta_s: ((.tta_ns // 0) / 1e9 * 100 | round / 100), tta_comm_s: ((.tta_comm_ns // 0) / 1e9 * 100 | round / 100), acc: .final_accuracy, lost: .lost_fraction}] + [{hadamard_cosine: .results[1].results[0][0].grad_error.cosine_mean}]' <<< "$j")"
else
	fail train_tta_1pct "rc=$rc $(jq -c '[.results[]? | {mode, tta_ns, tta_comm_ns, final_accuracy, lost_fraction, g: .results[0][0].grad_error}]' <<< "$j" 2>/dev/null || head -c 400 <<< "$j")"
fi

# --- seeds pooled: each mode trains with seeds 1 and 2 (the same seed for
# both modes of a round), the seeds really differ (their accuracies), and
# each arm reports them with their means; when both modes reach the target
# with every seed, the paired TTA ratio comes with its interval. (Two seeds
# of 16 steps to 30%: the pooling is what is checked; three of 24 took 85 s)
j=$("$C" -j train --modes rc,lossy --steps 16 --target 30% --seeds 2 --eval_every 4 2>&1); rc=$?
if [ $rc = 0 ] && [ -z "$(cmd_schema "$j")" ] && jq -e '.pooled | length == 2 and all(
		([.seeds[].seed] == [1, 2]) and
		(.tta_reached == ([.seeds[] | select(.tta_ns != null)] | length)) and
		(if .tta_reached == 2 then .tta_ns == (.tta_ns_mean | round) and (.tta_ns_ci95 | length == 2)
		 else .tta_ns == null end) and (.final_accuracy_ci95 | length == 2)) and
	([.[0].seeds[].final_accuracy] | unique | length > 1) and
	(if all(.tta_reached == 2) then .[1].vs_first_arm.tta_pairs == 2 and
		(.[1].vs_first_arm | .tta_ratio_ci95[0] <= .tta_ratio and .tta_ratio <= .tta_ratio_ci95[1])
	 else true end)' <<< "$j" >/dev/null &&
	[ "$(jq '[.results[] | .seed] | sort' <<< "$j" | jq -c .)" = "[1,1,2,2]" ]; then
	pass train_seeds "$(jq -c '[.pooled[] | {mode, seeds: [.seeds[] | {seed, tta_s: ((.tta_ns // 0) / 1e9 * 100 | round / 100), acc: .final_accuracy}], reached: .tta_reached, tta_mean_s: ((.tta_ns_mean // 0) / 1e9 * 100 | round / 100)}] + [{tta_ratio: .pooled[1].vs_first_arm.tta_ratio, ci95: .pooled[1].vs_first_arm.tta_ratio_ci95}]' <<< "$j")"
else
	fail train_seeds "rc=$rc $(jq -c '[.pooled[]? | {mode, seeds, tta_reached, tta_ns, tta_ns_mean, vs: .vs_first_arm.tta_ratio}]' <<< "$j" 2>/dev/null || head -c 400 <<< "$j")"
fi

# --- hadamard's pipeline (each rank's chunk transformed on its own, beside
# the transport): exact without loss at sizes whose chunks differ in length
# or are empty, and under 1% loss it completes with the loss reported and
# each step's transform and transport measured apart
ok=1 msg=""
for sz in 4 100 1000004; do
	j=$("$C" -j collective allreduce --mode hadamard --pipeline on --size $sz --iters 3 --data ints 2>&1) &&
		jq -e '.results[0] | .wrong == 0 and .grad_error.linf_rel_max <= 1e-5' <<< "$j" >/dev/null ||
		{ ok=0; msg="$msg size $sz: $(head -c 200 <<< "$j")"; }
done
drop_all 1% || ok=0
j=$("$C" -j collective allreduce --mode hadamard --pipeline on --size 1M --iters 10 --data laplace 2>&1); rc=$?
flush
if [ $ok = 1 ] && [ $rc = 0 ] && jq -e '.results[0] | .lost_fraction > 0.003 and .lost_fraction < 0.03 and
	.codec_ns.count == 30 and .codec_ns.p50_ns > 0 and .transport_ns.count == 30 and
	.transport_ns.p50_ns > .codec_ns.p50_ns' <<< "$j" >/dev/null; then
	pass hadamard_pipeline "exact at 4, 100 and 1000004 bytes; at 1% drop: $(jq -c '.results[0] | {lost: (.lost_fraction * 10000 | round / 100), p50_ms: (.percentiles.p50_ns / 1e6 | round), codec_p50_ms: (.codec_ns.p50_ns / 1e6 | round), transport_p50_ms: (.transport_ns.p50_ns / 1e6 | round)}' <<< "$j")"
else
	fail hadamard_pipeline "rc=$rc$msg $(head -c 300 <<< "$j")"
fi

# --- bad input: clear errors, exit 2 (usage) or 1 (the agent refused)
bad=0
for a in "--modes rc,bogus" "--modes rc,lossy --mode rc" "--modes rc,lossy --rounds 0" \
	 "--modes rc,lossy --iters 2 --rounds 3"; do
	# shellcheck disable=SC2086
	out=$("$C" collective allreduce $a 2>&1); rc=$?
	[ $rc = 2 ] && [ -n "$out" ] || { bad=1; echo "  '$a': rc=$rc $out"; }
done
for a in "--mode hadamard --block 100" "reduce_scatter --mode hadamard" "--mode ec --ec_k 200 --ec_m 100" \
	 "--mode lossy --fill sometimes" "--mode lossy --piece 1000" "--mode sr --guard maybe"; do
	set -- $a
	if [ "$1" = reduce_scatter ]; then op=reduce_scatter; shift; else op=allreduce; fi
	out=$("$C" collective "$op" "$@" --size 64k --iters 1 2>&1); rc=$?
	[ $rc != 0 ] && grep -q "block\|hadamard\|ec_k\|fill: unknown value\|piece 1000: not a multiple of the MTU\|guard: unknown value" <<< "$out" || { bad=1; echo "  '$a': rc=$rc $out"; }
done
out=$("$C" train --modes rc,nope 2>&1); rc=$?
[ $rc = 2 ] || { bad=1; echo "  train --modes rc,nope: rc=$rc $out"; }
[ $bad = 0 ] && pass modes_bad_input "10 bad collective invocations and 1 bad train refused with messages" ||
	fail modes_bad_input "see above"
# reached the end: a non-zero exit means the suite was cut short
exit 0
