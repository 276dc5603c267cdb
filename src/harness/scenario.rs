//! Built-in scenarios and the harness's own oracles.
//!
//! A scenario is a clean control plus negative controls. Each negative control
//! names a fault of the reference server's taxonomy (injected by the subject
//! itself through `--fault ID@TRIGGER --seed S`), the verdict and stop reason a
//! correct oracle must reach, and a mutant: a deliberately weakened oracle that
//! must *not* reach that outcome on the same recorded bytes.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::subject::{Frame, Next, Session};

/// The protocol revision the built-in scenarios speak.
pub const PROTOCOL_REVISION: &str = "2025-11-25";
/// Verdict of an oracle that accepts.
pub const ACCEPT: &str = "PASS";
/// Verdict of an oracle that rejects.
pub const REJECT: &str = "REJECT";
/// Stop reason of an exchange every check accepted.
pub const COMPLETED: &str = "COMPLETED";

/// A weakened oracle: one check removed or loosened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutant {
    /// The real oracle.
    None,
    /// Only checks that `result` is an object, not its members.
    SkipResultShape,
    /// Takes the first response-shaped message whatever its id.
    IgnoreIds,
    /// Decodes frames lossily (invalid UTF-8 becomes U+FFFD) instead of rejecting them.
    LossyDecode,
}

impl Mutant {
    pub fn id(self) -> &'static str {
        match self {
            Mutant::None => "oracle",
            Mutant::SkipResultShape => "mutant/oracle-skips-result-shape",
            Mutant::IgnoreIds => "mutant/oracle-ignores-response-ids",
            Mutant::LossyDecode => "mutant/oracle-decodes-lossily",
        }
    }
}

/// One negative control of a scenario.
#[derive(Debug, Clone)]
pub struct NegativeControl {
    /// Short name, used in operation and artifact names.
    pub name: String,
    /// Reference-server fault id (FAULT_TAXONOMY.json) or harness wire fault.
    pub fault: String,
    /// The taxonomy boundary the fault acts on.
    pub boundary: String,
    /// The taxonomy's expected effect.
    pub expected_effect: String,
    pub property: String,
    pub expected_verdict: String,
    pub expected_stop: String,
    pub mutant: Mutant,
    /// What triggers the fault (recorded in the evidence).
    pub trigger: String,
    /// Who injects the fault: the subject (its `--fault` flag) or the harness.
    pub injector: Injector,
    /// Prerequisites that must all be reached for the property to count as reached.
    pub prerequisites: Vec<String>,
}

/// Who injects a negative control's fault, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Injector {
    /// The subject itself, through the reference server's `--fault` flag.
    SubjectFlag,
    /// The harness, on the wire (see `wire.rs`): invalid UTF-8 inserted into the frame.
    WireCorruptUtf8,
    /// The harness, on the wire: the response frame delivered twice.
    WireDuplicate,
    /// The harness, on the wire: a required member removed from the result.
    WireStripResult,
}

impl Injector {
    /// The fault method recorded in the scenario descriptor.
    pub fn method(self) -> &'static str {
        match self {
            Injector::SubjectFlag => "SUBJECT_FAULT_FLAG",
            _ => "HARNESS_WIRE_PROXY",
        }
    }
}

/// A finite recovery policy: how often, how long and how far apart the
/// harness retries, and what makes a retry safe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryPolicy {
    pub id: String,
    pub retry_limit: u32,
    pub initial_backoff_ms: u64,
    pub max_backoff_ms: u64,
    pub attempt_timeout_ms: u64,
    pub time_limit_ms: u64,
    pub cancellation_boundary: String,
    pub side_effect_model: String,
    pub safety_mechanism: String,
}

impl RecoveryPolicy {
    /// Backoff before retry `attempt` (1-based): the initial backoff doubled
    /// for each earlier retry, capped at the maximum.
    pub fn backoff_ms(&self, attempt: u32) -> u64 {
        let doublings = attempt.saturating_sub(1).min(20);
        self.initial_backoff_ms
            .saturating_mul(1u64 << doublings)
            .min(self.max_backoff_ms)
    }
}

/// A recovery control: a transient subject fault in the first attempt of an
/// idempotent call, recovered under a policy (see `recovery.rs`).
#[derive(Debug, Clone)]
pub struct RecoveryControl {
    pub name: String,
    pub fault: String,
    pub boundary: String,
    pub policy: RecoveryPolicy,
    pub expect_recovered: bool,
}

/// A fault on the client-to-server path (see `client.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFaultKind {
    /// A request line cut off in the middle of the JSON text.
    TruncatedJson,
    /// A request whose string holds bytes that are not UTF-8.
    InvalidUtf8,
    /// A well-formed request for a method no server has.
    UnknownMethod,
    /// `tools/call` without the required `name`.
    CallWithoutName,
    /// Well-formed JSON that is not a JSON-RPC message.
    NotJsonRpc,
}

impl ClientFaultKind {
    pub fn id(self) -> &'static str {
        match self {
            ClientFaultKind::TruncatedJson => "client-truncated-json",
            ClientFaultKind::InvalidUtf8 => "client-invalid-utf8",
            ClientFaultKind::UnknownMethod => "client-unknown-method",
            ClientFaultKind::CallWithoutName => "client-call-without-name",
            ClientFaultKind::NotJsonRpc => "client-not-jsonrpc",
        }
    }
}

/// One client-to-server fault of a scenario.
#[derive(Debug, Clone)]
pub struct ClientFault {
    pub name: String,
    pub kind: ClientFaultKind,
    /// The subject must answer with a JSON-RPC error (else an error or silence).
    pub error_required: bool,
    /// `SURVIVE`: any answer is recorded (even a result); only staying alive counts.
    pub accept_allowed: bool,
    /// The error code the answer must carry, when one is named.
    pub error_code: Option<i64>,
}

impl ClientFault {
    pub fn expect_label(&self) -> &'static str {
        match (self.error_required, self.accept_allowed) {
            (true, _) => "ERROR",
            (false, false) => "ERROR_OR_SILENCE",
            (false, true) => "SURVIVE",
        }
    }
}

/// A scenario: built in (`scenarios/*.toml`, compiled in) or from a file.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// Budget for one request/response exchange.
    pub exchange_budget_ms: u64,
    pub negatives: Vec<NegativeControl>,
    /// The clean control's steps, as recorded in the scenario descriptor.
    pub clean_steps: Vec<String>,
    /// `true` for the generic driver (arbitrary servers).
    pub generic: bool,
    /// The MCP revision to speak.
    pub protocol_revision: String,
    pub default_trials: Option<usize>,
    pub default_seed: Option<u32>,
    /// The run must end within this time.
    pub scenario_duration_ms: u64,
    pub recovery_policies: Vec<RecoveryPolicy>,
    pub recoveries: Vec<RecoveryControl>,
    pub client_faults: Vec<ClientFault>,
    /// The checked scenario document: what the scenario descriptor records.
    pub document: Value,
}

/// Trigger used for every negative control's fault: only the `add` tool call is
/// faulted, so the clean control (which calls `echo`) is never affected.
pub const FAULT_TRIGGER: &str = "tool-add";

/// The built-in scenarios.
pub fn builtins() -> Vec<Scenario> {
    super::scenario_file::builtins()
}

/// The default scenario's name.
pub const DEFAULT_SCENARIO: &str = "reference-faults";

/// Find a built-in scenario by name (`default` is an alias of the default one).
pub fn find(name: &str) -> Option<Scenario> {
    let name = if name == "default" {
        DEFAULT_SCENARIO
    } else {
        name
    };
    builtins().into_iter().find(|s| s.name == name)
}

/// What an oracle concluded about one exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub verdict: &'static str,
    pub stop_reason: &'static str,
    pub detail: String,
}

impl Judgement {
    fn reject(stop_reason: &'static str, detail: impl Into<String>) -> Self {
        Judgement {
            verdict: REJECT,
            stop_reason,
            detail: detail.into(),
        }
    }
    pub fn accepted(&self) -> bool {
        self.verdict == ACCEPT
    }
    pub fn to_json(&self) -> Value {
        json!({"verdict": self.verdict, "stopReason": self.stop_reason, "detail": self.detail})
    }
}

/// Checks of a result's members: `None` when acceptable, else a stop reason and detail.
pub type ResultCheck = dyn Fn(&Value, Mutant) -> Option<(&'static str, String)>;

/// Judge the frames received after sending request `id` at `sent_ms`.
pub fn judge(
    id: i64,
    frames: &[Frame],
    sent_ms: u64,
    budget_ms: u64,
    mutant: Mutant,
    check: &ResultCheck,
) -> Judgement {
    let mut responses: Vec<(Value, u64)> = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let text = match std::str::from_utf8(&f.bytes) {
            Ok(t) => t.to_string(),
            Err(e) if mutant != Mutant::LossyDecode => {
                return Judgement::reject(
                    "INVALID_UTF8",
                    format!("frame {i} is not valid UTF-8 ({e})"),
                );
            }
            Err(_) => String::from_utf8_lossy(&f.bytes).into_owned(),
        };
        let Ok(msg) = serde_json::from_str::<Value>(&text) else {
            return Judgement::reject("INVALID_JSON", format!("frame {i} is not JSON"));
        };
        if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") || !msg.is_object() {
            return Judgement::reject(
                "INVALID_JSONRPC",
                format!("frame {i} is not a JSON-RPC 2.0 message"),
            );
        }
        let is_response = msg.get("method").is_none()
            && (msg.get("result").is_some() || msg.get("error").is_some());
        if is_response {
            responses.push((msg, f.at_ms));
        }
    }
    let matching: Vec<&(Value, u64)> = if mutant == Mutant::IgnoreIds {
        responses.iter().take(1).collect()
    } else {
        if let Some((other, _)) = responses.iter().find(|(m, _)| m["id"] != json!(id)) {
            return Judgement::reject(
                "UNSOLICITED_RESPONSE_ID",
                format!(
                    "a response carries id {}, which was never sent",
                    other["id"]
                ),
            );
        }
        responses.iter().collect()
    };
    if matching.len() > 1 {
        return Judgement::reject(
            "DUPLICATE_RESPONSE",
            format!("{} responses for id {id}", matching.len()),
        );
    }
    let Some((response, at_ms)) = matching.first() else {
        return Judgement::reject("NO_RESPONSE", format!("no response for id {id}"));
    };
    let took = at_ms.saturating_sub(sent_ms);
    if took > budget_ms {
        return Judgement::reject(
            "TIMING_BUDGET_EXCEEDED",
            format!("response after {took} ms; the budget is {budget_ms} ms"),
        );
    }
    if let Some(error) = response.get("error") {
        return Judgement::reject("ERROR_RESPONSE", format!("error response: {error}"));
    }
    let Some(result) = response.get("result").filter(|r| r.is_object()) else {
        return Judgement::reject("SCHEMA_VIOLATION", "result is not an object");
    };
    if let Some((stop, detail)) = check(result, mutant) {
        return Judgement::reject(stop, detail);
    }
    Judgement {
        verdict: ACCEPT,
        stop_reason: COMPLETED,
        detail: format!("response for id {id} accepted after {took} ms"),
    }
}

/// `initialize` result: protocol version and server identity.
pub fn check_initialize(result: &Value, mutant: Mutant) -> Option<(&'static str, String)> {
    if mutant == Mutant::SkipResultShape {
        return None;
    }
    if !result.get("protocolVersion").is_some_and(Value::is_string) {
        return Some((
            "SCHEMA_VIOLATION",
            "initialize result lacks protocolVersion".into(),
        ));
    }
    if !result.get("capabilities").is_some_and(Value::is_object) {
        return Some((
            "SCHEMA_VIOLATION",
            "initialize result lacks capabilities".into(),
        ));
    }
    if !result
        .pointer("/serverInfo/name")
        .is_some_and(Value::is_string)
        || !result
            .pointer("/serverInfo/version")
            .is_some_and(Value::is_string)
    {
        return Some((
            "SCHEMA_VIOLATION",
            "initialize result lacks serverInfo name/version".into(),
        ));
    }
    None
}

/// `tools/list` result: named tools with an input schema, including `tool`.
pub fn check_tools_list(
    tool: Option<&'static str>,
) -> impl Fn(&Value, Mutant) -> Option<(&'static str, String)> {
    move |result, mutant| {
        if mutant == Mutant::SkipResultShape {
            return None;
        }
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return Some(("SCHEMA_VIOLATION", "tools/list result lacks tools".into()));
        };
        if tools.iter().any(|t| {
            !t.get("name").is_some_and(Value::is_string)
                || !t.get("inputSchema").is_some_and(Value::is_object)
        }) {
            return Some((
                "SCHEMA_VIOLATION",
                "a tool lacks name or inputSchema".into(),
            ));
        }
        if let Some(tool) = tool
            && !tools.iter().any(|t| t["name"] == tool)
        {
            return Some(("MISSING_TOOL", format!("tools/list does not list {tool:?}")));
        }
        None
    }
}

/// `tools/call` result: a content array of typed blocks, not an error, whose
/// first text block is `expected`.
pub fn check_call(expected: String) -> impl Fn(&Value, Mutant) -> Option<(&'static str, String)> {
    move |result, mutant| {
        let content = result.get("content");
        if mutant != Mutant::SkipResultShape {
            let Some(blocks) = content.and_then(Value::as_array) else {
                return Some(("SCHEMA_VIOLATION", "tools/call result lacks content".into()));
            };
            if blocks
                .iter()
                .any(|b| !b.get("type").is_some_and(Value::is_string))
            {
                return Some(("SCHEMA_VIOLATION", "a content block lacks type".into()));
            }
        }
        if result.get("isError") == Some(&Value::Bool(true)) {
            return Some(("TOOL_ERROR", format!("tool reported an error: {result}")));
        }
        if let Some(blocks) = content.and_then(Value::as_array) {
            let text = blocks
                .iter()
                .find(|b| b["type"] == "text")
                .and_then(|b| b.get("text"))
                .and_then(Value::as_str);
            if text != Some(expected.as_str()) {
                return Some((
                    "WRONG_RESULT",
                    format!("expected text {expected:?}, got {text:?}"),
                ));
            }
        }
        None
    }
}

pub(crate) fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub(crate) fn initialize_request(id: i64) -> Value {
    request(
        id,
        "initialize",
        json!({
            "protocolVersion": PROTOCOL_REVISION,
            "capabilities": {},
            "clientInfo": {"name": "mcpres-harness", "version": env!("CARGO_PKG_VERSION")},
        }),
    )
}

/// Read frames until one answers `id` (or EOF, or the deadline).
pub(crate) async fn collect(
    session: &mut Session,
    id: i64,
    deadline: Instant,
) -> (Vec<Frame>, &'static str) {
    let mut frames = Vec::new();
    loop {
        match session.next(deadline).await {
            Next::Frame(f) => {
                let answers = std::str::from_utf8(&f.bytes)
                    .ok()
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    .is_some_and(|m| m.get("method").is_none() && m["id"] == json!(id));
                frames.push(f);
                if answers {
                    return (frames, "ANSWERED");
                }
            }
            Next::Eof => return (frames, "EOF"),
            Next::Deadline => return (frames, "DEADLINE"),
        }
    }
}

/// Read every remaining frame until EOF or the deadline.
pub(crate) async fn drain(session: &mut Session, deadline: Instant) -> (Vec<Frame>, &'static str) {
    let mut frames = Vec::new();
    loop {
        match session.next(deadline).await {
            Next::Frame(f) => frames.push(f),
            Next::Eof => return (frames, "EOF"),
            Next::Deadline => return (frames, "DEADLINE"),
        }
    }
}

/// One checked step of a control: the oracle's judgement and the frames judged.
#[derive(Debug, Clone)]
pub struct Step {
    pub method: &'static str,
    pub id: i64,
    pub sent_ms: u64,
    pub frames: usize,
    pub ended_by: &'static str,
    pub judgement: Judgement,
}

impl Step {
    pub fn to_json(&self) -> Value {
        json!({
            "method": self.method, "id": self.id, "sentOffsetMs": self.sent_ms,
            "framesJudged": self.frames, "collectionEndedBy": self.ended_by,
            "judgement": self.judgement.to_json(),
        })
    }
}

/// The clean control's outcome.
#[derive(Debug, Clone)]
pub struct CleanOutcome {
    pub steps: Vec<Step>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    /// At least one request got a well-formed JSON-RPC response.
    pub round_trip: bool,
    pub passed: bool,
    pub stop_reason: &'static str,
}

pub(crate) fn budget(scenario: &Scenario) -> Duration {
    Duration::from_millis(scenario.exchange_budget_ms)
}

pub(crate) async fn exchange(
    session: &mut Session,
    scenario: &Scenario,
    method: &'static str,
    id: i64,
    message: Value,
    check: &ResultCheck,
) -> Result<(Step, Vec<Frame>), super::subject::SubjectError> {
    let sent_ms = session.send(&message).await?;
    let (frames, ended_by) = collect(
        session,
        id,
        Instant::now() + budget(scenario) + budget(scenario),
    )
    .await;
    let judgement = judge(
        id,
        &frames,
        sent_ms,
        scenario.exchange_budget_ms,
        Mutant::None,
        check,
    );
    Ok((
        Step {
            method,
            id,
            sent_ms,
            frames: frames.len(),
            ended_by,
            judgement,
        },
        frames,
    ))
}

/// The clean control: initialize, notifications/initialized, tools/list,
/// tools/call echo, then stdin EOF and a check that nothing unasked follows.
pub async fn run_clean(session: &mut Session, scenario: &Scenario, probe: &str) -> CleanOutcome {
    let mut out = CleanOutcome {
        steps: Vec::new(),
        server_name: None,
        server_version: None,
        round_trip: false,
        passed: false,
        stop_reason: "NOT_STARTED",
    };
    let finish = |out: &mut CleanOutcome, stop: &'static str| {
        out.stop_reason = stop;
        out.passed = stop == COMPLETED;
    };
    let init = exchange(
        session,
        scenario,
        "initialize",
        1,
        initialize_request(1),
        &check_initialize,
    )
    .await;
    let Ok((step, frames)) = init else {
        finish(&mut out, "SUBJECT_UNWRITABLE");
        return out;
    };
    if let Some(result) = frames.iter().rev().find_map(|f| {
        serde_json::from_slice::<Value>(&f.bytes)
            .ok()
            .filter(|m| m["id"] == json!(1))
            .and_then(|m| m.get("result").cloned())
    }) {
        out.round_trip = true;
        out.server_name = result
            .pointer("/serverInfo/name")
            .and_then(Value::as_str)
            .map(String::from);
        out.server_version = result
            .pointer("/serverInfo/version")
            .and_then(Value::as_str)
            .map(String::from);
    }
    let stop = step.judgement.stop_reason;
    let ok = step.judgement.accepted();
    out.steps.push(step);
    if !ok {
        finish(&mut out, stop);
        return out;
    }
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    if session.send(&note).await.is_err() {
        finish(&mut out, "SUBJECT_UNWRITABLE");
        return out;
    }
    let list_check = check_tools_list(Some("echo"));
    let call_check = check_call(probe.to_string());
    let calls: [(&'static str, i64, Value, &ResultCheck); 2] = [
        (
            "tools/list",
            2,
            request(2, "tools/list", json!({})),
            &list_check,
        ),
        (
            "tools/call",
            3,
            request(
                3,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": probe}}),
            ),
            &call_check,
        ),
    ];
    for (method, id, message, check) in calls {
        let Ok((step, _)) = exchange(session, scenario, method, id, message, check).await else {
            finish(&mut out, "SUBJECT_UNWRITABLE");
            return out;
        };
        let stop = step.judgement.stop_reason;
        let ok = step.judgement.accepted();
        out.steps.push(step);
        if !ok {
            finish(&mut out, stop);
            return out;
        }
    }
    let step = shutdown_step(session, scenario).await;
    let stop = step.judgement.stop_reason;
    out.steps.push(step);
    finish(&mut out, stop);
    out
}

/// Shutdown: stdin EOF; whatever the subject still writes must not be a
/// response, and stdout must close within the budget.
pub(crate) async fn shutdown_step(session: &mut Session, scenario: &Scenario) -> Step {
    // Shutdown: stdin EOF; whatever the subject still writes must not be a response.
    session.close_stdin();
    let (frames, ended_by) = drain(session, Instant::now() + budget(scenario)).await;
    let stray = frames.iter().position(|f| {
        serde_json::from_slice::<Value>(&f.bytes)
            .map(|m| m.get("method").is_none())
            .unwrap_or(true)
    });
    let judgement = match stray {
        Some(i) => Judgement::reject(
            "UNEXPECTED_FRAME_AFTER_SHUTDOWN",
            format!("frame {i} after stdin EOF is not a notification"),
        ),
        None if ended_by == "DEADLINE" => Judgement::reject(
            "STDOUT_NOT_CLOSED",
            "stdout stayed open after stdin EOF for the whole budget",
        ),
        None => Judgement {
            verdict: ACCEPT,
            stop_reason: COMPLETED,
            detail: if session.is_http() {
                "every HTTP exchange complete and the MCP session closed (DELETE when a session id was issued)".into()
            } else {
                "stdout closed after stdin EOF".into()
            },
        },
    };
    Step {
        method: "shutdown",
        id: 0,
        sent_ms: session.now_ms(),
        frames: frames.len(),
        ended_by,
        judgement,
    }
}

/// A negative control's outcome: the real oracle's and the mutant's judgement
/// of the same frames, and which prerequisites were reached.
#[derive(Debug, Clone)]
pub struct NegativeOutcome {
    pub prerequisites: Vec<&'static str>,
    pub observed: Option<Judgement>,
    pub mutant: Option<Judgement>,
    pub call_sent_ms: u64,
    pub frames: usize,
}

/// The negative controls' arguments: appended to the subject's argv.
pub fn fault_args(
    neg: &NegativeControl,
    seed: u64,
    injection_log: &std::path::Path,
) -> Vec<String> {
    vec![
        "--fault".into(),
        format!("{}@{FAULT_TRIGGER}", neg.fault),
        "--seed".into(),
        seed.to_string(),
        "--injection-log".into(),
        injection_log.display().to_string(),
    ]
}

/// The expected `add` result text.
pub const ADD_ARGS: (i64, i64) = (2, 3);

/// The start every negative control shares: initialize (judged), then the
/// `notifications/initialized` notification. `Err` carries the outcome so far
/// when the session could not be opened.
pub async fn open_negative(
    session: &mut Session,
    scenario: &Scenario,
) -> Result<NegativeOutcome, NegativeOutcome> {
    let mut out = NegativeOutcome {
        prerequisites: vec!["PROCESS_SPAWNED"],
        observed: None,
        mutant: None,
        call_sent_ms: 0,
        frames: 0,
    };
    let Ok((step, _)) = exchange(
        session,
        scenario,
        "initialize",
        1,
        initialize_request(1),
        &check_initialize,
    )
    .await
    else {
        return Err(out);
    };
    if !step.judgement.accepted() {
        return Err(out);
    }
    out.prerequisites.push("SESSION_INITIALIZED");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    if session.send(&note).await.is_err() {
        return Err(out);
    }
    Ok(out)
}

/// Drive one negative control: initialize, tools/call add (the faulted call),
/// stdin EOF, everything the subject writes until EOF, then both oracles.
pub async fn run_negative(
    session: &mut Session,
    scenario: &Scenario,
    neg: &NegativeControl,
) -> NegativeOutcome {
    let mut out = match open_negative(session, scenario).await {
        Ok(out) => out,
        Err(out) => return out,
    };
    let call = request(
        2,
        "tools/call",
        json!({"name": "add", "arguments": {"a": ADD_ARGS.0, "b": ADD_ARGS.1}}),
    );
    let Ok(sent) = session.send(&call).await else {
        return out;
    };
    out.call_sent_ms = sent;
    out.prerequisites.push("TOOL_CALL_SENT");
    session.close_stdin();
    let (frames, ended_by) = drain(
        session,
        Instant::now() + budget(scenario) + budget(scenario),
    )
    .await;
    out.frames = frames.len();
    if ended_by == "EOF" {
        out.prerequisites.push("SUBJECT_OUTPUT_COMPLETE");
    }
    let check = check_call((ADD_ARGS.0 + ADD_ARGS.1).to_string());
    out.observed = Some(judge(
        2,
        &frames,
        sent,
        scenario.exchange_budget_ms,
        Mutant::None,
        &check,
    ));
    out.mutant = Some(judge(
        2,
        &frames,
        sent,
        scenario.exchange_budget_ms,
        neg.mutant,
        &check,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(s: &[u8], at: u64) -> Frame {
        Frame {
            bytes: s.to_vec(),
            at_ms: at,
        }
    }

    fn add_check() -> impl Fn(&Value, Mutant) -> Option<(&'static str, String)> {
        check_call("5".into())
    }

    #[test]
    fn oracle_accepts_a_good_call_and_rejects_each_fault_while_its_mutant_does_not() {
        let good = br#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}]}}"#;
        let c = add_check();
        assert!(judge(2, &[frame(good, 5)], 0, 100, Mutant::None, &c).accepted());
        // Timing budget.
        assert_eq!(
            judge(2, &[frame(good, 500)], 0, 100, Mutant::None, &c).stop_reason,
            "TIMING_BUDGET_EXCEEDED"
        );
        // schema-violation: content removed.
        let no_content = br#"{"jsonrpc":"2.0","id":2,"result":{"structuredContent":{"sum":5}}}"#;
        assert_eq!(
            judge(2, &[frame(no_content, 1)], 0, 100, Mutant::None, &c).stop_reason,
            "SCHEMA_VIOLATION"
        );
        assert!(
            judge(
                2,
                &[frame(no_content, 1)],
                0,
                100,
                Mutant::SkipResultShape,
                &c
            )
            .accepted()
        );
        // reorder: an unsolicited id first.
        let stray =
            br#"{"jsonrpc":"2.0","id":1000002,"result":{"content":[{"type":"text","text":"5"}]}}"#;
        let frames = [frame(stray, 1), frame(good, 2)];
        assert_eq!(
            judge(2, &frames, 0, 100, Mutant::None, &c).stop_reason,
            "UNSOLICITED_RESPONSE_ID"
        );
        assert!(judge(2, &frames, 0, 100, Mutant::IgnoreIds, &c).accepted());
        // malformed-message: invalid UTF-8 inside a string.
        let mut bad = good.to_vec();
        bad.splice(60..60, [0xC3, 0x28]);
        assert_eq!(
            judge(2, &[frame(&bad, 1)], 0, 100, Mutant::None, &c).stop_reason,
            "INVALID_UTF8"
        );
        assert_ne!(
            judge(2, &[frame(&bad, 1)], 0, 100, Mutant::LossyDecode, &c).stop_reason,
            "INVALID_UTF8"
        );
        // Duplicates, errors, missing responses, wrong results.
        assert_eq!(
            judge(
                2,
                &[frame(good, 1), frame(good, 2)],
                0,
                100,
                Mutant::None,
                &c
            )
            .stop_reason,
            "DUPLICATE_RESPONSE"
        );
        assert_eq!(
            judge(2, &[], 0, 100, Mutant::None, &c).stop_reason,
            "NO_RESPONSE"
        );
        let err = br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"x"}}"#;
        assert_eq!(
            judge(2, &[frame(err, 1)], 0, 100, Mutant::None, &c).stop_reason,
            "ERROR_RESPONSE"
        );
        let wrong =
            br#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"6"}]}}"#;
        assert_eq!(
            judge(2, &[frame(wrong, 1)], 0, 100, Mutant::None, &c).stop_reason,
            "WRONG_RESULT"
        );
        assert_eq!(
            judge(2, &[frame(b"{", 1)], 0, 100, Mutant::None, &c).stop_reason,
            "INVALID_JSON"
        );
    }

    #[test]
    fn builtin_scenarios_have_distinct_expectations_and_mutants() {
        let s = find("default").unwrap();
        assert_eq!(s.name, DEFAULT_SCENARIO);
        assert!(s.negatives.len() >= 3);
        for n in &s.negatives {
            assert_ne!(n.mutant, Mutant::None);
            assert_eq!(n.expected_verdict, REJECT);
        }
        assert!(find("no-such-scenario").is_none());
    }
}
