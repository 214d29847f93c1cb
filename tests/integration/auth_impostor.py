#!/usr/bin/env python3
"""tests/integration/auth_impostor.py: an unprivileged impostor on a rankmapd's address while that daemon
is down, for auth_relay.sh. Not rankmap code: it does what an attacker would.

Usage: auth_impostor.py LISTEN_ADDR LISTEN_PORT MODE BACKEND_ADDR BACKEND_PORT DIR SECONDS
  relay   every connection is relayed both ways to BACKEND (the backup rankmapd)
  busy    every connection's first frame is answered by a "busy" error (the daemon seems overloaded,
          so the client fails over, as with the old protocol's relay)
Each frame a client sends is kept as DIR/c<N>.f<K> (its payload), for the attacker to use later. Stops
by itself after SECONDS. Prints "listening" once it listens.
"""
import json
import os
import select
import socket
import struct
import sys
import time

laddr, lport, mode, baddr, bport, outdir, seconds = sys.argv[1:8]
end = time.time() + float(seconds)
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((laddr, int(lport)))
ls.listen(16)
print("listening", flush=True)
nconn = 0


def frames(buf, n, kept):
    """Keeps every complete frame of buf (client to server) not kept yet; returns how many are kept."""
    off, k = 0, 0
    while len(buf) - off >= 4:
        ln = struct.unpack(">I", buf[off:off + 4])[0]
        if len(buf) - off - 4 < ln:
            break
        if k >= kept:
            with open(os.path.join(outdir, "c%d.f%d" % (n, k)), "wb") as f:
                f.write(buf[off + 4:off + 4 + ln])
        off += 4 + ln
        k += 1
    return max(k, kept)


def serve(c, n):
    buf, kept = b"", 0
    b = socket.create_connection((baddr, int(bport)), timeout=5) if mode == "relay" else None
    c.settimeout(None)
    while time.time() < end:
        socks = [c] + ([b] if b else [])
        r, _, _ = select.select(socks, [], [], 0.2)
        for s in r:
            d = s.recv(65536)
            if not d:
                return
            if s is c:
                buf += d
                kept = frames(buf, n, kept)
                if b:
                    b.sendall(d)
                elif kept:
                    e = json.dumps({"version": 1, "id": None, "ok": False,
                                    "error": {"code": "busy", "message": "try again later"}}).encode()
                    c.sendall(struct.pack(">I", len(e)) + e)
                    return
            else:
                c.sendall(d)


ls.settimeout(0.2)
while time.time() < end:
    try:
        c, _ = ls.accept()
    except socket.timeout:
        continue
    nconn += 1
    try:
        serve(c, nconn)
    except OSError:
        pass
    c.close()
