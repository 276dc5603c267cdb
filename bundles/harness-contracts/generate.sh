#!/usr/bin/env bash
# Regenerate the committed tool-contract runs (issue 39): `mcpres run --scenario
# tool-contracts` against the reference server, server-everything (npm) and a Python `mcp`
# SDK server (PyPI), over stdio, from the repository root, with the subjects installed the
# way .ci/run installs them (target/server-everything, target/py-mcp-venv).
#
#   bundles/harness-contracts/generate.sh [MCPRES_BIN]
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN="$(realpath "${1:-target/debug/mcpres}")"
OUT=bundles/harness-contracts
SE=target/server-everything/node_modules/@modelcontextprotocol/server-everything
rm -rf "$OUT/reference" "$OUT/everything-stdio" "$OUT/python-sdk-stdio"
"$BIN" run --scenario tool-contracts -o "$OUT/reference" -- "$BIN" serve | tail -n +2
"$BIN" run --scenario tool-contracts --subject-artifact "$SE" -o "$OUT/everything-stdio" -- node "$SE/dist/index.js" stdio | tail -n +2
# The Python server annotates none of its tools: `add` is named (it only adds).
"$BIN" run --scenario tool-contracts --tool add --subject-artifact tests/subjects/py_echo_server.py -o "$OUT/python-sdk-stdio" -- target/py-mcp-venv/bin/python tests/subjects/py_echo_server.py | tail -n +2
exit 0
