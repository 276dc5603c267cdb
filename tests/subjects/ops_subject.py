"""The operational test subject: a small stdio MCP server (Python 3 standard
library only) for `mcpres profile run operational-resilience`. Healthy by
default (the honest twin); each option switches on one operational defect:

  --slow-start-ms N      sleep N ms before reading anything (cold and warm start)
  --leak-kib-per-call K  keep K KiB more for every request served (memory)
  --die-after-malformed N  exit after the Nth line that is not JSON (flood)
  --child-every N        start a `sleep` child every Nth request, never reaped
  --listener-every N     open a listening loopback socket every Nth request
  --fd-every N           open /dev/null every Nth request, never closed (open files)
  --slow-answer-ms N     sleep N ms before each answer (latency)
  --daemon-leak-kib K    at start, leave a daemon (forked twice, its own session, so
                         no longer the subject's descendant) that keeps K KiB more
                         every 100 ms while the subject runs (memory, hidden)
  --max-line-bytes N     exit (status 4) on a line longer than N bytes (oversized)
  --ignore-eof           at stdin's end of file, keep running until a signal
                         (graceful shutdown)
  --ignore-sigterm       ignore SIGTERM (forced shutdown)
  --queue N              serve requests from a queue of N, 50 ms each, on one worker
                         thread; a request that finds the queue full is dropped,
                         never answered (bounded concurrency)
  --orphan               at start, leave a `sleep` in its own session that outlives
                         the subject (cleanup; and a crash does not reach it)
  --helper               at start, leave a `sleep` in the subject's own process group,
                         ended when the subject ends (the honest twin of --orphan:
                         a crash of the group takes it along)
  --random-tool-name     name its tool with a suffix drawn at each start (restart)
  --shuffle-tools        list three tools in an order drawn at each start (the honest
                         twin of --random-tool-name: the order is no declared state)
  --max-in-flight N      serve at most N `slow` tool calls at once (each on a thread of
                         its own, `delayMs` long); a request that comes while N are
                         running is refused at once with -32000 and data.retryAfterMs
                         (the honest twin of the limit checks)
  --no-retry-hint        with --max-in-flight: refuse without data.retryAfterMs
                         (retry after)
  --http-refusal         with --max-in-flight over HTTP: refuse with HTTP 503 and an
                         empty body, a Retry-After: 1 header the hint (none with
                         --no-retry-hint); with --rate-limit, HTTP 429 and a
                         Retry-After header
  --drop-over-limit      with --max-in-flight: drop a request over the limit, never
                         answered (overload rejection, queue saturation)
  --rate-limit N/MS      serve at most N requests (initialize excepted) in any span of
                         MS ms; one over it is refused at once with -32000 and
                         data.retryAfterMs (the honest twin of the rate-limit defects)
  --rate-drop            with --rate-limit: drop a request over it, never answered
                         (rate limiting)
  --rate-strict N        with --rate-limit: refuse once N requests are in the window,
                         fewer than the limit declared (rate limiting)
  --state-dir DIR        list a `store` tool writing {key, bytes} to a file in DIR (a
                         temporary file, then renamed); a failed write is answered
                         with isError and the system's reason (the honest twin of
                         the storage defects)
  --store-claims         with --state-dir: answer a failed write as stored (disk full,
                         permission failure)
  --store-crash          with --state-dir: exit (status 5) when a write fails
  --store-broken         with --state-dir: every write fails, fault or not
  --downstream-env VAR   list a `fetch` tool that POSTs to the URL in $VAR (2 s timeout);
                         a downstream failure is answered with isError and the reason
                         (the honest twin of the downstream defects)
  --downstream-lies      with --downstream-env: answer a failed fetch as a success
                         (downstream failure: a false success)
  --downstream-crash     with --downstream-env: exit (status 6) when a fetch fails
  --downstream-sticky    with --downstream-env: once a fetch fails, fail every later
                         one without calling (partial outage: never recovers)
  --downstream-breaker-ms N  with --downstream-env: once a fetch fails, fail fast for N
                         ms, then call again (a breaker that closes: the honest twin)
  --lock-file PATH       hold an exclusive lock on PATH while running; exit (status 7)
                         at start when another process holds it (two versions that
                         cannot run at once: rolling version skew)
  --only-revision REV    answer every opening with protocol revision REV (and list only
                         it), whatever was asked (rolling version skew)
  --version V            the version this subject names itself (default 0.1.0)
  --drop-when-blocked    write stdout without waiting: an answer the full pipe does not
                         take at once is dropped (backpressure); over HTTP, what of a
                         response the connection's full send buffer does not take
  --describe-tools N     give every listed tool a description of N bytes (large tool
                         lists: backpressure over HTTP needs megabytes of answers)
  --hang-after-cancel    once a `notifications/cancelled` arrives, answer nothing
                         more (timeout)
  --stall-on-duplicate-id  once a request id comes a second time, answer nothing
                         more (duplicate delivery)
  --http-port N          serve Streamable HTTP (JSON responses) on 127.0.0.1:N, `/mcp`,
                         instead of stdio; the process options above apply as they do
                         over stdio (start delay, SIGTERM ignored, orphan, helper), and
                         --die-after-malformed and --max-line-bytes to request bodies;
                         --queue N holds N requests at once, 50 ms each, and drops
                         (never answers) one that comes while N are held

Both revisions: `initialize` (2025-11-25), `server/discover` (2026-07-28),
`ping`, `tools/list`; an unknown method gets -32601, a line that is not JSON
-32700 with a null id. Stdin EOF exits 0.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--slow-start-ms", type=int, default=0)
p.add_argument("--leak-kib-per-call", type=int, default=0)
p.add_argument("--die-after-malformed", type=int, default=0)
p.add_argument("--child-every", type=int, default=0)
p.add_argument("--listener-every", type=int, default=0)
p.add_argument("--slow-answer-ms", type=int, default=0)
p.add_argument("--fd-every", type=int, default=0)
p.add_argument("--daemon-leak-kib", type=int, default=0)
p.add_argument("--max-line-bytes", type=int, default=0)
p.add_argument("--ignore-eof", action="store_true")
p.add_argument("--ignore-sigterm", action="store_true")
p.add_argument("--orphan", action="store_true")
p.add_argument("--queue", type=int, default=0)
p.add_argument("--helper", action="store_true")
p.add_argument("--max-in-flight", type=int, default=0)
p.add_argument("--no-retry-hint", action="store_true")
p.add_argument("--http-refusal", action="store_true")
p.add_argument("--drop-over-limit", action="store_true")
p.add_argument("--random-tool-name", action="store_true")
p.add_argument("--shuffle-tools", action="store_true")
p.add_argument("--rate-limit", default="")
p.add_argument("--rate-drop", action="store_true")
p.add_argument("--rate-strict", type=int, default=0)
p.add_argument("--state-dir", default="")
p.add_argument("--store-claims", action="store_true")
p.add_argument("--store-crash", action="store_true")
p.add_argument("--store-broken", action="store_true")
p.add_argument("--drop-when-blocked", action="store_true")
p.add_argument("--describe-tools", type=int, default=0)
p.add_argument("--downstream-env", default="")
p.add_argument("--lock-file", default="")
p.add_argument("--only-revision", default="")
p.add_argument("--version", default="0.1.0")
p.add_argument("--downstream-lies", action="store_true")
p.add_argument("--downstream-crash", action="store_true")
p.add_argument("--downstream-sticky", action="store_true")
p.add_argument("--downstream-breaker-ms", type=int, default=0)
p.add_argument("--hang-after-cancel", action="store_true")
p.add_argument("--stall-on-duplicate-id", action="store_true")
p.add_argument("--http-port", type=int, default=0)
a = p.parse_args()

if a.ignore_sigterm:
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)

if a.orphan:
    subprocess.Popen(["sleep", "300"], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

helper = None
if a.helper:
    import signal

    helper = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def end_helper(*_):
        helper.terminate()
        helper.wait()
        sys.exit(0)

    signal.signal(signal.SIGTERM, end_helper)

if a.daemon_leak_kib:
    import os

    parent = os.getpid()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            held = []
            # Until the subject is gone.
            while True:
                try:
                    os.kill(parent, 0)
                except OSError:
                    os._exit(0)
                held.append(bytearray(b"\x5a" * (a.daemon_leak_kib * 1024)))
                time.sleep(0.1)
        os._exit(0)
    os.wait()

if a.slow_start_ms:
    time.sleep(a.slow_start_ms / 1000)

if a.lock_file:
    import fcntl

    lock = open(a.lock_file, "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        sys.stderr.write("another process holds " + a.lock_file + "\n")
        sys.exit(7)
    import atexit
    import os

    # The holder removes its lock file when it exits (nothing left behind).
    atexit.register(lambda: os.path.exists(a.lock_file) and os.remove(a.lock_file))

INFO = {"name": "mcpres-ops-subject", "version": a.version}
TOOLS = [{"name": "echo", "inputSchema": {"type": "object"}},
         {"name": "slow", "inputSchema": {"type": "object"}}]
if a.random_tool_name:
    import secrets

    TOOLS = [{"name": "echo-" + secrets.token_hex(4), "inputSchema": {"type": "object"}}]
if a.shuffle_tools:
    import random

    TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "add", "time")]
    random.shuffle(TOOLS)
if a.state_dir:
    TOOLS = TOOLS + [{"name": "store", "inputSchema": {"type": "object"}}]
if a.downstream_env:
    TOOLS = TOOLS + [{"name": "fetch", "inputSchema": {"type": "object"}}]
if a.describe_tools:
    TOOLS = [dict(t, description="d" * a.describe_tools) for t in TOOLS]
# When the last fetch failed (monotonic seconds), for --downstream-sticky and
# --downstream-breaker-ms.
fetch_failed_at = [None]


def fetch():
    import os
    import time
    import urllib.error
    import urllib.request

    failed = fetch_failed_at[0]
    if failed is not None and (a.downstream_sticky or (
            a.downstream_breaker_ms and time.monotonic() - failed < a.downstream_breaker_ms / 1000)):
        return {"content": [{"type": "text", "text": "downstream failing (cached)"}], "isError": True}
    try:
        req = urllib.request.Request(os.environ.get(a.downstream_env, ""), data=b"{}", method="POST")
        # Never through a proxy: the downstream is on loopback.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(req, timeout=2) as r:
            body = r.read().decode("utf-8", "replace")
        fetch_failed_at[0] = None
        return {"content": [{"type": "text", "text": body}]}
    except (urllib.error.URLError, OSError, ValueError) as e:
        fetch_failed_at[0] = time.monotonic()
        if a.downstream_crash:
            # The whole process (over HTTP a handler thread's sys.exit ends the thread).
            os._exit(6)
        if a.downstream_lies:
            return {"content": [{"type": "text", "text": "{\"ok\":true}"}]}
        return {"content": [{"type": "text", "text": "downstream failed: " + str(e)}], "isError": True}
kept = []
children = []
listeners = []
served = 0
malformed = 0
seen_ids = set()
deaf = False


import threading

out_lock = threading.Lock()
running = [0]


if a.drop_when_blocked:
    import os

    os.set_blocking(1, False)


# Over HTTP, the answer to the request a handler thread is serving goes into its box.
box = threading.local()


def send(msg):
    if getattr(box, "collect", False):
        box.reply = msg
        return
    with out_lock:
        if a.drop_when_blocked:
            data = (json.dumps(msg) + "\n").encode()
            try:
                n = os.write(1, data)
            except BlockingIOError:
                return
            while n < len(data):
                try:
                    n += os.write(1, data[n:])
                except BlockingIOError:
                    time.sleep(0.001)
            return
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def slow(mid, delay_ms):
    time.sleep(delay_ms / 1000)
    with out_lock:
        running[0] -= 1
    send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "done"}]}})


def answer(msg):
    method, mid = msg["method"], msg["id"]
    params = msg.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": a.only_revision or params.get("protocolVersion", "2025-11-25"),
                  "capabilities": {"tools": {}}, "serverInfo": INFO}
    elif method == "server/discover":
        result = {"supportedVersions": [a.only_revision] if a.only_revision else ["2025-11-25", "2026-07-28"],
                  "capabilities": {"tools": {}}, "serverInfo": INFO, "resultType": "complete"}
    elif method == "ping":
        result = {}
    elif method == "tools/call" and (params.get("name") == "slow"):
        delay = int((params.get("arguments") or {}).get("delayMs", 1000))
        with out_lock:
            running[0] += 1
        threading.Thread(target=slow, args=(mid, delay), daemon=True).start()
        return
    elif method == "tools/call" and a.state_dir and params.get("name") == "store":
        import os

        args = params.get("arguments") or {}
        key = str(args.get("key", "k"))
        tmp = os.path.join(a.state_dir, "." + key + ".tmp")
        try:
            if a.store_broken:
                raise OSError("this store never works")
            with open(tmp, "wb") as f:
                f.write(b"x" * int(args.get("bytes", 16)))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, os.path.join(a.state_dir, key))
            result = {"content": [{"type": "text", "text": "stored " + key}]}
        except OSError as e:
            try:
                os.remove(tmp)
            except OSError:
                pass
            if a.store_crash:
                # The whole process, from whichever thread serves the call (over HTTP a
                # handler's thread, where SystemExit would end only that thread).
                sys.stdout.flush()
                os._exit(5)
            if a.store_claims:
                result = {"content": [{"type": "text", "text": "stored " + key}]}
            else:
                result = {"content": [{"type": "text", "text": "could not store: " + str(e)}],
                          "isError": True}
    elif method == "tools/call" and a.downstream_env and params.get("name") == "fetch":
        result = fetch()
    elif method == "tools/list":
        result = {"tools": TOOLS}
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "method not found"}})
        return
    send({"jsonrpc": "2.0", "id": mid, "result": result})


def on_served():
    """What serving one request costs with the defects switched on."""
    global served
    with out_lock:
        served += 1
        n = served
    if a.leak_kib_per_call:
        kept.append(bytearray(b"\x5a" * (a.leak_kib_per_call * 1024)))
    if a.child_every and n % a.child_every == 0:
        children.append(subprocess.Popen(["sleep", "600"]))
    if a.fd_every and n % a.fd_every == 0:
        kept.append(open("/dev/null", "rb"))
    if a.listener_every and n % a.listener_every == 0:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        listeners.append(s)
    if a.slow_answer_ms:
        time.sleep(a.slow_answer_ms / 1000)


rate = None
if a.rate_limit:
    n, ms = a.rate_limit.split("/")
    rate_limit = a.rate_strict or int(n)
    rate_window = int(ms) / 1000
    rate = []

if a.http_port:
    import os
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def status_only(self, status, retry_after):
            # Turned away at the HTTP level: a status (and a hint), no JSON-RPC body.
            self.send_response(status)
            if retry_after is not None:
                self.send_header("Retry-After", retry_after)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            global malformed, deaf
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if a.max_line_bytes and len(body) > a.max_line_bytes:
                os._exit(4)
            try:
                msg = json.loads(body)
            except ValueError:
                msg = None
                with out_lock:
                    malformed += 1
                    if a.die_after_malformed and malformed >= a.die_after_malformed:
                        os._exit(3)
            if not isinstance(msg, dict) or "method" not in msg:
                out = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
            elif "id" not in msg:
                if a.hang_after_cancel and msg["method"] == "notifications/cancelled":
                    deaf = True
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            else:
                if a.stall_on_duplicate_id:
                    key = json.dumps(msg["id"])
                    with out_lock:
                        if key in seen_ids:
                            deaf = True
                        seen_ids.add(key)
                if deaf:
                    # Answers nothing more: the request is held until the client leaves.
                    time.sleep(3600)
                    return
                queued = a.queue and msg["method"] not in ("initialize", "server/discover")
                if queued:
                    with out_lock:
                        full = busy[0] >= a.queue
                        if not full:
                            busy[0] += 1
                    if full:
                        # Dropped: never answered.
                        time.sleep(3600)
                        return
                    time.sleep(0.05)
                opening = msg["method"] in ("initialize", "server/discover")
                refusal = None
                if rate is not None and msg["method"] != "initialize":
                    # The limit as over stdio: at most N requests in any span of the window.
                    with out_lock:
                        now = time.monotonic()
                        while rate and now - rate[0] >= rate_window:
                            rate.pop(0)
                        over = len(rate) >= rate_limit
                        if not over:
                            rate.append(now)
                        wait_ms = max(1, int((rate_window - (now - rate[0])) * 1000)) if over else 0
                    if over:
                        if a.rate_drop:
                            # Dropped: never answered.
                            time.sleep(3600)
                            return
                        if a.http_refusal:
                            self.status_only(429, str(-(-wait_ms // 1000)))
                            return
                        refusal = {"jsonrpc": "2.0", "id": msg["id"], "error": {
                            "code": -32000, "message": "rate limited", "data": {"retryAfterMs": wait_ms}}}
                params = msg.get("params") or {}
                holds = msg["method"] == "tools/call" and params.get("name") == "slow"
                if refusal is None and a.max_in_flight and not opening:
                    # The limit as over stdio: any request while N `slow` calls run is
                    # over it; a `slow` call takes its place as it is admitted.
                    with out_lock:
                        full = running[0] >= a.max_in_flight
                        if holds and not full:
                            running[0] += 1
                    if full:
                        if a.drop_over_limit:
                            # Dropped: never answered.
                            time.sleep(3600)
                            return
                        if a.http_refusal:
                            self.status_only(503, None if a.no_retry_hint else "1")
                            return
                        err = {"code": -32000, "message": "overloaded"}
                        if not a.no_retry_hint:
                            err["data"] = {"retryAfterMs": 100}
                        refusal = {"jsonrpc": "2.0", "id": msg["id"], "error": err}
                if refusal is not None:
                    out = refusal
                elif holds:
                    # Held on this handler's thread for `delayMs`, its place kept.
                    if not a.max_in_flight:
                        with out_lock:
                            running[0] += 1
                    on_served()
                    time.sleep(int((params.get("arguments") or {}).get("delayMs", 1000)) / 1000)
                    with out_lock:
                        running[0] -= 1
                    out = {"jsonrpc": "2.0", "id": msg["id"],
                           "result": {"content": [{"type": "text", "text": "done"}]}}
                else:
                    if not opening:
                        on_served()
                    box.collect, box.reply = True, None
                    answer(msg)
                    box.collect = False
                    out = box.reply or {"jsonrpc": "2.0", "id": msg["id"],
                                        "error": {"code": -32603, "message": "no answer over HTTP"}}
                if queued:
                    with out_lock:
                        busy[0] -= 1
            data = json.dumps(out).encode()
            if a.drop_when_blocked:
                # Written without waiting: what the connection's full send buffer
                # does not take at once is dropped (the connection stays open).
                whole = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(data) + data
                sock = self.connection
                sock.setblocking(False)
                try:
                    sock.send(whole)
                except BlockingIOError:
                    pass
                sock.setblocking(True)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    busy = [0]
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer(("127.0.0.1", a.http_port), Handler).serve_forever()

work = None
if a.queue:
    import queue
    import threading

    work = queue.Queue(maxsize=a.queue)

    def worker():
        while True:
            m = work.get()
            time.sleep(0.05)
            answer(m)

    threading.Thread(target=worker, daemon=True).start()

for raw in sys.stdin.buffer:
    if a.max_line_bytes and len(raw) > a.max_line_bytes:
        sys.exit(4)
    try:
        msg = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        malformed += 1
        if a.die_after_malformed and malformed >= a.die_after_malformed:
            sys.exit(3)
        send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
        continue
    if deaf:
        continue
    if not isinstance(msg, dict) or "method" not in msg:
        continue
    if "id" not in msg:
        if a.hang_after_cancel and msg["method"] == "notifications/cancelled":
            deaf = True
        continue
    if a.stall_on_duplicate_id:
        key = json.dumps(msg["id"])
        if key in seen_ids:
            deaf = True
            continue
        seen_ids.add(key)
    if rate is not None and msg["method"] != "initialize":
        now = time.monotonic()
        while rate and now - rate[0] >= rate_window:
            rate.pop(0)
        if len(rate) >= rate_limit:
            if a.rate_drop:
                continue
            wait_ms = max(1, int((rate_window - (now - rate[0])) * 1000))
            send({"jsonrpc": "2.0", "id": msg["id"], "error": {
                "code": -32000, "message": "rate limited", "data": {"retryAfterMs": wait_ms}}})
            continue
        rate.append(now)
    if a.max_in_flight:
        with out_lock:
            full = running[0] >= a.max_in_flight
        if full:
            if a.drop_over_limit:
                continue
            err = {"code": -32000, "message": "overloaded"}
            if not a.no_retry_hint:
                err["data"] = {"retryAfterMs": 100}
            send({"jsonrpc": "2.0", "id": msg["id"], "error": err})
            continue
    on_served()
    if work is not None:
        try:
            work.put_nowait(msg)
        except queue.Full:
            pass
        continue
    answer(msg)

if helper is not None:
    helper.terminate()
    helper.wait()

if a.ignore_eof:
    while True:
        time.sleep(1)
