#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rdmatb-nfs: NFS over RDMA and over TCP on a testbed node, with the
# kernel's own server (nfsd, svcrdma) and client (nfsv4, xprtrdma), Debian's
# nfs-kernel-server and nfs-common programs and fio. In the VM image as
# /usr/bin/rdmatb-nfs; run it as an exec role.
#
#   rdmatb-nfs server [MiB]     exports a tmpfs (default 64 MiB) as NFSv4's
#                               root, served over TCP (port 2049) and RDMA
#                               (20049); prints "nfs server ready" and
#                               serves until SIGTERM, then stops it all
#   rdmatb-nfs fio rdma|tcp ADDR [FIO OPTION]...
#                               mounts ADDR's export (NFSv4.2), runs fio in
#                               it (--directory and JSON output added),
#                               unmounts; fio's JSON on stdout, the rest on
#                               stderr: the mount time, the client's RPC
#                               figures, and last a line "rdmatb-nfs:
#                               result {JSON}" (retransmissions, major
#                               timeouts, reconnects, mount_s), which an
#                               exec role's parse: nfs reads; fio's exit
#                               status
#
# Environment: NFS_MOUNT_OPTS, more mount options (e.g. timeo=100,retrans=5;
# the kernel's defaults otherwise: hard, timeo=600, retrans=2).
set -u
EXP=/srv/rdmatb
MNT=/mnt/rdmatb
NFSD=/proc/fs/nfsd
PROG=rdmatb-nfs
. /usr/lib/rdma-testbed/storage-lib.sh

mods() {	# the image's NFS modules, once
	load_mods /etc/rdmatb/nfs.order "NFS modules"
	mkdir -p /var/lib/nfs/v4recovery /run/rpc_pipefs
}

server_down() {
	[ -d "$NFSD/threads" ] || [ -e "$NFSD/threads" ] && rpc.nfsd 0 2>/dev/null
	exportfs -ua 2>/dev/null
	[ -n "${MOUNTD:-}" ] && kill "$MOUNTD" 2>/dev/null
	grep -q " $EXP tmpfs" /proc/mounts && umount "$EXP" 2>/dev/null
}

server() {
	mib=${1:-64}
	case $mib in *[!0-9]*|'') die "server: MiB '$mib' is not a number" ;; esac
	mods
	grep -q " $NFSD nfsd" /proc/mounts || mount -t nfsd nfsd "$NFSD" || die "cannot mount $NFSD"
	[ -n "$(pidof rpc.mountd)" ] && kill $(pidof rpc.mountd)	# a killed round's
	rpc.nfsd 0 2>/dev/null
	mkdir -p "$EXP"
	grep -q " $EXP tmpfs" /proc/mounts || mount -t tmpfs -o "size=${mib}m" tmpfs "$EXP" ||
		die "cannot mount a tmpfs of $mib MiB on $EXP"
	# the lease and the grace period before the first open: 10 s, not 90
	echo 10 > "$NFSD/nfsv4leasetime" 2>/dev/null
	echo 10 > "$NFSD/nfsv4gracetime" 2>/dev/null
	echo "$EXP *(rw,no_root_squash,insecure,no_subtree_check,fsid=0)" > /etc/exports
	exportfs -r || die "exportfs -r failed"
	rpc.mountd -F -N 2 -N 3 2>/dev/null &	# NFSv4 alone: no rpcbind
	MOUNTD=$!
	rpc.nfsd -N 3 8 || die "rpc.nfsd failed"
	echo "rdma 20049" > "$NFSD/portlist" || die "nfsd: cannot listen on rdma 20049 (svcrdma?)"
	# no client held state here before: nothing to reclaim, so the grace
	# period that would refuse opens for 10 s ends now (as nfsdcld does)
	echo Y > "$NFSD/v4_end_grace" 2>/dev/null
	trap 'server_down; exit 0' TERM INT
	echo "nfs server ready: $EXP ($mib MiB), tcp ${RDMATB_IP:-?}:2049, rdma ${RDMATB_IP:-?}:20049 ($(tr '\n' ' ' < "$NFSD/portlist"))"
	while :; do sleep 1; done
}

# the mount's client figures from /proc/self/mountstats: its transport's
# connects, and over all RPC operations the calls, transmissions and major
# timeouts ("ops trans timeouts" of each per-op line)
stats() {
	awk -v m="$MNT" '
		$1 == "device" { on = ($5 == m) }
		on && $1 == "xprt:" { conn = $5 }
		on && $1 ~ /^[A-Z_0-9]+:$/ && NF >= 9 { ops += $2; trans += $3; to += $4 }
		END { printf "%d %d %d %d\n", conn, ops, trans, to }' /proc/self/mountstats
}

run_fio() {
	t=${1:-}; a=${2:-}
	case $t in
	rdma) o=proto=rdma,port=20049 ;;
	tcp) o=proto=tcp ;;
	*) die "fio: transport '$t': rdma or tcp" ;;
	esac
	[ -n "$a" ] || die "fio: the server's address is missing"
	shift 2
	mods
	mkdir -p "$MNT"
	grep -q " $MNT nfs" /proc/mounts && umount -f "$MNT"	# a killed round's
	o=vers=4.2,$o${NFS_MOUNT_OPTS:+,$NFS_MOUNT_OPTS}
	k0=$(dmesg | grep -c 'rpcrdma\|nfs\|NFS\|rxe')
	t0=$(up)
	i=0
	# the server's grace period refuses nothing at mount time, but a server
	# just started may not listen yet: a few tries
	until mount.nfs "$a:/" "$MNT" -n -o "$o" 2>/tmp/rdmatb-nfs.err; do
		i=$((i + 1))
		[ $i -ge 10 ] && die "mount.nfs $a:/ -o $o failed: $(tail -1 /tmp/rdmatb-nfs.err)"
		sleep 1
	done
	t1=$(up)
	read -r _ ops0 tr0 to0 <<EOF
$(stats)
EOF
	say "mounted $a:/ over $t ($o) on $MNT in $(secs "$t0" "$t1" 2) s"
	watched_fio --directory="$MNT" "$@"
	rm -f "$MNT"/* 2>/dev/null
	umount "$MNT" 2>/dev/null || umount -f "$MNT" 2>/dev/null || umount -l "$MNT"
	exit $rc
}

# what the client did meanwhile, in the kernel's words and its RPC figures;
# last the line parse: nfs reads (one JSON object, the last such line)
report() {
	read -r conn ops tr to <<EOF
$(stats)
EOF
	calls=$((ops - ops0)) retr=$(( (tr - tr0) - (ops - ops0) )) tos=$((to - to0))
	new=$(dmesg | grep 'rpcrdma\|nfs\|NFS\|rxe' | tail -n +$((k0 + 1)))
	printf '%s\n' "$new" | grep . | tail -n 5 | sed 's/^/rdmatb-nfs: kernel: /' >&2
	say "rpc: $calls calls, $retr retransmissions, $tos major timeouts, $conn connects"
	say "result {\"transport\": \"$t\", \"calls\": $calls, \"retrans\": $retr," \
		"\"timeouts\": $tos, \"reconnects\": $(( conn > 1 ? conn - 1 : 0 ))," \
		"\"mount_s\": $(secs "$t0" "$t1" 3), \"fio_exit\": $1}"
}

# stopped while fio ran (the role's timeout: rdma-run sends SIGTERM, then
# SIGKILL a second later): say where the client was, free the mount point
ended() {
	say "stopped after $(secs "$t1" "$(up)" 0) s of fio: its I/O" \
		"still waits in the kernel (the lines below)"
	report 124
	kill -9 "$FIO" 2>/dev/null
	umount -f "$MNT" 2>/dev/null || umount -l "$MNT"
	exit 124
}

case ${1:-} in
server) shift; server "$@" ;;
fio) shift; run_fio "$@" ;;
*) echo "usage: rdmatb-nfs server [MiB] | fio rdma|tcp ADDR [FIO OPTION]..." >&2; exit 2 ;;
esac
