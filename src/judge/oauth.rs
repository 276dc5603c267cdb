//! OAuth-boundary evaluations judged from their artifacts (`mcpres oauth
//! run`'s directory: `evaluation.json` with its `cases`, `run.json`
//! (`mcpres.oauth-run/1`) with every check's verdict, and
//! `artifacts/<check>/{positive,negative,mutant}.json` stored as a profile
//! run stores them).
//!
//! A check's verdict is the profile judge's ([`super::profile::check_verdict`])
//! over its stored observations, each read as its stored bytes give it
//! ([`super::profile::rederive`]), then revised by the standard's rules: a
//! check judged PASS whose case has a finding of the OAuth-boundary
//! evaluation's own rules is not observed, with that finding's code as its
//! reason. A case is written for a check with all three observations: its
//! positive and negative as stored, and of its mutant whether it was
//! observed at all and its observed reason.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::Disagreement;
use super::profile::{
    CHECK_NOT_OBSERVED, DETAIL_MAX, Observation, ROLES, Stored, Verdict, artifact_path,
    check_verdict, rederive, truncate,
};
use crate::diag::reasons::{self, Branch};
use crate::model::oauth::{Probe, WrongReasonMutant};
use crate::model::vocab::ProbeOutcome;

/// A finding of the evaluation's own rules on one of its cases: the case's
/// index in `cases`, the code and the message.
pub type CaseFinding = (usize, String, String);

/// The diagnostic a case's wrong-reason mutant names.
pub const EXPECTED_DIAGNOSTIC: &str = "MCP_RES_OAUTH_WRONG_REASON";

/// The observation of a case as the evaluation records it (the model's
/// [`Probe`], as the runner writes it).
pub fn case_observation(o: &Observation, sha: &str) -> Value {
    serde_json::to_value(Probe {
        property_reached: o.reached,
        expected_outcome: o.expected,
        observed_outcome: o.observed,
        expected_reason_code: &o.expected_reason,
        observed_reason_code: &o.observed_reason,
        artifact_sha256: sha,
    })
    .expect("plain JSON")
}

/// The checks whose observations each present one bearer token to the
/// subject (one request, on one connection) and read how it came back, with
/// the refusal reason that is the check's own.
pub const PRESENTED: [(&str, &str); 5] = [
    ("access-token-audience", "wrong-audience"),
    ("issuer-binding", "wrong-issuer"),
    ("token-passthrough-prohibited", "expired"),
    ("token-storage-omission", "expired"),
    ("wrong-resource-token-rejection", "wrong-audience"),
];

/// The refusal reason check `id` calls its own, when it presents tokens.
pub fn own_reason(id: &str) -> Option<&'static str> {
    PRESENTED.iter().find(|(c, _)| *c == id).map(|(_, r)| *r)
}

/// Why a refusal says it refused: the `data.reason` of a JSON-RPC error
/// body (the reference subject names every reason so), else the one reason
/// RFC 6750 names unambiguously: a 403 whose challenge carries
/// `error="insufficient_scope"` (§3.1). Its other codes do not tell the
/// reasons of this profile apart (`invalid_token` covers a wrong audience,
/// a wrong issuer, an expired and a malformed token alike), so they name
/// none.
pub fn refusal_reason(status: Option<u16>, challenge: Option<&str>, body: &[u8]) -> Option<String> {
    let body: Option<Value> = serde_json::from_slice(body).ok();
    if let Some(r) = body
        .as_ref()
        .and_then(|b| b.pointer("/error/data/reason"))
        .and_then(Value::as_str)
    {
        return Some(r.to_string());
    }
    (status == Some(403)
        && challenge
            .unwrap_or("")
            .contains("error=\"insufficient_scope\""))
    .then(|| "insufficient-scope".to_string())
}

/// How an authenticated request of check `id` came back (`accepted`: a 2xx
/// carrying a result for the request): accepted (the check's ACCEPTED),
/// refused as `malformed-token` (the early syntax rejection), refused for
/// `own` (the check's REJECTED), refused for another reason (with the
/// reason given as words), or not answered.
pub fn classify_presented(
    id: &str,
    status: Option<u16>,
    accepted: bool,
    challenge: Option<&str>,
    body: &[u8],
    own: &str,
) -> (ProbeOutcome, String) {
    let code = |branch: Branch| {
        reasons::oauth_case(id, branch)
            .unwrap_or(reasons::OAUTH_OTHER_REFUSAL)
            .to_string()
    };
    let other = |why: &str| reasons::with_words(reasons::OAUTH_OTHER_REFUSAL, why);
    match status {
        None => (ProbeOutcome::NotObserved, reasons::OAUTH_NO_ANSWER.into()),
        Some(s) if (200..300).contains(&s) && accepted => {
            (ProbeOutcome::Accept, code(Branch::Accepted))
        }
        Some(401 | 403) => match refusal_reason(status, challenge, body).as_deref() {
            Some("malformed-token") => (
                ProbeOutcome::Reject,
                reasons::OAUTH_EARLY_SYNTAX_REJECTION.into(),
            ),
            Some(r) if r == own => (ProbeOutcome::Reject, code(Branch::Rejected)),
            Some(r) => (ProbeOutcome::Reject, other(r)),
            None => (ProbeOutcome::Reject, other("unnamed")),
        },
        Some(s) => (ProbeOutcome::Reject, other(&format!("status {s}"))),
    }
}

/// The observation `o` (check `id`, `role`) as its stored bytes give it,
/// and why, where they give something else than its labels: first the
/// profile judge's readings ([`rederive`]); then, for a check that presents
/// a token ([`PRESENTED`]), the answer to that one request read again from
/// the stored connection bytes (`transcript.transcript`) and classified as
/// the runner classifies it. Only the classifier's own codes are read so: a
/// check-specific finding recorded over them (a token forwarded or stored)
/// is judged by its check's own evidence.
pub fn reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    if let Some(found) = rederive(id, role, o, transcript) {
        return Some(found);
    }
    let own = own_reason(id)?;
    let wire = &transcript["transcript"];
    let base = [
        reasons::oauth_case(id, Branch::Accepted),
        reasons::oauth_case(id, Branch::Rejected),
        Some(reasons::OAUTH_EARLY_SYNTAX_REJECTION),
        Some(reasons::OAUTH_OTHER_REFUSAL),
        Some(reasons::OAUTH_NO_ANSWER),
    ];
    if !base.contains(&Some(o.observed_reason.as_str())) {
        return None;
    }
    let sent = super::http::sent_on(wire, 1);
    let [request] = sent.as_slice() else {
        return None;
    };
    let request_id = request.get("id")?;
    let answer = super::http::exchanges_on(wire, 1)?.into_iter().next();
    let (observed, reason) = match &answer {
        Some(a) => classify_presented(
            id,
            Some(a.status),
            a.result_for(request_id).is_some(),
            a.header("www-authenticate"),
            &a.body,
            own,
        ),
        None => classify_presented(id, None, false, None, &[], own),
    };
    let (code, _) = reasons::split_words(&reason);
    if code == o.observed_reason && observed == o.observed {
        return None;
    }
    let what = answer.as_ref().map_or_else(
        || "no response".to_string(),
        |a| format!("status {}", a.status),
    );
    let reached = if role == "mutant" {
        o.reached
    } else {
        observed != ProbeOutcome::NotObserved && code != reasons::OAUTH_EARLY_SYNTAX_REJECTION
    };
    Some((
        Observation {
            observed,
            observed_reason: code.to_string(),
            reached,
            ..o.clone()
        },
        format!(
            "check {id}: its {role}.json says {} {}, but its stored connection bytes answer the token's request with {what}, which reads as {} {code}",
            o.observed.as_str(),
            o.observed_reason,
            observed.as_str()
        ),
    ))
}

/// Judge an OAuth-boundary directory: `case_findings` are the findings the
/// evaluation's own rules give on its cases (the validator's, which this
/// layer cannot run). Returns what the record gives where the documents
/// record something else.
pub fn judge_dir(
    evaluation: &Value,
    run: &Value,
    stored: &BTreeMap<String, Stored>,
    digests: &BTreeMap<String, String>,
    case_findings: &[CaseFinding],
) -> Vec<Disagreement> {
    let mut out = Vec::new();
    let mut push = |file: &str, pointer: String, recorded: &Value, judged: Value, why: String| {
        if *recorded != judged {
            out.push(Disagreement {
                file: file.to_owned(),
                pointer,
                recorded: recorded.clone(),
                judged,
                why,
            });
        }
    };
    let cases = evaluation["cases"].as_array().cloned().unwrap_or_default();
    let mut judged_cases: Vec<Value> = Vec::new();
    for (i, check) in run["checks"].as_array().into_iter().flatten().enumerate() {
        let id = check["id"].as_str().unwrap_or_default();
        let mut obs: [Option<Observation>; 3] = [None, None, None];
        let mut unjudged = None;
        for (k, role) in ROLES.iter().enumerate() {
            let path = artifact_path(id, role);
            match stored.get(&path) {
                None => {}
                Some(Err(why)) => unjudged = Some(format!("{path}: {why}")),
                Some(Ok(doc)) => match Observation::from_artifact(doc, id, role) {
                    // Labels are believed only where the stored bytes give
                    // nothing else (the profile judge's reading).
                    Ok(o) => match reread(id, role, &o, &doc["transcript"]) {
                        Some((judged, why)) => {
                            push(
                                &path,
                                "/observedReasonCode".into(),
                                &json!(o.observed_reason),
                                json!(judged.observed_reason),
                                why,
                            );
                            obs[k] = Some(judged);
                        }
                        None => obs[k] = Some(o),
                    },
                    Err(why) => unjudged = Some(format!("{path}: {why}")),
                },
            }
        }
        if let Some(why) = unjudged {
            push(
                "run.json",
                format!("/checks/{i}"),
                &check["verdict"],
                Value::Null,
                format!("check {id} cannot be judged from its artifacts: {why}"),
            );
            continue;
        }
        let [p, n, m] = &obs;
        let mut v = check_verdict(p.as_ref(), n.as_ref(), m.as_ref(), None);
        let case_index = cases.iter().position(|c| c["id"] == id);
        if v.verdict == Verdict::Pass
            && let Some((_, code, message)) =
                case_index.and_then(|at| case_findings.iter().find(|(index, _, _)| *index == at))
        {
            v.verdict = Verdict::NotObserved;
            v.reason = code.clone();
            v.detail = format!("revised by the standard's rules: {message}");
        }
        let at = |field: &str| format!("/checks/{i}/{field}");
        let why = |what: &str| format!("check {id}: {what}");
        push(
            "run.json",
            at("verdict"),
            &check["verdict"],
            json!(v.verdict.as_str()),
            why(
                "as its stored observations give it, revised by the evaluation's rules on its case",
            ),
        );
        push(
            "run.json",
            at("reason"),
            &check["reason"],
            json!(v.reason),
            why("the verdict's reason"),
        );
        if v.reason != CHECK_NOT_OBSERVED {
            push(
                "run.json",
                at("detail"),
                &check["detail"],
                json!(truncate(&v.detail, DETAIL_MAX)),
                why("the verdict's detail"),
            );
        }
        push(
            "run.json",
            at("mutantKilled"),
            &check["mutantKilled"],
            json!(v.mutant_killed),
            why(
                "killed when the mutant was not credited with the negative control's expected reason",
            ),
        );
        if let (Some(p), Some(n), Some(m)) = (p, n, m) {
            let sha = |role: &str| {
                digests
                    .get(&artifact_path(id, role))
                    .cloned()
                    .unwrap_or_default()
            };
            judged_cases.push(json!({
                "id": id,
                "positive": case_observation(p, &sha("positive")),
                "negative": case_observation(n, &sha("negative")),
                "wrongReasonMutant": WrongReasonMutant {
                    property_reached: m.observed != ProbeOutcome::NotObserved,
                    observed_reason_code: &m.observed_reason,
                    expected_diagnostic: EXPECTED_DIAGNOSTIC,
                    artifact_sha256: &sha("mutant"),
                },
            }));
        }
    }
    let ids: Vec<&Value> = cases.iter().map(|c| &c["id"]).collect();
    let judged_ids: Vec<&Value> = judged_cases.iter().map(|c| &c["id"]).collect();
    if ids != judged_ids {
        push(
            "evaluation.json",
            "/cases".into(),
            &json!(ids),
            json!(judged_ids),
            "a case is written for every check with a stored positive, negative and mutant, in run order".into(),
        );
        return out;
    }
    for (i, (recorded, judged)) in cases.iter().zip(&judged_cases).enumerate() {
        for branch in ["positive", "negative", "wrongReasonMutant"] {
            for (field, value) in judged[branch].as_object().into_iter().flatten() {
                push(
                    "evaluation.json",
                    format!("/cases/{i}/{branch}/{field}"),
                    &recorded[branch][field],
                    value.clone(),
                    format!(
                        "case {}: as its stored artifact records it",
                        judged["id"].as_str().unwrap_or_default()
                    ),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A presentation transcript: one request sent, `answer` received.
    fn presented(answer: &str) -> Value {
        let body = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#;
        json!({"transcript": {"connections": 1, "events": [
            {"connection": 1, "stream": "sent", "text": format!(
                "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )},
            {"connection": 1, "stream": "received", "text": answer},
        ]}})
    }

    fn labelled(observed: ProbeOutcome, reason: &str) -> Observation {
        Observation {
            expected: ProbeOutcome::Reject,
            expected_reason: reasons::oauth_case("access-token-audience", Branch::Rejected)
                .unwrap()
                .into(),
            observed,
            observed_reason: reason.into(),
            reached: true,
            detail: String::new(),
            answer: None,
        }
    }

    #[test]
    fn a_presented_tokens_answer_is_classified_from_the_stored_bytes() {
        let id = "access-token-audience";
        let own = reasons::oauth_case(id, Branch::Rejected).unwrap();
        let named = |reason: &str| {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32000,"message":"no","data":{{"reason":"{reason}"}}}}}}"#
            );
            format!(
                "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
        };
        // As labelled: nothing to say.
        let t = presented(&named("wrong-audience"));
        assert!(reread(id, "negative", &labelled(ProbeOutcome::Reject, own), &t).is_none());
        // A refusal for another reason credited as the check's own.
        let t = presented(&named("expired"));
        let (judged, why) = reread(id, "negative", &labelled(ProbeOutcome::Reject, own), &t)
            .expect("another reason");
        assert_eq!(
            judged.observed_reason,
            reasons::OAUTH_OTHER_REFUSAL,
            "{why}"
        );
        // A 500 credited as the check's own refusal.
        let t = presented("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n");
        let (judged, _) = reread(id, "negative", &labelled(ProbeOutcome::Reject, own), &t)
            .expect("a 500 is no refusal of the property");
        assert_eq!(judged.observed_reason, reasons::OAUTH_OTHER_REFUSAL);
        // A result served, labelled as a refusal: accepted.
        let body = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
        let t = presented(&format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ));
        let (judged, _) =
            reread(id, "negative", &labelled(ProbeOutcome::Reject, own), &t).expect("served");
        assert_eq!(judged.observed, ProbeOutcome::Accept);
        // A check-specific finding over the classifier's codes is not read so.
        let t = presented(&named("wrong-audience"));
        let stored = labelled(ProbeOutcome::Reject, reasons::OAUTH_TOKEN_STORED);
        assert!(reread("token-storage-omission", "negative", &stored, &t).is_none());
    }
}
