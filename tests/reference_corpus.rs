//! The external-corpus test: every v0.2 catalog vector of the reference kit must get
//! exactly the catalog's expected diagnostics and the matching exit code from the
//! real `mcpres` binary. The corpus lives outside the repository; without it the
//! test says so and passes vacuously (CI always has it).

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn corpus_root() -> Option<PathBuf> {
    support::reference_corpus_dir()
}

fn sha256_file(path: &Path) -> String {
    mcpres::json::sha256_hex(&std::fs::read(path).expect("read vector"))
}

fn run_json(path: &Path) -> (i32, Value) {
    let out = support::command()
        .args(["validate", "--format", "json"])
        .arg(path)
        .output()
        .expect("run mcpres");
    let text = String::from_utf8(out.stdout).expect("utf-8 output");
    let value: Value = serde_json::from_str(text.trim()).expect("one JSON object");
    (out.status.code().expect("exit code"), value)
}

#[test]
fn v02_catalog_vectors_get_exactly_the_expected_diagnostics() {
    let Some(root) = corpus_root() else {
        eprintln!(
            "SKIPPED: reference corpus not found (set MCPRES_REFERENCE_CORPUS or place it at ../shared/reference-corpus)"
        );
        return;
    };
    let dir = root.join("v0.2.0/test-vectors");
    let catalog: Value =
        serde_json::from_slice(&std::fs::read(dir.join("catalog.json")).expect("catalog"))
            .expect("catalog JSON");
    let mut checked = 0;
    let mut failures = Vec::new();
    for group in ["valid", "invalid"] {
        for entry in catalog[group].as_array().expect("catalog list") {
            let id = entry["id"].as_str().unwrap();
            let path = dir.join(entry["path"].as_str().unwrap());
            assert_eq!(
                sha256_file(&path),
                entry["fileSha256"].as_str().unwrap(),
                "{id}: corpus file differs from its catalog digest"
            );
            let expected: Vec<String> = entry["expectedDiagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            let (code, result) = run_json(&path);
            let got: Vec<String> = result["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            let expected_code = if expected.is_empty() { 0 } else { 1 };
            if got != expected || code != expected_code {
                failures.push(format!(
                    "{id}: expected {expected:?} (exit {expected_code}), got {got:?} (exit {code})"
                ));
            }
            // The primary diagnostic leads the findings list, and a valid vector has none.
            let findings = result["findings"].as_array().unwrap();
            match expected.first() {
                None => assert!(findings.is_empty(), "{id}: valid vector has findings"),
                Some(primary) => assert_eq!(findings[0]["code"], primary.as_str(), "{id}"),
            }
            assert_eq!(result["valid"], expected.is_empty(), "{id}");
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
    assert_eq!(checked, 25, "the v0.2 catalog lists 25 vectors");
    eprintln!("checked {checked} reference vectors");
}

#[test]
fn catalog_vectors_validate_identically_as_bundle_directories() {
    let Some(root) = corpus_root() else {
        eprintln!("SKIPPED: reference corpus not found");
        return;
    };
    let dir = root.join("v0.2.0/test-vectors");
    let tmp = tempfile::tempdir().expect("tempdir");
    for name in [
        "valid/reason-bound-negative.json",
        "valid/repeated-stable.json",
    ] {
        let src = dir.join(name);
        let out = tmp.path().join(name.replace(['/', '.'], "-"));
        let status = support::command()
            .arg("unpack")
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .status()
            .expect("run unpack");
        assert!(status.success(), "unpack {name}");
        let (file_code, file_result) = run_json(&src);
        let (dir_code, dir_result) = run_json(&out);
        assert_eq!(file_code, dir_code, "{name}");
        assert_eq!(
            file_result["diagnostics"], dir_result["diagnostics"],
            "{name}"
        );
        assert_eq!(
            file_result["evidenceClass"], dir_result["evidenceClass"],
            "{name}"
        );
    }
}

/// The v0.1 catalog (7 valid + 18 invalid vectors), the two v0.1 examples and the two v0.1
/// field-evidence bundles, judged with v0.1 semantics: exactly the expected diagnostics and
/// the matching exit code.
#[test]
fn v01_catalog_vectors_examples_and_field_evidence_get_exactly_the_expected_diagnostics() {
    let Some(root) = corpus_root() else {
        eprintln!("SKIPPED: reference corpus not found");
        return;
    };
    let base = root.join("v0.1.0");
    let dir = base.join("test-vectors");
    let catalog: Value =
        serde_json::from_slice(&std::fs::read(dir.join("catalog.json")).expect("v0.1 catalog"))
            .expect("catalog JSON");
    let mut cases: Vec<(String, PathBuf, Vec<String>)> = Vec::new();
    for group in ["valid", "invalid"] {
        for entry in catalog[group].as_array().expect("catalog list") {
            let id = entry["id"].as_str().unwrap().to_string();
            let path = dir.join(entry["path"].as_str().unwrap());
            assert_eq!(
                sha256_file(&path),
                entry["fileSha256"].as_str().unwrap(),
                "{id}: corpus file differs from its catalog digest"
            );
            let expected = entry["expectedDiagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            cases.push((id, path, expected));
        }
    }
    assert_eq!(cases.len(), 25, "the v0.1 catalog lists 25 vectors");
    // The examples and field evidence have no catalog; their expected results are what the
    // v0.1 kit's rules give: the invalid example has no CLEAN_CONTROL operation.
    for (name, expected) in [
        ("examples/hand-authored-valid.json", None),
        (
            "examples/hand-authored-invalid.json",
            Some("MCP_RES_MISSING_CLEAN_CONTROL"),
        ),
        ("field-evidence/mcp-everything-2026.7.4.mcp-res.json", None),
        ("field-evidence/resilireplay-mcp-demo.mcp-res.json", None),
    ] {
        cases.push((
            name.to_string(),
            base.join(name),
            expected.map(str::to_string).into_iter().collect(),
        ));
    }
    let mut failures = Vec::new();
    let mut codes_seen = std::collections::BTreeSet::new();
    for (id, path, expected) in &cases {
        let (code, result) = run_json(path);
        let got: Vec<String> = result["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let expected_code = if expected.is_empty() { 0 } else { 1 };
        if &got != expected || code != expected_code {
            failures.push(format!(
                "{id}: expected {expected:?} (exit {expected_code}), got {got:?} (exit {code})"
            ));
        }
        assert_eq!(result["standardVersion"], "0.1.0", "{id}: judged as v0.1");
        assert_eq!(result["valid"], expected.is_empty(), "{id}");
        let findings = result["findings"].as_array().unwrap();
        match expected.first() {
            None => {
                assert!(findings.is_empty(), "{id}: valid input has findings");
                assert!(result["evidenceClass"].is_string(), "{id}: class reported");
            }
            Some(primary) => assert_eq!(findings[0]["code"], primary.as_str(), "{id}"),
        }
        codes_seen.extend(got);
    }
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
    // Together the inputs exercise all 17 v0.1 codes.
    assert_eq!(codes_seen.len(), 17, "distinct v0.1 codes: {codes_seen:?}");
    for code in &codes_seen {
        assert!(
            mcpres::validate::codes::V01.contains(&code.as_str()),
            "{code}"
        );
    }
    eprintln!("checked {} v0.1 reference inputs", cases.len());
}
