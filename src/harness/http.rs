//! Streamable HTTP subjects: the harness's own minimal HTTP/1.1 client.
//!
//! Like the stdio path, this records before it parses: every request's bytes
//! are appended to the session's raw request capture before they are written
//! to the socket, and every byte read is appended to the raw response capture
//! before the response is decoded (chunked transfer coding, then either one
//! JSON body or Server-Sent Events whose `data` lines are the JSON-RPC frames).
//! Only loopback targets are accepted.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::subject::{Frame, Recording};

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

/// Is something accepting connections on `addr`?
pub async fn listening(addr: SocketAddr) -> bool {
    matches!(
        tokio::time::timeout(Duration::from_millis(500), TcpStream::connect(addr)).await,
        Ok(Ok(_))
    )
}

/// The local addresses with a listening TCP socket on `port`, from
/// `/proc/net/tcp` and `/proc/net/tcp6` (Linux): shows whether a subject bound
/// loopback only or every interface.
pub fn listening_addresses(port: u16) -> Vec<String> {
    let mut out = Vec::new();
    for (file, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st ...; state 0A is LISTEN.
            if fields.len() < 4 || fields[3] != "0A" {
                continue;
            }
            let Some((addr, p)) = fields[1].split_once(':') else {
                continue;
            };
            if u16::from_str_radix(p, 16).ok() != Some(port) {
                continue;
            }
            out.push(decode_proc_addr(addr, v6));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `/proc/net/tcp*` addresses are hex words in host (little-endian) order.
fn decode_proc_addr(hex: &str, v6: bool) -> String {
    let words: Vec<u32> = (0..hex.len() / 8)
        .filter_map(|i| u32::from_str_radix(&hex[i * 8..i * 8 + 8], 16).ok())
        .collect();
    let bytes: Vec<u8> = words
        .iter()
        .flat_map(|w| w.swap_bytes().to_be_bytes())
        .collect();
    if v6 && bytes.len() == 16 {
        let mut a = [0u8; 16];
        a.copy_from_slice(&bytes);
        std::net::Ipv6Addr::from(a).to_string()
    } else if bytes.len() == 4 {
        std::net::Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]).to_string()
    } else {
        hex.to_string()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyMode {
    Length(usize),
    Chunked,
    UntilEof,
}

/// Status, headers, body offset and body framing of a parsed response head.
type Head = (u16, Vec<(String, String)>, usize, BodyMode);

/// An incremental HTTP/1.1 response decoder.
#[derive(Debug, Default)]
pub struct ResponseParser {
    buf: Vec<u8>,
    head: Option<Head>,
    raw_cursor: usize,
    body: Vec<u8>,
    body_done: bool,
    event_cursor: usize,
    json_emitted: bool,
}

impl ResponseParser {
    pub fn status(&self) -> Option<u16> {
        self.head.as_ref().map(|h| h.0)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.as_ref().and_then(|h| {
            h.1.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        })
    }

    fn is_sse(&self) -> bool {
        self.header("content-type")
            .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"))
    }

    pub fn done(&self) -> bool {
        self.body_done
    }

    /// Feed bytes; returns the JSON-RPC frames that became complete.
    pub fn feed(&mut self, data: &[u8]) -> Vec<Vec<u8>> {
        self.buf.extend_from_slice(data);
        if self.head.is_none() {
            let Some(end) = find(&self.buf, b"\r\n\r\n") else {
                return Vec::new();
            };
            let text = String::from_utf8_lossy(&self.buf[..end]).into_owned();
            let mut lines = text.split("\r\n");
            let status = lines
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let headers: Vec<(String, String)> = lines
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect();
            let get = |n: &str| {
                headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(n))
                    .map(|(_, v)| v.clone())
            };
            let mode =
                if get("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
                    BodyMode::Chunked
                } else if let Some(n) = get("content-length").and_then(|v| v.parse().ok()) {
                    BodyMode::Length(n)
                } else if status == 204 || status == 304 || (100..200).contains(&status) {
                    BodyMode::Length(0)
                } else {
                    BodyMode::UntilEof
                };
            self.raw_cursor = end + 4;
            self.head = Some((status, headers, end + 4, mode));
        }
        self.decode_body();
        self.frames(false)
    }

    /// The connection closed: whatever is complete now.
    pub fn finish(&mut self) -> Vec<Vec<u8>> {
        if let Some((_, _, _, BodyMode::UntilEof)) = self.head {
            self.body_done = true;
        }
        self.frames(true)
    }

    fn decode_body(&mut self) {
        let Some((_, _, _, mode)) = self.head.clone() else {
            return;
        };
        match mode {
            BodyMode::Length(n) => {
                let end = (self.raw_cursor + n).min(self.buf.len());
                self.body = self.buf[self.raw_cursor..end].to_vec();
                self.body_done = self.body.len() == n;
            }
            BodyMode::UntilEof => {
                self.body = self.buf[self.raw_cursor..].to_vec();
            }
            BodyMode::Chunked => {
                while !self.body_done {
                    let Some(eol) = find(&self.buf[self.raw_cursor..], b"\r\n") else {
                        return;
                    };
                    let line =
                        String::from_utf8_lossy(&self.buf[self.raw_cursor..self.raw_cursor + eol])
                            .into_owned();
                    let size_text = line.split(';').next().unwrap_or("").trim();
                    let Ok(size) = usize::from_str_radix(size_text, 16) else {
                        // Not chunked coding after all: stop decoding.
                        self.body_done = true;
                        return;
                    };
                    let data_start = self.raw_cursor + eol + 2;
                    if size == 0 {
                        self.body_done = true;
                        return;
                    }
                    if self.buf.len() < data_start + size + 2 {
                        return;
                    }
                    self.body
                        .extend_from_slice(&self.buf[data_start..data_start + size]);
                    self.raw_cursor = data_start + size + 2;
                }
            }
        }
    }

    fn frames(&mut self, closed: bool) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        if self.head.is_none() {
            return out;
        }
        if self.is_sse() {
            loop {
                let rest = &self.body[self.event_cursor..];
                let (end, sep) = match (find(rest, b"\n\n"), find(rest, b"\r\n\r\n")) {
                    (Some(a), Some(b)) if b < a => (b, 4),
                    (Some(a), _) => (a, 2),
                    (None, Some(b)) => (b, 4),
                    (None, None) => break,
                };
                // Bytes, not text: a frame with invalid UTF-8 must reach the
                // oracle as it is, never repaired by a lossy decode.
                let event = rest[..end].to_vec();
                self.event_cursor += end + sep;
                let mut data: Vec<u8> = Vec::new();
                let mut any = false;
                for line in event.split(|b| *b == b'\n') {
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    let Some(d) = line.strip_prefix(b"data:") else {
                        continue;
                    };
                    let d = d.strip_prefix(b" ").unwrap_or(d);
                    if any {
                        data.push(b'\n');
                    }
                    data.extend_from_slice(d);
                    any = true;
                }
                // An event whose data is empty is not dispatched (SSE rules):
                // servers send such priming events carrying only an id.
                if !data.is_empty() {
                    out.push(data);
                }
            }
        } else if (self.body_done || closed) && !self.json_emitted {
            self.json_emitted = true;
            let mut body = self.body.clone();
            while body.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                body.pop();
            }
            if !body.is_empty() {
                out.push(body);
            }
        }
        out
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Shared state of one HTTP session (the MCP session id and the negotiated revision).
#[derive(Debug, Default)]
pub struct HttpState {
    pub session_id: Option<String>,
    pub protocol_version: Option<String>,
}

/// One HTTP exchange: `method` with an optional JSON body. Records the raw
/// request and response, forwards every decoded frame to `tx`, and returns when
/// the response is complete, the connection closes, or (for an SSE stream) the
/// frame answering `answer_id` arrived.
#[allow(clippy::too_many_arguments)]
pub async fn exchange(
    target: HttpTarget,
    method: &'static str,
    body: Option<Vec<u8>>,
    answer_id: Option<Value>,
    state: Arc<Mutex<HttpState>>,
    rec: Arc<Mutex<Recording>>,
    session: String,
    epoch: Instant,
    tx: mpsc::UnboundedSender<Option<Frame>>,
) {
    let ms = || u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (sid, version) = {
        let s = state.lock().expect("http state lock");
        (s.session_id.clone(), s.protocol_version.clone())
    };
    let mut request = format!(
        "{method} {} HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nUser-Agent: mcpres-harness/{}\r\n",
        target.path,
        target.authority,
        env!("CARGO_PKG_VERSION")
    );
    if let Some(sid) = &sid {
        request.push_str(&format!("Mcp-Session-Id: {sid}\r\n"));
    }
    if let Some(v) = &version {
        request.push_str(&format!("MCP-Protocol-Version: {v}\r\n"));
    }
    if let Some(b) = &body {
        request.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    request.push_str("\r\n");
    let mut bytes = request.into_bytes();
    if let Some(b) = &body {
        bytes.extend_from_slice(b);
    }
    let at = ms();
    {
        let mut r = rec.lock().expect("recorder lock");
        r.http_requests.extend_from_slice(&bytes);
        r.events.push(json!({"session": session, "event": "http-request", "offsetMs": at, "method": method, "bytes": bytes.len()}));
    }
    let outcome =
        tokio::time::timeout(EXCHANGE_LIMIT, async {
            let mut stream = TcpStream::connect(target.addr).await?;
            stream.write_all(&bytes).await?;
            stream.flush().await?;
            let mut parser = ResponseParser::default();
            let mut buf = [0u8; 8192];
            let mut head_logged = false;
            loop {
                let n = stream.read(&mut buf).await?;
                let at_ms = ms();
                let frames = if n == 0 {
                    parser.finish()
                } else {
                    rec.lock()
                        .expect("recorder lock")
                        .http_responses
                        .extend_from_slice(&buf[..n]);
                    parser.feed(&buf[..n])
                };
                if !head_logged && let Some(status) = parser.status() {
                    head_logged = true;
                    let mut s = state.lock().expect("http state lock");
                    if let Some(id) = parser.header("mcp-session-id") {
                        s.session_id = Some(id.to_string());
                    }
                    rec.lock().expect("recorder lock").events.push(json!({
                        "session": session, "event": "http-response", "offsetMs": at_ms,
                        "status": status, "contentType": parser.header("content-type"),
                    }));
                }
                let mut answered = false;
                for frame in frames {
                    let parsed = serde_json::from_slice::<Value>(&frame).ok();
                    if let Some(m) = &parsed {
                        if let Some(v) =
                            m.pointer("/result/protocolVersion").and_then(Value::as_str)
                        {
                            state.lock().expect("http state lock").protocol_version =
                                Some(v.to_string());
                        }
                        answered |= answer_id
                            .as_ref()
                            .is_some_and(|id| m.get("method").is_none() && m.get("id") == Some(id));
                    }
                    rec.lock().expect("recorder lock").messages.push(
                        super::subject::message_entry(&session, "server-to-client", at_ms, &frame),
                    );
                    let _ = tx.send(Some(Frame {
                        bytes: frame,
                        at_ms,
                    }));
                }
                if n == 0 || parser.done() || (answered && parser.is_sse()) {
                    return Ok::<(), std::io::Error>(());
                }
            }
        })
        .await;
    let failure = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.to_string()),
        Err(_) => Some("no complete response within the exchange limit".to_string()),
    };
    if let Some(error) = failure {
        let at = ms();
        rec.lock().expect("recorder lock").events.push(json!({
            "session": session, "event": "http-error", "offsetMs": at, "method": method, "error": error,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn proc_net_addresses_decode() {
        assert_eq!(decode_proc_addr("0100007F", false), "127.0.0.1");
        assert_eq!(decode_proc_addr("00000000", false), "0.0.0.0");
        assert_eq!(
            decode_proc_addr("00000000000000000000000001000000", true),
            "::1"
        );
        assert_eq!(
            decode_proc_addr("00000000000000000000000000000000", true),
            "::"
        );
    }

    #[test]
    fn json_chunked_and_sse_bodies_are_decoded() {
        let mut p = ResponseParser::default();
        let frames =
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}");
        assert_eq!(frames, vec![b"{\"a\":1}".to_vec()]);
        assert!(p.done());

        let mut p = ResponseParser::default();
        let mut frames = p.feed(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: s1\r\nTransfer-Encoding: chunked\r\n\r\n");
        frames.extend(p.feed(b"11\r\nevent: message\nda\r\n"));
        frames.extend(p.feed(b"d\r\nta: {\"x\":2}\n\n\r\n0\r\n\r\n"));
        assert_eq!(p.header("Mcp-Session-Id"), Some("s1"));
        assert_eq!(frames, vec![b"{\"x\":2}".to_vec()]);
        assert!(p.done());

        // A priming event without data is no frame; invalid UTF-8 passes through unrepaired.
        let mut p = ResponseParser::default();
        let frames = p.feed(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: \nid: 0\n\ndata: {\"t\":\"\xC3\x28\"}\r\n\r\n");
        assert_eq!(frames, vec![b"{\"t\":\"\xC3\x28\"}".to_vec()]);

        let mut p = ResponseParser::default();
        assert!(
            p.feed(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                .is_empty()
        );
        assert!(p.done());
        assert_eq!(p.status(), Some(202));
    }
}
