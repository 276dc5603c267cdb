//! Access-token verification for the protected resource: a JWT signed with
//! Ed25519 (`alg` `EdDSA`, `typ` `at+jwt`, RFC 9068) checked against the keys
//! of the authorization server's JWKS.
//!
//! The checks run in a fixed order, so that a refusal names the first
//! property the token breaks: syntax (three base64url segments, JSON header
//! and claims, the required members), algorithm and type, key, signature,
//! issuer, audience, expiry, not-before. A token that fails on syntax is
//! refused as `malformed-token` and never reaches a property check.
//!
//! Nothing here keeps, prints or returns the token or any part of it: an
//! error names the reason only.
//!
//! The token's structure and the key set are read with the fixture's token
//! module (`server::oauth::jwt`); the checks are this resource's own (an
//! `aud` array, `nbf`, strict signatures, the defect switches).

use serde_json::Value;

use crate::server::oauth::jwt::{self, ALG, Compact, PublicJwk};

/// Longest token considered, in bytes; a longer one is malformed.
pub(crate) const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// Why a token was refused. Each names one property; none carries token
/// material.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenError {
    /// Not a JWT of the expected form (segments, base64url, JSON, required
    /// claims of the right types).
    Malformed,
    /// `alg` other than `EdDSA`, or `typ` other than `at+jwt`.
    UnsupportedAlgorithm,
    /// `kid` names no key of the JWKS.
    UnknownKey,
    /// The signature does not verify under the named key.
    BadSignature,
    /// `iss` is not the configured issuer.
    WrongIssuer,
    /// `aud` does not name this resource.
    WrongAudience,
    /// `exp` is not in the future.
    Expired,
    /// `nbf` is in the future.
    NotYetValid,
}

impl TokenError {
    /// The reason as the refusal reports it (`error_description` and the
    /// JSON-RPC error's `data.reason`).
    pub fn reason(self) -> &'static str {
        match self {
            TokenError::Malformed => "malformed-token",
            TokenError::UnsupportedAlgorithm => "unsupported-algorithm",
            TokenError::UnknownKey => "unknown-key",
            TokenError::BadSignature => "bad-signature",
            TokenError::WrongIssuer => "wrong-issuer",
            TokenError::WrongAudience => "wrong-audience",
            TokenError::Expired => "expired",
            TokenError::NotYetValid => "not-yet-valid",
        }
    }
}

/// What a token must show to be accepted.
pub(crate) struct Expectations<'a> {
    pub issuer: &'a str,
    pub audience: &'a str,
    /// Seconds since the Unix epoch.
    pub now: u64,
    /// Checks switched off by `--auth-defect`.
    pub skip_signature: bool,
    pub skip_audience: bool,
    pub skip_expiry: bool,
    pub skip_issuer: bool,
}

/// The claims the resource uses once a token is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Accepted {
    /// The granted scopes (`scope`, space-separated), in token order.
    pub scopes: Vec<String>,
}

/// A NumericDate claim: a non-negative JSON number, whole seconds taken.
fn numeric_date(v: &Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    v.as_f64()
        .filter(|f| f.is_finite() && *f >= 0.0)
        .map(|f| f as u64)
}

/// Verify `token` against `keys` and `expect`.
pub(crate) fn verify_access_token(
    token: &str,
    keys: &[PublicJwk],
    expect: &Expectations<'_>,
) -> Result<Accepted, TokenError> {
    if token.is_empty() || token.len() > MAX_TOKEN_BYTES {
        return Err(TokenError::Malformed);
    }
    let Compact {
        header,
        payload: claims,
        signature,
        signing_input,
    } = jwt::split_compact(token).map_err(|_| TokenError::Malformed)?;
    // Required members and their types, before any property is judged.
    let alg = header.get("alg").and_then(Value::as_str);
    let kid = header.get("kid").and_then(Value::as_str);
    let typ = header.get("typ").and_then(Value::as_str);
    let iss = claims.get("iss").and_then(Value::as_str);
    let aud = claims.get("aud");
    let exp = claims.get("exp").and_then(numeric_date);
    let nbf = match claims.get("nbf") {
        None => None,
        Some(v) => Some(numeric_date(v).ok_or(TokenError::Malformed)?),
    };
    let scope = match claims.get("scope") {
        None => "",
        Some(v) => v.as_str().ok_or(TokenError::Malformed)?,
    };
    let (Some(alg), Some(kid), Some(typ), Some(iss), Some(aud), Some(exp)) =
        (alg, kid, typ, iss, aud, exp)
    else {
        return Err(TokenError::Malformed);
    };
    let audiences: Vec<&str> = match aud {
        Value::String(a) => vec![a.as_str()],
        Value::Array(items) => items
            .iter()
            .map(Value::as_str)
            .collect::<Option<Vec<&str>>>()
            .ok_or(TokenError::Malformed)?,
        _ => return Err(TokenError::Malformed),
    };
    if alg != ALG || !jwt::is_access_token_type(typ) {
        return Err(TokenError::UnsupportedAlgorithm);
    }
    if !expect.skip_signature {
        let key = keys
            .iter()
            .find(|k| k.kid == kid)
            .ok_or(TokenError::UnknownKey)?;
        key.key
            .verify_strict(signing_input.as_bytes(), &signature)
            .map_err(|_| TokenError::BadSignature)?;
    }
    if !expect.skip_issuer && iss != expect.issuer {
        return Err(TokenError::WrongIssuer);
    }
    if !expect.skip_audience && !audiences.contains(&expect.audience) {
        return Err(TokenError::WrongAudience);
    }
    if !expect.skip_expiry && exp <= expect.now {
        return Err(TokenError::Expired);
    }
    if nbf.is_some_and(|nbf| nbf > expect.now) {
        return Err(TokenError::NotYetValid);
    }
    Ok(Accepted {
        scopes: scope
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
    })
}

/// The Ed25519 keys of a JWKS document (`{"keys": [...]}`): each `OKP` key
/// on `Ed25519` with a `kid` and a 32-byte `x`; a key that names another
/// `alg` than `EdDSA` or another `use` than `sig` is left out. Other keys
/// are ignored; `None` when the document is not a JWKS.
pub(crate) fn ed25519_keys(jwks: &Value) -> Option<Vec<PublicJwk>> {
    let keys = jwks.get("keys")?.as_array()?;
    let declares_other_alg = |k: &Value| {
        k.get("alg")
            .and_then(Value::as_str)
            .is_some_and(|a| a != ALG)
    };
    Some(
        keys.iter()
            .filter(|k| !declares_other_alg(k))
            .filter_map(|k| jwt::ed25519_jwk(k)?.ok())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use ed25519_dalek::{Signer, SigningKey};
    use serde_json::json;

    const ISS: &str = "http://127.0.0.1:9";
    const AUD: &str = "http://127.0.0.1:10/mcp";

    fn b64(v: &Value) -> String {
        URL_SAFE_NO_PAD.encode(v.to_string())
    }

    fn sign(key: &SigningKey, header: &Value, claims: &Value) -> String {
        let input = format!("{}.{}", b64(header), b64(claims));
        let sig = key.sign(input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.to_bytes()))
    }

    fn header() -> Value {
        json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1"})
    }

    fn claims() -> Value {
        json!({"iss": ISS, "sub": "s", "aud": AUD, "client_id": "c", "scope": "mcp:tools extra",
               "iat": 1000, "exp": 2000, "jti": "j"})
    }

    fn expect() -> Expectations<'static> {
        Expectations {
            issuer: ISS,
            audience: AUD,
            now: 1500,
            skip_signature: false,
            skip_audience: false,
            skip_expiry: false,
            skip_issuer: false,
        }
    }

    fn setup() -> (SigningKey, Vec<PublicJwk>) {
        let sk = SigningKey::from_bytes(&[7; 32]);
        let keys = vec![PublicJwk {
            kid: "k1".into(),
            key: sk.verifying_key(),
        }];
        (sk, keys)
    }

    #[test]
    fn a_good_token_is_accepted_with_its_scopes() {
        let (sk, keys) = setup();
        let t = sign(&sk, &header(), &claims());
        let ok = verify_access_token(&t, &keys, &expect()).unwrap();
        assert_eq!(ok.scopes, ["mcp:tools", "extra"]);
        let mut c = claims();
        c["aud"] = json!(["other", AUD]);
        assert!(verify_access_token(&sign(&sk, &header(), &c), &keys, &expect()).is_ok());
    }

    #[test]
    fn each_property_is_refused_for_its_own_reason() {
        let (sk, keys) = setup();
        let with = |f: &dyn Fn(&mut Value, &mut Value)| {
            let (mut h, mut c) = (header(), claims());
            f(&mut h, &mut c);
            verify_access_token(&sign(&sk, &h, &c), &keys, &expect())
        };
        assert_eq!(
            with(&|_, c| c["aud"] = json!("http://127.0.0.1:11/mcp")),
            Err(TokenError::WrongAudience)
        );
        assert_eq!(
            with(&|_, c| c["iss"] = json!("http://127.0.0.1:8")),
            Err(TokenError::WrongIssuer)
        );
        assert_eq!(
            with(&|_, c| c["exp"] = json!(1500)),
            Err(TokenError::Expired)
        );
        assert_eq!(
            with(&|_, c| c["nbf"] = json!(1600)),
            Err(TokenError::NotYetValid)
        );
        assert_eq!(
            with(&|h, _| h["kid"] = json!("k2")),
            Err(TokenError::UnknownKey)
        );
        assert_eq!(
            with(&|h, _| h["alg"] = json!("none")),
            Err(TokenError::UnsupportedAlgorithm)
        );
        assert_eq!(
            with(&|h, _| h["typ"] = json!("JWT")),
            Err(TokenError::UnsupportedAlgorithm)
        );
        assert_eq!(
            with(&|_, c| c["aud"] = json!(5)),
            Err(TokenError::Malformed)
        );
        assert_eq!(
            with(&|_, c| {
                c.as_object_mut().unwrap().remove("exp");
            }),
            Err(TokenError::Malformed)
        );
        let other = SigningKey::from_bytes(&[8; 32]);
        let forged = sign(&other, &header(), &claims());
        assert_eq!(
            verify_access_token(&forged, &keys, &expect()),
            Err(TokenError::BadSignature)
        );
        for bad in ["", "a.b", "a.b.c.d", "!!.!!.!!"] {
            assert_eq!(
                verify_access_token(bad, &keys, &expect()),
                Err(TokenError::Malformed)
            );
        }
    }

    #[test]
    fn switched_off_checks_let_exactly_their_property_through() {
        let (sk, keys) = setup();
        let mut c = claims();
        c["aud"] = json!("elsewhere");
        let t = sign(&sk, &header(), &c);
        let e = Expectations {
            skip_audience: true,
            ..expect()
        };
        assert!(verify_access_token(&t, &keys, &e).is_ok());
        let t = sign(&SigningKey::from_bytes(&[8; 32]), &header(), &claims());
        let e = Expectations {
            skip_signature: true,
            ..expect()
        };
        assert!(verify_access_token(&t, &keys, &e).is_ok());
        let e = Expectations {
            skip_expiry: true,
            now: 5000,
            ..expect()
        };
        let t = sign(&sk, &header(), &claims());
        assert!(verify_access_token(&t, &keys, &e).is_ok());
        let mut c = claims();
        c["iss"] = json!("http://127.0.0.1:8");
        let foreign = sign(&sk, &header(), &c);
        assert_eq!(
            verify_access_token(&foreign, &keys, &expect()),
            Err(TokenError::WrongIssuer)
        );
        let skip_issuer = Expectations {
            skip_issuer: true,
            ..expect()
        };
        assert!(verify_access_token(&foreign, &keys, &skip_issuer).is_ok());
        assert_eq!(
            verify_access_token(
                &t,
                &keys,
                &Expectations {
                    now: 5000,
                    ..expect()
                }
            ),
            Err(TokenError::Expired)
        );
    }

    #[test]
    fn jwks_keeps_only_ed25519_signing_keys() {
        let sk = SigningKey::from_bytes(&[7; 32]);
        let x = URL_SAFE_NO_PAD.encode(sk.verifying_key().as_bytes());
        let jwks = json!({"keys": [
            {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "a", "alg": "EdDSA", "use": "sig"},
            {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "b", "use": "enc"},
            {"kty": "RSA", "n": "AQAB", "e": "AQAB", "kid": "c"},
            {"kty": "OKP", "crv": "Ed25519", "x": "AAAA", "kid": "d"}
        ]});
        let keys = ed25519_keys(&jwks).unwrap();
        assert_eq!(
            keys.iter().map(|k| k.kid.as_str()).collect::<Vec<_>>(),
            ["a"]
        );
        assert!(ed25519_keys(&json!({"nokeys": []})).is_none());
    }

    /// Tokens and key sets of the fixture's own format (`server::oauth::jwt`)
    /// verify here, and are refused for the same reasons.
    #[test]
    fn the_fixture_token_format_verifies() {
        use crate::server::oauth::jwt::{Claims, TokenSigner};
        let signer = TokenSigner::generate();
        let keys = ed25519_keys(&signer.jwks().to_json()).unwrap();
        assert_eq!(keys.len(), 1);
        let claims = |aud: &str| Claims {
            iss: ISS.into(),
            sub: "s".into(),
            aud: aud.into(),
            client_id: "c".into(),
            scope: "mcp".into(),
            iat: 1000,
            exp: 2000,
            jti: "j".into(),
        };
        let ok = verify_access_token(&signer.sign(&claims(AUD)), &keys, &expect()).unwrap();
        assert_eq!(ok.scopes, ["mcp"]);
        let other = signer.sign(&claims("http://127.0.0.1:11/mcp"));
        assert_eq!(
            verify_access_token(&other, &keys, &expect()),
            Err(TokenError::WrongAudience)
        );
        let foreign = ed25519_keys(&TokenSigner::generate().jwks().to_json()).unwrap();
        assert_eq!(
            verify_access_token(&signer.sign(&claims(AUD)), &foreign, &expect()),
            Err(TokenError::UnknownKey)
        );
    }
}
