#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Other tools' formats without a testbed, from the golden reports of real
# runs (tests/unit/golden): nccl-tests' -J JSON read with nccl-tests' own
# field names, the Perfetto trace (Trace Event Format) against its strict
# schema and Perfetto's nesting rule (tests/formats/check.py, python3 and
# python3-jsonschema); each checker shown to refuse a broken file; the
# formats refused where they do not apply; report.html of the three in
# headless Chromium (tests/html/check.js), and that checker shown to
# refuse broken pages. 60-run checks a live run's.
set -u
cd "$(dirname "$0")/../.."
SUITE=formats
. tests/softroce/lib.sh
C=$RDMACTL
PY=/usr/bin/python3
plan nccl_tests_json perfetto_json checkers_refuse format_errors compare_runs report_html_browser
W=$(mktemp -d /tmp/rtb-formats.XXXXXX)
trap 'rm -rf "$W"' EXIT
for n in collective train kv; do
	mkdir "$W/$n" && cp "tests/unit/golden/$n.report.json" "$W/$n/report.json"
done

if "$C" report "$W/collective" --format nccl-tests > "$W/nccl.json" &&
	out=$("$PY" tests/formats/check.py nccl-tests "$W/nccl.json" "$W/collective/report.json" 2>&1); then
	pass nccl_tests_json "$out"
else
	fail nccl_tests_json "${out:-rdmactl report failed}"
fi

ok=1 msg=""
for n in collective train kv; do
	if "$C" report "$W/$n" --format perfetto > "$W/$n/perfetto.json" &&
		o=$("$PY" tests/formats/check.py perfetto "$W/$n/perfetto.json" "$W/$n/report.json" 2>&1); then
		msg+="$n: $o; "
	else
		ok=0 msg+="$n FAILED: $o; "
	fi
done
[ $ok = 1 ] && pass perfetto_json "$msg" || fail perfetto_json "$msg"

# the checkers fail where they should: a renamed nccl-tests key, a wrong
# bus bandwidth, an unknown phase, two slices that overlap on one track
ok=1 msg=""
jq '.results[0].out_of_place |= (.busbw = .bus_bw | del(.bus_bw))' "$W/nccl.json" > "$W/b1.json"
jq '.results[1].out_of_place.bus_bw *= 1.01' "$W/nccl.json" > "$W/b2.json"
jq '.traceEvents += [{"name": "x", "ph": "B", "ts": 0, "pid": 1, "tid": 1}]' "$W/collective/perfetto.json" > "$W/b3.json"
jq '([.traceEvents[] | select(.ph == "X" and .pid == 1)][0]) as $a | .traceEvents += [$a | .ts += .dur / 2 | .dur = .dur]' \
	"$W/collective/perfetto.json" > "$W/b4.json"
for b in "nccl-tests b1" "nccl-tests b2" "perfetto b3" "perfetto b4"; do
	set -- $b
	if o=$("$PY" tests/formats/check.py "$1" "$W/$2.json" "$W/collective/report.json" 2>&1); then
		ok=0 msg+="$2 passed: $o; "
	else
		msg+="$2: ${o:0:90}; "
	fi
done
[ $ok = 1 ] && pass checkers_refuse "$msg" || fail checkers_refuse "$msg"

out=$("$C" report "$W/kv" --format nccl-tests 2>&1); rc=$?
out2=$("$C" report "$W/kv" --format perftext 2>&1); rc2=$?
if [ $rc = 1 ] && grep -q "for collective runs; this one is 'kv'" <<< "$out" &&
	[ $rc2 = 2 ] && grep -q "expected text|json|csv|html|junit|nccl-tests|perfetto" <<< "$out2"; then
	pass format_errors "kv as nccl-tests: exit 1, $out; unknown format: exit 2"
else
	fail format_errors "rc=$rc $out; rc2=$rc2 $out2"
fi

# rdmactl report A B C: a run against itself changes nothing (0%, an
# interval around 0); a run whose step times are all twice as long shows
# +100% on every percentile with an interval that holds it; arms only one
# run has are listed; text, JSON and an HTML page Python's parser reads
mkdir "$W/slow"
jq '.arms |= map(.time_hist_ns.buckets |= map([(.[0] + 128), .[1]]) |
	.time_hist_ns.min_ns *= 2 | .time_hist_ns.max_ns *= 2 |
	.percentiles |= with_entries(if (.key | endswith("_ns")) then .value *= 2 else . end))' \
	"$W/collective/report.json" > "$W/slow/report.json"
j=$("$C" report "$W/collective" "$W/collective" "$W/slow" "$W/kv" --format json 2>&1)
txt=$("$C" report "$W/collective" "$W/slow" 2>&1)
"$C" report "$W/collective" "$W/slow" --format html > "$W/cmp.html" 2>&1
html=$("$PY" -c 'import sys, html.parser
class P(html.parser.HTMLParser):
    rows = 0
    def handle_starttag(self, t, a):
        if t == "tr": P.rows += 1
P().feed(open(sys.argv[1]).read()); print(P.rows)' "$W/cmp.html" 2>&1)
p50=$(jq -c '[.arms[] | select(.name == "rc") | .metrics[] | select(.metric == "p50_ns") |
	.change_pct[1], .ci95_pct[1], .change_pct[2], .ci95_pct[2]]' <<< "$j" 2>/dev/null)
if jq -e '(.runs | length) == 4 and ([.arms[].name] | index("rc") != null) and
	([.arms[] | select(.metrics | length > 0)] | length) == ([.arms[]] | length) and
	all(.arms[] | select(.name == "rc") | .metrics[] | select(.metric == "p50_ns");
	    .change_pct[1] == 0 and .ci95_pct[1][0] <= 0 and .ci95_pct[1][1] >= 0 and
	    (.change_pct[2] > 99 and .change_pct[2] < 101) and .ci95_pct[2][0] <= 100 and .ci95_pct[2][1] >= 99 and
	    .values[3] == null)' <<< "$j" >/dev/null &&
	grep -qE '^  rc +p50_ns .* \+100\.[0-9]% \[' <<< "$txt" && [ "${html:-0}" -ge 10 ]; then
	pass compare_runs "rc p50: itself, slowed x2 [change, interval]: $p50; $(jq '[.arms[].name] | length' <<< "$j") arms over 4 runs (kv's own listed); html $html rows"
else
	fail compare_runs "$p50 | $(head -c 400 <<< "$j") | $(grep p50 <<< "$txt" | head -2)"
fi

# --- report.html in headless Chromium: every chart of the three golden
# runs' pages drawn, ticks, units, hover, legends, zoom, per-rank views
# (tests/html/check.js); then pages it must refuse: a script error, a
# timeline whose data is not report.json's, a chart missing, and a page
# that fetches from the network (it must open offline)
CHROME=$(command -v chromium || true)
if [ -z "$CHROME" ] || [ ! -d tests/html/node_modules/playwright-core ]; then
	fail report_html_browser "no chromium or no tests/html/node_modules (make deps)"
else
	ok=1 msg=""
	for n in collective train kv; do
		"$C" report "$W/$n" --format html > "$W/$n/report.html"
		if o=$(CHROMIUM="$CHROME" timeout 120 node tests/html/check.js "$W/$n/report.html" \
			--charts "$(charts_of "$W/$n/report.html")" 2>&1); then
			msg+="$n: $o; "
		else
			ok=0 msg+="$n FAILED: $o; "
		fi
	done
	b=$W/bad && mkdir -p "$b/1" "$b/2" "$b/3" "$b/4"
	for i in 1 2 3 4; do cp "$W/collective/report.json" "$b/$i/"; done
	p=$W/collective/report.html
	sed 's|</body></html>|<script>undefinedFunction();</script></body></html>|' "$p" > "$b/1/report.html"
	# the timeline's first point moved by 1 ms: no longer the intervals' p50
	"$PY" -c 'import re, sys
s = open(sys.argv[1]).read()
i = s.index("\"id\":\"timeline\"")
j = s.index("\"points\":[[", i) + len("\"points\":[[")
k = s.index("]", j)
x, y = s[j:k].split(",")
open(sys.argv[2], "w").write(s[:j] + x + "," + repr(float(y) + 1) + s[k:])' "$p" "$b/2/report.html"
	cp "$p" "$b/3/report.html"
	sed 's|</body></html>|<img src="http://198.18.0.1/x.png"></body></html>|' "$p" > "$b/4/report.html"
	for i in 1 2 3 4; do
		want=$(charts_of "$p")
		[ $i = 3 ] && want+=",training"
		if o=$(CHROMIUM="$CHROME" timeout 120 node tests/html/check.js "$b/$i/report.html" --charts "$want" 2>&1); then
			ok=0 msg+="broken page $i passed: $o; "
		else
			msg+="broken page $i: ${o:0:110}; "
		fi
	done
	[ $ok = 1 ] && pass report_html_browser "$msg" || fail report_html_browser "$msg"
fi
