//! The one raw HTTP/1.1 client every producer speaks through: a request
//! writer, a response parser, a blocking face (std, for the profile and OAuth
//! runners) and an async face (tokio, for the harness).
//!
//! It stays below any HTTP library on purpose. The probes send odd requests
//! (another `Host`, no `Content-Type`, a head never finished, a body in
//! chunks of their choosing, a chunk size that is no number), so the writer
//! writes exactly the head it is given, in the given order, and adds only the
//! framing header its body asks for. The parser never repairs what a subject
//! sends: a malformed status line, header line, length or chunk, a body cut
//! short or bytes after the end are reported as such ([`Defect`]), and frames
//! are handed on as bytes, never decoded lossily.
//!
//! Recording stays with the caller. The blocking face hands every byte it
//! writes or reads, and every connection event, to a [`Tap`] before the bytes
//! are sent or parsed; the async face returns what it read, and the harness
//! records it before it feeds the parser.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How a request's body is framed on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// No body and no framing header (a `GET`, a `DELETE`).
    None,
    /// `Content-Length: N` after the other headers, then the bytes.
    Sized(Vec<u8>),
    /// `Transfer-Encoding: chunked` after the other headers, then each part
    /// as one chunk, then the terminal chunk. Parts are written as given: an
    /// empty part is a terminal chunk where it stands.
    Chunked(Vec<Vec<u8>>),
    /// `Transfer-Encoding: chunked` after the other headers, then these bytes
    /// as they are: a chunked body coded by the caller (malformed on purpose).
    ChunkedRaw(Vec<u8>),
    /// The head is left open (no empty line, no body): a stalled request.
    Unended,
}

/// One request as it will be written: method, request target, the header
/// fields in order (`Host` among them, where and as the caller wants it),
/// and the body with its framing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

impl Request {
    /// `METHOD TARGET HTTP/1.1` with no header field and no body.
    pub fn new(method: &str, target: &str) -> Request {
        Request {
            method: method.to_string(),
            target: target.to_string(),
            headers: Vec::new(),
            body: Body::None,
        }
    }

    /// [`Request::new`] with `Host: authority` as its first header field.
    pub fn to(method: &str, target: &str, authority: &str) -> Request {
        Request::new(method, target).header("Host", authority)
    }

    /// The same request with a header field appended.
    pub fn header(mut self, name: &str, value: &str) -> Request {
        self.push(name, value);
        self
    }

    /// Append a header field (after those already there).
    pub fn push(&mut self, name: &str, value: &str) {
        self.headers.push((name.to_string(), value.to_string()));
    }

    /// Replace a header field: every field of that name (in any case) is
    /// removed, and `name: value` is appended.
    pub fn set(&mut self, name: &str, value: &str) {
        self.remove(name);
        self.headers.push((name.to_string(), value.to_string()));
    }

    /// Leave out every header field of that name (in any case).
    pub fn remove(&mut self, name: &str) {
        self.headers.retain(|(h, _)| !h.eq_ignore_ascii_case(name));
    }

    /// The same request with `body`.
    pub fn with_body(mut self, body: Body) -> Request {
        self.body = body;
        self
    }

    /// The bytes on the wire: the request line, each header field as
    /// `name: value`, the framing header of the body, the empty line and the
    /// body (nothing after the last header field of an unended head).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, self.target).into_bytes();
        for (k, v) in &self.headers {
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(v.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        match &self.body {
            Body::None => out.extend_from_slice(b"\r\n"),
            Body::Sized(b) => {
                out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", b.len()).as_bytes());
                out.extend_from_slice(b);
            }
            Body::Chunked(parts) => {
                out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
                for p in parts {
                    out.extend_from_slice(format!("{:x}\r\n", p.len()).as_bytes());
                    out.extend_from_slice(p);
                    out.extend_from_slice(b"\r\n");
                }
                out.extend_from_slice(b"0\r\n\r\n");
            }
            Body::ChunkedRaw(raw) => {
                out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
                out.extend_from_slice(raw);
            }
            Body::Unended => {}
        }
        out
    }
}

/// Split request bytes after the head's empty line: (head, body). Bytes with
/// no empty line are all head.
pub fn split_head(bytes: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let at = find(bytes, b"\r\n\r\n").map_or(bytes.len(), |p| p + 4);
    (bytes[..at].to_vec(), bytes[at..].to_vec())
}

/// What was wrong with a response, as it arrived. Nothing is repaired; a
/// defect is only reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Defect {
    /// The status line is not `HTTP/x.y NNN ...` (its status reads as 0).
    StatusLine,
    /// The head is not UTF-8: [`ResponseParser::headers`] shows it decoded
    /// with replacement characters; the bytes read are the record.
    HeadNotUtf8,
    /// A header line without a colon (left out of the header fields).
    HeaderLine,
    /// A `Content-Length` that is no number (the body then runs to the close).
    ContentLength,
    /// A chunk-size line that is no hex number: decoding stopped there.
    ChunkSize,
    /// The connection closed before the response was complete.
    Truncated,
    /// This many bytes followed the end of the response.
    Trailing(usize),
}

impl Defect {
    /// The defect in words.
    pub fn describe(&self) -> String {
        match self {
            Defect::StatusLine => "the status line is not HTTP/x.y and a status code".into(),
            Defect::HeadNotUtf8 => "the response head is not UTF-8".into(),
            Defect::HeaderLine => "a header line has no colon".into(),
            Defect::ContentLength => "the Content-Length is not a number".into(),
            Defect::ChunkSize => "a chunk size is not a hex number".into(),
            Defect::Truncated => "the connection closed before the response was complete".into(),
            Defect::Trailing(n) => format!("{n} byte(s) followed the end of the response"),
        }
    }
}

/// How a response body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyMode {
    Length(usize),
    Chunked,
    UntilEof,
}

/// The final head of a response (interim 1xx heads are skipped).
#[derive(Debug, Clone)]
struct Head {
    status: u16,
    /// `HTTP/1.1` (persistent unless it says otherwise) rather than `HTTP/1.0`.
    http11: bool,
    headers: Vec<(String, String)>,
    mode: BodyMode,
}

/// An incremental decoder of one HTTP/1.1 response: status, headers, the
/// body (Content-Length, chunked, or up to the connection's close), where the
/// response ends, and the JSON-RPC frames in it.
#[derive(Debug, Default)]
pub struct ResponseParser {
    /// The response's bytes from its final head on.
    buf: Vec<u8>,
    head: Option<Head>,
    /// Offset in `buf` of the body (length-delimited) or of the next chunk-size line.
    raw_cursor: usize,
    body: Vec<u8>,
    body_done: bool,
    /// Offset in `buf` just past the response's last byte, once known.
    end: Option<usize>,
    /// The chunked coding could not be decoded.
    malformed: bool,
    closed: bool,
    event_cursor: usize,
    json_emitted: bool,
    /// What was wrong with the heads read so far.
    head_defects: Vec<Defect>,
}

impl ResponseParser {
    pub fn status(&self) -> Option<u16> {
        self.head.as_ref().map(|h| h.status)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.as_ref().and_then(|h| {
            h.headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        })
    }

    /// The media type of the body, lowercased, without parameters.
    pub fn media_type(&self) -> Option<String> {
        self.header("content-type").map(media_type)
    }

    /// The body is an event stream.
    pub fn is_sse(&self) -> bool {
        self.media_type().as_deref() == Some("text/event-stream")
    }

    fn is_json(&self) -> bool {
        self.media_type()
            .is_some_and(|m| m == "application/json" || m.ends_with("+json"))
    }

    /// The body is complete (every frame it holds has been emitted).
    pub fn done(&self) -> bool {
        self.body_done
    }

    /// The whole response message has been read: its end is known.
    pub fn complete(&self) -> bool {
        self.end.is_some()
            || (self.closed
                && matches!(
                    self.head,
                    Some(Head {
                        mode: BodyMode::UntilEof,
                        ..
                    })
                ))
    }

    /// The response's header fields, in order.
    pub fn headers(&self) -> &[(String, String)] {
        self.head.as_ref().map_or(&[], |h| h.headers.as_slice())
    }

    /// The decoded body so far.
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// Bytes read after the end of this response (a pipelined next one).
    pub fn leftover(&self) -> &[u8] {
        self.end.map_or(&[], |e| &self.buf[e.min(self.buf.len())..])
    }

    /// Decoded body bytes so far.
    pub fn body_len(&self) -> usize {
        self.body.len()
    }

    /// What was wrong with the response so far, in the order met (nothing
    /// when it was well formed).
    pub fn defects(&self) -> Vec<Defect> {
        let mut out = self.head_defects.clone();
        if self.malformed {
            out.push(Defect::ChunkSize);
        }
        if self.closed && !self.complete() {
            out.push(Defect::Truncated);
        }
        if !self.leftover().is_empty() {
            out.push(Defect::Trailing(self.leftover().len()));
        }
        out
    }

    /// May the connection carry another exchange after this response? `None`
    /// when it may; otherwise why not.
    pub fn reuse_refusal(&self) -> Option<&'static str> {
        let head = self.head.as_ref()?;
        let close = self
            .header("connection")
            .is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close")));
        if !head.http11 {
            Some("not an HTTP/1.1 response")
        } else if close {
            Some("the server sent Connection: close")
        } else if self.malformed {
            Some("the chunked body could not be decoded")
        } else if head.mode == BodyMode::UntilEof {
            Some("the body is delimited by the connection's close")
        } else if self.end.is_some_and(|e| self.buf.len() > e) {
            Some("bytes followed the end of the response")
        } else if self.end.is_none() {
            Some("the response is incomplete")
        } else {
            None
        }
    }

    /// Feed bytes; returns the JSON-RPC frames that became complete.
    pub fn feed(&mut self, data: &[u8]) -> Vec<Vec<u8>> {
        self.buf.extend_from_slice(data);
        while self.head.is_none() {
            let Some(end) = find(&self.buf, b"\r\n\r\n") else {
                return Vec::new();
            };
            if std::str::from_utf8(&self.buf[..end]).is_err() {
                self.head_defects.push(Defect::HeadNotUtf8);
            }
            let text = String::from_utf8_lossy(&self.buf[..end]).into_owned();
            let mut lines = text.split("\r\n");
            let mut status_line = lines.next().unwrap_or("").split_whitespace();
            let version = status_line.next().unwrap_or("");
            let code = status_line.next().unwrap_or("");
            if !version.starts_with("HTTP/")
                || code.len() != 3
                || !code.bytes().all(|b| b.is_ascii_digit())
            {
                self.head_defects.push(Defect::StatusLine);
            }
            let status: u16 = code.parse().unwrap_or(0);
            if (100..200).contains(&status) && status != 101 {
                // An interim response: the final one follows on the same connection.
                self.buf.drain(..end + 4);
                continue;
            }
            let mut headers: Vec<(String, String)> = Vec::new();
            for line in lines {
                match line.split_once(':') {
                    Some((k, v)) => headers.push((k.trim().to_string(), v.trim().to_string())),
                    None => self.head_defects.push(Defect::HeaderLine),
                }
            }
            let get = |n: &str| {
                headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(n))
                    .map(|(_, v)| v.clone())
            };
            let chunked = get("transfer-encoding").is_some_and(|v| {
                v.rsplit(',')
                    .next()
                    .is_some_and(|c| c.trim().eq_ignore_ascii_case("chunked"))
            });
            let length = get("content-length");
            if !chunked
                && length
                    .as_ref()
                    .is_some_and(|v| v.trim().parse::<usize>().is_err())
            {
                self.head_defects.push(Defect::ContentLength);
            }
            let mode = if chunked {
                BodyMode::Chunked
            } else if let Some(n) = length.and_then(|v| v.trim().parse().ok()) {
                BodyMode::Length(n)
            } else if status == 204 || status == 304 {
                BodyMode::Length(0)
            } else {
                BodyMode::UntilEof
            };
            self.raw_cursor = end + 4;
            self.head = Some(Head {
                status,
                http11: version.eq_ignore_ascii_case("HTTP/1.1"),
                headers,
                mode,
            });
        }
        self.decode_body();
        self.frames(false)
    }

    /// The connection closed: whatever is complete now.
    pub fn finish(&mut self) -> Vec<Vec<u8>> {
        self.closed = true;
        if let Some(Head {
            mode: BodyMode::UntilEof,
            ..
        }) = self.head
        {
            self.body_done = true;
        }
        self.frames(true)
    }

    fn decode_body(&mut self) {
        let Some(mode) = self.head.as_ref().map(|h| h.mode) else {
            return;
        };
        match mode {
            BodyMode::Length(n) => {
                let upto = (self.raw_cursor + n).min(self.buf.len());
                let from = self.raw_cursor + self.body.len();
                if from < upto {
                    self.body.extend_from_slice(&self.buf[from..upto]);
                }
                if self.body.len() == n {
                    self.body_done = true;
                    self.end = Some(self.raw_cursor + n);
                }
            }
            BodyMode::UntilEof => {
                let from = self.raw_cursor + self.body.len();
                if from < self.buf.len() {
                    self.body.extend_from_slice(&self.buf[from..]);
                }
            }
            BodyMode::Chunked => {
                while self.end.is_none() && !self.malformed {
                    let rest = &self.buf[self.raw_cursor..];
                    if self.body_done {
                        // The trailer section: header lines up to an empty line.
                        if rest.starts_with(b"\r\n") {
                            self.end = Some(self.raw_cursor + 2);
                        } else if let Some(p) = find(rest, b"\r\n\r\n") {
                            self.end = Some(self.raw_cursor + p + 4);
                        }
                        return;
                    }
                    let Some(eol) = find(rest, b"\r\n") else {
                        return;
                    };
                    let line = String::from_utf8_lossy(&rest[..eol]).into_owned();
                    let size_text = line.split(';').next().unwrap_or("").trim();
                    let Ok(size) = usize::from_str_radix(size_text, 16) else {
                        // Not chunked coding after all: stop decoding.
                        self.malformed = true;
                        self.body_done = true;
                        return;
                    };
                    let data_start = self.raw_cursor + eol + 2;
                    if size == 0 {
                        self.body_done = true;
                        self.raw_cursor = data_start;
                        continue;
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

    /// Frames: the events of an event stream, or the one body of a JSON
    /// response. A body of any other media type is no frame (it stays in the
    /// raw capture, and the status check judges the exchange).
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
        } else if self.is_json() && (self.body_done || closed) && !self.json_emitted {
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

/// `Application/JSON; charset=utf-8` -> `application/json`.
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Where a connection's record goes: the caller's recorder. Every byte is
/// handed over before it is written or parsed.
pub trait Tap {
    /// Bytes about to be written.
    fn sent(&self, bytes: &[u8]);
    /// Bytes just read.
    fn received(&self, bytes: &[u8]);
    /// Something happened on the connection (`what`, with `detail` fields).
    fn event(&self, what: &str, detail: Value);
    /// Milliseconds on the recorder's clock.
    fn now_ms(&self) -> u64;
}

/// How a response is read.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    /// Read at most this many bytes at a time.
    pub read_size: Option<usize>,
    /// Sleep this long after every read (a slow consumer).
    pub pause: Option<Duration>,
    /// Stop once this many frames that are JSON have arrived.
    pub stop_after_frames: Option<usize>,
}

/// The most bytes the blocking face reads for one response (head, body and
/// framing), and keeps while waiting for a close: a response that never ends
/// (an endless body or event stream) is cut here, recorded as
/// `response-limit` on the tap and as [`Response::limited`], so memory stays
/// bounded whatever the peer sends: four times the largest answer a check
/// asks for (`slow-consumer`'s 1 MiB body, `streamable::SLOW_ANSWER_BYTES`).
pub const RESPONSE_LIMIT_BYTES: usize = 4 << 20;

/// The most frames of one response that answer no request (notifications,
/// the server's own requests) kept as frames; an answer to a request is
/// always kept. Past it they are counted ([`Response::frames_not_kept`]).
pub const FRAME_KEEP: usize = 4096;

/// One response as the blocking face read it.
#[derive(Debug, Clone, Default)]
pub struct Response {
    pub status: Option<u16>,
    pub headers: Vec<(String, String)>,
    /// The media type, lowercased, without parameters.
    pub media: Option<String>,
    /// The frames (event data, or a JSON body), as bytes, each with its
    /// arrival (ms after the read began).
    pub frames: Vec<(u64, Vec<u8>)>,
    /// The decoded body.
    pub body: Vec<u8>,
    pub first_byte_ms: Option<u64>,
    /// The whole response was read.
    pub complete: bool,
    /// The peer closed the connection.
    pub eof: bool,
    /// The time allowed ran out first.
    pub timed_out: bool,
    /// Reading stopped at [`RESPONSE_LIMIT_BYTES`] before the response ended.
    pub limited: bool,
    /// Frames past [`FRAME_KEEP`] that answer no request: counted, not kept.
    pub frames_not_kept: usize,
    pub defects: Vec<Defect>,
}

/// Write `bytes` on `stream`, recorded on `tap` first (a failure too); false when the
/// write failed.
pub fn write_tapped(stream: &mut TcpStream, tap: &impl Tap, bytes: &[u8]) -> bool {
    tap.sent(bytes);
    match stream.write_all(bytes) {
        Ok(()) => true,
        Err(e) => {
            tap.event("write-failed", json!({"error": e.to_string()}));
            false
        }
    }
}

/// One raw blocking TCP connection: every byte through the [`Tap`] first.
pub struct Blocking<T: Tap> {
    stream: TcpStream,
    tap: T,
    /// Bytes read past the last response (a pipelined next one).
    pending: Vec<u8>,
    /// The peer closed its side.
    eof: bool,
    closed: bool,
}

impl<T: Tap> Blocking<T> {
    /// Connect to `addr` within `limit` (`connected` with the local port, or
    /// `connect-failed`, on the tap).
    pub fn connect(
        to: &super::door::Endpoint,
        limit: Duration,
        tap: T,
    ) -> std::io::Result<Blocking<T>> {
        match to.connect(limit) {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                let local = stream.local_addr().map(|a| a.port()).unwrap_or(0);
                tap.event("connected", json!({"localPort": local}));
                Ok(Blocking {
                    stream,
                    tap,
                    pending: Vec::new(),
                    eof: false,
                    closed: false,
                })
            }
            Err(e) => {
                tap.event("connect-failed", json!({"error": e.to_string()}));
                Err(e)
            }
        }
    }

    /// Write `bytes` (recorded first); false when the write failed.
    pub fn write(&mut self, bytes: &[u8]) -> bool {
        write_tapped(&mut self.stream, &self.tap, bytes)
    }

    /// This end's port.
    pub fn local_port(&self) -> u16 {
        self.stream.local_addr().map(|a| a.port()).unwrap_or(0)
    }

    /// A second handle on the connection, for writing from another thread while this
    /// one reads (or does not).
    pub fn stream_clone(&self) -> Option<TcpStream> {
        self.stream.try_clone().ok()
    }

    /// Write `bytes` from another thread while reading the response, so a
    /// peer that answers (and stops reading) before the whole body is written
    /// is still heard. The connection is closed afterwards.
    pub fn write_then_read(&mut self, bytes: &[u8], limit: Duration) -> Response {
        self.tap.sent(bytes);
        let writer = self.stream.try_clone();
        std::thread::scope(|sc| {
            let handle = writer
                .ok()
                .map(|mut w| sc.spawn(move || w.write_all(bytes)));
            let r = self.response(limit, &Reading::default());
            self.closed = true;
            let _ = self.stream.shutdown(Shutdown::Both);
            if let Some(h) = handle {
                let outcome = match h.join() {
                    Ok(Ok(())) => "the whole body was written".to_string(),
                    Ok(Err(e)) => format!("the body was cut short: {e}"),
                    Err(_) => "the writer failed".to_string(),
                };
                self.tap.event("body-written", json!({"outcome": outcome}));
            }
            self.tap
                .event("client-closed", json!({"why": "after the response"}));
            r
        })
    }

    /// Stop writing (a FIN to the peer); reading goes on.
    pub fn shutdown_write(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Write);
        self.tap.event("client-stopped-writing", json!({}));
    }

    /// Close the connection from this side.
    pub fn close(mut self, why: &str) {
        self.closed = true;
        let _ = self.stream.shutdown(Shutdown::Both);
        self.tap.event("client-closed", json!({"why": why}));
    }

    /// Read what arrives within `limit` (at most `max` bytes); recorded.
    /// `None` at the close or on a failed read, empty when nothing came.
    fn read_chunk(&mut self, limit: Duration, max: usize) -> Option<Vec<u8>> {
        if self.eof {
            return None;
        }
        let _ = self
            .stream
            .set_read_timeout(Some(limit.max(Duration::from_millis(1))));
        let mut buf = vec![0u8; max];
        match self.stream.read(&mut buf) {
            Ok(0) => {
                self.eof = true;
                self.tap.event("subject-closed", json!({}));
                None
            }
            Ok(n) => {
                buf.truncate(n);
                self.tap.received(&buf);
                Some(buf)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Some(Vec::new())
            }
            Err(e) => {
                self.eof = true;
                self.tap
                    .event("read-failed", json!({"error": e.to_string()}));
                None
            }
        }
    }

    /// Wait at most `limit` for the peer to close the connection; bytes that
    /// arrive meanwhile are recorded (and kept for the next response). True
    /// when it closed.
    pub fn wait_closed(&mut self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while !self.eof {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            if self.pending.len() >= RESPONSE_LIMIT_BYTES {
                self.tap
                    .event("response-limit", json!({"bytes": RESPONSE_LIMIT_BYTES}));
                return false;
            }
            if let Some(bytes) = self.read_chunk(left.min(Duration::from_millis(50)), 64 << 10) {
                self.pending.extend_from_slice(&bytes);
            }
        }
        true
    }

    /// Read one response as `how` says, for at most `limit`: until it is
    /// complete, the peer closes, enough frames came, or the time is up.
    pub fn response(&mut self, limit: Duration, how: &Reading) -> Response {
        let started = self.tap.now_ms();
        let until = Instant::now() + limit;
        let mut parser = ResponseParser::default();
        let mut resp = Response::default();
        // Frames that are JSON so far (what `stop_after_frames` counts).
        let mut counted = 0usize;
        // Frames that answer no request (notifications, requests of the
        // server) are kept up to FRAME_KEEP; past it they are counted only,
        // so an endless event stream costs no memory per event.
        let mut others = 0usize;
        let mut take = |parser: &mut ResponseParser,
                        bytes: &[u8],
                        resp: &mut Response,
                        counted: &mut usize,
                        at: u64| {
            if resp.first_byte_ms.is_none() && !bytes.is_empty() {
                resp.first_byte_ms = Some(at);
            }
            for f in parser.feed(bytes) {
                let (json, answer) = read_frame(&f);
                *counted += usize::from(json);
                if !answer {
                    if others >= FRAME_KEEP {
                        resp.frames_not_kept += 1;
                        continue;
                    }
                    others += 1;
                }
                resp.frames.push((at, f));
            }
        };
        let pending = std::mem::take(&mut self.pending);
        let mut read = pending.len();
        if !pending.is_empty() {
            let at = self.tap.now_ms().saturating_sub(started);
            take(&mut parser, &pending, &mut resp, &mut counted, at);
        }
        loop {
            if parser.complete() || how.stop_after_frames.is_some_and(|n| counted >= n) {
                break;
            }
            if read >= RESPONSE_LIMIT_BYTES {
                resp.limited = true;
                self.tap.event("response-limit", json!({"bytes": read}));
                break;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                resp.timed_out = true;
                break;
            }
            let wait = left.min(Duration::from_millis(50));
            let size = how
                .read_size
                .unwrap_or(64 << 10)
                .min(RESPONSE_LIMIT_BYTES - read);
            match self.read_chunk(wait, size) {
                Some(bytes) => {
                    read += bytes.len();
                    if !bytes.is_empty() {
                        let at = self.tap.now_ms().saturating_sub(started);
                        take(&mut parser, &bytes, &mut resp, &mut counted, at);
                        if let Some(pause) = how.pause {
                            std::thread::sleep(pause);
                        }
                    }
                }
                None => {
                    let at = self.tap.now_ms().saturating_sub(started);
                    for f in parser.finish() {
                        resp.frames.push((at, f));
                    }
                    break;
                }
            }
        }
        resp.eof = self.eof;
        resp.complete = parser.complete();
        resp.status = parser.status();
        resp.headers = parser.headers().to_vec();
        resp.media = parser.media_type();
        resp.body = parser.body().to_vec();
        resp.defects = parser.defects();
        self.pending = parser.leftover().to_vec();
        resp
    }
}

impl<T: Tap> Drop for Blocking<T> {
    fn drop(&mut self) {
        if !self.closed {
            let _ = self.stream.shutdown(Shutdown::Both);
            self.tap.event("client-closed", json!({"why": "done"}));
        }
    }
}

/// A frame that is JSON (what a frame count counts).
/// What a frame is, read without building it: JSON at all, and an answer
/// to a request (an `id` with a `result` or an `error`).
fn read_frame(frame: &[u8]) -> (bool, bool) {
    #[derive(serde::Deserialize)]
    struct Shape {
        id: Option<serde::de::IgnoredAny>,
        result: Option<serde::de::IgnoredAny>,
        error: Option<serde::de::IgnoredAny>,
    }
    match serde_json::from_slice::<Shape>(frame) {
        Ok(s) => (
            true,
            s.id.is_some() && (s.result.is_some() || s.error.is_some()),
        ),
        // Not an object (an array, a number...): JSON or not.
        Err(_) => (
            serde_json::from_slice::<serde::de::IgnoredAny>(frame).is_ok(),
            false,
        ),
    }
}

/// The async face (tokio): write a whole request, and read what comes, with
/// an optional deadline. The caller records the bytes it is handed before
/// it feeds them to its [`ResponseParser`].
pub mod nonblocking {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// Write `bytes` and flush.
    pub async fn send(stream: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
        stream.write_all(bytes).await?;
        stream.flush().await
    }

    /// Read into `buf` (0 at the close); `None` when `until` passed first.
    pub async fn receive(
        stream: &mut TcpStream,
        buf: &mut [u8],
        until: Option<std::time::Instant>,
    ) -> Option<std::io::Result<usize>> {
        match until {
            None => Some(stream.read(buf).await),
            Some(until) => tokio::time::timeout_at(until.into(), stream.read(buf))
                .await
                .ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, SocketAddr, TcpListener};
    use std::sync::Mutex;

    #[test]
    fn a_request_is_written_as_given_with_the_framing_its_body_asks_for() {
        // No body: the head and the empty line, nothing added.
        let get = Request::to("GET", "/x?a=1", "127.0.0.1:9").header("Connection", "close");
        assert_eq!(
            get.to_bytes(),
            b"GET /x?a=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\nConnection: close\r\n\r\n"
        );
        // A sized body: Content-Length after the caller's fields.
        let post = Request::to("POST", "/mcp", "h")
            .header("Content-Type", "application/json")
            .with_body(Body::Sized(b"{}".to_vec()));
        assert_eq!(
            post.to_bytes(),
            b"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        );
        let empty = Request::new("POST", "/").with_body(Body::Sized(Vec::new()));
        assert_eq!(
            empty.to_bytes(),
            b"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n"
        );
    }

    #[test]
    fn header_fields_are_replaced_or_left_out_by_the_caller() {
        let mut r = Request::to("POST", "/mcp", "a:1")
            .header("Accept", "application/json")
            .header("X-Two", "1")
            .header("x-two", "2");
        r.set("HOST", "evil.example");
        r.remove("X-TWO");
        assert_eq!(
            r.to_bytes(),
            b"POST /mcp HTTP/1.1\r\nAccept: application/json\r\nHOST: evil.example\r\n\r\n"
        );
        // Odd values go out as they are: the writer judges nothing.
        let odd = Request::new("GET", "*")
            .header("Origin", "null")
            .header("X", "");
        assert_eq!(
            odd.to_bytes(),
            b"GET * HTTP/1.1\r\nOrigin: null\r\nX: \r\n\r\n"
        );
    }

    #[test]
    fn chunked_parts_raw_chunks_and_an_unended_head() {
        let r = Request::to("POST", "/mcp", "h")
            .with_body(Body::Chunked(vec![b"{\"a\":".to_vec(), b"1}".to_vec()]));
        assert_eq!(
            r.to_bytes(),
            b"POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n"
        );
        // A part of 17 bytes is sized in lowercase hex; an empty part is
        // written where it stands (an early terminal chunk).
        let r =
            Request::new("POST", "/").with_body(Body::Chunked(vec![vec![b'x'; 17], Vec::new()]));
        let mut want = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n".to_vec();
        want.extend_from_slice(&[b'x'; 17]);
        want.extend_from_slice(b"\r\n0\r\n\r\n0\r\n\r\n");
        assert_eq!(r.to_bytes(), want);
        let r = Request::new("POST", "/")
            .with_body(Body::ChunkedRaw(b"zz\r\n{}\r\n0\r\n\r\n".to_vec()));
        assert_eq!(
            r.to_bytes(),
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
        );
        let r = Request::to("POST", "/mcp", "h").with_body(Body::Unended);
        assert_eq!(r.to_bytes(), b"POST /mcp HTTP/1.1\r\nHost: h\r\n");
        assert_eq!(
            split_head(&post_bytes()),
            (
                b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\n".to_vec(),
                b"{}".to_vec()
            )
        );
        assert_eq!(split_head(b"GET / HTTP/1.1\r\n").1, b"");
    }

    fn post_bytes() -> Vec<u8> {
        Request::new("POST", "/")
            .with_body(Body::Sized(b"{}".to_vec()))
            .to_bytes()
    }

    #[test]
    fn json_chunked_and_sse_bodies_are_decoded() {
        let mut p = ResponseParser::default();
        let frames =
            p.feed(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}");
        assert_eq!(frames, vec![b"{\"a\":1}".to_vec()]);
        assert!(p.done());
        assert_eq!(p.defects(), vec![]);

        let mut p = ResponseParser::default();
        let mut frames = p.feed(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: s1\r\nTransfer-Encoding: chunked\r\n\r\n");
        frames.extend(p.feed(b"11\r\nevent: message\nda\r\n"));
        frames.extend(p.feed(b"d\r\nta: {\"x\":2}\n\n\r\n0\r\n\r\n"));
        assert_eq!(p.header("Mcp-Session-Id"), Some("s1"));
        assert_eq!(frames, vec![b"{\"x\":2}".to_vec()]);
        assert!(p.done());
        assert_eq!(p.defects(), vec![]);

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

    #[test]
    fn sse_events_split_on_either_separator_and_join_data_lines() {
        let mut p = ResponseParser::default();
        let mut frames = p.feed(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
        frames.extend(p.feed(b"event: message\ndata: [1,\ndata: 2]\n\n"));
        frames.extend(p.feed(b"data:{\"b\":1}\r\n\r\n: comment\n\ndata: {\"c\""));
        assert_eq!(frames, vec![b"[1,\n2]".to_vec(), b"{\"b\":1}".to_vec()]);
        // An event cut off by the close is no frame, and the body was not complete.
        assert!(p.finish().is_empty());
        assert_eq!(p.body(), b"event: message\ndata: [1,\ndata: 2]\n\ndata:{\"b\":1}\r\n\r\n: comment\n\ndata: {\"c\"");
    }

    #[test]
    fn where_a_response_ends_decides_whether_the_connection_is_reused() {
        // Content-Length: complete at the last body byte; HTTP/1.1 persists.
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{");
        assert!(!p.complete());
        assert_eq!(p.feed(b"}"), vec![b"{}".to_vec()]);
        assert!(p.complete());
        assert_eq!(p.reuse_refusal(), None);

        // Chunked: complete only after the terminal chunk and its trailers.
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
        p.feed(b"e\r\ndata: {\"a\":1}\n\n\r\n0\r\n");
        assert!(p.done() && !p.complete(), "trailer section still open");
        p.feed(b"X-Trailer: 1\r\n\r\n");
        assert!(p.complete());
        assert_eq!(p.reuse_refusal(), None);
        assert_eq!(p.body_len(), 14);

        // Bytes past the end, Connection: close, HTTP/1.0, a close-delimited body.
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\nHTTP/1.1");
        assert!(p.complete());
        assert_eq!(
            p.reuse_refusal(),
            Some("bytes followed the end of the response")
        );
        assert_eq!(p.leftover(), b"HTTP/1.1");
        assert_eq!(p.defects(), vec![Defect::Trailing(8)]);
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.1 202 Accepted\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(p.reuse_refusal(), Some("the server sent Connection: close"));
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.0 202 Accepted\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(p.reuse_refusal(), Some("not an HTTP/1.1 response"));
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"b\":2}");
        assert!(
            !p.complete(),
            "a close-delimited body ends only at the close"
        );
        assert_eq!(p.finish(), vec![b"{\"b\":2}".to_vec()]);
        assert!(p.complete());
        assert!(p.reuse_refusal().is_some());
        assert_eq!(p.defects(), vec![]);
        // An undecodable chunk size: never reused.
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
        assert!(p.done());
        assert!(p.reuse_refusal().is_some());
    }

    #[test]
    fn interim_heads_are_skipped_and_other_media_types_are_no_frames() {
        let mut p = ResponseParser::default();
        let frames = p.feed(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}",
        );
        assert_eq!(p.status(), Some(200));
        assert_eq!(p.media_type().as_deref(), Some("application/json"));
        assert_eq!(frames, vec![b"{}".to_vec()]);
        // An HTML error page is recorded raw, never handed to the oracle as a frame.
        let mut p = ResponseParser::default();
        let frames = p.feed(
            b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/html\r\nContent-Length: 9\r\n\r\n<b>no</b>",
        );
        assert!(frames.is_empty());
        assert!(p.complete());
        assert_eq!(p.status(), Some(500));
        assert_eq!(media_type("Text/Event-Stream ; x=1"), "text/event-stream");
    }

    #[test]
    fn a_truncated_body_is_reported_never_completed() {
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{\"a\":");
        // At the close the JSON body is handed on as it came, unrepaired
        // (it does not parse), and the response is not complete.
        assert_eq!(p.finish(), vec![b"{\"a\":".to_vec()]);
        assert!(!p.complete());
        assert_eq!(p.body(), b"{\"a\":");
        assert_eq!(p.defects(), vec![Defect::Truncated]);
        // Cut inside a chunk: the partial chunk is not part of the body.
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n5\r\nxy");
        p.finish();
        assert_eq!(p.body(), b"ab");
        assert_eq!(p.defects(), vec![Defect::Truncated]);
        // Cut inside the head: no status at all.
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.1 200 OK\r\nContent-Le");
        p.finish();
        assert_eq!(p.status(), None);
        assert_eq!(p.defects(), vec![Defect::Truncated]);
    }

    #[test]
    fn a_malformed_chunk_size_stops_decoding_where_it_stands() {
        let mut p = ResponseParser::default();
        let frames = p.feed(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n-1\r\nxx\r\n0\r\n\r\n",
        );
        // The body decoded so far is what is handed on; nothing after the bad line.
        assert_eq!(frames, vec![b"{}".to_vec()]);
        assert_eq!(p.body(), b"{}");
        assert!(!p.complete());
        assert_eq!(p.defects(), vec![Defect::ChunkSize]);
        assert_eq!(
            p.reuse_refusal(),
            Some("the chunked body could not be decoded")
        );
    }

    #[test]
    fn malformed_heads_are_reported_as_they_are() {
        let mut p = ResponseParser::default();
        p.feed(b"HTTP/1.1 2x0 Odd\r\nNo colon here\r\nContent-Length: ten\r\nX: \xFF\r\n\r\nbody");
        assert_eq!(p.status(), Some(0));
        assert_eq!(
            p.defects(),
            vec![
                Defect::HeadNotUtf8,
                Defect::StatusLine,
                Defect::HeaderLine,
                Defect::ContentLength
            ]
        );
        // Without a usable length the body runs to the close.
        assert!(!p.complete());
        p.finish();
        assert_eq!(p.body(), b"body");
        assert!(p.complete());
        let mut p = ResponseParser::default();
        p.feed(b"ICY 200 OK\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(p.defects(), vec![Defect::StatusLine]);
        assert!(
            Defect::Trailing(3).describe().contains('3'),
            "a defect names its size"
        );
    }

    /// A tap that keeps what it is handed.
    #[derive(Default)]
    struct Kept {
        sent: Mutex<Vec<u8>>,
        received: Mutex<Vec<u8>>,
        events: Mutex<Vec<String>>,
    }

    impl Tap for &Kept {
        fn sent(&self, bytes: &[u8]) {
            self.sent.lock().unwrap().extend_from_slice(bytes);
        }
        fn received(&self, bytes: &[u8]) {
            self.received.lock().unwrap().extend_from_slice(bytes);
        }
        fn event(&self, what: &str, _detail: Value) {
            self.events.lock().unwrap().push(what.to_string());
        }
        fn now_ms(&self) -> u64 {
            0
        }
    }

    /// A one-connection loopback server: reads one request head, answers
    /// with `answer`, then closes. Returns its address and the bytes it read.
    fn serve_once(answer: &'static [u8]) -> (SocketAddr, std::thread::JoinHandle<Vec<u8>>) {
        let l = TcpListener::bind(SocketAddr::new(IpAddr::from([127, 0, 0, 1]), 0)).unwrap();
        let addr = l.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 1024];
            while find(&got, b"\r\n\r\n").is_none() {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            s.write_all(answer).unwrap();
            got
        });
        (addr, t)
    }

    #[test]
    fn the_blocking_face_records_every_byte_it_writes_and_reads() {
        let answer: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{\"ok\":1}HTTP/1.1 204 No Content\r\n\r\n";
        let (addr, server) = serve_once(answer);
        let kept = Kept::default();
        let request = Request::to("GET", "/", &addr.to_string()).to_bytes();
        let mut conn = Blocking::connect(&addr.into(), Duration::from_secs(2), &kept).unwrap();
        assert!(conn.write(&request));
        let r = conn.response(Duration::from_secs(5), &Reading::default());
        assert_eq!(r.status, Some(200));
        assert!(r.complete);
        assert_eq!(r.frames.len(), 1);
        assert_eq!(r.frames[0].1, b"{\"ok\":1}");
        // The pipelined second response is read from what was kept.
        let r2 = conn.response(Duration::from_secs(5), &Reading::default());
        assert_eq!(r2.status, Some(204));
        conn.close("test over");
        assert_eq!(server.join().unwrap(), request);
        assert_eq!(*kept.sent.lock().unwrap(), request);
        assert_eq!(*kept.received.lock().unwrap(), answer);
        let events = kept.events.lock().unwrap().clone();
        assert_eq!(events.first().map(String::as_str), Some("connected"));
        assert_eq!(events.last().map(String::as_str), Some("client-closed"));
    }

    #[test]
    fn the_blocking_face_reports_a_close_before_the_end() {
        let (addr, server) = serve_once(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 99\r\n\r\n{}",
        );
        let kept = Kept::default();
        let mut conn = Blocking::connect(&addr.into(), Duration::from_secs(2), &kept).unwrap();
        assert!(conn.write(b"GET / HTTP/1.1\r\n\r\n"));
        let r = conn.response(Duration::from_secs(5), &Reading::default());
        server.join().unwrap();
        assert!(r.eof && !r.complete && !r.timed_out);
        assert_eq!(r.body, b"{}");
        assert_eq!(r.defects, vec![Defect::Truncated]);
        // What came is handed on as it is, for the caller to find it no JSON.
        assert_eq!(r.frames.len(), 1);
        assert_eq!(r.frames[0].1, b"{}");
        assert!(
            kept.events
                .lock()
                .unwrap()
                .contains(&"subject-closed".to_string())
        );
    }

    /// An event stream of many notifications with the answer at its end:
    /// the answer is kept, the notifications only up to FRAME_KEEP, the rest
    /// counted; and `stop_after_frames` still counts every JSON frame.
    #[test]
    fn past_the_keep_bound_notifications_are_counted_and_the_answer_kept() {
        let event =
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n";
        let mut body = event.repeat(FRAME_KEEP + 500);
        body.push_str("data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n");
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let (addr, server) = serve_once(Box::leak(answer.into_bytes().into_boxed_slice()));
        let kept = Kept::default();
        let mut conn = Blocking::connect(&addr.into(), Duration::from_secs(2), &kept).unwrap();
        assert!(conn.write(b"POST / HTTP/1.1\r\n\r\n"));
        let r = conn.response(Duration::from_secs(10), &Reading::default());
        server.join().unwrap();
        assert!(r.complete, "{:?}", r.defects);
        assert_eq!(r.frames.len(), FRAME_KEEP + 1);
        assert_eq!(r.frames_not_kept, 500);
        assert!(r.frames.last().unwrap().1.ends_with(b"\"result\":{}}"));
    }

    #[tokio::test]
    async fn the_async_face_writes_and_reads_with_a_deadline() {
        let (addr, server) = serve_once(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request = Request::to("DELETE", "/mcp", "h").to_bytes();
        nonblocking::send(&mut s, &request).await.unwrap();
        let mut parser = ResponseParser::default();
        let mut buf = [0u8; 256];
        while !parser.complete() {
            let n = nonblocking::receive(&mut s, &mut buf, None)
                .await
                .expect("no deadline")
                .unwrap();
            assert!(n > 0, "closed before the response was complete");
            parser.feed(&buf[..n]);
        }
        assert_eq!(parser.status(), Some(202));
        assert_eq!(server.join().unwrap(), request);
        // A peer that never writes: the deadline ends the read.
        let quiet = TcpListener::bind(SocketAddr::new(IpAddr::from([127, 0, 0, 1]), 0)).unwrap();
        let mut s = tokio::net::TcpStream::connect(quiet.local_addr().unwrap())
            .await
            .unwrap();
        let until = Instant::now() + Duration::from_millis(20);
        assert!(
            nonblocking::receive(&mut s, &mut buf, Some(until))
                .await
                .is_none()
        );
    }
}
