#!/usr/bin/env bash
# Streaming batch benchmark (issue 21): N small valid bundles (default 10,000
# and 100,000) in ONE `mcpres validate --format json --files-from LIST` call,
# in input order and with --unordered: bundles per second and peak RSS. Peak
# memory should be flat in N (no report is kept once written).
#
#   bench/stream.sh [N ...]
#
# The bundles are generated into a temporary directory (removed afterwards;
# BENCH_TMP=dir picks where, 100,000 bundles take about 400 MiB) by
# examples/gen_bench_inputs.rs --batch. MCPRES_BIN=path uses that binary
# instead of building the release one; RUNS=n runs per figure (default 3, the
# best wall time and the highest peak RSS are reported).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/time ] || { echo "/usr/bin/time is required (apt-get install time)" >&2; exit 2; }
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000 100000)
RUNS="${RUNS:-3}"
if [ -z "${MCPRES_BIN:-}" ]; then
  cargo build --release --no-default-features --quiet
  BIN="${CARGO_TARGET_DIR:-target}/release/mcpres"
  PROFILE=(--release)
else
  BIN="$MCPRES_BIN"
  PROFILE=()
fi
MAX=0
for n in "${SIZES[@]}"; do [ "$n" -gt "$MAX" ] && MAX="$n"; done
TMP="$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/mcpres-stream.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
cargo run "${PROFILE[@]}" --no-default-features --quiet --example gen_bench_inputs -- "$TMP" --batch "$MAX"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min), $(nproc) CPUs"
printf '%-8s %-10s %10s %12s %14s %6s\n' inputs order "best s" "bundles/s" "peak RSS KiB" exit
find "$TMP/batch" -name '*.json' | sort > "$TMP/all"
for n in "${SIZES[@]}"; do
  head -n "$n" "$TMP/all" > "$TMP/list"
  for order in ordered unordered; do
    flag=()
    [ "$order" = unordered ] && flag=(--unordered)
    best="" peak=0 code=0
    for _ in $(seq "$RUNS"); do
      set +e
      /usr/bin/time -f '%e %M' -o "$TMP/time" "$BIN" validate --format json "${flag[@]}" \
        --files-from "$TMP/list" >"$TMP/out" 2>"$TMP/err"
      code=$?
      set -e
      read -r wall rss < "$TMP/time"
      lines=$(wc -l < "$TMP/out")
      [ "$lines" -eq "$n" ] || { echo "expected $n result lines, got $lines" >&2; exit 1; }
      if [ -z "$best" ] || awk "BEGIN {exit !($wall < $best)}"; then best="$wall"; fi
      [ "$rss" -gt "$peak" ] && peak="$rss"
    done
    rate=$(awk "BEGIN {printf \"%.0f\", $n / ($best > 0 ? $best : 0.001)}")
    printf '%-8s %-10s %10s %12s %14s %6s\n' "$n" "$order" "$best" "$rate" "$peak" "$code"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
