//! OAuth-boundary evaluations judged from their artifacts (`mcpres oauth
//! run`'s directory: `evaluation.json` with its `cases`, `run.json`
//! (`mcpres.oauth-run/1`) with every check's verdict, and
//! `artifacts/<check>/{positive,negative,mutant}.json` stored as a profile
//! run stores them).
//!
//! A check's verdict is the profile judge's ([`super::profile::check_verdict`])
//! over its stored observations, each read as its stored bytes give it
//! ([`super::profile::rederive`]), then revised by the standard's rules: a
//! check judged PASS whose case has a finding of the OAuth-boundary
//! evaluation's own rules is not observed, with that finding's code as its
//! reason. A case is written for a check with all three observations: its
//! positive and negative as stored, and of its mutant whether it was
//! observed at all and its observed reason.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::Disagreement;
use super::profile::{
    CHECK_NOT_OBSERVED, CLEANUP_PATH, DETAIL_MAX, Observation, ROLES, Stored, Verdict,
    artifact_path, check_verdict, rederive, server_path, truncate,
};
use crate::diag::reasons::{self, Branch};
use crate::model::oauth::{Probe, SYNTHETIC_CREDENTIAL, WrongReasonMutant};
use crate::model::vocab::ProbeOutcome;

/// A finding of the evaluation's own rules on one of its cases: the case's
/// index in `cases`, the code and the message.
pub type CaseFinding = (usize, String, String);

/// The diagnostic a case's wrong-reason mutant names.
pub const EXPECTED_DIAGNOSTIC: &str = "MCP_RES_OAUTH_WRONG_REASON";

/// The observation of a case as the evaluation records it (the model's
/// [`Probe`], as the runner writes it).
pub fn case_observation(o: &Observation, sha: &str) -> Value {
    serde_json::to_value(Probe {
        property_reached: o.reached,
        expected_outcome: o.expected,
        observed_outcome: o.observed,
        expected_reason_code: &o.expected_reason,
        observed_reason_code: &o.observed_reason,
        artifact_sha256: sha,
    })
    .expect("plain JSON")
}

/// The checks whose observations each present one bearer token to the
/// subject (one request, on one connection) and read how it came back, with
/// the refusal reason that is the check's own.
pub const PRESENTED: [(&str, &str); 5] = [
    ("access-token-audience", "wrong-audience"),
    ("issuer-binding", "wrong-issuer"),
    ("token-passthrough-prohibited", "expired"),
    ("token-storage-omission", "expired"),
    ("wrong-resource-token-rejection", "wrong-audience"),
];

/// The refusal reason check `id` calls its own, when it presents tokens.
pub fn own_reason(id: &str) -> Option<&'static str> {
    PRESENTED.iter().find(|(c, _)| *c == id).map(|(_, r)| *r)
}

/// Why a refusal says it refused: the `data.reason` of a JSON-RPC error
/// body (the reference subject names every reason so), else the one reason
/// RFC 6750 names unambiguously: a 403 whose challenge carries
/// `error="insufficient_scope"` (§3.1). Its other codes do not tell the
/// reasons of this profile apart (`invalid_token` covers a wrong audience,
/// a wrong issuer, an expired and a malformed token alike), so they name
/// none.
pub fn refusal_reason(status: Option<u16>, challenge: Option<&str>, body: &[u8]) -> Option<String> {
    let body: Option<Value> = serde_json::from_slice(body).ok();
    if let Some(r) = body
        .as_ref()
        .and_then(|b| b.pointer("/error/data/reason"))
        .and_then(Value::as_str)
    {
        return Some(r.to_string());
    }
    (status == Some(403)
        && challenge
            .unwrap_or("")
            .contains("error=\"insufficient_scope\""))
    .then(|| "insufficient-scope".to_string())
}

/// How an authenticated request of check `id` came back (`accepted`: a 2xx
/// carrying a result for the request): accepted (the check's ACCEPTED),
/// refused as `malformed-token` (the early syntax rejection), refused for
/// `own` (the check's REJECTED), refused for another reason (with the
/// reason given as words), or not answered.
pub fn classify_presented(
    id: &str,
    status: Option<u16>,
    accepted: bool,
    challenge: Option<&str>,
    body: &[u8],
    own: &str,
) -> (ProbeOutcome, String) {
    let code = |branch: Branch| {
        reasons::oauth_case(id, branch)
            .unwrap_or(reasons::OAUTH_OTHER_REFUSAL)
            .to_string()
    };
    let other = |why: &str| reasons::with_words(reasons::OAUTH_OTHER_REFUSAL, why);
    match status {
        None => (ProbeOutcome::NotObserved, reasons::OAUTH_NO_ANSWER.into()),
        Some(s) if (200..300).contains(&s) && accepted => {
            (ProbeOutcome::Accept, code(Branch::Accepted))
        }
        Some(401 | 403) => match refusal_reason(status, challenge, body).as_deref() {
            Some("malformed-token") => (
                ProbeOutcome::Reject,
                reasons::OAUTH_EARLY_SYNTAX_REJECTION.into(),
            ),
            Some(r) if r == own => (ProbeOutcome::Reject, code(Branch::Rejected)),
            Some(r) => (ProbeOutcome::Reject, other(r)),
            None => (ProbeOutcome::Reject, other("unnamed")),
        },
        Some(s) => (ProbeOutcome::Reject, other(&format!("status {s}"))),
    }
}

/// The checks that present one token per observation and add readings of
/// their own to the classifier's, with the refusal reason they classify by.
pub const READ_WITH: [(&str, &str); 2] = [
    ("scope-minimization", "insufficient-scope"),
    ("sanitized-authorization-errors", "wrong-audience"),
];

/// The observation `o` (check `id`, `role`) as its stored record reads
/// (`observed`, `reason`, the reason's words dropped), and why (`what`: the
/// record read), or `None` when its labels already say that. A control or
/// positive reached the property unless it was not observed or was refused
/// by syntax; a mutant keeps its own `propertyReached` (the judge holds it
/// against the control's reason).
fn as_read(
    id: &str,
    role: &str,
    o: &Observation,
    (observed, reason): (ProbeOutcome, String),
    what: String,
) -> Option<(Observation, String)> {
    let (code, _) = reasons::split_words(&reason);
    if code == o.observed_reason && observed == o.observed {
        return None;
    }
    let reached = if role == "mutant" {
        o.reached
    } else {
        observed != ProbeOutcome::NotObserved && code != reasons::OAUTH_EARLY_SYNTAX_REJECTION
    };
    Some((
        Observation {
            observed,
            observed_reason: code.to_string(),
            reached,
            ..o.clone()
        },
        format!(
            "check {id}: its {role}.json says {} {}, but {what} reads as {} {code}",
            o.observed.as_str(),
            o.observed_reason,
            observed.as_str()
        ),
    ))
}

/// The fixture-side checks that send one authorization request per
/// observation, with the fixture's `error_description` that is the check's
/// own refusal, and whether a grant must carry the request's `state` back.
pub const AUTHORIZATION: [(&str, &str, bool); 5] = [
    (
        "pkce-downgrade-refused",
        "code_challenge_method plain is not supported; use S256",
        false,
    ),
    (
        "exact-redirect-uri",
        "redirect_uri is not registered for this client",
        false,
    ),
    (
        "authorization-request-resource",
        "resource is required: one absolute URI without a fragment",
        false,
    ),
    ("state-binding", "state is required", true),
    (
        "proxy-consent-client-binding",
        "consent was given for another client",
        false,
    ),
];

/// The fixture's descriptions of a refusal by syntax: a parameter given
/// twice, or a consent approval that is not one.
fn syntax_refusal(description: &str) -> bool {
    description.contains("given more than once")
        || description.contains("may be given once")
        || description == "consent is malformed"
}

/// How an authorization request of check `id` came back (`status`, whether
/// a code was issued, the `error` and `error_description`, whether the
/// request's `state` came back): granted is the check's ACCEPTED (with
/// `bind_state`, only with its `state` back); refused with the check's own
/// description (`own`) its REJECTED; a parameter given twice is the early
/// syntax rejection; anything else another refusal.
pub fn classify_authorization(
    id: &str,
    status: Option<u16>,
    granted: bool,
    error: Option<&str>,
    description: Option<&str>,
    state_returned: Option<bool>,
    (own, bind_state): (&str, bool),
) -> (ProbeOutcome, String) {
    let code = |branch: Branch| {
        reasons::oauth_case(id, branch)
            .unwrap_or(reasons::OAUTH_OTHER_REFUSAL)
            .to_string()
    };
    let other = |why: &str| reasons::with_words(reasons::OAUTH_OTHER_REFUSAL, why);
    match (status, description) {
        (None, _) => (ProbeOutcome::NotObserved, reasons::OAUTH_NO_ANSWER.into()),
        _ if granted && bind_state && state_returned != Some(true) => {
            (ProbeOutcome::Accept, other("state-not-returned"))
        }
        _ if granted => (ProbeOutcome::Accept, code(Branch::Accepted)),
        (_, Some(d)) if d == own => (ProbeOutcome::Reject, code(Branch::Rejected)),
        (_, Some(d)) if syntax_refusal(d) => (
            ProbeOutcome::Reject,
            reasons::OAUTH_EARLY_SYNTAX_REJECTION.into(),
        ),
        _ => (ProbeOutcome::Reject, other(error.unwrap_or("unnamed"))),
    }
}

/// An [`AUTHORIZATION`] check's observation read again from its stored
/// summary of the fixture's answer (`transcript.authorize`, or
/// `transcript.authorization.authorize` beside a consent: `status`,
/// `code` (its digest when one was issued), `error`, `errorDescription`,
/// `stateReturned`), where it gives something else than the labels.
fn authorization_reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    let (_, own, bind_state) = AUTHORIZATION.iter().find(|(c, _, _)| *c == id)?;
    let a = transcript
        .get("authorize")
        .or_else(|| transcript.pointer("/authorization/authorize"))?;
    let text = |k: &str| a.get(k).and_then(Value::as_str);
    let status = a
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    let (observed, reason) = classify_authorization(
        id,
        status,
        text("code").is_some(),
        text("error"),
        text("errorDescription"),
        a.get("stateReturned").and_then(Value::as_bool),
        (own, *bind_state),
    );
    as_read(
        id,
        role,
        o,
        (observed, reason),
        format!(
            "its stored answer of the authorization endpoint (status {}, {})",
            status.map_or("none".into(), |s| s.to_string()),
            text("errorDescription").unwrap_or("no description")
        ),
    )
}

/// The fixture-side checks that redeem one authorization code per
/// observation and are refused `invalid_grant` for their own reason, with
/// the `error_description` that names it (token-request-resource, refused
/// `invalid_target`, is the third code-redemption check).
pub const REDEMPTION: [(&str, &str); 2] = [
    (
        "authorization-code-binding",
        "the authorization code was issued to another client",
    ),
    (
        "pkce-s256",
        "code_verifier does not match the code challenge",
    ),
];
/// The resource token-request-resource's positive redeems its code for
/// (the code's own); its control and mutant redeem it for
/// [`OTHER_RESOURCE_REQUESTED`].
pub const RESOURCE_REQUESTED: &str = "http://127.0.0.1:2/mcp";
/// The resource token-request-resource's control and mutant ask a token for
/// (another than the code's).
pub const OTHER_RESOURCE_REQUESTED: &str = "http://127.0.0.1:1/mcp";

/// How a token request of a fixture-side code-redemption check came back
/// (`status`, whether an access token was issued and its audience, the
/// `error` and `error_description`):
///
/// - a [`REDEMPTION`] check: a token issued is ACCEPTED; `invalid_grant`
///   with the check's own description its REJECTED;
/// - `token-request-resource`: a token issued for `asked` is ACCEPTED, for
///   another audience another refusal (`token-for-another-audience`);
///   `invalid_target` its REJECTED;
///
/// for both `invalid_request` is the early syntax rejection and any other
/// error (or status) another refusal.
pub fn classify_redemption(
    id: &str,
    status: Option<u16>,
    (issued, audience): (bool, Option<&str>),
    (error, description): (Option<&str>, Option<&str>),
    asked: &str,
) -> (ProbeOutcome, String) {
    let code = |branch: Branch| {
        reasons::oauth_case(id, branch)
            .unwrap_or(reasons::OAUTH_OTHER_REFUSAL)
            .to_string()
    };
    let other = |why: &str| reasons::with_words(reasons::OAUTH_OTHER_REFUSAL, why);
    let resource_check = id == "token-request-resource";
    match (status, error) {
        (None, _) => (ProbeOutcome::NotObserved, reasons::OAUTH_NO_ANSWER.into()),
        (Some(200), _) if resource_check && audience == Some(asked) => {
            (ProbeOutcome::Accept, code(Branch::Accepted))
        }
        (Some(200), _) if resource_check => {
            (ProbeOutcome::Accept, other("token-for-another-audience"))
        }
        (Some(200), _) if issued => (ProbeOutcome::Accept, code(Branch::Accepted)),
        (_, Some("invalid_target")) if resource_check => {
            (ProbeOutcome::Reject, code(Branch::Rejected))
        }
        (_, Some("invalid_grant"))
            if REDEMPTION
                .iter()
                .any(|(c, own)| *c == id && description == Some(*own)) =>
        {
            (ProbeOutcome::Reject, code(Branch::Rejected))
        }
        (_, Some("invalid_request")) => (
            ProbeOutcome::Reject,
            reasons::OAUTH_EARLY_SYNTAX_REJECTION.into(),
        ),
        (_, Some(e)) => (ProbeOutcome::Reject, other(e)),
        (Some(s), None) => (ProbeOutcome::Reject, other(&format!("status {s}"))),
    }
}

/// A code-redemption check's observation ([`REDEMPTION`],
/// `token-request-resource`) read again from its stored summaries (the
/// authorization answer, then the token endpoint's: `status`,
/// `accessToken` (its digest when one was issued), `audience`, `error`,
/// `errorDescription`), where they give something else than the labels.
fn redemption_reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    let token = transcript
        .as_array()?
        .iter()
        .find_map(|step| step.get("token"))?;
    let text = |k: &str| token.get(k).and_then(Value::as_str);
    let status = token
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    let asked = if role == "positive" {
        RESOURCE_REQUESTED
    } else {
        OTHER_RESOURCE_REQUESTED
    };
    let (observed, reason) = classify_redemption(
        id,
        status,
        (text("accessToken").is_some(), text("audience")),
        (text("error"), text("errorDescription")),
        asked,
    );
    as_read(
        id,
        role,
        o,
        (observed, reason),
        format!(
            "its stored answer of the token endpoint (status {}, error {})",
            status.map_or("none".into(), |s| s.to_string()),
            text("error").unwrap_or("none")
        ),
    )
}

/// The fixture-side checks decided by how the runner, as a client, resolved
/// an authorization server (or chose its token endpoint), with the refusal
/// that is the check's own.
pub const RESOLUTION: [(&str, &str); 3] = [
    ("authorization-server-metadata", "issuer-mismatch"),
    ("ssrf-resistant-metadata-resolution", "not-loopback"),
    ("token-endpoint-identity", "token-endpoint-off-origin"),
];

/// The origin (`scheme://authority`) of an absolute URL.
pub fn origin(url: &str) -> Option<&str> {
    let scheme_end = url.find("://")? + 3;
    let end = url[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |e| scheme_end + e);
    Some(&url[..end])
}

/// A resolution of check `id` (`refused`: why it was refused, `None` when
/// it was not) classified: not refused is the check's ACCEPTED, refused for
/// the check's own reason its REJECTED, a malformed URL the early syntax
/// rejection, anything else another refusal.
pub fn classify_resolution(id: &str, refused: Option<&str>) -> (ProbeOutcome, String) {
    let own = RESOLUTION
        .iter()
        .find(|(c, _)| *c == id)
        .map_or("", |(_, own)| *own);
    let code = |branch: Branch| {
        reasons::oauth_case(id, branch)
            .unwrap_or(reasons::OAUTH_OTHER_REFUSAL)
            .to_string()
    };
    match refused {
        None => (ProbeOutcome::Accept, code(Branch::Accepted)),
        Some(w) if w == own => (ProbeOutcome::Reject, code(Branch::Rejected)),
        Some("malformed-url") => (
            ProbeOutcome::Reject,
            reasons::OAUTH_EARLY_SYNTAX_REJECTION.into(),
        ),
        Some(w) => (
            ProbeOutcome::Reject,
            reasons::with_words(reasons::OAUTH_OTHER_REFUSAL, w),
        ),
    }
}

/// Why a stored resolution was refused (`refusedBecause`), if it was.
fn refusal(entry: &Value) -> Option<&str> {
    entry.get("refusedBecause").and_then(Value::as_str)
}

/// A [`RESOLUTION`] check's observation read again from what it stored:
///
/// - the positive of the two metadata checks: the authorization servers the
///   subject named (`subjectAuthorizationServers`; absent: no answer; none:
///   another refusal) each resolved without refusal
///   (`runnerResolution[].refusedBecause`);
/// - a single resolution: its `refusedBecause`, classified; for the SSRF
///   check a connection made before refusing is another refusal;
/// - `token-endpoint-identity`: the refusal is computed again from the
///   stored `issuer` and `tokenEndpoint` where both are there (the token
///   endpoint must be on the issuer's origin).
fn resolution_reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    let other = |why: &str| reasons::with_words(reasons::OAUTH_OTHER_REFUSAL, why);
    let resolved = transcript.get("runnerResolution").and_then(Value::as_array);
    let (observed, reason, what) = if id == "token-endpoint-identity" {
        let stored = refusal(transcript);
        let text = |k: &str| transcript.get(k).and_then(Value::as_str);
        let refused = match (text("issuer"), text("tokenEndpoint")) {
            (Some(issuer), Some(endpoint)) => {
                let same = origin(endpoint).is_some() && origin(endpoint) == origin(issuer);
                (!same).then_some("token-endpoint-off-origin")
            }
            _ => stored,
        };
        let (observed, reason) = classify_resolution(id, refused);
        (
            observed,
            reason,
            format!(
                "its stored token endpoint {} for the issuer {}",
                text("tokenEndpoint").unwrap_or("(none)"),
                text("issuer").unwrap_or("(none)")
            ),
        )
    } else if let Some(named) = transcript.get("subjectAuthorizationServers") {
        let first_refusal = resolved.into_iter().flatten().find_map(refusal);
        let (observed, reason) = match (named.as_array(), first_refusal) {
            (None, _) => (ProbeOutcome::NotObserved, reasons::OAUTH_NO_ANSWER.into()),
            (Some(e), _) if e.is_empty() => {
                (ProbeOutcome::Reject, other("no-authorization-servers"))
            }
            (Some(_), None) => classify_resolution(id, None),
            (Some(_), Some(w)) => (ProbeOutcome::Reject, other(w)),
        };
        (
            observed,
            reason,
            "its stored resolution of the authorization servers the subject named".to_string(),
        )
    } else {
        let [entry] = resolved?.as_slice() else {
            return None;
        };
        let (mut observed, mut reason) = classify_resolution(id, refusal(entry));
        let connected = transcript
            .get("connectionAttempts")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        if id == "ssrf-resistant-metadata-resolution" && connected > 0 {
            (observed, reason) = (ProbeOutcome::Reject, other("connected-before-refusing"));
        }
        (
            observed,
            reason,
            format!(
                "its stored resolution of {}",
                entry
                    .get("authorizationServer")
                    .and_then(Value::as_str)
                    .unwrap_or("(none)")
            ),
        )
    };
    as_read(id, role, o, (observed, reason), what)
}

/// How an authorization response of `mix-up-resistance` came back from
/// `expected` (the issuer the request went to): a redirect whose `iss`
/// (RFC 9207) is that issuer and carries a code is ACCEPTED; one naming
/// another issuer REJECTED; a refusal page for a repeated parameter the
/// early syntax rejection; anything else another refusal.
pub fn classify_mix_up(
    status: Option<u16>,
    (redirected, granted): (bool, bool),
    iss: Option<&str>,
    (error, description): (Option<&str>, Option<&str>),
    expected: &str,
) -> (ProbeOutcome, String) {
    let id = "mix-up-resistance";
    let code = |branch: Branch| {
        reasons::oauth_case(id, branch)
            .unwrap_or(reasons::OAUTH_OTHER_REFUSAL)
            .to_string()
    };
    let other = |why: &str| reasons::with_words(reasons::OAUTH_OTHER_REFUSAL, why);
    match (status, redirected, iss) {
        (None, _, _) => (ProbeOutcome::NotObserved, reasons::OAUTH_NO_ANSWER.into()),
        (_, false, _) => match description {
            Some(d) if d.contains("given more than once") || d.contains("may be given once") => (
                ProbeOutcome::Reject,
                reasons::OAUTH_EARLY_SYNTAX_REJECTION.into(),
            ),
            _ => (ProbeOutcome::Reject, other(error.unwrap_or("no-redirect"))),
        },
        (_, true, None) => (ProbeOutcome::Reject, other("iss-missing")),
        (_, true, Some(i)) if i != expected => (ProbeOutcome::Reject, code(Branch::Rejected)),
        (_, true, Some(_)) if granted => (ProbeOutcome::Accept, code(Branch::Accepted)),
        (_, true, Some(_)) => (ProbeOutcome::Reject, other(error.unwrap_or("no-code"))),
    }
}

/// `mix-up-resistance`'s observation read again from its stored
/// `expectedIssuer` and summary of the authorization response
/// (`response.authorize`: `status`, `redirectsTo`, `code`, `iss`, `error`,
/// `errorDescription`): the `iss` is compared with the issuer again.
fn mix_up_reread(role: &str, o: &Observation, transcript: &Value) -> Option<(Observation, String)> {
    let id = "mix-up-resistance";
    let expected = transcript.get("expectedIssuer")?.as_str()?;
    let a = transcript.pointer("/response/authorize")?;
    let text = |k: &str| a.get(k).and_then(Value::as_str);
    let status = a
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    let (observed, reason) = classify_mix_up(
        status,
        (text("redirectsTo").is_some(), text("code").is_some()),
        text("iss"),
        (text("error"), text("errorDescription")),
        expected,
    );
    as_read(
        id,
        role,
        o,
        (observed, reason),
        format!(
            "its stored authorization response (iss {}, expected {expected})",
            text("iss").unwrap_or("none")
        ),
    )
}

/// The fixture's audit note of cimd-identity's own refusal: the client's
/// metadata document names another `client_id`.
pub const CIMD_IMPOSTOR_NOTE: &str = "refused: client metadata document names another client_id";
/// The start of the fixture's audit note of a `client_id` that is not a URL
/// at all (refused by syntax, before any fetch).
pub const CIMD_NOT_A_URL_NOTE: &str = "refused: client_id is not an absolute";

/// How `cimd-identity`'s authorization request came back (`status`, whether
/// a code was issued, the fixture's note on its fetch of the client's
/// metadata document, the `error`): granted is ACCEPTED; refused with the
/// impostor note REJECTED; a `client_id` that is not a URL the early syntax
/// rejection; anything else another refusal.
pub fn classify_cimd_identity(
    status: Option<u16>,
    granted: bool,
    note: Option<&str>,
    error: Option<&str>,
) -> (ProbeOutcome, String) {
    let id = "cimd-identity";
    let code = |branch: Branch| {
        reasons::oauth_case(id, branch)
            .unwrap_or(reasons::OAUTH_OTHER_REFUSAL)
            .to_string()
    };
    match (status, note) {
        (None, _) => (ProbeOutcome::NotObserved, reasons::OAUTH_NO_ANSWER.into()),
        _ if granted => (ProbeOutcome::Accept, code(Branch::Accepted)),
        (_, Some(n)) if n == CIMD_IMPOSTOR_NOTE => (ProbeOutcome::Reject, code(Branch::Rejected)),
        (_, Some(n)) if n.starts_with(CIMD_NOT_A_URL_NOTE) => (
            ProbeOutcome::Reject,
            reasons::OAUTH_EARLY_SYNTAX_REJECTION.into(),
        ),
        _ => (
            ProbeOutcome::Reject,
            reasons::with_words(reasons::OAUTH_OTHER_REFUSAL, error.unwrap_or("unnamed")),
        ),
    }
}

/// `cimd-identity`'s observation read again from its stored authorization
/// answer (`request.authorize`) and the fixture's stored fetch note
/// (`fixtureFetchNote`).
fn cimd_identity_reread(
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    let id = "cimd-identity";
    let a = transcript.pointer("/request/authorize")?;
    let text = |k: &str| a.get(k).and_then(Value::as_str);
    let note = transcript.get("fixtureFetchNote").and_then(Value::as_str);
    let status = a
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    let (observed, reason) =
        classify_cimd_identity(status, text("code").is_some(), note, text("error"));
    as_read(
        id,
        role,
        o,
        (observed, reason),
        format!(
            "its stored answer, with the fetch note ({}),",
            note.unwrap_or("no fetch")
        ),
    )
}

/// `refresh-token-rotation-when-claimed`'s readings, shared by the runner
/// and the judge: `role`'s refresh request came back with `status` and
/// `error`; for the positive, `first` and `second` are the refresh token
/// presented and the one issued (or their digests: only their equality
/// matters); for the control, `family_revoked` is whether the token issued
/// by the positive was inactive after the replay (the fixture's
/// introspection). Positive: a new, different refresh token is ACCEPTED.
/// Control: the used token again refused `invalid_grant` with the family
/// revoked is REJECTED. Mutant: the request without its refresh token is
/// refused by syntax (`invalid_request`).
pub fn classify_refresh(
    role: &str,
    status: Option<u16>,
    error: Option<&str>,
    (first, second): (Option<&str>, Option<&str>),
    family_revoked: Option<bool>,
) -> (ProbeOutcome, String) {
    let id = "refresh-token-rotation-when-claimed";
    let code = |branch: Branch| {
        reasons::oauth_case(id, branch)
            .unwrap_or(reasons::OAUTH_OTHER_REFUSAL)
            .to_string()
    };
    let other = |why: &str| reasons::with_words(reasons::OAUTH_OTHER_REFUSAL, why);
    let early = || {
        (
            ProbeOutcome::Reject,
            reasons::OAUTH_EARLY_SYNTAX_REJECTION.to_string(),
        )
    };
    match (role, status, error) {
        (_, None, _) => (ProbeOutcome::NotObserved, reasons::OAUTH_NO_ANSWER.into()),
        ("positive", Some(200), _) if second.is_some() && second != first => {
            (ProbeOutcome::Accept, code(Branch::Accepted))
        }
        ("positive", Some(200), _) => (ProbeOutcome::Accept, other("refresh-token-not-rotated")),
        ("positive", _, e) => (ProbeOutcome::Reject, other(e.unwrap_or("unnamed"))),
        ("negative", Some(200), _) => (ProbeOutcome::Accept, other("used-refresh-token-accepted")),
        ("negative", _, Some("invalid_grant")) if family_revoked == Some(true) => {
            (ProbeOutcome::Reject, code(Branch::Rejected))
        }
        ("negative", _, Some("invalid_grant")) => {
            (ProbeOutcome::Reject, other("reuse-not-detected"))
        }
        (_, Some(200), _) => (ProbeOutcome::Accept, code(Branch::Accepted)),
        (_, _, Some("invalid_request")) => early(),
        ("mutant", _, Some("invalid_grant")) => (ProbeOutcome::Reject, code(Branch::Rejected)),
        (_, _, e) => (ProbeOutcome::Reject, other(e.unwrap_or("unnamed"))),
    }
}

/// The refresh-rotation observation read again from its stored summaries:
/// the positive's grant (`grant[].token.refreshToken`, a digest) and
/// refresh answer (`refresh.token`), the control's replay (`replay.token`)
/// and `newRefreshTokenInactiveAfterReplay`, the mutant's answer (`token`).
fn refresh_reread(
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    let id = "refresh-token-rotation-when-claimed";
    let answer = match role {
        "positive" => transcript.pointer("/refresh/token")?,
        "negative" => transcript.pointer("/replay/token")?,
        _ => transcript.get("token")?,
    };
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let status = answer
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    let first = transcript
        .get("grant")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|step| step.get("token"))
        .and_then(|t| text(t, "refreshToken"));
    let second = text(answer, "refreshToken");
    let error = text(answer, "error");
    let (observed, reason) = classify_refresh(
        role,
        status,
        error.as_deref(),
        (first.as_deref(), second.as_deref()),
        transcript
            .get("newRefreshTokenInactiveAfterReplay")
            .and_then(Value::as_bool),
    );
    as_read(
        id,
        role,
        o,
        (observed, reason),
        "the record of its token-endpoint answers".to_string(),
    )
}

/// The fixture's audit note of a client document off loopback, refused by
/// its trust policy without a connection (cimd-trust-policy-recorded's own
/// refusal).
pub const CIMD_OFF_LOOPBACK_NOTE: &str =
    "refused: client_id host is not a loopback address; refused without a connection";

/// How `cimd-trust-policy-recorded`'s authorization request came back: its
/// `status`, whether a code was issued, and the fixture's recorded fetch of
/// the client's document (`fetch`: its status, 0 when no connection was
/// made, and its note). Granted with the document fetched (200) under
/// `policy_note` is ACCEPTED; granted otherwise another refusal
/// (`trust-policy-not-recorded`); refused by the policy without a
/// connection REJECTED; a `client_id` that is not a URL the early syntax
/// rejection; anything else another refusal.
pub fn classify_trust_policy(
    status: Option<u16>,
    granted: bool,
    fetch: Option<(u64, Option<&str>)>,
    policy_note: &str,
) -> (ProbeOutcome, String) {
    let id = "cimd-trust-policy-recorded";
    let code = |branch: Branch| {
        reasons::oauth_case(id, branch)
            .unwrap_or(reasons::OAUTH_OTHER_REFUSAL)
            .to_string()
    };
    let other = |why: &str| reasons::with_words(reasons::OAUTH_OTHER_REFUSAL, why);
    match (fetch, status) {
        (_, None) => (ProbeOutcome::NotObserved, reasons::OAUTH_NO_ANSWER.into()),
        (None, _) => (ProbeOutcome::Reject, other("no-fetch-recorded")),
        (Some((200, Some(n))), _) if granted && n == policy_note => {
            (ProbeOutcome::Accept, code(Branch::Accepted))
        }
        (Some(_), _) if granted => (ProbeOutcome::Accept, other("trust-policy-not-recorded")),
        (Some((0, Some(n))), _) if n == CIMD_OFF_LOOPBACK_NOTE => {
            (ProbeOutcome::Reject, code(Branch::Rejected))
        }
        (Some((_, Some(n))), _) if n.starts_with(CIMD_NOT_A_URL_NOTE) => (
            ProbeOutcome::Reject,
            reasons::OAUTH_EARLY_SYNTAX_REJECTION.into(),
        ),
        (Some((s, _)), _) => (ProbeOutcome::Reject, other(&format!("fetch status {s}"))),
    }
}

/// `cimd-trust-policy-recorded`'s observation read again from its stored
/// authorization answer (`authorization.authorize`) and the fixture's
/// recorded fetch (`fixtureFetch`), the policy being the one the
/// evaluation names (`flow.trustPolicyId`): the evaluation's trust policy
/// is the one the stored fetch was made under.
pub fn trust_policy_reread(
    role: &str,
    o: &Observation,
    transcript: &Value,
    policy: &str,
) -> Option<(Observation, String)> {
    let id = "cimd-trust-policy-recorded";
    let a = transcript.pointer("/authorization/authorize")?;
    let status = a
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    let fetch = transcript
        .get("fixtureFetch")
        .filter(|f| !f.is_null())
        .map(|f| {
            (
                f.get("status").and_then(Value::as_u64).unwrap_or(0),
                f.get("note").and_then(Value::as_str),
            )
        });
    let policy_note = format!("fetched under policy {policy}");
    let (observed, reason) = classify_trust_policy(
        status,
        a.get("code").and_then(Value::as_str).is_some(),
        fetch,
        &policy_note,
    );
    as_read(
        id,
        role,
        o,
        (observed, reason),
        format!(
            "its stored answer, with the fixture's recorded fetch ({}) under the evaluation's trust policy {policy:?},",
            fetch.and_then(|(_, n)| n).unwrap_or("no fetch")
        ),
    )
}

/// The observation `o` (check `id`, `role`) as its stored bytes give it,
/// and why, where they give something else than its labels: first the
/// profile judge's readings ([`rederive`]); then, for a check that presents
/// a token ([`PRESENTED`], [`READ_WITH`]), the answer to that one request
/// read again from the stored connection bytes (`transcript.transcript`)
/// and classified as the runner classifies it, with the check's own
/// findings read from what it stored:
///
/// - `token-storage-omission`: a token counted in the subject's output or in
///   the files it left (`observation.tokenOccurrencesInSubjectOutput`,
///   `tokenOccurrencesInFilesLeft`) is `MCP_RES_OAUTH_TOKEN_STORED` (the
///   output counts are checked against the stored output by [`judge_dir`]);
/// - `token-passthrough-prohibited`: a pass-through request the issuer saw
///   (`observation.passThroughRequestsSeenByIssuer`) is
///   `MCP_RES_OAUTH_TOKEN_FORWARDED`;
/// - `scope-minimization`, positive: an acceptance is credited only when the
///   scopes requested are the required ones and the token endpoint's
///   stored answer (`observation.grant`, its `scope`, whose omission RFC
///   6749 §5.1 reads as the requested scope) authorized exactly those;
/// - `sanitized-authorization-errors`: an `expired` refusal is the check's
///   own (its control's token is also expired); a stored answer that holds
///   a synthetic credential ([`SYNTHETIC_CREDENTIAL`]: the redacted token)
///   echoes the token (`MCP_RES_OAUTH_ERROR_ECHOES_TOKEN`), and a leak the
///   runner found on the bytes as they arrived (`observation.leaked`: the
///   claim values are not stored) is kept; a leak label on the control
///   whose own answer holds none is believed (it is the mutant's refusal's).
pub fn reread(
    id: &str,
    role: &str,
    o: &Observation,
    transcript: &Value,
) -> Option<(Observation, String)> {
    if let Some(found) = rederive(id, role, o, transcript) {
        return Some(found);
    }
    if AUTHORIZATION.iter().any(|(c, _, _)| *c == id) {
        return authorization_reread(id, role, o, transcript);
    }
    if id == "refresh-token-rotation-when-claimed" {
        return refresh_reread(role, o, transcript);
    }
    if id == "cimd-identity" {
        return cimd_identity_reread(role, o, transcript);
    }
    if id == "mix-up-resistance" {
        return mix_up_reread(role, o, transcript);
    }
    if RESOLUTION.iter().any(|(c, _)| *c == id) {
        return resolution_reread(id, role, o, transcript);
    }
    if id == "token-request-resource" || REDEMPTION.iter().any(|(c, _)| *c == id) {
        return redemption_reread(id, role, o, transcript);
    }
    let own =
        own_reason(id).or_else(|| READ_WITH.iter().find(|(c, _)| *c == id).map(|(_, r)| *r))?;
    let wire = &transcript["transcript"];
    let sent = super::http::sent_on(wire, 1);
    let [request] = sent.as_slice() else {
        return None;
    };
    let request_id = request.get("id")?;
    let answer = super::http::exchanges_on(wire, 1)?.into_iter().next();
    let (observed, reason) = match &answer {
        Some(a) => classify_presented(
            id,
            Some(a.status),
            a.result_for(request_id).is_some(),
            a.header("www-authenticate"),
            &a.body,
            own,
        ),
        None => classify_presented(id, None, false, None, &[], own),
    };
    let (code, _) = reasons::split_words(&reason);
    let mut code = code.to_string();
    let mut what = answer.as_ref().map_or_else(
        || "no response".to_string(),
        |a| format!("status {}", a.status),
    );
    let observation = &transcript["observation"];
    let count = |k: &str| observation.get(k).and_then(Value::as_u64).unwrap_or(0);
    match id {
        "token-storage-omission" => {
            let n = count("tokenOccurrencesInSubjectOutput") + count("tokenOccurrencesInFilesLeft");
            if n > 0 {
                code = reasons::OAUTH_TOKEN_STORED.into();
                what = format!(
                    "{what}, with {n} occurrence(s) of the token counted in what the subject wrote"
                );
            }
        }
        "token-passthrough-prohibited" => {
            let n = count("passThroughRequestsSeenByIssuer");
            if n > 0 {
                code = reasons::OAUTH_TOKEN_FORWARDED.into();
                what = format!("{what}, with {n} pass-through request(s) seen by the issuer");
            }
        }
        "scope-minimization" if role == "positive" && observed == ProbeOutcome::Accept => {
            if let Some(why) = scopes_not_minimal(observation) {
                code = reasons::OAUTH_OTHER_REFUSAL.into();
                what = format!("{what}, but {why}");
            }
        }
        "sanitized-authorization-errors" => {
            if observed == ProbeOutcome::Reject
                && reason == reasons::with_words(reasons::OAUTH_OTHER_REFUSAL, "expired")
            {
                code = reasons::oauth_case(id, Branch::Rejected)
                    .unwrap_or(reasons::OAUTH_OTHER_REFUSAL)
                    .into();
            }
            let echoed = answer.as_ref().is_some_and(|a| {
                let needle = SYNTHETIC_CREDENTIAL.as_bytes();
                a.body.windows(needle.len()).any(|w| w == needle)
                    || a.headers
                        .iter()
                        .any(|(_, v)| v.contains(SYNTHETIC_CREDENTIAL))
            });
            let leaks = [
                reasons::OAUTH_ERROR_ECHOES_TOKEN,
                reasons::OAUTH_ERROR_ECHOES_CLAIM,
            ];
            if echoed {
                code = reasons::OAUTH_ERROR_ECHOES_TOKEN.into();
                what = format!("{what}, whose stored bytes hold the token (redacted)");
            } else if let Some(leak) = observation.get("leaked").and_then(Value::as_str) {
                code = if leak == "token" { leaks[0] } else { leaks[1] }.into();
                what = format!("{what}, with the {leak} found in it as it arrived");
            } else if role == "negative" && leaks.contains(&o.observed_reason.as_str()) {
                return None;
            }
        }
        _ => {}
    }
    as_read(
        id,
        role,
        o,
        (observed, code),
        format!("its stored connection bytes answer the token's request with {what}, which"),
    )
}

/// Why a scope-minimization acceptance is not credited, from its stored
/// observation: the scopes requested are not the required ones, or the
/// token endpoint's stored answer authorized others than those requested.
fn scopes_not_minimal(observation: &Value) -> Option<String> {
    let set = |v: &Value| -> Option<std::collections::BTreeSet<String>> {
        v.as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let (Some(requested), Some(required)) = (
        set(&observation["requestedScopes"]),
        set(&observation["requiredScopes"]),
    ) else {
        return Some("its observation records no requested or required scopes".into());
    };
    if requested != required {
        return Some(format!(
            "the scopes requested {requested:?} are not the required {required:?}"
        ));
    }
    let token = observation["grant"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|step| step.get("token"));
    let Some(token) = token else {
        return Some("its observation stores no answer of the token endpoint".into());
    };
    let authorized = match token.get("scope").and_then(Value::as_str) {
        Some(s) => s
            .split(' ')
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect(),
        None => requested.clone(),
    };
    (authorized != requested).then(|| {
        format!("the token endpoint's stored answer authorized {authorized:?}, not the requested {requested:?}")
    })
}

/// How many synthetic credentials (redacted tokens) the stored output of a
/// subject holds: the chunks of its stdout and stderr in `server` (a
/// check's `server.json`), each stream read as one.
pub fn credentials_in_output(server: &Value) -> usize {
    use base64::Engine as _;
    let mut streams: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
    for chunk in server["chunks"].as_array().into_iter().flatten() {
        let Some(stream) = chunk["stream"].as_str() else {
            continue;
        };
        let bytes = match (chunk["text"].as_str(), chunk["base64"].as_str()) {
            (Some(t), _) => t.as_bytes().to_vec(),
            (None, Some(b)) => base64::engine::general_purpose::STANDARD
                .decode(b)
                .unwrap_or_default(),
            _ => continue,
        };
        streams.entry(stream).or_default().extend(bytes);
    }
    let needle = SYNTHETIC_CREDENTIAL.as_bytes();
    streams
        .values()
        .map(|b| b.windows(needle.len()).filter(|w| *w == needle).count())
        .sum()
}

/// Whether an absolute http(s) URL's host is a loopback address (an IP
/// literal in 127.0.0.0/8 or `::1`; a name is not).
pub fn on_loopback(url: &str) -> bool {
    let Some(authority) = origin(url)
        .and_then(|o| o.split_once("://"))
        .map(|(_, a)| a)
    else {
        return false;
    };
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split_once(']').map_or(rest, |(h, _)| h)
    } else {
        authority.split_once(':').map_or(authority, |(h, _)| h)
    };
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// Judge an OAuth-boundary directory: `case_findings` are the findings the
/// evaluation's own rules give on its cases (the validator's, which this
/// layer cannot run). Returns what the record gives where the documents
/// record something else.
pub fn judge_dir(
    evaluation: &Value,
    run: &Value,
    stored: &BTreeMap<String, Stored>,
    digests: &BTreeMap<String, String>,
    case_findings: &[CaseFinding],
) -> Vec<Disagreement> {
    let mut out = Vec::new();
    let mut push = |file: &str, pointer: String, recorded: &Value, judged: Value, why: String| {
        if *recorded != judged {
            out.push(Disagreement {
                file: file.to_owned(),
                pointer,
                recorded: recorded.clone(),
                judged,
                why,
            });
        }
    };
    let cases = evaluation["cases"].as_array().cloned().unwrap_or_default();
    let mut judged_cases: Vec<Value> = Vec::new();
    for (i, check) in run["checks"].as_array().into_iter().flatten().enumerate() {
        let id = check["id"].as_str().unwrap_or_default();
        let mut obs: [Option<Observation>; 3] = [None, None, None];
        let mut unjudged = None;
        for (k, role) in ROLES.iter().enumerate() {
            let path = artifact_path(id, role);
            match stored.get(&path) {
                None => {}
                Some(Err(why)) => unjudged = Some(format!("{path}: {why}")),
                Some(Ok(doc)) => match Observation::from_artifact(doc, id, role) {
                    // Labels are believed only where the stored bytes give
                    // nothing else (the profile judge's reading).
                    Ok(o) => match reread(id, role, &o, &doc["transcript"]).or_else(|| {
                        (id == "cimd-trust-policy-recorded")
                            .then(|| {
                                trust_policy_reread(
                                    role,
                                    &o,
                                    &doc["transcript"],
                                    evaluation["flow"]["trustPolicyId"].as_str().unwrap_or(""),
                                )
                            })
                            .flatten()
                    }) {
                        Some((judged, why)) => {
                            push(
                                &path,
                                "/observedReasonCode".into(),
                                &json!(o.observed_reason),
                                json!(judged.observed_reason),
                                why,
                            );
                            obs[k] = Some(judged);
                        }
                        None => obs[k] = Some(o),
                    },
                    Err(why) => unjudged = Some(format!("{path}: {why}")),
                },
            }
        }
        if let Some(why) = unjudged {
            push(
                "run.json",
                format!("/checks/{i}"),
                &check["verdict"],
                Value::Null,
                format!("check {id} cannot be judged from its artifacts: {why}"),
            );
            continue;
        }
        // The output counts of token-storage-omission against the stored
        // output: a redacted token in it is a token the subject wrote.
        if id == "token-storage-omission"
            && let Some(Ok(server)) = stored.get(&server_path(id))
        {
            let held = credentials_in_output(server);
            let counted: u64 = ROLES
                .iter()
                .filter_map(|role| match stored.get(&artifact_path(id, role)) {
                    Some(Ok(doc)) => doc
                        .pointer("/transcript/observation/tokenOccurrencesInSubjectOutput")
                        .and_then(Value::as_u64),
                    _ => None,
                })
                .sum();
            if held > 0 && counted == 0 {
                if let Some(p) = obs[0].as_mut()
                    && p.observed_reason != reasons::OAUTH_TOKEN_STORED
                {
                    push(
                        &artifact_path(id, "positive"),
                        "/observedReasonCode".into(),
                        &json!(p.observed_reason),
                        json!(reasons::OAUTH_TOKEN_STORED),
                        format!(
                            "check {id}: its stored server.json holds {held} redacted token(s) in the subject's output, but no observation counts one"
                        ),
                    );
                    p.observed_reason = reasons::OAUTH_TOKEN_STORED.into();
                }
            } else if held == 0 && counted > 0 {
                push(
                    &server_path(id),
                    "/chunks".into(),
                    &json!(counted),
                    json!(0),
                    format!(
                        "check {id}: its observations count {counted} token occurrence(s) in the subject's output, but its stored server.json holds none"
                    ),
                );
            }
        }
        let [p, n, m] = &obs;
        let mut v = check_verdict(p.as_ref(), n.as_ref(), m.as_ref(), None);
        let case_index = cases.iter().position(|c| c["id"] == id);
        if v.verdict == Verdict::Pass
            && let Some((_, code, message)) =
                case_index.and_then(|at| case_findings.iter().find(|(index, _, _)| *index == at))
        {
            v.verdict = Verdict::NotObserved;
            v.reason = code.clone();
            v.detail = format!("revised by the standard's rules: {message}");
        }
        let at = |field: &str| format!("/checks/{i}/{field}");
        let why = |what: &str| format!("check {id}: {what}");
        push(
            "run.json",
            at("verdict"),
            &check["verdict"],
            json!(v.verdict.as_str()),
            why(
                "as its stored observations give it, revised by the evaluation's rules on its case",
            ),
        );
        push(
            "run.json",
            at("reason"),
            &check["reason"],
            json!(v.reason),
            why("the verdict's reason"),
        );
        if v.reason != CHECK_NOT_OBSERVED {
            push(
                "run.json",
                at("detail"),
                &check["detail"],
                json!(truncate(&v.detail, DETAIL_MAX)),
                why("the verdict's detail"),
            );
        }
        push(
            "run.json",
            at("mutantKilled"),
            &check["mutantKilled"],
            json!(v.mutant_killed),
            why(
                "killed when the mutant was not credited with the negative control's expected reason",
            ),
        );
        if let (Some(p), Some(n), Some(m)) = (p, n, m) {
            let sha = |role: &str| {
                digests
                    .get(&artifact_path(id, role))
                    .cloned()
                    .unwrap_or_default()
            };
            judged_cases.push(json!({
                "id": id,
                "positive": case_observation(p, &sha("positive")),
                "negative": case_observation(n, &sha("negative")),
                "wrongReasonMutant": WrongReasonMutant {
                    property_reached: m.observed != ProbeOutcome::NotObserved,
                    observed_reason_code: &m.observed_reason,
                    expected_diagnostic: EXPECTED_DIAGNOSTIC,
                    artifact_sha256: &sha("mutant"),
                },
            }));
        }
    }
    // The cleanup, the refusals' sanitization and the network claims, as
    // the stored cleanup record gives them.
    if let Some(Ok(cleanup)) = stored.get(CLEANUP_PATH) {
        for (field, from) in [
            ("listenerClosed", "fixtureListenerClosed"),
            ("redirectListenerReleased", "redirectListenerReleased"),
        ] {
            if let Some(judged) = cleanup.get(from).filter(|v| v.is_boolean()) {
                push(
                    "evaluation.json",
                    format!("/cleanup/{field}"),
                    &evaluation["cleanup"][field],
                    judged.clone(),
                    format!("as the stored {CLEANUP_PATH} records it (`{from}`)"),
                );
            }
        }
        if let (Some(seen), Some(echoing)) = (
            cleanup["subjectRefusalsSeen"].as_u64(),
            cleanup["subjectRefusalsEchoingTheToken"].as_u64(),
        ) {
            push(
                "evaluation.json",
                "/privacy/authorizationErrorsSanitized".into(),
                &evaluation["privacy"]["authorizationErrorsSanitized"],
                json!(seen > 0 && echoing == 0),
                format!(
                    "{seen} refusal(s) of the subject seen and {echoing} echoing the token, as the stored {CLEANUP_PATH} records them"
                ),
            );
        }
        let off_loopback = cleanup["runnerConnections"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["target"].as_str())
            .filter(|t| !on_loopback(t))
            .count() as u64;
        // Attempts beyond loopback seen on the isolated namespace's
        // interface (the subjects'), as the stored record lists them.
        let outside = cleanup["outsideAttempts"].as_array().map_or(0, Vec::len) as u64;
        let off_loopback = off_loopback + outside;
        let recorded = evaluation["fixture"]["externalNetworkRequests"].as_u64();
        if off_loopback > 0 && recorded.is_some_and(|r| r < off_loopback) {
            push(
                "evaluation.json",
                "/fixture/externalNetworkRequests".into(),
                &evaluation["fixture"]["externalNetworkRequests"],
                json!(off_loopback),
                format!(
                    "the stored {CLEANUP_PATH} lists {} connection(s) of the runner to an address off loopback and {outside} attempt(s) beyond loopback seen in the run's namespace",
                    off_loopback - outside
                ),
            );
        }
        if let Some(external) = recorded.map(|r| r.max(off_loopback)) {
            push(
                "evaluation.json",
                "/fixture/loopbackOnly".into(),
                &evaluation["fixture"]["loopbackOnly"],
                json!(external == 0),
                "loopback only exactly when no external network request was made".into(),
            );
        }
    }
    let ids: Vec<&Value> = cases.iter().map(|c| &c["id"]).collect();
    let judged_ids: Vec<&Value> = judged_cases.iter().map(|c| &c["id"]).collect();
    if ids != judged_ids {
        push(
            "evaluation.json",
            "/cases".into(),
            &json!(ids),
            json!(judged_ids),
            "a case is written for every check with a stored positive, negative and mutant, in run order".into(),
        );
        return out;
    }
    for (i, (recorded, judged)) in cases.iter().zip(&judged_cases).enumerate() {
        for branch in ["positive", "negative", "wrongReasonMutant"] {
            for (field, value) in judged[branch].as_object().into_iter().flatten() {
                push(
                    "evaluation.json",
                    format!("/cases/{i}/{branch}/{field}"),
                    &recorded[branch][field],
                    value.clone(),
                    format!(
                        "case {}: as its stored artifact records it",
                        judged["id"].as_str().unwrap_or_default()
                    ),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A presentation transcript: one request sent, `answer` received.
    fn presented(answer: &str) -> Value {
        let body = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#;
        json!({"transcript": {"connections": 1, "events": [
            {"connection": 1, "stream": "sent", "text": format!(
                "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )},
            {"connection": 1, "stream": "received", "text": answer},
        ]}})
    }

    fn labelled(observed: ProbeOutcome, reason: &str) -> Observation {
        Observation {
            expected: ProbeOutcome::Reject,
            expected_reason: reasons::oauth_case("access-token-audience", Branch::Rejected)
                .unwrap()
                .into(),
            observed,
            observed_reason: reason.into(),
            reached: true,
            detail: String::new(),
            answer: None,
        }
    }

    #[test]
    fn a_presented_tokens_answer_is_classified_from_the_stored_bytes() {
        let id = "access-token-audience";
        let own = reasons::oauth_case(id, Branch::Rejected).unwrap();
        let named = |reason: &str| {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32000,"message":"no","data":{{"reason":"{reason}"}}}}}}"#
            );
            format!(
                "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
        };
        // As labelled: nothing to say.
        let t = presented(&named("wrong-audience"));
        assert!(reread(id, "negative", &labelled(ProbeOutcome::Reject, own), &t).is_none());
        // A refusal for another reason credited as the check's own.
        let t = presented(&named("expired"));
        let (judged, why) = reread(id, "negative", &labelled(ProbeOutcome::Reject, own), &t)
            .expect("another reason");
        assert_eq!(
            judged.observed_reason,
            reasons::OAUTH_OTHER_REFUSAL,
            "{why}"
        );
        // A 500 credited as the check's own refusal.
        let t = presented("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n");
        let (judged, _) = reread(id, "negative", &labelled(ProbeOutcome::Reject, own), &t)
            .expect("a 500 is no refusal of the property");
        assert_eq!(judged.observed_reason, reasons::OAUTH_OTHER_REFUSAL);
        // A result served, labelled as a refusal: accepted.
        let body = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
        let t = presented(&format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ));
        let (judged, _) =
            reread(id, "negative", &labelled(ProbeOutcome::Reject, own), &t).expect("served");
        assert_eq!(judged.observed, ProbeOutcome::Accept);
        // A check-specific finding is read from what the check stored: a
        // storage finding stands on the counts it stored, and without them
        // the answer reads as it came.
        let id = "token-storage-omission";
        let mut t = presented(&named("expired"));
        let stored = labelled(ProbeOutcome::Reject, reasons::OAUTH_TOKEN_STORED);
        let (judged, why) = reread(id, "negative", &stored, &t).expect("nothing counted");
        assert_eq!(
            Some(judged.observed_reason.as_str()),
            reasons::oauth_case(id, Branch::Rejected),
            "{why}"
        );
        t["observation"] =
            json!({"tokenOccurrencesInSubjectOutput": 0, "tokenOccurrencesInFilesLeft": 1});
        assert!(reread(id, "negative", &stored, &t).is_none());
        // A refusal whose stored answer holds the (redacted) token echoes it.
        let id = "sanitized-authorization-errors";
        let own = reasons::oauth_case(id, Branch::Rejected).unwrap();
        let clean = presented(&named("wrong-audience"));
        assert!(reread(id, "negative", &labelled(ProbeOutcome::Reject, own), &clean).is_none());
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32000,"message":"bad {SYNTHETIC_CREDENTIAL}","data":{{"reason":"wrong-audience"}}}}}}"#
        );
        let echoed = presented(&format!(
            "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ));
        let (judged, _) = reread(
            id,
            "negative",
            &labelled(ProbeOutcome::Reject, own),
            &echoed,
        )
        .expect("the token echoed");
        assert_eq!(judged.observed_reason, reasons::OAUTH_ERROR_ECHOES_TOKEN);
    }
}
