//! A protocol-profile evaluation (`mcp-res.profile-evaluation/0.2.0`) and the profile
//! runner's record of a run (`run.json`, `mcpres.profile-run/1`), typed. The validator reads a
//! borrowed view of a schema-valid document; the profile runner builds the same types from its
//! own values and serializes them, seals `evaluationSha256` (written as `""` until then) and
//! checks what it wrote with the validator, which reads it through this view.

use serde::{Deserialize, Serialize};

use super::Text;
use super::vocab::{
    ClaimScope, ImplementationLanguage, ObservationSource, Outcome, Platform, ProbeOutcome,
    ProtocolRevision, RuntimeName, TargetKind,
};

/// The `schemaVersion` of a profile evaluation.
pub const PROFILE_EVALUATION_SCHEMA: &str = "mcp-res.profile-evaluation/0.2.0";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileEvaluation<'a> {
    #[serde(borrow)]
    pub schema_version: Text<'a>,
    #[serde(borrow)]
    pub subject: EvaluatedSubject<'a>,
    #[serde(borrow)]
    pub environment: Environment<'a>,
    #[serde(borrow)]
    pub profile: ProfileReference<'a>,
    #[serde(borrow)]
    pub scope: Scope<'a>,
    #[serde(borrow)]
    pub checks: Vec<Check<'a>>,
    #[serde(borrow)]
    pub cleanup: Cleanup<'a>,
    pub result: Outcome,
    #[serde(borrow)]
    pub evaluation_sha256: Text<'a>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluatedSubject<'a> {
    #[serde(borrow)]
    pub name: Text<'a>,
    pub implementation_language: ImplementationLanguage,
    #[serde(borrow)]
    pub version: Text<'a>,
    #[serde(borrow)]
    pub artifact_sha256: Text<'a>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Environment<'a> {
    pub platform: Platform,
    pub runtime_name: RuntimeName,
    #[serde(borrow)]
    pub runtime_version: Text<'a>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileReference<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(borrow)]
    pub version: Text<'a>,
    #[serde(borrow)]
    pub manifest_sha256: Text<'a>,
    pub protocol_revision: ProtocolRevision,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope<'a> {
    pub claim: ClaimScope,
    #[serde(borrow)]
    pub claimed_check_ids: Vec<Text<'a>>,
    pub target_kind: TargetKind,
    #[serde(borrow)]
    pub target_sha256: Text<'a>,
    pub remote_opt_in: bool,
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub allowlist_sha256: Option<Text<'a>>,
    #[serde(default, borrow, skip_serializing_if = "Option::is_none")]
    pub reviewed_target_sha256: Option<Text<'a>>,
}

/// One check: a positive observation and its negative control.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Check<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(borrow)]
    pub positive: CheckObservation<'a>,
    #[serde(borrow)]
    pub negative_control: CheckObservation<'a>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckObservation<'a> {
    pub source: ObservationSource,
    pub property_reached: bool,
    pub expected_outcome: ProbeOutcome,
    pub observed_outcome: ProbeOutcome,
    #[serde(borrow)]
    pub expected_reason_code: Text<'a>,
    #[serde(borrow)]
    pub observed_reason_code: Text<'a>,
    #[serde(borrow)]
    pub artifact_sha256: Text<'a>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cleanup<'a> {
    pub required: bool,
    pub observed: bool,
    #[serde(borrow)]
    pub observation_sha256: Text<'a>,
}

/// The schema version of a profile run record (`run.json`).
pub const PROFILE_RUN_SCHEMA: &str = "mcpres.profile-run/1";

/// A profile run's record (`run.json`, an mcpres extension beside the evaluation): every
/// check's verdict with its artifacts, and the manifest of every artifact stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileRun<'a> {
    #[serde(borrow)]
    pub schema_version: Text<'a>,
    #[serde(borrow)]
    pub profile: RunProfile<'a>,
    #[serde(borrow)]
    pub evaluation_file_sha256: Text<'a>,
    /// `PASS`, `FAIL` or `INCOMPLETE` over the checks the run was asked for.
    pub result: Outcome,
    #[serde(borrow)]
    pub preflight_sha256: Text<'a>,
    /// Whether the subject's identity held over the run (absent in records
    /// made before it was watched).
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<RunIdentity<'a>>,
    #[serde(borrow)]
    pub checks: Vec<RunCheck<'a>>,
    #[serde(borrow)]
    pub artifacts: Vec<RunArtifact<'a>>,
}

/// The subject's identity over a run, as `artifacts/identity.json` records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunIdentity<'a> {
    /// A digest taken before or after a check, or at the end, differs from
    /// the one taken at the start.
    pub changed: bool,
    /// `MCP_RES_SUBJECT_CHANGED` when it changed, `null` otherwise.
    #[serde(borrow)]
    pub reason: Option<Text<'a>>,
    #[serde(borrow)]
    pub record: Text<'a>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunProfile<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    pub protocol_revision: ProtocolRevision,
}

/// One check of a run: its verdict and the artifacts of its observations (`null` for an
/// observation not made).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunCheck<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    /// `REQUIRED` or `CONDITIONAL`.
    #[serde(borrow)]
    pub kind: Text<'a>,
    /// `PASS`, `FAIL` or `NOT_OBSERVED`.
    #[serde(borrow)]
    pub verdict: Text<'a>,
    #[serde(borrow)]
    pub reason: Text<'a>,
    #[serde(borrow)]
    pub detail: Text<'a>,
    #[serde(borrow)]
    pub positive: Option<Text<'a>>,
    #[serde(borrow)]
    pub negative: Option<Text<'a>>,
    #[serde(borrow)]
    pub mutant: Option<Text<'a>>,
    pub mutant_killed: Option<bool>,
}

/// A stored artifact: its path below the run directory, digest and length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunArtifact<'a> {
    #[serde(borrow)]
    pub path: Text<'a>,
    #[serde(borrow)]
    pub sha256: Text<'a>,
    pub bytes: u64,
}

impl<'a> ProfileEvaluation<'a> {
    /// Borrow a typed view of a document that passed the profile-evaluation schema.
    pub fn view(doc: &'a serde_json::Value) -> Result<Self, serde_json::Error> {
        Self::deserialize(doc)
    }

    /// `INCOMPLETE` when any observation comes from a test fixture, otherwise `PASS`
    /// (MCPRES-PROFILE-002: a fixture is never runtime evidence).
    pub fn derived_result(&self) -> Outcome {
        let fixture = self.checks.iter().any(|c| {
            c.positive.source == ObservationSource::TestFixture
                || c.negative_control.source == ObservationSource::TestFixture
        });
        if fixture {
            Outcome::Incomplete
        } else {
            Outcome::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every committed profile evaluation and run record (the profile bundles and the field
    /// matrix's legs) read into its type and serialize back to the identical canonical bytes.
    #[test]
    fn committed_bundles_round_trip_to_identical_bytes() {
        let seen = super::super::testing::assert_bundle_files_round_trip(
            &["bundles/profiles", "bundles/field/evidence/legs"],
            |name, doc| match name {
                "evaluation.json" => {
                    Some(serde_json::to_value(ProfileEvaluation::view(doc).unwrap()).unwrap())
                }
                "run.json" => {
                    Some(serde_json::to_value(ProfileRun::deserialize(doc).unwrap()).unwrap())
                }
                _ => None,
            },
        );
        assert!(seen >= 20, "{seen} documents");
    }

    /// Every schema-valid committed profile vector reads as a typed evaluation and serializes
    /// back to the same document (no field lost, none invented).
    #[test]
    fn committed_valid_vectors_round_trip() {
        super::super::testing::assert_committed_documents_round_trip(
            "profile",
            PROFILE_EVALUATION_SCHEMA,
            crate::schema::SchemaKind::ProfileEvaluation,
            |doc| serde_json::to_value(ProfileEvaluation::view(doc).unwrap()).unwrap(),
        );
    }
}
