//! Offline trust policies (`mcp-res.trust-policy/0.2.0`): which key
//! fingerprints a verifier trusts for which signer identities, during which
//! period, and which keys are revoked. `mcpres trust-policy` edits them so
//! that nobody copies fingerprints by hand.

use serde_json::{Value, json};

use super::{ALGORITHM, TRUST_POLICY_VERSION};
use crate::diag::SchemaError;
use crate::json::time;
use crate::schema::{self, SchemaKind};

/// A trust policy as a verifier uses it: read once, checked against its
/// schema once, its validity window parsed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustPolicy {
    pub id: String,
    pub version: String,
    /// `validFrom` as written.
    pub valid_from: String,
    /// `validUntil` as written.
    pub valid_until: String,
    /// `validFrom` in epoch milliseconds (`None`: a date-time the schema
    /// accepts but the RFC 3339 reader does not; it then bounds nothing,
    /// as an unparsable time compares false in the references).
    pub valid_from_ms: Option<i64>,
    /// `validUntil` in epoch milliseconds (as `valid_from_ms`).
    pub valid_until_ms: Option<i64>,
    pub trusted_signers: Vec<TrustedSigner>,
    pub revoked_key_fingerprints: Vec<String>,
}

/// One `trustedSigners` entry: a key trusted for one identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedSigner {
    pub key_fingerprint: String,
    pub signer_identity: String,
}

/// A document offered as a trust policy that the verifier cannot use as one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyDocumentError {
    /// Another kind of document (or not a JSON object at all): an unusable
    /// option, not a finding about the verified bundle.
    #[error("it is {found}, not a trust policy ({TRUST_POLICY_VERSION})")]
    WrongKind { found: String },
    /// A trust policy that breaks its schema; the verifier reports these
    /// errors as findings (`MCP_RES_ATTESTATION_SCHEMA_INVALID`).
    #[error("the trust policy breaks its schema ({} problem(s))", .0.len())]
    Schema(Vec<SchemaError>),
}

impl TrustPolicy {
    /// Read a parsed JSON document as a trust policy.
    pub fn from_value(doc: &Value) -> Result<TrustPolicy, PolicyDocumentError> {
        match doc {
            Value::Object(map) => {
                if let Some(Value::String(version)) = map.get("schemaVersion")
                    && !version.starts_with("mcp-res.trust-policy/")
                {
                    return Err(PolicyDocumentError::WrongKind {
                        found: format!("a {version} document"),
                    });
                }
            }
            other => {
                return Err(PolicyDocumentError::WrongKind {
                    found: format!("a JSON {}", json_type(other)),
                });
            }
        }
        let errors = schema::validate(SchemaKind::TrustPolicy, doc);
        if !errors.is_empty() {
            return Err(PolicyDocumentError::Schema(errors));
        }
        let text = |key: &str| doc[key].as_str().unwrap_or_default().to_owned();
        let valid_from = text("validFrom");
        let valid_until = text("validUntil");
        Ok(TrustPolicy {
            id: text("id"),
            version: text("version"),
            valid_from_ms: time::rfc3339_millis(&valid_from),
            valid_until_ms: time::rfc3339_millis(&valid_until),
            valid_from,
            valid_until,
            trusted_signers: doc["trustedSigners"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(|s| TrustedSigner {
                    key_fingerprint: s["keyFingerprint"].as_str().unwrap_or_default().to_owned(),
                    signer_identity: s["signerIdentity"].as_str().unwrap_or_default().to_owned(),
                })
                .collect(),
            revoked_key_fingerprints: list(doc, "revokedKeyFingerprints"),
        })
    }

    /// `fingerprint` is revoked by this policy.
    pub fn revokes(&self, fingerprint: &str) -> bool {
        self.revoked_key_fingerprints
            .iter()
            .any(|f| f == fingerprint)
    }

    /// This policy trusts `fingerprint` for `identity`.
    pub fn trusts(&self, fingerprint: &str, identity: &str) -> bool {
        self.trusted_signers
            .iter()
            .any(|s| s.key_fingerprint == fingerprint && s.signer_identity == identity)
    }
}

/// What a verifier was given as its trust policy: a usable policy, or one
/// that breaks its schema (reported as findings of the verified document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifierPolicy {
    Usable(TrustPolicy),
    SchemaInvalid(Vec<SchemaError>),
}

impl VerifierPolicy {
    /// Read a document given as a trust policy; only a document of another
    /// kind is refused.
    pub fn from_value(doc: &Value) -> Result<VerifierPolicy, PolicyDocumentError> {
        match TrustPolicy::from_value(doc) {
            Ok(p) => Ok(VerifierPolicy::Usable(p)),
            Err(PolicyDocumentError::Schema(errors)) => Ok(VerifierPolicy::SchemaInvalid(errors)),
            Err(e) => Err(e),
        }
    }
}

impl From<TrustPolicy> for VerifierPolicy {
    fn from(p: TrustPolicy) -> Self {
        VerifierPolicy::Usable(p)
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Why a policy edit was refused.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("the trust policy is not valid: {0}")]
    Invalid(String),
    #[error("{0:?} is not an RFC 3339 date-time")]
    BadTime(String),
    #[error("validFrom {from} is after validUntil {until}")]
    EmptyWindow { from: String, until: String },
    #[error("key {fingerprint} is already trusted for {identity:?}")]
    AlreadyTrusted {
        fingerprint: String,
        identity: String,
    },
    #[error("key {0} is revoked in this policy; a revoked key cannot be trusted again")]
    Revoked(String),
    #[error("key {0} is already revoked")]
    AlreadyRevoked(String),
    #[error("the policy already lists {0} entries, the most the schema allows")]
    Full(usize),
}

/// Schema check of a policy, as a one-line summary.
pub fn check(policy: &Value) -> Result<(), PolicyError> {
    let errors = schema::validate(SchemaKind::TrustPolicy, policy);
    match errors.first() {
        None => Ok(()),
        Some(e) => Err(PolicyError::Invalid(format!(
            "{} at {:?} ({} problem(s))",
            e.message,
            e.instance_path,
            errors.len()
        ))),
    }
}

/// A new, empty policy.
pub fn init(
    id: &str,
    version: &str,
    valid_from: &str,
    valid_until: &str,
) -> Result<Value, PolicyError> {
    let from = time::rfc3339_micros(valid_from)
        .ok_or_else(|| PolicyError::BadTime(valid_from.to_owned()))?;
    let until = time::rfc3339_micros(valid_until)
        .ok_or_else(|| PolicyError::BadTime(valid_until.to_owned()))?;
    if from > until {
        return Err(PolicyError::EmptyWindow {
            from: valid_from.to_owned(),
            until: valid_until.to_owned(),
        });
    }
    let policy = json!({
        "schemaVersion": TRUST_POLICY_VERSION,
        "id": id,
        "version": version,
        "validFrom": valid_from,
        "validUntil": valid_until,
        "requiredAlgorithm": ALGORITHM,
        "trustedSigners": [],
        "revokedKeyFingerprints": [],
    });
    check(&policy)?;
    Ok(policy)
}

/// Trust `fingerprint` for `identity`. Bumps the patch version.
pub fn add_signer(
    policy: &mut Value,
    fingerprint: &str,
    identity: &str,
) -> Result<(), PolicyError> {
    let mut next = policy.clone();
    add_signer_in(&mut next, fingerprint, identity)?;
    *policy = next;
    Ok(())
}

fn add_signer_in(policy: &mut Value, fingerprint: &str, identity: &str) -> Result<(), PolicyError> {
    check(policy)?;
    if list(policy, "revokedKeyFingerprints")
        .iter()
        .any(|f| f == fingerprint)
    {
        return Err(PolicyError::Revoked(fingerprint.to_owned()));
    }
    let signers = policy["trustedSigners"]
        .as_array_mut()
        .expect("schema-checked");
    if signers
        .iter()
        .any(|s| s["keyFingerprint"] == fingerprint && s["signerIdentity"] == identity)
    {
        return Err(PolicyError::AlreadyTrusted {
            fingerprint: fingerprint.to_owned(),
            identity: identity.to_owned(),
        });
    }
    if signers.len() >= 32 {
        return Err(PolicyError::Full(signers.len()));
    }
    signers.push(json!({ "keyFingerprint": fingerprint, "signerIdentity": identity }));
    bump_patch(policy);
    check(policy)
}

/// Revoke `fingerprint` (it stays listed among trusted signers, if it was,
/// so the revocation is visible; revocation wins). Bumps the patch version.
pub fn revoke(policy: &mut Value, fingerprint: &str) -> Result<(), PolicyError> {
    let mut next = policy.clone();
    revoke_in(&mut next, fingerprint)?;
    *policy = next;
    Ok(())
}

fn revoke_in(policy: &mut Value, fingerprint: &str) -> Result<(), PolicyError> {
    check(policy)?;
    let revoked = policy["revokedKeyFingerprints"]
        .as_array_mut()
        .expect("schema-checked");
    if revoked.iter().any(|f| f == fingerprint) {
        return Err(PolicyError::AlreadyRevoked(fingerprint.to_owned()));
    }
    if revoked.len() >= 32 {
        return Err(PolicyError::Full(revoked.len()));
    }
    revoked.push(json!(fingerprint));
    bump_patch(policy);
    check(policy)
}

fn list(policy: &Value, key: &str) -> Vec<String> {
    policy[key]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn bump_patch(policy: &mut Value) {
    let Some(version) = policy["version"].as_str() else {
        return;
    };
    let parts: Vec<&str> = version.split('.').collect();
    if let [major, minor, patch] = parts[..]
        && let Ok(patch) = patch.parse::<u64>()
    {
        policy["version"] = json!(format!("{major}.{minor}.{}", patch.saturating_add(1)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FP_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const FP_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    #[test]
    fn edits_keep_the_policy_schema_valid_and_bump_the_version() {
        let mut p = init(
            "org/policy",
            "1.0.0",
            "2026-01-01T00:00:00Z",
            "2027-01-01T00:00:00Z",
        )
        .unwrap();
        add_signer(&mut p, FP_A, "ci@example.org").unwrap();
        assert_eq!(p["version"], "1.0.1");
        assert!(matches!(
            add_signer(&mut p, FP_A, "ci@example.org"),
            Err(PolicyError::AlreadyTrusted { .. })
        ));
        // The same key may be trusted for a second identity.
        add_signer(&mut p, FP_A, "release@example.org").unwrap();
        revoke(&mut p, FP_B).unwrap();
        assert_eq!(p["version"], "1.0.3");
        assert!(matches!(
            revoke(&mut p, FP_B),
            Err(PolicyError::AlreadyRevoked(_))
        ));
        assert!(matches!(
            add_signer(&mut p, FP_B, "x"),
            Err(PolicyError::Revoked(_))
        ));
        assert_eq!(p["trustedSigners"].as_array().unwrap().len(), 2);
        assert!(schema::is_valid(SchemaKind::TrustPolicy, &p));
    }

    #[test]
    fn a_policy_is_read_once_into_its_type() {
        let mut p = init(
            "org/policy",
            "1.0.0",
            "2026-01-01T00:00:00Z",
            "2027-01-01T00:00:00.5Z",
        )
        .unwrap();
        add_signer(&mut p, FP_A, "ci@example.org").unwrap();
        revoke(&mut p, FP_B).unwrap();
        let t = TrustPolicy::from_value(&p).unwrap();
        assert_eq!(t.id, "org/policy");
        assert_eq!(t.version, "1.0.2");
        assert_eq!(t.valid_until, "2027-01-01T00:00:00.5Z");
        assert_eq!(
            t.valid_from_ms,
            time::rfc3339_millis("2026-01-01T00:00:00Z")
        );
        assert_eq!(
            t.valid_until_ms,
            time::rfc3339_millis("2027-01-01T00:00:00.5Z")
        );
        assert!(t.trusts(FP_A, "ci@example.org"));
        assert!(!t.trusts(FP_A, "other@example.org"));
        assert!(t.revokes(FP_B) && !t.revokes(FP_A));
        assert_eq!(
            VerifierPolicy::from_value(&p).unwrap(),
            VerifierPolicy::Usable(t)
        );
    }

    #[test]
    fn another_kind_of_document_is_not_a_policy_but_a_broken_policy_is_reported() {
        let bundle = json!({"schemaVersion": "mcp-res.conformance-bundle/0.2.0"});
        assert!(matches!(
            VerifierPolicy::from_value(&bundle),
            Err(PolicyDocumentError::WrongKind { .. })
        ));
        assert!(matches!(
            VerifierPolicy::from_value(&json!([1])),
            Err(PolicyDocumentError::WrongKind { .. })
        ));
        let mut broken =
            init("p", "1.0.0", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z").unwrap();
        broken["requiredAlgorithm"] = json!("RSA");
        match VerifierPolicy::from_value(&broken) {
            Ok(VerifierPolicy::SchemaInvalid(errors)) => {
                assert_eq!(errors, schema::validate(SchemaKind::TrustPolicy, &broken));
            }
            other => panic!("{other:?}"),
        }
        // No schemaVersion at all: a broken policy, judged by the schema.
        assert!(matches!(
            VerifierPolicy::from_value(&json!({"id": "p"})),
            Ok(VerifierPolicy::SchemaInvalid(_))
        ));
    }

    #[test]
    fn bad_windows_and_times_are_refused() {
        assert!(matches!(
            init("p", "1.0.0", "2027-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
            Err(PolicyError::EmptyWindow { .. })
        ));
        assert!(matches!(
            init("p", "1.0.0", "yesterday", "2026-01-01T00:00:00Z"),
            Err(PolicyError::BadTime(_))
        ));
        assert!(matches!(
            init("p", "v1", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"),
            Err(PolicyError::Invalid(_))
        ));
        let mut not_fingerprint =
            init("p", "1.0.0", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z").unwrap();
        let before = not_fingerprint.clone();
        assert!(matches!(
            add_signer(&mut not_fingerprint, "ABC", "x"),
            Err(PolicyError::Invalid(_))
        ));
        assert_eq!(not_fingerprint, before, "a refused edit changes nothing");
    }
}
