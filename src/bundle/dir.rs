//! The bundle-directory form: artifacts as real files, checked against the
//! integrity manifest by streaming SHA-256, without following any symlink.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::{LoadError, check_same_file, read_json};
use crate::json::{self, Limits, canonical};
use crate::validate::Finding;
use crate::validate::codes as c;
use crate::validate::core::{EVIDENCE_PATH, STATEMENT_PATH};

/// The manifest file of a bundle directory (not itself listed in the manifest).
pub const MANIFEST_FILE: &str = "integrity-manifest.json";
/// `schemaVersion` of the single-file form the directory reassembles into.
pub const BUNDLE_SCHEMA_VERSION: &str = "mcp-res.conformance-bundle/0.2.0";

/// What the walk found on disk, by relative path with `/` separators.
#[derive(Debug, Default)]
struct Tree {
    files: BTreeMap<String, u64>,
    /// Symlinks and special files: never followed, always reported.
    rejected: Vec<(String, &'static str)>,
}

fn walk(root: &Path, rel: &str, tree: &mut Tree, depth: usize) -> Result<(), LoadError> {
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let io = |source| LoadError::Io {
        path: dir.clone(),
        source,
    };
    let mut entries: Vec<fs::DirEntry> = fs::read_dir(&dir)
        .map_err(io)?
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            tree.rejected
                .push((format!("{rel}/{}", name.to_string_lossy()), "name is not UTF-8"));
            continue;
        };
        let child = if rel.is_empty() {
            name.to_string()
        } else {
            format!("{rel}/{name}")
        };
        let ft = entry.file_type().map_err(io)?;
        if ft.is_symlink() {
            tree.rejected.push((child, "is a symbolic link"));
        } else if ft.is_dir() {
            if depth >= 64 {
                tree.rejected.push((child, "directory nesting is deeper than 64"));
            } else {
                walk(root, &child, tree, depth + 1)?;
            }
        } else if ft.is_file() {
            let len = entry.metadata().map_err(io)?.len();
            tree.files.insert(child, len);
        } else {
            tree.rejected.push((child, "is not a regular file"));
        }
    }
    Ok(())
}

/// Why a manifest path cannot name a file inside the bundle, if it cannot.
pub fn path_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("is empty");
    }
    if path.contains('\0') {
        return Some("contains a NUL byte");
    }
    if path.contains('\\') {
        return Some("contains a backslash");
    }
    if path.starts_with('/') {
        return Some("is absolute");
    }
    if path.len() >= 2 && path.as_bytes()[1] == b':' {
        return Some("has a drive prefix");
    }
    for segment in path.split('/') {
        match segment {
            "" => return Some("has an empty segment"),
            "." => return Some("has a '.' segment"),
            ".." => return Some("has a '..' segment"),
            _ => {}
        }
    }
    None
}

fn is_json_media_type(media_type: &str) -> bool {
    let base = media_type.split(';').next().unwrap_or("").trim();
    base == "application/json" || base.ends_with("+json")
}

/// Stream a file through SHA-256; returns (bytes read, hex digest).
fn hash_file(path: &Path, expected_len: u64) -> Result<(u64, String), std::io::Error> {
    let before = fs::symlink_metadata(path)?;
    let file = fs::File::open(path)?;
    let after = file.metadata()?;
    if check_same_file(&before, &after, path).is_err() {
        return Err(std::io::Error::other("file was replaced while being read"));
    }
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total: u64 = 0;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        hasher.update(&buf[..n]);
        // Stop early on a file far larger than declared; no need to hash it all.
        if total > expected_len.saturating_add(1 << 20) && total > (1 << 24) {
            break;
        }
    }
    Ok((total, hex::encode(hasher.finalize())))
}

struct Entry {
    index: usize,
    path: String,
    media_type: String,
    bytes: Option<u64>,
    sha256: String,
}

/// Load a bundle directory: returns the reassembled bundle and the storage findings.
pub fn load_dir(root: &Path, limits: &Limits) -> Result<(Value, Vec<Finding>), LoadError> {
    let manifest_path = root.join(MANIFEST_FILE);
    if fs::symlink_metadata(&manifest_path).is_err() {
        return Err(LoadError::NotABundleDir {
            path: root.to_path_buf(),
            reason: format!("it has no {MANIFEST_FILE}"),
        });
    }
    let (integrity, manifest_bytes) = read_json(&manifest_path, limits)?;
    let mut tree = Tree::default();
    walk(root, "", &mut tree, 0)?;

    let mut findings = Vec::new();
    if canonical::to_vec(&integrity).ok().as_deref() != Some(manifest_bytes.as_slice()) {
        findings.push(Finding::new(
            c::ARTIFACT_NON_CANONICAL,
            "/integrity",
            format!("{MANIFEST_FILE} is not stored in canonical form"),
        ));
    }
    for (path, why) in &tree.rejected {
        findings.push(Finding::new(
            c::ARTIFACT_PATH_INVALID,
            "/integrity/artifacts",
            format!("{path} {why}; bundle directories hold only regular files and directories"),
        ));
    }

    // Manifest entries, as far as they have the expected shape (the schema judges the rest).
    let entries: Vec<Entry> = integrity
        .get("artifacts")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .enumerate()
                .filter_map(|(index, a)| {
                    Some(Entry {
                        index,
                        path: a.get("path")?.as_str()?.to_string(),
                        media_type: a
                            .get("mediaType")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        bytes: a.get("bytes").and_then(Value::as_u64),
                        sha256: a
                            .get("sha256")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();

    let mut folded: HashMap<String, &str> = HashMap::new();
    let mut to_check: Vec<&Entry> = Vec::new();
    for e in &entries {
        let pointer = format!("/integrity/artifacts/{}/path", e.index);
        if let Some(problem) = path_problem(&e.path) {
            findings.push(Finding::new(
                c::ARTIFACT_PATH_INVALID,
                pointer,
                format!("manifest path {:?} {problem}", e.path),
            ));
            continue;
        }
        let key = e.path.to_ascii_lowercase();
        if let Some(other) = folded.get(&key) {
            if *other != e.path {
                findings.push(Finding::new(
                    c::ARTIFACT_PATH_COLLISION,
                    pointer,
                    format!(
                        "manifest paths {:?} and {:?} differ only by case",
                        other, e.path
                    ),
                ));
            }
            continue;
        }
        folded.insert(key, &e.path);
        if e.path == MANIFEST_FILE {
            findings.push(Finding::new(
                c::ARTIFACT_PATH_INVALID,
                pointer,
                format!("{MANIFEST_FILE} cannot list itself"),
            ));
            continue;
        }
        if !tree.files.contains_key(&e.path) {
            findings.push(Finding::new(
                c::ARTIFACT_MISSING,
                pointer,
                format!("{} is listed in the manifest but is not a file in the bundle", e.path),
            ));
            continue;
        }
        to_check.push(e);
    }
    for path in tree.files.keys() {
        let listed = folded
            .get(&path.to_ascii_lowercase())
            .is_some_and(|p| p == path);
        if path != MANIFEST_FILE && !listed {
            findings.push(Finding::new(
                c::ARTIFACT_UNLISTED,
                "/integrity/artifacts",
                format!("{path} is in the bundle directory but not in the integrity manifest"),
            ));
        }
    }

    // Hash every listed file in parallel, streaming; JSON artifacts must also be canonical.
    let mut checked: Vec<(usize, Vec<Finding>)> = to_check
        .par_iter()
        .map(|e| (e.index, check_artifact(root, e, limits)))
        .collect();
    checked.sort_by_key(|(i, _)| *i);
    findings.extend(checked.into_iter().flat_map(|(_, f)| f));

    // Reassemble the single-file form from the stored JSON documents.
    let evidence = read_json(&root.join(EVIDENCE_PATH), limits)?.0;
    let statement = read_json(&root.join(STATEMENT_PATH), limits)?.0;
    let mut doc = Map::new();
    doc.insert("schemaVersion".into(), Value::from(BUNDLE_SCHEMA_VERSION));
    doc.insert("evidence".into(), evidence);
    doc.insert("statement".into(), statement);
    doc.insert("integrity".into(), integrity);
    Ok((Value::Object(doc), findings))
}

fn check_artifact(root: &Path, e: &Entry, limits: &Limits) -> Vec<Finding> {
    let mut out = Vec::new();
    let pointer = format!("/integrity/artifacts/{}", e.index);
    let path: PathBuf = root.join(&e.path);
    let expected_len = e.bytes.unwrap_or(0);
    match hash_file(&path, expected_len) {
        Err(err) => out.push(Finding::new(
            c::ARTIFACT_PATH_INVALID,
            pointer.clone(),
            format!("{} cannot be read safely: {err}", e.path),
        )),
        Ok((len, digest)) => {
            if Some(len) != e.bytes || digest != e.sha256 {
                out.push(Finding::new(
                    c::ARTIFACT_DIGEST_MISMATCH,
                    pointer.clone(),
                    format!(
                        "{}: manifest says {} bytes, sha256 {}; the file has {len}{} bytes, sha256 {digest}",
                        e.path,
                        e.bytes.map_or_else(|| "?".to_string(), |b| b.to_string()),
                        e.sha256,
                        if len > expected_len.saturating_add(1 << 20) { "+" } else { "" }
                    ),
                ));
            }
        }
    }
    if is_json_media_type(&e.media_type) {
        match read_json(&path, limits) {
            Ok((value, bytes)) => {
                if canonical::to_vec(&value).ok().as_deref() != Some(bytes.as_slice()) {
                    out.push(Finding::new(
                        c::ARTIFACT_NON_CANONICAL,
                        pointer,
                        format!(
                            "{} is a JSON artifact but is not stored in {} canonical form",
                            e.path,
                            canonical::ALGORITHM
                        ),
                    ));
                }
            }
            Err(err) => out.push(Finding::new(
                c::ARTIFACT_NON_CANONICAL,
                pointer,
                format!("{} is a JSON artifact but cannot be read strictly: {err}", e.path),
            )),
        }
    }
    out
}

/// Write `bytes` to a new file, refusing to replace anything.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Parse helper used by pack/unpack tests and tools.
pub fn parse_strict(bytes: &[u8]) -> Result<Value, json::ReadError> {
    json::parse_default(bytes)
}
