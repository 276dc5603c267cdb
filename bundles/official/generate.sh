#!/usr/bin/env bash
# Regenerate the committed official-conformance attachments (issue 38): the official
# suite (@modelcontextprotocol/conformance 0.1.16, server mode, active scenarios) against
# the reference server (over Streamable HTTP, and over stdio through mcpres's bridge),
# @modelcontextprotocol/server-everything (npm, Streamable HTTP) and a Python `mcp` SDK
# server (PyPI, stdio), each with one `mcpres official run`.
#
#   MCPRES_OFFICIAL_SUITE_DIR=.../official-suite \
#   MCPRES_EVERYTHING_DIR=.../node_modules/@modelcontextprotocol/server-everything \
#   MCPRES_PY_MCP_PYTHON=.../bin/python bundles/official/generate.sh [MCPRES_BIN]
#
# Each leg writes NAME.json (the attachment), NAME.sanitized.json (the sanitized
# derivative its detailsSha256 values bind) and NAME.run.json (the run record). The
# original result is not kept: it holds the run's loopback ports.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN="$(realpath "${1:-target/debug/mcpres}")"
OUT=bundles/official
: "${MCPRES_OFFICIAL_SUITE_DIR:?set it to the directory where the suite is installed}"
leg() {
  local name="$1"; shift
  rm -f "$OUT/$name.json" "$OUT/$name.sanitized.json" "$OUT/$name.run.json"
  "$BIN" official run --suite "$MCPRES_OFFICIAL_SUITE_DIR" -o "$OUT/$name.json" \
    --sanitized-out "$OUT/$name.sanitized.json" "$@" 2>&1 | tail -2
}
leg reference-2025-11-25 -- "$BIN" serve --transport http --port '{port}'
leg reference-stdio-2025-11-25 -- "$BIN" serve
if [ -n "${MCPRES_EVERYTHING_DIR:-}" ]; then
  leg everything-2025-11-25 --env 'PORT={port}' -- node "$MCPRES_EVERYTHING_DIR/dist/index.js" streamableHttp
fi
if [ -n "${MCPRES_PY_MCP_PYTHON:-}" ]; then
  leg python-sdk-stdio-2025-11-25 -- "$MCPRES_PY_MCP_PYTHON" tests/subjects/py_echo_server.py
fi
