"""A small MCP stdio server (standard library only) without an `echo` tool,
for the `generic` scenario's choice of a tool it may call. It answers
initialize, tools/list and tools/call; which tools it lists is chosen with
`--tools`:

  --tools read-only   (default) a destructive tool, a read-only tool that is
                      open-world, a read-only tool with a required argument,
                      and `status`: read-only, not open-world, no argument.
                      `status` is the only one the harness may call on its own;
  --tools unsafe      only tools the harness must not call on its own: a
                      destructive one, one without annotations (`write_note`,
                      argument `note`), and a read-only but open-world one.

Misbehaviour on purpose:

  --break shape       `status` answers a result without `content` (a schema
                      violation the oracle must catch);
  --break tool-error  `status` answers `isError: true` (a tool error, which MCP
                      allows: not a protocol failure).

A tool it did not list is refused (-32602).
"""

import json
import sys

DESTRUCTIVE = {
    "name": "delete_all",
    "description": "Delete every record.",
    "inputSchema": {"type": "object", "properties": {}},
    "annotations": {"destructiveHint": True, "readOnlyHint": False},
}
OPEN_WORLD = {
    "name": "search_web",
    "description": "Search the web.",
    "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
    "annotations": {"readOnlyHint": True, "openWorldHint": True},
}
NEEDS_ARG = {
    "name": "read_record",
    "description": "Read one record.",
    "inputSchema": {
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
    },
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
}
STATUS = {
    "name": "status",
    "description": "Report the server's status.",
    "inputSchema": {"type": "object", "properties": {}},
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
}
UNANNOTATED = {
    "name": "write_note",
    "description": "Store a note.",
    "inputSchema": {
        "type": "object",
        "properties": {"note": {"type": "string"}},
        "required": ["note"],
    },
}


def main():
    args = sys.argv[1:]
    kind = "read-only"
    broken = None
    while args:
        flag = args.pop(0)
        if flag == "--tools":
            kind = args.pop(0)
        elif flag == "--break":
            broken = args.pop(0)
    if kind == "read-only":
        tools = [DESTRUCTIVE, OPEN_WORLD, NEEDS_ARG, STATUS]
    else:
        tools = [DESTRUCTIVE, UNANNOTATED, OPEN_WORLD]
    listed = {t["name"] for t in tools}
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
            reply(rid, result={
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "tools-server", "version": "0.0.1"},
            })
        elif method == "tools/list":
            reply(rid, result={"tools": tools})
        elif method == "tools/call":
            params = msg.get("params") or {}
            name = params.get("name")
            arguments = params.get("arguments") or {}
            if name not in listed:
                reply(rid, error=(-32602, "unknown tool"))
                continue
            if name == "status":
                if broken == "shape":
                    reply(rid, result={"status": "ok"})
                elif broken == "tool-error":
                    reply(rid, result={
                        "content": [{"type": "text", "text": "status unavailable"}],
                        "isError": True,
                    })
                else:
                    reply(rid, result={"content": [{"type": "text", "text": "ok"}]})
            elif name == "write_note":
                note = arguments.get("note")
                if not isinstance(note, str):
                    reply(rid, result={
                        "content": [{"type": "text", "text": "note must be a string"}],
                        "isError": True,
                    })
                else:
                    reply(rid, result={"content": [{"type": "text", "text": "stored: " + note}]})
            else:
                reply(rid, result={"content": [{"type": "text", "text": "done"}]})
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
