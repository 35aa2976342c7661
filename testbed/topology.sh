#!/bin/sh
# SPDX-License-Identifier: MIT
#
# N SoftRoCE nodes on one virtual switch, in ONE kernel.
#
#   topology.sh up N NETDEV_MTU [STATE_DIR]
#   topology.sh down N [STATE_DIR]
#
# Used by the VM's /init (busybox ash) and by rdmactl's host backend (bash),
# so it sticks to POSIX sh + `local`. Names get $TB_PREFIX ("" in the VM,
# "rtb" on a host so nothing collides with the user's devices).
#
# Node i: veth ${P}n$i <-> ${P}sw$i, every ${P}sw$i a port of bridge ${P}br0
# (the switch: where middle-box faults go), IPv4 198.18.0.(i+1)/24 and rxe
# device ${P}rxe$i on ${P}n$i.
#
# Why the routing: every node address is local to this kernel, so without
# help 198.18.0.1 -> .2 would go through "lo", where no rxe listens (rxe
# drops it). A rule per node sends locally generated traffic FROM node i's
# address through table T+i, whose routes leave on ${P}n$i; the "local" rule
# moves below them (pref 0 -> 1000). Receiving a packet with a local source
# address needs rp_filter=0 and accept_local=1. Neighbours are permanent:
# on the bridge every node would answer ARP for any local address. IPv6 is
# off on the veths: no ND/MLD noise, switch counters equal rxe's.
# rxe itself lives in the init netns (its UDP socket ignores netns): that is
# why all nodes share one namespace. See HACKING.md, "SoftRoCE facts".
set -u

P=${TB_PREFIX:-}
NET=${TB_NET:-198.18.0}
RULE_PREF=${TB_RULE_PREF:-200}
TABLE=${TB_TABLE:-29000}
LOCAL_PREF=1000

for c in /usr/sbin/ip /sbin/ip /usr/bin/ip /bin/ip; do [ -x "$c" ] && { IP=$c; break; }; done
for c in /usr/sbin/bridge /sbin/bridge /usr/bin/bridge; do [ -x "$c" ] && { BR=$c; break; }; done
for c in /usr/sbin/rdma /sbin/rdma /usr/bin/rdma /bin/rdma; do [ -x "$c" ] && { RDMA=$c; break; }; done
: "${IP:?iproute2 ip not found}" "${BR:?iproute2 bridge not found}" "${RDMA:?iproute2 rdma not found}"

die() { echo "topology: $*" >&2; exit 1; }
ipof() { echo "$NET.$(($1 + 1))"; }
sysw() { [ -w "$1" ] && echo "$2" > "$1"; return 0; }
mac() { cat "/sys/class/net/$1/address"; }

save_sysctl() {	# remember a host sysctl value once, to restore it on down
	local f=$1
	[ -n "$STATE" ] || return 0
	grep -q "^$f " "$STATE/sysctl.saved" 2>/dev/null && return 0
	echo "$f $(cat "$f")" >> "$STATE/sysctl.saved"
}

up() {
	local n=$1 mtu=$2 i j
	[ "$n" -ge 1 ] && [ "$n" -le 16 ] || die "nodes must be 1..16 (got $n)"
	"$IP" link show "${P}br0" >/dev/null 2>&1 && die "${P}br0 exists: a testbed is already up (topology.sh down $n)"
	for k in all default; do
		for f in /proc/sys/net/ipv4/conf/$k/rp_filter /proc/sys/net/ipv4/conf/$k/accept_local; do
			save_sysctl "$f"
		done
		sysw /proc/sys/net/ipv4/conf/$k/rp_filter 0
		sysw /proc/sys/net/ipv4/conf/$k/accept_local 1
	done
	"$IP" link set lo up
	"$IP" link add name "${P}br0" type bridge stp_state 0 forward_delay 0 || die "cannot create bridge ${P}br0"
	sysw "/proc/sys/net/ipv6/conf/${P}br0/disable_ipv6" 1
	"$IP" link set "${P}br0" mtu "$mtu" up
	i=0
	while [ $i -lt "$n" ]; do
		"$IP" link add name "${P}n$i" mtu "$mtu" type veth peer name "${P}sw$i" mtu "$mtu" ||
			die "cannot create veth ${P}n$i"
		sysw "/proc/sys/net/ipv6/conf/${P}n$i/disable_ipv6" 1
		sysw "/proc/sys/net/ipv6/conf/${P}sw$i/disable_ipv6" 1
		sysw "/proc/sys/net/ipv4/conf/${P}n$i/rp_filter" 0
		sysw "/proc/sys/net/ipv4/conf/${P}n$i/accept_local" 1
		"$IP" link set "${P}sw$i" master "${P}br0" up
		"$IP" addr add "$(ipof $i)/24" dev "${P}n$i"
		"$IP" link set "${P}n$i" up
		i=$((i + 1))
	done
	i=0
	while [ $i -lt "$n" ]; do
		"$IP" rule add pref $((RULE_PREF + i)) iif lo from "$(ipof $i)" lookup $((TABLE + i))
		j=0
		while [ $j -lt "$n" ]; do
			if [ $j != $i ]; then
				"$IP" route add "$(ipof $j)" dev "${P}n$i" src "$(ipof $i)" table $((TABLE + i))
				"$IP" neigh replace "$(ipof $j)" lladdr "$(mac "${P}n$j")" dev "${P}n$i" nud permanent
			fi
			j=$((j + 1))
		done
		"$BR" fdb replace "$(mac "${P}n$i")" dev "${P}sw$i" master static
		i=$((i + 1))
	done
	if "$IP" rule show pref 0 | grep -q 'lookup local'; then
		"$IP" rule add pref $LOCAL_PREF lookup local
		"$IP" rule del pref 0 lookup local
		[ -n "$STATE" ] && : > "$STATE/local-rule.moved"
	fi
	i=0
	while [ $i -lt "$n" ]; do
		"$RDMA" link add "${P}rxe$i" type rxe netdev "${P}n$i" || die "rdma link add ${P}rxe$i failed"
		i=$((i + 1))
	done
	# ports come up asynchronously
	local tries=0 act
	while :; do
		act=0
		i=0
		while [ $i -lt "$n" ]; do
			case $(cat "/sys/class/infiniband/${P}rxe$i/ports/1/state" 2>/dev/null) in
			*ACTIVE*) act=$((act + 1)) ;;
			esac
			i=$((i + 1))
		done
		[ $act = "$n" ] && break
		tries=$((tries + 1))
		[ $tries -gt 600 ] && die "only $act of $n rxe ports ACTIVE after 30 s"
		sleep 0.05
	done
	i=0
	while [ $i -lt "$n" ]; do
		echo "node$i ${P}rxe$i ${P}n$i $(ipof $i)"
		i=$((i + 1))
	done
}

down() {
	local n=$1 i
	i=0
	while [ $i -lt "$n" ]; do
		"$RDMA" link del "${P}rxe$i" 2>/dev/null
		"$IP" rule del pref $((RULE_PREF + i)) 2>/dev/null
		"$IP" route flush table $((TABLE + i)) 2>/dev/null
		"$IP" link del "${P}n$i" 2>/dev/null
		i=$((i + 1))
	done
	"$IP" link del "${P}br0" 2>/dev/null
	if [ -n "$STATE" ] && [ -e "$STATE/local-rule.moved" ]; then
		"$IP" rule show pref 0 | grep -q 'lookup local' || "$IP" rule add pref 0 lookup local
		"$IP" rule del pref $LOCAL_PREF lookup local 2>/dev/null
		rm -f "$STATE/local-rule.moved"
	fi
	if [ -n "$STATE" ] && [ -f "$STATE/sysctl.saved" ]; then
		while read -r f v; do sysw "$f" "$v"; done < "$STATE/sysctl.saved"
		rm -f "$STATE/sysctl.saved"
	fi
	return 0
}

cmd=${1:-}
case $cmd in
up) [ $# -ge 3 ] || die "usage: topology.sh up N NETDEV_MTU [STATE_DIR]"
	STATE=${4:-}; up "$2" "$3" ;;
down) [ $# -ge 2 ] || die "usage: topology.sh down N [STATE_DIR]"
	STATE=${3:-}; down "$2" ;;
*) die "usage: topology.sh up|down ..." ;;
esac
