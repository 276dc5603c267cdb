//! `mcp-res-json-utf16-v1`: the one canonical form every MCP-RES digest is taken over.
//!
//! No insignificant whitespace; object keys ordered by their UTF-16 code units;
//! arrays in order; strings escaped as JavaScript's `JSON.stringify` does;
//! numbers only safe integers in plain decimal.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::reader::MAX_SAFE_INTEGER;

/// Name of the canonicalization algorithm, as bundles record it.
pub const ALGORITHM: &str = "mcp-res-json-utf16-v1";

/// A value that has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CanonicalError {
    /// A number that is not a safe integer (`MCP_RES_NON_CANONICAL_NUMBER`).
    #[error("MCP_RES_NON_CANONICAL_NUMBER: {0} is not a safe integer")]
    NonCanonicalNumber(String),
}

impl CanonicalError {
    /// The MCP-RES diagnostic code for this refusal.
    pub fn code(&self) -> &'static str {
        match self {
            CanonicalError::NonCanonicalNumber(_) => "MCP_RES_NON_CANONICAL_NUMBER",
        }
    }
}

/// Canonical bytes of `value`.
pub fn to_vec(value: &Value) -> Result<Vec<u8>, CanonicalError> {
    let mut out = Vec::with_capacity(256);
    write(value, &mut out)?;
    Ok(out)
}

/// Append the canonical bytes of `value` to `out`.
pub fn write(value: &Value, out: &mut Vec<u8>) -> Result<(), CanonicalError> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(n, out)?,
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out)?;
            }
            out.push(b']');
        }
        Value::Object(map) => write_members(map, out, |_, v, out| write(v, out))?,
    }
    Ok(())
}

/// Write an object: `{`, its members in UTF-16 key order separated by commas,
/// `}`. `value` writes each member's value (the key and colon are written
/// before it is called).
fn write_members<'v>(
    map: &'v Map<String, Value>,
    out: &mut Vec<u8>,
    mut value: impl FnMut(&'v str, &'v Value, &mut Vec<u8>) -> Result<(), CanonicalError>,
) -> Result<(), CanonicalError> {
    out.push(b'{');
    // serde_json's map iterates in code point order. That equals UTF-16 order
    // unless some key holds a character at or above U+E000 (lead byte >= 0xEE).
    let needs_resort = map.keys().any(|k| k.bytes().any(|b| b >= 0xEE));
    let mut member = |i: usize, k: &'v String, v: &'v Value, out: &mut Vec<u8>| {
        if i > 0 {
            out.push(b',');
        }
        write_string(k, out);
        out.push(b':');
        value(k, v, out)
    };
    if needs_resort {
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        entries.sort_by(|a, b| cmp_utf16(a.0, b.0));
        for (i, (k, v)) in entries.into_iter().enumerate() {
            member(i, k, v, out)?;
        }
    } else {
        for (i, (k, v)) in map.iter().enumerate() {
            member(i, k, v, out)?;
        }
    }
    out.push(b'}');
    Ok(())
}

/// A SHA-256 (lowercase hex) and the length of the bytes it was taken over.
pub type DigestAndLen = (String, usize);

/// Canonical bytes of `value` and, when it is an object whose `list` member is
/// an array, the SHA-256 (hex) and length of each element's canonical bytes
/// without its `skip` member: exactly what [`to_vec_without_key`] and
/// [`sha256_hex`] give element by element, taken from the one serialization
/// (the member and one neighbouring comma are left out of the hash).
pub fn to_vec_with_element_digests(
    value: &Value,
    list: &str,
    skip: &str,
) -> Result<(Vec<u8>, Vec<DigestAndLen>), CanonicalError> {
    let mut out = Vec::with_capacity(4096);
    let mut digests = Vec::new();
    let skip_key_len = {
        let mut key = Vec::new();
        write_string(skip, &mut key);
        key.len() + 1
    };
    let Value::Object(map) = value else {
        write(value, &mut out)?;
        return Ok((out, digests));
    };
    write_members(map, &mut out, |k, v, out| {
        let Value::Array(items) = v else {
            return write(v, out);
        };
        if k != list {
            return write(v, out);
        }
        out.push(b'[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let start = out.len();
            let mut member: Option<(usize, usize)> = None;
            match item {
                Value::Object(fields) => write_members(fields, out, |k, v, out| {
                    let value_start = out.len();
                    write(v, out)?;
                    if k == skip {
                        // The member starts with its key and colon, just before its value.
                        member = Some((value_start - skip_key_len, out.len()));
                    }
                    Ok(())
                })?,
                other => write(other, out)?,
            }
            let end = out.len();
            let mut hasher = Sha256::new();
            let len = match member {
                Some((member_start, value_end)) => {
                    // Leave out the member and the comma that joins it to a neighbour.
                    let (cut_start, cut_end) = if out[member_start - 1] == b',' {
                        (member_start - 1, value_end)
                    } else if out[value_end] == b',' {
                        (member_start, value_end + 1)
                    } else {
                        (member_start, value_end)
                    };
                    hasher.update(&out[start..cut_start]);
                    hasher.update(&out[cut_end..end]);
                    (end - start) - (cut_end - cut_start)
                }
                None => {
                    hasher.update(&out[start..end]);
                    end - start
                }
            };
            digests.push((lower_hex(&hasher.finalize()), len));
        }
        out.push(b']');
        Ok(())
    })?;
    Ok((out, digests))
}

/// Order two strings by their UTF-16 code units (JavaScript's default string order).
pub fn cmp_utf16(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

fn write_number(n: &serde_json::Number, out: &mut Vec<u8>) -> Result<(), CanonicalError> {
    if let Some(i) = n.as_i64() {
        if i.abs() <= MAX_SAFE_INTEGER {
            out.extend_from_slice(i.to_string().as_bytes());
            return Ok(());
        }
    } else if let Some(f) = n.as_f64() {
        // Only an integral float in the safe range has a canonical form (`-0.0` is `0`).
        if f.is_finite() && f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64 {
            let i = f as i64;
            out.extend_from_slice(i.to_string().as_bytes());
            return Ok(());
        }
    }
    Err(CanonicalError::NonCanonicalNumber(n.to_string()))
}

/// Write `s` as a JSON string the way `JSON.stringify` does.
pub fn write_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let mut rest = s.as_bytes();
    // Plain runs are copied whole; only the byte that ends one is escaped.
    loop {
        let n = super::scan::plain_run(rest);
        out.extend_from_slice(&rest[..n]);
        let Some((&b, tail)) = rest[n..].split_first() else {
            break;
        };
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0C => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => {
                // Any other control character (plain_run stops only at these).
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xF)]);
            }
        }
        rest = tail;
    }
    out.push(b'"');
}

/// Canonical bytes of an object with one key left out (the observation digest's
/// material is the observation without `observationSha256`). Non-objects are
/// written whole.
pub fn to_vec_without_key(value: &Value, skip: &str) -> Result<Vec<u8>, CanonicalError> {
    match value {
        Value::Object(map) if map.contains_key(skip) => {
            let mut entries: Vec<(&String, &Value)> =
                map.iter().filter(|(k, _)| k.as_str() != skip).collect();
            entries.sort_by(|a, b| cmp_utf16(a.0, b.0));
            let mut out = Vec::with_capacity(512);
            out.push(b'{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(k, &mut out);
                out.push(b':');
                write(v, &mut out)?;
            }
            out.push(b'}');
            Ok(out)
        }
        other => to_vec(other),
    }
}

/// Lowercase hex SHA-256 of raw bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    lower_hex(&Sha256::digest(bytes))
}

/// Lowercase hex of bytes (what `hex::encode` gives, without its per-character
/// iterator: a bundle check writes a few dozen digests).
pub fn lower_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 0xF)]);
    }
    // Only ASCII digits and letters were written.
    String::from_utf8(out).unwrap_or_default()
}

/// `sha256(x)` of the standard: the digest of the canonical bytes of `value`
/// (or of a string's own UTF-8 bytes when `value` is a string, as the reference does).
pub fn digest(value: &Value) -> Result<String, CanonicalError> {
    match value {
        Value::String(s) => Ok(sha256_hex(s.as_bytes())),
        other => Ok(sha256_hex(&to_vec(other)?)),
    }
}

/// Digest and canonical byte length of a value, computed from one serialization.
pub fn digest_and_len(value: &Value) -> Result<(String, usize), CanonicalError> {
    let bytes = to_vec(value)?;
    Ok((sha256_hex(&bytes), bytes.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canon(v: &Value) -> String {
        String::from_utf8(to_vec(v).unwrap()).unwrap()
    }

    #[test]
    fn lower_hex_is_hex_encode() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(lower_hex(&all), hex::encode(&all));
        assert_eq!(lower_hex(&[]), "");
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn orders_keys_by_utf16_units() {
        // U+FF61 sorts after U+1F600 in UTF-16 (0xD83D < 0xFF61) but before it by code point.
        let v = json!({"\u{ff61}": 1, "\u{1f600}": 2, "a": 3, "B": 4});
        assert_eq!(canon(&v), "{\"B\":4,\"a\":3,\"😀\":2,\"｡\":1}");
    }

    #[test]
    fn escapes_like_json_stringify() {
        let v = json!("q\"b\\/\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}\u{2028}é");
        assert_eq!(
            canon(&v),
            "\"q\\\"b\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\u{7f}\u{2028}é\""
        );
    }

    #[test]
    fn numbers_are_safe_integers_only() {
        assert_eq!(
            canon(&json!([0, -1, 9007199254740991i64])),
            "[0,-1,9007199254740991]"
        );
        assert!(to_vec(&json!(9007199254740992i64)).is_err());
        assert!(to_vec(&json!(1.5)).is_err());
        assert_eq!(canon(&json!(-0.0)), "0");
        assert_eq!(canon(&json!(2.0)), "2");
    }

    #[test]
    fn element_digests_equal_the_per_element_serialization() {
        let doc = json!({
            "a": 1,
            "obs": [
                {"observationSha256": "x", "z": [1, {"k": "\u{ff61}"}], "b": true},
                {"observationSha256": "only"},
                {"a": 1, "observationSha256": "mid", "zz": null},
                {"a": 1, "observationSha256": "last"},
                {"\u{ff61}": 1, "\u{1f600}": 2, "observationSha256": "resorted"},
                {"no": "key"},
                {},
                "scalar",
                [1, 2]
            ],
            "z": {"obs": [{"observationSha256": "nested, not listed"}]}
        });
        let (bytes, digests) =
            to_vec_with_element_digests(&doc, "obs", "observationSha256").unwrap();
        assert_eq!(bytes, to_vec(&doc).unwrap());
        let items = doc["obs"].as_array().unwrap();
        assert_eq!(digests.len(), items.len());
        for (item, (digest, len)) in items.iter().zip(&digests) {
            let alone = to_vec_without_key(item, "observationSha256").unwrap();
            assert_eq!((digest, *len), (&sha256_hex(&alone), alone.len()), "{item}");
        }
        let (_, none) = to_vec_with_element_digests(&json!({"obs": 1}), "obs", "k").unwrap();
        assert!(none.is_empty());
        let (scalar, none) = to_vec_with_element_digests(&json!("s"), "obs", "k").unwrap();
        assert_eq!((scalar, none.len()), (b"\"s\"".to_vec(), 0));
        assert!(to_vec_with_element_digests(&json!({"obs": [{"k": 0.5}]}), "obs", "k").is_err());
    }

    #[test]
    fn string_digest_is_of_utf8_bytes() {
        // The reference validator identity: sha256("mcp-res-black-box-validator@0.2.0-pr1\n").
        assert_eq!(
            digest(&json!("mcp-res-black-box-validator@0.2.0-pr1\n")).unwrap(),
            "3f83b73d41c98d953fbfe14992557d12fda170edbcdc9924ce46020a0e4a0094"
        );
    }
}
