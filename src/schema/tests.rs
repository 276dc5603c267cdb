//! Unit tests for the embedded schemas and the validation entry points.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::*;

/// The reference corpus: `$MCPRES_REFERENCE_CORPUS`, else `../shared/reference-corpus` from the
/// crate root. `None` (with a message) when neither exists.
fn corpus_dir() -> Option<PathBuf> {
    let candidate = match std::env::var_os("MCPRES_REFERENCE_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/reference-corpus"),
    };
    let found = candidate.join("v0.2.0").is_dir().then_some(candidate);
    if found.is_none() {
        eprintln!("skipped: reference corpus not found (set MCPRES_REFERENCE_CORPUS)");
    }
    found
}

fn corpus_json(relative: &str) -> Option<Value> {
    let path = corpus_dir()?.join(relative);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    Some(serde_json::from_str(&text).expect("corpus file is JSON"))
}

fn valid_bundle() -> Option<Value> {
    corpus_json("v0.2.0/test-vectors/valid/repeated-stable.json")
}

fn has_error(errors: &[SchemaError], pointer: &str, keyword: &str) -> bool {
    errors
        .iter()
        .any(|e| e.instance_path == pointer && e.keyword == keyword)
}

fn trust_policy() -> Value {
    json!({
        "schemaVersion": "mcp-res.trust-policy/0.2.0",
        "id": "policy-1",
        "version": "1.0.0",
        "validFrom": "2026-01-01T00:00:00Z",
        "validUntil": "2027-01-01T00:00:00Z",
        "requiredAlgorithm": "Ed25519",
        "trustedSigners": [{ "keyFingerprint": "a".repeat(64), "signerIdentity": "ci@example" }],
        "revokedKeyFingerprints": []
    })
}

fn profile_manifest() -> Value {
    json!({
        "schemaVersion": "mcp-res.reliability-profile-manifest/0.2.0",
        "id": "mcp-res/example/v1",
        "version": "1.0.0",
        "status": "PROVISIONAL",
        "protocolRevisions": ["2025-11-25"],
        "sourceRefs": ["https://modelcontextprotocol.io/specification/2025-11-25"],
        "requiredChecks": ["ab"],
        "conditionalChecks": [],
        "experimentalChecks": [],
        "remotePolicy": "DENY_BY_DEFAULT_REVIEWED_ALLOWLIST_ONLY",
        "compositionBoundary": "x"
    })
}

#[test]
fn every_kind_compiles_and_is_self_consistent() {
    for kind in SchemaKind::ALL {
        precompile(kind).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let schema: Value = serde_json::from_str(source(kind)).expect("schema is JSON");
        assert_eq!(schema["$id"], kind.schema_id(), "{kind}");
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{kind}"
        );
        assert_eq!(
            kind.schema_id(),
            format!("{SCHEMA_ID_BASE}{}", kind.file_name())
        );
        assert_eq!(SchemaKind::from_file_name(kind.file_name()), Some(kind));
        assert_eq!(format!("{kind}.schema.json"), kind.file_name());
        // The schemaVersion const in the schema text and the table agree.
        let constant = schema["properties"]["schemaVersion"]["const"].as_str();
        assert_eq!(constant, kind.schema_version(), "{kind}");
    }
    // ALL is in declaration order and complete; the standard kinds come first.
    for (index, kind) in SchemaKind::ALL.into_iter().enumerate() {
        assert_eq!(kind.index(), index);
    }
    assert_eq!(
        SchemaKind::ALL[..SchemaKind::STANDARD.len()],
        SchemaKind::STANDARD
    );
    assert_eq!(
        SchemaKind::ALL[SchemaKind::STANDARD.len()..],
        [SchemaKind::ProfileRun, SchemaKind::FieldMatrix]
    );
}

#[test]
fn schema_version_mapping() {
    assert_eq!(
        SchemaKind::from_schema_version("mcp-res.conformance-bundle/0.2.0"),
        Some(SchemaKind::ConformanceBundle)
    );
    assert_eq!(
        SchemaKind::from_schema_version("mcp-res.authenticity/0.2.0"),
        Some(SchemaKind::AuthenticityRecord)
    );
    assert_eq!(
        SchemaKind::from_schema_version("mcp-res.conformance-bundle/0.1.0"),
        None
    );
    assert_eq!(SchemaKind::from_schema_version(""), None);
    let mapped = SchemaKind::ALL
        .into_iter()
        .filter(|k| k.schema_version().is_some())
        .count();
    assert_eq!(mapped, 18);
    for kind in SchemaKind::ALL {
        if let Some(version) = kind.schema_version() {
            assert_eq!(SchemaKind::from_schema_version(version), Some(kind));
            assert_eq!(
                SchemaKind::detect(&json!({ "schemaVersion": version })),
                Some(kind)
            );
        }
    }
    assert_eq!(
        SchemaKind::detect(&json!({ "_type": "https://in-toto.io/Statement/v1" })),
        Some(SchemaKind::AttestationStatement)
    );
    assert_eq!(SchemaKind::detect(&json!([1])), None);
}

#[test]
fn corpus_bundle_and_parts_validate() {
    let Some(bundle) = valid_bundle() else { return };
    assert_eq!(validate(SchemaKind::ConformanceBundle, &bundle), vec![]);
    assert!(is_valid(SchemaKind::ConformanceBundle, &bundle));
    let evidence = &bundle["evidence"];
    assert!(is_valid(SchemaKind::EvidenceEnvelope, evidence));
    assert!(is_valid(
        SchemaKind::ConformanceStatement,
        &bundle["statement"]
    ));
    assert!(is_valid(
        SchemaKind::IntegrityManifest,
        &bundle["integrity"]
    ));
    assert!(is_valid(
        SchemaKind::ObservationCoverage,
        &evidence["coverage"]
    ));
    assert!(is_valid(
        SchemaKind::TrialSummary,
        &evidence["trialSummary"]
    ));
    for observation in evidence["observations"].as_array().expect("array") {
        assert_eq!(validate(SchemaKind::Observation, observation), vec![]);
    }
    // A part is not a bundle.
    assert!(!is_valid(SchemaKind::ConformanceBundle, evidence));
}

#[test]
fn corpus_profiles_validate() {
    let Some(dir) = corpus_dir() else { return };
    let mut seen = 0;
    for entry in std::fs::read_dir(dir.join("v0.2.0/profiles")).expect("profiles dir") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        let value: Value = serde_json::from_str(&text).expect("JSON");
        let errors = validate(SchemaKind::ReliabilityProfileManifest, &value);
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        seen += 1;
    }
    assert!(seen > 0);
}

#[test]
fn targeted_rejections_name_keyword_and_pointer() {
    let Some(bundle) = valid_bundle() else { return };

    let mut missing = bundle.clone();
    missing["evidence"]["run"]
        .as_object_mut()
        .expect("run")
        .remove("finishedAt");
    let errors = validate(SchemaKind::ConformanceBundle, &missing);
    assert!(
        has_error(&errors, "/evidence/run", "required"),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e.message.contains("'finishedAt'")));

    let mut unknown = bundle.clone();
    unknown["evidence"]["actualRuntime"] = json!(true);
    let errors = validate(SchemaKind::ConformanceBundle, &unknown);
    assert!(
        has_error(&errors, "/evidence", "additionalProperties"),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e.message.contains("'actualRuntime'")));

    let mut bad_enum = bundle.clone();
    bad_enum["evidence"]["protocolRevision"] = json!("2024-01-01");
    let errors = validate(SchemaKind::ConformanceBundle, &bad_enum);
    assert!(
        has_error(&errors, "/evidence/protocolRevision", "enum"),
        "{errors:?}"
    );

    let mut bad_digest = bundle.clone();
    bad_digest["statement"]["evidenceSha256"] = json!("ABC");
    let errors = validate(SchemaKind::ConformanceBundle, &bad_digest);
    assert!(
        has_error(&errors, "/statement/evidenceSha256", "pattern"),
        "{errors:?}"
    );

    let mut bad_time = bundle.clone();
    bad_time["evidence"]["run"]["startedAt"] = json!("2026-01-01T00:00:00");
    let errors = validate(SchemaKind::ConformanceBundle, &bad_time);
    assert!(
        has_error(&errors, "/evidence/run/startedAt", "format"),
        "{errors:?}"
    );

    let mut bad_items = bundle.clone();
    bad_items["integrity"]["artifacts"] = json!([]);
    let errors = validate(SchemaKind::ConformanceBundle, &bad_items);
    assert!(
        has_error(&errors, "/integrity/artifacts", "minItems"),
        "{errors:?}"
    );

    let mut bad_type = bundle.clone();
    bad_type["evidence"]["trialSummary"]["durationMs"] = json!("fast");
    let errors = validate(SchemaKind::ConformanceBundle, &bad_type);
    assert!(
        has_error(&errors, "/evidence/trialSummary/durationMs", "type"),
        "{errors:?}"
    );

    let mut bad_const = bundle.clone();
    bad_const["integrity"]["complete"] = json!(false);
    let errors = validate(SchemaKind::ConformanceBundle, &bad_const);
    assert!(
        has_error(&errors, "/integrity/complete", "const"),
        "{errors:?}"
    );

    let mut bad_max = bundle;
    bad_max["evidence"]["run"]["monotonicDurationMs"] = json!(14_400_001);
    let errors = validate(SchemaKind::ConformanceBundle, &bad_max);
    assert!(
        has_error(&errors, "/evidence/run/monotonicDurationMs", "maximum"),
        "{errors:?}"
    );
}

#[test]
fn reports_all_errors_not_just_the_first() {
    let Some(mut bundle) = valid_bundle() else {
        return;
    };
    bundle["evidence"]["protocolRevision"] = json!("nope");
    bundle["statement"]["result"] = json!("MAYBE");
    bundle["integrity"]["extra"] = json!(1);
    bundle["integrity"]["surplus"] = json!(2);
    let errors = validate(SchemaKind::ConformanceBundle, &bundle);
    assert!(has_error(&errors, "/evidence/protocolRevision", "enum"));
    assert!(has_error(&errors, "/statement/result", "enum"));
    let unknown: Vec<_> = errors
        .iter()
        .filter(|e| e.instance_path == "/integrity" && e.keyword == "additionalProperties")
        .collect();
    assert_eq!(unknown.len(), 2, "{errors:?}");
}

#[test]
fn date_time_follows_rfc_3339_and_the_references() {
    let accepted = [
        "2026-01-01T00:00:00Z",
        "2026-01-01t00:00:00z",
        "2026-01-01T00:00:00.123456789+05:30",
        "2026-01-01T00:00:00-00:00",
        "2016-12-31T23:59:60Z",
        "2016-12-31t23:59:60.5z",
        "2016-12-31T18:59:60-05:00",
        "2024-02-29T12:00:00Z",
        // Beyond RFC 3339, as both references accept (spec/conformance.md, entry 17).
        "2026-01-01 00:00:00Z",
        "2026-01-01T00:00:00+0100",
        "2026-01-01T00:00:00+01",
    ];
    let rejected = [
        "2026-01-01T00:00:00",
        "2026-01-01x00:00:00Z",
        "2026-01-01T00:00:00+010",
        "2026-01-01T00:00Z",
        "2026-01-01T24:00:00Z",
        "2026-01-01T00:00:61Z",
        "2026-06-30T12:00:60Z",
        "2026-02-29T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-01-01T00:00:00.Z",
        "26-01-01T00:00:00Z",
        "2026-01-01",
        "",
        "T",
        "2026-01-01T00:00:00Z ",
        "２026-01-01T00:00:00Z",
        "2026-01-01T00:00:00\u{1F600}",
    ];
    let mut policy = trust_policy();
    for value in accepted {
        policy["validFrom"] = json!(value);
        assert_eq!(
            validate(SchemaKind::TrustPolicy, &policy),
            vec![],
            "{value}"
        );
    }
    for value in rejected {
        policy["validFrom"] = json!(value);
        let errors = validate(SchemaKind::TrustPolicy, &policy);
        assert!(
            has_error(&errors, "/validFrom", "format"),
            "{value}: {errors:?}"
        );
    }
}

#[test]
fn uri_format_is_asserted() {
    let mut manifest = profile_manifest();
    assert_eq!(
        validate(SchemaKind::ReliabilityProfileManifest, &manifest),
        vec![]
    );
    for bad in ["not a uri", "/relative/path", "", "http://exa mple.com/"] {
        manifest["sourceRefs"] = json!([bad]);
        let errors = validate(SchemaKind::ReliabilityProfileManifest, &manifest);
        assert!(
            has_error(&errors, "/sourceRefs/0", "format"),
            "{bad}: {errors:?}"
        );
    }
}

#[test]
fn messages_do_not_quote_values() {
    let secret = "sk-live-0123456789abcdef";
    let mut policy = trust_policy();
    policy["version"] = json!(secret);
    policy["validUntil"] = json!(secret);
    policy["trustedSigners"][0]["keyFingerprint"] = json!(secret);
    let errors = validate(SchemaKind::TrustPolicy, &policy);
    assert!(errors.len() >= 3, "{errors:?}");
    for error in &errors {
        assert!(!error.message.contains(secret), "{error:?}");
    }
}

#[test]
fn arbitrary_values_never_panic() {
    let deep = (0..100).fold(json!("x"), |acc, _| json!([acc]));
    let values = [
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1.5),
        json!("x".repeat(1 << 20)),
        json!("\u{10FFFF}"),
        json!([]),
        json!({}),
        json!({ "schemaVersion": null }),
        json!({ "": { "~/": [] } }),
        deep,
    ];
    for kind in SchemaKind::ALL {
        for value in &values {
            let errors = validate(kind, value);
            assert!(!errors.is_empty(), "{kind} accepted {value:.40}");
            assert!(!is_valid(kind, value));
            for error in errors {
                assert!(!error.keyword.is_empty());
                assert!(!error.message.is_empty());
                assert!(error.message.len() < 2048);
            }
        }
    }
}

#[test]
fn pointers_use_array_indexes() {
    let mut policy = trust_policy();
    policy["trustedSigners"][0]["keyFingerprint"] = json!("A".repeat(64));
    policy["trustedSigners"][0]["a/b~c"] = json!(1);
    let errors = validate(SchemaKind::TrustPolicy, &policy);
    assert!(
        has_error(&errors, "/trustedSigners/0/keyFingerprint", "pattern"),
        "{errors:?}"
    );
    assert!(
        has_error(&errors, "/trustedSigners/0", "additionalProperties"),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e.message.contains("'a/b~c'")));
}

#[test]
fn serializes_in_reference_shape() {
    let error = SchemaError {
        instance_path: "/a".into(),
        keyword: "required".into(),
        message: "m".into(),
    };
    assert_eq!(
        serde_json::to_value(&error).expect("serialize"),
        json!({ "instancePath": "/a", "keyword": "required", "message": "m" })
    );
    assert_eq!(error.to_string(), "/a: m (required)");
}

#[test]
fn migration_original_bundle_stays_open() {
    // The preserved v0.1 bundle is deliberately open (as in the reference schema): extra keys
    // there are accepted, while the migration result itself stays closed.
    let digest = "b".repeat(64);
    let mut result = json!({
        "schemaVersion": "mcp-res.migration-result/0.2.0",
        "source": { "standardVersion": "0.1.0", "evidenceSha256": digest, "bundleFileSha256": digest },
        "target": {
            "standardVersion": "0.2.0",
            "status": "INCOMPLETE",
            "evidenceClass": "DOCUMENTED_ONLY",
            "authenticityClassification": "UNSIGNED_INTEGRITY_ONLY",
            "stabilityClassification": "SINGLE_OBSERVATION",
            "legacyAssertions": [{ "name": "n", "value": true, "strength": "LEGACY_SELF_ASSERTED" }],
            "unresolvedRequirements": ["r"]
        },
        "migration": {
            "from": "0.1.0",
            "to": "0.2.0",
            "tool": { "name": "mcp-res-migrate", "version": "0.2.0", "sha256": digest },
            "inputOverwritten": false,
            "fabricatedEvidence": false
        },
        "report": {
            "status": "INCOMPLETE",
            "preservedEvidenceSha256": digest,
            "preservedEvidenceClass": "DOCUMENTED_ONLY",
            "legacyAssertionCount": 1,
            "unresolvedRequirements": ["r"],
            "warnings": ["w"]
        },
        "originalBundle": {
            "schemaVersion": "mcp-res.conformance-bundle/0.1.0",
            "evidence": { "anything": [1, 2] },
            "statement": {},
            "integrity": {},
            "extra": true
        }
    });
    assert_eq!(validate(SchemaKind::MigrationResult, &result), vec![]);
    result["extra"] = json!(true);
    let errors = validate(SchemaKind::MigrationResult, &result);
    assert!(has_error(&errors, "", "additionalProperties"), "{errors:?}");
}

/// Collects every `pattern` string in a schema document.
fn patterns(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("pattern", Value::String(p)) => out.push(p.clone()),
                    _ => patterns(child, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| patterns(item, out)),
        _ => {}
    }
}

#[test]
fn patterns_avoid_engine_dependent_syntax() {
    // ECMA-262 `.` excludes line terminators while many engines only exclude `\n`; our patterns
    // spell the class out, so every regex engine (ours, the fast path, other implementations)
    // decides the same. Likewise no `\d`, `\w`, `\s` or `\b`, whose meaning differs by engine.
    for kind in SchemaKind::ALL {
        let schema: Value = serde_json::from_str(source(kind)).expect("JSON");
        let mut found = Vec::new();
        patterns(&schema, &mut found);
        for pattern in found {
            let mut in_class = false;
            let mut chars = pattern.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        let escaped = chars.next().expect("escape is complete");
                        assert!(
                            !"dDwWsSbB".contains(escaped),
                            "{kind}: pattern {pattern} uses \\{escaped}"
                        );
                    }
                    '[' => in_class = true,
                    ']' => in_class = false,
                    '.' if !in_class => panic!("{kind}: pattern {pattern} uses a bare '.'"),
                    _ => {}
                }
            }
            assert!(
                pattern.starts_with('^') && pattern.ends_with('$'),
                "{pattern}"
            );
        }
    }
}

#[test]
fn check_references_exclude_line_terminators() {
    let schema: Value =
        serde_json::from_str(source(SchemaKind::OfficialConformanceAttachment)).expect("JSON");
    let pattern = schema["$defs"]["checkRefList"]["items"]["pattern"]
        .as_str()
        .expect("pattern");
    let validator = jsonschema::options()
        .with_draft(Draft::Draft202012)
        .build(&json!({ "type": "string", "pattern": pattern }))
        .expect("compiles");
    assert!(validator.is_valid(&json!("scenario:check")));
    assert!(validator.is_valid(&json!("a:\u{1F600}")));
    assert!(validator.is_valid(&json!("a:b:c")));
    for bad in [
        "scenario:",
        ":check",
        "a:b\r",
        "a\n:b",
        "a:\u{2028}",
        "\u{2029}:b",
        "ab",
    ] {
        assert!(!validator.is_valid(&json!(bad)), "{bad:?}");
    }
}

/// A run record as `mcpres profile run` writes it: one observed and one unobserved check.
fn profile_run() -> Value {
    json!({
        "schemaVersion": "mcpres.profile-run/1",
        "profile": {"id": "mcp-res/stdio-transport/v1", "protocolRevision": "2026-07-28"},
        "evaluationFileSha256": "a".repeat(64),
        "result": "INCOMPLETE",
        "checks": [
            {
                "id": "oversized-line",
                "kind": "REQUIRED",
                "verdict": "PASS",
                "reason": "MCP_RES_OVERSIZED_LINE_REJECTED",
                "detail": "The oversized line was refused and the mutant killed.",
                "positive": "artifacts/oversized-line/positive.json",
                "negative": "artifacts/oversized-line/negative.json",
                "mutant": "artifacts/oversized-line/mutant.json",
                "mutantKilled": true
            },
            {
                "id": "partial-line",
                "kind": "REQUIRED",
                "verdict": "NOT_OBSERVED",
                "reason": "not-selected",
                "detail": "Not selected for this run.",
                "positive": null,
                "negative": null,
                "mutant": null,
                "mutantKilled": null
            }
        ],
        "artifacts": [
            {"path": "artifacts/oversized-line/positive.json", "sha256": "b".repeat(64), "bytes": 120}
        ]
    })
}

#[test]
fn profile_run_schema_is_closed_and_both_engines_agree() {
    let valid = profile_run();
    assert_eq!(validate(SchemaKind::ProfileRun, &valid), vec![]);
    assert!(engine_is_valid(SchemaKind::ProfileRun, &valid));
    assert_eq!(fast::is_valid(SchemaKind::ProfileRun, &valid), Some(true));
    assert_eq!(SchemaKind::detect(&valid), Some(SchemaKind::ProfileRun));
    let edits: [(&str, Value); 9] = [
        ("/extra", json!(1)),
        ("/checks/0/extra", json!(1)),
        ("/artifacts/0/extra", json!(1)),
        ("/checks/0/verdict", json!("SKIPPED")),
        ("/checks/0/kind", json!("EXPERIMENTAL")),
        ("/checks/0/mutantKilled", json!("yes")),
        ("/checks/0/detail", json!("x".repeat(401))),
        ("/evaluationFileSha256", json!("A".repeat(64))),
        ("/artifacts/0/bytes", json!(-1)),
    ];
    for (pointer, value) in edits {
        let mut doc = valid.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        doc.pointer_mut(parent).unwrap()[key] = value;
        assert!(
            !validate(SchemaKind::ProfileRun, &doc).is_empty(),
            "{pointer}"
        );
        assert!(!engine_is_valid(SchemaKind::ProfileRun, &doc), "{pointer}");
        assert!(!is_valid(SchemaKind::ProfileRun, &doc), "{pointer}");
    }
    let mut missing = valid.clone();
    missing["checks"][1]
        .as_object_mut()
        .unwrap()
        .remove("mutant");
    assert!(!is_valid(SchemaKind::ProfileRun, &missing));
}

/// A field matrix with one leg that ran and one that did not.
fn field_matrix() -> Value {
    let sha = |c: char| c.to_string().repeat(64);
    json!({
        "schemaVersion": "mcpres.field-matrix/1",
        "generator": {"name": "mcpres", "version": "0.1.0"},
        "matrixFileSha256": sha('a'),
        "result": "INCOMPLETE",
        "summary": {"legs": 2, "pass": 1, "fail": 0, "incomplete": 0, "notRun": 1},
        "legs": [
            {
                "id": "ref",
                "result": "PASS",
                "directory": "legs/ref",
                "transport": "stdio",
                "protocolRevision": "2025-11-25",
                "os": {"platform": "linux", "kernelRelease": "6.1.0"},
                "runtime": {"name": "other", "version": "native (mcpres)"},
                "language": "OTHER",
                "subject": {"name": "s", "version": "1", "artifactSha256": sha('b')},
                "profile": {"id": "mcp-res/stdio-transport/v1", "version": "1.0.0", "manifestSha256": sha('c')},
                "checkSet": {"requested": ["interruption"], "claim": "BOUNDED_CHECK_SET", "claimedCheckIds": ["interruption"]},
                "declared": {"language": null, "runtime": null, "subjectSha256": null},
                "declarationMismatches": [],
                "cleanPath": {"held": 1, "total": 1},
                "expectedFailure": {"held": 1, "total": 1},
                "wrongReasonControl": {"killed": 1, "total": 1, "surviving": []},
                "interruption": {"evaluated": true, "checks": [
                    {"id": "interruption", "verdict": "PASS"},
                    {"id": "process-exit", "verdict": "NOT_EVALUATED"}
                ]},
                "cleanup": {"observed": true},
                "evaluation": {"evaluationSha256": sha('d'), "evaluationFileSha256": sha('e'), "runFileSha256": sha('f')},
                "failedChecks": [],
                "notObservedChecks": []
            },
            {
                "id": "unset",
                "result": "NOT_RUN",
                "directory": null,
                "notRunReason": "the environment variable X is not set",
                "transport": "stdio",
                "protocolRevision": "2026-07-28",
                "os": {"platform": "linux", "kernelRelease": "6.1.0"},
                "profile": {"id": "mcp-res/stdio-transport/v1", "version": "1.0.0", "manifestSha256": sha('c')},
                "checkSet": {"requested": null},
                "declared": {"language": "PYTHON", "runtime": null, "subjectSha256": null}
            }
        ]
    })
}

#[test]
fn field_matrix_schema_is_closed_and_both_engines_agree() {
    let valid = field_matrix();
    assert_eq!(validate(SchemaKind::FieldMatrix, &valid), vec![]);
    assert!(engine_is_valid(SchemaKind::FieldMatrix, &valid));
    assert_eq!(fast::is_valid(SchemaKind::FieldMatrix, &valid), Some(true));
    assert_eq!(SchemaKind::detect(&valid), Some(SchemaKind::FieldMatrix));
    let edits: [(&str, Value); 10] = [
        ("/extra", json!(1)),
        ("/legs/0/extra", json!(1)),
        ("/legs/1/extra", json!(1)),
        ("/legs/0/result", json!("NOT_RUN")),
        ("/legs/1/directory", json!("legs/unset")),
        ("/legs/0/cleanPath/held", json!(-1)),
        ("/legs/0/interruption/checks/0/verdict", json!("SKIPPED")),
        ("/legs/0/directory", json!("../elsewhere")),
        ("/legs/0/id", json!("Upper")),
        ("/result", json!("NOT_RUN")),
    ];
    for (pointer, value) in edits {
        let mut doc = valid.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        doc.pointer_mut(parent).unwrap()[key] = value;
        assert!(
            !validate(SchemaKind::FieldMatrix, &doc).is_empty(),
            "{pointer}"
        );
        assert!(!engine_is_valid(SchemaKind::FieldMatrix, &doc), "{pointer}");
        assert!(!is_valid(SchemaKind::FieldMatrix, &doc), "{pointer}");
    }
    let mut missing = valid.clone();
    missing["legs"][0]
        .as_object_mut()
        .unwrap()
        .remove("wrongReasonControl");
    assert!(!is_valid(SchemaKind::FieldMatrix, &missing));
}
