//! `mcpres official import`: turn the output of `@modelcontextprotocol/conformance`
//! into an `mcp-res.official-conformance-attachment/0.2.0`.
//!
//! Two inputs are supported:
//!
//! - a **results folder** of a live run (`conformance server|client ... -o DIR`): one
//!   `checks.json` per scenario, in a directory named `[server-]<scenario>-<timestamp>`;
//! - a **capture record** (`mcp-res.official-conformance-capture-metadata/0.2.0`) and
//!   the checks file it describes, as published with the reference kit.
//!
//! The import keeps every official outcome as emitted, derives the inventories, the
//! stale baseline entries and the import status, and never maps anything to an
//! MCP-RES evidence class. Ephemeral values (loopback ports, session ids, user and
//! temporary paths) are replaced before any detail is digested; the JSON pointers of
//! the replaced values are listed and the unsanitized original's length and SHA-256
//! are recorded.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value, json};

use crate::bundle::{self, LoadError};
use crate::json::canonical::{self, sha256_hex};
use crate::json::locate::{escape_token, locate};
use crate::json::{self, Limits};
pub use crate::model::official::{
    Attachment, Baseline, Check, Coverage, Harness, Inventories, Legs, MappingBoundary,
    OriginalArtifact, RequirementSet, Sanitization, Source,
};
use crate::validate::official::{
    baseline_digest, check_ref, derive_status, failing_outcome, sorted_unique,
};

/// The official outcomes a check may carry.
pub const OUTCOMES: [&str; 5] = ["SUCCESS", "FAILURE", "WARNING", "SKIPPED", "INFO"];
/// The official suite's npm package.
pub const PACKAGE_NAME: &str = "@modelcontextprotocol/conformance";
/// The official suite's source repository.
pub const REPOSITORY: &str = "https://github.com/modelcontextprotocol/conformance";
/// The capture-record kind published with the reference kit.
pub const CAPTURE_SCHEMA_VERSION: &str = "mcp-res.official-conformance-capture-metadata/0.2.0";
/// The most checks one output may hold (the attachment schema's limit).
pub const MAX_CHECKS: usize = 4096;
/// The most sanitized fields an attachment can list (the schema's limit).
pub const MAX_SANITIZED_FIELDS: usize = 64;

/// Why an import stopped before writing anything.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The official output (or a file describing it) is unusable.
    #[error("MCP_RES_OFFICIAL_INPUT_INVALID: {0}")]
    InputInvalid(String),
    /// An emitted check is not in the declared check set.
    #[error("MCP_RES_OFFICIAL_COVERAGE_INCOMPLETE: {0}")]
    CoverageIncomplete(String),
    /// A file could not be read.
    #[error("{0}")]
    Load(#[from] LoadError),
}

impl ImportError {
    /// The diagnostic code of this stop.
    pub fn code(&self) -> &'static str {
        match self {
            ImportError::InputInvalid(_) => crate::validate::codes::OFFICIAL_INPUT_INVALID,
            ImportError::CoverageIncomplete(_) => {
                crate::validate::codes::OFFICIAL_COVERAGE_INCOMPLETE
            }
            ImportError::Load(e) => e.code(),
        }
    }
}

fn invalid(msg: impl Into<String>) -> ImportError {
    ImportError::InputInvalid(msg.into())
}

/// Read official output. The strict reader is used first; the suite's output may
/// hold numbers MCP-RES has no canonical form for (for example a `details` default
/// of `95.5`), so a document refused *only* for its numbers is read again as plain
/// JSON. Such numbers never reach a digest: see [`details_digest`].
pub fn parse_output(bytes: &[u8]) -> Result<Value, String> {
    match json::parse(bytes, &Limits::default()) {
        Ok(v) => Ok(v),
        Err(e)
            if matches!(
                e.kind,
                json::ReadErrorKind::NonIntegerNumber | json::ReadErrorKind::UnsafeInteger
            ) =>
        {
            // Every other strict rule still applies: the same text with each number
            // replaced by `0` must pass the strict reader.
            json::parse(&zero_numbers(bytes), &Limits::default()).map_err(|e| e.to_string())?;
            serde_json::from_slice(bytes).map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// `bytes` with every number token outside strings replaced by `0`.
fn zero_numbers(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            out.push(b);
            if b == b'\\' && i + 1 < bytes.len() {
                out.push(bytes[i + 1]);
                i += 2;
                continue;
            }
            in_string = b != b'"';
            i += 1;
        } else if b == b'"' {
            in_string = true;
            out.push(b);
            i += 1;
        } else if b == b'-' || b.is_ascii_digit() {
            while i < bytes.len()
                && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                i += 1;
            }
            out.push(b'0');
        } else {
            out.push(b);
            i += 1;
        }
    }
    out
}

/// `detailsSha256` of check `index`: the SHA-256 of the canonical JSON of its
/// (sanitized) `details` (`{}` when absent), as the reference defines it. When the
/// details hold a number without a canonical form, mcpres digests instead the exact
/// bytes of the `details` value in the sanitized derivative (spec/official-conformance.md).
pub fn details_digest(details: &Value, derivative: &[u8], index: usize) -> Result<String, String> {
    match canonical::digest(details) {
        Ok(d) => Ok(d),
        Err(e) => {
            let range = locate(derivative, &format!("/{index}/details"))
                .ok_or_else(|| format!("check {index}: {e}"))?;
            Ok(sha256_hex(&derivative[range]))
        }
    }
}

// ---------------------------------------------------------------------------
// Options.
// ---------------------------------------------------------------------------

/// Everything about a run that its checks do not say.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    pub source: Source,
    pub protocol_revision: String,
    pub requirement_set: RequirementSet,
    /// `client` or `server`.
    pub mode: String,
    pub suite: String,
    /// Leg states; `None` means the active leg EXECUTED and the other NOT_EXECUTED.
    pub legs: Option<Legs>,
    /// Scenario for checks that name none (the capture's scenario, or the folder's).
    pub scenario_id: String,
    /// Per check (by index): its scenario when the check names none; takes
    /// precedence over `scenario_id` (a merged results folder).
    pub check_scenarios: Option<Vec<String>>,
    /// Scenarios of the run; `None` means the scenarios of the emitted checks.
    pub scenarios: Option<Vec<String>>,
    /// The expected check set; `None` means exactly the emitted checks.
    pub declared: Option<Vec<String>>,
    /// Expected-failure baseline entries (`scenario:check`).
    pub expected_failures: Vec<String>,
    pub pending: Vec<String>,
    pub not_scored: Vec<String>,
    /// Observation coverage; empty means [`default_coverage`] for the mode.
    pub coverage: Vec<Coverage>,
    pub harness_exit_code: i64,
    pub harness_warnings: Vec<String>,
}

/// The coverage an import records when none is given: the official harness and
/// the wire messages are what the suite itself observes; nothing observes the
/// subject's process cleanup, so that surface is UNINSTRUMENTED (which keeps
/// the import INCOMPLETE until a caller says otherwise).
pub fn default_coverage(mode: &str) -> Vec<Coverage> {
    let (harness, subject) = if mode == "client" {
        ("official-server-harness", "client")
    } else {
        ("official-client-harness", "server")
    };
    vec![
        Coverage {
            surface: harness.into(),
            status: "INSTRUMENTED".into(),
        },
        Coverage {
            surface: format!("{subject}-wire-messages"),
            status: "INSTRUMENTED".into(),
        },
        Coverage {
            surface: format!("{subject}-process-cleanup"),
            status: "UNINSTRUMENTED".into(),
        },
    ]
}

// ---------------------------------------------------------------------------
// Sanitization.
// ---------------------------------------------------------------------------

static LOOPBACK_PORT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)((?:(?:https?|wss?)://)?(?:127(?:\.\d{1,3}){3}|localhost|\[::1\]|0\.0\.0\.0)):(\d{1,5})\b")
        .expect("static regex")
});
static USER_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(/home/|/Users/|(?i:[a-z]:\\Users\\))[^/\\\s"']+"#).expect("static regex")
});
static TEMP_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(/tmp/|/private/var/folders/|/var/folders/)[^\s"']+"#).expect("static regex")
});

/// The replacement for a session id.
pub const SANITIZED_SESSION_ID: &str = "sanitized-session-id";

fn is_session_key(key: &str) -> bool {
    let k: String = key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    k == "sessionid" || k == "mcpsessionid"
}

/// The sanitized form of one string, or `None` when nothing ephemeral is in it.
pub fn sanitize_text(text: &str) -> Option<String> {
    let a = LOOPBACK_PORT.replace_all(text, "${1}:PORT");
    let b = USER_PATH.replace_all(&a, "${1}USER");
    let c = TEMP_PATH.replace_all(&b, "${1}PATH");
    (c != text).then(|| c.into_owned())
}

/// Replace ephemeral values in `value` (in place); returns the JSON pointers
/// (relative to `value`, prefixed with `prefix`) of the strings that changed.
pub fn sanitize_value(value: &mut Value, prefix: &str, fields: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                let pointer = format!("{prefix}/{}", escape_token(k));
                if let Value::String(s) = v
                    && is_session_key(k)
                    && !s.starts_with("sanitized")
                    && !s.is_empty()
                {
                    *s = SANITIZED_SESSION_ID.to_string();
                    fields.push((pointer, s.clone()));
                    continue;
                }
                sanitize_value(v, &pointer, fields);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                sanitize_value(v, &format!("{prefix}/{i}"), fields);
            }
        }
        Value::String(s) => {
            if let Some(clean) = sanitize_text(s) {
                *s = clean;
                fields.push((prefix.to_string(), s.clone()));
            }
        }
        _ => {}
    }
}

/// The sanitized derivative of `original`: the same bytes with each replaced
/// string value spliced in (everything else, key order and layout included, kept).
pub fn splice(original: &[u8], replacements: &[(String, String)]) -> Option<Vec<u8>> {
    let mut ranges = Vec::with_capacity(replacements.len());
    for (pointer, text) in replacements {
        let range = locate(original, pointer)?;
        if original.get(range.start) != Some(&b'"') {
            return None;
        }
        let mut quoted = Vec::new();
        canonical::write_string(text, &mut quoted);
        ranges.push((range, quoted));
    }
    ranges.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = original.to_vec();
    for (range, quoted) in ranges {
        out.splice(range, quoted);
    }
    Some(out)
}

// ---------------------------------------------------------------------------
// The import itself.
// ---------------------------------------------------------------------------

/// The outcome of one import.
#[derive(Debug, Clone)]
pub struct Imported {
    pub attachment: Attachment,
    /// The sanitized derivative of the original result (what the details digests bind).
    pub sanitized: Vec<u8>,
}

/// Overrides for the original-result record (a capture supplies them, because
/// the checks it comes with are already the sanitized derivative).
#[derive(Debug, Clone, Default)]
pub struct OriginalRecord {
    pub sha256: Option<String>,
    pub bytes: Option<u64>,
    pub sanitization: Option<Sanitization>,
}

/// Import one checks array (`original` is its exact bytes).
pub fn import_checks(
    original: &[u8],
    options: &ImportOptions,
    record: &OriginalRecord,
) -> Result<Imported, ImportError> {
    let raw = parse_output(original)
        .map_err(|e| invalid(format!("the checks output is not JSON: {e}")))?;
    let Value::Array(raw_checks) = raw else {
        return Err(invalid("the checks output is not a JSON array"));
    };
    if raw_checks.len() > MAX_CHECKS {
        return Err(invalid(format!(
            "the checks output holds {} checks; at most {MAX_CHECKS} are allowed",
            raw_checks.len()
        )));
    }
    let mut baseline = sorted_unique(options.expected_failures.clone());
    baseline.retain(|r| !r.is_empty());
    let mut replacements = Vec::new();
    let mut cleaned_details = Vec::with_capacity(raw_checks.len());
    let mut checks = Vec::with_capacity(raw_checks.len());
    for (i, raw) in raw_checks.into_iter().enumerate() {
        let Value::Object(_) = &raw else {
            return Err(invalid(format!("check {i} is not an object")));
        };
        let Some(id) = raw.get("id").and_then(Value::as_str).map(str::to_owned) else {
            return Err(invalid(format!("check {i} has no string id")));
        };
        let status = raw.get("status").and_then(Value::as_str).unwrap_or("");
        if !OUTCOMES.contains(&status) {
            return Err(invalid(format!(
                "check {i} ({id}) has status {}; expected one of {}",
                raw.get("status").unwrap_or(&Value::Null),
                OUTCOMES.join(", ")
            )));
        }
        let status = status.to_string();
        let fallback = options
            .check_scenarios
            .as_ref()
            .and_then(|s| s.get(i))
            .unwrap_or(&options.scenario_id);
        let scenario_id = raw
            .pointer("/metadata/scenario")
            .and_then(Value::as_str)
            .unwrap_or(fallback)
            .to_string();
        let mut clean = raw.clone();
        sanitize_value(&mut clean, &format!("/{i}"), &mut replacements);
        let r = check_ref(&scenario_id, &id);
        let details = clean.get("details").cloned().unwrap_or_else(|| json!({}));
        cleaned_details.push(details);
        checks.push(Check {
            scenario_id,
            check_id: id.clone(),
            baseline_expected: baseline.contains(&r) && failing_outcome(&status),
            outcome: status,
            wire_schema: id.starts_with("wire-schema-"),
            untestable: (raw.pointer("/details/untestable") == Some(&Value::Bool(true)))
                .then_some(true),
            error_message: clean
                .get("errorMessage")
                .and_then(Value::as_str)
                .map(str::to_owned),
            details_sha256: String::new(),
        });
    }
    if replacements.len() > MAX_SANITIZED_FIELDS && record.sanitization.is_none() {
        return Err(invalid(format!(
            "{} values needed sanitizing; an attachment lists at most {MAX_SANITIZED_FIELDS}; import fewer scenarios at a time",
            replacements.len()
        )));
    }
    let sanitized = splice(original, &replacements)
        .ok_or_else(|| invalid("could not locate a sanitized value in the checks output"))?;
    for (i, (check, details)) in checks.iter_mut().zip(&cleaned_details).enumerate() {
        check.details_sha256 = details_digest(details, &sanitized, i)
            .map_err(|e| invalid(format!("details of {}: {e}", check.check_id)))?;
    }
    let refs: Vec<String> = checks
        .iter()
        .map(|c| check_ref(&c.scenario_id, &c.check_id))
        .collect();
    let mut seen = HashSet::new();
    for r in &refs {
        if !seen.insert(r) {
            return Err(invalid(format!("check {r:?} is emitted more than once")));
        }
    }
    let declared = sorted_unique(options.declared.clone().unwrap_or_else(|| refs.clone()));
    if let Some(r) = refs.iter().find(|r| !declared.contains(r)) {
        return Err(ImportError::CoverageIncomplete(format!(
            "the suite emitted {r:?}, which is not in the declared check set"
        )));
    }
    let absent: Vec<String> = declared
        .iter()
        .filter(|r| !seen.contains(r))
        .cloned()
        .collect();
    let refs_where = |keep: &dyn Fn(&Check) -> bool| {
        sorted_unique(
            checks
                .iter()
                .filter(|c| keep(c))
                .map(|c| check_ref(&c.scenario_id, &c.check_id))
                .collect(),
        )
    };
    let failures: HashSet<String> = refs_where(&|c| failing_outcome(&c.outcome))
        .into_iter()
        .collect();
    let mut pending = options.pending.clone();
    pending.extend(absent);
    let scenarios = sorted_unique(options.scenarios.clone().unwrap_or_else(|| {
        let mut s: Vec<String> = checks.iter().map(|c| c.scenario_id.clone()).collect();
        if s.is_empty() {
            s.push(options.scenario_id.clone());
        }
        s
    }));
    let sanitization = match &record.sanitization {
        Some(s) => {
            let mut s = s.clone();
            for (p, _) in &replacements {
                if !s.fields.contains(p) {
                    s.fields.push(p.clone());
                }
            }
            s.applied = s.applied || !replacements.is_empty();
            s
        }
        None => Sanitization {
            applied: !replacements.is_empty(),
            fields: replacements.iter().map(|(p, _)| p.clone()).collect(),
        },
    };
    let legs = options.legs.clone().unwrap_or_else(|| {
        let (client, server) = if options.mode == "client" {
            ("EXECUTED", "NOT_EXECUTED")
        } else {
            ("NOT_EXECUTED", "EXECUTED")
        };
        Legs {
            client: client.into(),
            server: server.into(),
        }
    });
    let coverage = if options.coverage.is_empty() {
        default_coverage(&options.mode)
    } else {
        options.coverage.clone()
    };
    let mut attachment = Attachment {
        schema_version: "mcp-res.official-conformance-attachment/0.2.0".into(),
        source: options.source.clone(),
        protocol_revision: options.protocol_revision.clone(),
        requirement_set: options.requirement_set.clone(),
        mode: options.mode.clone(),
        suite: options.suite.clone(),
        legs,
        scenarios,
        inventories: Inventories {
            declared,
            executed: sorted_unique(refs.clone()),
            wire_schema: refs_where(&|c| c.wire_schema),
            warnings: refs_where(&|c| c.outcome == "WARNING"),
            skipped: refs_where(&|c| c.outcome == "SKIPPED"),
            untestable: refs_where(&|c| c.untestable == Some(true)),
            pending: sorted_unique(pending),
            not_scored: sorted_unique(options.not_scored.clone()),
        },
        checks,
        expected_failure_baseline: Baseline {
            sha256: baseline_digest(&baseline),
            entries: baseline.clone(),
        },
        stale_expected_failures: baseline
            .iter()
            .filter(|r| !failures.contains(*r))
            .cloned()
            .collect(),
        observation_coverage: coverage,
        original_result_artifact: OriginalArtifact {
            sha256: record
                .sha256
                .clone()
                .unwrap_or_else(|| sha256_hex(original)),
            bytes: record.bytes.unwrap_or(original.len() as u64),
            sanitization,
        },
        harness: Harness {
            exit_code: options.harness_exit_code,
            warnings: options.harness_warnings.clone(),
        },
        mapping_boundary: MappingBoundary {
            official_result_preserved: true,
            explicit_mapping: false,
            mcp_res_evidence_class: None,
            official_certification_claim: false,
        },
        import_status: String::new(),
    };
    attachment.import_status = derive_status(&attachment).to_string();
    Ok(Imported {
        attachment,
        sanitized,
    })
}

// ---------------------------------------------------------------------------
// Capture records.
// ---------------------------------------------------------------------------

fn need_str(v: &Value, pointer: &str, what: &str) -> Result<String, ImportError> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| invalid(format!("the capture record has no {what} ({pointer})")))
}

/// What a capture record fixes about its run.
#[derive(Debug, Clone)]
pub struct Capture {
    pub options: ImportOptions,
    pub record: OriginalRecord,
}

/// Read a capture record (`mcp-res.official-conformance-capture-metadata/0.2.0`).
pub fn read_capture(capture: &Value) -> Result<Capture, ImportError> {
    if capture.get("schemaVersion").and_then(Value::as_str) != Some(CAPTURE_SCHEMA_VERSION) {
        return Err(invalid(format!(
            "the capture record's schemaVersion is not {CAPTURE_SCHEMA_VERSION}"
        )));
    }
    let source = Source {
        package_name: need_str(capture, "/source/packageName", "package name")?,
        package_version: need_str(capture, "/source/packageVersion", "package version")?,
        package_sha256: need_str(capture, "/source/packageSha256", "package digest")?,
        repository: need_str(capture, "/source/repository", "repository")?,
        repository_commit: need_str(capture, "/source/repositoryCommit", "repository commit")?,
    };
    let scenario = need_str(capture, "/execution/scenario", "scenario")?;
    let exit_code = capture
        .pointer("/execution/harnessExitCode")
        .and_then(Value::as_i64)
        .ok_or_else(|| invalid("the capture record has no harness exit code"))?;
    let sanitization = match capture.get("sanitization") {
        Some(s) => Some(Sanitization {
            applied: s.get("applied").and_then(Value::as_bool).ok_or_else(|| {
                invalid("the capture record's sanitization.applied is not a boolean")
            })?,
            fields: s
                .get("fields")
                .and_then(Value::as_array)
                .ok_or_else(|| invalid("the capture record's sanitization.fields is not a list"))?
                .iter()
                .map(|f| {
                    f.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| invalid("a sanitized field is not a string"))
                })
                .collect::<Result<_, _>>()?,
        }),
        None => None,
    };
    let options = ImportOptions {
        source,
        protocol_revision: need_str(capture, "/protocolRevision", "protocol revision")?,
        requirement_set: RequirementSet {
            revision: need_str(
                capture,
                "/requirementSet/revision",
                "requirement-set revision",
            )?,
            sha256: need_str(capture, "/requirementSet/sha256", "requirement-set digest")?,
        },
        mode: need_str(capture, "/execution/mode", "mode")?,
        suite: need_str(capture, "/execution/suite", "suite")?,
        legs: None,
        scenario_id: scenario.clone(),
        check_scenarios: None,
        scenarios: Some(vec![scenario]),
        declared: None,
        expected_failures: Vec::new(),
        pending: Vec::new(),
        not_scored: Vec::new(),
        coverage: Vec::new(),
        harness_exit_code: exit_code,
        harness_warnings: capture
            .pointer("/execution/warnings")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
    };
    let record = OriginalRecord {
        sha256: Some(need_str(
            capture,
            "/originalResultArtifact/sha256",
            "original result digest",
        )?),
        bytes: Some(
            capture
                .pointer("/originalResultArtifact/bytes")
                .and_then(Value::as_u64)
                .ok_or_else(|| invalid("the capture record has no original result length"))?,
        ),
        sanitization,
    };
    Ok(Capture { options, record })
}

// ---------------------------------------------------------------------------
// Results folders.
// ---------------------------------------------------------------------------

static TIMESTAMP_SUFFIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$").expect("static regex"));

/// The scenario a result directory belongs to: its path below the results folder
/// without the run's timestamp suffix and, in server mode, without `server-`.
pub fn scenario_of_dir(relative: &str, mode: &str) -> String {
    let base = TIMESTAMP_SUFFIX.replace(relative, "").into_owned();
    if mode == "server" {
        base.strip_prefix("server-")
            .map(str::to_owned)
            .unwrap_or(base)
    } else {
        base
    }
}

/// One `checks.json` of a results folder.
#[derive(Debug, Clone)]
pub struct ResultFile {
    /// Path below the results folder, `/`-separated.
    pub relative: String,
    pub scenario: String,
    pub bytes: Vec<u8>,
}

/// The most `checks.json` files one results folder may hold.
pub const MAX_RESULT_FILES: usize = 1024;
/// The most bytes one `checks.json` may hold (the per-document limit).
pub const MAX_RESULT_FILE_BYTES: u64 = 16 << 20;
/// The most bytes all `checks.json` files of a results folder may hold together
/// (the attachment schema's largest original, 64 MiB).
pub const MAX_RESULTS_TOTAL_BYTES: u64 = 64 << 20;
/// Entries examined when looking for `checks.json` files.
pub const MAX_RESULT_ENTRIES: usize = 65_536;

fn collect(
    dir: &Path,
    out: &mut Vec<(PathBuf, u64)>,
    depth: usize,
    seen: &mut usize,
) -> Result<(), ImportError> {
    if depth > 8 {
        return Err(invalid(format!("{} is nested too deeply", dir.display())));
    }
    let entries = std::fs::read_dir(dir)
        .map_err(|e| invalid(format!("cannot read {}: {e}", dir.display())))?;
    for entry in entries {
        *seen += 1;
        if *seen > MAX_RESULT_ENTRIES {
            return Err(invalid(format!(
                "the results folder holds more than {MAX_RESULT_ENTRIES} entries"
            )));
        }
        let entry = entry.map_err(|e| invalid(format!("cannot read {}: {e}", dir.display())))?;
        let kind = entry
            .file_type()
            .map_err(|e| invalid(format!("cannot read {}: {e}", entry.path().display())))?;
        if kind.is_symlink() {
            continue;
        }
        if kind.is_dir() {
            collect(&entry.path(), out, depth + 1, seen)?;
        } else if entry.file_name() == "checks.json" {
            if out.len() >= MAX_RESULT_FILES {
                return Err(invalid(format!(
                    "the results folder holds more than {MAX_RESULT_FILES} checks.json files"
                )));
            }
            let len = entry
                .metadata()
                .map_err(|e| invalid(format!("cannot read {}: {e}", entry.path().display())))?
                .len();
            out.push((entry.path(), len));
        }
    }
    Ok(())
}

/// Read every `checks.json` below `dir`, ordered by path. The number of files,
/// each file's size and their total size are bounded ([`MAX_RESULT_FILES`],
/// [`MAX_RESULT_FILE_BYTES`], [`MAX_RESULTS_TOTAL_BYTES`]); the sizes are
/// checked before any file is read, and again while reading.
pub fn read_results(dir: &Path, mode: &str) -> Result<Vec<ResultFile>, ImportError> {
    let mut paths = Vec::new();
    collect(dir, &mut paths, 0, &mut 0)?;
    let over_total = || {
        invalid(format!(
            "the checks.json files below {} hold more than {MAX_RESULTS_TOTAL_BYTES} bytes together",
            dir.display()
        ))
    };
    let mut declared: u64 = 0;
    for (path, len) in &paths {
        if *len > MAX_RESULT_FILE_BYTES {
            return Err(invalid(format!(
                "{} holds {len} bytes, over the {MAX_RESULT_FILE_BYTES}-byte limit for one result file",
                path.display()
            )));
        }
        declared = declared.saturating_add(*len);
        if declared > MAX_RESULTS_TOTAL_BYTES {
            return Err(over_total());
        }
    }
    let file_limits = Limits {
        max_bytes: MAX_RESULT_FILE_BYTES as usize,
        ..Limits::default()
    };
    let mut total: u64 = 0;
    let mut files = Vec::new();
    for (path, _) in paths {
        let relative_dir = path
            .parent()
            .and_then(|p| p.strip_prefix(dir).ok())
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default();
        if relative_dir.is_empty() {
            return Err(invalid(
                "checks.json sits directly in the results folder; pass the folder the suite wrote with -o",
            ));
        }
        let bytes = bundle::read_file(&path, &file_limits)?;
        total += bytes.len() as u64;
        if total > MAX_RESULTS_TOTAL_BYTES {
            return Err(over_total());
        }
        files.push(ResultFile {
            relative: format!("{relative_dir}/checks.json"),
            scenario: scenario_of_dir(&relative_dir, mode),
            bytes,
        });
    }
    files.sort_by(|a, b| a.relative.cmp(&b.relative));
    if files.is_empty() {
        return Err(invalid(format!("no checks.json below {}", dir.display())));
    }
    Ok(files)
}

/// The original result of a results folder, and the scenario of each of its checks.
/// One `checks.json` is its own original. Several are joined into one array: the
/// exact bytes of every check element, files in path order, written as `[`, the
/// elements separated by `,`, and `]` (no other bytes). Each check belongs to the
/// scenario of its directory unless it names one in `metadata.scenario`.
pub fn merge_results(files: &[ResultFile]) -> Result<(Vec<u8>, Vec<String>), ImportError> {
    let mut scenarios = Vec::new();
    let mut elements: Vec<&[u8]> = Vec::new();
    for f in files {
        let value = parse_output(&f.bytes)
            .map_err(|e| invalid(format!("{}: not JSON: {e}", f.relative)))?;
        let Value::Array(items) = value else {
            return Err(invalid(format!("{}: not a JSON array", f.relative)));
        };
        for i in 0..items.len() {
            let range = locate(&f.bytes, &format!("/{i}"))
                .ok_or_else(|| invalid(format!("{}: cannot locate check {i}", f.relative)))?;
            elements.push(&f.bytes[range]);
            scenarios.push(f.scenario.clone());
        }
    }
    if let [only] = files {
        return Ok((only.bytes.clone(), scenarios));
    }
    let mut out = vec![b'['];
    for (i, e) in elements.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(e);
    }
    out.push(b']');
    Ok((out, scenarios))
}

// ---------------------------------------------------------------------------
// Expected-failure baselines.
// ---------------------------------------------------------------------------

/// Read an expected-failure baseline: a JSON array of `scenario:check` references
/// or scenario names, or the official tool's file (`server:` / `client:` lists of
/// scenario names, as JSON or as a YAML block list). A scenario name stands for
/// every failing check of that scenario, or for all of its checks when none fails
/// (then all are stale).
pub fn read_baseline(bytes: &[u8], mode: &str) -> Result<Vec<String>, ImportError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| invalid("the expected-failures file is not UTF-8"))?;
    if let Ok(value) = json::parse(bytes, &Limits::default()) {
        return match value {
            Value::Array(items) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| invalid("an expected-failures entry is not a string"))
                })
                .collect(),
            Value::Object(map) => match map.get(mode) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| invalid("an expected-failures entry is not a string"))
                    })
                    .collect(),
                Some(_) => Err(invalid(format!(
                    "the expected-failures file's {mode:?} entry is not a list"
                ))),
            },
            _ => Err(invalid(
                "the expected-failures file is not a list or an object",
            )),
        };
    }
    // The YAML block form: `server:` / `client:` followed by `- name` items.
    let mut lists: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        let code = line.split(" #").next().unwrap_or("").trim_end();
        let trimmed = code.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(item) = trimmed.strip_prefix("- ") {
            let Some(key) = &current else {
                return Err(invalid(format!(
                    "expected-failures line {}: an item outside a server: or client: list",
                    n + 1
                )));
            };
            let item = item.trim().trim_matches(|c| c == '"' || c == '\'');
            lists.entry(key.clone()).or_default().push(item.to_string());
        } else if let Some(key) = trimmed.strip_suffix(':').filter(|_| !line.starts_with(' ')) {
            current = Some(key.trim().to_string());
            lists.entry(key.trim().to_string()).or_default();
        } else if let Some((key, rest)) = trimmed.split_once(':')
            && rest.trim() == "[]"
        {
            lists.entry(key.trim().to_string()).or_default();
            current = None;
        } else {
            return Err(invalid(format!(
                "expected-failures line {} is neither JSON nor a server:/client: list",
                n + 1
            )));
        }
    }
    Ok(lists.remove(mode).unwrap_or_default())
}

/// Turn baseline entries into check references against the emitted checks: a
/// `scenario:check` entry is kept; a scenario name becomes its failing checks,
/// or all of its checks when none fails.
pub fn expand_baseline(
    entries: &[String],
    original: &[u8],
    options: &ImportOptions,
) -> Result<Vec<String>, ImportError> {
    let raw = parse_output(original).unwrap_or(Value::Null);
    let mut by_scenario: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
    for (i, check) in raw
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .enumerate()
    {
        let fallback = options
            .check_scenarios
            .as_ref()
            .and_then(|s| s.get(i))
            .unwrap_or(&options.scenario_id);
        let scenario = check
            .pointer("/metadata/scenario")
            .and_then(Value::as_str)
            .unwrap_or(fallback);
        let id = check.get("id").and_then(Value::as_str).unwrap_or("");
        let failing = failing_outcome(check.get("status").and_then(Value::as_str).unwrap_or(""));
        by_scenario
            .entry(scenario.to_string())
            .or_default()
            .push((check_ref(scenario, id), failing));
    }
    let mut out = Vec::new();
    for entry in entries {
        if entry.contains(':') {
            out.push(entry.clone());
            continue;
        }
        let Some(checks) = by_scenario.get(entry) else {
            return Err(invalid(format!(
                "the expected-failures baseline names scenario {entry:?}, which emitted no checks; name its checks as scenario:check"
            )));
        };
        let failing: Vec<String> = checks
            .iter()
            .filter(|(_, f)| *f)
            .map(|(r, _)| r.clone())
            .collect();
        if failing.is_empty() {
            out.extend(checks.iter().map(|(r, _)| r.clone()));
        } else {
            out.extend(failing);
        }
    }
    Ok(out)
}
