//! Loading a field matrix directory, as `mcpres field run` writes it:
//! `matrix.json` (mcpres's field evidence matrix, `mcpres.field-matrix/1`) and
//! `legs/<id>/`, one profile evaluation directory per leg that ran. This module
//! only reads: it reports what is on disk (the matrix document or why it could
//! not be read, each entry under `legs/` loaded as a profile evaluation
//! directory, the other entries); the validator (`validate::field_dir`) turns
//! that into findings. See spec/field.md.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::Value;

use super::dir::{DirLimits, OnDisk};
use super::profile_dir::{self, ProfileDir, RUN_FILE};
use super::{read_file, read_json};
use crate::json::{self, Limits};

/// The matrix document of the directory (its presence makes the directory one).
pub const MATRIX_FILE: &str = "matrix.json";
/// The folder holding one evaluation directory per leg that ran.
pub const LEGS_DIR: &str = "legs";
/// The matrix document's `schemaVersion`.
pub const MATRIX_SCHEMA_VERSION: &str = "mcpres.field-matrix/1";
/// Entries of `legs/` looked at; the schema allows no more legs than this.
pub const MAX_LEGS: usize = 256;

/// Whether `path` is a field matrix directory: a real directory holding an
/// entry `matrix.json`. Symlinks are never followed.
pub fn is_field_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
        && fs::symlink_metadata(path.join(MATRIX_FILE)).is_ok()
}

/// One entry of `legs/`.
#[derive(Debug)]
pub enum LegEntry {
    /// A profile evaluation directory, loaded, with the SHA-256 of its
    /// run.json bytes (`None` when run.json could not be read).
    Evaluation {
        dir: Box<ProfileDir>,
        run_file_sha256: Option<String>,
    },
    /// Anything else: not a directory, no evaluation.json, or an
    /// evaluation.json that cannot be read (the reason).
    Unusable(String),
}

/// A loaded field matrix directory.
#[derive(Debug)]
pub struct FieldDir {
    /// matrix.json strictly parsed, or why it could not be.
    pub matrix: Result<Value, String>,
    /// The entries of `legs/` by name.
    pub legs: BTreeMap<String, LegEntry>,
    /// Entries of the directory other than matrix.json and legs/.
    pub unlisted: Vec<(String, OnDisk)>,
    /// `false` when legs/ held more than [`MAX_LEGS`] entries and the rest were not looked at.
    pub walk_complete: bool,
}

fn kind_of(meta: &fs::Metadata) -> OnDisk {
    if meta.file_type().is_symlink() {
        OnDisk::Other
    } else if meta.is_dir() {
        OnDisk::Dir
    } else if meta.is_file() {
        OnDisk::File
    } else {
        OnDisk::Other
    }
}

/// Load a field matrix directory. Nothing here is an error of the input: what
/// cannot be read is recorded for the validator.
pub fn load(root: &Path, limits: &Limits, dir_limits: &DirLimits) -> FieldDir {
    let matrix = read_json(&root.join(MATRIX_FILE), limits)
        .map(|(value, _)| value)
        .map_err(|e| e.to_string());
    let mut unlisted = Vec::new();
    if let Ok(entries) = fs::read_dir(root) {
        // Beside matrix.json and legs/ nothing belongs here: a few names
        // are enough to report.
        let mut names: Vec<(String, OnDisk)> = entries
            .flatten()
            .take(MAX_LEGS)
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let kind = e.metadata().map(|m| kind_of(&m)).unwrap_or(OnDisk::Other);
                (name != MATRIX_FILE && !(name == LEGS_DIR && kind == OnDisk::Dir))
                    .then_some((name, kind))
            })
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        unlisted = names;
    }
    let mut legs = BTreeMap::new();
    let mut walk_complete = true;
    let legs_root = root.join(LEGS_DIR);
    if fs::symlink_metadata(&legs_root).is_ok_and(|m| m.is_dir())
        && let Ok(entries) = fs::read_dir(&legs_root)
    {
        let mut names: Vec<String> = entries
            .flatten()
            .take(MAX_LEGS + 1)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        if names.len() > MAX_LEGS {
            names.truncate(MAX_LEGS);
            walk_complete = false;
        }
        for name in names {
            let path = legs_root.join(&name);
            let entry = if !profile_dir::is_profile_dir(&path) {
                let what = fs::symlink_metadata(&path)
                    .map(|m| kind_of(&m).what())
                    .unwrap_or("entry");
                LegEntry::Unusable(format!(
                    "a {what} that is not a profile evaluation directory"
                ))
            } else {
                match profile_dir::load(&path, limits, dir_limits) {
                    Ok(dir) => LegEntry::Evaluation {
                        run_file_sha256: read_file(&path.join(RUN_FILE), limits)
                            .ok()
                            .map(|b| json::sha256_hex(&b)),
                        dir: Box::new(dir),
                    },
                    Err(e) => LegEntry::Unusable(format!("cannot be read: {e}")),
                }
            };
            legs.insert(name, entry);
        }
    }
    FieldDir {
        matrix,
        legs,
        unlisted,
        walk_complete,
    }
}
