//! What a v0.1 bundle carries into v0.2 by migration, as pure derivations of its evidence:
//! the producer booleans (legacy assertions) and the v0.2 requirements left open. The
//! `migrate` producer writes them and the migration-result rules re-derive them.

use serde::Serialize;
use serde_json::Value;

/// The v0.2 requirements no v0.1 run can meet.
const ALWAYS_UNRESOLVED: [&str; 7] = [
    "AUTHENTICITY_EVIDENCE",
    "EXECUTION_INSTANCE_DIGEST",
    "OBSERVATION_BINDINGS",
    "OBSERVATION_COVERAGE",
    "REASON_BOUND_NEGATIVE_OBSERVATION",
    "SCENARIO_FINGERPRINT",
    "TRIAL_REPETITION_EVIDENCE",
];

/// One producer boolean carried over as a legacy assertion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LegacyAssertion {
    pub name: String,
    pub value: bool,
}

/// Every producer boolean of a v0.1 evidence envelope: `execution.*` under its own name,
/// `privacy.*`, `cleanup.complete` and `regression.*` with their section prefix. Sorted by
/// name the way the reference's English collation orders these ASCII names (letters compared
/// case-insensitively, `.` before letters, ties by code unit).
pub fn legacy_assertions(evidence: &Value) -> Vec<LegacyAssertion> {
    let mut out = Vec::new();
    let mut section = |name: &str, prefix: &str| {
        if let Some(map) = evidence.get(name).and_then(Value::as_object) {
            for (key, value) in map {
                if let Some(b) = value.as_bool() {
                    out.push(LegacyAssertion {
                        name: format!("{prefix}{key}"),
                        value: b,
                    });
                }
            }
        }
    };
    section("execution", "");
    section("privacy", "privacy.");
    section("regression", "regression.");
    if let Some(b) = evidence
        .get("cleanup")
        .and_then(|c| c.get("complete"))
        .and_then(Value::as_bool)
    {
        out.push(LegacyAssertion {
            name: "cleanup.complete".into(),
            value: b,
        });
    }
    out.sort_by(|a, b| {
        a.name
            .to_ascii_lowercase()
            .cmp(&b.name.to_ascii_lowercase())
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// The v0.2 requirements a migrated v0.1 bundle leaves open, sorted: the seven no v0.1 run
/// can meet, plus SOURCE_EVIDENCE when the evidence has no sanitized source projection.
pub fn unresolved_requirements(evidence: &Value) -> Vec<String> {
    let mut out: Vec<String> = ALWAYS_UNRESOLVED.iter().map(|s| (*s).to_owned()).collect();
    if evidence.get("sourceEvidence").is_none() {
        out.push("SOURCE_EVIDENCE".to_owned());
    }
    out.sort();
    out
}
