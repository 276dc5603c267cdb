//! A Streamable HTTP front for a stdio server, so that the official suite
//! (which reaches servers over HTTP only) can run against it.
//!
//! A stdio server process holds one session, and every scenario of the suite
//! opens one of its own, so each `initialize` starts a fresh process of the
//! server (through the subject driver: in its sandbox, its end observed), and
//! the session id the bridge hands out names that process. Every other message
//! of the session is written to that process's stdin as one line; what it
//! writes on stdout comes back:
//!
//! - a request's POST is answered with an SSE stream that carries the
//!   server's messages until the response to that request, then ends;
//! - a notification or a response POSTed by the client is written and
//!   answered 202;
//! - a server message that no open stream can carry (nothing is waiting) is
//!   counted as undelivered;
//! - GET is answered 405 (the bridge offers no stream of its own), DELETE ends
//!   the session's process.
//!
//! What the bridge does at the HTTP layer (Origin and Host validation, status
//! codes, SSE framing) is the bridge's, not the server's: the run does not
//! score the suite's checks of that layer (see `TRANSPORT_SCENARIOS`).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::produce::drive::ident::random_hex;
use crate::produce::profile::check::Ctx;
use crate::produce::profile::probe::Probe;

/// Scenarios of the suite that judge the HTTP transport itself: through the
/// bridge they would judge mcpres, so their checks are recorded as not scored.
pub const TRANSPORT_SCENARIOS: [&str; 3] = [
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "server-sse-polling",
];

/// The most bytes a request head or body may hold.
const MAX_HEAD: usize = 64 << 10;
const MAX_BODY: usize = 4 << 20;
/// The most server processes alive at once: a session beyond them ends the
/// one used longest ago that has no open stream (the suite never returns to
/// a finished scenario's session; a client that does gets 404, which MCP
/// answers by opening a new session).
pub const MAX_LIVE_SESSIONS: usize = 8;
/// How long a request's stream waits for the server's response.
const ANSWER_LIMIT: Duration = Duration::from_secs(60);

/// One session: a server process, what of its stdout was dispatched, and
/// where each waiting request's messages go.
struct Session {
    /// Taken when the bridge ends it.
    probe: Mutex<Option<Probe>>,
    /// How far its stdout was dispatched.
    cursor: Mutex<usize>,
    /// Open streams: the request id (canonical text) and its sink, newest last.
    waiting: Mutex<Vec<(String, std::sync::mpsc::Sender<Value>)>>,
    ended: AtomicBool,
    /// When a message of the session last came.
    used: Mutex<Instant>,
}

/// The bridge's shared state.
struct State<'c, 'a> {
    ctx: &'c Ctx<'a>,
    path: String,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Sessions ended (DELETE, or for room), their processes to be finished.
    ended: Mutex<Vec<Arc<Session>>>,
    /// Their ids.
    ended_ids: Mutex<Vec<String>>,
    started: AtomicUsize,
    evicted: AtomicUsize,
    expired_hits: AtomicUsize,
    undelivered: AtomicUsize,
    refused: AtomicUsize,
    failures: Mutex<Vec<String>>,
    /// Every accepted connection, shut down when the bridge stops (so that no
    /// thread waits on a request that will not come).
    conns: Mutex<Vec<TcpStream>>,
}

/// What the bridge did, for the run record; and the processes it started,
/// finished through the run's context (their ends observed).
pub struct Bridged {
    pub record: Value,
    pub transcripts: Vec<Value>,
}

/// A running bridge: its URL, and `stop` to end it.
pub struct Bridge<'c, 'a> {
    pub url: String,
    listener: TcpListener,
    state: Arc<State<'c, 'a>>,
}

fn is_loopback_host(host: &str) -> bool {
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    };
    matches!(name, "127.0.0.1" | "localhost" | "::1")
}

fn origin_is_loopback(origin: &str) -> bool {
    origin
        .split_once("://")
        .is_some_and(|(_, rest)| is_loopback_host(rest.split('/').next().unwrap_or("")))
}

/// The canonical text of a JSON-RPC id (for matching a response to its stream).
fn id_key(id: &Value) -> String {
    id.to_string()
}

impl<'c, 'a> Bridge<'c, 'a> {
    /// Listen on a free loopback port; `ctx` starts each session's process.
    pub fn bind(ctx: &'c Ctx<'a>) -> std::io::Result<Bridge<'c, 'a>> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let path = "/mcp".to_string();
        Ok(Bridge {
            url: format!("http://127.0.0.1:{port}{path}"),
            listener,
            state: Arc::new(State {
                ctx,
                path,
                sessions: Mutex::new(HashMap::new()),
                ended: Mutex::new(Vec::new()),
                ended_ids: Mutex::new(Vec::new()),
                started: AtomicUsize::new(0),
                evicted: AtomicUsize::new(0),
                expired_hits: AtomicUsize::new(0),
                undelivered: AtomicUsize::new(0),
                refused: AtomicUsize::new(0),
                failures: Mutex::new(Vec::new()),
                conns: Mutex::new(Vec::new()),
            }),
        })
    }

    /// Serve until `done` returns true (polled), then end every session's
    /// process and say what happened.
    pub fn serve_until(self, mut done: impl FnMut() -> bool) -> Bridged {
        std::thread::scope(|scope| {
            let state = &self.state;
            loop {
                if done() {
                    break;
                }
                match self.listener.accept() {
                    Ok((stream, _)) => {
                        let _ = stream.set_nonblocking(false);
                        if let Ok(c) = stream.try_clone() {
                            state.conns.lock().expect("conns").push(c);
                        }
                        scope.spawn(move || connection(state, stream));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            // Every open stream ends: their sessions' processes are ended below.
            for s in state.sessions.lock().expect("sessions").values() {
                s.ended.store(true, Ordering::SeqCst);
                s.waiting.lock().expect("waiting").clear();
            }
            for c in state.conns.lock().expect("conns").iter() {
                let _ = c.shutdown(Shutdown::Both);
            }
        });
        let state = &self.state;
        let mut sessions: Vec<Arc<Session>> =
            std::mem::take(&mut *state.ended.lock().expect("ended"));
        sessions.extend(
            state
                .sessions
                .lock()
                .expect("sessions")
                .drain()
                .map(|(_, s)| s),
        );
        let transcripts = sessions
            .iter()
            .filter_map(|s| s.probe.lock().expect("probe").take())
            .map(|p| end_session(state.ctx, p))
            .collect();
        Bridged {
            record: json!({
                "sessionsStarted": state.started.load(Ordering::SeqCst),
                "maxLiveSessions": MAX_LIVE_SESSIONS,
                "sessionsEndedForRoom": state.evicted.load(Ordering::SeqCst),
                "requestsForEndedSessions": state.expired_hits.load(Ordering::SeqCst),
                "serverMessagesUndelivered": state.undelivered.load(Ordering::SeqCst),
                "requestsRefused": state.refused.load(Ordering::SeqCst),
                "failures": *state.failures.lock().expect("failures"),
                "notScoredScenarios": TRANSPORT_SCENARIOS,
            }),
            transcripts,
        }
    }
}

/// End a session's process the way MCP ends a stdio session (its stdin
/// closed, a moment to exit), then through the driver (SIGTERM, the group).
fn end_session(ctx: &Ctx, mut probe: Probe) -> Value {
    probe.close_stdin();
    let exited = probe.wait_exit(Duration::from_secs(2)).is_some();
    ctx.finish(probe, json!({"exitedOnStdinClose": exited}))
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl State<'_, '_> {
    fn was_ended(&self, sid: &str) -> bool {
        self.ended_ids
            .lock()
            .expect("ended ids")
            .iter()
            .any(|s| s == sid)
    }
}

/// Before a new session: with [`MAX_LIVE_SESSIONS`] alive, end the one used
/// longest ago that has no open stream (its input closed, as MCP ends a
/// stdio session; its process finished with the others at the end).
fn make_room(state: &State) {
    let mut sessions = state.sessions.lock().expect("sessions");
    if sessions.len() < MAX_LIVE_SESSIONS {
        return;
    }
    let oldest = sessions
        .iter()
        .filter(|(_, s)| s.waiting.lock().expect("waiting").is_empty())
        .min_by_key(|(_, s)| *s.used.lock().expect("used"))
        .map(|(k, _)| k.clone());
    let Some(sid) = oldest else { return };
    let Some(s) = sessions.remove(&sid) else {
        return;
    };
    drop(sessions);
    s.ended.store(true, Ordering::SeqCst);
    if let Some(p) = s.probe.lock().expect("probe").as_mut() {
        p.close_stdin();
    }
    state.evicted.fetch_add(1, Ordering::SeqCst);
    state.ended_ids.lock().expect("ended ids").push(sid);
    state.ended.lock().expect("ended").push(s);
}

/// Read one request from `reader`; `None` at the connection's end or on a
/// request that cannot be read (the connection is then closed).
fn read_request(reader: &mut BufReader<TcpStream>) -> Result<Option<Request>, u16> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = reader
            .by_ref()
            .take((MAX_HEAD - head.len().min(MAX_HEAD)) as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|_| 400u16)?;
        if n == 0 {
            return if head.is_empty() { Ok(None) } else { Err(400) };
        }
        head.extend_from_slice(&line);
        if head.len() > MAX_HEAD {
            return Err(431);
        }
        if line == b"\r\n" || line == b"\n" {
            if head.len() <= 2 {
                // A stray line break between requests.
                head.clear();
                continue;
            }
            break;
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => return Err(400),
    }
    let method = req.method.unwrap_or("").to_string();
    let path = req.path.unwrap_or("").to_string();
    let headers: Vec<(String, String)> = req
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_string(),
                String::from_utf8_lossy(h.value).into_owned(),
            )
        })
        .collect();
    let mut request = Request {
        method,
        path,
        headers,
        body: Vec::new(),
    };
    if request
        .header("transfer-encoding")
        .is_some_and(|v| !v.eq_ignore_ascii_case("identity"))
    {
        return Err(411);
    }
    let len: usize = match request.header("content-length") {
        Some(v) => v.trim().parse().map_err(|_| 400u16)?,
        None => 0,
    };
    if len > MAX_BODY {
        return Err(413);
    }
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).map_err(|_| 400u16)?;
    request.body = body;
    Ok(Some(request))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        _ => "Error",
    }
}

fn respond(stream: &mut TcpStream, status: u16, extra: &[(&str, &str)], body: &[u8]) -> bool {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).is_ok() && stream.write_all(body).is_ok()
}

fn jsonrpc_error(stream: &mut TcpStream, status: u16, code: i64, message: &str) -> bool {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    respond(
        stream,
        status,
        &[("content-type", "application/json")],
        body.to_string().as_bytes(),
    )
}

/// Serve one connection: requests one after another until it closes (or a
/// stream ends it).
fn connection(state: &State, stream: TcpStream) {
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut stream = stream;
    loop {
        let request = match read_request(&mut reader) {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(status) => {
                state.refused.fetch_add(1, Ordering::SeqCst);
                let _ = respond(&mut stream, status, &[("connection", "close")], b"");
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
        };
        if !handle(state, &mut stream, &request) {
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
    }
}

/// Handle one request; false when the connection is to be closed.
fn handle(state: &State, stream: &mut TcpStream, req: &Request) -> bool {
    // DNS rebinding: a browser page elsewhere must not reach a loopback
    // server. The Host and any Origin must be loopback.
    let host_ok = req.header("host").is_some_and(is_loopback_host);
    let origin_ok = req.header("origin").is_none_or(origin_is_loopback);
    if !host_ok || !origin_ok {
        state.refused.fetch_add(1, Ordering::SeqCst);
        return respond(stream, 403, &[], b"");
    }
    let target = req.path.split('?').next().unwrap_or("");
    if target != state.path {
        return respond(stream, 404, &[], b"");
    }
    let session_id = req.header("mcp-session-id").map(str::to_owned);
    match req.method.as_str() {
        "POST" => post(state, stream, req, session_id),
        "GET" => respond(stream, 405, &[("allow", "POST, DELETE")], b""),
        "DELETE" => {
            let Some(id) = session_id else {
                return respond(stream, 400, &[], b"");
            };
            let gone = state.sessions.lock().expect("sessions").remove(&id);
            match gone {
                Some(s) => {
                    // MCP ends a stdio session by closing the server's input.
                    s.ended.store(true, Ordering::SeqCst);
                    if let Some(p) = s.probe.lock().expect("probe").as_mut() {
                        p.close_stdin();
                    }
                    state.ended.lock().expect("ended").push(s);
                    state.ended_ids.lock().expect("ended ids").push(id);
                    respond(stream, 200, &[], b"")
                }
                None => respond(stream, 404, &[], b""),
            }
        }
        _ => respond(stream, 405, &[("allow", "POST, DELETE")], b""),
    }
}

fn post(state: &State, stream: &mut TcpStream, req: &Request, session_id: Option<String>) -> bool {
    let Ok(msg) = serde_json::from_slice::<Value>(&req.body) else {
        return jsonrpc_error(stream, 400, -32700, "Parse error");
    };
    if !msg.is_object() {
        return jsonrpc_error(
            stream,
            400,
            -32600,
            "Invalid Request: one JSON-RPC message per POST",
        );
    }
    let is_request = msg.get("method").is_some() && msg.get("id").is_some();
    let initialize = msg.get("method").and_then(Value::as_str) == Some("initialize");
    let (sid, session) = if initialize {
        make_room(state);
        // A fresh server process for a fresh session.
        let probe = match state.ctx.start() {
            Ok(p) => p,
            Err(why) => {
                state.failures.lock().expect("failures").push(why.clone());
                return jsonrpc_error(stream, 500, -32603, "the server could not be started");
            }
        };
        state.started.fetch_add(1, Ordering::SeqCst);
        let sid = random_hex(16);
        let session = Arc::new(Session {
            probe: Mutex::new(Some(probe)),
            cursor: Mutex::new(0),
            waiting: Mutex::new(Vec::new()),
            ended: AtomicBool::new(false),
            used: Mutex::new(Instant::now()),
        });
        state
            .sessions
            .lock()
            .expect("sessions")
            .insert(sid.clone(), session.clone());
        (sid, session)
    } else {
        let Some(sid) = session_id else {
            return jsonrpc_error(stream, 400, -32000, "Bad Request: no Mcp-Session-Id");
        };
        let Some(session) = state.sessions.lock().expect("sessions").get(&sid).cloned() else {
            if state.was_ended(&sid) {
                state.expired_hits.fetch_add(1, Ordering::SeqCst);
            }
            return respond(stream, 404, &[], b"");
        };
        *session.used.lock().expect("used") = Instant::now();
        (sid, session)
    };
    let mut line = serde_json::to_vec(&msg).unwrap_or_default();
    line.push(b'\n');
    if !is_request {
        if let Some(p) = session.probe.lock().expect("probe").as_mut() {
            p.send(line);
        }
        return respond(stream, 202, &[("mcp-session-id", &sid)], b"");
    }
    // A request: its stream carries the server's messages until its response.
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    let key = id_key(&msg["id"]);
    session
        .waiting
        .lock()
        .expect("waiting")
        .push((key.clone(), tx));
    if let Some(p) = session.probe.lock().expect("probe").as_mut() {
        p.send(line);
    }
    // The stream's head goes out with its first message: a process that
    // ends before it says anything gets a gateway's 502 instead (the bridge's
    // own answer, never one in the server's name).
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nmcp-session-id: {sid}\r\nconnection: close\r\n\r\n"
    );
    let mut opened = false;
    let until = Instant::now() + ANSWER_LIMIT;
    // This stream pumps the session's stdout while it is open (any open
    // stream may: each line is dispatched once, under the session's lock).
    loop {
        pump(state, &session);
        match rx.recv_timeout(Duration::from_millis(3)) {
            Ok(m) => {
                let done = m.get("id").map(id_key).as_deref() == Some(key.as_str())
                    && m.get("method").is_none();
                let mut bytes = if opened {
                    Vec::new()
                } else {
                    head.clone().into_bytes()
                };
                opened = true;
                bytes.extend_from_slice(format!("event: message\ndata: {m}\n\n").as_bytes());
                if stream.write_all(&bytes).is_err() || done {
                    break;
                }
                continue;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if Instant::now() >= until || session.ended.load(Ordering::SeqCst) {
            break;
        }
        // The process ended and every line of it was dispatched: no
        // response will come, and the stream ends now.
        if exhausted(&session) {
            pump(state, &session);
            if rx.try_recv().is_err() {
                break;
            }
        }
    }
    if !opened {
        let mut failures = state.failures.lock().expect("failures");
        if failures.len() < 64 {
            failures.push(format!(
                "a request's stream ended before the server said anything ({})",
                msg["method"].as_str().unwrap_or("?")
            ));
        }
        drop(failures);
        let _ = jsonrpc_error(
            stream,
            502,
            -32603,
            "mcpres bridge: the server process ended or stayed silent without answering",
        );
    }
    session
        .waiting
        .lock()
        .expect("waiting")
        .retain(|(k, _)| k != &key);
    false
}

/// The session's process closed its stdout and all of it was dispatched.
fn exhausted(session: &Session) -> bool {
    let mut probe = session.probe.lock().expect("probe");
    let Some(probe) = probe.as_mut() else {
        return true;
    };
    if !probe.stdout_closed() && probe.try_exit().is_none() {
        return false;
    }
    // After an exit the reader may still be draining the pipe.
    let _ = probe.drained(Duration::from_millis(200));
    let cursor = *session.cursor.lock().expect("cursor");
    probe.lines_since(cursor).0.is_empty()
}

/// Dispatch the session's new stdout lines: a response to its waiting
/// stream; any other message to the newest open stream (or undelivered).
fn pump(state: &State, session: &Session) {
    let lines = {
        let probe = session.probe.lock().expect("probe");
        let Some(probe) = probe.as_ref() else { return };
        let mut cursor = session.cursor.lock().expect("cursor");
        let (lines, next) = probe.lines_since(*cursor);
        *cursor = next;
        lines
    };
    for (_, line) in lines {
        let Ok(m) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        let waiting = session.waiting.lock().expect("waiting");
        let is_response = m.get("method").is_none();
        let target = if is_response {
            let key = m.get("id").map(id_key);
            waiting.iter().find(|(k, _)| Some(k) == key.as_ref())
        } else {
            waiting.last()
        };
        match target {
            Some((_, tx)) => {
                let _ = tx.send(m);
            }
            None => {
                state.undelivered.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_and_origins_pass() {
        for ok in [
            "127.0.0.1:8080",
            "localhost:1",
            "localhost",
            "[::1]:80",
            "127.0.0.1",
        ] {
            assert!(is_loopback_host(ok), "{ok}");
        }
        for bad in [
            "evil.example.com",
            "evil.example.com:80",
            "10.0.0.1:80",
            "127.0.0.2:1",
            "",
        ] {
            assert!(!is_loopback_host(bad), "{bad}");
        }
        assert!(origin_is_loopback("http://localhost:3000"));
        assert!(origin_is_loopback("http://127.0.0.1"));
        assert!(!origin_is_loopback("http://evil.example.com"));
        assert!(!origin_is_loopback("null"));
    }

    #[test]
    fn ids_match_by_their_json_text() {
        assert_eq!(id_key(&json!(7)), id_key(&json!(7)));
        assert_ne!(id_key(&json!(7)), id_key(&json!("7")));
    }
}
