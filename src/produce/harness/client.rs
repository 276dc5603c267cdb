//! Client-to-server faults: the harness sends the subject broken input and
//! checks how it copes.
//!
//! Unlike the negative controls (which show that the *oracle* can fail), these
//! test the *subject*: after `initialize`, each fault's bytes go to the
//! subject's stdin, followed by a `tools/list` liveness probe. A fault is
//! handled when the subject did not accept the broken input as a successful
//! request, answered it with a JSON-RPC error when the scenario requires one
//! (with the named code, if any), stayed alive, and answered the probe
//! correctly. Stdio only.

use std::time::Instant;

use serde_json::{Value, json};

use super::oracle::{Judgement, check_tools_list, judge};
use super::record::Frame;
use super::scenario::{budget, collect, open_session, rpc};
use super::subject::Session;
use super::vocab::{
    ACCEPT, COMPLETED, ClientFault, ClientFaultKind, Mutant, REJECT, Revision, Scenario,
};

/// First request id used by the faults; each fault takes two ids (its own
/// and the probe's).
const FIRST_ID: i64 = 10;

/// The bytes of a fault (without the newline) and the id it carries, if any.
/// The well-formed ones carry the revision's `_meta` on 2026-07-28, so that
/// only the named fault is wrong with them.
pub fn fault_bytes(kind: ClientFaultKind, id: i64, revision: Revision) -> (Vec<u8>, Option<i64>) {
    let well_formed = |method: &str, params: Value| {
        serde_json::to_vec(&rpc(revision, id, method, params)).expect("a Value serializes")
    };
    match kind {
        ClientFaultKind::TruncatedJson => (
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"#)
                .into_bytes(),
            None,
        ),
        ClientFaultKind::InvalidUtf8 => {
            let mut b = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":""#
            )
            .into_bytes();
            b.extend_from_slice(&[0xC3, 0x28, 0xFF]);
            b.extend_from_slice(br#""}}}"#);
            (b, None)
        }
        ClientFaultKind::UnknownMethod => {
            (well_formed("mcpres/no-such-method", json!({})), Some(id))
        }
        ClientFaultKind::CallWithoutName => (
            well_formed("tools/call", json!({"arguments": {}})),
            Some(id),
        ),
        ClientFaultKind::NotJsonRpc => (
            format!(r#"{{"id":{id},"call":"tools/list"}}"#).into_bytes(),
            None,
        ),
    }
}

/// How one fault was handled.
#[derive(Debug, Clone)]
pub struct ClientFaultResult {
    pub fault: ClientFault,
    pub id: i64,
    pub probe_id: i64,
    pub sent_ms: u64,
    pub ended_ms: u64,
    /// The subject's answer to the broken input: `ERROR <code>`, `ACCEPTED`, or `NONE`.
    pub answer: String,
    /// The answer came after the probe that followed the fault.
    pub late: bool,
    /// The liveness probe's judgement.
    pub probe: Judgement,
    pub judgement: Judgement,
}

impl ClientFaultResult {
    pub fn passed(&self) -> bool {
        self.judgement.accepted()
    }
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.fault.name, "fault": self.fault.kind.id(), "requestId": self.id,
            "probeId": self.probe_id, "sentOffsetMs": self.sent_ms, "endedOffsetMs": self.ended_ms,
            "expect": self.fault.expect_label(),
            "errorCode": self.fault.error_code, "answer": self.answer, "lateAnswer": self.late,
            "probe": self.probe.to_json(), "judgement": self.judgement.to_json(),
        })
    }
}

/// What the client-fault session observed.
#[derive(Debug, Clone, Default)]
pub struct ClientOutcome {
    pub opened: bool,
    pub results: Vec<ClientFaultResult>,
    pub started_ms: u64,
    pub ended_ms: u64,
}

impl ClientOutcome {
    pub fn passed(&self) -> bool {
        self.opened && self.results.iter().all(ClientFaultResult::passed)
    }
}

fn reject(stop: &'static str, detail: impl Into<String>) -> Judgement {
    Judgement {
        verdict: REJECT,
        stop_reason: stop,
        detail: detail.into(),
    }
}

/// Is this frame the subject's answer to the broken input with nominal id
/// `id`? A subject that could not read the id answers with `id: null`.
fn answers_fault(message: &Value, id: i64, probe_id: i64) -> bool {
    message.get("method").is_none()
        && message["id"] != json!(probe_id)
        && (message["id"] == json!(id) || message["id"].is_null())
}

/// How the subject answered a fault: `ERROR <code>`, `ACCEPTED` or `NONE`.
fn answer_of(message: &Value) -> String {
    match message.get("error") {
        Some(e) => format!("ERROR {}", e["code"]),
        None => "ACCEPTED".into(),
    }
}

/// The verdict on one fault, from its answer and the probe's judgement.
fn decide(fault: &ClientFault, answer: &str, probe: &Judgement, eof: bool) -> Judgement {
    if answer == "ACCEPTED" && !fault.accept_allowed {
        return reject(
            "FAULTY_INPUT_ACCEPTED",
            "the subject answered the broken input with a result",
        );
    }
    if !probe.accepted() {
        let stop = if eof && probe.stop_reason == "NO_RESPONSE" {
            "SUBJECT_EXITED"
        } else {
            probe.stop_reason
        };
        return reject(
            stop,
            format!("liveness probe after the fault: {}", probe.detail),
        );
    }
    if fault.error_required && answer == "NONE" {
        return reject(
            "NO_ERROR_RESPONSE",
            "the broken input got no JSON-RPC error",
        );
    }
    if let (Some(code), Some(got)) = (fault.error_code, answer.strip_prefix("ERROR "))
        && got != code.to_string()
    {
        return reject(
            "WRONG_ERROR_CODE",
            format!("error code {got}, expected {code}"),
        );
    }
    Judgement {
        verdict: ACCEPT,
        stop_reason: COMPLETED,
        detail: format!(
            "answer to the broken input: {answer}; the liveness probe was answered correctly"
        ),
    }
}

/// Judge one fault (nominal id `id`) from the frames read up to the probe's
/// answer: the answer, the probe's judgement and the verdict.
pub fn judge_fault(
    fault: &ClientFault,
    id: i64,
    probe_id: i64,
    frames: &[Frame],
    eof: bool,
    probe_sent_ms: u64,
    budget_ms: u64,
) -> (String, Judgement, Judgement) {
    let mut answer = "NONE".to_string();
    let mut rest = Vec::new();
    for f in frames {
        let parsed = std::str::from_utf8(&f.bytes)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(t).ok());
        match parsed {
            Some(m) if answers_fault(&m, id, probe_id) => answer = answer_of(&m),
            _ => rest.push(f.clone()),
        }
    }
    let probe = judge(
        probe_id,
        &rest,
        &[],
        probe_sent_ms,
        budget_ms,
        Mutant::None,
        &check_tools_list(None),
    );
    let verdict = decide(fault, &answer, &probe, eof);
    (answer, probe, verdict)
}

/// Take out the frames that answer an earlier fault (a subject may answer
/// after the probe that followed it) and record them on that fault.
fn attribute_late(frames: Vec<Frame>, results: &mut [ClientFaultResult]) -> Vec<Frame> {
    let mut rest = Vec::new();
    for f in frames {
        let message = serde_json::from_slice::<Value>(&f.bytes).ok();
        let earlier = message.as_ref().and_then(|m| {
            if m.get("method").is_some() || m["id"].is_null() {
                return None;
            }
            results.iter_mut().find(|r| m["id"] == json!(r.id))
        });
        match (earlier, message) {
            (Some(r), Some(m)) => {
                r.answer = answer_of(&m);
                r.late = true;
                r.judgement = decide(&r.fault, &r.answer, &r.probe, false);
            }
            _ => rest.push(f),
        }
    }
    rest
}

/// Drive every client fault of `scenario` on one session.
pub async fn run_client_faults(session: &mut Session, scenario: &Scenario) -> ClientOutcome {
    let mut out = ClientOutcome {
        started_ms: session.now_ms(),
        ..Default::default()
    };
    let revision = session.revision();
    out.opened = open_session(session, scenario).await.1;
    if !out.opened {
        out.ended_ms = session.now_ms();
        return out;
    }
    let mut id = FIRST_ID;
    let mut eof = false;
    for fault in &scenario.client_faults {
        let bytes = fault_bytes(fault.kind, id, revision).0;
        let probe_id = id + 1;
        let sent_ms = session.now_ms();
        let mut frames = Vec::new();
        let mut probe_sent_ms = sent_ms;
        if session.send_raw(&bytes).await.is_ok() {
            let probe = rpc(revision, probe_id, "tools/list", json!({}));
            match session.send(&probe).await {
                Ok(at) => probe_sent_ms = at,
                Err(_) => eof = true,
            }
        } else {
            eof = true;
        }
        if !eof {
            let deadline = Instant::now() + budget(scenario) + budget(scenario);
            let (read, ended_by) = collect(session, probe_id, deadline).await;
            frames = read;
            eof = ended_by == "EOF";
        }
        let frames = attribute_late(frames, &mut out.results);
        let (answer, probe, judgement) = judge_fault(
            fault,
            id,
            probe_id,
            &frames,
            eof,
            probe_sent_ms,
            scenario.exchange_budget_ms,
        );
        out.results.push(ClientFaultResult {
            fault: fault.clone(),
            id,
            probe_id,
            sent_ms,
            ended_ms: session.now_ms(),
            answer,
            late: false,
            probe,
            judgement,
        });
        id += 2;
        if eof {
            break;
        }
    }
    if !eof {
        // A last probe flushes answers that arrive after the last fault's probe.
        let flush = id;
        let probe = rpc(revision, flush, "tools/list", json!({}));
        if session.send(&probe).await.is_ok() {
            let deadline = Instant::now() + budget(scenario);
            let (frames, _) = collect(session, flush, deadline).await;
            attribute_late(frames, &mut out.results);
        }
    }
    out.ended_ms = session.now_ms();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(s: &str) -> Frame {
        Frame {
            bytes: s.as_bytes().to_vec(),
            at_ms: 5,
        }
    }

    fn fault(kind: ClientFaultKind, error_required: bool, code: Option<i64>) -> ClientFault {
        ClientFault {
            name: "f".into(),
            kind,
            error_required,
            accept_allowed: false,
            error_code: code,
        }
    }

    const PROBE: &str = r#"{"jsonrpc":"2.0","id":11,"result":{"tools":[]}}"#;

    #[test]
    fn a_fault_is_handled_only_with_the_right_answer_and_a_live_subject() {
        let unknown = fault(ClientFaultKind::UnknownMethod, true, Some(-32601));
        let err = frame(r#"{"jsonrpc":"2.0","id":10,"error":{"code":-32601,"message":"x"}}"#);
        let (answer, _, j) = judge_fault(&unknown, 10, 11, &[err, frame(PROBE)], false, 0, 100);
        assert_eq!(answer, "ERROR -32601");
        assert!(j.accepted(), "{j:?}");
        // Wrong code, no answer, accepted input, dead subject.
        let wrong = frame(r#"{"jsonrpc":"2.0","id":10,"error":{"code":-32603,"message":"x"}}"#);
        let (_, _, j) = judge_fault(&unknown, 10, 11, &[wrong, frame(PROBE)], false, 0, 100);
        assert_eq!(j.stop_reason, "WRONG_ERROR_CODE");
        let (_, _, j) = judge_fault(&unknown, 10, 11, &[frame(PROBE)], false, 0, 100);
        assert_eq!(j.stop_reason, "NO_ERROR_RESPONSE");
        let ok = frame(r#"{"jsonrpc":"2.0","id":10,"result":{}}"#);
        let (_, _, j) = judge_fault(&unknown, 10, 11, &[ok, frame(PROBE)], false, 0, 100);
        assert_eq!(j.stop_reason, "FAULTY_INPUT_ACCEPTED");
        let (_, _, j) = judge_fault(&unknown, 10, 11, &[], true, 0, 100);
        assert_eq!(j.stop_reason, "SUBJECT_EXITED");
        // Silence is fine where the scenario allows it; a parse error has id null.
        let lenient = fault(ClientFaultKind::TruncatedJson, false, None);
        let (answer, _, j) = judge_fault(&lenient, 10, 11, &[frame(PROBE)], false, 0, 100);
        assert_eq!(answer, "NONE");
        assert!(j.accepted());
        let parse =
            frame(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
        let (answer, _, j) = judge_fault(&lenient, 10, 11, &[parse, frame(PROBE)], false, 0, 100);
        assert_eq!(answer, "ERROR -32700");
        assert!(j.accepted());
        // SURVIVE: a lenient answer is recorded, not failed; death still fails.
        let survive = ClientFault {
            accept_allowed: true,
            ..fault(ClientFaultKind::InvalidUtf8, false, None)
        };
        let lossy = frame(r#"{"jsonrpc":"2.0","id":10,"result":{"content":[]}}"#);
        let (answer, _, j) = judge_fault(&survive, 10, 11, &[lossy, frame(PROBE)], false, 0, 100);
        assert_eq!(answer, "ACCEPTED");
        assert!(j.accepted());
        let (_, _, j) = judge_fault(&survive, 10, 11, &[], true, 0, 100);
        assert_eq!(j.stop_reason, "SUBJECT_EXITED");
    }

    #[test]
    fn a_late_answer_is_recorded_on_the_fault_it_answers() {
        let lenient = fault(ClientFaultKind::TruncatedJson, false, None);
        let (answer, probe, judgement) =
            judge_fault(&lenient, 10, 11, &[frame(PROBE)], false, 0, 100);
        assert_eq!(answer, "NONE");
        let mut results = vec![ClientFaultResult {
            fault: lenient,
            id: 10,
            probe_id: 11,
            sent_ms: 0,
            ended_ms: 1,
            answer,
            late: false,
            probe,
            judgement,
        }];
        // The next fault's window holds an answer to id 10 and an answer
        // with an id nobody sent: only the first is attributed.
        let late = frame(r#"{"jsonrpc":"2.0","id":10,"result":{"tools":[]}}"#);
        let stray = frame(r#"{"jsonrpc":"2.0","id":99,"result":{}}"#);
        let rest = attribute_late(vec![late, stray], &mut results);
        assert_eq!(rest.len(), 1);
        assert_eq!(results[0].answer, "ACCEPTED");
        assert!(results[0].late);
        assert_eq!(results[0].judgement.stop_reason, "FAULTY_INPUT_ACCEPTED");
    }

    #[test]
    fn fault_bytes_are_broken_in_the_named_way() {
        let (b, id) = fault_bytes(ClientFaultKind::TruncatedJson, 10, Revision::default());
        assert!(serde_json::from_slice::<Value>(&b).is_err());
        assert_eq!(id, None);
        let (b, _) = fault_bytes(ClientFaultKind::InvalidUtf8, 10, Revision::default());
        assert!(std::str::from_utf8(&b).is_err());
        let (b, id) = fault_bytes(ClientFaultKind::UnknownMethod, 12, Revision::default());
        let v: Value = serde_json::from_slice(&b).unwrap();
        assert_eq!((v["id"].clone(), id), (json!(12), Some(12)));
        let (b, _) = fault_bytes(ClientFaultKind::CallWithoutName, 10, Revision::default());
        let v: Value = serde_json::from_slice(&b).unwrap();
        assert!(v["params"].get("name").is_none());
        let (b, _) = fault_bytes(ClientFaultKind::NotJsonRpc, 10, Revision::default());
        let v: Value = serde_json::from_slice(&b).unwrap();
        assert!(v.get("jsonrpc").is_none());
    }
}
