//! `--auth loopback`: the reference server as an OAuth 2.1 protected resource
//! (MCP authorization, 2025-11-25; RFC 9728 protected-resource metadata;
//! RFC 6750 bearer tokens from the `Authorization` header only).
//!
//! At start, before the listener is bound, the server fetches the
//! authorization server's RFC 8414 metadata and its JWKS over loopback
//! (bounded in time and size, no redirect followed) and refuses to start when
//! the metadata names another issuer than the configured one (mix-up
//! defence). While serving, every request other than the metadata document
//! must carry an access token that verifies (see the `token` module); the check runs
//! right after the Host/Origin check and before the fault schedule. The token
//! is never logged, put in the injection log or an error, or sent anywhere.
//!
//! [`AuthDefect`]s switch off one property each, for tests that show a
//! runner notices each failure.

pub(crate) mod token;

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::ServerError;
use super::oauth::jwt::PublicJwk;
use token::{Expectations, TokenError};

/// Time allowed for each request to the authorization server.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest response read from the authorization server, in bytes.
const MAX_FETCH_BYTES: usize = 256 * 1024;
/// Path of the protected-resource metadata (RFC 9728 §3), and the form with
/// the resource's own path (`/mcp`) appended.
pub(crate) const PRM_PATH: &str = "/.well-known/oauth-protected-resource";
pub(crate) const PRM_PATH_MCP: &str = "/.well-known/oauth-protected-resource/mcp";
/// The authorization server `off-origin-metadata` names: TEST-NET-1
/// (RFC 5737), never loopback, never reachable.
pub const OFF_ORIGIN_AUTHORIZATION_SERVER: &str = "http://192.0.2.1/";

/// A deliberate defect of the protected resource; each breaks one property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthDefect {
    /// The token's `aud` is not checked.
    AcceptWrongAudience,
    /// The token's `exp` is not checked.
    AcceptExpired,
    /// The token's signature (and key id) is not checked.
    SkipSignature,
    /// The client's `Authorization` header is forwarded, in a GET to
    /// `{issuer}/passthrough-probe`, on every request that carries one.
    TokenPassthrough,
    /// The bearer token of every request is written to stderr.
    LogToken,
    /// The bearer token of every request is appended to a file,
    /// `mcpres-token-store.log` in the system temporary directory (`/tmp`,
    /// not `$TMPDIR`): storage nobody reads on the subject's streams.
    StoreToken,
    /// The protected-resource metadata names `http://192.0.2.1/` (a
    /// non-loopback origin) as its first authorization server.
    OffOriginMetadata,
    /// A 401 carries no `WWW-Authenticate` header.
    NoWwwAuthenticate,
    /// The `issuer` of the authorization server's metadata is not compared
    /// with the configured issuer at start.
    WrongIssuerMetadata,
    /// The token's `iss` is not compared with the configured issuer.
    AcceptWrongIssuer,
    /// The required scopes (`--auth-scope`) are not checked: a valid token
    /// without them is accepted.
    IgnoreScope,
    /// A refusal of a request that presented a token echoes it: the token in
    /// the JSON-RPC error's `data.presentedToken`, and its `client_id` claim
    /// (when readable) in the challenge's `error_description`.
    EchoTokenInError,
}

impl AuthDefect {
    pub const ALL: [AuthDefect; 12] = [
        AuthDefect::AcceptWrongAudience,
        AuthDefect::AcceptExpired,
        AuthDefect::SkipSignature,
        AuthDefect::TokenPassthrough,
        AuthDefect::LogToken,
        AuthDefect::StoreToken,
        AuthDefect::OffOriginMetadata,
        AuthDefect::NoWwwAuthenticate,
        AuthDefect::WrongIssuerMetadata,
        AuthDefect::AcceptWrongIssuer,
        AuthDefect::IgnoreScope,
        AuthDefect::EchoTokenInError,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AuthDefect::AcceptWrongAudience => "accept-wrong-audience",
            AuthDefect::AcceptExpired => "accept-expired",
            AuthDefect::SkipSignature => "skip-signature",
            AuthDefect::TokenPassthrough => "token-passthrough",
            AuthDefect::LogToken => "log-token",
            AuthDefect::StoreToken => "store-token",
            AuthDefect::OffOriginMetadata => "off-origin-metadata",
            AuthDefect::NoWwwAuthenticate => "no-www-authenticate",
            AuthDefect::WrongIssuerMetadata => "wrong-issuer-metadata",
            AuthDefect::AcceptWrongIssuer => "accept-wrong-issuer",
            AuthDefect::IgnoreScope => "ignore-scope",
            AuthDefect::EchoTokenInError => "echo-token-in-error",
        }
    }
}

impl fmt::Display for AuthDefect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AuthDefect {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        AuthDefect::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = AuthDefect::ALL.iter().map(|d| d.name()).collect();
                format!("unknown auth defect `{s}` (known: {})", names.join(", "))
            })
    }
}

/// `--auth loopback` and its options.
#[derive(Debug, Clone, Default)]
pub struct AuthArgs {
    /// The authorization server's issuer identifier: an `http://` URL on a
    /// loopback IP address.
    pub issuer: String,
    /// This resource's identifier (the audience its tokens must name);
    /// default `http://ADDR:PORT/mcp` of the bound listener.
    pub resource: Option<String>,
    /// Scopes every request needs (and `scopes_supported`).
    pub scopes: Vec<String>,
    /// Deliberate defects.
    pub defects: Vec<AuthDefect>,
}

/// An `http://` URL whose host is a loopback IP literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoopbackUrl {
    pub addr: SocketAddr,
    /// `host[:port]` as written, for the `Host` header.
    pub authority: String,
    /// The path, `""` or starting with `/`.
    pub path: String,
}

/// Parse `url` as an `http://` URL on a loopback IP literal (127.0.0.0/8 or
/// `[::1]`), without user info, query or fragment. The error says what is
/// wrong; it names the URL only when it is not loopback.
pub(crate) fn parse_loopback_http(url: &str) -> Result<LoopbackUrl, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("`{url}` is not an http:// URL"))?;
    if rest.contains(['?', '#']) {
        return Err(format!("`{url}` carries a query or fragment"));
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if authority.contains('@') {
        return Err(format!("`{url}` carries user information"));
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("`{url}` has an unterminated IPv6 host"))?;
        match after {
            "" => (h, None),
            p => (
                h,
                Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| format!("`{url}` has a malformed port"))?,
                ),
            ),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let ip: IpAddr = host
        .parse()
        .map_err(|_| format!("`{url}`: the host must be a loopback IP address, not a name"))?;
    if !ip.is_loopback() {
        return Err(format!("`{url}` is not on a loopback address"));
    }
    let port = match port {
        None => 80,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("`{url}` has a malformed port"))?,
    };
    Ok(LoopbackUrl {
        addr: SocketAddr::new(ip, port),
        authority: authority.to_owned(),
        path: path.to_owned(),
    })
}

/// Check the options of `--auth loopback` that need no connection.
pub(crate) fn validate_args(args: &AuthArgs) -> Result<LoopbackUrl, ServerError> {
    let issuer = parse_loopback_http(&args.issuer)
        .map_err(|e| ServerError::InvalidOption(format!("--auth-issuer: {e}")))?;
    if let Some(r) = &args.resource
        && (!(r.starts_with("http://") || r.starts_with("https://")) || r.contains('#'))
    {
        return Err(ServerError::InvalidOption(format!(
            "--auth-resource `{r}` must be an absolute http(s) URI without a fragment"
        )));
    }
    if let Some(s) = args.scopes.iter().find(|s| {
        s.is_empty()
            || !s
                .bytes()
                .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
    }) {
        return Err(ServerError::InvalidOption(format!(
            "--auth-scope `{s}` is not a scope token (visible ASCII, no quote or backslash)"
        )));
    }
    Ok(issuer)
}

/// A response from the authorization server: status and body.
struct Fetched {
    status: u16,
    body: Vec<u8>,
}

/// GET `path` from `target` over a fresh loopback connection, HTTP/1.0 (so
/// the body ends with the connection), within [`FETCH_TIMEOUT`] and
/// [`MAX_FETCH_BYTES`]. Redirects are not followed. The optional
/// `authorization` value is sent as is and never appears in an error.
async fn loopback_get(
    target: &LoopbackUrl,
    path: &str,
    authorization: Option<&HeaderValue>,
) -> Result<Fetched, String> {
    let exchange = async {
        let mut stream = TcpStream::connect(target.addr)
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", target.addr))?;
        let mut head = format!(
            "GET {path} HTTP/1.0\r\nHost: {}\r\nAccept: application/json\r\n",
            target.authority
        )
        .into_bytes();
        if let Some(value) = authorization {
            head.extend_from_slice(b"Authorization: ");
            head.extend_from_slice(value.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        head.extend_from_slice(b"\r\n");
        stream
            .write_all(&head)
            .await
            .map_err(|e| format!("cannot send to {}: {e}", target.addr))?;
        let mut raw = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let n = stream
                .read(&mut chunk)
                .await
                .map_err(|e| format!("cannot read from {}: {e}", target.addr))?;
            if n == 0 {
                break;
            }
            if raw.len() + n > MAX_FETCH_BYTES {
                return Err(format!(
                    "the answer of {} is larger than {MAX_FETCH_BYTES} bytes",
                    target.addr
                ));
            }
            raw.extend_from_slice(&chunk[..n]);
        }
        Ok(raw)
    };
    let raw = tokio::time::timeout(FETCH_TIMEOUT, exchange)
        .await
        .map_err(|_| {
            format!(
                "no complete answer from {} within {FETCH_TIMEOUT:?}",
                target.addr
            )
        })??;
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(&raw) {
        Ok(httparse::Status::Complete(n)) => n,
        _ => {
            return Err(format!(
                "{} answered with a malformed HTTP response",
                target.addr
            ));
        }
    };
    let status = response.code.unwrap_or(0);
    let mut body = raw[head_len..].to_vec();
    for h in response.headers.iter() {
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(format!("{} answered with a transfer coding", target.addr));
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            let n: usize = std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| {
                    format!("{} answered with a malformed Content-Length", target.addr)
                })?;
            if body.len() < n {
                return Err(format!("{} closed the connection mid-body", target.addr));
            }
            body.truncate(n);
        }
    }
    Ok(Fetched { status, body })
}

/// GET a JSON object, refusing anything but `200` with an object body.
async fn fetch_json(target: &LoopbackUrl, path: &str, what: &str) -> Result<Value, ServerError> {
    let fail = |why: String| ServerError::Auth(format!("{what}: {why}"));
    let got = loopback_get(target, path, None).await.map_err(fail)?;
    if got.status != 200 {
        return Err(fail(format!(
            "HTTP status {} (expected 200; redirects are not followed)",
            got.status
        )));
    }
    match serde_json::from_slice::<Value>(&got.body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(fail("the body is not a JSON object".into())),
    }
}

/// The path of a URL's RFC 8414 metadata: the well-known segment inserted
/// between the authority and the issuer's path (a trailing `/` dropped).
fn metadata_path(issuer: &LoopbackUrl) -> String {
    format!(
        "/.well-known/oauth-authorization-server{}",
        issuer.path.trim_end_matches('/')
    )
}

/// What discovery found: the authorization server's signing keys.
pub(crate) struct Discovered {
    keys: Vec<PublicJwk>,
}

/// Fetch the authorization server's metadata and JWKS (before the listener
/// is bound).
pub(crate) async fn discover(
    args: &AuthArgs,
    issuer: &LoopbackUrl,
) -> Result<Discovered, ServerError> {
    let metadata = fetch_json(
        issuer,
        &metadata_path(issuer),
        "authorization server metadata",
    )
    .await?;
    let named = metadata.get("issuer").and_then(Value::as_str);
    if !args.defects.contains(&AuthDefect::WrongIssuerMetadata)
        && named != Some(args.issuer.as_str())
    {
        return Err(ServerError::Auth(format!(
            "the authorization server metadata names issuer {} instead of the configured `{}` \
             (mix-up defence: refusing to start)",
            named.map_or("(none)".to_owned(), |n| format!("`{n}`")),
            args.issuer
        )));
    }
    let jwks_uri = metadata
        .get("jwks_uri")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ServerError::Auth("the authorization server metadata has no jwks_uri".into())
        })?;
    let jwks_url = parse_loopback_http(jwks_uri)
        .map_err(|e| ServerError::Auth(format!("jwks_uri not followed: {e}")))?;
    let jwks = fetch_json(
        &jwks_url,
        if jwks_url.path.is_empty() {
            "/"
        } else {
            &jwks_url.path
        },
        "JWKS",
    )
    .await?;
    let keys = token::ed25519_keys(&jwks)
        .ok_or_else(|| ServerError::Auth("the JWKS document has no `keys` array".into()))?;
    if keys.is_empty() {
        return Err(ServerError::Auth(
            "the JWKS holds no Ed25519 signing key (kty OKP, crv Ed25519, kid, x)".into(),
        ));
    }
    Ok(Discovered { keys })
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token that does not verify.
    Invalid(TokenError),
    /// A valid token without every required scope.
    InsufficientScope,
}

/// The protected resource, once its authorization server is known and its
/// listener bound.
pub(crate) struct Protected {
    issuer: String,
    issuer_url: LoopbackUrl,
    resource: String,
    metadata_url: String,
    scopes: Vec<String>,
    keys: Vec<PublicJwk>,
    defects: Vec<AuthDefect>,
}

impl Protected {
    pub fn new(
        args: &AuthArgs,
        issuer_url: LoopbackUrl,
        found: Discovered,
        local: SocketAddr,
    ) -> Protected {
        Protected {
            issuer: args.issuer.clone(),
            issuer_url,
            resource: args
                .resource
                .clone()
                .unwrap_or_else(|| format!("http://{local}/mcp")),
            metadata_url: format!("http://{local}{PRM_PATH_MCP}"),
            scopes: args.scopes.clone(),
            keys: found.keys,
            defects: args.defects.clone(),
        }
    }

    fn has(&self, d: AuthDefect) -> bool {
        self.defects.contains(&d)
    }

    pub fn resource(&self) -> &str {
        &self.resource
    }

    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// What the injection log records about the configuration (no key
    /// material, no token).
    pub fn describe(&self) -> Value {
        json!({
            "issuer": self.issuer,
            "resource": self.resource,
            "resourceMetadata": self.metadata_url,
            "scopes": self.scopes,
            "keyIds": self.keys.iter().map(|k| k.kid.as_str()).collect::<Vec<_>>(),
            "defects": self.defects.iter().map(|d| d.name()).collect::<Vec<_>>(),
        })
    }

    /// Is `path` one of the (public) metadata documents?
    pub fn is_metadata_path(path: &str) -> bool {
        path == PRM_PATH || path == PRM_PATH_MCP
    }

    /// The RFC 9728 protected-resource metadata document.
    pub fn metadata_document(&self) -> Value {
        let servers: Vec<&str> = if self.has(AuthDefect::OffOriginMetadata) {
            vec![OFF_ORIGIN_AUTHORIZATION_SERVER, &self.issuer]
        } else {
            vec![&self.issuer]
        };
        json!({
            "resource": self.resource,
            "authorization_servers": servers,
            "bearer_methods_supported": ["header"],
            "scopes_supported": self.scopes,
        })
    }

    /// The bearer token of the request's one `Authorization` header, if it
    /// uses the `Bearer` scheme. `Err` when the header is repeated or not
    /// visible ASCII.
    fn bearer(headers: &HeaderMap) -> Result<Option<&str>, Refusal> {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let Some(value) = values.next() else {
            return Ok(None);
        };
        if values.next().is_some() {
            return Err(Refusal::Invalid(TokenError::Malformed));
        }
        let value = value
            .to_str()
            .map_err(|_| Refusal::Invalid(TokenError::Malformed))?;
        let Some((scheme, token)) = value.split_once(' ') else {
            return Ok(None);
        };
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Ok(None);
        }
        Ok(Some(token.trim_matches(' ')))
    }

    /// Check the request's access token. Runs the `log-token` defect.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let Some(token) = Self::bearer(headers)? else {
            return Err(Refusal::Missing);
        };
        if self.has(AuthDefect::LogToken) {
            eprintln!("mcpres serve: [defect log-token] bearer token: {token}");
        }
        if self.has(AuthDefect::StoreToken) {
            use std::io::Write as _;
            let stored = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open("/tmp/mcpres-token-store.log")
                .and_then(|mut f| writeln!(f, "{token}"));
            if let Err(e) = stored {
                eprintln!("mcpres serve: [defect store-token] cannot store the token: {e}");
            }
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let expect = Expectations {
            issuer: &self.issuer,
            audience: &self.resource,
            now,
            skip_signature: self.has(AuthDefect::SkipSignature),
            skip_audience: self.has(AuthDefect::AcceptWrongAudience),
            skip_expiry: self.has(AuthDefect::AcceptExpired),
            skip_issuer: self.has(AuthDefect::AcceptWrongIssuer),
        };
        let accepted =
            token::verify_access_token(token, &self.keys, &expect).map_err(Refusal::Invalid)?;
        if self.has(AuthDefect::IgnoreScope)
            || self.scopes.iter().all(|s| accepted.scopes.contains(s))
        {
            Ok(())
        } else {
            Err(Refusal::InsufficientScope)
        }
    }

    /// The `token-passthrough` defect: send the request's `Authorization`
    /// header to `{issuer}/passthrough-probe`. Does nothing without the
    /// defect.
    pub async fn passthrough(&self, headers: &HeaderMap) {
        if !self.has(AuthDefect::TokenPassthrough) {
            return;
        }
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return;
        };
        let path = format!(
            "{}/passthrough-probe",
            self.issuer_url.path.trim_end_matches('/')
        );
        if let Err(e) = loopback_get(&self.issuer_url, &path, Some(value)).await {
            eprintln!("mcpres serve: [defect token-passthrough] probe failed: {e}");
        }
    }

    /// The answer to a refused request: `401` (or `403` for scope) with a
    /// JSON-RPC error naming the reason, and a `WWW-Authenticate: Bearer`
    /// challenge pointing at the metadata (RFC 9728 §5.1, RFC 6750 §3).
    /// `headers` are the refused request's; only the `echo-token-in-error`
    /// defect reads them.
    pub fn refuse(&self, refusal: Refusal, headers: &HeaderMap) -> Response {
        let scope = self.scopes.join(" ");
        let (status, error, reason, message) = match refusal {
            Refusal::Missing => (
                StatusCode::UNAUTHORIZED,
                None,
                "missing-token",
                "Unauthorized: an access token is required",
            ),
            Refusal::Invalid(e) => (
                StatusCode::UNAUTHORIZED,
                Some("invalid_token"),
                e.reason(),
                "Unauthorized: the access token is not valid for this resource",
            ),
            Refusal::InsufficientScope => (
                StatusCode::FORBIDDEN,
                Some("insufficient_scope"),
                "insufficient-scope",
                "Forbidden: the access token lacks a required scope",
            ),
        };
        // The `echo-token-in-error` defect: the presented token, and its
        // `client_id` claim when it can be read.
        let echoed = if self.has(AuthDefect::EchoTokenInError) {
            Self::bearer(headers).ok().flatten()
        } else {
            None
        };
        let echoed_client = echoed
            .and_then(unverified_claims)
            .and_then(|c| {
                c.get("client_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .filter(|c| {
                c.bytes()
                    .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
            });
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if let Some(error) = error {
            match &echoed_client {
                Some(client) => challenge.push_str(&format!(
                    ", error=\"{error}\", error_description=\"{reason} (client {client})\""
                )),
                None => challenge.push_str(&format!(
                    ", error=\"{error}\", error_description=\"{reason}\""
                )),
            }
        }
        if !scope.is_empty() {
            challenge.push_str(&format!(", scope=\"{scope}\""));
        }
        let body = super::fault::error_response(
            &Value::Null,
            -32000,
            message,
            Some(match echoed {
                Some(t) => json!({"reason": reason, "presentedToken": t}),
                None => json!({"reason": reason}),
            }),
        );
        let mut r = (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response();
        let omit = status == StatusCode::UNAUTHORIZED && self.has(AuthDefect::NoWwwAuthenticate);
        if !omit && let Ok(v) = HeaderValue::from_str(&challenge) {
            r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        r
    }
}

/// The claims segment of a compact JWT, decoded but not verified (only the
/// `echo-token-in-error` defect reads it).
fn unverified_claims(token: &str) -> Option<Value> {
    use base64::Engine as _;
    let claims = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(claims)
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_http_issuers_are_taken() {
        let u = parse_loopback_http("http://127.0.0.1:4000").unwrap();
        assert_eq!(u.addr, "127.0.0.1:4000".parse().unwrap());
        assert_eq!(
            (u.authority.as_str(), u.path.as_str()),
            ("127.0.0.1:4000", "")
        );
        let u = parse_loopback_http("http://[::1]:5/tenant").unwrap();
        assert_eq!((u.addr.port(), u.path.as_str()), (5, "/tenant"));
        assert_eq!(
            metadata_path(&u),
            "/.well-known/oauth-authorization-server/tenant"
        );
        for bad in [
            "https://127.0.0.1:4000",
            "http://192.0.2.1/",
            "http://localhost:4000",
            "http://127.0.0.1:4000/?x=1",
            "http://u@127.0.0.1:4000",
            "http://127.0.0.1:0",
            "http://[::1",
            "ftp://127.0.0.1",
        ] {
            assert!(parse_loopback_http(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn defect_names_round_trip() {
        for d in AuthDefect::ALL {
            assert_eq!(d.name().parse::<AuthDefect>(), Ok(d));
        }
        assert!("accept-everything".parse::<AuthDefect>().is_err());
    }
}
