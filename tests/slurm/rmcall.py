#!/usr/bin/env python3
"""tests/slurm/rmcall.py: a minimal, independent rankmapd client for the SPANK tests.

Frames are a 4-byte big-endian length and one JSON object (daemon/client/rm_client.h). Usage:
  rmcall.py SOCKET 'JSON request'        prints the JSON response; exit 0 when "ok" is true
  rmcall.py SOCKET --bind-expect NODE CORES NTASKS [ALGO]
        prints the CPU list each local task of NODE should get for --rankmap-bind without a pattern
        (a chain in rank order over the allocated CORES), one per line in local task order, as the
        daemon maps it. Core c is taken to be OS CPU c (the test host has one PU per core).
"""
import json
import socket
import struct
import sys


def recvall(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("daemon closed the connection")
        buf += chunk
    return buf


def call(path, req):
    req.setdefault("version", 1)
    req.setdefault("id", 1)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    body = json.dumps(req).encode()
    s.sendall(struct.pack(">I", len(body)) + body)
    n = struct.unpack(">I", recvall(s, 4))[0]
    resp = json.loads(recvall(s, n))
    s.close()
    return resp


def parse_list(text):
    out = []
    for item in text.split(","):
        a, _, b = item.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def bind_expect(path, node, cores, ntasks, algo):
    cores = parse_list(cores)
    edges = [[i, i + 1, 1.0] for i in range(ntasks - 1)]
    resp = call(path, {"type": "map", "pattern": {"n": ntasks, "edges": edges},
                       "slots": [[node, c] for c in cores], "engine": algo})
    if not resp.get("ok"):
        print(json.dumps(resp), file=sys.stderr)
        return 1
    for slot in resp["permutation"]:
        print(resp["slots"][slot][1])
    return 0


def main():
    if len(sys.argv) >= 6 and sys.argv[2] == "--bind-expect":
        algo = sys.argv[6] if len(sys.argv) > 6 else "auto"
        return bind_expect(sys.argv[1], sys.argv[3], sys.argv[4], int(sys.argv[5]), algo)
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    resp = call(sys.argv[1], json.loads(sys.argv[2]))
    print(json.dumps(resp))
    return 0 if resp.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
