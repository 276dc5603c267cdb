"""A stdio MCP subject that opens like a server, then floods its stdout.

It answers `initialize` (2025-11-25) or `server/discover` (2026-07-28) with a
result, and on the next request starts writing to stdout without end, never
answering again:

  --mode bytes   one byte per write ("x", no line feed): a transcript that
                 would record every write grows without bound
  --mode lines   empty lines ("\\n" per write): a reader that keeps every line
                 grows without bound

It never exits by itself; the runner must end it.
"""

import argparse
import json
import os
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["bytes", "lines"], default="bytes")
    mode = parser.parse_args().mode
    unit = b"x" if mode == "bytes" else b"\n"
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue
        method = msg.get("method")
        if method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "open-then-flood", "version": "0.1.0"},
            }
        elif method == "server/discover":
            result = {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "resultType": "complete",
            }
        else:
            try:
                while True:
                    os.write(1, unit)
            except OSError:
                return
        out = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n"
        os.write(1, out.encode())


if __name__ == "__main__":
    main()
