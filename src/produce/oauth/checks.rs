//! The 25 checks of `mcp-res/oauth-boundary/v1`, each against a fresh
//! subject: a positive, a reason-bound negative control and a wrong-reason
//! mutant (a syntax-defective input that must be refused early and never
//! credited with the negative's reason). What each observes and the defect
//! that fails it: spec/oauth-boundary.md.

use std::time::Duration;

use serde_json::{Value, json};

use super::flow;
use super::{EARLY, OauthCtx, Runner, reason};
use crate::diag::reasons;
use crate::model::vocab::ProbeOutcome;
use crate::produce::drive::http::Request;
use crate::produce::drive::proc;
use crate::produce::profile::check::{CheckRun, Obs, mutant, obs};
use crate::produce::profile::decl::{Basis, CheckDecl, Level as L, MCP_2025, MCP_2026, PROFILE};
use crate::produce::profile::web::{self, Conn, Rec, Resp, Server, Session, Shape};
use crate::server::oauth::{Defects, Fixture, FixtureConfig};

/// The profile these checks belong to.
const P: &str = "mcp-res/oauth-boundary/v1";
const AUTH: &str = "Basic › Authorization";

/// The checks, in manifest order, as declarations (`fixture()`: the evidence is
/// the fixture's and the runner's behaviour, TEST_FIXTURE; otherwise the
/// subject's, RUNTIME_PROBE). What each observes: spec/oauth-boundary.md.
pub const CHECKS: &[CheckDecl<Runner>] = &[
    CheckDecl::declare(P, "protected-resource-metadata-discovery", metadata_discovery as Runner, reasons::OAUTH_PROTECTED_RESOURCE_METADATA_DISCOVERY_ACCEPTED, reasons::OAUTH_PROTECTED_RESOURCE_METADATA_DISCOVERY_REJECTED)
        .basis(&[
            Basis::pos(MCP_2025, AUTH, L::Must, "MCP servers MUST implement RFC 9728 protected resource metadata naming their authorization servers"),
            Basis::pos(MCP_2026, AUTH, L::Must, "MCP servers MUST implement RFC 9728 protected resource metadata"),
            Basis::neg(MCP_2025, "Basic › Authorization › Error Handling", L::Must, "a request without authorization MUST get 401; the `resource_metadata` challenge is one of two discovery mechanisms"),
            Basis::neg(MCP_2026, AUTH, L::Must, "invalid or missing tokens MUST get 401"),
            Basis::neg("RFC 9728", "§5.1", L::May, "the `resource_metadata` parameter of `WWW-Authenticate`"),
        ])
        .judged("The 401 is a MUST; pointing at the metadata from the challenge is one of the two mechanisms MCP allows, so a server that offers only the well-known URI does what the specification allows and fails the control as written."),
    CheckDecl::declare(P, "authorization-server-metadata", authorization_server_metadata as Runner, reasons::OAUTH_AUTHORIZATION_SERVER_METADATA_ACCEPTED, reasons::OAUTH_AUTHORIZATION_SERVER_METADATA_REJECTED)
        .fixture()
        .basis(&[
            Basis::both("RFC 8414", "§3.3", L::Must, "the metadata's `issuer` MUST be the issuer it was fetched for; otherwise it MUST NOT be used"),
            Basis::pos(MCP_2025, "Basic › Authorization › Overview", L::Must, "authorization servers MUST offer RFC 8414 or OpenID Connect discovery"),
        ])
        .judged("Evidence of the fixture and the runner (TEST_FIXTURE): the run is INCOMPLETE, never a PASS of the subject."),
    CheckDecl::declare(P, "issuer-binding", issuer_binding as Runner, reasons::OAUTH_ISSUER_BINDING_ACCEPTED, reasons::OAUTH_ISSUER_BINDING_REJECTED)
        .basis(&[
            Basis::both(MCP_2025, "Basic › Authorization › Token Handling", L::Must, "MCP servers MUST validate access tokens (OAuth 2.1 §5.2) and accept only tokens valid for their resources"),
            Basis::both(MCP_2026, AUTH, L::Must, "MCP servers MUST validate access tokens and accept only tokens issued for them"),
        ])
        .judged("Both observations stand on MUSTs."),
    CheckDecl::declare(P, "authorization-request-resource", authorization_request_resource as Runner, reasons::OAUTH_AUTHORIZATION_REQUEST_RESOURCE_ACCEPTED, reasons::OAUTH_AUTHORIZATION_REQUEST_RESOURCE_REJECTED)
        .fixture()
        .basis(&[
            Basis::pos(MCP_2025, "Basic › Authorization › Resource Parameter Implementation", L::Must, "clients MUST send `resource` in authorization and token requests"),
            Basis::pos(MCP_2026, AUTH, L::Must, "clients MUST send `resource` in authorization and token requests"),
            Basis::neg("RFC 8707", "§2", L::May, "an authorization server may refuse a request without `resource` (or serve a default); `invalid_target` is its error"),
        ])
        .judged("Evidence of the fixture (TEST_FIXTURE); refusing a request without `resource` is the fixture's policy, not a MUST."),
    CheckDecl::declare(P, "token-request-resource", token_request_resource as Runner, reasons::OAUTH_TOKEN_REQUEST_RESOURCE_ACCEPTED, reasons::OAUTH_TOKEN_REQUEST_RESOURCE_REJECTED)
        .fixture()
        .basis(&[
            Basis::pos(MCP_2025, "Basic › Authorization › Resource Parameter Implementation", L::Must, "clients MUST send `resource` in the token request too"),
            Basis::pos(MCP_2026, AUTH, L::Must, "clients MUST send `resource` in the token request too"),
            Basis::neg("RFC 8707", "§2", L::Should, "issued tokens SHOULD be audience-restricted to the indicated resource; `invalid_target` refuses another one"),
        ])
        .judged("Evidence of the fixture (TEST_FIXTURE)."),
    CheckDecl::declare(P, "access-token-audience", access_token_audience as Runner, reasons::OAUTH_ACCESS_TOKEN_AUDIENCE_ACCEPTED, reasons::OAUTH_ACCESS_TOKEN_AUDIENCE_REJECTED)
        .basis(&[
            Basis::both(MCP_2025, "Basic › Authorization › Token Handling", L::Must, "MCP servers MUST validate that tokens were issued for them as the audience"),
            Basis::both(MCP_2026, AUTH, L::Must, "MCP servers MUST validate that tokens were issued for them as the audience"),
        ])
        .judged("Both observations stand on MUSTs."),
    CheckDecl::declare(P, "wrong-resource-token-rejection", wrong_resource_token as Runner, reasons::OAUTH_WRONG_RESOURCE_TOKEN_REJECTION_ACCEPTED, reasons::OAUTH_WRONG_RESOURCE_TOKEN_REJECTION_REJECTED)
        .basis(&[
            Basis::both(MCP_2025, "Basic › Authorization › Access Token Privilege Restriction", L::Must, "MCP servers MUST reject tokens that do not name them as audience"),
            Basis::both(MCP_2026, "Basic › Authorization › Security Considerations", L::Must, "MCP servers MUST reject tokens that do not name them as audience"),
        ])
        .judged("Both observations stand on MUSTs."),
    CheckDecl::declare(P, "token-passthrough-prohibited", token_passthrough as Runner, reasons::OAUTH_TOKEN_PASSTHROUGH_PROHIBITED_ACCEPTED, reasons::OAUTH_TOKEN_PASSTHROUGH_PROHIBITED_REJECTED)
        .basis(&[
            Basis::both(MCP_2025, "Basic › Authorization › Token Handling", L::Must, "MCP servers MUST NOT accept or transit any other tokens; invalid or expired tokens MUST get 401"),
            Basis::both(MCP_2026, AUTH, L::Must, "MCP servers MUST NOT accept or transit any other tokens; invalid or expired tokens MUST get 401"),
        ])
        .judged("Both observations stand on MUSTs."),
    CheckDecl::declare(P, "pkce-s256", pkce_s256 as Runner, reasons::OAUTH_PKCE_S256_ACCEPTED, reasons::OAUTH_PKCE_S256_REJECTED)
        .fixture()
        .basis(&[
            Basis::both("RFC 7636", "§4.6", L::Must, "the authorization server MUST verify the `code_verifier` against the code challenge"),
            Basis::pos(MCP_2025, "Basic › Authorization › Authorization Code Protection", L::Must, "clients MUST implement PKCE with S256"),
        ])
        .judged("Evidence of the fixture (TEST_FIXTURE)."),
    CheckDecl::declare(P, "pkce-downgrade-refused", pkce_downgrade as Runner, reasons::OAUTH_PKCE_DOWNGRADE_REFUSED_ACCEPTED, reasons::OAUTH_PKCE_DOWNGRADE_REFUSED_REJECTED)
        .fixture()
        .basis(&[
            Basis::pos(MCP_2025, "Basic › Authorization › Authorization Code Protection", L::Must, "clients MUST use S256 when technically capable"),
            Basis::pos(MCP_2026, "Basic › Authorization › Security Considerations › Authorization Code Protection", L::Must, "clients MUST use S256 when technically capable"),
            Basis::neg("RFC 7636", "§4.2", L::May, "`plain` is a defined method; OAuth 2.1 binds the client to S256, not the server to refusing `plain`"),
            Basis::neg(PROFILE, "required check pkce-downgrade-refused", L::Profile, "the fixture refuses `plain`"),
        ])
        .judged("Evidence of the fixture (TEST_FIXTURE); refusing `plain` is the profile's requirement."),
    CheckDecl::declare(P, "exact-redirect-uri", exact_redirect as Runner, reasons::OAUTH_EXACT_REDIRECT_URI_ACCEPTED, reasons::OAUTH_EXACT_REDIRECT_URI_REJECTED)
        .fixture()
        .basis(&[
            Basis::both(MCP_2025, "Basic › Authorization › Open Redirection", L::Must, "authorization servers MUST validate exact redirect URIs against the registered ones"),
            Basis::both(MCP_2026, "Basic › Authorization › Security Considerations", L::Must, "authorization servers MUST validate exact redirect URIs against the registered ones"),
        ])
        .judged("Evidence of the fixture (TEST_FIXTURE)."),
    CheckDecl::declare(P, "state-binding", state_binding as Runner, reasons::OAUTH_STATE_BINDING_ACCEPTED, reasons::OAUTH_STATE_BINDING_REJECTED)
        .fixture()
        .basis(&[
            Basis::pos("RFC 6749", "§4.1.2", L::Must, "the response carries the exact `state` the request sent"),
            Basis::pos(MCP_2025, "Basic › Authorization › Open Redirection", L::Should, "clients SHOULD use and verify `state`"),
            Basis::neg(PROFILE, "required check state-binding", L::Profile, "the fixture refuses a request without `state` (OAuth makes `state` optional)"),
        ])
        .judged("Evidence of the fixture (TEST_FIXTURE); requiring `state` is the fixture's policy."),
    CheckDecl::declare(P, "mix-up-resistance", mix_up_resistance as Runner, reasons::OAUTH_MIX_UP_RESISTANCE_ACCEPTED, reasons::OAUTH_MIX_UP_RESISTANCE_REJECTED)
        .fixture()
        .basis(&[
            Basis::both("RFC 9207", "§2.4", L::Must, "a client MUST check the response's `iss` against the issuer it asked"),
            Basis::both(MCP_2026, AUTH, L::Must, "clients MUST apply the RFC 9207 validation before sending the code anywhere (servers SHOULD send `iss`)"),
        ])
        .judged("Evidence of the fixture and the runner (TEST_FIXTURE)."),
    CheckDecl::declare(P, "authorization-code-binding", code_binding as Runner, reasons::OAUTH_AUTHORIZATION_CODE_BINDING_ACCEPTED, reasons::OAUTH_AUTHORIZATION_CODE_BINDING_REJECTED)
        .fixture()
        .basis(&[
            Basis::both("RFC 6749", "§4.1.3", L::Must, "the authorization server MUST ensure the code was issued to the client redeeming it"),
        ])
        .judged("Evidence of the fixture (TEST_FIXTURE)."),
    CheckDecl::declare(P, "token-endpoint-identity", token_endpoint_identity as Runner, reasons::OAUTH_TOKEN_ENDPOINT_IDENTITY_ACCEPTED, reasons::OAUTH_TOKEN_ENDPOINT_IDENTITY_REJECTED)
        .fixture()
        .basis(&[
            Basis::both(PROFILE, "required check token-endpoint-identity", L::Profile, "the runner uses only a token endpoint on the issuer's origin"),
            Basis::both("RFC 8414", "§2", L::None, "`token_endpoint` is any URL of the server; its origin is not required to be the issuer's"),
        ])
        .judged("Evidence of the runner and the fixture (TEST_FIXTURE); the origin rule is the profile's."),
    CheckDecl::declare(P, "cimd-identity", cimd_identity as Runner, reasons::OAUTH_CIMD_IDENTITY_ACCEPTED, reasons::OAUTH_CIMD_IDENTITY_REJECTED)
        .fixture()
        .basis(&[
            Basis::both(MCP_2025, "Basic › Authorization › Client ID Metadata Documents", L::Must, "authorization servers MUST check that the fetched document's `client_id` is its URL exactly"),
            Basis::both(MCP_2026, "Basic › Authorization › Client Registration", L::Must, "authorization servers MUST check that the fetched document's `client_id` is its URL exactly"),
        ])
        .judged("Evidence of the fixture (TEST_FIXTURE)."),
    CheckDecl::declare(P, "cimd-trust-policy-recorded", cimd_trust_policy as Runner, reasons::OAUTH_CIMD_TRUST_POLICY_RECORDED_ACCEPTED, reasons::OAUTH_CIMD_TRUST_POLICY_RECORDED_REJECTED)
        .fixture()
        .basis(&[
            Basis::both(PROFILE, "required check cimd-trust-policy-recorded", L::Profile, "the trust policy a document was fetched under is recorded"),
            Basis::both(MCP_2025, "Basic › Authorization › Client ID Metadata Document Security", L::Should, "authorization servers SHOULD weigh the risks of fetching documents (trust policies)"),
        ])
        .judged("Evidence of the fixture (TEST_FIXTURE); recording the policy is the profile's requirement."),
    CheckDecl::declare(P, "scope-minimization", scope_minimization as Runner, reasons::OAUTH_SCOPE_MINIMIZATION_ACCEPTED, reasons::OAUTH_SCOPE_MINIMIZATION_REJECTED)
        .basis(&[
            Basis::pos(MCP_2025, "Basic › Authorization › Scope Selection Strategy", L::Should, "clients SHOULD request the least privilege"),
            Basis::pos(MCP_2026, "Basic › Authorization › Scope Selection Strategy", L::Should, "clients SHOULD request the least privilege"),
            Basis::neg(MCP_2025, "Basic › Authorization › Scope Challenge Handling", L::Should, "an insufficient scope SHOULD get 403 with `error=\"insufficient_scope\"`"),
            Basis::neg("RFC 6750", "§3.1", L::Should, "`insufficient_scope`: the resource server SHOULD answer 403"),
        ])
        .judged("No MUST: a server that refuses the wrong scope with 401, or without the challenge, does what the specifications allow and fails the control as written. Without `{scope}` in the subject's command the check is NOT_OBSERVED."),
    CheckDecl::declare(P, "token-storage-omission", token_storage as Runner, reasons::OAUTH_TOKEN_STORAGE_OMISSION_ACCEPTED, reasons::OAUTH_TOKEN_STORAGE_OMISSION_REJECTED)
        .launch()
        .basis(&[
            Basis::both(MCP_2025, "Basic › Authorization › Token Theft", L::Must, "clients and servers MUST implement secure token storage"),
            Basis::both(MCP_2026, "Basic › Authorization › Security Considerations", L::Must, "clients and servers MUST implement secure token storage"),
        ])
        .judged("A token in the subject's logs is read as insecure storage. Without a subject mcpres starts the check is NOT_OBSERVED."),
    CheckDecl::declare(P, "sanitized-authorization-errors", sanitized_errors as Runner, reasons::OAUTH_SANITIZED_AUTHORIZATION_ERRORS_ACCEPTED, reasons::OAUTH_SANITIZED_AUTHORIZATION_ERRORS_REJECTED)
        .basis(&[
            Basis::both(PROFILE, "required check sanitized-authorization-errors", L::Profile, "an answer to a presented token holds neither the token nor its identifying claims"),
            Basis::both("RFC 6750", "§5.3", L::None, "safeguard bearer tokens (no rule on error bodies)"),
        ])
        .judged("No specification forbids echoing a token in an error: judged on the profile's requirement."),
    CheckDecl::declare(P, "bounded-redirects", bounded_redirects as Runner, reasons::OAUTH_BOUNDED_REDIRECTS_ACCEPTED, reasons::OAUTH_BOUNDED_REDIRECTS_REJECTED)
        .fixture()
        .basis(&[
            Basis::both(PROFILE, "compositionBoundary", L::Profile, "loopback fixtures only: metadata and client documents are fetched without following redirects"),
            Basis::neg(MCP_2025, "Basic › Authorization › Client ID Metadata Document Security", L::Should, "authorization servers SHOULD guard document fetches against abuse"),
        ])
        .judged("Evidence of the runner and the fixture (TEST_FIXTURE); not following redirects is the profile's policy."),
    CheckDecl::declare(P, "ssrf-resistant-metadata-resolution", ssrf_resistant_resolution as Runner, reasons::OAUTH_SSRF_RESISTANT_METADATA_RESOLUTION_ACCEPTED, reasons::OAUTH_SSRF_RESISTANT_METADATA_RESOLUTION_REJECTED)
        .fixture()
        .basis(&[
            Basis::both(PROFILE, "compositionBoundary", L::Profile, "loopback fixtures only: a non-loopback authorization server is refused before connecting"),
        ])
        .judged("Evidence of the runner (TEST_FIXTURE); judged on the profile's boundary."),
    CheckDecl::declare(P, "loopback-redirect-collision", loopback_redirect_collision as Runner, reasons::OAUTH_LOOPBACK_REDIRECT_COLLISION_ACCEPTED, reasons::OAUTH_LOOPBACK_REDIRECT_COLLISION_REJECTED)
        .fixture()
        .basis(&[
            Basis::pos("RFC 8252", "§7.3", L::Must, "the authorization server MUST allow any port in a loopback IP redirect URI"),
            Basis::neg("RFC 8252", "§8.3", L::None, "the client binds its own loopback port; a listener it does not own must not receive the code (a security consideration)"),
            Basis::neg(PROFILE, "required check loopback-redirect-collision", L::Profile, "the code reaches only the runner's own listener"),
        ])
        .judged("Evidence of the runner and the fixture (TEST_FIXTURE)."),
    CheckDecl::declare(P, "proxy-consent-client-binding", proxy_consent as Runner, reasons::OAUTH_PROXY_CONSENT_CLIENT_BINDING_ACCEPTED, reasons::OAUTH_PROXY_CONSENT_CLIENT_BINDING_REJECTED)
        .fixture()
        .basis(&[
            Basis::both(MCP_2025, "Basic › Authorization › Confused Deputy Problem", L::Must, "MCP proxy servers with a static client id MUST obtain user consent for each client"),
            Basis::both(MCP_2026, "Basic › Authorization › Security Considerations", L::Must, "MCP proxy servers with a static client id MUST obtain user consent for each client"),
        ])
        .judged("Evidence of the fixture (TEST_FIXTURE)."),
    CheckDecl::declare(P, "refresh-token-rotation-when-claimed", refresh_rotation as Runner, reasons::OAUTH_REFRESH_TOKEN_ROTATION_WHEN_CLAIMED_ACCEPTED, reasons::OAUTH_REFRESH_TOKEN_ROTATION_WHEN_CLAIMED_REJECTED)
        .fixture()
        .basis(&[
            Basis::both(MCP_2025, "Basic › Authorization › Token Theft", L::Must, "for public clients, authorization servers MUST rotate refresh tokens (OAuth 2.1 §4.3.1)"),
            Basis::both(MCP_2026, "Basic › Authorization › Security Considerations", L::Must, "for public clients, authorization servers MUST rotate refresh tokens"),
        ])
        .judged("Evidence of the fixture (TEST_FIXTURE)."),
];

/// A refusal reason the subject named that is neither the check's own nor a
/// syntax refusal.
const OTHER: &str = reasons::OAUTH_OTHER_REFUSAL;
const NO_ANSWER: &str = reasons::OAUTH_NO_ANSWER;
/// The path the `token-passthrough` defect forwards to, on the issuer.
const PASSTHROUGH_PATH: &str = "/passthrough-probe";
/// An issuer on loopback that is not the fixture (never contacted).
const OTHER_ISSUER: &str = "http://127.0.0.1:1";
/// A resource on loopback that is not the subject (port 1 serves nothing).
const OTHER_RESOURCE: &str = "http://127.0.0.1:1/mcp";

/// What the preflight learnt.
pub struct Preflight {
    pub name: String,
    pub version: String,
    pub resource: String,
    pub artifact: Value,
}

/// The resource identifier of a server mcpres started (the reference
/// server's default: `http://ADDR:PORT/mcp`).
fn resource_of(server: &Server) -> String {
    format!("http://{}/mcp", server.authority)
}

fn metadata_path() -> &'static str {
    "/.well-known/oauth-protected-resource/mcp"
}

/// Start the subject once with a valid token: its name, version and resource.
pub fn preflight(o: &OauthCtx) -> Preflight {
    let unknown = |artifact: Value, resource: String| Preflight {
        name: "unknown".into(),
        version: "unknown".into(),
        resource,
        artifact,
    };
    let server = o.ctx.serve();
    let resource = resource_of(&server);
    if let Some(why) = server.failed.clone() {
        let s = o.ctx.stop(server);
        return unknown(json!({"startError": why, "server": s}), resource);
    }
    let token = o.mint(&resource, 300);
    let rec = o.rec();
    let (resp, _) = post_open(o, &rec, &server, Some(&token));
    let info = resp
        .answers()
        .first()
        .and_then(|a| a.pointer("/result/serverInfo"))
        .cloned()
        .unwrap_or(Value::Null);
    let s = o.ctx.stop(server);
    let artifact = json!({"open": resp.summary(), "transcript": rec.transcript(), "server": s});
    let text = |k: &str| info.get(k).and_then(Value::as_str).map(str::to_string);
    match (text("name"), text("version")) {
        (Some(name), Some(version)) => Preflight {
            name,
            version,
            resource,
            artifact,
        },
        _ => unknown(artifact, resource),
    }
}

/// GET a JSON document at a loopback `http://` URL (never followed, never
/// resolved); `null` when refused or not JSON.
pub fn fetch_json(o: &OauthCtx, url: &str) -> Value {
    let Ok(addr) = o.guarded(url) else {
        return Value::Null;
    };
    let path = url
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_string()))
        .unwrap_or_else(|| "/".into());
    let rec = o.rec();
    let Ok(mut conn) = Conn::open(&rec, addr) else {
        return Value::Null;
    };
    let req = Request::to("GET", &path, &addr.to_string()).header("Connection", "close");
    conn.write(&req.to_bytes());
    let resp = conn.response(Duration::from_secs(5));
    if resp.status != Some(200) {
        return Value::Null;
    }
    serde_json::from_slice(&resp.body).unwrap_or(Value::Null)
}

/// POST the opening request with `token` (none: no `Authorization`) on a
/// fresh connection.
fn post_open(o: &OauthCtx, rec: &Rec, server: &Server, token: Option<&str>) -> (Resp, Value) {
    let (method, params) = o.ctx.open_request();
    let id = o.ctx.id();
    let msg = o.ctx.request(&id, method, params);
    let mut shape = Shape::default();
    if let Some(t) = token {
        shape
            .extra
            .push(("Authorization".into(), format!("Bearer {t}")));
    }
    let resp = o
        .ctx
        .post_fresh(rec, server, &Session::default(), &msg, &shape);
    // After each exchange: did the subject open a connection off loopback?
    o.sample_subject(server);
    (resp, id)
}

/// `MCP_RES_OAUTH_OTHER_REFUSAL` for a reason that is neither the check's own
/// nor a syntax refusal, carrying the reason given (the subject's own words,
/// or the runner's); the observation keeps the code as its reason and the
/// words in its detail, so the subject's text never enters a code.
fn other(why: &str) -> String {
    reasons::with_words(OTHER, why)
}

/// How an authenticated request came back: accepted (the check's ACCEPTED),
/// refused as `malformed-token` (the early syntax rejection), refused for
/// `own` (the check's REJECTED), or refused for another reason.
fn classify(id: &str, resp: &Resp, answer_id: &Value, own: &str) -> (ProbeOutcome, String) {
    crate::judge::oauth::classify_presented(
        id,
        resp.status,
        resp.result_for(answer_id).is_some(),
        resp.header("www-authenticate"),
        &resp.body,
        own,
    )
}

/// Reached the property: answered, and not stopped by the syntax guard.
fn reached(observed: &(ProbeOutcome, String)) -> bool {
    observed.0 != ProbeOutcome::NotObserved && observed.1 != EARLY
}

/// The token with its claims segment made non-base64url: well-formed in
/// every other way, refused by syntax before any property is judged.
fn break_claims(token: &str) -> String {
    let mut parts: Vec<&str> = token.split('.').collect();
    if parts.len() == 3 {
        parts[1] = "%%%not-base64url%%%";
    }
    parts.join(".")
}

fn artifact(rec: &Rec, resp: &Resp, extra: Value) -> Value {
    json!({"response": resp.summary(), "transcript": rec.transcript(), "observation": extra})
}

/// A started server, or the check not observed (with the server's transcript).
fn serve_or_not(o: &OauthCtx, id: &'static str) -> Result<Server, Box<CheckRun>> {
    let server = o.ctx.serve();
    match server.failed.clone() {
        None => Ok(server),
        Some(why) => {
            let mut c = CheckRun::not_observed(id, format!("the subject did not start: {why}"));
            c.server = o.ctx.stop(server);
            Err(Box::new(c))
        }
    }
}

/// One token presented to the subject, classified for check `id`.
fn present(
    o: &OauthCtx,
    server: &Server,
    id: &str,
    token: &str,
) -> ((ProbeOutcome, String), String, Value) {
    // The check's own refusal reason, from the table the judge reads too.
    let own = crate::judge::oauth::own_reason(id)
        .unwrap_or_else(|| panic!("check {id} presents tokens but has no own reason"));
    present_as(o, server, id, token, own)
}

/// [`present`] with the check's own refusal reason given (a check whose
/// readings add to the classifier's, so the judge does not read them again
/// as [`crate::judge::oauth::PRESENTED`] checks).
fn present_as(
    o: &OauthCtx,
    server: &Server,
    id: &str,
    token: &str,
    own: &str,
) -> ((ProbeOutcome, String), String, Value) {
    let rec = o.rec();
    let (resp, answer_id) = post_open(o, &rec, server, Some(token));
    let observed = classify(id, &resp, &answer_id, own);
    if observed.0 == ProbeOutcome::Reject {
        o.saw_refusal(&resp, token);
    }
    let detail = format!("{} ({})", resp.label(), observed.1);
    (observed.clone(), detail, artifact(&rec, &resp, json!({})))
}

/// `access-token-audience`: a token for this resource is accepted; a
/// well-formed, correctly signed token for another resource is refused as
/// `wrong-audience`; the same token with broken claims must be refused as
/// malformed, never as a wrong audience.
fn access_token_audience(o: &OauthCtx) -> CheckRun {
    let id = "access-token-audience";
    let server = match serve_or_not(o, id) {
        Ok(s) => s,
        Err(c) => return *c,
    };
    let resource = resource_of(&server);
    let good = o.mint(&resource, 300);
    let foreign = o.mint(OTHER_RESOURCE, 300);
    let broken = break_claims(&foreign);
    o.remember(&broken);
    let rejected = reason(id, "REJECTED");
    let (p, pd, pa) = present(o, &server, id, &good);
    let (n, nd, na) = present(o, &server, id, &foreign);
    let (m, md, ma) = present(o, &server, id, &broken);
    let positive = obs(
        ProbeOutcome::Accept,
        &reason(id, "ACCEPTED"),
        p.clone(),
        reached(&p),
        pd,
        pa,
    );
    let negative = obs(
        ProbeOutcome::Reject,
        &rejected,
        n.clone(),
        reached(&n),
        nd,
        na,
    );
    let mutant = mutant(&rejected, m, md, ma);
    finish(o, id, server, positive, negative, mutant)
}

/// `issuer-binding`: a token the fixture issued (its `iss`) is accepted; a
/// token for this resource signed with the same key but naming another
/// issuer is refused as `wrong-issuer`; that token with broken claims is
/// refused as malformed, never as a wrong issuer.
fn issuer_binding(o: &OauthCtx) -> CheckRun {
    let id = "issuer-binding";
    let server = match serve_or_not(o, id) {
        Ok(s) => s,
        Err(c) => return *c,
    };
    let resource = resource_of(&server);
    let good = o.mint(&resource, 300);
    let foreign = o.mint_as(OTHER_ISSUER, &resource, 300);
    let broken = break_claims(&foreign);
    o.remember(&broken);
    let rejected = reason(id, "REJECTED");
    let (p, pd, pa) = present(o, &server, id, &good);
    let (n, nd, na) = present(o, &server, id, &foreign);
    let (m, md, ma) = present(o, &server, id, &broken);
    let positive = obs(
        ProbeOutcome::Accept,
        &reason(id, "ACCEPTED"),
        p.clone(),
        reached(&p),
        pd,
        pa,
    );
    let negative = obs(
        ProbeOutcome::Reject,
        &rejected,
        n.clone(),
        reached(&n),
        nd,
        na,
    );
    let mutant = mutant(&rejected, m, md, ma);
    finish(o, id, server, positive, negative, mutant)
}

fn finish(
    o: &OauthCtx,
    id: &'static str,
    server: Server,
    positive: Obs,
    negative: Obs,
    mutant: Obs,
) -> CheckRun {
    CheckRun {
        id,
        positive: Some(positive),
        negative: Some(negative),
        mutant: Some(mutant),
        not_observed: None,
        server: o.ctx.stop(server),
    }
}

/// The fixture events past `since` on the pass-through path.
fn forwarded_since(o: &OauthCtx, since: usize) -> usize {
    o.fixture
        .events()
        .iter()
        .skip(since)
        .filter(|e| e.path.starts_with(PASSTHROUGH_PATH))
        .count()
}

/// `token-passthrough-prohibited`: an accepted token is not forwarded to
/// anyone (the fixture's audit, which sees every request to the issuer,
/// shows no pass-through); a refused (expired) token is refused and not
/// forwarded either; a malformed token is refused early.
fn token_passthrough(o: &OauthCtx) -> CheckRun {
    let id = "token-passthrough-prohibited";
    let server = match serve_or_not(o, id) {
        Ok(s) => s,
        Err(c) => return *c,
    };
    let resource = resource_of(&server);
    let good = o.mint(&resource, 300);
    // Refused as expired: a reason no audience defect touches.
    let foreign = o.mint(&resource, -600);
    let broken = break_claims(&foreign);
    o.remember(&broken);
    let rejected = reason(id, "REJECTED");
    let run = |token: &str| {
        let since = o.fixture.events().len();
        let (mut observed, detail, mut art) = present(o, &server, id, token);
        let forwarded = forwarded_since(o, since);
        art["observation"] = json!({"passThroughRequestsSeenByIssuer": forwarded});
        if forwarded > 0 {
            observed.1 = reasons::OAUTH_TOKEN_FORWARDED.into();
        }
        let detail = format!("{detail}; {forwarded} pass-through request(s) seen by the issuer");
        (observed, detail, art)
    };
    let (p, pd, pa) = run(&good);
    let (n, nd, na) = run(&foreign);
    let (m, md, ma) = run(&broken);
    let positive = obs(
        ProbeOutcome::Accept,
        &reason(id, "ACCEPTED"),
        p.clone(),
        reached(&p),
        pd,
        pa,
    );
    let negative = obs(
        ProbeOutcome::Reject,
        &rejected,
        n.clone(),
        reached(&n),
        nd,
        na,
    );
    let mutant = mutant(&rejected, m, md, ma);
    finish(o, id, server, positive, negative, mutant)
}

/// `protected-resource-metadata-discovery`: the RFC 9728 metadata at the
/// well-known location names this resource and the fixture's issuer
/// (positive); a request without a token is refused with a challenge that
/// points at that metadata (negative); a malformed token is refused early.
fn metadata_discovery(o: &OauthCtx) -> CheckRun {
    let id = "protected-resource-metadata-discovery";
    let server = match serve_or_not(o, id) {
        Ok(s) => s,
        Err(c) => return *c,
    };
    let resource = resource_of(&server);
    let metadata_url = format!("http://{}{}", server.authority, metadata_path());
    let issuer = o.fixture.issuer().to_string();
    let accepted = reason(id, "ACCEPTED");
    let rejected = reason(id, "REJECTED");

    // Positive: the metadata document.
    let rec = o.rec();
    let resp = match Conn::open(&rec, &server.addr) {
        Ok(mut conn) => {
            let req = Request::to("GET", metadata_path(), &server.authority)
                .header("Connection", "close");
            conn.write(&req.to_bytes());
            conn.response(o.ctx.answer)
        }
        Err(_) => Resp::default(),
    };
    let doc: Value = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
    let names_resource = doc.get("resource").and_then(Value::as_str) == Some(resource.as_str());
    let servers: Vec<&str> = doc
        .get("authorization_servers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let only_issuer = servers == [issuer.as_str()];
    let p = match resp.status {
        None => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
        Some(200) if names_resource && only_issuer => (ProbeOutcome::Accept, accepted.clone()),
        Some(200) if !names_resource => (ProbeOutcome::Reject, other("metadata-resource-mismatch")),
        Some(200) => (
            ProbeOutcome::Reject,
            other("metadata-authorization-servers-not-the-issuer"),
        ),
        Some(s) => (ProbeOutcome::Reject, other(&format!("status {s}"))),
    };
    let positive = obs(
        ProbeOutcome::Accept,
        &accepted,
        p.clone(),
        p.0 != ProbeOutcome::NotObserved,
        format!("{} ({})", resp.label(), p.1),
        artifact(
            &rec,
            &resp,
            json!({"namesResource": names_resource, "authorizationServers": servers}),
        ),
    );

    // Negative: no token at all; the challenge must point at the metadata.
    let rec = o.rec();
    let (resp, answer_id) = post_open(o, &rec, &server, None);
    let challenge = resp.header("www-authenticate").unwrap_or("").to_string();
    let points = challenge.starts_with("Bearer ")
        && challenge.contains(&format!("resource_metadata=\"{metadata_url}\""));
    let n = match resp.status {
        None => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
        Some(_) if resp.is_2xx() && resp.result_for(&answer_id).is_some() => (
            ProbeOutcome::Accept,
            other("unauthenticated-request-served"),
        ),
        Some(401) if points => (ProbeOutcome::Reject, rejected.clone()),
        Some(401) => (
            ProbeOutcome::Reject,
            other("challenge-without-resource-metadata"),
        ),
        Some(s) => (ProbeOutcome::Reject, other(&format!("status {s}"))),
    };
    let negative = obs(
        ProbeOutcome::Reject,
        &rejected,
        n.clone(),
        n.0 != ProbeOutcome::NotObserved,
        format!("{} ({})", resp.label(), n.1),
        artifact(&rec, &resp, json!({"challengePointsAtMetadata": points})),
    );

    // Mutant: a bearer token that is not a JWT at all.
    let junk = "not-a-jwt";
    o.remember(junk);
    let rec = o.rec();
    let (resp, answer_id) = post_open(o, &rec, &server, Some(junk));
    let m = match classify(id, &resp, &answer_id, "missing-token") {
        (ProbeOutcome::Reject, r) if r == EARLY => (ProbeOutcome::Reject, r),
        // A refusal carrying the pointer for any other reason would be
        // credited as the negative's.
        (ProbeOutcome::Reject, _)
            if resp
                .header("www-authenticate")
                .is_some_and(|c| c.contains("resource_metadata=")) =>
        {
            (ProbeOutcome::Reject, rejected.clone())
        }
        x => x,
    };
    let mutant = mutant(
        &rejected,
        m.clone(),
        format!("{} ({})", resp.label(), m.1),
        artifact(&rec, &resp, json!({})),
    );
    finish(o, id, server, positive, negative, mutant)
}

/// How often `secret` occurs in `value`, in any form the one redactor
/// knows (raw, JSON-escaped, percent-encoded, base64 at any alignment),
/// each recorded stream read as a whole (a token written in two pieces is
/// one occurrence), base64 fields decoded.
fn occurrences(value: &Value, secret: &str) -> usize {
    crate::produce::drive::redact::Redactor::synthetic(&[secret])
        .scan_value(value)
        .total()
}

/// `token-storage-omission`: the subject keeps no presented token in what it
/// writes (its stdout and stderr, read after it stopped): neither an
/// accepted one (positive) nor a refused one (negative, refused as
/// `expired`); a malformed one is refused early. Any occurrence of a
/// token's bytes is `MCP_RES_OAUTH_TOKEN_STORED` (the count is recorded,
/// never the bytes).
fn token_storage(o: &OauthCtx) -> CheckRun {
    let id = "token-storage-omission";
    let server = match serve_or_not(o, id) {
        Ok(s) => s,
        Err(c) => return *c,
    };
    let resource = resource_of(&server);
    let good = o.mint(&resource, 300);
    // Refused as expired: a reason no audience defect touches.
    let foreign = o.mint(&resource, -600);
    let broken = break_claims(&foreign);
    o.remember(&broken);
    let rejected = reason(id, "REJECTED");
    let seen: Vec<_> = [&good, &foreign, &broken]
        .into_iter()
        .map(|t| present(o, &server, id, t))
        .collect();
    // Read what the subject wrote only once it has stopped: nothing is
    // still in flight.
    let server_artifact = o.ctx.stop(server);
    // In its output, and in the files it left in its sandbox (counted there
    // under the token's digest, never stored).
    let in_files = |t: &str| {
        let key = crate::produce::drive::sandbox::Watched::key(t);
        server_artifact.as_ref().map_or(0, |a| {
            a["sandbox"]["entriesLeft"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e["watched"][&key].as_u64())
                .sum::<u64>() as usize
        })
    };
    let stored = |t: &str| server_artifact.as_ref().map_or(0, |a| occurrences(a, t)) + in_files(t);
    let mut judged = seen.into_iter().zip([&good, &foreign, &broken]).map(
        |((mut observed, detail, mut art), token)| {
            let n = stored(token);
            art["observation"] = json!({"tokenOccurrencesInSubjectOutput": n - in_files(token), "tokenOccurrencesInFilesLeft": in_files(token)});
            if n > 0 {
                observed.1 = reasons::OAUTH_TOKEN_STORED.into();
            }
            (
                observed,
                format!("{detail}; the token occurs {n} time(s) in the subject's output and the files it left"),
                art,
            )
        },
    );
    let (p, pd, pa) = judged.next().expect("three");
    let (n, nd, na) = judged.next().expect("three");
    let (m, md, ma) = judged.next().expect("three");
    let positive = obs(
        ProbeOutcome::Accept,
        &reason(id, "ACCEPTED"),
        p.clone(),
        reached(&p),
        pd,
        pa,
    );
    let negative = obs(
        ProbeOutcome::Reject,
        &rejected,
        n.clone(),
        reached(&n),
        nd,
        na,
    );
    CheckRun {
        id,
        positive: Some(positive),
        negative: Some(negative),
        mutant: Some(mutant(&rejected, m, md, ma)),
        not_observed: None,
        server: server_artifact,
    }
}

/// A subject's answer that echoed the token it was given.
pub const ECHOES_TOKEN: &str = reasons::OAUTH_ERROR_ECHOES_TOKEN;
/// A subject's answer that echoed a claim value (`sub`, `jti`, `client_id`)
/// of the token it was given.
pub const ECHOES_CLAIM: &str = reasons::OAUTH_ERROR_ECHOES_CLAIM;
/// The claims whose values an authorization error must not repeat.
const PRIVATE_CLAIMS: [&str; 3] = ["sub", "jti", "client_id"];
/// A scope the subject never requires (the scope-less token's).
const UNRELATED_SCOPE: &str = "unrelated";

/// The claims segment of a compact JWT, decoded and not verified.
fn unverified_claims(token: &str) -> Option<Value> {
    use base64::Engine as _;
    let claims = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(claims)
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// What an answer to `token` gives away, judged on the bytes as they arrived
/// (before any redaction): `Some("token")` when its body or a header holds
/// the token, or its claims or signature segment; `Some("claim NAME")` when
/// it holds the value of a private claim (`sub`, `jti`, `client_id`) of
/// `claims_from` (the token itself, or the well-formed token a malformed one
/// was made from). Never the value itself.
pub fn error_leak(resp: &Resp, token: &str, claims_from: &str) -> Option<String> {
    let found = |needle: &str| {
        !needle.is_empty()
            && (super::contains(&resp.body, needle.as_bytes())
                || resp.headers.iter().any(|(_, v)| v.contains(needle)))
    };
    let mut segments = token.split('.').skip(1).filter(|s| s.len() >= 16);
    if found(token) || segments.any(found) {
        return Some("token".into());
    }
    let claims = unverified_claims(claims_from)?;
    PRIVATE_CLAIMS
        .iter()
        .find(|c| {
            claims
                .get(**c)
                .and_then(Value::as_str)
                .is_some_and(|v| v.len() >= 4 && found(v))
        })
        .map(|c| format!("claim {c}"))
}

/// The reason code of a leak [`error_leak`] found.
fn leak_code(what: &str) -> &'static str {
    if what == "token" {
        ECHOES_TOKEN
    } else {
        ECHOES_CLAIM
    }
}

/// The scopes of a space-separated scope string, as a set.
fn scope_set(s: &str) -> std::collections::BTreeSet<String> {
    s.split(' ')
        .filter(|x| !x.is_empty())
        .map(str::to_string)
        .collect()
}

/// `scope-minimization`: the subject requires the scope it was started
/// with (`{scope}`). Positive: a token from a real grant that asked for
/// exactly that scope, and was granted exactly what it asked (the token
/// endpoint's `scope`, or its omission, which RFC 6749 §5.1 reads as the
/// requested scope), is accepted. Negative: a valid token for this resource
/// carrying another scope is refused `insufficient-scope` with `403` and an
/// `error="insufficient_scope"` challenge (RFC 6750 §3.1). Mutant: that
/// token with broken claims is refused early. A subject started without a
/// scope requirement is not observed: nothing says which scope a token
/// must lack.
fn scope_minimization(o: &OauthCtx) -> CheckRun {
    let id = "scope-minimization";
    let Some(required) = o.required_scope.clone() else {
        return CheckRun::not_observed(
            id,
            "the subject's command does not say {scope}: no scope requirement is known, so a token without it cannot be shown to be refused for it",
        );
    };
    let server = match serve_or_not(o, id) {
        Ok(s) => s,
        Err(c) => return *c,
    };
    let resource = resource_of(&server);
    let accepted = reason(id, "ACCEPTED");
    let rejected = reason(id, "REJECTED");
    let own = "insufficient-scope";

    // Positive: a real grant for exactly the required scope.
    let requested = scope_set(super::SCOPE);
    let required_set = scope_set(&required);
    let (redeemed, grant) = flow::grant(o, &resource);
    let (p, pd, pa) = match redeemed
        .as_ref()
        .and_then(|r| Some((r, r.access_token.clone()?)))
    {
        None => (
            (ProbeOutcome::NotObserved, other("no-grant")),
            "the fixture issued no token for the required scope".to_string(),
            json!({"observation": {"grant": grant}}),
        ),
        Some((r, token)) => {
            let authorized = r.scope.as_deref().map_or(requested.clone(), scope_set);
            *o.grant_scopes.lock().expect("scopes lock") = Some((
                requested.iter().cloned().collect(),
                authorized.iter().cloned().collect(),
            ));
            let (mut observed, detail, mut art) = present_as(o, &server, id, &token, own);
            art["observation"] = json!({
                "grant": grant,
                "requiredScopes": required_set,
                "requestedScopes": requested,
                "authorizedScopes": authorized,
                "scopeOmittedByTokenEndpoint": r.scope.is_none(),
            });
            if observed.0 == ProbeOutcome::Accept && requested != required_set {
                observed.1 = other("requested-scopes-not-the-required");
            } else if observed.0 == ProbeOutcome::Accept && authorized != requested {
                observed.1 = other("authorized-scopes-not-the-requested");
            }
            let detail = format!(
                "{detail}; requested {requested:?}, authorized {authorized:?}, required {required_set:?}"
            );
            (observed, detail, art)
        }
    };

    // Negative: right audience, right issuer, another scope.
    let scopeless = o
        .fixture
        .mint_access_token(&o.client_id, &resource, UNRELATED_SCOPE, 300);
    o.remember(&scopeless);
    let rec = o.rec();
    let (resp, answer_id) = post_open(o, &rec, &server, Some(&scopeless));
    let mut n = classify(id, &resp, &answer_id, own);
    if n.0 == ProbeOutcome::Reject {
        o.saw_refusal(&resp, &scopeless);
    }
    let challenge = resp.header("www-authenticate").unwrap_or("").to_string();
    let rfc6750 = resp.status == Some(403) && challenge.contains("error=\"insufficient_scope\"");
    if n.1 == rejected && !rfc6750 {
        n = (
            ProbeOutcome::Reject,
            other("insufficient-scope-without-403-challenge"),
        );
    }
    let nd = format!("{} ({})", resp.label(), n.1);
    let na = artifact(
        &rec,
        &resp,
        json!({"tokenScope": UNRELATED_SCOPE, "status403WithInsufficientScopeChallenge": rfc6750}),
    );

    // Mutant: the scope-less token with its claims broken.
    let broken = break_claims(&scopeless);
    o.remember(&broken);
    let (m, md, ma) = present_as(o, &server, id, &broken, own);
    let positive = obs(
        ProbeOutcome::Accept,
        &accepted,
        p.clone(),
        reached(&p),
        pd,
        pa,
    );
    let negative = obs(
        ProbeOutcome::Reject,
        &rejected,
        n.clone(),
        reached(&n),
        nd,
        na,
    );
    let mutant = mutant(&rejected, m, md, ma);
    finish(o, id, server, positive, negative, mutant)
}

/// `sanitized-authorization-errors`: what the subject answers to a presented
/// token holds neither the token (nor its claims or signature segment) nor
/// the value of its `sub`, `jti` or `client_id` claim, in the body or any
/// header (`WWW-Authenticate` included), judged on the bytes as they arrived
/// (the recorded transcript has the token redacted). Positive: an accepted
/// request; negative: a token for another audience that has also expired,
/// refused as `wrong-audience` (or `expired`, by a subject that does not
/// check audiences: this check is about what a refusal says, not why) and
/// nothing more; mutant: that token with broken claims, refused early and
/// nothing more. A leak in the mutant's refusal fails the negative too: the
/// property is that no refusal leaks.
fn sanitized_errors(o: &OauthCtx) -> CheckRun {
    let id = "sanitized-authorization-errors";
    let server = match serve_or_not(o, id) {
        Ok(s) => s,
        Err(c) => return *c,
    };
    let resource = resource_of(&server);
    let good = o.mint(&resource, 300);
    let foreign = o.mint(OTHER_RESOURCE, -600);
    let broken = break_claims(&foreign);
    o.remember(&broken);
    let rejected = reason(id, "REJECTED");
    let run = |token: &str, claims_from: &str| {
        let rec = o.rec();
        let (resp, answer_id) = post_open(o, &rec, &server, Some(token));
        let mut observed = classify(id, &resp, &answer_id, "wrong-audience");
        if observed == (ProbeOutcome::Reject, other("expired")) {
            observed.1 = rejected.clone();
        }
        let leak = error_leak(&resp, token, claims_from);
        if observed.0 == ProbeOutcome::Reject {
            o.saw_refusal_of(&resp, token, claims_from);
        }
        if let Some(what) = &leak {
            observed.1 = leak_code(what).into();
        }
        let detail = format!(
            "{} ({}){}",
            resp.label(),
            observed.1,
            leak.as_ref()
                .map_or(String::new(), |w| format!("; the answer holds the {w}"))
        );
        let art = artifact(&rec, &resp, json!({"leaked": leak}));
        (observed, detail, art, leak)
    };
    let (p, pd, pa, _) = run(&good, &good);
    let (mut n, mut nd, na, n_leak) = run(&foreign, &foreign);
    let (m, md, ma, m_leak) = run(&broken, &foreign);
    if let (None, Some(what)) = (&n_leak, &m_leak) {
        n.1 = leak_code(what).into();
        nd = format!("{nd}; the malformed token's refusal holds the {what}");
    }
    let positive = obs(
        ProbeOutcome::Accept,
        &reason(id, "ACCEPTED"),
        p.clone(),
        reached(&p),
        pd,
        pa,
    );
    let negative = obs(
        ProbeOutcome::Reject,
        &rejected,
        n.clone(),
        reached(&n),
        nd,
        na,
    );
    let mutant = mutant(&rejected, m, md, ma);
    finish(o, id, server, positive, negative, mutant)
}

/// `wrong-resource-token-rejection`: a token obtained through a real grant
/// for this resource is accepted; one obtained through a real grant for
/// another resource is refused as `wrong-audience`; that token with broken
/// claims is refused early.
fn wrong_resource_token(o: &OauthCtx) -> CheckRun {
    let id = "wrong-resource-token-rejection";
    let server = match serve_or_not(o, id) {
        Ok(s) => s,
        Err(c) => return *c,
    };
    let resource = resource_of(&server);
    let (good, good_flow) = flow::obtain(o, &resource);
    let (foreign, foreign_flow) = flow::obtain(o, OTHER_RESOURCE);
    let (Some(good), Some(foreign)) = (good, foreign) else {
        let mut c = CheckRun::not_observed(
            id,
            "the fixture did not issue the two tokens the check needs",
        );
        c.server = o.ctx.stop(server);
        return c;
    };
    let broken = break_claims(&foreign);
    o.remember(&broken);
    let rejected = reason(id, "REJECTED");
    let with_flow = |(observed, detail, mut art): ((ProbeOutcome, String), String, Value),
                     flow: &Value| {
        art["observation"] = json!({"grant": flow});
        (observed, detail, art)
    };
    let (p, pd, pa) = with_flow(present(o, &server, id, &good), &good_flow);
    let (n, nd, na) = with_flow(present(o, &server, id, &foreign), &foreign_flow);
    let (m, md, ma) = present(o, &server, id, &broken);
    let positive = obs(
        ProbeOutcome::Accept,
        &reason(id, "ACCEPTED"),
        p.clone(),
        reached(&p),
        pd,
        pa,
    );
    let negative = obs(
        ProbeOutcome::Reject,
        &rejected,
        n.clone(),
        reached(&n),
        nd,
        na,
    );
    let mutant = mutant(&rejected, m, md, ma);
    finish(o, id, server, positive, negative, mutant)
}

/// `token-request-resource` (evidence from the fixture, not the subject):
/// a code issued for resource R redeemed with `resource=R` gives a token for
/// R; redeemed with another resource it is refused `invalid_target`; the
/// same request without its `code` is refused early (`invalid_request`).
fn token_request_resource(o: &OauthCtx) -> CheckRun {
    let id = "token-request-resource";
    let resource = crate::judge::oauth::RESOURCE_REQUESTED;
    let redirect = o.redirect_uri.clone();
    let accepted = reason(id, "ACCEPTED");
    let rejected = reason(id, "REJECTED");
    // The judge's classifier.
    let classify = |r: &flow::Redeemed, asked: &str| -> (ProbeOutcome, String) {
        crate::judge::oauth::classify_redemption(
            id,
            r.status,
            (r.access_token.is_some(), r.audience.as_deref()),
            (r.error.as_deref(), r.description.as_deref()),
            asked,
        )
    };
    let run = |redeem_for: &str, drop_code: bool| {
        let (verifier, challenge) = flow::pkce(o);
        let a = flow::authorize(o, resource, &challenge, &redirect);
        let Some(code) = a.code.clone() else {
            let detail = format!("no code: {:?}", a.error);
            return (
                (ProbeOutcome::NotObserved, other("no-authorization-code")),
                detail,
                json!([a.summary]),
            );
        };
        let mut params = flow::code_grant(o, &code, &verifier, &redirect, redeem_for);
        if drop_code {
            params.retain(|(k, _)| *k != "code");
        }
        let r = flow::token_request(o, &params);
        let observed = classify(&r, redeem_for);
        let detail = format!(
            "token request for {redeem_for} with a code for {resource}: {:?} {:?} ({})",
            r.status, r.error, observed.1
        );
        (observed, detail, json!([a.summary, r.summary]))
    };
    let (p, pd, pa) = run(resource, false);
    let (n, nd, na) = run(crate::judge::oauth::OTHER_RESOURCE_REQUESTED, false);
    let (m, md, ma) = run(crate::judge::oauth::OTHER_RESOURCE_REQUESTED, true);
    CheckRun {
        id,
        positive: Some(obs(
            ProbeOutcome::Accept,
            &accepted,
            p.clone(),
            reached(&p),
            pd,
            pa,
        )),
        negative: Some(obs(
            ProbeOutcome::Reject,
            &rejected,
            n.clone(),
            reached(&n),
            nd,
            na,
        )),
        mutant: Some(mutant(&rejected, m, md, ma)),
        not_observed: None,
        server: None,
    }
}

/// An authorization request's answer classified for check `id`: granted
/// (ACCEPTED), refused with the check's own description (REJECTED), refused
/// because a parameter was repeated (the early syntax rejection), or
/// refused otherwise.
fn classify_authz(id: &str, a: &flow::AuthzAnswer) -> (ProbeOutcome, String) {
    // The judge's classifier, with the check's own refusal and `state`
    // binding from its table.
    let (_, own, bind_state) = crate::judge::oauth::AUTHORIZATION
        .iter()
        .find(|(c, _, _)| *c == id)
        .unwrap_or_else(|| panic!("check {id} is not in judge::oauth::AUTHORIZATION"));
    crate::judge::oauth::classify_authorization(
        id,
        a.status,
        a.granted,
        a.error.as_deref(),
        a.description.as_deref(),
        a.state_returned,
        (own, *bind_state),
    )
}

/// Positive, negative and mutant authorization requests: each a list of
/// parameters; the check's own refusal (and whether a grant must carry the
/// request's `state` back) is its row of [`crate::judge::oauth::AUTHORIZATION`].
fn authz_check(
    o: &OauthCtx,
    id: &'static str,
    requests: [Vec<(&'static str, String)>; 3],
) -> CheckRun {
    let accepted = reason(id, "ACCEPTED");
    let rejected = reason(id, "REJECTED");
    let mut seen = requests.into_iter().map(|params| {
        let refs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let a = flow::authorize_raw(o, &refs);
        let observed = classify_authz(id, &a);
        let detail = format!(
            "{:?} {:?} {:?} ({})",
            a.status, a.error, a.description, observed.1
        );
        (observed, detail, a.summary)
    });
    let (p, pd, pa) = seen.next().expect("three");
    let (n, nd, na) = seen.next().expect("three");
    let (m, md, ma) = seen.next().expect("three");
    CheckRun {
        id,
        positive: Some(obs(
            ProbeOutcome::Accept,
            &accepted,
            p.clone(),
            reached(&p),
            pd,
            pa,
        )),
        negative: Some(obs(
            ProbeOutcome::Reject,
            &rejected,
            n.clone(),
            reached(&n),
            nd,
            na,
        )),
        mutant: Some(mutant(&rejected, m, md, ma)),
        not_observed: None,
        server: None,
    }
}

/// `pkce-downgrade-refused` (fixture): S256 is granted; `plain` is refused
/// for what it is; `plain` with the method given twice is refused early.
fn pkce_downgrade(o: &OauthCtx) -> CheckRun {
    let id = "pkce-downgrade-refused";
    let resource = "http://127.0.0.1:2/mcp";
    let (_, challenge) = flow::pkce(o);
    let positive = flow::authz_params(o, resource, &challenge);
    let plain = |params: &mut Vec<(&'static str, String)>| {
        for (k, v) in params.iter_mut() {
            if *k == "code_challenge_method" {
                *v = "plain".into();
            }
        }
    };
    let mut negative = flow::authz_params(o, resource, &challenge);
    plain(&mut negative);
    let mut mutant = flow::authz_params(o, resource, &challenge);
    plain(&mut mutant);
    mutant.push(("code_challenge_method", "plain".into()));
    authz_check(o, id, [positive, negative, mutant])
}

/// `exact-redirect-uri` (fixture): the registered redirect URI is granted;
/// the registered one with a path appended (a prefix match) is refused; that
/// one given twice is refused early.
fn exact_redirect(o: &OauthCtx) -> CheckRun {
    let id = "exact-redirect-uri";
    let resource = "http://127.0.0.1:2/mcp";
    let (_, challenge) = flow::pkce(o);
    let longer = format!("{}/elsewhere", o.redirect_uri);
    let positive = flow::authz_params(o, resource, &challenge);
    let with = |uri: &str| {
        let mut p = flow::authz_params(o, resource, &challenge);
        for (k, v) in p.iter_mut() {
            if *k == "redirect_uri" {
                *v = uri.to_string();
            }
        }
        p
    };
    let negative = with(&longer);
    let mut mutant = with(&longer);
    mutant.push(("redirect_uri", longer.clone()));
    authz_check(o, id, [positive, negative, mutant])
}

/// `authorization-code-binding` (fixture): a code redeemed by the client it
/// was issued to is exchanged; the same kind of code redeemed under another
/// registered client's id is refused as issued to another client; that
/// request without its `code` is refused early (`invalid_request`).
fn code_binding(o: &OauthCtx) -> CheckRun {
    let id = "authorization-code-binding";
    let resource = "http://127.0.0.1:2/mcp";
    let redirect = o.redirect_uri.clone();
    let accepted = reason(id, "ACCEPTED");
    let rejected = reason(id, "REJECTED");
    let run = |client: &str, drop_code: bool| {
        let (verifier, challenge) = flow::pkce(o);
        let a = flow::authorize(o, resource, &challenge, &redirect);
        let Some(code) = a.code.clone() else {
            return (
                (ProbeOutcome::NotObserved, other("no-authorization-code")),
                format!("no code: {:?}", a.error),
                json!([a.summary]),
            );
        };
        let mut params = flow::code_grant(o, &code, &verifier, &redirect, resource);
        for (k, v) in params.iter_mut() {
            if *k == "client_id" {
                *v = client;
            }
        }
        if drop_code {
            params.retain(|(k, _)| *k != "code");
        }
        let r = flow::token_request(o, &params);
        // The judge's classifier (the audience is not this check's concern).
        let observed = crate::judge::oauth::classify_redemption(
            id,
            r.status,
            (r.access_token.is_some(), r.audience.as_deref()),
            (r.error.as_deref(), r.description.as_deref()),
            resource,
        );
        let detail = format!(
            "token request as {}: {:?} {:?} ({})",
            if client == o.client_id {
                "the code's client"
            } else {
                "another client"
            },
            r.status,
            r.error,
            observed.1
        );
        (observed, detail, json!([a.summary, r.summary]))
    };
    let (p, pd, pa) = run(&o.client_id, false);
    let (n, nd, na) = run(&o.other_client_id, false);
    let (m, md, ma) = run(&o.other_client_id, true);
    CheckRun {
        id,
        positive: Some(obs(
            ProbeOutcome::Accept,
            &accepted,
            p.clone(),
            reached(&p),
            pd,
            pa,
        )),
        negative: Some(obs(
            ProbeOutcome::Reject,
            &rejected,
            n.clone(),
            reached(&n),
            nd,
            na,
        )),
        mutant: Some(mutant(&rejected, m, md, ma)),
        not_observed: None,
        server: None,
    }
}

/// `refresh-token-rotation-when-claimed` (fixture; it issues refresh
/// tokens, so the condition holds): using a refresh token gives a new,
/// different one; presenting the used one again is refused and revokes the
/// family (the new refresh token is then inactive); a refresh request without
/// its `refresh_token` is refused early (`invalid_request`).
fn refresh_rotation(o: &OauthCtx) -> CheckRun {
    let id = "refresh-token-rotation-when-claimed";
    let resource = "http://127.0.0.1:2/mcp";
    let accepted = reason(id, "ACCEPTED");
    let rejected = reason(id, "REJECTED");
    let (granted, grant_summary) = flow::grant(o, resource);
    let Some(first) = granted.and_then(|g| g.refresh_token) else {
        return CheckRun::not_observed(id, "the fixture issued no refresh token");
    };
    let refresh = |token: Option<&str>| {
        let mut params = vec![
            ("grant_type", "refresh_token"),
            ("client_id", o.client_id.as_str()),
            ("resource", resource),
        ];
        if let Some(t) = token {
            params.push(("refresh_token", t));
        }
        flow::token_request(o, &params)
    };
    // Positive: a new refresh token, not the one presented.
    let r = refresh(Some(&first));
    let second = r.refresh_token.clone();
    // The judge's classifier, for each of the three.
    let classify = crate::judge::oauth::classify_refresh;
    let p = classify(
        "positive",
        r.status,
        r.error.as_deref(),
        (Some(first.as_str()), second.as_deref()),
        None,
    );
    let pd = format!("{:?} {:?} ({})", r.status, r.error, p.1);
    let pa = json!({"grant": grant_summary, "refresh": r.summary});
    // Negative: the used one again; refused, and the family revoked.
    let n_resp = refresh(Some(&first));
    let family_revoked = second
        .as_deref()
        .and_then(|s| flow::introspect(o, s))
        .map(|active| !active);
    let n = classify(
        "negative",
        n_resp.status,
        n_resp.error.as_deref(),
        (None, None),
        family_revoked,
    );
    let nd = format!(
        "{:?} {:?}; family revoked: {family_revoked:?} ({})",
        n_resp.status, n_resp.error, n.1
    );
    let na =
        json!({"replay": n_resp.summary, "newRefreshTokenInactiveAfterReplay": family_revoked});
    // Mutant: the same request without the refresh token.
    let m_resp = refresh(None);
    let m = classify(
        "mutant",
        m_resp.status,
        m_resp.error.as_deref(),
        (None, None),
        None,
    );
    let md = format!("{:?} {:?} ({})", m_resp.status, m_resp.error, m.1);
    CheckRun {
        id,
        positive: Some(obs(
            ProbeOutcome::Accept,
            &accepted,
            p.clone(),
            reached(&p),
            pd,
            pa,
        )),
        negative: Some(obs(
            ProbeOutcome::Reject,
            &rejected,
            n.clone(),
            reached(&n),
            nd,
            na,
        )),
        mutant: Some(mutant(&rejected, m, md, m_resp.summary)),
        not_observed: None,
        server: None,
    }
}

/// `pkce-s256` (fixture): a code redeemed with its S256 verifier is
/// exchanged; redeemed with another well-formed verifier it is refused as
/// not matching the challenge; that request without `code_verifier` is
/// refused early (`invalid_request`).
fn pkce_s256(o: &OauthCtx) -> CheckRun {
    let id = "pkce-s256";
    let resource = "http://127.0.0.1:2/mcp";
    let redirect = o.redirect_uri.clone();
    let accepted = reason(id, "ACCEPTED");
    let rejected = reason(id, "REJECTED");
    #[derive(Clone, Copy)]
    enum Verifier {
        Right,
        Other,
        Missing,
    }
    let run = |which: Verifier| {
        let (verifier, challenge) = flow::pkce(o);
        let (wrong, _) = flow::pkce(o);
        let a = flow::authorize(o, resource, &challenge, &redirect);
        let Some(code) = a.code.clone() else {
            return (
                (ProbeOutcome::NotObserved, other("no-authorization-code")),
                format!("no code: {:?}", a.error),
                json!([a.summary]),
            );
        };
        let presented = match which {
            Verifier::Right => verifier.as_str(),
            _ => wrong.as_str(),
        };
        let mut params = flow::code_grant(o, &code, presented, &redirect, resource);
        if matches!(which, Verifier::Missing) {
            params.retain(|(k, _)| *k != "code_verifier");
        }
        let r = flow::token_request(o, &params);
        // The judge's classifier (the audience is not this check's concern).
        let observed = crate::judge::oauth::classify_redemption(
            id,
            r.status,
            (r.access_token.is_some(), r.audience.as_deref()),
            (r.error.as_deref(), r.description.as_deref()),
            resource,
        );
        let detail = format!("{:?} {:?} ({})", r.status, r.error, observed.1);
        (observed, detail, json!([a.summary, r.summary]))
    };
    let (p, pd, pa) = run(Verifier::Right);
    let (n, nd, na) = run(Verifier::Other);
    let (m, md, ma) = run(Verifier::Missing);
    CheckRun {
        id,
        positive: Some(obs(
            ProbeOutcome::Accept,
            &accepted,
            p.clone(),
            reached(&p),
            pd,
            pa,
        )),
        negative: Some(obs(
            ProbeOutcome::Reject,
            &rejected,
            n.clone(),
            reached(&n),
            nd,
            na,
        )),
        mutant: Some(mutant(&rejected, m, md, ma)),
        not_observed: None,
        server: None,
    }
}

/// `authorization-request-resource` (fixture): a request naming the
/// resource is granted; the same request without `resource` is refused
/// `invalid_target`; that request with its `state` given twice is refused
/// early.
fn authorization_request_resource(o: &OauthCtx) -> CheckRun {
    let id = "authorization-request-resource";
    let resource = "http://127.0.0.1:2/mcp";
    let (_, challenge) = flow::pkce(o);
    let positive = flow::authz_params(o, resource, &challenge);
    let mut negative = flow::authz_params(o, resource, &challenge);
    negative.retain(|(k, _)| *k != "resource");
    let mut mutant = negative.clone();
    if let Some((_, state)) = mutant.iter().find(|(k, _)| *k == "state").cloned() {
        mutant.push(("state", state));
    }
    authz_check(o, id, [positive, negative, mutant])
}

/// `state-binding` (fixture): a granted request gets its `state` back byte
/// for byte; the same request without `state` is refused ("state is
/// required"); that request with `state` given twice is refused early.
fn state_binding(o: &OauthCtx) -> CheckRun {
    let id = "state-binding";
    let resource = "http://127.0.0.1:2/mcp";
    let (_, challenge) = flow::pkce(o);
    let positive = flow::authz_params(o, resource, &challenge);
    let mut negative = flow::authz_params(o, resource, &challenge);
    let state = negative
        .iter()
        .find(|(k, _)| *k == "state")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    negative.retain(|(k, _)| *k != "state");
    let mut mutant = flow::authz_params(o, resource, &challenge);
    mutant.push(("state", state));
    authz_check(o, id, [positive, negative, mutant])
}

/// The fixture's note on the client ID metadata document fetch of the
/// authorization request made after event `since`.
fn fetch_note_since(o: &OauthCtx, since: usize) -> Option<String> {
    o.fixture
        .events()
        .into_iter()
        .skip(since)
        .rfind(|e| e.method == "FETCH")
        .and_then(|e| e.note)
}

/// `cimd-identity` (fixture): the run's client, whose metadata document
/// names its own URL, is granted; a client whose document (served at its
/// URL) claims another client's id is refused, the fixture's audit naming
/// the mismatch; a `client_id` that is not a URL is refused early, before
/// any fetch.
fn cimd_identity(o: &OauthCtx) -> CheckRun {
    let id = "cimd-identity";
    let resource = "http://127.0.0.1:2/mcp";
    let accepted = reason(id, "ACCEPTED");
    let rejected = reason(id, "REJECTED");
    let run = |client: &str| {
        let (_, challenge) = flow::pkce(o);
        let mut params = flow::authz_params(o, resource, &challenge);
        for (k, v) in params.iter_mut() {
            if *k == "client_id" {
                *v = client.to_string();
            }
        }
        let refs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let since = o.fixture.events().len();
        let a = flow::authorize_raw(o, &refs);
        let note = fetch_note_since(o, since);
        // The judge's classifier.
        let observed = crate::judge::oauth::classify_cimd_identity(
            a.status,
            a.granted,
            note.as_deref(),
            a.error.as_deref(),
        );
        let detail = format!(
            "{:?} {:?}; fixture: {:?} ({})",
            a.status, a.error, note, observed.1
        );
        let art = json!({"request": a.summary, "fixtureFetchNote": note});
        (observed, detail, art)
    };
    let (p, pd, pa) = run(&o.client_id);
    let (n, nd, na) = run(&o.impostor_client_id);
    let (m, md, ma) = run("not-a-url");
    CheckRun {
        id,
        positive: Some(obs(
            ProbeOutcome::Accept,
            &accepted,
            p.clone(),
            reached(&p),
            pd,
            pa,
        )),
        negative: Some(obs(
            ProbeOutcome::Reject,
            &rejected,
            n.clone(),
            reached(&n),
            nd,
            na,
        )),
        mutant: Some(mutant(&rejected, m, md, ma)),
        not_observed: None,
        server: None,
    }
}

/// What an authorization server URL named by protected-resource metadata
/// is, to the runner's resolution policy (no name is ever resolved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// `http://` with a loopback IP literal: the only kind connected to.
    Loopback,
    /// An IP literal off loopback: refused before a socket exists.
    NotLoopback,
    /// A host name (`localhost` included): refused, never resolved.
    HostName,
    /// Not an `http://HOST[:PORT][/PATH]` URL at all (a syntax refusal).
    Malformed,
}

fn target_kind(url: &str) -> Target {
    let Some(rest) = url.strip_prefix("http://") else {
        return Target::Malformed;
    };
    if url.contains(['?', '#', '@']) || url.bytes().any(|b| b <= b' ' || b >= 0x7f) {
        return Target::Malformed;
    }
    let authority = rest.split('/').next().unwrap_or_default();
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((h, "")) => (h, None),
            Some((h, p)) => match p.strip_prefix(':') {
                Some(p) => (h, Some(p)),
                None => return Target::Malformed,
            },
            None => return Target::Malformed,
        },
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        },
    };
    if host.is_empty() || port.is_some_and(|p| p.parse::<u16>().is_err()) {
        return Target::Malformed;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) if ip.is_loopback() => Target::Loopback,
        Ok(_) => Target::NotLoopback,
        Err(_) => Target::HostName,
    }
}

/// The RFC 8414 metadata URL of `issuer` (the well-known segment inserted
/// between the authority and the issuer's path).
fn as_metadata_url(issuer: &str) -> String {
    let rest = issuer.strip_prefix("http://").unwrap_or(issuer);
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    format!("http://{authority}/.well-known/oauth-authorization-server{path}")
}

/// The runner, as a client, resolving one authorization server URL: only a
/// loopback IP literal is fetched, and its metadata must name it as
/// `issuer`. `Err` names why it was refused; a refusal before connect is
/// recorded in the run's network log.
fn resolve_as(o: &OauthCtx, entry: &str) -> (Target, Result<(), &'static str>) {
    let kind = target_kind(entry);
    let refuse = |why: &'static str| {
        o.network.lock().expect("network lock").refused.push(
            entry
                .split(['?', '#'])
                .next()
                .unwrap_or_default()
                .to_string(),
        );
        (kind, Err(why))
    };
    match kind {
        Target::Malformed => refuse("malformed-url"),
        Target::HostName => refuse("host-name-not-resolved"),
        Target::NotLoopback => refuse("not-loopback"),
        Target::Loopback => {
            let doc = fetch_json(o, &as_metadata_url(entry));
            match doc.get("issuer").and_then(Value::as_str) {
                _ if doc.is_null() => (kind, Err("metadata-unavailable")),
                Some(i) if i.trim_end_matches('/') == entry.trim_end_matches('/') => (kind, Ok(())),
                _ => (kind, Err("issuer-mismatch")),
            }
        }
    }
}

/// One authorization server URL, its kind, and why the runner refused it.
type Resolved = (String, Target, Result<(), &'static str>);

/// The subject's protected-resource metadata and the runner's resolution
/// of each authorization server it names (in order).
fn subject_authorization_servers(
    o: &OauthCtx,
    server: &Server,
) -> (Option<Vec<String>>, Vec<Resolved>) {
    let url = format!("http://{}{}", server.authority, metadata_path());
    let doc = fetch_json(o, &url);
    let Some(entries) = doc.get("authorization_servers").and_then(Value::as_array) else {
        return (None, Vec::new());
    };
    let entries: Vec<String> = entries
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    let resolved = entries
        .iter()
        .map(|e| {
            let (k, r) = resolve_as(o, e);
            (e.clone(), k, r)
        })
        .collect();
    (Some(entries), resolved)
}

fn resolution_json(resolved: &[Resolved]) -> Value {
    json!(
        resolved
            .iter()
            .map(|(e, k, r)| json!({
                "authorizationServer": e,
                "kind": format!("{k:?}"),
                "refusedBecause": r.err(),
            }))
            .collect::<Vec<_>>()
    )
}

/// One runner-side resolution as an observation of check `id`: refused for
/// `own` is the check's REJECTED, a syntax refusal is the early one.
fn runner_resolution(
    o: &OauthCtx,
    id: &str,
    entry: &str,
    own: &str,
) -> ((ProbeOutcome, String), String, Value) {
    let (kind, r) = resolve_as(o, entry);
    // The judge's classifier, whose table names the check's own refusal.
    debug_assert!(
        crate::judge::oauth::RESOLUTION
            .iter()
            .any(|(c, w)| *c == id && *w == own)
    );
    let observed = crate::judge::oauth::classify_resolution(id, r.err());
    let detail = format!(
        "the runner resolving {entry:?}: {kind:?}, {:?} ({})",
        r.err(),
        observed.1
    );
    let art = json!({"runnerResolution": resolution_json(&[(entry.to_string(), kind, r)])});
    (observed, detail, art)
}

/// The subject's named authorization servers as the positive of check
/// `id`: accepted when there is at least one and each resolved.
fn subject_servers_positive(
    o: &OauthCtx,
    id: &str,
    server: &Server,
) -> ((ProbeOutcome, String), String, Value) {
    let (entries, resolved) = subject_authorization_servers(o, server);
    let observed = match (&entries, resolved.iter().find_map(|(_, _, r)| r.err())) {
        (None, _) => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
        (Some(e), _) if e.is_empty() => (ProbeOutcome::Reject, other("no-authorization-servers")),
        (Some(_), None) => (ProbeOutcome::Accept, reason(id, "ACCEPTED")),
        (Some(_), Some(w)) => (ProbeOutcome::Reject, other(w)),
    };
    let detail = format!(
        "the subject's metadata names {:?}; resolution: {:?} ({})",
        entries,
        resolved.iter().map(|(_, _, r)| r.err()).collect::<Vec<_>>(),
        observed.1
    );
    let art = json!({"subjectAuthorizationServers": entries, "runnerResolution": resolution_json(&resolved)});
    (observed, detail, art)
}

fn three(
    o: &OauthCtx,
    id: &'static str,
    server: Server,
    p: ((ProbeOutcome, String), String, Value),
    n: ((ProbeOutcome, String), String, Value),
    m: ((ProbeOutcome, String), String, Value),
) -> CheckRun {
    let rejected = reason(id, "REJECTED");
    let ((p, pd, pa), (n, nd, na), (m, md, ma)) = (p, n, m);
    let positive = obs(
        ProbeOutcome::Accept,
        &reason(id, "ACCEPTED"),
        p.clone(),
        reached(&p),
        pd,
        pa,
    );
    let negative = obs(
        ProbeOutcome::Reject,
        &rejected,
        n.clone(),
        reached(&n),
        nd,
        na,
    );
    let mutant = mutant(&rejected, m, md, ma);
    finish(o, id, server, positive, negative, mutant)
}

/// `authorization-server-metadata` (TEST_FIXTURE: the refusals are the
/// runner's own, as the client; the subject only names the servers): every
/// authorization server the subject's metadata names is a loopback URL
/// whose RFC 8414 metadata names it as `issuer`; metadata whose `issuer` is
/// not the URL it was fetched from (a second in-process fixture with
/// `metadata_issuer_mismatch`) is refused; that server's URL with a port
/// that is not a number is refused by syntax, before anything is fetched.
fn authorization_server_metadata(o: &OauthCtx) -> CheckRun {
    let id = "authorization-server-metadata";
    let server = match serve_or_not(o, id) {
        Ok(s) => s,
        Err(c) => return *c,
    };
    let p = subject_servers_positive(o, id, &server);
    let mismatched = match Fixture::start(FixtureConfig {
        defects: Defects {
            metadata_issuer_mismatch: true,
            ..Defects::default()
        },
        ..FixtureConfig::default()
    }) {
        Ok(f) => f,
        Err(e) => {
            let mut c = CheckRun::not_observed(
                id,
                format!("the second (mismatched) fixture did not start: {e}"),
            );
            c.server = o.ctx.stop(server);
            return c;
        }
    };
    let other_issuer = mismatched.issuer().to_string();
    let n = runner_resolution(o, id, &other_issuer, "issuer-mismatch");
    mismatched.stop();
    let broken = match other_issuer.rsplit_once(':') {
        Some((head, _)) => format!("{head}:not-a-port"),
        None => format!("{other_issuer}:not-a-port"),
    };
    let m = runner_resolution(o, id, &broken, "issuer-mismatch");
    three(o, id, server, p, n, m)
}

/// `ssrf-resistant-metadata-resolution` (TEST_FIXTURE: the resolution
/// policy is the runner's): every authorization server the subject names is
/// a loopback IP literal, fetched; an authorization server off loopback
/// (TEST-NET-1) is refused before any socket exists; that URL with a port
/// that is not a number is refused by syntax.
fn ssrf_resistant_resolution(o: &OauthCtx) -> CheckRun {
    let id = "ssrf-resistant-metadata-resolution";
    let server = match serve_or_not(o, id) {
        Ok(s) => s,
        Err(c) => return *c,
    };
    let p = subject_servers_positive(o, id, &server);
    let off = crate::server::protected::OFF_ORIGIN_AUTHORIZATION_SERVER;
    let connected_before = o.network.lock().expect("network lock").attempts.len();
    let mut n = runner_resolution(o, id, off, "not-loopback");
    let connected = o.network.lock().expect("network lock").attempts.len() - connected_before;
    n.2["connectionAttempts"] = json!(connected);
    if connected > 0 {
        n.0 = (ProbeOutcome::Reject, other("connected-before-refusing"));
    }
    let m = runner_resolution(o, id, "http://192.0.2.1:not-a-port/", "not-loopback");
    three(o, id, server, p, n, m)
}

/// `mix-up-resistance` (TEST_FIXTURE: the comparison is the runner's, as
/// the client): an authorization response whose `iss` (RFC 9207) is the
/// issuer the request went to is accepted; a response from a second
/// in-process fixture (`wrong_iss_in_response`) naming another issuer is
/// refused; a request to it with `redirect_uri` repeated gets no
/// authorization response to judge at all (a 400 page): refused early.
fn mix_up_resistance(o: &OauthCtx) -> CheckRun {
    let id = "mix-up-resistance";
    let resource = "http://127.0.0.1:2/mcp";
    let accepted = reason(id, "ACCEPTED");
    let rejected = reason(id, "REJECTED");
    let judge = |base: &str, params: Vec<(&'static str, String)>| {
        let refs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let a = flow::authorize_raw_at(o, base, &refs);
        // The judge's classifier.
        let observed = crate::judge::oauth::classify_mix_up(
            a.status,
            (a.redirected, a.granted),
            a.iss.as_deref(),
            (a.error.as_deref(), a.description.as_deref()),
            base,
        );
        let detail = format!(
            "authorization response from {base}: {:?}, iss {:?} ({})",
            a.status, a.iss, observed.1
        );
        let art = json!({"expectedIssuer": base, "response": a.summary});
        (observed, detail, art)
    };
    let (_, challenge) = flow::pkce(o);
    let (p, pd, pa) = judge(
        o.fixture.issuer(),
        flow::authz_params(o, resource, &challenge),
    );
    let second = Fixture::start(FixtureConfig {
        allowed_scopes: vec![super::SCOPE.into()],
        defects: Defects {
            wrong_iss_in_response: true,
            ..Defects::default()
        },
        ..FixtureConfig::default()
    });
    let registered = second.as_ref().ok().and_then(|f| {
        f.register_client("mcpres-oauth-run", &[&o.redirect_uri])
            .ok()
            .map(|c| (f.issuer().to_string(), c))
    });
    let Some((base, client)) = registered else {
        return CheckRun::not_observed(id, "the second (mix-up) fixture did not start");
    };
    let with_client = |mut params: Vec<(&'static str, String)>| {
        for (k, v) in params.iter_mut() {
            if *k == "client_id" {
                *v = client.clone();
            }
        }
        params
    };
    let (n, nd, na) = judge(
        &base,
        with_client(flow::authz_params(o, resource, &challenge)),
    );
    let mut mutant_params = with_client(flow::authz_params(o, resource, &challenge));
    mutant_params.push(("redirect_uri", o.redirect_uri.clone()));
    let (m, md, ma) = judge(&base, mutant_params);
    if let Ok(f) = second {
        f.stop();
    }
    CheckRun {
        id,
        positive: Some(obs(
            ProbeOutcome::Accept,
            &accepted,
            p.clone(),
            reached(&p),
            pd,
            pa,
        )),
        negative: Some(obs(
            ProbeOutcome::Reject,
            &rejected,
            n.clone(),
            reached(&n),
            nd,
            na,
        )),
        mutant: Some(mutant(&rejected, m, md, ma)),
        not_observed: None,
        server: None,
    }
}

/// `scheme://authority` of an http(s) URL.
fn origin(url: &str) -> Option<&str> {
    crate::judge::oauth::origin(url)
}

/// The runner, as a client, choosing the token endpoint of the
/// authorization server `issuer`: only from its own metadata, and only on
/// the issuer's origin (refused before any connection otherwise).
fn runner_token_endpoint(
    o: &OauthCtx,
    id: &str,
    issuer: &str,
) -> ((ProbeOutcome, String), String, Value) {
    let kind = target_kind(issuer);
    let (endpoint, verdict): (Option<String>, Result<(), &str>) = match kind {
        Target::Malformed => (None, Err("malformed-url")),
        Target::HostName => (None, Err("host-name-not-resolved")),
        Target::NotLoopback => (None, Err("not-loopback")),
        Target::Loopback => {
            let doc = fetch_json(o, &as_metadata_url(issuer));
            match doc.get("token_endpoint").and_then(Value::as_str) {
                _ if doc.is_null() => (None, Err("metadata-unavailable")),
                None => (None, Err("no-token-endpoint")),
                Some(t) if origin(t).is_some() && origin(t) == origin(issuer) => {
                    (Some(t.to_string()), Ok(()))
                }
                Some(t) => (Some(t.to_string()), Err("token-endpoint-off-origin")),
            }
        }
    };
    if verdict.is_err() {
        o.network.lock().expect("network lock").refused.push(
            endpoint
                .clone()
                .unwrap_or_else(|| issuer.to_string())
                .split(['?', '#'])
                .next()
                .unwrap_or_default()
                .to_string(),
        );
    }
    let observed = crate::judge::oauth::classify_resolution(id, verdict.err());
    let detail = format!(
        "the runner choosing the token endpoint of {issuer:?}: {endpoint:?} ({})",
        observed.1
    );
    let art = json!({"issuer": issuer, "kind": format!("{kind:?}"), "tokenEndpoint": endpoint, "refusedBecause": verdict.err()});
    (observed, detail, art)
}

/// `token-endpoint-identity` (TEST_FIXTURE: the choice is the runner's, as
/// the client): the fixture's metadata names a token endpoint on its own
/// origin, which the runner uses; metadata of a second in-process fixture
/// (`off_origin_token_endpoint`) naming one elsewhere is refused before any
/// connection; that server's URL with a port that is not a number is
/// refused by syntax.
fn token_endpoint_identity(o: &OauthCtx) -> CheckRun {
    let id = "token-endpoint-identity";
    let accepted = reason(id, "ACCEPTED");
    let rejected = reason(id, "REJECTED");
    let (p, pd, pa) = runner_token_endpoint(o, id, o.fixture.issuer());
    let second = match Fixture::start(FixtureConfig {
        defects: Defects {
            off_origin_token_endpoint: true,
            ..Defects::default()
        },
        ..FixtureConfig::default()
    }) {
        Ok(f) => f,
        Err(e) => {
            return CheckRun::not_observed(id, format!("the second fixture did not start: {e}"));
        }
    };
    let base = second.issuer().to_string();
    let (n, nd, na) = runner_token_endpoint(o, id, &base);
    second.stop();
    let broken = match base.rsplit_once(':') {
        Some((head, _)) => format!("{head}:not-a-port"),
        None => format!("{base}:not-a-port"),
    };
    let (m, md, ma) = runner_token_endpoint(o, id, &broken);
    CheckRun {
        id,
        positive: Some(obs(
            ProbeOutcome::Accept,
            &accepted,
            p.clone(),
            reached(&p),
            pd,
            pa,
        )),
        negative: Some(obs(
            ProbeOutcome::Reject,
            &rejected,
            n.clone(),
            reached(&n),
            nd,
            na,
        )),
        mutant: Some(mutant(&rejected, m, md, ma)),
        not_observed: None,
        server: None,
    }
}

/// A GET the runner makes as a client, never following a redirect: the
/// response and its transcript.
fn fetch_no_follow(o: &OauthCtx, url: &str) -> (Resp, Value) {
    let Ok(addr) = o.guarded(url) else {
        return (
            Resp::default(),
            json!({"refused": "not a loopback IP literal"}),
        );
    };
    let path = url
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_string()))
        .unwrap_or_else(|| "/".into());
    let rec = o.rec();
    let resp = match Conn::open(&rec, addr) {
        Ok(mut conn) => {
            let req = Request::to("GET", &path, &addr.to_string()).header("Connection", "close");
            conn.write(&req.to_bytes());
            conn.response(Duration::from_secs(5))
        }
        Err(_) => Resp::default(),
    };
    let art = json!({"response": resp.summary(), "transcript": rec.transcript()});
    (resp, art)
}

/// How the runner, as a client, takes a metadata response: a document
/// (`Ok`), or refused: a redirect is never followed (`redirect-not-followed`,
/// its target recorded as refused), a redirect without a `Location` is not
/// a redirect at all (`malformed-redirect`).
fn runner_takes(o: &OauthCtx, resp: &Resp) -> Result<Value, &'static str> {
    match resp.status {
        None => Err("no-answer"),
        Some(200) => serde_json::from_slice(&resp.body).map_err(|_| "not-json"),
        Some(s) if (300..400).contains(&s) => match resp.header("location") {
            Some(l) if !l.trim().is_empty() => {
                let target = l.split(['?', '#']).next().unwrap_or_default().to_string();
                o.network.lock().expect("network lock").refused.push(target);
                Err("redirect-not-followed")
            }
            _ => Err("malformed-redirect"),
        },
        Some(_) => Err("status"),
    }
}

/// The `FETCH` event of the fixture after event `since` (its status and
/// note).
fn fetch_event_since(o: &OauthCtx, since: usize) -> Option<(u16, Option<String>)> {
    o.fixture
        .events()
        .into_iter()
        .skip(since)
        .rfind(|e| e.method == "FETCH")
        .map(|e| (e.status, e.note))
}

/// An authorization request of the run's client with `client_id` (and
/// extra parameters) replaced: the answer and the fixture's `FETCH` event.
fn authorize_as(
    o: &OauthCtx,
    client_id: &str,
    extra: &[(&'static str, String)],
) -> (flow::AuthzAnswer, Option<(u16, Option<String>)>) {
    let resource = "http://127.0.0.1:2/mcp";
    let (_, challenge) = flow::pkce(o);
    let mut params = flow::authz_params(o, resource, &challenge);
    for (k, v) in params.iter_mut() {
        if *k == "client_id" {
            *v = client_id.to_string();
        }
    }
    for (k, v) in extra {
        params.retain(|(key, _)| key != k);
        params.push((k, v.clone()));
    }
    let refs: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let since = o.fixture.events().len();
    let a = flow::authorize_raw(o, &refs);
    let fetch = fetch_event_since(o, since);
    (a, fetch)
}

type Seen = ((ProbeOutcome, String), String, Value);

/// A check of fixture and runner behaviour, from its three observations.
fn fixture_check(id: &'static str, p: Seen, n: Seen, m: Seen) -> CheckRun {
    let ((p, pd, pa), (n, nd, na), (m, md, ma)) = (p, n, m);
    let rejected = reason(id, "REJECTED");
    CheckRun {
        id,
        positive: Some(obs(
            ProbeOutcome::Accept,
            &reason(id, "ACCEPTED"),
            p.clone(),
            reached(&p),
            pd,
            pa,
        )),
        negative: Some(obs(
            ProbeOutcome::Reject,
            &rejected,
            n.clone(),
            reached(&n),
            nd,
            na,
        )),
        mutant: Some(mutant(&rejected, m, md, ma)),
        not_observed: None,
        server: None,
    }
}

/// `bounded-redirects` (TEST_FIXTURE: the fetches are the runner's and the
/// fixture's): the fixture's metadata is fetched by the runner, and the run's
/// client ID metadata document by the fixture, each directly (positive); a
/// metadata URL and a client_id served by a loopback listener that answers
/// `302` to a second listener are refused by both, and the second listener
/// is never contacted (negative); a `302` without `Location` is refused by
/// the runner as a malformed redirect, never as a redirect not followed.
fn bounded_redirects(o: &OauthCtx) -> CheckRun {
    use super::canned::{Canned, response};
    use std::sync::{Arc, Mutex};
    let id = "bounded-redirects";
    let accepted = reason(id, "ACCEPTED");
    let rejected = reason(id, "REJECTED");
    // The redirect's target: a document any follower would take.
    let claimed: Arc<Mutex<String>> = Arc::default();
    let redirect_uri = o.redirect_uri.clone();
    let doc_for = claimed.clone();
    let target = Canned::start(Box::new(move |path: &str| {
        let me = doc_for.lock().expect("claimed lock").clone();
        let doc = if path.starts_with("/cimd/") {
            json!({"client_id": format!("{me}/cimd/redirected"), "client_name": "redirected",
                "redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none"})
        } else {
            json!({"issuer": me})
        };
        response(
            "200 OK",
            &[("Content-Type", "application/json")],
            doc.to_string().as_bytes(),
        )
    }));
    let target = match target {
        Ok(t) => t,
        Err(e) => return CheckRun::not_observed(id, format!("no redirect target listener: {e}")),
    };
    let to = target.base();
    let redirector = Canned::start(Box::new(move |path: &str| {
        if path.starts_with("/no-location") {
            response("302 Found", &[], b"")
        } else {
            response("302 Found", &[("Location", &format!("{to}{path}"))], b"")
        }
    }));
    let redirector = match redirector {
        Ok(r) => r,
        Err(e) => return CheckRun::not_observed(id, format!("no redirecting listener: {e}")),
    };
    let from = redirector.base();
    *claimed.lock().expect("claimed lock") = from.clone();

    // Positive: direct fetches, by the runner and by the fixture.
    let issuer = o.fixture.issuer().to_string();
    let (resp, runner_art) = fetch_no_follow(o, &as_metadata_url(&issuer));
    let runner = runner_takes(o, &resp);
    let runner_ok = runner
        .as_ref()
        .is_ok_and(|d| d.get("issuer").and_then(Value::as_str) == Some(issuer.as_str()));
    let (a, fetch) = authorize_as(o, &o.client_id, &[]);
    let fixture_ok = a.granted && fetch.as_ref().is_some_and(|(s, _)| *s == 200);
    let p = match (resp.status, a.status) {
        (None, _) | (_, None) => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
        _ if runner_ok && fixture_ok => (ProbeOutcome::Accept, accepted.clone()),
        _ if !runner_ok => (
            ProbeOutcome::Reject,
            other(runner.as_ref().err().copied().unwrap_or("issuer")),
        ),
        _ => (ProbeOutcome::Reject, other("client-document-not-fetched")),
    };
    let pd = format!(
        "runner fetch of the issuer's metadata: {:?} ({:?}); fixture fetch of the run's client document: {fetch:?}, granted {} ({})",
        resp.status,
        runner.as_ref().err(),
        a.granted,
        p.1
    );
    let pa = json!({"runnerFetch": runner_art, "authorization": a.summary, "fixtureFetch": fetch.map(|(s, n)| json!({"status": s, "note": n}))});

    // Negative: the same two fetches, answered with a redirect.
    let (resp, runner_art) =
        fetch_no_follow(o, &format!("{from}/.well-known/oauth-authorization-server"));
    let runner = runner_takes(o, &resp);
    let (a, fetch) = authorize_as(o, &format!("{from}/cimd/redirected"), &[]);
    let target_hits = target.hits();
    let fixture_refused = !a.granted && fetch.as_ref().is_some_and(|(s, _)| (300..400).contains(s));
    let n = match (resp.status, a.status) {
        (None, _) | (_, None) => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
        _ if !target_hits.is_empty() || a.granted || runner.is_ok() => {
            (ProbeOutcome::Accept, other("redirect-followed"))
        }
        _ if runner == Err("redirect-not-followed") && fixture_refused => {
            (ProbeOutcome::Reject, rejected.clone())
        }
        _ => (
            ProbeOutcome::Reject,
            other(runner.as_ref().err().copied().unwrap_or("refused")),
        ),
    };
    let nd = format!(
        "runner: {:?} ({:?}); fixture: {fetch:?}, granted {}; the redirect target was contacted {} time(s) ({})",
        resp.status,
        runner.as_ref().err(),
        a.granted,
        target_hits.len(),
        n.1
    );
    let na = json!({"runnerFetch": runner_art, "runnerRefusal": runner.as_ref().err(),
        "authorization": a.summary, "fixtureFetch": fetch.map(|(s, n)| json!({"status": s, "note": n})),
        "redirectTargetRequests": target_hits.len()});

    // Mutant: a 302 that names no target.
    let (resp, runner_art) = fetch_no_follow(
        o,
        &format!("{from}/no-location/.well-known/oauth-authorization-server"),
    );
    let runner = runner_takes(o, &resp);
    let m = match (resp.status, runner) {
        (None, _) => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
        (_, Ok(_)) => (ProbeOutcome::Accept, accepted.clone()),
        (_, Err("malformed-redirect")) => (ProbeOutcome::Reject, EARLY.to_string()),
        (_, Err("redirect-not-followed")) => (ProbeOutcome::Reject, rejected.clone()),
        (_, Err(w)) => (ProbeOutcome::Reject, other(w)),
    };
    let md = format!("runner: {:?} ({})", resp.status, m.1);
    let ma = json!({"runnerFetch": runner_art});
    redirector.stop();
    target.stop();
    fixture_check(id, (p, pd, pa), (n, nd, na), (m, md, ma))
}

/// `cimd-trust-policy-recorded` (TEST_FIXTURE): the fixture's fetch of the
/// run's client document is recorded with the trust policy it was trusted
/// under (and the evaluation's `flow.trustPolicyId` is that record); a
/// client_id off loopback is refused by that policy without a connection
/// (status 0), the refusal recorded; such a client_id whose port is not a
/// number is refused as not a URL at all (early).
fn cimd_trust_policy(o: &OauthCtx) -> CheckRun {
    let id = "cimd-trust-policy-recorded";
    let policy_note = format!(
        "fetched under policy {}",
        crate::server::oauth::fixture::CIMD_TRUST_POLICY
    );
    let run = |client: &str| {
        let (a, fetch) = authorize_as(o, client, &[]);
        // The judge's classifier.
        let observed = crate::judge::oauth::classify_trust_policy(
            a.status,
            a.granted,
            fetch.as_ref().map(|(s, n)| (u64::from(*s), n.as_deref())),
            &policy_note,
        );
        let detail = format!(
            "{:?} granted {}; fixture FETCH {:?} ({})",
            a.status, a.granted, fetch, observed.1
        );
        let art = json!({"authorization": a.summary,
            "fixtureFetch": fetch.map(|(s, n)| json!({"status": s, "note": n}))});
        (observed, detail, art)
    };
    let p = run(&o.client_id);
    let n = run("http://192.0.2.1/cimd/mcpres-oauth-run");
    let m = run("http://192.0.2.1:not-a-port/cimd/mcpres-oauth-run");
    fixture_check(id, p, n, m)
}

/// The port a `http://IP:PORT/...` URL names (`None`: no port, or not such
/// a URL).
fn url_port(url: &str) -> Option<u16> {
    let rest = url.strip_prefix("http://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    authority.rsplit_once(':')?.1.parse().ok()
}

/// `loopback-redirect-collision` (TEST_FIXTURE; RFC 8252 sections 7.3 and
/// 8.3): for a client registered with a loopback IP redirect URI without a
/// port, the runner binds its redirect listener on an ephemeral port at
/// request time, the fixture answers to exactly that port, the listener
/// receives the code and is released afterwards (positive); a request
/// naming a loopback port the runner does not own (another listener holds
/// it) gets a response the runner never delivers, and that listener
/// receives nothing (negative); a redirect URI whose port is not a number
/// is refused by the fixture as not a URI (early).
fn loopback_redirect_collision(o: &OauthCtx) -> CheckRun {
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpListener, TcpStream};
    let id = "loopback-redirect-collision";
    let accepted = reason(id, "ACCEPTED");
    let rejected = reason(id, "REJECTED");
    let loopback = std::net::IpAddr::from([127, 0, 0, 1]);
    let client = match o
        .fixture
        .register_client("mcpres-oauth-run-loopback", &["http://127.0.0.1/callback"])
    {
        Ok(c) => c,
        Err(e) => return CheckRun::not_observed(id, format!("no loopback client: {e}")),
    };
    // Another process's listener on a loopback port (the runner does not own it).
    let squatter = match TcpListener::bind(SocketAddr::new(loopback, 0)) {
        Ok(l) => l,
        Err(e) => return CheckRun::not_observed(id, format!("no squatting listener: {e}")),
    };
    let _ = squatter.set_nonblocking(true);
    let squat_port = squatter.local_addr().map(|a| a.port()).unwrap_or(0);

    // Positive: an ephemeral listener of the runner's own.
    let own = match TcpListener::bind(SocketAddr::new(loopback, 0)) {
        Ok(l) => l,
        Err(e) => return CheckRun::not_observed(id, format!("no redirect listener: {e}")),
    };
    let own_addr = own.local_addr().expect("a bound listener has an address");
    let asked = format!("http://{own_addr}/callback");
    let (a, _) = authorize_as(o, &client, &[("redirect_uri", asked.clone())]);
    let location = a.location.clone().unwrap_or_default();
    let to_port = url_port(&location);
    // Deliver the response to the listener it names, only when the runner
    // owns that listener; the listener reads the code it was sent.
    let mut received = false;
    if a.granted && to_port == Some(own_addr.port()) {
        let path = location
            .strip_prefix(&format!("http://{own_addr}"))
            .unwrap_or("/")
            .to_string();
        if let Ok(mut s) = TcpStream::connect(own_addr) {
            let req =
                Request::to("GET", &path, &own_addr.to_string()).header("Connection", "close");
            let _ = s.write_all(&req.to_bytes());
            if let Ok((mut got, _)) = own.accept() {
                let _ = got.set_read_timeout(Some(Duration::from_secs(2)));
                let mut head = vec![0u8; 8192];
                let n = got.read(&mut head).unwrap_or(0);
                let line = String::from_utf8_lossy(&head[..n]).into_owned();
                received = line
                    .split_whitespace()
                    .nth(1)
                    .is_some_and(|p| p == path && p.contains("code="));
                let _ = got.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
            }
        }
    }
    let inode = proc::socket_inode(&own);
    drop(own);
    let released = match inode {
        Some(i) => !proc::inode_listening(i),
        None => !web::accepting(own_addr),
    };
    let p = match a.status {
        None => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
        _ if !a.granted => (
            ProbeOutcome::Reject,
            other(a.error.as_deref().unwrap_or("not-granted")),
        ),
        _ if to_port != Some(own_addr.port()) => (
            ProbeOutcome::Reject,
            other("redirected-to-a-port-not-owned"),
        ),
        _ if !received => (ProbeOutcome::Reject, other("code-not-received")),
        _ if !released => (ProbeOutcome::Reject, other("listener-not-released")),
        _ => (ProbeOutcome::Accept, accepted.clone()),
    };
    let pd = format!(
        "asked for port {}, answered to port {to_port:?}; received by the runner's listener: {received}; released: {released} ({})",
        own_addr.port(),
        p.1
    );
    let pa = json!({"authorization": a.summary, "redirectListener": own_addr.to_string(),
        "respondedToPort": to_port, "codeReceived": received, "redirectListenerReleased": released});

    // Negative: a port another listener holds; the response is never
    // delivered there.
    let asked = format!("http://127.0.0.1:{squat_port}/callback");
    let (a, _) = authorize_as(o, &client, &[("redirect_uri", asked)]);
    let to_port = url_port(a.location.as_deref().unwrap_or_default());
    let squatter_got = squatter.accept().is_ok();
    let n = match a.status {
        None => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
        _ if squatter_got => (
            ProbeOutcome::Accept,
            other("code-delivered-to-another-listener"),
        ),
        // The runner owns no listener there: nothing is delivered.
        _ if a.granted => (ProbeOutcome::Reject, rejected.clone()),
        _ => (
            ProbeOutcome::Reject,
            other(a.error.as_deref().unwrap_or("not-granted")),
        ),
    };
    let nd = format!(
        "asked for port {squat_port} (held by another listener), answered to port {to_port:?}: not delivered; the other listener was contacted: {squatter_got} ({})",
        n.1
    );
    let na = json!({"authorization": a.summary, "otherListenerPort": squat_port,
        "respondedToPort": to_port, "delivered": false, "otherListenerContacted": squatter_got});
    drop(squatter);

    // Mutant: a redirect URI whose port is not a number.
    let (a, _) = authorize_as(
        o,
        &client,
        &[(
            "redirect_uri",
            "http://127.0.0.1:not-a-port/callback".into(),
        )],
    );
    let m = match (a.status, a.description.as_deref()) {
        (None, _) => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
        _ if a.granted => (ProbeOutcome::Accept, accepted.clone()),
        (_, Some("redirect_uri is not a valid URI")) => (ProbeOutcome::Reject, EARLY.to_string()),
        _ => (
            ProbeOutcome::Reject,
            other(a.error.as_deref().unwrap_or("unnamed")),
        ),
    };
    let md = format!("{:?} {:?} ({})", a.status, a.description, m.1);
    fixture_check(id, (p, pd, pa), (n, nd, na), (m, md, a.summary))
}

/// `proxy-consent-client-binding` (TEST_FIXTURE; the MCP security best
/// practices on proxies with a static upstream client): for two clients
/// behind the fixture's consent step, client A presenting the consent
/// approval given for A gets a code (positive); client B presenting A's
/// approval is refused, consent required (negative); client B presenting
/// an approval that is not one by syntax is refused as malformed (early).
fn proxy_consent(o: &OauthCtx) -> CheckRun {
    let id = "proxy-consent-client-binding";
    let uri = o.redirect_uri.clone();
    let registered = o
        .fixture
        .register_consent_client("mcpres-oauth-run-proxy-a", &[&uri])
        .and_then(|a| {
            o.fixture
                .register_consent_client("mcpres-oauth-run-proxy-b", &[&uri])
                .map(|b| (a, b))
        });
    let (client_a, client_b) = match registered {
        Ok(x) => x,
        Err(e) => return CheckRun::not_observed(id, format!("no consent clients: {e}")),
    };
    let (approval, consent_summary) = flow::consent(o, &client_a);
    let Some(approval) = approval else {
        return CheckRun::not_observed(id, "the fixture gave no consent approval");
    };
    let run = |client: &str, consent: &str, who: &str| {
        let (a, _) = authorize_as(o, client, &[("consent", consent.to_string())]);
        let observed = classify_authz(id, &a);
        let detail = format!(
            "{who}: {:?} {:?} {:?} ({})",
            a.status, a.error, a.description, observed.1
        );
        let art = json!({"consent": consent_summary, "authorization": a.summary});
        (observed, detail, art)
    };
    let p = run(&client_a, &approval, "client A with A's consent");
    let n = run(&client_b, &approval, "client B with A's consent");
    let m = run(
        &client_b,
        "not-a-consent-approval",
        "client B with a malformed consent",
    );
    fixture_check(id, p, n, m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorization_server_urls_are_classified_without_resolving_names() {
        for (url, kind) in [
            ("http://127.0.0.1:8080", Target::Loopback),
            ("http://[::1]:9/tenant", Target::Loopback),
            ("http://127.0.0.2/", Target::Loopback),
            ("http://192.0.2.1/", Target::NotLoopback),
            ("http://[2001:db8::1]:80/", Target::NotLoopback),
            ("http://localhost:8080", Target::HostName),
            ("http://as.example/", Target::HostName),
            ("https://127.0.0.1:8080", Target::Malformed),
            ("http://192.0.2.1:not-a-port/", Target::Malformed),
            ("http://127.0.0.1:99999", Target::Malformed),
            ("http://u@127.0.0.1:1/", Target::Malformed),
            ("http://127.0.0.1:1/?x=1", Target::Malformed),
            ("http://:80/", Target::Malformed),
        ] {
            assert_eq!(target_kind(url), kind, "{url}");
        }
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_segment_before_the_path() {
        assert_eq!(
            as_metadata_url("http://127.0.0.1:5"),
            "http://127.0.0.1:5/.well-known/oauth-authorization-server"
        );
        assert_eq!(
            as_metadata_url("http://127.0.0.1:5/"),
            "http://127.0.0.1:5/.well-known/oauth-authorization-server"
        );
        assert_eq!(
            as_metadata_url("http://127.0.0.1:5/tenant"),
            "http://127.0.0.1:5/.well-known/oauth-authorization-server/tenant"
        );
    }

    #[test]
    fn an_answer_leaks_the_token_its_segments_or_a_private_claim_value() {
        use base64::Engine as _;
        let b64 = |v: &Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string().as_bytes())
        };
        let claims = json!({
            "sub": "synthetic-user", "jti": "jti-0123456789", "aud": "http://127.0.0.1:1/mcp",
            "client_id": "http://127.0.0.1:9/cimd/run", "scope": "mcp",
        });
        let token = format!(
            "{}.{}.{}",
            b64(&json!({"alg": "EdDSA"})),
            b64(&claims),
            "c2lnbmF0dXJlLXNlZ21lbnQtb2YtdGhlLXRva2Vu"
        );
        let resp = |body: &str, challenge: &str| Resp {
            status: Some(401),
            headers: vec![("WWW-Authenticate".into(), challenge.into())],
            body: body.as_bytes().to_vec(),
            ..Resp::default()
        };
        let clean = r#"{"error":{"data":{"reason":"wrong-audience"}}}"#;
        let challenge = r#"Bearer error="invalid_token", error_description="wrong-audience""#;
        assert_eq!(error_leak(&resp(clean, challenge), &token, &token), None);
        let echoed = format!(r#"{{"presentedToken":"{token}"}}"#);
        assert_eq!(
            error_leak(&resp(&echoed, challenge), &token, &token).as_deref(),
            Some("token")
        );
        let signature = format!("{challenge}, x=\"{}\"", token.split('.').nth(2).unwrap());
        assert_eq!(
            error_leak(&resp(clean, &signature), &token, &token).as_deref(),
            Some("token")
        );
        for (claim, value) in [
            ("sub", "synthetic-user"),
            ("jti", "jti-0123456789"),
            ("client_id", "http://127.0.0.1:9/cimd/run"),
        ] {
            let body = format!(r#"{{"error":{{"message":"refused for {value}"}}}}"#);
            assert_eq!(
                error_leak(&resp(&body, challenge), &token, &token),
                Some(format!("claim {claim}"))
            );
        }
        // The audience is not private: naming this resource is no leak.
        let aud = r#"{"error":{"message":"not for http://127.0.0.1:1/mcp"}}"#;
        assert_eq!(error_leak(&resp(aud, challenge), &token, &token), None);
        // A malformed token's claims are those of the token it was made from.
        let broken = break_claims(&token);
        let named = r#"Bearer error="invalid_token", error_description="malformed (client http://127.0.0.1:9/cimd/run)""#;
        assert_eq!(error_leak(&resp(clean, named), &broken, &broken), None);
        assert_eq!(
            error_leak(&resp(clean, named), &broken, &token).as_deref(),
            Some("claim client_id")
        );
    }
}
