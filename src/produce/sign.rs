//! `mcpres sign`: build the in-toto statement for a bundle, sign it into a DSSE
//! envelope, and wrap the bundle (or add a witness envelope to an existing wrapper).
//! The input is validated first, so nothing invalid is ever signed.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::attest::dsse::{encode_base64, pae};
use crate::attest::keys::KeyPair;
use crate::attest::{
    ALGORITHM, AUTHENTICITY_VERSION, CLASSIFICATIONS, ENVELOPE_VERSION, PAYLOAD_TYPE,
    PREDICATE_TYPE, STATEMENT_TYPE, WRAPPER_VERSION, classification_rank,
};
use crate::diag::Report;
use crate::json::canonical;
use crate::validate::{self, Family};

/// A transparency-log reference to bind into the statement.
/// The most inclusion-proof bytes `sign --inclusion-proof` reads: the schema's
/// 1,048,576 base64 characters (`inclusionProofBase64`) hold 786,432 bytes.
pub const MAX_INCLUSION_PROOF_BYTES: u64 = 786_432;

#[derive(Debug, Clone)]
pub struct Transparency {
    pub log_id: String,
    pub entry_uuid: String,
    /// The inclusion proof bytes; embedded as base64 with their SHA-256.
    pub inclusion_proof: Vec<u8>,
}

/// What the signer asserts besides the bundle's own bindings.
#[derive(Debug, Clone)]
pub struct SignOptions {
    pub signer_identity: String,
    pub trust_policy_id: String,
    /// RFC 3339 signing time.
    pub signing_time: String,
    pub transparency: Option<Transparency>,
    /// Claimed classification; `None` keeps an existing wrapper's claim, or
    /// `SIGNED` for a new wrapper.
    pub claim: Option<String>,
}

/// Why a bundle could not be signed.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// The bundle (or the existing wrapper) does not validate; nothing is signed.
    #[error("refusing to sign: the input is not valid ({})", .0.primary().unwrap_or("invalid"))]
    InvalidInput(Box<Report>),
    #[error(
        "refusing to sign: {0} documents cannot be signed; sign a v0.2 conformance bundle or add a witness to an attested bundle"
    )]
    WrongKind(&'static str),
    #[error("refusing to sign: key {0} already signed this bundle; a witness must use another key")]
    SameKey(String),
    #[error("refusing to sign: the wrapper already holds 8 envelopes, the most the schema allows")]
    TooManyEnvelopes,
    #[error("unknown classification {0:?}; expected one of {list}", list = CLASSIFICATIONS.join(", "))]
    UnknownClaim(String),
    #[error("cannot claim {claim}: {why}")]
    UnjustifiableClaim { claim: String, why: &'static str },
    #[error("signing time {0:?} is not an RFC 3339 date-time")]
    BadSigningTime(String),
    #[error("the signed result does not verify ({0}); this is a bug in mcpres")]
    SelfCheck(String),
    #[error(transparent)]
    Canonical(#[from] canonical::CanonicalError),
}

fn field<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(v, |v, k| &v[*k])
}

/// The in-toto statement binding `bundle` to a signer key.
pub fn create_statement(bundle: &Value, options: &SignOptions, key_fingerprint: &str) -> Value {
    let mut predicate = Map::new();
    predicate.insert(
        "evidenceBundleDigest".into(),
        field(bundle, &["integrity", "bundleDigest"]).clone(),
    );
    predicate.insert(
        "scenarioFingerprint".into(),
        field(bundle, &["evidence", "scenario", "fingerprint"]).clone(),
    );
    predicate.insert(
        "executionInstanceDigest".into(),
        field(bundle, &["statement", "executionInstanceDigest"]).clone(),
    );
    predicate.insert(
        "profile".into(),
        field(bundle, &["evidence", "profile"]).clone(),
    );
    predicate.insert(
        "validator".into(),
        field(bundle, &["statement", "validator"]).clone(),
    );
    predicate.insert("signerIdentity".into(), json!(options.signer_identity));
    predicate.insert("signerKeyFingerprint".into(), json!(key_fingerprint));
    predicate.insert("signatureAlgorithm".into(), json!(ALGORITHM));
    predicate.insert("signingTime".into(), json!(options.signing_time));
    predicate.insert("trustPolicyId".into(), json!(options.trust_policy_id));
    if let Some(t) = &options.transparency {
        predicate.insert(
            "transparencyReference".into(),
            json!({
                "logId": t.log_id,
                "entryUuid": t.entry_uuid,
                "inclusionProofBase64": encode_base64(&t.inclusion_proof),
                "inclusionProofSha256": hex::encode(Sha256::digest(&t.inclusion_proof)),
            }),
        );
    }
    json!({
        "_type": STATEMENT_TYPE,
        "subject": [{
            "name": field(bundle, &["evidence", "subject", "name"]),
            "digest": { "sha256": field(bundle, &["evidence", "subject", "artifactSha256"]) },
        }],
        "predicateType": PREDICATE_TYPE,
        "predicate": Value::Object(predicate),
    })
}

/// Sign a statement's canonical bytes into a one-signature DSSE envelope.
pub fn sign_statement(
    statement: &Value,
    key: &KeyPair,
    signer_identity: &str,
) -> Result<Value, SignError> {
    let payload = canonical::to_vec(statement)?;
    let signature = key.sign(&pae(PAYLOAD_TYPE, &payload));
    let public = key.public();
    let der = public.spki_der();
    Ok(json!({
        "schemaVersion": ENVELOPE_VERSION,
        "payloadType": PAYLOAD_TYPE,
        "payload": encode_base64(&payload),
        "signatures": [{
            "keyid": public.fingerprint(),
            "sig": encode_base64(&signature),
            "algorithm": ALGORITHM,
            "publicKeySpkiBase64": encode_base64(&der),
            "signerIdentity": signer_identity,
        }],
    }))
}

/// Sign `input`: a valid v0.2 bundle becomes a new wrapper; a valid attested
/// bundle gets one more (witness) envelope. The result is checked by the
/// verifier before it is returned.
pub fn attest(input: &Value, key: &KeyPair, options: &SignOptions) -> Result<Value, SignError> {
    if crate::json::time::rfc3339_micros(&options.signing_time).is_none() {
        return Err(SignError::BadSigningTime(options.signing_time.clone()));
    }
    let fingerprint = key.public().fingerprint();
    let (bundle, mut envelopes, existing_claim) = match validate::family_of(input) {
        Family::CoreBundle => {
            let report = validate::core::validate_bundle(input);
            if !report.valid {
                return Err(SignError::InvalidInput(Box::new(report)));
            }
            (input.clone(), Vec::new(), None)
        }
        Family::Attested => {
            // The existing envelopes must verify on their own (no policy).
            let mut probe = input.clone();
            probe["authenticity"]["claimedClassification"] =
                json!(if input["authenticity"]["envelopes"]
                    .as_array()
                    .is_some_and(|a| !a.is_empty())
                {
                    "SIGNED"
                } else {
                    "UNSIGNED_INTEGRITY_ONLY"
                });
            let report = validate::attested::validate_attested(&probe, &Default::default());
            if !report.valid {
                return Err(SignError::InvalidInput(Box::new(report)));
            }
            let envelopes = input["authenticity"]["envelopes"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for envelope in &envelopes {
                if envelope["signatures"][0]["keyid"] == json!(fingerprint) {
                    return Err(SignError::SameKey(fingerprint));
                }
            }
            if envelopes.len() >= 8 {
                return Err(SignError::TooManyEnvelopes);
            }
            let claim = input["authenticity"]["claimedClassification"]
                .as_str()
                .map(str::to_owned);
            (input["bundle"].clone(), envelopes, claim)
        }
        other => return Err(SignError::WrongKind(other.name())),
    };
    let claim = match &options.claim {
        Some(c) => c.clone(),
        None => match existing_claim.as_deref() {
            Some(c) if c != "UNSIGNED_INTEGRITY_ONLY" => c.to_owned(),
            _ => "SIGNED".to_owned(),
        },
    };
    let rank = classification_rank(&claim).ok_or_else(|| SignError::UnknownClaim(claim.clone()))?;
    let envelope_count = envelopes.len() + 1;
    let why = match rank {
        0 => Some("a signed bundle is never UNSIGNED_INTEGRITY_ONLY"),
        3 if envelope_count < 2 => {
            Some("WITNESSED needs envelopes from at least two distinct keys")
        }
        4 if options.transparency.is_none() && !envelopes.iter().any(envelope_has_transparency) => {
            Some(
                "TRANSPARENCY_RECORDED needs a transparency reference (--transparency-log, --transparency-entry, --inclusion-proof)",
            )
        }
        _ => None,
    };
    if let Some(why) = why {
        return Err(SignError::UnjustifiableClaim { claim, why });
    }
    let statement = create_statement(&bundle, options, &fingerprint);
    envelopes.push(sign_statement(&statement, key, &options.signer_identity)?);
    let wrapper = json!({
        "schemaVersion": WRAPPER_VERSION,
        "bundle": bundle,
        "authenticity": {
            "schemaVersion": AUTHENTICITY_VERSION,
            "claimedClassification": claim,
            "envelopes": envelopes,
        },
    });
    // Self-check: every envelope verifies and binds this bundle. (Claims above
    // SIGNED need the verifier's trust policy, so the probe claims SIGNED.)
    let mut probe = wrapper.clone();
    probe["authenticity"]["claimedClassification"] = json!("SIGNED");
    let report = validate::attested::validate_attested(&probe, &Default::default());
    if !report.valid {
        return Err(SignError::SelfCheck(
            report.primary().unwrap_or("invalid").to_owned(),
        ));
    }
    Ok(wrapper)
}

fn envelope_has_transparency(envelope: &Value) -> bool {
    envelope["payload"]
        .as_str()
        .and_then(crate::attest::dsse::decode_base64)
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .is_some_and(|s| s["predicate"].get("transparencyReference").is_some())
}
