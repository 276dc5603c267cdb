//! Field matrix directories (spec/field.md; MCPRES-FIELD-001 and the
//! `MCPRES-FIELD-DIR-*` rules of mcpres's own matrix document).
//!
//! Rule order: matrix.json strictly readable and schema-valid (otherwise
//! nothing else is compared with it); entries beside matrix.json and legs/;
//! per leg, in matrix order: its evaluation directory resolves (present, a
//! valid profile evaluation directory, with the digests the matrix records),
//! then every field evidence item and the leg result agree with it; last, the
//! legs are kept apart and the summary and overall result follow from them.
//!
//! The items a leg takes from its evaluation ([`derived_items`]), the
//! declaration mismatches ([`declaration_mismatches`]), the leg result
//! ([`leg_result`]) and the aggregate ([`aggregate`]) are computed here, once:
//! `mcpres field run` writes what these functions give, and the validator
//! compares the matrix with what they give for the directories on disk.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::bundle::field_dir::{FieldDir, LEGS_DIR, LegEntry, MATRIX_FILE, MAX_LEGS};
use crate::diag::codes as c;
use crate::diag::{Finding, Report};
use crate::schema::{self, SchemaKind};

pub use crate::judge::field::{
    aggregate, declaration_mismatches, derived_items, interruption_checks, leg_result,
};

use super::profile::validate_profile_evaluation;
use super::profile_dir::directory_findings;

/// The findings of an evaluation that report what its evidence shows: an
/// observation that did not hold, or cleanup not observed. They make a FAIL
/// evaluation (its result must then be FAIL, or the result finding follows),
/// and a leg with them is a failing leg, not an unresolved one.
const EVIDENCE_CODES: [crate::diag::Code; 5] = [
    c::PROFILE_PROPERTY_NOT_REACHED,
    c::PROFILE_NEGATIVE_CONTROL_MISSING,
    c::PROFILE_OUTCOME_MISMATCH,
    c::PROFILE_WRONG_REASON,
    c::PROFILE_CLEANUP_INCOMPLETE,
];

/// What keeps a leg's directory from resolving: every finding of its
/// directory, and every finding of its evaluation.json other than the
/// evidence codes.
fn evaluation_problems(dir: &crate::bundle::profile_dir::ProfileDir) -> Vec<Finding> {
    let mut problems: Vec<Finding> = validate_profile_evaluation(&dir.evaluation)
        .findings
        .into_iter()
        .filter(|f| !EVIDENCE_CODES.contains(&f.code))
        .collect();
    // A verdict the leg's artifacts do not give is reported at the leg
    // (the directory still resolves: its record is intact).
    problems.extend(
        directory_findings(dir)
            .into_iter()
            .filter(|f| f.code != c::VERDICT_NOT_FROM_RECORD),
    );
    problems
}

/// Validate a loaded field matrix directory.
pub fn validate_field_dir(dir: &FieldDir) -> Report {
    let mut findings = Vec::new();
    let matrix = match &dir.matrix {
        Ok(m) => m,
        Err(why) => {
            findings.push(Finding::new(
                c::FIELD_MATRIX_INVALID,
                "",
                format!("{MATRIX_FILE} cannot be read strictly: {why}"),
            ));
            return Report::from_findings(findings, Vec::new(), None);
        }
    };
    let errors = schema::validate(SchemaKind::FieldMatrix, matrix);
    if !errors.is_empty() {
        findings.extend(errors.iter().map(|e| {
            Finding::new(
                c::FIELD_MATRIX_INVALID,
                e.instance_path.clone(),
                format!("{MATRIX_FILE}: schema: {} ({})", e.message, e.keyword),
            )
        }));
        return Report::from_findings(findings, errors, None);
    }
    for (name, kind) in &dir.unlisted {
        findings.push(Finding::new(
            c::ARTIFACT_UNLISTED,
            "",
            format!(
                "{name}: {} in the field matrix directory that is neither {MATRIX_FILE} nor {LEGS_DIR}/",
                kind.what()
            ),
        ));
    }
    let legs = matrix["legs"].as_array().cloned().unwrap_or_default();
    let mut results: Vec<String> = Vec::new();
    let mut judged: Vec<String> = Vec::new();
    for (i, leg) in legs.iter().enumerate() {
        let claimed = leg["result"].as_str().unwrap_or("").to_string();
        let derived = if claimed == "NOT_RUN" {
            findings.extend(not_run_findings(i, leg));
            None
        } else {
            leg_findings(dir, i, leg, &mut findings)
        };
        let (recorded, rejudged) = derived.unwrap_or((claimed.clone(), claimed));
        results.push(recorded);
        judged.push(rejudged);
    }
    findings.extend(aggregate_findings(dir, matrix, &legs, &results));
    // The aggregate over the legs as their artifacts judge them.
    let (recorded_overall, recorded_summary) = aggregate(results.iter().map(String::as_str));
    let (overall, summary) = aggregate(judged.iter().map(String::as_str));
    for (key, recorded, rejudged) in [
        ("summary", json!(recorded_summary), summary),
        ("result", json!(recorded_overall), json!(overall)),
    ] {
        if matrix[key] == recorded && recorded != rejudged {
            findings.push(Finding::new(
                c::VERDICT_NOT_FROM_RECORD,
                format!("/{key}"),
                format!(
                    "the matrix's {key} is {}, but the legs as their artifacts judge them give {rejudged}",
                    matrix[key]
                ),
            ));
        }
    }
    Report::from_findings(findings, Vec::new(), None)
        .with_extra("fieldMatrixResult", json!(overall))
}

/// The matrix as its legs' artifacts judge it: every leg that ran with the
/// items and result its re-judged evaluation directory gives, and the
/// summary and overall result over those legs (what `mcpres report` shows).
/// `None` when matrix.json is not a readable matrix.
pub fn judged_matrix(dir: &FieldDir) -> Option<Value> {
    let mut matrix = dir.matrix.as_ref().ok()?.clone();
    if !schema::is_valid(SchemaKind::FieldMatrix, &matrix) {
        return Some(matrix);
    }
    let mut results = Vec::new();
    for leg in matrix["legs"].as_array_mut().into_iter().flatten() {
        if let Some((j, run_result)) = judged_leg(dir, leg) {
            let mismatches = declaration_mismatches(&leg["declared"], &j);
            let result = leg_result(&run_result, mismatches.len()).to_string();
            for (k, v) in j {
                if k == "platform" {
                    leg["os"]["platform"] = v;
                } else if k == "checkSet" {
                    leg["checkSet"]["claim"] = v["claim"].clone();
                    leg["checkSet"]["claimedCheckIds"] = v["claimedCheckIds"].clone();
                } else {
                    leg[k.as_str()] = v;
                }
            }
            leg["declarationMismatches"] = json!(mismatches);
            leg["result"] = json!(result);
        }
        results.push(leg["result"].as_str().unwrap_or_default().to_string());
    }
    let (overall, summary) = aggregate(results.iter().map(String::as_str));
    matrix["result"] = json!(overall);
    matrix["summary"] = summary;
    Some(matrix)
}

/// The items of a leg that ran, from its re-judged evaluation directory, and
/// the judged run result; `None` when its directory is not there or cannot
/// be judged.
fn judged_leg(dir: &FieldDir, leg: &Value) -> Option<(serde_json::Map<String, Value>, String)> {
    let directory = leg["directory"].as_str()?;
    let name = directory.strip_prefix(LEGS_DIR)?.strip_prefix('/')?;
    let Some(LegEntry::Evaluation {
        dir: profile_dir, ..
    }) = dir.legs.get(name)
    else {
        return None;
    };
    let judged = super::profile_dir::judge(profile_dir)?;
    let items = derived_items(
        &judged.evaluation,
        &judged.run,
        leg["transport"].as_str().unwrap_or(""),
    );
    let run_result = judged.run["result"].as_str().unwrap_or_default().to_owned();
    Some((items, run_result))
}

/// A leg that ran: its directory resolves, then its items agree with it.
/// Returns the leg's result as its evaluation records it and as its
/// artifacts judge it (`None` when the directory does not resolve).
fn leg_findings(
    dir: &FieldDir,
    i: usize,
    leg: &Value,
    findings: &mut Vec<Finding>,
) -> Option<(String, String)> {
    let id = leg["id"].as_str().unwrap_or("");
    let directory = leg["directory"].as_str().unwrap_or("");
    let name = directory
        .strip_prefix(LEGS_DIR)
        .and_then(|s| s.strip_prefix('/'))
        .unwrap_or(directory);
    let at = |field: &str| format!("/legs/{i}/{field}");
    let unresolved = |findings: &mut Vec<Finding>, message: String| {
        findings.push(Finding::new(
            c::FIELD_LEG_UNRESOLVED,
            at("directory"),
            format!("leg {id}: {message}"),
        ));
    };
    let (profile_dir, run_sha) = match dir.legs.get(name) {
        None => {
            unresolved(
                findings,
                format!("{directory} is not in the field matrix directory"),
            );
            return None;
        }
        Some(LegEntry::Unusable(why)) => {
            unresolved(findings, format!("{directory} is {why}"));
            return None;
        }
        Some(LegEntry::Evaluation {
            dir,
            run_file_sha256,
        }) => (dir, run_file_sha256),
    };
    let problems = evaluation_problems(profile_dir);
    if !problems.is_empty() {
        let codes: BTreeSet<String> = problems.iter().map(|f| f.code.to_string()).collect();
        unresolved(
            findings,
            format!(
                "{directory} is not a valid profile evaluation directory ({}; first: {})",
                codes.into_iter().collect::<Vec<_>>().join(", "),
                problems[0].message
            ),
        );
        return None;
    }
    let evaluation = &profile_dir.evaluation;
    let crate::bundle::profile_dir::RunFile::Read(run) = &profile_dir.run else {
        unresolved(findings, format!("{directory} has no readable run.json"));
        return None;
    };
    let recorded = &leg["evaluation"];
    let mut resolved = true;
    for (field, actual) in [
        (
            "evaluationFileSha256",
            Some(profile_dir.evaluation_file_sha256.as_str()),
        ),
        ("evaluationSha256", evaluation["evaluationSha256"].as_str()),
        ("runFileSha256", run_sha.as_deref()),
    ] {
        let want = recorded[field].as_str().unwrap_or("");
        if actual != Some(want) {
            resolved = false;
            findings.push(Finding::new(
                c::FIELD_LEG_UNRESOLVED,
                at(&format!("evaluation/{field}")),
                format!(
                    "leg {id}: the matrix records {field} {want}, but {directory} has {}",
                    actual.unwrap_or("none")
                ),
            ));
        }
    }
    if !resolved {
        return None;
    }
    let transport = leg["transport"].as_str().unwrap_or("");
    let derived = derived_items(evaluation, run, transport);
    let mut inconsistent = |field: String, message: String| {
        findings.push(Finding::new(
            c::FIELD_LEG_INCONSISTENT,
            at(&field),
            format!("leg {id}: {message}"),
        ));
    };
    for (key, want) in &derived {
        let (field, got) = match key.as_str() {
            "platform" => ("os/platform".to_string(), leg["os"]["platform"].clone()),
            "checkSet" => {
                let got = json!({
                    "claim": leg["checkSet"]["claim"],
                    "claimedCheckIds": leg["checkSet"]["claimedCheckIds"],
                });
                ("checkSet".to_string(), got)
            }
            _ => (key.clone(), leg[key.as_str()].clone()),
        };
        if &got != want {
            inconsistent(
                field,
                format!("{key} is {got} in the matrix, but the evaluation shows {want}"),
            );
        }
    }
    let mismatches = declaration_mismatches(&leg["declared"], &derived);
    if leg["declarationMismatches"] != json!(mismatches) {
        inconsistent(
            "declarationMismatches".into(),
            format!(
                "declarationMismatches is {} in the matrix, but the declared items against the evaluation give {}",
                leg["declarationMismatches"],
                json!(mismatches)
            ),
        );
    }
    let run_result = run["result"].as_str().unwrap_or("");
    let result = leg_result(run_result, mismatches.len()).to_string();
    if leg["result"] != json!(result) {
        inconsistent(
            "result".into(),
            format!(
                "the matrix says {}, but the leg's evaluation gives {result} (run.json result {run_result}, {} declaration mismatch(es))",
                leg["result"],
                mismatches.len()
            ),
        );
    }
    // The leg as its artifacts judge it: what the leg's directory records
    // that its artifacts do not give, then every item and the result.
    let mut not_from_record = |field: String, message: String| {
        findings.push(Finding::new(
            c::VERDICT_NOT_FROM_RECORD,
            at(&field),
            format!("leg {id}: {message}"),
        ));
    };
    let Some(judged) = super::profile_dir::judge(profile_dir) else {
        return Some((result.clone(), result));
    };
    for d in &judged.disagreements {
        not_from_record("directory".into(), format!("{directory}/{}", d.message()));
    }
    let rejudged = derived_items(&judged.evaluation, &judged.run, transport);
    for (key, want) in &rejudged {
        if derived.get(key) != Some(want) {
            not_from_record(
                key.clone(),
                format!(
                    "{key} is {} as {directory} records it, but its artifacts give {want}",
                    derived[key]
                ),
            );
        }
    }
    let judged_mismatches = declaration_mismatches(&leg["declared"], &rejudged);
    let judged_run = judged.run["result"].as_str().unwrap_or("");
    let judged_result = leg_result(judged_run, judged_mismatches.len()).to_string();
    if judged_result != result {
        not_from_record(
            "result".into(),
            format!(
                "the leg's result is {result} as {directory} records it, but its artifacts give {judged_result} (judged run result {judged_run})"
            ),
        );
    }
    Some((result, judged_result))
}

/// A leg that did not run names a registered profile by its version and
/// manifest digest (nothing else of it can be checked).
fn not_run_findings(i: usize, leg: &Value) -> Vec<Finding> {
    let id = leg["id"].as_str().unwrap_or("");
    let profile = &leg["profile"];
    let pid = profile["id"].as_str().unwrap_or("");
    let registered = crate::profiles::Registry::builtin()
        .ok()
        .and_then(|r| r.get(pid))
        .map(|p| json!({"id": p.id, "version": p.version, "manifestSha256": p.manifest_sha256}));
    match registered {
        Some(want) if &want == profile => Vec::new(),
        want => vec![Finding::new(
            c::FIELD_LEG_INCONSISTENT,
            format!("/legs/{i}/profile"),
            format!(
                "leg {id} (NOT_RUN): profile is {profile}, but the registry has {}",
                want.map_or("no such profile".to_string(), |w| w.to_string())
            ),
        )],
    }
}

/// Legs kept apart; summary and overall result as derived.
fn aggregate_findings(
    dir: &FieldDir,
    matrix: &Value,
    legs: &[Value],
    results: &[String],
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut collapsed = |pointer: String, message: String| {
        findings.push(Finding::new(c::FIELD_AGGREGATE_COLLAPSED, pointer, message));
    };
    let mut ids: BTreeMap<&str, usize> = BTreeMap::new();
    let mut directories: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, leg) in legs.iter().enumerate() {
        let id = leg["id"].as_str().unwrap_or("");
        if let Some(first) = ids.insert(id, i) {
            collapsed(
                format!("/legs/{i}/id"),
                format!("legs {first} and {i} share the id {id}"),
            );
        }
        let Some(directory) = leg["directory"].as_str() else {
            continue;
        };
        if directory != format!("{LEGS_DIR}/{id}") {
            collapsed(
                format!("/legs/{i}/directory"),
                format!("leg {id} names the directory {directory}, not {LEGS_DIR}/{id}"),
            );
        }
        if let Some(first) = directories.insert(directory, i) {
            collapsed(
                format!("/legs/{i}/directory"),
                format!("legs {first} and {i} share the directory {directory}"),
            );
        }
    }
    for name in dir.legs.keys() {
        let path = format!("{LEGS_DIR}/{name}");
        if !directories.contains_key(path.as_str()) {
            collapsed(
                "/legs".into(),
                format!("{path} is in the directory, but no leg that ran names it"),
            );
        }
    }
    if !dir.walk_complete {
        collapsed(
            "/legs".into(),
            format!("{LEGS_DIR}/ holds more than {MAX_LEGS} entries; the rest were not examined"),
        );
    }
    let (overall, summary) = aggregate(results.iter().map(String::as_str));
    if matrix["summary"] != summary {
        collapsed(
            "/summary".into(),
            format!(
                "the summary is {}, but the legs give {summary}",
                matrix["summary"]
            ),
        );
    }
    if matrix["result"] != overall {
        collapsed(
            "/result".into(),
            format!(
                "the overall result is {}, but the legs give {overall} (PASS only when every leg is PASS, FAIL when any is FAIL, INCOMPLETE otherwise)",
                matrix["result"]
            ),
        );
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aggregate_never_folds_a_failing_or_incomplete_leg_into_a_pass() {
        let overall = |r: &[&str]| aggregate(r.iter().copied()).0;
        assert_eq!(overall(&["PASS", "PASS"]), "PASS");
        assert_eq!(overall(&["PASS", "FAIL"]), "FAIL");
        assert_eq!(overall(&["FAIL", "NOT_RUN", "INCOMPLETE"]), "FAIL");
        assert_eq!(overall(&["PASS", "INCOMPLETE"]), "INCOMPLETE");
        assert_eq!(overall(&["PASS", "NOT_RUN"]), "INCOMPLETE");
        assert_eq!(overall(&[]), "INCOMPLETE");
        assert_eq!(
            aggregate(["PASS", "FAIL", "NOT_RUN", "NOT_RUN"]).1,
            json!({"legs": 4, "pass": 1, "fail": 1, "incomplete": 0, "notRun": 2})
        );
    }

    #[test]
    fn a_declared_item_the_run_did_not_observe_fails_the_leg() {
        let evaluation = json!({
            "environment": {"platform": "linux", "runtimeName": "python", "runtimeVersion": "Python 3.12"},
            "subject": {"name": "s", "version": "1", "implementationLanguage": "PYTHON", "artifactSha256": "a".repeat(64)},
            "profile": {"id": "mcp-res/stdio-transport/v1", "version": "1.0.0", "manifestSha256": "b".repeat(64), "protocolRevision": "2025-11-25"},
            "scope": {"claim": "BOUNDED_CHECK_SET", "claimedCheckIds": ["interruption"]},
            "checks": [],
            "cleanup": {"observed": true},
        });
        let run = json!({"result": "PASS", "checks": []});
        let items = derived_items(&evaluation, &run, "stdio");
        let declared =
            json!({"language": "PYTHON", "runtime": "node", "subjectSha256": "a".repeat(64)});
        let mismatches = declaration_mismatches(&declared, &items);
        assert_eq!(
            mismatches,
            [json!({"field": "runtime", "declared": "node", "observed": "python"})]
        );
        assert_eq!(leg_result("PASS", mismatches.len()), "FAIL");
        let undeclared = json!({"language": null, "runtime": null, "subjectSha256": null});
        assert!(declaration_mismatches(&undeclared, &items).is_empty());
        assert_eq!(leg_result("INCOMPLETE", 0), "INCOMPLETE");
        // No interruption check ran: not evaluated.
        assert_eq!(items["interruption"]["evaluated"], false);
    }
}
