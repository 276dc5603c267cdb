//! The bundle-directory loader: a fixed valid bundle directory (plus a
//! symlink and a nested directory) is made once in a temporary directory;
//! each input becomes its integrity-manifest.json, and the directory is loaded
//! and, when it reassembles, validated.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcpres::bundle::builder::{synthetic_bundle, to_file_bytes};
use mcpres::bundle::dir::{MANIFEST_FILE, load_dir};
use mcpres::json::Limits;
use mcpres::validate::{Options, validate_document};

fn tree() -> &'static PathBuf {
    static TREE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &TREE
        .get_or_init(|| {
            let tmp = tempfile::tempdir().expect("temp dir");
            let file = tmp.path().join("bundle.json");
            let doc = synthetic_bundle(6).expect("synthetic bundle");
            std::fs::write(&file, to_file_bytes(&doc).expect("bytes")).expect("write");
            let dir = tmp.path().join("bundle");
            mcpres::bundle::pack::unpack(&file, &dir, None, &Limits::default()).expect("unpack");
            std::fs::create_dir_all(dir.join("nested/deeper")).expect("mkdir");
            std::fs::write(dir.join("nested/deeper/raw.bin"), b"raw bytes").expect("write");
            #[cfg(unix)]
            std::os::unix::fs::symlink("/etc/hostname", dir.join("link.json")).expect("symlink");
            (tmp, dir)
        })
        .1
}

fuzz_target!(|data: &[u8]| {
    let dir = tree();
    std::fs::write(dir.join(MANIFEST_FILE), data).expect("write manifest");
    if let Ok((Some(doc), findings)) = load_dir(dir, &Limits::default()) {
        let report = validate_document(&doc, &Options::default());
        if findings.is_empty() && !report.valid {
            assert!(report.primary().is_some());
        }
    }
});
