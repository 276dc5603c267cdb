#!/usr/bin/env bash
# Regenerate the committed example reports (issue 20): one `mcpres report` page per entry
# of bundles/, and a screenshot of the first for the README (when chromium is installed).
# tests/report.rs (`committed_example_reports_are_current`) checks the pages are current.
#
#   bundles/reports/generate.sh [MCPRES_BIN]
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="$(realpath "${1:-target/debug/mcpres}")"
OUT=bundles/reports
page() {
  local name="$1"; shift
  rm -f "$OUT/$name.html"
  "$BIN" report "$@" -o "$OUT/$name.html" || [ $? -eq 1 ]
}
page example-genuine-runtime bundles/example-genuine-runtime
page example-fixture bundles/example-fixture.json
page example-attested --trust-policy bundles/example-trust-policy.json --at 2026-12-01T00:00:00Z bundles/example-attested.json
page harness bundles/harness
page profiles bundles/profiles
page field bundles/field/evidence
page oauth bundles/oauth/reference bundles/oauth/python-sdk
if command -v chromium >/dev/null 2>&1; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work" \
    --host-resolver-rules="MAP * ~NOTFOUND" --no-proxy-server --hide-scrollbars \
    --window-size=1280,2000 --screenshot="$OUT/screenshot.png" \
    "file://$PWD/$OUT/example-genuine-runtime.html" 2>/dev/null
else
  echo "no chromium: screenshot.png not regenerated" >&2
fi
