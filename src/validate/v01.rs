//! MCP-RES v0.1 conformance bundles (`mcp-res.conformance-bundle/0.1.0`), judged with the
//! v0.1 rules: a v0.1 bundle stays a v0.1 bundle; it is never re-read with v0.2 semantics.
//!
//! The order is the v0.1 kit's: the pre-schema rules (clean control, negative control,
//! bounded retry, cleanup, manifest publication, subject identity, machine-specific identity,
//! size limits, forbidden text), then the v0.1 schema, then the semantic rules (profile,
//! evidence class, causal links, side-effect safety, regression, digests, statement binding).
//!
//! The pre-schema rules look at a document whose shape is not known yet. They follow
//! JavaScript's reading of such data (truthiness, `>` with numeric conversion, `undefined`
//! for a missing member) so that a malformed bundle gets the same primary diagnostic as the
//! reference; where the reference would throw on an impossible shape (for example
//! `operations` that is not an array) the check that was running reports its diagnostic.
//!
//! All failing rules of the phase that fails are recorded, in order; the first is the
//! primary diagnostic. A later phase runs only when the earlier ones found nothing, as in
//! the reference.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use crate::diag::codes as c;
use crate::diag::{Finding, Report};
use crate::json::canonical;

/// The v0.1 profiles the v0.1 kit knows, with the subject types each accepts.
const PROFILES: [(&str, &str, &[&str]); 3] = [
    ("mcp-res/server-tool-call/v1", "1.0.0", &["MCP_SERVER"]),
    (
        "mcp-res/client-config-source/v1",
        "1.0.0",
        &["MCP_CLIENT", "TEST_HARNESS"],
    ),
    (
        "mcp-res/agent-tool-recovery/v1",
        "1.0.0",
        &["AGENT_RUNTIME", "ADAPTER"],
    ),
];

/// Serialized-size limit of a whole v0.1 bundle (bytes of its compact JSON text).
pub const MAX_BUNDLE_BYTES: f64 = 1_048_576.0;
const MAX_INPUT_BYTES: f64 = 16_777_216.0;
const MAX_STRING_BYTES: f64 = 1_048_576.0;

pub const EVIDENCE_PATH: &str = "evidence-envelope.json";
pub const STATEMENT_PATH: &str = "conformance-statement.json";

/// Validate a v0.1 conformance bundle.
pub fn validate_bundle(doc: &Value) -> Report {
    let findings = pre_schema(doc);
    if !findings.is_empty() {
        return Report::from_findings(findings, Vec::new(), None)
            .with_extra("standardVersion", Value::from("0.1.0"));
    }
    let schema_errors = crate::schema::v01::validate(doc);
    if !schema_errors.is_empty() {
        let findings = schema_errors
            .iter()
            .map(|e| {
                Finding::new(
                    c::SCHEMA_INVALID,
                    e.instance_path.clone(),
                    format!("v0.1 schema: {} ({})", e.message, e.keyword),
                )
            })
            .collect();
        return Report::from_findings(findings, schema_errors, None)
            .with_extra("standardVersion", Value::from("0.1.0"));
    }
    let findings = semantic(doc);
    let class = findings
        .is_empty()
        .then(|| doc["evidence"]["evidenceClass"].as_str().map(str::to_owned))
        .flatten();
    Report::from_findings(findings, Vec::new(), class)
        .with_extra("standardVersion", Value::from("0.1.0"))
}

/// `true` when the v0.1 rules accept `doc`.
pub fn is_valid(doc: &Value) -> bool {
    validate_bundle(doc).valid
}

// ---------------------------------------------------------------------------------------
// JavaScript readings of untyped data.

/// JavaScript truthiness (`None` is `undefined`).
fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// Member access as JavaScript does it: only objects have members here (JSON arrays,
/// strings and numbers have none of the names the rules read).
fn member<'a>(value: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    value
        .and_then(Value::as_object)
        .and_then(|map| map.get(key))
}

/// JavaScript's whitespace, as `String.prototype.trim` and `\s` define it.
fn is_js_space(ch: char) -> bool {
    matches!(
        ch,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// `ToNumber` of a string: decimal, `Infinity`, or `0x`/`0o`/`0b` integers; `NaN` otherwise.
fn string_to_number(s: &str) -> f64 {
    let t = s.trim_matches(is_js_space);
    if t.is_empty() {
        return 0.0;
    }
    for (prefix, radix) in [
        ("0x", 16),
        ("0X", 16),
        ("0o", 8),
        ("0O", 8),
        ("0b", 2),
        ("0B", 2),
    ] {
        if let Some(digits) = t.strip_prefix(prefix) {
            if digits.is_empty() || !digits.chars().all(|d| d.is_digit(radix)) {
                return f64::NAN;
            }
            return digits.chars().fold(0.0, |acc, d| {
                acc * f64::from(radix) + f64::from(d.to_digit(radix).unwrap_or(0))
            });
        }
    }
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    if unsigned == "Infinity" {
        return if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    static DECIMAL: OnceLock<Regex> = OnceLock::new();
    let decimal = DECIMAL.get_or_init(|| {
        Regex::new(r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
            .expect("decimal literal pattern")
    });
    if decimal.is_match(t) {
        t.parse::<f64>().unwrap_or(f64::NAN)
    } else {
        f64::NAN
    }
}

/// `ToString` of an array element as `Array.prototype.join` uses it.
fn join_piece(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(join_piece).collect::<Vec<_>>().join(","),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// `ToNumber` of a JSON value (`None` is `undefined`, giving `NaN`).
fn to_number(value: Option<&Value>) -> f64 {
    match value {
        None => f64::NAN,
        Some(Value::Null) => 0.0,
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Value::String(s)) => string_to_number(s),
        Some(array @ Value::Array(_)) => string_to_number(&join_piece(array)),
        Some(Value::Object(_)) => f64::NAN,
    }
}

/// JavaScript `value > limit` for a numeric `limit`.
fn greater(value: Option<&Value>, limit: f64) -> bool {
    to_number(value) > limit
}

fn is_str(value: Option<&Value>, expected: &str) -> bool {
    value.and_then(Value::as_str) == Some(expected)
}

// ---------------------------------------------------------------------------------------
// Pre-schema rules.

fn pre_schema(doc: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let evidence = member(Some(doc), "evidence");
    let operations = member(evidence, "operations").and_then(Value::as_array);
    let kind_is = |op: &&Value, kind: &str| is_str(member(Some(op), "kind"), kind);

    if !operations.is_some_and(|ops| ops.iter().any(|op| kind_is(&op, "CLEAN_CONTROL"))) {
        out.push(Finding::new(
            c::V01_MISSING_CLEAN_CONTROL,
            "/evidence/operations",
            "no operation has kind CLEAN_CONTROL",
        ));
    }
    let negative = operations.and_then(|ops| ops.iter().find(|op| kind_is(op, "NEGATIVE_CONTROL")));
    match negative {
        None => out.push(Finding::new(
            c::VACUOUS_NEGATIVE_CONTROL,
            "/evidence/operations",
            "no operation has kind NEGATIVE_CONTROL",
        )),
        Some(op) => {
            if !is_str(member(Some(op), "outcome"), "EXPECTED_FAILURE")
                || !truthy(member(Some(op), "faultId"))
            {
                out.push(Finding::new(
                    c::VACUOUS_NEGATIVE_CONTROL,
                    "/evidence/operations",
                    "the first NEGATIVE_CONTROL operation is not an EXPECTED_FAILURE caused by a named fault",
                ));
            }
        }
    }
    if let Some(policies) = member(evidence, "recoveryPolicies").and_then(Value::as_array) {
        for (index, policy) in policies.iter().enumerate() {
            let limit = member(Some(policy), "retryLimit");
            if matches!(limit, Some(Value::Null)) || is_str(limit, "unbounded") {
                out.push(Finding::new(
                    c::V01_UNBOUNDED_RETRY,
                    format!("/evidence/recoveryPolicies/{index}/retryLimit"),
                    "the recovery policy sets no retry limit",
                ));
                break;
            }
        }
    }
    let cleanup = member(evidence, "cleanup");
    if !truthy(cleanup)
        || member(cleanup, "complete") != Some(&Value::Bool(true))
        || greater(member(cleanup, "childProcessesRemaining"), 0.0)
        || greater(member(cleanup, "listenersRemaining"), 0.0)
        || is_str(member(cleanup, "targetState"), "UNAPPROVED_CHANGE")
    {
        out.push(Finding::new(
            c::V01_CLEANUP_INCOMPLETE,
            "/evidence/cleanup",
            "cleanup is missing or incomplete, leaves processes or listeners, or changed the target without approval",
        ));
    }
    let integrity = member(Some(doc), "integrity");
    if !truthy(integrity)
        || member(integrity, "complete") != Some(&Value::Bool(true))
        || !is_str(member(integrity, "publication"), "MANIFEST_LAST")
    {
        out.push(Finding::new(
            c::V01_PARTIAL_MANIFEST,
            "/integrity",
            "the integrity manifest is missing, incomplete, or not published MANIFEST_LAST",
        ));
    }
    let subject = member(evidence, "subject");
    if !truthy(member(subject, "name"))
        || !truthy(member(subject, "version"))
        || !truthy(member(member(subject, "artifact"), "sha256"))
    {
        out.push(Finding::new(
            c::V01_SUBJECT_AMBIGUOUS,
            "/evidence/subject",
            "the subject lacks a name, a version or an artifact SHA-256",
        ));
    } else if let Some(key) = ["absolutePath", "workingDirectory", "hostName"]
        .into_iter()
        .find(|key| member(subject, key).is_some())
    {
        out.push(Finding::new(
            c::V01_NONDETERMINISTIC_IDENTITY,
            format!("/evidence/subject/{key}"),
            format!("the subject carries the machine-specific field {key}"),
        ));
    }
    let limits = member(evidence, "limits");
    if serialized_len(doc) as f64 > MAX_BUNDLE_BYTES
        || greater(member(limits, "inputBytes"), MAX_INPUT_BYTES)
        || greater(member(limits, "stringBytes"), MAX_STRING_BYTES)
    {
        out.push(Finding::new(
            c::V01_EVIDENCE_TOO_LARGE,
            "",
            "the bundle exceeds 1 MiB serialized, or its declared input or string limits exceed the v0.1 maximums",
        ));
    }
    if let Some(code) = forbidden_text(doc) {
        let message = if code == c::V01_AUTH_HEADER_FORBIDDEN {
            "the bundle contains a raw Authorization header value"
        } else {
            "a Base64 run in the bundle decodes to a credential (bearer header, API key or token)"
        };
        out.push(Finding::new(code, "", message));
    }
    out
}

/// Byte length of the compact JSON text of `doc` (what `JSON.stringify` produces; key order
/// does not change the length).
fn serialized_len(doc: &Value) -> usize {
    serde_json::to_string(doc)
        .map(|s| s.len())
        .unwrap_or(usize::MAX)
}

/// JavaScript `\s`, as a regex class body.
const JS_SPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

fn auth_header_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(&format!(
            r"(?i)authorization[{s}]*[:=][{s}]*(?:bearer|basic)[{s}]+[a-z0-9._~+/-]+",
            s = JS_SPACE
        ))
        .expect("auth header pattern")
    })
}

fn base64_run_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"[A-Za-z0-9+/]{24,}={0,2}").expect("base64 run pattern"))
}

fn decoded_secret_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(&format!(
            r"(?i)(?:authorization[{s}]*:[{s}]*bearer|api[_-]?key[{s}]*[:=]|token[{s}]*[:=])",
            s = JS_SPACE
        ))
        .expect("decoded secret pattern")
    })
}

/// Lenient Base64 decoding as Node's `Buffer.from(text, "base64")` does it for the runs the
/// scanner extracts: decode 6-bit groups until the first `=`, dropping leftover bits.
pub fn decode_base64_lenient(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buffer: u32 = 0;
    let mut bits = 0u32;
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => continue,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    out
}

/// The forbidden-text scan of the v0.1 kit over the bundle's compact JSON text: a raw
/// Authorization header first, then Base64 runs that decode to a credential.
fn forbidden_text(doc: &Value) -> Option<crate::diag::Code> {
    let text = serde_json::to_string(doc).ok()?;
    if auth_header_pattern().is_match(&text) {
        return Some(c::V01_AUTH_HEADER_FORBIDDEN);
    }
    for run in base64_run_pattern().find_iter(&text) {
        let decoded = decode_base64_lenient(run.as_str());
        let decoded = String::from_utf8_lossy(&decoded);
        if decoded_secret_pattern().is_match(&decoded) {
            return Some(c::V01_SECRET_DETECTED);
        }
    }
    None
}

// ---------------------------------------------------------------------------------------
// Semantic rules (the document is schema-valid here).

fn semantic(doc: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let evidence = &doc["evidence"];
    let statement = &doc["statement"];
    let integrity = &doc["integrity"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();

    let profile_id = text(&evidence["profile"]["id"]);
    let profile_version = text(&evidence["profile"]["version"]);
    let subject_type = text(&evidence["subject"]["subjectType"]);
    let supported = PROFILES.iter().any(|(id, version, types)| {
        *id == profile_id && *version == profile_version && types.contains(&subject_type.as_str())
    });
    if !supported {
        out.push(Finding::new(
            c::V01_PROFILE_UNSUPPORTED,
            "/evidence/profile",
            format!(
                "profile {profile_id}@{profile_version} is not a v0.1 profile for subject type {subject_type}"
            ),
        ));
    }

    let artifacts: &[Value] = integrity["artifacts"].as_array().map_or(&[], Vec::as_slice);
    let find_artifact = |path: &str| artifacts.iter().find(|a| a["path"].as_str() == Some(path));
    let execution = &evidence["execution"];
    let flag = |name: &str| execution[name].as_bool().unwrap_or(false);
    let source = evidence.get("sourceEvidence");
    let source_name = source.and_then(|s| s["name"].as_str()).unwrap_or_default();
    let source_artifact = find_artifact(&format!("source-evidence/{source_name}"));
    let has_source = source.is_some_and(|s| {
        s["kind"] == "SANITIZED_PROJECTION"
            && source_artifact.is_some_and(|a| {
                a["sha256"] == s["projectionSha256"] && a["bytes"] == s["projectionBytes"]
            })
    });
    let class = text(&evidence["evidenceClass"]);
    let class_supported = match class.as_str() {
        "GENUINE_RUNTIME" => {
            flag("actualRuntime") && flag("protocolMessagesExchanged") && has_source
        }
        "FIXTURE_BACKED_PROTOCOL" => flag("protocolMessagesExchanged") && flag("fixtureUsed"),
        "FIXTURE_VERIFIED" => flag("fixtureUsed"),
        "INSTALLATION_VERIFIED" => flag("installationExecuted"),
        "DOCUMENTED_ONLY" => ![
            "actualRuntime",
            "protocolMessagesExchanged",
            "fixtureUsed",
            "installationExecuted",
            "regressionExecuted",
        ]
        .into_iter()
        .any(flag),
        _ => false,
    };
    if !class_supported {
        out.push(Finding::new(
            c::EVIDENCE_CLASS_PROMOTION,
            "/evidence/evidenceClass",
            format!("the execution record does not support evidence class {class}"),
        ));
    }

    causal_links(evidence, &mut out);

    let policies: &[Value] = evidence["recoveryPolicies"]
        .as_array()
        .map_or(&[], Vec::as_slice);
    for (index, policy) in policies.iter().enumerate() {
        let retries = policy["retryLimit"].as_f64().unwrap_or(0.0);
        let model = policy["sideEffectModel"].as_str().unwrap_or_default();
        if retries > 0.0
            && matches!(model, "SIDE_EFFECTING" | "UNKNOWN")
            && policy["safetyMechanism"].is_null()
        {
            out.push(Finding::new(
                c::V01_SIDE_EFFECT_RETRY_UNSAFE,
                format!("/evidence/recoveryPolicies/{index}"),
                format!("retries of a {model} operation have no safety mechanism"),
            ));
            break;
        }
    }

    if let Some(regression) = evidence.get("regression")
        && regression["provided"] == true
    {
        let all = [
            "generatedWithoutExecution",
            "containedOutput",
            "deterministicDependencies",
            "brokenConditionFails",
            "fixedConditionPasses",
            "secretScanPassed",
        ]
        .into_iter()
        .all(|name| regression[name] == true);
        if !all || !flag("regressionExecuted") {
            out.push(Finding::new(
                c::V01_REGRESSION_INVALID,
                "/evidence/regression",
                "the provided regression was not generated, contained, deterministic, proven against the broken and fixed conditions, scanned and executed",
            ));
        }
    }

    digests(evidence, statement, integrity, artifacts, &mut out);
    statement_binding(evidence, statement, &mut out);
    out
}

fn causal_links(evidence: &Value, out: &mut Vec<Finding>) {
    let empty = Vec::new();
    let operations = evidence["operations"].as_array().unwrap_or(&empty);
    let ids: HashSet<&str> = operations
        .iter()
        .filter_map(|op| op["operationId"].as_str())
        .collect();
    // Later entries win, as in a JavaScript Map built from the list.
    let faults: HashMap<&str, &Value> = evidence["faults"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(|f| f["id"].as_str().map(|id| (id, f)))
        .collect();
    let policies: HashSet<&str> = evidence["recoveryPolicies"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(|p| p["id"].as_str())
        .collect();
    let run_id = evidence["run"]["id"].as_str().unwrap_or_default();
    for (index, op) in operations.iter().enumerate() {
        let pointer = format!("/evidence/operations/{index}");
        let operation_id = op["operationId"].as_str().unwrap_or_default();
        let problem = if op["runId"].as_str() != Some(run_id) {
            Some("belongs to another run".to_owned())
        } else if let Some(parent) = op["parentOperationId"].as_str().filter(|p| !p.is_empty())
            && !ids.contains(parent)
        {
            Some(format!(
                "names a parent operation {parent} that does not exist"
            ))
        } else if let Some(fault_id) = op["faultId"].as_str().filter(|f| !f.is_empty())
            && faults
                .get(fault_id)
                .is_none_or(|f| f["targetOperationId"].as_str() != Some(operation_id))
        {
            Some(format!("names fault {fault_id}, which does not target it"))
        } else if let Some(policy) = op["recoveryPolicyId"].as_str().filter(|p| !p.is_empty())
            && !policies.contains(policy)
        {
            Some(format!(
                "names recovery policy {policy}, which does not exist"
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            out.push(Finding::new(
                c::CAUSAL_MISMATCH,
                pointer,
                format!("operation {operation_id} {problem}"),
            ));
            // The reference stops at the first broken link.
            break;
        }
    }
}

fn digests(
    evidence: &Value,
    statement: &Value,
    integrity: &Value,
    artifacts: &[Value],
    out: &mut Vec<Finding>,
) {
    let mut seen = HashSet::new();
    if let Some(duplicate) = artifacts
        .iter()
        .filter_map(|a| a["path"].as_str())
        .find(|path| !seen.insert(*path))
    {
        out.push(Finding::new(
            c::V01_PARTIAL_MANIFEST,
            "/integrity/artifacts",
            format!("the manifest lists {duplicate} more than once"),
        ));
        return;
    }
    let (evidence_hash, evidence_len) = match canonical::digest_and_len(evidence) {
        Ok(pair) => pair,
        Err(e) => {
            out.push(Finding::new(c::DIGEST_MISMATCH, "/evidence", e.to_string()));
            return;
        }
    };
    let (statement_hash, statement_len) = match canonical::digest_and_len(statement) {
        Ok(pair) => pair,
        Err(e) => {
            out.push(Finding::new(
                c::DIGEST_MISMATCH,
                "/statement",
                e.to_string(),
            ));
            return;
        }
    };
    let entry = |path: &str| {
        artifacts
            .iter()
            .position(|a| a["path"].as_str() == Some(path))
    };
    let mut problems: Vec<(String, String)> = Vec::new();
    if statement["evidenceSha256"].as_str() != Some(evidence_hash.as_str()) {
        problems.push((
            "/statement/evidenceSha256".into(),
            "statement.evidenceSha256 is not the SHA-256 of the canonical evidence".into(),
        ));
    }
    for (path, hash, len) in [
        (EVIDENCE_PATH, &evidence_hash, evidence_len),
        (STATEMENT_PATH, &statement_hash, statement_len),
    ] {
        match entry(path) {
            None => problems.push((
                "/integrity/artifacts".into(),
                format!("the manifest has no {path} entry"),
            )),
            Some(index) => {
                let artifact = &artifacts[index];
                if artifact["sha256"].as_str() != Some(hash.as_str())
                    || artifact["bytes"].as_u64() != Some(len as u64)
                {
                    problems.push((
                        format!("/integrity/artifacts/{index}"),
                        format!("the {path} entry does not give the canonical length and SHA-256"),
                    ));
                }
            }
        }
    }
    if integrity["bundleDigest"].as_str() != Some(super::core::bundle_digest(artifacts).as_str()) {
        problems.push((
            "/integrity/bundleDigest".into(),
            "bundleDigest is not the SHA-256 of the artifacts sorted by path".into(),
        ));
    }
    if let Some((pointer, message)) = problems.into_iter().next() {
        out.push(Finding::new(c::DIGEST_MISMATCH, pointer, message));
    }
}

fn statement_binding(evidence: &Value, statement: &Value, out: &mut Vec<Finding>) {
    let pairs: [(&str, &Value); 10] = [
        ("standardVersion", &evidence["standardVersion"]),
        ("profileId", &evidence["profile"]["id"]),
        ("profileVersion", &evidence["profile"]["version"]),
        ("subjectType", &evidence["subject"]["subjectType"]),
        ("subjectName", &evidence["subject"]["name"]),
        ("subjectVersion", &evidence["subject"]["version"]),
        ("evidenceClass", &evidence["evidenceClass"]),
        ("validatorName", &evidence["validator"]["name"]),
        ("validatorVersion", &evidence["validator"]["version"]),
        ("validatorSha256", &evidence["validator"]["sha256"]),
    ];
    if let Some((field, _)) = pairs
        .iter()
        .find(|(field, expected)| statement.get(*field) != Some(*expected))
    {
        out.push(Finding::new(
            c::CAUSAL_MISMATCH,
            format!("/statement/{field}"),
            format!("statement.{field} differs from the evidence it describes"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn javascript_number_conversion() {
        assert_eq!(to_number(Some(&json!("5"))), 5.0);
        assert_eq!(to_number(Some(&json!(" 0x10 "))), 16.0);
        assert_eq!(to_number(Some(&json!(""))), 0.0);
        assert!(to_number(Some(&json!("inf"))).is_nan());
        assert!(to_number(Some(&json!("1e"))).is_nan());
        assert_eq!(to_number(Some(&json!("-Infinity"))), f64::NEG_INFINITY);
        assert_eq!(to_number(Some(&json!([7]))), 7.0);
        assert_eq!(to_number(Some(&json!([]))), 0.0);
        assert!(to_number(Some(&json!([1, 2]))).is_nan());
        assert!(to_number(Some(&json!({}))).is_nan());
        assert!(to_number(None).is_nan());
        assert_eq!(to_number(Some(&json!(true))), 1.0);
        assert!(greater(Some(&json!("2")), 0.0));
        assert!(!greater(Some(&json!(null)), 0.0));
    }

    #[test]
    fn truthiness_follows_javascript() {
        for falsy in [json!(null), json!(false), json!(0), json!("")] {
            assert!(!truthy(Some(&falsy)), "{falsy}");
        }
        for value in [json!("0"), json!([]), json!({}), json!(-1), json!(true)] {
            assert!(truthy(Some(&value)), "{value}");
        }
        assert!(!truthy(None));
    }

    #[test]
    fn lenient_base64_matches_node_for_partial_groups() {
        // "token=abc" encoded, with and without padding; a 4k+1 run drops its last character.
        assert_eq!(decode_base64_lenient("dG9rZW49YWJj"), b"token=abc");
        assert_eq!(decode_base64_lenient("dG9rZW49YQ=="), b"token=a");
        assert_eq!(decode_base64_lenient("dG9rZW49YQ"), b"token=a");
        assert_eq!(decode_base64_lenient("dG9rZW49Y"), b"token=");
    }

    #[test]
    fn forbidden_text_scan() {
        let header = json!({"note": "Authorization: Bearer abc.def"});
        assert_eq!(forbidden_text(&header), Some(c::V01_AUTH_HEADER_FORBIDDEN));
        // "api_key=0123456789abcdef" in Base64.
        let encoded = json!({"blob": "YXBpX2tleT0wMTIzNDU2Nzg5YWJjZGVm"});
        assert_eq!(forbidden_text(&encoded), Some(c::V01_SECRET_DETECTED));
        let clean = json!({"blob": "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB"});
        assert_eq!(forbidden_text(&clean), None);
    }
}
