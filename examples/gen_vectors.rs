//! mcpres' own MCP-RES v0.2 test vectors.
//!
//! ```text
//! cargo run --example gen_vectors --no-default-features -- [--force] testdata/vectors
//! ```
//!
//! Writes `valid/*.json`, `invalid/*.json` and `catalog.json` under the output
//! directory, every file canonical JSON (`mcp-res-json-utf16-v1`) plus a
//! trailing newline. Output is deterministic: no clock, no randomness.
//! Existing files are never replaced unless `--force` is given.
//!
//! Every vector starts from one scenario (the `lighthouse-notes-server` MCP
//! server under a truncated-frame fault) sealed with
//! `mcpres::produce::builder`. Invalid vectors are *deep*: the fault is made in
//! the authored content and every digest is then recomputed, so exactly one
//! rule fails. The few vectors whose fault *is* a stale or wrong digest break
//! exactly one digest after sealing. Two vectors list more than one finding:
//! the multi-fault vector (on purpose) and the self-asserted-claim vector (a
//! producer boolean is an unknown key, so the closed schema fails as well).
//!
//! Each vector's expected findings are declared here, not computed; the
//! generator refuses to write a set the validator disagrees with.

use std::path::Path;
use std::process::ExitCode;

use mcpres::json::canonical::{self, sha256_hex};
use mcpres::produce::builder::{
    BundleBuilder, coverage_from_observations, finalize, observation_path, seal_integrity,
    seal_statement, to_file_bytes,
};
use mcpres::validate::codes as c;
use mcpres::validate::core::{execution_digest, validate_bundle};
use serde_json::{Value, json};

/// How a vector was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// A valid bundle.
    None,
    /// One fault in the authored content, every digest recomputed: one finding.
    Deep,
    /// One digest broken after sealing: one finding.
    Digest,
    /// A fault that two rules see (pre-schema rule and the closed schema).
    SchemaEntangled,
    /// Several independent faults.
    MultiFault,
}

impl Mutation {
    pub fn name(self) -> &'static str {
        match self {
            Mutation::None => "none",
            Mutation::Deep => "deep",
            Mutation::Digest => "digest",
            Mutation::SchemaEntangled => "schema-entangled",
            Mutation::MultiFault => "multi-fault",
        }
    }
}

/// One generated vector.
#[derive(Debug, Clone)]
pub struct Vector {
    pub id: &'static str,
    pub description: &'static str,
    pub mutation: Mutation,
    /// Every finding code `validate_bundle` must report, primary first.
    pub expected_findings: Vec<&'static str>,
    /// For valid vectors: the evidence class the validator derives.
    pub evidence_class: Option<&'static str>,
    pub doc: Value,
}

impl Vector {
    pub fn valid(&self) -> bool {
        self.expected_findings.is_empty()
    }

    pub fn path(&self) -> String {
        let folder = if self.valid() { "valid" } else { "invalid" };
        format!("{folder}/{}.json", self.id)
    }
}

// ---------------------------------------------------------------------------
// The scenario: lighthouse-notes-server under a truncated JSON-RPC frame.
// ---------------------------------------------------------------------------

const RUN_ID: &str = "run-lighthouse-2026-03-14-a";
const PROFILE_ID: &str = "mcp-res/server-tool-call/v1";
const CLEAN_OP: &str = "op-list-notes";
const NEGATIVE_OP: &str = "op-truncated-frame";
const FAULT_ID: &str = "fault/truncated-json-frame";
const POLICY_ID: &str = "policy/one-quiet-retry";
const ORACLE: &str = "obs-frame-oracle";
/// The raw capture a GENUINE_RUNTIME vector binds as source evidence.
pub const WIRE_PATH: &str = "raw/wire.bin";
pub const WIRE_MEDIA_TYPE: &str = "application/octet-stream";

fn sha(text: &str) -> String {
    sha256_hex(text.as_bytes())
}

fn tool(name: &str, version: &str) -> Value {
    json!({"name": name, "version": version, "sha256": sha(&format!("{name}@{version}"))})
}

fn subject_digest() -> String {
    sha("subject:lighthouse-notes-server@3.4.1")
}

/// 4 KiB of deterministic bytes standing in for a captured stdio wire log.
pub fn wire_bytes() -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    let mut block = sha("lighthouse wire capture, session 1");
    while out.len() < 4096 {
        out.extend_from_slice(&hex_bytes(&block));
        block = sha256_hex(block.as_bytes());
    }
    out.truncate(4096);
    out
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0))
        .collect()
}

/// The evidence classes, each with the observations that justify it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    GenuineRuntime,
    FixtureBackedProtocol,
    FixtureVerified,
    InstallationVerified,
    DocumentedOnly,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::GenuineRuntime => "GENUINE_RUNTIME",
            Class::FixtureBackedProtocol => "FIXTURE_BACKED_PROTOCOL",
            Class::FixtureVerified => "FIXTURE_VERIFIED",
            Class::InstallationVerified => "INSTALLATION_VERIFIED",
            Class::DocumentedOnly => "DOCUMENTED_ONLY",
        }
    }

    /// Observation ids, in evidence order.
    fn observations(self) -> &'static [&'static str] {
        match self {
            Class::GenuineRuntime => &[
                "obs-spawn",
                "obs-wire",
                ORACLE,
                "obs-secret-sweep",
                "obs-teardown",
            ],
            Class::FixtureBackedProtocol => &[
                "obs-wire",
                "obs-replay",
                ORACLE,
                "obs-secret-sweep",
                "obs-teardown",
            ],
            Class::FixtureVerified => &["obs-replay", ORACLE, "obs-secret-sweep", "obs-teardown"],
            Class::InstallationVerified => {
                &["obs-install", ORACLE, "obs-secret-sweep", "obs-teardown"]
            }
            Class::DocumentedOnly => &[ORACLE, "obs-secret-sweep", "obs-teardown"],
        }
    }
}

/// Type, reason code, operation and timing of each observation of the scenario.
fn observation(id: &str) -> Value {
    let (kind, reason, op, offset, duration) = match id {
        "obs-spawn" => (
            "PROCESS_EXECUTION",
            "CHILD_STARTED_AND_EXITED",
            Some(CLEAN_OP),
            5,
            280,
        ),
        "obs-wire" => (
            "PROTOCOL_EXCHANGE",
            "JSONRPC_ROUND_TRIP",
            Some(CLEAN_OP),
            40,
            120,
        ),
        "obs-replay" => (
            "FIXTURE_EXECUTION",
            "RECORDED_FRAMES_REPLAYED",
            Some(NEGATIVE_OP),
            410,
            90,
        ),
        "obs-install" => (
            "INSTALLATION_EXECUTION",
            "PACKAGE_INSTALLED_FROM_TARBALL",
            None,
            700,
            600,
        ),
        ORACLE => (
            "VALIDATOR_CHECK",
            "TRUNCATION_DETECTED",
            Some(NEGATIVE_OP),
            520,
            30,
        ),
        "obs-secret-sweep" => ("PRIVACY_SCAN", "NO_CREDENTIALS_IN_CAPTURE", None, 1900, 150),
        "obs-teardown" => ("CLEANUP_CHECK", "TEMP_WORKSPACE_REMOVED", None, 2100, 200),
        other => unreachable!("no observation {other} in the scenario"),
    };
    json!({
        "schemaVersion": "mcp-res.observation/0.2.0",
        "id": id,
        "type": kind,
        "strength": "INTEGRITY_BOUND",
        "producer": tool("mcpres-harness", "0.1.0"),
        "subjectRef": subject_digest(),
        "operationRef": op,
        "startedOffsetMs": offset,
        "durationMs": duration,
        "outcome": "PASS",
        "reasonCode": reason,
        "artifactRefs": [observation_path(id)],
    })
}

fn descriptor() -> Value {
    json!({
        "standardVersion": "0.2.0",
        "profileId": PROFILE_ID,
        "profileVersion": "2.0.0",
        "protocolRevision": "2025-11-25",
        "subjectIdentityDigest": subject_digest(),
        "configurationProfileDigest": sha("config:lighthouse-notes-server:stdio:default"),
        "operationClass": "tools/call",
        "faults": [{
            "id": FAULT_ID,
            "version": "1.1.0",
            "method": "FRAME_TRUNCATION",
            "seed": 9151,
            "targetOperationClass": "tools/call",
            "expectedEffect": "TRUNCATED_FRAME",
            "reproducibilitySha256": sha("fault/truncated-json-frame@1.1.0#9151"),
        }],
        "recoveryPolicies": [{
            "id": POLICY_ID,
            "retryLimit": 1,
            "maxBackoffMs": 50,
            "timeLimitMs": 3000,
            "cancellationBoundary": "request",
            "sideEffectModel": "READ_ONLY",
            "safetyMechanism": "request-id deduplication",
        }],
        "sideEffectModel": "READ_ONLY",
        "resourceLimits": {
            "inputBytes": 262144,
            "events": 2000,
            "retries": 1,
            "concurrency": 1,
            "scenarioDurationMs": 5000,
        },
        "validatorPolicy": tool("mcpres", "0.1.0"),
        "deterministicSeed": 9151,
    })
}

fn operations() -> Value {
    json!([
        {
            "runId": RUN_ID,
            "operationId": CLEAN_OP,
            "parentOperationId": null,
            "kind": "CLEAN_CONTROL",
            "faultId": null,
            "recoveryPolicyId": null,
            "attempt": 0,
            "outcome": "PASS",
            "startedOffsetMs": 0,
            "durationMs": 300,
        },
        {
            "runId": RUN_ID,
            "operationId": NEGATIVE_OP,
            "parentOperationId": null,
            "kind": "NEGATIVE_CONTROL",
            "faultId": FAULT_ID,
            "recoveryPolicyId": POLICY_ID,
            "attempt": 0,
            "outcome": "EXPECTED_FAILURE",
            "startedOffsetMs": 400,
            "durationMs": 200,
            "negativeObservation": {
                "propertyUnderTest": "tools/call response framing is validated",
                "propertyReached": true,
                "expectedVerdict": "REJECT",
                "observedVerdict": "REJECT",
                "expectedStopReason": "TRUNCATED_FRAME",
                "observedStopReason": "TRUNCATED_FRAME",
                "oracleEvidenceRef": observation_path(ORACLE),
                "prerequisitesReached": ["HANDSHAKE_DONE", "TOOL_LISTED", "CALL_SENT"],
            },
        },
    ])
}

fn trial_summary() -> Value {
    json!({
        "schemaVersion": "mcp-res.trial-summary/0.2.0",
        "plannedTrials": 1,
        "completedTrials": 1,
        "seeds": [9151],
        "processCount": 1,
        "counts": {"success": 1, "failure": 0, "incomplete": 0},
        "distinctOutcomeHashes": [sha("outcome:lighthouse:list-notes-ok+truncation-rejected")],
        "durationMs": {"minimum": 2400, "median": 2400, "p95": 2400},
        "environments": ["linux-x86_64-ci"],
        "stopRule": "single bounded trial",
        "classification": "SINGLE_OBSERVATION",
    })
}

/// The scenario for `class`, authored but not sealed. GENUINE_RUNTIME binds the
/// raw wire capture (bytes kept by the builder) as its source evidence.
pub fn scenario(class: Class) -> BundleBuilder {
    let observations = Value::Array(
        class
            .observations()
            .iter()
            .map(|id| observation(id))
            .collect(),
    );
    let coverage = coverage_from_observations(&observations);
    let mut evidence = json!({
        "schemaVersion": "mcp-res.evidence-envelope/0.2.0",
        "standardVersion": "0.2.0",
        "profile": {"id": PROFILE_ID, "version": "2.0.0"},
        "protocolRevision": "2025-11-25",
        "evidenceClassClaim": class.name(),
        "subject": {
            "subjectType": "MCP_SERVER",
            "name": "lighthouse-notes-server",
            "version": "3.4.1",
            "artifactSha256": sha("lighthouse-notes-server-3.4.1.tgz"),
            "identityDigest": subject_digest(),
        },
        "scenario": {"fingerprint": "", "descriptor": descriptor()},
        "run": {
            "id": RUN_ID,
            "startedAt": "2026-03-14T09:26:53.000Z",
            "finishedAt": "2026-03-14T09:26:55.500Z",
            "monotonicDurationMs": 2400,
            "environment": {
                "runner": tool("mcpres-harness", "0.1.0"),
                "os": "linux",
                "architecture": "x86_64",
                "environmentDigest": sha("env:linux-x86_64-ci:node-22"),
            },
        },
        "operations": operations(),
        "observations": observations,
        "coverage": coverage,
        "trialSummary": trial_summary(),
        "supportingArtifactManifestDigest": "",
    });
    if class == Class::GenuineRuntime {
        evidence["sourceEvidenceRefs"] = json!([WIRE_PATH]);
    }
    let statement = json!({
        "schemaVersion": "mcp-res.conformance-statement/0.2.0",
        "standardVersion": "0.2.0",
        "profileId": PROFILE_ID,
        "profileVersion": "2.0.0",
        "protocolRevision": "2025-11-25",
        "subjectType": "MCP_SERVER",
        "subjectName": "lighthouse-notes-server",
        "subjectVersion": "3.4.1",
        "evidenceClass": class.name(),
        "result": "PASS",
        "stabilityClassification": "SINGLE_OBSERVATION",
        "validator": tool("mcpres", "0.1.0"),
        "verifiedAt": "2026-03-14T09:27:30.000Z",
    });
    let mut builder = BundleBuilder::new(evidence, statement);
    if class == Class::GenuineRuntime {
        builder
            .add_raw(WIRE_PATH, WIRE_MEDIA_TYPE, wire_bytes())
            .expect("the wire capture path is a valid raw path");
    }
    builder
}

/// A sealed bundle of `class` after `edit` changed its authored content.
fn deep(class: Class, edit: impl FnOnce(&mut Value)) -> Result<Value, String> {
    let mut doc = scenario(class).build().map_err(|e| e.to_string())?.doc;
    edit(&mut doc);
    finalize(&mut doc).map_err(|e| e.to_string())?;
    Ok(doc)
}

/// A sealed bundle of `class` with one digest broken by `corrupt` afterwards.
fn broken(class: Class, corrupt: impl FnOnce(&mut Value)) -> Result<Value, String> {
    let mut doc = scenario(class).build().map_err(|e| e.to_string())?.doc;
    corrupt(&mut doc);
    Ok(doc)
}

fn negative(doc: &mut Value) -> &mut Value {
    &mut doc["evidence"]["operations"][1]["negativeObservation"]
}

fn observation_mut<'a>(doc: &'a mut Value, id: &str) -> &'a mut Value {
    doc["evidence"]["observations"]
        .as_array_mut()
        .and_then(|list| list.iter_mut().find(|o| o["id"] == id))
        .unwrap_or_else(|| unreachable!("no observation {id}"))
}

fn surface_mut<'a>(doc: &'a mut Value, surface: &str) -> &'a mut Value {
    doc["evidence"]["coverage"]["surfaces"]
        .as_array_mut()
        .and_then(|list| list.iter_mut().find(|s| s["surface"] == surface))
        .unwrap_or_else(|| unreachable!("no surface {surface}"))
}

fn push_operation(doc: &mut Value, op: Value) {
    if let Some(list) = doc["evidence"]["operations"].as_array_mut() {
        list.push(op);
    }
}

fn recovery(id: &str, parent: &str, attempt: u32, offset: u32) -> Value {
    json!({
        "runId": RUN_ID,
        "operationId": id,
        "parentOperationId": parent,
        "kind": "RECOVERY_ATTEMPT",
        "faultId": FAULT_ID,
        "recoveryPolicyId": POLICY_ID,
        "attempt": attempt,
        "outcome": "PASS",
        "startedOffsetMs": offset,
        "durationMs": 60,
    })
}

fn flip_hex(digest: &Value) -> Value {
    let s = digest.as_str().unwrap_or("");
    let mut chars: Vec<char> = s.chars().collect();
    if let Some(last) = chars.last_mut() {
        *last = if *last == '0' { '1' } else { '0' };
    }
    Value::from(chars.into_iter().collect::<String>())
}

fn valid(
    id: &'static str,
    class: Class,
    description: &'static str,
    edit: impl FnOnce(&mut Value),
) -> Result<Vector, String> {
    Ok(Vector {
        id,
        description,
        mutation: Mutation::None,
        expected_findings: Vec::new(),
        evidence_class: Some(class.name()),
        doc: deep(class, edit)?,
    })
}

fn invalid(
    id: &'static str,
    mutation: Mutation,
    expected_findings: &[&'static str],
    description: &'static str,
    doc: Result<Value, String>,
) -> Result<Vector, String> {
    Ok(Vector {
        id,
        description,
        mutation,
        expected_findings: expected_findings.to_vec(),
        evidence_class: None,
        doc: doc?,
    })
}

/// Every vector, valid ones first, in catalog order.
pub fn vectors() -> Result<Vec<Vector>, String> {
    use Class::*;
    use Mutation::{Deep, Digest, MultiFault, SchemaEntangled};
    let fbp = FixtureBackedProtocol;
    let v = vec![
        valid(
            "genuine-runtime-stdio-session",
            GenuineRuntime,
            "GENUINE_RUNTIME: the server process ran and exchanged MCP messages (integrity-bound PROCESS_EXECUTION and PROTOCOL_EXCHANGE) and the raw wire capture is bound as source evidence",
            |_| {},
        )?,
        valid(
            "genuine-runtime-repeated-stable",
            GenuineRuntime,
            "GENUINE_RUNTIME over three trials with one outcome hash, classified REPEATED_STABLE",
            |doc| {
                let t = &mut doc["evidence"]["trialSummary"];
                t["plannedTrials"] = json!(3);
                t["completedTrials"] = json!(3);
                t["seeds"] = json!([9151, 9152, 9153]);
                t["counts"]["success"] = json!(3);
                t["durationMs"] = json!({"minimum": 2310, "median": 2400, "p95": 2460});
                t["stopRule"] = json!("three bounded trials");
                t["classification"] = json!("REPEATED_STABLE");
                doc["statement"]["stabilityClassification"] = json!("REPEATED_STABLE");
            },
        )?,
        valid(
            "fixture-backed-protocol-replay",
            fbp,
            "FIXTURE_BACKED_PROTOCOL: MCP messages exchanged against recorded fixture frames, no process or source evidence",
            |_| {},
        )?,
        valid(
            "fixture-verified-replay-only",
            FixtureVerified,
            "FIXTURE_VERIFIED: the recorded fixture was replayed, no protocol exchange was observed",
            |_| {},
        )?,
        valid(
            "installation-verified-tarball",
            InstallationVerified,
            "INSTALLATION_VERIFIED: only the package installation was observed",
            |_| {},
        )?,
        valid(
            "documented-only-validator-checks",
            DocumentedOnly,
            "DOCUMENTED_ONLY: validator, privacy and cleanup checks only; nothing was executed",
            |_| {},
        )?,
        // --- pre-schema rules ---
        invalid(
            "self-asserted-protocol-boolean",
            SchemaEntangled,
            &[c::SELF_ASSERTED_CLAIM, c::SCHEMA_INVALID],
            "evidence.execution.protocolMessagesExchanged = true: a producer boolean instead of an observation; the closed schema also rejects the unknown key",
            deep(fbp, |doc| {
                doc["evidence"]["execution"] = json!({"protocolMessagesExchanged": true});
            }),
        )?,
        invalid(
            "negative-verdict-accepted",
            Deep,
            &[c::VACUOUS_NEGATIVE_CONTROL],
            "the truncated-frame negative control expected REJECT but observed PASS",
            deep(fbp, |doc| negative(doc)["observedVerdict"] = json!("PASS")),
        )?,
        invalid(
            "negative-property-unknown",
            Deep,
            &[c::PROPERTY_NOT_REACHED],
            "the negative control cannot tell whether response framing was ever checked (propertyReached UNKNOWN)",
            deep(fbp, |doc| {
                negative(doc)["propertyReached"] = json!("UNKNOWN")
            }),
        )?,
        invalid(
            "negative-stopped-on-timeout",
            Deep,
            &[c::WRONG_STOP_REASON],
            "the negative control failed, but on READ_TIMEOUT instead of TRUNCATED_FRAME",
            deep(fbp, |doc| {
                negative(doc)["observedStopReason"] = json!("READ_TIMEOUT");
            }),
        )?,
        invalid(
            "negative-mutant-lived",
            Deep,
            &[c::NEGATIVE_MUTANT_SURVIVED],
            "a mutant with the frame-length check removed was not killed",
            deep(fbp, |doc| {
                let n = negative(doc);
                n["mutantId"] = json!("mutant/frame-length-check-removed");
                n["mutantKilled"] = json!(false);
            }),
        )?,
        invalid(
            "negative-no-prerequisites",
            Deep,
            &[c::NEGATIVE_PREREQUISITE_MISSING],
            "the negative control lists no reached prerequisites",
            deep(fbp, |doc| negative(doc)["prerequisitesReached"] = json!([])),
        )?,
        // --- schema ---
        invalid(
            "schema-zero-process-count",
            Deep,
            &[c::SCHEMA_INVALID],
            "trialSummary.processCount is 0, below the schema minimum of 1",
            deep(fbp, |doc| {
                doc["evidence"]["trialSummary"]["processCount"] = json!(0);
            }),
        )?,
        // --- scenario, clock, operations ---
        invalid(
            "descriptor-profile-drift",
            Deep,
            &[c::SCENARIO_FINGERPRINT_MISMATCH],
            "the scenario descriptor names profile version 2.1.0 while the evidence ran 2.0.0 (fingerprint recomputed)",
            deep(fbp, |doc| {
                doc["evidence"]["scenario"]["descriptor"]["profileVersion"] = json!("2.1.0");
            }),
        )?,
        invalid(
            "run-finished-before-start",
            Deep,
            &[c::WALL_CLOCK_REVERSAL],
            "the run's finishedAt lies three seconds before its startedAt",
            deep(fbp, |doc| {
                doc["evidence"]["run"]["finishedAt"] = json!("2026-03-14T09:26:50.000Z");
            }),
        )?,
        invalid(
            "operation-outlives-run",
            Deep,
            &[c::CAUSAL_MISMATCH],
            "the clean control ends at 2500 ms of a 2400 ms run",
            deep(fbp, |doc| {
                doc["evidence"]["operations"][0]["durationMs"] = json!(2500);
            }),
        )?,
        invalid(
            "operation-from-other-run",
            Deep,
            &[c::CROSS_RUN_SUBSTITUTION],
            "the clean control was recorded in a different run and spliced in",
            deep(fbp, |doc| {
                doc["evidence"]["operations"][0]["runId"] = json!("run-lighthouse-2026-03-13-z");
            }),
        )?,
        invalid(
            "retry-over-budget",
            Deep,
            &[c::RETRY_LIMIT_EXCEEDED],
            "a second recovery attempt under a policy that allows one retry",
            deep(fbp, |doc| {
                push_operation(doc, recovery("op-retry-second", NEGATIVE_OP, 2, 650));
            }),
        )?,
        invalid(
            "retry-parent-loop",
            Deep,
            &[c::OPERATION_PARENT_CYCLE],
            "two recovery attempts name each other as parent",
            deep(fbp, |doc| {
                push_operation(doc, recovery("op-retry-east", "op-retry-west", 1, 650));
                push_operation(doc, recovery("op-retry-west", "op-retry-east", 1, 720));
            }),
        )?,
        // --- observations ---
        invalid(
            "observation-foreign-operation",
            Deep,
            &[c::OBSERVATION_CAUSAL_MISMATCH],
            "the cleanup observation refers to an operation this run never had",
            deep(fbp, |doc| {
                observation_mut(doc, "obs-teardown")["operationRef"] =
                    json!("op-from-another-plan");
            }),
        )?,
        invalid(
            "observation-artifact-unlisted",
            Deep,
            &[c::MISSING_OBSERVATION_ARTIFACT],
            "the protocol observation cites a packet capture the manifest does not list",
            deep(fbp, |doc| {
                if let Some(refs) = observation_mut(doc, "obs-wire")["artifactRefs"].as_array_mut()
                {
                    refs.push(json!("raw/pcap-never-stored.bin"));
                }
            }),
        )?,
        invalid(
            "observation-carried-by-sibling",
            Deep,
            &[c::OBSERVATION_HASH_MISMATCH],
            "the fixture observation points at the protocol observation's artifact, which does not carry it",
            deep(fbp, |doc| {
                observation_mut(doc, "obs-replay")["artifactRefs"] =
                    json!([observation_path("obs-wire")]);
            }),
        )?,
        invalid(
            "observation-digest-tampered",
            Digest,
            &[c::OBSERVATION_HASH_MISMATCH],
            "the privacy-scan observation's observationSha256 was altered after sealing (statement and manifest resealed around it)",
            broken(fbp, |doc| {
                let o = observation_mut(doc, "obs-secret-sweep");
                o["observationSha256"] = flip_hex(&o["observationSha256"]);
                reseal(doc);
            }),
        )?,
        // --- coverage, trials ---
        invalid(
            "required-stdio-uninstrumented",
            Deep,
            &[c::REQUIRED_SURFACE_UNOBSERVED],
            "STDIO_INPUT_OUTPUT is required but was not instrumented",
            deep(fbp, |doc| {
                let s = surface_mut(doc, "STDIO_INPUT_OUTPUT");
                s["status"] = json!("UNINSTRUMENTED");
                s["observationRefs"] = json!([]);
            }),
        )?,
        invalid(
            "trial-counts-overflow",
            Deep,
            &[c::TRIAL_SUMMARY_INCONSISTENT],
            "one completed trial, but the counts add up to two",
            deep(fbp, |doc| {
                doc["evidence"]["trialSummary"]["counts"]["failure"] = json!(1);
            }),
        )?,
        invalid(
            "stable-claim-two-outcomes",
            Deep,
            &[c::FALSE_STABILITY_CLAIM],
            "REPEATED_STABLE claimed over three trials that produced two distinct outcomes",
            deep(fbp, |doc| {
                let t = &mut doc["evidence"]["trialSummary"];
                t["plannedTrials"] = json!(3);
                t["completedTrials"] = json!(3);
                t["seeds"] = json!([9151, 9152, 9153]);
                t["counts"]["success"] = json!(3);
                t["distinctOutcomeHashes"] =
                    json!([sha("outcome:lighthouse:a"), sha("outcome:lighthouse:b")]);
                t["classification"] = json!("REPEATED_STABLE");
                doc["statement"]["stabilityClassification"] = json!("REPEATED_STABLE");
            }),
        )?,
        // --- evidence class, completion ---
        invalid(
            "evidence-claims-unbound-runtime",
            Deep,
            &[c::EVIDENCE_CLASS_PROMOTION],
            "the evidence claims GENUINE_RUNTIME citing a build log that is not in the manifest; the statement stays honest",
            deep(fbp, |doc| {
                doc["evidence"]["evidenceClassClaim"] = json!("GENUINE_RUNTIME");
                doc["evidence"]["sourceEvidenceRefs"] = json!(["raw/build-log-not-shipped.txt"]);
            }),
        )?,
        invalid(
            "statement-promotes-fixture-class",
            Deep,
            &[c::EVIDENCE_CLASS_PROMOTION],
            "a FIXTURE_VERIFIED run whose statement announces FIXTURE_BACKED_PROTOCOL",
            deep(FixtureVerified, |doc| {
                doc["statement"]["evidenceClass"] = json!("FIXTURE_BACKED_PROTOCOL");
            }),
        )?,
        invalid(
            "pass-with-failed-cleanup",
            Deep,
            &[c::COMPLETION_UNOBSERVED],
            "result PASS although the cleanup check failed",
            deep(fbp, |doc| {
                observation_mut(doc, "obs-teardown")["outcome"] = json!("FAIL")
            }),
        )?,
        // --- integrity and statement binding ---
        invalid(
            "bundle-digest-tampered",
            Digest,
            &[c::DIGEST_MISMATCH],
            "integrity.bundleDigest altered after sealing",
            broken(fbp, |doc| {
                doc["integrity"]["bundleDigest"] = flip_hex(&doc["integrity"]["bundleDigest"]);
            }),
        )?,
        invalid(
            "supporting-manifest-stale",
            Digest,
            &[c::DIGEST_MISMATCH],
            "a screenshot was added to the manifest after sealing and only bundleDigest was recomputed: supportingArtifactManifestDigest is stale",
            broken(fbp, |doc| {
                if let Some(list) = doc["integrity"]["artifacts"].as_array_mut() {
                    list.push(json!({
                        "path": "raw/late-screenshot.png",
                        "mediaType": "image/png",
                        "bytes": 1337,
                        "sha256": sha("late screenshot"),
                    }));
                }
                seal_integrity(doc).expect("sealed bundle");
            }),
        )?,
        invalid(
            "statement-from-sibling-run",
            Digest,
            &[c::EXECUTION_DIGEST_MISMATCH],
            "the statement's executionInstanceDigest belongs to a sibling run of the same scenario",
            broken(fbp, |doc| {
                let mut sibling = doc["evidence"].clone();
                sibling["run"]["id"] = json!("run-lighthouse-2026-03-14-b");
                doc["statement"]["executionInstanceDigest"] =
                    json!(execution_digest(&sibling, "PASS"));
                seal_integrity(doc).expect("sealed bundle");
            }),
        )?,
        invalid(
            "statement-names-fork",
            Deep,
            &[c::CAUSAL_MISMATCH],
            "the statement names lighthouse-notes-server-fork, the evidence lighthouse-notes-server",
            deep(fbp, |doc| {
                doc["statement"]["subjectName"] = json!("lighthouse-notes-server-fork");
            }),
        )?,
        // --- several faults at once ---
        invalid(
            "multi-fault-timeout-unwired-miscounted",
            MultiFault,
            &[
                c::WRONG_STOP_REASON,
                c::REQUIRED_SURFACE_UNOBSERVED,
                c::TRIAL_SUMMARY_INCONSISTENT,
            ],
            "three independent faults: the negative control stopped on READ_TIMEOUT, required MCP_WIRE_MESSAGES is UNKNOWN, and two seeds are recorded for one trial",
            deep(fbp, |doc| {
                negative(doc)["observedStopReason"] = json!("READ_TIMEOUT");
                let s = surface_mut(doc, "MCP_WIRE_MESSAGES");
                s["status"] = json!("UNKNOWN");
                s["observationRefs"] = json!([]);
                doc["evidence"]["trialSummary"]["seeds"] = json!([9151, 9152]);
            }),
        )?,
    ];
    Ok(v)
}

/// Re-seal the statement bindings and the manifest around a deliberately broken
/// value of the evidence.
fn reseal(doc: &mut Value) {
    seal_statement(doc).expect("sealed bundle");
    seal_integrity(doc).expect("sealed bundle");
}

/// Check every vector against the validator: the declared findings, exactly.
pub fn check(vectors: &[Vector]) -> Result<(), String> {
    let mut problems = Vec::new();
    for v in vectors {
        let report = validate_bundle(&v.doc);
        let got: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
        if got != v.expected_findings {
            problems.push(format!(
                "{}: expected findings {:?}, the validator reports {:?}",
                v.id, v.expected_findings, got
            ));
        }
        if let Some(class) = v.evidence_class
            && report.evidence_class.as_deref() != Some(class)
        {
            problems.push(format!(
                "{}: expected evidence class {class}, derived {:?}",
                v.id, report.evidence_class
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

fn canonical_line(value: &Value) -> Result<Vec<u8>, String> {
    to_file_bytes(value).map_err(|e| e.to_string())
}

/// Every output file (relative path, bytes): the vectors, then `catalog.json`.
pub fn render(vectors: &[Vector]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut files = Vec::new();
    let (mut valid, mut invalid) = (Vec::new(), Vec::new());
    for v in vectors {
        let bytes = canonical_line(&v.doc)?;
        let mut entry = json!({
            "id": v.id,
            "path": v.path(),
            "description": v.description,
            "mutation": v.mutation.name(),
            "expectedDiagnostics": v.expected_findings.first().map(|c| vec![*c]).unwrap_or_default(),
            "expectedFindings": v.expected_findings,
            "fileSha256": sha256_hex(&bytes),
        });
        if let Some(class) = v.evidence_class {
            entry["evidenceClass"] = json!(class);
        }
        if v.valid() {
            valid.push(entry);
        } else {
            invalid.push(entry);
        }
        files.push((v.path(), bytes));
    }
    let catalog = json!({
        "schemaVersion": "mcpres.test-vector-catalog/0.1.0",
        "canonicalizationAlgorithm": canonical::ALGORITHM,
        "generator": "examples/gen_vectors.rs",
        "valid": valid,
        "invalid": invalid,
    });
    files.push(("catalog.json".to_string(), canonical_line(&catalog)?));
    Ok(files)
}

/// Generate, check and write every vector under `out`. Refuses to replace an
/// existing file unless `force`. Returns the number of files written.
pub fn generate(out: &Path, force: bool) -> Result<usize, String> {
    let vectors = vectors()?;
    check(&vectors)?;
    let files = render(&vectors)?;
    write_files(out, &files, force)
}

/// The example bundles of `bundles/`: every file by relative path.
/// `example-genuine-runtime/` is the directory form of the GENUINE_RUNTIME
/// scenario with its raw wire capture; `example-fixture.json` the single-file
/// FIXTURE_BACKED_PROTOCOL scenario.
pub fn bundle_files() -> Result<Vec<(String, Vec<u8>)>, String> {
    let genuine = scenario(Class::GenuineRuntime)
        .build()
        .map_err(|e| e.to_string())?;
    let mut files: Vec<(String, Vec<u8>)> = genuine
        .dir_files()
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|(rel, bytes)| (format!("{GENUINE_EXAMPLE_DIR}/{rel}"), bytes))
        .collect();
    let fixture = scenario(Class::FixtureBackedProtocol)
        .build()
        .map_err(|e| e.to_string())?;
    files.push((
        FIXTURE_EXAMPLE_FILE.to_string(),
        fixture.file_bytes().map_err(|e| e.to_string())?,
    ));
    Ok(files)
}

/// Directory of the GENUINE_RUNTIME example bundle, under `bundles/`.
pub const GENUINE_EXAMPLE_DIR: &str = "example-genuine-runtime";
/// The single-file example bundle, under `bundles/`.
pub const FIXTURE_EXAMPLE_FILE: &str = "example-fixture.json";

/// Write `files` under `out`; refuse to replace anything unless `force`.
/// With `force`, the GENUINE_RUNTIME example directory is replaced whole so
/// that no stale file survives in it.
pub fn write_files(out: &Path, files: &[(String, Vec<u8>)], force: bool) -> Result<usize, String> {
    let existing: Vec<&str> = files
        .iter()
        .filter(|(rel, _)| std::fs::symlink_metadata(out.join(rel)).is_ok())
        .map(|(rel, _)| rel.as_str())
        .collect();
    if !existing.is_empty() && !force {
        return Err(format!(
            "{} file(s) already exist under {} ({}); pass --force to replace",
            existing.len(),
            out.display(),
            existing.join(", ")
        ));
    }
    for (rel, bytes) in files {
        let path = out.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(files.len())
}

/// Generate and write the example bundles under `out` (normally `bundles/`).
pub fn generate_bundles(out: &Path, force: bool) -> Result<usize, String> {
    let files = bundle_files()?;
    let dir = out.join(GENUINE_EXAMPLE_DIR);
    if force && std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    write_files(out, &files, force)
}

const USAGE: &str = "usage: gen_vectors [--force] OUT_DIR [--bundles BUNDLES_DIR]";

#[allow(dead_code)]
fn main() -> ExitCode {
    let mut force = false;
    let mut out = None;
    let mut bundles = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--force" => force = true,
            "--bundles" => match args.next() {
                Some(dir) => bundles = Some(dir),
                None => {
                    eprintln!("gen_vectors: --bundles needs a directory; {USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ if out.is_none() && !arg.starts_with('-') => out = Some(arg),
            _ => {
                eprintln!("gen_vectors: unexpected argument {arg:?}; {USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(out) = out else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let mut status = ExitCode::SUCCESS;
    match generate(Path::new(&out), force) {
        Ok(n) => println!("gen_vectors: wrote {n} files under {out}"),
        Err(e) => {
            eprintln!("gen_vectors: {e}");
            status = ExitCode::FAILURE;
        }
    }
    if let Some(dir) = bundles {
        match generate_bundles(Path::new(&dir), force) {
            Ok(n) => println!("gen_vectors: wrote {n} example bundle files under {dir}"),
            Err(e) => {
                eprintln!("gen_vectors: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}
