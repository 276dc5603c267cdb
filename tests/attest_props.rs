//! Property tests for DSSE verification: any single-bit change in the
//! payload, the payload type or the signature makes verification fail, both
//! for the Ed25519/PAE primitive and for the whole attested-bundle validator.

use std::sync::OnceLock;

use mcpres::attest::PAYLOAD_TYPE;
use mcpres::attest::dsse::{decode_base64, encode_base64, pae};
use mcpres::attest::keys::KeyPair;
use mcpres::produce::builder::synthetic_bundle;
use mcpres::produce::sign::{self, SignOptions};
use mcpres::validate::{Options, validate_document};
use proptest::prelude::*;
use serde_json::{Value, json};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn key() -> KeyPair {
    KeyPair::from_seed(&[0x5e; 32])
}

/// One signed wrapper, built once.
fn wrapper() -> &'static Value {
    static W: OnceLock<Value> = OnceLock::new();
    W.get_or_init(|| {
        let options = SignOptions {
            signer_identity: "prop@example.org".into(),
            trust_policy_id: "prop/policy".into(),
            signing_time: "2026-06-01T00:00:00.000Z".into(),
            transparency: None,
            claim: None,
        };
        let w = sign::attest(&synthetic_bundle(6).unwrap(), &key(), &options).unwrap();
        assert!(validate_document(&w, &Options::default()).valid);
        w
    })
}

fn envelope_parts() -> (Vec<u8>, Vec<u8>) {
    let env = &wrapper()["authenticity"]["envelopes"][0];
    (
        decode_base64(env["payload"].as_str().unwrap()).unwrap(),
        decode_base64(env["signatures"][0]["sig"].as_str().unwrap()).unwrap(),
    )
}

fn flip(bytes: &mut [u8], bit: usize) {
    let bit = bit % (bytes.len() * 8);
    bytes[bit / 8] ^= 1 << (bit % 8);
}

fn primary_of(w: &Value) -> Vec<String> {
    let report = validate_document(w, &Options::default());
    assert!(!report.valid);
    report.diagnostics
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn primitive_rejects_any_payload_bit_flip(bit in any::<usize>()) {
        let (mut payload, sig) = envelope_parts();
        let public = key().public();
        prop_assert!(public.verify_strict(&pae(PAYLOAD_TYPE, &payload), &sig));
        flip(&mut payload, bit);
        prop_assert!(!public.verify_strict(&pae(PAYLOAD_TYPE, &payload), &sig));
    }

    #[test]
    fn primitive_rejects_any_payload_type_bit_flip(bit in any::<usize>()) {
        let (payload, sig) = envelope_parts();
        let mut t = PAYLOAD_TYPE.as_bytes().to_vec();
        flip(&mut t, bit);
        // PAE takes the type as bytes; a flip may leave UTF-8, so sign over raw bytes.
        let mut message = format!("DSSEv1 {} ", t.len()).into_bytes();
        message.extend_from_slice(&t);
        message.extend_from_slice(format!(" {} ", payload.len()).as_bytes());
        message.extend_from_slice(&payload);
        prop_assert!(!key().public().verify_strict(&message, &sig));
    }

    #[test]
    fn primitive_rejects_any_signature_bit_flip(bit in any::<usize>()) {
        let (payload, mut sig) = envelope_parts();
        flip(&mut sig, bit);
        prop_assert!(!key().public().verify_strict(&pae(PAYLOAD_TYPE, &payload), &sig));
    }

    #[test]
    fn validator_rejects_payload_bit_flips(bit in any::<usize>()) {
        let (mut payload, _) = envelope_parts();
        flip(&mut payload, bit);
        let mut w = wrapper().clone();
        w["authenticity"]["envelopes"][0]["payload"] = json!(encode_base64(&payload));
        prop_assert_eq!(primary_of(&w), vec!["MCP_RES_ATTESTATION_SIGNATURE_INVALID".to_string()]);
    }

    #[test]
    fn validator_rejects_signature_bit_flips(bit in any::<usize>()) {
        let (_, mut sig) = envelope_parts();
        flip(&mut sig, bit);
        let mut w = wrapper().clone();
        w["authenticity"]["envelopes"][0]["signatures"][0]["sig"] = json!(encode_base64(&sig));
        prop_assert_eq!(primary_of(&w), vec!["MCP_RES_ATTESTATION_SIGNATURE_INVALID".to_string()]);
    }

    #[test]
    fn validator_rejects_payload_type_bit_flips(bit in 0usize..(PAYLOAD_TYPE.len() * 7)) {
        // Flip one of the low seven bits of a character so the type stays ASCII text.
        let mut t = PAYLOAD_TYPE.as_bytes().to_vec();
        t[bit / 7] ^= 1 << (bit % 7);
        let t = String::from_utf8(t).unwrap();
        let mut w = wrapper().clone();
        w["authenticity"]["envelopes"][0]["payloadType"] = json!(t);
        // The closed schema names the only payload type; the signature would fail next.
        prop_assert_eq!(primary_of(&w), vec!["MCP_RES_ATTESTATION_SCHEMA_INVALID".to_string()]);
    }
}
