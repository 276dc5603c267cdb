#!/usr/bin/env bash
# The Python package and the Dask example against the command and the Rust
# API (issue 21 targets: the package within 20% of the Rust API; the local
# two-worker cluster within 2x of the single-process command).
#
#   bench/python.sh [N]        (default N = 20,000 small valid bundles)
#
# Builds the release binary (offline verifier), the release wheel (maturin)
# into a venv under target/ (PYTHON_BENCH_VENV=dir to reuse one with maturin
# and dask[distributed]), generates the corpus with
# examples/gen_bench_inputs.rs --batch into a temporary directory, then runs
# bench/python_bench.py and the Rust API's own figure (examples/bench_api).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-20000}"
RUNS="${RUNS:-3}"
VENV="${PYTHON_BENCH_VENV:-target/pkg-venv}"
if [ ! -x "$VENV/bin/maturin" ] || ! "$VENV/bin/python" -c 'import distributed' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "maturin==1.16.0" "dask[distributed]==2026.8.0"
fi
cargo build --release --no-default-features --quiet
cargo build --release --no-default-features --quiet --example bench_api --example gen_bench_inputs
(cd python && "../$VENV/bin/maturin" build --release --quiet --out ../target/wheels-release)
"$VENV/bin/pip" install --quiet --force-reinstall --no-deps target/wheels-release/mcpres-*-abi3-*.whl
TMP="$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/mcpres-python.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
target/release/examples/gen_bench_inputs "$TMP" --batch "$N"
find "$TMP/batch" -name '*.json' | sort > "$TMP/list"
"$VENV/bin/python" bench/python_bench.py "$PWD/target/release/mcpres" "$TMP/list" "$RUNS"
echo "Rust API (examples/bench_api $N, same bundle bytes):"
target/release/examples/bench_api "$N"
