//! Validation of `mcp-res.migration-result/0.2.0` documents (MIGRATION.md of the reference kit).
//!
//! Rule order, as the reference evaluates it: the closed schema; the embedded original bundle
//! re-validated with the v0.1 rules; the preserved evidence digest; the preserved evidence
//! class; the non-fabrication constraints (classifications, status, assertion strength and
//! count, the report repeating the target's unresolved requirements). mcpres adds one rule
//! after those, under the fabrication code: the legacy assertions and unresolved requirements
//! must be exactly the ones the original bundle yields (spec/conformance.md, entry on
//! migration), so an assertion whose value was flipped or which was invented is caught.
//!
//! After the schema passes, every rule is evaluated and recorded; the first is the primary.

use serde_json::Value;

use super::v01;
use crate::diag::codes as c;
use crate::diag::{Finding, Report};
use crate::model::legacy;
use crate::schema::{self, SchemaKind};

/// Validate a migration result.
pub fn validate_result(doc: &Value) -> Report {
    let schema_errors = schema::validate(SchemaKind::MigrationResult, doc);
    if !schema_errors.is_empty() {
        let findings = schema_errors
            .iter()
            .map(|e| {
                Finding::new(
                    c::MIGRATION_SCHEMA_INVALID,
                    e.instance_path.clone(),
                    format!("schema: {} ({})", e.message, e.keyword),
                )
            })
            .collect();
        return Report::from_findings(findings, schema_errors, None);
    }
    let mut findings = Vec::new();
    let original = &doc["originalBundle"];
    let source = v01::validate_bundle(original);
    if let Some(primary) = source.primary() {
        findings.push(Finding::new(
            c::MIGRATION_SOURCE_INVALID,
            "/originalBundle",
            format!("the embedded v0.1 bundle fails v0.1 validation with {primary}"),
        ));
    }
    let original_digest = &original["statement"]["evidenceSha256"];
    if doc["source"]["evidenceSha256"] != *original_digest {
        findings.push(Finding::new(
            c::MIGRATION_DIGEST_MISMATCH,
            "/source/evidenceSha256",
            "source.evidenceSha256 is not the original statement's evidenceSha256",
        ));
    } else if doc["report"]["preservedEvidenceSha256"] != doc["source"]["evidenceSha256"] {
        findings.push(Finding::new(
            c::MIGRATION_DIGEST_MISMATCH,
            "/report/preservedEvidenceSha256",
            "report.preservedEvidenceSha256 differs from source.evidenceSha256",
        ));
    }
    let original_class = &original["evidence"]["evidenceClass"];
    for pointer in ["/target/evidenceClass", "/report/preservedEvidenceClass"] {
        if doc.pointer(pointer) != Some(original_class) {
            findings.push(Finding::new(
                c::MIGRATION_CLASS_PROMOTION,
                pointer,
                "the evidence class differs from the original v0.1 evidence class",
            ));
            break;
        }
    }
    if let Some((pointer, message)) = fabrication(doc) {
        findings.push(Finding::new(c::MIGRATION_FABRICATION, pointer, message));
    }
    let class = findings
        .is_empty()
        .then(|| doc["target"]["evidenceClass"].as_str().map(str::to_owned))
        .flatten();
    let status = doc["target"]["status"].clone();
    Report::from_findings(findings, Vec::new(), class).with_extra("status", status)
}

/// The first non-fabrication constraint the result breaks, if any.
fn fabrication(doc: &Value) -> Option<(String, String)> {
    let target = &doc["target"];
    let report = &doc["report"];
    let expect = [
        ("/migration/fabricatedEvidence", Value::Bool(false)),
        (
            "/target/authenticityClassification",
            Value::from("UNSIGNED_INTEGRITY_ONLY"),
        ),
        (
            "/target/stabilityClassification",
            Value::from("SINGLE_OBSERVATION"),
        ),
        ("/target/status", Value::from("INCOMPLETE")),
    ];
    for (pointer, expected) in expect {
        if doc.pointer(pointer) != Some(&expected) {
            return Some((pointer.into(), format!("must be {expected}")));
        }
    }
    let empty = Vec::new();
    let assertions = target["legacyAssertions"].as_array().unwrap_or(&empty);
    if let Some(index) = assertions
        .iter()
        .position(|a| a["strength"] != "LEGACY_SELF_ASSERTED")
    {
        return Some((
            format!("/target/legacyAssertions/{index}/strength"),
            "a legacy assertion is promoted above LEGACY_SELF_ASSERTED".into(),
        ));
    }
    if report["legacyAssertionCount"].as_u64() != Some(assertions.len() as u64) {
        return Some((
            "/report/legacyAssertionCount".into(),
            format!(
                "legacyAssertionCount does not count the {} legacy assertions",
                assertions.len()
            ),
        ));
    }
    if report["unresolvedRequirements"] != target["unresolvedRequirements"] {
        return Some((
            "/report/unresolvedRequirements".into(),
            "the report's unresolved requirements differ from the target's".into(),
        ));
    }
    // mcpres' addition: the assertions and requirements must be the ones the original yields.
    // Order is not compared: no rule of the standard fixes it (the producer's sorted order
    // makes its output deterministic, it is not a validity rule), and a reordered list
    // invents nothing (spec/conformance.md, entry 30).
    let evidence = &doc["originalBundle"]["evidence"];
    let derived = legacy::legacy_assertions(evidence);
    let mut unmatched: Vec<&Value> = assertions.iter().collect();
    let mut missing = false;
    for d in &derived {
        match unmatched
            .iter()
            .position(|a| a["name"] == d.name.as_str() && a["value"] == d.value)
        {
            Some(at) => {
                unmatched.swap_remove(at);
            }
            None => missing = true,
        }
    }
    if missing || !unmatched.is_empty() {
        // The first assertion the original does not yield (else the end of the list).
        let index = assertions
            .iter()
            .position(|a| {
                !derived
                    .iter()
                    .any(|d| a["name"] == d.name.as_str() && a["value"] == d.value)
            })
            .unwrap_or(derived.len().min(assertions.len()));
        return Some((
            format!("/target/legacyAssertions/{index}"),
            "the legacy assertions are not the producer booleans of the original evidence".into(),
        ));
    }
    let required = legacy::unresolved_requirements(evidence);
    let listed = target["unresolvedRequirements"]
        .as_array()
        .unwrap_or(&empty);
    let mut listed_sorted: Vec<&str> = listed.iter().map(|l| l.as_str().unwrap_or("")).collect();
    listed_sorted.sort_unstable();
    let mut required_sorted: Vec<&str> = required.iter().map(String::as_str).collect();
    required_sorted.sort_unstable();
    if listed.iter().any(|l| !l.is_string()) || listed_sorted != required_sorted {
        return Some((
            "/target/unresolvedRequirements".into(),
            "the unresolved requirements are not the ones a v0.1 bundle leaves open".into(),
        ));
    }
    None
}
