//! `mcp-res/operational-resilience/v1` observations judged from their record
//! (spec/operational.md). An operational observation stores what was measured, raw: the
//! declared workload, what was injected, each start's time, each request's intended, sent
//! and answered times with its outcome, and each `/proc` sample of the subject's
//! processes. Its reading (outcome and reason) is a pure function of that record and the
//! stored stdout: the runner labels an observation with [`reading`], and `validate` reads
//! it again and refuses a label the record does not give.
//!
//! No verdict comes from a guess at the machine's pace: every budget is the workload's,
//! declared and bound into the record, and a leak is a slope over the soak, not one sample.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::model::vocab::ProbeOutcome;

/// The profile these readings are for.
pub const PROFILE: &str = "mcp-res/operational-resilience/v1";
/// The declared workload, as bound into every observation.
pub const WORKLOAD_PATH: &str = "artifacts/workload.json";
/// The measurement report.
pub const MEASUREMENT_PATH: &str = "artifacts/measurement.json";

pub const START_WITHIN_BUDGET: &str = crate::diag::reasons::OPS_START_WITHIN_BUDGET;
pub const START_OVER_BUDGET: &str = crate::diag::reasons::OPS_START_OVER_BUDGET;
pub const SERVED_THROUGH_FLOOD: &str = crate::diag::reasons::OPS_SERVED_THROUGH_FLOOD;
pub const FLOOD_REFUSED: &str = crate::diag::reasons::OPS_FLOOD_REFUSED;
pub const FLOOD_LINE_SERVED: &str = crate::diag::reasons::OPS_FLOOD_LINE_SERVED;
pub const FLOOD_REQUESTS_REFUSED: &str = crate::diag::reasons::OPS_FLOOD_REQUESTS_REFUSED;
pub const VALID_UNANSWERED: &str = crate::diag::reasons::OPS_VALID_REQUEST_UNANSWERED;
pub const RSS_BOUNDED: &str = crate::diag::reasons::OPS_RSS_BOUNDED;
pub const RSS_GROWTH: &str = crate::diag::reasons::OPS_RSS_GROWTH_OVER_BUDGET;
pub const FDS_GROWTH: &str = crate::diag::reasons::OPS_FDS_GROWTH_OVER_BUDGET;
pub const CHILDREN_BOUNDED: &str = crate::diag::reasons::OPS_CHILDREN_BOUNDED;
pub const CHILDREN_GROWTH: &str = crate::diag::reasons::OPS_CHILDREN_GROWTH_OVER_BUDGET;
pub const LISTENERS_BOUNDED: &str = crate::diag::reasons::OPS_LISTENERS_BOUNDED;
pub const LISTENERS_GROWTH: &str = crate::diag::reasons::OPS_LISTENERS_GROWTH_OVER_BUDGET;
pub const SOAK_WITHIN_BUDGET: &str = crate::diag::reasons::OPS_SOAK_WITHIN_BUDGET;
pub const SOAK_OVER_BUDGET: &str = crate::diag::reasons::OPS_SOAK_OVER_BUDGET;
pub const TOO_FEW_SAMPLES: &str = crate::diag::reasons::OPS_TOO_FEW_SAMPLES;
pub const GENERATOR_LIMITED: &str = crate::diag::reasons::OPS_GENERATOR_LIMITED;
pub const INJECTION_NOT_DECLARED: &str = crate::diag::reasons::OPS_INJECTION_NOT_DECLARED;
pub const OVERSIZED_THROUGH: &str = crate::diag::reasons::OPS_SERVED_THROUGH_OVERSIZED;
pub const OVERSIZED_LINE_REFUSED: &str = crate::diag::reasons::OPS_OVERSIZED_LINE_REFUSED;
pub const OVERSIZED_LINE_SERVED: &str = crate::diag::reasons::OPS_OVERSIZED_LINE_SERVED;
pub const OVERSIZED_REQUEST_REFUSED: &str = crate::diag::reasons::OPS_OVERSIZED_REQUEST_REFUSED;
pub const SHUTDOWN_WITHIN_BUDGET: &str = crate::diag::reasons::OPS_SHUTDOWN_WITHIN_BUDGET;
pub const SHUTDOWN_OVER_BUDGET: &str = crate::diag::reasons::OPS_SHUTDOWN_OVER_BUDGET;
pub const TERM_WITHIN_BUDGET: &str = crate::diag::reasons::OPS_TERM_WITHIN_BUDGET;
pub const TERM_OVER_BUDGET: &str = crate::diag::reasons::OPS_TERM_OVER_BUDGET;
pub const BURST_ANSWERED: &str = crate::diag::reasons::OPS_BURST_ANSWERED;
pub const BURST_UNANSWERED: &str = crate::diag::reasons::OPS_BURST_UNANSWERED;
pub const CLEANUP_COMPLETE: &str = crate::diag::reasons::OPS_CLEANUP_COMPLETE;
pub const RESIDUE_LEFT: &str = crate::diag::reasons::OPS_RESIDUE_LEFT;
pub const ANSWERED_BY_DEADLINE: &str = crate::diag::reasons::OPS_ANSWERED_BY_DEADLINE;
pub const DEADLINE_MISSED: &str = crate::diag::reasons::OPS_DEADLINE_MISSED;
pub const DUPLICATE_BOUNDED: &str = crate::diag::reasons::OPS_DUPLICATE_BOUNDED;
pub const DUPLICATE_STALLED: &str = crate::diag::reasons::OPS_DUPLICATE_STALLED;
pub const CRASH_RECOVERED: &str = crate::diag::reasons::OPS_CRASH_RECOVERED;
pub const CRASH_RESIDUE: &str = crate::diag::reasons::OPS_CRASH_RESIDUE;
pub const RESTART_FAILED: &str = crate::diag::reasons::OPS_RESTART_FAILED;
pub const RESTART_SAME_SURFACE: &str = crate::diag::reasons::OPS_RESTART_SAME_SURFACE;
pub const SURFACE_CHANGED: &str = crate::diag::reasons::OPS_SURFACE_CHANGED;
pub const OVERLOAD_REJECTED: &str = crate::diag::reasons::OPS_OVERLOAD_REJECTED;
pub const OVERLOAD_LOST: &str = crate::diag::reasons::OPS_OVERLOAD_LOST;
pub const OVERLOAD_NOT_ENFORCED: &str = crate::diag::reasons::OPS_OVERLOAD_NOT_ENFORCED;
pub const HOLD_NOT_HELD: &str = crate::diag::reasons::OPS_HOLD_NOT_HELD;
pub const OVERLOAD_UNPLACED: &str = crate::diag::reasons::OPS_OVERLOAD_UNPLACED;
pub const RETRY_HONOURED: &str = crate::diag::reasons::OPS_RETRY_HONOURED;
pub const NO_RETRY_HINT: &str = crate::diag::reasons::OPS_NO_RETRY_HINT;
pub const RETRY_NOT_SERVED: &str = crate::diag::reasons::OPS_RETRY_NOT_SERVED;
pub const NO_REFUSAL: &str = crate::diag::reasons::OPS_NO_REFUSAL;
pub const QUEUE_BOUNDED: &str = crate::diag::reasons::OPS_QUEUE_BOUNDED;
pub const QUEUE_LOST: &str = crate::diag::reasons::OPS_QUEUE_LOST;
pub const QUEUE_NOT_DRAINED: &str = crate::diag::reasons::OPS_QUEUE_NOT_DRAINED;
pub const BACKPRESSURE_HELD: &str = crate::diag::reasons::OPS_BACKPRESSURE_HELD;
pub const BACKPRESSURE_LOST: &str = crate::diag::reasons::OPS_BACKPRESSURE_LOST;
pub const BACKPRESSURE_STALLED: &str = crate::diag::reasons::OPS_BACKPRESSURE_STALLED;
pub const BACKPRESSURE_NOT_REACHED: &str = crate::diag::reasons::OPS_BACKPRESSURE_NOT_REACHED;
/// The answers a backpressure observation needs, in bytes, for the runner's pipe to
/// have filled: two pipes' worth (the pipe, and one chunk its reader may take first).
pub const BACKPRESSURE_BYTES: u64 = 2 * 65536;
pub const RATE_LIMIT_HELD: &str = crate::diag::reasons::OPS_RATE_LIMIT_HELD;
pub const RATE_LIMIT_LOST: &str = crate::diag::reasons::OPS_RATE_LIMIT_LOST;
pub const RATE_NOT_ENFORCED: &str = crate::diag::reasons::OPS_RATE_NOT_ENFORCED;
pub const RATE_UNDER_DECLARED: &str = crate::diag::reasons::OPS_RATE_UNDER_DECLARED;
pub const RATE_LIMIT_STUCK: &str = crate::diag::reasons::OPS_RATE_LIMIT_STUCK;
pub const RATE_NOT_REACHED: &str = crate::diag::reasons::OPS_RATE_NOT_REACHED;
pub const STORAGE_FAILURE_REPORTED: &str = crate::diag::reasons::OPS_STORAGE_FAILURE_REPORTED;
pub const STORAGE_WRITE_CLAIMED: &str = crate::diag::reasons::OPS_STORAGE_WRITE_CLAIMED;
pub const STORAGE_WRITE_UNANSWERED: &str = crate::diag::reasons::OPS_STORAGE_WRITE_UNANSWERED;
pub const STORAGE_STOPPED_SERVING: &str = crate::diag::reasons::OPS_STORAGE_STOPPED_SERVING;
pub const STORAGE_WRITE_SERVED: &str = crate::diag::reasons::OPS_STORAGE_WRITE_SERVED;
pub const STORAGE_WRITE_FAILED: &str = crate::diag::reasons::OPS_STORAGE_WRITE_FAILED;
pub const STORAGE_FAULT_NOT_INJECTED: &str = crate::diag::reasons::OPS_STORAGE_FAULT_NOT_INJECTED;
pub const DOWNSTREAM_FAILURE_REPORTED: &str = crate::diag::reasons::OPS_DOWNSTREAM_FAILURE_REPORTED;
pub const DOWNSTREAM_FALSE_SUCCESS: &str = crate::diag::reasons::OPS_DOWNSTREAM_FALSE_SUCCESS;
pub const DOWNSTREAM_CALL_UNANSWERED: &str = crate::diag::reasons::OPS_DOWNSTREAM_CALL_UNANSWERED;
pub const DOWNSTREAM_STOPPED_SERVING: &str = crate::diag::reasons::OPS_DOWNSTREAM_STOPPED_SERVING;
pub const DOWNSTREAM_CALL_SERVED: &str = crate::diag::reasons::OPS_DOWNSTREAM_CALL_SERVED;
pub const DOWNSTREAM_CALL_FAILED: &str = crate::diag::reasons::OPS_DOWNSTREAM_CALL_FAILED;
pub const DOWNSTREAM_NOT_CALLED: &str = crate::diag::reasons::OPS_DOWNSTREAM_NOT_CALLED;
pub const OUTAGE_RECOVERED: &str = crate::diag::reasons::OPS_OUTAGE_RECOVERED;
pub const OUTAGE_NOT_RECOVERED: &str = crate::diag::reasons::OPS_OUTAGE_NOT_RECOVERED;
pub const SKEW_COMPATIBLE: &str = crate::diag::reasons::OPS_SKEW_COMPATIBLE;
pub const SKEW_TOOL_REMOVED: &str = crate::diag::reasons::OPS_SKEW_TOOL_REMOVED;
pub const SKEW_REVISION_DROPPED: &str = crate::diag::reasons::OPS_SKEW_REVISION_DROPPED;
pub const SKEW_OTHER_FAILED: &str = crate::diag::reasons::OPS_SKEW_OTHER_FAILED;
pub const SKEW_RUNNING_STOPPED: &str = crate::diag::reasons::OPS_SKEW_RUNNING_STOPPED;
pub const SKEW_NOT_STARTED: &str = crate::diag::reasons::OPS_SKEW_NOT_STARTED;
pub const SKEW_OTHER_SERVER: &str = crate::diag::reasons::OPS_SKEW_OTHER_SERVER;
pub const SKEW_NO_TOOLS: &str = crate::diag::reasons::OPS_SKEW_NO_TOOLS;
/// The key of the downstream stub's log lines on the subject's stderr (and of the
/// runner's control lines to it on stdin).
pub const STUB_KEY: &str = "mcpresDownstream";

const OPEN_FAILED: &str = crate::diag::reasons::OPEN_FAILED;
const OPEN_REFUSED: &str = crate::diag::reasons::OPEN_REFUSED;
const SUBJECT_EXITED: &str = crate::diag::reasons::SUBJECT_EXITED;
const LABEL_NOT_IN_RECORD: &str = crate::diag::reasons::LABEL_NOT_IN_RECORD;

/// A reading: outcome, reason and why.
pub type Reading = (ProbeOutcome, String, String);

fn read(o: ProbeOutcome, reason: &str, why: impl Into<String>) -> Reading {
    (o, reason.to_string(), why.into())
}

fn u(v: &Value, k: &str) -> Option<u64> {
    v.get(k).and_then(Value::as_u64)
}

/// The smallest leak a control injects, KiB a second.
pub const LEAK_FLOOR_KIB_PER_S: u64 = 8192;
/// Resident memory that grows by less than this over the judged operations is never
/// read as a leak: the kernel may back a heap with 2 MiB huge pages, so one allocation
/// can show as a 2 MiB step.
pub const RSS_NOISE_KIB: f64 = 4096.0;
/// Descendants or listeners that grow by fewer than this over the judged operations are
/// never read as a leak.
pub const HANDLE_NOISE: f64 = 2.0;

/// The fewest children or listeners a control leaves, per ten seconds.
pub const HANDLE_FLOOR_PER_10S: u64 = 50;

/// What is injected for `check`'s `role` under workload `w` (the shim's spec as JSON;
/// `{}` for nothing). The runner injects exactly this, and the judge refuses a record
/// that says it injected anything else.
pub fn injection(check: &str, role: &str, w: &Value) -> Value {
    injection_over(check, role, w, false)
}

/// [`injection`] over a transport: Streamable HTTP (`http`) or stdio. The one check
/// whose control differs is `graceful-shutdown`: over stdio the subject's end of file
/// is held back, over HTTP (where the end is SIGTERM once the client has ended its
/// session) the SIGTERM.
pub fn injection_over(check: &str, role: &str, w: &Value, http: bool) -> Value {
    let b = &w["budgets"];
    let factor = u(&w["controls"], "defectFactor").unwrap_or(4);
    let rate = u(&w["load"], "ratePerS").unwrap_or(1);
    // A growth of `per_1000` per 1,000 operations at `rate` operations a second, made
    // `factor` times larger: per second, and per ten seconds.
    let per_s = |per_1000: u64| (per_1000.max(1) * factor * rate).div_ceil(1000);
    let per_10s = |per_1000: u64| (per_1000.max(1) * factor * rate * 10).div_ceil(1000);
    match (check, role) {
        ("cold-start", "negative") => json!({"delayMs": u(b, "coldStartMs").unwrap_or(0) + 500}),
        ("cold-start", "mutant") => json!({"delayMs": u(b, "coldStartMs").unwrap_or(0) / factor}),
        ("warm-start", "negative") => json!({"delayMs": u(b, "warmStartMs").unwrap_or(0) + 500}),
        ("warm-start", "mutant") => json!({"delayMs": u(b, "warmStartMs").unwrap_or(0) / factor}),
        // At least 2 MiB a second: the kernel may back a process's heap with 2 MiB
        // huge pages, so resident memory grows in such steps.
        ("memory-resource-leak", "negative") => {
            json!({"leakKibPerS": per_s(u(b, "rssKibPer1000Ops").unwrap_or(0)).max(LEAK_FLOOR_KIB_PER_S)})
        }
        // The same memory, once: a step, not a slope.
        ("memory-resource-leak", "mutant") => {
            let soak_s = u(&w["load"], "controlSoakMs").unwrap_or(0) / 1000;
            let per = per_s(u(b, "rssKibPer1000Ops").unwrap_or(0)).max(LEAK_FLOOR_KIB_PER_S);
            json!({"stepKib": per * soak_s.max(1)})
        }
        // At least two a second: enough steps in a control soak for a slope.
        ("child-process-leak", "negative") => {
            json!({"childrenPer10s": per_10s(u(b, "childrenPer1000Ops").unwrap_or(0)).max(HANDLE_FLOOR_PER_10S)})
        }
        ("child-process-leak", "mutant") => json!({"transientChildren": true}),
        ("listener-leak", "negative") => {
            json!({"listenersPer10s": per_10s(u(b, "listenersPer1000Ops").unwrap_or(0)).max(HANDLE_FLOOR_PER_10S)})
        }
        ("listener-leak", "mutant") => json!({"transientListeners": true}),
        ("bounded-soak", "negative") => {
            json!({"responseDelayMs": u(b, "p99Ms").unwrap_or(0) * 3 / 2})
        }
        ("bounded-soak", "mutant") => {
            json!({"responseDelayMs": u(b, "p50Ms").unwrap_or(0) / factor})
        }
        // The subject sees its end of file a second past the budget, or a quarter of it.
        // Over HTTP, SIGTERM does (after the client has ended its session).
        ("graceful-shutdown", "negative") if http => {
            json!({"termDelayMs": u(b, "shutdownMs").unwrap_or(0) + 1000})
        }
        ("graceful-shutdown", "mutant") if http => {
            json!({"termDelayMs": u(b, "shutdownMs").unwrap_or(0) / factor})
        }
        ("graceful-shutdown", "negative") => {
            json!({"eofDelayMs": u(b, "shutdownMs").unwrap_or(0) + 1000})
        }
        ("graceful-shutdown", "mutant") => {
            json!({"eofDelayMs": u(b, "shutdownMs").unwrap_or(0) / factor})
        }
        // SIGTERM reaches the subject a second past the budget, or a quarter of it.
        ("forced-shutdown", "negative") => {
            json!({"termDelayMs": u(b, "termMs").unwrap_or(0) + 1000})
        }
        ("forced-shutdown", "mutant") => {
            json!({"termDelayMs": u(b, "termMs").unwrap_or(0) / factor})
        }
        // A queue in front of the subject that holds the workload's concurrency and
        // loses what is over it; the mutant's refuses it at once (bounded).
        ("bounded-concurrency", "negative") => {
            json!({"dropOverInFlight": u(&w["load"], "concurrency").unwrap_or(1)})
        }
        ("bounded-concurrency", "mutant") => {
            json!({"rejectOverInFlight": u(&w["load"], "concurrency").unwrap_or(1)})
        }
        // A process that outlives the subject; the mutant's children end by themselves.
        ("cleanup", "negative") => json!({"orphan": true}),
        ("cleanup", "mutant") => json!({"transientChildren": true}),
        // Answers held back a second past the request timeout, or a quarter of it.
        ("timeout", "negative") => {
            json!({"responseDelayMs": u(b, "requestTimeoutMs").unwrap_or(0) + 1000})
        }
        ("timeout", "mutant") => {
            json!({"responseDelayMs": u(b, "requestTimeoutMs").unwrap_or(0) / factor})
        }
        // A transport that stops passing input on once a request comes twice; the
        // mutant's passes the first copy only (suppression at the transport).
        ("duplicate-delivery", "negative") => json!({"deafAfterDuplicate": true}),
        ("duplicate-delivery", "mutant") => json!({"dropDuplicates": true}),
        // A process of the subject's tree that survives its crash; the mutant's
        // children end by themselves.
        ("process-crash", "negative") => json!({"orphan": true}),
        ("process-crash", "mutant") => json!({"transientChildren": true}),
        // Tool names that differ at every start; the mutant's are renamed the same way
        // at every start.
        ("restart", "negative") => json!({"toolSuffix": "random"}),
        ("restart", "mutant") => json!({"toolSuffix": "-v1"}),
        // A queue in front of the subject that holds its declared limit and loses what
        // is over it; the mutant's refuses it at once (with a retry hint).
        ("overload-rejection" | "queue-saturation", "negative") => {
            json!({"dropOverInFlight": u(&w["subject"], "maxInFlight").unwrap_or(1)})
        }
        ("overload-rejection" | "queue-saturation" | "retry-after", "mutant") => {
            json!({"rejectOverInFlight": u(&w["subject"], "maxInFlight").unwrap_or(1)})
        }
        // A rate limit at the transport, the declared one, that drops what is over it;
        // the mutant's refuses it at once (with a retry hint).
        ("rate-limiting", "negative") => json!({
            "dropOverRate": u(&w["rateLimit"], "requests").unwrap_or(1),
            "rateWindowMs": u(&w["rateLimit"], "windowMs").unwrap_or(1000),
        }),
        ("rate-limiting", "mutant") => json!({
            "rejectOverRate": u(&w["rateLimit"], "requests").unwrap_or(1),
            "rateWindowMs": u(&w["rateLimit"], "windowMs").unwrap_or(1000),
        }),
        // A transport that drops what the runner's full pipe does not take at once; the
        // mutant's holds every answer 50 ms (and buffers them all).
        ("backpressure", "negative") => json!({"dropWhenFull": true}),
        ("backpressure", "mutant") => json!({"responseDelayMs": 50}),
        // The write tool answered with a success at the transport, whatever the subject
        // said (a swallowed failure).
        ("disk-full" | "permission-failure", "negative") => {
            json!({"claimTool": w["storage"]["writeTool"].as_str().unwrap_or("")})
        }
        // The declared downstream served by the stub: unavailable from the start (the
        // taxonomy's dependency-failure), the control's calls answered with a success
        // at the transport whatever the subject said (a false success), the mutant's
        // downstream 75 ms late (the taxonomy's delayed-response) but answering.
        ("downstream-failure", _) => {
            let env = w["downstream"]["urlEnv"].as_str().unwrap_or("");
            match role {
                "negative" => json!({"downstreamEnv": env, "downstreamPhase": "down",
                    "claimTool": w["downstream"]["callTool"].as_str().unwrap_or("")}),
                "mutant" => json!({"downstreamEnv": env, "downstreamPhase": "slow"}),
                _ => json!({"downstreamEnv": env, "downstreamPhase": "down"}),
            }
        }
        // The stub up, then down, then up again (moved by the runner); the control's
        // transport repeats the first failed answer to the call for ever, the mutant's
        // for a quarter of the declared recovery time (a breaker that closes).
        ("partial-outage", _) => {
            let d = &w["downstream"];
            let env = d["urlEnv"].as_str().unwrap_or("");
            let tool = d["callTool"].as_str().unwrap_or("");
            match role {
                "negative" => json!({"downstreamEnv": env, "stickyFailureTool": tool}),
                "mutant" => json!({"downstreamEnv": env, "stickyFailureTool": tool,
                    "stickyFailureMs": (u(d, "recoveryMs").unwrap_or(0) / 4).max(1)}),
                _ => json!({"downstreamEnv": env}),
            }
        }
        // The other version leaves the first tool out of its list; the mutant's adds
        // one (an additive change).
        ("rolling-version-skew", "negative") => json!({"dropFirstTool": true}),
        ("rolling-version-skew", "mutant") => json!({"extraTool": "mcpres-added-tool"}),
        // Refusals without a retry hint.
        ("retry-after", "negative") => {
            json!({"rejectOverInFlight": u(&w["subject"], "maxInFlight").unwrap_or(1), "noRetryHint": true})
        }
        _ => json!({}),
    }
}

/// The storage fault the sandbox injects for `check`'s `role` under workload `w`, as the
/// sandbox records it in its scope (`null` for none): the declared directory with no
/// room at all (`disk-full`) or read-only (`permission-failure`), for the positive and
/// the control; the mutant writes with the storage as it is.
pub fn storage_fault(check: &str, role: &str, w: &Value) -> Value {
    let Some(path) = w["storage"]["path"].as_str() else {
        return Value::Null;
    };
    match (check, role) {
        (_, "mutant") => Value::Null,
        ("disk-full", _) => json!({"fault": "disk-full", "path": path, "bytes": 0}),
        ("permission-failure", _) => json!({"fault": "read-only", "path": path}),
        _ => Value::Null,
    }
}

/// The reading of an operational observation from its transcript (`None` when the
/// transcript holds no operational record: not an operational observation).
pub fn reading(check: &str, role: &str, transcript: &Value) -> Option<Reading> {
    let rec = transcript.pointer("/observation/ops")?;
    let w = &rec["workload"];
    let declared = injection_over(check, role, w, rec["transport"] == "streamable-http");
    if rec["injected"] != declared {
        return Some(read(
            ProbeOutcome::NotObserved,
            INJECTION_NOT_DECLARED,
            format!(
                "the record says {} was injected; the workload declares {declared} for the {role} of {check}",
                rec["injected"],
            ),
        ));
    }
    if let Some(why) = rec["otherNotStarted"].as_str() {
        return Some(read(ProbeOutcome::NotObserved, SKEW_NOT_STARTED, why));
    }
    if let Some(why) = rec["startError"].as_str() {
        return Some(read(ProbeOutcome::NotObserved, OPEN_FAILED, why));
    }
    if let Some(open) = rec["open"].as_str().filter(|o| *o != "result") {
        let reason = if open.starts_with("error:") && open != "error:-32601" {
            OPEN_REFUSED
        } else {
            OPEN_FAILED
        };
        return Some(read(
            ProbeOutcome::NotObserved,
            reason,
            format!("the opening got {open}"),
        ));
    }
    Some(match (check, rec["kind"].as_str()) {
        ("cold-start" | "warm-start", Some("start")) => start_reading(check, rec),
        ("malformed-flood", Some("flood")) => flood_reading(role, rec, transcript),
        ("oversized-input", Some("oversized")) => oversized_reading(role, rec, transcript),
        ("graceful-shutdown", Some("shutdown")) => shutdown_reading(rec, transcript),
        ("forced-shutdown", Some("term")) => term_reading(rec, transcript),
        ("cleanup", Some("cleanup")) => cleanup_reading(transcript),
        ("bounded-concurrency", Some("burst")) => burst_reading(rec, transcript),
        ("timeout", Some("timeout")) => timeout_reading(rec, transcript),
        ("duplicate-delivery", Some("duplicate")) => duplicate_reading(rec, transcript),
        ("process-crash", Some("crash")) => crash_reading(rec, transcript),
        ("restart", Some("restart")) => restart_reading(rec, transcript),
        ("overload-rejection" | "retry-after" | "queue-saturation", Some("overload")) => {
            overload_reading(check, rec, transcript)
        }
        ("rate-limiting", Some("rate")) => rate_reading(rec, transcript),
        ("backpressure", Some("backpressure")) => backpressure_reading(rec, transcript),
        ("disk-full" | "permission-failure", Some("storage")) => {
            storage_reading(check, role, rec, transcript)
        }
        ("downstream-failure", Some("downstream")) => downstream_reading(rec, transcript),
        ("partial-outage", Some("outage")) => outage_reading(rec, transcript),
        ("rolling-version-skew", Some("skew")) => skew_reading(rec, transcript),
        (
            "memory-resource-leak" | "child-process-leak" | "listener-leak" | "bounded-soak",
            Some("soak"),
        ) => soak_reading(check, rec, transcript),
        (_, kind) => read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            format!("a {kind:?} record is not one check {check} is read from"),
        ),
    })
}

fn start_reading(check: &str, rec: &Value) -> Reading {
    let budget_key = if check == "cold-start" {
        "coldStartMs"
    } else {
        "warmStartMs"
    };
    let Some(budget) = u(&rec["workload"]["budgets"], budget_key) else {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "no budget in the record",
        );
    };
    let starts = rec["starts"].as_array().cloned().unwrap_or_default();
    if starts.is_empty() {
        return read(ProbeOutcome::NotObserved, OPEN_FAILED, "no start recorded");
    }
    let mut times = Vec::new();
    for (i, s) in starts.iter().enumerate() {
        match s["open"].as_str() {
            Some("result") => match u(s, "ms") {
                Some(ms) => times.push(ms),
                None => {
                    return read(
                        ProbeOutcome::NotObserved,
                        LABEL_NOT_IN_RECORD,
                        "a start with no time",
                    );
                }
            },
            Some(e) if e.starts_with("error:") && e != "error:-32601" => {
                return read(
                    ProbeOutcome::NotObserved,
                    OPEN_REFUSED,
                    format!("start {}: the opening was answered with {e}", i + 1),
                );
            }
            other => {
                return read(
                    ProbeOutcome::NotObserved,
                    OPEN_FAILED,
                    format!(
                        "start {}: the opening got {}",
                        i + 1,
                        other.unwrap_or("nothing")
                    ),
                );
            }
        }
    }
    // cold-start: the median of the fresh starts; warm-start: the last start, made right
    // after the others.
    let judged = if check == "cold-start" {
        let mut t = times.clone();
        t.sort_unstable();
        t[t.len() / 2]
    } else {
        *times.last().expect("at least one")
    };
    let what = if check == "cold-start" {
        "median start"
    } else {
        "start after a start"
    };
    if judged <= budget {
        read(
            ProbeOutcome::Accept,
            START_WITHIN_BUDGET,
            format!("{what} {judged} ms, within the workload's {budget} ms (starts: {times:?} ms)"),
        )
    } else {
        read(
            ProbeOutcome::Reject,
            START_OVER_BUDGET,
            format!("{what} {judged} ms, over the workload's {budget} ms (starts: {times:?} ms)"),
        )
    }
}

/// Every JSON-RPC response in the stored stdout, by id (as canonical text).
fn answers(transcript: &Value) -> Option<BTreeMap<String, Value>> {
    let messages = match transcript
        .get("http")
        .filter(|h| h.get("connections").is_some())
    {
        Some(web) => super::http::messages(web)?,
        None => super::stdio::messages(&super::stdio::stream_prefix(transcript, "stdout")?),
    };
    let mut out = BTreeMap::new();
    for m in messages {
        if let Some(id) = m.get("id")
            && (m.get("result").is_some() || m.get("error").is_some())
        {
            out.entry(id.to_string()).or_insert(m);
        }
    }
    Some(out)
}

/// Did the subject end by itself? Its exit came before mcpres did anything to
/// end it, or it closed its stdout before that (an interpreter closes its
/// streams, then takes its time to finish exiting: the close is the ending
/// observed, whatever the exit's moment).
fn ended_by_itself(transcript: &Value) -> bool {
    let ended_by = transcript.pointer("/end/endedBy");
    if ended_by == Some(&json!("subject")) {
        return true;
    }
    let Some(acted) = ended_by.and_then(|e| e.get("atMs")).and_then(Value::as_u64) else {
        return false;
    };
    transcript["events"].as_array().is_some_and(|events| {
        events.iter().any(|e| {
            e["event"] == "stdout-closed" && e["atMs"].as_u64().is_some_and(|at| at < acted)
        })
    })
}

fn flood_reading(role: &str, rec: &Value, transcript: &Value) -> Reading {
    let Some(answers) = answers(transcript) else {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "no stored stdout",
        );
    };
    let ids = |k: &str| -> Vec<String> {
        rec[k]
            .as_array()
            .map_or_else(Vec::new, |a| a.iter().map(Value::to_string).collect())
    };
    let valid = ids("validIds");
    let flood = ids("floodIds");
    let gone = ended_by_itself(transcript);
    let unanswered: Vec<&String> = valid.iter().filter(|i| !answers.contains_key(*i)).collect();
    // The well-formed requests mcpres sent (the opening, the valid ones, the mutant's
    // flood), read from the stored stdin: a result to anything else, or to a request of
    // the flood, is a line of the flood served.
    let sent: std::collections::BTreeSet<String> = if web(transcript).is_some() {
        sent_ids(transcript)
    } else {
        super::stdio::stream_prefix(transcript, "stdin")
            .map(|b| {
                b.split(|&c| c == b'\n')
                    .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
                    .filter_map(|m| m.get("id").map(Value::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let served = answers
        .iter()
        .filter(|(id, m)| (!sent.contains(*id) || flood.contains(id)) && m.get("result").is_some())
        .count();
    let lines = u(rec, "floodLines").unwrap_or(0);
    if served > 0 {
        return read(
            ProbeOutcome::Accept,
            FLOOD_LINE_SERVED,
            format!("{served} line(s) of the flood of {lines} were answered with a result"),
        );
    }
    if !unanswered.is_empty() {
        return if gone {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                format!(
                    "the subject exited during a flood of {lines} line(s); {} of {} valid request(s) unanswered",
                    unanswered.len(),
                    valid.len()
                ),
            )
        } else {
            read(
                ProbeOutcome::NoEffect,
                VALID_UNANSWERED,
                format!(
                    "{} of {} valid request(s) among a flood of {lines} line(s) got no answer while the subject ran",
                    unanswered.len(),
                    valid.len()
                ),
            )
        };
    }
    let refused_requests = flood.iter().filter(|i| answers.contains_key(*i)).count();
    if role == "positive" {
        return read(
            ProbeOutcome::Accept,
            SERVED_THROUGH_FLOOD,
            format!(
                "all {} valid request(s) answered among a flood of {lines} line(s)",
                valid.len()
            ),
        );
    }
    if refused_requests > 0 {
        return read(
            ProbeOutcome::Reject,
            FLOOD_REQUESTS_REFUSED,
            format!(
                "{refused_requests} well-formed request(s) of the flood answered with errors under their ids"
            ),
        );
    }
    read(
        ProbeOutcome::Reject,
        FLOOD_REFUSED,
        format!(
            "no line of the flood of {lines} was served, and the request after it was answered"
        ),
    )
}

/// The ids of the requests the stored stdin sent, every chunk read: a kept chunk line
/// by line, an elided one (a line too long to keep) by the id at the head of its line,
/// which the runner writes first (`{"jsonrpc":"2.0","id":N,`).
fn sent_ids(transcript: &Value) -> std::collections::BTreeSet<String> {
    if let Some(web) = web(transcript) {
        return http_sent_ids(web);
    }
    let mut out = std::collections::BTreeSet::new();
    for c in transcript["chunks"].as_array().into_iter().flatten() {
        if c["stream"] != "stdin" {
            continue;
        }
        if let Some(text) = c["text"].as_str() {
            for l in text.split('\n') {
                if let Some(id) = serde_json::from_str::<Value>(l)
                    .ok()
                    .and_then(|m| m.get("id").cloned())
                {
                    out.insert(id.to_string());
                }
            }
        } else if let Some(id) = elided_id(c, |b| b) {
            out.insert(id);
        }
    }
    out
}

/// The id of the request at the head of an elided chunk: its stored head (after
/// `skip`, which takes a request's HTTP head off) starts with the line the runner
/// writes first, `{"jsonrpc":"2.0","id":N,`.
fn elided_id(chunk: &Value, skip: impl Fn(&[u8]) -> &[u8]) -> Option<String> {
    use base64::Engine;
    let head = chunk
        .pointer("/elided/headBase64")
        .and_then(Value::as_str)?;
    let head = base64::engine::general_purpose::STANDARD
        .decode(head)
        .ok()?;
    let head = std::str::from_utf8(skip(&head)).ok()?;
    let rest = head.strip_prefix(r#"{"jsonrpc":"2.0","id":"#)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty() && rest[digits.len()..].starts_with(',')).then_some(digits)
}

/// The HTTP conversation of an observation made over Streamable HTTP (`http`, with
/// its connections), if it was.
fn web(transcript: &Value) -> Option<&Value> {
    transcript
        .get("http")
        .filter(|h| h.get("connections").is_some())
}

/// The ids of the requests posted in an HTTP conversation, read chunk by chunk from
/// what mcpres sent: a kept chunk's body (after its head, when the chunk holds one)
/// parsed as one message, an elided chunk by the id at the head of its body, which
/// the runner writes first (`{"jsonrpc":"2.0","id":N,`) and, for a body too large to
/// keep, in a chunk of its own.
fn http_sent_ids(web: &Value) -> std::collections::BTreeSet<String> {
    fn body_of(b: &[u8]) -> &[u8] {
        match b.windows(4).position(|x| x == b"\r\n\r\n") {
            Some(i) => &b[i + 4..],
            None => b,
        }
    }
    let mut out = std::collections::BTreeSet::new();
    for e in web["events"].as_array().into_iter().flatten() {
        if e["stream"] != "sent" {
            continue;
        }
        if let Some(bytes) = super::http::chunk_bytes(e) {
            if let Some(id) = serde_json::from_slice::<Value>(body_of(&bytes))
                .ok()
                .and_then(|m| m.get("id").cloned())
            {
                out.insert(id.to_string());
            }
        } else if let Some(id) = elided_id(e, body_of) {
            out.insert(id);
        }
    }
    out
}

/// `oversized-input`: one line of the workload's size (a well-formed request at the
/// positive, bytes that are not JSON at the negative, a well-formed request for a
/// method no server has at the mutant), then a valid request that must be answered.
fn oversized_reading(role: &str, rec: &Value, transcript: &Value) -> Reading {
    let Some(answers) = answers(transcript) else {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "no stored stdout",
        );
    };
    let bytes = u(rec, "oversizedBytes").unwrap_or(0);
    let sent = sent_ids(transcript);
    let big = rec["oversizedId"].to_string();
    let after = rec["afterId"].to_string();
    // A result to an id mcpres never sent, or to the mutant's request for no method,
    // is the oversized line served.
    let served = answers
        .iter()
        .filter(|(id, m)| {
            m.get("result").is_some() && (!sent.contains(*id) || (role == "mutant" && **id == big))
        })
        .count();
    if served > 0 {
        return read(
            ProbeOutcome::Accept,
            OVERSIZED_LINE_SERVED,
            format!(
                "{served} answer(s) with a result to no request of mcpres's, or to the request for no method, after a line of {bytes} bytes"
            ),
        );
    }
    if !sent.contains(&after) {
        // Over HTTP a subject that exited on the line leaves nothing to connect to:
        // the request after it is never sent.
        return if ended_by_itself(transcript) {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                format!(
                    "the subject exited after a line of {bytes} bytes, before the request after it could be sent"
                ),
            )
        } else {
            read(
                ProbeOutcome::NotObserved,
                LABEL_NOT_IN_RECORD,
                "the stored stdin holds no request after the oversized line",
            )
        };
    }
    let big_answer = match answers.get(&big) {
        None => "no answer".to_string(),
        Some(m) if m.get("result").is_some() => "a result".to_string(),
        Some(m) => format!(
            "error {}",
            m.pointer("/error/code")
                .and_then(Value::as_i64)
                .unwrap_or(0)
        ),
    };
    if !answers.contains_key(&after) {
        return if ended_by_itself(transcript) {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                format!(
                    "the subject exited after a line of {bytes} bytes; the request after it unanswered"
                ),
            )
        } else {
            read(
                ProbeOutcome::NoEffect,
                VALID_UNANSWERED,
                format!(
                    "the request after a line of {bytes} bytes got no answer while the subject ran"
                ),
            )
        };
    }
    if role == "positive" {
        return read(
            ProbeOutcome::Accept,
            OVERSIZED_THROUGH,
            format!(
                "a request of {bytes} bytes got {big_answer}, and the request after it was answered"
            ),
        );
    }
    if role == "mutant" && answers.contains_key(&big) {
        return read(
            ProbeOutcome::Reject,
            OVERSIZED_REQUEST_REFUSED,
            format!(
                "the well-formed request of {bytes} bytes for no method got {big_answer} under its id: a refusal of a request"
            ),
        );
    }
    read(
        ProbeOutcome::Reject,
        OVERSIZED_LINE_REFUSED,
        format!(
            "a line of {bytes} bytes that is not JSON was not served, and the request after it was answered"
        ),
    )
}

/// `bounded-concurrency`: the workload's concurrency times its defect factor requests
/// sent at once; every one must get an answer (a result or an error: an overload
/// refusal is a bounded outcome) while the subject runs.
fn burst_reading(rec: &Value, transcript: &Value) -> Reading {
    let Some(answers) = answers(transcript) else {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "no stored stdout",
        );
    };
    let burst: Vec<String> = rec["burstIds"]
        .as_array()
        .map_or_else(Vec::new, |a| a.iter().map(Value::to_string).collect());
    let sent = sent_ids(transcript);
    if burst.is_empty() || burst.iter().any(|i| !sent.contains(i)) {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the record's burst is not what the stored stdin sent",
        );
    }
    let unanswered = burst.iter().filter(|i| !answers.contains_key(*i)).count();
    let mut errors: BTreeMap<i64, usize> = BTreeMap::new();
    for i in &burst {
        if let Some(code) = answers
            .get(i)
            .and_then(|m| m.pointer("/error/code"))
            .and_then(Value::as_i64)
        {
            *errors.entry(code).or_default() += 1;
        }
    }
    let n = burst.len();
    if unanswered > 0 {
        return if ended_by_itself(transcript) {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                format!(
                    "the subject exited with {unanswered} of {n} requests sent at once unanswered"
                ),
            )
        } else {
            read(
                ProbeOutcome::NoEffect,
                BURST_UNANSWERED,
                format!(
                    "{unanswered} of {n} requests sent at once got no answer while the subject ran"
                ),
            )
        };
    }
    let errs: usize = errors.values().sum();
    read(
        ProbeOutcome::Accept,
        BURST_ANSWERED,
        format!(
            "all {n} requests sent at once answered: {} with a result, {errs} with an error{}",
            n - errs,
            if errors.is_empty() {
                String::new()
            } else {
                format!(" (by code: {errors:?})")
            }
        ),
    )
}

/// The time (ms from the probe's start) of the first stored event named `name`, and of
/// the first `exited` event after it.
fn event_then_exit(transcript: &Value, name: &str) -> (Option<u64>, Option<u64>) {
    let events = transcript["events"].as_array().cloned().unwrap_or_default();
    let Some(at) = events.iter().position(|e| e["event"] == name) else {
        return (None, None);
    };
    let exit = events[at + 1..]
        .iter()
        .find(|e| e["event"] == "exited")
        .and_then(|e| u(e, "atMs"));
    (u(&events[at], "atMs"), exit)
}

/// `graceful-shutdown`: requests sent, stdin closed; the subject must answer them and
/// exit by itself within the workload's `shutdownMs` of the close.
fn shutdown_reading(rec: &Value, transcript: &Value) -> Reading {
    if rec["transport"] == "streamable-http" {
        return shutdown_reading_http(rec, transcript);
    }
    let budget = u(&rec["workload"]["budgets"], "shutdownMs").unwrap_or(0);
    let Some(answers) = answers(transcript) else {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "no stored stdout",
        );
    };
    let in_flight: Vec<String> = rec["inFlightIds"]
        .as_array()
        .map_or_else(Vec::new, |a| a.iter().map(Value::to_string).collect());
    let (closed, exit) = event_then_exit(transcript, "stdin-closed");
    let Some(closed) = closed else {
        return if ended_by_itself(transcript) {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                "the subject exited before its stdin was closed",
            )
        } else {
            read(
                ProbeOutcome::NotObserved,
                LABEL_NOT_IN_RECORD,
                "no stdin-closed event in the record",
            )
        };
    };
    let unanswered = in_flight
        .iter()
        .filter(|i| !answers.contains_key(*i))
        .count();
    match (exit, super::stdio::exited_after_stdin_close(transcript)) {
        (Some(exit), Some(true)) => {
            let took = exit.saturating_sub(closed);
            // Requests in flight at the close are reported, not judged: MCP leaves the
            // end of a connection to the transport, and a client that closes the
            // server's input has ended it (spec/operational.md).
            let drained = format!(
                "{} of the {} request(s) sent right before the close answered",
                in_flight.len() - unanswered,
                in_flight.len()
            );
            if took <= budget {
                read(
                    ProbeOutcome::Accept,
                    SHUTDOWN_WITHIN_BUDGET,
                    format!(
                        "exited by itself {took} ms after stdin closed (budget {budget} ms); {drained}"
                    ),
                )
            } else {
                read(
                    ProbeOutcome::Reject,
                    SHUTDOWN_OVER_BUDGET,
                    format!(
                        "exited by itself {took} ms after stdin closed, over the workload's {budget} ms; {drained}"
                    ),
                )
            }
        }
        (_, Some(false)) => read(
            ProbeOutcome::Reject,
            SHUTDOWN_OVER_BUDGET,
            format!(
                "no exit by itself within the runner's wait after stdin closed (budget {budget} ms); it was ended by {}",
                ended_by(transcript)
            ),
        ),
        _ => read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the record shows neither an exit after stdin closed nor the runner giving up",
        ),
    }
}

/// `graceful-shutdown` over Streamable HTTP, where a server has no input to close and
/// MCP leaves the process to its operator: the client's session ended first (MCP's
/// DELETE with the session id, or, with none, its connections closed), then SIGTERM;
/// the subject must exit within the workload's `shutdownMs` of the signal. The
/// DELETE's answer (MCP lets a server answer 405) and the requests answered before
/// the end are reported, not judged.
fn shutdown_reading_http(rec: &Value, transcript: &Value) -> Reading {
    let budget = u(&rec["workload"]["budgets"], "shutdownMs").unwrap_or(0);
    let web = transcript.get("http").unwrap_or(&Value::Null);
    let Some(sent) = super::http::sent_bodies(web) else {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "no stored HTTP conversation",
        );
    };
    let deletes = deleting_connections(web);
    let ended = match rec["sessionEnd"].as_str() {
        Some("delete") => match deletes.as_slice() {
            [conn] => {
                let status = super::http::exchanges_on(web, *conn)
                    .and_then(|e| e.into_iter().next())
                    .map(|e| e.status);
                match status {
                    Some(s) => format!("its session was ended with DELETE (HTTP {s})"),
                    None => "its session was ended with DELETE (no response)".into(),
                }
            }
            _ => {
                return read(
                    ProbeOutcome::NotObserved,
                    LABEL_NOT_IN_RECORD,
                    format!(
                        "the record says the session was ended with DELETE, and its bytes hold {} DELETE request(s)",
                        deletes.len()
                    ),
                );
            }
        },
        Some("no-session-id") if deletes.is_empty() => {
            "the subject gave no session id: its connections were closed".into()
        }
        _ => {
            return read(
                ProbeOutcome::NotObserved,
                LABEL_NOT_IN_RECORD,
                "the record does not say how the client's session was ended",
            );
        }
    };
    let in_flight: Vec<String> = rec["inFlightIds"]
        .as_array()
        .map_or_else(Vec::new, |a| a.iter().map(Value::to_string).collect());
    let answered = answers(transcript).map_or(0, |a| {
        in_flight.iter().filter(|i| a.contains_key(*i)).count()
    });
    let said = format!(
        "{ended}; {answered} of the {} request(s) before it answered ({} connection(s))",
        in_flight.len(),
        sent.len()
    );
    sigterm_reading(
        transcript,
        budget,
        (SHUTDOWN_WITHIN_BUDGET, SHUTDOWN_OVER_BUDGET),
        &said,
    )
}

/// The connections whose sent bytes begin with a DELETE request.
fn deleting_connections(web: &Value) -> Vec<u64> {
    let mut seen: Vec<u64> = Vec::new();
    let mut conns: Vec<u64> = Vec::new();
    for e in web["events"].as_array().into_iter().flatten() {
        if e["stream"] != "sent" {
            continue;
        }
        let Some(conn) = e["connection"].as_u64() else {
            continue;
        };
        if seen.contains(&conn) {
            continue;
        }
        seen.push(conn);
        if super::http::chunk_bytes(e).is_some_and(|b| b.starts_with(b"DELETE ")) {
            conns.push(conn);
        }
    }
    conns
}

/// How the runner ended a subject that did not end by itself, from the end record.
fn ended_by(transcript: &Value) -> &'static str {
    let end = &transcript["end"];
    if end["killed"] == json!(true) {
        "SIGKILL to its process group"
    } else if end["terminatedBySigterm"] == json!(true) {
        "the runner's SIGTERM"
    } else {
        "the runner"
    }
}

/// `forced-shutdown`: SIGTERM with stdin open; the subject must exit within the
/// workload's `termMs` of it.
fn term_reading(rec: &Value, transcript: &Value) -> Reading {
    let budget = u(&rec["workload"]["budgets"], "termMs").unwrap_or(0);
    sigterm_reading(
        transcript,
        budget,
        (TERM_WITHIN_BUDGET, TERM_OVER_BUDGET),
        "",
    )
}

/// The exit on SIGTERM against `budget` (ms from the signal, from the stored events):
/// `within` when the subject exited on it in time, `over` when late or not at all. `said`
/// (when not empty) leads every detail.
fn sigterm_reading(
    transcript: &Value,
    budget: u64,
    (within, over): (&'static str, &'static str),
    said: &str,
) -> Reading {
    let said = if said.is_empty() {
        String::new()
    } else {
        format!("{said}; ")
    };
    let (sent, exit) = event_then_exit(transcript, "sent SIGTERM");
    let Some(sent) = sent else {
        return if ended_by_itself(transcript) {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                "the subject exited before SIGTERM was sent",
            )
        } else {
            read(
                ProbeOutcome::NotObserved,
                LABEL_NOT_IN_RECORD,
                "no SIGTERM in the record",
            )
        };
    };
    match (exit, super::stdio::signal_ended(transcript)) {
        (Some(exit), Some((name, true))) if name == "SIGTERM" => {
            let took = exit.saturating_sub(sent);
            if took <= budget {
                read(
                    ProbeOutcome::Accept,
                    within,
                    format!("{said}exited {took} ms after SIGTERM (budget {budget} ms)"),
                )
            } else {
                read(
                    ProbeOutcome::Reject,
                    over,
                    format!(
                        "{said}exited {took} ms after SIGTERM, over the workload's {budget} ms"
                    ),
                )
            }
        }
        (_, Some((name, false))) if name == "SIGTERM" => read(
            ProbeOutcome::Reject,
            over,
            format!(
                "{said}no exit on SIGTERM within the runner's wait (budget {budget} ms); it was ended by {}",
                ended_by(transcript)
            ),
        ),
        _ => read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the record shows neither an exit after SIGTERM nor the runner giving up",
        ),
    }
}

/// Every complete line of `stream` with the time (ms from the probe's start) of the
/// chunk that completed it, parsed as JSON where it is; up to the first chunk whose
/// bytes are not stored.
pub(crate) fn timed_messages(transcript: &Value, stream: &str) -> Vec<(u64, Value)> {
    // Over Streamable HTTP the conversation is the connections' bytes under `http`:
    // what mcpres sent stands for stdin, what the subject answered for stdout.
    // (stderr is the server process's own, in its chunks, over either transport.)
    if let Some(web) = transcript
        .get("http")
        .filter(|h| h.get("connections").is_some())
        && stream != "stderr"
    {
        let sent = match stream {
            "stdin" => true,
            "stdout" => false,
            _ => return Vec::new(),
        };
        return super::http::timed_messages(web, sent).unwrap_or_default();
    }
    process_messages(transcript, stream)
}

/// The JSON lines of the subject's process on `stream` (`stdin`, `stdout`, `stderr`),
/// each with its time, from the process record's chunks whatever the transport (over
/// Streamable HTTP the process's stdin carries only the runner's control lines).
fn process_messages(transcript: &Value, stream: &str) -> Vec<(u64, Value)> {
    use base64::Engine;
    let mut out = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    for c in transcript["chunks"].as_array().into_iter().flatten() {
        if c["stream"] != stream {
            continue;
        }
        let bytes = if let Some(t) = c["text"].as_str() {
            t.as_bytes().to_vec()
        } else if let Some(b) = c["base64"]
            .as_str()
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        {
            b
        } else {
            break;
        };
        let at = u(c, "atMs").unwrap_or(0);
        buf.extend(bytes);
        while let Some(nl) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=nl).collect();
            if let Ok(m) = serde_json::from_slice::<Value>(&line) {
                out.push((at, m));
            }
        }
    }
    out
}

/// The time the stored stdin carried request `id`, and the time the stored stdout
/// first carried an answer to it.
fn sent_and_answered(transcript: &Value, id: &Value) -> (Option<u64>, Option<(u64, Value)>) {
    let timed = Timed::of(transcript);
    (timed.sent(id), timed.answer(id).cloned())
}

/// Both streams' stored messages with their times: when a request was sent, and what
/// answered it when.
struct Timed {
    inp: Vec<(u64, Value)>,
    out: Vec<(u64, Value)>,
    /// Over Streamable HTTP, each request's HTTP response (read once, on first use).
    web: std::cell::OnceCell<Option<super::http::Responses>>,
}

impl Timed {
    fn of(transcript: &Value) -> Timed {
        Timed {
            inp: timed_messages(transcript, "stdin"),
            out: timed_messages(transcript, "stdout"),
            web: std::cell::OnceCell::new(),
        }
    }

    /// The HTTP response to request `id` over Streamable HTTP (`transcript` is the one
    /// this was made of), with the time its connection's last bytes came.
    fn response(&self, transcript: &Value, id: &Value) -> Option<&(u64, super::http::Exchange)> {
        self.web
            .get_or_init(|| {
                super::http::Responses::of(transcript.get("http").unwrap_or(transcript))
            })
            .as_ref()?
            .to(id)
    }

    /// When the request `id` was sent.
    fn sent(&self, id: &Value) -> Option<u64> {
        self.inp
            .iter()
            .find(|(_, m)| m.get("id") == Some(id) && m.get("method").is_some())
            .map(|(at, _)| *at)
    }

    /// The first response to `id` (a result or an error), with its time.
    fn answer(&self, id: &Value) -> Option<&(u64, Value)> {
        self.out.iter().find(|(_, m)| {
            m.get("id") == Some(id) && (m.get("result").is_some() || m.get("error").is_some())
        })
    }
}

fn answer_label(m: &Value) -> String {
    match m.pointer("/error/code").and_then(Value::as_i64) {
        Some(code) => format!("error {code}"),
        None => "a result".into(),
    }
}

/// `timeout`: a request, then a request cancelled at once (`notifications/cancelled`),
/// then a request after it; each judged request (the first and the one after the
/// cancellation) must be answered within the workload's `requestTimeoutMs` of its
/// send, from the stored times. Past the timeout the client gave up (and cancelled):
/// the wait was bounded, and the subject missed the deadline.
fn timeout_reading(rec: &Value, transcript: &Value) -> Reading {
    let budget = u(&rec["workload"]["budgets"], "requestTimeoutMs").unwrap_or(0);
    let judged: Vec<Value> = rec["judgedIds"].as_array().cloned().unwrap_or_default();
    if judged.len() != 2 {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the record names no two judged requests",
        );
    }
    let mut times = Vec::new();
    for (n, id) in judged.iter().enumerate() {
        let which = if n == 0 {
            "the first request"
        } else {
            "the request after the cancellation"
        };
        let (sent, answer) = sent_and_answered(transcript, id);
        let Some(sent) = sent else {
            return read(
                ProbeOutcome::NotObserved,
                LABEL_NOT_IN_RECORD,
                format!("the stored stdin does not carry {which} ({id})"),
            );
        };
        match answer {
            Some((at, m)) if at.saturating_sub(sent) <= budget => {
                times.push(format!("{which}: {} in {} ms", answer_label(&m), at - sent));
            }
            Some((at, m)) => {
                return read(
                    ProbeOutcome::Reject,
                    DEADLINE_MISSED,
                    format!(
                        "{which} got {} {} ms after it was sent, past the workload's request timeout of {budget} ms (the client had given up and cancelled it)",
                        answer_label(&m),
                        at.saturating_sub(sent)
                    ),
                );
            }
            None if ended_by_itself(transcript) => {
                return read(
                    ProbeOutcome::Terminate,
                    SUBJECT_EXITED,
                    format!("the subject exited; {which} unanswered"),
                );
            }
            None => {
                return read(
                    ProbeOutcome::Reject,
                    DEADLINE_MISSED,
                    format!(
                        "{which} got no answer within the workload's request timeout of {budget} ms: the client gave up on it"
                    ),
                );
            }
        }
    }
    read(
        ProbeOutcome::Accept,
        ANSWERED_BY_DEADLINE,
        format!(
            "{} (request timeout {budget} ms); a request cancelled at once did not stop the subject serving",
            times.join("; ")
        ),
    )
}

/// `duplicate-delivery`: one request delivered twice (the same line, the same id),
/// then a request after it. The duplicated request must be answered at least once
/// and the one after it answered while the subject runs (JSON-RPC 2.0 §4). How the
/// duplicate was met (answered twice, once, or refused) is reported in bounded words.
fn duplicate_reading(rec: &Value, transcript: &Value) -> Reading {
    let (dup, after) = (&rec["duplicatedId"], &rec["afterId"]);
    let copies = timed_messages(transcript, "stdin")
        .iter()
        .filter(|(_, m)| m.get("id") == Some(dup) && m.get("method").is_some())
        .count();
    let sent_after = timed_messages(transcript, "stdin")
        .iter()
        .any(|(_, m)| m.get("id") == Some(after) && m.get("method").is_some());
    if copies != 2 || !sent_after {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            format!(
                "the stored stdin carries {copies} copies of the duplicated request (two expected) and {} request after it",
                if sent_after { "a" } else { "no" }
            ),
        );
    }
    let out = timed_messages(transcript, "stdout");
    let to = |id: &Value| -> Vec<&Value> {
        out.iter()
            .map(|(_, m)| m)
            .filter(|m| {
                m.get("id") == Some(id) && (m.get("result").is_some() || m.get("error").is_some())
            })
            .collect()
    };
    let (dup_answers, after_answers) = (to(dup), to(after));
    if dup_answers.is_empty() || after_answers.is_empty() {
        let which = if dup_answers.is_empty() {
            "the request delivered twice"
        } else {
            "the request after the duplicate"
        };
        return if ended_by_itself(transcript) {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                format!("the subject exited after a request came twice; {which} unanswered"),
            )
        } else {
            read(
                ProbeOutcome::NoEffect,
                DUPLICATE_STALLED,
                format!(
                    "after one request was delivered twice, {which} got no answer while the subject ran (JSON-RPC 2.0 §4: MUST reply)"
                ),
            )
        };
    }
    let met = match dup_answers.as_slice() {
        [one] => format!(
            "answered once ({}): duplicate suppression observed",
            answer_label(one)
        ),
        [a, b] if a == b => {
            "answered twice with the same answer: the original result replayed".into()
        }
        many => format!(
            "answered {} times ({}): no duplicate effect observed in this bounded case (a read-only request)",
            many.len(),
            many.iter()
                .map(|m| answer_label(m))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    read(
        ProbeOutcome::Accept,
        DUPLICATE_BOUNDED,
        format!(
            "the request delivered twice was {met}; the request after it got {}",
            answer_label(after_answers[0])
        ),
    )
}

/// `process-crash`: the subject, serving, with a request in flight, is killed
/// (SIGKILL to its process group: no chance to clean up). Nothing of its tree may
/// outlive it (the taxonomy's "child reaped"), and a fresh process of the subject must
/// open and answer a request (a restart allowed). The crashed subject's transcript is
/// the observation's; the restart's is stored under `observation.ops.restart`.
fn crash_reading(rec: &Value, transcript: &Value) -> Reading {
    let killed = transcript["events"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|e| e["event"] == "sent SIGKILL to the process group");
    if !killed {
        return if ended_by_itself(transcript) {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                "the subject exited before it was killed",
            )
        } else {
            read(
                ProbeOutcome::NotObserved,
                LABEL_NOT_IN_RECORD,
                "the record shows no kill",
            )
        };
    }
    let served = &rec["servedId"];
    if sent_and_answered(transcript, served).1.is_none() {
        return read(
            ProbeOutcome::NoEffect,
            VALID_UNANSWERED,
            "the request before the crash got no answer: the subject was not serving when it was killed",
        );
    }
    let left = left_behind(&transcript["end"]);
    if !left.is_empty() {
        return read(
            ProbeOutcome::Reject,
            CRASH_RESIDUE,
            format!(
                "{} process(es) of the crashed subject's tree outlived it (found, recorded, then killed by the runner): {}",
                left.len(),
                left.join(", ")
            ),
        );
    }
    let restart = &rec["restart"];
    if let Some(why) = restart["startError"].as_str() {
        return read(
            ProbeOutcome::Reject,
            RESTART_FAILED,
            format!("after the crash a fresh process could not start: {why}"),
        );
    }
    let after = &restart["afterId"];
    match sent_and_answered(&restart["transcript"], after) {
        (Some(_), Some((_, m))) => read(
            ProbeOutcome::Accept,
            CRASH_RECOVERED,
            format!(
                "killed with a request in flight; nothing of its tree outlived it; a fresh process opened and got {} for a request",
                answer_label(&m)
            ),
        ),
        _ => read(
            ProbeOutcome::Reject,
            RESTART_FAILED,
            format!(
                "after the crash a fresh process {} (its transcript is stored with the observation)",
                match restart["open"].as_str() {
                    Some("result") => "opened but left a request unanswered".to_string(),
                    Some(o) => format!("got {o} for its opening"),
                    None => "was not opened".to_string(),
                }
            ),
        ),
    }
}

/// What a client learns of a subject when it opens it and lists its tools, from a
/// stored transcript: the opening's server name, protocol version (or, at 2026-07-28,
/// supported versions) and capability names, and the tool names (sorted) or the error `tools/list` got. `Err` says what is
/// missing.
fn declared_surface(transcript: &Value, tools_id: &Value) -> Result<Value, String> {
    let out = timed_messages(transcript, "stdout");
    let opening_id = timed_messages(transcript, "stdin")
        .into_iter()
        .find(|(_, m)| matches!(m["method"].as_str(), Some("initialize" | "server/discover")))
        .and_then(|(_, m)| m.get("id").cloned())
        .ok_or("no opening request on the stored stdin")?;
    let opening = out
        .iter()
        .map(|(_, m)| m)
        .find(|m| m.get("id") == Some(&opening_id) && m.get("result").is_some())
        .ok_or("no answer to the opening on the stored stdout")?;
    let r = &opening["result"];
    // 2025-11-25 names the server in the result, 2026-07-28 in its `_meta`.
    let server = r
        .pointer("/serverInfo/name")
        .or_else(|| r["_meta"]["io.modelcontextprotocol/serverInfo"].get("name"));
    let versions = r
        .get("protocolVersion")
        .or_else(|| r.get("supportedVersions"));
    let mut caps: Vec<&String> = r["capabilities"]
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    caps.sort();
    let tools = out
        .iter()
        .map(|(_, m)| m)
        .find(|m| {
            m.get("id") == Some(tools_id) && (m.get("result").is_some() || m.get("error").is_some())
        })
        .ok_or("no answer to tools/list on the stored stdout")?;
    let listed = match tools.pointer("/result/tools").and_then(Value::as_array) {
        Some(list) => {
            let mut names: Vec<&str> = list.iter().filter_map(|t| t["name"].as_str()).collect();
            names.sort_unstable();
            json!(names)
        }
        None => json!(answer_label(tools)),
    };
    Ok(json!({
        "server": server,
        "protocolVersion": versions,
        "capabilities": caps,
        "tools": listed,
    }))
}

/// The surface a fresh process declared (a record of `recovery::fresh`: `startError`, or
/// its `transcript` and the id of its tool listing, `afterId`); else the rejection with
/// `reason`, said with `words` (for a start that failed, and for a surface not found).
fn fresh_surface(fresh: &Value, reason: &str, words: (&str, &str)) -> Result<Value, Reading> {
    if let Some(why) = fresh["startError"].as_str() {
        return Err(read(
            ProbeOutcome::Reject,
            reason,
            format!("{}: {why}", words.0),
        ));
    }
    declared_surface(&fresh["transcript"], &fresh["afterId"])
        .map_err(|why| read(ProbeOutcome::Reject, reason, format!("{}: {why}", words.1)))
}

/// `restart`: the subject opened and its tools listed, ended through its input
/// (MCP's stdio shutdown), then started afresh with the same injection: the fresh
/// process must open and declare the same surface (server, protocol version,
/// capabilities, tool names) as the one before, read from both stored transcripts.
fn restart_reading(rec: &Value, transcript: &Value) -> Reading {
    let before = match declared_surface(transcript, &rec["toolsId"]) {
        Ok(s) => s,
        Err(why) => {
            return if ended_by_itself(transcript) {
                read(
                    ProbeOutcome::Terminate,
                    SUBJECT_EXITED,
                    format!("the subject exited before its restart: {why}"),
                )
            } else {
                read(
                    ProbeOutcome::NotObserved,
                    LABEL_NOT_IN_RECORD,
                    format!("before the restart: {why}"),
                )
            };
        }
    };
    let after = match fresh_surface(
        &rec["restart"],
        RESTART_FAILED,
        ("the fresh process could not start", "after the restart"),
    ) {
        Ok(s) => s,
        Err(refused) => return refused,
    };
    if before == after {
        return read(
            ProbeOutcome::Accept,
            RESTART_SAME_SURFACE,
            format!(
                "after a restart the fresh process opened and declared the same surface: {before}"
            ),
        );
    }
    let differs: Vec<&str> = ["server", "protocolVersion", "capabilities", "tools"]
        .into_iter()
        .filter(|k| before[k] != after[k])
        .collect();
    read(
        ProbeOutcome::Reject,
        SURFACE_CHANGED,
        format!(
            "after a restart the declared surface differs in {}: before {before}, after {after}",
            differs.join(", ")
        ),
    )
}

/// The protocol revisions a declared surface agreed to: the negotiated one
/// (2025-11-25's `protocolVersion`) or the supported ones (2026-07-28's
/// `supportedVersions`).
fn revisions(surface: &Value) -> Vec<String> {
    match &surface["protocolVersion"] {
        Value::String(v) => vec![v.clone()],
        Value::Array(list) => list
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    }
}

/// `rolling-version-skew`: the running version opened and its tools listed
/// (`toolsId`); the declared other version started beside it (`other`: its own
/// transcript, opened and its tools listed, `afterId`), and a request to the running version while
/// the other runs (`afterId`). The other version must open, agree to every revision the
/// running one did, and list every tool the running one listed; the running one must
/// answer the request after with a result. Read from both stored transcripts.
fn skew_reading(rec: &Value, transcript: &Value) -> Reading {
    let running = match declared_surface(transcript, &rec["toolsId"]) {
        Ok(s) => s,
        Err(why) if ended_by_itself(transcript) => {
            return read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                format!("the running version exited: {why}"),
            );
        }
        Err(why) => {
            return read(
                ProbeOutcome::NotObserved,
                LABEL_NOT_IN_RECORD,
                format!("the running version: {why}"),
            );
        }
    };
    let shown: Vec<&str> = running["tools"]
        .as_array()
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if shown.is_empty() {
        return read(
            ProbeOutcome::NotObserved,
            SKEW_NO_TOOLS,
            format!("the running version listed no tools ({})", running["tools"]),
        );
    }
    let other = &rec["other"];
    let label = rec["otherVersion"]["label"].as_str().unwrap_or("?");
    let theirs = match fresh_surface(
        other,
        SKEW_OTHER_FAILED,
        (
            &format!("the other version ({label}) could not start beside the running one"),
            &format!("the other version ({label}) beside the running one"),
        ),
    ) {
        Ok(s) => s,
        Err(refused) => return refused,
    };
    if theirs["server"] != running["server"] {
        return read(
            ProbeOutcome::NotObserved,
            SKEW_OTHER_SERVER,
            format!(
                "the running version is {}, the declared other version ({label}) {}",
                running["server"], theirs["server"]
            ),
        );
    }
    let agreed = revisions(&theirs);
    let dropped: Vec<String> = revisions(&running)
        .into_iter()
        .filter(|r| !agreed.contains(r))
        .collect();
    if !dropped.is_empty() {
        return read(
            ProbeOutcome::Reject,
            SKEW_REVISION_DROPPED,
            format!(
                "the running version agreed to {dropped:?}, the other version ({label}) to {agreed:?} only"
            ),
        );
    }
    let listed: Vec<&str> = theirs["tools"]
        .as_array()
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let removed: Vec<&&str> = shown.iter().filter(|t| !listed.contains(t)).collect();
    if !removed.is_empty() {
        return read(
            ProbeOutcome::Reject,
            SKEW_TOOL_REMOVED,
            format!(
                "the other version ({label}) does not list {removed:?}, which the running version listed"
            ),
        );
    }
    match answer_to(transcript, &rec["afterId"]) {
        Some((_, m)) if m.get("result").is_some() => {
            let added: Vec<&&str> = listed.iter().filter(|t| !shown.contains(t)).collect();
            // Each in a sandbox of its own has its own file layers: what they would
            // share on one machine was not shared here.
            let apart = if transcript.get("sandbox").is_some_and(|s| !s.is_null()) {
                " (each in a sandbox of its own: files the two would share were not shared)"
            } else {
                ""
            };
            read(
                ProbeOutcome::Accept,
                SKEW_COMPATIBLE,
                format!(
                    "the other version ({label}) opened beside the running one with {agreed:?}, listed all {} of its tools (added: {added:?}), and the running one went on serving{apart}",
                    shown.len()
                ),
            )
        }
        Some((_, m)) => read(
            ProbeOutcome::Reject,
            SKEW_RUNNING_STOPPED,
            format!(
                "with the other version beside it, the running version answered {}",
                answer_label(&m)
            ),
        ),
        None if ended_by_itself(transcript) => read(
            ProbeOutcome::Terminate,
            SUBJECT_EXITED,
            "the running version exited once the other version started beside it",
        ),
        None => read(
            ProbeOutcome::Reject,
            SKEW_RUNNING_STOPPED,
            "with the other version beside it, the running version got no answer",
        ),
    }
}

/// The retry hint of an overload refusal, in ms: `error.data.retryAfterMs`, or
/// `error.data.retryAfter` in seconds.
pub fn retry_hint_ms(answer: &Value) -> Option<u64> {
    let data = answer.pointer("/error/data")?;
    if let Some(ms) = data.get("retryAfterMs").and_then(Value::as_u64) {
        return Some(ms);
    }
    data.get("retryAfter")
        .and_then(Value::as_f64)
        .filter(|s| *s >= 0.0)
        .map(|s| (s * 1000.0) as u64)
}

/// The retry hint of a `Retry-After` header (RFC 9110 §10.2.3) in ms: its
/// delay-seconds form only (an HTTP date would need the runner's clock to read).
pub fn retry_header_ms(value: Option<&str>) -> Option<u64> {
    value?
        .trim()
        .parse::<u64>()
        .ok()
        .map(|s| s.saturating_mul(1000))
}

/// How a request over Streamable HTTP was met, read from the stored connection bytes:
/// its answer (at the time its connection's last bytes came), and the retry hint its
/// response carried when it was refused.
enum Met {
    /// A JSON-RPC result.
    Served(u64),
    /// A JSON-RPC error, or (no answer under the id) an HTTP error status; the hint in
    /// ms (`error.data`, else `Retry-After`).
    Refused(u64, Option<u64>, String),
    /// Neither: the connection ended, or the wait passed, without one.
    Unmet,
}

fn met(transcript: &Value, timed: &Timed, id: &Value) -> Met {
    let response = || timed.response(transcript, id);
    let header = || response().and_then(|(_, e)| retry_header_ms(e.header("retry-after")));
    match timed.answer(id) {
        Some((at, m)) if m.get("result").is_some() => Met::Served(*at),
        Some((at, m)) => Met::Refused(
            *at,
            retry_hint_ms(m).or_else(header),
            format!("error {}", m.pointer("/error/code").unwrap_or(&Value::Null)),
        ),
        None => match response() {
            Some((at, e)) if e.status >= 400 => {
                Met::Refused(*at, header(), format!("HTTP {}", e.status))
            }
            _ => Met::Unmet,
        },
    }
}

/// `overload-rejection` and `retry-after` over Streamable HTTP. The subject takes
/// requests on separate connections in an order of its own, so a request is read as
/// over a full set of places only from the stored times: each hold call, answered with
/// a result no sooner than the declared hold after its send, was running over the
/// last `holdMs` before its answer; all of them over `[max answer - holdMs, min send +
/// holdMs]` (sends stored no later, answers no sooner, than they happened; a ms of
/// rounding given away at each end). A request over the limit sent and answered in
/// that window was in the subject's hands only while every place was held.
fn overload_reading_http(check: &str, rec: &Value, transcript: &Value) -> Reading {
    let ids = |k: &str| -> Vec<Value> { rec[k].as_array().cloned().unwrap_or_default() };
    let (holds, over, retries) = (ids("holdIds"), ids("overIds"), ids("retryIds"));
    let timed = Timed::of(transcript);
    let hold_ms = u(&rec["workload"]["subject"], "holdMs").unwrap_or(0);
    let limit = u(&rec["workload"]["subject"], "maxInFlight").unwrap_or(0);
    if transcript
        .get("http")
        .is_some_and(|web| super::http::received(web).is_none())
    {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "some bytes the subject sent are stored as their digest only: the record cannot say what was answered",
        );
    }
    let mut window = (0u64, u64::MAX);
    for h in &holds {
        let sent = timed.sent(h).unwrap_or(0);
        match met(transcript, &timed, h) {
            Met::Served(at) if at >= sent + hold_ms => {
                window.0 = window.0.max((at + 1).saturating_sub(hold_ms));
                window.1 = window.1.min(sent + hold_ms);
            }
            how => {
                let how = match how {
                    Met::Served(at) => format!("answered {} ms after its send", at - sent.min(at)),
                    Met::Refused(_, _, what) => format!("refused ({what})"),
                    Met::Unmet => "not answered".into(),
                };
                return read(
                    ProbeOutcome::NotObserved,
                    HOLD_NOT_HELD,
                    format!(
                        "a declared hold call was {how}, not served after the declared {hold_ms} ms: the places were not all held"
                    ),
                );
            }
        }
    }
    let exited = ended_by_itself(transcript);
    let mets: Vec<(u64, Met)> = over
        .iter()
        .map(|i| (timed.sent(i).unwrap_or(0), met(transcript, &timed, i)))
        .collect();
    let unmet = mets.iter().filter(|(_, m)| matches!(m, Met::Unmet)).count();
    if unmet > 0 {
        return if exited {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                format!(
                    "the subject exited; {unmet} of the requests sent over the declared limit unanswered"
                ),
            )
        } else {
            read(
                ProbeOutcome::NoEffect,
                OVERLOAD_LOST,
                format!(
                    "{unmet} of the requests sent over the declared limit got no response (neither a JSON-RPC answer nor an HTTP error status) while the subject ran (JSON-RPC 2.0 §4: MUST reply; a Streamable HTTP server that cannot take a request answers it with an HTTP error status)"
                ),
            )
        };
    }
    let inside = |sent: u64, at: u64| sent >= window.0 && at < window.1;
    let window_text = format!("{}..{} ms", window.0, window.1);
    if check == "overload-rejection" {
        let served = mets
            .iter()
            .filter(|(sent, m)| matches!(m, Met::Served(at) if inside(*sent, *at)))
            .count();
        if served > 0 {
            return read(
                ProbeOutcome::Reject,
                OVERLOAD_NOT_ENFORCED,
                format!(
                    "with its {limit} declared places held (every hold call running over {window_text}), the subject served {served} more request(s) sent and answered within that span with a result: the declared limit is not enforced"
                ),
            );
        }
        let refused: Vec<&String> = mets
            .iter()
            .filter_map(|(sent, m)| match m {
                Met::Refused(at, _, what) if inside(*sent, *at) => Some(what),
                _ => None,
            })
            .collect();
        if refused.is_empty() {
            return read(
                ProbeOutcome::NotObserved,
                OVERLOAD_UNPLACED,
                format!(
                    "no request over the declared limit was both sent and answered while every hold call was running ({window_text}); the {} sent were all answered, outside it",
                    over.len()
                ),
            );
        }
        let how: std::collections::BTreeSet<&String> = refused.iter().copied().collect();
        return read(
            ProbeOutcome::Accept,
            OVERLOAD_REJECTED,
            format!(
                "with its {limit} declared places held (every hold call running over {window_text}), {} request(s) over them were refused within that span ({how:?}), the other {} answered outside it; none lost",
                refused.len(),
                over.len() - refused.len()
            ),
        );
    }
    // retry-after
    let hints: Vec<Option<u64>> = mets
        .iter()
        .filter_map(|(_, m)| match m {
            Met::Refused(_, hint, _) => Some(*hint),
            _ => None,
        })
        .collect();
    let last = retries.last().map(|i| match met(transcript, &timed, i) {
        Met::Served(at) => Ok(at),
        Met::Refused(_, _, what) => Err(what),
        Met::Unmet => Err("no answer".into()),
    });
    retry_verdict(limit, &hints, retries.len(), last)
}

/// `overload-rejection`, `retry-after`, `queue-saturation`: the subject's declared
/// places (`subject.maxInFlight`) filled with its declared hold call, then more sent.
/// Every time is read from the stored chunks.
/// `backpressure`: with the runner's reading paused (the stored `stdout-paused` and
/// `stdout-resumed` events), `requestIds` were sent; once reading resumed, each must be
/// answered (JSON-RPC 2.0 §4) and the request after them (`afterId`) get a result.
fn backpressure_reading(rec: &Value, transcript: &Value) -> Reading {
    let ids: Vec<String> = rec["requestIds"]
        .as_array()
        .map_or_else(Vec::new, |a| a.iter().map(Value::to_string).collect());
    let after = rec["afterId"].to_string();
    let sent: std::collections::BTreeSet<String> = timed_messages(transcript, "stdin")
        .into_iter()
        .filter(|(_, m)| m.get("method").is_some())
        .filter_map(|(_, m)| m.get("id").map(Value::to_string))
        .collect();
    if ids.is_empty() || ids.iter().chain([&after]).any(|i| !sent.contains(i)) {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the record names requests the stored stdin did not send",
        );
    }
    // Over Streamable HTTP the runner stops reading its one connection (its events are
    // the conversation's), and the subject must be shown holding answers back when it
    // read again (`held_back`), not merely answering more than a pipe holds.
    let web = transcript
        .get("http")
        .filter(|h| h.get("connections").is_some());
    let (events, pause, resume) = match web {
        Some(w) => (&w["events"], "reading-paused", "reading-resumed"),
        None => (&transcript["events"], "stdout-paused", "stdout-resumed"),
    };
    let find = |name: &str| {
        events
            .as_array()
            .and_then(|l| l.iter().find(|e| e["event"] == name))
    };
    let event = |name: &str| find(name).and_then(|e| u(e, "atMs"));
    let (Some(paused), Some(resumed)) = (event(pause), event(resume)) else {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the stored events show no pause of the runner's reading",
        );
    };
    let Some(answers) = answers(transcript) else {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "no stored stdout",
        );
    };
    let n = ids.len();
    let bytes = u(rec, "answerBytes").unwrap_or(0) * n as u64;
    let exited = ended_by_itself(transcript);
    let unanswered = ids.iter().filter(|i| !answers.contains_key(*i)).count();
    // Over HTTP a server may end a connection that carries pipelined requests, and the
    // client retries what was not answered (RFC 9112 §9.3.2): a close is not a loss.
    // A clean close: every response the connection carried is whole, and they answer
    // the first requests, in order (a server MUST answer pipelined requests in order):
    // nothing was cut or skipped before it.
    let closed = web.is_some_and(|w| {
        let Some(conn) = rec["requestIds"]
            .get(0)
            .and_then(|id| super::http::connection_of(w, id))
        else {
            return false;
        };
        let Some(carried) = super::http::exchanges_on(w, conn) else {
            return false;
        };
        let answered: Vec<String> = carried
            .iter()
            .flat_map(super::http::Exchange::messages)
            .filter_map(|m| m.get("id").map(Value::to_string))
            .collect();
        super::http::ended_by_subject(w, conn)
            && carried
                .iter()
                .all(|e| e.complete && !e.messages().is_empty())
            && answered.len() <= ids.len()
            && answered[..] == ids[..answered.len()]
    });
    if unanswered > 0 && closed && !exited {
        return read(
            ProbeOutcome::NotObserved,
            BACKPRESSURE_NOT_REACHED,
            format!(
                "the subject ended the connection with {unanswered} of the {n} pipelined request(s) unanswered (a server may; the client retries them, RFC 9112 §9.3.2): no backpressure was exercised on it"
            ),
        );
    }
    if unanswered > 0 {
        return if exited {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                format!(
                    "the subject exited; {unanswered} of {n} request(s) sent with its output unread unanswered"
                ),
            )
        } else {
            read(
                ProbeOutcome::NoEffect,
                BACKPRESSURE_LOST,
                format!(
                    "{unanswered} of {n} request(s) sent while the runner did not read (about {bytes} bytes of answers) got no answer once it read again (JSON-RPC 2.0 §4: MUST reply)"
                ),
            )
        };
    }
    // The pipe filled only if the answers (not refusals cut short) came to more than it
    // holds: read from the stored answers themselves.
    let answered: u64 = ids
        .iter()
        .filter_map(|i| answers.get(i))
        .map(|m| m.to_string().len() as u64 + 1)
        .sum();
    if web.is_none() && answered < BACKPRESSURE_BYTES {
        let refused = ids
            .iter()
            .filter(|i| answers.get(*i).is_some_and(|m| m.get("error").is_some()))
            .count();
        return read(
            ProbeOutcome::NotObserved,
            BACKPRESSURE_NOT_REACHED,
            format!(
                "the answers to the {n} request(s) came to about {answered} bytes ({refused} refused), less than the {BACKPRESSURE_BYTES} that fill the runner's pipe: no backpressure was exercised"
            ),
        );
    }
    let held_back = match web.map(|w| held_back(rec, w, find(resume).unwrap_or(&Value::Null))) {
        Some(Err(why)) => return read(ProbeOutcome::NotObserved, BACKPRESSURE_NOT_REACHED, why),
        Some(Ok(said)) => format!("; {said}"),
        None => String::new(),
    };
    let held = match u(rec, "pendingAtResume").unwrap_or(0) {
        // Over HTTP a written request may still wait in the kernel's buffers.
        0 if web.is_some() => "every request had been written before reading resumed".to_string(),
        0 => "the subject had read every request while its output waited (it buffered)".to_string(),
        p => format!(
            "{p} bytes of requests were still unread by the subject when reading resumed (it held back)"
        ),
    };
    match answers.get(&after) {
        Some(m) if m.get("result").is_some() => read(
            ProbeOutcome::Accept,
            BACKPRESSURE_HELD,
            format!(
                "{n} request(s) sent with the output unread for {} ms (about {answered} bytes of answers): every one answered once reading resumed, and a request after them got a result; {held}{held_back}",
                resumed.saturating_sub(paused)
            ),
        ),
        Some(m) => read(
            ProbeOutcome::Reject,
            BACKPRESSURE_STALLED,
            format!(
                "after the held output was read, a request got {}",
                answer_label(m)
            ),
        ),
        None if exited => read(
            ProbeOutcome::Terminate,
            SUBJECT_EXITED,
            "the subject exited; the request after the held output unanswered",
        ),
        None => read(
            ProbeOutcome::Reject,
            BACKPRESSURE_STALLED,
            "after the held output was read, a request got no answer",
        ),
    }
}

/// Over Streamable HTTP, why the subject was not shown held back when the runner read
/// again (`None`: it was). It was when nothing had moved for the stall the runner waited
/// for (its writes, the bytes waiting at its end, those the subject's end held unsent:
/// `resumed`, the `reading-resumed` event), and yet more of the subject's answers came
/// afterwards than both kernel queues then held, by an answer at least: those answers
/// were still the subject's, and it was not writing them.
fn held_back(rec: &Value, web: &Value, resumed: &Value) -> Result<String, String> {
    let (Some(unread), Some(unsent), Some(stalled), Some(stall)) = (
        u(resumed, "unreadBytes"),
        u(resumed, "subjectUnsentBytes"),
        u(resumed, "stalledMs"),
        u(resumed, "stallMs"),
    ) else {
        return Err(
            "the record does not hold the connection's kernel queues when reading resumed".into(),
        );
    };
    if stalled < stall {
        return Err(format!(
            "the subject was still writing when the runner read again (nothing stood still for the {stall} ms waited for)"
        ));
    }
    let carried = rec["requestIds"]
        .get(0)
        .and_then(|id| super::http::connection_of(web, id))
        .and_then(|conn| super::http::received(web).and_then(|mut r| r.remove(&conn)))
        .map_or(0, |b| b.len() as u64);
    let answer = u(rec, "answerBytes").unwrap_or(1).max(1);
    let held = carried.saturating_sub(unread + unsent);
    if held < answer {
        return Err(format!(
            "when reading resumed the kernel held {unread} bytes unread and {unsent} unsent, and {held} more came of the {carried}: the subject's answers had all fit in the kernel's buffers, and it never waited"
        ));
    }
    Ok(format!(
        "when reading resumed, after {stalled} ms in which nothing moved, {held} bytes of answers were still the subject's (the kernel held {unread} unread and {unsent} unsent)"
    ))
}

/// How the declared write was answered in `transcript`: `Some(true)` a success,
/// `Some(false)` a failure (an error, or a result with `isError`), `None` no answer.
fn write_answer(transcript: &Value, id: &Value) -> Option<(bool, String)> {
    timed_messages(transcript, "stdout")
        .into_iter()
        .map(|(_, m)| m)
        .find(|m| {
            m.get("id") == Some(id) && (m.get("result").is_some() || m.get("error").is_some())
        })
        .map(|m| {
            let failed =
                m.get("error").is_some() || m.pointer("/result/isError") == Some(&json!(true));
            let text = m
                .pointer("/result/content/0/text")
                .or_else(|| m.pointer("/error/message"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .chars()
                .take(120)
                .collect::<String>();
            (!failed, text)
        })
}

/// `disk-full` and `permission-failure`: the declared write, with the declared storage
/// made full or read-only in the subject's sandbox (the fault read back from the
/// stored sandbox scope), then a liveness request. The positive also holds a baseline:
/// the same write in a fresh process with no fault, which must succeed (else the
/// declaration names no working write and nothing is observed).
fn storage_reading(check: &str, role: &str, rec: &Value, transcript: &Value) -> Reading {
    let fault = storage_fault(check, role, &rec["workload"]);
    if rec["storageFault"] != fault {
        return read(
            ProbeOutcome::NotObserved,
            INJECTION_NOT_DECLARED,
            format!(
                "the record says {} was the storage fault; the workload declares {fault} for the {role} of {check}",
                rec["storageFault"]
            ),
        );
    }
    let write = &rec["writeId"];
    if role == "positive" {
        let base = &rec["baseline"];
        match write_answer(&base["transcript"], &base["writeId"]) {
            Some((true, _)) => {}
            Some((false, text)) => {
                return read(
                    ProbeOutcome::NotObserved,
                    STORAGE_WRITE_FAILED,
                    format!("with no fault, the declared write failed: {text:?}"),
                );
            }
            None => {
                return read(
                    ProbeOutcome::NotObserved,
                    STORAGE_WRITE_FAILED,
                    "with no fault, the declared write got no answer",
                );
            }
        }
    }
    if !fault.is_null() {
        let injected = transcript
            .pointer("/sandbox/scope/injected")
            .and_then(Value::as_array)
            .is_some_and(|l| l.contains(&fault));
        if !injected {
            return read(
                ProbeOutcome::NotObserved,
                STORAGE_FAULT_NOT_INJECTED,
                format!(
                    "the stored sandbox scope does not show {fault} injected ({})",
                    transcript
                        .pointer("/sandbox/scope/notInjected")
                        .map_or("no sandbox record".into(), Value::to_string)
                ),
            );
        }
    }
    let exited = ended_by_itself(transcript);
    let Some((ok, text)) = write_answer(transcript, write) else {
        return if exited {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                "the subject exited; the declared write unanswered",
            )
        } else if fault.is_null() {
            read(
                ProbeOutcome::NotObserved,
                STORAGE_WRITE_FAILED,
                "with no fault, the declared write got no answer",
            )
        } else {
            read(
                ProbeOutcome::Reject,
                STORAGE_WRITE_UNANSWERED,
                format!(
                    "with {fault}, the declared write got no answer while the subject ran (JSON-RPC 2.0 §4: MUST reply)"
                ),
            )
        };
    };
    match (fault.is_null(), ok) {
        (true, true) => read(
            ProbeOutcome::Accept,
            STORAGE_WRITE_SERVED,
            format!("with no fault, the declared write succeeded: {text:?}"),
        ),
        (true, false) => read(
            ProbeOutcome::NotObserved,
            STORAGE_WRITE_FAILED,
            format!("with no fault, the declared write failed: {text:?}"),
        ),
        (false, true) => read(
            ProbeOutcome::Reject,
            STORAGE_WRITE_CLAIMED,
            format!("with {fault}, the declared write was answered as a success: {text:?}"),
        ),
        (false, false) => {
            let after = &rec["afterId"];
            let answered = timed_messages(transcript, "stdout")
                .into_iter()
                .find(|(_, m)| {
                    m.get("id") == Some(after)
                        && (m.get("result").is_some() || m.get("error").is_some())
                });
            match answered {
                Some((_, m)) if m.get("result").is_some() => read(
                    ProbeOutcome::Accept,
                    STORAGE_FAILURE_REPORTED,
                    format!(
                        "with {fault}, the declared write failed ({text:?}) and a request after it got a result"
                    ),
                ),
                Some((_, m)) => read(
                    ProbeOutcome::Reject,
                    STORAGE_STOPPED_SERVING,
                    format!("after the failed write, a request got {}", answer_label(&m)),
                ),
                None if exited => read(
                    ProbeOutcome::Terminate,
                    SUBJECT_EXITED,
                    "the subject exited after the failed write; the request after it unanswered",
                ),
                None => read(
                    ProbeOutcome::Reject,
                    STORAGE_STOPPED_SERVING,
                    "after the failed write, a request got no answer while the subject ran",
                ),
            }
        }
    }
}

/// The downstream stub's log in `transcript`'s stderr: the phase and epoch (control
/// lines before it) of each request it answered, in order.
fn stub_log(transcript: &Value) -> Vec<(String, u64)> {
    timed_messages(transcript, "stderr")
        .into_iter()
        .filter_map(|(_, m)| {
            let l = m.get(STUB_KEY)?;
            Some((l.get("phase")?.as_str()?.to_string(), u(l, "epoch")?))
        })
        .collect()
}

/// The answer to request `id` in the stored stdout, and its time.
fn answer_to(transcript: &Value, id: &Value) -> Option<(u64, Value)> {
    timed_messages(transcript, "stdout")
        .into_iter()
        .find(|(_, m)| {
            m.get("id") == Some(id) && (m.get("result").is_some() || m.get("error").is_some())
        })
}

/// The liveness request `id` after a downstream failure: a result holds (`held`), and
/// anything else is the subject that stopped serving (or exited).
fn served_after(transcript: &Value, id: &Value, held: Reading) -> Reading {
    match answer_to(transcript, id) {
        Some((_, m)) if m.get("result").is_some() => held,
        Some((_, m)) => read(
            ProbeOutcome::Reject,
            DOWNSTREAM_STOPPED_SERVING,
            format!(
                "with the downstream unavailable, a request that does not need it got {}",
                answer_label(&m)
            ),
        ),
        None if ended_by_itself(transcript) => read(
            ProbeOutcome::Terminate,
            SUBJECT_EXITED,
            "the subject exited with the downstream unavailable; a request that does not need it unanswered",
        ),
        None => read(
            ProbeOutcome::Reject,
            DOWNSTREAM_STOPPED_SERVING,
            "with the downstream unavailable, a request that does not need it got no answer while the subject ran",
        ),
    }
}

/// The declared calls `ids`, made with the downstream unavailable (`down` requests in
/// the stub's log): each must be answered as failed. `None` when every one was; else
/// the reading of the first that was not.
fn failures_reported(transcript: &Value, ids: &[Value], down_requests: usize) -> Option<Reading> {
    for id in ids {
        match write_answer(transcript, id) {
            Some((false, _)) => {}
            Some((true, text)) if down_requests > 0 => {
                return Some(read(
                    ProbeOutcome::Reject,
                    DOWNSTREAM_FALSE_SUCCESS,
                    format!(
                        "the downstream answered 503 to all {down_requests} of the subject's requests, and a declared call was answered as a success: {text:?}"
                    ),
                ));
            }
            Some((true, text)) => {
                return Some(read(
                    ProbeOutcome::NotObserved,
                    DOWNSTREAM_NOT_CALLED,
                    format!(
                        "with the downstream unavailable, a declared call succeeded without any request to it ({text:?}): the call does not reach the declared downstream"
                    ),
                ));
            }
            None if ended_by_itself(transcript) => {
                return Some(read(
                    ProbeOutcome::Terminate,
                    SUBJECT_EXITED,
                    "the subject exited with the downstream unavailable; a declared call unanswered",
                ));
            }
            None => {
                return Some(read(
                    ProbeOutcome::Reject,
                    DOWNSTREAM_CALL_UNANSWERED,
                    "with the downstream unavailable, a declared call got no answer while the subject ran (JSON-RPC 2.0 §4: MUST reply)",
                ));
            }
        }
    }
    None
}

/// A call with the downstream answering (`up` or `slow`): `None` when it succeeded and
/// the stub's log shows the subject's request; else the NOT_OBSERVED reading that says
/// the declaration names no call that reaches a working downstream.
fn call_works(transcript: &Value, id: &Value, requests: usize, phase: &str) -> Option<Reading> {
    match write_answer(transcript, id) {
        Some((true, _)) if requests > 0 => None,
        Some((true, text)) => Some(read(
            ProbeOutcome::NotObserved,
            DOWNSTREAM_NOT_CALLED,
            format!(
                "the declared call succeeded ({text:?}) but the stub's log shows no request from the subject"
            ),
        )),
        Some((false, text)) => Some(read(
            ProbeOutcome::NotObserved,
            DOWNSTREAM_CALL_FAILED,
            format!("with the downstream {phase}, the declared call failed: {text:?}"),
        )),
        None if ended_by_itself(transcript) => Some(read(
            ProbeOutcome::Terminate,
            SUBJECT_EXITED,
            format!("the subject exited with the downstream {phase}; the declared call unanswered"),
        )),
        None => Some(read(
            ProbeOutcome::NotObserved,
            DOWNSTREAM_CALL_FAILED,
            format!("with the downstream {phase}, the declared call got no answer"),
        )),
    }
}

/// The stub's answers in `phase` at `epoch` (the control lines before them).
fn count(log: &[(String, u64)], phase: &str, epoch: u64) -> usize {
    log.iter()
        .filter(|(p, e)| p == phase && *e == epoch)
        .count()
}

/// `downstream-failure`: in a fresh process whose declared downstream (the runner's
/// stub) answers 503 to every request, the declared call is made twice (`callIds`, the
/// taxonomy's trigger count) and a liveness request after them (`afterId`). Each call
/// must be answered as failed (a success after a 503 is a false success; silence fails
/// on JSON-RPC §4) and the request after must get a result. The positive also holds a
/// baseline (`baseline`): the call in a fresh process with the downstream up, which must
/// succeed and reach the stub, else nothing is observed. The mutant's downstream
/// answers 75 ms late: its calls must be read as served.
fn downstream_reading(rec: &Value, transcript: &Value) -> Reading {
    let ids: Vec<Value> = rec["callIds"].as_array().cloned().unwrap_or_default();
    if rec["injected"]["downstreamPhase"] == "down" && rec["injected"]["claimTool"].is_null() {
        let base = &rec["baseline"];
        let log = stub_log(&base["transcript"]);
        if let Some(r) = call_works(
            &base["transcript"],
            &base["callId"],
            count(&log, "up", 0),
            "up",
        ) {
            return r;
        }
    }
    let log = stub_log(transcript);
    if ids.is_empty() {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the record holds no declared call",
        );
    }
    if rec["injected"]["downstreamPhase"] == "slow" {
        for id in &ids {
            if let Some(r) = call_works(transcript, id, count(&log, "slow", 0), "75 ms late") {
                return r;
            }
        }
        return read(
            ProbeOutcome::Accept,
            DOWNSTREAM_CALL_SERVED,
            format!(
                "with the downstream answering 75 ms late, all {} declared calls reached it ({} requests) and succeeded",
                ids.len(),
                count(&log, "slow", 0)
            ),
        );
    }
    if let Some(r) = failures_reported(transcript, &ids, count(&log, "down", 0)) {
        return r;
    }
    served_after(
        transcript,
        &rec["afterId"],
        read(
            ProbeOutcome::Accept,
            DOWNSTREAM_FAILURE_REPORTED,
            format!(
                "with the downstream answering 503 ({} requests), all {} declared calls were answered as failed, and a request after them got a result",
                count(&log, "down", 0),
                ids.len()
            ),
        ),
    )
}

/// `partial-outage`: one process; the declared call with the downstream up (`beforeId`:
/// it must succeed and reach the stub, else nothing is observed); the stub moved down
/// (a control line on stdin); the call again (`duringId`: it must be answered as
/// failed) and a liveness request (`afterId`: it must get a result, the part of the
/// subject that does not need the downstream still serving); the stub moved up; the
/// call retried (`retryIds`) until it succeeds. The last retry must succeed within the
/// declared recovery time of the stored control line that moved the stub up.
fn outage_reading(rec: &Value, transcript: &Value) -> Reading {
    let log = stub_log(transcript);
    // Epoch 0 is before the outage, 1 during it (one control line before), 2 after.
    if let Some(r) = call_works(transcript, &rec["beforeId"], count(&log, "up", 0), "up") {
        return r;
    }
    if let Some(r) = failures_reported(
        transcript,
        std::slice::from_ref(&rec["duringId"]),
        count(&log, "down", 1),
    ) {
        return r;
    }
    let during = served_after(
        transcript,
        &rec["afterId"],
        read(ProbeOutcome::Accept, OUTAGE_RECOVERED, ""),
    );
    if during.1 != OUTAGE_RECOVERED {
        return during;
    }
    let recovery = u(&rec["workload"]["downstream"], "recoveryMs").unwrap_or(0);
    let back = process_messages(transcript, "stdin")
        .into_iter()
        .filter(|(_, m)| m.get(STUB_KEY).and_then(Value::as_str) == Some("up"))
        .map(|(at, _)| at)
        .next_back();
    let Some(back) = back else {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the stored stdin holds no control line that moved the downstream back up",
        );
    };
    let retries = rec["retryIds"].as_array().cloned().unwrap_or_default();
    let served = retries.iter().find_map(|id| {
        let (at, m) = answer_to(transcript, id)?;
        let ok = m.get("result").is_some() && m.pointer("/result/isError") != Some(&json!(true));
        ok.then_some(at)
    });
    match served {
        Some(at) if at.saturating_sub(back) <= recovery => read(
            ProbeOutcome::Accept,
            OUTAGE_RECOVERED,
            format!(
                "the call succeeded before the outage, failed during it while the subject served, and succeeded {} ms after the downstream was back (declared recovery {recovery} ms)",
                at.saturating_sub(back)
            ),
        ),
        Some(at) => read(
            ProbeOutcome::Reject,
            OUTAGE_NOT_RECOVERED,
            format!(
                "the call succeeded again only {} ms after the downstream was back (declared recovery {recovery} ms)",
                at.saturating_sub(back)
            ),
        ),
        None if ended_by_itself(transcript) => read(
            ProbeOutcome::Terminate,
            SUBJECT_EXITED,
            "the subject exited after the outage; the call never succeeded again",
        ),
        None => read(
            ProbeOutcome::Reject,
            OUTAGE_NOT_RECOVERED,
            format!(
                "once the downstream was back, none of {} retries of the call over the declared recovery time ({recovery} ms) succeeded",
                retries.len()
            ),
        ),
    }
}

/// `rate-limiting`: a window after the opening, the declared rate limit times the defect
/// factor requests written at once (`burstIds`), then, a window after the burst's last
/// answer, one more (`afterId`). Every request of the burst must be answered while the
/// subject runs (JSON-RPC 2.0 §4); at least the declared number served and no more
/// than twice it within one window of the first send (a fixed window's boundary may
/// let two windows' worth through); the one after must get a result. All times are the
/// stored chunks'.
/// The bytes of the subject's stdout the transcript stores in full.
fn stored_stdout_bytes(transcript: &Value) -> usize {
    super::stdio::stream_prefix(transcript, "stdout").map_or(0, |b| b.len())
}

/// Did the runner store less of the subject's stdout than the subject wrote (a chunk
/// kept as its digest only, or fewer bytes than counted)?
fn stdout_cut(transcript: &Value) -> bool {
    let written = u(transcript, "stdoutBytes").unwrap_or(0) as usize;
    let dropped = u(transcript, "stdoutDroppedBytes").unwrap_or(0) as usize;
    stored_stdout_bytes(transcript) < written.saturating_sub(dropped)
}

fn rate_reading(rec: &Value, transcript: &Value) -> Reading {
    let limit = &rec["workload"]["rateLimit"];
    let (Some(n), Some(window)) = (u(limit, "requests"), u(limit, "windowMs")) else {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the record's workload declares no rate limit",
        );
    };
    let burst: Vec<Value> = rec["burstIds"].as_array().cloned().unwrap_or_default();
    let after = &rec["afterId"];
    let timed = Timed::of(transcript);
    let sent = |id: &Value| timed.sent(id);
    // Each answer's time and whether it was a result. Over Streamable HTTP a refusal may
    // be an HTTP error status alone (`met`).
    let web = transcript.get("http");
    let answer = |id: &Value| -> Option<(u64, bool)> {
        if web.is_some() {
            return match met(transcript, &timed, id) {
                Met::Served(at) => Some((at, true)),
                Met::Refused(at, _, _) => Some((at, false)),
                Met::Unmet => None,
            };
        }
        timed
            .answer(id)
            .map(|(at, m)| (*at, m.get("result").is_some()))
    };
    if let Some(web) = web
        && super::http::received(web).is_none()
    {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "some bytes the subject sent are stored as their digest only: the record cannot say what was answered",
        );
    }
    if burst.is_empty() || burst.iter().chain([after]).any(|i| sent(i).is_none()) {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the record names requests the stored stdin did not send",
        );
    }
    let exited = ended_by_itself(transcript);
    let unanswered = burst.iter().filter(|i| answer(i).is_none()).count();
    if unanswered > 0 && stdout_cut(transcript) {
        // An answer past the stored bytes is not silence: the record cannot say.
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            format!(
                "{unanswered} request(s) of the burst have no answer in the stored stdout, which the runner cut at {} of the subject's {} bytes",
                stored_stdout_bytes(transcript),
                u(transcript, "stdoutBytes").unwrap_or(0)
            ),
        );
    }
    if unanswered > 0 {
        return if exited {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                format!("the subject exited; {unanswered} request(s) of the burst unanswered"),
            )
        } else {
            read(
                ProbeOutcome::NoEffect,
                RATE_LIMIT_LOST,
                format!(
                    "{unanswered} of {} request(s) of the burst got no answer while the subject ran (JSON-RPC 2.0 §4: MUST reply)",
                    burst.len()
                ),
            )
        };
    }
    let first = burst.iter().filter_map(sent).min().unwrap_or(0);
    let answers: Vec<(u64, bool)> = burst.iter().filter_map(answer).collect();
    let served = answers.iter().filter(|a| a.1).count() as u64;
    let refused = answers.len() as u64 - served;
    let served_in_window = answers
        .iter()
        .filter(|(at, ok)| *ok && *at < first + window)
        .count() as u64;
    if served_in_window > 2 * n {
        return read(
            ProbeOutcome::Reject,
            RATE_NOT_ENFORCED,
            format!(
                "{served_in_window} request(s) served within {window} ms of the burst's first send; the declared limit is {n} per {window} ms"
            ),
        );
    }
    if refused == 0 {
        return read(
            ProbeOutcome::NotObserved,
            RATE_NOT_REACHED,
            format!(
                "all {served} request(s) of the burst served, {served_in_window} of them within one window: the declared limit of {n} per {window} ms was not reached"
            ),
        );
    }
    // The burst came a window after the opening: the declared number is its due.
    if served < n {
        return read(
            ProbeOutcome::Reject,
            RATE_UNDER_DECLARED,
            format!(
                "{refused} of {} request(s) refused with {served} served ({served_in_window} within one window): fewer than the declared {n} per {window} ms",
                burst.len()
            ),
        );
    }
    let last = answers.iter().map(|a| a.0).max().unwrap_or(0);
    if sent(after).is_some_and(|at| at < last + window) {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the request after the burst was sent less than a window after its last answer",
        );
    }
    match answer(after) {
        Some((_, true)) => read(
            ProbeOutcome::Accept,
            RATE_LIMIT_HELD,
            format!(
                "a burst of {}: {served} served ({served_in_window} within one window), {refused} refused, none lost; a request a window later got a result",
                burst.len()
            ),
        ),
        Some(_) => read(
            ProbeOutcome::Reject,
            RATE_LIMIT_STUCK,
            format!(
                "a request a window after the burst's last answer got {}",
                match met(transcript, &timed, after) {
                    Met::Refused(_, _, what) => what,
                    _ => "a refusal".into(),
                }
            ),
        ),
        None if exited => read(
            ProbeOutcome::Terminate,
            SUBJECT_EXITED,
            "the subject exited; the request after the burst unanswered",
        ),
        None => read(
            ProbeOutcome::Reject,
            RATE_LIMIT_STUCK,
            "a request a window after the burst's last answer got no answer",
        ),
    }
}

fn overload_reading(check: &str, rec: &Value, transcript: &Value) -> Reading {
    let ids = |k: &str| -> Vec<Value> { rec[k].as_array().cloned().unwrap_or_default() };
    let (holds, over, retries) = (ids("holdIds"), ids("overIds"), ids("retryIds"));
    let timed = Timed::of(transcript);
    let sent = |id: &Value| timed.sent(id);
    let answer = |id: &Value| timed.answer(id);
    if holds.is_empty()
        || holds
            .iter()
            .chain(&over)
            .chain(&retries)
            .any(|i| sent(i).is_none())
    {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the record names requests the stored stdin did not send",
        );
    }
    if check != "queue-saturation" && transcript.get("http").is_some() {
        return overload_reading_http(check, rec, transcript);
    }
    let exited = ended_by_itself(transcript);
    let lost = |which: &str, n: usize| {
        if exited {
            read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                format!("the subject exited; {n} {which} unanswered"),
            )
        } else {
            let reason = if check == "queue-saturation" {
                QUEUE_LOST
            } else {
                OVERLOAD_LOST
            };
            read(
                ProbeOutcome::NoEffect,
                reason,
                format!(
                    "{n} {which} got no answer while the subject ran (JSON-RPC 2.0 §4: MUST reply)"
                ),
            )
        }
    };
    if check == "queue-saturation" {
        let unanswered = holds.iter().filter(|i| answer(i).is_none()).count();
        if unanswered > 0 {
            return lost("of the requests sent over the declared limit", unanswered);
        }
        let refused = holds
            .iter()
            .filter(|i| answer(i).is_some_and(|(_, m)| m.get("error").is_some()))
            .count();
        let after = &rec["afterId"];
        return match sent(after).and(answer(after)) {
            Some((_, m)) if m.get("result").is_some() => read(
                ProbeOutcome::Accept,
                QUEUE_BOUNDED,
                format!(
                    "{} hold calls sent at once ({} over the declared limit of {}): every one answered ({refused} refused), and a request after them got a result",
                    holds.len(),
                    holds.len().saturating_sub(
                        u(&rec["workload"]["subject"], "maxInFlight").unwrap_or(0) as usize
                    ),
                    u(&rec["workload"]["subject"], "maxInFlight").unwrap_or(0)
                ),
            ),
            Some((_, m)) => read(
                ProbeOutcome::Reject,
                QUEUE_NOT_DRAINED,
                format!(
                    "once the hold calls were answered, the request after them got {}",
                    answer_label(m)
                ),
            ),
            None if exited => read(
                ProbeOutcome::Terminate,
                SUBJECT_EXITED,
                "the subject exited; the request after the hold calls unanswered",
            ),
            None => read(
                ProbeOutcome::Reject,
                QUEUE_NOT_DRAINED,
                "once the hold calls were answered, the request after them got no answer",
            ),
        };
    }
    // The places were full when the requests over them were sent: no hold answered
    // before the last of them was sent.
    let last_over = over.iter().filter_map(sent).max().unwrap_or(0);
    let first_hold_answer = holds
        .iter()
        .filter_map(|i| answer(i).map(|(at, _)| *at))
        .min();
    if over.is_empty() || first_hold_answer.is_some_and(|at| at <= last_over) {
        return read(
            ProbeOutcome::NotObserved,
            HOLD_NOT_HELD,
            format!(
                "a declared hold call was answered ({}) before the requests over the limit were all sent: the places were not all held",
                first_hold_answer.map_or("-".into(), |a| format!("at {a} ms")),
            ),
        );
    }
    let unanswered = over.iter().filter(|i| answer(i).is_none()).count();
    if unanswered > 0 {
        return lost("of the requests sent over the declared limit", unanswered);
    }
    // A result while every place was still held: more in flight than declared.
    let free_from = first_hold_answer.unwrap_or(u64::MAX);
    let served_over = over
        .iter()
        .filter(|i| answer(i).is_some_and(|(at, m)| m.get("result").is_some() && *at < free_from))
        .count();
    let refusals: Vec<&Value> = over
        .iter()
        .filter_map(|i| {
            answer(i)
                .map(|(_, m)| m)
                .filter(|m| m.get("error").is_some())
        })
        .collect();
    let limit = u(&rec["workload"]["subject"], "maxInFlight").unwrap_or(0);
    if check == "overload-rejection" {
        if served_over > 0 {
            return read(
                ProbeOutcome::Reject,
                OVERLOAD_NOT_ENFORCED,
                format!(
                    "with its {limit} declared places held, the subject served {served_over} more request(s) with a result: the declared limit is not enforced"
                ),
            );
        }
        let codes: std::collections::BTreeSet<i64> = refusals
            .iter()
            .filter_map(|m| m.pointer("/error/code").and_then(Value::as_i64))
            .collect();
        return read(
            ProbeOutcome::Accept,
            OVERLOAD_REJECTED,
            format!(
                "with its {limit} declared places held, {} request(s) over them were refused (codes {codes:?}) and {} served once a place was free; none lost",
                refusals.len(),
                over.len() - refusals.len()
            ),
        );
    }
    // retry-after
    let hints: Vec<Option<u64>> = refusals.iter().map(|m| retry_hint_ms(m)).collect();
    let last = retries.last().and_then(answer).map(|(at, m)| {
        if m.get("result").is_some() {
            Ok(*at)
        } else {
            Err(answer_label(m))
        }
    });
    retry_verdict(limit, &hints, retries.len(), last)
}

/// `retry-after` once the refusals over the declared `limit` are read: each refusal's
/// hint in ms (`None`: it carried none), how many retries were made, and the last one's
/// answer (`Ok`: a result at that ms; `Err`: what it got instead; `None`: none).
fn retry_verdict(
    limit: u64,
    hints: &[Option<u64>],
    retries: usize,
    last: Option<Result<u64, String>>,
) -> Reading {
    if hints.is_empty() {
        return read(
            ProbeOutcome::NotObserved,
            NO_REFUSAL,
            format!(
                "with its {limit} declared places held, the subject refused nothing over them: no retry hint to read"
            ),
        );
    }
    if hints.iter().any(Option::is_none) {
        return read(
            ProbeOutcome::Reject,
            NO_RETRY_HINT,
            format!(
                "{} of {} overload refusal(s) carry no retry hint (error.data.retryAfterMs or retryAfter; over Streamable HTTP a Retry-After header in seconds too): a client cannot tell when to come back",
                hints.iter().filter(|h| h.is_none()).count(),
                hints.len()
            ),
        );
    }
    match last {
        Some(Ok(at)) => read(
            ProbeOutcome::Accept,
            RETRY_HONOURED,
            format!(
                "{} refusal(s) with a retry hint ({:?} ms); retried after each hint, a result came on retry {retries} at {at} ms",
                hints.len(),
                hints
                    .iter()
                    .flatten()
                    .collect::<std::collections::BTreeSet<_>>(),
            ),
        ),
        last => read(
            ProbeOutcome::Reject,
            RETRY_NOT_SERVED,
            format!(
                "retried after each hint {retries} time(s); the last retry got {}",
                match last {
                    Some(Err(what)) => what,
                    _ => "no answer".into(),
                }
            ),
        ),
    }
}

/// The processes an end record found alive, as `pid (command)`.
fn left_behind(end: &Value) -> Vec<String> {
    end["leftBehindProcesses"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| format!("{} ({})", p["pid"], p["command"].as_str().unwrap_or("?")))
        .collect()
}

/// `cleanup`: once the subject ended, nothing of its process tree may be left (the
/// probe's end record: what it found alive below the subject, in its process group, or
/// in its PID namespace, then killed).
fn cleanup_reading(transcript: &Value) -> Reading {
    let Some(end) = transcript.get("end").filter(|e| e["status"].is_string()) else {
        return read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "the record shows no end of the subject",
        );
    };
    let seen = transcript["descendantsSeen"].as_array().map_or(0, Vec::len);
    let left = left_behind(end);
    if left.is_empty() && u(end, "leftBehind") == Some(0) {
        read(
            ProbeOutcome::Accept,
            CLEANUP_COMPLETE,
            format!(
                "nothing of the subject's process tree ({seen} descendant(s) seen) was alive once it ended ({})",
                end["status"].as_str().unwrap_or("?")
            ),
        )
    } else {
        read(
            ProbeOutcome::Reject,
            RESIDUE_LEFT,
            format!(
                "{} process(es) of the subject's tree alive once it ended: {}",
                left.len().max(u(end, "leftBehind").unwrap_or(0) as usize),
                left.join(", ")
            ),
        )
    }
}

/// The least-squares slope of `y` over `x`, per 1,000 of `x` (`None` without spread).
pub fn slope_per_1000(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    Some(sxy / sxx * 1000.0)
}

/// The `q` quantile (0 to 1) of sorted `v` (nearest rank).
pub fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The judged latencies (µs, sorted) and the unanswered count of a soak record.
pub fn judged_latencies(rec: &Value) -> (Vec<u64>, u64, u64) {
    let warmup_us = u(&rec["workload"]["load"], "warmupMs").unwrap_or(0) * 1000;
    let mut lat = Vec::new();
    let mut failed = 0;
    let mut total = 0;
    for r in rec["requests"].as_array().into_iter().flatten() {
        let intended = r[2].as_u64().unwrap_or(0);
        if intended < warmup_us {
            continue;
        }
        total += 1;
        match (r[4].as_u64(), r[5].as_str()) {
            (Some(answered), Some("result")) => lat.push(answered.saturating_sub(intended)),
            (Some(answered), _) => {
                failed += 1;
                lat.push(answered.saturating_sub(intended));
            }
            _ => failed += 1,
        }
    }
    lat.sort_unstable();
    (lat, failed, total)
}

/// Where a soak record's outcomes are not what the stored stdout holds for their ids (an
/// answer past what the transcript kept is not compared), the reading that says so.
fn outcomes_not_in_stdout(rec: &Value, transcript: &Value) -> Option<Reading> {
    let Some(answers) = answers(transcript) else {
        return Some(read(
            ProbeOutcome::NotObserved,
            LABEL_NOT_IN_RECORD,
            "no stored stdout",
        ));
    };
    for r in rec["requests"].as_array().into_iter().flatten() {
        let id = r[0].to_string();
        let told = r[5].as_str().unwrap_or("none");
        if told == "unsent" {
            continue;
        }
        let stored = match answers.get(&id) {
            None => "none".to_string(),
            Some(m) if m.get("result").is_some() => "result".to_string(),
            Some(m) => format!(
                "error:{}",
                m.pointer("/error/code")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
            ),
        };
        if told != "none" && stored != "none" && told != stored {
            return Some(read(
                ProbeOutcome::NotObserved,
                LABEL_NOT_IN_RECORD,
                format!("request {id} is recorded as {told}; the stored stdout gives {stored}"),
            ));
        }
    }
    None
}

fn soak_reading(check: &str, rec: &Value, transcript: &Value) -> Reading {
    let w = &rec["workload"];
    let b = &w["budgets"];
    // Every outcome the record gives must be the stored stdout's (bounded-soak reads
    // them; a leak reading reads the samples alone, and its transcript may leave the
    // bytes to bounded-soak's).
    if check == "bounded-soak"
        && let Some(r) = outcomes_not_in_stdout(rec, transcript)
    {
        return r;
    }
    let rate = u(&w["load"], "ratePerS").unwrap_or(0);
    if let Some(ceiling) = rec
        .pointer("/generator/ceilingPerS")
        .and_then(Value::as_u64)
        && ceiling < rate * 2
    {
        return read(
            ProbeOutcome::NotObserved,
            GENERATOR_LIMITED,
            format!(
                "the generator's measured ceiling ({ceiling}/s) is below twice the intended rate ({rate}/s)"
            ),
        );
    }
    if check == "bounded-soak" {
        let (lat, failed, total) = judged_latencies(rec);
        if total == 0 {
            return read(
                ProbeOutcome::NotObserved,
                TOO_FEW_SAMPLES,
                "no request in the judged part of the soak",
            );
        }
        let ms = |q: f64| quantile(&lat, q) / 1000;
        let (p50, p95, p99) = (ms(0.50), ms(0.95), ms(0.99));
        let per_mille = failed * 1000 / total;
        let over: Vec<String> = [
            ("p50", p50, u(b, "p50Ms").unwrap_or(0)),
            ("p95", p95, u(b, "p95Ms").unwrap_or(0)),
            ("p99", p99, u(b, "p99Ms").unwrap_or(0)),
            (
                "errors per mille",
                per_mille,
                u(b, "errorPerMille").unwrap_or(0),
            ),
        ]
        .iter()
        .filter(|(_, got, max)| got > max)
        .map(|(what, got, max)| format!("{what} {got} > {max}"))
        .collect();
        let about = format!(
            "{total} judged request(s), {failed} without a result; p50 {p50} ms, p95 {p95} ms, p99 {p99} ms (from the intended send)"
        );
        return if over.is_empty() {
            read(ProbeOutcome::Accept, SOAK_WITHIN_BUDGET, about)
        } else {
            read(
                ProbeOutcome::Reject,
                SOAK_OVER_BUDGET,
                format!("{about}; over budget: {}", over.join(", ")),
            )
        };
    }
    let (column, budget_key, held, over, what, floor) = match check {
        "memory-resource-leak" => (
            2,
            "rssKibPer1000Ops",
            RSS_BOUNDED,
            RSS_GROWTH,
            "KiB resident",
            RSS_NOISE_KIB,
        ),
        "child-process-leak" => (
            5,
            "childrenPer1000Ops",
            CHILDREN_BOUNDED,
            CHILDREN_GROWTH,
            "live descendants",
            HANDLE_NOISE,
        ),
        _ => (
            4,
            "listenersPer1000Ops",
            LISTENERS_BOUNDED,
            LISTENERS_GROWTH,
            "listening sockets",
            HANDLE_NOISE,
        ),
    };
    let reading = slope_reading(rec, column, budget_key, held, over, what, floor);
    // Memory and the other resource a process holds per operation, open files: the
    // memory first (the control's leak), then the descriptors.
    if check == "memory-resource-leak" && reading.0 == ProbeOutcome::Accept {
        let fds = slope_reading(
            rec,
            3,
            "fdsPer1000Ops",
            RSS_BOUNDED,
            FDS_GROWTH,
            "open files",
            HANDLE_NOISE,
        );
        return match fds.0 {
            ProbeOutcome::Accept => {
                let files = fds.2.split_once(": ").map_or(fds.2.as_str(), |(_, f)| f);
                (reading.0, reading.1, format!("{}; {files}", reading.2))
            }
            _ => fds,
        };
    }
    reading
}

/// The slope of the samples' `column` over the second half of the soak after the
/// warm-up, per 1,000 operations, against the workload's `budget_key`: `held` within it
/// (or a growth under `floor`), `over` past it.
fn slope_reading(
    rec: &Value,
    column: usize,
    budget_key: &str,
    held: &str,
    over: &str,
    what: &str,
    floor: f64,
) -> Reading {
    let w = &rec["workload"];
    let b = &w["budgets"];
    // The second half of the soak after the warm-up: a runtime whose heap grows to a
    // steady size (a garbage collector's) has had the first half to get there; a leak
    // keeps growing.
    let warmup = u(&w["load"], "warmupMs").unwrap_or(0);
    let last = rec["samples"]
        .as_array()
        .and_then(|s| s.last())
        .and_then(|s| s[0].as_u64())
        .unwrap_or(0);
    let from = warmup + last.saturating_sub(warmup) / 2;
    let points: Vec<(f64, f64)> = rec["samples"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s[0].as_u64().is_some_and(|at| at >= from))
        .filter_map(|s| Some((s[1].as_u64()? as f64, s[column].as_u64()? as f64)))
        .collect();
    let budget = u(b, budget_key).unwrap_or(0) as f64;
    match (points.len() >= 8, slope_per_1000(&points)) {
        (true, Some(slope)) => {
            let span = points.last().map_or(0.0, |p| p.0) - points.first().map_or(0.0, |p| p.0);
            let growth = slope * span / 1000.0;
            let about = format!(
                "{} samples in the second half of the soak after the warm-up: {slope:.1} {what} per 1,000 operations (budget {budget}), {growth:.1} over the {span} operations judged",
                points.len()
            );
            // A growth within the noise floor (the kernel's 2 MiB huge pages, one
            // handle) is never a leak, whatever its slope over few operations.
            if slope <= budget || growth < floor {
                read(ProbeOutcome::Accept, held, about)
            } else {
                read(ProbeOutcome::Reject, over, about)
            }
        }
        _ => read(
            ProbeOutcome::NotObserved,
            TOO_FEW_SAMPLES,
            format!(
                "{} sample(s) in the second half of the soak after the warm-up (8 needed, with spread in operations): no slope",
                points.len()
            ),
        ),
    }
}

/// The workload every operational observation of a directory was read with must be the
/// one the directory declares (`artifacts/workload.json`), byte for byte in canonical
/// form, with its digest: a record that carries a laxer budget than the run declared is
/// refused. One disagreement per observation that differs; one when the declaration is
/// missing or unreadable.
pub fn binding(
    stored: &BTreeMap<String, Result<Value, String>>,
    checks: &[&str],
) -> Vec<super::Disagreement> {
    let mut out = Vec::new();
    let declared = match stored.get(WORKLOAD_PATH) {
        Some(Ok(w)) => w,
        Some(Err(why)) => {
            out.push(super::Disagreement {
                file: WORKLOAD_PATH.into(),
                pointer: String::new(),
                recorded: Value::Null,
                judged: Value::Null,
                why: format!("{WORKLOAD_PATH} cannot be read: {why}"),
            });
            return out;
        }
        None => {
            out.push(super::Disagreement {
                file: WORKLOAD_PATH.into(),
                pointer: String::new(),
                recorded: Value::Null,
                judged: Value::Null,
                why: format!(
                    "an operational evaluation declares its workload in {WORKLOAD_PATH}, which the directory does not list"
                ),
            });
            return out;
        }
    };
    let canonical = |v: &Value| crate::json::canonical::to_vec(v).ok();
    let want = canonical(declared);
    let want_sha = want.as_deref().map(crate::json::canonical::sha256_hex);
    for check in checks {
        for role in ["positive", "negative", "mutant"] {
            let path = format!("artifacts/{check}/{role}.json");
            let Some(Ok(doc)) = stored.get(&path) else {
                continue;
            };
            let Some(rec) = doc.pointer("/transcript/observation/ops") else {
                continue;
            };
            let same = canonical(&rec["workload"]) == want && want.is_some();
            let sha_ok = rec["workloadSha256"].as_str() == want_sha.as_deref();
            if !same || !sha_ok {
                out.push(super::Disagreement {
                    file: path.clone(),
                    pointer: "/transcript/observation/ops/workload".into(),
                    recorded: rec["workloadSha256"].clone(),
                    judged: json!(want_sha),
                    why: format!(
                        "{path} was read with another workload than the one {WORKLOAD_PATH} declares"
                    ),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slope_is_the_least_squares_one_and_needs_spread() {
        let pts: Vec<(f64, f64)> = (0..10)
            .map(|i| (i as f64 * 100.0, 50.0 + i as f64 * 10.0))
            .collect();
        let s = slope_per_1000(&pts).unwrap();
        assert!((s - 100.0).abs() < 1e-9, "{s}");
        assert_eq!(slope_per_1000(&[(5.0, 1.0), (5.0, 9.0)]), None);
        // A one-time step early on is a small slope, not the step's size.
        let step: Vec<(f64, f64)> = (0..20)
            .map(|i| (i as f64 * 50.0, if i == 0 { 0.0 } else { 4096.0 }))
            .collect();
        let s = slope_per_1000(&step).unwrap();
        assert!(s < 2000.0, "{s}");
    }

    #[test]
    fn a_subject_that_closed_its_stdout_before_mcpres_acted_ended_by_itself() {
        let t = |events: Value, ended_by: Value| json!({"events": events, "end": {"endedBy": ended_by}});
        let closed = json!([{"atMs": 40, "event": "stdout-closed"}]);
        assert!(ended_by_itself(&t(json!([]), json!("subject"))));
        assert!(ended_by_itself(&t(
            closed.clone(),
            json!({"mcpres": "stdin closed", "atMs": 41})
        )));
        // A close after mcpres acted (or in the same millisecond) is its answer to mcpres.
        assert!(!ended_by_itself(&t(
            closed.clone(),
            json!({"mcpres": "stdin closed", "atMs": 40})
        )));
        assert!(!ended_by_itself(&t(
            json!([]),
            json!({"mcpres": "stdin closed", "atMs": 41})
        )));
        assert!(!ended_by_itself(&t(closed, Value::Null)));
    }

    /// An outage record: `lines` are (ms, stream, line) in order.
    fn outage_transcript(lines: &[(u64, &str, &str)]) -> Value {
        let chunks: Vec<Value> = lines
            .iter()
            .map(|(at, stream, line)| json!({"atMs": at, "stream": stream, "text": format!("{line}\n")}))
            .collect();
        let w = json!({"downstream": {"urlEnv": "U", "callTool": "fetch", "callArguments": {},
                       "recoveryMs": 1000}});
        json!({"chunks": chunks, "observation": {"ops": {
            "kind": "outage", "workload": w, "open": "result",
            "injected": injection("partial-outage", "positive", &w),
            "beforeId": 1, "duringId": 2, "afterId": 3, "retryIds": [4, 5],
        }}})
    }

    #[test]
    fn an_outage_is_read_from_the_stub_log_and_the_stored_times() {
        let ok =
            |id: u64| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[]}}}}");
        let failed = |id: u64| {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[],\"isError\":true}}}}"
            )
        };
        let log = |phase: &str, epoch: u64| {
            format!(
                "{{\"mcpresDownstream\":{{\"n\":1,\"phase\":\"{phase}\",\"epoch\":{epoch},\"status\":200}}}}"
            )
        };
        let up_line = "{\"mcpresDownstream\":\"up\"}";
        let (ok1, ok5, failed2, failed4) = (ok(1), ok(5), failed(2), failed(4));
        let (log_up, log_down, log_back, live) =
            (log("up", 0), log("down", 1), log("up", 2), ok(3));
        let reading = |lines: &[(u64, &str, &str)]| {
            let t = outage_transcript(lines);
            let r = super::reading("partial-outage", "positive", &t).unwrap();
            (r.0, r.1)
        };
        let mut lines = vec![
            (10, "stderr", log_up.as_str()),
            (11, "stdout", ok1.as_str()),
            (20, "stderr", log_down.as_str()),
            (21, "stdout", failed2.as_str()),
            (22, "stdout", live.as_str()),
            (30, "stdin", up_line),
            (31, "stderr", log_back.as_str()),
            (40, "stdout", failed4.as_str()),
            (900, "stdout", ok5.as_str()),
        ];
        assert_eq!(
            reading(&lines),
            (ProbeOutcome::Accept, OUTAGE_RECOVERED.into())
        );
        // The same success 1,100 ms after the stub was back: over the declared 1,000.
        lines[8].0 = 1130;
        assert_eq!(
            reading(&lines),
            (ProbeOutcome::Reject, OUTAGE_NOT_RECOVERED.into())
        );
        // A success during the outage, after the stub answered 503: a false success.
        let mut lied = lines.clone();
        let two = ok(2);
        lied[3].2 = two.as_str();
        assert_eq!(
            reading(&lied),
            (ProbeOutcome::Reject, DOWNSTREAM_FALSE_SUCCESS.into())
        );
        // No stub log before the outage: the call never reached the downstream.
        let mut uncalled = lines.clone();
        uncalled.remove(0);
        assert_eq!(
            reading(&uncalled),
            (ProbeOutcome::NotObserved, DOWNSTREAM_NOT_CALLED.into())
        );
        // No answer to the request that does not need the downstream: stopped serving.
        let mut deaf = lines.clone();
        deaf.remove(4);
        assert_eq!(
            reading(&deaf),
            (ProbeOutcome::Reject, DOWNSTREAM_STOPPED_SERVING.into())
        );
        // A record that says it injected another defect is refused.
        let mut t = outage_transcript(&lines);
        t["observation"]["ops"]["injected"]["stickyFailureMs"] = json!(1);
        assert_eq!(
            super::reading("partial-outage", "positive", &t).unwrap().1,
            INJECTION_NOT_DECLARED
        );
    }

    /// A skew record: the running version's opening and tools (`ours`), the other
    /// version's (`theirs`), and whether the running one answered the request after.
    fn skew_transcript(ours: (&str, &[&str]), theirs: (&str, &[&str]), served: bool) -> Value {
        let side = |(rev, tools): (&str, &[&str]), name: &str| {
            let tools: Vec<Value> = tools.iter().map(|t| json!({"name": t})).collect();
            let open = json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": rev,
                "capabilities": {"tools": {}}, "serverInfo": {"name": name}}});
            let list = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": tools}});
            vec![
                json!({"atMs": 1, "stream": "stdin", "text": "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n"}),
                json!({"atMs": 2, "stream": "stdout", "text": format!("{open}\n")}),
                json!({"atMs": 3, "stream": "stdout", "text": format!("{list}\n")}),
            ]
        };
        let mut chunks = side(ours, "s");
        if served {
            chunks.push(json!({"atMs": 9, "stream": "stdout", "text": "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n"}));
        }
        let w = json!({"versionSkew": {"command": ["x"], "label": "next"}});
        json!({"chunks": chunks, "observation": {"ops": {
            "kind": "skew", "workload": w, "open": "result",
            "injected": injection("rolling-version-skew", "positive", &w),
            "toolsId": 2, "afterId": 3, "otherVersion": {"label": "next"},
            "other": {"afterId": 2, "transcript": {"chunks": side(theirs, "s")}},
        }}})
    }

    #[test]
    fn a_version_skew_is_read_from_both_transcripts() {
        let r = |t: Value| {
            let r = super::reading("rolling-version-skew", "positive", &t).unwrap();
            (r.0, r.1)
        };
        let rev = "2025-11-25";
        assert_eq!(
            r(skew_transcript(
                (rev, &["a", "b"]),
                (rev, &["b", "a", "c"]),
                true
            )),
            (ProbeOutcome::Accept, SKEW_COMPATIBLE.into())
        );
        assert_eq!(
            r(skew_transcript((rev, &["a", "b"]), (rev, &["a"]), true)),
            (ProbeOutcome::Reject, SKEW_TOOL_REMOVED.into())
        );
        assert_eq!(
            r(skew_transcript((rev, &["a"]), ("2025-06-18", &["a"]), true)),
            (ProbeOutcome::Reject, SKEW_REVISION_DROPPED.into())
        );
        assert_eq!(
            r(skew_transcript((rev, &["a"]), (rev, &["a"]), false)),
            (ProbeOutcome::Reject, SKEW_RUNNING_STOPPED.into())
        );
        assert_eq!(
            r(skew_transcript((rev, &[]), (rev, &["a"]), true)),
            (ProbeOutcome::NotObserved, SKEW_NO_TOOLS.into())
        );
        // The other version's stored transcript gone: it did not open beside the running one.
        let mut t = skew_transcript((rev, &["a"]), (rev, &["a"]), true);
        t["observation"]["ops"]["other"]["transcript"] = json!({"chunks": []});
        assert_eq!(r(t), (ProbeOutcome::Reject, SKEW_OTHER_FAILED.into()));
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile(&v, 0.5), 50);
        assert_eq!(quantile(&v, 0.99), 99);
        assert_eq!(quantile(&v, 1.0), 100);
        assert_eq!(quantile(&[], 0.5), 0);
    }

    /// A soak record of `n` requests answered in 1 ms each, with a generator ceiling.
    fn soak_record(ceiling: u64) -> Value {
        let w = json!({
            "scenario": "t",
            "load": {"mix": [{"kind": "live", "weight": 1}], "ratePerS": 50, "concurrency": 4,
                     "warmupMs": 500, "soakMs": 2500, "controlSoakMs": 2500, "coldStarts": 1,
                     "sampleIntervalMs": 50, "floodLines": 10, "floodValidEvery": 5},
            "budgets": {"coldStartMs": 2000, "warmStartMs": 2000, "p50Ms": 250, "p95Ms": 750,
                        "p99Ms": 1500, "errorPerMille": 10, "rssKibPer1000Ops": 1024,
                        "fdsPer1000Ops": 4, "listenersPer1000Ops": 1, "childrenPer1000Ops": 1},
            "controls": {"defectFactor": 4, "seed": 7},
            "schemaVersion": "mcpres.ops-workload/1",
        });
        let requests: Vec<Value> = (0..100u64)
            .map(|i| {
                json!([
                    i,
                    "live",
                    i * 20_000 + 600_000,
                    i * 20_000 + 600_000,
                    i * 20_000 + 601_000,
                    "result"
                ])
            })
            .collect();
        let mut stdout = String::new();
        for i in 0..100u64 {
            stdout.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{}}}}\n"
            ));
        }
        json!({
            "chunks": [{"atMs": 0, "stream": "stdout", "text": stdout}],
            "observation": {"ops": {
                "kind": "soak",
                "workload": w,
                "injected": {},
                "generator": {"ceilingPerS": ceiling},
                "requests": requests,
                "samples": [],
            }},
        })
    }

    #[test]
    fn a_soak_the_generator_could_not_keep_up_with_is_never_a_fail() {
        let t = soak_record(10);
        let (o, reason, _) = reading("bounded-soak", "positive", &t).unwrap();
        assert_eq!(
            (o, reason.as_str()),
            (ProbeOutcome::NotObserved, GENERATOR_LIMITED)
        );
        let held = reading("bounded-soak", "positive", &soak_record(100_000)).unwrap();
        assert_eq!(
            (held.0, held.1.as_str()),
            (ProbeOutcome::Accept, SOAK_WITHIN_BUDGET)
        );
        // And the verdict of such a positive is NOT_OBSERVED.
        let obs =
            |outcome, reason: &str, expected, want: &str| super::super::profile::Observation {
                expected,
                expected_reason: want.into(),
                observed: outcome,
                observed_reason: reason.into(),
                reached: true,
                detail: String::new(),
                answer: None,
            };
        let p = obs(
            ProbeOutcome::NotObserved,
            GENERATOR_LIMITED,
            ProbeOutcome::Accept,
            SOAK_WITHIN_BUDGET,
        );
        let n = obs(
            ProbeOutcome::Reject,
            SOAK_OVER_BUDGET,
            ProbeOutcome::Reject,
            SOAK_OVER_BUDGET,
        );
        let m = obs(
            ProbeOutcome::Accept,
            SOAK_WITHIN_BUDGET,
            ProbeOutcome::Accept,
            SOAK_WITHIN_BUDGET,
        );
        let v = super::super::profile::check_verdict(Some(&p), Some(&n), Some(&m), None);
        assert_eq!(
            v.verdict,
            super::super::profile::Verdict::NotObserved,
            "{v:?}"
        );
    }

    #[test]
    fn an_injection_other_than_the_declared_one_is_not_judged() {
        let mut t = soak_record(100_000);
        t["observation"]["ops"]["injected"] = json!({"responseDelayMs": 1});
        let (o, reason, _) = reading("bounded-soak", "negative", &t).unwrap();
        assert_eq!(
            (o, reason.as_str()),
            (ProbeOutcome::NotObserved, INJECTION_NOT_DECLARED)
        );
    }

    /// The budgets an ending record carries.
    fn ending_workload() -> Value {
        json!({"budgets": {"shutdownMs": 2000, "termMs": 2000, "requestTimeoutMs": 3000}, "load": {"concurrency": 4},
               "controls": {"defectFactor": 4}})
    }

    fn ending_record(check: &str, role: &str, kind: &str, events: Value, end: Value) -> Value {
        let w = ending_workload();
        json!({
            "chunks": [
                {"atMs": 1, "stream": "stdin", "text": "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"},
                {"atMs": 2, "stream": "stdout", "text": "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"},
            ],
            "events": events,
            "signalWaits": [{"signal": "SIGTERM", "sentAtMs": 100}],
            "end": end,
            "observation": {"ops": {"kind": kind, "workload": w, "open": "result",
                                    "injected": injection(check, role, &w), "inFlightIds": [1]}},
        })
    }

    #[test]
    fn a_shutdown_is_read_from_the_stored_times_against_the_budget() {
        let by_itself = json!({"status": "exit 0", "endedBy": {"mcpres": "stdin closed"}});
        let t = |exit_ms: u64| {
            ending_record(
                "graceful-shutdown",
                "positive",
                "shutdown",
                json!([{"atMs": 100, "event": "stdin-closed"}, {"atMs": exit_ms, "event": "exited", "status": "exit 0"}]),
                by_itself.clone(),
            )
        };
        let r = reading("graceful-shutdown", "positive", &t(600)).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Accept, SHUTDOWN_WITHIN_BUDGET)
        );
        assert!(r.2.contains("1 of the 1 request(s)"), "{}", r.2);
        let r = reading("graceful-shutdown", "positive", &t(2200)).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Reject, SHUTDOWN_OVER_BUDGET)
        );
        // The runner gave up: no exit by itself.
        let gave_up = ending_record(
            "graceful-shutdown",
            "positive",
            "shutdown",
            json!([{"atMs": 100, "event": "stdin-closed"},
                   {"atMs": 5100, "event": crate::judge::stdio::NO_EXIT_AFTER_STDIN_CLOSE},
                   {"atMs": 5200, "event": "exited", "status": "signal 15"}]),
            json!({"status": "signal 15", "terminatedBySigterm": true}),
        );
        let r = reading("graceful-shutdown", "positive", &gave_up).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Reject, SHUTDOWN_OVER_BUDGET)
        );
        // A record claiming another injection than the workload's is not judged.
        let mut forged = t(600);
        forged["observation"]["ops"]["injected"] = json!({"eofDelayMs": 1});
        let r = reading("graceful-shutdown", "negative", &forged).unwrap();
        assert_eq!(r.1, INJECTION_NOT_DECLARED);
    }

    /// Over Streamable HTTP backpressure is read from one connection of pipelined
    /// requests: every answer must come, and the subject must be shown holding answers
    /// back when the runner read again (the kernel's queues then, and what came after).
    #[test]
    fn over_http_backpressure_is_read_from_the_pipelined_connection_and_its_queues() {
        let w = ending_workload();
        let ids = [json!(1), json!(2), json!(3)];
        let post = |id: &Value| {
            let body = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}");
            format!(
                "POST /mcp HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
        };
        let reply = |id: &Value| {
            let body = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":[]}}}}");
            format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
        };
        // `answered` of the three answered on connection 1; `close`: the subject ended it.
        let t = |answered: usize, close: bool, resumed: Value| {
            let sent: String = ids.iter().map(post).collect();
            let got: String = ids[..answered].iter().map(reply).collect();
            let mut events = vec![
                json!({"atMs": 1, "connection": 1, "event": "reading-paused"}),
                json!({"atMs": 2, "connection": 1, "stream": "sent", "text": sent}),
                json!({"atMs": 1100, "connection": 1, "event": "reading-resumed"}),
                json!({"atMs": 1101, "connection": 1, "stream": "received", "text": got}),
                json!({"atMs": 1200, "connection": 2, "stream": "sent", "text": post(&json!(9))}),
                json!({"atMs": 1201, "connection": 2, "stream": "received", "text": reply(&json!(9))}),
            ];
            for (k, v) in resumed.as_object().unwrap() {
                events[2][k] = v.clone();
            }
            if close {
                events.insert(
                    4,
                    json!({"atMs": 1150, "connection": 1, "event": "subject-closed"}),
                );
            }
            json!({
                "http": {"connections": 2, "events": events},
                "events": [],
                "end": {"status": "signal 15"},
                "observation": {"ops": {"kind": "backpressure", "workload": w, "open": "result",
                                        "transport": "streamable-http",
                                        "injected": injection_over("backpressure", "positive", &w, true),
                                        "requestIds": ids, "afterId": 9, "answerBytes": 20,
                                        "pendingAtResume": 0}},
            })
        };
        let queues = |unread: u64, unsent: u64, stalled: u64| json!({"unreadBytes": unread, "subjectUnsentBytes": unsent, "stalledMs": stalled, "stallMs": 1000});
        let got = |t: &Value| {
            let r = reading("backpressure", "positive", t).unwrap();
            (r.0, r.1)
        };
        // Held back: more came after the runner read again than both queues held.
        let r = reading(
            "backpressure",
            "positive",
            &t(3, false, queues(40, 40, 1000)),
        )
        .unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Accept, BACKPRESSURE_HELD),
            "{}",
            r.2
        );
        assert!(r.2.contains("were still the subject's"), "{}", r.2);
        // Everything fit in the kernel's queues: the subject never waited.
        assert_eq!(
            got(&t(3, false, queues(200, 200, 1000))),
            (ProbeOutcome::NotObserved, BACKPRESSURE_NOT_REACHED.into())
        );
        // Still writing when the runner read again.
        assert_eq!(
            got(&t(3, false, queues(40, 40, 300))),
            (ProbeOutcome::NotObserved, BACKPRESSURE_NOT_REACHED.into())
        );
        // No queues in the record.
        assert_eq!(
            got(&t(3, false, json!({}))),
            (ProbeOutcome::NotObserved, BACKPRESSURE_NOT_REACHED.into())
        );
        // An answer missing on a connection the subject kept open: lost.
        assert_eq!(
            got(&t(2, false, queues(40, 40, 1000))),
            (ProbeOutcome::NoEffect, BACKPRESSURE_LOST.into())
        );
        // The subject ended the connection cleanly after the first answers: a server
        // may, and the client retries; not a loss, and nothing exercised.
        assert_eq!(
            got(&t(2, true, queues(40, 40, 1000))),
            (ProbeOutcome::NotObserved, BACKPRESSURE_NOT_REACHED.into())
        );
    }

    /// Over Streamable HTTP a graceful end is the client's DELETE, then SIGTERM: the exit
    /// is timed from the signal, and the DELETE the record claims must be in its bytes.
    #[test]
    fn over_http_a_graceful_end_is_timed_from_sigterm_after_the_sessions_delete() {
        let w = ending_workload();
        let post = "POST /mcp HTTP/1.1\r\nContent-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        let t = |delete: bool, end: &str, exit_ms: u64| {
            let mut events = vec![
                json!({"atMs": 1, "connection": 1, "stream": "sent", "text": post}),
                json!({"atMs": 2, "connection": 1, "stream": "received",
                       "text": "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 36\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}),
            ];
            if delete {
                events.push(json!({"atMs": 3, "connection": 2, "stream": "sent",
                                   "text": "DELETE /mcp HTTP/1.1\r\nMcp-Session-Id: s\r\nContent-Length: 0\r\n\r\n"}));
                events.push(json!({"atMs": 4, "connection": 2, "stream": "received",
                                   "text": "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n"}));
            }
            json!({
                "http": {"connections": if delete { 2 } else { 1 }, "events": events},
                "events": [{"atMs": 100, "event": "sent SIGTERM"},
                           {"atMs": exit_ms, "event": "exited", "status": "signal 15"}],
                "signalWaits": [{"signal": "SIGTERM", "sentAtMs": 100}],
                "end": {"status": "signal 15"},
                "observation": {"ops": {"kind": "shutdown", "workload": w, "open": "result",
                                        "transport": "streamable-http", "sessionEnd": end,
                                        "injected": injection_over("graceful-shutdown", "positive", &w, true),
                                        "inFlightIds": [1]}},
            })
        };
        let r = reading("graceful-shutdown", "positive", &t(true, "delete", 600)).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Accept, SHUTDOWN_WITHIN_BUDGET),
            "{}",
            r.2
        );
        assert!(
            r.2.contains("DELETE (HTTP 405)") && r.2.contains("1 of the 1"),
            "{}",
            r.2
        );
        let r = reading("graceful-shutdown", "positive", &t(true, "delete", 2300)).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Reject, SHUTDOWN_OVER_BUDGET)
        );
        // No session id: nothing to delete, and that is what the bytes must show.
        let r = reading(
            "graceful-shutdown",
            "positive",
            &t(false, "no-session-id", 600),
        )
        .unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Accept, SHUTDOWN_WITHIN_BUDGET)
        );
        // A DELETE claimed that the bytes do not hold is not judged.
        let r = reading("graceful-shutdown", "positive", &t(false, "delete", 600)).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::NotObserved, LABEL_NOT_IN_RECORD)
        );
        // Over HTTP the control holds SIGTERM back, not the end of file.
        let mut stdio_control = t(true, "delete", 600);
        stdio_control["observation"]["ops"]["injected"] =
            injection("graceful-shutdown", "negative", &w);
        let r = reading("graceful-shutdown", "negative", &stdio_control).unwrap();
        assert_eq!(r.1, INJECTION_NOT_DECLARED);
    }

    #[test]
    fn a_sigterm_is_read_from_the_stored_events() {
        let t = |events: Value| {
            ending_record(
                "forced-shutdown",
                "positive",
                "term",
                events,
                json!({"status": "signal 15"}),
            )
        };
        let quick = t(
            json!([{"atMs": 100, "event": "sent SIGTERM"}, {"atMs": 130, "event": "exited", "status": "signal 15"}]),
        );
        let r = reading("forced-shutdown", "positive", &quick).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Accept, TERM_WITHIN_BUDGET)
        );
        let ignored = t(
            json!([{"atMs": 100, "event": "sent SIGTERM"}, {"atMs": 5100, "event": "no exit after SIGTERM"},
                              {"atMs": 7200, "event": "exited", "status": "signal 9"}]),
        );
        let r = reading("forced-shutdown", "positive", &ignored).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Reject, TERM_OVER_BUDGET)
        );
        let before = ending_record(
            "forced-shutdown",
            "positive",
            "term",
            json!([{"atMs": 50, "event": "exited", "status": "exit 1"}]),
            json!({"status": "exit 1", "endedBy": "subject"}),
        );
        let r = reading("forced-shutdown", "positive", &before).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Terminate, SUBJECT_EXITED)
        );
    }

    #[test]
    fn cleanup_is_read_from_what_the_end_found_alive() {
        let t = |left: Value, n: u64| {
            ending_record(
                "cleanup",
                "positive",
                "cleanup",
                json!([]),
                json!({"status": "exit 0", "leftBehind": n, "leftBehindProcesses": left}),
            )
        };
        let r = reading("cleanup", "positive", &t(json!([]), 0)).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Accept, CLEANUP_COMPLETE)
        );
        let r = reading(
            "cleanup",
            "positive",
            &t(json!([{"pid": 9, "command": "sleep"}]), 1),
        )
        .unwrap();
        assert_eq!((r.0, r.1.as_str()), (ProbeOutcome::Reject, RESIDUE_LEFT));
        assert!(r.2.contains("9 (sleep)"), "{}", r.2);
        // A count without the list is not a clean end either.
        let r = reading("cleanup", "positive", &t(json!([]), 2)).unwrap();
        assert_eq!(r.1, RESIDUE_LEFT);
    }

    #[test]
    fn a_burst_is_answered_or_not_by_what_stdout_holds() {
        let mut t = ending_record(
            "bounded-concurrency",
            "positive",
            "burst",
            json!([]),
            json!({"status": "exit 0"}),
        );
        let mut stdin = String::new();
        let mut stdout = String::new();
        for i in 1..=4 {
            stdin.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"ping\"}}\n"
            ));
            if i != 3 {
                stdout.push_str(&format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{}}}}\n"
                ));
            }
        }
        t["chunks"] = json!([{"atMs": 1, "stream": "stdin", "text": stdin},
                             {"atMs": 2, "stream": "stdout", "text": stdout}]);
        t["observation"]["ops"]["burstIds"] = json!([1, 2, 3, 4]);
        let r = reading("bounded-concurrency", "positive", &t).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::NoEffect, BURST_UNANSWERED)
        );
        // An overload refusal is an answer.
        let refused =
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32000,\"message\":\"busy\"}}\n";
        t["chunks"][1]["text"] = json!(format!("{stdout}{refused}"));
        let r = reading("bounded-concurrency", "positive", &t).unwrap();
        assert_eq!((r.0, r.1.as_str()), (ProbeOutcome::Accept, BURST_ANSWERED));
        // A burst the stored stdin did not send is not judged.
        t["observation"]["ops"]["burstIds"] = json!([1, 2, 3, 4, 5]);
        let r = reading("bounded-concurrency", "positive", &t).unwrap();
        assert_eq!(r.1, LABEL_NOT_IN_RECORD);
    }

    #[test]
    fn an_elided_line_is_named_by_the_id_at_its_head() {
        use base64::Engine;
        let head = base64::engine::general_purpose::STANDARD
            .encode(br#"{"jsonrpc":"2.0","id":42,"method":"ping","params":{"_meta":{"x":"aaaa"#);
        let t = json!({"chunks": [{"atMs": 1, "stream": "stdin", "bytes": 1 << 20, "elided": {"sha256": "00", "headBase64": head}}]});
        assert!(sent_ids(&t).contains("42"));
        let t = json!({"chunks": [{"atMs": 1, "stream": "stdin", "bytes": 9, "elided": {"sha256": "00", "headBase64": "e30="}}]});
        assert!(sent_ids(&t).is_empty());
    }

    fn req(id: u64) -> String {
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n")
    }

    fn ans(id: u64) -> String {
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n")
    }

    /// Over HTTP the ids sent are read from each sent chunk: a whole request (its
    /// head, then its body), and a body elided as too large by the id at its head; a
    /// head alone, or an elided chunk that starts with a request's head, names none.
    #[test]
    fn the_ids_posted_over_http_are_read_from_kept_and_elided_chunks() {
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let big = r#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"_meta":{"dev.mcpres/padding":"aaaa"#;
        let web = json!({
            "connections": 3,
            "events": [
                {"atMs": 1, "stream": "sent", "connection": 0, "bytes": 80,
                 "text": "POST /mcp HTTP/1.1\r\nContent-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}"},
                {"atMs": 2, "stream": "sent", "connection": 1, "bytes": 40,
                 "text": "POST /mcp HTTP/1.1\r\nContent-Length: 4194304\r\n\r\n"},
                {"atMs": 3, "stream": "sent", "connection": 1, "bytes": 4194304,
                 "elided": {"headBase64": b64(big)}},
                {"atMs": 4, "stream": "sent", "connection": 2, "bytes": 4194400,
                 "elided": {"headBase64": b64("POST /mcp HTTP/1.1\r\nContent-Length: 4194304\r\n")}},
                {"atMs": 5, "stream": "received", "connection": 0, "bytes": 2,
                 "text": "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}"},
            ],
        });
        let t = json!({"http": web});
        let ids: Vec<String> = sent_ids(&t).into_iter().collect();
        assert_eq!(ids, ["5", "7"]);
    }

    /// A stored HTTP chunk: request `id` (a ping) posted on connection `conn` at `at` ms.
    fn post(conn: u64, at: u64, id: u64) -> Value {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        json!({"atMs": at, "stream": "sent", "connection": conn,
               "text": format!("POST /mcp HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}", body.len())})
    }

    /// A stored HTTP chunk: a response (`head`: status line's code and reason, and any
    /// more header lines) received on connection `conn` at `at` ms.
    fn got(conn: u64, at: u64, head: &str, body: &str) -> Value {
        json!({"atMs": at, "stream": "received", "connection": conn,
               "text": format!("HTTP/1.1 {head}\r\nContent-Length: {}\r\n\r\n{body}", body.len())})
    }

    /// An empty result to `id`, as a JSON body.
    fn result(id: u64) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
    }

    /// Over HTTP a request over the limit counts only when it was sent and answered
    /// while every hold call was provably running; a refusal may be an HTTP status
    /// alone, its hint a `Retry-After` header.
    #[test]
    fn over_http_a_request_is_over_the_limit_only_inside_the_holds_span() {
        let w = json!({"subject": {"maxInFlight": 2, "holdMs": 1000, "holdTool": "slow"},
                       "load": {"concurrency": 4}, "controls": {"defectFactor": 2}, "budgets": {}});
        let refusal = |id: u64| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32000,"message":"busy"}}}}"#)
        };
        // Holds 1 and 2 sent at 0 and served at 1000: both ran over 1..1000 ms.
        let record = |check: &str, overs: Vec<Value>| {
            let mut events = vec![
                post(0, 0, 1),
                post(1, 0, 2),
                got(0, 1000, "200 OK", &result(1)),
                got(1, 1000, "200 OK", &result(2)),
            ];
            events.extend(overs);
            json!({"http": {"connections": 4, "events": events},
                   "observation": {"ops": {"kind": "overload", "workload": w, "open": "result",
                       "injected": injection(check, "positive", &w),
                       "holdIds": [1, 2], "overIds": [3, 4]}}})
        };
        let judge = |check: &str, overs: Vec<Value>| {
            let (o, reason, why) = reading(check, "positive", &record(check, overs)).unwrap();
            (o, reason, why)
        };
        // Served inside the span: more in flight than declared.
        let (o, reason, _) = judge(
            "overload-rejection",
            vec![
                post(2, 500, 3),
                post(3, 500, 4),
                got(2, 510, "200 OK", &result(3)),
                got(3, 510, "503 Service Unavailable", ""),
            ],
        );
        assert_eq!(
            (o, reason.as_str()),
            (ProbeOutcome::Reject, OVERLOAD_NOT_ENFORCED)
        );
        // Served after the holds ended, one refused by an HTTP status inside: holds.
        let (o, reason, why) = judge(
            "overload-rejection",
            vec![
                post(2, 500, 3),
                post(3, 500, 4),
                got(2, 1200, "200 OK", &result(3)),
                got(3, 505, "503 Service Unavailable", ""),
            ],
        );
        assert_eq!(
            (o, reason.as_str()),
            (ProbeOutcome::Accept, OVERLOAD_REJECTED),
            "{why}"
        );
        // Sent before the holds provably ran (the subject may have taken it first):
        // served, yet nothing over a full set of places was seen.
        let w2 = [
            post(2, 0, 3),
            post(3, 0, 4),
            got(2, 5, "200 OK", &result(3)),
            got(3, 1100, "200 OK", &result(4)),
        ];
        let (o, reason, _) = judge("overload-rejection", w2.to_vec());
        assert_eq!(
            (o, reason.as_str()),
            (ProbeOutcome::NotObserved, OVERLOAD_UNPLACED)
        );
        // Neither an answer nor an HTTP status: lost.
        let (o, reason, _) = judge(
            "overload-rejection",
            vec![
                post(2, 500, 3),
                post(3, 500, 4),
                got(3, 505, "503 Service Unavailable", ""),
            ],
        );
        assert_eq!(
            (o, reason.as_str()),
            (ProbeOutcome::NoEffect, OVERLOAD_LOST)
        );
        // retry-after: a Retry-After header is a hint; a refusal without one is not.
        let hinted = |header: &str| {
            let head = format!("503 Service Unavailable{header}");
            vec![
                post(2, 500, 3),
                post(3, 500, 4),
                got(2, 505, &head, ""),
                got(
                    3,
                    505,
                    "429 Too Many Requests",
                    &refusal(4).replace(
                        r#""message":"busy""#,
                        r#""message":"busy","data":{"retryAfterMs":100}"#,
                    ),
                ),
            ]
        };
        let (o, reason, _) = judge("retry-after", hinted(""));
        assert_eq!((o, reason.as_str()), (ProbeOutcome::Reject, NO_RETRY_HINT));
        let (o, reason, _) = judge("retry-after", hinted("\r\nRetry-After: 1"));
        // Hinted, but no retry in the record: not served.
        assert_eq!(
            (o, reason.as_str()),
            (ProbeOutcome::Reject, RETRY_NOT_SERVED)
        );
        // A hold served sooner than declared: the places were not held.
        let mut early = record("overload-rejection", vec![post(2, 500, 3), post(3, 500, 4)]);
        early["http"]["events"][2]["atMs"] = json!(400);
        let (o, reason, _) = reading("overload-rejection", "positive", &early).unwrap();
        assert_eq!(
            (o, reason.as_str()),
            (ProbeOutcome::NotObserved, HOLD_NOT_HELD)
        );
    }

    /// Over HTTP a request of the rate burst refused with HTTP 429 alone was answered;
    /// one whose connection brought nothing was lost.
    #[test]
    fn over_http_a_rate_refusal_may_be_a_status_alone() {
        let w = json!({"rateLimit": {"requests": 2, "windowMs": 1000}, "load": {"concurrency": 4},
                       "controls": {"defectFactor": 2}, "budgets": {}});
        let record = |last: Option<Value>| {
            let mut events = vec![
                post(0, 0, 1),
                post(1, 0, 2),
                post(2, 0, 3),
                post(3, 0, 4),
                got(0, 10, "200 OK", &result(1)),
                got(1, 10, "200 OK", &result(2)),
                got(2, 12, "429 Too Many Requests\r\nRetry-After: 1", ""),
                post(4, 1100, 5),
                got(4, 1105, "200 OK", &result(5)),
            ];
            events.extend(last);
            json!({"http": {"connections": 5, "events": events},
                   "observation": {"ops": {"kind": "rate", "workload": w, "open": "result",
                       "injected": injection("rate-limiting", "positive", &w),
                       "burstIds": [1, 2, 3, 4], "afterId": 5}}})
        };
        let refused = record(Some(got(3, 12, "429 Too Many Requests", "")));
        let (o, reason, why) = reading("rate-limiting", "positive", &refused).unwrap();
        assert_eq!(
            (o, reason.as_str()),
            (ProbeOutcome::Accept, RATE_LIMIT_HELD),
            "{why}"
        );
        let (o, reason, _) = reading("rate-limiting", "positive", &record(None)).unwrap();
        assert_eq!(
            (o, reason.as_str()),
            (ProbeOutcome::NoEffect, RATE_LIMIT_LOST)
        );
    }

    #[test]
    fn a_rate_burst_answer_past_the_stored_stdout_is_not_silence() {
        let w = json!({"rateLimit": {"requests": 2, "windowMs": 1000}, "load": {"concurrency": 4},
                       "controls": {"defectFactor": 2}, "budgets": {}});
        let inp: String = (1..=5).map(req).collect();
        let record = |stdout: Vec<Value>, written: usize| {
            let mut chunks = vec![json!({"atMs": 1, "stream": "stdin", "text": inp})];
            chunks.extend(stdout);
            json!({
                "chunks": chunks,
                "events": [], "stdoutBytes": written, "stdoutDroppedBytes": 0,
                "observation": {"ops": {"kind": "rate", "workload": w, "open": "result",
                    "injected": injection("rate-limiting", "positive", &w),
                    "burstIds": [1, 2, 3, 4], "afterId": 5}},
            })
        };
        let two = format!("{}{}", ans(1), ans(2));
        // The last two answers were written but kept as their digest only: the record
        // cannot say they were not sent.
        let cut = record(
            vec![
                json!({"atMs": 2, "stream": "stdout", "text": two}),
                json!({"atMs": 3, "stream": "stdout", "bytes": 200, "sha256": "00"}),
            ],
            two.len() + 200,
        );
        let (o, reason, _) = reading("rate-limiting", "positive", &cut).unwrap();
        assert_eq!(
            (o, reason.as_str()),
            (ProbeOutcome::NotObserved, LABEL_NOT_IN_RECORD)
        );
        // Everything the subject wrote is stored, and two are missing: lost.
        let whole = record(
            vec![json!({"atMs": 2, "stream": "stdout", "text": two})],
            two.len(),
        );
        let (o, reason, _) = reading("rate-limiting", "positive", &whole).unwrap();
        assert_eq!(
            (o, reason.as_str()),
            (ProbeOutcome::NoEffect, RATE_LIMIT_LOST)
        );
    }

    #[test]
    fn a_line_is_timed_by_the_chunk_that_completed_it() {
        let t = json!({"chunks": [
            {"atMs": 5, "stream": "stdout", "text": "{\"id\":1,"},
            {"atMs": 9, "stream": "stdin", "text": req(2)},
            {"atMs": 40, "stream": "stdout", "text": "\"result\":{}}\nnot json\n"},
        ]});
        let out = timed_messages(&t, "stdout");
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, 40);
        assert_eq!(out[0].1["id"], 1);
        assert_eq!(sent_and_answered(&t, &json!(1)).0, None);
        assert_eq!(sent_and_answered(&t, &json!(2)).0, Some(9));
    }

    #[test]
    fn a_deadline_is_read_from_the_stored_send_and_answer_times() {
        let t = |answer_at: Option<u64>| {
            let mut t = ending_record(
                "timeout",
                "positive",
                "timeout",
                json!([]),
                json!({"status": "exit 0"}),
            );
            let mut chunks = vec![
                json!({"atMs": 10, "stream": "stdin", "text": req(1)}),
                json!({"atMs": 20, "stream": "stdout", "text": ans(1)}),
                json!({"atMs": 30, "stream": "stdin", "text": req(2)}),
            ];
            if let Some(at) = answer_at {
                chunks.push(json!({"atMs": at, "stream": "stdout", "text": ans(2)}));
            }
            t["chunks"] = json!(chunks);
            t["observation"]["ops"]["judgedIds"] = json!([1, 2]);
            t
        };
        let r = reading("timeout", "positive", &t(Some(3030))).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Accept, ANSWERED_BY_DEADLINE)
        );
        let r = reading("timeout", "positive", &t(Some(3031))).unwrap();
        assert_eq!((r.0, r.1.as_str()), (ProbeOutcome::Reject, DEADLINE_MISSED));
        let r = reading("timeout", "positive", &t(None)).unwrap();
        assert_eq!((r.0, r.1.as_str()), (ProbeOutcome::Reject, DEADLINE_MISSED));
        // A subject that exited is not a missed deadline.
        let mut gone = t(None);
        gone["end"] = json!({"status": "exit 1", "endedBy": "subject"});
        let r = reading("timeout", "positive", &gone).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Terminate, SUBJECT_EXITED)
        );
        // Ids the stored stdin never carried are not judged.
        let mut forged = t(Some(40));
        forged["observation"]["ops"]["judgedIds"] = json!([1, 7]);
        let r = reading("timeout", "positive", &forged).unwrap();
        assert_eq!(r.1, LABEL_NOT_IN_RECORD);
    }

    #[test]
    fn a_duplicate_is_met_by_what_stdout_holds() {
        let t = |stdout: String| {
            let mut t = ending_record(
                "duplicate-delivery",
                "positive",
                "duplicate",
                json!([]),
                json!({"status": "exit 0"}),
            );
            t["chunks"] = json!([
                {"atMs": 10, "stream": "stdin", "text": format!("{}{}", req(1), req(1))},
                {"atMs": 12, "stream": "stdin", "text": req(2)},
                {"atMs": 20, "stream": "stdout", "text": stdout},
            ]);
            t["observation"]["ops"]["duplicatedId"] = json!(1);
            t["observation"]["ops"]["afterId"] = json!(2);
            t
        };
        let r = reading(
            "duplicate-delivery",
            "positive",
            &t(format!("{}{}", ans(1), ans(2))),
        )
        .unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Accept, DUPLICATE_BOUNDED)
        );
        assert!(r.2.contains("suppression observed"), "{}", r.2);
        let r = reading(
            "duplicate-delivery",
            "positive",
            &t(format!("{}{}{}", ans(1), ans(1), ans(2))),
        )
        .unwrap();
        assert!(r.2.contains("replayed"), "{}", r.2);
        let r = reading("duplicate-delivery", "positive", &t(ans(1))).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::NoEffect, DUPLICATE_STALLED)
        );
        let r = reading("duplicate-delivery", "positive", &t(ans(2))).unwrap();
        assert_eq!(r.1, DUPLICATE_STALLED);
        // One copy on the stored stdin is no duplicate delivery.
        let mut once = t(format!("{}{}", ans(1), ans(2)));
        once["chunks"][0]["text"] = json!(req(1));
        let r = reading("duplicate-delivery", "positive", &once).unwrap();
        assert_eq!(r.1, LABEL_NOT_IN_RECORD);
    }

    #[test]
    fn a_crash_is_read_from_the_kill_what_outlived_it_and_the_restart() {
        let t = |left: Value, restart: Value| {
            let mut t = ending_record(
                "process-crash",
                "positive",
                "crash",
                json!([{"atMs": 30, "event": "sent SIGKILL to the process group"},
                       {"atMs": 31, "event": "exited", "status": "signal 9"}]),
                json!({"status": "signal 9", "leftBehindProcesses": left}),
            );
            t["observation"]["ops"]["servedId"] = json!(1);
            t["observation"]["ops"]["restart"] = restart;
            t
        };
        let fresh = json!({"open": "result", "afterId": 5, "transcript": {"chunks": [
            {"atMs": 3, "stream": "stdin", "text": req(5)},
            {"atMs": 4, "stream": "stdout", "text": ans(5)}]}});
        let r = reading("process-crash", "positive", &t(json!([]), fresh.clone())).unwrap();
        assert_eq!((r.0, r.1.as_str()), (ProbeOutcome::Accept, CRASH_RECOVERED));
        let r = reading(
            "process-crash",
            "positive",
            &t(json!([{"pid": 9, "command": "sleep"}]), fresh.clone()),
        )
        .unwrap();
        assert_eq!((r.0, r.1.as_str()), (ProbeOutcome::Reject, CRASH_RESIDUE));
        assert!(r.2.contains("9 (sleep)"), "{}", r.2);
        let mut deaf = fresh.clone();
        deaf["transcript"]["chunks"] = json!([{"atMs": 3, "stream": "stdin", "text": req(5)}]);
        let r = reading("process-crash", "positive", &t(json!([]), deaf)).unwrap();
        assert_eq!((r.0, r.1.as_str()), (ProbeOutcome::Reject, RESTART_FAILED));
        let r = reading(
            "process-crash",
            "positive",
            &t(json!([]), json!({"startError": "no such file"})),
        )
        .unwrap();
        assert_eq!(r.1, RESTART_FAILED);
        // No kill in the record: nothing to read.
        let mut unkilled = t(json!([]), fresh);
        unkilled["events"] = json!([]);
        let r = reading("process-crash", "positive", &unkilled).unwrap();
        assert_eq!(r.1, LABEL_NOT_IN_RECORD);
    }

    #[test]
    fn a_restart_compares_the_surface_both_transcripts_declare() {
        let opening = "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"s\"}}}\n";
        let tools = |id: u64, names: &str| {
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"tools\":[{names}]}}}}\n")
        };
        let side = |id: u64, names: &str| {
            json!({"chunks": [
                {"atMs": 0, "stream": "stdin", "text": "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}\n"},
                {"atMs": 1, "stream": "stdout", "text": opening},
                {"atMs": 2, "stream": "stdin", "text": req(id)},
                {"atMs": 3, "stream": "stdout", "text": tools(id, names)},
            ]})
        };
        let t = |after: &str| {
            let mut t = ending_record(
                "restart",
                "positive",
                "restart",
                json!([]),
                json!({"status": "exit 0"}),
            );
            t["chunks"] = side(1, r#"{"name":"a"},{"name":"b"}"#)["chunks"].clone();
            t["observation"]["ops"]["toolsId"] = json!(1);
            t["observation"]["ops"]["restart"] =
                json!({"open": "result", "afterId": 2, "transcript": side(2, after)});
            t
        };
        // The order is no declared state.
        let r = reading("restart", "positive", &t(r#"{"name":"b"},{"name":"a"}"#)).unwrap();
        assert_eq!(
            (r.0, r.1.as_str()),
            (ProbeOutcome::Accept, RESTART_SAME_SURFACE)
        );
        let r = reading("restart", "positive", &t(r#"{"name":"a"},{"name":"c"}"#)).unwrap();
        assert_eq!((r.0, r.1.as_str()), (ProbeOutcome::Reject, SURFACE_CHANGED));
        assert!(r.2.contains("differs in tools"), "{}", r.2);
        let mut unanswered = t("");
        unanswered["observation"]["ops"]["restart"]["transcript"]["chunks"] =
            json!([{"atMs": 1, "stream": "stdout", "text": opening}]);
        let r = reading("restart", "positive", &unanswered).unwrap();
        assert_eq!((r.0, r.1.as_str()), (ProbeOutcome::Reject, RESTART_FAILED));
    }
}
