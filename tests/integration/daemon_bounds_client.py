#!/usr/bin/env python3
"""tests/integration/daemon_bounds_client.py: raw clients of rankmapd for tests/integration/daemon_bounds.sh
(many connections at once, which rankmapctl cannot open). Speaks the frame format of daemon/PROTOCOL.md
itself, so that what it reports does not depend on the client library under test.

Usage:
  flood SOCK N SIZE    N connections each send one complete frame of SIZE payload bytes at once (a ping
                       padded with an unknown field: the daemon answers bad_request once it has parsed it).
                       Waits until every connection has an answer, or has sent its whole frame and nothing
                       has happened for 3 s. Prints one JSON line: sent (whole frames sent), answers
                       {code: count}, reasons (distinct busy messages), cut (sends cut off by the daemon
                       before the end), unanswered.
  hold SOCK N OUT      opens N connections and keeps them; after 1 s writes to OUT one JSON line: held
                       (connections with nothing received), answers, reasons. Then waits for SIGTERM.
  stall SOCK N LEN OUT N connections each announce a frame of LEN bytes and send LEN - 1 of them, then wait
                       for their answers (at most 30 s); writes to OUT one JSON line: answers, reasons,
                       seconds (time to each answer), closed (connections the daemon then closed).
  send SOCK SIZE       one connection sends one frame of SIZE payload bytes; prints the answer's code and
                       message ("none" and the error when there is none).
"""
import errno
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time


def frame(size, ident):
    head = '{"version":1,"type":"ping","id":%d,"pad":"' % ident
    pad = size - len(head) - 2
    if pad < 0:
        sys.exit("frame size %d too small" % size)
    body = (head + "x" * pad + '"}').encode()
    return struct.pack(">I", len(body)) + body


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.setblocking(False)
    return s


class Conn:
    def __init__(self, sock, data):
        self.sock, self.data, self.off = sock, data, 0
        self.inbuf = b""
        self.answer = None      # the decoded response
        self.closed = False     # end of file or error while reading
        self.cut = False        # the daemon stopped taking our frame
        self.t_answer = None

    def want_write(self):
        return self.data is not None and self.off < len(self.data) and not self.cut

    def write(self):
        try:
            self.off += self.sock.send(memoryview(self.data)[self.off:self.off + (1 << 20)])
        except BlockingIOError:
            pass
        except OSError as e:
            if e.errno in (errno.EPIPE, errno.ECONNRESET):
                self.cut = True  # the answer that says why may still be readable
            else:
                raise

    def read(self):
        try:
            chunk = self.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            self.closed = True
            return
        if not chunk:
            self.closed = True
            return
        self.inbuf += chunk
        if self.answer is None and len(self.inbuf) >= 4:
            (n,) = struct.unpack(">I", self.inbuf[:4])
            if len(self.inbuf) >= 4 + n:
                self.answer = json.loads(self.inbuf[4:4 + n])
                self.t_answer = time.monotonic()


def code_of(resp):
    if resp is None:
        return "none"
    if resp.get("ok"):
        return "ok"
    return resp.get("error", {}).get("code", "?")


def summary(conns):
    answers, reasons = {}, []
    for c in conns:
        code = code_of(c.answer)
        answers[code] = answers.get(code, 0) + 1
        if code == "busy":
            msg = c.answer["error"]["message"]
            if msg not in reasons:
                reasons.append(msg)
    return answers, reasons


def pump(conns, done, quiet_s, limit_s):
    """Polls conns until done(conns) or nothing happened for quiet_s, or limit_s passed."""
    sel = selectors.DefaultSelector()
    active = set()
    start = last = time.monotonic()
    while not done(conns) and time.monotonic() - last < quiet_s and time.monotonic() - start < limit_s:
        for c in conns:
            ev = 0
            if not c.closed:
                ev = selectors.EVENT_READ | (selectors.EVENT_WRITE if c.want_write() else 0)
            if ev and c in active:
                sel.modify(c.sock, ev, c)
            elif ev:
                sel.register(c.sock, ev, c)
                active.add(c)
            elif c in active:
                sel.unregister(c.sock)
                active.discard(c)
        if not active:
            break
        for key, ev in sel.select(timeout=0.2):
            c = key.data
            if ev & selectors.EVENT_WRITE:
                before = c.off
                c.write()
                if c.off != before:
                    last = time.monotonic()
            if ev & selectors.EVENT_READ:
                had = (c.answer, c.closed)
                c.read()
                if (c.answer, c.closed) != had:
                    last = time.monotonic()
    sel.close()


def flood(path, n, size):
    data = frame(size, 1)
    conns = [Conn(connect(path), data) for _ in range(n)]
    pump(conns, lambda cs: all(c.answer is not None or c.closed for c in cs), 3.0, 600.0)
    answers, reasons = summary(conns)
    print(json.dumps({"sent": sum(1 for c in conns if c.off == len(data)), "answers": answers,
                      "reasons": reasons, "cut": sum(1 for c in conns if c.cut),
                      "unanswered": sum(1 for c in conns if c.answer is None)}))
    sys.stdout.flush()
    for c in conns:
        c.sock.close()


def hold(path, n, out):
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])
    conns = [Conn(connect(path), None) for _ in range(n)]
    pump(conns, lambda cs: False, 1.0, 1.0)
    answers, reasons = summary(conns)
    held = sum(1 for c in conns if c.answer is None and not c.closed)
    with open(out + ".tmp", "w") as f:
        f.write(json.dumps({"held": held, "answers": answers, "reasons": reasons}) + "\n")
    os.rename(out + ".tmp", out)
    signal.sigwait([signal.SIGTERM])


def stall(path, n, length, out):
    conns = []
    t0 = time.monotonic()
    for i in range(n):
        c = Conn(connect(path), frame(length, i)[:-1])  # one byte short
        conns.append(c)
    pump(conns, lambda cs: all(c.answer is not None and c.closed for c in cs), 30.0, 30.0)
    answers, reasons = summary(conns)
    with open(out + ".tmp", "w") as f:
        f.write(json.dumps({"answers": answers, "reasons": reasons,
                            "seconds": [round(c.t_answer - t0, 2) if c.t_answer else None for c in conns],
                            "closed": sum(1 for c in conns if c.closed)}) + "\n")
    os.rename(out + ".tmp", out)


def send(path, size):
    c = Conn(connect(path), frame(size, 1))
    pump([c], lambda cs: cs[0].answer is not None or cs[0].closed, 10.0, 30.0)
    if c.answer is None:
        print("none", "cut" if c.cut else "closed" if c.closed else "no answer")
    else:
        print(code_of(c.answer), c.answer.get("error", {}).get("message", ""))


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "flood":
        flood(path, int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "hold":
        hold(path, int(sys.argv[3]), sys.argv[4])
    elif cmd == "stall":
        stall(path, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif cmd == "send":
        send(path, int(sys.argv[3]))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
