//! Streamable HTTP subjects: the harness's sessions over the async face of
//! the one raw HTTP/1.1 client (`drive::http`: its request writer and
//! response parser).
//!
//! Like the stdio path, this records before it parses: every request's bytes
//! are appended to the session's raw request capture before they are written
//! to the socket, and every byte read is appended to the raw response capture
//! before the response is decoded (chunked transfer coding, then either one
//! JSON body or Server-Sent Events whose `data` lines are the JSON-RPC frames).
//!
//! Connections are persistent: one exchange at a time per connection, the
//! response read to its end (Content-Length, the terminal chunk, or the
//! close), then the connection is kept for the next exchange unless the
//! server closes it or says `Connection: close`. Every connection's open and
//! close is a lifecycle event, and every exchange's status and media type is
//! kept for the oracle. Only loopback targets are accepted (unless opted in).

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::record::{Frame, Pumped, Recording};
use crate::produce::drive::http::{Body, Request, ResponseParser, nonblocking};

/// Longest a single HTTP exchange may take before the harness gives up on it.
const EXCHANGE_LIMIT: Duration = Duration::from_secs(60);

/// Where a Streamable HTTP subject listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpTarget {
    pub addr: SocketAddr,
    /// `Host` header value (`127.0.0.1:PORT`).
    pub authority: String,
    /// Endpoint path (`/mcp`).
    pub path: String,
    /// SHA-256 of the canonical `{scheme, host, port, path}`: what a reviewer approves.
    pub target_sha256: String,
    /// The remote opt-in that allowed a non-loopback target (`None` on loopback).
    pub remote_opt_in: Option<RemoteOptIn>,
}

/// The record of an explicit opt-in to a non-loopback target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteOptIn {
    /// SHA-256 of the allowlist file's bytes.
    pub allowlist_sha256: String,
    /// The digest the allowlist entry carries; equal to the target digest.
    pub reviewed_target_sha256: String,
}

impl HttpTarget {
    /// How the target is described in the evidence (`raw/subject-artifact.json`).
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "transport": "streamable-http",
            "targetKind": if self.remote_opt_in.is_some() { "REMOTE_HTTP" } else { "LOOPBACK_HTTP" },
            "targetSha256": self.target_sha256,
            "remoteOptIn": self.remote_opt_in.is_some(),
        });
        if let Some(r) = &self.remote_opt_in {
            v["allowlistSha256"] = json!(r.allowlist_sha256);
            v["reviewedTargetSha256"] = json!(r.reviewed_target_sha256);
        }
        v
    }
}

/// The digest a reviewer approves for a target URL.
pub fn target_digest(host: &str, port: u16, path: &str) -> String {
    crate::json::canonical::digest(&json!({
        "scheme": "http", "host": host.to_ascii_lowercase(), "port": port, "path": path,
    }))
    .unwrap_or_default()
}

/// Parse `http://HOST:PORT/PATH`. A non-loopback host is refused unless
/// `allowlist` (a JSON file, see spec/harness.md) lists exactly this URL with a
/// `reviewedTargetSha256` equal to the target's digest.
pub fn parse_target(url: &str, allowlist: Option<&std::path::Path>) -> Result<HttpTarget, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("--http {url:?}: only http:// URLs are supported"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, p) = v6
            .split_once("]:")
            .ok_or_else(|| format!("--http {url:?}: a port is required"))?;
        (h, p)
    } else {
        authority
            .rsplit_once(':')
            .ok_or_else(|| format!("--http {url:?}: a port is required"))?
    };
    let port: u16 = port
        .parse()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("--http {url:?}: bad port"))?;
    let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
        IpAddr::from([127, 0, 0, 1])
    } else {
        host.parse()
            .map_err(|_| format!("--http {url:?}: the host must be an IP address or localhost"))?
    };
    let target_sha256 = target_digest(host, port, path);
    let remote_opt_in = if ip.is_loopback() {
        None
    } else {
        let Some(file) = allowlist else {
            return Err(format!(
                "--http {url:?}: {ip} is not a loopback address; a remote target needs \
                 --allow-remote FILE listing this URL with reviewedTargetSha256 {target_sha256}"
            ));
        };
        Some(check_allowlist(file, url, &target_sha256)?)
    };
    Ok(HttpTarget {
        addr: SocketAddr::new(ip, port),
        authority: authority.to_string(),
        path: path.to_string(),
        target_sha256,
        remote_opt_in,
    })
}

/// The allowlist must be a JSON object whose `targets` list holds this exact
/// URL with the reviewed digest of this target.
fn check_allowlist(
    file: &std::path::Path,
    url: &str,
    target_sha256: &str,
) -> Result<RemoteOptIn, String> {
    let bytes =
        std::fs::read(file).map_err(|e| format!("--allow-remote {}: {e}", file.display()))?;
    let doc = crate::json::reader::parse_default(&bytes)
        .map_err(|e| format!("--allow-remote {}: not JSON: {e}", file.display()))?;
    let entries = doc
        .get("targets")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("--allow-remote {}: no \"targets\" list", file.display()))?;
    let entry = entries
        .iter()
        .find(|e| e.get("url").and_then(Value::as_str) == Some(url))
        .ok_or_else(|| {
            format!(
                "--allow-remote {}: {url:?} is not on the allowlist (its target digest is {target_sha256})",
                file.display()
            )
        })?;
    let reviewed = entry
        .get("reviewedTargetSha256")
        .and_then(Value::as_str)
        .unwrap_or("");
    if reviewed != target_sha256 {
        return Err(format!(
            "--allow-remote {}: the reviewed digest of {url:?} is {reviewed:?}, but the target's digest is {target_sha256}",
            file.display()
        ));
    }
    Ok(RemoteOptIn {
        allowlist_sha256: crate::json::canonical::sha256_hex(&bytes),
        reviewed_target_sha256: reviewed.to_string(),
    })
}

/// Is something accepting connections at `to`?
pub async fn listening(to: &crate::produce::drive::door::Endpoint) -> bool {
    matches!(
        tokio::time::timeout(Duration::from_millis(500), connect(to)).await,
        Ok(Ok(_))
    )
}

/// A connection to `to`: directly, or through the door of the subject's
/// network namespace (opened inside, handed over; a blocking exchange of a
/// few microseconds, on the blocking pool).
async fn connect(to: &crate::produce::drive::door::Endpoint) -> std::io::Result<TcpStream> {
    if !to.in_namespace() {
        return TcpStream::connect(to.addr).await;
    }
    let to = to.clone();
    let stream = tokio::task::spawn_blocking(move || to.connect(Duration::from_secs(10)))
        .await
        .map_err(std::io::Error::other)??;
    stream.set_nonblocking(true)?;
    TcpStream::from_std(stream)
}

/// What a POST carries, as the status rules of Streamable HTTP see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Posted {
    /// A JSON-RPC request: 200 with `application/json` or `text/event-stream`.
    Request,
    /// A notification: 202 Accepted without a body.
    Notification,
    /// A response to a server request: 202 Accepted without a body.
    Response,
    /// Not a JSON-RPC message (the session's `DELETE`): recorded, not judged.
    Other,
}

impl Posted {
    fn as_str(self) -> &'static str {
        match self {
            Posted::Request => "request",
            Posted::Notification => "notification",
            Posted::Response => "response",
            Posted::Other => "none",
        }
    }
}

/// One exchange the client is about to make.
#[derive(Debug, Clone)]
pub struct Outgoing {
    pub method: &'static str,
    pub body: Option<Vec<u8>>,
    pub kind: Posted,
    pub rpc_id: Option<Value>,
    pub rpc_method: Option<String>,
    /// `params.name` (tools, prompts) or `params.uri` (resources): the `Mcp-Name` header.
    pub rpc_name: Option<String>,
}

impl Outgoing {
    /// A POST of one JSON-RPC message (`bytes` is its serialization).
    pub fn post(bytes: Vec<u8>, message: &Value) -> Self {
        let rpc_method = message
            .get("method")
            .and_then(Value::as_str)
            .map(String::from);
        let rpc_id = message.get("id").cloned();
        let kind = match (&rpc_method, &rpc_id) {
            (Some(_), Some(_)) => Posted::Request,
            (Some(_), None) => Posted::Notification,
            (None, _) => Posted::Response,
        };
        let params = message.get("params");
        let rpc_name = params
            .and_then(|p| p.get("name").or_else(|| p.get("uri")))
            .and_then(Value::as_str)
            .map(String::from);
        Outgoing {
            method: "POST",
            body: Some(bytes),
            kind,
            rpc_id,
            rpc_method,
            rpc_name,
        }
    }

    /// The `DELETE` that ends an MCP session.
    pub fn delete() -> Self {
        Outgoing {
            method: "DELETE",
            body: None,
            kind: Posted::Other,
            rpc_id: None,
            rpc_method: None,
            rpc_name: None,
        }
    }
}

/// What the oracle learns about one HTTP exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpExchange {
    pub method: &'static str,
    pub kind: Posted,
    pub rpc_id: Option<Value>,
    pub rpc_method: Option<String>,
    /// The connection (1-based per session) that carried it.
    pub connection: u64,
    /// Carried on a connection an earlier exchange had used.
    pub reused: bool,
    /// `None` when no response head arrived.
    pub status: Option<u16>,
    pub content_type: Option<String>,
    pub body_bytes: usize,
}

impl HttpExchange {
    /// What it was, for a judgement's detail.
    pub fn describe(&self) -> String {
        match (&self.rpc_method, &self.rpc_id) {
            (Some(m), Some(id)) => format!("the {} of {m} (id {id})", self.kind.as_str()),
            (Some(m), None) => format!("the {} {m}", self.kind.as_str()),
            _ => format!("the {} {}", self.method, self.kind.as_str()),
        }
    }
}

/// A persistent connection.
#[derive(Debug)]
struct Conn {
    stream: TcpStream,
    id: u64,
    exchanges: u32,
}

/// Shared state of one HTTP session: the MCP session id and revision, the
/// idle keep-alive connection, and the record of every exchange.
#[derive(Debug, Default)]
pub struct HttpState {
    pub session_id: Option<String>,
    pub protocol_version: Option<String>,
    /// 2026-07-28: no session id; `Mcp-Method` / `Mcp-Name` on every request.
    pub stateless: bool,
    idle: Option<Conn>,
    connections: u64,
    pub exchanges: Vec<HttpExchange>,
}

/// How one exchange left its connection.
enum Ending {
    /// Complete and persistent: the connection may carry the next exchange.
    Reusable { answered: bool },
    Closed {
        answered: bool,
        by: &'static str,
        reason: &'static str,
    },
    /// Closed (or reset) before any response byte arrived.
    Stale,
    /// The request could not even be written: the connection was already
    /// closed, so the server never saw it.
    Unsent,
}

/// How long an event stream may stay open after the frame answering the
/// request arrived before the client closes the connection instead of waiting
/// for the terminal chunk.
const SSE_GRACE: Duration = Duration::from_millis(1000);

fn stale_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof
    )
}

/// Header values we send must be visible ASCII.
fn header_safe(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| (0x20..=0x7E).contains(&b))
}

/// The client side of a Streamable HTTP session: one exchange at a time per
/// connection, connections kept alive and reused, every byte recorded.
#[derive(Debug, Clone)]
pub struct Client {
    pub target: HttpTarget,
    /// Where the target is reached: through the door of the subject's
    /// network namespace when it runs in one of its own.
    pub reach: crate::produce::drive::door::Endpoint,
    pub state: Arc<Mutex<HttpState>>,
    rec: Arc<Mutex<Recording>>,
    session: String,
    epoch: Instant,
    tx: mpsc::UnboundedSender<Pumped>,
}

impl Client {
    pub fn new(
        target: HttpTarget,
        rec: Arc<Mutex<Recording>>,
        session: String,
        epoch: Instant,
        tx: mpsc::UnboundedSender<Pumped>,
    ) -> Self {
        Client {
            reach: target.addr.into(),
            target,
            state: Arc::default(),
            rec,
            session,
            epoch,
            tx,
        }
    }

    pub(crate) fn ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub(crate) fn event(&self, mut event: Value) {
        event["session"] = json!(self.session);
        self.rec.lock().expect("recorder lock").events.push(event);
    }

    fn state(&self) -> std::sync::MutexGuard<'_, HttpState> {
        self.state.lock().expect("http state lock")
    }

    /// Speak 2026-07-28: that version header on every request, plus the
    /// method and name headers; never a session id.
    pub fn set_stateless(&self, version: &str) {
        let mut s = self.state();
        s.stateless = true;
        s.protocol_version = Some(version.to_string());
    }

    /// Register an exchange before it starts (so an oracle finds it even
    /// before its response arrives); returns its index.
    pub fn begin(&self, out: &Outgoing) -> usize {
        let mut s = self.state();
        s.exchanges.push(HttpExchange {
            method: out.method,
            kind: out.kind,
            rpc_id: out.rpc_id.clone(),
            rpc_method: out.rpc_method.clone(),
            connection: 0,
            reused: false,
            status: None,
            content_type: None,
            body_bytes: 0,
        });
        s.exchanges.len() - 1
    }

    fn request_bytes(&self, out: &Outgoing) -> Vec<u8> {
        let (sid, version, stateless) = {
            let s = self.state();
            (
                s.session_id.clone(),
                s.protocol_version.clone(),
                s.stateless,
            )
        };
        let mut request = Request::to(out.method, &self.target.path, &self.target.authority)
            .header("Accept", "application/json, text/event-stream")
            .header(
                "User-Agent",
                concat!("mcpres-harness/", env!("CARGO_PKG_VERSION")),
            );
        if let Some(sid) = sid.filter(|_| !stateless) {
            request.push("Mcp-Session-Id", &sid);
        }
        if let Some(v) = &version {
            request.push("MCP-Protocol-Version", v);
        }
        if stateless {
            if let Some(m) = out.rpc_method.as_deref().filter(|m| header_safe(m)) {
                request.push("Mcp-Method", m);
            }
            if let Some(n) = out.rpc_name.as_deref().filter(|n| header_safe(n)) {
                request.push("Mcp-Name", n);
            }
        }
        if let Some(b) = &out.body {
            request.push("Content-Type", "application/json");
            request.body = Body::Sized(b.clone());
        }
        request.to_bytes()
    }

    fn closed(&self, conn: &Conn, by: &str, reason: &str) {
        let at = self.ms();
        self.event(json!({
            "event": "connection-closed", "offsetMs": at, "connection": conn.id,
            "exchanges": conn.exchanges, "by": by, "reason": reason,
        }));
    }

    /// The idle connection when it is still open, else a new one.
    async fn connection(&self) -> std::io::Result<(Conn, bool)> {
        let idle = self.state().idle.take();
        if let Some(conn) = idle {
            let mut probe = [0u8; 1024];
            match conn.stream.try_read(&mut probe) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok((conn, true)),
                Ok(0) => self.closed(&conn, "server", "closed by the server while idle"),
                Ok(n) => {
                    self.rec
                        .lock()
                        .expect("recorder lock")
                        .http_responses
                        .extend_from_slice(&probe[..n]);
                    self.closed(&conn, "client", "unsolicited bytes on an idle connection");
                }
                Err(_) => self.closed(&conn, "server", "the idle connection failed"),
            }
        }
        let stream = connect(&self.reach).await?;
        let _ = stream.set_nodelay(true);
        let id = {
            let mut s = self.state();
            s.connections += 1;
            s.connections
        };
        let at = self.ms();
        self.event(json!({
            "event": "connection-open", "offsetMs": at, "connection": id,
            "localPort": stream.local_addr().map(|a| a.port()).ok(),
        }));
        Ok((
            Conn {
                stream,
                id,
                exchanges: 0,
            },
            false,
        ))
    }

    /// Keep a connection for the next exchange.
    fn release(&self, conn: Conn) {
        let mut s = self.state();
        if s.idle.is_none() {
            s.idle = Some(conn);
        } else {
            drop(s);
            self.closed(&conn, "client", "another connection is already idle");
        }
    }

    /// Close the idle connection (at the end of the session).
    pub fn close_idle(&self, reason: &str) {
        let idle = self.state().idle.take();
        if let Some(conn) = idle {
            self.closed(&conn, "client", reason);
        }
    }

    /// One exchange (registered with [`Client::begin`] as `index`): records
    /// the raw request and response, forwards every decoded frame, and
    /// returns when the response is complete or the connection closed. A
    /// request whose exchange ends without a frame answering it is reported
    /// as unanswered, so nobody waits for it.
    pub async fn exchange(&self, out: Outgoing, index: usize) {
        let bytes = self.request_bytes(&out);
        let answer_id = out.rpc_id.clone().filter(|_| out.kind == Posted::Request);
        let outcome = tokio::time::timeout(
            EXCHANGE_LIMIT,
            self.attempt(&out, &bytes, index, answer_id.as_ref()),
        )
        .await;
        let (answered, failure) = match outcome {
            Ok(Ok(answered)) => (answered, None),
            Ok(Err(e)) => (false, Some(e.to_string())),
            Err(_) => {
                let connection = self.state().exchanges[index].connection;
                let at = self.ms();
                self.event(json!({
                    "event": "connection-closed", "offsetMs": at, "connection": connection,
                    "by": "client", "reason": "no complete response within the exchange limit",
                }));
                (
                    false,
                    Some("no complete response within the exchange limit".to_string()),
                )
            }
        };
        if let Some(error) = failure {
            let at = self.ms();
            self.event(json!({
                "event": "http-error", "offsetMs": at, "method": out.method, "error": error,
            }));
        }
        if let (Some(id), false) = (answer_id, answered) {
            let _ = self.tx.send(Pumped::Unanswered(id));
        }
    }

    /// Send on a kept-alive connection, or a new one; a request that could not
    /// be written to a reused connection (closed by the server while idle) is
    /// sent again on a new one.
    async fn attempt(
        &self,
        out: &Outgoing,
        bytes: &[u8],
        index: usize,
        answer_id: Option<&Value>,
    ) -> std::io::Result<bool> {
        let mut retried = false;
        loop {
            let (mut conn, reused) = self.connection().await?;
            conn.exchanges += 1;
            {
                let mut s = self.state();
                s.exchanges[index].connection = conn.id;
                s.exchanges[index].reused = reused;
            }
            let at = self.ms();
            {
                let mut r = self.rec.lock().expect("recorder lock");
                r.http_requests.extend_from_slice(bytes);
                r.events.push(json!({
                    "session": self.session, "event": "http-request", "offsetMs": at,
                    "method": out.method, "bytes": bytes.len(), "connection": conn.id,
                    "reused": reused, "rpcMethod": out.rpc_method,
                }));
            }
            match self.on_connection(&mut conn, bytes, index, answer_id).await {
                Ok(Ending::Reusable { answered }) => {
                    self.release(conn);
                    return Ok(answered);
                }
                Ok(Ending::Closed {
                    answered,
                    by,
                    reason,
                }) => {
                    self.closed(&conn, by, reason);
                    return Ok(answered);
                }
                // Only a request the server cannot have seen is sent again: a
                // connection that closes after the request was written is a
                // failure the oracle must see (a server may close on purpose).
                Ok(Ending::Unsent) if reused && !retried => {
                    self.closed(
                        &conn,
                        "server",
                        "closed before the request could be written; the request is sent again on a new connection",
                    );
                    retried = true;
                }
                Ok(Ending::Stale | Ending::Unsent) => {
                    self.closed(&conn, "server", "closed before any response byte");
                    return Ok(false);
                }
                Err(e) => {
                    self.closed(&conn, "client", "I/O error");
                    return Err(e);
                }
            }
        }
    }

    async fn on_connection(
        &self,
        conn: &mut Conn,
        bytes: &[u8],
        index: usize,
        answer_id: Option<&Value>,
    ) -> std::io::Result<Ending> {
        match nonblocking::send(&mut conn.stream, bytes).await {
            Err(e) if stale_error(&e) => return Ok(Ending::Unsent),
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        let mut parser = ResponseParser::default();
        let mut buf = [0u8; 8192];
        let mut received = 0usize;
        let mut head_logged = false;
        let mut answered = false;
        let mut grace: Option<Instant> = None;
        loop {
            let Some(read) = nonblocking::receive(&mut conn.stream, &mut buf, grace).await else {
                self.state().exchanges[index].body_bytes = parser.body_len();
                return Ok(Ending::Closed {
                    answered,
                    by: "client",
                    reason: "the event stream stayed open after the answer",
                });
            };
            let n = match read {
                Ok(n) => n,
                Err(e) if received == 0 && stale_error(&e) => return Ok(Ending::Stale),
                Err(e) => return Err(e),
            };
            if n == 0 && received == 0 {
                return Ok(Ending::Stale);
            }
            let at_ms = self.ms();
            let frames = if n == 0 {
                parser.finish()
            } else {
                received += n;
                {
                    let mut r = self.rec.lock().expect("recorder lock");
                    let limit = super::record::INPUT_LIMIT_BYTES;
                    if r.http_responses.len() + n > limit {
                        // The declared input limit: keep what fits, stop
                        // reading, and end the exchange (the oracle then
                        // rejects it with INPUT_LIMIT_EXCEEDED).
                        let fits = limit - r.http_responses.len();
                        r.http_responses.extend_from_slice(&buf[..fits]);
                        r.limit_hit(&self.session, at_ms, "bytes", limit);
                        return Err(std::io::Error::other(format!(
                            "the server's responses exceed the declared input limit of {limit} bytes"
                        )));
                    }
                    r.http_responses.extend_from_slice(&buf[..n]);
                }
                parser.feed(&buf[..n])
            };
            if !head_logged && let Some(status) = parser.status() {
                head_logged = true;
                let content_type = parser.header("content-type").map(String::from);
                {
                    let mut s = self.state();
                    if !s.stateless
                        && let Some(id) = parser.header("mcp-session-id")
                    {
                        s.session_id = Some(id.to_string());
                    }
                    s.exchanges[index].status = Some(status);
                    s.exchanges[index].content_type = content_type.clone();
                }
                self.event(json!({
                    "event": "http-response", "offsetMs": at_ms, "status": status,
                    "contentType": content_type, "connection": conn.id,
                }));
            }
            for frame in frames {
                let parsed = serde_json::from_slice::<Value>(&frame).ok();
                if let Some(m) = &parsed {
                    if let Some(v) = m.pointer("/result/protocolVersion").and_then(Value::as_str) {
                        let mut s = self.state();
                        if !s.stateless {
                            s.protocol_version = Some(v.to_string());
                        }
                    }
                    answered |= answer_id
                        .is_some_and(|id| m.get("method").is_none() && m.get("id") == Some(id));
                }
                {
                    let mut r = self.rec.lock().expect("recorder lock");
                    if !r.admit_frame(&self.session, at_ms) {
                        return Err(std::io::Error::other(format!(
                            "the server sent more than {} messages in one session",
                            super::record::SESSION_FRAME_LIMIT
                        )));
                    }
                    r.messages.push(super::record::message_entry(
                        &self.session,
                        "server-to-client",
                        at_ms,
                        &frame,
                    ));
                }
                let _ = self.tx.send(Pumped::Frame(Frame {
                    bytes: frame,
                    at_ms,
                }));
            }
            if n == 0 || parser.complete() {
                self.state().exchanges[index].body_bytes = parser.body_len();
            }
            if n == 0 {
                return Ok(Ending::Closed {
                    answered,
                    by: "server",
                    reason: if parser.complete() {
                        "closed by the server at the end of the response"
                    } else {
                        "closed by the server before the response was complete"
                    },
                });
            }
            if parser.complete() {
                return Ok(match parser.reuse_refusal() {
                    None => Ending::Reusable { answered },
                    Some(reason) => Ending::Closed {
                        answered,
                        by: "client",
                        reason,
                    },
                });
            }
            if answered && parser.is_sse() && grace.is_none() {
                grace = Some(Instant::now() + SSE_GRACE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A client for a scripted local server at `addr`, path `/mcp`, with its
    /// recorder and the receiving end of its frame channel.
    fn test_client(
        addr: SocketAddr,
    ) -> (
        Client,
        Arc<Mutex<Recording>>,
        mpsc::UnboundedReceiver<Pumped>,
    ) {
        let target = HttpTarget {
            addr,
            authority: addr.to_string(),
            path: "/mcp".into(),
            target_sha256: String::new(),
            remote_opt_in: None,
        };
        let rec = Arc::new(Mutex::new(Recording::default()));
        let (tx, rx) = mpsc::unbounded_channel();
        let client = Client::new(target, Arc::clone(&rec), "t".into(), Instant::now(), tx);
        (client, rec, rx)
    }

    #[test]
    fn only_loopback_targets_are_accepted() {
        let t = parse_target("http://127.0.0.1:8080/mcp", None).unwrap();
        assert_eq!(t.addr.port(), 8080);
        assert_eq!(t.path, "/mcp");
        assert_eq!(t.to_json()["targetKind"], "LOOPBACK_HTTP");
        assert!(parse_target("http://localhost:9/", None).is_ok());
        assert!(parse_target("http://[::1]:9/mcp", None).is_ok());
        for bad in [
            "http://10.0.0.1:80/mcp",
            "http://example.com:80/mcp",
            "https://127.0.0.1:443/mcp",
            "http://127.0.0.1/mcp",
            "http://0.0.0.0:80/",
        ] {
            assert!(parse_target(bad, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_remote_target_needs_its_reviewed_digest_on_the_allowlist() {
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("allow.json");
        let url = "http://192.0.2.7:8080/mcp";
        let digest = target_digest("192.0.2.7", 8080, "/mcp");
        let write = |v: Value| std::fs::write(&list, serde_json::to_vec(&v).unwrap()).unwrap();
        // Not listed, wrong digest, missing file: refused; the message names the digest.
        write(
            json!({"targets": [{"url": "http://192.0.2.8:8080/mcp", "reviewedTargetSha256": digest}]}),
        );
        let e = parse_target(url, Some(&list)).unwrap_err();
        assert!(e.contains(&digest), "{e}");
        write(json!({"targets": [{"url": url, "reviewedTargetSha256": "00".repeat(32)}]}));
        assert!(parse_target(url, Some(&list)).is_err());
        assert!(parse_target(url, Some(&dir.path().join("none.json"))).is_err());
        assert!(parse_target(url, None).unwrap_err().contains(&digest));
        // Listed with the right digest: accepted and recorded.
        write(json!({"targets": [{"url": url, "reviewedTargetSha256": digest}]}));
        let t = parse_target(url, Some(&list)).unwrap();
        let v = t.to_json();
        assert_eq!(v["targetKind"], "REMOTE_HTTP");
        assert_eq!(v["remoteOptIn"], true);
        assert_eq!(v["reviewedTargetSha256"], v["targetSha256"]);
        assert_eq!(
            v["allowlistSha256"],
            crate::json::canonical::sha256_hex(&std::fs::read(&list).unwrap())
        );
    }

    #[test]
    fn requests_are_written_byte_for_byte_as_before() {
        let (client, _rec, _rx) = test_client(SocketAddr::from(([127, 0, 0, 1], 9)));
        let msg =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}});
        let body = serde_json::to_vec(&msg).unwrap();
        let head = format!(
            "Host: 127.0.0.1:9\r\nAccept: application/json, text/event-stream\r\nUser-Agent: mcpres-harness/{}\r\n",
            env!("CARGO_PKG_VERSION")
        );
        let posted = |extra: &str| {
            [
                format!(
                    "POST /mcp HTTP/1.1\r\n{head}{extra}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                )
                .as_bytes(),
                &body,
            ]
            .concat()
        };
        // The opening POST: no session, no revision yet.
        assert_eq!(
            client.request_bytes(&Outgoing::post(body.clone(), &msg)),
            posted("")
        );
        {
            let mut s = client.state();
            s.session_id = Some("s-1".into());
            s.protocol_version = Some("2025-11-25".into());
        }
        let with_session = "Mcp-Session-Id: s-1\r\nMCP-Protocol-Version: 2025-11-25\r\n";
        assert_eq!(
            client.request_bytes(&Outgoing::post(body.clone(), &msg)),
            posted(with_session)
        );
        assert_eq!(
            client.request_bytes(&Outgoing::delete()),
            format!("DELETE /mcp HTTP/1.1\r\n{head}{with_session}\r\n").into_bytes()
        );
        // Stateless: no session id; the method and name headers.
        client.set_stateless("2026-07-28");
        assert_eq!(
            client.request_bytes(&Outgoing::post(body.clone(), &msg)),
            posted(
                "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n"
            )
        );
    }

    #[test]
    fn outgoing_messages_are_classified_for_the_status_rules() {
        let post = |v: Value| Outgoing::post(serde_json::to_vec(&v).unwrap(), &v);
        let r = post(
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo"}}),
        );
        assert_eq!(r.kind, Posted::Request);
        assert_eq!(r.rpc_name.as_deref(), Some("echo"));
        let n = post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert_eq!(n.kind, Posted::Notification);
        let a = post(json!({"jsonrpc": "2.0", "id": "s1", "result": {}}));
        assert_eq!(a.kind, Posted::Response);
        let u = post(
            json!({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": "mcpres://static/hello"}}),
        );
        assert_eq!(u.rpc_name.as_deref(), Some("mcpres://static/hello"));
        assert_eq!(Outgoing::delete().kind, Posted::Other);
        assert!(!header_safe("a\r\nb") && header_safe("tools/call"));
    }

    /// Read one request (head and Content-Length body) from `s`; `None` at EOF.
    async fn read_request(s: &mut TcpStream, pending: &mut Vec<u8>) -> Option<String> {
        let mut buf = [0u8; 4096];
        loop {
            if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&pending[..end]).into_owned();
                let len: usize = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                if pending.len() >= end + 4 + len {
                    let all = String::from_utf8_lossy(&pending[..end + 4 + len]).into_owned();
                    pending.drain(..end + 4 + len);
                    return Some(all);
                }
            }
            let n = s.read(&mut buf).await.ok()?;
            if n == 0 {
                return None;
            }
            pending.extend_from_slice(&buf[..n]);
        }
    }

    #[tokio::test]
    async fn a_client_reuses_its_connection_and_reconnects_when_the_server_closes_it() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let mut seen = Vec::new();
            // Connection 1: a JSON answer, then a 202, then the server closes it.
            let (mut s, _) = listener.accept().await.unwrap();
            let mut pending = Vec::new();
            seen.push(read_request(&mut s, &mut pending).await.unwrap());
            let body = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s-1\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            s.write_all(head.as_bytes()).await.unwrap();
            s.write_all(body).await.unwrap();
            seen.push(read_request(&mut s, &mut pending).await.unwrap());
            s.write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                .await
                .unwrap();
            drop(s);
            // Connection 2: an event stream ending with the terminal chunk.
            let (mut s, _) = listener.accept().await.unwrap();
            let mut pending = Vec::new();
            seen.push(read_request(&mut s, &mut pending).await.unwrap());
            let event = b"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n";
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
            s.write_all(head.as_bytes()).await.unwrap();
            s.write_all(format!("{:x}\r\n", event.len()).as_bytes())
                .await
                .unwrap();
            s.write_all(event).await.unwrap();
            s.write_all(b"\r\n0\r\n\r\n").await.unwrap();
            // Keep it open: the client must not need the close to finish.
            let _ = read_request(&mut s, &mut pending).await;
            seen
        });
        let (client, rec, mut rx) = test_client(addr);
        let send = |v: Value| {
            let out = Outgoing::post(serde_json::to_vec(&v).unwrap(), &v);
            let index = client.begin(&out);
            (out, index)
        };
        let (out, i) = send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"}));
        client.exchange(out, i).await;
        let (out, i) = send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client.exchange(out, i).await;
        // Let the server's close arrive (either way the request must go out on connection 2).
        tokio::time::sleep(Duration::from_millis(50)).await;
        let (out, i) = send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        client.exchange(out, i).await;
        client.close_idle("test over");

        let exchanges = client.state.lock().unwrap().exchanges.clone();
        let conns: Vec<(u64, bool, Option<u16>)> = exchanges
            .iter()
            .map(|x| (x.connection, x.reused, x.status))
            .collect();
        assert_eq!(
            conns,
            [
                (1, false, Some(200)),
                (1, true, Some(202)),
                (2, false, Some(200))
            ]
        );
        assert_eq!(
            exchanges[2].content_type.as_deref(),
            Some("text/event-stream")
        );
        assert_eq!(exchanges[1].body_bytes, 0);
        let mut ids = Vec::new();
        while let Ok(p) = rx.try_recv() {
            if let Pumped::Frame(f) = p {
                let v: Value = serde_json::from_slice(&f.bytes).unwrap();
                ids.push(v["id"].clone());
            }
        }
        assert_eq!(ids, [json!(1), json!(2)]);
        let seen = server.await.unwrap();
        assert!(seen[1].contains("Mcp-Session-Id: s-1\r\n"), "{}", seen[1]);
        assert!(seen.iter().all(|r| !r.contains("Connection: close")));
        let r = rec.lock().unwrap();
        let events: Vec<(String, u64)> = r
            .events
            .iter()
            .filter(|e| e["event"] == "connection-open" || e["event"] == "connection-closed")
            .map(|e| {
                (
                    e["event"].as_str().unwrap().to_string(),
                    e["connection"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            events,
            [
                ("connection-open".to_string(), 1),
                ("connection-closed".to_string(), 1),
                ("connection-open".to_string(), 2),
                ("connection-closed".to_string(), 2),
            ]
        );
        let closed_1 = r
            .events
            .iter()
            .find(|e| e["event"] == "connection-closed")
            .unwrap();
        assert_eq!(closed_1["by"], "server");
        assert!(r.http_requests.starts_with(b"POST /mcp HTTP/1.1\r\n"));
    }

    #[tokio::test]
    async fn stateless_requests_carry_method_and_name_headers_and_no_session() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut pending = Vec::new();
            let req = read_request(&mut s, &mut pending).await.unwrap();
            // A server that issues a session id anyway: a stateless client ignores it.
            s.write_all(b"HTTP/1.1 503 Service Unavailable\r\nMcp-Session-Id: nope\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nbusy")
                .await
                .unwrap();
            let second = read_request(&mut s, &mut pending).await.unwrap();
            (req, second)
        });
        let (client, _rec, mut rx) = test_client(addr);
        client.set_stateless("2026-07-28");
        for id in [7, 8] {
            let v = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo"}});
            let out = Outgoing::post(serde_json::to_vec(&v).unwrap(), &v);
            let index = client.begin(&out);
            if id == 7 {
                client.exchange(out, index).await;
            } else {
                // The server never answers the second one; give up on it.
                let _ =
                    tokio::time::timeout(Duration::from_millis(300), client.exchange(out, index))
                        .await;
            }
        }
        let (req, second) = server.await.unwrap();
        for r in [&req, &second] {
            assert!(r.contains("MCP-Protocol-Version: 2026-07-28\r\n"), "{r}");
            assert!(r.contains("Mcp-Method: tools/call\r\n"), "{r}");
            assert!(r.contains("Mcp-Name: echo\r\n"), "{r}");
            assert!(!r.to_ascii_lowercase().contains("mcp-session-id"), "{r}");
        }
        // The 503 carried no frame: the request is reported unanswered at once.
        match rx.try_recv() {
            Ok(Pumped::Unanswered(id)) => assert_eq!(id, json!(7)),
            other => panic!("expected Unanswered(7), got {other:?}"),
        }
        let x = client.state.lock().unwrap().exchanges[0].clone();
        assert_eq!((x.status, x.kind), (Some(503), Posted::Request));
    }
}
