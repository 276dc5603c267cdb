"""Liar: answers initialize correctly, then exits with status 3 on the next
request (notifications are ignored, as an honest server would)."""

import json
import sys

import _honest

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg.get("method") != "initialize":
        sys.exit(3)
    _honest.send({"jsonrpc": "2.0", "id": msg["id"], "result": _honest.INIT})
