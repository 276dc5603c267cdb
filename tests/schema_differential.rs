//! Differential test: the project's own schemas (`mcpres::schema`) against the reference kit's
//! schemas from the reference corpus, compiled with the same engine and the same options.
//!
//! For every seed document (corpus documents whose `schemaVersion` names a kind, every nested
//! object that does, and a few documents built here for kinds the corpus has no example of) and
//! for systematic mutants of each seed, both schema sets must make the same accept/reject decision.
//! On our side three entry points are held to the reference's answer: `schema::is_valid` (which
//! may take the fast evaluator in `schema::fast`), `schema::engine_is_valid` (the compiled
//! `jsonschema` validator alone) and `schema::validate` (empty error list means valid).
//!
//! The corpus is found at `$MCPRES_REFERENCE_CORPUS` or `../shared/reference-corpus` from the
//! crate root; without it the test prints why and passes.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use jsonschema::{Draft, PatternOptions, Registry, Validator};
use mcpres::schema::{self, SchemaKind};
use rayon::prelude::*;
use serde_json::{Map, Value, json};

/// Mutants checked per kind, shared by that kind's seeds (keeps the debug run near 20 s).
const MUTANTS_PER_KIND: usize = 1_500;
/// Every seed gets at least this many mutants, however many seeds its kind has.
const MIN_MUTANTS_PER_DOCUMENT: usize = 60;
/// `validate()` (full error collection) is compared on every n-th mutant and on disagreements.
const VALIDATE_EVERY: usize = 7;
/// Disagreements reported in full before the test fails.
const MAX_REPORTED: usize = 25;
/// Strings longer than every `maxLength` below 1 MiB in the schemas.
const LONG_LEN: usize = 4_097;
/// Longer than the largest `maxLength` (1,048,576); used on a few leaves only.
const HUGE_LEN: usize = 1_048_577;
const HUGE_PER_DOCUMENT: usize = 3;

fn corpus_dir() -> Option<PathBuf> {
    let found = support::reference_corpus_dir().filter(|dir| dir.join("v0.2.0/schemas").is_dir());
    if found.is_some() {
        found
    } else {
        println!(
            "schema_differential skipped: reference corpus not found \
             (set MCPRES_REFERENCE_CORPUS to its path, or place it at ../shared/reference-corpus)"
        );
        None
    }
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The 17 reference schemas, compiled like ours: Draft 2020-12, formats asserted, unknown
/// formats refused, ECMA-262 patterns on the linear-time engine, offline registry.
struct Reference {
    validators: BTreeMap<SchemaKind, Validator>,
}

impl Reference {
    fn load(corpus: &Path) -> Reference {
        let dir = corpus.join("v0.2.0/schemas");
        let mut schemas = BTreeMap::new();
        for kind in SchemaKind::STANDARD {
            let schema = read_json(&dir.join(kind.file_name()));
            schemas.insert(kind, schema);
        }
        let resources = schemas.values().map(|schema| {
            let id = schema["$id"].as_str().expect("reference schema has $id");
            (id.to_owned(), schema.clone())
        });
        let registry = Registry::new()
            .draft(Draft::Draft202012)
            .extend(resources)
            .expect("reference registry")
            .prepare()
            .expect("reference registry prepares");
        let validators = schemas
            .iter()
            .map(|(kind, schema)| {
                let validator = jsonschema::options()
                    .with_draft(Draft::Draft202012)
                    .with_registry(&registry)
                    .offline()
                    .should_validate_formats(true)
                    .should_ignore_unknown_formats(false)
                    // The same options as ours, the `date-time` check included
                    // (spec/conformance.md, entry 17): this test compares schemas.
                    .with_format("date-time", mcpres::json::time::is_date_time)
                    .with_pattern_options(PatternOptions::regex())
                    .build(schema)
                    .unwrap_or_else(|e| panic!("reference {} compiles: {e}", kind.file_name()));
                (*kind, validator)
            })
            .collect();
        Reference { validators }
    }

    fn is_valid(&self, kind: SchemaKind, value: &Value) -> bool {
        self.validators[&kind].is_valid(value)
    }
}

/// A document both schema sets are compared on, with where it came from.
struct Seed {
    origin: String,
    kind: SchemaKind,
    value: Value,
    /// Built by this test to be valid; both sides must accept it unmutated.
    expect_valid: bool,
}

/// Collects `value` and every nested object whose `schemaVersion` (or in-toto `_type`) names a kind.
fn collect_seeds(origin: &str, value: &Value, pointer: &str, out: &mut Vec<Seed>) {
    match value {
        Value::Object(map) => {
            if let Some(kind) = SchemaKind::detect(value) {
                out.push(Seed {
                    origin: format!("{origin}#{pointer}"),
                    kind,
                    value: value.clone(),
                    expect_valid: false,
                });
            }
            for (key, child) in map {
                collect_seeds(origin, child, &format!("{pointer}/{}", escape(key)), out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                collect_seeds(origin, child, &format!("{pointer}/{index}"), out);
            }
        }
        _ => {}
    }
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name == "schemas") {
                continue;
            }
            json_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "json") {
            out.push(path);
        }
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

// ---------------------------------------------------------------------------------------------
// Documents built here for the kinds the corpus has no instance of. Each is valid and fills in
// optional members, so mutants reach every part of the schema.

fn digest(c: char) -> String {
    c.to_string().repeat(64)
}

fn dsse_envelope() -> Value {
    json!({
        "schemaVersion": "mcp-res.dsse-envelope/0.2.0",
        "payloadType": "application/vnd.in-toto+json",
        "payload": "eyJfdHlwZSI6Imh0dHBzOi8vaW4tdG90by5pby9TdGF0ZW1lbnQvdjEifQ==",
        "signatures": [{
            "keyid": digest('1'),
            "sig": "c2lnbmF0dXJlLWJ5dGVz",
            "algorithm": "Ed25519",
            "publicKeySpkiBase64": "MCowBQYDK2VwAyEA",
            "signerIdentity": "release@example.org"
        }]
    })
}

fn authenticity_record() -> Value {
    json!({
        "schemaVersion": "mcp-res.authenticity/0.2.0",
        "claimedClassification": "SIGNED_WITH_IDENTITY",
        "envelopes": [dsse_envelope()]
    })
}

fn attestation_statement() -> Value {
    json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{ "name": "bundle.json", "digest": { "sha256": digest('2') } }],
        "predicateType": "https://aliengineering-byte.github.io/resilireplay/standards/mcp-res/attestation/v0.2",
        "predicate": {
            "evidenceBundleDigest": digest('3'),
            "scenarioFingerprint": digest('4'),
            "executionInstanceDigest": digest('5'),
            "profile": { "id": "mcp-res/server-tool-call/v1", "version": "2.0.0" },
            "validator": { "name": "mcpres", "version": "0.1.0", "sha256": digest('6') },
            "signerIdentity": "release@example.org",
            "signerKeyFingerprint": digest('1'),
            "signatureAlgorithm": "Ed25519",
            "signingTime": "2026-08-28T00:48:04.860Z",
            "trustPolicyId": "policy/example",
            "transparencyReference": {
                "logId": "rekor.example",
                "entryUuid": "24296fb24b8ad77a",
                "inclusionProofBase64": "cHJvb2Y=",
                "inclusionProofSha256": digest('7')
            }
        }
    })
}

fn trust_policy() -> Value {
    json!({
        "schemaVersion": "mcp-res.trust-policy/0.2.0",
        "id": "policy/example",
        "version": "1.0.0",
        "validFrom": "2026-01-01T00:00:00Z",
        "validUntil": "2027-01-01T00:00:00+02:00",
        "requiredAlgorithm": "Ed25519",
        "trustedSigners": [{ "keyFingerprint": digest('1'), "signerIdentity": "release@example.org" }],
        "revokedKeyFingerprints": [digest('8')]
    })
}

fn migration_result(original: Option<Value>) -> Value {
    let original = original.unwrap_or_else(|| {
        json!({
            "schemaVersion": "mcp-res.conformance-bundle/0.1.0",
            "evidence": { "execution": { "actualRuntime": true } },
            "statement": {},
            "integrity": {}
        })
    });
    json!({
        "schemaVersion": "mcp-res.migration-result/0.2.0",
        "source": { "standardVersion": "0.1.0", "evidenceSha256": digest('a'), "bundleFileSha256": digest('b') },
        "target": {
            "standardVersion": "0.2.0",
            "status": "INCOMPLETE",
            "evidenceClass": "DOCUMENTED_ONLY",
            "authenticityClassification": "UNSIGNED_INTEGRITY_ONLY",
            "stabilityClassification": "SINGLE_OBSERVATION",
            "legacyAssertions": [{ "name": "actualRuntime", "value": true, "strength": "LEGACY_SELF_ASSERTED" }],
            "unresolvedRequirements": ["MCP_RES_OBSERVATION_REQUIRED"]
        },
        "migration": {
            "from": "0.1.0",
            "to": "0.2.0",
            "tool": { "name": "mcp-res-migrate", "version": "0.2.0", "sha256": digest('c') },
            "inputOverwritten": false,
            "fabricatedEvidence": false
        },
        "report": {
            "status": "INCOMPLETE",
            "preservedEvidenceSha256": digest('a'),
            "preservedEvidenceClass": "DOCUMENTED_ONLY",
            "legacyAssertionCount": 1,
            "unresolvedRequirements": ["MCP_RES_OBSERVATION_REQUIRED"],
            "warnings": ["legacy assertions are not evidence"]
        },
        "originalBundle": original
    })
}

fn official_attachment(capture: Option<&Value>) -> Value {
    let source = capture
        .map(|c| c["source"].clone())
        .filter(Value::is_object)
        .unwrap_or_else(|| {
            json!({
                "packageName": "@modelcontextprotocol/conformance",
                "packageVersion": "0.2.0",
                "packageSha256": digest('d'),
                "repository": "https://github.com/modelcontextprotocol/conformance",
                "repositoryCommit": "0123456789abcdef0123456789abcdef01234567"
            })
        });
    json!({
        "schemaVersion": "mcp-res.official-conformance-attachment/0.2.0",
        "source": source,
        "protocolRevision": "2025-11-25",
        "requirementSet": { "revision": "2025-11-25", "sha256": digest('e') },
        "mode": "server",
        "suite": "server-initialize",
        "legs": { "client": "NOT_EXECUTED", "server": "EXECUTED" },
        "scenarios": ["server-initialize"],
        "checks": [{
            "scenarioId": "server-initialize",
            "checkId": "server-initialize",
            "outcome": "FAILURE",
            "wireSchema": true,
            "baselineExpected": false,
            "untestable": false,
            "errorMessage": "initialize result lacks serverInfo",
            "detailsSha256": digest('f')
        }],
        "inventories": {
            "declared": ["server-initialize:server-initialize"],
            "executed": ["server-initialize:server-initialize"],
            "wireSchema": ["server-initialize:server-initialize"],
            "warnings": [],
            "skipped": [],
            "untestable": [],
            "pending": [],
            "notScored": []
        },
        "expectedFailureBaseline": { "entries": ["server-initialize:server-initialize"], "sha256": digest('0') },
        "staleExpectedFailures": [],
        "observationCoverage": [{ "surface": "MCP_WIRE_MESSAGES", "status": "INSTRUMENTED" }],
        "originalResultArtifact": {
            "sha256": digest('1'),
            "bytes": 1579,
            "sanitization": { "applied": true, "fields": ["/0/details/serverUrl"] }
        },
        "harness": { "exitCode": -1073740791, "warnings": ["process aborted after writing results"] },
        "mappingBoundary": {
            "officialResultPreserved": true,
            "explicitMapping": false,
            "mcpResEvidenceClass": null,
            "officialCertificationClaim": false
        },
        "importStatus": "INCOMPLETE"
    })
}

fn check_observation(source: &str) -> Value {
    json!({
        "source": source,
        "propertyReached": true,
        "expectedOutcome": "REJECT",
        "observedOutcome": "REJECT",
        "expectedReasonCode": "MCP_RES_PROTOCOL_VERSION_MISMATCH",
        "observedReasonCode": "MCP_RES_PROTOCOL_VERSION_MISMATCH",
        "artifactSha256": digest('2')
    })
}

fn profile_evaluation() -> Value {
    json!({
        "schemaVersion": "mcp-res.profile-evaluation/0.2.0",
        "subject": { "name": "everything", "implementationLanguage": "TYPESCRIPT", "version": "2026.7.4", "artifactSha256": digest('3') },
        "environment": { "platform": "linux", "runtimeName": "node", "runtimeVersion": "22.3.0" },
        "profile": { "id": "mcp-res/protocol-revision/v1", "version": "1.0.0", "manifestSha256": digest('4'), "protocolRevision": "2025-11-25" },
        "scope": {
            "claim": "BOUNDED_CHECK_SET",
            "claimedCheckIds": ["version-negotiation"],
            "targetKind": "REMOTE_HTTP",
            "targetSha256": digest('5'),
            "remoteOptIn": true,
            "allowlistSha256": digest('6'),
            "reviewedTargetSha256": digest('5')
        },
        "checks": [{
            "id": "version-negotiation",
            "positive": check_observation("RUNTIME_PROBE"),
            "negativeControl": check_observation("TEST_FIXTURE")
        }],
        "cleanup": { "required": true, "observed": true, "observationSha256": digest('7') },
        "result": "PASS",
        "evaluationSha256": digest('8')
    })
}

fn oauth_probe() -> Value {
    json!({
        "propertyReached": true,
        "expectedOutcome": "REJECT",
        "observedOutcome": "REJECT",
        "expectedReasonCode": "MCP_RES_OAUTH_AUDIENCE_MISMATCH",
        "observedReasonCode": "MCP_RES_OAUTH_AUDIENCE_MISMATCH",
        "artifactSha256": digest('9')
    })
}

fn oauth_evaluation() -> Value {
    json!({
        "schemaVersion": "mcp-res.oauth-boundary-evaluation/0.2.0",
        "subject": { "name": "client", "version": "1.0.0", "artifactSha256": digest('a') },
        "environment": { "platform": "darwin", "runtime": "python", "runtimeVersion": "3.12.4" },
        "profile": { "id": "mcp-res/oauth-boundary/v1", "version": "1.0.0", "manifestSha256": digest('b'), "protocolRevision": "2026-07-28" },
        "fixture": {
            "loopbackOnly": true,
            "syntheticCredentials": true,
            "realAuthorizationProvidersContacted": 0,
            "externalNetworkRequests": 0,
            "listenerSha256": digest('c')
        },
        "flow": {
            "resourceUri": "http://127.0.0.1:8080/mcp",
            "authorizationServerIssuer": "http://127.0.0.1:8081",
            "authorizationEndpoint": "http://127.0.0.1:8081/authorize",
            "tokenEndpoint": "http://127.0.0.1:8081/token",
            "clientId": "https://client.example/metadata.json",
            "redirectUri": "http://127.0.0.1:8082/callback",
            "requestedScopes": ["mcp:tools", "read"],
            "authorizedScopes": ["mcp:tools"],
            "codeChallengeMethod": "S256",
            "cimdSha256": digest('d'),
            "trustPolicyId": "policy/example"
        },
        "cases": [{
            "id": "audience-binding",
            "evidenceSource": "TEST_FIXTURE",
            "positive": oauth_probe(),
            "negative": oauth_probe(),
            "wrongReasonMutant": {
                "propertyReached": true,
                "observedReasonCode": "MCP_RES_OAUTH_SCOPE_MISMATCH",
                "expectedDiagnostic": "MCP_RES_OAUTH_WRONG_REASON",
                "artifactSha256": digest('e')
            }
        }],
        "privacy": {
            "tokenMaterialPersisted": false,
            "evidenceContainsCredentialMaterial": false,
            "authorizationErrorsSanitized": true
        },
        "cleanup": { "listenerClosed": true, "redirectListenerReleased": true, "observationSha256": digest('f') },
        "result": "PASS",
        "evaluationSha256": digest('0')
    })
}

fn experimental_profile(mut manifest: Value) -> Value {
    manifest["status"] = json!("EXPERIMENTAL");
    manifest["experimentalProvenance"] = json!({
        "proposalVersion": "SEP-0000 draft 3",
        "upstreamStatus": "proposed",
        "exactSource": "https://github.com/modelcontextprotocol/modelcontextprotocol/pull/1",
        "observedAt": "2026-08-28T00:48:04Z",
        "knownIncompatibilities": ["may change before adoption"],
        "removalMigrationPath": "drop the profile; no evidence migrates"
    });
    manifest
}

/// Adds every optional member of the evidence envelope to a copy of a corpus evidence.
fn enriched_evidence(evidence: &Value) -> Value {
    let mut evidence = evidence.clone();
    evidence["sourceEvidenceRefs"] = json!(["source/transcript.jsonl", "source/process.json"]);
    evidence["legacyAssertions"] =
        json!([{ "name": "cleanupComplete", "value": false, "strength": "LEGACY_SELF_ASSERTED" }]);
    if let Some(operations) = evidence["operations"].as_array_mut() {
        for operation in operations {
            if let Some(negative) = operation.get_mut("negativeObservation") {
                negative["mutantId"] = json!("mutant/drop-validation");
                negative["mutantKilled"] = json!(true);
            }
        }
    }
    evidence
}

fn built_seeds(corpus: &Path, corpus_seeds: &[Seed]) -> Vec<Seed> {
    let bundle = corpus_seeds
        .iter()
        .find(|s| s.kind == SchemaKind::ConformanceBundle && s.origin.contains("/valid/"))
        .map(|s| s.value.clone());
    let profile = corpus_seeds
        .iter()
        .find(|s| s.kind == SchemaKind::ReliabilityProfileManifest)
        .map(|s| s.value.clone());
    let capture = std::fs::read_dir(corpus.join("v0.2.0/official-conformance"))
        .ok()
        .and_then(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| p.to_string_lossy().ends_with(".capture.json"))
        })
        .map(|p| read_json(&p));
    let v01_bundle = {
        let path = corpus.join("v0.1.0/test-vectors/valid/minimal-valid-clean-control.json");
        path.is_file().then(|| read_json(&path))
    };

    let mut built = vec![
        (SchemaKind::DsseEnvelope, dsse_envelope()),
        (SchemaKind::AuthenticityRecord, authenticity_record()),
        (SchemaKind::AttestationStatement, attestation_statement()),
        (SchemaKind::TrustPolicy, trust_policy()),
        (SchemaKind::MigrationResult, migration_result(None)),
        (
            SchemaKind::OfficialConformanceAttachment,
            official_attachment(capture.as_ref()),
        ),
        (SchemaKind::ProfileEvaluation, profile_evaluation()),
        (SchemaKind::OauthBoundaryEvaluation, oauth_evaluation()),
    ];
    if let Some(original) =
        v01_bundle.filter(|b| b["schemaVersion"] == "mcp-res.conformance-bundle/0.1.0")
    {
        built.push((
            SchemaKind::MigrationResult,
            migration_result(Some(original)),
        ));
    }
    if let Some(profile) = profile {
        built.push((
            SchemaKind::ReliabilityProfileManifest,
            experimental_profile(profile),
        ));
    }
    if let Some(bundle) = bundle {
        let evidence = enriched_evidence(&bundle["evidence"]);
        let mut enriched = bundle.clone();
        enriched["evidence"] = evidence.clone();
        built.push((SchemaKind::EvidenceEnvelope, evidence));
        built.push((
            SchemaKind::AttestedConformanceBundle,
            json!({
                "schemaVersion": "mcp-res.attested-conformance-bundle/0.2.0",
                "bundle": enriched,
                "authenticity": authenticity_record()
            }),
        ));
    }
    built
        .into_iter()
        .map(|(kind, value)| Seed {
            origin: format!("built:{}", kind.name()),
            kind,
            value,
            expect_valid: true,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Mutations, applied in place and undone after each check (no document copies).

#[derive(Debug)]
enum Mutation {
    /// Replace the value at the pointer.
    Replace(String, Value, &'static str),
    /// Delete a key of the object at the pointer.
    Delete(String, String),
    /// Add a key to the object at the pointer.
    Add(String, String, Value),
}

impl Mutation {
    fn describe(&self) -> String {
        match self {
            Mutation::Replace(pointer, value, label) => {
                let mut shown = value.to_string();
                if shown.chars().count() > 60 {
                    let cut: String = shown.chars().take(60).collect();
                    shown = format!("{cut}... ({} chars)", value.to_string().len());
                }
                format!("replace {label} at '{pointer}' with {shown}")
            }
            Mutation::Delete(pointer, key) => format!("delete key '{key}' of '{pointer}'"),
            Mutation::Add(pointer, key, value) => {
                format!("add key '{key}': {value} to '{pointer}'")
            }
        }
    }
}

fn generate(value: &Value, pointer: &str, huge_budget: &mut usize, out: &mut Vec<Mutation>) {
    let replace = |v: Value, label: &'static str| Mutation::Replace(pointer.to_owned(), v, label);
    let before = out.len();
    match value {
        Value::Object(map) => {
            for key in map.keys() {
                out.push(Mutation::Delete(pointer.to_owned(), key.clone()));
            }
            out.push(Mutation::Add(
                pointer.to_owned(),
                "mcpresUnknown".into(),
                json!(1),
            ));
            out.push(Mutation::Add(
                pointer.to_owned(),
                String::new(),
                Value::Null,
            ));
            out.push(replace(Value::Null, "object"));
            out.push(replace(json!({}), "object"));
            out.push(replace(json!([]), "object"));
            for (key, child) in map {
                generate(
                    child,
                    &format!("{pointer}/{}", escape(key)),
                    huge_budget,
                    out,
                );
            }
        }
        Value::Array(items) => {
            out.push(replace(json!([]), "array"));
            out.push(replace(Value::Null, "array"));
            out.push(replace(json!({}), "array"));
            if let Some(first) = items.first() {
                let mut duplicated = items.clone();
                duplicated.insert(1, first.clone());
                out.push(replace(
                    Value::Array(duplicated),
                    "array (first item duplicated)",
                ));
                out.push(replace(
                    Value::Array(vec![first.clone()]),
                    "array (first item only)",
                ));
                let mut rest = items.clone();
                rest.remove(0);
                out.push(replace(Value::Array(rest), "array (first item removed)"));
                let mut with_null = items.clone();
                with_null.push(Value::Null);
                out.push(replace(Value::Array(with_null), "array (null appended)"));
            }
            for (index, child) in items.iter().enumerate() {
                generate(child, &format!("{pointer}/{index}"), huge_budget, out);
            }
        }
        leaf => {
            for (v, label) in [
                (Value::Null, "leaf"),
                (json!("x"), "leaf"),
                (json!(7), "leaf"),
                (json!(-1), "leaf"),
                (json!("a".repeat(LONG_LEN)), "leaf (long string)"),
                (json!([]), "leaf"),
                (json!({}), "leaf"),
                (json!(true), "leaf"),
                (json!(false), "leaf"),
                (json!(0), "leaf"),
                (json!(1.5), "leaf"),
            ] {
                if &v != leaf {
                    out.push(replace(v, label));
                }
            }
            match leaf {
                Value::String(s) => {
                    out.push(replace(json!(""), "string (empty)"));
                    out.push(replace(json!("\u{1F600}"), "string (astral)"));
                    out.push(replace(
                        json!(format!("{s}\u{1F600}")),
                        "string (astral appended)",
                    ));
                    out.push(replace(
                        json!(format!("{s}\n")),
                        "string (newline appended)",
                    ));
                    out.push(replace(json!(format!("{s}\r")), "string (CR appended)"));
                    out.push(replace(
                        json!(format!("{s}\u{2028}")),
                        "string (U+2028 appended)",
                    ));
                    out.push(replace(json!(format!("\r{s}")), "string (CR prepended)"));
                    out.push(replace(json!(format!("{s}x")), "string (char appended)"));
                    out.push(replace(json!(format!(" {s}")), "string (space prepended)"));
                    out.push(replace(json!(s.to_uppercase()), "string (uppercased)"));
                    out.push(replace(json!(s.to_lowercase()), "string (lowercased)"));
                    let mut chars = s.chars();
                    chars.next_back();
                    out.push(replace(json!(chars.as_str()), "string (last char dropped)"));
                    out.push(replace(
                        json!(s.replacen(':', "\u{2028}", 1)),
                        "string (colon to U+2028)",
                    ));
                    out.push(replace(
                        json!(s.replacen('T', " ", 1)),
                        "string (T to space)",
                    ));
                    out.push(replace(
                        json!(s.replacen('Z', "+0000", 1)),
                        "string (Z to +0000)",
                    ));
                    for n in [
                        1, 3, 4, 40, 41, 64, 65, 96, 97, 128, 129, 192, 193, 256, 257, 512, 513,
                        1024, 1025, 2048, 2049, 4096,
                    ] {
                        let padded: String =
                            s.chars().chain(std::iter::repeat('a')).take(n).collect();
                        out.push(replace(
                            json!(padded),
                            "string (padded/truncated to a bound)",
                        ));
                    }
                    if *huge_budget > 0 && s.len() >= 4 {
                        *huge_budget -= 1;
                        out.push(replace(json!("A".repeat(HUGE_LEN)), "string (huge)"));
                    }
                }
                Value::Number(n) => {
                    if let Some(i) = n.as_i64() {
                        for v in [i.saturating_sub(1), i.saturating_add(1)] {
                            out.push(replace(json!(v), "integer (neighbour)"));
                        }
                        out.push(replace(json!(i as f64 + 0.5), "integer (fraction)"));
                        out.push(replace(json!(i.to_string()), "integer (as string)"));
                    }
                    for v in [
                        json!(2),
                        json!(32),
                        json!(33),
                        json!(64),
                        json!(65),
                        json!(1024),
                        json!(1025),
                        json!(10_000),
                        json!(10_001),
                        json!(600_000),
                        json!(600_001),
                        json!(3_600_000),
                        json!(3_600_001),
                        json!(14_400_000),
                        json!(14_400_001),
                        json!(16_777_216),
                        json!(16_777_217),
                        json!(67_108_864),
                        json!(67_108_865),
                        json!(2_147_483_647_i64),
                        json!(2_147_483_648_i64),
                        json!(-2_147_483_648_i64),
                        json!(-2_147_483_649_i64),
                        json!(4_294_967_295_u64),
                        json!(4_294_967_296_u64),
                        json!(9_007_199_254_740_993_u64),
                        json!(u64::MAX),
                        json!(1.0),
                    ] {
                        out.push(replace(v, "integer (bound)"));
                    }
                }
                Value::Bool(b) => out.push(replace(
                    json!(if *b { "true" } else { "false" }),
                    "boolean (as string)",
                )),
                _ => {}
            }
            // Drop replacements that leave the leaf unchanged, and repeats.
            let mut seen = BTreeSet::new();
            let mut index = before;
            while index < out.len() {
                let keep = match &out[index] {
                    Mutation::Replace(_, v, _) => v != leaf && seen.insert(v.to_string()),
                    _ => true,
                };
                if keep {
                    index += 1;
                } else {
                    out.remove(index);
                }
            }
        }
    }
}

/// Applies `mutation`, runs `check`, and restores the document exactly.
fn with_mutation<R>(doc: &mut Value, mutation: &Mutation, check: impl FnOnce(&Value) -> R) -> R {
    match mutation {
        Mutation::Replace(pointer, value, _) => {
            let slot = doc.pointer_mut(pointer).expect("pointer exists");
            let original = std::mem::replace(slot, value.clone());
            let result = check(doc);
            *doc.pointer_mut(pointer).expect("pointer exists") = original;
            result
        }
        Mutation::Delete(pointer, key) => {
            let object = object_at(doc, pointer);
            let original = object.remove(key).expect("key exists");
            let result = check(doc);
            object_at(doc, pointer).insert(key.clone(), original);
            result
        }
        Mutation::Add(pointer, key, value) => {
            let object = object_at(doc, pointer);
            let previous = object.insert(key.clone(), value.clone());
            let result = check(doc);
            let object = object_at(doc, pointer);
            match previous {
                Some(previous) => {
                    object.insert(key.clone(), previous);
                }
                None => {
                    object.remove(key);
                }
            }
            result
        }
    }
}

fn object_at<'a>(doc: &'a mut Value, pointer: &str) -> &'a mut Map<String, Value> {
    doc.pointer_mut(pointer)
        .and_then(Value::as_object_mut)
        .expect("object at pointer")
}

/// Picks at most `limit` mutations spread evenly over `all`, starting at a `phase` in [0, 1) of
/// the stride, so that near-identical seeds cover different mutants.
fn spread(all: Vec<Mutation>, limit: usize, phase: f64) -> Vec<Mutation> {
    if all.len() <= limit {
        return all;
    }
    let stride = all.len() as f64 / limit as f64;
    let wanted: BTreeSet<usize> = (0..limit)
        .map(|k| ((k as f64 + phase) * stride) as usize)
        .filter(|&i| i < all.len())
        .collect();
    all.into_iter()
        .enumerate()
        .filter_map(|(i, m)| wanted.contains(&i).then_some(m))
        .collect()
}

/// A stable fraction in [0, 1) derived from `text` (FNV-1a).
fn phase_of(text: &str) -> f64 {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    (hash % 10_000) as f64 / 10_000.0
}

#[derive(Default)]
struct Tally {
    comparisons: AtomicUsize,
    accepted: AtomicUsize,
    rejected: AtomicUsize,
}

#[test]
fn our_schemas_decide_exactly_like_the_reference() {
    let Some(corpus) = corpus_dir() else { return };
    let reference = Reference::load(&corpus);

    // Seeds: every corpus document (both versions), every nested typed object, plus built ones.
    let mut files = Vec::new();
    json_files(&corpus.join("v0.2.0"), &mut files);
    json_files(&corpus.join("v0.1.0"), &mut files);
    let mut untyped = Vec::new();
    let mut seeds = Vec::new();
    for path in &files {
        let value = read_json(path);
        let origin = path
            .strip_prefix(&corpus)
            .unwrap_or(path)
            .display()
            .to_string();
        let before = seeds.len();
        collect_seeds(&origin, &value, "", &mut seeds);
        if seeds.len() == before || SchemaKind::detect(&value).is_none() {
            untyped.push((origin, value));
        }
    }
    let corpus_seed_count = seeds.len();
    let built = built_seeds(&corpus, &seeds);
    seeds.extend(built);

    // The same sub-document appears in many vectors: check each distinct (kind, document) once.
    let mut distinct = BTreeSet::new();
    seeds.retain(|seed| distinct.insert((seed.kind, seed.value.to_string())));

    let tally = Tally::default();
    let failures: Vec<String> = {
        // Unmutated: every seed and every untyped corpus document, under every kind.
        let mut failures = Vec::new();
        let whole = seeds
            .iter()
            .map(|s| (s.origin.as_str(), &s.value))
            .chain(untyped.iter().map(|(o, v)| (o.as_str(), v)));
        for (origin, value) in whole {
            for kind in SchemaKind::STANDARD {
                let ours = schema::is_valid(kind, value);
                let engine = schema::engine_is_valid(kind, value);
                let errors = schema::validate(kind, value);
                let theirs = reference.is_valid(kind, value);
                tally.comparisons.fetch_add(1, Ordering::Relaxed);
                if ours != theirs || engine != theirs || errors.is_empty() != theirs {
                    failures.push(format!(
                        "{origin} as {kind} (unmutated): ours: is_valid {} / engine {} / \
                         validate {}; reference {}; our errors: {errors:?}",
                        verdict(ours),
                        verdict(engine),
                        verdict(errors.is_empty()),
                        verdict(theirs)
                    ));
                }
            }
        }
        for seed in &seeds {
            if seed.expect_valid && !reference.is_valid(seed.kind, &seed.value) {
                failures.push(format!(
                    "{}: built seed is not valid under the reference {}: {:?}",
                    seed.origin,
                    seed.kind,
                    schema::validate(seed.kind, &seed.value)
                ));
            }
        }
        failures
    };

    let mut seeds_per_kind: BTreeMap<SchemaKind, usize> = BTreeMap::new();
    for seed in &seeds {
        *seeds_per_kind.entry(seed.kind).or_default() += 1;
    }
    let mutant_failures: Vec<String> = seeds
        .par_iter()
        .flat_map_iter(|seed| {
            let mut huge_budget = HUGE_PER_DOCUMENT;
            let mut all = Vec::new();
            generate(&seed.value, "", &mut huge_budget, &mut all);
            let limit =
                (MUTANTS_PER_KIND / seeds_per_kind[&seed.kind]).max(MIN_MUTANTS_PER_DOCUMENT);
            let mutations = spread(all, limit, phase_of(&seed.origin));
            let mut doc = seed.value.clone();
            let mut found = Vec::new();
            for (index, mutation) in mutations.iter().enumerate() {
                let (ours, engine, theirs) = with_mutation(&mut doc, mutation, |mutant| {
                    (
                        schema::is_valid(seed.kind, mutant),
                        schema::engine_is_valid(seed.kind, mutant),
                        reference.is_valid(seed.kind, mutant),
                    )
                });
                tally.comparisons.fetch_add(1, Ordering::Relaxed);
                if theirs {
                    tally.accepted.fetch_add(1, Ordering::Relaxed);
                } else {
                    tally.rejected.fetch_add(1, Ordering::Relaxed);
                }
                let errors_empty =
                    if index % VALIDATE_EVERY == 0 || ours != theirs || engine != theirs {
                        with_mutation(&mut doc, mutation, |mutant| {
                            schema::validate(seed.kind, mutant).is_empty()
                        })
                    } else {
                        theirs
                    };
                if ours != theirs || engine != theirs || errors_empty != theirs {
                    let errors = with_mutation(&mut doc, mutation, |mutant| {
                        schema::validate(seed.kind, mutant)
                    });
                    found.push(format!(
                        "{} as {}: {} -> ours: is_valid {} / engine {} / validate {}; \
                         reference {}; our errors: {errors:?}",
                        seed.origin,
                        seed.kind,
                        mutation.describe(),
                        verdict(ours),
                        verdict(engine),
                        verdict(errors_empty),
                        verdict(theirs)
                    ));
                }
            }
            assert_eq!(
                doc, seed.value,
                "mutations were not undone for {}",
                seed.origin
            );
            found
        })
        .collect();

    let kinds_seeded: BTreeSet<SchemaKind> = seeds.iter().map(|s| s.kind).collect();
    let accepted = tally.accepted.load(Ordering::Relaxed);
    let rejected = tally.rejected.load(Ordering::Relaxed);
    println!(
        "schema_differential: compared {} documents: {} distinct seeds covering {} kinds \
         ({} typed documents found in the corpus), {} untyped corpus documents, and {} mutants \
         ({} accepted, {} rejected by the reference); {} decisions compared in total",
        seeds.len() + untyped.len() + accepted + rejected,
        seeds.len(),
        kinds_seeded.len(),
        corpus_seed_count,
        untyped.len(),
        accepted + rejected,
        accepted,
        rejected,
        tally.comparisons.load(Ordering::Relaxed),
    );
    assert_eq!(
        kinds_seeded.len(),
        SchemaKind::STANDARD.len(),
        "every kind needs at least one seed: missing {:?}",
        SchemaKind::STANDARD
            .iter()
            .filter(|k| !kinds_seeded.contains(k))
            .collect::<Vec<_>>()
    );
    assert!(
        tally.accepted.load(Ordering::Relaxed) > 0,
        "no mutant was accepted: the seeds are probably invalid"
    );

    let all: Vec<String> = failures.into_iter().chain(mutant_failures).collect();
    if !all.is_empty() {
        let shown: Vec<&String> = all.iter().take(MAX_REPORTED).collect();
        panic!(
            "{} disagreement(s) between our schemas and the reference:\n{}",
            all.len(),
            shown
                .iter()
                .map(|s| format!("  - {s}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

fn verdict(valid: bool) -> &'static str {
    if valid { "accepts" } else { "rejects" }
}
