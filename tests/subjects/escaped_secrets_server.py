"""An MCP stdio server (standard library only) that hides secrets behind JSON
escapes, used by tests/harness_privacy.rs against the harness's privacy scan.

It answers initialize, tools/list (one `echo` tool taking a string `text`)
and tools/call echo. The echo answer holds the text, then an AWS key shape
written as \\u0041KIA..., a bearer token written as Bearer\\u0020..., and the
value of DB_PASS with its first letter escaped. At start it prints the values
of SHORT_TOKEN and DB_PASS to stderr.

    python3 escaped_secrets_server.py
"""

import json
import os
import sys

# Written by hand so that the escapes reach the wire as escapes.
AWS = "\\u0041KIAQ7RZ2M4K9PX3LW8T"
BEARER = "Bearer\\u0020\\u0074K9mQ2xZ7vB4nR8wL3pJ"


def escaped_first(value):
    if not value:
        return ""
    return "\\u%04x" % ord(value[0]) + json.dumps(value[1:])[1:-1]


def send(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def reply(msg_id, result):
    send(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}))


def error(msg_id, code, message):
    send(json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}))


def echo(msg_id, text):
    secrets = "key %s auth %s db %s" % (AWS, BEARER, escaped_first(os.environ.get("DB_PASS", "")))
    send(
        '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s},{"type":"text","text":"%s"}]}}'
        % (json.dumps(msg_id), json.dumps(text), secrets)
    )


TOOLS = [
    {
        "name": "echo",
        "description": "Return the text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    }
]


def handle(msg):
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
        error(msg.get("id") if isinstance(msg, dict) else None, -32600, "invalid request")
        return
    if "id" not in msg:
        return  # a notification
    msg_id, method, params = msg["id"], msg["method"], msg.get("params") or {}
    if method == "initialize":
        reply(
            msg_id,
            {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "escaped-secrets", "version": "0.1.0"},
            },
        )
    elif method == "tools/list":
        reply(msg_id, {"tools": TOOLS})
    elif method == "tools/call":
        args = params.get("arguments") or {}
        if params.get("name") == "echo" and isinstance(args.get("text"), str):
            echo(msg_id, args["text"])
        else:
            error(msg_id, -32602, "unknown tool or bad arguments")
    else:
        error(msg_id, -32601, "method not found")


def main():
    sys.stderr.write(
        "SHORT_TOKEN=%s DB_PASS=%s\n" % (os.environ.get("SHORT_TOKEN", ""), os.environ.get("DB_PASS", ""))
    )
    sys.stderr.flush()
    for raw in sys.stdin.buffer:
        try:
            msg = json.loads(raw.decode("utf-8"))
        except ValueError:
            error(None, -32700, "parse error")
            continue
        handle(msg)


if __name__ == "__main__":
    main()
