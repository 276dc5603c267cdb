//! Where mcpres finds the reference kit's data (`reference-corpus/`): the directory
//! in `$MCPRES_REFERENCE_CORPUS`, else `../shared/reference-corpus` beside the crate.
//! The corpus is test data only; nothing in the validator path reads it.

use std::path::PathBuf;

/// Environment variable naming the reference corpus directory.
pub const ENV: &str = "MCPRES_REFERENCE_CORPUS";

/// The reference corpus directory, if it exists (it must hold `v0.2.0/`).
pub fn reference_corpus_dir() -> Option<PathBuf> {
    let candidate = match std::env::var_os(ENV) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/reference-corpus"),
    };
    candidate.join("v0.2.0").is_dir().then_some(candidate)
}
