//! The seventeen checks of `mcp-res/stdio-transport/v1`, each a positive
//! observation, a reason-bound negative control and a wrong-reason mutant,
//! every one on a fresh subject process (spec/profiles.md, "What each check
//! observes").

use std::time::{Duration, Instant};

use rustix::process::Signal;
use serde_json::{Value, json};

use super::check::{
    CheckRun, Ctx, ENDED_BY_RUNNER, Evidence, NO_ANSWER, Obs, SUBJECT_EXITED, SYNTAX_GUARD,
    answered_as, json_line, mutant, not_opened, obs, open_failed, stdout_is_protocol_only,
    syntax_defect,
};
use super::decl::{
    Basis, CheckDecl, JSONRPC, Level as L, MCP_2025, MCP_2026, Offer, PROFILE, RFC8259,
};
use super::probe::{Probe, Reply, TERM_GRACE, split_lines, trim_cr};
use crate::diag::reasons;
use crate::model::mcp::META_CLIENT_INFO;
use crate::model::vocab::ProbeOutcome::{self, Accept, NoEffect, Reject, Terminate};

/// The profile these checks belong to.
const P: &str = "mcp-res/stdio-transport/v1";
/// The stdio binding of each revision.
const STDIO_2025: &str = "Basic › Transports › stdio";
const STDIO_2026: &str = "Basic › Transports › stdio";
const SHUTDOWN_2025: &str = "Basic › Lifecycle › Shutdown › stdio";
const SHUTDOWN_2026: &str = "Basic › Transports › stdio › Shutdown";

/// The checks, in manifest order, as declarations (spec/profiles.md, "What each
/// check stands on").
pub const CHECKS: &[CheckDecl] = &[
    CheckDecl::new(P, "released-message-framing", released_message_framing, reasons::FRAMING_NEWLINE_DELIMITED, reasons::FRAMING_EMBEDDED_NEWLINE_REFUSED)
        .basis(&[
            Basis::both(MCP_2025, STDIO_2025, L::Must, "messages are delimited by newlines and MUST NOT contain embedded newlines"),
            Basis::both(MCP_2026, STDIO_2026, L::Must, "messages are delimited by newlines and MUST NOT contain embedded newlines"),
        ])
        .judged("A server that reads one message per line (a parse error for, or silence on, the lines of a pretty-printed request) passes; one that joins lines into one message does not frame by newlines. The refusal is credited only after a valid twin (the liveness request) was answered on the same process just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "stdout-protocol-purity", stdout_protocol_purity, reasons::STDOUT_PROTOCOL_ONLY, reasons::STDOUT_ERROR_AS_PROTOCOL)
        .basis(&[
            Basis::both(MCP_2025, STDIO_2025, L::Must, "the server MUST NOT write anything to stdout that is not a valid MCP message"),
            Basis::both(MCP_2026, STDIO_2026, L::Must, "the server MUST NOT write anything to stdout that is not a valid MCP message"),
            Basis::neg(JSONRPC, "§4, §5", L::Must, "a request MUST be answered with a Response; an unknown method's is an error (-32601)"),
        ])
        .judged("Every server that keeps stdout to JSON-RPC passes; any JSON-RPC error for the unknown method is the refusal. The refusal is credited only after a valid twin (the liveness request) was answered on the same process just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "stderr-diagnostics", stderr_diagnostics, reasons::STDERR_DIAGNOSTICS_ONLY, reasons::STDERR_PARSE_FAILURE_ON_PROTOCOL_CHANNEL)
        .basis(&[
            Basis::both(PROFILE, "required check stderr-diagnostics", L::Profile, "stderr carries diagnostics, never protocol messages"),
            Basis::both(MCP_2025, STDIO_2025, L::May, "the server MAY write UTF-8 strings to stderr for logging"),
            Basis::both(MCP_2026, STDIO_2026, L::May, "the server MAY write UTF-8 strings to stderr for logging"),
            Basis::neg(JSONRPC, "§5.1", L::May, "invalid JSON is answered with a parse error (-32700)"),
        ])
        .judged("MCP only allows logging on stderr; a JSON-RPC message there is judged on the profile's requirement. A line that is not JSON may be met with a -32700 on stdout, a diagnostic on stderr or nothing; a server that meets it with no diagnostic at all leaves the check NOT_OBSERVED."),
    CheckDecl::new(P, "shell-free-argument-boundaries", shell_free_argument_boundaries, reasons::ARGV_PASSED_VERBATIM, reasons::LAUNCH_NOT_SHELL_SPLIT)
        .basis(&[
            Basis::both(PROFILE, "required check shell-free-argument-boundaries", L::Profile, "the subject is launched without a shell and gets its arguments verbatim"),
            Basis::both(MCP_2025, STDIO_2025, L::None, "the client launches the server as a subprocess (no rule about shells)"),
            Basis::both(MCP_2026, STDIO_2026, L::None, "the client launches the server as a subprocess (no rule about shells)"),
        ])
        .judged("MCP says nothing about shells: judged on the profile's requirement only. A subject command that is a shell wrapper which stays between the launcher and the server fails."),
    CheckDecl::new(P, "executable-identity", executable_identity, reasons::EXECUTABLE_IDENTIFIED, reasons::EXECUTABLE_DIGEST_CHANGED)
        .basis(&[
            Basis::both(PROFILE, "required check executable-identity", L::Profile, "the process on the pipes is the program the evaluation names by digest"),
        ])
        .judged("No MCP requirement: judged on the profile's requirement. A launcher script that starts another program than it names fails."),
    CheckDecl::new(P, "startup-timeout", startup_timeout, reasons::STARTUP_WITHIN_BOUND, reasons::STARTUP_TIMEOUT_ENFORCED)
        .basis(&[
            Basis::both(PROFILE, "required check startup-timeout", L::Profile, "the subject answers within the startup bound, and a subject that does not is ended by SIGTERM"),
            Basis::pos(MCP_2025, "Basic › Lifecycle › Timeouts", L::Should, "implementations SHOULD establish timeouts for sent requests (a rule for the client)"),
            Basis::neg(MCP_2025, SHUTDOWN_2025, L::Should, "the client SHOULD send SIGTERM when the server does not exit; the server's exit is not stated"),
            Basis::neg(MCP_2026, SHUTDOWN_2026, L::Should, "the client SHOULD terminate the process when it does not exit; the server's exit is not stated"),
        ])
        .judged("MCP sets no startup bound and no duty to exit on SIGTERM (the signal's default action ends a process): judged on the profile's requirement, with the bound given by the operator."),
    CheckDecl::new(P, "silent-process", silent_process, reasons::SUBJECT_ANSWERS, reasons::SILENT_UNTIL_ASKED)
        .basis(&[
            Basis::pos(JSONRPC, "§4", L::Must, "the server MUST reply to a request (not a notification) with a Response"),
            Basis::neg(MCP_2025, "Basic › Lifecycle › Initialization", L::Must, "the initialization phase MUST be the first interaction between client and server"),
            Basis::neg(MCP_2026, STDIO_2026, L::None, "the server writes responses and notifications that relate to requests; no rule forbids an unprompted notification"),
        ])
        .judged("At 2026-07-28 no MUST forbids an unprompted notification: a server that writes one before any request fails the control, on the profile's reading."),
    CheckDecl::new(P, "malformed-output", malformed_output, reasons::OUTPUT_WELL_FORMED, reasons::INVALID_UTF8_REFUSED)
        .basis(&[
            Basis::pos(MCP_2025, "Basic › Transports", L::Must, "JSON-RPC messages MUST be UTF-8 encoded; stdout carries only valid MCP messages"),
            Basis::pos(MCP_2026, STDIO_2026, L::Must, "the server MUST NOT write anything to stdout that is not a valid MCP message"),
            Basis::neg(RFC8259, "§8.1, §9", L::May, "JSON exchanged between systems MUST be UTF-8 (a rule for the sender); a parser MAY accept non-JSON forms"),
        ])
        .judged("Refusing a request with an invalid UTF-8 byte is not required (RFC 8259 §9 lets a parser accept non-JSON forms): a server that decodes leniently and answers does what the specifications allow, and the check is NOT_OBSERVED (`MCP_RES_BEHAVIOUR_LEFT_OPEN`), never FAIL. The refusal is credited only after a valid twin (the liveness request) was answered on the same process just before; a subject that refuses that too is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`)."),
    CheckDecl::new(P, "partial-line", partial_line, reasons::PARTIAL_LINE_REASSEMBLED, reasons::PARTIAL_LINE_NOT_DISPATCHED)
        .basis(&[
            Basis::both(MCP_2025, STDIO_2025, L::Must, "messages are delimited by newlines: a message ends at its LF"),
            Basis::both(MCP_2026, STDIO_2026, L::Must, "messages are delimited by newlines: a message ends at its LF"),
        ])
        .judged("A server that dispatches a complete JSON object before its LF reads by another framing than the newline; one that waits for the LF passes."),
    CheckDecl::new(P, "oversized-line", oversized_line, reasons::LARGE_LINE_HANDLED, reasons::OVERSIZED_LINE_BOUNDED)
        .basis(&[
            Basis::both(PROFILE, "required check oversized-line", L::Profile, "a 256 KiB request is served and a 16 MiB line is bounded (refused while serving, or a clean exit)"),
            Basis::both(MCP_2025, STDIO_2025, L::None, "no size limit for a message"),
            Basis::both(MCP_2026, STDIO_2026, L::None, "no size limit for a message"),
        ])
        .judged("MCP sets no size limit: a server that serves the 16 MiB line does what the specification allows (NOT_OBSERVED, `MCP_RES_BEHAVIOUR_LEFT_OPEN`). A death on it (a status other than 0, a signal) is never a bounded refusal: it fails, on the profile's requirement."),
    CheckDecl::new(P, "process-exit", process_exit, reasons::EXIT_ON_STDIN_CLOSE, reasons::EXIT_ON_SIGTERM)
        .basis(&[
            Basis::pos(MCP_2026, SHUTDOWN_2026, L::Should, "servers SHOULD exit promptly when their standard input is closed"),
            Basis::pos(MCP_2025, SHUTDOWN_2025, L::Should, "the client SHOULD close stdin and wait for the server to exit (the server's exit is implied, not required)"),
            Basis::neg(MCP_2025, SHUTDOWN_2025, L::Should, "the client SHOULD send SIGTERM when the server does not exit"),
            Basis::neg(MCP_2026, SHUTDOWN_2026, L::Should, "the client SHOULD terminate a server that does not exit (SIGTERM, then SIGKILL)"),
            Basis::both(PROFILE, "required check process-exit", L::Profile, "the subject exits on stdin EOF within 5 s and on SIGTERM within 2 s"),
        ])
        .judged("No MUST: exiting on EOF is a SHOULD (2026-07-28) and SIGTERM a client's step. Judged on the profile's requirement with fixed bounds."),
    CheckDecl::new(P, "child-tree-cleanup", child_tree_cleanup, reasons::CHILD_TREE_EMPTY_AFTER_EXIT, reasons::CHILD_TREE_TERMINATED)
        .alone()
        .offer(Offer::ChildProcess)
        .basis(&[
            Basis::both(PROFILE, "required check child-tree-cleanup", L::Profile, "nothing of the subject's process tree is left after it ends"),
        ])
        .judged("No MCP requirement: judged on the profile's requirement. A subject that starts no child leaves the check NOT_OBSERVED."),
    CheckDecl::new(P, "backpressure", backpressure, reasons::BACKPRESSURE_NO_LOSS, reasons::BLOCKED_WRITER_TERMINATES)
        .basis(&[
            Basis::pos(JSONRPC, "§4, §5", L::Must, "every request is answered with a Response carrying its id"),
            Basis::neg(PROFILE, "required check backpressure", L::Profile, "a subject blocked on a full stdout still ends on SIGTERM"),
        ])
        .judged("The positive stands on JSON-RPC's MUST (no request lost while stdout is slow); the control on the profile's requirement only."),
    CheckDecl::new(P, "concurrent-requests", concurrent_requests, reasons::CONCURRENT_ANSWERED_BY_ID, reasons::BATCH_REFUSED)
        .basis(&[
            Basis::pos(JSONRPC, "§5", L::Must, "the response's id MUST be the request's"),
            Basis::neg(MCP_2025, STDIO_2025, L::None, "messages are individual requests, notifications or responses (no batches; a rule for what the client writes)"),
            Basis::neg(MCP_2026, STDIO_2026, L::None, "each message is a single request, notification or response (a rule for what the client writes)"),
            Basis::neg(JSONRPC, "§6", L::None, "JSON-RPC itself defines batches"),
        ])
        .judged("MCP does not say how a server meets a batch the client must not send: a server that answers it does what the specification leaves open; the control expects a refusal, on the profile's reading."),
    CheckDecl::new(P, "interruption", interruption, reasons::INTERRUPT_HONOURED, reasons::INTERRUPT_WITH_INFLIGHT_CLEAN)
        .basis(&[
            Basis::both(PROFILE, "required check interruption", L::Profile, "SIGINT ends the subject within 2 s, idle or with requests in flight, with no torn line"),
        ])
        .judged("MCP says nothing of SIGINT (the stdio shutdown is stdin close, SIGTERM, SIGKILL): a server that ignores it is NOT_OBSERVED (`MCP_RES_BEHAVIOUR_LEFT_OPEN`); one that ends with a torn last line fails, on the profile's requirement. SIGINT goes out when the subject is idle."),
    CheckDecl::new(P, "no-process-as-conversation", no_process_as_conversation, reasons::CONVERSATION_BOUND_TO_MESSAGES, reasons::RESTART_IS_NEW_CONVERSATION)
        .basis(&[
            Basis::pos(JSONRPC, "§4", L::Must, "every request is answered"),
            Basis::neg(MCP_2025, "Basic › Lifecycle › Initialization", L::None, "initialization MUST be the first interaction (a rule for the client; the server's answer to a request before it is not stated)"),
            Basis::neg(MCP_2026, "Basic › _meta (per-request protocol fields)", L::Must, "a request missing a required `_meta` field is malformed and the server MUST reject it (-32602)"),
        ])
        .judged("At 2025-11-25 the server's answer to a request before `initialize` is not stated: a server that serves it does what the specification leaves open (NOT_OBSERVED, `MCP_RES_BEHAVIOUR_LEFT_OPEN`). At 2026-07-28 the refusal is a MUST."),
    CheckDecl::new(P, "discovery-versus-legacy-initialization", discovery_versus_legacy_initialization, reasons::ERA_OPENING_ANSWERED, reasons::NOTIFICATION_NOT_ANSWERED)
        .basis(&[
            Basis::pos(MCP_2025, "Basic › Lifecycle › Initialization", L::Must, "the server MUST respond to `initialize` with its capabilities and information"),
            Basis::pos(MCP_2026, "Basic › Versioning › Protocol Version Negotiation", L::Must, "servers MUST implement `server/discover`"),
            Basis::neg(JSONRPC, "§4.1", L::Must, "the server MUST NOT reply to a notification"),
            Basis::neg(MCP_2025, "Basic › Messages › Notifications", L::Must, "the receiver MUST NOT send a response to a notification"),
            Basis::neg(MCP_2026, "Basic › Messages › Notifications", L::Must, "the receiver MUST NOT send a response to a notification"),
        ])
        .judged("Both observations stand on MUSTs."),
];

/// The size of the line the oversized-line control sends (16 MiB): four
/// times the reference server's default bound.
pub const OVERSIZED_LINE_BYTES: usize = 16 << 20;
/// Requests an opened subject serves before it is signalled at an idle
/// moment (process-exit's late SIGTERM).
const SERVED_BEFORE_SIGNAL: usize = 3;
/// A large line every subject must still take (256 KiB).
pub const LARGE_LINE_BYTES: usize = 256 << 10;

/// Run `body` on a fresh, opened subject; an unopened subject is observed as
/// not reached.
pub(super) fn opened(
    ctx: &Ctx,
    expected: ProbeOutcome,
    reason: &str,
    body: impl FnOnce(&mut Probe, &Value) -> ((ProbeOutcome, String), String, Value),
) -> Obs {
    let mut probe = match ctx.start() {
        Ok(p) => p,
        Err(why) => return open_failed(expected, reason, why.clone(), json!({"startError": why})),
    };
    let open = ctx.open(&mut probe);
    let Reply::Result(message) = &open else {
        let artifact = ctx.finish(probe, json!({"open": open.label()}));
        return not_opened(ctx, expected, reason, &open, artifact);
    };
    let (observed, detail, summary) = body(&mut probe, message);
    let artifact = ctx.finish(probe, summary);
    obs(expected, reason, observed, true, detail, artifact)
}

/// A negative control made of one request line (with its id, if any) sent
/// after opening (or, without `open_first`, as the first line of a fresh
/// process), read by `classify`; and its mutant, the same line with a syntax
/// defect, read by the same classifier.
pub(super) fn line_control(
    ctx: &Ctx,
    open_first: bool,
    expected: ProbeOutcome,
    reason: &str,
    make: impl Fn(&Ctx) -> (Option<Value>, Vec<u8>),
    classify: impl Fn(&Evidence, &Value) -> (ProbeOutcome, String),
) -> (Obs, Obs) {
    twinned_line_control(
        ctx, open_first, false, true, expected, reason, make, classify,
    )
}

/// [`line_control`] of a control that a subject may meet with silence: its
/// mutant is [`answered_mutant`]'s request for a method no server has (a
/// syntax-defective line would be met with the same silence by a subject
/// that drops every bad line, and decide nothing).
pub(super) fn line_control_answered(
    ctx: &Ctx,
    open_first: bool,
    expected: ProbeOutcome,
    reason: &str,
    make: impl Fn(&Ctx) -> (Option<Value>, Vec<u8>),
    classify: impl Fn(&Evidence, &Value) -> (ProbeOutcome, String),
) -> (Obs, Obs) {
    twinned_line_control(
        ctx, open_first, false, false, expected, reason, make, classify,
    )
}

/// [`line_control`]; with `twin` (after opening only), a valid request (the
/// liveness request) is sent first on the same process and must be
/// accepted before the control's refusal is credited: a subject that
/// refuses everything gets NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`),
/// never the property's reason. The twin's id is recorded in the
/// observation (`twin`), so the judge re-reads its answer from the stored
/// stdout.
#[allow(clippy::too_many_arguments)]
fn twinned_line_control(
    ctx: &Ctx,
    open_first: bool,
    twin: bool,
    syntax_mutant: bool,
    expected: ProbeOutcome,
    reason: &str,
    make: impl Fn(&Ctx) -> (Option<Value>, Vec<u8>),
    classify: impl Fn(&Evidence, &Value) -> (ProbeOutcome, String),
) -> (Obs, Obs) {
    let twin = twin && open_first;
    let run = |defect: bool| -> (Obs, Option<(ProbeOutcome, String)>) {
        let (id, line) = make(ctx);
        let line = if defect { syntax_defect(&line) } else { line };
        let mut observed = None;
        let mut body = |probe: &mut Probe, open: &Value| {
            let twin_seen = twin.then(|| {
                let (twin_id, twin_line) = ctx.live_line();
                probe.send(twin_line);
                let reply = probe.reply(&twin_id, ctx.answer);
                (twin_id, reply)
            });
            // The first line a fresh process reads is answered once it has
            // started: judged against the start-up bound.
            let bound = if open_first { ctx.answer } else { ctx.startup };
            let ev = ctx.exchange_within(probe, line.clone(), id.as_ref(), bound);
            let mut c = classify(&ev, open);
            let mut summary = ev.summary();
            let mut detail = String::new();
            if let Some((twin_id, reply)) = &twin_seen {
                let accepted = matches!(reply, Reply::Result(m) if m.pointer("/result/isError") != Some(&json!(true)));
                c = super::check::twin_bound(c, accepted);
                summary["twin"] = json!({"id": twin_id, "reply": reply.label()});
                detail = format!("valid twin: {}; ", reply.label());
            }
            observed = Some(c.clone());
            detail.push_str(&format!(
                "answer: {}; still serving: {}",
                ev.reply.label(),
                ev.alive
            ));
            if let Some(by) = &ev.ended_by {
                detail.push_str(&format!(" (ended by mcpres: {by})"));
            }
            (c, detail, summary)
        };
        let o = if open_first {
            opened(ctx, expected, reason, body)
        } else {
            match ctx.start() {
                Err(why) => open_failed(expected, reason, why.clone(), json!({"startError": why})),
                Ok(mut probe) => {
                    let (c, detail, summary) = body(&mut probe, &Value::Null);
                    let artifact = ctx.finish(probe, summary);
                    obs(expected, reason, c, true, detail, artifact)
                }
            }
        };
        (o, observed)
    };
    let (negative, _) = run(false);
    if !syntax_mutant {
        let fresh = (!open_first).then_some(ctx.startup);
        return (
            negative,
            answered_mutant(ctx, reason, fresh, unknown_method_line),
        );
    }
    let (m, observed) = run(true);
    let observed = observed.unwrap_or((ProbeOutcome::NotObserved, m.observed_reason.clone()));
    let mutant = mutant(reason, observed, m.detail.clone(), m.artifact);
    (negative, mutant)
}

/// [`line_control`] after opening, read as a refusal, credited only after
/// a same-process valid twin was accepted.
pub(super) fn refused_line(
    ctx: &Ctx,
    refused: &str,
    accepted: &str,
    silence_refuses: bool,
    make: impl Fn(&Ctx) -> (Option<Value>, Vec<u8>),
) -> (Obs, Obs) {
    twinned_line_control(ctx, true, true, true, Reject, refused, make, |ev, _| {
        ev.refusal(refused, accepted, silence_refuses)
    })
}

/// [`refused_line`] whose mutant is [`answered_mutant`]'s (see
/// [`line_control_answered`]).
pub(super) fn refused_line_answered(
    ctx: &Ctx,
    refused: &str,
    accepted: &str,
    silence_refuses: bool,
    make: impl Fn(&Ctx) -> (Option<Value>, Vec<u8>),
) -> (Obs, Obs) {
    twinned_line_control(ctx, true, true, false, Reject, refused, make, |ev, _| {
        ev.refusal(refused, accepted, silence_refuses)
    })
}

/// The non-syntax wrong-reason mutant of a control that a subject may meet
/// with silence: one well-formed request (`request` gives its id and line)
/// that the subject MUST answer (JSON-RPC 2.0 §4: every request gets a
/// response; a method it does not have gets -32601), sent after opening, or
/// with `fresh` as the first line of a fresh process (watched for `fresh`).
/// Answered (a result or an error) it meets
/// `MCP_RES_MUTANT_REQUEST_ANSWERED` and is killed: the subject does not
/// meet everything unusual with silence, so its silence to the control is
/// bound to the control's defect. Left unanswered by a subject still
/// serving it meets the control's reason (it survives); a close is the
/// subject's exit. The request's id is recorded (`requestId`), so the judge
/// reads the answer from the stored stdout.
pub(super) fn answered_mutant(
    ctx: &Ctx,
    negative_reason: &str,
    fresh: Option<Duration>,
    request: impl Fn(&Ctx) -> (Value, Vec<u8>),
) -> Obs {
    const ANSWERED: &str = reasons::MUTANT_REQUEST_ANSWERED;
    let ask = |probe: &mut Probe, limit: Duration| {
        let (id, line) = request(ctx);
        probe.send(line);
        let reply = probe.reply(&id, limit);
        let c = match &reply {
            Reply::Result(_) => (Accept, ANSWERED.to_string()),
            Reply::Error(..) => (Reject, ANSWERED.to_string()),
            Reply::Silent if probe.try_exit().is_none() => {
                (ProbeOutcome::NoEffect, negative_reason.to_string())
            }
            _ => (Terminate, SUBJECT_EXITED.to_string()),
        };
        let detail = format!("the mutant's request {id}: {}", reply.label());
        // Its reply is kept apart from `reply` (the answer the control is
        // compared on): the reason already says whether it was answered.
        (
            c,
            detail,
            json!({"requestId": id, "mutantReply": reply.label()}),
        )
    };
    let m = match fresh {
        None => opened(ctx, Reject, ANSWERED, |probe, _open| ask(probe, ctx.answer)),
        Some(window) => match ctx.start() {
            Err(why) => open_failed(Reject, ANSWERED, why.clone(), json!({"startError": why})),
            Ok(mut probe) => {
                let (c, detail, summary) = ask(&mut probe, window);
                let artifact = ctx.finish(probe, summary);
                obs(Reject, ANSWERED, c, true, detail, artifact)
            }
        },
    };
    super::check::mutant_expecting(
        ANSWERED,
        negative_reason,
        (m.observed, m.observed_reason),
        m.detail,
        m.artifact,
    )
}

/// A request for a method no server has (its name drawn per run), under the
/// evaluated revision.
pub(super) fn unknown_method_line(ctx: &Ctx) -> (Value, Vec<u8>) {
    ctx.line(&super::check::unknown_method(), json!({}))
}

pub(super) fn check(id: &'static str, positive: Obs, pair: (Obs, Obs)) -> CheckRun {
    CheckRun {
        id,
        positive: Some(positive),
        negative: Some(pair.0),
        mutant: Some(pair.1),
        not_observed: None,
        server: None,
    }
}

/// The answer to `tools/list` (or the opening) as one LF-terminated line
/// holding one JSON object.
fn released_message_framing(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::FRAMING_NEWLINE_DELIMITED;
    const REFUSED: &str = reasons::FRAMING_EMBEDDED_NEWLINE_REFUSED;
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let (id, line) = ctx.line("tools/list", json!({}));
        probe.send(line);
        let reply = probe.reply(&id, ctx.answer);
        let (lines, tail) = probe.stdout_lines();
        let single = lines
            .iter()
            .all(|l| serde_json::from_slice::<Value>(trim_cr(l)).is_ok_and(|v| v.is_object()));
        let c = answered_as(&reply, single && !tail, HELD, reasons::FRAMING_VIOLATED);
        (
            c,
            format!(
                "{} stdout line(s), each one JSON object: {single}",
                lines.len()
            ),
            json!({"reply": reply.label(), "linesAreObjects": single}),
        )
    });
    // The control: the same request pretty-printed over several lines.
    let pretty = |ctx: &Ctx| {
        let id = ctx.id();
        let mut text = serde_json::to_vec_pretty(&ctx.request(&id, "tools/list", json!({})))
            .expect("serializes");
        text.push(b'\n');
        (Some(id), text)
    };
    let pair = refused_line_answered(
        ctx,
        REFUSED,
        reasons::FRAMING_MULTILINE_ACCEPTED,
        true,
        pretty,
    );
    // Every line of a pretty-printed request is a syntax error by itself, so
    // the subject's parse errors are its framing refusal here: re-read them.
    let reread = |o: Obs| -> Obs {
        if o.observed_reason == SYNTAX_GUARD {
            Obs {
                observed_reason: REFUSED.into(),
                ..o
            }
        } else {
            o
        }
    };
    let negative = reread(pair.0);
    // The mutant: a one-line request for a method no server has, which
    // must be answered: a subject that meets the pretty-printed request with
    // silence while answering it has bound that silence to the framing.
    check("released-message-framing", positive, (negative, pair.1))
}

/// How many requests stdout-protocol-purity's positive sends after opening.
const PURITY_REQUESTS: usize = 6;

fn stdout_protocol_purity(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::STDOUT_PROTOCOL_ONLY;
    const REFUSED: &str = reasons::STDOUT_ERROR_AS_PROTOCOL;
    // Several requests, one after the other: a subject that starts writing
    // other bytes on stdout only once it has served a few is judged on them
    // too (and the judge reads the whole transcript, to the process's end).
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let mut reply = Reply::Silent;
        for _ in 0..PURITY_REQUESTS {
            let (id, line) = ctx.line("tools/list", json!({}));
            probe.send(line);
            reply = probe.reply(&id, ctx.answer);
            if !matches!(reply, Reply::Result(_)) {
                break;
            }
        }
        let (pure, bad) = stdout_is_protocol_only(probe);
        let c = answered_as(&reply, pure, HELD, reasons::STDOUT_POLLUTED);
        (
            c,
            format!("{bad} stdout line(s) are not JSON-RPC"),
            json!({"reply": reply.label(), "nonProtocolLines": bad}),
        )
    });
    let method = format!(
        "mcpres/probe-{}",
        crate::produce::drive::ident::random_hex(8)
    );
    let pair = refused_line(
        ctx,
        REFUSED,
        reasons::UNKNOWN_METHOD_ACCEPTED,
        false,
        |ctx| {
            let (id, line) = ctx.line(&method, json!({}));
            (Some(id), line)
        },
    );
    // An error that arrives only beside non-protocol bytes on stdout is not
    // an error on the protocol channel.
    let negative = polluted_is_wrong(pair.0);
    check("stdout-protocol-purity", positive, (negative, pair.1))
}

fn polluted_is_wrong(o: Obs) -> Obs {
    let bad = o.artifact["observation"]["nonJsonStdoutLines"]
        .as_u64()
        .unwrap_or(0);
    if bad > 0 && o.observed_reason == reasons::STDOUT_ERROR_AS_PROTOCOL {
        Obs {
            observed_reason: reasons::STDOUT_POLLUTED.into(),
            ..o
        }
    } else {
        o
    }
}

fn stderr_has_protocol(stderr: &[u8]) -> bool {
    crate::judge::stdio::carries_protocol(stderr)
}

/// A line met with no diagnostic anywhere.
const LINE_IGNORED: &str = reasons::LINE_IGNORED;

fn stderr_diagnostics(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::STDERR_DIAGNOSTICS_ONLY;
    const REFUSED: &str = reasons::STDERR_PARSE_FAILURE_ON_PROTOCOL_CHANNEL;
    let still = match ctx.settle_window() {
        Ok(w) => w,
        Err(why) => {
            return CheckRun::too_slow(
                ctx,
                "stderr-diagnostics",
                (Accept, HELD),
                (Reject, REFUSED),
                &why,
            );
        }
    };
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let (id, line) = ctx.line("tools/list", json!({}));
        probe.send(line);
        let reply = probe.reply(&id, ctx.answer);
        let on_stderr = stderr_has_protocol(&probe.stderr_bytes());
        let c = match (&reply, on_stderr) {
            (Reply::Result(_) | Reply::Error(..), false) => (Accept, HELD.to_string()),
            (Reply::Result(_) | Reply::Error(..), true) => {
                (Accept, reasons::STDERR_CARRIES_PROTOCOL.into())
            }
            (Reply::Silent, _) => (ProbeOutcome::NotObserved, NO_ANSWER.into()),
            (Reply::Closed, _) => (Terminate, SUBJECT_EXITED.into()),
        };
        (
            c,
            format!(
                "stderr: {} bytes, JSON-RPC on stderr: {on_stderr}",
                probe.stderr_bytes().len()
            ),
            json!({"reply": reply.label(), "protocolOnStderr": on_stderr}),
        )
    });
    // The control: a line that is not JSON. The subject must stay on the
    // protocol channel (a -32700 on stdout, or silence) and keep serving.
    let run = |line: Vec<u8>| {
        opened(ctx, Reject, REFUSED, |probe, _open| {
            // What the subject wrote on stderr before the line (a start-up
            // banner the reader may still be taking in on a loaded machine)
            // is not a diagnostic of the line: wait until stderr has been
            // still for a while (bounded by the answer bound) before counting.
            let stderr_before = stderr_settled(probe, still, ctx.answer);
            let ev = ctx.exchange(probe, line, None);
            // stdout and stderr are read apart: the liveness answer on
            // stdout may be taken in before a diagnostic the subject wrote
            // earlier on stderr. Read stderr once it is still again.
            stderr_settled(probe, ctx.paced(Duration::from_millis(100)), ctx.answer);
            let stderr = probe.stderr_bytes();
            let on_stderr = stderr_has_protocol(&stderr);
            let diagnosed = stderr.len() > stderr_before;
            let c = if !ev.alive {
                ev.gone()
            } else if on_stderr {
                (Reject, reasons::STDERR_CARRIES_PROTOCOL.into())
            } else if ev.non_json_lines > 0 {
                (Reject, reasons::STDOUT_POLLUTED.into())
            } else if ev.parse_errors > 0 || diagnosed {
                // A -32700 on stdout, or a diagnostic on stderr only: the
                // protocol channel stayed clean.
                (Reject, REFUSED.into())
            } else {
                (NoEffect, LINE_IGNORED.into())
            };
            let mut s = ev.summary();
            s["protocolOnStderr"] = json!(on_stderr);
            s["stderrGrewBy"] = json!(stderr.len() - stderr_before.min(stderr.len()));
            (
                c,
                format!(
                    "parse errors on stdout: {}; stderr grew by {} byte(s); JSON-RPC on stderr: {on_stderr}",
                    ev.parse_errors,
                    stderr.len().saturating_sub(stderr_before)
                ),
                s,
            )
        })
    };
    let negative = run(b"this line is not JSON\n".to_vec());
    if negative.observed_reason == LINE_IGNORED {
        return CheckRun::not_observed(
            "stderr-diagnostics",
            "the subject met a line that is not JSON with no diagnostic at all (no -32700 on stdout, nothing on stderr), so where its diagnostics go could not be observed",
        );
    }
    // The mutant: a blank line, which a subject may skip before any parsing.
    let m = run(b"\n".to_vec());
    let mutant = m.into_mutant(REFUSED);
    check("stderr-diagnostics", positive, (negative, mutant))
}

/// The length of the subject's stderr once it has not grown for `still`
/// (the subject's settle window), or when `limit` has passed.
fn stderr_settled(probe: &Probe, still: Duration, limit: Duration) -> usize {
    let until = Instant::now() + limit;
    let mut len = probe.stderr_bytes().len();
    let mut still_since = Instant::now();
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
        let now = probe.stderr_bytes().len();
        if now != len {
            len = now;
            still_since = Instant::now();
        } else if still_since.elapsed() >= still {
            break;
        }
    }
    len
}

/// Wait until the subject's output (stdout and stderr) has been still for
/// `still` (the subject is idle), at most `limit` beyond it.
fn idle(probe: &Probe, still: Duration, limit: Duration) {
    probe.note("waiting for the subject to be idle");
    let size = || probe.stdout_bytes().len() + probe.stderr_bytes().len();
    let until = Instant::now() + still + limit;
    let mut len = size();
    let mut still_since = Instant::now();
    while Instant::now() < until && still_since.elapsed() < still {
        std::thread::sleep(Duration::from_millis(20));
        let now = size();
        if now != len {
            len = now;
            still_since = Instant::now();
        }
    }
    probe.note("idle");
}

use crate::judge::stdio::SHELLS;

fn shell_free_argument_boundaries(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::ARGV_PASSED_VERBATIM;
    const REFUSED: &str = reasons::LAUNCH_NOT_SHELL_SPLIT;
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let exe = crate::produce::drive::proc::exe(probe.pid());
        let argv = crate::produce::drive::proc::cmdline(probe.pid());
        let shell = exe
            .as_ref()
            .and_then(|e| e.file_name())
            .and_then(|n| n.to_str())
            .is_some_and(|n| SHELLS.contains(&n));
        let tail_ok = argv.ends_with(&ctx.stdio_launch().args);
        let c = if shell {
            (Accept, reasons::SHELL_INTERMEDIARY.to_string())
        } else if !tail_ok {
            (Accept, reasons::ARGV_CHANGED.to_string())
        } else {
            (Accept, HELD.to_string())
        };
        (
            c,
            format!(
                "the process on our pipes runs {} with {} argument(s)",
                exe.as_ref().map_or("?".into(), |e| e.display().to_string()),
                argv.len()
            ),
            json!({"exe": exe.map(|e| e.display().to_string()), "argv": argv}),
        )
    });
    // The control: the launcher is handed "PROGRAM ARG" as one program
    // string; without a shell that names no file and must be refused.
    let attempt = |program: std::path::PathBuf| {
        let started = Instant::now();
        let r = Probe::start_program(ctx.stdio_launch(), &program);
        let (c, detail) = match r {
            Ok(p) => {
                let (_ended, _a) = p.finish();
                (
                    (Accept, reasons::LAUNCH_SHELL_SPLIT.to_string()),
                    "the launcher started it".to_string(),
                )
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let reason = if program.to_string_lossy().contains(' ') {
                    REFUSED
                } else {
                    reasons::PROGRAM_ABSENT
                };
                ((Reject, reason.to_string()), format!("refused: {e}"))
            }
            Err(e) => (
                (Reject, reasons::LAUNCH_FAILED.to_string()),
                format!("refused: {e}"),
            ),
        };
        let artifact = json!({"launcher": {"program": program.display().to_string(), "args": ctx.stdio_launch().args, "elapsedMs": started.elapsed().as_millis() as u64}, "observation": {"result": detail}});
        (c, detail, artifact)
    };
    let split = std::path::PathBuf::from(format!(
        "{} {}",
        ctx.stdio_launch().program.display(),
        ctx.stdio_launch()
            .args
            .first()
            .map_or("--help", String::as_str)
    ));
    let (c, detail, artifact) = attempt(split);
    let negative = obs(Reject, REFUSED, c, true, detail, artifact);
    // The mutant: a program that does not exist at all: refused for its
    // absence, which says nothing about shell splitting.
    let absent = std::env::temp_dir().join(format!(
        "mcpres-absent-{}",
        crate::produce::drive::ident::random_hex(8)
    ));
    let (c, detail, artifact) = attempt(absent);
    let m = mutant(REFUSED, c, detail, artifact);
    check("shell-free-argument-boundaries", positive, (negative, m))
}

/// The interpreter a `#!` line names (its first word), resolved.
fn shebang_interpreter(program: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut head = [0u8; 256];
    let n = {
        use std::io::Read;
        std::fs::File::open(program).ok()?.read(&mut head).ok()?
    };
    let text = std::str::from_utf8(head[..n].strip_prefix(b"#!")?).ok()?;
    let first = text.lines().next()?.split_whitespace().next()?;
    std::fs::canonicalize(first).ok()
}

fn executable_identity(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::EXECUTABLE_IDENTIFIED;
    const REFUSED: &str = reasons::EXECUTABLE_DIGEST_CHANGED;
    let program = std::fs::canonicalize(&ctx.stdio_launch().program)
        .unwrap_or(ctx.stdio_launch().program.clone());
    let digest = file_sha256(&program);
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let exe = crate::produce::drive::proc::exe(probe.pid())
            .and_then(|e| std::fs::canonicalize(e).ok());
        let interpreter = shebang_interpreter(&program);
        let c = if exe.as_ref() == Some(&program) || (exe.is_some() && exe == interpreter) {
            (Accept, HELD.to_string())
        } else {
            (Accept, reasons::EXECUTABLE_MISMATCH.to_string())
        };
        (
            c,
            format!(
                "program {} (sha256 {}), running executable {}",
                program.display(),
                digest.as_deref().unwrap_or("?"),
                exe.as_ref().map_or("?".into(), |e| e.display().to_string())
            ),
            json!({"program": program.display().to_string(), "programSha256": digest, "exe": exe.map(|e| e.display().to_string()), "shebangInterpreter": interpreter.map(|e| e.display().to_string())}),
        )
    });
    // The control: the identity recorded before the run is checked against
    // the program's bytes with one byte changed (read from the file, changed
    // in memory), which must be told apart. The mutant reads the same bytes
    // unchanged: nothing to refuse.
    let compare = |change: bool| {
        let after = file_sha256_changed(&program, change);
        let c = match (&digest, &after) {
            (Some(a), Some(b)) if a != b => (Reject, REFUSED.to_string()),
            (Some(_), Some(_)) => (NoEffect, reasons::EXECUTABLE_UNCHANGED.to_string()),
            _ => (
                ProbeOutcome::NotObserved,
                reasons::EXECUTABLE_UNREADABLE.to_string(),
            ),
        };
        let detail = format!(
            "recorded {}, bytes now {}",
            digest.as_deref().unwrap_or("?"),
            after.as_deref().unwrap_or("?")
        );
        let artifact = json!({"identity": {"recordedSha256": digest, "lastByteChanged": change, "sha256": after}, "observation": {"result": c.1}});
        (c, detail, artifact)
    };
    let (c, detail, artifact) = compare(true);
    let negative = obs(Reject, REFUSED, c, true, detail, artifact);
    let (c, detail, artifact) = compare(false);
    let m = mutant(REFUSED, c, detail, artifact);
    check("executable-identity", positive, (negative, m))
}

fn startup_timeout(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::STARTUP_WITHIN_BOUND;
    const REFUSED: &str = reasons::STARTUP_TIMEOUT_ENFORCED;
    // The control's window: long enough for this subject to answer a first
    // line (its measured start-up, scaled), within the start-up bound.
    let window = match ctx.fresh_window() {
        Ok(w) => w,
        Err(why) => {
            return CheckRun::too_slow(
                ctx,
                "startup-timeout",
                (Accept, HELD),
                (Terminate, REFUSED),
                &why,
            );
        }
    };
    let positive = match ctx.start() {
        Err(why) => open_failed(Accept, HELD, why.clone(), json!({"startError": why})),
        Ok(mut probe) => {
            let open = ctx.open(&mut probe);
            let ms = probe.elapsed_ms();
            let c = match open {
                Reply::Result(_) => (Accept, HELD.to_string()),
                Reply::Silent => (Terminate, reasons::STARTUP_TIMEOUT.to_string()),
                // An answer in time, but to an opening of a revision the
                // subject does not speak: its start-up says nothing more.
                Reply::Error(-32601, _) if ctx.modern() => (
                    ProbeOutcome::NotObserved,
                    reasons::REVISION_NOT_SPOKEN.to_string(),
                ),
                Reply::Error(..) => (Reject, reasons::OPEN_REFUSED.to_string()),
                Reply::Closed => (Terminate, SUBJECT_EXITED.to_string()),
            };
            let bound = ctx.startup.as_millis() as u64;
            let artifact = ctx.finish(
                probe,
                json!({"open": open.label(), "firstAnswerMs": ms, "boundMs": bound}),
            );
            obs(
                Accept,
                HELD,
                c,
                true,
                format!("first answer after {ms} ms (bound {bound} ms)"),
                artifact,
            )
        }
    };
    // The control: nothing is sent; when the bound passes the runner gives
    // up on the start and sends SIGTERM; the subject must be gone within the
    // grace. The mutant sends a broken line first: an answer to it means the
    // subject was not silent, so no timeout is enforced.
    let run = |first: Option<Vec<u8>>| match ctx.start() {
        Err(why) => open_failed(Terminate, REFUSED, why.clone(), json!({"startError": why})),
        Ok(mut probe) => {
            if let Some(line) = first {
                probe.send(line);
            }
            let answered = probe.reply(&Value::Null, window);
            let c = if !matches!(answered, Reply::Silent) {
                (
                    Reject,
                    if matches!(answered, Reply::Closed) {
                        SUBJECT_EXITED.to_string()
                    } else {
                        SYNTAX_GUARD.to_string()
                    },
                )
            } else {
                match probe.signal_and_wait(
                    Signal::TERM,
                    "SIGTERM (startup bound passed)",
                    TERM_GRACE,
                ) {
                    Some(_) => (Terminate, REFUSED.to_string()),
                    None => (Terminate, reasons::TERMINATION_NEEDED_SIGKILL.to_string()),
                }
            };
            let detail = format!(
                "within {} ms: {}; then {}",
                window.as_millis(),
                answered.label(),
                c.1
            );
            let artifact = ctx.finish(
                probe,
                json!({"beforeBound": answered.label(), "windowMs": window.as_millis() as u64, "result": c.1}),
            );
            obs(Terminate, REFUSED, c, true, detail, artifact)
        }
    };
    let negative = run(None);
    // The mutant: a request the subject must answer, as a fresh process's
    // first line: an answer means the subject was not silent by nature.
    let m = answered_mutant(ctx, REFUSED, Some(window), unknown_method_line);
    check("startup-timeout", positive, (negative, m))
}

fn silent_process(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::SUBJECT_ANSWERS;
    const QUIET: &str = reasons::SILENT_UNTIL_ASKED;
    // Watched for as long as this subject needs to answer a first line.
    let window = match ctx.fresh_window() {
        Ok(w) => w,
        Err(why) => {
            return CheckRun::too_slow(
                ctx,
                "silent-process",
                (Accept, HELD),
                (NoEffect, QUIET),
                &why,
            );
        }
    };
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let (id, line) = ctx.line("tools/list", json!({}));
        probe.send(line);
        let reply = probe.reply(&id, ctx.answer);
        let c = match reply {
            Reply::Result(_) | Reply::Error(..) => (Accept, HELD.to_string()),
            Reply::Silent => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
            Reply::Closed => (Terminate, SUBJECT_EXITED.to_string()),
        };
        (
            c,
            format!("tools/list: {}", reply.label()),
            json!({"reply": reply.label()}),
        )
    });
    // The control: nothing is sent for the window; stdout must stay empty.
    let run = |first: Option<Vec<u8>>| match ctx.start() {
        Err(why) => open_failed(NoEffect, QUIET, why.clone(), json!({"startError": why})),
        Ok(mut probe) => {
            if let Some(line) = first {
                probe.send(line);
            }
            let _ = probe.reply(&json!("mcpres-never-used"), window);
            let out = probe.stdout_bytes();
            let (lines, _) = split_lines(&out);
            let parse_errors = lines
                .iter()
                .filter(|l| {
                    serde_json::from_slice::<Value>(trim_cr(l))
                        .ok()
                        .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64))
                        == Some(-32700)
                })
                .count();
            let c = if out.is_empty() {
                (NoEffect, QUIET.to_string())
            } else if parse_errors > 0 {
                (Reject, SYNTAX_GUARD.to_string())
            } else {
                (Accept, reasons::UNSOLICITED_OUTPUT.to_string())
            };
            let detail = format!(
                "{} stdout byte(s) in {} ms before any request",
                out.len(),
                window.as_millis()
            );
            let artifact = ctx.finish(
                probe,
                json!({"stdoutBytesUnasked": out.len(), "windowMs": window.as_millis() as u64}),
            );
            obs(NoEffect, QUIET, c, true, detail, artifact)
        }
    };
    let negative = run(None);
    let m = answered_mutant(ctx, QUIET, Some(window), unknown_method_line);
    check("silent-process", positive, (negative, m))
}

fn malformed_output(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::OUTPUT_WELL_FORMED;
    const REFUSED: &str = reasons::INVALID_UTF8_REFUSED;
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let (id, line) = ctx.line("tools/list", json!({}));
        probe.send(line);
        let reply = probe.reply(&id, ctx.answer);
        let out = probe.stdout_bytes();
        let utf8 = std::str::from_utf8(&out).is_ok();
        let (pure, bad) = stdout_is_protocol_only(probe);
        let c = answered_as(&reply, utf8 && pure, HELD, reasons::OUTPUT_MALFORMED);
        (
            c,
            format!("stdout valid UTF-8: {utf8}; lines that are not JSON-RPC: {bad}"),
            json!({"reply": reply.label(), "utf8": utf8, "nonProtocolLines": bad}),
        )
    });
    // The control: a request whose string holds a raw 0xFF byte (not
    // UTF-8). Refusing it is the subject's UTF-8 guard, so its parse error
    // counts for this property.
    let with_ff = |ctx: &Ctx, inside: bool| {
        let (id, line) = ctx.line("tools/list", json!({"_meta": {"mcpres/probe": "ZZ"}}));
        let text = String::from_utf8(line).expect("JSON is UTF-8");
        let mut bytes = text.replacen("ZZ", "Z\u{1}", 1).into_bytes();
        let pos = bytes.iter().position(|&b| b == 1).expect("marker");
        bytes[pos] = 0xFF;
        if !inside {
            // Outside any string: a syntax error whatever the decoding.
            let end = bytes.len() - 1;
            bytes.insert(end, 0xFF);
            bytes.insert(end, b' ');
            bytes[pos] = b'Z';
        }
        (Some(id), bytes)
    };
    let negative = refused_line(ctx, REFUSED, reasons::INVALID_UTF8_ACCEPTED, true, |ctx| {
        with_ff(ctx, true)
    })
    .0;
    let negative = if negative.observed_reason == SYNTAX_GUARD {
        Obs {
            observed_reason: REFUSED.into(),
            ..negative
        }
    } else if negative.observed_reason == reasons::INVALID_UTF8_ACCEPTED {
        // Serving it (its bytes replaced) is left open: MCP's UTF-8 MUST
        // is on the sender; none asks the receiver to refuse.
        Obs {
            observed: ProbeOutcome::NotObserved,
            observed_reason: reasons::BEHAVIOUR_LEFT_OPEN.into(),
            ..negative
        }
    } else {
        negative
    };
    let m = refused_line(ctx, REFUSED, reasons::INVALID_UTF8_ACCEPTED, true, |ctx| {
        with_ff(ctx, false)
    })
    .0;
    let m = m.into_mutant(REFUSED);
    check("malformed-output", positive, (negative, m))
}

fn partial_line(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::PARTIAL_LINE_REASSEMBLED;
    const WAITED: &str = reasons::PARTIAL_LINE_NOT_DISPATCHED;
    // Long enough for this subject to answer a complete line.
    let window = match ctx.settle_window() {
        Ok(w) => w,
        Err(why) => {
            return CheckRun::too_slow(
                ctx,
                "partial-line",
                (Accept, HELD),
                (NoEffect, WAITED),
                &why,
            );
        }
    };
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let (id, line) = ctx.line("tools/list", json!({}));
        let third = line.len() / 3;
        for part in [&line[..third], &line[third..2 * third], &line[2 * third..]] {
            probe.send(part.to_vec());
            std::thread::sleep(Duration::from_millis(50));
        }
        let reply = probe.reply(&id, ctx.answer);
        let answers = probe
            .stdout_lines()
            .0
            .iter()
            .filter(|l| {
                serde_json::from_slice::<Value>(trim_cr(l))
                    .ok()
                    .is_some_and(|v| v.get("id") == Some(&id))
            })
            .count();
        let c = match (&reply, answers) {
            (Reply::Result(_) | Reply::Error(..), 1) => (Accept, HELD.to_string()),
            (Reply::Result(_) | Reply::Error(..), _) => {
                (Accept, reasons::PARTIAL_LINE_ANSWERED_TWICE.into())
            }
            (Reply::Silent, _) => (ProbeOutcome::NotObserved, NO_ANSWER.into()),
            (Reply::Closed, _) => (Terminate, SUBJECT_EXITED.into()),
        };
        (
            c,
            format!("written in 3 chunks, {answers} answer(s)"),
            json!({"reply": reply.label(), "answers": answers}),
        )
    });
    // The control: a request without its LF must not be dispatched within
    // the settle window; after the LF it must be answered (so it was a
    // valid request).
    let run = |defect: bool| {
        opened(ctx, NoEffect, WAITED, |probe, _open| {
            let (id, line) = ctx.line("tools/list", json!({}));
            let line = if defect { syntax_defect(&line) } else { line };
            probe.send(line[..line.len() - 1].to_vec());
            let early = probe.reply(&id, window);
            // The decision before the LF is made on the stdout bytes as
            // they are now, and their length is recorded, so the judge reads
            // exactly what was decided on (an answer that came just after
            // the window counts, as the stored prefix shows it).
            let seen = probe.stdout_bytes();
            let (early_answered, early_parse_error) =
                crate::judge::stdio::answered_before(&seen, &id);
            let early_answered =
                early_answered || matches!(early, Reply::Result(_) | Reply::Error(..));
            probe.note("final LF sent");
            probe.send(b"\n".to_vec());
            // A liveness request after the LF: once it is answered, the
            // completed line has been read too (a little grace for order).
            let (live_id, live) = ctx.live_line();
            probe.send(live);
            let _ = probe.reply(&live_id, ctx.answer);
            let late = probe.reply(&id, ctx.paced(Duration::from_millis(100)));
            let (_, after) = (0, probe.stdout_lines().0.len());
            let late_parse_error = probe.stdout_lines().0.iter().any(|l| {
                serde_json::from_slice::<Value>(trim_cr(l))
                    .ok()
                    .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64))
                    == Some(-32700)
            });
            let c = match (&early, &late) {
                _ if early_answered || early_parse_error => {
                    (Accept, reasons::UNTERMINATED_LINE_DISPATCHED.to_string())
                }
                (Reply::Silent, Reply::Result(_) | Reply::Error(..)) => {
                    (NoEffect, WAITED.to_string())
                }
                (Reply::Silent, Reply::Silent) if late_parse_error => {
                    (Reject, SYNTAX_GUARD.to_string())
                }
                (Reply::Silent, Reply::Silent) => {
                    (ProbeOutcome::NotObserved, NO_ANSWER.to_string())
                }
                _ => (Terminate, SUBJECT_EXITED.to_string()),
            };
            (
                c,
                format!(
                    "before the LF: {}; after it: {} ({after} line(s))",
                    early.label(),
                    late.label()
                ),
                json!({"beforeLf": early.label(), "afterLf": late.label(), "requestId": id, "stdoutBytesAtLf": seen.len()}),
            )
        })
    };
    let negative = run(false);
    let m = run(true);
    let m = m.into_mutant(WAITED);
    check("partial-line", positive, (negative, m))
}

/// A `tools/list` request padded to `size` bytes (LF included).
fn padded(ctx: &Ctx, size: usize) -> (Value, Vec<u8>) {
    let (id, line) = ctx.line("tools/list", json!({"_meta": {"mcpres/padding": ""}}));
    let pad = size.saturating_sub(line.len());
    let text = String::from_utf8(line).expect("JSON is UTF-8");
    let text = text.replacen(
        "\"mcpres/padding\":\"\"",
        &format!("\"mcpres/padding\":\"{}\"", "x".repeat(pad)),
        1,
    );
    (id, text.into_bytes())
}

fn oversized_line(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::LARGE_LINE_HANDLED;
    const BOUNDED: &str = reasons::OVERSIZED_LINE_BOUNDED;
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let (id, line) = padded(ctx, LARGE_LINE_BYTES);
        probe.send(line);
        let reply = probe.reply(&id, ctx.answer * 2);
        let c = match reply {
            Reply::Result(_) => (Accept, HELD.to_string()),
            Reply::Error(..) => (Reject, reasons::LARGE_LINE_REFUSED.to_string()),
            Reply::Silent => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
            Reply::Closed => (Terminate, SUBJECT_EXITED.to_string()),
        };
        (
            c,
            format!("a {LARGE_LINE_BYTES}-byte request: {}", reply.label()),
            json!({"reply": reply.label(), "lineBytes": LARGE_LINE_BYTES}),
        )
    });
    // The control: a valid 16 MiB request. A bounded refusal is an error
    // answer while still serving, or a clean close; the expectation is
    // written as whichever of the two was seen (spec/profiles.md).
    let run = |defect: bool| {
        let mut seen = None;
        let o = opened(ctx, Reject, BOUNDED, |probe, _open| {
            let (id, line) = if defect {
                let (id, line) = ctx.line("tools/list", json!({}));
                (id, syntax_defect(&line))
            } else {
                padded(ctx, OVERSIZED_LINE_BYTES)
            };
            let mut ev: Evidence = ctx.exchange(probe, line, Some(&id));
            if !ev.alive && ev.exit.is_none() {
                // Its stdout closed: how it ends decides (a clean exit, or
                // a death, which is never a bounded refusal).
                ev.exit = probe
                    .wait_exit(ctx.answer)
                    .map(|s| super::probe::status_text(&s));
                ev.ended_by = probe.ended_by_runner();
                ev.stdout_closed = probe.stdout_closed();
            }
            let c = match &*ev.reply {
                // MCP sets no line size limit: serving a valid 16 MiB
                // request is allowed (not observed, never a FAIL).
                Reply::Result(_) if !defect => (
                    ProbeOutcome::NotObserved,
                    reasons::BEHAVIOUR_LEFT_OPEN.to_string(),
                ),
                Reply::Result(_) => (Accept, reasons::OVERSIZED_LINE_ACCEPTED.to_string()),
                Reply::Error(-32700, _) if defect => (Reject, SYNTAX_GUARD.to_string()),
                Reply::Error(..) if ev.alive => (Reject, BOUNDED.to_string()),
                Reply::Silent if ev.parse_errors > 0 && defect => {
                    (Reject, SYNTAX_GUARD.to_string())
                }
                Reply::Silent | Reply::Error(..) if ev.alive => (
                    Reject,
                    if ev.parse_errors + ev.null_id_errors > 0 {
                        BOUNDED.to_string()
                    } else {
                        reasons::OVERSIZED_LINE_DROPPED_SILENTLY.to_string()
                    },
                ),
                // Only a clean exit (status 0) of its own is a bounded
                // ending: a crash (another status, a signal) is not.
                _ if ev.ended_by.is_some() => (ProbeOutcome::NotObserved, ENDED_BY_RUNNER.into()),
                _ => match ev.exit.as_deref() {
                    Some("exit 0") => (Terminate, BOUNDED.to_string()),
                    Some(_) => (Terminate, reasons::OVERSIZED_LINE_CRASHED.to_string()),
                    None => ev.gone(),
                },
            };
            seen = Some(c.0);
            (
                c,
                format!(
                    "{}; still serving: {}; exit: {:?}",
                    ev.reply.label(),
                    ev.alive,
                    ev.exit
                ),
                ev.summary(),
            )
        });
        (o, seen)
    };
    let (mut negative, seen) = run(false);
    if seen == Some(Terminate) && negative.observed_reason == BOUNDED {
        negative.expected = Terminate;
    }
    let (m, _) = run(true);
    let m = m.into_mutant(BOUNDED);
    check("oversized-line", positive, (negative, m))
}

fn process_exit(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::EXIT_ON_STDIN_CLOSE;
    const TERMINATED: &str = reasons::EXIT_ON_SIGTERM;
    let positive = opened(ctx, Terminate, HELD, |probe, _open| {
        probe.close_stdin();
        let status = probe.wait_exit(Duration::from_secs(5));
        if status.is_none() {
            // The record says where the runner stopped waiting, so the
            // judge reads the exit (or none) from the order of its events.
            probe.note(crate::judge::stdio::NO_EXIT_AFTER_STDIN_CLOSE);
        }
        let c = match &status {
            Some(_) => (Terminate, HELD.to_string()),
            None => (NoEffect, reasons::RUNS_AFTER_STDIN_CLOSE.to_string()),
        };
        let s = status.as_ref().map(super::probe::status_text);
        (
            c,
            format!(
                "after stdin EOF: {}",
                s.clone()
                    .unwrap_or_else(|| "still running after 5 s".into())
            ),
            json!({"status": s}),
        )
    });
    let settle = match ctx.settle_window() {
        Ok(w) => w,
        Err(why) => {
            return CheckRun::too_slow(
                ctx,
                "process-exit",
                (Terminate, HELD),
                (Terminate, TERMINATED),
                &why,
            );
        }
    };
    // The control: SIGTERM right after opening, and (when that held) again
    // on a fresh subject once it has served a few requests and is idle: a
    // subject must honour it at more than one point of its life.
    let run = |signal: Signal, name: &str, late: bool| {
        opened(ctx, Terminate, TERMINATED, |probe, _open| {
            let mut served = 0;
            if late {
                for _ in 0..SERVED_BEFORE_SIGNAL {
                    let (id, line) = ctx.line("tools/list", json!({}));
                    probe.send(line);
                    if matches!(
                        probe.reply(&id, ctx.answer),
                        Reply::Result(_) | Reply::Error(..)
                    ) {
                        served += 1;
                    }
                }
                idle(probe, settle, ctx.answer);
            }
            let status = probe.signal_and_wait(
                signal,
                name,
                if signal == Signal::TERM {
                    TERM_GRACE
                } else {
                    settle
                },
            );
            let c = match (&status, signal) {
                (Some(_), Signal::TERM) => (Terminate, TERMINATED.to_string()),
                (Some(_), _) => (Terminate, reasons::EXIT_ON_UNRELATED_SIGNAL.to_string()),
                (None, Signal::TERM) => (NoEffect, reasons::TERMINATION_NEEDED_SIGKILL.to_string()),
                (None, _) => (NoEffect, reasons::NO_TERMINATION_REQUESTED.to_string()),
            };
            let s = status.as_ref().map(super::probe::status_text);
            let when = if late {
                format!("idle after {served} of {SERVED_BEFORE_SIGNAL} requests served")
            } else {
                "right after opening".into()
            };
            (
                c,
                format!(
                    "{name} {when}: {}",
                    s.clone().unwrap_or_else(|| "still running".into())
                ),
                json!({"status": s, "signalled": if late { "idle after requests" } else { "after opening" }, "servedBefore": served}),
            )
        })
    };
    let early = run(Signal::TERM, "SIGTERM", false);
    let negative = if early.held() {
        let mut late = run(Signal::TERM, "SIGTERM", true);
        late.artifact["earlierProbe"] = early.artifact;
        late
    } else {
        early
    };
    // The mutant: SIGCONT (at the same idle moment) asks nothing; an exit
    // after it is not this property.
    let m = run(Signal::CONT, "SIGCONT", true);
    let m = m.into_mutant(TERMINATED);
    check("process-exit", positive, (negative, m))
}

fn child_tree_cleanup(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::CHILD_TREE_EMPTY_AFTER_EXIT;
    const TERMINATED: &str = reasons::CHILD_TREE_TERMINATED;
    // Each probe: open, look for descendants, end the subject (stdin EOF for
    // the positive, SIGTERM to the subject alone for the control), then count
    // what of its tree is left.
    let run = |how: &str, expected: ProbeOutcome, reason: &'static str| -> (Obs, usize) {
        let mut seen = 0;
        let o = opened(ctx, expected, reason, |probe, _open| {
            let (id, line) = ctx.line("tools/list", json!({}));
            probe.send(line);
            let _ = probe.reply(&id, ctx.answer);
            std::thread::sleep(ctx.paced(Duration::from_millis(100)));
            probe.sample_tree();
            let tree: Vec<u32> = probe.descendants_seen().keys().copied().collect();
            seen = tree.len();
            let status = match how {
                "eof" => {
                    probe.close_stdin();
                    probe.wait_exit(Duration::from_secs(5))
                }
                _ => probe.signal_and_wait(
                    Signal::TERM,
                    "SIGTERM (subject only)",
                    Duration::from_secs(5),
                ),
            };
            // Children that follow their parent out are given the
            // subject's own pace to go (a loaded machine is slow, not
            // leaky); what is still there after it was left behind.
            let until = Instant::now() + ctx.paced(Duration::from_millis(500));
            let (left, orphans) = loop {
                let procs = crate::produce::drive::proc::snapshot();
                let left: Vec<u32> = tree
                    .iter()
                    .copied()
                    .filter(|p| procs.get(p).is_some_and(|p| !p.zombie()))
                    .collect();
                let orphans = crate::produce::drive::proc::adopted(&procs).len();
                if (left.is_empty() && orphans == 0) || Instant::now() >= until {
                    break (left, orphans);
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            let c = if status.is_none() {
                (NoEffect, reasons::SUBJECT_DID_NOT_EXIT.to_string())
            } else if left.is_empty() && orphans == 0 {
                (expected, reason.to_string())
            } else {
                (expected, reasons::CHILD_LEFT_BEHIND.to_string())
            };
            (
                c,
                format!(
                    "{} descendant(s) seen, {} left after the subject exited",
                    tree.len(),
                    left.len().max(orphans)
                ),
                json!({"descendants": tree, "leftBehind": left, "adoptedOrphans": orphans}),
            )
        });
        (o, seen)
    };
    let (positive, seen) = run("eof", Terminate, HELD);
    if seen == 0 && positive.reached {
        return CheckRun::not_observed(
            "child-tree-cleanup",
            "the subject started no child process during the probe, so the cleanup of a child tree could not be exercised",
        );
    }
    let (negative, _) = run("term", Terminate, TERMINATED);
    // The mutant: the children are killed by the runner itself, so their end
    // says nothing about the subject's cleanup.
    let m = opened(ctx, Terminate, TERMINATED, |probe, _open| {
        let (id, line) = ctx.line("tools/list", json!({}));
        probe.send(line);
        let _ = probe.reply(&id, ctx.answer);
        std::thread::sleep(ctx.paced(Duration::from_millis(100)));
        probe.sample_tree();
        let tree: Vec<u32> = probe.descendants_seen().keys().copied().collect();
        for pid in &tree {
            if let Some(p) = rustix::process::Pid::from_raw(*pid as i32) {
                let _ = rustix::process::kill_process(p, Signal::KILL);
            }
        }
        (
            (Terminate, reasons::CHILDREN_KILLED_BY_RUNNER.to_string()),
            format!("the runner killed {} descendant(s) itself", tree.len()),
            json!({"killedByRunner": tree}),
        )
    });
    let m = m.into_mutant(TERMINATED);
    check("child-tree-cleanup", positive, (negative, m))
}

fn backpressure(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::BACKPRESSURE_NO_LOSS;
    const TERMINATED: &str = reasons::BLOCKED_WRITER_TERMINATES;
    const COUNT: usize = 300;
    let burst = |ctx: &Ctx| {
        let mut ids = Vec::new();
        let mut bytes = Vec::new();
        for _ in 0..COUNT {
            let (id, line) = ctx.line("tools/list", json!({}));
            ids.push(id);
            bytes.extend_from_slice(&line);
        }
        (ids, bytes)
    };
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let (ids, bytes) = burst(ctx);
        // The judge counts every answer on the stored stdout: keep it all
        // (300 answers of a large catalogue run to megabytes).
        probe.keep_more_stdout(8 << 20);
        probe.pause_stdout(true);
        probe.send(bytes);
        std::thread::sleep(ctx.paced(Duration::from_millis(300)));
        probe.pause_stdout(false);
        // Every request is waited for (not only the last: a subject may
        // answer out of order), all within one bound; then the subject's own
        // pace for a duplicate to show.
        let until = Instant::now() + ctx.answer * 3;
        for id in &ids {
            let left = until.saturating_duration_since(Instant::now());
            if matches!(probe.reply(id, left), Reply::Closed) {
                break;
            }
        }
        std::thread::sleep(ctx.paced(Duration::from_millis(100)));
        let (lines, _) = probe.stdout_lines();
        let mut counts = std::collections::BTreeMap::new();
        for l in &lines {
            if let Ok(v) = serde_json::from_slice::<Value>(trim_cr(l))
                && let Some(id) = v.get("id")
            {
                *counts.entry(id.to_string()).or_insert(0usize) += 1;
            }
        }
        let answered = ids
            .iter()
            .filter(|id| counts.get(&id.to_string()) == Some(&1))
            .count();
        let twice = counts.values().filter(|&&n| n > 1).count();
        let c = if answered == COUNT && twice == 0 {
            (Accept, HELD.to_string())
        } else if probe.try_exit().is_some() {
            (Terminate, SUBJECT_EXITED.to_string())
        } else {
            (Accept, reasons::BACKPRESSURE_LOST_RESPONSES.to_string())
        };
        (
            c,
            format!(
                "{answered} of {COUNT} answered exactly once, {twice} answered more than once, {} stdout bytes",
                probe.stdout_bytes().len()
            ),
            json!({"requests": COUNT, "answeredOnce": answered, "answeredTwice": twice}),
        )
    });
    // The control: SIGTERM while the subject is blocked on a full stdout
    // pipe. The mutant sends SIGTERM with stdout drained (nothing blocked).
    let run = |blocked: bool| {
        opened(ctx, Terminate, TERMINATED, |probe, _open| {
            let (_ids, bytes) = burst(ctx);
            if blocked {
                probe.pause_stdout(true);
            }
            probe.send(bytes);
            std::thread::sleep(ctx.paced(Duration::from_millis(250)));
            let pending = probe.stdout_bytes().len();
            let status = probe.signal_and_wait(Signal::TERM, "SIGTERM", TERM_GRACE);
            probe.pause_stdout(false);
            let c = match (&status, blocked) {
                (Some(_), true) => (Terminate, TERMINATED.to_string()),
                (Some(_), false) => (Terminate, reasons::EXIT_ON_SIGTERM_UNBLOCKED.to_string()),
                (None, _) => (NoEffect, reasons::TERMINATION_NEEDED_SIGKILL.to_string()),
            };
            (
                c,
                format!(
                    "stdout {} while the burst was written ({pending} bytes read); after SIGTERM: {}",
                    if blocked { "unread" } else { "read" },
                    status
                        .as_ref()
                        .map_or("still running".into(), super::probe::status_text)
                ),
                json!({"stdoutRead": !blocked, "bytesReadBeforeSignal": pending}),
            )
        })
    };
    let negative = run(true);
    let m = run(false);
    let m = m.into_mutant(TERMINATED);
    check("backpressure", positive, (negative, m))
}

fn concurrent_requests(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::CONCURRENT_ANSWERED_BY_ID;
    const REFUSED: &str = reasons::BATCH_REFUSED;
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let mut ids = Vec::new();
        let mut bytes = Vec::new();
        for _ in 0..5 {
            let (id, line) = ctx.line("tools/list", json!({}));
            ids.push(id);
            bytes.extend_from_slice(&line);
        }
        probe.send(bytes);
        let replies: Vec<Reply> = ids.iter().map(|id| probe.reply(id, ctx.answer)).collect();
        let answered = replies
            .iter()
            .filter(|r| matches!(r, Reply::Result(_)))
            .count();
        let c = if answered == ids.len() {
            (Accept, HELD.to_string())
        } else {
            (Accept, reasons::CONCURRENT_REQUEST_LOST.to_string())
        };
        (
            c,
            format!(
                "{answered} of {} requests written at once answered",
                ids.len()
            ),
            json!({"answered": answered}),
        )
    });
    let pair = line_control_answered(
        ctx,
        true,
        Reject,
        REFUSED,
        |ctx| {
            let a = ctx.id();
            let b = ctx.id();
            let batch = json!([
                ctx.request(&a, "tools/list", json!({})),
                ctx.request(&b, "tools/list", json!({}))
            ]);
            (Some(a), json_line(&batch))
        },
        // A batch answered as an array of results is accepted.
        |ev, _| {
            if ev.batch_results > 0 {
                (Accept, reasons::BATCH_ACCEPTED.into())
            } else {
                ev.refusal(REFUSED, reasons::BATCH_ACCEPTED, true)
            }
        },
    );
    check("concurrent-requests", positive, pair)
}

fn interruption(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::INTERRUPT_HONOURED;
    const INFLIGHT: &str = reasons::INTERRUPT_WITH_INFLIGHT_CLEAN;
    let settle = match ctx.settle_window() {
        Ok(w) => w,
        Err(why) => {
            return CheckRun::too_slow(
                ctx,
                "interruption",
                (Terminate, HELD),
                (Terminate, INFLIGHT),
                &why,
            );
        }
    };
    let run = |requests: usize, signal: Signal, name: &'static str, expected: &'static str| {
        opened(ctx, Terminate, expected, |probe, _open| {
            if requests == 0 {
                // Nothing in flight: SIGINT goes out only once the subject
                // is idle (a liveness request answered, then its output
                // still for the settle window), never while it is still
                // busy with the opening.
                let (id, line) = ctx.live_line();
                probe.send(line);
                let _ = probe.reply(&id, ctx.answer);
                idle(probe, settle, ctx.answer);
            }
            let mut bytes = Vec::new();
            for _ in 0..requests {
                bytes.extend_from_slice(&ctx.line("tools/list", json!({})).1);
            }
            if !bytes.is_empty() {
                // Whether the last line is torn is read from the stored
                // stdout: keep all of it (the answers in flight run past
                // what a transcript keeps for a large catalogue).
                probe.keep_more_stdout(8 << 20);
                probe.send(bytes);
                probe.flushed(Duration::from_secs(2));
            }
            let status = probe.signal_and_wait(
                signal,
                name,
                if signal == Signal::INT {
                    TERM_GRACE
                } else {
                    settle
                },
            );
            // A torn last line is read from every byte the subject wrote:
            // once it exited, stdout is read to its end first (the reader
            // may lag behind a subject that wrote much just before), so the
            // reading is what the stored transcript shows.
            if status.is_some() {
                probe.drained(TERM_GRACE);
            } else {
                std::thread::sleep(ctx.paced(Duration::from_millis(50)));
            }
            let (_, torn) = probe.stdout_lines();
            let c = match (&status, signal) {
                (Some(_), Signal::INT) if torn => {
                    (Terminate, reasons::INTERRUPT_TORN_FRAME.to_string())
                }
                (Some(_), Signal::INT) => (Terminate, expected.to_string()),
                (Some(_), _) => (Terminate, reasons::EXIT_ON_UNRELATED_SIGNAL.to_string()),
                // The stdio shutdown sequence is stdin close, SIGTERM,
                // SIGKILL: no MUST asks a server to exit on SIGINT
                // (not observed, never a FAIL).
                (None, Signal::INT) => (
                    ProbeOutcome::NotObserved,
                    reasons::BEHAVIOUR_LEFT_OPEN.to_string(),
                ),
                (None, _) => (NoEffect, reasons::NO_INTERRUPT_REQUESTED.to_string()),
            };
            (
                c,
                format!(
                    "{requests} request(s) in flight, then {name}: {}; torn last line: {torn}",
                    status
                        .as_ref()
                        .map_or("still running".into(), super::probe::status_text)
                ),
                json!({"inFlight": requests, "signal": name, "tornLastLine": torn}),
            )
        })
    };
    let positive = run(0, Signal::INT, "SIGINT", HELD);
    let negative = run(50, Signal::INT, "SIGINT", INFLIGHT);
    // The mutant: SIGWINCH, which asks for no interruption at all.
    let m = run(50, Signal::WINCH, "SIGWINCH", INFLIGHT);
    let m = m.into_mutant(INFLIGHT);
    check("interruption", positive, (negative, m))
}

fn no_process_as_conversation(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::CONVERSATION_BOUND_TO_MESSAGES;
    const REFUSED: &str = reasons::RESTART_IS_NEW_CONVERSATION;
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        // Two requests on one process: on 2026-07-28 from two different
        // clients (each self-described), on 2025-11-25 on the one session.
        let mut replies = Vec::new();
        for client in ["mcpres-client-a", "mcpres-client-b"] {
            let (id, line) = ctx.line(
                "tools/list",
                json!({"_meta": {META_CLIENT_INFO: {"name": client, "version": "1"}}}),
            );
            probe.send(line);
            replies.push(probe.reply(&id, ctx.answer));
        }
        let ok = replies.iter().all(|r| matches!(r, Reply::Result(_)));
        let c = if ok {
            (Accept, HELD.to_string())
        } else {
            (Accept, reasons::SECOND_CLIENT_REFUSED.to_string())
        };
        (
            c,
            format!(
                "two requests: {}, {}",
                replies[0].label(),
                replies[1].label()
            ),
            json!({"replies": replies.iter().map(Reply::label).collect::<Vec<_>>()}),
        )
    });
    // The control: a fresh process asked for tools/list with no conversation
    // opened (2025-11-25: no initialize; 2026-07-28: no `_meta` at all) must
    // refuse it: the earlier process's conversation does not carry over.
    let run = |defect: bool| match ctx.start() {
        Err(why) => open_failed(Reject, REFUSED, why.clone(), json!({"startError": why})),
        Ok(mut probe) => {
            let id = ctx.id();
            let mut line = json_line(
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}}),
            );
            if defect {
                line = syntax_defect(&line);
            }
            probe.send(line);
            // The first line a fresh process reads: its answer (or silence)
            // is judged after the start-up bound, the defective line's too,
            // never after a fixed window a loaded machine can outlast.
            let reply = probe.reply(&id, ctx.startup);
            let before = 0;
            let ev = ctx.gather(&mut probe, before, reply, true, None);
            // 2025-11-25 asks the client not to send requests before
            // initialize and states no MUST for a server that answers one:
            // there, an answer is left open (not observed, never a FAIL).
            let c = match &*ev.reply {
                Reply::Result(_) if !ctx.modern() => (
                    ProbeOutcome::NotObserved,
                    reasons::BEHAVIOUR_LEFT_OPEN.to_string(),
                ),
                _ => ev.refusal(REFUSED, reasons::CONVERSATION_ASSUMED, true),
            };
            let detail = format!("tools/list with no conversation: {}", ev.reply.label());
            let artifact = ctx.finish(probe, ev.summary());
            obs(Reject, REFUSED, c, true, detail, artifact)
        }
    };
    let negative = run(false);
    let m = run(true);
    let m = m.into_mutant(REFUSED);
    check("no-process-as-conversation", positive, (negative, m))
}

fn discovery_versus_legacy_initialization(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::ERA_OPENING_ANSWERED;
    const SILENT: &str = reasons::NOTIFICATION_NOT_ANSWERED;
    let positive = match ctx.start() {
        Err(why) => open_failed(Accept, HELD, why.clone(), json!({"startError": why})),
        Ok(mut probe) => {
            let open = ctx.open(&mut probe);
            let rev = ctx.revision.as_str();
            let ok = match &open {
                Reply::Result(m) if ctx.modern() => m
                    .pointer("/result/supportedVersions")
                    .and_then(Value::as_array)
                    .is_some_and(|v| v.iter().any(|x| x == rev)),
                Reply::Result(m) => m.pointer("/result/protocolVersion") == Some(&json!(rev)),
                _ => false,
            };
            let c = match (&open, ok) {
                (_, true) => (Accept, HELD.to_string()),
                (Reply::Result(_), false) => {
                    (Accept, reasons::ERA_OPENING_WRONG_VERSION.to_string())
                }
                (Reply::Error(..), _) => (Reject, reasons::ERA_OPENING_REFUSED.to_string()),
                (Reply::Silent, _) => (ProbeOutcome::NotObserved, NO_ANSWER.to_string()),
                (Reply::Closed, _) => (Terminate, SUBJECT_EXITED.to_string()),
            };
            let method = ctx.open_request().0;
            let detail = format!("{method} for {rev}: {}", open.label());
            let artifact = ctx.finish(probe, json!({"open": open.label(), "method": method}));
            obs(Accept, HELD, c, true, detail, artifact)
        }
    };
    // The control: `server/discover` as a notification (no id) must get no
    // response. The mutant sends it with a syntax defect.
    let run = |defect: bool| {
        opened(ctx, NoEffect, SILENT, |probe, _open| {
            let mut line = json_line(
                &json!({"jsonrpc": "2.0", "method": "server/discover", "params": ctx.params(json!({}))}),
            );
            if defect {
                line = syntax_defect(&line);
            }
            let ev = ctx.exchange(probe, line, None);
            let c = if !ev.alive {
                ev.gone()
            } else if ev.parse_errors > 0 {
                (Reject, SYNTAX_GUARD.to_string())
            } else if !ev.other_responses.is_empty() {
                (Accept, reasons::NOTIFICATION_ANSWERED.to_string())
            } else {
                (NoEffect, SILENT.to_string())
            };
            (
                c,
                format!(
                    "{} response(s) to the notification",
                    ev.other_responses.len()
                ),
                ev.summary(),
            )
        })
    };
    let negative = run(false);
    // The mutant: the same `server/discover` as a request (with an id),
    // which must be answered (a result, or -32601 from a server that does
    // not have the method): a subject that answers it and not the
    // notification has bound its silence to the missing id.
    let m = answered_mutant(ctx, SILENT, None, |ctx| {
        ctx.line("server/discover", json!({}))
    });
    check(
        "discovery-versus-legacy-initialization",
        positive,
        (negative, m),
    )
}

/// The SHA-256 of the file's bytes, with its last byte changed when `change`.
fn file_sha256_changed(path: &std::path::Path, change: bool) -> Option<String> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut read = 0u64;
    loop {
        let n = file.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        read += n as u64;
        if change && read == len {
            buf[n - 1] ^= 1;
        }
        hasher.update(&buf[..n]);
    }
    Some(hex::encode(hasher.finalize()))
}

fn file_sha256(path: &std::path::Path) -> Option<String> {
    crate::produce::drive::ident::artifact_digest(path)
        .ok()
        .map(|(sha, _)| sha)
}
