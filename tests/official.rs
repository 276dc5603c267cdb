//! Official-conformance attachments: mcpres' own vectors (`testdata/official/vectors`,
//! written by `examples/gen_official.rs`), the results-folder fixture
//! (`testdata/official/results`), the real capture of the reference corpus, the
//! import stops, and the cases where the two reference validators disagree.

mod support;

use support::mcpres;

#[allow(dead_code)]
#[path = "../examples/gen_official.rs"]
mod gen_official;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use mcpres::json::canonical::sha256_hex;
use mcpres::produce::official::{
    self, ImportError, ImportOptions, OriginalRecord, RequirementSet, Source, import_checks,
};
use mcpres::validate::official::validate_attachment;
use mcpres::validate::{self, Family, Options, codes};
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn vectors_dir() -> PathBuf {
    root().join("testdata/official/vectors")
}

fn results_dir() -> PathBuf {
    root().join("testdata/official/results")
}

fn parse(bytes: &[u8]) -> Value {
    mcpres::json::parse_default(bytes).expect("strict JSON")
}

fn codes_of(report: &validate::Report) -> Vec<&'static str> {
    report.findings.iter().map(|f| f.code.as_str()).collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn files_below(dir: &Path, base: &Path, out: &mut BTreeSet<String>) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_below(&p, base, out);
        } else {
            out.insert(
                p.strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/"),
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Generated vectors.
// ---------------------------------------------------------------------------

#[test]
fn vectors_regenerate_byte_identically() {
    let files = gen_official::files().expect("every vector agrees with the validator");
    let mut expected = BTreeSet::new();
    for (rel, bytes) in &files {
        let committed = fs::read(vectors_dir().join(rel))
            .unwrap_or_else(|e| panic!("{rel}: {e} (run examples/gen_official.rs)"));
        assert!(
            committed == *bytes,
            "{rel} differs from the generator's output"
        );
        expected.insert(rel.clone());
    }
    let mut present = BTreeSet::new();
    files_below(&vectors_dir(), &vectors_dir(), &mut present);
    assert_eq!(
        present, expected,
        "stray or missing files in testdata/official/vectors"
    );
}

#[test]
fn every_catalog_entry_holds() {
    let catalog = parse(&fs::read(vectors_dir().join("catalog.json")).unwrap());
    let valid = catalog["valid"].as_array().unwrap();
    let invalid = catalog["invalid"].as_array().unwrap();
    let statuses: BTreeSet<&str> = valid
        .iter()
        .map(|e| e["expectedStatus"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        BTreeSet::from(["COMPLETE", "INCOMPLETE", "INVALID"]),
        "one valid vector per import status at least"
    );
    for e in valid.iter().chain(invalid) {
        let id = e["id"].as_str().unwrap();
        let bytes = fs::read(vectors_dir().join(e["path"].as_str().unwrap())).unwrap();
        assert_eq!(
            sha256_hex(&bytes),
            e["fileSha256"].as_str().unwrap(),
            "{id}: fileSha256"
        );
        let doc = parse(&bytes);
        assert_eq!(validate::family_of(&doc), Family::Official, "{id}");
        let options = Options {
            original_result: e
                .get("originalResult")
                .map(|p| fs::read(vectors_dir().join(p.as_str().unwrap())).unwrap()),
            ..Options::default()
        };
        let report = validate::validate_document(&doc, &options);
        assert_eq!(
            report.diagnostics,
            strings(&e["expectedDiagnostics"]),
            "{id}"
        );
        let findings = codes_of(&report);
        let expected = strings(&e["expectedFindings"]);
        if expected == [codes::OFFICIAL_ATTACHMENT_SCHEMA_INVALID] {
            assert!(!findings.is_empty(), "{id}");
            assert!(
                findings.iter().all(|f| *f == expected[0]),
                "{id}: {findings:?}"
            );
            assert!(!report.schema_errors.is_empty(), "{id}: schemaErrors");
        } else {
            assert_eq!(findings, expected, "{id}");
        }
        assert_eq!(report.evidence_class, None, "{id}: no evidence class, ever");
        match e.get("expectedStatus") {
            Some(status) => {
                assert!(report.valid, "{id}");
                assert_eq!(report.extra["importStatus"], *status, "{id}");
                assert_eq!(
                    report.extra["officialCertificationClaim"],
                    json!(false),
                    "{id}"
                );
            }
            None => {
                assert!(!report.valid, "{id}");
                assert!(
                    report.extra.is_empty(),
                    "{id}: decision fields only when valid"
                );
            }
        }
    }
}

#[test]
fn every_attachment_code_has_a_deep_single_finding_vector() {
    let catalog = parse(&fs::read(vectors_dir().join("catalog.json")).unwrap());
    let mut single = BTreeSet::new();
    for e in catalog["invalid"].as_array().unwrap() {
        let f = strings(&e["expectedFindings"]);
        if f.len() == 1 {
            single.insert(f[0].clone());
        }
    }
    // The two import stops are covered by `import_stops_*` below.
    for code in &codes::OFFICIAL[2..] {
        assert!(
            single.contains(*code),
            "no single-finding vector for {code}"
        );
    }
}

#[test]
fn the_binary_agrees_on_every_vector() {
    let catalog = parse(&fs::read(vectors_dir().join("catalog.json")).unwrap());
    for e in catalog["valid"]
        .as_array()
        .unwrap()
        .iter()
        .chain(catalog["invalid"].as_array().unwrap())
    {
        let id = e["id"].as_str().unwrap();
        let path = vectors_dir().join(e["path"].as_str().unwrap());
        let mut args = vec![
            "validate".to_string(),
            "--format".into(),
            "json".into(),
            path.to_string_lossy().into_owned(),
        ];
        if let Some(o) = e.get("originalResult") {
            args.push("--original-result".into());
            args.push(
                vectors_dir()
                    .join(o.as_str().unwrap())
                    .to_string_lossy()
                    .into_owned(),
            );
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = mcpres(&args);
        let result = parse(&out.stdout);
        let valid = e.get("expectedStatus").is_some();
        assert_eq!(out.status.code(), Some(if valid { 0 } else { 1 }), "{id}");
        assert_eq!(result["diagnostics"], e["expectedDiagnostics"], "{id}");
        if let Some(status) = e.get("expectedStatus") {
            assert_eq!(result["importStatus"], *status, "{id}");
            assert_eq!(result["officialCertificationClaim"], json!(false), "{id}");
        }
    }
}

// ---------------------------------------------------------------------------
// The real capture of the reference corpus.
// ---------------------------------------------------------------------------

fn corpus_capture() -> Option<(PathBuf, PathBuf)> {
    let Some(root) = support::reference_corpus_dir() else {
        eprintln!("SKIPPED: reference corpus not found (set MCPRES_REFERENCE_CORPUS)");
        return None;
    };
    let dir = root.join("v0.2.0/official-conformance");
    Some((
        dir.join("server-initialize-2025-11-25.capture.json"),
        dir.join("server-initialize-2025-11-25.sanitized.json"),
    ))
}

#[test]
fn real_capture_imports_as_incomplete_and_validates() {
    let Some((capture_path, checks_path)) = corpus_capture() else {
        return;
    };
    let capture = parse(&fs::read(&capture_path).unwrap());
    let checks = fs::read(&checks_path).unwrap();
    let official::Capture { options, record } = official::read_capture(&capture).unwrap();
    let imported = import_checks(&checks, &options, &record).unwrap();
    let a = &imported.attachment;
    // The process died after its three checks: never COMPLETE.
    assert_eq!(a.import_status, "INCOMPLETE");
    assert_eq!(a.harness.exit_code, -1073740791);
    assert_eq!(a.checks.len(), 3);
    assert!(a.checks.iter().all(|c| c.outcome == "SUCCESS"));
    assert_eq!(
        a.inventories.wire_schema,
        ["server-initialize:wire-schema-valid"]
    );
    assert!(a.inventories.pending.is_empty());
    // The original is the unsanitized output: its digest and length come from the
    // capture, not from the derivative we were given.
    assert_eq!(
        a.original_result_artifact.sha256,
        capture["originalResultArtifact"]["sha256"]
            .as_str()
            .unwrap()
    );
    assert_eq!(a.original_result_artifact.bytes, 1579);
    assert_ne!(a.original_result_artifact.sha256, sha256_hex(&checks));
    assert_eq!(
        a.original_result_artifact.sanitization.fields,
        ["/0/details/serverUrl", "/1/details/sessionId"]
    );
    assert!(a.original_result_artifact.sanitization.applied);
    // Already sanitized: the derivative we would publish is the file itself.
    assert_eq!(imported.sanitized, checks);
    assert!(!a.mapping_boundary.official_certification_claim);
    assert_eq!(a.mapping_boundary.mcp_res_evidence_class, None);

    let report = validate_attachment(&a.to_value(), None);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(report.extra["importStatus"], json!("INCOMPLETE"));
    // The published derivative is not the original: comparing with it must fail.
    let against_derivative = validate_attachment(&a.to_value(), Some(&checks));
    assert_eq!(
        against_derivative.primary(),
        Some(codes::OFFICIAL_RESULT_DIGEST_MISMATCH)
    );

    // End to end: the CLI writes the same bytes, and validates them.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("attachment.json");
    let san = tmp.path().join("sanitized.json");
    let run = mcpres(&[
        "official",
        "import",
        "--capture",
        capture_path.to_str().unwrap(),
        "--checks",
        checks_path.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--sanitized-out",
        san.to_str().unwrap(),
    ]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let written = fs::read(&out).unwrap();
    assert_eq!(written, a.to_file_bytes());
    assert_eq!(fs::read(&san).unwrap(), checks);
    // Two-space layout in the reference's field order, one trailing newline.
    // The bytes the reference kit's corpus script writes for this capture with the
    // same options (key order, two-space layout, newline), rebuilt independently once.
    assert_eq!(
        sha256_hex(&written),
        "a56c82876f6b76ccfd5bba8beb22ffd77486bf90b3bf3344126edcd11277bea7"
    );
    let text = String::from_utf8(written).unwrap();
    assert!(text.starts_with("{\n  \"schemaVersion\": \"mcp-res.official-conformance-attachment/0.2.0\",\n  \"source\": {\n    \"packageName\""));
    assert!(text.ends_with("\n  \"importStatus\": \"INCOMPLETE\"\n}\n"));
    let v = mcpres(&["validate", "--format", "json", out.to_str().unwrap()]);
    assert_eq!(v.status.code(), Some(0));
    let result = parse(&v.stdout);
    assert_eq!(result["importStatus"], json!("INCOMPLETE"));
    assert_eq!(result["officialCertificationClaim"], json!(false));
}

// ---------------------------------------------------------------------------
// The results-folder fixture (the live suite's layout).
// ---------------------------------------------------------------------------

fn base_options() -> ImportOptions {
    ImportOptions {
        source: Source {
            package_name: official::PACKAGE_NAME.into(),
            package_version: "0.1.16".into(),
            package_sha256: "a".repeat(64),
            repository: official::REPOSITORY.into(),
            repository_commit: "b".repeat(40),
        },
        protocol_revision: "2025-11-25".into(),
        requirement_set: RequirementSet {
            revision: "2025-11-25".into(),
            sha256: "c".repeat(64),
        },
        mode: "server".into(),
        suite: "active".into(),
        legs: None,
        scenario_id: String::new(),
        check_scenarios: None,
        scenarios: None,
        declared: None,
        expected_failures: Vec::new(),
        pending: Vec::new(),
        not_scored: Vec::new(),
        coverage: Vec::new(),
        harness_exit_code: 1,
        harness_warnings: Vec::new(),
    }
}

fn fixture_options(original: &[u8], check_scenarios: Vec<String>) -> ImportOptions {
    let baseline = official::read_baseline(
        &fs::read(root().join("testdata/official/expected-failures.yml")).unwrap(),
        "server",
    )
    .unwrap();
    let mut options = ImportOptions {
        check_scenarios: Some(check_scenarios),
        ..base_options()
    };
    options.expected_failures = official::expand_baseline(&baseline, original, &options).unwrap();
    options
}

#[test]
fn results_folder_scenarios_come_from_the_directory_names() {
    let files = official::read_results(&results_dir(), "server").unwrap();
    let scenarios: Vec<&str> = files.iter().map(|f| f.scenario.as_str()).collect();
    assert_eq!(
        scenarios,
        [
            "logging-set-level",
            "server-initialize",
            "tools-call-simple-text"
        ]
    );
    assert_eq!(
        official::scenario_of_dir("auth/basic-dcr-2026-01-02T03-04-05-678Z", "client"),
        "auth/basic-dcr"
    );
}

#[test]
fn results_folder_imports_with_sanitization_and_baseline() {
    let files = official::read_results(&results_dir(), "server").unwrap();
    let (original, scenarios) = official::merge_results(&files).unwrap();
    assert_eq!(
        scenarios,
        [
            "logging-set-level",
            "server-initialize",
            "tools-call-simple-text"
        ]
    );
    // The merged original is the three check elements, byte for byte.
    assert_eq!(original.first(), Some(&b'['));
    let merged = parse(&original);
    assert_eq!(merged.as_array().unwrap().len(), 3);
    let options = fixture_options(&original, scenarios);
    assert_eq!(
        options.expected_failures,
        ["logging-set-level:logging-set-level"]
    );
    let imported = import_checks(&original, &options, &OriginalRecord::default()).unwrap();
    let a = &imported.attachment;
    assert_eq!(a.original_result_artifact.sha256, sha256_hex(&original));
    assert_eq!(a.original_result_artifact.bytes, original.len() as u64);
    assert_eq!(
        a.original_result_artifact.sanitization.fields,
        [
            "/0/errorMessage",
            "/1/details/serverUrl",
            "/2/details/sessionId"
        ]
    );
    let failure = a.checks.iter().find(|c| c.outcome == "FAILURE").unwrap();
    assert!(
        failure.baseline_expected,
        "kept as a FAILURE, flagged as expected"
    );
    assert_eq!(
        failure.error_message.as_deref(),
        Some("logging/setLevel returned -32601; server log at /tmp/PATH")
    );
    // Harness exit 1 and unobserved cleanup keep it INCOMPLETE.
    assert_eq!(a.import_status, "INCOMPLETE");
    // Nothing ephemeral survives in the derivative, and the details digests bind it.
    let san = String::from_utf8(imported.sanitized.clone()).unwrap();
    for leak in ["41234", "3f2b8c4e", "mcp-run-7Qx2"] {
        assert!(original.windows(leak.len()).any(|w| w == leak.as_bytes()));
        assert!(
            !san.contains(leak),
            "{leak} left in the sanitized derivative"
        );
    }
    let derivative = parse(&imported.sanitized);
    for (i, c) in a.checks.iter().enumerate() {
        let details = derivative[i].get("details").cloned().unwrap_or(json!({}));
        assert_eq!(c.details_sha256, mcpres::json::digest(&details).unwrap());
    }
    // Valid, also against the raw original.
    let report = validate_attachment(&a.to_value(), Some(&original));
    assert!(report.valid, "{:?}", report.findings);
}

#[test]
fn results_folder_cli_complete_with_observed_cleanup_and_never_overwrites() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("a.json");
    let args = |out: &Path| {
        vec![
            "official".to_string(),
            "import".into(),
            "--results".into(),
            results_dir().to_string_lossy().into_owned(),
            "--expected-failures".into(),
            root()
                .join("testdata/official/expected-failures.yml")
                .to_string_lossy()
                .into_owned(),
            "--package-version".into(),
            "0.1.16".into(),
            "--package-sha256".into(),
            "a".repeat(64),
            "--repository-commit".into(),
            "b".repeat(40),
            "--protocol-revision".into(),
            "2025-11-25".into(),
            "--requirement-set-sha256".into(),
            "c".repeat(64),
            "--suite".into(),
            "active".into(),
            "--harness-exit-code".into(),
            "0".into(),
            "--coverage".into(),
            "official-client-harness=INSTRUMENTED".into(),
            "--coverage".into(),
            "server-process-cleanup=OBSERVED_INDIRECTLY".into(),
            "-o".into(),
            out.to_string_lossy().into_owned(),
        ]
    };
    let a = args(&out);
    let run = mcpres(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let doc = parse(&fs::read(&out).unwrap());
    assert_eq!(doc["importStatus"], json!("COMPLETE"));
    assert_eq!(doc["scenarios"].as_array().unwrap().len(), 3);
    let report = validate::validate_document(&doc, &Options::default());
    assert!(report.valid);
    // A second import to the same path is refused and leaves the file alone.
    let before = fs::read(&out).unwrap();
    let again = mcpres(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    assert_eq!(fs::read(&out).unwrap(), before);
}

// ---------------------------------------------------------------------------
// Import stops.
// ---------------------------------------------------------------------------

fn simple_options() -> ImportOptions {
    let mut o = base_options();
    o.scenario_id = "s".into();
    o
}

fn stop(bytes: &[u8], options: &ImportOptions) -> ImportError {
    import_checks(bytes, options, &OriginalRecord::default()).expect_err("import must stop")
}

#[test]
fn import_stops_input_invalid() {
    let o = simple_options();
    let cases: [&[u8]; 7] = [
        br#"{"checks": []}"#,
        br#"[{"id": "a", "status": "PASSED"}]"#,
        br#"[{"status": "SUCCESS"}]"#,
        br#"[null]"#,
        br#"[{"id": "a", "status": "SUCCESS"}, {"id": "a", "status": "FAILURE"}]"#,
        b"[1.5]",
        b"not json",
    ];
    for bytes in cases {
        let e = stop(bytes, &o);
        assert_eq!(
            e.code(),
            codes::OFFICIAL_INPUT_INVALID,
            "{}",
            String::from_utf8_lossy(bytes)
        );
    }
    let many = format!(
        "[{}]",
        vec![r#"{"id":"x","status":"INFO"}"#; 4097].join(",")
    );
    assert_eq!(
        stop(many.as_bytes(), &o).code(),
        codes::OFFICIAL_INPUT_INVALID
    );
}

#[test]
fn import_stops_coverage_incomplete() {
    let mut o = simple_options();
    o.declared = Some(vec!["s:a".into()]);
    let e = stop(
        br#"[{"id": "a", "status": "SUCCESS"}, {"id": "b", "status": "SUCCESS"}]"#,
        &o,
    );
    assert_eq!(e.code(), codes::OFFICIAL_COVERAGE_INCOMPLETE);
    // The CLI: exit 1, nothing written.
    let tmp = tempfile::tempdir().unwrap();
    let declared = tmp.path().join("declared.json");
    fs::write(&declared, br#"["server-initialize:server-initialize"]"#).unwrap();
    let out = tmp.path().join("a.json");
    let run = mcpres(&[
        "official",
        "import",
        "--results",
        results_dir().to_str().unwrap(),
        "--package-version",
        "0.1.16",
        "--package-sha256",
        &"a".repeat(64),
        "--repository-commit",
        &"b".repeat(40),
        "--protocol-revision",
        "2025-11-25",
        "--requirement-set-sha256",
        &"c".repeat(64),
        "--suite",
        "active",
        "--harness-exit-code",
        "0",
        "--declared",
        declared.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("MCP_RES_OFFICIAL_COVERAGE_INCOMPLETE"));
    assert!(!out.exists());
}

#[test]
fn baseline_scenario_entries_expand_to_checks() {
    let original = br#"[
        {"id": "a", "status": "FAILURE", "metadata": {"scenario": "x"}},
        {"id": "b", "status": "SUCCESS", "metadata": {"scenario": "x"}},
        {"id": "c", "status": "SUCCESS", "metadata": {"scenario": "y"}}
    ]"#;
    let entries = official::read_baseline(br#"{"server": ["x", "y", "z:q"]}"#, "server").unwrap();
    let refs = official::expand_baseline(&entries, original, &base_options()).unwrap();
    // x fails at a; y no longer fails at all (stale); z:q is a check reference.
    assert_eq!(refs, ["x:a", "y:c", "z:q"]);
    let yaml = b"server:\n  - x\nclient:\n  - w\n";
    assert_eq!(official::read_baseline(yaml, "server").unwrap(), ["x"]);
    assert_eq!(official::read_baseline(yaml, "client").unwrap(), ["w"]);
    assert_eq!(
        official::expand_baseline(&["nope".into()], original, &base_options())
            .unwrap_err()
            .code(),
        codes::OFFICIAL_INPUT_INVALID
    );
}

// ---------------------------------------------------------------------------
// Where the reference validators disagree (spec/conformance.md, entry 26).
// ---------------------------------------------------------------------------

fn vector(id: &str) -> Value {
    parse(&fs::read(vectors_dir().join(format!("valid/{id}.json"))).unwrap())
}

#[test]
fn divergence_pending_order_follows_python_sorted_order() {
    // declared in a non-sorted order with two pending checks: JS expects pending in
    // declared order, Python (and mcpres) sorted.
    let mut doc = vector("incomplete-absent-check");
    let declared = doc["inventories"]["declared"].as_array_mut().unwrap();
    declared.push(json!("fixture-aaa:first"));
    declared.reverse();
    doc["inventories"]["pending"] = json!([
        "fixture-tools:tools-call-with-progress",
        "fixture-aaa:first"
    ]);
    let report = validate_attachment(&doc, None);
    assert_eq!(report.primary(), Some(codes::OFFICIAL_INVENTORY_MISMATCH));
    doc["inventories"]["pending"] = json!([
        "fixture-aaa:first",
        "fixture-tools:tools-call-with-progress"
    ]);
    let report = validate_attachment(&doc, None);
    assert!(report.valid, "{:?}", report.findings);
}

#[test]
fn divergence_inventories_sort_by_utf16_code_units() {
    // U+1F600 is D83D DE00 in UTF-16, so it sorts before U+FF61; by code point after.
    let mut o = simple_options();
    o.scenario_id = "s".into();
    o.harness_exit_code = 0;
    let checks = "[{\"id\": \"\u{FF61}\", \"status\": \"SUCCESS\"}, {\"id\": \"\u{1F600}\", \"status\": \"SUCCESS\"}]";
    let a = import_checks(checks.as_bytes(), &o, &OriginalRecord::default())
        .unwrap()
        .attachment;
    assert_eq!(a.inventories.executed, ["s:\u{1F600}", "s:\u{FF61}"]);
    let mut doc = a.to_value();
    assert!(validate_attachment(&doc, None).valid);
    doc["inventories"]["executed"] = json!(["s:\u{FF61}", "s:\u{1F600}"]);
    doc["inventories"]["declared"] = json!(["s:\u{FF61}", "s:\u{1F600}"]);
    assert_eq!(
        validate_attachment(&doc, None).primary(),
        Some(codes::OFFICIAL_INVENTORY_MISMATCH)
    );
}

#[test]
fn sanitizer_replaces_ports_paths_and_session_ids() {
    assert_eq!(
        official::sanitize_text("see http://localhost:8123/mcp and ws://[::1]:9/x").as_deref(),
        Some("see http://localhost:PORT/mcp and ws://[::1]:PORT/x")
    );
    assert_eq!(
        official::sanitize_text("/home/alice/src/x and C:\\Users\\Bob\\y").as_deref(),
        Some("/home/USER/src/x and C:\\Users\\USER\\y")
    );
    assert_eq!(
        official::sanitize_text("127.0.0.1:42891").as_deref(),
        Some("127.0.0.1:PORT")
    );
    assert_eq!(official::sanitize_text("https://example.com:8443/"), None);
    let mut v = json!({"Mcp-Session-Id": "abc", "nested": [{"sessionId": "sanitized-x"}]});
    let mut fields = Vec::new();
    official::sanitize_value(&mut v, "", &mut fields);
    assert_eq!(fields.len(), 1);
    assert_eq!(fields[0].0, "/Mcp-Session-Id");
    assert_eq!(v["Mcp-Session-Id"], json!(official::SANITIZED_SESSION_ID));
}

#[test]
fn divergence_non_canonical_numbers_in_details_are_digested_as_written() {
    // Real suite output (0.1.16, elicitation defaults) holds `95.5`. The canonical form
    // has no such numbers, so the reference import cannot digest these details; mcpres
    // digests the details' bytes as they stand in the sanitized derivative.
    let mut o = base_options();
    o.scenario_id = "s".into();
    o.harness_exit_code = 0;
    let checks = br#"[{"id": "a", "status": "SUCCESS", "details": {"default": 95.5, "url": "http://localhost:5000/x"}}]"#;
    let imported = import_checks(checks, &o, &OriginalRecord::default()).unwrap();
    let expected = sha256_hex(br#"{"default": 95.5, "url": "http://localhost:PORT/x"}"#);
    assert_eq!(imported.attachment.checks[0].details_sha256, expected);
    assert_eq!(
        imported
            .attachment
            .original_result_artifact
            .sanitization
            .fields,
        ["/0/details/url"]
    );
    assert!(validate_attachment(&imported.attachment.to_value(), Some(checks)).valid);
    // Other strictness stays: a duplicate key is still unusable input.
    let dup = br#"[{"id": "a", "id": "b", "status": "SUCCESS"}]"#;
    assert_eq!(stop(dup, &o).code(), codes::OFFICIAL_INPUT_INVALID);
    // ... also when the document holds such a number before the duplicate key.
    let dup_after_float = br#"[{"x": 0.5, "id": "a", "id": "b", "status": "SUCCESS"}]"#;
    assert_eq!(
        stop(dup_after_float, &o).code(),
        codes::OFFICIAL_INPUT_INVALID
    );
    let bad_after_float = b"[{\"x\": 1e3, \"id\": \"a\\ud800\", \"status\": \"SUCCESS\"}]";
    assert_eq!(
        stop(bad_after_float, &o).code(),
        codes::OFFICIAL_INPUT_INVALID
    );
}
