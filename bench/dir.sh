#!/usr/bin/env bash
# Bundle-directory benchmark: `mcpres validate DIR` against sha256sum on the
# same raw artifacts, and peak memory at several sizes.
#
#   bench/dir.sh [SIZE_MIB ...]          (default: 256 512 1024)
#
# For each size, bench/gen (examples/gen_bench_dir.rs) writes a valid bundle
# directory with COUNT (default 200) raw artifacts totalling SIZE_MIB into a
# temporary directory (removed afterwards; nothing is committed). With a warm
# page cache it then times, with hyperfine (median):
#   - mcpres validate --format json DIR   (all artifacts hashed, in parallel)
#   - sha256sum over the same raw files    (one process)
#   - sha256sum in 2 parallel processes    (xargs -P2, half the files each)
# and reports MiB/s, mcpres as a percentage of each sha256sum figure, and
# mcpres' peak RSS (/usr/bin/time -v). Time should grow linearly with size and
# RSS should not grow at all.
#
# Environment: MCPRES_BIN=path uses that binary instead of building the
# release one; COUNT=n artifacts per bundle (1-248); RUNS=n hyperfine runs
# (default 5); BENCH_TMP=dir parent for the generated bundles (needs SIZE_MIB
# of free space for the largest size).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "hyperfine is required (apt-get install hyperfine)" >&2; exit 2; }
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(256 512 1024)
COUNT="${COUNT:-200}"
RUNS="${RUNS:-5}"
if [ -z "${MCPRES_BIN:-}" ]; then
  cargo build --release --no-default-features --quiet
  cargo build --release --no-default-features --quiet --example gen_bench_dir
  BIN="${CARGO_TARGET_DIR:-target}/release/mcpres"
  GEN="${CARGO_TARGET_DIR:-target}/release/examples/gen_bench_dir"
else
  BIN="$MCPRES_BIN"
  cargo build --no-default-features --quiet --example gen_bench_dir
  GEN="${CARGO_TARGET_DIR:-target}/debug/examples/gen_bench_dir"
fi
TMP="$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/mcpres-bench-dir.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

median_ms() {
  python3 -c 'import json,sys; print("%.1f" % (json.load(open(sys.argv[1]))["results"][0]["median"]*1000))' "$1"
}

printf "%-8s %-10s %12s %12s %12s %10s %10s %12s\n" size artifacts "mcpres ms" "sha256 ms" "sha256x2 ms" "vs 1 proc" "vs 2 proc" "peak RSS KiB"
for size in "${SIZES[@]}"; do
  dir="$TMP/bundle-$size"
  "$GEN" "$dir" "$size" "$COUNT" 2>/dev/null
  "$BIN" validate --format json "$dir" >/dev/null || { echo "generated bundle did not validate: $dir" >&2; "$BIN" validate "$dir" >&2; exit 1; }
  ( cd "$dir/raw" && ls > "$TMP/files-$size" )
  hyperfine --style none --warmup 1 --runs "$RUNS" -N --export-json "$TMP/m.json" \
    "$BIN validate --format json $dir" >/dev/null
  hyperfine --style none --warmup 1 --runs "$RUNS" --export-json "$TMP/s1.json" \
    "cd $dir/raw && xargs -a $TMP/files-$size sha256sum >/dev/null" >/dev/null
  hyperfine --style none --warmup 1 --runs "$RUNS" --export-json "$TMP/s2.json" \
    "cd $dir/raw && xargs -a $TMP/files-$size -n $(( (COUNT + 1) / 2 )) -P 2 sha256sum >/dev/null" >/dev/null
  m=$(median_ms "$TMP/m.json"); s1=$(median_ms "$TMP/s1.json"); s2=$(median_ms "$TMP/s2.json")
  rss=$(/usr/bin/time -v "$BIN" validate --format json "$dir" 2>&1 >/dev/null | awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2}')
  python3 - "$size" "$COUNT" "$m" "$s1" "$s2" "$rss" <<'PY'
import sys
size, count, m, s1, s2, rss = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:6]), sys.argv[6]
print(f"{size+' MiB':<8} {count:<10} {m:12.1f} {s1:12.1f} {s2:12.1f} {100*s1/m:9.0f}% {100*s2/m:9.0f}% {rss:>12}")
print(f"         throughput MiB/s: mcpres {float(size)/m*1000:.0f}, sha256sum {float(size)/s1*1000:.0f}, sha256sum x2 {float(size)/s2*1000:.0f}")
PY
  rm -rf "$dir"
done
echo "(vs N proc = sha256sum time / mcpres time; the issue's target is at least 80%)"
