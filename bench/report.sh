#!/usr/bin/env bash
# `mcpres report` benchmark (issue 20 targets: the largest valid bundle, 254 observations,
# in under 50 ms and 1 MiB of HTML; 1,000 bundles, index plus sections, in under 5 s).
#
#   bench/report.sh
#
# Builds the release binary (offline verifier build), generates the inputs with the
# project's own generator into a temporary directory (removed afterwards; nothing large is
# committed) and times whole processes with hyperfine (median), then prints the page sizes:
#   - bundle-254.json, the largest valid bundle the benches use (254 observations);
#   - 1,000 small valid bundles (gen_bench_inputs --batch) as one folder input;
#   - 1,000 copies of bundle-254.json as one folder input (the heaviest case).
# `validate` of the same inputs is timed beside each, for scale. MCPRES_BIN=path uses that
# binary (and a debug generator) instead of the release build, MCPRES_GEN=path that built
# generator; RUNS=n hyperfine runs for the single bundle (default 50; the folders get 5).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "hyperfine is required (apt-get install hyperfine)" >&2; exit 2; }
GEN_PROFILE=()
if [ -z "${MCPRES_BIN:-}" ]; then
  cargo build --release --no-default-features --quiet --bin mcpres
  GEN_PROFILE=(--release)
fi
BIN="${MCPRES_BIN:-${CARGO_TARGET_DIR:-target}/release/mcpres}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
gen() {
  if [ -n "${MCPRES_GEN:-}" ]; then "$MCPRES_GEN" "$@"
  else cargo run "${GEN_PROFILE[@]}" --no-default-features --quiet --example gen_bench_inputs -- "$@"; fi
}
gen "$TMP"
gen "$TMP" --batch 1000
mkdir -p "$TMP/large"
for i in $(seq -w 1 1000); do cp "$TMP/bundle-254.json" "$TMP/large/$i.json"; done

# One case: hyperfine of `report` (a fresh output each run) and of `validate`, page size.
measure() {
  local name="$1" input="$2" runs="$3"
  "$BIN" validate --quiet "$input" >/dev/null 2>&1 || { echo "$name does not validate" >&2; exit 1; }
  "$BIN" report "$input" -o "$TMP/$name.html" 2>/dev/null
  hyperfine --style none --warmup 2 --runs "$runs" -N \
    --prepare "rm -f $TMP/run.html" \
    --export-json "$TMP/$name.report.json" \
    "$BIN report $input -o $TMP/run.html" >/dev/null 2>&1
  hyperfine --style none --warmup 2 --runs "$runs" -N \
    --export-json "$TMP/$name.validate.json" \
    "$BIN validate --quiet $input" >/dev/null 2>&1
  python3 - "$name" "$TMP/$name.report.json" "$TMP/$name.validate.json" "$TMP/$name.html" <<'PY'
import json, os, sys
name, rep, val, page = sys.argv[1:5]
r = json.load(open(rep))["results"][0]
v = json.load(open(val))["results"][0]
size = os.path.getsize(page)
print(f"{name:34s} report median {r['median']*1000:8.1f} ms (mean {r['mean']*1000:8.1f}, min {r['min']*1000:8.1f})"
      f"  validate median {v['median']*1000:8.1f} ms  page {size:>11,d} bytes ({size/1048576:.2f} MiB)")
PY
}

echo "== mcpres report, whole process (hyperfine median)"
measure "bundle-254 (largest valid)" "$TMP/bundle-254.json" "${RUNS:-50}"
measure "1,000 small bundles (folder)" "$TMP/batch" 5
measure "1,000 x bundle-254 (folder)" "$TMP/large" 5
