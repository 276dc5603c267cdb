#!/usr/bin/env bash
# Peak memory of mcpres itself against inputs that never end (issue 40,
# items 2-4: "peak memory stays under 64 MiB whatever the input").
#
# Each case runs the release binary once and reports its peak resident set
# (see `peak` below). A healthy one-check profile run is measured first, as
# the floor the floods are compared with. Cases:
#
#   files-from-zero     validate --files-from - < /dev/zero   (no line feed ever)
#   files-from-nul-line validate --files-from LIST            (one 16 MiB line of NUL)
#   stdio-bytes         profile run stdio-transport, a subject that opens, then
#                       writes one byte per write without end
#   stdio-lines         the same with one empty line per write
#   http-body           profile run streamable-http, every response an endless
#                       JSON body (no length, never closed)
#   http-chunked-events the same with an endless chunked event stream
#   report-N            report over N bundles (a page of 8.4 KB per bundle)
#   report-check-N      report --check of that page
#
#   bench/memory.sh          (MCPRES_BIN=path to use another binary)
#
# mcpres allocates with mimalloc, which keeps freed pages until the freeing
# thread allocates again; the producers therefore run with
# MIMALLOC_PURGE_DELAY=0 (they set it for themselves, src/main.rs), so the
# figures are the memory they hold. `MIMALLOC_PURGE_DELAY=10 bench/memory.sh`
# shows them with mimalloc's default instead.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${MCPRES_BIN:-}" ]; then cargo build --release --quiet; fi
BIN="$(realpath "${MCPRES_BIN:-${CARGO_TARGET_DIR:-target}/release/mcpres}")"
PY="${MCPRES_TEST_PYTHON:-python3}"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/mcpres-bench-memory.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
head -c $((16 << 20)) /dev/zero > "$TMP/nul-line"
printf '\n' >> "$TMP/nul-line"

peak() {
  # peak NAME STDIN -- ARGS...: run, print one row. The peak is the largest
  # resident set of the process or any child it waited for (getrusage
  # RUSAGE_CHILDREN): mcpres itself, the subjects here being small Python
  # programs.
  local name="$1" stdin="$2"; shift 3
  python3 - "$name" "$stdin" "$@" <<'PY'
import resource, subprocess, sys, time
name, stdin, *cmd = sys.argv[1:]
t0 = time.monotonic()
with open(stdin, "rb") as i:
    p = subprocess.run(cmd, stdin=i, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{name:<22} peak {peak:7.1f} MiB   exit {p.returncode}   {time.monotonic() - t0:6.1f} s")
PY
}

echo "binary: $BIN"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
peak baseline-stdio /dev/null -- "$BIN" profile run stdio-transport --checks released-message-framing \
  -o "$TMP/baseline" -- "$PY" tests/subjects/py_echo_server.py
peak files-from-zero /dev/zero -- "$BIN" validate --files-from -
peak files-from-nul-line /dev/null -- "$BIN" validate --files-from "$TMP/nul-line"
for mode in bytes lines; do
  peak "stdio-$mode" /dev/null -- "$BIN" profile run stdio-transport --checks released-message-framing \
    -o "$TMP/stdio-$mode" -- "$PY" tests/subjects/floods/open_then_flood.py --mode "$mode"
done
for mode in body chunked-events; do
  peak "http-$mode" /dev/null -- "$BIN" profile run streamable-http --checks keepalive \
    --http http://127.0.0.1:0/mcp -o "$TMP/http-$mode" -- "$PY" tests/subjects/floods/http_flood.py '{port}' "$mode"
done
# Item 11: a report page of many bundles, written and checked (hard links of
# one bundle file: the inputs cost no disk).
for n in 2100 10000; do
  mkdir -p "$TMP/report-$n"
  for i in $(seq 1 "$n"); do ln cli-tests/inputs/valid-bundle.json "$TMP/report-$n/b$i.json"; done
  peak "report-$n" /dev/null -- "$BIN" report "$TMP/report-$n" -o "$TMP/report-$n.html"
  peak "report-check-$n" /dev/null -- "$BIN" report --check "$TMP/report-$n.html" "$TMP/report-$n"
done
