//! mcpres' own profile-evaluation and OAuth-boundary test vectors.
//!
//! ```text
//! cargo run --example gen_profile_vectors --no-default-features -- [--force] testdata
//! ```
//!
//! Writes `profile/` and `oauth/` under the output directory: `valid/*.json`,
//! `invalid/*.json` and `catalog.json` each, every file canonical JSON plus a
//! trailing newline. The vectors come from `generate.rs` beside this file
//! (deterministic: no clock, no randomness); the generator refuses to write a
//! set the validator disagrees with, and never replaces files without `--force`.

mod generate;

use std::path::Path;
use std::process::ExitCode;

use generate::Vector;

fn write_family(dir: &Path, vectors: &[Vector], force: bool) -> Result<usize, String> {
    for v in vectors {
        v.check()?;
    }
    let mut files: Vec<(std::path::PathBuf, Vec<u8>)> = vectors
        .iter()
        .map(|v| (dir.join(v.path()), generate::file_bytes(&v.doc)))
        .collect();
    files.push((
        dir.join("catalog.json"),
        generate::file_bytes(&generate::catalog(vectors)),
    ));
    for (path, bytes) in &files {
        if path.exists() && !force {
            return Err(format!("{} exists (use --force)", path.display()));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(files.len())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let force = args.iter().any(|a| a == "--force");
    let Some(out) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: gen_profile_vectors [--force] OUTPUT_DIR");
        return ExitCode::from(2);
    };
    let out = Path::new(out);
    for (name, vectors) in [
        ("profile", generate::profile_vectors()),
        ("oauth", generate::oauth_vectors()),
    ] {
        match write_family(&out.join(name), &vectors, force) {
            Ok(n) => println!("{name}: wrote {n} files"),
            Err(e) => {
                eprintln!("gen_profile_vectors: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
