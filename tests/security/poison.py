#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""poison.py IN OUT: report.json IN with every string value ending in a
payload that would be live HTML if printed unescaped; OUT gets the result.
Prints how many strings it poisoned."""
import json, sys

PAYLOAD = "\"'<img src=x onerror=alert(1)></script><script>alert(2)</script>"

def walk(o):
    n = 0
    items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else []
    for k, v in list(items):
        if isinstance(v, str):
            o[k] = v + PAYLOAD
            n += 1
        else:
            n += walk(v)
    return n

r = json.load(open(sys.argv[1]))
n = walk(r)
json.dump(r, open(sys.argv[2], "w"))
print(n)
