//! The pieces every profile check is made of: a context that starts fresh
//! subject processes and speaks the evaluated revision, the evidence one
//! exchange leaves, the observations (positive, negative control, wrong-reason
//! mutant) and how a check's verdict follows from them.

use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::probe::{Ended, Launch, Probe, Reply, split_lines, trim_cr};
use crate::diag::reasons;
use crate::judge::profile as judge;
use crate::model::mcp::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, Revision,
};
use crate::model::vocab::ProbeOutcome;

/// The reason every classifier gives to an input a subject refused with a
/// JSON-RPC parse error: it failed the syntax guard, before any property.
pub const SYNTAX_GUARD: &str = reasons::SYNTAX_GUARD;
/// The subject exited (or closed stdout) instead of answering.
pub const SUBJECT_EXITED: &str = reasons::SUBJECT_EXITED;
/// Nothing came back in time.
pub const NO_ANSWER: &str = reasons::NO_ANSWER;
/// The subject could not be started or did not open a conversation.
pub const OPEN_FAILED: &str = reasons::OPEN_FAILED;
pub const OPEN_REFUSED: &str = reasons::OPEN_REFUSED;
/// The subject answered the evaluated revision's opening with -32601.
pub const REVISION_NOT_SPOKEN: &str = reasons::REVISION_NOT_SPOKEN;

/// A negative control's reading `c` bound by its valid twin: when the twin
/// (the control's request without its defect, sent just before on the same
/// process or conversation) was not accepted, the subject was not serving
/// such requests, so no refusal, silence or other error of the control can
/// be bound to the property (NOT_OBSERVED, `MCP_RES_VALID_TWIN_REFUSED`).
/// An accepted control stays what it is: the subject served the input the
/// property forbids, whatever it did to the twin.
pub fn twin_bound(c: (ProbeOutcome, String), twin_accepted: bool) -> (ProbeOutcome, String) {
    if twin_accepted || c.0 == ProbeOutcome::Accept {
        c
    } else {
        (
            ProbeOutcome::NotObserved,
            reasons::VALID_TWIN_REFUSED.into(),
        )
    }
}
/// The subject (or the machine) was too slow for a window within the
/// operator's bounds to decide the observation.
pub const TOO_SLOW_TO_DECIDE: &str = reasons::TOO_SLOW_TO_DECIDE;
/// The subject ended after mcpres asked it to (a signal, stdin closed):
/// not an exit of its own.
pub const ENDED_BY_RUNNER: &str = reasons::ENDED_BY_RUNNER;

/// The subject's own pace, measured by the preflight before any check:
/// every window a check waits in is derived from it, within the
/// operator's bounds (spec/profiles.md, "Timing").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timing {
    /// From the spawn to the complete answer to the opening request.
    pub startup: Option<Duration>,
    /// The slowest of a few answers to a liveness request once opened.
    pub answer: Option<Duration>,
}

/// A window is this many times what was measured.
pub const WINDOW_FACTOR: u32 = 4;
/// A window is safe only when the bound leaves at least this many times
/// what was measured.
pub const SAFE_FACTOR: u32 = 2;
/// The shortest window after a fresh start.
pub const FRESH_FLOOR: Duration = Duration::from_millis(500);
/// The shortest settle window once opened.
pub const SETTLE_FLOOR: Duration = Duration::from_millis(300);

/// `factor` x `measured`, at least `floor`, at most `bound`; `bound` when
/// nothing was measured; `Err` when `bound` leaves less than
/// [`SAFE_FACTOR`] x `measured` (no window can be made safe).
pub fn derive_window(
    measured: Option<Duration>,
    floor: Duration,
    bound: Duration,
) -> Result<Duration, Duration> {
    let Some(m) = measured else {
        return Ok(bound);
    };
    if m.saturating_mul(SAFE_FACTOR) > bound {
        return Err(m);
    }
    Ok(m.saturating_mul(WINDOW_FACTOR).max(floor).min(bound))
}

/// Everything a check needs: how to start the subject, the revision it
/// speaks, bounds, fresh request ids, and the cleanup tally of every probe.
pub struct Ctx<'a> {
    /// The subject's command (over Streamable HTTP, `None` for a server
    /// mcpres did not start).
    pub launch: Option<&'a Launch>,
    /// The Streamable HTTP target, for an HTTP run.
    pub web: Option<super::web::Web>,
    pub revision: Revision,
    /// How long the first answer may take (the subject starts meanwhile).
    pub startup: Duration,
    /// How long any later answer may take.
    pub answer: Duration,
    next_id: AtomicI64,
    /// (probes finished, probes that left something behind, descendants ever seen).
    pub tally: Mutex<Tally>,
    /// Set when the run is to stop: no further subject is started.
    pub cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The subject's pace as the preflight measured it.
    pub timing: Timing,
    /// The declared workload of an operational-resilience run.
    pub ops: Option<std::sync::Arc<crate::produce::profile::ops::workload::Workload>>,
    /// What an operational run measured once and several checks read (the positive
    /// soak, the generator's ceiling).
    pub ops_shared: crate::produce::profile::ops::Shared,
}

#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub probes: usize,
    pub leaky: Vec<String>,
    /// Probes whose sandbox held files the subject wrote and left.
    pub files_left: Vec<String>,
    /// Files a subject wrote in the storage the operational workload declares
    /// (`[storage] path`): its declared state, recorded, not counted as residue.
    pub declared_state: Vec<String>,
    pub killed: usize,
    pub descendants_seen: usize,
    /// Adopted orphans that descend from no subject a probe saw: killed,
    /// and they keep cleanup from being observed, but no check is blamed.
    pub unattributed: Vec<Value>,
    /// Processes a negative control left on purpose (the operational `cleanup`
    /// check's injected orphan), found and killed: its reading, not the run's residue.
    pub injected: Vec<String>,
}

impl<'a> Ctx<'a> {
    pub fn new(
        launch: Option<&'a Launch>,
        revision: Revision,
        startup: Duration,
        answer: Duration,
    ) -> Self {
        let mut buf = [0u8; 4];
        getrandom::fill(&mut buf).expect("the OS random source works");
        // A fresh id base per run (>= 1,000,000): a subject replaying an
        // earlier transcript answers the wrong ids.
        let base = 1_000_000 + i64::from(u32::from_le_bytes(buf) % 1_000_000_000);
        Ctx {
            launch,
            web: None,
            revision,
            startup,
            answer,
            next_id: AtomicI64::new(base),
            tally: Mutex::new(Tally::default()),
            cancel: std::sync::Arc::default(),
            timing: Timing::default(),
            ops: None,
            ops_shared: Default::default(),
        }
    }

    /// How long a fresh process is given to answer (or to show anything)
    /// after its start: [`WINDOW_FACTOR`] x its measured start-up, at least
    /// [`FRESH_FLOOR`], at most the start-up bound; `Err` with the reason
    /// when the bound leaves no safe window.
    pub fn fresh_window(&self) -> Result<Duration, String> {
        derive_window(self.timing.startup, FRESH_FLOOR, self.startup).map_err(|m| {
            format!(
                "{TOO_SLOW_TO_DECIDE}: the subject's measured start-up ({} ms) leaves no safe window within the start-up bound ({} ms)",
                m.as_millis(),
                self.startup.as_millis()
            )
        })
    }

    /// How long an opened subject is given to settle (to answer what it
    /// was sent, to write what it will, to act on a signal that asks
    /// nothing): [`WINDOW_FACTOR`] x its measured answer time, at least
    /// [`SETTLE_FLOOR`], at most the answer bound; `Err` with the reason
    /// when the bound leaves no safe window.
    pub fn settle_window(&self) -> Result<Duration, String> {
        derive_window(self.timing.answer, SETTLE_FLOOR, self.answer).map_err(|m| {
            format!(
                "{TOO_SLOW_TO_DECIDE}: the subject's measured answer time ({} ms) leaves no safe window within the answer bound ({} ms)",
                m.as_millis(),
                self.answer.as_millis()
            )
        })
    }

    /// A wait of this subject's for what it should already have done (a
    /// late answer, a child it starts, a pipe it fills): [`WINDOW_FACTOR`] x
    /// its measured answer time, at least `floor`, at most the answer bound
    /// (the floor alone when nothing was measured; the bound when it leaves
    /// no safe window: the longest wait the operator allows).
    pub fn paced(&self, floor: Duration) -> Duration {
        match self.timing.answer {
            None => floor,
            Some(m) => m
                .saturating_mul(WINDOW_FACTOR)
                .max(floor)
                .min(self.answer.max(floor)),
        }
    }

    /// The preflight's record of the timing and the windows derived from it.
    pub fn timing_record(&self) -> Value {
        let ms = |d: Option<Duration>| d.map(|d| d.as_millis() as u64);
        let window = |w: Result<Duration, String>| match w {
            Ok(d) => json!(d.as_millis() as u64),
            Err(why) => json!({"tooSlow": why}),
        };
        json!({
            "startupMs": ms(self.timing.startup),
            "answerMs": ms(self.timing.answer),
            "boundsMs": {"startup": self.startup.as_millis() as u64, "answer": self.answer.as_millis() as u64},
            "factor": WINDOW_FACTOR,
            "safeFactor": SAFE_FACTOR,
            "windowsMs": {
                "fresh": window(self.fresh_window()),
                "settle": window(self.settle_window()),
            },
        })
    }

    /// Has the run been asked to stop?
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }

    pub fn modern(&self) -> bool {
        self.revision.is_stateless()
    }

    /// A fresh request id.
    pub fn id(&self) -> Value {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        json!(id)
    }

    /// A request under the evaluated revision: on 2026-07-28 its params carry
    /// the protocol version and client capabilities in `_meta`.
    pub fn request(&self, id: &Value, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": self.params(params)})
    }

    /// `params` with the revision's `_meta` added (2026-07-28).
    pub fn params(&self, mut params: Value) -> Value {
        if self.modern() {
            let meta = params
                .as_object_mut()
                .expect("params are an object")
                .entry("_meta")
                .or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.entry(META_PROTOCOL_VERSION)
                    .or_insert_with(|| json!(self.revision.as_str()));
                meta.entry(META_CLIENT_CAPABILITIES)
                    .or_insert_with(|| json!({}));
            }
        }
        params
    }

    /// The request line of `method` with a fresh id.
    pub fn line(&self, method: &str, params: Value) -> (Value, Vec<u8>) {
        let id = self.id();
        let line = json_line(&self.request(&id, method, params));
        (id, line)
    }

    /// The stdio subject's command.
    pub fn stdio_launch(&self) -> &'a Launch {
        self.launch.expect("a stdio run has the subject's command")
    }

    /// Start a fresh subject process.
    pub fn start(&self) -> Result<Probe, String> {
        self.start_with(self.stdio_launch())
    }

    /// Start a fresh subject process from `launch`.
    pub fn start_with(&self, launch: &Launch) -> Result<Probe, String> {
        if self.cancelled() {
            return Err("the run was cancelled".into());
        }
        Probe::start(launch)
            .map_err(|e| format!("could not start {}: {e}", launch.program.display()))
    }

    /// Open a conversation: `initialize` + `notifications/initialized`
    /// (2025-11-25) or `server/discover` (2026-07-28). The answer, or why none.
    pub fn open(&self, probe: &mut Probe) -> Reply {
        let (method, params) = self.open_request();
        let (id, line) = self.line(method, params);
        probe.send(line);
        let reply = probe.reply(&id, self.startup);
        if !self.modern() && matches!(reply, Reply::Result(_)) {
            probe.send(json_line(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            ));
        }
        reply
    }

    /// The opening request's method and params.
    pub fn open_request(&self) -> (&'static str, Value) {
        if self.modern() {
            ("server/discover", json!({}))
        } else {
            ("initialize", self.initialize_params(self.revision.as_str()))
        }
    }

    pub fn initialize_params(&self, version: &str) -> Value {
        json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "mcpres-profile", "version": env!("CARGO_PKG_VERSION")},
        })
    }

    /// The request that shows a subject is still serving: `ping` (2025-11-25)
    /// or `tools/list` (2026-07-28, where `ping` is gone).
    pub fn live_line(&self) -> (Value, Vec<u8>) {
        if self.modern() {
            self.line(
                "tools/list",
                json!({"_meta": {META_CLIENT_INFO: {"name": "mcpres-profile", "version": env!("CARGO_PKG_VERSION")}}}),
            )
        } else {
            self.line("ping", json!({}))
        }
    }

    /// Send `line` (which carries request `id`, if any), then a liveness
    /// request, and gather what happened.
    pub fn exchange(&self, probe: &mut Probe, line: Vec<u8>, id: Option<&Value>) -> Evidence {
        self.exchange_within(probe, line, id, self.answer)
    }

    /// [`Ctx::exchange`] with `bound` for the liveness answer: the start-up
    /// bound when `line` is the first a fresh process reads.
    pub fn exchange_within(
        &self,
        probe: &mut Probe,
        line: Vec<u8>,
        id: Option<&Value>,
        bound: Duration,
    ) -> Evidence {
        let before = probe.stdout_lines().0.len();
        probe.send(line);
        let (live_id, live) = self.live_line();
        probe.send(live);
        let live_reply = probe.reply(&live_id, bound);
        let alive = matches!(live_reply, Reply::Result(_) | Reply::Error(..));
        // A concurrent subject may answer out of order: a little grace.
        let reply = match id {
            Some(id) if alive => probe.reply(id, self.paced(Duration::from_millis(100))),
            Some(id) => probe.reply(id, Duration::from_millis(10)),
            None => Reply::Silent,
        };
        let mut ev = self.gather(probe, before, reply, alive, Some(&live_id));
        ev.request_id = id.cloned();
        ev.live_id = Some(live_id);
        ev
    }

    /// The evidence on stdout since line `before`.
    pub fn gather(
        &self,
        probe: &mut Probe,
        before: usize,
        reply: Reply,
        alive: bool,
        live_id: Option<&Value>,
    ) -> Evidence {
        let (lines, _) = probe.stdout_lines();
        let mut ev = Evidence {
            reply: reply.into(),
            alive,
            lines: (before, lines.len()),
            ..Evidence::default()
        };
        for line in lines.iter().skip(before) {
            match serde_json::from_slice::<Value>(trim_cr(line)) {
                Ok(v) if v.is_object() => {
                    if v.get("id") == Some(&Value::Null) {
                        match v.pointer("/error/code").and_then(Value::as_i64) {
                            Some(-32700) => ev.parse_errors += 1,
                            Some(_) => ev.null_id_errors += 1,
                            None => {}
                        }
                    }
                    if v.get("id").is_some_and(|i| Some(i) != live_id) && v.get("method").is_none()
                    {
                        ev.other_responses.push(v);
                    }
                }
                Ok(Value::Array(items)) => {
                    ev.batch_results += items.iter().filter(|i| i.get("result").is_some()).count();
                }
                _ => ev.non_json_lines += 1,
            }
        }
        // The exit first, then whether the runner's ending came before it
        // (read from the same reaped status: an exit reaped between the two
        // readings would otherwise be ended by the runner with no exit).
        ev.exit = probe.try_exit().map(|s| super::probe::status_text(&s));
        ev.ended_by = if ev.exit.is_some() {
            probe.ended_by_runner()
        } else {
            None
        };
        ev.stdout_closed = probe.stdout_closed();
        ev
    }

    /// End a probe, count its cleanup, and return its transcript with the
    /// observation's summary.
    pub fn finish(&self, probe: Probe, summary: Value) -> Value {
        let (ended, mut artifact) = probe.finish();
        self.count(&ended, &artifact, false);
        artifact["observation"] = summary;
        artifact
    }

    /// [`Ctx::finish`] for a probe whose subject was made to leave a process behind
    /// on purpose: what it left is recorded as injected, not as the run's residue.
    pub fn finish_injected(&self, probe: Probe, summary: Value) -> Value {
        let (ended, mut artifact) = probe.finish();
        self.count(&ended, &artifact, true);
        artifact["observation"] = summary;
        artifact
    }

    fn count(&self, ended: &Ended, artifact: &Value, injected: bool) {
        let mut t = self.tally.lock().expect("tally lock");
        t.probes += 1;
        // What a control injected is mcpres's own process; anything else the subject
        // left is the subject's, whatever the probe.
        let own = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .map(|n| n.chars().take(15).collect::<String>());
        let (mine, theirs): (Vec<&Value>, Vec<&Value>) = ended
            .left_behind_processes
            .iter()
            .partition(|p| injected && own.is_some() && p["command"].as_str() == own.as_deref());
        t.injected.extend(mine.iter().map(|p| {
            format!(
                "{} ({}), left on purpose below the subject with pid {}",
                p["pid"],
                p["command"].as_str().unwrap_or("?"),
                artifact["pid"]
            )
        }));
        if !theirs.is_empty() {
            let what: Vec<String> = theirs
                .iter()
                .map(|p| format!("{} ({})", p["pid"], p["command"].as_str().unwrap_or("?")))
                .collect();
            t.leaky.push(format!(
                "{} process(es) left behind by the subject with pid {}: {}",
                theirs.len(),
                artifact["pid"],
                what.join(", ")
            ));
        }
        if let Some(left) = ended
            .sandbox
            .as_ref()
            .and_then(|s| s["entriesLeft"].as_array())
            .filter(|l| !l.is_empty())
        {
            let storage = self
                .ops
                .as_deref()
                .and_then(|w| w.storage.as_ref())
                .map(|s| std::path::PathBuf::from(&s.path));
            let (state, paths): (Vec<&str>, Vec<&str>) = left
                .iter()
                .filter_map(|e| e["path"].as_str())
                .partition(|p| {
                    storage
                        .as_ref()
                        .is_some_and(|dir| std::path::Path::new(p).starts_with(dir))
                });
            let pid = &artifact["pid"];
            if !paths.is_empty() {
                t.files_left.push(format!(
                    "{} file(s) left by the subject with pid {pid}: {}",
                    paths.len(),
                    paths.join(", ")
                ));
            }
            if !state.is_empty() {
                t.declared_state.push(format!(
                    "{} file(s) in the declared storage, by the subject with pid {pid}: {}",
                    state.len(),
                    state.join(", ")
                ));
            }
        }
        if ended.killed {
            t.killed += 1;
        }
        t.unattributed.extend(ended.unattributed.iter().cloned());
        t.descendants_seen += artifact["descendantsSeen"].as_array().map_or(0, Vec::len);
    }
}

/// What one exchange left on stdout.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub reply: ReplyOr,
    /// A liveness request sent after it was answered.
    pub alive: bool,
    /// `-32700` errors with a null id (the subject's syntax guard fired).
    pub parse_errors: usize,
    /// Complete stdout lines that are not JSON objects.
    pub non_json_lines: usize,
    /// Errors other than `-32700` with a null id (a refusal of a line whose
    /// id the subject did not read).
    pub null_id_errors: usize,
    /// Results inside JSON arrays (answers to a batch).
    pub batch_results: usize,
    /// Responses to ids other than the liveness request's.
    pub other_responses: Vec<Value>,
    pub exit: Option<String>,
    /// Had the subject's stdout closed when the evidence was gathered?
    pub stdout_closed: bool,
    /// What mcpres did that ended the subject (a signal, stdin closed),
    /// when it ended after that: then its end is not its own.
    pub ended_by: Option<String>,
    /// The id of the request the exchange sent, if it carried one: the judge
    /// re-reads its answer from the stored stdout.
    pub request_id: Option<Value>,
    /// The id of the liveness request sent right after it: an answer to the
    /// request that the stored stdout holds before the liveness answer was
    /// seen by the runner, whatever its timing.
    pub live_id: Option<Value>,
    /// The complete stdout lines the evidence was gathered from: from the
    /// first after those already there when the exchange began, to the last
    /// there when it was gathered (stored, so the judge counts the same lines
    /// again).
    pub lines: (usize, usize),
}

/// [`Reply`] with a default, for [`Evidence`].
#[derive(Debug, Clone, PartialEq)]
pub struct ReplyOr(pub Reply);

impl Default for ReplyOr {
    fn default() -> Self {
        ReplyOr(Reply::Silent)
    }
}

impl From<Reply> for ReplyOr {
    fn from(r: Reply) -> Self {
        ReplyOr(r)
    }
}

impl std::ops::Deref for ReplyOr {
    type Target = Reply;
    fn deref(&self) -> &Reply {
        &self.0
    }
}

impl Evidence {
    pub fn summary(&self) -> Value {
        let mut v = json!({
            "reply": self.reply.label(),
            "alive": self.alive,
            "parseErrors": self.parse_errors,
            "nullIdErrors": self.null_id_errors,
            "nonJsonStdoutLines": self.non_json_lines,
            "batchResults": self.batch_results,
            "otherResponses": self.other_responses.len(),
            "stdoutLines": [self.lines.0, self.lines.1],
            "exit": self.exit,
            "stdoutClosed": self.stdout_closed,
            "endedBy": match (&self.exit, &self.ended_by) {
                (None, _) => Value::Null,
                (Some(_), None) => json!("subject"),
                (Some(_), Some(what)) => json!({"mcpres": what}),
            },
        });
        // An id outside the safe integer range has no canonical form (the
        // safe-integer control sends one): it is not recorded.
        if let Some(id) = &self.request_id
            && (id.is_string() || id.as_i64().is_some_and(|n| n.unsigned_abs() < 1 << 53))
        {
            v["requestId"] = id.clone();
        }
        if let Some(id) = &self.live_id {
            v["liveId"] = id.clone();
        }
        v
    }

    /// The usual reading of a refusal: a result is acceptance; a parse error
    /// is the syntax guard; another error is a refusal for `refused`; silence
    /// while still serving is a refusal when `silence_refuses`; an exit is a
    /// termination.
    pub fn refusal(
        &self,
        refused: &str,
        accepted: &str,
        silence_refuses: bool,
    ) -> (ProbeOutcome, String) {
        match &*self.reply {
            Reply::Result(_) => (ProbeOutcome::Accept, accepted.into()),
            Reply::Error(-32700, _) => (ProbeOutcome::Reject, SYNTAX_GUARD.into()),
            Reply::Error(_, _) => (ProbeOutcome::Reject, refused.into()),
            Reply::Silent | Reply::Closed if self.parse_errors > 0 && self.alive => {
                (ProbeOutcome::Reject, SYNTAX_GUARD.into())
            }
            Reply::Silent if self.alive && self.null_id_errors > 0 => {
                (ProbeOutcome::Reject, refused.into())
            }
            Reply::Silent if self.alive && silence_refuses => {
                (ProbeOutcome::Reject, refused.into())
            }
            Reply::Silent if self.alive => (ProbeOutcome::NoEffect, NO_ANSWER.into()),
            _ => self.gone(),
        }
    }

    /// The reading of an exchange whose liveness request went unanswered:
    /// ended by the runner (a signal, stdin closed) before it exited; exited
    /// or with its stdout closed, the subject ending; otherwise still running
    /// with its stdout open, which is silence, not an ending
    /// (`MCP_RES_NO_ANSWER`).
    pub fn gone(&self) -> (ProbeOutcome, String) {
        if self.ended_by.is_some() {
            (ProbeOutcome::NotObserved, ENDED_BY_RUNNER.into())
        } else if self.exit.is_some() || self.stdout_closed || *self.reply == Reply::Closed {
            (ProbeOutcome::Terminate, SUBJECT_EXITED.into())
        } else {
            (ProbeOutcome::NoEffect, NO_ANSWER.into())
        }
    }
}

/// A method no server has, drawn once per run (so that a subject cannot
/// answer one constant and meet every other unknown method with silence).
pub fn unknown_method() -> String {
    static METHOD: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    METHOD
        .get_or_init(|| {
            format!(
                "mcpres/no-such-method-{}",
                crate::produce::drive::ident::random_hex(4)
            )
        })
        .clone()
}

/// The unsupported protocol version this run asks for: a date before 2000
/// drawn once per run (no released revision is that old), so that a subject
/// cannot pass by refusing one constant and serving every other unknown one.
pub fn unsupported_version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| {
        let hex = crate::produce::drive::ident::random_hex(4);
        let n = u32::from_str_radix(&hex, 16).unwrap_or(0);
        format!(
            "19{:02}-{:02}-{:02}",
            n % 100,
            (n / 100) % 12 + 1,
            (n / 1200) % 28 + 1
        )
    })
}

/// A host name that can never resolve (RFC 6761), drawn once per run, for
/// the foreign Host and Origin probes.
pub fn foreign_host() -> &'static str {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        format!(
            "mcpres-{}.invalid",
            crate::produce::drive::ident::random_hex(6)
        )
    })
}

/// A positive observation's reading of an answer: any answer is the
/// exchange completing, `held` when `ok` says the property held and `wrong`
/// otherwise; no answer is not observed; a closed stdout is the subject
/// ending.
pub fn answered_as(reply: &Reply, ok: bool, held: &str, wrong: &str) -> (ProbeOutcome, String) {
    match reply {
        Reply::Result(_) | Reply::Error(..) if ok => (ProbeOutcome::Accept, held.into()),
        Reply::Result(_) | Reply::Error(..) => (ProbeOutcome::Accept, wrong.into()),
        Reply::Silent => (ProbeOutcome::NotObserved, NO_ANSWER.into()),
        Reply::Closed => (ProbeOutcome::Terminate, SUBJECT_EXITED.into()),
    }
}

/// `v` as one JSON line.
pub fn json_line(v: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(v).expect("a JSON value serializes");
    out.push(b'\n');
    out
}

/// `line` with a JSON syntax defect: its closing brace removed (the LF kept).
pub fn syntax_defect(line: &[u8]) -> Vec<u8> {
    let mut out = line.to_vec();
    if let Some(pos) = out.iter().rposition(|&b| b == b'}') {
        out.remove(pos);
    }
    out
}

/// Does every complete stdout line parse as a JSON-RPC object?
pub fn stdout_is_protocol_only(probe: &Probe) -> (bool, usize) {
    let (lines, _) = split_lines(&probe.stdout_bytes());
    let bad = lines
        .iter()
        .filter(|l| {
            serde_json::from_slice::<Value>(trim_cr(l))
                .ok()
                .is_none_or(|v| v.get("jsonrpc") != Some(&json!("2.0")))
        })
        .count();
    (bad == 0, bad)
}

/// One observation: what was expected, what was observed, and its transcript.
#[derive(Debug, Clone)]
pub struct Obs {
    pub expected: ProbeOutcome,
    pub expected_reason: String,
    pub observed: ProbeOutcome,
    pub observed_reason: String,
    pub reached: bool,
    pub detail: String,
    pub artifact: Value,
}

impl Obs {
    /// This observation, made with the control's input broken, read as the
    /// wrong-reason mutant of a control expecting `negative_reason`.
    pub fn into_mutant(self, negative_reason: &str) -> Obs {
        mutant(
            negative_reason,
            (self.observed, self.observed_reason),
            self.detail,
            self.artifact,
        )
    }

    /// Did it come out exactly as expected (outcome and reason)? The judge's
    /// reading ([`judge::Observation::held`]).
    pub fn held(&self) -> bool {
        self.record().held()
    }

    /// The observation as its artifact records it, for the judge.
    pub fn record(&self) -> judge::Observation {
        judge::Observation {
            expected: self.expected,
            expected_reason: self.expected_reason.clone(),
            observed: self.observed,
            observed_reason: self.observed_reason.clone(),
            reached: self.reached,
            detail: self.detail.clone(),
            answer: self
                .artifact
                .pointer("/observation/reply")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    }
}

/// What a check's three probes found.
#[derive(Debug, Clone)]
pub struct CheckRun {
    pub id: &'static str,
    pub positive: Option<Obs>,
    pub negative: Option<Obs>,
    pub mutant: Option<Obs>,
    /// Why the check could not be exercised against this subject.
    pub not_observed: Option<String>,
    /// The transcript of the server the check ran against (Streamable
    /// HTTP), written beside the observations.
    pub server: Option<Value>,
}

/// A check's verdict (the judge's, [`crate::judge::profile::Verdict`]).
pub use crate::judge::profile::Verdict;

/// A check's runner.
pub type Runner = fn(&Ctx) -> CheckRun;

/// The reason a surviving mutant gives a check.
pub const MUTANT_SURVIVED: &str = reasons::WRONG_REASON_MUTANT_SURVIVED;

impl CheckRun {
    /// A check whose three observations were made.
    pub fn observed(id: &'static str, positive: Obs, negative: Obs, mutant: Obs) -> Self {
        CheckRun {
            id,
            positive: Some(positive),
            negative: Some(negative),
            mutant: Some(mutant),
            not_observed: None,
            server: None,
        }
    }

    pub fn not_observed(id: &'static str, why: impl Into<String>) -> Self {
        CheckRun {
            id,
            positive: None,
            negative: None,
            mutant: None,
            not_observed: Some(why.into()),
            server: None,
        }
    }

    /// Killed: the mutant's input was not credited with the negative
    /// control's reason (the judge's [`judge::mutant_killed`]).
    pub fn mutant_killed(&self) -> Option<bool> {
        judge::mutant_killed(
            self.mutant.as_ref().map(Obs::record).as_ref(),
            self.negative.as_ref().map(Obs::record).as_ref(),
        )
    }

    /// The verdict and its reason code and detail, as the judge gives them
    /// ([`judge::check_verdict`]): the first observation that did not hold,
    /// or a missing mutant, fails the check; a surviving mutant leaves it
    /// not observed.
    pub fn verdict(&self) -> (Verdict, String, String) {
        let [p, n, m] =
            [&self.positive, &self.negative, &self.mutant].map(|o| o.as_ref().map(Obs::record));
        let v = judge::check_verdict(
            p.as_ref(),
            n.as_ref(),
            m.as_ref(),
            self.not_observed.as_deref(),
        );
        (v.verdict, v.reason, v.detail)
    }
}

/// Build an observation from a classification.
#[allow(clippy::too_many_arguments)]
pub fn obs(
    expected: ProbeOutcome,
    expected_reason: &str,
    observed: (ProbeOutcome, String),
    reached: bool,
    detail: impl Into<String>,
    artifact: Value,
) -> Obs {
    let (observed_reason, detail) = reasons::into_code_and_detail(observed.1, detail.into());
    Obs {
        expected,
        expected_reason: expected_reason.into(),
        observed: observed.0,
        observed_reason,
        reached,
        detail,
        artifact,
    }
}

/// The observation of a probe whose subject could not be opened.
pub fn open_failed(
    expected: ProbeOutcome,
    expected_reason: &str,
    why: String,
    artifact: Value,
) -> Obs {
    obs(
        expected,
        expected_reason,
        (ProbeOutcome::NotObserved, OPEN_FAILED.into()),
        false,
        why,
        artifact,
    )
}

/// The observation of a probe whose subject did not open a conversation
/// (`open` is how it met the opening request). A -32601 to the evaluated
/// revision's opening (`server/discover` on 2026-07-28) says the subject
/// does not speak that revision: this observation's property was never
/// exercised (NOT_OBSERVED, `MCP_RES_REVISION_NOT_SPOKEN`; the checks whose
/// positive is the opening itself fail on the revision's MUST there). Any
/// other error is [`opening_refused`]; silence, a close or an exit is
/// [`open_failed`] (not observed: under load a healthy subject may be slow).
pub fn not_opened(
    ctx: &Ctx,
    expected: ProbeOutcome,
    expected_reason: &str,
    open: &Reply,
    artifact: Value,
) -> Obs {
    if ctx.modern() && open.error_code() == Some(-32601) {
        return obs(
            expected,
            expected_reason,
            (ProbeOutcome::NotObserved, REVISION_NOT_SPOKEN.into()),
            false,
            format!(
                "the subject answered {} with -32601 (method not found): it does not speak {}",
                ctx.open_request().0,
                ctx.revision.as_str()
            ),
            artifact,
        );
    }
    // A response under another id than the opening's (a string for a
    // number, say) is an answer, not silence: JSON-RPC 2.0 (§5) asks for
    // the request's own id.
    if matches!(open, Reply::Silent | Reply::Closed)
        && let Some(stray) = crate::judge::stdio::opening_misanswered(&artifact)
    {
        return opening_refused(
            expected,
            expected_reason,
            format!(
                "the subject answered {} under the id {stray}, not the request's own id",
                ctx.open_request().0
            ),
            artifact,
        );
    }
    if let Reply::Error(code, _) = open {
        return opening_refused(
            expected,
            expected_reason,
            format!(
                "the subject answered {} with the error {code}: {}",
                ctx.open_request().0,
                open.label()
            ),
            artifact,
        );
    }
    open_failed(
        expected,
        expected_reason,
        format!("the subject did not open a conversation: {}", open.label()),
        artifact,
    )
}

/// The observation of a probe whose subject answered the opening request
/// with an error (other than the -32601 to `server/discover` that says a
/// revision is not spoken): `MCP_RES_OPEN_REFUSED`, which fails the check
/// (the lifecycle's MUST to answer the opening with the server's
/// capabilities); silence, a close or an exit instead is [`open_failed`].
pub fn opening_refused(
    expected: ProbeOutcome,
    expected_reason: &str,
    why: String,
    artifact: Value,
) -> Obs {
    obs(
        expected,
        expected_reason,
        (ProbeOutcome::NotObserved, OPEN_REFUSED.into()),
        false,
        why,
        artifact,
    )
}

/// The observation of a probe no window within the operator's bounds can
/// decide (`why` from [`Ctx::fresh_window`] or [`Ctx::settle_window`]): not
/// made; the check is then not observed.
pub fn too_slow(ctx: &Ctx, expected: ProbeOutcome, expected_reason: &str, why: &str) -> Obs {
    obs(
        expected,
        expected_reason,
        (ProbeOutcome::NotObserved, TOO_SLOW_TO_DECIDE.into()),
        false,
        why.strip_prefix(TOO_SLOW_TO_DECIDE)
            .map_or(why, |w| w.trim_start_matches([':', ' '])),
        json!({"timing": ctx.timing_record()}),
    )
}

impl CheckRun {
    /// A check whose windows cannot be made safe for this subject: its
    /// positive and negative control record why (not observed).
    pub fn too_slow(
        ctx: &Ctx,
        id: &'static str,
        positive: (ProbeOutcome, &str),
        negative: (ProbeOutcome, &str),
        why: &str,
    ) -> Self {
        CheckRun {
            id,
            positive: Some(too_slow(ctx, positive.0, positive.1, why)),
            negative: Some(too_slow(ctx, negative.0, negative.1, why)),
            mutant: None,
            not_observed: None,
            server: None,
        }
    }
}

/// How a runner whose observations carry their own record reads one (the operational
/// and cache profiles: `judge::ops::reading`, `judge::cache::reading`): outcome, reason and
/// why, or `None` when the transcript holds no record of its kind.
pub type Reader = fn(&str, &str, &Value) -> Option<crate::judge::ops::Reading>;

/// An observation labelled by `read`'s reading of its record: the positive and the
/// control must give `expected`; the mutant must give `expected` too and is `reached`
/// when it was credited with the control's reason `negative`.
pub fn labelled_by(
    read: Reader,
    check: &str,
    role: &str,
    expected: (ProbeOutcome, &str),
    negative: &str,
    artifact: Value,
) -> Obs {
    let (o, reason, why) = read(check, role, &artifact).unwrap_or((
        ProbeOutcome::NotObserved,
        reasons::NO_ANSWER.into(),
        "no record of the profile's kind".into(),
    ));
    if role == "mutant" {
        mutant_expecting(expected.1, negative, (o, reason), why, artifact)
    } else {
        obs(expected.0, expected.1, (o, reason), true, why, artifact)
    }
}

/// The three observations of `check`, each made by `run(role)` and labelled by `read`:
/// the positive must give `held`, the control `negative`, the mutant `mutant` (and
/// never the control's reason).
pub fn three_by(
    read: Reader,
    check: &'static str,
    held: &'static str,
    negative: (ProbeOutcome, &'static str),
    mutant: (ProbeOutcome, &'static str),
    mut run: impl FnMut(&str) -> Value,
) -> CheckRun {
    let refused = negative.1;
    let label = |role: &str, expected, artifact| {
        labelled_by(read, check, role, expected, refused, artifact)
    };
    let positive = label("positive", (ProbeOutcome::Accept, held), run("positive"));
    let control = label("negative", negative, run("negative"));
    let mutant = label("mutant", mutant, run("mutant"));
    CheckRun::observed(check, positive, control, mutant)
}

/// [`three_by`] for a check whose positive can show that the subject does not offer
/// what the check reads: a positive `read` gives NOT_OBSERVED (for another reason than
/// `not_declared`, the record's injection not being the declared one) makes the check
/// NOT_OBSERVED with its reason, and no control is run. Otherwise the positive made
/// first is the one labelled.
pub fn three_unless_unobserved_by(
    read: Reader,
    not_declared: &str,
    check: &'static str,
    held: &'static str,
    negative: (ProbeOutcome, &'static str),
    mutant: (ProbeOutcome, &'static str),
    mut run: impl FnMut(&str) -> Value,
) -> CheckRun {
    let positive = run("positive");
    if let Some((ProbeOutcome::NotObserved, reason, why)) = read(check, "positive", &positive)
        && reason != not_declared
    {
        return CheckRun::not_observed(check, format!("{reason}: {why}"));
    }
    let mut first = Some(positive);
    three_by(read, check, held, negative, mutant, |role| {
        match (role, first.take()) {
            ("positive", Some(made)) => made,
            _ => run(role),
        }
    })
}

/// A mutant observation: `reached` when the classifier credited it with the
/// negative control's reason.
pub fn mutant(
    negative_reason: &str,
    observed: (ProbeOutcome, String),
    detail: impl Into<String>,
    artifact: Value,
) -> Obs {
    mutant_expecting(SYNTAX_GUARD, negative_reason, observed, detail, artifact)
}

/// [`mutant`] of a mutant that must meet `expected_reason` (a syntax
/// defect's `MCP_RES_SYNTAX_GUARD`, or the
/// `MCP_RES_MUTANT_REQUEST_ANSWERED` of a request that must be answered).
pub fn mutant_expecting(
    expected_reason: &str,
    negative_reason: &str,
    observed: (ProbeOutcome, String),
    detail: impl Into<String>,
    artifact: Value,
) -> Obs {
    let reached = observed.1 == negative_reason;
    let (observed_reason, detail) = reasons::into_code_and_detail(observed.1, detail.into());
    Obs {
        expected: ProbeOutcome::Reject,
        expected_reason: expected_reason.into(),
        observed: observed.0,
        observed_reason,
        reached,
        detail,
        artifact,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(reply: Reply, alive: bool, parse_errors: usize) -> Evidence {
        Evidence {
            reply: reply.into(),
            alive,
            parse_errors,
            ..Evidence::default()
        }
    }

    #[test]
    fn refusals_read_by_what_came_back() {
        let r = |e: Evidence| e.refusal("REFUSED", "ACCEPTED", false);
        assert_eq!(r(ev(Reply::Result(json!({})), true, 0)).1, "ACCEPTED");
        assert_eq!(r(ev(Reply::Error(-32601, json!({})), true, 0)).1, "REFUSED");
        assert_eq!(
            r(ev(Reply::Error(-32700, json!({})), true, 0)).1,
            SYNTAX_GUARD
        );
        assert_eq!(r(ev(Reply::Silent, true, 1)).1, SYNTAX_GUARD);
        assert_eq!(r(ev(Reply::Silent, true, 0)).1, NO_ANSWER);
        assert_eq!(r(ev(Reply::Closed, false, 0)).1, SUBJECT_EXITED);
        assert_eq!(
            ev(Reply::Silent, true, 0)
                .refusal("REFUSED", "ACCEPTED", true)
                .1,
            "REFUSED"
        );
    }

    /// A subject that closed or exited after mcpres did something that
    /// ends it (a signal, stdin closed) is never said to have exited by
    /// itself: not observed, `MCP_RES_ENDED_BY_RUNNER`; the same exit with no
    /// such act of the runner is the subject's own (`SUBJECT_EXITED`).
    #[test]
    fn an_exit_the_runner_caused_is_never_the_subjects_own() {
        let r = |e: Evidence| e.refusal("REFUSED", "ACCEPTED", false);
        for reply in [Reply::Closed, Reply::Silent] {
            let ended = Evidence {
                ended_by: Some("stdin closed".into()),
                exit: Some("exit 0".into()),
                ..ev(reply.clone(), false, 0)
            };
            assert_eq!(
                r(ended),
                (ProbeOutcome::NotObserved, ENDED_BY_RUNNER.to_string())
            );
            let own = Evidence {
                exit: Some("exit 0".into()),
                ..ev(reply, false, 0)
            };
            assert_eq!(
                r(own),
                (ProbeOutcome::Terminate, SUBJECT_EXITED.to_string())
            );
        }
        // While it still serves, what it answered decides, whatever the
        // runner did.
        let serving = Evidence {
            ended_by: Some("SIGTERM".into()),
            ..ev(Reply::Error(-32602, json!({})), true, 0)
        };
        assert_eq!(r(serving).1, "REFUSED");
    }

    /// A subject that left the liveness request unanswered while it still
    /// runs with its stdout open has not exited: its reading is silence
    /// (`MCP_RES_NO_ANSWER`), not `SUBJECT_EXITED`; the same with its stdout
    /// closed, or reaped, is its ending.
    #[test]
    fn a_subject_that_stops_answering_is_silent_not_gone() {
        let r = |e: Evidence| e.refusal("REFUSED", "ACCEPTED", false);
        assert_eq!(
            r(ev(Reply::Silent, false, 0)),
            (ProbeOutcome::NoEffect, NO_ANSWER.to_string())
        );
        let closed = Evidence {
            stdout_closed: true,
            ..ev(Reply::Silent, false, 0)
        };
        assert_eq!(
            r(closed),
            (ProbeOutcome::Terminate, SUBJECT_EXITED.to_string())
        );
        let reaped = Evidence {
            exit: Some("signal 9".into()),
            ..ev(Reply::Silent, false, 0)
        };
        assert_eq!(
            r(reaped),
            (ProbeOutcome::Terminate, SUBJECT_EXITED.to_string())
        );
    }

    #[test]
    fn the_reasons_are_the_judges() {
        assert_eq!(NO_ANSWER, judge::NO_ANSWER);
        assert_eq!(SYNTAX_GUARD, judge::SYNTAX_GUARD);
        assert_eq!(
            reasons::MUTANT_REQUEST_ANSWERED,
            judge::MUTANT_REQUEST_ANSWERED
        );
        assert_eq!(MUTANT_SURVIVED, judge::MUTANT_SURVIVED);
    }

    #[test]
    fn windows_follow_the_measured_pace_within_the_bounds() {
        let ms = Duration::from_millis;
        let floor = ms(300);
        // Nothing measured: the operator's bound.
        assert_eq!(derive_window(None, floor, ms(5000)), Ok(ms(5000)));
        // Fast: the floor; slower: 4 x what was measured; capped by the bound.
        assert_eq!(derive_window(Some(ms(1)), floor, ms(5000)), Ok(floor));
        assert_eq!(derive_window(Some(ms(200)), floor, ms(5000)), Ok(ms(800)));
        assert_eq!(derive_window(Some(ms(2000)), floor, ms(5000)), Ok(ms(5000)));
        // The bound leaves less than 2 x what was measured: no safe window.
        assert_eq!(
            derive_window(Some(ms(3000)), floor, ms(5000)),
            Err(ms(3000))
        );
        let launch = Launch {
            program: "/bin/true".into(),
            args: vec![],
            env: Default::default(),
            sandbox: None,
        };
        let mut ctx = Ctx::new(Some(&launch), Revision::V2025_11_25, ms(1000), ms(1000));
        ctx.timing.startup = Some(ms(800));
        let why = ctx.fresh_window().unwrap_err();
        assert!(why.starts_with(TOO_SLOW_TO_DECIDE), "{why}");
        let o = too_slow(&ctx, ProbeOutcome::Accept, "R", &why);
        assert_eq!(o.observed_reason, TOO_SLOW_TO_DECIDE);
        let c = CheckRun::too_slow(
            &ctx,
            "x",
            (ProbeOutcome::Accept, "R"),
            (ProbeOutcome::Reject, "S"),
            &why,
        );
        assert_eq!(c.verdict().0, Verdict::NotObserved);
        assert_eq!(c.verdict().1, TOO_SLOW_TO_DECIDE);
    }

    #[test]
    fn a_syntax_defect_breaks_the_json() {
        let line = json_line(&json!({"a": {"b": 1}}));
        let broken = syntax_defect(&line);
        assert!(serde_json::from_slice::<Value>(&broken).is_err());
        assert_eq!(broken.last(), Some(&b'\n'));
    }

    fn o(held: bool, reason: &str) -> Obs {
        obs(
            ProbeOutcome::Reject,
            "R",
            (
                ProbeOutcome::Reject,
                if held { "R".into() } else { reason.into() },
            ),
            true,
            "",
            json!({}),
        )
    }

    #[test]
    fn a_check_passes_only_with_both_observations_and_a_killed_mutant() {
        let mut c = CheckRun {
            id: "x",
            positive: Some(o(true, "")),
            negative: Some(o(true, "")),
            mutant: Some(mutant(
                "R",
                (ProbeOutcome::Reject, SYNTAX_GUARD.into()),
                "",
                json!({}),
            )),
            not_observed: None,
            server: None,
        };
        assert_eq!(c.verdict().0, Verdict::Pass);
        c.mutant = Some(mutant(
            "R",
            (ProbeOutcome::Reject, "R".into()),
            "",
            json!({}),
        ));
        assert_eq!(c.verdict().0, Verdict::NotObserved);
        assert_eq!(c.verdict().1, MUTANT_SURVIVED);
        c.mutant = None;
        assert_eq!(c.verdict().0, Verdict::NotObserved);
        c.negative = Some(o(false, "OTHER"));
        assert_eq!(c.verdict().1, "OTHER");
        assert_eq!(
            CheckRun::not_observed("x", "why").verdict().0,
            Verdict::NotObserved
        );
    }
}
