//! mcpres' own test vectors (`testdata/vectors`, written by `examples/gen_vectors.rs`)
//! and example bundles (`bundles/`): the catalog's expectations hold, regeneration
//! is byte-identical, and the real binary agrees on files and directories.

mod support;

use support::Run;

#[allow(dead_code)]
#[path = "../examples/gen_vectors.rs"]
mod gen_vectors;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use mcpres::json::canonical::sha256_hex;
use mcpres::produce::builder::BundleBuilder;
use mcpres::validate::codes;
use mcpres::validate::core::{EVIDENCE_CLASSES, validate_bundle};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn vectors_dir() -> PathBuf {
    root().join("testdata/vectors")
}

fn read_json(path: &Path) -> Value {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    mcpres::json::parse_default(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn catalog() -> Value {
    read_json(&vectors_dir().join("catalog.json"))
}

fn entries(catalog: &Value) -> Vec<&Value> {
    ["valid", "invalid"]
        .iter()
        .flat_map(|k| catalog[k].as_array().unwrap().iter())
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_catalog_entry_holds() {
    let catalog = catalog();
    let all = entries(&catalog);
    assert!(all.len() > 5 + codes::CORE.len(), "{} entries", all.len());
    for e in &all {
        let id = e["id"].as_str().unwrap();
        let path = vectors_dir().join(e["path"].as_str().unwrap());
        let bytes = fs::read(&path).unwrap();
        assert_eq!(
            sha256_hex(&bytes),
            e["fileSha256"].as_str().unwrap(),
            "{id}: fileSha256"
        );
        assert!(
            !e["description"].as_str().unwrap().is_empty(),
            "{id}: description"
        );
        let doc = mcpres::json::parse_default(&bytes).unwrap();
        // Canonical bytes plus one newline.
        let mut canonical = mcpres::json::canonical::to_vec(&doc).unwrap();
        canonical.push(b'\n');
        assert_eq!(canonical, bytes, "{id}: not canonical JSON + newline");

        let report = validate_bundle(&doc);
        let findings: Vec<String> = report.findings.iter().map(|f| f.code.to_string()).collect();
        assert_eq!(
            report.diagnostics,
            strings(&e["expectedDiagnostics"]),
            "{id}: diagnostics"
        );
        assert_eq!(findings, strings(&e["expectedFindings"]), "{id}: findings");
        match e["mutation"].as_str().unwrap() {
            "none" => {
                assert!(report.valid, "{id}: {:?}", report.findings);
                let class = e["evidenceClass"].as_str().unwrap();
                assert_eq!(report.evidence_class.as_deref(), Some(class), "{id}");
                let prefix = class.to_ascii_lowercase().replace('_', "-");
                assert!(
                    id.starts_with(&prefix),
                    "{id} should name its class {class}"
                );
                assert!(
                    e["description"].as_str().unwrap().starts_with(class),
                    "{id}"
                );
            }
            "deep" | "digest" => {
                assert_eq!(findings.len(), 1, "{id}: exactly one finding: {findings:?}");
                assert_eq!(report.diagnostics, findings, "{id}");
            }
            "multi-fault" => {
                let distinct: BTreeSet<&String> = findings.iter().collect();
                assert!(distinct.len() >= 3, "{id}: {findings:?}");
            }
            "schema-entangled" => {
                assert_eq!(
                    findings.last().map(String::as_str),
                    Some(codes::SCHEMA_INVALID)
                );
            }
            other => panic!("{id}: unknown mutation {other}"),
        }
    }
}

#[test]
fn catalog_covers_every_class_and_core_code() {
    let catalog = catalog();
    let valid_classes: BTreeSet<&str> = catalog["valid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["evidenceClass"].as_str().unwrap())
        .collect();
    for class in EVIDENCE_CLASSES {
        assert!(valid_classes.contains(class), "no valid {class} vector");
    }
    let primaries: BTreeSet<String> = catalog["invalid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| strings(&e["expectedDiagnostics"])[0].clone())
        .collect();
    for code in codes::CORE {
        assert!(primaries.contains(code), "no invalid vector for {code}");
    }
    // Every core code except the schema-entangled one has a deep or digest
    // vector with exactly that one finding.
    let single: BTreeSet<String> = catalog["invalid"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| matches!(e["mutation"].as_str(), Some("deep" | "digest")))
        .map(|e| strings(&e["expectedFindings"])[0].clone())
        .collect();
    for code in codes::CORE {
        if code != codes::SELF_ASSERTED_CLAIM {
            assert!(single.contains(code), "no single-finding vector for {code}");
        }
    }
    let multi: Vec<&Value> = catalog["invalid"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["mutation"] == "multi-fault")
        .collect();
    assert_eq!(multi.len(), 1);
    assert_eq!(
        strings(&multi[0]["expectedFindings"]),
        [
            codes::WRONG_STOP_REASON,
            codes::REQUIRED_SURFACE_UNOBSERVED,
            codes::TRIAL_SUMMARY_INCONSISTENT
        ]
    );
}

fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap()).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

fn assert_same_tree(committed: &Path, fresh: &Path) {
    let a = tree(committed);
    let b = tree(fresh);
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&a),
        names(&b),
        "file lists differ under {}",
        committed.display()
    );
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(
            x == y,
            "{name} differs from a fresh generation; rerun gen_vectors --force"
        );
    }
}

#[test]
fn regeneration_is_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("vectors");
    let written = gen_vectors::generate(&out, false).unwrap();
    assert_eq!(written, tree(&out).len());
    assert_same_tree(&vectors_dir(), &out);
    // Refuses to overwrite without --force; with it, the same bytes again.
    let err = gen_vectors::generate(&out, false).unwrap_err();
    assert!(err.contains("--force"), "{err}");
    gen_vectors::generate(&out, true).unwrap();
    assert_same_tree(&vectors_dir(), &out);

    let bundles = tmp.path().join("bundles");
    gen_vectors::generate_bundles(&bundles, false).unwrap();
    assert!(gen_vectors::generate_bundles(&bundles, false).is_err());
    let committed = root().join("bundles");
    assert_same_tree(
        &committed.join(gen_vectors::GENUINE_EXAMPLE_DIR),
        &bundles.join(gen_vectors::GENUINE_EXAMPLE_DIR),
    );
    let name = gen_vectors::FIXTURE_EXAMPLE_FILE;
    assert!(fs::read(committed.join(name)).unwrap() == fs::read(bundles.join(name)).unwrap());
}

// ---------------------------------------------------------------------------
// The real binary.
// ---------------------------------------------------------------------------

fn mcpres(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let run = Run::from(support::mcpres(args));
    (run.code, run.stdout, run.stderr)
}

/// `mcpres validate --format json PATH`: exit code and the result object.
fn validate_json(path: &Path) -> (i32, Value) {
    let (code, stdout, stderr) = mcpres(&[
        "validate".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        path.as_os_str(),
    ]);
    let line = stdout
        .lines()
        .next()
        .unwrap_or_else(|| panic!("no output; stderr: {stderr}"));
    (code, serde_json::from_str(line).unwrap())
}

fn vector_path(id: &str) -> PathBuf {
    let catalog = catalog();
    let e = entries(&catalog)
        .into_iter()
        .find(|e| e["id"] == id)
        .unwrap_or_else(|| panic!("no vector {id}"))
        .clone();
    vectors_dir().join(e["path"].as_str().unwrap())
}

#[test]
fn cli_reports_catalog_verdicts() {
    let catalog = catalog();
    let picks = [
        "genuine-runtime-stdio-session",
        "documented-only-validator-checks",
        "negative-stopped-on-timeout",
        "statement-from-sibling-run",
        "self-asserted-protocol-boolean",
        "multi-fault-timeout-unwired-miscounted",
    ];
    for id in picks {
        let e = entries(&catalog)
            .into_iter()
            .find(|e| e["id"] == id)
            .unwrap();
        let (code, out) = validate_json(&vector_path(id));
        let expected = strings(&e["expectedDiagnostics"]);
        assert_eq!(code, if expected.is_empty() { 0 } else { 1 }, "{id}: {out}");
        assert_eq!(strings(&out["diagnostics"]), expected, "{id}");
        assert_eq!(out["valid"], expected.is_empty(), "{id}");
        let findings: Vec<String> = out["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["code"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(findings, strings(&e["expectedFindings"]), "{id}");
    }
    // Several inputs at once: the worst exit code wins.
    let (code, stdout, _) = mcpres(&[
        "validate".as_ref(),
        "--format".as_ref(),
        "json".as_ref(),
        vector_path("fixture-verified-replay-only").as_os_str(),
        vector_path("pass-with-failed-cleanup").as_os_str(),
    ]);
    assert_eq!(code, 1);
    assert_eq!(stdout.lines().count(), 2);
}

#[test]
fn directory_round_trip_keeps_the_bundle_digest() {
    let tmp = tempfile::tempdir().unwrap();
    let file = vector_path("fixture-backed-protocol-replay");
    let original = read_json(&file);
    let dir = tmp.path().join("unpacked");
    let (code, _, err) = mcpres(&[
        "unpack".as_ref(),
        file.as_os_str(),
        "-o".as_ref(),
        dir.as_os_str(),
    ]);
    assert_eq!(code, 0, "{err}");

    let (code, out) = validate_json(&dir);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["evidenceClass"], "FIXTURE_BACKED_PROTOCOL");

    let packed = tmp.path().join("packed.json");
    let (code, _, err) = mcpres(&[
        "pack".as_ref(),
        dir.as_os_str(),
        "-o".as_ref(),
        packed.as_os_str(),
    ]);
    assert_eq!(code, 0, "{err}");
    let repacked = read_json(&packed);
    assert_eq!(
        repacked["integrity"]["bundleDigest"],
        original["integrity"]["bundleDigest"]
    );
    assert_eq!(repacked, original);
    let (code, out) = validate_json(&packed);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn raw_artifact_directory_validates_and_detects_tampering() {
    let tmp = tempfile::tempdir().unwrap();
    let built = gen_vectors::scenario(gen_vectors::Class::GenuineRuntime)
        .build()
        .unwrap();
    assert!(built.raw[gen_vectors::WIRE_PATH].len() >= 4096);
    let dir = tmp.path().join("genuine");
    built.write_dir(&dir).unwrap();

    let (code, out) = validate_json(&dir);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["evidenceClass"], "GENUINE_RUNTIME");

    // One flipped byte in the raw capture.
    let wire = dir.join(gen_vectors::WIRE_PATH);
    let mut bytes = fs::read(&wire).unwrap();
    bytes[1234] ^= 0x01;
    fs::write(&wire, &bytes).unwrap();
    let (code, out) = validate_json(&dir);
    assert_eq!(code, 1, "{out}");
    assert_eq!(
        strings(&out["diagnostics"]),
        [codes::ARTIFACT_DIGEST_MISMATCH]
    );

    // The single-file form binds the capture by digest only; packing the
    // intact directory gives back exactly the builder's document.
    let intact = tmp.path().join("intact");
    built.write_dir(&intact).unwrap();
    let packed = tmp.path().join("genuine.json");
    let (code, _, err) = mcpres(&[
        "pack".as_ref(),
        intact.as_os_str(),
        "-o".as_ref(),
        packed.as_os_str(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(read_json(&packed), built.doc);
}

#[test]
fn example_bundles_are_valid() {
    let bundles = root().join("bundles");
    let (code, out) = validate_json(&bundles.join(gen_vectors::GENUINE_EXAMPLE_DIR));
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["evidenceClass"], "GENUINE_RUNTIME");
    let (code, out) = validate_json(&bundles.join(gen_vectors::FIXTURE_EXAMPLE_FILE));
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["evidenceClass"], "FIXTURE_BACKED_PROTOCOL");
}

#[test]
fn builder_output_matches_the_committed_valid_vector() {
    // The builder is the producers' API: building the scenario again gives the
    // committed vector byte for byte.
    let built =
        BundleBuilder::from_document(read_json(&vector_path("genuine-runtime-stdio-session")))
            .build()
            .unwrap();
    let bytes = built.file_bytes().unwrap();
    assert!(bytes == fs::read(vector_path("genuine-runtime-stdio-session")).unwrap());
}
