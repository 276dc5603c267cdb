//! What the OAuth-boundary runner observed of the Python `mcp` SDK resource
//! server (tests/subjects/py_oauth_subject.py), per check, shared by
//! tests/oauth_python_subject.rs (a fresh run) and tests/oauth_bundles.rs
//! (the committed evaluation in bundles/oauth/python-sdk/). Why each row is
//! what it is: bundles/oauth/README.md.
#![allow(dead_code)]

use serde_json::Value;

/// The per-case finding `mcpres validate` reports for a check: its code and
/// the pointer suffix under `/cases/<i>`.
pub type CaseFinding = (&'static str, &'static str);

/// (check id, verdict in run.json, reason in run.json (`None`: the check's own
/// `_ACCEPTED` code), the validator's finding for the case).
pub type Row = (
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<CaseFinding>,
);

const UNNAMED: &str = "MCP_RES_OAUTH_OTHER_REFUSAL";
/// Every refusal of a presented token is the SDK's one 401: the negative
/// control's reason cannot be told from any other.
const WRONG_REASON: Option<CaseFinding> =
    Some(("MCP_RES_OAUTH_WRONG_REASON", "negative/observedReasonCode"));

pub const PYTHON_SDK: &[Row] = &[
    (
        "protected-resource-metadata-discovery",
        "NOT_OBSERVED",
        Some("MCP_RES_WRONG_REASON_MUTANT_SURVIVED"),
        Some((
            "MCP_RES_OAUTH_WRONG_REASON_CONTROL_MISSING",
            "wrongReasonMutant",
        )),
    ),
    ("authorization-server-metadata", "PASS", None, None),
    ("issuer-binding", "FAIL", Some(UNNAMED), WRONG_REASON),
    ("authorization-request-resource", "PASS", None, None),
    ("token-request-resource", "PASS", None, None),
    ("access-token-audience", "FAIL", Some(UNNAMED), WRONG_REASON),
    (
        "wrong-resource-token-rejection",
        "FAIL",
        Some(UNNAMED),
        WRONG_REASON,
    ),
    (
        "token-passthrough-prohibited",
        "FAIL",
        Some(UNNAMED),
        WRONG_REASON,
    ),
    ("pkce-s256", "PASS", None, None),
    ("pkce-downgrade-refused", "PASS", None, None),
    ("exact-redirect-uri", "PASS", None, None),
    ("state-binding", "PASS", None, None),
    ("mix-up-resistance", "PASS", None, None),
    ("authorization-code-binding", "PASS", None, None),
    ("token-endpoint-identity", "PASS", None, None),
    ("cimd-identity", "PASS", None, None),
    ("cimd-trust-policy-recorded", "PASS", None, None),
    // The scope-less token is refused as RFC 6750 says (403,
    // `error="insufficient_scope"`), which names the reason; but the
    // malformed-token mutant gets the same 401 as every other bad token, so
    // it cannot be shown refused early: the standard's wrong-reason control
    // is missing and the runner does not claim the check.
    (
        "scope-minimization",
        "NOT_OBSERVED",
        Some("MCP_RES_OAUTH_WRONG_REASON_CONTROL_MISSING"),
        Some((
            "MCP_RES_OAUTH_WRONG_REASON_CONTROL_MISSING",
            "wrongReasonMutant",
        )),
    ),
    (
        "token-storage-omission",
        "FAIL",
        Some(UNNAMED),
        WRONG_REASON,
    ),
    (
        "sanitized-authorization-errors",
        "FAIL",
        Some(UNNAMED),
        WRONG_REASON,
    ),
    ("bounded-redirects", "PASS", None, None),
    ("ssrf-resistant-metadata-resolution", "PASS", None, None),
    ("loopback-redirect-collision", "PASS", None, None),
    ("proxy-consent-client-binding", "PASS", None, None),
    ("refresh-token-rotation-when-claimed", "PASS", None, None),
];

/// The reason code of a check's branch, as the validator derives it.
pub fn own(id: &str, branch: &str) -> String {
    format!(
        "MCP_RES_OAUTH_{}_{branch}",
        id.replace('-', "_").to_uppercase()
    )
}

/// `rows` checked against run.json: the same checks in the same order, each
/// with its verdict and reason. A check the runner gained since the table
/// was written fails here by name: record what the subject does with it.
pub fn assert_verdicts(run: &Value, rows: &[Row], what: &str) {
    let checks = run["checks"].as_array().expect("run.json checks");
    let ids: Vec<&str> = checks.iter().map(|c| c["id"].as_str().unwrap()).collect();
    let expected: Vec<&str> = rows.iter().map(|r| r.0).collect();
    assert_eq!(
        ids, expected,
        "{what}: the checks observed are not the ones this table records; a check added to the runner needs its row here (and in bundles/oauth/README.md)"
    );
    for (c, (id, verdict, reason, _)) in checks.iter().zip(rows) {
        let reason = reason.map_or_else(|| own(id, "ACCEPTED"), str::to_string);
        assert_eq!(
            (
                c["verdict"].as_str().unwrap(),
                c["reason"].as_str().unwrap()
            ),
            (*verdict, reason.as_str()),
            "{what}: {id}: {}",
            c["detail"]
        );
    }
}

/// The findings `mcpres validate` must report for an evaluation whose cases
/// are `rows`: the coverage mismatch while the runner lacks checks
/// (`partial`), then each row's case finding at its case's index.
pub fn expected_findings(evaluation: &Value, rows: &[Row], partial: bool) -> Vec<(String, String)> {
    let cases = evaluation["cases"].as_array().expect("cases");
    let mut out = Vec::new();
    if partial {
        out.push((
            "MCP_RES_OAUTH_COVERAGE_MISMATCH".to_string(),
            "/cases".to_string(),
        ));
    }
    for (i, case) in cases.iter().enumerate() {
        let id = case["id"].as_str().unwrap();
        let row = rows
            .iter()
            .find(|r| r.0 == id)
            .unwrap_or_else(|| panic!("case {id} has no row"));
        if let Some((code, suffix)) = row.3 {
            out.push((code.to_string(), format!("/cases/{i}/{suffix}")));
        }
    }
    out
}

/// Every finding of `mcpres validate --format json FILE` as (code, pointer).
pub fn findings_of(report: &Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_string(),
                f["pointer"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
