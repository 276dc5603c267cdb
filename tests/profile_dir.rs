//! Profile evaluation directories (spec/profiles.md, "The evaluation directory"):
//! `mcpres validate DIR` and `mcpres pack DIR -o FILE` with the real binary, on
//! directories built here from a committed valid evaluation, artifacts written by
//! the test and a run.json computed from them. One test per rule and code.

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use mcpres::json::canonical;
use mcpres::validate::profile::seal;
use serde_json::{Value, json};

use support::{mcpres, output_text};

/// A profile evaluation directory before it is written: the evaluation, the run
/// record and the artifact files (relative path, bytes).
struct Fixture {
    evaluation: Value,
    run: Value,
    files: Vec<(String, Vec<u8>)>,
}

/// A reason the check's wrong-reason mutant can be met with that is not its
/// control's (so it is killed).
fn mutant_reason(id: &str) -> &'static str {
    match id {
        "released-message-framing" => "MCP_RES_MUTANT_REQUEST_ANSWERED",
        "stderr-diagnostics" => "MCP_RES_STDERR_CARRIES_PROTOCOL",
        _ => "MCP_RES_SYNTAX_GUARD",
    }
}

fn sha(bytes: &[u8]) -> String {
    canonical::sha256_hex(bytes)
}

fn canonical_bytes(value: &Value) -> Vec<u8> {
    canonical::to_vec(value).unwrap()
}

impl Fixture {
    /// The committed bounded stdio-transport evaluation, turned into a runtime one:
    /// each of its three checks gets a positive, a negative and a mutant artifact,
    /// cleanup gets one, and run.json lists them all, plus one check that was not
    /// observed (so the run's result is INCOMPLETE while the evaluation is PASS).
    fn valid() -> Fixture {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/profile/valid/bounded-fixture-incomplete.json");
        let mut evaluation: Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
        let mut files = Vec::new();
        let mut run_checks = Vec::new();
        let mut artifact = |path: String, body: Value| {
            let bytes = canonical_bytes(&body);
            let digest = sha(&bytes);
            files.push((path, bytes));
            digest
        };
        let revision = evaluation["profile"]["protocolRevision"]
            .as_str()
            .unwrap()
            .to_owned();
        for check in evaluation["checks"].as_array_mut().unwrap() {
            let id = check["id"].as_str().unwrap().to_owned();
            let detail = format!("The {id} check saw the expected outcome.");
            // An mcpres directory holds the reasons mcpres's runner gives (its
            // check's declaration and vocabulary), not the reference kit's.
            let (held, refused) =
                mcpres::judge::vocabulary::expected("mcp-res/stdio-transport/v1", &id, &revision)
                    .expect("a declared check");
            for (branch, reason) in [("positive", held), ("negativeControl", refused)] {
                check[branch]["expectedReasonCode"] = json!(reason);
                check[branch]["observedReasonCode"] = json!(reason);
            }
            // Each artifact is an observation as the runner stores it: what
            // `validate` judges the verdicts from again.
            for (branch, file) in [("positive", "positive"), ("negativeControl", "negative")] {
                let o = &check[branch];
                let digest = artifact(
                    format!("artifacts/{id}/{file}.json"),
                    json!({
                        "check": id,
                        "role": file,
                        "expectedOutcome": o["expectedOutcome"],
                        "observedOutcome": o["observedOutcome"],
                        "expectedReasonCode": o["expectedReasonCode"],
                        "observedReasonCode": o["observedReasonCode"],
                        "propertyReached": o["propertyReached"],
                        "detail": detail,
                        "transcript": {},
                    }),
                );
                check[branch]["source"] = json!("RUNTIME_PROBE");
                check[branch]["artifactSha256"] = json!(digest);
            }
            artifact(
                format!("artifacts/{id}/mutant.json"),
                json!({
                    "check": id,
                    "role": "mutant",
                    "expectedOutcome": "REJECT",
                    "observedOutcome": "REJECT",
                    "expectedReasonCode": mutant_reason(&id),
                    "observedReasonCode": mutant_reason(&id),
                    "propertyReached": false,
                    "detail": "the wrong-reason input was refused for another reason",
                    "transcript": {},
                }),
            );
            run_checks.push(json!({
                "id": id,
                "kind": "REQUIRED",
                "verdict": "PASS",
                "reason": check["positive"]["expectedReasonCode"],
                "detail": detail,
                "positive": format!("artifacts/{id}/positive.json"),
                "negative": format!("artifacts/{id}/negative.json"),
                "mutant": format!("artifacts/{id}/mutant.json"),
                "mutantKilled": true,
            }));
        }
        let cleanup = artifact(
            "artifacts/cleanup.json".into(),
            json!({"probes": 9, "probesThatLeftProcesses": [], "adoptedAfterRun": [], "observed": true}),
        );
        evaluation["cleanup"]["observationSha256"] = json!(cleanup);
        evaluation["result"] = json!("PASS");
        seal(&mut evaluation);
        run_checks.push(json!({
            "id": "oversized-line",
            "kind": "REQUIRED",
            "verdict": "NOT_OBSERVED",
            "reason": "MCP_RES_CHECK_NOT_OBSERVED",
            "detail": "The check could not be exercised against this subject.",
            "positive": null,
            "negative": null,
            "mutant": null,
            "mutantKilled": null,
        }));
        let mut fixture = Fixture {
            run: json!({
                "schemaVersion": "mcpres.profile-run/1",
                "profile": {
                    "id": evaluation["profile"]["id"],
                    "protocolRevision": evaluation["profile"]["protocolRevision"],
                },
                "evaluationFileSha256": "",
                "result": "INCOMPLETE",
                "checks": run_checks,
                "artifacts": [],
            }),
            evaluation,
            files,
        };
        fixture.relist();
        fixture
    }

    /// Recompute what run.json records about the files: the evaluation file digest
    /// and the artifact list.
    fn relist(&mut self) {
        self.run["evaluationFileSha256"] = json!(sha(&canonical_bytes(&self.evaluation)));
        self.run["artifacts"] = self
            .files
            .iter()
            .map(|(path, bytes)| json!({"path": path, "sha256": sha(bytes), "bytes": bytes.len()}))
            .collect();
    }

    /// Set `key` of the stored artifact at `path` to `value` and list its new bytes.
    fn edit_artifact(&mut self, path: &str, key: &str, value: Value) {
        let (_, bytes) = self.files.iter_mut().find(|(p, _)| p == path).unwrap();
        let mut doc: Value = serde_json::from_slice(bytes).unwrap();
        doc[key] = value;
        *bytes = canonical_bytes(&doc);
        self.relist();
    }

    /// Reseal the evaluation after an edit and record its new file digest.
    fn reseal(&mut self) {
        seal(&mut self.evaluation);
        self.relist();
    }

    fn write(&self, dir: &Path) {
        fs::create_dir_all(dir).unwrap();
        fs::write(
            dir.join("evaluation.json"),
            canonical_bytes(&self.evaluation),
        )
        .unwrap();
        fs::write(dir.join("run.json"), canonical_bytes(&self.run)).unwrap();
        for (path, bytes) in &self.files {
            let file = dir.join(path);
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(file, bytes).unwrap();
        }
    }

    /// Write into a new temporary directory; returns it and the profile directory.
    fn written(&self) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        self.write(&dir);
        (tmp, dir)
    }
}

/// `mcpres validate --format json DIR`: the exit code and the report.
fn validate(dir: &Path) -> (i32, Value) {
    let out = mcpres(&[
        "validate".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        dir.as_os_str(),
    ]);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("report is JSON ({e}): {}", output_text(&out)));
    (out.status.code().unwrap(), report)
}

/// `mcpres pack DIR -o FILE`.
fn pack(dir: &Path, file: &Path) -> std::process::Output {
    mcpres(&[
        "pack".as_ref(),
        dir.as_os_str(),
        "-o".as_ref(),
        file.as_os_str(),
    ])
}

fn message(report: &Value, index: usize) -> &str {
    report["findings"][index]["message"].as_str().unwrap()
}

fn codes(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_owned())
        .collect()
}

/// Validate `fixture` written out, expecting exit 1 and exactly `expected` codes.
fn expect_codes(dir: &Path, expected: &[&str]) -> Value {
    let (code, report) = validate(dir);
    assert_eq!(codes(&report), expected, "{report:#}");
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["valid"], false);
    assert_eq!(report["diagnostics"], json!([expected[0]]));
    report
}

#[test]
fn a_consistent_directory_is_valid() {
    let (_tmp, dir) = Fixture::valid().written();
    let (code, report) = validate(&dir);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["valid"], true);
    assert_eq!(report["findings"], json!([]));
    // The evaluation's own derived result and scope, as for the single file.
    assert_eq!(report["result"], "PASS");
    assert_eq!(report["claimScope"], "BOUNDED_CHECK_SET");
}

#[test]
fn evaluation_findings_come_first_and_a_claimed_fail_adds_no_result_mismatch() {
    let mut f = Fixture::valid();
    // The runner saw purity's negative control met by the syntax guard (another reason):
    // it records the real reason, result FAIL, and the check FAILs in run.json.
    let id = "stdout-protocol-purity";
    let other = "MCP_RES_SYNTAX_GUARD";
    f.edit_artifact(
        &format!("artifacts/{id}/negative.json"),
        "observedReasonCode",
        json!(other),
    );
    let negative = f
        .files
        .iter()
        .find(|(p, _)| *p == format!("artifacts/{id}/negative.json"))
        .unwrap();
    f.evaluation["checks"][1]["negativeControl"]["artifactSha256"] = json!(sha(&negative.1));
    f.evaluation["checks"][1]["negativeControl"]["observedReasonCode"] = json!(other);
    f.evaluation["result"] = json!("FAIL");
    f.reseal();
    let expected = f.evaluation["checks"][1]["negativeControl"]["expectedReasonCode"].clone();
    let detail = f.run["checks"][1]["detail"].as_str().unwrap().to_owned();
    f.run["checks"][1]["verdict"] = json!("FAIL");
    f.run["checks"][1]["reason"] = json!(other);
    f.run["checks"][1]["detail"] = json!(format!(
        "negative control: expected REJECT ({}), observed REJECT ({other}): {detail}",
        expected.as_str().unwrap()
    ));
    f.run["result"] = json!("FAIL");
    let (_tmp, dir) = f.written();
    let report = expect_codes(&dir, &["MCP_RES_PROFILE_WRONG_REASON"]);
    assert_eq!(
        report["findings"][0]["pointer"],
        "/checks/1/negativeControl/observedReasonCode"
    );
    // The packed single file gives the same single finding.
    let packed = dir.parent().unwrap().join("evaluation.json");
    let out = pack(&dir, &packed);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    expect_codes(&packed, &["MCP_RES_PROFILE_WRONG_REASON"]);
}

#[test]
fn a_passing_check_with_a_failing_observation_is_inconsistent() {
    let mut f = Fixture::valid();
    f.evaluation["checks"][1]["positive"]["observedOutcome"] = json!("REJECT");
    f.evaluation["result"] = json!("FAIL");
    f.reseal();
    let (_tmp, dir) = f.written();
    let report = expect_codes(
        &dir,
        &[
            "MCP_RES_PROFILE_OUTCOME_MISMATCH",
            "MCP_RES_PROFILE_RUN_INCONSISTENT",
            // The stored positive still records ACCEPT, and the result follows it.
            "MCP_RES_VERDICT_NOT_FROM_RECORD",
            "MCP_RES_VERDICT_NOT_FROM_RECORD",
        ],
    );
    assert_eq!(report["findings"][1]["pointer"], "/checks/1/verdict");
    assert_eq!(
        report["findings"][2]["pointer"],
        "/checks/1/positive/observedOutcome"
    );
}

#[test]
fn run_json_missing_is_invalid() {
    let (_tmp, dir) = Fixture::valid().written();
    fs::remove_file(dir.join("run.json")).unwrap();
    let report = expect_codes(&dir, &["MCP_RES_PROFILE_RUN_INVALID"]);
    assert!(message(&report, 0).contains("run.json is not in"));
}

#[test]
fn run_json_outside_its_schema_is_invalid() {
    let mut f = Fixture::valid();
    f.run["checks"][0]["verdict"] = json!("SKIPPED");
    f.run["notes"] = json!("extra key");
    let (_tmp, dir) = f.written();
    let report = validate(&dir).1;
    let found = codes(&report);
    assert!(found.len() >= 2, "{report:#}");
    assert!(found.iter().all(|c| c == "MCP_RES_PROFILE_RUN_INVALID"));
}

#[test]
fn run_json_that_the_strict_reader_refuses_is_invalid() {
    let (_tmp, dir) = Fixture::valid().written();
    let mut bytes = fs::read(dir.join("run.json")).unwrap();
    // A duplicate key: valid JSON to lenient readers, refused by the strict one.
    bytes.pop();
    bytes.extend_from_slice(br#","result":"PASS"}"#);
    fs::write(dir.join("run.json"), bytes).unwrap();
    expect_codes(&dir, &["MCP_RES_PROFILE_RUN_INVALID"]);
}

#[test]
fn evaluation_file_digest_must_match() {
    let mut f = Fixture::valid();
    f.run["evaluationFileSha256"] = json!("0".repeat(64));
    let (_tmp, dir) = f.written();
    let report = expect_codes(&dir, &["MCP_RES_PROFILE_RUN_INCONSISTENT"]);
    assert_eq!(report["findings"][0]["pointer"], "/evaluationFileSha256");
}

#[test]
fn a_missing_artifact_is_reported() {
    let (_tmp, dir) = Fixture::valid().written();
    fs::remove_file(dir.join("artifacts/stdout-protocol-purity/mutant.json")).unwrap();
    let report = expect_codes(&dir, &["MCP_RES_ARTIFACT_MISSING"]);
    assert!(message(&report, 0).starts_with("artifacts/stdout-protocol-purity/mutant.json"));
}

#[test]
fn a_changed_artifact_byte_is_a_digest_mismatch() {
    let (_tmp, dir) = Fixture::valid().written();
    let path = dir.join("artifacts/stderr-diagnostics/negative.json");
    let mut bytes = fs::read(&path).unwrap();
    bytes[2] ^= 0x01;
    fs::write(&path, bytes).unwrap();
    expect_codes(&dir, &["MCP_RES_ARTIFACT_DIGEST_MISMATCH"]);
}

#[test]
fn a_stray_file_is_unlisted() {
    let (_tmp, dir) = Fixture::valid().written();
    fs::write(dir.join("artifacts/notes.txt"), b"scratch").unwrap();
    fs::create_dir(dir.join("empty")).unwrap();
    let report = expect_codes(
        &dir,
        &["MCP_RES_ARTIFACT_UNLISTED", "MCP_RES_ARTIFACT_UNLISTED"],
    );
    let text = report.to_string();
    assert!(text.contains("artifacts/notes.txt"), "{report:#}");
    assert!(text.contains("empty: directory"), "{report:#}");
}

#[cfg(unix)]
#[test]
fn a_symlinked_artifact_is_never_followed() {
    let f = Fixture::valid();
    let (tmp, dir) = f.written();
    // Same bytes, but through a link to a file outside the directory.
    let path = dir.join("artifacts/cleanup.json");
    let outside = tmp.path().join("cleanup-copy.json");
    fs::copy(&path, &outside).unwrap();
    fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&outside, &path).unwrap();
    let report = expect_codes(&dir, &["MCP_RES_ARTIFACT_PATH_INVALID"]);
    assert!(message(&report, 0).contains("symbolic link"));
}

#[test]
fn unsafe_and_repeated_paths_are_refused() {
    let mut f = Fixture::valid();
    let mut list = f.run["artifacts"].as_array().unwrap().clone();
    let mut escaping = list[0].clone();
    escaping["path"] = json!("artifacts/../../escape.json");
    let repeated = list[1].clone();
    list.push(escaping);
    list.push(repeated);
    f.run["artifacts"] = Value::Array(list);
    let (_tmp, dir) = f.written();
    expect_codes(
        &dir,
        &[
            "MCP_RES_ARTIFACT_PATH_INVALID",
            "MCP_RES_ARTIFACT_PATH_COLLISION",
        ],
    );
}

#[test]
fn listing_the_run_record_itself_collides() {
    let mut f = Fixture::valid();
    let mut list = f.run["artifacts"].as_array().unwrap().clone();
    list.push(json!({"path": "RUN.json", "sha256": "0".repeat(64), "bytes": 1}));
    f.run["artifacts"] = Value::Array(list);
    let (_tmp, dir) = f.written();
    expect_codes(&dir, &["MCP_RES_ARTIFACT_PATH_COLLISION"]);
}

#[test]
fn a_cited_digest_no_artifact_has_is_unresolved() {
    let mut f = Fixture::valid();
    // The evaluation cites other bytes for the first check's positive observation.
    f.evaluation["checks"][0]["positive"]["artifactSha256"] = json!(sha(b"other bytes"));
    f.reseal();
    let (_tmp, dir) = f.written();
    let report = expect_codes(
        &dir,
        &[
            "MCP_RES_PROFILE_ARTIFACT_UNRESOLVED",
            // run.json's positive path now names an artifact the evaluation does not cite.
            "MCP_RES_PROFILE_RUN_INCONSISTENT",
            // The stored positive has another digest than the one cited.
            "MCP_RES_VERDICT_NOT_FROM_RECORD",
        ],
    );
    assert_eq!(
        report["findings"][0]["pointer"],
        "/checks/0/positive/artifactSha256"
    );
    assert_eq!(report["findings"][1]["pointer"], "/checks/0/positive");
}

#[test]
fn an_unresolved_cleanup_observation_is_reported() {
    let mut f = Fixture::valid();
    f.evaluation["cleanup"]["observationSha256"] = json!(sha(b"elsewhere"));
    f.reseal();
    let (_tmp, dir) = f.written();
    let report = expect_codes(&dir, &["MCP_RES_PROFILE_ARTIFACT_UNRESOLVED"]);
    assert_eq!(
        report["findings"][0]["pointer"],
        "/cleanup/observationSha256"
    );
}

#[test]
fn a_not_observed_check_that_was_evaluated_is_inconsistent() {
    let mut f = Fixture::valid();
    f.run["checks"][0]["verdict"] = json!("NOT_OBSERVED");
    let (_tmp, dir) = f.written();
    let report = expect_codes(
        &dir,
        &[
            "MCP_RES_PROFILE_RUN_INCONSISTENT",
            "MCP_RES_PROFILE_RUN_INCONSISTENT",
            // Its stored observations give PASS.
            "MCP_RES_VERDICT_NOT_FROM_RECORD",
        ],
    );
    let text = report.to_string();
    assert!(text.contains("is NOT_OBSERVED but evaluation.json evaluates it"));
    assert!(text.contains("does not list as PASS or FAIL: [released-message-framing]"));
}

#[test]
fn a_run_result_of_pass_beside_a_failing_check_is_inconsistent() {
    let mut f = Fixture::valid();
    // Every check observed: the run's result would be PASS...
    f.run["checks"].as_array_mut().unwrap().pop();
    f.run["result"] = json!("PASS");
    let (_tmp, dir) = f.written();
    assert_eq!(validate(&dir).0, 0);
    // ...but one check FAILs (its mutant survived).
    f.run["checks"][2]["verdict"] = json!("FAIL");
    f.run["checks"][2]["mutantKilled"] = json!(false);
    let (_tmp, dir) = f.written();
    // The stored mutant was killed and the check passes: both relabelled
    // fields are not what the record gives.
    let report = expect_codes(
        &dir,
        &[
            "MCP_RES_PROFILE_RUN_INCONSISTENT",
            "MCP_RES_VERDICT_NOT_FROM_RECORD",
            "MCP_RES_VERDICT_NOT_FROM_RECORD",
        ],
    );
    assert_eq!(report["findings"][0]["pointer"], "/result");
}

#[test]
fn a_passing_check_needs_its_mutant_killed() {
    let mut f = Fixture::valid();
    f.run["checks"][1]["mutantKilled"] = json!(false);
    let (_tmp, dir) = f.written();
    let report = expect_codes(
        &dir,
        &[
            "MCP_RES_PROFILE_RUN_INCONSISTENT",
            "MCP_RES_VERDICT_NOT_FROM_RECORD",
        ],
    );
    assert_eq!(report["findings"][0]["pointer"], "/checks/1/mutantKilled");
}

#[test]
fn a_check_path_must_name_a_listed_artifact() {
    let mut f = Fixture::valid();
    f.run["checks"][2]["mutant"] = json!("artifacts/elsewhere/mutant.json");
    f.run["checks"][0]["negative"] = Value::Null;
    let (_tmp, dir) = f.written();
    let report = expect_codes(
        &dir,
        &[
            "MCP_RES_PROFILE_RUN_INCONSISTENT",
            "MCP_RES_PROFILE_RUN_INCONSISTENT",
            // The paths are not where the check's observations are stored.
            "MCP_RES_VERDICT_NOT_FROM_RECORD",
            "MCP_RES_VERDICT_NOT_FROM_RECORD",
        ],
    );
    assert_eq!(report["findings"][0]["pointer"], "/checks/0/negative");
    assert_eq!(report["findings"][1]["pointer"], "/checks/2/mutant");
}

#[test]
fn an_unreadable_evaluation_is_unusable_input() {
    let (_tmp, dir) = Fixture::valid().written();
    fs::write(dir.join("evaluation.json"), b"{\"a\":1,\"a\":2}").unwrap();
    let out = mcpres(&["validate".as_ref(), dir.as_os_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", output_text(&out));
}

#[test]
fn an_artifact_over_the_limit_is_not_read() {
    let (_tmp, dir) = Fixture::valid().written();
    let out = mcpres(&[
        "validate".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        "--max-artifact-bytes".as_ref(),
        "8".as_ref(),
        dir.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", output_text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(codes(&report).iter().all(|c| c == "MCP_RES_INPUT_INVALID"));
}

#[test]
fn pack_writes_the_evaluation_bytes_of_an_intact_directory_only() {
    let f = Fixture::valid();
    let (tmp, dir) = f.written();
    let packed = tmp.path().join("packed.json");
    let out = pack(&dir, &packed);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert_eq!(
        fs::read(&packed).unwrap(),
        fs::read(dir.join("evaluation.json")).unwrap()
    );
    let (code, report) = validate(&packed);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["result"], "PASS");

    // A directory that is not intact is refused, and nothing is written.
    fs::write(dir.join("stray.txt"), b"x").unwrap();
    let refused = tmp.path().join("refused.json");
    let out = pack(&dir, &refused);
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    assert!(support::text(&out.stderr).contains("MCP_RES_ARTIFACT_UNLISTED"));
    assert!(!refused.exists());
}

#[test]
fn a_folder_of_profile_directories_validates_each() {
    let tmp = tempfile::tempdir().unwrap();
    let f = Fixture::valid();
    f.write(&tmp.path().join("a"));
    f.write(&tmp.path().join("b"));
    fs::remove_file(tmp.path().join("b/run.json")).unwrap();
    let out = mcpres(&["validate".as_ref(), tmp.path().as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    let text = output_text(&out);
    assert!(
        text.contains("checked 2 inputs: 1 valid, 1 invalid"),
        "{text}"
    );
    assert!(text.contains("MCP_RES_PROFILE_RUN_INVALID"), "{text}");
}

#[cfg(unix)]
#[test]
fn fifos_in_place_of_run_json_or_an_artifact_are_never_opened() {
    let (_tmp, dir) = Fixture::valid().written();
    let mkfifo = |path: &Path| {
        fs::remove_file(path).unwrap();
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success())
    };
    if !mkfifo(&dir.join("artifacts/cleanup.json")) {
        eprintln!("SKIPPED: mkfifo unavailable");
        return;
    }
    let report = expect_codes(&dir, &["MCP_RES_ARTIFACT_PATH_INVALID"]);
    assert!(message(&report, 0).contains("not a regular file"));
    assert!(mkfifo(&dir.join("run.json")));
    expect_codes(&dir, &["MCP_RES_PROFILE_RUN_INVALID"]);
}
