#!/usr/bin/env bash
# How long an operational-resilience run takes (issue 35: every check on the
# reference server in under 3 minutes with the default workload on 2 cores),
# and what the load generator measured of itself: whole `mcpres profile run
# operational-resilience` processes against the reference server over stdio,
# with the built-in workload plus the reference server's declared limit
# (bundles/profiles/reference-workload.toml, `serve --max-in-flight 8 --rate-limit 100/1000
# --state-dir /var/tmp --downstream-env MCPRES_DOWNSTREAM_URL`; its other version is `mcpres`
# in PATH, this build's directory first), RUNS
# times (default 2), each timed, and as often over Streamable HTTP (the eight
# checks run there; `serve --transport http --port {port}`); then the
# generator's ceiling and the positive soak's latency from each run's
# measurement report.
#
#   bench/ops.sh                 (MCPRES_BIN=target/release/mcpres by default)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(realpath "${MCPRES_BIN:-target/release/mcpres}")"
RUNS="${RUNS:-2}"
export PATH="$(dirname "$BIN"):$PATH"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
SERVE=(serve --max-in-flight 8 --rate-limit 100/1000 --state-dir /var/tmp --downstream-env MCPRES_DOWNSTREAM_URL)
for i in $(seq 1 "$RUNS"); do
 for transport in stdio http; do
  start=$(date +%s.%N)
  if [ "$transport" = stdio ]; then
    "$BIN" profile run operational-resilience --workload bundles/profiles/reference-workload.toml \
      -o "$tmp/run$i-$transport" -- "$BIN" "${SERVE[@]}" >/dev/null 2>&1 || true
  else
    # Over Streamable HTTP: the eight process and leak checks (the other 18 not observed).
    "$BIN" profile run operational-resilience --workload bundles/profiles/reference-workload.toml \
      --http 'http://127.0.0.1:0/mcp' -o "$tmp/run$i-$transport" -- "$BIN" "${SERVE[@]}" \
      --transport http --port '{port}' >/dev/null 2>&1 || true
  fi
  end=$(date +%s.%N)
  echo -n "$transport: "
  python3 - "$tmp/run$i-$transport" "$(echo "$end - $start" | bc)" <<'PY'
import json, sys
d, secs = sys.argv[1], float(sys.argv[2])
run = json.load(open(f"{d}/run.json"))
m = json.load(open(f"{d}/artifacts/measurement.json"))
checks = run["checks"]
passed = sum(1 for c in checks if c["verdict"] == "PASS")
lat = m["latency"]
print(f"{len(checks)} checks ({passed} PASS) in {secs:.1f} s; generator ceiling "
      f"{m['generator']['ceiling']['ceilingPerS']}/s at concurrency {m['concurrency']}; "
      f"positive soak p50 {lat['medianUs']/1000:.2f} ms, p99 {lat['p99Us']/1000:.2f} ms over "
      f"{lat['judgedRequests']} judged requests; peak RSS {m['peakRssKib']} KiB")
PY
 done
done
