//! Rule families of MCP-RES v0.2 and the report they produce.
//!
//! Every family records *all* of its findings, in the order the reference
//! validators evaluate them. The first finding overall is therefore the
//! reference's single diagnostic: the primary. The report's `diagnostics`
//! list holds exactly that primary (the reference result shape); `findings`
//! holds everything.

pub mod attested;
pub mod codes;
pub mod core;
pub mod field_dir;
pub mod migration;
pub mod oauth;
pub mod official;
pub mod profile;
pub mod profile_dir;
pub mod v01;

pub use crate::diag::{Finding, Report};
/// RFC 3339 instants (moved to [`crate::json::time`]; kept here for callers).
pub use crate::json::time;

/// Document families that `mcpres validate` recognises by `schemaVersion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// A v0.2 conformance bundle (also the default for documents without a known version).
    CoreBundle,
    /// `mcp-res.conformance-bundle/0.1.0`, judged with v0.1 semantics.
    V01Bundle,
    /// `mcp-res.attested-conformance-bundle/0.2.0`.
    Attested,
    /// `mcp-res.migration-result/0.2.0`.
    Migration,
    /// `mcp-res.official-conformance-attachment/0.2.0`.
    Official,
    /// `mcp-res.profile-evaluation/0.2.0`.
    Profile,
    /// `mcp-res.oauth-boundary-evaluation/0.2.0`.
    OAuth,
}

impl Family {
    /// A short human name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Family::CoreBundle => "v0.2 conformance bundle",
            Family::V01Bundle => "v0.1 conformance bundle",
            Family::Attested => "attested bundle",
            Family::Migration => "migration result",
            Family::Official => "official-conformance attachment",
            Family::Profile => "profile evaluation",
            Family::OAuth => "OAuth-boundary evaluation",
        }
    }
}

/// Pick the family of a document from its `schemaVersion`.
pub fn family_of(doc: &serde_json::Value) -> Family {
    let version = doc
        .get("schemaVersion")
        .and_then(|v| v.as_str())
        .unwrap_or("");
    match version {
        "mcp-res.conformance-bundle/0.1.0" => Family::V01Bundle,
        "mcp-res.attested-conformance-bundle/0.2.0" => Family::Attested,
        "mcp-res.migration-result/0.2.0" => Family::Migration,
        "mcp-res.official-conformance-attachment/0.2.0" => Family::Official,
        "mcp-res.profile-evaluation/0.2.0" => Family::Profile,
        "mcp-res.oauth-boundary-evaluation/0.2.0" => Family::OAuth,
        // Anything else is judged as a v0.2 bundle, exactly as the reference does:
        // the closed schema rejects a wrong or missing schemaVersion.
        _ => Family::CoreBundle,
    }
}

/// Caller-supplied context for families that need more than the document.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The trust policy for attested bundles, read and schema-checked once.
    pub trust_policy: Option<crate::attest::policy::VerifierPolicy>,
    /// The verification time (attested bundles); `None` means now.
    pub at: Option<crate::json::time::Timestamp>,
    /// The unsanitized original result bytes (official-conformance attachments).
    pub original_result: Option<Vec<u8>>,
}

/// Validate one parsed document with the rules of its family.
pub fn validate_document(doc: &serde_json::Value, options: &Options) -> Report {
    validate_document_written(doc, None, options)
}

/// [`validate_document`] of a document read from canonically written bytes
/// (`written`, when they are): digests are taken over those bytes in place.
/// The report is the same either way.
pub fn validate_document_written(
    doc: &serde_json::Value,
    written: Option<crate::json::reader::Written<'_>>,
    options: &Options,
) -> Report {
    match family_of(doc) {
        Family::CoreBundle => core::validate_bundle_written(doc, written),
        Family::Attested => attested::validate_attested(doc, options),
        Family::Profile => profile::validate_profile_evaluation(doc),
        Family::OAuth => oauth::validate_oauth_evaluation(doc),
        Family::Official => official::validate_attachment(doc, options.original_result.as_deref()),
        Family::V01Bundle => v01::validate_bundle(doc),
        Family::Migration => migration::validate_result(doc),
    }
}
