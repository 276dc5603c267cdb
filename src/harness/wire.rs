//! The `generic` scenario for arbitrary (third-party) MCP servers, and the
//! harness's own fault injector.
//!
//! A third-party server has no `--fault` flag, so the negative controls of this
//! scenario get their faults from the harness. The injector sits on the path
//! from the subject's stdout to the oracle, *after* the raw capture: the
//! recorder keeps the subject's true bytes, and the injector hands the oracle a
//! changed copy of the one frame that answers the target request (corrupted,
//! duplicated, or with a required member removed). Every injection is written
//! to an injection log: boundary, trigger, seed, frame index, digests of the
//! original and the delivered frame, and the mutation itself, so that the
//! delivered bytes can be rebuilt from the raw capture.
//!
//! What this shows: the oracle rejects a broken exchange for the expected
//! reason and a weakened oracle does not. It does not test the subject's own
//! robustness: the subject never sees the fault.

use std::collections::BTreeSet;
use std::time::Instant;

use serde_json::{Value, json};

use super::scenario::{
    COMPLETED, CleanOutcome, Injector, Judgement, Mutant, NegativeControl, NegativeOutcome,
    Scenario, Step, budget, check_tools_list, collect, complete_result, drain, exchange, judge,
    open_negative, opening, rpc, server_identity, shutdown_step,
};
use super::subject::{Frame, Session};
use crate::json::canonical;

/// The request whose response the harness faults in every negative control.
pub const WIRE_TRIGGER: &str = "response-to:tools/list";

/// Where the harness injects its faults.
pub const WIRE_BOUNDARY: &str =
    "harness wire proxy: subject stdout frame, after the raw capture, before the oracle";

/// The id of the faulted `tools/list` request in a negative control.
const TARGET_ID: i64 = 2;

/// SplitMix64: a fixed, documented mapping from the seed to an offset.
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn answers(frame: &Frame, id: i64) -> bool {
    serde_json::from_slice::<Value>(&frame.bytes)
        .is_ok_and(|m| m.get("method").is_none() && m["id"] == json!(id))
}

/// Apply `neg`'s fault to the frame answering `id`: the frames the oracle
/// gets, and the injection record. `None` when there is nothing to fault (no
/// answering frame) or the fault is the subject's own.
pub fn inject(
    neg: &NegativeControl,
    seed: u64,
    id: i64,
    frames: &[Frame],
) -> Option<(Vec<Frame>, Value)> {
    let index = frames.iter().position(|f| answers(f, id))?;
    let original = frames[index].clone();
    let mut delivered = frames.to_vec();
    let mutation = match neg.injector {
        Injector::SubjectFlag => return None,
        Injector::WireCorruptUtf8 => {
            let len = original.bytes.len();
            if len < 2 {
                return None;
            }
            let offset = 1 + usize::try_from(mix(seed) % (len as u64 - 1)).unwrap_or(0);
            delivered[index].bytes.splice(offset..offset, [0xC3, 0x28]);
            json!({"kind": "insert-bytes", "offset": offset, "bytesHex": "c328"})
        }
        Injector::WireDuplicate => {
            delivered.insert(index + 1, original.clone());
            json!({"kind": "duplicate-frame", "insertedAt": index + 1})
        }
        Injector::WireStripResult => {
            let mut message: Value = serde_json::from_slice(&original.bytes).ok()?;
            message
                .get_mut("result")?
                .as_object_mut()?
                .remove("tools")?;
            delivered[index].bytes = canonical::to_vec(&message).ok()?;
            json!({"kind": "remove-member", "pointer": "/result/tools", "reserialized": "canonical JSON"})
        }
    };
    let record = json!({
        "event": "injection", "fault": neg.fault, "boundary": neg.boundary,
        "trigger": neg.trigger, "seed": seed, "frameIndex": index,
        "original": {"bytes": original.bytes.len(), "sha256": canonical::sha256_hex(&original.bytes)},
        "delivered": {"bytes": delivered[index].bytes.len(), "sha256": canonical::sha256_hex(&delivered[index].bytes)},
        "mutation": mutation,
    });
    Some((delivered, record))
}

/// A negative control with a harness-injected fault: initialize,
/// tools/list (waiting for its answer), stdin EOF, everything until EOF; then
/// the injector changes the answering frame and both oracles judge the result.
/// Returns the outcome and the injection log (when a fault was injected).
pub async fn run_wire_negative(
    session: &mut Session,
    scenario: &Scenario,
    neg: &NegativeControl,
    seed: u64,
) -> (NegativeOutcome, Option<Vec<u8>>) {
    let mut out = match open_negative(session, scenario).await {
        Ok(out) => out,
        Err(out) => return (out, None),
    };
    let revision = session.revision();
    let Ok(sent) = session
        .send(&rpc(revision, TARGET_ID, "tools/list", json!({})))
        .await
    else {
        return (out, None);
    };
    out.call_sent_ms = sent;
    out.prerequisites.push("TARGET_REQUEST_SENT");
    // Wait for the answer before closing stdin: some SDKs cancel in-flight
    // requests on stdin EOF.
    let deadline = Instant::now() + budget(scenario) + budget(scenario);
    let (mut frames, _) = collect(session, TARGET_ID, deadline).await;
    session.close_stdin();
    let (rest, ended_by) = drain(session, Instant::now() + budget(scenario)).await;
    frames.extend(rest);
    if ended_by == "EOF" {
        out.prerequisites.push("SUBJECT_OUTPUT_COMPLETE");
    }
    let (judged, log) = match inject(neg, seed, TARGET_ID, &frames) {
        Some((delivered, record)) => {
            let mut log = canonical::to_vec(&record).unwrap_or_default();
            log.push(b'\n');
            (delivered, Some(log))
        }
        None => (frames, None),
    };
    out.frames = judged.len();
    let http = session.take_http_exchanges();
    let list_check = check_tools_list(None);
    let check = complete_result(revision, &list_check);
    out.observed = Some(judge(
        TARGET_ID,
        &judged,
        &http,
        sent,
        scenario.exchange_budget_ms,
        Mutant::None,
        &check,
    ));
    out.mutant = Some(judge(
        TARGET_ID,
        &judged,
        &http,
        sent,
        scenario.exchange_budget_ms,
        neg.mutant,
        &check,
    ));
    (out, log)
}

/// The string argument of an `echo` tool: its first required string
/// property, else its first string property.
fn echo_argument(tool: &Value) -> Option<String> {
    let props = tool.pointer("/inputSchema/properties")?.as_object()?;
    let is_string = |name: &str| props.get(name).is_some_and(|p| p["type"] == "string");
    let required = tool
        .pointer("/inputSchema/required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if required.len() > 1 {
        return None;
    }
    required
        .iter()
        .filter_map(Value::as_str)
        .find(|n| is_string(n))
        .or_else(|| props.keys().map(String::as_str).find(|n| is_string(n)))
        .map(String::from)
}

/// A call result: typed content blocks, not an error, and a text block that
/// contains `probe` (third-party echo tools may decorate the text).
fn check_echo(probe: String) -> impl Fn(&Value, Mutant) -> Option<(&'static str, String)> {
    move |result, _| {
        let Some(blocks) = result.get("content").and_then(Value::as_array) else {
            return Some(("SCHEMA_VIOLATION", "tools/call result lacks content".into()));
        };
        if blocks
            .iter()
            .any(|b| !b.get("type").is_some_and(Value::is_string))
        {
            return Some(("SCHEMA_VIOLATION", "a content block lacks type".into()));
        }
        if result.get("isError") == Some(&Value::Bool(true)) {
            return Some(("TOOL_ERROR", "the tool reported an error".into()));
        }
        if !blocks
            .iter()
            .any(|b| b["type"] == "text" && b["text"].as_str().is_some_and(|t| t.contains(&probe)))
        {
            return Some((
                "WRONG_RESULT",
                format!("no text block contains the probe {probe:?}"),
            ));
        }
        None
    }
}

/// The environment a `get-env` tool reports must hold only the variables the
/// harness passed with `--env`. Only variable *names* go into the verdict.
fn check_env(
    allowed: BTreeSet<String>,
) -> impl Fn(&Value, Mutant) -> Option<(&'static str, String)> {
    move |result, _| {
        let text = result
            .get("content")
            .and_then(Value::as_array)
            .and_then(|blocks| blocks.iter().find(|b| b["type"] == "text"))
            .and_then(|b| b["text"].as_str());
        let Some(reported) = text
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .and_then(|v| v.as_object().cloned())
        else {
            return Some((
                "ENV_REPORT_UNREADABLE",
                "get-env did not return a JSON object as text".into(),
            ));
        };
        let extra: Vec<&String> = reported.keys().filter(|k| !allowed.contains(*k)).collect();
        if extra.is_empty() {
            None
        } else {
            Some((
                "ENVIRONMENT_LEAK",
                format!("the subject sees variables not passed with --env: {extra:?}"),
            ))
        }
    }
}

fn skipped(method: &'static str, id: i64, stop: &'static str, detail: String, at: u64) -> Step {
    Step {
        method,
        id,
        sent_ms: at,
        frames: 0,
        ended_by: "NOT_SENT",
        judgement: Judgement {
            verdict: "SKIPPED",
            stop_reason: stop,
            detail,
        },
    }
}

/// The generic clean control. Steps whose tool the server does not list are
/// recorded as SKIPPED, not as passes.
pub async fn run_clean_generic(
    session: &mut Session,
    scenario: &Scenario,
    probe: &str,
    env_keys: &BTreeSet<String>,
) -> CleanOutcome {
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
    let revision = session.revision();
    let (method, message, check) = opening(revision, 1);
    let Ok((step, frames)) = exchange(session, scenario, method, 1, message, check).await else {
        finish(&mut out, "SUBJECT_UNWRITABLE");
        return out;
    };
    if let Some(result) = result_of(&frames, 1) {
        out.round_trip = true;
        (out.server_name, out.server_version) = server_identity(&result);
    }
    let (stop, ok) = (step.judgement.stop_reason, step.judgement.accepted());
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
    let list_check = check_tools_list(None);
    let Ok((step, frames)) = exchange(
        session,
        scenario,
        "tools/list",
        2,
        rpc(revision, 2, "tools/list", json!({})),
        &list_check,
    )
    .await
    else {
        finish(&mut out, "SUBJECT_UNWRITABLE");
        return out;
    };
    let (stop, ok) = (step.judgement.stop_reason, step.judgement.accepted());
    out.steps.push(step);
    if !ok {
        finish(&mut out, stop);
        return out;
    }
    let tools: Vec<Value> = result_of(&frames, 2)
        .and_then(|r| r.get("tools").and_then(Value::as_array).cloned())
        .unwrap_or_default();
    let find = |name: &str| tools.iter().find(|t| t["name"] == name).cloned();

    // tools/call echo, when the server lists one with a single string argument.
    let mut calls: Vec<(i64, Value, Box<super::scenario::ResultCheck>)> = Vec::new();
    match find("echo").map(|t| (echo_argument(&t), t)) {
        Some((Some(arg), _)) => calls.push((
            3,
            rpc(
                revision,
                3,
                "tools/call",
                json!({"name": "echo", "arguments": {arg: probe}}),
            ),
            Box::new(check_echo(probe.to_string())),
        )),
        Some((None, _)) => out.steps.push(skipped(
            "tools/call",
            3,
            "ECHO_ARGUMENT_UNKNOWN",
            "echo is listed but takes no single string argument; not called".into(),
            session.now_ms(),
        )),
        None => out.steps.push(skipped(
            "tools/call",
            3,
            "NO_ECHO_TOOL",
            "the server lists no echo tool; no tool was called".into(),
            session.now_ms(),
        )),
    }
    // tools/call get-env, when listed without required arguments: the
    // environment the subject reports must be exactly the --env keys.
    match find("get-env") {
        Some(t)
            if t
                .pointer("/inputSchema/required")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty) =>
        {
            calls.push((
                4,
                rpc(
                    revision,
                    4,
                    "tools/call",
                    json!({"name": "get-env", "arguments": {}}),
                ),
                Box::new(check_env(env_keys.clone())),
            ));
        }
        _ => out.steps.push(skipped(
            "tools/call",
            4,
            "NO_GET_ENV_TOOL",
            "the server lists no get-env tool without required arguments; the scrubbing is not observed from inside".into(),
            session.now_ms(),
        )),
    }
    for (id, message, check) in calls {
        let Ok((step, _)) = exchange(session, scenario, "tools/call", id, message, &*check).await
        else {
            finish(&mut out, "SUBJECT_UNWRITABLE");
            return out;
        };
        let (stop, ok) = (step.judgement.stop_reason, step.judgement.accepted());
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

fn result_of(frames: &[Frame], id: i64) -> Option<Value> {
    frames.iter().rev().find_map(|f| {
        serde_json::from_slice::<Value>(&f.bytes)
            .ok()
            .filter(|m| m["id"] == json!(id) && m.get("method").is_none())
            .and_then(|m| m.get("result").cloned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(s: &[u8]) -> Frame {
        Frame {
            bytes: s.to_vec(),
            at_ms: 1,
        }
    }

    #[test]
    fn each_wire_fault_is_rejected_for_its_reason_and_its_mutant_is_killed() {
        let note = br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
        let good = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#;
        let frames = [frame(note), frame(good)];
        let check = check_tools_list(None);
        assert!(judge(2, &frames, &[], 0, 100, Mutant::None, &check).accepted());
        for neg in crate::harness::scenario::find("generic").unwrap().negatives {
            for seed in 1..40u64 {
                let (delivered, record) = inject(&neg, seed, 2, &frames).expect("injected");
                assert_eq!(record["frameIndex"], 1);
                assert_eq!(record["seed"], seed);
                assert_eq!(record["trigger"], WIRE_TRIGGER);
                let real = judge(2, &delivered, &[], 0, 100, Mutant::None, &check);
                assert_eq!(
                    (real.verdict, real.stop_reason),
                    (super::super::scenario::REJECT, neg.expected_stop.as_str()),
                    "{} seed {seed}",
                    neg.name
                );
                let weak = judge(2, &delivered, &[], 0, 100, neg.mutant, &check);
                assert_ne!(
                    (weak.verdict, weak.stop_reason),
                    (super::super::scenario::REJECT, neg.expected_stop.as_str()),
                    "{} seed {seed}: mutant survived",
                    neg.name
                );
                // The raw frames are not touched.
                assert_eq!(frames[1].bytes, good.to_vec());
            }
        }
        // Nothing answers id 7: nothing is injected.
        let neg = &crate::harness::scenario::find("generic").unwrap().negatives[0];
        assert!(inject(neg, 1, 7, &frames).is_none());
    }

    #[test]
    fn echo_argument_and_env_checks() {
        let t = json!({"name": "echo", "inputSchema": {"properties": {"message": {"type": "string"}}, "required": ["message"]}});
        assert_eq!(echo_argument(&t).as_deref(), Some("message"));
        let t = json!({"name": "echo", "inputSchema": {"properties": {"n": {"type": "integer"}}}});
        assert_eq!(echo_argument(&t), None);
        let allowed: BTreeSet<String> = ["PATH".to_string()].into();
        let env_ok = json!({"content": [{"type": "text", "text": "{\"PATH\": \"/bin\"}"}]});
        let env_leak =
            json!({"content": [{"type": "text", "text": "{\"PATH\": \"/bin\", \"LEAK\": \"v\"}"}]});
        let c = check_env(allowed);
        assert_eq!(c(&env_ok, Mutant::None), None);
        let (stop, detail) = c(&env_leak, Mutant::None).unwrap();
        assert_eq!(stop, "ENVIRONMENT_LEAK");
        assert!(detail.contains("LEAK") && !detail.contains("\"v\""));
        let e = check_echo("p-1".into());
        assert_eq!(
            e(
                &json!({"content": [{"type": "text", "text": "Echo: p-1"}]}),
                Mutant::None
            ),
            None
        );
        assert_eq!(
            e(
                &json!({"content": [{"type": "text", "text": "x"}]}),
                Mutant::None
            )
            .unwrap()
            .0,
            "WRONG_RESULT"
        );
    }
}
