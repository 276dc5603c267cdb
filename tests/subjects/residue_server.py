"""A small MCP stdio server (standard library only) for the harness's cleanup
and identity tests. It answers initialize, tools/list (one tool, `echo`, with a
string argument `text`) and tools/call echo, and can misbehave on purpose:

  --escape MARKER   on initialize, start a child in a new session (setsid) that
                    sleeps for 1000 s with MARKER on its command line: a
                    descendant outside the process group, left running;
  --daemonize MARKER  on initialize, start a child that forks a grandchild
                    into a new session (sleeping 1000 s with MARKER on its
                    command line) and exits at once, as a daemon does: the
                    grandchild is an orphan that no parent of the subject's
                    ever waits for;
  --temp-file       on initialize, write a file with tempfile.mkstemp (in
                    $TMPDIR) and close it, without removing it;
  --tmp-file NAME   on initialize, write /tmp/NAME (not $TMPDIR) and leave it;
  --home-file NAME  on initialize, write $HOME/NAME and leave it;
  --cwd-file NAME   on initialize, write NAME in the working directory and
                    leave it;
  --reach-out       on initialize, try to connect to 192.0.2.1:443 and send
                    a UDP datagram to [2001:db8::53]:53 (addresses reserved
                    for documentation), and go on whatever happens (run it only where the network is a namespace of
                    its own: the sandbox).

With neither flag it is honest: it leaves nothing behind.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile


# The intermediate child: fork, and in the grandchild leave the session and
# become a sleeper with the marker on its command line; the child exits.
DAEMON = """
import os, sys
if os.fork() == 0:
    os.setsid()
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(1000)", sys.argv[1]])
"""


def main():
    args = sys.argv[1:]
    marker = None
    daemon_marker = None
    temp_file = False
    tmp_name = None
    home_name = None
    cwd_name = None
    reach_out = False
    while args:
        flag = args.pop(0)
        if flag == "--escape":
            marker = args.pop(0)
        elif flag == "--daemonize":
            daemon_marker = args.pop(0)
        elif flag == "--temp-file":
            temp_file = True
        elif flag == "--tmp-file":
            tmp_name = args.pop(0)
        elif flag == "--home-file":
            home_name = args.pop(0)
        elif flag == "--cwd-file":
            cwd_name = args.pop(0)
        elif flag == "--reach-out":
            reach_out = True
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
            if daemon_marker is not None:
                subprocess.run(
                    [sys.executable, "-c", DAEMON, daemon_marker],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            if temp_file:
                fd, _ = tempfile.mkstemp(prefix="residue-", suffix=".txt")
                os.write(fd, b"left behind by residue_server.py\n")
                os.close(fd)
            if tmp_name is not None:
                with open(os.path.join("/tmp", tmp_name), "wb") as f:
                    f.write(b"left in /tmp by residue_server.py\n")
            if home_name is not None:
                with open(os.path.join(os.environ.get("HOME", "/"), home_name), "wb") as f:
                    f.write(b"left at home by residue_server.py\n")
            if cwd_name is not None:
                with open(cwd_name, "wb") as f:
                    f.write(b"left in the working directory by residue_server.py\n")
            if reach_out:
                try:
                    socket.create_connection(("192.0.2.1", 443), timeout=1).close()
                except OSError:
                    pass
                try:
                    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as u:
                        u.sendto(b"x", ("2001:db8::53", 53))
                except OSError:
                    pass
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
