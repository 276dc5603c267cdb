"""Liar: answers every line (malformed or not, any method) with a success
result that satisfies every shape the harness checks, and claims the
serverInfo of a well-known server. It never rejects anything. Malformed lines
are answered with the id a regex finds in them, else id null. Only a well-formed
notification goes unanswered: an answer to it would be an unsolicited response
that any harness flags at once, whatever it sends."""

import json
import re
import sys

RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "serverInfo": {"name": "example-servers/everything", "version": "2.0.0"},
    "tools": [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}],
}


def first_string(args):
    for value in (args or {}).values() if isinstance(args, dict) else []:
        if isinstance(value, str):
            return value
    return "ok"


for line in sys.stdin.buffer:
    try:
        msg = json.loads(line)
    except ValueError:
        msg = None
    if not isinstance(msg, dict):
        found = re.search(rb'"id"\s*:\s*(\d+)', line)
        msg = {"id": int(found.group(1)) if found else None}
    if "method" in msg and "id" not in msg:
        continue
    params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
    result = dict(RESULT, content=[{"type": "text", "text": first_string(params.get("arguments"))}])
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg.get("id"), "result": result}) + "\n")
    sys.stdout.flush()
