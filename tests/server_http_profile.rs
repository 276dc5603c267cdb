#![cfg(feature = "server")]
//! `mcpres serve --transport http` against the negative controls of the
//! `mcp-res/streamable-http/v1` check catalogue (spec/profiles.md, "What each
//! check observes"), on both revisions, over raw sockets: what the reference
//! server must answer for `mcpres profile run` to find each property.
//!
//! No test measures time: waits are bounded by generous read timeouts, and
//! the one ordering assertion (progress flushed before the result) has
//! seconds of margin.

mod server_support;
mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use server_support::*;

/// Bound of every wait here; never reached by a server that behaves.
const T: Duration = Duration::from_secs(20);

/// A synthetic credential for `--bearer-env` (test-only, never a secret).
const TOKEN: &str = "mcpres-test-credential-0123456789";
const TOKEN_ENV: &str = "MCPRES_TEST_BEARER";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rev {
    Legacy,
    Modern,
}

const REVS: [Rev; 2] = [Rev::Legacy, Rev::Modern];

/// A client of one revision: its session (2025-11-25) and credential.
struct Client {
    port: u16,
    rev: Rev,
    sid: Option<String>,
    bearer: Option<String>,
}

impl Client {
    /// Open the revision's conversation: `initialize` + `notifications/initialized`
    /// (2025-11-25) or nothing (2026-07-28, stateless).
    fn open(port: u16, rev: Rev, bearer: Option<&str>) -> Client {
        let mut c = Client {
            port,
            rev,
            sid: None,
            bearer: bearer.map(|b| format!("Bearer {b}")),
        };
        if rev == Rev::Legacy {
            let r = c.send(&request(1, "initialize", initialize_params()));
            assert_eq!(r.status, 200, "{}", text(&r.body));
            c.sid = Some(r.header("mcp-session-id").expect("session id").to_owned());
            let n = c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
            assert_eq!(n.status, 202);
        }
        c
    }

    /// The revision's headers for a message (without Content-Type/Accept).
    fn headers(&self, msg: &Value) -> Vec<(String, String)> {
        let mut h = Vec::new();
        if let Some(b) = &self.bearer {
            h.push(("Authorization".into(), b.clone()));
        }
        match self.rev {
            Rev::Legacy => {
                h.push(("MCP-Protocol-Version".into(), LEGACY.into()));
                if let Some(sid) = &self.sid {
                    h.push(("Mcp-Session-Id".into(), sid.clone()));
                }
            }
            Rev::Modern => {
                h.push(("MCP-Protocol-Version".into(), MODERN.into()));
                if let Some(m) = msg.get("method").and_then(Value::as_str) {
                    h.push(("Mcp-Method".into(), m.into()));
                    let name = match m {
                        "tools/call" | "prompts/get" => msg.pointer("/params/name"),
                        "resources/read" => msg.pointer("/params/uri"),
                        _ => None,
                    };
                    if let Some(n) = name.and_then(Value::as_str) {
                        h.push(("Mcp-Name".into(), n.into()));
                    }
                }
            }
        }
        h
    }

    /// A request of this revision (2026-07-28: with the per-request `_meta`).
    fn req(&self, id: i64, method: &str, params: Value) -> Value {
        match self.rev {
            Rev::Legacy => request(id, method, params),
            Rev::Modern => {
                // Keep what `_meta` already holds (a progressToken, ...).
                let own = params.get("_meta").cloned();
                let mut params = with_modern_meta(params);
                if let Some(Value::Object(own)) = own {
                    for (k, v) in own {
                        params["_meta"][k] = v;
                    }
                }
                request(id, method, params)
            }
        }
    }

    /// The revision's liveness request: `ping` (2025) or `tools/list` (2026).
    fn live(&self, id: i64) -> Value {
        match self.rev {
            Rev::Legacy => self.req(id, "ping", json!({})),
            Rev::Modern => self.req(id, "tools/list", json!({})),
        }
    }

    /// The bytes of a request to /mcp: `method`, the revision's headers for
    /// `msg`, the usual media types unless `extra` names them, `Connection:
    /// close` unless `keep_alive`, and `body` with its Content-Length.
    fn raw(
        &self,
        method: &str,
        msg: &Value,
        body: &[u8],
        extra: &[(&str, &str)],
        keep_alive: bool,
    ) -> Vec<u8> {
        let named = |n: &str| extra.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
        let mut h: Vec<(String, String)> = Vec::new();
        if !named("Host") {
            h.push(("Host".into(), format!("127.0.0.1:{}", self.port)));
        }
        if !named("Content-Type") {
            h.push(("Content-Type".into(), "application/json".into()));
        }
        if !named("Accept") {
            h.push((
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ));
        }
        h.extend(self.headers(msg));
        for (k, v) in extra {
            h.push(((*k).into(), (*v).into()));
        }
        if !keep_alive {
            h.push(("Connection".into(), "close".into()));
        }
        let mut out = format!("{method} /mcp HTTP/1.1\r\n");
        for (k, v) in &h {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut out = out.into_bytes();
        out.extend_from_slice(body);
        out
    }

    /// POST `msg` on a fresh connection and read the whole answer.
    fn send(&self, msg: &Value) -> HttpReply {
        self.send_with(msg, &msg.to_string().into_bytes(), &[])
    }

    /// POST `body` with the headers for `msg` plus `extra`.
    fn send_with(&self, msg: &Value, body: &[u8], extra: &[(&str, &str)]) -> HttpReply {
        exchange(self.port, &self.raw("POST", msg, body, extra, false), T)
    }

    /// The conversation is still served: a fresh connection's request is answered.
    fn assert_serving(&self, id: i64) {
        let r = self.send(&self.live(id));
        assert_eq!(r.status, 200, "{:?}: {}", self.rev, text(&r.body));
        assert!(r.response_to(id).get("result").is_some(), "{:?}", self.rev);
    }
}

/// Extra request headers, by name and value.
type Headers<'a> = &'a [(&'a str, &'a str)];

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The single JSON body of a reply (not SSE).
fn json_body(r: &HttpReply) -> Value {
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("application/json")),
        "{r:?}"
    );
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("{e}: {}", text(&r.body)))
}

fn assert_jsonrpc_error(r: &HttpReply, status: u16, code: i64, what: &str) {
    assert_eq!(r.status, status, "{what}: {}", text(&r.body));
    let v = json_body(r);
    assert_eq!(v["jsonrpc"], "2.0", "{what}: {v}");
    assert_eq!(v["id"], Value::Null, "{what}: {v}");
    assert_eq!(v["error"]["code"], code, "{what}: {v}");
    assert!(v.get("result").is_none(), "{what}: {v}");
}

/// Read from `s` until the server closes it; `None` if still open after `T`.
fn read_to_close(s: &mut TcpStream) -> Option<Vec<u8>> {
    s.set_read_timeout(Some(T)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Some(got),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return None;
            }
            Err(_) => return Some(got),
        }
    }
}

// ---------------------------------------------------------------------------
// Bodies the SDK would answer with a bare 415
// ---------------------------------------------------------------------------

/// request-response-binding and every mutant: a body that is not JSON is a
/// `400` whose body is the JSON-RPC parse error (the syntax guard), on both
/// revisions, and the server keeps serving.
#[test]
fn a_body_that_is_not_json_is_a_400_parse_error() {
    let srv = HttpServer::start(&[]);
    for rev in REVS {
        let c = Client::open(srv.port, rev, None);
        let live = c.live(5);
        for body in [
            &b"{not json"[..],
            b"",
            b"{\"jsonrpc\":\"2.0\",",
            b"\xff\xfe",
        ] {
            let r = c.send_with(&live, body, &[]);
            assert_jsonrpc_error(&r, 400, -32700, &format!("{rev:?} {:?}", text(body)));
            assert_eq!(json_body(&r)["error"]["message"], "Parse error");
        }
        c.assert_serving(6);
    }
    srv.stop();
}

/// request-response-binding's control: JSON that is not one JSON-RPC
/// message (an id that cannot be bound, a batch, no `"jsonrpc": "2.0"`, a
/// response with neither result nor error) is a `400` with `-32600`.
#[test]
fn json_that_is_not_a_json_rpc_message_is_a_400_invalid_request() {
    let srv = HttpServer::start(&[]);
    for rev in REVS {
        let c = Client::open(srv.port, rev, None);
        let live = c.live(7);
        let mut no_version = live.clone();
        no_version.as_object_mut().unwrap().remove("jsonrpc");
        let cases = [
            ("null id", {
                let mut m = live.clone();
                m["id"] = Value::Null;
                m
            }),
            ("object id", {
                let mut m = live.clone();
                m["id"] = json!({"n": 1});
                m
            }),
            ("fractional id", {
                let mut m = live.clone();
                m["id"] = json!(1.5);
                m
            }),
            ("batch", json!([live.clone()])),
            ("no jsonrpc member", no_version),
            ("jsonrpc 1.0", {
                let mut m = live.clone();
                m["jsonrpc"] = json!("1.0");
                m
            }),
            ("a string", json!("ping")),
            (
                "response without result",
                json!({"jsonrpc": "2.0", "id": 3}),
            ),
            (
                "method not a string",
                json!({"jsonrpc": "2.0", "id": 3, "method": 5}),
            ),
        ];
        for (what, msg) in cases {
            let r = c.send_with(&live, msg.to_string().as_bytes(), &[]);
            assert_jsonrpc_error(&r, 400, -32600, &format!("{rev:?} {what}"));
        }
        c.assert_serving(8);
    }
    srv.stop();
}

/// None of those refusals, nor the SDK's 406/415, is counted by the fault
/// schedule: with `protocol-error@request-1`, the first request that is
/// served is the one the fault hits.
#[test]
fn refused_bodies_never_reach_the_fault_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("injections.jsonl");
    let srv = HttpServer::start(&[
        "--revision",
        MODERN,
        "--fault",
        "protocol-error@request-1",
        "--injection-log",
        log.to_str().unwrap(),
    ]);
    let c = Client::open(srv.port, Rev::Modern, None);
    let live = c.live(1);
    let mut null_id = live.clone();
    null_id["id"] = Value::Null;
    let (null_id, batch, valid) = (
        null_id.to_string(),
        json!([live.clone()]).to_string(),
        live.to_string(),
    );
    let refused: [(&str, Headers, u16); 5] = [
        ("{not json", &[], 400),
        (&null_id, &[], 400),
        (&batch, &[], 400),
        (&valid, &[("Accept", "text/html")], 406),
        (&valid, &[("Content-Type", "text/plain")], 415),
    ];
    for (body, extra, status) in refused {
        let r = c.send_with(&live, body.as_bytes(), extra);
        assert_eq!(r.status, status, "{}", text(&r.body));
    }
    // A POST elsewhere than the endpoint is not the endpoint's request.
    let elsewhere = String::from_utf8(c.raw("POST", &live, valid.as_bytes(), &[], false))
        .unwrap()
        .replacen("POST /mcp ", "POST /elsewhere ", 1);
    assert_eq!(exchange(srv.port, elsewhere.as_bytes(), T).status, 404);
    let first = c.send(&c.live(2));
    assert_eq!(
        first.response_to(2)["error"]["code"],
        -32601,
        "the fault did not hit the first request served"
    );
    srv.stop();
    let hits: Vec<Value> = read_log(&log)
        .into_iter()
        .filter(|e| e["event"] == "injection")
        .collect();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["request"]["id"], 2, "{hits:?}");
}

/// duplicate-delivery's control: a JSON-RPC response the server never asked
/// for, delivered twice, is accepted with `202` and no body, and the server
/// keeps serving (2026-07-28: the SDK answered it `400` with an error frame).
#[test]
fn a_stray_response_is_accepted_without_an_answer_frame() {
    let srv = HttpServer::start(&[]);
    for rev in REVS {
        let c = Client::open(srv.port, rev, None);
        let stray = json!({"jsonrpc": "2.0", "id": "mcpres-never-asked", "result": {}});
        for _ in 0..2 {
            let r = c.send(&stray);
            assert_eq!(r.status, 202, "{rev:?}: {}", text(&r.body));
            assert!(r.body.is_empty(), "{rev:?}: {}", text(&r.body));
        }
        let stray_error =
            json!({"jsonrpc": "2.0", "id": 77, "error": {"code": -1, "message": "x"}});
        let r = c.send(&stray_error);
        assert_eq!(r.status, 202, "{rev:?}: {}", text(&r.body));
        c.assert_serving(9);
    }
    srv.stop();
}

// ---------------------------------------------------------------------------
// The synthetic bearer credential
// ---------------------------------------------------------------------------

fn start_with_bearer(extra: &[&str]) -> HttpServer {
    // The credential reaches the child through its own environment only
    // (Command::env), never this process's.
    let mut args = vec!["--bearer-env", TOKEN_ENV];
    args.extend_from_slice(extra);
    HttpServer::start_env(&args, &[(TOKEN_ENV, TOKEN)])
}

/// authenticated-loopback-http: with `--bearer-env`, every request (any
/// method) without the credential gets `401`, `WWW-Authenticate: Bearer` and
/// a JSON-RPC error, before the fault schedule; with it both revisions are
/// served; the credential appears in no output and no injection log.
#[test]
fn the_bearer_credential_is_required_on_every_request() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("injections.jsonl");
    let srv = start_with_bearer(&[
        "--fault",
        "protocol-error@request-1",
        "--injection-log",
        log.to_str().unwrap(),
    ]);
    let anon = Client {
        port: srv.port,
        rev: Rev::Modern,
        sid: None,
        bearer: None,
    };
    let live = anon.live(1);
    let body = live.to_string().into_bytes();
    let wrong = format!("Bearer {}x", TOKEN);
    let cases: [(&str, Headers, bool); 6] = [
        ("POST", &[], false),
        ("POST", &[("Authorization", wrong.as_str())], true),
        (
            "POST",
            &[("Authorization", "Basic bWNwcmVzOm1jcHJlcw==")],
            false,
        ),
        ("GET", &[], false),
        ("DELETE", &[], false),
        ("PUT", &[], false),
    ];
    for (method, extra, invalid) in cases {
        let r = exchange(srv.port, &anon.raw(method, &live, &body, extra, false), T);
        assert_eq!(r.status, 401, "{method} {extra:?}: {}", text(&r.body));
        let challenge = r.header("www-authenticate").expect("WWW-Authenticate");
        assert!(challenge.starts_with("Bearer"), "{challenge}");
        assert_eq!(challenge.contains("invalid_token"), invalid, "{challenge}");
        let v = json_body(&r);
        assert_eq!(v["jsonrpc"], "2.0");
        assert!(v["error"]["code"].is_i64(), "{v}");
        assert!(!text(&r.body).contains(TOKEN));
    }
    // The refusals took no ordinal: the first authenticated request is request 1.
    let modern = Client::open(srv.port, Rev::Modern, Some(TOKEN));
    let first = modern.send(&modern.live(2));
    assert_eq!(first.response_to(2)["error"]["code"], -32601);
    modern.assert_serving(3);
    let legacy = Client::open(srv.port, Rev::Legacy, Some(TOKEN));
    legacy.assert_serving(4);
    let m = modern.live(5);
    let lower = exchange(
        srv.port,
        &modern
            .raw("POST", &m, m.to_string().as_bytes(), &[], false)
            .replace_header("Authorization", &format!("bearer {TOKEN}")),
        T,
    );
    assert_eq!(lower.status, 200, "the scheme is case-insensitive");
    let (status, stderr) = srv.stop();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains(TOKEN), "{stderr}");
    let log_bytes = std::fs::read(&log).unwrap();
    assert!(!text(&log_bytes).contains(TOKEN));
    assert!(!text(&log_bytes).contains(TOKEN_ENV));
}

trait ReplaceHeader {
    fn replace_header(self, name: &str, value: &str) -> Vec<u8>;
}

impl ReplaceHeader for Vec<u8> {
    /// Replace the value of header `name` in a raw request head.
    fn replace_header(self, name: &str, value: &str) -> Vec<u8> {
        let split = self.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8(self[..split].to_vec()).unwrap();
        let head: Vec<String> = head
            .split("\r\n")
            .map(|l| match l.split_once(':') {
                Some((k, _)) if k.eq_ignore_ascii_case(name) => format!("{name}: {value}"),
                _ => l.to_owned(),
            })
            .collect();
        let mut out = head.join("\r\n").into_bytes();
        out.extend_from_slice(&self[split..]);
        out
    }
}

/// `--bearer-env` refuses to start (exit 2) when the variable is unset, too
/// short, or used with stdio; no message carries the value.
#[test]
fn the_bearer_credential_must_be_usable_to_start() {
    let short = "short-token";
    let cases: [(&[&str], Option<&str>, &str); 3] = [
        (
            &["--transport", "http", "--bearer-env", TOKEN_ENV],
            None,
            "is not set",
        ),
        (
            &["--transport", "http", "--bearer-env", TOKEN_ENV],
            Some(short),
            "shorter than 16 bytes",
        ),
        (
            &["--transport", "stdio", "--bearer-env", TOKEN_ENV],
            Some(TOKEN),
            "needs --transport http",
        ),
    ];
    for (args, value, reason) in cases {
        let mut cmd = Command::new(BIN);
        cmd.arg("serve")
            .args(args)
            .args(["--port", "0"])
            .env_remove(TOKEN_ENV)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(v) = value {
            cmd.env(TOKEN_ENV, v);
        }
        let out = cmd.output().expect("run mcpres serve");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--bearer-env"), "{err}");
        assert!(err.contains(reason), "{args:?}: {err}");
        if let Some(v) = value {
            assert!(!err.contains(v), "{err}");
        }
        assert!(out.stdout.is_empty());
    }
}

// ---------------------------------------------------------------------------
// The rest of the catalogue's controls, on both revisions
// ---------------------------------------------------------------------------

/// status-code-consistency, content-type, json-versus-sse-response,
/// buffering-detection, transport-header-message-metadata-separation, retry,
/// proxy-added-headers and no-unauthorized-redirect: each control's refusal.
#[test]
fn header_and_method_controls_are_refused() {
    let srv = HttpServer::start(&[]);
    for rev in REVS {
        let c = Client::open(srv.port, rev, None);
        let live = c.live(11);
        let body = live.to_string().into_bytes();
        // A notification: 202, no body.
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": 999, "reason": "probe"}});
        let r = c.send(&note);
        assert_eq!(r.status, 202, "{rev:?}");
        assert!(r.body.is_empty());
        let status_of = |method: &str, extra: &[(&str, &str)]| {
            let r = exchange(srv.port, &c.raw(method, &live, &body, extra, false), T);
            assert!(
                r.header("location").is_none(),
                "{rev:?} {extra:?}: a redirect"
            );
            r.status
        };
        assert_eq!(status_of("PUT", &[]), 405, "{rev:?}");
        assert_eq!(status_of("POST", &[("Content-Type", "text/plain")]), 415);
        assert_eq!(status_of("POST", &[("Accept", "text/html")]), 406);
        assert_eq!(status_of("POST", &[("Accept", "application/json")]), 406);
        assert_eq!(status_of("POST", &[("Host", "mcpres-probe.invalid")]), 403);
        assert_eq!(
            status_of("POST", &[("Origin", "http://mcpres-probe.invalid")]),
            403
        );
        let proxied = [
            (
                "Forwarded",
                "for=192.0.2.1;proto=https;host=mcpres-probe.invalid",
            ),
            ("X-Forwarded-For", "192.0.2.1"),
            ("X-Forwarded-Host", "mcpres-probe.invalid"),
            ("X-Forwarded-Proto", "https"),
            ("Via", "1.1 mcpres-probe.invalid"),
        ];
        assert_eq!(status_of("POST", &proxied), 200, "{rev:?}");
        match rev {
            Rev::Legacy => {
                let stale = Client {
                    port: srv.port,
                    rev,
                    sid: Some("mcpres-unknown-session".into()),
                    bearer: None,
                };
                assert_eq!(stale.send(&live).status, 404);
                let mut in_meta = live.clone();
                in_meta["params"]["_meta"] = json!({"sessionId": c.sid.clone().unwrap()});
                let bare = Client {
                    port: srv.port,
                    rev,
                    sid: None,
                    bearer: None,
                };
                assert_eq!(bare.send(&in_meta).status, 400);
            }
            Rev::Modern => {
                let r = c.send_with(&live, &body, &[("Mcp-Method", "prompts/list")]);
                assert_eq!(r.status, 400, "{}", text(&r.body));
                let mut old = live.clone();
                old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] =
                    json!("1999-01-01");
                let r = exchange(
                    srv.port,
                    &c.raw("POST", &old, old.to_string().as_bytes(), &[], false)
                        .replace_header("MCP-Protocol-Version", "1999-01-01"),
                    T,
                );
                assert_eq!(r.status, 400, "{}", text(&r.body));
            }
        }
        c.assert_serving(12);
    }
    srv.stop();
}

/// The `counter` tool call used to tell whether a request was dispatched:
/// its first call for a key has the effect, any later one replays it.
fn counter_call(c: &Client, id: i64, key: &str, amount: i64) -> Value {
    c.req(
        id,
        "tools/call",
        json!({"name": "counter", "arguments": {"key": key, "amount": amount}}),
    )
}

/// How many counter effects the server has applied (`mcpres://state/counter`).
fn effects(c: &Client) -> u64 {
    let r = c.send(&c.req(
        41,
        "resources/read",
        json!({"uri": "mcpres://state/counter"}),
    ));
    let v = r.response_to(41);
    let state: Value = serde_json::from_str(
        v["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{v}")),
    )
    .unwrap();
    state["effects"].as_u64().unwrap()
}

fn assert_never_dispatched(c: &Client, before: u64, what: &str) {
    assert_eq!(
        effects(c),
        before,
        "{:?}: the refused {what} request was dispatched",
        c.rev
    );
}

/// malformed-chunk, interrupted-body and oversized-event's controls: a
/// chunk-size line that is not hex, a body the client stops sending, and a
/// 16 MiB body are refused or closed and never dispatched; the server keeps
/// serving.
#[test]
fn malformed_interrupted_and_oversized_bodies_are_never_dispatched() {
    let srv = HttpServer::start(&[]);
    for rev in REVS {
        let c = Client::open(srv.port, rev, None);
        let tag = format!("{rev:?}");
        // A chunk-size line that is not hex.
        let key = format!("chunk-{tag}");
        let msg = counter_call(&c, 30, &key, 5);
        let body = msg.to_string();
        let head = c.raw(
            "POST",
            &msg,
            b"",
            &[("Transfer-Encoding", "chunked")],
            false,
        );
        let head = String::from_utf8(head)
            .unwrap()
            .replace("Content-Length: 0\r\n", "");
        let mut req = head.into_bytes();
        req.extend_from_slice(format!("zz\r\n{body}\r\n0\r\n\r\n").as_bytes());
        let before = effects(&c);
        let r = exchange(srv.port, &req, T);
        assert!(
            r.status == 400 || r.status == 0,
            "{tag}: malformed chunk answered {} {}",
            r.status,
            text(&r.body)
        );
        assert_never_dispatched(&c, before, "malformed-chunk");
        // Half the declared body, then the client stops (and closes).
        let key = format!("half-{tag}");
        let msg = counter_call(&c, 31, &key, 5);
        let full = c.raw("POST", &msg, msg.to_string().as_bytes(), &[], false);
        let cut = full.len() - msg.to_string().len() / 2;
        let before = effects(&c);
        let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
        s.write_all(&full[..cut]).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let got = read_to_close(&mut s).expect("the half-sent request's connection was kept");
        let replies = parse_replies(&got);
        assert!(
            replies.iter().all(|r| r.status == 400 || r.status == 408),
            "{tag}: {}",
            text(&got)
        );
        drop(s);
        assert_never_dispatched(&c, before, "half-sent");
        // 16 MiB of valid JSON-RPC.
        let key = format!("big-{tag}");
        let mut msg = counter_call(&c, 32, &key, 5);
        msg["params"]["arguments"]["pad"] = json!("x".repeat(16 * 1024 * 1024));
        let req = c.raw("POST", &msg, msg.to_string().as_bytes(), &[], false);
        let before = effects(&c);
        let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
        // The server may refuse before reading it all: a failed write is fine.
        let _ = s.write_all(&req);
        let got = read_to_close(&mut s).expect("the oversized request's connection was kept");
        let replies = parse_replies(&got);
        assert_eq!(replies.len(), 1, "{tag}: {}", text(&got));
        assert_eq!(replies[0].status, 413, "{tag}");
        assert_never_dispatched(&c, before, "16 MiB");
        c.assert_serving(33);
    }
    srv.stop();
}

/// keepalive, backpressure and request-response-binding: two requests in
/// turn on one connection; two pipelined ones answered in order; `Connection:
/// close` answered and then closed; two connections at once each answered
/// with their own id.
#[test]
fn keep_alive_pipelining_close_and_concurrency() {
    let srv = HttpServer::start(&[]);
    for rev in REVS {
        let c = Client::open(srv.port, rev, None);
        // In turn on one connection.
        let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
        s.set_read_timeout(Some(T)).unwrap();
        for id in [50, 51] {
            let m = c.live(id);
            s.write_all(&c.raw("POST", &m, m.to_string().as_bytes(), &[], true))
                .unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 8192];
            while parse_replies(&got).is_empty() {
                let n = s
                    .read(&mut buf)
                    .expect("answer on the kept-alive connection");
                assert!(n > 0, "{rev:?}: closed before answering {id}");
                got.extend_from_slice(&buf[..n]);
            }
            parse_replies(&got)[0].response_to(id);
        }
        // Pipelined: both written at once, the second asking to close.
        let (a, b) = (c.live(52), c.live(53));
        let mut req = c.raw("POST", &a, a.to_string().as_bytes(), &[], true);
        req.extend(c.raw("POST", &b, b.to_string().as_bytes(), &[], false));
        let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
        s.write_all(&req).unwrap();
        let got = read_to_close(&mut s).expect("Connection: close was not honoured");
        let replies = parse_replies(&got);
        assert_eq!(replies.len(), 2, "{rev:?}: {}", text(&got));
        replies[0].response_to(52);
        replies[1].response_to(53);
        // Two connections at once.
        let (x, y) = (c.live(54), c.live(55));
        let reqs = [
            c.raw("POST", &x, x.to_string().as_bytes(), &[], false),
            c.raw("POST", &y, y.to_string().as_bytes(), &[], false),
        ];
        let mut conns: Vec<TcpStream> = reqs
            .iter()
            .map(|r| {
                let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
                s.write_all(r).unwrap();
                s
            })
            .collect();
        for (s, id) in conns.iter_mut().zip([54, 55]) {
            let got = read_to_close(s).expect("answer");
            let replies = parse_replies(&got);
            assert_eq!(replies.len(), 1);
            let msgs = replies[0].messages();
            assert!(
                msgs.iter().all(|m| m["id"] == id),
                "{rev:?}: connection for {id} carried {msgs:?}"
            );
            replies[0].response_to(id);
        }
    }
    srv.stop();
}

/// buffering-detection and cancellation-by-stream-close: the `progress`
/// tool's first event reaches the client while the call is still running
/// (two steps 2 s apart), and closing the stream then leaves the server
/// serving.
#[test]
fn progress_events_are_flushed_one_by_one() {
    let srv = HttpServer::start(&[]);
    for rev in REVS {
        let c = Client::open(srv.port, rev, None);
        let m = c.req(
            60,
            "tools/call",
            json!({"name": "progress", "arguments": {"steps": 2, "stepDelayMs": 2000},
                   "_meta": {"progressToken": "p"}}),
        );
        let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
        s.set_read_timeout(Some(T)).unwrap();
        s.write_all(&c.raw("POST", &m, m.to_string().as_bytes(), &[], false))
            .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 8192];
        while !text(&got).contains("notifications/progress") {
            let n = s.read(&mut buf).expect("first progress event");
            assert!(n > 0, "{rev:?}: closed before any event: {}", text(&got));
            got.extend_from_slice(&buf[..n]);
        }
        assert!(
            !text(&got).contains("completed 2 steps"),
            "{rev:?}: the first event came with the result: {}",
            text(&got)
        );
        drop(s);
        c.assert_serving(61);
    }
    srv.stop();
}

/// socket-cleanup's control: SIGTERM with an idle kept-alive connection
/// open: the process exits and the connection is closed.
#[test]
fn sigterm_closes_idle_keep_alive_connections() {
    let srv = HttpServer::start(&[]);
    let c = Client::open(srv.port, Rev::Modern, None);
    let m = c.live(70);
    let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    s.write_all(&c.raw("POST", &m, m.to_string().as_bytes(), &[], true))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    while parse_replies(&got).is_empty() {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0);
        got.extend_from_slice(&buf[..n]);
    }
    let port = srv.port;
    let since = support::boot_ticks();
    let (status, err) = srv.stop();
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(
        read_to_close(&mut s),
        Some(Vec::new()),
        "the idle connection was left open"
    );
    support::assert_port_released(port, since, "after stop");
}
