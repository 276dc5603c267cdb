#![cfg(feature = "server")]
//! `mcpres oauth run` against a third-party subject: a Python `mcp` SDK
//! resource server using the SDK's own authorization support
//! (tests/subjects/py_oauth_subject.py: `AuthSettings` with this server's
//! resource URL, required scope `mcp`, `validate_token_resource`, and a
//! `TokenVerifier` checking the fixture's JWTs against its JWKS), with the
//! loopback authorization fixture in process.
//!
//! What is asserted is what the subject did (tests/oauth_expect/mod.rs has
//! the per-check table, bundles/oauth/README.md the reasons): every positive
//! is accepted, the RFC 9728 metadata is right, and every refusal of a
//! presented token is the SDK's one `401 invalid_token "Authentication
//! required"`, so no negative control can be bound to its reason and a
//! malformed token is answered exactly like a missing or a wrong one.
//!
//! Needs `MCPRES_PY_MCP_PYTHON` (a python with `mcp==2.3.0`, see .ci/run);
//! without it the test prints why and skips.

mod oauth_expect;
mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::{mcpres, output_text, read_json, walk};

/// The SDK's answer to every refused token (`RequireAuthMiddleware`).
const SDK_REFUSAL_BODY: &str =
    r#"{"error": "invalid_token", "error_description": "Authentication required"}"#;
const SDK_CHALLENGE: &str = r#"Bearer error="invalid_token", error_description="Authentication required", resource_metadata=""#;

fn python() -> Option<PathBuf> {
    match std::env::var_os("MCPRES_PY_MCP_PYTHON") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            eprintln!(
                "MCPRES_PY_MCP_PYTHON is not set (a python with mcp==2.3.0, see .ci/run): the Python SDK OAuth subject test is skipped"
            );
            None
        }
    }
}

fn subject_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/py_oauth_subject.py")
}

/// The bytes the subject sent back in an observation's transcript, as text.
fn received(artifact: &Value) -> String {
    artifact["transcript"]["transcript"]["events"]
        .as_array()
        .expect("transcript events")
        .iter()
        .filter(|e| e["stream"] == "received")
        .filter_map(|e| e["text"].as_str())
        .collect()
}

fn role(out: &Path, id: &str, role: &str) -> Value {
    read_json(&out.join(format!("artifacts/{id}/{role}.json")))
}

/// The reference Python validator's `oauth` mode on `evaluation`, when the
/// conformance kit is configured.
fn reference_python(evaluation: &Path) -> Option<Value> {
    let script = std::env::var_os("MCPRES_REFERENCE_PY_VALIDATOR").map(PathBuf::from)?;
    let corpus = support::reference_corpus_dir()?.join("v0.2.0");
    let python = std::env::var("MCPRES_REFERENCE_PY").unwrap_or_else(|_| "python3".into());
    let out = std::process::Command::new(python)
        .arg(script)
        .arg("oauth")
        .arg(evaluation)
        .arg("--schemas")
        .arg(corpus.join("schemas"))
        .arg("--profiles")
        .arg(corpus.join("profiles"))
        .output()
        .expect("run the reference Python validator");
    Some(serde_json::from_slice(&out.stdout).expect("the reference validator prints JSON"))
}

#[test]
fn the_python_sdk_resource_server_accepts_every_positive_but_names_no_refusal_reason() {
    let Some(python) = python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let o = mcpres(&[
        "oauth".as_ref(),
        "run".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
        // The interpreter and the SDK take seconds to import on a busy
        // machine; the default (10 s) is for a native subject.
        "--startup-timeout-ms".as_ref(),
        "60000".as_ref(),
        "--".as_ref(),
        python.as_os_str(),
        subject_script().as_os_str(),
        "--port".as_ref(),
        "{port}".as_ref(),
        "--issuer".as_ref(),
        "{issuer}".as_ref(),
        "--scope".as_ref(),
        "{scope}".as_ref(),
    ]);
    // Written, and invalid: exit 1.
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let run = read_json(&out.join("run.json"));
    oauth_expect::assert_verdicts(&run, oauth_expect::PYTHON_SDK, "Python SDK subject");
    let evaluation = read_json(&out.join("evaluation.json"));
    let partial = !run["notImplemented"].as_array().unwrap().is_empty();
    let v = support::mcpres(&[
        "validate".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        out.join("evaluation.json").as_os_str(),
    ]);
    assert_eq!(v.status.code(), Some(1), "{}", output_text(&v));
    let report: Value = serde_json::from_slice(&v.stdout).expect("validate --format json");
    assert_eq!(
        oauth_expect::findings_of(&report),
        oauth_expect::expected_findings(&evaluation, oauth_expect::PYTHON_SDK, partial)
    );

    // The subject is who it says, started by the runner.
    assert_eq!(evaluation["subject"]["name"], "mcpres-py-oauth");
    assert_eq!(evaluation["environment"]["runtime"], "python");
    let issuer = evaluation["flow"]["authorizationServerIssuer"]
        .as_str()
        .unwrap()
        .to_string();

    // RFC 9728: the SDK serves metadata naming this resource and exactly the
    // fixture's issuer (no trailing slash added), and a request without a
    // token is refused with a challenge pointing at it.
    let id = "protected-resource-metadata-discovery";
    let p = role(&out, id, "positive");
    assert_eq!(
        p["transcript"]["observation"],
        serde_json::json!({"authorizationServers": [issuer], "namesResource": true})
    );
    let n = role(&out, id, "negative");
    assert_eq!(
        n["transcript"]["observation"]["challengePointsAtMetadata"],
        true
    );
    // ... but that challenge carries `error="invalid_token"` although the
    // request had no credential at all (RFC 6750 section 3.1 says a server
    // should include no error code then), and the body is the same as for a
    // bearer that is not a JWT at all: the mutant meets the negative's answer.
    let m = role(&out, id, "mutant");
    let (n_text, m_text) = (received(&n), received(&m));
    assert!(
        n_text.contains(&format!("www-authenticate: {SDK_CHALLENGE}")),
        "{n_text}"
    );
    assert!(n_text.ends_with(SDK_REFUSAL_BODY), "{n_text}");
    assert!(m_text.ends_with(SDK_REFUSAL_BODY), "{m_text}");
    assert_eq!(m["observedReasonCode"], own(id, "REJECTED"));

    // The runtime checks: the positive accepted; the negative (another
    // issuer, another audience, a grant for another resource, an expired
    // token) and the mutant (claims not base64url) both refused with the
    // SDK's one answer, named by no reason.
    for id in [
        "issuer-binding",
        "access-token-audience",
        "wrong-resource-token-rejection",
        "token-passthrough-prohibited",
        "token-storage-omission",
    ] {
        let p = role(&out, id, "positive");
        assert_eq!(p["observedOutcome"], "ACCEPT", "{id}");
        assert_eq!(p["observedReasonCode"], own(id, "ACCEPTED"), "{id}");
        for r in ["negative", "mutant"] {
            let a = role(&out, id, r);
            assert_eq!(a["observedOutcome"], "REJECT", "{id} {r}");
            assert_eq!(
                a["observedReasonCode"], "MCP_RES_OAUTH_OTHER_REFUSAL",
                "{id} {r}"
            );
            let text = received(&a);
            assert!(text.starts_with("HTTP/1.1 401 "), "{id} {r}: {text}");
            assert!(
                text.contains(&format!("www-authenticate: {SDK_CHALLENGE}")),
                "{id} {r}: {text}"
            );
            assert!(text.ends_with(SDK_REFUSAL_BODY), "{id} {r}: {text}");
        }
    }
    // What those two checks are about held all the same: no token was
    // forwarded to the issuer and none appears in what the subject wrote;
    // they fail on the reason binding alone.
    for r in ["positive", "negative", "mutant"] {
        let a = role(&out, "token-passthrough-prohibited", r);
        assert_eq!(
            a["transcript"]["observation"]["passThroughRequestsSeenByIssuer"],
            0
        );
        let a = role(&out, "token-storage-omission", r);
        assert_eq!(
            a["transcript"]["observation"]["tokenOccurrencesInSubjectOutput"],
            0
        );
    }

    // Loopback only, released, sanitized, no credential kept; the fixture's
    // cases make the derived result INCOMPLETE.
    assert_eq!(evaluation["result"], "INCOMPLETE");
    assert_eq!(evaluation["fixture"]["externalNetworkRequests"], 0);
    assert_eq!(evaluation["fixture"]["loopbackOnly"], true);
    assert_eq!(evaluation["cleanup"]["listenerClosed"], true);
    assert_eq!(evaluation["cleanup"]["redirectListenerReleased"], true);
    assert_eq!(evaluation["privacy"]["authorizationErrorsSanitized"], true);
    for file in walk(&out) {
        let doc = read_json(&file);
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

    match reference_python(&out.join("evaluation.json")) {
        Some(r) => {
            assert_eq!(r["valid"], false, "{r}");
            assert_eq!(r["diagnostics"], report["diagnostics"], "{r}");
        }
        None => eprintln!(
            "reference Python validator not configured (MCPRES_REFERENCE_PY_VALIDATOR, MCPRES_REFERENCE_CORPUS): cross-check skipped"
        ),
    }
}

fn own(id: &str, branch: &str) -> String {
    oauth_expect::own(id, branch)
}
