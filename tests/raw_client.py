#!/usr/bin/env python3
"""tests/raw_client.py: a raw TCP client of rankmapd for the refusal checks of daemon_tcp.sh and
cluster_tcp.sh (it is not rankmap's client library: it sends what that library never would).

Usage: raw_client.py HOST PORT MODE [FILE]
  request   a ping request as the first frame (no credential)
  cred      FILE's content (a MUNGE credential) as the first frame, then, when accepted, a ping
  garbage   a first frame that is not a credential
  huge      a frame header announcing 1 GiB, and nothing else
  silent    nothing at all
Prints "ok uid=U transport=T" (the ping's answer) when the credential was accepted, "closed" when the
daemon closed the connection without an answer, else the error's code and message and then "then
closed" or "then open" (the connection, within 3 s). Frames: 4-byte big-endian length, then JSON.
"""
import json
import socket
import struct
import sys

host, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_connection((host, port), timeout=10)


def frame(b):
    s.sendall(struct.pack(">I", len(b)) + b)


def recv_exact(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            return None
        b += c
    return b


def answer():
    h = recv_exact(4)
    if h is None:
        return None
    b = recv_exact(struct.unpack(">I", h)[0])
    return None if b is None else json.loads(b)


if mode == "request":
    frame(b'{"version":1,"type":"ping","id":1}')
elif mode == "cred":
    frame(open(sys.argv[4], "rb").read().strip())
elif mode == "garbage":
    frame(b"hello, rankmapd")
elif mode == "huge":
    s.sendall(struct.pack(">I", 1 << 30))
elif mode != "silent":
    sys.exit("raw_client.py: unknown mode %s" % mode)
r = answer()
if r is None:
    print("closed")
    sys.exit(0)
if r.get("ok"):
    if mode != "cred":
        print("ok")
        sys.exit(0)
    frame(b'{"version":1,"type":"ping","id":2}')  # authenticated: a request must now be served
    p = answer() or {}
    print("ok uid=%s transport=%s" % (p.get("uid"), p.get("transport")))
    sys.exit(0)
print(r["error"]["code"], r["error"]["message"])
try:
    s.settimeout(3)
    print("then closed" if s.recv(1) == b"" else "then open")
except Exception:
    print("then open")
