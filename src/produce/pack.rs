//! Converting between the single-file form and the bundle-directory form.
//! Both directions keep the integrity manifest, and so the bundleDigest, unchanged.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::bundle::dir::{MANIFEST_FILE, load_dir, path_problem, write_new};
use crate::bundle::{LoadError, read_json};
use crate::diag::Finding;
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

/// `mcpres unpack FILE -o DIR`: write the directory form of a single-file bundle.
pub fn unpack(
    file: &Path,
    out: &Path,
    raw_from: Option<&Path>,
    limits: &Limits,
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
    let canon = |v: &Value| canonical::to_vec(v).map_err(|e| PackError::NotABundle(e.to_string()));

    // Plan every file before writing anything.
    let mut plan: Vec<(String, Vec<u8>)> = vec![
        (MANIFEST_FILE.to_string(), canon(integrity)?),
        (EVIDENCE_PATH.to_string(), canon(evidence)?),
        (STATEMENT_PATH.to_string(), canon(statement)?),
    ];
    let observations: Vec<Vec<u8>> = evidence
        .get("observations")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|o| canonical::to_vec_without_key(o, "observationSha256").ok())
                .collect()
        })
        .unwrap_or_default();
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
        if media_type == OBSERVATION_MEDIA_TYPE
            && let Some(bytes) = observations
                .iter()
                .find(|b| b.len() as u64 == len && canonical::sha256_hex(b) == sha)
        {
            plan.push((path, bytes.clone()));
            continue;
        }
        match raw_from {
            Some(src) => {
                let (bytes, _) = (
                    crate::bundle::read_file(&src.join(&path), &raw_limits(limits))?,
                    (),
                );
                if bytes.len() as u64 != len || canonical::sha256_hex(&bytes) != sha {
                    return Err(PackError::RawMismatch {
                        path,
                        why: format!("expected {len} bytes with sha256 {sha}"),
                    });
                }
                raw_copied.push(path.clone());
                plan.push((path, bytes));
            }
            None => missing.push(path),
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
    fs::create_dir(out).map_err(|source| PackError::Write {
        path: out.to_path_buf(),
        source,
    })?;
    let files = plan.len();
    for (path, bytes) in plan {
        let target = out.join(&path);
        if let Err(source) = write_new(&target, &bytes) {
            // Leave nothing half-written: the directory was created by this run.
            let _ = fs::remove_dir_all(out);
            return Err(PackError::Write {
                path: target,
                source,
            });
        }
    }
    Ok(PackSummary {
        bundle_digest: bundle_digest_of(&doc),
        files,
        raw_artifacts: raw_copied,
    })
}

fn raw_limits(limits: &Limits) -> Limits {
    // Raw artifacts may be as large as the manifest allows (16 MiB each).
    Limits {
        max_bytes: limits.max_bytes.max(16 * 1024 * 1024),
        ..*limits
    }
}
