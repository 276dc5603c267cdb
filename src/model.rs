//! Typed, borrowed views of a v0.2 conformance bundle.
//!
//! A [`Bundle`] is read only from a document that passed the closed schema:
//! the core rules read it, so they never see a
//! malformed shape. The raw `serde_json::Value` stays alongside for digests,
//! which are always taken over the document exactly as written.

use serde::Deserialize;
use serde_json::Value;

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
    pub evidence_class_claim: &'a str,
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
    pub trial_summary: TrialSummary,
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
    pub subject_type: &'a str,
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

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation<'a> {
    pub run_id: &'a str,
    pub operation_id: &'a str,
    pub parent_operation_id: Option<&'a str>,
    pub kind: &'a str,
    pub fault_id: Option<&'a str>,
    pub recovery_policy_id: Option<&'a str>,
    pub attempt: i64,
    pub outcome: &'a str,
    pub started_offset_ms: i64,
    pub duration_ms: i64,
    #[serde(default, borrow)]
    pub negative_observation: Option<NegativeObservation<'a>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NegativeObservation<'a> {
    pub oracle_evidence_ref: &'a str,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation<'a> {
    pub id: &'a str,
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub strength: &'a str,
    pub subject_ref: &'a str,
    pub operation_ref: Option<&'a str>,
    pub started_offset_ms: i64,
    pub duration_ms: i64,
    pub outcome: &'a str,
    #[serde(borrow)]
    pub artifact_refs: Vec<&'a str>,
    pub observation_sha256: &'a str,
}

#[derive(Debug, Deserialize)]
pub struct Coverage<'a> {
    #[serde(borrow)]
    pub surfaces: Vec<Surface<'a>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Surface<'a> {
    pub surface: &'a str,
    pub required: bool,
    pub status: &'a str,
    #[serde(borrow)]
    pub observation_refs: Vec<&'a str>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrialSummary {
    pub planned_trials: i64,
    pub completed_trials: i64,
    pub seeds: Vec<i64>,
    pub counts: TrialCounts,
    pub distinct_outcome_hashes: Vec<String>,
    pub duration_ms: Option<TrialDurations>,
    pub classification: String,
}

#[derive(Debug, Deserialize)]
pub struct TrialCounts {
    pub success: i64,
    pub failure: i64,
    pub incomplete: i64,
}

#[derive(Debug, Deserialize)]
pub struct TrialDurations {
    pub minimum: i64,
    pub median: i64,
    pub p95: i64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Statement<'a> {
    pub standard_version: &'a str,
    pub profile_id: &'a str,
    pub profile_version: &'a str,
    pub protocol_revision: &'a str,
    pub subject_type: &'a str,
    pub subject_name: &'a str,
    pub subject_version: &'a str,
    pub evidence_class: &'a str,
    pub result: &'a str,
    pub scenario_fingerprint: &'a str,
    pub execution_instance_digest: &'a str,
    pub stability_classification: &'a str,
    pub evidence_sha256: &'a str,
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
    pub fn view(doc: &'a Value) -> Result<Bundle<'a>, serde_json::Error> {
        Bundle::deserialize(doc)
    }
}
