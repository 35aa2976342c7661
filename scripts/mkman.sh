#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Man pages from the programs' own help, so they say what the option tables
# say: scripts/mkman.sh BINDIR OUTDIR writes OUTDIR/{rdmactl,rdma-inject,
# rdma-agent,rdma-run}.1 (roff, man(7) macros). rdmactl's page has every
# object's -h; rdma-agent's every workload's options (rdma-agent --list,
# the tables profiles and rdmactl take). Help text goes in verbatim (.nf),
# escaped for roff; nothing is written by hand here but the frame.
set -euo pipefail
BIN=$1
OUT=$2
VERSION=$("$BIN/rdmactl" version | awk '{ print $2 }')
DATE=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}" +%Y-%m-%d)
mkdir -p "$OUT"

# text as roff: backslashes doubled, a leading . or ' guarded
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

# a section of verbatim help text
verbatim() {
	echo ".nf"
	esc
	echo ".fi"
}

head_() {	# name section-title one-line-description
	printf '.TH %s 1 "%s" "rdma-testbed %s" "%s"\n' "$(tr a-z A-Z <<< "$1")" "$DATE" "$VERSION" "$2"
	printf '.SH NAME\n%s \\- %s\n' "$1" "$3"
}

tail_() {
	cat <<'EOF'
.SH EXIT STATUS
0 on success, 1 when the work failed, 2 on bad usage (the message says what
and where: file:line:col for profiles).
.SH SEE ALSO
.BR rdmactl (1),
.BR rdma-agent (1),
.BR rdma-inject (1),
.BR rdma-run (1),
.BR ib_write_lat (1),
.BR tc (8),
.BR rdma (8).
The project's README.md and profiles/README.md.
EOF
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
	head_ rdmactl "RDMA testbed" "the testbed's controller: testbed, experiments, reports, faults"
	echo ".SH SYNOPSIS"
	"$BIN/rdmactl" help | head -n 1 | sed 's/^usage: //' | verbatim
	echo ".SH DESCRIPTION"
	echo "Brings a SoftRoCE testbed up and down, runs YAML experiment profiles and"
	echo "workloads through the per-node agents, injects faults, and renders reports."
	echo ".SH OBJECTS"
	"$BIN/rdmactl" help | tail -n +2 | verbatim
	for o in $("$BIN/rdmactl" help | awk '/^  [a-z]/ { print $1 }'); do
		case $o in
		inject) continue ;;	# a node's rdma-inject: rdma-inject(1)
		testbed)
			printf '.SS "rdmactl testbed"\n'
			for v in up status down exec cp; do
				"$BIN/rdmactl" testbed "$v" -h 2>&1 | verbatim || true
			done
			continue ;;
		esac
		printf '.SS "rdmactl %s"\n' "$o"
		"$BIN/rdmactl" "$o" -h 2>&1 | verbatim || true
	done
	printf '.SS "rdmactl inject"\n'
	echo "Runs rdma-inject on a node (--node N, default node0) with the words that follow; see"
	echo ".BR rdma-inject (1)."
	tail_
} > "$tmp/rdmactl.1"

{
	head_ rdma-inject "RDMA testbed" "RoCEv2-aware fault injection with eBPF tc programs"
	echo ".SH SYNOPSIS"
	"$BIN/rdma-inject" -h 2>&1 | head -n 1 | sed 's/^usage: //' | verbatim
	echo ".SH COMMANDS AND RULES"
	"$BIN/rdma-inject" -h 2>&1 | tail -n +2 | verbatim
	tail_
} > "$tmp/rdma-inject.1"

{
	head_ rdma-agent "RDMA testbed" "the per-node agent: libibverbs workloads on request of rdmactl"
	echo ".SH SYNOPSIS"
	"$BIN/rdma-agent" -h 2>&1 | grep '^\(usage:\|       rdma\)' | sed 's/^usage: //; s/^       //' | verbatim
	echo ".SH OPTIONS"
	"$BIN/rdma-agent" -h 2>&1 | grep -v '^\(usage:\|       rdma\)' | verbatim
	echo ".SH WORKLOAD OPTIONS"
	echo "What profiles (workload.options, arms[].options) and rdmactl (--name value) take:"
	"$BIN/rdma-agent" --list 2>&1 | verbatim
	tail_
} > "$tmp/rdma-agent.1"

{
	head_ rdma-run "RDMA testbed" "starts, stops and waits for a node's commands for rdmactl"
	echo ".SH SYNOPSIS"
	"$BIN/rdma-run" -h 2>&1 | sed 's/^usage: //; s/^       //' | verbatim
	tail_
} > "$tmp/rdma-run.1"

mv "$tmp"/*.1 "$OUT"/
