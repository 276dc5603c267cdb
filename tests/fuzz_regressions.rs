//! Replays every input under `testdata/fuzz-regressions/TARGET/` through the
//! property its cargo-fuzz target checks (see `fuzz/fuzz_targets/`), so a
//! crash found by fuzzing stays fixed. Each directory also holds hand-picked
//! seeds at the edges of the property (they double as fuzzing seeds:
//! `fuzz/run.sh` passes them to libFuzzer).

use std::fs;
use std::path::{Path, PathBuf};

use mcpres::attest::dsse::{decode_base64, encode_base64};
use mcpres::bundle::dir::{MANIFEST_FILE, load_dir};
use mcpres::json::{Limits, canonical, parse_default};
use mcpres::validate::{Options, validate_document};

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/fuzz-regressions")
        .join(target);
    let mut out: Vec<(PathBuf, Vec<u8>)> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .map(|p| {
            let bytes = fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no inputs in {}", dir.display());
    out
}

/// fuzz_targets/json_roundtrip.rs
fn json_roundtrip(data: &[u8]) -> bool {
    let Ok(value) = parse_default(data) else {
        return false;
    };
    let bytes = canonical::to_vec(&value).expect("an accepted document canonicalizes");
    let again = parse_default(&bytes).expect("canonical bytes are accepted");
    assert_eq!(
        again, value,
        "canonical bytes read back to a different value"
    );
    assert_eq!(canonical::to_vec(&again).unwrap(), bytes, "not idempotent");
    // A string's digest is of its own UTF-8 bytes, not of its JSON text.
    let expected = match &value {
        serde_json::Value::String(s) => mcpres::json::sha256_hex(s.as_bytes()),
        _ => mcpres::json::sha256_hex(&bytes),
    };
    assert_eq!(mcpres::json::digest(&value).unwrap(), expected);
    true
}

#[test]
fn json_roundtrip_regressions() {
    let mut accepted = 0;
    for (path, bytes) in inputs("json_roundtrip") {
        eprintln!("replaying {}", path.display());
        accepted += usize::from(json_roundtrip(&bytes));
    }
    assert!(
        accepted > 0,
        "no replayed input was readable: the property was never checked"
    );
}

#[test]
fn bundle_validate_regressions() {
    for (path, bytes) in inputs("bundle_validate") {
        eprintln!("replaying {}", path.display());
        if let Ok(doc) = parse_default(&bytes) {
            let report = validate_document(&doc, &Options::default());
            assert!(
                report.valid || report.primary().is_some(),
                "{}",
                path.display()
            );
        }
    }
}

#[test]
fn dsse_base64_regressions() {
    for (path, bytes) in inputs("dsse_envelope") {
        eprintln!("replaying {}", path.display());
        let text = String::from_utf8_lossy(bytes.get(1..).unwrap_or_default()).into_owned();
        if let Some(decoded) = decode_base64(&text) {
            assert_eq!(decode_base64(&encode_base64(&decoded)), Some(decoded));
        }
    }
}

#[test]
fn dir_loader_regressions() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bundle.json");
    let doc = mcpres::produce::builder::synthetic_bundle(6).unwrap();
    fs::write(
        &file,
        mcpres::produce::builder::to_file_bytes(&doc).unwrap(),
    )
    .unwrap();
    let dir = tmp.path().join("bundle");
    mcpres::produce::pack::unpack(&file, &dir, None, &Limits::default()).unwrap();
    for (path, bytes) in inputs("dir_loader") {
        eprintln!("replaying {}", path.display());
        fs::write(dir.join(MANIFEST_FILE), &bytes).unwrap();
        if let Ok((Some(doc), _)) = load_dir(&dir, &Limits::default()) {
            let report = validate_document(&doc, &Options::default());
            assert!(report.valid || report.primary().is_some());
        }
    }
}
