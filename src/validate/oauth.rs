//! OAuth authorization-boundary evaluations (`mcp-res.oauth-boundary-evaluation/0.2.0`,
//! MCPRES-OAUTH-001..004).
//!
//! Rule order (the reference order; the first finding is the primary diagnostic): the closed
//! schema; the `mcp-res/oauth-boundary/v1` manifest registered and PROVISIONAL; the protocol
//! revision covered by it; the manifest digest; the evaluation digest; the cases covering
//! exactly the applicable checks; loopback-only fixture with zero real providers and zero
//! external requests; synthetic credentials; per case the derived reason codes, the positive and
//! negative observations and the early-syntax wrong-reason mutant; no persisted credential
//! material; sanitized errors; listener cleanup; the derived result.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Value, json};

use crate::diag::codes as c;
use crate::diag::{Finding, Report};
use crate::json::locate::escape_token;
use crate::model::oauth::{Case, OauthEvaluation};
use crate::model::vocab::{Outcome, ProbeOutcome};
use crate::profiles::{
    OAUTH_BOUNDARY_ID, Profile, ProfileStatus, Registry, RegistryError, has_repeat, sorted,
};
use crate::schema::{self, SchemaKind};

/// Validate an OAuth-boundary evaluation against the built-in registry.
pub fn validate_oauth_evaluation(doc: &Value) -> Report {
    validate_with(doc, Registry::builtin())
}

/// The reason code a case's `branch` (`ACCEPTED` or `REJECTED`) must carry: derived from the
/// check id, upper-cased with `-` turned into `_` (the reason table lists the pair of every
/// check of the manifest; the derivation also names one of a check it does not know).
pub fn reason_code(check_id: &str, branch: &str) -> String {
    crate::diag::reasons::derive_oauth_case(check_id, branch)
}

/// Validate an OAuth-boundary evaluation against a given registry.
pub fn validate_with(doc: &Value, registry: Result<&Registry, &RegistryError>) -> Report {
    let schema_errors = schema::validate(SchemaKind::OauthBoundaryEvaluation, doc);
    if !schema_errors.is_empty() {
        let findings = schema_errors
            .iter()
            .map(|e| {
                Finding::new(
                    c::OAUTH_SCHEMA_INVALID,
                    e.instance_path.clone(),
                    format!("schema: {} ({})", e.message, e.keyword),
                )
            })
            .collect();
        return Report::from_findings(findings, schema_errors, None);
    }
    let manifest = match registry {
        Err(e) => Err(format!("the profile registry is unusable: {e}")),
        Ok(r) => match r.get(OAUTH_BOUNDARY_ID) {
            None => Err(format!("no {OAUTH_BOUNDARY_ID} manifest is registered")),
            Some(p) if p.status != ProfileStatus::Provisional => Err(format!(
                "the {OAUTH_BOUNDARY_ID} manifest is {}, not PROVISIONAL",
                p.status.as_str()
            )),
            Some(p) => Ok(p),
        },
    };
    let profile = match manifest {
        Ok(p) => p,
        Err(message) => {
            return Report::from_findings(
                vec![Finding::new(c::OAUTH_MANIFEST_INVALID, "", message)],
                Vec::new(),
                None,
            );
        }
    };
    // The schema held, so the typed view reads; a failure would be a model bug, reported.
    let ev = match OauthEvaluation::view(doc) {
        Ok(ev) => ev,
        Err(e) => {
            return Report::from_findings(
                vec![Finding::new(
                    c::OAUTH_SCHEMA_INVALID,
                    "",
                    format!("schema-valid but unreadable as an OAuth-boundary evaluation: {e}"),
                )],
                Vec::new(),
                None,
            );
        }
    };
    let findings = rules(doc, &ev, profile);
    let mut report = Report::from_findings(findings, Vec::new(), None);
    if report.valid {
        report = report
            .with_extra("result", json!(ev.derived_result()))
            .with_extra("profileStatus", json!(profile.status.as_str()))
            .with_extra("securityCertificationClaim", json!(false))
            .with_extra("realAuthorizationProvidersContacted", json!(0));
    }
    report
}

fn rules(doc: &Value, ev: &OauthEvaluation<'_>, profile: &Profile) -> Vec<Finding> {
    let mut findings = Vec::new();
    let revision = ev.profile.protocol_revision.as_str();
    if !profile.supports_revision(revision) {
        findings.push(Finding::new(
            c::OAUTH_REVISION_UNSUPPORTED,
            "/profile/protocolRevision",
            format!(
                "{} covers protocol revisions {}, not {revision}",
                profile.id,
                profile.protocol_revisions.join(", ")
            ),
        ));
    }
    if ev.profile.manifest_sha256 != profile.manifest_sha256 {
        findings.push(Finding::new(
            c::OAUTH_MANIFEST_DIGEST_MISMATCH,
            "/profile/manifestSha256",
            format!(
                "the registered {} manifest has canonical digest {}",
                profile.id, profile.manifest_sha256
            ),
        ));
    }
    // The digest is over the document exactly as written, never over the typed view.
    let digest = super::profile::evaluation_digest(doc).unwrap_or_default();
    if ev.evaluation_sha256 != digest {
        findings.push(Finding::new(
            c::OAUTH_DIGEST_MISMATCH,
            "/evaluationSha256",
            format!("the evaluation's canonical digest without evaluationSha256 is {digest}"),
        ));
    }
    let required = profile.applicable_check_ids(revision);
    let observed = sorted(ev.cases.iter().map(|c| c.id.to_owned()).collect());
    if has_repeat(&observed) || observed != required {
        let missing: Vec<&str> = required
            .iter()
            .filter(|id| !observed.contains(id))
            .map(String::as_str)
            .collect();
        let extra: Vec<&str> = observed
            .iter()
            .filter(|id| !required.contains(id))
            .map(String::as_str)
            .collect();
        let message = if has_repeat(&observed) {
            "a case id is evaluated more than once".to_owned()
        } else {
            format!(
                "the cases must be exactly the {} applicable checks at {revision} (missing: [{}]; not applicable: [{}])",
                required.len(),
                missing.join(", "),
                extra.join(", ")
            )
        };
        findings.push(Finding::new(c::OAUTH_COVERAGE_MISMATCH, "/cases", message));
    }
    let fixture = &ev.fixture;
    if !fixture.loopback_only
        || fixture.real_authorization_providers_contacted != 0
        || fixture.external_network_requests != 0
    {
        findings.push(Finding::new(
            c::OAUTH_EXTERNAL_PROVIDER_CONTACT,
            "/fixture",
            format!(
                "loopbackOnly {}, real providers contacted {}, external requests {}; the evaluation must stay on loopback with zero of both",
                fixture.loopback_only,
                fixture.real_authorization_providers_contacted,
                fixture.external_network_requests
            ),
        ));
    }
    if !fixture.synthetic_credentials {
        findings.push(Finding::new(
            c::OAUTH_NON_SYNTHETIC_CREDENTIAL,
            "/fixture/syntheticCredentials",
            "the evaluation did not use synthetic credentials",
        ));
    }
    for (i, case) in ev.cases.iter().enumerate() {
        if let Some(f) = case_finding(case, i) {
            findings.push(f);
        }
    }
    let privacy = &ev.privacy;
    if privacy.token_material_persisted || privacy.evidence_contains_credential_material {
        findings.push(Finding::new(
            c::OAUTH_SECRET_PERSISTED,
            "/privacy",
            "the evaluation records that token or credential material was persisted",
        ));
    } else if let Some((pointer, what)) = credential_material(doc, String::new()) {
        findings.push(Finding::new(
            c::OAUTH_SECRET_PERSISTED,
            pointer,
            format!("the document itself holds credential material ({what})"),
        ));
    }
    if !privacy.authorization_errors_sanitized {
        findings.push(Finding::new(
            c::OAUTH_UNSANITIZED_ERROR,
            "/privacy/authorizationErrorsSanitized",
            "authorization errors are not shown to be sanitized (authorizationErrorsSanitized is false: a refusal echoed credential material, or no refusal was observed)",
        ));
    }
    if !ev.cleanup.listener_closed || !ev.cleanup.redirect_listener_released {
        findings.push(Finding::new(
            c::OAUTH_CLEANUP_INCOMPLETE,
            "/cleanup",
            "a loopback or redirect listener was not released",
        ));
    }
    let derived = ev.derived_result();
    let claimed = ev.result;
    if claimed != derived {
        let code = if derived == Outcome::Incomplete && claimed == Outcome::Pass {
            c::OAUTH_TEST_FIXTURE_OVERCLAIM
        } else {
            c::OAUTH_RESULT_MISMATCH
        };
        findings.push(Finding::new(
            code,
            "/result",
            format!("result is {claimed}, but the derived result is {derived}"),
        ));
    }
    findings
}

/// The first problem of one case, in the reference order.
fn case_finding(case: &Case<'_>, i: usize) -> Option<Finding> {
    let id = case.id;
    let base = format!("/cases/{i}");
    let accepted = reason_code(id, "ACCEPTED");
    let rejected = reason_code(id, "REJECTED");
    if case.positive.expected_reason_code != accepted {
        return Some(Finding::new(
            c::OAUTH_WRONG_REASON,
            format!("{base}/positive/expectedReasonCode"),
            format!("case {id}: the positive must expect {accepted}"),
        ));
    }
    if case.negative.expected_reason_code != rejected {
        return Some(Finding::new(
            c::OAUTH_WRONG_REASON,
            format!("{base}/negative/expectedReasonCode"),
            format!("case {id}: the negative must expect {rejected}"),
        ));
    }
    for (branch, obs) in [("positive", &case.positive), ("negative", &case.negative)] {
        let pointer = format!("{base}/{branch}");
        if !obs.property_reached {
            return Some(Finding::new(
                c::OAUTH_PROPERTY_NOT_REACHED,
                format!("{pointer}/propertyReached"),
                format!("case {id}: the {branch} observation did not reach the property"),
            ));
        }
        let expected = obs.expected_outcome;
        let observed = obs.observed_outcome;
        if observed == ProbeOutcome::NotObserved || observed != expected {
            return Some(Finding::new(
                c::OAUTH_OUTCOME_MISMATCH,
                format!("{pointer}/observedOutcome"),
                format!("case {id}: the {branch} expected {expected} but observed {observed}"),
            ));
        }
        let expected = obs.expected_reason_code;
        let observed = obs.observed_reason_code;
        if observed != expected {
            return Some(Finding::new(
                c::OAUTH_WRONG_REASON,
                format!("{pointer}/observedReasonCode"),
                format!(
                    "case {id}: the {branch} ended with {observed}, not {expected}; a rejection at an earlier guard credits no downstream property"
                ),
            ));
        }
    }
    let mutant = &case.wrong_reason_mutant;
    let observed = mutant.observed_reason_code;
    let problem = if !mutant.property_reached {
        Some("did not reach the property".to_owned())
    } else if observed == rejected {
        Some(format!(
            "observed the negative's own reason {rejected}, so it does not show a wrong reason"
        ))
    } else if observed != super::codes::OAUTH_EARLY_SYNTAX_REJECTION {
        Some(format!(
            "observed {observed}, not {}",
            super::codes::OAUTH_EARLY_SYNTAX_REJECTION
        ))
    } else if mutant.expected_diagnostic != c::OAUTH_WRONG_REASON.as_str() {
        Some(format!("does not expect {}", c::OAUTH_WRONG_REASON))
    } else {
        None
    };
    problem.map(|p| {
        Finding::new(
            c::OAUTH_WRONG_REASON_CONTROL_MISSING,
            format!("{base}/wrongReasonMutant"),
            format!("case {id}: the wrong-reason mutant {p}"),
        )
    })
}

/// Raw credential material anywhere in the document's strings, in exactly these forms
/// (`spec/conformance.md`, "Credential material in the document", lists what is and is not
/// flagged):
///
/// - an HTTP `Bearer` credential: the scheme, then a token of at least 16 characters with
///   at least one letter and one digit (prose such as "bearer authentication-required" and
///   a challenge's auth-params are not credentials);
/// - an HTTP `Basic` credential: base64 that decodes to `user:password`;
/// - a JSON web token (`eyJ...` header and payload);
/// - a URI parameter that carries a credential (`code`, `code_verifier`, `access_token`,
///   `refresh_token`, `id_token`, `client_secret`, `token`), and the same parameters other
///   than `code` and `token` written bare (`client_secret=...`); `state` is a CSRF value,
///   not a credential;
/// - a secret API key (`sk-`, `sk_live_`, `sk-proj-`, `rk_live_` ... with a long random tail);
/// - a PEM private key (`-----BEGIN ... PRIVATE KEY-----`).
///
/// Returns the pointer of the first such string and what it looks like (never the value).
pub fn credential_material(value: &Value, pointer: String) -> Option<(String, &'static str)> {
    type Check = fn(&regex::Captures<'_>) -> bool;
    static PATTERNS: OnceLock<Vec<(Regex, &'static str, Option<Check>)>> = OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        let random_token: Check = |c| {
            let t = &c[1];
            t.len() >= 16
                && t.bytes().any(|b| b.is_ascii_digit())
                && t.bytes().any(|b| b.is_ascii_alphabetic())
        };
        let user_password: Check = |c| {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(&c[1])
                .is_ok_and(|d| d.len() >= 3 && std::str::from_utf8(&d).is_ok_and(|t| t.contains(':')))
        };
        vec![
            (
                Regex::new(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]+=*)").expect("regex"),
                "a bearer credential",
                Some(random_token),
            ),
            (
                Regex::new(r"(?i)\bbasic\s+([A-Za-z0-9+/]{4,}={0,2})").expect("regex"),
                "a basic credential",
                Some(user_password),
            ),
            (
                Regex::new(r"eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}\.").expect("regex"),
                "a JSON web token",
                None,
            ),
            (
                Regex::new(
                    r"(?i)[?&#](code|code_verifier|access_token|refresh_token|id_token|client_secret|token)=[^&#\s]+",
                )
                .expect("regex"),
                "a URI carrying a credential parameter",
                None,
            ),
            (
                Regex::new(
                    r"(?i)(?:^|[\s;,])(code_verifier|access_token|refresh_token|id_token|client_secret)=[^&#\s]+",
                )
                .expect("regex"),
                "a credential parameter",
                None,
            ),
            (
                Regex::new(r"\b(?:sk|rk)[-_](?:live|test|proj|ant)[-_][A-Za-z0-9_-]{8,}|\bsk-[A-Za-z0-9]{20,}")
                    .expect("regex"),
                "a secret API key",
                None,
            ),
            (
                Regex::new(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----").expect("regex"),
                "a PEM private key",
                None,
            ),
        ]
    });
    match value {
        Value::String(s) => patterns
            .iter()
            .find(|(re, _, check)| match check {
                None => re.is_match(s),
                Some(check) => re.captures_iter(s).any(|c| check(&c)),
            })
            .map(|(_, what, _)| (pointer, *what)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| credential_material(v, format!("{pointer}/{i}"))),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, v)| credential_material(v, format!("{pointer}/{}", escape_token(k)))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flagged(s: &str) -> Option<&'static str> {
        credential_material(&json!({"x": s}), String::new()).map(|(_, what)| what)
    }

    /// The forms `spec/conformance.md` lists as credential material.
    #[test]
    fn credential_forms_are_flagged() {
        for (text, what) in [
            (
                "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
                "a bearer credential",
            ),
            ("bearer abcDEF123456ghiJKL", "a bearer credential"),
            (
                "Authorization: Basic dXNlcjpwYXNzd29yZA==",
                "a basic credential",
            ),
            (
                "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln",
                "a JSON web token",
            ),
            (
                "http://127.0.0.1:1/cb?code=abc123",
                "a URI carrying a credential parameter",
            ),
            (
                "https://x/?access_token=t0k3n",
                "a URI carrying a credential parameter",
            ),
            (
                "grant_type=authorization_code&client_secret=s3cr3t",
                "a URI carrying a credential parameter",
            ),
            ("client_secret=s3cr3t", "a credential parameter"),
            ("sent code_verifier=abcdefgh", "a credential parameter"),
            ("key sk-live-4eC39HqLyjWDarjtT1zdp7dc", "a secret API key"),
            ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "a secret API key"),
            ("sk-proj-abcdefgh12345678", "a secret API key"),
            ("sk-abcdefghijklmnopqrstuvwxyz0123", "a secret API key"),
            ("-----BEGIN PRIVATE KEY-----", "a PEM private key"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----", "a PEM private key"),
            ("-----BEGIN EC PRIVATE KEY-----", "a PEM private key"),
        ] {
            assert_eq!(flagged(text), Some(what), "{text}");
        }
    }

    /// What is not credential material: prose, a CSRF `state`, a challenge's
    /// auth-params, public keys, words that only start like a key.
    #[test]
    fn prose_state_and_public_material_are_not_flagged() {
        for text in [
            "bearer authentication-required",
            "the server requires bearer tokens",
            "Bearer realm=\"mcp\"",
            "http://127.0.0.1:1/cb?state=af0ifjsldkj",
            "Basic realm=\"x\"",
            "basic usage",
            "exit code=1",
            "-----BEGIN PUBLIC KEY-----",
            "-----BEGIN CERTIFICATE-----",
            "task-list",
            "sk-short",
            "risk_level_high",
        ] {
            assert_eq!(flagged(text), None, "{text}");
        }
    }
}
