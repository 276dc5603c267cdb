"""The cache test subject: a small stdio MCP server (Python 3 standard library only)
for `mcpres profile run cache-behavior` (mcp-res/cache-behavior/v1, 2026-07-28).

Healthy by default: stateless 2026-07-28 (every request carries
_meta["io.modelcontextprotocol/protocolVersion"]; another version gets -32022),
`server/discover`, one tool, no prompts, two fixed resources, and every cacheable
result carries `ttlMs`, `cacheScope` and a serverInfo stamp in `_meta`. A read of a
resource it does not have gets -32002.

--break NAME switches on one defect (repeatable), each breaking one check:

  no-ttl         tools/list carries no ttlMs                      (ttl-ms)
  bad-scope      resources/list says cacheScope "everyone"         (cache-scope)
  mixed-key      every read answers with the first resource        (cache-key-identity)
  any-revision   any protocol version is served                    (protocol-revision-keying)
  stale-stamp    tools/list is stamped version 0.0.9               (subject-version-keying)
  drift          the second tools/list has one more tool           (stale-result)
  unreadable     the second resource is not found                  (list-resource-consistency)
  absent-cached  a missing resource gets an empty result, fresh    (negative-caching)
  poison         a read with a fragment stores its answer under the
                 bare URI, served to later reads of it             (cache-poisoning-boundary)
  personal       tools/list names the caller, scoped public        (personalized-data-not-public)

Stdin EOF exits 0.
"""

import argparse
import json
import sys

REV = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CI = "io.modelcontextprotocol/clientInfo"
STAMP = "io.modelcontextprotocol/serverInfo"
INFO = {"name": "mcpres-cache-subject", "version": "1.0.0"}
TTL = 30000
RESOURCES = {
    "memo://one": "the first memo",
    "memo://two": "the second memo",
}
TOOL = {
    "name": "echo",
    "description": "Return the text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}

p = argparse.ArgumentParser()
p.add_argument("--break", dest="breaks", action="append", default=[])
BREAKS = set(p.parse_args().breaks)

tool_lists = 0
poisoned = {}


def hinted(result, ttl=TTL, scope="public", version=None):
    result = dict(result)
    result["resultType"] = "complete"
    result["ttlMs"] = ttl
    result["cacheScope"] = scope
    stamp = dict(INFO)
    if version:
        stamp["version"] = version
    result["_meta"] = {STAMP: stamp}
    return result


def read(uri):
    if "poison" in BREAKS:
        if "#" in uri:
            base = uri.split("#", 1)[0]
            poisoned[base] = "poisoned by the fragment"
            return hinted({"contents": [{"uri": base, "mimeType": "text/plain", "text": poisoned[base]}]})
        if uri in poisoned:
            return hinted({"contents": [{"uri": uri, "mimeType": "text/plain", "text": poisoned[uri]}]})
    if "mixed-key" in BREAKS and uri in RESOURCES:
        uri = "memo://one"
    if "unreadable" in BREAKS and uri == "memo://two":
        return None
    if uri not in RESOURCES:
        if "absent-cached" in BREAKS:
            return hinted({"contents": []})
        return None
    return hinted({"contents": [{"uri": uri, "mimeType": "text/plain", "text": RESOURCES[uri]}]})


def handle(method, params):
    """The result of a request, or (code, message) for an error."""
    global tool_lists
    meta = params.get("_meta") or {}
    if meta.get(PV) != REV and "any-revision" not in BREAKS:
        return (-32022, "Unsupported protocol version", {"supported": [REV], "requested": meta.get(PV)})
    if method == "server/discover":
        result = hinted(
            {
                "supportedVersions": [REV],
                "capabilities": {"tools": {"listChanged": False}, "resources": {"listChanged": False}},
                "serverInfo": INFO,
            },
            ttl=0,
            scope="private",
        )
        return result
    if method == "tools/list":
        tool_lists += 1
        tools = [dict(TOOL)]
        if "drift" in BREAKS and tool_lists >= 2:
            tools.append({"name": "added_later", "inputSchema": {"type": "object"}})
        if "personal" in BREAKS:
            caller = (meta.get(CI) or {}).get("name", "")
            tools[0]["description"] = "Return the text (for %s)." % caller
        result = hinted({"tools": tools}, version="0.0.9" if "stale-stamp" in BREAKS else None)
        if "no-ttl" in BREAKS:
            del result["ttlMs"]
        return result
    if method == "resources/list":
        listed = [{"uri": u, "name": u.split("//")[1]} for u in RESOURCES]
        return hinted({"resources": listed}, scope="everyone" if "bad-scope" in BREAKS else "public")
    if method == "resources/templates/list":
        return hinted({"resourceTemplates": []})
    if method == "resources/read":
        uri = params.get("uri", "")
        result = read(uri)
        if result is None:
            return (-32002, "Resource not found", {"uri": uri})
        return result
    if method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")
        return {"resultType": "complete", "content": [{"type": "text", "text": text}]}
    return (-32601, "Method not found", None)


def main():
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            out = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
            continue
        if not isinstance(msg, dict) or "method" not in msg or "id" not in msg:
            continue
        answer = handle(msg["method"], msg.get("params") or {})
        out = {"jsonrpc": "2.0", "id": msg["id"]}
        if isinstance(answer, tuple):
            code, message, data = answer
            out["error"] = {"code": code, "message": message}
            if data is not None:
                out["error"]["data"] = data
        else:
            out["result"] = answer
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


main()
