//! The checks of `mcp-res/protocol-revision/v1`: thirteen required and four
//! conditional ones (2026-07-28 only), over stdio, each with a positive
//! observation, a reason-bound negative control and a wrong-reason mutant.

use serde_json::{Value, json};

use super::check::{
    CheckRun, Ctx, Evidence, NO_ANSWER, Obs, SUBJECT_EXITED, SYNTAX_GUARD, json_line, mutant, obs,
    open_failed, syntax_defect, unsupported_version,
};
use super::decl::{Basis, CheckDecl, JSONRPC, Level as L, MCP_2025, MCP_2026, Offer, RFC8259};
use super::probe::{Probe, Reply};
use super::stdio::{check, line_control, opened};
use crate::diag::reasons;
use crate::model::mcp::{META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO, Revision};
use crate::model::vocab::ProbeOutcome::{self, Accept, NoEffect, Reject, Terminate};

/// The profile these checks belong to.
const P: &str = "mcp-res/protocol-revision/v1";
const LIFECYCLE_INIT: &str = "Basic › Lifecycle › Initialization";
const VERSION_2025: &str = "Basic › Lifecycle › Version Negotiation";
const VERSION_2026: &str = "Basic › Versioning › Protocol Version Negotiation";
const META_2026: &str = "Basic › _meta (per-request protocol fields)";
const REQUESTS: &str = "Basic › Messages › Requests";
const RESPONSES: &str = "Basic › Messages › Responses";
const STATELESS: &str = "Basic › Statelessness";
const V2026: Revision = Revision::V2026_07_28;

/// The checks, in manifest order, as declarations (spec/profiles.md, "What each
/// check stands on"); the last four apply at 2026-07-28 only.
pub const CHECKS: &[CheckDecl] = &[
    CheckDecl::new(P, "explicit-protocol-revision", explicit_protocol_revision, reasons::REVISION_EXPLICIT, reasons::REVISION_MISSING_REFUSED)
        .basis(&[
            Basis::pos(MCP_2025, VERSION_2025, L::Must, "a server that supports the requested version MUST respond with the same version"),
            Basis::pos(MCP_2026, VERSION_2026, L::Must, "every request declares its protocol version in `_meta`, and is served at it"),
            Basis::neg(MCP_2025, LIFECYCLE_INIT, L::None, "the client MUST send a protocol version (a rule for the client; the server's answer to an `initialize` without one is not stated)"),
            Basis::neg(MCP_2026, META_2026, L::Must, "a request without the required protocol version is malformed and MUST be rejected (-32602)"),
        ])
        .judged("At 2025-11-25 the refusal of an `initialize` naming no version is not required: a server that serves it does what the specification leaves open, and the control expects a refusal. At 2026-07-28 both observations stand on MUSTs."),
    CheckDecl::new(P, "supported-version-advertisement", supported_version_advertisement, reasons::VERSIONS_ADVERTISED, reasons::SUPPORTED_VERSION_ADVERTISED)
        .basis(&[
            Basis::both(MCP_2025, VERSION_2025, L::Must, "for a version it does not support, the server MUST respond with another version it supports"),
            Basis::pos(MCP_2026, VERSION_2026, L::Must, "servers MUST implement `server/discover`, whose result lists the supported versions"),
            Basis::neg(MCP_2026, VERSION_2026, L::Must, "an unsupported version MUST get UnsupportedProtocolVersionError (-32022) listing the supported versions"),
        ])
        .judged("Both observations stand on MUSTs at both revisions."),
    CheckDecl::new(P, "unsupported-version-failure", unsupported_version_failure, reasons::SUPPORTED_VERSION_SERVED, reasons::UNSUPPORTED_VERSION_REFUSED)
        .basis(&[
            Basis::both(MCP_2025, VERSION_2025, L::Must, "the server MUST answer the same version when it supports it, another one it supports otherwise (never echo an unsupported one)"),
            Basis::both(MCP_2026, VERSION_2026, L::Must, "an unsupported version MUST get UnsupportedProtocolVersionError (-32022)"),
        ])
        .judged("Both observations stand on MUSTs at both revisions."),
    CheckDecl::new(P, "modern-legacy-auto-behavior", modern_legacy_auto_behavior, reasons::ERA_PROBE_ANSWERED, reasons::ERA_PROBE_VERSION_REFUSED)
        .basis(&[
            Basis::pos(MCP_2026, VERSION_2026, L::Must, "servers MUST implement `server/discover`"),
            Basis::pos(MCP_2025, LIFECYCLE_INIT, L::Must, "the server MUST respond to `initialize`; an unknown method (`server/discover`) gets an error"),
            Basis::neg(MCP_2026, VERSION_2026, L::Must, "a request naming a version the server does not implement MUST get -32022"),
            Basis::neg(JSONRPC, "§4, §5.1", L::Must, "a request MUST be answered; a method the server does not have cannot succeed (-32601)"),
        ])
        .judged("A modern server must refuse the bogus version with -32022. A -32601 (method not found) is never credited as the refusal of a version: a legacy-only server leaves the check NOT_OBSERVED (`MCP_RES_METHOD_NOT_FOUND_NOT_CREDITED`). A server that answers `server/discover` and refuses a legacy `initialize` with -32022 does what the specification allows (a client falls back only on -32601)."),
    CheckDecl::new(P, "stdio-backward-compatibility", stdio_backward_compatibility, reasons::STDIO_LEGACY_INITIALIZE_SERVED, reasons::REINITIALIZE_REFUSED)
        .basis(&[
            Basis::pos(MCP_2025, LIFECYCLE_INIT, L::Must, "the server MUST respond to `initialize`"),
            Basis::pos(MCP_2026, "Basic › Versioning › Backward Compatibility", L::May, "a server MAY implement both eras; a modern-only server rejects `initialize`"),
            Basis::neg(MCP_2025, LIFECYCLE_INIT, L::None, "initialization happens once per session; a second `initialize` is not addressed"),
            Basis::neg(MCP_2026, "Basic › Versioning › Backward Compatibility", L::None, "`initialize` selects legacy semantics for the process; a second one is not addressed"),
        ])
        .judged("At 2026-07-28 serving `initialize` is optional (a modern-only server fails the positive while doing what the specification allows); refusing a second `initialize` is not required at either revision: a server that serves it is NOT_OBSERVED (`MCP_RES_BEHAVIOUR_LEFT_OPEN`)."),
    CheckDecl::new(P, "request-identity-metadata", request_identity_metadata, reasons::REQUEST_ID_ECHOED, reasons::NULL_ID_REFUSED)
        .basis(&[
            Basis::pos(MCP_2025, RESPONSES, L::Must, "responses MUST include the same id as the request"),
            Basis::pos(MCP_2026, RESPONSES, L::Must, "responses MUST include the same id as the request"),
            Basis::neg(MCP_2025, REQUESTS, L::None, "the id MUST NOT be null (a rule for the sender; the receiver's answer is not stated)"),
            Basis::neg(MCP_2026, REQUESTS, L::None, "the id MUST NOT be null (a rule for the sender; the receiver's answer is not stated)"),
        ])
        .judged("The control accepts a refusal or silence; a server that serves the null id answers a request the specification calls invalid, which no MUST forbids the receiver."),
    CheckDecl::new(P, "result-identity-metadata", result_identity_metadata, reasons::RESULT_ID_TYPED, reasons::INVALID_ID_TYPE_REFUSED)
        .basis(&[
            Basis::pos(JSONRPC, "§5", L::Must, "the response id MUST be the same as the request's (type included)"),
            Basis::neg(JSONRPC, "§4", L::None, "the id MUST be a string, number or null (a rule for the sender)"),
            Basis::neg(MCP_2025, REQUESTS, L::None, "requests MUST include a string or integer id (a rule for the sender)"),
            Basis::neg(MCP_2026, REQUESTS, L::None, "requests MUST include a string or integer id (a rule for the sender)"),
        ])
        .judged("The positive stands on a MUST; the refusal of an object id is the profile's reading (the rules bind the sender)."),
    CheckDecl::new(P, "capability-declaration", capability_declaration, reasons::CAPABILITIES_DECLARED, reasons::UNDECLARED_CAPABILITY_REFUSED)
        .offer(Offer::UndeclaredCapability)
        .basis(&[
            Basis::pos(MCP_2025, LIFECYCLE_INIT, L::Must, "the server MUST respond with its capabilities"),
            Basis::pos(MCP_2026, "Server › Discover", L::Must, "the discover result declares the server's capabilities"),
            Basis::neg(MCP_2025, "Server › Tools, Resources, Prompts › Capabilities", L::Must, "a server that supports a feature MUST declare its capability"),
            Basis::neg(MCP_2026, "Server › Tools, Prompts › Capabilities", L::Must, "a server that supports a feature MUST declare its capability"),
        ])
        .judged("Serving the list method of an undeclared capability supports a feature without declaring it. A server that declares every capability with a list method leaves the check NOT_OBSERVED."),
    CheckDecl::new(P, "extension-declaration", extension_declaration, reasons::EXTENSIONS_WELL_DECLARED, reasons::UNDECLARED_EXTENSION_REFUSED)
        .basis(&[
            Basis::pos(MCP_2025, "Schema › ServerCapabilities.experimental", L::Must, "`experimental` maps names to objects"),
            Basis::pos(MCP_2026, "Basic › Versioning › Extension Negotiation", L::Must, "`extensions` maps identifiers (with the `_meta` naming rules) to settings objects"),
            Basis::neg(JSONRPC, "§4, §5.1", L::Must, "a request MUST be answered; a method the server does not have cannot succeed (-32601)"),
        ])
        .judged("Both observations stand on MUSTs; any JSON-RPC error for the unregistered method is the refusal."),
    CheckDecl::new(P, "json-schema-dialect-identity", json_schema_dialect_identity, reasons::SCHEMA_DIALECT_IDENTIFIED, reasons::SCHEMA_VIOLATION_REFUSED)
        .offer(Offer::TypedArgumentTool)
        .basis(&[
            Basis::pos(MCP_2025, "Basic › JSON Schema Usage", L::Must, "schemas MUST be valid for their declared or default (2020-12) dialect"),
            Basis::pos(MCP_2026, "Basic › JSON Schema Usage", L::Must, "schemas MUST be valid for their declared or default (2020-12) dialect"),
            Basis::neg(MCP_2025, "Server › Tools › Security Considerations", L::Must, "servers MUST validate all tool inputs"),
            Basis::neg(MCP_2026, "Server › Tools › Security Considerations", L::Must, "servers MUST validate all tool inputs"),
        ])
        .judged("Both observations stand on MUSTs; a JSON-RPC error or a result with `isError` is the refusal, credited only when the same call with well-typed arguments (the valid twin) was served just before on the same process: a server that refuses every call is NOT_OBSERVED (`MCP_RES_VALID_TWIN_REFUSED`). A server with no tool taking a typed required argument leaves the check NOT_OBSERVED."),
    CheckDecl::new(P, "safe-integer-constraints", safe_integer_constraints, reasons::SAFE_INTEGER_PRESERVED, reasons::UNSAFE_INTEGER_NOT_CORRUPTED)
        .basis(&[
            Basis::both(JSONRPC, "§5", L::Must, "the response id MUST be the request's: never a rounded neighbour"),
            Basis::both(RFC8259, "§6", L::None, "integers within ±(2^53-1) are interoperable; beyond, precision may be lost"),
        ])
        .judged("The control accepts any answer but one under a rounded id (a refusal, silence, or the exact id)."),
    CheckDecl::new(P, "interleaved-unrelated-requests", interleaved_unrelated_requests, reasons::INTERLEAVED_MATCHED_BY_ID, reasons::STRAY_RESPONSE_IGNORED)
        .basis(&[
            Basis::pos(JSONRPC, "§5", L::Must, "each response carries its request's id"),
            Basis::neg(JSONRPC, "§5", L::None, "a Response is sent for a request; nothing is defined for a response the server never asked for"),
        ])
        .judged("How a server meets a stray response is not stated: the control expects no reply, on the profile's reading."),
    CheckDecl::new(P, "no-connection-as-conversation", no_connection_as_conversation, reasons::EACH_CONNECTION_OPENS_ITS_OWN, reasons::NO_STATE_ACROSS_CONVERSATIONS)
        .basis(&[
            Basis::pos(MCP_2025, LIFECYCLE_INIT, L::Must, "each process opens with `initialize`, which the server MUST answer"),
            Basis::pos(MCP_2026, STATELESS, L::Must, "servers MUST NOT rely on prior requests over the same connection"),
            Basis::neg(MCP_2025, LIFECYCLE_INIT, L::None, "initialization MUST be the first interaction (a rule for the client; pings are allowed early, and the answer to one before `initialize` is not stated)"),
            Basis::neg(MCP_2026, VERSION_2026, L::Must, "a request naming a version the server does not implement MUST get -32022, whatever came before"),
        ])
        .judged("At 2025-11-25 a server that answers `tools/list` before `initialize` does what the specification leaves open (NOT_OBSERVED, `MCP_RES_BEHAVIOUR_LEFT_OPEN`); -32601 is never credited as the -32022 refusal. At 2026-07-28 the control stands on a MUST."),
    CheckDecl::new(P, "stateless-request-metadata", stateless_request_metadata, reasons::REQUEST_METADATA_HONOURED, reasons::REQUEST_METADATA_REQUIRED)
        .only(V2026)
        .basis(&[
            Basis::both(MCP_2026, META_2026, L::Must, "requests carry the protocol version and client capabilities; a request missing one is malformed and MUST be rejected (-32602)"),
        ])
        .judged("Both observations stand on MUSTs."),
    CheckDecl::new(P, "server-discover", server_discover, reasons::DISCOVER_COMPLETE, reasons::DISCOVER_INVALID_PARAMS_REFUSED)
        .only(V2026)
        .basis(&[
            Basis::pos(MCP_2026, VERSION_2026, L::Must, "servers MUST implement `server/discover` (supported versions, capabilities, server info)"),
            Basis::neg(JSONRPC, "§4.2", L::None, "params MUST be an array or object (a rule for the sender)"),
            Basis::neg(JSONRPC, "§5", L::Must, "a call MUST be answered with a Response: silence on a request with an id breaks it"),
        ])
        .judged("The positive stands on a MUST. Which error refuses `\"params\": 5` is the profile's reading (the params rule binds the sender), but a request with an id MUST get a Response: a server that stays silent fails."),
    CheckDecl::new(P, "no-session-id-assumption", no_session_id_assumption, reasons::SESSIONLESS_SERVED, reasons::SESSION_ID_NOT_REQUIRED)
        .only(V2026)
        .basis(&[
            Basis::pos(MCP_2026, VERSION_2026, L::Must, "clients need not call `server/discover` first; any request may come first"),
            Basis::both(MCP_2026, STATELESS, L::Must, "servers MUST NOT rely on prior requests to establish context (there is no session to look up)"),
        ])
        .judged("Both observations stand on MUSTs."),
    CheckDecl::new(P, "required-result-type", required_result_type, reasons::RESULT_TYPE_PRESENT, reasons::ERROR_CARRIES_NO_RESULT)
        .only(V2026)
        .basis(&[
            Basis::pos(MCP_2026, RESPONSES, L::Must, "the `result` MUST include a `resultType`"),
            Basis::neg(JSONRPC, "§5", L::Must, "a response has `result` or `error`, never both"),
        ])
        .judged("Both observations stand on MUSTs."),
];

/// The released revisions a counter-offer may name.
const RELEASED: &[&str] = crate::judge::RELEASED_REVISIONS;
/// A version no revision has.
/// `UnsupportedProtocolVersionError` (2026-07-28).
const UNSUPPORTED_VERSION: i64 = crate::judge::profile::UNSUPPORTED_VERSION_CODE;

fn answered(reply: &Reply, ok: bool, held: &str, wrong: &str) -> (ProbeOutcome, String) {
    match reply {
        Reply::Result(_) if ok => (Accept, held.into()),
        Reply::Result(_) => (Accept, wrong.into()),
        Reply::Error(..) => (Reject, reasons::REQUEST_REFUSED.into()),
        Reply::Silent => (ProbeOutcome::NotObserved, NO_ANSWER.into()),
        Reply::Closed => (Terminate, SUBJECT_EXITED.into()),
    }
}

/// A positive observation made of one request after opening, judged by `ok`
/// on its answer.
fn request_positive(
    ctx: &Ctx,
    held: &'static str,
    wrong: &'static str,
    method: &str,
    params: Value,
    ok: impl Fn(&Value) -> bool,
) -> Obs {
    opened(ctx, Accept, held, |probe, _open| {
        let (id, line) = ctx.line(method, params);
        probe.send(line);
        let reply = probe.reply(&id, ctx.answer);
        let good = matches!(&reply, Reply::Result(m) if ok(m));
        (
            answered(&reply, good, held, wrong),
            format!("{method}: {}", reply.label()),
            json!({"reply": reply.label()}),
        )
    })
}

/// A positive observation of the opening answer alone.
fn open_positive(
    ctx: &Ctx,
    held: &'static str,
    wrong: &'static str,
    ok: impl Fn(&Value) -> bool,
) -> Obs {
    match ctx.start() {
        Err(why) => open_failed(Accept, held, why.clone(), json!({"startError": why})),
        Ok(mut probe) => {
            let open = ctx.open(&mut probe);
            let good = matches!(&open, Reply::Result(m) if ok(m));
            let c = answered(&open, good, held, wrong);
            let detail = format!("{}: {}", ctx.open_request().0, open.label());
            let artifact = ctx.finish(probe, json!({"open": open.label()}));
            obs(Accept, held, c, true, detail, artifact)
        }
    }
}

/// A control line's maker: the request's id (if any) and its bytes.
type LineMaker<'a> = &'a dyn Fn(&Ctx) -> (Option<Value>, Vec<u8>);

/// How a control's mutant is made: the control's line with a JSON syntax
/// defect, or (where the property has its own error code) a request that is
/// invalid in another field, read by the same classifier; `expected` is the
/// reason that other request should get.
enum Mutation<'a> {
    Syntax,
    /// A control a subject may meet with silence: the mutant is a request
    /// for a method no server has, which must be answered
    /// ([`super::stdio::answered_mutant`]).
    Answered,
    OtherField {
        make: LineMaker<'a>,
        expected: &'static str,
    },
}

/// Was a twin's answer an acceptance: a result, and not a tool's `isError`?
fn twin_accepted(reply: &Reply) -> bool {
    matches!(reply, Reply::Result(m) if m.pointer("/result/isError") != Some(&json!(true)))
}

/// A negative control bound to its property: on one process (opened first
/// with `open_first`, else fresh), the near-identical valid request `twin`
/// is sent and must be accepted (a result that is not `isError`); only then
/// is the control line `make` read by `classify`. A twin not accepted leaves
/// the control uncredited (NOT_OBSERVED, `MCP_RES_VALID_TWIN_REFUSED`): a
/// subject that refuses everything is not credited with the property's
/// reason. The twin's id and the control's id are recorded in the artifact's
/// observation (`twin`, `requestId`), so the judge re-derives both readings
/// from the stored stdout. The mutant is made the same way, after its own
/// twin.
fn bound_control(
    ctx: &Ctx,
    open_first: bool,
    reason: &str,
    twin: impl Fn(&Ctx) -> (Value, Vec<u8>),
    make: impl Fn(&Ctx) -> (Option<Value>, Vec<u8>),
    mutation: Mutation,
    classify: impl Fn(&Evidence) -> (ProbeOutcome, String),
) -> (Obs, Obs) {
    let run = |mutant: bool| -> (Obs, Option<(ProbeOutcome, String)>) {
        let mut observed = None;
        let body = |probe: &mut Probe| {
            let (twin_id, twin_line) = twin(ctx);
            probe.send(twin_line);
            let bound = if open_first { ctx.answer } else { ctx.startup };
            let twin_reply = probe.reply(&twin_id, bound);
            let (id, line) = match (&mutation, mutant) {
                (_, false) => make(ctx),
                (Mutation::Syntax | Mutation::Answered, true) => {
                    let (id, line) = make(ctx);
                    (id, syntax_defect(&line))
                }
                (Mutation::OtherField { make, .. }, true) => make(ctx),
            };
            let ev = ctx.exchange(probe, line, id.as_ref());
            let c = super::check::twin_bound(classify(&ev), twin_accepted(&twin_reply));
            let detail = format!(
                "valid twin: {}; control: {}; still serving: {}",
                twin_reply.label(),
                ev.reply.label(),
                ev.alive
            );
            let mut summary = ev.summary();
            summary["requestId"] = json!(id);
            summary["twin"] = json!({"id": twin_id, "reply": twin_reply.label()});
            (c, detail, summary)
        };
        let o = if open_first {
            opened(ctx, Reject, reason, |probe, _open| {
                let (c, detail, summary) = body(probe);
                observed = Some(c.clone());
                (c, detail, summary)
            })
        } else {
            match ctx.start() {
                Err(why) => open_failed(Reject, reason, why.clone(), json!({"startError": why})),
                Ok(mut probe) => {
                    let (c, detail, summary) = body(&mut probe);
                    observed = Some(c.clone());
                    let artifact = ctx.finish(probe, summary);
                    obs(Reject, reason, c, true, detail, artifact)
                }
            }
        };
        (o, observed)
    };
    let (negative, _) = run(false);
    if let Mutation::Answered = mutation {
        let fresh = (!open_first).then_some(ctx.startup);
        let m =
            super::stdio::answered_mutant(ctx, reason, fresh, super::stdio::unknown_method_line);
        return (negative, m);
    }
    let (m, observed) = run(true);
    let observed = observed.unwrap_or((ProbeOutcome::NotObserved, m.observed_reason.clone()));
    let mut m = mutant(reason, observed, m.detail.clone(), m.artifact);
    if let Mutation::OtherField { expected, .. } = mutation {
        m.expected_reason = expected.into();
    }
    (negative, m)
}

/// A valid request of `method` under the evaluated revision, as a twin.
fn twin_of(method: &'static str, params: Value) -> impl Fn(&Ctx) -> (Value, Vec<u8>) {
    move |ctx: &Ctx| ctx.line(method, params.clone())
}

/// A request under the evaluated revision whose `_meta` lacks the client
/// capabilities: invalid in another field than the protocol version, the
/// wrong-reason mutant of a control that expects exactly -32022.
fn capabilities_missing(ctx: &Ctx) -> (Option<Value>, Vec<u8>) {
    let id = ctx.id();
    let line = raw(
        &id,
        "tools/list",
        json!({"_meta": {META_PROTOCOL_VERSION: ctx.revision.as_str()}}),
    );
    (Some(id), line)
}

fn raw(id: &Value, method: &str, params: Value) -> Vec<u8> {
    json_line(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

/// Params whose `_meta` names `version` (and the client capabilities).
fn meta_with(version: &str) -> Value {
    json!({"_meta": {META_PROTOCOL_VERSION: version, "io.modelcontextprotocol/clientCapabilities": {}}})
}

/// The evaluated revision served: on 2026-07-28 a request naming it is
/// answered; on 2025-11-25 `initialize` for it is answered with it.
fn revision_positive(ctx: &Ctx, held: &'static str, wrong: &'static str) -> Obs {
    let rev = ctx.revision.as_str();
    if ctx.modern() {
        request_positive(ctx, held, wrong, "tools/list", json!({}), |_| true)
    } else {
        open_positive(ctx, held, wrong, |m| {
            m.pointer("/result/protocolVersion") == Some(&json!(rev))
        })
    }
}

fn explicit_protocol_revision(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::REVISION_EXPLICIT;
    const REFUSED: &str = reasons::REVISION_MISSING_REFUSED;
    let positive = revision_positive(ctx, HELD, reasons::REVISION_NOT_HONOURED);
    // The control: a request that names no revision at all.
    let pair = if ctx.modern() {
        bound_control(
            ctx,
            true,
            REFUSED,
            twin_of("tools/list", json!({})),
            |ctx| {
                let id = ctx.id();
                let line = raw(
                    &id,
                    "tools/list",
                    json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
                );
                (Some(id), line)
            },
            Mutation::Syntax,
            |ev| match &*ev.reply {
                Reply::Error(-32601, _) => (
                    ProbeOutcome::NotObserved,
                    reasons::METHOD_NOT_FOUND_NOT_CREDITED.into(),
                ),
                _ => ev.refusal(REFUSED, reasons::REVISION_MISSING_ACCEPTED, false),
            },
        )
    } else {
        line_control(
            ctx,
            false,
            Reject,
            REFUSED,
            |ctx| {
                let id = ctx.id();
                let line = raw(
                    &id,
                    "initialize",
                    json!({"capabilities": {}, "clientInfo": {"name": "mcpres-profile", "version": "1"}}),
                );
                (Some(id), line)
            },
            |ev, _| ev.refusal(REFUSED, reasons::REVISION_MISSING_ACCEPTED, false),
        )
    };
    check("explicit-protocol-revision", positive, pair)
}

/// How a bogus version was answered: (refused with supported versions
/// named, echoed, or something else).
fn bogus_answer(ev: &Evidence, advertised: &str) -> (ProbeOutcome, String) {
    match &*ev.reply {
        Reply::Result(m) => match m.pointer("/result/protocolVersion").and_then(Value::as_str) {
            Some(v) if v == unsupported_version() => {
                (Accept, reasons::UNSUPPORTED_VERSION_ECHOED.into())
            }
            Some(v) if RELEASED.contains(&v) => (Reject, advertised.into()),
            Some(_) => (Reject, reasons::UNKNOWN_VERSION_ADVERTISED.into()),
            None => (Accept, reasons::UNSUPPORTED_VERSION_ACCEPTED.into()),
        },
        Reply::Error(-32700, _) => (Reject, SYNTAX_GUARD.into()),
        Reply::Error(_, m) => {
            let supported = m
                .pointer("/error/data/supported")
                .and_then(Value::as_array)
                .is_some_and(|a| {
                    !a.is_empty()
                        && a.iter()
                            .all(|v| v.as_str().is_some_and(|v| RELEASED.contains(&v)))
                });
            if supported {
                (Reject, advertised.into())
            } else {
                (Reject, reasons::SUPPORTED_VERSIONS_NOT_ADVERTISED.into())
            }
        }
        _ => ev.refusal(
            reasons::SUPPORTED_VERSIONS_NOT_ADVERTISED,
            reasons::UNSUPPORTED_VERSION_ACCEPTED,
            false,
        ),
    }
}

/// The bogus-version control: an `initialize` naming it on a fresh process
/// (2025-11-25), or a request naming it after opening (2026-07-28).
fn bogus_control(
    ctx: &Ctx,
    reason: &str,
    mutation: Mutation,
    classify: impl Fn(&Evidence, &Value) -> (ProbeOutcome, String),
) -> (Obs, Obs) {
    if ctx.modern() {
        bound_control(
            ctx,
            true,
            reason,
            twin_of("tools/list", json!({})),
            |ctx| {
                let id = ctx.id();
                (
                    Some(id.clone()),
                    raw(&id, "tools/list", meta_with(unsupported_version())),
                )
            },
            mutation,
            |ev| match &*ev.reply {
                Reply::Error(-32601, _) => (
                    ProbeOutcome::NotObserved,
                    reasons::METHOD_NOT_FOUND_NOT_CREDITED.into(),
                ),
                _ => classify(ev, &Value::Null),
            },
        )
    } else {
        line_control(
            ctx,
            false,
            Reject,
            reason,
            |ctx| {
                let id = ctx.id();
                (
                    Some(id.clone()),
                    raw(
                        &id,
                        "initialize",
                        ctx.initialize_params(unsupported_version()),
                    ),
                )
            },
            classify,
        )
    }
}

fn supported_version_advertisement(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::VERSIONS_ADVERTISED;
    const REFUSED: &str = reasons::SUPPORTED_VERSION_ADVERTISED;
    let rev = ctx.revision.as_str();
    let modern = ctx.modern();
    let positive = open_positive(ctx, HELD, reasons::VERSIONS_NOT_ADVERTISED, |m| {
        if modern {
            m.pointer("/result/supportedVersions")
                .and_then(Value::as_array)
                .is_some_and(|v| v.iter().any(|x| x == rev))
        } else {
            m.pointer("/result/protocolVersion")
                .and_then(Value::as_str)
                .is_some_and(|v| RELEASED.contains(&v))
        }
    });
    let pair = bogus_control(ctx, REFUSED, Mutation::Syntax, |ev, _| {
        bogus_answer(ev, REFUSED)
    });
    check("supported-version-advertisement", positive, pair)
}

fn unsupported_version_failure(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::SUPPORTED_VERSION_SERVED;
    const REFUSED: &str = reasons::UNSUPPORTED_VERSION_REFUSED;
    let positive = revision_positive(ctx, HELD, reasons::SUPPORTED_VERSION_NOT_SERVED);
    let modern = ctx.modern();
    // 2026-07-28: the property has its own code (-32022), so the mutant is a
    // request invalid in another field (no client capabilities), which must
    // not be met with it.
    let mutation = if modern {
        Mutation::OtherField {
            make: &capabilities_missing,
            expected: reasons::UNSUPPORTED_VERSION_WRONG_ERROR,
        }
    } else {
        Mutation::Syntax
    };
    let pair = bogus_control(ctx, REFUSED, mutation, move |ev, _| match &*ev.reply {
        Reply::Result(m) if !modern => {
            match m.pointer("/result/protocolVersion").and_then(Value::as_str) {
                Some(v) if v == unsupported_version() => {
                    (Accept, reasons::UNSUPPORTED_VERSION_ACCEPTED.into())
                }
                None => (Accept, reasons::UNSUPPORTED_VERSION_ACCEPTED.into()),
                Some(_) => (Reject, REFUSED.into()),
            }
        }
        Reply::Error(UNSUPPORTED_VERSION, _) if modern => (Reject, REFUSED.into()),
        Reply::Error(code, _) if modern && *code != -32700 => {
            (Reject, reasons::UNSUPPORTED_VERSION_WRONG_ERROR.into())
        }
        _ => ev.refusal(REFUSED, reasons::UNSUPPORTED_VERSION_ACCEPTED, false),
    });
    check("unsupported-version-failure", positive, pair)
}

fn modern_legacy_auto_behavior(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::ERA_PROBE_ANSWERED;
    const REFUSED: &str = reasons::ERA_PROBE_VERSION_REFUSED;
    let modern = ctx.modern();
    // The probe a dual-era client sends first; a legacy server answers
    // -32601 and the client falls back to initialize.
    let positive = match ctx.start() {
        Err(why) => open_failed(Accept, HELD, why.clone(), json!({"startError": why})),
        Ok(mut probe) => {
            let id = ctx.id();
            probe.send(raw(&id, "server/discover", meta_with("2026-07-28")));
            let discover = probe.reply(&id, ctx.startup);
            let fallback = if modern {
                None
            } else {
                let (id, line) = ctx.line("initialize", ctx.initialize_params("2025-11-25"));
                probe.send(line);
                Some(probe.reply(&id, ctx.answer))
            };
            let c = match (&discover, &fallback) {
                (Reply::Result(_), None) => (Accept, HELD.to_string()),
                (Reply::Result(_) | Reply::Error(-32601, _), Some(Reply::Result(_))) => {
                    (Accept, HELD.to_string())
                }
                // A dual-era client falls back to initialize only on -32601:
                // once server/discover was answered, the connection is in the
                // modern era, and an initialize on it may be refused (the
                // 2026-07-28 SDKs answer -32022); no MUST asks otherwise.
                (Reply::Result(_), Some(Reply::Error(code, _))) if *code != -32700 => {
                    (Accept, HELD.to_string())
                }
                (Reply::Error(..), None) => (Reject, reasons::ERA_PROBE_REFUSED.to_string()),
                (_, Some(Reply::Error(..))) => {
                    (Reject, reasons::LEGACY_FALLBACK_REFUSED.to_string())
                }
                (Reply::Silent, _) | (_, Some(Reply::Silent)) => {
                    (ProbeOutcome::NotObserved, NO_ANSWER.to_string())
                }
                _ => (Terminate, SUBJECT_EXITED.to_string()),
            };
            let detail = format!(
                "server/discover: {}; initialize after it: {}",
                discover.label(),
                fallback.as_ref().map_or("-".into(), Reply::label)
            );
            let artifact = ctx.finish(probe, json!({"discover": discover.label(), "fallback": fallback.as_ref().map(Reply::label)}));
            obs(Accept, HELD, c, true, detail, artifact)
        }
    };
    // The control, on a fresh process: first the era probe naming 2026-07-28
    // (the valid twin, which must be answered), then the same probe naming a
    // bogus version. A subject that does not serve server/discover (-32601)
    // is never credited with a version refusal.
    let pair = bound_control(
        ctx,
        false,
        REFUSED,
        |ctx| {
            let id = ctx.id();
            (
                id.clone(),
                raw(&id, "server/discover", meta_with("2026-07-28")),
            )
        },
        |ctx| {
            let id = ctx.id();
            (
                Some(id.clone()),
                raw(&id, "server/discover", meta_with(unsupported_version())),
            )
        },
        Mutation::Syntax,
        |ev| match &*ev.reply {
            Reply::Error(-32601, _) => (
                ProbeOutcome::NotObserved,
                reasons::METHOD_NOT_FOUND_NOT_CREDITED.into(),
            ),
            _ => ev.refusal(REFUSED, reasons::ERA_PROBE_BOGUS_VERSION_ACCEPTED, false),
        },
    );
    check("modern-legacy-auto-behavior", positive, pair)
}

fn stdio_backward_compatibility(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::STDIO_LEGACY_INITIALIZE_SERVED;
    const REFUSED: &str = reasons::REINITIALIZE_REFUSED;
    let legacy = |ctx: &Ctx| -> (Value, Vec<u8>) {
        let id = ctx.id();
        (
            id.clone(),
            raw(&id, "initialize", ctx.initialize_params("2025-11-25")),
        )
    };
    let positive = match ctx.start() {
        Err(why) => open_failed(Accept, HELD, why.clone(), json!({"startError": why})),
        Ok(mut probe) => {
            let (id, line) = legacy(ctx);
            probe.send(line);
            let reply = probe.reply(&id, ctx.startup);
            let ok = matches!(&reply, Reply::Result(m) if m.pointer("/result/protocolVersion") == Some(&json!("2025-11-25")));
            let c = answered(&reply, ok, HELD, reasons::STDIO_LEGACY_VERSION_CHANGED);
            let detail = format!(
                "initialize 2025-11-25 on a fresh process: {}",
                reply.label()
            );
            let artifact = ctx.finish(probe, json!({"reply": reply.label()}));
            obs(Accept, HELD, c, true, detail, artifact)
        }
    };
    // The control: a second initialize on a process that already has a
    // legacy session must be refused.
    let pair = line_control(
        ctx,
        false,
        Reject,
        REFUSED,
        |ctx| {
            let (first_id, mut first) = legacy(ctx);
            let _ = first_id;
            first.extend_from_slice(&json_line(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            ));
            let (id, second) = legacy(ctx);
            first.extend_from_slice(&second);
            (Some(id), first)
        },
        |ev, _| match &*ev.reply {
            // 2025-11-25 states no MUST against answering a second
            // initialize: the refusal could not be observed, never a FAIL.
            Reply::Result(_) => (
                ProbeOutcome::NotObserved,
                reasons::BEHAVIOUR_LEFT_OPEN.into(),
            ),
            _ => ev.refusal(REFUSED, reasons::REINITIALIZE_ACCEPTED, false),
        },
    );
    // The mutant above breaks the last brace, which belongs to the second
    // initialize: only that request is defective.
    check("stdio-backward-compatibility", positive, pair)
}

fn request_identity_metadata(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::REQUEST_ID_ECHOED;
    const REFUSED: &str = reasons::NULL_ID_REFUSED;
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let text_id = json!(format!(
            "mcpres-{}",
            crate::produce::drive::ident::random_hex(6)
        ));
        let int_id = ctx.id();
        let mut replies = Vec::new();
        for id in [&text_id, &int_id] {
            probe.send(json_line(&ctx.request(id, "tools/list", json!({}))));
            replies.push(probe.reply(id, ctx.answer));
        }
        let ok = replies.iter().all(|r| matches!(r, Reply::Result(_)));
        (
            answered(&replies[1], ok, HELD, reasons::REQUEST_ID_NOT_ECHOED),
            format!(
                "string id: {}; integer id: {}",
                replies[0].label(),
                replies[1].label()
            ),
            json!({"replies": replies.iter().map(Reply::label).collect::<Vec<_>>()}),
        )
    });
    let pair = bound_control(
        ctx,
        true,
        REFUSED,
        twin_of("tools/list", json!({})),
        |ctx| {
            (
                Some(Value::Null),
                json_line(&ctx.request(&Value::Null, "tools/list", json!({}))),
            )
        },
        // Silence is this control's refusal: a syntax-defective mutant would
        // be met with the same silence by a subject that drops every bad
        // line.
        Mutation::Answered,
        |ev| ev.refusal(REFUSED, reasons::NULL_ID_ACCEPTED, true),
    );
    check("request-identity-metadata", positive, pair)
}

fn result_identity_metadata(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::RESULT_ID_TYPED;
    const REFUSED: &str = reasons::INVALID_ID_TYPE_REFUSED;
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let int_id = ctx.id();
        let text_id = json!(int_id.to_string());
        let mut same = true;
        let mut labels = Vec::new();
        for id in [&int_id, &text_id] {
            probe.send(json_line(&ctx.request(id, "tools/list", json!({}))));
            let r = probe.reply(id, ctx.answer);
            same &= matches!(r, Reply::Result(_));
            labels.push(r.label());
        }
        let reply = if same {
            Reply::Result(json!({}))
        } else {
            Reply::Silent
        };
        let c = if same {
            (Accept, HELD.to_string())
        } else {
            (Accept, reasons::RESULT_ID_RETYPED.to_string())
        };
        let _ = reply;
        (
            c,
            format!(
                "integer id answered: {}; the same digits as a string: {}",
                labels[0], labels[1]
            ),
            json!({"replies": labels}),
        )
    });
    let pair = bound_control(
        ctx,
        true,
        REFUSED,
        twin_of("tools/list", json!({})),
        |ctx| {
            let id = json!({"mcpres": 1});
            (
                Some(id.clone()),
                json_line(&ctx.request(&id, "tools/list", json!({}))),
            )
        },
        Mutation::Answered,
        |ev| ev.refusal(REFUSED, reasons::INVALID_ID_TYPE_ACCEPTED, true),
    );
    check("result-identity-metadata", positive, pair)
}

/// The list method of each capability a server may declare.
const CAPABILITY_METHODS: &[(&str, &str)] = &[
    ("tools", "tools/list"),
    ("resources", "resources/list"),
    ("prompts", "prompts/list"),
    ("logging", "logging/setLevel"),
    ("completions", "completion/complete"),
];

fn capabilities_of(open: &Value) -> Option<&serde_json::Map<String, Value>> {
    open.pointer("/result/capabilities")
        .and_then(Value::as_object)
}

fn capability_params(method: &str) -> Value {
    match method {
        "logging/setLevel" => json!({"level": "info"}),
        "completion/complete" => {
            json!({"ref": {"type": "ref/prompt", "name": "mcpres-probe"}, "argument": {"name": "a", "value": ""}})
        }
        _ => json!({}),
    }
}

fn capability_declaration(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::CAPABILITIES_DECLARED;
    const REFUSED: &str = reasons::UNDECLARED_CAPABILITY_REFUSED;
    let mut undeclared: Option<&str> = None;
    let mut declared: Option<&str> = None;
    let positive = opened(ctx, Accept, HELD, |_probe, open| {
        let caps = capabilities_of(open);
        undeclared = caps.and_then(|c| {
            CAPABILITY_METHODS
                .iter()
                .find(|(k, _)| !c.contains_key(*k))
                .map(|(_, m)| *m)
        });
        declared = caps.and_then(|c| {
            CAPABILITY_METHODS
                .iter()
                .find(|(k, _)| c.contains_key(*k))
                .map(|(_, m)| *m)
        });
        let c = if caps.is_some() {
            (Accept, HELD.to_string())
        } else {
            (Accept, reasons::CAPABILITIES_MISSING.to_string())
        };
        (
            c,
            format!(
                "declared: {:?}",
                caps.map(|c| c.keys().cloned().collect::<Vec<_>>())
            ),
            json!({"capabilities": caps}),
        )
    });
    let Some(method) = undeclared.filter(|_| positive.held()) else {
        if positive.held() {
            return CheckRun::not_observed(
                "capability-declaration",
                "the subject declares every capability with a list method (tools, resources, prompts, logging, completions), so no undeclared one could be asked for",
            );
        }
        return CheckRun {
            id: "capability-declaration",
            positive: Some(positive),
            negative: None,
            mutant: None,
            not_observed: None,
            server: None,
        };
    };
    // The twin: the method of a declared capability (or the liveness
    // request), which must be served on the same process first.
    let pair = bound_control(
        ctx,
        true,
        REFUSED,
        |ctx| match declared {
            Some(m) => ctx.line(m, capability_params(m)),
            None => ctx.live_line(),
        },
        |ctx| {
            let (id, line) = ctx.line(method, capability_params(method));
            (Some(id), line)
        },
        Mutation::Syntax,
        |ev| ev.refusal(REFUSED, reasons::UNDECLARED_CAPABILITY_SERVED, false),
    );
    check("capability-declaration", positive, pair)
}

fn extension_declaration(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::EXTENSIONS_WELL_DECLARED;
    const REFUSED: &str = reasons::UNDECLARED_EXTENSION_REFUSED;
    let positive = opened(ctx, Accept, HELD, |_probe, open| {
        let caps = capabilities_of(open);
        let well = |key: &str| {
            caps.and_then(|c| c.get(key)).is_none_or(|v| {
                v.as_object()
                    .is_some_and(|o| o.values().all(Value::is_object))
            })
        };
        let ok = caps.is_some() && well("experimental") && well("extensions");
        let c = if ok {
            (Accept, HELD.to_string())
        } else {
            (Accept, reasons::EXTENSIONS_MALFORMED.to_string())
        };
        (
            c,
            format!(
                "experimental: {}; extensions: {}",
                caps.is_some_and(|c| c.contains_key("experimental")),
                caps.is_some_and(|c| c.contains_key("extensions"))
            ),
            json!({"experimental": caps.and_then(|c| c.get("experimental")), "extensions": caps.and_then(|c| c.get("extensions"))}),
        )
    });
    let pair = bound_control(
        ctx,
        true,
        REFUSED,
        |ctx: &Ctx| ctx.live_line(),
        |ctx| {
            let (id, line) = ctx.line("io.mcpres.unregistered/probe", json!({}));
            (Some(id), line)
        },
        Mutation::Syntax,
        |ev| ev.refusal(REFUSED, reasons::UNDECLARED_EXTENSION_SERVED, false),
    );
    check("extension-declaration", positive, pair)
}

/// The plain JSON types a probe can give a value of, with one value each.
const PLAIN_TYPES: &[&str] = &["string", "integer", "boolean", "array", "object", "null"];

fn value_of(ty: &str) -> Value {
    match ty {
        "string" => json!("x"),
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => json!({}),
        _ => Value::Null,
    }
}

/// A good value and a value of none of the types `ty` names (one type, or
/// an array of them, as JSON Schema allows), when `ty` names only plain
/// JSON types.
fn typed_values(ty: Option<&Value>) -> Option<(Value, Value)> {
    let names: Vec<&str> = match ty? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().map(Value::as_str).collect::<Option<_>>()?,
        _ => return None,
    };
    let known = |t: &&str| PLAIN_TYPES.contains(t) || *t == "number";
    if names.is_empty() || !names.iter().all(known) {
        return None;
    }
    // An integer is a number too: a number type admits integers.
    let admits = |t: &str| names.contains(&t) || (t == "integer" && names.contains(&"number"));
    let bad = PLAIN_TYPES.iter().find(|t| !admits(t))?;
    Some((value_of(names[0]), value_of(bad)))
}

/// A call of the first tool whose required arguments all have plain JSON
/// types: (name, the first of them given a value of none of its types and
/// the rest good ones, every one given a good value: the valid twin). Err
/// says why no tool qualified.
fn ill_typed_call(tools: &[Value]) -> Result<(String, Value, Value), String> {
    let mut skipped = Vec::new();
    'tools: for tool in tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        let schema = tool.get("inputSchema");
        let required = schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array);
        let props = schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        let (Some(required), Some(props)) = (required, props) else {
            continue;
        };
        if required.is_empty() {
            continue;
        }
        let mut bad_args = serde_json::Map::new();
        let mut good_args = serde_json::Map::new();
        for (i, r) in required.iter().filter_map(Value::as_str).enumerate() {
            let ty = props.get(r).and_then(|p| p.get("type"));
            let Some((good, bad)) = typed_values(ty) else {
                skipped.push(format!(
                    "{name}.{r} ({})",
                    ty.map_or("no type".into(), Value::to_string)
                ));
                continue 'tools;
            };
            bad_args.insert(r.to_string(), if i == 0 { bad } else { good.clone() });
            good_args.insert(r.to_string(), good);
        }
        return Ok((
            name.to_string(),
            Value::Object(bad_args),
            Value::Object(good_args),
        ));
    }
    Err(if skipped.is_empty() {
        "no tool declares a required argument, so no ill-typed call could be made".into()
    } else {
        format!(
            "every tool with required arguments has one whose type is not a plain JSON type (or a list of them) a wrong value could be chosen against: {}",
            skipped.join(", ")
        )
    })
}

fn json_schema_dialect_identity(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::SCHEMA_DIALECT_IDENTIFIED;
    const REFUSED: &str = reasons::SCHEMA_VIOLATION_REFUSED;
    let mut call: Result<(String, Value, Value), String> = Err("the tools were not listed".into());
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let (id, line) = ctx.line("tools/list", json!({}));
        probe.send(line);
        let reply = probe.reply(&id, ctx.answer);
        let tools: Vec<Value> = reply
            .result()
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let ok = crate::judge::schemas_identified(&tools);
        call = ill_typed_call(&tools);
        (
            answered(&reply, ok, HELD, reasons::SCHEMA_DIALECT_UNKNOWN),
            format!(
                "{} tool(s), every inputSchema an object schema of a known dialect: {ok}",
                tools.len()
            ),
            json!({"tools": tools.len(), "dialects": tools.iter().map(|t| t.pointer("/inputSchema/$schema").cloned().unwrap_or(Value::Null)).collect::<Vec<_>>()}),
        )
    });
    let (tool, args, good) = match call {
        Ok(call) if positive.held() => call,
        Err(why) if positive.held() => {
            return CheckRun::not_observed("json-schema-dialect-identity", why);
        }
        _ => {
            return CheckRun {
                id: "json-schema-dialect-identity",
                positive: Some(positive),
                negative: None,
                mutant: None,
                not_observed: None,
                server: None,
            };
        }
    };
    // The same call with every argument well typed must be served (a result
    // that is not isError) on the same process first: a subject whose every
    // call fails is not credited with refusing the ill-typed one.
    let pair = bound_control(
        ctx,
        true,
        REFUSED,
        |ctx| ctx.line("tools/call", json!({"name": tool, "arguments": good})),
        |ctx| {
            let (id, line) = ctx.line("tools/call", json!({"name": tool, "arguments": args}));
            (Some(id), line)
        },
        Mutation::Syntax,
        |ev| {
            if ev.reply.result().and_then(|r| r.get("isError")) == Some(&json!(true)) {
                (Reject, REFUSED.into())
            } else {
                ev.refusal(REFUSED, reasons::SCHEMA_VIOLATION_ACCEPTED, false)
            }
        },
    );
    check("json-schema-dialect-identity", positive, pair)
}

fn safe_integer_constraints(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::SAFE_INTEGER_PRESERVED;
    const KEPT: &str = reasons::UNSAFE_INTEGER_NOT_CORRUPTED;
    const MAX_SAFE: u64 = 9_007_199_254_740_991;
    let positive = request_positive_with_id(ctx, HELD, json!(MAX_SAFE));
    // The control: an id past 2^53; it may be refused or echoed exactly, but
    // never answered under a rounded neighbour. The mutant sends the digits
    // as a string, which is no integer at all.
    let unsafe_id = MAX_SAFE + 2;
    let classify = move |ev: &Evidence, sent_number: bool| -> (ProbeOutcome, String) {
        let near = ev.other_responses.iter().any(|r| {
            r.get("id")
                .and_then(Value::as_u64)
                .is_some_and(|i| i != unsafe_id && i.abs_diff(unsafe_id) <= 8)
                || r.get("id").and_then(Value::as_f64).is_some_and(|f| {
                    r.get("id").and_then(Value::as_u64).is_none()
                        && (f - unsafe_id as f64).abs() <= 8.0
                })
        });
        if !sent_number {
            return (NoEffect, reasons::NOT_AN_UNSAFE_INTEGER.into());
        }
        if near {
            (Accept, reasons::UNSAFE_INTEGER_CORRUPTED.into())
        } else if !ev.alive {
            ev.gone()
        } else {
            (NoEffect, KEPT.into())
        }
    };
    let run = |as_number: bool| {
        opened(ctx, NoEffect, KEPT, |probe, _open| {
            let id = if as_number {
                json!(unsafe_id)
            } else {
                json!(unsafe_id.to_string())
            };
            let line = json_line(&ctx.request(&id, "tools/list", json!({})));
            let ev = ctx.exchange(probe, line, Some(&id));
            let c = classify(&ev, as_number);
            (c, format!("id {id}: {}", ev.reply.label()), ev.summary())
        })
    };
    let negative = run(true);
    let m = run(false);
    let m = m.into_mutant(KEPT);
    check("safe-integer-constraints", positive, (negative, m))
}

fn request_positive_with_id(ctx: &Ctx, held: &'static str, id: Value) -> Obs {
    opened(ctx, Accept, held, |probe, _open| {
        probe.send(json_line(&ctx.request(&id, "tools/list", json!({}))));
        let reply = probe.reply(&id, ctx.answer);
        (
            answered(&reply, true, held, held),
            format!("id {id}: {}", reply.label()),
            json!({"reply": reply.label()}),
        )
    })
}

fn interleaved_unrelated_requests(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::INTERLEAVED_MATCHED_BY_ID;
    const IGNORED: &str = reasons::STRAY_RESPONSE_IGNORED;
    let positive = opened(ctx, Accept, HELD, |probe, _open| {
        let (a, la) = ctx.line("tools/list", json!({}));
        let (b, lb) = ctx.live_line();
        probe.send([la, lb].concat());
        let ra = probe.reply(&a, ctx.answer);
        let rb = probe.reply(&b, ctx.answer);
        let ok = !matches!(ra, Reply::Silent | Reply::Closed)
            && !matches!(rb, Reply::Silent | Reply::Closed);
        (
            answered(&ra, ok, HELD, reasons::INTERLEAVED_LOST),
            format!("first: {}; second: {}", ra.label(), rb.label()),
            json!({"first": ra.label(), "second": rb.label()}),
        )
    });
    let run = |defect: bool| {
        opened(ctx, NoEffect, IGNORED, |probe, _open| {
            let stray_id = json!(424_242);
            let mut stray = json_line(&json!({"jsonrpc": "2.0", "id": stray_id, "result": {}}));
            if defect {
                stray = super::check::syntax_defect(&stray);
            }
            let (a, la) = ctx.line("tools/list", json!({}));
            let ev = ctx.exchange(probe, [la, stray].concat(), Some(&a));
            let ra = ev.reply.0.clone();
            let answered_stray = ev.other_responses.iter().any(|r| {
                r.get("id") == Some(&stray_id)
                    || (r.get("id") == Some(&Value::Null)
                        && r.pointer("/error/code").and_then(Value::as_i64) != Some(-32700))
            });
            let c = if !ev.alive {
                ev.gone()
            } else if ev.parse_errors > 0 {
                (Reject, SYNTAX_GUARD.to_string())
            } else if answered_stray {
                (Accept, reasons::STRAY_RESPONSE_ANSWERED.to_string())
            } else if matches!(ra, Reply::Result(_) | Reply::Error(..)) {
                (NoEffect, IGNORED.to_string())
            } else {
                (ProbeOutcome::NotObserved, NO_ANSWER.to_string())
            };
            (
                c,
                format!(
                    "request before the stray response: {}; stray answered: {answered_stray}",
                    ra.label()
                ),
                ev.summary(),
            )
        })
    };
    let negative = run(false);
    // The mutant: a request under the stray response's id for a method no
    // server has, which must be answered: a subject that answers it while
    // ignoring the stray response tells a request from a response.
    let m = super::stdio::answered_mutant(ctx, IGNORED, None, |ctx| {
        let id = json!(424_242);
        (
            id.clone(),
            json_line(&ctx.request(&id, &super::check::unknown_method(), json!({}))),
        )
    });
    check("interleaved-unrelated-requests", positive, (negative, m))
}

fn no_connection_as_conversation(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::EACH_CONNECTION_OPENS_ITS_OWN;
    const REFUSED: &str = reasons::NO_STATE_ACROSS_CONVERSATIONS;
    // Two processes, each opened on its own, each serving.
    let first = request_positive(
        ctx,
        HELD,
        reasons::CONNECTION_NOT_SERVED,
        "tools/list",
        json!({}),
        |_| true,
    );
    let positive = if first.held() {
        request_positive(
            ctx,
            HELD,
            reasons::CONNECTION_NOT_SERVED,
            "tools/list",
            json!({}),
            |_| true,
        )
    } else {
        first
    };
    let pair = if ctx.modern() {
        // After a valid request (the twin, which must be served), one naming
        // a bogus version must be judged by its own metadata. The property
        // has its own code (-32022): the mutant is a request invalid in
        // another field (no client capabilities), which must not get it.
        bound_control(
            ctx,
            true,
            REFUSED,
            twin_of("tools/list", json!({})),
            |ctx| {
                let id = ctx.id();
                (
                    Some(id.clone()),
                    raw(&id, "tools/list", meta_with(unsupported_version())),
                )
            },
            Mutation::OtherField {
                make: &capabilities_missing,
                expected: reasons::VERSION_REFUSED_WRONG_ERROR,
            },
            |ev| match &*ev.reply {
                Reply::Error(UNSUPPORTED_VERSION, _) => (Reject, REFUSED.into()),
                Reply::Error(-32601, _) => (
                    ProbeOutcome::NotObserved,
                    reasons::METHOD_NOT_FOUND_NOT_CREDITED.into(),
                ),
                _ => ev.refusal(
                    reasons::VERSION_REFUSED_WRONG_ERROR,
                    reasons::EARLIER_VERSION_CARRIED_OVER,
                    false,
                ),
            },
        )
    } else {
        line_control(
            ctx,
            false,
            Reject,
            REFUSED,
            // (`ping` is allowed before `initialize`; a listing is not.)
            |ctx| {
                let id = ctx.id();
                (Some(id.clone()), raw(&id, "tools/list", json!({})))
            },
            // 2025-11-25 asks the client not to send requests before
            // initialize and states no MUST for a server that answers one:
            // answering it on a fresh process is left open (not observed,
            // never a FAIL); a refusal, or silence while serving, holds.
            |ev, _| match &*ev.reply {
                Reply::Result(_) => (
                    ProbeOutcome::NotObserved,
                    reasons::BEHAVIOUR_LEFT_OPEN.into(),
                ),
                _ => ev.refusal(REFUSED, reasons::CONVERSATION_ASSUMED, true),
            },
        )
    };
    check("no-connection-as-conversation", positive, pair)
}

fn stateless_request_metadata(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::REQUEST_METADATA_HONOURED;
    const REFUSED: &str = reasons::REQUEST_METADATA_REQUIRED;
    let positive = request_positive(
        ctx,
        HELD,
        HELD,
        "tools/list",
        json!({"_meta": {META_CLIENT_INFO: {"name": "mcpres-profile", "version": "1"}}}),
        |_| true,
    );
    let pair = bound_control(
        ctx,
        true,
        REFUSED,
        twin_of("tools/list", json!({})),
        capabilities_missing,
        Mutation::Syntax,
        |ev| {
            ev.refusal(
                REFUSED,
                reasons::REQUEST_METADATA_INCOMPLETE_ACCEPTED,
                false,
            )
        },
    );
    check("stateless-request-metadata", positive, pair)
}

fn server_discover(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::DISCOVER_COMPLETE;
    const REFUSED: &str = reasons::DISCOVER_INVALID_PARAMS_REFUSED;
    let positive = open_positive(ctx, HELD, reasons::DISCOVER_INCOMPLETE, |m| {
        let r = m.get("result");
        r.and_then(|r| r.get("supportedVersions"))
            .is_some_and(Value::is_array)
            && r.and_then(|r| r.get("capabilities"))
                .is_some_and(Value::is_object)
            && r.and_then(|r| r.pointer("/_meta"))
                .and_then(|meta| meta.get(META_SERVER_INFO))
                .and_then(|s| s.get("name"))
                .is_some_and(Value::is_string)
    });
    let pair = bound_control(
        ctx,
        false,
        REFUSED,
        twin_of("server/discover", json!({})),
        |ctx| {
            let id = ctx.id();
            (Some(id.clone()), raw(&id, "server/discover", json!(5)))
        },
        Mutation::Syntax,
        |ev| ev.refusal(REFUSED, reasons::DISCOVER_INVALID_PARAMS_ACCEPTED, false),
    );
    check("server-discover", positive, pair)
}

fn no_session_id_assumption(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::SESSIONLESS_SERVED;
    const IGNORED: &str = reasons::SESSION_ID_NOT_REQUIRED;
    // No discover, no session: a request straight away.
    let positive = match ctx.start() {
        Err(why) => open_failed(Accept, HELD, why.clone(), json!({"startError": why})),
        Ok(mut probe) => {
            let (id, line) = ctx.line("tools/list", json!({}));
            probe.send(line);
            let reply = probe.reply(&id, ctx.startup);
            let c = answered(&reply, true, HELD, HELD);
            let detail = format!("tools/list as the first message: {}", reply.label());
            let artifact = ctx.finish(probe, json!({"reply": reply.label()}));
            obs(Accept, HELD, c, true, detail, artifact)
        }
    };
    let pair = line_control(
        ctx,
        true,
        NoEffect,
        IGNORED,
        |ctx| {
            let (id, line) = ctx.line(
                "tools/list",
                json!({"_meta": {"io.modelcontextprotocol/sessionId": "mcpres-unknown-session"}}),
            );
            (Some(id), line)
        },
        |ev, _| match &*ev.reply {
            Reply::Result(_) => (NoEffect, IGNORED.into()),
            Reply::Error(-32700, _) => (Reject, SYNTAX_GUARD.into()),
            Reply::Error(..) => (Reject, reasons::SESSION_ID_ASSUMED.into()),
            _ => ev.refusal(reasons::SESSION_ID_ASSUMED, IGNORED, false),
        },
    );
    check("no-session-id-assumption", positive, pair)
}

fn required_result_type(ctx: &Ctx) -> CheckRun {
    const HELD: &str = reasons::RESULT_TYPE_PRESENT;
    const REFUSED: &str = reasons::ERROR_CARRIES_NO_RESULT;
    let positive = request_positive(
        ctx,
        HELD,
        reasons::RESULT_TYPE_MISSING,
        "tools/list",
        json!({}),
        |m| {
            m.pointer("/result/resultType")
                .is_some_and(Value::is_string)
        },
    );
    let method = format!(
        "mcpres/probe-{}",
        crate::produce::drive::ident::random_hex(8)
    );
    let pair = bound_control(
        ctx,
        true,
        REFUSED,
        twin_of("tools/list", json!({})),
        |ctx| {
            let (id, line) = ctx.line(&method, json!({}));
            (Some(id), line)
        },
        Mutation::Syntax,
        |ev| match &*ev.reply {
            Reply::Error(code, m) if *code != -32700 && m.get("result").is_none() => {
                (Reject, REFUSED.into())
            }
            Reply::Error(code, _) if *code != -32700 => (Reject, reasons::ERROR_WITH_RESULT.into()),
            _ => ev.refusal(REFUSED, reasons::UNKNOWN_METHOD_ACCEPTED, false),
        },
    );
    check("required-result-type", positive, pair)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, ty: Value) -> Value {
        json!({"name": name, "inputSchema": {"type": "object", "properties": {"v": {"type": ty}}, "required": ["v"]}})
    }

    #[test]
    fn a_type_list_gets_a_value_of_none_of_its_types() {
        let (name, bad, good) =
            ill_typed_call(&[tool("flag", json!(["boolean", "string"]))]).expect("probed");
        assert_eq!(name, "flag");
        assert_eq!(good["v"], json!(true));
        assert!(!bad["v"].is_boolean() && !bad["v"].is_string(), "{bad}");
        // A number admits integers: the wrong value is no number at all.
        let (_, bad, _) = ill_typed_call(&[tool("n", json!("number"))]).expect("probed");
        assert!(!bad["v"].is_number(), "{bad}");
    }

    #[test]
    fn why_no_call_could_be_made_is_what_was_seen() {
        let why = ill_typed_call(&[tool("odd", json!({"not": "a type"}))]).unwrap_err();
        assert!(why.contains("odd.v"), "{why}");
        let why = ill_typed_call(&[json!({"name": "none", "inputSchema": {"type": "object"}})])
            .unwrap_err();
        assert!(
            why.starts_with("no tool declares a required argument"),
            "{why}"
        );
    }

    #[test]
    fn only_an_accepting_result_is_a_twin_accepted() {
        assert!(twin_accepted(&Reply::Result(json!({"result": {}}))));
        assert!(!twin_accepted(&Reply::Result(
            json!({"result": {"isError": true}})
        )));
        assert!(!twin_accepted(&Reply::Error(-32601, json!({}))));
        assert!(!twin_accepted(&Reply::Silent));
        assert!(!twin_accepted(&Reply::Closed));
    }
}
