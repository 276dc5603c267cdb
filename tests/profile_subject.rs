//! The profile test subject (`tests/subjects/profile_subject.py`) tested on
//! its own, over real pipes and without the mcpres runner: a few healthy
//! behaviours of both protocol revisions, and a few `--break` switches each
//! changing what they name. `tests/profile_checks.rs` then uses the subject to
//! show that every profile check can fail.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

/// How long any single answer or exit may take before the test gives up
/// (a watchdog against hangs, not a timing assertion).
const WATCHDOG: Duration = Duration::from_secs(30);

fn subject_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/profile_subject.py")
}

/// The 2026-07-28 per-request metadata.
fn meta() -> Value {
    json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    }})
}

fn request(id: Value, method: &str, params: Option<Value>) -> Value {
    let mut r = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(p) = params {
        r["params"] = p;
    }
    r
}

fn initialize(id: i64, version: &str) -> Value {
    request(
        json!(id),
        "initialize",
        Some(json!({"protocolVersion": version, "capabilities": {},
                     "clientInfo": {"name": "profile-subject-test", "version": "1"}})),
    )
}

/// A running subject: stdout lines arrive on a channel, stderr is collected
/// by a thread.
struct Subject {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Subject {
    fn start(args: &[&str]) -> Subject {
        let mut child = Command::new("python3")
            .arg(subject_path())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start python3 profile_subject.py");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s);
            s
        });
        Subject {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: Some(stderr),
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(bytes).expect("write to the subject");
        stdin.flush().unwrap();
    }

    fn send(&mut self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).unwrap();
        line.push(b'\n');
        self.write(&line);
    }

    /// The next stdout line, raw.
    fn next_raw(&self) -> Vec<u8> {
        self.lines
            .recv_timeout(WATCHDOG)
            .expect("the subject answers within the watchdog")
    }

    /// The next stdout line as JSON.
    fn next(&self) -> Value {
        let line = self.next_raw();
        assert!(
            line.ends_with(b"\n"),
            "LF-terminated: {:?}",
            support::text(&line)
        );
        serde_json::from_slice(&line).expect("a JSON line")
    }

    fn call(&mut self, msg: &Value) -> Value {
        self.send(msg);
        self.next()
    }

    /// Close stdin and wait for the exit; returns the status, every stdout
    /// line not read yet, and stderr.
    fn finish(mut self) -> (ExitStatus, Vec<Vec<u8>>, String) {
        drop(self.stdin.take());
        let status = self.wait();
        let rest = self.lines.iter().collect();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        (status, rest, stderr)
    }

    fn wait(&mut self) -> ExitStatus {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if start.elapsed() > WATCHDOG {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("the subject did not exit within {WATCHDOG:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn signal(&self, sig: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        rustix::process::kill_process(pid, sig).unwrap();
    }
}

impl Drop for Subject {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn error_code(v: &Value) -> Option<i64> {
    v["error"]["code"].as_i64()
}

fn assert_error(v: &Value, id: Value, code: i64) {
    assert_eq!(v["id"], id, "{v}");
    assert_eq!(error_code(v), Some(code), "{v}");
    assert!(v.get("result").is_none(), "{v}");
}

/// A live process id that `/proc` shows as not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next();
            state != Some("Z")
        }
        Err(_) => false,
    }
}

fn read_pids(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

#[test]
fn healthy_2025_handshake_negotiates_and_refuses_out_of_order_requests() {
    let mut s = Subject::start(&[]);
    assert_error(&s.call(&request(json!(1), "ping", None)), json!(1), -32600);
    let init = s.call(&initialize(2, "1999-01-01"));
    assert_eq!(init["id"], 2);
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(
        s.call(&request(json!("p"), "ping", None))["result"],
        json!({})
    );
    assert_error(&s.call(&initialize(3, "2025-11-25")), json!(3), -32600);
    let tools = s.call(&request(json!(4), "tools/list", None));
    let tools = tools["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["echo", "add"]);
    for t in tools {
        assert_eq!(
            t["inputSchema"]["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
    }
    let sum = s.call(&request(
        json!(5),
        "tools/call",
        Some(json!({"name": "add", "arguments": {"a": 2, "b": 3}})),
    ));
    assert_eq!(sum["result"]["content"][0]["text"], "5", "{sum}");
    let bad = request(
        json!(6),
        "tools/call",
        Some(json!({"name": "add", "arguments": {"a": 2, "b": "3"}})),
    );
    assert_error(&s.call(&bad), json!(6), -32602);
    assert_error(
        &s.call(&request(json!(7), "prompts/list", None)),
        json!(7),
        -32601,
    );
    let (status, rest, stderr) = s.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(rest.is_empty());
    assert!(
        !stderr.contains('{'),
        "stderr holds plain diagnostics only: {stderr}"
    );
}

#[test]
fn healthy_2026_requests_are_stateless_and_carry_result_type() {
    let mut s = Subject::start(&[]);
    let d = s.call(&request(json!(1), "server/discover", Some(meta())));
    let r = &d["result"];
    assert_eq!(
        r["supportedVersions"],
        json!(["2025-11-25", "2026-07-28"]),
        "{d}"
    );
    assert!(r["capabilities"].is_object(), "{d}");
    assert_eq!(r["resultType"], "complete", "{d}");
    assert!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].is_string(),
        "{d}"
    );
    let list = s.call(&request(json!(2), "tools/list", Some(meta())));
    assert_eq!(list["result"]["resultType"], "complete", "{list}");
    assert_error(
        &s.call(&request(json!(3), "ping", Some(meta()))),
        json!(3),
        -32601,
    );
    let mut bogus = meta();
    bogus["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1999-01-01");
    let e = s.call(&request(json!(4), "tools/list", Some(bogus)));
    assert_error(&e, json!(4), -32022);
    assert!(
        !e["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let mut no_caps = meta();
    no_caps["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let e = s.call(&request(json!(5), "tools/list", Some(no_caps)));
    assert_error(&e, json!(5), -32602);
    let e = s.call(&request(json!(6), "tools/list", None));
    assert_error(&e, json!(6), -32600);
    let mut session = meta();
    session["_meta"]["io.modelcontextprotocol/sessionId"] = json!("unknown");
    let ok = s.call(&request(json!(7), "tools/list", Some(session)));
    assert!(ok["result"]["tools"].is_array(), "{ok}");
    let e = s.call(&json!({"jsonrpc": "2.0", "id": 8, "method": "server/discover", "params": 5}));
    assert_error(&e, json!(8), -32602);
    let (status, rest, _) = s.finish();
    assert_eq!(status.code(), Some(0));
    assert!(rest.is_empty());
}

#[test]
fn healthy_framing_refuses_what_is_not_a_request_and_stays_live() {
    let mut s = Subject::start(&[]);
    s.write(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"x\":\"\xff\"}}\n",
    );
    assert_error(&s.next(), Value::Null, -32700);
    s.write(b"not json\n");
    assert_error(&s.next(), Value::Null, -32700);
    let batch = json!([request(json!(1), "tools/list", Some(meta()))]);
    assert_error(&s.call(&batch), Value::Null, -32600);
    assert_error(
        &s.call(&request(Value::Null, "tools/list", Some(meta()))),
        Value::Null,
        -32600,
    );
    assert_error(
        &s.call(&request(json!({"a": 1}), "tools/list", Some(meta()))),
        Value::Null,
        -32600,
    );
    // A response and a notification from the client get no answer: the next
    // line is the answer to the request after them.
    s.send(&json!({"jsonrpc": "2.0", "id": 424242, "result": {}}));
    s.send(&json!({"jsonrpc": "2.0", "method": "server/discover", "params": meta()}));
    let big = s.call(&request(
        json!(9007199254740993_u64),
        "tools/list",
        Some(meta()),
    ));
    assert_eq!(
        big["id"].as_u64(),
        Some(9007199254740993),
        "the id is echoed exactly"
    );
    // A request written in pieces is answered once, after its LF.
    let line = serde_json::to_vec(&request(json!(10), "tools/list", Some(meta()))).unwrap();
    s.write(&line);
    s.write(b"\n");
    assert_eq!(s.next()["id"], 10);
    // A line over 4 MiB is refused and discarded; the subject stays live.
    let mut long = vec![b' '; 4 * 1024 * 1024 + 1];
    long.push(b'\n');
    s.write(&long);
    assert_error(&s.next(), Value::Null, -32600);
    let live = s.call(&request(json!(11), "tools/list", Some(meta())));
    assert_eq!(live["id"], 11);
    let (status, rest, _) = s.finish();
    assert_eq!(status.code(), Some(0));
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn with_child_the_child_is_reaped_on_eof_and_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    for (i, by_signal) in [false, true].into_iter().enumerate() {
        let pidfile = dir.path().join(format!("pids{i}"));
        let mut s = Subject::start(&["--with-child", "--child-pidfile", pidfile.to_str().unwrap()]);
        assert_eq!(
            s.call(&request(json!(1), "server/discover", Some(meta())))["id"],
            1
        );
        let pids = read_pids(&pidfile);
        assert_eq!(pids.len(), 1);
        assert!(alive(pids[0]), "the child runs while the subject does");
        if by_signal {
            s.signal(rustix::process::Signal::TERM);
        }
        let status = s.finish().0;
        let expected = if by_signal { 143 } else { 0 };
        assert_eq!(status.code(), Some(expected));
        assert!(!alive(pids[0]), "the child is gone once the subject exited");
    }
}

#[test]
fn each_break_changes_what_it_names() {
    // id-stringified: integer ids come back as strings.
    let mut s = Subject::start(&["--break", "id-stringified"]);
    assert_eq!(
        s.call(&request(json!(7), "tools/list", Some(meta())))["id"],
        "7"
    );
    drop(s);
    // round-ids: an id past 2^53 comes back rounded.
    let mut s = Subject::start(&["--break", "round-ids"]);
    let r = s.call(&request(
        json!(9007199254740993_u64),
        "tools/list",
        Some(meta()),
    ));
    assert_eq!(r["id"].as_u64(), Some(9007199254740992));
    drop(s);
    // echo-version: initialize echoes a bogus version.
    let mut s = Subject::start(&["--break", "echo-version"]);
    let r = s.call(&initialize(1, "1999-01-01"));
    assert_eq!(r["result"]["protocolVersion"], "1999-01-01");
    drop(s);
    // batch-accepted: both elements of a batch are answered.
    let mut s = Subject::start(&["--break", "batch-accepted"]);
    s.send(&json!([
        request(json!(1), "tools/list", Some(meta())),
        request(json!(2), "tools/list", Some(meta()))
    ]));
    assert_eq!(s.next()["id"], 1);
    assert_eq!(s.next()["id"], 2);
    drop(s);
    // dispatch-before-newline: answered though the LF was never sent.
    let mut s = Subject::start(&["--break", "dispatch-before-newline"]);
    let line = serde_json::to_vec(&request(json!(3), "tools/list", Some(meta()))).unwrap();
    s.write(&line);
    assert_eq!(s.next()["id"], 3);
    drop(s);
    // multiline-json: a pretty-printed request is answered.
    let mut s = Subject::start(&["--break", "multiline-json"]);
    let pretty =
        serde_json::to_string_pretty(&request(json!(4), "tools/list", Some(meta()))).unwrap();
    s.write(format!("{pretty}\n").as_bytes());
    assert_eq!(s.next()["id"], 4);
    drop(s);
    // no-result-type: results lose resultType, nothing else changes.
    let mut s = Subject::start(&["--break", "no-result-type"]);
    let r = s.call(&request(json!(5), "tools/list", Some(meta())));
    assert!(
        r["result"]["tools"].is_array() && r["result"].get("resultType").is_none(),
        "{r}"
    );
    drop(s);
    // stdout-banner and unsolicited-notification: stdout is not silent.
    let s = Subject::start(&["--break", "stdout-banner"]);
    assert_eq!(s.next_raw(), b"server starting\n");
    drop(s);
    let s = Subject::start(&["--break", "unsolicited-notification"]);
    assert_eq!(s.next()["method"], "notifications/message");
    drop(s);
    // protocol-on-stderr: the -32700 response goes to stderr.
    let mut s = Subject::start(&["--break", "protocol-on-stderr"]);
    s.write(b"garbage\n");
    let (status, rest, stderr) = s.finish();
    assert_eq!(status.code(), Some(0));
    assert!(rest.is_empty(), "{rest:?}");
    assert!(stderr.contains("\"code\":-32700"), "{stderr}");
    // orphan-child: the child outlives the subject (and the test kills it).
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pids");
    let mut s = Subject::start(&[
        "--break",
        "orphan-child",
        "--child-pidfile",
        pidfile.to_str().unwrap(),
    ]);
    assert_eq!(
        s.call(&request(json!(1), "tools/list", Some(meta())))["id"],
        1
    );
    let (status, _, _) = s.finish();
    assert_eq!(status.code(), Some(0));
    let pids = read_pids(&pidfile);
    let survived = pids.iter().all(|&p| alive(p));
    for &p in &pids {
        if alive(p) {
            let _ = rustix::process::kill_process(
                rustix::process::Pid::from_raw(p).unwrap(),
                rustix::process::Signal::KILL,
            );
        }
    }
    assert!(
        !pids.is_empty() && survived,
        "the orphan survives: {pids:?}"
    );
}

#[test]
fn unknown_break_is_a_usage_error() {
    let out = Command::new("python3")
        .arg(subject_path())
        .args(["--break", "no-such-defect"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", support::output_text(&out));
}
