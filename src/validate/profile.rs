//! Protocol-profile evaluations (`mcp-res.profile-evaluation/0.2.0`, MCPRES-PROFILE-001/002).
//!
//! Rule order (the reference order; the first finding is the primary diagnostic): the closed
//! schema; a usable registry; the profile registered by id and version; the protocol revision
//! covered by that profile; the manifest digest; the evaluation digest; the claimed check set;
//! the remote-target review; each check's positive then negative-control observation; cleanup;
//! the derived result (FAIL when an observation has a finding, else INCOMPLETE with a fixture
//! observation, else PASS: spec/profiles.md, rule 11). Later rules still run after an earlier one fails, except where a failure
//! leaves nothing to compare against (schema, registry, unknown profile).

use serde_json::{Value, json};

use crate::diag::codes as c;
use crate::diag::{Finding, Report};
use crate::json::canonical::{self, cmp_utf16};
use crate::model::profile::{Check, CheckObservation, ProfileEvaluation};
use crate::model::vocab::{ClaimScope, Outcome, ProbeOutcome, TargetKind};
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
    // The schema held, so the typed view reads; a failure here would be a model bug, and is
    // reported rather than trusted.
    let ev = match ProfileEvaluation::view(doc) {
        Ok(ev) => ev,
        Err(e) => {
            return Report::from_findings(
                vec![Finding::new(
                    c::PROFILE_SCHEMA_INVALID,
                    "",
                    format!("schema-valid but unreadable as a profile evaluation: {e}"),
                )],
                Vec::new(),
                None,
            );
        }
    };
    let id = ev.profile.id;
    let version = ev.profile.version;
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
    let findings = rules(doc, &ev, profile);
    let mut report = Report::from_findings(findings, Vec::new(), None);
    if report.valid {
        let experimental: Vec<Value> = sorted(check_ids(&ev))
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
            .with_extra("result", json!(ev.derived_result()))
            .with_extra("profileStatus", json!(profile.status.as_str()))
            .with_extra("claimScope", json!(ev.scope.claim))
            .with_extra("scoredAsReleased", json!(profile.scored_as_released()));
        if !experimental.is_empty() {
            report = report.with_extra("unscoredExperimentalChecks", Value::Array(experimental));
        }
    }
    report
}

fn check_ids(ev: &ProfileEvaluation<'_>) -> Vec<String> {
    ev.checks.iter().map(|c| c.id.to_owned()).collect()
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

fn rules(doc: &Value, ev: &ProfileEvaluation<'_>, profile: &Profile) -> Vec<Finding> {
    let mut findings = Vec::new();
    let revision = ev.profile.protocol_revision.as_str();
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
    if ev.profile.manifest_sha256 != profile.manifest_sha256 {
        findings.push(Finding::new(
            c::PROFILE_MANIFEST_DIGEST_MISMATCH,
            "/profile/manifestSha256",
            format!(
                "the registered {} manifest has canonical digest {}",
                profile.id, profile.manifest_sha256
            ),
        ));
    }
    // The digest is over the document exactly as written, never over the typed view.
    let digest = evaluation_digest(doc).unwrap_or_default();
    if ev.evaluation_sha256 != digest {
        findings.push(Finding::new(
            c::PROFILE_DIGEST_MISMATCH,
            "/evaluationSha256",
            format!("the evaluation's canonical digest without evaluationSha256 is {digest}"),
        ));
    }
    if let Some(message) = coverage_problem(ev, profile, revision) {
        findings.push(Finding::new(
            c::PROFILE_COVERAGE_MISMATCH,
            "/scope/claimedCheckIds",
            message,
        ));
    }
    let scope = &ev.scope;
    if scope.target_kind == TargetKind::RemoteHttp {
        let allowlist = scope.allowlist_sha256.is_some_and(|a| !a.is_empty());
        let reviewed = scope.reviewed_target_sha256.unwrap_or_default();
        let problem = if !scope.remote_opt_in {
            Some("remoteOptIn is false")
        } else if !allowlist {
            Some("no allowlistSha256 is recorded")
        } else if reviewed.is_empty() {
            Some("no reviewedTargetSha256 is recorded")
        } else if reviewed != scope.target_sha256 {
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
    let mut observation_failed = false;
    for (i, check) in ev.checks.iter().enumerate() {
        let found = check_findings(check, i);
        observation_failed |= !found.is_empty();
        findings.extend(found);
    }
    if ev.cleanup.required && !ev.cleanup.observed {
        findings.push(Finding::new(
            c::PROFILE_CLEANUP_INCOMPLETE,
            "/cleanup/observed",
            "cleanup is required but was not observed",
        ));
    }
    let derived = if observation_failed {
        Outcome::Fail
    } else {
        ev.derived_result()
    };
    let claimed = ev.result;
    if claimed != derived {
        let fixture = derived == Outcome::Incomplete;
        let code = if fixture && claimed == Outcome::Pass {
            c::PROFILE_TEST_FIXTURE_OVERCLAIM
        } else {
            c::PROFILE_RESULT_MISMATCH
        };
        let why = match derived {
            Outcome::Fail => "an observation did not show what its check expects",
            Outcome::Incomplete => "a TEST_FIXTURE observation forces INCOMPLETE",
            Outcome::Pass => "every observation is a runtime or sanitized official one",
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
fn coverage_problem(
    ev: &ProfileEvaluation<'_>,
    profile: &Profile,
    revision: &str,
) -> Option<String> {
    let claimed = sorted(
        ev.scope
            .claimed_check_ids
            .iter()
            .map(|id| (*id).to_owned())
            .collect(),
    );
    let observed = sorted(check_ids(ev));
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
    if ev.scope.claim == ClaimScope::FullProfile {
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

/// The findings of one check's observations (positive, then negative control), with
/// pointers under `/checks/{index}`; empty when both show what the check expects.
pub fn check_findings(check: &Check<'_>, index: usize) -> Vec<Finding> {
    [
        ("positive", &check.positive, false),
        ("negativeControl", &check.negative_control, true),
    ]
    .into_iter()
    .filter_map(|(branch, obs, negative)| {
        observation_finding(
            obs,
            negative,
            check.id,
            &format!("/checks/{index}/{branch}"),
        )
    })
    .collect()
}

fn observation_finding(
    obs: &CheckObservation<'_>,
    negative: bool,
    id: &str,
    pointer: &str,
) -> Option<Finding> {
    let which = if negative {
        "negative control"
    } else {
        "positive observation"
    };
    if !obs.property_reached {
        return Some(Finding::new(
            c::PROFILE_PROPERTY_NOT_REACHED,
            format!("{pointer}/propertyReached"),
            format!("check {id}: the {which} did not reach the property"),
        ));
    }
    let expected = obs.expected_outcome;
    let observed = obs.observed_outcome;
    if observed == ProbeOutcome::NotObserved || observed != expected {
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
    let expected = obs.expected_reason_code;
    let observed = obs.observed_reason_code;
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
