#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""slowclient.py PORT: one client sends "GET /metrics HTTP/1.1\\r\\n\\r\\n" a
byte every 1.5 s; 0.2 s after it connects, a second client sends its whole
request. Prints the seconds the second waited for its answer, and how many
bytes the slow one had sent by then (the agent serves one at a time)."""
import socket, sys, threading, time

port = int(sys.argv[1])
req = b"GET /metrics HTTP/1.1\r\n\r\n"
sent = [0]

def slow():
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        for b in req:
            s.sendall(bytes([b]))
            sent[0] += 1
            time.sleep(1.5)
    except OSError:
        pass

t = threading.Thread(target=slow, daemon=True)
t.start()
time.sleep(0.2)
t0 = time.time()
s = socket.create_connection(("127.0.0.1", port), timeout=60)
s.sendall(req)
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
print("%.2f %d %s" % (time.time() - t0, sent[0], data.split(b"\r\n", 1)[0].decode()))
