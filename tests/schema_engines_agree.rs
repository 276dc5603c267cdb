//! The fast schema evaluator and the `jsonschema` engine must give the same
//! accept/reject decision on every document: corpus documents and systematic
//! mutations of them (deleted keys, unknown keys, retyped leaves, emptied arrays).

mod support;

use std::path::PathBuf;

use mcpres::schema::{self, SchemaKind};
use serde_json::{Value, json};

fn corpus_root() -> Option<PathBuf> {
    support::reference_corpus_dir()
}

/// Every JSON pointer of containers and leaves in `v`.
fn pointers(v: &Value, base: &str, out: &mut Vec<String>) {
    out.push(base.to_string());
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                pointers(
                    c,
                    &format!("{base}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                )
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                pointers(c, &format!("{base}/{i}"), out)
            }
        }
        _ => {}
    }
}

fn mutants(doc: &Value) -> Vec<(String, Value)> {
    let mut ptrs = Vec::new();
    pointers(doc, "", &mut ptrs);
    let mut out = Vec::new();
    let replacements = [
        json!(null),
        json!(""),
        json!(-1),
        json!("\u{1F600}"),
        json!([]),
        json!({}),
        json!(true),
        json!("2026-02-30T00:00:00Z"),
        json!("2026-08-27t12:00:00.5z"),
        json!("2016-12-31T23:59:60Z"),
        json!("2016-12-31T23:59:60+01:00"),
        json!("2016-12-31T22:59:60-01:00"),
        json!("2026-08-27T12:00:00"),
        json!("x".repeat(300)),
    ];
    for p in &ptrs {
        let target = doc.pointer(p).unwrap();
        if let Value::Object(m) = target {
            for k in m.keys() {
                let mut d = doc.clone();
                d.pointer_mut(p).unwrap().as_object_mut().unwrap().remove(k);
                out.push((format!("delete {p}/{k}"), d));
            }
            let mut d = doc.clone();
            d.pointer_mut(p)
                .unwrap()
                .as_object_mut()
                .unwrap()
                .insert("unexpectedKey".into(), json!(1));
            out.push((format!("add key at {p}"), d));
        }
        if let Value::Array(a) = target
            && let Some(first) = a.first().cloned()
        {
            let mut d = doc.clone();
            d.pointer_mut(p)
                .unwrap()
                .as_array_mut()
                .unwrap()
                .push(first);
            out.push((format!("duplicate first item of {p}"), d));
        }
        if p.is_empty() {
            continue;
        }
        for r in &replacements {
            if target == r {
                continue;
            }
            let mut d = doc.clone();
            *d.pointer_mut(p).unwrap() = r.clone();
            out.push((format!("replace {p} with {r}"), d));
        }
    }
    out
}

#[test]
fn fast_evaluator_agrees_with_jsonschema_engine() {
    let Some(root) = corpus_root() else {
        eprintln!("SKIPPED: reference corpus not found");
        return;
    };
    let vectors = root.join("v0.2.0/test-vectors/valid");
    let mut compared = 0usize;
    let mut entries: Vec<_> = std::fs::read_dir(&vectors).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries.iter().take(2) {
        let doc: Value = serde_json::from_slice(&std::fs::read(entry.path()).unwrap()).unwrap();
        let mut cases: Vec<(SchemaKind, String, Value)> = Vec::new();
        for (why, d) in mutants(&doc) {
            cases.push((SchemaKind::ConformanceBundle, why, d));
        }
        // Sub-documents against their own kinds.
        for (kind, ptr) in [
            (SchemaKind::TrialSummary, "/evidence/trialSummary"),
            (SchemaKind::ObservationCoverage, "/evidence/coverage"),
            (SchemaKind::Observation, "/evidence/observations/0"),
            (SchemaKind::IntegrityManifest, "/integrity"),
            (SchemaKind::ConformanceStatement, "/statement"),
        ] {
            let sub = doc.pointer(ptr).unwrap().clone();
            for (why, d) in mutants(&sub) {
                cases.push((kind, why, d));
            }
        }
        for (kind, why, d) in cases {
            let fast = schema::fast::is_valid(kind, &d).expect("fast evaluator handles the kind");
            let engine = schema::engine_is_valid(kind, &d);
            assert_eq!(
                fast,
                engine,
                "{kind:?}: engines disagree on {why} in {}",
                entry.path().display()
            );
            compared += 1;
        }
    }
    assert!(compared > 1000, "compared only {compared} documents");
    eprintln!("fast evaluator and jsonschema agree on {compared} documents");
}
