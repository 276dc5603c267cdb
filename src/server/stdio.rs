//! stdio transport: newline-delimited JSON-RPC on stdin/stdout.
//!
//! ```text
//! stdin --frame/bound/parse--> fault decisions --> duplex --> rmcp (typed layer)
//! stdout <--single writer task <-- fault effects <-- duplex <-- rmcp
//! ```
//!
//! The pump answers what rmcp would drop silently (unparsable lines, oversized lines),
//! enforces the in-flight bound, and applies every fault on raw frames.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader, DuplexStream, WriteHalf};
use tokio::sync::{mpsc, oneshot};

use super::fault::{self, Decision, FaultId, RequestInfo};
use super::{Config, ServerError};

/// Longest wait for in-flight answers after stdin EOF.
const EOF_DRAIN: Duration = Duration::from_secs(10);

/// Buffer of the in-process pipe between the pump and rmcp.
const DUPLEX_BYTES: usize = 256 * 1024;

enum Out {
    /// Bytes to write as they are (a frame includes its newline).
    Bytes(Vec<u8>),
    /// Flush and end the transport (disconnect / partial response).
    Close,
}

/// What the response path must do for a forwarded request.
#[derive(Debug)]
struct Pending {
    decision: Option<Decision>,
}

struct Shared {
    config: Arc<Config>,
    out: mpsc::UnboundedSender<Out>,
    pending: Mutex<HashMap<String, Pending>>,
    close: Mutex<Option<oneshot::Sender<()>>>,
    to_backend: mpsc::UnboundedSender<Option<Vec<u8>>>,
    /// Ids whose late result must be discarded (cancelled by the `cancellation` fault);
    /// they no longer count as in flight.
    discard: Mutex<std::collections::HashSet<String>>,
}

impl Shared {
    fn emit(&self, v: &Value) {
        let mut bytes = v.to_string().into_bytes();
        bytes.push(b'\n');
        let _ = self.out.send(Out::Bytes(bytes));
    }

    fn close(&self) {
        let _ = self.out.send(Out::Close);
        if let Ok(mut c) = self.close.lock()
            && let Some(tx) = c.take()
        {
            let _ = tx.send(());
        }
    }

    fn forward(&self, line: &[u8]) {
        let _ = self.to_backend.send(Some(line.to_vec()));
    }

    fn pending_len(&self) -> usize {
        self.pending.lock().map(|p| p.len()).unwrap_or(0)
    }

    fn insert_pending(&self, key: String, p: Pending) {
        if let Ok(mut map) = self.pending.lock() {
            map.insert(key, p);
        }
    }

    fn take_pending(&self, key: &str) -> Option<Pending> {
        self.pending.lock().ok().and_then(|mut m| m.remove(key))
    }
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

/// Start one rmcp instance behind an in-process pipe and return our write half.
/// The backend task restarts it when it ends (for example when a client sends a
/// notification before `initialize`, which rmcp treats as the end of the session).
fn start_backend(shared: &Arc<Shared>) -> WriteHalf<DuplexStream> {
    let (ours, theirs) = tokio::io::duplex(DUPLEX_BYTES);
    let (their_read, their_write) = tokio::io::split(theirs);
    let handler = shared.config.handler();
    tokio::spawn(async move {
        match rmcp::service::serve_server(handler, (their_read, their_write)).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => eprintln!("mcpres serve: protocol session ended: {e}"),
        }
    });
    let (our_read, our_write) = tokio::io::split(ours);
    let s = shared.clone();
    tokio::spawn(async move { outbound(s, our_read).await });
    our_write
}

/// The only writer towards the protocol layer. `None` ends it (EOF for rmcp).
async fn backend_task(shared: Arc<Shared>, mut rx: mpsc::UnboundedReceiver<Option<Vec<u8>>>) {
    let mut writer = start_backend(&shared);
    while let Some(Some(mut frame)) = rx.recv().await {
        frame.push(b'\n');
        if writer.write_all(&frame).await.is_err() {
            writer = start_backend(&shared);
            if let Err(e) = writer.write_all(&frame).await {
                eprintln!("mcpres serve: cannot reach protocol layer: {e}");
            }
        }
    }
    let _ = writer.shutdown().await;
}

/// Read rmcp's output lines and apply response faults.
async fn outbound<R: AsyncRead + Unpin>(shared: Arc<Shared>, read: R) {
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let msg: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(_) => continue,
        };
        let is_response = msg.get("method").is_none() && msg.get("id").is_some();
        if is_response
            && let Some(id) = msg.get("id")
            && shared
                .discard
                .lock()
                .is_ok_and(|mut d| d.remove(&id_key(id)))
        {
            continue; // no late success after an injected cancellation
        }
        let pending = if is_response {
            msg.get("id")
                .and_then(|id| shared.take_pending(&id_key(id)))
        } else {
            None
        };
        let raw = || {
            let mut b = line.clone().into_bytes();
            b.push(b'\n');
            b
        };
        let Some(d) = pending.and_then(|p| p.decision) else {
            let _ = shared.out.send(Out::Bytes(raw()));
            continue;
        };
        let engine = &shared.config.engine;
        match d.fault {
            FaultId::Timeout | FaultId::Cancellation => {} // withheld: never delivered
            FaultId::DelayedResponse => {
                let s = shared.clone();
                let delay = engine.params.delay_ms;
                let bytes = raw();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    let _ = s.out.send(Out::Bytes(bytes));
                });
            }
            FaultId::MalformedMessage => {
                let (bytes, _) = fault::corrupt_bytes(&d, &raw());
                let _ = shared.out.send(Out::Bytes(bytes));
            }
            FaultId::PartialResponse => {
                let bytes = raw();
                let n = fault::prefix_len(&d, bytes.len() - 1);
                let _ = shared.out.send(Out::Bytes(bytes[..n].to_vec()));
                shared.close();
            }
            _ => match fault::rewrite_response(&d, &msg, shared.config.other_revision()) {
                Some((frames, _)) => frames.iter().for_each(|f| shared.emit(f)),
                None => {
                    let _ = shared.out.send(Out::Bytes(raw()));
                }
            },
        }
    }
}

/// Describe, log and (for effects decided at arrival) perform a decision. Returns
/// `true` when the request must still be forwarded to the protocol layer.
fn on_decision(shared: &Arc<Shared>, d: &Decision) -> bool {
    let engine = &shared.config.engine;
    let params = &engine.params;
    match d.fault {
        FaultId::ProtocolError => {
            engine.record(
                d,
                "rejected as unknown method (-32601) without execution",
                json!({}),
            );
            shared.emit(&fault::protocol_error_response(d));
            false
        }
        FaultId::AuthorizationRejection => {
            engine.record(
                d,
                "rejected as unauthorized (-32000, wrong-audience) without execution",
                json!({}),
            );
            shared.emit(&fault::authorization_error_response(d));
            false
        }
        FaultId::ResourceExhaustion => {
            let limit = shared.config.args.max_in_flight;
            engine.record(
                d,
                "rejected as overloaded (-32000, concurrency-over-limit) without execution",
                json!({"limit": limit}),
            );
            shared.emit(&fault::overload_response(&d.request.id, limit));
            false
        }
        FaultId::DependencyFailure | FaultId::FilesystemPublicationFailure => {
            engine.record(
                d,
                "answered with a synthetic failure without execution",
                json!({}),
            );
            shared.emit(&fault::synthetic_failure_response(d));
            false
        }
        FaultId::ProcessCrash => {
            engine.record(
                d,
                "process aborted (SIGABRT) before answering",
                json!({"signal": "SIGABRT"}),
            );
            std::process::abort();
        }
        FaultId::TransportDisconnect => {
            engine.record(
                d,
                "transport closed before answering; process exits",
                json!({}),
            );
            shared.close();
            false
        }
        FaultId::CleanupFailure => {
            match engine.retain_handle(d) {
                Ok(path) => engine.record(
                    d,
                    "retained handle left behind; request served normally",
                    json!({"residue": path.display().to_string()}),
                ),
                Err(e) => engine.record(
                    d,
                    "could not create retained handle",
                    json!({"error": e.to_string()}),
                ),
            }
            true
        }
        FaultId::Timeout => {
            engine.record(
                d,
                "response withheld (never delivered)",
                json!({"budgetMs": params.budget_ms}),
            );
            true
        }
        FaultId::Cancellation => {
            let at = params.budget_ms / 2;
            engine.record(
                d,
                "operation cancelled at half budget; -32800 sent, result discarded",
                json!({"cancelAfterMs": at}),
            );
            true
        }
        FaultId::DelayedResponse => {
            engine.record(d, "response delayed", json!({"delayMs": params.delay_ms}));
            true
        }
        FaultId::MalformedMessage => {
            engine.record(
                d,
                "response frame corrupted with invalid UTF-8 (0xC3 0x28) at a seeded offset",
                json!({"rand": d.rand}),
            );
            true
        }
        FaultId::PartialResponse => {
            engine.record(
                d,
                "response cut after a seeded prefix; transport closed",
                json!({"rand": d.rand}),
            );
            true
        }
        FaultId::SchemaViolation => {
            engine.record(
                d,
                "required result member removed",
                json!({"method": d.request.method}),
            );
            true
        }
        FaultId::Duplicate => {
            engine.record(d, "response delivered twice", json!({"copies": 2}));
            true
        }
        FaultId::Reorder => {
            engine.record(
                d,
                "uncorrelated response (unknown id) delivered before the real one",
                json!({}),
            );
            true
        }
        FaultId::ExtensionMismatch => {
            engine.record(
                d,
                "unadvertised extension request sent before the response",
                json!({"method": "dev.mcpres.unadvertised/probe"}),
            );
            true
        }
        FaultId::CacheStalePoisoned => {
            engine.record(
                d,
                "result marked with a stale cache key (other revision, old server version)",
                json!({"protocolVersion": shared.config.other_revision()}),
            );
            true
        }
    }
}

enum Frame {
    Line(Vec<u8>),
    TooLong,
    Eof,
}

async fn read_frame<R: AsyncBufReadExt + Unpin>(r: &mut R, max: usize) -> std::io::Result<Frame> {
    let mut buf = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if too_long {
                Frame::TooLong
            } else if buf.is_empty() {
                Frame::Eof
            } else {
                Frame::Line(buf)
            });
        }
        let (take, done) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > max + 1 {
                too_long = true;
                buf = Vec::new();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        r.consume(take);
        if done {
            if too_long {
                return Ok(Frame::TooLong);
            }
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(Frame::Line(buf));
        }
    }
}

pub(crate) async fn serve(config: Arc<Config>) -> Result<(), ServerError> {
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Out>();
    let (close_tx, mut close_rx) = oneshot::channel::<()>();
    let (backend_tx, backend_rx) = mpsc::unbounded_channel::<Option<Vec<u8>>>();
    let shared = Arc::new(Shared {
        config: config.clone(),
        out: out_tx,
        pending: Mutex::new(HashMap::new()),
        close: Mutex::new(Some(close_tx)),
        to_backend: backend_tx,
        discard: Mutex::new(std::collections::HashSet::new()),
    });

    // The only writer of stdout.
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(msg) = out_rx.recv().await {
            match msg {
                Out::Bytes(b) => {
                    if stdout.write_all(&b).await.is_err() || stdout.flush().await.is_err() {
                        break;
                    }
                }
                Out::Close => break,
            }
        }
        let _ = stdout.flush().await;
    });

    tokio::spawn(backend_task(shared.clone(), backend_rx));
    let mut stdin = BufReader::new(tokio::io::stdin());
    let max = config.args.max_message_bytes;
    let shutdown = super::shutdown_signal();
    tokio::pin!(shutdown);
    let mut disconnected = false;
    // rmcp ends a session whose first message is not a request; until a lifecycle has
    // started (an `initialize`, or a modern request other than the discover probe),
    // notifications and responses are dropped here instead (they need no answer).
    let mut lifecycle_started = false;
    // A termination signal ends the server promptly, even with stdout full.
    let mut signalled = false;
    // One stdio process serves one legacy session: a second `initialize` is
    // refused rather than silently renegotiating the session under way.
    let mut initialized = false;
    let mut rate = config
        .args
        .rate_limit
        .map(|(n, ms)| super::rate::RateLog::new(n, Duration::from_millis(ms)));
    loop {
        let frame = tokio::select! {
            f = read_frame(&mut stdin, max) => f,
            _ = &mut shutdown => { signalled = true; break }
            _ = &mut close_rx => { disconnected = true; break }
        };
        let line = match frame {
            Ok(Frame::Line(l)) => l,
            Ok(Frame::TooLong) => {
                shared.emit(&fault::error_response(
                    &Value::Null,
                    -32600,
                    "Invalid Request: message too large",
                    Some(json!({"maxBytes": max})),
                ));
                continue;
            }
            Ok(Frame::Eof) => {
                // The client is done sending: answer what is in flight (bounded), then end.
                let drain = async {
                    while shared.pending_len() > 0 {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    // Delayed answers are emitted from timers after leaving
                    // `pending`: wait for them only when the plan has any.
                    if config.engine.plans(FaultId::DelayedResponse) {
                        tokio::time::sleep(Duration::from_millis(config.engine.params.delay_ms))
                            .await;
                    }
                };
                tokio::select! {
                    _ = tokio::time::timeout(EOF_DRAIN, drain) => {}
                    _ = &mut shutdown => signalled = true,
                    _ = &mut close_rx => disconnected = true,
                }
                break;
            }
            Err(e) => {
                eprintln!("mcpres serve: stdin: {e}");
                break;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let msg: Value = match serde_json::from_slice(&line) {
            Ok(v) => v,
            Err(_) => {
                shared.emit(&fault::error_response(
                    &Value::Null,
                    -32700,
                    "Parse error",
                    None,
                ));
                continue;
            }
        };
        // A client's answer to the injected extension probe: consumed here.
        if msg.get("method").is_none()
            && msg
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|s| s.starts_with("mcpres-ext-"))
        {
            continue;
        }
        if msg.get("method").and_then(Value::as_str) == Some("notifications/cancelled")
            && let Some(id) = msg.pointer("/params/requestId")
        {
            shared.take_pending(&id_key(id));
        }
        if let Some(answer) = super::invalid_params(&msg) {
            shared.emit(&answer);
            continue;
        }
        let info = RequestInfo::from_message(&msg);
        match &info {
            Some(i) if i.method != "server/discover" && i.method != "ping" => {
                lifecycle_started = true
            }
            Some(_) => {}
            None if !lifecycle_started => {
                eprintln!(
                    "mcpres serve: ignoring a notification or response sent before the session started"
                );
                continue;
            }
            None => {}
        }
        if let Some(info) = info {
            if info.method == "initialize" {
                if initialized {
                    shared.emit(&fault::error_response(
                        &info.id,
                        -32600,
                        "Invalid Request: this session is already initialized",
                        None,
                    ));
                    continue;
                }
                initialized = true;
            }
            if info.method == "server/discover" && !config.modern_enabled() {
                shared.emit(&fault::error_response(
                    &info.id,
                    -32601,
                    "Method not found",
                    Some(json!({"method": info.method})),
                ));
                continue;
            }
            if info.method != "initialize"
                && let Some(r) = rate.as_mut()
                && let Err(wait) = r.admit(std::time::Instant::now())
            {
                shared.emit(&fault::rate_limited_response(
                    &info.id,
                    r.limit(),
                    r.window().as_millis() as u64,
                    (wait.as_millis() as u64).max(1),
                ));
                continue;
            }
            if shared.pending_len() >= config.args.max_in_flight {
                shared.emit(&fault::overload_response(
                    &info.id,
                    config.args.max_in_flight,
                ));
                continue;
            }
            let id = info.id.clone();
            let decision = config.engine.on_request(info);
            if let Some(d) = &decision {
                if !on_decision(&shared, d) {
                    if d.fault == FaultId::TransportDisconnect {
                        disconnected = true;
                        break;
                    }
                    continue;
                }
                if d.fault == FaultId::Cancellation {
                    let s = shared.clone();
                    let d2 = d.clone();
                    let at = config.engine.params.budget_ms / 2;
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(at)).await;
                        let key = id_key(&d2.request.id);
                        if s.take_pending(&key).is_some()
                            && let Ok(mut d) = s.discard.lock()
                        {
                            d.insert(key);
                        }
                        s.emit(&fault::cancelled_response(&d2));
                        // Release the operation controller in the protocol layer too.
                        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": d2.request.id, "reason": "cancel-at-half-budget"}});
                        s.forward(cancel.to_string().as_bytes());
                    });
                }
            }
            shared.insert_pending(id_key(&id), Pending { decision });
        }
        shared.forward(&line);
    }

    let _ = shared.to_backend.send(None);
    if !disconnected {
        // An answer leaves `pending` an instant before it is queued for
        // stdout (on another task): a short pause keeps the close behind it.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    shared.close();
    // The writer may be blocked on a stdout nobody reads: after a signal,
    // give it a moment only (what it could not write is lost either way).
    let flush_limit = if signalled {
        Duration::from_millis(100)
    } else {
        Duration::from_secs(2)
    };
    let _ = tokio::time::timeout(flush_limit, writer).await;
    Ok(())
}
