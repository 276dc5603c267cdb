//! Converting between the single-file form and the bundle-directory form.
//! Both directions keep the integrity manifest, and so the bundleDigest, unchanged.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use std::collections::HashMap;

use crate::bundle::dir::{
    DEFAULT_MAX_ARTIFACT_BYTES, DirLimits, MANIFEST_FILE, MAX_MANIFEST_ARTIFACTS, load_dir,
    path_problem, write_new,
};
use crate::bundle::profile_dir;
use crate::bundle::{LoadError, read_json};
use crate::diag::Finding;
use crate::fsio::DirHandle;
use crate::json::{Limits, canonical};
use crate::model::vocab::{EVIDENCE_PATH, OBSERVATION_MEDIA_TYPE, STATEMENT_PATH};

/// Errors of `pack` and `unpack`.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("the bundle directory is not intact ({} finding(s)); run `mcpres validate` on it", .0.len())]
    NotIntact(Vec<Finding>),
    #[error("{0} already exists; mcpres never overwrites")]
    Exists(PathBuf),
    #[error("{path}: cannot write: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the input is not a v0.2 single-file conformance bundle: {0}")]
    NotABundle(String),
    #[error("manifest path {path:?} {why}; nothing was written")]
    PathRule { path: String, why: String },
    #[error(
        "{} raw artifact(s) are bound by the manifest but their bytes are not in the single file; supply them with --raw-from DIR: {}",
        .0.len(), .0.join(", ")
    )]
    RawMissing(Vec<String>),
    #[error("MCP_RES_INPUT_INVALID: {0}")]
    Limit(String),
    #[error("raw artifact {path} from --raw-from does not match the manifest: {why}")]
    RawMismatch { path: String, why: String },
}

/// Summary of a conversion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackSummary {
    pub bundle_digest: String,
    pub files: usize,
    /// Raw artifacts bound by digest only (pack) or copied from `--raw-from` (unpack).
    pub raw_artifacts: Vec<String>,
}

fn bundle_digest_of(doc: &Value) -> String {
    doc.pointer("/integrity/bundleDigest")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn artifact_list(doc: &Value) -> Vec<(String, String, u64, String)> {
    doc.pointer("/integrity/artifacts")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|a| {
                    Some((
                        a.get("path")?.as_str()?.to_string(),
                        a.get("mediaType")?.as_str()?.to_string(),
                        a.get("bytes")?.as_u64()?,
                        a.get("sha256")?.as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn is_virtual(path: &str, media_type: &str) -> bool {
    path == EVIDENCE_PATH || path == STATEMENT_PATH || media_type == OBSERVATION_MEDIA_TYPE
}

/// `mcpres pack DIR -o FILE`: write the single-file form of an intact bundle directory.
pub fn pack(dir: &Path, out: &Path, limits: &Limits) -> Result<PackSummary, PackError> {
    if fs::symlink_metadata(out).is_ok() {
        return Err(PackError::Exists(out.to_path_buf()));
    }
    let (doc, findings) = load_dir(dir, limits)?;
    let doc = match doc {
        Some(doc) if findings.is_empty() => doc,
        _ => return Err(PackError::NotIntact(findings)),
    };
    let mut bytes = canonical::to_vec(&doc).map_err(|e| PackError::NotABundle(e.to_string()))?;
    bytes.push(b'\n');
    write_new(out, &bytes).map_err(|source| PackError::Write {
        path: out.to_path_buf(),
        source,
    })?;
    let raw: Vec<String> = artifact_list(&doc)
        .into_iter()
        .filter(|(p, m, _, _)| !is_virtual(p, m))
        .map(|(p, ..)| p)
        .collect();
    Ok(PackSummary {
        bundle_digest: bundle_digest_of(&doc),
        files: 1,
        raw_artifacts: raw,
    })
}

/// Summary of packing a profile evaluation directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfilePackSummary {
    /// The evaluation's own `evaluationSha256`.
    pub evaluation_sha256: String,
    /// The length of the file written.
    pub bytes: usize,
}

/// `mcpres pack DIR -o FILE` for a profile evaluation directory: write the bytes of its
/// `evaluation.json` unchanged (the single document the reference validators read), when
/// the directory is intact: its run record holds, lists exactly the files there with
/// their digests, and agrees with the evaluation. The evaluation's own findings do not
/// stop it; `mcpres validate FILE` reports them, as for any single file.
pub fn pack_profile_dir(
    dir: &Path,
    out: &Path,
    limits: &Limits,
) -> Result<ProfilePackSummary, PackError> {
    if fs::symlink_metadata(out).is_ok() {
        return Err(PackError::Exists(out.to_path_buf()));
    }
    let loaded = profile_dir::load(dir, limits, &DirLimits::default())?;
    let findings = crate::validate::profile_dir::directory_findings(&loaded);
    if !findings.is_empty() {
        return Err(PackError::NotIntact(findings));
    }
    write_new(out, &loaded.evaluation_bytes).map_err(|source| PackError::Write {
        path: out.to_path_buf(),
        source,
    })?;
    Ok(ProfilePackSummary {
        evaluation_sha256: loaded.evaluation["evaluationSha256"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        bytes: loaded.evaluation_bytes.len(),
    })
}

/// Default for [`UnpackLimits::max_total_bytes`] (1 GiB).
pub const DEFAULT_MAX_UNPACK_TOTAL_BYTES: u64 = 1 << 30;

/// Bounds on what `unpack` writes, checked against the manifest before any
/// file is created. The artifact count is the schema's (and `validate`'s)
/// [`MAX_MANIFEST_ARTIFACTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnpackLimits {
    /// The largest declared length of one artifact (as `validate --max-artifact-bytes`).
    pub max_artifact_bytes: u64,
    /// The most bytes written in all, the three documents included.
    pub max_total_bytes: u64,
}

impl Default for UnpackLimits {
    fn default() -> Self {
        UnpackLimits {
            max_artifact_bytes: DEFAULT_MAX_ARTIFACT_BYTES,
            max_total_bytes: DEFAULT_MAX_UNPACK_TOTAL_BYTES,
        }
    }
}

/// Where the bytes of one planned file come from.
enum Source<'a> {
    /// A document of the single file, written in canonical form.
    Doc(&'a Value),
    /// An observation of the evidence (canonical, without `observationSha256`).
    Observation(&'a Value),
    /// A raw artifact copied from `--raw-from`, checked against its length and digest.
    Raw { len: u64, sha: String },
}

/// `mcpres unpack FILE -o DIR`: write the directory form of a single-file bundle.
pub fn unpack(
    file: &Path,
    out: &Path,
    raw_from: Option<&Path>,
    limits: &Limits,
) -> Result<PackSummary, PackError> {
    unpack_with(file, out, raw_from, limits, &UnpackLimits::default())
}

/// [`unpack`] with explicit bounds. The manifest is checked against the
/// bounds before anything is written; files are then written one at a time
/// (never all held in memory), below a handle of the new directory that is
/// never left through a symlink ([`crate::fsio::DirHandle`]).
pub fn unpack_with(
    file: &Path,
    out: &Path,
    raw_from: Option<&Path>,
    limits: &Limits,
    bounds: &UnpackLimits,
) -> Result<PackSummary, PackError> {
    if fs::symlink_metadata(out).is_ok() {
        return Err(PackError::Exists(out.to_path_buf()));
    }
    let (doc, _) = read_json(file, limits)?;
    let (Some(evidence), Some(statement), Some(integrity)) = (
        doc.get("evidence"),
        doc.get("statement"),
        doc.get("integrity"),
    ) else {
        return Err(PackError::NotABundle(
            "it needs evidence, statement and integrity".into(),
        ));
    };
    let listed = integrity
        .get("artifacts")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if listed > MAX_MANIFEST_ARTIFACTS {
        return Err(PackError::Limit(format!(
            "the manifest lists {listed} artifacts; at most {MAX_MANIFEST_ARTIFACTS} are allowed (the schema's maxItems)"
        )));
    }
    let canon = |v: &Value| canonical::to_vec(v).map_err(|e| PackError::NotABundle(e.to_string()));

    // Plan every file before writing anything; the three documents are
    // measured here (and serialized again when written, one at a time).
    let mut total: u64 = 0;
    let mut plan: Vec<(String, Source)> = Vec::new();
    for (path, v) in [
        (MANIFEST_FILE, integrity),
        (EVIDENCE_PATH, evidence),
        (STATEMENT_PATH, statement),
    ] {
        total += canon(v)?.len() as u64;
        plan.push((path.to_string(), Source::Doc(v)));
    }
    // Observations indexed by (length, SHA-256) of their canonical bytes: each
    // is serialized and hashed once, whatever the manifest lists.
    let mut observations: HashMap<(u64, String), &Value> = HashMap::new();
    for o in evidence
        .get("observations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Ok(bytes) = canonical::to_vec_without_key(o, "observationSha256") {
            observations
                .entry((bytes.len() as u64, canonical::sha256_hex(&bytes)))
                .or_insert(o);
        }
    }
    let mut missing = Vec::new();
    let mut raw_copied = Vec::new();
    for (path, media_type, len, sha) in artifact_list(&doc) {
        if path == EVIDENCE_PATH || path == STATEMENT_PATH {
            continue;
        }
        if let Some(problem) = path_problem(&path) {
            return Err(PackError::PathRule {
                path,
                why: problem.to_string(),
            });
        }
        if len > bounds.max_artifact_bytes {
            return Err(PackError::Limit(format!(
                "{path}: the manifest declares {len} bytes, over the {}-byte artifact limit (--max-artifact-bytes)",
                bounds.max_artifact_bytes
            )));
        }
        total = total.saturating_add(len);
        if total > bounds.max_total_bytes {
            return Err(PackError::Limit(format!(
                "the files to write add up to more than the {}-byte limit (--max-total-bytes); nothing was written",
                bounds.max_total_bytes
            )));
        }
        if media_type == OBSERVATION_MEDIA_TYPE
            && let Some(o) = observations.get(&(len, sha.clone()))
        {
            plan.push((path, Source::Observation(o)));
            continue;
        }
        match raw_from {
            Some(src) if fs::symlink_metadata(src.join(&path)).is_ok() => {
                raw_copied.push(path.clone());
                plan.push((path, Source::Raw { len, sha }));
            }
            _ => missing.push(path),
        }
    }
    if !missing.is_empty() {
        return Err(PackError::RawMissing(missing));
    }
    // No two planned files may collide (case folding included), and no file may sit
    // where another one needs a directory.
    let mut folded = std::collections::HashSet::new();
    for (path, _) in &plan {
        if !folded.insert(path.to_ascii_lowercase()) {
            return Err(PackError::PathRule {
                path: path.clone(),
                why: "collides with another manifest path".into(),
            });
        }
    }
    for (path, _) in &plan {
        let mut prefix = path.as_str();
        while let Some((parent, _)) = prefix.rsplit_once('/') {
            if folded.contains(&parent.to_ascii_lowercase()) {
                return Err(PackError::PathRule {
                    path: path.clone(),
                    why: format!("needs {parent:?} to be a directory, but it is also a file"),
                });
            }
            prefix = parent;
        }
    }
    let root = DirHandle::create_new(out).map_err(|source| PackError::Write {
        path: out.to_path_buf(),
        source,
    })?;
    let files = plan.len();
    for (path, source) in plan {
        if let Err(e) = write_one(&root, &path, source, raw_from, limits) {
            // Leave nothing half-written: the directory was created by this run.
            let _ = fs::remove_dir_all(out);
            return Err(e);
        }
    }
    Ok(PackSummary {
        bundle_digest: bundle_digest_of(&doc),
        files,
        raw_artifacts: raw_copied,
    })
}

/// Produce the bytes of one planned file and write it below `root`.
fn write_one(
    root: &DirHandle,
    path: &str,
    source: Source,
    raw_from: Option<&Path>,
    limits: &Limits,
) -> Result<(), PackError> {
    let not_bundle =
        |e: crate::json::canonical::CanonicalError| PackError::NotABundle(e.to_string());
    let bytes = match source {
        Source::Doc(v) => canonical::to_vec(v).map_err(not_bundle)?,
        Source::Observation(o) => {
            canonical::to_vec_without_key(o, "observationSha256").map_err(not_bundle)?
        }
        Source::Raw { len, sha } => {
            let src = raw_from.unwrap_or(Path::new(".")).join(path);
            let bytes = crate::bundle::read_file(&src, &raw_limits(limits))?;
            if bytes.len() as u64 != len || canonical::sha256_hex(&bytes) != sha {
                return Err(PackError::RawMismatch {
                    path: path.to_string(),
                    why: format!("expected {len} bytes with sha256 {sha}"),
                });
            }
            bytes
        }
    };
    root.write_new(Path::new(path), &bytes)
        .map_err(|source| PackError::Write {
            path: root.path().join(path),
            source,
        })
}

fn raw_limits(limits: &Limits) -> Limits {
    // Raw artifacts may be as large as the manifest allows (16 MiB each).
    Limits {
        max_bytes: limits.max_bytes.max(16 * 1024 * 1024),
        ..*limits
    }
}
