#!/usr/bin/env bash
# Run every fuzz target for a bounded time (default 60 s each).
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# Needs cargo-fuzz (`cargo install cargo-fuzz`). cargo-fuzz passes nightly-only
# rustc flags (-Z...); on a stable toolchain RUSTC_BOOTSTRAP=1 lets them
# through. The sanitizer is off (`-s none`): mcpres forbids unsafe code, and
# without ASan each target runs several times faster. Set FUZZ_SANITIZER=address
# to turn it on. Crashes land in fuzz/artifacts/TARGET/; copy each into
# testdata/fuzz-regressions/TARGET/ (tests/fuzz_regressions.rs replays them).
# Fuzzing is not part of CI.
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_EACH="${1:-60}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(json_roundtrip bundle_validate dsse_envelope dir_loader)
export RUSTC_BOOTSTRAP=1
TARGET_DIR="${FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-target}}"
SANITIZER="${FUZZ_SANITIZER:-none}"
mkdir -p logs
for t in "${TARGETS[@]}"; do
  mkdir -p "corpus/$t"
  seeds="../testdata/fuzz-regressions/$t"   # read-only seeds; new inputs go to corpus/$t
  echo "== $t (${SECONDS_EACH}s)"
  cargo fuzz run -s "$SANITIZER" --target-dir "$TARGET_DIR" "$t" "corpus/$t" $seeds -- \
    -max_total_time="$SECONDS_EACH" -max_len=65536 -timeout=20 -rss_limit_mb=1024 \
    -print_final_stats=1 2>&1 | tee "logs/$t.log" | grep -E "^(#[0-9]+ *DONE|stat::number_of_executed_units|stat::peak_rss|==[0-9]+==|SUMMARY|Done)" || true
  grep -q "stat::number_of_executed_units" "logs/$t.log" || { echo "$t did not run; see fuzz/logs/$t.log" >&2; exit 1; }
  if grep -q "ERROR: libFuzzer" "logs/$t.log"; then
    echo "$t FOUND A CRASH: see fuzz/logs/$t.log and fuzz/artifacts/$t/" >&2
    found=1
  fi
done
exit "${found:-0}"
