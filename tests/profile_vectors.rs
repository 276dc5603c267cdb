//! Profile and OAuth-boundary evaluations: mcpres' own registry against the reference
//! registry, the committed vectors (`testdata/profile`, `testdata/oauth`, written by
//! `examples/gen_profile_vectors/`) against the generator, every vector's declared
//! findings, one deep vector per diagnostic code, and the real binary on each file.
//! Tests named `divergence_*` are the cases where the two reference implementations
//! disagree or where mcpres goes further; spec/conformance.md records each choice.

#[allow(dead_code)]
#[path = "../examples/gen_profile_vectors/generate.rs"]
mod generate;
mod support;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use mcpres::json::canonical::{self, sha256_hex};
use mcpres::profiles::{ProfileStatus, Registry};
use mcpres::validate::{self, codes, oauth, profile};
use serde_json::Value;

use generate::{RegistryVariant, Vector};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn families() -> [(&'static str, Vec<Vector>); 2] {
    [
        ("profile", generate::profile_vectors()),
        ("oauth", generate::oauth_vectors()),
    ]
}

fn read_json(path: &Path) -> Value {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    mcpres::json::parse_default(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn committed_vectors_equal_the_generator_output() {
    for (name, vectors) in families() {
        let dir = root().join("testdata").join(name);
        let mut expected: BTreeSet<String> = BTreeSet::new();
        for v in &vectors {
            let path = dir.join(v.path());
            let committed = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(
                committed,
                generate::file_bytes(&v.doc),
                "{} differs from the generator; rerun examples/gen_profile_vectors",
                path.display()
            );
            expected.insert(v.path());
        }
        let catalog = fs::read(dir.join("catalog.json")).unwrap();
        assert_eq!(catalog, generate::file_bytes(&generate::catalog(&vectors)));
        for kind in ["valid", "invalid"] {
            for entry in fs::read_dir(dir.join(kind)).unwrap() {
                let file = format!("{kind}/{}", entry.unwrap().file_name().to_string_lossy());
                assert!(expected.contains(&file), "{name}/{file} is not generated");
            }
        }
    }
}

#[test]
fn every_vector_gives_exactly_its_declared_findings() {
    for (name, vectors) in families() {
        for v in &vectors {
            v.check().unwrap_or_else(|e| panic!("{name}: {e}"));
            let report = v.validate();
            assert_eq!(report.valid, v.expected_findings.is_empty(), "{}", v.id);
            assert_eq!(
                report.primary(),
                v.expected_findings.first().copied(),
                "{}",
                v.id
            );
            // Through the single dispatch, when the vector uses the shipped registry.
            if v.registry == RegistryVariant::Builtin {
                let dispatched = validate::validate_document(&v.doc, &validate::Options::default());
                assert_eq!(dispatched, report, "{}: dispatch differs", v.id);
            }
        }
    }
}

#[test]
fn every_diagnostic_code_has_a_deep_single_finding_vector() {
    for (name, vectors, codes) in [
        ("profile", generate::profile_vectors(), codes::PROFILE),
        ("oauth", generate::oauth_vectors(), codes::OAUTH),
    ] {
        for code in codes {
            let found = vectors
                .iter()
                .filter(|v| v.expected_findings == [*code])
                .count();
            assert!(found >= 1, "{name}: no single-finding vector for {code}");
        }
        for v in &vectors {
            for code in &v.expected_findings {
                assert!(
                    codes.contains(code),
                    "{}: {code} is not a {name} code",
                    v.id
                );
                assert!(
                    mcpres::explain::lookup(code).is_some(),
                    "{code} unexplained"
                );
            }
        }
    }
}

#[test]
fn valid_vectors_cover_every_result_status() {
    for (name, vectors) in families() {
        let results: BTreeSet<&str> = vectors.iter().filter_map(|v| v.result).collect();
        assert_eq!(
            results,
            BTreeSet::from(["INCOMPLETE", "PASS"]),
            "{name}: valid evaluations derive PASS or INCOMPLETE only"
        );
    }
}

#[test]
fn experimental_profiles_are_recognized_and_never_scored_as_released() {
    let registry = Registry::builtin().unwrap();
    for id in [
        "mcp-res/oauth-client-credentials/v1",
        "mcp-res/enterprise-managed-authorization/v1",
        "mcp-res/dpop/v1",
        "mcp-res/token-exchange/v1",
    ] {
        let p = registry
            .get(id)
            .unwrap_or_else(|| panic!("{id} not registered"));
        assert_eq!(p.status, ProfileStatus::Experimental);
        assert!(!p.scored_as_released());
        // A complete evaluation of it is valid, reported EXPERIMENTAL and not scored.
        let revision = &p.protocol_revisions[0];
        let doc = generate::profile_evaluation(
            p,
            revision,
            "FULL_PROFILE",
            &p.applicable_check_ids(revision),
            &[],
            generate::Target::LoopbackHttp,
        );
        let report = profile::validate_profile_evaluation(&doc);
        assert!(report.valid, "{id}: {:?}", report.findings);
        assert_eq!(report.extra["profileStatus"], "EXPERIMENTAL");
        assert_eq!(report.extra["scoredAsReleased"], false);
    }
    let released = registry.get("mcp-res/oauth-boundary/v1").unwrap();
    assert!(released.scored_as_released());
    // Experimental checks of a provisional profile are accepted in a bounded claim but listed
    // as unscored.
    let v = generate::profile_vectors()
        .into_iter()
        .find(|v| v.id == "bounded-with-experimental-check")
        .unwrap();
    let report = v.validate();
    assert_eq!(
        report.extra["unscoredExperimentalChecks"],
        serde_json::json!(["etag-revalidation"])
    );
}

#[test]
fn oauth_reason_codes_derive_from_the_check_id() {
    assert_eq!(
        oauth::reason_code("access-token-audience", "REJECTED"),
        "MCP_RES_OAUTH_ACCESS_TOKEN_AUDIENCE_REJECTED"
    );
    assert_eq!(
        oauth::reason_code("pkce-s256", "ACCEPTED"),
        "MCP_RES_OAUTH_PKCE_S256_ACCEPTED"
    );
}

#[test]
fn findings_never_echo_credential_material() {
    let v = generate::oauth_vectors()
        .into_iter()
        .find(|v| v.id == "code-in-redirect-uri")
        .unwrap();
    let report = v.validate();
    let text = serde_json::to_string(&report).unwrap();
    assert!(text.contains(codes::OAUTH_SECRET_PERSISTED));
    assert!(!text.contains("mcp-res-synthetic-code-1"), "{text}");
    for (value, what) in [
        ("Authorization: Bearer mcp-res-synthetic-access-1", true),
        ("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", true),
        // `state` is a CSRF value, not a credential (issue 40, item 17).
        ("http://127.0.0.1:1/cb?state=abc&x=1", false),
        ("http://127.0.0.1:1/cb?state=abc&code=x1", true),
        ("http://127.0.0.1:1/callback", false),
        ("mcp-res-synthetic-client", false),
    ] {
        let found = oauth::credential_material(&Value::String(value.into()), String::new());
        assert_eq!(found.is_some(), what, "{value}");
    }
}

/// JS loads every manifest of the profile directory before picking the OAuth-boundary one
/// (any broken manifest makes the registry unusable); Python reads only
/// `oauth-boundary-v1.json`. mcpres follows JS: the registry is one unit.
#[test]
fn divergence_oauth_with_an_unrelated_broken_manifest() {
    let doc = generate::oauth_evaluation("2026-07-28", &[], None);
    let broken = RegistryVariant::ExperimentalWithoutProvenance.registry();
    assert!(broken.is_err());
    let report = oauth::validate_with(&doc, broken.as_ref());
    assert_eq!(report.primary(), Some(codes::OAUTH_MANIFEST_INVALID));
    // The same document is valid with the shipped registry (what Python would also say here).
    assert!(oauth::validate_oauth_evaluation(&doc).valid);
}

/// Both references judge credential material only by the producer's privacy flags; mcpres
/// also refuses a document whose own strings carry a bearer credential, a JWT or a
/// credential-bearing URI parameter (same code, same position in the rule order).
#[test]
fn divergence_credential_material_in_document_is_mcpres_only() {
    let v = generate::oauth_vectors()
        .into_iter()
        .find(|v| v.id == "code-in-redirect-uri")
        .unwrap();
    assert_eq!(v.doc["privacy"]["tokenMaterialPersisted"], false);
    assert_eq!(
        v.doc["privacy"]["evidenceContainsCredentialMaterial"],
        false
    );
    assert_eq!(v.validate().primary(), Some(codes::OAUTH_SECRET_PERSISTED));
}

#[test]
fn the_binary_agrees_on_every_committed_vector() {
    for (name, vectors) in families() {
        let dir = root().join("testdata").join(name);
        let paths: Vec<PathBuf> = vectors
            .iter()
            .filter(|v| v.registry == RegistryVariant::Builtin)
            .map(|v| dir.join(v.path()))
            .collect();
        let out = support::command()
            .args(["validate", "--format", "json"])
            .args(&paths)
            .output()
            .expect("run mcpres");
        let text = String::from_utf8(out.stdout).unwrap();
        let reports: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(reports.len(), paths.len(), "{text}");
        let builtin: Vec<&Vector> = vectors
            .iter()
            .filter(|v| v.registry == RegistryVariant::Builtin)
            .collect();
        for (v, report) in builtin.iter().zip(&reports) {
            let expected: Vec<&str> = v.expected_findings.first().copied().into_iter().collect();
            assert_eq!(
                report["diagnostics"],
                serde_json::json!(expected),
                "{}",
                v.id
            );
            if let Some(result) = v.result {
                assert_eq!(report["result"], result, "{}", v.id);
            }
        }
        let any_invalid = builtin.iter().any(|v| !v.expected_findings.is_empty());
        assert_eq!(out.status.code(), Some(if any_invalid { 1 } else { 0 }));
    }
}

#[test]
fn registry_matches_the_reference_profile_registry() {
    let Some(corpus) = support::reference_corpus_dir() else {
        eprintln!("skipped: reference corpus not found (set MCPRES_REFERENCE_CORPUS)");
        return;
    };
    let v02 = corpus.join("v0.2.0");
    let reference = read_json(&v02.join("PROFILE_REGISTRY.json"));
    let entries = reference["profiles"].as_array().unwrap();
    let registry = Registry::builtin().unwrap();
    assert_eq!(entries.len(), registry.profiles().len());
    for entry in entries {
        let id = entry["id"].as_str().unwrap();
        let ours = registry
            .get(id)
            .unwrap_or_else(|| panic!("{id} not in our registry"));
        assert_eq!(entry["version"], ours.version.as_str(), "{id}");
        assert_eq!(entry["status"], ours.status.as_str(), "{id}");
        let file = Path::new(entry["manifest"]["path"].as_str().unwrap())
            .file_name()
            .unwrap()
            .to_owned();
        assert_eq!(file.to_string_lossy(), ours.file_name, "{id}");
        // The registry lists the digest of the manifest file's bytes.
        let listed = entry["manifest"]["sha256"].as_str().unwrap();
        assert_eq!(ours.file_sha256, listed, "{id}: file digest");
        let bytes = fs::read(v02.join("profiles").join(&file)).unwrap();
        assert_eq!(sha256_hex(&bytes), listed, "{id}: corpus file digest");
        // Evaluations bind the canonical digest; ours equals the canonical digest of the
        // reference file, and is not the file digest (the files are pretty-printed).
        let parsed = mcpres::json::parse_default(&bytes).unwrap();
        let canonical_digest = canonical::digest(&parsed).unwrap();
        assert_eq!(
            ours.manifest_sha256, canonical_digest,
            "{id}: canonical digest"
        );
        assert_ne!(ours.manifest_sha256, listed, "{id}");
    }
    // Every evaluation schema the registry names is the one our validators use.
    for entry in entries {
        for schema in entry["schemaDigests"].as_array().unwrap() {
            let path = schema["path"].as_str().unwrap();
            assert!(path.ends_with("profile-evaluation.schema.json"), "{path}");
        }
    }
}

#[test]
fn generated_documents_pass_the_reference_schemas_where_valid() {
    // Cross-check against the reference kit's own schemas (when the corpus is present):
    // every valid vector must be accepted by our schema and have the reference shape.
    let Some(corpus) = support::reference_corpus_dir() else {
        eprintln!("skipped: reference corpus not found");
        return;
    };
    let schemas = corpus.join("v0.2.0/schemas");
    for (name, file) in [
        ("profile", "profile-evaluation.schema.json"),
        ("oauth", "oauth-boundary-evaluation.schema.json"),
    ] {
        let schema = read_json(&schemas.join(file));
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let vectors = if name == "profile" {
            generate::profile_vectors()
        } else {
            generate::oauth_vectors()
        };
        for v in vectors.iter().filter(|v| v.expected_findings.is_empty()) {
            let keys: BTreeSet<&str> = v
                .doc
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(keys, required.iter().copied().collect(), "{}", v.id);
        }
    }
}

/// Every required key dropped anywhere in a valid evaluation (objects up to three levels
/// deep) is a schema failure, never a panic or a later rule.
#[test]
fn dropping_any_key_is_a_schema_failure() {
    fn paths(value: &Value, prefix: Vec<String>, depth: usize, out: &mut Vec<Vec<String>>) {
        if depth == 0 {
            return;
        }
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    let mut p = prefix.clone();
                    p.push(k.clone());
                    out.push(p.clone());
                    paths(v, p, depth - 1, out);
                }
            }
            Value::Array(items) => {
                if let Some(first) = items.first() {
                    let mut p = prefix.clone();
                    p.push("0".into());
                    paths(first, p, depth, out);
                }
            }
            _ => {}
        }
    }
    fn remove(doc: &mut Value, path: &[String]) {
        let (last, parents) = path.split_last().unwrap();
        let mut node = doc;
        for p in parents {
            node = match node {
                Value::Array(a) => &mut a[p.parse::<usize>().unwrap()],
                other => &mut other[p.as_str()],
            };
        }
        node.as_object_mut().unwrap().remove(last);
    }
    for (name, vectors) in families() {
        let schema_code = if name == "profile" {
            codes::PROFILE_SCHEMA_INVALID
        } else {
            codes::OAUTH_SCHEMA_INVALID
        };
        let v = vectors.iter().find(|v| v.result == Some("PASS")).unwrap();
        let mut all = Vec::new();
        paths(&v.doc, Vec::new(), 3, &mut all);
        assert!(all.len() > 20, "{name}: {} paths", all.len());
        for path in all {
            // Optional keys of the schema: the remote-target digests.
            if path
                .last()
                .is_some_and(|k| k.ends_with("allowlistSha256") || k == "reviewedTargetSha256")
            {
                continue;
            }
            let mut doc = v.doc.clone();
            remove(&mut doc, &path);
            // Called directly: without `schemaVersion` the dispatch would pick another family.
            let report = if name == "profile" {
                profile::validate_profile_evaluation(&doc)
            } else {
                oauth::validate_oauth_evaluation(&doc)
            };
            assert_eq!(
                report.primary(),
                Some(schema_code),
                "{name}: without {path:?}"
            );
            assert!(!report.schema_errors.is_empty());
        }
    }
}
