#!/usr/bin/env python3
"""tests/raw_client.py: a raw client of rankmapd for the refusal checks of daemon_tcp.sh and
cluster_tcp.sh, the raw map requests of daemon_fair.sh and daemon_isolation.sh, and the requests of
gpu_model.sh that name GPUs as rankmapctl does not (it is not rankmap's
client library: it sends what that library never would).

Usage: raw_client.py HOST PORT MODE [ARG...]   (TCP)
       raw_client.py unix SOCKET MODE [ARG...]  (the daemon's Unix socket)
  map ALGO [--cart CART] [--budget MS] [--timeout S] [--sent FILE]
            one map request (cart CART, default 4x4, on hosts bonobo001,bonobo002, engine ALGO as is:
            rankmapctl refuses unknown engine names; time_budget_ms MS when above 0), sent at once with
            no authentication; FILE is created once it is sent. Prints "ok MS WARNINGS" (WARNINGS: the
            answer's warnings as JSON), "CODE MS MESSAGE" for an error, "wrong-id MS ID" for an answer
            to another request, "noanswer MS" when none came within S seconds (default 60); MS: the
            milliseconds from the start to the answer. The other modes:
  request   a ping request as the first frame (no authentication)
  v1 FILE   FILE's content (a MUNGE credential) as the first frame: a client of TCP authentication
            version 1, which sent its credential without a hello
  garbage   a first frame that is not a hello
  huge      a frame header announcing 1 GiB, and nothing else
  silent    nothing at all
  json TEXT a request given as JSON text (a Unix socket needs no authentication), as the first frame;
            prints the answer's JSON on one line ("closed" when none came)
  hello     a hello, then nothing (prints the server's answer: "server uid=U ident=I name=N")
  login [--cred FILE] [--save FILE] [--restrict UID|none] [--ident IDENT] [--payload TEXT]
            the handshake of version 2 (PROTOCOL.md), with the munge and unmunge commands on
            $RANKMAP_MUNGE_SOCKET: a hello, the server's credential decoded (not checked: this client
            sends what the library never would), then a credential restricted to UID (default 0) whose
            payload names the server's identity and nonce (or IDENT, or TEXT as is); --cred sends FILE's
            content instead, --save keeps the credential made in FILE; then, when accepted, a ping
Prints "ok uid=U transport=T" (the ping's answer) when the credential was accepted, "closed" when the
daemon closed the connection without an answer, else the error's code and message and then "then
closed" or "then open" (the connection, within 3 s). Frames: 4-byte big-endian length, then JSON.
"""
import json
import os
import secrets
import socket
import struct
import subprocess
import sys
import time

host, port, mode = sys.argv[1], sys.argv[2], sys.argv[3]
opts = sys.argv[4:]


def opt(name, default=None):
    return opts[opts.index(name) + 1] if name in opts else default


def connect(timeout):
    if host != "unix":
        return socket.create_connection((host, int(port)), timeout=timeout)
    c = socket.socket(socket.AF_UNIX)
    c.settimeout(timeout)
    c.connect(port)
    return c


s = None if mode == "map" else connect(10)
MSOCK = os.environ.get("RANKMAP_MUNGE_SOCKET")


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


def munge_args():
    return ["-S", MSOCK] if MSOCK else []


def unmunge(cred):
    """The payload and uid of a credential, decoded by our munged (None, error text on failure)."""
    p = subprocess.run(["unmunge"] + munge_args(), input=cred, capture_output=True)
    if p.returncode:
        return None, p.stderr.decode().strip()
    meta, _, payload = p.stdout.partition(b"\n\n")
    uid = [l.split()[-1].strip("()") for l in meta.decode().splitlines() if l.startswith("UID:")]
    return payload, uid[0] if uid else "?"


def hello():
    """Sends a hello; returns the server's answer (a dict) and our nonce."""
    nonce = secrets.token_hex(16)
    frame(("rankmap-hello 2 " + nonce).encode())
    return answer(), nonce


if mode == "map":
    t0 = time.monotonic()
    algo = opts[0]
    req = {"version": 1, "type": "map", "id": "raw-" + algo, "cart": opt("--cart", "4x4"),
           "hosts": ["bonobo001", "bonobo002"], "engine": algo}
    budget = float(opt("--budget", "0"))
    if budget > 0:
        req["time_budget_ms"] = budget
    try:
        s = connect(float(opt("--timeout", "60")))
        frame(json.dumps(req).encode())
        if opt("--sent"):
            open(opt("--sent"), "w").close()
        r = answer()
        if r is None:
            raise EOFError
    except Exception:
        print("noanswer", int((time.monotonic() - t0) * 1000))
        sys.exit(0)
    ms = int((time.monotonic() - t0) * 1000)
    if r.get("id") != req["id"]:
        print("wrong-id", ms, r.get("id"))
    elif r.get("ok"):
        print("ok", ms, json.dumps(r.get("warnings", [])))
    else:
        print(r["error"]["code"], ms, r["error"]["message"])
    sys.exit(0)

if mode == "json":
    frame(json.dumps(json.loads(opts[0])).encode())
    r = answer()
    print("closed" if r is None else json.dumps(r))
    sys.exit(0)

pre = None  # a refusal of the hello, already read
if mode == "request":
    frame(b'{"version":1,"type":"ping","id":1}')
elif mode == "v1":
    frame(open(opts[0], "rb").read().strip())
elif mode in ("hello", "login"):
    r, cnonce = hello()
    if r is None or not r.get("ok"):
        pre = r or {"closed": True}  # the refusal is printed below
    elif mode == "hello":
        payload, uid = unmunge(r["cred"].encode())
        f = (payload or b"").decode(errors="replace").split(" ")
        print("server uid=%s ident=%s name=%s" % (uid, f[4] if len(f) > 4 else "?", f[5] if len(f) > 5 else "?"))
        sys.exit(0)
    else:
        payload, uid = unmunge(r["cred"].encode())
        if payload is None:
            sys.exit("raw_client.py: cannot decode the server's credential: %s" % uid)
        f = payload.decode().split(" ")
        snonce, ident = f[3], f[4]
        if opt("--cred"):
            cred = open(opt("--cred"), "rb").read().strip()
        else:
            text = opt("--payload") or "rankmap-client 2 %s %s %s" % (cnonce, snonce, opt("--ident", ident))
            restrict = opt("--restrict", "0")
            cmd = ["munge"] + munge_args() + ["-s", text] + ([] if restrict == "none" else ["-u", restrict])
            cred = subprocess.run(cmd, capture_output=True, check=True).stdout.strip()
        if opt("--save"):
            open(opt("--save"), "wb").write(cred + b"\n")
        frame(cred)
elif mode == "garbage":
    frame(b"hello, rankmapd")
elif mode == "huge":
    s.sendall(struct.pack(">I", 1 << 30))
elif mode != "silent":
    sys.exit("raw_client.py: unknown mode %s" % mode)
r = answer() if pre is None else (None if pre.get("closed") else pre)
if r is None:
    print("closed")
    sys.exit(0)
if r.get("ok"):
    if "cred" in r and mode != "login":  # a hello was answered: this client has no credential to go on with
        print("challenged (the server's credential), nothing to answer it with")
        sys.exit(0)
    if mode != "login":
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
