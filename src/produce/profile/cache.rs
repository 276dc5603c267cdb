//! `mcpres profile run cache-behavior`: the checks of `mcp-res/cache-behavior/v1`
//! (2026-07-28 only) over stdio, each from three conversations with fresh subject
//! processes (spec/cache.md).
//!
//! Every observation is the same conversation (`server/discover`, then each cacheable
//! request the subject's capabilities allow, named in the record); the control and the
//! mutant put a cache defect between the runner and the subject (the shim, see
//! `produce::drive::cache_edit`): the control one that breaks the check's property, the
//! mutant one that changes the answers without breaking it. Each observation is
//! labelled by the judge's reading of its record (`judge::cache::reading`), which
//! `validate` reads again.

use serde_json::{Value, json};

use crate::diag::reasons as r;
use crate::judge::cache::{self as reading, PROFILE as P, UNOBSERVABLE};
use crate::model::mcp::{META_CLIENT_INFO, META_PROTOCOL_VERSION, Revision};
use crate::model::vocab::ProbeOutcome::{Accept, Reject};
use crate::produce::profile::check::{CheckRun, Ctx, three_unless_unobserved_by};
use crate::produce::profile::decl::{Basis, CheckDecl, Level as L, MCP_2026, PROFILE};
use crate::produce::profile::probe::Reply;

const V2026: Revision = Revision::V2026_07_28;
const HINTS: &str = "Schema › CacheableResult (ttlMs, cacheScope)";
const VERSION: &str = "Basic › Versioning › Protocol Version Negotiation";
const RESULT_META: &str = "Schema › ResultMetaObject (io.modelcontextprotocol/serverInfo)";

/// A protocol version no revision has (the `revision` request's).
pub const NO_REVISION: &str = "2099-01-01";

/// The checks, in manifest order.
pub const CHECKS: &[CheckDecl] = &[
    CheckDecl::new(P, "ttl-ms", ttl_ms, r::CACHE_TTL_PRESENT, r::CACHE_TTL_INVALID)
        .only(V2026)
        .basis(&[Basis::both(MCP_2026, HINTS, L::Must, "the results of `server/discover`, the list methods and `resources/read` carry `ttlMs`, an integer of zero or more (required by the schema)")])
        .judged("Every cacheable request the subject's capabilities allow is sent once in one conversation; every result must carry `ttlMs` as an integer of zero or more (0 is immediately stale, and valid). The control's transport strips `ttlMs` from every cacheable result; the mutant's sets it to 0, which must be read as present."),
    CheckDecl::new(P, "cache-scope", cache_scope, r::CACHE_SCOPE_PRESENT, r::CACHE_SCOPE_INVALID)
        .only(V2026)
        .basis(&[Basis::both(MCP_2026, HINTS, L::Must, "the same results carry `cacheScope`, `public` or `private` (required by the schema)")])
        .judged("As ttl-ms, for `cacheScope`. The control's transport writes `shared`; the mutant's writes `private` (narrower, valid)."),
    CheckDecl::new(P, "cache-key-identity", cache_key_identity, r::CACHE_KEY_IDENTITY_HELD, r::CACHE_KEY_MIXED)
        .only(V2026)
        .basis(&[
            Basis::both(MCP_2026, "Server › Resources › Reading Resources", L::None, "a read's contents carry the URI of what they hold"),
            Basis::both(PROFILE, "required check cache-key-identity", L::Profile, "a result answers its own key (the method and, for `resources/read`, the URI): an entry keyed by them holds that key's data"),
        ])
        .judged("No MCP requirement says a read's contents name the URI asked for (a template may answer for related URIs); the profile's own. Two listed resources with distinct URIs are read, and the first again: every item of each answer's contents must name the URI asked for. A subject with fewer than two listed resources, or a read refused, leaves the check NOT_OBSERVED. The control's transport is a cache keyed by the method alone (the second read is served the first's entry); the mutant's is keyed by method, URI and revision (the first read again is served from it), which must be read as held."),
    CheckDecl::new(P, "protocol-revision-keying", protocol_revision_keying, r::CACHE_REVISION_KEYED, r::CACHE_REVISION_NOT_KEYED)
        .only(V2026)
        .basis(&[Basis::both(MCP_2026, VERSION, L::Must, "a request naming a protocol version the server does not implement MUST get UnsupportedProtocolVersionError: an answer cached under one revision is never one for another")])
        .judged("After the lists, the tool list (else the first list the subject declares) is asked for again naming a protocol version no revision has (`2099-01-01`): an error holds (the MUST's code is -32022; another error is not judged here, the protocol-revision profile judges it), a result fails. The control's transport is a cache keyed by the method alone, which serves the earlier list; the mutant's is keyed by method, URI and revision, and passes the request on."),
    CheckDecl::new(P, "subject-version-keying", subject_version_keying, r::CACHE_VERSION_CONSISTENT, r::CACHE_VERSION_KEY_MISMATCH)
        .only(V2026)
        .basis(&[
            Basis::pos(MCP_2026, RESULT_META, L::Should, "servers SHOULD name themselves (name and version) in the `_meta` of every response"),
            Basis::both(PROFILE, "required check subject-version-keying", L::Profile, "the stamps of one process name one server version: a cache keyed by version never holds another version's entry as this one's"),
        ])
        .judged("The stamp is a SHOULD: a subject that stamps no cacheable result leaves the check NOT_OBSERVED (`MCP_RES_CACHE_NO_VERSION_STAMP`). Every stamp of one conversation must name the same name and version. The control's transport stamps every cacheable result but the discovery's with version `0.0.0-stale` (the taxonomy's cache-stale-poisoned, version-key-mismatch); the mutant's stamps them as the discovery was, with a title added."),
    CheckDecl::new(P, "user-tenant-separation", user_tenant_separation, r::CACHE_TENANTS_SEPARATED, r::CACHE_TENANT_SHARED)
        .only(V2026)
        .credential()
        .basis(&[Basis::both(MCP_2026, HINTS, L::Must, "a `private` result may be reused only within the authorization context that produced it; caches MUST NOT be shared across authorization contexts")])
        .judged("Needs two authorization contexts; a stdio server has the one its process was started with. NOT_OBSERVED (`MCP_RES_CACHE_NOT_OBSERVABLE_ON_STDIO`) in every run so far: no runner observes it yet."),
    CheckDecl::new(P, "stale-result", stale_result, r::CACHE_FRESH_HELD, r::CACHE_STALE_WITHIN_TTL)
        .only(V2026)
        .basis(&[
            Basis::both(MCP_2026, HINTS, L::Should, "a client SHOULD consider a result fresh for `ttlMs` after it came"),
            Basis::both(PROFILE, "required check stale-result", L::Profile, "a list hinted fresh does not change within its `ttlMs` unless the change is announced (`notifications/tools/list_changed`)"),
        ])
        .judged("No MCP requirement keeps a server's data still for its hint; the profile's own. The tool list is asked for twice in one conversation: a change between them, unannounced, within the first answer's `ttlMs` (read from the stored times) fails; a list hinted immediately stale, or no tools, leaves the check NOT_OBSERVED. The control's transport adds a tool to the second list; the mutant's adds it to both, which must be read as held."),
    CheckDecl::new(P, "expiry", expiry, r::CACHE_EXPIRY_HONOURED, r::CACHE_EXPIRED_SERVED)
        .only(V2026)
        .basis(&[Basis::both(MCP_2026, HINTS, L::Should, "`ttlMs` 0 means immediately stale; a positive one bounds how long a client considers a result fresh")])
        .judged("Whether an entry is dropped once its `ttlMs` has passed is a cache's behaviour; mcpres drives the server, not a cache. NOT_OBSERVED (`MCP_RES_CACHE_NOT_OBSERVABLE_ON_STDIO`) in every run so far."),
    CheckDecl::new(P, "list-resource-consistency", list_resource_consistency, r::CACHE_LISTED_READABLE, r::CACHE_LISTED_NOT_READABLE)
        .only(V2026)
        .basis(&[Basis::both(PROFILE, "required check list-resource-consistency", L::Profile, "a resource `resources/list` lists (in a result a client may cache) is served by `resources/read` in the same process")])
        .judged("No MCP requirement; the profile's own. The first two listed resources are read: each must get a result. A subject that lists no resources leaves the check NOT_OBSERVED. The control's transport answers the second resource's read as not found; the mutant's replaces the text of every read, which must be read as served."),
    CheckDecl::new(P, "negative-caching", negative_caching, r::CACHE_ABSENT_NOT_CACHED, r::CACHE_ABSENT_CACHED)
        .only(V2026)
        .basis(&[Basis::both(PROFILE, "required check negative-caching", L::Profile, "a read of a resource that does not exist is refused, or hinted immediately stale: its absence is never a freshness a cache keeps as content")])
        .judged("No MCP requirement names the error for a missing resource; the profile's own. A URI of a scheme no server has is read: an error, or a result with `ttlMs` 0, holds; a result hinted fresh fails. A subject without resources leaves the check NOT_OBSERVED. The control's transport answers the refusal with an empty result fresh for a day; the mutant's with one hinted immediately stale."),
    CheckDecl::new(P, "cache-poisoning-boundary", cache_poisoning_boundary, r::CACHE_POISON_CONTAINED, r::CACHE_POISONED)
        .only(V2026)
        .basis(&[Basis::both(PROFILE, "required check cache-poisoning-boundary", L::Profile, "what a request with an attacker-chosen key got is never served for another key")])
        .judged("No MCP requirement; the profile's own. The first listed resource is read, then read with a fragment added (`#mcpres-…`), then read again: the third read must not get the fragment's contents where they differ from the first's. The control's transport answers the fragment's read with other contents and stores them under the bare URI; the mutant's answers it the same way and stores nothing."),
    CheckDecl::new(P, "capability-change-invalidation", capability_change_invalidation, r::CACHE_INVALIDATION_ANNOUNCED, r::CACHE_CHANGE_UNANNOUNCED)
        .only(V2026)
        .basis(&[Basis::both(MCP_2026, "Server › Tools › List Changed Notification", L::Should, "a server that declares `listChanged` SHOULD announce a change of its list")])
        .judged("Needs a subject whose capabilities or lists change during the run, and a way to make them change; mcpres has none for an arbitrary server. NOT_OBSERVED (`MCP_RES_CACHE_NOT_OBSERVABLE_ON_STDIO`) in every run so far."),
    CheckDecl::new(P, "personalized-data-not-public", personalized_data_not_public, r::CACHE_PERSONAL_NOT_PUBLIC, r::CACHE_PERSONAL_PUBLIC)
        .only(V2026)
        .basis(&[
            Basis::both(MCP_2026, HINTS, L::None, "`public` says the response holds no user-specific data and may be shared across authorization contexts"),
            Basis::both(PROFILE, "required check personalized-data-not-public", L::Profile, "a result that carries the caller's own data is not scoped `public`"),
        ])
        .judged("The schema defines `public` without a MUST on the server; the profile's own. Every request of the run carries a client name drawn for it (`mcpres-caller-…`); no result scoped `public` may carry it; a subject that scopes nothing `public` leaves the check NOT_OBSERVED (`MCP_RES_CACHE_NOTHING_PUBLIC`). The control's transport writes the caller's name into the tool list and scopes it `public`; the mutant's scopes the same list `private`, which must be read as held."),
];

/// One conversation with a fresh subject process, with `check`'s `role` injection: its
/// stored transcript, with the record as `observation.cache`.
fn conversation(ctx: &Ctx, check: &str, role: &str) -> Value {
    let injected = reading::injection(check, role);
    let caller = format!(
        "mcpres-caller-{}",
        crate::produce::drive::ident::random_hex(8)
    );
    let mut rec = json!({"kind": "cache", "injected": injected, "caller": caller, "requests": []});
    let launch = crate::produce::profile::ops::checks::shim_over(ctx.stdio_launch(), &injected);
    let mut probe = match launch.and_then(|l| ctx.start_with(&l)) {
        Ok(p) => p,
        Err(why) => {
            rec["startError"] = json!(why);
            return json!({"observation": {"cache": rec}});
        }
    };
    let mut requests = Vec::new();
    let mut ask = |probe: &mut crate::produce::profile::probe::Probe,
                   name: &str,
                   method: &str,
                   mut params: Value,
                   revision: Option<&str>| {
        let meta = params
            .as_object_mut()
            .expect("params are an object")
            .entry("_meta")
            .or_insert_with(|| json!({}));
        meta[META_CLIENT_INFO] = json!({"name": caller, "version": env!("CARGO_PKG_VERSION")});
        if let Some(rev) = revision {
            meta[META_PROTOCOL_VERSION] = json!(rev);
        }
        let uri = params.get("uri").cloned();
        let (id, line) = ctx.line(method, params);
        probe.send(line);
        let wait = if name == "discover" {
            ctx.startup
        } else {
            ctx.answer
        };
        let reply = probe.reply(&id, wait);
        requests.push(json!({"name": name, "method": method, "id": id, "uri": uri}));
        reply
    };
    // The opening is the conversation's first cacheable request (2026-07-28 only).
    let (method, params) = ctx.open_request();
    let open = ask(&mut probe, "discover", method, params, None);
    rec["open"] = json!(crate::produce::profile::ops::checks::reply_label(&open));
    if let Reply::Result(m) = &open {
        let caps = m
            .pointer("/result/capabilities")
            .cloned()
            .unwrap_or_default();
        let has = |k: &str| caps.get(k).is_some_and(|c| !c.is_null());
        let mut ask = |name: &str, method: &str, params: Value, revision: Option<&str>| {
            ask(&mut probe, name, method, params, revision)
        };
        if has("tools") {
            ask("tools", "tools/list", json!({}), None);
        }
        if has("prompts") {
            ask("prompts", "prompts/list", json!({}), None);
        }
        if has("resources") {
            let listed = ask("resources", "resources/list", json!({}), None);
            ask("templates", "resources/templates/list", json!({}), None);
            let mut uris: Vec<String> = Vec::new();
            if let Reply::Result(m) = &listed {
                for res in m
                    .pointer("/result/resources")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(u) = res["uri"].as_str()
                        && !uris.iter().any(|have| have == u)
                    {
                        uris.push(u.to_string());
                    }
                }
            }
            if let Some(a) = uris.first().cloned() {
                ask("readA", "resources/read", json!({"uri": a}), None);
                if let Some(b) = uris.get(1) {
                    ask("readB", "resources/read", json!({"uri": b}), None);
                }
                let frag = crate::produce::drive::ident::random_hex(6);
                ask(
                    "poison",
                    "resources/read",
                    json!({"uri": format!("{a}#mcpres-{frag}")}),
                    None,
                );
                ask("readA2", "resources/read", json!({"uri": a}), None);
            }
            let absent = format!(
                "mcpres-absent-{}://nothing",
                crate::produce::drive::ident::random_hex(6)
            );
            ask("absent", "resources/read", json!({"uri": absent}), None);
        }
        if has("tools") {
            ask("tools2", "tools/list", json!({}), None);
        }
        let list = [
            ("tools", "tools/list"),
            ("prompts", "prompts/list"),
            ("resources", "resources/list"),
        ]
        .into_iter()
        .find(|(cap, _)| has(cap))
        .map(|(_, m)| m);
        if let Some(method) = list {
            ask("revision", method, json!({}), Some(NO_REVISION));
        }
    }
    rec["requests"] = json!(requests);
    ctx.finish(probe, json!({"cache": rec}))
}

/// The three observations of `check`, labelled by the judge's reading; a positive the
/// reading leaves NOT_OBSERVED (no resources, no stamp, nothing hinted fresh) makes the
/// check NOT_OBSERVED with its reason, and no control is run.
fn three(ctx: &Ctx, check: &'static str, held: &'static str, refused: &'static str) -> CheckRun {
    three_unless_unobserved_by(
        reading::reading,
        r::CACHE_INJECTION_NOT_DECLARED,
        check,
        held,
        (Reject, refused),
        (Accept, held),
        |role| conversation(ctx, check, role),
    )
}

macro_rules! runner {
    ($f:ident, $id:literal, $held:expr, $refused:expr) => {
        fn $f(ctx: &Ctx) -> CheckRun {
            three(ctx, $id, $held, $refused)
        }
    };
}

runner!(ttl_ms, "ttl-ms", r::CACHE_TTL_PRESENT, r::CACHE_TTL_INVALID);
runner!(
    cache_scope,
    "cache-scope",
    r::CACHE_SCOPE_PRESENT,
    r::CACHE_SCOPE_INVALID
);
runner!(
    cache_key_identity,
    "cache-key-identity",
    r::CACHE_KEY_IDENTITY_HELD,
    r::CACHE_KEY_MIXED
);
runner!(
    protocol_revision_keying,
    "protocol-revision-keying",
    r::CACHE_REVISION_KEYED,
    r::CACHE_REVISION_NOT_KEYED
);
runner!(
    subject_version_keying,
    "subject-version-keying",
    r::CACHE_VERSION_CONSISTENT,
    r::CACHE_VERSION_KEY_MISMATCH
);
runner!(
    stale_result,
    "stale-result",
    r::CACHE_FRESH_HELD,
    r::CACHE_STALE_WITHIN_TTL
);
runner!(
    list_resource_consistency,
    "list-resource-consistency",
    r::CACHE_LISTED_READABLE,
    r::CACHE_LISTED_NOT_READABLE
);
runner!(
    negative_caching,
    "negative-caching",
    r::CACHE_ABSENT_NOT_CACHED,
    r::CACHE_ABSENT_CACHED
);
runner!(
    cache_poisoning_boundary,
    "cache-poisoning-boundary",
    r::CACHE_POISON_CONTAINED,
    r::CACHE_POISONED
);
runner!(
    personalized_data_not_public,
    "personalized-data-not-public",
    r::CACHE_PERSONAL_NOT_PUBLIC,
    r::CACHE_PERSONAL_PUBLIC
);

/// A check no stdio run observes: NOT_OBSERVED with what it needs.
fn unobserved(check: &'static str) -> CheckRun {
    let needs = UNOBSERVABLE
        .iter()
        .find(|(id, _)| *id == check)
        .map_or("what a stdio run does not have", |(_, n)| n);
    CheckRun::not_observed(
        check,
        format!("{}: it needs {needs}", r::CACHE_NOT_OBSERVABLE_ON_STDIO),
    )
}

fn user_tenant_separation(_ctx: &Ctx) -> CheckRun {
    unobserved("user-tenant-separation")
}

fn expiry(_ctx: &Ctx) -> CheckRun {
    unobserved("expiry")
}

fn capability_change_invalidation(_ctx: &Ctx) -> CheckRun {
    unobserved("capability-change-invalidation")
}
