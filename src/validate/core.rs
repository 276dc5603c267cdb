//! The core rules of MCP-RES v0.2 for a conformance bundle, in the reference order:
//! pre-schema negative-control rules, the closed schema, then the semantic rules
//! (scenario identity, wall clock, operations, observations, coverage, trials,
//! evidence class, completion, integrity manifest, execution digest, statement).

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::diag::codes as c;
use crate::diag::{Finding, Report};
use crate::json::Doc;
use crate::json::canonical::{self, DigestAndLen, sha256_hex};
use crate::json::locate::escape_token;
use crate::json::reader::Written;
use crate::json::time::rfc3339_micros;
use crate::model::{Artifact, Bundle, Evidence, Observation, Operation};
use crate::schema::{self, SchemaKind};

/// Keys that are self-asserted producer booleans wherever they appear in evidence.
const SELF_ASSERTED_KEYS: [&str; 4] = [
    "actualRuntime",
    "protocolMessagesExchanged",
    "privacyScanPassed",
    "cleanupCompleted",
];
/// v0.1 execution booleans that must not reappear in v0.2 evidence.
const SELF_ASSERTED_EXECUTION_KEYS: [&str; 4] = [
    "actualRuntime",
    "protocolMessagesExchanged",
    "installationExecuted",
    "regressionExecuted",
];

pub use crate::model::digests::{bundle_digest, execution_digest, supporting_manifest_digest};
use crate::model::vocab::{
    CoverageStatus, EvidenceClass, ObservationOutcome, ObservationType, OperationKind,
    OperationOutcome, Outcome, Stability, Strength, Surface,
};
pub use crate::model::vocab::{
    EVIDENCE_CLASSES, EVIDENCE_PATH, OBSERVATION_MEDIA_TYPE, STATEMENT_PATH, SURFACES,
};

/// Validate a v0.2 conformance bundle document with every core rule.
pub fn validate_bundle(doc: &Value) -> Report {
    validate_bundle_written(doc, None)
}

/// [`validate_bundle`] of a document read from canonically written bytes
/// (`written`, as [`crate::json::reader::parse_with_layout`] gives them with
/// `doc`): the evidence, observation, statement, descriptor and manifest
/// digests are taken over those bytes in place instead of over a new
/// serialization. Same report, as long as `doc` is what was read from them.
pub fn validate_bundle_written(doc: &Value, written: Option<Written<'_>>) -> Report {
    let source = written.map_or(Source::Value(doc), Source::Written);
    judge(&Doc::from_value(doc), source)
}

/// [`validate_bundle_written`] of a document read as a [`Doc`]
/// ([`crate::json::reader::parse_doc_with_layout`] gives both): the rules read
/// the `Doc`; a `Value` is built only when the input was not written
/// canonically and its digests must be taken over a new serialization.
pub fn validate_bundle_doc(doc: &Doc<'_>, written: Option<Written<'_>>) -> Report {
    match written {
        Some(written) => judge(doc, Source::Written(written)),
        None => judge(doc, Source::Value(&doc.to_value())),
    }
}

/// Where a bundle's digests are taken from: the same document as the one the
/// rules read, either as the canonically written bytes it was read from
/// (digests in place) or as a [`Value`] (digests over a new serialization).
#[derive(Clone, Copy)]
enum Source<'a> {
    Written(Written<'a>),
    Value(&'a Value),
}

/// The rules over `doc`, digests over `source`.
fn judge(doc: &Doc<'_>, source: Source<'_>) -> Report {
    let mut findings = pre_schema(doc);
    let schema_errors = schema::validate_doc(SchemaKind::ConformanceBundle, doc);
    for e in &schema_errors {
        findings.push(Finding::new(
            c::SCHEMA_INVALID,
            e.instance_path.clone(),
            format!("schema: {} ({})", e.message, e.keyword),
        ));
    }
    let mut evidence_class = None;
    if schema_errors.is_empty() {
        match Bundle::view(doc) {
            Ok(bundle) => {
                let mut ctx = Semantic::new(&bundle, source);
                ctx.run(&mut findings);
                evidence_class = Some(ctx.derived_class.to_string());
            }
            Err(e) => findings.push(Finding::new(
                c::SCHEMA_INVALID,
                "",
                format!("document does not have the bundle shape: {e}"),
            )),
        }
    }
    Report::from_findings(findings, schema_errors, evidence_class)
}

// ---------------------------------------------------------------------------
// Pre-schema rules: run on whatever shape the document has, never fail on it.
// ---------------------------------------------------------------------------

fn find_key_anywhere(value: &Doc<'_>, names: &[&str], path: &mut String) -> Option<String> {
    // Look first without building paths: almost every document has none of the keys.
    // Bit `n` of `lengths` is set when a name is `n` bytes long (bit 63: 63 or
    // more): one test sets almost every member name aside.
    fn contains(value: &Doc<'_>, names: &[&str], lengths: u64) -> bool {
        let named = |k: &str| lengths & (1 << k.len().min(63)) != 0 && names.contains(&k);
        match value {
            Doc::Obj(map) => map
                .iter()
                .any(|(k, v)| named(k) || contains(v, names, lengths)),
            Doc::Arr(items) => items.iter().any(|v| contains(v, names, lengths)),
            _ => false,
        }
    }
    let lengths = names.iter().fold(0u64, |m, n| m | 1 << n.len().min(63));
    if !contains(value, names, lengths) {
        return None;
    }
    match value {
        Doc::Obj(map) => {
            for (k, v) in map {
                let len = path.len();
                path.push('/');
                path.push_str(&escape_token(k));
                if names.contains(&k.as_ref()) {
                    let found = path.clone();
                    path.truncate(len);
                    return Some(found);
                }
                if let Some(found) = find_key_anywhere(v, names, path) {
                    path.truncate(len);
                    return Some(found);
                }
                path.truncate(len);
            }
            None
        }
        Doc::Arr(items) => {
            for (i, v) in items.iter().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                if let Some(found) = find_key_anywhere(v, names, path) {
                    path.truncate(len);
                    return Some(found);
                }
                path.truncate(len);
            }
            None
        }
        _ => None,
    }
}

/// JavaScript truthiness of an optional JSON value (`undefined` when absent).
fn truthy(value: Option<&Doc<'_>>) -> bool {
    match value {
        None | Some(Doc::Null) | Some(Doc::Bool(false)) => false,
        Some(Doc::Num(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Doc::Str(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// JavaScript strict equality (`===`) of two optional JSON values: primitives by
/// value, `undefined` equal only to `undefined`, containers never equal.
fn strict_equal(a: Option<&Doc<'_>>, b: Option<&Doc<'_>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Doc::Null), Some(Doc::Null)) => true,
        (Some(Doc::Bool(x)), Some(Doc::Bool(y))) => x == y,
        (Some(Doc::Num(x)), Some(Doc::Num(y))) => x.as_f64() == y.as_f64(),
        (Some(Doc::Str(x)), Some(Doc::Str(y))) => x == y,
        _ => false,
    }
}

fn describe(value: Option<&Doc<'_>>) -> String {
    match value {
        None => "absent".to_string(),
        Some(v) => {
            let s = v.to_value().to_string();
            if s.len() > 80 {
                format!("{}…", &s[..s.floor_char_boundary(80)])
            } else {
                s
            }
        }
    }
}

fn pre_schema(doc: &Doc<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let evidence = doc.get("evidence");

    // Self-asserted producer booleans (the union of both reference shapes).
    if let Some(ev) = evidence {
        let mut path = String::from("/evidence");
        if let Some(p) = find_key_anywhere(ev, &SELF_ASSERTED_KEYS, &mut path) {
            out.push(Finding::new(
                c::SELF_ASSERTED_CLAIM,
                p.clone(),
                format!(
                    "evidence carries the self-asserted producer boolean at {p}; v0.2 evidence states facts only through integrity-bound observations"
                ),
            ));
        }
        if let Some(exec) = ev.get("execution").filter(|e| e.as_object().is_some()) {
            for key in SELF_ASSERTED_EXECUTION_KEYS {
                if exec.get(key).is_some() && !SELF_ASSERTED_KEYS.contains(&key) {
                    out.push(Finding::new(
                        c::SELF_ASSERTED_CLAIM,
                        format!("/evidence/execution/{key}"),
                        format!("evidence.execution.{key} is a v0.1 self-asserted claim"),
                    ));
                }
            }
        }
        if ev
            .get("privacy")
            .is_some_and(|m| m.get("scanPassed").is_some())
        {
            out.push(Finding::new(
                c::SELF_ASSERTED_CLAIM,
                "/evidence/privacy/scanPassed",
                "evidence.privacy.scanPassed is a v0.1 self-asserted claim; use a PRIVACY_SCAN observation",
            ));
        }
        if ev
            .get("cleanup")
            .is_some_and(|m| m.get("complete").is_some())
        {
            out.push(Finding::new(
                c::SELF_ASSERTED_CLAIM,
                "/evidence/cleanup/complete",
                "evidence.cleanup.complete is a v0.1 self-asserted claim; use a CLEANUP_CHECK observation",
            ));
        }
    }

    // Reason-bound negative controls.
    let operations = evidence
        .and_then(|e| e.get("operations"))
        .and_then(Doc::as_array);
    let negatives: Vec<(usize, &Doc)> = operations
        .map(|ops| {
            ops.iter()
                .enumerate()
                .filter(|(_, op)| op.get("kind").and_then(Doc::as_str) == Some("NEGATIVE_CONTROL"))
                .collect()
        })
        .unwrap_or_default();
    if negatives.is_empty() {
        out.push(Finding::new(
            c::VACUOUS_NEGATIVE_CONTROL,
            "/evidence/operations",
            "the evidence has no NEGATIVE_CONTROL operation, so nothing shows the oracle can fail",
        ));
    }
    for (index, op) in negatives {
        let base = format!("/evidence/operations/{index}");
        let reason = op.get("negativeObservation");
        if !truthy(reason) {
            out.push(Finding::new(
                c::VACUOUS_NEGATIVE_CONTROL,
                base.clone(),
                format!(
                    "negative control {index} has no negativeObservation binding it to a reason"
                ),
            ));
            continue;
        }
        let rp = format!("{base}/negativeObservation");
        let field = |name: &str| reason.and_then(|r| r.get(name));
        let prerequisites = field("prerequisitesReached");
        let has_prerequisites = prerequisites
            .and_then(Doc::as_array)
            .is_some_and(|a| !a.is_empty());
        if !has_prerequisites {
            out.push(Finding::new(
                c::NEGATIVE_PREREQUISITE_MISSING,
                format!("{rp}/prerequisitesReached"),
                format!(
                    "negative control {index} lists no reached prerequisites (prerequisitesReached is {})",
                    describe(prerequisites)
                ),
            ));
        }
        if field("propertyReached").and_then(Doc::as_bool) != Some(true) {
            out.push(Finding::new(
                c::PROPERTY_NOT_REACHED,
                format!("{rp}/propertyReached"),
                format!(
                    "negative control {index} never reached the property under test (propertyReached is {})",
                    describe(field("propertyReached"))
                ),
            ));
        }
        if !strict_equal(field("expectedVerdict"), field("observedVerdict")) {
            out.push(Finding::new(
                c::VACUOUS_NEGATIVE_CONTROL,
                format!("{rp}/observedVerdict"),
                format!(
                    "negative control {index} expected verdict {} but observed {}",
                    describe(field("expectedVerdict")),
                    describe(field("observedVerdict"))
                ),
            ));
        }
        if !strict_equal(field("expectedStopReason"), field("observedStopReason")) {
            out.push(Finding::new(
                c::WRONG_STOP_REASON,
                format!("{rp}/observedStopReason"),
                format!(
                    "negative control {index} stopped for {} but the expected reason is {}",
                    describe(field("observedStopReason")),
                    describe(field("expectedStopReason"))
                ),
            ));
        }
        if truthy(field("mutantId")) && field("mutantKilled").and_then(Doc::as_bool) != Some(true) {
            out.push(Finding::new(
                c::NEGATIVE_MUTANT_SURVIVED,
                format!("{rp}/mutantKilled"),
                format!(
                    "mutant {} of negative control {index} was not killed (mutantKilled is {})",
                    describe(field("mutantId")),
                    describe(field("mutantKilled"))
                ),
            ));
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Semantic rules: the document passed the closed schema.
// ---------------------------------------------------------------------------

/// Everything computed once per bundle and reused by several rules.
struct Semantic<'a> {
    b: &'a Bundle<'a>,
    /// What the digests are taken over.
    source: Source<'a>,
    /// Manifest artifacts by path (the last entry wins on duplicates, as in the references).
    artifacts: HashMap<&'a str, &'a Artifact<'a>>,
    derived_class: EvidenceClass,
    /// SHA-256 and length of the evidence document's canonical bytes (empty and
    /// zero when it has none).
    evidence_digest: (String, usize),
    /// Each observation's digest and length, taken from the same serialization;
    /// empty when the evidence has no canonical form (then computed one by one).
    observation_digests: Vec<(String, usize)>,
    /// SHA-256 and length of the statement's canonical bytes (empty and zero
    /// when it has none).
    statement_digest: DigestAndLen,
}

fn obs_digest_and_len(raw: &Value) -> Option<(String, usize)> {
    let bytes = canonical::to_vec_without_key(raw, "observationSha256").ok()?;
    Some((sha256_hex(&bytes), bytes.len()))
}

/// Derive the evidence class the observations and manifest justify.
pub fn derive_class(evidence: &Evidence<'_>, manifest_paths: &HashSet<&str>) -> EvidenceClass {
    let observed = |kind: ObservationType| {
        evidence.observations.iter().any(|o| {
            o.kind == kind
                && o.strength == Strength::IntegrityBound
                && o.outcome == ObservationOutcome::Pass
        })
    };
    let has_source = evidence
        .source_evidence_refs
        .as_ref()
        .is_some_and(|refs| !refs.is_empty() && refs.iter().all(|r| manifest_paths.contains(r)));
    use ObservationType::{
        FixtureExecution, InstallationExecution, ProcessExecution, ProtocolExchange,
    };
    if observed(ProcessExecution) && observed(ProtocolExchange) && has_source {
        EvidenceClass::GenuineRuntime
    } else if observed(ProtocolExchange) && observed(FixtureExecution) {
        EvidenceClass::FixtureBackedProtocol
    } else if observed(FixtureExecution) {
        EvidenceClass::FixtureVerified
    } else if observed(InstallationExecution) {
        EvidenceClass::InstallationVerified
    } else {
        EvidenceClass::DocumentedOnly
    }
}

impl<'a> Semantic<'a> {
    fn new(b: &'a Bundle<'a>, source: Source<'a>) -> Self {
        let artifacts: HashMap<&str, &Artifact> =
            b.integrity.artifacts.iter().map(|a| (a.path, a)).collect();
        let paths: HashSet<&str> = artifacts.keys().copied().collect();
        let derived_class = derive_class(&b.evidence, &paths);
        let (evidence_digest, observation_digests, statement_digest) = match source {
            Source::Written(w) => {
                let in_place = || {
                    let at = w.layout.at(w.bytes, &["evidence"])?;
                    let statement = w.layout.at(w.bytes, &["statement"])?;
                    let statement = &w.bytes[w.layout.span(statement)];
                    let (evidence, each) = canonical::element_digests_in_place(
                        w.bytes,
                        w.layout,
                        at,
                        "observations",
                        "observationSha256",
                    );
                    Some((evidence, each, (sha256_hex(statement), statement.len())))
                };
                in_place().unwrap_or_default()
            }
            Source::Value(doc) => {
                let null = Value::Null;
                let evidence = doc.get("evidence").unwrap_or(&null);
                let (evidence_digest, observation_digests) =
                    canonical::to_vec_with_element_digests(
                        evidence,
                        "observations",
                        "observationSha256",
                    )
                    .ok()
                    .map(|(bytes, each)| ((sha256_hex(&bytes), bytes.len()), each))
                    .unwrap_or_default();
                let statement = doc.get("statement").unwrap_or(&null);
                let statement_digest = canonical::digest_and_len(statement).unwrap_or_default();
                (evidence_digest, observation_digests, statement_digest)
            }
        };
        Semantic {
            b,
            source,
            artifacts,
            derived_class,
            evidence_digest,
            observation_digests,
            statement_digest,
        }
    }

    fn ev(&self) -> &'a Evidence<'a> {
        &self.b.evidence
    }

    fn run(&mut self, out: &mut Vec<Finding>) {
        self.scenario(out);
        self.wall_clock(out);
        self.operations(out);
        self.observations(out);
        self.coverage(out);
        self.trials(out);
        self.evidence_class(out);
        self.completion(out);
        self.integrity(out);
        // mcpres' own rule, after every reference rule: whenever a reference
        // rule fails, its code stays the primary diagnostic.
        self.result_follows_evidence(out);
    }

    fn scenario(&self, out: &mut Vec<Finding>) {
        let ev = self.ev();
        let d = &ev.scenario.descriptor;
        let pairs: [(&str, &str, &str, &str); 5] = [
            (
                "standardVersion",
                d.standard_version,
                "/evidence/standardVersion",
                ev.standard_version,
            ),
            (
                "profileId",
                d.profile_id,
                "/evidence/profile/id",
                ev.profile.id,
            ),
            (
                "profileVersion",
                d.profile_version,
                "/evidence/profile/version",
                ev.profile.version,
            ),
            (
                "protocolRevision",
                d.protocol_revision,
                "/evidence/protocolRevision",
                ev.protocol_revision,
            ),
            (
                "subjectIdentityDigest",
                d.subject_identity_digest,
                "/evidence/subject/identityDigest",
                ev.subject.identity_digest,
            ),
        ];
        for (name, in_descriptor, evidence_ptr, in_evidence) in pairs {
            if in_descriptor != in_evidence {
                out.push(Finding::new(
                    c::SCENARIO_FINGERPRINT_MISMATCH,
                    format!("/evidence/scenario/descriptor/{name}"),
                    format!(
                        "scenario descriptor {name} is {in_descriptor:?} but the evidence ({evidence_ptr}) says {in_evidence:?}"
                    ),
                ));
            }
        }
        const DESCRIPTOR: [&str; 3] = ["evidence", "scenario", "descriptor"];
        let expected = match self.source {
            // An object after the schema; its canonical bytes as they stand.
            Source::Written(w) => w
                .layout
                .at(w.bytes, &DESCRIPTOR)
                .map(|at| &w.bytes[w.layout.span(at)])
                .filter(|bytes| bytes.first() == Some(&b'{'))
                .map(sha256_hex),
            Source::Value(v) => DESCRIPTOR
                .iter()
                .try_fold(v, |v, k| v.get(k))
                .and_then(|d| canonical::digest(d).ok()),
        }
        .unwrap_or_default();
        if ev.scenario.fingerprint != expected {
            out.push(Finding::new(
                c::SCENARIO_FINGERPRINT_MISMATCH,
                "/evidence/scenario/fingerprint",
                format!(
                    "scenario fingerprint is {} but the descriptor digests to {expected}",
                    ev.scenario.fingerprint
                ),
            ));
        }
    }

    fn wall_clock(&self, out: &mut Vec<Finding>) {
        let run = &self.ev().run;
        let (Some(started), Some(finished)) = (
            rfc3339_micros(run.started_at),
            rfc3339_micros(run.finished_at),
        ) else {
            return;
        };
        if finished < started {
            out.push(Finding::new(
                c::WALL_CLOCK_REVERSAL,
                "/evidence/run/finishedAt",
                format!(
                    "run finished at {} before it started at {}",
                    run.finished_at, run.started_at
                ),
            ));
        } else if i128::from(run.monotonic_duration_ms) * 1000 > i128::from(finished - started) {
            out.push(Finding::new(
                c::WALL_CLOCK_REVERSAL,
                "/evidence/run/monotonicDurationMs",
                format!(
                    "monotonic duration {} ms is longer than the wall-clock interval of {:.3} ms",
                    run.monotonic_duration_ms,
                    (finished - started) as f64 / 1000.0
                ),
            ));
        }
    }

    fn operations(&self, out: &mut Vec<Finding>) {
        let ev = self.ev();
        let run_ms = ev.run.monotonic_duration_ms;
        let mut by_id: HashMap<&str, &Operation> = HashMap::new();
        let mut order: Vec<&str> = Vec::new();
        for (i, op) in ev.operations.iter().enumerate() {
            let p = format!("/evidence/operations/{i}");
            if by_id.contains_key(op.operation_id) {
                out.push(Finding::new(
                    c::CAUSAL_MISMATCH,
                    format!("{p}/operationId"),
                    format!("operation id {:?} is used more than once", op.operation_id),
                ));
            } else {
                order.push(op.operation_id);
            }
            by_id.insert(op.operation_id, op);
            if op.run_id != ev.run.id {
                out.push(Finding::new(
                    c::CROSS_RUN_SUBSTITUTION,
                    format!("{p}/runId"),
                    format!(
                        "operation {:?} belongs to run {:?}, not to this run {:?}",
                        op.operation_id, op.run_id, ev.run.id
                    ),
                ));
            }
            if op.started_offset_ms + op.duration_ms > run_ms {
                out.push(Finding::new(
                    c::CAUSAL_MISMATCH,
                    format!("{p}/durationMs"),
                    format!(
                        "operation {:?} ends at {} ms, after the run's {} ms",
                        op.operation_id,
                        op.started_offset_ms + op.duration_ms,
                        run_ms
                    ),
                ));
            }
        }
        let policies: HashMap<&str, i64> = ev
            .scenario
            .descriptor
            .recovery_policies
            .iter()
            .map(|p| (p.id, p.retry_limit))
            .collect();
        let faults: HashSet<&str> = ev.scenario.descriptor.faults.iter().map(|f| f.id).collect();
        for (i, op) in ev.operations.iter().enumerate() {
            let p = format!("/evidence/operations/{i}");
            if let Some(parent) = op.parent_operation_id
                && !by_id.contains_key(parent)
            {
                out.push(Finding::new(
                    c::CAUSAL_MISMATCH,
                    format!("{p}/parentOperationId"),
                    format!("parent operation {parent:?} does not exist"),
                ));
            }
            if let Some(fault) = op.fault_id
                && !faults.contains(fault)
            {
                out.push(Finding::new(
                    c::CAUSAL_MISMATCH,
                    format!("{p}/faultId"),
                    format!("fault {fault:?} is not declared in the scenario descriptor"),
                ));
            }
            if let Some(policy) = op.recovery_policy_id {
                match policies.get(policy) {
                    None => out.push(Finding::new(
                        c::CAUSAL_MISMATCH,
                        format!("{p}/recoveryPolicyId"),
                        format!(
                            "recovery policy {policy:?} is not declared in the scenario descriptor"
                        ),
                    )),
                    Some(&limit) if op.attempt > limit => out.push(Finding::new(
                        c::RETRY_LIMIT_EXCEEDED,
                        format!("{p}/attempt"),
                        format!(
                            "attempt {} exceeds the retry limit {limit} of policy {policy:?}",
                            op.attempt
                        ),
                    )),
                    Some(_) => {}
                }
            }
        }
        // Parent cycles: walk each chain; report each cycle once.
        let mut reported: HashSet<Vec<&str>> = HashSet::new();
        for id in &order {
            let mut seen: Vec<&str> = Vec::new();
            let mut cursor = by_id.get(id).copied();
            while let Some(op) = cursor {
                let Some(parent) = op.parent_operation_id else {
                    break;
                };
                if seen.contains(&op.operation_id) {
                    let start = seen.iter().position(|s| *s == op.operation_id).unwrap_or(0);
                    let mut cycle: Vec<&str> = seen[start..].to_vec();
                    cycle.sort_unstable();
                    if reported.insert(cycle.clone()) {
                        let index = ev
                            .operations
                            .iter()
                            .position(|o| o.operation_id == op.operation_id)
                            .unwrap_or(0);
                        out.push(Finding::new(
                            c::OPERATION_PARENT_CYCLE,
                            format!("/evidence/operations/{index}/parentOperationId"),
                            format!("operations {} form a parent cycle", cycle.join(" -> ")),
                        ));
                    }
                    break;
                }
                seen.push(op.operation_id);
                cursor = by_id.get(parent).copied();
            }
        }
    }

    fn observations(&self, out: &mut Vec<Finding>) {
        let ev = self.ev();
        let operation_ids: HashSet<&str> = ev.operations.iter().map(|o| o.operation_id).collect();
        let raw_observations = match self.source {
            Source::Value(v) => v
                .pointer("/evidence/observations")
                .and_then(Value::as_array),
            Source::Written(_) => None,
        };
        let mut ids: HashSet<&str> = HashSet::new();
        for (i, o) in ev.observations.iter().enumerate() {
            let p = format!("/evidence/observations/{i}");
            if !ids.insert(o.id) {
                out.push(Finding::new(
                    c::OBSERVATION_CAUSAL_MISMATCH,
                    format!("{p}/id"),
                    format!("observation id {:?} is used more than once", o.id),
                ));
            }
            self.observation_binding(o, &p, &operation_ids, out);
            let missing: Vec<&str> = o
                .artifact_refs
                .iter()
                .copied()
                .filter(|r| !self.artifacts.contains_key(r))
                .collect();
            if !missing.is_empty() {
                out.push(Finding::new(
                    c::MISSING_OBSERVATION_ARTIFACT,
                    format!("{p}/artifactRefs"),
                    format!(
                        "observation {:?} refers to artifacts the integrity manifest does not list: {}",
                        o.id,
                        missing.join(", ")
                    ),
                ));
                continue;
            }
            let (digest, len) = match self.observation_digests.get(i) {
                Some((digest, len)) => (digest.clone(), *len),
                None => raw_observations
                    .and_then(|list| list.get(i))
                    .and_then(obs_digest_and_len)
                    .unwrap_or_default(),
            };
            if o.observation_sha256 != digest {
                out.push(Finding::new(
                    c::OBSERVATION_HASH_MISMATCH,
                    format!("{p}/observationSha256"),
                    format!(
                        "observation {:?} declares digest {} but its content digests to {digest}",
                        o.id, o.observation_sha256
                    ),
                ));
            } else if !o.artifact_refs.iter().any(|r| {
                self.artifacts.get(r).is_some_and(|a| {
                    a.sha256 == o.observation_sha256
                        && usize::try_from(a.bytes).ok() == Some(len)
                        && a.media_type == OBSERVATION_MEDIA_TYPE
                })
            }) {
                out.push(Finding::new(
                    c::OBSERVATION_HASH_MISMATCH,
                    format!("{p}/artifactRefs"),
                    format!(
                        "no artifact of observation {:?} carries it: none has sha256 {}, {len} bytes and media type {OBSERVATION_MEDIA_TYPE}",
                        o.id, o.observation_sha256
                    ),
                ));
            }
        }
        for (i, op) in ev.operations.iter().enumerate() {
            if op.kind != OperationKind::NegativeControl {
                continue;
            }
            let Some(neg) = &op.negative_observation else {
                continue;
            };
            let oracle = neg.oracle_evidence_ref;
            let p = format!("/evidence/operations/{i}/negativeObservation/oracleEvidenceRef");
            if !self.artifacts.contains_key(oracle) {
                out.push(Finding::new(
                    c::MISSING_OBSERVATION_ARTIFACT,
                    p,
                    format!(
                        "oracle evidence {oracle:?} of negative control {:?} is not in the integrity manifest",
                        op.operation_id
                    ),
                ));
            } else if !ev.observations.iter().any(|o| {
                o.kind == ObservationType::ValidatorCheck
                    && o.operation_ref == Some(op.operation_id)
                    && o.artifact_refs.contains(&oracle)
            }) {
                out.push(Finding::new(
                    c::OBSERVATION_CAUSAL_MISMATCH,
                    p,
                    format!(
                        "no VALIDATOR_CHECK observation of operation {:?} carries its oracle evidence {oracle:?}",
                        op.operation_id
                    ),
                ));
            }
        }
    }

    fn observation_binding(
        &self,
        o: &Observation<'_>,
        p: &str,
        operation_ids: &HashSet<&str>,
        out: &mut Vec<Finding>,
    ) {
        let ev = self.ev();
        if o.subject_ref != ev.subject.identity_digest {
            out.push(Finding::new(
                c::OBSERVATION_CAUSAL_MISMATCH,
                format!("{p}/subjectRef"),
                format!(
                    "observation {:?} is about subject {}, not this subject {}",
                    o.id, o.subject_ref, ev.subject.identity_digest
                ),
            ));
        }
        if let Some(op) = o.operation_ref
            && !operation_ids.contains(op)
        {
            out.push(Finding::new(
                c::OBSERVATION_CAUSAL_MISMATCH,
                format!("{p}/operationRef"),
                format!("observation {:?} refers to unknown operation {op:?}", o.id),
            ));
        }
        if o.started_offset_ms + o.duration_ms > ev.run.monotonic_duration_ms {
            out.push(Finding::new(
                c::OBSERVATION_CAUSAL_MISMATCH,
                format!("{p}/durationMs"),
                format!(
                    "observation {:?} ends at {} ms, after the run's {} ms",
                    o.id,
                    o.started_offset_ms + o.duration_ms,
                    ev.run.monotonic_duration_ms
                ),
            ));
        }
    }

    fn coverage(&self, out: &mut Vec<Finding>) {
        let ev = self.ev();
        let ids: HashSet<&str> = ev.observations.iter().map(|o| o.id).collect();
        let mut surfaces: HashSet<Surface> = HashSet::new();
        for (i, s) in ev.coverage.surfaces.iter().enumerate() {
            let p = format!("/evidence/coverage/surfaces/{i}");
            if !surfaces.insert(s.surface) {
                out.push(Finding::new(
                    c::REQUIRED_SURFACE_UNOBSERVED,
                    format!("{p}/surface"),
                    format!("surface {} is listed more than once", s.surface),
                ));
                continue;
            }
            if !s.required {
                continue;
            }
            if matches!(
                s.status,
                CoverageStatus::Uninstrumented | CoverageStatus::Unknown
            ) {
                out.push(Finding::new(
                    c::REQUIRED_SURFACE_UNOBSERVED,
                    format!("{p}/status"),
                    format!("required surface {} is {}", s.surface, s.status),
                ));
            } else if matches!(
                s.status,
                CoverageStatus::Instrumented | CoverageStatus::ObservedIndirectly
            ) {
                if s.observation_refs.is_empty() {
                    out.push(Finding::new(
                        c::REQUIRED_SURFACE_UNOBSERVED,
                        format!("{p}/observationRefs"),
                        format!(
                            "required surface {} is {} but names no observation",
                            s.surface, s.status
                        ),
                    ));
                } else {
                    let unknown: Vec<&str> = s
                        .observation_refs
                        .iter()
                        .copied()
                        .filter(|r| !ids.contains(r))
                        .collect();
                    if !unknown.is_empty() {
                        out.push(Finding::new(
                            c::REQUIRED_SURFACE_UNOBSERVED,
                            format!("{p}/observationRefs"),
                            format!(
                                "required surface {} names observations that do not exist: {}",
                                s.surface,
                                unknown.join(", ")
                            ),
                        ));
                    }
                }
            }
        }
        if surfaces.len() != Surface::ALL.len() {
            let missing: Vec<&str> = Surface::ALL
                .iter()
                .filter(|s| !surfaces.contains(s))
                .map(|s| s.as_str())
                .collect();
            out.push(Finding::new(
                c::REQUIRED_SURFACE_UNOBSERVED,
                "/evidence/coverage/surfaces",
                format!(
                    "coverage lists {} distinct surfaces, not all 14; missing: {}",
                    surfaces.len(),
                    missing.join(", ")
                ),
            ));
        }
    }

    fn trials(&self, out: &mut Vec<Finding>) {
        let t = &self.ev().trial_summary;
        let p = "/evidence/trialSummary";
        let total = t.counts.success + t.counts.failure + t.counts.incomplete;
        let mut inconsistent = |pointer: String, message: String| {
            out.push(Finding::new(
                c::TRIAL_SUMMARY_INCONSISTENT,
                pointer,
                message,
            ));
        };
        if total != t.completed_trials {
            inconsistent(
                format!("{p}/counts"),
                format!(
                    "counts add up to {total} trials but completedTrials is {}",
                    t.completed_trials
                ),
            );
        }
        if t.completed_trials > t.planned_trials {
            inconsistent(
                format!("{p}/completedTrials"),
                format!(
                    "{} trials completed but only {} were planned",
                    t.completed_trials, t.planned_trials
                ),
            );
        }
        if t.seeds.len() as i64 != t.completed_trials {
            inconsistent(
                format!("{p}/seeds"),
                format!(
                    "{} seeds for {} completed trials",
                    t.seeds.len(),
                    t.completed_trials
                ),
            );
        }
        if t.completed_trials > 0 && t.distinct_outcome_hashes.is_empty() {
            inconsistent(
                format!("{p}/distinctOutcomeHashes"),
                "trials completed but no outcome hash is recorded".into(),
            );
        }
        if t.completed_trials > 0 && t.duration_ms.is_none() {
            inconsistent(
                format!("{p}/durationMs"),
                "trials completed but durationMs is null".into(),
            );
        }
        if let Some(d) = &t.duration_ms
            && (d.minimum > d.median || d.median > d.p95)
        {
            inconsistent(
                format!("{p}/durationMs"),
                format!(
                    "durations are not ordered: minimum {} <= median {} <= p95 {} fails",
                    d.minimum, d.median, d.p95
                ),
            );
        }
        if t.classification == Stability::RepeatedStable
            && (t.completed_trials < 2
                || t.counts.success != t.completed_trials
                || t.distinct_outcome_hashes.len() != 1)
        {
            out.push(Finding::new(
                c::FALSE_STABILITY_CLAIM,
                format!("{p}/classification"),
                format!(
                    "REPEATED_STABLE needs at least 2 completed trials, all successful, with one outcome hash; here {} completed, {} succeeded, {} distinct outcomes",
                    t.completed_trials,
                    t.counts.success,
                    t.distinct_outcome_hashes.len()
                ),
            ));
        }
        if t.classification == Stability::SingleObservation && t.completed_trials != 1 {
            out.push(Finding::new(
                c::TRIAL_SUMMARY_INCONSISTENT,
                format!("{p}/classification"),
                format!(
                    "SINGLE_OBSERVATION with {} completed trials",
                    t.completed_trials
                ),
            ));
        }
        if t.classification == Stability::Incomplete
            && t.counts.incomplete == 0
            && t.completed_trials == t.planned_trials
        {
            out.push(Finding::new(
                c::TRIAL_SUMMARY_INCONSISTENT,
                format!("{p}/classification"),
                "INCOMPLETE although every planned trial completed and none is incomplete",
            ));
        }
    }

    fn evidence_class(&self, out: &mut Vec<Finding>) {
        let ev = self.ev();
        let derived = self.derived_class;
        if ev.evidence_class_claim != derived {
            out.push(Finding::new(
                c::EVIDENCE_CLASS_PROMOTION,
                "/evidence/evidenceClassClaim",
                format!(
                    "evidence claims {} but its integrity-bound observations justify only {derived}",
                    ev.evidence_class_claim
                ),
            ));
        }
        if self.b.statement.evidence_class != derived {
            out.push(Finding::new(
                c::EVIDENCE_CLASS_PROMOTION,
                "/statement/evidenceClass",
                format!(
                    "statement claims {} but the evidence justifies only {derived}",
                    self.b.statement.evidence_class
                ),
            ));
        }
    }

    fn completion(&self, out: &mut Vec<Finding>) {
        if self.b.statement.result != Outcome::Pass {
            return;
        }
        for kind in [ObservationType::CleanupCheck, ObservationType::PrivacyScan] {
            let passed = self.ev().observations.iter().any(|o| {
                o.kind == kind
                    && o.strength == Strength::IntegrityBound
                    && o.outcome == ObservationOutcome::Pass
            });
            if !passed {
                out.push(Finding::new(
                    c::COMPLETION_UNOBSERVED,
                    "/statement/result",
                    format!(
                        "result is PASS but no passing integrity-bound {kind} observation exists"
                    ),
                ));
            }
        }
    }

    fn integrity(&self, out: &mut Vec<Finding>) {
        let b = self.b;
        let mut paths: HashSet<&str> = HashSet::new();
        for (i, a) in b.integrity.artifacts.iter().enumerate() {
            if !paths.insert(a.path) {
                out.push(Finding::new(
                    c::DIGEST_MISMATCH,
                    format!("/integrity/artifacts/{i}/path"),
                    format!("artifact path {:?} is listed more than once", a.path),
                ));
            }
        }
        let (supporting, bundle) = match self.source {
            Source::Written(w) => {
                let written: Vec<&[u8]> = w
                    .layout
                    .at(w.bytes, &["integrity", "artifacts"])
                    .map(|at| {
                        w.layout
                            .children(at)
                            .map(|i| &w.bytes[w.layout.span(i)])
                            .collect()
                    })
                    .unwrap_or_default();
                let paths: Vec<&str> = b.integrity.artifacts.iter().map(|a| a.path).collect();
                crate::model::digests::manifest_digests_written(&paths, &written)
            }
            Source::Value(v) => {
                let raw = v.pointer("/integrity/artifacts").and_then(Value::as_array);
                crate::model::digests::manifest_digests(raw.map_or(&[], Vec::as_slice))
            }
        };
        if b.evidence.supporting_artifact_manifest_digest != supporting {
            out.push(Finding::new(
                c::DIGEST_MISMATCH,
                "/evidence/supportingArtifactManifestDigest",
                format!(
                    "supportingArtifactManifestDigest is {} but the manifest's supporting artifacts digest to {supporting}",
                    b.evidence.supporting_artifact_manifest_digest
                ),
            ));
        }
        let (evidence_hash, evidence_len) = self.evidence_digest.clone();
        let (statement_hash, statement_len) = self.statement_digest.clone();
        for (path, hash, len) in [
            (EVIDENCE_PATH, &evidence_hash, evidence_len),
            (STATEMENT_PATH, &statement_hash, statement_len),
        ] {
            match self.artifacts.get(path) {
                None => out.push(Finding::new(
                    c::DIGEST_MISMATCH,
                    "/integrity/artifacts",
                    format!("the integrity manifest does not list {path}"),
                )),
                Some(a) if a.sha256 != hash || usize::try_from(a.bytes).ok() != Some(len) => {
                    let index = b
                        .integrity
                        .artifacts
                        .iter()
                        .rposition(|x| x.path == path)
                        .unwrap_or(0);
                    out.push(Finding::new(
                        c::DIGEST_MISMATCH,
                        format!("/integrity/artifacts/{index}"),
                        format!(
                            "manifest entry {path} says {} bytes, sha256 {}; the canonical document is {len} bytes, sha256 {hash}",
                            a.bytes, a.sha256
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        if b.integrity.bundle_digest != bundle {
            out.push(Finding::new(
                c::DIGEST_MISMATCH,
                "/integrity/bundleDigest",
                format!(
                    "bundleDigest is {} but the manifest digests to {bundle}",
                    b.integrity.bundle_digest
                ),
            ));
        }
        let outcome = b.statement.result.as_str();
        let execution = match self.source {
            Source::Written(w) => crate::model::digests::execution_digest_written(w, outcome),
            Source::Value(v) => {
                execution_digest(v.get("evidence").unwrap_or(&Value::Null), outcome)
            }
        };
        if b.statement.execution_instance_digest != execution {
            out.push(Finding::new(
                c::EXECUTION_DIGEST_MISMATCH,
                "/statement/executionInstanceDigest",
                format!(
                    "executionInstanceDigest is {} but the run, observations, outcome and manifest digest to {execution}",
                    b.statement.execution_instance_digest
                ),
            ));
        }
        self.statement_binding(&evidence_hash, out);
    }

    fn statement_binding(&self, evidence_hash: &str, out: &mut Vec<Finding>) {
        let ev = self.ev();
        let st = &self.b.statement;
        let pairs: [(&str, &str, &str); 10] = [
            ("standardVersion", st.standard_version, ev.standard_version),
            ("profileId", st.profile_id, ev.profile.id),
            ("profileVersion", st.profile_version, ev.profile.version),
            (
                "protocolRevision",
                st.protocol_revision,
                ev.protocol_revision,
            ),
            (
                "subjectType",
                st.subject_type.as_str(),
                ev.subject.subject_type.as_str(),
            ),
            ("subjectName", st.subject_name, ev.subject.name),
            ("subjectVersion", st.subject_version, ev.subject.version),
            (
                "scenarioFingerprint",
                st.scenario_fingerprint,
                ev.scenario.fingerprint,
            ),
            (
                "stabilityClassification",
                st.stability_classification.as_str(),
                ev.trial_summary.classification.as_str(),
            ),
            ("evidenceSha256", st.evidence_sha256, evidence_hash),
        ];
        for (name, stated, actual) in pairs {
            if stated != actual {
                out.push(Finding::new(
                    c::CAUSAL_MISMATCH,
                    format!("/statement/{name}"),
                    format!("statement {name} is {stated:?} but the evidence gives {actual:?}"),
                ));
            }
        }
        const VALIDATOR: [&str; 2] = ["statement", "validator"];
        const POLICY: [&str; 4] = ["evidence", "scenario", "descriptor", "validatorPolicy"];
        let same = match self.source {
            // Canonically written, equal canonical forms are equal spans.
            Source::Written(w) => match (
                w.layout.at(w.bytes, &VALIDATOR),
                w.layout.at(w.bytes, &POLICY),
            ) {
                (Some(a), Some(b)) => w.bytes[w.layout.span(a)] == w.bytes[w.layout.span(b)],
                _ => false,
            },
            Source::Value(v) => {
                let at = |path: &[&str]| path.iter().try_fold(v, |v, k| v.get(k));
                match (at(&VALIDATOR), at(&POLICY)) {
                    (Some(a), Some(b)) => canonical::to_vec(a).ok() == canonical::to_vec(b).ok(),
                    _ => false,
                }
            }
        };
        if !same {
            out.push(Finding::new(
                c::CAUSAL_MISMATCH,
                "/statement/validator",
                "statement validator differs from the scenario descriptor's validatorPolicy",
            ));
        }
    }
}

/// The operation that ends each recovery: for every chain of RECOVERY_ATTEMPT
/// operations, keyed by the id its first attempt's `parentOperationId` names (the
/// recovered operation; a parentless attempt is its own root), the index of the
/// attempt with the highest `attempt` number (the later one in document order on
/// a tie). Parent links are followed through RECOVERY_ATTEMPT operations only,
/// and a parent cycle (reported earlier) ends the walk.
fn final_recovery_attempts<'a>(ops: &[Operation<'a>]) -> HashMap<&'a str, usize> {
    let by_id: HashMap<&str, &Operation<'a>> = ops.iter().map(|o| (o.operation_id, o)).collect();
    let mut finals: HashMap<&'a str, usize> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        if op.kind != OperationKind::RecoveryAttempt {
            continue;
        }
        let mut current: &Operation<'a> = op;
        let mut seen: HashSet<&str> = HashSet::from([op.operation_id]);
        let root = loop {
            let Some(parent_id) = current.parent_operation_id else {
                break current.operation_id;
            };
            match by_id.get(parent_id).copied() {
                Some(parent) if parent.kind == OperationKind::RecoveryAttempt => {
                    if !seen.insert(parent.operation_id) {
                        break parent.operation_id;
                    }
                    current = parent;
                }
                _ => break parent_id,
            }
        };
        let later = finals
            .get(root)
            .is_none_or(|&j| (op.attempt, i) >= (ops[j].attempt, j));
        if later {
            finals.insert(root, i);
        }
    }
    finals
}

impl Semantic<'_> {
    /// MCPRES-RESULT-001, mcpres' own rule (spec/conformance.md): a PASS must
    /// follow from the evidence. Both reference validators accept a bundle whose
    /// statement says PASS next to a failing clean control, an unrecovered
    /// failing fault case, a failing required observation or a trial summary
    /// without success, when every digest is right; MCPRES-OBS-001 ("every
    /// consequential claim MUST be derived from observations") does not.
    fn result_follows_evidence(&self, out: &mut Vec<Finding>) {
        if self.b.statement.result != Outcome::Pass {
            return;
        }
        let ev = self.ev();
        let mut contradiction = |pointer: String, message: String| {
            out.push(Finding::new(
                c::RESULT_CONTRADICTS_EVIDENCE,
                pointer,
                message,
            ));
        };

        // The oracle's verdict on an operation: its integrity-bound VALIDATOR_CHECK
        // observations. True when at least one passed and none failed.
        let oracle_confirms = |id: &str| {
            let checks = || {
                ev.observations.iter().filter(move |o| {
                    o.kind == ObservationType::ValidatorCheck
                        && o.strength == Strength::IntegrityBound
                        && o.operation_ref == Some(id)
                })
            };
            checks().any(|o| o.outcome == ObservationOutcome::Pass)
                && !checks().any(|o| o.outcome == ObservationOutcome::Fail)
        };

        // Operations, in document order.
        let ops = &ev.operations;
        let finals = final_recovery_attempts(ops);
        for (i, op) in ops.iter().enumerate() {
            if op.outcome != OperationOutcome::Fail {
                continue;
            }
            let p = format!("/evidence/operations/{i}/outcome");
            let id = op.operation_id;
            match op.kind {
                OperationKind::CleanControl => {
                    contradiction(p, format!("result is PASS but clean control {id:?} failed"))
                }
                OperationKind::FaultCase => {
                    let recovery = finals.get(id).map(|&j| &ops[j]);
                    let control = op.recovery_policy_id.is_some();
                    let recovered =
                        control && recovery.is_some_and(|r| r.outcome == OperationOutcome::Pass);
                    // A recovery control whose policy forbids recovering (a retry
                    // limit of 0, an unsafe retry) ends unrecovered by design; its
                    // oracle check says whether it ended as declared.
                    let stopped_as_declared = control && oracle_confirms(id);
                    if !recovered && !stopped_as_declared {
                        contradiction(
                            p,
                            match recovery {
                                Some(r) if control => format!(
                                    "result is PASS but fault case {id:?} failed, its last recovery attempt {:?} ended {} and no passing oracle check confirms that as the declared stop",
                                    r.operation_id, r.outcome
                                ),
                                _ if control => format!(
                                    "result is PASS but fault case {id:?} failed, was not retried and no passing oracle check confirms that as the declared stop"
                                ),
                                _ => format!(
                                    "result is PASS but fault case {id:?} failed and names no recovery policy"
                                ),
                            },
                        );
                    }
                }
                OperationKind::RecoveryAttempt => {
                    let root = finals.iter().find(|&(_, &j)| j == i).map(|(&r, _)| r);
                    if let Some(root) = root
                        && !oracle_confirms(root)
                    {
                        contradiction(
                            p,
                            format!(
                                "result is PASS but recovery attempt {id:?} (attempt {}) failed, no later attempt followed and no passing oracle check of {root:?} confirms that as the declared stop",
                                op.attempt
                            ),
                        );
                    }
                }
                _ => {}
            }
        }

        // Failing integrity-bound observations, in document order.
        let kind_of: HashMap<&str, OperationKind> =
            ops.iter().map(|o| (o.operation_id, o.kind)).collect();
        let required: HashSet<&str> = ev
            .coverage
            .surfaces
            .iter()
            .filter(|s| s.required)
            .flat_map(|s| s.observation_refs.iter().copied())
            .collect();
        let passing = |kind: ObservationType| {
            ev.observations.iter().any(|o| {
                o.kind == kind
                    && o.strength == Strength::IntegrityBound
                    && o.outcome == ObservationOutcome::Pass
            })
        };
        for (i, o) in ev.observations.iter().enumerate() {
            if o.strength != Strength::IntegrityBound || o.outcome != ObservationOutcome::Fail {
                continue;
            }
            let bound = o.operation_ref.and_then(|r| kind_of.get(r).copied());
            use ObservationType::{
                CleanupCheck, PrivacyScan, ProcessExecution, ProtocolExchange, ValidatorCheck,
            };
            use OperationKind::{CleanControl, FaultCase, NegativeControl, RecoveryAttempt};
            let why = match o.kind {
                // Run-wide completion checks: any failing one contradicts a PASS.
                // With no passing one of that type, MCP_RES_COMPLETION_UNOBSERVED
                // has already refused the PASS for this very observation.
                CleanupCheck | PrivacyScan if passing(o.kind) => {
                    Some("a failing completion check stands beside the passing one")
                }
                CleanupCheck | PrivacyScan => None,
                // The oracle's verdict on a fault case or a recovery: it did not
                // behave as the scenario expects.
                ValidatorCheck if matches!(bound, Some(FaultCase | RecoveryAttempt)) => {
                    Some("the oracle judged a fault case or recovery not as expected")
                }
                // A deliberately faulted operation may fail on purpose; its own
                // outcome (judged above) says whether that was the expected failure.
                _ if matches!(bound, Some(NegativeControl | FaultCase | RecoveryAttempt)) => None,
                ProcessExecution | ProtocolExchange => {
                    Some("the run's execution or protocol exchange failed")
                }
                _ if bound == Some(CleanControl) => Some("it observes the clean control"),
                _ if required.contains(o.id) => Some("a required coverage surface relies on it"),
                _ => None,
            };
            if let Some(why) = why {
                contradiction(
                    format!("/evidence/observations/{i}/outcome"),
                    format!(
                        "result is PASS but integrity-bound {} observation {:?} failed ({why})",
                        o.kind, o.id
                    ),
                );
            }
        }

        // Trial summary. Counts that do not add up are already
        // MCP_RES_TRIAL_SUMMARY_INCONSISTENT and are not judged again.
        let t = &ev.trial_summary;
        if t.counts.success + t.counts.failure + t.counts.incomplete == t.completed_trials {
            if t.counts.success == 0 {
                contradiction(
                    "/evidence/trialSummary/counts/success".into(),
                    format!(
                        "result is PASS but none of the {} completed trials succeeded",
                        t.completed_trials
                    ),
                );
            }
            if t.counts.failure > 0 {
                contradiction(
                    "/evidence/trialSummary/counts/failure".into(),
                    format!(
                        "result is PASS but {} of {} completed trials failed",
                        t.counts.failure, t.completed_trials
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn d(value: Value) -> Doc<'static> {
        Doc::from_value(&value).into_owned()
    }

    #[test]
    fn keys_are_found_at_any_depth_by_exact_name() {
        let long = "k".repeat(70);
        let names = ["actualRuntime", "cleanupCompleted", long.as_str()];
        let find = |value: Value| find_key_anywhere(&d(value), &names, &mut String::new());
        assert_eq!(find(json!({"a": 1, "b": [1, {"c": {}}]})), None);
        // Same lengths, other names; a name as a value is no member.
        assert_eq!(
            find(json!({"actualRuntimE": 1, "x": "actualRuntime"})),
            None
        );
        assert_eq!(find(json!({"k": "k".repeat(71)})), None);
        assert_eq!(
            find(json!({"a": [0, {"b": {"cleanupCompleted": false}}]})),
            Some("/a/1/b/cleanupCompleted".into())
        );
        assert_eq!(
            find(json!({"z": {"actualRuntime": true}})),
            Some("/z/actualRuntime".into())
        );
        assert_eq!(
            find(json!([{ "k~/": { (long.clone()): 1 } }])),
            Some(format!("/0/k~0~1/{long}"))
        );
        // A name of 71 bytes shares the long names' length class and is told apart.
        assert_eq!(find(json!({ ("k".repeat(71)): 1 })), None);
    }

    #[test]
    fn truthiness_follows_javascript() {
        assert!(!truthy(None));
        assert!(!truthy(Some(&d(json!("")))));
        assert!(!truthy(Some(&d(json!(0)))));
        assert!(truthy(Some(&d(json!({})))));
        assert!(truthy(Some(&d(json!([])))));
        assert!(truthy(Some(&d(json!("m")))));
    }

    #[test]
    fn strict_equality_follows_javascript() {
        assert!(strict_equal(None, None));
        assert!(!strict_equal(None, Some(&Doc::Null)));
        assert!(strict_equal(Some(&d(json!("A"))), Some(&d(json!("A")))));
        assert!(!strict_equal(Some(&d(json!({}))), Some(&d(json!({})))));
    }

    #[test]
    fn pre_schema_never_fails_on_odd_shapes() {
        for doc in [
            json!(null),
            json!([]),
            json!({"evidence": []}),
            json!({"evidence": null}),
            json!({"evidence": {"operations": {"kind": "NEGATIVE_CONTROL"}}}),
            json!({"evidence": {"operations": [null, 1, "x"]}}),
        ] {
            let f = pre_schema(&Doc::from_value(&doc));
            assert_eq!(f[0].code, c::VACUOUS_NEGATIVE_CONTROL, "{doc}");
        }
        let doc = json!({"evidence": {"operations": [{"kind": "NEGATIVE_CONTROL",
            "negativeObservation": {"prerequisitesReached": "x", "propertyReached": true}}]}});
        assert_eq!(
            pre_schema(&Doc::from_value(&doc))[0].code,
            c::NEGATIVE_PREREQUISITE_MISSING
        );
        let doc = json!({"evidence": {"deep": [{"cleanupCompleted": false}]}});
        let f = pre_schema(&Doc::from_value(&doc));
        assert_eq!(f[0].code, c::SELF_ASSERTED_CLAIM);
        assert_eq!(f[0].pointer, "/evidence/deep/0/cleanupCompleted");
    }

    // --- MCPRES-RESULT-001: the result must follow from the evidence ---

    use crate::produce::builder::{finalize, synthetic_bundle};

    /// The synthetic FIXTURE_BACKED_PROTOCOL PASS bundle (observations 6..9 are a
    /// filesystem effect, a regression run, a transport event and a cache event of
    /// the clean control), changed by `edit` and then resealed so that every
    /// digest is right again.
    fn resealed(edit: impl FnOnce(&mut Value)) -> Value {
        let mut doc = synthetic_bundle(10).unwrap();
        edit(&mut doc);
        finalize(&mut doc).unwrap();
        doc
    }

    fn codes_and_pointers(doc: &Value) -> Vec<(crate::diag::Code, String)> {
        validate_bundle(doc)
            .findings
            .into_iter()
            .map(|f| (f.code, f.pointer))
            .collect()
    }

    fn assert_valid(doc: &Value) {
        let report = validate_bundle(doc);
        assert!(report.valid, "{:?}", report.findings);
    }

    fn contradiction(pointer: &str) -> (crate::diag::Code, String) {
        (c::RESULT_CONTRADICTS_EVIDENCE, pointer.to_string())
    }

    fn op(id: &str, kind: &str, parent: Option<&str>, attempt: i64, outcome: &str) -> Value {
        let recovery = if kind == "CLEAN_CONTROL" {
            Value::Null
        } else {
            json!("policy/retry-twice")
        };
        json!({
            "runId": "run-synthetic-bench-0001", "operationId": id, "parentOperationId": parent,
            "kind": kind, "faultId": null, "recoveryPolicyId": recovery, "attempt": attempt,
            "outcome": outcome, "startedOffsetMs": 1000 + 100 * attempt, "durationMs": 50,
        })
    }

    /// Adds a retry policy (limit 2) and the given operations after the two existing ones.
    fn with_operations(doc: &mut Value, ops: Vec<Value>) {
        doc["evidence"]["scenario"]["descriptor"]["recoveryPolicies"]
            .as_array_mut()
            .unwrap()
            .push(json!({
                "id": "policy/retry-twice", "retryLimit": 2, "maxBackoffMs": 10,
                "timeLimitMs": 2000, "cancellationBoundary": "operation",
                "sideEffectModel": "READ_ONLY", "safetyMechanism": null,
            }));
        doc["evidence"]["operations"]
            .as_array_mut()
            .unwrap()
            .extend(ops);
    }

    fn observation_mut<'v>(doc: &'v mut Value, id: &str) -> &'v mut Value {
        doc["evidence"]["observations"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|o| o["id"] == id)
            .unwrap()
    }

    #[test]
    fn untouched_pass_bundle_stays_valid() {
        let doc = resealed(|_| {});
        assert!(validate_bundle(&doc).valid);
    }

    /// The report of `doc` every way the validator takes: from its canonical
    /// bytes as a `Value` and as a `Doc` (digests in place), from pretty
    /// printed bytes as a `Doc` (digests over a new serialization), and from
    /// the `Value` alone.
    fn in_place_and_alone(doc: &Value) -> (Value, Value) {
        let report = |r: Report| serde_json::to_value(r).unwrap();
        let alone = report(validate_bundle(doc));
        let limits = Default::default();
        let bytes = canonical::to_vec(doc).unwrap();
        let (read, layout) = crate::json::reader::parse_doc_with_layout(&bytes, &limits).unwrap();
        let written = layout.as_ref().map(|layout| Written {
            bytes: &bytes,
            layout,
        });
        assert!(written.is_some());
        assert_eq!(report(validate_bundle_doc(&read, written)), alone);
        let pretty = serde_json::to_vec_pretty(doc).unwrap();
        let (read, layout) = crate::json::reader::parse_doc_with_layout(&pretty, &limits).unwrap();
        assert!(layout.is_none());
        assert_eq!(report(validate_bundle_doc(&read, None)), alone);
        let (read, layout) =
            crate::json::reader::parse_with_layout(&bytes, &Default::default()).unwrap();
        let layout = layout.expect("canonical bytes");
        let written = Written {
            bytes: &bytes,
            layout: &layout,
        };
        (report(validate_bundle_written(&read, Some(written))), alone)
    }

    #[test]
    fn digests_in_place_give_the_same_report() {
        let sealed = resealed(|_| {});
        type Edit = Box<dyn Fn(&mut Value)>;
        let tamper: Vec<(&str, Edit)> = vec![
            ("untouched", Box::new(|_| {})),
            (
                "observation field",
                Box::new(|d| d["evidence"]["observations"][2]["durationMs"] = json!(7)),
            ),
            (
                "observation digest",
                Box::new(|d| {
                    d["evidence"]["observations"][0]["observationSha256"] = json!("0".repeat(64))
                }),
            ),
            (
                "observation without digest",
                Box::new(|d| {
                    d["evidence"]["observations"][1]
                        .as_object_mut()
                        .unwrap()
                        .remove("observationSha256");
                }),
            ),
            (
                "statement",
                Box::new(|d| d["statement"]["subjectVersion"] = json!("9.9.9")),
            ),
            (
                "descriptor",
                Box::new(|d| {
                    d["evidence"]["scenario"]["descriptor"]["profileVersion"] = json!("0.0.9")
                }),
            ),
            (
                "evidence",
                Box::new(|d| d["evidence"]["run"]["runId"] = json!("run-\u{1f600}-\u{ff61}")),
            ),
            (
                "artifact",
                Box::new(|d| d["integrity"]["artifacts"][3]["bytes"] = json!(1)),
            ),
            (
                "artifact order",
                Box::new(|d| {
                    d["integrity"]["artifacts"]
                        .as_array_mut()
                        .unwrap()
                        .swap(0, 4)
                }),
            ),
            (
                "not a bundle",
                Box::new(|d| *d = json!({"evidence": [], "statement": 1})),
            ),
        ];
        for (name, edit) in &tamper {
            let mut doc = sealed.clone();
            edit(&mut doc);
            let (in_place, alone) = in_place_and_alone(&doc);
            assert_eq!(in_place, alone, "{name}");
            // The manifest digests sort the artifacts by path: their order is free.
            if ["untouched", "artifact order"].contains(name) {
                assert_eq!(in_place["valid"], json!(true));
            } else {
                assert_eq!(in_place["valid"], json!(false), "{name}");
            }
        }
    }

    #[test]
    fn failing_clean_control_contradicts_pass_but_not_fail() {
        let doc = resealed(|d| d["evidence"]["operations"][0]["outcome"] = json!("FAIL"));
        assert_eq!(
            codes_and_pointers(&doc),
            [contradiction("/evidence/operations/0/outcome")]
        );
        let doc = resealed(|d| {
            d["evidence"]["operations"][0]["outcome"] = json!("FAIL");
            d["statement"]["result"] = json!("FAIL");
        });
        assert!(validate_bundle(&doc).valid);
    }

    #[test]
    fn unrecovered_fault_case_contradicts_pass() {
        // No recovery policy.
        let doc = resealed(|d| {
            let mut fault = op("op-fault", "FAULT_CASE", None, 0, "FAIL");
            fault["recoveryPolicyId"] = Value::Null;
            with_operations(d, vec![fault]);
        });
        assert_eq!(
            codes_and_pointers(&doc),
            [contradiction("/evidence/operations/2/outcome")]
        );
        // A policy but no attempt at all.
        let doc =
            resealed(|d| with_operations(d, vec![op("op-fault", "FAULT_CASE", None, 0, "FAIL")]));
        assert_eq!(
            codes_and_pointers(&doc),
            [contradiction("/evidence/operations/2/outcome")]
        );
        // The last attempt failed: both the fault case and that attempt are reported;
        // the earlier, passing attempt is not.
        let doc = resealed(|d| {
            with_operations(
                d,
                vec![
                    op("op-fault", "FAULT_CASE", None, 0, "FAIL"),
                    op(
                        "op-retry-2",
                        "RECOVERY_ATTEMPT",
                        Some("op-fault"),
                        2,
                        "FAIL",
                    ),
                    op(
                        "op-retry-1",
                        "RECOVERY_ATTEMPT",
                        Some("op-fault"),
                        1,
                        "PASS",
                    ),
                ],
            )
        });
        assert_eq!(
            codes_and_pointers(&doc),
            [
                contradiction("/evidence/operations/2/outcome"),
                contradiction("/evidence/operations/3/outcome"),
            ]
        );
        // A fault case that ended CANCELLED is not judged, but its failed recovery is.
        let doc = resealed(|d| {
            with_operations(
                d,
                vec![
                    op("op-fault", "FAULT_CASE", None, 0, "CANCELLED"),
                    op(
                        "op-retry-1",
                        "RECOVERY_ATTEMPT",
                        Some("op-fault"),
                        1,
                        "FAIL",
                    ),
                ],
            )
        });
        assert_eq!(
            codes_and_pointers(&doc),
            [contradiction("/evidence/operations/3/outcome")]
        );
    }

    #[test]
    fn recovered_first_attempt_may_fail() {
        // The shape of the harness's reference-recovery bundles: children of the fault case.
        let doc = resealed(|d| {
            with_operations(
                d,
                vec![
                    op("op-fault", "FAULT_CASE", None, 0, "FAIL"),
                    op(
                        "op-retry-1",
                        "RECOVERY_ATTEMPT",
                        Some("op-fault"),
                        1,
                        "FAIL",
                    ),
                    op(
                        "op-retry-2",
                        "RECOVERY_ATTEMPT",
                        Some("op-fault"),
                        2,
                        "PASS",
                    ),
                ],
            )
        });
        assert_valid(&doc);
        // A chain: the second attempt's parent is the first attempt.
        let doc = resealed(|d| {
            with_operations(
                d,
                vec![
                    op("op-fault", "FAULT_CASE", None, 0, "FAIL"),
                    op(
                        "op-retry-1",
                        "RECOVERY_ATTEMPT",
                        Some("op-fault"),
                        1,
                        "FAIL",
                    ),
                    op(
                        "op-retry-2",
                        "RECOVERY_ATTEMPT",
                        Some("op-retry-1"),
                        2,
                        "PASS",
                    ),
                ],
            )
        });
        assert_valid(&doc);
    }

    /// A VALIDATOR_CHECK of `operation` (a copy of the negative control's oracle check).
    fn add_check(doc: &mut Value, id: &str, operation: &str, outcome: &str) {
        let mut check = observation_mut(doc, "obs-syn-oracle").clone();
        check["id"] = json!(id);
        check["artifactRefs"] = json!([format!("observations/{id}.json")]);
        check["operationRef"] = json!(operation);
        check["outcome"] = json!(outcome);
        doc["evidence"]["observations"]
            .as_array_mut()
            .unwrap()
            .push(check);
    }

    #[test]
    fn declared_stop_without_recovery_needs_a_passing_oracle_check() {
        // A policy that forbids the retry: the fault case fails, nothing follows,
        // and the recovery oracle confirms that this is the declared stop.
        let doc = resealed(|d| {
            with_operations(d, vec![op("op-fault", "FAULT_CASE", None, 0, "FAIL")]);
            add_check(d, "obs-fault-recovery", "op-fault", "PASS");
        });
        assert_valid(&doc);
        // Retries that all failed, stopped at the limit as declared.
        let doc = resealed(|d| {
            with_operations(
                d,
                vec![
                    op("op-fault", "FAULT_CASE", None, 0, "FAIL"),
                    op(
                        "op-retry-1",
                        "RECOVERY_ATTEMPT",
                        Some("op-fault"),
                        1,
                        "FAIL",
                    ),
                ],
            );
            add_check(d, "obs-fault-recovery", "op-fault", "PASS");
        });
        assert_valid(&doc);
        // The oracle says the recovery did not end as expected.
        let doc = resealed(|d| {
            with_operations(
                d,
                vec![
                    op("op-fault", "FAULT_CASE", None, 0, "CANCELLED"),
                    op(
                        "op-retry-1",
                        "RECOVERY_ATTEMPT",
                        Some("op-fault"),
                        1,
                        "TIME_LIMIT",
                    ),
                ],
            );
            add_check(d, "obs-fault-recovery", "op-fault", "FAIL");
        });
        assert_eq!(
            codes_and_pointers(&doc),
            [contradiction("/evidence/observations/10/outcome")]
        );
        // Without a recovery policy an oracle check does not excuse the failure.
        let doc = resealed(|d| {
            let mut fault = op("op-fault", "FAULT_CASE", None, 0, "FAIL");
            fault["recoveryPolicyId"] = Value::Null;
            with_operations(d, vec![fault]);
            add_check(d, "obs-fault-check", "op-fault", "PASS");
        });
        assert_eq!(
            codes_and_pointers(&doc),
            [contradiction("/evidence/operations/2/outcome")]
        );
    }

    #[test]
    fn failing_execution_or_clean_observation_contradicts_pass() {
        // PROCESS_EXECUTION is not needed for FIXTURE_BACKED_PROTOCOL, so only the new rule sees it.
        let doc = resealed(|d| observation_mut(d, "obs-syn-process")["outcome"] = json!("FAIL"));
        assert_eq!(
            codes_and_pointers(&doc),
            [contradiction("/evidence/observations/0/outcome")]
        );
        // A regression run of the clean control.
        let doc = resealed(|d| {
            observation_mut(d, "obs-syn-extra-007")["outcome"] = json!("FAIL");
        });
        assert_eq!(
            codes_and_pointers(&doc),
            [contradiction("/evidence/observations/7/outcome")]
        );
    }

    #[test]
    fn failing_observation_of_a_faulted_operation_may_stand_beside_pass() {
        let doc = resealed(|d| {
            let o = observation_mut(d, "obs-syn-process");
            o["outcome"] = json!("FAIL");
            o["operationRef"] = json!("op-syn-negative");
        });
        assert_valid(&doc);
    }

    #[test]
    fn failing_run_wide_observation_counts_only_on_a_required_surface() {
        let fail_cache_event = |d: &mut Value| {
            let o = observation_mut(d, "obs-syn-extra-009");
            o["outcome"] = json!("FAIL");
            o["operationRef"] = Value::Null;
        };
        // The synthetic coverage makes CACHE_BEHAVIOR required with this observation.
        let doc = resealed(fail_cache_event);
        assert_eq!(
            codes_and_pointers(&doc),
            [contradiction("/evidence/observations/9/outcome")]
        );
        let doc = resealed(|d| {
            fail_cache_event(d);
            for s in d["evidence"]["coverage"]["surfaces"]
                .as_array_mut()
                .unwrap()
            {
                if s["surface"] == "CACHE_BEHAVIOR" {
                    s["required"] = json!(false);
                }
            }
        });
        assert_valid(&doc);
    }

    #[test]
    fn failing_completion_check_is_reported_once() {
        // The only cleanup check failed: the reference rule already refuses the PASS.
        let doc = resealed(|d| observation_mut(d, "obs-syn-cleanup")["outcome"] = json!("FAIL"));
        assert_eq!(
            codes_and_pointers(&doc),
            [(c::COMPLETION_UNOBSERVED, "/statement/result".to_string())]
        );
        // A failing privacy scan beside a passing one: only the new rule sees it.
        let doc = resealed(|d| {
            let mut second = observation_mut(d, "obs-syn-privacy").clone();
            second["id"] = json!("obs-syn-privacy-2");
            second["artifactRefs"] = json!(["observations/obs-syn-privacy-2.json"]);
            second["outcome"] = json!("FAIL");
            second["operationRef"] = json!("op-syn-negative");
            d["evidence"]["observations"]
                .as_array_mut()
                .unwrap()
                .push(second);
        });
        assert_eq!(
            codes_and_pointers(&doc),
            [contradiction("/evidence/observations/10/outcome")]
        );
    }

    #[test]
    fn trial_summary_without_success_contradicts_pass() {
        let doc = resealed(|d| {
            d["evidence"]["trialSummary"]["counts"] =
                json!({"success": 0, "failure": 1, "incomplete": 0});
        });
        assert_eq!(
            codes_and_pointers(&doc),
            [
                contradiction("/evidence/trialSummary/counts/success"),
                contradiction("/evidence/trialSummary/counts/failure"),
            ]
        );
        // Counts that do not add up are the reference's finding alone.
        let doc = resealed(|d| d["evidence"]["trialSummary"]["counts"]["failure"] = json!(1));
        let found = codes_and_pointers(&doc);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, c::TRIAL_SUMMARY_INCONSISTENT);
    }

    #[test]
    fn reference_rules_keep_the_primary() {
        let mut doc = resealed(|d| d["evidence"]["operations"][0]["outcome"] = json!("FAIL"));
        doc["integrity"]["bundleDigest"] = json!("0".repeat(64));
        let report = validate_bundle(&doc);
        assert_eq!(report.primary(), Some(c::DIGEST_MISMATCH.as_str()));
        assert_eq!(
            report.findings.last().map(|f| f.code),
            Some(c::RESULT_CONTRADICTS_EVIDENCE)
        );
    }
}
