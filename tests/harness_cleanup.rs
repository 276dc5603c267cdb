//! Cleanup and identity observed, not assumed: the real binary drives
//! `tests/subjects/residue_server.py` (standard library only) under the
//! `generic` scenario. A subject that leaves a process outside its group
//! (`setsid`) or a temporary file behind fails the cleanup check, which lists
//! what was left; an honest one passes; and the subject's identity is the
//! observed hashes of what was executed.
#![cfg(feature = "server")]

mod support;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use support::*;

const SERVER: &str = "tests/subjects/residue_server.py";

/// `mcpres run --scenario generic -o out -- python3 SERVER extra...` (the
/// script relative to the working directory, as an operator would type it).
fn run(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--scenario",
        "generic",
        "-o",
        out.to_str().unwrap(),
        "--",
        "python3",
        SERVER,
    ];
    args.extend_from_slice(extra);
    mcpres(&args)
}

fn observation<'a>(doc: &'a Value, kind: &str) -> &'a Value {
    doc["evidence"]["observations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} observation"))
}

#[test]
fn a_descendant_that_leaves_the_process_group_fails_cleanup_and_is_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let marker = format!("mcpres-escape-{}", std::process::id());
    let _guard = KillMarked(marker.clone());
    let o = run(&out, &["--escape", &marker]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    // The harness killed every escaped descendant before it returned.
    assert_eq!(alive_with(&marker), Vec::<String>::new());
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(doc["statement"]["result"], "FAIL");
    let cleanup = read_json(&out.join("raw/cleanup-report.json"));
    assert_eq!(cleanup["passed"], false);
    let escaped = cleanup["escapedProcesses"].as_array().unwrap();
    // One per session: the clean control and each negative control started one.
    assert!(!escaped.is_empty(), "{cleanup}");
    assert!(escaped.iter().any(|p| p["foundAfterSession"] == "clean"));
    for p in escaped {
        assert!(p["pid"].as_u64().is_some_and(|pid| pid > 0), "{p}");
        assert!(p["command"].as_str().unwrap().starts_with("python"), "{p}");
        // A new session: its own session and process group, not the subject's.
        assert_eq!(p["sessionId"], p["pid"], "{p}");
        assert_eq!(p["processGroup"], p["pid"], "{p}");
    }
    let obs = observation(&doc, "CLEANUP_CHECK");
    assert_eq!(obs["outcome"], "FAIL");
    assert!(
        obs["reasonCode"]
            .as_str()
            .unwrap()
            .starts_with("RESIDUE_ESCAPED_PROCESSES"),
        "{obs}"
    );
    // The lifecycle recorded the escaped child before the group kill too.
    let lifecycle = text(&std::fs::read(out.join("raw/trial-1/lifecycle.jsonl")).unwrap());
    let outside = lifecycle
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "process-tree" && e["session"] == "t1-clean")
        .flat_map(|e| e["descendants"].as_array().cloned().unwrap_or_default())
        .any(|d| d["outsideGroup"] == true);
    assert!(outside, "{lifecycle}");
}

#[test]
fn a_closed_temporary_file_left_behind_fails_cleanup() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&out, &["--temp-file"]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(doc["statement"]["result"], "FAIL");
    let cleanup = read_json(&out.join("raw/cleanup-report.json"));
    assert_eq!(cleanup["passed"], false);
    assert_eq!(cleanup["escapedProcesses"], json!([]));
    let dirs = cleanup["subjectTemporaryDirectories"].as_array().unwrap();
    let clean = dirs.iter().find(|d| d["session"] == "clean").unwrap();
    let left = clean["entriesLeft"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{clean}");
    let path = left[0]["path"].as_str().unwrap();
    assert!(
        path.starts_with("residue-") && path.ends_with(".txt"),
        "{path}"
    );
    let content = b"left behind by residue_server.py\n";
    assert_eq!(left[0]["bytes"], content.len());
    assert_eq!(
        left[0]["sha256"],
        mcpres::json::canonical::sha256_hex(content)
    );
    let obs = observation(&doc, "CLEANUP_CHECK");
    assert_eq!(obs["outcome"], "FAIL");
    assert_eq!(obs["reasonCode"], "RESIDUE_SUBJECT_FILES");
    // The files the subject wrote: their own report and observation.
    let fs = read_json(&out.join("raw/filesystem-report.json"));
    assert_eq!(fs["subjectWroteFiles"], true);
    let obs = observation(&doc, "FILESYSTEM_EFFECT");
    assert_eq!(obs["outcome"], "FAIL");
    assert_eq!(obs["reasonCode"], "SUBJECT_FILES_LEFT");
    assert_eq!(
        surface(&doc, "FILESYSTEM_OUTPUTS")["observationRefs"],
        json!(["obs-filesystem"])
    );
    // The temporary directory was handed over as TMPDIR, TMP and TEMP.
    let lifecycle = text(&std::fs::read(out.join("raw/trial-1/lifecycle.jsonl")).unwrap());
    let spawned: Value = lifecycle
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["event"] == "spawned")
        .unwrap();
    assert_eq!(
        spawned["harnessProvidedKeys"],
        json!(["TMPDIR", "TMP", "TEMP"])
    );
}

/// The honest variant leaves nothing: cleanup passes and names what it
/// checked; and the identity is what was executed: python3 and the script,
/// each hashed, with `artifactSha256` the digest over both.
#[test]
fn an_honest_subject_passes_cleanup_and_its_executed_files_are_its_identity() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&out, &[]);
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?} {}", report.findings, output_text(&o));
    let cleanup = read_json(&out.join("raw/cleanup-report.json"));
    assert_eq!(cleanup["passed"], true, "{cleanup}");
    assert_eq!(cleanup["escapedProcesses"], json!([]));
    let obs = observation(&doc, "CLEANUP_CHECK");
    assert_eq!(obs["outcome"], "PASS");
    assert_eq!(
        obs["reasonCode"],
        "PROCESS_TREES_TEMP_DIRS_WORKDIR_AND_SCRATCH_CLEAN"
    );
    let fs = read_json(&out.join("raw/filesystem-report.json"));
    assert_eq!(fs["subjectWroteFiles"], false, "{fs}");
    assert_eq!(observation(&doc, "FILESYSTEM_EFFECT")["outcome"], "PASS");

    let identity = read_json(&out.join("raw/subject-artifact.json"));
    let executed = identity["executed"].as_array().unwrap();
    assert_eq!(executed.len(), 2, "{identity}");
    assert_eq!(executed[0]["role"], "program");
    assert_eq!(executed[0]["given"], "python3");
    assert_eq!(executed[1]["role"], "argument");
    assert_eq!(executed[1]["argvIndex"], 1);
    assert_eq!(executed[1]["given"], SERVER);
    let script = std::fs::read(SERVER).unwrap();
    assert_eq!(
        executed[1]["sha256"],
        mcpres::json::canonical::sha256_hex(&script)
    );
    assert_eq!(executed[1]["bytes"], script.len());
    // python3 resolves (through any symlinks) to the interpreter's bytes.
    let python = std::fs::canonicalize(
        std::env::split_paths(&std::env::var_os("PATH").unwrap())
            .map(|d| d.join("python3"))
            .find(|p| p.is_file())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        executed[0]["sha256"],
        mcpres::json::canonical::sha256_hex(&std::fs::read(python).unwrap())
    );
    // artifactSha256 is the digest of the observed list, recomputable.
    let list: Vec<Value> = executed
        .iter()
        .map(|f| json!({"role": f["role"], "argvIndex": f["argvIndex"], "bytes": f["bytes"], "sha256": f["sha256"]}))
        .collect();
    let digest = mcpres::json::canonical::digest(&Value::Array(list)).unwrap();
    assert_eq!(identity["executedSha256"], digest);
    assert_eq!(identity["artifactSha256Source"], "OBSERVED_EXECUTED_FILES");
    assert_eq!(identity["hashedAgainAfterLastSession"]["unchanged"], true);
    assert_eq!(identity["declaredArtifact"], Value::Null);
    assert_eq!(doc["evidence"]["subject"]["artifactSha256"], digest);
    assert_eq!(
        doc["evidence"]["sourceEvidenceRefs"],
        json!(["raw/subject-artifact.json"])
    );
    // What the server said about itself, and where that came from.
    assert_eq!(identity["reported"]["name"], "residue-server");
    assert_eq!(
        identity["identitySource"],
        "serverInfo of the initialize result"
    );
}
