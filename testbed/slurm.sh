#!/bin/sh
# SPDX-License-Identifier: MIT
#
# rdmatb-slurm: a Slurm cluster of the per-node testbed's VMs, with
# Debian's slurmctld, slurmd and client (unpacked into the VM image). In
# the image as /usr/bin/rdmatb-slurm; run it on each node (rdmactl testbed
# exec nodeI -- rdmatb-slurm start), node0 first.
#
#   rdmatb-slurm start    writes /etc/slurm/slurm.conf (every node of the
#                         testbed, node0 the controller, one partition
#                         "rdma"), starts slurmctld on node0 and slurmd on
#                         this node; waits until this node is idle
#   rdmatb-slurm stop     cancels every job, stops this node's daemons, and
#                         removes their state; nothing of Slurm's is left
#   rdmatb-slurm status   sinfo's and squeue's words
#
# No munge (AuthType=auth/none, CredType=cred/none): the testbed's nodes
# are VMs of this host on a network of its own. A real cluster keeps munge.
set -u
PROG=rdmatb-slurm
CONF=/etc/slurm/slurm.conf
SPOOL=/var/spool/slurm
die() { echo "$PROG: $*" >&2; exit 1; }

. /etc/rdmatb/config 2>/dev/null || die "no /etc/rdmatb/config (not a testbed node?)"
[ "${TOPOLOGY:-}" = per-node ] || die "Slurm needs a node per kernel (testbed up --topology per-node)"
command -v slurmd > /dev/null || die "no slurmd in the image (mkimage: apt-get download slurmd failed?)"
ME=$(hostname)

conf() {
	mkdir -p /etc/slurm "$SPOOL/ctld" "$SPOOL/d" /var/log
	# the nodes' CPUs as this one counts them: the VMs are alike
	cat > "$CONF.tmp" <<EOF
ClusterName=rdmatb
SlurmctldHost=node0(198.18.0.1)
SlurmctldPort=46817
SlurmdPort=46818
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SelectType=select/linear
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
StateSaveLocation=$SPOOL/ctld
SlurmdSpoolDir=$SPOOL/d
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurmctld.log
SlurmdLogFile=/var/log/slurmd.log
PluginDir=/usr/lib/x86_64-linux-gnu/slurm-wlm
EOF
	i=0
	while [ $i -lt "$NODES" ]; do
		echo "NodeName=node$i NodeAddr=198.18.0.$((i + 1)) CPUs=$(nproc) State=UNKNOWN" >> "$CONF.tmp"
		i=$((i + 1))
	done
	echo "PartitionName=rdma Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >> "$CONF.tmp"
	mv "$CONF.tmp" "$CONF"
	# slurmd's cgroup (v2) made by itself: no systemd in the image
	printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n' > /etc/slurm/cgroup.conf
	mkdir -p /sys/fs/cgroup/system.slice
}

start() {
	conf
	if [ "$ME" = node0 ] && ! pidof slurmctld > /dev/null; then
		slurmctld || die "slurmctld did not start: $(tail -n 3 /var/log/slurmctld.log 2>/dev/null)"
	fi
	pidof slurmd > /dev/null || slurmd || die "slurmd did not start: $(tail -n 3 /var/log/slurmd.log 2>/dev/null)"
	k=0
	until sinfo -h -n "$ME" -o %t 2>/dev/null | grep -qx idle; do
		k=$((k + 1))
		[ $k -gt 120 ] && die "$ME not idle after 60 s: $(sinfo -h -n "$ME" -o '%t %E' 2>&1 | head -n 1)"
		sleep 0.5
	done
	echo "$PROG: $ME idle in partition rdma"
}

stop() {
	[ "$ME" = node0 ] && scancel --quiet --partition=rdma 2>/dev/null
	for d in slurmd slurmctld slurmstepd; do
		pids=$(pidof $d) || continue
		kill $pids 2>/dev/null
		k=0
		while pidof $d > /dev/null && [ $k -lt 50 ]; do sleep 0.1; k=$((k + 1)); done
		pids=$(pidof $d) && kill -9 $pids 2>/dev/null
	done
	rm -rf "$SPOOL" /run/slurmctld.pid /run/slurmd.pid
	# the scope slurmd made (its leaves first), and the slice if it is empty
	find /sys/fs/cgroup/system.slice -depth -mindepth 1 -type d -name '*slurm*' \
		-exec rmdir {} + 2>/dev/null
	find /sys/fs/cgroup/system.slice -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
	rmdir /sys/fs/cgroup/system.slice 2>/dev/null
	echo "$PROG: $ME: no Slurm daemon left"
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) sinfo; squeue ;;
*) die "usage: $PROG start|stop|status" ;;
esac
