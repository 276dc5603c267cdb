//! The `generic` scenario for arbitrary (third-party) MCP servers: its clean
//! control, its negative controls, and the harness's self-checks.
//!
//! A third-party server has no `--fault` flag. Its negative controls are
//! requests it must refuse (a method no server has, a tool it did not list),
//! each under fresh random names and ids, judged on the subject's own answer.
//!
//! The self-checks exercise the harness's oracle alone: a wire fault is
//! applied to a *copy* of the clean control's recorded `tools/list` answer
//! (the recorder keeps the subject's true bytes), corrupted, duplicated or
//! with a required member removed, and the real oracle and a weakened one
//! judge it. Each record holds boundary, trigger, seed, frame index, digests
//! of the original and the delivered frame and the mutation itself, so the
//! delivered bytes can be rebuilt from the raw capture. They show that the
//! oracle can fail for the expected reason; the subject never sees them, so
//! they are never counted as its controls.

use std::collections::BTreeSet;
use std::time::Instant;

use serde_json::{Value, json};

use super::oracle::{
    Judgement, answer_of, check_tools_list, complete_result, judge, judge_refusal, server_identity,
};
use super::record::Frame;
use super::scenario::{
    CleanOutcome, NegativeOutcome, Step, budget, collect, drain, exchange, fresh_id, fresh_token,
    open_negative, opening, rpc, shutdown_step,
};
use super::subject::Session;
use super::vocab::{COMPLETED, Injector, Mutant, NegativeControl, Scenario};
use crate::json::canonical;

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
        Injector::SubjectFlag
        | Injector::RequestUnknownMethod
        | Injector::RequestUnknownTool
        | Injector::RequestInvalidInput => {
            return None;
        }
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

/// One harness self-check of a trial: a wire fault applied to a copy of the
/// clean control's recorded `tools/list` answer, judged by the real oracle and
/// by the control's mutant. It shows that the oracle can fail for the expected
/// reason; the subject never sees the fault, so it is never counted as a
/// control of the subject.
#[derive(Debug, Clone)]
pub struct SelfCheckRecord {
    pub control: NegativeControl,
    /// The injection record (JSON), when a fault could be applied.
    pub injection: Option<Value>,
    pub observed: Option<Judgement>,
    pub mutant: Option<Judgement>,
}

impl SelfCheckRecord {
    pub fn injected(&self) -> bool {
        self.injection.is_some()
    }
    pub fn observed_as_expected(&self) -> bool {
        self.observed.as_ref().is_some_and(|j| {
            j.verdict == self.control.expected_verdict
                && j.stop_reason == self.control.expected_stop
        })
    }
    pub fn mutant_killed(&self) -> bool {
        self.mutant.as_ref().is_some_and(|j| {
            j.verdict != self.control.expected_verdict
                || j.stop_reason != self.control.expected_stop
        })
    }
    /// The oracle rejected the faulted copy for the expected reason and the
    /// mutant did not.
    pub fn behaved(&self) -> bool {
        self.injected() && self.observed_as_expected() && self.mutant_killed()
    }
    pub fn to_json(&self) -> Value {
        let c = &self.control;
        json!({
            "selfCheck": c.name, "fault": c.fault, "injectedBy": c.injector.method(),
            "boundary": c.boundary, "trigger": c.trigger, "propertyUnderTest": c.property,
            "countedForSubject": false,
            "injection": self.injection,
            "expected": {"verdict": c.expected_verdict, "stopReason": c.expected_stop},
            "observed": self.observed.as_ref().map(Judgement::to_json),
            "mutant": {"id": c.mutant.id(), "judgement": self.mutant.as_ref().map(Judgement::to_json), "killed": self.mutant_killed()},
            "behaved": self.behaved(),
        })
    }
}

/// Run the self-check `neg` on the clean control's recorded `tools/list`
/// answer (nothing is sent to the subject). Without that answer (the clean
/// control stopped earlier) nothing is injected and the check did not run.
pub fn self_check(
    neg: &NegativeControl,
    seed: u64,
    clean: &CleanOutcome,
    budget_ms: u64,
    revision: super::vocab::Revision,
) -> SelfCheckRecord {
    let mut record = SelfCheckRecord {
        control: neg.clone(),
        injection: None,
        observed: None,
        mutant: None,
    };
    let Some((id, sent, frames)) = &clean.list_exchange else {
        return record;
    };
    let Some((delivered, injection)) = inject(neg, seed, *id, frames) else {
        return record;
    };
    let list_check = check_tools_list(None);
    let check = complete_result(revision, &list_check);
    record.observed = Some(judge(
        *id,
        &delivered,
        &[],
        *sent,
        budget_ms,
        Mutant::None,
        &check,
    ));
    record.mutant = Some(judge(
        *id,
        &delivered,
        &[],
        *sent,
        budget_ms,
        neg.mutant,
        &check,
    ));
    record.injection = Some(injection);
    record
}

/// A tool result's shape (typed content blocks), then `isError` (`TOOL_ERROR`).
fn check_call_shape(result: &Value, _: Mutant) -> Option<(&'static str, String)> {
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
    None
}

/// A negative control whose fault is a request the subject must refuse: a
/// method no MCP server has, or a tool the subject did not list, each named
/// with a fresh random token and sent with a fresh random id. The subject's
/// answer is judged by the real oracle (as if success were expected) and by
/// the mutant that takes a refusal for success (see `judge_refusal`). Returns
/// the outcome and the harness's injection log (the request's method, id,
/// length and SHA-256 of the bytes written).
pub async fn run_request_negative(
    session: &mut Session,
    scenario: &Scenario,
    neg: &NegativeControl,
    trial: (usize, u32),
) -> (NegativeOutcome, Option<Vec<u8>>) {
    let mut out = match open_negative(session, scenario).await {
        Ok(out) => out,
        Err(out) => return (out, None),
    };
    let revision = session.revision();
    let id = fresh_id();
    let token = fresh_token();
    // A tool-contract control first sends the valid input (its twin) on
    // the same session: the refusal that follows is tied to the defect only
    // when the twin was accepted (a result that is not a tool error).
    let mut twin = Value::Null;
    // The first trial sends the inputs the scenario records; each later one
    // fresh values from the tool's schema, seeded by the trial's seed.
    let fresh = match (&neg.input, trial) {
        (Some(input), (index, seed)) if index > 1 => {
            let mut h = u64::from(seed);
            for b in neg.name.bytes() {
                h = h.wrapping_mul(0x0100_0000_01B3).wrapping_add(u64::from(b));
            }
            super::contract::fresh_inputs(input, h)
        }
        _ => None,
    };
    let input = neg.input.as_ref().map(|i| match &fresh {
        Some((valid, invalid)) => super::vocab::ToolInput {
            valid: valid.clone(),
            invalid: invalid.clone(),
            ..i.clone()
        },
        None => i.clone(),
    });
    if let (Injector::RequestInvalidInput, Some(input)) = (neg.injector, &input) {
        let twin_id = fresh_id();
        let message = rpc(
            revision,
            twin_id,
            "tools/call",
            json!({"name": input.tool, "arguments": input.valid}),
        );
        if session.send(&message).await.is_err() {
            return (out, None);
        }
        let deadline = Instant::now() + budget(scenario) + budget(scenario);
        let (frames, _) = collect(session, twin_id, deadline).await;
        let answer = answer_of(&frames, twin_id);
        let accepted = answer.as_ref().is_some_and(|a| {
            a.get("result").is_some() && a.pointer("/result/isError") != Some(&Value::Bool(true))
        });
        if accepted {
            out.prerequisites.push("VALID_TWIN_ACCEPTED");
        }
        twin = json!({"id": twin_id, "accepted": accepted});
        let _ = session.take_http_exchanges();
    }
    let (method, params) = match (neg.injector, &input) {
        (Injector::RequestUnknownMethod, _) => (format!("mcpres-{token}/unknown"), json!({})),
        (Injector::RequestInvalidInput, Some(input)) => (
            "tools/call".to_string(),
            json!({"name": input.tool, "arguments": input.invalid}),
        ),
        _ => (
            "tools/call".to_string(),
            json!({"name": format!("mcpres-{token}-unlisted"), "arguments": {}}),
        ),
    };
    let message = rpc(revision, id, &method, params);
    let bytes = serde_json::to_vec(&message).expect("a Value always serializes");
    let Ok(sent) = session.send(&message).await else {
        return (out, None);
    };
    out.call_sent_ms = sent;
    out.prerequisites.push("TARGET_REQUEST_SENT");
    out.volatile = vec![token];
    // The strings of this trial's inputs (fresh after the first trial):
    // replaced before its answer is compared with another trial's (an error
    // text may quote the input). Longest first, so that no string is
    // replaced inside a longer one.
    if let Some(input) = &input {
        let mut strings = Vec::new();
        super::contract::volatile_strings(&input.valid, &mut strings);
        super::contract::volatile_strings(&input.invalid, &mut strings);
        strings.retain(|s| s.starts_with("mcpres"));
        strings.sort_by_key(|s| std::cmp::Reverse(s.len()));
        strings.dedup();
        out.volatile.extend(strings);
    }
    let mut record = json!({
        "event": "injection", "fault": neg.fault, "boundary": neg.boundary,
        "trigger": neg.trigger, "request": {"id": id, "method": message["method"],
        "params": message["params"], "bytes": bytes.len(), "sha256": canonical::sha256_hex(&bytes)},
    });
    if let Some(input) = &input {
        record["toolInput"] = json!({
            "tool": input.tool, "violation": input.violation, "member": input.member,
            "twin": twin, "valid": input.valid, "freshValues": fresh.is_some(),
        });
    }
    let mut log = canonical::to_vec(&record).unwrap_or_default();
    log.push(b'\n');
    // Wait for the answer before closing stdin: some SDKs cancel in-flight
    // requests on stdin EOF.
    let deadline = Instant::now() + budget(scenario) + budget(scenario);
    let (mut frames, _) = collect(session, id, deadline).await;
    session.close_stdin();
    let (rest, ended_by) = drain(session, Instant::now() + budget(scenario)).await;
    frames.extend(rest);
    if ended_by == "EOF" {
        out.prerequisites.push("SUBJECT_OUTPUT_COMPLETE");
    }
    out.frames = frames.len();
    out.answer = answer_of(&frames, id);
    let http = session.take_http_exchanges();
    let object: &super::oracle::ResultCheck = &|_: &Value, _: Mutant| None;
    let base: &super::oracle::ResultCheck = match neg.injector {
        Injector::RequestUnknownMethod => object,
        _ => &check_call_shape,
    };
    let check = complete_result(revision, base);
    for (slot, mutant) in [
        (&mut out.observed, Mutant::None),
        (&mut out.mutant, neg.mutant),
    ] {
        let judged = judge_refusal(
            id,
            &frames,
            &http,
            sent,
            scenario.exchange_budget_ms,
            mutant,
            &check,
        );
        *slot = Some(if neg.injector == Injector::RequestInvalidInput {
            input_refusal(judged, out.answer.as_ref())
        } else {
            judged
        });
    }
    out.observed = out
        .observed
        .take()
        .map(|j| super::scenario::limit_checked(session, j));
    (out, Some(log))
}

/// A tool-contract control's refusal counts only as what MCP names for an
/// invalid input: a JSON-RPC error -32602 (invalid params) or a tool result
/// with `isError: true`. Any other error code (an internal error -32603
/// above all: the input reached code that did not validate it) is no such
/// refusal: `ERROR_RESPONSE`, and the control fails.
fn input_refusal(judged: Judgement, answer: Option<&Value>) -> Judgement {
    let code = answer
        .and_then(|a| a.pointer("/error/code"))
        .and_then(Value::as_i64);
    match code {
        Some(c) if c != -32602 && judged.stop_reason == super::oracle::REQUEST_REFUSED => {
            Judgement::reject(
                "ERROR_RESPONSE",
                format!(
                    "refused with the error code {c}, not -32602 (invalid params) or a tool error{}",
                    if c == -32603 {
                        ": an internal error, so the input reached code that did not validate it"
                    } else {
                        ""
                    }
                ),
            )
        }
        _ => judged,
    }
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
    move |result, mutant| {
        if let Some(failure) = check_call_shape(result, mutant) {
            return Some(failure);
        }
        let blocks = result["content"].as_array().map_or(&[][..], Vec::as_slice);
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
        answer: None,
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
    if let Some(result) = result_of(&frames, base + 1) {
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
        base + 2,
        rpc(revision, base + 2, "tools/list", json!({})),
        &list_check,
    )
    .await
    else {
        finish(&mut out, "SUBJECT_UNWRITABLE");
        return out;
    };
    let (stop, ok) = (step.judgement.stop_reason, step.judgement.accepted());
    out.list_exchange = Some((base + 2, step.sent_ms, frames.clone()));
    out.steps.push(step);
    if !ok {
        finish(&mut out, stop);
        return out;
    }
    let tools: Vec<Value> = result_of(&frames, base + 2)
        .and_then(|r| r.get("tools").and_then(Value::as_array).cloned())
        .unwrap_or_default();
    let find = |name: &str| tools.iter().find(|t| t["name"] == name).cloned();

    // One tool call: the tool the operator named (--tool), else echo when
    // listed with a single string argument, else a tool whose annotations
    // declare it read-only and that takes no required argument. When none
    // can be called safely, the step says why and no tool is called.
    let mut calls: Vec<(i64, Value, Box<super::oracle::ResultCheck>)> = Vec::new();
    let mut picked: Option<i64> = None;
    let echo = find("echo").map(|t| echo_argument(&t));
    match (&scenario.named_tool, echo) {
        (Some(named), _) => match find(&named.name) {
            Some(_) => calls.push((
                // A tool-contracts run's input is generated from the
                // schema: a tool error to it is allowed (the values may mean
                // nothing to the tool), and leaves the run incomplete.
                {
                    if scenario.tool_contracts {
                        picked = Some(base + 3);
                    }
                    base + 3
                },
                rpc(
                    revision,
                    base + 3,
                    "tools/call",
                    json!({"name": named.name, "arguments": named.arguments}),
                ),
                Box::new(check_call_shape),
            )),
            None => {
                out.steps.push(skipped(
                    "tools/call",
                    base + 3,
                    "NAMED_TOOL_NOT_LISTED",
                    format!(
                        "the tool named with --tool ({:?}) is not listed; no tool was called",
                        named.name
                    ),
                    session.now_ms(),
                ));
            }
        },
        (None, Some(Some(arg))) => calls.push((
            base + 3,
            rpc(
                revision,
                base + 3,
                "tools/call",
                json!({"name": "echo", "arguments": {arg: probe}}),
            ),
            Box::new(check_echo(probe.to_string())),
        )),
        (None, echo) => match read_only_tool(&tools) {
            Some(name) => {
                picked = Some(base + 3);
                calls.push((
                    base + 3,
                    rpc(
                        revision,
                        base + 3,
                        "tools/call",
                        json!({"name": name, "arguments": {}}),
                    ),
                    Box::new(check_call_shape),
                ));
            }
            None => {
                out.steps.push(skipped(
                    "tools/call",
                    base + 3,
                    "NO_SAFE_TOOL",
                    format!(
                        "{}, and no listed tool declares readOnlyHint: true (without destructiveHint or openWorldHint true) and takes no required argument; no tool was called (name one with --tool NAME --tool-args JSON)",
                        if echo.is_some() {
                            "echo is listed but takes no single string argument"
                        } else {
                            "the server lists no echo tool"
                        }
                    ),
                    session.now_ms(),
                ));
            }
        },
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
                base + 4,
                rpc(
                    revision,
                    base + 4,
                    "tools/call",
                    json!({"name": "get-env", "arguments": {}}),
                ),
                Box::new(check_env(env_keys.clone())),
            ));
        }
        _ => out.steps.push(skipped(
            "tools/call",
            base + 4,
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
        // A tool the harness picked and called without arguments may answer
        // with a tool error (`isError: true`): MCP allows it, and the
        // arguments were the harness's guess. The step keeps the rejection,
        // but the control is not failed for it: no tool call was shown.
        if !ok && stop == "TOOL_ERROR" && picked == Some(id) {
            continue;
        }
        // A tool-contracts run's call answered after the exchange budget:
        // MCP sets no time bound on a tool, so a slow tool (one that runs
        // for a while by design) is no failure; the call is not shown
        // either, and the run is incomplete.
        if !ok && stop == "TIMING_BUDGET_EXCEEDED" && picked == Some(id) && scenario.tool_contracts
        {
            continue;
        }
        if !ok {
            finish(&mut out, stop);
            return out;
        }
    }
    let step = shutdown_step(session, scenario).await;
    let stop = step.judgement.stop_reason;
    out.steps.push(step);
    // The scenario claims a tool call. When no tool could be called safely
    // (none listed, none annotated read-only, a named tool not listed), the
    // control is not failed: it is incomplete, and says why (the skipped
    // step). A server with tools that all failed is another matter: those
    // steps stopped the control above.
    if stop == COMPLETED && !out.tool_called() {
        finish(&mut out, NO_SAFE_TOOL_CALL);
        return out;
    }
    finish(&mut out, stop);
    out
}

pub use super::vocab::NO_SAFE_TOOL_CALL;

/// A tool the harness may call on its own: one whose annotations declare it
/// read-only (`readOnlyHint: true`), that does not declare itself
/// destructive or open-world (`destructiveHint`, `openWorldHint` not
/// `true`), and that takes no required argument (it is called with `{}`).
/// Tools that declare `openWorldHint: false` come first; then the order of
/// the list.
fn read_only_tool(tools: &[Value]) -> Option<String> {
    let safe = |t: &&Value| {
        let a = &t["annotations"];
        a["readOnlyHint"] == true
            && a["destructiveHint"] != true
            && a["openWorldHint"] != true
            && t["name"].is_string()
            && t.pointer("/inputSchema/required")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
    };
    let candidates: Vec<&Value> = tools.iter().filter(safe).collect();
    candidates
        .iter()
        .find(|t| t["annotations"]["openWorldHint"] == false)
        .or(candidates.first())
        .and_then(|t| t["name"].as_str())
        .map(String::from)
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
    use crate::produce::harness::vocab::WIRE_TRIGGER;

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
        let generic = crate::produce::harness::scenario::find("generic").unwrap();
        for neg in generic
            .negatives
            .iter()
            .filter(|n| n.injector.is_self_check())
        {
            for seed in 1..40u64 {
                let (delivered, record) = inject(neg, seed, 2, &frames).expect("injected");
                assert_eq!(record["frameIndex"], 1);
                assert_eq!(record["seed"], seed);
                assert_eq!(record["trigger"], WIRE_TRIGGER);
                let real = judge(2, &delivered, &[], 0, 100, Mutant::None, &check);
                assert_eq!(
                    (real.verdict, real.stop_reason),
                    (super::super::vocab::REJECT, neg.expected_stop.as_str()),
                    "{} seed {seed}",
                    neg.name
                );
                let weak = judge(2, &delivered, &[], 0, 100, neg.mutant, &check);
                assert_ne!(
                    (weak.verdict, weak.stop_reason),
                    (super::super::vocab::REJECT, neg.expected_stop.as_str()),
                    "{} seed {seed}: mutant survived",
                    neg.name
                );
                // The raw frames are not touched.
                assert_eq!(frames[1].bytes, good.to_vec());
            }
        }
        // Nothing answers id 7: nothing is injected.
        let neg = generic
            .negatives
            .iter()
            .find(|n| n.injector.is_self_check())
            .unwrap();
        assert!(inject(neg, 1, 7, &frames).is_none());
    }

    #[test]
    fn only_a_tool_annotated_read_only_without_required_arguments_is_picked() {
        let tool = |name: &str, annotations: Value, required: &[&str]| json!({"name": name, "inputSchema": {"type": "object", "required": required}, "annotations": annotations});
        let unsafe_tools = vec![
            json!({"name": "plain", "inputSchema": {"type": "object"}}),
            tool(
                "destructive",
                json!({"readOnlyHint": true, "destructiveHint": true}),
                &[],
            ),
            tool(
                "open",
                json!({"readOnlyHint": true, "openWorldHint": true}),
                &[],
            ),
            tool("writer", json!({"readOnlyHint": false}), &[]),
            tool("needs", json!({"readOnlyHint": true}), &["id"]),
            tool("stringly", json!({"readOnlyHint": "true"}), &[]),
        ];
        assert_eq!(read_only_tool(&unsafe_tools), None);
        let mut tools = unsafe_tools.clone();
        tools.push(tool("maybe-open", json!({"readOnlyHint": true}), &[]));
        assert_eq!(read_only_tool(&tools).as_deref(), Some("maybe-open"));
        // One that declares itself closed-world comes first.
        tools.push(tool(
            "closed",
            json!({"readOnlyHint": true, "openWorldHint": false}),
            &[],
        ));
        assert_eq!(read_only_tool(&tools).as_deref(), Some("closed"));
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
