//! Protocol-profile evaluations (`mcp-res.profile-evaluation/0.2.0`, MCPRES-PROFILE-001/002).
//!
//! Rule order (the reference order; the first finding is the primary diagnostic): the closed
//! schema; a usable registry; the profile registered by id and version; the protocol revision
//! covered by that profile; the manifest digest; the evaluation digest; the claimed check set;
//! the remote-target review; each check's positive then negative-control observation; cleanup;
//! the derived result. Later rules still run after an earlier one fails, except where a failure
//! leaves nothing to compare against (schema, registry, unknown profile).

use serde_json::{Value, json};

use crate::diag::codes as c;
use crate::diag::{Finding, Report};
use crate::json::canonical::{self, cmp_utf16};
use crate::profiles::{Profile, Registry, RegistryError, has_repeat, sorted};
use crate::schema::{self, SchemaKind};

/// Validate a profile evaluation against the built-in registry.
pub fn validate_profile_evaluation(doc: &Value) -> Report {
    validate_with(doc, Registry::builtin())
}

/// Validate a profile evaluation against a given registry (or the reason none is usable).
pub fn validate_with(doc: &Value, registry: Result<&Registry, &RegistryError>) -> Report {
    let schema_errors = schema::validate(SchemaKind::ProfileEvaluation, doc);
    if !schema_errors.is_empty() {
        let findings = schema_errors
            .iter()
            .map(|e| {
                Finding::new(
                    c::PROFILE_SCHEMA_INVALID,
                    e.instance_path.clone(),
                    format!("schema: {} ({})", e.message, e.keyword),
                )
            })
            .collect();
        return Report::from_findings(findings, schema_errors, None);
    }
    let registry = match registry {
        Ok(r) => r,
        Err(e) => {
            return Report::from_findings(
                vec![Finding::new(
                    c::PROFILE_MANIFEST_INVALID,
                    "",
                    format!("the profile registry is unusable: {e}"),
                )],
                Vec::new(),
                None,
            );
        }
    };
    let reference = &doc["profile"];
    let id = str_at(reference, "id");
    let version = str_at(reference, "version");
    let Some(profile) = registry.get(id).filter(|p| p.version == version) else {
        let message = match registry.get(id) {
            Some(p) => format!(
                "profile {id} is registered at version {}, not {version}",
                p.version
            ),
            None => format!("no profile {id} is registered"),
        };
        return Report::from_findings(
            vec![Finding::new(
                c::PROFILE_MANIFEST_UNKNOWN,
                "/profile",
                message,
            )],
            Vec::new(),
            None,
        );
    };
    let findings = rules(doc, profile);
    let mut report = Report::from_findings(findings, Vec::new(), None);
    if report.valid {
        let experimental: Vec<Value> = sorted(check_ids(doc))
            .into_iter()
            .filter(|id| {
                matches!(
                    profile.check_kind(id),
                    Some(crate::profiles::CheckKind::Experimental)
                )
            })
            .map(Value::String)
            .collect();
        report = report
            .with_extra("result", json!(derived_result(doc)))
            .with_extra("profileStatus", json!(profile.status.as_str()))
            .with_extra("claimScope", doc["scope"]["claim"].clone())
            .with_extra("scoredAsReleased", json!(profile.scored_as_released()));
        if !experimental.is_empty() {
            report = report.with_extra("unscoredExperimentalChecks", Value::Array(experimental));
        }
    }
    report
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn check_ids(doc: &Value) -> Vec<String> {
    doc["checks"]
        .as_array()
        .map(|a| a.iter().map(|c| str_at(c, "id").to_owned()).collect())
        .unwrap_or_default()
}

/// `INCOMPLETE` when any observation comes from a test fixture, otherwise `PASS`.
fn derived_result(doc: &Value) -> &'static str {
    if fixture_observations(doc) {
        "INCOMPLETE"
    } else {
        "PASS"
    }
}

fn fixture_observations(doc: &Value) -> bool {
    doc["checks"].as_array().is_some_and(|checks| {
        checks.iter().any(|c| {
            str_at(&c["positive"], "source") == "TEST_FIXTURE"
                || str_at(&c["negativeControl"], "source") == "TEST_FIXTURE"
        })
    })
}

/// The digest an evaluation seals itself with: canonical JSON without `evaluationSha256`.
pub fn evaluation_digest(doc: &Value) -> Option<String> {
    canonical::to_vec_without_key(doc, "evaluationSha256")
        .ok()
        .map(|b| canonical::sha256_hex(&b))
}

/// Set `evaluationSha256` to the evaluation's own digest.
pub fn seal(doc: &mut Value) {
    if let Some(digest) = evaluation_digest(doc) {
        doc["evaluationSha256"] = Value::String(digest);
    }
}

fn rules(doc: &Value, profile: &Profile) -> Vec<Finding> {
    let mut findings = Vec::new();
    let reference = &doc["profile"];
    let revision = str_at(reference, "protocolRevision");
    if !profile.supports_revision(revision) {
        findings.push(Finding::new(
            c::PROFILE_REVISION_UNSUPPORTED,
            "/profile/protocolRevision",
            format!(
                "{} covers protocol revisions {}, not {revision}; revisions are never equivalent",
                profile.id,
                profile.protocol_revisions.join(", ")
            ),
        ));
    }
    if str_at(reference, "manifestSha256") != profile.manifest_sha256 {
        findings.push(Finding::new(
            c::PROFILE_MANIFEST_DIGEST_MISMATCH,
            "/profile/manifestSha256",
            format!(
                "the registered {} manifest has canonical digest {}",
                profile.id, profile.manifest_sha256
            ),
        ));
    }
    let digest = evaluation_digest(doc).unwrap_or_default();
    if str_at(doc, "evaluationSha256") != digest {
        findings.push(Finding::new(
            c::PROFILE_DIGEST_MISMATCH,
            "/evaluationSha256",
            format!("the evaluation's canonical digest without evaluationSha256 is {digest}"),
        ));
    }
    if let Some(message) = coverage_problem(doc, profile, revision) {
        findings.push(Finding::new(
            c::PROFILE_COVERAGE_MISMATCH,
            "/scope/claimedCheckIds",
            message,
        ));
    }
    let scope = &doc["scope"];
    if str_at(scope, "targetKind") == "REMOTE_HTTP" {
        let opted_in = scope["remoteOptIn"] == Value::Bool(true);
        let allowlist = !str_at(scope, "allowlistSha256").is_empty();
        let reviewed = str_at(scope, "reviewedTargetSha256");
        let problem = if !opted_in {
            Some("remoteOptIn is false")
        } else if !allowlist {
            Some("no allowlistSha256 is recorded")
        } else if reviewed.is_empty() {
            Some("no reviewedTargetSha256 is recorded")
        } else if reviewed != str_at(scope, "targetSha256") {
            Some("reviewedTargetSha256 differs from the executed targetSha256")
        } else {
            None
        };
        if let Some(problem) = problem {
            findings.push(Finding::new(
                c::PROFILE_REMOTE_TARGET_UNREVIEWED,
                "/scope",
                format!("REMOTE_HTTP target is denied by default: {problem}"),
            ));
        }
    }
    if let Some(checks) = doc["checks"].as_array() {
        for (i, check) in checks.iter().enumerate() {
            let id = str_at(check, "id");
            for (branch, negative) in [("positive", false), ("negativeControl", true)] {
                let pointer = format!("/checks/{i}/{branch}");
                if let Some(f) = observation_finding(&check[branch], negative, id, &pointer) {
                    findings.push(f);
                }
            }
        }
    }
    let cleanup = &doc["cleanup"];
    if cleanup["required"] == Value::Bool(true) && cleanup["observed"] != Value::Bool(true) {
        findings.push(Finding::new(
            c::PROFILE_CLEANUP_INCOMPLETE,
            "/cleanup/observed",
            "cleanup is required but was not observed",
        ));
    }
    let derived = derived_result(doc);
    let claimed = str_at(doc, "result");
    if claimed != derived {
        let fixture = derived == "INCOMPLETE";
        let code = if fixture && claimed == "PASS" {
            c::PROFILE_TEST_FIXTURE_OVERCLAIM
        } else {
            c::PROFILE_RESULT_MISMATCH
        };
        let why = if fixture {
            "a TEST_FIXTURE observation forces INCOMPLETE"
        } else {
            "every observation is a runtime or sanitized official one"
        };
        findings.push(Finding::new(
            code,
            "/result",
            format!("result is {claimed}, but the derived result is {derived} ({why})"),
        ));
    }
    findings
}

/// Why the claimed check set does not fit the evaluated checks and the profile, if it does not.
fn coverage_problem(doc: &Value, profile: &Profile, revision: &str) -> Option<String> {
    let claimed = sorted(
        doc["scope"]["claimedCheckIds"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
    );
    let observed = sorted(check_ids(doc));
    if has_repeat(&observed) {
        return Some("a check id is evaluated more than once".into());
    }
    if claimed != observed {
        let missing: Vec<&str> = claimed
            .iter()
            .filter(|id| !observed.contains(id))
            .map(String::as_str)
            .collect();
        let extra: Vec<&str> = observed
            .iter()
            .filter(|id| !claimed.contains(id))
            .map(String::as_str)
            .collect();
        return Some(format!(
            "claimed and evaluated checks differ (claimed, not evaluated: [{}]; evaluated, not claimed: [{}])",
            missing.join(", "),
            extra.join(", ")
        ));
    }
    let registered = profile.registered_check_ids();
    if let Some(unknown) = claimed.iter().find(|id| !registered.contains(id)) {
        return Some(format!("{unknown} is not a check of {}", profile.id));
    }
    if str_at(&doc["scope"], "claim") == "FULL_PROFILE" {
        let applicable = profile.applicable_check_ids(revision);
        if claimed != applicable {
            let missing: Vec<&str> = applicable
                .iter()
                .filter(|id| !claimed.contains(id))
                .map(String::as_str)
                .collect();
            let extra: Vec<&str> = claimed
                .iter()
                .filter(|id| !applicable.contains(id))
                .map(String::as_str)
                .collect();
            return Some(format!(
                "FULL_PROFILE at {revision} must cover exactly the {} required and applicable conditional checks (missing: [{}]; not applicable: [{}])",
                applicable.len(),
                missing.join(", "),
                extra.join(", ")
            ));
        }
    }
    debug_assert!(claimed.windows(2).all(|w| cmp_utf16(&w[0], &w[1]).is_lt()));
    None
}

fn observation_finding(obs: &Value, negative: bool, id: &str, pointer: &str) -> Option<Finding> {
    let which = if negative {
        "negative control"
    } else {
        "positive observation"
    };
    if obs["propertyReached"] != Value::Bool(true) {
        return Some(Finding::new(
            c::PROFILE_PROPERTY_NOT_REACHED,
            format!("{pointer}/propertyReached"),
            format!("check {id}: the {which} did not reach the property"),
        ));
    }
    let expected = str_at(obs, "expectedOutcome");
    let observed = str_at(obs, "observedOutcome");
    if observed == "NOT_OBSERVED" || observed != expected {
        let code = if negative {
            c::PROFILE_NEGATIVE_CONTROL_MISSING
        } else {
            c::PROFILE_OUTCOME_MISMATCH
        };
        return Some(Finding::new(
            code,
            format!("{pointer}/observedOutcome"),
            format!("check {id}: the {which} expected {expected} but observed {observed}"),
        ));
    }
    let expected = str_at(obs, "expectedReasonCode");
    let observed = str_at(obs, "observedReasonCode");
    if expected != observed {
        return Some(Finding::new(
            c::PROFILE_WRONG_REASON,
            format!("{pointer}/observedReasonCode"),
            format!(
                "check {id}: the {which} ended with {observed}, not the expected {expected}; an outcome for another reason earns no credit"
            ),
        ));
    }
    None
}
