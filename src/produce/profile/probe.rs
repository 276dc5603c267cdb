//! One subject process driven byte by byte for one profile observation.
//!
//! Blocking and thread-based on purpose: the profile checks need control below
//! any protocol library (partial lines, oversized lines, a stdout pipe left
//! unread, signals at chosen moments), and nothing here needs an async runtime.
//! Every byte written and read is kept, with its offset in milliseconds from
//! the probe's start, and becomes the observation's artifact.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ExitStatus};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::produce::drive::end::{self, Ending, Leader, Step};
use crate::produce::drive::proc;
pub use crate::produce::drive::spawn::Launch;
use crate::produce::drive::spawn::{self, StdinMode};

/// How much of the subject's stdout one probe keeps (more is counted, not
/// kept): the most a check reads is `backpressure`'s 300 `tools/list`
/// answers at once, which for a server with a large catalogue (50 KiB per
/// answer) is 15 MiB.
pub const STDOUT_KEEP_BYTES: usize = 16 << 20;
/// How many stdout lines one probe keeps (more bytes are counted, not kept):
/// a flood of short lines would otherwise cost more in line bookkeeping than
/// in bytes.
pub const STDOUT_KEEP_LINES: usize = 65_536;
/// Per stream, the chunks a transcript records one by one; later chunks are
/// folded into one record (first and last time, count, length, SHA-256 of
/// their bytes, head), so a subject writing a byte at a time cannot make the
/// record grow without bound.
pub const CHUNK_RECORDS: usize = 1024;
/// How much of its stderr one probe keeps.
pub const STDERR_KEEP_BYTES: usize = 1 << 20;
/// Chunks longer than this are recorded by length, digest and head only.
pub const CHUNK_ELIDE_BYTES: usize = 64 << 10;
/// Per stream, the bytes a transcript keeps in full; later chunks are
/// recorded by length, digest and head only (a burst of answers stays
/// checkable without making every artifact megabytes long).
pub const TRANSCRIPT_KEEP_BYTES: usize = 128 << 10;
/// The head kept of an elided chunk.
const ELIDED_HEAD_BYTES: usize = 256;
/// How long a subject has to exit after SIGTERM before the group is killed.
pub const TERM_GRACE: Duration = Duration::from_secs(2);

/// Once [`TERM_GRACE`] (or a check's own grace) has passed, how much longer
/// a subject that has not ignored an ending signal (SIGTERM, SIGINT, SIGHUP,
/// SIGQUIT) is given to act on it. Whether it ignored the signal is read from
/// the kernel's masks, so only a subject still busy with the signal, or one
/// whose handler never ends it, waits this long; a loaded machine that slows
/// an honest subject's exit does not turn it into one that "needed SIGKILL".
pub const SIGNAL_SETTLE: Duration = Duration::from_secs(20);

/// Which stream a recorded chunk travelled on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdin,
    Stdout,
    Stderr,
}

impl Stream {
    fn as_str(self) -> &'static str {
        match self {
            Stream::Stdin => "stdin",
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

#[derive(Debug, Clone)]
struct Chunk {
    at_ms: u64,
    stream: Stream,
    body: Body,
}

/// A recorded chunk's bytes, or, past what a transcript keeps in full, only
/// what its record says of them (decided as it is recorded: nothing more is
/// held).
#[derive(Debug, Clone)]
enum Body {
    Bytes(Vec<u8>),
    Elided {
        len: usize,
        sha256: [u8; 32],
        head: Vec<u8>,
    },
}

/// The chunks of one stream past [`CHUNK_RECORDS`], folded into one record.
#[derive(Debug, Clone)]
struct Folded {
    first_ms: u64,
    last_ms: u64,
    chunks: usize,
    len: usize,
    sha256: Sha256,
    head: Vec<u8>,
}

/// What a probe has recorded so far, per stream: the bytes kept in full,
/// the records, and the fold past them.
#[derive(Default)]
struct Recorded {
    chunks: Vec<Chunk>,
    kept: [usize; 3],
    records: [usize; 3],
    folded: [Option<Folded>; 3],
    /// Per stream, the bytes kept in full beyond [`TRANSCRIPT_KEEP_BYTES`]
    /// (a check whose judge counts every answer keeps them all).
    more: [usize; 3],
}

impl Recorded {
    fn push(&mut self, at_ms: u64, stream: Stream, bytes: &[u8]) {
        let i = stream as usize;
        if self.records[i] >= CHUNK_RECORDS {
            let f = self.folded[i].get_or_insert_with(|| Folded {
                first_ms: at_ms,
                last_ms: at_ms,
                chunks: 0,
                len: 0,
                sha256: Sha256::new(),
                head: Vec::new(),
            });
            f.last_ms = at_ms;
            f.chunks += 1;
            f.len += bytes.len();
            f.sha256.update(bytes);
            let room = ELIDED_HEAD_BYTES
                .saturating_sub(f.head.len())
                .min(bytes.len());
            f.head.extend_from_slice(&bytes[..room]);
            return;
        }
        self.records[i] += 1;
        let elide = self.kept[i] + bytes.len() > TRANSCRIPT_KEEP_BYTES + self.more[i]
            || bytes.len() > CHUNK_ELIDE_BYTES;
        let body = if elide {
            Body::Elided {
                len: bytes.len(),
                sha256: Sha256::digest(bytes).into(),
                head: bytes[..ELIDED_HEAD_BYTES.min(bytes.len())].to_vec(),
            }
        } else {
            self.kept[i] += bytes.len();
            Body::Bytes(bytes.to_vec())
        };
        self.chunks.push(Chunk {
            at_ms,
            stream,
            body,
        });
    }

    /// Every record in order, then each stream's fold.
    fn to_json(&self) -> Vec<Value> {
        let mut out: Vec<Value> = self
            .chunks
            .iter()
            .map(|c| match &c.body {
                Body::Bytes(bytes) => chunk_record(c.at_ms, c.stream.as_str(), bytes, false),
                Body::Elided { len, sha256, head } => {
                    elided_record(c.at_ms, c.stream.as_str(), *len, sha256, head)
                }
            })
            .collect();
        for (stream, f) in [Stream::Stdin, Stream::Stdout, Stream::Stderr]
            .into_iter()
            .zip(&self.folded)
        {
            if let Some(f) = f {
                let sha256: [u8; 32] = f.sha256.clone().finalize().into();
                let mut v = elided_record(f.first_ms, stream.as_str(), f.len, &sha256, &f.head);
                v["lastAtMs"] = json!(f.last_ms);
                v["chunks"] = json!(f.chunks);
                out.push(v);
            }
        }
        out
    }
}

#[derive(Default)]
struct Io {
    stdout: Vec<u8>,
    /// Line feeds in `stdout`.
    stdout_lines: usize,
    stdout_dropped: usize,
    stdout_eof: bool,
    stderr: Vec<u8>,
    stderr_eof: bool,
    /// While set, the stdout reader stops reading (the pipe fills up).
    paused: bool,
    /// Bytes handed to the writer and not yet written.
    pending_writes: usize,
    recorded: Recorded,
    events: Vec<Value>,
    /// Every answer the runner waited for, as it decided it: the id, how
    /// many stdout bytes it had read when it decided, and what it read
    /// (`replies` in the transcript: the judge reads each again from that
    /// prefix of the stored stdout).
    replies: Vec<Value>,
    /// When each stdout read came in (microseconds from the start) and how
    /// long the kept stdout was after it: the arrival of every line, for a
    /// load generator's latencies ([`Probe::lines_since`]).
    arrivals: Vec<(u64, usize)>,
}

type Shared = Arc<(Mutex<Io>, Condvar)>;

enum WriterMsg {
    Data(Vec<u8>),
    Close,
}

/// A JSON-RPC answer to one request id, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A response with `result` (the whole message).
    Result(Value),
    /// A response with `error`: its code and the whole message.
    Error(i64, Value),
    /// Nothing for that id within the time allowed.
    Silent,
    /// The subject closed stdout (or exited) without answering.
    Closed,
}

impl Reply {
    pub fn error_code(&self) -> Option<i64> {
        match self {
            Reply::Error(code, _) => Some(*code),
            _ => None,
        }
    }

    pub fn result(&self) -> Option<&Value> {
        match self {
            Reply::Result(m) => m.get("result"),
            _ => None,
        }
    }

    /// A short label for the artifact and the details.
    pub fn label(&self) -> String {
        match self {
            Reply::Result(_) => "result".into(),
            Reply::Error(code, _) => format!("error {code}"),
            Reply::Silent => "no answer".into(),
            Reply::Closed => "stdout closed".into(),
        }
    }
}

/// How a probe's subject ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// The exit status as text (`exit 0`, `signal 15`), if it was reaped.
    pub status: Option<String>,
    /// The subject exited before the runner asked it to (SIGTERM or kill).
    pub exited_by_itself: bool,
    /// SIGTERM was needed and was enough.
    pub terminated: bool,
    /// The group had to be killed with SIGKILL.
    pub killed: bool,
    /// Processes of the group or adopted descendants left after the end (should be 0).
    pub left_behind: usize,
    /// Those processes (pid, command name, group, session, state).
    pub left_behind_processes: Vec<Value>,
    /// Adopted orphans found at the end that descend from no subject this
    /// probe saw (another probe's, or one nobody saw born): killed, never
    /// blamed on this probe.
    pub unattributed: Vec<Value>,
    /// What the sandbox's upper layers held once the process had ended
    /// (`entriesLeft`, `runtimeCaches`, `truncated`, `scope`,
    /// `unroutablePackets`); `None` without a sandbox.
    pub sandbox: Option<Value>,
}

/// One running subject.
pub struct Probe {
    started: Instant,
    child: Child,
    /// The subject's pid: every reading of the subject's process, and the
    /// signals the runner sends it, use it.
    pid: u32,
    /// The process mcpres started and reaps, whose process group the
    /// subject is in: the subject itself, or in the sandbox the process
    /// that stands in for it (the subject is the second process of its PID
    /// namespace) and ends as it ends.
    leader: u32,
    shared: Shared,
    writer: Option<mpsc::Sender<WriterMsg>>,
    threads: Vec<std::thread::JoinHandle<()>>,
    status: Option<ExitStatus>,
    /// Descendants ever seen while the probe ran (pid -> command name).
    descendants: BTreeMap<u32, String>,
    /// When each of those started (pid -> clock ticks since boot): a pid
    /// found later with another start time is a later process, not ours.
    starts: BTreeMap<u32, u64>,
    /// What the runner did that may end the subject (a signal, stdin
    /// closed), with when: an exit after one is not the subject's own.
    endings: Vec<(u64, String)>,
    /// When the runner found the subject exited (ms from the start).
    exit_seen_ms: Option<u64>,
    /// Every signal the runner sent and waited on ([`Probe::signal_and_wait`]):
    /// which, when, what the kernel's masks said, and whether the subject
    /// exited before the runner stopped waiting (`decidedAtMs`), so that a
    /// judge reads "ended on it" or "did not" from the record.
    waits: Vec<Value>,
    launch: Launch,
    /// The sandbox stage this process runs in, observed and removed when
    /// the probe ends.
    stage: Option<crate::produce::drive::sandbox::Stage>,
}

fn now_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn notify(shared: &Shared) {
    shared.1.notify_all();
}

impl Probe {
    /// Start the subject in a process group of its own, with piped stdio.
    pub fn start(launch: &Launch) -> std::io::Result<Probe> {
        Self::start_program(launch, &launch.program)
    }

    /// Start `program` (instead of the launch's) with the launch's arguments and environment.
    pub fn start_program(launch: &Launch, program: &Path) -> std::io::Result<Probe> {
        // Each process in a fresh sandbox stage of its own, when the run has one.
        if launch.sandbox.is_some() {
            crate::produce::drive::sandbox::can_execute(program)?;
        }
        let stage = launch.sandbox.as_ref().map(|s| s.stage()).transpose()?;
        let cmd = spawn::command_in(
            stage
                .as_ref()
                .zip(launch.sandbox.as_ref())
                .map(|(stage, s)| (stage, &s.tools)),
            program,
            &launch.args,
            &launch.env,
            StdinMode::Piped,
        );
        let started = Instant::now();
        let mut child = spawn::spawn(cmd)?;
        let leader = child.id();
        let pid = stage.as_ref().map_or(leader, |s| {
            s.subject_pid(leader, crate::produce::drive::sandbox::NAMING_LIMIT)
        });
        let shared: Shared = Arc::new((Mutex::new(Io::default()), Condvar::new()));
        let mut threads = Vec::new();
        if let Some(mut out) = child.stdout.take() {
            let shared = Arc::clone(&shared);
            threads.push(std::thread::spawn(move || {
                let mut buf = vec![0u8; 64 << 10];
                loop {
                    {
                        let (lock, cvar) = &*shared;
                        let mut io = lock.lock().expect("probe lock");
                        while io.paused {
                            io = cvar.wait(io).expect("probe lock");
                        }
                    }
                    let n = match out.read(&mut buf) {
                        Ok(0) => break,
                        Err(e) => {
                            let at = now_ms(started);
                            shared.0.lock().expect("probe lock").events.push(
                                json!({"atMs": at, "event": "stdout-read-failed", "error": e.kind().to_string()}),
                            );
                            break;
                        }
                        Ok(n) => n,
                    };
                    let at_ms = now_ms(started);
                    let (lock, _) = &*shared;
                    let mut io = lock.lock().expect("probe lock");
                    let mut fits = if io.stdout_lines >= STDOUT_KEEP_LINES {
                        0
                    } else {
                        STDOUT_KEEP_BYTES.saturating_sub(io.stdout.len()).min(n)
                    };
                    // Up to (and with) the last line feed the line count allows.
                    let room = STDOUT_KEEP_LINES - io.stdout_lines.min(STDOUT_KEEP_LINES);
                    if let Some((at, _)) = buf[..fits]
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| **b == b'\n')
                        .nth(room)
                    {
                        fits = at;
                    }
                    io.stdout_lines += buf[..fits].iter().filter(|b| **b == b'\n').count();
                    if io.stdout.capacity() == 0 && fits > 0 {
                        // Once, the whole allowance: growth by doubling would
                        // copy and leave freed blocks behind (only the pages
                        // written become resident).
                        io.stdout.reserve_exact(STDOUT_KEEP_BYTES);
                    }
                    io.stdout.extend_from_slice(&buf[..fits]);
                    if fits > 0 {
                        let us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                        let len = io.stdout.len();
                        io.arrivals.push((us, len));
                    }
                    io.stdout_dropped += n - fits;
                    if fits > 0 {
                        io.recorded.push(at_ms, Stream::Stdout, &buf[..fits]);
                    }
                    drop(io);
                    notify(&shared);
                }
                let at = now_ms(started);
                let mut io = shared.0.lock().expect("probe lock");
                io.stdout_eof = true;
                io.events.push(json!({"atMs": at, "event": "stdout-closed"}));
                drop(io);
                notify(&shared);
            }));
        }
        if let Some(mut err) = child.stderr.take() {
            let shared = Arc::clone(&shared);
            threads.push(std::thread::spawn(move || {
                let mut buf = vec![0u8; 16 << 10];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let at_ms = now_ms(started);
                    let mut io = shared.0.lock().expect("probe lock");
                    let fits = STDERR_KEEP_BYTES.saturating_sub(io.stderr.len()).min(n);
                    io.stderr.extend_from_slice(&buf[..fits]);
                    if fits > 0 {
                        io.recorded.push(at_ms, Stream::Stderr, &buf[..fits]);
                    }
                    drop(io);
                    notify(&shared);
                }
                shared.0.lock().expect("probe lock").stderr_eof = true;
                notify(&shared);
            }));
        }
        let (tx, rx) = mpsc::channel::<WriterMsg>();
        if let Some(stdin) = child.stdin.take() {
            let shared = Arc::clone(&shared);
            threads.push(std::thread::spawn(move || {
                writer(stdin, rx, shared, started)
            }));
        }
        Ok(Probe {
            started,
            child,
            pid,
            leader,
            shared,
            writer: Some(tx),
            threads,
            status: None,
            descendants: BTreeMap::new(),
            starts: BTreeMap::new(),
            endings: Vec::new(),
            exit_seen_ms: None,
            waits: Vec::new(),
            launch: launch.clone(),
            stage,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Where `addr` (as the subject sees it) is reached: through the door of
    /// its network namespace when it has one of its own.
    pub fn endpoint(&self, addr: std::net::SocketAddr) -> crate::produce::drive::door::Endpoint {
        match &self.stage {
            Some(stage) => stage.endpoint(addr),
            None => crate::produce::drive::door::Endpoint::direct(addr),
        }
    }

    pub fn elapsed_ms(&self) -> u64 {
        now_ms(self.started)
    }

    /// Microseconds since the subject was started.
    pub fn elapsed_us(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// The complete stdout lines from byte `from` on, each with when it
    /// arrived (microseconds from the start: the read that brought its line
    /// feed), and the byte the next call starts from.
    pub fn lines_since(&self, from: usize) -> (Vec<(u64, Vec<u8>)>, usize) {
        let io = self.shared.0.lock().expect("probe lock");
        let mut out = Vec::new();
        let mut at = from.min(io.stdout.len());
        let mut k = io.arrivals.partition_point(|&(_, len)| len <= at);
        while let Some(end) = io.stdout[at..].iter().position(|&b| b == b'\n') {
            let lf = at + end;
            while k < io.arrivals.len() && io.arrivals[k].1 <= lf {
                k += 1;
            }
            let us = io.arrivals.get(k).map_or(0, |a| a.0);
            out.push((us, io.stdout[at..lf].to_vec()));
            at = lf + 1;
        }
        (out, at)
    }

    /// Write `bytes` to the subject's stdin (queued: a subject that stops
    /// reading never blocks the runner).
    pub fn send(&mut self, bytes: impl Into<Vec<u8>>) {
        let bytes = bytes.into();
        self.shared.0.lock().expect("probe lock").pending_writes += bytes.len();
        if let Some(tx) = &self.writer {
            let _ = tx.send(WriterMsg::Data(bytes));
        }
    }

    /// Close the subject's stdin (after everything queued is written).
    pub fn close_stdin(&mut self) {
        if let Some(tx) = self.writer.take() {
            self.ending("stdin closed");
            let _ = tx.send(WriterMsg::Close);
        }
    }

    /// Wait until everything queued was written, at most `limit`.
    pub fn flushed(&self, limit: Duration) -> bool {
        self.wait_until(limit, |io| io.pending_writes == 0)
    }

    /// Keep up to `bytes` more of the subject's stdout in full than a
    /// transcript keeps ([`TRANSCRIPT_KEEP_BYTES`]), for a check whose judge
    /// reads every line (at most [`STDOUT_KEEP_BYTES`] in all).
    pub fn keep_more_stdout(&self, bytes: usize) {
        let mut io = self.shared.0.lock().expect("probe lock");
        io.recorded.more[Stream::Stdout as usize] =
            bytes.min(STDOUT_KEEP_BYTES.saturating_sub(TRANSCRIPT_KEEP_BYTES));
    }

    /// Keep up to `bytes` more of the subject's stdin in full than a transcript keeps
    /// ([`TRANSCRIPT_KEEP_BYTES`]), for a check whose judge reads every request sent.
    pub fn keep_more_stdin(&self, bytes: usize) {
        let mut io = self.shared.0.lock().expect("probe lock");
        io.recorded.more[Stream::Stdin as usize] = bytes.min(STDOUT_KEEP_BYTES);
    }

    /// Bytes queued for the subject's stdin and not yet taken by it.
    pub fn pending_write_bytes(&self) -> usize {
        self.shared.0.lock().expect("probe lock").pending_writes
    }

    /// Stop (or resume) reading the subject's stdout.
    pub fn pause_stdout(&self, paused: bool) {
        self.shared.0.lock().expect("probe lock").paused = paused;
        notify(&self.shared);
        self.note(if paused {
            "stdout-paused"
        } else {
            "stdout-resumed"
        });
    }

    /// Record a runner event (what the runner did) in the transcript.
    pub fn note(&self, what: &str) {
        let at = now_ms(self.started);
        self.shared
            .0
            .lock()
            .expect("probe lock")
            .events
            .push(json!({"atMs": at, "event": what}));
    }

    fn wait_until(&self, limit: Duration, mut done: impl FnMut(&Io) -> bool) -> bool {
        let until = Instant::now() + limit;
        let (lock, cvar) = &*self.shared;
        let mut io = lock.lock().expect("probe lock");
        loop {
            if done(&io) {
                return true;
            }
            let now = Instant::now();
            if now >= until {
                return false;
            }
            io = cvar
                .wait_timeout(io, (until - now).min(Duration::from_millis(20)))
                .expect("probe lock")
                .0;
        }
    }

    /// The complete lines the subject wrote to stdout so far (LF removed, a
    /// trailing CR kept), and whether bytes follow the last LF.
    pub fn stdout_lines(&self) -> (Vec<Vec<u8>>, bool) {
        let io = self.shared.0.lock().expect("probe lock");
        split_lines(&io.stdout)
    }

    /// Every byte the subject wrote to stdout so far.
    pub fn stdout_bytes(&self) -> Vec<u8> {
        self.shared.0.lock().expect("probe lock").stdout.clone()
    }

    pub fn stderr_bytes(&self) -> Vec<u8> {
        self.shared.0.lock().expect("probe lock").stderr.clone()
    }

    pub fn stdout_closed(&self) -> bool {
        self.shared.0.lock().expect("probe lock").stdout_eof
    }

    /// Wait at most `limit` for stdout's end (every byte the subject wrote
    /// read): after an exit, the reader may still be draining the pipe.
    /// True when it ended.
    pub fn drained(&self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while !self.stdout_closed() {
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// Wait at most `limit` for a response to `id` (a message with that id and
    /// a `result` or `error` member) on stdout.
    pub fn reply(&self, id: &Value, limit: Duration) -> Reply {
        let mut found = None;
        let mut from = 0usize;
        let mut seen = 0usize;
        let done = self.wait_until(limit, |io| {
            // Only complete lines are messages; scan each once, in place.
            while let Some(end) = io.stdout[from..].iter().position(|&b| b == b'\n') {
                let line = &io.stdout[from..from + end];
                from += end + 1;
                if let Some(m) = response_to(line, id) {
                    found = Some(m);
                    seen = from;
                    return true;
                }
            }
            seen = io.stdout.len();
            io.stdout_eof
        });
        let reply = match found {
            Some(m) => match m.get("error") {
                Some(e) => Reply::Error(e.get("code").and_then(Value::as_i64).unwrap_or(0), m),
                None => Reply::Result(m),
            },
            None if done => Reply::Closed,
            None => Reply::Silent,
        };
        // An id outside the safe integer range has no canonical form: the
        // decision is kept without it (and the judge does not read it).
        let mut decision = json!({"seenBytes": seen, "reply": reply.label()});
        if id.is_string() || id.is_null() || id.as_i64().is_some_and(|n| n.unsigned_abs() < 1 << 53)
        {
            decision["id"] = id.clone();
        }
        self.shared
            .0
            .lock()
            .expect("probe lock")
            .replies
            .push(decision);
        reply
    }

    /// Has the subject exited? Reaps it if so.
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        // Reaped and unregistered under the spawn lock: once reaped, the
        // number may go to a subject another thread starts, whose fresh
        // registration must not be the one removed here.
        let spawning = crate::produce::drive::spawn::hold_spawn_lock();
        let reaped = match self.status {
            None => match self.child.try_wait() {
                Ok(Some(s)) => {
                    proc::unregister_child(self.leader);
                    Some(s)
                }
                _ => None,
            },
            Some(_) => None,
        };
        drop(spawning);
        if let Some(s) = reaped {
            self.status = Some(s);
            let at = now_ms(self.started);
            self.exit_seen_ms = Some(at);
            self.shared
                .0
                .lock()
                .expect("probe lock")
                .events
                .push(json!({"atMs": at, "event": "exited", "status": status_text(&s)}));
        }
        self.status
    }

    /// Wait at most `limit` for the subject to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + limit;
        let mut backoff = crate::produce::drive::end::Backoff::default();
        loop {
            self.sample_tree();
            if let Some(s) = self.try_exit() {
                return Some(s);
            }
            if Instant::now() >= until {
                return None;
            }
            backoff.pause_until(until);
        }
    }

    /// Send `signal` to the subject process (not its group).
    pub fn signal(&mut self, signal: rustix::process::Signal, name: &str) {
        self.sample_tree();
        if self.try_exit().is_some() {
            return;
        }
        self.note(&format!("sent {name}"));
        if matches!(
            signal,
            rustix::process::Signal::TERM
                | rustix::process::Signal::INT
                | rustix::process::Signal::KILL
                | rustix::process::Signal::HUP
                | rustix::process::Signal::QUIT
        ) {
            self.ending(name);
        }
        if let Some(pid) = rustix::process::Pid::from_raw(self.pid as i32) {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }

    /// Crash the subject: SIGKILL to its whole process group at once (no chance to
    /// clean up), noted as `sent SIGKILL to the process group`; then wait at most
    /// `limit` for its exit.
    pub fn crash(&mut self, limit: Duration) -> Option<ExitStatus> {
        self.sample_tree();
        if self.try_exit().is_some() {
            return self.status;
        }
        self.note("sent SIGKILL to the process group");
        self.ending("SIGKILL to the process group");
        use crate::produce::drive::{end, proc};
        // The subject's own group; in the sandbox, where the process standing in for
        // it may share that group, every member but that one (its end is the
        // namespace's, which would take every process in it along).
        let pgid = proc::read(self.pid).map_or(self.pid as i32, |p| p.pgid);
        let whole_group = self.leader == self.pid || pgid != self.leader as i32;
        let members: Vec<u32> = proc::group(pgid)
            .into_iter()
            .map(|p| p.pid)
            .filter(|pid| whole_group || *pid != self.leader)
            .collect();
        if whole_group {
            let _ = end::kill_group(pgid);
        } else {
            for pid in &members {
                end::signal(*pid, rustix::process::Signal::KILL);
            }
        }
        end::signal(self.pid, rustix::process::Signal::KILL);
        // The crash is over once the kernel has taken every process it hit (a large
        // process takes a while to be torn down): only what it did not reach is left.
        let until = Instant::now() + limit;
        let mut backoff = end::Backoff::default();
        while members
            .iter()
            .any(|pid| proc::read(*pid).is_some_and(|p| !p.zombie()))
            && Instant::now() < until
        {
            backoff.pause_until(until);
        }
        self.wait_exit(until.saturating_duration_since(Instant::now()))
    }

    /// Send an ending `signal` and wait for the subject to exit: `grace`
    /// first, then, unless the kernel's masks say the signal is ignored
    /// (`SIG_IGN`), up to [`SIGNAL_SETTLE`] more. What the masks said is
    /// noted in the transcript. For a signal that does not ask the subject
    /// to end (SIGCONT, SIGUSR1, ...) this is `signal` and `wait_exit(grace)`.
    pub fn signal_and_wait(
        &mut self,
        signal: rustix::process::Signal,
        name: &str,
        grace: Duration,
    ) -> Option<ExitStatus> {
        let ending = matches!(
            signal,
            rustix::process::Signal::TERM
                | rustix::process::Signal::INT
                | rustix::process::Signal::HUP
                | rustix::process::Signal::QUIT
        );
        let sent_ms = now_ms(self.started);
        self.signal(signal, name);
        let mut disposition = None;
        let status = self.wait_exit(grace).or_else(|| {
            if !ending {
                return None;
            }
            let masks = proc::signal_masks(self.pid, signal.as_raw());
            disposition = masks.map(|m| m.0.as_str());
            if self.masks_say_ignored(name, grace, masks) {
                return None;
            }
            self.wait_exit(SIGNAL_SETTLE)
        });
        if status.is_none() {
            self.note(&format!("no exit after {name}"));
        }
        self.waits.push(json!({
            "signal": name,
            "sentAtMs": sent_ms,
            "graceMs": u64::try_from(grace.as_millis()).unwrap_or(u64::MAX),
            "dispositionAfterGrace": disposition,
            "exited": status.is_some(),
            "decidedAtMs": now_ms(self.started),
        }));
        status
    }

    /// Note what the masks said of a signal not acted on within `grace`;
    /// true when they say it is ignored.
    fn masks_say_ignored(
        &self,
        name: &str,
        grace: Duration,
        masks: Option<(proc::Disposition, bool, bool)>,
    ) -> bool {
        if let Some((disposition, pending, blocked)) = masks {
            self.note(&format!(
                "{name} not acted on within {} ms: disposition {}{}{}",
                grace.as_millis(),
                disposition.as_str(),
                if pending { ", still pending" } else { "" },
                if blocked {
                    ", blocked by the main thread"
                } else {
                    ""
                },
            ));
            return disposition == proc::Disposition::Ignored;
        }
        false
    }

    /// Record that the runner did `what`, which may end the subject.
    fn ending(&mut self, what: &str) {
        if self.status.is_none() {
            self.endings.push((now_ms(self.started), what.to_string()));
        }
    }

    /// What the runner did that ended the subject, if its exit came after
    /// the runner asked for one (a signal that ends, stdin closed); `None`
    /// when it exited by itself or still runs.
    pub fn ended_by_runner(&mut self) -> Option<String> {
        self.try_exit()?;
        self.endings.first().map(|(_, what)| what.clone())
    }

    /// Record the subject's descendants right now.
    pub fn sample_tree(&mut self) {
        if self.status.is_some() {
            return;
        }
        let procs = proc::snapshot();
        for p in proc::descendants(&procs, &[self.pid]) {
            if let std::collections::btree_map::Entry::Vacant(e) = self.descendants.entry(p.pid) {
                e.insert(p.comm.clone());
                if let Some(t) = proc::start_time(p.pid) {
                    self.starts.insert(p.pid, t);
                }
            }
        }
    }

    /// Is `p` (found now) the descendant this probe saw under its number,
    /// not a later process that reuses it?
    fn saw(&self, p: &proc::Proc) -> bool {
        self.descendants.contains_key(&p.pid)
            && self
                .starts
                .get(&p.pid)
                .is_some_and(|t| proc::start_time(p.pid) == Some(*t))
    }

    /// Descendants seen at any sample.
    pub fn descendants_seen(&self) -> &BTreeMap<u32, String> {
        &self.descendants
    }

    /// End the probe: close stdin and wait briefly, then SIGTERM, then kill the
    /// group; reap, sweep adopted descendants and count what is left.
    pub fn finish(mut self) -> (Ended, Value) {
        self.sample_tree();
        // Read while the process may still live: its network namespace's
        // count of packets that found no route.
        let packets = self
            .stage
            .as_ref()
            .and_then(|s| s.unroutable_packets(self.pid));
        // A subject that closed its stdout by itself is on its way out (an
        // interpreter closes its streams before it finishes exiting): its
        // exit is awaited before anything is done to end it.
        if self.try_exit().is_none() && self.stdout_closed() && self.endings.is_empty() {
            self.wait_exit(TERM_GRACE);
        }
        let already = self.try_exit().is_some();
        let roots: Vec<u32> = self.descendants.keys().copied().collect();
        if !already {
            self.close_stdin();
        }
        let pgid = self.leader as i32;
        let group = end::end_group(
            &mut self,
            pgid,
            Ending {
                own_grace: if already {
                    Duration::ZERO
                } else {
                    Duration::from_millis(500)
                },
                term_grace: Some(TERM_GRACE),
                kill_always: false,
                reap_limit: TERM_GRACE,
                settle_limit: Duration::ZERO,
            },
        );
        let mut ended = Ended {
            status: None,
            exited_by_itself: group.exited_on_its_own,
            terminated: group.terminated,
            killed: group.killed.is_some(),
            left_behind: 0,
            left_behind_processes: Vec::new(),
            unattributed: Vec::new(),
            sandbox: None,
        };
        // Whatever was still in the group once the subject ended (killed with
        // the group since), or was seen below the subject, is left behind: it
        // is counted, recorded, then killed. A subject another probe started
        // and still owns is never one of ours (its number may repeat ours
        // once ours is reaped).
        let mut leftovers: BTreeMap<u32, Value> = group
            .left_in_group
            .iter()
            .map(|p| (p.pid, p.to_json()))
            .collect();
        // In the sandbox, every process the subject started is in its PID
        // namespace, whatever session or group it moved to: each one still
        // alive is this probe's, and is killed with the namespace.
        if let Some(stage) = &self.stage {
            for p in stage.end_namespace().left {
                let mut v = p.to_json();
                v["foundIn"] = json!("pid-namespace");
                leftovers.insert(p.pid, v);
            }
        }
        // Only a process this probe saw descend from its subject (same
        // number, same start time) counts: never a later process that
        // reuses the number (another check's fresh subject). The spawn
        // lock holds while they are told apart.
        let spawning = crate::produce::drive::spawn::hold_spawn_lock();
        let procs = proc::snapshot();
        for pid in &roots {
            if let Some(p) = procs
                .get(pid)
                .filter(|p| !p.zombie() && !proc::is_own_child(p.pid) && self.saw(p))
            {
                leftovers.insert(*pid, p.to_json());
                end::signal(*pid, rustix::process::Signal::KILL);
            }
        }
        drop(spawning);
        // Adopted orphans are ours when we saw them below the subject or
        // they are still in its process group; the others are killed too
        // (nothing may stay), but not blamed on this probe.
        let pgid = self.leader as i32;
        let (swept, _) = end::sweep_where(|p| p.pgid == pgid || self.saw(p));
        let (strangers, _) = end::sweep_where(|_| true);
        ended.unattributed = strangers.killed;
        let swept = swept.killed;
        for p in &swept {
            if let Some(pid) = p.get("pid").and_then(Value::as_u64) {
                leftovers.insert(pid as u32, p.clone());
            }
        }
        ended.left_behind_processes = leftovers.into_values().collect();
        ended.left_behind = ended.left_behind_processes.len();
        ended.status = self.status.as_ref().map(status_text);
        if let Some(tx) = self.writer.take() {
            drop(tx);
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        // Everything left in the stage was written by the subject and left;
        // the stage is then removed from the host.
        let watched = self
            .launch
            .sandbox
            .as_ref()
            .map(|s| s.watched.snapshot())
            .unwrap_or_default();
        ended.sandbox = self.stage.take().map(|stage| {
            let mut seen = stage.observe_watching(&watched);
            seen["unroutablePackets"] = json!(packets);
            seen
        });
        let artifact = self.transcript(&ended, &swept);
        (ended, artifact)
    }

    fn transcript(&self, ended: &Ended, swept: &[Value]) -> Value {
        let mut t = self.transcript_core(ended, swept);
        if let Some(seen) = &ended.sandbox {
            t["sandbox"] = seen.clone();
        }
        t
    }

    fn transcript_core(&self, ended: &Ended, swept: &[Value]) -> Value {
        let io = self.shared.0.lock().expect("probe lock");
        let chunks = io.recorded.to_json();
        json!({
            "launch": {
                "program": self.launch.program.display().to_string(),
                "args": self.launch.args,
                "environmentKeys": self.launch.env.keys().collect::<Vec<_>>(),
            },
            "pid": self.pid,
            "chunks": chunks,
            "events": io.events,
            "replies": io.replies,
            "signalWaits": self.waits,
            "stdoutBytes": io.stdout.len() + io.stdout_dropped,
            "stdoutDroppedBytes": io.stdout_dropped,
            "stderrBytes": io.stderr.len(),
            "descendantsSeen": self.descendants.iter().map(|(pid, comm)| json!({"pid": pid, "comm": comm})).collect::<Vec<_>>(),
            "end": {
                "status": ended.status,
                "exitedByItself": ended.exited_by_itself,
                "terminatedBySigterm": ended.terminated,
                "killed": ended.killed,
                "leftBehind": ended.left_behind,
                "leftBehindProcesses": ended.left_behind_processes,
                "sweptDescendants": swept,
                "adoptedNotOurs": ended.unattributed,
                "endedBy": match (&self.status, self.endings.first()) {
                    (None, _) => json!(null),
                    (Some(_), None) => json!("subject"),
                    (Some(_), Some((at, what))) => json!({"mcpres": what, "atMs": at}),
                },
                "exitSeenMs": self.exit_seen_ms,
            },
        })
    }
}

/// The probe's subject as the leader of the termination sequence: each
/// step is noted in the transcript.
impl Leader for Probe {
    fn pid(&self) -> u32 {
        self.pid
    }

    fn wait_exit(&mut self, limit: Duration) -> bool {
        Probe::wait_exit(self, limit).is_some()
    }

    fn step(&mut self, step: Step<'_>) {
        match step {
            Step::Term => {
                self.sample_tree();
                self.ending("SIGTERM (end of probe)");
                self.note("sent SIGTERM (end of probe)");
            }
            Step::Kill => {
                self.ending("SIGKILL (end of probe)");
                self.note("SIGKILL to the process group (end of probe)")
            }
            Step::Killed(_) => {}
        }
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = end::kill_group(self.leader as i32);
            let _ = self.child.kill();
            // Reaped and unregistered under the spawn lock (see `try_exit`).
            let _spawning = crate::produce::drive::spawn::hold_spawn_lock();
            let _ = self.child.wait();
            proc::unregister_child(self.leader);
        }
    }
}

fn writer(mut stdin: ChildStdin, rx: mpsc::Receiver<WriterMsg>, shared: Shared, started: Instant) {
    while let Ok(msg) = rx.recv() {
        match msg {
            WriterMsg::Data(bytes) => {
                let at_ms = now_ms(started);
                let ok = stdin.write_all(&bytes).and_then(|()| stdin.flush());
                let mut io = shared.0.lock().expect("probe lock");
                io.pending_writes = io.pending_writes.saturating_sub(bytes.len());
                let len = bytes.len();
                io.recorded.push(at_ms, Stream::Stdin, &bytes);
                if let Err(e) = ok {
                    io.events.push(json!({"atMs": now_ms(started), "event": "write-failed", "bytes": len, "error": e.kind().to_string()}));
                }
                drop(io);
                notify(&shared);
            }
            WriterMsg::Close => {
                shared
                    .0
                    .lock()
                    .expect("probe lock")
                    .events
                    .push(json!({"atMs": now_ms(started), "event": "stdin-closed"}));
                break;
            }
        }
    }
    // Dropping stdin closes the pipe; anything still queued is discarded.
    let mut io = shared.0.lock().expect("probe lock");
    io.pending_writes = 0;
    drop(io);
    notify(&shared);
}

pub fn status_text(s: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => "unknown".into(),
    }
}

/// Complete LF-terminated lines of `bytes` (LF removed) and whether an
/// unterminated tail follows.
pub fn split_lines(bytes: &[u8]) -> (Vec<Vec<u8>>, bool) {
    // The unterminated tail is never copied (a subject that writes without
    // a line feed would otherwise be copied whole on every look).
    let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let lines: Vec<Vec<u8>> = bytes[..end]
        .split_inclusive(|&b| b == b'\n')
        .map(|l| l[..l.len() - 1].to_vec())
        .collect();
    (lines, end < bytes.len())
}

/// The record of a chunk kept only by its length, SHA-256 and head.
fn elided_record(at_ms: u64, stream: &str, len: usize, sha256: &[u8; 32], head: &[u8]) -> Value {
    json!({
        "atMs": at_ms,
        "stream": stream,
        "bytes": len,
        "elided": {
            "sha256": hex::encode(sha256),
            "headBase64": base64::engine::general_purpose::STANDARD.encode(head),
        },
    })
}

/// The message on `line` if it is a response to `id`.
fn response_to(line: &[u8], id: &Value) -> Option<Value> {
    let v: Value = serde_json::from_slice(trim_cr(line)).ok()?;
    let is_response = v.get("result").is_some() || v.get("error").is_some();
    (is_response && v.get("method").is_none() && v.get("id") == Some(id)).then_some(v)
}

pub fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// One recorded chunk: its time, where it travelled, its length, and its
/// bytes (UTF-8 text or base64), or, when `elide` or longer than
/// [`CHUNK_ELIDE_BYTES`], only its digest and head.
pub fn chunk_record(at_ms: u64, stream: &str, bytes: &[u8], elide: bool) -> Value {
    let mut v = json!({"atMs": at_ms, "stream": stream, "bytes": bytes.len()});
    if elide || bytes.len() > CHUNK_ELIDE_BYTES {
        let head = &bytes[..ELIDED_HEAD_BYTES.min(bytes.len())];
        return elided_record(
            at_ms,
            stream,
            bytes.len(),
            &Sha256::digest(bytes).into(),
            head,
        );
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => v["text"] = json!(text),
        Err(_) => v["base64"] = json!(base64::engine::general_purpose::STANDARD.encode(bytes)),
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_at_lf_and_report_a_tail() {
        let (lines, tail) = split_lines(b"a\nb\r\nc");
        assert_eq!(lines, vec![b"a".to_vec(), b"b\r".to_vec()]);
        assert!(tail);
        let (lines, tail) = split_lines(b"a\n");
        assert_eq!(lines, vec![b"a".to_vec()]);
        assert!(!tail);
    }

    #[test]
    fn only_responses_with_the_same_id_match() {
        let id = json!(7);
        assert!(response_to(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#, &id).is_some());
        assert!(response_to(br#"{"jsonrpc":"2.0","id":"7","result":{}}"#, &id).is_none());
        assert!(response_to(br#"{"jsonrpc":"2.0","id":7,"method":"x"}"#, &id).is_none());
        assert!(response_to(b"not json", &id).is_none());
    }

    #[test]
    fn long_chunks_are_elided_with_their_digest() {
        let mut r = Recorded::default();
        r.push(1, Stream::Stdin, &vec![b'x'; CHUNK_ELIDE_BYTES + 1]);
        r.push(2, Stream::Stdout, b"ab");
        let v = r.to_json();
        assert!(v[0].get("text").is_none());
        assert_eq!(v[0]["bytes"], CHUNK_ELIDE_BYTES + 1);
        assert_eq!(
            v[0]["elided"]["sha256"],
            hex::encode(Sha256::digest(vec![b'x'; CHUNK_ELIDE_BYTES + 1]))
        );
        assert_eq!(v[1]["text"], "ab");
        // Past what a stream keeps in full: elided as recorded.
        let mut r = Recorded::default();
        r.push(1, Stream::Stdout, &vec![b'a'; TRANSCRIPT_KEEP_BYTES / 2]);
        r.push(1, Stream::Stdout, &vec![b'a'; TRANSCRIPT_KEEP_BYTES / 2]);
        r.push(2, Stream::Stdout, b"ab");
        r.push(3, Stream::Stderr, b"ab");
        let v = r.to_json();
        assert!(v[0].get("text").is_some() && v[1].get("text").is_some());
        assert!(v[2].get("text").is_none());
        assert_eq!(v[2]["bytes"], 2);
        assert_eq!(v[3]["text"], "ab");
        // A check that keeps more stdout keeps it, and only stdout.
        let mut r = Recorded::default();
        r.more[Stream::Stdout as usize] = TRANSCRIPT_KEEP_BYTES;
        for at in 0..4 {
            r.push(at, Stream::Stdout, &vec![b'a'; TRANSCRIPT_KEEP_BYTES / 2]);
            r.push(at, Stream::Stdin, &vec![b'a'; TRANSCRIPT_KEEP_BYTES / 2]);
        }
        r.push(5, Stream::Stdout, b"ab");
        let v = r.to_json();
        let kept = |stream: &str| {
            v.iter()
                .filter(|c| c["stream"] == stream && c.get("text").is_some())
                .count()
        };
        assert_eq!((kept("stdout"), kept("stdin")), (4, 2));
    }

    /// A subject writing a byte at a time: past the records a stream may
    /// have, one fold says how many chunks, how long, their digest and head.
    #[test]
    fn chunks_past_the_record_limit_are_folded() {
        let mut r = Recorded::default();
        let mut all = Vec::new();
        for i in 0..CHUNK_RECORDS + 1000 {
            let b = [b'a' + (i % 26) as u8];
            all.push(b[0]);
            r.push(i as u64, Stream::Stdout, &b);
        }
        r.push(7, Stream::Stdin, b"x");
        let v = r.to_json();
        assert_eq!(v.len(), CHUNK_RECORDS + 2);
        assert_eq!(v[CHUNK_RECORDS]["stream"], "stdin");
        let fold = &v[CHUNK_RECORDS + 1];
        assert_eq!(fold["stream"], "stdout");
        assert_eq!(fold["chunks"], 1000);
        assert_eq!(fold["bytes"], 1000);
        assert_eq!(fold["atMs"], CHUNK_RECORDS as u64);
        assert_eq!(fold["lastAtMs"], (CHUNK_RECORDS + 999) as u64);
        assert_eq!(
            fold["elided"]["sha256"],
            hex::encode(Sha256::digest(&all[CHUNK_RECORDS..]))
        );
        assert_eq!(
            fold["elided"]["headBase64"],
            base64::engine::general_purpose::STANDARD
                .encode(&all[CHUNK_RECORDS..CHUNK_RECORDS + 256])
        );
    }
}
