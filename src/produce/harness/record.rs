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
    /// The subject wrote more than `INPUT_LIMIT_BYTES` to stdout (or in
    /// HTTP responses), or more than `SESSION_FRAME_LIMIT` frames: reading
    /// stopped there.
    pub input_limit_exceeded: bool,
    /// Which limit stopped reading, in words (for the oracle's judgement).
    pub limit_detail: Option<String>,
    /// Frames from the subject logged so far (see `SESSION_FRAME_LIMIT`).
    pub frames_from_subject: usize,
}

impl Recording {
    /// Stop recording: `what` limit was hit (`limit` its value); the first
    /// limit hit is the one reported. Records an `input-limit-exceeded`
    /// lifecycle event.
    pub fn limit_hit(&mut self, session: &str, at_ms: u64, what: &str, limit: usize) {
        self.events.push(json!({
            "session": session, "event": "input-limit-exceeded", "offsetMs": at_ms,
            "limit": what, "limitValue": limit,
        }));
        if !self.input_limit_exceeded {
            self.input_limit_exceeded = true;
            self.limit_detail = Some(match what {
                "frames" => format!(
                    "the subject wrote more than {limit} frames in one session; reading stopped there"
                ),
                _ => format!(
                    "the subject wrote more than the declared input limit of {limit} bytes; reading stopped there"
                ),
            });
        }
    }

    /// Count one frame from the subject before it is logged: `false` (and
    /// the limit recorded) when the session already holds
    /// `SESSION_FRAME_LIMIT` of them.
    pub fn admit_frame(&mut self, session: &str, at_ms: u64) -> bool {
        if self.frames_from_subject >= SESSION_FRAME_LIMIT {
            self.limit_hit(session, at_ms, "frames", SESSION_FRAME_LIMIT);
            return false;
        }
        self.frames_from_subject += 1;
        true
    }
}

/// The most bytes the harness reads from one subject process's stdout: the
/// `resourceLimits.inputBytes` every harness bundle declares. Past it the
/// harness stops reading, records an `input-limit-exceeded` event, and the
/// oracle rejects the exchange (`INPUT_LIMIT_EXCEEDED`).
pub const INPUT_LIMIT_BYTES: usize = 4 * 1024 * 1024;

/// The most stderr bytes kept per process; the rest is read and counted, not kept.
pub const STDERR_KEEP_BYTES: usize = 1024 * 1024;

/// The most frames (stdout lines, or JSON-RPC messages in HTTP responses)
/// one session logs from the subject. Each frame costs a message-log entry
/// and a place in the reader's queue whatever its length, so `INPUT_LIMIT_BYTES`
/// alone would let two-byte lines (`yes`) grow the harness by two million
/// entries; past this count reading stops as at the byte limit
/// (`INPUT_LIMIT_EXCEEDED`). Together with `INPUT_LIMIT_BYTES`,
/// `STDERR_KEEP_BYTES` and `MESSAGE_LOG_FRAME_BYTES` this bounds what one
/// session records.
pub const SESSION_FRAME_LIMIT: usize = 4096;

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
