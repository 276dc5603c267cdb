"""The profile test subject: a small stdio MCP server (Python 3 standard
library only) for the `mcpres profile run` checks of
mcp-res/stdio-transport/v1 and mcp-res/protocol-revision/v1.

Healthy by default, for both protocol revisions at once:

  2025-11-25  `initialize` negotiates the version (an unknown one gets
              2025-11-25 back); requests before it are refused, a second one
              too; `ping` answers {}.
  2026-07-28  stateless: every request carries
              _meta["io.modelcontextprotocol/protocolVersion"] and
              _meta["io.modelcontextprotocol/clientCapabilities"]; an
              unsupported version gets -32022 with data.supported; every
              result has resultType "complete"; `server/discover` describes
              the server; `ping` is -32601.

Framing: newline-delimited JSON on stdin/stdout, read in chunks; a line that
is not strict UTF-8 or not JSON gets -32700 (id null); a line over 4 MiB gets
-32600 and is discarded without being buffered whole; batches, bad ids and
requests without a method get -32600; responses and notifications from the
client are never answered. Diagnostics go to stderr only. Stdin EOF exits 0;
SIGTERM and SIGINT exit at once (128 + signal number).

Options:
  --with-child         start `sleep 30` as a plain child; kill and reap it on exit
  --child-pidfile PATH write the pid of every child started (one per line), so a
                       test can clean up after --break orphan-child
  --close-on-long-line a line over 4 MiB ends the process cleanly (exit 0, the
                       other bounded ending) instead of being refused
  --break NAME         switch on one defect (repeatable); see BREAKS
"""

import os
import signal

# Until the options are read, SIGTERM and SIGINT already end the process at once.
signal.signal(signal.SIGTERM, lambda signum, _frame: os._exit(128 + signum))
signal.signal(signal.SIGINT, lambda signum, _frame: os._exit(128 + signum))

import argparse  # noqa: E402
import fcntl  # noqa: E402
import json  # noqa: E402
import select  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

REV_2025 = "2025-11-25"
REV_2026 = "2026-07-28"
SUPPORTED = [REV_2025, REV_2026]
PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"
SESSION = "io.modelcontextprotocol/sessionId"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {"name": "mcpres-profile-subject", "version": "0.1.0"}
INSTRUCTIONS = "A test subject for mcpres profile checks: tools echo and add."
CAPABILITIES = {"tools": {"listChanged": False}}
MAX_LINE = 4 * 1024 * 1024
CRASH_LINE = 1024 * 1024
CHUNK = 64 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
UNSUPPORTED_VERSION = -32022
# The unsupported version an older mcpres always asked for (refuse-known-probe).
LEARNT_PROBE = "1999-01-01"

DIALECT = "https://json-schema.org/draft/2020-12/schema"
TOOLS = [
    {
        "name": "echo",
        "description": "Return the text unchanged.",
        "inputSchema": {
            "$schema": DIALECT,
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "$schema": DIALECT,
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
]

# Each break switches on exactly one defect; the check it makes FAIL is named.
BREAKS = {
    # mcp-res/stdio-transport/v1
    "multiline-json": "released-message-framing: join lines until a JSON value parses",
    "stdout-banner": "stdout-protocol-purity: print `server starting` on stdout at startup",
    "refuse-ping": "stdout-protocol-purity NOT_OBSERVED (2025-11-25): ping is refused with -32603, so the valid twin is refused",
    "noisy-after-3": "stdout-protocol-purity: print a debug line on stdout before each answer from its fourth request on",
    "protocol-on-stderr": "stderr-diagnostics: write the -32700 response to stderr",
    "slow-start": "startup-timeout: sleep 3 s before reading stdin",
    "ignore-sigterm-idle": "startup-timeout: ignore SIGTERM until the first input arrives",
    "unsolicited-notification": "silent-process: send notifications/message at startup",
    "late-stderr-notice": "honest: write a start-up notice on stderr only after answering its first message (stdout stays protocol only)",
    "accept-invalid-utf8": "malformed-output NOT_OBSERVED: decode stdin with errors=replace",
    "dispatch-before-newline": "partial-line: answer a buffered JSON object before its LF",
    "unbounded-lines": "oversized-line NOT_OBSERVED: no 4 MiB line limit (MCP sets none)",
    "stay-after-eof": "process-exit: keep running after stdin EOF",
    "ignore-sigterm-after-open": "process-exit: ignore SIGTERM after initialize/server/discover",
    "ignore-sigterm-after-requests": "process-exit: ignore SIGTERM once 3 requests were served",
    "ignore-sigint-when-idle": "interruption: SIGINT ends it only within 100 ms of handling a message",
    "slow-stop": "honest: on SIGTERM or SIGINT, take 3 s (past the runner's first grace) to clean up, then exit",
    "crash-on-long-line": "oversized-line: die with a traceback on a line over 1 MiB",
    "rewrite-self": "identity: rewrite its own file on every start",
    "orphan-child": "child-tree-cleanup: start `sleep 30` in a new session and leave it",
    "drop-when-blocked": "backpressure: non-blocking stdout, drop responses on EAGAIN",
    "batch-accepted": "concurrent-requests: answer batch elements one by one",
    "hang-on-batch": "concurrent-requests: on a batch, stop reading and answering while still running with stdout open (silence, not an exit)",
    "exit-on-batch": "concurrent-requests: on a batch, exit 0 without answering (an exit, not silence)",
    "ignore-sigint": "interruption NOT_OBSERVED: ignore SIGINT (no MUST asks a server to exit on it)",
    "no-init-required": "no-process/connection-as-conversation: serve requests without initialize or _meta",
    "answer-notifications": "discovery-versus-legacy-initialization: answer every notification",
    # mcp-res/protocol-revision/v1
    "revision-optional": "explicit-protocol-revision: a missing protocol version is accepted",
    "advertise-unknown": "supported-version-advertisement: counter-offer 2099-01-01, -32022 without data.supported",
    "echo-version": "unsupported-version-failure: accept any version (echo it)",
    "refuse-known-probe": "unsupported-version-failure: refuse only 1999-01-01 (a fixed probe learnt), serve any other unknown version",
    "discover-hang": "modern-legacy-auto-behavior: never answer server/discover",
    "reinit-accepted": "stdio-backward-compatibility NOT_OBSERVED: a second initialize is answered",
    "null-id-accepted": "request-identity-metadata: a request with id null is answered",
    "id-stringified": "result-identity-metadata: integer ids answered as strings",
    "undeclared-served": "capability-declaration: answer prompts/list (and the other undeclared capabilities' methods) though only tools is declared",
    "any-method-accepted": "extension-declaration: answer any method starting with io. with {}",
    "no-arg-validation": "json-schema-dialect-identity: tool arguments are not validated",
    "round-ids": "safe-integer-constraints: integer ids go through a float",
    "answer-responses": "interleaved-unrelated-requests: reply to response objects with an error",
    "sticky-version": "no-connection-as-conversation: after one valid request, _meta versions are ignored",
    "capabilities-optional": "stateless-request-metadata: missing clientCapabilities accepted",
    "discover-accepts-any-params": "server-discover: server/discover answered whatever its params",
    "require-session": "no-session-id-assumption: refuse requests carrying a sessionId",
    "no-result-type": "required-result-type: results carry no resultType",
    "small-lines": "oversized-line: a 64 KiB line limit (the 256 KiB request is refused)",
    "torn-on-sigint": "interruption: on SIGINT, write half a JSON line to stdout and exit",
    "legacy-version-changed": "stdio-backward-compatibility: initialize is always answered with 2024-11-05",
    # Behaviours the specification allows or leaves open, and adversaries
    # that must not be credited (tests/profile_verdicts.rs): none makes a
    # check FAIL.
    "tools-fail": "json-schema-dialect-identity NOT_OBSERVED: every tools/call answers isError \"internal failure\"",
    "legacy-only": "modern-legacy-auto-behavior NOT_OBSERVED (2025-11-25): server/discover is -32601",
    "discover-then-no-initialize": "modern-legacy-auto-behavior PASS: initialize after server/discover on the same process is -32022",
    "union-tools-only": "json-schema-dialect-identity PASS: the only tool takes a required [\"boolean\",\"string\"] argument",
    "version-error-for-all": "unsupported-version-failure NOT_OBSERVED (2026-07-28): every invalid _meta gets -32022",
    "silent-parse-errors": "request-identity-metadata PASS: an unparseable line is dropped without an answer",
    "silent-to-the-unusual": "released-message-framing, startup-timeout, silent-process, concurrent-requests, discovery-versus-legacy-initialization NOT_OBSERVED: every parse error and every refusal (an unknown method, a request before initialize, a batch) is dropped without an answer",
}

# The tool of union-tools-only: a required argument with a type list.
UNION_TOOL = {
    "name": "flag",
    "description": "Echo a flag given as a boolean or a string.",
    "inputSchema": {
        "$schema": DIALECT,
        "type": "object",
        "properties": {"v": {"type": ["boolean", "string"]}},
        "required": ["v"],
    },
}

# What undeclared-served answers: the methods of every capability the subject
# does not declare.
UNDECLARED = {
    "prompts/list": {"prompts": []},
    "resources/list": {"resources": []},
    "resources/templates/list": {"resourceTemplates": []},
    "logging/setLevel": {},
    "completion/complete": {"completion": {"values": []}},
}

NO_ANSWER = object()
MISSING = object()


class Refusal(Exception):
    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def diag(text):
    try:
        os.write(2, ("profile_subject: " + text + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def reject_constant(name):
    raise ValueError("not JSON: " + name)


def loads(text):
    return json.loads(text, parse_constant=reject_constant)


def valid_id(value):
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class Subject:
    def __init__(self, breaks, with_child, pidfile, close_on_long_line=False):
        self.breaks = set(breaks)
        self.close_on_long_line = close_on_long_line
        self.served = 0  # requests answered (ignore-sigterm-after-requests)
        self.last_message = 0.0  # when the last message was handled (ignore-sigint-when-idle)
        self.pidfile = pidfile
        self.child = None  # the --with-child process, killed on exit
        self.initialized = False  # a 2025-11-25 initialize was answered
        self.version_seen = False  # a 2026-07-28 request passed the version check
        self.discovered = False  # server/discover was answered
        self.max_line = 64 * 1024 if self.broken("small-lines") else MAX_LINE
        self.pending = ""  # multiline-json: lines joined so far
        self.skip_line = False  # dispatch-before-newline: this line was answered already
        self.got_input = False
        self.with_child = with_child

    def broken(self, name):
        return name in self.breaks

    # ---- process life ----------------------------------------------------

    def start(self):
        if self.broken("rewrite-self"):
            # A new trailing comment on every start: the file never has the
            # same bytes twice.
            path = os.path.abspath(__file__)
            with open(path, "rb") as f:
                text = f.read()
            keep = text.split(b"\n# rewritten ", 1)[0].rstrip(b"\n")
            # Written beside and renamed over it: a start of another copy
            # (checks run at once) never reads a half-written file.
            tmp = "%s.%d.tmp" % (path, os.getpid())
            with open(tmp, "wb") as f:
                f.write(keep + b"\n# rewritten " + os.urandom(8).hex().encode() + b"\n")
            os.replace(tmp, path)
        sigint = signal.SIG_IGN if self.broken("ignore-sigint") else self.on_signal
        if self.broken("ignore-sigint-when-idle"):
            sigint = self.on_sigint_when_busy
        signal.signal(signal.SIGINT, sigint)
        sigterm = signal.SIG_IGN if self.broken("ignore-sigterm-idle") else self.on_signal
        signal.signal(signal.SIGTERM, sigterm)
        if self.broken("drop-when-blocked"):
            flags = fcntl.fcntl(1, fcntl.F_GETFL)
            fcntl.fcntl(1, fcntl.F_SETFL, flags | os.O_NONBLOCK)
            try:  # a small pipe makes the full-pipe case come sooner
                fcntl.fcntl(1, fcntl.F_SETPIPE_SZ, 4096)
            except (OSError, AttributeError):
                pass
        if self.with_child:
            self.child = self.spawn_sleeper(new_session=False)
        if self.broken("orphan-child"):
            self.spawn_sleeper(new_session=True)
        diag("ready; breaks: " + (",".join(sorted(self.breaks)) or "none"))
        if self.broken("stdout-banner"):
            self.write(1, b"server starting\n")
        if self.broken("unsolicited-notification"):
            self.send({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": "hi"}})
        if self.broken("slow-start"):
            time.sleep(3)

    def spawn_sleeper(self, new_session):
        child = subprocess.Popen(
            ["sleep", "30"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=new_session,
        )
        diag("started child pid %d%s" % (child.pid, " in a new session" if new_session else ""))
        if self.pidfile:
            with open(self.pidfile, "a", encoding="ascii") as f:
                f.write("%d\n" % child.pid)
        return child

    def reap_child(self):
        if self.child is not None:
            try:
                self.child.kill()
            except OSError:
                pass
            self.child.wait()
            self.child = None

    def on_sigint_when_busy(self, signum, frame):
        if time.monotonic() - self.last_message < 0.1:
            self.on_signal(signum, frame)
        diag("SIGINT ignored: idle")

    def on_signal(self, signum, _frame):
        if signum == signal.SIGINT and self.broken("torn-on-sigint"):
            try:
                os.write(1, b'{"jsonrpc":"2.0","method":"notifications/mess')
            except OSError:
                pass
        if self.broken("slow-stop"):
            time.sleep(3)
        self.reap_child()
        os._exit(128 + signum)

    def opened(self):
        """initialize or server/discover was answered."""
        if self.broken("ignore-sigterm-after-open"):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def at_eof(self):
        diag("stdin closed")
        if self.broken("stay-after-eof"):
            while True:
                signal.pause()
        self.reap_child()
        os._exit(0)

    # ---- output ------------------------------------------------------------

    def write(self, fd, data):
        view = memoryview(data)
        while view:
            try:
                n = os.write(fd, view)
            except BlockingIOError:
                if len(view) == len(data):
                    return  # drop-when-blocked: nothing of it went out; drop it
                select.select([], [fd], [])
                continue
            except BrokenPipeError:
                diag("stdout closed by the client")
                self.reap_child()
                os._exit(1)
            view = view[n:]

    def send(self, obj, fd=1):
        self.write(fd, (json.dumps(obj, separators=(",", ":")) + "\n").encode("ascii"))
        if fd == 1 and self.broken("late-stderr-notice") and not getattr(self, "noticed", False):
            self.noticed = True
            diag("listening (a late start-up notice)")

    def out_id(self, rid):
        if self.broken("id-stringified") and isinstance(rid, int) and not isinstance(rid, bool):
            return str(rid)
        return rid

    def error(self, rid, code, message, data=None, fd=1):
        if self.broken("silent-to-the-unusual"):
            diag("refused without an answer: %s" % message)
            return
        err = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        self.send({"jsonrpc": "2.0", "id": self.out_id(rid), "error": err}, fd)

    def parse_error(self):
        diag("a line is not UTF-8 JSON")
        if self.broken("silent-parse-errors") or self.broken("silent-to-the-unusual"):
            return
        fd = 2 if self.broken("protocol-on-stderr") else 1
        self.error(None, PARSE_ERROR, "Parse error", fd=fd)

    # ---- input -------------------------------------------------------------

    def run(self):
        buf = bytearray()
        scanned = 0  # buf[:scanned] holds no LF
        discarding = False  # inside a line over the limit
        while True:
            chunk = os.read(0, CHUNK)
            if not chunk:
                if buf.strip():
                    diag("an unterminated last line was dropped")
                self.at_eof()
            if not self.got_input:
                self.got_input = True
                if self.broken("ignore-sigterm-idle"):
                    signal.signal(signal.SIGTERM, self.on_signal)
            if discarding:
                nl = chunk.find(b"\n")
                if nl < 0:
                    continue
                chunk = chunk[nl + 1:]
                discarding = False
            buf += chunk
            start = 0
            while True:
                nl = buf.find(b"\n", max(start, scanned))
                if nl < 0:
                    break
                line = bytes(buf[start:nl])
                start = scanned = nl + 1
                if self.skip_line:
                    self.skip_line = False
                elif len(line) > self.max_line and not self.broken("unbounded-lines"):
                    self.too_long()
                else:
                    self.handle_line(line)
            del buf[:start]
            scanned = len(buf)
            if len(buf) > CRASH_LINE and self.broken("crash-on-long-line"):
                raise RuntimeError("line of %d bytes and growing" % len(buf))
            if len(buf) > self.max_line and not self.broken("unbounded-lines"):
                self.too_long()
                buf.clear()
                scanned = 0
                discarding = True
            elif buf and self.broken("dispatch-before-newline") and not self.skip_line:
                self.dispatch_early(bytes(buf))

    def too_long(self):
        if self.close_on_long_line:
            diag("a line over %d bytes: closing" % self.max_line)
            self.reap_child()
            os._exit(0)
        diag("a line over %d bytes was discarded" % self.max_line)
        self.skip_line = False
        self.error(None, INVALID_REQUEST, "line too long")

    def dispatch_early(self, data):
        if not data.rstrip().endswith((b"}", b"]")):
            return
        try:
            msg = loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            return
        self.skip_line = True
        self.handle_message(msg)

    def handle_line(self, line):
        if not line.strip(b" \t\r"):
            return
        errors = "replace" if self.broken("accept-invalid-utf8") else "strict"
        try:
            text = line.decode("utf-8", errors)
        except UnicodeDecodeError:
            self.parse_error()
            return
        try:
            msg = self.parse(text)
        except (ValueError, RecursionError):
            self.parse_error()
            return
        if msg is not NO_ANSWER:
            self.handle_message(msg)

    def parse(self, text):
        if not self.broken("multiline-json"):
            return loads(text)
        if self.pending:
            candidate = self.pending + "\n" + text
            try:
                msg = loads(candidate)
                self.pending = ""
                return msg
            except ValueError:
                pass
            try:
                msg = loads(text)
            except ValueError:
                if len(candidate) > MAX_LINE:
                    self.pending = ""
                    raise
                self.pending = candidate
                return NO_ANSWER
            self.pending = ""
            self.parse_error()  # the fragments that never became a value
            return msg
        try:
            return loads(text)
        except ValueError:
            self.pending = text
            return NO_ANSWER

    # ---- JSON-RPC ----------------------------------------------------------

    def handle_message(self, msg):
        self.last_message = time.monotonic()
        if isinstance(msg, list):
            if self.broken("hang-on-batch"):
                while True:
                    time.sleep(3600)
            if self.broken("exit-on-batch"):
                os._exit(0)
            if self.broken("batch-accepted") and msg:
                for element in msg:
                    self.handle_message(element)
                return
            self.error(None, INVALID_REQUEST, "batches are not supported")
            return
        if not isinstance(msg, dict):
            self.error(None, INVALID_REQUEST, "a message is a JSON object")
            return
        rid = msg.get("id")
        echo_id = rid if valid_id(rid) else None
        if msg.get("jsonrpc") != "2.0":
            self.error(echo_id, INVALID_REQUEST, "jsonrpc must be \"2.0\"")
            return
        if "method" not in msg:
            if "result" in msg or "error" in msg:
                if self.broken("answer-responses"):
                    self.error(echo_id, INVALID_REQUEST, "unexpected response")
                return  # a response from the client: never answered
            self.error(echo_id, INVALID_REQUEST, "no method")
            return
        method = msg["method"]
        if not isinstance(method, str):
            self.error(echo_id, INVALID_REQUEST, "method must be a string")
            return
        if "id" not in msg:
            self.notification(method)
            return
        if not valid_id(rid) and not (rid is None and self.broken("null-id-accepted")):
            self.error(None, INVALID_REQUEST, "id must be a string or an integer")
            return
        if self.broken("round-ids") and isinstance(rid, int) and abs(rid) < 2 ** 1000:
            rid = int(float(rid))
        try:
            result = self.dispatch(method, msg.get("params", MISSING))
        except Refusal as r:
            self.error(rid, r.code, r.message, r.data)
            return
        if result is not NO_ANSWER:
            if self.served >= 3 and self.broken("noisy-after-3"):
                self.write(1, b"debug: serving request %d\n" % (self.served + 1))
            self.send({"jsonrpc": "2.0", "id": self.out_id(rid), "result": result})
            self.served += 1
            if self.served == 3 and self.broken("ignore-sigterm-after-requests"):
                signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def notification(self, method):
        if self.broken("answer-notifications"):
            self.send({"jsonrpc": "2.0", "id": None, "result": {}})

    def dispatch(self, method, params):
        if params is MISSING:
            params = {}
        elif not isinstance(params, dict):
            if method == "server/discover" and self.broken("discover-accepts-any-params"):
                return self.discover()
            raise Refusal(INVALID_PARAMS, "params must be an object")
        meta = params.get("_meta", {})
        if not isinstance(meta, dict):
            raise Refusal(INVALID_PARAMS, "_meta must be an object")
        if method == "initialize":
            return self.initialize(params)
        stateless = PV in meta or CC in meta
        if method == "server/discover":
            if self.broken("discover-hang"):
                return NO_ANSWER
            if self.broken("legacy-only"):
                raise Refusal(METHOD_NOT_FOUND, "method not found")
            if stateless:
                self.check_meta(meta)
            return self.discover()
        if stateless:
            self.check_meta(meta)
        elif not self.initialized and not self.broken("no-init-required"):
            raise Refusal(INVALID_REQUEST, "not initialized: send initialize first, "
                          "or carry _meta protocolVersion and clientCapabilities")
        result = self.method(method, params, stateless)
        if stateless:
            self.typed(result)
        return result

    def typed(self, result):
        if not self.broken("no-result-type"):
            result["resultType"] = "complete"
        return result

    def check_meta(self, meta):
        """The per-request metadata of a 2026-07-28 request."""
        if self.broken("version-error-for-all") and (PV not in meta or CC not in meta):
            raise Refusal(UNSUPPORTED_VERSION, "unsupported protocol version",
                          {"supported": SUPPORTED})
        if PV in meta:
            version = meta[PV]
        elif self.broken("revision-optional"):
            version = REV_2026
        else:
            raise Refusal(INVALID_PARAMS, "_meta has no " + PV)
        if not isinstance(version, str):
            raise Refusal(INVALID_PARAMS, PV + " must be a string")
        lenient = (
            self.broken("echo-version")
            or (self.broken("sticky-version") and self.version_seen)
            or (self.broken("refuse-known-probe") and version != LEARNT_PROBE)
        )
        if version not in SUPPORTED and not lenient:
            data = {"requested": version}
            if not self.broken("advertise-unknown"):
                data["supported"] = SUPPORTED
            raise Refusal(UNSUPPORTED_VERSION, "unsupported protocol version", data)
        if CC in meta:
            if not isinstance(meta[CC], dict):
                raise Refusal(INVALID_PARAMS, CC + " must be an object")
        elif not self.broken("capabilities-optional"):
            raise Refusal(INVALID_PARAMS, "_meta has no " + CC)
        if SESSION in meta and self.broken("require-session"):
            raise Refusal(INVALID_REQUEST, "unknown session")
        self.version_seen = True

    def initialize(self, params):
        if self.discovered and self.broken("discover-then-no-initialize"):
            raise Refusal(UNSUPPORTED_VERSION, "this connection speaks 2026-07-28",
                          {"supported": [REV_2026]})
        if self.initialized and not self.broken("reinit-accepted"):
            raise Refusal(INVALID_REQUEST, "already initialized")
        if "protocolVersion" in params:
            asked = params["protocolVersion"]
        elif self.broken("revision-optional"):
            asked = REV_2025
        else:
            raise Refusal(INVALID_PARAMS, "protocolVersion is required")
        if not isinstance(asked, str):
            raise Refusal(INVALID_PARAMS, "protocolVersion must be a string")
        if not isinstance(params.get("capabilities", {}), dict):
            raise Refusal(INVALID_PARAMS, "capabilities must be an object")
        learnt = self.broken("refuse-known-probe") and asked not in SUPPORTED and asked != LEARNT_PROBE
        if self.broken("echo-version") or learnt or asked == REV_2025:
            version = asked
        elif self.broken("advertise-unknown"):
            version = "2099-01-01"
        else:
            version = REV_2025
        if self.broken("legacy-version-changed"):
            version = "2024-11-05"
        self.initialized = True
        self.opened()
        return {
            "protocolVersion": version,
            "capabilities": CAPABILITIES,
            "serverInfo": SERVER_INFO,
            "instructions": INSTRUCTIONS,
        }

    def discover(self):
        self.opened()
        self.discovered = True
        return self.typed({
            "supportedVersions": SUPPORTED,
            "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS,
            "_meta": {SERVER_INFO_KEY: SERVER_INFO},
        })

    def method(self, method, params, stateless):
        if method == "ping" and not stateless:
            if self.broken("refuse-ping"):
                raise Refusal(-32603, "internal failure")
            return {}
        if method == "tools/list":
            return {"tools": [UNION_TOOL] if self.broken("union-tools-only") else TOOLS}
        if method == "tools/call":
            return self.call(params)
        if method in UNDECLARED and self.broken("undeclared-served"):
            return dict(UNDECLARED[method])
        if method.startswith("io.") and self.broken("any-method-accepted"):
            return {}
        raise Refusal(METHOD_NOT_FOUND, "method not found")

    def call(self, params):
        name, args = params.get("name"), params.get("arguments", {})
        if self.broken("tools-fail"):
            return {"content": [{"type": "text", "text": "internal failure"}], "isError": True}
        if name == "flag" and self.broken("union-tools-only") and isinstance(args, dict):
            v = args.get("v")
            if not isinstance(v, (bool, str)):
                raise Refusal(INVALID_PARAMS, "v must be a boolean or a string")
            return {"content": [{"type": "text", "text": json.dumps(v)}], "isError": False}
        if name not in ("echo", "add"):
            raise Refusal(INVALID_PARAMS, "unknown tool")
        if not isinstance(args, dict):
            raise Refusal(INVALID_PARAMS, "arguments must be an object")
        check = not self.broken("no-arg-validation")
        if name == "echo":
            text = args.get("text")
            if not isinstance(text, str):
                if check:
                    raise Refusal(INVALID_PARAMS, "text must be a string")
                text = json.dumps(text)
        else:
            a, b = args.get("a"), args.get("b")
            if not all(valid_id(x) and not isinstance(x, str) for x in (a, b)):
                if check:
                    raise Refusal(INVALID_PARAMS, "a and b must be integers")
                text = "%r + %r" % (a, b)
            else:
                text = str(a + b)
        return {"content": [{"type": "text", "text": text}], "isError": False}


def main():
    parser = argparse.ArgumentParser(description="profile test subject (stdio MCP server)")
    parser.add_argument("--with-child", action="store_true")
    parser.add_argument("--child-pidfile")
    parser.add_argument("--close-on-long-line", action="store_true")
    parser.add_argument("--break", dest="breaks", action="append", default=[], choices=sorted(BREAKS))
    args = parser.parse_args()
    subject = Subject(args.breaks, args.with_child, args.child_pidfile, args.close_on_long_line)
    subject.start()
    subject.run()


if __name__ == "__main__":
    main()
