//! Offline trust policies (`mcp-res.trust-policy/0.2.0`): which key
//! fingerprints a verifier trusts for which signer identities, during which
//! period, and which keys are revoked. `mcpres trust-policy` edits them so
//! that nobody copies fingerprints by hand.

use serde_json::{Value, json};

use super::{ALGORITHM, TRUST_POLICY_VERSION};
use crate::schema::{self, SchemaKind};

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
    let from = crate::json::time::rfc3339_micros(valid_from)
        .ok_or_else(|| PolicyError::BadTime(valid_from.to_owned()))?;
    let until = crate::json::time::rfc3339_micros(valid_until)
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
