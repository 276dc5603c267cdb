//! Writes the benchmark inputs into a directory: synthetic valid single-file bundles
//! with 16, 64 and 254 observations (`bundle-N.json`). Used by `bench/validate.sh`;
//! nothing it writes is committed.

use std::path::PathBuf;

use mcpres::bundle::builder::{synthetic_bundle, to_file_bytes};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: gen_bench_inputs OUT_DIR")?,
    );
    std::fs::create_dir_all(&out)?;
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
