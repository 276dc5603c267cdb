"""A small MCP stdio server (standard library only) for the tool-contracts
scenario: two read-only tools whose declared inputSchema it enforces, and a
destructive one the harness must never call on its own.

  lookup  readOnlyHint: key (string, required), limit (integer >= 1);
          additionalProperties: false. An invalid input is refused as a
          tool error (`isError: true`), as MCP 2025-11-25 recommends.
  stats   readOnlyHint: verbose (boolean); additionalProperties: false. An
          invalid input is refused with -32602 (invalid params).
  verify_token  no annotations: api_token (string, required, at least 8
          characters), a member whose name looks secret; refused as -32602.
  wipe    destructiveHint: true. Writes "WIPE CALLED" to stderr when called.

Misbehaviour on purpose (`--break MODE`):

  die-on-missing     a call without a required argument kills the process
                     (a traceback on stderr, exit 1), as an unchecked
                     `arguments["key"]` would;
  accept-wrong-type  no type is checked: a wrong type is served as if valid;
  internal-error     a wrong type is answered -32603 (internal error), as an
                     exception caught by a generic handler would be;
  refuse-everything  every call, valid or not, is answered with a tool error;
  oversized          `lookup` answers a valid call with 5 MiB of text, over
                     the harness's 4 MiB input limit.
"""

import json
import sys

LOOKUP = {
    "name": "lookup",
    "description": "Look a key up.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "key": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1},
        },
        "required": ["key"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
}
STATS = {
    "name": "stats",
    "description": "Report counters.",
    "inputSchema": {
        "type": "object",
        "properties": {"verbose": {"type": "boolean"}},
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True},
}
VERIFY = {
    "name": "verify_token",
    "description": "Check an API token (not annotated: called only when named).",
    "inputSchema": {
        "type": "object",
        "properties": {"api_token": {"type": "string", "minLength": 8}},
        "required": ["api_token"],
        "additionalProperties": False,
    },
}
WIPE = {
    "name": "wipe",
    "description": "Delete every record.",
    "inputSchema": {"type": "object", "properties": {}},
    "annotations": {"destructiveHint": True, "readOnlyHint": False},
}
TOOLS = [LOOKUP, STATS, VERIFY, WIPE]

TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def problems(tool, arguments, broken):
    """What is wrong with `arguments` for `tool`: (kind, text) or None."""
    schema = tool["inputSchema"]
    props = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in arguments:
            if broken == "die-on-missing":
                raise KeyError(name)
            return ("missing", "missing required argument: " + name)
    for name, value in arguments.items():
        if name not in props:
            return ("unknown", "unknown argument: " + name)
        if broken == "accept-wrong-type":
            continue
        if not TYPES[props[name]["type"]](value):
            return ("type", "argument %s must be of type %s" % (name, props[name]["type"]))
    return None


def main():
    args = sys.argv[1:]
    broken = None
    while args:
        flag = args.pop(0)
        if flag == "--break":
            broken = args.pop(0)
    by_name = {t["name"]: t for t in TOOLS}
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
                "serverInfo": {"name": "contract-server", "version": "0.0.1"},
            })
        elif method == "tools/list":
            reply(rid, result={"tools": TOOLS})
        elif method == "tools/call":
            params = msg.get("params") or {}
            name = params.get("name")
            arguments = params.get("arguments") or {}
            tool = by_name.get(name)
            if tool is None:
                reply(rid, error=(-32602, "unknown tool: %s" % name))
                continue
            if name == "wipe":
                sys.stderr.write("WIPE CALLED\n")
                sys.stderr.flush()
                reply(rid, result={"content": [{"type": "text", "text": "wiped"}]})
                continue
            if broken == "refuse-everything":
                reply(rid, result={
                    "content": [{"type": "text", "text": "unavailable"}],
                    "isError": True,
                })
                continue
            found = problems(tool, arguments, broken)
            if found is not None:
                kind, text = found
                if broken == "internal-error" and kind == "type":
                    reply(rid, error=(-32603, "internal error"))
                elif name == "lookup":
                    reply(rid, result={
                        "content": [{"type": "text", "text": text}],
                        "isError": True,
                    })
                else:
                    reply(rid, error=(-32602, text))
                continue
            if name == "lookup" and broken == "oversized":
                text = "x" * (5 << 20)
            elif name == "lookup":
                text = "value of %s" % arguments["key"]
            elif name == "verify_token":
                text = "token accepted"
            else:
                text = "calls: 1"
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
