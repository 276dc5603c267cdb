//! What the harness observes on the file system: the files it executes (the
//! subject's identity, hashed when the process is first started and again
//! after the last session), the entries a subject leaves in the private
//! temporary directory it is handed, and a before/after look at the working
//! directory. See spec/harness.md ("Subject identity", "Files the subject
//! wrote").

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Value, json};

use crate::json::canonical;

/// Files up to this size left in a subject's temporary directory are hashed;
/// larger ones are recorded with their length only.
pub const HASH_LIMIT: u64 = 16 * 1024 * 1024;

/// At most this many entries of one temporary directory are recorded.
pub const ENTRY_LIMIT: usize = 1000;

pub use crate::produce::drive::ident::hash_file;

/// One file the harness executes or hands to the subject on its command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutedFile {
    /// `program` (what is executed) or `argument` (an argv entry naming a file).
    pub role: &'static str,
    /// Position in the subject's argv (0: the program).
    pub argv_index: usize,
    /// As given on the command line.
    pub given: String,
    /// The path the harness used (the program: as resolved, symlinks kept).
    pub resolved: PathBuf,
    /// The file that path finally names (symlinks resolved).
    pub canonical: PathBuf,
    pub bytes: u64,
    pub sha256: String,
}

impl ExecutedFile {
    /// The full record, for `raw/subject-artifact.json`.
    pub fn to_json(&self) -> Value {
        json!({
            "role": self.role, "argvIndex": self.argv_index, "given": self.given,
            "resolvedPath": self.resolved.display().to_string(),
            "canonicalPath": self.canonical.display().to_string(),
            "bytes": self.bytes, "sha256": self.sha256,
        })
    }

    /// What the executed digest covers: content and position, no paths (so the
    /// digest does not depend on where the machine keeps the files, and a
    /// redacted path cannot break it).
    fn digest_entry(&self) -> Value {
        json!({"role": self.role, "argvIndex": self.argv_index, "bytes": self.bytes, "sha256": self.sha256})
    }
}

fn observe_one(
    role: &'static str,
    argv_index: usize,
    given: &str,
    resolved: &Path,
) -> std::io::Result<ExecutedFile> {
    let canonical = std::fs::canonicalize(resolved)?;
    let (sha256, bytes) = hash_file(&canonical)?;
    Ok(ExecutedFile {
        role,
        argv_index,
        given: given.to_string(),
        resolved: resolved.to_path_buf(),
        canonical,
        bytes,
        sha256,
    })
}

/// The files of the subject's command line: the program (`given` as typed,
/// `program` as resolved), then every argument that names an existing regular
/// file (relative paths are relative to the harness's working directory,
/// which is the subject's too).
pub fn observe_executed(
    given: &str,
    program: &Path,
    args: &[String],
) -> std::io::Result<Vec<ExecutedFile>> {
    let mut out = vec![observe_one("program", 0, given, program)?];
    for (i, arg) in args.iter().enumerate() {
        let path = Path::new(arg);
        if arg.is_empty() || !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let resolved = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        // A file that cannot be read is still named on the command line: the
        // subject may fail on it, but the harness cannot vouch for it.
        if let Ok(f) = observe_one("argument", i + 1, arg, &resolved) {
            out.push(f);
        }
    }
    Ok(out)
}

/// The subject's observed artifact digest: the canonical digest of the
/// executed files' `{role, argvIndex, bytes, sha256}` in argv order.
pub fn executed_digest(files: &[ExecutedFile]) -> String {
    let list: Vec<Value> = files.iter().map(ExecutedFile::digest_entry).collect();
    canonical::digest(&Value::Array(list)).unwrap_or_default()
}

/// Hash every executed file again: the entries whose bytes changed (or that
/// cannot be read any more) since they were first hashed.
pub fn rehash(files: &[ExecutedFile]) -> Vec<Value> {
    files
        .iter()
        .filter_map(|f| {
            let now = hash_file(&f.canonical);
            match now {
                Ok((sha, len)) if sha == f.sha256 && len == f.bytes => None,
                Ok((sha, len)) => Some(json!({
                    "argvIndex": f.argv_index, "given": f.given,
                    "sha256Before": f.sha256, "sha256After": sha, "bytesBefore": f.bytes, "bytesAfter": len,
                })),
                Err(e) => Some(json!({
                    "argvIndex": f.argv_index, "given": f.given,
                    "sha256Before": f.sha256, "error": e.kind().to_string(),
                })),
            }
        })
        .collect()
}

fn kind_of(t: &std::fs::FileType) -> &'static str {
    if t.is_file() {
        "file"
    } else if t.is_dir() {
        "directory"
    } else if t.is_symlink() {
        "symlink"
    } else {
        "other"
    }
}

/// Every entry below `dir` (recursive, symlinks not followed), sorted by
/// relative path: `path`, `kind`, and for files `bytes` and `sha256` (up to
/// [`HASH_LIMIT`]). At most [`ENTRY_LIMIT`] entries. A missing directory has
/// no entries.
pub fn walk_entries(dir: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            if out.len() >= ENTRY_LIMIT {
                break;
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            let mut v = json!({"path": rel, "kind": kind_of(&kind)});
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let len = entry.metadata().map(|m| m.len()).unwrap_or(0);
                v["bytes"] = json!(len);
                if len <= HASH_LIMIT
                    && let Ok((sha, _)) = hash_file(&path)
                {
                    v["sha256"] = json!(sha);
                }
            }
            out.push(v);
        }
    }
    out.sort_by(|a, b| {
        canonical::cmp_utf16(
            a["path"].as_str().unwrap_or(""),
            b["path"].as_str().unwrap_or(""),
        )
    });
    out
}

/// The top level of a directory at one moment: each entry's kind, length and
/// modification time.
#[derive(Debug, Clone, Default)]
pub struct DirLook {
    entries: BTreeMap<String, (&'static str, u64, Option<SystemTime>)>,
}

impl DirLook {
    /// Look at the top level of `dir` (entries are not followed).
    pub fn take(dir: &Path) -> DirLook {
        let mut entries = BTreeMap::new();
        if let Ok(read) = std::fs::read_dir(dir) {
            for e in read.flatten() {
                let Ok(meta) = e.path().symlink_metadata() else {
                    continue;
                };
                entries.insert(
                    e.file_name().to_string_lossy().into_owned(),
                    (kind_of(&meta.file_type()), meta.len(), meta.modified().ok()),
                );
            }
        }
        DirLook { entries }
    }

    /// What changed from `self` (before) to `after`: entries that are new,
    /// entries whose modification time or length changed, and entries removed.
    pub fn diff(&self, after: &DirLook) -> DirChange {
        let mut change = DirChange::default();
        for (name, (kind, len, mtime)) in &after.entries {
            match self.entries.get(name) {
                None => change
                    .new
                    .push(json!({"name": name, "kind": kind, "bytes": len})),
                Some((_, l, m)) if m != mtime || l != len => change
                    .changed
                    .push(json!({"name": name, "kind": kind, "bytes": len})),
                Some(_) => {}
            }
        }
        for name in self.entries.keys() {
            if !after.entries.contains_key(name) {
                change.removed.push(json!({"name": name}));
            }
        }
        change
    }
}

/// A before/after difference of one directory's top level.
#[derive(Debug, Clone, Default)]
pub struct DirChange {
    pub new: Vec<Value>,
    pub changed: Vec<Value>,
    pub removed: Vec<Value>,
}

/// The most bytes of a subject's injection log the harness reads (the
/// reference server writes a few hundred bytes per injection).
pub const INJECTION_LOG_LIMIT: u64 = 1024 * 1024;

/// Read a file the subject wrote into the run's scratch directory (its
/// injection log), bounded and without following symlinks: `None` when it is
/// missing, a symlink, not a regular file, or linked more than once (a hard
/// link could name any file the subject can read); otherwise at most `limit`
/// bytes, and whether the file held more.
pub fn read_subject_file(path: &Path, limit: u64) -> Option<(Vec<u8>, bool)> {
    use std::os::unix::fs::MetadataExt;
    let file = crate::bundle::open_no_follow(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.nlink() != 1 {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).ok()?;
    let over = bytes.len() as u64 > limit;
    bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    Some((bytes, over))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executed_files_are_the_program_and_file_arguments() {
        let tmp = tempfile::tempdir().unwrap();
        let prog = tmp.path().join("prog");
        let script = tmp.path().join("server.py");
        std::fs::write(&prog, b"#!interp").unwrap();
        std::fs::write(&script, b"print(1)").unwrap();
        let args = vec![
            script.display().to_string(),
            "stdio".to_string(),
            tmp.path().display().to_string(),
        ];
        let files = observe_executed("prog", &prog, &args).unwrap();
        assert_eq!(files.len(), 2, "{files:?}");
        assert_eq!(files[0].role, "program");
        assert_eq!(files[0].sha256, canonical::sha256_hex(b"#!interp"));
        assert_eq!(files[1].argv_index, 1);
        assert_eq!(files[1].sha256, canonical::sha256_hex(b"print(1)"));
        let digest = executed_digest(&files);
        assert!(rehash(&files).is_empty());
        std::fs::write(&script, b"print(2)").unwrap();
        let changed = rehash(&files);
        assert_eq!(changed.len(), 1);
        assert_eq!(changed[0]["argvIndex"], 1);
        let again = observe_executed("prog", &prog, &args).unwrap();
        assert_ne!(executed_digest(&again), digest);
    }

    #[test]
    fn temporary_entries_and_directory_changes_are_listed() {
        let tmp = tempfile::tempdir().unwrap();
        let before = DirLook::take(tmp.path());
        assert!(walk_entries(tmp.path()).is_empty());
        std::fs::create_dir(tmp.path().join("d")).unwrap();
        std::fs::write(tmp.path().join("d/f"), b"abc").unwrap();
        let entries = walk_entries(tmp.path());
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0]["path"], "d");
        assert_eq!(entries[1]["path"], "d/f");
        assert_eq!(entries[1]["sha256"], canonical::sha256_hex(b"abc"));
        let change = before.diff(&DirLook::take(tmp.path()));
        assert_eq!(change.new.len(), 1);
        assert_eq!(change.new[0]["name"], "d");
        assert!(walk_entries(&tmp.path().join("missing")).is_empty());
    }
}
