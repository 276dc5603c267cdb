//! mcpres' own v0.1 and migration-result test vectors.
//!
//! ```text
//! cargo run --example gen_migration_vectors --no-default-features -- [--force] testdata/migration
//! ```
//!
//! Writes `v01/*.json`, `migration/*.json` and `catalog.json` under the output directory.
//! Deterministic: no clock, no randomness; the migration tool digest is the SHA-256 of the
//! text `mcpres testdata migration tool`. Existing files are replaced only with `--force`.
//!
//! Every v0.1 vector is built here from one scenario (the `lighthouse-notes-server` MCP server
//! under a malformed-response fault). Invalid v0.1 vectors are deep: the fault is made in the
//! authored content and the digests are then recomputed, so exactly one v0.1 rule fails (one
//! per v0.1 code). Migration vectors start from the migration of the valid bundle; each
//! invalid one breaks one migration rule. Expected findings are declared here, not computed;
//! the generator refuses to write a set the validator disagrees with.

use std::path::Path;
use std::process::ExitCode;

use mcpres::json::canonical::{self, sha256_hex};
use mcpres::produce::migrate::migrate_bytes;
use mcpres::validate::codes as c;
use mcpres::validate::{Options, validate_document};
use serde_json::{Value, json};

/// One generated file and what validating it must give.
pub struct Vector {
    pub id: &'static str,
    /// Path below the output directory.
    pub path: String,
    pub bytes: Vec<u8>,
    /// Every finding code, primary first (empty for a valid vector).
    pub findings: Vec<&'static str>,
}

fn h(label: &str) -> String {
    sha256_hex(label.as_bytes())
}

/// The migration tool digest recorded in the generated results.
pub fn tool_sha256() -> String {
    h("mcpres testdata migration tool")
}

const RUN: &str = "run-lighthouse-0001";

fn operation(
    id: &str,
    parent: Value,
    kind: &str,
    fault: Value,
    policy: Value,
    outcome: &str,
    at: u64,
) -> Value {
    json!({
        "runId": RUN, "operationId": id, "parentOperationId": parent, "kind": kind,
        "faultId": fault, "recoveryPolicyId": policy, "attempt": if kind == "RECOVERY_ATTEMPT" { 1 } else { 0 },
        "outcome": outcome, "startedOffsetMs": at, "durationMs": 120
    })
}

/// The authored (unsealed) parts of the valid v0.1 bundle.
fn scenario() -> (Value, Value) {
    let tool =
        |name: &str, version: &str| json!({"name": name, "version": version, "sha256": h(name)});
    let evidence = json!({
        "schemaVersion": "mcp-res.evidence-envelope/0.1.0",
        "standardVersion": "0.1.0",
        "profile": {"id": "mcp-res/server-tool-call/v1", "version": "1.0.0"},
        "evidenceClass": "FIXTURE_BACKED_PROTOCOL",
        "run": {"id": RUN, "startedAt": "2026-03-01T10:00:00Z", "finishedAt": "2026-03-01T10:00:05Z"},
        "subject": {
            "schemaVersion": "0.1.0",
            "subjectType": "MCP_SERVER",
            "name": "lighthouse-notes-server",
            "version": "1.4.2",
            "artifact": {"kind": "PACKAGE", "identifier": "npm:lighthouse-notes-server@1.4.2", "sha256": h("lighthouse-notes-server-1.4.2.tgz")},
            "transport": {"kind": "STDIO", "endpointClass": "LOCAL", "authenticated": false},
            "configurationProfile": {"id": "default", "version": "1", "sha256": h("default configuration")},
            "harness": tool("mcpres-testdata-harness", "0.1.0"),
            "runtimes": [tool("node", "22.11.0")]
        },
        "validator": tool("mcp-res-black-box-validator", "0.1.0"),
        "execution": {"actualRuntime": false, "protocolMessagesExchanged": true, "fixtureUsed": true, "installationExecuted": false, "regressionExecuted": false},
        "limits": {"inputBytes": 65536, "eventCount": 16, "nestingDepth": 8, "stringBytes": 4096, "retryCount": 1, "concurrency": 1, "scenarioDurationMs": 5000, "totalDurationMs": 5000, "generatedOutputBytes": 4096},
        "operations": [
            operation("op-clean", Value::Null, "CLEAN_CONTROL", Value::Null, Value::Null, "PASS", 0),
            operation("op-negative", Value::Null, "NEGATIVE_CONTROL", json!("truncated-frame"), Value::Null, "EXPECTED_FAILURE", 200),
            operation("op-retry", json!("op-negative"), "RECOVERY_ATTEMPT", Value::Null, json!("retry-once"), "PASS", 400)
        ],
        "faults": [{
            "id": "truncated-frame", "version": "1", "method": "MALFORMED_RESPONSE", "seed": 7,
            "targetOperationId": "op-negative",
            "activation": {"trigger": "DURING_OPERATION", "maxApplications": 1},
            "expectedEffect": "INVALID_RESULT", "reproducibilitySha256": h("truncated-frame seed 7")
        }],
        "recoveryPolicies": [{
            "id": "retry-once", "retryLimit": 1, "timeLimitMs": 1000, "cancellationBoundary": "PER_ATTEMPT",
            "backoff": {"kind": "FIXED", "maxDelayMs": 100}, "sideEffectModel": "READ_ONLY",
            "safetyMechanism": null, "terminalOutcomes": ["PASS", "FAIL"]
        }],
        "cleanup": {"complete": true, "childProcessesRemaining": 0, "listenersRemaining": 0, "temporaryArtifacts": "REMOVED", "targetState": "CLEAN", "partialOutput": "ABSENT", "durationMs": 20},
        "privacy": {"credentialsOmitted": true, "authorizationHeadersOmitted": true, "environmentValuesOmitted": true, "promptsOmitted": true, "toolBodiesOmitted": true, "personalPathsOmitted": true, "summariesBounded": true, "oneWayIdentities": true, "scanPassed": true}
    });
    let extra_artifacts = json!([
        {"path": "transcripts/negative-control.json", "mediaType": "application/json", "bytes": 512, "sha256": h("negative-control transcript")}
    ]);
    (evidence, extra_artifacts)
}

/// Statement and integrity manifest for `evidence`, every digest computed.
fn seal(evidence: Value, extra_artifacts: &Value) -> Value {
    let e = &evidence;
    let statement = json!({
        "schemaVersion": "mcp-res.conformance-statement/0.1.0",
        "standardVersion": e["standardVersion"],
        "profileId": e["profile"]["id"], "profileVersion": e["profile"]["version"],
        "subjectType": e["subject"]["subjectType"], "subjectName": e["subject"]["name"],
        "subjectVersion": e["subject"]["version"], "evidenceClass": e["evidenceClass"],
        "result": "PASS",
        "evidenceSha256": canonical::digest(e).expect("canonical evidence"),
        "validatorName": e["validator"]["name"], "validatorVersion": e["validator"]["version"],
        "validatorSha256": e["validator"]["sha256"],
        "verifiedAt": "2026-03-01T10:00:06Z"
    });
    let entry = |path: &str, value: &Value| {
        let (digest, len) = canonical::digest_and_len(value).expect("canonical");
        json!({"path": path, "mediaType": "application/json", "bytes": len, "sha256": digest})
    };
    let mut artifacts = vec![
        entry("evidence-envelope.json", &evidence),
        entry("conformance-statement.json", &statement),
    ];
    artifacts.extend(
        extra_artifacts
            .as_array()
            .expect("artifact list")
            .iter()
            .cloned(),
    );
    artifacts.sort_by(|a, b| {
        canonical::cmp_utf16(
            a["path"].as_str().unwrap_or(""),
            b["path"].as_str().unwrap_or(""),
        )
    });
    let bundle_digest = mcpres::validate::core::bundle_digest(&artifacts);
    json!({
        "schemaVersion": "mcp-res.conformance-bundle/0.1.0",
        "evidence": evidence,
        "statement": statement,
        "integrity": {
            "schemaVersion": "0.1.0", "canonicalizationAlgorithm": "mcp-res-json-utf16-v1",
            "hashAlgorithm": "SHA-256", "publication": "MANIFEST_LAST", "complete": true,
            "artifacts": artifacts, "bundleDigest": bundle_digest
        }
    })
}

fn pretty(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("serialize");
    bytes.push(b'\n');
    bytes
}

type Edit = fn(&mut Value, &mut Value);

/// One edit of the valid migration result.
type Tamper = Box<dyn Fn(&mut Value)>;

/// Deep v0.1 mutations: `(id, edit of evidence and extra artifacts, expected findings)`.
fn v01_mutations() -> Vec<(&'static str, Edit, Vec<&'static str>)> {
    vec![
        (
            "missing-clean-control",
            |e, _| e["operations"][0]["kind"] = json!("FAULT_CASE"),
            vec![c::V01_MISSING_CLEAN_CONTROL],
        ),
        (
            "vacuous-negative-control",
            |e, _| e["operations"][1]["outcome"] = json!("FAIL"),
            vec![c::VACUOUS_NEGATIVE_CONTROL],
        ),
        (
            "unbounded-retry",
            |e, _| e["recoveryPolicies"][0]["retryLimit"] = json!("unbounded"),
            vec![c::V01_UNBOUNDED_RETRY],
        ),
        (
            "listener-left-running",
            |e, _| e["cleanup"]["listenersRemaining"] = json!(1),
            vec![c::V01_CLEANUP_INCOMPLETE],
        ),
        (
            "subject-without-artifact-digest",
            |e, _| e["subject"]["artifact"]["sha256"] = json!(""),
            vec![c::V01_SUBJECT_AMBIGUOUS],
        ),
        (
            "subject-host-name",
            |e, _| e["subject"]["hostName"] = json!("build-host-7"),
            vec![c::V01_NONDETERMINISTIC_IDENTITY],
        ),
        (
            "string-limit-over-maximum",
            |e, _| e["limits"]["stringBytes"] = json!(2_000_000),
            vec![c::V01_EVIDENCE_TOO_LARGE],
        ),
        (
            "authorization-header",
            |e, _| e["subject"]["runtimes"][0]["version"] = json!("Authorization: Bearer abc.def"),
            vec![c::V01_AUTH_HEADER_FORBIDDEN],
        ),
        // "token=0123456789abcdef" in Base64.
        (
            "encoded-token",
            |e, _| {
                e["subject"]["configurationProfile"]["version"] =
                    json!("dG9rZW49MDEyMzQ1Njc4OWFiY2RlZg==")
            },
            vec![c::V01_SECRET_DETECTED],
        ),
        (
            "unknown-execution-field",
            |e, _| e["execution"]["sandboxed"] = json!(true),
            vec![c::SCHEMA_INVALID],
        ),
        (
            "unsupported-profile-version",
            |e, _| e["profile"]["version"] = json!("2.0.0"),
            vec![c::V01_PROFILE_UNSUPPORTED],
        ),
        (
            "class-promotion",
            |e, _| e["evidenceClass"] = json!("GENUINE_RUNTIME"),
            vec![c::EVIDENCE_CLASS_PROMOTION],
        ),
        (
            "dangling-parent",
            |e, _| e["operations"][2]["parentOperationId"] = json!("op-missing"),
            vec![c::CAUSAL_MISMATCH],
        ),
        (
            "side-effecting-retry",
            |e, _| e["recoveryPolicies"][0]["sideEffectModel"] = json!("SIDE_EFFECTING"),
            vec![c::V01_SIDE_EFFECT_RETRY_UNSAFE],
        ),
        (
            "regression-not-executed",
            |e, _| {
                e["regression"] = json!({"provided": true, "generatedWithoutExecution": true, "containedOutput": true, "deterministicDependencies": true, "brokenConditionFails": true, "fixedConditionPasses": true, "secretScanPassed": true, "runtimeRequirements": ["node"]});
            },
            vec![c::V01_REGRESSION_INVALID],
        ),
        (
            "duplicate-manifest-path",
            |_, extra| {
                let first = extra[0].clone();
                extra.as_array_mut().expect("list").push(first);
            },
            vec![c::V01_PARTIAL_MANIFEST],
        ),
    ]
}

/// Every vector, in catalog order.
pub fn vectors() -> Vec<Vector> {
    let mut out = Vec::new();
    let (evidence, extra) = scenario();
    let valid = seal(evidence.clone(), &extra);
    let valid_bytes = pretty(&valid);
    out.push(Vector {
        id: "v01-valid",
        path: "v01/valid.json".into(),
        bytes: valid_bytes.clone(),
        findings: vec![],
    });
    for (id, edit, findings) in v01_mutations() {
        let (mut e, mut x) = (evidence.clone(), extra.clone());
        edit(&mut e, &mut x);
        out.push(Vector {
            id,
            path: format!("v01/{id}.json"),
            bytes: pretty(&seal(e, &x)),
            findings,
        });
    }
    // A digest fault is the one made after sealing.
    let mut stale = valid.clone();
    stale["integrity"]["bundleDigest"] = json!(h("an older manifest"));
    out.push(Vector {
        id: "stale-bundle-digest",
        path: "v01/stale-bundle-digest.json".into(),
        bytes: pretty(&stale),
        findings: vec![c::DIGEST_MISMATCH],
    });

    let migrated = migrate_bytes(&valid_bytes, &tool_sha256()).expect("the valid bundle migrates");
    let result = migrated.value.clone();
    out.push(Vector {
        id: "migration-valid",
        path: "migration/valid.json".into(),
        bytes: migrated.bytes,
        findings: vec![],
    });
    let runtime = result["target"]["legacyAssertions"]
        .as_array()
        .expect("assertions")
        .iter()
        .position(|a| a["name"] == "actualRuntime")
        .expect("actualRuntime assertion");
    let tampered: Vec<(&'static str, Tamper, Vec<&'static str>)> = vec![
        (
            "status-pass",
            Box::new(|v| v["target"]["status"] = json!("PASS")),
            vec![c::MIGRATION_SCHEMA_INVALID],
        ),
        (
            "original-edited",
            Box::new(|v| v["originalBundle"]["evidence"]["cleanup"]["durationMs"] = json!(21)),
            vec![c::MIGRATION_SOURCE_INVALID],
        ),
        (
            "preserved-digest-changed",
            Box::new(|v| v["report"]["preservedEvidenceSha256"] = json!(h("other evidence"))),
            vec![c::MIGRATION_DIGEST_MISMATCH],
        ),
        (
            "class-promoted",
            Box::new(|v| v["target"]["evidenceClass"] = json!("GENUINE_RUNTIME")),
            vec![c::MIGRATION_CLASS_PROMOTION],
        ),
        (
            "assertion-count",
            Box::new(|v| v["report"]["legacyAssertionCount"] = json!(3)),
            vec![c::MIGRATION_FABRICATION],
        ),
        (
            "assertion-flipped",
            Box::new(move |v| v["target"]["legacyAssertions"][runtime]["value"] = json!(true)),
            vec![c::MIGRATION_FABRICATION],
        ),
    ];
    for (id, edit, findings) in tampered {
        let mut doc = result.clone();
        edit(&mut doc);
        out.push(Vector {
            id,
            path: format!("migration/{id}.json"),
            bytes: pretty(&doc),
            findings,
        });
    }
    out
}

/// The catalog listing every vector with its expected diagnostics and findings.
pub fn catalog(vectors: &[Vector]) -> Vec<u8> {
    let entries: Vec<Value> = vectors
        .iter()
        .map(|v| {
            json!({
                "id": v.id,
                "path": v.path,
                "expectedDiagnostics": v.findings.first().map(|p| vec![*p]).unwrap_or_default(),
                "expectedFindings": v.findings,
                "fileSha256": sha256_hex(&v.bytes),
            })
        })
        .collect();
    pretty(&json!({
        "generator": "examples/gen_migration_vectors.rs",
        "toolSha256": tool_sha256(),
        "vectors": entries,
    }))
}

/// Findings codes the validator gives for `bytes`.
pub fn findings_of(bytes: &[u8]) -> Vec<&'static str> {
    let doc = mcpres::json::parse_default(bytes).expect("generated JSON reads");
    validate_document(&doc, &Options::default())
        .findings
        .iter()
        .map(|f| f.code.as_str())
        .collect()
}

/// Generate into `dir`; refuses when a vector's findings differ from the declared ones, and
/// (without `force`) when a file exists. Returns the number of files written.
pub fn generate(dir: &Path, force: bool) -> Result<usize, String> {
    let vectors = vectors();
    for v in &vectors {
        let got = findings_of(&v.bytes);
        if got != v.findings {
            return Err(format!(
                "{}: declared {:?}, validator gives {got:?}",
                v.id, v.findings
            ));
        }
    }
    let mut files: Vec<(String, Vec<u8>)> = vectors
        .iter()
        .map(|v| (v.path.clone(), v.bytes.clone()))
        .collect();
    files.push(("catalog.json".into(), catalog(&vectors)));
    for (path, bytes) in &files {
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        if target.exists() && !force {
            return Err(format!("{} exists (use --force)", target.display()));
        }
        std::fs::write(&target, bytes).map_err(|e| format!("{}: {e}", target.display()))?;
    }
    Ok(files.len())
}

#[allow(dead_code)]
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let force = args.iter().any(|a| a == "--force");
    let Some(dir) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: gen_migration_vectors [--force] DIR");
        return ExitCode::from(2);
    };
    match generate(Path::new(dir), force) {
        Ok(n) => {
            println!("wrote {n} files to {dir}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen_migration_vectors: {e}");
            ExitCode::FAILURE
        }
    }
}
