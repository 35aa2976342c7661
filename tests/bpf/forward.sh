#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rdma-inject forward on this host's kernel (root, no VM): a bump in the
# wire between two network namespaces. nsA (198.18.10.1) and nsB
# (198.18.10.2) are joined only through the forwarder's two ports, a veth
# end each, in a third namespace. RoCEv2-shaped datagrams (UDP 4791, a BTH)
# from nsA must reach nsB through XDP; the ports' rules drop what they say;
# the hooks count what passed; flush leaves nothing.
set -u
cd "$(dirname "$0")/../.."
B=$PWD/build/bin/rdma-inject
PIN=/sys/fs/bpf/rdma-inject-fwdtest-$$
S=bpf/forward
pass() { echo "PASS: $S/$1${2:+ ($2)}"; }
fail() { echo "FAIL: $S/$1${2:+ ($2)}"; }
T="bad_ports forwards ingress_rule egress_rule hook_counters ecn_mark corrupt jumbo duplicate trace cnp stop
   port_back flush_clean"
echo "PLAN: $S" $T
if [ "$(id -u)" != 0 ]; then for t in $T; do echo "SKIP: $S/$t (needs root)"; done; exit 0; fi
A=rfa$$ Z=rfb$$ F=rff$$	# namespaces
F() { nsenter --net=/run/netns/$F "$@"; }	# the forwarder's: keeps our mounts (the pins)
I() { F "$B" --pin "$PIN" "$@"; }
cleanup() {
	I flush >/dev/null 2>&1
	ip netns del $A 2>/dev/null; ip netns del $Z 2>/dev/null; ip netns del $F 2>/dev/null
	rm -rf "$PIN"
}
trap cleanup EXIT
setup() {
	ip netns add $A && ip netns add $Z && ip netns add $F &&
	ip -n $A link add a0 type veth peer name a1 netns $F &&
	ip -n $Z link add b0 type veth peer name b1 netns $F &&
	ip -n $A addr add 198.18.10.1/24 dev a0 && ip -n $Z addr add 198.18.10.2/24 dev b0 &&
	for n in "$A a0" "$Z b0" "$F a1" "$F b1"; do set -- $n; ip -n $1 link set $2 up || return 1; done &&
	# a veth takes XDP frames redirected to it only with NAPI on (GRO); and
	# a frame XDP redirects keeps a checksum a veth left to "hardware" undone
	ip netns exec $A ethtool -K a0 gro on tx off >/dev/null &&
	ip netns exec $Z ethtool -K b0 gro on tx off >/dev/null
}
if ! e=$(setup 2>&1); then
	for t in $T; do fail "$t" "setup: $e"; done; exit 0
fi

# N datagrams from nsA to nsB, RC SEND only to QP 0x11, PSN 0..N-1:
# "arrived CE-marked last-byte-changed ICRC-changed out-of-order"
send_recv() {
	ip netns exec $Z python3 - "$1" > "$W/recv" <<'EOF' &
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind(("198.18.10.2", 4791))
s.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
s.settimeout(20.0)	# the sender may be slow to start; then 2 s of quiet ends it
n = ce = bad = icrc = ooo = 0
top = -1
print("ready", flush=True)
try:
    while True:
        d, anc, _, _ = s.recvmsg(2048, 64)
        s.settimeout(2.0)
        n += 1
        ce += any(l == socket.IPPROTO_IP and t == socket.IP_TOS and (x[0] & 3) == 3 for l, t, x in anc)
        bad += d[-5] != 0
        icrc += d[-4:] != bytes(4)
        psn = struct.unpack("!I", d[8:12])[0] & 0xffffff
        ooo += psn < top
        top = max(top, psn)
except socket.timeout:
    pass
print(n, ce, bad, icrc, ooo)
EOF
	local rp=$!
	for i in $(seq 50); do grep -q ready "$W/recv" 2>/dev/null && break; sleep 0.1; done
	ip netns exec $A python3 - "$1" <<'EOF'
import socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for psn in range(int(sys.argv[1])):
    bth = struct.pack("!BBHII", 0x04, 0, 0xffff, 0x11, 0x80000000 | psn)
    s.sendto(bth + bytes(64) + bytes(4), ("198.18.10.2", 4791))
    if psn % 50 == 49:
        time.sleep(0.002)
EOF
	wait $rp
	tail -n 1 "$W/recv"
}
# how many arrived (the first of send_recv's figures)
arrived() { send_recv "$1" | cut -d' ' -f1; }
W=$(mktemp -d /tmp/rtb-fwd.XXXXXX)
trap 'cleanup; rm -rf "$W"' EXIT

# --- bad ports: one port, a missing device: exit 2, nothing attached
o1=$(I forward a1 2>&1); r1=$?
o2=$(I forward a1 nosuch0 2>&1); r2=$?
F ip link add lp0 type veth peer name lp1	# a veth's two ends: a loop
o3=$(ip netns exec $F "$B" --pin "$PIN" forward lp0 lp1 2>&1); r3=$?	# its /sys: the veth's
F ip link del lp0
if [ $r1 = 2 ] && [ $r2 = 2 ] && [ $r3 = 2 ] && grep -q "which ports" <<< "$o1" &&
	grep -q "nosuch0: no such device" <<< "$o2" && grep -q "two ends of one veth" <<< "$o3" &&
	! F ip link show a1 | grep -q xdp; then
	pass bad_ports "one port: $o1; missing: $o2; a loop: $o3"
else
	fail bad_ports "r1=$r1 $o1 | r2=$r2 $o2 | r3=$r3 $o3"
fi

# --- forwarding: everything arrives, the mode said
out=$(I -j forward a1 b1 2>&1); rc=$?
mode=$(jq -r .mode <<< "$out" 2>/dev/null)
got=$(arrived 1000)
again=$(I forward b1 a1 2>&1); arc=$?	# one forwarder a host
if [ $rc = 0 ] && [ "$got" = 1000 ] && F ip link show a1 | grep -q "xdp" && [ $arc = 1 ] &&
	grep -q "runs on this host already" <<< "$again"; then
	pass forwards "1000 of 1000 datagrams through $mode XDP; a second forward: $again"
else
	fail forwards "rc=$rc $out; got $got; second: $arc $again"
fi

# NAME DEV DIR RULE WANT: the rule on a fresh forwarder, 1000 sent: WANT
# must arrive and the rule have dropped the rest (st: the stats after)
drop_case() {
	I flush >/dev/null; I forward a1 b1 >/dev/null
	I add dev "$2" "$3" $4 >/dev/null
	got=$(arrived 1000)
	st=$(I -j stats)
	dropped=$(jq --arg d "$2" '[.rules[] | select(.dev == $d) | .counters.dropped] | add' <<< "$st")
	if [ "$got" = "$5" ] && [ "$dropped" = $((1000 - $5)) ]; then
		pass "$1" "$got of 1000 arrived; $2 $3 dropped $dropped"
	else
		fail "$1" "got $got, dropped $dropped"
	fi
}
# a rule on a port's ingress (the port's XDP program), and one on the other
# port's egress (the device map's program)
drop_case ingress_rule a1 ingress "opcode data drop every 10" 900
drop_case egress_rule b1 egress "drop every 4" 750

# --- the hooks counted what passed them: a1 ingress 1000 RoCE, b1 egress 1000
# seen; with the rule there deleted, b1 egress keeps its hook and counters
# (a forwarder's port keeps both while it forwards)
ain=$(jq '[.hooks[] | select(.dev == "a1" and .dir == "ingress") | .roce_pkts] | add' <<< "$st")
I del "$(jq '.rules[0].id' <<< "$st")" >/dev/null
st=$(I -j stats)
beg=$(jq '[.hooks[] | select(.dev == "b1" and .dir == "egress") | .roce_pkts] | add' <<< "$st")
if [ "$ain" = 1000 ] && [ "$beg" = 1000 ]; then
	pass hook_counters "a1 ingress $ain, b1 egress $beg RoCE packets (its rule deleted: counters kept)"
else
	fail hook_counters "a1 ingress $ain, b1 egress $beg: $(head -c 300 <<< "$st")"
fi

# --- ECN CE on every 2nd data packet, in XDP: the receiver's TOS says so
I flush >/dev/null; I forward a1 b1 >/dev/null
I add dev a1 ingress opcode data ecn every 2 >/dev/null
r=$(send_recv 1000 | cut -d' ' -f1-4)
marked=$(I -j stats | jq '[.rules[].counters.marked] | add')
if [ "$r" = "1000 500 0 0" ] && [ "$marked" = 500 ]; then
	pass ecn_mark "1000 arrived, 500 with CE (IP checksum right: the kernel took them), rule marked $marked"
else
	fail ecn_mark "arrived/ce/bad/icrc: $r; marked $marked"
fi

# --- corrupt: whole frames with a right ICRC (IBA annex 17, as
# tests/bpf/frames.h computes it) sent on a0 and read on b0: every 4th has
# its last payload byte flipped; icrc mode leaves the ICRC wrong, payload
# mode makes it right again
# the RoCEv2 ICRC of an IPv4 frame up to its ICRC: the CRC-32 of 8 bytes of
# ones, the IP, UDP and BTH headers with their variant fields as ones, the rest
cat > "$W/roce.py" <<'EOF2'
import zlib
def icrc(f):
    h = bytearray(f[14:14 + 40])
    h[1] = 0xff; h[8] = 0xff; h[10] = h[11] = 0xff; h[26] = h[27] = 0xff; h[32] = 0xff
    return zlib.crc32(f[54:], zlib.crc32(bytes(h), zlib.crc32(b"\xff" * 8)))
EOF2
raw_corrupt() {	# MODE [PAYLOAD]: "seen flipped icrc_right" at b0
	I flush >/dev/null; I forward a1 b1 >/dev/null
	I add dev a1 ingress opcode data corrupt $1 every 4 >/dev/null
	ip netns exec $Z python3 - b0 "$W" <<'EOF2' > "$W/raw" &
import socket, struct, sys
sys.path.insert(0, sys.argv[2])
from roce import icrc
r = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
# room for all 400 frames, jumbo ones too (the default, ~200 KB, held ~25
# of them: a receiver a busy host kept waiting lost frames, 1 run in 3)
r.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)	# SO_RCVBUFFORCE (root)
r.bind(("b0", 0))
r.settimeout(20.0)	# as send_recv's receiver
n = flipped = right = 0
print("ready", flush=True)
try:
    while True:
        f = r.recv(16384)
        if len(f) < 60 or f[23] != 17 or f[36:38] != b"\x12\xb7":
            continue
        r.settimeout(2.0)
        n += 1
        flipped += f[-5] != 0
        right += struct.unpack("<I", f[-4:])[0] == icrc(f[:-4])
except socket.timeout:
    pass
print(n, flipped, right)
EOF2
	local rp=$! mac
	for i in $(seq 50); do grep -q ready "$W/raw" 2>/dev/null && break; sleep 0.1; done
	mac=$(ip -n $Z -j link show b0 | jq -r '.[0].address')
	ip netns exec $A python3 - "$mac" "$(ip -n $A -j link show a0 | jq -r '.[0].address')" "$W" "${2:-64}" <<'EOF2'
import socket, struct, sys, time
sys.path.insert(0, sys.argv[3])
from roce import icrc
def csum(b):
    s = sum(struct.unpack("!10H", b))
    s = (s & 0xffff) + (s >> 16); s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
dst, src = (bytes.fromhex(m.replace(":", "")) for m in sys.argv[1:3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("a0", 0))
for psn in range(400):
    bth = struct.pack("!BBHII", 0x04, 0, 0xffff, 0x11, 0x80000000 | psn)
    body = bth + bytes(int(sys.argv[4]))
    udp = struct.pack("!HHHH", 49152, 4791, 8 + len(body) + 4, 0)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp) + len(body) + 4, psn, 0x4000, 64, 17, 0,
                               bytes([198, 18, 10, 1]), bytes([198, 18, 10, 2])))
    ip[10:12] = struct.pack("!H", csum(bytes(ip)))
    f = dst + src + b"\x08\x00" + bytes(ip) + udp + body
    s.send(f + struct.pack("<I", icrc(f)))
    if psn % 50 == 49:
        time.sleep(0.002)
EOF2
	wait $rp
	tail -n 1 "$W/raw"
}
r1=$(raw_corrupt icrc)
r2=$(raw_corrupt payload)
if [ "$r1" = "400 100 300" ] && [ "$r2" = "400 100 400" ]; then
	pass corrupt "400 frames each: icrc mode 100 flipped, 300 ICRCs right; payload mode 100 flipped, 400 right"
else
	fail corrupt "icrc: $r1; payload: $r2 (seen flipped right)"
fi

# --- frames larger than a page (a 9000-byte MTU): multi-buffer XDP, native
# on a veth (a program without it is refused there at such an MTU); the
# ICRC, in the frame's last buffer, made right by the payload mode; the
# hook counts each frame whole
mtu() {
	local m=$1 n
	for n in "$A a0" "$Z b0" "$F a1" "$F b1"; do set -- $n; ip -n "$1" link set "$2" mtu "$m" || return 1; done
}
if mtu 9000; then
	I flush >/dev/null
	jm=$(I -j forward a1 b1 2>&1 | jq -r .mode 2>/dev/null)
	r=$(raw_corrupt payload 8000)
	jb=$(I -j stats | jq '[.hooks[] | select(.dev == "a1" and .dir == "ingress") | .roce_bytes] | add')
	# 14 + 20 + 8 + 12 + 8000 + 4 bytes a frame
	if [ "$jm" = native ] && [ "$r" = "400 100 400" ] && [ "$jb" = $((400 * 8058)) ]; then
		pass jumbo "8058-byte frames through native XDP: 400 arrived, 100 flipped, 400 ICRCs right; a1 ingress counted $jb bytes"
	else
		fail jumbo "mode $jm; seen flipped right: $r; a1 ingress bytes $jb (want $((400 * 8058)))"
	fi
else
	fail jumbo "could not set a 9000-byte MTU"
fi
mtu 1500

# --- the slow path (XDP decides, tc does it): duplicate here; delay and
# reorder need the sending port's qdiscs (sch_prio, fq, netem), which this
# host's kernel may lack: 30-inject/forward_switch runs them in the VM
I flush >/dev/null; I forward a1 b1 >/dev/null
I add dev a1 ingress opcode data duplicate every 4 >/dev/null
r=$(send_recv 1000)
dup=$(I -j stats | jq '[.rules[].counters.duplicated] | add')
if [ "$(cut -d' ' -f1 <<< "$r")" = 1250 ] && [ "$dup" = 250 ]; then
	pass duplicate "1000 sent, $(cut -d' ' -f1 <<< "$r") arrived; the rule duplicated $dup"
else
	fail duplicate "arrived...: $r; duplicated $dup"
fi
# --- a trace of a forwarder's hooks (XDP writes the records): every frame
# with the rule's verdict, as pcapng
I flush >/dev/null; I forward a1 b1 >/dev/null
I add dev a1 ingress opcode data drop every 5 >/dev/null
I trace count 300 for 30s to "$W/t.pcapng" dev a1 ingress > "$W/trace.out" 2>&1 &
tp=$!
sleep 1
got=$(arrived 300)
wait $tp; trc=$?
n=$(tshark -r "$W/t.pcapng" 2>/dev/null | wc -l)
nd=$(tshark -r "$W/t.pcapng" -T fields -e frame.comment 2>/dev/null | grep -c dropped)
if [ $trc = 0 ] && [ "$got" = 240 ] && [ "$n" = 300 ] && [ "$nd" = 60 ]; then
	pass trace "300 frames traced at a1 ingress in XDP, 60 with the verdict dropped; 240 arrived"
else
	fail trace "trace exit $trc ($(head -c 200 "$W/trace.out")); arrived $got; $n frames, $nd dropped"
fi

# --- cnp in the forwarder: it learns the QP pair from a request with
# AckReq and its ACK (nsB answers every request), then each data packet
# the rule selects passes and a CNP goes back out the port it came in on:
# opcode 0x81, BECN, the sender's QPN (0x22), from B to A, its ICRC right
# (read raw on a0). The first request, before the ACK, sends none
cnp_case() {	# DEV DIR: "cnps becn_qpn_right icrc_right" at a0, then "requests" at b0
	I flush >/dev/null; I forward a1 b1 >/dev/null
	I add dev "$1" "$2" opcode data cnp >/dev/null
	ip netns exec $A python3 - "$W" <<'EOF2' > "$W/cnpa" &
import socket, struct, sys
sys.path.insert(0, sys.argv[1])
from roce import icrc
r = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
r.bind(("a0", 0))
r.settimeout(20.0)
n = ok = right = 0
print("ready", flush=True)
try:
    while True:
        f = r.recv(16384)
        if len(f) < 60 or f[23] != 17 or f[36:38] != b"\x12\xb7" or f[42] != 0x81:
            continue
        r.settimeout(2.0)
        n += 1
        ok += f[26:30] == bytes([198, 18, 10, 2]) and f[46] & 0x40 != 0 and f[47:50] == b"\x00\x00\x22"
        right += struct.unpack("<I", f[-4:])[0] == icrc(f[:-4])
except socket.timeout:
    pass
print(n, ok, right)
EOF2
	local cp=$!
	ip netns exec $Z python3 - <<'EOF2' > "$W/cnpb" &
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.10.2", 4791))
s.settimeout(20.0)
n = 0
print("ready", flush=True)
try:
    while True:
        d, a = s.recvfrom(2048)
        s.settimeout(2.0)
        n += 1
        psn = struct.unpack("!I", d[8:12])[0] & 0xffffff
        ack = struct.pack("!BBHII", 0x11, 0, 0xffff, 0x22, psn) + struct.pack("!I", 0x1f000000 | psn)
        s.sendto(ack + bytes(4), ("198.18.10.1", 4791))
except socket.timeout:
    pass
print(n)
EOF2
	local bp=$!
	for i in $(seq 50); do grep -q ready "$W/cnpa" 2>/dev/null && grep -q ready "$W/cnpb" 2>/dev/null && break; sleep 0.1; done
	ip netns exec $A python3 - <<'EOF2'
import socket, struct, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for psn in range(200):
    bth = struct.pack("!BBHII", 0x04, 0, 0xffff, 0x11, 0x80000000 | psn)
    s.sendto(bth + bytes(64) + bytes(4), ("198.18.10.2", 4791))
    time.sleep(0.5 if psn == 0 else 0.002)
EOF2
	wait $cp $bp
	echo "$(tail -n 1 "$W/cnpa") $(tail -n 1 "$W/cnpb") $(I -j stats | jq '[.rules[].counters.notified] | add')"
}
c1=$(cnp_case a1 ingress)
c2=$(cnp_case b1 egress)
I flush >/dev/null
if [ "$c1" = "199 199 199 200 199" ] && [ "$c2" = "199 199 199 200 199" ]; then
	pass cnp "a1 ingress and b1 egress: 200 requests arrived, 199 CNPs back at a0 (BECN, QPN 0x22, from B, ICRC right), the rule notified 199; the first, before the ACK, none"
else
	fail cnp "a1 ingress: $c1; b1 egress: $c2 (cnps right icrc_right | requests | notified)"
fi

# --- forward stop takes the forwarder down and nothing else: refused while
# a rule sits on its port; then its XDP, tables and hooks go, a rule on
# another device stays, a1 and b1 no longer carry anything; it starts again
I flush >/dev/null; I forward a1 b1 >/dev/null
F ip link add sd$$ type veth peer name se$$; F ip link set sd$$ up
I add dev sd$$ egress drop 1% >/dev/null
on=$(I add dev a1 ingress drop 1%)
o1=$(I forward stop 2>&1); r1=$?
I del "$on" >/dev/null
o2=$(I forward stop 2>&1); r2=$?
left=$(F ip -o link show | grep -c xdp); pins=$(ls "$PIN" | grep -c '^inj_fwd_')
rules=$(I -j list | jq -c '[.rules[].dev]'); hooks=$(I -j stats | jq -c '[.hooks[].dev] | unique')
cut=$(arrived 200)
o3=$(I forward stop 2>&1); r3=$?
I forward a1 b1 >/dev/null; again=$(arrived 200)
I flush >/dev/null; F ip link del sd$$
if [ $r1 = 1 ] && grep -q "rule $on is on its port a1" <<< "$o1" && [ $r2 = 0 ] &&
	[ "$left" = 0 ] && [ "$pins" = 0 ] && [ "$rules" = "[\"sd$$\"]" ] &&
	[ "$hooks" = "[\"sd$$\"]" ] && [ "$cut" = 0 ] && [ $r3 = 1 ] &&
	grep -q "no forwarder runs" <<< "$o3" && [ "$again" = 200 ]; then
	pass stop "with a rule on a1: $o1; then: $o2; the rule on sd$$ stays, 0 of 200 crossed, started again 200 of 200"
else
	fail stop "r1=$r1 $o1 | r2=$r2 $o2 | xdp left $left, pins $pins, rules $rules, hooks $hooks, crossed $cut, again: $r3 $o3, $again"
fi

# --- forward port: a port that came back as a new device (a VM's tap after
# its reboot; here b1's veth made again) is taken in where it was: nothing
# crosses before, everything after, and a rule on its egress runs there.
# Refused, said: a port already in, a device that is not one of its ports
I flush >/dev/null; I forward a1 b1 >/dev/null
o1=$(I forward port a1 2>&1); r1=$?
F ip link add zz$$ type veth peer name zy$$
o2=$(I forward port zz$$ 2>&1); r2=$?
F ip link del zz$$
mac=$(ip -n $Z -j link show b0 | jq -r '.[0].address')	# as a rebooted VM's NIC keeps its MAC
ip -n $Z link del b0
ip -n $Z link add b0 address "$mac" type veth peer name b1 netns $F && ip -n $Z addr add 198.18.10.2/24 dev b0 &&
	ip -n $Z link set b0 up && F ip link set b1 up && ip netns exec $Z ethtool -K b0 gro on tx off >/dev/null
before=$(arrived 200)
o3=$(I -j forward port b1 2>&1); r3=$?
after=$(arrived 200)
I add dev b1 egress drop every 4 >/dev/null
ruled=$(arrived 200); dropped=$(I -j stats | jq '[.rules[] | select(.dev == "b1") | .counters.dropped] | add')
I flush >/dev/null
if [ $r1 = 2 ] && grep -q "a1: in the forwarder already" <<< "$o1" && [ $r2 = 2 ] &&
	grep -q "not a port of the forwarder" <<< "$o2" && [ "$before" = 0 ] && [ $r3 = 0 ] &&
	[ "$(jq -r .port <<< "$o3")" = b1 ] && [ "$after" = 200 ] && [ "$ruled" = 150 ] && [ "$dropped" = 50 ]; then
	pass port_back "b1 made again: 0 of 200 crossed; forward port b1: $o3; then 200 of 200, a rule on its egress dropped 50 of 200; refused: $o1; $o2"
else
	fail port_back "r1=$r1 $o1 | r2=$r2 $o2 | before $before, r3=$r3 $o3, after $after, ruled $ruled dropped $dropped"
fi

# --- flush: no XDP program, no pins, no qdisc left
I forward a1 b1 >/dev/null
I flush >/dev/null
if ! F ip link show a1 | grep -q xdp && ! F ip link show b1 | grep -q xdp && [ ! -e "$PIN" ] &&
	! F tc qdisc show | grep -qE "clsact|prio|fq|netem"; then
	pass flush_clean "no XDP, no pins, no clsact, prio, fq or netem"
else
	fail flush_clean "$(F ip -o link show | grep xdp | head -c 200) $(ls "$PIN" 2>&1 | head -c 100)"
fi
