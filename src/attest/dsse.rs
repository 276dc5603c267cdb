//! DSSE v1 primitives: pre-authentication encoding and base64 as the
//! reference validators accept it.

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

/// Standard alphabet, padding required, trailing bits tolerated: exactly the
/// strings the reference validators' pattern accepts, decoded the same way.
const REFERENCE_B64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical)
        .with_decode_allow_trailing_bits(true),
);

/// DSSE pre-authentication encoding:
/// `"DSSEv1" SP len(type) SP type SP len(payload) SP payload`.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let head = format!(
        "DSSEv1 {} {} {} ",
        payload_type.len(),
        payload_type,
        payload.len()
    );
    let mut out = Vec::with_capacity(head.len() + payload.len());
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(payload);
    out
}

/// Decode base64 the way MCP-RES verifiers do: standard alphabet, length a
/// multiple of four, `=` padding only at the end, no whitespace. `None` if
/// the text is not of that form.
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let body = text.trim_end_matches('=');
    if text.len() - body.len() > 2
        || !body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
    {
        return None;
    }
    REFERENCE_B64.decode(text).ok()
}

/// Standard padded base64.
pub fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pae_matches_the_dsse_definition() {
        assert_eq!(pae("t", b"ab"), b"DSSEv1 1 t 2 ab".to_vec());
        assert_eq!(pae("", b""), b"DSSEv1 0  0 ".to_vec());
        // Lengths count bytes, not characters.
        assert_eq!(pae("é", b"x"), "DSSEv1 2 é 1 x".as_bytes().to_vec());
    }

    #[test]
    fn base64_accepts_only_the_reference_form() {
        assert_eq!(decode_base64("").unwrap(), b"");
        assert_eq!(decode_base64("QUJD").unwrap(), b"ABC");
        assert_eq!(decode_base64("QUI=").unwrap(), b"AB");
        assert_eq!(decode_base64("QQ==").unwrap(), b"A");
        // Non-zero trailing bits: accepted by the reference pattern, same bytes.
        assert_eq!(decode_base64("QR==").unwrap(), b"A");
        for bad in [
            "QQ", "QQ=", "QQ===", "Q===", "QU JD", "QUJD\n", "QUJ-", "QUJ_", "=QUJ", "QQ==QQ==",
        ] {
            assert_eq!(decode_base64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn base64_round_trips() {
        for n in 0..70u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(decode_base64(&encode_base64(&bytes)).unwrap(), bytes);
        }
    }
}
