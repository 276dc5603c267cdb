//! DSSE envelope parsing and verification: a correctly signed attested bundle
//! is built once; each input replaces a part of its envelope (the whole
//! envelope as JSON, the payload, the signature, the key id or the payload
//! type) and the wrapper is verified. The base64 decoder is fuzzed directly.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcpres::attest::dsse::{decode_base64, encode_base64};
use mcpres::attest::keys::KeyPair;
use mcpres::attest::sign::{SignOptions, attest};
use mcpres::bundle::builder::synthetic_bundle;
use mcpres::validate::{Options, validate_document};
use serde_json::Value;

fn signed() -> &'static Value {
    static SIGNED: OnceLock<Value> = OnceLock::new();
    SIGNED.get_or_init(|| {
        let bundle = synthetic_bundle(6).expect("synthetic bundle");
        let key = KeyPair::from_seed(&[7u8; 32]);
        let options = SignOptions {
            signer_identity: "fuzz@example.invalid".into(),
            trust_policy_id: "fuzz-policy".into(),
            signing_time: "2026-01-01T00:00:00Z".into(),
            transparency: None,
            claim: None,
        };
        let wrapper = attest(&bundle, &key, &options).expect("sign");
        assert!(validate_document(&wrapper, &Options::default()).valid);
        wrapper
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data.get(1..).unwrap_or_default()).into_owned();
    if let Some(decoded) = decode_base64(&text) {
        assert_eq!(decode_base64(&encode_base64(&decoded)), Some(decoded));
    }
    let Some(&mode) = data.first() else {
        return;
    };
    let mut wrapper = signed().clone();
    let envelope = &mut wrapper["authenticity"]["envelopes"][0];
    match mode % 5 {
        0 => match mcpres::json::parse_default(&data[1..]) {
            Ok(v) => *envelope = v,
            Err(_) => return,
        },
        1 => envelope["payload"] = Value::from(text),
        2 => envelope["signatures"][0]["sig"] = Value::from(text),
        3 => envelope["signatures"][0]["keyid"] = Value::from(text),
        _ => envelope["payloadType"] = Value::from(text),
    }
    let report = validate_document(&wrapper, &Options::default());
    if !report.valid {
        assert!(report.primary().is_some());
    }
});
