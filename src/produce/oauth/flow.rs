//! The runner as an OAuth client of the in-process fixture: an authorization
//! request with PKCE (S256) and a code redeemed at the token endpoint, on raw
//! loopback connections. Codes, states, verifiers and tokens are remembered
//! for redaction as soon as they exist; the summaries kept as evidence name
//! them only by `fixture::digest`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine as _;
use percent_encoding::{NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{OauthCtx, SCOPE};
use crate::produce::drive::http::{Body, Request};
use crate::produce::profile::web::{Conn, Resp};
use crate::server::oauth::fixture::digest;

const LIMIT: Duration = Duration::from_secs(5);

fn enc(v: &str) -> String {
    utf8_percent_encode(v, NON_ALPHANUMERIC).to_string()
}

fn form(params: &[(&str, &str)]) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={}", enc(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// A fresh PKCE pair (verifier, S256 challenge), both remembered.
pub fn pkce(o: &OauthCtx) -> (String, String) {
    let verifier = crate::produce::drive::ident::random_hex(32);
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(verifier.as_bytes()));
    o.remember(&verifier);
    o.remember(&challenge);
    (verifier, challenge)
}

/// One request to the fixture (`GET path` or `POST path` with a form body).
fn send(o: &OauthCtx, method: &str, path_and_query: &str, body: Option<&str>) -> Option<Resp> {
    send_at(o, o.fixture.issuer(), method, path_and_query, body)
}

/// [`send`] to the authorization server at `base` (a loopback issuer URL).
fn send_at(
    o: &OauthCtx,
    base: &str,
    method: &str,
    path_and_query: &str,
    body: Option<&str>,
) -> Option<Resp> {
    let url = format!("{base}{path_and_query}");
    let addr = o.guarded(&url).ok()?;
    let rec = o.rec();
    let mut conn = Conn::open(&rec, addr).ok()?;
    conn.write(&request(method, path_and_query, addr, body).to_bytes());
    Some(conn.response(LIMIT))
}

/// A request to the fixture at `addr`, closing the connection after its
/// answer; a body is a form.
fn request(method: &str, path_and_query: &str, addr: SocketAddr, body: Option<&str>) -> Request {
    let mut request =
        Request::to(method, path_and_query, &addr.to_string()).header("Connection", "close");
    if let Some(b) = body {
        request.push("Content-Type", "application/x-www-form-urlencoded");
        request.body = Body::Sized(b.as_bytes().to_vec());
    }
    request
}

/// The query parameters of a URL.
fn query(url: &str) -> BTreeMap<String, String> {
    let q = url.split_once('?').map_or("", |(_, q)| q);
    let q = q.split('#').next().unwrap_or("");
    q.split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| {
            (
                k.to_string(),
                percent_decode_str(&v.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned(),
            )
        })
        .collect()
}

/// What an authorization request came back with.
pub struct Authorized {
    /// The code, when the response redirected with one.
    pub code: Option<String>,
    /// The `error` of a redirected refusal.
    pub error: Option<String>,
    /// Credential-free evidence.
    pub summary: Value,
}

/// `GET /authorize` for `resource` with the run's client and a fresh state.
pub fn authorize(o: &OauthCtx, resource: &str, challenge: &str, redirect_uri: &str) -> Authorized {
    let state = crate::produce::drive::ident::random_hex(16);
    o.remember(&state);
    let q = form(&[
        ("response_type", "code"),
        ("client_id", &o.client_id),
        ("redirect_uri", redirect_uri),
        ("state", &state),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("resource", resource),
        ("scope", SCOPE),
    ]);
    let Some(resp) = send(o, "GET", &format!("/authorize?{q}"), None) else {
        return Authorized {
            code: None,
            error: Some("no-answer".into()),
            summary: json!({"authorize": "no answer"}),
        };
    };
    let location = resp.header("location").unwrap_or("").to_string();
    let params = query(&location);
    if let Some(c) = params.get("code") {
        o.remember(c);
    }
    let summary = json!({
        "authorize": {
            "status": resp.status,
            "redirectsTo": location.split('?').next(),
            "code": params.get("code").map(|c| digest(c)),
            "stateEchoed": params.get("state") == Some(&state),
            "iss": params.get("iss"),
            "error": params.get("error"),
        }
    });
    Authorized {
        code: params.get("code").cloned(),
        error: params.get("error").cloned(),
        summary,
    }
}

/// What a token request came back with.
pub struct Redeemed {
    pub status: Option<u16>,
    pub access_token: Option<String>,
    pub refresh_token: Option<String>,
    pub error: Option<String>,
    /// The fixed `error_description` of a refusal.
    pub description: Option<String>,
    /// The access token's `aud` claim (read, not verified: the subject
    /// verifies).
    pub audience: Option<String>,
    /// The `scope` member of a token response (RFC 6749 §5.1: omitted when
    /// it is the scope requested).
    pub scope: Option<String>,
    pub summary: Value,
}

/// `POST /token` with `params` (an authorization-code grant, or a broken one).
pub fn token_request(o: &OauthCtx, params: &[(&str, &str)]) -> Redeemed {
    let Some(resp) = send(o, "POST", "/token", Some(&form(params))) else {
        return Redeemed {
            status: None,
            access_token: None,
            refresh_token: None,
            error: Some("no-answer".into()),
            description: None,
            audience: None,
            scope: None,
            summary: json!({"token": "no answer"}),
        };
    };
    let body: Value = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
    let access = body
        .get("access_token")
        .and_then(Value::as_str)
        .map(str::to_string);
    for k in ["access_token", "refresh_token"] {
        if let Some(t) = body.get(k).and_then(Value::as_str) {
            o.remember(t);
        }
    }
    let audience = access.as_deref().and_then(|t| {
        let claims = t.split('.').nth(1)?;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(claims)
            .ok()?;
        let v: Value = serde_json::from_slice(&bytes).ok()?;
        v.get("aud").and_then(Value::as_str).map(str::to_string)
    });
    let error = body
        .get("error")
        .and_then(Value::as_str)
        .map(str::to_string);
    let description = body
        .get("error_description")
        .and_then(Value::as_str)
        .map(str::to_string);
    let scope = body
        .get("scope")
        .and_then(Value::as_str)
        .map(str::to_string);
    let summary = json!({
        "token": {
            "status": resp.status,
            "sent": params.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            "accessToken": access.as_deref().map(digest),
            "refreshToken": body.get("refresh_token").and_then(Value::as_str).map(digest),
            "audience": audience,
            "error": error,
            "errorDescription": description,
            "scope": scope,
        }
    });
    Redeemed {
        status: resp.status,
        access_token: access,
        refresh_token: body
            .get("refresh_token")
            .and_then(Value::as_str)
            .map(str::to_string),
        error,
        description,
        audience,
        scope,
        summary,
    }
}

/// The authorization-code grant's parameters.
pub fn code_grant<'a>(
    o: &'a OauthCtx,
    code: &'a str,
    verifier: &'a str,
    redirect_uri: &'a str,
    resource: &'a str,
) -> Vec<(&'a str, &'a str)> {
    vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("client_id", &o.client_id),
        ("redirect_uri", redirect_uri),
        ("code_verifier", verifier),
        ("resource", resource),
    ]
}

/// A whole grant for `resource`: authorize, then redeem for the same one.
pub fn obtain(o: &OauthCtx, resource: &str) -> (Option<String>, Value) {
    let (r, summary) = grant(o, resource);
    (r.and_then(|r| r.access_token), summary)
}

/// A whole grant for `resource`, with everything the token endpoint
/// answered.
pub fn grant(o: &OauthCtx, resource: &str) -> (Option<Redeemed>, Value) {
    let (verifier, challenge) = pkce(o);
    let redirect = o.redirect_uri.clone();
    let a = authorize(o, resource, &challenge, &redirect);
    let Some(code) = a.code else {
        return (None, json!([a.summary]));
    };
    let r = token_request(o, &code_grant(o, &code, &verifier, &redirect, resource));
    let summary = json!([a.summary, r.summary]);
    (Some(r), summary)
}

/// Is `token` active for the fixture's introspection endpoint? `None` when
/// it did not answer.
pub fn introspect(o: &OauthCtx, token: &str) -> Option<bool> {
    let resp = send(o, "POST", "/introspect", Some(&form(&[("token", token)])))?;
    let body: Value = serde_json::from_slice(&resp.body).ok()?;
    body.get("active").and_then(Value::as_bool)
}

/// How an authorization request was answered, credential-free.
pub struct AuthzAnswer {
    pub status: Option<u16>,
    /// A code was issued (the request was granted).
    pub granted: bool,
    pub error: Option<String>,
    /// `error_description` of a redirected refusal, or the text of a 400
    /// page's paragraph.
    pub description: Option<String>,
    /// The response carried back the (first) `state` of the request, byte
    /// for byte; `None` when the request had none.
    pub state_returned: Option<bool>,
    /// The response redirected (to the redirect URI).
    pub redirected: bool,
    /// The `iss` parameter of a redirected response (RFC 9207).
    pub iss: Option<String>,
    /// The whole `Location` (it may hold a code: remembered for redaction,
    /// never kept in a summary).
    pub location: Option<String>,
    pub summary: Value,
}

/// `GET /authorize` with exactly `params` (repeats allowed), for checks that
/// vary one parameter. A code in the answer is remembered and never kept.
pub fn authorize_raw(o: &OauthCtx, params: &[(&str, &str)]) -> AuthzAnswer {
    authorize_raw_at(o, o.fixture.issuer(), params)
}

/// [`authorize_raw`] at the authorization server `base`.
pub fn authorize_raw_at(o: &OauthCtx, base: &str, params: &[(&str, &str)]) -> AuthzAnswer {
    let Some(resp) = send_at(
        o,
        base,
        "GET",
        &format!("/authorize?{}", form(params)),
        None,
    ) else {
        return AuthzAnswer {
            status: None,
            granted: false,
            error: None,
            description: None,
            state_returned: None,
            redirected: false,
            iss: None,
            location: None,
            summary: json!({"authorize": "no answer"}),
        };
    };
    let location = resp.header("location").unwrap_or("").to_string();
    let q = query(&location);
    if let Some(c) = q.get("code") {
        o.remember(c);
    }
    let page = String::from_utf8_lossy(&resp.body).into_owned();
    let paragraph = page
        .split_once("<p>")
        .and_then(|(_, rest)| rest.split_once("</p>"))
        .map(|(p, _)| p.to_string());
    let description = q.get("error_description").cloned().or(paragraph);
    let error = q.get("error").cloned().or_else(|| {
        page.split_once("<h1>")
            .and_then(|(_, rest)| rest.split_once("</h1>"))
            .map(|(e, _)| e.to_string())
    });
    let sent_state = params.iter().find(|(k, _)| *k == "state").map(|(_, v)| *v);
    let state_returned = sent_state.map(|s| q.get("state").map(String::as_str) == Some(s));
    let summary = json!({
        "authorize": {
            "sent": params.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            "stateReturned": state_returned,
            "iss": q.get("iss"),
            "status": resp.status,
            "redirectsTo": (!location.is_empty()).then(|| location.split('?').next().unwrap_or("").to_string()),
            "code": q.get("code").map(|c| digest(c)),
            "error": error,
            "errorDescription": description,
        }
    });
    AuthzAnswer {
        status: resp.status,
        granted: q.contains_key("code"),
        error,
        description,
        state_returned,
        redirected: !location.is_empty(),
        iss: q.get("iss").cloned(),
        location: (!location.is_empty()).then_some(location),
        summary,
    }
}

/// The parameters of a well-formed authorization request of the run's
/// client for `resource`, with a fresh state and the given challenge.
pub fn authz_params(o: &OauthCtx, resource: &str, challenge: &str) -> Vec<(&'static str, String)> {
    let state = crate::produce::drive::ident::random_hex(16);
    o.remember(&state);
    vec![
        ("response_type", "code".into()),
        ("client_id", o.client_id.clone()),
        ("redirect_uri", o.redirect_uri.clone()),
        ("state", state),
        ("code_challenge", challenge.into()),
        ("code_challenge_method", "S256".into()),
        ("resource", resource.into()),
        ("scope", SCOPE.into()),
    ]
}

/// `POST /consent` for `client_id`: the fixture's synthetic user approves
/// that client. The approval (remembered for redaction) and a
/// credential-free summary.
pub fn consent(o: &OauthCtx, client_id: &str) -> (Option<String>, Value) {
    let Some(resp) = send(
        o,
        "POST",
        "/consent",
        Some(&form(&[("client_id", client_id)])),
    ) else {
        return (None, json!({"consent": "no answer"}));
    };
    let body: Value = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
    let value = body
        .get("consent")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(v) = &value {
        // As sent in a query, too (`-` and `_` are percent-encoded there).
        o.remember(v);
        o.remember(&enc(v));
    }
    let summary = json!({
        "consent": {
            "status": resp.status,
            "forClient": body.get("client_id"),
            "approval": value.as_deref().map(digest),
            "error": body.get("error"),
        }
    });
    (value, summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_to_the_fixture_are_written_byte_for_byte_as_before() {
        let addr = SocketAddr::from(([127, 0, 0, 1], 4321));
        assert_eq!(
            request("GET", "/authorize?a=1&b=%2F", addr, None).to_bytes(),
            b"GET /authorize?a=1&b=%2F HTTP/1.1\r\nHost: 127.0.0.1:4321\r\nConnection: close\r\n\r\n"
        );
        let form = form(&[("grant_type", "authorization_code"), ("code", "a b")]);
        assert_eq!(
            request("POST", "/token", addr, Some(&form)).to_bytes(),
            format!(
                "POST /token HTTP/1.1\r\nHost: 127.0.0.1:4321\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{form}",
                form.len()
            )
            .into_bytes()
        );
    }
}
