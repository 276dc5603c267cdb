//! `mcpres migrate v0.1` and migration-result validation, run through the real binary in
//! temporary directories.
//!
//! - every valid v0.1 input of the reference corpus (7 catalog vectors, the valid example,
//!   the 2 field-evidence bundles) migrates; the result validates; migrating twice gives the
//!   same bytes; migrating the result again returns it byte for byte;
//! - every refusal: the 18 invalid v0.1 vectors, a v0.2 bundle, an unsupported version,
//!   malformed JSON, an existing output, a dangling symlink as output, the output equal to
//!   the input, an output outside the working directory, a symlinked parent that escapes,
//!   and `--workspace` confinement; none of them writes anything;
//! - `--dry-run` writes nothing and prints the digest the real run then produces;
//! - tampered results fail with the matching diagnostic, in `validate` and in `migrate`.
//!
//! Without the reference corpus the tests say so and pass.

mod support;

use support::mcpres_in;

use std::path::{Path, PathBuf};
use std::process::Output;

use mcpres::json::sha256_hex;
use serde_json::{Value, json};

fn corpus() -> Option<PathBuf> {
    let root = support::reference_corpus_dir().map(|d| d.join("v0.1.0"));
    if root.is_none() {
        eprintln!("SKIPPED: reference corpus not found");
    }
    root
}

/// The valid v0.1 inputs of the corpus.
fn valid_inputs(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root.join("test-vectors/valid"))
        .expect("valid vectors")
        .map(|e| e.expect("entry").path())
        .collect();
    out.sort();
    out.push(root.join("examples/hand-authored-valid.json"));
    out.push(root.join("field-evidence/mcp-everything-2026.7.4.mcp-res.json"));
    out.push(root.join("field-evidence/resilireplay-mcp-demo.mcp-res.json"));
    out
}

fn migrate(cwd: &Path, input: &Path, output: &str) -> Output {
    mcpres_in(
        cwd,
        &[
            "migrate",
            "v0.1",
            "--input",
            input.to_str().expect("utf-8 path"),
            "--output",
            output,
        ],
    )
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn validate(path: &Path) -> (i32, Value) {
    let out = mcpres_in(
        path.parent().expect("parent"),
        &[
            "validate",
            "--format",
            "json",
            path.to_str().expect("utf-8"),
        ],
    );
    (out.status.code().expect("exit code"), stdout_json(&out))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("JSON")
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn exe_sha256() -> String {
    sha256_hex(&std::fs::read(env!("CARGO_BIN_EXE_mcpres")).expect("read binary"))
}

/// Refusal: the exit code, the diagnostic at the start of stderr, nothing on stdout.
fn assert_refused(out: &Output, code: i32, diagnostic: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {stderr}");
    assert!(
        stderr.starts_with(diagnostic),
        "expected {diagnostic}, stderr: {stderr}"
    );
    assert!(out.stdout.is_empty(), "a refusal prints no report");
}

#[test]
fn every_valid_v01_input_migrates_validates_and_is_idempotent() {
    let Some(root) = corpus() else { return };
    let tool = exe_sha256();
    let inputs = valid_inputs(&root);
    assert_eq!(inputs.len(), 10);
    for input in inputs {
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        let source_bytes = std::fs::read(&input).expect("read input");
        let original: Value = serde_json::from_slice(&source_bytes).expect("input JSON");

        let first = migrate(dir, &input, "first.json");
        assert!(first.status.success(), "{name}: {first:?}");
        let printed = stdout_json(&first);
        let bytes = std::fs::read(dir.join("first.json")).expect("output written");
        assert_eq!(printed["dryRun"], false, "{name}");
        assert_eq!(printed["output"], "first.json", "{name}");
        assert_eq!(printed["outputSha256"], sha256_hex(&bytes), "{name}");
        assert_eq!(printed["unchanged"], false, "{name}");

        // The result validates, and says what migration did and did not do.
        let (code, report) = validate(&dir.join("first.json"));
        assert_eq!(code, 0, "{name}: {report}");
        assert_eq!(report["valid"], true, "{name}");
        assert_eq!(report["status"], "INCOMPLETE", "{name}");
        let result: Value = serde_json::from_slice(&bytes).expect("result JSON");
        assert_eq!(result["originalBundle"], original, "{name}: original kept");
        assert_eq!(
            result["source"]["evidenceSha256"], original["statement"]["evidenceSha256"],
            "{name}"
        );
        assert_eq!(
            result["source"]["bundleFileSha256"],
            sha256_hex(&source_bytes),
            "{name}"
        );
        assert_eq!(result["migration"]["tool"]["sha256"], tool, "{name}");
        assert_eq!(result["migration"]["tool"]["name"], "mcp-res-migrate");
        assert_eq!(
            result["target"]["evidenceClass"], original["evidence"]["evidenceClass"],
            "{name}: class kept"
        );
        assert_eq!(
            result["target"]["authenticityClassification"],
            "UNSIGNED_INTEGRITY_ONLY"
        );
        assert_eq!(
            result["target"]["stabilityClassification"],
            "SINGLE_OBSERVATION"
        );
        let assertions = result["target"]["legacyAssertions"].as_array().unwrap();
        let booleans = ["execution", "privacy", "regression"]
            .iter()
            .filter_map(|section| original["evidence"][section].as_object())
            .flat_map(|map| map.values())
            .filter(|v| v.is_boolean())
            .count()
            + 1; // cleanup.complete
        assert_eq!(assertions.len(), booleans, "{name}: every producer boolean");
        assert!(
            assertions
                .iter()
                .all(|a| a["strength"] == "LEGACY_SELF_ASSERTED"),
            "{name}"
        );
        let unresolved = result["target"]["unresolvedRequirements"]
            .as_array()
            .unwrap();
        assert_eq!(
            unresolved.iter().any(|r| r == "SOURCE_EVIDENCE"),
            original["evidence"].get("sourceEvidence").is_none(),
            "{name}"
        );
        // Nothing v0.2-only was invented anywhere in the result.
        let text = String::from_utf8_lossy(&bytes);
        for invented in [
            "observations",
            "scenarioFingerprint",
            "executionInstanceDigest",
            "signatures",
            "trialSummary",
            "negativeObservation",
        ] {
            assert!(!text.contains(invented), "{name}: {invented} fabricated");
        }

        // Same input, same tool: same bytes.
        let second = migrate(dir, &input, "second.json");
        assert!(second.status.success(), "{name}");
        assert_eq!(
            std::fs::read(dir.join("second.json")).unwrap(),
            bytes,
            "{name}: deterministic"
        );

        // Migrating the result returns it unchanged.
        let again = migrate(dir, &dir.join("first.json"), "third.json");
        assert!(again.status.success(), "{name}: {again:?}");
        assert_eq!(stdout_json(&again)["unchanged"], true, "{name}");
        assert_eq!(
            std::fs::read(dir.join("third.json")).unwrap(),
            bytes,
            "{name}: idempotent"
        );
    }
}

#[test]
fn dry_run_writes_nothing_and_predicts_the_output_digest() {
    let Some(root) = corpus() else { return };
    let input = root.join("test-vectors/valid/minimal-valid-clean-control.json");
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let dry = mcpres_in(
        dir,
        &[
            "migrate",
            "v0.1",
            "--dry-run",
            "--input",
            input.to_str().unwrap(),
            "--output",
            "new.json",
        ],
    );
    assert!(dry.status.success(), "{dry:?}");
    assert!(entries(dir).is_empty(), "dry run wrote {:?}", entries(dir));
    let predicted = stdout_json(&dry);
    assert_eq!(predicted["dryRun"], true);
    assert_eq!(predicted["wouldWrite"], "new.json");
    assert_eq!(predicted["report"]["status"], "INCOMPLETE");
    // Without --output the dry run still reports.
    let bare = mcpres_in(
        dir,
        &[
            "migrate",
            "v0.1",
            "--dry-run",
            "--input",
            input.to_str().unwrap(),
        ],
    );
    assert!(bare.status.success());
    assert_eq!(stdout_json(&bare)["wouldWrite"], Value::Null);
    assert!(entries(dir).is_empty());

    let real = migrate(dir, &input, "new.json");
    assert!(real.status.success());
    let bytes = std::fs::read(dir.join("new.json")).unwrap();
    assert_eq!(predicted["outputSha256"], sha256_hex(&bytes));
    assert_eq!(stdout_json(&real)["report"], predicted["report"]);
}

#[test]
fn invalid_v01_vectors_are_refused_with_their_v01_diagnostic() {
    let Some(root) = corpus() else { return };
    let catalog = read_json(&root.join("test-vectors/catalog.json"));
    let invalid = catalog["invalid"].as_array().unwrap();
    assert_eq!(invalid.len(), 18);
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    for entry in invalid {
        let path = root
            .join("test-vectors")
            .join(entry["path"].as_str().unwrap());
        let expected = entry["expectedDiagnostics"][0].as_str().unwrap();
        let out = migrate(dir, &path, "out.json");
        assert_refused(
            &out,
            1,
            &format!("MCP_RES_MIGRATION_SOURCE_INVALID:{expected}:"),
        );
        assert!(entries(dir).is_empty(), "{}: wrote output", entry["id"]);
    }
    // Secret-bearing input: the refusal never echoes the secret.
    let secret = root.join("test-vectors/invalid/raw-authorization-header.json");
    let out = migrate(dir, &secret, "out.json");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("Bearer"));
}

#[test]
fn wrong_versions_and_malformed_input_are_refused() {
    let Some(root) = corpus() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let v02 = root.join("../v0.2.0/test-vectors/valid/reason-bound-negative.json");
    assert_refused(
        &migrate(dir, &v02, "out.json"),
        1,
        "MCP_RES_MIGRATION_ALREADY_V02:",
    );
    let other = dir.join("policy.json");
    std::fs::write(
        &other,
        br#"{"schemaVersion": "mcp-res.trust-policy/0.2.0"}"#,
    )
    .unwrap();
    assert_refused(
        &migrate(dir, &other, "out.json"),
        2,
        "MCP_RES_MIGRATION_SOURCE_VERSION_UNSUPPORTED:",
    );
    let broken = dir.join("broken.json");
    std::fs::write(
        &broken,
        br#"{"schemaVersion": "mcp-res.conformance-bundle/0.1.0""#,
    )
    .unwrap();
    assert_refused(
        &migrate(dir, &broken, "out.json"),
        2,
        "MCP_RES_MIGRATION_INPUT_JSON_INVALID:",
    );
    let duplicate = dir.join("duplicate.json");
    std::fs::write(
        &duplicate,
        br#"{"schemaVersion": "a", "schemaVersion": "b"}"#,
    )
    .unwrap();
    assert_refused(
        &migrate(dir, &duplicate, "out.json"),
        2,
        "MCP_RES_MIGRATION_INPUT_JSON_INVALID:",
    );
    assert_eq!(
        entries(dir),
        ["broken.json", "duplicate.json", "policy.json"],
        "nothing written"
    );
}

#[test]
fn output_paths_are_refused_unless_new_and_inside_the_workspace() {
    let Some(root) = corpus() else { return };
    let source = root.join("test-vectors/valid/minimal-valid-clean-control.json");
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path().join("work");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let input = work.join("old.json");
    std::fs::copy(&source, &input).unwrap();
    let original = std::fs::read(&input).unwrap();

    // The output is the input, spelled the same or differently.
    for spelling in ["old.json", "./old.json", "sub/../old.json"] {
        let out = mcpres_in(
            &work,
            &[
                "migrate", "v0.1", "--input", "old.json", "--output", spelling,
            ],
        );
        assert_refused(&out, 2, "MCP_RES_MIGRATION_INPUT_OVERWRITE_FORBIDDEN:");
    }
    // An existing output is never replaced.
    std::fs::write(work.join("taken.json"), b"keep me").unwrap();
    assert_refused(
        &migrate(&work, &input, "taken.json"),
        2,
        "MCP_RES_MIGRATION_OUTPUT_CONFLICT:",
    );
    assert_eq!(std::fs::read(work.join("taken.json")).unwrap(), b"keep me");
    // Outside the working directory.
    assert_refused(
        &migrate(&work, &input, "../outside/new.json"),
        2,
        "MCP_RES_MIGRATION_OUTPUT_OUTSIDE_WORKSPACE:",
    );
    let absolute = outside.join("new.json");
    assert_refused(
        &migrate(&work, &input, absolute.to_str().unwrap()),
        2,
        "MCP_RES_MIGRATION_OUTPUT_OUTSIDE_WORKSPACE:",
    );
    #[cfg(unix)]
    {
        // A symlinked parent that leads out of the workspace.
        std::os::unix::fs::symlink(&outside, work.join("escape")).unwrap();
        assert_refused(
            &migrate(&work, &input, "escape/new.json"),
            2,
            "MCP_RES_MIGRATION_OUTPUT_OUTSIDE_WORKSPACE:",
        );
        // A dangling symlink as the output is an existing name, not followed.
        std::os::unix::fs::symlink(outside.join("target.json"), work.join("dangling.json"))
            .unwrap();
        assert_refused(
            &migrate(&work, &input, "dangling.json"),
            2,
            "MCP_RES_MIGRATION_OUTPUT_CONFLICT:",
        );
        // A symlink to the input is the input.
        std::os::unix::fs::symlink(&work, work.join("sub/loop")).unwrap();
        assert_refused(
            &migrate(&work, &input, "sub/loop/old.json"),
            2,
            "MCP_RES_MIGRATION_INPUT_OVERWRITE_FORBIDDEN:",
        );
    }
    assert!(entries(&outside).is_empty(), "nothing escaped");
    assert_eq!(std::fs::read(&input).unwrap(), original, "input untouched");

    // --workspace moves the confinement root.
    let ws = outside.to_str().unwrap();
    let inside = outside.join("new.json");
    let out = mcpres_in(
        &work,
        &[
            "migrate",
            "v0.1",
            "--input",
            "old.json",
            "--output",
            inside.to_str().unwrap(),
            "--workspace",
            ws,
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(inside.is_file());
    let out = mcpres_in(
        &work,
        &[
            "migrate",
            "v0.1",
            "--input",
            "old.json",
            "--output",
            "sub/new.json",
            "--workspace",
            ws,
        ],
    );
    assert_refused(&out, 2, "MCP_RES_MIGRATION_OUTPUT_OUTSIDE_WORKSPACE:");
    // Inside the working directory, a subdirectory is fine.
    let out = migrate(&work, &input, "sub/new.json");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read(work.join("sub/new.json")).unwrap(),
        std::fs::read(&inside).unwrap()
    );
}

/// Writes `value` pretty-printed into `dir/name` and returns the path.
fn write_doc(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
    path
}

/// One edit of a valid migration result.
type Tamper = Box<dyn Fn(&mut Value)>;

#[test]
fn tampered_results_fail_with_the_matching_diagnostic() {
    let Some(root) = corpus() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let input = root.join("test-vectors/valid/sanitized-local-stdio.json");
    assert!(migrate(dir, &input, "good.json").status.success());
    let good = read_json(&dir.join("good.json"));
    let class = good["target"]["evidenceClass"].as_str().unwrap().to_owned();
    let other_class = if class == "DOCUMENTED_ONLY" {
        "GENUINE_RUNTIME"
    } else {
        "DOCUMENTED_ONLY"
    };
    let index_of = |name: &str| {
        good["target"]["legacyAssertions"]
            .as_array()
            .unwrap()
            .iter()
            .position(|a| a["name"] == name)
            .unwrap()
    };
    let runtime = index_of("actualRuntime");
    let cases: Vec<(&str, Tamper, &str)> = vec![
        (
            "changed class",
            Box::new(move |v| v["target"]["evidenceClass"] = json!(other_class)),
            "MCP_RES_MIGRATION_CLASS_PROMOTION",
        ),
        (
            "changed preserved class",
            Box::new(move |v| v["report"]["preservedEvidenceClass"] = json!(other_class)),
            "MCP_RES_MIGRATION_CLASS_PROMOTION",
        ),
        (
            "changed digest",
            Box::new(|v| v["source"]["evidenceSha256"] = json!("0".repeat(64))),
            "MCP_RES_MIGRATION_DIGEST_MISMATCH",
        ),
        (
            "changed preserved digest",
            Box::new(|v| v["report"]["preservedEvidenceSha256"] = json!("f".repeat(64))),
            "MCP_RES_MIGRATION_DIGEST_MISMATCH",
        ),
        (
            "fabricated observation in the original evidence",
            Box::new(|v| {
                v["originalBundle"]["evidence"]["observations"] =
                    json!([{"kind": "PROCESS_EXECUTION", "status": "PASS"}]);
            }),
            "MCP_RES_MIGRATION_SOURCE_INVALID",
        ),
        (
            "fabricated observation beside the result",
            Box::new(|v| v["observations"] = json!([{"kind": "PROTOCOL_EXCHANGE"}])),
            "MCP_RES_MIGRATION_SCHEMA_INVALID",
        ),
        (
            "original evidence edited after its digests",
            Box::new(|v| {
                v["originalBundle"]["evidence"]["execution"]["fixtureUsed"] = json!(false)
            }),
            "MCP_RES_MIGRATION_SOURCE_INVALID",
        ),
        (
            "promoted assertion strength",
            Box::new(move |v| {
                v["target"]["legacyAssertions"][runtime]["strength"] = json!("INTEGRITY_BOUND");
            }),
            "MCP_RES_MIGRATION_SCHEMA_INVALID",
        ),
        (
            "promoted assertion value",
            Box::new(move |v| {
                let value = v["target"]["legacyAssertions"][runtime]["value"]
                    .as_bool()
                    .unwrap();
                v["target"]["legacyAssertions"][runtime]["value"] = json!(!value);
            }),
            "MCP_RES_MIGRATION_FABRICATION",
        ),
        (
            "invented assertion",
            Box::new(|v| {
                v["target"]["legacyAssertions"].as_array_mut().unwrap().push(
                    json!({"name": "signatureVerified", "value": true, "strength": "LEGACY_SELF_ASSERTED"}),
                );
                let n = v["target"]["legacyAssertions"].as_array().unwrap().len();
                v["report"]["legacyAssertionCount"] = json!(n);
            }),
            "MCP_RES_MIGRATION_FABRICATION",
        ),
        (
            "assertion count",
            Box::new(|v| v["report"]["legacyAssertionCount"] = json!(1)),
            "MCP_RES_MIGRATION_FABRICATION",
        ),
        (
            "requirement dropped from the report",
            Box::new(|v| {
                v["report"]["unresolvedRequirements"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
            "MCP_RES_MIGRATION_FABRICATION",
        ),
        (
            "requirement resolved in both lists",
            Box::new(|v| {
                for list in ["target", "report"] {
                    v[list]["unresolvedRequirements"]
                        .as_array_mut()
                        .unwrap()
                        .retain(|r| r != "TRIAL_REPETITION_EVIDENCE");
                }
            }),
            "MCP_RES_MIGRATION_FABRICATION",
        ),
        (
            "status claimed PASS",
            Box::new(|v| v["target"]["status"] = json!("PASS")),
            "MCP_RES_MIGRATION_SCHEMA_INVALID",
        ),
        (
            "fabricated evidence flag",
            Box::new(|v| v["migration"]["fabricatedEvidence"] = json!(true)),
            "MCP_RES_MIGRATION_SCHEMA_INVALID",
        ),
    ];
    for (what, tamper, expected) in &cases {
        let mut doc = good.clone();
        tamper(&mut doc);
        let file = format!("{}.json", what.replace(' ', "-"));
        let path = write_doc(dir, &file, &doc);
        let (code, report) = validate(&path);
        assert_eq!(code, 1, "{what}: {report}");
        assert_eq!(report["diagnostics"], json!([expected]), "{what}: {report}");
        // Migrating a tampered result is refused with the same diagnostic.
        let out = migrate(dir, &path, &format!("re-{file}"));
        assert_refused(&out, 1, &format!("{expected}:"));
    }
    // The untampered result, re-serialized differently, is still valid.
    let path = write_doc(dir, "reformatted.json", &good);
    assert_eq!(validate(&path).0, 0);
    // Reordered lists invent nothing: still valid (spec/conformance.md, entry 30).
    let mut reordered = good.clone();
    assert!(
        reordered["target"]["legacyAssertions"]
            .as_array()
            .unwrap()
            .len()
            > 1
    );
    for list in [
        "/target/legacyAssertions",
        "/target/unresolvedRequirements",
        "/report/unresolvedRequirements",
    ] {
        reordered
            .pointer_mut(list)
            .unwrap()
            .as_array_mut()
            .unwrap()
            .reverse();
    }
    let path = write_doc(dir, "reordered.json", &reordered);
    let (code, report) = validate(&path);
    assert_eq!(code, 0, "{report}");
}

#[test]
fn result_follows_the_reference_migration_record() {
    let Some(root) = corpus() else { return };
    let record = read_json(&root.join("../v0.2.0/MIGRATION_RECORD.json"));
    assert_eq!(record["from"], "0.1.0");
    assert_eq!(record["to"], "0.2.0");
    let tmp = tempfile::tempdir().expect("tempdir");
    let input = root.join("test-vectors/valid/bounded-successful-recovery.json");
    assert!(migrate(tmp.path(), &input, "r.json").status.success());
    let result = read_json(&tmp.path().join("r.json"));
    assert_eq!(result["migration"]["from"], record["from"]);
    assert_eq!(result["migration"]["to"], record["to"]);
    let strength = |id: &str| {
        record["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .map(|c| c["automaticStrength"].clone())
            .unwrap()
    };
    for change in record["changes"].as_array().unwrap() {
        assert_eq!(change["promotionAllowed"], false, "{change}");
    }
    for assertion in result["target"]["legacyAssertions"].as_array().unwrap() {
        assert_eq!(assertion["strength"], strength("MIG-OBS-001"));
    }
    assert_eq!(result["target"]["status"], strength("MIG-NEG-001"));
    assert_eq!(
        result["target"]["stabilityClassification"],
        strength("MIG-TRIAL-001")
    );
    let unresolved = &result["target"]["unresolvedRequirements"];
    for requirement in [
        "REASON_BOUND_NEGATIVE_OBSERVATION",
        "SCENARIO_FINGERPRINT",
        "EXECUTION_INSTANCE_DIGEST",
        "OBSERVATION_COVERAGE",
        "TRIAL_REPETITION_EVIDENCE",
    ] {
        assert!(
            unresolved
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r == requirement),
            "{requirement} left open"
        );
    }
}

/// SHA-256 of the bytes the reference migration script writes for each valid v0.1 input
/// when its tool digest is 64 zeros. Computed once with Node 20 from
/// `scripts/migrate-mcp-res-v01-to-v02.mjs` of the reference repository (the script's
/// `migrateBundleV01` plus its `JSON.stringify(result, null, 2)` and newline); mcpres must
/// produce the same bytes for the same tool digest.
const REFERENCE_OUTPUT_SHA256: [(&str, &str); 10] = [
    (
        "test-vectors/valid/bounded-failure-without-recovery.json",
        "62dc847444bbba86cd3911bb860fffdf5415e463b1f3d0dcc8f9999021d94729",
    ),
    (
        "test-vectors/valid/bounded-successful-recovery.json",
        "35c10d2724a8e9bf1df6b6383ba451f0a1a3a0835f1a39bf4263882ee650809f",
    ),
    (
        "test-vectors/valid/executable-regression-profile.json",
        "0e5d147bf19ef68cb9f7269105ce9362684143905d74960cf59d997e2145dbc5",
    ),
    (
        "test-vectors/valid/expected-failure-negative-control.json",
        "34e9fb68c8c469f1f657d428253aa53f691ad0db90a2b0adea52db7148b0c882",
    ),
    (
        "test-vectors/valid/minimal-valid-clean-control.json",
        "f25937381a877277baa3437900561c2b3a2c8a8e21aae5b0673fd7097061b2bb",
    ),
    (
        "test-vectors/valid/sanitized-local-stdio.json",
        "59a5bd4d7608e18fd7aa3960331dc08eec8e0dd1e690606348911ca258494c20",
    ),
    (
        "test-vectors/valid/sanitized-loopback-http.json",
        "4bf77c10c4a64a0a7e3a063f1de2d488fca038de0d15cef98ffcb94be7a3c667",
    ),
    (
        "examples/hand-authored-valid.json",
        "f25937381a877277baa3437900561c2b3a2c8a8e21aae5b0673fd7097061b2bb",
    ),
    (
        "field-evidence/mcp-everything-2026.7.4.mcp-res.json",
        "7895b7bbbc5cced729004b811149c6b8c2d58a742d1e328cdeefdad3046a86ea",
    ),
    (
        "field-evidence/resilireplay-mcp-demo.mcp-res.json",
        "c742a8ca6823ed68630c71250c8e0e43a070609d9c37dca4dbeffcfde0afeb9e",
    ),
];

#[test]
fn output_bytes_equal_the_reference_migration_for_the_same_tool_digest() {
    let Some(root) = corpus() else { return };
    let zero = "0".repeat(64);
    for (name, expected) in REFERENCE_OUTPUT_SHA256 {
        let source = std::fs::read(root.join(name)).expect("read input");
        let migrated = mcpres::produce::migrate::migrate_bytes(&source, &zero).expect("migrates");
        assert_eq!(migrated.sha256(), expected, "{name}");
        assert!(!migrated.unchanged);
        // And the library's bytes are what the command writes, up to the tool digest.
        let again =
            mcpres::produce::migrate::migrate_bytes(&migrated.bytes, &zero).expect("re-migrates");
        assert!(again.unchanged, "{name}");
        assert_eq!(again.bytes, migrated.bytes, "{name}");
    }
}
