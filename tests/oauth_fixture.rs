//! The loopback OAuth 2.1 authorization server fixture (issue 19, part 1),
//! over real loopback sockets with a minimal std::net HTTP client.

mod support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use sha2::{Digest, Sha256};

use mcpres::server::oauth::{
    Defects, Fixture, FixtureConfig, FixtureError, JwkSet, TokenError, verify_access_token,
};

const RESOURCE: &str = "http://127.0.0.1:9/mcp";

struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
    /// The query parameters of the `Location` header.
    fn location_params(&self) -> BTreeMap<String, String> {
        let loc = self.header("location").expect("a Location header");
        let query = loc.split_once('?').map(|(_, q)| q).unwrap_or("");
        query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (decode(k), decode(v))
            })
            .collect()
    }
}

fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).expect("hex escape"));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).expect("UTF-8")
}

fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`).
fn request(base: &str, method: &str, target: &str, form_body: Option<&str>) -> Resp {
    let hostport = base.strip_prefix("http://").expect("an http base");
    let mut s = TcpStream::connect(hostport).expect("connect to the fixture");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req =
        format!("{method} {target} HTTP/1.1\r\nHost: {hostport}\r\nConnection: close\r\n");
    if let Some(b) = form_body {
        req.push_str(&format!(
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{b}",
            b.len()
        ));
    } else {
        req.push_str("\r\n");
    }
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Resp {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

fn get(base: &str, target: &str) -> Resp {
    request(base, "GET", target, None)
}

fn post(base: &str, path: &str, pairs: &[(&str, &str)]) -> Resp {
    request(base, "POST", path, Some(&form(pairs)))
}

/// A PKCE pair: (verifier, S256 challenge).
fn pkce(tag: &str) -> (String, String) {
    let verifier = format!("verifier-{tag}-{}", "x".repeat(40));
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

/// A fixture with one registered client whose only redirect URI is
/// `http://127.0.0.1:47001/cb` (nothing listens there: redirects are read,
/// never followed).
fn fixture_with(defects: Defects) -> (Fixture, String, String) {
    let f = Fixture::start(FixtureConfig {
        defects,
        ..FixtureConfig::default()
    })
    .expect("the fixture starts");
    let redirect = "http://127.0.0.1:47001/cb".to_string();
    let client = f.register_client("app", &[&redirect]).unwrap();
    (f, client, redirect)
}

fn fixture() -> (Fixture, String, String) {
    fixture_with(Defects::default())
}

fn authorize_target(pairs: &[(&str, &str)]) -> String {
    format!("/authorize?{}", form(pairs))
}

/// The authorization request of a well-behaved client.
fn good_authorize(client: &str, redirect: &str, challenge: &str) -> Vec<(String, String)> {
    [
        ("response_type", "code"),
        ("client_id", client),
        ("redirect_uri", redirect),
        ("state", "st-1"),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("resource", RESOURCE),
        ("scope", "mcp"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn with(pairs: &[(String, String)], key: &str, value: Option<&str>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = pairs.iter().filter(|(k, _)| k != key).cloned().collect();
    if let Some(v) = value {
        out.push((key.to_string(), v.to_string()));
    }
    out
}

fn authorize(f: &Fixture, pairs: &[(String, String)]) -> Resp {
    let refs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    get(f.issuer(), &authorize_target(&refs))
}

/// Runs the authorization request and returns the code.
fn code_for(f: &Fixture, client: &str, redirect: &str, challenge: &str) -> String {
    let r = authorize(f, &good_authorize(client, redirect, challenge));
    assert_eq!(r.status, 302);
    r.location_params()["code"].clone()
}

fn exchange(f: &Fixture, client: &str, redirect: &str, code: &str, verifier: &str) -> Resp {
    post(
        f.issuer(),
        "/token",
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect),
            ("client_id", client),
            ("code_verifier", verifier),
            ("resource", RESOURCE),
        ],
    )
}

fn introspect(f: &Fixture, token: &str) -> Value {
    let r = post(f.issuer(), "/introspect", &[("token", token)]);
    assert_eq!(r.status, 200);
    r.json()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Every credential string must be absent from the serialized events, and
/// its digest present.
fn assert_no_credentials(f: &Fixture, secrets: &[&str]) {
    let events = serde_json::to_string(&f.events()).unwrap();
    for s in secrets {
        assert!(!events.contains(s), "a credential appears in the events");
        assert!(
            events.contains(&mcpres::server::oauth::digest(s)),
            "the credential's digest is recorded"
        );
    }
}

#[test]
fn metadata_names_every_endpoint_and_the_policies() {
    let (f, _, _) = fixture();
    let iss = f.issuer().to_string();
    assert!(iss.starts_with("http://127.0.0.1:"));
    let r = get(&iss, "/.well-known/oauth-authorization-server");
    assert_eq!(r.status, 200);
    let m = r.json();
    assert_eq!(m["issuer"], iss);
    assert_eq!(m["authorization_endpoint"], format!("{iss}/authorize"));
    assert_eq!(m["token_endpoint"], format!("{iss}/token"));
    assert_eq!(m["jwks_uri"], format!("{iss}/jwks"));
    assert_eq!(m["introspection_endpoint"], format!("{iss}/introspect"));
    assert_eq!(m["response_types_supported"], serde_json::json!(["code"]));
    assert_eq!(
        m["grant_types_supported"],
        serde_json::json!(["authorization_code", "refresh_token"])
    );
    assert_eq!(
        m["code_challenge_methods_supported"],
        serde_json::json!(["S256"])
    );
    assert_eq!(
        m["token_endpoint_auth_methods_supported"],
        serde_json::json!(["none"])
    );
    assert_eq!(m["scopes_supported"], serde_json::json!(["mcp"]));
    assert_eq!(m["client_id_metadata_document_supported"], true);
    assert_eq!(m["authorization_response_iss_parameter_supported"], true);
    let jwks = get(&iss, "/jwks").json();
    let k = &jwks["keys"][0];
    assert_eq!(
        (k["kty"].as_str(), k["crv"].as_str()),
        (Some("OKP"), Some("Ed25519"))
    );
    assert_eq!(
        (k["alg"].as_str(), k["use"].as_str()),
        (Some("EdDSA"), Some("sig"))
    );
    assert!(k["kid"].is_string() && k["x"].is_string());
    // The metadata request is in the audit log.
    let e = f.events();
    assert_eq!(e[0].path, "/.well-known/oauth-authorization-server");
    assert_eq!((e[0].method.as_str(), e[0].status), ("GET", 200));
}

#[test]
fn code_flow_with_pkce_issues_an_audience_bound_token() {
    let (f, client, redirect) = fixture();
    let (verifier, challenge) = pkce("a");
    let r = authorize(&f, &good_authorize(&client, &redirect, &challenge));
    assert_eq!(r.status, 302);
    let loc = r.header("location").unwrap();
    assert!(
        loc.starts_with(&format!("{redirect}?")),
        "redirected to the exact redirect_uri"
    );
    let p = r.location_params();
    assert_eq!(p["state"], "st-1");
    assert_eq!(
        p["iss"],
        f.issuer(),
        "the response names its issuer (mix-up defence)"
    );
    let code = p["code"].clone();

    let t = exchange(&f, &client, &redirect, &code, &verifier);
    assert_eq!(t.status, 200);
    assert_eq!(t.header("cache-control"), Some("no-store"));
    let body = t.json();
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 300);
    assert_eq!(body["scope"], "mcp");
    let access = body["access_token"].as_str().unwrap().to_string();
    let refresh = body["refresh_token"].as_str().unwrap().to_string();

    let jwks = JwkSet::from_json(&get(f.issuer(), "/jwks").json()).unwrap();
    let claims = verify_access_token(&access, &jwks, f.issuer(), RESOURCE, now()).unwrap();
    assert_eq!(claims.aud, RESOURCE);
    assert_eq!(claims.client_id, client);
    assert_eq!(claims.iss, f.issuer());
    assert_eq!(claims.scope, "mcp");
    assert_eq!(claims.exp, claims.iat + 300);
    assert_eq!(
        verify_access_token(&access, &jwks, f.issuer(), "http://127.0.0.1:10/mcp", now()),
        Err(TokenError::WrongAudience)
    );
    let header: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(access.split('.').next().unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["alg"], "EdDSA");
    assert_eq!(header["typ"], "at+jwt");

    let i = introspect(&f, &access);
    assert_eq!(i["active"], true);
    assert_eq!(i["aud"], RESOURCE);
    assert_eq!(i["client_id"], client);
    assert_eq!(i["iss"], f.issuer());

    // The client ID metadata document was fetched, under a recorded policy.
    let events = f.events();
    let fetch = events.iter().find(|e| e.method == "FETCH").unwrap();
    assert_eq!((fetch.path.as_str(), fetch.status), (client.as_str(), 200));
    assert!(
        fetch
            .note
            .as_deref()
            .unwrap()
            .contains("loopback-http-only")
    );

    assert_no_credentials(&f, &[&code, &verifier, &access, &refresh, "st-1"]);
}

#[test]
fn plain_or_missing_pkce_is_refused_by_redirect() {
    let (f, client, redirect) = fixture();
    let (verifier, _) = pkce("p");
    let good = good_authorize(&client, &redirect, &verifier);
    for method in [Some("plain"), None] {
        let r = authorize(&f, &with(&good, "code_challenge_method", method));
        assert_eq!(r.status, 302);
        let p = r.location_params();
        assert_eq!(p["error"], "invalid_request");
        assert_eq!(p["state"], "st-1");
        assert_eq!(p["iss"], f.issuer());
        assert!(!p.contains_key("code"));
    }
    let r = authorize(&f, &with(&good, "code_challenge", None));
    assert_eq!(r.location_params()["error"], "invalid_request");
}

#[test]
fn a_wrong_verifier_is_invalid_grant() {
    let (f, client, redirect) = fixture();
    let (_, challenge) = pkce("w");
    let (other_verifier, _) = pkce("other");
    let code = code_for(&f, &client, &redirect, &challenge);
    let r = exchange(&f, &client, &redirect, &code, &other_verifier);
    assert_eq!(r.status, 400);
    let b = r.json();
    assert_eq!(b["error"], "invalid_grant");
    let desc = b["error_description"].as_str().unwrap();
    assert!(!desc.contains(&other_verifier) && !desc.contains(&code));
}

#[test]
fn a_redirect_uri_not_registered_exactly_gets_a_page_not_a_redirect() {
    let (f, client, redirect) = fixture();
    let (_, challenge) = pkce("r");
    let good = good_authorize(&client, &redirect, &challenge);
    for bad in [
        format!("{redirect}/"),
        "http://127.0.0.1:47002/cb".to_string(),
        format!("{redirect}?x=1"),
        "http://localhost:47001/cb".to_string(),
    ] {
        let r = authorize(&f, &with(&good, "redirect_uri", Some(&bad)));
        assert_eq!(r.status, 400, "{bad}");
        assert!(r.header("location").is_none(), "{bad}: never redirected");
    }
    // An unknown client (no such document) is a page too.
    let r = authorize(
        &f,
        &with(
            &good,
            "client_id",
            Some(&format!("{}/cimd/nobody", f.issuer())),
        ),
    );
    assert_eq!(r.status, 400);
    assert!(r.header("location").is_none());
}

#[test]
fn state_is_required_and_echoed_exactly() {
    let (f, client, redirect) = fixture();
    let (_, challenge) = pkce("s");
    let good = good_authorize(&client, &redirect, &challenge);
    let r = authorize(&f, &with(&good, "state", None));
    assert_eq!(r.status, 302);
    let p = r.location_params();
    assert_eq!(p["error"], "invalid_request");
    assert!(!p.contains_key("code") && !p.contains_key("state"));
    // An odd state comes back byte for byte, so a client can compare it.
    let odd = "a b&c=d/é+%";
    let r = authorize(&f, &with(&good, "state", Some(odd)));
    let p = r.location_params();
    assert_eq!(p["state"], odd);
    assert!(p.contains_key("code"));
}

#[test]
fn the_token_request_must_name_the_same_resource() {
    let (f, client, redirect) = fixture();
    let (verifier, challenge) = pkce("t");
    let code = code_for(&f, &client, &redirect, &challenge);
    let r = post(
        f.issuer(),
        "/token",
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &redirect),
            ("client_id", &client),
            ("code_verifier", &verifier),
            ("resource", "http://127.0.0.1:10/mcp"),
        ],
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "invalid_target");
    // The authorization request without resource is refused by redirect.
    let good = good_authorize(&client, &redirect, &challenge);
    let r = authorize(&f, &with(&good, "resource", None));
    assert_eq!(r.location_params()["error"], "invalid_target");
}

#[test]
fn the_issue_for_any_resource_defect_is_observable() {
    let (f, client, redirect) = fixture_with(Defects {
        issue_for_any_resource: true,
        ..Defects::default()
    });
    let (verifier, challenge) = pkce("d");
    let code = code_for(&f, &client, &redirect, &challenge);
    let other = "http://127.0.0.1:10/mcp";
    let r = post(
        f.issuer(),
        "/token",
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &redirect),
            ("client_id", &client),
            ("code_verifier", &verifier),
            ("resource", other),
        ],
    );
    assert_eq!(r.status, 200);
    let access = r.json()["access_token"].as_str().unwrap().to_string();
    let claims = verify_access_token(&access, &f.jwks(), f.issuer(), other, now()).unwrap();
    assert_eq!(claims.aud, other);
}

#[test]
fn the_unbound_code_defect_lets_another_client_redeem_a_code() {
    for unbound in [false, true] {
        let (f, client, redirect) = fixture_with(Defects {
            unbound_code: unbound,
            ..Defects::default()
        });
        let other = f.register_client("other", &[&redirect]).unwrap();
        let (verifier, challenge) = pkce("b");
        let code = code_for(&f, &client, &redirect, &challenge);
        let r = exchange(&f, &other, &redirect, &code, &verifier);
        if unbound {
            assert_eq!(r.status, 200, "{unbound}");
        } else {
            assert_eq!(r.status, 400);
            assert_eq!(
                r.json()["error_description"],
                "the authorization code was issued to another client"
            );
        }
    }
}

#[test]
fn the_no_rotation_defect_keeps_a_used_refresh_token_valid() {
    for no_rotation in [false, true] {
        let (f, client, redirect) = fixture_with(Defects {
            no_rotation,
            ..Defects::default()
        });
        let (verifier, challenge) = pkce("r");
        let code = code_for(&f, &client, &redirect, &challenge);
        let first = exchange(&f, &client, &redirect, &code, &verifier).json();
        let refresh = first["refresh_token"].as_str().unwrap().to_string();
        let resource = RESOURCE.to_string();
        let use_it = || {
            post(
                f.issuer(),
                "/token",
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &refresh),
                    ("client_id", &client),
                    ("resource", &resource),
                ],
            )
        };
        assert_eq!(use_it().status, 200);
        assert_eq!(use_it().status, if no_rotation { 200 } else { 400 });
    }
}

#[test]
fn the_ignore_verifier_defect_exchanges_a_code_for_any_verifier() {
    for ignore_verifier in [false, true] {
        let (f, client, redirect) = fixture_with(Defects {
            ignore_verifier,
            ..Defects::default()
        });
        let (_, challenge) = pkce("v");
        let (other_verifier, _) = pkce("w");
        let code = code_for(&f, &client, &redirect, &challenge);
        let r = exchange(&f, &client, &redirect, &code, &other_verifier);
        assert_eq!(r.status, if ignore_verifier { 200 } else { 400 });
    }
}

#[test]
fn the_ignore_missing_resource_defect_grants_a_request_without_resource() {
    for ignore_missing_resource in [false, true] {
        let (f, client, redirect) = fixture_with(Defects {
            ignore_missing_resource,
            ..Defects::default()
        });
        let (_, challenge) = pkce("m");
        let pairs = with(
            &good_authorize(&client, &redirect, &challenge),
            "resource",
            None,
        );
        let r = authorize(&f, &pairs);
        assert_eq!(r.status, 302);
        let location = r.header("location").unwrap_or_default().to_string();
        assert_eq!(
            location.contains("code="),
            ignore_missing_resource,
            "{location}"
        );
    }
}

#[test]
fn the_off_origin_token_endpoint_defect_moves_only_the_token_endpoint() {
    let (f, _, _) = fixture_with(Defects {
        off_origin_token_endpoint: true,
        ..Defects::default()
    });
    let iss = f.issuer().to_string();
    let m = get(&iss, "/.well-known/oauth-authorization-server").json();
    assert_eq!(m["token_endpoint"], "http://192.0.2.1/token");
    assert_eq!(m["issuer"], iss);
    assert_eq!(m["authorization_endpoint"], format!("{iss}/authorize"));
}

#[test]
fn the_drop_state_defect_returns_no_state() {
    for drop_state in [false, true] {
        let (f, client, redirect) = fixture_with(Defects {
            drop_state,
            ..Defects::default()
        });
        let (_, challenge) = pkce("s");
        let r = authorize(&f, &good_authorize(&client, &redirect, &challenge));
        let p = r.location_params();
        assert!(p.contains_key("code"));
        assert_eq!(p.contains_key("state"), !drop_state);
    }
}

#[test]
fn an_impostor_document_identifies_no_one_unless_the_client_id_check_is_off() {
    for ignore_cimd_client_id in [false, true] {
        let (f, client, redirect) = fixture_with(Defects {
            ignore_cimd_client_id,
            ..Defects::default()
        });
        let impostor = f
            .register_impostor("impostor", &[&redirect], &client)
            .unwrap();
        let (_, challenge) = pkce("i");
        let r = authorize(&f, &good_authorize(&impostor, &redirect, &challenge));
        if ignore_cimd_client_id {
            assert_eq!(r.status, 302);
            assert!(r.location_params().contains_key("code"));
        } else {
            assert_eq!(r.status, 400);
            let fetch = f
                .events()
                .into_iter()
                .rfind(|e| e.method == "FETCH")
                .unwrap();
            assert_eq!(
                fetch.note.as_deref(),
                Some("refused: client metadata document names another client_id")
            );
        }
    }
}

#[test]
fn a_reused_code_is_refused_and_its_tokens_revoked() {
    let (f, client, redirect) = fixture();
    let (verifier, challenge) = pkce("u");
    let code = code_for(&f, &client, &redirect, &challenge);
    let first = exchange(&f, &client, &redirect, &code, &verifier).json();
    let access = first["access_token"].as_str().unwrap().to_string();
    let refresh = first["refresh_token"].as_str().unwrap().to_string();
    assert_eq!(introspect(&f, &access)["active"], true);
    let again = exchange(&f, &client, &redirect, &code, &verifier);
    assert_eq!(again.status, 400);
    assert_eq!(again.json()["error"], "invalid_grant");
    assert_eq!(introspect(&f, &access)["active"], false);
    assert_eq!(introspect(&f, &refresh)["active"], false);
    let r = post(
        f.issuer(),
        "/token",
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &client),
            ("resource", RESOURCE),
        ],
    );
    assert_eq!(r.json()["error"], "invalid_grant");
    assert_no_credentials(&f, &[&code, &verifier, &access, &refresh]);
}

#[test]
fn refresh_tokens_rotate_and_a_replay_revokes_the_family() {
    let (f, client, redirect) = fixture();
    let (verifier, challenge) = pkce("f");
    let code = code_for(&f, &client, &redirect, &challenge);
    let first = exchange(&f, &client, &redirect, &code, &verifier).json();
    let r0 = first["refresh_token"].as_str().unwrap().to_string();
    let refresh = |token: &str, resource: &str| {
        post(
            f.issuer(),
            "/token",
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", token),
                ("client_id", &client),
                ("resource", resource),
            ],
        )
    };
    assert_eq!(
        refresh(&r0, "http://127.0.0.1:10/mcp").json()["error"],
        "invalid_target"
    );
    // That refusal did not rotate it.
    let second = refresh(&r0, RESOURCE);
    assert_eq!(second.status, 200);
    let second = second.json();
    let r1 = second["refresh_token"].as_str().unwrap().to_string();
    let a1 = second["access_token"].as_str().unwrap().to_string();
    assert_ne!(r0, r1, "a new refresh token");
    assert_eq!(introspect(&f, &r0)["active"], false, "the old one is spent");
    assert_eq!(introspect(&f, &a1)["active"], true);
    // Replaying the spent one: refused, and the whole family goes.
    let replay = refresh(&r0, RESOURCE);
    assert_eq!(replay.status, 400);
    assert_eq!(replay.json()["error"], "invalid_grant");
    assert_eq!(introspect(&f, &a1)["active"], false);
    assert_eq!(refresh(&r1, RESOURCE).json()["error"], "invalid_grant");
    let notes: Vec<String> = f.events().iter().filter_map(|e| e.note.clone()).collect();
    assert!(notes.iter().any(|n| n.contains("replayed")));
    assert_no_credentials(&f, &[&r0, &r1, &a1]);
}

#[test]
fn a_non_loopback_client_id_is_refused_without_a_connection() {
    let (f, _, redirect) = fixture();
    let (_, challenge) = pkce("n");
    for client in [
        "http://example.com/cimd/app",
        "https://example.com/cimd/app",
        "http://10.0.0.1/cimd/app",
        "http://127.0.0.1.example.com/cimd/app",
    ] {
        let r = authorize(&f, &good_authorize(client, &redirect, &challenge));
        assert_eq!(r.status, 400, "{client}");
        assert!(r.header("location").is_none());
        let events = f.events();
        let fetch = events
            .iter()
            .rev()
            .find(|e| e.method == "FETCH" && e.path == client)
            .expect("the refusal is an audit event");
        assert_eq!(fetch.status, 0, "no connection made");
        assert!(
            fetch
                .note
                .as_deref()
                .unwrap()
                .contains("not a loopback address")
        );
    }
}

#[test]
fn a_metadata_document_redirect_is_not_followed() {
    // A loopback "client" that answers its metadata URL with a redirect.
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    let served = std::thread::spawn(move || {
        let (mut s, _) = server.accept().unwrap();
        let mut line = String::new();
        BufReader::new(s.try_clone().unwrap())
            .read_line(&mut line)
            .unwrap();
        s.write_all(b"HTTP/1.0 302 Found\r\nLocation: http://127.0.0.1:1/elsewhere\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
        server
    });
    let (f, _, redirect) = fixture();
    let (_, challenge) = pkce("m");
    let client = format!("http://127.0.0.1:{port}/client.json");
    let r = authorize(&f, &good_authorize(&client, &redirect, &challenge));
    assert_eq!(r.status, 400);
    assert!(r.header("location").is_none());
    // The fixture answered only after its fetch ended: a second connection
    // (following the redirect back here, or a retry) would be waiting now.
    let server = served.join().unwrap();
    server.set_nonblocking(true).unwrap();
    assert_eq!(
        server.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
    let events = f.events();
    let fetch = events.iter().find(|e| e.method == "FETCH").unwrap();
    assert_eq!(fetch.status, 302);
    assert!(
        fetch
            .note
            .as_deref()
            .unwrap()
            .contains("redirects are not followed")
    );
}

/// True when `addr` still serves the fixture whose public key is `kid`.
/// Tests in this binary run in parallel and bind port 0, so a freed port may
/// be handed to another test's fixture at once; that one signs with its own
/// key, so "gone" means refused, or answered by a fixture with another key.
fn serves_kid(addr: std::net::SocketAddr, kid: &str) -> bool {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return false;
    };
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let req = format!("GET /jwks HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    String::from_utf8_lossy(&raw).contains(kid)
}

#[test]
fn stop_closes_the_listener_and_non_loopback_binds_are_refused() {
    let (f, _, _) = fixture();
    let addr = f.local_addr();
    let kid = f.jwks().keys[0].kid.clone();
    assert!(serves_kid(addr, &kid), "the fixture serves its own key");
    let inode = f.listener_inode().expect("the listener's inode");
    assert!(mcpres::produce::drive::proc::inode_listening(inode));
    f.stop();
    assert!(!mcpres::produce::drive::proc::inode_listening(inode));
    assert!(!serves_kid(addr, &kid), "nothing of it listens after stop");

    let g = Fixture::start(FixtureConfig::default()).unwrap();
    let addr = g.local_addr();
    let kid = g.jwks().keys[0].kid.clone();
    assert!(serves_kid(addr, &kid), "the fixture serves its own key");
    drop(g);
    assert!(!serves_kid(addr, &kid), "nothing of it listens after drop");

    let e = Fixture::start(FixtureConfig {
        bind: "0.0.0.0".parse().unwrap(),
        ..FixtureConfig::default()
    })
    .unwrap_err();
    assert!(matches!(e, FixtureError::NotLoopback(_)));
}

#[test]
fn the_cli_prints_its_issuer_and_exits_zero_on_sigterm() {
    let mut child = support::command()
        .args(["oauth", "fixture", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let issuer = line
        .trim()
        .strip_prefix("issuer: ")
        .expect("the issuer line")
        .to_string();
    assert!(issuer.starts_with("http://127.0.0.1:"));
    let m = get(&issuer, "/.well-known/oauth-authorization-server").json();
    assert_eq!(m["issuer"], issuer);
    let since = support::boot_ticks();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let out = support::output_within(child, Duration::from_secs(20), "mcpres oauth fixture");
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "nothing on stdout");
    let port = issuer.rsplit_once(':').unwrap().1.parse().unwrap();
    support::assert_port_released(port, since, "the listener is closed");
}

#[test]
fn each_switchable_defect_changes_exactly_its_behaviour() {
    let (_, challenge) = pkce("x");
    // accept_plain_pkce: advertised and accepted; a plain verifier redeems.
    let (f, client, redirect) = fixture_with(Defects {
        accept_plain_pkce: true,
        ..Defects::default()
    });
    let m = get(f.issuer(), "/.well-known/oauth-authorization-server").json();
    assert_eq!(
        m["code_challenge_methods_supported"],
        serde_json::json!(["S256", "plain"])
    );
    let (verifier, _) = pkce("plain");
    let good = good_authorize(&client, &redirect, &verifier);
    let r = authorize(&f, &with(&good, "code_challenge_method", Some("plain")));
    let code = r.location_params()["code"].clone();
    assert_eq!(
        exchange(&f, &client, &redirect, &code, &verifier).status,
        200
    );
    drop(f);

    // prefix_redirect_uri: an extension of the registered URI is accepted.
    let (f, client, redirect) = fixture_with(Defects {
        prefix_redirect_uri: true,
        ..Defects::default()
    });
    let good = good_authorize(&client, &redirect, &challenge);
    let longer = format!("{redirect}/evil");
    let r = authorize(&f, &with(&good, "redirect_uri", Some(&longer)));
    assert_eq!(r.status, 302);
    assert!(r.header("location").unwrap().starts_with(&longer));
    drop(f);

    // wrong_iss_in_response and metadata_issuer_mismatch.
    let (f, client, redirect) = fixture_with(Defects {
        wrong_iss_in_response: true,
        metadata_issuer_mismatch: true,
        ..Defects::default()
    });
    let r = authorize(&f, &good_authorize(&client, &redirect, &challenge));
    assert_ne!(r.location_params()["iss"], f.issuer());
    let m = get(f.issuer(), "/.well-known/oauth-authorization-server").json();
    assert_ne!(m["issuer"], f.issuer());
    assert_eq!(m["token_endpoint"], format!("{}/token", f.issuer()));
}

#[test]
fn a_client_id_with_a_query_is_refused_and_logged_as_a_digest() {
    let (f, client, redirect) = fixture();
    let (_, challenge) = pkce("q");
    let with_query = format!("{client}?code=not-a-real-code");
    let r = authorize(&f, &good_authorize(&with_query, &redirect, &challenge));
    assert_eq!(r.status, 400);
    let events = serde_json::to_string(&f.events()).unwrap();
    assert!(!events.contains("not-a-real-code"));
    assert!(events.contains(&mcpres::server::oauth::digest("code=not-a-real-code")));
}

#[test]
fn minted_tokens_carry_the_asked_audience_and_expiry() {
    let (f, client, _) = fixture();
    let other = "http://127.0.0.1:10/mcp";
    let t = f.mint_access_token(&client, other, "mcp", 60);
    let jwks = f.jwks();
    assert_eq!(
        verify_access_token(&t, &jwks, f.issuer(), RESOURCE, now()),
        Err(TokenError::WrongAudience)
    );
    assert_eq!(
        verify_access_token(&t, &jwks, f.issuer(), other, now())
            .unwrap()
            .aud,
        other
    );
    let expired = f.mint_access_token(&client, RESOURCE, "mcp", -10);
    assert_eq!(
        verify_access_token(&expired, &jwks, f.issuer(), RESOURCE, now()),
        Err(TokenError::Expired)
    );
    let events = f.events();
    assert_eq!(events.iter().filter(|e| e.method == "MINT").count(), 2);
    assert_no_credentials(&f, &[&t, &expired]);
}

#[test]
fn a_client_secret_or_unknown_grant_is_refused_without_echoing_it() {
    let (f, client, _) = fixture();
    let r = post(
        f.issuer(),
        "/token",
        &[
            ("grant_type", "client_credentials"),
            ("client_id", &client),
            ("client_secret", "synthetic-secret-value"),
        ],
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"], "invalid_client");
    let r = post(f.issuer(), "/token", &[("grant_type", "password")]);
    assert_eq!(
        (r.status, r.json()["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );
    assert!(!String::from_utf8_lossy(&r.body).contains("password\""));
    assert_no_credentials(&f, &["synthetic-secret-value"]);
}

/// A loopback listener that answers one request with `response` (on a
/// thread), returning its port and the thread handing back the listener.
fn answer_once(response: String) -> (u16, std::thread::JoinHandle<TcpListener>) {
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    let served = std::thread::spawn(move || {
        let (mut s, _) = server.accept().unwrap();
        let mut line = String::new();
        BufReader::new(s.try_clone().unwrap())
            .read_line(&mut line)
            .unwrap();
        s.write_all(response.as_bytes()).unwrap();
        server
    });
    (port, served)
}

#[test]
fn the_follow_cimd_redirects_defect_trusts_the_document_a_redirect_points_at() {
    let (f, _, redirect) = fixture_with(Defects {
        follow_cimd_redirects: true,
        ..Defects::default()
    });
    // The redirecting client_id, and the document at the redirect's target
    // that claims to be it.
    let front = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = format!(
        "http://127.0.0.1:{}/client.json",
        front.local_addr().unwrap().port()
    );
    let doc = serde_json::json!({"client_id": client, "redirect_uris": [redirect]}).to_string();
    let (target_port, target) = answer_once(format!(
        "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{doc}",
        doc.len()
    ));
    let fronted = std::thread::spawn(move || {
        let (mut s, _) = front.accept().unwrap();
        let mut line = String::new();
        BufReader::new(s.try_clone().unwrap())
            .read_line(&mut line)
            .unwrap();
        s.write_all(
            format!(
                "HTTP/1.0 302 Found\r\nLocation: http://127.0.0.1:{target_port}/elsewhere.json\r\nContent-Length: 0\r\n\r\n"
            )
            .as_bytes(),
        )
        .unwrap();
    });
    let (_, challenge) = pkce("follow");
    let r = authorize(&f, &good_authorize(&client, &redirect, &challenge));
    fronted.join().unwrap();
    target.join().unwrap();
    // Followed: the redirect's target identified the client, a code issued.
    assert_eq!(r.status, 302);
    assert!(r.location_params().contains_key("code"));
    let fetch = f
        .events()
        .into_iter()
        .find(|e| e.method == "FETCH")
        .unwrap();
    assert_eq!(fetch.status, 200);
}

#[test]
fn the_trust_policy_is_noted_on_a_trusted_fetch_unless_the_defect_drops_it() {
    let policy = format!(
        "fetched under policy {}",
        mcpres::server::oauth::fixture::CIMD_TRUST_POLICY
    );
    for (defect, note) in [(false, Some(policy.as_str())), (true, None)] {
        let (f, client, redirect) = fixture_with(Defects {
            unrecorded_cimd_policy: defect,
            ..Defects::default()
        });
        let (_, challenge) = pkce("policy");
        let r = authorize(&f, &good_authorize(&client, &redirect, &challenge));
        assert_eq!(r.status, 302);
        assert!(r.location_params().contains_key("code"));
        // A refused client_id is still noted either way.
        let off = "http://192.0.2.1/cimd/app";
        assert_eq!(
            authorize(&f, &good_authorize(off, &redirect, &challenge)).status,
            400
        );
        let fetches: Vec<_> = f
            .events()
            .into_iter()
            .filter(|e| e.method == "FETCH")
            .collect();
        assert_eq!(fetches[0].note.as_deref(), note, "defect {defect}");
        assert_eq!(fetches[1].status, 0);
        assert!(
            fetches[1]
                .note
                .as_deref()
                .unwrap()
                .contains("not a loopback address")
        );
    }
}

#[test]
fn a_portless_loopback_redirect_uri_is_answered_on_the_port_asked_unless_fixed() {
    let (_, challenge) = pkce("loop");
    for defect in [false, true] {
        let f = Fixture::start(FixtureConfig {
            defects: Defects {
                fixed_loopback_port: defect,
                ..Defects::default()
            },
            ..FixtureConfig::default()
        })
        .unwrap();
        let client = f
            .register_client("loop", &["http://127.0.0.1/callback"])
            .unwrap();
        let asked = "http://127.0.0.1:47003/callback";
        let r = authorize(&f, &good_authorize(&client, asked, &challenge));
        assert_eq!(r.status, 302);
        let to = r.header("location").unwrap();
        let expected = if defect {
            "http://127.0.0.1/callback?"
        } else {
            "http://127.0.0.1:47003/callback?"
        };
        assert!(to.starts_with(expected), "defect {defect}: {to}");
        // Only the port is free: another path is not registered, and a port
        // that is not a number is not a URI.
        let r = authorize(
            &f,
            &good_authorize(&client, "http://127.0.0.1:47003/other", &challenge),
        );
        assert_eq!(r.status, 400);
        assert!(r.header("location").is_none());
        let r = authorize(
            &f,
            &good_authorize(&client, "http://127.0.0.1:not-a-port/callback", &challenge),
        );
        assert_eq!(r.status, 400);
        assert!(String::from_utf8_lossy(&r.body).contains("redirect_uri is not a valid URI"));
        // Issue 40, item 9: only the port may vary, written as a client
        // binds one: userinfo, port 0, a leading zero or a sign is another
        // URI, refused with a page and never redirected to.
        for other in [
            "http://evil@127.0.0.1:47003/callback",
            "http://127.0.0.1:0/callback",
            "http://127.0.0.1:01/callback",
            "http://127.0.0.1:047003/callback",
            "http://127.0.0.1:+47003/callback",
        ] {
            let r = authorize(&f, &good_authorize(&client, other, &challenge));
            assert_eq!(r.status, 400, "{other}");
            assert!(r.header("location").is_none(), "{other}: never redirected");
        }
    }
}

#[test]
fn consent_is_bound_to_the_client_it_was_given_for_unless_the_defect_is_on() {
    let (_, challenge) = pkce("consent");
    for defect in [false, true] {
        let f = Fixture::start(FixtureConfig {
            defects: Defects {
                consent_not_client_bound: defect,
                ..Defects::default()
            },
            ..FixtureConfig::default()
        })
        .unwrap();
        let redirect = "http://127.0.0.1:47001/cb";
        let a = f.register_consent_client("proxy-a", &[redirect]).unwrap();
        let b = f.register_consent_client("proxy-b", &[redirect]).unwrap();
        let with_consent = |client: &str, consent: Option<&str>| {
            authorize(
                &f,
                &with(
                    &good_authorize(client, redirect, &challenge),
                    "consent",
                    consent,
                ),
            )
        };
        // No consent: required.
        let r = with_consent(&a, None);
        assert_eq!(r.location_params()["error"], "consent_required");
        // A client without a consent step cannot get an approval.
        let plain = f.register_client("plain", &[redirect]).unwrap();
        assert_eq!(
            post(f.issuer(), "/consent", &[("client_id", &plain)]).status,
            400
        );
        let approval = post(f.issuer(), "/consent", &[("client_id", &a)]).json()["consent"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            with_consent(&a, Some(&approval))
                .location_params()
                .contains_key("code")
        );
        let r = with_consent(&b, Some(&approval));
        if defect {
            assert!(r.location_params().contains_key("code"));
        } else {
            let p = r.location_params();
            assert_eq!(p["error"], "consent_required");
            assert_eq!(
                p["error_description"],
                "consent was given for another client"
            );
        }
        let r = with_consent(&b, Some("not-a-consent-approval"));
        assert_eq!(r.location_params()["error"], "invalid_request");
        assert_eq!(
            r.location_params()["error_description"],
            "consent is malformed"
        );
        assert_no_credentials(&f, &[&approval]);
    }
}

/// The artifact scans of the OAuth tests (`support::jwt_like`) catch a
/// token the fixture mints, and each of its halves, but not a random value
/// that happens to hold "eyJ".
#[test]
fn a_minted_token_and_its_halves_are_jwt_like_and_a_random_eyj_is_not() {
    let f = Fixture::start(FixtureConfig::default()).unwrap();
    let t = f.mint_access_token("http://127.0.0.1:9/cimd/c", RESOURCE, "mcp", 60);
    assert!(support::jwt_like(&t));
    let dot = t.find('.').unwrap();
    assert!(support::jwt_like(&t[..dot / 2 + 8]), "the header's start");
    assert!(support::jwt_like(&t[dot + 1..]), "the claims onward");
    assert!(!support::jwt_like(
        "EZMEn2uMA85eyJkK0YoOW7umcOm44YZnwzvPI1zWW1W"
    ));
}
