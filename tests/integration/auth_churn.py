#!/usr/bin/env python3
"""tests/integration/auth_churn.py: one process churning unauthenticated TCP connections at a rankmapd,
for auth_flood.sh. Not rankmap code: it does what an attacker would.

Usage: auth_churn.py HOST PORT SECONDS MAXCONN STOPFILE
Keeps up to MAXCONN connections open at once, for SECONDS at most or until STOPFILE exists, each doing
one of: nothing (held until the daemon closes it), connect and close, a hello then nothing, a hello then
a bogus credential (the form of one, made with no key: munged must reject it), a bogus credential
as the first frame (as a client of version 1 would send it), a garbage first frame.
AUTH_CHURN_KINDS (comma-separated) limits the kinds. Prints one line at the end: "connections N silent N closed N hello N bogus N garbage N answered-hello N".
"""
import base64
import os
import random
import selectors
import socket
import struct
import sys
import time

host, port, seconds, maxconn, stopfile = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
end = time.time() + seconds
sel = selectors.DefaultSelector()
stats = {k: 0 for k in ("connections", "silent", "closed", "hello", "bogus", "first-bogus", "garbage", "answered-hello")}
KINDS = tuple((os.environ.get("AUTH_CHURN_KINDS") or "silent,closed,hello,bogus,first-bogus,garbage").split(","))


def frame(b):
    return struct.pack(">I", len(b)) + b


def hello():
    return frame(b"rankmap-hello 2 " + os.urandom(16).hex().encode())


def bogus():
    return frame(b"MUNGE:" + base64.b64encode(os.urandom(120)) + b":")


class Conn:
    def __init__(self):
        self.kind = random.choice(KINDS)
        self.s = socket.socket()
        self.s.setblocking(False)
        self.connected = False
        self.born = time.time()
        self.s.connect_ex((host, port))
        sel.register(self.s, selectors.EVENT_WRITE, self)
        stats["connections"] += 1
        stats[self.kind] += 1

    def close(self):
        try:
            sel.unregister(self.s)
        except (KeyError, ValueError):
            pass
        self.s.close()

    def event(self, mask):
        if not self.connected:
            if self.s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                return False
            self.connected = True
            if self.kind == "closed":
                return False
            try:
                if self.kind in ("hello", "bogus"):
                    self.s.send(hello())
                elif self.kind == "first-bogus":
                    self.s.send(bogus())
                elif self.kind == "garbage":
                    self.s.send(b"GET / HTTP/1.0\r\n\r\n")
            except OSError:
                return False
            sel.modify(self.s, selectors.EVENT_READ, self)
            return True
        try:
            d = self.s.recv(65536)
        except OSError:
            return False
        if not d:
            return False
        if self.kind == "bogus" and b'"cred"' in d:  # the server's credential: answer with a bogus one
            stats["answered-hello"] += 1
            try:
                self.s.send(bogus())
            except OSError:
                return False
        return True


conns = set()
while time.time() < end and not os.path.exists(stopfile):
    while len(conns) < maxconn:
        try:
            conns.add(Conn())
        except OSError:
            break
    for key, mask in sel.select(timeout=0.05):
        c = key.data
        if not c.event(mask):
            c.close()
            conns.discard(c)
    now = time.time()
    for c in [c for c in conns if now - c.born > 10]:  # never held forever
        c.close()
        conns.discard(c)
for c in conns:
    c.close()
print(" ".join("%s %d" % (k, v) for k, v in stats.items()), flush=True)
