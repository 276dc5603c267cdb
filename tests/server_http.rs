#![cfg(feature = "server")]
//! `mcpres serve --transport http`: Streamable HTTP on loopback, both revisions, raw
//! HTTP/1.1 over TcpStream; every fault's observable effect and determinism.

mod server_support;
mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use server_support::*;

const T: Duration = Duration::from_secs(10);

fn modern_headers(
    method: &'static str,
    name: Option<&'static str>,
) -> Vec<(&'static str, &'static str)> {
    let mut h = vec![("MCP-Protocol-Version", MODERN), ("Mcp-Method", method)];
    if let Some(n) = name {
        h.push(("Mcp-Name", n));
    }
    h
}

fn modern_call(port: u16, id: i64, tool: &'static str, args: Value) -> HttpReply {
    let body = request(
        id,
        "tools/call",
        with_modern_meta(json!({"name": tool, "arguments": args})),
    );
    post(
        port,
        body.to_string().as_bytes(),
        &modern_headers("tools/call", Some(tool)),
        T,
    )
}

#[test]
fn legacy_session_handshake_and_call() {
    let srv = HttpServer::start(&[]);
    let init = post(
        srv.port,
        request(1, "initialize", initialize_params())
            .to_string()
            .as_bytes(),
        &[],
        T,
    );
    assert_eq!(
        init.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&init.body)
    );
    assert_eq!(init.response_to(1)["result"]["protocolVersion"], LEGACY);
    let sid = init
        .header("mcp-session-id")
        .expect("session id")
        .to_owned();
    let h = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", LEGACY),
    ];
    let note = post(
        srv.port,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        &h,
        T,
    );
    assert_eq!(note.status, 202);
    let call = post(
        srv.port,
        request(
            2,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        )
        .to_string()
        .as_bytes(),
        &h,
        T,
    );
    assert_eq!(call.status, 200);
    assert_eq!(
        call.response_to(2)["result"]["structuredContent"],
        json!({"sum": 5})
    );
    let (status, err) = srv.stop();
    assert_eq!(status.code(), Some(0), "{err}");
}

#[test]
fn modern_stateless_discover_and_call() {
    let srv = HttpServer::start(&[]);
    let d = post(
        srv.port,
        request(1, "server/discover", with_modern_meta(json!({})))
            .to_string()
            .as_bytes(),
        &modern_headers("server/discover", None),
        T,
    );
    assert_eq!(d.status, 200, "{:?}", String::from_utf8_lossy(&d.body));
    assert!(
        d.header("mcp-session-id").is_none(),
        "2026-07-28 has no sessions"
    );
    let r = d.response_to(1);
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert!(
        r["result"]["supportedVersions"]
            .as_array()
            .expect("versions")
            .contains(&json!(MODERN))
    );
    let c = modern_call(srv.port, 2, "echo", json!({"text": "over http"}));
    let r = c.response_to(2);
    assert_eq!(r["result"]["content"][0]["text"], "over http");
    assert_eq!(r["result"]["resultType"], "complete");
    let l = post(
        srv.port,
        request(3, "tools/list", with_modern_meta(json!({})))
            .to_string()
            .as_bytes(),
        &modern_headers("tools/list", None),
        T,
    );
    let r = l.response_to(3);
    assert_eq!(r["result"]["ttlMs"], 60000);
    assert_eq!(r["result"]["cacheScope"], "public");
    // A call without a tool name is invalid params (-32602), answered by the
    // transport pump, not "method not found".
    let bad = post(
        srv.port,
        request(4, "tools/call", with_modern_meta(json!({"arguments": {}})))
            .to_string()
            .as_bytes(),
        &modern_headers("tools/call", None),
        T,
    );
    assert_eq!(bad.status, 200);
    let r = bad.response_to(4);
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["missing"], "name");
    srv.stop();
}

#[test]
fn host_and_origin_are_checked() {
    let srv = HttpServer::start(&[]);
    let body = request(1, "initialize", initialize_params()).to_string();
    let bad_origin = post(
        srv.port,
        body.as_bytes(),
        &[("Origin", "http://evil.example")],
        T,
    );
    assert_eq!(bad_origin.status, 403);
    let origin = format!("http://127.0.0.1:{}", srv.port);
    let good_origin = post(srv.port, body.as_bytes(), &[("Origin", origin.as_str())], T);
    assert_eq!(good_origin.status, 200);
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let bad_host = exchange(srv.port, req.as_bytes(), T);
    assert_eq!(bad_host.status, 403);
    srv.stop();
}

/// A web page can POST `text/plain` cross-origin without a preflight. Such
/// requests are refused before the fault layer: they neither fire a fault nor
/// shift the schedule (`process-crash@request-2` would abort the server on the
/// second request the fault layer counts).
#[test]
fn refused_cross_origin_requests_never_reach_the_fault_schedule() {
    let srv = HttpServer::start(&["--fault", "process-crash@request-2"]);
    let body = request(1, "initialize", initialize_params()).to_string();
    for _ in 0..3 {
        let req = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nOrigin: http://evil.example\r\n\
             Content-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            srv.port,
            body.len()
        );
        assert_eq!(exchange(srv.port, req.as_bytes(), T).status, 403);
    }
    let bad_host = format!(
        "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    assert_eq!(exchange(srv.port, bad_host.as_bytes(), T).status, 403);
    assert!(
        process_alive(srv.pid()),
        "a refused request fired the fault"
    );
    // The schedule did not move: the first accepted request is request 1.
    let first = post(srv.port, body.as_bytes(), &[], T);
    assert_eq!(first.status, 200);
    assert!(
        process_alive(srv.pid()),
        "the first accepted request fired the fault"
    );
    srv.stop();
}

#[test]
fn oversized_body_is_refused() {
    let srv = HttpServer::start(&["--max-message-bytes", "2048"]);
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}",
        "x".repeat(4096)
    );
    let r = post(srv.port, big.as_bytes(), &[], T);
    assert_eq!(r.status, 413);
    srv.stop();
}

#[test]
fn sigterm_releases_the_listener() {
    let srv = HttpServer::start(&[]);
    let port = srv.port;
    let pid = srv.pid();
    let since = support::boot_ticks();
    let (status, _) = srv.stop();
    assert_eq!(status.code(), Some(0));
    assert!(!process_alive(pid));
    support::assert_port_released(port, since, "listener left behind");
}

struct HRun {
    reply: HttpReply,
    elapsed: Duration,
    next: Option<HttpReply>,
    log_bytes: Vec<u8>,
    log: Vec<Value>,
    status: Option<std::process::ExitStatus>,
    dir: tempfile::TempDir,
}

fn hscenario(fault: &str, tool: &'static str, args: Value, read_timeout: Duration) -> HRun {
    let dir = tempfile::tempdir().expect("tempdir");
    let log: PathBuf = dir.path().join("injections.jsonl");
    let srv = HttpServer::start(&[
        "--fault",
        fault,
        "--seed",
        "7",
        "--budget-ms",
        "200",
        "--delay-ms",
        "150",
        "--injection-log",
        log.to_str().expect("utf8"),
        "--residue-dir",
        dir.path().to_str().expect("utf8"),
    ]);
    let started = Instant::now();
    let reply = if tool == "tools/list" {
        post(
            srv.port,
            request(1, "tools/list", with_modern_meta(json!({})))
                .to_string()
                .as_bytes(),
            &modern_headers("tools/list", None),
            read_timeout,
        )
    } else {
        let body = request(
            1,
            "tools/call",
            with_modern_meta(json!({"name": tool, "arguments": args})),
        );
        post(
            srv.port,
            body.to_string().as_bytes(),
            &modern_headers("tools/call", Some(tool)),
            read_timeout,
        )
    };
    let elapsed = started.elapsed();
    let mut srv = srv;
    let crashed = fault.starts_with("process-crash");
    let (next, status) = if crashed {
        let deadline = Instant::now() + T;
        let st = loop {
            if let Some(s) = srv.child.try_wait().expect("wait") {
                break s;
            }
            assert!(Instant::now() < deadline, "no crash");
            std::thread::sleep(Duration::from_millis(10));
        };
        (None, Some(st))
    } else {
        let n = modern_call(srv.port, 2, "echo", json!({"text": "next"}));
        let (st, _) = srv.stop();
        (Some(n), Some(st))
    };
    let log_bytes = std::fs::read(&log).expect("log");
    let log = read_log(&log);
    HRun {
        reply,
        elapsed,
        next,
        log_bytes,
        log,
        status,
        dir,
    }
}

fn hdeterministic(fault: &str, tool: &'static str, args: Value, read_timeout: Duration) -> HRun {
    let a = hscenario(fault, tool, args.clone(), read_timeout);
    let b = hscenario(fault, tool, args, read_timeout);
    assert_eq!(a.log_bytes, b.log_bytes, "{fault}: injection log differs");
    assert_eq!(a.reply.status, b.reply.status);
    assert_eq!(a.reply.truncated, b.reply.truncated);
    if std::str::from_utf8(&a.reply.body).is_ok() && a.reply.status == 200 && !a.reply.truncated {
        assert_eq!(
            a.reply.messages(),
            b.reply.messages(),
            "{fault}: messages differ"
        );
    } else {
        assert_eq!(
            a.reply.body.len(),
            b.reply.body.len(),
            "{fault}: body length differs"
        );
    }
    let inj: Vec<&Value> = a.log.iter().filter(|r| r["event"] == "injection").collect();
    assert_eq!(inj.len(), 1, "{:?}", a.log);
    assert_eq!(inj[0]["fault"], fault.split('@').next().expect("id"));
    assert_eq!(inj[0]["transport"], "http");
    assert_eq!(inj[0]["request"]["ordinal"], 1);
    if let Some(n) = &a.next {
        assert_eq!(n.response_to(2)["result"]["content"][0]["text"], "next");
        assert_eq!(a.status.and_then(|s| s.code()), Some(0));
    }
    a
}

fn echo() -> Value {
    json!({"text": "x"})
}

const F1: &str = "@request-1";

fn f(id: &str) -> String {
    format!("{id}{F1}")
}

#[test]
fn http_protocol_error() {
    let r = hdeterministic(&f("protocol-error"), "echo", echo(), T);
    assert_eq!(r.reply.status, 200);
    assert_eq!(r.reply.response_to(1)["error"]["code"], -32601);
}

#[test]
fn http_transport_disconnect() {
    let r = hdeterministic(&f("transport-disconnect"), "echo", echo(), T);
    assert_eq!(r.reply.status, 0, "no HTTP response at all");
    assert!(r.reply.body.is_empty());
    assert!(r.elapsed < Duration::from_secs(5), "closed, not hung");
}

#[test]
fn http_timeout() {
    let r = hdeterministic(&f("timeout"), "echo", echo(), Duration::from_millis(600));
    assert_eq!(r.reply.status, 0);
    assert!(r.reply.body.is_empty());
    assert!(r.elapsed >= Duration::from_millis(590));
}

#[test]
fn http_cancellation() {
    let r = hdeterministic(&f("cancellation"), "slow", json!({"delayMs": 2000}), T);
    assert_eq!(r.reply.response_to(1)["error"]["code"], -32800);
    assert!(r.elapsed >= Duration::from_millis(100) && r.elapsed < Duration::from_millis(1500));
}

#[test]
fn http_malformed_message() {
    let r = hdeterministic(&f("malformed-message"), "echo", echo(), T);
    assert_eq!(r.reply.status, 200);
    assert!(r.reply.body.windows(2).any(|w| w == [0xC3, 0x28]));
}

#[test]
fn http_schema_violation() {
    let r = hdeterministic(&f("schema-violation"), "echo", echo(), T);
    let m = r.reply.response_to(1);
    assert!(
        m["result"].is_object() && m["result"].get("content").is_none(),
        "{m}"
    );
}

#[test]
fn http_extension_mismatch() {
    let r = hdeterministic(&f("extension-mismatch"), "echo", echo(), T);
    let msgs = r.reply.messages();
    assert_eq!(msgs[0]["method"], "dev.mcpres.unadvertised/probe");
    assert_eq!(r.reply.response_to(1)["result"]["content"][0]["text"], "x");
}

#[test]
fn http_duplicate() {
    let r = hdeterministic(&f("duplicate"), "echo", echo(), T);
    let answers: Vec<Value> = r
        .reply
        .messages()
        .into_iter()
        .filter(|m| m["id"] == 1)
        .collect();
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0], answers[1]);
}

#[test]
fn http_reorder() {
    let r = hdeterministic(&f("reorder"), "echo", echo(), T);
    let ids: Vec<Value> = r.reply.messages().iter().map(|m| m["id"].clone()).collect();
    assert_eq!(ids, [json!(1_000_001), json!(1)]);
}

#[test]
fn http_partial_response() {
    let r = hdeterministic(&f("partial-response"), "echo", echo(), T);
    assert_eq!(r.reply.status, 200);
    assert!(r.reply.truncated, "body must be cut short");
    let len: usize = r
        .reply
        .header("content-length")
        .expect("length")
        .parse()
        .expect("number");
    assert!(!r.reply.body.is_empty() && r.reply.body.len() < len);
}

#[test]
fn http_delayed_response() {
    let r = hdeterministic(&f("delayed-response"), "echo", echo(), T);
    assert_eq!(r.reply.response_to(1)["result"]["content"][0]["text"], "x");
    assert!(r.elapsed >= Duration::from_millis(150));
}

#[test]
fn http_process_crash() {
    use std::os::unix::process::ExitStatusExt;
    let r = hdeterministic(&f("process-crash"), "echo", echo(), T);
    assert_eq!(r.reply.status, 0);
    assert_eq!(r.status.and_then(|s| s.signal()), Some(6));
}

#[test]
fn http_dependency_failure() {
    let r = hdeterministic(&f("dependency-failure"), "echo", echo(), T);
    assert_eq!(r.reply.response_to(1)["result"]["isError"], true);
}

#[test]
fn http_authorization_rejection() {
    let r = hdeterministic(&f("authorization-rejection"), "echo", echo(), T);
    assert_eq!(r.reply.status, 401);
    assert!(
        r.reply
            .header("www-authenticate")
            .expect("challenge")
            .starts_with("Bearer")
    );
}

#[test]
fn http_cache_stale_poisoned() {
    let r = hdeterministic(&f("cache-stale-poisoned"), "tools/list", json!({}), T);
    let m = r.reply.response_to(1);
    assert_eq!(
        m["result"]["_meta"]["dev.mcpres/cacheKey"]["serverVersion"],
        "0.0.0-stale"
    );
}

#[test]
fn http_resource_exhaustion() {
    let r = hdeterministic(&f("resource-exhaustion"), "echo", echo(), T);
    assert_eq!(r.reply.status, 503);
    assert_eq!(r.reply.header("retry-after"), Some("1"));
}

#[test]
fn http_filesystem_publication_failure() {
    let r = hdeterministic(&f("filesystem-publication-failure"), "echo", echo(), T);
    let m = r.reply.response_to(1);
    assert!(
        m["result"]["content"][0]["text"]
            .as_str()
            .expect("text")
            .starts_with("publication failed")
    );
}

#[test]
fn http_cleanup_failure() {
    let r = hscenario(&f("cleanup-failure"), "echo", echo(), T);
    assert_eq!(r.reply.response_to(1)["result"]["content"][0]["text"], "x");
    assert!(r.dir.path().join("mcpres-retained-7-1.handle").exists());
}

#[test]
fn modern_unsupported_version_and_header_mismatch() {
    let srv = HttpServer::start(&[]);
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let body = request(1, "tools/list", json!({"_meta": meta})).to_string();
    let r = post(
        srv.port,
        body.as_bytes(),
        &[
            ("MCP-Protocol-Version", "2099-01-01"),
            ("Mcp-Method", "tools/list"),
        ],
        T,
    );
    assert_eq!(r.status, 400);
    let e = r.response_to(1);
    assert_eq!(e["error"]["code"], -32022, "{e}");
    assert_eq!(e["error"]["data"]["supported"], json!([MODERN, LEGACY]));
    // Mcp-Method must agree with the body.
    let body = request(
        2,
        "tools/call",
        with_modern_meta(json!({"name": "echo", "arguments": {"text": "a"}})),
    );
    let r = post(
        srv.port,
        body.to_string().as_bytes(),
        &modern_headers("tools/list", None),
        T,
    );
    assert_eq!(r.status, 400);
    assert_eq!(r.response_to(2)["error"]["code"], -32020);
    srv.stop();
}

#[test]
fn legacy_only_http_server_rejects_discover() {
    let srv = HttpServer::start(&["--revision", LEGACY]);
    let d = post(
        srv.port,
        request(1, "server/discover", with_modern_meta(json!({})))
            .to_string()
            .as_bytes(),
        &modern_headers("server/discover", None),
        T,
    );
    assert_eq!(d.response_to(1)["error"]["code"], -32601);
    srv.stop();
}
