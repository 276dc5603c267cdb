//! Diagnostic codes as strings (defined in the [`crate::diag`] table; rules use the typed
//! [`crate::diag::codes`]) and per-family code lists. A family whose rule order is the table's
//! order takes its list from the table (adding a code there adds it here); `CORE`,
//! `ATTESTATION`, `V01` and `MIGRATION` are the reference kits' catalogs, in the kits' order,
//! which spans or reorders table families, and are compared with the table by
//! `diag::tests`.

use crate::diag::CodeFamily;
pub use crate::diag::code_names::*;

/// The 23 core codes a v0.2 conformance bundle can fail with.
pub const CORE: [&str; 23] = [
    SCHEMA_INVALID,
    SELF_ASSERTED_CLAIM,
    VACUOUS_NEGATIVE_CONTROL,
    PROPERTY_NOT_REACHED,
    WRONG_STOP_REASON,
    NEGATIVE_MUTANT_SURVIVED,
    NEGATIVE_PREREQUISITE_MISSING,
    MISSING_OBSERVATION_ARTIFACT,
    OBSERVATION_HASH_MISMATCH,
    OBSERVATION_CAUSAL_MISMATCH,
    EVIDENCE_CLASS_PROMOTION,
    COMPLETION_UNOBSERVED,
    REQUIRED_SURFACE_UNOBSERVED,
    SCENARIO_FINGERPRINT_MISMATCH,
    EXECUTION_DIGEST_MISMATCH,
    CROSS_RUN_SUBSTITUTION,
    OPERATION_PARENT_CYCLE,
    RETRY_LIMIT_EXCEEDED,
    WALL_CLOCK_REVERSAL,
    TRIAL_SUMMARY_INCONSISTENT,
    FALSE_STABILITY_CLAIM,
    DIGEST_MISMATCH,
    CAUSAL_MISMATCH,
];

/// The 13 codes an attested wrapper can fail with (besides the inner bundle's).
pub const ATTESTATION: [&str; 13] = [
    ATTESTATION_SCHEMA_INVALID,
    ATTESTATION_SIGNATURE_MISSING,
    ATTESTATION_ALGORITHM_UNSUPPORTED,
    ATTESTATION_SIGNATURE_INVALID,
    ATTESTATION_BINDING_MISMATCH,
    TRUST_POLICY_EXPIRED,
    ATTESTATION_KEY_REVOKED,
    ATTESTATION_DUPLICATE_SIGNER,
    ATTESTATION_IDENTITY_MISMATCH,
    ATTESTATION_UNTRUSTED_SIGNER,
    AUTHENTICITY_CLASSIFICATION_OVERCLAIM,
    ATTESTED_EVIDENCE_INVALID,
    TRANSPARENCY_REFERENCE_INVALID,
];

/// The codes a profile evaluation can fail with, in rule order (the table's `Profile` family).
pub const PROFILE: &[&str] = CodeFamily::Profile.names();

/// The reason code an early-syntax (wrong-reason) mutant observes; not a diagnostic (it is
/// defined in the reason table, [`crate::diag::reasons`]).
pub const OAUTH_EARLY_SYNTAX_REJECTION: &str = crate::diag::reasons::OAUTH_EARLY_SYNTAX_REJECTION;

/// The codes an OAuth-boundary evaluation can fail with, in rule order (the table's `OAuth`
/// family).
pub const OAUTH: &[&str] = CodeFamily::OAuth.names();

/// Every official-conformance code: the two import stops, then the attachment rules in the
/// reference order (the table's `Official` family).
pub const OFFICIAL: &[&str] = CodeFamily::Official.names();

/// The 17 codes a v0.1 conformance bundle can fail with.
pub const V01: [&str; 17] = [
    SCHEMA_INVALID,
    V01_MISSING_CLEAN_CONTROL,
    VACUOUS_NEGATIVE_CONTROL,
    V01_UNBOUNDED_RETRY,
    V01_CLEANUP_INCOMPLETE,
    DIGEST_MISMATCH,
    V01_PARTIAL_MANIFEST,
    V01_SECRET_DETECTED,
    V01_AUTH_HEADER_FORBIDDEN,
    V01_SUBJECT_AMBIGUOUS,
    V01_PROFILE_UNSUPPORTED,
    CAUSAL_MISMATCH,
    V01_SIDE_EFFECT_RETRY_UNSAFE,
    V01_EVIDENCE_TOO_LARGE,
    V01_NONDETERMINISTIC_IDENTITY,
    EVIDENCE_CLASS_PROMOTION,
    V01_REGRESSION_INVALID,
];

/// The 5 codes a migration result can fail validation with, in rule order.
pub const MIGRATION: [&str; 5] = [
    MIGRATION_SCHEMA_INVALID,
    MIGRATION_SOURCE_INVALID,
    MIGRATION_DIGEST_MISMATCH,
    MIGRATION_CLASS_PROMOTION,
    MIGRATION_FABRICATION,
];
