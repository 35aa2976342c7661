# SPDX-License-Identifier: MIT
# bash completion for rdmactl, rdma-inject and rdma-agent. Installed by
# `make install` as share/bash-completion/completions/{rdmactl,rdma-inject,
# rdma-agent}; by hand: `. scripts/completion.bash`.
#
# Every word offered comes from the programs themselves, so it never drifts
# from them: commands and options from their help (`rdmactl help`,
# `rdmactl OBJECT -h`, `rdma-inject -h`, `rdma-agent -h`), an option's
# values from the a|b|c list its help line gives, node names from
# `rdmactl testbed status`, profile keys after --set from
# `rdmactl validate --keys PROFILE` (the keys that profile takes, with its
# values), devices from sysfs.

# the words of cmd's help that look like --options
_rtb_opts()
{
	"$@" -h 2>&1 | grep -oE -- '(^|[[ ,])--[a-z][a-z0-9_-]*' | grep -oE -- '--[a-z][a-z0-9_-]*' | sort -u
}

# the a|b|c values an option's help line lists ("--format text|json|...",
# "--backend   vm: ...; host: ... (default auto)" gives nothing)
_rtb_values()
{
	local opt=$1
	shift
	"$@" -h 2>&1 | grep -oE -- "$opt[ =][a-z0-9_-]+(\|[a-z0-9_-]+)+" | head -n 1 |
		sed -E "s/^$opt[ =]//" | tr '|' '\n'
	"$@" -h 2>&1 | grep -E -- "^ *$opt " | grep -oE '[a-z0-9_-]+(\|[a-z0-9_-]+)+' | head -n 1 | tr '|' '\n'
}

_rtb_nodes()
{
	rdmactl -q testbed status 2>/dev/null | awk 'f && NF { print $1 } /^NODE /{ f = 1 }'
}

# candidates... : COMPREPLY from those matching the current word (an argument
# may hold many, a line each: a --set key may have spaces). Compared as
# strings and quoted for the command line (printf %q): compgen -W would
# expand $(...) in a profile's text, and an unquoted value with spaces would
# become several words
_rtb_reply()
{
	local c q
	COMPREPLY=()
	while IFS= read -r c; do
		[ -n "$c" ] && [[ $c == "$cur"* ]] || continue
		printf -v q '%q' "$c"
		COMPREPLY+=("$q")
	done < <(printf '%s\n' "$@")
}

# rdma-inject's words from position i (also behind rdmactl inject)
_rtb_inject_words()
{
	local i=$1 cmd=$2 prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	dev) _rtb_reply "$(ls /sys/class/net 2>/dev/null)"; return ;;
	opcode) _rtb_reply data read_req read_resp ack nak atomic cnp other; return ;;
	corrupt) _rtb_reply icrc payload; return ;;
	track) _rtb_reply on off; return ;;
	--pin | to) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	esac
	if [ "$COMP_CWORD" = "$i" ]; then
		_rtb_reply "$("$cmd" -h 2>&1 | awk '/^usage/ { next } /^RULE/ { exit } /^  [a-z]/ { print $1 }')"
		return
	fi
	case ${COMP_WORDS[i]} in
	add | run)
		_rtb_reply dev ingress egress qpn opcode psn len src dst ecn qp requests responses rpsn tx count drop delay reorder \
			duplicate corrupt ecn cnp flap every nth once gemodel gap hold after for from traffic jitter ;;
	set) _rtb_reply on off count drop delay reorder duplicate corrupt ecn cnp flap ;;
	trace) _rtb_reply snaplen count for to dev ingress egress both ;;
	forward) _rtb_reply mac stop port "$(ls /sys/class/net 2>/dev/null)" ;;
	flush) _rtb_reply if-empty ;;
	qps) _rtb_reply reset ;;
	esac
}

_rtb_rdmactl()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} i obj="" oi=0 verb=""
	COMPREPLY=()
	for ((i = 1; i < COMP_CWORD; i++)); do	# the object: the first word not a global flag
		case ${COMP_WORDS[i]} in
		-j | --json | -v | -q) ;;
		*) obj=${COMP_WORDS[i]}; oi=$i; break ;;
		esac
	done
	if [ -z "$obj" ]; then
		if [[ $cur == -* ]]; then _rtb_reply -j --json -v -q; return; fi
		_rtb_reply "$(rdmactl help 2>/dev/null | awk '/^  [a-z]/ { print $1 }')" version help
		return
	fi
	case $prev in
	--node | --client | --server) _rtb_reply "$(_rtb_nodes)"; return ;;
	-o | --junit) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--set)	# the keys of the profile on the line
		local p=""
		for ((i = oi + 1; i < COMP_CWORD; i++)); do
			[[ ${COMP_WORDS[i]} == *.yaml || ${COMP_WORDS[i]} == *.yml ]] && p=${COMP_WORDS[i]}
		done
		[ -n "$p" ] && _rtb_reply "$(rdmactl validate --keys "$p" 2>/dev/null)"
		compopt -o nospace 2>/dev/null
		return ;;
	esac
	case $obj in
	testbed)
		verb=${COMP_WORDS[oi + 1]}
		if [ "$COMP_CWORD" = $((oi + 1)) ]; then _rtb_reply up status down exec cp; return; fi
		case $verb in
		exec) [ "$COMP_CWORD" = $((oi + 2)) ] && _rtb_reply "$(_rtb_nodes)" ;;
		cp) COMPREPLY=($(compgen -f -- "$cur")) ;;
		up)
			if [[ $prev == --* ]]; then
				_rtb_reply "$(_rtb_values "$prev" rdmactl testbed up)"
			else
				_rtb_reply "$(_rtb_opts rdmactl testbed up)"
			fi ;;
		esac
		return ;;
	inject)	# rdma-inject's words on a node
		local j=$((oi + 1))
		[ "${COMP_WORDS[j]}" = --node ] && j=$((j + 2))
		if [ "$COMP_CWORD" = "$j" ] && [[ $cur == -* ]]; then _rtb_reply --node; return; fi
		_rtb_inject_words "$j" rdma-inject
		return ;;
	esac
	if [[ $prev == --* ]]; then
		local v
		v=$(_rtb_values "$prev" rdmactl "$obj")
		if [ -n "$v" ]; then _rtb_reply "$v"; return; fi
	fi
	if [[ $cur == -* ]]; then
		_rtb_reply "$(_rtb_opts rdmactl "$obj")"
		return
	fi
	case $obj in
	run | validate | tui | search) COMPREPLY=($(compgen -f -X '!*.y*ml' -- "$cur") $(compgen -d -- "$cur")) ;;
	report | analyze) COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X '!*.pcap*' -- "$cur")) ;;
	p2p) [ "$COMP_CWORD" = $((oi + 1)) ] && _rtb_reply lat bw ;;
	collective) [ "$COMP_CWORD" = $((oi + 1)) ] && _rtb_reply allreduce reduce_scatter allgather broadcast alltoall ;;
	perftest) _rtb_reply ib_write_lat ib_write_bw ib_read_lat ib_read_bw ib_send_lat ib_send_bw ib_atomic_lat ib_atomic_bw ;;
	esac
}

_rtb_rdma_inject()
{
	local cur=${COMP_WORDS[COMP_CWORD]} i=1
	COMPREPLY=()
	while [[ ${COMP_WORDS[i]} == -* && $i -lt $COMP_CWORD ]]; do
		[ "${COMP_WORDS[i]}" = --pin ] && i=$((i + 1))
		i=$((i + 1))
	done
	if [[ $cur == -* && $COMP_CWORD = "$i" ]]; then _rtb_reply -j -v -q --pin; return; fi
	_rtb_inject_words "$i" "${COMP_WORDS[0]}"
}

_rtb_rdma_agent()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	COMPREPLY=()
	case $prev in
	-d | --dev) _rtb_reply "$(ls /sys/class/infiniband 2>/dev/null)"; return ;;
	-t | --token-file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	esac
	_rtb_reply "$(_rtb_opts "${COMP_WORDS[0]}")"
}

complete -F _rtb_rdmactl rdmactl
complete -F _rtb_rdma_inject rdma-inject
complete -F _rtb_rdma_agent rdma-agent
