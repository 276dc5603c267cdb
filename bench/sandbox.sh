#!/usr/bin/env bash
# What the sandbox costs (issue 34, "Cost": the harness trial and the profile
# runs within 20% of their time without it): whole `mcpres` processes timed
# with hyperfine, each command once with `--sandbox off` and once with
# `--sandbox require`, against the reference server over stdio:
#
#   - `mcpres run --trials 3` (scenario reference-faults: 12 subject sessions);
#   - `mcpres profile run stdio-transport` (every check; dozens of processes);
#   - with MCPRES_PY_MCP_PYTHON set (a Python with the `mcp` SDK, as .ci/run
#     installs it): `mcpres run --trials 3` against the Python SDK's echo
#     server (tests/subjects/py_echo_server.py), a real server whose sessions
#     take hundreds of milliseconds;
#   - `mcpres profile run streamable-http` against the reference server over
#     HTTP (every check; in the sandbox each server has a network namespace
#     of its own and is reached through its door);
#
# and the per-session cost alone: `mcpres run` sessions record `spawned` and
# `reaped` offsets, so the median session length with and without is shown.
#
#   bench/sandbox.sh            (RUNS=n hyperfine runs, default 5)
#
# MCPRES_BIN=path uses that binary instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "hyperfine is required (apt-get install hyperfine)" >&2; exit 2; }
if [ -z "${MCPRES_BIN:-}" ]; then cargo build --release --quiet; fi
BIN="$(realpath "${MCPRES_BIN:-${CARGO_TARGET_DIR:-target}/release/mcpres}")"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/mcpres-bench-sandbox.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
RUNS="${RUNS:-5}"

echo "binary: $BIN"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min), $(nproc) CPUs"
WHATS="run profile http"
if [ -n "${MCPRES_PY_MCP_PYTHON:-}" ]; then WHATS="run run-py profile http"; fi
for what in $WHATS; do
  for mode in off require; do
    if [ "$what" = run ]; then
      cmd="$BIN run --trials 3 --sandbox $mode -o $TMP/out -- $BIN serve --transport stdio"
    elif [ "$what" = run-py ]; then
      cmd="$BIN run --trials 3 --scenario generic --sandbox $mode -o $TMP/out -- $MCPRES_PY_MCP_PYTHON tests/subjects/py_echo_server.py"
    elif [ "$what" = profile ]; then
      cmd="$BIN profile run stdio-transport --sandbox $mode -o $TMP/out -- $BIN serve"
    else
      cmd="$BIN profile run streamable-http --http http://127.0.0.1:0/mcp --sandbox $mode -o $TMP/out -- $BIN serve --transport http --port {port}"
    fi
    hyperfine --style basic --runs "$RUNS" --warmup 1 -N -i --prepare "rm -rf $TMP/out" \
      --export-json "$TMP/$what-$mode.json" "$cmd" >/dev/null
  done
  python3 - "$what" "$TMP/$what-off.json" "$TMP/$what-require.json" <<'PY'
import json, sys
what, off, on = sys.argv[1], *[json.load(open(p))["results"][0] for p in sys.argv[2:]]
print(f"{what:<8} --sandbox off: median {off['median']*1000:8.1f} ms (min {off['min']*1000:.1f})   "
      f"--sandbox require: median {on['median']*1000:8.1f} ms (min {on['min']*1000:.1f})   "
      f"overhead {100*(on['median']/off['median']-1):+.1f}%")
PY
done

# Session lengths (spawned -> reaped) recorded by `mcpres run` itself.
for mode in off require; do
  rm -rf "$TMP/s-$mode"
  "$BIN" run --trials 3 --sandbox "$mode" -o "$TMP/s-$mode" -- "$BIN" serve --transport stdio >/dev/null 2>&1 || true
done
python3 - "$TMP/s-off" "$TMP/s-require" <<'PY'
import glob, json, os, statistics, sys
def lengths(d):
    out = []
    for lc in glob.glob(os.path.join(d, "raw", "**", "lifecycle.jsonl"), recursive=True):
        s = {}
        for line in open(lc):
            e = json.loads(line)
            s.setdefault(e["session"], {}).setdefault(e["event"], e["offsetMs"])
        out += [v["reaped"] - v["spawned"] for v in s.values() if "reaped" in v and "spawned" in v]
    return out
off, on = lengths(sys.argv[1]), lengths(sys.argv[2])
if off and on:
    print(f"session spawned->reaped, median over {len(off)}/{len(on)} sessions: "
          f"off {statistics.median(off)} ms, require {statistics.median(on)} ms")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
