#!/usr/bin/env bash
# Regenerate the committed profile evaluations (issue 17): the reference server,
# @modelcontextprotocol/server-everything (npm) and a Python `mcp` SDK server (PyPI),
# over stdio, on both profiles mcpres runs and every revision each subject opens.
#
#   MCPRES_EVERYTHING_DIR=.../node_modules/@modelcontextprotocol/server-everything \
#   MCPRES_PY_MCP_PYTHON=.../bin/python bundles/profiles/generate.sh [MCPRES_BIN]
#
# A revision a subject does not open is skipped (its preflight is printed).
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN="$(realpath "${1:-target/debug/mcpres}")"
OUT=bundles/profiles
leg() {
  local name="$1" profile="$2" revision="$3"; shift 3
  local dir="$OUT/$name-$profile-$revision"
  rm -rf "$dir"
  # Does the subject open a conversation on this revision at all?
  if ! "$BIN" profile run "$profile" --revision "$revision" --checks "$([ "$profile" = stdio-transport ] && echo process-exit || echo unsupported-version-failure)" \
      -o "$dir.probe" -- "$@" >/dev/null 2>&1 || ! grep -q '"verdict":"PASS"' "$dir.probe/run.json" 2>/dev/null; then
    echo "$name $profile $revision: does not open on this revision; skipped"
    rm -rf "$dir.probe"; return
  fi
  rm -rf "$dir.probe"
  "$BIN" profile run "$profile" --revision "$revision" -o "$dir" -- "$@" 2>/dev/null | tail -1
}
for rev in 2025-11-25 2026-07-28; do
  for profile in stdio-transport protocol-revision; do
    leg reference "$profile" "$rev" "$BIN" serve
    [ -n "${MCPRES_EVERYTHING_DIR:-}" ] && leg everything "$profile" "$rev" node "$MCPRES_EVERYTHING_DIR/dist/index.js" stdio
    [ -n "${MCPRES_PY_MCP_PYTHON:-}" ] && leg python-sdk "$profile" "$rev" "$MCPRES_PY_MCP_PYTHON" tests/subjects/py_echo_server.py
  done
done
# Operational resilience (all 26 checks, stdio): one leg per subject and revision it
# opens; no preflight probe (every check opens the subject itself). The reference server
# runs with what it offers declared (reference-workload.toml: the built-in workload plus
# [subject], [rateLimit], [storage], [downstream] and [versionSkew] for its options
# below); the third-party subjects with the built-in workload, which declares none of
# those (the nine checks that need them are NOT_OBSERVED). The reference workload names
# its other version `mcpres`, looked up in PATH: this build's directory comes first.
export PATH="$(dirname "$BIN"):$PATH"
ops() {
  local name="$1" revision="$2" workload="$3"; shift 3
  local dir="$OUT/$name-operational-resilience-$revision"
  rm -rf "$dir"
  "$BIN" profile run operational-resilience --revision "$revision" ${workload:+--workload "$workload"} -o "$dir" -- "$@" 2>/dev/null | tail -1
}
for rev in 2025-11-25 2026-07-28; do
  ops reference "$rev" "$OUT/reference-workload.toml" "$BIN" serve --max-in-flight 8 --rate-limit 100/1000 --state-dir /var/tmp --downstream-env MCPRES_DOWNSTREAM_URL
  [ -n "${MCPRES_PY_MCP_PYTHON:-}" ] && ops python-sdk "$rev" "" "$MCPRES_PY_MCP_PYTHON" tests/subjects/py_echo_server.py
done
[ -n "${MCPRES_EVERYTHING_DIR:-}" ] && ops everything 2025-11-25 "" node "$MCPRES_EVERYTHING_DIR/dist/index.js" stdio
# Operational resilience over Streamable HTTP (all 26 checks): the reference server, a port per server started (its
# other version too: reference-workload-http.toml is reference-workload.toml with the other
# version's command serving on `{port}`).
for rev in 2025-11-25 2026-07-28; do
  dir="$OUT/reference-operational-resilience-http-$rev"
  rm -rf "$dir"
  "$BIN" profile run operational-resilience --revision "$rev" --workload "$OUT/reference-workload-http.toml" \
    --http 'http://127.0.0.1:0/mcp' -o "$dir" -- "$BIN" serve --transport http --port '{port}' \
    --max-in-flight 8 --rate-limit 100/1000 --state-dir /var/tmp --downstream-env MCPRES_DOWNSTREAM_URL 2>/dev/null | tail -1
done
# server-everything's Streamable HTTP mode (its port from PORT), with the built-in workload.
if [ -n "${MCPRES_EVERYTHING_DIR:-}" ]; then
  dir="$OUT/everything-operational-resilience-http-2025-11-25"
  rm -rf "$dir"
  "$BIN" profile run operational-resilience --revision 2025-11-25 --http 'http://127.0.0.1:0/mcp' \
    --env 'PORT={port}' -o "$dir" -- node "$MCPRES_EVERYTHING_DIR/dist/index.js" streamableHttp 2>/dev/null | tail -1
fi
# The Python SDK server's Streamable HTTP mode (`--http PORT`), with the built-in workload.
if [ -n "${MCPRES_PY_MCP_PYTHON:-}" ]; then
  for rev in 2025-11-25 2026-07-28; do
    dir="$OUT/python-sdk-operational-resilience-http-$rev"
    rm -rf "$dir"
    "$BIN" profile run operational-resilience --revision "$rev" --http 'http://127.0.0.1:0/mcp' \
      -o "$dir" -- "$MCPRES_PY_MCP_PYTHON" tests/subjects/py_echo_server.py --http '{port}' 2>/dev/null | tail -1
  done
fi
# Cache behavior (mcp-res/cache-behavior/v1, 2026-07-28 only, stdio): the reference server, a
# Python SDK server that serves hints through the SDK's own cache_hints, and the Python SDK echo
# server (the SDK's defaults). server-everything does not open 2026-07-28.
cache() {
  local name="$1"; shift
  local dir="$OUT/$name-cache-behavior-2026-07-28"
  rm -rf "$dir"
  "$BIN" profile run cache-behavior --revision 2026-07-28 -o "$dir" -- "$@" 2>/dev/null | tail -1
}
cache reference "$BIN" serve
if [ -n "${MCPRES_PY_MCP_PYTHON:-}" ]; then
  cache python-sdk-hints "$MCPRES_PY_MCP_PYTHON" tests/subjects/py_cache_server.py
  cache python-sdk "$MCPRES_PY_MCP_PYTHON" tests/subjects/py_echo_server.py
fi
