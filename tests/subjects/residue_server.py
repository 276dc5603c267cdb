"""A small MCP stdio server (standard library only) for the harness's cleanup
and identity tests. It answers initialize, tools/list (one tool, `echo`, with a
string argument `text`) and tools/call echo, and can misbehave on purpose:

  --escape MARKER   on initialize, start a child in a new session (setsid) that
                    sleeps for 1000 s with MARKER on its command line: a
                    descendant outside the process group, left running;
  --temp-file       on initialize, write a file with tempfile.mkstemp (in
                    $TMPDIR) and close it, without removing it.

With neither flag it is honest: it leaves nothing behind.
"""

import json
import os
import subprocess
import sys
import tempfile


def main():
    args = sys.argv[1:]
    marker = None
    temp_file = False
    while args:
        flag = args.pop(0)
        if flag == "--escape":
            marker = args.pop(0)
        elif flag == "--temp-file":
            temp_file = True
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            reply(None, error=(-32700, "parse error"))
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue
        method = msg.get("method")
        rid = msg["id"]
        if method == "initialize":
            if marker is not None:
                subprocess.Popen(
                    [sys.executable, "-c", "import time; time.sleep(1000)", marker],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            if temp_file:
                fd, _ = tempfile.mkstemp(prefix="residue-", suffix=".txt")
                os.write(fd, b"left behind by residue_server.py\n")
                os.close(fd)
            reply(rid, result={
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "residue-server", "version": "0.0.1"},
            })
        elif method == "tools/list":
            reply(rid, result={"tools": [{
                "name": "echo",
                "description": "Echo the text back.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
            }]})
        elif method == "tools/call":
            params = msg.get("params") or {}
            text = (params.get("arguments") or {}).get("text")
            if params.get("name") != "echo" or not isinstance(text, str):
                reply(rid, error=(-32602, "unknown tool or bad arguments"))
            else:
                reply(rid, result={"content": [{"type": "text", "text": text}]})
        else:
            reply(rid, error=(-32601, "method not found"))


def reply(rid, result=None, error=None):
    msg = {"jsonrpc": "2.0", "id": rid}
    if error is not None:
        msg["error"] = {"code": error[0], "message": error[1]}
    else:
        msg["result"] = result
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
