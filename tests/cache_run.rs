//! `mcpres profile run cache-behavior` through the binary: the reference server and the
//! honest cache test subject pass every check a stdio run observes; each defect of the
//! test subject (and the reference server's `cache-stale-poisoned` fault) fails exactly
//! the check about it; every evaluation written is validated; a label its record does
//! not give is refused by `validate`; the experimental check is never run.

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;

use support::{mcpres, output_text, read_json, reseal};

const NOT_ON_STDIO: [&str; 3] = [
    "user-tenant-separation",
    "expiry",
    "capability-change-invalidation",
];

fn subject() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/subjects/cache_subject.py")
        .display()
        .to_string()
}

/// Run the profile (the named checks, or all) against `command`; the evaluation
/// directory, the exit code and run.json's (id, verdict, reason) by check.
fn run(
    tmp: &tempfile::TempDir,
    name: &str,
    checks: &[&str],
    command: &[String],
) -> (PathBuf, i32, Vec<(String, String, String)>) {
    let out = tmp.path().join(name);
    let mut args: Vec<String> = vec![
        "profile".into(),
        "run".into(),
        "cache-behavior".into(),
        "-o".into(),
        out.display().to_string(),
    ];
    if !checks.is_empty() {
        args.push("--checks".into());
        args.push(checks.join(","));
    }
    args.push("--".into());
    args.extend(command.iter().cloned());
    let o = mcpres(&args);
    let verdicts = support::profile_verdicts(&out, &o);
    (out, o.status.code().unwrap_or(-1), verdicts)
}

fn python(flags: &[&str]) -> Vec<String> {
    let mut c = vec!["python3".to_string(), subject()];
    c.extend(flags.iter().map(|f| f.to_string()));
    c
}

fn reference(flags: &[&str]) -> Vec<String> {
    let mut c = vec![support::exe().display().to_string(), "serve".to_string()];
    c.extend(flags.iter().map(|f| f.to_string()));
    c
}

/// `mcpres validate DIR`: its exit code and output.
fn validate(dir: &Path) -> (i32, String) {
    let o = mcpres(&["validate".to_string(), dir.display().to_string()]);
    (o.status.code().unwrap_or(-1), output_text(&o))
}

/// Every check a stdio run observes passes, the other three are not observed, and the
/// evaluation is valid.
fn passes_all_it_observes(tmp: &tempfile::TempDir, name: &str, command: &[String]) {
    let (dir, code, verdicts) = run(tmp, name, &[], command);
    assert_eq!(verdicts.len(), 13, "{verdicts:?}");
    for (id, verdict, reason) in &verdicts {
        if NOT_ON_STDIO.contains(&id.as_str()) {
            assert_eq!(verdict, "NOT_OBSERVED", "{id}");
            let run = read_json(&dir.join("run.json"));
            let detail = run["checks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["id"] == id.as_str())
                .and_then(|c| c["detail"].as_str())
                .unwrap_or_default()
                .to_string();
            assert!(
                detail.starts_with("MCP_RES_CACHE_NOT_OBSERVABLE_ON_STDIO"),
                "{id}: {detail}"
            );
        } else {
            assert_eq!(verdict, "PASS", "{name} {id}: {reason}");
        }
    }
    assert_eq!(code, 0);
    let (vcode, text) = validate(&dir);
    assert_eq!(vcode, 0, "{text}");
    let ev = read_json(&dir.join("evaluation.json"));
    assert_eq!(ev["profile"]["id"], "mcp-res/cache-behavior/v1");
    assert_eq!(ev["profile"]["protocolRevision"], "2026-07-28");
    assert_eq!(ev["checks"].as_array().unwrap().len(), 10);
    // Ten checks of thirteen: a bounded check set, never the full profile.
    assert_eq!(ev["scope"]["claim"], "BOUNDED_CHECK_SET");
}

#[test]
fn the_reference_server_and_the_honest_subject_pass_what_stdio_observes() {
    let tmp = tempfile::tempdir().unwrap();
    passes_all_it_observes(&tmp, "reference", &reference(&[]));
    passes_all_it_observes(&tmp, "honest", &python(&[]));
}

#[test]
fn each_defect_fails_its_own_check() {
    let tmp = tempfile::tempdir().unwrap();
    for (defect, check, reason) in [
        ("no-ttl", "ttl-ms", "MCP_RES_CACHE_TTL_INVALID"),
        ("bad-scope", "cache-scope", "MCP_RES_CACHE_SCOPE_INVALID"),
        ("mixed-key", "cache-key-identity", "MCP_RES_CACHE_KEY_MIXED"),
        (
            "any-revision",
            "protocol-revision-keying",
            "MCP_RES_CACHE_REVISION_NOT_KEYED",
        ),
        (
            "stale-stamp",
            "subject-version-keying",
            "MCP_RES_CACHE_VERSION_KEY_MISMATCH",
        ),
        ("drift", "stale-result", "MCP_RES_CACHE_STALE_WITHIN_TTL"),
        (
            "unreadable",
            "list-resource-consistency",
            "MCP_RES_CACHE_LISTED_NOT_READABLE",
        ),
        (
            "absent-cached",
            "negative-caching",
            "MCP_RES_CACHE_ABSENT_CACHED",
        ),
        (
            "poison",
            "cache-poisoning-boundary",
            "MCP_RES_CACHE_POISONED",
        ),
        (
            "personal",
            "personalized-data-not-public",
            "MCP_RES_CACHE_PERSONAL_PUBLIC",
        ),
    ] {
        // The defect fails its check, and that check only.
        let (dir, code, verdicts) = run(&tmp, defect, &[], &python(&["--break", defect]));
        for (id, verdict, why) in &verdicts {
            if id == check {
                assert_eq!(
                    (verdict.as_str(), why.as_str()),
                    ("FAIL", reason),
                    "{defect}"
                );
            } else {
                // (A list without ttlMs promises nothing fresh: stale-result is then
                // not observed.)
                assert_ne!(verdict, "FAIL", "{defect} {id}: {why}");
            }
        }
        assert_eq!(code, 1, "{defect}");
        // validate re-judges the stored bytes and refuses the failed claim.
        let (vcode, text) = validate(&dir);
        assert_eq!(vcode, 1, "{defect}: {text}");
        assert!(text.contains("MCP_RES_PROFILE_OUTCOME_MISMATCH"), "{text}");
    }
}

#[test]
fn the_reference_servers_stale_poisoned_cache_fails_version_keying() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, code, verdicts) = run(
        &tmp,
        "poisoned",
        &[],
        &reference(&["--fault", "cache-stale-poisoned@always"]),
    );
    let failed: Vec<&(String, String, String)> =
        verdicts.iter().filter(|(_, v, _)| v == "FAIL").collect();
    assert_eq!(
        failed
            .iter()
            .map(|(id, _, r)| (id.as_str(), r.as_str()))
            .collect::<Vec<_>>(),
        [(
            "subject-version-keying",
            "MCP_RES_CACHE_VERSION_KEY_MISMATCH"
        )],
        "{verdicts:?}"
    );
    assert_eq!(code, 1);
}

/// The control's observation relabelled as the positive's reading (its stored bytes
/// unchanged, every digest recomputed) is refused by `validate`: the label is not what
/// the record gives.
#[test]
fn a_label_its_record_does_not_give_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _, _) = run(&tmp, "honest", &["ttl-ms"], &python(&[]));
    let path = dir.join("artifacts/ttl-ms/negative.json");
    let mut doc: Value = read_json(&path);
    assert_eq!(doc["observedReasonCode"], "MCP_RES_CACHE_TTL_INVALID");
    doc["observedOutcome"] = "ACCEPT".into();
    doc["observedReasonCode"] = "MCP_RES_CACHE_TTL_PRESENT".into();
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let resealed = tmp.path().join("resealed");
    reseal(&dir, &resealed);
    let (code, text) = validate(&resealed);
    assert_ne!(code, 0, "{text}");
    assert!(text.contains("MCP_RES_CACHE_TTL_INVALID"), "{text}");
}

#[test]
fn the_experimental_check_and_other_revisions_are_refused_before_anything_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("never");
    for (args, says) in [
        (
            vec!["--checks", "etag-revalidation"],
            "is experimental: it never enters a claim or a result",
        ),
        (
            vec!["--revision", "2025-11-25"],
            "does not cover revision 2025-11-25",
        ),
    ] {
        let mut a: Vec<String> = vec!["profile".into(), "run".into(), "cache-behavior".into()];
        a.extend(args.iter().map(|s| s.to_string()));
        a.extend(["-o".into(), out.display().to_string(), "--".into()]);
        a.extend(python(&[]));
        let o = mcpres(&a);
        assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
        assert!(output_text(&o).contains(says), "{}", output_text(&o));
        assert!(!out.exists());
    }
}
