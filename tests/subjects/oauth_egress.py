"""A subject that tries to reach an address off loopback (192.0.2.1, TEST-NET-1)
when it starts, for tests/oauth_run_isolation.rs: run ONLY inside the network
namespace `mcpres oauth run --isolate-network` makes, where every address
beyond loopback is routed to loopback: the attempt is refused there (nothing
listens on port 80) and its opening packet is recorded by the run.

Usage: oauth_egress.py PORT

It refuses to try unless its network namespace has the loopback interface
alone (read from /proc/self/net/dev), so that it never sends a packet off the
machine even when started by mistake outside a namespace. It prints on stderr
what happened to the attempt (`egress 192.0.2.1:80 failed: ECONNREFUSED ...`),
then answers every HTTP request on 127.0.0.1:PORT with a 401 JSON-RPC error
until SIGTERM. Python 3 standard library only.
"""

import errno
import http.server
import json
import signal
import socket
import sys


def interfaces():
    with open("/proc/self/net/dev") as f:
        lines = f.read().splitlines()[2:]
    return [line.split(":", 1)[0].strip() for line in lines if ":" in line]


def try_egress():
    names = interfaces()
    if names != ["lo"]:
        print(f"egress not tried: interfaces {names} (not isolated)", file=sys.stderr, flush=True)
        return
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(("192.0.2.1", 80))
        print("egress 192.0.2.1:80 connected", file=sys.stderr, flush=True)
    except OSError as e:
        name = errno.errorcode.get(e.errno, "timeout") if e.errno else "timeout"
        print(f"egress 192.0.2.1:80 failed: {name} ({e.strerror or e})", file=sys.stderr, flush=True)
    finally:
        s.close()


class Refuse(http.server.BaseHTTPRequestHandler):
    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = json.dumps(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "unauthorized"}}
        ).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = answer
    do_POST = answer

    def log_message(self, *args):
        pass


def main():
    port = int(sys.argv[1])
    try_egress()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Refuse)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server.serve_forever()


if __name__ == "__main__":
    main()
