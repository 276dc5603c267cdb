//! Driving a scenario's controls against a session: the requests each control
//! sends, how answers are collected, and the outcomes handed to the evidence.
//! The scenario definition is in `vocab.rs`, its judgement in `oracle.rs`.
//!
//! A scenario is a clean control plus negative controls. Each negative control
//! names a fault of the reference server's taxonomy (injected by the subject
//! itself through `--fault ID@TRIGGER --seed S`), the verdict and stop reason a
//! correct oracle must reach, and a mutant: a deliberately weakened oracle that
//! must *not* reach that outcome on the same recorded bytes.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::oracle::{
    Judgement, ResultCheck, answer_of, answers_digest, check_call, check_discover,
    check_initialize, check_tools_list, complete_result, judge, server_identity,
};
use super::record::Frame;
use super::subject::{Next, Session};
use super::vocab::{
    ACCEPT, COMPLETED, FAULT_TRIGGER, META_CLIENT_CAPABILITIES, META_CLIENT_INFO,
    META_PROTOCOL_VERSION, Mutant, NegativeControl, PROTOCOL_REVISION, Revision, Scenario,
};

/// The built-in scenarios.
pub fn builtins() -> Vec<Scenario> {
    super::scenario_file::builtins()
}

/// Find a built-in scenario by name (`default` is an alias of the default one).
pub fn find(name: &str) -> Option<Scenario> {
    super::scenario_file::builtin(name)
}

/// A fresh, unpredictable JSON-RPC request id base for one control. Every
/// request of a control uses `base + k`, so an answer is bound to the request
/// that caused it: a subject that replays a transcript, or answers without
/// reading its input, cannot know the ids.
pub fn fresh_id() -> i64 {
    let mut buf = [0u8; 4];
    getrandom::fill(&mut buf).expect("the OS random source works");
    // Safe for every JSON number reader, with room for `base + k` and for the
    // reference server's reorder fault (`id + 1_000_000`).
    1_000_000 + i64::from(u32::from_le_bytes(buf) % 1_000_000_000)
}

/// A fresh random token (hex) for probe texts and the names of things a
/// subject must not know in advance.
pub fn fresh_token() -> String {
    let mut buf = [0u8; 8];
    getrandom::fill(&mut buf).expect("the OS random source works");
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A request as `revision` sends it: on 2026-07-28 `params._meta` carries the
/// protocol version, the client capabilities and the client identity.
pub(crate) fn rpc(revision: Revision, id: i64, method: &str, params: Value) -> Value {
    let mut params = if params.is_object() {
        params
    } else {
        json!({})
    };
    if revision.is_stateless() {
        params["_meta"] = json!({
            META_PROTOCOL_VERSION: revision.as_str(),
            META_CLIENT_CAPABILITIES: {},
            META_CLIENT_INFO: {"name": "mcpres-harness", "version": env!("CARGO_PKG_VERSION")},
        });
    }
    request(id, method, params)
}

/// The request that opens a control: `initialize` (2025-11-25) or
/// `server/discover` (2026-07-28), its method name, and its result check.
pub(crate) fn opening(revision: Revision, id: i64) -> (&'static str, Value, &'static ResultCheck) {
    if revision.is_stateless() {
        (
            "server/discover",
            rpc(revision, id, "server/discover", json!({})),
            &check_discover,
        )
    } else {
        ("initialize", initialize_request(id), &check_initialize)
    }
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
            Next::Unanswered(answered) if answered == json!(id) => {
                return (frames, "RESPONSE_WITHOUT_ANSWER");
            }
            Next::Unanswered(_) => {}
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
            Next::Unanswered(_) => {}
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
    /// What the subject answered (see `answer_of`), for the outcome hash.
    pub answer: Option<Value>,
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
    /// The control's random values (the probe), replaced before hashing answers.
    pub volatile: Vec<String>,
    /// The `tools/list` exchange as recorded (its id, when it was sent, and the
    /// frames that followed): the harness's self-checks fault a copy of it.
    pub list_exchange: Option<(i64, u64, Vec<Frame>)>,
}

impl CleanOutcome {
    /// A clean control that has not started yet.
    pub fn new(probe: &str) -> Self {
        CleanOutcome {
            steps: Vec::new(),
            server_name: None,
            server_version: None,
            round_trip: false,
            passed: false,
            stop_reason: "NOT_STARTED",
            volatile: vec![probe.to_string()],
            list_exchange: None,
        }
    }

    /// Digest of everything the subject answered in this control.
    pub fn answers_digest(&self) -> String {
        let answers: Vec<Option<Value>> = self.steps.iter().map(|s| s.answer.clone()).collect();
        answers_digest(&answers, &self.volatile)
    }

    /// Incomplete (generic): every step the control made was accepted, but
    /// no tool could be called safely, so the tool call it claims was not
    /// shown. Neither passed nor failed.
    pub fn incomplete(&self) -> bool {
        !self.passed && self.stop_reason == super::vocab::NO_SAFE_TOOL_CALL
    }

    /// `PASS`, `INCOMPLETE` or `FAIL`, for progress lines and summaries.
    pub fn word(&self) -> &'static str {
        if self.passed {
            "PASS"
        } else if self.incomplete() {
            "INCOMPLETE"
        } else {
            "FAIL"
        }
    }

    /// A `tools/call` was made and accepted.
    pub fn tool_called(&self) -> bool {
        self.steps
            .iter()
            .any(|s| s.method == "tools/call" && s.judgement.accepted())
    }
}

pub(crate) fn budget(scenario: &Scenario) -> Duration {
    Duration::from_millis(scenario.exchange_budget_ms)
}

/// The subject overran the declared input limit: whatever the frames said,
/// the exchange is rejected (`INPUT_LIMIT_EXCEEDED`).
pub(crate) fn limit_checked(session: &Session, judgement: Judgement) -> Judgement {
    if let Some(detail) = session.input_limit_exceeded() {
        return Judgement::reject("INPUT_LIMIT_EXCEEDED", detail);
    }
    judgement
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
    let http = session.take_http_exchanges();
    let revision = session.revision();
    let judgement = limit_checked(
        session,
        judge(
            id,
            &frames,
            &http,
            sent_ms,
            scenario.exchange_budget_ms,
            Mutant::None,
            &complete_result(revision, check),
        ),
    );
    Ok((
        Step {
            method,
            id,
            sent_ms,
            frames: frames.len(),
            ended_by,
            judgement,
            answer: answer_of(&frames, id),
        },
        frames,
    ))
}

/// The clean control: initialize and notifications/initialized (2025-11-25)
/// or server/discover (2026-07-28), tools/list, tools/call echo, then stdin
/// EOF and a check that nothing unasked follows.
pub async fn run_clean(session: &mut Session, scenario: &Scenario, probe: &str) -> CleanOutcome {
    let mut out = CleanOutcome::new(probe);
    let base = fresh_id();
    let finish = |out: &mut CleanOutcome, stop: &'static str| {
        out.stop_reason = stop;
        out.passed = stop == COMPLETED;
    };
    let revision = session.revision();
    let (method, message, check) = opening(revision, base + 1);
    let Ok((step, frames)) = exchange(session, scenario, method, base + 1, message, check).await
    else {
        finish(&mut out, "SUBJECT_UNWRITABLE");
        return out;
    };
    if let Some(result) = frames.iter().rev().find_map(|f| {
        serde_json::from_slice::<Value>(&f.bytes)
            .ok()
            .filter(|m| m["id"] == json!(base + 1))
            .and_then(|m| m.get("result").cloned())
    }) {
        out.round_trip = true;
        (out.server_name, out.server_version) = server_identity(&result);
    }
    let stop = step.judgement.stop_reason;
    let ok = step.judgement.accepted();
    out.steps.push(step);
    if !ok {
        finish(&mut out, stop);
        return out;
    }
    if !revision.is_stateless() {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        if session.send(&note).await.is_err() {
            finish(&mut out, "SUBJECT_UNWRITABLE");
            return out;
        }
    }
    let list_check = check_tools_list(Some("echo"));
    let call_check = check_call(probe.to_string());
    let calls: [(&'static str, i64, Value, &ResultCheck); 2] = [
        (
            "tools/list",
            base + 2,
            rpc(revision, base + 2, "tools/list", json!({})),
            &list_check,
        ),
        (
            "tools/call",
            base + 3,
            rpc(
                revision,
                base + 3,
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
        answer: None,
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
    /// What the subject answered to the target request (see `answer_of`).
    pub answer: Option<Value>,
    /// The control's random values (ids aside), replaced before hashing.
    pub volatile: Vec<String>,
}

impl NegativeOutcome {
    /// Digest of the subject's answer to the target request.
    pub fn answer_digest(&self) -> String {
        answers_digest(std::slice::from_ref(&self.answer), &self.volatile)
    }
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

/// The start every negative control shares: initialize (judged) and the
/// `notifications/initialized` notification (2025-11-25), or server/discover
/// (judged; 2026-07-28). `Err` carries the outcome so far when the session
/// could not be opened.
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
        answer: None,
        volatile: Vec::new(),
    };
    let (reached, opened) = open_session(session, scenario).await;
    out.prerequisites.extend(reached);
    if opened { Ok(out) } else { Err(out) }
}

/// Open an MCP session with request id 1: `initialize` (judged), then
/// `notifications/initialized`; on 2026-07-28, `server/discover` alone.
/// Returns the prerequisite the judged exchange reached (`SESSION_INITIALIZED`
/// or `SERVER_DISCOVERED`, none when it failed) and whether the session is
/// open (the notification, where one is due, was written too).
pub(crate) async fn open_session(
    session: &mut Session,
    scenario: &Scenario,
) -> (Option<&'static str>, bool) {
    let revision = session.revision();
    let id = fresh_id();
    let (method, message, check) = opening(revision, id);
    let Ok((step, _)) = exchange(session, scenario, method, id, message, check).await else {
        return (None, false);
    };
    if !step.judgement.accepted() {
        return (None, false);
    }
    if revision.is_stateless() {
        return (Some("SERVER_DISCOVERED"), true);
    }
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    (
        Some("SESSION_INITIALIZED"),
        session.send(&note).await.is_ok(),
    )
}

/// Drive one negative control: initialize (or server/discover), tools/call add (the faulted call),
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
    let revision = session.revision();
    let id = fresh_id();
    let call = rpc(
        revision,
        id,
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
    out.answer = answer_of(&frames, id);
    if ended_by == "EOF" {
        out.prerequisites.push("SUBJECT_OUTPUT_COMPLETE");
    }
    let http = session.take_http_exchanges();
    let call_check = check_call((ADD_ARGS.0 + ADD_ARGS.1).to_string());
    let check = complete_result(revision, &call_check);
    out.observed = Some(limit_checked(
        session,
        judge(
            id,
            &frames,
            &http,
            sent,
            scenario.exchange_budget_ms,
            Mutant::None,
            &check,
        ),
    ));
    out.mutant = Some(judge(
        id,
        &frames,
        &http,
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
    use crate::produce::harness::http::{HttpExchange, Posted};
    use crate::produce::harness::oracle::{REQUEST_REFUSED, judge_refusal};
    use crate::produce::harness::vocab::{
        DEFAULT_SCENARIO, META_SERVER_INFO, REJECT, clean_steps_for,
    };

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
        assert!(judge(2, &[frame(good, 5)], &[], 0, 100, Mutant::None, &c).accepted());
        // Timing budget.
        assert_eq!(
            judge(2, &[frame(good, 500)], &[], 0, 100, Mutant::None, &c).stop_reason,
            "TIMING_BUDGET_EXCEEDED"
        );
        // schema-violation: content removed.
        let no_content = br#"{"jsonrpc":"2.0","id":2,"result":{"structuredContent":{"sum":5}}}"#;
        assert_eq!(
            judge(2, &[frame(no_content, 1)], &[], 0, 100, Mutant::None, &c).stop_reason,
            "SCHEMA_VIOLATION"
        );
        assert!(
            judge(
                2,
                &[frame(no_content, 1)],
                &[],
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
            judge(2, &frames, &[], 0, 100, Mutant::None, &c).stop_reason,
            "UNSOLICITED_RESPONSE_ID"
        );
        assert!(judge(2, &frames, &[], 0, 100, Mutant::IgnoreIds, &c).accepted());
        // malformed-message: invalid UTF-8 inside a string.
        let mut bad = good.to_vec();
        bad.splice(60..60, [0xC3, 0x28]);
        assert_eq!(
            judge(2, &[frame(&bad, 1)], &[], 0, 100, Mutant::None, &c).stop_reason,
            "INVALID_UTF8"
        );
        assert_ne!(
            judge(2, &[frame(&bad, 1)], &[], 0, 100, Mutant::LossyDecode, &c).stop_reason,
            "INVALID_UTF8"
        );
        // Duplicates, errors, missing responses, wrong results.
        assert_eq!(
            judge(
                2,
                &[frame(good, 1), frame(good, 2)],
                &[],
                0,
                100,
                Mutant::None,
                &c
            )
            .stop_reason,
            "DUPLICATE_RESPONSE"
        );
        assert_eq!(
            judge(2, &[], &[], 0, 100, Mutant::None, &c).stop_reason,
            "NO_RESPONSE"
        );
        let err = br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"x"}}"#;
        assert_eq!(
            judge(2, &[frame(err, 1)], &[], 0, 100, Mutant::None, &c).stop_reason,
            "ERROR_RESPONSE"
        );
        let wrong =
            br#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"6"}]}}"#;
        assert_eq!(
            judge(2, &[frame(wrong, 1)], &[], 0, 100, Mutant::None, &c).stop_reason,
            "WRONG_RESULT"
        );
        assert_eq!(
            judge(2, &[frame(b"{", 1)], &[], 0, 100, Mutant::None, &c).stop_reason,
            "INVALID_JSON"
        );
    }

    #[test]
    fn a_refusal_is_expected_and_an_acceptance_fails_the_control() {
        let any: &ResultCheck = &|_: &Value, _: Mutant| None;
        let error = br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"nope"}}"#;
        let tool_error = br#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"no"}],"isError":true}}"#;
        let accepted =
            br#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ok"}]}}"#;
        let shape: &ResultCheck = &|r: &Value, _: Mutant| {
            (r["isError"] == true).then(|| ("TOOL_ERROR", "tool error".to_string()))
        };
        for (bytes, check) in [(&error[..], any), (&tool_error[..], shape)] {
            let real = judge_refusal(2, &[frame(bytes, 1)], &[], 0, 100, Mutant::None, check);
            assert_eq!((real.verdict, real.stop_reason), (REJECT, REQUEST_REFUSED));
            let weak = judge_refusal(
                2,
                &[frame(bytes, 1)],
                &[],
                0,
                100,
                Mutant::AcceptRefusals,
                check,
            );
            assert!(weak.accepted(), "the mutant takes the refusal for success");
        }
        // A subject that accepts what it must refuse passes the oracle: the
        // control's expected REJECT is not reached.
        let real = judge_refusal(2, &[frame(accepted, 1)], &[], 0, 100, Mutant::None, shape);
        assert_eq!((real.verdict, real.stop_reason), (ACCEPT, COMPLETED));
        // No answer at all is no refusal.
        let real = judge_refusal(2, &[], &[], 0, 100, Mutant::None, shape);
        assert_eq!(real.stop_reason, "NO_RESPONSE");
        // HTTP: a 404 carrying the JSON-RPC error is a refusal; a 503 is not.
        let x = [http(Posted::Request, 404, "application/json", error.len())];
        let real = judge_refusal(2, &[frame(error, 1)], &x, 0, 100, Mutant::None, any);
        assert_eq!(real.stop_reason, REQUEST_REFUSED, "{}", real.detail);
        let x = [http(Posted::Request, 503, "application/json", error.len())];
        let real = judge_refusal(2, &[frame(error, 1)], &x, 0, 100, Mutant::None, any);
        assert_eq!(real.stop_reason, "HTTP_STATUS");
    }

    #[test]
    fn answers_are_bound_and_hashed_without_ids_or_random_values() {
        let a = br#"{"jsonrpc":"2.0","id":1000005,"result":{"content":[{"type":"text","text":"Echo: mcpres-probe-aa"}],"_meta":{"t":1}}}"#;
        let b = br#"{"jsonrpc":"2.0","id":2000007,"result":{"content":[{"type":"text","text":"Echo: mcpres-probe-bb"}]}}"#;
        let c = br#"{"jsonrpc":"2.0","id":2000007,"result":{"content":[{"type":"text","text":"Echo: something else"}]}}"#;
        let ans_a = answer_of(&[frame(a, 1)], 1000005);
        let ans_b = answer_of(&[frame(b, 1)], 2000007);
        assert!(answer_of(&[frame(a, 1)], 2000007).is_none());
        assert_eq!(
            answers_digest(&[ans_a], &["mcpres-probe-aa".into()]),
            answers_digest(std::slice::from_ref(&ans_b), &["mcpres-probe-bb".into()])
        );
        let ans_c = answer_of(&[frame(c, 1)], 2000007);
        assert_ne!(
            answers_digest(&[ans_b], &["mcpres-probe-bb".into()]),
            answers_digest(&[ans_c], &["mcpres-probe-bb".into()])
        );
        let ids: Vec<i64> = (0..8).map(|_| fresh_id()).collect();
        assert!(ids.iter().all(|i| (1_000_000..1_001_000_000).contains(i)));
        assert_ne!(fresh_token(), fresh_token());
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

    fn http(kind: Posted, status: u16, content_type: &str, body_bytes: usize) -> HttpExchange {
        HttpExchange {
            method: "POST",
            kind,
            rpc_id: (kind == Posted::Request).then(|| json!(2)),
            rpc_method: Some(if kind == Posted::Request {
                "tools/call".into()
            } else {
                "notifications/initialized".into()
            }),
            connection: 1,
            reused: false,
            status: Some(status),
            content_type: (!content_type.is_empty()).then(|| content_type.to_string()),
            body_bytes,
        }
    }

    #[test]
    fn http_statuses_are_judged_after_decoding_and_before_ids() {
        let good = br#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}]}}"#;
        let c = add_check();
        let note_ok = http(Posted::Notification, 202, "", 0);
        let sse_ok = http(Posted::Request, 200, "text/event-stream", 90);
        let json_ok = http(Posted::Request, 200, "application/json; charset=utf-8", 90);
        for ok in [&sse_ok, &json_ok] {
            let x = [note_ok.clone(), ok.clone()];
            assert!(judge(2, &[frame(good, 1)], &x, 0, 100, Mutant::None, &c).accepted());
        }
        let stop = |x: &[HttpExchange], frames: &[Frame]| {
            judge(2, frames, x, 0, 100, Mutant::None, &c).stop_reason
        };
        let err503 = br#"{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"busy"}}"#;
        let unavailable = http(Posted::Request, 503, "application/json", 60);
        assert_eq!(
            stop(std::slice::from_ref(&unavailable), &[frame(err503, 1)]),
            "HTTP_STATUS"
        );
        // A well-formed result does not excuse an error status.
        assert_eq!(
            stop(std::slice::from_ref(&unavailable), &[frame(good, 1)]),
            "HTTP_STATUS"
        );
        // No frame at all (an error status without a JSON-RPC body).
        assert_eq!(
            stop(&[http(Posted::Request, 401, "text/plain", 12)], &[]),
            "HTTP_STATUS"
        );
        assert_eq!(
            stop(
                &[http(Posted::Request, 200, "text/html", 5)],
                &[frame(good, 1)]
            ),
            "HTTP_CONTENT_TYPE"
        );
        assert_eq!(
            stop(&[http(Posted::Request, 200, "", 5)], &[frame(good, 1)]),
            "HTTP_CONTENT_TYPE"
        );
        assert_eq!(
            stop(
                &[
                    http(Posted::Notification, 200, "application/json", 0),
                    sse_ok.clone()
                ],
                &[frame(good, 1)]
            ),
            "HTTP_STATUS"
        );
        assert_eq!(
            stop(
                &[
                    http(Posted::Notification, 202, "application/json", 2),
                    sse_ok.clone()
                ],
                &[frame(good, 1)]
            ),
            "HTTP_BODY_ON_ACCEPTED"
        );
        assert_eq!(
            stop(&[http(Posted::Response, 500, "", 0)], &[frame(good, 1)]),
            "HTTP_STATUS"
        );
        // Order: decoding first, then HTTP, then ids.
        let mut bad = good.to_vec();
        bad.splice(60..60, [0xC3, 0x28]);
        assert_eq!(
            stop(std::slice::from_ref(&unavailable), &[frame(&bad, 1)]),
            "INVALID_UTF8"
        );
        let stray =
            br#"{"jsonrpc":"2.0","id":1000002,"result":{"content":[{"type":"text","text":"5"}]}}"#;
        assert_eq!(
            stop(
                std::slice::from_ref(&unavailable),
                &[frame(stray, 1), frame(good, 2)]
            ),
            "HTTP_STATUS"
        );
        // No response head (a closed connection): left to the frame checks.
        let mut silent = unavailable;
        silent.status = None;
        assert_eq!(stop(&[silent], &[]), "NO_RESPONSE");
        // The DELETE is recorded, not judged.
        let mut delete = http(Posted::Other, 405, "", 0);
        delete.method = "DELETE";
        assert_eq!(stop(&[delete, sse_ok], &[frame(good, 1)]), COMPLETED);
    }

    #[test]
    fn each_mutant_is_still_killed_with_good_http_statuses() {
        // The reference faults over HTTP arrive in a 200 event stream.
        let x = [
            http(Posted::Notification, 202, "", 0),
            http(Posted::Request, 200, "text/event-stream", 120),
        ];
        let good = br#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}],"resultType":"complete"}}"#;
        let no_content = br#"{"jsonrpc":"2.0","id":2,"result":{"structuredContent":{"sum":5},"resultType":"complete"}}"#;
        let stray = br#"{"jsonrpc":"2.0","id":1000002,"result":{"content":[{"type":"text","text":"5"}],"resultType":"complete"}}"#;
        let mut bad = good.to_vec();
        bad.splice(60..60, [0xC3, 0x28]);
        let cases: [(&str, Vec<Frame>); 3] = [
            ("schema-violation", vec![frame(no_content, 1)]),
            ("reorder", vec![frame(stray, 1), frame(good, 2)]),
            ("malformed-message", vec![frame(&bad, 1)]),
        ];
        let call = add_check();
        for revision in [Revision::V2025_11_25, Revision::V2026_07_28] {
            let c = complete_result(revision, &call);
            assert!(judge(2, &[frame(good, 1)], &x, 0, 100, Mutant::None, &c).accepted());
            for (name, frames) in &cases {
                let neg = find(DEFAULT_SCENARIO)
                    .unwrap()
                    .negatives
                    .into_iter()
                    .find(|n| n.name == *name)
                    .unwrap();
                let real = judge(2, frames, &x, 0, 100, Mutant::None, &c);
                assert_eq!(
                    (real.verdict, real.stop_reason),
                    (neg.expected_verdict.as_str(), neg.expected_stop.as_str()),
                    "{name} {revision:?}"
                );
                let weak = judge(2, frames, &x, 0, 100, neg.mutant, &c);
                assert_ne!(
                    (weak.verdict, weak.stop_reason),
                    (neg.expected_verdict.as_str(), neg.expected_stop.as_str()),
                    "{name} {revision:?}: mutant survived"
                );
            }
        }
    }

    #[test]
    fn revision_2026_07_28_requests_results_and_discover() {
        let r = rpc(Revision::V2026_07_28, 3, "tools/list", json!({}));
        assert_eq!(r["params"]["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        assert!(r["params"]["_meta"][META_CLIENT_CAPABILITIES].is_object());
        let legacy = rpc(Revision::V2025_11_25, 3, "tools/list", json!({}));
        assert!(legacy["params"].get("_meta").is_none());
        let (method, message, _) = opening(Revision::V2026_07_28, 1);
        assert_eq!(method, "server/discover");
        assert_eq!(message["method"], "server/discover");
        assert_eq!(opening(Revision::V2025_11_25, 1).0, "initialize");

        let discover = json!({
            "supportedVersions": ["2025-11-25", "2026-07-28"], "capabilities": {"tools": {}},
            "resultType": "complete", "ttlMs": 0, "cacheScope": "public",
            "_meta": {META_SERVER_INFO: {"name": "s", "version": "1.2"}},
        });
        assert_eq!(check_discover(&discover, Mutant::None), None);
        assert_eq!(
            server_identity(&discover),
            (Some("s".into()), Some("1.2".into()))
        );
        assert_eq!(
            server_identity(&json!({"serverInfo": {"name": "i", "version": "0"}})),
            (Some("i".into()), Some("0".into()))
        );
        let mut old_only = discover.clone();
        old_only["supportedVersions"] = json!(["2025-11-25"]);
        assert_eq!(
            check_discover(&old_only, Mutant::None).unwrap().0,
            "REVISION_NOT_SUPPORTED"
        );
        let mut anonymous = discover.clone();
        anonymous.as_object_mut().unwrap().remove("_meta");
        assert_eq!(
            check_discover(&anonymous, Mutant::None).unwrap().0,
            "SCHEMA_VIOLATION"
        );
        let mut no_versions = discover.clone();
        no_versions
            .as_object_mut()
            .unwrap()
            .remove("supportedVersions");
        assert_eq!(
            check_discover(&no_versions, Mutant::None).unwrap().0,
            "SCHEMA_VIOLATION"
        );

        let list = check_tools_list(None);
        let modern = complete_result(Revision::V2026_07_28, &list);
        let legacy = complete_result(Revision::V2025_11_25, &list);
        let without = json!({"tools": []});
        assert_eq!(
            modern(&without, Mutant::None).unwrap().0,
            "RESULT_TYPE_NOT_COMPLETE"
        );
        assert_eq!(legacy(&without, Mutant::None), None);
        assert_eq!(
            modern(
                &json!({"tools": [], "resultType": "complete"}),
                Mutant::None
            ),
            None
        );
        assert_eq!(
            clean_steps_for(
                &["initialize", "notifications/initialized", "tools/list"],
                Revision::V2026_07_28
            ),
            ["server/discover", "tools/list"]
        );
        assert_eq!(
            clean_steps_for(&["initialize", "tools/list"], Revision::V2025_11_25),
            ["initialize", "tools/list"]
        );
    }
}
