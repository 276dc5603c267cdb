//! The loopback OAuth 2.1 authorization server fixture.
//!
//! [`Fixture::start`] binds a loopback listener and serves on a tokio runtime
//! of its own, on a thread of its own; the API is synchronous. Every request
//! becomes an [`Event`] in the audit log, with each credential-bearing value
//! replaced by `sha256:<hex>` of its bytes. Codes and refresh tokens are held
//! only as digests; the signing key lives in memory and is zeroized on drop.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use percent_encoding::{NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::jwt::{Claims, TokenSigner, verify_access_token};

/// Largest request body read, and largest client ID metadata document fetched.
const MAX_BODY: usize = 64 * 1024;
/// How long a client ID metadata document fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The synthetic resource owner every token is issued for.
const SUBJECT: &str = "synthetic-user";

/// Parameter names whose values are credentials (or bind one) and therefore
/// appear in events only as digests.
pub const CREDENTIAL_PARAMS: [&str; 12] = [
    "code",
    "consent",
    "code_verifier",
    "access_token",
    "refresh_token",
    "token",
    "id_token",
    "client_secret",
    "client_assertion",
    "assertion",
    "password",
    "state",
];

/// Deliberate misbehaviours, each off by default, for negative controls: a
/// client or evaluation runner must notice each one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Defects {
    /// The token endpoint ignores the code's (or refresh family's) resource:
    /// the token's `aud` is whatever `resource` the token request names.
    pub issue_for_any_resource: bool,
    /// The authorization endpoint accepts `code_challenge_method=plain` (and
    /// the token endpoint then compares the verifier to the challenge as is).
    pub accept_plain_pkce: bool,
    /// `redirect_uri` is accepted when a registered one is a prefix of it.
    pub prefix_redirect_uri: bool,
    /// The authorization response carries `iss` of another issuer (mix-up).
    pub wrong_iss_in_response: bool,
    /// The metadata document names an `issuer` other than the fixture's URL.
    pub metadata_issuer_mismatch: bool,
    /// The token endpoint does not compare a code's client and redirect URI
    /// with the token request's (the code is bound to neither).
    pub unbound_code: bool,
    /// A refresh token stays valid after use: it is not rotated out (a new
    /// one is still issued).
    pub no_rotation: bool,
    /// The token endpoint does not compare the code verifier with the code's
    /// challenge (PKCE not enforced).
    pub ignore_verifier: bool,
    /// An authorization request without a usable `resource` is granted
    /// anyway (the code is bound to an empty resource).
    pub ignore_missing_resource: bool,
    /// The authorization response (a code or a redirected error) does not
    /// carry the request's `state` back.
    pub drop_state: bool,
    /// The `client_id` a client ID metadata document names is not compared
    /// with the URL it was fetched from (any document identifies anyone).
    pub ignore_cimd_client_id: bool,
    /// The metadata's `token_endpoint` is on another origin
    /// (`http://192.0.2.1/token`, TEST-NET-1, never contacted).
    pub off_origin_token_endpoint: bool,
    /// The client ID metadata document fetch follows one redirect (to a
    /// loopback URL only) instead of refusing it.
    pub follow_cimd_redirects: bool,
    /// A client ID metadata document fetched and trusted leaves no trust
    /// policy note in its `FETCH` audit event (refusals are still noted).
    pub unrecorded_cimd_policy: bool,
    /// For a client registered with a loopback redirect URI without a port,
    /// the response goes to that registered URI (its default port) instead
    /// of the port the request named.
    pub fixed_loopback_port: bool,
    /// A consent approval given for one client is honoured for any client
    /// that requires consent.
    pub consent_not_client_bound: bool,
}

/// The trust policy every client ID metadata document fetch runs under; a
/// fetched and trusted document's `FETCH` event notes
/// `fetched under policy <this>`.
pub const CIMD_TRUST_POLICY: &str = "loopback-http-only, no-redirects";

/// What a [`Fixture`] runs with.
#[derive(Debug, Clone)]
pub struct FixtureConfig {
    /// Address to bind; must be a loopback address.
    pub bind: IpAddr,
    /// TCP port; 0 picks an ephemeral one.
    pub port: u16,
    /// Lifetime of access tokens (`expires_in`), default 300 s.
    pub token_lifetime: Duration,
    /// Lifetime of authorization codes, default 60 s.
    pub code_lifetime: Duration,
    /// Scopes a client may request (`scopes_supported`), default `["mcp"]`.
    /// A request without `scope` is granted all of them.
    pub allowed_scopes: Vec<String>,
    /// Switchable misbehaviours; none by default.
    pub defects: Defects,
}

impl Default for FixtureConfig {
    fn default() -> Self {
        FixtureConfig {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            token_lifetime: Duration::from_secs(300),
            code_lifetime: Duration::from_secs(60),
            allowed_scopes: vec!["mcp".to_string()],
            defects: Defects::default(),
        }
    }
}

/// Why a fixture could not start or a client could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("refusing to bind {0}: the OAuth fixture binds loopback addresses only")]
    NotLoopback(IpAddr),
    #[error("cannot bind {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start the fixture's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("client name must be 1-64 characters of A-Z a-z 0-9 - _")]
    BadClientName,
}

/// One audit record: a request the fixture answered, or an outbound client ID
/// metadata document fetch (`method` `FETCH`) it made or refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    /// 0, 1, 2, ... in the order the events were recorded.
    pub seq: u64,
    /// HTTP method, or `FETCH` for an outbound metadata document fetch.
    pub method: String,
    /// Request path (for `FETCH`: the URL, which is a client_id).
    pub path: String,
    /// Response status (for `FETCH`: the fetched status, 0 when no
    /// connection was made).
    pub status: u16,
    /// Query and form parameters; credential values as `sha256:<hex>`.
    pub params: BTreeMap<String, String>,
    /// The OAuth `error` code answered, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// A fixed, credential-free note (the refusal reason, the trust policy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Digests of the credentials issued in the response (`code`,
    /// `access_token`, `refresh_token`), and `jti` of an access token.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub issued: BTreeMap<String, String>,
}

/// `sha256:<hex>` of a value's bytes: how credentials appear in events.
pub fn digest(value: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(value.as_bytes())))
}

fn key(value: &str) -> [u8; 32] {
    Sha256::digest(value.as_bytes()).into()
}

fn random_token() -> String {
    let mut buf = zeroize::Zeroizing::new([0u8; 32]);
    getrandom::fill(&mut buf[..]).expect("the OS random source works");
    URL_SAFE_NO_PAD.encode(&buf[..])
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

struct CodeGrant {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    method: &'static str,
    resource: String,
    scope: String,
    expires: Instant,
    used: bool,
    family: Option<u64>,
}

struct Family {
    client_id: String,
    resource: String,
    scope: String,
    revoked: bool,
}

struct RefreshRecord {
    family: u64,
    rotated: bool,
}

#[derive(Default)]
struct Store {
    clients: BTreeMap<String, Vec<String>>,
    /// name -> the `client_id` its document claims, when not its own URL.
    claimed: BTreeMap<String, String>,
    /// The client_ids whose authorization requests need a consent approval.
    consent_clients: std::collections::BTreeSet<String>,
    /// Digest key of a consent approval -> the client_id it was given for.
    consents: HashMap<[u8; 32], String>,
    codes: HashMap<[u8; 32], CodeGrant>,
    families: HashMap<u64, Family>,
    next_family: u64,
    refresh: HashMap<[u8; 32], RefreshRecord>,
    /// jti -> family of every access token issued.
    jtis: HashMap<String, u64>,
    events: Vec<Event>,
}

struct Inner {
    issuer: String,
    config: FixtureConfig,
    signer: TokenSigner,
    store: Mutex<Store>,
}

impl Inner {
    fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, mut e: Event) {
        let mut s = self.store();
        e.seq = s.events.len() as u64;
        s.events.push(e);
    }
}

/// A running fixture. Dropping it stops it.
pub struct Fixture {
    inner: Arc<Inner>,
    addr: SocketAddr,
    /// The listening socket's inode (`/proc/net/tcp`), to see that socket
    /// itself gone after a stop, whoever binds the port next.
    inode: Option<u64>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Fixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fixture")
            .field("issuer", &self.inner.issuer)
            .finish_non_exhaustive()
    }
}

impl Fixture {
    /// Binds `config.bind:config.port` (loopback only) and starts serving.
    pub fn start(config: FixtureConfig) -> Result<Fixture, FixtureError> {
        if !config.bind.is_loopback() {
            return Err(FixtureError::NotLoopback(config.bind));
        }
        let addr = SocketAddr::new(config.bind, config.port);
        let listener = std::net::TcpListener::bind(addr)
            .map_err(|source| FixtureError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| FixtureError::Bind { addr, source })?;
        listener
            .set_nonblocking(true)
            .map_err(|source| FixtureError::Bind { addr, source })?;
        let inode = rustix::fs::fstat(&listener).ok().map(|st| st.st_ino);
        let issuer = match addr.ip() {
            IpAddr::V4(ip) => format!("http://{ip}:{}", addr.port()),
            IpAddr::V6(ip) => format!("http://[{ip}]:{}", addr.port()),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(FixtureError::Runtime)?;
        let inner = Arc::new(Inner {
            issuer,
            config,
            signer: TokenSigner::generate(),
            store: Mutex::new(Store::default()),
        });
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
        let served = inner.clone();
        let thread = std::thread::Builder::new()
            .name("mcpres-oauth-fixture".into())
            .spawn(move || {
                runtime.block_on(serve(listener, served, stop_rx));
                // Dropping the runtime here ends every connection task.
            })
            .map_err(FixtureError::Runtime)?;
        Ok(Fixture {
            inner,
            addr,
            inode,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT` (no trailing slash): the issuer identifier,
    /// also the base of every endpoint.
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The inode of the listening socket (as `/proc/net/tcp` lists it), if
    /// it could be read.
    pub fn listener_inode(&self) -> Option<u64> {
        self.inode
    }

    /// The fixture's public signing keys (what `GET /jwks` serves).
    pub fn jwks(&self) -> super::jwt::JwkSet {
        self.inner.signer.jwks()
    }

    /// A copy of the audit log so far.
    pub fn events(&self) -> Vec<Event> {
        self.inner.store().events.clone()
    }

    /// Registers a client ID metadata document served at
    /// `<issuer>/cimd/<name>` with these redirect URIs (replacing an earlier
    /// one of that name) and returns its URL, the client_id.
    pub fn register_client(
        &self,
        name: &str,
        redirect_uris: &[&str],
    ) -> Result<String, FixtureError> {
        if name.is_empty()
            || name.len() > 64
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(FixtureError::BadClientName);
        }
        let mut store = self.inner.store();
        store.clients.insert(
            name.to_string(),
            redirect_uris.iter().map(|s| s.to_string()).collect(),
        );
        store.claimed.remove(name);
        Ok(format!("{}/cimd/{name}", self.inner.issuer))
    }

    /// Like [`Fixture::register_client`], for a client behind a consent
    /// step (a proxy with a static upstream client): each authorization
    /// request must carry a `consent` approval obtained from `POST /consent`
    /// for this very client_id.
    pub fn register_consent_client(
        &self,
        name: &str,
        redirect_uris: &[&str],
    ) -> Result<String, FixtureError> {
        let url = self.register_client(name, redirect_uris)?;
        self.inner.store().consent_clients.insert(url.clone());
        Ok(url)
    }

    /// Like [`Fixture::register_client`], but the document served at
    /// `<issuer>/cimd/<name>` claims `claimed_client_id` (an impostor's
    /// document, for identity checks). Returns the URL it is served at.
    pub fn register_impostor(
        &self,
        name: &str,
        redirect_uris: &[&str],
        claimed_client_id: &str,
    ) -> Result<String, FixtureError> {
        let url = self.register_client(name, redirect_uris)?;
        self.inner
            .store()
            .claimed
            .insert(name.to_string(), claimed_client_id.to_string());
        Ok(url)
    }

    /// Signs an access token directly, without a grant (for resource-server
    /// tests: a token for another audience, or already expired with a
    /// negative `expires_in`). It is not revocable and not known to
    /// introspection. Recorded as a `MINT` event with its digest.
    pub fn mint_access_token(
        &self,
        client_id: &str,
        audience: &str,
        scope: &str,
        expires_in: i64,
    ) -> String {
        let issuer = self.inner.issuer.clone();
        self.mint_access_token_as(&issuer, client_id, audience, scope, expires_in)
    }

    /// [`Fixture::mint_access_token`] with `iss` set to `issuer` (another
    /// issuer's token signed with this fixture's key, for issuer-binding
    /// tests). Recorded as a `MINT` event naming that issuer.
    pub fn mint_access_token_as(
        &self,
        issuer: &str,
        client_id: &str,
        audience: &str,
        scope: &str,
        expires_in: i64,
    ) -> String {
        let now = unix_now();
        let claims = Claims {
            iss: issuer.to_string(),
            sub: SUBJECT.into(),
            aud: audience.to_string(),
            client_id: client_id.to_string(),
            scope: scope.to_string(),
            iat: now,
            exp: now.saturating_add_signed(expires_in),
            jti: random_token(),
        };
        let token = self.inner.signer.sign(&claims);
        let mut issued = BTreeMap::new();
        issued.insert("access_token".to_string(), digest(&token));
        issued.insert("jti".to_string(), claims.jti);
        self.inner.record(Event {
            seq: 0,
            method: "MINT".into(),
            path: String::new(),
            status: 0,
            params: BTreeMap::from([
                ("aud".to_string(), query_digested(audience)),
                ("client_id".to_string(), query_digested(client_id)),
                ("iss".to_string(), query_digested(issuer)),
            ]),
            error: None,
            note: Some("signed directly, without a grant".into()),
            issued,
        });
        token
    }

    /// Closes the listener and every connection, and waits for the server
    /// thread to end.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// `mcpres oauth fixture`: installs SIGTERM/SIGINT handlers, starts a
/// fixture, calls `on_ready` with it, and serves until a signal arrives;
/// then stops the fixture.
pub fn run_until_signal(
    config: FixtureConfig,
    on_ready: impl FnOnce(&Fixture),
) -> Result<(), FixtureError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(FixtureError::Runtime)?;
    // Handlers first, so a signal sent as soon as the issuer is printed is
    // not lost.
    let signal = {
        let _context = rt.enter();
        crate::server::shutdown_signal()
    };
    let fixture = Fixture::start(config)?;
    on_ready(&fixture);
    rt.block_on(signal);
    fixture.stop();
    Ok(())
}

async fn serve(
    listener: std::net::TcpListener,
    inner: Arc<Inner>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(_) => return,
    };
    loop {
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        let _ = stream.set_nodelay(true);
        let inner = inner.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req| {
                let inner = inner.clone();
                async move { Ok::<_, Infallible>(handle(inner, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

type Resp = Response<Full<Bytes>>;

fn respond(status: StatusCode, content_type: &'static str, body: Vec<u8>) -> Resp {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn json_resp(status: StatusCode, v: &Value) -> Resp {
    respond(status, "application/json", v.to_string().into_bytes())
}

/// Parses `application/x-www-form-urlencoded` (also a query string). A name
/// given twice keeps its first value and is reported in the second result.
fn parse_form(s: &str) -> (BTreeMap<String, String>, Vec<String>) {
    let mut out = BTreeMap::new();
    let mut repeated = Vec::new();
    for pair in s.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let dec = |x: &str| {
            percent_decode_str(&x.replace('+', " "))
                .decode_utf8_lossy()
                .into_owned()
        };
        let (k, v) = (dec(k), dec(v));
        match out.entry(k) {
            Entry::Occupied(e) => repeated.push(e.key().clone()),
            Entry::Vacant(e) => {
                e.insert(v);
            }
        }
    }
    (out, repeated)
}

/// A URL with its query, if any, replaced by the query's digest: URL-valued
/// parameters are the client's and may carry anything after `?`.
fn query_digested(url: &str) -> String {
    match url.split_once('?') {
        Some((base, query)) => format!("{base}?{}", digest(query)),
        None => url.to_string(),
    }
}

/// URL-valued parameters recorded with their query digested.
const URL_PARAMS: [&str; 3] = ["client_id", "redirect_uri", "resource"];

fn redact(params: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    params
        .iter()
        .map(|(k, v)| {
            let v = if CREDENTIAL_PARAMS.contains(&k.as_str()) {
                digest(v)
            } else if URL_PARAMS.contains(&k.as_str()) {
                query_digested(v)
            } else {
                v.clone()
            };
            (k.clone(), v)
        })
        .collect()
}

/// What a handler hands back besides the response, for the audit event.
#[derive(Default)]
struct Outcome {
    error: Option<String>,
    note: Option<String>,
    issued: BTreeMap<String, String>,
}

async fn handle(inner: Arc<Inner>, req: Request<hyper::body::Incoming>) -> Resp {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let is_form = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';').next().is_some_and(|m| {
                m.trim()
                    .eq_ignore_ascii_case("application/x-www-form-urlencoded")
            })
        });
    let auth = req
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| digest(v.to_str().unwrap_or("")));
    let body = Limited::new(req.into_body(), MAX_BODY).collect().await;
    let (mut params, mut repeated) = parse_form(&query);
    let mut outcome = Outcome::default();
    let response = match body {
        Err(_) => {
            outcome.error = Some("invalid_request".into());
            json_resp(
                StatusCode::PAYLOAD_TOO_LARGE,
                &json!({"error": "invalid_request", "error_description": "request body too large"}),
            )
        }
        Ok(b) => {
            let b = b.to_bytes();
            if method == Method::POST && is_form {
                let (form, rep) = parse_form(&String::from_utf8_lossy(&b));
                for (k, v) in form {
                    match params.entry(k) {
                        Entry::Occupied(e) => repeated.push(e.key().clone()),
                        Entry::Vacant(e) => {
                            e.insert(v);
                        }
                    }
                }
                repeated.extend(rep);
            }
            route(
                &inner,
                &method,
                &path,
                &params,
                &repeated,
                is_form,
                &mut outcome,
            )
            .await
        }
    };
    let mut logged = redact(&params);
    if let Some(a) = auth {
        logged.insert("authorization".into(), a);
    }
    inner.record(Event {
        seq: 0,
        method: method.to_string(),
        path,
        status: response.status().as_u16(),
        params: logged,
        error: outcome.error,
        note: outcome.note,
        issued: outcome.issued,
    });
    response
}

async fn route(
    inner: &Inner,
    method: &Method,
    path: &str,
    params: &BTreeMap<String, String>,
    repeated: &[String],
    is_form: bool,
    outcome: &mut Outcome,
) -> Resp {
    match (method, path) {
        (&Method::GET, "/.well-known/oauth-authorization-server") => {
            json_resp(StatusCode::OK, &metadata(inner))
        }
        (&Method::GET, "/jwks") => json_resp(StatusCode::OK, &inner.signer.jwks().to_json()),
        (&Method::GET, "/authorize") => authorize(inner, params, repeated, outcome).await,
        (&Method::POST, "/token") => {
            if !is_form {
                return token_error(outcome, "invalid_request", "body must be a form");
            }
            if let Some(r) = repeated.first() {
                return token_error(outcome, "invalid_request", &repeated_msg(r));
            }
            token(inner, params, outcome)
        }
        (&Method::POST, "/introspect") => {
            if !is_form {
                return token_error(outcome, "invalid_request", "body must be a form");
            }
            introspect(inner, params)
        }
        (&Method::GET, p) if p.starts_with("/cimd/") => cimd(inner, &p["/cimd/".len()..]),
        (&Method::POST, "/consent") => {
            if !is_form {
                return token_error(outcome, "invalid_request", "body must be a form");
            }
            consent(inner, params, outcome)
        }
        _ => {
            outcome.note = Some("no such endpoint".into());
            json_resp(StatusCode::NOT_FOUND, &json!({"error": "not_found"}))
        }
    }
}

fn metadata(inner: &Inner) -> Value {
    let i = &inner.issuer;
    let issuer = if inner.config.defects.metadata_issuer_mismatch {
        format!("{i}/other")
    } else {
        i.clone()
    };
    let methods: &[&str] = if inner.config.defects.accept_plain_pkce {
        &["S256", "plain"]
    } else {
        &["S256"]
    };
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{i}/authorize"),
        "token_endpoint": if inner.config.defects.off_origin_token_endpoint {
            "http://192.0.2.1/token".to_string()
        } else {
            format!("{i}/token")
        },
        "jwks_uri": format!("{i}/jwks"),
        "introspection_endpoint": format!("{i}/introspect"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": methods,
        "token_endpoint_auth_methods_supported": ["none"],
        "introspection_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": inner.config.allowed_scopes,
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
    })
}

fn cimd(inner: &Inner, name: &str) -> Resp {
    let (uris, claimed) = {
        let store = inner.store();
        (
            store.clients.get(name).cloned(),
            store.claimed.get(name).cloned(),
        )
    };
    match uris {
        Some(uris) => json_resp(
            StatusCode::OK,
            &json!({
                "client_id": claimed.unwrap_or_else(|| format!("{}/cimd/{name}", inner.issuer)),
                "client_name": name,
                "redirect_uris": uris,
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }),
        ),
        None => json_resp(StatusCode::NOT_FOUND, &json!({"error": "not_found"})),
    }
}

fn repeated_msg(name: &str) -> String {
    // Parameter names are the client's, but only known names are echoed.
    const KNOWN: [&str; 12] = [
        "response_type",
        "client_id",
        "redirect_uri",
        "state",
        "scope",
        "resource",
        "code_challenge",
        "code_challenge_method",
        "grant_type",
        "code",
        "code_verifier",
        "refresh_token",
    ];
    if KNOWN.contains(&name) {
        format!("parameter {name} given more than once")
    } else {
        "a parameter was given more than once".into()
    }
}

/// A 400 page for a request that cannot be redirected (unknown client or
/// unregistered redirect URI).
fn bad_client_page(outcome: &mut Outcome, error: &str, description: &str, note: String) -> Resp {
    outcome.error = Some(error.into());
    outcome.note = Some(note);
    let body = format!(
        "<!doctype html><title>Authorization error</title><h1>{error}</h1><p>{description}</p>\n"
    );
    respond(
        StatusCode::BAD_REQUEST,
        "text/html; charset=utf-8",
        body.into_bytes(),
    )
}

fn enc(s: &str) -> String {
    utf8_percent_encode(s, NON_ALPHANUMERIC).to_string()
}

fn redirect(inner: &Inner, redirect_uri: &str, pairs: &[(&str, &str)]) -> Resp {
    let iss = if inner.config.defects.wrong_iss_in_response {
        format!("{}/other", inner.issuer)
    } else {
        inner.issuer.clone()
    };
    let mut loc = redirect_uri.to_string();
    let mut sep = if loc.contains('?') { '&' } else { '?' };
    let drop_state = inner.config.defects.drop_state;
    for (k, v) in pairs
        .iter()
        .copied()
        .filter(|(k, _)| !(drop_state && *k == "state"))
        .chain([("iss", iss.as_str())])
    {
        loc.push(sep);
        sep = '&';
        loc.push_str(k);
        loc.push('=');
        loc.push_str(&enc(v));
    }
    let mut r = respond(StatusCode::FOUND, "text/plain; charset=utf-8", Vec::new());
    match HeaderValue::from_str(&loc) {
        Ok(v) => {
            r.headers_mut().insert(header::LOCATION, v);
            r
        }
        Err(_) => respond(
            StatusCode::BAD_REQUEST,
            "text/plain; charset=utf-8",
            b"redirect_uri is not a valid header value\n".to_vec(),
        ),
    }
}

fn redirect_error(
    inner: &Inner,
    outcome: &mut Outcome,
    redirect_uri: &str,
    state: Option<&str>,
    error: &str,
    description: &str,
) -> Resp {
    outcome.error = Some(error.into());
    let mut pairs = vec![("error", error), ("error_description", description)];
    if let Some(s) = state {
        pairs.push(("state", s));
    }
    redirect(inner, redirect_uri, &pairs)
}

/// Why a client ID metadata document could not be used (a fixed,
/// credential-free text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CimdRefusal {
    NotAUrl,
    HttpsUnsupported,
    NotLoopback,
    Unreachable,
    Status,
    NotJson,
    ClientIdMismatch,
    NoRedirectUris,
}

impl CimdRefusal {
    fn text(self) -> &'static str {
        match self {
            CimdRefusal::NotAUrl => {
                "client_id is not an absolute http(s) URL with a path and no query or fragment"
            }
            CimdRefusal::HttpsUnsupported => {
                "client_id uses https; this loopback fixture fetches loopback http only"
            }
            CimdRefusal::NotLoopback => {
                "client_id host is not a loopback address; refused without a connection"
            }
            CimdRefusal::Unreachable => "client metadata document could not be fetched",
            CimdRefusal::Status => {
                "client metadata document fetch did not answer 200 (redirects are not followed)"
            }
            CimdRefusal::NotJson => "client metadata document is not a JSON object",
            CimdRefusal::ClientIdMismatch => "client metadata document names another client_id",
            CimdRefusal::NoRedirectUris => "client metadata document has no redirect_uris",
        }
    }
}

/// Splits an http(s) URL into (https?, host, port, path). No userinfo, no
/// query, no fragment, a non-empty path.
fn split_url(url: &str) -> Option<(bool, String, u16, String)> {
    let (https, rest) = if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("http://") {
        (false, r)
    } else {
        return None;
    };
    if url.contains('#') || url.bytes().any(|b| b <= b' ' || b >= 0x7f) {
        return None;
    }
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.contains('@') || !path.starts_with('/') || path.len() < 2 || path.contains('?') {
        return None;
    }
    let (host, port) = if let Some(r) = authority.strip_prefix('[') {
        let (h, after) = r.split_once(']')?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (format!("[{h}]"), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None if https => 443,
        None => 80,
    };
    if host.is_empty() {
        return None;
    }
    Some((https, host.to_ascii_lowercase(), port, path.to_string()))
}

/// The loopback IP a host names, without any name resolution: an IP literal
/// in 127.0.0.0/8 or `::1`, or `localhost`.
fn loopback_ip(host: &str) -> Option<IpAddr> {
    if host == "localhost" {
        return Some(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    let literal = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let ip: IpAddr = literal.parse().ok()?;
    ip.is_loopback().then_some(ip)
}

/// Fetches a client ID metadata document under the fixture's trust policy:
/// loopback http only, no redirects followed, bounded size and time.
/// Records one `FETCH` event and returns the document's redirect URIs.
async fn fetch_cimd(inner: &Inner, client_id: &str) -> Result<Vec<String>, CimdRefusal> {
    let mut event = Event {
        seq: 0,
        method: "FETCH".into(),
        // A query is refused below; it is recorded only as a digest.
        path: query_digested(client_id),
        status: 0,
        params: BTreeMap::new(),
        error: None,
        note: None,
        issued: BTreeMap::new(),
    };
    let check_id = !inner.config.defects.ignore_cimd_client_id;
    let follow = inner.config.defects.follow_cimd_redirects;
    let result = fetch_cimd_inner(client_id, check_id, follow, &mut event.status).await;
    event.note = match result {
        Ok(_) if inner.config.defects.unrecorded_cimd_policy => None,
        Ok(_) => Some(format!("fetched under policy {CIMD_TRUST_POLICY}")),
        Err(r) => Some(format!("refused: {}", r.text())),
    };
    inner.record(event);
    result
}

async fn fetch_cimd_inner(
    client_id: &str,
    check_id: bool,
    follow: bool,
    status: &mut u16,
) -> Result<Vec<String>, CimdRefusal> {
    let (https, host, port, path) = split_url(client_id).ok_or(CimdRefusal::NotAUrl)?;
    let ip = loopback_ip(&host).ok_or(CimdRefusal::NotLoopback)?;
    if https {
        return Err(CimdRefusal::HttpsUnsupported);
    }
    let (mut code, mut location, mut body) = fetch_once(ip, &host, port, &path).await?;
    // The `follow_cimd_redirects` defect: one hop, loopback http only.
    if follow
        && (300..400).contains(&code)
        && let Some((false, h, p, path)) = location.take().and_then(|l| split_url(&l))
        && let Some(ip) = loopback_ip(&h)
    {
        (code, location, body) = fetch_once(ip, &h, p, &path).await?;
    }
    let _ = location;
    *status = code;
    if code != 200 {
        return Err(CimdRefusal::Status);
    }
    let doc: Value = serde_json::from_slice(&body).map_err(|_| CimdRefusal::NotJson)?;
    if !doc.is_object() {
        return Err(CimdRefusal::NotJson);
    }
    if check_id && doc.get("client_id").and_then(Value::as_str) != Some(client_id) {
        return Err(CimdRefusal::ClientIdMismatch);
    }
    let uris: Vec<String> = doc
        .get("redirect_uris")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    if uris.is_empty() {
        return Err(CimdRefusal::NoRedirectUris);
    }
    Ok(uris)
}

/// One GET of a loopback document: (status, `Location`, body).
async fn fetch_once(
    ip: IpAddr,
    host: &str,
    port: u16,
    path: &str,
) -> Result<(u16, Option<String>, Vec<u8>), CimdRefusal> {
    let fetch = async {
        let mut s = tokio::net::TcpStream::connect(SocketAddr::new(ip, port))
            .await
            .ok()?;
        let req = format!(
            "GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
        );
        s.write_all(req.as_bytes()).await.ok()?;
        let mut buf = Vec::new();
        s.take(MAX_BODY as u64 + 8192)
            .read_to_end(&mut buf)
            .await
            .ok()?;
        Some(buf)
    };
    let raw = tokio::time::timeout(FETCH_TIMEOUT, fetch)
        .await
        .ok()
        .flatten()
        .ok_or(CimdRefusal::Unreachable)?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or(CimdRefusal::Unreachable)?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let code: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or(CimdRefusal::Unreachable)?;
    let location = head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("location")
            .then(|| v.trim().to_string())
    });
    Ok((code, location, raw[split + 4..].to_vec()))
}

fn is_pkce_value(s: &str) -> bool {
    (43..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// An absolute URI without a fragment (RFC 8707 section 2).
fn is_resource(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    !scheme.is_empty()
        && scheme.as_bytes()[0].is_ascii_alphabetic()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        && !rest.is_empty()
        && !s.contains('#')
        && !s.bytes().any(|b| b <= b' ' || b >= 0x7f)
}

/// The granted scope: all allowed scopes when none is asked for, otherwise
/// the requested ones if each is allowed.
fn grant_scope(inner: &Inner, requested: Option<&String>) -> Option<String> {
    let allowed = &inner.config.allowed_scopes;
    match requested {
        None => Some(allowed.join(" ")),
        Some(r) => {
            let asked: Vec<&str> = r.split(' ').filter(|s| !s.is_empty()).collect();
            asked
                .iter()
                .all(|s| allowed.iter().any(|a| a == s))
                .then(|| asked.join(" "))
        }
    }
}

async fn authorize(
    inner: &Inner,
    p: &BTreeMap<String, String>,
    repeated: &[String],
    outcome: &mut Outcome,
) -> Resp {
    let Some(client_id) = p.get("client_id") else {
        return bad_client_page(
            outcome,
            "invalid_request",
            "client_id is required",
            "no client_id".into(),
        );
    };
    if repeated
        .iter()
        .any(|r| r == "client_id" || r == "redirect_uri")
    {
        return bad_client_page(
            outcome,
            "invalid_request",
            "client_id and redirect_uri may be given once",
            "repeated client parameter".into(),
        );
    }
    let uris = match fetch_cimd(inner, client_id).await {
        Ok(u) => u,
        Err(r) => {
            return bad_client_page(
                outcome,
                "invalid_client",
                "the client could not be identified",
                format!("client refused: {}", r.text()),
            );
        }
    };
    let Some(redirect_uri) = p.get("redirect_uri") else {
        return bad_client_page(
            outcome,
            "invalid_request",
            "redirect_uri is required",
            "no redirect_uri".into(),
        );
    };
    if matches!(http_authority(redirect_uri), Some(Err(()))) {
        return bad_client_page(
            outcome,
            "invalid_request",
            "redirect_uri is not a valid URI",
            "redirect_uri authority malformed".into(),
        );
    }
    let exact = uris.iter().any(|u| {
        u == redirect_uri
            || (inner.config.defects.prefix_redirect_uri && redirect_uri.starts_with(u.as_str()))
    });
    // RFC 8252 section 7.3: a loopback IP redirect URI registered without a
    // port matches a request naming any port.
    let any_port = uris.iter().find(|u| loopback_any_port(u, redirect_uri));
    if !exact && any_port.is_none() {
        return bad_client_page(
            outcome,
            "invalid_request",
            "redirect_uri is not registered for this client",
            "redirect_uri not an exact match of a registered one".into(),
        );
    }
    // Where the response goes: the request's redirect URI (its port), or
    // with the `fixed_loopback_port` defect the registered one.
    let target = match any_port {
        Some(u) if !exact && inner.config.defects.fixed_loopback_port => u.as_str(),
        _ => redirect_uri.as_str(),
    };
    let state = p.get("state").map(String::as_str);
    let fail = |outcome: &mut Outcome, error: &str, description: &str| {
        redirect_error(inner, outcome, target, state, error, description)
    };
    if let Some(r) = repeated.first() {
        return fail(outcome, "invalid_request", &repeated_msg(r));
    }
    if p.get("response_type").map(String::as_str) != Some("code") {
        return fail(
            outcome,
            "unsupported_response_type",
            "response_type must be code",
        );
    }
    if state.is_none_or(str::is_empty) {
        return fail(outcome, "invalid_request", "state is required");
    }
    if let Some((error, description)) = consent_refusal(inner, client_id, p.get("consent")) {
        return fail(outcome, error, description);
    }
    let method = match p.get("code_challenge_method").map(String::as_str) {
        Some("S256") => "S256",
        Some("plain") if inner.config.defects.accept_plain_pkce => "plain",
        Some("plain") => {
            return fail(
                outcome,
                "invalid_request",
                "code_challenge_method plain is not supported; use S256",
            );
        }
        _ => {
            return fail(
                outcome,
                "invalid_request",
                "code_challenge_method S256 is required",
            );
        }
    };
    let Some(challenge) = p.get("code_challenge").filter(|c| is_pkce_value(c)) else {
        return fail(
            outcome,
            "invalid_request",
            "code_challenge is required (43-128 unreserved characters)",
        );
    };
    let unbound = String::new();
    let resource = match p.get("resource").filter(|r| is_resource(r)) {
        Some(r) => r,
        None if inner.config.defects.ignore_missing_resource => &unbound,
        None => {
            return fail(
                outcome,
                "invalid_target",
                "resource is required: one absolute URI without a fragment",
            );
        }
    };
    let Some(scope) = grant_scope(inner, p.get("scope")) else {
        return fail(outcome, "invalid_scope", "a requested scope is not allowed");
    };
    let code = zeroize::Zeroizing::new(random_token());
    outcome.issued.insert("code".into(), digest(&code));
    inner.store().codes.insert(
        key(&code),
        CodeGrant {
            client_id: client_id.clone(),
            redirect_uri: redirect_uri.clone(),
            challenge: challenge.clone(),
            method,
            resource: resource.clone(),
            scope,
            expires: Instant::now() + inner.config.code_lifetime,
            used: false,
            family: None,
        },
    );
    redirect(
        inner,
        target,
        &[("code", code.as_str()), ("state", state.unwrap_or(""))],
    )
}

/// Why an authorization request of `client_id` lacks the consent its
/// client requires (`None`: no consent step, or a consent given for it).
fn consent_refusal(
    inner: &Inner,
    client_id: &str,
    consent: Option<&String>,
) -> Option<(&'static str, &'static str)> {
    let store = inner.store();
    if !store.consent_clients.contains(client_id) {
        return None;
    }
    let Some(consent) = consent else {
        return Some(("consent_required", "consent for this client is required"));
    };
    if consent.len() != 43
        || !consent
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Some(("invalid_request", "consent is malformed"));
    }
    match store.consents.get(&key(consent)) {
        None => Some(("consent_required", "consent is not valid")),
        Some(c) if c != client_id && !inner.config.defects.consent_not_client_bound => {
            Some(("consent_required", "consent was given for another client"))
        }
        Some(_) => None,
    }
}

/// `POST /consent` with `client_id`: the synthetic user approves that
/// client; the answer is a consent approval bound to it.
fn consent(inner: &Inner, p: &BTreeMap<String, String>, outcome: &mut Outcome) -> Resp {
    let Some(client_id) = p.get("client_id") else {
        return token_error(outcome, "invalid_request", "client_id is required");
    };
    let mut store = inner.store();
    if !store.consent_clients.contains(client_id) {
        return token_error(
            outcome,
            "invalid_request",
            "this client has no consent step",
        );
    }
    let value = zeroize::Zeroizing::new(random_token());
    store.consents.insert(key(&value), client_id.clone());
    outcome.issued.insert("consent".into(), digest(&value));
    outcome.note = Some("consent approved for this client_id".into());
    json_resp(
        StatusCode::OK,
        &json!({"consent": value.as_str(), "client_id": client_id}),
    )
}

/// (lower-cased host, port, everything after the authority) of a URI.
type Authority<'a> = (String, Option<u16>, &'a str);

/// The lower-cased host, port and the rest of an `http(s)` URI; `Some(Err)`
/// when its authority is malformed (an empty host, a port that is not a
/// number); `None` when it is not `http(s)` at all.
fn http_authority(uri: &str) -> Option<Result<Authority<'_>, ()>> {
    let rest = uri
        .strip_prefix("http://")
        .or_else(|| uri.strip_prefix("https://"))?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let (host, port) = match authority.strip_prefix('[') {
        Some(r) => match r.split_once(']') {
            Some((h, "")) => (h, None),
            Some((h, p)) => match p.strip_prefix(':') {
                Some(p) => (h, Some(p)),
                None => return Some(Err(())),
            },
            None => return Some(Err(())),
        },
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        },
    };
    let port = match port.map(str::parse::<u16>) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(_)) => return Some(Err(())),
    };
    if host.is_empty() {
        return Some(Err(()));
    }
    Some(Ok((host.to_ascii_lowercase(), port, tail)))
}

/// `registered` is an `http` loopback IP literal URI without a port, and
/// `requested` is the same URI with any port (RFC 8252 section 7.3): only
/// the port may differ. A port is written as a client binds one (1 to
/// 65535, decimal digits, no leading zero, no sign), and neither URI may
/// carry userinfo (`http://evil@127.0.0.1:1/cb` is another URI).
fn loopback_any_port(registered: &str, requested: &str) -> bool {
    if !registered.starts_with("http://") || !requested.starts_with("http://") {
        return false;
    }
    let authority = |uri: &str| {
        let rest = &uri["http://".len()..];
        rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())].to_string()
    };
    let (reg_authority, req_authority) = (authority(registered), authority(requested));
    if reg_authority.contains('@') || req_authority.contains('@') {
        return false;
    }
    let port_text = match req_authority.rfind([':', ']']) {
        Some(i) if req_authority.as_bytes()[i] == b':' => &req_authority[i + 1..],
        _ => return false,
    };
    if port_text.is_empty()
        || !port_text.bytes().all(|b| b.is_ascii_digit())
        || port_text.starts_with('0')
    {
        return false;
    }
    match (http_authority(registered), http_authority(requested)) {
        (Some(Ok((h, None, tail))), Some(Ok((rh, Some(_), rtail)))) => {
            h == rh && tail == rtail && h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
        }
        _ => false,
    }
}

fn token_error(outcome: &mut Outcome, error: &str, description: &str) -> Resp {
    outcome.error = Some(error.into());
    json_resp(
        StatusCode::BAD_REQUEST,
        &json!({"error": error, "error_description": description}),
    )
}

fn revoke_family(store: &mut Store, family: Option<u64>) {
    if let Some(f) = family.and_then(|f| store.families.get_mut(&f)) {
        f.revoked = true;
    }
}

/// Issues an access token and a refresh token in `family`.
fn issue(inner: &Inner, store: &mut Store, family: u64, outcome: &mut Outcome) -> Resp {
    let f = &store.families[&family];
    let now = unix_now();
    let lifetime = inner.config.token_lifetime.as_secs();
    let claims = Claims {
        iss: inner.issuer.clone(),
        sub: SUBJECT.into(),
        aud: f.resource.clone(),
        client_id: f.client_id.clone(),
        scope: f.scope.clone(),
        iat: now,
        exp: now + lifetime,
        jti: random_token(),
    };
    let scope = f.scope.clone();
    let access = zeroize::Zeroizing::new(inner.signer.sign(&claims));
    let refresh = zeroize::Zeroizing::new(random_token());
    store.jtis.insert(claims.jti.clone(), family);
    store.refresh.insert(
        key(&refresh),
        RefreshRecord {
            family,
            rotated: false,
        },
    );
    outcome
        .issued
        .insert("access_token".into(), digest(&access));
    outcome
        .issued
        .insert("refresh_token".into(), digest(&refresh));
    outcome.issued.insert("jti".into(), claims.jti.clone());
    json_resp(
        StatusCode::OK,
        &json!({
            "access_token": access.as_str(),
            "token_type": "Bearer",
            "expires_in": lifetime,
            "refresh_token": refresh.as_str(),
            "scope": scope,
        }),
    )
}

fn token(inner: &Inner, p: &BTreeMap<String, String>, outcome: &mut Outcome) -> Resp {
    if p.contains_key("client_secret") {
        return token_error(
            outcome,
            "invalid_client",
            "this server accepts public clients only (token_endpoint_auth_method none)",
        );
    }
    match p.get("grant_type").map(String::as_str) {
        Some("authorization_code") => code_grant(inner, p, outcome),
        Some("refresh_token") => refresh_grant(inner, p, outcome),
        Some(_) => token_error(
            outcome,
            "unsupported_grant_type",
            "grant_type is not supported",
        ),
        None => token_error(outcome, "invalid_request", "grant_type is required"),
    }
}

fn code_grant(inner: &Inner, p: &BTreeMap<String, String>, outcome: &mut Outcome) -> Resp {
    let (Some(code), Some(client_id), Some(redirect_uri), Some(verifier)) = (
        p.get("code"),
        p.get("client_id"),
        p.get("redirect_uri"),
        p.get("code_verifier"),
    ) else {
        return token_error(
            outcome,
            "invalid_request",
            "code, client_id, redirect_uri and code_verifier are required",
        );
    };
    let mut store = inner.store();
    let store = &mut *store;
    let Some(grant) = store.codes.get_mut(&key(code)) else {
        return token_error(
            outcome,
            "invalid_grant",
            "the authorization code is not valid",
        );
    };
    if grant.used {
        let family = grant.family;
        revoke_family(store, family);
        outcome.note = Some("authorization code reused; tokens issued from it revoked".into());
        return token_error(
            outcome,
            "invalid_grant",
            "the authorization code is not valid",
        );
    }
    // Any presentation consumes the code.
    grant.used = true;
    if Instant::now() >= grant.expires {
        return token_error(
            outcome,
            "invalid_grant",
            "the authorization code has expired",
        );
    }
    let unbound = inner.config.defects.unbound_code;
    if !unbound && &grant.client_id != client_id {
        return token_error(
            outcome,
            "invalid_grant",
            "the authorization code was issued to another client",
        );
    }
    if !unbound && &grant.redirect_uri != redirect_uri {
        return token_error(
            outcome,
            "invalid_grant",
            "redirect_uri differs from the authorization request",
        );
    }
    let computed = match grant.method {
        "plain" => verifier.clone(),
        _ => URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())),
    };
    if !inner.config.defects.ignore_verifier
        && (!is_pkce_value(verifier) || computed != grant.challenge)
    {
        return token_error(
            outcome,
            "invalid_grant",
            "code_verifier does not match the code challenge",
        );
    }
    let resource = match p.get("resource") {
        Some(r) if inner.config.defects.issue_for_any_resource && is_resource(r) => r.clone(),
        Some(r) if r == &grant.resource => r.clone(),
        Some(_) => {
            return token_error(
                outcome,
                "invalid_target",
                "resource differs from the authorization request",
            );
        }
        None => return token_error(outcome, "invalid_target", "resource is required"),
    };
    let family_id = store.next_family;
    store.next_family += 1;
    grant.family = Some(family_id);
    let f = Family {
        client_id: grant.client_id.clone(),
        resource,
        scope: grant.scope.clone(),
        revoked: false,
    };
    store.families.insert(family_id, f);
    issue(inner, store, family_id, outcome)
}

fn refresh_grant(inner: &Inner, p: &BTreeMap<String, String>, outcome: &mut Outcome) -> Resp {
    let (Some(refresh), Some(client_id)) = (p.get("refresh_token"), p.get("client_id")) else {
        return token_error(
            outcome,
            "invalid_request",
            "refresh_token and client_id are required",
        );
    };
    let mut store = inner.store();
    let store = &mut *store;
    let Some(rec) = store.refresh.get_mut(&key(refresh)) else {
        return token_error(outcome, "invalid_grant", "the refresh token is not valid");
    };
    let family_id = rec.family;
    if rec.rotated {
        revoke_family(store, Some(family_id));
        outcome.note = Some("rotated refresh token replayed; its family revoked".into());
        return token_error(outcome, "invalid_grant", "the refresh token is not valid");
    }
    let family = store
        .families
        .get_mut(&family_id)
        .expect("every refresh token has a family");
    if family.revoked {
        return token_error(outcome, "invalid_grant", "the refresh token is not valid");
    }
    if &family.client_id != client_id {
        return token_error(
            outcome,
            "invalid_grant",
            "the refresh token was issued to another client",
        );
    }
    match p.get("resource") {
        Some(r) if inner.config.defects.issue_for_any_resource && is_resource(r) => {
            family.resource = r.clone();
        }
        Some(r) if r == &family.resource => {}
        Some(_) => {
            return token_error(
                outcome,
                "invalid_target",
                "resource differs from the original grant",
            );
        }
        None => return token_error(outcome, "invalid_target", "resource is required"),
    }
    if let Some(s) = p.get("scope") {
        let granted: Vec<&str> = family.scope.split(' ').collect();
        let asked: Vec<&str> = s.split(' ').filter(|x| !x.is_empty()).collect();
        if !asked.iter().all(|a| granted.contains(a)) {
            return token_error(outcome, "invalid_scope", "scope exceeds the original grant");
        }
        family.scope = asked.join(" ");
    }
    if !inner.config.defects.no_rotation {
        store
            .refresh
            .get_mut(&key(refresh))
            .expect("looked up above")
            .rotated = true;
    }
    issue(inner, store, family_id, outcome)
}

fn introspect(inner: &Inner, p: &BTreeMap<String, String>) -> Resp {
    let inactive = || json_resp(StatusCode::OK, &json!({"active": false}));
    let Some(token) = p.get("token") else {
        return inactive();
    };
    let store = inner.store();
    // An access token: signature, issuer and expiry; its audience is
    // reported, not checked (the caller compares it).
    let jwks = inner.signer.jwks();
    if token.contains('.') {
        let aud = super::jwt::unverified_audience(token);
        let Some(aud) = aud else { return inactive() };
        let Ok(claims) = verify_access_token(token, &jwks, &inner.issuer, &aud, unix_now()) else {
            return inactive();
        };
        let revoked = store
            .jtis
            .get(&claims.jti)
            .and_then(|f| store.families.get(f))
            .is_none_or(|f| f.revoked);
        if revoked {
            return inactive();
        }
        return json_resp(
            StatusCode::OK,
            &json!({
                "active": true,
                "token_type": "Bearer",
                "aud": claims.aud,
                "iss": claims.iss,
                "sub": claims.sub,
                "client_id": claims.client_id,
                "scope": claims.scope,
                "exp": claims.exp,
            }),
        );
    }
    let Some(rec) = store.refresh.get(&key(token)) else {
        return inactive();
    };
    match store.families.get(&rec.family) {
        Some(f) if !f.revoked && !rec.rotated => json_resp(
            StatusCode::OK,
            &json!({
                "active": true,
                "token_type": "refresh_token",
                "aud": f.resource,
                "iss": inner.issuer,
                "client_id": f.client_id,
                "scope": f.scope,
            }),
        ),
        _ => inactive(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_loopback() {
        assert_eq!(
            split_url("http://127.0.0.1:8080/cimd/a"),
            Some((false, "127.0.0.1".into(), 8080, "/cimd/a".into()))
        );
        assert_eq!(split_url("http://u@127.0.0.1/x"), None);
        assert_eq!(split_url("http://127.0.0.1"), None);
        assert_eq!(split_url("http://127.0.0.1/x#f"), None);
        assert_eq!(split_url("http://127.0.0.1/x?code=1"), None);
        assert!(loopback_ip("[::1]").is_some());
        assert!(loopback_ip("127.9.0.1").is_some());
        assert!(loopback_ip("10.0.0.1").is_none());
        assert!(loopback_ip("example.com").is_none());
        // A name that merely starts like a loopback address is not one.
        assert!(loopback_ip("127.0.0.1.example.com").is_none());
    }

    #[test]
    fn a_portless_loopback_redirect_uri_matches_any_port_and_nothing_else() {
        let reg = "http://127.0.0.1/callback";
        assert!(loopback_any_port(reg, "http://127.0.0.1:49152/callback"));
        assert!(loopback_any_port("http://[::1]/cb", "http://[::1]:5/cb"));
        assert!(!loopback_any_port(reg, "http://127.0.0.1:49152/callback/x"));
        assert!(!loopback_any_port(reg, "http://127.0.0.2:49152/callback"));
        assert!(!loopback_any_port(reg, "https://127.0.0.1:49152/callback"));
        assert!(!loopback_any_port(
            "http://localhost/cb",
            "http://localhost:5/cb"
        ));
        assert!(!loopback_any_port(
            "http://127.0.0.1:80/cb",
            "http://127.0.0.1:5/cb"
        ));
        // Only the port may vary, written as a client binds one.
        let reg = "http://127.0.0.1/cb";
        assert!(loopback_any_port(reg, "http://127.0.0.1:1/cb"));
        assert!(loopback_any_port(reg, "http://127.0.0.1:65535/cb"));
        for other in [
            "http://evil@127.0.0.1:1/cb",
            "http://a:b@127.0.0.1:1/cb",
            "http://127.0.0.1:0/cb",
            "http://127.0.0.1:01/cb",
            "http://127.0.0.1:+1/cb",
            "http://127.0.0.1:65536/cb",
            "http://127.0.0.1:/cb",
            "http://127.0.0.1/cb?x",
        ] {
            assert!(!loopback_any_port(reg, other), "{other}");
        }
        assert!(!loopback_any_port(
            "http://evil@127.0.0.1/cb",
            "http://evil@127.0.0.1:1/cb"
        ));
        assert!(!loopback_any_port("http://[::1]/cb", "http://[::1]:0/cb"));
        assert_eq!(
            http_authority("http://127.0.0.1:not-a-port/cb"),
            Some(Err(()))
        );
        assert_eq!(http_authority("http:///cb"), Some(Err(())));
        assert_eq!(http_authority("com.example.app:/cb"), None);
    }

    #[test]
    fn forms_keep_first_and_report_repeats() {
        let (m, rep) = parse_form("a=1&b=x+y%2B&a=2");
        assert_eq!(m["a"], "1");
        assert_eq!(m["b"], "x y+");
        assert_eq!(rep, vec!["a".to_string()]);
    }
}
