//! `mcpres migrate v0.1`: turn a valid MCP-RES v0.1 conformance bundle into an
//! `mcp-res.migration-result/0.2.0` that records its history and nothing more.
//!
//! Migration keeps the original bundle verbatim (member order included), its evidence digest
//! and its evidence class; every producer boolean becomes a `LEGACY_SELF_ASSERTED` assertion;
//! the target is `INCOMPLETE`, `UNSIGNED_INTEGRITY_ONLY` and `SINGLE_OBSERVATION`, with the
//! v0.2 requirements a v0.1 run cannot satisfy listed as unresolved. Nothing is invented:
//! no observation, reason, signature, trial, scenario fingerprint or execution digest.
//!
//! The output bytes depend only on the input bytes and on the migrating executable (whose
//! SHA-256 is recorded), so the same input and tool give the same bytes everywhere.
//!
//! The file-system side ([`run`]) never overwrites: it refuses an output equal to the input,
//! an output outside the workspace (the current directory or `--workspace`, after resolving
//! symlinks in the output's parent), and an existing output, and creates the file exclusively
//! below a handle of the workspace, never following a symlink (see [`crate::fsio`]).

pub mod ordered;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::diag::codes as c;
use crate::json::{Limits, canonical::sha256_hex, reader};
pub use crate::model::legacy::{LegacyAssertion, legacy_assertions, unresolved_requirements};
use crate::validate::{migration, v01};
use ordered::Ordered;

/// The tool name the migration-result schema requires.
pub const TOOL_NAME: &str = "mcp-res-migrate";
/// The migration procedure version the migration-result schema requires.
pub const TOOL_VERSION: &str = "0.2.0";

pub const V01_BUNDLE: &str = "mcp-res.conformance-bundle/0.1.0";
pub const V02_BUNDLE: &str = "mcp-res.conformance-bundle/0.2.0";
pub const MIGRATION_RESULT: &str = "mcp-res.migration-result/0.2.0";

/// The v0.2 requirements no v0.1 bundle can meet (sorted).
/// What the report says migration did not do.
pub const WARNINGS: [&str; 5] = [
    "Producer booleans remain LEGACY_SELF_ASSERTED.",
    "No reason-bound negative evidence was fabricated.",
    "No signature or signer identity was fabricated.",
    "No repeated-trial evidence was fabricated.",
    "A fresh v0.2 run is required to resolve incomplete requirements.",
];

/// Why migration refused.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error("the input is already a v0.2 conformance bundle; validate it directly")]
    AlreadyV02,
    #[error("the input's schemaVersion is not {V01_BUNDLE}")]
    SourceVersionUnsupported,
    #[error("the input fails v0.1 validation with {}", .diagnostics.join(", "))]
    SourceInvalid { diagnostics: Vec<String> },
    #[error("the input migration result fails validation with {diagnostic}")]
    ResultInvalid { diagnostic: String },
    #[error("the input is not readable JSON: {0}")]
    InputJsonInvalid(String),
    #[error("the output path is the input path")]
    InputOverwrite,
    #[error("{0}")]
    OutsideWorkspace(String),
    #[error("the output already exists")]
    OutputConflict,
    #[error("{0}")]
    Io(String),
}

impl MigrateError {
    /// The diagnostic code of the refusal.
    pub fn code(&self) -> crate::diag::Code {
        match self {
            MigrateError::AlreadyV02 => c::MIGRATION_ALREADY_V02,
            MigrateError::SourceVersionUnsupported => c::MIGRATION_SOURCE_VERSION_UNSUPPORTED,
            MigrateError::SourceInvalid { .. } => c::MIGRATION_SOURCE_INVALID,
            MigrateError::ResultInvalid { .. } => c::MIGRATION_SOURCE_INVALID,
            MigrateError::InputJsonInvalid(_) => c::MIGRATION_INPUT_JSON_INVALID,
            MigrateError::InputOverwrite => c::MIGRATION_INPUT_OVERWRITE_FORBIDDEN,
            MigrateError::OutsideWorkspace(_) => c::MIGRATION_OUTPUT_OUTSIDE_WORKSPACE,
            MigrateError::OutputConflict => c::MIGRATION_OUTPUT_CONFLICT,
            MigrateError::Io(_) => c::INPUT_INVALID,
        }
    }

    /// The input is a readable document that migration refuses on its content (the
    /// command's failing-diagnostic exit); otherwise the input or the paths are unusable.
    pub fn refuses_content(&self) -> bool {
        matches!(
            self,
            MigrateError::AlreadyV02
                | MigrateError::SourceInvalid { .. }
                | MigrateError::ResultInvalid { .. }
        )
    }

    /// The diagnostic line: the code (with the v0.1 diagnostics for an invalid source, as
    /// the reference prints them) and the message.
    pub fn diagnostic(&self) -> String {
        match self {
            MigrateError::SourceInvalid { diagnostics } => {
                format!("{}:{}", self.code(), diagnostics.join(","))
            }
            MigrateError::ResultInvalid { diagnostic } => diagnostic.clone(),
            _ => self.code().to_string(),
        }
    }
}

/// A migration result in bytes, with its report.
#[derive(Debug, Clone)]
pub struct Migrated {
    /// The output bytes (pretty JSON and a newline).
    pub bytes: Vec<u8>,
    /// The result document.
    pub value: Value,
    /// `true` when the input already was a (valid) migration result, returned unchanged.
    pub unchanged: bool,
}

impl Migrated {
    /// The result's `report` member.
    pub fn report(&self) -> &Value {
        &self.value["report"]
    }

    /// SHA-256 of the output bytes.
    pub fn sha256(&self) -> String {
        sha256_hex(&self.bytes)
    }
}

/// Migrate the bytes of one input file. `tool_sha256` identifies the migrating executable.
pub fn migrate_bytes(source: &[u8], tool_sha256: &str) -> Result<Migrated, MigrateError> {
    let doc = reader::parse(source, &Limits::default())
        .map_err(|e| MigrateError::InputJsonInvalid(e.to_string()))?;
    let ordered =
        Ordered::parse(source).map_err(|e| MigrateError::InputJsonInvalid(e.to_string()))?;
    match doc.get("schemaVersion").and_then(Value::as_str) {
        Some(MIGRATION_RESULT) => {
            let report = migration::validate_result(&doc);
            if let Some(primary) = report.primary() {
                return Err(MigrateError::ResultInvalid {
                    diagnostic: primary.to_owned(),
                });
            }
            return Ok(Migrated {
                bytes: ordered.to_pretty(),
                value: doc,
                unchanged: true,
            });
        }
        Some(V02_BUNDLE) => return Err(MigrateError::AlreadyV02),
        Some(V01_BUNDLE) => {}
        _ => return Err(MigrateError::SourceVersionUnsupported),
    }
    let report = v01::validate_bundle(&doc);
    if !report.valid {
        return Err(MigrateError::SourceInvalid {
            diagnostics: report.diagnostics,
        });
    }
    let result = build(&doc, ordered, &sha256_hex(source), tool_sha256);
    Ok(Migrated {
        bytes: result.to_pretty(),
        value: result.to_value(),
        unchanged: false,
    })
}

fn build(doc: &Value, original: Ordered, file_sha256: &str, tool_sha256: &str) -> Ordered {
    let evidence = &doc["evidence"];
    let evidence_sha256 = doc["statement"]["evidenceSha256"]
        .as_str()
        .unwrap_or_default();
    let class = evidence["evidenceClass"].as_str().unwrap_or_default();
    let assertions = legacy_assertions(evidence);
    let unresolved = unresolved_requirements(evidence);
    let unresolved_list = || Ordered::Array(unresolved.iter().map(Ordered::str).collect());
    let assertion_list = Ordered::Array(
        assertions
            .iter()
            .map(|a| {
                Ordered::object(vec![
                    ("name", Ordered::str(a.name.clone())),
                    ("value", Ordered::Bool(a.value)),
                    ("strength", Ordered::str("LEGACY_SELF_ASSERTED")),
                ])
            })
            .collect(),
    );
    Ordered::object(vec![
        ("schemaVersion", Ordered::str(MIGRATION_RESULT)),
        (
            "source",
            Ordered::object(vec![
                ("standardVersion", Ordered::str("0.1.0")),
                ("evidenceSha256", Ordered::str(evidence_sha256)),
                ("bundleFileSha256", Ordered::str(file_sha256)),
            ]),
        ),
        (
            "target",
            Ordered::object(vec![
                ("standardVersion", Ordered::str("0.2.0")),
                ("status", Ordered::str("INCOMPLETE")),
                ("evidenceClass", Ordered::str(class)),
                (
                    "authenticityClassification",
                    Ordered::str("UNSIGNED_INTEGRITY_ONLY"),
                ),
                (
                    "stabilityClassification",
                    Ordered::str("SINGLE_OBSERVATION"),
                ),
                ("legacyAssertions", assertion_list),
                ("unresolvedRequirements", unresolved_list()),
            ]),
        ),
        (
            "migration",
            Ordered::object(vec![
                ("from", Ordered::str("0.1.0")),
                ("to", Ordered::str("0.2.0")),
                (
                    "tool",
                    Ordered::object(vec![
                        ("name", Ordered::str(TOOL_NAME)),
                        ("version", Ordered::str(TOOL_VERSION)),
                        ("sha256", Ordered::str(tool_sha256)),
                    ]),
                ),
                ("inputOverwritten", Ordered::Bool(false)),
                ("fabricatedEvidence", Ordered::Bool(false)),
            ]),
        ),
        (
            "report",
            Ordered::object(vec![
                ("status", Ordered::str("INCOMPLETE")),
                ("preservedEvidenceSha256", Ordered::str(evidence_sha256)),
                ("preservedEvidenceClass", Ordered::str(class)),
                (
                    "legacyAssertionCount",
                    Ordered::Number(assertions.len().into()),
                ),
                ("unresolvedRequirements", unresolved_list()),
                (
                    "warnings",
                    Ordered::Array(WARNINGS.iter().map(|w| Ordered::str(*w)).collect()),
                ),
            ]),
        ),
        ("originalBundle", original),
    ])
}

/// SHA-256 of the running executable's file.
pub fn current_exe_sha256() -> Result<String, MigrateError> {
    let exe = std::env::current_exe()
        .map_err(|e| MigrateError::Io(format!("cannot locate the running executable: {e}")))?;
    let bytes = fs::read(&exe)
        .map_err(|e| MigrateError::Io(format!("cannot read the running executable: {e}")))?;
    Ok(sha256_hex(&bytes))
}

/// The command's arguments.
#[derive(Debug, Clone)]
pub struct Request {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
    pub dry_run: bool,
    /// The directory the output must stay in; the current directory when `None`.
    pub workspace: Option<PathBuf>,
}

/// What the command did (printed as one JSON line).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub dry_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub would_write: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    pub output_sha256: String,
    /// `true` when the input already was a migration result and is returned unchanged.
    pub unchanged: bool,
    pub report: MigrationReport,
}

/// The `report` member of a migration result, with its members in document order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MigrationReport {
    pub status: String,
    pub preserved_evidence_sha256: String,
    pub preserved_evidence_class: String,
    pub legacy_assertion_count: u64,
    pub unresolved_requirements: Vec<String>,
    pub warnings: Vec<String>,
}

/// Where the output will be created, after the safety checks: a directory
/// below the workspace (by its resolved path) and a file name in it.
#[derive(Debug)]
struct Target {
    /// The resolved output path, for messages only.
    path: PathBuf,
    /// The resolved workspace.
    workspace: PathBuf,
    /// The output directory relative to the workspace (empty for the workspace itself).
    rel_dir: PathBuf,
    name: std::ffi::OsString,
}

fn io_error(what: &str, path: &Path, e: &std::io::Error) -> MigrateError {
    MigrateError::Io(format!("{what} {}: {e}", path.display()))
}

/// Check an output path: not the input, inside the workspace after resolving the parent's
/// symlinks, and not existing (not even as a dangling symlink).
fn check_output(input: &Path, output: &Path, workspace: &Path) -> Result<Target, MigrateError> {
    let absolute = |p: &Path| std::path::absolute(p).map_err(|e| io_error("cannot resolve", p, &e));
    let input_abs = absolute(input)?;
    let output_abs = absolute(output)?;
    if input_abs == output_abs {
        return Err(MigrateError::InputOverwrite);
    }
    let Some(name) = output_abs.file_name().filter(|n| *n != "." && *n != "..") else {
        return Err(MigrateError::OutsideWorkspace(
            "the output path does not end in a file name".into(),
        ));
    };
    let parent = output_abs.parent().unwrap_or(Path::new("/"));
    let parent_real = fs::canonicalize(parent)
        .map_err(|e| io_error("cannot resolve the output directory", parent, &e))?;
    let target = parent_real.join(name);
    if fs::canonicalize(input).is_ok_and(|real| real == target) {
        return Err(MigrateError::InputOverwrite);
    }
    let root = fs::canonicalize(workspace)
        .map_err(|e| io_error("cannot resolve the workspace", workspace, &e))?;
    let Ok(rel_dir) = parent_real.strip_prefix(&root) else {
        return Err(MigrateError::OutsideWorkspace(format!(
            "the output directory resolves to {}, outside the workspace {}",
            parent_real.display(),
            root.display()
        )));
    };
    if fs::symlink_metadata(&target).is_ok() {
        return Err(MigrateError::OutputConflict);
    }
    Ok(Target {
        rel_dir: rel_dir.to_path_buf(),
        name: name.to_os_string(),
        path: target,
        workspace: root,
    })
}

/// Create the output exclusively and write `bytes`. The workspace is opened once and the
/// output directory reached from it one name at a time without following a symlink
/// ([`crate::fsio::DirHandle`]): a directory swapped for a symlink between the check and
/// the creation stops the write instead of redirecting it, and the created file is checked
/// through its own descriptor (device and inode), never looked up again by path.
fn write_exclusive(target: &Target, bytes: &[u8]) -> Result<(), MigrateError> {
    use crate::fsio::DirHandle;
    let changed = |e: std::io::Error| {
        MigrateError::OutsideWorkspace(format!(
            "the output directory changed while the output was being created; nothing was written: {e}"
        ))
    };
    let root = DirHandle::open(&target.workspace)
        .map_err(|e| io_error("cannot open the workspace", &target.workspace, &e))?;
    let dir = if target.rel_dir.as_os_str().is_empty() {
        root
    } else {
        root.subdir(&target.rel_dir, false).map_err(changed)?
    };
    let mut file = dir
        .create_file(Path::new(&target.name))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => MigrateError::OutputConflict,
            std::io::ErrorKind::Other => changed(e),
            _ => io_error("cannot create", &target.path, &e),
        })?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if let Err(e) = written {
        drop(file);
        let _ = dir.remove_file(Path::new(&target.name));
        return Err(io_error("cannot write", &target.path, &e));
    }
    Ok(())
}

/// Run the command: path checks first (nothing is read before they pass), then read and
/// migrate the input, then (unless dry-run) create the output.
pub fn run(request: &Request, tool_sha256: &str) -> Result<Outcome, MigrateError> {
    let workspace = match &request.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map_err(|e| MigrateError::Io(format!("cannot read the current directory: {e}")))?,
    };
    let target = match &request.output {
        Some(output) => Some(check_output(&request.input, output, &workspace)?),
        None if request.dry_run => None,
        None => {
            return Err(MigrateError::Io(
                "--output is required without --dry-run".into(),
            ));
        }
    };
    let source = crate::bundle::read_file(&request.input, &Limits::default())
        .map_err(|e| MigrateError::Io(e.to_string()))?;
    let migrated = migrate_bytes(&source, tool_sha256)?;
    let shown = request.output.as_ref().map(|p| p.display().to_string());
    let outcome = Outcome {
        dry_run: request.dry_run,
        would_write: request.dry_run.then(|| shown.clone()),
        output: if request.dry_run { None } else { shown },
        output_sha256: migrated.sha256(),
        unchanged: migrated.unchanged,
        report: serde_json::from_value(migrated.report().clone())
            .map_err(|e| MigrateError::Io(format!("the result's report is malformed: {e}")))?,
    };
    if let (false, Some(target)) = (request.dry_run, &target) {
        write_exclusive(target, &migrated.bytes)?;
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn assertions_are_sorted_like_english_collation() {
        let evidence = json!({
            "execution": {"regressionExecuted": true, "actualRuntime": false},
            "regression": {"provided": true, "runtimeRequirements": []},
            "privacy": {"scanPassed": true},
            "cleanup": {"complete": true, "durationMs": 3}
        });
        let names: Vec<String> = legacy_assertions(&evidence)
            .into_iter()
            .map(|a| a.name)
            .collect();
        assert_eq!(
            names,
            [
                "actualRuntime",
                "cleanup.complete",
                "privacy.scanPassed",
                "regression.provided",
                "regressionExecuted"
            ]
        );
    }

    #[test]
    fn source_evidence_decides_one_requirement() {
        let without = unresolved_requirements(&json!({}));
        assert_eq!(without.len(), 8);
        assert!(without.contains(&"SOURCE_EVIDENCE".to_owned()));
        let mut sorted = without.clone();
        sorted.sort();
        assert_eq!(without, sorted);
        assert_eq!(
            unresolved_requirements(&json!({"sourceEvidence": {}})).len(),
            7
        );
    }

    #[test]
    fn refusals_by_version() {
        let v02 = br#"{"schemaVersion":"mcp-res.conformance-bundle/0.2.0"}"#;
        assert!(matches!(
            migrate_bytes(v02, &"0".repeat(64)),
            Err(MigrateError::AlreadyV02)
        ));
        let other = br#"{"schemaVersion":"mcp-res.trust-policy/0.2.0"}"#;
        assert!(matches!(
            migrate_bytes(other, &"0".repeat(64)),
            Err(MigrateError::SourceVersionUnsupported)
        ));
        assert!(matches!(
            migrate_bytes(b"{\"a\":1,\"a\":2}", &"0".repeat(64)),
            Err(MigrateError::InputJsonInvalid(_))
        ));
    }
}
