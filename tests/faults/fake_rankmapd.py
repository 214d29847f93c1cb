#!/usr/bin/env python3
"""tests/faults/fake_rankmapd.py: a misbehaving rankmapd for fault injection (the fault is the point).

Usage: fake_rankmapd.py MODE SOCKET_PATH [READY_FILE]
Listens on a Unix socket and, for every client:
  stall    accepts and never reads or answers (a daemon stuck past the client's timeout)
  half     reads the request, sends half of a valid-looking response frame, then stalls
  garbage  reads the request, answers with bytes that are not a frame, and closes
  huge     reads the request, announces a 1 GiB frame, sends a few bytes, then stalls
  close    accepts and closes at once (a daemon dying mid-request)
  busy     sends a "busy" error frame at once and closes without reading (a daemon refusing a client
           that is still sending its request: the client's send fails, the frame waits to be read)
  shortnames  answers every request ok, with a topology_conf of 20,000 lines "NodeName=a" (shorter than
           the "NodeName=x Weight=n" lines rankmapd writes: a client must not size its buffers by them)
Connections are held open until the server is killed (SIGTERM, by PID). Writes READY_FILE once
listening. Counts clients on stderr.
"""
import json
import os
import signal
import socket
import struct
import sys
import threading


def handle(mode, conn, held):
    try:
        if mode == "close":
            conn.close()
            return
        if mode == "busy":
            body = (b'{"version":1,"id":null,"ok":false,"error":{"code":"busy","message":'
                    b'"fake limit 7 reached; try again later"}}')
            conn.sendall(struct.pack(">I", len(body)) + body)
            conn.close()
            return
        if mode == "stall":
            held.append(conn)
            return
        conn.settimeout(30)
        hdr = conn.recv(4)
        req = b""
        if len(hdr) == 4:
            (n,) = struct.unpack(">I", hdr)
            while n > 0:
                chunk = conn.recv(min(n, 65536))
                if not chunk:
                    break
                req += chunk
                n -= len(chunk)
        if mode == "shortnames":
            try:
                rid = json.loads(req).get("id")
            except ValueError:
                rid = None
            text = "NodeName=a\n" * 20000
            body = json.dumps({"version": 1, "id": rid, "ok": True, "topology_conf": text}).encode()
            conn.sendall(struct.pack(">I", len(body)) + body)
            conn.close()
            return
        if mode == "half":
            body = b'{"version":1,"id":1,"ok":true,"hosts":[{"name":"n1","pus":4}]}'
            conn.sendall(struct.pack(">I", len(body)) + body[: len(body) // 2])
            held.append(conn)
        elif mode == "huge":
            conn.sendall(struct.pack(">I", 1 << 30) + b'{"version":1')
            held.append(conn)
        elif mode == "garbage":
            conn.sendall(b"\xff\x00garbage, not a frame\n" * 8)
            conn.close()
    except OSError:
        pass


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode not in ("stall", "half", "garbage", "huge", "close", "busy", "shortnames"):
        sys.exit("unknown mode " + mode)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    if os.path.exists(path):
        os.unlink(path)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    os.chmod(path, 0o666)
    srv.listen(1024)
    if len(sys.argv) > 3:
        open(sys.argv[3], "w").write("ready\n")
    held, clients = [], 0
    try:
        while True:
            conn, _ = srv.accept()
            clients += 1
            sys.stderr.write("fake_rankmapd(%s): client %d\n" % (mode, clients))
            sys.stderr.flush()
            threading.Thread(target=handle, args=(mode, conn, held), daemon=True).start()
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
