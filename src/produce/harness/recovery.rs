//! Recovery controls: a transient fault in the first attempt of an idempotent
//! call, and the harness recovering under a finite policy.
//!
//! The subject (the reference server, or anything taking its `--fault` flag)
//! injects the fault into request 2 of its process: the first `tools/call
//! counter` after `initialize`. The harness classifies the failure it observes
//! and acts on it:
//!
//! - no answer within the attempt timeout: `notifications/cancelled` for the
//!   abandoned id (the policy's cancellation boundary), then a retry on the
//!   same session;
//! - a retryable error (a JSON-RPC error carrying `retryAfterMs`, or a tool
//!   result with `isError`): back off, then retry on the same session;
//! - end of output (the transport closed, the process exited or crashed):
//!   restart the subject, without the fault flags, initialize again, retry.
//!
//! An ambiguous failure (no answer, or a disconnect: the call may have taken
//! effect) is retried only under a READ_ONLY or IDEMPOTENT side-effect model;
//! otherwise the harness stops with `UNSAFE_TO_RETRY`. Retries stop at the
//! retry limit and at the policy's time limit. After a recovery on the same
//! process, the counter's state (`mcpres://state/counter`) must show exactly one
//! effect: the retry did not repeat the side effect.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::http::HttpExchange;
use super::oracle::{Judgement, check_call, complete_result, judge};
use super::scenario::{budget, collect, open_session, rpc};
use super::subject::{Session, SubjectError};
use super::vocab::{Mutant, RecoveryControl, Scenario};

/// The request id of the first (faulted) attempt; retries count up from it.
const FIRST_CALL_ID: i64 = 2;

/// One attempt of the recovered call.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// 0 for the faulted first attempt, then 1, 2, ... for the retries.
    pub attempt: u32,
    pub session: String,
    pub request_id: i64,
    /// Backoff waited before this attempt.
    pub backoff_ms: u64,
    pub sent_ms: u64,
    pub ended_ms: u64,
    /// The observed failure class, or `SUCCEEDED`.
    pub observed: &'static str,
    pub judgement: Judgement,
    /// What the harness did next.
    pub action: &'static str,
}

impl Attempt {
    pub fn to_json(&self) -> Value {
        json!({
            "attempt": self.attempt, "session": self.session, "requestId": self.request_id,
            "backoffMs": self.backoff_ms, "sentOffsetMs": self.sent_ms, "endedOffsetMs": self.ended_ms,
            "observed": self.observed, "judgement": self.judgement.to_json(), "action": self.action,
        })
    }
}

/// What a recovery control observed.
#[derive(Debug, Clone)]
pub struct RecoveryOutcome {
    pub prerequisites: Vec<&'static str>,
    pub attempts: Vec<Attempt>,
    pub recovered: bool,
    /// Why the recovery ended: `RECOVERED`, `RETRY_LIMIT_REACHED`,
    /// `TIME_LIMIT_REACHED`, `UNSAFE_TO_RETRY`, `NOT_RETRYABLE`,
    /// `FAULT_NOT_OBSERVED`, `SIDE_EFFECT_REPEATED`, `SIDE_EFFECT_UNVERIFIED`,
    /// `SESSION_NOT_OPENED`, `RESTART_FAILED`.
    pub stop_reason: &'static str,
    pub detail: String,
    /// The counter's state after the recovery, when read.
    pub effects: Option<Value>,
    /// The transport closed under the first attempt (stdio EOF).
    pub disconnect_observed: bool,
    pub started_ms: u64,
    pub ended_ms: u64,
}

/// What a recovery control recorded: its outcome and every process it used.
pub struct RecoveryRun {
    pub outcome: RecoveryOutcome,
    /// The sessions in order (the faulted one first, then a restarted one).
    pub sessions: Vec<Session>,
}

fn now(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The counter call of attempt `id` (the key stays the same: the idempotency key).
fn counter_call(session: &Session, id: i64, key: &str) -> Value {
    rpc(
        session.revision(),
        id,
        "tools/call",
        json!({"name": "counter", "arguments": {"key": key, "amount": 1}}),
    )
}

/// Classify a failed attempt. `closed`: stdout ended (stdio), or the HTTP
/// exchange ended without an answer (the connection was closed).
fn classify(
    judgement: &Judgement,
    frames: &[super::record::Frame],
    http: &[HttpExchange],
    closed: bool,
) -> &'static str {
    if judgement.accepted() {
        return "SUCCEEDED";
    }
    if closed && judgement.stop_reason == "NO_RESPONSE" {
        return "DISCONNECTED";
    }
    // Over HTTP an overloaded server says 503 (or 429) with Retry-After.
    if judgement.stop_reason == "HTTP_STATUS"
        && http
            .iter()
            .any(|x| matches!(x.status, Some(503) | Some(429)))
    {
        return "RETRYABLE_ERROR";
    }
    match judgement.stop_reason {
        "NO_RESPONSE" => "NO_RESPONSE_IN_TIME",
        "TOOL_ERROR" => "TOOL_ERROR",
        "ERROR_RESPONSE" => {
            let retry_after = frames.iter().any(|f| {
                serde_json::from_slice::<Value>(&f.bytes)
                    .ok()
                    .and_then(|m| m.pointer("/error/data/retryAfterMs").cloned())
                    .is_some_and(|v| v.is_u64())
            });
            if retry_after {
                "RETRYABLE_ERROR"
            } else {
                "ERROR"
            }
        }
        _ => "PROTOCOL_FAILURE",
    }
}

/// Run one recovery control. `log` is where the subject writes its injection log.
pub async fn run_recovery(
    spawner: &super::subject::Spawner<'_>,
    scenario: &Scenario,
    control: &RecoveryControl,
    trial: usize,
    seed: u32,
    log: &Path,
) -> Result<RecoveryRun, SubjectError> {
    let policy = &control.policy;
    let epoch = spawner.epoch;
    let started_ms = now(epoch);
    let key = format!("mcpres-recovery-{seed}-{}", control.name);
    let fault_args = vec![
        "--fault".to_string(),
        format!("{}@request-{FIRST_CALL_ID}", control.fault),
        "--seed".to_string(),
        seed.to_string(),
        "--injection-log".to_string(),
        log.display().to_string(),
    ];
    let first_name = format!("t{trial}-{}", control.name);
    let mut sessions = vec![spawner.spawn(&first_name, &fault_args).await?];
    let mut out = RecoveryOutcome {
        prerequisites: vec!["PROCESS_SPAWNED"],
        attempts: Vec::new(),
        recovered: false,
        stop_reason: "SESSION_NOT_OPENED",
        detail: String::new(),
        effects: None,
        disconnect_observed: false,
        started_ms,
        ended_ms: started_ms,
    };
    let finish = |mut out: RecoveryOutcome, sessions: Vec<Session>| {
        out.ended_ms = now(epoch);
        Ok(RecoveryRun {
            outcome: out,
            sessions,
        })
    };
    if !open_session(sessions.last_mut().expect("a session"), scenario)
        .await
        .1
    {
        out.detail = "initialize was not answered correctly".into();
        return finish(out, sessions);
    }
    out.prerequisites.push("SESSION_INITIALIZED");
    let expected = format!("key={key} total=1");
    let check = check_call(expected.clone());
    let safe_to_repeat = matches!(
        policy.side_effect_model.as_str(),
        "READ_ONLY" | "IDEMPOTENT"
    );
    let recovery_start = Instant::now();
    let time_limit = Duration::from_millis(policy.time_limit_ms);
    let mut attempt: u32 = 0;
    let mut backoff_ms = 0u64;
    loop {
        let id = FIRST_CALL_ID + i64::from(attempt);
        let session = sessions.last_mut().expect("a session");
        let session_name = session.name.clone();
        let call = counter_call(session, id, &key);
        let sent = session.send(&call).await;
        let Ok(sent_ms) = sent else {
            // Writing failed: the process is gone. Treat as a disconnect.
            out.attempts.push(Attempt {
                attempt,
                session: session_name,
                request_id: id,
                backoff_ms,
                sent_ms: now(epoch),
                ended_ms: now(epoch),
                observed: "DISCONNECTED",
                judgement: Judgement {
                    verdict: super::vocab::REJECT,
                    stop_reason: "SUBJECT_UNWRITABLE",
                    detail: "the request could not be written".into(),
                },
                action: "RESTART_AND_RETRY",
            });
            if attempt == 0 {
                out.prerequisites.push("CALL_SENT");
            }
            if !restart_allowed(&mut out, policy, attempt, safe_to_repeat, recovery_start) {
                return finish(out, sessions);
            }
            attempt += 1;
            backoff_ms = policy.backoff_ms(attempt);
            tokio::time::sleep(Duration::from_millis(backoff_ms)).await;
            if !restart(spawner, scenario, trial, control, &mut sessions, &mut out).await? {
                return finish(out, sessions);
            }
            continue;
        };
        if attempt == 0 {
            out.prerequisites.push("CALL_SENT");
        }
        let deadline = Instant::now() + Duration::from_millis(policy.attempt_timeout_ms);
        let (frames, ended_by) = collect(session, id, deadline).await;
        let closed = ended_by == "EOF" || ended_by == "RESPONSE_WITHOUT_ANSWER";
        let http = session.take_http_exchanges();
        let revision = session.revision();
        let judgement = judge(
            id,
            &frames,
            &http,
            sent_ms,
            policy.attempt_timeout_ms,
            Mutant::None,
            &complete_result(revision, &check),
        );
        let observed = classify(&judgement, &frames, &http, closed);
        if attempt == 0 && closed {
            out.disconnect_observed = true;
        }
        let mut record = Attempt {
            attempt,
            session: session_name,
            request_id: id,
            backoff_ms,
            sent_ms,
            ended_ms: now(epoch),
            observed,
            judgement,
            action: "STOP",
        };
        if observed == "SUCCEEDED" {
            out.attempts.push(record);
            if attempt == 0 {
                out.stop_reason = "FAULT_NOT_OBSERVED";
                out.detail = "the first attempt succeeded: the fault did not take effect".into();
                return finish(out, sessions);
            }
            out.recovered = true;
            // The side effect happened once: read the counter's state.
            let session = sessions.last_mut().expect("a session");
            let read_id = id + 100;
            let (effects, ok, why) = read_effects(session, scenario, read_id).await;
            out.effects = effects;
            let same_process = sessions.len() == 1;
            if ok {
                out.stop_reason = "RECOVERED";
                out.detail = format!(
                    "recovered on attempt {attempt} ({}); {why}",
                    if same_process {
                        "same process"
                    } else {
                        "restarted process"
                    }
                );
            } else {
                out.stop_reason = if why.starts_with("effects") {
                    "SIDE_EFFECT_REPEATED"
                } else {
                    "SIDE_EFFECT_UNVERIFIED"
                };
                out.detail = why;
            }
            return finish(out, sessions);
        }
        let ambiguous = matches!(observed, "NO_RESPONSE_IN_TIME" | "DISCONNECTED");
        if matches!(observed, "ERROR" | "PROTOCOL_FAILURE") {
            out.stop_reason = "NOT_RETRYABLE";
            out.detail = format!(
                "attempt {attempt}: {} is not a transient failure",
                record.judgement.stop_reason
            );
            out.attempts.push(record);
            return finish(out, sessions);
        }
        if ambiguous && !safe_to_repeat {
            out.stop_reason = "UNSAFE_TO_RETRY";
            out.detail = format!(
                "attempt {attempt} may have taken effect and the side-effect model is {}",
                policy.side_effect_model
            );
            out.attempts.push(record);
            return finish(out, sessions);
        }
        if attempt >= policy.retry_limit {
            out.stop_reason = "RETRY_LIMIT_REACHED";
            out.detail = format!("{} attempts failed", attempt + 1);
            out.attempts.push(record);
            return finish(out, sessions);
        }
        let next_backoff = policy.backoff_ms(attempt + 1);
        if recovery_start.elapsed() + Duration::from_millis(next_backoff) >= time_limit {
            out.stop_reason = "TIME_LIMIT_REACHED";
            out.detail = format!(
                "no retry fits in the time limit of {} ms",
                policy.time_limit_ms
            );
            out.attempts.push(record);
            return finish(out, sessions);
        }
        let session = sessions.last_mut().expect("a session");
        match observed {
            "NO_RESPONSE_IN_TIME" => {
                record.action = "CANCEL_AND_RETRY";
                session.abandon_inflight("attempt timed out; abandoned before the retry");
                let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                    "params": {"requestId": id, "reason": "mcpres recovery: attempt timed out"}});
                let _ = session.send(&cancel).await;
            }
            // A closed HTTP connection with the process still alive: the next
            // request opens a new connection to the same process.
            "DISCONNECTED"
                if session.is_http() && !session.exited(Duration::from_millis(300)).await =>
            {
                record.action = "RECONNECT_AND_RETRY";
            }
            "DISCONNECTED" => record.action = "RESTART_AND_RETRY",
            _ => record.action = "BACKOFF_AND_RETRY",
        }
        let restart_needed = record.action == "RESTART_AND_RETRY";
        out.attempts.push(record);
        attempt += 1;
        backoff_ms = next_backoff;
        tokio::time::sleep(Duration::from_millis(backoff_ms)).await;
        if restart_needed
            && !restart(spawner, scenario, trial, control, &mut sessions, &mut out).await?
        {
            return finish(out, sessions);
        }
    }
}

/// May the harness restart after an unwritable subject?
fn restart_allowed(
    out: &mut RecoveryOutcome,
    policy: &super::vocab::RecoveryPolicy,
    attempt: u32,
    safe: bool,
    start: Instant,
) -> bool {
    if !safe {
        out.stop_reason = "UNSAFE_TO_RETRY";
        out.detail = format!(
            "the subject went away under attempt {attempt} and the side-effect model is {}",
            policy.side_effect_model
        );
        return false;
    }
    if attempt >= policy.retry_limit {
        out.stop_reason = "RETRY_LIMIT_REACHED";
        out.detail = format!("{} attempts failed", attempt + 1);
        return false;
    }
    if start.elapsed() + Duration::from_millis(policy.backoff_ms(attempt + 1))
        >= Duration::from_millis(policy.time_limit_ms)
    {
        out.stop_reason = "TIME_LIMIT_REACHED";
        out.detail = format!(
            "no retry fits in the time limit of {} ms",
            policy.time_limit_ms
        );
        return false;
    }
    true
}

/// Start a replacement process (no fault flags: the fault was transient) and
/// open its session. `false` when it could not be opened.
async fn restart(
    spawner: &super::subject::Spawner<'_>,
    scenario: &Scenario,
    trial: usize,
    control: &RecoveryControl,
    sessions: &mut Vec<Session>,
    out: &mut RecoveryOutcome,
) -> Result<bool, SubjectError> {
    if sessions.len() >= 2 {
        // One replacement per control keeps the evidence bounded; a second
        // disconnect ends the recovery.
        out.stop_reason = "RESTART_FAILED";
        out.detail = "the replacement process went away as well".into();
        return Ok(false);
    }
    let name = format!("t{trial}-{}-restart", control.name);
    let mut session = spawner.spawn(&name, &[]).await?;
    let opened = open_session(&mut session, scenario).await.1;
    sessions.push(session);
    if !opened {
        out.stop_reason = "RESTART_FAILED";
        out.detail = "the replacement process did not initialize".into();
    }
    Ok(opened)
}

/// Read `mcpres://state/counter`: exactly one effect and a total of one.
async fn read_effects(
    session: &mut Session,
    scenario: &Scenario,
    id: i64,
) -> (Option<Value>, bool, String) {
    let read = rpc(
        session.revision(),
        id,
        "resources/read",
        json!({"uri": "mcpres://state/counter"}),
    );
    if session.send(&read).await.is_err() {
        return (
            None,
            false,
            "the counter state could not be requested".into(),
        );
    }
    let (frames, _) = collect(session, id, Instant::now() + budget(scenario)).await;
    let state = frames.iter().find_map(|f| {
        let m: Value = serde_json::from_slice(&f.bytes).ok()?;
        if m["id"] != json!(id) {
            return None;
        }
        let text = m.pointer("/result/contents/0/text")?.as_str()?;
        serde_json::from_str::<Value>(text).ok()
    });
    match state {
        None => (
            None,
            false,
            "the counter state (mcpres://state/counter) could not be read".into(),
        ),
        Some(s) => {
            let ok = s["effects"] == json!(1) && s["total"] == json!(1);
            let why = if ok {
                "effects 1, total 1: the retry did not repeat the side effect".to_string()
            } else {
                format!(
                    "effects {} and total {} after the recovery; exactly 1 was expected",
                    s["effects"], s["total"]
                )
            };
            (Some(s), ok, why)
        }
    }
}

/// A recovery control behaved as expected: the fault was observed in the
/// first attempt and the recovery ended as the scenario expects.
pub fn as_expected(control: &RecoveryControl, outcome: &RecoveryOutcome) -> bool {
    let fault_seen = outcome
        .attempts
        .first()
        .is_some_and(|a| a.observed != "SUCCEEDED");
    fault_seen
        && outcome.recovered == control.expect_recovered
        && (!control.expect_recovered || outcome.stop_reason == "RECOVERED")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::produce::harness::vocab::RecoveryPolicy;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = RecoveryPolicy {
            id: "p".into(),
            retry_limit: 5,
            initial_backoff_ms: 50,
            max_backoff_ms: 300,
            attempt_timeout_ms: 100,
            time_limit_ms: 1000,
            cancellation_boundary: "c".into(),
            side_effect_model: "IDEMPOTENT".into(),
            safety_mechanism: "s".into(),
        };
        let b: Vec<u64> = (1..=5).map(|a| p.backoff_ms(a)).collect();
        assert_eq!(b, vec![50, 100, 200, 300, 300]);
    }

    #[test]
    fn failures_are_classified_by_what_was_seen() {
        let reject = |stop| Judgement {
            verdict: super::super::vocab::REJECT,
            stop_reason: stop,
            detail: String::new(),
        };
        let frame = |s: &str| super::super::record::Frame {
            bytes: s.as_bytes().to_vec(),
            at_ms: 0,
        };
        assert_eq!(
            classify(&reject("NO_RESPONSE"), &[], &[], true),
            "DISCONNECTED"
        );
        assert_eq!(
            classify(&reject("NO_RESPONSE"), &[], &[], false),
            "NO_RESPONSE_IN_TIME"
        );
        let overload = frame(
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"busy","data":{"retryAfterMs":100}}}"#,
        );
        assert_eq!(
            classify(&reject("ERROR_RESPONSE"), &[overload], &[], false),
            "RETRYABLE_ERROR"
        );
        let plain = frame(r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}"#);
        assert_eq!(
            classify(&reject("ERROR_RESPONSE"), &[plain], &[], false),
            "ERROR"
        );
        assert_eq!(
            classify(&reject("TOOL_ERROR"), &[], &[], false),
            "TOOL_ERROR"
        );
        assert_eq!(
            classify(&reject("SCHEMA_VIOLATION"), &[], &[], false),
            "PROTOCOL_FAILURE"
        );
        let ok = Judgement {
            verdict: super::super::vocab::ACCEPT,
            stop_reason: super::super::vocab::COMPLETED,
            detail: String::new(),
        };
        assert_eq!(classify(&ok, &[], &[], false), "SUCCEEDED");
    }
}
