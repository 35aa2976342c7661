#!/bin/sh
# SPDX-License-Identifier: MIT
#
# /init of a testbed VM (PID 1, busybox ash). Loads the rxe modules, brings
# up the control NIC (qemu user networking, reached by the host only through
# ports forwarded to 127.0.0.1), builds its nodes (per-node: the one node
# of this kernel on its RoCE NIC; shared: all N with topology.sh) and starts
# one rdma-agent per node. Markers "@@..." on the serial console
# let the host follow the boot. With rdmatb.probe=1 on the kernel command
# line it only proves the guest runs (KVM probe) and powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm	# POSIX shared memory (UCX's mm)
mkdir -p /sys/fs/bpf /var && mount -t bpf bpf /sys/fs/bpf
# a cgroup per exec-workload command (rdma-run): whatever it forks ends with it
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null || true
ln -sf /run /var/run
exec 2>&1
up() { read -r a _ < /proc/uptime; echo "$a"; }
off() { sync; poweroff -f; sleep 5; echo o > /proc/sysrq-trigger; }
echo "@@GUEST-UP uptime=$(up)"
case " $(cat /proc/cmdline) " in *" rdmatb.probe=1 "*) echo "@@PROBE-OK"; off ;; esac

. /etc/rdmatb/config
KVER=$(cat /etc/rdmatb/kver)
dmesg -n 1	# keep rate-limited rxe messages off the console
echo /bin/modprobe > /proc/sys/kernel/modprobe
ulimit -l unlimited
# no IPv6 anywhere (interfaces created later inherit "default")
echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6

for m in $(cat /etc/rdmatb/modules.order); do
	insmod "/lib/modules/$KVER/$m" || echo "@@ERROR insmod $m failed"
done
echo "@@MODULES-DONE uptime=$(up)"

# test images (tests/softroce) bring their own script: run it, report, power off
if [ -x /etc/rdmatb/guest-test ]; then
	/etc/rdmatb/guest-test
	echo "@@GUEST-TEST-DONE rc=$?"
	off
fi

# the virtio NICs: control (qemu user networking, restrict=on) and, in a VM
# of its own node, RoCE (a port of the switch on the host), told apart by
# the MACs rdmactl gave them (52:54:00:72:63:* control, :64:* RoCE); a
# shared kernel's VM has only the control NIC
ETH= DATA=
for d in /sys/class/net/*; do
	[ "$(basename "$(readlink "$d/device/driver" 2>/dev/null)")" = virtio_net ] || continue
	case $(cat "$d/address") in
	52:54:00:72:64:*) DATA=${d##*/} ;;
	*) ETH=${d##*/} ;;
	esac
done
if [ -z "$ETH" ]; then
	echo "@@ERROR no virtio control NIC"
else
	/usr/sbin/ip addr add "$CTRL_IP/24" dev "$ETH"
	/usr/sbin/ip link set "$ETH" up
fi
/usr/sbin/ip link set lo up

# this VM's nodes: all of them (shared), or the one on the kernel command
# line (per-node): its RoCE NIC renamed nI, 198.18.0.(I+1)/24, rxe device
# rxeI on it. One address in this kernel: plain routing and ARP do
FIRST=0 LAST=$((NODES - 1))
if [ "${TOPOLOGY:-shared}" = per-node ]; then
	NODE=
	for w in $(cat /proc/cmdline); do case $w in rdmatb.node=*) NODE=${w#rdmatb.node=} ;; esac; done
	FIRST=$NODE LAST=$NODE
	hostname "node$NODE"
	if [ -z "$NODE" ] || [ -z "$DATA" ]; then
		echo "@@ERROR per-node VM without rdmatb.node= or a RoCE NIC (node '$NODE', NIC '$DATA')"
	else
		/usr/sbin/ip link set "$DATA" name "n$NODE"
		/usr/sbin/ip link set "n$NODE" mtu "$NETDEV_MTU" up
		/usr/sbin/ip addr add "198.18.0.$((NODE + 1))/24" dev "n$NODE"
		rdma link add "rxe$NODE" type rxe netdev "n$NODE" || echo "@@ERROR rdma link add rxe$NODE failed"
		k=0
		until grep -q ACTIVE "/sys/class/infiniband/rxe$NODE/ports/1/state" 2>/dev/null; do
			k=$((k + 1))
			[ $k -gt 600 ] && { echo "@@ERROR rxe$NODE not ACTIVE after 30 s"; break; }
			sleep 0.05
		done
		echo "node$NODE rxe$NODE n$NODE 198.18.0.$((NODE + 1))"
		# every node by name (mpirun's hosts), and sshd on this address too
		i=0
		while [ $i -lt "$NODES" ]; do
			echo "198.18.0.$((i + 1)) node$i" >> /etc/hosts
			i=$((i + 1))
		done
		SSH_DATA_IP=198.18.0.$((NODE + 1))
	fi
elif ! sh /usr/libexec/rdma-testbed/topology.sh up "$NODES" "$NETDEV_MTU" > /tmp/topology.out; then
	echo "@@ERROR topology failed"
else
	cat /tmp/topology.out
fi
echo "@@ALL-ACTIVE uptime=$(up)"

# sshd on the control NIC, key-only, for rdmactl's ssh path (hosts: with
# ssh:) and for looking around: rdmactl stages the host key and the
# authorized key (the testbed's own, in its state directory). On per-node
# VMs also on the testbed's network, for the nodes' own key (root's
# ~/.ssh): mpirun starts its orted on the other nodes that way
if [ -x /usr/sbin/sshd ] && [ -s /etc/ssh/authorized_keys ]; then
	mkdir -p /run/sshd /root
	chmod 0755 /run/sshd
	cat > /etc/ssh/sshd_config <<-EOF
	ListenAddress $CTRL_IP:22
	${SSH_DATA_IP:+ListenAddress $SSH_DATA_IP:22}
	HostKey /etc/ssh/ssh_host_ed25519_key
	AuthorizedKeysFile /etc/ssh/authorized_keys
	PermitRootLogin prohibit-password
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	UsePAM no
	AllowTcpForwarding local
	X11Forwarding no
	PidFile /run/sshd.pid
	EOF
	/usr/sbin/sshd -f /etc/ssh/sshd_config -E /tmp/sshd.log || echo "@@ERROR sshd failed"
fi

i=$FIRST
while [ $i -le "$LAST" ]; do
	/usr/bin/rdma-agent --dev "rxe$i" --name "node$i" --listen "$CTRL_IP:$((PORT_BASE + i))" \
		--token-file /etc/rdmatb/token > "/tmp/agent$i.log" 2>&1 &
	echo "$!" > "/run/agent$i.pid"
	i=$((i + 1))
done
echo "@@AGENTS-STARTED uptime=$(up)"

# PID 1 must not exit; report agents that die, so the host log tells why
while :; do
	i=$FIRST
	while [ $i -le "$LAST" ]; do
		if [ -f "/run/agent$i.pid" ] && ! kill -0 "$(cat "/run/agent$i.pid")" 2>/dev/null; then
			echo "@@AGENT-EXIT node$i"; tail -n 5 "/tmp/agent$i.log"
			rm -f "/run/agent$i.pid"
		fi
		i=$((i + 1))
	done
	sleep 2
done
