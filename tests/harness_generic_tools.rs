//! The `generic` scenario on servers without an `echo` tool: the real binary
//! drives `tests/subjects/tools_server.py` (standard library only). A tool
//! whose annotations declare it read-only (and not destructive or open-world)
//! and that takes no required argument is called; when there is none, the run
//! says that no tool could be called safely and the result is INCOMPLETE, not
//! FAIL; `--tool NAME --tool-args JSON` names the tool to call. Each bundle
//! validates. A picked tool that answers malformed still fails, and an honest
//! echo server (`residue_server.py`) still passes as before.
#![cfg(feature = "server")]

mod support;

use std::path::Path;
use std::process::Output;

use mcpres::produce::builder::BundleBuilder;
use mcpres::validate::codes;
use serde_json::Value;

use support::*;

const TOOLS: &str = "tests/subjects/tools_server.py";
const ECHO: &str = "tests/subjects/residue_server.py";

/// `mcpres run --scenario generic -o out [flags...] -- python3 SERVER extra...`
fn run(out: &Path, flags: &[&str], server: &str, extra: &[&str]) -> Output {
    let mut args = vec!["run", "--scenario", "generic", "-o", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--", "python3", server]);
    args.extend_from_slice(extra);
    mcpres(&args)
}

/// The bundle validates, in the library and through `mcpres validate`.
fn valid(out: &Path) -> Value {
    let (doc, report) = load(out);
    assert!(report.valid, "{:?}", report.findings);
    let v = mcpres(&["validate", out.to_str().unwrap()]);
    assert_eq!(v.status.code(), Some(0), "{}", output_text(&v));
    doc
}

/// The clean control's oracle record of trial 1.
fn clean_oracle(out: &Path) -> Value {
    read_json(&out.join("raw/trial-1/clean.oracle.json"))
}

/// The `tools/call` steps of the clean control by request id: the tool
/// call first, then get-env (a skipped step is recorded before the calls).
fn call_steps(oracle: &Value) -> Vec<Value> {
    let mut steps: Vec<Value> = oracle["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["method"] == "tools/call")
        .cloned()
        .collect();
    steps.sort_by_key(|s| s["id"].as_i64());
    steps
}

/// Every request the clean control wrote to the subject.
fn clean_requests(out: &Path) -> Vec<Value> {
    let bytes = std::fs::read(out.join("raw/trial-1/clean.stdin.bin")).unwrap();
    text(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

fn tools_called(out: &Path) -> Vec<String> {
    clean_requests(out)
        .iter()
        .filter(|m| m["method"] == "tools/call")
        .map(|m| m["params"]["name"].as_str().unwrap_or("").to_string())
        .collect()
}

fn observation<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["evidence"]["observations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == id)
        .unwrap_or_else(|| panic!("no observation {id}"))
}

fn clean_operation(doc: &Value) -> &Value {
    doc["evidence"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "CLEAN_CONTROL")
        .unwrap()
}

#[test]
fn a_read_only_tool_is_picked_by_its_annotations_and_the_run_passes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&out, &[], TOOLS, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let doc = valid(&out);
    assert_eq!(doc["statement"]["result"], "PASS");
    // Only `status`: not the destructive, the open-world, or the one that
    // needs an argument.
    assert_eq!(tools_called(&out), ["status"]);
    let oracle = clean_oracle(&out);
    assert_eq!(oracle["stopReason"], "COMPLETED");
    let steps = call_steps(&oracle);
    assert_eq!(steps[0]["judgement"]["verdict"], "PASS", "{oracle}");
    assert_eq!(
        doc["evidence"]["scenario"]["descriptor"]["operationClass"],
        "tools/call"
    );
    assert_eq!(
        doc["evidence"]["scenario"]["descriptor"]["sideEffectModel"],
        "READ_ONLY"
    );
}

#[test]
fn a_picked_tool_that_answers_malformed_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&out, &[], TOOLS, &["--break", "shape"]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let doc = valid(&out);
    assert_eq!(doc["statement"]["result"], "FAIL");
    let oracle = clean_oracle(&out);
    assert_eq!(oracle["stopReason"], "SCHEMA_VIOLATION", "{oracle}");
    assert_eq!(clean_operation(&doc)["outcome"], "FAIL");
}

#[test]
fn a_picked_tool_that_reports_a_tool_error_is_incomplete_not_fail() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&out, &[], TOOLS, &["--break", "tool-error"]);
    let doc = valid(&out);
    assert_eq!(
        doc["statement"]["result"],
        "INCOMPLETE",
        "{}",
        output_text(&o)
    );
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let oracle = clean_oracle(&out);
    assert_eq!(oracle["stopReason"], "NO_SAFE_TOOL_CALL", "{oracle}");
    // The step keeps what the subject answered.
    assert_eq!(
        call_steps(&oracle)[0]["judgement"]["stopReason"],
        "TOOL_ERROR"
    );
    assert_eq!(tools_called(&out), ["status"]);
}

#[test]
fn with_only_unsafe_tools_no_tool_is_called_and_the_result_is_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&out, &[], TOOLS, &["--tools", "unsafe"]);
    let all = output_text(&o);
    // Not a pass (exit 1), but said plainly, and not a FAIL.
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert!(all.contains("no tool could be called safely"), "{all}");
    assert!(all.contains("--tool NAME"), "{all}");
    assert!(all.contains("INCOMPLETE"), "{all}");
    let doc = valid(&out);
    assert_eq!(doc["statement"]["result"], "INCOMPLETE");
    // Nothing was called on the subject in the clean control.
    assert_eq!(tools_called(&out), Vec::<String>::new());
    let oracle = clean_oracle(&out);
    assert_eq!(oracle["stopReason"], "NO_SAFE_TOOL_CALL");
    let steps = call_steps(&oracle);
    assert_eq!(steps[0]["judgement"]["verdict"], "SKIPPED");
    assert_eq!(steps[0]["judgement"]["stopReason"], "NO_SAFE_TOOL");
    // The record: the clean control's steps all passed, the tool call is
    // NOT_OBSERVED with its reason, the trial is counted incomplete.
    assert_eq!(clean_operation(&doc)["outcome"], "PASS");
    let check = observation(&doc, "obs-t1-clean-oracle");
    assert_eq!(check["outcome"], "NOT_OBSERVED");
    assert_eq!(check["reasonCode"], "NO_SAFE_TOOL_CALL");
    let summary = &doc["evidence"]["trialSummary"];
    assert_eq!(summary["counts"]["incomplete"], 1, "{summary}");
    assert_eq!(summary["counts"]["failure"], 0, "{summary}");
    assert_eq!(
        doc["evidence"]["scenario"]["descriptor"]["operationClass"],
        "initialize"
    );
    // The negative controls still ran and behaved.
    for n in ["unknown-method", "unknown-tool"] {
        let op = doc["evidence"]["operations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["operationId"] == format!("t1-{n}"))
            .unwrap();
        assert_eq!(op["outcome"], "EXPECTED_FAILURE", "{op}");
    }
}

#[test]
fn an_incomplete_bundle_rewritten_to_pass_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    run(&out, &[], TOOLS, &["--tools", "unsafe"]);
    let (doc, _) = load(&out);
    assert_eq!(doc["statement"]["result"], "INCOMPLETE");
    // The statement says PASS, every digest sealed again: the record (no
    // trial succeeded) contradicts it.
    let mut edited = doc.clone();
    edited["statement"]["result"] = Value::from("PASS");
    let mut builder = BundleBuilder::new(edited["evidence"].clone(), edited["statement"].clone());
    for a in doc["integrity"]["artifacts"].as_array().unwrap() {
        let path = a["path"].as_str().unwrap();
        let media = a["mediaType"].as_str().unwrap();
        if media == "application/vnd.mcp-res.observation+json"
            || path == "evidence-envelope.json"
            || path == "conformance-statement.json"
        {
            continue;
        }
        builder
            .add_raw(path, media, std::fs::read(out.join(path)).unwrap())
            .unwrap();
    }
    let built = builder.build().unwrap();
    let report = mcpres::validate::validate_document(&built.doc, &Default::default());
    assert!(!report.valid, "a PASS over no tool call must not validate");
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.code == codes::RESULT_CONTRADICTS_EVIDENCE),
        "{:?}",
        report.findings
    );
}

#[test]
fn the_operator_names_the_tool_and_its_arguments() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(
        &out,
        &[
            "--tool",
            "write_note",
            "--tool-args",
            r#"{"note":"from-the-operator"}"#,
        ],
        TOOLS,
        &["--tools", "unsafe"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let doc = valid(&out);
    assert_eq!(doc["statement"]["result"], "PASS");
    let calls: Vec<Value> = clean_requests(&out)
        .into_iter()
        .filter(|m| m["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["params"]["name"], "write_note");
    assert_eq!(calls[0]["params"]["arguments"]["note"], "from-the-operator");
    // The harness does not know what the operator's tool does.
    assert_eq!(
        doc["evidence"]["scenario"]["descriptor"]["sideEffectModel"],
        "UNKNOWN"
    );

    // A named tool the server does not list: nothing is called, INCOMPLETE.
    let out = tmp.path().join("unlisted");
    let o = run(
        &out,
        &["--tool", "no_such_tool"],
        TOOLS,
        &["--tools", "unsafe"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let doc = valid(&out);
    assert_eq!(doc["statement"]["result"], "INCOMPLETE");
    let steps = call_steps(&clean_oracle(&out));
    assert_eq!(steps[0]["judgement"]["stopReason"], "NAMED_TOOL_NOT_LISTED");
    assert_eq!(tools_called(&out), Vec::<String>::new());

    // Unusable flags are refused before anything runs (exit 2).
    for flags in [
        &["--tool", "status", "--tool-args", "[1]"][..],
        &["--tool", "status", "--tool-args", "{"][..],
    ] {
        let out = tmp.path().join("refused");
        let o = run(&out, flags, TOOLS, &[]);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {}", output_text(&o));
        assert!(!out.exists());
    }
    let out = tmp.path().join("refused");
    let o = mcpres(&[
        "run",
        "--scenario",
        "reference-faults",
        "--tool",
        "echo",
        "-o",
        out.to_str().unwrap(),
        "--",
        exe().to_str().unwrap(),
        "serve",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(output_text(&o).contains("--tool"), "{}", output_text(&o));
}

#[test]
fn an_honest_echo_server_still_passes_with_its_echo_call() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&out, &[], ECHO, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let doc = valid(&out);
    assert_eq!(doc["statement"]["result"], "PASS");
    assert_eq!(tools_called(&out), ["echo"]);
    let check = observation(&doc, "obs-t1-clean-oracle");
    assert_eq!(check["outcome"], "PASS");
    assert_eq!(check["reasonCode"], "CLEAN_CONTROL_ACCEPTED");
    assert_eq!(doc["evidence"]["trialSummary"]["counts"]["incomplete"], 0);
}
