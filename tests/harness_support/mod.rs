//! Helpers the harness tests share: the binary under test, loading and
//! validating a bundle from disk, and small file and port utilities.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

use mcpres::json::Limits;

/// The `mcpres` binary cargo built for these tests.
pub fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcpres"))
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A finished command's stdout and stderr, for assertion messages.
pub fn output_text(o: &std::process::Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", text(&o.stdout), text(&o.stderr))
}

/// Load a bundle directory (no storage finding allowed) and validate it.
pub fn load(dir: &Path) -> (Value, mcpres::validate::Report) {
    let loaded = mcpres::bundle::load(dir, &Limits::default()).expect("bundle loads");
    assert!(
        loaded.storage_findings.is_empty(),
        "{:?}",
        loaded.storage_findings
    );
    let doc = loaded.doc.expect("bundle document");
    let report = mcpres::validate::validate_document(&doc, &Default::default());
    (doc, report)
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// A loopback port nothing listens on (the listener is closed on return).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Every file below `dir`.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
