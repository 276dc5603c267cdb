//! Loading a profile evaluation directory, as `mcpres profile run` writes it:
//! `evaluation.json` (the MCP-RES profile evaluation), `run.json` (mcpres's run
//! record, `mcpres.profile-run/1`) and the artifact files run.json lists. This
//! module only reads: it reports what is on disk (each listed file's state, its
//! length and SHA-256, the entries nothing lists); the validator (`validate::profile_dir`)
//! turns that into findings. See spec/profiles.md, "The evaluation directory".

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use rayon::prelude::*;
use serde_json::Value;

use super::dir::{self, Absence, DirLimits, FoldedPaths, OnDisk};
use super::{LoadError, read_json};
use crate::json::{self, Limits};
use crate::schema::{self, SchemaKind};

/// The evaluation document of the directory (its presence makes the directory one).
pub const EVALUATION_FILE: &str = "evaluation.json";
/// mcpres's run record beside it.
pub const RUN_FILE: &str = "run.json";
/// The run record's `schemaVersion`.
pub const RUN_SCHEMA_VERSION: &str = "mcpres.profile-run/1";

/// Whether `path` is a profile evaluation directory: a real directory holding an
/// entry `evaluation.json` and no `integrity-manifest.json` (that makes a bundle
/// directory, whatever else it holds). Symlinks are never followed.
pub fn is_profile_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
        && fs::symlink_metadata(path.join(EVALUATION_FILE)).is_ok()
        && fs::symlink_metadata(path.join(dir::MANIFEST_FILE)).is_err()
}

/// What `run.json` turned out to be.
#[derive(Debug)]
pub enum RunFile {
    /// No entry `run.json` at all.
    Missing,
    /// There, but not a strictly readable JSON file (the reason, without its bytes).
    Unreadable(String),
    /// Read and parsed (not yet checked against its schema).
    Read(Value),
}

/// What is at one listed path, checked in the bundle-directory order: path rule,
/// collision, presence, bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    /// Not a safe relative path (the reason).
    PathInvalid(&'static str),
    /// Folds to the same name as an earlier listed path or a file of the directory itself.
    Collides(String),
    /// Not a regular file reached without a symlink.
    Absent(Absence),
    /// The declared length is over the artifact limit; the file was not read.
    OverLimit { limit: u64 },
    /// The file could not be read safely (the reason).
    Unreadable(String),
    /// Read: at most the declared length plus one byte, and the SHA-256 of what was read.
    Read { bytes: u64, sha256: String },
}

/// One entry of run.json's `artifacts` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
    pub state: FileState,
}

/// A loaded profile evaluation directory.
#[derive(Debug)]
pub struct ProfileDir {
    /// evaluation.json, strictly parsed.
    pub evaluation: Value,
    /// evaluation.json's bytes, exactly as stored (what `mcpres pack` writes).
    pub evaluation_bytes: Vec<u8>,
    /// SHA-256 of those bytes.
    pub evaluation_file_sha256: String,
    pub run: RunFile,
    /// Whether run.json was read and matches its schema; only then were the files looked at.
    pub run_schema_valid: bool,
    /// run.json's artifacts, in its order (empty unless `run_schema_valid`).
    pub artifacts: Vec<Listed>,
    /// Entries of the directory that neither a listed path nor the two documents account for.
    pub unlisted: Vec<(String, OnDisk)>,
    /// `false` when the directory held more than [`dir::MAX_DIR_ENTRIES`] entries and the rest were not examined.
    pub walk_complete: bool,
    /// The listed artifacts the judge reads ([`crate::judge::profile::reads`]) whose
    /// bytes are the listed ones, parsed by the strict reader (or why they could not be):
    /// what `validate` re-judges the verdicts from.
    pub stored: BTreeMap<String, crate::judge::profile::Stored>,
}

/// The `schemaVersion` of the run record `mcpres oauth run` writes beside an
/// OAuth-boundary evaluation.
pub const OAUTH_RUN_SCHEMA: &str = "mcpres.oauth-run/1";

/// The most artifacts an OAuth run record may list.
pub const OAUTH_RUN_MAX_ARTIFACTS: usize = 10_000;

/// Whether an evaluation document is an OAuth-boundary evaluation (its
/// directory then has an OAuth run record).
pub fn is_oauth(evaluation: &Value) -> bool {
    evaluation["schemaVersion"] == "mcp-res.oauth-boundary-evaluation/0.2.0"
}

/// The shape of an OAuth run record that the directory rules rely on: its
/// `schemaVersion`, the evaluation file digest, and a bounded artifact list
/// whose every entry has a path, a lower-case hex SHA-256 and a length.
pub fn oauth_run_holds(run: &Value) -> bool {
    let hex64 = |v: &Value| {
        v.as_str().is_some_and(|s| {
            s.len() == 64
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
    };
    run["schemaVersion"] == OAUTH_RUN_SCHEMA
        && hex64(&run["evaluationFileSha256"])
        && run["artifacts"].as_array().is_some_and(|list| {
            list.len() <= OAUTH_RUN_MAX_ARTIFACTS
                && list.iter().all(|a| {
                    a["path"].as_str().is_some_and(|p| !p.is_empty())
                        && hex64(&a["sha256"])
                        && a["bytes"].as_u64().is_some()
                })
        })
}

/// Load a profile evaluation directory. evaluation.json that cannot be read is
/// unusable input, as for a single file; everything else is reported in the result.
pub fn load(root: &Path, limits: &Limits, dir_limits: &DirLimits) -> Result<ProfileDir, LoadError> {
    let (evaluation, evaluation_bytes) = read_json(&root.join(EVALUATION_FILE), limits)?;
    let run_path = root.join(RUN_FILE);
    let run = if fs::symlink_metadata(&run_path).is_err() {
        RunFile::Missing
    } else {
        match read_json(&run_path, limits) {
            Ok((value, _)) => RunFile::Read(value),
            Err(e) => RunFile::Unreadable(e.to_string()),
        }
    };
    let mut loaded = ProfileDir {
        evaluation,
        evaluation_file_sha256: json::sha256_hex(&evaluation_bytes),
        evaluation_bytes,
        run,
        run_schema_valid: false,
        artifacts: Vec::new(),
        unlisted: Vec::new(),
        walk_complete: true,
        stored: BTreeMap::new(),
    };
    let RunFile::Read(run) = &loaded.run else {
        return Ok(loaded);
    };
    // The files are looked at only for a run record that holds: its list is then
    // bounded by the schema and every entry has a path, a digest and a length.
    // An OAuth-boundary evaluation's directory has `mcpres oauth run`'s record.
    let holds = if is_oauth(&loaded.evaluation) {
        oauth_run_holds(run)
    } else {
        schema::is_valid(SchemaKind::ProfileRun, run)
    };
    if !holds {
        return Ok(loaded);
    }
    loaded.run_schema_valid = true;
    let entries: Vec<(String, String, u64)> = run["artifacts"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|a| {
                    (
                        a["path"].as_str().unwrap_or_default().to_owned(),
                        a["sha256"].as_str().unwrap_or_default().to_owned(),
                        a["bytes"].as_u64().unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut folded = FoldedPaths::new(&[EVALUATION_FILE, RUN_FILE]);
    let states: Vec<Option<FileState>> = entries
        .iter()
        .map(|(path, _, _)| {
            if let Some(problem) = dir::path_problem(path) {
                return Some(FileState::PathInvalid(problem));
            }
            if let Some(message) = folded.insert(path, "run.json artifact") {
                return Some(FileState::Collides(message));
            }
            dir::locate(root, path).err().map(FileState::Absent)
        })
        .collect();
    // The present files are hashed in parallel (collect keeps the list order).
    loaded.artifacts = entries
        .into_par_iter()
        .zip(states)
        .map(|((path, sha256, bytes), state)| {
            let state = state.unwrap_or_else(|| {
                if bytes > dir_limits.max_artifact_bytes {
                    return FileState::OverLimit {
                        limit: dir_limits.max_artifact_bytes,
                    };
                }
                match dir::hash_file(&root.join(&path), bytes) {
                    Ok((bytes, sha256)) => FileState::Read { bytes, sha256 },
                    Err(e) => FileState::Unreadable(e.to_string()),
                }
            });
            Listed {
                path,
                sha256,
                bytes,
                state,
            }
        })
        .collect();
    loaded.stored = loaded
        .artifacts
        .par_iter()
        .filter(|a| {
            crate::judge::profile::reads(&a.path)
                && matches!(&a.state, FileState::Read { bytes, sha256 } if *bytes == a.bytes && *sha256 == a.sha256)
        })
        .map(|a| {
            // Read again and bound to the listed digest: the document judged is
            // the one whose bytes were hashed.
            let doc = match read_json(&root.join(&a.path), limits) {
                Ok((value, bytes)) if json::sha256_hex(&bytes) == a.sha256 => Ok(value),
                Ok(_) => Err("its bytes changed while the directory was read".to_owned()),
                Err(e) => Err(e.to_string()),
            };
            (a.path.clone(), doc)
        })
        .collect();
    let mut tree = BTreeMap::new();
    loaded.walk_complete = dir::walk(root, "", &mut tree, 0)?;
    let listed: Vec<&str> = loaded.artifacts.iter().map(|a| a.path.as_str()).collect();
    loaded.unlisted = dir::unlisted(&tree, &listed, &[EVALUATION_FILE, RUN_FILE])
        .into_iter()
        .map(|(path, kind)| (path.to_owned(), kind))
        .collect();
    Ok(loaded)
}
