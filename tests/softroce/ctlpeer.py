#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A peer of rdma-agent's control channel (lib/proto.h: a 4-byte big-endian
length, then one JSON object), for the hostile-peer tests:
  ctlpeer.py call PORT TOKENFILE CMD ARGS-JSON   one request, the reply on stdout
  ctlpeer.py idle PORT N SECONDS                 N connections that send nothing;
                                                 prints how many the agent closed
                                                 within 1.5 s of the last connect
                                                 (over a cap), then how many
                                                 within SECONDS of the first
  ctlpeer.py hold PORT TOKENFILE CMD ARGS-JSON S  one request, the reply on stdout,
                                                 then the connection held open S s
  ctlpeer.py bigframe PORT N                     N connections announcing 16 MiB
                                                 and sending 1 KiB of it; prints
                                                 how many the agent closed at once
Only 127.0.0.1 (the testbed's forwarded ports)."""
import json, select, socket, struct, sys, time

def conn(port):
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
    return s

def recv_frame(s):
    hdr = b""
    while len(hdr) < 4:
        b = s.recv(4 - len(hdr))
        if not b:
            raise EOFError
        hdr += b
    n = struct.unpack(">I", hdr)[0]
    buf = b""
    while len(buf) < n:
        b = s.recv(n - len(buf))
        if not b:
            raise EOFError
        buf += b
    return json.loads(buf)

def call(port, tokfile, cmd, args, hold=0):
    tok = open(tokfile).read().strip()
    s = conn(port)
    body = json.dumps({"v": 1, "token": tok, "cmd": cmd, "args": json.loads(args)}).encode()
    s.sendall(struct.pack(">I", len(body)) + body)
    print(json.dumps(recv_frame(s)), flush=True)
    time.sleep(float(hold))

def hold(port, tokfile, cmd, args, seconds):
    call(port, tokfile, cmd, args, seconds)

def closed_within(socks, seconds):
    """those of socks that see EOF (or a reset) within seconds"""
    left, gone, dl = list(socks), [], time.time() + seconds
    while left and time.time() < dl:
        r, _, _ = select.select(left, [], [], max(0.0, dl - time.time()))
        for s in r:
            try:
                if s.recv(65536):
                    continue
            except OSError:
                pass
            gone.append(s)
            left.remove(s)
    return gone

def idle(port, n, seconds):
    socks, t0 = [], time.time()
    for _ in range(int(n)):
        try:
            socks.append(conn(port))
        except OSError:
            pass
        time.sleep(0.03)  # qemu's user network passes a burst of connects slowly
    early = closed_within(socks, 1.5)
    print(len(early), flush=True)
    rest = [s for s in socks if s not in early]
    print(len(early) + len(closed_within(rest, float(seconds) - (time.time() - t0))), flush=True)

def bigframe(port, n):
    socks = []
    for _ in range(int(n)):
        s = conn(port)
        s.sendall(struct.pack(">I", 16 << 20) + b"x" * 1024)
        socks.append(s)
    print(len(closed_within(socks, 3.0)))

if __name__ == "__main__":
    verb, rest = sys.argv[1], sys.argv[2:]
    {"call": call, "hold": hold, "idle": idle, "bigframe": bigframe}[verb](*rest)
