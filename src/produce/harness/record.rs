//! What the harness records of a subject, below every reader and writer:
//! the raw recording of one process, the frames cut from it, what the pumps
//! (stdout reader, HTTP exchanges) hand to a session, and the message-log
//! entry of one frame. Imports no other harness file.

use serde_json::{Value, json};

use crate::json::canonical;

/// Everything recorded about one subject process, in arrival order.
#[derive(Debug, Default, Clone)]
pub struct Recording {
    pub stdin: Vec<u8>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// JSON-RPC message log entries (both directions).
    pub messages: Vec<Value>,
    /// Process lifecycle events.
    pub events: Vec<Value>,
    /// Streamable HTTP subjects: every request's raw bytes, in order.
    pub http_requests: Vec<u8>,
    /// Streamable HTTP subjects: every response's raw bytes, in order.
    pub http_responses: Vec<u8>,
    /// The subject wrote more than `INPUT_LIMIT_BYTES` to stdout: reading
    /// stopped there (the declared `resourceLimits.inputBytes`).
    pub input_limit_exceeded: bool,
}

/// The most bytes the harness reads from one subject process's stdout: the
/// `resourceLimits.inputBytes` every harness bundle declares. Past it the
/// harness stops reading, records an `input-limit-exceeded` event, and the
/// oracle rejects the exchange (`INPUT_LIMIT_EXCEEDED`).
pub const INPUT_LIMIT_BYTES: usize = 4 * 1024 * 1024;

/// The most stderr bytes kept per process; the rest is read and counted, not kept.
pub const STDERR_KEEP_BYTES: usize = 1024 * 1024;

/// One newline-delimited frame the subject wrote, as raw bytes.
#[derive(Debug, Clone)]
pub struct Frame {
    pub bytes: Vec<u8>,
    /// Milliseconds since the run epoch when the frame's newline arrived.
    pub at_ms: u64,
}

/// What the pumps (stdout reader, HTTP exchanges) hand to the session's reader.
#[derive(Debug)]
pub enum Pumped {
    Frame(Frame),
    /// HTTP: the exchange carrying the request with this id ended without a
    /// frame answering it (an error status without a JSON-RPC body, a closed
    /// connection, a response of another media type).
    Unanswered(Value),
    /// No frame will follow (stdout closed, or the HTTP session ended).
    End,
}

/// Frames longer than this are logged without their content in `messages.jsonl`.
pub const MESSAGE_LOG_FRAME_BYTES: usize = 64 * 1024;

pub(crate) fn message_entry(session: &str, direction: &str, at_ms: u64, bytes: &[u8]) -> Value {
    let parsed = std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| serde_json::from_str::<Value>(s).ok());
    let mut entry = json!({
        "session": session,
        "direction": direction,
        "offsetMs": at_ms,
        "bytes": bytes.len(),
        "sha256": canonical::sha256_hex(bytes),
    });
    if bytes.len() > MESSAGE_LOG_FRAME_BYTES {
        // The raw capture holds the frame; the log keeps its length and
        // digest, so that a few large frames cannot outgrow an artifact.
        entry["omitted"] = json!(format!(
            "frame longer than {MESSAGE_LOG_FRAME_BYTES} bytes: see the raw capture"
        ));
        entry["jsonrpc"] = json!(parsed.as_ref().is_some_and(|v| v["jsonrpc"] == "2.0"));
        return entry;
    }
    match parsed {
        Some(v) => entry["message"] = v,
        None => entry["unparsed"] = json!(String::from_utf8_lossy(bytes)),
    }
    entry
}
