#!/usr/bin/env python3
"""tests/harness/webhook-receiver.py: a Standard Webhooks receiver written
with nothing but Python's standard library, verifying each signature the
way the specification describes it (no reference library):

    key       = base64-decode(secret without "whsec_")
    expected  = base64(HMAC-SHA256(key, f"{webhook-id}.{webhook-timestamp}.{body}"))
    valid     = any "v1,<sig>" in webhook-signature (space separated) equal to
                expected (constant-time compare), and webhook-timestamp
                within 5 minutes of now

Usage: webhook-receiver.py --secret whsec_... --log FILE [--port N]
Binds 127.0.0.1; prints "listening PORT"; exits when stdin closes.  Every
POST answers 200 and appends a JSON line {"id", "timestamp", "valid",
"job_id", "attempt", "at_ms"} to the log.
"""
import argparse
import base64
import hashlib
import hmac
import http.server
import json
import sys
import threading
import time

TOLERANCE_SECONDS = 5 * 60


def verify(secret, headers, body):
    msg_id = headers.get("webhook-id")
    stamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature", "")
    if not msg_id or not stamp or not stamp.isdigit():
        return False
    if abs(time.time() - int(stamp)) > TOLERANCE_SECONDS:
        return False
    key = base64.b64decode(secret[len("whsec_"):], validate=True)
    signed = msg_id.encode() + b"." + stamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for item in signatures.split(" "):
        version, _, sig = item.partition(",")
        if version == "v1" and hmac.compare_digest(sig, expected):
            return True
    return False


def make_handler(secret, log_path, lock):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the plugin expects

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            entry = {"id": self.headers.get("webhook-id"),
                     "timestamp": self.headers.get("webhook-timestamp"),
                     "valid": verify(secret, self.headers, body),
                     "at_ms": int(time.time() * 1000)}
            try:
                data = json.loads(body)["data"]
                entry["job_id"] = data["job_id"]
                entry["attempt"] = data["attempt"]
            except (ValueError, KeyError, TypeError):
                entry["job_id"] = None
            with lock, open(log_path, "a") as f:
                f.write(json.dumps(entry) + "\n")
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--secret", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", args.port), make_handler(args.secret, args.log, threading.Lock()))
    print(f"listening {server.server_address[1]}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # returns when the test's end of the pipe closes


if __name__ == "__main__":
    main()
