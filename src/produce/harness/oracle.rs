//! The harness's own oracle: what it concludes about one exchange from the
//! recorded frames and HTTP exchanges (`judge`, `judge_refusal`), the checks
//! of each result's members, and the digest of a control's answers. It reads
//! recorded bytes only; driving a session is `scenario.rs`'s business.

use serde_json::{Value, json};

use super::http::{HttpExchange, Posted};
use super::record::Frame;
use super::vocab::{ACCEPT, COMPLETED, META_SERVER_INFO, Mutant, REJECT, Revision};
use crate::json::canonical;
use crate::produce::drive::http::media_type;

/// What an oracle concluded about one exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub verdict: &'static str,
    pub stop_reason: &'static str,
    pub detail: String,
}

impl Judgement {
    pub(crate) fn reject(stop_reason: &'static str, detail: impl Into<String>) -> Self {
        Judgement {
            verdict: REJECT,
            stop_reason,
            detail: detail.into(),
        }
    }
    pub fn accepted(&self) -> bool {
        self.verdict == ACCEPT
    }
    pub fn to_json(&self) -> Value {
        json!({"verdict": self.verdict, "stopReason": self.stop_reason, "detail": self.detail})
    }
}

/// Stop reason of a refusal a negative control expected: the subject answered
/// a request it cannot honour with a JSON-RPC error or a tool error.
pub const REQUEST_REFUSED: &str = "REQUEST_REFUSED";

/// What the subject answered to request `id` among `frames`, reduced to what
/// must be the same in every trial: the result without `_meta`, or the error
/// code alone (error messages vary between versions of an SDK). `None` when
/// no frame answers `id`.
pub fn answer_of(frames: &[Frame], id: i64) -> Option<Value> {
    frames.iter().rev().find_map(|f| {
        let m = serde_json::from_slice::<Value>(&f.bytes).ok()?;
        if m.get("method").is_some() || m.get("id") != Some(&json!(id)) {
            return None;
        }
        if let Some(error) = m.get("error") {
            return Some(
                json!({"error": {"code": error.get("code").cloned().unwrap_or(Value::Null)}}),
            );
        }
        let mut result = m.get("result")?.clone();
        if let Some(o) = result.as_object_mut() {
            o.remove("_meta");
        }
        Some(json!({"result": result}))
    })
}

/// Digest of the answers of a control, with the run's random values (probe
/// texts, random names) replaced by placeholders, so that equal behaviour in
/// two trials gives equal digests and different answers give different ones.
pub fn answers_digest(answers: &[Option<Value>], volatile: &[String]) -> String {
    let mut text = serde_json::to_string(answers).unwrap_or_default();
    for (i, v) in volatile.iter().enumerate() {
        if !v.is_empty() {
            text = text.replace(v.as_str(), &format!("<volatile-{i}>"));
        }
    }
    canonical::sha256_hex(text.as_bytes())
}

/// Judge the answer to a request the subject must refuse (a negative control
/// whose fault is the request itself). The real oracle judges the exchange as
/// if success were expected (`check` is the check of a successful answer); a
/// JSON-RPC error or a tool error is then the refusal the control expects:
/// REJECT / `REQUEST_REFUSED`. A subject that accepts the request passes the
/// oracle, and the control fails. The `AcceptRefusals` mutant takes a refusal
/// for success, so it is killed exactly when the subject refused.
pub fn judge_refusal(
    id: i64,
    frames: &[Frame],
    http: &[HttpExchange],
    sent_ms: u64,
    budget_ms: u64,
    mutant: Mutant,
    check: &BorrowedCheck<'_>,
) -> Judgement {
    let base = if mutant == Mutant::AcceptRefusals {
        Mutant::None
    } else {
        mutant
    };
    let mut j = judge(id, frames, http, sent_ms, budget_ms, base, check);
    // Over Streamable HTTP a server may refuse with a client-error status
    // (404, 400) carrying the JSON-RPC error: that is a refusal too, when
    // every status of the step is a success or a 4xx and the body's error
    // answers the request.
    if j.stop_reason == "HTTP_STATUS"
        && http
            .iter()
            .filter_map(|x| x.status)
            .all(|s| matches!(s, 200 | 202 | 400..=499))
    {
        let body = judge(id, frames, &[], sent_ms, budget_ms, base, check);
        if matches!(body.stop_reason, "ERROR_RESPONSE" | "TOOL_ERROR") {
            j = Judgement {
                detail: format!("{}; {}", body.detail, j.detail),
                ..body
            };
        }
    }
    if matches!(j.stop_reason, "ERROR_RESPONSE" | "TOOL_ERROR") {
        if mutant == Mutant::AcceptRefusals {
            return Judgement {
                verdict: ACCEPT,
                stop_reason: COMPLETED,
                detail: format!("a refusal taken for success: {}", j.detail),
            };
        }
        return Judgement::reject(REQUEST_REFUSED, j.detail);
    }
    j
}

/// Checks of a result's members: `None` when acceptable, else a stop reason and detail.
pub type ResultCheck = dyn Fn(&Value, Mutant) -> Option<(&'static str, String)>;
/// A result check that may borrow (one built around another check).
pub type BorrowedCheck<'a> = dyn Fn(&Value, Mutant) -> Option<(&'static str, String)> + 'a;

/// Streamable HTTP: a request must get 200 with one JSON body or an event
/// stream; a notification or a response the client sent must get 202
/// Accepted with no body. Exchanges that got no response head at all are left
/// to the frame checks (`NO_RESPONSE`).
pub fn check_http(http: &[HttpExchange]) -> Option<(&'static str, String)> {
    for x in http {
        let Some(status) = x.status else { continue };
        match x.kind {
            Posted::Request => {
                if status != 200 {
                    return Some((
                        "HTTP_STATUS",
                        format!("{} got HTTP {status}; a request must get 200", x.describe()),
                    ));
                }
                let media = x.content_type.as_deref().map(media_type);
                if !matches!(
                    media.as_deref(),
                    Some("application/json" | "text/event-stream")
                ) {
                    return Some((
                        "HTTP_CONTENT_TYPE",
                        format!(
                            "{} got a 200 with content type {:?}; it must be application/json or text/event-stream",
                            x.describe(),
                            x.content_type
                        ),
                    ));
                }
            }
            Posted::Notification | Posted::Response => {
                if status != 202 {
                    return Some((
                        "HTTP_STATUS",
                        format!(
                            "{} got HTTP {status}; it must get 202 Accepted",
                            x.describe()
                        ),
                    ));
                }
                if x.body_bytes > 0 {
                    return Some((
                        "HTTP_BODY_ON_ACCEPTED",
                        format!(
                            "{} got 202 Accepted with a {}-byte body; it must have none",
                            x.describe(),
                            x.body_bytes
                        ),
                    ));
                }
            }
            Posted::Other => {}
        }
    }
    None
}

/// Judge the frames received after sending request `id` at `sent_ms`, and
/// (over HTTP) the exchanges that carried the step's messages.
pub fn judge(
    id: i64,
    frames: &[Frame],
    http: &[HttpExchange],
    sent_ms: u64,
    budget_ms: u64,
    mutant: Mutant,
    check: &BorrowedCheck<'_>,
) -> Judgement {
    let mut responses: Vec<(Value, u64)> = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let text = match std::str::from_utf8(&f.bytes) {
            Ok(t) => t.to_string(),
            Err(e) if mutant != Mutant::LossyDecode => {
                return Judgement::reject(
                    "INVALID_UTF8",
                    format!("frame {i} is not valid UTF-8 ({e})"),
                );
            }
            Err(_) => String::from_utf8_lossy(&f.bytes).into_owned(),
        };
        let Ok(msg) = serde_json::from_str::<Value>(&text) else {
            return Judgement::reject("INVALID_JSON", format!("frame {i} is not JSON"));
        };
        if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") || !msg.is_object() {
            return Judgement::reject(
                "INVALID_JSONRPC",
                format!("frame {i} is not a JSON-RPC 2.0 message"),
            );
        }
        let is_response = msg.get("method").is_none()
            && (msg.get("result").is_some() || msg.get("error").is_some());
        if is_response {
            responses.push((msg, f.at_ms));
        }
    }
    if let Some((stop, detail)) = check_http(http) {
        return Judgement::reject(stop, detail);
    }
    let matching: Vec<&(Value, u64)> = if mutant == Mutant::IgnoreIds {
        responses.iter().take(1).collect()
    } else {
        if let Some((other, _)) = responses.iter().find(|(m, _)| m["id"] != json!(id)) {
            return Judgement::reject(
                "UNSOLICITED_RESPONSE_ID",
                format!(
                    "a response carries id {}, which was never sent",
                    other["id"]
                ),
            );
        }
        responses.iter().collect()
    };
    if matching.len() > 1 {
        return Judgement::reject(
            "DUPLICATE_RESPONSE",
            format!("{} responses for id {id}", matching.len()),
        );
    }
    let Some((response, at_ms)) = matching.first() else {
        return Judgement::reject("NO_RESPONSE", format!("no response for id {id}"));
    };
    let took = at_ms.saturating_sub(sent_ms);
    if took > budget_ms {
        return Judgement::reject(
            "TIMING_BUDGET_EXCEEDED",
            format!("response after {took} ms; the budget is {budget_ms} ms"),
        );
    }
    if let Some(error) = response.get("error") {
        return Judgement::reject("ERROR_RESPONSE", format!("error response: {error}"));
    }
    let Some(result) = response.get("result").filter(|r| r.is_object()) else {
        return Judgement::reject("SCHEMA_VIOLATION", "result is not an object");
    };
    if let Some((stop, detail)) = check(result, mutant) {
        return Judgement::reject(stop, detail);
    }
    Judgement {
        verdict: ACCEPT,
        stop_reason: COMPLETED,
        detail: format!("response for id {id} accepted after {took} ms"),
    }
}

/// `initialize` result: protocol version and server identity.
pub fn check_initialize(result: &Value, mutant: Mutant) -> Option<(&'static str, String)> {
    if mutant == Mutant::SkipResultShape {
        return None;
    }
    if !result.get("protocolVersion").is_some_and(Value::is_string) {
        return Some((
            "SCHEMA_VIOLATION",
            "initialize result lacks protocolVersion".into(),
        ));
    }
    if !result.get("capabilities").is_some_and(Value::is_object) {
        return Some((
            "SCHEMA_VIOLATION",
            "initialize result lacks capabilities".into(),
        ));
    }
    if !result
        .pointer("/serverInfo/name")
        .is_some_and(Value::is_string)
        || !result
            .pointer("/serverInfo/version")
            .is_some_and(Value::is_string)
    {
        return Some((
            "SCHEMA_VIOLATION",
            "initialize result lacks serverInfo name/version".into(),
        ));
    }
    None
}

/// `server/discover` result (2026-07-28): the supported versions include
/// 2026-07-28, capabilities, and the server identity in `_meta`.
pub fn check_discover(result: &Value, mutant: Mutant) -> Option<(&'static str, String)> {
    if mutant == Mutant::SkipResultShape {
        return None;
    }
    let Some(versions) = result.get("supportedVersions").and_then(Value::as_array) else {
        return Some((
            "SCHEMA_VIOLATION",
            "server/discover result lacks supportedVersions".into(),
        ));
    };
    let modern = Revision::V2026_07_28.as_str();
    if !versions.iter().any(|v| v == modern) {
        return Some((
            "REVISION_NOT_SUPPORTED",
            format!("server/discover lists {versions:?}, not {modern}"),
        ));
    }
    if !result.get("capabilities").is_some_and(Value::is_object) {
        return Some((
            "SCHEMA_VIOLATION",
            "server/discover result lacks capabilities".into(),
        ));
    }
    let info = result.get("_meta").and_then(|m| m.get(META_SERVER_INFO));
    if !info
        .and_then(|i| i.get("name"))
        .is_some_and(Value::is_string)
        || !info
            .and_then(|i| i.get("version"))
            .is_some_and(Value::is_string)
    {
        return Some((
            "SCHEMA_VIOLATION",
            format!("server/discover result lacks _meta[{META_SERVER_INFO:?}] name/version"),
        ));
    }
    None
}

/// The server identity a handshake result reports: `serverInfo` of an
/// `initialize` result, or `_meta["io.modelcontextprotocol/serverInfo"]` of
/// a `server/discover` result.
pub fn server_identity(result: &Value) -> (Option<String>, Option<String>) {
    let info = result
        .get("serverInfo")
        .or_else(|| result.get("_meta").and_then(|m| m.get(META_SERVER_INFO)));
    let field = |k: &str| {
        info.and_then(|i| i.get(k))
            .and_then(Value::as_str)
            .map(String::from)
    };
    (field("name"), field("version"))
}

/// 2026-07-28: every result must say `resultType: "complete"` (this client
/// asks for nothing that could be incomplete); then `check`.
pub fn complete_result<'a>(
    revision: Revision,
    check: &'a ResultCheck,
) -> impl Fn(&Value, Mutant) -> Option<(&'static str, String)> + 'a {
    move |result, mutant| {
        if let Some(failure) = check(result, mutant) {
            return Some(failure);
        }
        if revision.is_stateless()
            && mutant != Mutant::SkipResultShape
            && result.get("resultType").and_then(Value::as_str) != Some("complete")
        {
            return Some((
                "RESULT_TYPE_NOT_COMPLETE",
                format!(
                    "the result's resultType is {}, not \"complete\"",
                    result.get("resultType").unwrap_or(&Value::Null)
                ),
            ));
        }
        None
    }
}

/// `tools/list` result: named tools with an input schema, including `tool`.
pub fn check_tools_list(
    tool: Option<&'static str>,
) -> impl Fn(&Value, Mutant) -> Option<(&'static str, String)> {
    move |result, mutant| {
        if mutant == Mutant::SkipResultShape {
            return None;
        }
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return Some(("SCHEMA_VIOLATION", "tools/list result lacks tools".into()));
        };
        if tools.iter().any(|t| {
            !t.get("name").is_some_and(Value::is_string)
                || !t.get("inputSchema").is_some_and(Value::is_object)
        }) {
            return Some((
                "SCHEMA_VIOLATION",
                "a tool lacks name or inputSchema".into(),
            ));
        }
        if let Some(tool) = tool
            && !tools.iter().any(|t| t["name"] == tool)
        {
            return Some(("MISSING_TOOL", format!("tools/list does not list {tool:?}")));
        }
        None
    }
}

/// `tools/call` result: a content array of typed blocks, not an error, whose
/// first text block is `expected`.
pub fn check_call(expected: String) -> impl Fn(&Value, Mutant) -> Option<(&'static str, String)> {
    move |result, mutant| {
        let content = result.get("content");
        if mutant != Mutant::SkipResultShape {
            let Some(blocks) = content.and_then(Value::as_array) else {
                return Some(("SCHEMA_VIOLATION", "tools/call result lacks content".into()));
            };
            if blocks
                .iter()
                .any(|b| !b.get("type").is_some_and(Value::is_string))
            {
                return Some(("SCHEMA_VIOLATION", "a content block lacks type".into()));
            }
        }
        if result.get("isError") == Some(&Value::Bool(true)) {
            return Some(("TOOL_ERROR", format!("tool reported an error: {result}")));
        }
        if let Some(blocks) = content.and_then(Value::as_array) {
            let text = blocks
                .iter()
                .find(|b| b["type"] == "text")
                .and_then(|b| b.get("text"))
                .and_then(Value::as_str);
            if text != Some(expected.as_str()) {
                return Some((
                    "WRONG_RESULT",
                    format!("expected text {expected:?}, got {text:?}"),
                ));
            }
        }
        None
    }
}
