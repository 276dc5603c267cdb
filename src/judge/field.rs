//! A field matrix leg judged from its evaluation directory (spec/field.md):
//! the field evidence items a leg takes from its evaluation and run record
//! (give it the re-judged documents, [`super::profile::Judged`]), the
//! declaration mismatches, the leg result and the matrix's aggregate.
//! `mcpres field run` writes what these functions give, and `mcpres
//! validate` compares a matrix with what they give for the directories on
//! disk.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// The checks whose verdicts tell a leg's interruption behaviour, by transport.
pub fn interruption_checks(transport: &str) -> &'static [&'static str] {
    match transport {
        "stdio" => &["interruption", "process-exit"],
        "streamable-http" => &[
            "early-close",
            "cancellation-by-stream-close",
            "interrupted-body",
        ],
        _ => &[],
    }
}

fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// An observation held: the property was reached and the observed outcome
/// and reason code are the expected ones.
fn held(o: &Value) -> bool {
    o["propertyReached"] == json!(true)
        && o["observedOutcome"] != json!("NOT_OBSERVED")
        && o["observedOutcome"] == o["expectedOutcome"]
        && o["observedReasonCode"] == o["expectedReasonCode"]
}

/// The field evidence items a leg takes from its evaluation directory:
/// `platform` (the leg's `os.platform`), `runtime`, `language`, `subject`,
/// `protocolRevision`, `profile`, `checkSet` (claim and claimed ids),
/// `cleanPath`, `expectedFailure`, `wrongReasonControl`, `interruption`,
/// `cleanup`, `failedChecks` and `notObservedChecks`. `evaluation` and `run`
/// are the leg's evaluation.json and run.json, `transport` the leg's.
pub fn derived_items(evaluation: &Value, run: &Value, transport: &str) -> Map<String, Value> {
    let checks = evaluation["checks"].as_array().cloned().unwrap_or_default();
    let ratio = |branch: &str| {
        json!({
            "held": checks.iter().filter(|c| held(&c[branch])).count(),
            "total": checks.len(),
        })
    };
    let run_checks = run["checks"].as_array().cloned().unwrap_or_default();
    let mutants: Vec<(&str, bool)> = run_checks
        .iter()
        .filter_map(|c| Some((c["id"].as_str()?, c["mutantKilled"].as_bool()?)))
        .collect();
    let with_verdict = |verdict: &str| -> Vec<Value> {
        run_checks
            .iter()
            .filter(|c| c["verdict"] == verdict)
            .map(|c| json!({"id": c["id"], "reason": c["reason"]}))
            .collect()
    };
    let interruption: Vec<Value> = interruption_checks(transport)
        .iter()
        .map(|id| {
            let verdict = run_checks
                .iter()
                .find(|c| c["id"] == *id)
                .and_then(|c| c["verdict"].as_str())
                .unwrap_or("NOT_EVALUATED");
            json!({"id": id, "verdict": verdict})
        })
        .collect();
    let evaluated = interruption
        .iter()
        .any(|c| c["verdict"] == "PASS" || c["verdict"] == "FAIL");
    let mut items = Map::new();
    let mut put = |k: &str, v: Value| {
        items.insert(k.to_string(), v);
    };
    put(
        "platform",
        json!(str_at(evaluation, "/environment/platform")),
    );
    put(
        "runtime",
        json!({
            "name": str_at(evaluation, "/environment/runtimeName"),
            "version": str_at(evaluation, "/environment/runtimeVersion"),
        }),
    );
    put(
        "language",
        json!(str_at(evaluation, "/subject/implementationLanguage")),
    );
    put(
        "subject",
        json!({
            "name": str_at(evaluation, "/subject/name"),
            "version": str_at(evaluation, "/subject/version"),
            "artifactSha256": str_at(evaluation, "/subject/artifactSha256"),
        }),
    );
    put(
        "protocolRevision",
        json!(str_at(evaluation, "/profile/protocolRevision")),
    );
    put(
        "profile",
        json!({
            "id": str_at(evaluation, "/profile/id"),
            "version": str_at(evaluation, "/profile/version"),
            "manifestSha256": str_at(evaluation, "/profile/manifestSha256"),
        }),
    );
    put(
        "checkSet",
        json!({
            "claim": str_at(evaluation, "/scope/claim"),
            "claimedCheckIds": evaluation["scope"]["claimedCheckIds"],
        }),
    );
    put("cleanPath", ratio("positive"));
    put("expectedFailure", ratio("negativeControl"));
    put(
        "wrongReasonControl",
        json!({
            "killed": mutants.iter().filter(|(_, k)| *k).count(),
            "total": mutants.len(),
            "surviving": mutants.iter().filter(|(_, k)| !k).map(|(id, _)| *id).collect::<Vec<_>>(),
        }),
    );
    put(
        "interruption",
        json!({"evaluated": evaluated, "checks": interruption}),
    );
    put(
        "cleanup",
        json!({"observed": evaluation["cleanup"]["observed"]}),
    );
    put("failedChecks", json!(with_verdict("FAIL")));
    put("notObservedChecks", json!(with_verdict("NOT_OBSERVED")));
    items
}

/// The declared items of a leg (`declared`: language, runtime, subjectSha256,
/// each a string or null) that differ from what its evaluation shows.
pub fn declaration_mismatches(declared: &Value, derived: &Map<String, Value>) -> Vec<Value> {
    let observed = |field: &str| -> &str {
        match field {
            "language" => derived["language"].as_str().unwrap_or(""),
            "runtime" => derived["runtime"]["name"].as_str().unwrap_or(""),
            _ => derived["subject"]["artifactSha256"].as_str().unwrap_or(""),
        }
    };
    ["language", "runtime", "subjectSha256"]
        .into_iter()
        .filter_map(|field| {
            let want = declared[field].as_str()?;
            let got = observed(field);
            (want != got).then(|| json!({"field": field, "declared": want, "observed": got}))
        })
        .collect()
}

/// A leg's result: FAIL when a declared item is not what the run observed,
/// otherwise the result of its run record (PASS, FAIL or INCOMPLETE).
pub fn leg_result(run_result: &str, mismatches: usize) -> &str {
    if mismatches > 0 { "FAIL" } else { run_result }
}

/// The overall result and the summary of a matrix whose legs have `results`
/// (PASS, FAIL, INCOMPLETE or NOT_RUN): PASS only when every leg is PASS,
/// FAIL when any leg is FAIL, INCOMPLETE otherwise.
pub fn aggregate<'a>(results: impl IntoIterator<Item = &'a str>) -> (&'static str, Value) {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    let mut legs = 0;
    for r in results {
        legs += 1;
        *count.entry(r).or_default() += 1;
    }
    let n = |k: &str| count.get(k).copied().unwrap_or(0);
    let overall = if n("FAIL") > 0 {
        "FAIL"
    } else if legs > 0 && n("PASS") == legs {
        "PASS"
    } else {
        "INCOMPLETE"
    };
    let summary = json!({
        "legs": legs,
        "pass": n("PASS"),
        "fail": n("FAIL"),
        "incomplete": n("INCOMPLETE"),
        "notRun": n("NOT_RUN"),
    });
    (overall, summary)
}
