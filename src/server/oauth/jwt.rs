//! Access tokens of the loopback authorization fixture: compact JWS (RFC 7515)
//! signed with Ed25519 (`alg: EdDSA`, RFC 8037), `typ: at+jwt` (RFC 9068), and
//! their verification against a JWK Set.
//!
//! Nothing here needs an async runtime. Errors never carry token bytes.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier as _, VerifyingKey};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// The only `alg` accepted and produced.
pub const ALG: &str = "EdDSA";
/// The only `typ` accepted and produced (RFC 9068 section 2.1).
pub const TYP: &str = "at+jwt";

/// The claims of an access token. `aud` is the single resource (RFC 8707)
/// the token was issued for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub sub: String,
    pub aud: String,
    pub client_id: String,
    pub scope: String,
    pub iat: u64,
    pub exp: u64,
    pub jti: String,
}

/// Why an access token was refused, one variant per reason. Checks run in
/// this order: structure, header, key, signature, issuer, audience, expiry;
/// so a malformed token is never reported as a wrong audience.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not three base64url segments of JSON objects with the expected claim types.
    #[error("malformed access token: {0}")]
    Malformed(&'static str),
    /// `alg` is not `EdDSA` or `typ` is not `at+jwt`.
    #[error("unsupported access token header: {0}")]
    UnsupportedHeader(&'static str),
    /// No key in the set has the token's `kid`.
    #[error("no verification key for the access token's key id")]
    UnknownKey,
    /// The Ed25519 signature does not verify.
    #[error("access token signature does not verify")]
    BadSignature,
    /// `iss` differs from the expected issuer.
    #[error("access token issued by another issuer")]
    WrongIssuer,
    /// `aud` differs from the expected audience (this resource).
    #[error("access token issued for another audience")]
    WrongAudience,
    /// `exp` is at or before `now`.
    #[error("access token expired")]
    Expired,
}

/// A JWK Set parse failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwksError {
    #[error("JWK Set is not an object with a `keys` array")]
    NotASet,
    #[error("JWK {index}: {reason}")]
    BadKey { index: usize, reason: &'static str },
}

/// One Ed25519 public key with its key id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicJwk {
    pub kid: String,
    pub key: VerifyingKey,
}

impl PublicJwk {
    /// The JWK (RFC 8037 `OKP` / `Ed25519`) as served at `jwks_uri`.
    pub fn to_json(&self) -> Value {
        json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "x": URL_SAFE_NO_PAD.encode(self.key.as_bytes()),
            "kid": self.kid,
            "alg": ALG,
            "use": "sig",
        })
    }
}

/// The verification keys a resource server trusts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JwkSet {
    pub keys: Vec<PublicJwk>,
}

impl JwkSet {
    /// A set holding one key, its `kid` the RFC 7638 thumbprint.
    pub fn from_key(key: VerifyingKey) -> Self {
        JwkSet {
            keys: vec![PublicJwk {
                kid: thumbprint(&key),
                key,
            }],
        }
    }

    /// Parses a JWK Set document (`{"keys": [...]}`). Keys that are not
    /// `OKP`/`Ed25519` signature keys are skipped; a malformed Ed25519 key
    /// or a missing `kid` is an error.
    pub fn from_json(doc: &Value) -> Result<Self, JwksError> {
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or(JwksError::NotASet)?;
        let mut out = Vec::new();
        for (index, k) in keys.iter().enumerate() {
            if let Some(jwk) = ed25519_jwk(k) {
                out.push(jwk.map_err(|reason| JwksError::BadKey { index, reason })?);
            }
        }
        Ok(JwkSet { keys: out })
    }

    /// The JWK Set document.
    pub fn to_json(&self) -> Value {
        json!({ "keys": self.keys.iter().map(PublicJwk::to_json).collect::<Vec<_>>() })
    }
}

/// One member of a JWK Set read as an Ed25519 signature key: `None` when it
/// is not one (another `kty` or `crv`, or a `use` other than `sig`), else the
/// key, or the first reason it is malformed (no or a bad `x`, no `kid`).
/// Shared by [`JwkSet::from_json`], which refuses a malformed key, and the
/// protected resource's key discovery, which skips it.
pub(crate) fn ed25519_jwk(k: &Value) -> Option<Result<PublicJwk, &'static str>> {
    let s = |name: &str| k.get(name).and_then(Value::as_str);
    if s("kty") != Some("OKP")
        || s("crv") != Some("Ed25519")
        || s("use").is_some_and(|u| u != "sig")
    {
        return None;
    }
    let parse = || {
        let x = s("x").ok_or("no `x` member")?;
        let arr: [u8; 32] = base64url_array(x, "`x` is not base64url", "`x` is not 32 bytes")?;
        let key = VerifyingKey::from_bytes(&arr).map_err(|_| "`x` is not an Ed25519 point")?;
        let kid = s("kid").ok_or("no `kid` member")?.to_string();
        Ok(PublicJwk { kid, key })
    };
    Some(parse())
}

/// `text` decoded from unpadded base64url into exactly `N` bytes; else
/// `not_base64url` or `wrong_length`.
fn base64url_array<const N: usize>(
    text: &str,
    not_base64url: &'static str,
    wrong_length: &'static str,
) -> Result<[u8; N], &'static str> {
    let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| not_base64url)?;
    bytes.as_slice().try_into().map_err(|_| wrong_length)
}

/// RFC 7638 JWK thumbprint (SHA-256, base64url) of an Ed25519 public key.
pub fn thumbprint(key: &VerifyingKey) -> String {
    let canonical = format!(
        r#"{{"crv":"Ed25519","kty":"OKP","x":"{}"}}"#,
        URL_SAFE_NO_PAD.encode(key.as_bytes())
    );
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

/// A token signer: one Ed25519 key (zeroized on drop) and its key id.
pub struct TokenSigner {
    key: SigningKey,
    kid: String,
}

impl std::fmt::Debug for TokenSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSigner")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl TokenSigner {
    /// A fresh key from the OS random source.
    pub fn generate() -> Self {
        let mut seed = zeroize::Zeroizing::new([0u8; 32]);
        getrandom::fill(&mut seed[..]).expect("the OS random source works");
        let key = SigningKey::from_bytes(&seed);
        let kid = thumbprint(&key.verifying_key());
        TokenSigner { key, kid }
    }

    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public half as a one-key set.
    pub fn jwks(&self) -> JwkSet {
        JwkSet::from_key(self.key.verifying_key())
    }

    /// Signs `claims` as a compact JWS with header `{alg, typ, kid}`.
    pub fn sign(&self, claims: &Claims) -> String {
        let header = json!({ "alg": ALG, "typ": TYP, "kid": self.kid });
        let payload = serde_json::to_vec(claims).expect("claims serialize");
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string().as_bytes()),
            URL_SAFE_NO_PAD.encode(&payload)
        );
        let sig = self.key.sign(signing_input.as_bytes());
        format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(sig.to_bytes()))
    }
}

fn decode_object(segment: &str) -> Option<Map<String, Value>> {
    let bytes = URL_SAFE_NO_PAD.decode(segment).ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// The `aud` claim of a token, read WITHOUT verifying it (the fixture's
/// introspection endpoint then verifies the token for that audience).
pub(crate) fn unverified_audience(token: &str) -> Option<String> {
    let payload = decode_object(token.split('.').nth(1)?)?;
    payload.get("aud").and_then(Value::as_str).map(String::from)
}

/// A compact JWS taken apart, nothing about it checked yet.
pub(crate) struct Compact<'a> {
    pub header: Map<String, Value>,
    pub payload: Map<String, Value>,
    pub signature: Signature,
    /// The first two segments as sent: what the signature covers.
    pub signing_input: &'a str,
}

/// Splits `token` into a JSON header, a JSON payload and a 64-byte
/// signature, or says what is malformed first (segments, header, payload,
/// signature).
pub(crate) fn split_compact(token: &str) -> Result<Compact<'_>, &'static str> {
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("not three dot-separated segments");
    };
    let header = decode_object(h).ok_or("header is not a base64url JSON object")?;
    let payload = decode_object(p).ok_or("payload is not a base64url JSON object")?;
    let sig_arr: [u8; 64] =
        base64url_array(s, "signature is not base64url", "signature is not 64 bytes")?;
    Ok(Compact {
        header,
        payload,
        signature: Signature::from_bytes(&sig_arr),
        signing_input: &token[..h.len() + 1 + p.len()],
    })
}

/// Is `typ` the access-token type of RFC 9068 (`at+jwt`, or its full media
/// type), compared without regard to case?
pub(crate) fn is_access_token_type(typ: &str) -> bool {
    typ.eq_ignore_ascii_case(TYP) || typ.eq_ignore_ascii_case("application/at+jwt")
}

/// Verifies an access token for a resource server whose resource identifier
/// is `audience`, trusting `keys` for tokens from `issuer`. `now` is seconds
/// since the Unix epoch. Returns the claims, or the first failed check (see
/// [`TokenError`] for the order).
pub fn verify_access_token(
    token: &str,
    keys: &JwkSet,
    issuer: &str,
    audience: &str,
    now: u64,
) -> Result<Claims, TokenError> {
    let Compact {
        header,
        payload,
        signature,
        signing_input,
    } = split_compact(token).map_err(TokenError::Malformed)?;
    let claims: Claims = serde_json::from_value(Value::Object(payload))
        .map_err(|_| TokenError::Malformed("claims missing or of the wrong type"))?;

    if header.get("alg").and_then(Value::as_str) != Some(ALG) {
        return Err(TokenError::UnsupportedHeader("alg is not EdDSA"));
    }
    let typ = header.get("typ").and_then(Value::as_str);
    if !typ.is_some_and(is_access_token_type) {
        return Err(TokenError::UnsupportedHeader("typ is not at+jwt"));
    }
    let kid = header
        .get("kid")
        .and_then(Value::as_str)
        .ok_or(TokenError::UnsupportedHeader("no kid"))?;
    let jwk = keys
        .keys
        .iter()
        .find(|k| k.kid == kid)
        .ok_or(TokenError::UnknownKey)?;
    jwk.key
        .verify(signing_input.as_bytes(), &signature)
        .map_err(|_| TokenError::BadSignature)?;
    if claims.iss != issuer {
        return Err(TokenError::WrongIssuer);
    }
    if claims.aud != audience {
        return Err(TokenError::WrongAudience);
    }
    if claims.exp <= now {
        return Err(TokenError::Expired);
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> Claims {
        Claims {
            iss: "http://127.0.0.1:1".into(),
            sub: "s".into(),
            aud: "http://127.0.0.1:2/mcp".into(),
            client_id: "http://127.0.0.1:1/cimd/c".into(),
            scope: "mcp".into(),
            iat: 100,
            exp: 400,
            jti: "j".into(),
        }
    }

    #[test]
    fn a_jwk_set_skips_other_keys_and_refuses_a_malformed_ed25519_one() {
        let s = TokenSigner::generate();
        let good = s.jwks().to_json()["keys"][0].clone();
        let mut enc = good.clone();
        enc["use"] = json!("enc");
        let rsa = json!({"kty": "RSA", "n": "AQAB", "e": "AQAB", "kid": "r"});
        let set = JwkSet::from_json(&json!({"keys": [rsa, enc, good.clone()]})).unwrap();
        assert_eq!(set.keys.len(), 1);
        assert_eq!(set.keys[0].kid, s.kid());
        for (member, value, reason) in [
            ("x", json!("AAAA"), "`x` is not 32 bytes"),
            ("x", json!("!!"), "`x` is not base64url"),
            ("kid", Value::Null, "no `kid` member"),
        ] {
            let mut bad = good.clone();
            bad[member] = value;
            assert_eq!(
                JwkSet::from_json(&json!({"keys": [good.clone(), bad]})),
                Err(JwksError::BadKey { index: 1, reason })
            );
        }
        assert_eq!(
            JwkSet::from_json(&json!({"nokeys": []})),
            Err(JwksError::NotASet)
        );
    }

    #[test]
    fn each_reason_is_typed() {
        let s = TokenSigner::generate();
        let jwks = JwkSet::from_json(&s.jwks().to_json()).unwrap();
        let t = s.sign(&claims());
        let (iss, aud) = ("http://127.0.0.1:1", "http://127.0.0.1:2/mcp");
        assert_eq!(
            verify_access_token(&t, &jwks, iss, aud, 399).unwrap(),
            claims()
        );
        assert_eq!(
            verify_access_token(&t, &jwks, iss, aud, 400),
            Err(TokenError::Expired)
        );
        assert_eq!(
            verify_access_token(&t, &jwks, iss, "http://127.0.0.1:3/mcp", 0),
            Err(TokenError::WrongAudience)
        );
        assert_eq!(
            verify_access_token(&t, &jwks, "http://127.0.0.1:9", aud, 0),
            Err(TokenError::WrongIssuer)
        );
        let other = TokenSigner::generate().jwks();
        assert_eq!(
            verify_access_token(&t, &other, iss, aud, 0),
            Err(TokenError::UnknownKey)
        );
        // Same kid, other key: the signature fails.
        let mut forged = other.clone();
        forged.keys[0].kid = s.kid().to_string();
        assert_eq!(
            verify_access_token(&t, &forged, iss, aud, 0),
            Err(TokenError::BadSignature)
        );
        // A tampered payload with the original signature.
        let mut c = claims();
        c.aud = "http://127.0.0.1:3/mcp".into();
        let t2 = s.sign(&c);
        let mixed = format!(
            "{}.{}.{}",
            t.split('.').next().unwrap(),
            t2.split('.').nth(1).unwrap(),
            t.split('.').nth(2).unwrap()
        );
        assert_eq!(
            verify_access_token(&mixed, &jwks, iss, aud, 0),
            Err(TokenError::BadSignature)
        );
        assert!(matches!(
            verify_access_token("abc.def", &jwks, iss, aud, 0),
            Err(TokenError::Malformed(_))
        ));
        assert!(matches!(
            verify_access_token(&format!("{t}x"), &jwks, iss, aud, 0),
            Err(TokenError::Malformed(_))
        ));
    }
}
