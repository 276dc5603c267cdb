//! An OAuth authorization-boundary evaluation (`mcp-res.oauth-boundary-evaluation/0.2.0`),
//! typed. The validator reads a borrowed view of a schema-valid document; the OAuth-boundary
//! runner builds the same type from its own values and serializes it, seals
//! `evaluationSha256` (written as `""` until then) and validates what it wrote. The credential
//! scan runs over the document as written, not over this view.

use serde::{Deserialize, Serialize};

use super::Text;
use super::vocab::{
    ObservationSource, Outcome, Platform, ProbeOutcome, ProtocolRevision, RuntimeName,
};

/// The `schemaVersion` of an OAuth-boundary evaluation.
pub const OAUTH_EVALUATION_SCHEMA: &str = "mcp-res.oauth-boundary-evaluation/0.2.0";

/// What a producer's redactor writes in place of a synthetic credential (a
/// bearer made for the run, a token an OAuth run minted), wherever it
/// occurred in stored evidence: the judges count it back.
pub const SYNTHETIC_CREDENTIAL: &str = "<synthetic-bearer>";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OauthEvaluation<'a> {
    #[serde(borrow)]
    pub schema_version: Text<'a>,
    #[serde(borrow)]
    pub subject: OauthSubject<'a>,
    #[serde(borrow)]
    pub environment: OauthEnvironment<'a>,
    #[serde(borrow)]
    pub profile: OauthProfile<'a>,
    #[serde(borrow)]
    pub fixture: Fixture<'a>,
    #[serde(borrow)]
    pub flow: Flow<'a>,
    #[serde(borrow)]
    pub cases: Vec<Case<'a>>,
    pub privacy: Privacy,
    #[serde(borrow)]
    pub cleanup: ListenerCleanup<'a>,
    pub result: Outcome,
    #[serde(borrow)]
    pub evaluation_sha256: Text<'a>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OauthSubject<'a> {
    #[serde(borrow)]
    pub name: Text<'a>,
    #[serde(borrow)]
    pub version: Text<'a>,
    #[serde(borrow)]
    pub artifact_sha256: Text<'a>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OauthEnvironment<'a> {
    pub platform: Platform,
    pub runtime: RuntimeName,
    #[serde(borrow)]
    pub runtime_version: Text<'a>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OauthProfile<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(borrow)]
    pub version: Text<'a>,
    #[serde(borrow)]
    pub manifest_sha256: Text<'a>,
    pub protocol_revision: ProtocolRevision,
}

/// The loopback authorization fixture the evaluation ran against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fixture<'a> {
    pub loopback_only: bool,
    pub synthetic_credentials: bool,
    pub real_authorization_providers_contacted: u64,
    pub external_network_requests: u64,
    #[serde(borrow)]
    pub listener_sha256: Text<'a>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Flow<'a> {
    #[serde(borrow)]
    pub resource_uri: Text<'a>,
    #[serde(borrow)]
    pub authorization_server_issuer: Text<'a>,
    #[serde(borrow)]
    pub authorization_endpoint: Text<'a>,
    #[serde(borrow)]
    pub token_endpoint: Text<'a>,
    #[serde(borrow)]
    pub client_id: Text<'a>,
    #[serde(borrow)]
    pub redirect_uri: Text<'a>,
    #[serde(borrow)]
    pub requested_scopes: Vec<Text<'a>>,
    #[serde(borrow)]
    pub authorized_scopes: Vec<Text<'a>>,
    #[serde(borrow)]
    pub code_challenge_method: Text<'a>,
    #[serde(borrow)]
    pub cimd_sha256: Text<'a>,
    #[serde(borrow)]
    pub trust_policy_id: Text<'a>,
}

/// One boundary check: a positive and a negative probe and the early-syntax mutant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Case<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    /// `RUNTIME_PROBE` or `TEST_FIXTURE`.
    pub evidence_source: ObservationSource,
    #[serde(borrow)]
    pub positive: Probe<'a>,
    #[serde(borrow)]
    pub negative: Probe<'a>,
    #[serde(borrow)]
    pub wrong_reason_mutant: WrongReasonMutant<'a>,
}

/// A probe: `expectedOutcome` is `ACCEPT` or `REJECT`, `observedOutcome` also `NOT_OBSERVED`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Probe<'a> {
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
pub struct WrongReasonMutant<'a> {
    pub property_reached: bool,
    #[serde(borrow)]
    pub observed_reason_code: Text<'a>,
    #[serde(borrow)]
    pub expected_diagnostic: Text<'a>,
    #[serde(borrow)]
    pub artifact_sha256: Text<'a>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Privacy {
    pub token_material_persisted: bool,
    pub evidence_contains_credential_material: bool,
    pub authorization_errors_sanitized: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenerCleanup<'a> {
    pub listener_closed: bool,
    pub redirect_listener_released: bool,
    #[serde(borrow)]
    pub observation_sha256: Text<'a>,
}

impl<'a> OauthEvaluation<'a> {
    /// Borrow a typed view of a document that passed the OAuth-boundary schema.
    pub fn view(doc: &'a serde_json::Value) -> Result<Self, serde_json::Error> {
        Self::deserialize(doc)
    }

    /// `INCOMPLETE` when any case's evidence is a test fixture, otherwise `PASS`.
    pub fn derived_result(&self) -> Outcome {
        if self
            .cases
            .iter()
            .any(|c| c.evidence_source == ObservationSource::TestFixture)
        {
            Outcome::Incomplete
        } else {
            Outcome::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every committed OAuth-boundary evaluation reads into its type and serializes back to the
    /// identical canonical bytes.
    #[test]
    fn committed_bundles_round_trip_to_identical_bytes() {
        let seen = super::super::testing::assert_bundle_files_round_trip(
            &["bundles/oauth"],
            |name, doc| match name {
                "evaluation.json" => {
                    Some(serde_json::to_value(OauthEvaluation::view(doc).unwrap()).unwrap())
                }
                _ => None,
            },
        );
        assert!(seen >= 2, "{seen} documents");
    }

    /// Every schema-valid committed OAuth vector reads as a typed evaluation and serializes
    /// back to the same document.
    #[test]
    fn committed_valid_vectors_round_trip() {
        super::super::testing::assert_committed_documents_round_trip(
            "oauth",
            OAUTH_EVALUATION_SCHEMA,
            crate::schema::SchemaKind::OauthBoundaryEvaluation,
            |doc| serde_json::to_value(OauthEvaluation::view(doc).unwrap()).unwrap(),
        );
    }
}
