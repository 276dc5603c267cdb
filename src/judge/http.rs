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
        let bytes = out.entry(conn).or_default();
        if let Some(text) = e["text"].as_str() {
            bytes.extend_from_slice(text.as_bytes());
        } else if let Some(b64) = e["base64"].as_str() {
            bytes.extend(base64::engine::general_purpose::STANDARD.decode(b64).ok()?);
        } else {
            return None;
        }
    }
    Some(out)
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
        let (body, used) = if !request && (status == 204 || status == 304) {
            (Vec::new(), 0)
        } else if get("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
            dechunk(rest)
        } else if let Some(n) = get("content-length").and_then(|n| n.parse::<usize>().ok()) {
            let n = n.min(rest.len());
            (rest[..n].to_vec(), n)
        } else if request {
            (Vec::new(), 0)
        } else {
            (rest.to_vec(), rest.len())
        };
        out.push(Exchange {
            status,
            headers,
            body,
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

/// The final responses received on connection `conn`; `None` when the
/// received bytes are not all stored.
pub fn exchanges_on(transcript: &Value, conn: u64) -> Option<Vec<Exchange>> {
    let mut all = received(transcript)?;
    Some(all.remove(&conn).map(|b| exchanges(&b)).unwrap_or_default())
}

/// The body of a chunked transfer coding at the start of `bytes` and how
/// many bytes it used (as far as it can be read).
fn dechunk(bytes: &[u8]) -> (Vec<u8>, usize) {
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
            // The last chunk, then (trailers and) the final CRLF.
            let end = find(&bytes[start..], b"\r\n").map_or(bytes.len(), |e| start + e + 2);
            return (body, end);
        }
        let end = (start + size).min(bytes.len());
        body.extend_from_slice(&bytes[start..end]);
        at = (end + 2).min(bytes.len());
        if end < start + size {
            break;
        }
    }
    (body, bytes.len())
}

/// The JSON-RPC messages of an event stream's `data` fields.
fn events(body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body).replace("\r\n", "\n");
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .flat_map(|d| json_messages(d.as_bytes()))
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
}
