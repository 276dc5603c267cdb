//! `mcp-res-json-utf16-v1`: the one canonical form every MCP-RES digest is taken over.
//!
//! No insignificant whitespace; object keys ordered by their UTF-16 code units;
//! arrays in order; strings escaped as JavaScript's `JSON.stringify` does;
//! numbers only safe integers in plain decimal.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::layout::{Layout, MAX_SAFE_INTEGER};

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
            let member = member.map(|(from, to)| from - start..to - start);
            digests.push(digest_without_member(&out[start..], member));
        }
        out.push(b']');
        Ok(())
    })?;
    Ok((out, digests))
}

/// The digest and length of the canonical bytes of an object, `object`, with
/// the member at `member` (`"key":value`, relative to `object`) left out
/// together with the comma that joins it to a neighbour (the one before it,
/// else the one after); the whole object when `member` is `None`.
fn digest_without_member(object: &[u8], member: Option<std::ops::Range<usize>>) -> DigestAndLen {
    let Some(m) = member else {
        return (sha256_hex(object), object.len());
    };
    let mut hasher = Sha256::new();
    let cut = if object[m.start - 1] == b',' {
        m.start - 1..m.end
    } else if object[m.end] == b',' {
        m.start..m.end + 1
    } else {
        m
    };
    hasher.update(&object[..cut.start]);
    hasher.update(&object[cut.end..]);
    (lower_hex(&hasher.finalize()), object.len() - cut.len())
}

/// What [`to_vec_with_element_digests`] gives for the value at `index`, as a
/// digest of its canonical bytes instead of the bytes, taken from the bytes
/// of the document it was read from when they are canonical (`layout` is
/// their [`Layout`]): nothing is written again. `list` and `skip` must be
/// names that need no escape.
pub fn element_digests_in_place(
    bytes: &[u8],
    layout: &Layout,
    index: usize,
    list: &str,
    skip: &str,
) -> (DigestAndLen, Vec<DigestAndLen>) {
    let whole = &bytes[layout.span(index)];
    let mut digests = Vec::new();
    let items = layout
        .member(bytes, index, list)
        .filter(|&i| bytes[layout.span(i).start] == b'[');
    for item in items.into_iter().flat_map(|i| layout.children(i)) {
        let span = layout.span(item);
        let member = (bytes[span.start] == b'{')
            .then(|| layout.member(bytes, item, skip))
            .flatten()
            .and_then(|m| layout.member_span(m));
        let member = member.map(|m| m.start - span.start..m.end - span.start);
        digests.push(digest_without_member(&bytes[span], member));
    }
    ((sha256_hex(whole), whole.len()), digests)
}

/// Order two strings by their UTF-16 code units (JavaScript's default string order).
pub fn cmp_utf16(a: &str, b: &str) -> std::cmp::Ordering {
    byte_and_utf16_order(a, b).1
}

/// The byte order (code point order) and the UTF-16 order of two strings, from
/// one pass over their bytes.
#[inline]
pub fn byte_and_utf16_order(a: &str, b: &str) -> (std::cmp::Ordering, std::cmp::Ordering) {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    for (p, q) in x.iter().zip(y) {
        if p != q {
            let by_bytes = p.cmp(q);
            // UTF-8 bytes order strings by code point, and so does UTF-16
            // except that a supplementary character (a surrogate pair,
            // 0xD800..) sorts before U+E000..U+FFFF. Where the first differing
            // bytes are both below 0xEE, neither character is one of those, or
            // both share a lead byte (then both are in the same range): byte
            // order is the answer.
            if *p < 0xEE && *q < 0xEE {
                return (by_bytes, by_bytes);
            }
            return (by_bytes, cmp_utf16_units(a, b));
        }
    }
    let by_length = x.len().cmp(&y.len());
    (by_length, by_length)
}

/// UTF-16 order unit by unit: rare (names with characters from U+E000 up),
/// kept out of line so the common case stays small where it is inlined.
#[cold]
#[inline(never)]
fn cmp_utf16_units(a: &str, b: &str) -> std::cmp::Ordering {
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
    fn utf16_order_agrees_with_code_units() {
        let words = [
            "",
            "a",
            "ab",
            "b",
            "\u{7f}",
            "\u{80}",
            "\u{7ff}",
            "\u{800}",
            "\u{d7ff}",
            "\u{e000}",
            "\u{efff}",
            "\u{f000}",
            "\u{ff61}",
            "\u{ffff}",
            "\u{10000}",
            "\u{1f600}",
            "\u{10ffff}",
            "a\u{ff61}",
            "a\u{1f600}",
            "\u{e9}x",
            "\u{ea}",
        ];
        for a in words {
            for b in words {
                assert_eq!(
                    cmp_utf16(a, b),
                    a.encode_utf16().cmp(b.encode_utf16()),
                    "{a:?} {b:?}"
                );
                assert_eq!(
                    byte_and_utf16_order(a, b),
                    (a.cmp(b), a.encode_utf16().cmp(b.encode_utf16())),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn utf16_order_agrees_on_any_strings(a in "\\PC{0,6}", b in "\\PC{0,6}") {
            proptest::prop_assert_eq!(cmp_utf16(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
            proptest::prop_assert_eq!(byte_and_utf16_order(&a, &b).0, a.cmp(&b));
        }
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

        // In place, over the canonical bytes of the document and of one nested in another.
        let outer = json!({"before": [1, "x"], "doc": doc.clone(), "z": null});
        for (whole, path) in [(&doc, &[][..]), (&outer, &["doc"][..])] {
            let written = to_vec(whole).unwrap();
            let (_, layout) =
                crate::json::reader::parse_with_layout(&written, &Default::default()).unwrap();
            let layout = layout.unwrap();
            let at = layout.at(&written, path).unwrap();
            let (own, each) =
                element_digests_in_place(&written, &layout, at, "obs", "observationSha256");
            assert_eq!(own, (sha256_hex(&bytes), bytes.len()));
            assert_eq!(each, digests);
        }
        for other in [
            json!({"obs": 1}),
            json!("s"),
            json!({"obs": []}),
            json!([{"obs": [{}]}]),
        ] {
            let written = to_vec(&other).unwrap();
            let (_, layout) =
                crate::json::reader::parse_with_layout(&written, &Default::default()).unwrap();
            let (own, each) =
                element_digests_in_place(&written, &layout.unwrap(), Layout::ROOT, "obs", "k");
            assert_eq!(own, (sha256_hex(&written), written.len()));
            assert!(each.is_empty());
        }
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
