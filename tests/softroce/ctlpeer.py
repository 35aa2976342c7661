#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A peer of rdma-agent's control channel (lib/proto.h: a 4-byte big-endian
length, then one JSON object; both ends prove the token with HMAC-SHA256,
then every frame carries a 32-byte tag), for the hostile-peer tests and the
suites that speak the protocol themselves (import ctlpeer; Session):
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
  ctlpeer.py flood PORT N SECONDS [SRC...]       N idle connections from each
                                                 source address, each reopened as
                                                 soon as the agent closes it, for
                                                 SECONDS; prints how many it opened
Only loopback (the testbed's forwarded ports, or a host agent)."""
import hashlib, hmac, json, os, select, socket, struct, sys, time

def conn(port, src=None, host="127.0.0.1"):
    s = socket.create_connection((host, int(port)), timeout=10,
                                 source_address=(src, 0) if src else None)
    return s

def recvall(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b

def recv_frame(s):
    n = struct.unpack(">I", recvall(s, 4))[0]
    return json.loads(recvall(s, n))

def send_frame(s, obj):
    body = json.dumps(obj).encode()
    s.sendall(struct.pack(">I", len(body)) + body)

VERSION = 2

def mac(key, msg):
    return hmac.new(key, msg, hashlib.sha256).digest()

class AuthError(Exception):
    pass

class Session:
    """An authenticated connection, as rdmactl's (lib/proto.c)."""
    def __init__(self, port, token, host="127.0.0.1", timeout=30):
        self.s = socket.create_connection((host, int(port)), timeout=timeout)
        tok = token.encode()
        an = bytes.fromhex(recv_frame(self.s)["challenge"])
        cn = os.urandom(32)
        send_frame(self.s, {"v": VERSION, "nonce": cn.hex(),
                            "proof": mac(tok, b"rtb controller" + an + cn).hex()})
        r = recv_frame(self.s)
        if not r.get("ok"):
            raise AuthError(r.get("error", "refused"))
        if not hmac.compare_digest(bytes.fromhex(r["proof"]), mac(tok, b"rtb agent" + an + cn)):
            raise AuthError("the agent did not prove it holds the token")
        self.key, self.tx, self.rx = mac(tok, b"rtb key" + an + cn), 0, 0

    def send(self, obj):
        body = json.dumps(obj).encode()
        tag = mac(self.key, b"c" + struct.pack(">Q", self.tx) + body)
        self.tx += 1
        self.s.sendall(struct.pack(">I", len(body) + 32) + body + tag)

    def recv(self):
        n = struct.unpack(">I", recvall(self.s, 4))[0]
        b = recvall(self.s, n)
        body, tag = b[:-32], b[-32:]
        if not hmac.compare_digest(tag, mac(self.key, b"a" + struct.pack(">Q", self.rx) + body)):
            raise AuthError("a reply failed its authentication")
        self.rx += 1
        return json.loads(body)

    def call(self, cmd, args=None):
        self.send({"v": VERSION, "cmd": cmd, "args": args if args is not None else {}})
        return self.recv()

    def close(self):
        self.s.close()

def token_of(path):
    return open(path).read().strip()

def call(port, tokfile, cmd, args, hold=0):
    try:
        se = Session(port, token_of(tokfile))
    except AuthError as e:
        print(json.dumps({"v": VERSION, "ok": False, "error": str(e)}), flush=True)
        return
    print(json.dumps(se.call(cmd, json.loads(args))), flush=True)
    time.sleep(float(hold))

def hold(port, tokfile, cmd, args, seconds):
    call(port, tokfile, cmd, args, seconds)

def at_eof(s):
    """s has seen EOF or a reset (data it had waiting is read and dropped)"""
    try:
        return not s.recv(65536)
    except OSError:
        return True

def closed_within(socks, seconds):
    """those of socks that see EOF (or a reset) within seconds"""
    left, gone, dl = list(socks), [], time.time() + seconds
    while left and time.time() < dl:
        r, _, _ = select.select(left, [], [], max(0.0, dl - time.time()))
        for s in r:
            if at_eof(s):
                gone.append(s)
                left.remove(s)
    return gone

def closed_now(socks):
    """those of socks that have seen EOF (or a reset) by now"""
    r, _, _ = select.select(socks, [], [], 0) if socks else ([], [], [])
    return [s for s in r if at_eof(s)]

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

def flood(port, n, seconds, *srcs):
    """keep n idle connections open from each source, reopening what closes"""
    srcs = srcs or ("127.0.0.1",)
    socks, opened, dl = {}, 0, time.time() + float(seconds)
    while time.time() < dl:
        for src in srcs:
            have = socks.setdefault(src, [])
            while len(have) < int(n):
                try:
                    have.append(conn(port, src))
                    opened += 1
                except OSError:
                    break
            for s in closed_now(have):
                have.remove(s)
                s.close()
        time.sleep(0.01)
    print(opened, flush=True)

if __name__ == "__main__":
    verb, rest = sys.argv[1], sys.argv[2:]
    {"call": call, "hold": hold, "idle": idle, "bigframe": bigframe,
     "flood": flood}[verb](*rest)
