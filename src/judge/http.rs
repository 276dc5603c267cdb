//! What a Streamable HTTP probe's raw transcript shows, read from its
//! recorded connection events (`transcript.events`: each chunk with its
//! `connection` number, `stream` `sent` or `received`, and its bytes as
//! `text` or `base64`, or only a digest and head when `elided`).
//!
//! Each connection's received bytes are joined in order and read as a
//! sequence of HTTP/1.1 responses (a body framed by `Content-Length`, by the
//! chunked transfer coding, or by the close). A body whose media type is
//! `text/event-stream` is read as events, each event's `data` lines joined;
//! any other body as one JSON text. The JSON-RPC messages found (an object,
//! or the members of a batch array) are what the subject answered on that
//! connection. A response that cannot be read to its end yields what it
//! framed so far: the judge reads a missing answer as no answer, which never
//! credits a twin.

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::Value;

/// The received bytes of every connection of an HTTP transcript, by
/// connection number: `None` when the transcript records no connection
/// events (not an HTTP probe) or a received chunk is elided (its bytes are
/// not stored).
pub fn received(transcript: &Value) -> Option<BTreeMap<u64, Vec<u8>>> {
    stream(transcript, "received")
}

/// The one connection whose sent bytes are stored elided (a body too large
/// to keep, stored as its head and digest): `None` when no connection or
/// more than one has such a chunk.
pub fn elided_sent_connection(transcript: &Value) -> Option<u64> {
    let mut conns: Vec<u64> = transcript
        .get("events")?
        .as_array()?
        .iter()
        .filter(|e| e["stream"] == "sent" && e.get("elided").is_some())
        .filter_map(|e| e["connection"].as_u64())
        .collect();
    conns.sort_unstable();
    conns.dedup();
    match conns[..] {
        [one] => Some(one),
        _ => None,
    }
}

/// The connections whose sent bytes never end a request head (no empty
/// line): a request left stalled by the runner.
pub fn unended_connections(transcript: &Value) -> Option<Vec<u64>> {
    Some(
        stream(transcript, "sent")?
            .into_iter()
            .filter(|(_, bytes)| !bytes.windows(4).any(|w| w == b"\r\n\r\n"))
            .map(|(conn, _)| conn)
            .collect(),
    )
}

/// The connections whose sent bytes carry a request with the header
/// `Connection: close` (its name and value in any case).
pub fn closing_connections(transcript: &Value) -> Option<Vec<u64>> {
    Some(
        stream(transcript, "sent")?
            .into_iter()
            .filter(|(_, bytes)| {
                bytes
                    .split(|b| *b == b'\n')
                    .map(|line| String::from_utf8_lossy(line).trim().to_ascii_lowercase())
                    .any(|line| {
                        line.strip_prefix("connection:")
                            .is_some_and(|v| v.split(',').any(|t| t.trim() == "close"))
                    })
            })
            .map(|(conn, _)| conn)
            .collect(),
    )
}

/// [`received`] for the bytes mcpres sent (`sent`) or received.
fn stream(transcript: &Value, which: &str) -> Option<BTreeMap<u64, Vec<u8>>> {
    transcript.get("connections")?;
    let mut out: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    for e in transcript.get("events")?.as_array()? {
        if e["stream"] != which {
            continue;
        }
        let Some(conn) = e["connection"].as_u64() else {
            continue;
        };
        out.entry(conn).or_default().extend(chunk_bytes(e)?);
    }
    Some(out)
}

/// The most bytes one stored chunk may declare: a `deflate` chunk is never
/// inflated beyond it (a record is untrusted input).
pub const CHUNK_MAX_BYTES: usize = 64 << 20;

/// The bytes one stored chunk holds: its `text`, its `base64`, or its
/// `deflate` (base64 of a raw DEFLATE stream that inflates to exactly the
/// chunk's `bytes` length); `None` when the chunk is elided (only a digest
/// and head are stored) or its stored form does not decode to its length.
pub fn chunk_bytes(e: &Value) -> Option<Vec<u8>> {
    use std::io::Read;
    let b64 = &base64::engine::general_purpose::STANDARD;
    if let Some(text) = e["text"].as_str() {
        return Some(text.as_bytes().to_vec());
    }
    if let Some(s) = e["base64"].as_str() {
        return b64.decode(s).ok();
    }
    let packed = b64.decode(e["deflate"].as_str()?).ok()?;
    let len = usize::try_from(e["bytes"].as_u64()?).ok()?;
    if len > CHUNK_MAX_BYTES {
        return None;
    }
    let mut out = Vec::with_capacity(len);
    flate2::read::DeflateDecoder::new(packed.as_slice())
        .take(len as u64 + 1)
        .read_to_end(&mut out)
        .ok()?;
    (out.len() == len).then_some(out)
}

/// `bytes` as a stored chunk's `deflate` member, when it is long and packs
/// to at most an eighth of its length (the runner's filler does); `None`
/// when it does not pack that well.
pub fn deflated(bytes: &[u8]) -> Option<String> {
    use std::io::Write;
    if bytes.len() < 1024 {
        return None;
    }
    let mut w = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    w.write_all(bytes).ok()?;
    let packed = w.finish().ok()?;
    (packed.len() <= bytes.len() / 8)
        .then(|| base64::engine::general_purpose::STANDARD.encode(packed))
}

/// Every JSON-RPC message the subject answered on any connection of the
/// transcript; `None` as for [`received`].
pub fn messages(transcript: &Value) -> Option<Vec<Value>> {
    Some(
        received(transcript)?
            .values()
            .flat_map(|bytes| responses(bytes))
            .collect(),
    )
}

/// Every JSON-RPC message mcpres sent in a request body on any connection
/// of the transcript; `None` as for [`received`] (of the sent bytes).
pub fn sent_messages(transcript: &Value) -> Option<Vec<Value>> {
    Some(
        stream(transcript, "sent")?
            .values()
            .flat_map(|bytes| framed(bytes, true))
            .collect(),
    )
}

/// The JSON-RPC messages mcpres sent (`sent`) or received on the connections of an
/// HTTP transcript, each with a time (ms from the transcript's start): a sent message
/// at its connection's first sent chunk, a received one at the last received chunk
/// of its connection (when its response was complete); in time order. `None` as
/// for [`received`].
pub fn timed_messages(transcript: &Value, sent: bool) -> Option<Vec<(u64, Value)>> {
    let which = if sent { "sent" } else { "received" };
    let mut conns: BTreeMap<u64, (u64, Vec<u8>)> = BTreeMap::new();
    transcript.get("connections")?;
    for e in transcript.get("events")?.as_array()? {
        if e["stream"] != which {
            continue;
        }
        let Some(conn) = e["connection"].as_u64() else {
            continue;
        };
        let at = e["atMs"].as_u64().unwrap_or(0);
        let entry = conns.entry(conn).or_insert((at, Vec::new()));
        if !sent {
            entry.0 = at;
        }
        entry.1.extend(chunk_bytes(e)?);
    }
    let mut out: Vec<(u64, Value)> = conns
        .into_values()
        .flat_map(|(at, bytes)| framed(&bytes, sent).into_iter().map(move |m| (at, m)))
        .collect();
    out.sort_by_key(|(at, _)| *at);
    Some(out)
}

/// The JSON-RPC messages of the HTTP/1.1 responses in `bytes`.
pub fn responses(bytes: &[u8]) -> Vec<Value> {
    framed(bytes, false)
}

/// The JSON-RPC messages of the HTTP/1.1 messages in `bytes`: responses, or
/// requests (`request`: a request without `Content-Length` or the chunked
/// coding has no body).
fn framed(bytes: &[u8], request: bool) -> Vec<Value> {
    parse(bytes, request)
        .iter()
        .flat_map(Exchange::messages)
        .collect()
}

/// One HTTP/1.1 response read from a connection's received bytes: its
/// status, its header lines as sent, and its body (dechunked).
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body was read to the end its framing gives (`Content-Length`
    /// bytes, or the chunked coding's last chunk); a body framed by the
    /// close is never complete here (see [`Exchange::until_close`]).
    pub complete: bool,
    /// The body is framed by the close of the connection (neither length
    /// nor chunked coding): it is complete when the subject ended the
    /// connection.
    pub until_close: bool,
}

impl Exchange {
    /// The first header named `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body (an event stream's events, or one
    /// JSON text).
    pub fn messages(&self) -> Vec<Value> {
        if self
            .header("content-type")
            .is_some_and(|m| m.to_ascii_lowercase().starts_with("text/event-stream"))
        {
            events(&self.body)
        } else {
            json_messages(&self.body)
        }
    }

    /// Frames of the body that are not JSON: events whose data does not
    /// parse (an event stream), or a body that does not (any other media
    /// type, when it is not empty).
    pub fn bad_frames(&self) -> usize {
        let parses = |b: &[u8]| serde_json::from_slice::<serde::de::IgnoredAny>(b).is_ok();
        if self
            .header("content-type")
            .is_some_and(|m| m.to_ascii_lowercase().starts_with("text/event-stream"))
        {
            event_data(&self.body)
                .iter()
                .filter(|d| !parses(d.as_bytes()))
                .count()
        } else {
            usize::from(!self.body.is_empty() && !parses(&self.body))
        }
    }

    /// The result answering request `id` in the body, if any.
    pub fn result_for(&self, id: &Value) -> Option<Value> {
        self.messages()
            .into_iter()
            .find(|m| m.get("id") == Some(id) && m.get("method").is_none())
            .and_then(|m| m.get("result").cloned())
    }
}

/// The final responses (not interim ones) in a connection's received
/// `bytes`, as far as they can be read.
pub fn exchanges(bytes: &[u8]) -> Vec<Exchange> {
    parse(bytes, false)
}

/// The HTTP/1.1 messages in `bytes`: final responses (`status` their
/// status), or requests (`request`: `status` 0, and a request without
/// `Content-Length` or the chunked coding has no body).
fn parse(mut bytes: &[u8], request: bool) -> Vec<Exchange> {
    let mut out = Vec::new();
    while let Some(end) = find(bytes, b"\r\n\r\n") {
        let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
        let rest = &bytes[end + 4..];
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u16>().ok())
            .unwrap_or(0);
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| {
                let (k, v) = l.split_once(':')?;
                Some((k.trim().to_string(), v.trim().to_string()))
            })
            .collect();
        let get = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.to_ascii_lowercase())
        };
        let status = if request { 0 } else { status };
        if !request && (100..200).contains(&status) {
            bytes = rest;
            continue;
        }
        let mut until_close = false;
        let (body, used, complete) = if !request && (status == 204 || status == 304) {
            (Vec::new(), 0, true)
        } else if get("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
            dechunk(rest)
        } else if let Some(n) = get("content-length").and_then(|n| n.parse::<usize>().ok()) {
            let whole = n <= rest.len();
            let n = n.min(rest.len());
            (rest[..n].to_vec(), n, whole)
        } else if request {
            (Vec::new(), 0, true)
        } else {
            until_close = true;
            (rest.to_vec(), rest.len(), false)
        };
        out.push(Exchange {
            status,
            headers,
            body,
            complete,
            until_close,
        });
        bytes = &rest[used..];
    }
    out
}

/// The transcript's connection that sent the request `id` (its request
/// bodies read as JSON-RPC), when exactly one did.
pub fn connection_of(transcript: &Value, id: &Value) -> Option<u64> {
    let sent = stream(transcript, "sent")?;
    let mut found = sent
        .iter()
        .filter(|(_, bytes)| {
            framed(bytes, true)
                .iter()
                .any(|m| m.get("method").is_some() && m.get("id") == Some(id))
        })
        .map(|(conn, _)| *conn);
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// The first final response on the connection that sent request `id` (found by
/// [`connection_of`]), with the time its connection's last received bytes came (ms
/// from the transcript's start, as [`timed_messages`] times what it received).
pub fn response_to(transcript: &Value, id: &Value) -> Option<(u64, Exchange)> {
    Responses::of(transcript)?.to(id).cloned()
}

/// [`response_to`] for many requests of one transcript: its connections' bytes
/// are read once (a reading that asks for every request of a soak would
/// otherwise read the whole record again for each).
#[derive(Debug, Default)]
pub struct Responses {
    /// Each request id (as its JSON text) with the connections that sent it.
    senders: BTreeMap<String, Vec<u64>>,
    /// Each connection's first final response, with the time its last received
    /// bytes came.
    first: BTreeMap<u64, (u64, Exchange)>,
}

impl Responses {
    /// The index of `transcript`'s connections; `None` as for [`received`].
    pub fn of(transcript: &Value) -> Option<Responses> {
        let mut senders: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for (conn, bytes) in stream(transcript, "sent")? {
            let mut ids: Vec<String> = framed(&bytes, true)
                .iter()
                .filter(|m| m.get("method").is_some())
                .filter_map(|m| m.get("id"))
                .map(Value::to_string)
                .collect();
            ids.sort_unstable();
            ids.dedup();
            for id in ids {
                senders.entry(id).or_default().push(conn);
            }
        }
        let mut last: BTreeMap<u64, u64> = BTreeMap::new();
        for e in transcript.get("events")?.as_array()? {
            if e["stream"] != "received" {
                continue;
            }
            if let (Some(conn), Some(at)) = (e["connection"].as_u64(), e["atMs"].as_u64()) {
                let t = last.entry(conn).or_insert(at);
                *t = (*t).max(at);
            }
        }
        let first = received(transcript)?
            .into_iter()
            .filter_map(|(conn, bytes)| {
                let at = *last.get(&conn)?;
                Some((conn, (at, exchanges(&bytes).into_iter().next()?)))
            })
            .collect();
        Some(Responses { senders, first })
    }

    /// The first final response on the one connection that sent request `id`.
    pub fn to(&self, id: &Value) -> Option<&(u64, Exchange)> {
        match self.senders.get(&id.to_string())?.as_slice() {
            [conn] => self.first.get(conn),
            _ => None,
        }
    }
}

/// The request bodies mcpres sent on each connection, by connection
/// number, as sent (a body need not be JSON); `None` as for [`received`].
pub fn sent_bodies(transcript: &Value) -> Option<BTreeMap<u64, Vec<Vec<u8>>>> {
    Some(
        stream(transcript, "sent")?
            .into_iter()
            .map(|(conn, bytes)| {
                (
                    conn,
                    parse(&bytes, true).into_iter().map(|e| e.body).collect(),
                )
            })
            .collect(),
    )
}

/// Did the subject close connection `conn` (a `subject-closed` event)?
pub fn closed_by_subject(transcript: &Value, conn: u64) -> bool {
    transcript["events"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|e| e["event"] == "subject-closed" && e["connection"].as_u64() == Some(conn))
}

/// Did the subject end connection `conn`: closed it (`subject-closed`) or
/// broke it (`read-failed`, a reset)? The runner takes either for the end
/// of the connection.
pub fn ended_by_subject(transcript: &Value, conn: u64) -> bool {
    transcript["events"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|e| {
            (e["event"] == "subject-closed" || e["event"] == "read-failed")
                && e["connection"].as_u64() == Some(conn)
        })
}

/// The requests (JSON-RPC messages with a method) mcpres sent on
/// connection `conn`.
pub fn sent_on(transcript: &Value, conn: u64) -> Vec<Value> {
    stream(transcript, "sent")
        .and_then(|mut s| s.remove(&conn))
        .map(|bytes| framed(&bytes, true))
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.get("method").is_some())
        .collect()
}

/// Did the runner go on past the last opening of an HTTP transcript? The
/// last connection whose sent bytes carry an opening request (`initialize`,
/// `server/discover`): `Some(true)` when its received bytes answer it with a
/// result and a later connection sent a message. The runner opens a later
/// connection of an observation only after its opening was answered (one
/// that gives up ends the observation), so it had that answer. `Some(false)`
/// when that is not what is stored; `None` when no opening was sent or a
/// stored chunk's bytes are elided.
pub fn proceeded_after_opening(transcript: &Value) -> Option<bool> {
    let sent = stream(transcript, "sent")?;
    let received = received(transcript)?;
    let (conn, openings) = sent.iter().rev().find_map(|(conn, bytes)| {
        let ids: Vec<Value> = framed(bytes, true)
            .into_iter()
            .filter(|m| matches!(m["method"].as_str(), Some("initialize" | "server/discover")))
            .filter_map(|m| m.get("id").cloned())
            .collect();
        (!ids.is_empty()).then_some((*conn, ids))
    })?;
    let answered = received.get(&conn).is_some_and(|bytes| {
        exchanges(bytes)
            .iter()
            .any(|e| openings.iter().any(|id| e.result_for(id).is_some()))
    });
    Some(
        answered
            && sent
                .range(conn + 1..)
                .any(|(_, bytes)| !framed(bytes, true).is_empty()),
    )
}

/// The final responses received on connection `conn`; `None` when the
/// received bytes are not all stored.
pub fn exchanges_on(transcript: &Value, conn: u64) -> Option<Vec<Exchange>> {
    let mut all = received(transcript)?;
    Some(all.remove(&conn).map(|b| exchanges(&b)).unwrap_or_default())
}

/// buffering-detection: the least time between the first progress event
/// and the call's answer (the tool is asked for three steps 250 ms apart)
/// for the events to count as flushed as they came, not buffered.
pub const FLUSH_GAP_MS: u64 = 200;

/// What counts as a Streamable HTTP negative control's refusal, check by
/// check: the table the runner classifies with and the judge reads the
/// stored bytes with (so a 500, or a 400 where the check's refusal is a
/// 415, is never credited as the property's refusal).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refusal {
    pub check: &'static str,
    /// The negative control's reason code (the check's refusal).
    pub reason: &'static str,
    /// The HTTP statuses that are the refusal (at 2025-11-25).
    pub statuses: &'static [u16],
    /// The statuses at 2026-07-28, where they differ.
    pub statuses_modern: Option<&'static [u16]>,
    /// JSON-RPC error codes (in the response's messages) that are the refusal.
    pub codes: &'static [i64],
    /// A tool error answering the control (a JSON-RPC error, or a result
    /// with `isError: true`) is the refusal.
    pub tool_error: bool,
}

const fn statuses(check: &'static str, reason: &'static str, statuses: &'static [u16]) -> Refusal {
    Refusal {
        check,
        reason,
        statuses,
        statuses_modern: None,
        codes: &[],
        tool_error: false,
    }
}

use crate::diag::reasons as R;

/// Every HTTP check whose negative control is read by [`Refusal`].
pub const REFUSALS: [Refusal; 12] = [
    // A null id: 400, or -32600 (invalid request).
    Refusal {
        codes: &[-32600],
        ..statuses(
            "request-response-binding",
            R::HTTP_UNBINDABLE_ID_REFUSED,
            &[400],
        )
    },
    statuses(
        "authenticated-loopback-http",
        R::HTTP_UNAUTHENTICATED_REFUSED,
        &[401],
    ),
    statuses(
        "json-versus-sse-response",
        R::HTTP_UNACCEPTABLE_MEDIA_REFUSED,
        &[406],
    ),
    statuses(
        "buffering-detection",
        R::HTTP_EVENT_STREAM_NOT_ACCEPTED_REFUSED,
        &[406],
    ),
    statuses(
        "transport-header-message-metadata-separation",
        R::HTTP_HEADER_BODY_MISMATCH_REFUSED,
        &[400],
    ),
    statuses(
        "status-code-consistency",
        R::HTTP_METHOD_NOT_ALLOWED_REFUSED,
        &[405],
    ),
    statuses(
        "content-type",
        R::HTTP_UNSUPPORTED_CONTENT_TYPE_REFUSED,
        &[400, 406, 415, 422],
    ),
    Refusal {
        statuses_modern: Some(&[400]),
        ..statuses("retry", R::HTTP_STALE_RETRY_REFUSED, &[404])
    },
    statuses(
        "proxy-added-headers",
        R::HTTP_FOREIGN_HOST_REFUSED,
        &[400, 403, 421],
    ),
    statuses(
        "no-unauthorized-redirect",
        R::HTTP_FOREIGN_ORIGIN_REFUSED,
        &[403],
    ),
    Refusal {
        tool_error: true,
        ..statuses(
            "long-lived-response-stream",
            R::HTTP_STREAM_ENDED_WITH_ERROR,
            &[],
        )
    },
    Refusal {
        codes: &[-32600],
        ..statuses("oversized-event", R::HTTP_OVERSIZED_BODY_REFUSED, &[413])
    },
];

/// The refusal of check `check`, when it is one of [`REFUSALS`].
pub fn refusal_of(check: &str) -> Option<&'static Refusal> {
    REFUSALS.iter().find(|r| r.check == check)
}

impl Refusal {
    /// Is an answer with `status`, these JSON-RPC error `codes` and (when
    /// `tool_error`) a tool error for the control the check's refusal, at
    /// 2026-07-28 (`modern`) or before?
    pub fn refuses(
        &self,
        modern: bool,
        status: Option<u16>,
        codes: &[i64],
        tool_error: bool,
    ) -> bool {
        let statuses = match (modern, self.statuses_modern) {
            (true, Some(m)) => m,
            _ => self.statuses,
        };
        status.is_some_and(|s| statuses.contains(&s))
            || codes.iter().any(|c| self.codes.contains(c))
            || (self.tool_error && tool_error)
    }
}

/// How the stored bytes show a control (or its mutant) met, in the
/// runner's order: a parse error is the syntax guard; the check's refusal;
/// a result for the request; else what the answer names itself (an error
/// code, a status, an answer without a frame, a close, nothing).
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    SyntaxGuard,
    Refused,
    Accepted,
    Other(String),
}

/// The reading of the answer `answer` (the first final response on the
/// request's connection; `closed`: the subject closed that connection) to
/// the request `id` under `refusal`.
pub fn read_answer(
    refusal: &Refusal,
    modern: bool,
    answer: Option<&Exchange>,
    closed: bool,
    id: &Value,
) -> Reading {
    use crate::diag::reasons;
    let Some(a) = answer else {
        return if closed {
            Reading::Other(reasons::HTTP_CLOSED_WITHOUT_RESPONSE.into())
        } else {
            Reading::Other(super::profile::NO_ANSWER.into())
        };
    };
    let messages = a.messages();
    let codes: Vec<i64> = messages
        .iter()
        .filter_map(|m| m.pointer("/error/code").and_then(Value::as_i64))
        .collect();
    if codes.contains(&-32700) {
        return Reading::SyntaxGuard;
    }
    let answer_to_id = messages.iter().find(|m| {
        m.get("id") == Some(id) && (m.get("result").is_some() || m.get("error").is_some())
    });
    let tool_error = answer_to_id.is_some_and(|m| {
        m.get("error").is_some() || m.pointer("/result/isError") == Some(&Value::Bool(true))
    });
    if refusal.refuses(modern, Some(a.status), &codes, tool_error) {
        return Reading::Refused;
    }
    if answer_to_id.is_some_and(|m| m.get("result").is_some()) {
        return Reading::Accepted;
    }
    if let Some(code) = codes.first() {
        return Reading::Other(reasons::jsonrpc_error(code.unsigned_abs()));
    }
    if !(200..300).contains(&a.status) {
        return Reading::Other(reasons::http_status(a.status));
    }
    Reading::Other(reasons::HTTP_NO_ANSWER_FRAME.into())
}

/// The response reads a Streamable HTTP probe's runner kept
/// (`response-read` events: per read, its connection, the status it read,
/// the ids answered, whether the subject had closed the connection), in
/// order. `None` for a record that keeps none (made before they were kept,
/// or not an HTTP probe).
pub fn response_reads(transcript: &Value) -> Option<Vec<&Value>> {
    transcript.get("connections")?;
    let reads: Vec<&Value> = transcript
        .get("events")?
        .as_array()?
        .iter()
        .filter(|e| e["event"] == "response-read")
        .collect();
    (!reads.is_empty()).then_some(reads)
}

/// Did every opening the transcript's connections sent (`initialize`,
/// `server/discover`) get its result in the first response read kept on its
/// connection? `None` when the record keeps no reads, its sent bytes are not
/// all stored, or no opening was sent.
pub fn openings_answered(transcript: &Value) -> Option<bool> {
    let reads = response_reads(transcript)?;
    let sent = stream(transcript, "sent")?;
    let mut any = false;
    for (conn, bytes) in &sent {
        let ids: Vec<Value> = framed(bytes, true)
            .into_iter()
            .filter(|m| matches!(m["method"].as_str(), Some("initialize" | "server/discover")))
            .filter_map(|m| m.get("id").cloned())
            .collect();
        if ids.is_empty() {
            continue;
        }
        any = true;
        let first = reads
            .iter()
            .find(|r| r["connection"].as_u64() == Some(*conn));
        let got = first.is_some_and(|r| {
            r["results"]
                .as_array()
                .is_some_and(|results| ids.iter().all(|id| results.contains(id)))
        });
        if !got {
            return Some(false);
        }
    }
    any.then_some(true)
}

/// Was the transcript's conversation opened under 2026-07-28 (a
/// `server/discover` sent) rather than 2025-11-25 (`initialize`)? `None`
/// when its sent bytes show neither.
pub fn modern(transcript: &Value) -> Option<bool> {
    let sent = sent_messages(transcript)?;
    let method = |name: &str| sent.iter().any(|m| m["method"] == name);
    if method("server/discover") {
        Some(true)
    } else if method("initialize") {
        Some(false)
    } else {
        None
    }
}

/// The connection that carried a mutant: the one request body that is not
/// JSON but is a request once its last `}` is put back (the runner's syntax
/// defect removes it), with that request's id. `None` when the sent bytes
/// are not all stored or no single body is such.
pub fn defect_connection(transcript: &Value) -> Option<(u64, Value)> {
    let mut found = Vec::new();
    for (conn, bodies) in sent_bodies(transcript)? {
        for body in bodies {
            if body.is_empty() || serde_json::from_slice::<Value>(&body).is_ok() {
                continue;
            }
            let mut repaired = body.clone();
            repaired.push(b'}');
            if let Ok(m) = serde_json::from_slice::<Value>(&repaired)
                && m.get("method").is_some()
                && let Some(id) = m.get("id")
            {
                found.push((conn, id.clone()));
            }
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// The body of a chunked transfer coding at the start of `bytes`, how
/// many bytes it used (as far as it can be read), and whether it ended
/// (its last chunk and the empty line after any trailers were read).
fn dechunk(bytes: &[u8]) -> (Vec<u8>, usize, bool) {
    let mut body = Vec::new();
    let mut at = 0;
    while let Some(eol) = find(&bytes[at..], b"\r\n") {
        let line = String::from_utf8_lossy(&bytes[at..at + eol]);
        let size = line.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size, 16) else {
            break;
        };
        let start = at + eol + 2;
        if size == 0 {
            // The last chunk, then trailer lines (if any) and an empty line.
            let mut line = start;
            while let Some(e) = find(&bytes[line..], b"\r\n") {
                if e == 0 {
                    return (body, line + 2, true);
                }
                line += e + 2;
            }
            return (body, bytes.len(), false);
        }
        let end = (start + size).min(bytes.len());
        body.extend_from_slice(&bytes[start..end]);
        at = (end + 2).min(bytes.len());
        if end < start + size {
            break;
        }
    }
    (body, bytes.len(), false)
}

/// The JSON-RPC messages of an event stream's `data` fields.
fn events(body: &[u8]) -> Vec<Value> {
    event_data(body)
        .iter()
        .flat_map(|d| json_messages(d.as_bytes()))
        .collect()
}

/// Each event's `data` lines, joined.
fn event_data(body: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(body).replace("\r\n", "\n");
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            // An event whose data is empty is not dispatched (SSE rules):
            // servers send such priming events carrying only an id.
            let joined = data.join("\n");
            (!joined.is_empty()).then_some(joined)
        })
        .collect()
}

/// A JSON text's messages: the object, or the objects of an array.
fn json_messages(body: &[u8]) -> Vec<Value> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => vec![Value::Object(m)],
        Ok(Value::Array(a)) => a.into_iter().filter(Value::is_object).collect(),
        _ => Vec::new(),
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timed_messages_read_each_connection_at_its_first_send_and_its_last_answer_chunk() {
        let body = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
        let post = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let answer = r#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            answer.len()
        );
        let t = json!({
            "connections": 2,
            "events": [
                {"atMs": 3, "connection": 1, "stream": "sent", "text": post},
                {"atMs": 9, "connection": 1, "stream": "received", "text": head},
                {"atMs": 40, "connection": 1, "stream": "received", "text": answer},
                // Sent, never answered (the crashed subject's request in flight).
                {"atMs": 50, "connection": 2, "stream": "sent", "text": post.replace("\"id\":7", "\"id\":8")},
            ],
        });
        let sent = timed_messages(&t, true).unwrap();
        assert_eq!(
            sent.iter()
                .map(|(at, m)| (*at, m["id"].clone()))
                .collect::<Vec<_>>(),
            [(3, json!(7)), (50, json!(8))]
        );
        let got = timed_messages(&t, false).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].0, &got[0].1["id"]), (40, &json!(7)));
        // Not an HTTP transcript: nothing to read.
        assert_eq!(timed_messages(&json!({"chunks": []}), true), None);
    }

    #[test]
    fn a_runner_that_opened_a_later_connection_went_on_past_the_opening() {
        let post = |body: &str| {
            format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
        };
        let answer = |body: &str| {
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
        };
        let open = post(r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}"#);
        let opened = answer(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#);
        let refused = answer(r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"no"}}"#);
        let next = post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let t = |events: Vec<(u64, &str, &str)>| {
            json!({
                "connections": 2,
                "events": events
                    .into_iter()
                    .map(|(c, stream, text)| json!({"atMs": 0, "connection": c, "stream": stream, "text": text}))
                    .collect::<Vec<_>>(),
            })
        };
        let went_on = t(vec![
            (1, "sent", &open),
            (1, "received", &opened),
            (2, "sent", &next),
        ]);
        assert_eq!(proceeded_after_opening(&went_on), Some(true));
        // Answered, but nothing sent after it: nothing is read.
        let stopped = t(vec![(1, "sent", &open), (1, "received", &opened)]);
        assert_eq!(proceeded_after_opening(&stopped), Some(false));
        // Refused, then a later connection (a second opening that failed is
        // the last one): not went on.
        let again = t(vec![
            (1, "sent", &open),
            (1, "received", &opened),
            (2, "sent", &open),
            (2, "received", &refused),
        ]);
        assert_eq!(proceeded_after_opening(&again), Some(false));
        // No opening sent, or not an HTTP transcript.
        assert_eq!(proceeded_after_opening(&t(vec![(2, "sent", &next)])), None);
        assert_eq!(proceeded_after_opening(&json!({"chunks": []})), None);
    }

    #[test]
    fn json_sse_and_chunked_bodies_yield_their_messages() {
        let json_body = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        let mut wire = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            json_body.len()
        )
        .into_bytes();
        wire.extend_from_slice(json_body);
        let sse = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32600,\"message\":\"x\"}}\n\n";
        let chunked = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{}\r\n{:x}\r\n{}\r\n0\r\n\r\n",
            10,
            &sse[..10],
            sse.len() - 10,
            &sse[10..]
        );
        wire.extend_from_slice(chunked.as_bytes());
        wire.extend_from_slice(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        let got = responses(&wire);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0]["id"], 1);
        assert_eq!(got[1]["error"]["code"], -32600);
    }

    #[test]
    fn an_elided_received_chunk_gives_no_reading() {
        let t = json!({"connections": [], "events": [
            {"connection": 1, "stream": "received", "elided": true, "sha256": "00"}
        ]});
        assert!(received(&t).is_none());
        let t = json!({"connections": [], "events": [
            {"connection": 1, "stream": "received", "text": "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"},
            {"connection": 1, "stream": "sent", "text": "ignored"}
        ]});
        assert_eq!(messages(&t), Some(vec![]));
    }

    #[test]
    fn a_deflated_chunk_reads_back_only_at_its_declared_length() {
        let body = "0123456789abcdef".repeat(8 << 10);
        let packed = deflated(body.as_bytes()).expect("filler packs");
        assert!(packed.len() < body.len() / 8);
        let chunk = |len: usize| json!({"bytes": len, "deflate": packed});
        assert_eq!(
            chunk_bytes(&chunk(body.len())),
            Some(body.clone().into_bytes())
        );
        // A length that is not the inflated one (shorter or longer) reads as
        // nothing, as does a length beyond the bound.
        assert_eq!(chunk_bytes(&chunk(body.len() - 1)), None);
        assert_eq!(chunk_bytes(&chunk(body.len() + 1)), None);
        assert_eq!(chunk_bytes(&chunk(CHUNK_MAX_BYTES + 1)), None);
        assert_eq!(
            chunk_bytes(&json!({"bytes": 3, "deflate": "not base64!"})),
            None
        );
        // Bytes that do not pack stay plain (or elided), never deflated.
        let noise: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        assert_eq!(deflated(&noise), None);
        assert_eq!(deflated(b"short"), None);
        // A connection's stream joins deflated and plain chunks in order.
        let t = json!({"connections": 1, "events": [
            {"connection": 1, "stream": "sent", "text": "ab"},
            {"connection": 1, "stream": "sent", "bytes": body.len(), "deflate": packed},
            {"connection": 1, "stream": "sent", "text": "yz"}
        ]});
        let sent = stream(&t, "sent").unwrap();
        assert_eq!(sent[&1].len(), body.len() + 4);
        assert!(sent[&1].starts_with(b"ab0123") && sent[&1].ends_with(b"defyz"));
    }
}

#[cfg(test)]
mod framing_tests {
    use super::*;

    #[test]
    fn a_response_is_complete_only_when_its_framing_ends() {
        let cl = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n{}";
        assert!(!exchanges(cl)[0].complete);
        let cl = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        assert!(exchanges(cl)[0].complete);
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n";
        assert!(!exchanges(chunked)[0].complete);
        let ended = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
        let e = &exchanges(ended)[0];
        assert!(e.complete && e.body == b"{}");
        // Trailers: complete only at the empty line after them.
        let open = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n";
        assert!(!exchanges(open)[0].complete);
        let closed = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n\r\nHTTP/1.1 204 No\r\n\r\n";
        let both = exchanges(closed);
        assert!(both[0].complete && both[1].status == 204 && both[1].complete);
        let by_close = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}";
        let e = &exchanges(by_close)[0];
        assert!(!e.complete && e.until_close);
    }
}

#[cfg(test)]
mod refusal_tests {
    use super::*;
    use serde_json::json;

    fn answer(status: u16, body: &str) -> Exchange {
        exchanges(
            format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .remove(0)
    }

    #[test]
    fn a_control_is_read_against_its_checks_own_refusal() {
        let ct = refusal_of("content-type").unwrap();
        let id = json!(5);
        for s in [400, 406, 415, 422] {
            assert_eq!(
                read_answer(ct, false, Some(&answer(s, "")), false, &id),
                Reading::Refused
            );
        }
        assert_eq!(
            read_answer(ct, false, Some(&answer(500, "")), false, &id),
            Reading::Other(crate::diag::reasons::http_status(500))
        );
        let parse = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#;
        assert_eq!(
            read_answer(ct, false, Some(&answer(400, parse)), false, &id),
            Reading::SyntaxGuard
        );
        let served = r#"{"jsonrpc":"2.0","id":5,"result":{}}"#;
        assert_eq!(
            read_answer(ct, false, Some(&answer(200, served)), false, &id),
            Reading::Accepted
        );
        assert_eq!(
            read_answer(ct, false, None, true, &id),
            Reading::Other(crate::diag::reasons::HTTP_CLOSED_WITHOUT_RESPONSE.into())
        );
        // The stale retry's refusal depends on the revision.
        let retry = refusal_of("retry").unwrap();
        assert_eq!(
            read_answer(retry, false, Some(&answer(404, "")), false, &id),
            Reading::Refused
        );
        assert_ne!(
            read_answer(retry, true, Some(&answer(404, "")), false, &id),
            Reading::Refused
        );
        assert_eq!(
            read_answer(retry, true, Some(&answer(400, "")), false, &id),
            Reading::Refused
        );
        // A tool error answering the control, for the check whose refusal it is.
        let lived = refusal_of("long-lived-response-stream").unwrap();
        let err = r#"{"jsonrpc":"2.0","id":5,"result":{"isError":true,"content":[]}}"#;
        assert_eq!(
            read_answer(lived, false, Some(&answer(200, err)), false, &id),
            Reading::Refused
        );
        assert!(refusal_of("keepalive").is_none());
    }

    #[test]
    fn the_mutants_connection_is_the_one_body_that_is_a_request_less_its_last_brace() {
        let request = |conn: u64, body: &str| {
            json!({"connection": conn, "stream": "sent", "text": format!(
                "POST /mcp HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )})
        };
        let t = json!({"connections": 2, "events": [
            request(1, r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            request(2, r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}"#),
        ]});
        assert_eq!(defect_connection(&t), Some((2, json!(9))));
        assert_eq!(connection_of(&t, &json!(1)), Some(1));
        assert_eq!(connection_of(&t, &json!(9)), None);
        let t = json!({"connections": 1, "events": [
            request(1, r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
        ]});
        assert_eq!(defect_connection(&t), None);
    }
}
