//! From recorded trials to a v0.2 bundle: raw artifacts, observations, coverage,
//! trial summary, and the privacy scan that runs over every artifact before
//! anything is written.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use super::client::ClientOutcome;
use super::privacy::{self, PrivacyFinding, PrivacyScanner};
use super::record::Recording;
use super::recovery::RecoveryOutcome;
use super::scenario::{CleanOutcome, NegativeOutcome};
use super::subject::Ended;
use super::vocab::{NegativeControl, RecoveryControl, Scenario};
use super::wire::SelfCheckRecord;
use crate::json::canonical;
use crate::model::vocab::{
    CoverageStatus, EvidenceClass, ObservationOutcome, ObservationType, OperationKind,
    OperationOutcome, Outcome, Stability, Strength, SubjectType, Surface, Verdict,
};
use crate::model::{
    Coverage, NegativeObservation, Observation, Operation, PropertyReached, Statement,
    SurfaceCoverage, Tool, TrialCounts, TrialDurations, TrialSummary,
};
use crate::produce::builder::{BundleBuilder, FinalizeError, observation_path};

/// One subject process of a trial, as recorded.
#[derive(Debug, Clone)]
pub struct SessionRecord {
    /// `clean` or the negative control's name.
    pub role: String,
    pub start_ms: u64,
    pub rec: Recording,
    pub ended: Ended,
}

/// One negative control of a trial.
#[derive(Debug, Clone)]
pub struct NegativeRecord {
    pub control: NegativeControl,
    pub outcome: NegativeOutcome,
    pub session: SessionRecord,
    /// The subject's injection log (reference server `--injection-log`), if written.
    pub injection_log: Option<Vec<u8>>,
    pub fault_injected: bool,
}

impl NegativeRecord {
    /// Property reached: the faulted call was sent and the subject logged the injection.
    /// The control's property is reached when the faulted request was sent,
    /// the injection was recorded, and every prerequisite the scenario names
    /// for it was reached.
    pub fn property_reached(&self) -> bool {
        let reached = self.prerequisites();
        self.fault_injected
            && self
                .outcome
                .prerequisites
                .iter()
                .any(|p| *p == "TOOL_CALL_SENT" || *p == "TARGET_REQUEST_SENT")
            && self
                .control
                .prerequisites
                .iter()
                // On 2026-07-28, server/discover opens what initialize opens.
                .all(|p| {
                    reached.iter().any(|r| {
                        r == p || (p == "SESSION_INITIALIZED" && *r == "SERVER_DISCOVERED")
                    })
                })
    }
    pub fn observed_as_expected(&self) -> bool {
        self.outcome.observed.as_ref().is_some_and(|j| {
            j.verdict == self.control.expected_verdict
                && j.stop_reason == self.control.expected_stop
        })
    }
    pub fn mutant_killed(&self) -> bool {
        self.outcome.mutant.as_ref().is_some_and(|j| {
            j.verdict != self.control.expected_verdict
                || j.stop_reason != self.control.expected_stop
        })
    }
    /// A negative control that shows the oracle can fail for the right reason.
    pub fn behaved(&self) -> bool {
        self.property_reached() && self.observed_as_expected() && self.mutant_killed()
    }
    /// A tool-contract control whose valid twin the subject did not accept
    /// on the same session: its refusal of the invalid input cannot be tied
    /// to the defect, so it decides nothing (the trial is then incomplete,
    /// never a success or a failure for it).
    pub fn undecided(&self) -> bool {
        self.control.input.is_some() && !self.outcome.prerequisites.contains(&"VALID_TWIN_ACCEPTED")
    }
    pub fn prerequisites(&self) -> Vec<&'static str> {
        let mut p = self.outcome.prerequisites.clone();
        if self.fault_injected {
            p.push("FAULT_INJECTED");
        }
        p
    }
}

/// One recovery control of a trial.
#[derive(Debug, Clone)]
pub struct RecoveryRecord {
    pub control: RecoveryControl,
    pub outcome: RecoveryOutcome,
    /// The faulted process, then the replacement when one was started.
    pub sessions: Vec<SessionRecord>,
    pub injection_log: Option<Vec<u8>>,
    pub fault_injected: bool,
}

impl RecoveryRecord {
    /// The fault was injected (the subject's log says so) and the recovery
    /// ended as the scenario expects.
    pub fn behaved(&self) -> bool {
        self.fault_injected && super::recovery::as_expected(&self.control, &self.outcome)
    }
}

/// The client-to-server faults of a trial, driven on one process.
#[derive(Debug, Clone)]
pub struct ClientRecord {
    pub outcome: ClientOutcome,
    pub session: SessionRecord,
}

/// One trial.
#[derive(Debug, Clone)]
pub struct TrialRecord {
    pub index: usize,
    pub seed: u32,
    pub start_ms: u64,
    pub end_ms: u64,
    pub clean: CleanOutcome,
    pub clean_session: SessionRecord,
    pub negatives: Vec<NegativeRecord>,
    /// The harness's self-checks (never counted as controls of the subject).
    pub self_checks: Vec<SelfCheckRecord>,
    pub recoveries: Vec<RecoveryRecord>,
    pub client: Option<ClientRecord>,
    /// The clean control failed fatally (its opening request got no answer),
    /// so the subject's other controls were not run: each is recorded as a
    /// CANCELLED operation.
    pub cancelled: bool,
}

impl TrialRecord {
    pub fn sessions(&self) -> impl Iterator<Item = &SessionRecord> {
        std::iter::once(&self.clean_session)
            .chain(self.negatives.iter().map(|n| &n.session))
            .chain(self.recoveries.iter().flat_map(|r| r.sessions.iter()))
            .chain(self.client.iter().map(|c| &c.session))
    }
    pub fn groups_gone(&self) -> bool {
        self.sessions().all(|s| s.ended.live_in_group == 0)
    }
    pub fn success(&self) -> bool {
        self.clean.passed
            && self.negatives.iter().all(NegativeRecord::behaved)
            // A self-check that failed means the oracle that judged the
            // subject cannot be trusted, so nothing it passed counts.
            && self.self_checks.iter().all(SelfCheckRecord::behaved)
            && self.recoveries.iter().all(RecoveryRecord::behaved)
            && self.client.as_ref().is_none_or(|c| c.outcome.passed())
            && self.groups_gone()
    }
    /// Incomplete: everything the trial did behaved, but its clean control
    /// could call no tool safely (generic), so the tool call the scenario
    /// claims was not shown, or a tool-contract control was undecided (its
    /// valid twin refused). Counted neither as a success nor as a failure.
    pub fn incomplete(&self) -> bool {
        let undecided = self.negatives.iter().any(NegativeRecord::undecided);
        (self.clean.incomplete() || (self.clean.passed && undecided))
            && self.negatives.iter().all(|n| n.behaved() || n.undecided())
            && self.self_checks.iter().all(SelfCheckRecord::behaved)
            && self.recoveries.iter().all(RecoveryRecord::behaved)
            && self.client.as_ref().is_none_or(|c| c.outcome.passed())
            && self.groups_gone()
    }
    /// Digest of what the trial concluded and of what the subject returned:
    /// verdicts and stop reasons, and a digest of every answer the subject
    /// gave in the clean and negative controls (results without `_meta`,
    /// error codes; the run's random probe texts and names replaced by
    /// placeholders; no timings, no ids).
    pub fn outcome_hash(&self) -> String {
        let negs: Vec<Value> = self
            .negatives
            .iter()
            .map(|n| {
                json!({
                    "control": n.control.name,
                    "answer": n.outcome.answer_digest(),
                    "observed": n.outcome.observed.as_ref().map(|j| [j.verdict, j.stop_reason]),
                    // Whether the mutant was killed, not its exact verdict: a
                    // seeded fault may land where the mutant fails differently.
                    "mutantKilled": n.mutant_killed(),
                    "propertyReached": n.property_reached(),
                })
            })
            .collect();
        let recoveries: Vec<Value> = self
            .recoveries
            .iter()
            .map(|r| {
                json!({
                    "control": r.control.name, "stopReason": r.outcome.stop_reason,
                    "recovered": r.outcome.recovered, "faultInjected": r.fault_injected,
                    "attempts": r.outcome.attempts.iter().map(|a| a.observed).collect::<Vec<_>>(),
                })
            })
            .collect();
        let client: Option<Vec<Value>> = self.client.as_ref().map(|c| {
            c.outcome
                .results
                .iter()
                .map(|r| json!([r.fault.name, r.answer, r.judgement.stop_reason]))
                .collect()
        });
        let mut v = json!({
            "clean": self.clean.stop_reason, "cleanAnswers": self.clean.answers_digest(),
            "negatives": negs, "groupsGone": self.groups_gone(),
        });
        if !self.self_checks.is_empty() {
            v["selfChecks"] = json!(
                self.self_checks
                    .iter()
                    .map(SelfCheckRecord::behaved)
                    .collect::<Vec<_>>()
            );
        }
        // Only scenarios that have them add these members, so the hashes of
        // the earlier scenarios are unchanged.
        if !recoveries.is_empty() {
            v["recoveries"] = json!(recoveries);
        }
        if let Some(client) = client {
            v["clientFaults"] = json!(client);
        }
        canonical::digest(&v).unwrap_or_default()
    }
}

/// Most manifest artifacts a run of `scenario` needs per trial (see spec/harness.md).
pub fn artifacts_per_trial(scenario: &Scenario, http: bool) -> usize {
    let n = scenario
        .negatives
        .iter()
        .filter(|c| !c.injector.is_self_check())
        .count();
    // Self-checks: one file for all of them, one observation each.
    let self_checks = scenario.negatives.len() - n;
    let self_checks = if self_checks == 0 { 0 } else { 1 + self_checks };
    // stdin/stdout/stderr of each process (over HTTP: stdout, stderr, raw
    // requests and raw responses), lifecycle, messages, clean oracle,
    // per negative an oracle file and an injection log; observations: process,
    // protocol, clean oracle, and per negative the oracle and the mutant check.
    let captures = if http { 4 } else { 3 };
    // Per recovery control: up to two processes, an oracle file, an injection
    // log, and two observations (the recovery check, the disconnect event).
    let r = scenario.recoveries.len();
    // The client faults: one process, an oracle file and one observation.
    let client = if scenario.client_faults.is_empty() {
        0
    } else {
        captures + 2
    };
    (1 + n) * captures + 3 + 2 * n + 3 + 2 * n + r * (2 * captures + 4) + client + self_checks
}

/// Artifacts independent of the trial count: three observations (privacy,
/// cleanup, filesystem), the privacy, cleanup and filesystem reports, the
/// subject artifact record, the scenario and the two documents.
pub const FIXED_ARTIFACTS: usize = 10;

// ---------------------------------------------------------------------------
// Bundle assembly
// ---------------------------------------------------------------------------

/// Everything run-wide the evidence needs besides the trials.
#[derive(Debug, Clone)]
pub struct RunFacts {
    pub run_id: String,
    /// The run's monotonic epoch and its wall-clock start (epoch milliseconds);
    /// the end is taken after the privacy scan, the last thing the run does.
    pub epoch: std::time::Instant,
    pub started_wall: i64,
    pub subject_name: String,
    pub subject_version: String,
    /// `subject.artifactSha256`: the digest of the executed files (observed),
    /// or for a server the harness did not start the declared artifact's.
    pub artifact_sha256: String,
    /// The identity record of `raw/subject-artifact.json` (executed files,
    /// declared artifact, reported identity), without the target.
    pub identity: Value,
    /// An executed file's bytes changed between the first session and the
    /// end of the last one: the run must not PASS.
    pub executed_changed: bool,
    /// `raw/filesystem-report.json`, for a subject the harness started.
    pub filesystem: Option<Value>,
    /// The subject wrote files that it left (its temporary directory, new or
    /// changed files in the working directory, open temporary files left).
    pub subject_wrote_files: bool,
    /// The CLEANUP_CHECK reason code: what was checked, or what was left.
    pub cleanup_reason: String,
    pub env_keys: Vec<String>,
    pub seed: u32,
    pub planned_trials: usize,
    pub tool: Value,
    pub cleanup: Value,
    pub cleanup_passed: bool,
    pub cleanup_span: (u64, u64),
    /// Driven over Streamable HTTP (else stdio).
    pub http: bool,
    /// HTTP: the target's kind, digest and remote opt-in (no URL, no port).
    pub target: Option<Value>,
    /// The protocol revision the run spoke.
    pub revision: super::vocab::Revision,
    /// The subject is a server the harness did not start (`--http URL` with no
    /// PROGRAM): no process was observed, so no PROCESS_EXECUTION is claimed.
    pub external: bool,
    /// Why the run stopped before its planned trials (a fatal failure of a
    /// clean control: the subject never answered its opening request).
    pub stopped_early: Option<String>,
}

/// The harness's tool identity (runner, producer and validator policy).
pub fn tool_identity() -> Value {
    let sha = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::read(p).ok())
        .map(|b| canonical::sha256_hex(&b))
        .unwrap_or_else(|| canonical::sha256_hex(b"mcpres-unknown-executable"));
    json!({"name": "mcpres", "version": env!("CARGO_PKG_VERSION"), "sha256": sha})
}

/// Frames the subject wrote (server-to-client) that are not JSON-RPC 2.0
/// messages: not JSON, not an object, or without `"jsonrpc": "2.0"`.
pub fn non_jsonrpc_frames(rec: &Recording) -> usize {
    rec.messages
        .iter()
        .filter(|m| m["direction"] == "server-to-client")
        .filter(|m| match m.get("message") {
            Some(msg) => msg["jsonrpc"] != "2.0",
            // A frame logged without its content says whether it parsed.
            None => m["jsonrpc"] != true,
        })
        .count()
}

fn jsonl(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        out.extend(canonical::to_vec(v).unwrap_or_default());
        out.push(b'\n');
    }
    out
}

/// The bundle, its privacy findings and the statement's result.
pub struct Assembled {
    pub builder: BundleBuilder,
    pub privacy: Vec<PrivacyFinding>,
    pub result: &'static str,
    pub classification: &'static str,
}

/// Build the bundle content from the trials.
pub fn assemble(
    scenario: &Scenario,
    trials: &[TrialRecord],
    facts: &RunFacts,
    scanner: &PrivacyScanner,
) -> Result<Assembled, FinalizeError> {
    let subject_digest = canonical::digest(&json!({
        "subjectType": "MCP_SERVER", "name": facts.subject_name,
        "version": facts.subject_version, "artifactSha256": facts.artifact_sha256,
    }))?;
    let tool = Tool::deserialize(&facts.tool)?;
    let mut raw: BTreeMap<String, (Vec<u8>, &'static str)> = BTreeMap::new();
    let mut operations: Vec<Value> = Vec::new();
    let mut observations: Vec<Value> = Vec::new();
    let observation = |id: &str,
                       kind: ObservationType,
                       op: Option<&str>,
                       span: (u64, u64),
                       pass: bool,
                       reason: &str,
                       refs: Vec<String>|
     -> Result<Value, FinalizeError> {
        let own = observation_path(id);
        let artifact_refs: Vec<&str> = std::iter::once(own.as_str())
            .chain(refs.iter().map(String::as_str))
            .collect();
        Ok(serde_json::to_value(Observation {
            schema_version: "mcp-res.observation/0.2.0",
            id,
            kind,
            strength: Strength::IntegrityBound,
            producer: tool.clone(),
            subject_ref: &subject_digest,
            operation_ref: op,
            started_offset_ms: ms(span.0),
            duration_ms: ms(span.1.saturating_sub(span.0)),
            outcome: if pass {
                ObservationOutcome::Pass
            } else {
                ObservationOutcome::Fail
            },
            reason_code: reason,
            artifact_refs,
            observation_sha256: "",
        })?)
    };
    let mut protocol_ids = Vec::new();
    let mut process_ids = Vec::new();
    let mut retry_ids: Vec<String> = Vec::new();
    let mut disconnect_ids: Vec<String> = Vec::new();
    for t in trials {
        let dir = format!("raw/trial-{}", t.index);
        let mut events = Vec::new();
        let mut messages = Vec::new();
        let mut stderr_refs = Vec::new();
        for s in t.sessions() {
            for (stream, bytes) in [
                ("stdin", &s.rec.stdin),
                ("stdout", &s.rec.stdout),
                ("stderr", &s.rec.stderr),
                ("http-requests", &s.rec.http_requests),
                ("http-responses", &s.rec.http_responses),
            ] {
                let path = format!("{dir}/{}.{stream}.bin", s.role);
                if stream == "stderr" {
                    stderr_refs.push(path.clone());
                }
                raw.insert(path, (bytes.clone(), "application/octet-stream"));
            }
            events.extend(s.rec.events.iter().cloned());
            messages.extend(s.rec.messages.iter().cloned());
        }
        let lifecycle = format!("{dir}/lifecycle.jsonl");
        let message_log = format!("{dir}/messages.jsonl");
        raw.insert(lifecycle.clone(), (jsonl(&events), "application/jsonl"));
        raw.insert(message_log.clone(), (jsonl(&messages), "application/jsonl"));

        let clean_op = format!("t{}-clean", t.index);
        let clean_span = (t.clean_session.start_ms, t.clean_session.ended.end_ms);
        operations.push(part(Operation {
            run_id: &facts.run_id,
            operation_id: &clean_op,
            parent_operation_id: None,
            kind: OperationKind::CleanControl,
            fault_id: None,
            recovery_policy_id: None,
            attempt: 0,
            // Incomplete: every step it made was accepted; the tool call it
            // did not make is the clean oracle's NOT_OBSERVED below.
            outcome: pass_or_fail(t.clean.passed || t.clean.incomplete()),
            started_offset_ms: ms(clean_span.0),
            duration_ms: ms(clean_span.1 - clean_span.0),
            negative_observation: None,
        })?);
        let clean_oracle = format!("{dir}/clean.oracle.json");
        let steps: Vec<Value> = t.clean.steps.iter().map(|s| s.to_json()).collect();
        raw.insert(clean_oracle.clone(), (canonical::to_vec(&json!({
            "control": "clean", "passed": t.clean.passed, "stopReason": t.clean.stop_reason,
            "serverName": t.clean.server_name, "serverVersion": t.clean.server_version, "steps": steps,
        }))?, "application/json"));

        if !facts.external {
            let pid = format!("obs-t{}-process", t.index);
            let mut refs = vec![lifecycle];
            refs.extend(stderr_refs);
            let trial_span = (t.start_ms, t.end_ms);
            let gone = t.groups_gone();
            observations.push(observation(
                &pid,
                ObservationType::ProcessExecution,
                Some(&clean_op),
                trial_span,
                gone,
                if gone {
                    "PROCESS_GROUPS_REAPED"
                } else {
                    "PROCESS_GROUP_SURVIVED"
                },
                refs,
            )?);
            process_ids.push(pid);
        }
        let wid = format!("obs-t{}-protocol", t.index);
        // A round trip counts only when every frame the subject wrote in the
        // clean control was a JSON-RPC 2.0 message.
        let foreign = non_jsonrpc_frames(&t.clean_session.rec);
        let exchange_ok = t.clean.round_trip && foreign == 0;
        observations.push(observation(
            &wid,
            ObservationType::ProtocolExchange,
            Some(&clean_op),
            clean_span,
            exchange_ok,
            match (t.clean.round_trip, foreign) {
                (true, 0) => "JSONRPC_ROUND_TRIP",
                (_, 1..) => "NON_JSONRPC_FRAME",
                (false, 0) => "NO_ROUND_TRIP",
            },
            vec![
                message_log,
                format!("{dir}/clean.stdin.bin"),
                format!("{dir}/clean.stdout.bin"),
                format!("{dir}/clean.http-requests.bin"),
                format!("{dir}/clean.http-responses.bin"),
            ],
        )?);
        protocol_ids.push(wid);
        observations.push(observation(
            &format!("obs-t{}-clean-oracle", t.index),
            ObservationType::ValidatorCheck,
            Some(&clean_op),
            clean_span,
            t.clean.passed,
            if t.clean.passed {
                "CLEAN_CONTROL_ACCEPTED"
            } else {
                "CLEAN_CONTROL_REJECTED"
            },
            vec![clean_oracle],
        )?);
        if t.clean.incomplete()
            && let Some(o) = observations.last_mut()
        {
            // No tool could be called safely: the clean control's claim (a
            // tool call) was not observed, which is neither a pass nor a
            // failure of the subject.
            o["outcome"] = json!(ObservationOutcome::NotObserved.as_str());
            o["reasonCode"] = json!(super::wire::NO_SAFE_TOOL_CALL);
        }

        for n in &t.negatives {
            let c = &n.control;
            let op = format!("t{}-{}", t.index, c.name);
            let span = (n.session.start_ms, n.session.ended.end_ms);
            let oracle_path = format!("{dir}/{}.oracle.json", c.name);
            let injection_path = format!("{dir}/{}.injection.jsonl", c.name);
            raw.insert(
                injection_path.clone(),
                (
                    n.injection_log.clone().unwrap_or_default(),
                    "application/jsonl",
                ),
            );
            raw.insert(oracle_path.clone(), (canonical::to_vec(&json!({
                "control": c.name, "fault": c.fault, "trigger": c.trigger, "injectedBy": c.injector.method(),
                "boundary": c.boundary, "seed": t.seed, "propertyUnderTest": c.property,
                "propertyReached": n.property_reached(), "prerequisitesReached": n.prerequisites(),
                "expected": {"verdict": c.expected_verdict, "stopReason": c.expected_stop},
                "observed": n.outcome.observed.as_ref().map(|j| j.to_json()),
                "mutant": {"id": c.mutant.id(), "judgement": n.outcome.mutant.as_ref().map(|j| j.to_json()), "killed": n.mutant_killed()},
                "framesJudged": n.outcome.frames,
            }))?, "application/json"));
            let observed = n.outcome.observed.clone();
            let behaved = n.behaved();
            let fault_id = format!("fault/{}", c.fault);
            let prerequisites = n.prerequisites();
            let negative_observation = match observed.as_ref() {
                Some(j) if behaved => Some(NegativeObservation {
                    property_under_test: &c.property,
                    property_reached: PropertyReached::Known(true),
                    expected_verdict: verdict(&c.expected_verdict)?,
                    observed_verdict: verdict(j.verdict)?,
                    expected_stop_reason: &c.expected_stop,
                    observed_stop_reason: j.stop_reason,
                    oracle_evidence_ref: &oracle_path,
                    prerequisites_reached: prerequisites.clone(),
                    mutant_id: Some(c.mutant.id()),
                    mutant_killed: Some(true),
                }),
                _ => None,
            };
            operations.push(part(Operation {
                run_id: &facts.run_id,
                operation_id: &op,
                parent_operation_id: None,
                kind: if behaved {
                    OperationKind::NegativeControl
                } else {
                    OperationKind::FaultCase
                },
                fault_id: Some(&fault_id),
                recovery_policy_id: None,
                attempt: 0,
                outcome: if behaved {
                    OperationOutcome::ExpectedFailure
                } else {
                    OperationOutcome::Fail
                },
                started_offset_ms: ms(span.0),
                duration_ms: ms(span.1 - span.0),
                negative_observation,
            })?);
            let as_expected = n.property_reached() && n.observed_as_expected();
            observations.push(observation(
                &format!("obs-t{}-{}-oracle", t.index, c.name),
                ObservationType::ValidatorCheck,
                Some(&op),
                span,
                as_expected,
                if as_expected {
                    "EXPECTED_REJECTION_OBSERVED"
                } else {
                    "EXPECTED_REJECTION_MISSING"
                },
                vec![
                    oracle_path.clone(),
                    format!("{dir}/{}.stdin.bin", c.name),
                    format!("{dir}/{}.stdout.bin", c.name),
                    format!("{dir}/{}.http-requests.bin", c.name),
                    format!("{dir}/{}.http-responses.bin", c.name),
                    injection_path,
                ],
            )?);
            let killed = n.mutant_killed();
            observations.push(observation(
                &format!("obs-t{}-{}-mutant", t.index, c.name),
                ObservationType::ValidatorCheck,
                Some(&op),
                span,
                killed,
                if killed {
                    "MUTANT_KILLED"
                } else {
                    "MUTANT_SURVIVED"
                },
                vec![oracle_path],
            )?);
        }

        if t.cancelled {
            // Not run: nothing was observed, so no observation refers to these.
            let at = t.clean_session.ended.end_ms;
            // Every one is a FAULT_CASE that never ran.
            let mut cancel = |op: String, fault: &str, policy: Option<&str>| {
                let fault_id = format!("fault/{fault}");
                operations.push(part(Operation {
                    run_id: &facts.run_id,
                    operation_id: &op,
                    parent_operation_id: None,
                    kind: OperationKind::FaultCase,
                    fault_id: Some(&fault_id),
                    recovery_policy_id: policy,
                    attempt: 0,
                    outcome: OperationOutcome::Cancelled,
                    started_offset_ms: ms(at),
                    duration_ms: 0,
                    negative_observation: None,
                })?);
                Ok::<(), FinalizeError>(())
            };
            for c in scenario
                .negatives
                .iter()
                .filter(|c| !c.injector.is_self_check())
            {
                cancel(format!("t{}-{}", t.index, c.name), &c.fault, None)?;
            }
            for c in &scenario.recoveries {
                cancel(
                    format!("t{}-{}", t.index, c.name),
                    &c.fault,
                    Some(c.policy.id.as_str()),
                )?;
            }
            for f in &scenario.client_faults {
                cancel(format!("t{}-client-{}", t.index, f.name), f.kind.id(), None)?;
            }
        }

        if !t.self_checks.is_empty() {
            let path = format!("{dir}/self-checks.json");
            raw.insert(
                path.clone(),
                (
                    canonical::to_vec(&json!({
                        "selfChecks": t.self_checks.iter().map(SelfCheckRecord::to_json).collect::<Vec<_>>(),
                        "note": "faults applied by the harness to a copy of the clean control's recorded tools/list answer; the subject never saw them; they show that the oracle can fail, and are not controls of the subject",
                    }))?,
                    "application/json",
                ),
            );
            for sc in &t.self_checks {
                let ok = sc.behaved();
                observations.push(observation(
                    &format!("obs-t{}-selfcheck-{}", t.index, sc.control.name),
                    ObservationType::ValidatorCheck,
                    None,
                    clean_span,
                    ok,
                    match (sc.injected(), ok) {
                        (false, _) => "HARNESS_SELF_CHECK_NOT_RUN",
                        (true, true) => "HARNESS_SELF_CHECK_PASSED",
                        (true, false) => "HARNESS_SELF_CHECK_FAILED",
                    },
                    vec![
                        path.clone(),
                        format!("{dir}/clean.stdout.bin"),
                        format!("{dir}/clean.http-responses.bin"),
                    ],
                )?);
            }
        }

        for r in &t.recoveries {
            let c = &r.control;
            let o = &r.outcome;
            let op = format!("t{}-{}", t.index, c.name);
            let oracle_path = format!("{dir}/{}.recovery.json", c.name);
            let injection_path = format!("{dir}/{}.injection.jsonl", c.name);
            raw.insert(
                injection_path.clone(),
                (
                    r.injection_log.clone().unwrap_or_default(),
                    "application/jsonl",
                ),
            );
            let policy = &c.policy;
            raw.insert(oracle_path.clone(), (canonical::to_vec(&json!({
                "control": c.name, "fault": c.fault, "trigger": "request-2", "injectedBy": "SUBJECT_FAULT_FLAG",
                "boundary": c.boundary, "seed": t.seed, "faultInjected": r.fault_injected,
                "policy": {"id": policy.id, "retryLimit": policy.retry_limit, "initialBackoffMs": policy.initial_backoff_ms,
                           "maxBackoffMs": policy.max_backoff_ms, "attemptTimeoutMs": policy.attempt_timeout_ms,
                           "timeLimitMs": policy.time_limit_ms, "cancellationBoundary": policy.cancellation_boundary,
                           "sideEffectModel": policy.side_effect_model, "safetyMechanism": policy.safety_mechanism},
                "prerequisitesReached": o.prerequisites, "attempts": o.attempts.iter().map(|a| a.to_json()).collect::<Vec<_>>(),
                "expectedRecovered": c.expect_recovered, "recovered": o.recovered, "stopReason": o.stop_reason,
                "detail": o.detail, "effectsAfterRecovery": o.effects, "disconnectObserved": o.disconnect_observed,
                "asExpected": r.behaved(),
            }))?, "application/json"));
            // The faulted first attempt, then one operation per retry.
            let first = o.attempts.first();
            let first_span = first.map_or((o.started_ms, o.ended_ms), |a| {
                (a.sent_ms, a.ended_ms.max(a.sent_ms))
            });
            let fault_id = format!("fault/{}", c.fault);
            operations.push(part(Operation {
                run_id: &facts.run_id,
                operation_id: &op,
                parent_operation_id: None,
                kind: OperationKind::FaultCase,
                fault_id: Some(&fault_id),
                recovery_policy_id: Some(&policy.id),
                attempt: 0,
                outcome: match first.map(|a| a.observed) {
                    Some("SUCCEEDED") => OperationOutcome::Pass,
                    Some("NO_RESPONSE_IN_TIME")
                        if first.is_some_and(|a| a.action == "CANCEL_AND_RETRY") =>
                    {
                        OperationOutcome::Cancelled
                    }
                    _ => OperationOutcome::Fail,
                },
                started_offset_ms: ms(first_span.0),
                duration_ms: ms(first_span.1 - first_span.0),
                negative_observation: None,
            })?);
            let last = o.attempts.len().saturating_sub(1);
            for (i, a) in o.attempts.iter().enumerate().skip(1) {
                let outcome = if a.observed == "SUCCEEDED" {
                    OperationOutcome::Pass
                } else if i == last && o.stop_reason == "TIME_LIMIT_REACHED" {
                    OperationOutcome::TimeLimit
                } else {
                    OperationOutcome::Fail
                };
                let retry_id = format!("{op}-retry-{}", a.attempt);
                operations.push(part(Operation {
                    run_id: &facts.run_id,
                    operation_id: &retry_id,
                    parent_operation_id: Some(&op),
                    kind: OperationKind::RecoveryAttempt,
                    fault_id: Some(&fault_id),
                    recovery_policy_id: Some(&policy.id),
                    attempt: i64::from(a.attempt),
                    outcome,
                    started_offset_ms: ms(a.sent_ms),
                    duration_ms: ms(a.ended_ms.max(a.sent_ms) - a.sent_ms),
                    negative_observation: None,
                })?);
            }
            let mut refs = vec![oracle_path.clone(), injection_path];
            for s in &r.sessions {
                for stream in ["stdin", "stdout", "http-requests", "http-responses"] {
                    refs.push(format!("{dir}/{}.{stream}.bin", s.role));
                }
            }
            let span = (o.started_ms, o.ended_ms.max(o.started_ms));
            let behaved = r.behaved();
            let check_id = format!("obs-t{}-{}-recovery", t.index, c.name);
            observations.push(observation(
                &check_id,
                ObservationType::ValidatorCheck,
                Some(&op),
                span,
                behaved,
                if behaved {
                    "RECOVERY_AS_EXPECTED"
                } else {
                    "RECOVERY_NOT_AS_EXPECTED"
                },
                refs,
            )?);
            retry_ids.push(check_id);
            if o.disconnect_observed {
                let event_id = format!("obs-t{}-{}-disconnect", t.index, c.name);
                let faulted = r
                    .sessions
                    .first()
                    .map(|s| s.role.clone())
                    .unwrap_or_default();
                observations.push(observation(
                    &event_id,
                    ObservationType::TransportEvent,
                    Some(&op),
                    first_span,
                    true,
                    "TRANSPORT_CLOSED_UNDER_FAULT",
                    vec![
                        format!("{dir}/lifecycle.jsonl"),
                        format!("{dir}/{faulted}.stdout.bin"),
                        oracle_path,
                    ],
                )?);
                disconnect_ids.push(event_id);
            }
        }

        if let Some(client) = &t.client {
            let o = &client.outcome;
            let oracle_path = format!("{dir}/client.oracle.json");
            raw.insert(oracle_path.clone(), (canonical::to_vec(&json!({
                "control": "client-faults", "sessionOpened": o.opened,
                "faults": o.results.iter().map(|r| r.to_json()).collect::<Vec<_>>(),
                "notRun": scenario.client_faults.iter().skip(o.results.len()).map(|f| f.name.clone()).collect::<Vec<_>>(),
                "passed": o.passed(),
            }))?, "application/json"));
            let mut first_op = None;
            for f in &scenario.client_faults {
                let op = format!("t{}-client-{}", t.index, f.name);
                let result = o.results.iter().find(|r| r.fault.name == f.name);
                let span = result.map_or((o.started_ms, o.ended_ms), |r| {
                    (r.sent_ms, r.ended_ms.max(r.sent_ms))
                });
                let fault_id = format!("fault/{}", f.kind.id());
                operations.push(part(Operation {
                    run_id: &facts.run_id,
                    operation_id: &op,
                    parent_operation_id: None,
                    kind: OperationKind::FaultCase,
                    fault_id: Some(&fault_id),
                    recovery_policy_id: None,
                    attempt: 0,
                    outcome: pass_or_fail(result.is_some_and(|r| r.passed())),
                    started_offset_ms: ms(span.0),
                    duration_ms: ms(span.1 - span.0),
                    negative_observation: None,
                })?);
                first_op.get_or_insert(op);
            }
            let passed = o.passed();
            observations.push(observation(
                &format!("obs-t{}-client", t.index),
                ObservationType::ValidatorCheck,
                first_op.as_deref(),
                (o.started_ms, o.ended_ms.max(o.started_ms)),
                passed,
                if passed {
                    "CLIENT_FAULTS_HANDLED"
                } else {
                    "CLIENT_FAULT_MISHANDLED"
                },
                vec![
                    oracle_path,
                    format!("{dir}/client.stdin.bin"),
                    format!("{dir}/client.stdout.bin"),
                ],
            )?);
        }
    }

    // Source evidence: what the subject's artifact digest was computed over.
    raw.insert(
        "raw/subject-artifact.json".into(),
        (
            canonical::to_vec(&subject_artifact_record(facts))?,
            "application/json",
        ),
    );
    if let Some(report) = &facts.filesystem {
        raw.insert(
            "raw/filesystem-report.json".into(),
            (canonical::to_vec(report)?, "application/json"),
        );
    }
    raw.insert(
        "raw/scenario.json".into(),
        (canonical::to_vec(&scenario.document)?, "application/json"),
    );
    raw.insert(
        "raw/cleanup-report.json".into(),
        (canonical::to_vec(&facts.cleanup)?, "application/json"),
    );

    // The schema requires at least one byte per artifact: empty captures (an
    // empty stderr, a missing injection log) are left out, and so are refs to them.
    raw.retain(|_, (bytes, _)| !bytes.is_empty());
    for o in &mut observations {
        let own = observation_path(o["id"].as_str().unwrap_or(""));
        if let Some(refs) = o["artifactRefs"].as_array_mut() {
            refs.retain(|r| r.as_str().is_some_and(|r| r == own || raw.contains_key(r)));
        }
    }

    // Privacy scan over every raw artifact (raw bytes and JSON-decoded
    // strings), redacting before anything is written.
    let since_epoch = || u64::try_from(facts.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
    let privacy_start = since_epoch();
    let scanned = privacy::scan_artifacts(&mut raw, scanner);
    raw.insert(
        "raw/privacy-report.json".into(),
        (canonical::to_vec(&scanned.report)?, "application/json"),
    );
    let privacy_ok = scanned.passed();
    let privacy_span = (privacy_start, since_epoch());
    observations.push(observation(
        "obs-privacy",
        ObservationType::PrivacyScan,
        None,
        privacy_span,
        privacy_ok,
        scanned.reason(),
        vec!["raw/privacy-report.json".into()],
    )?);
    let privacy = scanned.findings;
    observations.push(observation(
        "obs-cleanup",
        ObservationType::CleanupCheck,
        None,
        facts.cleanup_span,
        facts.cleanup_passed,
        &facts.cleanup_reason,
        vec!["raw/cleanup-report.json".into()],
    )?);
    if facts.filesystem.is_some() {
        let (pass, reason) = filesystem_outcome(facts);
        observations.push(observation(
            "obs-filesystem",
            ObservationType::FilesystemEffect,
            None,
            facts.cleanup_span,
            pass,
            reason,
            vec!["raw/filesystem-report.json".into()],
        )?);
    }

    // Coverage, derived from what was recorded: a transport surface is
    // INSTRUMENTED only when bytes were captured on it in this run, the wire
    // surface only when the subject wrote at least one frame that parsed as
    // JSON-RPC; otherwise UNINSTRUMENTED (a required surface that observed
    // nothing makes the bundle fail validation, as it should).
    let captured =
        |pick: fn(&Recording) -> bool| trials.iter().any(|t| t.sessions().any(|s| pick(&s.rec)));
    let observed_status = |seen: bool| {
        if seen {
            CoverageStatus::Instrumented
        } else {
            CoverageStatus::Uninstrumented
        }
    };
    let wire_status = observed_status(captured(|r| {
        r.messages.iter().any(|m| {
            m["direction"] == "server-to-client"
                && (m["message"]["jsonrpc"] == "2.0" || m["jsonrpc"] == true)
        })
    }));
    let stdio_status = observed_status(captured(|r| !r.stdin.is_empty() && !r.stdout.is_empty()));
    let requests_status = observed_status(captured(|r| !r.http_requests.is_empty()));
    let responses_status = observed_status(captured(|r| !r.http_responses.is_empty()));
    let cleanup_ids = ["obs-cleanup".to_string()];
    let filesystem_ids = ["obs-filesystem".to_string()];
    let surface = |name: Surface| -> SurfaceCoverage<'_> {
        use CoverageStatus::{Instrumented, NotApplicable, ObservedIndirectly, Uninstrumented};
        let (required, status, refs): (bool, CoverageStatus, &[String]) = match name {
            Surface::McpWireMessages => (true, wire_status, &protocol_ids),
            Surface::StdioInputOutput if !facts.http => (true, stdio_status, &protocol_ids),
            Surface::RawHttpRequests if facts.http => (true, requests_status, &protocol_ids),
            Surface::RawHttpResponses if facts.http => (true, responses_status, &protocol_ids),
            Surface::ChildProcessLifecycle if facts.external => (false, Uninstrumented, &[]),
            Surface::ChildProcessLifecycle => (true, Instrumented, &process_ids),
            Surface::SourceEvidence if facts.external => (false, Uninstrumented, &[]),
            Surface::Cleanup => (true, Instrumented, &cleanup_ids),
            Surface::SourceEvidence => (
                false,
                ObservedIndirectly,
                &process_ids[..process_ids.len().min(1)],
            ),
            Surface::Retries if !scenario.recoveries.is_empty() => (true, Instrumented, &retry_ids),
            Surface::TransportDisconnects if !disconnect_ids.is_empty() => {
                (false, Instrumented, &disconnect_ids)
            }
            // In the sandbox, every file a subject left anywhere is listed
            // from the overlays' upper layers (obs-filesystem): instrumented.
            Surface::FilesystemOutputs
                if facts
                    .filesystem
                    .as_ref()
                    .is_some_and(|f| f["sandbox"]["sandboxed"] == true) =>
            {
                (false, Instrumented, &filesystem_ids)
            }
            // Without it, what the subjects left in their temporary
            // directories and the working directory: outcomes, not each write.
            Surface::FilesystemOutputs if facts.filesystem.is_some() => {
                (false, ObservedIndirectly, &filesystem_ids)
            }
            Surface::TransportDisconnects | Surface::FilesystemOutputs | Surface::CacheBehavior => {
                (false, Uninstrumented, &[])
            }
            _ => (false, NotApplicable, &[]),
        };
        SurfaceCoverage {
            surface: name,
            required,
            status,
            observation_refs: refs.iter().take(32).map(String::as_str).collect(),
        }
    };
    let coverage = part(Coverage {
        schema_version: "mcp-res.observation-coverage/0.2.0",
        surfaces: Surface::ALL.iter().map(|s| surface(*s)).collect(),
    })?;

    // Trial summary from the runs.
    let success = trials.iter().filter(|t| t.success()).count();
    let incomplete = trials.iter().filter(|t| t.incomplete()).count();
    let mut hashes: Vec<String> = trials.iter().map(TrialRecord::outcome_hash).collect();
    hashes.sort();
    hashes.dedup();
    let mut durations: Vec<u64> = trials.iter().map(|t| t.end_ms - t.start_ms).collect();
    durations.sort_unstable();
    let pick = |q: f64| {
        durations[((q * durations.len() as f64).ceil() as usize).clamp(1, durations.len()) - 1]
    };
    let all_run = trials.len() >= facts.planned_trials;
    let classification = if !all_run {
        // The scenario's duration limit stopped the run early.
        Stability::Incomplete
    } else if trials.len() == 1 {
        Stability::SingleObservation
    } else if hashes.len() > 1 {
        Stability::Flaky
    } else if success == trials.len() {
        Stability::RepeatedStable
    } else if success + incomplete == trials.len() {
        // Every trial behaved, but (some of) their clean controls could call
        // no tool safely.
        Stability::Incomplete
    } else {
        // Repeated, identical failures: not stable success, not flaky.
        Stability::EnvironmentDependent
    };
    let os_arch = format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH);
    let stop_rule = format!(
        "{} planned trials, each run to completion; no trial starts after the scenario duration limit of {} ms{}",
        facts.planned_trials,
        scenario.scenario_duration_ms,
        if facts.stopped_early.is_some() {
            "; stopped after a clean control whose opening request got no answer"
        } else {
            ""
        }
    );
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let trial_summary = part(TrialSummary {
        schema_version: "mcp-res.trial-summary/0.2.0",
        planned_trials: count(facts.planned_trials),
        completed_trials: count(trials.len()),
        seeds: trials.iter().map(|t| i64::from(t.seed)).collect(),
        process_count: count(
            trials
                .iter()
                .map(|t| t.sessions().count())
                .sum::<usize>()
                .clamp(1, 1024),
        ),
        counts: TrialCounts {
            success: count(success),
            failure: count(trials.len() - success - incomplete),
            incomplete: count(incomplete),
        },
        distinct_outcome_hashes: hashes,
        duration_ms: Some(TrialDurations {
            minimum: ms(durations[0]),
            median: ms(pick(0.5)),
            p95: ms(pick(0.95)),
        }),
        environments: vec![&os_arch],
        stop_rule: &stop_rule,
        classification,
    })?;

    // A file the harness executed that changed during the run means the
    // trials did not all run the same subject: nothing they showed is a PASS.
    // Trials whose clean control could call no tool safely (and that
    // otherwise behaved) make the result INCOMPLETE, not FAIL: nothing the
    // subject did was wrong, but the tool call the scenario claims was not
    // shown.
    let run_ok = all_run && privacy_ok && facts.cleanup_passed && !facts.executed_changed;
    let result = if run_ok && success == trials.len() {
        Outcome::Pass
    } else if run_ok && success + incomplete == trials.len() {
        Outcome::Incomplete
    } else {
        Outcome::Fail
    };
    // The validator's rule: a passing process execution and protocol
    // exchange, and source evidence (the executed files' observed hashes,
    // which exist only for a subject the harness started).
    let has_source_evidence = !facts.external;
    let passed = |kind: ObservationType| {
        observations.iter().any(|o| {
            o["type"] == kind.as_str() && o["outcome"] == ObservationOutcome::Pass.as_str()
        })
    };
    let derived_genuine = passed(ObservationType::ProcessExecution)
        && passed(ObservationType::ProtocolExchange)
        && has_source_evidence;
    let class = if derived_genuine {
        EvidenceClass::GenuineRuntime
    } else {
        EvidenceClass::DocumentedOnly
    };
    let profile_id = "mcp-res/server-tool-call/v1";
    // The operation class the run exercised: tools/call only when a tool
    // call was made and accepted in a clean control; else the handshake.
    let operation_class = if trials.iter().any(|t| t.clean.tool_called()) {
        "tools/call"
    } else if facts.revision.is_stateless() {
        "server/discover"
    } else {
        "initialize"
    };
    let fault = |id: &str, method: &str, class: &str, effect: &str, trigger: &str| {
        json!({
            "id": format!("fault/{id}"), "version": "1.0.0", "method": method,
            "seed": facts.seed, "targetOperationClass": class, "expectedEffect": effect,
            "reproducibilitySha256": canonical::digest(&json!({"fault": id, "trigger": trigger, "seed": facts.seed})).unwrap_or_default(),
        })
    };
    let mut faults: Vec<Value> = Vec::new();
    let mut declared = std::collections::BTreeSet::new();
    // Self-checks fault the harness's own copy of a frame, not the subject:
    // they are no fault of the experiment on the subject.
    for c in scenario
        .negatives
        .iter()
        .filter(|c| !c.injector.is_self_check())
    {
        if declared.insert(c.fault.clone()) {
            faults.push(fault(
                &c.fault,
                c.injector.method(),
                match c.injector {
                    super::vocab::Injector::RequestUnknownMethod => "unknown method",
                    _ => "tools/call",
                },
                &c.expected_effect,
                &c.trigger,
            ));
        }
    }
    for r in &scenario.recoveries {
        if declared.insert(r.fault.clone()) {
            faults.push(fault(
                &r.fault,
                "SUBJECT_FAULT_FLAG",
                "tools/call",
                "transient failure, recovered by retry",
                "request-2",
            ));
        }
    }
    for f in &scenario.client_faults {
        if declared.insert(f.kind.id().to_string()) {
            faults.push(fault(
                f.kind.id(),
                "HARNESS_CLIENT_INPUT",
                "client-to-server frame",
                "rejected input, subject stays usable",
                "after initialize",
            ));
        }
    }
    let recovery_policies: Vec<Value> = scenario
        .recovery_policies
        .iter()
        .map(|p| {
            json!({
                "id": p.id, "retryLimit": p.retry_limit, "maxBackoffMs": p.max_backoff_ms,
                "timeLimitMs": p.time_limit_ms, "cancellationBoundary": p.cancellation_boundary,
                "sideEffectModel": p.side_effect_model, "safetyMechanism": p.safety_mechanism,
            })
        })
        .collect();
    // Declared by the scenario (READ_ONLY, or IDEMPOTENT for the recovery
    // scenarios' calls), unless the run saw the subject leave files behind:
    // then it had side effects, whatever was declared.
    let side_effect_model = if facts.subject_wrote_files {
        "SIDE_EFFECTING"
    } else if scenario.named_tool.is_some() {
        // A tool the operator named: the harness does not know its effects.
        "UNKNOWN"
    } else if scenario.recoveries.is_empty() {
        "READ_ONLY"
    } else {
        "IDEMPOTENT"
    };
    let retries: u32 = scenario
        .recoveries
        .iter()
        .map(|r| r.policy.retry_limit)
        .sum::<u32>()
        .min(32);
    // The configuration: the checked scenario document itself, plus the
    // run's shape (trials, environment names, transport). Nothing machine-
    // or run-specific.
    let mut configuration = json!({
        "scenario": scenario.document,
        "cleanControl": super::vocab::clean_steps_for(&scenario.clean_steps, facts.revision),
        "trials": facts.planned_trials, "environmentKeys": facts.env_keys,
        "transport": if facts.http { "streamable-http" } else { "stdio" },
    });
    // The tool the operator named (`--tool`, `--tool-args`): only its digest
    // is written, inside the configuration digest.
    if let Some(named) = &scenario.named_tool {
        configuration["toolCall"] = json!({"name": named.name, "arguments": named.arguments});
    }
    let descriptor = json!({
        "standardVersion": "0.2.0", "profileId": profile_id, "profileVersion": "2.0.0",
        "protocolRevision": facts.revision.as_str(), "subjectIdentityDigest": subject_digest,
        "configurationProfileDigest": canonical::digest(&configuration)?, "operationClass": operation_class,
        "faults": faults, "recoveryPolicies": recovery_policies, "sideEffectModel": side_effect_model,
        "resourceLimits": {"inputBytes": 4194304, "events": 100000, "retries": retries, "concurrency": 1,
                           "scenarioDurationMs": scenario.scenario_duration_ms.clamp(1, 3_600_000)},
        "validatorPolicy": tool, "deterministicSeed": facts.seed,
    });
    // The run ends here: monotonic duration rounded up, and a wall-clock end
    // no earlier than the start plus that duration.
    let monotonic_ms = since_epoch() + 1;
    let started_at = crate::json::time::format_rfc3339_millis(facts.started_wall);
    let finished_at = crate::json::time::format_rfc3339_millis(
        crate::json::time::now_millis()
            .max(facts.started_wall + i64::try_from(monotonic_ms).unwrap_or(0)),
    );
    let mut evidence = json!({
        "schemaVersion": "mcp-res.evidence-envelope/0.2.0", "standardVersion": "0.2.0",
        "profile": {"id": profile_id, "version": "2.0.0"},
        "protocolRevision": facts.revision.as_str(), "evidenceClassClaim": class,
        "subject": {"subjectType": "MCP_SERVER", "name": facts.subject_name, "version": facts.subject_version,
                    "artifactSha256": facts.artifact_sha256, "identityDigest": subject_digest},
        "scenario": {"fingerprint": "", "descriptor": descriptor},
        "run": {"id": facts.run_id, "startedAt": started_at, "finishedAt": finished_at,
                "monotonicDurationMs": monotonic_ms,
                "environment": {"runner": tool, "os": std::env::consts::OS, "architecture": std::env::consts::ARCH,
                                "environmentDigest": canonical::digest(&json!({"os": std::env::consts::OS, "arch": std::env::consts::ARCH, "environmentKeys": facts.env_keys}))?}},
        "operations": operations, "observations": observations, "coverage": coverage,
        "trialSummary": trial_summary, "supportingArtifactManifestDigest": "",
    });
    // Source evidence is the observed hashes of what was executed, chosen
    // from what the run observed (not from the class): a server the harness
    // did not start has none.
    if has_source_evidence {
        evidence["sourceEvidenceRefs"] = json!(["raw/subject-artifact.json"]);
    }
    // The three digests are sealed by the builder.
    let statement = part(Statement {
        schema_version: "mcp-res.conformance-statement/0.2.0",
        standard_version: "0.2.0",
        profile_id,
        profile_version: "2.0.0",
        protocol_revision: facts.revision.as_str(),
        subject_type: SubjectType::McpServer,
        subject_name: &facts.subject_name,
        subject_version: &facts.subject_version,
        evidence_class: class,
        result,
        scenario_fingerprint: "",
        execution_instance_digest: "",
        stability_classification: classification,
        evidence_sha256: "",
        validator: tool.clone(),
        verified_at: &finished_at,
    })?;
    let mut builder = BundleBuilder::new(evidence, statement);
    for (path, (bytes, media)) in raw {
        builder.add_raw(&path, media, bytes)?;
    }
    Ok(Assembled {
        builder,
        privacy,
        result: result.as_str(),
        classification: classification.as_str(),
    })
}

/// A typed part as the JSON value the bundle builder seals.
fn part(value: impl serde::Serialize) -> Result<Value, FinalizeError> {
    Ok(serde_json::to_value(value)?)
}

/// A span in milliseconds as a document integer (spans are bounded by the scenario's
/// duration limit; a value past `i64::MAX` cannot occur and is clamped).
fn ms(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn pass_or_fail(passed: bool) -> OperationOutcome {
    if passed {
        OperationOutcome::Pass
    } else {
        OperationOutcome::Fail
    }
}

/// An oracle verdict word as the schema's enum (the scenario schema allows no other).
fn verdict(word: &str) -> Result<Verdict, FinalizeError> {
    Verdict::parse(word).ok_or(FinalizeError::Shape {
        pointer: "/evidence/operations/negativeObservation".into(),
        expected: "a verdict of PASS, REJECT, FAIL or INCOMPLETE",
    })
}

/// `raw/subject-artifact.json`: the identity record (executed files,
/// declared artifact, reported identity) plus the subject's name and version
/// as the evidence states them and the target.
fn subject_artifact_record(facts: &RunFacts) -> Value {
    let mut record = facts.identity.clone();
    record["artifactSha256"] = json!(facts.artifact_sha256);
    record["subjectName"] = json!(facts.subject_name);
    record["subjectVersion"] = json!(facts.subject_version);
    record["target"] = facts
        .target
        .clone()
        .map(|mut t| {
            t["startedByHarness"] = json!(!facts.external);
            t
        })
        .unwrap_or_else(
            || json!({"transport": "stdio", "targetKind": "LOCAL_STDIO", "startedByHarness": true}),
        );
    record
}

/// The FILESYSTEM_EFFECT observation: PASS when the subjects left no file
/// (nothing in their temporary directories, nothing new or changed in the
/// working directory, no open temporary file left).
fn filesystem_outcome(facts: &RunFacts) -> (bool, &'static str) {
    if facts.subject_wrote_files {
        (false, "SUBJECT_FILES_LEFT")
    } else {
        (true, "NO_SUBJECT_FILES_LEFT")
    }
}
