//! OAuth-boundary evaluations judged from their artifacts (`mcpres oauth
//! run`'s directory: `evaluation.json` with its `cases`, `run.json`
//! (`mcpres.oauth-run/1`) with every check's verdict, and
//! `artifacts/<check>/{positive,negative,mutant}.json` stored as a profile
//! run stores them).
//!
//! A check's verdict is the profile judge's ([`super::profile::check_verdict`])
//! over its stored observations, then revised by the standard's rules: a
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
    check_verdict, truncate,
};
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
                    Ok(o) => obs[k] = Some(o),
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
