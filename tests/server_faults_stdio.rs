#![cfg(feature = "server")]
//! Every taxonomy fault over stdio: its exact observable effect, its injection-log
//! record, and determinism (same seed and input, same stdout bytes and log bytes).

mod server_support;

use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use server_support::*;

const T: Duration = Duration::from_secs(10);

struct Run {
    /// Frames received after request 2 was sent, up to and including the answer to it.
    frames: Vec<Vec<u8>>,
    /// Response to the follow-up request 3, when the transport survived.
    after: Option<Value>,
    elapsed: Duration,
    status: ExitStatus,
    stdout: Vec<u8>,
    log_bytes: Vec<u8>,
    log: Vec<Value>,
    dir: tempfile::TempDir,
}

impl Run {
    fn json_frames(&self) -> Vec<Value> {
        self.frames
            .iter()
            .map(|f| {
                serde_json::from_slice(f)
                    .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(f)))
            })
            .collect()
    }

    fn injection(&self) -> &Value {
        let inj: Vec<&Value> = self
            .log
            .iter()
            .filter(|r| r["event"] == "injection")
            .collect();
        assert_eq!(
            inj.len(),
            1,
            "exactly one injection expected: {:?}",
            self.log
        );
        inj[0]
    }
}

fn is_answer(frame: &[u8], id: i64) -> bool {
    match serde_json::from_slice::<Value>(frame) {
        Ok(v) => v.get("id") == Some(&json!(id)) && v.get("method").is_none(),
        Err(_) => true, // a corrupted frame is the answer
    }
}

fn scenario(fault: &str, seed: u64, extra: &[&str], req2: Value, wait: Duration) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let log: PathBuf = dir.path().join("injections.jsonl");
    let seed_s = seed.to_string();
    let mut args = vec![
        "--fault",
        fault,
        "--seed",
        &seed_s,
        "--budget-ms",
        "200",
        "--delay-ms",
        "150",
        "--injection-log",
        log.to_str().expect("utf8"),
        "--residue-dir",
        dir.path().to_str().expect("utf8"),
    ];
    args.extend_from_slice(extra);
    let mut s = StdioServer::start(&args);
    s.initialize();
    let started = Instant::now();
    s.send(&json!({"jsonrpc": "2.0", "id": 2, "method": req2["method"], "params": req2["params"]}));
    let mut frames = Vec::new();
    let deadline = Instant::now() + wait;
    // These faults end the transport; every other one must leave it usable.
    let alive = !matches!(
        fault.split('@').next(),
        Some("transport-disconnect" | "process-crash" | "partial-response")
    );
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match s.recv_raw(left) {
            Some(f) => {
                let done = is_answer(&f, 2) || !f.ends_with(b"\n");
                // Answer an injected server->client request like a client would.
                if let Ok(v) = serde_json::from_slice::<Value>(&f)
                    && v.get("method").is_some()
                    && let Some(id) = v.get("id")
                {
                    s.send(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}));
                }
                frames.push(f);
                if done {
                    break;
                }
            }
            None => break,
        }
    }
    let elapsed = started.elapsed();
    let after = if alive {
        let (r, _) = s.call(
            3,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "next"}}),
        );
        Some(r)
    } else {
        None
    };
    let (status, stdout, _err) = s.finish(T);
    let log_bytes = std::fs::read(&log).expect("log written");
    let log = read_log(&log);
    Run {
        frames,
        after,
        elapsed,
        status,
        stdout,
        log_bytes,
        log,
        dir,
    }
}

fn echo2() -> Value {
    json!({"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}})
}

fn check_next_ok(run: &Run) {
    let after = run.after.as_ref().expect("transport survived");
    assert_eq!(after["result"]["content"][0]["text"], "next", "{after}");
    assert!(run.status.success());
}

/// Run twice with the same seed: identical stdout bytes and identical log bytes.
fn deterministic(fault: &str, extra: &[&str], req2: Value, wait: Duration) -> Run {
    let a = scenario(fault, 7, extra, req2.clone(), wait);
    let b = scenario(fault, 7, extra, req2, wait);
    assert_eq!(
        a.stdout, b.stdout,
        "{fault}: stdout differs between runs with the same seed"
    );
    assert_eq!(
        a.log_bytes, b.log_bytes,
        "{fault}: injection log differs between runs"
    );
    let inj = a.injection();
    assert_eq!(inj["fault"], fault.split('@').next().expect("id"));
    assert_eq!(inj["seed"], 7);
    assert_eq!(inj["request"]["ordinal"], 2);
    assert_eq!(inj["request"]["id"], 2);
    assert!(inj["boundary"].as_str().is_some_and(|b| !b.is_empty()));
    assert_eq!(a.log[0]["event"], "start");
    a
}

#[test]
fn protocol_error() {
    let r = deterministic("protocol-error", &[], echo2(), T);
    let f = r.json_frames();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["error"]["code"], -32601);
    assert_eq!(r.injection()["trigger"], "request-2");
    check_next_ok(&r);
}

#[test]
fn transport_disconnect() {
    let r = deterministic("transport-disconnect", &[], echo2(), T);
    assert!(r.frames.is_empty(), "no answer expected");
    assert!(r.status.success());
    assert_eq!(r.log.last().expect("log")["event"], "stop");
}

#[test]
fn timeout_withholds_the_response() {
    let r = deterministic("timeout", &[], echo2(), Duration::from_millis(600));
    assert!(r.frames.is_empty(), "response must be withheld");
    check_next_ok(&r);
    assert!(
        !String::from_utf8_lossy(&r.stdout).contains("\"x\""),
        "no late success"
    );
}

#[test]
fn cancellation_at_half_budget() {
    let req =
        json!({"method": "tools/call", "params": {"name": "slow", "arguments": {"delayMs": 50}}});
    let r = deterministic("cancellation", &[], req, T);
    let f = r.json_frames();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["error"]["code"], -32800);
    assert!(
        r.elapsed >= Duration::from_millis(100),
        "cancelled after half of 200 ms"
    );
    check_next_ok(&r);
    assert!(
        !String::from_utf8_lossy(&r.stdout).contains("slept"),
        "no late success"
    );
}

#[test]
fn malformed_message_is_seeded() {
    let r = deterministic("malformed-message", &[], echo2(), T);
    assert_eq!(r.frames.len(), 1);
    let frame = &r.frames[0];
    assert!(
        std::str::from_utf8(frame).is_err(),
        "invalid UTF-8 expected"
    );
    assert!(frame.windows(2).any(|w| w == [0xC3, 0x28]));
    assert!(frame.ends_with(b"\n"));
    check_next_ok(&r);
    // A different seed moves the corruption.
    let other = scenario("malformed-message", 8, &[], echo2(), T);
    assert_ne!(other.frames[0], *frame);
    assert_eq!(other.frames[0].len(), frame.len());
}

#[test]
fn schema_violation_removes_required_member() {
    let r = deterministic("schema-violation", &[], echo2(), T);
    let f = r.json_frames();
    assert_eq!(f.len(), 1);
    assert!(f[0]["result"].is_object());
    assert!(f[0]["result"].get("content").is_none(), "{}", f[0]);
    assert_eq!(r.injection()["detail"]["method"], "tools/call");
    check_next_ok(&r);
}

#[test]
fn extension_mismatch_sends_unadvertised_request() {
    let r = deterministic("extension-mismatch", &[], echo2(), T);
    let f = r.json_frames();
    assert_eq!(f.len(), 2);
    assert_eq!(f[0]["method"], "dev.mcpres.unadvertised/probe");
    assert_eq!(f[0]["id"], "mcpres-ext-2");
    assert_eq!(f[1]["result"]["content"][0]["text"], "x");
    check_next_ok(&r);
}

#[test]
fn duplicate_delivers_twice() {
    let r = deterministic("duplicate", &[], echo2(), T);
    let lines: Vec<&[u8]> = r
        .stdout
        .split_inclusive(|b| *b == b'\n')
        .filter(|l| is_answer(l, 2))
        .collect();
    assert_eq!(lines.len(), 2, "{:?}", String::from_utf8_lossy(&r.stdout));
    assert_eq!(lines[0], lines[1], "byte-identical copies");
    check_next_ok(&r);
}

#[test]
fn reorder_sends_uncorrelated_response_first() {
    let r = deterministic("reorder", &[], echo2(), T);
    let f = r.json_frames();
    assert_eq!(f.len(), 2);
    assert_eq!(f[0]["id"], 1_000_002);
    assert_eq!(f[1]["id"], 2);
    assert_eq!(f[0]["result"], f[1]["result"]);
    check_next_ok(&r);
}

#[test]
fn partial_response_closes_after_prefix() {
    let r = deterministic("partial-response", &[], echo2(), T);
    assert_eq!(r.frames.len(), 1);
    let prefix = &r.frames[0];
    assert!(!prefix.ends_with(b"\n") && !prefix.is_empty());
    assert!(
        serde_json::from_slice::<Value>(prefix).is_err(),
        "a prefix, not a full message"
    );
    assert!(
        b"{\"jsonrpc\":\"2.0\"".starts_with(&prefix[..prefix.len().min(16)])
            || prefix.starts_with(b"{")
    );
    assert!(r.status.success());
}

#[test]
fn delayed_response_by_configured_delay() {
    let r = deterministic("delayed-response", &[], echo2(), T);
    let f = r.json_frames();
    assert_eq!(f[0]["result"]["content"][0]["text"], "x");
    assert!(r.elapsed >= Duration::from_millis(150), "{:?}", r.elapsed);
    assert_eq!(r.injection()["detail"]["delayMs"], 150);
    check_next_ok(&r);
}

#[test]
fn process_crash_aborts() {
    use std::os::unix::process::ExitStatusExt;
    let r = deterministic("process-crash", &[], echo2(), T);
    assert!(r.frames.is_empty());
    assert_eq!(
        r.status.signal(),
        Some(6),
        "SIGABRT expected, got {:?}",
        r.status
    );
    assert_ne!(
        r.log.last().expect("log")["event"],
        "stop",
        "no graceful shutdown record"
    );
}

#[test]
fn dependency_failure_has_no_effect() {
    let req =
        json!({"method": "tools/call", "params": {"name": "counter", "arguments": {"key": "k"}}});
    let r = deterministic("dependency-failure", &[], req, T);
    let f = r.json_frames();
    assert_eq!(f[0]["result"]["isError"], true);
    assert!(
        f[0]["result"]["content"][0]["text"]
            .as_str()
            .expect("text")
            .starts_with("dependency unavailable")
    );
    check_next_ok(&r);
}

#[test]
fn authorization_rejection() {
    let r = deterministic("authorization-rejection", &[], echo2(), T);
    let f = r.json_frames();
    assert_eq!(f[0]["error"]["code"], -32000);
    assert_eq!(f[0]["error"]["data"]["reason"], "wrong-audience");
    check_next_ok(&r);
}

#[test]
fn cache_stale_poisoned() {
    let req = json!({"method": "tools/list", "params": {}});
    let r = deterministic("cache-stale-poisoned", &[], req, T);
    let f = r.json_frames();
    let result = &f[0]["result"];
    assert_eq!(
        result["_meta"]["dev.mcpres/cacheKey"]["serverVersion"],
        "0.0.0-stale"
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"],
        "0.0.0-stale"
    );
    assert!(
        result["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .any(|t| t["name"] == "stale_tool")
    );
    check_next_ok(&r);
}

#[test]
fn resource_exhaustion() {
    let r = deterministic("resource-exhaustion", &[], echo2(), T);
    let f = r.json_frames();
    assert_eq!(f[0]["error"]["data"]["reason"], "concurrency-over-limit");
    assert_eq!(f[0]["error"]["data"]["retryAfterMs"], 100);
    check_next_ok(&r);
}

#[test]
fn filesystem_publication_failure() {
    let r = deterministic("filesystem-publication-failure", &[], echo2(), T);
    let f = r.json_frames();
    assert_eq!(f[0]["result"]["isError"], true);
    assert!(
        f[0]["result"]["content"][0]["text"]
            .as_str()
            .expect("text")
            .starts_with("publication failed")
    );
    check_next_ok(&r);
}

#[test]
fn cleanup_failure_leaves_a_retained_handle() {
    let r = scenario("cleanup-failure", 7, &[], echo2(), T);
    let f = r.json_frames();
    assert_eq!(f[0]["result"]["content"][0]["text"], "x");
    check_next_ok(&r);
    let residue = r.dir.path().join("mcpres-retained-7-2.handle");
    assert!(residue.exists(), "retained handle must survive the process");
    assert_eq!(
        r.injection()["detail"]["residue"],
        residue.display().to_string()
    );
}

#[test]
fn triggers_by_method_tool_and_always() {
    // tool-NAME only hits that tool.
    let r = scenario("protocol-error@tool-add", 1, &[], echo2(), T);
    assert_eq!(r.json_frames()[0]["result"]["content"][0]["text"], "x");
    assert!(r.log.iter().all(|e| e["event"] != "injection"));
    // method-NAME hits every request of that method.
    let r = scenario(
        "authorization-rejection@method-tools/call",
        1,
        &[],
        echo2(),
        T,
    );
    assert_eq!(
        r.json_frames()[0]["error"]["data"]["reason"],
        "wrong-audience"
    );
    assert_eq!(
        r.after.as_ref().expect("alive")["error"]["data"]["reason"],
        "wrong-audience"
    );
    assert_eq!(
        r.log.iter().filter(|e| e["event"] == "injection").count(),
        2
    );
}

#[test]
fn real_in_flight_bound_rejects_excess() {
    let mut s = StdioServer::start(&["--max-in-flight", "2"]);
    s.initialize();
    for id in 2..=4 {
        s.send(&request(
            id,
            "tools/call",
            json!({"name": "slow", "arguments": {"delayMs": 300}}),
        ));
    }
    let first = s.recv(T).expect("overload answer");
    assert_eq!(first["id"], 4);
    assert_eq!(first["error"]["data"]["reason"], "concurrency-over-limit");
    let a = s.recv(T).expect("answer");
    let b = s.recv(T).expect("answer");
    let mut ids = [a["id"].as_i64(), b["id"].as_i64()];
    ids.sort();
    assert_eq!(ids, [Some(2), Some(3)]);
    s.finish(T);
}

#[test]
fn cancelled_requests_release_their_in_flight_slot() {
    let mut s = StdioServer::start(&[
        "--fault",
        "cancellation@tool-slow",
        "--budget-ms",
        "100",
        "--max-in-flight",
        "2",
    ]);
    s.initialize();
    for id in 2..=5 {
        let (r, _) = s.call(
            id,
            "tools/call",
            json!({"name": "slow", "arguments": {"delayMs": 3000}}),
        );
        assert_eq!(r["error"]["code"], -32800, "request {id}: {r}");
    }
    let (r, _) = s.call(
        6,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "free"}}),
    );
    assert_eq!(r["result"]["content"][0]["text"], "free");
    let (status, rest, _) = s.finish(T);
    assert!(status.success());
    assert!(
        !String::from_utf8_lossy(&rest).contains("slept"),
        "no late success"
    );
}

#[test]
fn requests_over_the_rate_limit_are_refused_with_the_wait() {
    // Two a minute: the third request is refused, whatever the machine's pace.
    let mut s = StdioServer::start(&["--rate-limit", "2/60000"]);
    s.initialize();
    for id in 2..=3 {
        let (r, _) = s.call(id, "ping", json!({}));
        assert_eq!(r["result"], json!({}), "request {id}: {r}");
    }
    let (r, _) = s.call(4, "ping", json!({}));
    assert_eq!(r["error"]["code"], -32000, "{r}");
    let data = &r["error"]["data"];
    assert_eq!(data["reason"], "rate-over-limit");
    assert_eq!(
        (data["limit"].as_u64(), data["windowMs"].as_u64()),
        (Some(2), Some(60000))
    );
    let wait = data["retryAfterMs"].as_u64().expect("a retry hint");
    assert!((1..=60000).contains(&wait), "{wait}");
    s.finish(T);
}

#[test]
fn the_store_tool_writes_its_file_or_reports_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let mut s = StdioServer::start(&["--state-dir", state.to_str().unwrap()]);
    s.initialize();
    let (list, _) = s.call(2, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"store"), "{names:?}");
    let (r, _) = s.call(
        3,
        "tools/call",
        json!({"name": "store", "arguments": {"key": "a", "bytes": 10}}),
    );
    assert_eq!(r["result"]["isError"], json!(null), "{r}");
    assert_eq!(std::fs::read(state.join("a")).unwrap(), b"xxxxxxxxxx");
    // The directory gone: the write fails, is reported, and leaves nothing.
    std::fs::remove_dir_all(&state).unwrap();
    let (r, _) = s.call(
        4,
        "tools/call",
        json!({"name": "store", "arguments": {"key": "b", "text": "hi"}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("could not store b:"), "{text}");
    let (r, _) = s.call(
        5,
        "tools/call",
        json!({"name": "store", "arguments": {"key": "../x", "text": "hi"}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    s.finish(T);
    // Without --state-dir there is no store tool.
    let mut plain = StdioServer::start(&[]);
    plain.initialize();
    let (list, _) = plain.call(2, "tools/list", json!({}));
    assert!(
        !list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "store")
    );
    plain.finish(T);
}

/// `--downstream-env VAR`: the `fetch` tool POSTs to the URL in `$VAR` (a loopback
/// listener here) and answers with its body; a 503, or nothing listening, is answered
/// with isError and the reason, never as a success.
#[test]
fn the_fetch_tool_reports_its_downstream_s_failure() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let served = std::thread::spawn(move || {
        let mut requests = Vec::new();
        for (n, conn) in listener.incoming().take(2).enumerate() {
            let mut c = conn.unwrap();
            let mut buf = vec![0u8; 4096];
            let got = c.read(&mut buf).unwrap();
            requests.push(String::from_utf8_lossy(&buf[..got]).into_owned());
            let reply = if n == 0 {
                "HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\n{\"up\":1}\n"
            } else {
                "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            };
            c.write_all(reply.as_bytes()).unwrap();
        }
        requests
    });
    let mut s = StdioServer::start_with_env(
        &["--downstream-env", "MCPRES_TEST_DOWNSTREAM"],
        &[("MCPRES_TEST_DOWNSTREAM", url.as_str())],
    );
    s.initialize();
    let (list, _) = s.call(2, "tools/list", json!({}));
    assert!(
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "fetch"),
        "{list}"
    );
    let call = json!({"name": "fetch", "arguments": {"path": "/items", "body": "{\"q\":1}"}});
    let (r, _) = s.call(3, "tools/call", call.clone());
    assert_eq!(r["result"]["isError"], json!(null), "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "{\"up\":1}\n", "{r}");
    let (r, _) = s.call(4, "tools/call", call.clone());
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("HTTP 503"), "{text}");
    let requests = served.join().unwrap();
    assert!(
        requests[0].starts_with("POST /items HTTP/1.1\r\n"),
        "{requests:?}"
    );
    assert!(requests[0].ends_with("{\"q\":1}"), "{requests:?}");
    // The listener gone: refused, reported.
    let (r, _) = s.call(5, "tools/call", call);
    assert_eq!(r["result"]["isError"], true, "{r}");
    let (r, _) = s.call(
        6,
        "tools/call",
        json!({"name": "fetch", "arguments": {"path": "no-slash"}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    s.finish(T);
}
