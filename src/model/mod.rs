//! The document model shared by producers and rules.
//!
//! - Typed documents of a v0.2 conformance bundle ([`Bundle`] and its parts), one set of types
//!   for both directions: a producer builds them from borrowed values and serializes them;
//!   the core rules deserialize a borrowed view of a document that passed the closed schema, so
//!   they never see a malformed shape. Enumerated fields are the enums of [`vocab`], so a
//!   misspelt kind, outcome or status does not compile. The raw `serde_json::Value` stays
//!   alongside for digests, which are always taken over the document exactly as written.
//! - [`vocab`]: paths, media types and every enumerated vocabulary (evidence classes, the 14
//!   observation surfaces, outcomes, statuses, classifications).
//! - [`digests`] and [`legacy`]: pure derivations that producers write and rules recompute.
//!
//! Parts a producer writes whole ([`Operation`], [`Observation`], [`Coverage`],
//! [`TrialSummary`], [`Statement`]) carry every field of their schema; fields that the bundle
//! builder seals later (digests) are `Option`s left out while `None`. The envelope, scenario and
//! run are read-only views of the fields the rules need.

pub mod digests;
pub mod legacy;
pub mod mcp;
pub mod oauth;
pub mod official;
pub mod profile;
pub mod vocab;

use serde::{Deserialize, Serialize};

use vocab::{
    CoverageStatus, EvidenceClass, ObservationOutcome, ObservationType, OperationKind,
    OperationOutcome, Outcome, Stability, Strength, SubjectType, Surface, Verdict,
};

/// A string of a document, borrowed: from the document when a rule reads it, from the
/// producer's own values while it builds one (it serializes the part at once).
pub type Text<'a> = &'a str;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bundle<'a> {
    #[serde(borrow)]
    pub evidence: Evidence<'a>,
    #[serde(borrow)]
    pub statement: Statement<'a>,
    #[serde(borrow)]
    pub integrity: Integrity<'a>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence<'a> {
    pub standard_version: &'a str,
    #[serde(borrow)]
    pub profile: Profile<'a>,
    pub protocol_revision: &'a str,
    pub evidence_class_claim: EvidenceClass,
    #[serde(borrow)]
    pub subject: Subject<'a>,
    #[serde(borrow)]
    pub scenario: Scenario<'a>,
    #[serde(borrow)]
    pub run: Run<'a>,
    #[serde(borrow)]
    pub operations: Vec<Operation<'a>>,
    #[serde(borrow)]
    pub observations: Vec<Observation<'a>>,
    #[serde(borrow)]
    pub coverage: Coverage<'a>,
    #[serde(borrow)]
    pub trial_summary: TrialSummary<'a>,
    #[serde(default, borrow)]
    pub source_evidence_refs: Option<Vec<&'a str>>,
    pub supporting_artifact_manifest_digest: &'a str,
}

#[derive(Debug, Deserialize)]
pub struct Profile<'a> {
    pub id: &'a str,
    pub version: &'a str,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subject<'a> {
    pub subject_type: SubjectType,
    pub name: &'a str,
    pub version: &'a str,
    pub artifact_sha256: &'a str,
    pub identity_digest: &'a str,
}

#[derive(Debug, Deserialize)]
pub struct Scenario<'a> {
    pub fingerprint: &'a str,
    #[serde(borrow)]
    pub descriptor: Descriptor<'a>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor<'a> {
    pub standard_version: &'a str,
    pub profile_id: &'a str,
    pub profile_version: &'a str,
    pub protocol_revision: &'a str,
    pub subject_identity_digest: &'a str,
    #[serde(borrow)]
    pub faults: Vec<Fault<'a>>,
    #[serde(borrow)]
    pub recovery_policies: Vec<RecoveryPolicy<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct Fault<'a> {
    pub id: &'a str,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecoveryPolicy<'a> {
    pub id: &'a str,
    pub retry_limit: i64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run<'a> {
    pub id: &'a str,
    pub started_at: &'a str,
    pub finished_at: &'a str,
    pub monotonic_duration_ms: i64,
}

/// A tool's identity: an observation's `producer`, a statement's `validator`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool<'a> {
    #[serde(borrow)]
    pub name: Text<'a>,
    #[serde(borrow)]
    pub version: Text<'a>,
    #[serde(borrow)]
    pub sha256: Text<'a>,
}

/// One operation of the experiment (`evidence.operations[]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation<'a> {
    #[serde(borrow)]
    pub run_id: Text<'a>,
    #[serde(borrow)]
    pub operation_id: Text<'a>,
    #[serde(borrow)]
    pub parent_operation_id: Option<Text<'a>>,
    pub kind: OperationKind,
    #[serde(borrow)]
    pub fault_id: Option<Text<'a>>,
    #[serde(borrow)]
    pub recovery_policy_id: Option<Text<'a>>,
    pub attempt: i64,
    pub outcome: OperationOutcome,
    pub started_offset_ms: i64,
    pub duration_ms: i64,
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub negative_observation: Option<NegativeObservation<'a>>,
}

/// `propertyReached`: `true`, `false` or the string `UNKNOWN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PropertyReached {
    Known(bool),
    Unknown(UnknownWord),
}

/// The word `UNKNOWN` (see [`PropertyReached`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnknownWord {
    #[serde(rename = "UNKNOWN")]
    Unknown,
}

/// Why a negative control's failure was the expected one (`operations[].negativeObservation`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NegativeObservation<'a> {
    #[serde(borrow)]
    pub property_under_test: Text<'a>,
    pub property_reached: PropertyReached,
    pub expected_verdict: Verdict,
    pub observed_verdict: Verdict,
    #[serde(borrow)]
    pub expected_stop_reason: Text<'a>,
    #[serde(borrow)]
    pub observed_stop_reason: Text<'a>,
    #[serde(borrow)]
    pub oracle_evidence_ref: Text<'a>,
    #[serde(borrow)]
    pub prerequisites_reached: Vec<Text<'a>>,
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub mutant_id: Option<Text<'a>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutant_killed: Option<bool>,
}

/// One observation (`evidence.observations[]`, also written alone as its own artifact).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation<'a> {
    #[serde(borrow)]
    pub schema_version: Text<'a>,
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(rename = "type")]
    pub kind: ObservationType,
    pub strength: Strength,
    #[serde(borrow)]
    pub producer: Tool<'a>,
    #[serde(borrow)]
    pub subject_ref: Text<'a>,
    #[serde(borrow)]
    pub operation_ref: Option<Text<'a>>,
    pub started_offset_ms: i64,
    pub duration_ms: i64,
    pub outcome: ObservationOutcome,
    #[serde(borrow)]
    pub reason_code: Text<'a>,
    #[serde(borrow)]
    pub artifact_refs: Vec<Text<'a>>,
    /// Sealed by the bundle builder: a producer writes `""`.
    #[serde(borrow)]
    pub observation_sha256: Text<'a>,
}

/// The coverage record (`evidence.coverage`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage<'a> {
    #[serde(borrow)]
    pub schema_version: Text<'a>,
    #[serde(borrow)]
    pub surfaces: Vec<SurfaceCoverage<'a>>,
}

/// How one surface was watched (`coverage.surfaces[]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceCoverage<'a> {
    pub surface: Surface,
    pub required: bool,
    pub status: CoverageStatus,
    #[serde(borrow)]
    pub observation_refs: Vec<Text<'a>>,
}

/// The trial summary (`evidence.trialSummary`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrialSummary<'a> {
    #[serde(borrow)]
    pub schema_version: Text<'a>,
    pub planned_trials: i64,
    pub completed_trials: i64,
    pub seeds: Vec<i64>,
    pub process_count: i64,
    pub counts: TrialCounts,
    pub distinct_outcome_hashes: Vec<String>,
    pub duration_ms: Option<TrialDurations>,
    #[serde(borrow)]
    pub environments: Vec<Text<'a>>,
    #[serde(borrow)]
    pub stop_rule: Text<'a>,
    pub classification: Stability,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialCounts {
    pub success: i64,
    pub failure: i64,
    pub incomplete: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialDurations {
    pub minimum: i64,
    pub median: i64,
    pub p95: i64,
}

/// The conformance statement. The three digests (`scenarioFingerprint`,
/// `executionInstanceDigest`, `evidenceSha256`) are sealed by the bundle builder: a producer
/// writes `""`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Statement<'a> {
    #[serde(borrow)]
    pub schema_version: Text<'a>,
    #[serde(borrow)]
    pub standard_version: Text<'a>,
    #[serde(borrow)]
    pub profile_id: Text<'a>,
    #[serde(borrow)]
    pub profile_version: Text<'a>,
    #[serde(borrow)]
    pub protocol_revision: Text<'a>,
    pub subject_type: SubjectType,
    #[serde(borrow)]
    pub subject_name: Text<'a>,
    #[serde(borrow)]
    pub subject_version: Text<'a>,
    pub evidence_class: EvidenceClass,
    pub result: Outcome,
    #[serde(borrow)]
    pub scenario_fingerprint: Text<'a>,
    #[serde(borrow)]
    pub execution_instance_digest: Text<'a>,
    pub stability_classification: Stability,
    #[serde(borrow)]
    pub evidence_sha256: Text<'a>,
    #[serde(borrow)]
    pub validator: Tool<'a>,
    #[serde(borrow)]
    pub verified_at: Text<'a>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Integrity<'a> {
    #[serde(borrow)]
    pub artifacts: Vec<Artifact<'a>>,
    pub bundle_digest: &'a str,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Artifact<'a> {
    pub path: &'a str,
    pub media_type: &'a str,
    pub bytes: i64,
    pub sha256: &'a str,
}

impl<'a> Bundle<'a> {
    /// Borrow a typed view of a schema-valid bundle document.
    pub fn view<'d: 'a>(doc: &'a crate::json::Doc<'d>) -> Result<Bundle<'a>, serde_json::Error> {
        Bundle::deserialize(doc)
    }
}

/// Test support shared by the typed documents' round-trip tests.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::PathBuf;

    use serde_json::Value;

    use crate::schema::{self, SchemaKind};

    /// Assert that every `evaluation.json` and `run.json` below the repository folders `roots`
    /// that `round_trip` (given the file's name) reads into its type reads back to a document
    /// with the same canonical bytes. Returns how many files were compared.
    pub fn assert_bundle_files_round_trip(
        roots: &[&str],
        round_trip: impl Fn(&str, &Value) -> Option<Value>,
    ) -> usize {
        let mut seen = 0;
        for root in roots {
            let mut stack = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(root)];
            while let Some(path) = stack.pop() {
                if path.is_dir() {
                    stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
                    continue;
                }
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if name != "evaluation.json" && name != "run.json" {
                    continue;
                }
                let bytes = std::fs::read(&path).unwrap();
                let doc: Value = serde_json::from_slice(&bytes).unwrap();
                let Some(typed) = round_trip(name, &doc) else {
                    continue;
                };
                let before = crate::json::canonical::to_vec(&doc).unwrap();
                let after = crate::json::canonical::to_vec(&typed).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&after),
                    String::from_utf8_lossy(&before),
                    "{}",
                    path.display()
                );
                seen += 1;
            }
        }
        seen
    }

    /// Assert that every committed document under `testdata/<under>` (recursively) whose
    /// `schemaVersion` is `version` and that passes the `kind` schema reads into its type and
    /// serializes back to the identical document (`round_trip` does both); at least one must.
    pub fn assert_committed_documents_round_trip(
        under: &str,
        version: &str,
        kind: SchemaKind,
        round_trip: impl Fn(&Value) -> Value,
    ) {
        let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata")).join(under);
        let mut seen = 0;
        let mut stack = vec![root.clone()];
        while let Some(path) = stack.pop() {
            if path.is_dir() {
                stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
                continue;
            }
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let Ok(doc) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            if doc.get("schemaVersion").and_then(Value::as_str) != Some(version)
                || !schema::validate(kind, &doc).is_empty()
            {
                continue;
            }
            assert_eq!(round_trip(&doc), doc, "{}", path.display());
            seen += 1;
        }
        assert!(
            seen > 0,
            "no schema-valid {version} document under {}",
            root.display()
        );
    }
}
