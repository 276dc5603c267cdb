#![cfg(feature = "server")]
//! `mcpres serve --transport http` against idle, half-sent and too many
//! connections (issue 16, item 5): headers and bodies must arrive within
//! their timeouts, at most `--max-connections` connections are served at
//! once (the rest wait), and the server keeps answering normal requests.
//! Timeouts are set short by flag; the assertions only ask that a connection
//! is closed within a generous bound, never how fast.

mod server_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use server_support::*;

/// Far longer than any timeout set here: a connection still open after
/// this is one the server kept.
const GENEROUS: Duration = Duration::from_secs(20);

/// How a connection ended while we read from it.
#[derive(Debug, PartialEq)]
enum End {
    /// EOF or reset: the server closed it. Carries what it sent first.
    Closed(Vec<u8>),
    /// Still open when the read timeout passed.
    Open(Vec<u8>),
}

/// Read until the server closes the connection or `timeout` passes with
/// nothing more arriving.
fn read_until_closed(s: &mut TcpStream, timeout: Duration) -> End {
    s.set_read_timeout(Some(timeout)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return End::Closed(got),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return End::Open(got);
            }
            Err(_) => return End::Closed(got),
        }
    }
}

fn connect(port: u16) -> TcpStream {
    TcpStream::connect(("127.0.0.1", port)).expect("connect")
}

/// The head of a POST to /mcp, unfinished (no blank line).
fn partial_head(port: u16) -> Vec<u8> {
    format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n")
        .into_bytes()
}

fn initialize_body() -> Vec<u8> {
    request(1, "initialize", initialize_params())
        .to_string()
        .into_bytes()
}

/// A session opened with `initialize`: its id.
fn open_session(port: u16) -> String {
    let open = post(port, &initialize_body(), &[], GENEROUS);
    assert_eq!(open.status, 200);
    open.header("mcp-session-id")
        .expect("a session id")
        .to_string()
}

/// The headers of a request in `session`.
fn session_headers(session: &str) -> [(&'static str, &str); 2] {
    [
        ("mcp-session-id", session),
        ("mcp-protocol-version", "2025-11-25"),
    ]
}

/// A `ping` with `id` in `session`, on a fresh connection.
fn ping_in(port: u16, session: &str, id: i64) -> HttpReply {
    post(
        port,
        request(id, "ping", serde_json::json!({}))
            .to_string()
            .as_bytes(),
        &session_headers(session),
        GENEROUS,
    )
}

/// A normal request on a fresh connection is answered 200.
fn assert_still_answers(port: u16) {
    let r = post(port, &initialize_body(), &[], GENEROUS);
    assert_eq!(r.status, 200, "{:?}", String::from_utf8_lossy(&r.body));
}

#[test]
fn partial_headers_and_idle_connections_are_closed() {
    let srv = HttpServer::start(&["--header-read-timeout-ms", "300"]);
    let mut conns = Vec::new();
    for i in 0..40 {
        let mut s = connect(srv.port);
        if i % 4 != 0 {
            // Three in four send part of a request head; the rest nothing.
            s.write_all(&partial_head(srv.port)).unwrap();
        }
        conns.push(s);
    }
    for (i, s) in conns.iter_mut().enumerate() {
        let end = read_until_closed(s, GENEROUS);
        assert!(
            matches!(end, End::Closed(_)),
            "connection {i} still open after {GENEROUS:?}: {end:?}"
        );
    }
    assert_still_answers(srv.port);
    let (status, err) = srv.stop();
    assert_eq!(status.code(), Some(0), "{err}");
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_the_header_timeout() {
    let srv = HttpServer::start(&["--header-read-timeout-ms", "300"]);
    let body = initialize_body();
    let mut s = connect(srv.port);
    let mut req = partial_head(srv.port);
    req.extend_from_slice(
        format!(
            "Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    req.extend_from_slice(&body);
    s.write_all(&req).unwrap();
    // The answer comes, then the connection (kept alive) idles until closed.
    match read_until_closed(&mut s, GENEROUS) {
        End::Closed(got) => assert!(
            got.starts_with(b"HTTP/1.1 200"),
            "{:?}",
            String::from_utf8_lossy(&got)
        ),
        End::Open(got) => panic!(
            "the idle connection was kept after the answer: {:?}",
            String::from_utf8_lossy(&got)
        ),
    }
    srv.stop();
}

#[test]
fn a_half_sent_body_is_answered_408_and_closed() {
    let srv = HttpServer::start(&["--body-read-timeout-ms", "300"]);
    let mut conns = Vec::new();
    for _ in 0..20 {
        let mut s = connect(srv.port);
        let mut req = partial_head(srv.port);
        // Declares 4 MB, sends 16 bytes of it.
        req.extend_from_slice(
            b"Accept: application/json, text/event-stream\r\nContent-Length: 4000000\r\n\r\n{\"jsonrpc\":\"2.0\"",
        );
        s.write_all(&req).unwrap();
        conns.push(s);
    }
    for (i, s) in conns.iter_mut().enumerate() {
        match read_until_closed(s, GENEROUS) {
            End::Closed(got) => assert!(
                got.starts_with(b"HTTP/1.1 408"),
                "connection {i}: {:?}",
                String::from_utf8_lossy(&got)
            ),
            End::Open(got) => panic!(
                "connection {i} still open after {GENEROUS:?}: {:?}",
                String::from_utf8_lossy(&got)
            ),
        }
    }
    assert_still_answers(srv.port);
    srv.stop();
}

#[test]
fn connections_past_the_cap_wait_until_one_closes() {
    // Headers may take a minute here: the held connections stay held.
    let srv = HttpServer::start(&[
        "--max-connections",
        "4",
        "--header-read-timeout-ms",
        "60000",
    ]);
    let mut held: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = connect(srv.port);
            s.write_all(&partial_head(srv.port)).unwrap();
            s
        })
        .collect();
    // The fifth connection sends a whole request: it is not served while the
    // four hold every slot.
    let body = initialize_body();
    let mut fifth = connect(srv.port);
    let mut req = partial_head(srv.port);
    req.extend_from_slice(
        format!(
            "Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    req.extend_from_slice(&body);
    fifth.write_all(&req).unwrap();
    let waiting = read_until_closed(&mut fifth, Duration::from_secs(1));
    assert_eq!(waiting, End::Open(Vec::new()), "served past the cap");
    // One held connection closes: its slot goes to the fifth.
    drop(held.pop());
    match read_until_closed(&mut fifth, GENEROUS) {
        End::Closed(got) => assert!(
            got.starts_with(b"HTTP/1.1 200"),
            "{:?}",
            String::from_utf8_lossy(&got)
        ),
        End::Open(got) => panic!(
            "not served after a slot was freed: {:?}",
            String::from_utf8_lossy(&got)
        ),
    }
    drop(held);
    assert_still_answers(srv.port);
    srv.stop();
}

#[test]
fn requests_over_the_rate_limit_are_answered_429_with_retry_after() {
    // One a minute, the opening excepted: the second request is refused.
    let srv = HttpServer::start(&["--rate-limit", "1/60000"]);
    let session = open_session(srv.port);
    let ping = |id: i64| ping_in(srv.port, &session, id);
    let first = ping(2);
    assert_eq!(
        first.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&first.body)
    );
    let second = ping(3);
    assert_eq!(
        second.status,
        429,
        "{:?}",
        String::from_utf8_lossy(&second.body)
    );
    let secs: u64 = second
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("whole seconds");
    assert!((1..=60).contains(&secs), "{secs}");
    let body: serde_json::Value = serde_json::from_slice(&second.body).expect("a JSON body");
    assert_eq!(body["id"], 3);
    assert_eq!(body["error"]["data"]["reason"], "rate-over-limit");
    assert_still_answers(srv.port);
    srv.stop();
}

/// A tool call answered on an SSE stream keeps its place in flight while it runs, not
/// only until the stream's head is sent: with `--max-in-flight 1`, a request while the
/// call runs is refused 503, and once the call's connection is gone (the call
/// cancelled) the place is free again.
#[test]
fn a_streamed_tool_call_keeps_its_place_in_flight_while_it_runs() {
    let srv = HttpServer::start(&["--max-in-flight", "1"]);
    let session = open_session(srv.port);
    let headers = session_headers(&session);
    let note = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let r = post(srv.port, note.to_string().as_bytes(), &headers, GENEROUS);
    assert_eq!(r.status, 202);
    let ping = |id: i64| ping_in(srv.port, &session, id);
    // A minute's call, its head read: the call is running.
    let body = request(
        2,
        "tools/call",
        serde_json::json!({"name": "slow", "arguments": {"delayMs": 60000}}),
    )
    .to_string();
    let mut slow = connect(srv.port);
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        srv.port,
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    slow.write_all(head.as_bytes()).unwrap();
    slow.write_all(body.as_bytes()).unwrap();
    slow.set_read_timeout(Some(GENEROUS)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = slow.read(&mut buf).expect("the call's head");
        assert!(n > 0, "closed before its head");
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&got).to_ascii_lowercase();
    assert!(text.starts_with("http/1.1 200"), "{text}");
    assert!(text.contains("text/event-stream"), "{text}");
    // Its place is held: a request now is over the limit.
    let busy = ping(3);
    assert_eq!(
        busy.status,
        503,
        "{:?}",
        String::from_utf8_lossy(&busy.body)
    );
    // The call's connection closed: the place comes back.
    drop(slow);
    let until = std::time::Instant::now() + GENEROUS;
    let mut last = 0;
    while std::time::Instant::now() < until {
        last = ping(4).status;
        if last == 200 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(last, 200, "the place was not given back");
    srv.stop();
}
