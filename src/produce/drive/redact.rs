//! The one redactor: every byte a producer stores (the harness's raw
//! artifacts, a profile, field or OAuth run's artifacts, its evaluation and
//! run files) passes through it first.
//!
//! It looks for two kinds of things. Known secrets: the operator's `--env`
//! values (see `env_policy` for the short and harmless ones that are left),
//! the secret-named values of mcpres's own environment, and the credentials a
//! run makes or learns as it goes (a synthetic bearer, the tokens an OAuth run
//! mints). Each is looked for raw, JSON-escaped, percent-encoded (upper- and
//! lower-case hex) and base64-encoded (standard and URL-safe, padded or not,
//! starting at any of the three byte alignments of a base64 group: the
//! characters that depend only on the secret's own bits are searched). And
//! credential shapes: bearer tokens, GitHub, API, AWS and Slack keys, PEM
//! private key blocks, and (for the harness) home paths and the working
//! directory.
//!
//! Every rule is applied to two forms of the bytes: the raw bytes, and the
//! decoded text of every JSON string literal in them (a `"..."` with
//! escapes), so that `\u0041KIA...`, `Bearer\u0020...` or a value holding `"`
//! or `\` stored escaped is found as well. A match in the raw bytes is
//! replaced by its rule's label; a match found only in a decoded literal
//! replaces the whole literal by the JSON encoding of its redacted text.
//!
//! A stream (a subject's stdout or stderr, one direction of one connection)
//! is redacted as a whole: its chunks are joined, redacted, and each
//! replacement is put in the chunk where the match started, its other bytes
//! dropped from the chunks they were in. A secret split across two writes is
//! found.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use regex::bytes::Regex;
use serde_json::Value;

/// The two forms every artifact is scanned in.
pub const RAW: &str = "raw";
pub const DECODED: &str = "json-decoded";

/// What replaces a synthetic credential (a bearer made for the run, a token
/// an OAuth run minted): the model's, so the judges can read it back.
pub const SYNTHETIC: &str = crate::model::oauth::SYNTHETIC_CREDENTIAL;

/// The kind of a credential a run made or learned.
pub const SYNTHETIC_KIND: &str = "synthetic-credential";

/// How deep JSON string literals inside decoded literals are decoded again (a
/// tool result whose text is itself JSON is decoded twice).
const DECODE_DEPTH: usize = 3;

/// Redaction passes before whatever is left counts as remaining.
const PASSES: usize = 3;

/// An `--env` value of at least this many bytes is redacted as a plain
/// substring, whatever its name; from this length on, its encoded forms are
/// looked for too.
const PLAIN_MIN: usize = 8;

/// A secret-named value of at least this many bytes is redacted as a plain
/// substring; a shorter one only as a whole token.
const SECRET_PLAIN_MIN: usize = 4;

/// A value that is not secret-named is redacted (as a whole token) from this
/// many bytes on; a shorter one is not redacted and the report names it.
const PUBLIC_MIN: usize = 4;

/// Rule kinds the harness's report lists (environment rules are named per
/// variable).
pub const FIXED_KINDS: [&str; 9] = [
    "bearer-token",
    "github-token",
    "api-key",
    "aws-access-key",
    "slack-token",
    "private-key",
    "home-path",
    "working-directory",
    "environment-value:<name>",
];

/// Name fragments that make a variable secret-named (case-insensitive).
const SECRET_FRAGMENTS: [&str; 13] = [
    "TOKEN",
    "SECRET",
    "PASS",
    "PW",
    "KEY",
    "CRED",
    "AUTH",
    "COOKIE",
    "PRIVATE",
    "SESSION",
    "SIGNATURE",
    "SALT",
    "DSN",
];

/// Placeholders a runner fills in a launch's environment (`{port}`,
/// `{issuer}`, `{scope}`): a value holding one is a template, not a secret.
const PLACEHOLDERS: [&str; 3] = ["{port}", "{issuer}", "{scope}"];

/// What one redaction found: matches per (kind, form), and how many JSON
/// string literals were re-encoded.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    pub matches: BTreeMap<(String, &'static str), usize>,
    pub literals_rewritten: usize,
}

impl Tally {
    fn add(&mut self, kind: &str, form: &'static str, n: usize) {
        *self.matches.entry((kind.to_string(), form)).or_default() += n;
    }

    /// Add `other`'s matches and rewritten literals to these.
    pub fn absorb(&mut self, other: Tally) {
        for ((kind, form), n) in other.matches {
            self.add(&kind, form, n);
        }
        self.literals_rewritten += other.literals_rewritten;
    }

    /// Matches in the raw form, and in the decoded form.
    pub fn by_form(&self) -> (usize, usize) {
        let mut raw = 0;
        let mut decoded = 0;
        for ((_, form), n) in &self.matches {
            if *form == RAW {
                raw += n;
            } else {
                decoded += n;
            }
        }
        (raw, decoded)
    }

    pub fn total(&self) -> usize {
        let (raw, decoded) = self.by_form();
        raw + decoded
    }
}

#[derive(Clone)]
struct Rule {
    kind: String,
    label: Vec<u8>,
    re: Regex,
    /// A match that is a `WWW-Authenticate` auth-param (`Bearer name="`) is
    /// not a credential.
    skip_challenges: bool,
    /// A short value matched as a whole word only (see `env_policy`).
    whole_word: bool,
}

/// An `--env` variable whose value is not redacted (too short, not
/// secret-named), named in the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRedacted {
    pub name: String,
    pub reason: &'static str,
}

/// The rules one producer redacts with. Cloning is cheap enough to give each
/// record its own.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Known secrets, looked for before the shapes (a synthetic bearer after
    /// `Bearer ` keeps its own label).
    secrets: Vec<Rule>,
    /// Credential shapes, paths and environment values, in order.
    rules: Vec<Rule>,
    not_redacted: Vec<NotRedacted>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.secrets.len())
            .field("rules", &self.rules.len())
            .finish()
    }
}

/// Names that hold a fragment but are not secrets: the shell's working
/// directories (`PWD`, `OLDPWD`, set by `cd`), whose `PW` is not a password.
/// A name that only ends in `PWD` still is one (`DB_PWD`, `MYSQL_PWD`).
const NOT_SECRET_NAMES: [&str; 2] = ["PWD", "OLDPWD"];

/// Whether a variable name marks its value as a secret (TOKEN, SECRET, PASS,
/// PW, KEY, CRED, AUTH, COOKIE, PRIVATE, SESSION, SIGNATURE, SALT, DSN
/// anywhere in the name, any case), except the working-directory names
/// `PWD` and `OLDPWD`.
pub fn secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    !NOT_SECRET_NAMES.contains(&upper.as_str())
        && SECRET_FRAGMENTS.iter().any(|k| upper.contains(k))
}

/// How an environment value is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Match {
    /// Anywhere, as a substring (and, from `PLAIN_MIN` bytes on, in its
    /// percent-encoded and base64 forms).
    Plain,
    /// Only where it is not part of a longer run of ASCII letters, digits or `_`.
    Token,
}

/// Why a value passed with `--env` is not redacted.
pub const TOO_SHORT: &str = "SHORTER_THAN_4_BYTES_AND_NOT_SECRET_NAMED";
pub const JSON_SCALAR: &str = "JSON_NUMBER_OR_KEYWORD_UNDER_8_BYTES_AND_NOT_SECRET_NAMED";

/// The matching policy for a value passed with `--env`: every value is
/// redacted, except a short one whose name is not secret-named and which would
/// erase ordinary evidence: under 4 bytes (`DEBUG=1` would erase every `1`),
/// or under 8 bytes and a JSON number or keyword (`PORT=45123` would corrupt
/// every JSON document that records the port; `true`, `false`, `null`).
fn env_policy(name: &str, value: &str) -> Result<Option<Match>, &'static str> {
    let secret = secret_name(name);
    let scalar = !value.is_empty()
        && (value.bytes().all(|b| b.is_ascii_digit())
            || ["true", "false", "null"].contains(&value));
    Ok(Some(match value.len() {
        0 => return Ok(None),
        n if n >= PLAIN_MIN => Match::Plain,
        n if secret && n >= SECRET_PLAIN_MIN => Match::Plain,
        _ if secret => Match::Token,
        n if n < PUBLIC_MIN => return Err(TOO_SHORT),
        _ if scalar => return Err(JSON_SCALAR),
        _ => Match::Token,
    }))
}

/// mcpres's own environment, as text.
fn own_environment() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// The credential shapes every producer looks for. `challenges`: a
/// `WWW-Authenticate` challenge (`Bearer resource_metadata="..."`) is left.
fn shapes(challenges: bool) -> Vec<Rule> {
    let fixed = [
        ("bearer-token", r"(?i)bearer\s+[A-Za-z0-9._~+/=-]{8,}"),
        ("github-token", r"gh[pousr]_[A-Za-z0-9]{20,}"),
        ("api-key", r"sk-[A-Za-z0-9_-]{20,}"),
        ("aws-access-key", r"AKIA[0-9A-Z]{16}"),
        ("slack-token", r"xox[abprs]-[A-Za-z0-9-]{10,}"),
        // The whole block, BEGIN to END, whether its line breaks are real
        // or JSON-escaped (a PEM block holds no `"`); a block cut off before
        // its END line loses its BEGIN line and the base64 that follows.
        (
            "private-key",
            r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----(?:(?-u:[^\x22])*?-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|(?:[A-Za-z0-9+/=\r\n]|\\[rn])*)",
        ),
    ];
    fixed
        .into_iter()
        .map(|(kind, pattern)| {
            let mut r = rule(kind, Regex::new(pattern).expect("fixed pattern"));
            r.skip_challenges = challenges && kind == "bearer-token";
            r
        })
        .collect()
}

impl Redactor {
    /// The harness's redactor: credential shapes, PEM private key blocks,
    /// home-directory paths (`$HOME` and `/home/NAME`, `/Users/NAME`), the
    /// working directory, the values (8 bytes or more) of secret-named
    /// variables of mcpres's own environment, and every value passed with
    /// `--env` (see `env_policy`).
    pub fn for_harness(extra_env: &BTreeMap<String, String>) -> Self {
        let cwd = std::env::current_dir()
            .ok()
            .and_then(|d| d.into_os_string().into_string().ok());
        Self::with_environment(extra_env, &own_environment(), cwd.as_deref(), true)
    }

    /// A runner's redactor (profile, field, OAuth): as the harness's, without
    /// the paths (a runner's artifacts name the subject's program), with a
    /// `WWW-Authenticate` challenge left as it is, and without the values
    /// that are templates (`{port}`, `{issuer}`, `{scope}`). Known
    /// credentials are added with [`Redactor::add_synthetic`].
    pub fn for_runner(extra_env: &BTreeMap<String, String>) -> Self {
        let templates: BTreeMap<String, String> = extra_env
            .iter()
            .filter(|(_, v)| !PLACEHOLDERS.iter().any(|p| v.contains(p)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Self::with_environment(&templates, &own_environment(), None, false)
    }

    /// A redactor of the given synthetic credentials only.
    pub fn synthetic(secrets: &[&str]) -> Self {
        let mut r = Redactor::default();
        for s in secrets {
            r.add_synthetic(s);
        }
        r
    }

    /// The harness's or a runner's redactor with the environment and working
    /// directory given.
    pub fn with_environment(
        extra_env: &BTreeMap<String, String>,
        own_env: &BTreeMap<String, String>,
        cwd: Option<&str>,
        paths: bool,
    ) -> Self {
        let mut rules = shapes(!paths);
        if paths {
            rules.push(rule(
                "home-path",
                Regex::new(r"/(?:home|Users)/[A-Za-z0-9._-]+").expect("fixed pattern"),
            ));
            // The working directory: absolute subject paths below it (a
            // checkout, a virtualenv) say where this machine keeps things.
            if let Some(cwd) = cwd.filter(|c| c.len() > 1) {
                rules.push(rule("working-directory", value_regex(cwd, Match::Plain)));
            }
            if let Some(home) = own_env.get("HOME").filter(|h| h.len() > 1) {
                rules.push(rule("home-path", value_regex(home, Match::Plain)));
            }
        }
        // mcpres's own environment never reaches a subject; a secret-named
        // value is still looked for in case the subject learns it some other
        // way. Long values only: its names are not the operator's choice
        // (`XDG_SESSION_CLASS=user`).
        for (k, v) in own_env {
            if !extra_env.contains_key(k) && secret_name(k) && v.len() >= PLAIN_MIN {
                rules.push(rule(
                    &format!("environment-value:{k}"),
                    value_regex(v, Match::Plain),
                ));
            }
        }
        let mut not_redacted = Vec::new();
        for (k, v) in extra_env {
            match env_policy(k, v) {
                Ok(Some(m)) => {
                    let mut r = rule(&format!("environment-value:{k}"), value_regex(v, m));
                    r.whole_word = m == Match::Token;
                    rules.push(r);
                }
                Ok(None) => {}
                Err(reason) => not_redacted.push(NotRedacted {
                    name: k.clone(),
                    reason,
                }),
            }
        }
        Redactor {
            secrets: Vec::new(),
            rules,
            not_redacted,
        }
    }

    /// Look for `secret` (a credential the run made or learned) in every
    /// form from now on, replaced by `<synthetic-bearer>`.
    pub fn add_synthetic(&mut self, secret: &str) {
        if secret.is_empty() {
            return;
        }
        let re = value_regex(secret, Match::Plain);
        if self.secrets.iter().any(|r| r.re.as_str() == re.as_str()) {
            return;
        }
        self.secrets.push(Rule {
            kind: SYNTHETIC_KIND.into(),
            label: SYNTHETIC.as_bytes().to_vec(),
            re,
            skip_challenges: false,
            whole_word: false,
        });
        // Longest first, so a credential is never half-replaced by a
        // shorter one it contains.
        self.secrets
            .sort_by_key(|r| std::cmp::Reverse(r.re.as_str().len()));
    }

    /// The `--env` variables whose values are not redacted.
    pub fn not_redacted(&self) -> &[NotRedacted] {
        &self.not_redacted
    }

    fn all_rules(&self) -> impl Iterator<Item = &Rule> {
        self.secrets.iter().chain(&self.rules)
    }

    /// One redaction pass over both forms of `bytes`.
    pub fn redact(&self, bytes: &mut Vec<u8>) -> Tally {
        let mut tally = Tally::default();
        let edits = self.edits(bytes, DECODE_DEPTH, RAW, &mut tally);
        *bytes = apply(bytes, &edits);
        tally
    }

    /// Redact until a rescan of both forms is clean, or `PASSES` passes;
    /// returns what was redacted and what remains.
    pub fn redact_fully(&self, bytes: &mut Vec<u8>) -> (Tally, Tally) {
        let done = self.redact_passes(bytes);
        (done, self.count(bytes))
    }

    /// Redact until a pass finds nothing, or `PASSES` passes.
    fn redact_passes(&self, bytes: &mut Vec<u8>) -> Tally {
        let mut done = Tally::default();
        for _ in 0..PASSES {
            let pass = self.redact(bytes);
            if pass.total() == 0 {
                break;
            }
            done.absorb(pass);
        }
        done
    }

    /// The matches in both forms of `bytes`, without changing them.
    pub fn count(&self, bytes: &[u8]) -> Tally {
        let mut tally = Tally::default();
        self.edits(bytes, DECODE_DEPTH, RAW, &mut tally);
        tally
    }

    /// `text` redacted fully.
    pub fn redact_str(&self, text: &str) -> String {
        let mut bytes = text.as_bytes().to_vec();
        let done = self.redact_passes(&mut bytes);
        if done.total() == 0 {
            return text.to_string();
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The chunks of one stream, redacted as one: each replacement goes to
    /// the chunk where its match starts, and the matched bytes in later
    /// chunks are dropped. Returns the chunks and what was redacted.
    pub fn redact_stream(&self, chunks: &[&[u8]]) -> (Vec<Vec<u8>>, Tally) {
        let mut whole: Vec<u8> = chunks.concat();
        let mut owner: Vec<usize> = chunks
            .iter()
            .enumerate()
            .flat_map(|(k, c)| std::iter::repeat_n(k, c.len()))
            .collect();
        let mut done = Tally::default();
        for _ in 0..PASSES {
            let mut tally = Tally::default();
            let edits = self.edits(&whole, DECODE_DEPTH, RAW, &mut tally);
            if edits.is_empty() {
                break;
            }
            done.absorb(tally);
            let mut next = Vec::with_capacity(whole.len());
            let mut next_owner = Vec::with_capacity(whole.len());
            let mut i = 0;
            let mut edits = edits.iter().peekable();
            while i < whole.len() {
                if let Some(e) = edits.next_if(|e| e.start == i) {
                    next.extend_from_slice(&e.with);
                    next_owner.extend(std::iter::repeat_n(owner[i], e.with.len()));
                    i = e.end;
                } else {
                    next.push(whole[i]);
                    next_owner.push(owner[i]);
                    i += 1;
                }
            }
            whole = next;
            owner = next_owner;
        }
        let mut out = vec![Vec::new(); chunks.len()];
        for (b, k) in whole.into_iter().zip(owner) {
            out[k].push(b);
        }
        (out, done)
    }

    /// An artifact document redacted: a check's observation document
    /// (`{"check", "role", ...}`) in what it recorded (its `detail` and
    /// `transcript`), its own fields (the check, the role, reason codes)
    /// left as they are, so that a short `--env` value matched as a whole
    /// word (`MODE=framing`) never renames a check; any other artifact (a
    /// server's or a preflight's transcript, a cleanup record) whole.
    pub fn redact_artifact(&self, value: &mut Value) -> Tally {
        if value.get("check").is_some() && value.get("role").is_some() {
            let mut tally = Tally::default();
            for key in ["detail", "transcript"] {
                if let Some(v) = value.get_mut(key) {
                    tally.absorb(self.redact_value(v));
                }
            }
            return tally;
        }
        self.redact_value(value)
    }

    /// Every string of `value` redacted: first each recorded stream (an
    /// array of chunk records, `{"stream": ..., "text" | "base64": ...}`,
    /// grouped by stream and connection) as a whole, then every string and
    /// object key, and every `base64`/`headBase64` field decoded, redacted
    /// and encoded again. Returns what was redacted.
    pub fn redact_value(&self, value: &mut Value) -> Tally {
        let mut tally = Tally::default();
        self.redact_streams(value, &mut tally);
        self.redact_strings(value, &mut tally);
        tally
    }

    /// What [`Redactor::redact_value`] would still find in `value`: the
    /// known credential forms and shapes left in stored evidence, by kind
    /// (empty when clean).
    pub fn scan_value(&self, value: &Value) -> Tally {
        let mut copy = value.clone();
        self.redact_value(&mut copy)
    }

    /// What [`Redactor::redact_artifact`] would still find in `value`.
    pub fn scan_artifact(&self, value: &Value) -> Tally {
        let mut copy = value.clone();
        self.redact_artifact(&mut copy)
    }

    /// Of a [`Tally`], the matches that are credentials: a credential the
    /// run made or learned, a credential shape, or the value of a
    /// secret-named variable (an ordinary `--env` value or a path is not).
    pub fn credential_matches(tally: &Tally) -> usize {
        tally
            .matches
            .iter()
            .filter(|((kind, _), _)| Self::is_credential_kind(kind))
            .map(|(_, n)| n)
            .sum()
    }

    /// Whether a rule kind of a [`Tally`] is a credential: a credential the
    /// run made or learned, a credential shape, or the value of a
    /// secret-named variable (an ordinary `--env` value or a path is not).
    pub fn is_credential_kind(kind: &str) -> bool {
        match kind.strip_prefix("environment-value:") {
            Some(name) => secret_name(name),
            None => !matches!(kind, "home-path" | "working-directory"),
        }
    }

    /// Of a [`Tally`], the matches of credentials the run made or learned.
    pub fn synthetic_matches(tally: &Tally) -> usize {
        tally
            .matches
            .iter()
            .filter(|((kind, _), _)| kind == SYNTHETIC_KIND)
            .map(|(_, n)| n)
            .sum()
    }

    fn redact_streams(&self, value: &mut Value, tally: &mut Tally) {
        match value {
            Value::Array(items) => {
                if items.iter().any(is_chunk) {
                    self.redact_chunk_array(items, tally);
                }
                items.iter_mut().for_each(|v| self.redact_streams(v, tally));
            }
            Value::Object(map) => map.values_mut().for_each(|v| self.redact_streams(v, tally)),
            _ => {}
        }
    }

    fn redact_chunk_array(&self, items: &mut [Value], tally: &mut Tally) {
        let mut streams: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
        for (k, v) in items.iter().enumerate() {
            if is_chunk(v) {
                let key = (
                    v["stream"].as_str().unwrap_or_default().to_string(),
                    v.get("connection")
                        .map(Value::to_string)
                        .unwrap_or_default(),
                );
                streams.entry(key).or_default().push(k);
            }
        }
        for members in streams.values() {
            let bytes: Vec<Vec<u8>> = members.iter().map(|&k| chunk_bytes(&items[k])).collect();
            let refs: Vec<&[u8]> = bytes.iter().map(Vec::as_slice).collect();
            let (redacted, done) = self.redact_stream(&refs);
            if done.total() == 0 {
                continue;
            }
            tally.absorb(done);
            for ((&k, old), new) in members.iter().zip(&bytes).zip(redacted) {
                if *old != new {
                    set_chunk_bytes(&mut items[k], &new);
                }
            }
        }
    }

    fn redact_strings(&self, value: &mut Value, tally: &mut Tally) {
        match value {
            Value::String(s) => {
                let mut bytes = s.as_bytes().to_vec();
                let done = self.redact_passes(&mut bytes);
                if done.total() > 0 {
                    tally.absorb(done);
                    *s = String::from_utf8_lossy(&bytes).into_owned();
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_strings(v, tally)),
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for key in keys {
                    let mut v = map.remove(&key).expect("a key of the map");
                    let mut new_key = key.clone();
                    let mut done = Tally::default();
                    let edits = self.edits_of(key.as_bytes(), DECODE_DEPTH, RAW, &mut done, true);
                    if !edits.is_empty() {
                        tally.absorb(done);
                        new_key =
                            String::from_utf8_lossy(&apply(key.as_bytes(), &edits)).into_owned();
                    }
                    let decoded = match (key.as_str(), v.as_str()) {
                        ("base64" | "headBase64", Some(text)) => {
                            base64::engine::general_purpose::STANDARD.decode(text).ok()
                        }
                        _ => None,
                    };
                    match decoded {
                        Some(mut raw) => {
                            let done = self.redact_passes(&mut raw);
                            if done.total() > 0 {
                                tally.absorb(done);
                                v = Value::String(
                                    base64::engine::general_purpose::STANDARD.encode(&raw),
                                );
                            }
                            // The encoded text itself (the secret's base64
                            // form at any alignment).
                            self.redact_strings(&mut v, tally);
                        }
                        None => self.redact_strings(&mut v, tally),
                    }
                    map.insert(new_key, v);
                }
            }
            _ => {}
        }
    }

    /// The replacements one pass makes in `bytes`: the rules' matches (an
    /// earlier rule's match wins over a later one it overlaps), then every
    /// JSON string literal with an escape that no match touches, decoded
    /// and redacted (down to `depth`), re-encoded whole when it changed.
    fn edits(
        &self,
        bytes: &[u8],
        depth: usize,
        form: &'static str,
        tally: &mut Tally,
    ) -> Vec<Edit> {
        self.edits_of(bytes, depth, form, tally, false)
    }

    /// [`Redactor::edits`], without the whole-word rules when `keys` (an
    /// object key: a name mcpres chose, or the subject's).
    fn edits_of(
        &self,
        bytes: &[u8],
        depth: usize,
        form: &'static str,
        tally: &mut Tally,
        keys: bool,
    ) -> Vec<Edit> {
        let mut edits: Vec<Edit> = Vec::new();
        for r in self.all_rules().filter(|r| !(keys && r.whole_word)) {
            let mut n = 0;
            for m in r.re.find_iter(bytes) {
                if m.start() == m.end()
                    || (r.skip_challenges && is_challenge(bytes, m.start(), m.end()))
                    || edits.iter().any(|e| e.start < m.end() && m.start() < e.end)
                {
                    continue;
                }
                n += 1;
                edits.push(Edit {
                    start: m.start(),
                    end: m.end(),
                    with: r.label.clone(),
                });
            }
            if n > 0 {
                tally.add(&r.kind, form, n);
            }
        }
        if depth > 0 {
            for (start, end) in escaped_literals(bytes) {
                if edits.iter().any(|e| e.start < end && start < e.end) {
                    continue;
                }
                let Ok(text) = serde_json::from_slice::<String>(&bytes[start..end]) else {
                    continue;
                };
                let inner = self.edits_of(text.as_bytes(), depth - 1, DECODED, tally, keys);
                if inner.is_empty() {
                    continue;
                }
                let redacted = apply(text.as_bytes(), &inner);
                let text = String::from_utf8_lossy(&redacted);
                edits.push(Edit {
                    start,
                    end,
                    with: serde_json::to_vec(&text).unwrap_or_default(),
                });
                tally.literals_rewritten += 1;
            }
        }
        edits.sort_by_key(|e| e.start);
        edits
    }
}

/// One replacement of `bytes[start..end]`.
struct Edit {
    start: usize,
    end: usize,
    with: Vec<u8>,
}

/// `bytes` with sorted, non-overlapping `edits` made.
fn apply(bytes: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut last = 0;
    for e in edits {
        out.extend_from_slice(&bytes[last..e.start]);
        out.extend_from_slice(&e.with);
        last = e.end;
    }
    out.extend_from_slice(&bytes[last..]);
    out
}

/// A `bearer-token` match that is a challenge's auth-param (`Bearer
/// error="`, `Bearer resource_metadata=\"`): an identifier, `=`, a quote.
fn is_challenge(bytes: &[u8], start: usize, end: usize) -> bool {
    let text = &bytes[start..end];
    let Some(word) = text
        .iter()
        .position(|b| b.is_ascii_whitespace())
        .map(|i| &text[i..])
        .map(|t| t.trim_ascii_start())
    else {
        return false;
    };
    let quote = matches!(bytes.get(end), Some(b'"' | b'\\'));
    let Some((name, rest)) = word.split_last().map(|(last, name)| (name, *last)) else {
        return false;
    };
    quote
        && rest == b'='
        && name.first().is_some_and(u8::is_ascii_alphabetic)
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

/// A chunk record: `{"stream": ..., "text" | "base64": ...}`.
fn is_chunk(v: &Value) -> bool {
    v.get("stream").is_some_and(Value::is_string)
        && (v.get("text").is_some_and(Value::is_string)
            || v.get("base64").is_some_and(Value::is_string))
}

fn chunk_bytes(v: &Value) -> Vec<u8> {
    if let Some(t) = v.get("text").and_then(Value::as_str) {
        return t.as_bytes().to_vec();
    }
    v.get("base64")
        .and_then(Value::as_str)
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .unwrap_or_default()
}

/// Store `bytes` in a chunk record as a recorder does (text when UTF-8,
/// otherwise base64) with its new length.
fn set_chunk_bytes(v: &mut Value, bytes: &[u8]) {
    let Value::Object(map) = v else { return };
    map.remove("text");
    map.remove("base64");
    match std::str::from_utf8(bytes) {
        Ok(text) => map.insert("text".into(), Value::String(text.into())),
        Err(_) => map.insert(
            "base64".into(),
            Value::String(base64::engine::general_purpose::STANDARD.encode(bytes)),
        ),
    };
    map.insert("bytes".into(), Value::from(bytes.len()));
}

fn rule(kind: &str, re: Regex) -> Rule {
    let label = format!("[REDACTED:{}]", kind.split(':').next().unwrap_or("secret"));
    Rule {
        kind: kind.to_string(),
        label: label.into_bytes(),
        re,
        skip_challenges: false,
        whole_word: false,
    }
}

/// The literal forms of a value that are searched: the value, its
/// JSON-escaped form when that differs (a value with `"`, `\` or a control
/// character), and, for a plain value, its fully percent-encoded spellings
/// (every byte but letters and digits escaped, upper- or lower-case hex;
/// `percent_pattern` finds the partly encoded ones) and, from `PLAIN_MIN`
/// bytes on, its base64 forms.
pub fn secret_forms(value: &str, plain: bool) -> BTreeSet<String> {
    let mut forms = BTreeSet::from([value.to_string()]);
    let escaped = serde_json::to_string(value).unwrap_or_default();
    if let Some(e) = escaped.strip_prefix('"').and_then(|e| e.strip_suffix('"')) {
        forms.insert(e.to_string());
    }
    if plain {
        let upper =
            percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC)
                .to_string();
        forms.insert(lower_hex(&upper));
        forms.insert(upper);
    }
    if plain && value.len() >= PLAIN_MIN {
        forms.extend(base64_forms(value.as_bytes()));
    }
    forms
}

/// `%2D` spelled `%2d`.
fn lower_hex(upper: &str) -> String {
    let mut lower = String::with_capacity(upper.len());
    let mut hex = 0;
    for c in upper.chars() {
        if c == '%' {
            hex = 2;
            lower.push(c);
        } else if hex > 0 {
            hex -= 1;
            lower.push(c.to_ascii_lowercase());
        } else {
            lower.push(c);
        }
    }
    lower
}

/// The base64 characters (standard and URL-safe alphabets) that encode
/// `secret` wherever it starts in the encoded bytes: at each of the three
/// offsets in a 3-byte group, the characters whose 6 bits all lie inside the
/// secret (the edge characters, which mix in neighbouring bytes, and any
/// padding are left out).
fn base64_forms(secret: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for shift in 0..3usize {
        let mut shifted = vec![0u8; shift];
        shifted.extend_from_slice(secret);
        let first = (8 * shift).div_ceil(6);
        let last = 8 * (shift + secret.len()) / 6;
        for engine in [
            &base64::engine::general_purpose::STANDARD_NO_PAD,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            let encoded = engine.encode(&shifted);
            if let Some(core) = encoded.get(first..last).filter(|c| c.len() >= 8) {
                out.push(core.to_string());
            }
        }
    }
    out
}

/// A value's forms as one pattern: the percent-encoded family first (see
/// `percent_pattern`), then the literal forms, the longest first (a value
/// which is a prefix of its escaped form, `ab\` and `ab\\`, is never
/// matched short).
fn value_regex(value: &str, m: Match) -> Regex {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    let literal = |f: &str| {
        let (pre, post) = match m {
            Match::Plain => ("", ""),
            Match::Token => (
                if word(f.chars().next()) {
                    r"(?-u:\b)"
                } else {
                    ""
                },
                if word(f.chars().last()) {
                    r"(?-u:\b)"
                } else {
                    ""
                },
            ),
        };
        format!("{pre}{}{post}", regex::escape(f))
    };
    let mut forms: Vec<String> = secret_forms(value, m == Match::Plain).into_iter().collect();
    forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
    // The JSON-escaped form comes before the percent family, which matches
    // the value's own bytes and so a prefix of that form.
    let escaped = serde_json::to_string(value).unwrap_or_default();
    let escaped = escaped
        .strip_prefix('"')
        .and_then(|e| e.strip_suffix('"'))
        .filter(|e| *e != value);
    let mut alternatives: Vec<String> = Vec::new();
    if let Some(e) = escaped {
        forms.retain(|f| f != e);
        alternatives.push(literal(e));
    }
    if m == Match::Plain {
        alternatives.extend(percent_pattern(value));
    }
    alternatives.extend(forms.iter().map(|f| literal(f)));
    Regex::new(&alternatives.join("|")).expect("escaped literal")
}

/// The value with each byte that is not an ASCII letter or digit matched
/// as itself or percent-encoded in either hex case (`a-b` as `a-b`,
/// `a%2Db`, `a%2db`): a URL, a query or a log line that encodes some
/// characters and not others is found. `None` for a value of letters and
/// digits only (its raw form covers it).
fn percent_pattern(value: &str) -> Option<String> {
    if value.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let mut p = String::from("(?-u:");
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() {
            p.push(b as char);
        } else {
            let hex = format!("{b:02X}");
            let class = |c: char| {
                if c.is_ascii_alphabetic() {
                    format!("[{}{}]", c, c.to_ascii_lowercase())
                } else {
                    c.to_string()
                }
            };
            let mut chars = hex.chars();
            let (hi, lo) = (chars.next().expect("two"), chars.next().expect("two"));
            p.push_str(&format!(r"(?:\x{hex}|%{}{})", class(hi), class(lo)));
        }
    }
    p.push(')');
    Some(p)
}

/// The spans (`"` to `"`, both included) of the JSON string literals in
/// `bytes` that contain an escape; a literal without one decodes to its own
/// bytes, which the raw scan already covered. A quote with no closing quote
/// before the next control byte (a line break) starts no literal.
pub fn escaped_literals(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        let mut escaped = false;
        let mut closed = None;
        while j < bytes.len() {
            match bytes[j] {
                c if c < 0x20 => break,
                b'\\' => {
                    escaped = true;
                    j += 2;
                }
                b'"' => {
                    closed = Some(j);
                    break;
                }
                _ => j += 1,
            }
        }
        match closed {
            Some(end) => {
                if escaped {
                    out.push((i, end + 1));
                }
                i = end + 1;
            }
            None => i = j.max(i + 1),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TOKEN: &str = "tok_9f8e7d6c5b4a39281706";

    fn runner(env: &[(&str, &str)]) -> Redactor {
        let env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Redactor::with_environment(&env, &BTreeMap::new(), None, false)
    }

    fn b64(engine: &impl base64::Engine, bytes: &[u8]) -> String {
        engine.encode(bytes)
    }

    #[test]
    fn working_directory_names_are_not_secret_named_but_passwords_are() {
        for name in ["PWD", "OLDPWD", "pwd", "OldPwd"] {
            assert!(!secret_name(name), "{name}");
        }
        for name in [
            "DB_PWD",
            "MYSQL_PWD",
            "PW",
            "ADMIN_PW",
            "PASSWORD",
            "DB_PASSWD",
            "PWD_FILE",
            "OLDPWD_TOKEN",
        ] {
            assert!(secret_name(name), "{name}");
        }
        assert!(!secret_name("LANG") && !secret_name("HOME"));
        // mcpres's own OLDPWD (a path) is not redacted as a secret; a
        // secret-named variable of the same value is.
        let own: BTreeMap<String, String> = [
            ("OLDPWD".to_string(), "/srv/some/previous/dir".to_string()),
            ("DB_PWD".to_string(), "hunter2-hunter2".to_string()),
        ]
        .into();
        let r = Redactor::with_environment(&BTreeMap::new(), &own, None, false);
        let text = r.redact_str("cd /srv/some/previous/dir; login hunter2-hunter2");
        assert!(text.contains("/srv/some/previous/dir"), "{text}");
        assert!(!text.contains("hunter2-hunter2"), "{text}");
    }

    #[test]
    fn a_secret_is_found_in_every_encoding_at_every_alignment() {
        use base64::engine::general_purpose::{
            STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD,
        };
        let r = runner(&[("API_TOKEN", TOKEN)]);
        for prefix in ["", "a", "ab", "abc", "abcd"] {
            let plain = format!("{prefix}{TOKEN}?x");
            for encoded in [
                b64(&STANDARD, plain.as_bytes()),
                b64(&STANDARD_NO_PAD, plain.as_bytes()),
                b64(&URL_SAFE, plain.as_bytes()),
                b64(&URL_SAFE_NO_PAD, plain.as_bytes()),
            ] {
                let line = format!("log: {encoded}\n");
                let mut bytes = line.into_bytes();
                let (done, left) = r.redact_fully(&mut bytes);
                assert!(done.total() > 0, "{prefix:?}");
                assert_eq!(left.total(), 0);
            }
        }
        for form in [
            TOKEN.to_string(),
            serde_json::to_string(TOKEN).unwrap(),
            "tok%5F9f8e7d6c5b4a39281706".into(),
            "tok%5f9f8e7d6c5b4a39281706".into(),
        ] {
            assert_eq!(r.count(form.as_bytes()).total(), 1, "{form}");
        }
        // A JSON literal with the token's first letter escaped.
        let escaped = r#"{"name":"\u0074ok_9f8e7d6c5b4a39281706"}"#;
        assert_eq!(r.count(escaped.as_bytes()).by_form(), (0, 1));
        // Nothing of it: nothing found.
        assert_eq!(
            r.count(b"tok_ 9f8e7d6c5b4a3928 aGVsbG8gd29ybGQ=").total(),
            0
        );
    }

    #[test]
    fn a_secret_split_across_chunks_of_one_stream_is_found() {
        let r = runner(&[("API_TOKEN", TOKEN)]);
        let (a, b) = TOKEN.split_at(9);
        let first = format!("token is {a}");
        let second = format!("{b} ok\n");
        let (chunks, done) = r.redact_stream(&[first.as_bytes(), second.as_bytes()]);
        assert_eq!(done.total(), 1);
        assert_eq!(chunks[0], b"token is [REDACTED:environment-value]");
        assert_eq!(chunks[1], b" ok\n");
        // Base64 written in two pieces too.
        use base64::engine::general_purpose::STANDARD;
        let enc = b64(&STANDARD, TOKEN.as_bytes());
        let (x, y) = enc.split_at(7);
        let (chunks, _) = r.redact_stream(&[x.as_bytes(), y.as_bytes()]);
        let joined = chunks.concat();
        assert_eq!(r.count(&joined).total(), 0);
        assert!(!String::from_utf8_lossy(&joined).contains(&enc[4..20]));
    }

    #[test]
    fn a_transcript_value_is_redacted_stream_by_stream() {
        let mut r = runner(&[]);
        r.add_synthetic(TOKEN);
        let (a, b) = TOKEN.split_at(5);
        let mut v = json!({
            "chunks": [
                {"atMs": 1, "stream": "stderr", "bytes": 5, "text": format!("got {a}")},
                {"atMs": 2, "stream": "stdout", "bytes": 2, "text": "{}"},
                {"atMs": 3, "stream": "stderr", "bytes": 5, "base64": b64(&base64::engine::general_purpose::STANDARD, format!("{b}\u{ff}").as_bytes())},
            ],
            "events": [{"event": "connected", "connection": 1},
                       {"stream": "sent", "connection": 1, "text": format!("Authorization: Bearer {TOKEN}\r\n")}],
            "detail": format!("name {TOKEN}"),
        });
        assert!(Redactor::synthetic_matches(&r.scan_value(&v)) > 0);
        r.redact_value(&mut v);
        assert_eq!(r.scan_value(&v).total(), 0);
        let text = v.to_string();
        assert!(
            !text.contains(&TOKEN[5..]) && !text.contains(&TOKEN[..10]),
            "{text}"
        );
        assert_eq!(v["chunks"][0]["text"], "got <synthetic-bearer>");
        assert_eq!(v["chunks"][1]["text"], "{}");
        assert_eq!(
            v["events"][1]["text"],
            "Authorization: Bearer <synthetic-bearer>\r\n"
        );
        assert_eq!(v["detail"], "name <synthetic-bearer>");
    }

    #[test]
    fn a_challenge_is_kept_by_a_runner_but_a_bearer_credential_is_not() {
        let r = runner(&[]);
        let challenge = br#"{"www-authenticate":"Bearer resource_metadata=\"http://127.0.0.1:1/x\", error=\"invalid_token\""}"#;
        assert_eq!(r.count(challenge).total(), 0);
        let raw = b"WWW-Authenticate: Bearer error=\"invalid_token\"\r\n";
        assert_eq!(r.count(raw).total(), 0);
        assert_eq!(
            r.count(b"Authorization: Bearer abcdefgh12345678\r\n")
                .total(),
            1
        );
        // The harness keeps redacting both.
        let h = Redactor::with_environment(&BTreeMap::new(), &BTreeMap::new(), None, true);
        assert_eq!(h.count(challenge).total(), 1);
    }

    #[test]
    fn a_partly_percent_encoded_value_and_an_escaped_one_are_found_whole() {
        let r = runner(&[("API_TOKEN", "ab-cd_ef.gh\\ij")]);
        for form in [
            "ab%2Dcd_ef%2egh%5Cij",
            "ab-cd%5Fef.gh%5cij",
            r"ab-cd_ef.gh\\ij",
        ] {
            let mut bytes = format!("x {form} y").into_bytes();
            let (done, left) = r.redact_fully(&mut bytes);
            assert_eq!((done.total(), left.total()), (1, 0), "{form}");
            assert_eq!(bytes, b"x [REDACTED:environment-value] y", "{form}");
        }
    }

    #[test]
    fn an_observation_keeps_its_own_fields_and_a_short_value_never_renames_a_key() {
        let r = runner(&[("MODE", "framing"), ("API_TOKEN", TOKEN)]);
        let mut doc = json!({
            "check": "released-message-framing",
            "role": "positive",
            "observedReasonCode": "MCP_RES_FRAMING_NEWLINE_DELIMITED",
            "detail": "framing held",
            "transcript": {"chunks": [{"stream": "stderr", "text": format!("framing {TOKEN}")}],
                           "framing": 1, TOKEN: 2},
        });
        r.redact_artifact(&mut doc);
        assert_eq!(doc["check"], "released-message-framing");
        assert_eq!(doc["detail"], "[REDACTED:environment-value] held");
        let t = &doc["transcript"];
        assert_eq!(
            t["chunks"][0]["text"],
            "[REDACTED:environment-value] [REDACTED:environment-value]"
        );
        assert_eq!(t["framing"], 1);
        assert_eq!(t["[REDACTED:environment-value]"], 2);
        assert!(!doc.to_string().contains(TOKEN));
    }

    #[test]
    fn only_credentials_count_as_credential_material() {
        let mut r = runner(&[("MODE", "framing"), ("API_TOKEN", TOKEN)]);
        r.add_synthetic("synthetic-credential-value");
        let t = r.count(b"framing");
        assert_eq!((t.total(), Redactor::credential_matches(&t)), (1, 0));
        let t = r.count(
            format!("{TOKEN} synthetic-credential-value ghp_0123456789abcdefghijABCD").as_bytes(),
        );
        assert_eq!(Redactor::credential_matches(&t), 3);
        assert_eq!(Redactor::synthetic_matches(&t), 1);
    }

    #[test]
    fn placeholders_and_own_secrets() {
        let env = BTreeMap::from([
            ("ISSUER_URL".to_string(), "{issuer}/x".to_string()),
            ("PORT_ARG".to_string(), "--port={port}".to_string()),
        ]);
        let own = BTreeMap::from([
            ("CI_JOB_TOKEN".to_string(), "own-secret-value".to_string()),
            ("LANG".to_string(), "en_US.UTF-8".to_string()),
        ]);
        let r = Redactor::with_environment(&env, &own, None, false);
        assert_eq!(r.count(b"en_US.UTF-8 own-secret-value").total(), 1);
        let r = Redactor::for_runner(&env);
        assert_eq!(r.count(b"{issuer}/x --port={port}").total(), 0);
    }
}
