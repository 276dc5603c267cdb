//! The committed profile evaluations (`bundles/profiles/`, written by
//! `bundles/profiles/generate.sh` against the reference server,
//! server-everything and a Python `mcp` SDK server) still validate as what they
//! say: a run with no failing check is a valid evaluation, a run with one is
//! invalid with that check's own finding, and every directory rule holds.

mod support;

use std::path::Path;

use serde_json::Value;

#[test]
fn committed_profile_evaluations_validate_as_their_runs_say() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/profiles");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 4, "the committed evaluations are missing");
    let mut subjects = std::collections::BTreeSet::new();
    for dir in &dirs {
        let run = support::read_json(&dir.join("run.json"));
        let evaluation = support::read_json(&dir.join("evaluation.json"));
        subjects.insert(
            dir.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .split('-')
                .next()
                .unwrap()
                .to_string(),
        );
        let failed: Vec<&str> = run["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["verdict"] == "FAIL")
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        let o = support::mcpres(&[
            Path::new("validate"),
            Path::new("--format"),
            Path::new("json"),
            dir,
        ]);
        let report: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{}: {e}: {}", dir.display(), support::output_text(&o)));
        let report = report
            .get("results")
            .and_then(|r| r.get(0))
            .cloned()
            .unwrap_or(report);
        if failed.is_empty() {
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}: {}",
                dir.display(),
                support::output_text(&o)
            );
            assert_ne!(run["result"], "FAIL");
        } else {
            assert_eq!(
                o.status.code(),
                Some(1),
                "{}: {}",
                dir.display(),
                support::output_text(&o)
            );
            assert_eq!(run["result"], "FAIL");
            assert_eq!(evaluation["result"], "FAIL");
            // Only observation findings: the directory itself is intact.
            let diagnostics: Vec<&str> = report["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_str().unwrap())
                .collect();
            assert!(
                diagnostics.iter().all(|d| [
                    "MCP_RES_PROFILE_OUTCOME_MISMATCH",
                    "MCP_RES_PROFILE_NEGATIVE_CONTROL_MISSING",
                    "MCP_RES_PROFILE_WRONG_REASON",
                    "MCP_RES_PROFILE_PROPERTY_NOT_REACHED",
                ]
                .contains(d)),
                "{}: {diagnostics:?}",
                dir.display()
            );
        }
        // What was not observed is never claimed.
        let claimed = evaluation["scope"]["claimedCheckIds"].as_array().unwrap();
        for c in run["checks"].as_array().unwrap() {
            let in_claim = claimed.contains(&c["id"]);
            assert_eq!(
                in_claim,
                c["verdict"] != "NOT_OBSERVED",
                "{}: {}",
                dir.display(),
                c["id"]
            );
        }
    }
    for subject in ["reference", "everything", "python"] {
        assert!(
            subjects.contains(subject),
            "no committed evaluation of {subject}"
        );
    }
}
