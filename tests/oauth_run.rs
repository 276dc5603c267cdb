#![cfg(feature = "server")]
//! `mcpres oauth run` against the OAuth-protected reference subject (`mcpres
//! serve --auth loopback`), with the loopback authorization fixture in
//! process: the implemented checks pass against the reference subject, each
//! subject defect fails exactly the checks it concerns, and no artifact holds
//! credential material.

mod support;

use std::path::Path;

use serde_json::Value;
use support::{mcpres, output_text, read_json, walk};

const CHECKS: &[&str] = &[
    "protected-resource-metadata-discovery",
    "authorization-server-metadata",
    "issuer-binding",
    "authorization-request-resource",
    "token-request-resource",
    "access-token-audience",
    "wrong-resource-token-rejection",
    "token-passthrough-prohibited",
    "pkce-s256",
    "pkce-downgrade-refused",
    "exact-redirect-uri",
    "state-binding",
    "mix-up-resistance",
    "authorization-code-binding",
    "token-endpoint-identity",
    "cimd-identity",
    "cimd-trust-policy-recorded",
    "scope-minimization",
    "token-storage-omission",
    "sanitized-authorization-errors",
    "bounded-redirects",
    "ssrf-resistant-metadata-resolution",
    "loopback-redirect-collision",
    "proxy-consent-client-binding",
    "refresh-token-rotation-when-claimed",
];

/// Run `mcpres oauth run` on the reference subject with `defects` (subject
/// defects by name; `fixture:NAME` for a fixture defect), started with the
/// scope requirement the runner names (`--auth-scope {scope}`).
fn run(out: &Path, defects: &[&str]) -> std::process::Output {
    run_scoped(out, defects, true)
}

/// [`run`], with or without `--auth-scope {scope}` in the subject's command.
fn run_scoped(out: &Path, defects: &[&str], scoped: bool) -> std::process::Output {
    let exe = support::exe();
    let exe = exe.to_str().expect("utf-8 path");
    let mut args = vec!["oauth", "run", "-o", out.to_str().expect("utf-8 path")];
    for d in defects {
        if let Some(f) = d.strip_prefix("fixture:") {
            args.extend_from_slice(&["--fixture-defect", f]);
        }
    }
    args.extend_from_slice(&[
        "--",
        exe,
        "serve",
        "--transport",
        "http",
        "--port",
        "{port}",
        "--auth",
        "loopback",
        "--auth-issuer",
        "{issuer}",
    ]);
    if scoped {
        args.extend_from_slice(&["--auth-scope", "{scope}"]);
    }
    for d in defects.iter().filter(|d| !d.starts_with("fixture:")) {
        args.extend_from_slice(&["--auth-defect", d]);
    }
    mcpres(&args)
}

/// (check id, verdict) of run.json.
fn verdicts(out: &Path) -> Vec<(String, String)> {
    read_json(&out.join("run.json"))["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn findings(out: &Path) -> Vec<(String, String)> {
    let doc = read_json(&out.join("evaluation.json"));
    mcpres::validate::oauth::validate_oauth_evaluation(&doc)
        .findings
        .iter()
        .map(|f| (f.code.as_str().to_string(), f.pointer.clone()))
        .collect()
}

fn no_credential_material(out: &Path) {
    for file in walk(out) {
        let doc: Value = read_json(&file);
        assert_eq!(
            mcpres::produce::oauth::artifact_credential(&doc),
            None,
            "{}",
            file.display()
        );
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !support::jwt_like(&text),
            "a JWT-like string in {}",
            file.display()
        );
    }
}

#[test]
fn the_reference_subject_passes_every_check_and_its_evaluation_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let o = run(&out, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let v = verdicts(&out);
    assert_eq!(
        v.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        CHECKS
    );
    assert!(v.iter().all(|(_, verdict)| verdict == "PASS"), "{v:?}");
    assert_eq!(findings(&out), Vec::<(String, String)>::new());
    let doc = read_json(&out.join("evaluation.json"));
    // The fixture's own behaviour is evidence of the harness, not of the
    // subject: with TEST_FIXTURE cases the derived result is INCOMPLETE.
    assert_eq!(doc["result"], "INCOMPLETE");
    assert_eq!(doc["fixture"]["externalNetworkRequests"], 0);
    assert_eq!(doc["cleanup"]["listenerClosed"], true);
    assert_eq!(doc["cleanup"]["redirectListenerReleased"], true);
    // The trust policy is the one the fixture recorded for the run's client.
    assert_eq!(
        doc["flow"]["trustPolicyId"],
        mcpres::server::oauth::fixture::CIMD_TRUST_POLICY
    );
    // Sanitized errors are observed, not asserted: refusals were seen and
    // none echoed the token it refused.
    assert_eq!(doc["privacy"]["authorizationErrorsSanitized"], true);
    let cleanup = read_json(&out.join("artifacts/cleanup.json"));
    assert!(cleanup["subjectRefusalsSeen"].as_u64().unwrap() > 0);
    assert_eq!(cleanup["subjectRefusalsEchoingTheToken"], 0);
    // The flow's scopes are what the observed grant asked for and was
    // granted, not the run's configuration copied.
    assert_eq!(doc["flow"]["requestedScopes"], serde_json::json!(["mcp"]));
    assert_eq!(
        doc["flow"]["authorizedScopes"],
        doc["flow"]["requestedScopes"]
    );
    let run_doc = read_json(&out.join("run.json"));
    assert_eq!(
        run_doc["flowScopesFrom"],
        "the grant scope-minimization observed"
    );
    let positive = read_json(&out.join("artifacts/scope-minimization/positive.json"));
    assert_eq!(
        positive["transcript"]["observation"]["authorizedScopes"],
        serde_json::json!(["mcp"])
    );
    for case in doc["cases"].as_array().unwrap() {
        assert_eq!(
            case["wrongReasonMutant"]["observedReasonCode"],
            "MCP_RES_OAUTH_EARLY_SYNTAX_REJECTION"
        );
    }
    no_credential_material(&out);
}

#[test]
fn each_subject_defect_fails_exactly_the_checks_it_concerns() {
    let cases: &[(&str, &[&str], (&str, &str))] = &[
        (
            "accept-wrong-audience",
            &["access-token-audience", "wrong-resource-token-rejection"],
            ("access-token-audience", "/negative/observedOutcome"),
        ),
        // The negatives of pass-through and storage are expired tokens.
        (
            "accept-expired",
            &["token-passthrough-prohibited", "token-storage-omission"],
            ("token-passthrough-prohibited", "/negative/observedOutcome"),
        ),
        (
            "token-passthrough",
            &["token-passthrough-prohibited"],
            (
                "token-passthrough-prohibited",
                "/positive/observedReasonCode",
            ),
        ),
        (
            "log-token",
            &["token-storage-omission"],
            ("token-storage-omission", "/positive/observedReasonCode"),
        ),
        // A token kept in a file (in /tmp, never on the subject's streams)
        // is found in the sandbox's upper layer.
        (
            "store-token",
            &["token-storage-omission"],
            ("token-storage-omission", "/positive/observedReasonCode"),
        ),
        (
            "fixture:ignore-missing-resource",
            &["authorization-request-resource"],
            (
                "authorization-request-resource",
                "/negative/observedOutcome",
            ),
        ),
        (
            "fixture:ignore-verifier",
            &["pkce-s256"],
            ("pkce-s256", "/negative/observedOutcome"),
        ),
        (
            "fixture:accept-plain-pkce",
            &["pkce-downgrade-refused"],
            ("pkce-downgrade-refused", "/negative/observedOutcome"),
        ),
        (
            "fixture:prefix-redirect-uri",
            &["exact-redirect-uri"],
            ("exact-redirect-uri", "/negative/observedOutcome"),
        ),
        (
            "fixture:unbound-code",
            &["authorization-code-binding"],
            ("authorization-code-binding", "/negative/observedOutcome"),
        ),
        (
            "fixture:no-rotation",
            &["refresh-token-rotation-when-claimed"],
            (
                "refresh-token-rotation-when-claimed",
                "/negative/observedOutcome",
            ),
        ),
        (
            "fixture:issue-for-any-resource",
            &["token-request-resource"],
            ("token-request-resource", "/negative/observedOutcome"),
        ),
        (
            "fixture:drop-state",
            &["state-binding"],
            ("state-binding", "/positive/observedReasonCode"),
        ),
        (
            "fixture:ignore-cimd-client-id",
            &["cimd-identity"],
            ("cimd-identity", "/negative/observedOutcome"),
        ),
        (
            "accept-wrong-issuer",
            &["issuer-binding"],
            ("issuer-binding", "/negative/observedOutcome"),
        ),
        // The metadata names 192.0.2.1 first: the runner refuses it.
        (
            "off-origin-metadata",
            &[
                "protected-resource-metadata-discovery",
                "authorization-server-metadata",
                "ssrf-resistant-metadata-resolution",
            ],
            (
                "ssrf-resistant-metadata-resolution",
                "/positive/observedOutcome",
            ),
        ),
        (
            "fixture:wrong-iss-in-response",
            &["mix-up-resistance"],
            ("mix-up-resistance", "/positive/observedOutcome"),
        ),
        (
            "fixture:off-origin-token-endpoint",
            &["token-endpoint-identity"],
            ("token-endpoint-identity", "/positive/observedOutcome"),
        ),
        // The fixture follows the client document's redirect: the
        // negative's client is granted.
        (
            "fixture:follow-cimd-redirects",
            &["bounded-redirects"],
            ("bounded-redirects", "/negative/observedOutcome"),
        ),
        (
            "fixture:unrecorded-cimd-policy",
            &["cimd-trust-policy-recorded"],
            ("cimd-trust-policy-recorded", "/positive/observedReasonCode"),
        ),
        // The response goes to the registered default port, not the
        // runner's ephemeral listener.
        (
            "fixture:fixed-loopback-port",
            &["loopback-redirect-collision"],
            ("loopback-redirect-collision", "/positive/observedOutcome"),
        ),
        (
            "fixture:consent-not-client-bound",
            &["proxy-consent-client-binding"],
            ("proxy-consent-client-binding", "/negative/observedOutcome"),
        ),
        (
            "ignore-scope",
            &["scope-minimization"],
            ("scope-minimization", "/negative/observedOutcome"),
        ),
        // Every refusal echoes the token; only the check of it fails (and
        // `privacy.authorizationErrorsSanitized`, tested below).
        (
            "echo-token-in-error",
            &["sanitized-authorization-errors"],
            (
                "sanitized-authorization-errors",
                "/negative/observedReasonCode",
            ),
        ),
        (
            "no-www-authenticate",
            &["protected-resource-metadata-discovery"],
            (
                "protected-resource-metadata-discovery",
                "/negative/observedReasonCode",
            ),
        ),
    ];
    for (defect, failing, (check, tail)) in cases {
        let index = CHECKS
            .iter()
            .position(|c| c == check)
            .expect("a check of the profile");
        let pointer = &format!("/cases/{index}{tail}");
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("eval");
        let o = run(&out, &[defect]);
        assert_eq!(o.status.code(), Some(1), "{defect}: {}", output_text(&o));
        for (id, verdict) in verdicts(&out) {
            let expected = if failing.contains(&id.as_str()) {
                "FAIL"
            } else {
                "PASS"
            };
            assert_eq!(verdict, expected, "{defect}: {id}");
        }
        let f = findings(&out);
        assert!(
            f.iter().any(|(_, p)| p == pointer),
            "{defect}: no finding at {pointer}: {f:?}"
        );
        no_credential_material(&out);
    }
}

#[test]
fn an_echoed_token_is_found_before_redaction_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let o = run(&out, &["echo-token-in-error"]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let doc = read_json(&out.join("evaluation.json"));
    assert_eq!(doc["privacy"]["authorizationErrorsSanitized"], false);
    let f = findings(&out);
    assert!(
        f.contains(&(
            "MCP_RES_OAUTH_UNSANITIZED_ERROR".to_string(),
            "/privacy/authorizationErrorsSanitized".to_string()
        )),
        "{f:?}"
    );
    let cleanup = read_json(&out.join("artifacts/cleanup.json"));
    assert!(cleanup["subjectRefusalsEchoingTheToken"].as_u64().unwrap() > 0);
    let negative = read_json(&out.join("artifacts/sanitized-authorization-errors/negative.json"));
    assert_eq!(
        negative["observedReasonCode"],
        "MCP_RES_OAUTH_ERROR_ECHOES_TOKEN"
    );
    assert_eq!(negative["transcript"]["observation"]["leaked"], "token");
    // The subject's answer is recorded with the token replaced.
    let text = negative["transcript"]["transcript"].to_string();
    assert!(text.contains("presentedToken"), "{text}");
    assert!(text.contains("<synthetic-bearer>"), "{text}");
    no_credential_material(&out);
}

#[test]
fn a_subject_without_a_scope_requirement_leaves_scope_minimization_not_observed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let o = run_scoped(&out, &[], false);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    for (id, verdict) in verdicts(&out) {
        let expected = if id == "scope-minimization" {
            "NOT_OBSERVED"
        } else {
            "PASS"
        };
        assert_eq!(verdict, expected, "{id}");
    }
    let doc = read_json(&out.join("evaluation.json"));
    assert!(
        doc["cases"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["id"] != "scope-minimization")
    );
    let run_doc = read_json(&out.join("run.json"));
    assert!(
        run_doc["flowScopesFrom"]
            .as_str()
            .unwrap()
            .starts_with("no grant observed")
    );
    no_credential_material(&out);
}
