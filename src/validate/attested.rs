//! Attested bundles (`mcp-res.attested-conformance-bundle/0.2.0`): the inner
//! bundle with every core rule, then each DSSE envelope, the optional trust
//! policy, and the authenticity classification, in the reference order.
//!
//! Order (the first failure is the primary diagnostic):
//! 1. pre-schema: an envelope without signatures, or a signature whose
//!    algorithm is not Ed25519;
//! 2. the wrapper schema (which includes the inner bundle's schema);
//! 3. the inner bundle's core rules (`MCP_RES_ATTESTED_EVIDENCE_INVALID`
//!    followed by the core primary);
//! 4. no envelopes: valid only when `UNSIGNED_INTEGRITY_ONLY` is claimed;
//!    envelopes with an `UNSIGNED_INTEGRITY_ONLY` claim are an overclaim;
//! 5. the trust policy's schema and validity window at the evaluation time;
//! 6. per envelope: one signature, distinct key, base64, keyid = fingerprint,
//!    Ed25519 SPKI, signature, canonical payload, statement schema, bindings,
//!    signer identity and fingerprint, algorithm, policy id, signing time,
//!    revocation, trust, transparency proof;
//! 7. the classification: a claim of SIGNED_WITH_IDENTITY or above needs every
//!    signer trusted; no claim may exceed the derived level.

use std::collections::HashSet;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Options, core, time};
use crate::attest::dsse::{decode_base64, pae};
use crate::attest::keys::{PublicKey, fingerprint_of_spki};
use crate::attest::policy::{TrustPolicy, VerifierPolicy};
use crate::attest::{ALGORITHM, CLASSIFICATIONS, classification_rank};
use crate::diag::codes as c;
use crate::diag::{Finding, Report};
use crate::json::canonical;
use crate::json::time::Timestamp;
use crate::schema::{self, SchemaKind};

/// Validate an attested wrapper. `options.trust_policy` and `options.at`
/// (default: now) drive the trust decisions.
pub fn validate_attested(doc: &Value, options: &Options) -> Report {
    let mut findings = pre_schema(doc);
    let schema_errors = schema::validate(SchemaKind::AttestedConformanceBundle, doc);
    for e in &schema_errors {
        findings.push(Finding::new(
            c::ATTESTATION_SCHEMA_INVALID,
            e.instance_path.clone(),
            format!("schema: {} ({})", e.message, e.keyword),
        ));
    }
    if !findings.is_empty() {
        return Report::from_findings(findings, schema_errors, None);
    }

    let bundle = &doc["bundle"];
    let inner = core::validate_bundle(bundle);
    let evidence_class = inner.evidence_class.clone();
    if !inner.valid {
        return evidence_invalid(inner);
    }
    let finish = |findings: Vec<Finding>| {
        Report::from_findings(findings, Vec::new(), evidence_class.clone())
    };

    let claimed = doc["authenticity"]["claimedClassification"]
        .as_str()
        .unwrap_or("");
    let envelopes = doc["authenticity"]["envelopes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if envelopes.is_empty() {
        if claimed == CLASSIFICATIONS[0] {
            return finish(Vec::new())
                .with_extra("authenticityClassification", json!(claimed))
                .with_extra("claimedClassification", json!(claimed));
        }
        return finish(vec![Finding::new(
            c::ATTESTATION_SIGNATURE_MISSING,
            "/authenticity/envelopes",
            format!("the wrapper claims {claimed} but carries no envelope"),
        )]);
    }
    if claimed == CLASSIFICATIONS[0] {
        return finish(vec![Finding::new(
            c::AUTHENTICITY_CLASSIFICATION_OVERCLAIM,
            "/authenticity/claimedClassification",
            format!(
                "UNSIGNED_INTEGRITY_ONLY is claimed, but {} envelope(s) are present",
                envelopes.len()
            ),
        )]);
    }

    let at_ms = Some(options.at.unwrap_or_else(Timestamp::now).millis());
    let policy = match &options.trust_policy {
        None => None,
        Some(VerifierPolicy::SchemaInvalid(errors)) => {
            let findings = errors
                .iter()
                .map(|e| {
                    Finding::new(
                        c::ATTESTATION_SCHEMA_INVALID,
                        "",
                        format!(
                            "trust policy{}: {} ({})",
                            if e.instance_path.is_empty() {
                                String::new()
                            } else {
                                format!(" at {}", e.instance_path)
                            },
                            e.message,
                            e.keyword
                        ),
                    )
                })
                .collect();
            return Report::from_findings(findings, errors.clone(), evidence_class.clone());
        }
        Some(VerifierPolicy::Usable(policy)) => Some(policy),
    };
    if let Some(policy) = policy
        && (before(at_ms, policy.valid_from_ms) || before(policy.valid_until_ms, at_ms))
    {
        // Say which bound failed.
        let (what, bound, value) = if before(at_ms, policy.valid_from_ms) {
            (
                "is not valid yet",
                "before its validFrom",
                &policy.valid_from,
            )
        } else {
            ("has expired", "after its validUntil", &policy.valid_until)
        };
        return finish(vec![Finding::new(
            c::TRUST_POLICY_EXPIRED,
            "",
            format!(
                "trust policy {} {what}: the evaluation time {} is {bound} {value} (the policy is valid from {} until {})",
                policy.id,
                at_ms.map_or_else(|| "(invalid)".to_owned(), time::format_rfc3339_millis),
                policy.valid_from,
                policy.valid_until,
            ),
        )]);
    }

    let ctx = Ctx {
        bundle,
        policy,
        at_ms,
    };
    let mut seen = HashSet::new();
    let mut all_trusted = policy.is_some();
    let mut has_transparency = false;
    let mut findings = Vec::new();
    for (i, envelope) in envelopes.iter().enumerate() {
        match check_envelope(i, envelope, &ctx, &mut seen) {
            Ok(ok) => {
                all_trusted &= ok.trusted;
                has_transparency |= ok.transparency;
            }
            Err(finding) => findings.push(*finding),
        }
    }
    if !findings.is_empty() {
        return finish(findings);
    }

    let mut derived = 1;
    if all_trusted {
        derived = 2;
        if seen.len() >= 2 {
            derived = 3;
        }
        if has_transparency {
            derived = 4;
        }
    }
    let claimed_rank = classification_rank(claimed).unwrap_or(0);
    if claimed_rank >= 2 && !all_trusted {
        let why = if policy.is_none() {
            "no trust policy was supplied (--trust-policy)".to_owned()
        } else {
            "at least one signer's key fingerprint and identity are not listed together in the trust policy's trustedSigners".to_owned()
        };
        return finish(vec![Finding::new(
            c::ATTESTATION_UNTRUSTED_SIGNER,
            "/authenticity/claimedClassification",
            format!("{claimed} needs every signer to be trusted, but {why}"),
        )]);
    }
    if claimed_rank > derived {
        return finish(vec![Finding::new(
            c::AUTHENTICITY_CLASSIFICATION_OVERCLAIM,
            "/authenticity/claimedClassification",
            format!(
                "{claimed} is claimed, but the envelopes justify only {}",
                CLASSIFICATIONS[derived]
            ),
        )]);
    }
    finish(Vec::new())
        .with_extra(
            "authenticityClassification",
            json!(CLASSIFICATIONS[derived]),
        )
        .with_extra("claimedClassification", json!(claimed))
}

/// `a < b` with the reference's NaN semantics: an unparsable time compares false.
fn before(a: Option<i64>, b: Option<i64>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a < b)
}

/// The inner bundle failed: EVIDENCE_INVALID, then the core findings under `/bundle`.
fn evidence_invalid(inner: Report) -> Report {
    let inner_primary = inner.primary().unwrap_or_default().to_owned();
    let mut findings = vec![Finding::new(
        c::ATTESTED_EVIDENCE_INVALID,
        "/bundle",
        format!(
            "the signed bundle itself is invalid ({inner_primary}); a signature never repairs evidence"
        ),
    )];
    findings.extend(inner.findings.into_iter().map(|mut f| {
        f.pointer = format!("/bundle{}", f.pointer);
        f
    }));
    let mut report = Report::from_findings(findings, Vec::new(), inner.evidence_class);
    report.diagnostics.extend(inner.diagnostics);
    // The JavaScript reference passes the inner schema errors through.
    report.schema_errors = inner
        .schema_errors
        .into_iter()
        .map(|mut e| {
            e.instance_path = format!("/bundle{}", e.instance_path);
            e
        })
        .collect();
    report
}

/// Pre-schema checks with the JavaScript reference's semantics.
fn pre_schema(doc: &Value) -> Vec<Finding> {
    let mut findings = Vec::new();
    let envelopes: Vec<&Value> = match doc.get("authenticity").and_then(|a| a.get("envelopes")) {
        Some(Value::Array(items)) => items.iter().collect(),
        // A string iterates as characters in JavaScript, and a character has
        // no signatures: one finding is enough.
        Some(v @ Value::String(s)) if !s.is_empty() => vec![v],
        _ => Vec::new(),
    };
    for (i, envelope) in envelopes.into_iter().enumerate() {
        let pointer = format!("/authenticity/envelopes/{i}");
        match envelope.get("signatures") {
            Some(Value::Array(sigs)) if !sigs.is_empty() => {
                if let Some(j) = sigs
                    .iter()
                    .position(|s| s.get("algorithm").and_then(Value::as_str) != Some(ALGORITHM))
                {
                    findings.push(Finding::new(
                        c::ATTESTATION_ALGORITHM_UNSUPPORTED,
                        format!("{pointer}/signatures/{j}/algorithm"),
                        format!(
                            "signature {j} of envelope {i} uses algorithm {}; MCP-RES v0.2 accepts Ed25519 only",
                            sigs[j].get("algorithm").map_or_else(|| "(none)".to_owned(), Value::to_string)
                        ),
                    ));
                }
            }
            _ => findings.push(Finding::new(
                c::ATTESTATION_SIGNATURE_MISSING,
                format!("{pointer}/signatures"),
                format!("envelope {i} has no signatures"),
            )),
        }
    }
    findings
}

struct Ctx<'a> {
    bundle: &'a Value,
    policy: Option<&'a TrustPolicy>,
    at_ms: Option<i64>,
}

struct EnvelopeOk {
    trusted: bool,
    transparency: bool,
}

fn fail(code: crate::diag::Code, pointer: String, message: String) -> Box<Finding> {
    Box::new(Finding::new(code, pointer, message))
}

fn check_envelope(
    i: usize,
    envelope: &Value,
    ctx: &Ctx<'_>,
    seen: &mut HashSet<String>,
) -> Result<EnvelopeOk, Box<Finding>> {
    let at = format!("/authenticity/envelopes/{i}");
    let signatures = envelope["signatures"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if signatures.len() != 1 {
        return Err(fail(
            c::ATTESTATION_DUPLICATE_SIGNER,
            format!("{at}/signatures"),
            format!(
                "envelope {i} has {} signatures; each envelope carries exactly one signer (add witnesses as separate envelopes)",
                signatures.len()
            ),
        ));
    }
    let sig_at = format!("{at}/signatures/0");
    let signature = &signatures[0];
    let keyid = signature["keyid"].as_str().unwrap_or("");
    if !seen.insert(keyid.to_owned()) {
        return Err(fail(
            c::ATTESTATION_DUPLICATE_SIGNER,
            format!("{sig_at}/keyid"),
            format!("key {keyid} signs more than one envelope; a repeated key is not a witness"),
        ));
    }
    let decoded = (
        envelope["payload"].as_str().and_then(decode_base64),
        signature["publicKeySpkiBase64"]
            .as_str()
            .and_then(decode_base64),
        signature["sig"].as_str().and_then(decode_base64),
    );
    let (Some(payload), Some(der), Some(sig)) = decoded else {
        let field = if decoded.0.is_none() {
            format!("{at}/payload")
        } else if decoded.1.is_none() {
            format!("{sig_at}/publicKeySpkiBase64")
        } else {
            format!("{sig_at}/sig")
        };
        return Err(fail(
            c::ATTESTATION_SIGNATURE_INVALID,
            field,
            "not standard padded base64".to_owned(),
        ));
    };
    let fingerprint = fingerprint_of_spki(&der);
    if fingerprint != keyid {
        return Err(fail(
            c::ATTESTATION_IDENTITY_MISMATCH,
            format!("{sig_at}/keyid"),
            format!(
                "keyid {keyid} is not the fingerprint of the embedded public key ({fingerprint})"
            ),
        ));
    }
    let Some(public) = PublicKey::from_spki_der(&der) else {
        return Err(fail(
            c::ATTESTATION_SIGNATURE_INVALID,
            format!("{sig_at}/publicKeySpkiBase64"),
            "the embedded public key is not an Ed25519 SubjectPublicKeyInfo".to_owned(),
        ));
    };
    let payload_type = envelope["payloadType"].as_str().unwrap_or("");
    if !public.verify_strict(&pae(payload_type, &payload), &sig) {
        return Err(fail(
            c::ATTESTATION_SIGNATURE_INVALID,
            format!("{sig_at}/sig"),
            format!(
                "the signature does not verify with key {keyid}: the payload, payloadType or signature changed after signing, another key signed, or the key or signature uses a weak (small-order) point"
            ),
        ));
    }
    let statement = match crate::json::reader::parse_default(&payload) {
        Ok(v) => v,
        Err(e) => {
            return Err(fail(
                c::ATTESTATION_SCHEMA_INVALID,
                format!("{at}/payload"),
                format!("the signed payload is not a JSON document: {e}"),
            ));
        }
    };
    if canonical::to_vec(&statement).ok().as_deref() != Some(payload.as_slice()) {
        return Err(fail(
            c::ATTESTATION_SCHEMA_INVALID,
            format!("{at}/payload"),
            "the signed payload is not in canonical JSON form (mcp-res-json-utf16-v1)".to_owned(),
        ));
    }
    let errors = schema::validate(SchemaKind::AttestationStatement, &statement);
    if let Some(e) = errors.first() {
        return Err(fail(
            c::ATTESTATION_SCHEMA_INVALID,
            format!("{at}/payload"),
            format!(
                "the signed statement is not an MCP-RES attestation statement: {} at {:?} ({})",
                e.message, e.instance_path, e.keyword
            ),
        ));
    }
    let bundle = ctx.bundle;
    let predicate = &statement["predicate"];
    let subject = &statement["subject"];
    let same_canonical =
        |a: &Value, b: &Value| canonical::to_vec(a).ok() == canonical::to_vec(b).ok();
    let bindings: [(&str, bool); 8] = [
        (
            "subject count",
            subject.as_array().is_some_and(|s| s.len() == 1),
        ),
        (
            "subject name",
            subject[0]["name"] == bundle["evidence"]["subject"]["name"],
        ),
        (
            "subject digest",
            subject[0]["digest"]["sha256"] == bundle["evidence"]["subject"]["artifactSha256"],
        ),
        (
            "evidenceBundleDigest",
            predicate["evidenceBundleDigest"] == bundle["integrity"]["bundleDigest"],
        ),
        (
            "scenarioFingerprint",
            predicate["scenarioFingerprint"] == bundle["evidence"]["scenario"]["fingerprint"],
        ),
        (
            "executionInstanceDigest",
            predicate["executionInstanceDigest"] == bundle["statement"]["executionInstanceDigest"],
        ),
        (
            "profile",
            same_canonical(&predicate["profile"], &bundle["evidence"]["profile"]),
        ),
        (
            "validator",
            same_canonical(&predicate["validator"], &bundle["statement"]["validator"]),
        ),
    ];
    if let Some((name, _)) = bindings.iter().find(|(_, ok)| !ok) {
        return Err(fail(
            c::ATTESTATION_BINDING_MISMATCH,
            format!("{at}/payload"),
            format!(
                "the signed statement's {name} does not match the wrapped bundle: the signature is for other evidence"
            ),
        ));
    }
    let identity = signature["signerIdentity"].as_str().unwrap_or("");
    if predicate["signerIdentity"] != signature["signerIdentity"]
        || predicate["signerKeyFingerprint"] != signature["keyid"]
    {
        return Err(fail(
            c::ATTESTATION_IDENTITY_MISMATCH,
            format!("{sig_at}/signerIdentity"),
            format!(
                "the envelope names signer {identity:?} with key {keyid}, but the signed statement names {} with key {}",
                predicate["signerIdentity"], predicate["signerKeyFingerprint"]
            ),
        ));
    }
    if predicate["signatureAlgorithm"] != ALGORITHM {
        return Err(fail(
            c::ATTESTATION_ALGORITHM_UNSUPPORTED,
            format!("{at}/payload"),
            format!(
                "the signed statement names algorithm {}",
                predicate["signatureAlgorithm"]
            ),
        ));
    }
    let mut trusted = false;
    if let Some(policy) = ctx.policy {
        if predicate["trustPolicyId"].as_str() != Some(policy.id.as_str()) {
            return Err(fail(
                c::ATTESTATION_IDENTITY_MISMATCH,
                format!("{at}/payload"),
                format!(
                    "the statement was signed under trust policy {}, but the verifier's policy is {}",
                    predicate["trustPolicyId"],
                    Value::from(policy.id.as_str())
                ),
            ));
        }
        let signing = time::rfc3339_millis(predicate["signingTime"].as_str().unwrap_or(""));
        if before(signing, policy.valid_from_ms)
            || before(policy.valid_until_ms, signing)
            || before(ctx.at_ms, signing)
        {
            return Err(fail(
                c::TRUST_POLICY_EXPIRED,
                format!("{at}/payload"),
                format!(
                    "signing time {} is outside the policy window {} .. {} or after the evaluation time {}",
                    predicate["signingTime"].as_str().unwrap_or(""),
                    policy.valid_from,
                    policy.valid_until,
                    ctx.at_ms
                        .map_or_else(|| "(invalid)".to_owned(), time::format_rfc3339_millis),
                ),
            ));
        }
        if policy.revokes(keyid) {
            return Err(fail(
                c::ATTESTATION_KEY_REVOKED,
                format!("{sig_at}/keyid"),
                format!("key {keyid} is revoked by trust policy {}", policy.id),
            ));
        }
        trusted = policy.trusts(keyid, identity);
    }
    let mut transparency = false;
    if let Some(reference) = predicate
        .get("transparencyReference")
        .filter(|r| !r.is_null())
    {
        let proof = reference["inclusionProofBase64"]
            .as_str()
            .and_then(decode_base64);
        let Some(proof) = proof else {
            return Err(fail(
                c::TRANSPARENCY_REFERENCE_INVALID,
                format!("{at}/payload"),
                "the transparency reference's inclusionProofBase64 is not standard padded base64"
                    .to_owned(),
            ));
        };
        let digest = hex::encode(Sha256::digest(&proof));
        if reference["inclusionProofSha256"] != digest.as_str() {
            return Err(fail(
                c::TRANSPARENCY_REFERENCE_INVALID,
                format!("{at}/payload"),
                format!(
                    "the inclusion proof's SHA-256 is {digest}, not the recorded {}",
                    reference["inclusionProofSha256"]
                ),
            ));
        }
        transparency = true;
    }
    Ok(EnvelopeOk {
        trusted,
        transparency,
    })
}
