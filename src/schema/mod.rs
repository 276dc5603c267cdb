//! The project's own closed Draft 2020-12 schemas (files in `schemas/`), embedded and compiled once.
//! OWNER: schema helper. Interface is fixed; see lib docs.

use serde::Serialize;

/// Every MCP-RES v0.2 document type that has a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SchemaKind {
    ConformanceBundle,
    EvidenceEnvelope,
    ConformanceStatement,
    IntegrityManifest,
    Observation,
    ObservationCoverage,
    TrialSummary,
    AttestedConformanceBundle,
    AttestationStatement,
    AuthenticityRecord,
    DsseEnvelope,
    TrustPolicy,
    MigrationResult,
    OfficialConformanceAttachment,
    ProfileEvaluation,
    ReliabilityProfileManifest,
    OauthBoundaryEvaluation,
}

/// One schema violation, in the reference result shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaError {
    #[serde(rename = "instancePath")]
    pub instance_path: String,
    pub keyword: String,
    pub message: String,
}

/// Validate `value` against the schema of `kind`; empty means valid.
pub fn validate(_kind: SchemaKind, _value: &serde_json::Value) -> Vec<SchemaError> {
    todo!("schema helper")
}
