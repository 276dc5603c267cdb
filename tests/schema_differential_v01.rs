//! Differential test for v0.1: the project's own v0.1 bundle schema
//! (`schemas/v0.1/conformance-bundle.schema.json`, one self-contained file) against the nine
//! reference v0.1 schema files from the corpus, compiled with the same engine, draft and
//! format options. The reference's integrity path pattern uses look-ahead, so the reference
//! side is compiled with the engine's default (backtracking) regex; ours needs none.
//!
//! Seeds: every v0.1 document of the corpus (25 vectors, 2 examples, 2 field-evidence
//! bundles). Mutants: at every node of every seed, deterministic single edits (delete a
//! member, add an unknown member, swap the type, boundary numbers, boundary and hostile
//! strings, empty and duplicated arrays). Both sides must accept or reject each one alike.

mod support;

use std::path::{Path, PathBuf};

use jsonschema::{Draft, Registry, Validator};
use serde_json::{Value, json};

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("JSON")
}

fn reference_validator(dir: &Path) -> Validator {
    let names = [
        "subject-identity",
        "fault-description",
        "recovery-policy",
        "cleanup-result",
        "integrity-manifest",
        "evidence-envelope",
        "conformance-statement",
        "profile-manifest",
        "conformance-bundle",
    ];
    let schemas: Vec<Value> = names
        .iter()
        .map(|n| read_json(&dir.join(format!("{n}.schema.json"))))
        .collect();
    let registry = Registry::new()
        .draft(Draft::Draft202012)
        .extend(
            schemas
                .iter()
                .map(|s| (s["$id"].as_str().expect("$id").to_owned(), s.clone())),
        )
        .expect("registry")
        .prepare()
        .expect("registry prepares");
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .with_registry(&registry)
        .offline()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false)
        .build(schemas.last().expect("bundle schema"))
        .expect("reference v0.1 bundle schema compiles")
}

fn seeds(root: &Path) -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = Vec::new();
    for sub in [
        "test-vectors/valid",
        "test-vectors/invalid",
        "examples",
        "field-evidence",
    ] {
        let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(sub))
            .expect("corpus folder")
            .map(|e| e.expect("entry").path())
            .collect();
        found.sort();
        files.extend(found);
    }
    files
        .into_iter()
        .map(|p| (p.display().to_string(), read_json(&p)))
        .collect()
}

/// Replacement values tried at every leaf.
fn replacements() -> Vec<Value> {
    let mut out = vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1),
        json!(2),
        json!(1.5),
        json!(32),
        json!(33),
        json!(64),
        json!(65),
        json!(1024),
        json!(1025),
        json!(300000),
        json!(300001),
        json!(3600000),
        json!(3600001),
        json!(14400001),
        json!(1048577),
        json!(16777217),
        json!(2147483648u64),
        json!(""),
        json!("x"),
        json!("a/../b"),
        json!("../a"),
        json!("/abs"),
        json!("a/.."),
        json!("a..b/c"),
        json!("..."),
        json!("source-evidence/x.json"),
        json!("2026-01-02T03:04:05Z"),
        json!("2026-01-02t03:04:05z"),
        json!("2026-01-02T03:04:05"),
        json!("2026-13-02T03:04:05Z"),
        json!("1990-12-31T23:59:60Z"),
        json!("2026-01-02T23:59:60Z"),
        json!("mcp-res/server-tool-call/v1"),
        json!("mcp-res/Bad/v1"),
        json!("1.0.0"),
        json!("01.0.0"),
        json!("0".repeat(64)),
        json!("A".repeat(64)),
        json!("a".repeat(65)),
        json!("b".repeat(129)),
        json!("c".repeat(257)),
        json!("text/plain"),
        json!("line\nbreak"),
        json!("UNKNOWN"),
        json!("SIDE_EFFECTING"),
        json!("MCP_SERVER"),
        json!([]),
        json!({}),
    ];
    out.push(json!({"kind": "IDEMPOTENCY_KEY", "evidenceSha256": "0".repeat(64)}));
    out
}

/// Every JSON pointer of `value`, depth first.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                pointers(
                    v,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                pointers(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn mutants(seed: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut all = Vec::new();
    pointers(seed, String::new(), &mut all);
    let values = replacements();
    for pointer in all {
        let node = seed.pointer(&pointer).expect("pointer").clone();
        if let Some((parent, key)) = pointer.rsplit_once('/') {
            // Delete this member or element.
            let mut doc = seed.clone();
            match doc.pointer_mut(parent) {
                Some(Value::Object(map)) => {
                    map.remove(&key.replace("~1", "/").replace("~0", "~"));
                }
                Some(Value::Array(items)) => {
                    items.remove(key.parse::<usize>().expect("index"));
                }
                _ => {}
            }
            out.push((format!("delete {pointer}"), doc));
        }
        match &node {
            Value::Object(_) => {
                let mut doc = seed.clone();
                if let Some(Value::Object(map)) = doc.pointer_mut(&pointer) {
                    map.insert("unexpectedMember".into(), json!(1));
                }
                out.push((format!("extra member at {pointer}"), doc));
            }
            Value::Array(items) => {
                let mut doc = seed.clone();
                *doc.pointer_mut(&pointer).unwrap() = json!([]);
                out.push((format!("empty {pointer}"), doc));
                if let Some(first) = items.first() {
                    let mut doc = seed.clone();
                    if let Some(Value::Array(list)) = doc.pointer_mut(&pointer) {
                        list.push(first.clone());
                    }
                    out.push((format!("duplicate first of {pointer}"), doc));
                }
            }
            _ => {
                for value in &values {
                    if *value == node {
                        continue;
                    }
                    let mut doc = seed.clone();
                    *doc.pointer_mut(&pointer).unwrap() = value.clone();
                    out.push((format!("{pointer} = {value}"), doc));
                }
            }
        }
    }
    out
}

#[test]
fn own_v01_schema_decides_like_the_reference_v01_schemas() {
    let Some(root) = support::reference_corpus_dir().map(|d| d.join("v0.1.0")) else {
        println!("schema_differential_v01 skipped: reference corpus not found");
        return;
    };
    let reference = reference_validator(&root.join("schemas"));
    let seeds = seeds(&root);
    assert_eq!(
        seeds.len(),
        29,
        "25 vectors, 2 examples, 2 field-evidence bundles"
    );
    let mut compared = 0usize;
    let (mut accepted, mut rejected) = (0usize, 0usize);
    let mut disagreements = Vec::new();
    // The seeds share most of their structure; mutate a spread of them fully and check the
    // rest unmutated (keeps the debug run short).
    for (index, (origin, seed)) in seeds.iter().enumerate() {
        let mut docs = vec![("unmutated".to_owned(), seed.clone())];
        if index % 3 == 0 {
            docs.extend(mutants(seed));
        }
        for (what, doc) in docs {
            let theirs = reference.is_valid(&doc);
            let ours = mcpres::schema::v01::is_valid(&doc);
            let listed = mcpres::schema::v01::validate(&doc).is_empty();
            compared += 1;
            if theirs {
                accepted += 1;
            } else {
                rejected += 1;
            }
            if theirs != ours || ours != listed {
                disagreements.push(format!(
                    "{origin}: {what}: reference {theirs}, ours {ours}, error list empty {listed}"
                ));
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements, first: {:#?}",
        disagreements.len(),
        &disagreements[..disagreements.len().min(20)]
    );
    assert!(
        accepted > 100 && rejected > 1000,
        "{accepted} accepted, {rejected} rejected"
    );
    println!("compared {compared} documents: {accepted} accepted, {rejected} rejected by both");
}
