//! Official-conformance attachments (`mcp-res.official-conformance-attachment/0.2.0`,
//! MCPRES-OFFICIAL-001): the output of `@modelcontextprotocol/conformance` kept as
//! emitted, with inventories, an expected-failure baseline and a derived import status.
//!
//! Rule order (the reference order; the first failing rule is the primary):
//! schema; requirement-set revision; active leg; inventories and the baseline digest;
//! `baselineExpected` flags; stale baseline entries; the original result's digest
//! (only when the caller supplies the original bytes); mapping boundary; import status.
//! After the primary every other failing rule is still recorded as a finding.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::diag::codes as c;
use crate::diag::{Finding, Report};
use crate::json::canonical::{self, cmp_utf16, sha256_hex};
use crate::model::official::{Attachment, Check};
use crate::schema::{self, SchemaKind};

/// The three import states an attachment can carry.
pub const IMPORT_STATUSES: [&str; 3] = ["COMPLETE", "INCOMPLETE", "INVALID"];

/// Outcomes that count as failing (a baseline may only name these).
pub fn failing_outcome(outcome: &str) -> bool {
    outcome == "FAILURE" || outcome == "WARNING"
}

/// `scenarioId:checkId`, the reference form of a check reference.
pub fn check_ref(scenario_id: &str, check_id: &str) -> String {
    format!("{scenario_id}:{check_id}")
}

/// Sort by UTF-16 code units and drop repeats (the order mcpres writes inventories in).
pub fn sorted_unique(mut refs: Vec<String>) -> Vec<String> {
    refs.sort_by(|a, b| cmp_utf16(a, b));
    refs.dedup();
    refs
}

fn ref_of(check: &Check) -> String {
    check_ref(&check.scenario_id, &check.check_id)
}

/// The SHA-256 of the canonical JSON of a list of check references.
pub fn baseline_digest(entries: &[String]) -> String {
    let value = Value::Array(entries.iter().cloned().map(Value::String).collect());
    // An array of strings always has canonical bytes.
    sha256_hex(&canonical::to_vec(&value).unwrap_or_default())
}

/// Derive the import status of a schema-valid attachment.
pub fn derive_status(doc: &Attachment) -> &'static str {
    let unexpected_failure = doc
        .checks
        .iter()
        .any(|check| failing_outcome(&check.outcome) && !check.baseline_expected);
    if unexpected_failure {
        return "INVALID";
    }
    let inventories = &doc.inventories;
    let incomplete = !doc.stale_expected_failures.is_empty()
        || !inventories.skipped.is_empty()
        || !inventories.untestable.is_empty()
        || !inventories.pending.is_empty()
        || !inventories.not_scored.is_empty()
        || doc.harness.exit_code != 0
        || doc
            .observation_coverage
            .iter()
            .any(|item| matches!(item.status.as_str(), "UNINSTRUMENTED" | "UNKNOWN"));
    if incomplete { "INCOMPLETE" } else { "COMPLETE" }
}

/// What a check's `baselineExpected` must be.
fn expected_flag(check: &Check, baseline: &[String]) -> bool {
    baseline.contains(&ref_of(check)) && failing_outcome(&check.outcome)
}

/// The inventories the checks imply (all sorted by UTF-16 code units), with
/// `pending` derived from `declared` and sorted as well.
fn implied_inventories(doc: &Attachment) -> Vec<(&'static str, Vec<String>)> {
    let all = &doc.checks;
    let pick = |keep: &dyn Fn(&Check) -> bool| {
        sorted_unique(all.iter().filter(|c| keep(c)).map(ref_of).collect())
    };
    let refs: HashSet<String> = all.iter().map(ref_of).collect();
    let mut pending: Vec<String> = doc
        .inventories
        .declared
        .iter()
        .filter(|r| !refs.contains(*r))
        .cloned()
        .collect();
    pending.sort_by(|a, b| cmp_utf16(a, b));
    vec![
        ("executed", pick(&|_| true)),
        ("wireSchema", pick(&|c| c.wire_schema)),
        ("warnings", pick(&|c| c.outcome == "WARNING")),
        ("skipped", pick(&|c| c.outcome == "SKIPPED")),
        ("untestable", pick(&|c| c.untestable == Some(true))),
        ("pending", pending),
    ]
}

fn list_text(items: &[String]) -> String {
    serde_json::to_string(items).unwrap_or_default()
}

/// Validate an official-conformance attachment. `original` is the unsanitized
/// original result (its bytes), when the caller has it.
pub fn validate_attachment(doc: &Value, original: Option<&[u8]>) -> Report {
    let schema_errors = schema::validate(SchemaKind::OfficialConformanceAttachment, doc);
    if !schema_errors.is_empty() {
        let findings = schema_errors
            .iter()
            .map(|e| {
                Finding::new(
                    c::OFFICIAL_ATTACHMENT_SCHEMA_INVALID,
                    e.instance_path.clone(),
                    format!("schema: {} ({})", e.message, e.keyword),
                )
            })
            .collect();
        return Report::from_findings(findings, schema_errors, None);
    }
    // The schema held, so the typed attachment reads; a failure would be a model bug, reported.
    let doc = match Attachment::from_document(doc) {
        Ok(doc) => doc,
        Err(e) => {
            return Report::from_findings(
                vec![Finding::new(
                    c::OFFICIAL_ATTACHMENT_SCHEMA_INVALID,
                    "",
                    format!("schema-valid but unreadable as an attachment: {e}"),
                )],
                Vec::new(),
                None,
            );
        }
    };
    let mut findings = Vec::new();
    semantic(&doc, original, &mut findings);
    let report = Report::from_findings(findings, Vec::new(), None);
    if report.valid {
        report
            .with_extra("importStatus", json!(doc.import_status))
            .with_extra("officialCertificationClaim", json!(false))
    } else {
        report
    }
}

fn semantic(doc: &Attachment, original: Option<&[u8]>, findings: &mut Vec<Finding>) {
    // 1. The requirement set belongs to the tested revision.
    let revision = doc.protocol_revision.as_str();
    let set_revision = doc.requirement_set.revision.as_str();
    if revision != set_revision {
        findings.push(Finding::new(
            c::OFFICIAL_REQUIREMENT_REVISION_MISMATCH,
            "/requirementSet/revision",
            format!(
                "the requirement set is for {set_revision:?} but the attachment tested {revision:?}"
            ),
        ));
    }

    // 2. The active leg ran.
    let mode = doc.mode.as_str();
    let leg = match mode {
        "client" => doc.legs.client.as_str(),
        "server" => doc.legs.server.as_str(),
        _ => "",
    };
    if leg != "EXECUTED" {
        findings.push(Finding::new(
            c::OFFICIAL_LEG_NOT_EXECUTED,
            format!("/legs/{mode}"),
            format!("the active {mode} leg is {leg}, not EXECUTED"),
        ));
    }

    // 3. Inventories agree with the checks, and the baseline digest with its entries.
    let all = &doc.checks;
    let mut seen = HashSet::new();
    for (i, check) in all.iter().enumerate() {
        let r = ref_of(check);
        if !seen.insert(r.clone()) {
            findings.push(Finding::new(
                c::OFFICIAL_INVENTORY_MISMATCH,
                format!("/checks/{i}"),
                format!("check {r:?} appears more than once"),
            ));
        }
    }
    let declared = &doc.inventories.declared;
    let implied = implied_inventories(doc);
    // `executed` is compared before the declared-membership test (reference order).
    let (executed_name, executed) = &implied[0];
    inventory_finding(doc, executed_name, executed, findings);
    for (i, check) in all.iter().enumerate() {
        let r = ref_of(check);
        if !declared.contains(&r) {
            findings.push(Finding::new(
                c::OFFICIAL_INVENTORY_MISMATCH,
                format!("/checks/{i}"),
                format!("emitted check {r:?} is not in inventories.declared"),
            ));
        }
    }
    for (name, expected) in &implied[1..] {
        inventory_finding(doc, name, expected, findings);
    }
    let baseline = &doc.expected_failure_baseline.entries;
    let recorded = doc.expected_failure_baseline.sha256.as_str();
    let actual = baseline_digest(baseline);
    if actual != recorded {
        findings.push(Finding::new(
            c::OFFICIAL_INVENTORY_MISMATCH,
            "/expectedFailureBaseline/sha256",
            format!(
                "expectedFailureBaseline.sha256 is {recorded} but its entries digest to {actual}"
            ),
        ));
    }

    // 4. baselineExpected is exactly "named in the baseline and failing".
    for (i, check) in all.iter().enumerate() {
        let expected = expected_flag(check, baseline);
        let flag = check.baseline_expected;
        if flag != expected {
            let r = ref_of(check);
            let outcome = check.outcome.as_str();
            let why = if expected {
                format!(
                    "check {r:?} failed ({outcome}) and is in the baseline, so baselineExpected must be true"
                )
            } else if failing_outcome(outcome) {
                format!(
                    "check {r:?} is not in the baseline, so its {outcome} is unexpected and baselineExpected must be false"
                )
            } else {
                format!(
                    "check {r:?} has outcome {outcome}; only a FAILURE or WARNING can be an expected failure"
                )
            };
            findings.push(Finding::new(
                c::OFFICIAL_EXPECTED_FAILURE_REWRITTEN,
                format!("/checks/{i}/baselineExpected"),
                why,
            ));
        }
    }

    // 5. Stale baseline entries, in baseline order.
    let failures: HashSet<String> = all
        .iter()
        .filter(|c| failing_outcome(&c.outcome))
        .map(ref_of)
        .collect();
    let stale: Vec<String> = baseline
        .iter()
        .filter(|r| !failures.contains(*r))
        .cloned()
        .collect();
    let recorded_stale = &doc.stale_expected_failures;
    if &stale != recorded_stale {
        findings.push(Finding::new(
            c::OFFICIAL_STALE_BASELINE_MISMATCH,
            "/staleExpectedFailures",
            format!(
                "staleExpectedFailures is {} but the baseline entries whose check no longer fails are {}",
                list_text(recorded_stale),
                list_text(&stale)
            ),
        ));
    }

    // 6. The original result, when supplied.
    if let Some(bytes) = original {
        let digest = sha256_hex(bytes);
        let want_digest = doc.original_result_artifact.sha256.as_str();
        let want_len = doc.original_result_artifact.bytes;
        if digest != want_digest || bytes.len() as u64 != want_len {
            findings.push(Finding::new(
                c::OFFICIAL_RESULT_DIGEST_MISMATCH,
                "/originalResultArtifact",
                format!(
                    "the supplied original result is {} bytes with sha256 {digest}; the attachment records {want_len} bytes with sha256 {want_digest}",
                    bytes.len()
                ),
            ));
        }
    }

    // 7. No mapping to an MCP-RES evidence class without an explicit mapping.
    let explicit = doc.mapping_boundary.explicit_mapping;
    if let Some(class) = doc.mapping_boundary.mcp_res_evidence_class.as_deref()
        && !explicit
    {
        findings.push(Finding::new(
            c::OFFICIAL_MAPPING_OVERCLAIM,
            "/mappingBoundary/mcpResEvidenceClass",
            format!("official output is mapped to the evidence class {class:?} without an explicit mapping"),
        ));
    }

    // 8. The import status is the derived one.
    let derived = derive_status(doc);
    let claimed = doc.import_status.as_str();
    if derived != claimed {
        findings.push(Finding::new(
            c::OFFICIAL_STATUS_MISMATCH,
            "/importStatus",
            format!("importStatus is {claimed} but the checks, inventories, baseline, harness and coverage give {derived}"),
        ));
    }
}

fn inventory_finding(
    doc: &Attachment,
    name: &str,
    expected: &[String],
    findings: &mut Vec<Finding>,
) {
    let pointer = format!("/inventories/{name}");
    let inventories = &doc.inventories;
    let recorded = match name {
        "declared" => &inventories.declared,
        "executed" => &inventories.executed,
        "wireSchema" => &inventories.wire_schema,
        "warnings" => &inventories.warnings,
        "skipped" => &inventories.skipped,
        "untestable" => &inventories.untestable,
        "pending" => &inventories.pending,
        _ => &inventories.not_scored,
    }
    .clone();
    if recorded.as_slice() == expected {
        return;
    }
    let mut as_set = recorded.clone();
    as_set.sort_by(|a, b| cmp_utf16(a, b));
    let message = if as_set.as_slice() == expected {
        format!(
            "inventories.{name} holds the right references but not sorted by UTF-16 code units: expected {}",
            list_text(expected)
        )
    } else {
        format!(
            "inventories.{name} is {} but the checks give {}",
            list_text(&recorded),
            list_text(expected)
        )
    };
    findings.push(Finding::new(
        c::OFFICIAL_INVENTORY_MISMATCH,
        pointer,
        message,
    ));
}
