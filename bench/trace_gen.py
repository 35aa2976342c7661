#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""trace_gen.py QPS OUT: a pcapng like rdma-inject trace's, with QPS RC
queue pairs between two nodes: each sends 3 SENDs and gets 2 ACKs, every
packet seen at both capture points (n0 egress and n1 ingress, n1 egress and
n0 ingress): 10 packets a QP. The headers (section, interfaces) and the
packet templates come from tests/fuzz/corpus/trace/rc-pingpong-1pct.pcapng,
a real trace; only the QPN, PSN, opcode and time are set here. For
rdmactl analyze's scaling (bench/analyze_scale.sh, tests/security)."""
import struct, sys

SRC = "tests/fuzz/corpus/trace/rc-pingpong-1pct.pcapng"
d = open(SRC, "rb").read()
head, req, ack, at = b"", None, None, 0
while at < len(d):
    t, l = struct.unpack_from("<II", d, at)
    if t in (0x0A0D0D0A, 1):
        head += d[at:at + l]
    elif t == 6:
        cap = struct.unpack_from("<I", d, at + 20)[0]
        op = d[at + 28 + 42]
        if op == 0x00 and req is None:
            req = bytearray(d[at + 28:at + 28 + cap])
        if op == 0x11 and ack is None:
            ack = bytearray(d[at + 28:at + 28 + cap])
    at += l

def epb(iface, ts, pkt, orig):
    pad = (-len(pkt)) % 4
    body = struct.pack("<IIIII", iface, ts >> 32, ts & 0xFFFFFFFF, len(pkt), orig) + bytes(pkt) + b"\0" * pad
    n = 12 + len(body)
    return struct.pack("<II", 6, n) + body + struct.pack("<I", n)

def bth(pkt, op, qpn, psn):
    pkt[42] = op
    pkt[47:50] = qpn.to_bytes(3, "big")
    pkt[51:54] = psn.to_bytes(3, "big")

qps, out = int(sys.argv[1]), open(sys.argv[2], "wb")
out.write(head)
ts = 1_700_000_000_000_000
for q in range(qps):
    qpn, psn0 = 0x100 + q, (q * 7919) & 0xFFFFFF
    buf = []
    for i in range(3):
        bth(req, 0x04, qpn, (psn0 + i) & 0xFFFFFF)	# RC SEND only
        buf.append(epb(1, ts, req, 1082)); buf.append(epb(2, ts + 1, req, 1082))
        ts += 2
        if i in (1, 2):
            bth(ack, 0x11, qpn, (psn0 + i) & 0xFFFFFF)
            buf.append(epb(3, ts, ack, 62)); buf.append(epb(0, ts + 1, ack, 62))
            ts += 2
    out.write(b"".join(buf))
out.close()
