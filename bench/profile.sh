#!/usr/bin/env bash
# Whole-process benchmark of `mcpres profile run` against the reference server
# (issue 17 target: the whole stdio-transport profile in under 5 s; issue 18
# target: the whole streamable-http profile in under 10 s).
#
#   bench/profile.sh [OUTDIR]
#
# Builds the release binary (default features), then times the whole
# stdio-transport profile on both revisions and the protocol-revision profile
# with hyperfine (RUNS, default 5), reports peak RSS with /usr/bin/time -v,
# and counts the processes left behind after each run (must be 0).
# MCPRES_BIN=path uses that binary instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-$(mktemp -d)}"
mkdir -p "$OUT"
command -v hyperfine >/dev/null || { echo "hyperfine is required (apt-get install hyperfine)" >&2; exit 2; }
if [ -z "${MCPRES_BIN:-}" ]; then cargo build --release --quiet; fi
BIN="$(realpath "${MCPRES_BIN:-${CARGO_TARGET_DIR:-target}/release/mcpres}")"
SEED=$((900000000 + $$))

left() { grep -l -- "[-]-seed.$SEED" /proc/[0-9]*/cmdline 2>/dev/null | wc -l; }

for spec in "stdio-transport 2025-11-25" "stdio-transport 2026-07-28" "protocol-revision 2025-11-25" "protocol-revision 2026-07-28" "streamable-http 2025-11-25" "streamable-http 2026-07-28"; do
  set -- $spec
  name="$1-$2"
  if [ "$1" = streamable-http ]; then
    args=(profile run "$1" --revision "$2" --http http://127.0.0.1:0/mcp --bearer-env MCPRES_BENCH_TOKEN -o "$OUT/$name" -- "$BIN" serve --seed "$SEED" --transport http --port '{port}' --bearer-env MCPRES_BENCH_TOKEN --header-read-timeout-ms 3000)
  else
    args=(profile run "$1" --revision "$2" -o "$OUT/$name" -- "$BIN" serve --seed "$SEED")
  fi
  hyperfine --style basic --runs "${RUNS:-5}" -N -i \
    --prepare "rm -rf $OUT/$name" \
    --export-json "$OUT/$name.hyperfine.json" \
    "$BIN ${args[*]}" >/dev/null || true
  rm -rf "$OUT/$name"
  /usr/bin/time -v -o "$OUT/$name.time" "$BIN" "${args[@]}" >/dev/null 2>&1 || true
  python3 - "$OUT/$name.hyperfine.json" "$OUT/$name.time" "$name" "$(left)" "$OUT/$name/run.json" "$OUT/$name/evaluation.json" <<'PY'
import json, sys, re
r = json.load(open(sys.argv[1]))["results"][0]
rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(sys.argv[2]).read())
run = json.load(open(sys.argv[5]))
ev = json.load(open(sys.argv[6]))
checks = len(run["checks"])
print(f"{sys.argv[3]:<32} median {r['median']:.2f} s  min {r['min']:.2f} s  max {r['max']:.2f} s  "
      f"checks {checks}  result {run['result']}  peak RSS {int(rss.group(1))/1024:.1f} MiB  processes left {sys.argv[4]}  "
      f"cleanup observed {ev['cleanup']['observed']}")
PY
done
