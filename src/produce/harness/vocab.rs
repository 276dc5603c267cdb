//! The harness's shared vocabulary: protocol revisions and their `_meta`
//! keys, the scenario definition (controls, injectors, mutants, recovery
//! policies, client faults), the oracle's verdict names, and where and when
//! each kind of fault is put.
//!
//! Plain data and names only: this file imports no other harness file, so
//! every other one (the session, the HTTP client, the oracle, the scenario
//! files, the drivers) can use it without depending on each other.

use serde_json::Value;

pub use crate::model::mcp::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO,
    PROTOCOL_REVISION, Revision,
};

/// The clean control's steps as run under `revision`: 2026-07-28 opens with
/// `server/discover` and sends no `notifications/initialized`.
pub fn clean_steps_for<S: AsRef<str>>(steps: &[S], revision: Revision) -> Vec<String> {
    steps
        .iter()
        .map(AsRef::as_ref)
        .filter(|s| !(revision.is_stateless() && *s == "notifications/initialized"))
        .map(|s| match s {
            "initialize" if revision.is_stateless() => "server/discover".to_string(),
            other => other.to_string(),
        })
        .collect()
}

/// The stop reason of a generic clean control that completed every step it
/// made but could call no tool safely: incomplete, not failed.
pub const NO_SAFE_TOOL_CALL: &str = "NO_SAFE_TOOL_CALL";

/// Verdict of an oracle that accepts.
pub const ACCEPT: &str = "PASS";
/// Verdict of an oracle that rejects.
pub const REJECT: &str = "REJECT";
/// Stop reason of an exchange every check accepted.
pub const COMPLETED: &str = "COMPLETED";

/// A weakened oracle: one check removed or loosened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutant {
    /// The real oracle.
    None,
    /// Only checks that `result` is an object, not its members.
    SkipResultShape,
    /// Takes the first response-shaped message whatever its id.
    IgnoreIds,
    /// Decodes frames lossily (invalid UTF-8 becomes U+FFFD) instead of rejecting them.
    LossyDecode,
    /// Takes a refusal (a JSON-RPC error, or a tool result with `isError`) for
    /// success, as an oracle that only checks that an answer arrived would.
    AcceptRefusals,
}

impl Mutant {
    pub fn id(self) -> &'static str {
        match self {
            Mutant::None => "oracle",
            Mutant::SkipResultShape => "mutant/oracle-skips-result-shape",
            Mutant::IgnoreIds => "mutant/oracle-ignores-response-ids",
            Mutant::LossyDecode => "mutant/oracle-decodes-lossily",
            Mutant::AcceptRefusals => "mutant/oracle-accepts-refusals",
        }
    }
}

/// One negative control of a scenario.
#[derive(Debug, Clone)]
pub struct NegativeControl {
    /// Short name, used in operation and artifact names.
    pub name: String,
    /// Reference-server fault id (FAULT_TAXONOMY.json) or harness wire fault.
    pub fault: String,
    /// The taxonomy boundary the fault acts on.
    pub boundary: String,
    /// The taxonomy's expected effect.
    pub expected_effect: String,
    pub property: String,
    pub expected_verdict: String,
    pub expected_stop: String,
    pub mutant: Mutant,
    /// What triggers the fault (recorded in the evidence).
    pub trigger: String,
    /// Who injects the fault: the subject (its `--fault` flag) or the harness.
    pub injector: Injector,
    /// Prerequisites that must all be reached for the property to count as reached.
    pub prerequisites: Vec<String>,
    /// For a tool-contract control ([`Injector::RequestInvalidInput`]): the
    /// tool, its valid input (the twin sent first) and the invalid one.
    pub input: Option<ToolInput>,
}

/// The inputs of one tool-contract control: the valid `arguments` (sent
/// first, as the control's twin, on the same session) and the invalid ones
/// that differ from them by one defect.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInput {
    pub tool: String,
    /// `missing-required`, `wrong-type` or `unknown-member`.
    pub violation: &'static str,
    /// The member the defect is in.
    pub member: String,
    pub valid: Value,
    pub invalid: Value,
    /// The tool's `inputSchema`: trials after the first draw fresh values
    /// from it (`contract::fresh_inputs`).
    pub schema: Value,
}

/// Who injects a negative control's fault, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Injector {
    /// The subject itself, through the reference server's `--fault` flag.
    SubjectFlag,
    /// The harness, on the wire (see `wire.rs`): invalid UTF-8 inserted into the frame.
    WireCorruptUtf8,
    /// The harness, on the wire: the response frame delivered twice.
    WireDuplicate,
    /// The harness, on the wire: a required member removed from the result.
    WireStripResult,
    /// The harness sends the subject a request for a method no MCP server has
    /// (a fresh random name per session); the subject must refuse it.
    RequestUnknownMethod,
    /// The harness calls a tool the subject did not list (a fresh random name
    /// per session); the subject must refuse it.
    RequestUnknownTool,
    /// The harness calls a listed tool with an input its declared schema
    /// makes invalid, right after the valid input on the same session (see
    /// `contract.rs`); the subject must refuse it with -32602 or a tool error.
    RequestInvalidInput,
}

impl Injector {
    /// The fault method recorded in the scenario descriptor.
    pub fn method(self) -> &'static str {
        match self {
            Injector::SubjectFlag => "SUBJECT_FAULT_FLAG",
            Injector::RequestUnknownMethod
            | Injector::RequestUnknownTool
            | Injector::RequestInvalidInput => "HARNESS_CLIENT_REQUEST",
            _ => "HARNESS_WIRE_PROXY",
        }
    }

    /// A fault that only exercises the harness's own oracle (injected after the
    /// raw capture, on a copy the subject never sees): a self-check of the
    /// harness, never counted as a control of the subject.
    pub fn is_self_check(self) -> bool {
        matches!(
            self,
            Injector::WireCorruptUtf8 | Injector::WireDuplicate | Injector::WireStripResult
        )
    }
}

/// A finite recovery policy: how often, how long and how far apart the
/// harness retries, and what makes a retry safe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryPolicy {
    pub id: String,
    pub retry_limit: u32,
    pub initial_backoff_ms: u64,
    pub max_backoff_ms: u64,
    pub attempt_timeout_ms: u64,
    pub time_limit_ms: u64,
    pub cancellation_boundary: String,
    pub side_effect_model: String,
    pub safety_mechanism: String,
}

impl RecoveryPolicy {
    /// Backoff before retry `attempt` (1-based): the initial backoff doubled
    /// for each earlier retry, capped at the maximum.
    pub fn backoff_ms(&self, attempt: u32) -> u64 {
        let doublings = attempt.saturating_sub(1).min(20);
        self.initial_backoff_ms
            .saturating_mul(1u64 << doublings)
            .min(self.max_backoff_ms)
    }
}

/// A recovery control: a transient subject fault in the first attempt of an
/// idempotent call, recovered under a policy (see `recovery.rs`).
#[derive(Debug, Clone)]
pub struct RecoveryControl {
    pub name: String,
    pub fault: String,
    pub boundary: String,
    pub policy: RecoveryPolicy,
    pub expect_recovered: bool,
}

/// A fault on the client-to-server path (see `client.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFaultKind {
    /// A request line cut off in the middle of the JSON text.
    TruncatedJson,
    /// A request whose string holds bytes that are not UTF-8.
    InvalidUtf8,
    /// A well-formed request for a method no server has.
    UnknownMethod,
    /// `tools/call` without the required `name`.
    CallWithoutName,
    /// Well-formed JSON that is not a JSON-RPC message.
    NotJsonRpc,
}

impl ClientFaultKind {
    pub fn id(self) -> &'static str {
        match self {
            ClientFaultKind::TruncatedJson => "client-truncated-json",
            ClientFaultKind::InvalidUtf8 => "client-invalid-utf8",
            ClientFaultKind::UnknownMethod => "client-unknown-method",
            ClientFaultKind::CallWithoutName => "client-call-without-name",
            ClientFaultKind::NotJsonRpc => "client-not-jsonrpc",
        }
    }
}

/// One client-to-server fault of a scenario.
#[derive(Debug, Clone)]
pub struct ClientFault {
    pub name: String,
    pub kind: ClientFaultKind,
    /// The subject must answer with a JSON-RPC error (else an error or silence).
    pub error_required: bool,
    /// `SURVIVE`: any answer is recorded (even a result); only staying alive counts.
    pub accept_allowed: bool,
    /// The error code the answer must carry, when one is named.
    pub error_code: Option<i64>,
}

impl ClientFault {
    pub fn expect_label(&self) -> &'static str {
        match (self.error_required, self.accept_allowed) {
            (true, _) => "ERROR",
            (false, false) => "ERROR_OR_SILENCE",
            (false, true) => "SURVIVE",
        }
    }
}

/// A scenario: built in (`scenarios/*.toml`, compiled in) or from a file.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// Budget for one request/response exchange.
    pub exchange_budget_ms: u64,
    pub negatives: Vec<NegativeControl>,
    /// The clean control's steps, as recorded in the scenario descriptor.
    pub clean_steps: Vec<String>,
    /// `true` for the generic driver (arbitrary servers).
    pub generic: bool,
    /// The MCP revision to speak (unless `--revision` says otherwise).
    pub protocol_revision: Revision,
    pub default_trials: Option<usize>,
    pub default_seed: Option<u32>,
    /// The run must end within this time.
    pub scenario_duration_ms: u64,
    pub recovery_policies: Vec<RecoveryPolicy>,
    pub recoveries: Vec<RecoveryControl>,
    pub client_faults: Vec<ClientFault>,
    /// The checked scenario document: what the scenario descriptor records.
    pub document: Value,
    /// The tool the operator named for the generic clean control's tool call
    /// (`mcpres run --tool NAME --tool-args JSON`), instead of the harness's
    /// own choice (`echo`, else a tool annotated read-only).
    pub named_tool: Option<NamedTool>,
    /// The `tool-contracts` driver: the run lists the subject's tools and
    /// writes one bundle per safe tool, each with this scenario's controls
    /// and the tool's contract controls (`contract.rs`).
    pub tool_contracts: bool,
}

/// A tool the operator names for the generic clean control, with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedTool {
    pub name: String,
    /// A JSON object: the call's `arguments`.
    pub arguments: Value,
}

/// Trigger used for every negative control's fault: only the `add` tool call is
/// faulted, so the clean control (which calls `echo`) is never affected.
pub const FAULT_TRIGGER: &str = "tool-add";

/// The default scenario for the reference server (`mcpres serve`).
pub const DEFAULT_SCENARIO: &str = "reference-faults";

/// The default scenario for any other subject.
pub const DEFAULT_THIRD_PARTY_SCENARIO: &str = "generic";

/// Every stop reason the harness's oracle can give a judgement (the
/// `expectedStopReason` of a negative control must be one of them, else the
/// control could never behave). The scenario schema's `stopReason` enum is
/// this list.
pub const STOP_REASONS: [&str; 20] = [
    "COMPLETED",
    "DUPLICATE_RESPONSE",
    "ERROR_RESPONSE",
    "HTTP_BODY_ON_ACCEPTED",
    "HTTP_CONTENT_TYPE",
    "HTTP_STATUS",
    "INPUT_LIMIT_EXCEEDED",
    "INVALID_JSON",
    "INVALID_JSONRPC",
    "INVALID_UTF8",
    "MISSING_TOOL",
    "NO_RESPONSE",
    "REQUEST_REFUSED",
    "RESULT_TYPE_NOT_COMPLETE",
    "REVISION_NOT_SUPPORTED",
    "SCHEMA_VIOLATION",
    "TIMING_BUDGET_EXCEEDED",
    "TOOL_ERROR",
    "UNSOLICITED_RESPONSE_ID",
    "WRONG_RESULT",
];

/// The name the reference server reports in `serverInfo`.
pub const REFERENCE_SERVER_NAME: &str = "mcpres-reference-server";

/// The request whose recorded answer the harness's self-checks fault (a copy of it).
pub const WIRE_TRIGGER: &str = "response-to:tools/list";

/// Where the harness's self-checks inject their faults.
pub const WIRE_BOUNDARY: &str =
    "harness wire proxy: subject stdout frame, after the raw capture, before the oracle";

/// Where a request-fault is put: the harness's own client writes it.
pub const REQUEST_BOUNDARY: &str =
    "harness client: a request written to the subject's input (a stdin line or an HTTP POST)";

/// When a request-fault is sent: right after the session was opened.
pub const REQUEST_TRIGGER: &str = "after-session-open";
