#!/usr/bin/env bash
# Peak memory of mcpres itself against inputs that never end (issue 40,
# items 2-4: "peak memory stays under 64 MiB whatever the input").
#
# Each case runs the release binary and samples its own VmHWM (the kernel's
# high-water mark of its resident set) from /proc every 10 ms until it exits;
# the subject's memory is not counted. Cases:
#
#   files-from-zero     validate --files-from - < /dev/zero   (no line feed ever)
#   files-from-nul-line validate --files-from LIST            (one 16 MiB line of NUL)
#   stdio-bytes         profile run stdio-transport, a subject that opens, then
#                       writes one byte per write without end
#   stdio-lines         the same with one empty line per write
#   http-body           profile run streamable-http, every response an endless
#                       JSON body (no length, never closed)
#   http-chunked-events the same with an endless chunked event stream
#
#   bench/memory.sh          (MCPRES_BIN=path to use another binary)
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
  # peak NAME STDIN -- ARGS...: run, sample VmHWM, print one row.
  local name="$1" stdin="$2"; shift 3
  python3 - "$name" "$stdin" "$@" <<'PY'
import subprocess, sys, time
name, stdin, *cmd = sys.argv[1:]
t0 = time.monotonic()
with open(stdin, "rb") as i:
    p = subprocess.Popen(cmd, stdin=i, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    hwm = 0
    while p.poll() is None:
        try:
            for line in open(f"/proc/{p.pid}/status"):
                if line.startswith("VmHWM:"):
                    hwm = max(hwm, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.01)
print(f"{name:<22} peak {hwm / 1024:7.1f} MiB   exit {p.returncode}   {time.monotonic() - t0:6.1f} s")
PY
}

echo "binary: $BIN"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
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
