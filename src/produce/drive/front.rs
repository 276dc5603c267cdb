//! The shim's HTTP front: over Streamable HTTP an operational control that acts on the
//! conversation (its answers held) cannot be injected into the subject's stdout, so the
//! shim stands in front of the subject's port instead. The runner connects to the port it
//! gave the launch (`httpFront`); the subject serves on another one the shim picks
//! (`{backport}` in its arguments and environment), and every connection the runner opens
//! is relayed to it byte for byte, with each response held as the spec says.
//!
//! The front listens only once the subject's own port accepts connections, so a start is
//! still the subject's start: a runner that waits for the port to accept waits for the
//! subject. Without a limit, a claim, a repeated failure or a tools edit in the spec,
//! nothing is parsed or rewritten: the runner's stored bytes are what the front passed on,
//! when it passed them on. With one, the front reads each connection's first request
//! whole before anything reaches the subject, and (for a claim, a repeated failure or an
//! edit) the subject's response whole before it answers; what it answers in the subject's
//! place is an injected control, and the record names the injection.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// What the front does with a request over a limit: the shim's stdio gate, per request
/// (each request of the runner comes on a connection of its own).
#[derive(Debug, Default, Clone)]
pub struct Limits {
    /// At most this many requests in flight to the subject (a request is in flight from
    /// when it is passed on to when the subject's response to it is whole, or its
    /// connection ends); 0: no limit.
    pub in_flight: usize,
    /// Over `in_flight`: refuse at once with an overload error (else: never answer).
    pub reject: bool,
    /// A refusal without `data.retryAfterMs`.
    pub no_hint: bool,
    /// At most this many requests in any span of `window`; 0: no rate limit.
    pub rate: usize,
    pub window: Duration,
    /// Over `rate`: refuse at once with a rate-limit error and a hint (else: never answer).
    pub reject_rate: bool,
    /// What becomes of a request whose id came before (the shim's stdio dedupe, per
    /// request): nothing is done about it when `None`.
    pub duplicate: Option<Duplicate>,
    /// A tool whose calls the front answers with a success, whatever the subject says (a
    /// swallowed failure): the call is passed on to the subject, whose answer is read
    /// whole and discarded before the success goes back. Empty: none.
    pub claim_tool: String,
    /// The tools listed in each response changed so (renamed, one left out, one added):
    /// the response is read whole, changed and sent on with a length of its own.
    pub edit: Option<super::shim::Edit>,
    /// A tool whose first failed answer the front repeats to every later call of it (a
    /// failure cached): each call is still passed on, its answer read whole, and while a
    /// failure is kept the kept one goes back under the call's id. Empty: none.
    pub sticky_tool: String,
    /// How long a failure is kept (0: for ever).
    pub sticky_for: Duration,
    /// The subject's response bytes that the runner's connection does not take at once
    /// are dropped (output lost under backpressure): each is written without waiting,
    /// on a connection whose send buffer is kept small.
    pub drop_when_full: bool,
}

/// The front's answer to a request delivered again (an id it has passed on before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplicate {
    /// From then on nothing more is passed on: every connection, that one too, is held
    /// open and never answered (a transport, or a subject, that stalls on a duplicate).
    Deaf,
    /// The copy is not passed on: its connection is closed without an answer
    /// (suppression at the transport); everything else passes.
    Drop,
}

impl Limits {
    fn any(&self) -> bool {
        self.in_flight > 0
            || self.rate > 0
            || self.duplicate.is_some()
            || !self.claim_tool.is_empty()
            || self.edit.is_some()
            || !self.sticky_tool.is_empty()
    }
}

/// The front's shared state: the requests in flight and the rate's log.
struct Gate {
    limits: Limits,
    in_flight: Mutex<usize>,
    admitted: Mutex<std::collections::VecDeque<Instant>>,
    /// The ids passed on so far (as JSON text), and whether a duplicate made the front
    /// deaf.
    seen: Mutex<(std::collections::HashSet<String>, bool)>,
    /// The sticky tool's failure kept (its answer) and since when.
    kept: Mutex<Option<(Value, Instant)>>,
}

/// What becomes of one request.
enum Fate {
    /// Passed on (`counted`: it holds a place in flight until its answer is whole).
    Pass { counted: bool },
    /// Never answered: the connection is held open until the runner leaves.
    Drop,
    /// Answered at once by the front with this JSON-RPC error.
    Refuse(Value),
    /// Closed at once without an answer.
    Close,
    /// Passed on, the subject's answer read and discarded, and answered by the front with
    /// this success.
    Claim(Value),
}

impl Gate {
    fn fate(&self, request: Option<Value>, tool: Option<&str>) -> Fate {
        let l = &self.limits;
        if let Some(id) = &request
            && !l.claim_tool.is_empty()
            && tool == Some(l.claim_tool.as_str())
        {
            return Fate::Claim(json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": "stored"}]}}));
        }
        if let Some(how) = l.duplicate {
            let mut seen = self.seen.lock().expect("seen lock");
            if seen.1 {
                return Fate::Drop;
            }
            if let Some(id) = &request
                && !seen.0.insert(id.to_string())
            {
                if how == Duplicate::Drop {
                    return Fate::Close;
                }
                seen.1 = true;
                return Fate::Drop;
            }
        }
        let Some(id) = request else {
            return Fate::Pass { counted: false };
        };
        if l.rate > 0 {
            let now = Instant::now();
            let mut log = self.admitted.lock().expect("rate lock");
            while log
                .front()
                .is_some_and(|t| now.saturating_duration_since(*t) >= l.window)
            {
                log.pop_front();
            }
            if log.len() >= l.rate {
                let wait = log
                    .front()
                    .map_or(l.window, |t| l.window.saturating_sub(now - *t));
                return if l.reject_rate {
                    let ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
                    Fate::Refuse(refusal(
                        id,
                        "rate limited: too many requests in the window",
                        Some(ms),
                    ))
                } else {
                    Fate::Drop
                };
            }
            log.push_back(now);
        }
        if l.in_flight > 0 {
            let mut n = self.in_flight.lock().expect("count lock");
            if *n >= l.in_flight {
                return if l.reject {
                    let hint = (!l.no_hint).then_some(100);
                    Fate::Refuse(refusal(id, "overloaded: too many requests in flight", hint))
                } else {
                    Fate::Drop
                };
            }
            *n += 1;
            return Fate::Pass { counted: true };
        }
        Fate::Pass { counted: false }
    }

    /// The sticky tool's call `id` answered with `bytes`: the kept failure under `id` when
    /// one is kept (and not yet past its time), else `None` (the answer goes on as it
    /// came, and is kept when it is a failure: an error, or a result with `isError`).
    fn sticky(&self, id: &Value, bytes: &[u8]) -> Option<Value> {
        let mut kept = self.kept.lock().expect("kept lock");
        let over = |since: &Instant| {
            !self.limits.sticky_for.is_zero() && since.elapsed() > self.limits.sticky_for
        };
        if kept.as_ref().is_some_and(|(_, since)| over(since)) {
            *kept = None;
        }
        if let Some((failure, _)) = kept.as_ref() {
            let mut again = failure.clone();
            again["id"] = id.clone();
            return Some(again);
        }
        let answer = crate::judge::http::exchanges(bytes)
            .first()?
            .messages()
            .into_iter()
            .find(|m| m.get("id") == Some(id) && m.get("method").is_none())?;
        if answer.get("error").is_some() || answer.pointer("/result/isError") == Some(&json!(true))
        {
            *kept = Some((answer, Instant::now()));
        }
        None
    }

    fn answered(&self) {
        let mut n = self.in_flight.lock().expect("count lock");
        *n = n.saturating_sub(1);
    }
}

/// The shim's overload and rate-limit error under `id` (as its stdio gate words it).
fn refusal(id: Value, message: &str, hint: Option<u64>) -> Value {
    let mut error = json!({"code": -32000, "message": message});
    if let Some(ms) = hint {
        error["data"] = json!({"retryAfterMs": ms});
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

/// One request read from `s`: every byte read, and the range of its body when its
/// head ended and the body its `Content-Length` declares came whole.
pub fn read_request(s: &mut TcpStream) -> (Vec<u8>, Option<std::ops::Range<usize>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 << 10];
    let body_at = loop {
        if let Some(i) = buf.windows(4).position(|x| x == b"\r\n\r\n") {
            break i + 4;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return (buf, None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..body_at]).to_ascii_lowercase();
    let len = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while buf.len() < body_at + len {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return (buf, None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    (buf, Some(body_at..body_at + len))
}

/// The first request on a connection, read whole: its bytes, its JSON-RPC id when it
/// is a request (a message with a method and an id), and the tool's name when it is a
/// `tools/call`. `None`: the runner closed before sending anything.
fn first_request(client: &mut TcpStream) -> Option<(Vec<u8>, Option<Value>, Option<String>)> {
    let (buf, body) = read_request(client);
    if buf.is_empty() {
        return None;
    }
    let msg = body
        .and_then(|b| serde_json::from_slice::<Value>(&buf[b]).ok())
        .filter(|m| m.get("method").is_some());
    let id = msg.as_ref().and_then(|m| m.get("id").cloned());
    let tool = msg
        .as_ref()
        .filter(|m| m["method"] == "tools/call")
        .and_then(|m| m.pointer("/params/name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    Some((buf, id, tool))
}

/// `body` as the front's own JSON response on `client`, which is then closed once the
/// runner leaves.
fn answer_with(mut client: TcpStream, body: &Value) {
    let body = body.to_string();
    let _ = client.write_all(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    let _ = client.shutdown(Shutdown::Write);
    let mut sink = [0u8; 4096];
    while matches!(client.read(&mut sink), Ok(n) if n > 0) {}
}

/// Past this many response bytes a request no longer holds a place in flight, whether
/// or not its response is whole (a stream that never ends is not a place held for ever).
const ANSWER_BOUND: usize = 1 << 20;

/// The placeholder for the port the subject serves on behind the front.
pub const BACK_PORT: &str = "{backport}";

/// How long the front waits for the subject's port before giving up (the runner's own
/// start bound ends the observation long before).
const BACK_WAIT: Duration = Duration::from_secs(600);

/// A free port on `ip` for the subject to serve on behind the front.
pub fn back_port(ip: std::net::IpAddr) -> std::io::Result<u16> {
    Ok(TcpListener::bind(SocketAddr::new(ip, 0))?
        .local_addr()?
        .port())
}

/// Serve the front at `front` for the subject at `back`, in a thread of its own: once
/// `back` accepts a connection, every connection to `front` is relayed to a fresh one
/// to `back`; the first bytes of each response (the first the subject sends after the
/// runner's latest bytes on that connection) are held `delay` from when they arrived.
pub fn serve(front: SocketAddr, back: SocketAddr, delay: Duration, limits: Limits) {
    let dropping = limits.drop_when_full;
    let gate = limits.any().then(|| {
        Arc::new(Gate {
            limits,
            in_flight: Mutex::new(0),
            admitted: Mutex::default(),
            seen: Mutex::default(),
            kept: Mutex::default(),
        })
    });
    std::thread::spawn(move || {
        let start = Instant::now();
        while TcpStream::connect_timeout(&back, Duration::from_millis(200)).is_err() {
            if start.elapsed() > BACK_WAIT {
                eprintln!("mcpres ops shim: nothing accepts connections at {back}; no front");
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let listener = match TcpListener::bind(front) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("mcpres ops shim: cannot listen at {front}: {e}");
                return;
            }
        };
        for conn in listener.incoming() {
            let Ok(client) = conn else { continue };
            let gate = gate.clone();
            std::thread::spawn(move || relay(client, back, (delay, dropping), gate));
        }
    });
}

/// One connection relayed: the runner's bytes to the subject as they come, the
/// subject's back with each response held.
fn relay(
    mut client: TcpStream,
    back: SocketAddr,
    (delay, dropping): (Duration, bool),
    gate: Option<Arc<Gate>>,
) {
    // With limits, the first request is read whole and its fate decided before anything
    // reaches the subject.
    let mut first = Vec::new();
    let mut counted = false;
    let mut sticky_call = None;
    if let Some(g) = &gate {
        let Some((bytes, id, tool)) = first_request(&mut client) else {
            return;
        };
        if !g.limits.sticky_tool.is_empty()
            && tool.as_deref() == Some(g.limits.sticky_tool.as_str())
        {
            sticky_call = id.clone();
        }
        match g.fate(id, tool.as_deref()) {
            Fate::Pass { counted: c } => {
                counted = c;
                first = bytes;
            }
            Fate::Drop => {
                // Never answered: held until the runner gives up and closes.
                let mut sink = [0u8; 4096];
                while matches!(client.read(&mut sink), Ok(n) if n > 0) {}
                return;
            }
            Fate::Close => {
                let _ = client.shutdown(Shutdown::Both);
                return;
            }
            Fate::Refuse(msg) => {
                answer_with(client, &msg);
                return;
            }
            Fate::Claim(msg) => {
                // The subject gets the call and answers it (as the stdio shim, which
                // rewrites the subject's answer): that answer is read whole (or to the
                // subject's close) and discarded, and the claim goes back instead.
                if let Some((client, _)) = whole_response(client, back, &bytes) {
                    answer_with(client, &msg);
                }
                return;
            }
        }
    }
    if let Some(edit) = gate.as_ref().and_then(|g| g.limits.edit.clone()) {
        if let Some((client, bytes)) = whole_response(client, back, &first) {
            let out = edited_response(&bytes, &edit).unwrap_or(bytes);
            send_and_end(client, &out);
        }
        return;
    }
    if let Some(g) = &gate
        && let Some(id) = sticky_call
    {
        if let Some((client, bytes)) = whole_response(client, back, &first) {
            match g.sticky(&id, &bytes) {
                Some(kept) => answer_with(client, &kept),
                None => send_and_end(client, &bytes),
            }
        }
        return;
    }
    let release = |counted: &mut bool| {
        if *counted {
            *counted = false;
            if let Some(g) = &gate {
                g.answered();
            }
        }
    };
    let Ok(mut upstream) = TcpStream::connect(back) else {
        // The subject no longer accepts: the runner sees its connection closed.
        release(&mut counted);
        return;
    };
    if !first.is_empty() && upstream.write_all(&first).is_err() {
        release(&mut counted);
        return;
    }
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    // How many chunks the runner has sent on this connection: a chunk from the subject
    // after a new one starts a response, which is held.
    let sent = Arc::new(AtomicU64::new(u64::from(!first.is_empty())));
    let (Ok(mut from_client), Ok(mut to_upstream)) = (client.try_clone(), upstream.try_clone())
    else {
        return;
    };
    let counter = Arc::clone(&sent);
    let forward = std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            match from_client.read(&mut buf) {
                Ok(0) | Err(_) => {
                    let _ = to_upstream.shutdown(Shutdown::Write);
                    return;
                }
                Ok(n) => {
                    counter.fetch_add(1, Ordering::SeqCst);
                    if to_upstream.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let (mut from_upstream, mut to_client) = (upstream, client);
    if dropping {
        // What the runner's connection does not take at once is dropped: a small send
        // buffer (the kernel's own would hold megabytes) and sends that never wait.
        let _ = rustix::net::sockopt::set_socket_send_buffer_size(&to_client, 16 << 10);
    }
    let mut buf = vec![0u8; 64 << 10];
    let mut answered = 0;
    // The response bytes so far, while the request holds a place.
    let mut answer = Vec::new();
    loop {
        match from_upstream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let arrived = Instant::now();
                // Its answer is whole (the first final response's framing is complete,
                // an event stream's too): the request no longer holds a place. A
                // response head alone (an event stream opened at once) does not free it.
                if counted {
                    answer.extend_from_slice(&buf[..n]);
                    if answer.len() > ANSWER_BOUND
                        || crate::judge::http::exchanges(&answer)
                            .first()
                            .is_some_and(|e| e.complete)
                    {
                        release(&mut counted);
                        answer = Vec::new();
                    }
                }
                let now_sent = sent.load(Ordering::SeqCst);
                if now_sent != answered {
                    answered = now_sent;
                    let due = arrived + delay;
                    let now = Instant::now();
                    if due > now {
                        std::thread::sleep(due - now);
                    }
                }
                if dropping {
                    // Per send, not per socket: the runner's bytes are read on a clone.
                    match rustix::net::send(&to_client, &buf[..n], rustix::net::SendFlags::DONTWAIT)
                    {
                        Ok(_) | Err(rustix::io::Errno::AGAIN) => {}
                        Err(_) => break,
                    }
                } else if to_client.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    release(&mut counted);
    let _ = to_client.shutdown(Shutdown::Write);
    let _ = forward.join();
}

/// One connection relayed until its first response is whole: the runner's first request
/// (`first`, read whole) and any more bytes passed on, the subject's response read whole
/// (or to its close, or past the answer bound). The runner's connection and the bytes;
/// `None` when the subject could not be reached.
fn whole_response(
    client: TcpStream,
    back: SocketAddr,
    first: &[u8],
) -> Option<(TcpStream, Vec<u8>)> {
    let mut upstream = TcpStream::connect(back).ok()?;
    upstream.write_all(first).ok()?;
    if let (Ok(mut from_client), Ok(mut to_upstream)) = (client.try_clone(), upstream.try_clone()) {
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut from_client, &mut to_upstream);
            let _ = to_upstream.shutdown(Shutdown::Write);
        });
    }
    let mut bytes = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match upstream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
        }
        if bytes.len() > ANSWER_BOUND
            || crate::judge::http::exchanges(&bytes)
                .first()
                .is_some_and(|e| e.complete)
        {
            break;
        }
    }
    Some((client, bytes))
}

/// `bytes` sent to the runner, and its connection ended from the front's side.
fn send_and_end(mut client: TcpStream, bytes: &[u8]) {
    let _ = client.write_all(bytes);
    let _ = client.shutdown(Shutdown::Write);
}

/// The first response in `bytes` with its listed tools changed by `edit`, framed anew;
/// `None` when it lists no tools (or is not whole).
fn edited_response(bytes: &[u8], edit: &super::shim::Edit) -> Option<Vec<u8>> {
    let e = crate::judge::http::exchanges(bytes).into_iter().next()?;
    if !(e.complete || e.until_close) {
        return None;
    }
    let mut messages = e.messages();
    let mut changed = false;
    for m in &mut messages {
        changed |= edit.apply(m);
    }
    if !changed {
        return None;
    }
    let stream = e
        .header("content-type")
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/event-stream"));
    let body: String = if stream {
        messages
            .iter()
            .map(|m| format!("event: message\ndata: {m}\n\n"))
            .collect()
    } else if let [one] = &messages[..] {
        one.to_string()
    } else {
        serde_json::Value::from(messages).to_string()
    };
    let status_line = bytes
        .split(|b| *b == b'\n')
        .next()
        .map(|l| String::from_utf8_lossy(l).trim_end().to_string())?;
    let mut head = format!("{status_line}\r\n");
    for (k, v) in &e.headers {
        if !["content-length", "transfer-encoding", "connection"]
            .iter()
            .any(|h| k.eq_ignore_ascii_case(h))
        {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut out = head.into_bytes();
    out.extend(body.into_bytes());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(limits: Limits) -> Gate {
        Gate {
            limits,
            in_flight: Mutex::new(0),
            admitted: Mutex::default(),
            seen: Mutex::default(),
            kept: Mutex::default(),
        }
    }

    fn name(f: &Fate) -> &'static str {
        match f {
            Fate::Pass { .. } => "pass",
            Fate::Drop => "drop",
            Fate::Refuse(_) => "refuse",
            Fate::Close => "close",
            Fate::Claim(_) => "claim",
        }
    }

    /// A request delivered again: the control's front goes deaf from that copy on (a
    /// notification too), the mutant's closes the copy alone; the claimed tool's call is
    /// answered by the front with a success under its id, other calls pass.
    #[test]
    fn the_front_meets_a_duplicate_and_claims_the_named_tool() {
        let deaf = gate(Limits {
            duplicate: Some(Duplicate::Deaf),
            ..Limits::default()
        });
        let seq: Vec<&str> = [
            Some(json!(1)),
            Some(json!(2)),
            Some(json!(1)),
            Some(json!(3)),
            None,
        ]
        .into_iter()
        .map(|id| name(&deaf.fate(id, None)))
        .collect();
        assert_eq!(seq, ["pass", "pass", "drop", "drop", "drop"]);

        let dropping = gate(Limits {
            duplicate: Some(Duplicate::Drop),
            ..Limits::default()
        });
        let seq: Vec<&str> = [Some(json!("a")), Some(json!("a")), Some(json!("b")), None]
            .into_iter()
            .map(|id| name(&dropping.fate(id, None)))
            .collect();
        assert_eq!(seq, ["pass", "close", "pass", "pass"]);

        let claiming = gate(Limits {
            claim_tool: "store".into(),
            ..Limits::default()
        });
        match claiming.fate(Some(json!(7)), Some("store")) {
            Fate::Claim(m) => {
                assert_eq!(m["id"], 7);
                assert!(m["result"]["content"].is_array(), "{m}");
            }
            other => panic!("not claimed: {}", name(&other)),
        }
        assert_eq!(name(&claiming.fate(Some(json!(8)), Some("fetch"))), "pass");
        assert_eq!(name(&claiming.fate(None, Some("store"))), "pass");
    }

    /// A subject that answers every request line with `ok` at once, and the front that
    /// holds each answer: the bytes pass unchanged, the first of each response held.
    #[test]
    fn the_front_relays_bytes_unchanged_and_holds_each_response() {
        let subject = TcpListener::bind("127.0.0.1:0").unwrap();
        let back = subject.local_addr().unwrap();
        std::thread::spawn(move || {
            for c in subject.incoming() {
                let Ok(mut c) = c else { continue };
                std::thread::spawn(move || {
                    let mut buf = [0u8; 1024];
                    while let Ok(n) = c.read(&mut buf) {
                        if n == 0 {
                            return;
                        }
                        let mut answer = b"ok:".to_vec();
                        answer.extend_from_slice(&buf[..n]);
                        let _ = c.write_all(&answer);
                    }
                });
            }
        });
        let front = SocketAddr::from(([127, 0, 0, 1], back_port([127, 0, 0, 1].into()).unwrap()));
        serve(front, back, Duration::from_millis(300), Limits::default());
        let mut c = loop {
            if let Ok(c) = TcpStream::connect(front) {
                break c;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        for round in ["one", "two"] {
            let t = Instant::now();
            c.write_all(round.as_bytes()).unwrap();
            let mut got = vec![0u8; 3 + round.len()];
            c.read_exact(&mut got).unwrap();
            assert_eq!(got, format!("ok:{round}").as_bytes());
            assert!(
                t.elapsed() >= Duration::from_millis(300),
                "{round} was not held"
            );
        }
        c.shutdown(Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
    }

    /// A request holds its place while its response is an event stream opened but not
    /// ended: a second request over the limit of one is refused, and once the stream
    /// ends, a third is passed on.
    #[test]
    fn an_opened_event_stream_keeps_its_place_until_it_ends() {
        let subject = TcpListener::bind("127.0.0.1:0").unwrap();
        let back = subject.local_addr().unwrap();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let wait = Arc::new(Mutex::new(wait));
        std::thread::spawn(move || {
            for c in subject.incoming() {
                let Ok(mut c) = c else { continue };
                let wait = Arc::clone(&wait);
                std::thread::spawn(move || {
                    let (buf, Some(body)) = read_request(&mut c) else {
                        return;
                    };
                    if &buf[body] == br#"{"id":1,"method":"slow"}"# {
                        let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
                        let _ = wait.lock().unwrap().recv();
                        let event = "data: {\"id\":1,\"result\":{}}\n\n";
                        let _ = c.write_all(
                            format!("{:x}\r\n{event}\r\n0\r\n\r\n", event.len()).as_bytes(),
                        );
                    } else {
                        let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
                    }
                });
            }
        });
        let front = SocketAddr::from(([127, 0, 0, 1], back_port([127, 0, 0, 1].into()).unwrap()));
        let limits = Limits {
            in_flight: 1,
            reject: true,
            ..Limits::default()
        };
        serve(front, back, Duration::ZERO, limits);
        let post = |body: &str| {
            let mut c = loop {
                if let Ok(c) = TcpStream::connect(front) {
                    break c;
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            c.write_all(
                format!(
                    "POST /mcp HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            )
            .unwrap();
            c
        };
        let mut held = post(r#"{"id":1,"method":"slow"}"#);
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            held.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        let mut over = post(r#"{"id":2,"method":"ping"}"#);
        let mut refused = Vec::new();
        over.read_to_end(&mut refused).unwrap();
        let refused = crate::judge::http::exchanges(&refused);
        assert_eq!(
            refused[0].messages()[0]["error"]["code"],
            -32000,
            "{refused:?}"
        );
        go.send(()).unwrap();
        let mut rest = Vec::new();
        held.read_to_end(&mut rest).unwrap();
        head.extend(rest);
        let whole = crate::judge::http::exchanges(&head);
        assert_eq!(whole[0].messages()[0]["id"], 1, "{whole:?}");
        let mut after = post(r#"{"id":3,"method":"ping"}"#);
        let mut served = Vec::new();
        after.read_to_end(&mut served).unwrap();
        assert!(
            served.ends_with(b"\r\n\r\n{}"),
            "{}",
            String::from_utf8_lossy(&served)
        );
    }

    /// A response that lists tools is read whole, changed and framed anew (an event
    /// stream's messages as events of a body of known length); any other passes as it is.
    #[test]
    fn a_listed_tools_response_is_changed_and_framed_anew() {
        let edit = super::super::shim::Edit {
            suffix: Some("-x".into()),
            ..Default::default()
        };
        let listed = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo"}]}}"#;
        let json = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s1\r\nContent-Length: {}\r\n\r\n{listed}",
            listed.len()
        );
        let out = edited_response(json.as_bytes(), &edit).unwrap();
        let e = &crate::judge::http::exchanges(&out)[0];
        assert!(e.complete);
        assert_eq!(e.header("mcp-session-id"), Some("s1"));
        assert_eq!(e.messages()[0]["result"]["tools"][0]["name"], "echo-x");
        let event = format!("data: {listed}\n\n");
        let sse = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n0\r\n\r\n",
            event.len()
        );
        let out = edited_response(sse.as_bytes(), &edit).unwrap();
        let e = &crate::judge::http::exchanges(&out)[0];
        assert!(e.complete && e.header("transfer-encoding").is_none());
        assert_eq!(e.messages()[0]["result"]["tools"][0]["name"], "echo-x");
        let other =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        assert!(edited_response(other.as_bytes(), &edit).is_none());
        // Not whole yet: nothing is changed.
        assert!(edited_response(&json.as_bytes()[..json.len() - 3], &edit).is_none());
    }
}
