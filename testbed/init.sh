#!/bin/sh
# SPDX-License-Identifier: MIT
#
# /init of the testbed VM (PID 1, busybox ash). Loads the rxe modules, builds
# the N-node topology with topology.sh, brings up the control NIC (qemu user
# networking, reached by the host only through ports forwarded to 127.0.0.1)
# and starts one rdma-agent per node. Markers "@@..." on the serial console
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

# control NIC: the virtio one (qemu user networking, restrict=on)
ETH=
for d in /sys/class/net/*; do
	[ "$(basename "$(readlink "$d/device/driver" 2>/dev/null)")" = virtio_net ] && ETH=${d##*/}
done
if [ -z "$ETH" ]; then
	echo "@@ERROR no virtio control NIC"
else
	/usr/sbin/ip addr add "$CTRL_IP/24" dev "$ETH"
	/usr/sbin/ip link set "$ETH" up
fi

if ! sh /usr/libexec/rdma-testbed/topology.sh up "$NODES" "$NETDEV_MTU" > /tmp/topology.out; then
	echo "@@ERROR topology failed"
fi
cat /tmp/topology.out
echo "@@ALL-ACTIVE uptime=$(up)"

# sshd on the control NIC, key-only, for rdmactl's ssh path (hosts: with
# ssh:) and for looking around: rdmactl stages the host key and the
# authorized key (the testbed's own, in its state directory)
if [ -x /usr/sbin/sshd ] && [ -s /etc/ssh/authorized_keys ]; then
	mkdir -p /run/sshd /root
	chmod 0755 /run/sshd
	cat > /etc/ssh/sshd_config <<-EOF
	ListenAddress $CTRL_IP:22
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

i=0
while [ $i -lt "$NODES" ]; do
	/usr/bin/rdma-agent --dev "rxe$i" --name "node$i" --listen "$CTRL_IP:$((PORT_BASE + i))" \
		--token-file /etc/rdmatb/token > "/tmp/agent$i.log" 2>&1 &
	echo "$!" > "/run/agent$i.pid"
	i=$((i + 1))
done
echo "@@AGENTS-STARTED uptime=$(up)"

# PID 1 must not exit; report agents that die, so the host log tells why
while :; do
	i=0
	while [ $i -lt "$NODES" ]; do
		if [ -f "/run/agent$i.pid" ] && ! kill -0 "$(cat "/run/agent$i.pid")" 2>/dev/null; then
			echo "@@AGENT-EXIT node$i"; tail -n 5 "/tmp/agent$i.log"
			rm -f "/run/agent$i.pid"
		fi
		i=$((i + 1))
	done
	sleep 2
done
