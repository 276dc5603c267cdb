//! MCPRES-RESULT-001 through the real binary: a harness bundle that records a
//! failed run, with its statement rewritten to PASS and every digest
//! recomputed, passes every reference rule but is refused with
//! `MCP_RES_RESULT_CONTRADICTS_EVIDENCE`, in the single-file and the directory
//! form. The committed harness bundles, whose fault cases fail on their first
//! attempt and are recovered by a retry, stay valid.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use mcpres::json::Limits;
use mcpres::produce::builder::{Built, BundleBuilder};
use mcpres::validate::codes;
use serde_json::{Value, json};

const CODE: &str = codes::RESULT_CONTRADICTS_EVIDENCE;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn recovery_bundle() -> PathBuf {
    root().join("bundles/harness/reference-recovery-stdio")
}

fn load(path: &Path) -> Value {
    let loaded = mcpres::bundle::load(path, &Limits::default()).expect("bundle loads");
    assert!(
        loaded.storage_findings.is_empty(),
        "{:?}",
        loaded.storage_findings
    );
    loaded.doc.expect("bundle document")
}

fn validate(path: &Path) -> (Output, Value) {
    let out = support::command()
        .args(["validate", "--format", "json"])
        .arg(path)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, report)
}

fn index_of(list: &Value, key: &str, id: &str) -> usize {
    list.as_array()
        .unwrap()
        .iter()
        .position(|x| x[key] == id)
        .unwrap_or_else(|| panic!("no {key} {id}"))
}

/// Rebuild a bundle loaded from `dir` after `edit`: evidence and statement as
/// edited, every raw artifact with its bytes from `dir`, every digest sealed again.
fn rebuild(doc: &Value, dir: &Path, edit: impl FnOnce(&mut Value)) -> Built {
    let mut doc = doc.clone();
    edit(&mut doc);
    let mut builder = BundleBuilder::new(doc["evidence"].clone(), doc["statement"].clone());
    for a in doc["integrity"]["artifacts"].as_array().unwrap() {
        let path = a["path"].as_str().unwrap();
        let media = a["mediaType"].as_str().unwrap();
        if media == "application/vnd.mcp-res.observation+json"
            || path == "evidence-envelope.json"
            || path == "conformance-statement.json"
        {
            continue;
        }
        builder
            .add_raw(path, media, fs::read(dir.join(path)).unwrap())
            .unwrap();
    }
    builder.build().unwrap()
}

/// What `mcpres run --scenario reference-recovery` records for a trial that
/// failed: the clean control and its oracle failed, no fault case recovered
/// (each retry failed too, and each recovery oracle check says so), and the
/// trial summary counts one failed trial.
/// The statement is then rewritten from FAIL to PASS.
fn failed_run_claiming_pass(doc: &mut Value) {
    let ev = &mut doc["evidence"];
    let clean = index_of(&ev["operations"], "operationId", "t1-clean");
    ev["operations"][clean]["outcome"] = json!("FAIL");
    for op in ev["operations"].as_array_mut().unwrap() {
        if op["kind"] == "RECOVERY_ATTEMPT" {
            op["outcome"] = json!("FAIL");
        }
    }
    let oracle = index_of(&ev["observations"], "id", "obs-t1-clean-oracle");
    ev["observations"][oracle]["outcome"] = json!("FAIL");
    ev["observations"][oracle]["reasonCode"] = json!("CLEAN_CONTROL_FAILED");
    for o in ev["observations"].as_array_mut().unwrap() {
        if o["id"].as_str().unwrap().ends_with("-recovery") {
            o["outcome"] = json!("FAIL");
            o["reasonCode"] = json!("RECOVERY_NOT_AS_EXPECTED");
        }
    }
    ev["trialSummary"]["counts"] = json!({"success": 0, "failure": 1, "incomplete": 0});
    doc["statement"]["result"] = json!("PASS");
}

fn finding_pointers(report: &Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["pointer"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn failed_harness_run_rewritten_to_pass_is_refused() {
    let dir = recovery_bundle();
    let doc = load(&dir);
    let built = rebuild(&doc, &dir, failed_run_claiming_pass);

    // Every reference rule passes: the reference validators would accept it.
    let report = mcpres::validate::validate_document(&built.doc, &Default::default());
    assert!(
        report.findings.iter().all(|f| f.code == CODE),
        "{:?}",
        report.findings
    );
    assert_eq!(report.evidence_class.as_deref(), Some("GENUINE_RUNTIME"));

    let ev = &built.doc["evidence"];
    let op = |id: &str| {
        format!(
            "/evidence/operations/{}/outcome",
            index_of(&ev["operations"], "operationId", id)
        )
    };
    let mut expected = vec![op("t1-clean")];
    for fault in [
        "t1-recover-overload",
        "t1-recover-disconnect",
        "t1-recover-crash",
    ] {
        expected.push(op(fault));
    }
    for fault in ["timeout", "overload", "disconnect", "crash"] {
        expected.push(op(&format!("t1-recover-{fault}-retry-1")));
    }
    // Operations come in document order; sort the expectation the same way.
    expected.sort_by_key(|p| p.split('/').nth(3).unwrap().parse::<usize>().unwrap());
    // Then the clean control's oracle and the four recovery oracles, in document order.
    let mut observed: Vec<usize> = ev["observations"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, o)| o["outcome"] == "FAIL")
        .map(|(i, _)| i)
        .collect();
    observed.sort_unstable();
    assert_eq!(observed.len(), 5);
    for i in observed {
        expected.push(format!("/evidence/observations/{i}/outcome"));
    }
    expected.push("/evidence/trialSummary/counts/success".into());
    expected.push("/evidence/trialSummary/counts/failure".into());

    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("contradicted.json");
    built.write_file(&file).unwrap();
    let out_dir = tmp.path().join("contradicted");
    built.write_dir(&out_dir).unwrap();
    for path in [&file, &out_dir] {
        let (out, report) = validate(path);
        assert_eq!(out.status.code(), Some(1), "{}: {report}", path.display());
        assert_eq!(report["valid"], false);
        assert_eq!(report["diagnostics"], json!([CODE]), "{}", path.display());
        assert_eq!(report["evidenceClass"], "GENUINE_RUNTIME");
        let found = finding_pointers(&report);
        let wanted: Vec<(String, String)> = expected
            .iter()
            .map(|p| (CODE.to_string(), p.clone()))
            .collect();
        assert_eq!(found, wanted, "{}", path.display());
        assert_eq!(report["findings"][0]["rule"], "MCPRES-RESULT-001");
    }

    // The same evidence stating the FAIL it observed is valid.
    let honest = rebuild(&doc, &dir, |d| {
        failed_run_claiming_pass(d);
        d["statement"]["result"] = json!("FAIL");
    });
    let file = tmp.path().join("honest.json");
    honest.write_file(&file).unwrap();
    let (out, report) = validate(&file);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["diagnostics"], json!([]));
}

#[test]
fn recovered_harness_bundle_stays_valid_through_the_binary() {
    let dir = recovery_bundle();
    let doc = load(&dir);
    // Its fault cases fail on the first attempt and each retry passes.
    let failing: Vec<&str> = doc["evidence"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "FAULT_CASE" && o["outcome"] == "FAIL")
        .map(|o| o["operationId"].as_str().unwrap())
        .collect();
    assert_eq!(failing.len(), 3, "{failing:?}");
    let (out, report) = validate(&dir);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["diagnostics"], json!([]));

    // Resealed unchanged, in both forms, it is still valid.
    let built = rebuild(&doc, &dir, |_| {});
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("same.json");
    built.write_file(&file).unwrap();
    let same_dir = tmp.path().join("same");
    built.write_dir(&same_dir).unwrap();
    for path in [&file, &same_dir] {
        let (out, report) = validate(path);
        assert_eq!(out.status.code(), Some(0), "{}: {report}", path.display());
    }
}

#[test]
fn reference_rule_failure_stays_primary() {
    let dir = recovery_bundle();
    let doc = load(&dir);
    let mut built = rebuild(&doc, &dir, failed_run_claiming_pass);
    // Break one binding the references check: the bundle digest.
    built.doc["integrity"]["bundleDigest"] = json!("0".repeat(64));
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("broken.json");
    built.write_file(&file).unwrap();
    let (out, report) = validate(&file);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(report["diagnostics"], json!([codes::DIGEST_MISMATCH]));
    let found = finding_pointers(&report);
    assert!(found.iter().any(|(c, _)| c == CODE), "{found:?}");
}

#[test]
fn explain_knows_the_code() {
    let out = support::command()
        .args(["explain", "result_contradicts_evidence"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("MCP_RES_RESULT_CONTRADICTS_EVIDENCE (MCPRES-RESULT-001)\n"),
        "{text}"
    );
}
