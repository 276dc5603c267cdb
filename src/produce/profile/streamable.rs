//! The checks of `mcp-res/streamable-http/v1` (spec/profiles.md, "What
//! each check observes"): every one drives the subject over raw TCP, below
//! any HTTP library, so that a malformed chunk, a cut body, an early close or
//! a slow reader reaches the subject exactly as written.
//!
//! A check runs against one server (started for it when mcpres has the
//! subject's command, and stopped afterwards; the two cleanup checks start
//! one per observation, since their controls stop it). Each observation opens
//! its own conversation on fresh connections.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::check::{
    CheckRun, Ctx, NO_ANSWER, Obs, SUBJECT_EXITED, SYNTAX_GUARD, mutant, obs, open_failed,
    syntax_defect,
};
use super::decl::{
    Basis, CheckDecl, JSONRPC, Level as L, MCP_2025, MCP_2026, Offer, PROFILE, RFC9110, RFC9112,
};
use super::probe::Probe;
use super::web::{Conn, Reading, Rec, Resp, Server, Session, Shape};
use crate::diag::reasons;
use crate::model::vocab::ProbeOutcome::{self, Accept, NoEffect, Reject, Terminate};
use crate::produce::drive::http::{Body, Request, split_head};
use crate::produce::drive::proc::{process_tree, sockets_of};

/// The profile these checks belong to.
const P: &str = "mcp-res/streamable-http/v1";
const SECURITY_2025: &str = "Basic › Transports › Streamable HTTP › Security Warning";
const SECURITY_2026: &str = "Basic › Transports › Streamable HTTP › Security & Endpoint";
const SENDING: &str = "Basic › Transports › Streamable HTTP › Sending Messages";

/// The checks, in manifest order, as declarations (spec/profiles.md, "What each
/// check stands on").
pub const CHECKS: &[CheckDecl] = &[
    CheckDecl::new(P, "authenticated-loopback-http", authenticated_loopback_http, reasons::HTTP_AUTHENTICATED, reasons::HTTP_UNAUTHENTICATED_REFUSED)
        .credential()
        .basis(&[
            Basis::both(PROFILE, "compositionBoundary", L::Profile, "default evaluation is authenticated loopback only"),
            Basis::both(MCP_2025, SECURITY_2025, L::Should, "servers SHOULD bind only to localhost and SHOULD authenticate every connection"),
            Basis::both(MCP_2026, SECURITY_2026, L::Should, "servers SHOULD bind only to localhost and SHOULD authenticate every connection"),
        ])
        .judged("MCP only recommends authentication and a loopback listener; the check stands on the profile's stated boundary. Without a credential for the run it is NOT_OBSERVED. The refusal is credited only after a valid twin (the control's request without its defect) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "request-response-binding", request_response_binding, reasons::HTTP_RESPONSE_BOUND, reasons::HTTP_UNBINDABLE_ID_REFUSED)
        .basis(&[
            Basis::pos(JSONRPC, "§5", L::Must, "the response's id MUST be the request's"),
            Basis::neg(MCP_2025, "Basic › Messages › Requests", L::None, "the id MUST NOT be null (a rule for the sender)"),
            Basis::neg(MCP_2026, "Basic › Messages › Requests", L::None, "the id MUST NOT be null (a rule for the sender)"),
        ])
        .judged("The positive stands on a MUST; refusing a null id (`400` or -32600) is the profile's reading of a rule that binds the sender: a server that meets it otherwise without serving it (another error such as -32700, another status, silence or a close) does what the specifications leave open (NOT_OBSERVED, `MCP_RES_BEHAVIOUR_LEFT_OPEN`), never FAIL. The refusal is credited only after a valid twin (the control's request without its defect) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "json-versus-sse-response", json_versus_sse_response, reasons::HTTP_MEDIA_TYPE_MATCHES_BODY, reasons::HTTP_UNACCEPTABLE_MEDIA_REFUSED)
        .basis(&[
            Basis::pos(MCP_2025, SENDING, L::Must, "a request MUST be answered as `application/json` or `text/event-stream`"),
            Basis::pos(MCP_2026, SENDING, L::Must, "a request MUST be answered as `application/json` or `text/event-stream`"),
            Basis::neg(RFC9110, "§12.5.1", L::May, "for an Accept it cannot satisfy, the server can send 406 or disregard the header"),
        ])
        .judged("A server that disregards `Accept: text/html` and answers does what RFC 9110 allows; the control expects `406`. The refusal is credited only after a valid twin (the control's request without its defect) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "long-lived-response-stream", long_lived_response_stream, reasons::HTTP_STREAM_CARRIED_TO_RESULT, reasons::HTTP_STREAM_ENDED_WITH_ERROR)
        .offer(Offer::StreamingTool)
        .basis(&[
            Basis::pos(MCP_2025, SENDING, L::May, "the server chooses JSON or an event stream, and MAY send notifications before the response; the stream SHOULD carry the response"),
            Basis::pos(MCP_2026, "Basic › Transports › Streamable HTTP › Receiving Messages", L::May, "the server MAY send notifications before the final response, which SHOULD end the stream"),
            Basis::neg(MCP_2025, "Server › Tools › Security Considerations", L::Must, "servers MUST validate all tool inputs"),
            Basis::neg(MCP_2026, "Server › Tools › Security Considerations", L::Must, "servers MUST validate all tool inputs"),
        ])
        .judged("Streaming progress on an event stream is the server's choice: a server that answers the streaming tool with one JSON body does what the specification allows, and the positive expects the stream. Without a streaming tool the check is NOT_OBSERVED. The refusal is credited only after a valid twin (the control's request without its defect) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "buffering-detection", buffering_detection, reasons::HTTP_EVENTS_FLUSHED_INCREMENTALLY, reasons::HTTP_EVENT_STREAM_NOT_ACCEPTED_REFUSED)
        .offer(Offer::StreamingTool)
        .basis(&[
            Basis::pos(MCP_2025, SENDING, L::May, "the server MAY send notifications before the response (when they arrive is not stated)"),
            Basis::pos(MCP_2026, "Basic › Transports › Streamable HTTP › Receiving Messages", L::Should, "servers SHOULD send `X-Accel-Buffering: no` so that events reach the client at once"),
            Basis::neg(RFC9110, "§12.5.1", L::May, "for an Accept it cannot satisfy, the server can send 406 or disregard the header"),
        ])
        .judged("No MUST on either side: incremental delivery and the `406` are the profile's readings. Without a streaming tool the check is NOT_OBSERVED."),
    CheckDecl::new(P, "keepalive", keepalive, reasons::HTTP_CONNECTION_KEPT_ALIVE, reasons::HTTP_CLOSE_HONOURED)
        .basis(&[
            Basis::pos(RFC9112, "§9.3", L::None, "HTTP/1.1 connections persist by default, but a server may close after any response"),
            Basis::neg(RFC9112, "§9.6", L::Must, "a server that receives `Connection: close` MUST close the connection after its final response"),
        ])
        .judged("The control stands on a MUST; keeping the connection open for a second request is the profile's reading (a server that closes with `Connection: close` after each response does what RFC 9112 allows)."),
    CheckDecl::new(P, "transport-header-message-metadata-separation", header_body_separation, reasons::HTTP_HEADERS_AGREE_WITH_BODY, reasons::HTTP_HEADER_BODY_MISMATCH_REFUSED)
        .basis(&[
            Basis::pos(JSONRPC, "§4", L::Must, "a request is answered"),
            Basis::neg(MCP_2025, "Basic › Transports › Streamable HTTP › Session Management", L::Should, "a server that requires a session SHOULD answer a request without `Mcp-Session-Id` with 400"),
            Basis::neg(MCP_2026, "Basic › Transports › Streamable HTTP › Server Validation", L::Must, "headers that do not match the body MUST be rejected with 400 (-32020)"),
        ])
        .judged("At 2025-11-25 the 400 for a session id carried only in the body is a SHOULD; at 2026-07-28 the header mismatch refusal is a MUST. The refusal is credited only after a valid twin (the control's request without its defect) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "status-code-consistency", status_code_consistency, reasons::HTTP_NOTIFICATION_202, reasons::HTTP_METHOD_NOT_ALLOWED_REFUSED)
        .basis(&[
            Basis::pos(MCP_2025, SENDING, L::Must, "an accepted notification MUST get 202 Accepted with no body"),
            Basis::pos(MCP_2026, SENDING, L::Must, "an accepted notification MUST get 202 Accepted with no body"),
            Basis::neg(RFC9110, "§9.1, §15.5.6", L::Should, "a method the resource does not allow SHOULD get 405 (an unrecognized one 501)"),
        ])
        .judged("The positive stands on a MUST; the `405` for `PUT` is a SHOULD of RFC 9110: a server that refuses `PUT` with another client error status does what the specifications allow (NOT_OBSERVED, `MCP_RES_BEHAVIOUR_LEFT_OPEN`), never FAIL. The refusal is credited only after a valid twin (the control's request without its defect) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "content-type", content_type, reasons::HTTP_CONTENT_TYPE_DECLARED, reasons::HTTP_UNSUPPORTED_CONTENT_TYPE_REFUSED)
        .basis(&[
            Basis::pos(MCP_2025, SENDING, L::Must, "a request MUST be answered as `application/json` or `text/event-stream`"),
            Basis::pos(MCP_2026, SENDING, L::Must, "a request MUST be answered as `application/json` or `text/event-stream`"),
            Basis::neg(RFC9110, "§15.5.16", L::May, "415 is the status for content in a format the resource does not support (its use is not required)"),
        ])
        .judged("The specification asks for an HTTP error status \"(e.g., 400)\": `400`, `406`, `415` and `422` are each the refusal. A server that reads a `text/plain` body as JSON does what the specifications allow; the control expects a refusal. The refusal is credited only after a valid twin (the control's request without its defect) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "interrupted-body", interrupted_body, reasons::HTTP_SPLIT_BODY_ASSEMBLED, reasons::HTTP_INTERRUPTED_BODY_DISCARDED)
        .basis(&[
            Basis::pos(RFC9112, "§6.3", L::Must, "the body's length is its Content-Length, however the octets arrive"),
            Basis::neg(RFC9112, "§6.3, §8", L::Must, "a body cut short of its Content-Length MUST be considered incomplete (and the connection closed)"),
        ])
        .judged("Both observations stand on MUSTs; `400`, `408`, the close or no answer to the cut request are all accepted. The refusal is credited only after a valid twin (the control's request without its defect) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "early-close", early_close, reasons::HTTP_ANSWER_READ_TO_END, reasons::HTTP_EARLY_CLOSE_ABSORBED)
        .basis(&[
            Basis::pos(JSONRPC, "§4", L::Must, "a request is answered"),
            Basis::neg(MCP_2025, SENDING, L::Should, "a disconnection SHOULD NOT be read as a cancellation"),
            Basis::neg(MCP_2026, "Basic › Transports › Streamable HTTP › Cancellation", L::Must, "closing the response stream MUST be treated as cancellation of that request"),
            Basis::neg(PROFILE, "required check early-close", L::Profile, "a connection the client closes early does not stop the server serving others"),
        ])
        .judged("Serving the next request after a client's early close is the profile's requirement (neither revision states it); the revisions differ only on what happens to the closed request."),
    CheckDecl::new(P, "timeout", timeout, reasons::HTTP_ANSWERED_WITHIN_BOUND, reasons::HTTP_STALLED_REQUEST_TIMED_OUT)
        .basis(&[
            Basis::both(PROFILE, "required check timeout", L::Profile, "a request is answered within the answer bound, and a stalled one is ended within the idle bound"),
            Basis::neg(RFC9110, "§15.5.9", L::May, "408 is the status for a request the server stopped waiting for"),
            Basis::neg(RFC9112, "§9.5", L::None, "servers usually time out idle connections (no bound is required)"),
        ])
        .judged("No specification requires a server to time out a stalled request: one held open past the operator's `--idle-timeout-ms` is NOT_OBSERVED (`MCP_RES_BEHAVIOUR_LEFT_OPEN`), never FAIL."),
    CheckDecl::new(P, "retry", retry, reasons::HTTP_RETRY_ANSWERED, reasons::HTTP_STALE_RETRY_REFUSED)
        .basis(&[
            Basis::pos(JSONRPC, "§4", L::Must, "a request (the retry, with a new id) is answered"),
            Basis::neg(MCP_2025, "Basic › Transports › Streamable HTTP › Session Management", L::Must, "after a session ends the server MUST answer requests naming it with 404 (an id it never issued is read the same way)"),
            Basis::neg(MCP_2026, "Basic › Transports › Streamable HTTP › Protocol Version Header", L::Must, "a version the server does not implement MUST get 400 with UnsupportedProtocolVersionError"),
        ])
        .judged("At 2025-11-25 the `404` MUST is stated for a terminated session; the control applies it to a session id the server never issued, which no MUST covers: a server that refuses that id without serving it, with another status than `404` (the TypeScript SDK's `400`, for example), does what the specification leaves open (NOT_OBSERVED, `MCP_RES_BEHAVIOUR_LEFT_OPEN`), never FAIL. The refusal is credited only after a valid twin (the live request) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "duplicate-delivery", duplicate_delivery, reasons::HTTP_ANSWERED_ONCE, reasons::HTTP_STRAY_RESPONSE_NOT_ANSWERED)
        .basis(&[
            Basis::pos(MCP_2025, SENDING, L::Should, "after the response the server SHOULD close the stream"),
            Basis::pos(MCP_2026, "Basic › Transports › Streamable HTTP › Receiving Messages", L::Should, "the final response SHOULD terminate the stream"),
            Basis::neg(MCP_2025, SENDING, L::Must, "a response the server accepts MUST get 202 with no body; otherwise an HTTP error status"),
            Basis::neg(MCP_2026, SENDING, L::None, "the client MUST NOT send responses (a rule for the sender); the body rules name only requests and notifications"),
        ])
        .judged("A second answer to one request breaks a SHOULD; the stray response's `202` or error status is a MUST at 2025-11-25, and the profile's reading at 2026-07-28."),
    CheckDecl::new(P, "cancellation-by-stream-close", cancellation_by_stream_close, reasons::HTTP_STREAM_COMPLETED, reasons::HTTP_STREAM_CLOSE_ABSORBED)
        .offer(Offer::StreamingTool)
        .basis(&[
            Basis::pos(MCP_2025, SENDING, L::Should, "the event stream SHOULD eventually carry the response"),
            Basis::pos(MCP_2026, "Basic › Transports › Streamable HTTP › Receiving Messages", L::Should, "the final response SHOULD terminate the stream"),
            Basis::neg(MCP_2026, "Basic › Transports › Streamable HTTP › Cancellation", L::Must, "closing the stream MUST be treated as cancellation of that request"),
            Basis::neg(PROFILE, "required check cancellation-by-stream-close", L::Profile, "a stream the client closes does not stop the server serving others"),
        ])
        .judged("Serving on after a closed stream is the profile's requirement; without a streaming tool the check is NOT_OBSERVED."),
    CheckDecl::new(P, "malformed-chunk", malformed_chunk, reasons::HTTP_CHUNKED_BODY_ASSEMBLED, reasons::HTTP_MALFORMED_CHUNK_REFUSED)
        .basis(&[
            Basis::pos(RFC9112, "§7.1", L::Must, "a recipient MUST be able to parse and decode the chunked coding"),
            Basis::neg(RFC9112, "§2.2", L::Should, "octets that do not match the message grammar SHOULD get 400 and the close"),
        ])
        .judged("The positive stands on a MUST; the refusal (`400` or the close, no answer) on a SHOULD. The refusal is credited only after a valid twin (the control's request without its defect) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "oversized-event", oversized_event, reasons::HTTP_LARGE_EVENT_DELIVERED, reasons::HTTP_OVERSIZED_BODY_REFUSED)
        .offer(Offer::EchoTool)
        .basis(&[
            Basis::both(PROFILE, "required check oversized-event", L::Profile, "a 256 KiB answer is delivered intact, and a 16 MiB request is bounded"),
            Basis::neg(RFC9110, "§15.5.14", L::May, "413 is the status for content larger than the server will process"),
        ])
        .judged("No specification sets a size: a server that serves the 16 MiB request does what they allow; the control expects `413` or -32600, on the profile's requirement. Without an echo tool the check is NOT_OBSERVED. The refusal is credited only after a valid twin (the control's request without its defect) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "slow-consumer", slow_consumer, reasons::HTTP_SLOW_READ_COMPLETE, reasons::HTTP_OTHERS_SERVED_DURING_STALL)
        .offer(Offer::EchoTool)
        .basis(&[
            Basis::both(PROFILE, "required check slow-consumer", L::Profile, "a slow reader gets its answer intact and does not stall the server"),
            Basis::neg(MCP_2026, "Basic › Statelessness", L::Should, "servers SHOULD be prepared to handle requests of several conversations"),
        ])
        .judged("No MUST: judged on the profile's requirement. Without an echo tool the check is NOT_OBSERVED."),
    CheckDecl::new(P, "backpressure", backpressure, reasons::HTTP_CONCURRENT_ANSWERED, reasons::HTTP_PIPELINE_ORDERED)
        .basis(&[
            Basis::pos(JSONRPC, "§4", L::Must, "every request is answered"),
            Basis::neg(RFC9112, "§9.3.2", L::Must, "responses to pipelined requests MUST be sent in the order the requests came"),
        ])
        .judged("Both observations stand on MUSTs; refusing or dropping the second pipelined request with the close is accepted."),
    CheckDecl::new(P, "proxy-added-headers", proxy_added_headers, reasons::HTTP_PROXY_HEADERS_INERT, reasons::HTTP_FOREIGN_HOST_REFUSED)
        .basis(&[
            Basis::both(PROFILE, "compositionBoundary", L::Profile, "a loopback server answers for its own host only, and proxy headers change nothing"),
            Basis::neg(RFC9110, "§15.5.20", L::May, "421 is the status for a request the server is not configured to answer for"),
            Basis::neg(MCP_2025, SECURITY_2025, L::None, "servers MUST validate `Origin` against DNS rebinding; `Host` is not named (a foreign `Host` is the same attack, but refusing it is not a stated requirement)"),
            Basis::neg(MCP_2026, SECURITY_2026, L::None, "servers MUST validate `Origin` against DNS rebinding; `Host` is not named (a foreign `Host` is the same attack, but refusing it is not a stated requirement)"),
        ])
        .judged("The MCP MUST names `Origin`, not `Host`: refusing a foreign `Host` is the profile's reading. A server that answers any `Host` does what the specifications state (NOT_OBSERVED, `MCP_RES_BEHAVIOUR_LEFT_OPEN`). The refusal is credited only after a valid twin (the control's request without its defect) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "no-unauthorized-redirect", no_unauthorized_redirect, reasons::HTTP_NO_REDIRECT, reasons::HTTP_FOREIGN_ORIGIN_REFUSED)
        .basis(&[
            Basis::pos(PROFILE, "required check no-unauthorized-redirect", L::Profile, "no answer is a redirect"),
            Basis::neg(MCP_2025, SECURITY_2025, L::Must, "an invalid `Origin` MUST get 403 Forbidden"),
            Basis::neg(MCP_2026, SECURITY_2026, L::Must, "an invalid `Origin` MUST get 403 Forbidden"),
        ])
        .judged("The control stands on a MUST at both revisions; the positive (no redirect) is the profile's requirement. The refusal is credited only after a valid twin (the control's request without its defect) was served on the same conversation just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "listener-cleanup", listener_cleanup, reasons::HTTP_LISTENER_LOOPBACK_ONLY, reasons::HTTP_LISTENER_CLOSED_ON_STOP)
        .launch()
        .basis(&[
            Basis::pos(MCP_2025, SECURITY_2025, L::Should, "a local server SHOULD bind only to localhost"),
            Basis::pos(MCP_2026, SECURITY_2026, L::Should, "a local server SHOULD bind only to localhost"),
            Basis::neg(PROFILE, "required check listener-cleanup", L::Profile, "on SIGTERM the server exits and its port stops accepting"),
        ])
        .judged("No MUST: a loopback-only listener is a SHOULD and the stop the profile's requirement. A listener bound beyond loopback is NOT_OBSERVED (`MCP_RES_BEHAVIOUR_LEFT_OPEN`), never FAIL; a listener left open after SIGTERM FAILs on the profile's requirement, whatever the bind. Without a subject mcpres starts the check is NOT_OBSERVED."),
    CheckDecl::new(P, "socket-cleanup", socket_cleanup, reasons::HTTP_SOCKETS_RELEASED, reasons::HTTP_SOCKETS_CLOSED_ON_STOP)
        .launch()
        .basis(&[
            Basis::both(PROFILE, "required check socket-cleanup", L::Profile, "connections the client closed are released, and a stopped server closes the rest"),
        ])
        .judged("No specification requirement: judged on the profile's requirement. Without a subject mcpres starts the check is NOT_OBSERVED."),
];

/// The size of the oversized-event control's request body (16 MiB).
pub const OVERSIZED_BODY_BYTES: usize = 16 << 20;
/// The large answer of oversized-event's positive (256 KiB).
pub const LARGE_ANSWER_BYTES: usize = 256 << 10;
/// The answer a slow consumer reads (1 MiB).
pub const SLOW_ANSWER_BYTES: usize = 1 << 20;
// The answer, its head and framing fit the read limit with room to spare.
const _: () = assert!(SLOW_ANSWER_BYTES * 2 <= crate::produce::drive::http::RESPONSE_LIMIT_BYTES);
/// A connection closed or request refused within this is "at once" (the
/// floor of [`settle`]).
const SETTLE: Duration = Duration::from_millis(100);
/// The floor of [`close_wait`].
const CLOSE_WAIT: Duration = Duration::from_secs(1);
/// How long slow-consumer's stalled reader stays unread (the floor of
/// [`stall`]).
const STALL: Duration = Duration::from_secs(1);

/// A window of this subject's: `WINDOW_FACTOR` x its measured answer
/// time, at least `floor`, at most the answer bound (the floor alone when
/// nothing was measured; the bound when it leaves no safe window: the
/// longest wait the operator allows).
fn paced(ctx: &Ctx, floor: Duration) -> Duration {
    ctx.paced(floor)
}

/// How long a subject is given to act "at once" (close, refuse, settle).
fn settle(ctx: &Ctx) -> Duration {
    paced(ctx, SETTLE)
}

/// How long a subject is given to close a connection or release a socket.
fn close_wait(ctx: &Ctx) -> Duration {
    paced(ctx, CLOSE_WAIT)
}

/// How long slow-consumer's reader stays unread, and another request is
/// given to be answered meanwhile.
fn stall(ctx: &Ctx) -> Duration {
    paced(ctx, STALL)
}

/// A tool that streams progress, and how to call it for `steps` steps
/// `step_ms` apart.
#[derive(Debug, Clone)]
enum Streaming {
    /// `progress {steps, stepDelayMs}` (the reference server and our subjects).
    Progress(String),
    /// `trigger-long-running-operation` / `longRunningOperation {duration (s), steps}`.
    LongRunning(String),
}

impl Streaming {
    fn name(&self) -> &str {
        match self {
            Streaming::Progress(n) | Streaming::LongRunning(n) => n,
        }
    }

    fn args(&self, steps: u32, step_ms: u32) -> Value {
        match self {
            Streaming::Progress(_) => json!({"steps": steps, "stepDelayMs": step_ms}),
            Streaming::LongRunning(_) => {
                json!({"duration": f64::from(steps * step_ms) / 1000.0, "steps": steps})
            }
        }
    }

    /// Arguments of the wrong type.
    fn bad_args(&self) -> Value {
        match self {
            Streaming::Progress(_) => json!({"steps": "three", "stepDelayMs": "soon"}),
            Streaming::LongRunning(_) => json!({"duration": "soon", "steps": "three"}),
        }
    }
}

/// What the subject's `tools/list` offers the checks.
#[derive(Debug, Clone, Default)]
struct Tools {
    streaming: Option<Streaming>,
    /// The echo tool's name and its string argument.
    echo: Option<(String, String)>,
}

impl Tools {
    fn from_list(tools: &[Value]) -> Tools {
        let mut t = Tools::default();
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            match name {
                "progress" => t.streaming = Some(Streaming::Progress(name.into())),
                "trigger-long-running-operation" | "longRunningOperation"
                    if t.streaming.is_none() =>
                {
                    t.streaming = Some(Streaming::LongRunning(name.into()))
                }
                "echo" => {
                    let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
                    let required: Vec<&str> = schema
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    if let [arg] = required.as_slice()
                        && schema.pointer(&format!("/properties/{arg}/type"))
                            == Some(&json!("string"))
                    {
                        t.echo = Some((name.into(), (*arg).into()));
                    }
                }
                _ => {}
            }
        }
        t
    }
}

/// One check's server, with what its tools offer and whether it opened.
struct Bench<'c, 'a> {
    ctx: &'c Ctx<'a>,
    server: Server,
    tools: Tools,
    opened: bool,
    listing: Value,
}

impl<'c, 'a> Bench<'c, 'a> {
    fn start(ctx: &'c Ctx<'a>) -> Self {
        let server = ctx.serve();
        let rec = Rec::new(ctx.web().bearer.as_ref());
        let mut tools = Tools::default();
        let mut opened = false;
        if server.failed.is_none()
            && let Ok(session) = ctx.http_open(&rec, &server)
        {
            opened = true;
            let id = ctx.id();
            let msg = ctx.request(&id, "tools/list", json!({}));
            let r = ctx.post_fresh(&rec, &server, &session, &msg, &Shape::default());
            if let Some(list) = r
                .result_for(&id)
                .and_then(|res| res.get("tools"))
                .and_then(Value::as_array)
            {
                tools = Tools::from_list(list);
            }
        }
        let listing = rec.transcript();
        Bench {
            ctx,
            server,
            tools,
            opened,
            listing,
        }
    }

    /// End the check: stop the server and attach its transcript.
    fn end(self, mut run: CheckRun) -> CheckRun {
        let server = self.ctx.stop(self.server);
        run.server = Some(json!({
            "toolsListing": self.listing,
            "streamingTool": self.tools.streaming.as_ref().map(Streaming::name),
            "echoTool": self.tools.echo.as_ref().map(|(n, _)| n),
            "process": server,
        }));
        run
    }

    /// The check cannot be exercised without `what`, when the subject opened
    /// but does not offer it.
    fn lacks(&self, id: &'static str, missing: bool, what: &str) -> Option<CheckRun> {
        (self.opened && missing).then(|| {
            CheckRun::not_observed(
                id,
                format!("the subject lists no {what}, so {id} could not be exercised"),
            )
        })
    }

    /// One observation on a fresh conversation.
    fn observe(
        &self,
        expected: ProbeOutcome,
        reason: &str,
        body: impl FnOnce(&Rec, &Session) -> ((ProbeOutcome, String), String, Value),
    ) -> Obs {
        observe_on(self.ctx, &self.server, expected, reason, body)
    }

    /// A negative control on a fresh conversation, after its valid twin:
    /// the liveness request, sent as usual on the same conversation just
    /// before the control. A control whose twin was not accepted (an error,
    /// an `isError` result, another status, silence or a close) cannot bind
    /// its refusal to the property: NOT_OBSERVED
    /// (`MCP_RES_VALID_TWIN_REFUSED`, see [`super::check::twin_bound`]). The twin's id is recorded in the
    /// observation (`twin`), so the judge re-reads its answer from the
    /// stored connection bytes.
    fn twinned(
        &self,
        reason: &str,
        control: Option<&Value>,
        body: impl FnOnce(&Rec, &Session) -> ((ProbeOutcome, String), String, Value),
    ) -> Obs {
        self.twinned_by(reason, self.ctx.live_request(), control, body)
    }

    /// [`Bench::twinned`] with the twin `(id, message)` given: the control's
    /// own request without its defect.
    fn twinned_by(
        &self,
        reason: &str,
        (twin_id, twin): (Value, Value),
        control: Option<&Value>,
        body: impl FnOnce(&Rec, &Session) -> ((ProbeOutcome, String), String, Value),
    ) -> Obs {
        let ctx = self.ctx;
        self.observe(Reject, reason, |rec, s| {
            let t = ctx.post_fresh(rec, &self.server, s, &twin, &Shape::default());
            let accepted = t.result_for(&twin_id).is_some() && !is_tool_error(&t, &twin_id);
            let (mut c, detail, mut summary) = body(rec, s);
            c = super::check::twin_bound(c, accepted);
            summary["twin"] = json!({"id": twin_id, "reply": t.label()});
            // The control's own id, so the judge can read from the stored
            // bytes whether the subject served it.
            if let Some(id) = control.filter(|id| !id.is_null()) {
                summary["requestId"] = id.clone();
            }
            (c, format!("valid twin: {}; {detail}", t.label()), summary)
        })
    }

    /// The usual control: the liveness request sent with `shape`, read as
    /// the check's refusal when `refused` holds (after its valid twin, see
    /// [`Bench::twinned`]); and its mutant, the same request with a syntax
    /// defect, sent as usual.
    fn shaped_control(
        &self,
        refused_reason: &str,
        accepted_reason: &str,
        what: &str,
        shape: Shape,
        refused: impl Fn(&Resp) -> bool,
    ) -> (Obs, Obs) {
        let ctx = self.ctx;
        let (id, msg) = ctx.live_request();
        let classify = |r: &Resp| refusal(r, Some(&id), &refused, refused_reason, accepted_reason);
        let n = self.twinned(refused_reason, Some(&id), |rec, s| {
            let r = ctx.post_fresh(rec, &self.server, s, &msg, &shape);
            (classify(&r), format!("{what}: {}", r.label()), r.summary())
        });
        let m = self.defect(refused_reason, &msg, Shape::default(), classify);
        (n, m)
    }

    /// The wrong-reason mutant: `msg` with a syntax defect, POSTed with
    /// `shape`, read to its end, classified by `classify`.
    fn defect(
        &self,
        reason: &str,
        msg: &Value,
        shape: Shape,
        classify: impl Fn(&Resp) -> (ProbeOutcome, String),
    ) -> Obs {
        let ctx = self.ctx;
        let mut seen = None;
        let o = self.observe(Reject, SYNTAX_GUARD, |rec, session| {
            let body = syntax_defect(&serde_json::to_vec(msg).expect("serializes"));
            let shape = Shape {
                body: Some(body),
                ..shape
            };
            let r = ctx.post_fresh(rec, &self.server, session, msg, &shape);
            let c = classify(&r);
            seen = Some(c.clone());
            (c, format!("answer: {}", r.label()), r.summary())
        });
        let observed = seen.unwrap_or((o.observed, o.observed_reason.clone()));
        mutant(reason, observed, o.detail, o.artifact)
    }
}

/// The observation of a conversation the subject did not open: NOT_OBSERVED
/// `MCP_RES_REVISION_NOT_SPOKEN` where it answered the evaluated revision's
/// opening with -32601 (the judge credits that only where the stored bytes
/// show it); another error to the opening is `MCP_RES_OPEN_REFUSED`; else
/// the probe could not be made (`MCP_RES_OPEN_FAILED`).
fn not_opened_http(rec: &Rec, expected: ProbeOutcome, reason: &str, why: String) -> Obs {
    let mut t = rec.transcript();
    t["observation"] = json!({"open": why});
    match why.strip_prefix(super::check::REVISION_NOT_SPOKEN) {
        Some(rest) => obs(
            expected,
            reason,
            (
                ProbeOutcome::NotObserved,
                super::check::REVISION_NOT_SPOKEN.into(),
            ),
            false,
            rest.trim_start_matches(':').trim().to_string(),
            t,
        ),
        None => match why.strip_prefix(super::check::OPEN_REFUSED) {
            Some(rest) => super::check::opening_refused(
                expected,
                reason,
                rest.trim_start_matches(':').trim().to_string(),
                t,
            ),
            None => open_failed(expected, reason, why, t),
        },
    }
}

fn observe_on(
    ctx: &Ctx,
    server: &Server,
    expected: ProbeOutcome,
    reason: &str,
    body: impl FnOnce(&Rec, &Session) -> ((ProbeOutcome, String), String, Value),
) -> Obs {
    let rec = Rec::new(ctx.web().bearer.as_ref());
    if let Some(why) = &server.failed {
        return open_failed(expected, reason, why.clone(), json!({"startError": why}));
    }
    let session = match ctx.http_open(&rec, server) {
        Ok(s) => s,
        Err(why) => return not_opened_http(&rec, expected, reason, why),
    };
    let (c, detail, summary) = body(&rec, &session);
    let mut t = rec.transcript();
    t["observation"] = summary;
    obs(expected, reason, c, true, detail, t)
}

/// [`observe_on`] for a body that needs the server itself (to signal it).
fn observe_mut(
    ctx: &Ctx,
    server: &mut Server,
    expected: ProbeOutcome,
    reason: &str,
    body: impl FnOnce(&Rec, &Session, &mut Server) -> ((ProbeOutcome, String), String, Value),
) -> Obs {
    let rec = Rec::new(ctx.web().bearer.as_ref());
    if let Some(why) = &server.failed {
        return open_failed(expected, reason, why.clone(), json!({"startError": why}));
    }
    let session = match ctx.http_open(&rec, server) {
        Ok(s) => s,
        Err(why) => return not_opened_http(&rec, expected, reason, why),
    };
    let (c, detail, summary) = body(&rec, &session, server);
    let mut t = rec.transcript();
    t["observation"] = summary;
    obs(expected, reason, c, true, detail, t)
}

fn run3(id: &'static str, b: Bench<'_, '_>, p: Obs, n: Obs, m: Obs) -> CheckRun {
    b.end(CheckRun {
        id,
        positive: Some(p),
        negative: Some(n),
        mutant: Some(m),
        not_observed: None,
        server: None,
    })
}

/// How a response to a control reads: a parse error is the syntax guard;
/// `refused` is the check's refusal; a result for `id` is acceptance; any
/// other status or error names itself; nothing is no answer.
fn refusal(
    r: &Resp,
    id: Option<&Value>,
    refused: impl Fn(&Resp) -> bool,
    refused_reason: &str,
    accepted_reason: &str,
) -> (ProbeOutcome, String) {
    if r.parse_error() {
        return (Reject, SYNTAX_GUARD.into());
    }
    if refused(r) {
        return (Reject, refused_reason.into());
    }
    if id.is_some_and(|id| r.result_for(id).is_some()) || (id.is_none() && r.is_2xx()) {
        return (Accept, accepted_reason.into());
    }
    if let Some(code) = r.error_codes().first() {
        return (Reject, reasons::jsonrpc_error(code.unsigned_abs()));
    }
    match r.status {
        Some(s) if !(200..300).contains(&s) => (Reject, reasons::http_status(s)),
        Some(_) => (NoEffect, reasons::HTTP_NO_ANSWER_FRAME.into()),
        None if r.eof => (Reject, reasons::HTTP_CLOSED_WITHOUT_RESPONSE.into()),
        None => (NoEffect, NO_ANSWER.into()),
    }
}

/// The positive reading of an answer: `ok` says whether the property held.
fn answered(r: &Resp, id: &Value, ok: bool, held: &str, wrong: &str) -> (ProbeOutcome, String) {
    match r.answer(id) {
        Some(_) if ok => (Accept, held.into()),
        Some(_) => (Accept, wrong.into()),
        None if r.status == Some(401) => (Reject, reasons::http_status(401)),
        None if r.eof && r.status.is_none() => (Terminate, SUBJECT_EXITED.into()),
        None => (ProbeOutcome::NotObserved, NO_ANSWER.into()),
    }
}

/// The check's refusal as the judge's table says it
/// ([`crate::judge::http::REFUSALS`]): the statuses (at the run's revision)
/// and JSON-RPC error codes that are the refusal.
fn refused_as(id: &'static str, ctx: &Ctx) -> impl Fn(&Resp) -> bool + use<> {
    let refusal = crate::judge::http::refusal_of(id)
        .unwrap_or_else(|| panic!("check {id} has no refusal in the judge's table"));
    let modern = ctx.modern();
    move |r| refusal.refuses(modern, r.status, &r.error_codes(), false)
}

/// A `tools/call` of `name` with `args` (and a progress token).
fn call(ctx: &Ctx, id: &Value, name: &str, args: Value, progress: bool) -> Value {
    let mut params = json!({"name": name, "arguments": args});
    if progress {
        params["_meta"] = json!({"progressToken": format!("mcpres-{id}")});
    }
    ctx.request(id, "tools/call", params)
}

fn is_progress(f: &Value) -> bool {
    f.get("method") == Some(&json!("notifications/progress"))
}

/// The text of a tool result's first content block.
fn result_text(r: &Resp, id: &Value) -> Option<String> {
    r.result_for(id)?
        .pointer("/content/0/text")
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn is_tool_error(r: &Resp, id: &Value) -> bool {
    r.answer(id).is_some_and(|a| {
        a.get("error").is_some() || a.pointer("/result/isError") == Some(&json!(true))
    })
}

// ---------------------------------------------------------------------------

fn authenticated_loopback_http(ctx: &Ctx) -> CheckRun {
    const ID: &str = "authenticated-loopback-http";
    const HELD: &str = reasons::HTTP_AUTHENTICATED;
    const REFUSED: &str = reasons::HTTP_UNAUTHENTICATED_REFUSED;
    const ACCEPTED: &str = reasons::HTTP_UNAUTHENTICATED_ACCEPTED;
    if ctx.web().bearer.is_none() {
        return CheckRun::not_observed(
            ID,
            "the run has no credential (--bearer-env), so authenticated loopback HTTP could not be observed",
        );
    }
    let b = Bench::start(ctx);
    let port = b.server.addr.port();
    let ns = b.server.probe.as_ref().map(Probe::pid);
    let launched = b.server.probe.is_some();
    let p = b.observe(Accept, HELD, |rec, s| {
        let (id, msg) = ctx.live_request();
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        let bound = crate::produce::drive::proc::listening_addresses(ns, port);
        let loopback = bound.iter().all(|a| {
            a.parse::<IpAddr>()
                .is_ok_and(|ip| ip.to_canonical().is_loopback())
        });
        let c = answered(
            &r,
            &id,
            !launched || loopback,
            HELD,
            reasons::HTTP_LISTENER_NOT_LOOPBACK,
        );
        (
            c,
            format!("answer: {}; listening on {bound:?}", r.label()),
            json!({"response": r.summary(), "boundAddresses": bound}),
        )
    });
    let shape = Shape {
        no_auth: true,
        ..Shape::default()
    };
    let (n, m) = b.shaped_control(
        REFUSED,
        ACCEPTED,
        "without a credential",
        shape,
        refused_as(ID, ctx),
    );
    run3(ID, b, p, n, m)
}

fn request_response_binding(ctx: &Ctx) -> CheckRun {
    const ID: &str = "request-response-binding";
    const HELD: &str = reasons::HTTP_RESPONSE_BOUND;
    const REFUSED: &str = reasons::HTTP_UNBINDABLE_ID_REFUSED;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let (id1, m1) = ctx.live_request();
        let (id2, m2) = ctx.live_request();
        let (Ok(mut c1), Ok(mut c2)) = (
            Conn::open(rec, &b.server.addr),
            Conn::open(rec, &b.server.addr),
        ) else {
            return (
                (Terminate, SUBJECT_EXITED.into()),
                "could not connect".into(),
                json!({}),
            );
        };
        c1.write(&ctx.http_request(&b.server, s, &m1, &Shape::default()));
        c2.write(&ctx.http_request(&b.server, s, &m2, &Shape::default()));
        let r1 = c1.response(ctx.answer);
        let r2 = c2.response(ctx.answer);
        let own = |r: &Resp, id: &Value| r.answers().len() == 1 && r.answer(id).is_some();
        let ok = own(&r1, &id1) && own(&r2, &id2);
        let c = match (r1.answer(&id1), r2.answer(&id2)) {
            (Some(_), Some(_)) if ok => (Accept, HELD.to_string()),
            (None, _) | (_, None) if r1.answers().is_empty() && r2.answers().is_empty() => {
                (ProbeOutcome::NotObserved, NO_ANSWER.to_string())
            }
            _ => (Accept, reasons::HTTP_RESPONSE_MISBOUND.to_string()),
        };
        (
            c,
            format!("first: {}; second: {}", r1.label(), r2.label()),
            json!({"first": r1.summary(), "second": r2.summary()}),
        )
    });
    let (_, mut msg) = ctx.live_request();
    msg["id"] = Value::Null;
    let refused = refused_as(ID, ctx);
    let classify = |r: &Resp| {
        refusal(
            r,
            None,
            &refused,
            REFUSED,
            reasons::HTTP_UNBINDABLE_ID_ACCEPTED,
        )
    };
    let n = b.twinned(REFUSED, None, |rec, s| {
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        let c = if r.frames.iter().any(|(_, f)| f.get("result").is_some()) {
            (Accept, reasons::HTTP_UNBINDABLE_ID_ACCEPTED.to_string())
        } else {
            match classify(&r) {
                // No MUST binds the receiver of a null id: any other way of
                // not serving it is left open (never a FAIL).
                (_, reason) if reason != REFUSED => (
                    ProbeOutcome::NotObserved,
                    reasons::BEHAVIOUR_LEFT_OPEN.to_string(),
                ),
                c => c,
            }
        };
        let mut summary = r.summary();
        // The control's id is null: recorded as such, so the judge finds
        // the one connection that sent a request with a null id and reads
        // its answer from the stored bytes.
        summary["requestId"] = Value::Null;
        (c, format!("id null: {}", r.label()), summary)
    });
    let m = b.defect(REFUSED, &msg, Shape::default(), classify);
    run3(ID, b, p, n, m)
}

fn json_versus_sse_response(ctx: &Ctx) -> CheckRun {
    const ID: &str = "json-versus-sse-response";
    const HELD: &str = reasons::HTTP_MEDIA_TYPE_MATCHES_BODY;
    const REFUSED: &str = reasons::HTTP_UNACCEPTABLE_MEDIA_REFUSED;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let (id, msg) = ctx.live_request();
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        let media = r.media.clone().unwrap_or_default();
        let ok = (media == "application/json" || media == "text/event-stream")
            && r.bad_frames == 0
            && r.answer(&id).is_some();
        let c = answered(&r, &id, ok, HELD, reasons::HTTP_MEDIA_TYPE_MISMATCH);
        let c = if r.answer(&id).is_none() && r.bad_frames > 0 {
            (Accept, reasons::HTTP_MEDIA_TYPE_MISMATCH.into())
        } else {
            c
        };
        let mut summary = r.summary();
        // The request's id, so the judge reads its answer from the bytes.
        summary["requestId"] = id.clone();
        (c, format!("answer: {}", r.label()), summary)
    });
    let shape = Shape {
        accept: Some("text/html".into()),
        ..Shape::default()
    };
    let (n, m) = b.shaped_control(
        REFUSED,
        reasons::HTTP_UNACCEPTABLE_MEDIA_ACCEPTED,
        "Accept: text/html",
        shape,
        refused_as(ID, ctx),
    );
    run3(ID, b, p, n, m)
}

fn long_lived_response_stream(ctx: &Ctx) -> CheckRun {
    const ID: &str = "long-lived-response-stream";
    const HELD: &str = reasons::HTTP_STREAM_CARRIED_TO_RESULT;
    const REFUSED: &str = reasons::HTTP_STREAM_ENDED_WITH_ERROR;
    let b = Bench::start(ctx);
    if let Some(run) = b.lacks(ID, b.tools.streaming.is_none(), "streaming tool") {
        return b.end(run);
    }
    let tool = b.tools.streaming.clone();
    let name = tool
        .as_ref()
        .map_or("progress", Streaming::name)
        .to_string();
    let p = b.observe(Accept, HELD, |rec, s| {
        let id = ctx.id();
        let args = tool.as_ref().map_or(json!({}), |t| t.args(3, 150));
        let msg = call(ctx, &id, &name, args, true);
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        let progress = r
            .frames
            .iter()
            .take_while(|(_, f)| f.get("id") != Some(&id))
            .filter(|(_, f)| is_progress(f))
            .count();
        let streamed = r.media.as_deref() == Some("text/event-stream");
        let c = match r.answer(&id) {
            Some(_) if streamed && progress > 0 && r.result_for(&id).is_some() => {
                (Accept, HELD.to_string())
            }
            Some(_) => (Accept, reasons::HTTP_NOT_STREAMED.to_string()),
            None if r.complete || r.eof => (Accept, reasons::HTTP_STREAM_ENDED_EARLY.to_string()),
            None => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
        };
        (
            c,
            format!(
                "answer: {}; progress events before the result: {progress}",
                r.label()
            ),
            r.summary(),
        )
    });
    let id = ctx.id();
    let msg = call(
        ctx,
        &id,
        &name,
        tool.as_ref().map_or(json!({}), Streaming::bad_args),
        true,
    );
    let classify = |r: &Resp| {
        refusal(
            r,
            Some(&id),
            // The table's refusal for this check is a tool error.
            |r| is_tool_error(r, &id),
            REFUSED,
            reasons::HTTP_INVALID_ARGUMENTS_ACCEPTED,
        )
    };
    let twin_id = ctx.id();
    let twin = call(
        ctx,
        &twin_id,
        &name,
        tool.as_ref().map_or(json!({}), |t| t.args(1, 10)),
        true,
    );
    let n = b.twinned_by(REFUSED, (twin_id, twin), Some(&id), |rec, s| {
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        (
            classify(&r),
            format!("wrongly typed arguments: {}", r.label()),
            r.summary(),
        )
    });
    let m = b.defect(REFUSED, &msg, Shape::default(), classify);
    run3(ID, b, p, n, m)
}

fn buffering_detection(ctx: &Ctx) -> CheckRun {
    const ID: &str = "buffering-detection";
    const HELD: &str = reasons::HTTP_EVENTS_FLUSHED_INCREMENTALLY;
    const REFUSED: &str = reasons::HTTP_EVENT_STREAM_NOT_ACCEPTED_REFUSED;
    let b = Bench::start(ctx);
    if let Some(run) = b.lacks(ID, b.tools.streaming.is_none(), "streaming tool") {
        return b.end(run);
    }
    let tool = b.tools.streaming.clone();
    let name = tool
        .as_ref()
        .map_or("progress", Streaming::name)
        .to_string();
    let p = b.observe(Accept, HELD, |rec, s| {
        let id = ctx.id();
        let args = tool.as_ref().map_or(json!({}), |t| t.args(3, 250));
        let msg = call(ctx, &id, &name, args, true);
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        let first = r
            .frames
            .iter()
            .find(|(_, f)| is_progress(f))
            .map(|(t, _)| *t);
        let last = r
            .frames
            .iter()
            .find(|(_, f)| f.get("id") == Some(&id))
            .map(|(t, _)| *t);
        let gap = match (first, last) {
            (Some(a), Some(z)) => z.saturating_sub(a),
            _ => 0,
        };
        let c = answered(
            &r,
            &id,
            first.is_some() && gap >= crate::judge::http::FLUSH_GAP_MS,
            HELD,
            reasons::HTTP_EVENTS_BUFFERED,
        );
        (
            c,
            format!(
                "first progress event at {first:?} ms, the result at {last:?} ms (gap {gap} ms)"
            ),
            r.summary(),
        )
    });
    let shape = Shape {
        accept: Some("application/json".into()),
        ..Shape::default()
    };
    let (n, m) = b.shaped_control(
        REFUSED,
        reasons::HTTP_EVENT_STREAM_NOT_ACCEPTED_ACCEPTED,
        "Accept: application/json",
        shape,
        refused_as(ID, ctx),
    );
    run3(ID, b, p, n, m)
}

fn close_shape() -> Shape {
    Shape {
        extra: vec![("Connection".into(), "close".into())],
        ..Shape::default()
    }
}

fn keepalive(ctx: &Ctx) -> CheckRun {
    const ID: &str = "keepalive";
    const HELD: &str = reasons::HTTP_CONNECTION_KEPT_ALIVE;
    const HONOURED: &str = reasons::HTTP_CLOSE_HONOURED;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let Ok(mut conn) = Conn::open(rec, &b.server.addr) else {
            return (
                (Terminate, SUBJECT_EXITED.into()),
                "could not connect".into(),
                json!({}),
            );
        };
        let (id1, m1) = ctx.live_request();
        let r1 = ctx.post(&mut conn, &b.server, s, &m1, &Shape::default());
        let (id2, m2) = ctx.live_request();
        let r2 = ctx.post(&mut conn, &b.server, s, &m2, &Shape::default());
        let ok = r1.answer(&id1).is_some() && !r1.eof;
        let c = if r1.answer(&id1).is_none() {
            answered(&r1, &id1, false, HELD, "")
        } else {
            answered(&r2, &id2, ok, HELD, reasons::HTTP_CONNECTION_NOT_REUSED)
        };
        let c = if r1.answer(&id1).is_some() && r2.answer(&id2).is_none() {
            (Accept, reasons::HTTP_CONNECTION_NOT_REUSED.to_string())
        } else {
            c
        };
        (
            c,
            format!(
                "first: {}; second on the same connection: {}",
                r1.label(),
                r2.label()
            ),
            json!({"first": r1.summary(), "second": r2.summary()}),
        )
    });
    let (id, msg) = ctx.live_request();
    let n = b.observe(Accept, HONOURED, |rec, s| {
        let Ok(mut conn) = Conn::open(rec, &b.server.addr) else {
            return (
                (Terminate, SUBJECT_EXITED.into()),
                "could not connect".into(),
                json!({}),
            );
        };
        let r = ctx.post(&mut conn, &b.server, s, &msg, &close_shape());
        let closed = r.eof || conn.wait_closed(close_wait(ctx));
        let c = if r.answer(&id).is_some() {
            if closed {
                (Accept, HONOURED.to_string())
            } else {
                (Accept, reasons::HTTP_CLOSE_IGNORED.to_string())
            }
        } else {
            refusal(&r, Some(&id), |_| false, HONOURED, HONOURED)
        };
        (
            c,
            format!(
                "Connection: close: {}; closed by the subject: {closed}",
                r.label()
            ),
            r.summary(),
        )
    });
    let m = b.defect(HONOURED, &msg, close_shape(), |r| {
        refusal(r, Some(&id), |_| false, HONOURED, HONOURED)
    });
    run3(ID, b, p, n, m)
}

fn header_body_separation(ctx: &Ctx) -> CheckRun {
    const ID: &str = "transport-header-message-metadata-separation";
    const HELD: &str = reasons::HTTP_HEADERS_AGREE_WITH_BODY;
    const REFUSED: &str = reasons::HTTP_HEADER_BODY_MISMATCH_REFUSED;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let (id, msg) = ctx.live_request();
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        (
            answered(&r, &id, true, HELD, HELD),
            format!("answer: {}", r.label()),
            r.summary(),
        )
    });
    let (id, msg) = ctx.live_request();
    let classify = |r: &Resp| {
        refusal(
            r,
            Some(&id),
            refused_as(ID, ctx),
            REFUSED,
            reasons::HTTP_HEADER_BODY_MISMATCH_ACCEPTED,
        )
    };
    let n = b.twinned(REFUSED, Some(&id), |rec, s| {
        let (shape, msg, what) = if ctx.modern() {
            (
                Shape {
                    extra: vec![("Mcp-Method".into(), "resources/list".into())],
                    ..Shape::default()
                },
                msg.clone(),
                "Mcp-Method: resources/list on a tools/list body",
            )
        } else {
            let mut m = msg.clone();
            m["params"]["_meta"] = json!({"sessionId": s.id});
            (
                Shape {
                    no_session: true,
                    ..Shape::default()
                },
                m,
                "the session id in _meta only",
            )
        };
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &shape);
        (classify(&r), format!("{what}: {}", r.label()), r.summary())
    });
    let m = b.defect(REFUSED, &msg, Shape::default(), classify);
    run3(ID, b, p, n, m)
}

fn status_code_consistency(ctx: &Ctx) -> CheckRun {
    const ID: &str = "status-code-consistency";
    const HELD: &str = reasons::HTTP_NOTIFICATION_202;
    const REFUSED: &str = reasons::HTTP_METHOD_NOT_ALLOWED_REFUSED;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let note = json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": ctx.params(json!({"requestId": ctx.id(), "reason": "mcpres probe"})),
        });
        let r = ctx.post_fresh(rec, &b.server, s, &note, &Shape::default());
        let c = match r.status {
            Some(202) if r.body.is_empty() => (Accept, HELD.to_string()),
            Some(_) => (Accept, reasons::HTTP_NOTIFICATION_STATUS_WRONG.to_string()),
            None if r.eof => (Terminate, SUBJECT_EXITED.to_string()),
            None => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
        };
        (
            c,
            format!("notification: {} ({} body bytes)", r.label(), r.body.len()),
            r.summary(),
        )
    });
    let shape = Shape {
        method: Some("PUT".into()),
        ..Shape::default()
    };
    let (n, m) = b.shaped_control(
        REFUSED,
        reasons::HTTP_PUT_ACCEPTED,
        "PUT",
        shape,
        refused_as(ID, ctx),
    );
    // RFC 9110 §15.5.6 makes 405 a SHOULD for a method the resource does
    // not support: another client error status refuses PUT as the
    // specifications allow (not observed, never a FAIL).
    let status = n
        .artifact
        .pointer("/observation/status")
        .and_then(Value::as_u64);
    let n = match status {
        Some(s) if (400..500).contains(&s) && s != 405 && n.observed == Reject => Obs {
            observed: ProbeOutcome::NotObserved,
            observed_reason: reasons::BEHAVIOUR_LEFT_OPEN.into(),
            ..n
        },
        _ => n,
    };
    run3(ID, b, p, n, m)
}

fn content_type(ctx: &Ctx) -> CheckRun {
    const ID: &str = "content-type";
    const HELD: &str = reasons::HTTP_CONTENT_TYPE_DECLARED;
    const REFUSED: &str = reasons::HTTP_UNSUPPORTED_CONTENT_TYPE_REFUSED;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let (id, msg) = ctx.live_request();
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        let ok = matches!(
            r.media.as_deref(),
            Some("application/json" | "text/event-stream")
        );
        let mut summary = r.summary();
        // The request's id, so the judge reads its answer's media type from
        // the stored bytes.
        summary["requestId"] = id.clone();
        (
            answered(&r, &id, ok, HELD, reasons::HTTP_CONTENT_TYPE_MISSING),
            format!("answer: {}", r.label()),
            summary,
        )
    });
    let shape = Shape {
        content_type: Some("text/plain".into()),
        ..Shape::default()
    };
    let (n, m) = b.shaped_control(
        REFUSED,
        reasons::HTTP_UNSUPPORTED_CONTENT_TYPE_ACCEPTED,
        "Content-Type: text/plain",
        shape,
        // The specification asks for an HTTP error status "(e.g., 400)"
        // for input the server cannot accept: 415 and 400 are both that
        // refusal (406 and 422 too); an authentication or routing status is
        // not.
        refused_as(ID, ctx),
    );
    run3(ID, b, p, n, m)
}

fn interrupted_body(ctx: &Ctx) -> CheckRun {
    const ID: &str = "interrupted-body";
    const HELD: &str = reasons::HTTP_SPLIT_BODY_ASSEMBLED;
    const REFUSED: &str = reasons::HTTP_INTERRUPTED_BODY_DISCARDED;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let (id, msg) = ctx.live_request();
        let (head, body) = split_head(&ctx.http_request(&b.server, s, &msg, &Shape::default()));
        let Ok(mut conn) = Conn::open(rec, &b.server.addr) else {
            return (
                (Terminate, SUBJECT_EXITED.into()),
                "could not connect".into(),
                json!({}),
            );
        };
        let half = body.len() / 2;
        conn.write(&[head.as_slice(), &body[..half]].concat());
        std::thread::sleep(Duration::from_millis(200));
        conn.write(&body[half..]);
        let r = conn.response(ctx.answer);
        (
            answered(&r, &id, true, HELD, HELD),
            format!("answer: {}", r.label()),
            r.summary(),
        )
    });
    let (id, msg) = ctx.live_request();
    let n = b.twinned(REFUSED, Some(&id), |rec, s| {
        let (head, body) = split_head(&ctx.http_request(&b.server, s, &msg, &Shape::default()));
        let Ok(mut conn) = Conn::open(rec, &b.server.addr) else {
            return (
                (Terminate, SUBJECT_EXITED.into()),
                "could not connect".into(),
                json!({}),
            );
        };
        conn.write(&[head.as_slice(), &body[..body.len() / 2]].concat());
        conn.shutdown_write();
        let r = conn.response(ctx.answer);
        drop(conn);
        let serving = ctx.serving(rec, &b.server, s);
        let c = if r.result_for(&id).is_some() {
            (Accept, reasons::HTTP_INTERRUPTED_BODY_EXECUTED.to_string())
        } else if r.parse_error() {
            (Reject, SYNTAX_GUARD.to_string())
        } else if !serving {
            (Terminate, SUBJECT_EXITED.to_string())
        } else {
            (Reject, REFUSED.to_string())
        };
        (
            c,
            format!(
                "half the body, then the client stopped writing: {}; serving afterwards: {serving}",
                r.label()
            ),
            json!({"response": r.summary(), "servingAfterwards": serving}),
        )
    });
    let m = b.defect(REFUSED, &msg, Shape::default(), |r| {
        if r.parse_error() {
            (Reject, SYNTAX_GUARD.into())
        } else if r.result_for(&id).is_some() {
            (Accept, reasons::HTTP_INTERRUPTED_BODY_EXECUTED.into())
        } else {
            (Reject, REFUSED.into())
        }
    });
    run3(ID, b, p, n, m)
}

/// A call that takes a moment: the streaming tool (two steps, 150 ms
/// apart) when there is one, else the liveness request.
fn moment(ctx: &Ctx, tools: &Tools, id: &Value) -> Value {
    match &tools.streaming {
        Some(t) => call(ctx, id, t.name(), t.args(2, 150), true),
        None => {
            let (_, mut m) = ctx.live_request();
            m["id"] = id.clone();
            m
        }
    }
}

/// The control of early-close and cancellation-by-stream-close: is the
/// subject still serving after the client walked away?
fn absorbed(
    ctx: &Ctx,
    rec: &Rec,
    server: &Server,
    s: &Session,
    reason: &str,
) -> ((ProbeOutcome, String), bool) {
    std::thread::sleep(settle(ctx));
    let serving = ctx.serving(rec, server, s);
    let alive = server
        .probe
        .as_ref()
        .is_none_or(|p| crate::produce::drive::proc::alive(p.pid()));
    let c = if serving {
        (NoEffect, reason.to_string())
    } else if alive {
        (Reject, reasons::HTTP_STOPPED_SERVING.to_string())
    } else {
        (Terminate, SUBJECT_EXITED.to_string())
    };
    (c, serving)
}

fn syntax_or(r: &Resp, otherwise: &str) -> (ProbeOutcome, String) {
    if r.parse_error() {
        (Reject, SYNTAX_GUARD.into())
    } else {
        (NoEffect, otherwise.into())
    }
}

fn early_close(ctx: &Ctx) -> CheckRun {
    const ID: &str = "early-close";
    const HELD: &str = reasons::HTTP_ANSWER_READ_TO_END;
    const ABSORBED: &str = reasons::HTTP_EARLY_CLOSE_ABSORBED;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let id = ctx.id();
        let msg = moment(ctx, &b.tools, &id);
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        (
            answered(&r, &id, r.complete, HELD, reasons::HTTP_ANSWER_INCOMPLETE),
            format!("answer: {}", r.label()),
            r.summary(),
        )
    });
    let id = ctx.id();
    let msg = moment(ctx, &b.tools, &id);
    let n = b.observe(NoEffect, ABSORBED, |rec, s| {
        if let Ok(mut conn) = Conn::open(rec, &b.server.addr) {
            conn.write(&ctx.http_request(&b.server, s, &msg, &Shape::default()));
            conn.close("closed as soon as the request was written");
        }
        let (c, serving) = absorbed(ctx, rec, &b.server, s, ABSORBED);
        (
            c,
            format!("serving after the early close: {serving}"),
            json!({"servingAfterwards": serving}),
        )
    });
    let m = b.defect(ABSORBED, &msg, Shape::default(), |r| syntax_or(r, ABSORBED));
    run3(ID, b, p, n, m)
}

fn timeout(ctx: &Ctx) -> CheckRun {
    const ID: &str = "timeout";
    const HELD: &str = reasons::HTTP_ANSWERED_WITHIN_BOUND;
    const REFUSED: &str = reasons::HTTP_STALLED_REQUEST_TIMED_OUT;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let (id, msg) = ctx.live_request();
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        (
            answered(&r, &id, !r.timed_out, HELD, HELD),
            format!("answer: {}", r.label()),
            r.summary(),
        )
    });
    let idle = ctx.web().idle;
    let n = b.observe(Reject, REFUSED, |rec, _s| {
        let Ok(mut conn) = Conn::open(rec, &b.server.addr) else {
            return ((Terminate, SUBJECT_EXITED.into()), "could not connect".into(), json!({}));
        };
        let started = Instant::now();
        let head = Request::to("POST", &ctx.web().path, &b.server.authority).with_body(Body::Unended);
        conn.write(&head.to_bytes());
        let closed = conn.wait_closed(idle);
        let after = started.elapsed().as_millis() as u64;
        let r = conn.response(Duration::from_millis(10));
        let c = if closed || r.status == Some(408) {
            (Reject, REFUSED.to_string())
        } else {
            // No MUST asks a server to time a stalled request out: held
            // open, it is left open (not observed, never a FAIL).
            (ProbeOutcome::NotObserved, reasons::BEHAVIOUR_LEFT_OPEN.to_string())
        };
        (
            c,
            format!("a stalled request: closed by the subject: {closed} after {after} ms (bound {} ms); {}", idle.as_millis(), r.label()),
            json!({"closedBySubject": closed, "afterMs": after, "boundMs": idle.as_millis() as u64, "response": r.summary()}),
        )
    });
    let (id, msg) = ctx.live_request();
    let m = b.defect(REFUSED, &msg, Shape::default(), |r| {
        refusal(
            r,
            Some(&id),
            |r| r.status == Some(408) || (r.status.is_none() && r.eof),
            REFUSED,
            HELD,
        )
    });
    run3(ID, b, p, n, m)
}

fn retry(ctx: &Ctx) -> CheckRun {
    const ID: &str = "retry";
    const HELD: &str = reasons::HTTP_RETRY_ANSWERED;
    const REFUSED: &str = reasons::HTTP_STALE_RETRY_REFUSED;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let (_, first) = ctx.live_request();
        if let Ok(mut conn) = Conn::open(rec, &b.server.addr) {
            conn.write(&ctx.http_request(&b.server, s, &first, &Shape::default()));
            conn.close("abandoned before its answer");
        }
        let (id, again) = ctx.live_request();
        let r = ctx.post_fresh(rec, &b.server, s, &again, &Shape::default());
        (
            answered(&r, &id, true, HELD, HELD),
            format!("the retry: {}", r.label()),
            r.summary(),
        )
    });
    let (id, msg) = ctx.live_request();
    let classify = |r: &Resp| {
        refusal(
            r,
            Some(&id),
            refused_as(ID, ctx),
            REFUSED,
            reasons::HTTP_STALE_RETRY_ACCEPTED,
        )
    };
    let n = b.twinned(REFUSED, Some(&id), |rec, s| {
        let (shape, msg, what) = if ctx.modern() {
            let mut m = msg.clone();
            let version = super::check::unsupported_version();
            m["params"]["_meta"][crate::model::mcp::META_PROTOCOL_VERSION] = json!(version);
            (
                Shape {
                    extra: vec![("MCP-Protocol-Version".into(), version.into())],
                    ..Shape::default()
                },
                m,
                "a retry naming an unsupported revision",
            )
        } else {
            (
                Shape {
                    extra: vec![(
                        "Mcp-Session-Id".into(),
                        format!(
                            "mcpres-unknown-{}",
                            crate::produce::drive::ident::random_hex(8)
                        ),
                    )],
                    ..Shape::default()
                },
                msg.clone(),
                "a retry naming an unknown session",
            )
        };
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &shape);
        let c = match classify(&r) {
            // No MUST covers a session id the server never issued (the 404
            // is stated for a terminated one): refused otherwise, unserved,
            // it is left open.
            (Reject, reason) if !ctx.modern() && reason != REFUSED && reason != SYNTAX_GUARD => (
                ProbeOutcome::NotObserved,
                reasons::BEHAVIOUR_LEFT_OPEN.to_string(),
            ),
            c => c,
        };
        (c, format!("{what}: {}", r.label()), r.summary())
    });
    let m = b.defect(REFUSED, &msg, Shape::default(), classify);
    run3(ID, b, p, n, m)
}

fn duplicate_delivery(ctx: &Ctx) -> CheckRun {
    const ID: &str = "duplicate-delivery";
    const HELD: &str = reasons::HTTP_ANSWERED_ONCE;
    const NOT_ANSWERED: &str = reasons::HTTP_STRAY_RESPONSE_NOT_ANSWERED;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let (id, msg) = ctx.live_request();
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        let n = r
            .frames
            .iter()
            .filter(|(_, f)| f.get("id") == Some(&id))
            .count();
        (
            answered(&r, &id, n == 1, HELD, reasons::HTTP_ANSWERED_TWICE),
            format!("{n} answer frame(s)"),
            r.summary(),
        )
    });
    let stray_id = ctx.id();
    let stray = json!({"jsonrpc": "2.0", "id": stray_id, "result": {}});
    let classify = |r: &Resp| {
        if r.parse_error() {
            (Reject, SYNTAX_GUARD.to_string())
        } else if r.answer(&stray_id).is_some() {
            (Accept, reasons::HTTP_STRAY_RESPONSE_ANSWERED.to_string())
        } else {
            (NoEffect, NOT_ANSWERED.to_string())
        }
    };
    let n = b.observe(NoEffect, NOT_ANSWERED, |rec, s| {
        let r1 = ctx.post_fresh(rec, &b.server, s, &stray, &Shape::default());
        let r2 = ctx.post_fresh(rec, &b.server, s, &stray, &Shape::default());
        let serving = ctx.serving(rec, &b.server, s);
        let c = match (classify(&r1), classify(&r2)) {
            (a, _) if a.1 != NOT_ANSWERED => a,
            (_, b2) if b2.1 != NOT_ANSWERED => b2,
            _ if !serving => (Terminate, SUBJECT_EXITED.to_string()),
            (a, _) => a,
        };
        (
            c,
            format!(
                "a stray response delivered twice: {} / {}; serving: {serving}",
                r1.label(),
                r2.label()
            ),
            json!({"first": r1.summary(), "second": r2.summary(), "servingAfterwards": serving}),
        )
    });
    let m = b.defect(NOT_ANSWERED, &stray, Shape::default(), classify);
    run3(ID, b, p, n, m)
}

fn cancellation_by_stream_close(ctx: &Ctx) -> CheckRun {
    const ID: &str = "cancellation-by-stream-close";
    const HELD: &str = reasons::HTTP_STREAM_COMPLETED;
    const ABSORBED: &str = reasons::HTTP_STREAM_CLOSE_ABSORBED;
    let b = Bench::start(ctx);
    if let Some(run) = b.lacks(ID, b.tools.streaming.is_none(), "streaming tool") {
        return b.end(run);
    }
    let tool = b.tools.streaming.clone();
    let name = tool
        .as_ref()
        .map_or("progress", Streaming::name)
        .to_string();
    let p = b.observe(Accept, HELD, |rec, s| {
        let id = ctx.id();
        let msg = call(
            ctx,
            &id,
            &name,
            tool.as_ref().map_or(json!({}), |t| t.args(3, 150)),
            true,
        );
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        (
            answered(
                &r,
                &id,
                r.result_for(&id).is_some(),
                HELD,
                reasons::HTTP_STREAM_FAILED,
            ),
            format!("answer: {}", r.label()),
            r.summary(),
        )
    });
    let id = ctx.id();
    let msg = call(
        ctx,
        &id,
        &name,
        tool.as_ref().map_or(json!({}), |t| t.args(5, 200)),
        true,
    );
    let n = b.observe(NoEffect, ABSORBED, |rec, s| {
        let mut first = Resp::default();
        if let Ok(mut conn) = Conn::open(rec, &b.server.addr) {
            conn.write(&ctx.http_request(&b.server, s, &msg, &Shape::default()));
            let how = Reading {
                stop_after_frames: Some(1),
                ..Reading::default()
            };
            first = conn.response_with(ctx.answer, &how);
            conn.close("the stream closed after its first event");
        }
        let (c, serving) = absorbed(ctx, rec, &b.server, s, ABSORBED);
        (
            c,
            format!(
                "closed after {} frame(s); serving afterwards: {serving}",
                first.frames.len()
            ),
            json!({"beforeClose": first.summary(), "servingAfterwards": serving}),
        )
    });
    let m = b.defect(ABSORBED, &msg, Shape::default(), |r| syntax_or(r, ABSORBED));
    run3(ID, b, p, n, m)
}

fn thirds(body: &[u8]) -> Vec<Vec<u8>> {
    let k = body.len().div_ceil(3).max(1);
    body.chunks(k).map(<[u8]>::to_vec).collect()
}

fn malformed_chunk(ctx: &Ctx) -> CheckRun {
    const ID: &str = "malformed-chunk";
    const HELD: &str = reasons::HTTP_CHUNKED_BODY_ASSEMBLED;
    const REFUSED: &str = reasons::HTTP_MALFORMED_CHUNK_REFUSED;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let (id, msg) = ctx.live_request();
        let shape = Shape {
            chunks: Some(thirds(&serde_json::to_vec(&msg).expect("serializes"))),
            ..Shape::default()
        };
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &shape);
        (
            answered(&r, &id, true, HELD, HELD),
            format!("three chunks: {}", r.label()),
            r.summary(),
        )
    });
    let (id, msg) = ctx.live_request();
    let classify = |r: &Resp| {
        if r.parse_error() {
            (Reject, SYNTAX_GUARD.to_string())
        } else if r.result_for(&id).is_some() {
            (Accept, reasons::HTTP_MALFORMED_CHUNK_EXECUTED.to_string())
        } else if r.status == Some(400) || (r.status.is_none() && r.eof) {
            (Reject, REFUSED.to_string())
        } else {
            refusal(
                r,
                Some(&id),
                |_| false,
                REFUSED,
                reasons::HTTP_MALFORMED_CHUNK_EXECUTED,
            )
        }
    };
    let n = b.twinned(REFUSED, Some(&id), |rec, s| {
        // One chunk whose size line is no hex number.
        let body = serde_json::to_vec(&msg).expect("serializes");
        let mut request = ctx.http_post(&b.server, s, &msg, &Shape::default());
        request.body = Body::ChunkedRaw([&b"zz\r\n"[..], &body, b"\r\n0\r\n\r\n"].concat());
        let bad = request.to_bytes();
        let r = match Conn::open(rec, &b.server.addr) {
            Ok(mut c) => {
                c.write(&bad);
                c.response(ctx.answer)
            }
            Err(_) => Resp::default(),
        };
        (
            classify(&r),
            format!("chunk size `zz`: {}", r.label()),
            r.summary(),
        )
    });
    let defective = syntax_defect(&serde_json::to_vec(&msg).expect("serializes"));
    let m = b.defect(
        REFUSED,
        &msg,
        Shape {
            chunks: Some(thirds(&defective)),
            ..Shape::default()
        },
        classify,
    );
    run3(ID, b, p, n, m)
}

fn echo_call(ctx: &Ctx, tools: &Tools, id: &Value, text: &str) -> Value {
    let (name, arg) = tools.echo.clone().unwrap_or(("echo".into(), "text".into()));
    call(ctx, id, &name, json!({ arg: text }), false)
}

/// `n` bytes of printable text that differs from run to run.
fn filler(n: usize) -> String {
    let seed = crate::produce::drive::ident::random_hex(8);
    let mut s = String::with_capacity(n);
    while s.len() < n {
        s.push_str(&seed);
    }
    s.truncate(n);
    s
}

fn oversized_event(ctx: &Ctx) -> CheckRun {
    const ID: &str = "oversized-event";
    const HELD: &str = reasons::HTTP_LARGE_EVENT_DELIVERED;
    const REFUSED: &str = reasons::HTTP_OVERSIZED_BODY_REFUSED;
    let b = Bench::start(ctx);
    if let Some(run) = b.lacks(ID, b.tools.echo.is_none(), "echo tool") {
        return b.end(run);
    }
    let p = b.observe(Accept, HELD, |rec, s| {
        let id = ctx.id();
        let text = filler(LARGE_ANSWER_BYTES);
        let msg = echo_call(ctx, &b.tools, &id, &text);
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        let intact = result_text(&r, &id).is_some_and(|t| t.contains(text.as_str()));
        (
            answered(&r, &id, intact, HELD, reasons::HTTP_LARGE_EVENT_CORRUPTED),
            format!("256 KiB echoed: {}; intact: {intact}", r.label()),
            r.summary(),
        )
    });
    let (id, mut msg) = ctx.live_request();
    msg["params"]["_meta"]["mcpres/padding"] = json!(filler(OVERSIZED_BODY_BYTES));
    let classify = |r: &Resp| {
        refusal(
            r,
            Some(&id),
            refused_as(ID, ctx),
            REFUSED,
            reasons::HTTP_OVERSIZED_BODY_ACCEPTED,
        )
    };
    let n = b.twinned(REFUSED, Some(&id), |rec, s| {
        let wire = ctx.http_request(&b.server, s, &msg, &Shape::default());
        let r = match Conn::open(rec, &b.server.addr) {
            Ok(mut c) => c.write_then_read(&wire, ctx.answer),
            Err(_) => Resp::default(),
        };
        (
            classify(&r),
            format!("a 16 MiB body: {}", r.label()),
            r.summary(),
        )
    });
    let (_, small) = ctx.live_request();
    let m = b.defect(REFUSED, &small, Shape::default(), classify);
    run3(ID, b, p, n, m)
}

fn slow_consumer(ctx: &Ctx) -> CheckRun {
    const ID: &str = "slow-consumer";
    const HELD: &str = reasons::HTTP_SLOW_READ_COMPLETE;
    const SERVED: &str = reasons::HTTP_OTHERS_SERVED_DURING_STALL;
    let b = Bench::start(ctx);
    if let Some(run) = b.lacks(ID, b.tools.echo.is_none(), "echo tool") {
        return b.end(run);
    }
    let p = b.observe(Accept, HELD, |rec, s| {
        let id = ctx.id();
        let text = filler(SLOW_ANSWER_BYTES);
        let msg = echo_call(ctx, &b.tools, &id, &text);
        let r = match Conn::open(rec, &b.server.addr) {
            Ok(mut c) => {
                c.write(&ctx.http_request(&b.server, s, &msg, &Shape::default()));
                let how = Reading {
                    read_size: Some(16 << 10),
                    pause: Some(Duration::from_millis(10)),
                    ..Reading::default()
                };
                c.response_with(ctx.answer * 4, &how)
            }
            Err(_) => Resp::default(),
        };
        let intact = result_text(&r, &id).is_some_and(|t| t.contains(text.as_str()));
        (
            answered(&r, &id, intact, HELD, reasons::HTTP_SLOW_READ_CORRUPTED),
            format!(
                "1 MiB read 16 KiB at a time: {}; intact: {intact}",
                r.label()
            ),
            r.summary(),
        )
    });
    let (id, msg) = ctx.live_request();
    let n = b.observe(Accept, SERVED, |rec, s| {
        let big_id = ctx.id();
        let big = echo_call(ctx, &b.tools, &big_id, &filler(SLOW_ANSWER_BYTES));
        let stalled = Conn::open(rec, &b.server.addr).map(|mut c| {
            c.write(&ctx.http_request(&b.server, s, &big, &Shape::default()));
            c
        });
        std::thread::sleep(settle(ctx));
        let started = Instant::now();
        // Answered while the other answer stays unread, or not at all.
        let r = match Conn::open(rec, &b.server.addr) {
            Ok(mut c) => {
                c.write(&ctx.http_request(&b.server, s, &msg, &Shape::default()));
                c.response(stall(ctx))
            }
            Err(_) => Resp::default(),
        };
        let waited = started.elapsed();
        std::thread::sleep(stall(ctx).saturating_sub(waited));
        drop(stalled);
        let c = if r.answer(&id).is_some() {
            (Accept, SERVED.to_string())
        } else {
            (NoEffect, reasons::HTTP_STALL_BLOCKED_OTHERS.to_string())
        };
        (
            c,
            format!("while 1 MiB stayed unread: {}", r.label()),
            r.summary(),
        )
    });
    let m = b.defect(SERVED, &msg, Shape::default(), |r| {
        refusal(r, Some(&id), |_| false, SERVED, SERVED)
    });
    run3(ID, b, p, n, m)
}

fn backpressure(ctx: &Ctx) -> CheckRun {
    const ID: &str = "backpressure";
    const HELD: &str = reasons::HTTP_CONCURRENT_ANSWERED;
    const ORDERED: &str = reasons::HTTP_PIPELINE_ORDERED;
    let b = Bench::start(ctx);
    let p = b.observe(Accept, HELD, |rec, s| {
        let mut conns = Vec::new();
        for _ in 0..8 {
            let (id, msg) = ctx.live_request();
            if let Ok(mut c) = Conn::open(rec, &b.server.addr) {
                c.write(&ctx.http_request(&b.server, s, &msg, &Shape::default()));
                conns.push((id, c));
            }
        }
        let answered_n = conns
            .iter_mut()
            .map(|(id, c)| c.response(ctx.answer).answer(id).is_some())
            .filter(|ok| *ok)
            .count();
        let c = match answered_n {
            8 => (Accept, HELD.to_string()),
            0 => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
            _ => (Accept, reasons::HTTP_CONCURRENT_LOST.to_string()),
        };
        (
            c,
            format!("{answered_n} of 8 concurrent requests answered"),
            json!({"answered": answered_n}),
        )
    });
    let (id, msg) = ctx.live_request();
    let n = b.observe(Accept, ORDERED, |rec, s| {
        let (id1, m1) = ctx.live_request();
        let (id2, m2) = ctx.live_request();
        let Ok(mut conn) = Conn::open(rec, &b.server.addr) else {
            return (
                (Terminate, SUBJECT_EXITED.into()),
                "could not connect".into(),
                json!({}),
            );
        };
        let mut both = ctx.http_request(&b.server, s, &m1, &Shape::default());
        both.extend_from_slice(&ctx.http_request(&b.server, s, &m2, &Shape::default()));
        conn.write(&both);
        let r1 = conn.response(ctx.answer);
        let r2 = if r1.eof {
            Resp::default()
        } else {
            conn.response(ctx.answer)
        };
        let c =
            if r1.answer(&id2).is_some() || (r1.answer(&id1).is_some() && r1.answers().len() > 1) {
                (Accept, reasons::HTTP_PIPELINE_REORDERED.to_string())
            } else if r1.answer(&id1).is_some()
                && (r2.answer(&id2).is_some() || r2.answers().is_empty())
            {
                (Accept, ORDERED.to_string())
            } else if r1.answer(&id1).is_none() {
                refusal(&r1, Some(&id1), |_| false, ORDERED, ORDERED)
            } else {
                (Accept, reasons::HTTP_PIPELINE_REORDERED.to_string())
            };
        (
            c,
            format!("two pipelined requests: {} then {}", r1.label(), r2.label()),
            json!({"first": r1.summary(), "second": r2.summary()}),
        )
    });
    let m = b.defect(ORDERED, &msg, Shape::default(), |r| {
        refusal(r, Some(&id), |_| false, ORDERED, ORDERED)
    });
    run3(ID, b, p, n, m)
}

fn proxy_added_headers(ctx: &Ctx) -> CheckRun {
    const ID: &str = "proxy-added-headers";
    const HELD: &str = reasons::HTTP_PROXY_HEADERS_INERT;
    const REFUSED: &str = reasons::HTTP_FOREIGN_HOST_REFUSED;
    let b = Bench::start(ctx);
    // A foreign name drawn for this run, with the server's own port: a
    // subject that checks only the port is not taken for one that checks
    // the host.
    let foreign_name = super::check::foreign_host();
    let foreign = format!("{foreign_name}:{}", b.server.addr.port());
    let p = b.observe(Accept, HELD, |rec, s| {
        let (id, msg) = ctx.live_request();
        let shape = Shape {
            extra: vec![
                (
                    "Forwarded".into(),
                    format!("for=192.0.2.1;host=\"{foreign}\";proto=https"),
                ),
                ("X-Forwarded-For".into(), "192.0.2.1".into()),
                ("X-Forwarded-Host".into(), foreign.clone()),
                ("X-Forwarded-Proto".into(), "https".into()),
                ("Via".into(), "1.1 mcpres-probe".into()),
            ],
            ..Shape::default()
        };
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &shape);
        let redirected = r.status.is_some_and(|s| (300..400).contains(&s));
        let c = if redirected {
            (Accept, reasons::HTTP_REDIRECTED.to_string())
        } else if r.answer(&id).is_none() && r.status.is_some_and(|s| s >= 400) {
            (Reject, reasons::HTTP_PROXY_HEADERS_REFUSED.to_string())
        } else {
            answered(&r, &id, true, HELD, HELD)
        };
        (c, format!("with proxy headers: {}", r.label()), r.summary())
    });
    let shape = Shape {
        host: Some(foreign.clone()),
        ..Shape::default()
    };
    let (n, m) = b.shaped_control(
        REFUSED,
        reasons::HTTP_FOREIGN_HOST_ACCEPTED,
        &format!("Host: {foreign}"),
        shape,
        refused_as(ID, ctx),
    );
    // MCP makes validating Origin a MUST, not Host: a foreign Host served
    // is left open (not observed, never a FAIL); refused, it holds.
    let n = if n.observed_reason == reasons::HTTP_FOREIGN_HOST_ACCEPTED {
        Obs {
            observed: ProbeOutcome::NotObserved,
            observed_reason: reasons::BEHAVIOUR_LEFT_OPEN.into(),
            ..n
        }
    } else {
        n
    };
    run3(ID, b, p, n, m)
}

fn no_unauthorized_redirect(ctx: &Ctx) -> CheckRun {
    const ID: &str = "no-unauthorized-redirect";
    const HELD: &str = reasons::HTTP_NO_REDIRECT;
    const REFUSED: &str = reasons::HTTP_FOREIGN_ORIGIN_REFUSED;
    let b = Bench::start(ctx);
    let foreign = format!("{}:{}", super::check::foreign_host(), b.server.addr.port());
    let p = b.observe(Accept, HELD, |rec, s| {
        let (id, msg) = ctx.live_request();
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &Shape::default());
        let redirect =
            r.status.is_some_and(|s| (300..400).contains(&s)) || r.header("location").is_some();
        let c = if redirect {
            (Accept, reasons::HTTP_REDIRECTED.to_string())
        } else {
            answered(&r, &id, true, HELD, HELD)
        };
        (c, format!("answer: {}", r.label()), r.summary())
    });
    let (id, msg) = ctx.live_request();
    let classify = |r: &Resp| {
        if r.status.is_some_and(|s| (300..400).contains(&s)) || r.header("location").is_some() {
            (Accept, reasons::HTTP_REDIRECTED.to_string())
        } else {
            refusal(
                r,
                Some(&id),
                refused_as(ID, ctx),
                REFUSED,
                reasons::HTTP_FOREIGN_ORIGIN_ACCEPTED,
            )
        }
    };
    let n = b.twinned(REFUSED, Some(&id), |rec, s| {
        let shape = Shape {
            extra: vec![("Origin".into(), format!("http://{foreign}"))],
            ..Shape::default()
        };
        let r = ctx.post_fresh(rec, &b.server, s, &msg, &shape);
        (
            classify(&r),
            format!("Origin: http://{foreign}: {}", r.label()),
            r.summary(),
        )
    });
    let m = b.defect(REFUSED, &msg, Shape::default(), classify);
    run3(ID, b, p, n, m)
}

/// A check whose control stops the server: one server per observation.
fn per_observation(
    ctx: &Ctx,
    id: &'static str,
    positive: impl FnOnce(&Server) -> Obs,
    negative: impl FnOnce(&mut Server) -> Obs,
    mutant_obs: impl FnOnce(&mut Server) -> Obs,
) -> CheckRun {
    if ctx.launch.is_none() {
        return CheckRun::not_observed(
            id,
            "the server was not started by mcpres (no command after `--`), so its cleanup could not be observed",
        );
    }
    let mut servers = Vec::new();
    let s = ctx.serve();
    let p = positive(&s);
    servers.push(ctx.stop(s));
    let mut s = ctx.serve();
    let n = negative(&mut s);
    servers.push(ctx.stop(s));
    let mut s = ctx.serve();
    let m = mutant_obs(&mut s);
    servers.push(ctx.stop(s));
    CheckRun {
        id,
        positive: Some(p),
        negative: Some(n),
        mutant: Some(m),
        not_observed: None,
        server: Some(json!({"processes": servers})),
    }
}

/// Send `signal` to the server and wait up to `wait` for it to exit:
/// whether it did (a server mcpres did not start is never signalled).
fn signalled(
    server: &mut Server,
    signal: rustix::process::Signal,
    name: &str,
    wait: Duration,
) -> bool {
    server
        .probe
        .as_mut()
        .is_some_and(|probe| probe.signal_and_wait(signal, name, wait).is_some())
}

/// Is the server still accepting connections after `signal`? Asked with a
/// connection of the observation's own record, after a `listening-probe`
/// event naming the signal: the kernel's answer (`connected`, or
/// `connect-failed`) is stored, so the judge reads it again.
fn accepting_recorded(rec: &Rec, server: &Server, signal: &str) -> bool {
    rec.event(None, "listening-probe", json!({"after": signal}));
    match Conn::open(rec, &server.addr) {
        Ok(c) => {
            c.close("listening probe");
            true
        }
        Err(_) => false,
    }
}

fn listener_cleanup(ctx: &Ctx) -> CheckRun {
    const ID: &str = "listener-cleanup";
    const HELD: &str = reasons::HTTP_LISTENER_LOOPBACK_ONLY;
    const CLOSED: &str = reasons::HTTP_LISTENER_CLOSED_ON_STOP;
    let read = |exited: bool, accepting: bool| {
        if exited && !accepting {
            (Terminate, CLOSED.to_string())
        } else if exited {
            (Terminate, reasons::HTTP_LISTENER_LEFT_OPEN.to_string())
        } else {
            (NoEffect, reasons::HTTP_SIGNAL_IGNORED.to_string())
        }
    };
    per_observation(
        ctx,
        ID,
        |server| {
            observe_on(ctx, server, Accept, HELD, |rec, s| {
                let (id, msg) = ctx.live_request();
                let r = ctx.post_fresh(rec, server, s, &msg, &Shape::default());
                let bound = crate::produce::drive::proc::listening_addresses(
                    server.probe.as_ref().map(Probe::pid),
                    server.addr.port(),
                );
                let loopback = !bound.is_empty()
                    && bound.iter().all(|a| {
                        a.parse::<IpAddr>()
                            .is_ok_and(|ip| ip.to_canonical().is_loopback())
                    });
                // Binding beyond loopback is against a SHOULD, not a MUST:
                // the property is left open, never failed.
                let read =
                    match answered(&r, &id, loopback, HELD, reasons::HTTP_LISTENER_NOT_LOOPBACK) {
                        (Accept, reason) if reason == reasons::HTTP_LISTENER_NOT_LOOPBACK => (
                            ProbeOutcome::NotObserved,
                            reasons::BEHAVIOUR_LEFT_OPEN.to_string(),
                        ),
                        read => read,
                    };
                let said = if loopback || bound.is_empty() {
                    String::new()
                } else {
                    " (beyond loopback: a SHOULD of the specification, left open)".to_string()
                };
                (
                    read,
                    format!("listening on {bound:?}{said}"),
                    json!({"boundAddresses": bound}),
                )
            })
        },
        |server| {
            let addr = server.addr.clone();
            observe_mut(ctx, server, Terminate, CLOSED, |rec, _, server| {
                // "Ignored" is judged on the start-up bound, not a 2 s
                // grace: a subject slowed by a loaded machine is not one
                // that ignores SIGTERM.
                let exited = signalled(
                    server,
                    rustix::process::Signal::TERM,
                    "SIGTERM",
                    ctx.startup.max(super::probe::TERM_GRACE),
                );
                let accepting = accepting_recorded(rec, server, "SIGTERM");
                (
                    read(exited, accepting),
                    format!("SIGTERM: exited {exited}; {addr} still accepting: {accepting}"),
                    json!({"exited": exited, "accepting": accepting}),
                )
            })
        },
        |server| {
            let addr = server.addr.clone();
            let mut seen = None;
            let o = observe_mut(ctx, server, Reject, SYNTAX_GUARD, |rec, _, server| {
                let exited = signalled(
                    server,
                    rustix::process::Signal::CONT,
                    "SIGCONT",
                    paced(ctx, Duration::from_millis(300)),
                );
                let accepting = accepting_recorded(rec, server, "SIGCONT");
                seen = Some(read(exited, accepting));
                (
                    read(exited, accepting),
                    format!("SIGCONT: exited {exited}; {addr} still accepting: {accepting}"),
                    json!({"exited": exited, "accepting": accepting}),
                )
            });
            let observed = seen.unwrap_or((o.observed, o.observed_reason.clone()));
            mutant(CLOSED, observed, o.detail, o.artifact)
        },
    )
}

fn socket_cleanup(ctx: &Ctx) -> CheckRun {
    const ID: &str = "socket-cleanup";
    const HELD: &str = reasons::HTTP_SOCKETS_RELEASED;
    const CLOSED: &str = reasons::HTTP_SOCKETS_CLOSED_ON_STOP;
    let stopped = |exited: bool, closed: bool| {
        if exited && closed {
            (Terminate, CLOSED.to_string())
        } else if exited {
            (Terminate, reasons::HTTP_SOCKET_LEFT_OPEN.to_string())
        } else {
            (NoEffect, reasons::HTTP_SIGNAL_IGNORED.to_string())
        }
    };
    let with_idle = |server: &mut Server,
                     signal: rustix::process::Signal,
                     name: &str,
                     wait: Duration| {
        let addr = server.addr.clone();
        let mut seen = None;
        let o = observe_mut(ctx, server, Terminate, CLOSED, |rec, _, server| {
            let Ok(mut idle) = Conn::open(rec, addr) else {
                return (
                    (Terminate, SUBJECT_EXITED.into()),
                    "could not connect".into(),
                    json!({}),
                );
            };
            std::thread::sleep(Duration::from_millis(50));
            let exited = signalled(server, signal, name, wait);
            let closed = idle.wait_closed(Duration::from_millis(500));
            let c = stopped(exited, closed);
            seen = Some(c.clone());
            (
                c,
                format!(
                    "{name} with an idle connection open: exited {exited}; the connection closed: {closed}"
                ),
                json!({"exited": exited, "idleConnectionClosed": closed}),
            )
        });
        (o, seen)
    };
    per_observation(
        ctx,
        ID,
        |server| {
            observe_on(ctx, server, Accept, HELD, |rec, s| {
                let mut ports = Vec::new();
                let mut ok = 0;
                for _ in 0..5 {
                    let (id, msg) = ctx.live_request();
                    if let Ok(mut c) = Conn::open(rec, &server.addr) {
                        ports.push(c.local_port());
                        if ctx
                            .post(&mut c, server, s, &msg, &Shape::default())
                            .answer(&id)
                            .is_some()
                        {
                            ok += 1;
                        }
                        c.close("done");
                    }
                }
                let pid = server.probe.as_ref().map_or(0, Probe::pid);
                let until = Instant::now() + close_wait(ctx);
                let held = loop {
                    let held: Vec<(u16, u16, String)> = sockets_of(&process_tree(pid))
                        .into_iter()
                        .filter(|(_, remote, state)| ports.contains(remote) && state != "0A")
                        .collect();
                    if held.is_empty() || Instant::now() >= until {
                        break held;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                };
                let c = if ok < 5 {
                    (ProbeOutcome::NotObserved, NO_ANSWER.to_string())
                } else if held.is_empty() {
                    (Accept, HELD.to_string())
                } else {
                    (Accept, reasons::HTTP_SOCKETS_HELD.to_string())
                };
                (
                    c,
                    format!(
                        "{ok} of 5 answered; sockets still held for them after 1 s: {}",
                        held.len()
                    ),
                    json!({"answered": ok, "held": held.iter().map(|(l, r, st)| json!({"localPort": l, "remotePort": r, "state": st})).collect::<Vec<_>>()}),
                )
            })
        },
        |server| {
            with_idle(
                server,
                rustix::process::Signal::TERM,
                "SIGTERM",
                super::probe::TERM_GRACE,
            )
            .0
        },
        |server| {
            let (o, seen) = with_idle(
                server,
                rustix::process::Signal::CONT,
                "SIGCONT",
                paced(ctx, Duration::from_millis(300)),
            );
            let observed = seen.unwrap_or((o.observed, o.observed_reason.clone()));
            mutant(CLOSED, observed, o.detail, o.artifact)
        },
    )
}
