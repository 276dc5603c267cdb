//! Raw JSON-RPC test clients for `mcpres serve` (stdio and Streamable HTTP).
//! Deliberately not rmcp: bytes in, bytes out.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_mcpres");
pub const LEGACY: &str = "2025-11-25";
pub const MODERN: &str = "2026-07-28";

pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"}
    })
}

/// Add the 2026-07-28 per-request `_meta` to params.
pub fn with_modern_meta(mut params: Value) -> Value {
    if params.is_null() {
        params = json!({});
    }
    params["_meta"] = modern_meta();
    params
}

pub fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub fn initialize_params() -> Value {
    json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "raw-test", "version": "0"}})
}

/// A `mcpres serve --transport stdio` child speaking raw newline-delimited JSON.
pub struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Vec<u8>>,
    /// Every stdout byte received so far, in order.
    pub raw: Vec<u8>,
    stderr: Option<thread::JoinHandle<String>>,
}

impl StdioServer {
    pub fn start(args: &[&str]) -> StdioServer {
        StdioServer::start_with_env(args, &[])
    }

    /// [`StdioServer::start`] with `env` added to the server's environment.
    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> StdioServer {
        let mut child = Command::new(BIN)
            .arg("serve")
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcpres serve");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut buf = Vec::new();
                match r.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(buf).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let stderr = thread::spawn(move || {
            let mut s = String::new();
            let _ = BufReader::new(stderr).read_to_string(&mut s);
            s
        });
        StdioServer {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            raw: Vec::new(),
            stderr: Some(stderr),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write stdin");
        stdin.flush().expect("flush stdin");
    }

    pub fn send(&mut self, v: &Value) {
        let mut b = serde_json::to_vec(v).expect("json");
        b.push(b'\n');
        self.send_raw(&b);
    }

    /// Next raw stdout chunk (a line, or a final unterminated prefix).
    pub fn recv_raw(&mut self, timeout: Duration) -> Option<Vec<u8>> {
        let b = self.lines.recv_timeout(timeout).ok()?;
        self.raw.extend_from_slice(&b);
        Some(b)
    }

    pub fn recv(&mut self, timeout: Duration) -> Option<Value> {
        let b = self.recv_raw(timeout)?;
        Some(serde_json::from_slice(&b).unwrap_or_else(|e| {
            panic!(
                "stdout frame is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&b)
            )
        }))
    }

    /// Send a request and wait for the response with its id; notifications seen on
    /// the way are returned too.
    pub fn call(&mut self, id: i64, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.send(&request(id, method, params));
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut notes = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = self
                .recv(left)
                .unwrap_or_else(|| panic!("no response to {method} (id {id})"));
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return (msg, notes);
            }
            notes.push(msg);
        }
    }

    /// Legacy handshake: initialize (request 1) + notifications/initialized.
    pub fn initialize(&mut self) -> Value {
        let (resp, _) = self.call(1, "initialize", initialize_params());
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        resp
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Close stdin and wait for exit; returns status, all remaining stdout bytes
    /// (appended to `raw`) and stderr.
    pub fn finish(mut self, timeout: Duration) -> (ExitStatus, Vec<u8>, String) {
        self.close_stdin();
        let status = self.wait(timeout);
        while let Ok(b) = self.lines.recv_timeout(Duration::from_millis(500)) {
            self.raw.extend_from_slice(&b);
        }
        let err = self
            .stderr
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        (status, std::mem::take(&mut self.raw), err)
    }

    pub fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("mcpres serve did not exit within {timeout:?}");
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Send a signal to one process by pid with the system `kill` utility.
pub fn signal(pid: u32, sig: &str) {
    let st = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(st.success(), "kill -{sig} {pid} failed");
}

/// Is a process with this pid still present (and not a zombie)?
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit_once(')')
            .map(|(_, rest)| rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

pub fn read_log(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("injection log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("log line is JSON"))
        .collect()
}

// ---------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------

/// A `mcpres serve --transport http --port 0` child; the port is parsed from stderr.
pub struct HttpServer {
    pub child: Child,
    pub port: u16,
    stderr_rest: Option<thread::JoinHandle<String>>,
}

impl HttpServer {
    pub fn start(args: &[&str]) -> HttpServer {
        HttpServer::start_env(args, &[])
    }

    /// `start` with extra environment variables for the child only.
    pub fn start_env(args: &[&str], env: &[(&str, &str)]) -> HttpServer {
        HttpServer::launch(0, args, env)
    }

    /// `start` on a chosen port (for example `support::free_port()`), for a
    /// test that must know the server's address before it starts.
    pub fn start_on(port: u16, args: &[&str]) -> HttpServer {
        let srv = HttpServer::launch(port, args, &[]);
        assert_eq!(
            srv.port, port,
            "the server listens on the port it was given"
        );
        srv
    }

    fn launch(port: u16, args: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let port = port.to_string();
        let mut child = Command::new(BIN)
            .args(["serve", "--transport", "http", "--port", &port])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcpres serve --transport http");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        let rest = thread::spawn(move || {
            let mut r = BufReader::new(stderr);
            let mut all = String::new();
            let mut line = String::new();
            while r.read_line(&mut line).unwrap_or(0) > 0 {
                if let Some(p) = line
                    .split("listening on http://127.0.0.1:")
                    .nth(1)
                    .and_then(|s| s.split('/').next())
                    .and_then(|s| s.parse::<u16>().ok())
                {
                    let _ = tx.send(p);
                }
                all.push_str(&line);
                line.clear();
            }
            all
        });
        let port = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("server printed its port");
        HttpServer {
            child,
            port,
            stderr_rest: Some(rest),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stop(mut self) -> (ExitStatus, String) {
        signal(self.child.id(), "TERM");
        let deadline = Instant::now() + Duration::from_secs(5);
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "http server did not exit on SIGTERM"
            );
            thread::sleep(Duration::from_millis(10));
        };
        let err = self
            .stderr_rest
            .take()
            .map(|h| h.join().unwrap_or_default())
            .unwrap_or_default();
        (status, err)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One raw HTTP/1.1 exchange.
#[derive(Debug)]
pub struct HttpReply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// True when the connection closed before a complete response.
    pub truncated: bool,
}

impl HttpReply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// JSON-RPC messages of the body (JSON or SSE `data:` lines).
    pub fn messages(&self) -> Vec<Value> {
        let ct = self.header("content-type").unwrap_or("");
        let text = String::from_utf8_lossy(&self.body);
        if ct.starts_with("text/event-stream") {
            text.split("\n\n")
                .filter_map(|ev| {
                    let data: Vec<&str> = ev
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(|d| d.strip_prefix(' ').unwrap_or(d))
                        .collect();
                    if data.is_empty() {
                        return None;
                    }
                    serde_json::from_str::<Value>(&data.join("\n")).ok()
                })
                .collect()
        } else if text.trim().is_empty() {
            Vec::new()
        } else {
            vec![
                serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("body not JSON ({e}): {text}")),
            ]
        }
    }

    pub fn response_to(&self, id: i64) -> Value {
        self.messages()
            .into_iter()
            .find(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
            .unwrap_or_else(|| {
                panic!(
                    "no response to id {id} in {:?}",
                    String::from_utf8_lossy(&self.body)
                )
            })
    }
}

/// POST a JSON-RPC body to /mcp over a fresh connection (`Connection: close`).
pub fn post(port: u16, body: &[u8], extra: &[(&str, &str)], timeout: Duration) -> HttpReply {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut req = head.into_bytes();
    req.extend_from_slice(body);
    exchange(port, &req, timeout)
}

/// In an HTTP session opened by `initialize` (`headers` name the session,
/// the protocol version and any credential): send `notifications/initialized`
/// (202), then `tools/list` as request 2 (200); returns the listed tools.
pub fn initialized_then_list_tools(
    port: u16,
    headers: &[(&str, &str)],
    timeout: Duration,
) -> Vec<Value> {
    let note = post(
        port,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        headers,
        timeout,
    );
    assert_eq!(note.status, 202);
    let list = post(
        port,
        request(2, "tools/list", json!({})).to_string().as_bytes(),
        headers,
        timeout,
    );
    assert_eq!(list.status, 200);
    list.response_to(2)["result"]["tools"]
        .as_array()
        .expect("a tools array")
        .clone()
}

pub fn exchange(port: u16, req: &[u8], timeout: Duration) -> HttpReply {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(timeout)).expect("timeout");
    s.write_all(req).expect("send request");
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut timed_out = false;
    loop {
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                timed_out = true;
                break;
            }
            Err(_) => break,
        }
    }
    parse_reply(&buf, timed_out)
}

fn parse_reply(buf: &[u8], timed_out: bool) -> HttpReply {
    let Some(split) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return HttpReply {
            status: 0,
            headers: Vec::new(),
            body: buf.to_vec(),
            truncated: true,
        };
    };
    let head = String::from_utf8_lossy(&buf[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let raw = &buf[split + 4..];
    let get = |n: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| v.clone())
    };
    let (body, truncated) = if get("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        dechunk(raw)
    } else if let Some(len) = get("content-length").and_then(|l| l.parse::<usize>().ok()) {
        (raw[..raw.len().min(len)].to_vec(), raw.len() < len)
    } else {
        (raw.to_vec(), false)
    };
    HttpReply {
        status,
        headers,
        body,
        truncated: truncated || (timed_out && status == 0),
    }
}

fn dechunk(mut raw: &[u8]) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    loop {
        let Some(eol) = raw.windows(2).position(|w| w == b"\r\n") else {
            return (out, true);
        };
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&raw[..eol])
                .split(';')
                .next()
                .unwrap_or("")
                .trim(),
            16,
        );
        let Ok(size) = size else { return (out, true) };
        raw = &raw[eol + 2..];
        if size == 0 {
            return (out, false);
        }
        if raw.len() < size + 2 {
            out.extend_from_slice(&raw[..raw.len().min(size)]);
            return (out, true);
        }
        out.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
}

/// Every complete HTTP/1.1 response in `buf`, in order (responses written
/// back to back on one connection, e.g. to pipelined requests). Stops at the
/// first incomplete one.
pub fn parse_replies(mut buf: &[u8]) -> Vec<HttpReply> {
    let mut out = Vec::new();
    while let Some(split) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&buf[..split]).to_ascii_lowercase();
        let raw = &buf[split + 4..];
        let len = if head.contains("transfer-encoding: chunked") {
            match chunked_len(raw) {
                Some(n) => n,
                None => break,
            }
        } else {
            let n = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if raw.len() < n {
                break;
            }
            n
        };
        out.push(parse_reply(&buf[..split + 4 + len], false));
        buf = &buf[split + 4 + len..];
    }
    out
}

/// Length of a complete chunked body at the start of `raw` (through its
/// last-chunk and empty trailer), or `None` when incomplete.
fn chunked_len(raw: &[u8]) -> Option<usize> {
    let mut at = 0;
    loop {
        let eol = raw[at..].windows(2).position(|w| w == b"\r\n")?;
        let line = String::from_utf8_lossy(&raw[at..at + eol]).to_string();
        let size = usize::from_str_radix(line.split(';').next()?.trim(), 16).ok()?;
        at += eol + 2;
        if size == 0 {
            // No trailers from our server: the empty line ends the body.
            return (raw.len() >= at + 2).then_some(at + 2);
        }
        if raw.len() < at + size + 2 {
            return None;
        }
        at += size + 2;
    }
}
