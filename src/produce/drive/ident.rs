//! Identities a producer gives what it drives: the digest of a subject's
//! artifact (a file or a directory), and fresh random names.

use std::io::Read as _;
use std::path::Path;

use sha2::{Digest as _, Sha256};

use serde_json::{Value, json};

use crate::json::canonical;

/// `bytes` random bytes from the OS, as lowercase hex.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the OS random source works");
    hex::encode(buf)
}

/// SHA-256 and length of a file's bytes, streamed.
pub fn hash_file(path: &Path) -> std::io::Result<(String, u64)> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        total += n as u64;
    }
    Ok((hex::encode(hasher.finalize()), total))
}

/// SHA-256 and length of the subject artifact. A file is hashed as is; a
/// directory is hashed as the canonical JSON list of its regular files
/// (relative path, length, SHA-256), sorted by path; symlinks are refused.
/// Every file is hashed as a stream (an executable of hundreds of megabytes
/// costs 64 KiB of memory, not its size).
pub fn artifact_digest(path: &Path) -> std::io::Result<(String, u64)> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.is_file() {
        return hash_file(path);
    }
    if !meta.is_dir() {
        return Err(std::io::Error::other("not a regular file or directory"));
    }
    let mut files = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    let mut total = 0u64;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let p = entry.path();
            if kind.is_dir() {
                stack.push(p);
            } else if kind.is_file() {
                let (sha256, len) = hash_file(&p)?;
                total += len;
                let rel = p
                    .strip_prefix(path)
                    .unwrap_or(&p)
                    .to_string_lossy()
                    .into_owned();
                files.push(json!({"path": rel, "bytes": len, "sha256": sha256}));
            } else {
                return Err(std::io::Error::other(format!(
                    "{} is neither a file nor a directory",
                    p.display()
                )));
            }
        }
    }
    files.sort_by(|a, b| {
        canonical::cmp_utf16(
            a["path"].as_str().unwrap_or(""),
            b["path"].as_str().unwrap_or(""),
        )
    });
    let digest = canonical::digest(&Value::Array(files)).map_err(std::io::Error::other)?;
    Ok((digest, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_digest_of_files_and_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("pkg");
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::write(dir.join("bin/server"), b"#!server").unwrap();
        std::fs::write(dir.join("README"), b"hello").unwrap();
        let (file_sha, file_len) = artifact_digest(&dir.join("README")).unwrap();
        assert_eq!(file_sha, canonical::sha256_hex(b"hello"));
        assert_eq!(file_len, 5);
        let (a, len) = artifact_digest(&dir).unwrap();
        assert_eq!(len, 13);
        let listing = json!([
            {"path": "README", "bytes": 5, "sha256": canonical::sha256_hex(b"hello")},
            {"path": "bin/server", "bytes": 8, "sha256": canonical::sha256_hex(b"#!server")},
        ]);
        assert_eq!(a, canonical::digest(&listing).unwrap());
        std::fs::write(dir.join("bin/server"), b"#!server2").unwrap();
        assert_ne!(artifact_digest(&dir).unwrap().0, a);
        std::os::unix::fs::symlink(dir.join("README"), dir.join("link")).unwrap();
        assert!(artifact_digest(&dir).is_err());
    }
}
