//! `mcpres run` as a new user meets it (issue 15, items 12 and 13): the
//! scenario fits the subject without `--scenario`, a scenario written for the
//! reference server that fails against another server names `--scenario
//! generic`, and a subject that never answers its opening request stops the
//! run at once, with its exit status and stderr shown and a progress line per
//! control.

mod support;

use std::path::Path;

use serde_json::Value;
use support::*;

/// A minimal MCP server (stdio) that is not the reference server: it answers
/// `initialize` as "tiny-third-party" and refuses every other request.
const TINY_SERVER: &str = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg.get("method") == "initialize":
        reply = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                 "serverInfo": {"name": "tiny-third-party", "version": "0.0.1"}}
        out = {"jsonrpc": "2.0", "id": msg["id"], "result": reply}
    else:
        out = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
"#;

fn tiny_server(dir: &Path) -> Vec<String> {
    let script = dir.join("tiny.py");
    std::fs::write(&script, TINY_SERVER).unwrap();
    vec!["/usr/bin/python3".into(), script.display().to_string()]
}

fn run(dir: &Path, flags: &[&str], subject: &[String]) -> Run {
    let out = dir.join("out");
    let mut args: Vec<String> = vec!["run".into(), "-o".into(), out.display().to_string()];
    args.extend(flags.iter().map(|f| f.to_string()));
    args.push("--".into());
    args.extend(subject.iter().cloned());
    mcpres(&args).into()
}

fn fault_ids(doc: &Value) -> Vec<String> {
    doc["evidence"]["scenario"]["descriptor"]["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn without_a_scenario_a_third_party_server_is_driven_with_generic() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run(tmp.path(), &[], &tiny_server(tmp.path()));
    assert!(
        r.stderr
            .contains("the subject is not `mcpres serve`, so scenario generic is used"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("use --scenario tool-contracts"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("scenario generic against /usr/bin/python3"),
        "{}",
        r.stderr
    );
    let (doc, _) = load(&tmp.path().join("out"));
    assert!(
        fault_ids(&doc).contains(&"fault/request-unknown-method".to_string()),
        "{:?}",
        fault_ids(&doc)
    );
}

#[test]
fn without_a_scenario_the_reference_server_is_driven_with_its_faults() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = exe().display().to_string();
    // Directly, and behind a shell wrapper.
    for (i, subject) in [
        vec![
            exe.clone(),
            "serve".into(),
            "--transport".into(),
            "stdio".into(),
        ],
        vec![
            "/bin/sh".into(),
            "-c".into(),
            format!("exec {exe} serve --transport stdio \"$@\""),
            "subject".into(),
        ],
    ]
    .into_iter()
    .enumerate()
    {
        let dir = tmp.path().join(i.to_string());
        std::fs::create_dir(&dir).unwrap();
        let r = run(&dir, &[], &subject);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stderr.contains(
                "the subject is mcpres's reference server, so scenario reference-faults is used"
            ),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn a_reference_scenario_failing_on_another_server_names_generic() {
    let tmp = tempfile::tempdir().unwrap();
    let r = run(
        tmp.path(),
        &["--scenario", "reference-faults"],
        &tiny_server(tmp.path()),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "scenario reference-faults is written for mcpres's reference server (`mcpres serve`), but the subject reports itself as \"tiny-third-party\": use `--scenario generic`"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn a_subject_that_exits_at_once_stops_the_run_after_the_clean_control() {
    let tmp = tempfile::tempdir().unwrap();
    let subject: Vec<String> = vec![
        "/bin/sh".into(),
        "-c".into(),
        "echo first line >&2; echo 'cannot open config: boom-marker-13' >&2; exit 7".into(),
    ];
    let r = run(
        tmp.path(),
        &["--scenario", "generic", "--trials", "3"],
        &subject,
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    for want in [
        "trial 1/3: clean control FAIL (",
        "the subject exited with status 7",
        "last lines of the subject's stderr:",
        "  | first line",
        "  | cannot open config: boom-marker-13",
        "trials 2-3 are not run",
        "it cannot validate, because no negative control could run",
    ] {
        assert!(
            r.stderr.contains(want),
            "missing {want:?} in:\n{}",
            r.stderr
        );
    }
    // No control but the clean one started a process.
    assert!(
        !r.stderr.contains("negative control unknown-method"),
        "{}",
        r.stderr
    );
    let (doc, report) = load(&tmp.path().join("out"));
    let summary = &doc["evidence"]["trialSummary"];
    assert_eq!(summary["plannedTrials"], 3);
    assert_eq!(summary["completedTrials"], 1);
    assert_eq!(summary["processCount"], 1);
    assert_eq!(summary["classification"], "INCOMPLETE");
    assert_eq!(doc["statement"]["result"], "FAIL");
    // The controls not run are recorded as cancelled operations.
    let cancelled: Vec<&str> = doc["evidence"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|op| op["outcome"] == "CANCELLED")
        .map(|op| op["operationId"].as_str().unwrap())
        .collect();
    assert_eq!(cancelled, ["t1-unknown-method", "t1-unknown-tool"]);
    // Invalid only for the reason stated: no negative control could run.
    assert_eq!(report.primary(), Some("MCP_RES_VACUOUS_NEGATIVE_CONTROL"));
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.code != "MCP_RES_SCHEMA_INVALID"),
        "{:?}",
        report.findings
    );
}

#[test]
fn a_campaign_stops_after_a_fatal_clean_control_and_still_writes_its_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let subject: Vec<String> = vec!["/bin/sh".into(), "-c".into(), "exit 0".into()];
    let r = run(
        tmp.path(),
        &["--scenario", "generic", "--trials", "100"],
        &subject,
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("trials 2-100 are not run"),
        "{}",
        r.stderr
    );
    let out = tmp.path().join("out");
    let campaign = read_json(&out.join("campaign.json"));
    assert_eq!(campaign["completedTrials"], 1);
    assert_eq!(campaign["parts"].as_array().unwrap().len(), 1);
    assert_eq!(campaign["result"], "FAIL");
    assert!(!out.join("part-002").exists());
}
