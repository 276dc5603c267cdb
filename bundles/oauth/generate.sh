#!/usr/bin/env bash
# Regenerate the committed OAuth-boundary evaluations (issue 19 items 4 and 6):
# the reference subject (`mcpres serve --auth loopback`) into reference/, and a
# Python `mcp` SDK resource server (tests/subjects/py_oauth_subject.py, the
# SDK's own authorization support) into python-sdk/, each with the loopback
# authorization fixture in process; then print the README's per-check table.
#
#   MCPRES_PY_MCP_PYTHON=.../bin/python bundles/oauth/generate.sh [MCPRES_BIN]
#
# `mcpres oauth run` exits 0 when the evaluation it wrote is valid (the
# reference subject) and 1 when `mcpres validate` finds something in it (the
# Python SDK subject, see README.md); neither is an error here. Any other exit
# status (2: unusable input, a refused write) is.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN="$(realpath "${1:-target/debug/mcpres}")"
: "${MCPRES_PY_MCP_PYTHON:?set it to a python with the mcp SDK (see .ci/run)}"
OUT=bundles/oauth
status=0
run() { # NAME -- COMMAND...
  local name=$1; shift 2
  rm -rf "${OUT:?}/$name"
  "$BIN" oauth run -o "$OUT/$name" -- "$@" 2>"$OUT/.$name.log"
  local rc=$?
  echo "$name: mcpres oauth run exit $rc" >&2
  if [ "$rc" -gt 1 ] || [ ! -f "$OUT/$name/evaluation.json" ]; then
    cat "$OUT/.$name.log" >&2
    status=1
  fi
  rm -f "$OUT/.$name.log"
}
run reference -- "$BIN" serve --transport http --port '{port}' --auth loopback --auth-issuer '{issuer}' --auth-scope '{scope}'
run python-sdk -- "$MCPRES_PY_MCP_PYTHON" tests/subjects/py_oauth_subject.py --port '{port}' --issuer '{issuer}' --scope '{scope}'
[ "$status" -eq 0 ] || exit "$status"
for name in reference python-sdk; do
  "$BIN" validate "$OUT/$name/evaluation.json" >/dev/null 2>&1
  echo "$name: mcpres validate exit $?" >&2
done
python3 - "$OUT/reference/run.json" "$OUT/python-sdk/run.json" <<'PY'
import json, sys
ref, py = (json.load(open(p)) for p in sys.argv[1:3])
pyc = {c["id"]: c for c in py["checks"]}
print("| check | evidence source | reference subject | Python SDK subject | Python SDK reason |")
print("| --- | --- | --- | --- | --- |")
for c in ref["checks"]:
    p = pyc.get(c["id"], {"verdict": "-", "reason": "-"})
    print(f"| `{c['id']}` | {c['evidenceSource']} | {c['verdict']} | {p['verdict']} | `{p['reason']}` |")
missing = sorted(set(ref["notImplemented"]) | set(py["notImplemented"]))
print(f"\nNot yet implemented by the runner (absent from both): {', '.join(missing) or 'none'}")
PY
