//! `mcpres validate DIR` on a folder that holds bundles (issue 15, item 14):
//! a campaign written by `mcpres run` (its parts validated and its
//! campaign.json checked against them) and a folder of single-file bundles;
//! and a trust policy given as a document to validate is named for what it
//! is.

mod support;

use serde_json::Value;
use support::*;

#[test]
fn a_campaign_folder_is_validated_part_by_part_and_its_summary_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("campaign");
    let exe = exe().display().to_string();
    let o = mcpres(&[
        "run",
        "--trials",
        "9",
        "-o",
        out.to_str().unwrap(),
        "--",
        &exe,
        "serve",
        "--transport",
        "stdio",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let r: Run = mcpres(&["validate", out.to_str().unwrap()]).into();
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("part-001: valid"), "{}", r.stdout);
    assert!(r.stdout.contains("part-002: valid"), "{}", r.stdout);
    assert!(
        r.stderr.contains("campaign.json matches its 2 part(s)"),
        "{}",
        r.stderr
    );
    // A summary that disagrees with its parts fails.
    let summary = out.join("campaign.json");
    let mut doc: Value = read_json(&summary);
    doc["parts"][1]["bundleDigest"] = Value::from("0".repeat(64));
    std::fs::write(&summary, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let r: Run = mcpres(&["validate", out.to_str().unwrap()]).into();
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("part part-002: campaign.json lists bundleDigest 000"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_folder_of_single_file_bundles_is_validated_file_by_file() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("bundles");
    std::fs::create_dir(&folder).unwrap();
    let good = mcpres::produce::builder::synthetic_bundle(6).unwrap();
    std::fs::write(
        folder.join("a-good.json"),
        serde_json::to_vec(&good).unwrap(),
    )
    .unwrap();
    let mut bad = good.clone();
    bad["statement"]["result"] = Value::from("NOT-A-RESULT");
    std::fs::write(folder.join("b-bad.json"), serde_json::to_vec(&bad).unwrap()).unwrap();
    std::fs::write(folder.join("notes.txt"), "not a bundle").unwrap();
    let r: Run = mcpres(&["validate", folder.to_str().unwrap()]).into();
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("a-good.json: valid"), "{}", r.stdout);
    assert!(r.stdout.contains("b-bad.json: invalid"), "{}", r.stdout);
    assert!(!r.stdout.contains("notes.txt"), "{}", r.stdout);
    assert!(r.stderr.contains("checked 2 inputs"), "{}", r.stderr);
    // A folder with nothing to validate is still refused.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let r: Run = mcpres(&["validate", empty.to_str().unwrap()]).into();
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
}

#[test]
fn a_trust_policy_given_to_validate_is_named_for_what_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let policy = tmp.path().join("policy.json");
    let o = mcpres(&[
        "trust-policy",
        "init",
        "--id",
        "policy/folders",
        "--valid-from",
        "2026-01-01T00:00:00Z",
        "--valid-until",
        "2027-01-01T00:00:00Z",
        "-o",
        policy.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let r: Run = mcpres(&["validate", "--format", "json", policy.to_str().unwrap()]).into();
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["diagnostics"][0], "MCP_RES_INPUT_INVALID");
    assert_eq!(report["findings"].as_array().unwrap().len(), 1, "{report}");
    assert!(
        report["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("this is a trust policy (mcp-res.trust-policy/0.2.0), not a document to validate: pass it with --trust-policy"),
        "{report}"
    );
}
