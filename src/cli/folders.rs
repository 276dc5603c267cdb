//! `validate DIR` and `verify DIR` on a folder that is not itself a bundle
//! directory: the folder stands for the bundles it holds (a campaign written
//! by `mcpres run`, a tool-contracts run's folder, or a folder of
//! single-file bundles), and a campaign's `campaign.json` (a tool-contracts
//! run's `contracts.json`) is checked against its parts. See spec/diagnostics.md,
//! "Folders of bundles".

use std::path::{Path, PathBuf};

use mcpres::bundle;
use mcpres::json::Limits;
use serde_json::{Value, json};

/// The summary `mcpres run` writes into a campaign directory.
const CAMPAIGN_FILE: &str = "campaign.json";
/// The summary `mcpres run --scenario tool-contracts` writes beside its
/// bundles (one per tool).
const CONTRACTS_FILE: &str = "contracts.json";

/// What the paths on the command line stand for.
#[derive(Debug, Default)]
pub struct Expanded {
    /// Every input to validate, in order.
    pub inputs: Vec<PathBuf>,
    /// Every `campaign.json` found, with the folder holding it.
    pub campaigns: Vec<PathBuf>,
}

/// A bundle directory: a directory holding `integrity-manifest.json`.
fn is_bundle_dir(path: &Path) -> bool {
    path.join("integrity-manifest.json").is_file()
}

/// A directory with a bundle directory's own files (a bundle directory
/// whose manifest is missing), a profile evaluation directory (holding
/// `evaluation.json`) or a field matrix directory (holding `matrix.json`): it
/// stands for itself.
fn looks_like_bundle_dir(path: &Path) -> bool {
    [
        "integrity-manifest.json",
        "evidence-envelope.json",
        "conformance-statement.json",
        bundle::profile_dir::EVALUATION_FILE,
        bundle::field_dir::MATRIX_FILE,
    ]
    .iter()
    .any(|f| path.join(f).symlink_metadata().is_ok())
}

/// Expand each path: a file or a bundle directory (or a directory holding a
/// bundle directory's `evidence-envelope.json` or `conformance-statement.json`,
/// so a bundle directory with a missing manifest) stands for itself; any
/// other directory stands for the bundle directories directly inside it and
/// the `.json` files directly inside it (`campaign.json` apart), sorted by
/// name. A directory that holds none of these stands for itself (and is then
/// refused as a malformed bundle directory). Symlinks are never followed.
pub fn expand(paths: &[PathBuf]) -> Expanded {
    let mut out = Expanded::default();
    for path in paths {
        let is_dir = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
        if !is_dir || looks_like_bundle_dir(path) {
            out.inputs.push(path.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = std::fs::read_dir(path)
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| {
                        let Ok(kind) = e.file_type() else {
                            return false;
                        };
                        let name = e.file_name();
                        let name = name.to_string_lossy();
                        (kind.is_dir()
                            && (is_bundle_dir(&e.path())
                                || bundle::profile_dir::is_profile_dir(&e.path())
                                || bundle::field_dir::is_field_dir(&e.path())))
                            || (kind.is_file()
                                && name.ends_with(".json")
                                && name != CAMPAIGN_FILE
                                && name != CONTRACTS_FILE)
                    })
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        if path.join(CAMPAIGN_FILE).is_file() || path.join(CONTRACTS_FILE).is_file() {
            out.campaigns.push(path.clone());
        }
        if found.is_empty() {
            out.inputs.push(path.clone());
        } else {
            out.inputs.extend(found);
        }
    }
    out
}

/// Check a campaign's `campaign.json` against the parts in its folder: every
/// part it lists exists and is a bundle directory whose `bundleDigest` is the
/// one listed, and no bundle directory in the folder is left unlisted.
/// Returns the number of parts listed and the problems found (none: the
/// summary matches its parts).
pub fn check_campaign(dir: &Path, limits: &Limits) -> Result<(usize, Vec<String>), String> {
    let (summary, list, path_key) = if dir.join(CAMPAIGN_FILE).is_file() {
        (CAMPAIGN_FILE, "parts", "path")
    } else {
        (CONTRACTS_FILE, "tools", "directory")
    };
    let file = dir.join(summary);
    let (doc, _) = bundle::read_json(&file, limits)
        .map_err(|e| format!("{}: {}", file.display(), super::render::load_error_text(&e)))?;
    let Some(all) = doc[list].as_array() else {
        return Err(format!(
            "{}: not a {} summary (no {list} list)",
            file.display(),
            if list == "parts" {
                "campaign"
            } else {
                "tool-contracts"
            }
        ));
    };
    // A tool-contracts summary also lists the tools it could not exercise
    // (no directory): only those with a bundle are parts.
    let parts: Vec<Value> = all
        .iter()
        .filter(|p| list == "parts" || p.get(path_key).is_some())
        .map(|p| json!({"path": p[path_key], "bundleDigest": p["bundleDigest"]}))
        .collect();
    let parts = &parts;
    let mut problems = Vec::new();
    let mut listed = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let Some(name) = part["path"].as_str().filter(|n| {
            !n.is_empty() && !n.contains('/') && !n.contains('\\') && *n != "." && *n != ".."
        }) else {
            problems.push(format!("part {}: no usable path", i + 1));
            continue;
        };
        listed.push(name.to_string());
        let part_dir = dir.join(name);
        let manifest = part_dir.join("integrity-manifest.json");
        let on_disk = bundle::read_json(&manifest, limits)
            .ok()
            .and_then(|(m, _)| m["bundleDigest"].as_str().map(String::from));
        match (on_disk, part["bundleDigest"].as_str()) {
            (None, _) => problems.push(format!("part {name}: no bundle directory there")),
            (Some(found), Some(claimed)) if found == claimed => {}
            (Some(found), claimed) => problems.push(format!(
                "part {name}: {summary} lists bundleDigest {}, the part's manifest has {found}",
                claimed.unwrap_or("(none)")
            )),
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut unlisted: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|k| k.is_dir()) && is_bundle_dir(&e.path()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !listed.contains(n))
            .collect();
        unlisted.sort();
        for n in unlisted {
            problems.push(format!(
                "part {n}: a bundle directory {summary} does not list"
            ));
        }
    }
    if list == "parts" && parts.is_empty() {
        problems.push("campaign.json lists no part".into());
    }
    Ok((parts.len(), problems))
}

/// Check every campaign found and say so on stderr; returns the exit the
/// checks call for: valid when all match, failing when a summary disagrees with
/// its parts, unusable when a summary cannot be read.
pub fn report_campaigns(campaigns: &[PathBuf], limits: &Limits) -> super::Exit {
    use super::Exit;
    let mut code = Exit::Valid;
    for dir in campaigns {
        match check_campaign(dir, limits) {
            Ok((parts, problems)) if problems.is_empty() => errln!(
                "mcpres: {}: {} matches its {parts} part(s) (each part is validated above)",
                super::output::shown(dir),
                summary_name(dir)
            ),
            Ok((_, problems)) => {
                for p in problems {
                    errln!(
                        "mcpres: {}: {}: {p}",
                        super::output::shown(dir),
                        summary_name(dir)
                    );
                }
                code = code.max(Exit::Failing);
            }
            Err(e) => {
                errln!("mcpres: {e}");
                code = Exit::Unusable;
            }
        }
    }
    code
}

/// The summary file of a folder of parts: `campaign.json`, else `contracts.json`.
fn summary_name(dir: &Path) -> &'static str {
    if dir.join(CAMPAIGN_FILE).is_file() {
        CAMPAIGN_FILE
    } else {
        CONTRACTS_FILE
    }
}
