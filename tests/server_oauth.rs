#![cfg(feature = "server")]
//! `mcpres serve --transport http --auth loopback`: the reference server as an
//! OAuth 2.1 protected resource, over real loopback sockets, against a
//! test-local authorization server (`server_support/test_issuer.rs`).
//!
//! Every access token here is synthetic, minted with a fixed test key for a
//! server that lives only as long as its test.

mod server_support;
mod support;
#[path = "server_support/test_issuer.rs"]
mod test_issuer;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use server_support::*;
use test_issuer::{TestIssuer, header, other_key, sign, test_key};

/// Bound of every wait here; never reached by a server that behaves.
const T: Duration = Duration::from_secs(20);
const SCOPE: &str = "mcp:tools";

fn start(issuer: &TestIssuer, extra: &[&str]) -> HttpServer {
    let mut args = vec![
        "--auth",
        "loopback",
        "--auth-issuer",
        &issuer.issuer,
        "--auth-scope",
        SCOPE,
    ];
    args.extend_from_slice(extra);
    HttpServer::start(&args)
}

fn resource(port: u16) -> String {
    format!("http://127.0.0.1:{port}/mcp")
}

fn metadata_url(port: u16) -> String {
    format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp")
}

fn get(port: u16, path: &str) -> HttpReply {
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    exchange(port, req.as_bytes(), T)
}

fn initialize_body() -> Vec<u8> {
    request(1, "initialize", initialize_params())
        .to_string()
        .into_bytes()
}

/// POST `initialize` with `token` as the bearer token (none when `None`).
fn initialize(port: u16, token: Option<&str>) -> HttpReply {
    let auth = token.map(|t| format!("Bearer {t}"));
    let h: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
    post(port, &initialize_body(), &h, T)
}

fn good_token(issuer: &TestIssuer, port: u16) -> String {
    sign(
        &test_key(),
        &header(),
        &issuer.claims(&resource(port), SCOPE),
    )
}

/// A token for `port`'s resource with `f` applied to its claims.
fn token_with(issuer: &TestIssuer, port: u16, f: impl FnOnce(&mut Value)) -> String {
    let mut c = issuer.claims(&resource(port), SCOPE);
    f(&mut c);
    sign(&test_key(), &header(), &c)
}

fn expired(c: &mut Value) {
    c["iat"] = json!(c["iat"].as_u64().unwrap() - 1200);
    c["exp"] = json!(c["iat"].as_u64().unwrap() + 600);
}

fn wrong_audience(c: &mut Value) {
    c["aud"] = json!("http://127.0.0.1:1/mcp");
}

fn reason(reply: &HttpReply) -> String {
    let body: Value = serde_json::from_slice(&reply.body).expect("refusal body is JSON");
    body["error"]["data"]["reason"]
        .as_str()
        .expect("a reason")
        .to_owned()
}

fn assert_invalid(reply: &HttpReply, port: u16, why: &str) {
    assert_eq!(
        reply.status,
        401,
        "{why}: {:?}",
        String::from_utf8_lossy(&reply.body)
    );
    let challenge = reply.header("www-authenticate").expect("a challenge");
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{}\"", metadata_url(port))),
        "{challenge}"
    );
    assert!(
        challenge.contains(&format!("error_description=\"{why}\"")),
        "{challenge}"
    );
    assert_eq!(reason(reply), why);
}

fn assert_accepted(reply: &HttpReply) {
    assert_eq!(
        reply.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.response_to(1)["result"]["protocolVersion"], LEGACY);
}

#[test]
fn metadata_is_public_and_a_request_without_a_token_gets_the_challenge() {
    let issuer = TestIssuer::start(None);
    let srv = start(&issuer, &[]);
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let m = get(srv.port, path);
        assert_eq!(m.status, 200, "{path}");
        let doc: Value = serde_json::from_slice(&m.body).unwrap();
        assert_eq!(
            doc,
            json!({
                "resource": resource(srv.port),
                "authorization_servers": [issuer.issuer],
                "bearer_methods_supported": ["header"],
                "scopes_supported": [SCOPE],
            })
        );
    }
    let r = initialize(srv.port, None);
    assert_eq!(r.status, 401);
    let challenge = r.header("www-authenticate").expect("a challenge");
    assert_eq!(
        challenge,
        format!(
            "Bearer resource_metadata=\"{}\", scope=\"{SCOPE}\"",
            metadata_url(srv.port)
        )
    );
    assert_eq!(reason(&r), "missing-token");
    // A GET on the endpoint and any other path are refused the same way.
    assert_eq!(get(srv.port, "/mcp").status, 401);
    // A token in the query is never read.
    let token = good_token(&issuer, srv.port);
    let body = initialize_body();
    let req = format!(
        "POST /mcp?access_token={token} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        srv.port,
        body.len(),
        String::from_utf8_lossy(&body)
    );
    let q = exchange(srv.port, req.as_bytes(), T);
    assert_eq!(q.status, 401);
    assert_eq!(reason(&q), "missing-token");
    // Another scheme is no bearer token either.
    let basic = post(
        srv.port,
        &body,
        &[("Authorization", "Basic dXNlcjpwYXNz")],
        T,
    );
    assert_eq!(reason(&basic), "missing-token");
    let (status, err) = srv.stop();
    assert_eq!(status.code(), Some(0), "{err}");
}

#[test]
fn a_valid_token_opens_a_session_and_is_never_logged_or_forwarded() {
    let issuer = TestIssuer::start(None);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("injection.jsonl");
    let srv = start(&issuer, &["--injection-log", log.to_str().unwrap()]);
    let token = good_token(&issuer, srv.port);
    let auth = format!("Bearer {token}");
    let init = initialize(srv.port, Some(&token));
    assert_accepted(&init);
    let sid = init
        .header("mcp-session-id")
        .expect("session id")
        .to_owned();
    let h = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", LEGACY),
        ("Authorization", auth.as_str()),
    ];
    let tools = initialized_then_list_tools(srv.port, &h, T);
    assert!(!tools.is_empty(), "tools/list lists the tools");
    // Without the token, the session is no way in.
    let no_token = post(
        srv.port,
        request(3, "tools/list", json!({})).to_string().as_bytes(),
        &h[..2],
        T,
    );
    assert_eq!(no_token.status, 401);
    let port = srv.port;
    let (status, err) = srv.stop();
    assert_eq!(status.code(), Some(0), "{err}");
    let log_text = std::fs::read_to_string(&log).unwrap();
    let signature = token.rsplit('.').next().unwrap();
    for (what, text) in [("stderr", &err), ("injection log", &log_text)] {
        assert!(
            !text.contains(signature),
            "the token is in the {what}: {text}"
        );
    }
    let auth_event = read_log(&log)
        .into_iter()
        .find(|e| e["event"] == "auth")
        .expect("the auth configuration is logged");
    assert_eq!(auth_event["detail"]["resource"], resource(port));
    assert_eq!(auth_event["detail"]["issuer"], issuer.issuer);
    assert_eq!(auth_event["detail"]["defects"], json!([]));
    assert!(issuer.audit().is_empty(), "nothing was forwarded");
}

#[test]
fn each_bad_token_is_refused_for_its_own_reason() {
    let issuer = TestIssuer::start(None);
    let srv = start(&issuer, &[]);
    let port = srv.port;
    let cases: Vec<(&str, String)> = vec![
        ("wrong-audience", token_with(&issuer, port, wrong_audience)),
        ("expired", token_with(&issuer, port, expired)),
        (
            "wrong-issuer",
            token_with(&issuer, port, |c| c["iss"] = json!("http://127.0.0.1:1")),
        ),
        (
            "bad-signature",
            sign(
                &other_key(),
                &header(),
                &issuer.claims(&resource(port), SCOPE),
            ),
        ),
        (
            "unknown-key",
            sign(
                &test_key(),
                &json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "nobody"}),
                &issuer.claims(&resource(port), SCOPE),
            ),
        ),
        (
            "unsupported-algorithm",
            sign(
                &test_key(),
                &json!({"alg": "EdDSA", "typ": "JWT", "kid": test_issuer::KID}),
                &issuer.claims(&resource(port), SCOPE),
            ),
        ),
        ("malformed-token", "not.a-token".to_owned()),
    ];
    for (why, token) in &cases {
        assert_invalid(&initialize(port, Some(token)), port, why);
    }
    // An audience list naming this resource is fine.
    let listed = token_with(&issuer, port, |c| {
        c["aud"] = json!(["http://127.0.0.1:1/mcp", resource(port)])
    });
    assert_accepted(&initialize(port, Some(&listed)));
    // A valid token without the required scope: 403, naming the scope.
    let narrow = token_with(&issuer, port, |c| c["scope"] = json!("mcp:other"));
    let r = initialize(port, Some(&narrow));
    assert_eq!(r.status, 403);
    let challenge = r.header("www-authenticate").unwrap();
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains(&format!("scope=\"{SCOPE}\"")),
        "{challenge}"
    );
    assert_eq!(reason(&r), "insufficient-scope");
    let (status, err) = srv.stop();
    assert_eq!(status.code(), Some(0), "{err}");
    for (_, token) in &cases {
        assert!(!err.contains(token.as_str()), "a token reached stderr");
    }
}

/// `mcpres serve ARGS` expected to refuse to start: exit 2 and its stderr.
fn refused(args: &[&str]) -> String {
    let child = support::command()
        .args(["serve", "--transport", "http", "--port", "0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = support::output_within(child, T, "mcpres serve (refused start)");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("listening on"), "{err}");
    err
}

#[test]
fn the_server_refuses_to_start_without_a_trustworthy_issuer() {
    let err = refused(&[
        "--auth",
        "loopback",
        "--auth-issuer",
        "http://192.0.2.1:8080",
    ]);
    assert!(
        err.contains("--auth-issuer") && err.contains("not on a loopback address"),
        "{err}"
    );
    let err = refused(&[
        "--auth",
        "loopback",
        "--auth-issuer",
        "https://127.0.0.1:8080",
    ]);
    assert!(err.contains("not an http:// URL"), "{err}");
    // The metadata names another issuer: a mix-up, refused.
    let impostor = TestIssuer::start(Some("http://127.0.0.1:1"));
    let err = refused(&["--auth", "loopback", "--auth-issuer", &impostor.issuer]);
    assert!(err.contains("mix-up"), "{err}");
    // No authorization server there at all.
    let gone = format!("http://127.0.0.1:{}", support::free_port());
    let err = refused(&["--auth", "loopback", "--auth-issuer", &gone]);
    assert!(err.contains("authorization server metadata"), "{err}");
    // `--auth` and `--bearer-env` exclude each other.
    let live = TestIssuer::start(None);
    refused(&[
        "--auth",
        "loopback",
        "--auth-issuer",
        &live.issuer,
        "--bearer-env",
        "X",
    ]);
}

#[test]
fn each_token_check_defect_lets_exactly_its_property_through() {
    let issuer = TestIssuer::start(None);
    for (defect, passes) in [
        ("accept-wrong-audience", "wrong-audience"),
        ("accept-expired", "expired"),
        ("skip-signature", "bad-signature"),
    ] {
        let srv = start(&issuer, &["--auth-defect", defect]);
        let port = srv.port;
        let bad: [(&str, String); 3] = [
            ("wrong-audience", token_with(&issuer, port, wrong_audience)),
            ("expired", token_with(&issuer, port, expired)),
            (
                "bad-signature",
                sign(
                    &other_key(),
                    &header(),
                    &issuer.claims(&resource(port), SCOPE),
                ),
            ),
        ];
        for (why, token) in &bad {
            let r = initialize(port, Some(token));
            if *why == passes {
                assert_accepted(&r);
            } else {
                assert_invalid(&r, port, why);
            }
        }
        let (status, err) = srv.stop();
        assert_eq!(status.code(), Some(0), "{defect}: {err}");
    }
}

#[test]
fn the_passthrough_and_logging_defects_leak_the_token_only_when_switched_on() {
    let issuer = TestIssuer::start(None);
    let srv = start(&issuer, &["--auth-defect", "token-passthrough"]);
    let token = good_token(&issuer, srv.port);
    assert_accepted(&initialize(srv.port, Some(&token)));
    assert_eq!(issuer.audit(), vec![format!("Bearer {token}")]);
    let (_, err) = srv.stop();
    assert!(!err.contains(&token), "passthrough does not log");

    let srv = start(&issuer, &["--auth-defect", "log-token"]);
    let token = good_token(&issuer, srv.port);
    assert_accepted(&initialize(srv.port, Some(&token)));
    let (_, err) = srv.stop();
    assert!(
        err.contains(&token),
        "log-token writes the token to stderr: {err}"
    );
    assert_eq!(issuer.audit().len(), 1, "log-token forwards nothing");
}

#[test]
fn the_metadata_defects_change_only_what_they_name() {
    let issuer = TestIssuer::start(None);
    // off-origin-metadata: a non-loopback authorization server listed first.
    let srv = start(&issuer, &["--auth-defect", "off-origin-metadata"]);
    let doc: Value =
        serde_json::from_slice(&get(srv.port, "/.well-known/oauth-protected-resource/mcp").body)
            .unwrap();
    assert_eq!(
        doc["authorization_servers"],
        json!(["http://192.0.2.1/", issuer.issuer])
    );
    assert_eq!(doc["resource"], resource(srv.port));
    let port = srv.port;
    assert_accepted(&initialize(port, Some(&good_token(&issuer, port))));
    assert_invalid(
        &initialize(port, Some(&token_with(&issuer, port, wrong_audience))),
        port,
        "wrong-audience",
    );
    drop(srv);

    // no-www-authenticate: still 401, without the challenge.
    let srv = start(&issuer, &["--auth-defect", "no-www-authenticate"]);
    let r = initialize(srv.port, None);
    assert_eq!(r.status, 401);
    assert!(r.header("www-authenticate").is_none());
    let r = initialize(
        srv.port,
        Some(&token_with(&issuer, srv.port, wrong_audience)),
    );
    assert_eq!((r.status, reason(&r).as_str()), (401, "wrong-audience"));
    assert!(r.header("www-authenticate").is_none());
    assert_accepted(&initialize(srv.port, Some(&good_token(&issuer, srv.port))));
    drop(srv);

    // wrong-issuer-metadata: the mix-up is not noticed at start.
    let impostor = TestIssuer::start(Some("http://127.0.0.1:1"));
    let srv = start(&impostor, &["--auth-defect", "wrong-issuer-metadata"]);
    let r = initialize(srv.port, None);
    assert_eq!(r.status, 401);
    assert_accepted(&initialize(
        srv.port,
        Some(&good_token(&impostor, srv.port)),
    ));
    let (status, err) = srv.stop();
    assert_eq!(status.code(), Some(0), "{err}");
}

#[test]
fn the_scope_and_error_echo_defects_change_only_what_they_name() {
    let issuer = TestIssuer::start(None);
    let unrelated = |c: &mut Value| c["scope"] = json!("unrelated");
    // ignore-scope: a valid token without the required scope is accepted;
    // the token checks still hold.
    let srv = start(&issuer, &["--auth-defect", "ignore-scope"]);
    let port = srv.port;
    assert_accepted(&initialize(
        port,
        Some(&token_with(&issuer, port, unrelated)),
    ));
    assert_invalid(
        &initialize(port, Some(&token_with(&issuer, port, wrong_audience))),
        port,
        "wrong-audience",
    );
    drop(srv);
    // Without it, the same token is refused 403 insufficient_scope.
    let srv = start(&issuer, &[]);
    let r = initialize(srv.port, Some(&token_with(&issuer, srv.port, unrelated)));
    assert_eq!((r.status, reason(&r).as_str()), (403, "insufficient-scope"));
    assert!(
        r.header("www-authenticate")
            .is_some_and(|c| c.contains("error=\"insufficient_scope\"")),
        "{:?}",
        r.header("www-authenticate")
    );
    drop(srv);

    // echo-token-in-error: a refusal repeats the presented token in its
    // body and the token's client_id in its challenge; the reason is kept.
    let srv = start(&issuer, &["--auth-defect", "echo-token-in-error"]);
    let port = srv.port;
    let bad = token_with(&issuer, port, wrong_audience);
    let r = initialize(port, Some(&bad));
    assert_eq!((r.status, reason(&r).as_str()), (401, "wrong-audience"));
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(body["error"]["data"]["presentedToken"], json!(bad));
    let challenge = r.header("www-authenticate").expect("a challenge");
    assert!(
        challenge.contains("error_description=\"wrong-audience (client synthetic-client)\""),
        "{challenge}"
    );
    // A malformed token is echoed as it came; no token, nothing to echo.
    let r = initialize(port, Some("not-a-jwt"));
    assert_eq!((r.status, reason(&r).as_str()), (401, "malformed-token"));
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(body["error"]["data"]["presentedToken"], "not-a-jwt");
    let r = initialize(port, None);
    let body: Value = serde_json::from_slice(&r.body).unwrap();
    assert!(
        body["error"]["data"].get("presentedToken").is_none(),
        "{body}"
    );
    let good = good_token(&issuer, port);
    let r = initialize(port, Some(&good));
    assert_accepted(&r);
    assert!(!String::from_utf8_lossy(&r.body).contains(&good));
    let (status, err) = srv.stop();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(
        !err.contains(&bad),
        "the echo is in the answer, not the log"
    );
}

#[test]
fn a_refused_request_never_reaches_the_fault_schedule() {
    let issuer = TestIssuer::start(None);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("injection.jsonl");
    let srv = start(
        &issuer,
        &[
            "--fault",
            "protocol-error@request-1",
            "--injection-log",
            log.to_str().unwrap(),
        ],
    );
    let port = srv.port;
    // Refused twice (no token, a bad one): the schedule's request 1 is still ahead.
    assert_eq!(initialize(port, None).status, 401);
    let bad = token_with(&issuer, port, expired);
    assert_invalid(&initialize(port, Some(&bad)), port, "expired");
    let r = initialize(port, Some(&good_token(&issuer, port)));
    assert_eq!(r.status, 200);
    assert_eq!(
        r.response_to(1)["error"]["code"],
        -32601,
        "request 1 is the first admitted one"
    );
    let (status, err) = srv.stop();
    assert_eq!(status.code(), Some(0), "{err}");
    let injected: Vec<Value> = read_log(&log)
        .into_iter()
        .filter(|e| e.get("fault").is_some())
        .collect();
    assert_eq!(injected.len(), 1, "{injected:?}");
    assert_eq!(injected[0]["request"]["ordinal"], 1);
}
