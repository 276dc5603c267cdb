//! Seeded, deterministic fault injection below the typed MCP layer.
//!
//! A fault plan is a list of `ID[@TRIGGER]` specs plus a seed. For every JSON-RPC
//! request the transport receives (in arrival order, 1-based ordinal), the engine picks
//! the first spec whose trigger matches and returns a [`Decision`]. The transports
//! (`stdio.rs`, `http.rs`) carry out the decision on raw bytes; the helpers here do the
//! JSON-level rewrites both transports share. Every injection is recorded in the
//! injection log (JSON Lines, no timestamps, so the same seed and input give the
//! same bytes).

use std::fmt;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::ServerError;

/// Every fault of the reference taxonomy (`FAULT_TAXONOMY.json`, v0.2.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultId {
    ProtocolError,
    TransportDisconnect,
    Timeout,
    Cancellation,
    MalformedMessage,
    SchemaViolation,
    ExtensionMismatch,
    Duplicate,
    Reorder,
    PartialResponse,
    DelayedResponse,
    ProcessCrash,
    DependencyFailure,
    AuthorizationRejection,
    CacheStalePoisoned,
    ResourceExhaustion,
    FilesystemPublicationFailure,
    CleanupFailure,
}

impl FaultId {
    pub const ALL: [FaultId; 18] = [
        FaultId::ProtocolError,
        FaultId::TransportDisconnect,
        FaultId::Timeout,
        FaultId::Cancellation,
        FaultId::MalformedMessage,
        FaultId::SchemaViolation,
        FaultId::ExtensionMismatch,
        FaultId::Duplicate,
        FaultId::Reorder,
        FaultId::PartialResponse,
        FaultId::DelayedResponse,
        FaultId::ProcessCrash,
        FaultId::DependencyFailure,
        FaultId::AuthorizationRejection,
        FaultId::CacheStalePoisoned,
        FaultId::ResourceExhaustion,
        FaultId::FilesystemPublicationFailure,
        FaultId::CleanupFailure,
    ];

    /// The taxonomy id.
    pub fn as_str(self) -> &'static str {
        self.row().0
    }

    /// (id, injection boundary, taxonomy trigger, taxonomy trigger count), as in the taxonomy.
    fn row(self) -> (&'static str, &'static str, &'static str, u32) {
        match self {
            FaultId::ProtocolError => ("protocol-error", "MCP message parser", "invalid-method", 1),
            FaultId::TransportDisconnect => {
                ("transport-disconnect", "loopback transport", "request-2", 1)
            }
            FaultId::Timeout => ("timeout", "operation deadline", "delay-over-budget", 1),
            FaultId::Cancellation => (
                "cancellation",
                "operation controller",
                "cancel-at-half-budget",
                1,
            ),
            FaultId::MalformedMessage => (
                "malformed-message",
                "JSON decoder",
                "seeded-invalid-byte-sequence",
                4,
            ),
            FaultId::SchemaViolation => (
                "schema-violation",
                "schema validator",
                "missing-required-field",
                1,
            ),
            FaultId::ExtensionMismatch => (
                "extension-mismatch",
                "capability negotiation",
                "unadvertised-extension",
                1,
            ),
            FaultId::Duplicate => ("duplicate", "idempotency boundary", "same-key-twice", 1),
            FaultId::Reorder => (
                "reorder",
                "message scheduler",
                "response-before-request-ack",
                1,
            ),
            FaultId::PartialResponse => (
                "partial-response",
                "HTTP response body",
                "close-after-prefix",
                1,
            ),
            FaultId::DelayedResponse => {
                ("delayed-response", "dependency boundary", "delay-75ms", 2)
            }
            FaultId::ProcessCrash => ("process-crash", "fixture process", "forced-termination", 1),
            FaultId::DependencyFailure => (
                "dependency-failure",
                "synthetic downstream",
                "return-unavailable",
                2,
            ),
            FaultId::AuthorizationRejection => (
                "authorization-rejection",
                "loopback auth boundary",
                "wrong-audience",
                1,
            ),
            FaultId::CacheStalePoisoned => (
                "cache-stale-poisoned",
                "response cache",
                "version-key-mismatch",
                1,
            ),
            FaultId::ResourceExhaustion => (
                "resource-exhaustion",
                "bounded queue",
                "concurrency-over-limit",
                8,
            ),
            FaultId::FilesystemPublicationFailure => (
                "filesystem-publication-failure",
                "synthetic publisher",
                "disk-full-or-permission",
                2,
            ),
            FaultId::CleanupFailure => (
                "cleanup-failure",
                "cleanup verifier",
                "retained-handle-mutant",
                1,
            ),
        }
    }

    pub fn boundary(self) -> &'static str {
        self.row().1
    }

    pub fn taxonomy_trigger(self) -> &'static str {
        self.row().2
    }

    pub fn taxonomy_trigger_count(self) -> u32 {
        self.row().3
    }

    fn index(self) -> u64 {
        FaultId::ALL.iter().position(|f| *f == self).unwrap_or(0) as u64
    }
}

impl fmt::Display for FaultId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FaultId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        FaultId::ALL
            .iter()
            .copied()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| {
                let ids: Vec<&str> = FaultId::ALL.iter().map(|f| f.as_str()).collect();
                format!("unknown fault id `{s}` (known: {})", ids.join(", "))
            })
    }
}

/// When a fault fires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// Exactly the Nth request (1-based, arrival order, every JSON-RPC request counts,
    /// including `initialize` and `server/discover`).
    Request(u64),
    /// Every request with this JSON-RPC method.
    Method(String),
    /// Every `tools/call` of this tool.
    Tool(String),
    /// Every request.
    Always,
}

impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Trigger::Request(n) => write!(f, "request-{n}"),
            Trigger::Method(m) => write!(f, "method-{m}"),
            Trigger::Tool(t) => write!(f, "tool-{t}"),
            Trigger::Always => f.write_str("always"),
        }
    }
}

impl FromStr for Trigger {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "always" {
            return Ok(Trigger::Always);
        }
        if let Some(n) = s.strip_prefix("request-") {
            return match n.parse::<u64>() {
                Ok(n) if n >= 1 => Ok(Trigger::Request(n)),
                _ => Err(format!("trigger `{s}`: request-N needs N >= 1")),
            };
        }
        if let Some(m) = s.strip_prefix("method-").filter(|m| !m.is_empty()) {
            return Ok(Trigger::Method(m.to_owned()));
        }
        if let Some(t) = s.strip_prefix("tool-").filter(|t| !t.is_empty()) {
            return Ok(Trigger::Tool(t.to_owned()));
        }
        Err(format!(
            "unknown trigger `{s}` (use request-N, method-NAME, tool-NAME or always)"
        ))
    }
}

/// One `--fault ID[@TRIGGER]` argument. The default trigger is `request-2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultSpec {
    pub id: FaultId,
    pub trigger: Trigger,
}

impl FromStr for FaultSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (id, trigger) = match s.split_once('@') {
            Some((id, t)) => (id, t.parse()?),
            None => (s, Trigger::Request(2)),
        };
        Ok(FaultSpec {
            id: id.parse()?,
            trigger,
        })
    }
}

impl fmt::Display for FaultSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.id, self.trigger)
    }
}

/// What a request looks like to the trigger matcher.
#[derive(Debug, Clone)]
pub struct RequestInfo {
    pub id: Value,
    pub method: String,
    pub tool: Option<String>,
}

impl RequestInfo {
    /// `Some` for a JSON-RPC request (an object with a string `method` and an `id`).
    pub fn from_message(msg: &Value) -> Option<RequestInfo> {
        let obj = msg.as_object()?;
        let method = obj.get("method")?.as_str()?.to_owned();
        let id = obj.get("id")?.clone();
        let tool = if method == "tools/call" {
            msg.pointer("/params/name")
                .and_then(Value::as_str)
                .map(str::to_owned)
        } else {
            None
        };
        Some(RequestInfo { id, method, tool })
    }
}

/// A fault chosen for one request.
#[derive(Debug, Clone)]
pub struct Decision {
    pub fault: FaultId,
    pub ordinal: u64,
    /// Deterministic pseudo-random value derived from seed, fault and ordinal.
    pub rand: u64,
    pub request: RequestInfo,
}

/// splitmix64: tiny, well-known, deterministic.
pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Tunables of the injected effects.
#[derive(Debug, Clone)]
pub struct FaultParams {
    /// Operation budget: `cancellation` fires at half of it.
    pub budget_ms: u64,
    /// Delay of `delayed-response`.
    pub delay_ms: u64,
    /// Where `cleanup-failure` leaves its retained handle.
    pub residue_dir: PathBuf,
}

/// The fault plan plus the request counter and injection log.
#[derive(Debug)]
pub struct FaultEngine {
    specs: Vec<FaultSpec>,
    pub seed: u64,
    pub params: FaultParams,
    ordinal: AtomicU64,
    log: InjectionLog,
    transport: &'static str,
    /// Handles `cleanup-failure` leaves open.
    retained: Mutex<Vec<File>>,
}

impl FaultEngine {
    pub fn new(
        specs: Vec<FaultSpec>,
        seed: u64,
        params: FaultParams,
        log_path: Option<&Path>,
        transport: &'static str,
    ) -> Result<FaultEngine, ServerError> {
        let log = InjectionLog::create(log_path)?;
        let engine = FaultEngine {
            specs,
            seed,
            params,
            ordinal: AtomicU64::new(0),
            log,
            transport,
            retained: Mutex::new(Vec::new()),
        };
        engine.log.write(&json!({
            "schema": "mcpres.injection-log/1",
            "event": "start",
            "seed": seed,
            "transport": transport,
            "faults": engine.specs.iter().map(|s| json!({
                "fault": s.id.as_str(), "trigger": s.trigger.to_string(),
                "boundary": s.id.boundary(), "taxonomyTrigger": s.id.taxonomy_trigger(),
                "taxonomyTriggerCount": s.id.taxonomy_trigger_count()
            })).collect::<Vec<_>>(),
            "budgetMs": engine.params.budget_ms,
            "delayMs": engine.params.delay_ms,
        }));
        Ok(engine)
    }

    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Does the plan include `fault` (under any trigger)?
    pub fn plans(&self, fault: FaultId) -> bool {
        self.specs.iter().any(|s| s.id == fault)
    }

    /// Count a request and pick the first matching fault, if any.
    pub fn on_request(&self, request: RequestInfo) -> Option<Decision> {
        let ordinal = self.ordinal.fetch_add(1, Ordering::SeqCst) + 1;
        let spec = self.specs.iter().find(|s| match &s.trigger {
            Trigger::Request(n) => *n == ordinal,
            Trigger::Method(m) => *m == request.method,
            Trigger::Tool(t) => request.tool.as_deref() == Some(t.as_str()),
            Trigger::Always => true,
        })?;
        let rand = splitmix64(self.seed ^ splitmix64(ordinal ^ (spec.id.index() << 32)));
        Some(Decision {
            fault: spec.id,
            ordinal,
            rand,
            request,
        })
    }

    fn spec_for(&self, d: &Decision) -> String {
        self.specs
            .iter()
            .find(|s| s.id == d.fault)
            .map(|s| s.trigger.to_string())
            .unwrap_or_default()
    }

    /// Record one injection. Written (and flushed) before the effect happens.
    pub fn record(&self, d: &Decision, action: &str, detail: Value) {
        self.log.write(&json!({
            "schema": "mcpres.injection-log/1",
            "event": "injection",
            "fault": d.fault.as_str(),
            "boundary": d.fault.boundary(),
            "trigger": self.spec_for(d),
            "taxonomyTrigger": d.fault.taxonomy_trigger(),
            "seed": self.seed,
            "transport": self.transport,
            "request": {"ordinal": d.ordinal, "id": d.request.id, "method": d.request.method, "tool": d.request.tool},
            "action": action,
            "detail": detail,
        }));
    }

    /// Record a non-injection event (for example shutdown).
    pub fn record_event(&self, event: &str, detail: Value) {
        self.log.write(&json!({
            "schema": "mcpres.injection-log/1", "event": event, "detail": detail
        }));
    }

    /// `cleanup-failure`: create the retained handle (a marker file that is never removed).
    pub fn retain_handle(&self, d: &Decision) -> Result<PathBuf, std::io::Error> {
        let path = self.params.residue_dir.join(format!(
            "mcpres-retained-{}-{}.handle",
            self.seed, d.ordinal
        ));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        writeln!(
            f,
            "retained by mcpres serve (cleanup-failure mutant), seed {}, request {}",
            self.seed, d.ordinal
        )?;
        // The handle stays open for the life of the process, as a leaked
        // handle would: a cleanup verifier can see it in /proc/PID/fd.
        if let Ok(mut held) = self.retained.lock() {
            held.push(f);
        }
        Ok(path)
    }
}

/// JSON Lines injection log; exclusive-create, one flushed line per record.
#[derive(Debug)]
struct InjectionLog {
    file: Option<Mutex<File>>,
}

impl InjectionLog {
    fn create(path: Option<&Path>) -> Result<InjectionLog, ServerError> {
        let file = match path {
            None => None,
            Some(p) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(p)
                    .map_err(|source| ServerError::InjectionLog {
                        path: p.to_path_buf(),
                        source,
                    })?,
            )),
        };
        Ok(InjectionLog { file })
    }

    fn write(&self, record: &Value) {
        if let Some(file) = &self.file {
            let mut line = record.to_string();
            line.push('\n');
            if let Ok(mut f) = file.lock()
                && let Err(e) = f.write_all(line.as_bytes()).and_then(|_| f.flush())
            {
                eprintln!("mcpres serve: cannot write injection log: {e}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// JSON-level effects shared by both transports.
// ---------------------------------------------------------------------------

pub fn error_response(id: &Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut err = json!({"code": code, "message": message});
    if let Some(d) = data {
        err["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": err})
}

/// `protocol-error`: the parser rejects the request as an unknown method.
pub fn protocol_error_response(d: &Decision) -> Value {
    error_response(
        &d.request.id,
        -32601,
        "Method not found",
        Some(json!({"method": d.request.method})),
    )
}

/// `authorization-rejection` on stdio (HTTP answers 401 instead).
pub fn authorization_error_response(d: &Decision) -> Value {
    error_response(
        &d.request.id,
        -32000,
        "Unauthorized: token audience mismatch",
        Some(json!({"reason": "wrong-audience"})),
    )
}

/// `resource-exhaustion`: the bounded queue is full.
pub fn overload_response(id: &Value, limit: usize) -> Value {
    error_response(
        id,
        -32000,
        "Server overloaded: concurrency limit reached",
        Some(json!({"reason": "concurrency-over-limit", "limit": limit, "retryAfterMs": 100})),
    )
}

/// A request over `--rate-limit`, refused; `retry_after_ms` is when a place frees.
pub fn rate_limited_response(
    id: &Value,
    limit: usize,
    window_ms: u64,
    retry_after_ms: u64,
) -> Value {
    error_response(
        id,
        -32000,
        "Rate limited: too many requests in the window",
        Some(
            json!({"reason": "rate-over-limit", "limit": limit, "windowMs": window_ms,
                    "retryAfterMs": retry_after_ms}),
        ),
    )
}

/// `cancellation`: the operation controller cancelled the request at half budget.
pub fn cancelled_response(d: &Decision) -> Value {
    error_response(
        &d.request.id,
        -32800,
        "Request cancelled",
        Some(json!({"reason": "cancel-at-half-budget"})),
    )
}

/// `dependency-failure` and `filesystem-publication-failure`: the call never reaches the
/// subject; tools get an `isError` result, other methods a JSON-RPC internal error.
pub fn synthetic_failure_response(d: &Decision) -> Value {
    let (text, reason) = match d.fault {
        FaultId::FilesystemPublicationFailure => (
            "publication failed: no space left on device (synthetic publisher)",
            "disk-full-or-permission",
        ),
        _ => (
            "dependency unavailable: synthetic downstream returned 503",
            "return-unavailable",
        ),
    };
    if d.request.method == "tools/call" {
        json!({"jsonrpc": "2.0", "id": d.request.id,
               "result": {"content": [{"type": "text", "text": text}], "isError": true}})
    } else {
        error_response(&d.request.id, -32603, text, Some(json!({"reason": reason})))
    }
}

/// Required result member per method, removed by `schema-violation`.
fn required_field(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "protocolVersion",
        "server/discover" => "supportedVersions",
        "tools/list" => "tools",
        "tools/call" => "content",
        "resources/list" => "resources",
        "resources/templates/list" => "resourceTemplates",
        "resources/read" => "contents",
        "prompts/list" => "prompts",
        "prompts/get" => "messages",
        "completion/complete" => "completion",
        _ => return None,
    })
}

/// Apply a response-rewriting fault to one response message. Returns the frames to
/// emit in order (JSON values; the caller serialises and frames them), or `None` when
/// the fault does not rewrite responses.
pub fn rewrite_response(
    d: &Decision,
    response: &Value,
    other_revision: &str,
) -> Option<(Vec<Value>, Value)> {
    let mut resp = response.clone();
    match d.fault {
        FaultId::SchemaViolation => {
            let field = match resp.get_mut("result").and_then(Value::as_object_mut) {
                Some(result) => match required_field(&d.request.method) {
                    Some(f) if result.remove(f).is_some() => json!(f),
                    _ => {
                        resp["result"] = json!("invalid-result-shape");
                        json!(null)
                    }
                },
                None => {
                    // An error response: make the error object lose its required code.
                    if let Some(e) = resp.get_mut("error").and_then(Value::as_object_mut) {
                        e.remove("code");
                    }
                    json!("error.code")
                }
            };
            Some((vec![resp], json!({"removedField": field})))
        }
        FaultId::Duplicate => Some((vec![resp.clone(), resp], json!({"copies": 2}))),
        FaultId::Reorder => {
            let foreign = match &d.request.id {
                Value::Number(n) => n
                    .as_i64()
                    .map(|i| json!(i + 1_000_000))
                    .unwrap_or(json!("mcpres-reorder")),
                Value::String(s) => json!(format!("{s}-mcpres-reorder")),
                _ => json!("mcpres-reorder"),
            };
            let mut early = resp.clone();
            early["id"] = foreign.clone();
            Some((vec![early, resp], json!({"uncorrelatedId": foreign})))
        }
        FaultId::ExtensionMismatch => {
            let ext = json!({"jsonrpc": "2.0", "id": format!("mcpres-ext-{}", d.ordinal),
                             "method": "dev.mcpres.unadvertised/probe",
                             "params": {"extension": "dev.mcpres/unadvertised"}});
            Some((
                vec![ext, resp],
                json!({"method": "dev.mcpres.unadvertised/probe"}),
            ))
        }
        FaultId::CacheStalePoisoned => {
            if let Some(result) = resp.get_mut("result").and_then(Value::as_object_mut) {
                let meta = result.entry("_meta").or_insert_with(|| json!({}));
                if let Some(m) = meta.as_object_mut() {
                    m.insert(
                        "dev.mcpres/cacheKey".into(),
                        json!({"protocolVersion": other_revision, "serverVersion": "0.0.0-stale"}),
                    );
                    // The stale entry names the server version that produced it (the
                    // discovery, answered live, keeps the server's own stamp).
                    if d.request.method != "server/discover" {
                        m.insert(
                            crate::model::mcp::META_SERVER_INFO.into(),
                            json!({"name": "mcpres-reference-server", "version": "0.0.0-stale"}),
                        );
                    }
                }
                result.insert("ttlMs".into(), json!(86_400_000));
                result.insert("cacheScope".into(), json!("public"));
                if let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) {
                    tools.push(json!({"name": "stale_tool", "description": "Removed in a later server version.",
                                      "inputSchema": {"type": "object"}}));
                }
            }
            Some((
                vec![resp],
                json!({"staleKey": {"protocolVersion": other_revision, "serverVersion": "0.0.0-stale"}}),
            ))
        }
        _ => None,
    }
}

/// `malformed-message`: overwrite 2 bytes at a seeded position inside the serialised
/// frame (never the final newline) with an invalid UTF-8 sequence (0xC3 0x28).
pub fn corrupt_bytes(d: &Decision, frame: &[u8]) -> (Vec<u8>, usize) {
    let mut out = frame.to_vec();
    let body_len = out
        .len()
        .saturating_sub(usize::from(out.last() == Some(&b'\n')));
    if body_len < 2 {
        out.splice(0..0, [0xC3, 0x28]);
        return (out, 0);
    }
    let pos = (d.rand % (body_len as u64 - 1)) as usize;
    out[pos] = 0xC3;
    out[pos + 1] = 0x28;
    (out, pos)
}

/// `partial-response`: a seeded prefix length in [1, len - 1].
pub fn prefix_len(d: &Decision, len: usize) -> usize {
    if len <= 2 {
        return 1.min(len);
    }
    1 + (d.rand % (len as u64 - 2)) as usize
}
