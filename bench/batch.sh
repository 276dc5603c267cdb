#!/usr/bin/env bash
# Batch benchmark: N small valid bundles (default 10,000) in ONE
# `mcpres validate` call; reports bundles per second (hyperfine median).
#
#   bench/batch.sh [N]
#
# The bundles are generated into a temporary directory (removed afterwards) by
# examples/gen_bench_inputs.rs --batch. MCPRES_BIN=path uses that binary
# instead of building the release one; RUNS=n hyperfine runs (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "hyperfine is required (apt-get install hyperfine)" >&2; exit 2; }
N="${1:-10000}"
RUNS="${RUNS:-5}"
if [ -z "${MCPRES_BIN:-}" ]; then
  cargo build --release --no-default-features --quiet
  BIN="${CARGO_TARGET_DIR:-target}/release/mcpres"
  PROFILE=(--release)
else
  BIN="$MCPRES_BIN"
  PROFILE=()
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cargo run "${PROFILE[@]}" --no-default-features --quiet --example gen_bench_inputs -- "$TMP" --batch "$N"
# One call; the file list is passed through xargs only to stay under ARG_MAX
# (one invocation as long as it fits, which 10,000 short paths do).
cd "$TMP/batch"
ls > "$TMP/list"
calls=$(xargs -a "$TMP/list" -x -s 1000000 echo | wc -l)
[ "$calls" -eq 1 ] || echo "note: the list needed $calls calls" >&2
xargs -a "$TMP/list" -x -s 1000000 "$BIN" validate --quiet --format json >/dev/null \
  || { echo "the batch did not validate" >&2; exit 1; }
hyperfine --style none --warmup 1 --runs "$RUNS" --export-json "$TMP/b.json" \
  "xargs -a $TMP/list -x -s 1000000 $BIN validate --format json >/dev/null" >/dev/null
rss=$(/usr/bin/time -v xargs -a "$TMP/list" -x -s 1000000 "$BIN" validate --format json 2>&1 >/dev/null | awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2}')
python3 - "$TMP/b.json" "$N" "$rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
n = int(sys.argv[2])
print(f"{n} bundles in one call: median {r['median']:.3f} s = {n / r['median']:.0f} bundles/s (min {r['min']:.3f} s); peak RSS {sys.argv[3]} KiB")
PY
