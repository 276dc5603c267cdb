#!/usr/bin/env bash
# The peer fuzzers against the reference server (issue 40, item 18): the PyPI
# tools `mcp-fuzzer` (0.7.0) and `mcp-fuzz` (package `mcp-runtime-check`),
# each driving `mcpres serve` over stdio, with their findings triaged.
#
#   bench/peer-fuzzers.sh            (MCPRES_BIN=path to use another binary,
#                                     PEERS_VENV=dir to reuse a virtualenv)
#
# The tools report findings, not verdicts: `mcp-fuzzer` flags every answer
# that is not an error ("accepted_malformed") and every echoed marker
# ("injection_reflection"), whether or not the input was wrong. Each finding
# is therefore checked here against what the server declared, and dismissed
# only by a rule printed beside it:
#
#   - a tool input that is valid under the tool's own `inputSchema` (the
#     server must serve it);
#   - an `echo` tool returning its input (what it is declared to do);
#   - a notification (it never has a response: nothing was "accepted");
#   - a request whose method and params the server serves by definition
#     (a list, ping, a read or subscription of a resource it lists, a prompt
#     it lists with its required arguments, a level of the logging set).
#
# Anything else is a real finding, and so is any crash, hang or invalid
# answer `mcp-fuzz` reports. The script exits 1 when one is left, 0 when
# none is; it sends nothing beyond this machine (both tools drive a local
# process over pipes) but installs the tools from PyPI when no venv is given.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${MCPRES_BIN:-}" ]; then cargo build --quiet; fi
BIN="$(realpath "${MCPRES_BIN:-${CARGO_TARGET_DIR:-target}/debug/mcpres}")"
PY="${MCPRES_TEST_PYTHON:-python3}"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/mcpres-peers.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
VENV="${PEERS_VENV:-$TMP/venv}"
if [ ! -x "$VENV/bin/mcp-fuzzer" ] || [ ! -x "$VENV/bin/mcp-fuzz" ]; then
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "mcp-fuzzer==0.7.0" mcp-runtime-check
fi
echo "binary: $BIN"
echo "mcp-fuzzer $("$VENV/bin/pip" show mcp-fuzzer | sed -n 's/^Version: //p'), mcp-runtime-check $("$VENV/bin/pip" show mcp-runtime-check | sed -n 's/^Version: //p')"

"$VENV/bin/mcp-fuzzer" --mode all --protocol stdio --endpoint "$BIN serve" --runs 5 \
  --runs-per-type 3 --no-network --seed 7 --output-dir "$TMP/fuzzer" \
  --log-level ERROR >"$TMP/fuzzer.log" 2>&1 || true
"$VENV/bin/mcp-fuzz" --json --include-destructive -- "$BIN" serve >"$TMP/fuzz.json" 2>"$TMP/fuzz.err" || true

# What the server declares: its tools, resources, templates and prompts.
{
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"peer-fuzzers","version":"1"}}}'
  printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  for m in tools/list resources/list resources/templates/list prompts/list; do
    printf '{"jsonrpc":"2.0","id":"%s","method":"%s","params":{}}\n' "$m" "$m"
  done
} | timeout 10 "$BIN" serve 2>/dev/null >"$TMP/declared.jsonl" || true

"$VENV/bin/python" - "$TMP" <<'PY'
import json, sys, pathlib
import jsonschema

tmp = pathlib.Path(sys.argv[1])
declared = {}
for line in (tmp / "declared.jsonl").read_text().splitlines():
    m = json.loads(line)
    if isinstance(m.get("id"), str):
        declared[m["id"]] = m.get("result", {})
tools = {t["name"]: t for t in declared["tools/list"]["tools"]}
uris = {r["uri"] for r in declared["resources/list"]["resources"]}
prompts = {p["name"]: p for p in declared["prompts/list"]["prompts"]}
LEVELS = {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}
ALWAYS = {"tools/list", "resources/list", "resources/templates/list", "prompts/list", "ping"}

def known_uri(uri):
    return uri in uris or (
        uri.startswith("test://template/") and uri.endswith("/data")
        and "/" not in uri[len("test://template/"):-len("/data")])

def tool_input_valid(name, args):
    tool = tools.get(name)
    if tool is None:
        return False
    try:
        jsonschema.Draft202012Validator(tool["inputSchema"]).validate(args)
        return True
    except jsonschema.ValidationError:
        return False

def dismissed(f):
    ev = f.get("evidence", {})
    if f["kind"] == "tool":
        if f["category"] == "injection_reflection" and f["target"] == "echo":
            return "echo returns its input by contract"
        if "input" in ev and tool_input_valid(f["target"], ev["input"]):
            return "the input is valid under the tool's inputSchema"
        return None
    msg = ev.get("input") or {}
    method, params = msg.get("method", ""), msg.get("params") or {}
    if "id" not in msg:
        return "a notification has no response"
    if method in ALWAYS:
        return f"{method} is served by definition"
    if method == "tools/call" and tool_input_valid(params.get("name"), params.get("arguments", {})):
        return "a call of a listed tool with valid arguments"
    if method in ("resources/read", "resources/subscribe", "resources/unsubscribe") and known_uri(params.get("uri", "")):
        return f"{method} of a resource the server has"
    if method == "prompts/get" and params.get("name") in prompts and all(
            a["name"] in (params.get("arguments") or {})
            for a in prompts[params["name"]].get("arguments", []) if a.get("required")):
        return "a listed prompt with its required arguments"
    if method == "logging/setLevel" and params.get("level") in LEVELS:
        return "a level of the logging set"
    return None

findings = json.loads((tmp / "fuzzer" / "findings.json").read_text())["findings"]
real = []
by_rule = {}
for f in findings:
    rule = dismissed(f)
    if rule is None:
        real.append(f)
    else:
        by_rule[rule] = by_rule.get(rule, 0) + 1
print(f"mcp-fuzzer: {len(findings)} finding(s); dismissed by rule:")
for rule, n in sorted(by_rule.items()):
    print(f"  {n:4d}  {rule}")
for f in real:
    print("  REAL:", json.dumps({k: f.get(k) for k in ("category", "kind", "target", "evidence")})[:400])

fuzz = json.loads((tmp / "fuzz.json").read_text())

def valid_call_dismissed(t):
    issue = t["valid_call_issue"]
    detail = (issue or {}).get("detail") or ""
    if issue is None:
        return None
    if issue.get("outcome") != "valid_call_errored":
        return None
    description = tools.get(t["name"], {}).get("description", "")
    if "returns a tool error" in description or "returns an error" in description:
        return "the tool is declared to return an error (its description says so)"
    if "did not declare the" in detail and "capability" in detail:
        return "it needs a client capability the fuzzer did not declare (only negotiated capabilities are used)"
    return None

issues = []
fuzz_rules = {}
for t in fuzz["tools"]:
    if t["crashes"] or t["timeouts"]:
        issues.append(t)
    elif t["valid_call_issue"]:
        rule = valid_call_dismissed(t)
        if rule is None:
            issues.append(t)
        else:
            fuzz_rules[rule] = fuzz_rules.get(rule, 0) + 1
print(f"mcp-fuzz: {fuzz['tested_count']} tool(s), {fuzz['total_bad_input_cases']} bad-input case(s), "
      f"{fuzz['crash_count']} crash(es), {fuzz['timeout_count']} hang(s), "
      f"{sum(1 for t in fuzz['tools'] if t['valid_call_issue'])} valid call(s) with an issue; "
      f"connect error: {fuzz['connect_error']}")
for rule, n in sorted(fuzz_rules.items()):
    print(f"  {n:4d}  valid call dismissed: {rule}")
for t in issues:
    print("  REAL:", json.dumps(t)[:400])
left = len(real) + len(issues) + (1 if fuzz["connect_error"] or fuzz["terminated_early"] else 0)
print(f"real findings left: {left}")
sys.exit(1 if left else 0)
PY
