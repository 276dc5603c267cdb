//! `mcp-res/cache-behavior/v1` observations judged from their record (spec/cache.md).
//!
//! A cache observation is one conversation with the subject at 2026-07-28: `server/discover`,
//! then every cacheable request the subject's declared capabilities allow (the lists,
//! two `resources/read`s of listed resources, a read of the first with a fragment added,
//! the first read again, a read of a URI no server has, the tool list again and a tool
//! list naming a protocol version no revision has). The record names each request
//! (`requests`: name, id, method, uri), the client name every request carried (`caller`)
//! and what the transport injected (`injected`); the answers are read from the stored
//! stdout. The reading (outcome, reason, why) is a pure function of that record and the
//! stored bytes: the runner labels each observation with [`reading`], and `validate`
//! reads it again and refuses a label the record does not give.
//!
//! What each check reads is what the subject's own answers show; no verdict comes from a
//! time but one the subject declared (a `ttlMs`), measured on the stored chunks.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::diag::reasons as r;
use crate::model::mcp::META_SERVER_INFO;
use crate::model::vocab::ProbeOutcome::{self, Accept, NotObserved, Reject};

/// The profile these readings are for.
pub const PROFILE: &str = "mcp-res/cache-behavior/v1";

/// The methods whose 2026-07-28 results carry `ttlMs` and `cacheScope`.
pub const CACHEABLE: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// The record's names of the requests that are not meant to be served: a read of a
/// URI no server has, a read with an attacker-chosen fragment, a listing under a
/// revision no server has.
const NOT_SERVED: &[&str] = &["absent", "poison", "revision"];

/// The checks a stdio run against a server cannot observe, and what each needs.
pub const UNOBSERVABLE: &[(&str, &str)] = &[
    (
        "user-tenant-separation",
        "two authorization contexts, to see whether a private result of one reaches the other; a stdio server has the one its process was started with",
    ),
    (
        "expiry",
        "a cache of its own to expire: whether an entry is dropped once its ttlMs has passed is the cache's behaviour, and mcpres drives the server, not a cache",
    ),
    (
        "capability-change-invalidation",
        "a subject whose capabilities or lists change during the run, and a way to make them change; mcpres has none for an arbitrary server",
    ),
];

/// A reading: outcome, reason and why.
pub use super::ops::Reading;

fn read(o: ProbeOutcome, reason: &str, why: impl Into<String>) -> Reading {
    (o, reason.to_string(), why.into())
}

/// What the transport injects for `check`'s `role` (the shim's spec as JSON; `{}` for
/// the positive). The runner injects exactly this, and the judge refuses a record that
/// says it injected anything else.
pub fn injection(check: &str, role: &str) -> Value {
    let (negative, mutant) = match check {
        "ttl-ms" => ("strip-ttl", "ttl-zero"),
        "cache-scope" => ("bad-scope", "scope-private"),
        "cache-key-identity" | "protocol-revision-keying" => ("key-method", "key-full"),
        "subject-version-keying" => ("stamp-stale", "stamp-extra"),
        "stale-result" => ("drift-list", "add-tool-always"),
        "list-resource-consistency" => ("unlist-read", "retext-read"),
        "negative-caching" => ("cache-absent", "cache-absent-stale"),
        "cache-poisoning-boundary" => ("poison-store", "poison-nostore"),
        "personalized-data-not-public" => ("personal-public", "personal-private"),
        _ => return json!({}),
    };
    match role {
        "negative" => json!({"cache": negative}),
        "mutant" => json!({"cache": mutant}),
        _ => json!({}),
    }
}

/// The stored conversation: each named request's answer (a message with `result` or
/// `error`) and when it came, and the notifications the subject sent with their times.
struct Conversation {
    /// name → (method, uri, id, answer with its time).
    requests: Vec<Named>,
    notifications: Vec<(u64, String)>,
}

struct Named {
    name: String,
    method: String,
    uri: Option<String>,
    answer: Option<(u64, Value)>,
}

impl Conversation {
    /// The record's requests, each checked against the stored stdin (its id carried
    /// there with the recorded method), with the stored stdout's answer to it.
    fn of(rec: &Value, transcript: &Value) -> Result<Conversation, String> {
        let sent = super::ops::timed_messages(transcript, "stdin");
        let out = super::ops::timed_messages(transcript, "stdout");
        let mut requests = Vec::new();
        for q in rec["requests"].as_array().into_iter().flatten() {
            let (Some(name), Some(method), Some(id)) =
                (q["name"].as_str(), q["method"].as_str(), q.get("id"))
            else {
                return Err(format!(
                    "the record names a request without name, method or id: {q}"
                ));
            };
            let carried = sent.iter().any(|(_, m)| {
                m.get("id") == Some(id) && m.get("method").and_then(Value::as_str) == Some(method)
            });
            if !carried {
                return Err(format!(
                    "the stored stdin carries no {method} request with the id {id} the record names for {name}"
                ));
            }
            let answer = out
                .iter()
                .find(|(_, m)| {
                    m.get("id") == Some(id)
                        && m.get("method").is_none()
                        && (m.get("result").is_some() || m.get("error").is_some())
                })
                .cloned();
            requests.push(Named {
                name: name.to_string(),
                method: method.to_string(),
                uri: q["uri"].as_str().map(str::to_string),
                answer,
            });
        }
        let notifications = out
            .iter()
            .filter(|(_, m)| m.get("id").is_none())
            .filter_map(|(at, m)| Some((*at, m.get("method")?.as_str()?.to_string())))
            .collect();
        Ok(Conversation {
            requests,
            notifications,
        })
    }

    fn named(&self, name: &str) -> Option<&Named> {
        self.requests.iter().find(|q| q.name == name)
    }

    /// The result of request `name`, when it was answered with one.
    fn result(&self, name: &str) -> Option<&Value> {
        self.named(name)?.answer.as_ref()?.1.get("result")
    }

    /// The answered results of the cacheable requests meant to be served.
    fn served(&self) -> impl Iterator<Item = (&Named, &Value)> {
        self.requests
            .iter()
            .filter(|q| CACHEABLE.contains(&q.method.as_str()))
            .filter(|q| !NOT_SERVED.contains(&q.name.as_str()))
            .filter_map(|q| Some((q, q.answer.as_ref()?.1.get("result")?)))
    }
}

fn label(q: &Named) -> String {
    match &q.uri {
        Some(uri) => format!("{} ({} {uri})", q.name, q.method),
        None => format!("{} ({})", q.name, q.method),
    }
}

fn answer_label(q: &Named) -> String {
    match &q.answer {
        None => "no answer".into(),
        Some((_, m)) => match m.pointer("/error/code").and_then(Value::as_i64) {
            Some(code) => format!("error {code}"),
            None => "a result".into(),
        },
    }
}

/// The reading of `check`'s `role` observation from its stored `transcript`; `None`
/// when the transcript holds no cache record.
pub fn reading(check: &str, role: &str, transcript: &Value) -> Option<Reading> {
    let rec = transcript.pointer("/observation/cache")?;
    let declared = injection(check, role);
    if rec["injected"] != declared {
        return Some(read(
            NotObserved,
            r::CACHE_INJECTION_NOT_DECLARED,
            format!(
                "the record says {} was injected; the {role} of {check} injects {declared}",
                rec["injected"]
            ),
        ));
    }
    if let Some(why) = rec["startError"].as_str() {
        return Some(read(NotObserved, r::OPEN_FAILED, why));
    }
    if let Some(open) = rec["open"].as_str().filter(|o| *o != "result") {
        let reason = if open.starts_with("error:") {
            r::OPEN_REFUSED
        } else {
            r::OPEN_FAILED
        };
        return Some(read(NotObserved, reason, format!("the opening got {open}")));
    }
    let c = match Conversation::of(rec, transcript) {
        Ok(c) => c,
        Err(why) => return Some(read(NotObserved, r::LABEL_NOT_IN_RECORD, why)),
    };
    Some(match check {
        "ttl-ms" => hints(
            &c,
            "ttlMs",
            r::CACHE_TTL_PRESENT,
            r::CACHE_TTL_INVALID,
            |v| v.is_u64(),
        ),
        "cache-scope" => hints(
            &c,
            "cacheScope",
            r::CACHE_SCOPE_PRESENT,
            r::CACHE_SCOPE_INVALID,
            |v| v == "public" || v == "private",
        ),
        "cache-key-identity" => key_identity(&c),
        "protocol-revision-keying" => revision_keying(&c),
        "subject-version-keying" => version_keying(&c),
        "stale-result" => stale_result(&c),
        "list-resource-consistency" => list_consistency(&c),
        "negative-caching" => negative_caching(&c),
        "cache-poisoning-boundary" => poisoning(&c),
        "personalized-data-not-public" => personal(&c, rec["caller"].as_str().unwrap_or("")),
        other => read(
            NotObserved,
            r::CACHE_NOT_OBSERVABLE_ON_STDIO,
            format!("{other} is not read from a conversation"),
        ),
    })
}

/// Every served cacheable result carries `key` with a value `ok` accepts.
fn hints(
    c: &Conversation,
    key: &str,
    held: &str,
    refused: &str,
    ok: impl Fn(&Value) -> bool,
) -> Reading {
    let mut seen = Vec::new();
    for (q, result) in c.served() {
        match result.get(key) {
            Some(v) if ok(v) => seen.push(format!("{} {key} {v}", q.name)),
            Some(v) => {
                return read(
                    Reject,
                    refused,
                    format!("{} was answered with {key} {v}", label(q)),
                );
            }
            None => {
                return read(
                    Reject,
                    refused,
                    format!("{} was answered with a result without {key}", label(q)),
                );
            }
        }
    }
    if seen.is_empty() {
        return read(
            NotObserved,
            r::NO_ANSWER,
            "no cacheable request was answered with a result",
        );
    }
    read(Accept, held, seen.join(", "))
}

/// The URIs every item of a `resources/read` result's contents names.
fn content_uris(result: &Value) -> Vec<String> {
    result["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| item["uri"].as_str().unwrap_or("(none)").to_string())
        .collect()
}

fn key_identity(c: &Conversation) -> Reading {
    let (Some(a), Some(b)) = (c.named("readA"), c.named("readB")) else {
        return read(
            NotObserved,
            r::CACHE_NO_RESOURCES,
            "the subject lists fewer than two resources with distinct URIs",
        );
    };
    let mut held = Vec::new();
    for q in [Some(a), Some(b), c.named("readA2")].into_iter().flatten() {
        let Some(result) = c.result(&q.name) else {
            if q.name == "readA2" {
                continue;
            }
            return read(
                NotObserved,
                r::CACHE_READ_FAILED,
                format!("{} got {}", label(q), answer_label(q)),
            );
        };
        let asked = q.uri.clone().unwrap_or_default();
        let uris = content_uris(result);
        if uris.is_empty() || uris.iter().any(|u| *u != asked) {
            return read(
                Reject,
                r::CACHE_KEY_MIXED,
                format!(
                    "{} was answered with contents of {}",
                    label(q),
                    uris.join(", ")
                ),
            );
        }
        held.push(format!("{} named {asked}", q.name));
    }
    read(Accept, r::CACHE_KEY_IDENTITY_HELD, held.join(", "))
}

fn revision_keying(c: &Conversation) -> Reading {
    let Some(q) = c.named("revision") else {
        return read(
            NotObserved,
            r::NO_ANSWER,
            "the record names no tool list under another revision",
        );
    };
    match &q.answer {
        Some((_, m)) if m.get("error").is_some() => read(
            Accept,
            r::CACHE_REVISION_KEYED,
            format!("{} got {}", label(q), answer_label(q)),
        ),
        Some(_) => read(
            Reject,
            r::CACHE_REVISION_NOT_KEYED,
            format!(
                "{} named a protocol version no revision has and got a result",
                label(q)
            ),
        ),
        None => read(
            NotObserved,
            r::NO_ANSWER,
            format!("{} got no answer", label(q)),
        ),
    }
}

fn version_keying(c: &Conversation) -> Reading {
    let mut stamps: Vec<(String, (Value, Value))> = Vec::new();
    for (q, result) in c.served() {
        if let Some(s) = result
            .pointer("/_meta")
            .and_then(|m| m.get(META_SERVER_INFO))
        {
            stamps.push((q.name.clone(), (s["name"].clone(), s["version"].clone())));
        }
    }
    let Some((first_name, first)) = stamps.first().cloned() else {
        return read(
            NotObserved,
            r::CACHE_NO_VERSION_STAMP,
            "no cacheable result carries an io.modelcontextprotocol/serverInfo stamp",
        );
    };
    for (name, stamp) in &stamps {
        if *stamp != first {
            return read(
                Reject,
                r::CACHE_VERSION_KEY_MISMATCH,
                format!(
                    "{name} names {} {}, {first_name} names {} {}",
                    stamp.0, stamp.1, first.0, first.1
                ),
            );
        }
    }
    read(
        Accept,
        r::CACHE_VERSION_CONSISTENT,
        format!(
            "{} stamped result(s) name {} {}",
            stamps.len(),
            first.0,
            first.1
        ),
    )
}

fn tool_names(result: &Value) -> BTreeSet<String> {
    result["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

fn stale_result(c: &Conversation) -> Reading {
    let (Some(first), Some(second)) = (c.named("tools"), c.named("tools2")) else {
        return read(
            NotObserved,
            r::CACHE_NOTHING_FRESH,
            "the subject declares no tools",
        );
    };
    let (Some((at1, m1)), Some((at2, m2))) = (&first.answer, &second.answer) else {
        return read(NotObserved, r::NO_ANSWER, "a tool list got no answer");
    };
    let (Some(r1), Some(r2)) = (m1.get("result"), m2.get("result")) else {
        return read(
            NotObserved,
            r::CACHE_NOTHING_FRESH,
            "a tool list was refused",
        );
    };
    let ttl = r1["ttlMs"].as_u64().unwrap_or(0);
    if ttl == 0 {
        return read(
            NotObserved,
            r::CACHE_NOTHING_FRESH,
            "the first tool list is hinted immediately stale (ttlMs 0 or none)",
        );
    }
    let (n1, n2) = (tool_names(r1), tool_names(r2));
    let elapsed = at2.saturating_sub(*at1);
    if n1 == n2 {
        return read(
            Accept,
            r::CACHE_FRESH_HELD,
            format!(
                "the same {} tools {elapsed} ms apart, within ttlMs {ttl}",
                n1.len()
            ),
        );
    }
    let announced = c
        .notifications
        .iter()
        .any(|(at, m)| m == "notifications/tools/list_changed" && *at >= *at1 && *at <= *at2);
    if announced || elapsed >= ttl {
        return read(
            Accept,
            r::CACHE_FRESH_HELD,
            format!(
                "the tools changed {elapsed} ms apart ({}), with ttlMs {ttl}",
                if announced {
                    "announced by notifications/tools/list_changed"
                } else {
                    "after the freshness had passed"
                }
            ),
        );
    }
    let added: Vec<&String> = n2.difference(&n1).collect();
    let removed: Vec<&String> = n1.difference(&n2).collect();
    read(
        Reject,
        r::CACHE_STALE_WITHIN_TTL,
        format!(
            "the tool list changed {elapsed} ms after an answer hinted fresh for {ttl} ms, unannounced (added {added:?}, removed {removed:?})"
        ),
    )
}

fn list_consistency(c: &Conversation) -> Reading {
    let reads: Vec<&Named> = ["readA", "readB"]
        .iter()
        .filter_map(|n| c.named(n))
        .collect();
    if reads.is_empty() {
        return read(
            NotObserved,
            r::CACHE_NO_RESOURCES,
            "the subject lists no resources",
        );
    }
    for q in &reads {
        match &q.answer {
            Some((_, m)) if m.get("result").is_some() => {}
            Some(_) => {
                return read(
                    Reject,
                    r::CACHE_LISTED_NOT_READABLE,
                    format!("{} was listed and got {}", label(q), answer_label(q)),
                );
            }
            None => {
                return read(
                    NotObserved,
                    r::NO_ANSWER,
                    format!("{} got no answer", label(q)),
                );
            }
        }
    }
    read(
        Accept,
        r::CACHE_LISTED_READABLE,
        format!("{} listed resource(s) read with a result", reads.len()),
    )
}

fn negative_caching(c: &Conversation) -> Reading {
    let Some(q) = c.named("absent") else {
        return read(
            NotObserved,
            r::CACHE_NO_RESOURCES,
            "the subject declares no resources",
        );
    };
    match &q.answer {
        None => read(
            NotObserved,
            r::NO_ANSWER,
            format!("{} got no answer", label(q)),
        ),
        Some((_, m)) => match m.get("result") {
            None => read(
                Accept,
                r::CACHE_ABSENT_NOT_CACHED,
                format!("{} got {}", label(q), answer_label(q)),
            ),
            Some(result) => match result["ttlMs"].as_u64() {
                Some(ttl) if ttl > 0 => read(
                    Reject,
                    r::CACHE_ABSENT_CACHED,
                    format!("{} got a result hinted fresh for {ttl} ms", label(q)),
                ),
                _ => read(
                    Accept,
                    r::CACHE_ABSENT_NOT_CACHED,
                    format!("{} got a result hinted immediately stale", label(q)),
                ),
            },
        },
    }
}

fn poisoning(c: &Conversation) -> Reading {
    let Some(first) = c.result("readA") else {
        return read(
            NotObserved,
            r::CACHE_NO_RESOURCES,
            "the subject lists no resource that was read with a result",
        );
    };
    let Some(again) = c.result("readA2") else {
        return read(
            NotObserved,
            r::CACHE_READ_FAILED,
            "the first resource, read again, got no result",
        );
    };
    let poisoned = c.result("poison").map(|p| &p["contents"]);
    if let Some(p) = poisoned
        && *p == again["contents"]
        && *p != first["contents"]
    {
        return read(
            Reject,
            r::CACHE_POISONED,
            "the first resource read again got the contents of its read with a fragment added, not its own",
        );
    }
    read(
        Accept,
        r::CACHE_POISON_CONTAINED,
        format!(
            "the read with a fragment got {}; the first resource read again got its own contents",
            c.named("poison").map_or("nothing".into(), answer_label)
        ),
    )
}

fn personal(c: &Conversation, caller: &str) -> Reading {
    if caller.len() < 8 {
        return read(
            NotObserved,
            r::LABEL_NOT_IN_RECORD,
            "the record names no caller",
        );
    }
    let mut public = 0;
    for (q, result) in c.served() {
        if result["cacheScope"] != "public" {
            continue;
        }
        public += 1;
        if result.to_string().contains(caller) {
            return read(
                Reject,
                r::CACHE_PERSONAL_PUBLIC,
                format!(
                    "{} is scoped public and carries the caller's name",
                    label(q)
                ),
            );
        }
    }
    if public == 0 {
        return read(
            NotObserved,
            r::CACHE_NOTHING_PUBLIC,
            "no result is scoped public",
        );
    }
    read(
        Accept,
        r::CACHE_PERSONAL_NOT_PUBLIC,
        format!("{public} public result(s), none carrying the caller's name"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One request of a test conversation: name, method, URI, and its answer (an error
    /// when it has a `code`).
    type Req<'a> = (&'a str, &'a str, Option<&'a str>, Value);

    fn chunk(stream: &str, at: u64, m: Value) -> Value {
        json!({"stream": stream, "atMs": at, "text": format!("{m}\n")})
    }

    /// A transcript of `requests`, ten milliseconds apart.
    fn transcript(check: &str, role: &str, requests: &[Req]) -> Value {
        let mut chunks = Vec::new();
        let mut named = Vec::new();
        for (n, (name, method, uri, answer)) in requests.iter().enumerate() {
            let id = json!(n + 10);
            let mut params = json!({});
            if let Some(u) = uri {
                params["uri"] = json!(u);
            }
            let at = n as u64 * 10;
            chunks.push(chunk(
                "stdin",
                at,
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            ));
            let key = if answer.get("code").is_some() {
                "error"
            } else {
                "result"
            };
            let mut reply = json!({"jsonrpc": "2.0", "id": id});
            reply[key] = answer.clone();
            chunks.push(chunk("stdout", at + 5, reply));
            named.push(json!({"name": name, "method": method, "id": id, "uri": uri}));
        }
        json!({"chunks": chunks, "observation": {"cache": {
            "kind": "cache", "injected": injection(check, role), "open": "result",
            "caller": "mcpres-caller-0123456789", "requests": named}}})
    }

    /// The positive's reason for `check` over `requests`.
    fn reason(check: &str, requests: &[Req]) -> String {
        reading(check, "positive", &transcript(check, "positive", requests))
            .expect("a cache record")
            .1
    }

    fn hinted(mut v: Value) -> Value {
        v["ttlMs"] = json!(60000);
        v["cacheScope"] = json!("public");
        v
    }

    fn tools(names: &[&str]) -> Value {
        let t: Vec<Value> = names.iter().map(|n| json!({"name": n})).collect();
        hinted(json!({ "tools": t }))
    }

    fn contents(uri: &str, text: &str) -> Value {
        hinted(json!({"contents": [{"uri": uri, "text": text}]}))
    }

    fn error() -> Value {
        json!({"code": -32002, "message": "not found"})
    }

    #[test]
    fn hints_are_read_from_every_served_result() {
        let list = |v: Value| [("tools", "tools/list", None, v)];
        assert_eq!(reason("ttl-ms", &list(tools(&[]))), r::CACHE_TTL_PRESENT);
        let negative = json!({"tools": [], "ttlMs": -1, "cacheScope": "public"});
        assert_eq!(reason("ttl-ms", &list(negative)), r::CACHE_TTL_INVALID);
        // The absent read's error says nothing of hints.
        let with_absent = [
            ("tools", "tools/list", None, tools(&[])),
            ("absent", "resources/read", Some("x://y"), error()),
        ];
        assert_eq!(reason("cache-scope", &with_absent), r::CACHE_SCOPE_PRESENT);
        let shared = json!({"tools": [], "ttlMs": 1, "cacheScope": "shared"});
        assert_eq!(reason("cache-scope", &list(shared)), r::CACHE_SCOPE_INVALID);
    }

    #[test]
    fn a_record_whose_injection_is_not_declared_is_not_judged() {
        let mut t = transcript(
            "ttl-ms",
            "negative",
            &[("tools", "tools/list", None, tools(&[]))],
        );
        t["observation"]["cache"]["injected"] = json!({});
        let read = reading("ttl-ms", "negative", &t).unwrap().1;
        assert_eq!(read, r::CACHE_INJECTION_NOT_DECLARED);
    }

    #[test]
    fn a_request_the_stdin_does_not_carry_is_not_in_the_record() {
        let mut t = transcript(
            "ttl-ms",
            "positive",
            &[("tools", "tools/list", None, tools(&[]))],
        );
        t["observation"]["cache"]["requests"][0]["method"] = json!("prompts/list");
        let read = reading("ttl-ms", "positive", &t).unwrap().1;
        assert_eq!(read, r::LABEL_NOT_IN_RECORD);
    }

    #[test]
    fn keys_and_revisions_are_read_from_the_answers() {
        let reads = |b: Value| {
            [
                (
                    "readA",
                    "resources/read",
                    Some("a://1"),
                    contents("a://1", "one"),
                ),
                ("readB", "resources/read", Some("b://2"), b),
            ]
        };
        let own = reads(contents("b://2", "two"));
        assert_eq!(
            reason("cache-key-identity", &own),
            r::CACHE_KEY_IDENTITY_HELD
        );
        let mixed = reads(contents("a://1", "one"));
        assert_eq!(reason("cache-key-identity", &mixed), r::CACHE_KEY_MIXED);
        let one = [(
            "readA",
            "resources/read",
            Some("a://1"),
            contents("a://1", "one"),
        )];
        assert_eq!(reason("cache-key-identity", &one), r::CACHE_NO_RESOURCES);
        let revision = |v: Value| [("revision", "tools/list", None, v)];
        let served = reason("protocol-revision-keying", &revision(tools(&[])));
        assert_eq!(served, r::CACHE_REVISION_NOT_KEYED);
        let refused = reason("protocol-revision-keying", &revision(error()));
        assert_eq!(refused, r::CACHE_REVISION_KEYED);
    }

    #[test]
    fn a_poisoned_key_is_one_that_serves_the_fragments_answer() {
        let after = |again: &str| {
            [
                (
                    "readA",
                    "resources/read",
                    Some("a://1"),
                    contents("a://1", "one"),
                ),
                (
                    "poison",
                    "resources/read",
                    Some("a://1#p"),
                    contents("a://1", "bad"),
                ),
                (
                    "readA2",
                    "resources/read",
                    Some("a://1"),
                    contents("a://1", again),
                ),
            ]
        };
        let poisoned = reason("cache-poisoning-boundary", &after("bad"));
        assert_eq!(poisoned, r::CACHE_POISONED);
        let contained = reason("cache-poisoning-boundary", &after("one"));
        assert_eq!(contained, r::CACHE_POISON_CONTAINED);
    }

    #[test]
    fn a_list_that_changes_is_stale_only_within_its_freshness_and_unannounced() {
        let twice = |second: Value| {
            [
                ("tools", "tools/list", None, tools(&["a"])),
                ("tools2", "tools/list", None, second),
            ]
        };
        assert_eq!(
            reason("stale-result", &twice(tools(&["a"]))),
            r::CACHE_FRESH_HELD
        );
        let drift = twice(tools(&["a", "b"]));
        assert_eq!(reason("stale-result", &drift), r::CACHE_STALE_WITHIN_TTL);
        // Hinted immediately stale: nothing was promised.
        let zero = [
            (
                "tools",
                "tools/list",
                None,
                json!({"tools": [], "ttlMs": 0}),
            ),
            ("tools2", "tools/list", None, tools(&["b"])),
        ];
        assert_eq!(reason("stale-result", &zero), r::CACHE_NOTHING_FRESH);
    }

    #[test]
    fn the_callers_name_in_a_public_result_is_personal_data_made_public() {
        let listed = |scope: &str, description: &str| {
            let v = json!({"tools": [{"name": "a", "description": description}],
                           "ttlMs": 5, "cacheScope": scope});
            [("tools", "tools/list", None, v)]
        };
        let check = "personalized-data-not-public";
        let mine = "for mcpres-caller-0123456789";
        assert_eq!(
            reason(check, &listed("public", mine)),
            r::CACHE_PERSONAL_PUBLIC
        );
        let anyone = listed("public", "for anyone");
        assert_eq!(reason(check, &anyone), r::CACHE_PERSONAL_NOT_PUBLIC);
        // Nothing public: nothing of the caller's is shared by the scope.
        assert_eq!(
            reason(check, &listed("private", mine)),
            r::CACHE_NOTHING_PUBLIC
        );
    }

    #[test]
    fn an_absent_resource_is_cached_only_when_hinted_fresh() {
        let absent = |v: Value| [("absent", "resources/read", Some("none://x"), v)];
        let check = "negative-caching";
        assert_eq!(reason(check, &absent(error())), r::CACHE_ABSENT_NOT_CACHED);
        let fresh = json!({"contents": [], "ttlMs": 10, "cacheScope": "public"});
        assert_eq!(reason(check, &absent(fresh)), r::CACHE_ABSENT_CACHED);
        let stale = json!({"contents": [], "ttlMs": 0, "cacheScope": "public"});
        assert_eq!(reason(check, &absent(stale)), r::CACHE_ABSENT_NOT_CACHED);
    }

    #[test]
    fn stamps_of_one_process_must_agree() {
        let stamp = |v: &str| {
            hinted(json!({"tools": [], "_meta": {META_SERVER_INFO: {"name": "s", "version": v}}}))
        };
        let check = "subject-version-keying";
        let two = |second: &str| {
            [
                ("tools", "tools/list", None, stamp("1.0")),
                ("tools2", "tools/list", None, stamp(second)),
            ]
        };
        assert_eq!(reason(check, &two("1.0")), r::CACHE_VERSION_CONSISTENT);
        assert_eq!(
            reason(check, &two("0.0.0-stale")),
            r::CACHE_VERSION_KEY_MISMATCH
        );
        let none = [("tools", "tools/list", None, tools(&[]))];
        assert_eq!(reason(check, &none), r::CACHE_NO_VERSION_STAMP);
    }
}
