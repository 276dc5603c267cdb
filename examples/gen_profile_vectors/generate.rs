//! Deterministic producers of profile and OAuth-boundary evaluations, and the test vectors
//! built from them (`testdata/profile/`, `testdata/oauth/`, written by the
//! `gen_profile_vectors` example, whose module this is; `tests/profile_vectors.rs` includes
//! the same file to check the committed vectors against it).
//!
//! Every evaluation is built from a registered manifest, with synthetic artifact digests (the
//! SHA-256 of a label), results derived the way the validator derives them, and the evaluation
//! digest sealed last. Invalid vectors are *deep*: the fault is made in the content and the
//! evaluation is sealed again, so exactly one rule fails (the digest vectors break one digest
//! after sealing instead). A few vectors need a registry other than the built-in one (the
//! "registry unusable" and OAuth revision rules cannot fail with the shipped manifests); they
//! name a [`RegistryVariant`].

use serde_json::{Value, json};

use mcpres::json::canonical::{self, cmp_utf16, sha256_hex};
use mcpres::profiles::{OAUTH_BOUNDARY_ID, Profile, Registry, RegistryError};
use mcpres::validate::codes as c;
use mcpres::validate::oauth::reason_code;
use mcpres::validate::profile::seal;
use mcpres::validate::{Report, oauth, profile};

/// Which registry a vector is judged against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistryVariant {
    /// The manifests mcpres ships.
    Builtin,
    /// The shipped manifests, with `experimentalProvenance` removed from the DPoP manifest.
    ExperimentalWithoutProvenance,
    /// The shipped manifests without the OAuth-boundary manifest.
    WithoutOAuthBoundary,
    /// The shipped manifests, with the OAuth-boundary manifest covering `2026-07-28` only.
    OAuthBoundaryLatestOnly,
}

impl RegistryVariant {
    /// The name recorded in the vector catalogs.
    pub fn name(self) -> &'static str {
        match self {
            RegistryVariant::Builtin => "builtin",
            RegistryVariant::ExperimentalWithoutProvenance => "experimental-without-provenance",
            RegistryVariant::WithoutOAuthBoundary => "without-oauth-boundary",
            RegistryVariant::OAuthBoundaryLatestOnly => "oauth-boundary-latest-only",
        }
    }

    /// Build the registry this variant names.
    pub fn registry(self) -> Result<Registry, RegistryError> {
        let mut sources: Vec<(String, Vec<u8>)> = Vec::new();
        for (name, bytes) in Registry::builtin_sources() {
            let mut manifest: Value =
                serde_json::from_slice(bytes).expect("shipped manifests are JSON");
            match (self, name) {
                (RegistryVariant::ExperimentalWithoutProvenance, "dpop-v1.json") => {
                    manifest
                        .as_object_mut()
                        .expect("object")
                        .remove("experimentalProvenance");
                }
                (RegistryVariant::WithoutOAuthBoundary, "oauth-boundary-v1.json") => continue,
                (RegistryVariant::OAuthBoundaryLatestOnly, "oauth-boundary-v1.json") => {
                    manifest["protocolRevisions"] = json!(["2026-07-28"]);
                }
                _ => {
                    sources.push((name.to_owned(), bytes.to_vec()));
                    continue;
                }
            }
            sources.push((name.to_owned(), file_bytes(&manifest)));
        }
        Registry::from_sources(sources.iter().map(|(n, b)| (n.clone(), b.as_slice())))
    }
}

/// The family a vector belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorFamily {
    Profile,
    OAuth,
}

/// One generated vector.
#[derive(Debug, Clone)]
pub struct Vector {
    pub family: VectorFamily,
    pub id: &'static str,
    pub description: &'static str,
    pub registry: RegistryVariant,
    /// Every finding code the validator must report, primary first (empty: valid).
    pub expected_findings: Vec<&'static str>,
    /// For valid vectors: the derived result.
    pub result: Option<&'static str>,
    pub doc: Value,
}

impl Vector {
    /// Where the vector lives under its family folder.
    pub fn path(&self) -> String {
        let kind = if self.expected_findings.is_empty() {
            "valid"
        } else {
            "invalid"
        };
        format!("{kind}/{}.json", self.id)
    }

    /// Validate the vector against its registry.
    pub fn validate(&self) -> Report {
        let registry = self.registry.registry();
        let registry = registry.as_ref();
        match self.family {
            VectorFamily::Profile => profile::validate_with(&self.doc, registry),
            VectorFamily::OAuth => oauth::validate_with(&self.doc, registry),
        }
    }

    /// `Ok` when the validator reports exactly the declared findings (and result).
    pub fn check(&self) -> Result<(), String> {
        let report = self.validate();
        let codes: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
        if codes != self.expected_findings {
            return Err(format!(
                "{}: expected {:?}, validator reports {:?}",
                self.id, self.expected_findings, codes
            ));
        }
        let result = report.extra.get("result").and_then(Value::as_str);
        if result != self.result {
            return Err(format!(
                "{}: expected result {:?}, validator derives {:?}",
                self.id, self.result, result
            ));
        }
        Ok(())
    }
}

/// Canonical JSON plus a trailing newline: the on-disk form of every generated file.
pub fn file_bytes(value: &Value) -> Vec<u8> {
    let mut bytes = canonical::to_vec(value).expect("generated values are canonical");
    bytes.push(b'\n');
    bytes
}

/// The catalog of a family's vectors.
pub fn catalog(vectors: &[Vector]) -> Value {
    let entries: Vec<Value> = vectors
        .iter()
        .map(|v| {
            json!({
                "id": v.id,
                "path": v.path(),
                "description": v.description,
                "registry": v.registry.name(),
                "expectedFindings": v.expected_findings,
                "result": v.result,
            })
        })
        .collect();
    // The label names this module's former place in the library; it stays as it was so that the
    // committed catalogs keep their bytes.
    json!({ "generator": "mcpres::profiles::generate", "vectors": entries })
}

fn artifact(label: &str) -> String {
    sha256_hex(format!("mcpres-generated-artifact:{label}").as_bytes())
}

fn builtin() -> &'static Registry {
    Registry::builtin().expect("the shipped registry is valid")
}

fn profile(id: &str) -> &'static Profile {
    builtin().get(id).expect("registered profile")
}

/// The reason code a generated profile observation carries.
pub fn profile_reason(check_id: &str, branch: &str) -> String {
    format!(
        "MCP_RES_{}_{branch}",
        check_id.replace('-', "_").to_uppercase()
    )
}

/// Where an evaluation's target runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    LocalStdio,
    LoopbackHttp,
    /// A remote HTTP target with opt-in, an allowlist and a reviewed target digest.
    ReviewedRemote,
}

/// A profile evaluation of `checks` under `profile`, sealed, with the derived result.
/// Checks named in `fixture` get a TEST_FIXTURE negative control.
pub fn profile_evaluation(
    profile: &Profile,
    revision: &str,
    claim: &str,
    checks: &[String],
    fixture: &[&str],
    target: Target,
) -> Value {
    let observation = |id: &str, negative: bool| {
        let (outcome, branch) = if negative {
            ("REJECT", "REJECTED")
        } else {
            ("ACCEPT", "ACCEPTED")
        };
        let source = if negative && fixture.contains(&id) {
            "TEST_FIXTURE"
        } else {
            "RUNTIME_PROBE"
        };
        let reason = profile_reason(id, branch);
        json!({
            "source": source,
            "propertyReached": true,
            "expectedOutcome": outcome,
            "observedOutcome": outcome,
            "expectedReasonCode": reason,
            "observedReasonCode": reason,
            "artifactSha256": artifact(&format!("{}:{revision}:{id}:{branch}", profile.id)),
        })
    };
    let target_kind = match target {
        Target::LocalStdio => "LOCAL_STDIO",
        Target::LoopbackHttp => "LOOPBACK_HTTP",
        Target::ReviewedRemote => "REMOTE_HTTP",
    };
    let target_sha = artifact(&format!("target:{target_kind}"));
    let mut scope = json!({
        "claim": claim,
        "claimedCheckIds": checks,
        "targetKind": target_kind,
        "targetSha256": target_sha,
        "remoteOptIn": target == Target::ReviewedRemote,
    });
    if target == Target::ReviewedRemote {
        scope["allowlistSha256"] = json!(artifact("reviewed-allowlist"));
        scope["reviewedTargetSha256"] = json!(target_sha);
    }
    let result = if fixture.is_empty() {
        "PASS"
    } else {
        "INCOMPLETE"
    };
    let mut doc = json!({
        "schemaVersion": "mcp-res.profile-evaluation/0.2.0",
        "subject": {
            "name": "lighthouse-notes-server",
            "implementationLanguage": "OTHER",
            "version": "0.3.1",
            "artifactSha256": artifact("subject:lighthouse-notes-server@0.3.1"),
        },
        "environment": { "platform": "linux", "runtimeName": "other", "runtimeVersion": "rust-1.95" },
        "profile": {
            "id": profile.id,
            "version": profile.version,
            "manifestSha256": profile.manifest_sha256,
            "protocolRevision": revision,
        },
        "scope": scope,
        "checks": checks
            .iter()
            .map(|id| json!({
                "id": id,
                "positive": observation(id, false),
                "negativeControl": observation(id, true),
            }))
            .collect::<Vec<_>>(),
        "cleanup": { "required": true, "observed": true, "observationSha256": artifact("cleanup") },
        "result": result,
        "evaluationSha256": "0".repeat(64),
    });
    seal(&mut doc);
    doc
}

fn full(id: &str, revision: &str, target: Target) -> Value {
    let p = profile(id);
    profile_evaluation(
        p,
        revision,
        "FULL_PROFILE",
        &p.applicable_check_ids(revision),
        &[],
        target,
    )
}

fn bounded(id: &str, revision: &str, checks: &[&str], fixture: &[&str]) -> Value {
    let checks: Vec<String> = checks.iter().map(|s| s.to_string()).collect();
    profile_evaluation(
        profile(id),
        revision,
        "BOUNDED_CHECK_SET",
        &checks,
        fixture,
        Target::LocalStdio,
    )
}

/// Apply `edit` and seal again: a deep fault.
fn deep(mut doc: Value, edit: impl FnOnce(&mut Value)) -> Value {
    edit(&mut doc);
    seal(&mut doc);
    doc
}

const STREAMABLE: &str = "mcp-res/streamable-http/v1";
const REVISION: &str = "mcp-res/protocol-revision/v1";
const STDIO: &str = "mcp-res/stdio-transport/v1";
const LATEST: &str = "2026-07-28";
const EARLIER: &str = "2025-11-25";

#[allow(clippy::too_many_arguments)]
fn vector(
    family: VectorFamily,
    id: &'static str,
    description: &'static str,
    registry: RegistryVariant,
    expected_findings: Vec<&'static str>,
    result: Option<&'static str>,
    doc: Value,
) -> Vector {
    Vector {
        family,
        id,
        description,
        registry,
        expected_findings,
        result,
        doc,
    }
}

fn pv(id: &'static str, description: &'static str, code: &'static str, doc: Value) -> Vector {
    vector(
        VectorFamily::Profile,
        id,
        description,
        RegistryVariant::Builtin,
        vec![code],
        None,
        doc,
    )
}

/// Every profile-evaluation vector: six valid ones and at least one per diagnostic code.
pub fn profile_vectors() -> Vec<Vector> {
    use RegistryVariant as R;
    use VectorFamily::Profile as F;
    let stdio_checks: Vec<&str> = profile(STDIO)
        .required_checks
        .iter()
        .take(3)
        .map(String::as_str)
        .collect();
    let cache = profile("mcp-res/cache-behavior/v1");
    let cache_checks = [
        cache.required_checks[0].as_str(),
        cache.experimental_checks[0].as_str(),
    ];
    let base = || full(STREAMABLE, LATEST, Target::LoopbackHttp);
    let mut v = vec![
        vector(
            F,
            "full-profile-pass",
            "FULL_PROFILE of streamable-http at 2026-07-28, every observation a runtime probe",
            R::Builtin,
            vec![],
            Some("PASS"),
            base(),
        ),
        vector(
            F,
            "full-profile-conditional-latest",
            "FULL_PROFILE of protocol-revision at 2026-07-28: the required checks and the four conditional checks of that revision",
            R::Builtin,
            vec![],
            Some("PASS"),
            full(REVISION, LATEST, Target::LocalStdio),
        ),
        vector(
            F,
            "full-profile-earlier-revision",
            "FULL_PROFILE of protocol-revision at 2025-11-25: required checks only, the 2026 conditional checks do not apply",
            R::Builtin,
            vec![],
            Some("PASS"),
            full(REVISION, EARLIER, Target::LocalStdio),
        ),
        vector(
            F,
            "bounded-fixture-incomplete",
            "BOUNDED_CHECK_SET of three stdio checks; one negative control comes from a test fixture, so the result is INCOMPLETE",
            R::Builtin,
            vec![],
            Some("INCOMPLETE"),
            bounded(STDIO, EARLIER, &stdio_checks, &stdio_checks[1..2]),
        ),
        vector(
            F,
            "remote-target-reviewed",
            "FULL_PROFILE of operational-resilience against a REMOTE_HTTP target with opt-in, allowlist and reviewed target digest",
            R::Builtin,
            vec![],
            Some("PASS"),
            full(
                "mcp-res/operational-resilience/v1",
                LATEST,
                Target::ReviewedRemote,
            ),
        ),
        vector(
            F,
            "experimental-dpop",
            "FULL_PROFILE of the EXPERIMENTAL DPoP profile: valid, reported as EXPERIMENTAL and not scored as released behaviour",
            R::Builtin,
            vec![],
            Some("PASS"),
            full("mcp-res/dpop/v1", LATEST, Target::LoopbackHttp),
        ),
        vector(
            F,
            "bounded-with-experimental-check",
            "BOUNDED_CHECK_SET of cache-behavior naming its experimental check: accepted, listed as unscored",
            R::Builtin,
            vec![],
            Some("PASS"),
            bounded("mcp-res/cache-behavior/v1", LATEST, &cache_checks, &[]),
        ),
    ];
    v.push(pv(
        "schema-observed-outcome",
        "A positive observation with observedOutcome MAYBE",
        c::PROFILE_SCHEMA_INVALID,
        deep(base(), |d| {
            d["checks"][0]["positive"]["observedOutcome"] = json!("MAYBE")
        }),
    ));
    v.push(vector(
        F,
        "registry-experimental-without-provenance",
        "A valid evaluation judged against a registry whose EXPERIMENTAL DPoP manifest lacks experimentalProvenance",
        R::ExperimentalWithoutProvenance,
        vec![c::PROFILE_MANIFEST_INVALID],
        None,
        base(),
    ));
    v.push(pv(
        "unknown-profile",
        "profile.id names a profile that is not registered",
        c::PROFILE_MANIFEST_UNKNOWN,
        deep(base(), |d| {
            d["profile"]["id"] = json!("mcp-res/session-replay/v1")
        }),
    ));
    let async_checks: Vec<String> = profile("mcp-res/async-operation/v1")
        .required_checks
        .iter()
        .take(2)
        .cloned()
        .collect();
    v.push(pv(
        "revision-unsupported",
        "async-operation (2026-07-28 only) evaluated at 2025-11-25",
        c::PROFILE_REVISION_UNSUPPORTED,
        profile_evaluation(
            profile("mcp-res/async-operation/v1"),
            EARLIER,
            "BOUNDED_CHECK_SET",
            &async_checks,
            &[],
            Target::LocalStdio,
        ),
    ));
    v.push(pv(
        "manifest-digest-stale",
        "profile.manifestSha256 is the digest of an earlier draft of the manifest",
        c::PROFILE_MANIFEST_DIGEST_MISMATCH,
        deep(base(), |d| {
            let mut draft = profile(STREAMABLE).manifest.clone();
            draft["compositionBoundary"] = json!("draft");
            d["profile"]["manifestSha256"] = json!(canonical::digest(&draft).expect("digest"));
        }),
    ));
    let mut edited = base();
    edited["checks"][0]["positive"]["artifactSha256"] = json!(artifact("edited after sealing"));
    v.push(pv(
        "evaluation-digest-stale",
        "An artifact digest edited after the evaluation was sealed",
        c::PROFILE_DIGEST_MISMATCH,
        edited,
    ));
    v.push(pv(
        "full-profile-missing-check",
        "FULL_PROFILE that leaves out one required check (claimed and evaluated)",
        c::PROFILE_COVERAGE_MISMATCH,
        deep(base(), |d| {
            d["checks"].as_array_mut().expect("checks").remove(0);
            d["scope"]["claimedCheckIds"]
                .as_array_mut()
                .expect("claimed")
                .remove(0);
        }),
    ));
    v.push(pv(
        "claimed-not-evaluated",
        "BOUNDED_CHECK_SET claiming a check that was not evaluated",
        c::PROFILE_COVERAGE_MISMATCH,
        deep(bounded(STDIO, EARLIER, &stdio_checks[..2], &[]), |d| {
            d["scope"]["claimedCheckIds"] = json!(stdio_checks);
        }),
    ));
    v.push(pv(
        "full-profile-earlier-revision-with-latest-conditionals",
        "FULL_PROFILE of protocol-revision at 2025-11-25 that claims the 2026-only conditional checks: revisions are not equivalent",
        c::PROFILE_COVERAGE_MISMATCH,
        {
            let p = profile(REVISION);
            profile_evaluation(
                p,
                EARLIER,
                "FULL_PROFILE",
                &p.applicable_check_ids(LATEST),
                &[],
                Target::LocalStdio,
            )
        },
    ));
    v.push(pv(
        "experimental-check-in-full-profile",
        "FULL_PROFILE of cache-behavior that also claims its experimental check",
        c::PROFILE_COVERAGE_MISMATCH,
        {
            let mut checks = cache.applicable_check_ids(LATEST);
            checks.push(cache.experimental_checks[0].clone());
            checks.sort_by(|a, b| cmp_utf16(a, b));
            profile_evaluation(
                cache,
                LATEST,
                "FULL_PROFILE",
                &checks,
                &[],
                Target::LocalStdio,
            )
        },
    ));
    v.push(pv(
        "remote-target-digest-differs",
        "REMOTE_HTTP target whose reviewed target digest differs from the executed one",
        c::PROFILE_REMOTE_TARGET_UNREVIEWED,
        deep(
            full(
                "mcp-res/operational-resilience/v1",
                LATEST,
                Target::ReviewedRemote,
            ),
            |d| d["scope"]["reviewedTargetSha256"] = json!(artifact("another target")),
        ),
    ));
    v.push(pv(
        "remote-target-no-opt-in",
        "REMOTE_HTTP target without remoteOptIn",
        c::PROFILE_REMOTE_TARGET_UNREVIEWED,
        deep(
            full(
                "mcp-res/operational-resilience/v1",
                LATEST,
                Target::ReviewedRemote,
            ),
            |d| d["scope"]["remoteOptIn"] = json!(false),
        ),
    ));
    v.push(pv(
        "negative-not-reached",
        "A negative control that did not reach its property (result FAIL, as derived)",
        c::PROFILE_PROPERTY_NOT_REACHED,
        deep(base(), |d| {
            d["checks"][2]["negativeControl"]["propertyReached"] = json!(false);
            d["result"] = json!("FAIL");
        }),
    ));
    v.push(pv(
        "positive-rejected",
        "A positive observation that expected ACCEPT and observed REJECT (result FAIL, as derived)",
        c::PROFILE_OUTCOME_MISMATCH,
        deep(base(), |d| {
            d["checks"][1]["positive"]["observedOutcome"] = json!("REJECT");
            d["result"] = json!("FAIL");
        }),
    ));
    v.push(pv(
        "negative-not-observed",
        "A negative control whose outcome was NOT_OBSERVED (result FAIL, as derived)",
        c::PROFILE_NEGATIVE_CONTROL_MISSING,
        deep(base(), |d| {
            d["checks"][3]["negativeControl"]["observedOutcome"] = json!("NOT_OBSERVED");
            d["result"] = json!("FAIL");
        }),
    ));
    v.push(pv(
        "negative-earlier-rejection",
        "A negative control rejected by an earlier parser guard, not at the property (result FAIL, as derived)",
        c::PROFILE_WRONG_REASON,
        deep(base(), |d| {
            d["checks"][4]["negativeControl"]["observedReasonCode"] =
                json!("MCP_RES_EARLY_PARSE_REJECTION");
            d["result"] = json!("FAIL");
        }),
    ));
    v.push(pv(
        "cleanup-not-observed",
        "Cleanup required but not observed",
        c::PROFILE_CLEANUP_INCOMPLETE,
        deep(base(), |d| d["cleanup"]["observed"] = json!(false)),
    ));
    v.push(pv(
        "fixture-claimed-pass",
        "A TEST_FIXTURE negative control with result PASS",
        c::PROFILE_TEST_FIXTURE_OVERCLAIM,
        deep(
            bounded(STDIO, EARLIER, &stdio_checks, &stdio_checks[..1]),
            |d| d["result"] = json!("PASS"),
        ),
    ));
    v.push(pv(
        "runtime-claimed-incomplete",
        "Runtime observations only, result INCOMPLETE",
        c::PROFILE_RESULT_MISMATCH,
        deep(base(), |d| d["result"] = json!("INCOMPLETE")),
    ));
    v.push(pv(
        "result-fail",
        "Result FAIL while every observation shows what its check expects: FAIL is derived only from a failing observation",
        c::PROFILE_RESULT_MISMATCH,
        deep(base(), |d| d["result"] = json!("FAIL")),
    ));
    v.push(vector(
        F,
        "several-faults",
        "Three independent faults (wrong reason, cleanup, result): every finding is listed, the first is primary",
        R::Builtin,
        vec![
            c::PROFILE_WRONG_REASON,
            c::PROFILE_CLEANUP_INCOMPLETE,
            c::PROFILE_RESULT_MISMATCH,
        ],
        None,
        deep(base(), |d| {
            d["checks"][0]["positive"]["observedReasonCode"] = json!("MCP_RES_UNRELATED");
            d["cleanup"]["observed"] = json!(false);
            d["result"] = json!("INCOMPLETE");
        }),
    ));
    v
}

/// An OAuth-boundary evaluation covering every applicable check at `revision`, sealed, with the
/// derived result. Cases named in `fixture` have TEST_FIXTURE evidence. `manifest_sha256`
/// overrides the bound manifest digest (for variant registries).
pub fn oauth_evaluation(revision: &str, fixture: &[&str], manifest_sha256: Option<&str>) -> Value {
    let profile = profile(OAUTH_BOUNDARY_ID);
    let observation = |id: &str, branch: &str, outcome: &str| {
        let reason = reason_code(id, branch);
        json!({
            "propertyReached": true,
            "expectedOutcome": outcome,
            "observedOutcome": outcome,
            "expectedReasonCode": reason,
            "observedReasonCode": reason,
            "artifactSha256": artifact(&format!("oauth:{revision}:{id}:{branch}")),
        })
    };
    let cases: Vec<Value> = profile
        .applicable_check_ids(revision)
        .iter()
        .map(|id| {
            let source = if fixture.contains(&id.as_str()) {
                "TEST_FIXTURE"
            } else {
                "RUNTIME_PROBE"
            };
            json!({
                "id": id,
                "evidenceSource": source,
                "positive": observation(id, "ACCEPTED", "ACCEPT"),
                "negative": observation(id, "REJECTED", "REJECT"),
                "wrongReasonMutant": {
                    "propertyReached": true,
                    "observedReasonCode": c::OAUTH_EARLY_SYNTAX_REJECTION,
                    "expectedDiagnostic": c::OAUTH_WRONG_REASON,
                    "artifactSha256": artifact(&format!("oauth:{revision}:{id}:MUTANT")),
                },
            })
        })
        .collect();
    let result = if fixture.is_empty() {
        "PASS"
    } else {
        "INCOMPLETE"
    };
    let mut doc = json!({
        "schemaVersion": "mcp-res.oauth-boundary-evaluation/0.2.0",
        "subject": {
            "name": "lighthouse-notes-server",
            "version": "0.3.1",
            "artifactSha256": artifact("subject:lighthouse-notes-server@0.3.1"),
        },
        "environment": { "platform": "linux", "runtime": "other", "runtimeVersion": "rust-1.95" },
        "profile": {
            "id": OAUTH_BOUNDARY_ID,
            "version": profile.version,
            "manifestSha256": manifest_sha256.unwrap_or(&profile.manifest_sha256),
            "protocolRevision": revision,
        },
        "fixture": {
            "loopbackOnly": true,
            "syntheticCredentials": true,
            "realAuthorizationProvidersContacted": 0,
            "externalNetworkRequests": 0,
            "listenerSha256": artifact("oauth-fixture-listener"),
        },
        "flow": {
            "resourceUri": "http://127.0.0.1:8931/mcp",
            "authorizationServerIssuer": "http://127.0.0.1:8932",
            "authorizationEndpoint": "http://127.0.0.1:8932/authorize",
            "tokenEndpoint": "http://127.0.0.1:8932/token",
            "clientId": "mcp-res-synthetic-client",
            "redirectUri": "http://127.0.0.1:8933/callback",
            "requestedScopes": ["notes:read"],
            "authorizedScopes": ["notes:read"],
            "codeChallengeMethod": "S256",
            "cimdSha256": artifact("client-id-metadata-document"),
            "trustPolicyId": "mcpres-synthetic-cimd-policy",
        },
        "cases": cases,
        "privacy": {
            "tokenMaterialPersisted": false,
            "evidenceContainsCredentialMaterial": false,
            "authorizationErrorsSanitized": true,
        },
        "cleanup": {
            "listenerClosed": true,
            "redirectListenerReleased": true,
            "observationSha256": artifact("oauth-cleanup"),
        },
        "result": result,
        "evaluationSha256": "0".repeat(64),
    });
    seal(&mut doc);
    doc
}

fn case_index(doc: &Value, id: &str) -> usize {
    doc["cases"]
        .as_array()
        .and_then(|a| a.iter().position(|c| c["id"] == id))
        .expect("registered case")
}

fn ov(id: &'static str, description: &'static str, code: &'static str, doc: Value) -> Vector {
    vector(
        VectorFamily::OAuth,
        id,
        description,
        RegistryVariant::Builtin,
        vec![code],
        None,
        doc,
    )
}

/// Every OAuth-boundary vector: two valid ones and at least one per diagnostic code.
pub fn oauth_vectors() -> Vec<Vector> {
    use RegistryVariant as R;
    use VectorFamily::OAuth as F;
    let base = || oauth_evaluation(LATEST, &[], None);
    let edit_case = |id: &'static str, edit: fn(&mut Value)| {
        deep(base(), move |d| {
            let i = case_index(d, id);
            edit(&mut d["cases"][i]);
        })
    };
    let latest_only = R::OAuthBoundaryLatestOnly
        .registry()
        .expect("variant registry");
    let latest_only_digest = latest_only
        .get(OAUTH_BOUNDARY_ID)
        .expect("oauth manifest")
        .manifest_sha256
        .clone();
    let mut v = vec![
        vector(
            F,
            "pass-latest",
            "Every applicable check at 2026-07-28 with runtime evidence: PASS",
            R::Builtin,
            vec![],
            Some("PASS"),
            base(),
        ),
        vector(
            F,
            "fixture-incomplete-earlier",
            "Every applicable check at 2025-11-25, refresh rotation from the test fixture: INCOMPLETE",
            R::Builtin,
            vec![],
            Some("INCOMPLETE"),
            oauth_evaluation(EARLIER, &["refresh-token-rotation-when-claimed"], None),
        ),
    ];
    v.push(ov(
        "schema-plain-pkce",
        "codeChallengeMethod plain",
        c::OAUTH_SCHEMA_INVALID,
        deep(base(), |d| {
            d["flow"]["codeChallengeMethod"] = json!("plain")
        }),
    ));
    v.push(vector(
        F,
        "registry-without-oauth-manifest",
        "A valid evaluation judged against a registry without the oauth-boundary manifest",
        R::WithoutOAuthBoundary,
        vec![c::OAUTH_MANIFEST_INVALID],
        None,
        base(),
    ));
    v.push(vector(
        F,
        "revision-unsupported",
        "An evaluation at 2025-11-25 judged against an oauth-boundary manifest covering 2026-07-28 only (bound by that manifest's digest)",
        R::OAuthBoundaryLatestOnly,
        vec![c::OAUTH_REVISION_UNSUPPORTED],
        None,
        oauth_evaluation(EARLIER, &[], Some(&latest_only_digest)),
    ));
    v.push(ov(
        "manifest-digest-stale",
        "profile.manifestSha256 of another manifest",
        c::OAUTH_MANIFEST_DIGEST_MISMATCH,
        oauth_evaluation(LATEST, &[], Some(&latest_only_digest)),
    ));
    let mut edited = base();
    edited["cases"][0]["negative"]["artifactSha256"] = json!(artifact("edited after sealing"));
    v.push(ov(
        "evaluation-digest-stale",
        "A case artifact digest edited after sealing",
        c::OAUTH_DIGEST_MISMATCH,
        edited,
    ));
    v.push(ov(
        "case-missing",
        "No pkce-downgrade-refused case",
        c::OAUTH_COVERAGE_MISMATCH,
        deep(base(), |d| {
            let i = case_index(d, "pkce-downgrade-refused");
            d["cases"].as_array_mut().expect("cases").remove(i);
        }),
    ));
    v.push(ov(
        "external-requests",
        "Three external network requests",
        c::OAUTH_EXTERNAL_PROVIDER_CONTACT,
        deep(base(), |d| {
            d["fixture"]["externalNetworkRequests"] = json!(3)
        }),
    ));
    v.push(ov(
        "real-provider",
        "One real authorization provider contacted",
        c::OAUTH_EXTERNAL_PROVIDER_CONTACT,
        deep(base(), |d| {
            d["fixture"]["realAuthorizationProvidersContacted"] = json!(1)
        }),
    ));
    v.push(ov(
        "non-synthetic-credentials",
        "syntheticCredentials false",
        c::OAUTH_NON_SYNTHETIC_CREDENTIAL,
        deep(base(), |d| {
            d["fixture"]["syntheticCredentials"] = json!(false)
        }),
    ));
    v.push(ov(
        "audience-rejected-as-malformed",
        "The access-token-audience negative was rejected by the early syntax guard: no credit for audience binding",
        c::OAUTH_WRONG_REASON,
        edit_case("access-token-audience", |case| {
            case["negative"]["observedReasonCode"] = json!(c::OAUTH_EARLY_SYNTAX_REJECTION)
        }),
    ));
    v.push(ov(
        "expected-reason-not-derived",
        "The pkce-s256 negative expects (and observes) a reason not derived from the check id",
        c::OAUTH_WRONG_REASON,
        edit_case("pkce-s256", |case| {
            case["negative"]["expectedReasonCode"] = json!("MCP_RES_OAUTH_PKCE_REJECTED");
            case["negative"]["observedReasonCode"] = json!("MCP_RES_OAUTH_PKCE_REJECTED");
        }),
    ));
    v.push(ov(
        "negative-not-reached",
        "The state-binding negative did not reach its property",
        c::OAUTH_PROPERTY_NOT_REACHED,
        edit_case("state-binding", |case| {
            case["negative"]["propertyReached"] = json!(false)
        }),
    ));
    v.push(ov(
        "wrong-resource-token-accepted",
        "A token for another resource was accepted",
        c::OAUTH_OUTCOME_MISMATCH,
        edit_case("wrong-resource-token-rejection", |case| {
            case["negative"]["observedOutcome"] = json!("ACCEPT")
        }),
    ));
    v.push(ov(
        "mutant-not-reached",
        "The issuer-binding wrong-reason mutant did not reach its property",
        c::OAUTH_WRONG_REASON_CONTROL_MISSING,
        edit_case("issuer-binding", |case| {
            case["wrongReasonMutant"]["propertyReached"] = json!(false)
        }),
    ));
    v.push(ov(
        "mutant-own-reason",
        "The exact-redirect-uri mutant observed the negative's own reason instead of the early-syntax rejection",
        c::OAUTH_WRONG_REASON_CONTROL_MISSING,
        edit_case("exact-redirect-uri", |case| {
            case["wrongReasonMutant"]["observedReasonCode"] =
                json!("MCP_RES_OAUTH_EXACT_REDIRECT_URI_REJECTED")
        }),
    ));
    v.push(ov(
        "token-persisted",
        "tokenMaterialPersisted true",
        c::OAUTH_SECRET_PERSISTED,
        deep(base(), |d| {
            d["privacy"]["tokenMaterialPersisted"] = json!(true)
        }),
    ));
    v.push(ov(
        "code-in-redirect-uri",
        "The recorded redirect URI carries an authorization code (raw credential material in the document; mcpres-only rule, see spec/conformance.md)",
        c::OAUTH_SECRET_PERSISTED,
        deep(base(), |d| {
            d["flow"]["redirectUri"] =
                json!("http://127.0.0.1:8933/callback?code=mcp-res-synthetic-code-1")
        }),
    ));
    v.push(ov(
        "errors-unsanitized",
        "authorizationErrorsSanitized false",
        c::OAUTH_UNSANITIZED_ERROR,
        deep(base(), |d| {
            d["privacy"]["authorizationErrorsSanitized"] = json!(false)
        }),
    ));
    v.push(ov(
        "redirect-listener-kept",
        "redirectListenerReleased false",
        c::OAUTH_CLEANUP_INCOMPLETE,
        deep(base(), |d| {
            d["cleanup"]["redirectListenerReleased"] = json!(false)
        }),
    ));
    v.push(ov(
        "fixture-claimed-pass",
        "A TEST_FIXTURE case with result PASS",
        c::OAUTH_TEST_FIXTURE_OVERCLAIM,
        deep(
            oauth_evaluation(LATEST, &["bounded-redirects"], None),
            |d| d["result"] = json!("PASS"),
        ),
    ));
    v.push(ov(
        "runtime-claimed-incomplete",
        "Runtime evidence only, result INCOMPLETE",
        c::OAUTH_RESULT_MISMATCH,
        deep(base(), |d| d["result"] = json!("INCOMPLETE")),
    ));
    v
}
