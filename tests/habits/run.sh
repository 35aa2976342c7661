#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The habits users bring (issue 19), without a testbed: bash completion for
# rdmactl, rdma-inject and rdma-agent, driven the way bash drives it
# (COMP_WORDS, COMP_CWORD, then the function complete -p names), against
# the built programs; node names from a testbed state (a fake one: its
# agents unreachable, as status shows them). Man pages (build/man, from the
# programs' help): groff finds nothing to warn about, and every option of
# every help is on its rendered page; make install puts pages and
# completion where man and bash-completion look. The docs: the generated
# parts of docs/report.md are what make docs writes, every metric has its
# meaning, every link between the pages reaches a file, and the sentences
# stay short (tests/habits/sentences.py says the bounds and why).
set -u
cd "$(dirname "$0")/../.."
SUITE=habits
. tests/softroce/lib.sh
plan complete_objects complete_options complete_values complete_set_keys complete_nodes \
     complete_inject complete_agent man_pages install_places openmetrics docs_fresh docs_links docs_sentences \
     structure
W=$(mktemp -d /tmp/rtb-habits.XXXXXX)
trap 'rm -rf "$W"' EXIT
export PATH="$PWD/build/bin:$PATH"
# shellcheck source=/dev/null
. scripts/completion.bash

# comp WORD... : what completing the last word offers, one a line
comp() {
	local fn
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="$*"
	COMPREPLY=()
	fn=$(complete -p "$1" | awk '{ print $(NF - 1) }')
	"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}"
}
has() {	# has OUTPUT WORD...: every word a line of OUTPUT
	local o=$1 w
	shift
	for w; do grep -qxF -- "$w" <<< "$o" || { echo "missing $w"; return 1; }; done
}

o=$(comp rdmactl "") o2=$(comp rdmactl -j r)
if has "$o" testbed run report validate p2p collective inject tui analyze >/dev/null &&
	[ "$(sort <<< "$o2" | tr '\n' ' ')" = "report run " ]; then
	pass complete_objects "$(wc -l <<< "$o") objects; 'rdmactl -j r' -> $(tr '\n' ' ' <<< "$o2")"
else
	fail complete_objects "$o | $o2"
fi

o=$(comp rdmactl p2p lat --o) o2=$(comp rdmactl run x.yaml --)
if has "$o" --op --op_timeout >/dev/null && ! grep -q -- --size <<< "$o" &&
	has "$o2" --set --expect --junit --keep --trace >/dev/null; then
	pass complete_options "p2p --o: $(tr '\n' ' ' <<< "$o"); run: $(tr '\n' ' ' <<< "$o2")"
else
	fail complete_options "$o | $o2"
fi

o=$(comp rdmactl report runs/x --format "") o2=$(comp rdmactl p2p lat --op "")
o3=$(comp rdmactl testbed up --accel "") o4=$(comp rdmactl testbed "")
if has "$o" text json csv html junit nccl-tests perfetto >/dev/null && has "$o2" write read send cas faa >/dev/null &&
	has "$o3" auto kvm tcg >/dev/null && has "$o4" up status down exec cp >/dev/null; then
	pass complete_values "--format: $(tr '\n' ' ' <<< "$o"); --op: $(tr '\n' ' ' <<< "$o2"); --accel: $(tr '\n' ' ' <<< "$o3")"
else
	fail complete_values "$o | $o2 | $o3 | $o4"
fi

o=$(comp rdmactl run profiles/quickstart.yaml --set run.) o2=$(comp rdmactl run --set arms.1.m)
bad=""
while IFS= read -r k; do	# every offered key taken by --set
	rdmactl validate profiles/quickstart.yaml --set "$k" >/dev/null 2>&1 || bad+="$k; "
done < <(rdmactl validate --keys profiles/quickstart.yaml)
nk=$(rdmactl validate --keys profiles/quickstart.yaml | wc -l)
if has "$o" run.iters=100 run.rounds=2 run.warmup=2 >/dev/null && [ -z "$o2" ] && [ -z "$bad" ] && [ "$nk" -ge 20 ] &&
	has "$(comp rdmactl validate profiles/quickstart.yaml --set faults.0.r)" 'faults.0.rule=opcode\ data\ drop\ 1%' >/dev/null; then
	pass complete_set_keys "quickstart's: $(tr '\n' ' ' <<< "$o")(all $nk keys --keys offers taken by --set; a value with spaces kept whole); no profile on the line: nothing"
else
	fail complete_set_keys "$o | $o2 | refused: $bad"
fi

SD=$W/state
mkdir -m 0700 "$SD"
jq -n '{schema_version: 1, backend: "vm", nodes_n: 2, mtu: 1024, netdev_mtu: 1100, qemu_pid: 0, accel: "tcg",
	accel_why: "test", kernel: "test", up_s: 1, image_s: 0, boot_s: 1, image_built: false,
	nodes: [{name: "node0", dev: "rxe0", host: "127.0.0.1", port: 1, agent_pid: 0},
		{name: "node1", dev: "rxe1", host: "127.0.0.1", port: 1, agent_pid: 0}]}' > "$SD/testbed.json"
(umask 077; echo 0123456789abcdef0123 > "$SD/token")
o=$(RDMATB_STATE_DIR=$SD comp rdmactl counters --node "") o2=$(RDMATB_STATE_DIR=$SD comp rdmactl testbed exec n)
if [ "$(tr '\n' ' ' <<< "$o")" = "node0 node1 " ] && [ "$(tr '\n' ' ' <<< "$o2")" = "node0 node1 " ]; then
	pass complete_nodes "--node: $(tr '\n' ' ' <<< "$o"); testbed exec: $(tr '\n' ' ' <<< "$o2")"
else
	fail complete_nodes "$o | $o2"
fi

o=$(comp rdma-inject "") o2=$(comp rdma-inject add dev lo ingress opcode "") o3=$(comp rdma-inject add dev "")
o4=$(comp rdmactl inject --node node0 "") o5=$(comp rdma-inject add dev lo ingress du)
if has "$o" add run del set list stats seed flush probe track qps trace >/dev/null &&
	has "$o2" data read_req read_resp ack nak atomic cnp other >/dev/null && has "$o3" lo >/dev/null &&
	has "$o4" add del list >/dev/null && [ "$o5" = duplicate ]; then
	pass complete_inject "commands: $(tr '\n' ' ' <<< "$o"); opcode: $(tr '\n' ' ' <<< "$o2")"
else
	fail complete_inject "$o | $o2 | $o3 | $o4"
fi

o=$(comp rdma-agent --) o2=$(comp rdma-agent --token-file "$W/st")
if has "$o" --dev --no-rdma --ib-port --gid-index --listen --token-file --name --list >/dev/null &&
	[ "$o2" = "$W/state" ]; then
	pass complete_agent "$(tr '\n' ' ' <<< "$o"); --token-file: a file"
else
	fail complete_agent "$o | $o2"
fi

# man pages: no groff warning; every --option of each program's help (and
# of every rdmactl object's) on its rendered page
ok=1 msg=""
for m in rdmactl rdma-inject rdma-agent rdma-run; do
	f=build/man/$m.1
	[ -s "$f" ] || { ok=0 msg+="$m: no page; "; continue; }
	w=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
	[ -z "$w" ] || { ok=0 msg+="$m: groff: ${w:0:120}; "; }
	page=$(MANWIDTH=200 man -l "$f" 2>/dev/null | col -b)
	case $m in
	rdmactl) help=$( { rdmactl help; for o in $(rdmactl help | awk '/^  [a-z]/ { print $1 }'); do
			[ "$o" = inject ] || [ "$o" = testbed ] || rdmactl "$o" -h; done; rdmactl testbed up -h; } 2>&1) ;;
	rdma-agent) help=$( { rdma-agent -h; rdma-agent --list; } 2>&1) ;;
	*) help=$("$m" -h 2>&1) ;;
	esac
	n=0
	for o in $(grep -oE -- '--[a-z][a-z0-9_-]+' <<< "$help" | sort -u); do
		n=$((n + 1))
		grep -qF -- "$o" <<< "$page" || { ok=0 msg+="$m: $o missing; "; }
	done
	msg+="$m: $n options, $(wc -l <<< "$page") lines; "
done
[ $ok = 1 ] && pass man_pages "$msg" || fail man_pages "$msg"

out=$(make -s install DESTDIR="$W/inst" PREFIX=/usr 2>&1)
if [ -s "$W/inst/usr/share/man/man1/rdmactl.1" ] && [ -s "$W/inst/usr/share/man/man1/rdma-inject.1" ] &&
	cmp -s scripts/completion.bash "$W/inst/usr/share/bash-completion/completions/rdmactl" &&
	cmp -s scripts/completion.bash "$W/inst/usr/share/bash-completion/completions/rdma-agent" &&
	man -w -M "$W/inst/usr/share/man" rdma-agent >/dev/null 2>&1; then
	pass install_places "man -M finds the pages; completion in share/bash-completion/completions/{rdmactl,rdma-inject,rdma-agent}"
else
	fail install_places "$out $(find "$W/inst" -type f | head)"
fi

# rdma-agent --metrics: an OpenMetrics endpoint read by Prometheus' own
# parser (python3-prometheus-client, strict OpenMetrics); 404 elsewhere,
# 405 for anything but GET; off unless asked (no second port listens)
(umask 077; echo 0123456789abcdef0123 > "$W/tok")
build/bin/rdma-agent --no-rdma --token-file "$W/tok" --listen 127.0.0.1:47991 --metrics 127.0.0.1:47992 \
	> "$W/agent.log" 2>&1 &
ap=$!
build/bin/rdma-agent --no-rdma --token-file "$W/tok" --listen 127.0.0.1:47993 > "$W/agent2.log" 2>&1 &
ap2=$!
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:47992/metrics && break; sleep 0.1; done
fam=$(curl -s http://127.0.0.1:47992/metrics | /usr/bin/python3 -c '
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse
print(" ".join("%s:%s:%d" % (f.name, f.type, len(f.samples)) for f in parse(sys.stdin.read())))' 2>&1)
c404=$(curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:47992/)
c405=$(curl -s -X POST -o /dev/null -w "%{http_code}" http://127.0.0.1:47992/metrics)
ctype=$(curl -s -o /dev/null -w "%{content_type}" http://127.0.0.1:47992/metrics)
other=$(ss -ltnpH 2>/dev/null | grep -c "pid=$ap2,")	# without --metrics: its control port alone
kill $ap $ap2; wait $ap $ap2 2>/dev/null
if [[ $fam == *"rdma_agent:info:1"* && $fam == *"rdma_agent_arms:gauge:4"* && $fam == *"rdma_agent_arm_operations:counter:0"* ]] &&
	[ "$c404" = 404 ] && [ "$c405" = 405 ] && [[ $ctype == application/openmetrics-text* ]] && [ "$other" = 1 ]; then
	pass openmetrics "parsed: $fam; / 404, POST 405; $ctype; an agent without --metrics listens on its control port alone"
else
	fail openmetrics "$fam | $c404 $c405 $ctype other=$other | $(tail -3 "$W/agent.log")"
fi

# --- docs/report.md as make docs would write it (the metric table's
# columns, every field of report.json and a sample report), every metric
# and every field with a meaning
out=$(bash scripts/mkdocs.sh --check 2>&1); rc=$?
m=$(rdmactl report --metrics)
nodoc=$(grep -c '(null)' <<< "$m")
if [ $rc = 0 ] && [ "$nodoc" = 0 ] && [ "$(grep -c '^| `' <<< "$m")" -gt 50 ]; then
	pass docs_fresh "docs/report.md current; $(grep -c '^| `' <<< "$m") rows from the metric table and $(python3 scripts/schema_doc.py | grep -c '^| `') fields of report.json, each with its meaning"
else
	fail docs_fresh "mkdocs --check exit $rc: $(head -c 300 <<< "$out"); rows without a meaning: $nodoc"
fi

# --- every relative link in README.md and docs/ reaches a file
bad=""
n=0
for f in README.md docs/*.md profiles/README.md; do
	for l in $(grep -oE '\]\([^)#]+' "$f" | sed 's/^](//' | grep -vE '^(https?|mailto):'); do
		n=$((n + 1))
		[ -e "$(dirname "$f")/$l" ] || bad="$bad $f: $l;"
	done
done
[ -z "$bad" ] && [ $n -gt 10 ] && pass docs_links "$n links, each reaches its file" || fail docs_links "$n links;$bad"

# --- short sentences in README.md and docs/: the median and the longest,
# against the bounds tests/habits/sentences.py gives
out=$(python3 tests/habits/sentences.py README.md docs/*.md profiles/README.md 2>&1); rc=$?
if [ $rc = 0 ]; then pass docs_sentences "$(grep '^all:' <<< "$out")"
else fail docs_sentences "$(grep -A10 '^all:' <<< "$out" | tr '\n' '|')"; fi

# the tree's structure (issue 36): no circles of calls between ctl/'s
# files, no call or include against HACKING.md's order of rooms, no
# 'return -1;' in ctl/, no .c over 800 lines, no function over 100; and the
# checker catches each in a tree planted with them
out=$(python3 scripts/structure.py --check . 2>&1); rc=$?
P="$W/planted"
mkdir -p "$P/ctl/exp" "$P/ctl/report" "$P/build/obj/ctl"
{ echo 'int f(void)'; echo '{'; for i in $(seq 101); do echo '	g();'; done; echo '	return -1;'; echo '}'; } > "$P/ctl/exp/long.c"
echo '#include "ctl/exp/exp.h"' > "$P/ctl/report/back.c"
touch "$P/ctl/exp/exp.h"
pout=$(python3 scripts/structure.py --check "$P" 2>&1); prc=$?
if [ $rc = 0 ] && [ $prc = 1 ] && grep -q "^'return -1;' in ctl/: 1" <<< "$pout" &&
	grep -q '^functions over 100 lines: 1' <<< "$pout" && grep -q '^back arrows .*: 1' <<< "$pout"; then
	pass structure "$(grep -v '^  ' <<< "$out" | tr '\n' ';' | sed 's/;$//'); planted: caught"
else
	fail structure "rc=$rc $(tr '\n' '|' <<< "$out") | planted rc=$prc $(tr '\n' '|' <<< "$pout")"
fi

