# SPDX-License-Identifier: MIT
#
# What rdmatb-nvmf and rdmatb-nfs share, sourced by both in the VM image
# (/usr/lib/rdma-testbed/storage-lib.sh). The sourcing script sets PROG
# (its name in messages) first.
KVER=$(cat /etc/rdmatb/kver 2>/dev/null || uname -r)
say() { echo "$PROG: $*" >&2; }
die() { say "$*"; exit 1; }
up() { read -r a _ < /proc/uptime; echo "$a"; }
# seconds from uptime A to uptime B, with D decimals
secs() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN{printf "%." d "f", b - a}'; }

# the image's modules listed in ORDER (dependency order), each once; a
# module's load argument in MODARG_<name> (null_blk's nr_devices=0)
load_mods() {
	[ -s "$1" ] || die "no $1: an image without $2"
	for m in $(cat "$1"); do
		n=$(basename "$m" .ko | tr - _)
		[ -d "/sys/module/$n" ] && continue
		eval "arg=\${MODARG_$n:-}"
		insmod "/lib/modules/$KVER/$m" $arg 2>/dev/null || [ -d "/sys/module/$n" ] ||
			die "insmod $m failed (an image without $2?)"
	done
}

# fio "$@" in the background, waited for: a stop (the role's timeout:
# rdma-run sends SIGTERM, then SIGKILL a second later) runs the caller's
# ended() at once, even while fio's I/O waits in the kernel; the caller's
# report() then says what the kernel did. Sets rc, fio's exit status.
watched_fio() {
	fio --verify_state_save=0 --output-format=json "$@" &
	FIO=$!
	trap ended TERM INT
	wait $FIO
	rc=$?
	trap - TERM INT
	report $rc
}
