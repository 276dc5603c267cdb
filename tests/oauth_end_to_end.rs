#![cfg(feature = "server")]
//! End to end over real loopback sockets: the loopback authorization fixture
//! (`server::oauth::Fixture`, in process) and the OAuth-protected reference
//! subject (`mcpres serve --transport http --auth loopback`, a child process).
//!
//! The test is the client: it registers a client ID metadata document with a
//! loopback redirect URI whose listener it owns, discovers the authorization
//! server from the subject's 401 (RFC 9728), reads the fixture's RFC 8414
//! metadata, runs the authorization code flow with PKCE S256 and an RFC 8707
//! `resource`, and calls the subject with the token. Every credential is
//! synthetic and lives as long as its test.

mod server_support;
mod support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use percent_encoding::{NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use mcpres::server::oauth::{Fixture, FixtureConfig, digest};
use server_support::{
    HttpReply, HttpServer, LEGACY, exchange, initialize_params, initialized_then_list_tools, post,
    request,
};

/// Bound of every wait here; never reached by servers that behave.
const T: Duration = Duration::from_secs(20);

/// `http://127.0.0.1:PORT/PATH` as (port, path); any other host fails the
/// test (everything here is loopback).
fn split_url(url: &str) -> (u16, String) {
    let rest = url
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("`{url}` is not a 127.0.0.1 http URL"));
    let (port, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    (port.parse().expect("a port"), path.to_owned())
}

fn http_get(url: &str) -> HttpReply {
    let (port, path) = split_url(url);
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    exchange(port, req.as_bytes(), T)
}

fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            format!(
                "{}={}",
                utf8_percent_encode(k, NON_ALPHANUMERIC),
                utf8_percent_encode(v, NON_ALPHANUMERIC)
            )
        })
        .collect::<Vec<_>>()
        .join("&")
}

fn parse_query(query: &str) -> BTreeMap<String, String> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let dec = |s: &str| {
                percent_decode_str(&s.replace('+', " "))
                    .decode_utf8()
                    .expect("UTF-8")
                    .into_owned()
            };
            (dec(k), dec(v))
        })
        .collect()
}

fn http_post_form(url: &str, pairs: &[(&str, &str)]) -> HttpReply {
    let (port, path) = split_url(url);
    let body = form(pairs);
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    exchange(port, req.as_bytes(), T)
}

fn json_body(r: &HttpReply) -> Value {
    serde_json::from_slice(&r.body)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&r.body)))
}

/// 32 random bytes, base64url: a PKCE verifier (43 characters) or a state.
fn random_value() -> String {
    let mut buf = [0u8; 32];
    getrandom::fill(&mut buf).expect("the OS random source works");
    URL_SAFE_NO_PAD.encode(buf)
}

/// One parameter of a `WWW-Authenticate: Bearer` challenge (quoted values).
fn challenge_param(challenge: &str, name: &str) -> Option<String> {
    let rest = challenge.strip_prefix("Bearer ")?;
    rest.split(", ").find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim() == name).then(|| v.trim_matches('"').to_owned())
    })
}

/// What a completed authorization code grant left the client with.
struct Grant {
    code: String,
    verifier: String,
    state: String,
    access: String,
    refresh: String,
}

impl Grant {
    /// Every credential of the grant, for the "never in clear" checks.
    fn credentials(&self) -> [(&'static str, &str); 5] {
        [
            ("code", &self.code),
            ("verifier", &self.verifier),
            ("state", &self.state),
            ("access token", &self.access),
            ("refresh token", &self.refresh),
        ]
    }
}

/// The client side: a fixture, one registered client and the redirect
/// listener the client owns.
struct Client {
    fixture: Fixture,
    client_id: String,
    redirect_uri: String,
    redirect: TcpListener,
}

impl Client {
    fn start() -> Client {
        let fixture = Fixture::start(FixtureConfig::default()).expect("the fixture starts");
        let redirect = TcpListener::bind("127.0.0.1:0").expect("bind the redirect listener");
        let redirect_uri = format!(
            "http://127.0.0.1:{}/callback",
            redirect.local_addr().unwrap().port()
        );
        let client_id = fixture
            .register_client("e2e", &[&redirect_uri])
            .expect("a client ID metadata document");
        Client {
            fixture,
            client_id,
            redirect_uri,
            redirect,
        }
    }

    fn issuer(&self) -> &str {
        self.fixture.issuer()
    }

    /// Follow the authorization response's redirect as a user agent would:
    /// send it to the redirect listener, accept it there and answer it.
    /// Returns the parameters the listener received.
    fn deliver_redirect(&self, location: &str) -> BTreeMap<String, String> {
        let rest = location
            .strip_prefix(&self.redirect_uri)
            .unwrap_or_else(|| panic!("redirected elsewhere: {location}"));
        let query = rest.strip_prefix('?').expect("a query on the redirect");
        let (port, _) = split_url(&self.redirect_uri);
        let mut agent =
            TcpStream::connect(("127.0.0.1", port)).expect("reach the redirect listener");
        agent.set_read_timeout(Some(T)).unwrap();
        let path = location
            .strip_prefix(&format!("http://127.0.0.1:{port}"))
            .unwrap();
        agent
            .write_all(
                format!(
                    "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
                )
                .as_bytes(),
            )
            .unwrap();
        let (mut conn, _) = self.redirect.accept().expect("the redirect arrives");
        conn.set_read_timeout(Some(T)).unwrap();
        let mut head = Vec::new();
        let mut chunk = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = conn.read(&mut chunk).expect("read the redirect");
            assert!(n > 0, "the redirect request ended early");
            head.extend_from_slice(&chunk[..n]);
        }
        let line = String::from_utf8_lossy(&head)
            .lines()
            .next()
            .unwrap()
            .to_owned();
        let target = line.split(' ').nth(1).expect("a request target");
        let (got_path, got_query) = target.split_once('?').expect("a query");
        assert_eq!(got_path, "/callback");
        assert_eq!(got_query, query);
        conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .unwrap();
        drop(conn);
        let mut answer = Vec::new();
        agent.read_to_end(&mut answer).unwrap();
        assert!(answer.starts_with(b"HTTP/1.1 200"));
        parse_query(got_query)
    }

    /// Discover the authorization server from the subject on `port`, run the
    /// code flow with PKCE S256 for the subject's resource, and exchange the
    /// code. Returns the grant and the subject's resource identifier.
    fn authorize(&self, port: u16) -> (Grant, String) {
        // 1. An unauthenticated request: 401 naming the metadata.
        let r = initialize(port, None);
        assert_eq!(r.status, 401);
        let challenge = r
            .header("www-authenticate")
            .expect("a challenge")
            .to_owned();
        let prm_url = challenge_param(&challenge, "resource_metadata")
            .unwrap_or_else(|| panic!("no resource_metadata in {challenge}"));
        // 2. The protected-resource metadata (RFC 9728).
        let prm = http_get(&prm_url);
        assert_eq!(prm.status, 200);
        let prm = json_body(&prm);
        let resource = prm["resource"].as_str().expect("resource").to_owned();
        assert_eq!(resource, format!("http://127.0.0.1:{port}/mcp"));
        let servers = prm["authorization_servers"].as_array().expect("servers");
        assert_eq!(servers, &[json!(self.issuer())]);
        let issuer = servers[0].as_str().unwrap();
        // 3. The authorization server metadata (RFC 8414), issuer checked.
        let asm = http_get(&format!("{issuer}/.well-known/oauth-authorization-server"));
        assert_eq!(asm.status, 200);
        let asm = json_body(&asm);
        assert_eq!(asm["issuer"], issuer, "mix-up defence: the issuer matches");
        assert!(
            asm["code_challenge_methods_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("S256"))
        );
        assert_eq!(asm["client_id_metadata_document_supported"], true);
        let authorize_url = asm["authorization_endpoint"].as_str().unwrap();
        let token_url = asm["token_endpoint"].as_str().unwrap();
        // 4. Authorization request with PKCE S256 and the resource.
        let verifier = random_value();
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let state = random_value();
        let query = form(&[
            ("response_type", "code"),
            ("client_id", &self.client_id),
            ("redirect_uri", &self.redirect_uri),
            ("state", &state),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("resource", &resource),
            ("scope", "mcp"),
        ]);
        let r = http_get(&format!("{authorize_url}?{query}"));
        assert_eq!(r.status, 302, "{}", String::from_utf8_lossy(&r.body));
        let back = self.deliver_redirect(r.header("location").expect("a Location"));
        assert_eq!(back["state"], state, "the state comes back unchanged");
        assert_eq!(back["iss"], issuer, "the response names the issuer");
        let code = back["code"].clone();
        // 5. Token request.
        let t = http_post_form(
            token_url,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &self.redirect_uri),
                ("client_id", &self.client_id),
                ("code_verifier", &verifier),
                ("resource", &resource),
            ],
        );
        assert_eq!(t.status, 200, "{}", String::from_utf8_lossy(&t.body));
        let t = json_body(&t);
        assert_eq!(t["token_type"], "Bearer");
        let grant = Grant {
            code,
            verifier,
            state,
            access: t["access_token"].as_str().expect("access_token").to_owned(),
            refresh: t["refresh_token"]
                .as_str()
                .expect("refresh_token")
                .to_owned(),
        };
        (grant, resource)
    }

    /// The fixture's audit log holds none of `secrets` in clear, nor any
    /// dot-separated part of a token.
    fn assert_no_credentials_in_events(&self, secrets: &[(&str, &str)]) {
        let events = serde_json::to_string(&self.fixture.events()).unwrap();
        for (what, s) in secrets {
            assert!(!events.contains(s), "the {what} is in the fixture's events");
            for part in s.split('.').skip(1) {
                assert!(
                    !events.contains(part),
                    "part of the {what} is in the events"
                );
            }
        }
    }

    fn passthrough_probes(&self) -> Vec<mcpres::server::oauth::Event> {
        self.fixture
            .events()
            .into_iter()
            .filter(|e| e.path == "/passthrough-probe")
            .collect()
    }

    /// Stop the fixture and close the redirect listener; afterwards nothing
    /// listens on either port.
    fn stop(self) {
        let fixture_port = self.fixture.local_addr().port();
        let (redirect_port, _) = split_url(&self.redirect_uri);
        let since = support::boot_ticks();
        self.fixture.stop();
        drop(self.redirect);
        for port in [fixture_port, redirect_port] {
            support::assert_port_released(port, since, "after stop");
        }
    }
}

fn start_subject(issuer: &str, extra: &[&str]) -> HttpServer {
    let mut args = vec!["--auth", "loopback", "--auth-issuer", issuer];
    args.extend_from_slice(extra);
    HttpServer::start_on(support::free_port(), &args)
}

/// Stop a subject (SIGTERM, exit 0) and return its stderr; its port is
/// closed afterwards.
fn stop_subject(srv: HttpServer) -> String {
    let port = srv.port;
    let (status, err) = srv.stop();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the subject's port still accepts connections"
    );
    err
}

/// POST `initialize` with `token` as the bearer token (none when `None`).
fn initialize(port: u16, token: Option<&str>) -> HttpReply {
    let auth = token.map(|t| format!("Bearer {t}"));
    let h: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
    let body = request(1, "initialize", initialize_params()).to_string();
    post(port, body.as_bytes(), &h, T)
}

fn assert_accepted(reply: &HttpReply) {
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.response_to(1)["result"]["protocolVersion"], LEGACY);
}

/// A 401 `invalid_token` refusal naming `why`, in the challenge and the body.
fn assert_refused(reply: &HttpReply, why: &str) {
    assert_eq!(reply.status, 401, "{why}");
    let challenge = reply.header("www-authenticate").expect("a challenge");
    assert_eq!(
        challenge_param(challenge, "error").as_deref(),
        Some("invalid_token"),
        "{challenge}"
    );
    assert_eq!(
        challenge_param(challenge, "error_description").as_deref(),
        Some(why),
        "{challenge}"
    );
    assert_eq!(json_body(reply)["error"]["data"]["reason"], why);
}

#[test]
fn a_client_discovers_authorizes_and_calls_the_protected_subject() {
    let client = Client::start();
    let srv = start_subject(client.issuer(), &[]);
    let port = srv.port;
    let (grant, resource) = client.authorize(port);

    // initialize, initialized, tools/list: all with the token.
    let init = initialize(port, Some(&grant.access));
    assert_accepted(&init);
    let sid = init.header("mcp-session-id").expect("a session").to_owned();
    let auth = format!("Bearer {}", grant.access);
    let h = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", LEGACY),
        ("Authorization", auth.as_str()),
    ];
    let tools = initialized_then_list_tools(port, &h, T);
    assert!(!tools.is_empty(), "tools/list lists the tools");

    // A well-formed token of the same issuer for another audience, and an
    // expired one for this resource: each refused for its own reason.
    let other =
        client
            .fixture
            .mint_access_token(&client.client_id, "http://127.0.0.1:1/mcp", "mcp", 300);
    assert_refused(&initialize(port, Some(&other)), "wrong-audience");
    let expired = client
        .fixture
        .mint_access_token(&client.client_id, &resource, "mcp", -60);
    assert_refused(&initialize(port, Some(&expired)), "expired");

    // Without the defects: nothing forwarded, nothing logged.
    assert!(
        client.passthrough_probes().is_empty(),
        "nothing was forwarded"
    );
    let err = stop_subject(srv);
    for (what, s) in grant.credentials().into_iter().chain([
        ("wrong-audience token", other.as_str()),
        ("expired token", expired.as_str()),
    ]) {
        assert!(!err.contains(s), "the {what} is on the subject's stderr");
    }
    let mut secrets = grant.credentials().to_vec();
    secrets.extend([
        ("wrong-audience token", other.as_str()),
        ("expired token", expired.as_str()),
    ]);
    client.assert_no_credentials_in_events(&secrets);
    // The issued credentials are in the audit log as digests.
    let events = serde_json::to_string(&client.fixture.events()).unwrap();
    for s in [&grant.code, &grant.access, &grant.refresh] {
        assert!(
            events.contains(&digest(s)),
            "a credential's digest is recorded"
        );
    }
    client.stop();
}

#[test]
fn the_token_passthrough_defect_shows_in_the_fixture_audit_as_a_digest() {
    let client = Client::start();
    let srv = start_subject(client.issuer(), &["--auth-defect", "token-passthrough"]);
    let (grant, _) = client.authorize(srv.port);
    // The discovery request carried no token: nothing forwarded yet.
    assert!(client.passthrough_probes().is_empty());
    assert_accepted(&initialize(srv.port, Some(&grant.access)));
    let probes = client.passthrough_probes();
    assert_eq!(probes.len(), 1, "{probes:?}");
    assert_eq!(probes[0].method, "GET");
    assert_eq!(
        probes[0].params.get("authorization"),
        Some(&digest(&format!("Bearer {}", grant.access))),
        "the forwarded header is recorded as its digest"
    );
    let err = stop_subject(srv);
    assert!(
        !err.contains(&grant.access),
        "passthrough does not log the token"
    );
    client.assert_no_credentials_in_events(&grant.credentials());
    client.stop();
}

#[test]
fn the_log_token_defect_writes_the_token_to_stderr_and_only_then() {
    let client = Client::start();
    let srv = start_subject(client.issuer(), &["--auth-defect", "log-token"]);
    let (grant, _) = client.authorize(srv.port);
    assert_accepted(&initialize(srv.port, Some(&grant.access)));
    let err = stop_subject(srv);
    assert!(
        err.contains(&grant.access),
        "log-token writes the token to stderr: {err}"
    );
    assert!(
        client.passthrough_probes().is_empty(),
        "log-token forwards nothing"
    );
    client.assert_no_credentials_in_events(&grant.credentials());
    client.stop();
}
