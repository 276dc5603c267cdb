#!/usr/bin/env bash
# Whole-process validation benchmark: times `mcpres validate` as a user runs it.
#
#   bench/validate.sh [OUTDIR]
#
# Builds the release binary (offline verifier build), generates the inputs with
# the project's own generator (nothing large is committed), then reports with
# hyperfine (median of many runs) and /usr/bin/time -v (peak RSS):
#   - one reference vector (from ../shared/reference-corpus when present)
#   - generated single-file bundles of 16, 64 and 254 observations (linearity)
# Install hyperfine with `apt-get install hyperfine` if it is missing.
# MCPRES_BIN=path uses that binary (and a debug generator) instead of building
# the release one; RUNS=n sets hyperfine's run count (default 200).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-$(mktemp -d)}"
mkdir -p "$OUT"
command -v hyperfine >/dev/null || { echo "hyperfine is required (apt-get install hyperfine)" >&2; exit 2; }

GEN_PROFILE=()
[ -z "${MCPRES_BIN:-}" ] && GEN_PROFILE=(--release)
if [ -z "${MCPRES_BIN:-}" ]; then cargo build --release --no-default-features --quiet; fi
cargo run "${GEN_PROFILE[@]}" --no-default-features --quiet --example gen_bench_inputs -- "$OUT"
BIN="${MCPRES_BIN:-${CARGO_TARGET_DIR:-target}/release/mcpres}"

CORPUS="${MCPRES_REFERENCE_CORPUS:-../shared/reference-corpus}"
REF="$CORPUS/v0.2.0/test-vectors/valid/reason-bound-negative.json"
inputs=()
[ -f "$REF" ] && inputs+=("$REF")
for n in 16 64 254; do inputs+=("$OUT/bundle-$n.json"); done

echo "== whole-process validation (median; hyperfine)"
for f in "${inputs[@]}"; do
  "$BIN" validate --format json "$f" >/dev/null || { echo "input did not validate: $f" >&2; exit 1; }
  hyperfine --style basic --warmup 20 --runs "${RUNS:-200}" -N \
    --export-json "$OUT/$(basename "$f").hyperfine.json" \
    "$BIN validate --format json $f" >/dev/null
  python3 - "$OUT/$(basename "$f").hyperfine.json" "$f" <<'PY'
import json, sys, os
r = json.load(open(sys.argv[1]))["results"][0]
print(f"{os.path.basename(sys.argv[2]):40s} {os.path.getsize(sys.argv[2]):>8d} bytes  median {r['median']*1000:7.2f} ms  mean {r['mean']*1000:7.2f} ms  min {r['min']*1000:7.2f} ms")
PY
done

echo "== peak resident memory (/usr/bin/time -v)"
for f in "${inputs[@]}"; do
  rss=$(/usr/bin/time -v "$BIN" validate --format json "$f" 2>&1 >/dev/null | awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2}')
  printf "%-40s peak RSS %6d KiB\n" "$(basename "$f")" "$rss"
done
