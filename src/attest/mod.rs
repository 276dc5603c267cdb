//! Authenticity for MCP-RES v0.2: Ed25519 keys, DSSE envelopes over in-toto
//! statements, attested-bundle wrappers and offline trust policies.
//!
//! Integrity (the bundle's own digests), authenticity (who signed) and trust
//! (whether a verifier accepts that signer) stay separate: nothing in this
//! module changes a bundle, its evidence class or its verdict. This module holds
//! the primitives (keys, DSSE, trust policies, the version and classification
//! vocabulary) and imports nothing above `schema`; verification is the validator's
//! attested family (`validate::attested`) and signing a producer (`produce::sign`).

pub mod dsse;
pub mod keys;
pub mod policy;

/// The five authenticity classifications, weakest first.
pub const CLASSIFICATIONS: [&str; 5] = [
    "UNSIGNED_INTEGRITY_ONLY",
    "SIGNED",
    "SIGNED_WITH_IDENTITY",
    "WITNESSED",
    "TRANSPARENCY_RECORDED",
];

/// Rank of a classification in [`CLASSIFICATIONS`].
pub fn classification_rank(name: &str) -> Option<usize> {
    CLASSIFICATIONS.iter().position(|c| *c == name)
}

/// The only signature algorithm MCP-RES v0.2 accepts.
pub const ALGORITHM: &str = "Ed25519";
/// DSSE payload type of an in-toto statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// `_type` of an in-toto Statement v1.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The MCP-RES attestation predicate type.
pub const PREDICATE_TYPE: &str =
    "https://aliengineering-byte.github.io/resilireplay/standards/mcp-res/attestation/v0.2";
/// `schemaVersion` of a DSSE envelope.
pub const ENVELOPE_VERSION: &str = "mcp-res.dsse-envelope/0.2.0";
/// `schemaVersion` of the authenticity record inside a wrapper.
pub const AUTHENTICITY_VERSION: &str = "mcp-res.authenticity/0.2.0";
/// `schemaVersion` of an attested conformance bundle.
pub const WRAPPER_VERSION: &str = "mcp-res.attested-conformance-bundle/0.2.0";
/// `schemaVersion` of a trust policy.
pub const TRUST_POLICY_VERSION: &str = "mcp-res.trust-policy/0.2.0";
