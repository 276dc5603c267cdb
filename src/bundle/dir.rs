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
use crate::diag::Finding;
use crate::diag::codes as c;
use crate::json::{self, Limits, canonical};
use crate::model::vocab::{EVIDENCE_PATH, STATEMENT_PATH};

/// The manifest file of a bundle directory (not itself listed in the manifest).
pub const MANIFEST_FILE: &str = "integrity-manifest.json";
/// `schemaVersion` of the single-file form the directory reassembles into.
pub const BUNDLE_SCHEMA_VERSION: &str = "mcp-res.conformance-bundle/0.2.0";

/// One entry on disk, by relative path with `/` separators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnDisk {
    File,
    Dir,
    /// Symlinks, sockets, devices, names that are not UTF-8: never followed.
    Other,
}

impl OnDisk {
    /// What the entry is, for messages.
    pub fn what(self) -> &'static str {
        match self {
            OnDisk::File => "file",
            OnDisk::Dir => "directory",
            OnDisk::Other => "entry (symlink or special file)",
        }
    }
}

/// Entries examined when looking for files the manifest does not list; a
/// directory holding more is reported once instead of entry by entry.
pub const MAX_DIR_ENTRIES: usize = 65_536;
/// Directory levels descended when looking for unlisted files.
pub const MAX_DIR_DEPTH: usize = 64;
/// The schema's `maxItems` for `integrity.artifacts`: a manifest listing more is
/// refused before any file is touched.
pub const MAX_MANIFEST_ARTIFACTS: usize = 256;
/// Default for [`DirLimits::max_artifact_bytes`] (4 GiB).
pub const DEFAULT_MAX_ARTIFACT_BYTES: u64 = 4 << 30;

/// Limits on the directory form, beyond the per-document JSON [`Limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirLimits {
    /// The largest manifest `bytes` value mcpres will hash; a larger declared
    /// artifact is refused unread (`MCP_RES_INPUT_INVALID`, exit 2).
    pub max_artifact_bytes: u64,
}

impl Default for DirLimits {
    fn default() -> Self {
        DirLimits {
            max_artifact_bytes: DEFAULT_MAX_ARTIFACT_BYTES,
        }
    }
}

/// Walk the tree below `root` into `tree`, at most [`MAX_DIR_ENTRIES`] entries;
/// returns `false` when the budget ran out.
pub(super) fn walk(
    root: &Path,
    rel: &str,
    tree: &mut BTreeMap<String, OnDisk>,
    depth: usize,
) -> Result<bool, LoadError> {
    let dir = if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    };
    let io = |source| LoadError::Io {
        path: dir.clone(),
        source,
    };
    for entry in fs::read_dir(&dir).map_err(io)? {
        if tree.len() >= MAX_DIR_ENTRIES {
            return Ok(false);
        }
        let entry = entry.map_err(io)?;
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
            if depth < MAX_DIR_DEPTH && !walk(root, &child, tree, depth + 1)? {
                return Ok(false);
            }
        } else if ft.is_file() {
            tree.insert(child, OnDisk::File);
        } else {
            tree.insert(child, OnDisk::Other);
        }
    }
    Ok(true)
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

/// Open a listed artifact for reading: never through a symlink, never blocking
/// (a FIFO swapped in after the `lstat` cannot stall the open), and only if it
/// is still the regular file that was `lstat`ed.
fn open_artifact(path: &Path) -> Result<(fs::File, fs::Metadata), std::io::Error> {
    let before = fs::symlink_metadata(path)?;
    let file = super::open_no_follow(path)?;
    let after = file.metadata()?;
    if check_same_file(&before, &after, path).is_err() {
        return Err(std::io::Error::other(
            "it was replaced, or is not a regular file, while being read",
        ));
    }
    Ok((file, after))
}

/// Read buffer for streaming artifacts through SHA-256 (one per worker thread).
const HASH_BUFFER: usize = 1 << 20;

/// Hash a listed file without following a symlink, reading at most `limit`
/// plus one bytes. Returns (bytes read, hex digest): more than `limit` bytes read
/// means the file is longer than `limit`.
pub(super) fn hash_file(path: &Path, limit: u64) -> Result<(u64, String), std::io::Error> {
    let (file, _) = open_artifact(path)?;
    hash_stream(file, limit)
}

/// Stream a reader through SHA-256, stopping once more than `limit` bytes were
/// read. Returns (bytes read, hex digest).
fn hash_stream(file: fs::File, limit: u64) -> Result<(u64, String), std::io::Error> {
    let mut reader = file.take(limit.saturating_add(1));
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; HASH_BUFFER];
    let mut total: u64 = 0;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
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

/// What checking one present artifact's bytes found.
#[derive(Default)]
struct ArtifactCheck {
    /// A byte-level problem (digest or length mismatch, unreadable, over a limit).
    bytes_finding: Option<Finding>,
    /// For a matching JSON artifact: not canonical, or not strictly readable.
    canonical_finding: Option<Finding>,
    /// The parsed document, for a matching JSON artifact that is the evidence
    /// or the statement (reused when reassembling the bundle).
    value: Option<Value>,
}

/// Check one present artifact: length and SHA-256 against the manifest, reading
/// at most the declared length plus one byte; a matching JSON artifact is parsed
/// from the same bytes (read once) and checked for canonical form.
fn check_artifact(
    root: &Path,
    e: &Entry,
    limits: &Limits,
    dir_limits: &DirLimits,
) -> ArtifactCheck {
    let p = format!("/integrity/artifacts/{}", e.index);
    let declared = e.bytes.unwrap_or(0);
    let finding = |code, message| ArtifactCheck {
        bytes_finding: Some(Finding::new(code, p.clone(), message)),
        ..ArtifactCheck::default()
    };
    if declared > dir_limits.max_artifact_bytes {
        return finding(
            c::INPUT_INVALID,
            format!(
                "{}: the manifest declares {declared} bytes, over the {}-byte artifact limit (--max-artifact-bytes); the file was not read",
                e.path, dir_limits.max_artifact_bytes
            ),
        );
    }
    let unreadable = |err: std::io::Error| {
        finding(
            c::ARTIFACT_PATH_INVALID,
            format!("{} cannot be read safely: {err}", e.path),
        )
    };
    let (file, meta) = match open_artifact(&root.join(&e.path)) {
        Ok(f) => f,
        Err(err) => return unreadable(err),
    };
    let mismatch = |shown: String, digest: Option<&str>| {
        finding(
            c::ARTIFACT_DIGEST_MISMATCH,
            format!(
                "{}: the manifest says {} bytes with sha256 {}; the file has {shown} bytes{}",
                e.path,
                e.bytes.map_or_else(|| "?".to_string(), |b| b.to_string()),
                e.sha256,
                digest.map_or_else(String::new, |d| format!(" with sha256 {d}"))
            ),
        )
    };
    // Longer than declared: known without reading a byte.
    if meta.len() > declared {
        return mismatch(format!("more than {declared}"), None);
    }
    let json = is_json_media_type(&e.media_type) && declared <= limits.max_bytes as u64;
    if !json {
        return match hash_stream(file, declared) {
            Err(err) => unreadable(err),
            Ok((len, _)) if len > declared => mismatch(format!("more than {declared}"), None),
            Ok((len, digest)) if Some(len) != e.bytes || digest != e.sha256 => {
                mismatch(len.to_string(), Some(&digest))
            }
            Ok(_) if is_json_media_type(&e.media_type) => ArtifactCheck {
                canonical_finding: Some(Finding::new(
                    c::ARTIFACT_NON_CANONICAL,
                    p.clone(),
                    format!(
                        "{} is a JSON artifact but cannot be read strictly: {declared} bytes is over the {}-byte document limit",
                        e.path, limits.max_bytes
                    ),
                )),
                ..ArtifactCheck::default()
            },
            Ok(_) => ArtifactCheck::default(),
        };
    }
    // A JSON artifact: read it once (at most the declared length + 1, and the
    // declared length is within the document limit), hash and parse the bytes.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    if let Err(err) = file.take(declared + 1).read_to_end(&mut bytes) {
        return unreadable(err);
    }
    let len = bytes.len() as u64;
    if len > declared {
        return mismatch(format!("more than {declared}"), None);
    }
    let digest = json::sha256_hex(&bytes);
    if Some(len) != e.bytes || digest != e.sha256 {
        return mismatch(len.to_string(), Some(&digest));
    }
    let canonical_problem =
        |message: String| Some(Finding::new(c::ARTIFACT_NON_CANONICAL, p.clone(), message));
    match json::parse(&bytes, limits) {
        Ok(value) => {
            let canonical_finding =
                if canonical::to_vec(&value).ok().as_deref() != Some(bytes.as_slice()) {
                    canonical_problem(format!(
                        "{} is a JSON artifact but is not stored in {} canonical form",
                        e.path,
                        canonical::ALGORITHM
                    ))
                } else {
                    None
                };
            let keep = e.path == EVIDENCE_PATH || e.path == STATEMENT_PATH;
            ArtifactCheck {
                bytes_finding: None,
                canonical_finding,
                value: keep.then_some(value),
            }
        }
        Err(source) => {
            let err = LoadError::Json {
                path: root.join(&e.path),
                source,
                bytes: Vec::new(),
            };
            ArtifactCheck {
                canonical_finding: canonical_problem(format!(
                    "{} is a JSON artifact but cannot be read strictly: {err}",
                    e.path
                )),
                ..ArtifactCheck::default()
            }
        }
    }
}

/// Why a listed path does not lead to a regular file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Absence {
    /// Nothing is there (or at a directory on the way).
    Missing,
    /// `at`, the path itself or a directory on the way, is a symbolic link.
    Symlink { at: String },
    /// The path names something other than a regular file.
    NotRegular,
    /// `at`, on the way to the path, is not a directory.
    NotDirectory { at: String },
}

impl Absence {
    /// The directory-form code and message for `path`; `missing` is the message
    /// for nothing being there, `container` names the directory kind ("a bundle").
    pub fn finding(
        &self,
        path: &str,
        missing: String,
        container: &str,
    ) -> (crate::diag::Code, String) {
        match self {
            Absence::Missing => (c::ARTIFACT_MISSING, missing),
            Absence::Symlink { at } => (
                c::ARTIFACT_PATH_INVALID,
                format!(
                    "{path}: {at} is a symbolic link; mcpres never follows symlinks in {container}"
                ),
            ),
            Absence::NotRegular => (
                c::ARTIFACT_PATH_INVALID,
                format!("{path} is not a regular file"),
            ),
            Absence::NotDirectory { at } => (
                c::ARTIFACT_PATH_INVALID,
                format!("{path}: {at} is not a directory"),
            ),
        }
    }
}

/// Look a listed path up component by component with `lstat`, never following a symlink.
pub(super) fn locate(root: &Path, path: &str) -> Result<(), Absence> {
    let parts: Vec<&str> = path.split('/').collect();
    let mut current = root.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        current.push(part);
        let last = i + 1 == parts.len();
        let at = || parts[..=i].join("/");
        match fs::symlink_metadata(&current) {
            Err(_) => return Err(Absence::Missing),
            Ok(m) if m.file_type().is_symlink() => return Err(Absence::Symlink { at: at() }),
            Ok(m) if last && !m.is_file() => return Err(Absence::NotRegular),
            Ok(m) if !last && !m.is_dir() => return Err(Absence::NotDirectory { at: at() }),
            Ok(_) => {}
        }
    }
    Ok(())
}

fn presence(root: &Path, path: &str) -> Result<(), (crate::diag::Code, String)> {
    locate(root, path).map_err(|absence| {
        absence.finding(
            path,
            format!("{path} is listed in the manifest but is not in the bundle"),
            "a bundle",
        )
    })
}

/// Listed paths compared after ASCII case folding: two that fold alike would be
/// one file on a case-insensitive file system.
pub(super) struct FoldedPaths<'a>(HashMap<String, &'a str>);

impl<'a> FoldedPaths<'a> {
    /// Start with names the directory reserves for itself.
    pub(super) fn new(reserved: &[&'a str]) -> Self {
        FoldedPaths(
            reserved
                .iter()
                .map(|r| (r.to_ascii_lowercase(), *r))
                .collect(),
        )
    }

    /// Add `path`; on a collision, the message saying with what (and nothing is added).
    pub(super) fn insert(&mut self, path: &'a str, what: &str) -> Option<String> {
        let key = path.to_ascii_lowercase();
        match self.0.get(&key) {
            Some(other) if *other == path => {
                Some(format!("{what} path {path:?} is listed more than once"))
            }
            Some(other) => Some(format!(
                "{what} paths {other:?} and {path:?} differ only by case"
            )),
            None => {
                self.0.insert(key, path);
                None
            }
        }
    }
}

/// The entries of `tree` that are neither one of `listed` (or `fixed`) nor a
/// directory on the way to one.
pub(super) fn unlisted<'t>(
    tree: &'t BTreeMap<String, OnDisk>,
    listed: &[&str],
    fixed: &[&str],
) -> Vec<(&'t str, OnDisk)> {
    let mut needed: HashSet<&str> = fixed.iter().copied().collect();
    for path in listed {
        needed.insert(path);
        let mut prefix = *path;
        while let Some((parent, _)) = prefix.rsplit_once('/') {
            needed.insert(parent);
            prefix = parent;
        }
    }
    tree.iter()
        .filter(|(path, _)| !needed.contains(path.as_str()))
        .map(|(path, kind)| (path.as_str(), *kind))
        .collect()
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
    load_dir_with(root, limits, &DirLimits::default())
}

/// [`load_dir`] with explicit directory limits.
pub fn load_dir_with(
    root: &Path,
    limits: &Limits,
    dir_limits: &DirLimits,
) -> Result<(Option<Value>, Vec<Finding>), LoadError> {
    let manifest_path = root.join(MANIFEST_FILE);
    if fs::symlink_metadata(&manifest_path).is_err() {
        return Err(LoadError::NotABundleDir {
            path: root.to_path_buf(),
            reason: format!("it has no {MANIFEST_FILE}"),
        });
    }
    let (integrity, manifest_bytes) = read_json(&manifest_path, limits)?;

    // A manifest listing more artifacts than the schema admits is refused before
    // any file is looked at: its length alone must not drive the work done.
    if let Some(n) = integrity
        .get("artifacts")
        .and_then(Value::as_array)
        .map(Vec::len)
        .filter(|n| *n > MAX_MANIFEST_ARTIFACTS)
    {
        return Ok((
            None,
            vec![Finding::new(
                c::SCHEMA_INVALID,
                "/integrity/artifacts",
                format!(
                    "{MANIFEST_FILE} lists {n} artifacts; the schema allows at most {MAX_MANIFEST_ARTIFACTS}, so no file of the directory was checked"
                ),
            )],
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
    let mut folded = FoldedPaths::new(&[MANIFEST_FILE]);
    let mut distinct: Vec<&Entry> = Vec::new();
    for e in good {
        if let Some(message) = folded.insert(&e.path, "manifest") {
            findings.push(Finding::new(
                c::ARTIFACT_PATH_COLLISION,
                pointer(e),
                message,
            ));
            continue;
        }
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
    // 4. Bytes: stream every present file through SHA-256, in parallel; JSON
    //    artifacts are read once and parsed from the same bytes (step 5).
    //    (Rayon's collect keeps the manifest order, so findings come out in it.)
    let checked: Vec<ArtifactCheck> = present
        .par_iter()
        .map(|e| check_artifact(root, e, limits, dir_limits))
        .collect();
    let mut reused: HashMap<&str, Value> = HashMap::new();
    let mut canonical_findings = Vec::new();
    for (e, check) in present.iter().zip(checked) {
        findings.extend(check.bytes_finding);
        canonical_findings.extend(check.canonical_finding);
        if let Some(v) = check.value {
            reused.insert(e.path.as_str(), v);
        }
    }

    // 5. Canonical form: the manifest first, then every matching JSON artifact.
    if canonical::to_vec(&integrity).ok().as_deref() != Some(manifest_bytes.as_slice()) {
        findings.push(Finding::new(
            c::ARTIFACT_NON_CANONICAL,
            "/integrity",
            format!("{MANIFEST_FILE} is not stored in canonical form"),
        ));
    }
    findings.extend(canonical_findings);

    // 6. Unlisted entries: anything on disk that is neither listed nor on the way to a listed path.
    let mut tree = BTreeMap::new();
    let complete = walk(root, "", &mut tree, 0)?;
    let listed: Vec<&str> = entries.iter().map(|e| e.path.as_str()).collect();
    for (path, kind) in unlisted(&tree, &listed, &[MANIFEST_FILE]) {
        findings.push(Finding::new(
            c::ARTIFACT_UNLISTED,
            "/integrity/artifacts",
            format!(
                "{path}: {} in the bundle directory that the integrity manifest does not list",
                kind.what()
            ),
        ));
    }

    if !complete {
        findings.push(Finding::new(
            c::ARTIFACT_UNLISTED,
            "/integrity/artifacts",
            format!(
                "the bundle directory holds more than {MAX_DIR_ENTRIES} entries; the rest were not examined"
            ),
        ));
    }

    // Reassemble the single-file form from the stored JSON documents (already
    // parsed in step 4 when they matched the manifest).
    let evidence = match reused.remove(EVIDENCE_PATH) {
        Some(v) => Some(v),
        None => read_optional_json(root, EVIDENCE_PATH, limits, &mut findings),
    };
    let statement = match reused.remove(STATEMENT_PATH) {
        Some(v) => Some(v),
        None => read_optional_json(root, STATEMENT_PATH, limits, &mut findings),
    };
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

/// Write `bytes` to a new file, refusing to replace anything: created inside
/// its opened parent directory, exclusively and without following a symlink
/// ([`crate::fsio::write_new_file`]).
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::fsio::write_new_file(path, bytes)
}

/// Parse helper used by pack/unpack tests and tools.
pub fn parse_strict(bytes: &[u8]) -> Result<Value, json::ReadError> {
    json::parse_default(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stream stops one byte past the limit, however long the file is
    /// (a sparse terabyte here: reading it through would take many minutes).
    #[test]
    fn hash_stream_reads_at_most_limit_plus_one() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sparse.bin");
        let file = fs::File::create(&path).unwrap();
        if file.set_len(1 << 40).is_err() {
            eprintln!("SKIPPED: no 1 TiB sparse files on this file system");
            return;
        }
        drop(file);
        let (len, digest) = hash_stream(fs::File::open(&path).unwrap(), 4096).unwrap();
        assert_eq!(len, 4097);
        assert_eq!(digest, json::sha256_hex(&[0u8; 4097]));
    }

    #[test]
    fn open_artifact_refuses_a_directory_and_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(open_artifact(tmp.path()).is_err());
        #[cfg(unix)]
        {
            let target = tmp.path().join("t");
            fs::write(&target, b"x").unwrap();
            let link = tmp.path().join("l");
            std::os::unix::fs::symlink(&target, &link).unwrap();
            assert!(open_artifact(&link).is_err());
            assert!(open_artifact(&target).is_ok());
        }
    }
}
