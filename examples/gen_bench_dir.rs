//! Writes a valid bundle directory with large raw artifacts, for the
//! directory benchmark (`bench/dir.sh`):
//!
//!   cargo run --example gen_bench_dir -- OUT_DIR TOTAL_MIB [COUNT]
//!
//! The bundle is the synthetic 6-observation bundle plus COUNT (default 200)
//! raw artifacts `raw/blob-NNN.bin` of TOTAL_MIB / COUNT MiB each, filled with
//! deterministic pseudo-random bytes, bound in the manifest by length and
//! SHA-256. The blobs are streamed to disk (memory stays small at any size).
//! Nothing it writes is committed.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use mcpres::bundle::dir::MANIFEST_FILE;
use mcpres::json::canonical;
use mcpres::produce::builder::{BundleBuilder, observation_path, synthetic_bundle};
use mcpres::validate::core::{EVIDENCE_PATH, STATEMENT_PATH};
use sha2::{Digest, Sha256};

/// Write `len` pseudo-random bytes (xorshift64*, seeded per blob) to `path`;
/// returns the hex SHA-256.
fn write_blob(path: &Path, len: u64, seed: u64) -> std::io::Result<String> {
    let mut file = std::io::BufWriter::with_capacity(1 << 20, fs::File::create(path)?);
    let mut hasher = Sha256::new();
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        for chunk in buf.chunks_mut(8) {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let word = state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        let n = left.min(buf.len() as u64) as usize;
        file.write_all(&buf[..n])?;
        hasher.update(&buf[..n]);
        left -= n as u64;
    }
    file.flush()?;
    Ok(hex::encode(hasher.finalize()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: gen_bench_dir OUT_DIR TOTAL_MIB [COUNT]";
    let out = PathBuf::from(args.next().ok_or(usage)?);
    let total_mib: u64 = args.next().ok_or(usage)?.parse()?;
    let count: u64 = args.next().map_or(Ok(200), |c| c.parse())?;
    if count == 0 || count > 248 {
        return Err("COUNT must be 1 to 248 (the manifest holds at most 256 artifacts)".into());
    }
    if out.exists() {
        return Err(format!("{} exists; remove it first", out.display()).into());
    }
    let each = total_mib * (1 << 20) / count;
    fs::create_dir_all(out.join("raw"))?;
    let mut builder = BundleBuilder::from_document(synthetic_bundle(6)?);
    for i in 0..count {
        let rel = format!("raw/blob-{i:03}.bin");
        let sha = write_blob(&out.join(&rel), each, i + 1)?;
        builder.bind_raw(&rel, "application/octet-stream", each, &sha)?;
    }
    let built = builder.build()?;
    let doc = &built.doc;
    let mut documents = vec![
        (
            MANIFEST_FILE.to_string(),
            canonical::to_vec(&doc["integrity"])?,
        ),
        (
            EVIDENCE_PATH.to_string(),
            canonical::to_vec(&doc["evidence"])?,
        ),
        (
            STATEMENT_PATH.to_string(),
            canonical::to_vec(&doc["statement"])?,
        ),
    ];
    for obs in doc["evidence"]["observations"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let id = obs["id"].as_str().unwrap_or_default();
        documents.push((
            observation_path(id),
            canonical::to_vec_without_key(obs, "observationSha256")?,
        ));
    }
    for (rel, bytes) in documents {
        let path = out.join(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(path, bytes)?;
    }
    eprintln!(
        "wrote {} ({count} raw artifacts of {each} bytes, {} MiB in all)",
        out.display(),
        (each * count) >> 20
    );
    Ok(())
}
