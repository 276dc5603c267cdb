//! `mcpres field run`: a field evidence matrix (MCPRES-FIELD-001) from a
//! declared matrix of legs (spec/field.md).
//!
//! Each leg names a subject, a profile, a protocol revision and a transport
//! (and, optionally, a bounded check set and what the subject is declared to
//! be). Legs run one after another with the profile runner, each into its own
//! evaluation directory `legs/<id>/`; `matrix.json` then names, per leg, the
//! items MCPRES-FIELD-001 lists, taken from that directory by the same
//! functions the validator uses (`validate::field_dir`). A leg that cannot be
//! started (an unset variable, a missing program, a runner that refuses it)
//! is NOT_RUN with its reason; it never takes the other legs with it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::drive::spawn::resolve_executable;
use super::profile::probe::Launch;
use super::profile::{self, HttpOptions, Options, ProfileError, Row};
use super::store::{Store, StoreError};
use crate::bundle::field_dir::{LEGS_DIR, MATRIX_FILE, MATRIX_SCHEMA_VERSION};
use crate::bundle::profile_dir::{EVALUATION_FILE, RUN_FILE};
use crate::json::canonical;
use crate::model::mcp::Revision;
use crate::profiles::Registry;
use crate::validate::field_dir::{aggregate, declaration_mismatches, derived_items, leg_result};

/// Largest matrix file read.
const MAX_MATRIX_BYTES: u64 = 1 << 20;
/// The profile evaluated over Streamable HTTP (every other one over stdio).
const STREAMABLE_HTTP_PROFILE: &str = "mcp-res/streamable-http/v1";
/// Most legs a matrix may declare (the matrix schema's bound).
const MAX_LEGS: usize = crate::bundle::field_dir::MAX_LEGS;

/// Why a field run could not be done.
#[derive(Debug, thiserror::Error)]
pub enum FieldError {
    /// The matrix file is unusable (nothing was run).
    #[error("{0}")]
    Matrix(String),
    /// The output cannot be used (nothing was run).
    #[error("{0}")]
    Usage(String),
    #[error("the run was cancelled; nothing was kept")]
    Cancelled,
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The store refused a file (a credential left in it) or could not
    /// write it; nothing was kept.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The transport of a leg.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    StreamableHttp,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::StreamableHttp => "streamable-http",
        }
    }
}

/// What a leg is declared to be; a declared item the run does not observe
/// makes the leg FAIL.
#[derive(Debug, Clone, Default)]
pub struct Declared {
    pub language: Option<String>,
    pub runtime: Option<String>,
    pub subject_sha256: Option<String>,
}

/// One declared leg, as the matrix file gives it (variables not yet expanded).
#[derive(Debug, Clone)]
pub struct Leg {
    pub id: String,
    /// The full profile id (`mcp-res/NAME/v1`).
    pub profile: String,
    pub revision: Revision,
    pub transport: Transport,
    pub command: Option<Vec<String>>,
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    pub bearer_env: Option<String>,
    pub idle: Duration,
    /// For a server the leg does not start: its artifact (relative to the
    /// matrix file).
    pub subject_artifact: Option<String>,
    pub checks: Option<Vec<String>>,
    pub declared: Declared,
    pub startup: Duration,
    pub answer: Duration,
    /// Checks this leg runs at once (`None`: the run's `--jobs`).
    pub jobs: Option<usize>,
}

/// A checked matrix file.
#[derive(Debug, Clone)]
pub struct Matrix {
    /// The directory relative paths are resolved against (absolute).
    pub base: PathBuf,
    /// SHA-256 of the matrix file's bytes.
    pub sha256: String,
    pub legs: Vec<Leg>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    leg: Vec<LegEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct LegEntry {
    id: String,
    profile: String,
    revision: String,
    transport: String,
    command: Option<Vec<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    bearer_env: Option<String>,
    idle_ms: Option<u64>,
    subject_artifact: Option<String>,
    checks: Option<Vec<String>>,
    language: Option<String>,
    runtime: Option<String>,
    subject_sha256: Option<String>,
    startup_timeout_ms: Option<u64>,
    answer_timeout_ms: Option<u64>,
    jobs: Option<usize>,
}

fn full_id(id: &str) -> String {
    if id.contains('/') {
        id.to_string()
    } else {
        format!("mcp-res/{id}/v1")
    }
}

fn valid_leg_id(id: &str) -> bool {
    let b = id.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b".-_".contains(c))
}

/// Why a `${VAR}` expansion failed.
enum Unexpanded {
    /// A malformed reference (the matrix is unusable).
    Syntax(String),
    /// A variable that is not set (the leg is NOT_RUN).
    Unset(String),
}

/// Expand `${NAME}` from `lookup` and `{mcpres}` to `exe`; anything else
/// (such as the runner's own `{port}`) is left as it is.
fn expand(
    text: &str,
    exe: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, Unexpanded> {
    let mut out = String::new();
    let mut rest = text;
    loop {
        let dollar = rest.find("${");
        let brace = rest.find("{mcpres}");
        let next = match (dollar, brace) {
            (Some(d), Some(b)) => Some(d.min(b)),
            (d, b) => d.or(b),
        };
        let Some(at) = next else {
            out.push_str(rest);
            return Ok(out);
        };
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        if let Some(after) = rest.strip_prefix("{mcpres}") {
            out.push_str(&exe.display().to_string());
            rest = after;
            continue;
        }
        let body = &rest[2..];
        let Some(end) = body.find('}') else {
            return Err(Unexpanded::Syntax(format!(
                "{text:?}: `${{` without a closing `}}`"
            )));
        };
        let name = &body[..end];
        let ok = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(Unexpanded::Syntax(format!(
                "{text:?}: `${{{name}}}` is not a variable name (letters, digits, _)"
            )));
        }
        match lookup(name) {
            Some(v) => out.push_str(&v),
            None => {
                return Err(Unexpanded::Unset(format!(
                    "the environment variable {name} is not set"
                )));
            }
        }
        rest = &body[end + 1..];
    }
}

/// Read and check a matrix file: TOML, `[[leg]]` tables only, every leg
/// with a unique id, a runnable profile, revision and check set, and the
/// keys its transport needs. Nothing is run.
pub fn load(path: &Path) -> Result<Matrix, FieldError> {
    let bad = |m: String| FieldError::Matrix(format!("{}: {m}", path.display()));
    let bytes = crate::fsio::read_capped(path, MAX_MATRIX_BYTES).map_err(|e| bad(e.to_string()))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| bad("not UTF-8".into()))?;
    let file: File = toml::from_str(text).map_err(|e| bad(format!("not a matrix file: {e}")))?;
    if file.leg.is_empty() {
        return Err(bad("declares no [[leg]]".into()));
    }
    if file.leg.len() > MAX_LEGS {
        return Err(bad(format!("declares more than {MAX_LEGS} legs")));
    }
    let base = std::path::absolute(path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."));
    let registry =
        Registry::builtin().map_err(|e| bad(format!("the built-in registry is unusable: {e}")))?;
    let mut seen = BTreeSet::new();
    let mut legs = Vec::new();
    for e in file.leg {
        let id = e.id.clone();
        let bad = |m: String| bad(format!("leg {id:?}: {m}"));
        if !valid_leg_id(&id) {
            return Err(bad(
                "an id is 1 to 64 of a-z 0-9 . - _, starting with a letter or digit".into(),
            ));
        }
        if !seen.insert(id.clone()) {
            return Err(bad("a second leg with this id".into()));
        }
        let revision = match e.revision.as_str() {
            "2025-11-25" => Revision::V2025_11_25,
            "2026-07-28" => Revision::V2026_07_28,
            other => {
                return Err(bad(format!(
                    "revision {other:?}: expected 2025-11-25 or 2026-07-28"
                )));
            }
        };
        let transport = match e.transport.as_str() {
            "stdio" => Transport::Stdio,
            "streamable-http" => Transport::StreamableHttp,
            other => {
                return Err(bad(format!(
                    "transport {other:?}: expected stdio or streamable-http"
                )));
            }
        };
        let profile = full_id(&e.profile);
        // The transport follows from the profile: streamable-http/v1 is
        // evaluated over Streamable HTTP, every other profile over stdio.
        if (transport == Transport::StreamableHttp) != (profile == STREAMABLE_HTTP_PROFILE) {
            return Err(bad(format!(
                "{profile} is evaluated over {}, not {}",
                if profile == STREAMABLE_HTTP_PROFILE {
                    "streamable-http"
                } else {
                    "stdio"
                },
                transport.as_str()
            )));
        }
        if let Some(checks) = &e.checks
            && checks.is_empty()
        {
            return Err(bad(
                "checks = [] runs nothing; leave it out for every applicable check".into(),
            ));
        }
        profile::plan(registry, &profile, revision, e.checks.as_deref())
            .map_err(|err| bad(err.to_string()))?;
        match transport {
            Transport::Stdio => {
                if e.command.as_ref().is_none_or(Vec::is_empty) {
                    return Err(bad("a stdio leg needs command = [PROGRAM, ARGS...]".into()));
                }
                if e.url.is_some()
                    || e.bearer_env.is_some()
                    || e.idle_ms.is_some()
                    || e.subject_artifact.is_some()
                {
                    return Err(bad(
                        "url, bearer-env, idle-ms and subject-artifact are for streamable-http legs"
                            .into(),
                    ));
                }
            }
            Transport::StreamableHttp => {
                if e.url.is_none() {
                    return Err(bad("a streamable-http leg needs url".into()));
                }
                if e.command.as_ref().is_some_and(Vec::is_empty) {
                    return Err(bad("command = [] names no program".into()));
                }
            }
        }
        if let Some(l) = &e.language
            && !["TYPESCRIPT", "PYTHON", "OTHER"].contains(&l.as_str())
        {
            return Err(bad(format!(
                "language {l:?}: expected TYPESCRIPT, PYTHON or OTHER"
            )));
        }
        if let Some(r) = &e.runtime
            && !["node", "python", "other"].contains(&r.as_str())
        {
            return Err(bad(format!(
                "runtime {r:?}: expected node, python or other"
            )));
        }
        if let Some(s) = &e.subject_sha256
            && !(s.len() == 64
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        {
            return Err(bad(format!(
                "subject-sha256 {s:?}: expected 64 lowercase hex digits"
            )));
        }
        for k in e.env.keys() {
            if k.is_empty() || k.contains('=') || k.contains('\0') {
                return Err(bad(format!("env key {k:?} is not a variable name")));
            }
        }
        // Variable references must be well formed; whether they are set is
        // the leg's own matter (NOT_RUN), decided when it runs.
        let any = |_: &str| Some(String::new());
        let strings = e
            .command
            .iter()
            .flatten()
            .chain(e.env.values())
            .chain(e.url.iter());
        for s in strings {
            if let Err(Unexpanded::Syntax(m)) = expand(s, Path::new(""), &any) {
                return Err(bad(m));
            }
        }
        legs.push(Leg {
            id: e.id,
            profile,
            revision,
            transport,
            command: e.command,
            env: e.env,
            url: e.url,
            bearer_env: e.bearer_env,
            idle: Duration::from_millis(e.idle_ms.unwrap_or(5_000).max(1)),
            subject_artifact: e.subject_artifact,
            checks: e.checks,
            declared: Declared {
                language: e.language,
                runtime: e.runtime,
                subject_sha256: e.subject_sha256,
            },
            startup: Duration::from_millis(e.startup_timeout_ms.unwrap_or(10_000).max(1)),
            answer: Duration::from_millis(e.answer_timeout_ms.unwrap_or(5_000).max(1)),
            jobs: e.jobs.map(|j| j.max(1)),
        });
    }
    Ok(Matrix {
        base,
        sha256: canonical::sha256_hex(&bytes),
        legs,
    })
}

/// A path argument: `./x` and `../x` are relative to the matrix file.
fn relative_to(base: &Path, s: String) -> String {
    if s.starts_with("./") || s.starts_with("../") {
        base.join(&s).display().to_string()
    } else {
        s
    }
}

/// What [`resolve`] gives: the launch, the HTTP target, and every value it
/// took from mcpres's environment, by name.
type Resolved = (
    Option<Launch>,
    Option<HttpOptions>,
    BTreeMap<String, String>,
);

/// The leg's launch and HTTP target with every variable expanded, or why it
/// cannot run.
fn resolve(leg: &Leg, base: &Path, exe: &Path) -> Result<Resolved, String> {
    let taken = std::cell::RefCell::new(BTreeMap::new());
    let lookup = |name: &str| {
        let v = std::env::var(name).ok();
        if let Some(v) = &v {
            taken.borrow_mut().insert(name.to_string(), v.clone());
        }
        v
    };
    let x = |s: &str| {
        expand(s, exe, &lookup).map_err(|e| match e {
            Unexpanded::Syntax(m) | Unexpanded::Unset(m) => m,
        })
    };
    let launch = match &leg.command {
        None => None,
        Some(command) => {
            let mut words = Vec::new();
            for w in command {
                words.push(x(w)?);
            }
            let (program, rest) = words.split_first().ok_or("command names no program")?;
            let program = if program.contains('/') && Path::new(program).is_relative() {
                base.join(program).display().to_string()
            } else {
                program.clone()
            };
            let resolved = resolve_executable(&program, &program)?;
            let mut env = BTreeMap::new();
            for (k, v) in &leg.env {
                env.insert(k.clone(), x(v)?);
            }
            Some(Launch {
                program: resolved,
                args: rest.iter().map(|a| relative_to(base, a.clone())).collect(),
                env,
                sandbox: None,
            })
        }
    };
    let http = match (&leg.transport, &leg.url) {
        (Transport::StreamableHttp, Some(url)) => Some(HttpOptions {
            url: x(url)?,
            bearer_env: leg.bearer_env.clone(),
            idle: leg.idle,
            subject_artifact: match &leg.subject_artifact {
                Some(p) => Some(base.join(x(p)?)),
                None => None,
            },
        }),
        _ => None,
    };
    Ok((launch, http, taken.into_inner()))
}

/// What a field run needs besides the matrix.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The matrix directory to create (must not exist).
    pub out: PathBuf,
    /// Checks each leg runs at once.
    pub jobs: usize,
    /// The running mcpres executable (`{mcpres}`).
    pub exe: PathBuf,
    /// Set it to stop the run: the running leg is cancelled, no further leg
    /// starts, and the directory is removed.
    pub cancel: Arc<AtomicBool>,
}

/// Progress of a field run.
pub enum Event<'a> {
    /// Leg `index` (from 1) of `total` starts.
    LegStarted {
        index: usize,
        total: usize,
        id: &'a str,
    },
    /// A check of the running leg finished.
    Check {
        leg: &'a str,
        done: usize,
        total: usize,
        row: &'a Row,
    },
    /// Leg `index` ended; `entry` is its matrix.json entry.
    LegFinished {
        index: usize,
        total: usize,
        entry: &'a Value,
    },
}

/// What a field run produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub result: &'static str,
    pub summary: Value,
    /// The legs' matrix.json entries, in matrix order.
    pub legs: Vec<Value>,
    /// SHA-256 of matrix.json's bytes.
    pub matrix_file_sha256: String,
}

/// The kernel release of this machine (`/proc/sys/kernel/osrelease`).
fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|s| s.trim().chars().take(128).collect::<String>())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// This machine's platform in the evaluation's vocabulary.
fn platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        _ => "linux",
    }
}

fn declared_json(d: &Declared) -> Value {
    json!({
        "language": d.language,
        "runtime": d.runtime,
        "subjectSha256": d.subject_sha256,
    })
}

fn not_run(leg: &Leg, registry: &Registry, kernel: &str, reason: &str) -> Value {
    let p = registry.get(&leg.profile);
    let mut why: String = reason.chars().take(500).collect();
    if why.is_empty() {
        why = "not run".into();
    }
    json!({
        "id": leg.id,
        "result": "NOT_RUN",
        "directory": null,
        "notRunReason": why,
        "transport": leg.transport.as_str(),
        "protocolRevision": leg.revision.as_str(),
        "os": {"platform": platform(), "kernelRelease": kernel},
        "profile": {
            "id": leg.profile,
            "version": p.map(|p| p.version.clone()).unwrap_or_default(),
            "manifestSha256": p.map(|p| p.manifest_sha256.clone()).unwrap_or_default(),
        },
        "checkSet": {"requested": leg.checks},
        "declared": declared_json(&leg.declared),
    })
}

/// The matrix entry of a leg that ran, from what its directory holds.
fn ran(leg: &Leg, dir: &Path, kernel: &str) -> Result<Value, FieldError> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read(&path).map_err(|source| FieldError::Io { path, source })
    };
    let (eval_bytes, run_bytes) = (read(EVALUATION_FILE)?, read(RUN_FILE)?);
    let parse = |b: &[u8]| serde_json::from_slice::<Value>(b).unwrap_or(Value::Null);
    let (evaluation, run) = (parse(&eval_bytes), parse(&run_bytes));
    let items = derived_items(&evaluation, &run, leg.transport.as_str());
    let declared = declared_json(&leg.declared);
    let mismatches = declaration_mismatches(&declared, &items);
    let result = leg_result(
        run["result"].as_str().unwrap_or("INCOMPLETE"),
        mismatches.len(),
    );
    let mut entry = json!({
        "id": leg.id,
        "result": result,
        "directory": format!("{LEGS_DIR}/{}", leg.id),
        "transport": leg.transport.as_str(),
        "os": {"platform": items["platform"], "kernelRelease": kernel},
        "checkSet": {
            "requested": leg.checks,
            "claim": items["checkSet"]["claim"],
            "claimedCheckIds": items["checkSet"]["claimedCheckIds"],
        },
        "declared": declared,
        "declarationMismatches": mismatches,
        "evaluation": {
            "evaluationSha256": evaluation["evaluationSha256"],
            "evaluationFileSha256": canonical::sha256_hex(&eval_bytes),
            "runFileSha256": canonical::sha256_hex(&run_bytes),
        },
    });
    for (k, v) in items {
        if k != "platform" && k != "checkSet" {
            entry[k.as_str()] = v;
        }
    }
    Ok(entry)
}

/// Run every leg of `matrix` and write the matrix directory `options.out`
/// (which must not exist): `legs/<id>/` per leg that ran, then matrix.json.
pub fn run(
    matrix: &Matrix,
    options: &RunOptions,
    report: &mut dyn FnMut(Event<'_>),
) -> Result<Outcome, FieldError> {
    let registry = Registry::builtin()
        .map_err(|e| FieldError::Usage(format!("the built-in registry is unusable: {e}")))?;
    let out = &options.out;
    if std::fs::symlink_metadata(out).is_ok() {
        return Err(FieldError::Usage(format!(
            "{} exists; mcpres never overwrites a field matrix",
            out.display()
        )));
    }
    let io = |path: &Path, source| FieldError::Io {
        path: path.to_path_buf(),
        source,
    };
    // The matrix's store: its own record is redacted with every leg's
    // `--env` values, known once the legs have run (each leg's directory is
    // a profile run's, stored by its own store).
    let mut store = Store::create(
        out,
        std::sync::Arc::new(std::sync::Mutex::new(
            crate::produce::drive::redact::Redactor::for_runner(&BTreeMap::new()),
        )),
    )?;
    let legs_dir = out.join(LEGS_DIR);
    std::fs::create_dir(&legs_dir).map_err(|e| io(&legs_dir, e))?;
    let kernel = kernel_release();
    let total = matrix.legs.len();
    let mut entries = Vec::new();
    // Every leg's `--env` values, for the matrix's own redaction (each leg's
    // directory is redacted by its profile run).
    let mut leg_env: BTreeMap<String, String> = BTreeMap::new();
    for (i, leg) in matrix.legs.iter().enumerate() {
        if options.cancel.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(FieldError::Cancelled);
        }
        report(Event::LegStarted {
            index: i + 1,
            total,
            id: &leg.id,
        });
        let entry = match resolve(leg, &matrix.base, &options.exe) {
            Err(why) => not_run(leg, registry, &kernel, &why),
            Ok((launch, http, expanded)) => {
                for (k, v) in launch.iter().flat_map(|l| &l.env).chain(&expanded) {
                    let mut name = k.clone();
                    while leg_env.get(&name).is_some_and(|x| x != v) {
                        name.push('#');
                    }
                    leg_env.insert(name, v.clone());
                }
                let leg_out = legs_dir.join(&leg.id);
                let opts = Options {
                    profile: leg.profile.clone(),
                    revision: leg.revision,
                    checks: leg.checks.clone(),
                    launch,
                    http,
                    out: leg_out.clone(),
                    startup: leg.startup,
                    answer: leg.answer,
                    jobs: leg.jobs.unwrap_or(options.jobs).max(1),
                    cancel: options.cancel.clone(),
                    sandbox: Default::default(),
                    expanded,
                    workload: None,
                };
                let mut forward = |done: usize, total: usize, row: &Row| {
                    report(Event::Check {
                        leg: &leg.id,
                        done,
                        total,
                        row,
                    });
                };
                match profile::run(&opts, &mut forward) {
                    Ok(_) => ran(leg, &leg_out, &kernel)?,
                    Err(ProfileError::Cancelled) => return Err(FieldError::Cancelled),
                    Err(ProfileError::Io { path, source }) => {
                        return Err(FieldError::Io { path, source });
                    }
                    Err(ProfileError::Store(e)) => return Err(FieldError::Store(e)),
                    Err(e @ (ProfileError::Usage(_) | ProfileError::NothingObserved(_))) => {
                        not_run(leg, registry, &kernel, &e.to_string())
                    }
                }
            }
        };
        report(Event::LegFinished {
            index: i + 1,
            total,
            entry: &entry,
        });
        entries.push(entry);
    }
    if options.cancel.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(FieldError::Cancelled);
    }
    // A leg's own fields come from its directory, already redacted; a
    // reason a leg did not run passes the redactor.
    *store.redactor() = crate::produce::drive::redact::Redactor::for_runner(&leg_env);
    for e in &mut entries {
        if let Some(Value::String(why)) = e.get_mut("notRunReason") {
            *why = store.redact_str(why);
        }
    }
    let (result, summary) = aggregate(entries.iter().map(|e| e["result"].as_str().unwrap_or("")));
    let doc = json!({
        "schemaVersion": MATRIX_SCHEMA_VERSION,
        "generator": {"name": "mcpres", "version": env!("CARGO_PKG_VERSION")},
        "matrixFileSha256": matrix.sha256,
        "result": result,
        "summary": summary,
        "legs": entries,
    });
    let written = store.put_record(MATRIX_FILE, &doc)?;
    store.finish();
    Ok(Outcome {
        result,
        summary,
        legs: doc["legs"].as_array().cloned().unwrap_or_default(),
        matrix_file_sha256: written.sha256,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "SET").then(|| "v".to_string())
    }

    #[test]
    fn expansion_replaces_variables_and_the_executable_and_keeps_other_braces() {
        let exe = Path::new("/bin/mcpres");
        let got = expand("{mcpres} ${SET}/{port}", exe, &env);
        assert!(matches!(got, Ok(ref s) if s == "/bin/mcpres v/{port}"));
        assert!(matches!(
            expand("${UNSET}", exe, &env),
            Err(Unexpanded::Unset(ref m)) if m.contains("UNSET")
        ));
        assert!(matches!(
            expand("${SET", exe, &env),
            Err(Unexpanded::Syntax(_))
        ));
        assert!(matches!(
            expand("${1X}", exe, &env),
            Err(Unexpanded::Syntax(_))
        ));
    }

    #[test]
    fn leg_ids_are_directory_names() {
        assert!(valid_leg_id("ref-stdio.2025_11"));
        for bad in ["", "-x", "A", "a/b", ".x", &"a".repeat(65)] {
            assert!(!valid_leg_id(bad), "{bad}");
        }
    }
}
