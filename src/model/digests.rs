//! The digests a v0.2 bundle binds itself with, as pure functions of its documents.

use serde_json::{Map, Value, json};

use super::vocab::{EVIDENCE_PATH, STATEMENT_PATH};
use crate::json::canonical;

fn sorted_artifacts_value(list: &[&Value]) -> Value {
    let mut sorted: Vec<&Value> = list.to_vec();
    sorted.sort_by(|a, b| {
        let pa = a.get("path").and_then(Value::as_str).unwrap_or("");
        let pb = b.get("path").and_then(Value::as_str).unwrap_or("");
        canonical::cmp_utf16(pa, pb)
    });
    let mut map = Map::new();
    map.insert(
        "artifacts".into(),
        Value::Array(sorted.into_iter().cloned().collect()),
    );
    Value::Object(map)
}

/// `supportingArtifactManifestDigest` over a manifest's artifact list.
pub fn supporting_manifest_digest(artifacts: &[Value]) -> String {
    let supporting: Vec<&Value> = artifacts
        .iter()
        .filter(|a| {
            let p = a.get("path").and_then(Value::as_str);
            p != Some(EVIDENCE_PATH) && p != Some(STATEMENT_PATH)
        })
        .collect();
    canonical::digest(&sorted_artifacts_value(&supporting)).unwrap_or_default()
}

/// `integrity.bundleDigest` over a manifest's artifact list.
pub fn bundle_digest(artifacts: &[Value]) -> String {
    let all: Vec<&Value> = artifacts.iter().collect();
    canonical::digest(&sorted_artifacts_value(&all)).unwrap_or_default()
}

/// `statement.executionInstanceDigest` of an evidence document and an outcome.
pub fn execution_digest(evidence: &Value, actual_outcome: &str) -> String {
    let observation_digests: Vec<Value> = evidence
        .get("observations")
        .and_then(Value::as_array)
        .map(|obs| {
            obs.iter()
                .map(|o| o.get("observationSha256").cloned().unwrap_or(Value::Null))
                .collect()
        })
        .unwrap_or_default();
    let material = json!({
        "scenarioFingerprint": evidence.pointer("/scenario/fingerprint").cloned().unwrap_or(Value::Null),
        "run": evidence.get("run").cloned().unwrap_or(Value::Null),
        "observationDigests": observation_digests,
        "actualOutcome": actual_outcome,
        "supportingArtifactManifestDigest": evidence.get("supportingArtifactManifestDigest").cloned().unwrap_or(Value::Null),
    });
    canonical::digest(&material).unwrap_or_default()
}
