//! Profile evaluation directories (spec/profiles.md, "The evaluation directory";
//! MCPRES-PROFILE-DIR-001/002 and the bundle-directory file codes).
//!
//! Rule order: evaluation.json exactly as a single file (its own findings come first,
//! so its primary diagnostic is the directory's whenever it has one); run.json present,
//! strictly readable and schema-valid (otherwise nothing else is compared with it); the
//! evaluation file digest run.json records; each listed artifact's path, collision,
//! presence and bytes; unlisted entries; the digests evaluation.json cites that no listed
//! artifact has; run.json against evaluation.json; last, when every listed file is
//! intact, the verdicts judged again from the digest-bound artifacts
//! ([`crate::judge::profile`]) against everything both documents record.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::bundle::profile_dir::{EVALUATION_FILE, FileState, ProfileDir, RUN_FILE, RunFile};
use crate::diag::codes as c;
use crate::diag::{Finding, Report};
use crate::model::profile::ProfileEvaluation;
use crate::schema::{self, SchemaKind};

use super::profile;

/// Validate a loaded profile evaluation directory: the evaluation's own report, then
/// the directory's findings.
pub fn validate_profile_dir(dir: &ProfileDir) -> Report {
    let (evaluation, directory) = if crate::bundle::profile_dir::is_oauth(&dir.evaluation) {
        (
            super::oauth::validate_oauth_evaluation(&dir.evaluation),
            oauth_directory_findings(dir),
        )
    } else {
        (
            profile::validate_profile_evaluation(&dir.evaluation),
            directory_findings(dir),
        )
    };
    if directory.is_empty() {
        return evaluation;
    }
    let mut findings = evaluation.findings;
    findings.extend(directory);
    Report::from_findings(findings, evaluation.schema_errors, None)
}

/// The findings of the directory itself (rules 2 to 8), without evaluation.json's own.
/// Empty when the directory holds exactly what its run record lists and the record
/// agrees with the evaluation.
pub fn directory_findings(dir: &ProfileDir) -> Vec<Finding> {
    let mut findings = Vec::new();
    let run = match run_record(dir, "profile evaluation") {
        Ok(run) => run,
        Err(f) => return vec![f],
    };
    let errors = schema::validate(SchemaKind::ProfileRun, run);
    if !errors.is_empty() || !dir.run_schema_valid {
        findings.extend(errors.iter().map(|e| {
            Finding::new(
                c::PROFILE_RUN_INVALID,
                e.instance_path.clone(),
                format!("{RUN_FILE}: schema: {} ({})", e.message, e.keyword),
            )
        }));
        return findings;
    }
    let Ok(record) = RunRecord::deserialize(run) else {
        findings.push(Finding::new(
            c::PROFILE_RUN_INVALID,
            "",
            format!("{RUN_FILE} is schema-valid but unreadable as a run record"),
        ));
        return findings;
    };

    // Rule 3: the evaluation file's digest.
    if record.evaluation_file_sha256 != dir.evaluation_file_sha256 {
        findings.push(Finding::new(
            c::PROFILE_RUN_INCONSISTENT,
            "/evaluationFileSha256",
            format!(
                "{RUN_FILE} records evaluationFileSha256 {}, but {EVALUATION_FILE} has sha256 {}",
                record.evaluation_file_sha256, dir.evaluation_file_sha256
            ),
        ));
    }

    // Rule 4: the listed files, phase by phase (path rule, collision, presence, bytes),
    // as in a bundle directory.
    let files = file_findings(dir);
    let intact = files.is_empty();
    findings.extend(files);

    // Rule 5: entries nothing lists.
    findings.extend(unlisted_findings(dir, "profile evaluation"));

    // Rules 6 and 7 need the evaluation's checks: when it is not a readable profile
    // evaluation, its own findings already say so.
    if !schema::is_valid(SchemaKind::ProfileEvaluation, &dir.evaluation) {
        return findings;
    }
    let Ok(ev) = ProfileEvaluation::view(&dir.evaluation) else {
        return findings;
    };
    let by_path: BTreeMap<&str, &str> = dir
        .artifacts
        .iter()
        .map(|a| (a.path.as_str(), a.sha256.as_str()))
        .collect();
    let listed: BTreeSet<&str> = dir.artifacts.iter().map(|a| a.sha256.as_str()).collect();

    // Rule 6: every digest the evaluation cites is a listed artifact's.
    for (i, check) in ev.checks.iter().enumerate() {
        for (branch, obs) in [
            ("positive", &check.positive),
            ("negativeControl", &check.negative_control),
        ] {
            if !listed.contains(obs.artifact_sha256) {
                findings.push(Finding::new(
                    c::PROFILE_ARTIFACT_UNRESOLVED,
                    format!("/checks/{i}/{branch}/artifactSha256"),
                    format!(
                        "check {}: the {branch} observation cites artifact sha256 {}, which no artifact {RUN_FILE} lists has",
                        check.id, obs.artifact_sha256
                    ),
                ));
            }
        }
    }
    if !listed.contains(ev.cleanup.observation_sha256) {
        findings.push(Finding::new(
            c::PROFILE_ARTIFACT_UNRESOLVED,
            "/cleanup/observationSha256",
            format!(
                "the cleanup observation cites artifact sha256 {}, which no artifact {RUN_FILE} lists has",
                ev.cleanup.observation_sha256
            ),
        ));
    }

    // Rule 7: the run record agrees with the evaluation.
    findings.extend(consistency(&record, &ev, &by_path));

    // Rule 8: every verdict, reason, flag and result is what the stored artifacts give.
    if intact && let Some(judged) = judge(dir) {
        findings.extend(judged.disagreements.iter().map(not_from_record));
    }
    findings
}

/// The directory judged again from its stored artifacts: `None` unless its
/// run.json is a schema-valid profile run record and evaluation.json a
/// schema-valid profile evaluation (whether the artifacts are intact is
/// the caller's question: a file not read is judged as absent).
pub fn judge(dir: &ProfileDir) -> Option<crate::judge::profile::Judged> {
    let RunFile::Read(run) = &dir.run else {
        return None;
    };
    if !dir.run_schema_valid
        || crate::bundle::profile_dir::is_oauth(&dir.evaluation)
        || !schema::is_valid(SchemaKind::ProfileEvaluation, &dir.evaluation)
    {
        return None;
    }
    let digests: BTreeMap<String, String> = dir
        .artifacts
        .iter()
        .map(|a| (a.path.clone(), a.sha256.clone()))
        .collect();
    let profile = crate::profiles::Registry::builtin().ok().and_then(|r| {
        r.get(dir.evaluation["profile"]["id"].as_str()?).map(|p| {
            let rev = dir.evaluation["profile"]["protocolRevision"]
                .as_str()
                .unwrap_or_default();
            (p.applicable_check_ids(rev), p.required_checks.clone())
        })
    });
    Some(crate::judge::profile::judge_dir(
        &dir.evaluation,
        run,
        &dir.stored,
        &digests,
        profile.as_ref().map(|(a, r)| (a.as_slice(), r.as_slice())),
    ))
}

/// A recorded field the judge does not give, as a finding.
pub fn not_from_record(d: &crate::judge::Disagreement) -> Finding {
    Finding::new(c::VERDICT_NOT_FROM_RECORD, d.pointer.clone(), d.message())
}

/// The findings of an OAuth-boundary evaluation directory (`mcpres oauth
/// run`'s): the same rules as a profile evaluation directory, its run record
/// being an `mcpres.oauth-run/1` (the per-check verdicts there are a report,
/// not compared: the evaluation's own rules judge the cases).
pub fn oauth_directory_findings(dir: &ProfileDir) -> Vec<Finding> {
    use crate::bundle::profile_dir::OAUTH_RUN_SCHEMA;
    let mut findings = Vec::new();
    let run = match run_record(dir, "OAuth-boundary evaluation") {
        Ok(run) => run,
        Err(f) => return vec![f],
    };
    if !dir.run_schema_valid {
        findings.push(Finding::new(
            c::PROFILE_RUN_INVALID,
            "",
            format!(
                "{RUN_FILE} is not an {OAUTH_RUN_SCHEMA} record (schemaVersion, evaluationFileSha256, and artifacts each with path, sha256 and bytes)"
            ),
        ));
        return findings;
    }
    let recorded = run["evaluationFileSha256"].as_str().unwrap_or_default();
    if recorded != dir.evaluation_file_sha256 {
        findings.push(Finding::new(
            c::PROFILE_RUN_INCONSISTENT,
            "/evaluationFileSha256",
            format!(
                "{RUN_FILE} records evaluationFileSha256 {recorded}, but {EVALUATION_FILE} has sha256 {}",
                dir.evaluation_file_sha256
            ),
        ));
    }
    let files = file_findings(dir);
    let intact = files.is_empty();
    findings.extend(files);
    findings.extend(unlisted_findings(dir, "OAuth-boundary evaluation"));
    // Every artifact digest the evaluation cites is a listed artifact's.
    let listed: BTreeSet<&str> = dir.artifacts.iter().map(|a| a.sha256.as_str()).collect();
    let mut cited = Vec::new();
    cited_digests(&dir.evaluation, String::new(), &mut cited);
    for (pointer, sha) in cited {
        if !listed.contains(sha.as_str()) {
            findings.push(Finding::new(
                c::PROFILE_ARTIFACT_UNRESOLVED,
                pointer.clone(),
                format!(
                    "{pointer} cites artifact sha256 {sha}, which no artifact {RUN_FILE} lists has"
                ),
            ));
        }
    }
    // Last: the verdicts and cases as the stored observations give them,
    // and the privacy flag as the stored evidence gives it.
    if intact {
        findings.extend(judge_oauth(dir, run).iter().map(not_from_record));
        findings.extend(credential_residue(dir).iter().map(not_from_record));
    }
    findings
}

/// `privacy.evidenceContainsCredentialMaterial` as the stored evidence gives
/// it: true when an artifact the judge reads (an observation, a subject's
/// transcript, the cleanup) holds a string that is credential material by
/// [`super::oauth::credential_material`]'s rules. Only that direction is
/// judged: a flag set true is already refused by the evaluation's rules.
fn credential_residue(dir: &ProfileDir) -> Option<crate::judge::Disagreement> {
    let recorded = dir
        .evaluation
        .pointer("/privacy/evidenceContainsCredentialMaterial")?;
    if recorded != &serde_json::Value::Bool(false) {
        return None;
    }
    let (path, (pointer, what)) = dir.stored.iter().find_map(|(path, doc)| {
        let doc = doc.as_ref().ok()?;
        Some((path, super::oauth::credential_material(doc, String::new())?))
    })?;
    Some(crate::judge::Disagreement {
        file: "evaluation.json".into(),
        pointer: "/privacy/evidenceContainsCredentialMaterial".into(),
        recorded: recorded.clone(),
        judged: serde_json::Value::Bool(true),
        why: format!("the stored artifact {path} holds {what} at {pointer}"),
    })
}

/// An OAuth-boundary directory judged from its stored observations (what its
/// run.json and evaluation.json record that they do not give), with the
/// evaluation's own rules revising the verdicts of its cases as the runner's do.
pub fn judge_oauth(dir: &ProfileDir, run: &serde_json::Value) -> Vec<crate::judge::Disagreement> {
    let case_findings: Vec<crate::judge::oauth::CaseFinding> =
        super::oauth::validate_oauth_evaluation(&dir.evaluation)
            .findings
            .into_iter()
            .filter_map(|f| {
                let index = f
                    .pointer
                    .strip_prefix("/cases/")?
                    .split('/')
                    .next()?
                    .parse::<usize>()
                    .ok()?;
                Some((index, f.code.as_str().to_owned(), f.message))
            })
            .collect();
    let digests: BTreeMap<String, String> = dir
        .artifacts
        .iter()
        .map(|a| (a.path.clone(), a.sha256.clone()))
        .collect();
    crate::judge::oauth::judge_dir(&dir.evaluation, run, &dir.stored, &digests, &case_findings)
}

/// (JSON pointer, value) of every evidence digest `v` cites (the cases'
/// `artifactSha256`, the cleanup's `observationSha256`, the fixture's
/// `listenerSha256`, the flow's `cimdSha256`), in document order.
fn cited_digests(v: &serde_json::Value, at: String, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, x) in map {
                let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                // `/subject/artifactSha256` names the subject's own
                // artifact, not evidence stored beside the evaluation.
                let evidence = matches!(
                    k.as_str(),
                    "artifactSha256" | "observationSha256" | "listenerSha256" | "cimdSha256"
                ) && at != "/subject";
                match x.as_str() {
                    Some(s) if evidence => out.push((here, s.to_string())),
                    _ => cited_digests(x, here, out),
                }
            }
        }
        serde_json::Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                cited_digests(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// run.json as read, or the one finding that says why it cannot be used.
fn run_record<'a>(dir: &'a ProfileDir, what: &str) -> Result<&'a serde_json::Value, Finding> {
    match &dir.run {
        RunFile::Missing => Err(Finding::new(
            c::PROFILE_RUN_INVALID,
            "",
            format!("{RUN_FILE} is not in the {what} directory"),
        )),
        RunFile::Unreadable(why) => Err(Finding::new(
            c::PROFILE_RUN_INVALID,
            "",
            format!("{RUN_FILE} cannot be read strictly: {why}"),
        )),
        RunFile::Read(run) => Ok(run),
    }
}

/// Entries of the directory nothing lists, and a walk cut short.
fn unlisted_findings(dir: &ProfileDir, what: &str) -> Vec<Finding> {
    let mut findings: Vec<Finding> = dir
        .unlisted
        .iter()
        .map(|(path, kind)| {
            Finding::new(
                c::ARTIFACT_UNLISTED,
                "/artifacts",
                format!(
                    "{path}: {} in the {what} directory that {RUN_FILE} does not list",
                    kind.what()
                ),
            )
        })
        .collect();
    if !dir.walk_complete {
        findings.push(Finding::new(
            c::ARTIFACT_UNLISTED,
            "/artifacts",
            format!(
                "the {what} directory holds more than {} entries; the rest were not examined",
                crate::bundle::dir::MAX_DIR_ENTRIES
            ),
        ));
    }
    findings
}

/// Rule 4, in the bundle-directory phase order.
fn file_findings(dir: &ProfileDir) -> Vec<Finding> {
    let pointer = |i: usize| format!("/artifacts/{i}/path");
    let mut phases: [Vec<Finding>; 4] = Default::default();
    for (i, a) in dir.artifacts.iter().enumerate() {
        let (phase, code, message) = match &a.state {
            FileState::PathInvalid(problem) => (
                0,
                c::ARTIFACT_PATH_INVALID,
                format!("{RUN_FILE} artifact path {:?} {problem}", a.path),
            ),
            FileState::Collides(message) => (1, c::ARTIFACT_PATH_COLLISION, message.clone()),
            FileState::Absent(absence) => {
                let (code, message) = absence.finding(
                    &a.path,
                    format!(
                        "{} is listed in {RUN_FILE} but is not in the directory",
                        a.path
                    ),
                    "a profile evaluation directory",
                );
                (2, code, message)
            }
            FileState::OverLimit { limit } => (
                3,
                c::INPUT_INVALID,
                format!(
                    "{}: {RUN_FILE} declares {} bytes, over the {limit}-byte artifact limit (--max-artifact-bytes); the file was not read",
                    a.path, a.bytes
                ),
            ),
            FileState::Unreadable(why) => (
                3,
                c::ARTIFACT_PATH_INVALID,
                format!("{} cannot be read safely: {why}", a.path),
            ),
            FileState::Read { bytes, sha256 } if *bytes != a.bytes || *sha256 != a.sha256 => {
                let shown = if *bytes > a.bytes {
                    format!("more than {}", a.bytes)
                } else {
                    format!("{bytes} bytes with sha256 {sha256}")
                };
                (
                    3,
                    c::ARTIFACT_DIGEST_MISMATCH,
                    format!(
                        "{}: {RUN_FILE} says {} bytes with sha256 {}; the file has {shown}",
                        a.path, a.bytes, a.sha256
                    ),
                )
            }
            FileState::Read { .. } => continue,
        };
        phases[phase].push(Finding::new(code, pointer(i), message));
    }
    phases.into_iter().flatten().collect()
}

/// Rule 7: the checks, paths, mutant kills and result of run.json against evaluation.json.
fn consistency(
    record: &RunRecord,
    ev: &ProfileEvaluation<'_>,
    by_path: &BTreeMap<&str, &str>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut push = |pointer: String, message: String| {
        findings.push(Finding::new(c::PROFILE_RUN_INCONSISTENT, pointer, message));
    };
    if record.profile.id != ev.profile.id
        || record.profile.protocol_revision != ev.profile.protocol_revision.as_str()
    {
        push(
            "/profile".into(),
            format!(
                "{RUN_FILE} names profile {} at {}, {EVALUATION_FILE} evaluates {} at {}",
                record.profile.id,
                record.profile.protocol_revision,
                ev.profile.id,
                ev.profile.protocol_revision.as_str()
            ),
        );
    }
    let evaluated: BTreeMap<&str, usize> = ev
        .checks
        .iter()
        .enumerate()
        .map(|(i, check)| (check.id, i))
        .collect();
    let mut seen = BTreeSet::new();
    for (i, check) in record.checks.iter().enumerate() {
        let pointer = |field: &str| format!("/checks/{i}/{field}");
        if !seen.insert(check.id.as_str()) {
            push(
                pointer("id"),
                format!("check {} is listed more than once", check.id),
            );
            continue;
        }
        let observed = check.verdict != Verdict::NotObserved;
        let in_evaluation = evaluated.get(check.id.as_str()).map(|i| &ev.checks[*i]);
        match (observed, in_evaluation) {
            (true, None) => push(
                pointer("verdict"),
                format!(
                    "check {} has verdict {} but {EVALUATION_FILE} does not evaluate it",
                    check.id,
                    check.verdict.as_str()
                ),
            ),
            (false, Some(_)) => push(
                pointer("verdict"),
                format!(
                    "check {} is NOT_OBSERVED but {EVALUATION_FILE} evaluates it",
                    check.id
                ),
            ),
            _ => {}
        }
        // Every path given names a listed artifact; for an evaluated check, the
        // positive and negative ones are the artifacts the evaluation cites.
        let cited = in_evaluation.filter(|_| observed).map(|e| {
            (
                e.positive.artifact_sha256,
                e.negative_control.artifact_sha256,
            )
        });
        for (field, path, wanted) in [
            ("positive", &check.positive, cited.map(|c| c.0)),
            ("negative", &check.negative, cited.map(|c| c.1)),
            ("mutant", &check.mutant, None),
        ] {
            match (path, by_path.get(path.as_deref().unwrap_or_default())) {
                (None, _) if wanted.is_some() => push(
                    pointer(field),
                    format!(
                        "check {}: {field} is null, but {EVALUATION_FILE} cites a {field} artifact",
                        check.id
                    ),
                ),
                (None, _) => {}
                (Some(path), None) => push(
                    pointer(field),
                    format!(
                        "check {}: {field} {path:?} is not an artifact {RUN_FILE} lists",
                        check.id
                    ),
                ),
                (Some(path), Some(sha)) => {
                    if let Some(wanted) = wanted.filter(|w| w != sha) {
                        push(
                            pointer(field),
                            format!(
                                "check {}: {field} {path:?} has sha256 {sha}, but {EVALUATION_FILE} cites {wanted}",
                                check.id
                            ),
                        );
                    }
                }
            }
        }
        if check.verdict == Verdict::Pass {
            if check.mutant_killed != Some(true) {
                push(
                    pointer("mutantKilled"),
                    format!(
                        "check {} is PASS but its mutant was not shown killed (mutantKilled {})",
                        check.id,
                        check
                            .mutant_killed
                            .map_or_else(|| "null".to_owned(), |k| k.to_string())
                    ),
                );
            }
            if let Some((index, failing)) = evaluated.get(check.id.as_str()).and_then(|i| {
                profile::check_findings(&ev.checks[*i], *i)
                    .into_iter()
                    .next()
                    .map(|f| (i, f))
            }) {
                push(
                    pointer("verdict"),
                    format!(
                        "check {} is PASS but its observation at {EVALUATION_FILE} /checks/{index} has {}",
                        check.id, failing.code
                    ),
                );
            }
        }
    }
    let missing: Vec<&str> = evaluated
        .keys()
        .copied()
        .filter(|id| {
            !record
                .checks
                .iter()
                .any(|c| c.id == *id && c.verdict != Verdict::NotObserved)
        })
        .collect();
    if !missing.is_empty() {
        push(
            "/checks".into(),
            format!(
                "{EVALUATION_FILE} evaluates checks that {RUN_FILE} does not list as PASS or FAIL: [{}]",
                missing.join(", ")
            ),
        );
    }
    let identity_changed = record.identity.as_ref().is_some_and(|i| i.changed);
    // A run whose cleanup was not observed fails (`judge::run_result`, which
    // the producer wrote it with); the evaluation's own result says nothing
    // of it.
    let cleanup_missed = !ev.cleanup.observed;
    let derived = if identity_changed
        || cleanup_missed
        || record.checks.iter().any(|c| c.verdict == Verdict::Fail)
    {
        "FAIL"
    } else if record
        .checks
        .iter()
        .any(|c| c.verdict == Verdict::NotObserved)
    {
        "INCOMPLETE"
    } else {
        "PASS"
    };
    if record.result != derived {
        push(
            "/result".into(),
            format!(
                "{RUN_FILE} says result {}, but its checks give {derived} (FAIL when a check fails, the subject's identity changed or cleanup was not observed, else INCOMPLETE when one was not observed, else PASS)",
                record.result
            ),
        );
    }
    findings
}

/// The parts of a schema-valid run.json the rules read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunRecord {
    profile: RunProfile,
    evaluation_file_sha256: String,
    result: String,
    checks: Vec<RunCheck>,
    /// The subject's identity record (absent in older records: unchanged);
    /// the judge re-derives it from artifacts/identity.json.
    #[serde(default)]
    identity: Option<RunIdentity>,
}

#[derive(Deserialize)]
struct RunIdentity {
    changed: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunProfile {
    id: String,
    protocol_revision: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunCheck {
    id: String,
    verdict: Verdict,
    positive: Option<String>,
    negative: Option<String>,
    mutant: Option<String>,
    mutant_killed: Option<bool>,
}

#[derive(Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum Verdict {
    Pass,
    Fail,
    NotObserved,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::NotObserved => "NOT_OBSERVED",
        }
    }
}
