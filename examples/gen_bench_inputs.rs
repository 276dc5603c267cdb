//! Writes the benchmark inputs into a directory: synthetic valid single-file bundles
//! with 16, 64 and 254 observations (`bundle-N.json`). Used by `bench/validate.sh`;
//! nothing it writes is committed.
//!
//! `gen_bench_inputs OUT_DIR --batch N` instead writes N small valid bundles
//! (copies of the 6-observation synthetic bundle; mcpres caches nothing
//! between inputs, so each is read, parsed and validated in full) as
//! `OUT_DIR/batch/NNNNN.json`, for the batch benchmark (`bench/batch.sh`).

use std::path::PathBuf;

use mcpres::produce::builder::{synthetic_bundle, to_file_bytes};

/// N small valid bundles as separate files.
fn write_batch(dir: &std::path::Path, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir)?;
    let bytes = to_file_bytes(&synthetic_bundle(6)?)?;
    for i in 0..n {
        let path = dir.join(format!("{i:05}.json"));
        if !path.exists() {
            std::fs::write(&path, &bytes)?;
        }
    }
    eprintln!(
        "wrote {n} bundles ({} bytes each) into {}",
        bytes.len(),
        dir.display()
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: gen_bench_inputs OUT_DIR")?,
    );
    std::fs::create_dir_all(&out)?;
    if std::env::args().nth(2).as_deref() == Some("--batch") {
        let n: usize = std::env::args()
            .nth(3)
            .ok_or("usage: gen_bench_inputs OUT_DIR --batch N")?
            .parse()?;
        return write_batch(&out.join("batch"), n);
    }
    for n in [16usize, 64, 254] {
        let path = out.join(format!("bundle-{n}.json"));
        if path.exists() {
            continue;
        }
        let doc = synthetic_bundle(n)?;
        std::fs::write(&path, to_file_bytes(&doc)?)?;
        eprintln!(
            "wrote {} ({} bytes)",
            path.display(),
            std::fs::metadata(&path)?.len()
        );
    }
    Ok(())
}
