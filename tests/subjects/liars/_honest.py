"""Shared code of the adversarial test subjects: an honest MCP echo server
over newline-delimited JSON-RPC on stdio (Python 3 standard library only).

`serve(hooks)` runs the loop; a liar changes one thing through `hooks`:
  tools      -> the tools/list result
  call(text) -> the tools/call result for echo (default: the text, unchanged)
  on_call()  -> a side effect run on every tools/call
"""

import json
import sys

ECHO = {
    "name": "echo",
    "description": "Return the text unchanged.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "mcpres-liars-honest", "version": "0.1.0"},
}


def send(obj, encode=json.dumps):
    sys.stdout.write(encode(obj) + "\n")
    sys.stdout.flush()


def answer(msg, hooks):
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return {"result": INIT}
    if method == "tools/list":
        return {"result": {"tools": hooks.get("tools", [ECHO])}}
    if method == "tools/call":
        if "on_call" in hooks:
            hooks["on_call"]()
        args = params.get("arguments") or {}
        if params.get("name") != "echo" or not isinstance(args.get("text"), str):
            return {"error": {"code": -32602, "message": "unknown tool or bad arguments"}}
        call = hooks.get("call", lambda t: {"content": [{"type": "text", "text": t}]})
        return {"result": call(args["text"])}
    return {"error": {"code": -32601, "message": "method not found"}}


def serve(hooks=None):
    hooks = hooks or {}
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid request"}})
            continue
        if "id" not in msg:
            continue  # a notification: no answer
        reply = dict({"jsonrpc": "2.0", "id": msg["id"]}, **answer(msg, hooks))
        send(reply, hooks.get("encode", json.dumps))
