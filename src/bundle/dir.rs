//! The bundle-directory form: artifacts as real files, checked against the
//! integrity manifest by streaming SHA-256, without following any symlink.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io::Read;
use std::path::Path;

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

/// One entry on disk, by relative path with `/` separators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnDisk {
    File,
    Dir,
    /// Symlinks, sockets, devices, names that are not UTF-8: never followed.
    Other,
}

fn walk(
    root: &Path,
    rel: &str,
    tree: &mut BTreeMap<String, OnDisk>,
    depth: usize,
) -> Result<(), LoadError> {
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let io = |source| LoadError::Io {
        path: dir.clone(),
        source,
    };
    let entries: Vec<fs::DirEntry> = fs::read_dir(&dir)
        .map_err(io)?
        .collect::<Result<_, _>>()
        .map_err(io)?;
    for entry in entries {
        let name = entry.file_name();
        let name = match name.to_str() {
            Some(n) => n.to_string(),
            None => format!("{} (name is not UTF-8)", name.to_string_lossy()),
        };
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let ft = entry.file_type().map_err(io)?;
        if ft.is_dir() && !ft.is_symlink() {
            tree.insert(child.clone(), OnDisk::Dir);
            if depth < 64 {
                walk(root, &child, tree, depth + 1)?;
            }
        } else if ft.is_file() {
            tree.insert(child, OnDisk::File);
        } else {
            tree.insert(child, OnDisk::Other);
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
    for segment in path.split('/') {
        match segment {
            "" => return Some("has an empty segment"),
            "." => return Some("has a '.' segment"),
            ".." => return Some("has a '..' segment"),
            _ => {}
        }
    }
    if path.chars().count() > 256 {
        return Some("is longer than 256 characters");
    }
    if !path
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b'-'))
    {
        return Some("contains a character outside A-Z a-z 0-9 . _ / -");
    }
    if !path.as_bytes()[0].is_ascii_alphanumeric() {
        return Some("does not start with a letter or digit");
    }
    if path == MANIFEST_FILE {
        return Some("is reserved for the manifest itself");
    }
    None
}

/// Whether a media type names a JSON artifact (`application/json` or `*+json`).
pub fn is_json_media_type(media_type: &str) -> bool {
    let base = media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    base == "application/json" || base.ends_with("+json")
}

/// Stream a file through SHA-256, stopping once more than `limit` bytes were read.
/// Returns (bytes read, hex digest).
fn hash_file(path: &Path, limit: u64) -> Result<(u64, String), std::io::Error> {
    let before = fs::symlink_metadata(path)?;
    let file = fs::File::open(path)?;
    let after = file.metadata()?;
    if check_same_file(&before, &after, path).is_err() {
        return Err(std::io::Error::other("file was replaced while being read"));
    }
    let mut reader = file.take(limit.saturating_add(1));
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

/// Look a listed path up component by component with `lstat`, never following a symlink.
fn presence(root: &Path, path: &str) -> Result<(), (&'static str, String)> {
    let parts: Vec<&str> = path.split('/').collect();
    let mut current = root.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        current.push(part);
        let last = i + 1 == parts.len();
        match fs::symlink_metadata(&current) {
            Err(_) => {
                return Err((
                    c::ARTIFACT_MISSING,
                    format!("{path} is listed in the manifest but is not in the bundle"),
                ));
            }
            Ok(m) if m.file_type().is_symlink() => {
                return Err((
                    c::ARTIFACT_PATH_INVALID,
                    format!(
                        "{path}: {} is a symbolic link; mcpres never follows symlinks in a bundle",
                        parts[..=i].join("/")
                    ),
                ));
            }
            Ok(m) if last && !m.is_file() => {
                return Err((
                    c::ARTIFACT_PATH_INVALID,
                    format!("{path} is not a regular file"),
                ));
            }
            Ok(m) if !last && !m.is_dir() => {
                return Err((
                    c::ARTIFACT_PATH_INVALID,
                    format!("{path}: {} is not a directory", parts[..=i].join("/")),
                ));
            }
            Ok(_) => {}
        }
    }
    Ok(())
}

fn read_optional_json(
    root: &Path,
    name: &str,
    limits: &Limits,
    findings: &mut Vec<Finding>,
) -> Option<Value> {
    let path = root.join(name);
    match fs::symlink_metadata(&path) {
        Err(_) => {
            if !findings
                .iter()
                .any(|f| f.code == c::ARTIFACT_MISSING && f.message.starts_with(name))
            {
                findings.push(Finding::new(
                    c::ARTIFACT_MISSING,
                    "/integrity/artifacts",
                    format!("{name} is not in the bundle directory"),
                ));
            }
            None
        }
        Ok(_) => match read_json(&path, limits) {
            Ok((v, _)) => Some(v),
            Err(e) => {
                findings.push(Finding::new(
                    c::ARTIFACT_NON_CANONICAL,
                    "/integrity/artifacts",
                    format!("{name} cannot be read strictly: {e}"),
                ));
                None
            }
        },
    }
}

/// Load a bundle directory. Returns the reassembled bundle (when the evidence and
/// statement documents could be read) and the directory findings, in the order of
/// `spec/bundle-layout.md`.
pub fn load_dir(root: &Path, limits: &Limits) -> Result<(Option<Value>, Vec<Finding>), LoadError> {
    let manifest_path = root.join(MANIFEST_FILE);
    if fs::symlink_metadata(&manifest_path).is_err() {
        return Err(LoadError::NotABundleDir {
            path: root.to_path_buf(),
            reason: format!("it has no {MANIFEST_FILE}"),
        });
    }
    let (integrity, manifest_bytes) = read_json(&manifest_path, limits)?;

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
    let pointer = |e: &Entry| format!("/integrity/artifacts/{}/path", e.index);
    let mut findings = Vec::new();

    // 1. Path rules.
    let mut good: Vec<&Entry> = Vec::new();
    for e in &entries {
        match path_problem(&e.path) {
            Some(problem) => findings.push(Finding::new(
                c::ARTIFACT_PATH_INVALID,
                pointer(e),
                format!("manifest path {:?} {problem}", e.path),
            )),
            None => good.push(e),
        }
    }
    // 2. Collisions (ASCII case folding; exact duplicates and the manifest's own name included).
    let mut folded: HashMap<String, &str> = HashMap::new();
    folded.insert(MANIFEST_FILE.to_string(), MANIFEST_FILE);
    let mut distinct: Vec<&Entry> = Vec::new();
    for e in good {
        let key = e.path.to_ascii_lowercase();
        if let Some(other) = folded.get(&key) {
            findings.push(Finding::new(
                c::ARTIFACT_PATH_COLLISION,
                pointer(e),
                if *other == e.path {
                    format!("manifest path {:?} is listed more than once", e.path)
                } else {
                    format!(
                        "manifest paths {other:?} and {:?} differ only by case",
                        e.path
                    )
                },
            ));
            continue;
        }
        folded.insert(key, &e.path);
        distinct.push(e);
    }
    // 3. Presence, component by component, never following a symlink.
    let mut present: Vec<&Entry> = Vec::new();
    for e in distinct {
        match presence(root, &e.path) {
            Ok(()) => present.push(e),
            Err((code, message)) => findings.push(Finding::new(code, pointer(e), message)),
        }
    }
    // 4. Bytes: stream every present file through SHA-256, in parallel.
    let mut hashed: Vec<(usize, Option<Finding>, bool)> = present
        .par_iter()
        .map(|e| {
            let p = format!("/integrity/artifacts/{}", e.index);
            let limit = e.bytes.unwrap_or(0);
            match hash_file(&root.join(&e.path), limit) {
                Err(err) => (
                    e.index,
                    Some(Finding::new(
                        c::ARTIFACT_PATH_INVALID,
                        p,
                        format!("{} cannot be read safely: {err}", e.path),
                    )),
                    false,
                ),
                Ok((len, digest)) if Some(len) != e.bytes || digest != e.sha256 => {
                    let shown = if len > limit {
                        format!("more than {limit}")
                    } else {
                        len.to_string()
                    };
                    (
                        e.index,
                        Some(Finding::new(
                            c::ARTIFACT_DIGEST_MISMATCH,
                            p,
                            format!(
                                "{}: the manifest says {} bytes with sha256 {}; the file has {shown} bytes{}",
                                e.path,
                                e.bytes.map_or_else(|| "?".to_string(), |b| b.to_string()),
                                e.sha256,
                                if len > limit { String::new() } else { format!(" with sha256 {digest}") }
                            ),
                        )),
                        false,
                    )
                }
                Ok(_) => (e.index, None, true),
            }
        })
        .collect();
    hashed.sort_by_key(|(i, ..)| *i);
    let matched: HashSet<usize> = hashed.iter().filter(|h| h.2).map(|h| h.0).collect();
    findings.extend(hashed.into_iter().filter_map(|(_, f, _)| f));

    // 5. Canonical form: the manifest first, then every matching JSON artifact.
    if canonical::to_vec(&integrity).ok().as_deref() != Some(manifest_bytes.as_slice()) {
        findings.push(Finding::new(
            c::ARTIFACT_NON_CANONICAL,
            "/integrity",
            format!("{MANIFEST_FILE} is not stored in canonical form"),
        ));
    }
    let json_entries: Vec<&&Entry> = present
        .iter()
        .filter(|e| matched.contains(&e.index) && is_json_media_type(&e.media_type))
        .collect();
    let mut canon: Vec<(usize, Option<Finding>)> = json_entries
        .par_iter()
        .map(|e| {
            let p = format!("/integrity/artifacts/{}", e.index);
            let finding = match read_json(&root.join(&e.path), limits) {
                Ok((value, bytes)) => (canonical::to_vec(&value).ok().as_deref()
                    != Some(bytes.as_slice()))
                .then(|| {
                    Finding::new(
                        c::ARTIFACT_NON_CANONICAL,
                        p,
                        format!(
                            "{} is a JSON artifact but is not stored in {} canonical form",
                            e.path,
                            canonical::ALGORITHM
                        ),
                    )
                }),
                Err(err) => Some(Finding::new(
                    c::ARTIFACT_NON_CANONICAL,
                    p,
                    format!(
                        "{} is a JSON artifact but cannot be read strictly: {err}",
                        e.path
                    ),
                )),
            };
            (e.index, finding)
        })
        .collect();
    canon.sort_by_key(|(i, _)| *i);
    findings.extend(canon.into_iter().filter_map(|(_, f)| f));

    // 6. Unlisted entries: anything on disk that is neither listed nor on the way to a listed path.
    let mut tree = BTreeMap::new();
    walk(root, "", &mut tree, 0)?;
    let mut needed: HashSet<String> = HashSet::new();
    needed.insert(MANIFEST_FILE.to_string());
    for e in &entries {
        needed.insert(e.path.clone());
        let mut prefix = e.path.as_str();
        while let Some((parent, _)) = prefix.rsplit_once('/') {
            needed.insert(parent.to_string());
            prefix = parent;
        }
    }
    for (path, kind) in &tree {
        if needed.contains(path) {
            continue;
        }
        let what = match kind {
            OnDisk::File => "file",
            OnDisk::Dir => "directory",
            OnDisk::Other => "entry (symlink or special file)",
        };
        findings.push(Finding::new(
            c::ARTIFACT_UNLISTED,
            "/integrity/artifacts",
            format!(
                "{path}: {what} in the bundle directory that the integrity manifest does not list"
            ),
        ));
    }

    // Reassemble the single-file form from the stored JSON documents.
    let evidence = read_optional_json(root, EVIDENCE_PATH, limits, &mut findings);
    let statement = read_optional_json(root, STATEMENT_PATH, limits, &mut findings);
    let doc = match (evidence, statement) {
        (Some(evidence), Some(statement)) => {
            let mut doc = Map::new();
            doc.insert("schemaVersion".into(), Value::from(BUNDLE_SCHEMA_VERSION));
            doc.insert("evidence".into(), evidence);
            doc.insert("statement".into(), statement);
            doc.insert("integrity".into(), integrity);
            Some(Value::Object(doc))
        }
        _ => None,
    };
    Ok((doc, findings))
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
