//! The shim's cache defects (`mcp-res/cache-behavior/v1`'s controls and mutants): a
//! transport between the runner and a stdio subject that changes the answers to cacheable
//! requests, or serves them from a cache of its own, as a misbehaving cache or server
//! would. Which defect each observation injects is `judge::cache::injection`; the judge
//! reads the result from the stored bytes, never from the defect's name.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::judge::cache::CACHEABLE;
use crate::model::mcp::{META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO};

/// One cache defect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Defect {
    /// `ttlMs` removed from every cacheable result.
    StripTtl,
    /// `ttlMs` set to 0 (immediately stale: valid).
    TtlZero,
    /// `cacheScope` set to `shared` (no such scope).
    BadScope,
    /// `cacheScope` set to `private` (narrower: valid).
    ScopePrivate,
    /// A cache keyed by the method alone: a later request of a method is served the
    /// first result of it, whatever its URI or revision.
    KeyMethod,
    /// A cache keyed by method, URI and revision: a later request with the same key is
    /// served the first result of it.
    KeyFull,
    /// Every cacheable result but `server/discover`'s stamped with the server's name and
    /// version `0.0.0-stale` (an entry of an older version served as this one's).
    StampStale,
    /// Every cacheable result stamped as `server/discover` was, with a title added.
    StampExtra,
    /// A tool added to the second tool list and every later one.
    DriftList,
    /// A tool added to every tool list.
    AddToolAlways,
    /// Every `resources/read` of another URI than the first read's answered as not found.
    UnlistRead,
    /// The text of every `resources/read` result replaced.
    RetextRead,
    /// A refused `resources/read` answered with an empty result fresh for a day.
    CacheAbsent,
    /// A refused `resources/read` answered with an empty result hinted immediately stale.
    CacheAbsentStale,
    /// A `resources/read` of a URI with a fragment answered with other contents, which
    /// are stored under the URI without the fragment and served for its later reads.
    PoisonStore,
    /// The same answer to the fragment's read, stored nowhere.
    PoisonNostore,
    /// The caller's client name written into the tool list, scoped `public`.
    PersonalPublic,
    /// The same, scoped `private`.
    PersonalPrivate,
}

impl Defect {
    pub fn parse(name: &str) -> Option<Defect> {
        Some(match name {
            "strip-ttl" => Defect::StripTtl,
            "ttl-zero" => Defect::TtlZero,
            "bad-scope" => Defect::BadScope,
            "scope-private" => Defect::ScopePrivate,
            "key-method" => Defect::KeyMethod,
            "key-full" => Defect::KeyFull,
            "stamp-stale" => Defect::StampStale,
            "stamp-extra" => Defect::StampExtra,
            "drift-list" => Defect::DriftList,
            "add-tool-always" => Defect::AddToolAlways,
            "unlist-read" => Defect::UnlistRead,
            "retext-read" => Defect::RetextRead,
            "cache-absent" => Defect::CacheAbsent,
            "cache-absent-stale" => Defect::CacheAbsentStale,
            "poison-store" => Defect::PoisonStore,
            "poison-nostore" => Defect::PoisonNostore,
            "personal-public" => Defect::PersonalPublic,
            "personal-private" => Defect::PersonalPrivate,
            _ => return None,
        })
    }
}

/// A request the runner sent, as the defect needs it.
#[derive(Debug, Clone, Default)]
struct Noted {
    method: String,
    uri: Option<String>,
    revision: Option<String>,
    caller: Option<String>,
}

/// What the relay remembers.
#[derive(Debug, Default)]
pub struct State {
    defect: Option<Defect>,
    noted: BTreeMap<String, Noted>,
    /// Results kept by key (the defect's key), served for later requests with it.
    cache: BTreeMap<String, Value>,
    /// The stamp `server/discover` carried (or its `serverInfo`).
    stamp: Option<Value>,
    tool_lists: usize,
    first_read: Option<String>,
}

impl State {
    pub fn new(defect: Defect) -> State {
        State {
            defect: Some(defect),
            ..State::default()
        }
    }

    fn defect(&self) -> Defect {
        self.defect.expect("a relay has a defect")
    }

    /// The key a request is cached under by this defect, if it is cached at all.
    fn key(&self, n: &Noted) -> Option<String> {
        if !CACHEABLE.contains(&n.method.as_str()) || n.method == "server/discover" {
            return None;
        }
        match self.defect() {
            Defect::KeyMethod => Some(n.method.clone()),
            Defect::KeyFull => Some(json!([n.method, n.uri, n.revision]).to_string()),
            Defect::PoisonStore if n.method == "resources/read" => n.uri.clone(),
            _ => None,
        }
    }

    /// Note a request line; the answer to send for it at once (from the cache), if any.
    pub fn request(&mut self, m: &Value) -> Option<Value> {
        let (Some(id), Some(method)) = (m.get("id"), m.get("method").and_then(Value::as_str))
        else {
            return None;
        };
        let meta = m.pointer("/params/_meta");
        let n = Noted {
            method: method.to_string(),
            uri: m
                .pointer("/params/uri")
                .and_then(Value::as_str)
                .map(str::to_string),
            revision: meta
                .and_then(|x| x.get(META_PROTOCOL_VERSION))
                .and_then(Value::as_str)
                .map(str::to_string),
            caller: meta
                .and_then(|x| x.get(META_CLIENT_INFO))
                .and_then(|c| c.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        let served = self
            .key(&n)
            .and_then(|k| self.cache.get(&k))
            .map(|result| json!({"jsonrpc": "2.0", "id": id, "result": result}));
        if served.is_none() {
            self.noted.insert(id.to_string(), n);
        }
        served
    }

    /// The answer `m` as the defect passes it on (`m` itself when it answers nothing noted).
    pub fn answer(&mut self, mut m: Value) -> Value {
        let Some(n) = m
            .get("id")
            .filter(|_| m.get("method").is_none())
            .and_then(|id| self.noted.remove(&id.to_string()))
        else {
            return m;
        };
        let defect = self.defect();
        let cacheable = CACHEABLE.contains(&n.method.as_str());
        if n.method == "server/discover" {
            self.stamp = m
                .pointer("/result/_meta")
                .and_then(|x| x.get(META_SERVER_INFO))
                .or_else(|| m.pointer("/result/serverInfo"))
                .cloned();
        }
        let read = n.method == "resources/read";
        let fragment = read && n.uri.as_deref().is_some_and(|u| u.contains('#'));
        match defect {
            Defect::UnlistRead if read => {
                let first = self
                    .first_read
                    .get_or_insert_with(|| n.uri.clone().unwrap_or_default());
                if n.uri.as_deref() != Some(first.as_str()) && m.get("result").is_some() {
                    let id = m["id"].clone();
                    m = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32002,
                        "message": "Resource not found"}});
                }
            }
            Defect::CacheAbsent | Defect::CacheAbsentStale if read && m.get("error").is_some() => {
                let ttl = if defect == Defect::CacheAbsent {
                    86_400_000
                } else {
                    0
                };
                let id = m["id"].clone();
                m = json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete",
                    "contents": [], "ttlMs": ttl, "cacheScope": "public"}});
            }
            Defect::PoisonStore | Defect::PoisonNostore if fragment => {
                let base = n
                    .uri
                    .as_deref()
                    .unwrap_or("")
                    .split('#')
                    .next()
                    .unwrap_or("")
                    .to_string();
                let poisoned = json!({"resultType": "complete", "contents": [{"uri": base,
                    "mimeType": "text/plain", "text": "poisoned by mcpres"}],
                    "ttlMs": 86_400_000, "cacheScope": "public"});
                let id = m["id"].clone();
                m = json!({"jsonrpc": "2.0", "id": id, "result": poisoned.clone()});
                if defect == Defect::PoisonStore {
                    self.cache.insert(base, poisoned);
                }
            }
            _ => {}
        }
        if let Some(result) = m.get_mut("result").and_then(Value::as_object_mut) {
            let not_discover = n.method != "server/discover";
            match defect {
                Defect::StripTtl if cacheable => {
                    result.remove("ttlMs");
                }
                Defect::TtlZero if cacheable => {
                    result.insert("ttlMs".into(), json!(0));
                }
                Defect::BadScope if cacheable => {
                    result.insert("cacheScope".into(), json!("shared"));
                }
                Defect::ScopePrivate if cacheable => {
                    result.insert("cacheScope".into(), json!("private"));
                }
                Defect::StampStale if cacheable && not_discover => {
                    let name = self
                        .stamp
                        .as_ref()
                        .and_then(|s| s.get("name"))
                        .cloned()
                        .unwrap_or(json!("unknown"));
                    stamp(result, json!({"name": name, "version": "0.0.0-stale"}));
                }
                Defect::StampExtra if cacheable && not_discover => {
                    if let Some(mut s) = self.stamp.clone().filter(Value::is_object) {
                        s["title"] = json!("stamped by mcpres");
                        stamp(result, s);
                    }
                }
                Defect::DriftList | Defect::AddToolAlways if n.method == "tools/list" => {
                    self.tool_lists += 1;
                    if (defect == Defect::AddToolAlways || self.tool_lists >= 2)
                        && let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut)
                    {
                        tools.push(
                            json!({"name": "mcpres-added", "description": "added by mcpres",
                            "inputSchema": {"type": "object"}}),
                        );
                    }
                }
                Defect::RetextRead if read => {
                    for item in result
                        .get_mut("contents")
                        .and_then(Value::as_array_mut)
                        .into_iter()
                        .flatten()
                    {
                        if item.get("text").is_some() {
                            item["text"] = json!("changed by mcpres");
                        }
                    }
                }
                Defect::PersonalPublic | Defect::PersonalPrivate if n.method == "tools/list" => {
                    let caller = n.caller.clone().unwrap_or_default();
                    let first = result
                        .get_mut("tools")
                        .and_then(Value::as_array_mut)
                        .and_then(|t| t.first_mut());
                    match first {
                        Some(tool) => {
                            let d = tool["description"].as_str().unwrap_or("").to_string();
                            tool["description"] = json!(format!("{d} (listed for {caller})"));
                        }
                        None => {
                            let meta = result.entry("_meta").or_insert_with(|| json!({}));
                            meta["dev.mcpres/listedFor"] = json!(caller);
                        }
                    }
                    let scope = if defect == Defect::PersonalPublic {
                        "public"
                    } else {
                        "private"
                    };
                    result.insert("cacheScope".into(), json!(scope));
                }
                _ => {}
            }
        }
        if let (Some(key), Some(result)) = (self.key(&n), m.get("result"))
            && defect != Defect::PoisonStore
        {
            self.cache.entry(key).or_insert_with(|| result.clone());
        }
        m
    }
}

fn stamp(result: &mut serde_json::Map<String, Value>, s: Value) {
    let meta = result.entry("_meta").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(META_SERVER_INFO.into(), s);
    }
}

/// Relay the shim's stdin to the subject and the subject's stdout to the shim's, with
/// `defect` applied. The returned thread ends when the subject's stdout does.
pub fn relay(
    mut to: std::process::ChildStdin,
    from: std::process::ChildStdout,
    defect: Defect,
) -> std::thread::JoinHandle<()> {
    let state = Arc::new(Mutex::new(State::new(defect)));
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let (requests, answers) = (state.clone(), out.clone());
    std::thread::spawn(move || {
        for line in super::shim::lines(std::io::stdin().lock()) {
            let served = serde_json::from_slice::<Value>(&line)
                .ok()
                .and_then(|m| requests.lock().expect("cache state").request(&m));
            if let Some(answer) = served {
                let mut o = answers.lock().expect("stdout lock");
                let _ = writeln!(o, "{answer}").and_then(|()| o.flush());
                continue;
            }
            if to.write_all(&line).and_then(|()| to.flush()).is_err() {
                return;
            }
        }
        drop(to);
    });
    std::thread::spawn(move || {
        for line in super::shim::lines(from) {
            let line = match serde_json::from_slice::<Value>(&line) {
                Ok(m) => {
                    let m = state.lock().expect("cache state").answer(m);
                    format!("{m}\n").into_bytes()
                }
                Err(_) => line,
            };
            let mut o = out.lock().expect("stdout lock");
            if o.write_all(&line).and_then(|()| o.flush()).is_err() {
                break;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(id: u64, method: &str, uri: Option<&str>, rev: &str) -> Value {
        let mut params =
            json!({"_meta": {META_PROTOCOL_VERSION: rev, META_CLIENT_INFO: {"name": "caller-x"}}});
        if let Some(u) = uri {
            params["uri"] = json!(u);
        }
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    fn ok(id: u64, result: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    }

    #[test]
    fn a_cache_keyed_by_method_serves_another_keys_entry() {
        let mut s = State::new(Defect::KeyMethod);
        assert!(
            s.request(&req(1, "resources/read", Some("a://1"), "2026-07-28"))
                .is_none()
        );
        s.answer(ok(1, json!({"contents": [{"uri": "a://1"}]})));
        let served = s
            .request(&req(2, "resources/read", Some("b://2"), "2026-07-28"))
            .expect("served");
        assert_eq!(served["id"], 2);
        assert_eq!(served["result"]["contents"][0]["uri"], "a://1");
        // Keyed fully: another URI or revision is a miss, the same key a hit.
        let mut s = State::new(Defect::KeyFull);
        s.request(&req(1, "tools/list", None, "2026-07-28"));
        s.answer(ok(1, json!({"tools": []})));
        assert!(
            s.request(&req(2, "tools/list", None, "2099-01-01"))
                .is_none()
        );
        assert!(
            s.request(&req(3, "tools/list", None, "2026-07-28"))
                .is_some()
        );
    }

    #[test]
    fn hints_and_stamps_are_changed_on_cacheable_results_only() {
        let mut s = State::new(Defect::StripTtl);
        s.request(&req(1, "tools/list", None, "2026-07-28"));
        s.request(&req(2, "tools/call", None, "2026-07-28"));
        let a = s.answer(ok(1, json!({"tools": [], "ttlMs": 5})));
        let b = s.answer(ok(2, json!({"content": [], "ttlMs": 5})));
        assert!(a["result"].get("ttlMs").is_none());
        assert_eq!(b["result"]["ttlMs"], 5);
        let mut s = State::new(Defect::StampStale);
        s.request(&req(1, "server/discover", None, "2026-07-28"));
        s.answer(ok(
            1,
            json!({"_meta": {META_SERVER_INFO: {"name": "n", "version": "1"}}}),
        ));
        s.request(&req(2, "prompts/list", None, "2026-07-28"));
        let p = s.answer(ok(2, json!({"prompts": []})));
        assert_eq!(
            p["result"]["_meta"][META_SERVER_INFO],
            json!({"name": "n", "version": "0.0.0-stale"})
        );
    }

    #[test]
    fn a_poisoned_read_is_served_for_the_bare_uri_only_when_stored() {
        for (defect, stored) in [(Defect::PoisonStore, true), (Defect::PoisonNostore, false)] {
            let mut s = State::new(defect);
            s.request(&req(1, "resources/read", Some("a://1#p"), "2026-07-28"));
            let p = s.answer(
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32002, "message": "x"}}),
            );
            assert_eq!(p["result"]["contents"][0]["text"], "poisoned by mcpres");
            assert_eq!(
                s.request(&req(2, "resources/read", Some("a://1"), "2026-07-28"))
                    .is_some(),
                stored
            );
        }
    }
}
