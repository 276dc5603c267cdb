//! The checks of `mcp-res/operational-resilience/v1` mcpres runs, as data
//! ([`CHECKS`]), and their runners. Each observation stores its raw record under
//! `observation.ops`; its label is [`crate::judge::ops::reading`] of that record, the
//! same function `validate` reads it with.

use std::time::Duration;

use serde_json::{Value, json};

use super::backpressure;
use super::downstream;
use super::ending;
use super::load;
use super::overload;
use super::recovery;
use super::skew;
use super::storage;
use super::workload::Workload;
use crate::judge::ops::{self as reading, PROFILE as P};
use crate::model::vocab::ProbeOutcome::{self, *};
use crate::produce::drive::shim::Spec;
use crate::produce::profile::check::{CheckRun, Ctx, Obs};
use crate::produce::profile::decl::{Basis, CheckDecl, JSONRPC, Level as L, MCP_2025, PROFILE};
use crate::produce::profile::probe::{Launch, Probe, Reply};

/// The checks mcpres runs, in the manifest's order.
pub const CHECKS: &[CheckDecl] = &[
    CheckDecl::new(P, "cold-start", cold_start, reading::START_WITHIN_BUDGET, reading::START_OVER_BUDGET)
        .basis(&[Basis::both(PROFILE, "required check cold-start", L::Profile, "a fresh subject answers its opening within the workload's declared start budget (the median over the declared fresh starts)")])
        .alone().launch().http()
        .judged("No MCP requirement sets a start-up time: judged on the workload's declared budget only. The control is the subject started behind an injected delay of the budget plus 500 ms, which the reading must refuse; the mutant's delay (a quarter of the budget) must not be."),
    CheckDecl::new(P, "warm-start", warm_start, reading::START_WITHIN_BUDGET, reading::START_OVER_BUDGET)
        .basis(&[Basis::both(PROFILE, "required check warm-start", L::Profile, "a subject started right after another answers its opening within the workload's declared warm-start budget")])
        .alone().launch().http()
        .judged("No MCP requirement: judged on the workload's declared budget only; the second of two starts in a row is judged. Control and mutant as for cold-start, injected into the second start only (the first, stored with `warmUp`, is the subject as it is)."),
    CheckDecl::new(P, "bounded-concurrency", ending::bounded_concurrency, reading::BURST_ANSWERED, reading::BURST_UNANSWERED)
        .basis(&[
            Basis::both(JSONRPC, "§4", L::Must, "the server MUST reply to every request: each of many sent at once too (an error, such as an overload refusal, is a reply)"),
            Basis::both(PROFILE, "required check bounded-concurrency", L::Profile, "requests over the concurrency a subject takes get a bounded outcome (served or refused), never silence"),
        ])
        .alone().launch().http()
        .judged("The workload's concurrency times its defect factor requests are written at once; every one must be answered, with a result or an error, while the subject runs. Silence fails on JSON-RPC's MUST. The control puts a queue in front of the subject (the shim) that holds the workload's concurrency in flight and drops what is over it (the taxonomy's resource-exhaustion, lost); the mutant's queue refuses what is over it at once with an overload error and a retry hint: bounded, so it must be read as answered. Over Streamable HTTP each request is posted on a fresh connection, all written before any answer is read, and the queue is the shim's front, which reads each request whole before it passes it on, drops or refuses it."),
    CheckDecl::new(P, "queue-saturation", overload::queue_saturation, reading::QUEUE_BOUNDED, reading::QUEUE_LOST)
        .basis(&[
            Basis::both(JSONRPC, "§4", L::Must, "the server MUST reply to every request: each of the hold calls sent over its limit too (served later or refused)"),
            Basis::both(PROFILE, "required check queue-saturation", L::Profile, "a queue saturated past the subject's declared limit loses nothing and drains: every request answered, and the next served"),
        ])
        .alone().launch().http()
        .judged("Needs the workload's `[subject]` declaration (the subject's limit and a hold call); without it NOT_OBSERVED. The declared limit times the defect factor hold calls are written at once; every one must be answered, served or refused, while the subject runs (silence fails on JSON-RPC's MUST), and a request after them must get a result. The control puts a queue in front of the subject (the shim) that holds the declared limit and drops what is over it (the taxonomy's resource-exhaustion); the mutant's refuses it at once with an overload error: bounded, read as the positive. Over Streamable HTTP each hold call is posted on a fresh connection, all written before any answer is read, with one deadline for the answers (the declared hold times the defect factor, and the answer window); the order in which the subject takes them does not matter to the reading. The queue of the control and the mutant is the shim's front, which reads each connection's request whole and drops or refuses what is over the declared limit in flight."),
    CheckDecl::new(P, "backpressure", backpressure::backpressure, reading::BACKPRESSURE_HELD, reading::BACKPRESSURE_LOST)
        .basis(&[
            Basis::both(JSONRPC, "§4", L::Must, "the server MUST reply to every request: the ones sent while its client was not reading too"),
            Basis::both(PROFILE, "required check backpressure", L::Profile, "a client that stops reading makes the subject wait (or buffer), never lose an answer, and the subject serves again once the client reads"),
        ])
        .alone().launch().http()
        .judged("The runner stops reading the subject's stdout and sends requests whose answers come to three pipes' worth (its tool list when it has one, else the liveness request; at most 6,000), in writes of at most 32 KiB (with `[subject]` declared, at most its places at a time, 20 ms apart, so that answers and not refusals fill the pipes), holds its reading a second, and reads again: every request must be answered while the subject runs (silence fails on JSON-RPC's MUST), and a request after them must get a result. Stored answers that come to less than two pipes' worth exercised nothing: NOT_OBSERVED. Whether the subject stopped reading its input (requests left unread when reading resumed) or buffered its answers is reported from the record, not judged: MCP asks for neither. The control puts a transport in front of the runner (the shim) that drops every line its full pipe does not take at once (output lost under backpressure); the mutant's holds every answer 50 ms and buffers them all: slower, nothing lost, read as the positive. Over Streamable HTTP a request on a connection of its own is held by the kernel's buffers alone, so the requests are pipelined on one connection (HTTP/1.1 lets a client send requests before the responses come; the server answers in order), enough that their answers outgrow by a MiB the subject's TCP send buffer at its largest (the kernel's `tcp_wmem` maximum, read by the runner and recorded; at most 20,000 requests and 12 MiB, beyond which the record could not show every answer whole); a thread writes them in writes of at most 32 KiB (with `[rateLimit]` declared, nine tenths of the limit per window, a window apart, so that answers and not refusals fill the buffers; and the request after them a window after the last answer) while the runner does not read, and the runner reads again once nothing has moved for a second (or twenty times the subject's answer time, or a window and a half): not its writes, not the bytes unread at its end, not those the subject's end holds unsent (both from /proc/PID/net/tcp, and recorded). Every request must be answered, and the subject must be shown to have waited: more of its answers came after the runner read again than both kernel queues then held, by an answer at least; else NOT_OBSERVED. A connection the subject ends cleanly (whole responses answering the first requests in order) is NOT_OBSERVED too: a server may close, and the client retries (RFC 9112 §9.3.2). The control is the shim's front, which writes the subject's bytes to the runner without waiting, on a small send buffer, and drops what is not taken; the mutant's front holds each response 50 ms."),
    CheckDecl::new(P, "overload-rejection", overload::overload_rejection, reading::OVERLOAD_REJECTED, reading::OVERLOAD_LOST)
        .basis(&[
            Basis::both(JSONRPC, "§4", L::Must, "the server MUST reply to every request: the ones over its limit too (an overload error is a reply)"),
            Basis::both(PROFILE, "required check overload-rejection", L::Profile, "over the subject's declared limit a request is refused at once (or served once a place is free), never lost, and never served while every place is held"),
        ])
        .alone().launch().http()
        .judged("Needs the workload's `[subject]` declaration; without it NOT_OBSERVED. The declared places are filled with the declared hold call, then as many requests again are written at once: each must be answered (silence fails on JSON-RPC's MUST), and none may get a result while every place is still held (that is more in flight than declared: the profile's own failure). Times are read from the stored chunks; a hold answered before the requests over it were sent leaves the check NOT_OBSERVED (the places were not held). The control's queue (the shim) drops what is over the declared limit; the mutant's refuses it at once with an overload error. Over Streamable HTTP every request is posted on a fresh connection (the holds at once, the requests over them at once half a hold later), and each connection is read on a thread of its own; since the subject takes separate connections in an order of its own, a request counts as over a full set of places only when it was sent and answered while every hold call was provably running (each hold, served no sooner than the declared hold after its send, ran over the declared hold before its answer): served in that span fails, refused in it (a JSON-RPC error or an HTTP error status, which is how a Streamable HTTP server turns a request away) holds, and none in it is NOT_OBSERVED. The control's and the mutant's queue is the shim's front, where a request holds its place until its response is whole."),
    CheckDecl::new(P, "rate-limiting", overload::rate_limiting, reading::RATE_LIMIT_HELD, reading::RATE_LIMIT_LOST)
        .basis(&[
            Basis::both(JSONRPC, "§4", L::Must, "the server MUST reply to every request: the ones over its rate limit too (a rate-limit error is a reply)"),
            Basis::both(PROFILE, "required check rate-limiting", L::Profile, "over the subject's declared rate limit a request is refused (or served in a later window), never lost; the limit holds, and releases once its window has passed"),
        ])
        .alone().launch().http()
        .judged("Needs the workload's `[rateLimit]` declaration (requests per window); without it NOT_OBSERVED. A window after the opening, the declared requests times the defect factor are sent in rounds of the workload's concurrency (at most the declared `[subject]` places), each round written at once when the one before was answered (a rate is exceeded, never the places); each must be answered while the subject runs (silence fails on JSON-RPC's MUST); at least the declared number must be served and no more than twice it within one window of the first send (a fixed window's boundary may let two windows' worth through; more fails the declaration); and a request sent a window after the burst's last answer must get a result. Times are the stored chunks'. A burst served whole over more than a window did not reach the limit: NOT_OBSERVED. The control puts the declared rate limit at the transport (the shim), dropping what is over it (the taxonomy's resource-exhaustion, lost); the mutant's refuses it at once with an error and a retry hint: read as the positive. Over Streamable HTTP each request of a round is posted on a fresh connection and each connection read on a thread of its own (so a stored answer time is when it came: the count within one window is the count the subject served in it, whatever order it took them in); a refusal may be a JSON-RPC error or an HTTP error status alone (429 is the usual one); the control's and the mutant's limit is the shim's front."),
    CheckDecl::new(P, "retry-after", overload::retry_after, reading::RETRY_HONOURED, reading::NO_RETRY_HINT)
        .basis(&[Basis::both(PROFILE, "required check retry-after", L::Profile, "an overload refusal tells the client when to come back (a retry hint), and a request retried after it is served once a place is free")])
        .alone().launch().http()
        .judged("No MCP requirement names a retry hint over stdio (Streamable HTTP has RFC 9110's Retry-After); the profile's own and the taxonomy's resource-exhaustion row (retry-after allowed). Needs the workload's `[subject]` declaration; without it NOT_OBSERVED, and NOT_OBSERVED too when the subject refuses nothing over its places. Every refusal must carry `error.data.retryAfterMs` (or `retryAfter` in seconds; over Streamable HTTP a `Retry-After` header in seconds counts too, and a refusal may be an HTTP error status alone); the runner retries after each hint until a result or the holds are over, and the last retry must get a result. The control's queue refuses without a hint; the mutant's with one (over Streamable HTTP, at the shim's front)."),
    CheckDecl::new(P, "timeout", recovery::timeout_check, reading::ANSWERED_BY_DEADLINE, reading::DEADLINE_MISSED)
        .basis(&[
            Basis::both(MCP_2025, "Basic › Lifecycle › Timeouts", L::Should, "a sender sets a timeout on every request it sends, and past it issues a cancellation and stops waiting: the deadline is the client's (here the workload's)"),
            Basis::pos(JSONRPC, "§4", L::Must, "the server MUST reply to every request (not a notification): the one sent after another was cancelled too"),
            Basis::both(PROFILE, "required check timeout", L::Profile, "a request is answered within the workload's declared request timeout, and a cancelled request leaves the subject serving (a bounded wait, the timer cleared, a new operation allowed)"),
        ])
        .alone().launch().http()
        .judged("The deadline is the workload's request timeout, not a guess at the machine's pace. A request is sent and waited for up to the timeout; then a request is sent and cancelled at once with `notifications/cancelled` (the subject may answer it or not), and a request after it is waited for up to the timeout. Both waited-for requests must be answered within the timeout of their send, read from the stored times of the request and its answer; a missed deadline fails on the workload's budget, a subject that exits fails. Past the timeout the client gives up and cancels. The control holds every answer back the timeout plus a second at the transport (the taxonomy's timeout: delay over budget); the mutant a quarter of it. Over Streamable HTTP each request is posted on a fresh connection, the cancellation is a notification posted on another, and the hold is at the shim's front (a relay on the port the runner connects to)."),
    CheckDecl::new(P, "partial-outage", downstream::partial_outage, reading::OUTAGE_RECOVERED, reading::OUTAGE_NOT_RECOVERED)
        .basis(&[
            Basis::both(JSONRPC, "§4", L::Must, "the server MUST reply to every request: the call made while its downstream is out, and a request that does not need it"),
            Basis::both(PROFILE, "required check partial-outage", L::Profile, "with one dependency out, the subject reports the calls that need it as failed (the taxonomy's dependency-failure: no false success), serves what does not need it, and serves the calls again once it is back (backoff or retry per its policy, within the declared recovery time)"),
        ])
        .alone().launch().http()
        .judged("Needs the workload's `[downstream]` declaration (the environment variable the subject reads a downstream's URL from, a tool call that makes a request there, and a recovery time); without it NOT_OBSERVED. The runner serves that URL itself: a loopback HTTP stub the shim runs beside the subject (in its sandbox), whose every answer is logged to the stored stderr with its phase. In one session: the declared call with the stub up must succeed and reach it (else NOT_OBSERVED: the declaration names no working call); the stub is moved down (503 to every request, by a control line the shim keeps from the subject) and the call must be answered as failed (a success after a 503 is a false success; silence fails on JSON-RPC's MUST), and a liveness request must get a result; the stub is moved up and the call retried every tenth of the recovery time: it must succeed within the declared recovery time of the stored control line (the subject's own backoff allowed). The control's transport repeats the first failed answer to the call for ever (a failure cached: never recovers); the mutant's for a quarter of the recovery time (a breaker that closes again), which must be read as recovered. Over Streamable HTTP each call is posted on a fresh connection; the control lines go to the server process's stdin (the shim's), and the runner waits for the stub's acknowledgement of each move on its stderr before the next request (the stub logs each answer with the moves before it, so a move that came late is read from the record, never guessed); the control's and the mutant's repeated failure is made at the shim's front."),
    CheckDecl::new(P, "process-crash", recovery::process_crash, reading::CRASH_RECOVERED, reading::CRASH_RESIDUE)
        .basis(&[Basis::both(PROFILE, "required check process-crash", L::Profile, "killed while serving (the taxonomy's forced termination), the subject leaves no process of its tree alive (the child reaped) and a fresh process of it opens and serves (a restart allowed)")])
        .alone().launch().http()
        .judged("No MCP requirement: the profile's and the taxonomy's own (termination observed, no graceful-shutdown claim, fresh process restart allowed, child reaped). A request is answered, a second is sent, and the subject's process group is sent SIGKILL at once; what of its tree is alive once it is gone is read from the crashed probe's end record, and a fresh process of the subject (nothing injected) must open and answer a request, read from its own stored transcript. The control leaves an idle process in its own session beside the subject, which a crash does not reach; the mutant starts children that end by themselves."),
    CheckDecl::new(P, "restart", recovery::restart_check, reading::RESTART_SAME_SURFACE, reading::SURFACE_CHANGED)
        .basis(&[Basis::both(PROFILE, "required check restart", L::Profile, "ended and started afresh, the subject opens again and declares the state a client knew it by: the same server, protocol version, capabilities and tools")])
        .alone().launch().http()
        .judged("No MCP requirement: MCP promises nothing across processes (a change within a session is announced with `notifications/tools/list_changed`); the profile's own. The subject is opened and its tools listed, ended through its input (MCP's stdio shutdown), and started afresh with the same injection; the fresh process must open and declare the same surface, read from both stored transcripts. The declared state compared is what every subject declares: server name, protocol version, capability names and tool names (state a subject keeps in files is not compared: in the sandbox each process has its own upper layer). The control renames every listed tool with a suffix drawn per process (a surface that differs at every start, as a server that names tools at random or lists them before it registered them all); the mutant renames them the same way at every start. Over Streamable HTTP the subject is ended as a Streamable HTTP server is (SIGTERM; there is no input to close), each listing is posted on a fresh connection, and the renaming is the shim's front's (each response that lists tools read whole, changed and sent on with a length of its own)."),
    CheckDecl::new(P, "rolling-version-skew", skew::rolling_version_skew, reading::SKEW_COMPATIBLE, reading::SKEW_TOOL_REMOVED)
        .basis(&[Basis::both(PROFILE, "required check rolling-version-skew", L::Profile, "during a rolling update the subject's two versions run at once: the other version opens beside the running one, agrees to the protocol revision the running one negotiated and lists every tool the running one listed (added ones allowed), and the running one goes on serving")])
        .alone().launch().http()
        .judged("No MCP requirement: MCP promises nothing across versions (a change within a session is announced with `notifications/tools/list_changed`); the profile's own. Needs the workload's `[versionSkew]` declaration (the other version's command and what it is); without it NOT_OBSERVED, and NOT_OBSERVED when its command cannot be started, when it names itself another server, or when the running version lists no tools. The running version (the subject, nothing injected) is opened and its tools listed; the other version is started beside it (same environment, same sandbox) and opened and its tools listed; then the running version is sent a request. From both stored transcripts: the other version must open and list its tools (else the two cannot run at once), agree to every revision the running one did, and list every tool the running one listed; the running one must answer with a result. The control leaves the first tool out of the other version's list at the transport (the shim: a tool removed between versions); the mutant adds one (an additive change), which must be read as compatible. Over Streamable HTTP the other version's command serves on a port of its own (`{port}` in it, as in the subject's), every request is posted on a fresh connection, and the control's and the mutant's change to the other version's list is made at its shim's front."),
    CheckDecl::new(P, "downstream-failure", downstream::downstream_failure, reading::DOWNSTREAM_FAILURE_REPORTED, reading::DOWNSTREAM_FALSE_SUCCESS)
        .basis(&[
            Basis::pos(JSONRPC, "§4", L::Must, "the server MUST reply to every request: the calls whose downstream is unavailable too, and the request after them"),
            Basis::both(PROFILE, "required check downstream-failure", L::Profile, "with its downstream unavailable, the subject answers the calls that need it with a bounded dependency error (the taxonomy's dependency-failure: no false success) and goes on serving"),
        ])
        .alone().launch().http()
        .judged("Needs the workload's `[downstream]` declaration; without it NOT_OBSERVED. The runner serves the declared URL itself (a loopback HTTP stub beside the subject, every answer logged to the stored stderr). The positive first makes the declared call in a fresh process with the stub up: it must succeed and the stub's log must show the subject's request (else NOT_OBSERVED). Then, in a fresh process whose stub answers 503 to every request (the taxonomy's dependency-failure, return-unavailable, triggered twice), the call is made twice: each must be answered as failed (an error, or a result with isError); a success after the stub's 503 is a false success, silence fails on JSON-RPC's MUST, an exit fails; and a liveness request after them must get a result. The control's transport answers the call with a success whatever the subject said (a swallowed dependency failure); the mutant's stub answers 75 ms late (the taxonomy's delayed-response) and the calls' successes must be read as served. Over Streamable HTTP each call and the liveness request are posted on fresh connections, the stub and its log are the same (the server process's stderr), and the control's success is made at the shim's front."),
    CheckDecl::new(P, "disk-full", storage::disk_full, reading::STORAGE_FAILURE_REPORTED, reading::STORAGE_WRITE_CLAIMED)
        .basis(&[
            Basis::pos(JSONRPC, "§4", L::Must, "the server MUST reply to every request: the write that cannot be stored too, and the request after it"),
            Basis::both(PROFILE, "required check disk-full", L::Profile, "with its storage full, the subject reports the write as failed (the taxonomy's filesystem-publication-failure: publication failure, no partial artifact claim) and goes on serving"),
        ])
        .alone().launch().http()
        .judged("Needs the workload's `[storage]` declaration (a directory the subject writes and a tool call that writes a file there) and the sandbox; without either, or without the directory on this machine, NOT_OBSERVED. The positive first makes the declared write in a fresh process with no fault: it must succeed (a write that fails anyway says nothing: NOT_OBSERVED). Then, in a fresh process whose sandbox mounts the declared directory as an empty file system with no room and no free inode (creating any file there fails with ENOSPC), the declared write must be answered as failed (an error, or a result with isError) and a request after it must get a result; a success is a claimed write the storage could not hold (the taxonomy's forbidden partial-artifact claim), silence fails on JSON-RPC's MUST, an exit or a subject that stops serving fails. The fault is read back from the stored sandbox scope, never assumed. The control answers the write tool with a success at the transport (the shim: a swallowed failure); the mutant makes the same write with no fault, whose success must be read as served, not as a claim. Over Streamable HTTP each write and the request after it are posted on fresh connections to a server process of their own, and the control's claim is made at the shim's front, which answers the write's call with a success at once and passes the call on to the subject, whose answer it discards."),
    CheckDecl::new(P, "permission-failure", storage::permission_failure, reading::STORAGE_FAILURE_REPORTED, reading::STORAGE_WRITE_CLAIMED)
        .basis(&[
            Basis::pos(JSONRPC, "§4", L::Must, "the server MUST reply to every request: the write that is refused too, and the request after it"),
            Basis::both(PROFILE, "required check permission-failure", L::Profile, "with its storage refusing writes, the subject reports the write as failed (the taxonomy's filesystem-publication-failure: publication failure, no partial artifact claim) and goes on serving"),
        ])
        .alone().launch().http()
        .judged("Needs the workload's `[storage]` declaration (a directory the subject writes and a tool call that writes a file there) and the sandbox; without either, or without the directory on this machine, NOT_OBSERVED. The positive first makes the declared write in a fresh process with no fault: it must succeed (a write that fails anyway says nothing: NOT_OBSERVED). Then, in a fresh process whose sandbox mounts the declared directory read-only (a write there fails with EROFS: the sandbox denies writes by mount, since the subject may be root in its own user namespace), the declared write must be answered as failed (an error, or a result with isError) and a request after it must get a result; a success is a claimed write the storage could not hold (the taxonomy's forbidden partial-artifact claim), silence fails on JSON-RPC's MUST, an exit or a subject that stops serving fails. The fault is read back from the stored sandbox scope, never assumed. The control answers the write tool with a success at the transport (the shim: a swallowed failure); the mutant makes the same write with no fault, whose success must be read as served, not as a claim. Over Streamable HTTP each write and the request after it are posted on fresh connections to a server process of their own, and the control's claim is made at the shim's front, which answers the write's call with a success at once and passes the call on to the subject, whose answer it discards."),
    CheckDecl::new(P, "malformed-flood", malformed_flood, reading::SERVED_THROUGH_FLOOD, reading::FLOOD_REFUSED)
        .basis(&[
            Basis::pos(JSONRPC, "§4", L::Must, "the server MUST reply to every request (not a notification) with a Response, the valid ones among a flood too"),
            Basis::neg(JSONRPC, "§5.1", L::May, "invalid JSON is answered with a parse error (-32700) or dropped: never served"),
            Basis::both(PROFILE, "required check malformed-flood", L::Profile, "a flood of malformed lines is refused without a crash and without a success"),
        ])
        .alone().launch().http()
        .judged("A subject that exits during the flood, or leaves a valid request among it unanswered, fails on JSON-RPC's MUST; one that serves a malformed line fails the control. The mutant floods well-formed requests for a method no server has: answered with errors under their ids, they are refusals of requests, not of malformed input. Over Streamable HTTP each line is a request body of its own, on a fresh connection, all written before any answer is read; a body that is not JSON refused with a 4xx status and no JSON-RPC answer is refused as well as one answered with a parse error."),
    CheckDecl::new(P, "oversized-input", ending::oversized_input, reading::OVERSIZED_THROUGH, reading::OVERSIZED_LINE_REFUSED)
        .basis(&[
            Basis::pos(JSONRPC, "§4", L::Must, "the server MUST reply to every request (not a notification) with a Response: the one after an oversized line too"),
            Basis::neg(JSONRPC, "§5.1", L::May, "invalid JSON is answered with a parse error (-32700) or dropped: never served"),
            Basis::both(PROFILE, "required check oversized-input", L::Profile, "one line of the workload's declared size is refused or served without a crash, and the subject goes on serving"),
        ])
        .alone().launch().http()
        .judged("The positive sends one well-formed liveness request padded (in `_meta`) to the workload's oversizedBytes, then a valid request: the subject may answer the large one or refuse it, but an exit or the next request unanswered fails on JSON-RPC's MUST. The control sends a line that size that is not JSON (seeded bytes, the taxonomy's malformed-message); the mutant a well-formed request that size for a method no server has, answered with an error under its id: a refusal of a request, not of malformed input. Over Streamable HTTP the line is one request body of that size (a 413 or other refusal of it is allowed), its head and body written apart so that the stored body's head names its id, and the request after it is posted on a fresh connection."),
    CheckDecl::new(P, "duplicate-delivery", recovery::duplicate_delivery, reading::DUPLICATE_BOUNDED, reading::DUPLICATE_STALLED)
        .basis(&[
            Basis::both(JSONRPC, "§4", L::Must, "the server MUST reply to every request: the one delivered twice (at least once) and the one after it"),
            Basis::both(PROFILE, "required check duplicate-delivery", L::Profile, "a request delivered twice gets a bounded outcome (suppressed, replayed or refused) and the subject goes on serving; client evidence never claims exactly-once delivery"),
        ])
        .alone().launch().http()
        .judged("One read-only request is written twice in one write (the same line, the same id: a transport that delivers again), then a request after it. The duplicated request must be answered at least once and the one after it answered while the subject runs, on JSON-RPC's MUST; how the duplicate was met is reported in the taxonomy's bounded words (duplicate suppression observed, the original result replayed, no duplicate effect observed in this bounded case), never as exactly-once delivery. The control's transport stops passing input on once a request comes twice (a subject that stalls on a duplicate); the mutant's passes the first copy only (suppression at the transport), which must be read as bounded. Over Streamable HTTP the same body (the same id) is posted on two fresh connections, both written before either answer is read, and the request after it on a third; the control and the mutant are at the shim's front, which reads each connection's request whole: the control holds every connection from the second copy on open and unanswered, the mutant closes the second copy's connection without an answer."),
    CheckDecl::new(P, "graceful-shutdown", ending::graceful_shutdown, reading::SHUTDOWN_WITHIN_BUDGET, reading::SHUTDOWN_OVER_BUDGET)
        .basis(&[Basis::both(PROFILE, "required check graceful-shutdown", L::Profile, "with its stdin closed (MCP's stdio shutdown: the client closes the server's input first and waits for it to exit), the subject exits by itself within the workload's shutdown budget; over Streamable HTTP, once its client has ended the session, SIGTERM ends it within that budget")])
        .alone().launch().http()
        .judged("MCP's lifecycle asks the client to close the server's input and wait for it to exit before any signal; it sets no time, so the time is judged on the workload's budget only. How many of the requests sent right before the close were answered is reported, not judged: MCP leaves the end of a connection to the transport, and a client that closes the server's input has ended it. The control holds the subject's end of file back the budget plus a second (at the transport, the shim); the mutant a quarter of the budget. Over Streamable HTTP a server has no input to close and MCP leaves its process to its operator: the client ends its session as MCP says (a DELETE with the session id, whose answer, 405 included, is reported and not judged; with no id, its connections closed), then the process is sent SIGTERM, the ordinary stop of a server, and must exit within the shutdown budget (forced-shutdown sends SIGTERM while the session is still open, on the term budget). There the control and the mutant hold SIGTERM back instead of the end of file."),
    CheckDecl::new(P, "forced-shutdown", ending::forced_shutdown, reading::TERM_WITHIN_BUDGET, reading::TERM_OVER_BUDGET)
        .basis(&[Basis::both(PROFILE, "required check forced-shutdown", L::Profile, "sent SIGTERM while serving (stdin still open), the subject exits within the workload's term budget")])
        .alone().launch().http()
        .judged("MCP's stdio shutdown sends SIGTERM when the server has not exited after its input closed, and SIGKILL after that; no time is set, so the time is judged on the workload's budget only. A subject that ignores SIGTERM is killed and fails. The control passes SIGTERM on to the subject the budget plus a second late (the shim); the mutant a quarter of the budget late."),
    CheckDecl::new(P, "memory-resource-leak", memory_leak, reading::RSS_BOUNDED, reading::RSS_GROWTH)
        .basis(&[Basis::both(PROFILE, "required check memory-resource-leak", L::Profile, "the subject's resident memory, and its open files, grow no faster than the workload's declared budgets per 1,000 operations over the soak (a least-squares slope over the second half of the soak after the warm-up; growth under 4 MiB, or under two files, never read as a leak)")])
        .alone().launch().http()
        .judged("No MCP requirement: judged on the workload's budgets only (rssKibPer1000Ops, then fdsPer1000Ops: every descriptor of the subject's process tree), by the slope over the second half of the soak after the warm-up (a garbage-collected heap has the first half to reach its size), never by one sample. The control injects a leak beside the subject, in its process tree, of the budget times the workload's defect factor or 8 MiB a second, whichever is larger (resident memory grows in 2 MiB huge-page steps); the mutant keeps the same memory once, at the start: a step, which the slope must not read as a leak."),
    CheckDecl::new(P, "listener-leak", listener_leak, reading::LISTENERS_BOUNDED, reading::LISTENERS_GROWTH)
        .basis(&[Basis::both(PROFILE, "required check listener-leak", L::Profile, "the subject's listening sockets grow no faster than the workload's budget per 1,000 operations over the soak")])
        .alone().launch().http()
        .judged("No MCP requirement: judged on the workload's budget by the slope over the soak. The control leaves listening loopback sockets open beside the subject (the budget times the defect factor, at least five a second); the mutant opens and closes them (churn, no growth)."),
    CheckDecl::new(P, "child-process-leak", child_leak, reading::CHILDREN_BOUNDED, reading::CHILDREN_GROWTH)
        .basis(&[Basis::both(PROFILE, "required check child-process-leak", L::Profile, "the subject's live descendants grow no faster than the workload's budget per 1,000 operations over the soak")])
        .alone().launch().http()
        .judged("No MCP requirement: judged on the workload's budget by the slope over the soak. The control leaves idle children running beside the subject (the budget times the defect factor, at least five a second); the mutant starts children that exit at once (churn, no growth)."),
    CheckDecl::new(P, "bounded-soak", bounded_soak, reading::SOAK_WITHIN_BUDGET, reading::SOAK_OVER_BUDGET)
        .basis(&[Basis::both(PROFILE, "required check bounded-soak", L::Profile, "over the soak after the warm-up, latency from the intended send (p50, p95, p99) and the share of requests without a result stay within the workload's budgets")])
        .alone().launch().http()
        .judged("No MCP requirement: judged on the workload's budgets only, from the record of every request. The control holds each of the subject's answers 1.5 x the p99 budget at the transport (the taxonomy's delayed-response); the mutant holds them a quarter of the p50 budget. Over Streamable HTTP the hold is at the shim's front, a relay on the port the runner connects to, with the subject serving behind it on another: each response is held from when its first bytes arrive."),
    CheckDecl::new(P, "cleanup", ending::cleanup, reading::CLEANUP_COMPLETE, reading::RESIDUE_LEFT)
        .basis(&[Basis::both(PROFILE, "required check cleanup", L::Profile, "once the subject has ended (stdin closed, then SIGTERM, then its process group killed), no process of its tree is alive")])
        .alone().launch().http()
        .judged("No MCP requirement: the profile's own. Read from the probe's end record: every process seen below the subject, left in its process group or (in the sandbox) in its PID namespace and still alive once it ended. The control leaves an idle process in its own session beside the subject (the taxonomy's cleanup-failure: a residue that must be reported); the mutant starts children that end by themselves."),
];

pub(super) fn workload<'c>(ctx: &'c Ctx<'_>) -> &'c Workload {
    ctx.ops
        .as_deref()
        .expect("an operational run has a workload")
}

/// The subject's launch with `spec` injected through the shim (its own launch when
/// nothing is injected).
pub(super) fn shimmed(ctx: &Ctx, spec: &Value) -> Result<Launch, String> {
    shimmed_over(ctx, ctx.stdio_launch(), spec)
}

/// [`shimmed`] for the launch `base` (the subject's, or its other version's).
pub(super) fn shimmed_over(ctx: &Ctx, base: &Launch, spec: &Value) -> Result<Launch, String> {
    let at_front = serde_json::from_value::<Spec>(spec.clone()).is_ok_and(|s| s.at_front());
    if let Some(web) = &ctx.web
        && at_front
    {
        // Over Streamable HTTP the answers are held, and requests over a limit dropped
        // or refused, at the shim's front, on the port the runner connects to; the
        // subject serves behind it on one the shim picks.
        let back = |s: &String| s.replace("{port}", crate::produce::drive::front::BACK_PORT);
        let behind = Launch {
            program: base.program.clone(),
            args: base.args.iter().map(back).collect(),
            env: base.env.iter().map(|(k, v)| (k.clone(), back(v))).collect(),
            sandbox: base.sandbox.clone(),
        };
        let mut spec = spec.clone();
        spec["httpFront"] = json!(match web.ip {
            std::net::IpAddr::V4(ip) => format!("{ip}:{{port}}"),
            std::net::IpAddr::V6(ip) => format!("[{ip}]:{{port}}"),
        });
        return shim_over(&behind, &spec);
    }
    shim_over(base, spec)
}

/// `base` with `spec` injected through the shim (`base` itself when nothing is).
pub(crate) fn shim_over(base: &Launch, spec: &Value) -> Result<Launch, String> {
    let parsed: Spec =
        serde_json::from_value(spec.clone()).map_err(|e| format!("bad injection {spec}: {e}"))?;
    if parsed == Spec::default() {
        return Ok(base.clone());
    }
    let me = std::env::current_exe().map_err(|e| format!("cannot find mcpres itself: {e}"))?;
    Ok(Launch {
        program: me,
        args: parsed.args(&base.program, &base.args),
        env: base.env.clone(),
        sandbox: base.sandbox.clone(),
    })
}

/// The record every operational observation carries.
pub(super) fn record(ctx: &Ctx, check: &str, role: &str, kind: &str) -> Value {
    let w = workload(ctx).to_json();
    json!({
        "kind": kind,
        "workload": w,
        "workloadSha256": workload(ctx).sha256(),
        "injected": reading::injection_over(check, role, &w, ctx.web.is_some()),
        "transport": if ctx.web.is_some() { "streamable-http" } else { "stdio" },
    })
}

/// An observation labelled by the judge's reading of its record.
pub(super) fn labelled(
    check: &str,
    role: &str,
    expected: (ProbeOutcome, &str),
    negative: &str,
    artifact: Value,
) -> Obs {
    crate::produce::profile::check::labelled_by(
        reading::reading,
        check,
        role,
        expected,
        negative,
        artifact,
    )
}

pub(super) fn expected(
    role: &str,
    held: &'static str,
    refused: &'static str,
) -> (ProbeOutcome, &'static str) {
    match role {
        "negative" => (Reject, refused),
        _ => (Accept, held),
    }
}

pub(crate) fn reply_label(r: &Reply) -> String {
    match r {
        Reply::Result(_) => "result".into(),
        Reply::Error(c, _) => format!("error:{c}"),
        Reply::Silent => "silent".into(),
        Reply::Closed => "closed".into(),
    }
}

/// A liveness request after what a check did, waited for up to the answer window; its
/// id is the record's `afterId` (the reading looks for its answer in the stored stdout).
pub(super) fn live_after(ctx: &Ctx, probe: &mut Probe, rec: &mut Value) {
    let (after, line) = ctx.live_line();
    probe.send(line);
    let _ = probe.reply(&after, ctx.answer);
    rec["afterId"] = after;
}

/// The operational record of observation `transcript`, taken out of it (the transcript
/// is left without `observation`): for a baseline nested in another observation's record.
pub(super) fn take_record(transcript: &mut Value) -> Value {
    let rec = transcript
        .get_mut("observation")
        .and_then(|o| o.get_mut("ops"))
        .map(Value::take)
        .unwrap_or_default();
    if let Some(obj) = transcript.as_object_mut() {
        obj.remove("observation");
    }
    rec
}

/// The three observations of a check, each made by `run(role)` and labelled by the
/// judge's reading ([`crate::produce::profile::check::three_by`]).
pub(super) fn three(
    check: &'static str,
    held: &'static str,
    negative: (ProbeOutcome, &'static str),
    mutant: (ProbeOutcome, &'static str),
    run: impl FnMut(&str) -> Value,
) -> CheckRun {
    crate::produce::profile::check::three_by(reading::reading, check, held, negative, mutant, run)
}

/// [`three`] for a check whose positive can show that the subject does not offer what
/// the check reads (a limit never reached, a declared write that never works): that
/// positive's NOT_OBSERVED reading makes the check NOT_OBSERVED, with its reason, and
/// no control is run.
pub(super) fn three_unless_unobserved(
    check: &'static str,
    held: &'static str,
    negative: (ProbeOutcome, &'static str),
    mutant: (ProbeOutcome, &'static str),
    run: impl FnMut(&str) -> Value,
) -> CheckRun {
    crate::produce::profile::check::three_unless_unobserved_by(
        reading::reading,
        crate::diag::reasons::OPS_INJECTION_NOT_DECLARED,
        check,
        held,
        negative,
        mutant,
        run,
    )
}

/// The (shimmed) subject of `rec`'s injection started and opened, the opening's answer
/// recorded in `rec`; or, when it could not start, the observation that says why.
pub(super) fn started(ctx: &Ctx, rec: &mut Value) -> Result<(Probe, Reply), Value> {
    started_with_faults(ctx, rec, Vec::new())
}

/// [`started`], with `faults` injected into the subject's sandbox (when the run has one).
pub(super) fn started_with_faults(
    ctx: &Ctx,
    rec: &mut Value,
    faults: Vec<crate::produce::drive::sandbox::Fault>,
) -> Result<(Probe, Reply), Value> {
    let launch = shimmed(ctx, &rec["injected"]).and_then(|mut l| {
        if let Some(sandbox) = l.sandbox.as_mut() {
            sandbox.faults = faults;
        }
        ctx.start_with(&l)
    });
    match launch {
        Ok(mut probe) => {
            let open = ctx.open(&mut probe);
            rec["open"] = json!(reply_label(&open));
            Ok((probe, open))
        }
        Err(why) => {
            rec["startError"] = json!(why);
            Err(json!({"observation": {"ops": rec}}))
        }
    }
}

/// Start the (shimmed) subject `n` times in a row, each opened and ended, and
/// record each start's time to the opening's answer. The transcript kept is the last
/// start's.
fn starts(ctx: &Ctx, check: &str, role: &str, n: u32) -> Value {
    let mut rec = record(ctx, check, role, "start");
    let launch = match shimmed(ctx, &rec["injected"]) {
        Ok(l) => l,
        Err(why) => {
            rec["starts"] = json!([{"open": "start-error", "why": why}]);
            return json!({"observation": {"ops": rec}});
        }
    };
    let mut list = Vec::new();
    let mut last = Value::Null;
    for k in 0..n {
        // warm-start judges its last start only: the starts before it warm the
        // subject up as it is, with nothing injected (a delay there would only
        // lengthen the run).
        let first_of_warm = check == "warm-start" && k + 1 < n;
        let this = if first_of_warm {
            ctx.stdio_launch()
        } else {
            &launch
        };
        if ctx.web.is_some() {
            let (start, transcript) = super::http::start(ctx, this, first_of_warm);
            let failed = start["open"] == "start-error";
            list.push(start);
            last = transcript;
            if failed {
                break;
            }
            continue;
        }
        match ctx.start_with(this) {
            Err(why) => {
                list.push(json!({"open": "start-error", "why": why}));
                break;
            }
            Ok(mut probe) => {
                let open = ctx.open(&mut probe);
                let ms = probe.elapsed_ms();
                let mut start = json!({"open": reply_label(&open), "ms": ms});
                if first_of_warm {
                    start["warmUp"] = json!(true);
                }
                list.push(start);
                last = ctx.finish(probe, json!({}));
            }
        }
    }
    rec["starts"] = json!(list);
    if last.is_null() {
        last = json!({});
    }
    last["observation"] = json!({"ops": rec});
    last
}

fn run_starts(ctx: &Ctx, check: &'static str, n_positive: u32) -> CheckRun {
    let (held, refused) = (reading::START_WITHIN_BUDGET, reading::START_OVER_BUDGET);
    let positive = labelled(
        check,
        "positive",
        expected("positive", held, refused),
        refused,
        starts(ctx, check, "positive", n_positive),
    );
    let count = if check == "warm-start" { 2 } else { 1 };
    let negative = labelled(
        check,
        "negative",
        expected("negative", held, refused),
        refused,
        starts(ctx, check, "negative", count),
    );
    let mutant = labelled(
        check,
        "mutant",
        (Accept, held),
        refused,
        starts(ctx, check, "mutant", count),
    );
    CheckRun::observed(check, positive, negative, mutant)
}

fn cold_start(ctx: &Ctx) -> CheckRun {
    run_starts(ctx, "cold-start", workload(ctx).load.cold_starts)
}

fn warm_start(ctx: &Ctx) -> CheckRun {
    run_starts(ctx, "warm-start", 2)
}

/// A seeded malformed line: bytes that are not JSON (an invalid UTF-8 byte among them),
/// the taxonomy's `seeded-invalid-byte-sequence`.
fn malformed_line(seed: u64, n: u64) -> Vec<u8> {
    // splitmix64: the same seed gives the same flood.
    let mut x = seed.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    let mut line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"", x % 1000).into_bytes();
    line.push(0xC0 | (x as u8 & 0x1F));
    line.extend_from_slice(format!("{x:x}").as_bytes());
    line.push(b'\n');
    line
}

fn flood(ctx: &Ctx, role: &str) -> Value {
    let w = workload(ctx);
    let mut rec = record(ctx, "malformed-flood", role, "flood");
    if ctx.web.is_some() {
        return super::http::flood(ctx, rec, role, |n| malformed_line(w.controls.seed, n));
    }
    let mut probe = match ctx.start() {
        Ok(p) => p,
        Err(why) => {
            rec["startError"] = json!(why);
            return json!({"observation": {"ops": rec}});
        }
    };
    probe.keep_more_stdout(4 << 20);
    let open = ctx.open(&mut probe);
    rec["open"] = json!(reply_label(&open));
    let lines = u64::from(w.load.flood_lines);
    let mut valid = Vec::new();
    let mut flood_ids = Vec::new();
    for n in 0..lines {
        if role == "mutant" {
            let (id, line) = ctx.line(&crate::produce::profile::check::unknown_method(), json!({}));
            flood_ids.push(id);
            probe.send(line);
        } else {
            probe.send(malformed_line(w.controls.seed, n));
        }
        if role == "positive" && (n + 1) % u64::from(w.load.flood_valid_every) == 0 {
            let (id, line) = ctx.live_line();
            valid.push(id);
            probe.send(line);
        }
    }
    // The request after the flood: answered, the subject is still serving.
    let (id, line) = ctx.live_line();
    valid.push(id.clone());
    probe.send(line);
    let bound = ctx.answer + Duration::from_millis(lines / 10);
    let after = probe.reply(&id, bound);
    // Whatever else is on its way, within a short settle.
    std::thread::sleep(ctx.paced(Duration::from_millis(100)));
    rec["afterFlood"] = json!(reply_label(&after));
    rec["floodLines"] = json!(lines);
    rec["validIds"] = json!(valid);
    rec["floodIds"] = json!(flood_ids);
    ctx.finish(probe, json!({"ops": rec}))
}

fn malformed_flood(ctx: &Ctx) -> CheckRun {
    let refused = reading::FLOOD_REFUSED;
    three(
        "malformed-flood",
        reading::SERVED_THROUGH_FLOOD,
        (Reject, refused),
        (Reject, reading::FLOOD_REQUESTS_REFUSED),
        |role| flood(ctx, role),
    )
}

/// One soak of the (shimmed) subject: opened, the workload's schedule for `duration`,
/// sampled; the record holds every request and sample.
fn soak(ctx: &Ctx, check: &str, role: &str, duration: Duration) -> Value {
    let w = workload(ctx);
    let mut rec = record(ctx, check, role, "soak");
    rec["generator"] = ctx.ops_shared.ceiling(ctx);
    if ctx.web.is_some() {
        return super::http::soak_observation(ctx, w, rec, duration, check == "bounded-soak");
    }
    let launch = match shimmed(ctx, &rec["injected"]) {
        Ok(l) => l,
        Err(why) => {
            rec["startError"] = json!(why);
            return json!({"observation": {"ops": rec}});
        }
    };
    let mut probe: Probe = match ctx.start_with(&launch) {
        Ok(p) => p,
        Err(why) => {
            rec["startError"] = json!(why);
            return json!({"observation": {"ops": rec}});
        }
    };
    // bounded-soak reads every answer from the stored stdout; a leak reading needs
    // only the samples (its transcript keeps what every transcript keeps).
    if check == "bounded-soak" {
        probe.keep_more_stdout(8 << 20);
    }
    let open = ctx.open(&mut probe);
    rec["open"] = json!(reply_label(&open));
    if matches!(open, Reply::Result(_)) {
        let drain = ctx.answer + Duration::from_millis(reading_delay(&rec["injected"]));
        load::soak(ctx, &mut probe, w, duration, drain, true).put(&mut rec, duration);
    }
    ctx.finish(probe, json!({"ops": rec}))
}

fn reading_delay(injected: &Value) -> u64 {
    injected["responseDelayMs"].as_u64().unwrap_or(0)
}

/// The positive soak, made once and read by every soak check (relabelled per check).
fn positive_soak(ctx: &Ctx, check: &str) -> Value {
    let mut t = ctx.ops_shared.positive_soak(|| {
        soak(
            ctx,
            "bounded-soak",
            "positive",
            Duration::from_millis(workload(ctx).load.soak_ms),
        )
    });
    // A leak reading needs the samples, not the bytes: its copy of the soak leaves the
    // stdio chunks to bounded-soak's (each copy of every answer would be stored again).
    // Over Streamable HTTP likewise with the connections' bytes.
    if ctx.web.is_some() {
        if check != "bounded-soak" {
            t["http"] = json!({
                "omitted": "the soak's HTTP connections are stored with bounded-soak's positive, whose record this is too"
            });
        }
    } else if check != "bounded-soak" {
        t["chunks"] = json!([]);
        t["chunksOmitted"] = json!(
            "the soak's stdin and stdout are stored with bounded-soak's positive, whose record this is too"
        );
    }
    // The positive injects nothing, whichever check reads it.
    t["observation"]["ops"]["injected"] =
        reading::injection(check, "positive", &t["observation"]["ops"]["workload"]);
    t
}

fn soak_check(
    ctx: &Ctx,
    check: &'static str,
    held: &'static str,
    refused: &'static str,
) -> CheckRun {
    let control = Duration::from_millis(workload(ctx).load.control_soak_ms);
    let positive = labelled(
        check,
        "positive",
        (Accept, held),
        refused,
        positive_soak(ctx, check),
    );
    // The memory and listener readings are slopes of the sampled RSS and sockets
    // over each soak's own operations, not times: their control and mutant soak side
    // by side (neither starts a process of its own whose orphans another probe's
    // sweep could take). bounded-soak reads latencies and child-process-leak
    // children, so theirs run one after the other.
    let (negative, mutant) = if matches!(check, "memory-resource-leak" | "listener-leak") {
        std::thread::scope(|scope| {
            let negative = scope.spawn(|| soak(ctx, check, "negative", control));
            let mutant = soak(ctx, check, "mutant", control);
            (negative.join().expect("the control's soak"), mutant)
        })
    } else {
        (
            soak(ctx, check, "negative", control),
            soak(ctx, check, "mutant", control),
        )
    };
    let negative = labelled(check, "negative", (Reject, refused), refused, negative);
    let mutant = labelled(check, "mutant", (Accept, held), refused, mutant);
    CheckRun::observed(check, positive, negative, mutant)
}

fn memory_leak(ctx: &Ctx) -> CheckRun {
    soak_check(
        ctx,
        "memory-resource-leak",
        reading::RSS_BOUNDED,
        reading::RSS_GROWTH,
    )
}

fn listener_leak(ctx: &Ctx) -> CheckRun {
    soak_check(
        ctx,
        "listener-leak",
        reading::LISTENERS_BOUNDED,
        reading::LISTENERS_GROWTH,
    )
}

fn child_leak(ctx: &Ctx) -> CheckRun {
    soak_check(
        ctx,
        "child-process-leak",
        reading::CHILDREN_BOUNDED,
        reading::CHILDREN_GROWTH,
    )
}

fn bounded_soak(ctx: &Ctx) -> CheckRun {
    soak_check(
        ctx,
        "bounded-soak",
        reading::SOAK_WITHIN_BUDGET,
        reading::SOAK_OVER_BUDGET,
    )
}
