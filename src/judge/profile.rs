//! Profile evaluations judged from their artifacts (spec/profiles.md,
//! "Producing an evaluation" and "The evaluation directory").
//!
//! A check's verdict follows from its three observations, each stored as
//! `artifacts/<check>/<role>.json` (`role`: `positive`, `negative`,
//! `mutant`): the first of the positive and the negative control that did
//! not hold fails it; a mutant met with the control's reason leaves it not
//! observed; otherwise it passes with the positive's expected reason. A
//! check with no observation at all could not be exercised (not observed).
//! The run's result, the evaluation's result, the claim and the cleanup
//! follow from the verdicts and `artifacts/cleanup.json`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::Disagreement;
use crate::json::canonical;
use crate::model::vocab::{ObservationSource, ProbeOutcome};

/// The reason of a check that could not be exercised against the subject.
pub const CHECK_NOT_OBSERVED: &str = "MCP_RES_CHECK_NOT_OBSERVED";
/// The reason every classifier gives an input the subject refused as
/// malformed JSON: it failed the syntax guard, before any property.
pub const SYNTAX_GUARD: &str = "MCP_RES_SYNTAX_GUARD";
/// The reason of a missing observation.
pub const NO_ANSWER: &str = "MCP_RES_NO_ANSWER";
/// The reason a mutant that must be answered meets when it is
/// (`crate::diag::reasons::MUTANT_REQUEST_ANSWERED`).
pub const MUTANT_REQUEST_ANSWERED: &str = "MCP_RES_MUTANT_REQUEST_ANSWERED";
/// The reason a surviving mutant gives a check.
pub const MUTANT_SURVIVED: &str = "MCP_RES_WRONG_REASON_MUTANT_SURVIVED";
/// The reason of a negative control whose near-identical valid twin, sent
/// on the same connection just before it, was not accepted.
pub const VALID_TWIN_REFUSED: &str = "MCP_RES_VALID_TWIN_REFUSED";
/// The reason of a version or era refusal answered -32601 (method not found).
pub const METHOD_NOT_FOUND_NOT_CREDITED: &str = "MCP_RES_METHOD_NOT_FOUND_NOT_CREDITED";
/// The reason of a control met in a way the specification allows.
pub const BEHAVIOUR_LEFT_OPEN: &str = "MCP_RES_BEHAVIOUR_LEFT_OPEN";
/// The subject answered the evaluated revision's opening with -32601: the
/// observation could not be made (credited only when the stored stdout
/// shows that answer).
pub const REVISION_NOT_SPOKEN: &str = "MCP_RES_REVISION_NOT_SPOKEN";
/// What an observation is judged as whose label says what its stored bytes
/// do not show (a twin refused that the bytes show accepted).
pub const LABEL_NOT_IN_RECORD: &str = "MCP_RES_LABEL_NOT_IN_RECORD";
/// The subject could not be started, or its opening got no answer: the
/// probe could not be made.
pub const OPEN_FAILED: &str = "MCP_RES_OPEN_FAILED";
/// The subject ended after mcpres asked it to: its end says nothing of how
/// it met the input.
pub const ENDED_BY_RUNNER: &str = "MCP_RES_ENDED_BY_RUNNER";
/// The subject exited, or closed its stdout, instead of answering.
const SUBJECT_EXITED: &str = crate::diag::reasons::SUBJECT_EXITED;
/// The subject answered the opening request with an error: the lifecycle's
/// MUST is broken, and the check fails.
pub const OPEN_REFUSED: &str = "MCP_RES_OPEN_REFUSED";
/// The reasons an observation gives when the record shows the property
/// could not be decided (rather than broken): the check is NOT_OBSERVED
/// with that reason, never a FAIL. A conversation that did not open for
/// want of an answer (silence or a close, which a loaded machine can
/// cause) and an end mcpres caused are among them; an opening answered
/// with an error (`MCP_RES_OPEN_REFUSED`) is not. So are an operational
/// reading without enough samples, one the load generator's own ceiling
/// could have caused, and a record whose injection is not the declared one.
pub const UNDECIDED: [&str; 9] = [
    VALID_TWIN_REFUSED,
    METHOD_NOT_FOUND_NOT_CREDITED,
    BEHAVIOUR_LEFT_OPEN,
    REVISION_NOT_SPOKEN,
    OPEN_FAILED,
    ENDED_BY_RUNNER,
    super::ops::TOO_FEW_SAMPLES,
    super::ops::GENERATOR_LIMITED,
    super::ops::INJECTION_NOT_DECLARED,
];
/// The checks whose negative control is a refusal of a protocol version or
/// era: -32601 (method not found) is never credited to them.
pub const VERSION_REFUSALS: [&str; 5] = [
    "explicit-protocol-revision",
    "supported-version-advertisement",
    "unsupported-version-failure",
    "modern-legacy-auto-behavior",
    "no-connection-as-conversation",
];
/// The checks whose control may be refused with a result: at 2025-11-25 an
/// `initialize` naming a version the server does not support is answered
/// with a result naming one it does (version negotiation).
pub const RESULT_REFUSALS: [&str; 2] = [
    "supported-version-advertisement",
    "unsupported-version-failure",
];
/// The reason of an observation no window within the operator's bounds
/// could decide (the subject or the machine too slow): its check is not
/// observed, never failed.
pub const TOO_SLOW_TO_DECIDE: &str = "MCP_RES_TOO_SLOW_TO_DECIDE";
/// The longest `detail` run.json keeps of a check.
pub const DETAIL_MAX: usize = 400;

/// The three observations of a check, in the order their files are named.
pub const ROLES: [&str; 3] = ["positive", "negative", "mutant"];

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    NotObserved,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::NotObserved => "NOT_OBSERVED",
        }
    }
}

/// One observation as its artifact records it.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub expected: ProbeOutcome,
    pub expected_reason: String,
    pub observed: ProbeOutcome,
    pub observed_reason: String,
    pub reached: bool,
    pub detail: String,
    /// How the subject met the input, as the artifact's
    /// `transcript.observation.reply` records it (`result`, `error CODE`,
    /// `no answer`, `stdout closed`), when it does.
    pub answer: Option<String>,
}

impl Observation {
    /// Did it come out exactly as expected (outcome and reason)?
    pub fn held(&self) -> bool {
        self.reached
            && self.observed != ProbeOutcome::NotObserved
            && self.observed == self.expected
            && self.observed_reason == self.expected_reason
    }

    /// The observation of the artifact `doc` of check `id` in `role`, or why
    /// it is none.
    pub fn from_artifact(doc: &Value, id: &str, role: &str) -> Result<Observation, String> {
        if doc["check"] != id || doc["role"] != role {
            return Err(format!(
                "it is the {} artifact of check {}, not the {role} artifact of {id}",
                doc["role"], doc["check"]
            ));
        }
        let outcome = |k: &str| {
            serde_json::from_value::<ProbeOutcome>(doc[k].clone())
                .map_err(|_| format!("its {k} is {}, not a probe outcome", doc[k]))
        };
        let text = |k: &str| {
            doc[k]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("its {k} is {}, not a string", doc[k]))
        };
        Ok(Observation {
            expected: outcome("expectedOutcome")?,
            expected_reason: text("expectedReasonCode")?,
            observed: outcome("observedOutcome")?,
            observed_reason: text("observedReasonCode")?,
            reached: doc["propertyReached"]
                .as_bool()
                .ok_or_else(|| "its propertyReached is not a boolean".to_string())?,
            detail: text("detail")?,
            answer: doc
                .pointer("/transcript/observation/reply")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }

    /// The observation as the evaluation records it, citing the artifact
    /// with digest `sha`.
    pub fn record(&self, sha: &str) -> Value {
        serde_json::to_value(self.check_observation(sha)).expect("plain JSON")
    }

    /// [`Observation::record`], typed: what the runner writes.
    pub fn check_observation<'a>(
        &'a self,
        sha: &'a str,
    ) -> crate::model::profile::CheckObservation<'a> {
        crate::model::profile::CheckObservation {
            source: ObservationSource::RuntimeProbe,
            property_reached: self.reached,
            expected_outcome: self.expected,
            observed_outcome: self.observed,
            expected_reason_code: &self.expected_reason,
            observed_reason_code: &self.observed_reason,
            artifact_sha256: sha,
        }
    }
}

impl Observation {
    /// Write its labels into the artifact document `doc`.
    pub fn label(&self, doc: &mut Value) {
        doc["expectedOutcome"] = json!(self.expected);
        doc["observedOutcome"] = json!(self.observed);
        doc["expectedReasonCode"] = json!(self.expected_reason);
        doc["observedReasonCode"] = json!(self.observed_reason);
        doc["propertyReached"] = json!(self.reached);
    }
}

/// The stdout-protocol-purity check's reading of a positive whose stdout
/// is not protocol only.
pub const STDOUT_POLLUTED: &str = "MCP_RES_STDOUT_POLLUTED";

/// The JSON-RPC error code of an unsupported protocol version on revision
/// 2026-07-28.
pub const UNSUPPORTED_VERSION_CODE: i64 = -32022;

/// What the stored bytes of the observation `o` (check `id`, `role`, its
/// artifact's `transcript`) give where they give something else than its
/// labels: the observation as they give it and why. The verdict is judged on
/// that observation, and the runner stores its labels.
///
/// - stdout-protocol-purity, positive: held only when no complete stdout
///   line of the whole transcript (which ends after the process did) is
///   other than a JSON-RPC 2.0 object; otherwise `MCP_RES_STDOUT_POLLUTED`.
///
/// - a negative control whose `transcript.observation.twin` names the id of
///   the near-identical valid request sent on the same connection before
///   it: when the stored stdout holds no result for that id (or only a
///   result with `isError: true`), the control's refusal is not credited
///   (NOT_OBSERVED, `MCP_RES_VALID_TWIN_REFUSED`).
/// - an observation whose revision-not-spoken label the stored bytes do not
///   bear (no `server/discover` answered -32601): `MCP_RES_LABEL_NOT_IN_RECORD`.
/// - an observation said not opened for want of an answer
///   (`MCP_RES_OPEN_FAILED`) whose stored stdout answers an opening request
///   with an error, or answers under an id no request carries: refused
///   (`MCP_RES_OPEN_REFUSED`).
/// - a positive credited as held whose stored stdin sends opening requests
///   (`initialize`, `server/discover`) none of which the stored stdout
///   answers with a result: the conversation never opened
///   (`MCP_RES_LABEL_NOT_IN_RECORD`).
/// - a positive credited as accepted whose stored bytes answer none of the
///   requests it sent: not accepted (`MCP_RES_LABEL_NOT_IN_RECORD`).
/// - a negative control credited as refused whose
///   `transcript.observation.requestId` the stored bytes (stdout, or the
///   received bytes of its connections) answer with a result that is not
///   `isError`: accepted (`MCP_RES_LABEL_NOT_IN_RECORD`).
/// - the negative control of a version or era refusal
///   ([`VERSION_REFUSALS`]) whose `transcript.observation.requestId` was
///   answered -32601 on stdout: not credited (NOT_OBSERVED,
///   `MCP_RES_METHOD_NOT_FOUND_NOT_CREDITED`).
pub fn rederive(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    // An operational or cache observation is read from its own record alone.
    if let Some((outcome, reason, why)) = super::ops::reading(id, role, transcript)
        .or_else(|| super::cache::reading(id, role, transcript))
    {
        if outcome == o.observed && reason == o.observed_reason {
            return None;
        }
        let told = format!("{} {}", o.observed, o.observed_reason);
        let mut judged = o.clone();
        judged.observed = outcome;
        judged.observed_reason = reason;
        judged.detail = why.clone();
        let why = format!(
            "check {id}: its {role}.json says {told}; its record gives {} {}: {why}",
            judged.observed, judged.observed_reason
        );
        return Some((judged, why));
    }
    // A revision not spoken is credited only where the stored bytes show
    // it: the evaluated revision's opening sent on stdin and -32601 on
    // stdout. Otherwise the probe simply could not be made.
    if o.observed_reason == REVISION_NOT_SPOKEN && !revision_refused(transcript) {
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {REVISION_NOT_SPOKEN}, but its stored transcript holds no `server/discover` answered -32601"
            ),
        ));
    }
    // An observation too slow to decide was never made: its record is the
    // preflight's timing alone. A label of one made, on such a record, and
    // that label on a record of a probe, are not what the record shows.
    let probed = ["chunks", "connections", "events"]
        .iter()
        .any(|k| transcript.get(k).is_some());
    let timing_only = transcript
        .as_object()
        .is_some_and(|t| t.len() == 1 && t.contains_key("timing"));
    if o.observed_reason == TOO_SLOW_TO_DECIDE && probed {
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {TOO_SLOW_TO_DECIDE} (no probe made), but its stored transcript is of a probe"
            ),
        ));
    }
    if o.observed_reason != TOO_SLOW_TO_DECIDE && timing_only {
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {}, but its stored transcript holds only the timing of a probe never made",
                o.observed_reason
            ),
        ));
    }
    // A twin's refusal is given only where a twin was sent, and the runner
    // records every twin it sends.
    if o.observed_reason == VALID_TWIN_REFUSED
        && transcript.get("observation").is_some()
        && transcript.pointer("/observation/twin").is_none()
    {
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {VALID_TWIN_REFUSED}, but its stored observation records no valid twin sent"
            ),
        ));
    }
    // The answers the runner waited for are read again from the stdout
    // prefix each was decided on; a reading of silence, an ending or the
    // runner's own ending needs a wait (or an end) the record shows so.
    if let Some(read) = super::stdio::replies_read(transcript) {
        let readings = match read {
            Err(why) => {
                return Some((
                    not_in_record(o),
                    format!("check {id}: its {role}.json stored transcript: {why}"),
                ));
            }
            Ok(readings) => readings,
        };
        if o.observed_reason == NO_ANSWER
            && !readings
                .iter()
                .any(|r| r == "no answer" || r == "stdout closed")
        {
            return Some((
                not_in_record(o),
                format!(
                    "check {id}: its {role}.json says {NO_ANSWER}, but every answer its runner waited for is in the stored stdout it had read ({})",
                    readings.join(", ")
                ),
            ));
        }
    }
    // The opening's own wait says whether the conversation opened, and how
    // it was met: a result opened it; an error refused it (-32601 to
    // `server/discover` is a revision not spoken); silence or a close is a
    // failure to open unless the opening was answered under another id.
    if let Some(open) = super::stdio::opening_wait(transcript) {
        let silent = open == "no answer" || open == "stdout closed";
        let contradicted = match o.observed_reason.as_str() {
            OPEN_FAILED => !silent,
            OPEN_REFUSED => {
                open == "result"
                    || (silent && super::stdio::opening_misanswered(transcript).is_none())
            }
            REVISION_NOT_SPOKEN => open != "error -32601",
            _ => false,
        };
        if contradicted {
            return Some((
                not_in_record(o),
                format!(
                    "check {id}: its {role}.json says {}, but the wait its runner kept for the opening request read {open}",
                    o.observed_reason
                ),
            ));
        }
    }
    // Over Streamable HTTP every response read the runner made is kept
    // with what it read: no answer needs a read that did not answer (the
    // control's request, where the observation names it), and a close
    // without a response a read that ended so.
    if let Some(reads) = super::http::response_reads(transcript) {
        let request = transcript
            .pointer("/observation/requestId")
            .filter(|r| !r.is_null());
        // The reads of the connection that carried the control's request,
        // where the observation names one sent on exactly one connection.
        let carrier = request
            .and_then(|id| super::http::connection_of(transcript, id).map(|conn| (id, conn)));
        // A connection closed before any response is a close, not silence.
        let closed = |r: &&Value| r["status"].is_null() && r["closedBySubject"] == json!(true);
        let unanswered = |r: &&Value| {
            !closed(r)
                && match carrier {
                    Some((id, conn)) => {
                        r["connection"].as_u64() == Some(conn)
                            && !r["answered"].as_array().is_some_and(|a| a.contains(id))
                    }
                    // A 202 (a notification or a response taken in) asks
                    // for no answer.
                    None => r["answers"].as_u64() == Some(0) && r["status"].as_u64() != Some(202),
                }
        };
        let connect_failed = transcript["events"]
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["event"] == "connect-failed"));
        let answerless =
            |r: &&Value| r["answers"].as_u64() == Some(0) && r["status"].as_u64() != Some(202);
        let opened = super::http::openings_answered(transcript) == Some(true);
        // A status named in the label is one a read got.
        let status_read = |n: u64| reads.iter().any(|r| r["status"].as_u64() == Some(n));
        let frameless = |r: &&Value| {
            r["answers"].as_u64() == Some(0)
                && r["status"]
                    .as_u64()
                    .is_some_and(|s| (200..300).contains(&s))
        };
        let labelled_status = o
            .observed_reason
            .strip_prefix("MCP_RES_HTTP_STATUS_")
            .and_then(|n| n.parse::<u64>().ok());
        // A control or mutant of a refusal-table check labelled with its
        // answer is read from its own connection's bytes below.
        let reread_below = role != "positive"
            && super::http::refusal_of(id).is_some()
            && answer_code(&o.observed_reason);
        if let Some(n) = labelled_status
            && !reread_below
            && !status_read(n)
        {
            return Some((
                not_in_record(o),
                format!(
                    "check {id}: its {role}.json says {}, but no response read its runner kept got the status {n}",
                    o.observed_reason
                ),
            ));
        }
        let contradicted = match o.observed_reason.as_str() {
            crate::diag::reasons::HTTP_NO_ANSWER_FRAME => (!reread_below
                && !reads.iter().any(|r| {
                    frameless(r)
                        && carrier.is_none_or(|(_, conn)| r["connection"].as_u64() == Some(conn))
                }))
                .then_some("no response read its runner kept got a 2xx status without an answer"),
            NO_ANSWER => (!reads.iter().any(unanswered))
                .then_some("every response read its runner kept holds an answer"),
            // A subject gone stays gone: once it has exited no later read is
            // answered, so the last read kept is one without an answer.
            SUBJECT_EXITED => (!connect_failed && !reads.last().is_some_and(answerless))
                .then_some("every connection it opened was accepted and the last response read its runner kept holds an answer"),
            OPEN_FAILED | OPEN_REFUSED => opened
                .then_some("every opening its connections sent got its result in the first response read kept on that connection"),
            crate::diag::reasons::HTTP_CLOSED_WITHOUT_RESPONSE => (!reads.iter().any(closed))
                .then_some("no response read its runner kept ended with the connection closed before a response"),
            _ => None,
        };
        if let Some(why) = contradicted {
            return Some((
                not_in_record(o),
                format!(
                    "check {id}: its {role}.json says {}, but {why}",
                    o.observed_reason
                ),
            ));
        }
    }
    if o.observed_reason == MUTANT_REQUEST_ANSWERED
        && let Some(answer) = super::stdio::request_answer(transcript)
    {
        let Some(answer) = answer else {
            return Some((
                not_in_record(o),
                format!(
                    "check {id}: its {role}.json says {MUTANT_REQUEST_ANSWERED}, but no wait its runner kept for a request other than the opening read an answer"
                ),
            ));
        };
        // A result is an acceptance, an error a refusal.
        let outcome = if answer == "result" {
            ProbeOutcome::Accept
        } else {
            ProbeOutcome::Reject
        };
        if o.observed != outcome {
            return Some((
                Observation {
                    observed: outcome,
                    ..o.clone()
                },
                format!(
                    "check {id}: its {role}.json says {} ({MUTANT_REQUEST_ANSWERED}), but the wait its runner kept for the request read {answer}",
                    o.observed
                ),
            ));
        }
    }
    if o.observed_reason == SUBJECT_EXITED
        && super::stdio::went_by_itself(transcript) == Some(false)
    {
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {SUBJECT_EXITED}, but its stored transcript shows no wait that read stdout closed and no exit or stdout close before the runner's first ending"
            ),
        ));
    }
    // Only an exchange's own reading gives the runner's ending: one that
    // recorded the subject's end after an act of the runner.
    if o.observed_reason == ENDED_BY_RUNNER
        && transcript.get("replies").is_some()
        && transcript.pointer("/observation/endedBy/mcpres").is_none()
    {
        let ended = transcript.pointer("/observation/endedBy").map_or(
            "nothing (no exchange's reading is stored)".to_string(),
            |e| e.to_string(),
        );
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {ENDED_BY_RUNNER}, but its exchange recorded the subject's end as {ended} (not after an ending act of the runner)"
            ),
        ));
    }
    // A request said unanswered whose answer the stored stdout holds before
    // the answer to the liveness request sent right after it, which the
    // runner saw (`alive`): the runner read that answer before it stopped
    // waiting, whatever the timing (it reads stdout from its start).
    if transcript.pointer("/observation/reply") == Some(&json!("no answer"))
        && transcript.pointer("/observation/alive") == Some(&json!(true))
        && let (Some(request), Some(live)) = (
            transcript.pointer("/observation/requestId"),
            transcript.pointer("/observation/liveId"),
        )
        && let Some(stdout) = super::stdio::stdout_bytes(transcript)
    {
        let messages = super::stdio::messages(&stdout);
        let at = |id: &Value| {
            messages
                .iter()
                .position(|m| m.get("id") == Some(id) && m.get("method").is_none())
        };
        if let (Some(answer), Some(live_answer)) = (at(request), at(live))
            && answer < live_answer
        {
            return Some((
                not_in_record(o),
                format!(
                    "check {id}: its {role}.json says its request {request} got no answer, but its stored stdout answers it before the liveness request {live} sent after it"
                ),
            ));
        }
    }
    // A conversation said not to open (no answer, an error, a revision not
    // spoken) whose runner wrote to the process after the stored stdout
    // answered the opening with a result went on past it: it opened. And a
    // process that ran without being sent an opening was not one that failed
    // to open (that label without an opening is a subject that never started,
    // which leaves no process record).
    let never_opening =
        o.observed_reason == OPEN_FAILED && super::stdio::opening_sent(transcript) == Some(false);
    if never_opening {
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {OPEN_FAILED}, but its stored transcript is of a process that ran and was sent no opening request"
            ),
        ));
    }
    if [OPEN_FAILED, OPEN_REFUSED, REVISION_NOT_SPOKEN].contains(&o.observed_reason.as_str())
        && (super::stdio::proceeded_after_opening(transcript) == Some(true)
            || super::http::proceeded_after_opening(transcript) == Some(true))
    {
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {} (the conversation did not open), but its stored bytes answer the opening with a result and the runner wrote to the subject after that answer arrived",
                o.observed_reason
            ),
        ));
    }
    // A conversation said not to open for want of an answer whose stored
    // stdout answers its opening with an error was refused: that is the
    // subject's own doing, and it fails (an unanswered opening does not).
    if o.observed_reason == OPEN_FAILED {
        let answered = super::stdio::opening_error(transcript)
            .map(|code| format!("answers the opening with the error {code}"))
            .or_else(|| {
                super::stdio::opening_misanswered(transcript).map(|stray| {
                    format!(
                        "answers it under the id {stray}, which no request of its stdin carries"
                    )
                })
            });
        if let Some(answered) = answered {
            return Some((
                Observation {
                    observed: ProbeOutcome::NotObserved,
                    observed_reason: OPEN_REFUSED.into(),
                    reached: false,
                    ..o.clone()
                },
                format!(
                    "check {id}: its {role}.json says {OPEN_FAILED} (no answer to the opening), but its stored stdout {answered}"
                ),
            ));
        }
    }
    // A positive credited as held whose stored stdin sends the opening
    // request(s) while the stored stdout answers none of them with a result:
    // the conversation never opened, whatever the label says.
    if role == "positive" && o.held() && super::stdio::opened(transcript) == Some(false) {
        return Some((
            Observation {
                observed: ProbeOutcome::NotObserved,
                observed_reason: LABEL_NOT_IN_RECORD.into(),
                reached: false,
                ..o.clone()
            },
            format!(
                "check {id}: its {role}.json says the property held, but no opening request (initialize, server/discover) of its stored stdin is answered with a result on its stored stdout"
            ),
        ));
    }
    // A positive credited as accepted whose stored bytes answer none of the
    // requests it sent (neither a result nor an error) shows no acceptance.
    if role == "positive"
        && o.held()
        && o.expected == ProbeOutcome::Accept
        && any_request_answered(transcript) == Some(false)
    {
        return Some((
            Observation {
                observed: ProbeOutcome::NoEffect,
                observed_reason: LABEL_NOT_IN_RECORD.into(),
                ..o.clone()
            },
            format!(
                "check {id}: its {role}.json says the subject accepted, but its stored bytes answer none of the requests sent"
            ),
        ));
    }
    // A twin refusal is credited only where the stored bytes show the twin
    // not accepted: relabelling a control as uncredited would otherwise hide
    // what it observed.
    if role == "negative"
        && o.observed_reason == VALID_TWIN_REFUSED
        && let Some(twin) = transcript.pointer("/observation/twin/id")
        && twin_accepted(transcript, twin) == Some(true)
    {
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {VALID_TWIN_REFUSED}, but its stored transcript holds an accepting result for the valid twin {twin}"
            ),
        ));
    }
    // A control or mutant not served, whose valid twin the stored bytes show
    // not accepted, is uncredited whatever else it met: the twin binds every
    // reading but acceptance (`twin_bound`), so no other label of silence,
    // an error or an ending stands beside a refused twin.
    if role != "positive"
        && o.observed != ProbeOutcome::Accept
        && o.observed_reason != VALID_TWIN_REFUSED
        && let Some(twin) = transcript.pointer("/observation/twin/id")
        && twin_accepted(transcript, twin) == Some(false)
    {
        return Some((
            Observation {
                observed: ProbeOutcome::NotObserved,
                observed_reason: VALID_TWIN_REFUSED.into(),
                ..o.clone()
            },
            format!(
                "check {id}: its {role}.json says {} ({}), but its stored bytes hold no accepting result for the valid twin {twin}, which leaves the control uncredited ({VALID_TWIN_REFUSED})",
                o.observed, o.observed_reason
            ),
        ));
    }
    // A control credited as refused whose request the stored bytes (stdout,
    // or the received bytes of its connections) show served (a result that
    // is not `isError`) is not what the bytes give: the subject accepted the
    // input the property forbids.
    if role == "negative"
        && o.held()
        && o.expected == ProbeOutcome::Reject
        && !RESULT_REFUSALS.contains(&id)
        && let Some(request) = transcript.pointer("/observation/requestId")
        && !request.is_null()
        && twin_accepted(transcript, request) == Some(true)
    {
        let bytes = if transcript.get("connections").is_some() {
            "received bytes"
        } else {
            "stdout"
        };
        return Some((
            Observation {
                observed: ProbeOutcome::Accept,
                observed_reason: LABEL_NOT_IN_RECORD.into(),
                ..o.clone()
            },
            format!(
                "check {id}: its {role}.json credits the refusal {}, but its stored {bytes} answer the control {request} with a result",
                o.expected_reason
            ),
        ));
    }
    if let Some(found) = answer_reread(id, role, o, transcript) {
        return Some(found);
    }
    if role == "positive"
        && transcript.get("replies").is_some()
        && let Some(found) = stdio_positive_reread(id, o, transcript)
    {
        return Some(found);
    }
    if role == "positive"
        && transcript.get("connections").is_some()
        && let Some(found) = http_positive_reread(id, o, transcript)
    {
        return Some(found);
    }
    if role != "positive"
        && transcript.get("connections").is_some()
        && let Some(found) = http_control_reread(id, role, o, transcript)
    {
        return Some(found);
    }
    // A syntax-defect mutant left with no answer to its id, while the
    // stored stdout holds a -32700: the syntax guard answered it (with a
    // null id, as JSON-RPC asks of a request whose id cannot be read).
    if role == "mutant"
        && o.expected_reason == SYNTAX_GUARD
        && o.observed_reason == NO_ANSWER
        && transcript.get("replies").is_some()
        && let Some(stdout) = super::stdio::stdout_bytes(transcript)
        && super::stdio::messages(&stdout).iter().any(|m| {
            m.get("method").is_none()
                && m.pointer("/error/code").and_then(Value::as_i64) == Some(-32700)
        })
    {
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its mutant.json says {} ({NO_ANSWER}), but the stored stdout holds a -32700 parse error: the syntax guard answered the defect",
                o.observed
            ),
        ));
    }
    if matches!(id, "required-result-type" | "no-session-id-assumption")
        && role != "positive"
        && transcript.get("replies").is_some()
        && let Some(found) = stdout_error_reread(id, role, o, transcript)
    {
        return Some(found);
    }
    if id == "json-schema-dialect-identity"
        && role == "negative"
        && transcript.get("replies").is_some()
        && let Some(found) = ill_typed_call_reread(o, transcript)
    {
        return Some(found);
    }
    if id == "unsupported-version-failure"
        && role == "negative"
        && transcript.get("replies").is_some()
        && let Some(found) = legacy_bogus_version_reread(o, transcript)
    {
        return Some(found);
    }
    if id == "safe-integer-constraints"
        && role == "negative"
        && transcript.get("replies").is_some()
        && let Some(found) = unsafe_integer_reread(o, transcript)
    {
        return Some(found);
    }
    if id == "oversized-line"
        && role != "positive"
        && transcript.get("replies").is_some()
        && let Some(found) = oversized_control_reread(role, o, transcript)
    {
        return Some(found);
    }
    if id == "supported-version-advertisement"
        && role != "positive"
        && transcript.get("replies").is_some()
        && let Some(found) = bogus_version_reread(role, o, transcript)
    {
        return Some(found);
    }
    // A Streamable HTTP control (or its mutant) of a check whose refusal is
    // a fixed set of statuses or codes: the answer is read again from the
    // connection that carried it.
    if let Some(found) = http_refusal_reread(id, role, o, transcript) {
        return Some(found);
    }
    if id == "keepalive"
        && let Some(found) = keepalive_control_reread(role, o, transcript)
    {
        return Some(found);
    }
    if id == "timeout"
        && let Some(found) = timeout_control_reread(role, o, transcript)
    {
        return Some(found);
    }
    if (id, role) == ("interleaved-unrelated-requests", "negative")
        && let Some(found) = stray_response_reread(o, transcript)
    {
        return Some(found);
    }
    if let Some(found) = media_type_reread(id, role, o, transcript) {
        return Some(found);
    }
    if let Some(found) = flush_reread(id, role, o, transcript) {
        return Some(found);
    }
    if role == "negative" && o.observed_reason == o.expected_reason {
        let not_credited = |reason: &str, why: String| {
            Some((
                Observation {
                    observed: ProbeOutcome::NotObserved,
                    observed_reason: reason.into(),
                    ..o.clone()
                },
                format!("check {id}: {why}"),
            ))
        };
        let observation = &transcript["observation"];
        if let Some(twin) = observation.pointer("/twin/id")
            && twin_accepted(transcript, twin) == Some(false)
        {
            return not_credited(
                VALID_TWIN_REFUSED,
                format!(
                    "its stored bytes hold no accepting result for the valid twin request {twin}, so the control's refusal cannot be bound to the property"
                ),
            );
        }
        if VERSION_REFUSALS.contains(&id)
            && let Some(request) = observation.get("requestId")
            && let Some(stdout) = super::stdio::stdout_bytes(transcript)
        {
            let messages = super::stdio::messages(&stdout);
            if answer_to(&messages, request)
                .and_then(|m| m.pointer("/error/code"))
                .and_then(Value::as_i64)
                == Some(-32601)
            {
                return not_credited(
                    METHOD_NOT_FOUND_NOT_CREDITED,
                    format!(
                        "its stored stdout answers the control {request} with -32601 (method not found), which is no refusal of a version"
                    ),
                );
            }
        }
    }
    // interruption: whether the subject's last stdout line is torn is read
    // from the stored bytes (the last stdout chunk, when it is stored).
    if id == "interruption"
        && transcript.pointer("/observation/signal") == Some(&json!("SIGINT"))
        && let Some(torn) = super::stdio::last_line_torn(transcript)
    {
        let torn_label = o.observed_reason == crate::diag::reasons::INTERRUPT_TORN_FRAME;
        if torn && !torn_label && o.observed_reason == o.expected_reason {
            return Some((
                Observation {
                    observed: ProbeOutcome::Terminate,
                    observed_reason: crate::diag::reasons::INTERRUPT_TORN_FRAME.into(),
                    ..o.clone()
                },
                format!(
                    "check {id}: its {role}.json says {}, but the stored stdout ends with a torn line",
                    o.observed_reason
                ),
            ));
        }
        if !torn && torn_label {
            return Some((
                not_in_record(o),
                format!(
                    "check {id}: its {role}.json says {}, but the stored stdout ends with a whole line",
                    o.observed_reason
                ),
            ));
        }
    }
    if let Some(found) = signal_reread(id, role, o, transcript) {
        return Some(found);
    }
    if id == "shell-free-argument-boundaries"
        && role == "positive"
        && let Some(read) = super::stdio::argv_reading(transcript)
        && read != o.observed_reason
    {
        return Some((
            Observation {
                observed: ProbeOutcome::Accept,
                observed_reason: read.into(),
                ..o.clone()
            },
            format!(
                "check {id}: its {role}.json says {}, but its stored executable, argv and launch arguments give {read}",
                o.observed_reason
            ),
        ));
    }
    // An exchange's counts are counted again from the stdout lines it was
    // gathered from; where the check's label is a function of them
    // (discovery-versus-legacy-initialization's control), so is the label.
    if let Some(g) = super::stdio::gathered(transcript) {
        let observation = &transcript["observation"];
        let recorded = |k: &str| observation.get(k).and_then(Value::as_u64);
        let counts = [
            ("parseErrors", g.parse_errors),
            ("nullIdErrors", g.null_id_errors),
            ("nonJsonStdoutLines", g.non_json_lines),
            ("batchResults", g.batch_results),
            ("otherResponses", g.other_responses),
        ];
        if let Some((k, n)) = counts
            .iter()
            .find(|(k, n)| recorded(k).is_some_and(|r| r != *n as u64))
        {
            return Some((
                not_in_record(o),
                format!(
                    "check {id}: its {role}.json counts {k} {}, but the stdout lines it was gathered from hold {n}",
                    recorded(k).unwrap_or_default()
                ),
            ));
        }
        if id == "discovery-versus-legacy-initialization"
            && role == "negative"
            && observation.get("alive") == Some(&json!(true))
        {
            let read = if g.parse_errors > 0 {
                SYNTAX_GUARD
            } else if g.other_responses > 0 {
                crate::diag::reasons::NOTIFICATION_ANSWERED
            } else {
                crate::diag::reasons::NOTIFICATION_NOT_ANSWERED
            };
            if read != o.observed_reason {
                return Some((
                    not_in_record(o),
                    format!(
                        "check {id}: its {role}.json says {}, but the stdout lines it was gathered from give {read}",
                        o.observed_reason
                    ),
                ));
            }
        }
    }
    if id == "shell-free-argument-boundaries"
        && role != "positive"
        && let Some(read) = super::stdio::launch_reading(transcript)
        && read != o.observed_reason
    {
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {}, but the launch attempt it stored (the program string and the launcher's result) gives {read}",
                o.observed_reason
            ),
        ));
    }
    if id == "partial-line"
        && role != "positive"
        && let Some(dispatched) = super::stdio::dispatched_before_lf(transcript)
    {
        let says_dispatched =
            o.observed_reason == crate::diag::reasons::UNTERMINATED_LINE_DISPATCHED;
        let says_waited = [
            crate::diag::reasons::PARTIAL_LINE_NOT_DISPATCHED,
            SYNTAX_GUARD,
            NO_ANSWER,
        ]
        .contains(&o.observed_reason.as_str());
        if (says_dispatched && !dispatched) || (says_waited && dispatched) {
            return Some((
                Observation {
                    observed: if dispatched {
                        ProbeOutcome::Accept
                    } else {
                        ProbeOutcome::NoEffect
                    },
                    observed_reason: LABEL_NOT_IN_RECORD.into(),
                    ..o.clone()
                },
                format!(
                    "check {id}: its {role}.json says {}, but the stdout prefix its runner decided on before the LF {}",
                    o.observed_reason,
                    if dispatched {
                        "answers the unterminated request (or holds a parse error)"
                    } else {
                        "holds no answer to the unterminated request"
                    }
                ),
            ));
        }
    }
    if id == "silent-process"
        && role == "negative"
        && [
            crate::diag::reasons::SILENT_UNTIL_ASKED,
            crate::diag::reasons::UNSOLICITED_OUTPUT,
            SYNTAX_GUARD,
        ]
        .contains(&o.observed_reason.as_str())
        && let Some(read) = super::stdio::unasked_reading(transcript)
        && read != o.observed_reason
    {
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {}, but the stdout prefix its runner decided on gives {read}",
                o.observed_reason
            ),
        ));
    }
    if id == "silent-process"
        && role == "negative"
        && let Some(spoke) = super::stdio::spoke_unasked(transcript)
    {
        let quiet = o.observed_reason == crate::diag::reasons::SILENT_UNTIL_ASKED;
        let unasked = o.observed_reason == crate::diag::reasons::UNSOLICITED_OUTPUT
            || o.observed_reason == SYNTAX_GUARD;
        if (quiet && spoke) || (unasked && !spoke) {
            return Some((
                Observation {
                    observed: if spoke {
                        ProbeOutcome::Accept
                    } else {
                        ProbeOutcome::NoEffect
                    },
                    observed_reason: LABEL_NOT_IN_RECORD.into(),
                    ..o.clone()
                },
                format!(
                    "check {id}: its {role}.json says {}, but its stored stdout {}",
                    o.observed_reason,
                    if spoke {
                        "holds bytes that arrived within the silence window"
                    } else {
                        "holds nothing that arrived before the runner ended the probe"
                    }
                ),
            ));
        }
    }
    if id == "executable-identity"
        && let Some(found) = identity_reread(role, o, transcript)
    {
        return Some(found);
    }
    if id == "stdout-protocol-purity" && role == "positive" && o.observed_reason != STDOUT_POLLUTED
    {
        let bad = super::stdio::non_protocol_lines(transcript)?;
        if bad > 0 && o.observed_reason == o.expected_reason {
            return Some((
                Observation {
                    observed_reason: STDOUT_POLLUTED.into(),
                    ..o.clone()
                },
                format!(
                    "check {id}: {bad} complete stdout line(s) of its stored transcript are not JSON-RPC"
                ),
            ));
        }
    }
    None
}

/// [`rederive`]'s other way round for a control: one said served with the
/// property's own acceptance (`held`, its positive's expected reason: ACCEPT
/// where a refusal was expected) whose stored bytes hold no accepting result
/// for its request was not served, whatever else it was. So is
/// `long-lived-response-stream`'s control said to have its invalid arguments
/// accepted (a result that is not the tool's `isError`). (Other acceptances
/// a control can be labelled with, a redirect or a media type, are not a
/// result and are not read so.)
fn served_reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
    held: Option<&str>,
) -> Option<(Observation, String)> {
    // The control labelled with the positive's own label, or (the one
    // served label that names a tool call's result) its invalid arguments
    // accepted.
    let served = held == Some(o.observed_reason.as_str())
        || o.observed_reason == crate::diag::reasons::HTTP_INVALID_ARGUMENTS_ACCEPTED;
    if role != "negative"
        || o.observed != ProbeOutcome::Accept
        || o.expected != ProbeOutcome::Reject
        || !served
    {
        return None;
    }
    let request = transcript.pointer("/observation/requestId")?;
    if request.is_null() || twin_accepted(transcript, request) != Some(false) {
        return None;
    }
    let bytes = if transcript.get("connections").is_some() {
        "received bytes"
    } else {
        "stdout"
    };
    Some((
        not_in_record(o),
        format!(
            "check {id}: its {role}.json says the control was served ({}), but its stored {bytes} hold no accepting result for the control {request}",
            o.observed_reason
        ),
    ))
}

/// [`judge_dir`]'s last reading of a label: an observation whose reason (or the outcome
/// with it) its check's runner never records for that role ([`super::vocabulary`]) was
/// not read from any bytes; it is judged not observed under the judge's own label.
fn vocabulary_reread(
    profile: &str,
    id: &str,
    role: &str,
    o: &Observation,
) -> Option<(Observation, String)> {
    if super::vocabulary::admits(profile, id, role, o.observed, &o.observed_reason)? {
        return None;
    }
    Some((
        not_in_record(o),
        super::vocabulary::refusal(profile, id, role, o.observed, &o.observed_reason),
    ))
}

/// Is `reason` a label naming the answer a control got: the syntax guard,
/// `MCP_RES_HTTP_STATUS_{n}`, `MCP_RES_JSONRPC_ERROR_{n}`, or a 2xx answer
/// without a frame (`MCP_RES_HTTP_NO_ANSWER_FRAME`)?
fn answer_code(reason: &str) -> bool {
    let numbered = |prefix: &str| {
        reason
            .strip_prefix(prefix)
            .is_some_and(|n| (1..=10).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()))
    };
    reason == SYNTAX_GUARD
        || reason == crate::diag::reasons::HTTP_NO_ANSWER_FRAME
        || numbered("MCP_RES_HTTP_STATUS_")
        || numbered("MCP_RES_JSONRPC_ERROR_")
}

/// `o` judged not observed under the judge's own label: what its stored
/// bytes contradict.
fn not_in_record(o: &Observation) -> Observation {
    Observation {
        observed: ProbeOutcome::NotObserved,
        observed_reason: LABEL_NOT_IN_RECORD.into(),
        ..o.clone()
    }
}

/// Labels that say the subject exited on the signal the runner sent (stdio:
/// `process-exit`, `backpressure`, `startup-timeout`, `interruption`; over
/// Streamable HTTP the cleanup checks, closed or left open: it ended).
const ENDED_ON_SIGNAL: [&str; 12] = [
    crate::diag::reasons::EXIT_ON_SIGTERM,
    crate::diag::reasons::EXIT_ON_UNRELATED_SIGNAL,
    crate::diag::reasons::EXIT_ON_SIGTERM_UNBLOCKED,
    crate::diag::reasons::BLOCKED_WRITER_TERMINATES,
    crate::diag::reasons::STARTUP_TIMEOUT_ENFORCED,
    crate::diag::reasons::INTERRUPT_HONOURED,
    crate::diag::reasons::INTERRUPT_WITH_INFLIGHT_CLEAN,
    crate::diag::reasons::INTERRUPT_TORN_FRAME,
    crate::diag::reasons::HTTP_LISTENER_CLOSED_ON_STOP,
    crate::diag::reasons::HTTP_LISTENER_LEFT_OPEN,
    crate::diag::reasons::HTTP_SOCKETS_CLOSED_ON_STOP,
    crate::diag::reasons::HTTP_SOCKET_LEFT_OPEN,
];

/// Labels that say it did not (`child-tree-cleanup` and the Streamable HTTP
/// cleanup checks too).
const NOT_ENDED_ON_SIGNAL: [&str; 5] = [
    crate::diag::reasons::TERMINATION_NEEDED_SIGKILL,
    crate::diag::reasons::NO_TERMINATION_REQUESTED,
    crate::diag::reasons::NO_INTERRUPT_REQUESTED,
    crate::diag::reasons::SUBJECT_DID_NOT_EXIT,
    crate::diag::reasons::HTTP_SIGNAL_IGNORED,
];

/// The Streamable HTTP checks whose control and mutant each stop a server
/// of their own (stored in the check's `server.json` as `processes`, one per
/// observation in role order): whether that server ended on the signal is
/// read from its process record, as [`signal_reread`] reads a stdio probe.
fn server_signal_reread(
    id: &str,
    role: &str,
    k: usize,
    o: &Observation,
    stored: &BTreeMap<String, Stored>,
) -> Option<(Observation, String)> {
    if !matches!(id, "listener-cleanup" | "socket-cleanup") || role == "positive" {
        return None;
    }
    let Some(Ok(server)) = stored.get(&server_path(id)) else {
        return None;
    };
    let processes = server.get("processes")?.as_array()?;
    if processes.len() != ROLES.len() {
        return None;
    }
    signal_reread(id, role, o, &processes[k]).map(|(judged, why)| {
        (
            judged,
            why.replace("its stored events", "its server's stored events"),
        )
    })
}

/// [`rederive`]'s reading of a signal the runner sent and waited on: a label
/// that says the subject ended on it (or did not) is held against the
/// stored events ([`super::stdio::signal_ended`]); `interruption`'s
/// "SIGINT ignored" (`MCP_RES_BEHAVIOUR_LEFT_OPEN`) is a "did not".
fn signal_reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    let reason = o.observed_reason.as_str();
    let says_ended = ENDED_ON_SIGNAL.contains(&reason);
    let says_not = NOT_ENDED_ON_SIGNAL.contains(&reason)
        || (id == "interruption" && reason == BEHAVIOUR_LEFT_OPEN);
    if !says_ended && !says_not {
        return None;
    }
    let (signal, ended) = super::stdio::signal_ended(transcript)?;
    if ended == says_ended {
        return None;
    }
    let (observed, record) = if ended {
        (ProbeOutcome::Terminate, "an exit after it")
    } else {
        (
            ProbeOutcome::NoEffect,
            "no exit before the runner stopped waiting",
        )
    };
    Some((
        Observation {
            observed,
            observed_reason: LABEL_NOT_IN_RECORD.into(),
            ..o.clone()
        },
        format!(
            "check {id}: its {role}.json says {reason}, but its stored events after `sent {signal}` hold {record}"
        ),
    ))
}

/// [`rederive`]'s reading of `executable-identity`:
///
/// - the positive is held (`MCP_RES_EXECUTABLE_IDENTIFIED`) only when the
///   running executable it stored (`observation.exe`) is the program it
///   stored (`observation.program`) or the interpreter its `#!` line names
///   (`observation.shebangInterpreter`); otherwise
///   `MCP_RES_EXECUTABLE_MISMATCH`;
/// - the control and its mutant compare the digest recorded before the run
///   with the digest of the bytes they read (`identity.recordedSha256`,
///   `identity.sha256`): different is refused
///   (`MCP_RES_EXECUTABLE_DIGEST_CHANGED`), equal has no effect
///   (`MCP_RES_EXECUTABLE_UNCHANGED`), a missing one was unreadable.
fn identity_reread(
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use crate::diag::reasons as r;
    let (observed, reason, what) = if role == "positive" {
        if ![r::EXECUTABLE_IDENTIFIED, r::EXECUTABLE_MISMATCH].contains(&o.observed_reason.as_str())
        {
            return None;
        }
        let at = &transcript["observation"];
        let path = |k: &str| at.get(k).and_then(Value::as_str);
        let exe = path("exe");
        let held = exe.is_some() && (exe == path("program") || exe == path("shebangInterpreter"));
        let reason = if held {
            r::EXECUTABLE_IDENTIFIED
        } else {
            r::EXECUTABLE_MISMATCH
        };
        (
            o.observed,
            reason,
            format!(
                "its stored running executable {} is {}the program {} or its interpreter",
                exe.unwrap_or("(none)"),
                if held { "" } else { "not " },
                path("program").unwrap_or("(none)")
            ),
        )
    } else {
        let identity = transcript.get("identity")?;
        let sha = |k: &str| identity.get(k).and_then(Value::as_str);
        match (sha("recordedSha256"), sha("sha256")) {
            (Some(a), Some(b)) if a != b => (
                ProbeOutcome::Reject,
                r::EXECUTABLE_DIGEST_CHANGED,
                "its stored digests differ".to_string(),
            ),
            (Some(_), Some(_)) => (
                ProbeOutcome::NoEffect,
                r::EXECUTABLE_UNCHANGED,
                "its stored digests are equal".to_string(),
            ),
            _ => (
                ProbeOutcome::NotObserved,
                r::EXECUTABLE_UNREADABLE,
                "it stores no digest of the bytes read".to_string(),
            ),
        }
    };
    if observed == o.observed && reason == o.observed_reason {
        return None;
    }
    Some((
        Observation {
            observed,
            observed_reason: reason.into(),
            ..o.clone()
        },
        format!(
            "check executable-identity: its {role}.json says {} {}, but {what}: {} {reason}",
            o.observed.as_str(),
            o.observed_reason,
            observed.as_str()
        ),
    ))
}

/// [`rederive`]'s reading of an HTTP control or mutant of a check in
/// [`super::http::REFUSALS`]:
///
/// - a negative control credited with its refusal: the stored bytes must
///   name the control's request (`transcript.observation.requestId`), show
///   which connection carried it, and show its answer there as the check's
///   refusal; otherwise the reason is what they show (a 500 is
///   `MCP_RES_HTTP_STATUS_500`, never the property's refusal).
/// - a mutant (found as the one request body that is the syntax defect of
///   a request): it met the control's reason exactly when the stored bytes
///   show the check's refusal and no parse error.
///
/// Nothing is read when the bytes are not all stored (an elided chunk).
fn http_refusal_reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use super::http::{self, Reading};
    let refusal = http::refusal_of(id)?;
    transcript.get("connections")?;
    // Every received byte must be stored for the bytes to speak. A sent
    // body too large to store (an oversized control's, stored as its head
    // and digest) leaves its request's connection to be found as the one
    // such connection; every other sent byte must be stored.
    http::received(transcript)?;
    let elided = http::elided_sent_connection(transcript);
    if elided.is_none() {
        http::sent_bodies(transcript)?;
    }
    let control_connection = |request: &Value| http::connection_of(transcript, request).or(elided);
    let modern = http::modern(transcript).unwrap_or(false);
    let read = |conn: u64, request: &Value| {
        let answer = http::exchanges_on(transcript, conn)?.into_iter().next();
        Some(http::read_answer(
            refusal,
            modern,
            answer.as_ref(),
            http::closed_by_subject(transcript, conn),
            request,
        ))
    };
    let judged = |reading: &Reading| match reading {
        Reading::SyntaxGuard => (ProbeOutcome::Reject, SYNTAX_GUARD.to_string()),
        Reading::Refused => (ProbeOutcome::Reject, refusal.reason.to_string()),
        Reading::Accepted => (ProbeOutcome::Accept, LABEL_NOT_IN_RECORD.to_string()),
        Reading::Other(code) if code == NO_ANSWER => (ProbeOutcome::NoEffect, code.clone()),
        Reading::Other(code) => (ProbeOutcome::Reject, code.clone()),
    };
    // The observation as its stored bytes read, and why.
    let as_read = |observed, observed_reason, why| {
        (
            Observation {
                observed,
                observed_reason,
                ..o.clone()
            },
            why,
        )
    };
    match role {
        // A control labelled with the answer it got (the syntax guard, an
        // HTTP status or a JSON-RPC error code) must have got it: the stored
        // bytes of its connection are read as the runner read them.
        "negative" if answer_code(&o.observed_reason) => {
            let request = transcript.pointer("/observation/requestId")?;
            let conn = control_connection(request)?;
            let (observed, reason) = judged(&read(conn, request)?);
            if reason == o.observed_reason {
                return None;
            }
            let why = format!(
                "check {id}: its {role}.json says the control was answered {}, but its stored received bytes answer it with {reason}",
                o.observed_reason
            );
            Some(as_read(observed, reason, why))
        }
        // Left open is a control not met with the check's refusal (served
        // where serving is allowed, or refused another way): its
        // connection's bytes must not show that refusal.
        "negative" if o.observed_reason == BEHAVIOUR_LEFT_OPEN => {
            let request = transcript.pointer("/observation/requestId")?;
            let conn = control_connection(request)?;
            let reading = read(conn, request)?;
            if reading != Reading::Refused {
                return None;
            }
            let (observed, reason) = judged(&reading);
            let why = format!(
                "check {id}: its {role}.json says {BEHAVIOUR_LEFT_OPEN}, but its stored received bytes answer the control with the check's refusal {reason}"
            );
            Some(as_read(observed, reason, why))
        }
        "negative" if o.observed_reason == o.expected_reason => {
            // An explicit null is a control sent with a null id
            // (request-response-binding); it too must have been sent on
            // exactly one connection.
            let request = transcript.pointer("/observation/requestId");
            let conn = request.and_then(control_connection);
            let reading = match (request, conn) {
                (Some(r), Some(c)) => read(c, r)?,
                _ => {
                    return Some((
                        not_in_record(o),
                        format!(
                            "check {id}: its {role}.json credits the refusal {}, but its stored bytes do not show which request was the control (no observation.requestId sent on exactly one connection)",
                            o.expected_reason
                        ),
                    ));
                }
            };
            if reading == Reading::Refused {
                return None;
            }
            let (observed, reason) = judged(&reading);
            let why = format!(
                "check {id}: its {role}.json credits the refusal {}, but its stored received bytes answer the control with {reason}, which is not that check's refusal",
                o.expected_reason
            );
            Some(as_read(observed, reason, why))
        }
        "mutant" => {
            let (conn, request) = http::defect_connection(transcript)?;
            let reading = read(conn, &request)?;
            let met_as_control = reading == Reading::Refused;
            let labelled_as_control = o.observed_reason == refusal.reason;
            if met_as_control == labelled_as_control {
                // Met otherwise than the control, and labelled with the
                // answer it got: that answer must be the one stored.
                let (observed, reason) = judged(&reading);
                if met_as_control || !answer_code(&o.observed_reason) || reason == o.observed_reason
                {
                    return None;
                }
                return Some(as_read(
                    observed,
                    reason.clone(),
                    format!(
                        "check {id}: its {role}.json says the defective request was answered {}, but its stored received bytes answer it with {reason}",
                        o.observed_reason
                    ),
                ));
            }
            let (observed, reason) = judged(&reading);
            Some((
                Observation {
                    observed,
                    reached: met_as_control,
                    observed_reason: reason.clone(),
                    ..o.clone()
                },
                format!(
                    "check {id}: its {role}.json says {}, but its stored received bytes answer the defective request with {reason}",
                    o.observed_reason
                ),
            ))
        }
        _ => None,
    }
}

/// timeout's control (a request whose head never ends, left stalled) and
/// its mutant (a request made a syntax defect), read from their
/// connections' stored bytes and events as the runner read them:
///
/// - the control: the subject ending the stalled connection, or a 408 on
///   it, is the refusal (`MCP_RES_HTTP_STALLED_REQUEST_TIMED_OUT`);
///   anything else is left open (no MUST asks a server to time out);
/// - the mutant: a 408, or the connection ended before any response, is
///   the refusal; a parse error the syntax guard; a result the request
///   served; else what the answer names.
///
/// The stalled connection is the one whose sent bytes never end a head.
/// Nothing is read for another label or when the bytes are not all stored.
fn timeout_control_reread(
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use super::http;
    use crate::diag::reasons as r;
    use ProbeOutcome::{Accept, NotObserved, Reject};
    let refused = r::HTTP_STALLED_REQUEST_TIMED_OUT;
    transcript.get("connections")?;
    http::received(transcript)?;
    let (observed, reason, what) = match role {
        "negative" => {
            if ![refused, BEHAVIOUR_LEFT_OPEN, SUBJECT_EXITED].contains(&o.observed_reason.as_str())
            {
                return None;
            }
            let unended = http::unended_connections(transcript)?;
            // No stalled connection made: the subject gone is a connection
            // that failed to open.
            let connect_failed = transcript["events"]
                .as_array()
                .is_some_and(|e| e.iter().any(|e| e["event"] == "connect-failed"));
            if unended.is_empty() && connect_failed {
                if o.observed_reason == SUBJECT_EXITED {
                    return None;
                }
                return Some((
                    not_in_record(o),
                    format!(
                        "check timeout: its {role}.json says {}, but its stored events show the stalled request's connection failed to open",
                        o.observed_reason
                    ),
                ));
            }
            let [conn] = unended[..] else {
                return None;
            };
            let first = http::exchanges_on(transcript, conn)?.into_iter().next();
            let ended = http::ended_by_subject(transcript, conn);
            if ended || first.as_ref().is_some_and(|e| e.status == 408) {
                (Reject, refused.to_string(), "the stalled request")
            } else {
                (
                    NotObserved,
                    BEHAVIOUR_LEFT_OPEN.to_string(),
                    "the stalled request",
                )
            }
        }
        "mutant" => {
            let label = o.observed_reason.as_str();
            let domain = [
                refused,
                r::HTTP_ANSWERED_WITHIN_BOUND,
                r::HTTP_CLOSED_WITHOUT_RESPONSE,
                NO_ANSWER,
            ];
            if label == SYNTAX_GUARD || !(domain.contains(&label) || answer_code(label)) {
                return None;
            }
            let (conn, request) = http::defect_connection(transcript)?;
            let first = http::exchanges_on(transcript, conn)?.into_iter().next();
            let ended = http::ended_by_subject(transcript, conn);
            let (observed, reason) = if first.is_none() && ended {
                (Reject, refused.to_string())
            } else {
                match answer_reading(transcript, &[408], refused, first.as_ref(), ended, &request) {
                    (Reject, reason) if reason == refused => (Reject, reason),
                    (Accept, _) => (Accept, r::HTTP_ANSWERED_WITHIN_BOUND.to_string()),
                    other => other,
                }
            };
            (observed, reason, "the defective request")
        }
        _ => return None,
    };
    if observed == o.observed && reason == o.observed_reason {
        return None;
    }
    Some((
        Observation {
            observed,
            reached: if role == "mutant" {
                reason == refused
            } else {
                o.reached
            },
            observed_reason: reason.clone(),
            ..o.clone()
        },
        format!(
            "check timeout: its {role}.json says {} ({}), but its stored connection bytes and events give {observed} ({reason}) for {what}",
            o.observed, o.observed_reason
        ),
    ))
}

/// listener-cleanup's control (SIGTERM) and mutant (SIGCONT): whether the
/// listener still accepted connections after the signal is read from the
/// connection its runner opened for that (the first `connected` or
/// `connect-failed` after its `listening-probe` event). A listener said
/// closed that accepted it, or said left open that refused it, is judged as
/// the kernel answered. Records without the probe event (made before it was
/// kept) are not read so; whether the server exited is read from its
/// process record by another rule.
fn listening_probe_reread(
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use crate::diag::reasons as r;
    let (closed, left_open) = (r::HTTP_LISTENER_CLOSED_ON_STOP, r::HTTP_LISTENER_LEFT_OPEN);
    if ![closed, left_open].contains(&o.observed_reason.as_str()) {
        return None;
    }
    let events = transcript.get("events")?.as_array()?;
    let probe = events
        .iter()
        .position(|e| e["event"] == "listening-probe")?;
    let accepted = events[probe..]
        .iter()
        .find_map(|e| match e["event"].as_str() {
            Some("connected") => Some(true),
            Some("connect-failed") => Some(false),
            _ => None,
        })?;
    let reason = if accepted { left_open } else { closed };
    if reason == o.observed_reason {
        return None;
    }
    let after = events[probe]["after"].as_str().unwrap_or("the signal");
    Some((
        Observation {
            observed_reason: reason.to_string(),
            ..o.clone()
        },
        format!(
            "check listener-cleanup: its {role}.json says {}, but the connection its runner opened after {after} {} ({reason})",
            o.observed_reason,
            if accepted {
                "was accepted"
            } else {
                "failed to open"
            }
        ),
    ))
}

/// listener-cleanup's positive, answered, from the addresses its record
/// says the subject listened on (`observation.boundAddresses`, read from the
/// subject's TCP table by the runner and stored): all loopback is the
/// property held; anything else (or nothing found) leaves it open (binding
/// beyond loopback is against a SHOULD). Read only between those two labels.
fn bound_addresses_reread(o: &Observation, transcript: &Value) -> Option<(Observation, String)> {
    use crate::diag::reasons as r;
    let (held, open) = (r::HTTP_LISTENER_LOOPBACK_ONLY, r::BEHAVIOUR_LEFT_OPEN);
    if ![held, open].contains(&o.observed_reason.as_str()) {
        return None;
    }
    let bound = transcript
        .get("observation")?
        .get("boundAddresses")?
        .as_array()?;
    let loopback = !bound.is_empty()
        && bound.iter().all(|a| {
            a.as_str()
                .and_then(|a| a.parse::<std::net::IpAddr>().ok())
                .is_some_and(|ip| ip.to_canonical().is_loopback())
        });
    let (outcome, reason) = if loopback {
        (ProbeOutcome::Accept, held)
    } else {
        (ProbeOutcome::NotObserved, open)
    };
    if reason == o.observed_reason && outcome == o.observed {
        return None;
    }
    Some((
        Observation {
            observed: outcome,
            observed_reason: reason.to_string(),
            ..o.clone()
        },
        format!(
            "check listener-cleanup: its positive.json says {} ({}), but the bound addresses its record names ({}) give {} ({reason})",
            o.observed.as_str(),
            o.observed_reason,
            serde_json::to_string(bound).unwrap_or_default(),
            outcome.as_str(),
        ),
    ))
}

/// interleaved-unrelated-requests' control (a request, then on the same
/// write a response to no request of the subject's), read from the stdout
/// lines its evidence was gathered from, as the runner read them once the
/// subject went on serving (its liveness request answered): a -32700 is
/// the syntax guard; a response with the stray response's id (the id of
/// the one response its stdin sent), or a null-id error other than -32700,
/// answered the stray response; else the request answered (a result or an
/// error) is the stray response ignored, and none is no answer. Nothing is
/// read for another label, or when the bytes are not all stored.
fn stray_response_reread(o: &Observation, transcript: &Value) -> Option<(Observation, String)> {
    use super::stdio::{gathered, gathered_objects, last_wait_for, messages, stream_bytes};
    use crate::diag::reasons as r;
    use ProbeOutcome::{Accept, NoEffect, NotObserved, Reject};
    let (ignored, answered) = (r::STRAY_RESPONSE_IGNORED, r::STRAY_RESPONSE_ANSWERED);
    if ![ignored, answered].contains(&o.observed_reason.as_str()) {
        return None;
    }
    let observation = transcript.get("observation")?;
    let live = observation.get("liveId")?;
    let got = |id: &Value| {
        last_wait_for(transcript, id).is_some_and(|w| w == "result" || w.starts_with("error "))
    };
    if !got(live) {
        return None;
    }
    let stdin = stream_bytes(transcript, "stdin")?;
    let strays: Vec<Value> = messages(&stdin)
        .into_iter()
        .filter(|m| m.get("method").is_none() && m.get("result").is_some())
        .filter_map(|m| m.get("id").cloned())
        .collect();
    let [stray] = &strays[..] else {
        return None;
    };
    let request = observation.get("requestId").filter(|r| !r.is_null())?;
    let lines = gathered_objects(transcript)?;
    let g = gathered(transcript)?;
    let stray_answered = lines.iter().any(|m| {
        m.get("method").is_none()
            && (m.get("id") == Some(stray)
                || (m.get("id") == Some(&Value::Null)
                    && m.pointer("/error/code").and_then(Value::as_i64) != Some(-32700)))
    });
    let (observed, reason) = if g.parse_errors > 0 {
        (Reject, SYNTAX_GUARD)
    } else if stray_answered {
        (Accept, answered)
    } else if got(request) {
        (NoEffect, ignored)
    } else {
        (NotObserved, NO_ANSWER)
    };
    if observed == o.observed && reason == o.observed_reason {
        return None;
    }
    Some((
        Observation {
            observed,
            observed_reason: reason.to_string(),
            ..o.clone()
        },
        format!(
            "check interleaved-unrelated-requests: its negative.json says {} ({}), but the stdout lines its evidence was gathered from give {observed} ({reason}) for the stray response {stray}",
            o.observed, o.observed_reason
        ),
    ))
}

/// The runner's generic reading of an HTTP answer (`first`, the first
/// final response on the request's connection; `ended`: the subject ended
/// that connection) to `request`, where `statuses` are the refusal: a parse
/// error is the syntax guard; the refusal, and a result for the request,
/// are `refused`'s label (for the caller to tell apart where they differ);
/// else what the answer names itself (an error code, a status, a 2xx
/// without a frame, a close without a response, nothing).
fn answer_reading(
    transcript: &Value,
    statuses: &'static [u16],
    refused: &'static str,
    first: Option<&super::http::Exchange>,
    ended: bool,
    request: &Value,
) -> (ProbeOutcome, String) {
    use super::http::{self, Reading};
    use ProbeOutcome::{Accept, NoEffect, Reject};
    let refusal = http::Refusal {
        check: "",
        reason: refused,
        statuses,
        statuses_modern: None,
        codes: &[],
        tool_error: false,
    };
    let modern = http::modern(transcript).unwrap_or(false);
    match http::read_answer(&refusal, modern, first, ended, request) {
        Reading::SyntaxGuard => (Reject, SYNTAX_GUARD.to_string()),
        Reading::Refused => (Reject, refused.to_string()),
        Reading::Accepted => (Accept, refused.to_string()),
        Reading::Other(code)
            if code == NO_ANSWER || code == crate::diag::reasons::HTTP_NO_ANSWER_FRAME =>
        {
            (NoEffect, code)
        }
        Reading::Other(code) => (Reject, code),
    }
}

/// keepalive's control (a request with `Connection: close`) and its mutant
/// (the same request made a syntax defect), read from the first response on
/// the connection that carried each, in the runner's order:
///
/// - the control answered (a result or an error with its id) holds when the
///   subject then ended the connection (`MCP_RES_HTTP_CLOSE_HONOURED`), and
///   is `MCP_RES_HTTP_CLOSE_IGNORED` when it did not;
/// - the mutant answered with a result met the control's reason;
/// - otherwise, either is what the answer names: the syntax guard, a
///   JSON-RPC error code, a status, a 2xx without a frame, a close without
///   a response, nothing.
///
/// Nothing is read when the bytes are not all stored, or for another label.
fn keepalive_control_reread(
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use super::http;
    use crate::diag::reasons as r;
    use ProbeOutcome::Accept;
    let honoured = r::HTTP_CLOSE_HONOURED;
    let domain = [
        honoured,
        r::HTTP_CLOSE_IGNORED,
        r::HTTP_CLOSED_WITHOUT_RESPONSE,
        NO_ANSWER,
    ];
    // The syntax guard is left to the rule that reads every connection for
    // a -32700.
    if o.observed_reason == SYNTAX_GUARD
        || !(domain.contains(&o.observed_reason.as_str()) || answer_code(&o.observed_reason))
    {
        return None;
    }
    transcript.get("connections")?;
    http::received(transcript)?;
    let (conn, request) = match role {
        // The one connection whose request said `Connection: close`, with
        // that request's id.
        "negative" => {
            let [conn] = http::closing_connections(transcript)?[..] else {
                return None;
            };
            let [request] = &http::sent_on(transcript, conn)[..] else {
                return None;
            };
            (conn, request.get("id")?.clone())
        }
        "mutant" => http::defect_connection(transcript)?,
        _ => return None,
    };
    let first = http::exchanges_on(transcript, conn)?.into_iter().next();
    let ended = http::ended_by_subject(transcript, conn);
    let answers_request = first.as_ref().is_some_and(|e| {
        e.messages().iter().any(|m| {
            m.get("id") == Some(&request) && (m.get("result").is_some() || m.get("error").is_some())
        })
    });
    let (observed, reason) = if role == "negative" && answers_request {
        if ended {
            (Accept, honoured.to_string())
        } else {
            (Accept, r::HTTP_CLOSE_IGNORED.to_string())
        }
    } else {
        // No status or code is keepalive's refusal: the runner's reading of
        // an answer that is not the one it looked for (a result, as the
        // refusal would, meets the control's reason).
        answer_reading(transcript, &[], honoured, first.as_ref(), ended, &request)
    };
    if observed == o.observed && reason == o.observed_reason {
        return None;
    }
    let what = match role {
        "negative" => "the request with Connection: close",
        _ => "the defective request",
    };
    Some((
        Observation {
            observed,
            reached: if role == "mutant" {
                reason == honoured
            } else {
                o.reached
            },
            observed_reason: reason.clone(),
            ..o.clone()
        },
        format!(
            "check keepalive: its {role}.json says {} ({}), but its stored received bytes give {} ({reason}) for {what}",
            o.observed, o.observed_reason, observed
        ),
    ))
}

/// no-process-as-conversation's control (a fresh process asked for
/// `tools/list` with no conversation opened) and its mutant (the same line
/// made a syntax defect), read from the last wait kept for the request (the
/// one it records, or the only wait kept): a result is a conversation
/// assumed at 2026-07-28 and left open at 2025-11-25 (which states no MUST
/// for a server that answers a request before `initialize`); -32700 is the
/// syntax guard; another error is the refusal. Silence and a close are read
/// by the other rules; another label is left to them too.
fn conversation_control_reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
    revision: &str,
) -> Option<(Observation, String)> {
    use crate::diag::reasons as r;
    // no-connection-as-conversation's control and mutant before 2026-07-28
    // are a listing on a fresh process with no opening, read by a classifier
    // that never names a version: the labels of the 2026-07-28 control (a
    // version refused with the wrong error, an earlier version carried over,
    // -32601 not credited) are not what such a record can give.
    if id == "no-connection-as-conversation"
        && role != "positive"
        && revision == crate::model::mcp::PROTOCOL_REVISION
        && [
            r::VERSION_REFUSED_WRONG_ERROR,
            r::EARLIER_VERSION_CARRIED_OVER,
            METHOD_NOT_FOUND_NOT_CREDITED,
        ]
        .contains(&o.observed_reason.as_str())
    {
        return Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {}, a label of the 2026-07-28 control, but the evaluation is at {revision}, whose control names no version",
                o.observed_reason
            ),
        ));
    }
    if id != "no-process-as-conversation" || !matches!(role, "negative" | "mutant") {
        return None;
    }
    let domain = [
        r::RESTART_IS_NEW_CONVERSATION,
        r::CONVERSATION_ASSUMED,
        BEHAVIOUR_LEFT_OPEN,
        SYNTAX_GUARD,
    ];
    if !domain.contains(&o.observed_reason.as_str()) {
        return None;
    }
    let observation = transcript.get("observation")?;
    let waits = transcript.get("replies")?.as_array()?;
    let request = observation
        .get("requestId")
        .filter(|r| !r.is_null())
        .or_else(|| match waits.as_slice() {
            [only] if observation.get("liveId").is_none() => only.get("id"),
            _ => None,
        })?;
    let wait = super::stdio::last_wait_for(transcript, request)?;
    let legacy = revision == crate::model::mcp::PROTOCOL_REVISION;
    let (observed, reason) = match wait.as_str() {
        "result" if legacy => (ProbeOutcome::NotObserved, BEHAVIOUR_LEFT_OPEN),
        "result" => (ProbeOutcome::Accept, r::CONVERSATION_ASSUMED),
        "error -32700" => (ProbeOutcome::Reject, SYNTAX_GUARD),
        w if w.starts_with("error ") => (ProbeOutcome::Reject, r::RESTART_IS_NEW_CONVERSATION),
        _ => return None,
    };
    if observed == o.observed && reason == o.observed_reason {
        return None;
    }
    Some((
        Observation {
            observed,
            observed_reason: reason.to_string(),
            reached: if role == "mutant" {
                reason == r::RESTART_IS_NEW_CONVERSATION
            } else {
                o.reached
            },
            ..o.clone()
        },
        format!(
            "check {id}: its {role}.json says {} ({}), but the last wait its runner kept for its request {request} read {wait}, which at {revision} is {observed} ({reason})",
            o.observed, o.observed_reason
        ),
    ))
}

/// The media-type positives, read from the answer to their request
/// (`transcript.observation.requestId`, on the connection that sent it):
///
/// - `content-type`: held when that answer is declared `application/json`
///   or `text/event-stream`, else `MCP_RES_HTTP_CONTENT_TYPE_MISSING`;
/// - `json-versus-sse-response`: held when it is declared so and every
///   frame of its body is JSON, else `MCP_RES_HTTP_MEDIA_TYPE_MISMATCH`.
///
/// Nothing is read without that id, when the bytes are not all stored, or
/// when the request is not answered at all (the label then names how it was
/// not), or when the label is another check-specific reading.
/// buffering-detection's positive, read from the arrival times of its
/// stored chunks: on the connection that sent the `tools/call` with a
/// progress token, the first chunk after which a progress notification is
/// complete and the first after which the call's answer is, at least
/// [`super::http::FLUSH_GAP_MS`] apart (the events were flushed as they
/// came), else `MCP_RES_HTTP_EVENTS_BUFFERED`. Not read when the bytes are
/// not all stored, or the label is neither of the two.
fn flush_reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use crate::diag::reasons;
    if (id, role) != ("buffering-detection", "positive") {
        return None;
    }
    let (held, wrong) = (
        reasons::HTTP_EVENTS_FLUSHED_INCREMENTALLY,
        reasons::HTTP_EVENTS_BUFFERED,
    );
    if o.observed_reason != held && o.observed_reason != wrong {
        return None;
    }
    // The call: the one request sent with a progress token.
    let sent = super::http::sent_bodies(transcript)?;
    let mut calls = sent.iter().flat_map(|(conn, bodies)| {
        bodies.iter().filter_map(move |b| {
            let m: Value = serde_json::from_slice(b).ok()?;
            (m["method"] == "tools/call" && m.pointer("/params/_meta/progressToken").is_some())
                .then(|| (*conn, m["id"].clone()))
        })
    });
    let (conn, request) = calls.next()?;
    if calls.next().is_some() {
        return None;
    }
    let mut bytes = Vec::new();
    let (mut first, mut last) = (None, None);
    for e in transcript["events"].as_array()? {
        if e["stream"] != "received" || e["connection"].as_u64() != Some(conn) {
            continue;
        }
        bytes.extend(super::http::chunk_bytes(e)?);
        let at = e["atMs"].as_u64()?;
        let messages: Vec<Value> = super::http::exchanges(&bytes)
            .first()
            .map(super::http::Exchange::messages)
            .unwrap_or_default();
        if first.is_none()
            && messages
                .iter()
                .any(|m| m["method"] == "notifications/progress")
        {
            first = Some(at);
        }
        if last.is_none()
            && messages.iter().any(|m| {
                m.get("id") == Some(&request)
                    && (m.get("result").is_some() || m.get("error").is_some())
            })
        {
            last = Some(at);
        }
    }
    let gap = match (first, last) {
        (Some(a), Some(z)) => z.saturating_sub(a),
        _ => 0,
    };
    // Without an answer at all the runner's reading (no answer) stands.
    last?;
    let judged = if first.is_some() && gap >= super::http::FLUSH_GAP_MS {
        held
    } else {
        wrong
    };
    if judged == o.observed_reason {
        return None;
    }
    Some((
        Observation {
            observed_reason: judged.into(),
            ..o.clone()
        },
        format!(
            "check {id}: its {role}.json says {}, but its stored chunks show the first progress event at {first:?} ms and the answer at {last:?} ms ({gap} ms apart; flushed as they come needs {} ms)",
            o.observed_reason,
            super::http::FLUSH_GAP_MS
        ),
    ))
}

fn media_type_reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use crate::diag::reasons;
    let (held, wrong, frames_too) = match (id, role) {
        ("content-type", "positive") => (
            reasons::HTTP_CONTENT_TYPE_DECLARED,
            reasons::HTTP_CONTENT_TYPE_MISSING,
            false,
        ),
        ("json-versus-sse-response", "positive") => (
            reasons::HTTP_MEDIA_TYPE_MATCHES_BODY,
            reasons::HTTP_MEDIA_TYPE_MISMATCH,
            true,
        ),
        _ => return None,
    };
    if o.observed_reason != held && o.observed_reason != wrong {
        return None;
    }
    let request = transcript.pointer("/observation/requestId")?;
    let conn = super::http::connection_of(transcript, request)?;
    let answer = super::http::exchanges_on(transcript, conn)?
        .into_iter()
        .find(|a| {
            a.messages().iter().any(|m| {
                m.get("id") == Some(request)
                    && (m.get("result").is_some() || m.get("error").is_some())
            })
        })?;
    let media = answer.header("content-type").map(|c| {
        c.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    });
    let declared = matches!(
        media.as_deref(),
        Some("application/json" | "text/event-stream")
    );
    let bad = if frames_too { answer.bad_frames() } else { 0 };
    let judged = if declared && bad == 0 { held } else { wrong };
    if judged == o.observed_reason {
        return None;
    }
    Some((
        Observation {
            observed_reason: judged.into(),
            ..o.clone()
        },
        format!(
            "check {id}: its {role}.json says {}, but its stored received bytes answer the request under the media type {}{}",
            o.observed_reason,
            media.map_or_else(|| "(none)".to_string(), |m| format!("`{m}`")),
            if bad > 0 {
                format!(" with {bad} frame(s) that are not JSON")
            } else {
                String::new()
            }
        ),
    ))
}

/// The stdio positives whose reading is a function of the waits their runner
/// kept (and of the stored stdout where it only grows): the label the record
/// gives where it gives another than the one recorded, and why.
///
/// - startup-timeout: the opening's wait (a result holds; nothing is the
///   start-up timeout; an error the opening refused, -32601 to
///   `server/discover` the revision not spoken; a close the subject exited);
/// - concurrent-requests, no-process-as-conversation: every request's wait
///   read a result, or one was lost or refused;
/// - oversized-line: the 16 MiB request's wait (a result holds, an error is
///   the large line refused, nothing is no answer, a close an exit);
/// - backpressure: every request's wait read an answer (a result or an
///   error) and no id is answered twice on the whole stored stdout is the
///   property held, and nothing else is (the runner keeps the whole stdout);
/// - partial-line: answered twice needs two lines answering the request;
///   released-message-framing: a violated framing needs a stdout line that
///   is not one JSON object, or stdout ending inside a line;
///   malformed-output: malformed output needs stdout that is not UTF-8 or a
///   line that is not JSON-RPC.
fn stdio_positive_reread(
    id: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use super::stdio::{lines_with_id, opening_wait, request_waits, stdout_bytes};
    use crate::diag::reasons as r;
    use ProbeOutcome::{Accept, NotObserved, Reject, Terminate};
    let held = o.expected_reason.as_str();
    let gives = |reading: (ProbeOutcome, &str), why: String| {
        reread_as(o, reading, || {
            format!(
                "check {id}: its positive.json says {} ({}), but {why} give {}",
                o.observed, o.observed_reason, reading.1
            )
        })
    };
    let refuse = |why: String| {
        Some((
            not_in_record(o),
            format!(
                "check {id}: its positive.json says {}, but {why}",
                o.observed_reason
            ),
        ))
    };
    let answered = |r: &str| r == "result" || r.starts_with("error ");
    let read_as = |reading: &str, refused: &'static str| match reading {
        "result" => (Accept, held),
        "no answer" => (NotObserved, NO_ANSWER),
        "stdout closed" => (Terminate, SUBJECT_EXITED),
        _ => (Reject, refused),
    };
    match id {
        "startup-timeout" => {
            let open = opening_wait(transcript)?;
            let stdin = super::stdio::stream_bytes(transcript, "stdin")?;
            let modern = super::stdio::messages(&stdin)
                .first()
                .is_some_and(|m| m["method"] == "server/discover");
            let reading = match open.as_str() {
                "no answer" => (Terminate, r::STARTUP_TIMEOUT),
                "error -32601" if modern => (NotObserved, REVISION_NOT_SPOKEN),
                other => read_as(other, OPEN_REFUSED),
            };
            gives(
                reading,
                format!("the opening's wait its runner kept read {open}, which"),
            )
        }
        "concurrent-requests" | "no-process-as-conversation" => {
            let waits = request_waits(transcript)?;
            let want = if id == "concurrent-requests" { 5 } else { 2 };
            if waits.len() != want {
                return None;
            }
            let all = waits.iter().all(|(_, w)| w == "result");
            let lost = if id == "concurrent-requests" {
                r::CONCURRENT_REQUEST_LOST
            } else {
                r::SECOND_CLIENT_REFUSED
            };
            let readings: Vec<&str> = waits.iter().map(|(_, w)| w.as_str()).collect();
            gives(
                held_or(all, held, lost),
                format!(
                    "the waits its runner kept for its {want} requests ({})",
                    readings.join(", ")
                ),
            )
        }
        "oversized-line" => {
            let waits = request_waits(transcript)?;
            let [(_, wait)] = waits.as_slice() else {
                return None;
            };
            gives(
                read_as(wait, r::LARGE_LINE_REFUSED),
                format!("the wait its runner kept for the 16 MiB request read {wait}, which"),
            )
        }
        "process-exit"
            if [r::EXIT_ON_STDIN_CLOSE, r::RUNS_AFTER_STDIN_CLOSE]
                .contains(&o.observed_reason.as_str()) =>
        {
            let exited = super::stdio::exited_after_stdin_close(transcript)?;
            gives(
                if exited {
                    (Terminate, r::EXIT_ON_STDIN_CLOSE)
                } else {
                    (ProbeOutcome::NoEffect, r::RUNS_AFTER_STDIN_CLOSE)
                },
                format!(
                    "its stored events, {} after stdin was closed,",
                    if exited {
                        "an exit"
                    } else {
                        "no exit before the runner stopped waiting"
                    }
                ),
            )
        }
        "discovery-versus-legacy-initialization" => {
            let open = opening_wait(transcript)?;
            let reading = match open.as_str() {
                // The revision asked for is the opening's own: a legacy
                // answer must name it, a modern one list it.
                "result" => {
                    let request = first_sent(transcript)?;
                    let answer = result_message(transcript, request.get("id"))?;
                    let ok = if request["method"] == "server/discover" {
                        let rev = request
                            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")?;
                        answer
                            .pointer("/result/supportedVersions")
                            .and_then(Value::as_array)
                            .is_some_and(|v| v.contains(rev))
                    } else {
                        let rev = request.pointer("/params/protocolVersion")?;
                        answer.pointer("/result/protocolVersion") == Some(rev)
                    };
                    held_or(ok, held, r::ERA_OPENING_WRONG_VERSION)
                }
                other => read_as(other, r::ERA_OPENING_REFUSED),
            };
            gives(
                reading,
                format!(
                    "the opening's wait its runner kept read {open} and its stored answer, which"
                ),
            )
        }
        // explicit-protocol-revision: before 2026-07-28 the opening's
        // answer names the revision asked for; at it, the one request after
        // the opening (any result holds). server-discover: the discovery
        // answer lists versions and capabilities and names the server.
        "explicit-protocol-revision" | "server-discover" => {
            let request = first_sent(transcript)?;
            let modern = request["method"] == "server/discover";
            if modern && id == "explicit-protocol-revision" {
                let waits = request_waits(transcript)?;
                let [(_, wait)] = waits.as_slice() else {
                    return None;
                };
                return gives(
                    read_as(wait, r::REQUEST_REFUSED),
                    format!(
                        "the wait its runner kept for the request after the opening read {wait}, which"
                    ),
                );
            }
            if !modern && id == "server-discover" {
                return None;
            }
            let open = opening_wait(transcript)?;
            let reading = if open == "result" {
                let m = result_message(transcript, request.get("id"))?;
                let ok = if modern {
                    let res = m.get("result");
                    res.and_then(|x| x.get("supportedVersions"))
                        .is_some_and(Value::is_array)
                        && res
                            .and_then(|x| x.get("capabilities"))
                            .is_some_and(Value::is_object)
                        && res
                            .and_then(|x| x.pointer("/_meta"))
                            .and_then(|meta| meta.get(crate::model::mcp::META_SERVER_INFO))
                            .and_then(|x| x.get("name"))
                            .is_some_and(Value::is_string)
                } else {
                    m.pointer("/result/protocolVersion")
                        == request.pointer("/params/protocolVersion")
                };
                let wrong = if modern {
                    r::DISCOVER_INCOMPLETE
                } else {
                    r::REVISION_NOT_HONOURED
                };
                held_or(ok, held, wrong)
            } else {
                read_as(&open, r::REQUEST_REFUSED)
            };
            gives(
                reading,
                format!(
                    "the opening's wait its runner kept read {open} and its stored answer, which"
                ),
            )
        }
        "required-result-type" => {
            let waits = request_waits(transcript)?;
            let [(request, wait)] = waits.as_slice() else {
                return None;
            };
            let reading = if wait == "result" {
                let m = result_message(transcript, Some(request))?;
                held_or(
                    m.pointer("/result/resultType")
                        .is_some_and(Value::is_string),
                    held,
                    r::RESULT_TYPE_MISSING,
                )
            } else {
                read_as(wait, r::REQUEST_REFUSED)
            };
            gives(
                reading,
                format!(
                    "the wait its runner kept for tools/list read {wait} and its stored answer, which"
                ),
            )
        }
        "result-identity-metadata" => {
            let waits = request_waits(transcript)?;
            if waits.len() != 2 {
                return None;
            }
            let same = waits.iter().all(|(_, w)| w == "result");
            gives(
                held_or(same, held, r::RESULT_ID_RETYPED),
                format!(
                    "the waits its runner kept for the integer id and the same digits as a string ({}, {})",
                    waits[0].1, waits[1].1
                ),
            )
        }
        "interleaved-unrelated-requests" => {
            let waits = request_waits(transcript)?;
            let [(_, first), (_, second)] = waits.as_slice() else {
                return None;
            };
            let ok = answered(first) && answered(second);
            let reading = match first.as_str() {
                "result" if ok => (Accept, held),
                "result" => (Accept, r::INTERLEAVED_LOST),
                other => read_as(other, r::REQUEST_REFUSED),
            };
            gives(
                reading,
                format!("the waits its runner kept for the two requests ({first}, {second})"),
            )
        }
        "modern-legacy-auto-behavior" => {
            let waits = super::stdio::wait_readings(transcript)?;
            let (discover, fallback) = match waits.as_slice() {
                [d] => (*d, None),
                [d, f] => (*d, Some(*f)),
                _ => return None,
            };
            let error = |w: &str| w.starts_with("error ");
            let reading = match (discover, fallback) {
                ("result", None) => (Accept, held),
                ("result" | "error -32601", Some("result")) => (Accept, held),
                ("result", Some(f)) if error(f) && f != "error -32700" => (Accept, held),
                (d, None) if error(d) => (Reject, r::ERA_PROBE_REFUSED),
                (_, Some(f)) if error(f) => (Reject, r::LEGACY_FALLBACK_REFUSED),
                ("no answer", _) | (_, Some("no answer")) => (NotObserved, NO_ANSWER),
                _ => (Terminate, SUBJECT_EXITED),
            };
            gives(
                reading,
                format!(
                    "the waits its runner kept for server/discover ({discover}) and the fallback ({})",
                    fallback.unwrap_or("none sent")
                ),
            )
        }
        "capability-declaration" => {
            // The opening answered: its result carries a capabilities
            // object, or the capabilities are missing.
            if opening_wait(transcript)? != "result" {
                return None;
            }
            let answer = result_message(transcript, first_sent(transcript)?.get("id"))?;
            let ok = answer
                .pointer("/result/capabilities")
                .is_some_and(Value::is_object);
            gives(
                held_or(ok, held, r::CAPABILITIES_MISSING),
                "the capabilities of the stored answer to its opening".to_string(),
            )
        }
        "extension-declaration" => {
            if opening_wait(transcript)? != "result" {
                return None;
            }
            let answer = result_message(transcript, first_sent(transcript)?.get("id"))?;
            let caps = answer
                .pointer("/result/capabilities")
                .and_then(Value::as_object);
            let well = |key: &str| {
                caps.and_then(|c| c.get(key)).is_none_or(|v| {
                    v.as_object()
                        .is_some_and(|o| o.values().all(Value::is_object))
                })
            };
            let ok = caps.is_some() && well("experimental") && well("extensions");
            gives(
                held_or(ok, held, r::EXTENSIONS_MALFORMED),
                "the capabilities of the stored answer to its opening".to_string(),
            )
        }
        // The released revisions: on 2026-07-28 `server/discover` must list
        // the one asked for, before it `initialize` must name a released one
        // (unsupported-version-failure: the one asked for).
        "supported-version-advertisement" | "unsupported-version-failure" => {
            let opening = first_sent(transcript)?;
            let modern = opening["method"] == "server/discover";
            let wrong = if id == "supported-version-advertisement" {
                r::VERSIONS_NOT_ADVERTISED
            } else {
                r::SUPPORTED_VERSION_NOT_SERVED
            };
            // At 2026-07-28 unsupported-version-failure's positive is a
            // listing after opening, held on any result.
            let (wait, ok) = if modern && id == "unsupported-version-failure" {
                let waits = request_waits(transcript)?;
                let [(_, wait)] = waits.as_slice() else {
                    return None;
                };
                (wait.clone(), true)
            } else {
                let wait = opening_wait(transcript)?;
                let answer = result_message(transcript, opening.get("id"));
                let ok = answer.is_some_and(|m| {
                    if modern {
                        let rev = opening
                            .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion");
                        m.pointer("/result/supportedVersions")
                            .and_then(Value::as_array)
                            .is_some_and(|v| rev.is_some_and(|rev| v.contains(rev)))
                    } else if id == "supported-version-advertisement" {
                        m.pointer("/result/protocolVersion")
                            .and_then(Value::as_str)
                            .is_some_and(|v| super::RELEASED_REVISIONS.contains(&v))
                    } else {
                        m.pointer("/result/protocolVersion")
                            == opening.pointer("/params/protocolVersion")
                    }
                });
                (wait, ok)
            };
            let reading = match wait.as_str() {
                "result" => held_or(ok, held, wrong),
                other => read_as(other, r::REQUEST_REFUSED),
            };
            gives(
                reading,
                format!("its kept wait ({wait}) and the stored answer"),
            )
        }
        "stdio-backward-compatibility" => {
            let open = opening_wait(transcript)?;
            let request = first_sent(transcript)?;
            let reading = match open.as_str() {
                "result" => {
                    let answer = result_message(transcript, request.get("id"))?;
                    let same =
                        answer.pointer("/result/protocolVersion") == Some(&json!("2025-11-25"));
                    held_or(same, held, r::STDIO_LEGACY_VERSION_CHANGED)
                }
                other => read_as(other, r::REQUEST_REFUSED),
            };
            gives(
                reading,
                format!(
                    "the wait its runner kept for initialize 2025-11-25 ({open}) and the stored answer"
                ),
            )
        }
        "request-identity-metadata" => {
            let waits = request_waits(transcript)?;
            let [(_, text), (_, int)] = waits.as_slice() else {
                return None;
            };
            let ok = text == "result" && int == "result";
            let reading = match int.as_str() {
                "result" if ok => (Accept, held),
                "result" => (Accept, r::REQUEST_ID_NOT_ECHOED),
                other => read_as(other, r::REQUEST_REFUSED),
            };
            gives(
                reading,
                format!("the waits its runner kept for a string and an integer id ({text}, {int})"),
            )
        }
        "json-schema-dialect-identity" => {
            let waits = request_waits(transcript)?;
            let [(request, wait)] = waits.as_slice() else {
                return None;
            };
            let reading = match wait.as_str() {
                "result" => {
                    let answer = result_message(transcript, Some(request))?;
                    let tools = answer
                        .pointer("/result/tools")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    let ok = super::schemas_identified(&tools);
                    held_or(ok, held, r::SCHEMA_DIALECT_UNKNOWN)
                }
                other => read_as(other, r::REQUEST_REFUSED),
            };
            gives(
                reading,
                format!("the wait its runner kept for tools/list ({wait}) and the tools it stored"),
            )
        }
        "backpressure"
            if [held, r::BACKPRESSURE_LOST_RESPONSES].contains(&o.observed_reason.as_str()) =>
        {
            // Every request answered (a result or an error: either is its
            // response) exactly once on the whole stored stdout is the
            // property held; anything else is not.
            let waits = request_waits(transcript)?;
            let count = transcript.pointer("/observation/requests")?.as_u64()?;
            let stdout = stdout_bytes(transcript)?;
            let mut counts: BTreeMap<String, usize> = BTreeMap::new();
            for m in super::stdio::messages(&stdout) {
                if let Some(i) = m.get("id") {
                    *counts.entry(i.to_string()).or_default() += 1;
                }
            }
            let once = waits.len() as u64 == count
                && waits
                    .iter()
                    .all(|(i, w)| answered(w) && counts.get(&i.to_string()) == Some(&1))
                && counts.values().all(|&n| n == 1);
            match (once, o.observed_reason == held) {
                (true, false) => refuse(format!(
                    "the wait its runner kept for each of its {count} requests read an answer and no id is answered twice on the stored stdout"
                )),
                (false, true) => refuse(format!(
                    "the stored stdout does not answer each of its {count} requests exactly once (the waits its runner kept and the lines it stored)"
                )),
                _ => None,
            }
        }
        "partial-line" if o.observed_reason == r::PARTIAL_LINE_ANSWERED_TWICE => {
            let waits = request_waits(transcript)?;
            let [(request, _)] = waits.as_slice() else {
                return None;
            };
            let n = lines_with_id(transcript, request)?;
            (n < 2).then(|| {
                refuse(format!(
                    "the stored stdout answers the request {request} on {n} line(s)"
                ))
            })?
        }
        "released-message-framing" if o.observed_reason == r::FRAMING_VIOLATED => {
            let stdout = stdout_bytes(transcript)?;
            let objects = super::stdio::messages(&stdout).len();
            let lines = stdout.iter().filter(|&&b| b == b'\n').count();
            let torn = stdout.last().is_some_and(|&b| b != b'\n');
            (objects == lines && !torn).then(|| {
                refuse(format!(
                    "each of the {lines} stored stdout line(s) is one JSON object and stdout ends with a line feed"
                ))
            })?
        }
        "malformed-output" if o.observed_reason == r::OUTPUT_MALFORMED => {
            let stdout = stdout_bytes(transcript)?;
            let utf8 = std::str::from_utf8(&stdout).is_ok();
            let bad = super::stdio::non_protocol_lines(transcript)?;
            (utf8 && bad == 0).then(|| {
                refuse("the stored stdout is UTF-8 and every line of it is JSON-RPC".into())
            })?
        }
        _ => None,
    }
}

/// The first message the stored stdin sends (a stdio probe's opening).
fn first_sent(transcript: &Value) -> Option<Value> {
    let stdin = super::stdio::stream_bytes(transcript, "stdin")?;
    super::stdio::messages(&stdin).into_iter().next()
}

/// The stored stdout's result message for the request `id`.
fn result_message(transcript: &Value, id: Option<&Value>) -> Option<Value> {
    super::stdio::messages(&super::stdio::stdout_bytes(transcript)?)
        .into_iter()
        .find(|m| m.get("id") == id && m.get("result").is_some())
}

/// A served reading: `held` where `ok`, else `wrong`.
fn held_or<'a>(ok: bool, held: &'a str, wrong: &'a str) -> (ProbeOutcome, &'a str) {
    (ProbeOutcome::Accept, if ok { held } else { wrong })
}

/// `o` read as `reading` (an outcome and a reason) instead, and why (`why`
/// says what gives it); `None` where the labels are already that reading.
fn reread_as(
    o: &Observation,
    reading: (ProbeOutcome, &str),
    why: impl FnOnce() -> String,
) -> Option<(Observation, String)> {
    if reading == (o.observed, o.observed_reason.as_str()) {
        return None;
    }
    Some((
        Observation {
            observed: reading.0,
            observed_reason: reading.1.to_string(),
            ..o.clone()
        },
        why(),
    ))
}

/// oversized-line's control (a valid 16 MiB request) and mutant (a short
/// request with a syntax defect), read where the subject went on serving
/// (its liveness request answered) or answered the request: a result is
/// left open (the control) or the defect served (the mutant); -32700 to the
/// mutant, or its silence with a parse error gathered, is the syntax guard;
/// another error, or silence with a parse or null-id error gathered, is the
/// bounded refusal; silence with nothing gathered is the line dropped
/// silently. Its stdout closed with neither answered, and no signal of the
/// runner's stored, is a bounded ending on a clean exit (status 0) and a
/// crash on any other: a death is never a bounded refusal.
fn oversized_control_reread(
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use super::stdio::{gathered, last_wait_for};
    use crate::diag::reasons as r;
    use ProbeOutcome::{Accept, NotObserved, Reject, Terminate};
    let domain = [
        BEHAVIOUR_LEFT_OPEN,
        r::OVERSIZED_LINE_ACCEPTED,
        SYNTAX_GUARD,
        r::OVERSIZED_LINE_BOUNDED,
        r::OVERSIZED_LINE_DROPPED_SILENTLY,
        r::OVERSIZED_LINE_CRASHED,
        NO_ANSWER,
        SUBJECT_EXITED,
    ];
    if !domain.contains(&o.observed_reason.as_str()) {
        return None;
    }
    let observation = transcript.get("observation")?;
    let request = observation.get("requestId").filter(|r| !r.is_null())?;
    let wait = last_wait_for(transcript, request)?;
    let live = observation.get("liveId")?;
    let alive =
        last_wait_for(transcript, live).is_some_and(|w| w == "result" || w.starts_with("error "));
    let g = gathered(transcript)?;
    let defect = role == "mutant";
    let reading = match wait.as_str() {
        "result" if !defect => (NotObserved, BEHAVIOUR_LEFT_OPEN),
        "result" => (Accept, r::OVERSIZED_LINE_ACCEPTED),
        "error -32700" if defect => (Reject, SYNTAX_GUARD),
        w if w.starts_with("error ") && alive => (Reject, r::OVERSIZED_LINE_BOUNDED),
        "no answer" if g.parse_errors > 0 && defect => (Reject, SYNTAX_GUARD),
        "no answer" if alive => {
            if g.parse_errors + g.null_id_errors > 0 {
                (Reject, r::OVERSIZED_LINE_BOUNDED)
            } else {
                (Reject, r::OVERSIZED_LINE_DROPPED_SILENTLY)
            }
        }
        // Its stdout closed with neither request answered: how it ended
        // decides, when it ended of itself (no signal of the runner's is
        // stored): a clean exit is a bounded ending, any other a crash.
        "stdout closed" if !alive => {
            let events = transcript.get("events")?.as_array()?;
            if events
                .iter()
                .any(|e| e["event"].as_str().is_some_and(|t| t.starts_with("sent ")))
            {
                return None;
            }
            let status = events
                .iter()
                .find(|e| e["event"] == "exited")?
                .get("status")?
                .as_str()?;
            if status == "exit 0" {
                (Terminate, r::OVERSIZED_LINE_BOUNDED)
            } else {
                (Terminate, r::OVERSIZED_LINE_CRASHED)
            }
        }
        _ => return None,
    };
    reread_as(o, reading, || {
        format!(
            "check oversized-line: its {role}.json says {} ({}), but the wait its runner kept for the request ({wait}), the liveness request's ({}) and the {} parse and {} null-id error(s) gathered give {}",
            o.observed,
            o.observed_reason,
            if alive { "answered" } else { "unanswered" },
            g.parse_errors,
            g.null_id_errors,
            reading.1
        )
    })
}

/// The connections among `conns` that carried one request alone (with an
/// id, not an opening), with that id.
fn carried_alone(transcript: &Value, conns: &[u64]) -> Vec<(u64, Value)> {
    conns
        .iter()
        .filter_map(|c| match super::http::sent_on(transcript, *c).as_slice() {
            [m] if !matches!(m["method"].as_str(), Some("initialize" | "server/discover")) => m
                .get("id")
                .filter(|i| !i.is_null())
                .map(|i| (*c, i.clone())),
            _ => None,
        })
        .collect()
}

/// Two controls whose failure label is an error of a given shape on stdout:
/// `required-result-type`'s error carrying a `result` member
/// (`MCP_RES_ERROR_WITH_RESULT`) needs a stored stdout message with both;
/// `no-session-id-assumption`'s refusal of an unknown session id
/// (`MCP_RES_SESSION_ID_ASSUMED`) needs a stored error other than -32700.
/// Where the whole stored stdout has none, the label is not the record's.
fn stdout_error_reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use crate::diag::reasons as r;
    let (label, what): (&str, &str) = match id {
        "required-result-type" => (r::ERROR_WITH_RESULT, "an error carrying a result"),
        _ => (r::SESSION_ID_ASSUMED, "an error other than -32700"),
    };
    if o.observed_reason != label {
        return None;
    }
    let stdout = super::stdio::stdout_bytes(transcript)?;
    let found = super::stdio::messages(&stdout).iter().any(|m| {
        m.get("method").is_none()
            && m.get("error").is_some()
            && if id == "required-result-type" {
                m.get("result").is_some()
            } else {
                m.pointer("/error/code").and_then(Value::as_i64) != Some(-32700)
            }
    });
    (!found).then(|| {
        (
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {} ({label}), but no stored stdout message is {what}",
                o.observed
            ),
        )
    })
}

/// json-schema-dialect-identity's control (a `tools/call` with an argument
/// of the wrong type, after its well-typed twin): answered with a result,
/// the tool's `isError: true` is the refusal and any other result the
/// violation accepted. Read only between those two labels, from the stored
/// answer to the last `tools/call` sent.
fn ill_typed_call_reread(o: &Observation, transcript: &Value) -> Option<(Observation, String)> {
    use crate::diag::reasons as r;
    let (accepted, refused) = (r::SCHEMA_VIOLATION_ACCEPTED, r::SCHEMA_VIOLATION_REFUSED);
    let reason = o.observed_reason.as_str();
    if ![accepted, refused].contains(&reason) {
        return None;
    }
    let stdin = super::stdio::stream_bytes(transcript, "stdin")?;
    let call = super::stdio::messages(&stdin)
        .into_iter()
        .rfind(|m| m["method"] == "tools/call")?;
    let answer = result_message(transcript, call.get("id"))?;
    let is_error = answer.pointer("/result/isError") == Some(&Value::Bool(true));
    let (outcome, reading) = if is_error {
        (ProbeOutcome::Reject, refused)
    } else {
        (ProbeOutcome::Accept, accepted)
    };
    (reading != reason).then(|| {
        (
            Observation {
                observed: outcome,
                observed_reason: reading.to_string(),
                ..o.clone()
            },
            format!(
                "check json-schema-dialect-identity: its negative.json says {} ({reason}), but the stored result for its ill-typed call {} isError, which gives {reading}",
                o.observed,
                if is_error { "has" } else { "has no" }
            ),
        )
    })
}

/// unsupported-version-failure's control before 2026-07-28: an `initialize`
/// naming a version no revision has, on a fresh process. Answered with a
/// result, the version the result names decides: that unknown version (or
/// none) is the version accepted; a released one is the counter-offer, the
/// refusal. Read only between those two labels, from the stored answer.
fn legacy_bogus_version_reread(
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use crate::diag::reasons as r;
    let (accepted, refused) = (
        r::UNSUPPORTED_VERSION_ACCEPTED,
        r::UNSUPPORTED_VERSION_REFUSED,
    );
    let reason = o.observed_reason.as_str();
    if ![accepted, refused].contains(&reason) {
        return None;
    }
    let request = first_sent(transcript)?;
    if request["method"] != "initialize" {
        return None;
    }
    let asked = request.pointer("/params/protocolVersion")?.as_str()?;
    if super::RELEASED_REVISIONS.contains(&asked) {
        return None;
    }
    let answer = result_message(transcript, request.get("id"))?;
    let named = answer
        .pointer("/result/protocolVersion")
        .and_then(Value::as_str);
    let reading = match named {
        Some(v) if super::RELEASED_REVISIONS.contains(&v) => refused,
        Some(v) if v == asked => accepted,
        None => accepted,
        // Another unknown version: neither label (other rules read it).
        Some(_) => return None,
    };
    (reading != reason).then(|| {
        (
            Observation {
                observed: if reading == accepted {
                    ProbeOutcome::Accept
                } else {
                    ProbeOutcome::Reject
                },
                observed_reason: reading.to_string(),
                ..o.clone()
            },
            format!(
                "check unsupported-version-failure: its negative.json says {} ({reason}), but the stored answer to its initialize naming {asked} names {}, which gives {reading}",
                o.observed,
                named.unwrap_or("no version")
            ),
        )
    })
}

/// safe-integer-constraints' control (a request whose id is an integer past
/// 2^53, sent as a number): answered under a rounded neighbour (an id within
/// 8 of it that is not it, as an integer or a fraction) anywhere on the
/// stored stdout is the id corrupted; nowhere is not. Read only between those
/// two labels, over the whole stored stdout.
fn unsafe_integer_reread(o: &Observation, transcript: &Value) -> Option<(Observation, String)> {
    use crate::diag::reasons as r;
    let (corrupted, kept) = (r::UNSAFE_INTEGER_CORRUPTED, r::UNSAFE_INTEGER_NOT_CORRUPTED);
    let reason = o.observed_reason.as_str();
    // Silence while the subject went on serving (its liveness request
    // answered) is no reading of its own: the id kept, or corrupted.
    let serving = || {
        transcript
            .pointer("/observation/liveId")
            .and_then(|live| super::stdio::last_wait_for(transcript, live))
            .is_some_and(|read| read == "result" || read.starts_with("error "))
    };
    let silent = reason == NO_ANSWER && serving();
    if ![corrupted, kept].contains(&reason) && !silent {
        return None;
    }
    let stdin = super::stdio::stream_bytes(transcript, "stdin")?;
    let sent = super::stdio::messages(&stdin)
        .into_iter()
        .filter(|m| m.get("method").is_some())
        .filter_map(|m| m.get("id").and_then(Value::as_u64))
        .find(|i| *i > (1u64 << 53))?;
    let stdout = super::stdio::stdout_bytes(transcript)?;
    let near = super::stdio::messages(&stdout).into_iter().find(|m| {
        m.get("method").is_none()
            && (m
                .get("id")
                .and_then(Value::as_u64)
                .is_some_and(|i| i != sent && i.abs_diff(sent) <= 8)
                || m.get("id").is_some_and(|i| {
                    i.as_u64().is_none()
                        && i.as_f64().is_some_and(|f| (f - sent as f64).abs() <= 8.0)
                }))
    });
    let why = match (&near, reason == corrupted) {
        (Some(m), false) => format!(
            "the stored stdout answers under the id {} next to the {sent} it sent",
            m["id"]
        ),
        (None, true) => {
            format!("no stored stdout line answers under an id next to the {sent} it sent")
        }
        (None, false) if silent => format!(
            "the subject went on serving and no stored stdout line answers under an id next to the {sent} it sent: the id was not corrupted ({kept})"
        ),
        _ => return None,
    };
    Some((
        not_in_record(o),
        format!(
            "check safe-integer-constraints: its negative.json says {} ({reason}), but {why}",
            o.observed
        ),
    ))
}

/// Streamable HTTP controls read from their stored connections:
///
/// - early-close and cancellation-by-stream-close (the control): after a
///   connection the runner closed early, a request on a connection of its
///   own, the last of the record, asks whether the subject still serves; an
///   answer to it is the close absorbed, none is not (a subject that stopped
///   serving, or ended);
/// - duplicate-delivery (control and mutant): a response (an id with a
///   result or an error, no method) sent to the subject is answered only
///   where a stored response carries an id that no request mcpres sent
///   carries.
///
/// Read only between the labels the stored bytes decide.
fn http_control_reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use super::http;
    use crate::diag::reasons as r;
    let refuse = |why: String| {
        Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {} ({}), but {why}",
                o.observed, o.observed_reason
            ),
        ))
    };
    let reason = o.observed_reason.as_str();
    match id {
        "early-close" | "cancellation-by-stream-close" | "slow-consumer" if role == "negative" => {
            // After a connection the runner closed early (or, for
            // slow-consumer, beside a 1 MiB answer left unread on another
            // connection), a request alone on the record's last connection
            // asks whether the subject still serves: answered is the
            // control's own reason, unanswered the other.
            let (held, other) = match id {
                "slow-consumer" => (o.expected_reason.as_str(), r::HTTP_STALL_BLOCKED_OTHERS),
                _ => (o.expected_reason.as_str(), r::HTTP_STOPPED_SERVING),
            };
            if ![held, other].contains(&reason) {
                return None;
            }
            let conns: Vec<u64> = http::sent_bodies(transcript)?.into_keys().collect();
            let carried = carried_alone(transcript, &conns);
            let (conn, request) = carried.last()?;
            // The request asking whether it still serves is the last one
            // (slow-consumer's stalled request is the only other).
            if conns.iter().max() != Some(conn) || (id == "slow-consumer" && carried.len() != 2) {
                return None;
            }
            let serving = http::exchanges_on(transcript, *conn)?
                .first()
                .is_some_and(|e| {
                    e.messages().iter().any(|m| {
                        m.get("id") == Some(request)
                            && (m.get("result").is_some() || m.get("error").is_some())
                    })
                });
            match (serving, reason == held) {
                (true, false) => refuse(format!(
                    "the request on its last connection (id {request}) is answered in the stored bytes: the subject went on serving"
                )),
                (false, true) => refuse(format!(
                    "the request on its last connection (id {request}) is not answered in the stored bytes"
                )),
                _ => None,
            }
        }
        // (A check with a refusal in the judge's table has its control read
        // by that table's rule, which names the answer.)
        _ if reason == r::HTTP_NO_ANSWER_FRAME
            && (role == "mutant" || http::refusal_of(id).is_none()) =>
        {
            // A 2xx with no answer in it: some connection that carried a
            // request (or a body that does not parse) has a first stored
            // response with a 2xx status and no JSON-RPC answer.
            let bodies = http::sent_bodies(transcript)?;
            let seen = bodies.iter().any(|(conn, sent)| {
                let messages = http::sent_on(transcript, *conn);
                let unparsed = sent
                    .iter()
                    .any(|b| !b.is_empty() && serde_json::from_slice::<Value>(b).is_err());
                let asks = messages
                    .iter()
                    .any(|m| m.get("id").is_some_and(|i| !i.is_null()));
                (unparsed || asks)
                    && http::exchanges_on(transcript, *conn)
                        .and_then(|e| e.into_iter().next())
                        .is_some_and(|e| {
                            (200..300).contains(&e.status)
                                && !e.messages().iter().any(|m| {
                                    m.get("method").is_none()
                                        && (m.get("result").is_some() || m.get("error").is_some())
                                })
                        })
            });
            (!seen).then(|| {
                refuse(
                    "no connection that carried a request has a first stored response that is a 2xx without an answer"
                        .into(),
                )
            })?
        }
        "socket-cleanup" if role != "positive" => {
            // A signal with an idle connection open (one that sent
            // nothing): the subject closed it, or did not.
            let (closed, open) = (r::HTTP_SOCKETS_CLOSED_ON_STOP, r::HTTP_SOCKET_LEFT_OPEN);
            if ![closed, open].contains(&reason) {
                return None;
            }
            let sent = http::sent_bodies(transcript)?;
            let received = http::received(transcript)?;
            let idle: Vec<u64> = (1..=transcript.get("connections")?.as_u64()?)
                .filter(|c| !sent.contains_key(c) && !received.contains_key(c))
                .collect();
            let [conn] = idle.as_slice() else {
                return None;
            };
            let ended = http::ended_by_subject(transcript, *conn);
            match (ended, reason == closed) {
                (true, false) => refuse(format!(
                    "the subject ended its idle connection ({conn}) in the stored events"
                )),
                (false, true) => refuse(format!(
                    "no stored event shows the subject ending its idle connection ({conn})"
                )),
                _ => None,
            }
        }
        "backpressure" if role == "negative" => {
            // Two requests written back to back on one connection.
            let (ordered, reordered) = (r::HTTP_PIPELINE_ORDERED, r::HTTP_PIPELINE_REORDERED);
            if ![ordered, reordered].contains(&reason) {
                return None;
            }
            let conns: Vec<u64> = http::sent_bodies(transcript)?.into_keys().collect();
            let (conn, ids) = conns.iter().find_map(|&c| {
                let ids: Vec<Value> = http::sent_on(transcript, c)
                    .iter()
                    .filter_map(|m| m.get("id").filter(|i| !i.is_null()).cloned())
                    .collect();
                (ids.len() == 2).then_some((c, ids))
            })?;
            let responses = http::exchanges_on(transcript, conn)?;
            let answers_of = |n: usize| -> Vec<Value> {
                responses
                    .get(n)
                    .map(|e| {
                        e.messages()
                            .into_iter()
                            .filter(|m| {
                                m.get("method").is_none()
                                    && (m.get("result").is_some() || m.get("error").is_some())
                            })
                            .filter_map(|m| m.get("id").cloned())
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let (first, second) = (answers_of(0), answers_of(1));
            let reading = if first.contains(&ids[1]) || (first.contains(&ids[0]) && first.len() > 1)
            {
                reordered
            } else if first.contains(&ids[0]) && (second.contains(&ids[1]) || second.is_empty()) {
                ordered
            } else if first.contains(&ids[0]) {
                reordered
            } else {
                // The first not answered: its refusal is other rules'.
                return None;
            };
            (reading != reason).then(|| {
                (
                    Observation {
                        observed: ProbeOutcome::Accept,
                        observed_reason: reading.to_string(),
                        ..o.clone()
                    },
                    format!(
                        "check {id}: its {role}.json says {} ({reason}), but the first response on its pipelined connection answers {} and the second {}, which give {reading}",
                        o.observed,
                        serde_json::to_string(&first).unwrap_or_default(),
                        serde_json::to_string(&second).unwrap_or_default(),
                    ),
                )
            })
        }
        "duplicate-delivery" if role != "positive" => {
            let (answered, not_answered) = (
                r::HTTP_STRAY_RESPONSE_ANSWERED,
                r::HTTP_STRAY_RESPONSE_NOT_ANSWERED,
            );
            if ![answered, not_answered].contains(&reason) {
                return None;
            }
            let asked: Vec<Value> = http::sent_messages(transcript)?
                .into_iter()
                .filter(|m| m.get("method").is_some())
                .filter_map(|m| m.get("id").cloned())
                .collect();
            let stray = http::messages(transcript)?.into_iter().find(|m| {
                m.get("method").is_none()
                    && (m.get("result").is_some() || m.get("error").is_some())
                    && m.get("id")
                        .is_some_and(|i| !i.is_null() && !asked.contains(i))
            });
            match (stray, reason == answered) {
                (Some(m), false) => refuse(format!(
                    "the stored bytes hold a response with the id {} that no request it sent carries",
                    m["id"]
                )),
                (None, true) => refuse(
                    "no stored response carries an id other than those of the requests it sent"
                        .into(),
                ),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Streamable HTTP positives whose reading is a function of the first
/// response on the connection that carried their request:
///
/// - status-code-consistency: a notification (`notifications/cancelled`)
///   answered `202` with no body holds; another status is the wrong one; a
///   close before any response is the subject gone; nothing is no answer;
/// - backpressure: eight requests on eight connections at once, all
///   answered (on the reads kept), hold; none is no answer; some is lost;
/// - request-response-binding: two requests on two connections at once,
///   each answered on its own with its own id alone, hold; neither answered
///   is no answer; anything else is a response bound to the wrong request;
/// - proxy-added-headers: one request with proxy headers on a connection of
///   its own, read only between the labels its first response decides: a
///   3xx is a redirect; no answer to it with a status of 400 or more is the
///   headers refused; a result for it holds;
/// - keepalive: two requests one after the other on one connection: the
///   first answered in the connection's first response and the second in
///   its second hold; the first answered and not the second is a connection
///   not reused; the first not answered is a 401 when the first response is
///   one, the subject gone when it ended the connection before any
///   response, else no answer.
fn http_positive_reread(
    id: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use super::http;
    use crate::diag::reasons as r;
    use ProbeOutcome::{Accept, NotObserved, Reject, Terminate};
    let held = o.expected_reason.as_str();
    let conns: Vec<u64> = http::sent_bodies(transcript)?.into_keys().collect();
    let answers = |e: &http::Exchange| -> Vec<Value> {
        e.messages()
            .into_iter()
            .filter(|m| {
                m.get("id").is_some() && (m.get("result").is_some() || m.get("error").is_some())
            })
            .collect()
    };
    let unauthorized = r::http_status(401);
    let (reading, why): ((ProbeOutcome, &str), String) = match id {
        "keepalive" => {
            // The one connection that carried two requests (with ids).
            let (conn, ids) = conns.iter().find_map(|&c| {
                let ids: Vec<Value> = http::sent_on(transcript, c)
                    .iter()
                    .filter(|m| {
                        !matches!(m["method"].as_str(), Some("initialize" | "server/discover"))
                    })
                    .filter_map(|m| m.get("id").filter(|i| !i.is_null()).cloned())
                    .collect();
                (ids.len() == 2).then_some((c, ids))
            })?;
            let responses = http::exchanges_on(transcript, conn)?;
            let answers_in = |n: usize, id: &Value| {
                responses
                    .get(n)
                    .is_some_and(|e| answers(e).iter().any(|m| m.get("id") == Some(id)))
            };
            let reading = if answers_in(0, &ids[0]) {
                if answers_in(1, &ids[1]) {
                    (Accept, held)
                } else {
                    (Accept, r::HTTP_CONNECTION_NOT_REUSED)
                }
            } else {
                match responses.first() {
                    Some(e) if e.status == 401 => (Reject, unauthorized.as_str()),
                    None if http::ended_by_subject(transcript, conn) => (Terminate, SUBJECT_EXITED),
                    _ => (NotObserved, NO_ANSWER),
                }
            };
            (
                reading,
                format!(
                    "its connection stored {} response(s) to its two requests, which",
                    responses.len()
                ),
            )
        }
        "status-code-consistency" => {
            let conn = *conns.iter().find(|c| {
                http::sent_on(transcript, **c)
                    .iter()
                    .any(|m| m["method"] == "notifications/cancelled")
            })?;
            let first = http::exchanges_on(transcript, conn)?.into_iter().next();
            let reading = match &first {
                Some(e) if e.status == 202 && e.body.is_empty() => (Accept, held),
                Some(_) => (Accept, r::HTTP_NOTIFICATION_STATUS_WRONG),
                None if http::closed_by_subject(transcript, conn) => (Terminate, SUBJECT_EXITED),
                None => (NotObserved, NO_ANSWER),
            };
            let what = first.map_or("no response".to_string(), |e| {
                format!("status {} with {} body bytes", e.status, e.body.len())
            });
            (
                reading,
                format!("the notification's connection stored {what}, which"),
            )
        }
        "backpressure" => {
            // Eight requests on eight connections at once: each answered on
            // the read its runner kept for that connection.
            let reads = http::response_reads(transcript)?;
            let carried = carried_alone(transcript, &conns);
            let answered_n = carried
                .iter()
                .filter(|(c, id)| {
                    reads.iter().any(|r| {
                        r["connection"].as_u64() == Some(*c)
                            && r["answered"].as_array().is_some_and(|a| a.contains(id))
                    })
                })
                .count();
            let reading = match answered_n {
                8 => (Accept, held),
                0 => (NotObserved, NO_ANSWER),
                _ => (Accept, r::HTTP_CONCURRENT_LOST),
            };
            (
                reading,
                format!(
                    "the reads its runner kept answer {answered_n} of its 8 concurrent requests, which"
                ),
            )
        }
        "request-response-binding" => {
            // The two connections that each carried one request with an id.
            let carried = carried_alone(transcript, &conns);
            let [(c1, id1), (c2, id2)] = carried.as_slice() else {
                return None;
            };
            let first = |c: u64| http::exchanges_on(transcript, c).map(|e| e.into_iter().next());
            let (e1, e2) = (first(*c1)?, first(*c2)?);
            let got = |e: &Option<http::Exchange>| e.as_ref().map(answers).unwrap_or_default();
            let (a1, a2) = (got(&e1), got(&e2));
            let own = |a: &[Value], id: &Value| a.len() == 1 && a[0].get("id") == Some(id);
            let has = |a: &[Value], id: &Value| a.iter().any(|m| m.get("id") == Some(id));
            let reading = if own(&a1, id1) && own(&a2, id2) {
                (Accept, held)
            } else if (!has(&a1, id1) || !has(&a2, id2)) && a1.is_empty() && a2.is_empty() {
                (NotObserved, NO_ANSWER)
            } else {
                (Accept, r::HTTP_RESPONSE_MISBOUND)
            };
            (
                reading,
                format!(
                    "the two connections stored {} and {} answer(s), which",
                    a1.len(),
                    a2.len()
                ),
            )
        }
        "proxy-added-headers" => {
            // One request with proxy headers on a connection of its own:
            // read only between the labels its first response decides.
            let refused = r::HTTP_PROXY_HEADERS_REFUSED;
            if ![held, refused, r::HTTP_REDIRECTED].contains(&o.observed_reason.as_str()) {
                return None;
            }
            let carried = carried_alone(transcript, &conns);
            let [(conn, request)] = carried.as_slice() else {
                return None;
            };
            let first = http::exchanges_on(transcript, *conn)?.into_iter().next()?;
            let answered = answers(&first)
                .into_iter()
                .find(|m| m.get("id") == Some(request));
            let reading = if (300..400).contains(&first.status) {
                (Accept, r::HTTP_REDIRECTED)
            } else if answered.is_none() && first.status >= 400 {
                (Reject, refused)
            } else if answered.as_ref().is_some_and(|m| m.get("result").is_some()) {
                (Accept, held)
            } else {
                // An error with its id, or a 2xx without one: other rules'.
                return None;
            };
            (
                reading,
                format!(
                    "its request's connection stored status {} {} an answer to it, which",
                    first.status,
                    if answered.is_some() {
                        "with"
                    } else {
                        "without"
                    }
                ),
            )
        }
        "socket-cleanup" => {
            // Five requests, each on a connection of its own that mcpres
            // closed; then the sockets the subject still held for them, as
            // its record names them (`observation.held`, read from the
            // subject's socket table and stored).
            let sockets = r::HTTP_SOCKETS_HELD;
            if ![held, sockets].contains(&o.observed_reason.as_str()) {
                return None;
            }
            let kept = transcript.get("observation")?.get("held")?.as_array()?;
            let answered_n = carried_alone(transcript, &conns)
                .iter()
                .filter(|(c, request)| {
                    http::exchanges_on(transcript, *c)
                        .and_then(|e| e.into_iter().next())
                        .is_some_and(|e| answers(&e).iter().any(|m| m.get("id") == Some(request)))
                })
                .count();
            if answered_n < 5 {
                return None;
            }
            (
                held_or(kept.is_empty(), held, sockets),
                format!(
                    "its 5 requests answered in the stored bytes and the {} socket(s) its record says the subject still held for them",
                    kept.len()
                ),
            )
        }
        "duplicate-delivery"
        | "early-close"
        | "cancellation-by-stream-close"
        | "long-lived-response-stream"
        | "oversized-event"
        | "slow-consumer"
        | "authenticated-loopback-http" => {
            // One request on a connection of its own, read from the first
            // response stored on that connection.
            let carried = carried_alone(transcript, &conns);
            let [(conn, request)] = carried.as_slice() else {
                return None;
            };
            let first = http::exchanges_on(transcript, *conn)?.into_iter().next();
            let ended = http::ended_by_subject(transcript, *conn);
            let mine: Vec<Value> = first
                .as_ref()
                .map(|e| {
                    answers(e)
                        .into_iter()
                        .filter(|m| m.get("id") == Some(request))
                        .collect()
                })
                .unwrap_or_default();
            let complete = first
                .as_ref()
                .is_some_and(|e| e.complete || (e.until_close && ended));
            let result = first.as_ref().and_then(|e| e.result_for(request));
            // No answer to it: a 401, the subject gone before any response,
            // else no answer (the runner's reading of an unanswered request).
            let unanswered = match &first {
                Some(e) if e.status == 401 => (Reject, unauthorized.as_str()),
                None if ended => (Terminate, SUBJECT_EXITED),
                _ => (NotObserved, NO_ANSWER),
            };
            let reading = match id {
                _ if mine.is_empty() && id == "long-lived-response-stream" => {
                    if complete || ended {
                        (Accept, r::HTTP_STREAM_ENDED_EARLY)
                    } else {
                        (NotObserved, NO_ANSWER)
                    }
                }
                _ if mine.is_empty() => unanswered,
                "duplicate-delivery" => held_or(mine.len() == 1, held, r::HTTP_ANSWERED_TWICE),
                "early-close" => held_or(complete, held, r::HTTP_ANSWER_INCOMPLETE),
                "cancellation-by-stream-close" => {
                    held_or(result.is_some(), held, r::HTTP_STREAM_FAILED)
                }
                "oversized-event" | "slow-consumer" => {
                    // The large text it asked to have echoed, whole in the
                    // first text of the result, or not.
                    let sent = http::sent_on(transcript, *conn)
                        .into_iter()
                        .find(|m| m.get("id") == Some(request))?;
                    let text = sent
                        .pointer("/params/arguments")?
                        .as_object()?
                        .values()
                        .filter_map(Value::as_str)
                        .max_by_key(|t| t.len())?;
                    let intact = result
                        .as_ref()
                        .and_then(|r| r.pointer("/content/0/text"))
                        .and_then(Value::as_str)
                        .is_some_and(|t| t.contains(text));
                    let wrong = if id == "oversized-event" {
                        r::HTTP_LARGE_EVENT_CORRUPTED
                    } else {
                        r::HTTP_SLOW_READ_CORRUPTED
                    };
                    held_or(intact, held, wrong)
                }
                "long-lived-response-stream" => {
                    let e = first.as_ref()?;
                    let streamed = e
                        .header("content-type")
                        .is_some_and(|m| m.to_ascii_lowercase().starts_with("text/event-stream"));
                    let progress = e
                        .messages()
                        .iter()
                        .take_while(|m| m.get("id") != Some(request))
                        .filter(|m| m["method"] == "notifications/progress")
                        .count();
                    held_or(
                        streamed && progress > 0 && result.is_some(),
                        held,
                        r::HTTP_NOT_STREAMED,
                    )
                }
                _ => {
                    // authenticated-loopback-http: answered, with the
                    // addresses its record says the subject listened on;
                    // all loopback (or none found) holds. One beyond
                    // loopback decides nothing here (a subject mcpres did
                    // not launch is not judged by its table).
                    let bound = transcript
                        .get("observation")?
                        .get("boundAddresses")?
                        .as_array()?;
                    let loopback = bound.iter().all(|a| {
                        a.as_str()
                            .and_then(|a| a.parse::<std::net::IpAddr>().ok())
                            .is_some_and(|ip| ip.to_canonical().is_loopback())
                    });
                    if !loopback {
                        return None;
                    }
                    (Accept, held)
                }
            };
            (
                reading,
                format!(
                    "its request's connection stored {} with {} answer(s) to it{}, which",
                    first
                        .as_ref()
                        .map_or("no response".to_string(), |e| format!(
                            "status {}",
                            e.status
                        )),
                    mine.len(),
                    if complete {
                        ""
                    } else {
                        " (the response not read to its end)"
                    }
                ),
            )
        }
        _ => return None,
    };
    reread_as(o, reading, || {
        format!(
            "check {id}: its positive.json says {} ({}), but {why} give {}",
            o.observed, o.observed_reason, reading.1
        )
    })
}

/// supported-version-advertisement's control and mutant (a request naming a
/// version no revision has: `initialize` on a fresh process before
/// 2026-07-28, a listing after `server/discover` at it), read from the
/// answer to it on the stored stdout: an echo of the version is served; a
/// counter-offer of a released revision, or an error listing only released
/// ones (`error.data.supported`), is the refusal; another version offered
/// is an unknown one; an error without the list is one not advertised;
/// -32601 at 2026-07-28 is never credited; -32700 is the syntax guard.
/// Nothing is read for a control left unanswered or whose valid twin was not
/// served (other rules read those).
fn bogus_version_reread(
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use crate::diag::reasons as r;
    use ProbeOutcome::{Accept, NotObserved, Reject};
    // Only a label this classifier gives is read again here (another is
    // the vocabulary's, or the other rules').
    let domain = [
        r::UNSUPPORTED_VERSION_ECHOED,
        r::SUPPORTED_VERSION_ADVERTISED,
        r::UNKNOWN_VERSION_ADVERTISED,
        r::UNSUPPORTED_VERSION_ACCEPTED,
        r::SUPPORTED_VERSIONS_NOT_ADVERTISED,
        r::METHOD_NOT_FOUND_NOT_CREDITED,
        SYNTAX_GUARD,
    ];
    if !domain.contains(&o.observed_reason.as_str()) {
        return None;
    }
    let observation = transcript.get("observation")?;
    let request = observation.get("requestId").filter(|r| !r.is_null())?;
    let wait = super::stdio::last_wait_for(transcript, request)?;
    if !(wait == "result" || wait.starts_with("error ")) {
        // Unanswered, no answer's content can be named; a null-id error
        // gathered (and no syntax guard) is the one not advertised.
        let refused_unread = o.observed_reason == r::SUPPORTED_VERSIONS_NOT_ADVERTISED
            && super::stdio::gathered(transcript)
                .is_some_and(|g| g.null_id_errors > 0 && g.parse_errors == 0);
        let named = [
            r::UNSUPPORTED_VERSION_ECHOED,
            r::SUPPORTED_VERSION_ADVERTISED,
            r::UNKNOWN_VERSION_ADVERTISED,
            r::SUPPORTED_VERSIONS_NOT_ADVERTISED,
        ]
        .contains(&o.observed_reason.as_str());
        if named && !refused_unread {
            return Some((
                not_in_record(o),
                format!(
                    "check supported-version-advertisement: its {role}.json says {}, but the last wait its runner kept for its request {request} read {wait}",
                    o.observed_reason
                ),
            ));
        }
        return None;
    }
    if let Some(twin) = observation.pointer("/twin/id")
        && twin_accepted(transcript, twin) != Some(true)
    {
        return None;
    }
    let stdin = super::stdio::stream_bytes(transcript, "stdin")?;
    let sent = super::stdio::messages(&stdin);
    let modern = sent
        .first()
        .is_some_and(|m| m["method"] == "server/discover");
    let answer = super::stdio::messages(&super::stdio::stdout_bytes(transcript)?)
        .into_iter()
        .find(|m| m.get("id") == Some(request) && m.get("method").is_none())?;
    let control = sent.iter().find(|m| m.get("id") == Some(request));
    let asked = control.and_then(|m| {
        m.pointer("/params/protocolVersion")
            .or_else(|| m.pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion"))
    });
    let released = |v: &Value| {
        v.as_str()
            .is_some_and(|v| super::RELEASED_REVISIONS.contains(&v))
    };
    let reading = match wait.as_str() {
        "error -32601" if modern => (NotObserved, r::METHOD_NOT_FOUND_NOT_CREDITED),
        "error -32700" => (Reject, SYNTAX_GUARD),
        "result" => match answer.pointer("/result/protocolVersion") {
            Some(v) if Some(v) == asked => (Accept, r::UNSUPPORTED_VERSION_ECHOED),
            Some(v) if released(v) => (Reject, r::SUPPORTED_VERSION_ADVERTISED),
            Some(_) if asked.is_none() => return None,
            Some(_) => (Reject, r::UNKNOWN_VERSION_ADVERTISED),
            None => (Accept, r::UNSUPPORTED_VERSION_ACCEPTED),
        },
        _ => {
            let listed = answer
                .pointer("/error/data/supported")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty() && a.iter().all(released));
            if listed {
                (Reject, r::SUPPORTED_VERSION_ADVERTISED)
            } else {
                (Reject, r::SUPPORTED_VERSIONS_NOT_ADVERTISED)
            }
        }
    };
    reread_as(o, reading, || {
        format!(
            "check supported-version-advertisement: its {role}.json says {} ({}), but the stored answer to its request {request} ({wait}) gives {}",
            o.observed, o.observed_reason, reading.1
        )
    })
}

/// The stdio controls (check, role) whose silence, while the subject goes on
/// serving (its liveness request answered), is their refusal: the runners
/// read them so (a pretty-printed request, an invalid UTF-8 byte, a 16 MiB
/// line, a batch, a request before any conversation, a null or object id).
const SILENCE_REFUSES: [(&str, &str); 10] = [
    ("released-message-framing", "negative"),
    ("malformed-output", "negative"),
    ("malformed-output", "mutant"),
    ("oversized-line", "negative"),
    ("oversized-line", "mutant"),
    ("concurrent-requests", "negative"),
    ("no-process-as-conversation", "negative"),
    ("no-process-as-conversation", "mutant"),
    ("request-identity-metadata", "negative"),
    ("result-identity-metadata", "negative"),
];

/// Labels that name how a request was answered, read against the answer the
/// record keeps for it: silence needs the request's last wait (stdio) or a
/// read with no response (Streamable HTTP) to have got none, and (for a
/// control still serving) no syntax guard or null-id refusal in the lines
/// gathered; an error label needs that error in the stored answers; a twin
/// refusal needs the twin not served, and a twin not served leaves no other
/// label than the twin refusal on a control that was not an acceptance.
fn answer_reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    use super::stdio::{gathered, last_wait_for, wait_readings};
    let observation = transcript.get("observation").unwrap_or(&Value::Null);
    // The request an exchange was read on: the one it records, or (an
    // exchange of one request alone, which records no id) the only wait kept.
    let only_wait = transcript
        .get("replies")
        .and_then(Value::as_array)
        .filter(|w| {
            w.len() == 1
                && observation.get("reply").is_some()
                && observation.get("stdoutLines").is_some()
                && observation.get("liveId").is_none()
        })
        .and_then(|w| w[0].get("id"));
    // A control whose id has no place in the summary (null, an object) is
    // the one wait kept for such an id.
    let odd_id = transcript
        .get("replies")
        .and_then(Value::as_array)
        .and_then(|w| {
            let odd: Vec<&Value> = w
                .iter()
                .filter_map(|r| r.get("id"))
                .filter(|id| id.is_null() || id.is_object())
                .collect();
            (odd.len() == 1 && observation.get("reply").is_some()).then(|| odd[0])
        });
    let request = observation
        .get("requestId")
        .filter(|r| !r.is_null())
        .or(only_wait)
        .or(odd_id);
    let answered = |r: &str| r == "result" || r.starts_with("error ");
    let refuse = |why: String| {
        Some((
            not_in_record(o),
            format!(
                "check {id}: its {role}.json says {}, but {why}",
                o.observed_reason
            ),
        ))
    };
    let http_messages = super::http::messages(transcript);
    let code_seen = |code: i64| {
        http_messages.as_ref().map(|messages| {
            messages
                .iter()
                .any(|m| m.pointer("/error/code").and_then(Value::as_i64) == Some(code))
        })
    };
    match o.observed_reason.as_str() {
        NO_ANSWER => {
            if let Some(req) = request
                && let Some(read) = last_wait_for(transcript, req)
                && answered(&read)
            {
                return refuse(format!(
                    "the last wait its runner kept for the request {req} read {read}"
                ));
            }
            // A control met with silence while the subject went on serving
            // (its liveness request answered) is a refusal where the lines
            // gathered hold the syntax guard or a null-id error.
            if o.observed == ProbeOutcome::NoEffect
                && let Some(live) = observation.get("liveId")
                && last_wait_for(transcript, live).is_some_and(|r| answered(&r))
                && let Some(g) = gathered(transcript)
                && (g.parse_errors > 0 || g.null_id_errors > 0)
            {
                return refuse(format!(
                    "the subject went on serving and the stdout lines the exchange was gathered from hold {} parse error(s) and {} other null-id error(s)",
                    g.parse_errors, g.null_id_errors
                ));
            }
            // Where silence while serving is the control's refusal, a
            // control met with silence and the subject still serving is
            // refused, not unanswered.
            if o.observed == ProbeOutcome::NoEffect
                && SILENCE_REFUSES.contains(&(id, role))
                && let Some(live) = observation.get("liveId")
                && let Some(read) = last_wait_for(transcript, live)
                && answered(&read)
            {
                return refuse(format!(
                    "the subject went on serving (its liveness request {live} read {read}), and silence while serving is this control's refusal"
                ));
            }
            if o.observed == ProbeOutcome::NoEffect
                && let Some(reads) = super::http::response_reads(transcript)
            {
                let carrier = request.and_then(|r| super::http::connection_of(transcript, r));
                let silent = reads.iter().any(|r| {
                    r["status"].is_null()
                        && r["closedBySubject"] != json!(true)
                        && carrier.is_none_or(|c| r["connection"].as_u64() == Some(c))
                });
                if !silent {
                    return refuse(
                        "every response read its runner kept for the request got a response or a close"
                            .into(),
                    );
                }
            }
        }
        // A conversation not opened leaves an observation of its opening
        // alone: one that records more was made after the opening.
        OPEN_FAILED | OPEN_REFUSED if o.observed == ProbeOutcome::NotObserved => {
            if let Some(keys) = observation.as_object()
                && let Some(k) = keys.keys().find(|k| *k != "open")
            {
                return refuse(format!(
                    "its stored observation records `{k}`, of an exchange made after the opening"
                ));
            }
        }
        // Left open is what a served request is (a stdio control answered
        // with a result where no MUST asks for a refusal).
        BEHAVIOUR_LEFT_OPEN => {
            if let Some(req) = request
                && let Some(read) = last_wait_for(transcript, req)
                && read != "result"
            {
                return refuse(format!(
                    "the last wait its runner kept for the request {req} read {read}, not a result"
                ));
            }
        }
        // Polluted stdout is a line on it that is not JSON-RPC: among the
        // lines the exchange was gathered from, or (the purity positive,
        // judged on the whole transcript) anywhere.
        STDOUT_POLLUTED => {
            let bad = match gathered(transcript) {
                Some(g) => Some(g.non_json_lines),
                None if id == "stdout-protocol-purity" && role == "positive" => {
                    super::stdio::non_protocol_lines(transcript)
                }
                None => None,
            };
            if bad == Some(0) {
                return refuse("no stdout line it was read from is other than JSON-RPC".into());
            }
        }
        // A wrong error is an error answer whose code is neither the
        // syntax guard's nor the property's own (-32022).
        crate::diag::reasons::UNSUPPORTED_VERSION_WRONG_ERROR => {
            if let Some(req) = request
                && let Some(read) = last_wait_for(transcript, req)
                && !read
                    .strip_prefix("error ")
                    .and_then(|c| c.parse::<i64>().ok())
                    .is_some_and(|c| c != -32700 && c != UNSUPPORTED_VERSION_CODE)
            {
                return refuse(format!(
                    "the last wait its runner kept for the request {req} read {read}, not an error other than -32700 and the property's {UNSUPPORTED_VERSION_CODE}"
                ));
            }
        }
        // Refused with the wrong error is met otherwise than with a result,
        // the syntax guard, the property's own code (-32022) or method not
        // found (not credited).
        crate::diag::reasons::VERSION_REFUSED_WRONG_ERROR => {
            if let Some(req) = request
                && let Some(read) = last_wait_for(transcript, req)
                && (read == "result"
                    || read
                        .strip_prefix("error ")
                        .and_then(|c| c.parse::<i64>().ok())
                        .is_some_and(|c| [-32700, UNSUPPORTED_VERSION_CODE, -32601].contains(&c)))
            {
                return refuse(format!(
                    "the last wait its runner kept for the request {req} read {read}, which is not a refusal with another error"
                ));
            }
        }
        // Protocol on stderr is a JSON-RPC message on a stderr line the
        // transcript stores (the whole stream, kept to the probe's end: a
        // superset of what the runner had read when it judged).
        crate::diag::reasons::STDERR_CARRIES_PROTOCOL => {
            if let Some(stderr) = super::stdio::stream_bytes(transcript, "stderr")
                && !super::stdio::carries_protocol(&stderr)
            {
                return refuse(format!(
                    "none of the {} stderr byte(s) its transcript stores is a line holding a JSON-RPC message",
                    stderr.len()
                ));
            }
        }
        // A crash is an exit of the subject's own other than status 0.
        crate::diag::reasons::OVERSIZED_LINE_CRASHED => {
            let exits: Vec<&str> = transcript
                .get("events")
                .and_then(Value::as_array)
                .map(|e| {
                    e.iter()
                        .filter(|e| e["event"] == "exited")
                        .filter_map(|e| e["status"].as_str())
                        .collect()
                })
                .unwrap_or_default();
            // (An exit after the runner's own ending act is not the
            // subject's own.)
            let by_runner = observation.pointer("/endedBy/mcpres").is_some()
                || super::stdio::went_by_itself(transcript) == Some(false);
            if transcript.get("replies").is_some()
                && (by_runner || !exits.iter().any(|s| *s != "exit 0"))
            {
                return refuse(format!(
                    "its transcript records {} (no exit of the subject's own other than status 0)",
                    if by_runner {
                        "the subject ended after an ending act of the runner".to_string()
                    } else if exits.is_empty() {
                        "no exit".to_string()
                    } else {
                        exits.join(", ")
                    }
                ));
            }
        }
        // A redirect is a 3xx status or a `Location` header on the wire.
        crate::diag::reasons::HTTP_REDIRECTED => {
            if let Some(reads) = super::http::response_reads(transcript)
                && let Some(received) = super::http::received(transcript)
            {
                let status = reads.iter().any(|r| {
                    r["status"]
                        .as_u64()
                        .is_some_and(|s| (300..400).contains(&s))
                });
                let location = received.values().any(|b| {
                    b.windows(11)
                        .any(|w| w.eq_ignore_ascii_case(b"\r\nlocation:"))
                });
                if !status && !location {
                    return refuse(
                        "no response its runner read has a 3xx status or a Location header".into(),
                    );
                }
            }
        }
        crate::diag::reasons::REQUEST_REFUSED => {
            if let Some(reads) = wait_readings(transcript)
                && !reads.iter().any(|r| r.starts_with("error "))
            {
                return refuse(format!(
                    "no wait its runner kept read an error ({})",
                    reads.join(", ")
                ));
            }
        }
        METHOD_NOT_FOUND_NOT_CREDITED => {
            let stdio = match request.and_then(|r| last_wait_for(transcript, r)) {
                Some(read) => Some(read == "error -32601"),
                None => wait_readings(transcript).map(|r| r.contains(&"error -32601")),
            };
            if let Some(false) = stdio.or_else(|| code_seen(-32601)) {
                return refuse("the record holds no -32601 answer to its request".into());
            }
        }
        VALID_TWIN_REFUSED if role != "positive" => {
            if let Some(twin) = observation.pointer("/twin/id")
                && twin_accepted(transcript, twin) == Some(true)
            {
                return refuse(format!(
                    "its stored transcript holds an accepting result for the valid twin {twin}"
                ));
            }
        }
        // A control or mutant credited with its refusal whose request its
        // runner's last wait read no answer: over stdio silence is a refusal
        // only where it is the control's (`SILENCE_REFUSES`), or where the
        // lines gathered while waiting hold a null-id error or the syntax
        // guard.
        reason
            if role != "positive"
                && o.observed == ProbeOutcome::Reject
                && reason == o.expected_reason
                && !SILENCE_REFUSES.contains(&(id, role))
                && request
                    .and_then(|req| last_wait_for(transcript, req))
                    .is_some_and(|read| read == "no answer")
                && gathered(transcript)
                    .is_some_and(|g| g.null_id_errors == 0 && g.parse_errors == 0) =>
        {
            return refuse(format!(
                "the last wait its runner kept for the request {} read no answer, and no line gathered while waiting is a null-id error or the syntax guard",
                request.map(Value::to_string).unwrap_or_default()
            ));
        }
        reason => {
            // A control or mutant said served is one whose request got a
            // result: the last wait kept for it (stdio) read one, or the
            // stored received bytes (Streamable HTTP) hold one for its id.
            let served = reason.ends_with("_ACCEPTED")
                || reason.ends_with("_SERVED")
                || reason.ends_with("_EXECUTED")
                || reason == crate::diag::reasons::CONVERSATION_ASSUMED
                || reason == crate::diag::reasons::EARLIER_VERSION_CARRIED_OVER
                || reason == crate::diag::reasons::UNSUPPORTED_VERSION_ECHOED;
            // An HTTP mutant's request is the one sent with the syntax
            // defect.
            let defect = (role == "mutant" && request.is_none())
                .then(|| super::http::defect_connection(transcript).map(|(_, id)| id))
                .flatten();
            if role != "positive"
                && o.observed == ProbeOutcome::Accept
                && served
                && let Some(req) = request.or(defect.as_ref())
            {
                // A batch answered as an array is served without a
                // response of the request's own.
                let batch = reason == crate::diag::reasons::BATCH_ACCEPTED
                    && gathered(transcript).is_some_and(|g| g.batch_results > 0);
                if let Some(read) = last_wait_for(transcript, req)
                    && read != "result"
                    && !batch
                {
                    return refuse(format!(
                        "its stored bytes hold no accepting result for the request {req}: the last wait its runner kept for it read {read}"
                    ));
                }
                // A request whose id no kept wait can name (an object, as
                // the invalid-id-type control sends): its stored stdout must
                // hold a result with that id.
                if transcript.get("replies").is_some()
                    && last_wait_for(transcript, req).is_none()
                    && !batch
                    && let Some(stdout) = super::stdio::stdout_bytes(transcript)
                    && !super::stdio::messages(&stdout)
                        .iter()
                        .any(|m| m.get("id") == Some(req) && m.get("result").is_some())
                {
                    return refuse(format!(
                        "its stored stdout holds no accepting result for the request {req}"
                    ));
                }
                if transcript.get("replies").is_none()
                    && let Some(messages) = &http_messages
                    && answer_to(messages, req).is_none_or(|m| m.get("result").is_none())
                {
                    return refuse(format!(
                        "its stored received bytes hold no accepting result for the request {req}"
                    ));
                }
            }
            // An HTTP control sent with a null id (recorded as
            // `requestId: null`) said served: a result with a null id must
            // be among the stored received responses.
            if role != "positive"
                && o.observed == ProbeOutcome::Accept
                && served
                && transcript.get("replies").is_none()
                && observation.get("requestId") == Some(&Value::Null)
                && let Some(messages) = &http_messages
                && !messages.iter().any(|m| {
                    m.get("id") == Some(&Value::Null)
                        && m.get("method").is_none()
                        && m.get("result").is_some()
                })
            {
                return refuse(
                    "its stored received bytes hold no accepting result for its request, sent with a null id"
                        .into(),
                );
            }
            if let Some(n) = reason
                .strip_prefix("MCP_RES_JSONRPC_ERROR_")
                .and_then(|n| n.parse::<i64>().ok())
                && code_seen(-n) == Some(false)
                // (A refusal-table control's answer is read from its own
                // connection, below.)
                && (role == "positive" || super::http::refusal_of(id).is_none())
            {
                return refuse(format!(
                    "no answer in its stored received bytes carries the error code -{n}"
                ));
            }
            // A control (or mutant) met otherwise than with an acceptance
            // after its valid twin was not served is the twin refusal.
            if role != "positive"
                && o.observed != ProbeOutcome::Accept
                && let Some(twin) = observation.pointer("/twin/id")
                && twin_accepted(transcript, twin) == Some(false)
            {
                return Some((
                    Observation {
                        observed: ProbeOutcome::NotObserved,
                        observed_reason: VALID_TWIN_REFUSED.into(),
                        ..o.clone()
                    },
                    format!(
                        "check {id}: its {role}.json says {}, but its stored bytes hold no accepting result for the valid twin request {twin}, so the control's reading cannot be bound to the property",
                        o.observed_reason
                    ),
                ));
            }
        }
    }
    None
}

/// Was the request `twin` (a valid twin, or a control) accepted (answered
/// with a result that is not `isError: true`), by the stored stdout of a
/// stdio transcript or the stored received bytes of an HTTP one? `None` when
/// those bytes are not all stored.
fn twin_accepted(transcript: &Value, twin: &Value) -> Option<bool> {
    // Over stdio the runner decided on the answer its wait read: one that
    // came after the wait was over was not what it saw.
    if let Some(read) = super::stdio::last_wait_for(transcript, twin)
        && read != "result"
    {
        return Some(false);
    }
    let messages = match super::http::messages(transcript) {
        Some(m) => m,
        None => super::stdio::messages(&super::stdio::stdout_bytes(transcript)?),
    };
    Some(answer_to(&messages, twin).is_some_and(|m| {
        m.get("result")
            .is_some_and(|r| r.get("isError") != Some(&Value::Bool(true)))
    }))
}

/// Did the subject answer (with a result or an error) any request the
/// transcript shows sent (stdin, or the request bodies of its
/// connections)? `None` when the bytes are not all stored or no request
/// with an id was sent.
fn any_request_answered(transcript: &Value) -> Option<bool> {
    let (sent, got) = if transcript.get("connections").is_some() {
        (
            super::http::sent_messages(transcript)?,
            super::http::messages(transcript)?,
        )
    } else {
        (
            super::stdio::messages(&super::stdio::stream_bytes(transcript, "stdin")?),
            super::stdio::messages(&super::stdio::stdout_bytes(transcript)?),
        )
    };
    let ids: Vec<&Value> = sent
        .iter()
        .filter(|m| m.get("method").is_some())
        .filter_map(|m| m.get("id"))
        .filter(|id| !id.is_null())
        .collect();
    if ids.is_empty() {
        return None;
    }
    Some(got.iter().any(|a| {
        a.get("method").is_none()
            && (a.get("result").is_some() || a.get("error").is_some())
            && a.get("id").is_some_and(|id| ids.contains(&id))
    }))
}

/// Does the stored transcript show a `server/discover` request (stdin)
/// answered -32601 (stdout)?
fn revision_refused(transcript: &Value) -> bool {
    // A Streamable HTTP transcript records connections, a stdio one chunks.
    if transcript.get("connections").is_some() {
        return http_revision_refused(transcript);
    }
    let Some(stdout) = super::stdio::stdout_bytes(transcript) else {
        return false;
    };
    let mut stdin = Vec::new();
    for c in transcript["chunks"].as_array().into_iter().flatten() {
        if c["stream"] == "stdin"
            && let Some(text) = c["text"].as_str()
        {
            stdin.extend_from_slice(text.as_bytes());
        }
    }
    let answers = super::stdio::messages(&stdout);
    super::stdio::messages(&stdin)
        .iter()
        .filter(|m| m["method"] == "server/discover")
        .filter_map(|m| m.get("id"))
        .any(|id| {
            answer_to(&answers, id)
                .and_then(|m| m.pointer("/error/code"))
                .and_then(Value::as_i64)
                == Some(-32601)
        })
}

/// The Streamable HTTP form of [`revision_refused`]: on one connection of
/// the stored transcript, a request that sent `server/discover` and an
/// answer that carries a JSON-RPC error -32601 (the connection's raw bytes,
/// as stored: the response may be a JSON body or an event stream).
fn http_revision_refused(transcript: &Value) -> bool {
    let mut streams: std::collections::BTreeMap<(u64, String), String> = Default::default();
    for e in transcript["events"].as_array().into_iter().flatten() {
        let (Some(conn), Some(dir), Some(text)) = (
            e["connection"].as_u64(),
            e["stream"].as_str(),
            e["text"].as_str(),
        ) else {
            continue;
        };
        streams
            .entry((conn, dir.to_string()))
            .or_default()
            .push_str(text);
    }
    let squeeze = |s: &str| s.split_whitespace().collect::<String>();
    streams.iter().any(|((conn, dir), sent)| {
        dir == "sent"
            && squeeze(sent).contains(r#""method":"server/discover""#)
            && streams
                .get(&(*conn, "received".to_string()))
                .is_some_and(|got| squeeze(got).contains(r#""code":-32601"#))
    })
}

/// The response to request `id` among `messages`.
fn answer_to<'a>(messages: &'a [Value], id: &Value) -> Option<&'a Value> {
    messages
        .iter()
        .find(|m| m.get("id") == Some(id) && m.get("method").is_none())
}

/// Killed: the mutant's input was not credited with the negative control's
/// reason, or the subject met it otherwise than the control (an answer, an
/// error code, silence and a close are different observations: a control
/// refused with -32602 and a mutant left unanswered were not met alike,
/// even where a classifier reads both as a refusal). `None` without a
/// mutant or a negative control.
pub fn mutant_killed(mutant: Option<&Observation>, negative: Option<&Observation>) -> Option<bool> {
    let (m, n) = (mutant?, negative?);
    let met_alike = match (&m.answer, &n.answer) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    let credited = (m.reached || m.observed_reason == n.expected_reason) && met_alike;
    Some(!credited)
}

/// A check's verdict, its reason code and detail, and whether its mutant was
/// killed.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckVerdict {
    pub verdict: Verdict,
    pub reason: String,
    pub detail: String,
    pub mutant_killed: Option<bool>,
}

/// The verdict of a check from its observations. `not_observed` is why the
/// check could not be exercised (then it has no observation; the reason is
/// not stored in any artifact, so a re-judged check without observations
/// gets `None` and an empty detail).
pub fn check_verdict(
    positive: Option<&Observation>,
    negative: Option<&Observation>,
    mutant: Option<&Observation>,
    not_observed: Option<&str>,
) -> CheckVerdict {
    let killed = mutant_killed(mutant, negative);
    let verdict = |verdict, reason: &str, detail: String| CheckVerdict {
        verdict,
        reason: reason.to_owned(),
        detail,
        mutant_killed: killed,
    };
    if not_observed.is_some() || (positive.is_none() && negative.is_none() && mutant.is_none()) {
        return verdict(
            Verdict::NotObserved,
            CHECK_NOT_OBSERVED,
            not_observed.unwrap_or_default().to_owned(),
        );
    }
    // An observation too slow to decide leaves the check not observed.
    for (role, o) in [("positive", positive), ("negative control", negative)] {
        if let Some(o) = o.filter(|o| o.observed_reason == TOO_SLOW_TO_DECIDE) {
            return verdict(
                Verdict::NotObserved,
                TOO_SLOW_TO_DECIDE,
                format!("{role}: {}", o.detail),
            );
        }
    }
    // A check is evaluated on both observations: with one missing it is not
    // observed (the other's reading named in the detail), never a verdict
    // the evaluation could not record.
    for (role, o, other) in [
        ("positive", positive, negative),
        ("negative control", negative, positive),
    ] {
        if o.is_none() {
            let seen = other.map_or(String::new(), |o| {
                format!(
                    " (the other observed {} ({}): {})",
                    o.observed, o.observed_reason, o.detail
                )
            });
            return verdict(
                Verdict::NotObserved,
                NO_ANSWER,
                format!("no {role} observation{seen}"),
            );
        }
    }
    let undecided = |o: &Observation| {
        o.observed == ProbeOutcome::NotObserved && UNDECIDED.contains(&o.observed_reason.as_str())
    };
    // A broken observation fails the check even when the other one could not
    // be decided: each stands on its own requirement, so a property left
    // open on one side never hides a failure the record shows on the other.
    for (role, o) in [("positive", positive), ("negative control", negative)] {
        let Some(o) = o else {
            continue;
        };
        if !undecided(o) && !o.held() {
            return verdict(
                Verdict::Fail,
                &o.observed_reason,
                format!(
                    "{role}: expected {} ({}), observed {} ({}): {}",
                    o.expected, o.expected_reason, o.observed, o.observed_reason, o.detail
                ),
            );
        }
    }
    for (role, o) in [("positive", positive), ("negative control", negative)] {
        let Some(o) = o else {
            continue;
        };
        // The record shows the property could not be decided (a valid twin
        // refused too, -32601 for a version refusal, a behaviour the
        // specification leaves open): never a FAIL.
        if undecided(o) {
            return verdict(
                Verdict::NotObserved,
                &o.observed_reason,
                format!("{role}: {}", o.detail),
            );
        }
        if !o.held() {
            return verdict(
                Verdict::Fail,
                &o.observed_reason,
                format!(
                    "{role}: expected {} ({}), observed {} ({}): {}",
                    o.expected, o.expected_reason, o.observed, o.observed_reason, o.detail
                ),
            );
        }
    }
    match killed {
        Some(true) => {
            let p = positive.expect("checked above");
            verdict(Verdict::Pass, &p.expected_reason, p.detail.clone())
        }
        // The subject met the syntax-defective input exactly as it met the
        // control, so the control's reason cannot be bound to the property:
        // the check was not observed (never a PASS).
        Some(false) => verdict(
            Verdict::NotObserved,
            MUTANT_SURVIVED,
            format!(
                "the wrong-reason mutant ({}) was met exactly as the negative control was, so the control's reason cannot be bound to the property: {}",
                if mutant.is_some_and(|m| m.expected_reason == MUTANT_REQUEST_ANSWERED) {
                    "a request that must be answered"
                } else {
                    "a syntax-defective input"
                },
                mutant.map_or("", |m| m.detail.as_str())
            ),
        ),
        None => verdict(
            Verdict::NotObserved,
            NO_ANSWER,
            "no wrong-reason mutant observation".into(),
        ),
    }
}

/// `s` cut to at most `max` bytes at a character boundary (`unknown` when
/// empty), as run.json and evaluation.json keep free text.
pub fn truncate(s: &str, max: usize) -> String {
    let s = if s.is_empty() { "unknown" } else { s };
    let mut out = String::new();
    for c in s.chars() {
        if out.len() + c.len_utf8() > max {
            break;
        }
        out.push(c);
    }
    out
}

/// The run's result: FAIL when a check failed or cleanup was not observed,
/// else INCOMPLETE when a check was not observed, else PASS.
pub fn run_result(verdicts: &[Verdict], cleanup_observed: bool) -> &'static str {
    if verdicts.contains(&Verdict::Fail) || !cleanup_observed {
        "FAIL"
    } else if verdicts.contains(&Verdict::NotObserved) {
        "INCOMPLETE"
    } else {
        "PASS"
    }
}

/// The evaluation's result: FAIL when a check failed, else PASS (the checks
/// not observed are not claimed).
pub fn evaluation_result(verdicts: &[Verdict]) -> &'static str {
    if verdicts.contains(&Verdict::Fail) {
        "FAIL"
    } else {
        "PASS"
    }
}

/// The claim over `claimed` checks: FULL_PROFILE when they are exactly the
/// `applicable` ones (sorted), else BOUNDED_CHECK_SET.
pub fn claim(claimed: &[&str], applicable: &[String]) -> &'static str {
    let mut sorted: Vec<&str> = claimed.to_vec();
    sorted.sort_by(|a, b| canonical::cmp_utf16(a, b));
    if sorted
        .iter()
        .copied()
        .eq(applicable.iter().map(String::as_str))
    {
        "FULL_PROFILE"
    } else {
        "BOUNDED_CHECK_SET"
    }
}

/// Cleanup observed: no probe left a process of its tree behind and nothing
/// adopted was left after the run (`artifacts/cleanup.json`).
pub fn cleanup_observed(left_by_probes: &[Value], adopted_after_run: &[Value]) -> bool {
    left_by_probes.is_empty() && adopted_after_run.is_empty()
}

/// The cleanup artifact's lists as stored, or why they are not readable:
/// observed when no probe left a process behind, nothing adopted was left
/// after the run, and no adopted orphan descending from no probe's subject
/// was found meanwhile (`adoptedUnattributed`, absent in older records).
pub fn cleanup_from(doc: &Value) -> Result<bool, String> {
    let unattributed = doc
        .get("adoptedUnattributed")
        .map_or(Some(&[][..]), |v| v.as_array().map(Vec::as_slice));
    match (
        doc["probesThatLeftProcesses"].as_array(),
        doc["adoptedAfterRun"].as_array(),
        unattributed,
    ) {
        (Some(left), Some(adopted), Some(strangers)) => {
            // Files left in a probe's sandbox (recorded since the sandbox;
            // an older record without the list observed no files).
            let files = doc
                .get("probesThatLeftFiles")
                .map_or(Some(&[][..]), |v| v.as_array().map(Vec::as_slice))
                .ok_or("its probesThatLeftFiles is not a list")?;
            Ok(cleanup_observed(left, adopted) && strangers.is_empty() && files.is_empty())
        }
        _ => Err("it has no probesThatLeftProcesses and adoptedAfterRun lists".into()),
    }
}

/// What the stored transcripts say was left behind, read from each artifact's end
/// record (`transcript.end.leftBehindProcesses`): every process not excused, as
/// `path: pid (command)`. A process a control left on purpose (the operational
/// `cleanup` check's orphan) is excused only when `cleanup`'s `injectedByControls` names
/// its pid and it is found in that check's negative control; a pid `injectedByControls`
/// names that no such control left is a disagreement of its own (the second list).
pub fn residue_in_artifacts(
    stored: &BTreeMap<String, Result<Value, String>>,
    cleanup: &Value,
) -> (Vec<String>, Vec<Disagreement>) {
    /// The controls that leave a process behind on purpose.
    const INJECTING: [&str; 2] = [
        "artifacts/cleanup/negative.json",
        "artifacts/process-crash/negative.json",
    ];
    let named: std::collections::BTreeSet<u64> = cleanup["injectedByControls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str()?.split(' ').next()?.parse().ok())
        .collect();
    let mut found_injected = std::collections::BTreeSet::new();
    let mut residue = Vec::new();
    for (path, doc) in stored {
        let Ok(doc) = doc else { continue };
        if !path.starts_with("artifacts/") {
            continue;
        }
        // A probe's own end record, and that of a restart it stored (process-crash) or
        // of a baseline (the storage checks).
        let ends = [
            "/transcript/end/leftBehindProcesses",
            "/transcript/observation/ops/restart/transcript/end/leftBehindProcesses",
            "/transcript/observation/ops/baseline/transcript/end/leftBehindProcesses",
        ];
        for (n, pointer) in ends.iter().enumerate() {
            let left = doc.pointer(pointer).and_then(Value::as_array);
            for p in left.into_iter().flatten() {
                let pid = p["pid"].as_u64();
                if n == 0
                    && INJECTING.contains(&path.as_str())
                    && let Some(pid) = pid.filter(|pid| named.contains(pid))
                {
                    found_injected.insert(pid);
                    continue;
                }
                residue.push(format!(
                    "{path}: {} ({})",
                    p["pid"],
                    p["command"].as_str().unwrap_or("?")
                ));
            }
        }
    }
    residue.sort();
    residue.dedup();
    let stray: Vec<u64> = named.difference(&found_injected).copied().collect();
    let mut out = Vec::new();
    if !stray.is_empty() {
        out.push(Disagreement {
            file: CLEANUP_PATH.into(),
            pointer: "/injectedByControls".into(),
            recorded: cleanup["injectedByControls"].clone(),
            judged: json!(stray),
            why: format!(
                "{CLEANUP_PATH} names as injected by a control process(es) {stray:?} that no control's stored end record ({}) left behind",
                    INJECTING.join(", ")
            ),
        });
    }
    (residue, out)
}

/// The stored path of the identity record: the subject's digest at the
/// run's start, before and after every check, and at the end.
pub const IDENTITY_PATH: &str = "artifacts/identity.json";
/// The run-level reason of a subject whose identity changed during the run.
pub const SUBJECT_CHANGED: &str = "MCP_RES_SUBJECT_CHANGED";

/// Did the subject's identity change during the run: does any digest of
/// the record differ from its baseline? Or why the record is unreadable.
pub fn identity_changed(doc: &Value) -> Result<bool, String> {
    let baseline = doc
        .get("baselineSha256")
        .ok_or("it has no baselineSha256")?;
    let checks = doc["checks"].as_array().ok_or("it has no checks list")?;
    let mut digests = vec![doc.get("endSha256").ok_or("it has no endSha256")?];
    for c in checks {
        for k in ["before", "after"] {
            digests.push(c.get(k).ok_or_else(|| format!("a check has no {k}"))?);
        }
    }
    Ok(digests.iter().any(|d| *d != baseline))
}

/// What run.json says about the subject's identity.
pub fn identity_summary(changed: bool) -> Value {
    json!({
        "changed": changed,
        "reason": changed.then_some(SUBJECT_CHANGED),
        "record": IDENTITY_PATH,
    })
}

/// The run's result once the identity is known: FAIL when it changed.
pub fn run_result_with_identity(result: &'static str, changed: bool) -> &'static str {
    if changed { "FAIL" } else { result }
}

/// The stored path of a check's artifact in `role`.
pub fn artifact_path(id: &str, role: &str) -> String {
    format!("artifacts/{id}/{role}.json")
}

/// The stored path of the cleanup artifact.
pub const CLEANUP_PATH: &str = "artifacts/cleanup.json";

/// The stored path of the transcript of the subject a check started (its
/// output, its end), where the check stores one.
pub fn server_path(id: &str) -> String {
    artifact_path(id, "server")
}

/// Whether the judge reads the stored artifact at `path` (a check's
/// observation, the subject it started, or the cleanup).
pub fn reads(path: &str) -> bool {
    path == CLEANUP_PATH
        || path == IDENTITY_PATH
        || path == super::ops::WORKLOAD_PATH
        || path == super::ops::MEASUREMENT_PATH
        || path.strip_prefix("artifacts/").is_some_and(|rest| {
            rest.split_once('/').is_some_and(|(check, file)| {
                !check.is_empty()
                    && ROLES
                        .iter()
                        .chain(&["server"])
                        .any(|r| file.strip_suffix(".json") == Some(*r))
            })
        })
}

/// A stored artifact as the judge gets it: parsed, or why it could not be.
pub type Stored = Result<Value, String>;

/// A profile evaluation directory judged from its artifacts.
#[derive(Debug, Clone)]
pub struct Judged {
    /// evaluation.json with every field the judge derives replaced by what
    /// it derives (its `evaluationSha256` is left as recorded).
    pub evaluation: Value,
    /// run.json likewise.
    pub run: Value,
    /// The recorded fields the judge does not give, and the checks it could
    /// not judge.
    pub disagreements: Vec<Disagreement>,
}

/// Judge the directory whose evaluation.json is `evaluation`, whose run.json
/// is `run`, and whose listed artifacts are `stored` (path -> document, for
/// every path [`reads`] accepts) with their digests `digests` (path ->
/// sha256 as listed). `applicable` is the profile's applicable check ids at
/// the evaluated revision and `required` its required ones (`None` when the
/// profile is not registered: the claim and kinds are then not judged).
pub fn judge_dir(
    evaluation: &Value,
    run: &Value,
    stored: &BTreeMap<String, Stored>,
    digests: &BTreeMap<String, String>,
    profile: Option<(&[String], &[String])>,
) -> Judged {
    let mut judged_run = run.clone();
    let mut judged_eval = evaluation.clone();
    let mut out: Vec<Disagreement> = Vec::new();
    let run_checks = run["checks"].as_array().cloned().unwrap_or_default();
    let profile_id = evaluation["profile"]["id"].as_str().unwrap_or_default();
    let revision = evaluation["profile"]["protocolRevision"]
        .as_str()
        .unwrap_or_default();
    let mut verdicts = Vec::new();
    let mut evaluated: Vec<Value> = Vec::new();
    let mut claimed: Vec<String> = Vec::new();
    let mut complete = true;
    if profile_id == super::ops::PROFILE {
        let ids: Vec<&str> = run_checks.iter().filter_map(|c| c["id"].as_str()).collect();
        out.extend(super::ops::binding(stored, &ids));
    }
    for (i, check) in run_checks.iter().enumerate() {
        let id = check["id"].as_str().unwrap_or_default();
        let mut obs: [Option<Observation>; 3] = [None, None, None];
        let mut unjudged = None;
        for (k, role) in ROLES.iter().enumerate() {
            let path = artifact_path(id, role);
            match stored.get(&path) {
                None => {}
                Some(Err(why)) => unjudged = Some(format!("{path}: {why}")),
                Some(Ok(doc)) => match Observation::from_artifact(doc, id, role) {
                    Ok(mut o) => {
                        // What the positive and the control expect is the check's
                        // declaration at this revision, not what the file says.
                        let declared = super::vocabulary::expected(profile_id, id, revision);
                        if let Some((held, refused)) = declared
                            && *role != "mutant"
                        {
                            let want = if *role == "positive" { held } else { refused };
                            if o.expected_reason != want {
                                differ(
                                    &mut out,
                                    &path,
                                    "/expectedReasonCode".into(),
                                    &json!(o.expected_reason),
                                    json!(want),
                                    format!(
                                        "check {id}: its {role} expects {want} at {revision} (the check's declaration)"
                                    ),
                                );
                                o.expected_reason = want.into();
                            }
                        }
                        let held = match (declared, stored.get(&artifact_path(id, "positive"))) {
                            (Some((held, _)), _) => Some(held),
                            (None, Some(Ok(p))) => p["expectedReasonCode"].as_str(),
                            _ => None,
                        };
                        let found = rederive(id, role, &o, &doc["transcript"])
                            .or_else(|| {
                                conversation_control_reread(
                                    id,
                                    role,
                                    &o,
                                    &doc["transcript"],
                                    revision,
                                )
                            })
                            .or_else(|| server_signal_reread(id, role, k, &o, stored))
                            // Whether it exited first, then whether its
                            // listener outlived the signal.
                            .or_else(|| {
                                (id == "listener-cleanup" && *role != "positive")
                                    .then(|| listening_probe_reread(role, &o, &doc["transcript"]))
                                    .flatten()
                            })
                            .or_else(|| {
                                (id == "listener-cleanup" && *role == "positive")
                                    .then(|| bound_addresses_reread(&o, &doc["transcript"]))
                                    .flatten()
                            })
                            .or_else(|| served_reread(id, role, &o, &doc["transcript"], held))
                            .or_else(|| vocabulary_reread(profile_id, id, role, &o));
                        obs[k] = Some(match found {
                            Some((judged, why)) => {
                                // The same reason with another outcome (an
                                // answer read as a result, not an error) is
                                // told at the outcome.
                                let pointer = if judged.observed_reason == o.observed_reason {
                                    differ(
                                        &mut out,
                                        &path,
                                        "/observedOutcome".into(),
                                        &json!(o.observed),
                                        json!(judged.observed),
                                        why,
                                    );
                                    None
                                } else {
                                    Some(why)
                                };
                                if let Some(why) = pointer {
                                    differ(
                                        &mut out,
                                        &path,
                                        "/observedReasonCode".into(),
                                        &json!(o.observed_reason),
                                        json!(judged.observed_reason),
                                        why,
                                    );
                                }
                                judged
                            }
                            None => o,
                        })
                    }
                    Err(why) => unjudged = Some(format!("{path}: {why}")),
                },
            }
        }
        // What the stored bytes show beside the recorded labels.
        for (k, role) in ROLES.iter().enumerate() {
            let (Some(o), Some(Ok(doc))) = (&obs[k], stored.get(&artifact_path(id, role))) else {
                continue;
            };
            let file = artifact_path(id, role);
            if o.observed_reason == SYNTAX_GUARD
                && let Some(bytes) = match super::stdio::syntax_guard_seen(&doc["transcript"]) {
                    Some(false) => Some(
                        "its stdout transcript holds no -32700 error and no response with a null id",
                    ),
                    Some(true) => None,
                    // Over Streamable HTTP the guard is a -32700 answer on a
                    // connection (the runner's `parse_error`).
                    None => super::http::messages(&doc["transcript"])
                        .filter(|ms| {
                            !ms.iter().any(|m| {
                                m.pointer("/error/code").and_then(Value::as_i64) == Some(-32700)
                            })
                        })
                        .map(|_| "no response its connections received holds a -32700 error"),
                }
            {
                out.push(Disagreement {
                    file: file.clone(),
                    pointer: "/observedReasonCode".into(),
                    recorded: json!(o.observed_reason),
                    judged: Value::Null,
                    why: format!("check {id}: {bytes}, so the syntax guard did not fire"),
                });
            }
            // A mutant that must be answered: its answer (or the silence
            // that meets the control's reason) is read from its stored stdout.
            if *role == "mutant"
                && o.expected_reason == MUTANT_REQUEST_ANSWERED
                && let Some(request) = doc.pointer("/transcript/observation/requestId")
                && let Some(stdout) = super::stdio::stdout_bytes(&doc["transcript"])
                && (o.observed_reason == MUTANT_REQUEST_ANSWERED
                    || obs[1]
                        .as_ref()
                        .is_some_and(|n| o.observed_reason == n.expected_reason))
            {
                let messages = super::stdio::messages(&stdout);
                let answered = answer_to(&messages, request).is_some();
                if answered != (o.observed_reason == MUTANT_REQUEST_ANSWERED) {
                    out.push(Disagreement {
                        file: file.clone(),
                        pointer: "/observedReasonCode".into(),
                        recorded: json!(o.observed_reason),
                        judged: if answered {
                            json!(MUTANT_REQUEST_ANSWERED)
                        } else {
                            Value::Null
                        },
                        why: format!(
                            "check {id}: its stored stdout {} the mutant's request {request}",
                            if answered {
                                "answers"
                            } else {
                                "does not answer"
                            }
                        ),
                    });
                }
            }
            // A mutant reached the property exactly when the subject met it
            // with the negative control's reason.
            if *role == "mutant"
                && let Some(n) = &obs[1]
            {
                let reached = o.observed_reason == n.expected_reason;
                differ(
                    &mut out,
                    &file,
                    "/propertyReached".into(),
                    &json!(o.reached),
                    json!(reached),
                    format!(
                        "check {id}: a mutant reaches the property when its observed reason is the negative control's expected reason"
                    ),
                );
            }
        }
        if let Some(why) = unjudged {
            complete = false;
            out.push(Disagreement {
                file: "run.json".into(),
                pointer: format!("/checks/{i}"),
                recorded: check["verdict"].clone(),
                judged: Value::Null,
                why: format!("check {id} cannot be judged from its artifacts: {why}"),
            });
            continue;
        }
        let [p, n, m] = &obs;
        let v = check_verdict(p.as_ref(), n.as_ref(), m.as_ref(), None);
        verdicts.push(v.verdict);
        let at = |field: &str| format!("/checks/{i}/{field}");
        let why = |what: &str| format!("check {id}: {what}");
        let judged_check = &mut judged_run["checks"][i];
        let mut set = |field: &str, value: Value, what: String| {
            differ(
                &mut out,
                "run.json",
                at(field),
                &check[field],
                value.clone(),
                what,
            );
            judged_check[field] = value;
        };
        set(
            "verdict",
            json!(v.verdict.as_str()),
            why(&verdict_why(&v, p.as_ref(), n.as_ref())),
        );
        set("reason", json!(v.reason), why("the verdict's reason"));
        if v.verdict != Verdict::NotObserved || v.reason != CHECK_NOT_OBSERVED {
            // The reason a check could not be exercised is not stored in any
            // artifact; every other detail is.
            set(
                "detail",
                json!(truncate(&v.detail, DETAIL_MAX)),
                why("the verdict's detail"),
            );
        }
        set(
            "mutantKilled",
            json!(v.mutant_killed),
            why(
                "killed when the mutant was not credited with the negative control's expected reason",
            ),
        );
        for (k, role) in ROLES.iter().enumerate() {
            let path = obs[k].as_ref().map(|_| artifact_path(id, role));
            set(role, json!(path), why("the stored artifact of that role"));
        }
        if let Some((_, required)) = profile {
            let kind = if required.iter().any(|r| r == id) {
                "REQUIRED"
            } else {
                "CONDITIONAL"
            };
            set("kind", json!(kind), why("the profile's kind of the check"));
        }
        if v.verdict != Verdict::NotObserved {
            let sha = |role: &str| {
                digests
                    .get(&artifact_path(id, role))
                    .cloned()
                    .unwrap_or_default()
            };
            let record = |o: &Option<Observation>, role: &str| {
                o.as_ref().map_or(Value::Null, |o| o.record(&sha(role)))
            };
            evaluated.push(json!({
                "id": id,
                "positive": record(p, "positive"),
                "negativeControl": record(n, "negative"),
            }));
            claimed.push(id.to_owned());
        }
    }
    let cleanup = match stored.get(CLEANUP_PATH) {
        Some(Ok(doc)) => match cleanup_from(doc) {
            Ok(listed) => {
                let (residue, excused) = residue_in_artifacts(stored, doc);
                out.extend(excused);
                let observed = listed && residue.is_empty();
                if listed && !residue.is_empty() {
                    out.push(Disagreement {
                        file: CLEANUP_PATH.into(),
                        pointer: "/probesThatLeftProcesses".into(),
                        recorded: doc["probesThatLeftProcesses"].clone(),
                        judged: json!(residue),
                        why: format!(
                            "stored transcripts record processes left behind that {CLEANUP_PATH} does not list: {}",
                            residue.join("; ")
                        ),
                    });
                }
                differ(
                &mut out,
                    CLEANUP_PATH,
                    "/observed".into(),
                    &doc["observed"],
                    json!(observed),
                    "observed when no probe left a process behind and nothing adopted was left after the run".into(),
                );
                Some(observed)
            }
            Err(why) => {
                out.push(cannot(CLEANUP_PATH, why));
                None
            }
        },
        Some(Err(why)) => {
            out.push(cannot(CLEANUP_PATH, why.clone()));
            None
        }
        None => {
            out.push(cannot(CLEANUP_PATH, "it is not stored".into()));
            None
        }
    };
    // The identity record (absent in older records: unchanged).
    let identity = match stored.get(IDENTITY_PATH) {
        None => Some(false),
        Some(Ok(doc)) => match identity_changed(doc) {
            Ok(changed) => {
                differ(
                    &mut out,
                    IDENTITY_PATH,
                    "/changed".into(),
                    &doc["changed"],
                    json!(changed),
                    "changed when a digest of the record differs from its baseline".into(),
                );
                if run.get("identity").is_some() {
                    differ(
                        &mut out,
                        "run.json",
                        "/identity".into(),
                        &run["identity"],
                        identity_summary(changed),
                        format!("as {IDENTITY_PATH} gives it"),
                    );
                }
                judged_run["identity"] = identity_summary(changed);
                Some(changed)
            }
            Err(why) => {
                out.push(cannot(IDENTITY_PATH, why));
                None
            }
        },
        Some(Err(why)) => {
            out.push(cannot(IDENTITY_PATH, why.clone()));
            None
        }
    };
    // The results and the evaluation's checks need every check judged.
    if complete
        && let Some(cleanup) = cleanup
        && let Some(identity_changed) = identity
    {
        let result = run_result_with_identity(run_result(&verdicts, cleanup), identity_changed);
        differ(
                &mut out,
            "run.json",
            "/result".into(),
            &run["result"],
            json!(result),
            "FAIL when a check fails, cleanup was not observed or the subject's identity changed, else INCOMPLETE when one was not observed, else PASS".into(),
        );
        judged_run["result"] = json!(result);
        // evaluation.json: the observed checks in run order, their
        // observations, the claim, the cleanup and the result.
        let recorded_checks = evaluation["checks"].as_array().cloned().unwrap_or_default();
        let ids: Vec<Value> = recorded_checks.iter().map(|c| c["id"].clone()).collect();
        let judged_ids: Vec<Value> = claimed.iter().map(|c| json!(c)).collect();
        if ids != judged_ids {
            differ(
                &mut out,
                "evaluation.json",
                "/checks".into(),
                &json!(ids),
                json!(judged_ids),
                "the evaluated checks are those not judged NOT_OBSERVED, in run order".into(),
            );
        } else {
            for (i, (rec, jud)) in recorded_checks.iter().zip(&evaluated).enumerate() {
                for branch in ["positive", "negativeControl"] {
                    for (field, value) in jud[branch].as_object().into_iter().flatten() {
                        differ(
                            &mut out,
                            "evaluation.json",
                            format!("/checks/{i}/{branch}/{field}"),
                            &rec[branch][field],
                            value.clone(),
                            format!(
                                "check {}: as its stored artifact records it",
                                jud["id"].as_str().unwrap_or_default()
                            ),
                        );
                    }
                }
            }
        }
        judged_eval["checks"] = json!(evaluated);
        let claimed_refs: Vec<&str> = claimed.iter().map(String::as_str).collect();
        differ(
            &mut out,
            "evaluation.json",
            "/scope/claimedCheckIds".into(),
            &evaluation["scope"]["claimedCheckIds"],
            json!(claimed_refs),
            "the checks not judged NOT_OBSERVED".into(),
        );
        judged_eval["scope"]["claimedCheckIds"] = json!(claimed_refs);
        if let Some((applicable, _)) = profile {
            let c = claim(&claimed_refs, applicable);
            differ(
                &mut out,
                "evaluation.json",
                "/scope/claim".into(),
                &evaluation["scope"]["claim"],
                json!(c),
                "FULL_PROFILE only when the claimed checks are every applicable check".into(),
            );
            judged_eval["scope"]["claim"] = json!(c);
        }
        differ(
            &mut out,
            "evaluation.json",
            "/cleanup/observed".into(),
            &evaluation["cleanup"]["observed"],
            json!(cleanup),
            format!("as {CLEANUP_PATH} gives it"),
        );
        judged_eval["cleanup"]["observed"] = json!(cleanup);
        let result = evaluation_result(&verdicts);
        differ(
            &mut out,
            "evaluation.json",
            "/result".into(),
            &evaluation["result"],
            json!(result),
            "FAIL when a claimed check fails, else PASS".into(),
        );
        judged_eval["result"] = json!(result);
    }
    Judged {
        evaluation: judged_eval,
        run: judged_run,
        disagreements: out,
    }
}

/// Record a disagreement when `recorded` is not `judged`.
fn differ(
    out: &mut Vec<Disagreement>,
    file: &str,
    pointer: String,
    recorded: &Value,
    judged: Value,
    why: String,
) {
    if *recorded != judged {
        out.push(Disagreement {
            file: file.to_owned(),
            pointer,
            recorded: recorded.clone(),
            judged,
            why,
        });
    }
}

fn cannot(path: &str, why: String) -> Disagreement {
    Disagreement {
        file: path.to_owned(),
        pointer: String::new(),
        recorded: Value::Null,
        judged: Value::Null,
        why: format!("{path} cannot be judged: {why}"),
    }
}

/// Why a check got its verdict, in a few words.
fn verdict_why(v: &CheckVerdict, p: Option<&Observation>, n: Option<&Observation>) -> String {
    match (v.verdict, v.reason.as_str()) {
        (Verdict::NotObserved, CHECK_NOT_OBSERVED) => "no observation of it is stored".into(),
        (Verdict::NotObserved, r) if UNDECIDED.contains(&r) => format!(
            "its {}.json records {r}: the record shows the property could not be decided",
            if p.is_some_and(|p| p.observed_reason == r) {
                "positive"
            } else {
                "negative"
            }
        ),
        (Verdict::NotObserved, NO_ANSWER) => "an observation it needs is not stored".into(),
        (Verdict::NotObserved, TOO_SLOW_TO_DECIDE) => {
            "an observation records that no window within the operator's bounds could decide it".into()
        }
        (Verdict::NotObserved, _) => {
            "its mutant.json shows the mutant met with the negative control's reason".into()
        }
        (Verdict::Pass, _) => {
            "both observations held as stored and the mutant was not credited with the control's reason"
                .into()
        }
        (Verdict::Fail, _) => match (p, n) {
            (Some(p), _) if !p.held() => format!(
                "its positive.json records {} ({}) where {} ({}) was expected",
                p.observed, p.observed_reason, p.expected, p.expected_reason
            ),
            (_, Some(n)) if !n.held() => format!(
                "its negative.json records {} ({}) where {} ({}) was expected",
                n.observed, n.observed_reason, n.expected, n.expected_reason
            ),
            _ => "an observation is missing".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listener_cleanup_positive_is_read_from_its_bound_addresses() {
        use crate::diag::reasons as r;
        let o = |outcome, reason: &str| Observation {
            expected: ProbeOutcome::Accept,
            expected_reason: r::HTTP_LISTENER_LOOPBACK_ONLY.into(),
            observed: outcome,
            observed_reason: reason.into(),
            reached: true,
            detail: String::new(),
            answer: None,
        };
        let on = |bound: Value| json!({"observation": {"boundAddresses": bound}});
        let held = o(ProbeOutcome::Accept, r::HTTP_LISTENER_LOOPBACK_ONLY);
        let open = o(ProbeOutcome::NotObserved, r::BEHAVIOUR_LEFT_OPEN);
        // As recorded: nothing to say.
        assert!(bound_addresses_reread(&held, &on(json!(["127.0.0.1", "::1"]))).is_none());
        assert!(bound_addresses_reread(&open, &on(json!(["::"]))).is_none());
        assert!(bound_addresses_reread(&open, &on(json!([]))).is_none());
        // Every interface said loopback only, and loopback said left open.
        let (judged, why) = bound_addresses_reread(&held, &on(json!(["::"]))).unwrap();
        assert_eq!(judged.observed_reason, r::BEHAVIOUR_LEFT_OPEN);
        assert_eq!(judged.observed, ProbeOutcome::NotObserved);
        assert!(why.contains("[\"::\"]"), "{why}");
        let (judged, _) = bound_addresses_reread(&open, &on(json!(["::ffff:127.0.0.1"]))).unwrap();
        assert_eq!(judged.observed_reason, r::HTTP_LISTENER_LOOPBACK_ONLY);
        // Another label, or no stored addresses: not read here.
        let other = o(ProbeOutcome::NoEffect, r::NO_ANSWER);
        assert!(bound_addresses_reread(&other, &on(json!(["::"]))).is_none());
        assert!(bound_addresses_reread(&held, &json!({"observation": {}})).is_none());
    }

    fn o(held: bool, reason: &str) -> Observation {
        Observation {
            expected: ProbeOutcome::Reject,
            expected_reason: "R".into(),
            observed: ProbeOutcome::Reject,
            observed_reason: if held { "R".into() } else { reason.into() },
            reached: true,
            detail: String::new(),
            answer: None,
        }
    }

    fn mutant(reason: &str) -> Observation {
        Observation {
            expected: ProbeOutcome::Reject,
            expected_reason: "MCP_RES_SYNTAX_GUARD".into(),
            observed: ProbeOutcome::Reject,
            observed_reason: reason.into(),
            reached: reason == "R",
            detail: String::new(),
            answer: None,
        }
    }

    #[test]
    fn a_check_passes_only_with_both_observations_and_a_killed_mutant() {
        let (p, n) = (o(true, ""), o(true, ""));
        let v =
            |m: Option<&Observation>, n: Option<&Observation>| check_verdict(Some(&p), n, m, None);
        let killed = mutant("MCP_RES_SYNTAX_GUARD");
        assert_eq!(v(Some(&killed), Some(&n)).verdict, Verdict::Pass);
        assert_eq!(v(Some(&killed), Some(&n)).mutant_killed, Some(true));
        let survived = mutant("R");
        assert_eq!(v(Some(&survived), Some(&n)).verdict, Verdict::NotObserved);
        assert_eq!(v(Some(&survived), Some(&n)).reason, MUTANT_SURVIVED);
        assert_eq!(v(None, Some(&n)).verdict, Verdict::NotObserved);
        let other = o(false, "OTHER");
        assert_eq!(v(Some(&killed), Some(&other)).reason, "OTHER");
        assert!(
            v(Some(&killed), None)
                .detail
                .starts_with("no negative control observation"),
        );
        // A positive that did not hold beside a missing control: not
        // observed (the evaluation records checks with both only).
        let failed = o(false, "OTHER");
        let lone = check_verdict(Some(&failed), None, None, None);
        assert_eq!(lone.verdict, Verdict::NotObserved);
        assert!(lone.detail.contains("OTHER"), "{}", lone.detail);
        assert_eq!(v(Some(&killed), None).verdict, Verdict::NotObserved);
        assert_eq!(
            check_verdict(None, None, None, None).verdict,
            Verdict::NotObserved
        );
    }

    #[test]
    fn a_side_left_open_never_hides_a_failure_on_the_other() {
        let open = Observation {
            observed: ProbeOutcome::NotObserved,
            observed_reason: BEHAVIOUR_LEFT_OPEN.into(),
            ..o(true, "")
        };
        let broken = o(false, "BROKEN");
        let killed = mutant("MCP_RES_SYNTAX_GUARD");
        for (p, n) in [(&open, &broken), (&broken, &open)] {
            let v = check_verdict(Some(p), Some(n), Some(&killed), None);
            assert_eq!((v.verdict, v.reason.as_str()), (Verdict::Fail, "BROKEN"));
        }
        // With the other side held, the open side leaves the check open.
        let held = o(true, "");
        for (p, n) in [(&open, &held), (&held, &open)] {
            let v = check_verdict(Some(p), Some(n), Some(&killed), None);
            assert_eq!(
                (v.verdict, v.reason.as_str()),
                (Verdict::NotObserved, BEHAVIOUR_LEFT_OPEN)
            );
        }
    }

    #[test]
    fn an_answer_met_otherwise_than_the_control_kills_the_mutant() {
        let (p, mut n) = (o(true, ""), o(true, ""));
        let mut m = mutant("R");
        // Both read as the refusal, met alike: survived.
        n.answer = Some("error -32602".into());
        m.answer = Some("error -32602".into());
        assert_eq!(mutant_killed(Some(&m), Some(&n)), Some(false));
        // An error code and silence are different observations: killed.
        m.answer = Some("no answer".into());
        assert_eq!(mutant_killed(Some(&m), Some(&n)), Some(true));
        assert_eq!(
            check_verdict(Some(&p), Some(&n), Some(&m), None).verdict,
            Verdict::Pass
        );
        // Unrecorded answers: the reasons alone decide.
        m.answer = None;
        assert_eq!(mutant_killed(Some(&m), Some(&n)), Some(false));
    }

    fn stdout(lines: &[Value]) -> Value {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        json!({"chunks": [{"stream": "stdout", "text": text}]})
    }

    #[test]
    fn a_control_whose_valid_twin_was_refused_is_not_credited() {
        let n = o(true, "");
        let mut t = stdout(&[
            json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": true}}),
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "x"}}),
        ]);
        t["observation"] = json!({"twin": {"id": 1}, "requestId": 2});
        let (judged, _) = rederive("json-schema-dialect-identity", "negative", &n, &t)
            .expect("the twin's isError is read from the bytes");
        assert_eq!(judged.observed_reason, VALID_TWIN_REFUSED);
        let v = check_verdict(Some(&o(true, "")), Some(&judged), Some(&mutant("X")), None);
        assert_eq!(v.verdict, Verdict::NotObserved);
        assert_eq!(v.reason, VALID_TWIN_REFUSED);
        // The twin served: credited as recorded.
        t["chunks"] = stdout(&[
            json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": false}}),
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "x"}}),
        ])["chunks"]
            .clone();
        assert!(rederive("json-schema-dialect-identity", "negative", &n, &t).is_none());
    }

    /// A stdio transcript whose stdout is `lines`, with the waits `replies`
    /// (each decided on all of stdout) and the exchange's `observation`.
    fn waited(lines: &[Value], replies: &[(i64, &str)], observation: Value) -> Value {
        let mut t = stdout(lines);
        let seen = t["chunks"][0]["text"].as_str().unwrap().len();
        t["stdoutDroppedBytes"] = json!(0);
        t["replies"] = replies
            .iter()
            .map(|(id, r)| json!({"id": id, "reply": r, "seenBytes": seen}))
            .collect();
        t["observation"] = observation;
        t
    }

    fn labelled(outcome: ProbeOutcome, reason: &str) -> Observation {
        Observation {
            observed: outcome,
            observed_reason: reason.into(),
            ..o(true, "")
        }
    }

    #[test]
    fn silence_is_read_against_the_requests_last_wait_and_the_lines_gathered() {
        let result = |id: i64| json!({"jsonrpc": "2.0", "id": id, "result": {}});
        let silent = labelled(ProbeOutcome::NoEffect, NO_ANSWER);
        // The control answered at its last wait: not silence.
        let t = waited(
            &[result(2)],
            &[(2, "no answer"), (2, "result")],
            json!({"requestId": 2}),
        );
        let (judged, why) = rederive("partial-line", "negative", &silent, &t).unwrap();
        assert_eq!(judged.observed_reason, LABEL_NOT_IN_RECORD, "{why}");
        // Unanswered, the subject still serving, a parse error gathered: the
        // syntax guard fired, which is not silence.
        let guard =
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "p"}});
        let t = waited(
            &[guard, result(3)],
            &[(3, "result"), (2, "no answer")],
            json!({"requestId": 2, "liveId": 3, "stdoutLines": [0, 2], "parseErrors": 1}),
        );
        assert!(rederive("oversized-line", "mutant", &silent, &t).is_some());
        // Unanswered with nothing gathered: silence stands, except where
        // silence while serving is the control's refusal.
        let t = waited(
            &[result(3)],
            &[(3, "result"), (2, "no answer")],
            json!({"requestId": 2, "liveId": 3, "stdoutLines": [0, 1], "parseErrors": 0}),
        );
        assert!(rederive("stdout-protocol-purity", "negative", &silent, &t).is_none());
        assert!(rederive("oversized-line", "mutant", &silent, &t).is_some());
    }

    #[test]
    fn wrong_errors_and_protocol_on_stderr_are_read_from_the_record() {
        let error = |id: i64, code: i64| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "m"}});
        let result = |id: i64| json!({"jsonrpc": "2.0", "id": id, "result": {}});
        // Refused with the wrong error: an error, not -32700 and not the
        // property's own -32022.
        let wrong = labelled(
            ProbeOutcome::Reject,
            crate::diag::reasons::UNSUPPORTED_VERSION_WRONG_ERROR,
        );
        for (reply, label, refused) in [
            (error(2, -32602), "error -32602", false),
            (error(2, -32022), "error -32022", true),
            (result(2), "result", true),
        ] {
            let t = waited(&[reply], &[(2, label)], json!({"requestId": 2}));
            assert_eq!(
                rederive("unsupported-version-failure", "negative", &wrong, &t).is_some(),
                refused,
                "{label}"
            );
        }
        // The same for a version named after opening, where -32601 is not
        // credited either.
        let wrong = labelled(
            ProbeOutcome::Reject,
            crate::diag::reasons::VERSION_REFUSED_WRONG_ERROR,
        );
        for (reply, label, refused) in [
            (error(2, -32602), "error -32602", false),
            (error(2, -32601), "error -32601", true),
            (result(2), "result", true),
        ] {
            let t = waited(&[reply], &[(2, label)], json!({"requestId": 2}));
            assert_eq!(
                rederive("no-connection-as-conversation", "negative", &wrong, &t).is_some(),
                refused,
                "{label}"
            );
        }
        // An earlier version carried over is a request served.
        let carried = labelled(
            ProbeOutcome::Accept,
            crate::diag::reasons::EARLIER_VERSION_CARRIED_OVER,
        );
        let t = waited(
            &[error(2, -32022)],
            &[(2, "error -32022")],
            json!({"requestId": 2}),
        );
        assert!(rederive("no-connection-as-conversation", "negative", &carried, &t).is_some());
        // Protocol on stderr needs a JSON-RPC line among the stored stderr.
        let on_stderr = labelled(
            ProbeOutcome::Accept,
            crate::diag::reasons::STDERR_CARRIES_PROTOCOL,
        );
        let mut t = waited(&[result(2)], &[(2, "result")], json!({}));
        let chunks = t["chunks"].as_array_mut().unwrap();
        chunks.push(json!({"atMs": 1, "stream": "stderr", "bytes": 12, "text": "starting up\n"}));
        assert!(rederive("stderr-diagnostics", "positive", &on_stderr, &t).is_some());
        t["chunks"].as_array_mut().unwrap().push(json!({
            "atMs": 2, "stream": "stderr", "bytes": 0,
            "text": "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n",
        }));
        assert!(rederive("stderr-diagnostics", "positive", &on_stderr, &t).is_none());
    }

    #[test]
    fn an_error_label_needs_that_error_and_a_served_label_its_result() {
        let error = |id: i64, code: i64| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "m"}});
        let result = |id: i64| json!({"jsonrpc": "2.0", "id": id, "result": {}});
        // A positive whose every wait read a result was not refused.
        let refused = labelled(ProbeOutcome::Reject, crate::diag::reasons::REQUEST_REFUSED);
        let t = waited(
            &[result(1), result(2)],
            &[(1, "result"), (2, "result")],
            json!({}),
        );
        assert!(rederive("explicit-protocol-revision", "positive", &refused, &t).is_some());
        let t = waited(
            &[result(1), error(2, -32602)],
            &[(1, "result"), (2, "error -32602")],
            json!({}),
        );
        assert!(rederive("explicit-protocol-revision", "positive", &refused, &t).is_none());
        // -32601 is credited as not credited only where it was the answer.
        let uncredited = labelled(ProbeOutcome::NotObserved, METHOD_NOT_FOUND_NOT_CREDITED);
        let t = waited(
            &[error(2, -32022)],
            &[(2, "error -32022")],
            json!({"requestId": 2}),
        );
        assert!(rederive("unsupported-version-failure", "negative", &uncredited, &t).is_some());
        let t = waited(
            &[error(2, -32601)],
            &[(2, "error -32601")],
            json!({"requestId": 2}),
        );
        assert!(rederive("unsupported-version-failure", "negative", &uncredited, &t).is_none());
        // A control said served whose request was refused.
        let served = labelled(
            ProbeOutcome::Accept,
            crate::diag::reasons::SCHEMA_VIOLATION_ACCEPTED,
        );
        let t = waited(
            &[error(2, -32602)],
            &[(2, "error -32602")],
            json!({"requestId": 2}),
        );
        assert!(rederive("json-schema-dialect-identity", "negative", &served, &t).is_some());
        let t = waited(&[result(2)], &[(2, "result")], json!({"requestId": 2}));
        assert!(rederive("json-schema-dialect-identity", "negative", &served, &t).is_none());
        // Over HTTP a JSON-RPC error code named in the label is stored.
        let coded = labelled(ProbeOutcome::Reject, "MCP_RES_JSONRPC_ERROR_32600");
        let t = http(&[(400, error(2, -32602))]);
        assert!(rederive("keepalive", "negative", &coded, &t).is_some());
        let t = http(&[(400, error(2, -32600))]);
        assert!(rederive("keepalive", "negative", &coded, &t).is_none());
    }

    #[test]
    fn an_opening_label_needs_an_observation_of_the_opening_alone() {
        let failed = labelled(ProbeOutcome::NotObserved, OPEN_FAILED);
        let result = json!({"jsonrpc": "2.0", "id": 2, "result": {}});
        let t = waited(
            &[result],
            &[(2, "result")],
            json!({"requestId": 2, "reply": "result"}),
        );
        assert!(rederive("oversized-line", "positive", &failed, &t).is_some());
        let open = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n";
        let t = json!({
            "chunks": [{"stream": "stdin", "text": open}],
            "observation": {"open": "no answer"},
        });
        let found = rederive("oversized-line", "positive", &failed, &t);
        assert!(found.is_none(), "{found:?}");
    }

    #[test]
    fn a_mutant_whose_twin_was_served_is_not_a_twin_refusal_and_one_unserved_is_nothing_else() {
        let twin = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        let control =
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "p"}});
        let observation = json!({"twin": {"id": 1}, "requestId": 2});
        let refused_twin = labelled(ProbeOutcome::NotObserved, VALID_TWIN_REFUSED);
        let t = waited(
            &[twin, control.clone()],
            &[(1, "result"), (2, "no answer")],
            observation.clone(),
        );
        assert!(rederive("json-schema-dialect-identity", "mutant", &refused_twin, &t).is_some());
        // The twin's wait read nothing (its answer came too late): the
        // mutant's guard cannot be bound to the property.
        let guard = labelled(ProbeOutcome::Reject, SYNTAX_GUARD);
        let t = waited(
            &[control],
            &[(1, "no answer"), (2, "no answer")],
            observation,
        );
        let (judged, _) = rederive("json-schema-dialect-identity", "mutant", &guard, &t).unwrap();
        assert_eq!(judged.observed_reason, VALID_TWIN_REFUSED);
        assert!(rederive("json-schema-dialect-identity", "mutant", &refused_twin, &t).is_none());
    }

    /// [`waited`] with `stdin` sent (one line per message).
    fn sent_and_waited(
        stdin: &[Value],
        lines: &[Value],
        replies: &[(i64, &str)],
        observation: Value,
    ) -> Value {
        let mut t = waited(lines, replies, observation);
        let text: String = stdin.iter().map(|l| format!("{l}\n")).collect();
        t["chunks"]
            .as_array_mut()
            .unwrap()
            .insert(0, json!({"stream": "stdin", "text": text}));
        t
    }

    fn positive(
        expected: ProbeOutcome,
        held: &str,
        observed: ProbeOutcome,
        reason: &str,
    ) -> Observation {
        Observation {
            expected,
            expected_reason: held.into(),
            ..labelled(observed, reason)
        }
    }

    #[test]
    fn stdio_positives_are_read_from_the_waits_their_runners_kept() {
        use crate::diag::reasons as r;
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}});
        let opened =
            json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}});
        // startup-timeout: an opening answered in time is no timeout, and
        // one never answered is no refusal.
        let timeout = positive(
            ProbeOutcome::Accept,
            r::STARTUP_WITHIN_BOUND,
            ProbeOutcome::Terminate,
            r::STARTUP_TIMEOUT,
        );
        let t = sent_and_waited(
            std::slice::from_ref(&init),
            std::slice::from_ref(&opened),
            &[(1, "result")],
            json!({"open": "result"}),
        );
        let (judged, why) = rederive("startup-timeout", "positive", &timeout, &t).unwrap();
        assert_eq!(judged.observed_reason, r::STARTUP_WITHIN_BOUND, "{why}");
        let t = sent_and_waited(
            std::slice::from_ref(&init),
            &[],
            &[(1, "no answer")],
            json!({"open": "no answer"}),
        );
        assert!(rederive("startup-timeout", "positive", &timeout, &t).is_none());
        let refused = positive(
            ProbeOutcome::Accept,
            r::STARTUP_WITHIN_BOUND,
            ProbeOutcome::Reject,
            OPEN_REFUSED,
        );
        assert!(rederive("startup-timeout", "positive", &refused, &t).is_some());
        // concurrent-requests: one of five unanswered is a request lost.
        let list = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
        let result = |id: i64| json!({"jsonrpc": "2.0", "id": id, "result": {}});
        let held = positive(
            ProbeOutcome::Accept,
            r::CONCURRENT_ANSWERED_BY_ID,
            ProbeOutcome::Accept,
            r::CONCURRENT_ANSWERED_BY_ID,
        );
        let stdin: Vec<Value> = std::iter::once(init.clone())
            .chain((2..7).map(list))
            .collect();
        let mut replies = vec![
            (1, "result"),
            (2, "result"),
            (3, "result"),
            (4, "no answer"),
        ];
        replies.extend([(5, "result"), (6, "result")]);
        let out: Vec<Value> = [opened.clone(), result(2), result(3), result(5), result(6)].into();
        let t = sent_and_waited(&stdin, &out, &replies, json!({}));
        let (judged, _) = rederive("concurrent-requests", "positive", &held, &t).unwrap();
        assert_eq!(judged.observed_reason, r::CONCURRENT_REQUEST_LOST);
        // request-identity-metadata: the integer id unanswered while the
        // string id was is not an id echoed.
        let echoed = positive(
            ProbeOutcome::Accept,
            r::REQUEST_ID_ECHOED,
            ProbeOutcome::Accept,
            r::REQUEST_ID_ECHOED,
        );
        let t = sent_and_waited(
            &[init.clone(), list(8), list(2)],
            &[opened.clone(), result(8)],
            &[(1, "result"), (8, "result"), (2, "no answer")],
            json!({}),
        );
        let (judged, _) = rederive("request-identity-metadata", "positive", &echoed, &t).unwrap();
        assert_eq!(judged.observed_reason, NO_ANSWER);
        // process-exit: an exit after stdin closed holds; the runner's
        // marker first is no exit.
        let runs = positive(
            ProbeOutcome::Terminate,
            r::EXIT_ON_STDIN_CLOSE,
            ProbeOutcome::NoEffect,
            r::RUNS_AFTER_STDIN_CLOSE,
        );
        let mut t = sent_and_waited(
            &[init],
            &[opened],
            &[(1, "result")],
            json!({"status": "exit 0"}),
        );
        t["events"] = json!([{"atMs": 5, "event": "stdin-closed"}, {"atMs": 9, "event": "exited", "status": "exit 0"}]);
        let (judged, _) = rederive("process-exit", "positive", &runs, &t).unwrap();
        assert_eq!(judged.observed_reason, r::EXIT_ON_STDIN_CLOSE);
        t["events"] = json!([
            {"atMs": 5, "event": "stdin-closed"},
            {"atMs": 5005, "event": crate::judge::stdio::NO_EXIT_AFTER_STDIN_CLOSE},
            {"atMs": 5100, "event": "exited", "status": "signal 15"},
        ]);
        assert!(rederive("process-exit", "positive", &runs, &t).is_none());
    }

    #[test]
    fn a_bogus_version_control_is_read_from_its_answer() {
        use crate::diag::reasons as r;
        let control = json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "1999-01-01"}});
        let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
        let listed = json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "m", "data": {"supported": ["2025-11-25"]}}});
        let pong = json!({"jsonrpc": "2.0", "id": 3, "result": {}});
        let not_listed = labelled(ProbeOutcome::Reject, r::SUPPORTED_VERSIONS_NOT_ADVERTISED);
        // The control answered `answer`, the liveness request after it.
        let judged = |answer: Value, wait: &str| {
            let t = sent_and_waited(
                &[control.clone(), ping.clone()],
                &[answer, pong.clone()],
                &[(2, wait), (3, "result")],
                json!({"requestId": 2, "liveId": 3}),
            );
            rederive(
                "supported-version-advertisement",
                "negative",
                &not_listed,
                &t,
            )
            .unwrap()
            .0
        };
        let listed = judged(listed, "error -32602");
        assert_eq!(listed.observed_reason, r::SUPPORTED_VERSION_ADVERTISED);
        // Echoed back, the version was served.
        let echoed =
            json!({"jsonrpc": "2.0", "id": 2, "result": {"protocolVersion": "1999-01-01"}});
        let echoed = judged(echoed, "result");
        assert_eq!(echoed.observed_reason, r::UNSUPPORTED_VERSION_ECHOED);
        assert_eq!(echoed.observed, ProbeOutcome::Accept);
    }

    #[test]
    fn a_long_line_control_is_read_from_its_waits_and_the_lines_gathered() {
        use crate::diag::reasons as r;
        let pong = json!({"jsonrpc": "2.0", "id": 3, "result": {}});
        let refusal =
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "too long"}});
        let observation = json!({"requestId": 2, "liveId": 3, "stdoutLines": [0, 2]});
        let dropped = labelled(ProbeOutcome::Reject, r::OVERSIZED_LINE_DROPPED_SILENTLY);
        // A null-id refusal gathered: bounded, not dropped silently.
        let t = waited(
            &[refusal, pong.clone()],
            &[(3, "result"), (2, "no answer")],
            observation.clone(),
        );
        let (judged, why) = rederive("oversized-line", "negative", &dropped, &t).unwrap();
        assert_eq!(judged.observed_reason, r::OVERSIZED_LINE_BOUNDED, "{why}");
        // Nothing gathered: dropped silently it was.
        let observation = json!({"requestId": 2, "liveId": 3, "stdoutLines": [0, 1]});
        let t = waited(&[pong], &[(3, "result"), (2, "no answer")], observation);
        assert!(rederive("oversized-line", "negative", &dropped, &t).is_none());
        // A death after the runner's own ending act is not the subject's
        // crash.
        let crashed = labelled(ProbeOutcome::Terminate, r::OVERSIZED_LINE_CRASHED);
        let mut ended = t.clone();
        ended["end"] = json!({"endedBy": {"mcpres": "stdin closed", "atMs": 10}});
        ended["events"] = json!([
            {"atMs": 10, "event": "stdin-closed"},
            {"atMs": 20, "event": "exited", "status": "signal 15"},
        ]);
        assert!(rederive("oversized-line", "negative", &crashed, &ended).is_some());
        let bounded = labelled(ProbeOutcome::Reject, r::OVERSIZED_LINE_BOUNDED);
        let (judged, _) = rederive("oversized-line", "negative", &bounded, &t).unwrap();
        assert_eq!(judged.observed_reason, r::OVERSIZED_LINE_DROPPED_SILENTLY);
    }

    /// One HTTP connection per answer: `(status, body)`.
    fn http(answers: &[(u16, Value)]) -> Value {
        let events: Vec<Value> = answers
            .iter()
            .enumerate()
            .map(|(k, (status, body))| {
                let body = body.to_string();
                json!({"connection": k + 1, "stream": "received", "text": format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )})
            })
            .collect();
        json!({"connections": [], "events": events})
    }

    #[test]
    fn http_positives_are_read_from_the_first_response_on_their_connection() {
        use crate::diag::reasons as r;
        // A notification answered 200 with a body: the wrong status.
        let note = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{}}";
        let request = format!(
            "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{note}",
            note.len()
        );
        let t = |response: &str| {
            json!({"connections": [], "events": [
                {"connection": 1, "stream": "sent", "text": request},
                {"connection": 1, "stream": "received", "text": response},
            ]})
        };
        let held = positive(
            ProbeOutcome::Accept,
            r::HTTP_NOTIFICATION_202,
            ProbeOutcome::Accept,
            r::HTTP_NOTIFICATION_202,
        );
        let wrong = t("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
        let (judged, why) = rederive("status-code-consistency", "positive", &held, &wrong).unwrap();
        assert_eq!(
            judged.observed_reason,
            r::HTTP_NOTIFICATION_STATUS_WRONG,
            "{why}"
        );
        let right = t("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
        assert!(rederive("status-code-consistency", "positive", &held, &right).is_none());
    }

    #[test]
    fn a_conversation_not_opened_for_want_of_an_answer_is_never_a_fail() {
        // Silence or a close to the opening (a healthy subject on a loaded
        // machine looks so) and an end mcpres caused: not observed.
        for reason in [OPEN_FAILED, ENDED_BY_RUNNER] {
            let n = Observation {
                observed: ProbeOutcome::NotObserved,
                observed_reason: reason.into(),
                reached: false,
                ..o(true, "")
            };
            let v = check_verdict(Some(&o(true, "")), Some(&n), Some(&mutant("X")), None);
            assert_eq!(
                (v.verdict, v.reason.as_str()),
                (Verdict::NotObserved, reason)
            );
        }
        // The opening answered with an error: the subject's own refusal.
        let n = Observation {
            observed: ProbeOutcome::NotObserved,
            observed_reason: OPEN_REFUSED.into(),
            reached: false,
            ..o(true, "")
        };
        let v = check_verdict(Some(&o(true, "")), Some(&n), Some(&mutant("X")), None);
        assert_eq!(
            (v.verdict, v.reason.as_str()),
            (Verdict::Fail, OPEN_REFUSED)
        );
    }

    #[test]
    fn an_opening_the_bytes_show_refused_is_not_left_unanswered() {
        let failed = Observation {
            observed: ProbeOutcome::NotObserved,
            observed_reason: OPEN_FAILED.into(),
            reached: false,
            ..o(true, "")
        };
        let line = |v: Value| json!({"stream": "stdin", "text": format!("{v}\n")});
        let out = |v: Value| json!({"stream": "stdout", "text": format!("{v}\n")});
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"});
        let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"});
        let err =
            |code: i64| json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "x"}});
        // Refused with an error: relabelled, and the check fails.
        let t = json!({"chunks": [line(init.clone()), out(err(-32603))]});
        let (judged, why) = rederive("silent-process", "negative", &failed, &t).expect("refused");
        assert_eq!(judged.observed_reason, OPEN_REFUSED, "{why}");
        let v = check_verdict(Some(&o(true, "")), Some(&judged), Some(&mutant("X")), None);
        assert_eq!(v.verdict, Verdict::Fail);
        // No answer at all, or -32601 to server/discover (a revision not
        // spoken, not a refusal): the label stands.
        let t = json!({"chunks": [line(init.clone())]});
        assert!(rederive("silent-process", "negative", &failed, &t).is_none());
        let t = json!({"chunks": [line(discover), out(err(-32601))]});
        assert!(rederive("silent-process", "negative", &failed, &t).is_none());
        // Answered under another id (a string for the number sent): an
        // answer, so a refusal of the opening, not silence.
        let stringified = json!({"jsonrpc": "2.0", "id": "1", "result": {}});
        let t = json!({"chunks": [line(init.clone()), out(stringified)]});
        let (judged, why) =
            rederive("silent-process", "negative", &failed, &t).expect("misanswered");
        assert_eq!(judged.observed_reason, OPEN_REFUSED, "{why}");
        assert!(why.contains("\"1\""), "{why}");
        // Opened with a result after all: not a refusal of the opening.
        let t =
            json!({"chunks": [line(init), out(json!({"jsonrpc": "2.0", "id": 1, "result": {}}))]});
        assert!(rederive("silent-process", "negative", &failed, &t).is_none());
    }

    #[test]
    fn a_positive_held_without_an_opening_in_the_bytes_is_not_held() {
        let p = Observation {
            expected: ProbeOutcome::Accept,
            observed: ProbeOutcome::Accept,
            ..o(true, "")
        };
        let line = |v: Value| json!({"stream": "stdin", "text": format!("{v}\n")});
        let out = |v: Value| json!({"stream": "stdout", "text": format!("{v}\n")});
        let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"});
        let initialize = json!({"jsonrpc": "2.0", "id": 2, "method": "initialize"});
        let refused = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}});
        let opened = json!({"jsonrpc": "2.0", "id": 2, "result": {}});
        // Only the era probe, refused: never opened.
        let t = json!({"chunks": [line(discover.clone()), out(refused.clone())]});
        let (judged, why) = rederive("silent-process", "positive", &p, &t).expect("not opened");
        assert_eq!(judged.observed_reason, LABEL_NOT_IN_RECORD, "{why}");
        let v = check_verdict(Some(&judged), Some(&o(true, "")), Some(&mutant("X")), None);
        assert_eq!(v.verdict, Verdict::Fail);
        // The fallback `initialize` answered with a result: opened.
        let t = json!({"chunks": [line(discover), out(refused), line(initialize), out(opened)]});
        assert!(rederive("silent-process", "positive", &p, &t).is_none());
        // No opening request sent at all: no opening to read; the request
        // sent answered, nothing else to read either.
        let t = json!({"chunks": [
            line(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})),
            out(json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": []}})),
        ]});
        assert!(rederive("silent-process", "positive", &p, &t).is_none());
    }

    #[test]
    fn a_positive_accepted_with_no_request_answered_in_the_bytes_is_not_held() {
        let p = Observation {
            expected: ProbeOutcome::Accept,
            observed: ProbeOutcome::Accept,
            ..o(true, "")
        };
        let request = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
        let served = json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "x"}});
        let stranger = json!({"jsonrpc": "2.0", "id": 4, "result": {}});
        let stdio = |answer: &Value| {
            json!({"chunks": [
                {"stream": "stdin", "text": format!("{request}\n")},
                {"stream": "stdout", "text": format!("{answer}\n")},
            ]})
        };
        let web = |answer: &Value| {
            let body = request.to_string();
            let mut t = http(&[(200, answer.clone())]);
            t["events"].as_array_mut().unwrap().push(json!({
                "connection": 1, "stream": "sent", "text": format!(
                    "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )
            }));
            t
        };
        for t in [stdio(&stranger), web(&stranger)] {
            let (judged, why) =
                rederive("keepalive", "positive", &p, &t).expect("nothing sent was answered");
            assert_eq!(
                (judged.observed, judged.observed_reason.as_str()),
                (ProbeOutcome::NoEffect, LABEL_NOT_IN_RECORD),
                "{why}"
            );
        }
        // Answered (an error is an answer): the label stands.
        for t in [stdio(&served), web(&served)] {
            assert!(rederive("keepalive", "positive", &p, &t).is_none(), "{t}");
        }
    }

    #[test]
    fn a_control_credited_as_refused_but_served_in_the_bytes_is_accepted() {
        let n = Observation {
            expected: ProbeOutcome::Reject,
            ..o(true, "")
        };
        let twin = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        let served = json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}});
        let refused = json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "x"}});
        let tool_error = json!({"jsonrpc": "2.0", "id": 2, "result": {"isError": true}});
        let observation = json!({"twin": {"id": 1}, "requestId": 2});
        // stdio: the stored stdout; HTTP: the received bytes of each connection.
        type Form = fn(&Value, &Value) -> Value;
        let forms: [(&str, Form); 2] = [
            ("stdout", |a, b| stdout(&[a.clone(), b.clone()])),
            ("received bytes", |a, b| {
                http(&[(200, a.clone()), (200, b.clone())])
            }),
        ];
        for (bytes, form) in forms {
            let mut t = form(&twin, &served);
            t["observation"] = observation.clone();
            let (judged, why) = rederive("interrupted-body", "negative", &n, &t)
                .expect("the served control is read from the bytes");
            assert_eq!(
                (judged.observed, judged.observed_reason.as_str()),
                (ProbeOutcome::Accept, LABEL_NOT_IN_RECORD),
                "{why}"
            );
            assert!(why.contains(bytes), "{why}");
            let v = check_verdict(Some(&o(true, "")), Some(&judged), Some(&mutant("X")), None);
            assert_eq!(v.verdict, Verdict::Fail);
            // Refused with an error or an `isError` result: credited as labelled.
            for answer in [&refused, &tool_error] {
                let mut t = form(&twin, answer);
                t["observation"] = observation.clone();
                assert!(
                    rederive("interrupted-body", "negative", &n, &t).is_none(),
                    "{answer}"
                );
            }
        }
    }

    #[test]
    fn an_http_control_whose_valid_twin_was_refused_is_not_credited() {
        let n = o(true, "");
        let refusal =
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "x"}});
        let mut t = http(&[(400, refusal.clone()), (400, refusal.clone())]);
        t["observation"] = json!({"twin": {"id": 5}});
        let (judged, why) = rederive("interrupted-body", "negative", &n, &t)
            .expect("the twin's refusal is read from the connection bytes");
        assert_eq!(judged.observed_reason, VALID_TWIN_REFUSED, "{why}");
        // The twin served (a result for its id on its connection): credited.
        let mut t = http(&[
            (
                200,
                json!({"jsonrpc": "2.0", "id": 5, "result": {"tools": []}}),
            ),
            (415, refusal),
        ]);
        t["observation"] = json!({"twin": {"id": 5}});
        assert!(rederive("interrupted-body", "negative", &n, &t).is_none());
        // A label saying the twin was refused, where the bytes show it served,
        // is not what the record gives.
        let relabelled = Observation {
            observed: ProbeOutcome::NotObserved,
            observed_reason: VALID_TWIN_REFUSED.into(),
            ..n
        };
        let (judged, _) = rederive("interrupted-body", "negative", &relabelled, &t)
            .expect("a twin refusal the bytes do not show");
        assert_eq!(judged.observed_reason, LABEL_NOT_IN_RECORD);
        let v = check_verdict(Some(&o(true, "")), Some(&judged), Some(&mutant("X")), None);
        assert_eq!(v.verdict, Verdict::Fail);
    }

    #[test]
    fn a_control_credited_as_refused_but_served_in_the_bytes_is_not_credited() {
        let credited = o(true, "");
        assert_eq!(credited.expected, ProbeOutcome::Reject);
        let mut t = stdout(&[json!({"jsonrpc": "2.0", "id": 9, "result": {"tools": []}})]);
        t["observation"] = json!({"requestId": 9, "reply": "result"});
        let (judged, why) = rederive("extension-declaration", "negative", &credited, &t)
            .expect("a served control is no refusal");
        assert_eq!(judged.observed, ProbeOutcome::Accept, "{why}");
        assert_eq!(judged.observed_reason, LABEL_NOT_IN_RECORD);
        let v = check_verdict(Some(&o(true, "")), Some(&judged), Some(&mutant("X")), None);
        assert_eq!(v.verdict, Verdict::Fail);
        // Refused in the bytes (an error, or a result with isError): stands.
        let t2 = {
            let mut t = stdout(&[
                json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32601, "message": "x"}}),
            ]);
            t["observation"] = json!({"requestId": 9});
            t
        };
        assert!(rederive("extension-declaration", "negative", &credited, &t2).is_none());
        t["chunks"] =
            stdout(&[json!({"jsonrpc": "2.0", "id": 9, "result": {"isError": true}})])["chunks"]
                .clone();
        assert!(rederive("extension-declaration", "negative", &credited, &t).is_none());
    }

    #[test]
    fn a_torn_last_line_is_read_from_the_stored_stdout() {
        let held = o(true, "");
        let mut t = json!({"chunks": [
            {"stream": "stdout", "bytes": 3, "text": "{}\n"},
            {"stream": "stdout", "bytes": 9, "text": "{\"jsonrpc"},
            {"stream": "stderr", "bytes": 4, "text": "bye\n"}
        ]});
        t["observation"] = json!({"signal": "SIGINT", "tornLastLine": false});
        let (judged, _) = rederive("interruption", "negative", &held, &t)
            .expect("a torn line in the bytes is not a clean interruption");
        assert_eq!(
            judged.observed_reason,
            crate::diag::reasons::INTERRUPT_TORN_FRAME
        );
        // A whole last line: the torn label is not what the bytes give.
        t["chunks"][1]["text"] = json!("{}\n");
        assert!(rederive("interruption", "negative", &held, &t).is_none());
        let torn = Observation {
            observed_reason: crate::diag::reasons::INTERRUPT_TORN_FRAME.into(),
            ..held
        };
        let (judged, _) = rederive("interruption", "negative", &torn, &t)
            .expect("a torn label the bytes do not bear");
        assert_eq!(judged.observed_reason, LABEL_NOT_IN_RECORD);
        // An elided last chunk: nothing to read, the label stands.
        t["chunks"][1] = json!({"stream": "stdout", "bytes": 9, "elided": {"sha256": "00"}});
        assert!(rederive("interruption", "negative", &torn, &t).is_none());
    }

    #[test]
    fn method_not_found_is_never_a_version_refusal() {
        let n = o(true, "");
        let mut t = stdout(&[
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "x"}}),
        ]);
        t["observation"] = json!({"twin": {"id": 1}, "requestId": 2});
        let (judged, _) = rederive("modern-legacy-auto-behavior", "negative", &n, &t)
            .expect("-32601 is read from the bytes");
        assert_eq!(judged.observed_reason, METHOD_NOT_FOUND_NOT_CREDITED);
        // For a check whose control is no version refusal, -32601 stands.
        assert!(rederive("extension-declaration", "negative", &n, &t).is_none());
    }

    #[test]
    fn a_revision_not_spoken_is_credited_only_where_the_bytes_show_it() {
        let p = Observation {
            observed: ProbeOutcome::NotObserved,
            observed_reason: REVISION_NOT_SPOKEN.into(),
            reached: false,
            ..o(true, "")
        };
        let discover = r#"{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{}}"#;
        let mut t = stdout(&[
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "x"}}),
        ]);
        t["chunks"].as_array_mut().unwrap().insert(
            0,
            json!({"stream": "stdin", "text": format!("{discover}\n")}),
        );
        assert!(rederive("shell-free-argument-boundaries", "positive", &p, &t).is_none());
        let v = check_verdict(Some(&p), Some(&o(true, "")), Some(&mutant("X")), None);
        assert_eq!(
            (v.verdict, v.reason.as_str()),
            (Verdict::NotObserved, REVISION_NOT_SPOKEN)
        );
        // Another error to the opening, or -32601 to something else: the
        // label is not what the bytes show, and the check fails.
        let mut other = t.clone();
        other["chunks"][1] = stdout(&[
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": "x"}}),
        ])["chunks"][0]
            .clone();
        let (judged, _) = rederive("shell-free-argument-boundaries", "positive", &p, &other)
            .expect("no -32601 in the bytes");
        assert_eq!(judged.observed_reason, LABEL_NOT_IN_RECORD);
        let mut elsewhere = t.clone();
        elsewhere["chunks"][0]["text"] =
            json!("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}\n");
        assert!(rederive("shell-free-argument-boundaries", "positive", &p, &elsewhere).is_some());
    }

    #[test]
    fn the_content_type_positive_is_read_from_the_answers_media_type() {
        let request = r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}"#;
        let answer = r#"{"jsonrpc":"2.0","id":4,"result":{"tools":[]}}"#;
        let wire = |media: &str| {
            let answer = if media.starts_with("text/event-stream") {
                format!("data: {answer}\n\n")
            } else {
                answer.to_string()
            };
            json!({"connections": 1, "events": [
                {"connection": 1, "stream": "sent", "text": format!(
                    "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{request}",
                    request.len()
                )},
                {"connection": 1, "stream": "received", "text": format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {media}\r\nContent-Length: {}\r\n\r\n{answer}",
                    answer.len()
                )},
            ], "observation": {"requestId": 4}})
        };
        let held = Observation {
            expected: ProbeOutcome::Accept,
            observed: ProbeOutcome::Accept,
            expected_reason: crate::diag::reasons::HTTP_CONTENT_TYPE_DECLARED.into(),
            observed_reason: crate::diag::reasons::HTTP_CONTENT_TYPE_DECLARED.into(),
            ..o(true, "")
        };
        assert!(
            rederive(
                "content-type",
                "positive",
                &held,
                &wire("application/json; charset=utf-8")
            )
            .is_none()
        );
        assert!(
            rederive(
                "content-type",
                "positive",
                &held,
                &wire("text/event-stream")
            )
            .is_none()
        );
        let (judged, why) = rederive("content-type", "positive", &held, &wire("text/html"))
            .expect("another media type");
        assert_eq!(
            judged.observed_reason,
            crate::diag::reasons::HTTP_CONTENT_TYPE_MISSING,
            "{why}"
        );
        // And the other way: labelled missing, declared in the bytes.
        let missing = Observation {
            observed_reason: crate::diag::reasons::HTTP_CONTENT_TYPE_MISSING.into(),
            ..held.clone()
        };
        let (judged, _) = rederive(
            "content-type",
            "positive",
            &missing,
            &wire("application/json"),
        )
        .expect("declared");
        assert_eq!(
            judged.observed_reason,
            crate::diag::reasons::HTTP_CONTENT_TYPE_DECLARED
        );
    }

    #[test]
    fn the_json_versus_sse_positive_is_read_from_the_answers_media_type_and_frames() {
        let request = r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}"#;
        let wire = |media: &str, body: &str| {
            json!({"connections": 1, "events": [
                {"connection": 1, "stream": "sent", "text": format!(
                    "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{request}",
                    request.len()
                )},
                {"connection": 1, "stream": "received", "text": format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {media}\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )},
            ], "observation": {"requestId": 4}})
        };
        let held = Observation {
            expected: ProbeOutcome::Accept,
            observed: ProbeOutcome::Accept,
            expected_reason: crate::diag::reasons::HTTP_MEDIA_TYPE_MATCHES_BODY.into(),
            observed_reason: crate::diag::reasons::HTTP_MEDIA_TYPE_MATCHES_BODY.into(),
            ..o(true, "")
        };
        let answer = r#"{"jsonrpc":"2.0","id":4,"result":{"tools":[]}}"#;
        let id = "json-versus-sse-response";
        // A priming event (an id, empty data) is no frame.
        let primed = format!("id: 0\ndata: \n\ndata: {answer}\n\n");
        assert!(rederive(id, "positive", &held, &wire("text/event-stream", &primed)).is_none());
        assert!(rederive(id, "positive", &held, &wire("application/json", answer)).is_none());
        // An event that is not JSON beside the answer: a mismatch.
        let noisy = format!("data: not json\n\ndata: {answer}\n\n");
        let (judged, why) = rederive(id, "positive", &held, &wire("text/event-stream", &noisy))
            .expect("a frame that is not JSON");
        assert_eq!(
            judged.observed_reason,
            crate::diag::reasons::HTTP_MEDIA_TYPE_MISMATCH,
            "{why}"
        );
    }

    #[test]
    fn a_revision_not_spoken_over_http_is_read_from_the_connection_bytes() {
        let p = Observation {
            observed: ProbeOutcome::NotObserved,
            observed_reason: REVISION_NOT_SPOKEN.into(),
            reached: false,
            ..o(true, "")
        };
        let ev = |conn: u64, dir: &str, text: &str| json!({"connection": conn, "stream": dir, "text": text});
        let sent = "POST /mcp HTTP/1.1\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"server/discover\"}";
        let got = "HTTP/1.1 200 OK\r\n\r\n{\"jsonrpc\": \"2.0\", \"id\": 3, \"error\": {\"code\": -32601}}";
        let t = json!({"connections": 1, "events": [ev(0, "sent", sent), ev(0, "received", got)]});
        assert!(rederive("content-type", "positive", &p, &t).is_none());
        // The -32601 on another connection than the discover: not shown.
        let t = json!({"connections": 2, "events": [ev(0, "sent", sent), ev(1, "received", got)]});
        let (judged, _) =
            rederive("content-type", "positive", &p, &t).expect("not on one connection");
        assert_eq!(judged.observed_reason, LABEL_NOT_IN_RECORD);
    }

    #[test]
    fn an_identity_that_moves_from_its_baseline_fails_the_run() {
        let same = json!({"baselineSha256": "a", "checks": [{"check": "x", "before": "a", "after": "a"}], "endSha256": "a"});
        assert_eq!(identity_changed(&same), Ok(false));
        let moved = json!({"baselineSha256": "a", "checks": [{"check": "x", "before": "a", "after": "b"}], "endSha256": "a"});
        assert_eq!(identity_changed(&moved), Ok(true));
        assert!(identity_changed(&json!({"checks": []})).is_err());
        assert_eq!(run_result_with_identity("PASS", true), "FAIL");
        assert_eq!(run_result_with_identity("INCOMPLETE", false), "INCOMPLETE");
        assert!(reads(IDENTITY_PATH));
        let cleanup = json!({"probesThatLeftProcesses": [], "adoptedAfterRun": [], "adoptedUnattributed": [{"pid": 1}]});
        assert_eq!(cleanup_from(&cleanup), Ok(false));
    }

    #[test]
    fn results_claim_and_paths() {
        use Verdict::*;
        assert_eq!(run_result(&[Pass, NotObserved], true), "INCOMPLETE");
        assert_eq!(run_result(&[Pass], false), "FAIL");
        assert_eq!(run_result(&[Pass, Fail], true), "FAIL");
        assert_eq!(evaluation_result(&[Pass, NotObserved]), "PASS");
        let applicable = vec!["a".to_string(), "b".to_string()];
        assert_eq!(claim(&["b", "a"], &applicable), "FULL_PROFILE");
        assert_eq!(claim(&["a"], &applicable), "BOUNDED_CHECK_SET");
        assert!(reads("artifacts/x/mutant.json"));
        assert!(reads(CLEANUP_PATH));
        assert!(reads("artifacts/x/server.json"));
        assert!(!reads("artifacts/x/cimd.json"));
        assert!(!reads("artifacts/preflight.json"));
        assert_eq!(truncate("", 16), "unknown");
        assert_eq!(truncate("aé", 2), "a");
    }

    #[test]
    fn residue_is_read_from_every_stored_end_record_and_only_a_named_control_orphan_is_excused() {
        let end = |left: Value| Ok(json!({"transcript": {"end": {"leftBehindProcesses": left}}}));
        let mut stored: BTreeMap<String, Result<Value, String>> = BTreeMap::new();
        stored.insert("artifacts/a/positive.json".into(), end(json!([])));
        stored.insert(
            "artifacts/cleanup/negative.json".into(),
            end(json!([{"pid": 77, "command": "mcpres"}])),
        );
        let named = json!({"injectedByControls": ["77 (mcpres), left on purpose below the subject with pid 5"]});
        let (residue, excused) = residue_in_artifacts(&stored, &named);
        assert!(
            residue.is_empty() && excused.is_empty(),
            "{residue:?} {excused:?}"
        );
        // Not named: the control's orphan is residue like any other.
        let (residue, _) = residue_in_artifacts(&stored, &json!({}));
        assert_eq!(residue, ["artifacts/cleanup/negative.json: 77 (mcpres)"]);
        // A process another probe left is never excused, whatever the list names.
        stored.insert(
            "artifacts/a/negative.json".into(),
            end(json!([{"pid": 78, "command": "sleep"}])),
        );
        let named2 = json!({"injectedByControls": ["77 (mcpres), x", "78 (sleep), x"]});
        let (residue, stray) = residue_in_artifacts(&stored, &named2);
        assert_eq!(residue, ["artifacts/a/negative.json: 78 (sleep)"]);
        assert_eq!(stray.len(), 1);
        assert_eq!(stray[0].judged, json!([78]));
    }
}
