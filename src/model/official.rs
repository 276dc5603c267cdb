//! An official-conformance attachment (`mcp-res.official-conformance-attachment/0.2.0`),
//! typed, in the field order the reference kit writes (the importer serializes it in that
//! order; the validator reads a schema-valid document into it once). Enumerated fields are
//! kept as the suite's words: the importer copies outcomes as the official suite emitted them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `schemaVersion` of an official-conformance attachment.
pub const ATTACHMENT_SCHEMA: &str = "mcp-res.official-conformance-attachment/0.2.0";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    pub package_name: String,
    pub package_version: String,
    pub package_sha256: String,
    pub repository: String,
    pub repository_commit: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RequirementSet {
    pub revision: String,
    pub sha256: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Legs {
    pub client: String,
    pub server: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub scenario_id: String,
    pub check_id: String,
    pub outcome: String,
    pub wire_schema: bool,
    pub baseline_expected: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untestable: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    pub details_sha256: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Inventories {
    pub declared: Vec<String>,
    pub executed: Vec<String>,
    pub wire_schema: Vec<String>,
    pub warnings: Vec<String>,
    pub skipped: Vec<String>,
    pub untestable: Vec<String>,
    pub pending: Vec<String>,
    pub not_scored: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Baseline {
    pub entries: Vec<String>,
    pub sha256: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Coverage {
    pub surface: String,
    pub status: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct Sanitization {
    pub applied: bool,
    pub fields: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct OriginalArtifact {
    pub sha256: String,
    pub bytes: u64,
    pub sanitization: Sanitization,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Harness {
    pub exit_code: i64,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct MappingBoundary {
    pub official_result_preserved: bool,
    pub explicit_mapping: bool,
    pub mcp_res_evidence_class: Option<String>,
    pub official_certification_claim: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    pub schema_version: String,
    pub source: Source,
    pub protocol_revision: String,
    pub requirement_set: RequirementSet,
    pub mode: String,
    pub suite: String,
    pub legs: Legs,
    pub scenarios: Vec<String>,
    pub checks: Vec<Check>,
    pub inventories: Inventories,
    pub expected_failure_baseline: Baseline,
    pub stale_expected_failures: Vec<String>,
    pub observation_coverage: Vec<Coverage>,
    pub original_result_artifact: OriginalArtifact,
    pub harness: Harness,
    pub mapping_boundary: MappingBoundary,
    pub import_status: String,
}

impl Attachment {
    /// The attachment as a JSON value (for validation).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The file form: two-space indented JSON in field order, plus a newline
    /// (the layout the reference kit writes its attachments in).
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).unwrap_or_default();
        out.push(b'\n');
        out
    }
}

impl Attachment {
    /// Read a document that passed the attachment schema.
    pub fn from_document(doc: &Value) -> Result<Self, serde_json::Error> {
        Self::deserialize(doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every schema-valid committed attachment reads as the type and serializes back to the
    /// same document.
    #[test]
    fn committed_attachments_round_trip() {
        super::super::testing::assert_committed_documents_round_trip(
            "",
            ATTACHMENT_SCHEMA,
            crate::schema::SchemaKind::OfficialConformanceAttachment,
            |doc| serde_json::to_value(Attachment::from_document(doc).unwrap()).unwrap(),
        );
    }
}
