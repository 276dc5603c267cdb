//! Verdicts judged from the record (issue 32, items 1 and 2): `mcpres validate`
//! judges a profile evaluation directory and a field matrix again from their
//! digest-bound artifacts and refuses a verdict, reason, flag or result the
//! artifacts do not give (`MCP_RES_VERDICT_NOT_FROM_RECORD`), even when every
//! digest was recomputed after the relabelling; `mcpres report` shows the
//! judged verdicts. Every committed evaluation re-judges to exactly what it
//! records.

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use mcpres::bundle::dir::DirLimits;
use mcpres::json::{Limits, canonical};
use mcpres::validate::field_dir::{aggregate, declaration_mismatches, derived_items, leg_result};
use mcpres::validate::profile::seal;
use serde_json::{Value, json};

use support::{mcpres, output_text};

const CODE: &str = "MCP_RES_VERDICT_NOT_FROM_RECORD";

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&fs::read(path).unwrap()).unwrap()
}

/// Write `value` in canonical form (as the runners store every JSON file).
fn write(path: &Path, value: &Value) {
    fs::write(path, canonical::to_vec(value).unwrap()).unwrap();
}

fn file_sha(path: &Path) -> String {
    canonical::sha256_hex(&fs::read(path).unwrap())
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A copy of a committed directory in a temporary directory.
fn copy_of(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("copy");
    copy_dir(&repo(rel), &dir);
    (tmp, dir)
}

/// A real run whose request-identity-metadata mutant met the control's
/// reason: the profile test subject that meets every line it does not serve
/// with silence (`--break silent-to-the-unusual`), so the mutant's request
/// for a method no server has goes unanswered like the null-id control
/// (NOT_OBSERVED, `MCP_RES_WRONG_REASON_MUTANT_SURVIVED`); beside it a check
/// it passes, so that the run has an evaluation.
fn survivor_run() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let subject = repo("tests/subjects/profile_subject.py");
    let out = mcpres(&[
        "profile".as_ref(),
        "run".as_ref(),
        "protocol-revision".as_ref(),
        "--revision".as_ref(),
        "2025-11-25".as_ref(),
        "--checks".as_ref(),
        "request-identity-metadata,supported-version-advertisement".as_ref(),
        "-o".as_ref(),
        dir.as_os_str(),
        "--".as_ref(),
        "python3".as_ref(),
        subject.as_os_str(),
        "--break".as_ref(),
        "silent-to-the-unusual".as_ref(),
    ]);
    let run = read(&dir.join("run.json"));
    let check = run["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "request-identity-metadata")
        .unwrap_or_else(|| panic!("{}", output_text(&out)));
    assert_eq!(
        check["reason"], "MCP_RES_WRONG_REASON_MUTANT_SURVIVED",
        "{run:#}"
    );
    (tmp, dir)
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

fn findings_of<'r>(report: &'r Value, code: &str) -> Vec<&'r Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

/// Every finding of `report` has the new code (the relabelled directory
/// passes every other rule), there is at least one, and the exit is 1.
fn only_not_from_record(code: i32, report: &Value) {
    let all = report["findings"].as_array().unwrap();
    assert!(!all.is_empty(), "{report:#}");
    assert!(all.iter().all(|f| f["code"] == CODE), "{report:#}");
    assert_eq!(report["diagnostics"], json!([CODE]), "{report:#}");
    assert_eq!(code, 1, "{report:#}");
}

/// A profile evaluation directory being relabelled: every change is
/// followed by the digests the directory format binds (the evaluation's
/// seal, run.json's evaluation file digest and artifact list).
struct Relabel {
    dir: PathBuf,
    evaluation: Value,
    run: Value,
}

impl Relabel {
    fn open(dir: &Path) -> Relabel {
        Relabel {
            dir: dir.to_path_buf(),
            evaluation: read(&dir.join("evaluation.json")),
            run: read(&dir.join("run.json")),
        }
    }

    fn index(&self, id: &str) -> usize {
        self.run["checks"]
            .as_array()
            .unwrap()
            .iter()
            .position(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no check {id}"))
    }

    fn artifact(&self, id: &str, role: &str) -> Value {
        read(&self.dir.join(format!("artifacts/{id}/{role}.json")))
    }

    /// Claim check `id` as a PASS in both documents: its observations as
    /// held (the expected outcome and reason, the property reached), its
    /// mutant killed, its reason and detail those of a PASS; then the
    /// evaluated checks, the claim and both results as the labels give them.
    fn pass(&mut self, id: &str) {
        let i = self.index(id);
        let positive = self.artifact(id, "positive");
        let check = &mut self.run["checks"][i];
        check["verdict"] = json!("PASS");
        check["reason"] = positive["expectedReasonCode"].clone();
        check["detail"] = json!(mcpres::judge::profile::truncate(
            positive["detail"].as_str().unwrap(),
            400
        ));
        check["mutantKilled"] = json!(true);
        let held = |role: &str| {
            let a = self.artifact(id, role);
            let path = format!("artifacts/{id}/{role}.json");
            json!({
                "source": "RUNTIME_PROBE",
                "propertyReached": true,
                "expectedOutcome": a["expectedOutcome"],
                "observedOutcome": a["expectedOutcome"],
                "expectedReasonCode": a["expectedReasonCode"],
                "observedReasonCode": a["expectedReasonCode"],
                "artifactSha256": file_sha(&self.dir.join(path)),
            })
        };
        let entry =
            json!({"id": id, "positive": held("positive"), "negativeControl": held("negative")});
        // The evaluated checks stay in run order.
        let order: Vec<Value> = self.run["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].clone())
            .collect();
        let checks = self.evaluation["checks"].as_array_mut().unwrap();
        checks.retain(|c| c["id"] != id);
        checks.push(entry);
        checks.sort_by_key(|c| order.iter().position(|o| *o == c["id"]));
        self.relabel_results();
    }

    /// Claim check `id` as not observed for `reason` (out of the evaluated
    /// checks), then the claim and both results as the labels give them.
    fn not_observed(&mut self, id: &str, reason: &str) {
        let i = self.index(id);
        let check = &mut self.run["checks"][i];
        check["verdict"] = json!("NOT_OBSERVED");
        check["reason"] = json!(reason);
        self.evaluation["checks"]
            .as_array_mut()
            .unwrap()
            .retain(|c| c["id"] != id);
        self.relabel_results();
    }

    /// The evaluated checks, claim and results as the labels give them.
    fn relabel_results(&mut self) {
        let claimed: Vec<Value> = self.evaluation["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].clone())
            .collect();
        let profile = mcpres::profiles::Registry::builtin()
            .unwrap()
            .get(self.evaluation["profile"]["id"].as_str().unwrap())
            .unwrap();
        let rev = self.evaluation["profile"]["protocolRevision"]
            .as_str()
            .unwrap();
        let mut sorted: Vec<&str> = claimed.iter().map(|c| c.as_str().unwrap()).collect();
        sorted.sort_by(|a, b| canonical::cmp_utf16(a, b));
        let full = sorted
            .iter()
            .copied()
            .eq(profile.applicable_check_ids(rev).iter().map(String::as_str));
        self.evaluation["scope"]["claimedCheckIds"] = json!(claimed);
        self.evaluation["scope"]["claim"] = json!(if full {
            "FULL_PROFILE"
        } else {
            "BOUNDED_CHECK_SET"
        });
        let verdicts: Vec<&str> = self.run["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["verdict"].as_str().unwrap())
            .collect();
        let failed = verdicts.contains(&"FAIL");
        self.evaluation["result"] = json!(if failed { "FAIL" } else { "PASS" });
        self.run["result"] = json!(
            if failed || self.evaluation["cleanup"]["observed"] != true {
                "FAIL"
            } else if verdicts.contains(&"NOT_OBSERVED") {
                "INCOMPLETE"
            } else {
                "PASS"
            }
        );
    }

    /// Write both documents with every digest recomputed.
    fn save(&mut self) {
        // The evaluated checks cite their artifacts' digests as they are now.
        for c in self.evaluation["checks"].as_array_mut().unwrap() {
            let id = c["id"].as_str().unwrap().to_owned();
            for (branch, role) in [("positive", "positive"), ("negativeControl", "negative")] {
                let path = self.dir.join(format!("artifacts/{id}/{role}.json"));
                if c.get(branch).is_some() && path.exists() {
                    c[branch]["artifactSha256"] = json!(file_sha(&path));
                }
            }
        }
        seal(&mut self.evaluation);
        write(&self.dir.join("evaluation.json"), &self.evaluation);
        self.run["evaluationFileSha256"] = json!(file_sha(&self.dir.join("evaluation.json")));
        for a in self.run["artifacts"].as_array_mut().unwrap() {
            let path = self.dir.join(a["path"].as_str().unwrap());
            a["sha256"] = json!(file_sha(&path));
            a["bytes"] = json!(fs::metadata(&path).unwrap().len());
        }
        write(&self.dir.join("run.json"), &self.run);
    }
}

/// The pointers (into run.json and evaluation.json) of the new code's findings.
fn pointers(report: &Value) -> Vec<String> {
    findings_of(report, CODE)
        .iter()
        .map(|f| f["pointer"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn every_committed_evaluation_re_judges_to_its_recorded_fields() {
    let dirs = committed_evaluations();
    assert!(dirs.len() >= 20, "{dirs:?}");
    let (limits, dir_limits) = (Limits::default(), DirLimits::default());
    for path in &dirs {
        let dir = mcpres::bundle::profile_dir::load(path, &limits, &dir_limits).unwrap();
        let judged = mcpres::validate::profile_dir::judge(&dir)
            .unwrap_or_else(|| panic!("{} is judged", path.display()));
        assert_eq!(judged.disagreements, [], "{}", path.display());
        // The judge gives every derived field exactly as recorded.
        let run = match &dir.run {
            mcpres::bundle::profile_dir::RunFile::Read(v) => v,
            _ => panic!("{} has a run.json", path.display()),
        };
        assert_eq!(&judged.run, run, "{}", path.display());
        assert_eq!(judged.evaluation, dir.evaluation, "{}", path.display());
        // Every check's observations were read from the stored artifacts.
        let with_artifacts = run["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| !c["positive"].is_null())
            .count();
        assert!(
            dir.stored.len() > with_artifacts,
            "{}: {} stored documents",
            path.display(),
            dir.stored.len()
        );
        // And through the binary: no finding of the new code.
        let (_, report) = validate(path);
        assert_eq!(
            pointers(&report),
            Vec::<String>::new(),
            "{}",
            path.display()
        );
    }
    // The committed matrix: judged from its legs, it is what it records.
    let field =
        mcpres::bundle::field_dir::load(&repo("bundles/field/evidence"), &limits, &dir_limits);
    let judged = mcpres::validate::field_dir::judged_matrix(&field).unwrap();
    assert_eq!(Some(&judged), field.matrix.as_ref().ok());
}

#[test]
fn untouched_copies_validate() {
    let (_tmp, dir) = copy_of("bundles/profiles/reference-stdio-transport-2025-11-25");
    let (code, report) = validate(&dir);
    assert_eq!(code, 0, "{report:#}");
    // Saved again with every digest recomputed, nothing changes.
    Relabel::open(&dir).save();
    assert_eq!(validate(&dir).0, 0);
}

#[test]
fn checks_relabelled_pass_are_refused_although_every_other_rule_holds() {
    // Kinds of check that did not pass: NOT_OBSERVED because the mutant met
    // the control's reason, NOT_OBSERVED because the subject did what the
    // specification leaves open (malformed-output's subject serves invalid
    // UTF-8, oversized-line's a 16 MiB line: MCP_RES_BEHAVIOUR_LEFT_OPEN).
    let (_tmp, dir) = copy_of("bundles/profiles/python-sdk-stdio-transport-2025-11-25");
    let (untouched_code, untouched) = validate(&dir);
    assert_eq!(pointers(&untouched), Vec::<String>::new());
    let mut r = Relabel::open(&dir);
    let relabelled: Vec<String> = r.run["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] != "PASS" && !c["positive"].is_null())
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    // (Since behaviour the specification leaves open is NOT_OBSERVED, not
    // FAIL, the subject has three such checks.)
    assert!(relabelled.len() >= 3, "{relabelled:?}");
    for id in &relabelled {
        r.pass(id);
    }
    r.save();
    // Every digest agrees, the evaluation alone is valid, run.json agrees
    // with it: only the judge refuses it.
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    let text = report.to_string();
    for id in &relabelled {
        let i = r.index(id);
        assert!(
            pointers(&report).contains(&format!("/checks/{i}/verdict")),
            "{id}: {report:#}"
        );
    }
    assert!(text.contains("check malformed-output: its"), "{text}");
    // A failing evaluation relabelled PASS is refused at its result too.
    if untouched_code == 1 {
        assert!(pointers(&report).contains(&"/result".to_owned()));
    }
    // A check whose mutant met the control's reason, relabelled PASS: the
    // surviving mutant is not shown killed.
    let (_tmp, dir) = survivor_run();
    let mut r = Relabel::open(&dir);
    let id = "request-identity-metadata";
    r.pass(id);
    r.save();
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        report.to_string().contains(&format!(
            "check {id}: its mutant.json shows the mutant met with the negative control's reason"
        )),
        "{report:#}"
    );
    let i = r.index(id);
    assert!(pointers(&report).contains(&format!("/checks/{i}/mutantKilled")));
}

#[test]
fn a_single_check_relabelled_pass_is_refused_at_that_check() {
    let (_tmp, dir) = survivor_run();
    let mut r = Relabel::open(&dir);
    r.pass("request-identity-metadata");
    r.save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1);
    let i = r.index("request-identity-metadata");
    let p = pointers(&report);
    for field in ["verdict", "reason", "detail", "mutantKilled"] {
        assert!(
            p.contains(&format!("/checks/{i}/{field}")),
            "{field}: {p:?}"
        );
    }
    // The relabelled check is not one the evaluation may evaluate.
    assert!(p.contains(&"/checks".to_owned()), "{p:?}");
}

#[test]
fn a_changed_reason_is_refused() {
    let (_tmp, dir) = copy_of("bundles/profiles/reference-stdio-transport-2025-11-25");
    let mut r = Relabel::open(&dir);
    r.run["checks"][3]["reason"] = json!("MCP_RES_SOME_OTHER_REASON");
    r.save();
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert_eq!(pointers(&report), ["/checks/3/reason"]);
    let message = findings_of(&report, CODE)[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("run.json /checks/3/reason: recorded \"MCP_RES_SOME_OTHER_REASON\""),
        "{message}"
    );
}

#[test]
fn a_flipped_flag_is_refused() {
    let (_tmp, dir) = copy_of("bundles/profiles/reference-stdio-transport-2025-11-25");
    let mut r = Relabel::open(&dir);
    // The check that could not be exercised has no mutant: its flag is null.
    let i = r.index("child-tree-cleanup");
    assert_eq!(r.run["checks"][i]["mutantKilled"], Value::Null);
    r.run["checks"][i]["mutantKilled"] = json!(false);
    r.save();
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert_eq!(pointers(&report), [format!("/checks/{i}/mutantKilled")]);
    // A kind flipped from REQUIRED to CONDITIONAL.
    let (_tmp, dir) = copy_of("bundles/profiles/reference-stdio-transport-2025-11-25");
    let mut r = Relabel::open(&dir);
    r.run["checks"][0]["kind"] = json!("CONDITIONAL");
    r.save();
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert_eq!(pointers(&report), ["/checks/0/kind"]);
}

#[test]
fn a_verdict_the_artifacts_do_not_give_is_never_shown_by_report() {
    let (tmp, dir) = copy_of("bundles/profiles/python-sdk-stdio-transport-2025-11-25");
    let mut r = Relabel::open(&dir);
    r.pass("malformed-output");
    r.save();
    let page = tmp.path().join("page.html");
    let out = mcpres(&[
        "report".as_ref(),
        dir.as_os_str(),
        "-o".as_ref(),
        page.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    let html = fs::read_to_string(&page).unwrap();
    // The check grid lists the checks the artifacts give as evaluated: the
    // relabelled one is not among them, and no run verdict is PASS for it.
    assert!(
        html.contains("<code>stdout-protocol-purity</code>"),
        "{html}"
    );
    assert!(!html.contains("<code>malformed-output</code>"), "{html}");
    // The run's result as the judge gives it (some checks not observed),
    // never the relabelled one.
    assert!(
        html.contains("run result <code>INCOMPLETE</code>"),
        "{html}"
    );
}

/// The matrix entry of leg `i` recomputed from its directory (digests,
/// items, result) and the summary and overall result, as `mcpres field
/// run` writes them.
fn rebind_leg(matrix_dir: &Path, i: usize) {
    let path = matrix_dir.join("matrix.json");
    let mut matrix = read(&path);
    let leg = &mut matrix["legs"][i];
    let dir = matrix_dir.join(leg["directory"].as_str().unwrap());
    let (evaluation, run) = (
        read(&dir.join("evaluation.json")),
        read(&dir.join("run.json")),
    );
    leg["evaluation"] = json!({
        "evaluationSha256": evaluation["evaluationSha256"],
        "evaluationFileSha256": file_sha(&dir.join("evaluation.json")),
        "runFileSha256": file_sha(&dir.join("run.json")),
    });
    let items = derived_items(&evaluation, &run, leg["transport"].as_str().unwrap());
    let mismatches = declaration_mismatches(&leg["declared"], &items);
    leg["result"] = json!(leg_result(
        run["result"].as_str().unwrap(),
        mismatches.len()
    ));
    leg["declarationMismatches"] = json!(mismatches);
    for (k, v) in items {
        match k.as_str() {
            "platform" => leg["os"]["platform"] = v,
            "checkSet" => {
                leg["checkSet"]["claim"] = v["claim"].clone();
                leg["checkSet"]["claimedCheckIds"] = v["claimedCheckIds"].clone();
            }
            _ => leg[k.as_str()] = v,
        }
    }
    let results: Vec<String> = matrix["legs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["result"].as_str().unwrap().to_owned())
        .collect();
    let (overall, summary) = aggregate(results.iter().map(String::as_str));
    matrix["result"] = json!(overall);
    matrix["summary"] = summary;
    write(&path, &matrix);
}

#[test]
fn a_field_leg_relabelled_from_incomplete_to_pass_is_refused() {
    let (_tmp, root) = copy_of("bundles/field/evidence");
    let (code, report) = validate(&root);
    assert_eq!(code, 0, "{report:#}");
    let matrix = read(&root.join("matrix.json"));
    let i = matrix["legs"]
        .as_array()
        .unwrap()
        .iter()
        .position(|l| l["id"] == "reference-stdio-2025-11-25")
        .unwrap();
    assert_eq!(matrix["legs"][i]["result"], "INCOMPLETE");
    // Its one check not observed (child-tree-cleanup) stored nothing. Store
    // observations for it whose mutant met the control's reason (so the
    // record gives NOT_OBSERVED again), then label it PASS everywhere.
    let leg = root.join("legs/reference-stdio-2025-11-25");
    let id = "child-tree-cleanup";
    let mut r = Relabel::open(&leg);
    let observation = |role: &str, reached: bool, reason: &str| {
        json!({
            "check": id,
            "role": role,
            "expectedOutcome": "TERMINATE",
            "observedOutcome": "TERMINATE",
            "expectedReasonCode": if role == "mutant" { "MCP_RES_SYNTAX_GUARD" } else { reason },
            "observedReasonCode": reason,
            "propertyReached": reached,
            "detail": format!("the {role} probe"),
            "transcript": {},
        })
    };
    fs::create_dir_all(leg.join(format!("artifacts/{id}"))).unwrap();
    for (role, doc) in [
        (
            "positive",
            observation("positive", true, "MCP_RES_CHILD_TREE_EMPTY_AFTER_EXIT"),
        ),
        (
            "negative",
            observation("negative", true, "MCP_RES_CHILD_TREE_TERMINATED"),
        ),
        (
            "mutant",
            observation("mutant", true, "MCP_RES_CHILD_TREE_TERMINATED"),
        ),
    ] {
        let rel = format!("artifacts/{id}/{role}.json");
        write(&leg.join(&rel), &doc);
        r.run["artifacts"]
            .as_array_mut()
            .unwrap()
            .push(json!({"path": rel, "sha256": "", "bytes": 0}));
        let at = r.index(id);
        r.run["checks"][at][role] = json!(rel);
    }
    r.pass(id);
    assert_eq!(r.run["result"], "PASS");
    r.save();
    rebind_leg(&root, i);
    let matrix = read(&root.join("matrix.json"));
    assert_eq!(matrix["legs"][i]["result"], "PASS");
    let (code, report) = validate(&root);
    only_not_from_record(code, &report);
    let p = pointers(&report);
    assert!(p.contains(&format!("/legs/{i}/directory")), "{p:?}");
    assert!(p.contains(&format!("/legs/{i}/result")), "{p:?}");
    assert!(p.contains(&format!("/legs/{i}/notObservedChecks")), "{p:?}");
    assert!(p.contains(&"/summary".to_owned()), "{p:?}");
    let text = report.to_string();
    assert!(
        text.contains("legs/reference-stdio-2025-11-25/run.json /checks/11/verdict"),
        "{text}"
    );
    // The report shows the leg as its artifacts judge it.
    let page = root.parent().unwrap().join("field.html");
    let out = mcpres(&[
        "report".as_ref(),
        root.as_os_str(),
        "-o".as_ref(),
        page.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    let html = fs::read_to_string(&page).unwrap();
    let row = html
        .split("<tr class=\"leg\">")
        .find(|r| r.contains("<code>reference-stdio-2025-11-25</code>"))
        .unwrap();
    assert!(row.contains(">INCOMPLETE</td>"), "{row}");
}

#[test]
fn a_mutant_relabelled_as_met_by_the_syntax_guard_is_refused_from_its_bytes() {
    // released-message-framing's mutant (a request for a method no server
    // has) was answered -32601 by the Python SDK: killed. Relabelled as
    // refused by the syntax guard, its stored stdout holds no -32700 error
    // and no null-id answer.
    let leg = "bundles/profiles/python-sdk-stdio-transport-2025-11-25";
    let id = "released-message-framing";
    let (_tmp, dir) = copy_of(leg);
    let path = dir.join(format!("artifacts/{id}/mutant.json"));
    let mut mutant = read(&path);
    assert_eq!(
        mutant["observedReasonCode"], "MCP_RES_MUTANT_REQUEST_ANSWERED",
        "{mutant}"
    );
    assert_eq!(mutant["propertyReached"], false);
    mutant["observedReasonCode"] = json!("MCP_RES_SYNTAX_GUARD");
    write(&path, &mutant);
    Relabel::open(&dir).save();
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    let raw: Vec<String> = messages(&report)
        .into_iter()
        .filter(|m| m.starts_with(&format!("artifacts/{id}/mutant.json /observedReasonCode")))
        .collect();
    // The syntax guard is a reason this mutant (a request for a method no
    // server has) is never given: refused as outside its check's vocabulary.
    assert!(
        raw.iter().any(|m| m.contains("never records")),
        "{report:#}"
    );
    // Relabelled as met with the control's reason (a survivor, so the check
    // would be NOT_OBSERVED and hide its verdict): the stored stdout answers
    // the mutant's request.
    let (_tmp, dir) = copy_of(leg);
    let path = dir.join(format!("artifacts/{id}/mutant.json"));
    let mut mutant = read(&path);
    mutant["observedOutcome"] = json!("NO_EFFECT");
    mutant["observedReasonCode"] = json!("MCP_RES_FRAMING_EMBEDDED_NEWLINE_REFUSED");
    mutant["propertyReached"] = json!(true);
    write(&path, &mutant);
    let mut r = Relabel::open(&dir);
    r.not_observed(id, "MCP_RES_WRONG_REASON_MUTANT_SURVIVED");
    r.save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    assert!(
        messages(&report)
            .iter()
            .any(|m| m.contains("its stored stdout answers the mutant's request")),
        "{report:#}"
    );
    // A mutant that did not reach the property cannot be relabelled as one
    // that did.
    let (_tmp, dir) = copy_of(leg);
    let path = dir.join(format!("artifacts/{id}/mutant.json"));
    let mut mutant = read(&path);
    mutant["propertyReached"] = json!(true);
    write(&path, &mutant);
    Relabel::open(&dir).save();
    let (_, report) = validate(&dir);
    assert!(
        report.to_string().contains(&format!(
            "artifacts/{id}/mutant.json /propertyReached: recorded true"
        )),
        "{report:#}"
    );
}

/// `mcpres profile run` of stdout-protocol-purity against the profile test
/// subject run by `sh -c SCRIPT` (`{subject}` in it names the subject).
fn run_purity(out: &Path, script: &str) -> std::process::Output {
    let subject = repo("tests/subjects/profile_subject.py");
    let script = script.replace("{subject}", &subject.display().to_string());
    mcpres(&[
        "profile",
        "run",
        "mcp-res/stdio-transport/v1",
        "--revision",
        "2025-11-25",
        "--checks",
        "stdout-protocol-purity",
        "-o",
        out.to_str().unwrap(),
        "--",
        "/bin/sh",
        "-c",
        &script,
    ])
}

#[test]
fn stdout_written_as_the_subject_exits_is_judged_from_the_whole_transcript() {
    let tmp = tempfile::tempdir().unwrap();
    // The twin: the subject alone passes.
    let twin = tmp.path().join("twin");
    let out = run_purity(&twin, "exec python3 {subject}");
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    let run = read(&twin.join("run.json"));
    assert_eq!(run["checks"][0]["verdict"], "PASS", "{run:#}");
    assert_eq!(validate(&twin).0, 0);
    // The adversary prints a line on stdout once the subject has exited: the
    // stored positive ends with it, and the check fails on it.
    let adversary = tmp.path().join("adversary");
    let out = run_purity(&adversary, "python3 {subject}; echo server stopped");
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    let run = read(&adversary.join("run.json"));
    assert_eq!(run["checks"][0]["verdict"], "FAIL", "{run:#}");
    assert_eq!(run["checks"][0]["reason"], "MCP_RES_STDOUT_POLLUTED");
    let positive = read(&adversary.join("artifacts/stdout-protocol-purity/positive.json"));
    assert_eq!(positive["observedReasonCode"], "MCP_RES_STDOUT_POLLUTED");
    assert!(positive.to_string().contains("server stopped"));
    // What the runner wrote is what the judge gives.
    let (_, report) = validate(&adversary);
    assert_eq!(pointers(&report), Vec::<String>::new(), "{report:#}");
    // Relabelled as held (and the check PASS, digests recomputed), the
    // positive's own bytes refuse it.
    let path = adversary.join("artifacts/stdout-protocol-purity/positive.json");
    let mut doc = read(&path);
    doc["observedReasonCode"] = json!("MCP_RES_STDOUT_PROTOCOL_ONLY");
    write(&path, &doc);
    let mut r = Relabel::open(&adversary);
    r.pass("stdout-protocol-purity");
    r.save();
    let (code, report) = validate(&adversary);
    only_not_from_record(code, &report);
    let text = report.to_string();
    assert!(
        text.contains("artifacts/stdout-protocol-purity/positive.json /observedReasonCode"),
        "{text}"
    );
    assert!(
        pointers(&report).contains(&"/checks/0/verdict".to_owned()),
        "{report:#}"
    );
}

#[test]
fn oauth_evaluations_are_judged_from_their_record_too() {
    let (limits, dir_limits) = (Limits::default(), DirLimits::default());
    for name in ["reference", "python-sdk"] {
        let path = repo(&format!("bundles/oauth/{name}"));
        let dir = mcpres::bundle::profile_dir::load(&path, &limits, &dir_limits).unwrap();
        let mcpres::bundle::profile_dir::RunFile::Read(run) = &dir.run else {
            panic!("{name} has a run.json");
        };
        assert!(!dir.stored.is_empty(), "{name}");
        assert_eq!(
            mcpres::validate::profile_dir::judge_oauth(&dir, run),
            [],
            "{name}"
        );
        let (_, report) = validate(&path);
        assert_eq!(pointers(&report), Vec::<String>::new(), "{name}");
    }
    // A check that failed (its refusal named no OAuth reason), relabelled PASS.
    let (_tmp, dir) = copy_of("bundles/oauth/python-sdk");
    let mut run = read(&dir.join("run.json"));
    let i = run["checks"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["id"] == "issuer-binding")
        .unwrap();
    assert_eq!(run["checks"][i]["verdict"], "FAIL");
    run["checks"][i]["verdict"] = json!("PASS");
    write(&dir.join("run.json"), &run);
    let (code, report) = validate(&dir);
    assert_eq!(code, 1);
    assert_eq!(pointers(&report), [format!("/checks/{i}/verdict")]);
    // A passing check's mutant relabelled as having survived: the committed
    // reference evaluation is valid, its relabelled copy is not.
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    assert_eq!(validate(&dir).0, 0);
    let mut run = read(&dir.join("run.json"));
    run["checks"][0]["mutantKilled"] = json!(false);
    write(&dir.join("run.json"), &run);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert_eq!(pointers(&report), ["/checks/0/mutantKilled"]);
}

/// A Streamable HTTP FAIL hidden as a control whose valid twin was refused:
/// the subject served a foreign Origin (no-unauthorized-redirect FAIL), and
/// the relabelled negative says the twin sent just before it was refused
/// (NOT_OBSERVED, `MCP_RES_VALID_TWIN_REFUSED`), with the check, the claim,
/// both results and every digest following. The stored connection bytes hold
/// the twin's accepting result, so `validate` refuses the directory.
#[test]
fn an_http_failure_relabelled_as_a_refused_twin_is_refused_from_its_bytes() {
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/everything-http-2025-11-25");
    let id = "no-unauthorized-redirect";
    let path = dir.join(format!("artifacts/{id}/negative.json"));
    let mut negative = read(&path);
    assert!(
        negative
            .pointer("/transcript/observation/twin/id")
            .is_some(),
        "{negative}"
    );
    assert_eq!(negative["observedOutcome"], "ACCEPT");
    negative["observedOutcome"] = json!("NOT_OBSERVED");
    negative["observedReasonCode"] = json!("MCP_RES_VALID_TWIN_REFUSED");
    write(&path, &negative);
    let mut r = Relabel::open(&dir);
    r.not_observed(id, "MCP_RES_VALID_TWIN_REFUSED");
    r.save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let raw: Vec<&str> = findings_of(&report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| m.contains("accepting result for the valid twin"))
        .collect();
    assert_eq!(raw.len(), 1, "{report:#}");
    // Untouched, the same leg validates as its run.json says (a FAIL).
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/everything-http-2025-11-25");
    let (_, report) = validate(&dir);
    assert!(findings_of(&report, CODE).is_empty(), "{report:#}");
}

/// A Streamable HTTP control the subject served (server-everything answers a
/// foreign `Origin` with a result), relabelled as the refusal it should have
/// been and claimed as a PASS, with every digest following. The control's
/// own request id is in its transcript, and the stored connection bytes hold
/// the result for it, so `validate` refuses the directory.
#[test]
fn an_http_control_served_in_its_bytes_cannot_be_relabelled_as_refused() {
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/everything-http-2025-11-25");
    let id = "no-unauthorized-redirect";
    let path = dir.join(format!("artifacts/{id}/negative.json"));
    let mut negative = read(&path);
    assert!(
        negative
            .pointer("/transcript/observation/requestId")
            .is_some(),
        "{negative}"
    );
    assert_eq!(negative["observedOutcome"], "ACCEPT", "{negative}");
    negative["observedOutcome"] = negative["expectedOutcome"].clone();
    negative["observedReasonCode"] = negative["expectedReasonCode"].clone();
    negative["propertyReached"] = json!(true);
    write(&path, &negative);
    let mut r = Relabel::open(&dir);
    r.pass(id);
    r.save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let raw: Vec<&str> = findings_of(&report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| m.contains("received bytes answer the control"))
        .collect();
    assert_eq!(raw.len(), 1, "{report:#}");
}

/// request-response-binding's control has a null id, recorded as
/// `requestId: null`: the judge finds the one connection that sent a
/// request with a null id and reads its answer. A Python SDK server's
/// answer to it (not a 400 or -32600) relabelled as the check's refusal is
/// refused from those bytes; the reference server's own refusal stands.
#[test]
fn a_null_id_control_relabelled_as_refused_is_refused_from_its_bytes() {
    let id = "request-response-binding";
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/python-sdk-http-2025-11-25");
    let path = dir.join(format!("artifacts/{id}/negative.json"));
    let mut negative = read(&path);
    assert_eq!(
        negative.pointer("/transcript/observation/requestId"),
        Some(&Value::Null),
        "{negative}"
    );
    assert_ne!(
        negative["observedReasonCode"],
        negative["expectedReasonCode"]
    );
    negative["observedOutcome"] = negative["expectedOutcome"].clone();
    negative["observedReasonCode"] = negative["expectedReasonCode"].clone();
    negative["propertyReached"] = json!(true);
    write(&path, &negative);
    let mut r = Relabel::open(&dir);
    r.pass(id);
    r.save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let raw: Vec<&str> = findings_of(&report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| m.contains(id) && m.contains("received bytes answer the control"))
        .collect();
    assert_eq!(raw.len(), 1, "{report:#}");
    // The reference server's refusal (400) is what its bytes show.
    let (_tmp, honest) = copy_of("bundles/field/evidence/legs/reference-http-2025-11-25");
    let negative = read(&honest.join(format!("artifacts/{id}/negative.json")));
    assert_eq!(
        negative["observedReasonCode"],
        negative["expectedReasonCode"]
    );
    let (code, report) = validate(&honest);
    assert_eq!(code, 0, "{report:#}");
}

/// buffering-detection's positive is read from the arrival times of its
/// stored chunks: the reference server's events, re-timed so that every
/// chunk of the call's connection arrives at once (digests recomputed),
/// show buffering, and `validate` refuses the PASS its label still claims.
#[test]
fn events_whose_stored_chunks_arrive_at_once_are_not_flushed_incrementally() {
    let id = "buffering-detection";
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/reference-http-2025-11-25");
    let path = dir.join(format!("artifacts/{id}/positive.json"));
    let mut positive = read(&path);
    assert_eq!(
        positive["observedReasonCode"],
        "MCP_RES_HTTP_EVENTS_FLUSHED_INCREMENTALLY"
    );
    let events = positive["transcript"]["events"].as_array_mut().unwrap();
    // The call's connection: the last one that received bytes.
    let conn = events
        .iter()
        .filter(|e| e["stream"] == "received")
        .filter_map(|e| e["connection"].as_u64())
        .max()
        .unwrap();
    let mut retimed = 0;
    for e in events.iter_mut() {
        if e["stream"] == "received" && e["connection"].as_u64() == Some(conn) {
            e["atMs"] = json!(1000);
            retimed += 1;
        }
    }
    assert!(retimed > 1, "{positive}");
    write(&path, &positive);
    let mut r = Relabel::open(&dir);
    r.save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let raw: Vec<&str> = findings_of(&report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| m.contains(id) && m.contains("stored chunks show"))
        .collect();
    assert_eq!(raw.len(), 1, "{report:#}");
}

/// A positive claimed as held whose stored bytes never show the
/// conversation open (every stdout chunk of its transcript emptied, every
/// digest following): the judge reads the opening from stdin and stdout,
/// finds no result for it, and `validate` refuses the PASS.
#[test]
fn a_positive_whose_bytes_never_open_the_conversation_is_refused() {
    let (_tmp, dir) = copy_of("bundles/profiles/reference-stdio-transport-2025-11-25");
    let id = "released-message-framing";
    let path = dir.join(format!("artifacts/{id}/positive.json"));
    let mut positive = read(&path);
    assert_eq!(positive["observedOutcome"], positive["expectedOutcome"]);
    let mut emptied = 0;
    for c in positive["transcript"]["chunks"].as_array_mut().unwrap() {
        if c["stream"] == "stdout" {
            c["text"] = json!("");
            emptied += 1;
        }
    }
    assert!(emptied > 0, "{positive}");
    // Its waits would say first that bytes they read are missing
    // (`each_wait_is_read_again_from_the_stdout_it_had_read`): without them,
    // as a record made before waits were kept, the opening is what is read.
    positive["transcript"]
        .as_object_mut()
        .unwrap()
        .remove("replies");
    write(&path, &positive);
    let mut r = Relabel::open(&dir);
    r.save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let raw: Vec<&str> = findings_of(&report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| m.contains("no opening request"))
        .collect();
    assert_eq!(raw.len(), 1, "{report:#}");
}

/// A Streamable HTTP positive claimed as accepted whose stored connection
/// bytes answer none of the requests it sent (every received chunk emptied,
/// every digest following): `validate` refuses the PASS.
#[test]
fn an_http_positive_with_nothing_answered_in_its_bytes_is_refused() {
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/reference-http-2025-11-25");
    let id = "content-type";
    let path = dir.join(format!("artifacts/{id}/positive.json"));
    let mut positive = read(&path);
    assert_eq!(positive["observedOutcome"], "ACCEPT", "{positive}");
    let mut emptied = 0;
    for e in positive["transcript"]["events"].as_array_mut().unwrap() {
        if e["stream"] == "received" {
            e["text"] = json!("");
            emptied += 1;
        }
    }
    assert!(emptied > 0, "{positive}");
    write(&path, &positive);
    let mut r = Relabel::open(&dir);
    r.save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let raw: Vec<&str> = findings_of(&report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| m.contains("answer none of the requests sent"))
        .collect();
    assert_eq!(raw.len(), 1, "{report:#}");
}

/// An OAuth refusal credited to the property it does not name: the Python
/// SDK's resource server refuses a token from another issuer with the same
/// 401 it gives any bad token ("Authentication required", no reason the
/// profile can tell apart), so `issuer-binding` is a FAIL. Relabelled as the
/// check's own refusal (the artifact, the case and every digest following),
/// the judge reads the 401 again from the stored connection bytes and
/// refuses the directory. Untouched, the same directory gets no such
/// finding (`oauth_evaluations_are_judged_from_their_record_too`).
#[test]
fn an_oauth_refusal_relabelled_as_the_checks_own_is_refused_from_its_bytes() {
    let (_tmp, dir) = copy_of("bundles/oauth/python-sdk");
    let id = "issuer-binding";
    let path = dir.join(format!("artifacts/{id}/negative.json"));
    let mut negative = read(&path);
    assert_eq!(
        negative["observedReasonCode"], "MCP_RES_OAUTH_OTHER_REFUSAL",
        "{negative}"
    );
    negative["observedReasonCode"] = negative["expectedReasonCode"].clone();
    write(&path, &negative);
    let sha = file_sha(&path);
    let mut evaluation = read(&dir.join("evaluation.json"));
    let case = evaluation["cases"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["id"] == id)
        .unwrap();
    case["negative"]["observedReasonCode"] = negative["expectedReasonCode"].clone();
    case["negative"]["artifactSha256"] = json!(sha);
    seal(&mut evaluation);
    write(&dir.join("evaluation.json"), &evaluation);
    let mut run = read(&dir.join("run.json"));
    run["evaluationFileSha256"] = json!(file_sha(&dir.join("evaluation.json")));
    for a in run["artifacts"].as_array_mut().unwrap() {
        let p = dir.join(a["path"].as_str().unwrap());
        a["sha256"] = json!(file_sha(&p));
        a["bytes"] = json!(fs::metadata(&p).unwrap().len());
    }
    write(&dir.join("run.json"), &run);
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let from_bytes: Vec<&str> = findings_of(&report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| {
            m.contains("stored connection bytes answer the token's request with status 401")
        })
        .collect();
    assert_eq!(from_bytes.len(), 1, "{report:#}");
    assert!(
        from_bytes[0].contains(&format!("artifacts/{id}/negative.json")),
        "{report:#}"
    );
}

/// Replace, in the last received chunk of `artifact` that starts a
/// response, the status line `from` by `to` (the body follows as stored).
fn restatus(artifact: &mut Value, from: &str, to: &str) {
    let events = artifact["transcript"]["events"].as_array_mut().unwrap();
    let e = events
        .iter_mut()
        .rev()
        .find(|e| {
            e["stream"] == "received" && e["text"].as_str().is_some_and(|t| t.starts_with(from))
        })
        .unwrap_or_else(|| panic!("no received chunk starts with {from}"));
    let text = e["text"].as_str().unwrap().replacen(from, to, 1);
    e["text"] = json!(text);
}

/// The content-type control of the reference server over HTTP, refused
/// with 415 as the check asks. Its stored status line made a 500 (the
/// label still crediting the refusal, every digest following): the judge
/// reads the control's answer on its own connection again and refuses the
/// directory, since a 500 is not the check's refusal. Untouched, the leg
/// re-judges to what it records (`every_committed_evaluation_re_judges...`).
#[test]
fn an_http_control_answered_500_cannot_be_credited_as_the_checks_refusal() {
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/reference-http-2025-11-25");
    let id = "content-type";
    let path = dir.join(format!("artifacts/{id}/negative.json"));
    let mut negative = read(&path);
    assert_eq!(
        negative["observedReasonCode"], negative["expectedReasonCode"],
        "{negative}"
    );
    restatus(
        &mut negative,
        "HTTP/1.1 415 Unsupported Media Type",
        "HTTP/1.1 500 Internal Server Error",
    );
    write(&path, &negative);
    Relabel::open(&dir).save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let raw: Vec<&str> = findings_of(&report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| m.contains("answer the control with MCP_RES_HTTP_STATUS_500"))
        .collect();
    assert_eq!(raw.len(), 1, "{report:#}");
    // A 400 is one of the statuses the check takes as its refusal: still
    // credited.
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/reference-http-2025-11-25");
    let mut negative = read(&path_in(&dir, id, "negative"));
    restatus(
        &mut negative,
        "HTTP/1.1 415 Unsupported Media Type",
        "HTTP/1.1 400 Bad Request",
    );
    write(&path_in(&dir, id, "negative"), &negative);
    Relabel::open(&dir).save();
    let (code, report) = validate(&dir);
    assert!(findings_of(&report, CODE).is_empty(), "{report:#}");
    assert_eq!(code, 0, "{report:#}");
}

fn path_in(dir: &Path, id: &str, role: &str) -> PathBuf {
    dir.join(format!("artifacts/{id}/{role}.json"))
}

/// The content-type mutant (the liveness request with a syntax defect) was
/// met by the syntax guard (400 with -32700). Its stored answer made the
/// check's own refusal (a 415 with no parse error) while the label still
/// says the syntax guard, so the mutant would count as killed: the judge
/// reads the mutant's connection again and refuses the directory.
#[test]
fn an_http_mutant_met_as_the_control_cannot_be_labelled_killed() {
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/reference-http-2025-11-25");
    let id = "content-type";
    let path = path_in(&dir, id, "mutant");
    let mut mutant = read(&path);
    assert_eq!(
        mutant["observedReasonCode"], "MCP_RES_SYNTAX_GUARD",
        "{mutant}"
    );
    restatus(
        &mut mutant,
        "HTTP/1.1 400 Bad Request",
        "HTTP/1.1 415 Unsupported Media Type",
    );
    let events = mutant["transcript"]["events"].as_array_mut().unwrap();
    let e = events
        .iter_mut()
        .rev()
        .find(|e| e["stream"] == "received")
        .unwrap();
    let text = e["text"].as_str().unwrap().replace("-32700", "-32000");
    e["text"] = json!(text);
    write(&path, &mutant);
    Relabel::open(&dir).save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let raw: Vec<&str> = findings_of(&report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| {
            m.contains(
                "answer the defective request with MCP_RES_HTTP_UNSUPPORTED_CONTENT_TYPE_REFUSED",
            )
        })
        .collect();
    assert_eq!(raw.len(), 1, "{report:#}");
}

/// Every digest of an OAuth-boundary directory recomputed after its
/// artifacts were edited: each case's three artifact digests, the
/// evaluation's seal, run.json's evaluation file digest and artifact list.
fn rebind_oauth(dir: &Path) {
    let mut evaluation = read(&dir.join("evaluation.json"));
    for case in evaluation["cases"].as_array_mut().unwrap() {
        let id = case["id"].as_str().unwrap().to_owned();
        for (branch, role) in [
            ("positive", "positive"),
            ("negative", "negative"),
            ("wrongReasonMutant", "mutant"),
        ] {
            let path = dir.join(format!("artifacts/{id}/{role}.json"));
            case[branch]["artifactSha256"] = json!(file_sha(&path));
        }
    }
    evaluation["cleanup"]["observationSha256"] =
        json!(file_sha(&dir.join("artifacts/cleanup.json")));
    seal(&mut evaluation);
    write(&dir.join("evaluation.json"), &evaluation);
    let mut run = read(&dir.join("run.json"));
    run["evaluationFileSha256"] = json!(file_sha(&dir.join("evaluation.json")));
    for a in run["artifacts"].as_array_mut().unwrap() {
        let p = dir.join(a["path"].as_str().unwrap());
        a["sha256"] = json!(file_sha(&p));
        a["bytes"] = json!(fs::metadata(&p).unwrap().len());
    }
    write(&dir.join("run.json"), &run);
}

/// The messages of the new code's findings.
fn messages(report: &Value) -> Vec<String> {
    findings_of(report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str().map(str::to_owned))
        .collect()
}

/// Append a stderr chunk holding `text` to a stored subject transcript.
fn subject_wrote(server: &Path, text: &str) {
    let mut doc = read(server);
    let at = doc["chunks"]
        .as_array()
        .unwrap()
        .last()
        .map_or(0, |c| c["atMs"].as_u64().unwrap());
    doc["chunks"].as_array_mut().unwrap().push(json!({
        "atMs": at, "bytes": text.len(), "stream": "stderr", "text": text
    }));
    write(server, &doc);
}

/// The reference resource server's token-storage-omission, with the
/// subject's stored stderr made to hold a token (redacted, as every stored
/// token is) while no observation counts one: the positive is judged
/// `MCP_RES_OAUTH_TOKEN_STORED` and the check's PASS refused. The honest
/// twin (untouched) re-judges to its PASS
/// (`oauth_evaluations_are_judged_from_their_record_too`).
#[test]
fn a_token_in_the_stored_output_of_a_storage_check_is_never_a_pass() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let id = "token-storage-omission";
    subject_wrote(
        &dir.join(format!("artifacts/{id}/server.json")),
        "debug: authorization Bearer <synthetic-bearer>\n",
    );
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    let m = messages(&report);
    assert!(
        m.iter()
            .any(|m| m.contains("holds 1 redacted token(s) in the subject's output")),
        "{report:#}"
    );
    let run = read(&dir.join("run.json"));
    let i = run["checks"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["id"] == id)
        .unwrap();
    assert!(
        pointers(&report).contains(&format!("/checks/{i}/verdict")),
        "{report:#}"
    );
}

/// A storage finding relabelled away: the positive's own observation counts
/// a token in the subject's output (and the stored output holds it), but
/// its label says the token was simply accepted. Refused; and the reverse
/// (counts that the stored output does not bear) is refused too.
#[test]
fn a_counted_token_relabelled_as_accepted_is_refused() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let id = "token-storage-omission";
    let positive = dir.join(format!("artifacts/{id}/positive.json"));
    let mut doc = read(&positive);
    doc["transcript"]["observation"]["tokenOccurrencesInSubjectOutput"] = json!(1);
    write(&positive, &doc);
    subject_wrote(
        &dir.join(format!("artifacts/{id}/server.json")),
        "<synthetic-bearer>\n",
    );
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "with 1 occurrence(s) of the token counted in what the subject wrote, which reads as ACCEPT MCP_RES_OAUTH_TOKEN_STORED"
        )),
        "{report:#}"
    );
    // Counts without the stored output to bear them.
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let mut doc = read(&dir.join(format!("artifacts/{id}/negative.json")));
    doc["transcript"]["observation"]["tokenOccurrencesInSubjectOutput"] = json!(2);
    doc["observedReasonCode"] = json!("MCP_RES_OAUTH_TOKEN_STORED");
    write(&dir.join(format!("artifacts/{id}/negative.json")), &doc);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    assert!(
        messages(&report)
            .iter()
            .any(|m| m.contains("its stored server.json holds none")),
        "{report:#}"
    );
}

/// scope-minimization's positive credits an acceptance only when the token
/// endpoint's stored answer authorized exactly the scopes requested: the
/// reference run's grant made to authorize more (`mcp admin`) is refused.
#[test]
fn a_grant_wider_than_requested_is_not_credited_as_minimal() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let path = dir.join("artifacts/scope-minimization/positive.json");
    let mut doc = read(&path);
    let grant = doc["transcript"]["observation"]["grant"]
        .as_array_mut()
        .unwrap();
    let token = grant
        .iter_mut()
        .find_map(|s| s.get_mut("token"))
        .expect("a token step");
    token["scope"] = json!("mcp admin");
    write(&path, &doc);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report)
            .iter()
            .any(|m| m.contains("the token endpoint's stored answer authorized")),
        "{report:#}"
    );
}

/// A refusal whose stored answer carries the (redacted) token in a header,
/// labelled as a clean refusal: sanitized-authorization-errors is judged
/// `MCP_RES_OAUTH_ERROR_ECHOES_TOKEN` from the bytes.
#[test]
fn a_refusal_that_echoes_the_token_in_its_stored_bytes_is_not_sanitized() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let path = dir.join("artifacts/sanitized-authorization-errors/negative.json");
    let mut doc = read(&path);
    let events = doc["transcript"]["transcript"]["events"]
        .as_array_mut()
        .unwrap();
    let e = events
        .iter_mut()
        .find(|e| {
            e["stream"] == "received"
                && e["text"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("HTTP/1.1 401"))
        })
        .expect("a stored 401");
    let text = e["text"].as_str().unwrap().replacen(
        "\r\n",
        "\r\nx-debug-token: <synthetic-bearer>\r\n",
        1,
    );
    e["bytes"] = json!(text.len());
    e["text"] = json!(text);
    write(&path, &doc);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report)
            .iter()
            .any(|m| m.contains("MCP_RES_OAUTH_ERROR_ECHOES_TOKEN")),
        "{report:#}"
    );
}

/// `privacy.evidenceContainsCredentialMaterial` is judged from the stored
/// artifacts: a raw JSON web token written into a subject's stored output
/// (every digest following) while the flag says none is refused.
#[test]
fn credential_material_in_stored_evidence_contradicts_a_clean_privacy_flag() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    subject_wrote(
        &dir.join("artifacts/access-token-audience/server.json"),
        "token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl\n",
    );
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert_eq!(
        pointers(&report),
        ["/privacy/evidenceContainsCredentialMaterial"],
        "{report:#}"
    );
}

/// executable-identity from its stored paths and digests: a positive whose
/// stored running executable is another program than the one launched,
/// labelled as identified, is refused; a control whose two stored digests
/// are equal, labelled as a changed digest, is refused.
#[test]
fn executable_identity_is_read_from_its_stored_paths_and_digests() {
    let leg = "bundles/profiles/python-sdk-stdio-transport-2025-11-25";
    let (_tmp, dir) = copy_of(leg);
    let id = "executable-identity";
    let path = dir.join(format!("artifacts/{id}/positive.json"));
    let mut doc = read(&path);
    assert_eq!(doc["observedReasonCode"], "MCP_RES_EXECUTABLE_IDENTIFIED");
    doc["transcript"]["observation"]["exe"] = json!("/usr/bin/some-other-program");
    write(&path, &doc);
    Relabel::open(&dir).save();
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report)
            .iter()
            .any(|m| m.contains("is not the program")),
        "{report:#}"
    );
    let (_tmp, dir) = copy_of(leg);
    let path = dir.join(format!("artifacts/{id}/negative.json"));
    let mut doc = read(&path);
    let recorded = doc["transcript"]["identity"]["recordedSha256"].clone();
    doc["transcript"]["identity"]["sha256"] = recorded;
    write(&path, &doc);
    Relabel::open(&dir).save();
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report)
            .iter()
            .any(|m| m.contains("its stored digests are equal")),
        "{report:#}"
    );
}

/// The fixture-side authorization checks are read again from their stored
/// summary of the authorization endpoint's answer: a refusal whose stored
/// description is another than the check's own, still labelled as the
/// check's refusal, is refused; so is a grant (`state-binding`'s positive)
/// whose stored answer did not carry the request's `state` back; so is a
/// code redemption refused for another reason than the check's own.
#[test]
fn an_authorization_answer_relabelled_is_refused_from_its_stored_summary() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let path = dir.join("artifacts/exact-redirect-uri/negative.json");
    let mut doc = read(&path);
    assert_eq!(
        doc["observedReasonCode"],
        "MCP_RES_OAUTH_EXACT_REDIRECT_URI_REJECTED"
    );
    doc["transcript"]["authorize"]["errorDescription"] = json!("client is not allowed");
    write(&path, &doc);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "its stored answer of the authorization endpoint (status 400, client is not allowed) reads as REJECT MCP_RES_OAUTH_OTHER_REFUSAL"
        )),
        "{report:#}"
    );
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let path = dir.join("artifacts/state-binding/positive.json");
    let mut doc = read(&path);
    assert_eq!(doc["transcript"]["authorize"]["stateReturned"], true);
    doc["transcript"]["authorize"]["stateReturned"] = json!(false);
    write(&path, &doc);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report)
            .iter()
            .any(|m| m.contains("check state-binding: its positive.json")),
        "{report:#}"
    );
    // A code redemption: pkce-s256's control refused `invalid_grant` for
    // another reason than the verifier, still labelled as the check's own.
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let path = dir.join("artifacts/pkce-s256/negative.json");
    let mut doc = read(&path);
    let token = doc["transcript"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find_map(|s| s.get_mut("token"))
        .expect("a token step");
    token["errorDescription"] = json!("the authorization code has expired");
    write(&path, &doc);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "its stored answer of the token endpoint (status 400, error invalid_grant) reads as REJECT MCP_RES_OAUTH_OTHER_REFUSAL"
        )),
        "{report:#}"
    );
}

/// The resolution checks are read from what they stored: a token endpoint
/// on the issuer's own origin cannot be credited as refused for being off
/// it (the origins are compared again), and an SSRF control that connected
/// before refusing is not the check's refusal.
#[test]
fn a_resolution_relabelled_is_refused_from_its_stored_urls() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let path = dir.join("artifacts/token-endpoint-identity/negative.json");
    let mut doc = read(&path);
    assert_eq!(
        doc["observedReasonCode"],
        "MCP_RES_OAUTH_TOKEN_ENDPOINT_IDENTITY_REJECTED"
    );
    let issuer = doc["transcript"]["issuer"].as_str().unwrap().to_owned();
    doc["transcript"]["tokenEndpoint"] = json!(format!("{issuer}/token"));
    write(&path, &doc);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "check token-endpoint-identity: its negative.json says REJECT MCP_RES_OAUTH_TOKEN_ENDPOINT_IDENTITY_REJECTED, but its stored token endpoint"
        ) && m.contains("reads as ACCEPT")),
        "{report:#}"
    );
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let path = dir.join("artifacts/ssrf-resistant-metadata-resolution/negative.json");
    let mut doc = read(&path);
    doc["transcript"]["connectionAttempts"] = json!(1);
    write(&path, &doc);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report)
            .iter()
            .any(|m| m.contains("MCP_RES_OAUTH_OTHER_REFUSAL")
                && m.contains("ssrf-resistant-metadata-resolution")),
        "{report:#}"
    );
}

/// mix-up-resistance compares the stored `iss` with the stored issuer the
/// request went to: a control whose response names that very issuer cannot
/// be credited as a refused mix-up.
#[test]
fn a_mix_up_relabelled_is_refused_from_its_stored_issuers() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let path = dir.join("artifacts/mix-up-resistance/negative.json");
    let mut doc = read(&path);
    assert_eq!(
        doc["observedReasonCode"],
        "MCP_RES_OAUTH_MIX_UP_RESISTANCE_REJECTED"
    );
    let expected = doc["transcript"]["expectedIssuer"].clone();
    doc["transcript"]["response"]["authorize"]["iss"] = expected;
    write(&path, &doc);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "check mix-up-resistance: its negative.json says REJECT MCP_RES_OAUTH_MIX_UP_RESISTANCE_REJECTED, but its stored authorization response"
        ) && m.contains("reads as ACCEPT")),
        "{report:#}"
    );
}

/// proxy-consent-client-binding is read from its stored authorization
/// answer like the other authorization checks: client B's request refused
/// for another reason than a consent given to another client, still
/// labelled as the check's refusal, is refused.
#[test]
fn a_consent_refusal_relabelled_is_refused_from_its_stored_answer() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let path = dir.join("artifacts/proxy-consent-client-binding/negative.json");
    let mut doc = read(&path);
    doc["transcript"]["authorization"]["authorize"]["errorDescription"] =
        json!("the client could not be identified");
    write(&path, &doc);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "check proxy-consent-client-binding: its negative.json says REJECT MCP_RES_OAUTH_PROXY_CONSENT_CLIENT_BINDING_REJECTED"
        )),
        "{report:#}"
    );
}

/// cimd-identity is read from its stored authorization answer and the
/// fixture's stored fetch note: a refusal whose note says something else
/// than an impostor document, still labelled as the check's refusal, is
/// refused.
#[test]
fn a_client_identity_refusal_relabelled_is_refused_from_its_stored_note() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let path = dir.join("artifacts/cimd-identity/negative.json");
    let mut doc = read(&path);
    assert_eq!(
        doc["observedReasonCode"],
        "MCP_RES_OAUTH_CIMD_IDENTITY_REJECTED"
    );
    doc["transcript"]["fixtureFetchNote"] = json!("refused: the document is too large");
    write(&path, &doc);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "check cimd-identity: its negative.json says REJECT MCP_RES_OAUTH_CIMD_IDENTITY_REJECTED, but its stored answer, with the fetch note (refused: the document is too large), reads as REJECT MCP_RES_OAUTH_OTHER_REFUSAL"
        )),
        "{report:#}"
    );
}

/// refresh-token-rotation-when-claimed compares the stored digests of the
/// refresh token presented and the one issued: a refresh that gave the same
/// token back cannot be credited as a rotation.
#[test]
fn a_refresh_that_did_not_rotate_cannot_be_credited_as_rotated() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let path = dir.join("artifacts/refresh-token-rotation-when-claimed/positive.json");
    let mut doc = read(&path);
    let first = doc["transcript"]["grant"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|s| s.get("token"))
        .unwrap()["refreshToken"]
        .clone();
    assert!(first.is_string(), "{doc}");
    doc["transcript"]["refresh"]["token"]["refreshToken"] = first;
    write(&path, &doc);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "check refresh-token-rotation-when-claimed: its positive.json says ACCEPT MCP_RES_OAUTH_REFRESH_TOKEN_ROTATION_WHEN_CLAIMED_ACCEPTED, but the record of its token-endpoint answers reads as ACCEPT MCP_RES_OAUTH_OTHER_REFUSAL"
        )),
        "{report:#}"
    );
}

/// The OAuth evaluation's cleanup, sanitization and network claims are
/// judged from the stored cleanup record: a listener the record shows left
/// open, a refusal it counts as echoing the token, and a connection of the
/// runner off loopback it lists each contradict a clean evaluation.
#[test]
fn the_oauth_cleanup_and_network_claims_follow_the_stored_cleanup_record() {
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit); 3] = [
        ("/cleanup/listenerClosed", |c| {
            c["fixtureListenerClosed"] = json!(false)
        }),
        ("/privacy/authorizationErrorsSanitized", |c| {
            c["subjectRefusalsEchoingTheToken"] = json!(1)
        }),
        ("/fixture/externalNetworkRequests", |c| {
            c["runnerConnections"]
                .as_array_mut()
                .unwrap()
                .push(json!({"connected": true, "target": "http://192.0.2.1/token"}))
        }),
    ];
    for (pointer, edit) in edits {
        let (_tmp, dir) = copy_of("bundles/oauth/reference");
        let path = dir.join("artifacts/cleanup.json");
        let mut doc = read(&path);
        edit(&mut doc);
        write(&path, &doc);
        rebind_oauth(&dir);
        let (code, report) = validate(&dir);
        only_not_from_record(code, &report);
        assert!(
            pointers(&report).contains(&pointer.to_owned()),
            "{pointer}: {report:#}"
        );
    }
}

/// Every check of every committed profile evaluation (and field leg) that
/// did not pass, relabelled PASS on its own with both documents and every
/// digest following: `validate` refuses each one.
#[test]
fn every_check_that_did_not_pass_relabelled_pass_is_refused_in_every_committed_evaluation() {
    let mut dirs: Vec<PathBuf> = fs::read_dir(repo("bundles/profiles"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("run.json").exists())
        .collect();
    dirs.extend(
        fs::read_dir(repo("bundles/field/evidence/legs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("run.json").exists()),
    );
    dirs.sort();
    let mut tried = 0;
    let mut believed = Vec::new();
    for committed in &dirs {
        let run = read(&committed.join("run.json"));
        for c in run["checks"].as_array().unwrap() {
            let id = c["id"].as_str().unwrap();
            if c["verdict"] == "PASS"
                || !committed
                    .join(format!("artifacts/{id}/positive.json"))
                    .exists()
            {
                continue;
            }
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("copy");
            copy_dir(committed, &dir);
            let mut r = Relabel::open(&dir);
            r.pass(id);
            r.save();
            let (code, report) = validate(&dir);
            tried += 1;
            if code != 1 || findings_of(&report, CODE).is_empty() {
                believed.push(format!("{} {id}", committed.display()));
            }
        }
    }
    assert!(tried >= 20, "{tried}");
    assert_eq!(believed, Vec::<String>::new());
}

/// cimd-trust-policy-recorded is read from its stored answer and the
/// fixture's recorded fetch under the evaluation's own trust policy: an
/// evaluation naming another policy than the one the stored fetch was made
/// under cannot credit the check.
#[test]
fn a_trust_policy_the_stored_fetch_was_not_made_under_is_refused() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let mut evaluation = read(&dir.join("evaluation.json"));
    evaluation["flow"]["trustPolicyId"] = json!("any-https-with-redirects");
    write(&dir.join("evaluation.json"), &evaluation);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "check cimd-trust-policy-recorded: its positive.json says ACCEPT MCP_RES_OAUTH_CIMD_TRUST_POLICY_RECORDED_ACCEPTED"
        ) && m.contains("under the evaluation's trust policy \"any-https-with-redirects\"")),
        "{report:#}"
    );
}

/// A request said unanswered whose answer the stored stdout holds before
/// the answer to the liveness request sent right after it (which the runner
/// saw) is refused, whatever the timing: a real run of the reference server,
/// its stdout-protocol-purity control (answered -32601) relabelled as met
/// with no answer.
#[test]
fn an_answered_request_relabelled_as_unanswered_is_refused_from_the_order_of_its_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_mcpres"));
    let id = "stdout-protocol-purity";
    // The reference server serves requests concurrently: now and then it
    // answers the liveness request first, and then the order of the bytes
    // leaves the label to the runner (the reading does not apply). Run until
    // a record answers the control first.
    let answered_first = |doc: &Value| {
        let o = &doc["transcript"]["observation"];
        let stdout: String = doc["transcript"]["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["stream"] == "stdout")
            .map(|c| c["text"].as_str().unwrap_or_default())
            .collect();
        let at = |id: &Value| {
            stdout
                .lines()
                .position(|l| serde_json::from_str::<Value>(l).is_ok_and(|m| m["id"] == *id))
        };
        matches!((at(&o["requestId"]), at(&o["liveId"])), (Some(a), Some(b)) if a < b)
    };
    let mut found = None;
    for attempt in 0..8 {
        let dir = tmp.path().join(format!("run{attempt}"));
        let out = mcpres(&[
            "profile".as_ref(),
            "run".as_ref(),
            "stdio-transport".as_ref(),
            "--revision".as_ref(),
            "2025-11-25".as_ref(),
            "--checks".as_ref(),
            id.as_ref(),
            "-o".as_ref(),
            dir.as_os_str(),
            "--".as_ref(),
            bin.as_os_str(),
            "serve".as_ref(),
        ]);
        let doc = read(&dir.join(format!("artifacts/{id}/negative.json")));
        if answered_first(&doc) {
            found = Some((dir, out));
            break;
        }
    }
    let (dir, out) = found.expect("a record that answers the control before the liveness request");
    let path = dir.join(format!("artifacts/{id}/negative.json"));
    let mut doc = read(&path);
    assert_eq!(
        doc["transcript"]["observation"]["reply"],
        "error -32601",
        "{}",
        output_text(&out)
    );
    assert!(
        doc["transcript"]["observation"]["liveId"].is_number(),
        "{doc}"
    );
    doc["transcript"]["observation"]["reply"] = json!("no answer");
    write(&path, &doc);
    Relabel::open(&dir).save();
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "got no answer, but its stored stdout answers it before the liveness request"
        )),
        "{report:#}"
    );
}

/// `mcpres profile run PROFILE ARGS -o OUT -- python3 tests/subjects/SCRIPT
/// SUBJECT_ARGS`: its run.json (which must exist).
fn run_subject(out: &Path, profile: &str, args: &[&str], script: &str, subject: &[&str]) -> Value {
    let script = repo(&format!("tests/subjects/{script}"));
    let mut all: Vec<&str> = vec!["profile", "run", profile];
    all.extend(args);
    all.extend([
        "-o",
        out.to_str().unwrap(),
        "--",
        "python3",
        script.to_str().unwrap(),
    ]);
    all.extend(subject);
    let o = mcpres(&all);
    let run = read(&out.join("run.json"));
    assert!(run["checks"].is_array(), "{}", output_text(&o));
    run
}

/// `mcpres profile run` of process-exit against the profile test subject
/// with `breaks` (none: the honest twin).
fn run_process_exit(out: &Path, breaks: &[&str]) -> Value {
    let mut subject = Vec::new();
    for b in breaks {
        subject.extend(["--break", b]);
    }
    run_subject(
        out,
        "mcp-res/stdio-transport/v1",
        &["--revision", "2025-11-25", "--checks", "process-exit"],
        "profile_subject.py",
        &subject,
    )
}

/// Rewrite the negative control of `id` as observed `outcome`/`reason`, in
/// its artifact and in the evaluation, and the check's verdict as `verdict`.
fn relabel_negative(dir: &Path, id: &str, outcome: &str, reason: &str, verdict: &str) {
    let path = dir.join(format!("artifacts/{id}/negative.json"));
    let mut doc = read(&path);
    doc["observedOutcome"] = json!(outcome);
    doc["observedReasonCode"] = json!(reason);
    write(&path, &doc);
    let mut r = Relabel::open(dir);
    if verdict == "PASS" {
        r.pass(id);
    } else {
        let i = r.index(id);
        r.run["checks"][i]["verdict"] = json!(verdict);
        r.run["checks"][i]["reason"] = json!(reason);
        r.run["checks"][i]["detail"] = json!(format!(
            "negative control: expected {}, observed {outcome} ({reason})",
            doc["expectedOutcome"].as_str().unwrap()
        ));
        for c in r.evaluation["checks"].as_array_mut().unwrap() {
            if c["id"] == id {
                c["negativeControl"]["observedOutcome"] = json!(outcome);
                c["negativeControl"]["observedReasonCode"] = json!(reason);
            }
        }
        r.relabel_results();
    }
    r.save();
}

/// Whether a subject exited on the runner's SIGTERM is read from the order of
/// the stored events (`sent SIGTERM`, then `exited` or the runner's `no exit
/// after SIGTERM`): a subject that ignores it cannot be relabelled as one
/// that ended on it, and an honest one cannot be relabelled as one that
/// needed SIGKILL.
#[test]
fn whether_a_subject_ended_on_sigterm_is_read_from_its_stored_events() {
    let tmp = tempfile::tempdir().unwrap();
    let id = "process-exit";
    // The adversary ignores SIGTERM once opened: FAIL, as the runner said.
    let deaf = tmp.path().join("deaf");
    let run = run_process_exit(&deaf, &["ignore-sigterm-after-open"]);
    assert_eq!(run["checks"][0]["verdict"], "FAIL", "{run:#}");
    assert_eq!(
        run["checks"][0]["reason"],
        "MCP_RES_TERMINATION_NEEDED_SIGKILL"
    );
    let negative = read(&deaf.join(format!("artifacts/{id}/negative.json")));
    let events = negative["transcript"]["events"].to_string();
    assert!(events.contains("disposition ignored"), "{events}");
    assert!(events.contains("no exit after SIGTERM"), "{events}");
    assert_eq!(pointers(&validate(&deaf).1), Vec::<String>::new());
    relabel_negative(&deaf, id, "TERMINATE", "MCP_RES_EXIT_ON_SIGTERM", "PASS");
    let (code, report) = validate(&deaf);
    only_not_from_record(code, &report);
    assert!(
        messages(&report).iter().any(|m| m.contains(
            "stored events after `sent SIGTERM` hold no exit before the runner stopped waiting"
        )),
        "{report:#}"
    );
    // The honest twin ends on SIGTERM: PASS; relabelled as one that needed
    // SIGKILL (a FAIL the record does not give), it is refused too.
    let honest = tmp.path().join("honest");
    let run = run_process_exit(&honest, &[]);
    assert_eq!(run["checks"][0]["verdict"], "PASS", "{run:#}");
    assert_eq!(validate(&honest).0, 0);
    relabel_negative(
        &honest,
        id,
        "NO_EFFECT",
        "MCP_RES_TERMINATION_NEEDED_SIGKILL",
        "FAIL",
    );
    // (A FAIL evaluation also carries the reference rule's finding that its
    // negative control was not met.)
    refused_saying(
        &honest,
        "stored events after `sent SIGTERM` hold an exit after it",
    );
}

/// `validate DIR` refuses it (exit 1) with at least one judged disagreement,
/// one of whose messages says `what`.
fn refused_saying(dir: &Path, what: &str) {
    let (code, report) = validate(dir);
    assert_eq!(code, 1, "{report:#}");
    assert!(!findings_of(&report, CODE).is_empty(), "{report:#}");
    assert!(
        messages(&report).iter().any(|m| m.contains(what)),
        "{what}: {report:#}"
    );
}

/// `mcpres profile run streamable-http` of listener-cleanup (beside
/// content-type) against the HTTP test subject with `brk`.
fn run_listener_cleanup(out: &Path, brk: Option<&str>) -> Value {
    let mut subject = vec!["--port", "{port}"];
    if let Some(b) = brk {
        subject.extend(["--break", b]);
    }
    run_subject(
        out,
        "streamable-http",
        &[
            "--revision",
            "2025-11-25",
            "--http",
            "http://127.0.0.1:0/mcp",
            "--checks",
            "listener-cleanup,content-type",
        ],
        "http_subject.py",
        &subject,
    )
}

fn verdict_of(run: &Value, id: &str) -> (String, String) {
    let c = run["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no {id}: {run:#}"));
    (
        c["verdict"].as_str().unwrap().to_owned(),
        c["reason"].as_str().unwrap().to_owned(),
    )
}

/// The Streamable HTTP cleanup checks stop one server per observation; its
/// process record (the check's server.json) says whether it ended on the
/// SIGTERM, so neither direction of a relabel validates.
#[test]
fn whether_an_http_server_ended_on_sigterm_is_read_from_its_process_record() {
    let tmp = tempfile::tempdir().unwrap();
    let id = "listener-cleanup";
    let deaf = tmp.path().join("deaf");
    let run = run_listener_cleanup(&deaf, Some("listener-cleanup"));
    assert_eq!(
        verdict_of(&run, id),
        ("FAIL".into(), "MCP_RES_HTTP_SIGNAL_IGNORED".into()),
        "{run:#}"
    );
    assert_eq!(pointers(&validate(&deaf).1), Vec::<String>::new());
    relabel_negative(
        &deaf,
        id,
        "TERMINATE",
        "MCP_RES_HTTP_LISTENER_CLOSED_ON_STOP",
        "PASS",
    );
    refused_saying(
        &deaf,
        "its server's stored events after `sent SIGTERM` hold no exit before the runner stopped waiting",
    );
    let honest = tmp.path().join("honest");
    let run = run_listener_cleanup(&honest, None);
    // (Should it not pass, the negative's server record says what the
    // kernel's masks showed: caught, pending, blocked.)
    let server = read(&honest.join(format!("artifacts/{id}/server.json")));
    assert_eq!(
        verdict_of(&run, id).0,
        "PASS",
        "{run:#}\nthe negative's server: {}",
        server["processes"][1]["events"]
    );
    assert_eq!(validate(&honest).0, 0);
    relabel_negative(
        &honest,
        id,
        "NO_EFFECT",
        "MCP_RES_HTTP_SIGNAL_IGNORED",
        "FAIL",
    );
    refused_saying(
        &honest,
        "its server's stored events after `sent SIGTERM` hold an exit after it",
    );
}

/// Every committed stdio control that was refused (its stored observation
/// names the request and the subject's reply was no result), relabelled as
/// served (ACCEPT, the check FAIL, every digest recomputed), is refused from
/// its stored stdout: there is no accepting result for its request.
#[test]
fn every_committed_refused_control_relabelled_as_served_is_refused() {
    let mut tried = 0;
    let mut dirs: Vec<PathBuf> = fs::read_dir(repo("bundles/profiles"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("evaluation.json").is_file())
        .collect();
    dirs.sort();
    for path in &dirs {
        let rel = rel_of(path);
        let run = read(&path.join("run.json"));
        for c in run["checks"].as_array().unwrap() {
            let id = c["id"].as_str().unwrap();
            let file = path.join(format!("artifacts/{id}/negative.json"));
            if c["verdict"] != "PASS" || !file.is_file() {
                continue;
            }
            let negative = read(&file);
            let observation = &negative["transcript"]["observation"];
            if negative["expectedOutcome"] != "REJECT"
                || observation["requestId"].is_null()
                || !observation["reply"].is_string()
                || observation["reply"] == "result"
            {
                continue;
            }
            let positive = read(&path.join(format!("artifacts/{id}/positive.json")));
            let served = positive["expectedReasonCode"].as_str().unwrap();
            let (_tmp, dir) = copy_of(&rel);
            relabel_negative(&dir, id, "ACCEPT", served, "FAIL");
            let (code, report) = validate(&dir);
            assert_eq!(code, 1, "{rel} {id}: {report:#}");
            let at = format!("artifacts/{id}/negative.json /observedReasonCode");
            assert!(
                messages(&report)
                    .iter()
                    .any(|m| m.starts_with(&at) && m.contains("hold no accepting result")),
                "{rel} {id}: {report:#}"
            );
            tried += 1;
        }
    }
    assert!(tried >= 40, "{tried} controls relabelled");
}

/// Two labels read again from what their observations stored: the argv of
/// `shell-free-argument-boundaries`' positive (the running executable, its
/// argv, the launch's arguments) and the stdout of `silent-process`'
/// control (its chunks against the silence window). Relabelled either way,
/// with every digest recomputed, neither validates.
#[test]
fn argv_and_unasked_output_are_read_from_their_observations() {
    let leg = "bundles/profiles/reference-stdio-transport-2025-11-25";
    let (_tmp, dir) = copy_of(leg);
    let id = "shell-free-argument-boundaries";
    let path = dir.join(format!("artifacts/{id}/positive.json"));
    let mut doc = read(&path);
    assert_eq!(doc["observedReasonCode"], "MCP_RES_ARGV_PASSED_VERBATIM");
    doc["observedReasonCode"] = json!("MCP_RES_SHELL_INTERMEDIARY");
    write(&path, &doc);
    Relabel::open(&dir).save();
    refused_saying(
        &dir,
        "its stored executable, argv and launch arguments give MCP_RES_ARGV_PASSED_VERBATIM",
    );
    // Its control relabelled as started by a shell-splitting launcher: the
    // launch attempt it stored was refused.
    let (_tmp, dir) = copy_of(leg);
    relabel_negative(&dir, id, "ACCEPT", "MCP_RES_LAUNCH_SHELL_SPLIT", "FAIL");
    refused_saying(
        &dir,
        "the launch attempt it stored (the program string and the launcher's result) gives MCP_RES_LAUNCH_NOT_SHELL_SPLIT",
    );
    let (_tmp, dir) = copy_of(leg);
    let id = "silent-process";
    let negative = read(&dir.join(format!("artifacts/{id}/negative.json")));
    assert_eq!(negative["observedReasonCode"], "MCP_RES_SILENT_UNTIL_ASKED");
    relabel_negative(&dir, id, "ACCEPT", "MCP_RES_UNSOLICITED_OUTPUT", "FAIL");
    refused_saying(
        &dir,
        "the stdout prefix its runner decided on gives MCP_RES_SILENT_UNTIL_ASKED",
    );
    // The count of unasked bytes raised too: no stored prefix is that long,
    // and the stored stdout holds nothing that arrived before the runner
    // ended the probe.
    let path = dir.join(format!("artifacts/{id}/negative.json"));
    let mut doc = read(&path);
    doc["transcript"]["observation"]["stdoutBytesUnasked"] = json!(5);
    write(&path, &doc);
    Relabel::open(&dir).save();
    refused_saying(
        &dir,
        "holds nothing that arrived before the runner ended the probe",
    );
}

/// partial-line's control is decided on the stdout prefix its runner read
/// before sending the LF, whose length it stores: a subject that answers an
/// unterminated line cannot be relabelled as one that waited, nor the
/// honest one as one that dispatched early.
#[test]
fn a_partial_line_control_is_read_from_the_prefix_decided_on() {
    let tmp = tempfile::tempdir().unwrap();
    let id = "partial-line";
    let run_with = |out: &Path, breaks: &[&str]| {
        let mut subject = Vec::new();
        for b in breaks {
            subject.extend(["--break", b]);
        }
        run_subject(
            out,
            "mcp-res/stdio-transport/v1",
            &["--revision", "2025-11-25", "--checks", id],
            "profile_subject.py",
            &subject,
        )
    };
    let eager = tmp.path().join("eager");
    let run = run_with(&eager, &["dispatch-before-newline"]);
    assert_eq!(
        verdict_of(&run, id),
        ("FAIL".into(), "MCP_RES_UNTERMINATED_LINE_DISPATCHED".into()),
        "{run:#}"
    );
    assert_eq!(pointers(&validate(&eager).1), Vec::<String>::new());
    relabel_negative(
        &eager,
        id,
        "NO_EFFECT",
        "MCP_RES_PARTIAL_LINE_NOT_DISPATCHED",
        "PASS",
    );
    refused_saying(
        &eager,
        "the stdout prefix its runner decided on before the LF answers the unterminated request",
    );
    let honest = tmp.path().join("honest");
    let run = run_with(&honest, &[]);
    assert_eq!(verdict_of(&run, id).0, "PASS", "{run:#}");
    assert_eq!(validate(&honest).0, 0);
    relabel_negative(
        &honest,
        id,
        "ACCEPT",
        "MCP_RES_UNTERMINATED_LINE_DISPATCHED",
        "FAIL",
    );
    refused_saying(
        &honest,
        "the stdout prefix its runner decided on before the LF holds no answer to the unterminated request",
    );
}

/// An exchange stores the stdout lines its evidence was gathered from, so
/// its counts and the labels made of them are counted again: a subject that
/// answers a notification cannot be relabelled as silent, its honest twin
/// cannot be relabelled as answering, and a count cannot be changed.
#[test]
fn an_exchange_is_counted_again_from_the_lines_it_was_gathered_from() {
    let tmp = tempfile::tempdir().unwrap();
    let id = "discovery-versus-legacy-initialization";
    let run_with = |out: &Path, breaks: &[&str]| {
        let mut subject = Vec::new();
        for b in breaks {
            subject.extend(["--break", b]);
        }
        run_subject(
            out,
            "mcp-res/stdio-transport/v1",
            &["--revision", "2025-11-25", "--checks", id],
            "profile_subject.py",
            &subject,
        )
    };
    let chatty = tmp.path().join("chatty");
    let run = run_with(&chatty, &["answer-notifications"]);
    assert_eq!(
        verdict_of(&run, id),
        ("FAIL".into(), "MCP_RES_NOTIFICATION_ANSWERED".into()),
        "{run:#}"
    );
    assert_eq!(pointers(&validate(&chatty).1), Vec::<String>::new());
    relabel_negative(
        &chatty,
        id,
        "NO_EFFECT",
        "MCP_RES_NOTIFICATION_NOT_ANSWERED",
        "PASS",
    );
    refused_saying(
        &chatty,
        "but the stdout lines it was gathered from give MCP_RES_NOTIFICATION_ANSWERED",
    );
    // The count of other responses lowered with it: refused on the count.
    let path = chatty.join(format!("artifacts/{id}/negative.json"));
    let mut doc = read(&path);
    doc["transcript"]["observation"]["otherResponses"] = json!(0);
    write(&path, &doc);
    Relabel::open(&chatty).save();
    refused_saying(
        &chatty,
        "counts otherResponses 0, but the stdout lines it was gathered from hold",
    );
    let honest = tmp.path().join("honest");
    let run = run_with(&honest, &[]);
    assert_eq!(verdict_of(&run, id).0, "PASS", "{run:#}");
    assert_eq!(validate(&honest).0, 0);
    relabel_negative(
        &honest,
        id,
        "ACCEPT",
        "MCP_RES_NOTIFICATION_ANSWERED",
        "FAIL",
    );
    refused_saying(
        &honest,
        "but the stdout lines it was gathered from give MCP_RES_NOTIFICATION_NOT_ANSWERED",
    );
}

/// `path` relative to the repository.
fn rel_of(path: &Path) -> String {
    path.strip_prefix(repo(""))
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

/// The committed profile evaluations and field legs, each a directory holding
/// `evaluation.json`.
fn committed_evaluations() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for parent in ["bundles/profiles", "bundles/field/evidence/legs"] {
        for entry in fs::read_dir(repo(parent)).unwrap() {
            let path = entry.unwrap().path();
            if path.join("evaluation.json").is_file() {
                dirs.push(path);
            }
        }
    }
    dirs.sort();
    dirs
}

/// A label must be one its check's runner can give that role
/// (`src/judge/vocabulary.tsv`). Every negative control of every committed
/// PASS check (about 300) is relabelled so that its check fails: a refusal
/// expected becomes the positive's acceptance, and anything else becomes a
/// reason the check never records for its control (a signal not acted on, a
/// polluted stdout). Every one is refused at that artifact, but two: the
/// server-everything stdio evaluation kept from before signal waits were
/// recorded, whose `process-exit` and `backpressure` controls really can
/// record "needed SIGKILL" and store no record to read it from.
#[test]
fn every_committed_control_relabelled_as_failing_is_refused() {
    use mcpres::diag::reasons as r;
    let foreign = [
        r::TERMINATION_NEEDED_SIGKILL,
        r::HTTP_SIGNAL_IGNORED,
        r::STDOUT_POLLUTED,
    ];
    let believed_before_signal_waits = [
        ("everything-stdio-transport-2025-11-25", "process-exit"),
        ("everything-stdio-transport-2025-11-25", "backpressure"),
    ];
    let (mut refused, mut missed) = (0, Vec::new());
    for path in committed_evaluations() {
        let rel = rel_of(&path);
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let profile = read(&path.join("evaluation.json"))["profile"]["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let run = read(&path.join("run.json"));
        // Every control of the evaluation is relabelled in one copy, validated once:
        // each check is judged from its own artifacts, so each relabel must be refused
        // at its own control whatever the others say (and a report that stopped at
        // the first disagreement would fail here).
        let (_tmp, dir) = copy_of(&rel);
        let mut relabelled = Vec::new();
        for c in run["checks"].as_array().unwrap() {
            let id = c["id"].as_str().unwrap();
            if c["verdict"] != "PASS"
                || !path.join(format!("artifacts/{id}/negative.json")).is_file()
            {
                continue;
            }
            let neg = read(&path.join(format!("artifacts/{id}/negative.json")));
            let pos = read(&path.join(format!("artifacts/{id}/positive.json")));
            let (outcome, reason) = if neg["expectedOutcome"] == "REJECT" {
                ("ACCEPT", pos["expectedReasonCode"].as_str().unwrap())
            } else {
                let reason = foreign
                    .into_iter()
                    .find(|f| {
                        mcpres::judge::vocabulary::admits(
                            &profile,
                            id,
                            "negative",
                            mcpres::model::vocab::ProbeOutcome::NoEffect,
                            f,
                        ) == Some(false)
                    })
                    .unwrap_or(r::TERMINATION_NEEDED_SIGKILL);
                ("NO_EFFECT", reason)
            };
            relabel_negative(&dir, id, outcome, reason, "FAIL");
            relabelled.push((id.to_owned(), outcome, reason.to_owned()));
        }
        if relabelled.is_empty() {
            continue;
        }
        let (code, report) = validate(&dir);
        let found = messages(&report);
        for (id, outcome, reason) in relabelled {
            let at = format!("artifacts/{id}/negative.json /observed");
            if code == 1 && found.iter().any(|m| m.starts_with(&at)) {
                refused += 1;
            } else if !believed_before_signal_waits.contains(&(name.as_str(), id.as_str())) {
                missed.push(format!("{rel} {id}: {outcome} {reason}"));
            }
        }
    }
    assert!(refused >= 250, "only {refused} relabels were refused");
    assert!(missed.is_empty(), "believed: {missed:#?}");
}

/// What a positive and a control expect is their check's declaration at the
/// evaluated revision (`src/judge/expected.tsv`), not what the artifact says:
/// the server-everything HTTP evaluation's `no-unauthorized-redirect` (its
/// control served a foreign Origin) relabelled PASS by making the control
/// expect the acceptance it observed is refused at its expected reason.
#[test]
fn a_failure_relabelled_by_changing_what_its_control_expects_is_refused() {
    let id = "no-unauthorized-redirect";
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/everything-http-2025-11-25");
    let path = dir.join(format!("artifacts/{id}/negative.json"));
    let mut neg = read(&path);
    assert_eq!(neg["observedOutcome"], "ACCEPT", "{neg:#}");
    let declared = neg["expectedReasonCode"].clone();
    neg["expectedOutcome"] = neg["observedOutcome"].clone();
    neg["expectedReasonCode"] = neg["observedReasonCode"].clone();
    write(&path, &neg);
    let mut r = Relabel::open(&dir);
    r.pass(id);
    r.save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let want = format!("artifacts/{id}/negative.json /expectedReasonCode");
    let found = messages(&report);
    assert!(
        found
            .iter()
            .any(|m| m.starts_with(&want) && m.contains(declared.as_str().unwrap())),
        "{found:#?}"
    );
    // The untouched directory (a FAIL evaluation) has no such finding.
    let (_tmp2, clean) = copy_of("bundles/field/evidence/legs/everything-http-2025-11-25");
    let (_, report) = validate(&clean);
    assert!(findings_of(&report, CODE).is_empty(), "{report:#}");
}

/// A conversation cannot be relabelled as one that never opened when its
/// stored bytes show the runner went on past the answered opening (stdin
/// written after the stdout chunk that answered it), nor a process that ran
/// without being sent any opening as one that failed to open. Read from the
/// committed reference stdio evaluation; the untouched copy validates.
#[test]
fn an_observation_whose_bytes_show_an_opening_cannot_be_relabelled_as_unopened() {
    let rel = "bundles/profiles/reference-stdio-transport-2025-11-25";
    for (id, reason, says) in [
        (
            "released-message-framing",
            "MCP_RES_OPEN_FAILED",
            "the runner wrote to the subject after that answer arrived",
        ),
        (
            "stdout-protocol-purity",
            "MCP_RES_OPEN_REFUSED",
            "the runner wrote to the subject after that answer arrived",
        ),
        (
            "silent-process",
            "MCP_RES_OPEN_FAILED",
            "a process that ran and was sent no opening request",
        ),
    ] {
        let (_tmp, dir) = copy_of(rel);
        // As a record made before waits were kept: the opening's own wait
        // would be read first (`an_opening_its_wait_read_answered_...`).
        let path = dir.join(format!("artifacts/{id}/negative.json"));
        let mut doc = read(&path);
        doc["transcript"].as_object_mut().unwrap().remove("replies");
        write(&path, &doc);
        relabel_negative(&dir, id, "NOT_OBSERVED", reason, "NOT_OBSERVED");
        refused_saying(&dir, says);
        let at = format!("artifacts/{id}/negative.json /observedReasonCode");
        assert!(
            messages(&validate(&dir).1)
                .iter()
                .any(|m| m.starts_with(&at) && m.contains(says)),
            "{id}"
        );
    }
    let (_tmp, clean) = copy_of(rel);
    let (_, report) = validate(&clean);
    assert!(findings_of(&report, CODE).is_empty(), "{report:#}");
    // Over Streamable HTTP: the last opening answered with a result, then a
    // later connection sent a message.
    let rel = "bundles/field/evidence/legs/reference-http-2025-11-25";
    for id in ["content-type", "keepalive"] {
        let (_tmp, dir) = copy_of(rel);
        // As a record made before response reads were kept.
        let path = dir.join(format!("artifacts/{id}/negative.json"));
        let mut doc = read(&path);
        doc["transcript"]["events"]
            .as_array_mut()
            .unwrap()
            .retain(|e| e["event"] != "response-read");
        write(&path, &doc);
        relabel_negative(
            &dir,
            id,
            "NOT_OBSERVED",
            "MCP_RES_OPEN_FAILED",
            "NOT_OBSERVED",
        );
        refused_saying(
            &dir,
            "the runner wrote to the subject after that answer arrived",
        );
    }
}

/// Over Streamable HTTP the syntax guard is a -32700 answer on a connection:
/// a control relabelled as met by it, where no response its connections
/// received holds one, is refused (the reference server's HTTP leg); so is
/// one relabelled as answered with a status or an error code its
/// connection's stored bytes do not hold.
#[test]
fn an_http_control_relabelled_as_met_by_the_syntax_guard_is_refused() {
    let rel = "bundles/field/evidence/legs/reference-http-2025-11-25";
    for id in ["keepalive", "interrupted-body"] {
        let (_tmp, dir) = copy_of(rel);
        relabel_negative(&dir, id, "REJECT", "MCP_RES_SYNTAX_GUARD", "FAIL");
        refused_saying(
            &dir,
            "no response its connections received holds a -32700 error, so the syntax guard did not fire",
        );
    }
    // Nor as answered with a status, an error code or a 2xx answer without
    // a frame it did not get.
    for (id, outcome, code) in [
        ("content-type", "REJECT", "MCP_RES_SYNTAX_GUARD"),
        ("content-type", "REJECT", "MCP_RES_HTTP_STATUS_500"),
        ("content-type", "NO_EFFECT", "MCP_RES_HTTP_NO_ANSWER_FRAME"),
        (
            "authenticated-loopback-http",
            "REJECT",
            "MCP_RES_JSONRPC_ERROR_32603",
        ),
        (
            "status-code-consistency",
            "REJECT",
            "MCP_RES_HTTP_STATUS_503",
        ),
    ] {
        let (_tmp, dir) = copy_of(rel);
        relabel_negative(&dir, id, outcome, code, "FAIL");
        refused_saying(
            &dir,
            &format!(
                "says the control was answered {code}, but its stored received bytes answer it with"
            ),
        );
    }
    // A mutant met otherwise than its control is labelled with the answer
    // its defective request got, and no other.
    let (_tmp, dir) = copy_of(rel);
    let id = "content-type";
    let path = dir.join(format!("artifacts/{id}/mutant.json"));
    let mut mutant = read(&path);
    assert_eq!(
        mutant["observedReasonCode"], "MCP_RES_SYNTAX_GUARD",
        "{mutant:#}"
    );
    mutant["observedReasonCode"] = json!("MCP_RES_HTTP_STATUS_500");
    write(&path, &mutant);
    Relabel::open(&dir).save();
    refused_saying(
        &dir,
        "says the defective request was answered MCP_RES_HTTP_STATUS_500, but its stored received bytes answer it with MCP_RES_SYNTAX_GUARD",
    );
}

/// Every observation of every committed evaluation relabelled, one at a time,
/// with each other reason (and outcome) its check's runner can give that role
/// (`src/judge/vocabulary.tsv`): the relabel is refused when the judge finds
/// a disagreement at that artifact, from its bytes. Judged in process (about
/// 10,500 relabels, `{n}` families tried as 500), each with the run narrowed to
/// its check, with the count of those still believed printed per reason
/// (`MCPRES_SWEEP_LIST=1` lists each). Every one is refused (10,516 of 10,516 on
/// 2026-12-07, with the operational evaluations over Streamable HTTP
/// regenerated): a change that lets one relabel be believed fails here.
#[test]
fn relabels_within_each_checks_vocabulary_are_refused_from_the_bytes() {
    use mcpres::judge::profile::{Stored, artifact_path, judge_dir, reads};
    use mcpres::model::vocab::ProbeOutcome;
    use std::collections::BTreeMap;
    let (mut refused, mut total) = (0usize, 0usize);
    let mut believed: BTreeMap<String, usize> = BTreeMap::new();
    for path in committed_evaluations() {
        let evaluation = read(&path.join("evaluation.json"));
        let run = read(&path.join("run.json"));
        let profile = evaluation["profile"]["id"].as_str().unwrap().to_owned();
        let revision = evaluation["profile"]["protocolRevision"]
            .as_str()
            .unwrap()
            .to_owned();
        let registered = mcpres::profiles::Registry::builtin()
            .unwrap()
            .get(&profile)
            .map(|p| (p.applicable_check_ids(&revision), p.required_checks.clone()));
        let mut stored: BTreeMap<String, Stored> = BTreeMap::new();
        let mut digests = BTreeMap::new();
        for a in run["artifacts"].as_array().unwrap() {
            let rel = a["path"].as_str().unwrap();
            digests.insert(rel.to_owned(), a["sha256"].as_str().unwrap().to_owned());
            if reads(rel) {
                stored.insert(rel.to_owned(), Ok(read(&path.join(rel))));
            }
        }
        let judge = |stored: &BTreeMap<String, Stored>, run: &Value| {
            judge_dir(
                &evaluation,
                run,
                stored,
                &digests,
                registered
                    .as_ref()
                    .map(|(a, r)| (a.as_slice(), r.as_slice())),
            )
        };
        assert!(
            judge(&stored, &run).disagreements.is_empty(),
            "{} does not re-judge to itself",
            path.display()
        );
        for c in run["checks"].as_array().unwrap() {
            let id = c["id"].as_str().unwrap();
            // A relabel of one of this check's artifacts is judged with the run
            // narrowed to this check: each check is judged from its own artifacts
            // (the whole run was judged above), so a disagreement at that artifact is
            // the same either way, without re-reading every other check's transcripts.
            let mut one = run.clone();
            one["checks"] = json!([c]);
            for role in ["positive", "negative", "mutant"] {
                let file = artifact_path(id, role);
                let Some(Ok(doc)) = stored.get(&file) else {
                    continue;
                };
                let doc = json!({
                    "observedReasonCode": doc["observedReasonCode"],
                    "observedOutcome": doc["observedOutcome"],
                });
                for e in mcpres::judge::vocabulary::entries() {
                    if e.profile != profile || e.check != id || e.role != role {
                        continue;
                    }
                    let reason = e.reason.replace("{n}", "500");
                    for outcome in &e.outcomes {
                        let outcome = serde_json::to_value(outcome).unwrap();
                        if doc["observedReasonCode"] == reason.as_str()
                            && doc["observedOutcome"] == outcome
                        {
                            continue;
                        }
                        // Relabelled in place, judged, and put back as it was.
                        let set = |stored: &mut BTreeMap<String, Stored>, r: &Value, o: &Value| {
                            if let Some(Ok(d)) = stored.get_mut(&file) {
                                d["observedReasonCode"] = r.clone();
                                d["observedOutcome"] = o.clone();
                            }
                        };
                        set(&mut stored, &json!(reason), &outcome);
                        total += 1;
                        let judged = judge(&stored, &one);
                        set(
                            &mut stored,
                            &doc["observedReasonCode"],
                            &doc["observedOutcome"],
                        );
                        if judged.disagreements.iter().any(|d| d.file == file) {
                            refused += 1;
                        } else {
                            let o: ProbeOutcome = serde_json::from_value(outcome).unwrap();
                            *believed.entry(format!("{reason} {o}")).or_default() += 1;
                            if std::env::var_os("MCPRES_SWEEP_LIST").is_some() {
                                eprintln!("believed: {} {id} {role} {reason} {o}", rel_of(&path));
                            }
                        }
                    }
                }
            }
        }
    }
    let mut by_count: Vec<_> = believed.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1));
    eprintln!("refused {refused} of {total}; believed by reason: {by_count:#?}");
    assert!(total > 10_000, "only {total} relabels were tried");
    assert_eq!(
        refused, total,
        "only {refused} of {total} relabels were refused; believed: {by_count:#?}"
    );
}

/// `mcpres profile run stdio-transport --checks concurrent-requests` against
/// the profile test subject with `breaks`; the run directory.
fn run_batch(out: &Path, breaks: &[&str]) -> Value {
    let subject = repo("tests/subjects/profile_subject.py");
    let mut args: Vec<std::ffi::OsString> = [
        "profile",
        "run",
        "stdio-transport",
        "--revision",
        "2025-11-25",
        "--checks",
        "concurrent-requests",
        "-o",
    ]
    .iter()
    .map(std::ffi::OsString::from)
    .collect();
    args.push(out.as_os_str().to_owned());
    args.push("--".into());
    args.push("python3".into());
    args.push(subject.into_os_string());
    for b in breaks {
        args.push("--break".into());
        args.push(b.into());
    }
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let o = mcpres(&args);
    let negative = out.join("artifacts/concurrent-requests/negative.json");
    assert!(negative.is_file(), "{}", output_text(&o));
    read(&negative)
}

/// Silence and an exit are different observations, and each is judged from
/// the waits the transcript keeps: a subject that stops answering on a batch
/// while it still runs with its stdout open is read `MCP_RES_NO_ANSWER`, one
/// that exits on it `MCP_RES_SUBJECT_EXITED` (both FAIL the control: a
/// batch must be refused); the honest subject refuses the batch (PASS). Each
/// validates as written. Relabelled (digests recomputed): the honest
/// positive (every request answered) as unanswered, the honest control and
/// the silent one as an exit, the exit as ended by the runner, each is
/// refused from the bytes.
#[test]
fn silence_and_an_exit_are_read_from_the_waits_the_transcript_keeps() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        ("twin", vec![], "REJECT", "MCP_RES_BATCH_REFUSED", "PASS"),
        (
            "hang",
            vec!["hang-on-batch"],
            "NO_EFFECT",
            "MCP_RES_NO_ANSWER",
            "FAIL",
        ),
        (
            "exit",
            vec!["exit-on-batch"],
            "TERMINATE",
            "MCP_RES_SUBJECT_EXITED",
            "FAIL",
        ),
    ];
    for (name, breaks, outcome, reason, verdict) in &cases {
        let dir = tmp.path().join(name);
        let negative = run_batch(&dir, breaks);
        assert_eq!(
            negative["observedOutcome"], *outcome,
            "{name}: {negative:#}"
        );
        assert_eq!(
            negative["observedReasonCode"], *reason,
            "{name}: {negative:#}"
        );
        let waits = negative["transcript"]["replies"].as_array().unwrap();
        assert!(!waits.is_empty(), "{name}: {negative:#}");
        let run = read(&dir.join("run.json"));
        assert_eq!(run["checks"][0]["verdict"], *verdict, "{name}: {run:#}");
        let (_, report) = validate(&dir);
        assert_eq!(
            pointers(&report),
            Vec::<String>::new(),
            "{name}: {report:#}"
        );
    }
    let relabels = [
        (
            "twin",
            "positive",
            "NOT_OBSERVED",
            "MCP_RES_NO_ANSWER",
            "every answer its runner waited for",
        ),
        (
            "twin",
            "negative",
            "TERMINATE",
            "MCP_RES_SUBJECT_EXITED",
            "no wait that read stdout closed",
        ),
        (
            "hang",
            "negative",
            "TERMINATE",
            "MCP_RES_SUBJECT_EXITED",
            "no wait that read stdout closed",
        ),
        (
            "exit",
            "negative",
            "NOT_OBSERVED",
            "MCP_RES_ENDED_BY_RUNNER",
            "recorded the subject's end",
        ),
    ];
    for (name, role, outcome, reason, why) in relabels {
        relabelled_copy_is_refused(
            &tmp.path().join(name),
            &tmp.path().join(format!("{name}-{role}-as-{reason}")),
            "concurrent-requests",
            (role, outcome, reason, why),
        );
    }
}

/// The opening's own wait says whether the conversation opened: a fresh run's
/// positive (the opening answered with a result) relabelled as not opened
/// (no answer, refused) is refused from the wait its runner kept for the
/// opening request (a revision not spoken, from the bytes themselves).
#[test]
fn an_opening_its_wait_read_answered_cannot_be_relabelled_unopened() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    run_batch(&run, &[]);
    let opening = "but the wait its runner kept for the opening request read result";
    for (reason, why) in [
        ("MCP_RES_OPEN_FAILED", opening),
        ("MCP_RES_OPEN_REFUSED", opening),
        // Read first from the bytes themselves (no -32601 to server/discover).
        (
            "MCP_RES_REVISION_NOT_SPOKEN",
            "but its stored transcript holds no `server/discover` answered -32601",
        ),
    ] {
        let dir = tmp.path().join(reason);
        copy_dir(&run, &dir);
        let path = dir.join("artifacts/concurrent-requests/positive.json");
        let mut doc = read(&path);
        doc["observedOutcome"] = json!("NOT_OBSERVED");
        doc["observedReasonCode"] = json!(reason);
        doc["propertyReached"] = json!(false);
        write(&path, &doc);
        Relabel::open(&dir).save();
        refused_saying(&dir, &format!("says {reason}, {why}"));
    }
}

/// Over Streamable HTTP, silence and a close are read from the response reads
/// the transcript keeps (`response-read` events): the HTTP test subject that
/// holds the content-type control's connection open without a response is
/// read `MCP_RES_NO_ANSWER`, the one that closes it without a response
/// `MCP_RES_HTTP_CLOSED_WITHOUT_RESPONSE`, and the honest subject's 415 is
/// the check's refusal (PASS); each validates as written. Relabelled
/// (digests recomputed): the honest positive as unanswered, the honest
/// control and the silent one as closed, the closed one as unanswered, each
/// is refused from the reads.
#[test]
fn over_http_silence_and_a_close_are_read_from_the_kept_response_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |name: &str, brk: Option<&str>| {
        let dir = tmp.path().join(name);
        let mut subject = vec!["--port", "{port}"];
        if let Some(b) = brk {
            subject.extend(["--break", b]);
        }
        let run = run_subject(
            &dir,
            "streamable-http",
            &[
                "--revision",
                "2025-11-25",
                "--http",
                "http://127.0.0.1:0/mcp",
                "--checks",
                "content-type",
            ],
            "http_subject.py",
            &subject,
        );
        (dir, run)
    };
    for (name, brk, outcome, reason, verdict) in [
        (
            "twin",
            None,
            "REJECT",
            "MCP_RES_HTTP_UNSUPPORTED_CONTENT_TYPE_REFUSED",
            "PASS",
        ),
        (
            "hang",
            Some("content-type-hang"),
            "NO_EFFECT",
            "MCP_RES_NO_ANSWER",
            "FAIL",
        ),
        (
            "close",
            Some("content-type-close"),
            "REJECT",
            "MCP_RES_HTTP_CLOSED_WITHOUT_RESPONSE",
            "FAIL",
        ),
    ] {
        let (dir, run) = run(name, brk);
        let negative = read(&dir.join("artifacts/content-type/negative.json"));
        assert_eq!(negative["observedOutcome"], outcome, "{name}: {negative:#}");
        assert_eq!(
            negative["observedReasonCode"], reason,
            "{name}: {negative:#}"
        );
        assert!(
            negative.to_string().contains("\"response-read\""),
            "{name}: {negative:#}"
        );
        assert_eq!(run["checks"][0]["verdict"], verdict, "{name}: {run:#}");
        let (_, report) = validate(&dir);
        assert_eq!(
            pointers(&report),
            Vec::<String>::new(),
            "{name}: {report:#}"
        );
    }
    let unanswered = "every response read its runner kept holds an answer";
    let unclosed = "no response read its runner kept ended with the connection closed";
    for (name, role, outcome, reason, why) in [
        (
            "twin",
            "positive",
            "NOT_OBSERVED",
            "MCP_RES_NO_ANSWER",
            unanswered,
        ),
        (
            "twin",
            "negative",
            "REJECT",
            "MCP_RES_HTTP_CLOSED_WITHOUT_RESPONSE",
            unclosed,
        ),
        (
            "hang",
            "negative",
            "REJECT",
            "MCP_RES_HTTP_CLOSED_WITHOUT_RESPONSE",
            unclosed,
        ),
        (
            "close",
            "negative",
            "NO_EFFECT",
            "MCP_RES_NO_ANSWER",
            unanswered,
        ),
        (
            "twin",
            "positive",
            "TERMINATE",
            "MCP_RES_SUBJECT_EXITED",
            "every connection it opened was accepted",
        ),
        (
            "twin",
            "positive",
            "NOT_OBSERVED",
            "MCP_RES_OPEN_FAILED",
            "every opening its connections sent got its result",
        ),
        (
            "twin",
            "positive",
            "REJECT",
            "MCP_RES_HTTP_STATUS_401",
            "no response read its runner kept got the status 401",
        ),
    ] {
        relabelled_copy_is_refused(
            &tmp.path().join(name),
            &tmp.path().join(format!("{name}-{role}-as-{reason}")),
            "content-type",
            (role, outcome, reason, why),
        );
    }
}

/// A probe never made (too slow to decide) leaves only the preflight's
/// timing, and a twin's refusal needs a twin sent: a committed positive
/// relabelled `MCP_RES_TOO_SLOW_TO_DECIDE`, a positive whose transcript is
/// only a timing record while it keeps its label, and a control without a
/// recorded twin relabelled `MCP_RES_VALID_TWIN_REFUSED`, are each refused.
#[test]
fn a_probe_never_made_and_a_twin_never_sent_are_read_from_the_record() {
    let rel = "bundles/profiles/reference-stdio-transport-2025-11-25";
    let id = "concurrent-requests";
    let relabel = |role: &str, edit: &dyn Fn(&mut Value)| {
        let (tmp, dir) = copy_of(rel);
        let path = dir.join(format!("artifacts/{id}/{role}.json"));
        let mut doc = read(&path);
        edit(&mut doc);
        write(&path, &doc);
        Relabel::open(&dir).save();
        (tmp, dir)
    };
    let (_t, dir) = relabel("positive", &|d| {
        d["observedOutcome"] = json!("NOT_OBSERVED");
        d["observedReasonCode"] = json!("MCP_RES_TOO_SLOW_TO_DECIDE");
    });
    refused_saying(
        &dir,
        "(no probe made), but its stored transcript is of a probe",
    );
    let (_t, dir) = relabel("positive", &|d| {
        d["transcript"] = json!({"timing": {"startupMs": 40, "answerMs": 5}});
    });
    refused_saying(&dir, "holds only the timing of a probe never made");
    let negative = read(&repo(rel).join(format!("artifacts/{id}/negative.json")));
    assert!(
        negative["transcript"]["observation"].get("twin").is_none(),
        "{negative:#}"
    );
    let (_t, dir) = relabel("negative", &|d| {
        d["observedOutcome"] = json!("NOT_OBSERVED");
        d["observedReasonCode"] = json!("MCP_RES_VALID_TWIN_REFUSED");
    });
    refused_saying(&dir, "records no valid twin sent");
}

/// A mutant that must be answered (a request for a method no server has) is
/// credited with its answer only where a kept wait read one: the survivor
/// run's mutant, met with silence, relabelled as answered is refused.
#[test]
fn a_mutant_met_with_silence_cannot_be_relabelled_as_answered() {
    let (_tmp, dir) = survivor_run();
    let id = "request-identity-metadata";
    let path = dir.join(format!("artifacts/{id}/mutant.json"));
    let mut doc = read(&path);
    assert_eq!(
        doc["expectedReasonCode"], "MCP_RES_MUTANT_REQUEST_ANSWERED",
        "{doc:#}"
    );
    assert_ne!(
        doc["observedReasonCode"], "MCP_RES_MUTANT_REQUEST_ANSWERED",
        "{doc:#}"
    );
    doc["observedOutcome"] = json!("REJECT");
    doc["observedReasonCode"] = json!("MCP_RES_MUTANT_REQUEST_ANSWERED");
    write(&path, &doc);
    Relabel::open(&dir).save();
    refused_saying(
        &dir,
        "but no wait its runner kept for a request other than the opening read an answer",
    );
}

/// A mutant answered is an acceptance when the answer is a result and a
/// refusal when it is an error: the honest subject's concurrent-requests
/// mutant (a request for a method no server has, answered -32601) relabelled
/// as accepted is refused at its outcome.
#[test]
fn an_answered_mutant_keeps_the_outcome_its_answer_gives() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    run_batch(&dir, &[]);
    let path = dir.join("artifacts/concurrent-requests/mutant.json");
    let mut doc = read(&path);
    assert_eq!(
        doc["observedReasonCode"], "MCP_RES_MUTANT_REQUEST_ANSWERED",
        "{doc:#}"
    );
    assert_eq!(doc["observedOutcome"], "REJECT", "{doc:#}");
    doc["observedOutcome"] = json!("ACCEPT");
    write(&path, &doc);
    Relabel::open(&dir).save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let at = "artifacts/concurrent-requests/mutant.json /observedOutcome";
    assert!(
        messages(&report)
            .iter()
            .any(|m| m.starts_with(at) && m.contains("read error -32601")),
        "{:#?}",
        messages(&report)
    );
}

/// A copy of the run directory `from` (as `to`) with check `id`'s `role`
/// observation relabelled `outcome` (`reason`), digests recomputed: `validate`
/// refuses it at that artifact's reason, saying `why`.
fn relabelled_copy_is_refused(
    from: &Path,
    to: &Path,
    id: &str,
    (role, outcome, reason, why): (&str, &str, &str, &str),
) {
    copy_dir(from, to);
    let path = to.join(format!("artifacts/{id}/{role}.json"));
    let mut doc = read(&path);
    doc["observedOutcome"] = json!(outcome);
    doc["observedReasonCode"] = json!(reason);
    write(&path, &doc);
    Relabel::open(to).save();
    let (code, report) = validate(to);
    assert_eq!(code, 1, "{role} as {reason}: {report:#}");
    let at = format!("artifacts/{id}/{role}.json /observedReasonCode");
    assert!(
        messages(&report)
            .iter()
            .any(|m| m.starts_with(&at) && m.contains(why)),
        "{} {role} as {reason}: {:#?}",
        from.display(),
        messages(&report)
    );
}

/// keepalive read from its connections' bytes. The Python SDK's server ended
/// the connection after answering a request with `Connection: close`
/// (`MCP_RES_HTTP_CLOSE_HONOURED`). With that close taken out of its stored
/// record (the label and every digest kept as they were, the bytes now
/// those of a server that ignores the header), the judge reads the
/// control's connection again and refuses the label. Its positive answered
/// both requests on one connection: relabelled as a connection not reused,
/// the judge refuses that too.
#[test]
fn a_keepalive_label_the_bytes_do_not_give_is_refused_from_its_connections() {
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/python-sdk-http-2025-11-25");
    let path = path_in(&dir, "keepalive", "negative");
    let mut negative = read(&path);
    assert_eq!(
        negative["observedReasonCode"], "MCP_RES_HTTP_CLOSE_HONOURED",
        "{negative}"
    );
    let events = negative["transcript"]["events"].as_array_mut().unwrap();
    let before = events.len();
    events.retain(|e| e["event"] != "subject-closed");
    assert!(events.len() < before, "{negative}");
    write(&path, &negative);
    Relabel::open(&dir).save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let found: Vec<&str> = findings_of(&report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| {
            m.contains("(MCP_RES_HTTP_CLOSE_IGNORED) for the request with Connection: close")
        })
        .collect();
    assert_eq!(found.len(), 1, "{report:#}");

    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/python-sdk-http-2025-11-25");
    let path = path_in(&dir, "keepalive", "positive");
    let mut positive = read(&path);
    assert_eq!(
        positive["observedReasonCode"], "MCP_RES_HTTP_CONNECTION_KEPT_ALIVE",
        "{positive}"
    );
    positive["observedReasonCode"] = json!("MCP_RES_HTTP_CONNECTION_NOT_REUSED");
    write(&path, &positive);
    Relabel::open(&dir).save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let found: Vec<&str> = findings_of(&report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| m.contains("response(s) to its two requests"))
        .collect();
    assert_eq!(found.len(), 1, "{report:#}");
}

/// A control whose request body was too large to store (oversized-event's
/// 16 MiB body, kept as its head and digest) is still read from its
/// connection's received bytes: the one connection with an elided body is
/// the control's. The reference server's 413 with -32600 made into a 500
/// with -32603 (the label still crediting the check's refusal) is refused.
#[test]
fn an_oversized_control_with_its_body_elided_is_read_from_its_connection() {
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/reference-http-2025-11-25");
    let path = path_in(&dir, "oversized-event", "negative");
    let mut negative = read(&path);
    assert_eq!(
        negative["observedReasonCode"], "MCP_RES_HTTP_OVERSIZED_BODY_REFUSED",
        "{negative}"
    );
    assert!(
        negative["transcript"]["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["stream"] == "sent" && e.get("elided").is_some()),
        "{negative}"
    );
    restatus(
        &mut negative,
        "HTTP/1.1 413 Payload Too Large",
        "HTTP/1.1 500 Internal Server Error",
    );
    // Its body's -32600 is the check's refusal too: made an internal error.
    for e in negative["transcript"]["events"].as_array_mut().unwrap() {
        if e["stream"] == "received"
            && let Some(t) = e["text"].as_str()
            && t.starts_with("HTTP/1.1 500")
        {
            e["text"] = json!(t.replace("-32600", "-32603"));
        }
    }
    write(&path, &negative);
    Relabel::open(&dir).save();
    let (code, report) = validate(&dir);
    assert_eq!(code, 1, "{report:#}");
    let found: Vec<&str> = findings_of(&report, CODE)
        .iter()
        .filter_map(|f| f["message"].as_str())
        .filter(|m| {
            m.contains(
                "its stored received bytes answer the control with MCP_RES_JSONRPC_ERROR_32603",
            )
        })
        .collect();
    assert_eq!(found.len(), 1, "{report:#}");
}

/// no-process-as-conversation's control read at its revision. server-everything
/// answers `tools/list` on a fresh process with no `initialize` (2025-11-25
/// states no MUST against that: left open). Relabelled as the refusal and
/// the check as a PASS, the judge reads the wait kept for the request (a
/// result) and refuses it; so does a label of a conversation assumed, which
/// is what that answer would be at 2026-07-28, not at 2025-11-25. The
/// reference server's refusal (-32602) relabelled as left open is refused
/// too.
#[test]
fn a_conversation_control_relabelled_is_refused_from_its_wait_at_its_revision() {
    let leg = "bundles/field/evidence/legs/everything-stdio-2025-11-25";
    let id = "no-process-as-conversation";
    for (outcome, reason, verdict) in [
        ("REJECT", "MCP_RES_RESTART_IS_NEW_CONVERSATION", "PASS"),
        ("ACCEPT", "MCP_RES_CONVERSATION_ASSUMED", "FAIL"),
    ] {
        let (_tmp, dir) = copy_of(leg);
        relabel_negative(&dir, id, outcome, reason, verdict);
        refused_saying(
            &dir,
            "read result, which at 2025-11-25 is NOT_OBSERVED (MCP_RES_BEHAVIOUR_LEFT_OPEN)",
        );
    }
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/reference-stdio-2026-07-28");
    relabel_negative(
        &dir,
        id,
        "NOT_OBSERVED",
        "MCP_RES_BEHAVIOUR_LEFT_OPEN",
        "NOT_OBSERVED",
    );
    refused_saying(
        &dir,
        "negative.json /observedReasonCode: recorded \"MCP_RES_BEHAVIOUR_LEFT_OPEN\"",
    );
}

/// timeout's control read from its stalled connection. The Python SDK's
/// server held a request whose head never ended open past the bound
/// (left open: no MUST asks for a timeout). Relabelled as timed out and the
/// check as a PASS, the judge finds no close and no 408 on that connection
/// and refuses it; the reference server, which answers that request with
/// 408, relabelled as left open, is refused too.
#[test]
fn a_stalled_request_relabelled_is_refused_from_its_connection() {
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/python-sdk-http-2025-11-25");
    relabel_negative(
        &dir,
        "timeout",
        "REJECT",
        "MCP_RES_HTTP_STALLED_REQUEST_TIMED_OUT",
        "PASS",
    );
    refused_saying(
        &dir,
        "give NOT_OBSERVED (MCP_RES_BEHAVIOUR_LEFT_OPEN) for the stalled request",
    );
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/reference-http-2025-11-25");
    let negative = read(&path_in(&dir, "timeout", "negative"));
    assert_eq!(
        negative["observedReasonCode"], "MCP_RES_HTTP_STALLED_REQUEST_TIMED_OUT",
        "{negative}"
    );
    relabel_negative(
        &dir,
        "timeout",
        "NOT_OBSERVED",
        "MCP_RES_BEHAVIOUR_LEFT_OPEN",
        "NOT_OBSERVED",
    );
    refused_saying(
        &dir,
        "give REJECT (MCP_RES_HTTP_STALLED_REQUEST_TIMED_OUT) for the stalled request",
    );
}

/// A control whose request id no kept wait can name (result-identity-metadata
/// sends `{"mcpres": 1}` as an id, which the reference server refuses with a
/// null-id -32600): relabelled as served, the judge reads the stored stdout
/// for a result with that id, finds none, and refuses it.
#[test]
fn a_control_with_an_object_id_relabelled_as_served_is_refused_from_its_stdout() {
    let (_tmp, dir) = copy_of("bundles/profiles/reference-protocol-revision-2025-11-25");
    let id = "result-identity-metadata";
    let negative = read(&path_in(&dir, id, "negative"));
    assert_eq!(
        negative["transcript"]["observation"]["requestId"],
        json!({"mcpres": 1}),
        "{negative}"
    );
    relabel_negative(
        &dir,
        id,
        "ACCEPT",
        "MCP_RES_INVALID_ID_TYPE_ACCEPTED",
        "FAIL",
    );
    refused_saying(
        &dir,
        "its stored stdout holds no accepting result for the request {\"mcpres\":1}",
    );
}

/// interleaved-unrelated-requests' control read from its gathered stdout
/// lines: the reference server answered the request and ignored the stray
/// response (`MCP_RES_STRAY_RESPONSE_IGNORED`). Relabelled as having
/// answered the stray response (a FAIL), the judge finds no line with the
/// stray response's id and no null-id error among them, and refuses it.
#[test]
fn a_stray_response_relabelled_as_answered_is_refused_from_its_stdout() {
    let (_tmp, dir) = copy_of("bundles/profiles/reference-protocol-revision-2025-11-25");
    let id = "interleaved-unrelated-requests";
    let negative = read(&path_in(&dir, id, "negative"));
    assert_eq!(
        negative["observedReasonCode"], "MCP_RES_STRAY_RESPONSE_IGNORED",
        "{negative}"
    );
    relabel_negative(
        &dir,
        id,
        "ACCEPT",
        "MCP_RES_STRAY_RESPONSE_ANSWERED",
        "FAIL",
    );
    refused_saying(
        &dir,
        "give NO_EFFECT (MCP_RES_STRAY_RESPONSE_IGNORED) for the stray response 424242",
    );
}

/// request-response-binding's control is sent with a null id (recorded as
/// `requestId: null`); the reference server refuses it. Relabelled as served
/// (a FAIL), the judge finds no result with a null id among the stored
/// responses and refuses it. timeout's control relabelled as the subject gone
/// is refused too: the stalled connection opened.
#[test]
fn a_null_id_control_said_served_and_a_stall_said_gone_are_refused() {
    let rel = "bundles/field/evidence/legs/reference-http-2025-11-25";
    let (_tmp, dir) = copy_of(rel);
    let id = "request-response-binding";
    let negative = read(&path_in(&dir, id, "negative"));
    assert_eq!(
        negative["transcript"]["observation"]["requestId"],
        Value::Null,
        "{negative}"
    );
    relabel_negative(
        &dir,
        id,
        "ACCEPT",
        "MCP_RES_HTTP_UNBINDABLE_ID_ACCEPTED",
        "FAIL",
    );
    refused_saying(
        &dir,
        "hold no accepting result for its request, sent with a null id",
    );
    let (_tmp, dir) = copy_of(rel);
    relabel_negative(
        &dir,
        "timeout",
        "TERMINATE",
        "MCP_RES_SUBJECT_EXITED",
        "FAIL",
    );
    refused_saying(
        &dir,
        "give REJECT (MCP_RES_HTTP_STALLED_REQUEST_TIMED_OUT) for the stalled request",
    );
}

/// Whether the listener still accepted connections after SIGTERM is read
/// from the connection the runner opened for that (stored after its
/// `listening-probe` event). A server that exits on SIGTERM while a forked
/// child keeps its listening socket fails listener-cleanup
/// (`MCP_RES_HTTP_LISTENER_LEFT_OPEN`, through its namespace's door, and the
/// child is named as left behind); relabelled as closed and the check as a
/// PASS, it is refused. The honest twin's control, whose probe connection
/// failed to open, relabelled as left open is refused too.
#[test]
fn whether_a_listener_outlived_sigterm_is_read_from_the_probe_connection() {
    let tmp = tempfile::tempdir().unwrap();
    let id = "listener-cleanup";
    let orphan = tmp.path().join("orphan");
    let run = run_listener_cleanup(&orphan, Some("orphan-listener"));
    assert_eq!(
        verdict_of(&run, id),
        ("FAIL".into(), "MCP_RES_HTTP_LISTENER_LEFT_OPEN".into()),
        "{run:#}"
    );
    assert_eq!(pointers(&validate(&orphan).1), Vec::<String>::new());
    relabel_negative(
        &orphan,
        id,
        "TERMINATE",
        "MCP_RES_HTTP_LISTENER_CLOSED_ON_STOP",
        "PASS",
    );
    refused_saying(
        &orphan,
        "the connection its runner opened after SIGTERM was accepted (MCP_RES_HTTP_LISTENER_LEFT_OPEN)",
    );
    let honest = tmp.path().join("honest");
    let run = run_listener_cleanup(&honest, None);
    assert_eq!(verdict_of(&run, id).0, "PASS", "{run:#}");
    relabel_negative(
        &honest,
        id,
        "TERMINATE",
        "MCP_RES_HTTP_LISTENER_LEFT_OPEN",
        "FAIL",
    );
    refused_saying(
        &honest,
        "the connection its runner opened after SIGTERM failed to open (MCP_RES_HTTP_LISTENER_CLOSED_ON_STOP)",
    );
}

/// listener-cleanup's positive is read from the addresses its record says the
/// server listened on: the reference server's HTTP leg listens on loopback
/// only, so its positive relabelled as bound beyond loopback (left open, the
/// check not observed) is refused; the leg itself validates as it is.
#[test]
fn a_listener_on_loopback_relabelled_as_bound_beyond_it_is_refused_from_its_record() {
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/reference-http-2026-07-28");
    assert_eq!(validate(&dir).0, 0);
    let id = "listener-cleanup";
    let path = dir.join(format!("artifacts/{id}/positive.json"));
    let mut doc = read(&path);
    let bound = doc["transcript"]["observation"]["boundAddresses"].clone();
    assert!(
        bound.as_array().is_some_and(|b| !b.is_empty()
            && b.iter()
                .all(|a| a.as_str() == Some("127.0.0.1") || a.as_str() == Some("::1"))),
        "{bound}"
    );
    doc["observedOutcome"] = json!("NOT_OBSERVED");
    doc["observedReasonCode"] = json!("MCP_RES_BEHAVIOUR_LEFT_OPEN");
    write(&path, &doc);
    let mut r = Relabel::open(&dir);
    r.not_observed(id, "MCP_RES_BEHAVIOUR_LEFT_OPEN");
    r.save();
    refused_saying(&dir, "but the bound addresses its record names");
}

/// proxy-added-headers' positive is read from the first response on its
/// request's connection: the reference server serves a request carrying
/// proxy headers with a result, so its positive relabelled as the headers
/// refused (a FAIL) is refused from the stored response.
#[test]
fn a_request_with_proxy_headers_served_relabelled_as_refused_is_refused_from_its_response() {
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/reference-http-2026-07-28");
    let id = "proxy-added-headers";
    let path = dir.join(format!("artifacts/{id}/positive.json"));
    let mut doc = read(&path);
    assert_eq!(
        doc["observedReasonCode"],
        "MCP_RES_HTTP_PROXY_HEADERS_INERT"
    );
    doc["observedOutcome"] = json!("REJECT");
    doc["observedReasonCode"] = json!("MCP_RES_HTTP_PROXY_HEADERS_REFUSED");
    write(&path, &doc);
    let mut r = Relabel::open(&dir);
    let i = r.index(id);
    r.run["checks"][i]["verdict"] = json!("FAIL");
    r.run["checks"][i]["reason"] = json!("MCP_RES_HTTP_PROXY_HEADERS_REFUSED");
    for c in r.evaluation["checks"].as_array_mut().unwrap() {
        if c["id"] == id {
            c["positive"]["observedOutcome"] = json!("REJECT");
            c["positive"]["observedReasonCode"] = json!("MCP_RES_HTTP_PROXY_HEADERS_REFUSED");
        }
    }
    r.relabel_results();
    r.save();
    refused_saying(
        &dir,
        "its request's connection stored status 200 with an answer to it",
    );
}

/// Five more Streamable HTTP positives are read from the first response on
/// their request's connection: one answer holds duplicate-delivery (two
/// would be answered twice); a response read to its end holds early-close;
/// a result holds cancellation-by-stream-close; an event stream with
/// progress before the result holds long-lived-response-stream; an answer
/// from a subject listening on loopback only holds
/// authenticated-loopback-http. The reference server holds each, so each
/// positive relabelled with the failure its runner would have given
/// otherwise (digests recomputed) is refused from the stored response.
#[test]
fn http_positives_relabelled_as_failures_are_refused_from_their_responses() {
    let cases = [
        ("duplicate-delivery", "MCP_RES_HTTP_ANSWERED_TWICE"),
        ("early-close", "MCP_RES_HTTP_ANSWER_INCOMPLETE"),
        ("cancellation-by-stream-close", "MCP_RES_HTTP_STREAM_FAILED"),
        ("long-lived-response-stream", "MCP_RES_HTTP_NOT_STREAMED"),
        (
            "long-lived-response-stream",
            "MCP_RES_HTTP_STREAM_ENDED_EARLY",
        ),
        (
            "authenticated-loopback-http",
            "MCP_RES_HTTP_LISTENER_NOT_LOOPBACK",
        ),
    ];
    for (id, wrong) in cases {
        let (_tmp, dir) = copy_of("bundles/field/evidence/legs/reference-http-2025-11-25");
        let path = dir.join(format!("artifacts/{id}/positive.json"));
        let mut doc = read(&path);
        assert_eq!(doc["observedOutcome"], "ACCEPT", "{id}");
        assert_eq!(doc["observedReasonCode"], doc["expectedReasonCode"], "{id}");
        doc["observedReasonCode"] = json!(wrong);
        write(&path, &doc);
        let mut r = Relabel::open(&dir);
        let i = r.index(id);
        r.run["checks"][i]["verdict"] = json!("FAIL");
        r.run["checks"][i]["reason"] = json!(wrong);
        for c in r.evaluation["checks"].as_array_mut().unwrap() {
            if c["id"] == id {
                c["positive"]["observedReasonCode"] = json!(wrong);
            }
        }
        r.relabel_results();
        r.save();
        refused_saying(
            &dir,
            &format!(
                "check {id}: its positive.json says ACCEPT ({wrong}), but its request's connection stored status 200 with 1 answer(s) to it, which"
            ),
        );
    }
}

/// Three Streamable HTTP controls read from their connections: after the
/// early close (early-close) and the stream closed after its first event
/// (cancellation-by-stream-close), the reference server answers the request
/// on the record's last connection, so neither control can be relabelled
/// as a subject that stopped serving; and it never answers the response
/// delivered to it twice (duplicate-delivery), so that control cannot be
/// relabelled as answered: no stored response carries a foreign id.
#[test]
fn http_controls_relabelled_against_their_connections_are_refused() {
    let cases = [
        (
            "early-close",
            "REJECT",
            "MCP_RES_HTTP_STOPPED_SERVING",
            "is answered in the stored bytes: the subject went on serving",
        ),
        (
            "cancellation-by-stream-close",
            "REJECT",
            "MCP_RES_HTTP_STOPPED_SERVING",
            "is answered in the stored bytes: the subject went on serving",
        ),
        (
            "duplicate-delivery",
            "ACCEPT",
            "MCP_RES_HTTP_STRAY_RESPONSE_ANSWERED",
            "no stored response carries an id other than those of the requests it sent",
        ),
    ];
    for (id, outcome, reason, says) in cases {
        let (_tmp, dir) = copy_of("bundles/field/evidence/legs/reference-http-2025-11-25");
        let doc = read(&dir.join(format!("artifacts/{id}/negative.json")));
        assert_eq!(doc["observedReasonCode"], doc["expectedReasonCode"], "{id}");
        relabel_negative(&dir, id, outcome, reason, "FAIL");
        refused_saying(
            &dir,
            &format!("check {id}: its negative.json says {outcome} ({reason}), but"),
        );
        refused_saying(&dir, says);
    }
}

/// `positive.json`, `run.json` and `evaluation.json` of check `id` relabelled
/// to `outcome` / `reason` with the check's verdict `verdict`, digests
/// recomputed.
fn relabel_positive(dir: &Path, id: &str, outcome: &str, reason: &str, verdict: &str) {
    let path = dir.join(format!("artifacts/{id}/positive.json"));
    let mut doc = read(&path);
    doc["observedOutcome"] = json!(outcome);
    doc["observedReasonCode"] = json!(reason);
    write(&path, &doc);
    let mut r = Relabel::open(dir);
    let i = r.index(id);
    r.run["checks"][i]["verdict"] = json!(verdict);
    r.run["checks"][i]["reason"] = json!(reason);
    for c in r.evaluation["checks"].as_array_mut().unwrap() {
        if c["id"] == id {
            c["positive"]["observedOutcome"] = json!(outcome);
            c["positive"]["observedReasonCode"] = json!(reason);
        }
    }
    r.relabel_results();
    r.save();
}

/// Protocol-revision observations read from the stored opening and stdout:
/// the reference server answers `initialize` with the revision asked for,
/// lists a string `resultType`, answers `server/discover` completely, never
/// puts a `result` in an error, serves a request naming an unknown session
/// and answers an id past 2^53 under that id. Each relabelled with the
/// failure its runner gives otherwise (digests recomputed) is refused.
#[test]
fn revision_observations_relabelled_against_their_stdout_are_refused() {
    let old = "bundles/profiles/reference-protocol-revision-2025-11-25";
    let new = "bundles/profiles/reference-protocol-revision-2026-07-28";
    let cases = [
        (
            old,
            "explicit-protocol-revision",
            "positive",
            "ACCEPT",
            "MCP_RES_REVISION_NOT_HONOURED",
            "the opening's wait its runner kept read result and its stored answer, which give MCP_RES_REVISION_EXPLICIT",
        ),
        (
            old,
            "unsupported-version-failure",
            "positive",
            "ACCEPT",
            "MCP_RES_SUPPORTED_VERSION_NOT_SERVED",
            "its kept wait (result) and the stored answer give MCP_RES_SUPPORTED_VERSION_SERVED",
        ),
        (
            new,
            "explicit-protocol-revision",
            "positive",
            "ACCEPT",
            "MCP_RES_REVISION_NOT_HONOURED",
            "the wait its runner kept for the request after the opening read result",
        ),
        (
            new,
            "server-discover",
            "positive",
            "ACCEPT",
            "MCP_RES_DISCOVER_INCOMPLETE",
            "the opening's wait its runner kept read result and its stored answer, which give MCP_RES_DISCOVER_COMPLETE",
        ),
        (
            new,
            "required-result-type",
            "positive",
            "ACCEPT",
            "MCP_RES_RESULT_TYPE_MISSING",
            "the wait its runner kept for tools/list read result and its stored answer",
        ),
        (
            new,
            "required-result-type",
            "negative",
            "REJECT",
            "MCP_RES_ERROR_WITH_RESULT",
            "no stored stdout message is an error carrying a result",
        ),
        (
            "bundles/profiles/python-sdk-protocol-revision-2025-11-25",
            "capability-declaration",
            "positive",
            "ACCEPT",
            "MCP_RES_CAPABILITIES_MISSING",
            "but the capabilities of the stored answer to its opening give MCP_RES_CAPABILITIES_DECLARED",
        ),
        (
            new,
            "no-session-id-assumption",
            "negative",
            "REJECT",
            "MCP_RES_SESSION_ID_ASSUMED",
            "no stored stdout message is an error other than -32700",
        ),
        (
            old,
            "safe-integer-constraints",
            "negative",
            "ACCEPT",
            "MCP_RES_UNSAFE_INTEGER_CORRUPTED",
            "no stored stdout line answers under an id next to the",
        ),
    ];
    for (bundle, id, role, outcome, reason, says) in cases {
        let (_tmp, dir) = copy_of(bundle);
        let doc = read(&dir.join(format!("artifacts/{id}/{role}.json")));
        assert_eq!(
            doc["observedReasonCode"], doc["expectedReasonCode"],
            "{bundle} {id} {role}"
        );
        if role == "positive" {
            relabel_positive(&dir, id, outcome, reason, "FAIL");
        } else {
            relabel_negative(&dir, id, outcome, reason, "FAIL");
        }
        refused_saying(&dir, &format!("check {id}: its {role}.json says"));
        refused_saying(&dir, says);
    }
}

/// Two more readings of Streamable HTTP controls from their connections: the
/// reference server answers two pipelined requests in order (the first
/// response the first, the second the second), so `backpressure`'s control
/// relabelled as reordered is refused; and it answers a malformed chunk and
/// a syntax defect with a 400, never a 2xx without an answer, so
/// `malformed-chunk`'s control and `backpressure`'s control and mutant
/// relabelled as "no answer frame" are refused.
#[test]
fn pipelined_order_and_an_answerless_2xx_are_read_from_the_connections() {
    let leg = "bundles/field/evidence/legs/reference-http-2025-11-25";
    let (_tmp, dir) = copy_of(leg);
    let doc = read(&dir.join("artifacts/backpressure/negative.json"));
    assert_eq!(doc["observedReasonCode"], "MCP_RES_HTTP_PIPELINE_ORDERED");
    relabel_negative(
        &dir,
        "backpressure",
        "ACCEPT",
        "MCP_RES_HTTP_PIPELINE_REORDERED",
        "FAIL",
    );
    refused_saying(
        &dir,
        "but the first response on its pipelined connection answers",
    );

    let (_tmp, dir) = copy_of(leg);
    relabel_negative(
        &dir,
        "malformed-chunk",
        "NO_EFFECT",
        "MCP_RES_HTTP_NO_ANSWER_FRAME",
        "NOT_OBSERVED",
    );
    refused_saying(
        &dir,
        "no connection that carried a request has a first stored response that is a 2xx without an answer",
    );

    let (_tmp, dir) = copy_of(leg);
    relabel_negative(
        &dir,
        "backpressure",
        "NO_EFFECT",
        "MCP_RES_HTTP_NO_ANSWER_FRAME",
        "NOT_OBSERVED",
    );
    refused_saying(
        &dir,
        "check backpressure: its negative.json says NO_EFFECT (MCP_RES_HTTP_NO_ANSWER_FRAME), but no connection",
    );

    let (_tmp, dir) = copy_of(leg);
    let path = dir.join("artifacts/backpressure/mutant.json");
    let mut doc = read(&path);
    assert_ne!(doc["observedReasonCode"], "MCP_RES_HTTP_NO_ANSWER_FRAME");
    doc["observedOutcome"] = json!("NO_EFFECT");
    doc["observedReasonCode"] = json!("MCP_RES_HTTP_NO_ANSWER_FRAME");
    write(&path, &doc);
    Relabel::open(&dir).save();
    refused_saying(
        &dir,
        "check backpressure: its mutant.json says NO_EFFECT (MCP_RES_HTTP_NO_ANSWER_FRAME), but no connection",
    );
}

/// socket-cleanup read from its record: the reference server answers its
/// five requests and holds no socket for them afterwards (the socket table
/// its record names is empty), and closes the idle connection when SIGTERM
/// ends it (a `subject-closed` event on the connection that sent nothing).
/// Relabelled as sockets held, or as the idle connection left open, each is
/// refused.
#[test]
fn socket_cleanup_relabelled_against_its_record_is_refused() {
    let leg = "bundles/field/evidence/legs/reference-http-2025-11-25";
    let (_tmp, dir) = copy_of(leg);
    relabel_positive(
        &dir,
        "socket-cleanup",
        "ACCEPT",
        "MCP_RES_HTTP_SOCKETS_HELD",
        "FAIL",
    );
    refused_saying(
        &dir,
        "its 5 requests answered in the stored bytes and the 0 socket(s) its record says the subject still held for them",
    );
    let (_tmp, dir) = copy_of(leg);
    let doc = read(&dir.join("artifacts/socket-cleanup/negative.json"));
    assert_eq!(
        doc["observedReasonCode"],
        "MCP_RES_HTTP_SOCKETS_CLOSED_ON_STOP"
    );
    relabel_negative(
        &dir,
        "socket-cleanup",
        "TERMINATE",
        "MCP_RES_HTTP_SOCKET_LEFT_OPEN",
        "FAIL",
    );
    refused_saying(
        &dir,
        "the subject ended its idle connection (3) in the stored events",
    );
}

/// A syntax-defect mutant answered by the syntax guard (a -32700 with a null
/// id, so the wait for its own id read nothing) relabelled as unanswered is
/// refused from the stored stdout: the reference server's partial-line and
/// no-process-as-conversation mutants.
#[test]
fn a_mutant_met_by_the_syntax_guard_cannot_be_relabelled_unanswered() {
    for id in ["partial-line", "no-process-as-conversation"] {
        let (_tmp, dir) = copy_of("bundles/profiles/reference-stdio-transport-2025-11-25");
        let path = dir.join(format!("artifacts/{id}/mutant.json"));
        let mut doc = read(&path);
        assert_eq!(doc["observedReasonCode"], "MCP_RES_SYNTAX_GUARD", "{id}");
        doc["observedOutcome"] = json!("NO_EFFECT");
        doc["observedReasonCode"] = json!("MCP_RES_NO_ANSWER");
        write(&path, &doc);
        Relabel::open(&dir).save();
        refused_saying(
            &dir,
            &format!(
                "check {id}: its mutant.json says NO_EFFECT (MCP_RES_NO_ANSWER), but the stored stdout holds a -32700 parse error"
            ),
        );
    }
}

/// oversized-line's control where the subject ended: server-everything
/// exits 0 when it reads the 16 MiB line (its stdout closes with neither the
/// request nor the liveness request answered, and no signal of the runner's
/// is stored), a bounded ending. Relabelled as no answer, as the line
/// dropped silently or as the subject gone, each is refused from the stored
/// waits and exit (a crash is refused by the exit rule already).
#[test]
fn an_oversized_line_ending_is_read_from_the_stored_exit() {
    let leg = "bundles/profiles/everything-stdio-transport-2025-11-25";
    let doc = read(&repo(leg).join("artifacts/oversized-line/negative.json"));
    assert_eq!(doc["observedReasonCode"], "MCP_RES_OVERSIZED_LINE_BOUNDED");
    assert_eq!(doc["observedOutcome"], "TERMINATE");
    for (outcome, reason, verdict) in [
        ("NO_EFFECT", "MCP_RES_NO_ANSWER", "NOT_OBSERVED"),
        ("REJECT", "MCP_RES_OVERSIZED_LINE_DROPPED_SILENTLY", "FAIL"),
        ("TERMINATE", "MCP_RES_SUBJECT_EXITED", "NOT_OBSERVED"),
    ] {
        let (_tmp, dir) = copy_of(leg);
        relabel_negative(&dir, "oversized-line", outcome, reason, verdict);
        refused_saying(
            &dir,
            "the wait its runner kept for the request (stdout closed), the liveness request's (unanswered)",
        );
    }
}

/// unsupported-version-failure's control before 2026-07-28 read from the
/// stored answer: the reference server answers an `initialize` naming an
/// unknown version with its own released revision (the counter-offer, the
/// refusal), so the control relabelled as the version accepted is refused.
#[test]
fn a_counter_offer_relabelled_as_the_unknown_version_accepted_is_refused() {
    let (_tmp, dir) = copy_of("bundles/profiles/reference-protocol-revision-2025-11-25");
    let id = "unsupported-version-failure";
    let doc = read(&dir.join(format!("artifacts/{id}/negative.json")));
    assert_eq!(
        doc["observedReasonCode"],
        "MCP_RES_UNSUPPORTED_VERSION_REFUSED"
    );
    relabel_negative(
        &dir,
        id,
        "ACCEPT",
        "MCP_RES_UNSUPPORTED_VERSION_ACCEPTED",
        "FAIL",
    );
    refused_saying(
        &dir,
        "names 2025-11-25, which gives MCP_RES_UNSUPPORTED_VERSION_REFUSED",
    );
}

/// json-schema-dialect-identity's control read from the stored answer: the
/// Python SDK server answers its ill-typed call with a tool result marked
/// `isError`, the refusal, so the control relabelled as the violation
/// accepted is refused.
#[test]
fn an_ill_typed_call_refused_as_a_tool_error_cannot_be_relabelled_accepted() {
    let (_tmp, dir) = copy_of("bundles/profiles/python-sdk-protocol-revision-2025-11-25");
    let id = "json-schema-dialect-identity";
    let doc = read(&dir.join(format!("artifacts/{id}/negative.json")));
    assert_eq!(
        doc["observedReasonCode"],
        "MCP_RES_SCHEMA_VIOLATION_REFUSED"
    );
    relabel_negative(
        &dir,
        id,
        "ACCEPT",
        "MCP_RES_SCHEMA_VIOLATION_ACCEPTED",
        "FAIL",
    );
    refused_saying(
        &dir,
        "the stored result for its ill-typed call has isError, which gives MCP_RES_SCHEMA_VIOLATION_REFUSED",
    );
}

/// long-lived-response-stream's control (a streaming call with wrongly typed
/// arguments) is refused by the Python SDK server with a tool result marked
/// `isError`; its stored bytes hold no accepting result for it, so the
/// control relabelled as the invalid arguments accepted is refused.
#[test]
fn a_streaming_call_refused_as_a_tool_error_cannot_be_relabelled_accepted() {
    let (_tmp, dir) = copy_of("bundles/field/evidence/legs/python-sdk-http-2025-11-25");
    let id = "long-lived-response-stream";
    relabel_negative(
        &dir,
        id,
        "ACCEPT",
        "MCP_RES_HTTP_INVALID_ARGUMENTS_ACCEPTED",
        "FAIL",
    );
    refused_saying(
        &dir,
        "says the control was served (MCP_RES_HTTP_INVALID_ARGUMENTS_ACCEPTED), but its stored received bytes hold no accepting result for the control",
    );
}

/// no-connection-as-conversation's control at 2025-11-25 is a listing on a
/// fresh process with no opening; the labels of the 2026-07-28 control (a
/// version refused with the wrong error, an earlier version carried over)
/// are refused at that revision whatever the bytes.
#[test]
fn a_2026_label_on_a_2025_conversation_control_is_refused() {
    for (bundle, outcome, reason) in [
        (
            "bundles/profiles/reference-protocol-revision-2025-11-25",
            "REJECT",
            "MCP_RES_VERSION_REFUSED_WRONG_ERROR",
        ),
        (
            "bundles/profiles/everything-protocol-revision-2025-11-25",
            "ACCEPT",
            "MCP_RES_EARLIER_VERSION_CARRIED_OVER",
        ),
    ] {
        let (_tmp, dir) = copy_of(bundle);
        relabel_negative(
            &dir,
            "no-connection-as-conversation",
            outcome,
            reason,
            "FAIL",
        );
        refused_saying(
            &dir,
            "a label of the 2026-07-28 control, but the evaluation is at 2025-11-25",
        );
    }
}

/// A committed control (recorded as `was`) relabelled `outcome`/`reason`
/// with the check `verdict`, digests recomputed: refused, saying `says`.
fn control_relabel_refused(
    bundle: &str,
    id: &str,
    was: &str,
    (outcome, reason, verdict): (&str, &str, &str),
    says: &str,
) {
    let (_tmp, dir) = copy_of(bundle);
    let doc = read(&dir.join(format!("artifacts/{id}/negative.json")));
    assert_eq!(doc["observedReasonCode"], was);
    relabel_negative(&dir, id, outcome, reason, verdict);
    refused_saying(&dir, says);
}

/// A control whose valid twin the stored stdout answers with an error is
/// uncredited whatever else it met (the twin binds every reading but
/// acceptance): server-everything answers the 2026-07-28 era probe's twin
/// with -32601 at 2025-11-25, so its control relabelled as method not found
/// (uncredited for another reason) is refused. And a control credited with
/// its refusal whose request its runner's last wait read no answer (and no
/// line gathered is a null-id error or the syntax guard) is refused: the
/// Python SDK server leaves a `server/discover` with non-object params
/// unanswered at 2026-07-28.
#[test]
fn a_refused_twin_and_silence_bear_only_their_own_labels() {
    control_relabel_refused(
        "bundles/profiles/everything-protocol-revision-2025-11-25",
        "modern-legacy-auto-behavior",
        "MCP_RES_VALID_TWIN_REFUSED",
        (
            "NOT_OBSERVED",
            "MCP_RES_METHOD_NOT_FOUND_NOT_CREDITED",
            "NOT_OBSERVED",
        ),
        "hold no accepting result for the valid twin",
    );
    control_relabel_refused(
        "bundles/profiles/python-sdk-protocol-revision-2026-07-28",
        "server-discover",
        "MCP_RES_NO_ANSWER",
        ("REJECT", "MCP_RES_DISCOVER_INVALID_PARAMS_REFUSED", "PASS"),
        "read no answer, and no line gathered while waiting",
    );
}

/// safe-integer-constraints' control met with silence while the subject
/// went on serving is the id kept (no answer under a rounded neighbour), not
/// an unanswered control: server-everything stays silent on a listing with
/// an id past 2^53.
#[test]
fn an_unsafe_integer_control_met_with_silence_is_the_id_kept() {
    control_relabel_refused(
        "bundles/profiles/everything-protocol-revision-2025-11-25",
        "safe-integer-constraints",
        "MCP_RES_UNSAFE_INTEGER_NOT_CORRUPTED",
        ("NO_EFFECT", "MCP_RES_NO_ANSWER", "FAIL"),
        "the id was not corrupted",
    );
}

/// An attempt beyond loopback seen in the isolated OAuth run's namespace
/// (`artifacts/cleanup.json` `outsideAttempts`) is an external network
/// request: an evaluation that counts none beside it (loopback only) is
/// refused. The committed reference evaluation lists none and re-judges as
/// recorded (`oauth_evaluations_are_judged_from_their_record_too`).
#[test]
fn an_outside_attempt_in_the_record_is_counted_as_an_external_request() {
    let (_tmp, dir) = copy_of("bundles/oauth/reference");
    let path = dir.join("artifacts/cleanup.json");
    let mut cleanup = read(&path);
    cleanup["outsideAttempts"] = json!([{"protocol": "tcp", "address": "192.0.2.1", "port": 80}]);
    write(&path, &cleanup);
    rebind_oauth(&dir);
    let (code, report) = validate(&dir);
    only_not_from_record(code, &report);
    assert!(
        messages(&report)
            .iter()
            .any(|m| m.contains("1 attempt(s) beyond loopback seen in the run's namespace")),
        "{report:#}"
    );
    assert!(
        pointers(&report).contains(&"/fixture/externalNetworkRequests".to_string()),
        "{report:#}"
    );
}
