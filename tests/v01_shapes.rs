//! v0.1 rules on malformed shapes. The v0.1 kit reads a bundle's fields before the schema
//! with JavaScript semantics (truthiness, `>` after numeric conversion, `in` for member
//! presence), so a malformed field can get a rule's code rather than the schema's. Each case
//! edits mcpres' own valid v0.1 vector (`testdata/migration/v01/valid.json`); the expected
//! primary diagnostic of every case is what the reference v0.1 kit (`lib.mjs`, run with
//! Node 20) reports for the same document.

use mcpres::validate::{Options, validate_document};
use serde_json::{Value, json};

fn base() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/migration/v01/valid.json"
    );
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("JSON")
}

fn set(doc: &mut Value, pointer: &str, value: Value) {
    let (parent, key) = pointer.rsplit_once('/').expect("pointer");
    let target = if parent.is_empty() {
        doc
    } else {
        doc.pointer_mut(parent).expect("parent exists")
    };
    target
        .as_object_mut()
        .expect("object")
        .insert(key.to_owned(), value);
}

#[test]
fn malformed_fields_get_the_reference_primary_diagnostic() {
    let cases: [(&str, Value, &str); 20] = [
        ("/evidence", json!("x"), "MCP_RES_MISSING_CLEAN_CONTROL"),
        (
            "/evidence/operations",
            json!([]),
            "MCP_RES_MISSING_CLEAN_CONTROL",
        ),
        (
            "/evidence/operations/1/faultId",
            json!(""),
            "MCP_RES_VACUOUS_NEGATIVE_CONTROL",
        ),
        (
            "/evidence/operations/1/faultId",
            json!(7),
            "MCP_RES_SCHEMA_INVALID",
        ),
        (
            "/evidence/recoveryPolicies/0/retryLimit",
            Value::Null,
            "MCP_RES_UNBOUNDED_RETRY",
        ),
        (
            "/evidence/cleanup/childProcessesRemaining",
            json!("5"),
            "MCP_RES_CLEANUP_INCOMPLETE",
        ),
        (
            "/evidence/cleanup/childProcessesRemaining",
            json!("abc"),
            "MCP_RES_SCHEMA_INVALID",
        ),
        (
            "/evidence/cleanup/listenersRemaining",
            json!([2]),
            "MCP_RES_CLEANUP_INCOMPLETE",
        ),
        (
            "/evidence/cleanup/complete",
            json!("true"),
            "MCP_RES_CLEANUP_INCOMPLETE",
        ),
        ("/integrity", json!([]), "MCP_RES_PARTIAL_MANIFEST"),
        (
            "/integrity/publication",
            json!("manifest_last"),
            "MCP_RES_PARTIAL_MANIFEST",
        ),
        (
            "/evidence/subject/name",
            json!(0),
            "MCP_RES_SUBJECT_AMBIGUOUS",
        ),
        (
            "/evidence/subject/name",
            json!("0"),
            "MCP_RES_DIGEST_MISMATCH",
        ),
        (
            "/evidence/subject/artifact",
            json!("sha"),
            "MCP_RES_SUBJECT_AMBIGUOUS",
        ),
        (
            "/evidence/subject/workingDirectory",
            Value::Null,
            "MCP_RES_NONDETERMINISTIC_IDENTITY",
        ),
        (
            "/evidence/limits/inputBytes",
            json!("0x1000001"),
            "MCP_RES_EVIDENCE_TOO_LARGE",
        ),
        (
            "/evidence/limits/stringBytes",
            json!("2e6"),
            "MCP_RES_EVIDENCE_TOO_LARGE",
        ),
        (
            "/evidence/subject/note",
            json!("AUTHORIZATION = basic Zm9v"),
            "MCP_RES_AUTH_HEADER_FORBIDDEN",
        ),
        // "api-key: 1234567890" in Base64 without padding.
        (
            "/evidence/subject/note",
            json!("YXBpLWtleTogMTIzNDU2Nzg5MA"),
            "MCP_RES_SECRET_DETECTED",
        ),
        (
            "/evidence/recoveryPolicies/0/retryLimit",
            json!("3"),
            "MCP_RES_SCHEMA_INVALID",
        ),
    ];
    assert!(validate_document(&base(), &Options::default()).valid);
    for (pointer, value, expected) in cases {
        let mut doc = base();
        set(&mut doc, pointer, value.clone());
        let report = validate_document(&doc, &Options::default());
        assert_eq!(
            report.primary(),
            Some(expected),
            "{pointer} = {value}: findings {:?}",
            report.findings.iter().map(|f| f.code).collect::<Vec<_>>()
        );
        // A secret is never echoed into a finding.
        for finding in &report.findings {
            assert!(!finding.message.contains("Zm9v"), "{}", finding.message);
        }
    }
}
