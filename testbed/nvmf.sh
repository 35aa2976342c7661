#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rdmatb-nvmf: NVMe over Fabrics on a testbed node, with the kernel's own
# target (nvmet) and host (nvme-rdma, nvme-tcp) and Debian's nvme-cli and
# fio. In the VM image as /usr/bin/rdmatb-nvmf; run it as an exec role.
#
#   rdmatb-nvmf target [MiB]    a memory-backed null_blk (default 64 MiB) as
#                               namespace 1 of subsystem NQN, listening on
#                               this node's RoCE address over RDMA (port 4420)
#                               and TCP (4421); prints "nvmf target ready"
#                               and serves until SIGTERM, then removes it all
#   rdmatb-nvmf fio rdma|tcp ADDR [FIO OPTION]...
#                               connects to ADDR's target, runs fio on the
#                               namespace (--filename and JSON output added),
#                               disconnects; fio's JSON on stdout, the rest
#                               on stderr: the connect time, the kernel's
#                               words, and last a line "rdmatb-nvmf: result
#                               {JSON}" (the controller's state, connect_s,
#                               error_recoveries, reconnects), which an exec
#                               role's parse: nvmf reads; fio's exit status
#
# Environment: NVMF_CTRL_LOSS_TMO (s, default 20: how long the host keeps
# reconnecting before it gives the controller up; nvme-cli's default is
# 600), NVMF_RECONNECT_DELAY (s, default 1).
set -u
NQN=nqn.2026-12.org.rdma-testbed:nvmf
CFS=/sys/kernel/config
PROG=rdmatb-nvmf
. /usr/lib/rdma-testbed/storage-lib.sh
MODARG_null_blk=nr_devices=0	# its device is made through configfs

mods() {	# the image's NVMe-oF modules, once
	load_mods /etc/rdmatb/storage.order "NVMe-oF modules"
	grep -q " $CFS configfs" /proc/mounts || mount -t configfs none "$CFS" ||
		die "cannot mount configfs"
}

addr() {	# this node's RoCE address
	[ -n "${RDMATB_IP:-}" ] || die "RDMATB_IP is not set (run me as a testbed role)"
	echo "$RDMATB_IP"
}

target_down() {
	S=$CFS/nvmet
	for p in "$S"/ports/*; do
		[ -d "$p" ] || continue
		rm -f "$p"/subsystems/* 2>/dev/null
		rmdir "$p" 2>/dev/null
	done
	if [ -d "$S/subsystems/$NQN" ]; then
		echo 0 > "$S/subsystems/$NQN/namespaces/1/enable" 2>/dev/null
		rmdir "$S/subsystems/$NQN/namespaces/1" 2>/dev/null
		rmdir "$S/subsystems/$NQN" 2>/dev/null
	fi
	if [ -d "$CFS/nullb/rdmatb" ]; then
		echo 0 > "$CFS/nullb/rdmatb/power" 2>/dev/null
		rmdir "$CFS/nullb/rdmatb" 2>/dev/null
	fi
}

target() {
	mib=${1:-64}
	case $mib in *[!0-9]*|'') die "target: MiB '$mib' is not a number" ;; esac
	mods
	ip=$(addr)
	target_down	# a previous round's, if it was killed
	# null_blk with no devices of its own (nr_devices=0 is the module's
	# parameter only at load: make one through configfs)
	B=$CFS/nullb/rdmatb
	mkdir "$B" || die "cannot make a null_blk device (configfs nullb)"
	echo "$mib" > "$B/size"
	echo 1 > "$B/memory_backed"
	echo 4096 > "$B/blocksize"
	echo 1 > "$B/power" || die "null_blk: cannot power on"
	i=0
	while :; do	# 6.1 names the disk after its configfs directory, older ones nullbN
		dev=/dev/rdmatb; [ -b "$dev" ] && break
		dev=/dev/nullb$(cat "$B/index"); [ -b "$dev" ] && break
		i=$((i + 1)); [ $i -gt 50 ] && die "null_blk: no $dev"
		sleep 0.1
	done
	S=$CFS/nvmet
	mkdir "$S/subsystems/$NQN" || die "nvmet: cannot make subsystem $NQN"
	echo 1 > "$S/subsystems/$NQN/attr_allow_any_host"
	mkdir "$S/subsystems/$NQN/namespaces/1"
	printf %s "$dev" > "$S/subsystems/$NQN/namespaces/1/device_path"
	echo 1 > "$S/subsystems/$NQN/namespaces/1/enable" || die "nvmet: cannot enable $dev"
	n=1
	for tp in rdma:4420 tcp:4421; do
		P=$S/ports/$n
		mkdir "$P"
		echo ipv4 > "$P/addr_adrfam"
		echo "${tp%%:*}" > "$P/addr_trtype"
		echo "$ip" > "$P/addr_traddr"
		echo "${tp#*:}" > "$P/addr_trsvcid"
		ln -s "$S/subsystems/$NQN" "$P/subsystems/$NQN" ||
			die "nvmet: cannot listen on ${tp%%:*} $ip:${tp#*:}"
		n=$((n + 1))
	done
	trap 'target_down; exit 0' TERM INT
	echo "nvmf target ready: $NQN on $dev ($mib MiB), rdma $ip:4420, tcp $ip:4421"
	while :; do sleep 1; done
}

ctrl_of() {	# the controller connected to NQN, if any
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$NQN" ] && { echo "${c##*/}"; return; }
	done
}

run_fio() {
	t=${1:-}; a=${2:-}
	case $t in rdma) port=4420 ;; tcp) port=4421 ;; *) die "fio: transport '$t': rdma or tcp" ;; esac
	[ -n "$a" ] || die "fio: the target's address is missing"
	shift 2
	mods
	mkdir -p /etc/nvme
	# one UUID for the host NQN and the host ID: nvme-cli takes a missing
	# host ID from the VM's DMI UUID, and 6.12 refuses a host ID it knows
	# under another NQN ("found same hostid ... but different hostnqn")
	if [ ! -s /etc/nvme/hostnqn ] || [ ! -s /etc/nvme/hostid ]; then
		u=$(cat /proc/sys/kernel/random/uuid)
		echo "$u" > /etc/nvme/hostid
		echo "nqn.2014-08.org.nvmexpress:uuid:$u" > /etc/nvme/hostnqn
	fi
	c=$(ctrl_of)
	[ -n "$c" ] && echo 1 > "/sys/class/nvme/$c/delete_controller"	# a killed round's
	k0=$(dmesg | grep -c 'nvme\|rxe\|blocked for more')
	t0=$(up)
	nvme connect -t "$t" -a "$a" -s "$port" -n "$NQN" \
		--ctrl-loss-tmo="${NVMF_CTRL_LOSS_TMO:-20}" \
		--reconnect-delay="${NVMF_RECONNECT_DELAY:-1}" >&2 || die "nvme connect -t $t -a $a -s $port failed"
	i=0
	while :; do
		c=$(ctrl_of)
		# the namespace: nvmeXnY, or with multipath its path nvmeXcZnY of disk nvmeXnY
		[ -n "$c" ] && dev=$(ls -d /sys/class/nvme/"$c"/nvme*n1 2>/dev/null | head -1) &&
			dev=$(echo "${dev##*/}" | sed 's/c[0-9]*n/n/') && [ -b "/dev/$dev" ] && break
		i=$((i + 1)); [ $i -gt 300 ] && die "no namespace after connecting over $t"
		sleep 0.1
	done
	dev=/dev/$dev
	t1=$(up)
	say "connected over $t to $a:$port as $c ($dev) in $(secs "$t0" "$t1" 2) s"
	watched_fio --filename="$dev" "$@"
	[ -e "/sys/class/nvme/$c/delete_controller" ] && echo 1 > "/sys/class/nvme/$c/delete_controller"
	exit $rc
}

# what the kernel said of the controller meanwhile: its error recoveries
# (a QP or connection broken) and reconnects, its last lines (hung tasks
# among them); last the line parse: nvmf reads (one JSON object)
report() {
	new=$(dmesg | grep 'nvme\|rxe\|blocked for more' | tail -n +$((k0 + 1)))
	state=$(cat "/sys/class/nvme/$c/state" 2>/dev/null || echo gone)
	er=$(printf '%s\n' "$new" | grep -c 'error recovery\|resetting controller')
	rc2=$(printf '%s\n' "$new" | grep -c 'Successfully reconnected')
	printf '%s\n' "$new" | grep . | tail -n 5 | sed 's/^/rdmatb-nvmf: kernel: /' >&2
	say "result {\"transport\": \"$t\", \"controller\": \"$c\", \"state\": \"$state\"," \
		"\"connect_s\": $(secs "$t0" "$t1" 3)," \
		"\"error_recoveries\": $er, \"reconnects\": $rc2, \"fio_exit\": $1}"
}

# stopped while fio ran (the role's timeout: rdma-run sends SIGTERM, then
# SIGKILL a second later): say where the controller was; the next run
# deletes it (deleting it here may wait on the stuck I/O itself)
ended() {
	say "stopped after $(secs "$t1" "$(up)" 0) s of fio:" \
		"controller $c $(cat "/sys/class/nvme/$c/state" 2>/dev/null || echo gone)"
	report 124
	kill -9 "$FIO" 2>/dev/null
	exit 124
}

case ${1:-} in
target) shift; target "$@" ;;
fio) shift; run_fio "$@" ;;
*) echo "usage: rdmatb-nvmf target [MiB] | fio rdma|tcp ADDR [FIO OPTION]..." >&2; exit 2 ;;
esac
