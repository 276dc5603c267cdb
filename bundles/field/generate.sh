#!/usr/bin/env bash
# Regenerate the committed field evidence matrix (issue 18, MCPRES-FIELD-001):
# the reference server, @modelcontextprotocol/server-everything (npm) and a
# Python `mcp` SDK server (PyPI), each over stdio and Streamable HTTP, on every
# revision each opens (matrix.toml), then print the README's leg table.
#
#   MCPRES_EVERYTHING_DIR=.../node_modules/@modelcontextprotocol/server-everything \
#   MCPRES_PY_MCP_PYTHON=.../bin/python bundles/field/generate.sh [MCPRES_BIN]
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN="$(realpath "${1:-target/debug/mcpres}")"
: "${MCPRES_EVERYTHING_DIR:?set it to the server-everything package directory}"
: "${MCPRES_PY_MCP_PYTHON:?set it to a python with the mcp SDK}"
OUT=bundles/field/evidence
rm -rf "$OUT"
start=$(date +%s.%N)
"$BIN" field run bundles/field/matrix.toml -o "$OUT" >/dev/null
echo "field run: exit $?, $(echo "$(date +%s.%N) - $start" | bc) s" >&2
python3 - "$OUT/matrix.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print("| leg | transport | revision | runtime | result | clean path | expected failure | wrong-reason control | interruption | cleanup | failed (reason) | not observed |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for l in m["legs"]:
    frac = lambda k: f"{l[k]['held']}/{l[k]['total']}"
    failed = ", ".join(f"{c['id']} (`{c['reason']}`)" for c in l.get("failedChecks", [])) or "-"
    nobs = ", ".join(c["id"] for c in l.get("notObservedChecks", [])) or "-"
    inter = ", ".join(f"{c['id']} {c['verdict']}" for c in l["interruption"]["checks"])
    rt = f"{l['runtime']['name']} {l['runtime']['version']}"
    print(f"| `{l['id']}` | {l['transport']} | {l['protocolRevision']} | {rt} | {l['result']} | {frac('cleanPath')} | {frac('expectedFailure')} | "
          f"{l['wrongReasonControl']['killed']}/{l['wrongReasonControl']['total']} | {inter} | {'yes' if l['cleanup']['observed'] else 'no'} | {failed} | {nobs} |")
print(f"\nOverall: {m['result']} ({m['summary']})")
PY
