"""Liar: answers every request with something that is not JSON-RPC. The
answer to a parseable request is a JSON object with the request's id and a
plausible `result` but no `"jsonrpc": "2.0"` member (plus a stray "hello"),
so it reads like a response without being one; anything else gets a plain
text line."""

import json
import sys

INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "mcpres-liars-not-jsonrpc", "version": "0.1.0"},
}

for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        msg = None
    if not isinstance(msg, dict) or "id" not in msg:
        if msg is None:
            sys.stdout.write("hello world\n")
            sys.stdout.flush()
        continue
    if msg.get("method") == "initialize":
        sys.stdout.write(json.dumps({"hello": "world", "id": msg["id"], "result": INIT}) + "\n")
    else:
        sys.stdout.write("hello world, request %s\n" % msg["id"])
    sys.stdout.flush()
