//! mcpres' own v0.1 and migration-result vectors (`testdata/migration`, written by
//! `examples/gen_migration_vectors.rs`): a fresh generation is byte-identical to the committed
//! files, and the real binary gives every vector exactly its catalog diagnostics, findings and
//! exit code. Together they cover every v0.1 code and every migration-result code.

mod support;

#[path = "../examples/gen_migration_vectors.rs"]
mod gen_migration_vectors;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/migration")
}

fn catalog() -> Value {
    serde_json::from_slice(&std::fs::read(dir().join("catalog.json")).expect("catalog"))
        .expect("catalog JSON")
}

fn files(base: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for sub in ["", "v01", "migration"] {
        let mut names: Vec<PathBuf> = std::fs::read_dir(base.join(sub))
            .expect("list")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.is_file())
            .collect();
        names.sort();
        for path in names {
            let name = path.strip_prefix(base).unwrap().display().to_string();
            out.push((name, std::fs::read(&path).unwrap()));
        }
    }
    out
}

#[test]
fn regeneration_is_byte_identical() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let written = gen_migration_vectors::generate(tmp.path(), false).expect("generates");
    assert_eq!(written, 26);
    // Existing files are not replaced without --force.
    assert!(gen_migration_vectors::generate(tmp.path(), false).is_err());
    let committed = files(&dir());
    let fresh = files(tmp.path());
    assert_eq!(
        committed.iter().map(|f| &f.0).collect::<Vec<_>>(),
        fresh.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((name, a), (_, b)) in committed.iter().zip(&fresh) {
        assert!(
            a == b,
            "{name} differs from a fresh generation; rerun gen_migration_vectors --force"
        );
    }
}

#[test]
fn every_vector_gets_its_catalog_findings_from_the_binary() {
    let catalog = catalog();
    let vectors = catalog["vectors"].as_array().expect("vectors");
    assert_eq!(vectors.len(), 25);
    let mut primaries = BTreeSet::new();
    for entry in vectors {
        let id = entry["id"].as_str().unwrap();
        let path = dir().join(entry["path"].as_str().unwrap());
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            mcpres::json::sha256_hex(&bytes),
            entry["fileSha256"].as_str().unwrap(),
            "{id}"
        );
        let out = support::command()
            .args(["validate", "--format", "json"])
            .arg(&path)
            .output()
            .expect("run mcpres");
        let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
        let findings: Vec<&str> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap())
            .collect();
        let expected: Vec<&str> = entry["expectedFindings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(findings, expected, "{id}");
        assert_eq!(report["diagnostics"], entry["expectedDiagnostics"], "{id}");
        let code = if expected.is_empty() { 0 } else { 1 };
        assert_eq!(out.status.code(), Some(code), "{id}");
        primaries.extend(expected.first().map(|c| c.to_string()));
    }
    for code in mcpres::validate::codes::V01
        .iter()
        .chain(&mcpres::validate::codes::MIGRATION)
    {
        assert!(primaries.contains(*code), "no vector for {code}");
    }
}

#[test]
fn the_valid_v01_vector_migrates_to_the_committed_result_up_to_the_tool_digest() {
    let source = std::fs::read(dir().join("v01/valid.json")).unwrap();
    let committed = std::fs::read(dir().join("migration/valid.json")).unwrap();
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = support::command()
        .current_dir(tmp.path())
        .args(["migrate", "v0.1", "--input"])
        .arg(dir().join("v01/valid.json"))
        .args(["--output", "result.json"])
        .output()
        .expect("run mcpres");
    assert!(out.status.success(), "{out:?}");
    let mut ours: Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("result.json")).unwrap()).unwrap();
    let theirs: Value = serde_json::from_slice(&committed).unwrap();
    assert_eq!(
        theirs["migration"]["tool"]["sha256"],
        gen_migration_vectors::tool_sha256()
    );
    ours["migration"]["tool"]["sha256"] = theirs["migration"]["tool"]["sha256"].clone();
    assert_eq!(ours, theirs);
    assert_eq!(
        theirs["source"]["bundleFileSha256"],
        mcpres::json::sha256_hex(&source)
    );
}
