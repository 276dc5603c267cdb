//! mcpres' own official-conformance attachment vectors.
//!
//! ```text
//! cargo run --example gen_official --no-default-features -- [--force] testdata/official/vectors
//! ```
//!
//! Every vector is made by `mcpres::produce::official::import_checks` from a small
//! synthetic checks array of the official suite's shape (our own scenarios:
//! `fixture-*`), so the valid ones are exactly what `mcpres official import`
//! writes. Invalid vectors are *deep*: the fault is made either in the import
//! options (so everything derived from them stays consistent) or in one field
//! after the import with every other derived field recomputed, so exactly the
//! target rule fails. Writes `valid/*.json`, `invalid/*.json` (plus an
//! `*.original.json` where the rule needs the original result) and
//! `catalog.json`; deterministic, and never replaces files without `--force`.

use std::path::Path;
use std::process::ExitCode;

use mcpres::json::canonical::sha256_hex;
use mcpres::produce::official::{
    Attachment, Coverage, ImportOptions, Legs, OriginalRecord, RequirementSet, Source,
    import_checks,
};
use mcpres::validate::codes as c;
use mcpres::validate::official::{baseline_digest, derive_status, validate_attachment};
use serde_json::{Value, json};

/// One generated vector.
#[derive(Debug, Clone)]
pub struct Vector {
    pub id: &'static str,
    pub description: &'static str,
    /// Every finding code the validator must report, primary first.
    pub expected_findings: Vec<&'static str>,
    /// For valid vectors: the import status.
    pub expected_status: Option<&'static str>,
    /// The original result bytes the rule compares with, if any.
    pub original: Option<Vec<u8>>,
    pub attachment: Attachment,
}

impl Vector {
    pub fn valid(&self) -> bool {
        self.expected_findings.is_empty()
    }
    pub fn dir(&self) -> &'static str {
        if self.valid() { "valid" } else { "invalid" }
    }
    pub fn path(&self) -> String {
        format!("{}/{}.json", self.dir(), self.id)
    }
    pub fn original_path(&self) -> Option<String> {
        self.original
            .as_ref()
            .map(|_| format!("{}/{}.original.json", self.dir(), self.id))
    }
}

/// One check of the official suite's output shape.
fn check(scenario: &str, id: &str, status: &str, details: Value, error: Option<&str>) -> Value {
    let mut c = json!({
        "id": id,
        "name": id,
        "description": format!("fixture check {id}"),
        "status": status,
        "timestamp": "2026-11-30T05:00:00.000Z",
        "metadata": {"scenario": scenario},
        "details": details,
    });
    if let Some(e) = error {
        c["errorMessage"] = json!(e);
    }
    c
}

fn bytes(checks: &[Value]) -> Vec<u8> {
    serde_json::to_vec_pretty(&Value::Array(checks.to_vec())).expect("checks serialize")
}

fn options() -> ImportOptions {
    ImportOptions {
        source: Source {
            package_name: mcpres::produce::official::PACKAGE_NAME.into(),
            package_version: "0.1.16".into(),
            package_sha256: "1".repeat(64),
            repository: mcpres::produce::official::REPOSITORY.into(),
            repository_commit: "2".repeat(40),
        },
        protocol_revision: "2025-11-25".into(),
        requirement_set: RequirementSet {
            revision: "2025-11-25".into(),
            sha256: "3".repeat(64),
        },
        mode: "server".into(),
        suite: "active".into(),
        legs: None,
        scenario_id: "fixture-initialize".into(),
        check_scenarios: None,
        scenarios: None,
        declared: None,
        expected_failures: Vec::new(),
        pending: Vec::new(),
        not_scored: Vec::new(),
        coverage: vec![
            Coverage {
                surface: "official-client-harness".into(),
                status: "INSTRUMENTED".into(),
            },
            Coverage {
                surface: "server-wire-messages".into(),
                status: "INSTRUMENTED".into(),
            },
            Coverage {
                surface: "server-process-cleanup".into(),
                status: "OBSERVED_INDIRECTLY".into(),
            },
        ],
        harness_exit_code: 0,
        harness_warnings: Vec::new(),
    }
}

fn clean_checks() -> Vec<Value> {
    vec![
        check(
            "fixture-initialize",
            "server-initialize",
            "SUCCESS",
            json!({"serverUrl": "http://127.0.0.1:38411/mcp", "connected": true}),
            None,
        ),
        check(
            "fixture-initialize",
            "wire-schema-valid",
            "SUCCESS",
            json!({"messagesValidated": 4, "violations": []}),
            None,
        ),
        check(
            "fixture-tools",
            "tools-call-simple-text",
            "SUCCESS",
            json!({"sessionId": "0b7e3c52-9a41-4f0e-8d6c-2e5b1a9f7c30"}),
            None,
        ),
    ]
}

fn failure_checks() -> Vec<Value> {
    let mut checks = clean_checks();
    checks.push(check(
        "fixture-logging",
        "logging-set-level",
        "FAILURE",
        json!({"code": -32601}),
        Some("logging/setLevel returned -32601 (method not found)"),
    ));
    checks
}

fn import(checks: &[Value], opts: &ImportOptions) -> Attachment {
    import_checks(&bytes(checks), opts, &OriginalRecord::default())
        .expect("fixture imports")
        .attachment
}

const FAILING: &str = "fixture-logging:logging-set-level";

fn rederive(a: &mut Attachment) {
    a.import_status = derive_status(a).to_string();
}

/// Every vector, valid first.
pub fn vectors() -> Vec<Vector> {
    let mut out = Vec::new();
    let mut push =
        |id, description, expected_findings: Vec<&'static str>, status, original, attachment| {
            out.push(Vector {
                id,
                description,
                expected_findings,
                expected_status: status,
                original,
                attachment,
            })
        };

    // --- valid: one per import status, and the interesting ways to reach them ---
    let clean = import(&clean_checks(), &options());
    push(
        "complete-clean",
        "Three SUCCESS checks (one wire-schema), every surface observed, harness exit 0: COMPLETE.",
        vec![],
        Some("COMPLETE"),
        None,
        clean.clone(),
    );
    let mut baselined_opts = options();
    baselined_opts.expected_failures = vec![FAILING.into()];
    let baselined = import(&failure_checks(), &baselined_opts);
    push(
        "complete-baselined-failure",
        "A FAILURE named by the baseline stays a FAILURE with baselineExpected true; nothing else is open: COMPLETE.",
        vec![],
        Some("COMPLETE"),
        None,
        baselined.clone(),
    );
    let mut absent_opts = options();
    absent_opts.declared = Some(vec![
        "fixture-initialize:server-initialize".into(),
        "fixture-initialize:wire-schema-valid".into(),
        "fixture-tools:tools-call-simple-text".into(),
        "fixture-tools:tools-call-with-progress".into(),
    ]);
    let absent = import(&clean_checks(), &absent_opts);
    push(
        "incomplete-absent-check",
        "A declared check was never emitted; it is pending, and absence never counts as success: INCOMPLETE.",
        vec![],
        Some("INCOMPLETE"),
        None,
        absent.clone(),
    );
    let mut crash_opts = options();
    crash_opts.harness_exit_code = -1;
    crash_opts.harness_warnings = vec!["the suite process died after writing its checks".into()];
    crash_opts.coverage = Vec::new();
    push(
        "incomplete-harness-crash",
        "All checks passed but the harness exited -1 and process cleanup is unobserved (default coverage): INCOMPLETE.",
        vec![],
        Some("INCOMPLETE"),
        None,
        import(&clean_checks(), &crash_opts),
    );
    let mut skipped = clean_checks();
    skipped.push(check(
        "fixture-sampling",
        "tools-call-sampling",
        "SKIPPED",
        json!({"untestable": true, "reason": "the fixture server has no sampling client"}),
        None,
    ));
    push(
        "incomplete-skipped-untestable",
        "A SKIPPED check marked untestable lands in both inventories: INCOMPLETE.",
        vec![],
        Some("INCOMPLETE"),
        None,
        import(&skipped, &options()),
    );
    let mut stale_opts = options();
    stale_opts.expected_failures = vec!["fixture-tools:tools-call-simple-text".into()];
    let stale = import(&clean_checks(), &stale_opts);
    push(
        "incomplete-stale-baseline",
        "The baseline names a check that now passes; it is reported stale: INCOMPLETE.",
        vec![],
        Some("INCOMPLETE"),
        None,
        stale.clone(),
    );
    push(
        "invalid-unexpected-failure",
        "A FAILURE not named by the baseline: a consistent attachment whose import status is INVALID.",
        vec![],
        Some("INVALID"),
        None,
        import(&failure_checks(), &options()),
    );

    // --- invalid: one rule each ---
    let mut a = clean.clone();
    a.mapping_boundary.official_certification_claim = true;
    push(
        "schema-certification-claim",
        "officialCertificationClaim set to true; the schema fixes it to false.",
        vec![c::OFFICIAL_ATTACHMENT_SCHEMA_INVALID],
        None,
        None,
        a,
    );
    let mut o = options();
    o.requirement_set.revision = "2026-07-28".into();
    push(
        "requirement-revision-mismatch",
        "The requirement set pinned is for 2026-07-28 while 2025-11-25 was tested.",
        vec![c::OFFICIAL_REQUIREMENT_REVISION_MISMATCH],
        None,
        None,
        import(&clean_checks(), &o),
    );
    let mut o = options();
    o.legs = Some(Legs {
        client: "NOT_EXECUTED".into(),
        server: "NOT_EXECUTED".into(),
    });
    push(
        "leg-not-executed",
        "Server mode, but the server leg is NOT_EXECUTED.",
        vec![c::OFFICIAL_LEG_NOT_EXECUTED],
        None,
        None,
        import(&clean_checks(), &o),
    );
    let mut a = clean.clone();
    a.inventories.warnings = vec!["fixture-initialize:server-initialize".into()];
    push(
        "inventory-warning-mutant",
        "A SUCCESS check listed under warnings.",
        vec![c::OFFICIAL_INVENTORY_MISMATCH],
        None,
        None,
        a,
    );
    let mut a = clean.clone();
    a.inventories
        .declared
        .retain(|r| r != "fixture-tools:tools-call-simple-text");
    push(
        "inventory-undeclared-check",
        "An emitted check is missing from the declared set (the other inventories are unaffected).",
        vec![c::OFFICIAL_INVENTORY_MISMATCH],
        None,
        None,
        a,
    );
    let mut a = baselined.clone();
    a.expected_failure_baseline.sha256 = baseline_digest(&[]);
    push(
        "inventory-baseline-digest",
        "expectedFailureBaseline.sha256 is the digest of an empty baseline, not of its one entry.",
        vec![c::OFFICIAL_INVENTORY_MISMATCH],
        None,
        None,
        a,
    );
    let mut a = baselined.clone();
    for ch in &mut a.checks {
        if ch.check_id == "logging-set-level" {
            ch.outcome = "SUCCESS".into();
            ch.error_message = None;
        }
    }
    a.stale_expected_failures = vec![FAILING.into()];
    rederive(&mut a);
    push(
        "expected-failure-rewritten",
        "A baselined FAILURE rewritten as SUCCESS while baselineExpected stays true (stale list and status recomputed).",
        vec![c::OFFICIAL_EXPECTED_FAILURE_REWRITTEN],
        None,
        None,
        a,
    );
    let mut a = stale.clone();
    a.stale_expected_failures = Vec::new();
    rederive(&mut a);
    push(
        "stale-baseline-hidden",
        "A baseline entry whose check now passes is left out of staleExpectedFailures (status recomputed from the lie: COMPLETE).",
        vec![c::OFFICIAL_STALE_BASELINE_MISMATCH],
        None,
        None,
        a,
    );
    let mut altered = bytes(&clean_checks());
    altered.push(b' ');
    push(
        "result-digest-mismatch",
        "The supplied original result has one byte more than the one the attachment recorded.",
        vec![c::OFFICIAL_RESULT_DIGEST_MISMATCH],
        None,
        Some(altered),
        clean.clone(),
    );
    let mut a = clean.clone();
    a.mapping_boundary.mcp_res_evidence_class = Some("GENUINE_RUNTIME".into());
    push(
        "mapping-overclaim",
        "Official output mapped to GENUINE_RUNTIME without an explicit mapping.",
        vec![c::OFFICIAL_MAPPING_OVERCLAIM],
        None,
        None,
        a,
    );
    let mut a = absent.clone();
    a.import_status = "COMPLETE".into();
    push(
        "status-mismatch-pending",
        "importStatus COMPLETE with a pending check.",
        vec![c::OFFICIAL_STATUS_MISMATCH],
        None,
        None,
        a,
    );
    let mut o = options();
    o.requirement_set.revision = "2026-07-28".into();
    let mut a = import(&clean_checks(), &o);
    a.mapping_boundary.mcp_res_evidence_class = Some("FIXTURE_VERIFIED".into());
    a.import_status = "INCOMPLETE".into();
    push(
        "multi-fault",
        "Three independent faults: revision, mapping and status; the revision is the primary.",
        vec![
            c::OFFICIAL_REQUIREMENT_REVISION_MISMATCH,
            c::OFFICIAL_MAPPING_OVERCLAIM,
            c::OFFICIAL_STATUS_MISMATCH,
        ],
        None,
        None,
        a,
    );
    out
}

/// Check one vector against the validator; `Err` says how they disagree.
pub fn verify(v: &Vector) -> Result<(), String> {
    let report = validate_attachment(&v.attachment.to_value(), v.original.as_deref());
    let findings: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
    let expected_primary: Vec<String> = v
        .expected_findings
        .first()
        .map(|s| s.to_string())
        .into_iter()
        .collect();
    if report.diagnostics != expected_primary {
        return Err(format!(
            "{}: diagnostics {:?}, expected {:?}",
            v.id, report.diagnostics, expected_primary
        ));
    }
    let schema_only = v.expected_findings == [c::OFFICIAL_ATTACHMENT_SCHEMA_INVALID];
    if !schema_only && findings != v.expected_findings {
        return Err(format!(
            "{}: findings {findings:?}, expected {:?}",
            v.id, v.expected_findings
        ));
    }
    if schema_only
        && findings
            .iter()
            .any(|f| *f != c::OFFICIAL_ATTACHMENT_SCHEMA_INVALID)
    {
        return Err(format!("{}: findings {findings:?}", v.id));
    }
    if let Some(status) = v.expected_status
        && report.extra.get("importStatus") != Some(&json!(status))
    {
        return Err(format!(
            "{}: importStatus {:?}, expected {status}",
            v.id,
            report.extra.get("importStatus")
        ));
    }
    Ok(())
}

/// Every file of the vector set: (relative path, bytes), catalog last.
pub fn files() -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut files = Vec::new();
    let mut valid = Vec::new();
    let mut invalid = Vec::new();
    for v in vectors() {
        verify(&v)?;
        let body = v.attachment.to_file_bytes();
        let mut entry = json!({
            "id": v.id,
            "path": v.path(),
            "description": v.description,
            "expectedDiagnostics": v.expected_findings.first().map(|s| vec![*s]).unwrap_or_default(),
            "expectedFindings": v.expected_findings,
            "fileSha256": sha256_hex(&body),
        });
        if let Some(status) = v.expected_status {
            entry["expectedStatus"] = json!(status);
        }
        if let (Some(path), Some(original)) = (v.original_path(), &v.original) {
            entry["originalResult"] = json!(path);
            files.push((path, original.clone()));
        }
        files.push((v.path(), body));
        if v.valid() {
            valid.push(entry);
        } else {
            invalid.push(entry);
        }
    }
    let catalog = json!({
        "schemaVersion": "mcpres.official-vector-catalog/1",
        "generator": "examples/gen_official.rs",
        "valid": valid,
        "invalid": invalid,
    });
    let mut bytes = serde_json::to_vec_pretty(&catalog).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    files.push(("catalog.json".to_string(), bytes));
    Ok(files)
}

/// Write the vector set under `dir`.
pub fn write_all(dir: &Path, force: bool) -> Result<usize, String> {
    let files = files()?;
    for (rel, bytes) in &files {
        let path = dir.join(rel);
        if path.exists() && !force {
            return Err(format!(
                "{} exists; pass --force to replace",
                path.display()
            ));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(files.len())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let force = args.iter().any(|a| a == "--force");
    let Some(dir) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: gen_official [--force] OUTPUT_DIR");
        return ExitCode::from(2);
    };
    match write_all(Path::new(dir), force) {
        Ok(n) => {
            eprintln!("wrote {n} files under {dir}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen_official: {e}");
            ExitCode::FAILURE
        }
    }
}
