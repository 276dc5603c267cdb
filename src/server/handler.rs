//! The typed MCP layer of the reference server: deterministic tools, resources,
//! prompts and completions, served through the official Rust SDK (`rmcp`).
//!
//! Every result is written as a JSON literal and converted into the SDK's model
//! types, so the bytes a client sees are exactly the ones documented in
//! `spec/reference-server.md`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[allow(deprecated)] // logging is part of the 2025-11-25 revision this server speaks
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
    CompleteResult, ErrorCode, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    LoggingMessageNotificationParam, PaginatedRequestParams, ProgressNotificationParam,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ServerConfig, SetLevelRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// Upper bound for the `delayMs` argument of `slow` and the step delay of `progress`.
pub const MAX_TOOL_DELAY_MS: u64 = 60_000;
/// Upper bound for the number of `progress` steps.
pub const MAX_PROGRESS_STEPS: u64 = 100;
/// Upper bound for distinct idempotency keys the counter remembers.
pub const MAX_COUNTER_KEYS: usize = 10_000;
/// Freshness hint (2026-07-28 `ttlMs`) for the static list results.
pub const LIST_TTL_MS: u64 = 60_000;

/// A 1x1 transparent PNG, base64 (the image fixture).
pub const PNG_1X1_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
/// A minimal 44-byte WAV header with no samples, base64 (the audio fixture).
pub const WAV_EMPTY_BASE64: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

/// State shared by every connection of one server process.
#[derive(Debug, Default)]
pub struct SharedState {
    counter: Mutex<CounterState>,
    /// `--state-dir`: where the `store` tool writes (the tool is listed only with it).
    state_dir: Option<std::path::PathBuf>,
    /// `--downstream-env`: the variable `fetch` reads its downstream's URL from (the
    /// tool is listed only with it).
    downstream_env: Option<String>,
}

impl SharedState {
    pub fn with_state_dir(state_dir: Option<std::path::PathBuf>) -> SharedState {
        SharedState {
            state_dir,
            ..SharedState::default()
        }
    }

    pub fn with_downstream_env(self, downstream_env: Option<String>) -> SharedState {
        SharedState {
            downstream_env,
            ..self
        }
    }
}

/// How long `fetch` waits for its downstream (to connect, and for each read).
const FETCH_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// `fetch`'s definition (listed with `--downstream-env`).
fn fetch_definition() -> Value {
    json!({"name": "fetch", "description": "POST `body` (a JSON text, `{}` by default) to the server's downstream, whose base URL is in the environment variable named by --downstream-env, joined with `path`; answers with the downstream's body. A downstream that fails (refused, no answer within 2 s, or a status other than 2xx) is answered with isError and the reason.",
     "inputSchema": {"type": "object", "properties": {
         "path": {"type": "string", "pattern": "^/[A-Za-z0-9._~/-]{0,200}$"},
         "body": {"type": "string", "maxLength": 65536}},
       "additionalProperties": false},
     "annotations": {"readOnlyHint": true, "openWorldHint": true}})
}

/// The largest write `store` makes, in bytes.
const MAX_STORE_BYTES: u64 = 16 << 20;

/// `store`'s definition (listed with `--state-dir`).
fn store_definition() -> Value {
    json!({"name": "store", "description": "Write `text`, or `bytes` bytes, to the file `key` in the server's state directory (written to a temporary file, synced, then renamed: a failed write leaves nothing); a write that fails is answered with isError and the system's reason.",
     "inputSchema": {"type": "object", "properties": {
         "key": {"type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$"},
         "text": {"type": "string"},
         "bytes": {"type": "integer", "minimum": 0, "maximum": MAX_STORE_BYTES}},
       "required": ["key"], "additionalProperties": false},
     "annotations": {"readOnlyHint": false, "idempotentHint": true, "destructiveHint": true}})
}

/// Write `data` to `dir/key` through a temporary file that is removed when anything fails.
fn store_file(dir: &std::path::Path, key: &str, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = dir.join(format!(".{key}.tmp-{}", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(data)?;
        f.sync_all()
    });
    let done = written.and_then(|()| std::fs::rename(&tmp, dir.join(key)));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

#[derive(Debug, Default)]
struct CounterState {
    total: i64,
    effects: u64,
    by_key: HashMap<String, Value>,
}

/// The reference server's typed handler.
#[derive(Debug, Clone)]
pub struct RefServer {
    shared: Arc<SharedState>,
    versions: Arc<Vec<ProtocolVersion>>,
}

impl RefServer {
    pub fn new(shared: Arc<SharedState>, versions: Vec<ProtocolVersion>) -> Self {
        Self {
            shared,
            versions: Arc::new(versions),
        }
    }
}

fn from_json<T: DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|e| McpError::internal_error(e.to_string(), None))
}

/// Mark a result `resultType: "complete"` (2026-07-28); rmcp strips it for legacy peers.
fn complete<T: DeserializeOwned>(mut value: Value) -> Result<T, McpError> {
    if let Some(obj) = value.as_object_mut() {
        obj.insert("resultType".into(), json!("complete"));
    }
    from_json(value)
}

fn invalid_params(message: impl Into<String>) -> McpError {
    McpError::invalid_params(message.into(), None)
}

fn arg_str<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, McpError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params(format!("argument `{key}` must be a string")))
}

/// A safe integer (|n| <= 2^53 - 1) argument.
fn arg_int(args: &Map<String, Value>, key: &str) -> Result<Option<i64>, McpError> {
    const SAFE: i64 = 9_007_199_254_740_991;
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_i64() {
            Some(n) if (-SAFE..=SAFE).contains(&n) => Ok(Some(n)),
            _ => Err(invalid_params(format!(
                "argument `{key}` must be a safe integer"
            ))),
        },
    }
}

fn arg_bounded(
    args: &Map<String, Value>,
    key: &str,
    default: u64,
    max: u64,
) -> Result<u64, McpError> {
    arg_range(args, key, default, 0, max)
}

/// An optional integer argument within `min..=max` (the tool's declared
/// `minimum` and `maximum`), `default` when absent.
fn arg_range(
    args: &Map<String, Value>,
    key: &str,
    default: u64,
    min: u64,
    max: u64,
) -> Result<u64, McpError> {
    match arg_int(args, key)? {
        None => Ok(default),
        Some(n) if n >= 0 && (n as u64) >= min && (n as u64) <= max => Ok(n as u64),
        Some(_) => Err(invalid_params(format!(
            "argument `{key}` must be between {min} and {max}"
        ))),
    }
}

/// Did the client declare capability `name` (`sampling`, `elicitation`)? At
/// 2026-07-28 a request's `_meta` carries the client's capabilities; before,
/// `initialize` did. A server sends only requests the client negotiated.
fn client_declares(context: &RequestContext<RoleServer>, name: &str) -> bool {
    if let Ok(Value::Object(meta)) = serde_json::to_value(&context.meta)
        && let Some(caps) = meta
            .iter()
            .find(|(k, _)| k.ends_with("clientCapabilities"))
            .map(|(_, v)| v)
    {
        return caps.get(name).is_some_and(|c| !c.is_null());
    }
    context
        .peer
        .peer_info()
        .and_then(|p| serde_json::to_value(&p.capabilities).ok())
        .is_some_and(|c| c.get(name).is_some_and(|c| !c.is_null()))
}

/// The server's stamp (`_meta["io.modelcontextprotocol/serverInfo"]`) on a result
/// `value` when the request was made at 2026-07-28 (its `_meta` names the protocol
/// version), which asks servers to name themselves on every response: a client or a
/// cache can then key what it keeps by the server's version. Before, results carry no
/// stamp (the bytes of a 2025-11-25 conversation are unchanged).
fn stamped(context: &RequestContext<RoleServer>, mut value: Value) -> Value {
    let modern = serde_json::to_value(&context.meta)
        .ok()
        .and_then(|m| m.get(crate::model::mcp::META_PROTOCOL_VERSION).cloned())
        .is_some();
    if modern && let Some(obj) = value.as_object_mut() {
        let meta = obj.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(
                crate::model::mcp::META_SERVER_INFO.into(),
                json!({"name": "mcpres-reference-server", "version": env!("CARGO_PKG_VERSION")}),
            );
        }
    }
    value
}

/// A tool execution error (`isError`): the client did not declare `name`,
/// so the request the tool would send is not sent.
fn undeclared(name: &str, method: &str) -> Value {
    json!({
        "content": [{"type": "text", "text": format!("the client did not declare the `{name}` capability, so {method} is not sent")}],
        "isError": true
    })
}

/// How long the server waits for the client's answer to its own request.
const CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A paginated list request with a cursor: this server never hands one out,
/// so every cursor is invalid (-32602).
fn no_cursor(request: &Option<PaginatedRequestParams>) -> Result<(), McpError> {
    let cursor = request
        .as_ref()
        .and_then(|r| serde_json::to_value(r).ok())
        .and_then(|v| v.get("cursor").cloned())
        .filter(|c| !c.is_null());
    match cursor {
        Some(_) => Err(invalid_params(
            "invalid cursor: this server returns every item in one page and never issues a cursor",
        )),
        None => Ok(()),
    }
}

/// Arguments a tool's `inputSchema` does not declare: every schema here says
/// `additionalProperties: false`, and inputs are validated (-32602).
fn undeclared_arguments(
    tools: &Value,
    tool: &str,
    args: &Map<String, Value>,
) -> Result<(), McpError> {
    let Some(props) = tools
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == tool)
        .and_then(|t| t.pointer("/inputSchema/properties"))
        .and_then(Value::as_object)
    else {
        return Ok(());
    };
    match args.keys().find(|k| !props.contains_key(*k)) {
        Some(k) => Err(invalid_params(format!(
            "tool `{tool}` takes no argument `{k}` (its inputSchema allows no additional properties)"
        ))),
        None => Ok(()),
    }
}

fn text_result(text: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": text.into()}]})
}

fn cancelled() -> McpError {
    McpError::new(ErrorCode(-32800), "Request cancelled", None)
}

/// Send a server-to-client request (sampling, elicitation) with raw JSON params and
/// return the client's result as JSON.
async fn client_request(
    context: &RequestContext<RoleServer>,
    method: &str,
    params: Value,
) -> Result<Value, McpError> {
    let request = rmcp::model::ServerRequest::CustomRequest(rmcp::model::CustomRequest::new(
        method,
        Some(params),
    ));
    let result = tokio::time::timeout(CLIENT_REQUEST_TIMEOUT, context.peer.send_request(request))
        .await
        .map_err(|_| {
            McpError::internal_error(
                format!(
                    "{method}: no answer from the client within {} s",
                    CLIENT_REQUEST_TIMEOUT.as_secs()
                ),
                None,
            )
        })?
        .map_err(|e| McpError::internal_error(format!("{method} failed: {e}"), None))?;
    serde_json::to_value(&result).map_err(|e| McpError::internal_error(e.to_string(), None))
}

/// The tool catalogue, in listing order.
pub fn tool_definitions() -> Value {
    let obj = |props: Value, required: Value| json!({"type": "object", "properties": props, "required": required, "additionalProperties": false});
    let empty = json!({"type": "object", "properties": {}, "additionalProperties": false});
    json!([
        {"name": "echo", "description": "Return the given text unchanged.",
         "inputSchema": obj(json!({"text": {"type": "string"}}), json!(["text"])),
         "annotations": {"readOnlyHint": true, "idempotentHint": true}},
        {"name": "add", "description": "Add two safe integers.",
         "inputSchema": obj(json!({"a": {"type": "integer"}, "b": {"type": "integer"}}), json!(["a", "b"])),
         "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
         "annotations": {"readOnlyHint": true, "idempotentHint": true}},
        {"name": "slow", "description": "Wait delayMs milliseconds (0..=60000, default 1000), then answer; honours cancellation.",
         "inputSchema": obj(json!({"delayMs": {"type": "integer", "minimum": 0, "maximum": MAX_TOOL_DELAY_MS}}), json!([])),
         "annotations": {"readOnlyHint": true}},
        {"name": "counter", "description": "Add `amount` (default 1) to a process-wide counter once per idempotency key; a repeated key replays the original result without a second effect.",
         "inputSchema": obj(json!({"key": {"type": "string", "minLength": 1}, "amount": {"type": "integer"}}), json!(["key"])),
         "outputSchema": {"type": "object", "properties": {"key": {"type": "string"}, "total": {"type": "integer"}}, "required": ["key", "total"]},
         "annotations": {"readOnlyHint": false, "idempotentHint": true, "destructiveHint": false}},
        {"name": "progress", "description": "Run `steps` steps (1..=100, default 3) of stepDelayMs (default 50) each, reporting progress when a progressToken is given; honours cancellation.",
         "inputSchema": obj(json!({"steps": {"type": "integer", "minimum": 1, "maximum": MAX_PROGRESS_STEPS}, "stepDelayMs": {"type": "integer", "minimum": 0, "maximum": MAX_TOOL_DELAY_MS}}), json!([])),
         "annotations": {"readOnlyHint": true}},
        {"name": "test_simple_text", "description": "Conformance fixture: one text block.", "inputSchema": empty},
        {"name": "test_image_content", "description": "Conformance fixture: one image block.", "inputSchema": empty},
        {"name": "test_audio_content", "description": "Conformance fixture: one audio block.", "inputSchema": empty},
        {"name": "test_embedded_resource", "description": "Conformance fixture: one embedded resource.", "inputSchema": empty},
        {"name": "test_multiple_content_types", "description": "Conformance fixture: text, image and embedded resource.", "inputSchema": empty},
        {"name": "test_tool_with_logging", "description": "Conformance fixture: emits three log messages.", "inputSchema": empty},
        {"name": "test_tool_with_progress", "description": "Conformance fixture: reports progress 0, 50, 100 of 100.", "inputSchema": empty},
        {"name": "test_error_handling", "description": "Conformance fixture: always returns a tool error.", "inputSchema": empty},
        {"name": "test_sampling", "description": "Conformance fixture: asks the client to sample (sampling/createMessage).",
         "inputSchema": obj(json!({"prompt": {"type": "string"}}), json!(["prompt"]))},
        {"name": "test_elicitation", "description": "Conformance fixture: asks the client for input (elicitation/create).",
         "inputSchema": obj(json!({"message": {"type": "string"}}), json!(["message"]))},
        {"name": "test_elicitation_sep1034_defaults", "description": "Conformance fixture: elicitation with defaults (SEP-1034).", "inputSchema": empty},
        {"name": "test_elicitation_sep1330_enums", "description": "Conformance fixture: elicitation with enum schemas (SEP-1330).", "inputSchema": empty}
    ])
}

fn static_resources() -> Value {
    json!([
        {"uri": "mcpres://static/hello", "name": "hello", "title": "Hello", "mimeType": "text/plain",
         "description": "A fixed text resource."},
        {"uri": "mcpres://state/counter", "name": "counter-state", "mimeType": "application/json",
         "description": "The counter tool's total and number of applied effects."},
        {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain",
         "description": "Conformance fixture: static text."},
        {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png",
         "description": "Conformance fixture: static binary."},
        {"uri": "test://watched-resource", "name": "watched-resource", "mimeType": "text/plain",
         "description": "Conformance fixture: a resource to subscribe to (it never changes, so no update is ever sent)."}
    ])
}

fn resource_templates() -> Value {
    json!([
        {"uriTemplate": "test://template/{id}/data", "name": "template-data", "mimeType": "application/json",
         "description": "Conformance fixture: data for an id."}
    ])
}

fn prompt_definitions() -> Value {
    json!([
        {"name": "greeting", "description": "Greet someone by name.",
         "arguments": [{"name": "name", "description": "Who to greet", "required": true}]},
        {"name": "test_simple_prompt", "description": "Conformance fixture: a fixed prompt."},
        {"name": "test_prompt_with_arguments", "description": "Conformance fixture: a prompt with two arguments.",
         "arguments": [{"name": "arg1", "description": "First argument", "required": true},
                       {"name": "arg2", "description": "Second argument", "required": true}]},
        {"name": "test_prompt_with_embedded_resource", "description": "Conformance fixture: a prompt embedding a resource.",
         "arguments": [{"name": "resourceUri", "description": "URI of the resource to embed", "required": true}]},
        {"name": "test_prompt_with_image", "description": "Conformance fixture: a prompt with an image."}
    ])
}

/// Completion values for `greeting`'s `name` argument and the template `id`.
const NAMES: [&str; 4] = ["alice", "bob", "carol", "dave"];
const IDS: [&str; 3] = ["1", "2", "3"];

impl RefServer {
    /// The tools listed: the catalogue, `store` with `--state-dir`, and `fetch` with
    /// `--downstream-env`.
    fn listed_tools(&self) -> Value {
        let mut tools = tool_definitions();
        if let Some(list) = tools.as_array_mut() {
            if self.shared.state_dir.is_some() {
                list.push(store_definition());
            }
            if self.shared.downstream_env.is_some() {
                list.push(fetch_definition());
            }
        }
        tools
    }

    async fn run_tool(
        &self,
        name: &str,
        args: &Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, McpError> {
        match name {
            "echo" => Ok(text_result(arg_str(args, "text")?)),
            "store" if self.shared.state_dir.is_some() => {
                let dir = self.shared.state_dir.clone().unwrap_or_default();
                let key = arg_str(args, "key")?.to_string();
                if key.is_empty()
                    || key.len() > 64
                    || !key
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
                    || key.starts_with('.')
                {
                    return Err(invalid_params(
                        "argument `key` must be 1 to 64 of A-Z a-z 0-9 . _ - (not starting with .)",
                    ));
                }
                let data = match (args.get("text"), args.get("bytes")) {
                    (Some(_), Some(_)) => {
                        return Err(invalid_params("give `text` or `bytes`, not both"));
                    }
                    (Some(_), None) => arg_str(args, "text")?.as_bytes().to_vec(),
                    _ => vec![b'x'; arg_bounded(args, "bytes", 0, MAX_STORE_BYTES)? as usize],
                };
                let n = data.len();
                let written = tokio::task::spawn_blocking({
                    let key = key.clone();
                    move || store_file(&dir, &key, &data)
                })
                .await
                .map_err(|e| McpError::internal_error(format!("store task failed: {e}"), None))?;
                Ok(match written {
                    Ok(()) => text_result(format!("stored {n} bytes as {key}")),
                    Err(e) => json!({
                        "content": [{"type": "text", "text": format!("could not store {key}: {e}")}],
                        "isError": true
                    }),
                })
            }
            "fetch" if self.shared.downstream_env.is_some() => {
                let var = self.shared.downstream_env.clone().unwrap_or_default();
                let path = match args.get("path") {
                    None => "/".to_string(),
                    Some(_) => arg_str(args, "path")?.to_string(),
                };
                if !path.starts_with('/')
                    || path.len() > 201
                    || !path
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"._~/-".contains(&b))
                {
                    return Err(invalid_params(
                        "argument `path` must start with / and hold only A-Z a-z 0-9 . _ ~ / -",
                    ));
                }
                let body = match args.get("body") {
                    None => "{}".to_string(),
                    Some(_) => arg_str(args, "body")?.to_string(),
                };
                if body.len() > 65536 {
                    return Err(invalid_params("argument `body` is at most 65536 bytes"));
                }
                let Ok(base) = std::env::var(&var) else {
                    return Ok(json!({
                        "content": [{"type": "text", "text": format!("no downstream: ${var} is not set")}],
                        "isError": true
                    }));
                };
                let url = format!("{}{}", base.trim_end_matches('/'), path);
                let fetched = tokio::task::spawn_blocking(move || {
                    super::downstream::post(&url, &body, FETCH_WAIT)
                })
                .await
                .map_err(|e| McpError::internal_error(format!("fetch task failed: {e}"), None))?;
                Ok(match fetched {
                    super::downstream::Fetched::Ok(_, text) => text_result(text),
                    super::downstream::Fetched::Failed(why) => json!({
                        "content": [{"type": "text", "text": format!("downstream failed: {why}")}],
                        "isError": true
                    }),
                })
            }
            "add" => {
                let a = arg_int(args, "a")?
                    .ok_or_else(|| invalid_params("argument `a` is required"))?;
                let b = arg_int(args, "b")?
                    .ok_or_else(|| invalid_params("argument `b` is required"))?;
                match a
                    .checked_add(b)
                    .filter(|s| s.abs() <= 9_007_199_254_740_991)
                {
                    Some(sum) => Ok(json!({
                        "content": [{"type": "text", "text": sum.to_string()}],
                        "structuredContent": {"sum": sum}
                    })),
                    None => Ok(json!({
                        "content": [{"type": "text", "text": "sum is not a safe integer"}],
                        "isError": true
                    })),
                }
            }
            "slow" => {
                let ms = arg_bounded(args, "delayMs", 1000, MAX_TOOL_DELAY_MS)?;
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => Ok(text_result(format!("slept {ms} ms"))),
                    _ = context.ct.cancelled() => Err(cancelled()),
                }
            }
            "counter" => {
                let key = arg_str(args, "key")?;
                if key.is_empty() {
                    return Err(invalid_params("argument `key` must not be empty"));
                }
                let amount = arg_int(args, "amount")?.unwrap_or(1);
                let mut st = self
                    .shared
                    .counter
                    .lock()
                    .map_err(|_| McpError::internal_error("counter state poisoned", None))?;
                if let Some(prior) = st.by_key.get(key) {
                    return Ok(prior.clone());
                }
                if st.by_key.len() >= MAX_COUNTER_KEYS {
                    return Ok(json!({
                        "content": [{"type": "text", "text": "idempotency key store is full"}],
                        "isError": true
                    }));
                }
                let total = st
                    .total
                    .checked_add(amount)
                    .filter(|t| t.abs() <= 9_007_199_254_740_991)
                    .ok_or_else(|| invalid_params("counter would leave the safe integer range"))?;
                st.total = total;
                st.effects += 1;
                let result = json!({
                    "content": [{"type": "text", "text": format!("key={key} total={total}")}],
                    "structuredContent": {"key": key, "total": total}
                });
                st.by_key.insert(key.to_owned(), result.clone());
                Ok(result)
            }
            "progress" => {
                let steps = arg_range(args, "steps", 3, 1, MAX_PROGRESS_STEPS)?;
                let delay = arg_bounded(args, "stepDelayMs", 50, MAX_TOOL_DELAY_MS)?;
                let token = context.meta.get_progress_token();
                for step in 1..=steps {
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(delay)) => {}
                        _ = context.ct.cancelled() => return Err(cancelled()),
                    }
                    if let Some(token) = &token {
                        let p: ProgressNotificationParam = from_json(json!({
                            "progressToken": token, "progress": step, "total": steps,
                            "message": format!("step {step}/{steps}")
                        }))?;
                        let _ = context.peer.notify_progress(p).await;
                    }
                }
                Ok(text_result(format!("completed {steps} steps")))
            }
            "test_simple_text" => Ok(text_result("This is a simple text response for testing.")),
            "test_image_content" => Ok(json!({"content": [
                {"type": "image", "data": PNG_1X1_BASE64, "mimeType": "image/png"}]})),
            "test_audio_content" => Ok(json!({"content": [
                {"type": "audio", "data": WAV_EMPTY_BASE64, "mimeType": "audio/wav"}]})),
            "test_embedded_resource" => Ok(json!({"content": [
                {"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain",
                 "text": "This is an embedded resource content."}}]})),
            "test_multiple_content_types" => Ok(json!({"content": [
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG_1X1_BASE64, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json",
                 "text": "{\"test\":\"data\",\"value\":123}"}}]})),
            #[allow(deprecated)] // logging exists in 2025-11-25
            "test_tool_with_logging" => {
                for (i, text) in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                .iter()
                .enumerate()
                {
                    let p: LoggingMessageNotificationParam =
                        from_json(json!({"level": "info", "logger": "mcpres", "data": text}))?;
                    let _ = context.peer.notify_logging_message(p).await;
                    if i < 2 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                Ok(text_result("Tool with logging executed successfully"))
            }
            "test_tool_with_progress" => {
                let token = context.meta.get_progress_token();
                for p in [0, 50, 100] {
                    if let Some(token) = &token {
                        let n: ProgressNotificationParam =
                            from_json(json!({"progressToken": token, "progress": p, "total": 100,
                                   "message": format!("Completed step {p} of 100")}))?;
                        let _ = context.peer.notify_progress(n).await;
                    }
                    if p < 100 {
                        tokio::select! {
                            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                            _ = context.ct.cancelled() => return Err(cancelled()),
                        }
                    }
                }
                Ok(text_result("Tool with progress executed successfully"))
            }
            "test_error_handling" => Ok(json!({
                "content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}],
                "isError": true
            })),
            "test_sampling" if !client_declares(context, "sampling") => {
                Ok(undeclared("sampling", "sampling/createMessage"))
            }
            "test_elicitation"
            | "test_elicitation_sep1034_defaults"
            | "test_elicitation_sep1330_enums"
                if !client_declares(context, "elicitation") =>
            {
                Ok(undeclared("elicitation", "elicitation/create"))
            }
            "test_sampling" => {
                let prompt = arg_str(args, "prompt")?;
                let r = client_request(
                    context,
                    "sampling/createMessage",
                    json!({
                        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                        "maxTokens": 100
                    }),
                )
                .await?;
                let text = r
                    .pointer("/content/text")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                Ok(text_result(format!("LLM response: {text}")))
            }
            "test_elicitation" => {
                let message = arg_str(args, "message")?;
                let r = client_request(
                    context,
                    "elicitation/create",
                    json!({
                        "message": message,
                        "requestedSchema": {"type": "object", "properties": {
                            "username": {"type": "string", "description": "User's response"},
                            "email": {"type": "string", "description": "User's email address"}
                        }, "required": ["username", "email"]}
                    }),
                )
                .await?;
                Ok(text_result(format!(
                    "User response: action={}, content={}",
                    r["action"].as_str().unwrap_or(""),
                    r["content"]
                )))
            }
            "test_elicitation_sep1034_defaults" => {
                let r = client_request(context, "elicitation/create", json!({
                    "message": "Please review and update the form fields with defaults",
                    "requestedSchema": {"type": "object", "properties": {
                        "name": {"type": "string", "description": "User name", "default": "John Doe"},
                        "age": {"type": "integer", "description": "User age", "default": 30},
                        "score": {"type": "number", "description": "User score", "default": 95.5},
                        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "description": "Verification status", "default": true}
                    }, "required": []}
                }))
                .await?;
                Ok(text_result(format!(
                    "Elicitation completed: action={}, content={}",
                    r["action"].as_str().unwrap_or(""),
                    r["content"]
                )))
            }
            "test_elicitation_sep1330_enums" => {
                let r = client_request(context, "elicitation/create", json!({
                    "message": "Please select options from the enum fields",
                    "requestedSchema": {"type": "object", "properties": {
                        "untitledSingle": {"type": "string", "description": "Untitled single-select", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string", "description": "Titled single-select", "oneOf": [
                            {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"}]},
                        "legacyEnum": {"type": "string", "description": "Legacy titled enum", "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "description": "Untitled multi-select",
                            "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array", "description": "Titled multi-select", "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"}]}}
                    }, "required": []}
                }))
                .await?;
                Ok(text_result(format!(
                    "Elicitation completed: action={}, content={}",
                    r["action"].as_str().unwrap_or(""),
                    r["content"]
                )))
            }
            other => Err(invalid_params(format!("unknown tool: {other}"))),
        }
    }

    fn counter_state(&self) -> Result<Value, McpError> {
        let st = self
            .shared
            .counter
            .lock()
            .map_err(|_| McpError::internal_error("counter state poisoned", None))?;
        Ok(json!({"total": st.total, "effects": st.effects, "keys": st.by_key.len()}))
    }
}

impl ServerHandler for RefServer {
    fn get_info(&self) -> ServerConfig {
        let info = json!({
            "protocolVersion": self.versions.first().map(|v| v.to_string()).unwrap_or_else(|| "2025-11-25".into()),
            "capabilities": {
                "tools": {"listChanged": false},
                "resources": {"listChanged": false, "subscribe": true},
                "prompts": {"listChanged": false},
                "completions": {},
                "logging": {}
            },
            "serverInfo": {"name": "mcpres-reference-server", "version": env!("CARGO_PKG_VERSION")},
            "instructions": "mcpres reference server: deterministic tools, resources and prompts for MCP-RES evidence."
        });
        // The literal above is fixed and valid; a failure here is a programming error
        // caught by every test, so fall back to the SDK default rather than panic.
        serde_json::from_value(info).unwrap_or_default()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Owned(self.versions.as_ref().clone())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        no_cursor(&request)?;
        let r: ListToolsResult =
            complete(stamped(&context, json!({"tools": self.listed_tools()})))?;
        Ok(r.with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        undeclared_arguments(&self.listed_tools(), &request.name, &args)?;
        let value = self.run_tool(&request.name, &args, &context).await?;
        let result: CallToolResult = complete(value)?;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        no_cursor(&request)?;
        let r: ListResourcesResult =
            complete(stamped(&context, json!({"resources": static_resources()})))?;
        Ok(r.with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        no_cursor(&request)?;
        let r: ListResourceTemplatesResult = complete(stamped(
            &context,
            json!({"resourceTemplates": resource_templates()}),
        ))?;
        Ok(r.with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.as_str();
        let (contents, ttl, scope) = match uri {
            "mcpres://static/hello" => (
                json!([{"uri": uri, "mimeType": "text/plain", "text": "hello from mcpres"}]),
                LIST_TTL_MS,
                CacheScope::Public,
            ),
            "mcpres://state/counter" => (
                json!([{"uri": uri, "mimeType": "application/json",
                        "text": self.counter_state()?.to_string()}]),
                0,
                CacheScope::Private,
            ),
            "test://static-text" => (
                json!([{"uri": uri, "mimeType": "text/plain",
                        "text": "This is the content of the static text resource."}]),
                LIST_TTL_MS,
                CacheScope::Public,
            ),
            "test://static-binary" => (
                json!([{"uri": uri, "mimeType": "image/png", "blob": PNG_1X1_BASE64}]),
                LIST_TTL_MS,
                CacheScope::Public,
            ),
            "test://watched-resource" => (
                json!([{"uri": uri, "mimeType": "text/plain",
                        "text": "This resource can be subscribed to; it never changes."}]),
                LIST_TTL_MS,
                CacheScope::Public,
            ),
            _ => match template_id(uri) {
                Some(id) => (
                    json!([{"uri": uri, "mimeType": "application/json",
                            "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()}]),
                    LIST_TTL_MS,
                    CacheScope::Public,
                ),
                None => {
                    return Err(McpError::resource_not_found(
                        format!("Resource not found: {uri}"),
                        Some(json!({"uri": uri})),
                    ));
                }
            },
        };
        let r: ReadResourceResult = complete(stamped(&context, json!({ "contents": contents })))?;
        Ok(r.with_ttl_ms(ttl).with_cache_scope(scope).into())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        no_cursor(&request)?;
        let r: ListPromptsResult =
            complete(stamped(&context, json!({"prompts": prompt_definitions()})))?;
        Ok(r.with_ttl_ms(LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        let get = |k: &str| -> Result<String, McpError> {
            args.get(k)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| invalid_params(format!("prompt argument `{k}` is required")))
        };
        let user_text = |t: String| json!({"role": "user", "content": {"type": "text", "text": t}});
        let value = match request.name.as_str() {
            "greeting" => json!({"description": "Greet someone by name.",
                                 "messages": [user_text(format!("Hello, {}!", get("name")?))]}),
            "test_simple_prompt" => {
                json!({"messages": [user_text("This is a simple prompt for testing.".into())]})
            }
            "test_prompt_with_arguments" => json!({"messages": [user_text(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'", get("arg1")?, get("arg2")?))]}),
            "test_prompt_with_embedded_resource" => {
                let uri = get("resourceUri")?;
                json!({"messages": [
                    {"role": "user", "content": {"type": "resource", "resource": {"uri": uri, "mimeType": "text/plain",
                      "text": "Embedded resource content for testing."}}},
                    user_text("Please process the embedded resource above.".into())
                ]})
            }
            "test_prompt_with_image" => json!({"messages": [
                {"role": "user", "content": {"type": "image", "data": PNG_1X1_BASE64, "mimeType": "image/png"}},
                user_text("Please analyze the image above.".into())
            ]}),
            other => return Err(invalid_params(format!("unknown prompt: {other}"))),
        };
        let r: GetPromptResult = complete(value)?;
        Ok(r.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let req = serde_json::to_value(&request)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let arg = req
            .pointer("/argument/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let prefix = req
            .pointer("/argument/value")
            .and_then(Value::as_str)
            .unwrap_or("");
        let (prompt, uri) = (
            req.pointer("/ref/name").and_then(Value::as_str),
            req.pointer("/ref/uri").and_then(Value::as_str),
        );
        // A reference to a prompt or template this server does not have is
        // invalid params, not an empty completion.
        if let Some(name) = prompt
            && !prompt_definitions()
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["name"] == name)
        {
            return Err(invalid_params(format!("unknown prompt: {name}")));
        }
        if let Some(uri) = uri
            && !resource_templates()
                .as_array()
                .into_iter()
                .flatten()
                .any(|t| t["uriTemplate"] == uri)
            && !static_resources()
                .as_array()
                .into_iter()
                .flatten()
                .any(|r| r["uri"] == uri)
        {
            return Err(invalid_params(format!("unknown resource: {uri}")));
        }
        let candidates: &[&str] = match (prompt, uri, arg) {
            (Some("greeting"), _, "name") => &NAMES,
            (_, Some("test://template/{id}/data"), "id") => &IDS,
            _ => &[],
        };
        let values: Vec<&str> = candidates
            .iter()
            .copied()
            .filter(|c| c.starts_with(prefix))
            .collect();
        complete(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }

    #[allow(deprecated)] // resources/subscribe exists in 2025-11-25
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        // A subscription to a resource this server does not have could
        // never fire: refused as `resources/read` refuses it (-32002). The
        // resources never change, so a subscription never fires either.
        known_resource(&request.uri)
    }

    #[allow(deprecated)] // resources/unsubscribe exists in 2025-11-25
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        known_resource(&request.uri)
    }

    #[allow(deprecated)] // logging/setLevel exists in 2025-11-25
    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }
}

/// The id of a `test://template/{id}/data` URI.
fn template_id(uri: &str) -> Option<&str> {
    uri.strip_prefix("test://template/")
        .and_then(|rest| rest.strip_suffix("/data"))
        .filter(|id| !id.is_empty() && !id.contains('/'))
}

/// `Ok` for a resource `resources/read` serves, else the same -32002
/// (resource not found) it answers.
fn known_resource(uri: &str) -> Result<(), McpError> {
    let listed = static_resources()
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| r["uri"] == uri);
    if listed || template_id(uri).is_some() {
        Ok(())
    } else {
        Err(McpError::resource_not_found(
            format!("Resource not found: {uri}"),
            Some(json!({"uri": uri})),
        ))
    }
}
