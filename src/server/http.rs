//! Streamable HTTP transport: rmcp's `StreamableHttpService` at `/mcp`, behind an axum
//! middleware that applies the fault plan, on a loopback listener whose accept loop we
//! own (so a fault can drop a single TCP connection without answering).
//!
//! Host and Origin checks: the outermost middleware refuses (403) a `Host` that is not a
//! loopback name and an `Origin` other than `http://{127.0.0.1,localhost,[::1]}:PORT`
//! before anything else, so a refused request never reaches the fault schedule; rmcp
//! checks the same again.
//!
//! Authorization: with `--bearer-env`, the next check compares the request's
//! bearer credential with the configured one; with `--auth loopback`
//! (`protected.rs`), it verifies the request's access token instead, and the
//! router also serves the RFC 9728 metadata. Either check runs before the
//! fault schedule, so a refused request is never counted.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::fault::{self, Decision, FaultId, RequestInfo};
use super::protected::{self, Protected};
use super::{Config, ServerError};

/// Handle to drop the TCP connection a request arrived on.
#[derive(Clone)]
struct ConnKill(Arc<Notify>);

struct HttpState {
    config: Arc<Config>,
    in_flight: Arc<AtomicUsize>,
    /// `--rate-limit`: the requests served in the last window.
    rate: Option<std::sync::Mutex<super::rate::RateLog>>,
    /// The origins a browser page may send from (the listener's own).
    allowed_origins: Vec<String>,
    /// `--auth loopback`: the protected resource.
    auth: Option<Arc<Protected>>,
}

/// Host names the server answers to: loopback only.
const ALLOWED_HOSTS: [&str; 3] = ["127.0.0.1", "localhost", "::1"];

/// Is the request's `Host` a loopback name, and its `Origin` (when present)
/// one of the listener's own? Checked before anything else, so that a refused
/// request (a cross-origin page's `text/plain` POST, which browsers send
/// without a preflight) never reaches the fault schedule.
fn host_and_origin_allowed(parts: &axum::http::request::Parts, origins: &[String]) -> bool {
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_ascii_lowercase)
    };
    let Some(host) = header("host") else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host.as_str(), |(h, _)| h),
    };
    if !ALLOWED_HOSTS.contains(&name) {
        return false;
    }
    header("origin").is_none_or(|o| origins.contains(&o))
}

/// A place in flight (`--max-in-flight`), given back when dropped.
struct InFlight(Arc<AtomicUsize>);
impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body that holds its request's place in flight until the body is done
/// with (sent to its end, or dropped with its connection): a tool call answered on an
/// SSE stream keeps its place while it runs, not only until the stream's head is made.
struct Held {
    inner: Body,
    _place: InFlight,
}

impl hyper::body::Body for Held {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, axum::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// `resp` with its body holding `place` until it is done with.
fn holding(resp: Response, place: InFlight) -> Response {
    let (parts, body) = resp.into_parts();
    Response::from_parts(
        parts,
        Body::new(Held {
            inner: body,
            _place: place,
        }),
    )
}

fn json_response(status: StatusCode, v: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

fn sse_body(messages: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in messages {
        out.extend_from_slice(b"event: message\ndata: ");
        out.extend_from_slice(m);
        out.extend_from_slice(b"\n\n");
    }
    out
}

/// The JSON-RPC messages of a collected response body, with the index of the one
/// answering `id` (SSE or JSON). Non-message SSE events are kept as raw bytes.
enum Part {
    Raw(Vec<u8>),
    Msg(Value),
}

fn split_body(is_sse: bool, body: &[u8]) -> Vec<Part> {
    if !is_sse {
        return match serde_json::from_slice::<Value>(body) {
            Ok(v) => vec![Part::Msg(v)],
            Err(_) => vec![Part::Raw(body.to_vec())],
        };
    }
    let text = String::from_utf8_lossy(body);
    let mut parts = Vec::new();
    for event in text.split("\n\n").filter(|e| !e.is_empty()) {
        let data: Vec<&str> = event
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        match serde_json::from_str::<Value>(&data.join("\n")) {
            Ok(v) if v.is_object() => parts.push(Part::Msg(v)),
            _ => parts.push(Part::Raw(format!("{event}\n\n").into_bytes())),
        }
    }
    parts
}

fn is_target(v: &Value, d: &Decision) -> bool {
    v.get("method").is_none() && v.get("id") == Some(&d.request.id)
}

/// Apply a response-body fault to a collected response. Returns the new response.
fn rewrite(
    state: &HttpState,
    d: &Decision,
    parts: axum::http::response::Parts,
    body: Bytes,
) -> Response {
    let is_sse = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    let mut pieces = split_body(is_sse, &body);
    let mut out: Vec<u8> = Vec::new();
    let mut messages_out: Vec<Vec<u8>> = Vec::new();
    let mut multi = false;
    for p in pieces.drain(..) {
        match p {
            Part::Raw(b) => {
                if is_sse {
                    out.extend_from_slice(&b)
                } else {
                    messages_out.push(b)
                }
            }
            Part::Msg(v) if is_target(&v, d) => {
                let frames: Vec<Vec<u8>> = match d.fault {
                    FaultId::MalformedMessage => {
                        vec![fault::corrupt_bytes(d, v.to_string().as_bytes()).0]
                    }
                    _ => match fault::rewrite_response(d, &v, state.config.other_revision()) {
                        Some((frames, _)) => {
                            frames.iter().map(|f| f.to_string().into_bytes()).collect()
                        }
                        None => vec![v.to_string().into_bytes()],
                    },
                };
                multi |= frames.len() > 1;
                if is_sse {
                    out.extend_from_slice(&sse_body(&frames));
                } else {
                    messages_out.extend(frames);
                }
            }
            Part::Msg(v) => {
                let b = v.to_string().into_bytes();
                if is_sse {
                    out.extend_from_slice(&sse_body(&[b]));
                } else {
                    messages_out.push(b);
                }
            }
        }
    }
    let mut parts = parts;
    parts.headers.remove(header::CONTENT_LENGTH);
    if !is_sse {
        if multi {
            // Several messages for one POST: deliver them as an SSE stream.
            out = sse_body(&messages_out);
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
        } else {
            out = messages_out.concat();
        }
    }
    Response::from_parts(parts, Body::from(out))
}

fn log_decision(state: &HttpState, d: &Decision) {
    let e = &state.config.engine;
    let p = &e.params;
    let (action, detail) = match d.fault {
        FaultId::ProtocolError => (
            "rejected as unknown method (-32601) without execution",
            json!({}),
        ),
        FaultId::AuthorizationRejection => (
            "rejected with HTTP 401 (wrong-audience) without execution",
            json!({"status": 401}),
        ),
        FaultId::ResourceExhaustion => (
            "rejected with HTTP 503 (concurrency-over-limit) without execution",
            json!({"status": 503, "limit": state.config.args.max_in_flight}),
        ),
        FaultId::DependencyFailure | FaultId::FilesystemPublicationFailure => (
            "answered with a synthetic failure without execution",
            json!({}),
        ),
        FaultId::ProcessCrash => (
            "process aborted (SIGABRT) before answering",
            json!({"signal": "SIGABRT"}),
        ),
        FaultId::TransportDisconnect => ("TCP connection closed before answering", json!({})),
        FaultId::Timeout => (
            "response withheld (never delivered)",
            json!({"budgetMs": p.budget_ms}),
        ),
        FaultId::Cancellation => (
            "operation cancelled at half budget; -32800 sent, response stream dropped",
            json!({"cancelAfterMs": p.budget_ms / 2}),
        ),
        FaultId::DelayedResponse => ("response delayed", json!({"delayMs": p.delay_ms})),
        FaultId::MalformedMessage => (
            "response message corrupted with invalid UTF-8 (0xC3 0x28) at a seeded offset",
            json!({"rand": d.rand}),
        ),
        FaultId::PartialResponse => (
            "response body cut after a seeded prefix; TCP connection closed",
            json!({"rand": d.rand}),
        ),
        FaultId::SchemaViolation => (
            "required result member removed",
            json!({"method": d.request.method}),
        ),
        FaultId::Duplicate => ("response delivered twice", json!({"copies": 2})),
        FaultId::Reorder => (
            "uncorrelated response (unknown id) delivered before the real one",
            json!({}),
        ),
        FaultId::ExtensionMismatch => (
            "unadvertised extension request sent before the response",
            json!({"method": "dev.mcpres.unadvertised/probe"}),
        ),
        FaultId::CacheStalePoisoned => (
            "result marked with a stale cache key (other revision, old server version)",
            json!({"protocolVersion": state.config.other_revision()}),
        ),
        FaultId::CleanupFailure => return, // logged with its residue path
    };
    e.record(d, action, detail);
}

async fn fault_layer(State(state): State<Arc<HttpState>>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    if !host_and_origin_allowed(&parts, &state.allowed_origins) {
        return json_response(
            StatusCode::FORBIDDEN,
            &fault::error_response(
                &Value::Null,
                -32600,
                "Forbidden: Host must be a loopback name and Origin this server's own",
                None,
            ),
        );
    }
    if let Some(expected) = &state.config.bearer
        && let Err(refusal) = bearer_allowed(&parts, expected)
    {
        return unauthenticated(refusal);
    }
    let mut parts = parts;
    if let Some(auth) = &state.auth
        && !Protected::is_metadata_path(parts.uri.path())
    {
        auth.passthrough(&parts.headers).await;
        if let Err(refusal) = auth.check(&parts.headers) {
            return closing(auth.refuse(refusal, &parts.headers));
        }
        // The token has done its work here: nothing past this point sees it.
        parts.headers.remove(header::AUTHORIZATION);
    }
    let req = Request::from_parts(parts, body);
    // Only a POST to the endpoint itself is screened and counted; anything
    // else is rmcp's or the router's to answer (405, 404, a GET stream...).
    if req.method() != axum::http::Method::POST || req.uri().path() != "/mcp" {
        return next.run(req).await;
    }
    let max = state.config.args.max_message_bytes;
    let (parts, body) = req.into_parts();
    let timeout = Duration::from_millis(state.config.args.body_read_timeout_ms);
    let bytes = match read_body(body, max, timeout).await {
        Ok(b) => b,
        Err(BodyError::TooLarge) => {
            return closing(json_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                &fault::error_response(
                    &Value::Null,
                    -32600,
                    "Invalid Request: message too large",
                    Some(json!({"maxBytes": max})),
                ),
            ));
        }
        Err(BodyError::TimedOut) => {
            return closing(json_response(
                StatusCode::REQUEST_TIMEOUT,
                &fault::error_response(
                    &Value::Null,
                    -32600,
                    "Invalid Request: the body did not arrive in time",
                    Some(json!({"timeoutMs": timeout.as_millis()})),
                ),
            ));
        }
        Err(BodyError::Failed) => {
            return closing(StatusCode::BAD_REQUEST.into_response());
        }
    };
    if !media_types_acceptable(&parts.headers) {
        // The SDK answers `406` or `415`; the fault schedule never counts it.
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    }
    let kill = parts.extensions.get::<ConnKill>().cloned();
    let message = match screen_message(&bytes) {
        Screened::Message(m) => m,
        Screened::Answer(status, answer) => return json_response(status, &answer),
    };
    // A response or error the server never asked for, outside any legacy
    // session: there is nothing to route it to (2026-07-28 has no
    // server-to-client requests awaiting one). Accepted and dropped, as a
    // JSON-RPC peer ignores a stray response.
    if message.get("method").is_none() && !parts.headers.contains_key("mcp-session-id") {
        return StatusCode::ACCEPTED.into_response();
    }
    let info = RequestInfo::from_message(&message);
    let req = Request::from_parts(parts, Body::from(bytes));
    let Some(info) = info else {
        return next.run(req).await;
    };
    if info.method == "server/discover" && !state.config.modern_enabled() {
        return json_response(
            StatusCode::OK,
            &fault::error_response(
                &info.id,
                -32601,
                "Method not found",
                Some(json!({"method": info.method})),
            ),
        );
    }
    if info.method != "initialize"
        && let Some(rate) = &state.rate
    {
        let mut r = rate
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Err(wait) = r.admit(std::time::Instant::now()) {
            return rate_limited(&info.id, &r, wait);
        }
    }
    let limit = state.config.args.max_in_flight;
    if state.in_flight.fetch_add(1, Ordering::SeqCst) >= limit {
        state.in_flight.fetch_sub(1, Ordering::SeqCst);
        return overloaded(&info.id, limit);
    }
    let place = InFlight(Arc::clone(&state.in_flight));
    let resp = counted(&state, info, req, next, kill, limit).await;
    holding(resp, place)
}

/// The rest of [`fault_layer`] for a request that holds a place in flight: its fault,
/// if the engine injects one, else the server's own answer.
async fn counted(
    state: &HttpState,
    info: RequestInfo,
    req: Request,
    next: Next,
    kill: Option<ConnKill>,
    limit: usize,
) -> Response {
    let Some(d) = state.config.engine.on_request(info) else {
        return next.run(req).await;
    };
    log_decision(state, &d);
    let engine = &state.config.engine;
    match d.fault {
        FaultId::ProtocolError => {
            json_response(StatusCode::OK, &fault::protocol_error_response(&d))
        }
        FaultId::AuthorizationRejection => {
            let mut r = json_response(
                StatusCode::UNAUTHORIZED,
                &fault::error_response(
                    &d.request.id,
                    -32000,
                    "Unauthorized: token audience mismatch",
                    Some(json!({"reason": "wrong-audience"})),
                ),
            );
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(
                    "Bearer error=\"invalid_token\", error_description=\"token audience mismatch\"",
                ),
            );
            r
        }
        FaultId::ResourceExhaustion => overloaded(&d.request.id, limit),
        FaultId::DependencyFailure | FaultId::FilesystemPublicationFailure => {
            json_response(StatusCode::OK, &fault::synthetic_failure_response(&d))
        }
        FaultId::ProcessCrash => std::process::abort(),
        FaultId::TransportDisconnect => {
            if let Some(k) = kill {
                k.0.notify_one();
            }
            std::future::pending::<Response>().await
        }
        FaultId::CleanupFailure => {
            match engine.retain_handle(&d) {
                Ok(path) => engine.record(
                    &d,
                    "retained handle left behind; request served normally",
                    json!({"residue": path.display().to_string()}),
                ),
                Err(e) => engine.record(
                    &d,
                    "could not create retained handle",
                    json!({"error": e.to_string()}),
                ),
            }
            next.run(req).await
        }
        FaultId::Timeout => {
            let resp = next.run(req).await;
            let _ = axum::body::to_bytes(resp.into_body(), usize::MAX).await;
            std::future::pending::<Response>().await
        }
        FaultId::Cancellation => {
            let deadline =
                tokio::time::Instant::now() + Duration::from_millis(engine.params.budget_ms / 2);
            let inner = next.run(req);
            tokio::pin!(inner);
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => {}
                _ = &mut inner => { tokio::time::sleep_until(deadline).await; }
            }
            json_response(StatusCode::OK, &fault::cancelled_response(&d))
        }
        _ => {
            let resp = next.run(req).await;
            let (parts, body) = resp.into_parts();
            let body = match axum::body::to_bytes(body, usize::MAX).await {
                Ok(b) => b,
                Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            };
            match d.fault {
                FaultId::DelayedResponse => {
                    tokio::time::sleep(Duration::from_millis(engine.params.delay_ms)).await;
                    Response::from_parts(parts, Body::from(body))
                }
                FaultId::PartialResponse => {
                    let n = fault::prefix_len(&d, body.len());
                    let prefix = body.slice(..n);
                    let full = body.len();
                    // Let the prefix reach the socket, then abort the body (and so the connection).
                    let chunks =
                        futures_util::stream::once(
                            async move { Ok::<Bytes, std::io::Error>(prefix) },
                        )
                        .chain(futures_util::stream::once(async {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            Err(std::io::Error::new(
                                std::io::ErrorKind::ConnectionAborted,
                                "close-after-prefix",
                            ))
                        }));
                    let mut parts = parts;
                    parts
                        .headers
                        .insert(header::CONTENT_LENGTH, HeaderValue::from(full));
                    if let Some(k) = kill {
                        // Make sure the connection does not survive the aborted body.
                        tokio::spawn(async move {
                            tokio::time::sleep(Duration::from_millis(200)).await;
                            k.0.notify_one();
                        });
                    }
                    Response::from_parts(parts, Body::from_stream(chunks))
                }
                _ => rewrite(state, &d, parts, body),
            }
        }
    }
}

/// Why a request was refused for its credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BearerRefusal {
    /// No `Authorization` header (or another scheme than `Bearer`).
    Missing,
    /// A `Bearer` credential that is not the server's.
    Invalid,
}

/// Does the request carry `Authorization: Bearer <the server's credential>`?
/// One `Authorization` header only; the scheme is case-insensitive.
fn bearer_allowed(
    parts: &axum::http::request::Parts,
    expected: &super::BearerDigest,
) -> Result<(), BearerRefusal> {
    let mut values = parts.headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(BearerRefusal::Missing);
    };
    if values.next().is_some() {
        return Err(BearerRefusal::Invalid);
    }
    let value = value.as_bytes();
    let Some(space) = value.iter().position(|b| *b == b' ') else {
        return Err(BearerRefusal::Missing);
    };
    if !value[..space].eq_ignore_ascii_case(b"bearer") {
        return Err(BearerRefusal::Missing);
    }
    let token = value[space..].trim_ascii();
    if expected.matches(token) {
        Ok(())
    } else {
        Err(BearerRefusal::Invalid)
    }
}

/// `401` with `WWW-Authenticate: Bearer` (RFC 6750) and a JSON-RPC error
/// body; the request is not read further, so its connection is closed.
fn unauthenticated(refusal: BearerRefusal) -> Response {
    let (challenge, reason, message) = match refusal {
        BearerRefusal::Missing => (
            "Bearer",
            "missing-credential",
            "Unauthorized: a bearer credential is required",
        ),
        BearerRefusal::Invalid => (
            "Bearer error=\"invalid_token\"",
            "invalid-credential",
            "Unauthorized: the bearer credential is not valid",
        ),
    };
    let mut r = json_response(
        StatusCode::UNAUTHORIZED,
        &fault::error_response(
            &Value::Null,
            -32000,
            message,
            Some(json!({"reason": reason})),
        ),
    );
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    closing(r)
}

/// Would the SDK take this POST's media types: `Accept` naming both
/// `application/json` and `text/event-stream`, and `Content-Type`
/// `application/json`? (It answers `406` or `415` otherwise; the checks
/// mirror its own, so that such a request goes to it untouched.)
fn media_types_acceptable(headers: &axum::http::HeaderMap) -> bool {
    let essence = |v: &str| {
        v.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        for media in value.to_str().unwrap_or("").split(',') {
            match essence(media).as_str() {
                "application/json" => json = true,
                "text/event-stream" => sse = true,
                _ => {}
            }
        }
    }
    let content_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| essence(v) == "application/json");
    json && sse && content_json
}

/// A POST body, screened before the fault schedule and the SDK see it.
enum Screened {
    /// One JSON-RPC message the SDK can take.
    Message(Value),
    /// Refused here, with this status and JSON-RPC error body.
    Answer(StatusCode, Value),
}

/// Is `id` a JSON-RPC id the SDK can bind an answer to: a string or an
/// integer that fits 64 signed bits?
fn bindable_id(id: &Value) -> bool {
    id.is_string() || id.is_i64()
}

/// The JSON-RPC 2.0 envelope of one message: an object with `"jsonrpc":
/// "2.0"`, and either a string `method` (with a bindable `id`, or no `id`
/// for a notification), or a response (a bindable `id` and exactly one of
/// `result` and `error`; `id` may be null next to `error`).
fn envelope_valid(v: &Value) -> bool {
    let Some(obj) = v.as_object() else {
        return false;
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return false;
    }
    match obj.get("method") {
        Some(method) => method.is_string() && obj.get("id").is_none_or(bindable_id),
        None => {
            let (result, error) = (obj.contains_key("result"), obj.contains_key("error"));
            let id_ok = obj
                .get("id")
                .is_some_and(|id| bindable_id(id) || (error && id.is_null()));
            id_ok && result != error
        }
    }
}

/// Screen a POST body: not JSON is `400` with `-32700`; JSON that is not one
/// JSON-RPC message (a batch, a null or object id, no `"jsonrpc": "2.0"`, ...)
/// is `400` with `-32600`; a request whose params the SDK cannot take is
/// answered `-32602` under its own id. The SDK would answer each of these
/// with a bare `415`; refused here, none of them reaches the fault schedule.
fn screen_message(bytes: &[u8]) -> Screened {
    let Ok(v) = serde_json::from_slice::<Value>(bytes) else {
        return Screened::Answer(
            StatusCode::BAD_REQUEST,
            fault::error_response(&Value::Null, -32700, "Parse error", None),
        );
    };
    if !envelope_valid(&v) {
        return Screened::Answer(
            StatusCode::BAD_REQUEST,
            fault::error_response(&Value::Null, -32600, "Invalid Request", None),
        );
    }
    if let Some(answer) = super::invalid_params(&v) {
        return Screened::Answer(StatusCode::OK, answer);
    }
    if serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(v.clone()).is_err() {
        let method = v.get("method").and_then(Value::as_str);
        return match (method, v.get("id")) {
            (Some(method), Some(id)) => Screened::Answer(
                StatusCode::OK,
                fault::error_response(
                    id,
                    -32602,
                    &format!("Invalid params: {method} params do not match its schema"),
                    Some(json!({"method": method})),
                ),
            ),
            _ => Screened::Answer(
                StatusCode::BAD_REQUEST,
                fault::error_response(&Value::Null, -32600, "Invalid Request", None),
            ),
        };
    }
    Screened::Message(v)
}

/// Why a request body was not read.
enum BodyError {
    /// Longer than `--max-message-bytes`.
    TooLarge,
    /// Not complete within `--body-read-timeout-ms`.
    TimedOut,
    /// The connection failed or closed mid-body.
    Failed,
}

/// Read a request body of at most `max` bytes within `timeout`. Only the
/// bytes that arrived are held (nothing is reserved from a declared
/// Content-Length), and they are dropped with the future when the
/// connection closes or the time is up.
async fn read_body(body: Body, max: usize, timeout: Duration) -> Result<Bytes, BodyError> {
    use http_body_util::BodyExt;
    let read = async move {
        let mut body = body;
        let mut out: Vec<u8> = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| BodyError::Failed)?;
            if let Ok(data) = frame.into_data() {
                if out.len() + data.len() > max {
                    drop(out);
                    drain(&mut body).await;
                    return Err(BodyError::TooLarge);
                }
                out.extend_from_slice(&data);
            }
        }
        Ok(Bytes::from(out))
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or(Err(BodyError::TimedOut))
}

/// After a body was refused as too large: read and discard what the client
/// is still sending, for a bounded time and amount, so that closing the
/// connection does not reset it (a reset can discard the 413 before the
/// client reads it). Nothing is kept.
async fn drain(body: &mut Body) {
    use http_body_util::BodyExt;
    const DRAIN_BYTES: usize = 64 << 20;
    const DRAIN_TIME: Duration = Duration::from_secs(10);
    let mut seen = 0usize;
    let _ = tokio::time::timeout(DRAIN_TIME, async {
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(data) = frame.into_data() {
                seen += data.len();
                if seen > DRAIN_BYTES {
                    break;
                }
            }
        }
    })
    .await;
}

/// `response` with `Connection: close`: the connection ends once it is sent
/// (the rest of a refused body is read and discarded, within bounds).
fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

fn overloaded(id: &Value, limit: usize) -> Response {
    let mut r = json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        &fault::overload_response(id, limit),
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// A request over `--rate-limit`: 429, with `Retry-After` in whole seconds (rounded up)
/// and the exact wait in the body's `data.retryAfterMs`.
fn rate_limited(id: &Value, r: &super::rate::RateLog, wait: Duration) -> Response {
    let ms = (wait.as_millis() as u64).max(1);
    let mut response = json_response(
        StatusCode::TOO_MANY_REQUESTS,
        &fault::rate_limited_response(id, r.limit(), r.window().as_millis() as u64, ms),
    );
    if let Ok(v) = HeaderValue::from_str(&ms.div_ceil(1000).to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, v);
    }
    response
}

pub(crate) async fn serve(config: Arc<Config>) -> Result<(), ServerError> {
    // `--auth loopback`: learn the authorization server's keys before any
    // listener exists, so a refused start leaves nothing behind.
    let discovered = match (&config.args.auth, &config.auth_issuer) {
        (Some(args), Some(issuer)) => Some(protected::discover(args, issuer).await?),
        _ => None,
    };
    let addr = SocketAddr::new(config.args.bind, config.args.port);
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| ServerError::Bind { addr, source })?;
    let local = listener.local_addr()?;
    let port = local.port();
    let auth = match (&config.args.auth, &config.auth_issuer, discovered) {
        (Some(args), Some(issuer), Some(found)) => {
            let p = Protected::new(args, issuer.clone(), found, local);
            config.engine.record_event("auth", p.describe());
            eprintln!(
                "mcpres serve: protected resource {} (metadata {})",
                p.resource(),
                p.metadata_url()
            );
            Some(Arc::new(p))
        }
        _ => None,
    };
    let ct = CancellationToken::new();

    let allowed_origins = vec![
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ];
    let mut rcfg = StreamableHttpServerConfig::default()
        .with_allowed_hosts(ALLOWED_HOSTS)
        .with_allowed_origins(allowed_origins.clone());
    rcfg.cancellation_token = ct.clone();
    rcfg.max_request_body_bytes = config.args.max_message_bytes;
    let factory_config = config.clone();
    let service: StreamableHttpService<super::handler::RefServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(factory_config.handler()),
            Arc::new(LocalSessionManager::default()),
            rcfg,
        );
    let state = Arc::new(HttpState {
        config: config.clone(),
        in_flight: Arc::new(AtomicUsize::new(0)),
        rate: config.args.rate_limit.map(|(n, ms)| {
            std::sync::Mutex::new(super::rate::RateLog::new(n, Duration::from_millis(ms)))
        }),
        allowed_origins,
        auth: auth.clone(),
    });
    let mut router = Router::new().nest_service("/mcp", service);
    if let Some(auth) = auth {
        let document = Arc::new(auth.metadata_document());
        let metadata = axum::routing::get(move || {
            let document = document.clone();
            async move { json_response(StatusCode::OK, &document) }
        });
        router = router
            .route(protected::PRM_PATH, metadata.clone())
            .route(protected::PRM_PATH_MCP, metadata);
    }
    let router = router.layer(middleware::from_fn_with_state(state, fault_layer));

    let shutdown = super::shutdown_signal();
    tokio::pin!(shutdown);
    // One permit per connection served: past the cap, connections wait in
    // the listen backlog (not accepted, no memory of ours) until one closes.
    let slots = Arc::new(tokio::sync::Semaphore::new(config.args.max_connections));
    let header_timeout = Duration::from_millis(config.args.header_read_timeout_ms);
    eprintln!("mcpres serve: listening on http://{local}/mcp");
    loop {
        let permit = tokio::select! {
            p = slots.clone().acquire_owned() => p.expect("the semaphore is never closed"),
            _ = &mut shutdown => break,
        };
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((s, _)) => {
                    // Small writes (an event stream's terminal chunk) go out at
                    // once instead of waiting for the peer's delayed ACK.
                    let _ = s.set_nodelay(true);
                    s
                }
                Err(e) => {
                    eprintln!("mcpres serve: accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let kill = Arc::new(Notify::new());
        let router = router.clone();
        let conn_kill = ConnKill(kill.clone());
        let svc =
            hyper::service::service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(conn_kill.clone());
                let router = router.clone();
                async move {
                    Ok::<_, Infallible>(match router.oneshot(req.map(Body::new)).await {
                        Ok(r) => r,
                        Err(e) => match e {},
                    })
                }
            });
        let ct = ct.clone();
        tokio::spawn(async move {
            // Headers must arrive within the header timeout (hyper's own,
            // which needs a timer); the body timeout is `read_body`'s.
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(stream), svc);
            tokio::select! {
                _ = conn => {}
                _ = kill.notified() => {}
                _ = ct.cancelled() => {}
            }
            drop(permit);
        });
    }
    drop(listener);
    ct.cancel();
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(())
}
