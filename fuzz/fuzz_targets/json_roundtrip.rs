//! Strict reader + canonicalizer: anything the reader accepts canonicalizes,
//! the canonical bytes read back to an equal value, and canonicalizing again
//! gives the same bytes (idempotence).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpres::json::{canonical, parse_default};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = parse_default(data) else {
        return;
    };
    let bytes = canonical::to_vec(&value).expect("an accepted document canonicalizes");
    let again = parse_default(&bytes).expect("canonical bytes are accepted by the reader");
    assert_eq!(
        again, value,
        "canonical bytes read back to a different value"
    );
    let twice = canonical::to_vec(&again).expect("canonicalizes twice");
    assert_eq!(twice, bytes, "canonicalization is not idempotent");
    // `digest` is defined on the same bytes, except that a string is hashed
    // as its own UTF-8 bytes (as the reference does).
    let expected = match &value {
        serde_json::Value::String(s) => mcpres::json::sha256_hex(s.as_bytes()),
        _ => mcpres::json::sha256_hex(&bytes),
    };
    assert_eq!(mcpres::json::digest(&value).expect("digest"), expected);
});
