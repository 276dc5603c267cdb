//! Loading MCP-RES documents: a single JSON file (any document kind), a
//! v0.2 bundle directory (see `spec/bundle-layout.md`), a profile evaluation
//! directory (see `spec/profiles.md`, "The evaluation directory") or a field
//! matrix directory (see `spec/field.md`).

pub mod dir;
pub mod field_dir;
pub mod profile_dir;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::diag::Finding;
use crate::json::{self, Limits, ReadError};

/// Why an input could not be used at all (exit code 2, `MCP_RES_INPUT_INVALID`).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: is a symbolic link; mcpres never follows symlinked input")]
    Symlink { path: PathBuf },
    #[error("{path}: is neither a regular file nor a directory")]
    NotRegular { path: PathBuf },
    #[error("{path}: {bytes} bytes is over the {limit}-byte document limit")]
    TooLarge {
        path: PathBuf,
        bytes: u64,
        limit: usize,
    },
    #[error("{path}: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: ReadError,
        /// The bytes that were read, for pointing at the error.
        bytes: Vec<u8>,
    },
    #[error("{path}: not an MCP-RES bundle directory: {reason}")]
    NotABundleDir { path: PathBuf, reason: String },
}

impl LoadError {
    /// The diagnostic code to report: every refusal is `MCP_RES_INPUT_INVALID`
    /// (the reference validators' code for input they cannot use).
    pub fn code(&self) -> &'static str {
        crate::diag::codes::INPUT_INVALID.as_str()
    }

    /// The more specific canonical-JSON code behind a refusal, where there is one.
    pub fn detail_code(&self) -> Option<&'static str> {
        match self {
            LoadError::Json { source, .. } => match source.kind {
                json::ReadErrorKind::LoneSurrogate => {
                    Some(crate::diag::codes::INVALID_UNICODE.as_str())
                }
                json::ReadErrorKind::NonIntegerNumber | json::ReadErrorKind::UnsafeInteger => {
                    Some(crate::diag::codes::NON_CANONICAL_NUMBER.as_str())
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// A document ready for validation.
#[derive(Debug)]
pub struct Loaded {
    /// The document (for a directory: the bundle reassembled from its JSON artifacts;
    /// `None` when the directory's evidence or statement could not be read, in which
    /// case the storage findings alone decide).
    pub doc: Option<Value>,
    /// The bytes of the single input file, for source spans (absent for directories).
    pub source: Option<Vec<u8>>,
    /// The [`json::reader::Layout`] of `source` when the file is written in
    /// canonical form: the validator then takes digests over it in place, so
    /// `doc`, `source` and `layout` must stay as they were read together.
    pub layout: Option<json::reader::Layout>,
    /// Findings about the stored directory form (empty for single files).
    pub storage_findings: Vec<Finding>,
    /// For a profile evaluation directory: what is on disk (`doc` is then its
    /// evaluation.json), judged by the validator (`validate::profile_dir`).
    pub profile_dir: Option<Box<profile_dir::ProfileDir>>,
    /// For a field matrix directory (spec/field.md): what is on disk (`doc` is
    /// then `None`: the directory is no single document), judged by `validate::field_dir`.
    pub field_dir: Option<Box<field_dir::FieldDir>>,
}

/// `lstat` an input path; a symlink is refused, never followed.
fn lstat_refusing_symlinks(path: &Path) -> Result<fs::Metadata, LoadError> {
    let meta = fs::symlink_metadata(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if meta.file_type().is_symlink() {
        return Err(LoadError::Symlink {
            path: path.to_path_buf(),
        });
    }
    Ok(meta)
}

/// Read a file strictly: no symlink, regular file only, size limit before reading.
pub fn read_file(path: &Path, limits: &Limits) -> Result<Vec<u8>, LoadError> {
    read_file_with(path, lstat_refusing_symlinks(path)?, limits)
}

/// The bytes of the input at `path` when it is no directory (read as
/// [`read_file`] reads them), `None` for a directory: what [`load_with`]
/// would parse as a single-file document, before it is parsed.
pub fn read_if_file(path: &Path, limits: &Limits) -> Result<Option<Vec<u8>>, LoadError> {
    let meta = lstat_refusing_symlinks(path)?;
    if meta.is_dir() {
        return Ok(None);
    }
    read_file_with(path, meta, limits).map(Some)
}

/// [`read_file`] with the path's metadata already taken (without following a symlink).
fn read_file_with(path: &Path, meta: fs::Metadata, limits: &Limits) -> Result<Vec<u8>, LoadError> {
    if !meta.is_file() {
        return Err(LoadError::NotRegular {
            path: path.to_path_buf(),
        });
    }
    if meta.len() > limits.max_bytes as u64 {
        return Err(LoadError::TooLarge {
            path: path.to_path_buf(),
            bytes: meta.len(),
            limit: limits.max_bytes,
        });
    }
    let io = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = open_no_follow(path).map_err(io)?;
    check_same_file(&meta, &file.metadata().map_err(io)?, path)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // Read one byte past the limit so a file that grew after the check is still refused.
    file.take(limits.max_bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() > limits.max_bytes {
        return Err(LoadError::TooLarge {
            path: path.to_path_buf(),
            bytes: bytes.len() as u64,
            limit: limits.max_bytes,
        });
    }
    Ok(bytes)
}

/// Open a file for reading without following a final symlink and without
/// blocking (a FIFO swapped in after the `lstat` cannot stall the open; the
/// same-file check after it then refuses the FIFO).
pub(crate) fn open_no_follow(path: &Path) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    options.open(path)
}

/// Refuse a file that was swapped between the `lstat` and the `open`.
pub(crate) fn check_same_file(
    before: &fs::Metadata,
    after: &fs::Metadata,
    path: &Path,
) -> Result<(), LoadError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if before.dev() != after.dev() || before.ino() != after.ino() {
            return Err(LoadError::Symlink {
                path: path.to_path_buf(),
            });
        }
    }
    #[cfg(not(unix))]
    let _ = (before, path);
    if !after.is_file() {
        return Err(LoadError::NotRegular {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Read and strictly parse one JSON file.
pub fn read_json(path: &Path, limits: &Limits) -> Result<(Value, Vec<u8>), LoadError> {
    read_json_with(path, limits, json::parse)
}

/// Read one file and parse it with `parse` (the strict reader, with or
/// without its layout); a refusal names the file and keeps its bytes.
fn read_json_with<T>(
    path: &Path,
    limits: &Limits,
    parse: impl FnOnce(&[u8], &Limits) -> Result<T, json::ReadError>,
) -> Result<(T, Vec<u8>), LoadError> {
    let bytes = read_file(path, limits)?;
    match parse(&bytes, limits) {
        Ok(v) => Ok((v, bytes)),
        Err(source) => Err(LoadError::Json {
            path: path.to_path_buf(),
            source,
            bytes,
        }),
    }
}

/// Load a single-file document or a bundle directory.
pub fn load(path: &Path, limits: &Limits) -> Result<Loaded, LoadError> {
    load_with(path, limits, &dir::DirLimits::default())
}

/// [`load`] with explicit limits for the directory form.
pub fn load_with(
    path: &Path,
    limits: &Limits,
    dir_limits: &dir::DirLimits,
) -> Result<Loaded, LoadError> {
    let meta = lstat_refusing_symlinks(path)?;
    if meta.is_dir() && field_dir::is_field_dir(path) {
        let loaded = field_dir::load(path, limits, dir_limits);
        return Ok(Loaded {
            doc: None,
            source: None,
            layout: None,
            storage_findings: Vec::new(),
            profile_dir: None,
            field_dir: Some(Box::new(loaded)),
        });
    }
    if meta.is_dir() && profile_dir::is_profile_dir(path) {
        let loaded = profile_dir::load(path, limits, dir_limits)?;
        return Ok(Loaded {
            doc: Some(loaded.evaluation.clone()),
            source: None,
            layout: None,
            storage_findings: Vec::new(),
            profile_dir: Some(Box::new(loaded)),
            field_dir: None,
        });
    }
    if meta.is_dir() {
        let (doc, storage_findings) = dir::load_dir_with(path, limits, dir_limits)?;
        return Ok(Loaded {
            doc,
            source: None,
            layout: None,
            storage_findings,
            profile_dir: None,
            field_dir: None,
        });
    }
    let ((doc, layout), bytes) = read_json_with(path, limits, json::reader::parse_with_layout)?;
    Ok(Loaded {
        doc: Some(doc),
        source: Some(bytes),
        layout,
        storage_findings: Vec::new(),
        profile_dir: None,
        field_dir: None,
    })
}
