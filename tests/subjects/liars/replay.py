"""Liar: never reads stdin. Prints a fixed, plausible transcript line by line:
answers to ids 1 (initialize) and 2 (tools/list), then, only if more input is
pending (it asks the kernel how many bytes are waiting, FIONREAD, without
reading them), an answer to id 3 whose echo text carries the probe values a
predictable harness would send. Then it sleeps a moment, as if waiting for a
stdin EOF it never reads, and exits."""

import array
import fcntl
import json
import sys
import termios
import time

PROBES = " ".join("mcpres-probe-%d" % n for n in range(1, 9))
TOOLS = [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]
TRANSCRIPT = [
    {"jsonrpc": "2.0", "id": 1, "result": {
        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "example-servers/everything", "version": "2.0.0"}}},
    {"jsonrpc": "2.0", "id": 2, "result": {"tools": TOOLS}},
    {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": PROBES}]}},
]


def more_requests():
    """Whether stdin grows past what initialize, the notification and
    tools/list take (about 280 bytes) within 3 s. Counts bytes, never reads."""
    n = array.array("i", [0])
    for _ in range(30):
        fcntl.ioctl(sys.stdin.fileno(), termios.FIONREAD, n)
        if n[0] > 300:
            return True
        time.sleep(0.1)
    return False


for n, frame in enumerate(TRANSCRIPT):
    if n == 2 and not more_requests():
        break
    time.sleep(0.2)
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()
time.sleep(1.0)
