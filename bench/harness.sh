#!/usr/bin/env bash
# Harness benchmark (issue 7, "Performance"): `mcpres run` against the
# reference server over stdio, scenario reference-faults (one clean control and
# three negative controls per trial, each in a fresh subject process).
#
#   bench/harness.sh [K ...]          (default: 1 10 100)
#
# For each K it runs `mcpres run --trials K` once and reports
#   - the whole process's wall time and K / wall time;
#   - the per-trial durations the run itself recorded (min / median / p95, ms):
#     from the bundle's trial summary, or for a campaign (K above 8) from
#     campaign.json, which covers every trial of every part;
#   - peak memory: the harness process's own VmHWM, sampled from
#     /proc/PID/status every 20 ms while it runs (VmHWM only grows, so the
#     last sample is the peak up to 20 ms before exit), and /usr/bin/time's
#     %M, which is the largest of the harness and the subjects it reaped.
# Then hyperfine times whole `mcpres run --trials 1` processes (start-up,
# four subject processes, validation and writing included).
#
# The per-exchange overhead against a raw pipe is the criterion bench:
#   cargo bench --features bench --bench harness
#
# Environment: MCPRES_BIN=path uses that binary instead of building the
# release one (`cargo build --release`, default features: the harness needs
# `server`); RUNS=n hyperfine runs (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."
TRIALS=("$@")
[ ${#TRIALS[@]} -eq 0 ] && TRIALS=(1 10 100)
RUNS="${RUNS:-10}"
if [ -z "${MCPRES_BIN:-}" ]; then
  cargo build --release --quiet
  BIN="${CARGO_TARGET_DIR:-target}/release/mcpres"
else
  BIN="$MCPRES_BIN"
fi
BIN="$(realpath "$BIN")"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/mcpres-bench-harness.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

echo "binary: $BIN"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min), $(nproc) CPUs"
printf "%-7s %-6s %-9s %10s %9s %9s %9s %13s %13s %-9s\n" \
  trials parts result "wall s" "min ms" "med ms" "p95 ms" "VmHWM KiB" "time %M KiB" "exit"
for k in "${TRIALS[@]}"; do
  out="$TMP/run-$k"
  start=$(date +%s%N)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f %M -o "$TMP/time-$k" \
      "$BIN" run --trials "$k" -o "$out" -- "$BIN" serve --transport stdio \
      >"$TMP/stdout-$k" 2>"$TMP/stderr-$k" &
  else
    "$BIN" run --trials "$k" -o "$out" -- "$BIN" serve --transport stdio \
      >"$TMP/stdout-$k" 2>"$TMP/stderr-$k" &
  fi
  wrapper=$!
  # The harness is the wrapper itself, or its only child under /usr/bin/time.
  harness=""
  for _ in $(seq 100); do
    harness=$(pgrep -P "$wrapper" | head -n1 || true)
    [ -z "$harness" ] && [ ! -x /usr/bin/time ] && harness=$wrapper
    [ -n "$harness" ] && break
    sleep 0.01
  done
  hwm=0
  while [ -n "$harness" ] && [ -r "/proc/$harness/status" ]; do
    v=$(awk '/^VmHWM:/ {print $2}' "/proc/$harness/status" 2>/dev/null || true)
    [ -n "$v" ] && hwm=$v
    sleep 0.02
  done
  rc=0
  wait "$wrapper" || rc=$?
  end=$(date +%s%N)
  tm=$( [ -f "$TMP/time-$k" ] && tail -n1 "$TMP/time-$k" || echo "-")
  python3 - "$k" "$out" "$start" "$end" "$hwm" "$tm" "$rc" <<'PY'
import json, os, sys
k, out, start, end, hwm, tm, rc = sys.argv[1:]
wall = (int(end) - int(start)) / 1e9
c = os.path.join(out, "campaign.json")
if os.path.exists(c):
    doc = json.load(open(c))
    d, parts, result = doc["durationMs"], len(doc["parts"]), doc["result"]
else:
    doc = json.load(open(os.path.join(out, "evidence-envelope.json")))
    stmt = json.load(open(os.path.join(out, "conformance-statement.json")))
    d, parts, result = doc["trialSummary"]["durationMs"], 1, stmt["result"]
print(f"{k:<7} {parts:<6} {result:<9} {wall:10.2f} {d['minimum']:9} {d['median']:9} {d['p95']:9} {hwm:>13} {tm:>13} {rc:<9}")
# Where a session's time goes, from the lifecycle events the run recorded
# (offsets in ms): spawn -> stdin closed (subject start-up and every exchange,
# the harness's side included), stdin closed -> stdout closed (the subject
# shutting down after EOF), stdout closed -> group measured (the harness's
# kill, reap and /proc scan), group measured -> next spawn (harness gap).
import glob, statistics
phases = {"exchanges": [], "subject-exit": [], "kill+reap+measure": [], "gap": []}
for lc in glob.glob(os.path.join(out, "**", "lifecycle.jsonl"), recursive=True):
    sessions, order = {}, []
    for line in open(lc):
        e = json.loads(line)
        s = e["session"]
        if s not in sessions:
            sessions[s] = {}
            order.append(s)
        sessions[s].setdefault(e["event"], e["offsetMs"])
    for i, s in enumerate(order):
        ev = sessions[s]
        try:
            phases["exchanges"].append(ev["stdin-closed"] - ev["spawned"])
            phases["subject-exit"].append(ev["stdout-closed"] - ev["stdin-closed"])
            phases["kill+reap+measure"].append(ev["group-measured"] - ev["stdout-closed"])
            if i + 1 < len(order):
                phases["gap"].append(sessions[order[i + 1]]["spawned"] - ev["group-measured"])
        except KeyError:
            pass
if phases["exchanges"]:
    print("        per session (median ms over %d sessions): " % len(phases["exchanges"]) +
          ", ".join("%s %s" % (k, statistics.median(v)) for k, v in phases.items() if v))
PY
  rm -rf "$out"
done

if command -v hyperfine >/dev/null; then
  hyperfine --style basic --runs "$RUNS" --warmup 1 --prepare "rm -rf $TMP/h" \
    --export-json "$TMP/h.json" \
    "$BIN run --trials 1 -o $TMP/h -- $BIN serve --transport stdio" >/dev/null
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("whole process, --trials 1: median %.1f ms (min %.1f, max %.1f) over %d runs" % (r["median"]*1000, r["min"]*1000, r["max"]*1000, len(r["times"])))' "$TMP/h.json"
else
  echo "hyperfine not found: whole-process timing of --trials 1 skipped"
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
