//! `mcpres run --scenario tool-contracts`: every safe tool of a server
//! exercised with a valid input generated from its inputSchema and with
//! invalid inputs that differ from it by one defect, one bundle per tool
//! (spec/harness.md, "Tool contracts"). The real binary drives
//! `tests/subjects/contract_server.py` (standard library only) in each of
//! its modes; every bundle written is validated.
#![cfg(feature = "server")]

mod support;

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use support::*;

const SERVER: &str = "tests/subjects/contract_server.py";

/// `mcpres run --scenario tool-contracts -o out [flags...] -- python3 SERVER [--break MODE]`
fn run(out: &Path, flags: &[&str], broken: Option<&str>) -> Output {
    let mut args = vec![
        "run",
        "--scenario",
        "tool-contracts",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--", "python3", SERVER]);
    if let Some(mode) = broken {
        args.extend_from_slice(&["--break", mode]);
    }
    mcpres(&args)
}

/// contracts.json, with every tool bundle it names validated through
/// `mcpres validate` (exit 0: a valid bundle, whatever its result).
fn contracts(out: &Path) -> Value {
    let doc = read_json(&out.join("contracts.json"));
    for t in doc["tools"].as_array().unwrap() {
        let Some(dir) = t["directory"].as_str() else {
            continue;
        };
        let v = mcpres(&["validate", out.join(dir).to_str().unwrap()]);
        assert_eq!(v.status.code(), Some(0), "{}", output_text(&v));
        assert_eq!(t["valid"], true, "{t}");
        assert_eq!(t["evidenceClass"], "GENUINE_RUNTIME", "{t}");
    }
    doc
}

fn tool<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {doc}"))
}

/// The control `name` of a tool's entry: (as expected?, observed).
fn control(t: &Value, name: &str) -> (String, String) {
    let c = t["controls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["control"] == name)
        .unwrap_or_else(|| panic!("no control {name} in {t}"));
    (
        c["as"].as_str().unwrap().to_string(),
        c["observed"].as_str().unwrap().to_string(),
    )
}

/// Every stdin byte the harness wrote to the subject in a tool's bundle.
fn stdin_sent(bundle: &Path) -> String {
    walk(&bundle.join("raw"))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".stdin.bin"))
        .map(|p| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned())
        .collect()
}

#[test]
fn an_honest_server_passes_tool_by_tool_and_its_destructive_tool_is_never_called() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("contracts");
    let o = run(&out, &[], None);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let doc = contracts(&out);
    assert_eq!(doc["result"], "PASS", "{doc:#}");
    // lookup: key required (missing, wrong type), limit typed, closed.
    let lookup = tool(&doc, "lookup");
    assert_eq!(lookup["result"], "PASS");
    assert_eq!(lookup["validInput"], serde_json::json!({"key": "mcpres"}));
    for name in [
        "missing-key",
        "wrong-type-key",
        "wrong-type-limit",
        "unknown-member-mcpres-unknown-member",
    ] {
        assert_eq!(
            control(lookup, name),
            ("EXPECTED".into(), "REJECT REQUEST_REFUSED".into()),
            "{name}"
        );
    }
    // stats refuses with -32602 rather than a tool error: both count.
    let stats = tool(&doc, "stats");
    assert_eq!(stats["result"], "PASS");
    assert_eq!(
        control(stats, "wrong-type-verbose"),
        ("EXPECTED".into(), "REJECT REQUEST_REFUSED".into())
    );
    // The destructive tool is named as left alone, and no byte the harness
    // wrote calls it.
    let left = doc["leftAlone"].as_array().unwrap();
    assert!(
        left.iter()
            .any(|l| l["tool"] == "wipe" && l["why"].as_str().unwrap().contains("destructiveHint")),
        "{doc:#}"
    );
    for dir in ["lookup", "stats"] {
        let sent = stdin_sent(&out.join(dir));
        assert!(sent.contains("\"name\":\"lookup\"") || sent.contains("\"name\":\"stats\""));
        assert!(!sent.contains("\"name\":\"wipe\""), "{dir}: {sent}");
    }
    // Each control's twin (the valid input) was accepted on its session,
    // and the injection log says which member carried the defect.
    let log = std::fs::read_to_string(out.join("lookup/raw/trial-1/missing-key.injection.jsonl"))
        .unwrap();
    let entry: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(entry["toolInput"]["member"], "key");
    assert_eq!(entry["toolInput"]["twin"]["accepted"], true);
    assert_eq!(
        entry["request"]["params"]["arguments"],
        serde_json::json!({})
    );
}

#[test]
fn a_server_that_dies_on_a_missing_argument_fails_that_control_and_the_crash_is_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("contracts");
    let o = run(&out, &[], Some("die-on-missing"));
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let doc = contracts(&out);
    assert_eq!(doc["result"], "FAIL");
    let lookup = tool(&doc, "lookup");
    assert_eq!(lookup["result"], "FAIL");
    let (as_expected, observed) = control(lookup, "missing-key");
    assert_eq!(as_expected, "UNEXPECTED");
    assert_eq!(observed, "REJECT NO_RESPONSE");
    // The traceback is in the control's stored stderr; the other controls
    // still pass, and stats (no required member) is unaffected.
    let stderr =
        std::fs::read_to_string(out.join("lookup/raw/trial-1/missing-key.stderr.bin")).unwrap();
    assert!(stderr.contains("KeyError"), "{stderr}");
    assert_eq!(control(lookup, "wrong-type-key").0, "EXPECTED");
    assert_eq!(tool(&doc, "stats")["result"], "PASS");
}

#[test]
fn a_server_that_accepts_a_wrong_type_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("contracts");
    let o = run(&out, &[], Some("accept-wrong-type"));
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let doc = contracts(&out);
    assert_eq!(doc["result"], "FAIL");
    for (t, c) in [
        ("lookup", "wrong-type-key"),
        ("lookup", "wrong-type-limit"),
        ("stats", "wrong-type-verbose"),
    ] {
        assert_eq!(
            control(tool(&doc, t), c),
            ("UNEXPECTED".into(), "PASS COMPLETED".into()),
            "{t} {c}"
        );
    }
    // What it does check still counts.
    assert_eq!(control(tool(&doc, "lookup"), "missing-key").0, "EXPECTED");
}

#[test]
fn an_internal_error_answering_an_invalid_input_is_no_refusal() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("contracts");
    let o = run(&out, &[], Some("internal-error"));
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let doc = contracts(&out);
    assert_eq!(doc["result"], "FAIL");
    assert_eq!(
        control(tool(&doc, "stats"), "wrong-type-verbose"),
        ("UNEXPECTED".into(), "REJECT ERROR_RESPONSE".into())
    );
    let oracle = read_json(&out.join("stats/raw/trial-1/wrong-type-verbose.oracle.json"));
    assert!(
        oracle["observed"]["detail"]
            .as_str()
            .unwrap()
            .contains("-32603"),
        "{oracle:#}"
    );
}

#[test]
fn a_server_that_refuses_every_call_is_incomplete_never_passed_or_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("contracts");
    let o = run(&out, &[], Some("refuse-everything"));
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let doc = contracts(&out);
    assert_eq!(doc["result"], "INCOMPLETE", "{doc:#}");
    for t in ["lookup", "stats"] {
        assert_eq!(tool(&doc, t)["result"], "INCOMPLETE", "{t}");
    }
    // The refusal happened, but the valid twin was refused too: the
    // property was not reached.
    let oracle = read_json(&out.join("lookup/raw/trial-1/missing-key.oracle.json"));
    assert_eq!(oracle["propertyReached"], false, "{oracle:#}");
    assert!(
        !oracle["prerequisitesReached"]
            .as_array()
            .unwrap()
            .contains(&Value::from("VALID_TWIN_ACCEPTED"))
    );
}

#[test]
fn a_destructive_tool_is_called_only_when_the_operator_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("contracts");
    let o = run(&out, &["--tool", "wipe"], None);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let doc = contracts(&out);
    let wipe = tool(&doc, "wipe");
    assert_eq!(wipe["result"], "PASS");
    assert!(stdin_sent(&out.join("wipe")).contains("\"name\":\"wipe\""));
    // Only the named tool: the read-only ones are left alone this time.
    assert_eq!(doc["tools"].as_array().unwrap().len(), 1);
    assert!(
        doc["leftAlone"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["tool"] == "lookup")
    );
    // Several names: those tools, and only those.
    let both = tmp.path().join("both");
    let o = run(&both, &["--tool", "wipe", "--tool", "stats"], None);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let doc = contracts(&both);
    let names: Vec<&str> = doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["tool"].as_str())
        .collect();
    assert_eq!(names, ["stats", "wipe"]);
    // --tool-args goes with one tool only, and `generic` calls one tool.
    let o = run(
        &tmp.path().join("args"),
        &["--tool", "wipe", "--tool", "stats", "--tool-args", "{}"],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    let o = mcpres(&[
        "run",
        "--scenario",
        "generic",
        "--tool",
        "a",
        "--tool",
        "b",
        "-o",
        tmp.path().join("generic").to_str().unwrap(),
        "--",
        "python3",
        SERVER,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(
        text(&o.stderr).contains("calls one tool"),
        "{}",
        output_text(&o)
    );
    // A name the subject does not list is a usage error, and nothing is
    // written.
    let none = tmp.path().join("none");
    let o = run(&none, &["--tool", "no-such-tool"], None);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(!none.exists());
}

#[test]
fn operator_arguments_that_the_schema_refuses_leave_the_tool_unexercised() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("contracts");
    let o = run(
        &out,
        &["--tool", "lookup", "--tool-args", r#"{"key": 7}"#],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let doc = contracts(&out);
    assert_eq!(doc["result"], "INCOMPLETE");
    let lookup = tool(&doc, "lookup");
    assert_eq!(lookup["result"], "NOT_RUN");
    assert!(
        lookup["reason"]
            .as_str()
            .unwrap()
            .contains("not valid against it"),
        "{lookup}"
    );
    // Valid operator arguments are the valid input the defects are made from.
    let out = tmp.path().join("given");
    let o = run(
        &out,
        &[
            "--tool",
            "lookup",
            "--tool-args",
            r#"{"key": "k", "limit": 3}"#,
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let doc = contracts(&out);
    let lookup = tool(&doc, "lookup");
    assert_eq!(
        lookup["validInput"],
        serde_json::json!({"key": "k", "limit": 3})
    );
    assert_eq!(control(lookup, "missing-key").0, "EXPECTED");
}

/// The committed runs (`bundles/harness-contracts/`, regenerated by its
/// `generate.sh`): every tool bundle loads as a valid GENUINE_RUNTIME
/// bundle whose result is the one `contracts.json` gives, no file holds a
/// path of the machine that wrote it, and the README names every tool with
/// its result.
#[test]
fn committed_tool_contract_runs_validate_and_agree_with_their_summaries() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/harness-contracts");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut runs = 0;
    for run in std::fs::read_dir(&root).unwrap() {
        let run = run.unwrap().path();
        if !run.is_dir() {
            continue;
        }
        runs += 1;
        let doc = read_json(&run.join("contracts.json"));
        let name = run.file_name().unwrap().to_str().unwrap();
        for t in doc["tools"].as_array().unwrap() {
            let tool = t["tool"].as_str().unwrap();
            let dir = run.join(t["directory"].as_str().unwrap());
            let (bundle, report) = load(&dir);
            assert!(report.valid, "{}: {:?}", dir.display(), report.primary());
            assert_eq!(
                report.evidence_class.as_deref(),
                Some("GENUINE_RUNTIME"),
                "{}",
                dir.display()
            );
            assert_eq!(bundle["statement"]["result"], t["result"], "{name}/{tool}");
            let row = format!(
                "| `{name}` | `{tool}` | {} |",
                t["result"].as_str().unwrap()
            );
            assert!(readme.contains(&row), "README lacks {row}");
        }
        for f in walk(&run) {
            let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
            for private in ["/root", "/home/", "/Users/", "/work/"] {
                assert!(!text.contains(private), "{} holds {private}", f.display());
            }
        }
    }
    assert_eq!(runs, 3);
}

/// Over Streamable HTTP: the reference server (started by the harness, one
/// process per session, on a loopback port) passes every read-only tool,
/// and its tools without annotations are left alone.
#[test]
fn the_reference_server_over_streamable_http_passes_tool_by_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("contracts");
    let port = free_port().to_string();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let exe = exe();
    let o = mcpres(&[
        "run",
        "--scenario",
        "tool-contracts",
        "--http",
        &url,
        "-o",
        out.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
        "serve",
        "--transport",
        "http",
        "--port",
        &port,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let doc = contracts(&out);
    assert_eq!(doc["result"], "PASS");
    assert_eq!(doc["transport"], "streamable-http");
    let add = tool(&doc, "add");
    assert_eq!(add["result"], "PASS");
    assert_eq!(
        control(add, "missing-a"),
        ("EXPECTED".into(), "REJECT REQUEST_REFUSED".into())
    );
    assert!(
        doc["leftAlone"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["tool"] == "counter")
    );
}

/// Trials after the first send fresh string values drawn from the schema
/// (seeded by the trial's seed, recorded in the injection log), and the
/// trials still compare as stable: the strings are replaced before their
/// answers are compared.
#[test]
fn later_trials_send_fresh_values_from_the_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("contracts");
    let o = run(&out, &["--trials", "2"], None);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let doc = contracts(&out);
    assert_eq!(doc["result"], "PASS");
    let log = |trial: u32| -> Value {
        let path = out.join(format!(
            "lookup/raw/trial-{trial}/wrong-type-key.injection.jsonl"
        ));
        let text = std::fs::read_to_string(path).unwrap();
        serde_json::from_str(text.lines().next().unwrap()).unwrap()
    };
    let (first, second) = (log(1), log(2));
    assert_eq!(first["toolInput"]["freshValues"], false);
    assert_eq!(
        first["toolInput"]["valid"],
        serde_json::json!({"key": "mcpres"})
    );
    assert_eq!(second["toolInput"]["freshValues"], true);
    let fresh = second["toolInput"]["valid"]["key"].as_str().unwrap();
    assert!(fresh.starts_with("mcpres-") && fresh != "mcpres", "{fresh}");
    // The defect is the same: the key given a value of the wrong type.
    assert_eq!(
        second["request"]["params"]["arguments"]["key"],
        serde_json::json!({"mcpres": "wrong-type"})
    );
    let statement = read_json(&out.join("lookup/conformance-statement.json"));
    assert_eq!(statement["result"], "PASS");
    assert_eq!(statement["stabilityClassification"], "REPEATED_STABLE");
}

/// `mcpres validate DIR` on a tool-contracts folder validates every tool's
/// bundle and checks `contracts.json` against them: a bundle digest it
/// lists that is not the bundle's fails the folder.
#[test]
fn a_tool_contracts_folder_is_validated_against_its_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("contracts");
    let o = run(&out, &[], None);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let v = mcpres(&["validate", out.to_str().unwrap()]);
    assert_eq!(v.status.code(), Some(0), "{}", output_text(&v));
    let err = text(&v.stderr);
    assert!(
        err.contains("contracts.json matches its 2 part(s)"),
        "{err}"
    );
    let path = out.join("contracts.json");
    let mut doc = read_json(&path);
    doc["tools"][0]["bundleDigest"] = Value::from("0".repeat(64));
    std::fs::write(&path, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let v = mcpres(&["validate", out.to_str().unwrap()]);
    assert_eq!(v.status.code(), Some(1), "{}", output_text(&v));
    assert!(
        text(&v.stderr).contains("contracts.json lists bundleDigest"),
        "{}",
        output_text(&v)
    );
}

/// A tool whose answer to a valid input is larger than the harness's input
/// limit (4 MiB): the clean control fails with `INPUT_LIMIT_EXCEEDED`, a
/// finding recorded in the bundle, which stays valid.
#[test]
fn an_answer_over_the_input_limit_is_a_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("contracts");
    let o = run(&out, &["--tool", "lookup"], Some("oversized"));
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let doc = contracts(&out);
    assert_eq!(doc["result"], "FAIL");
    let oracle = read_json(&out.join("lookup/raw/trial-1/clean.oracle.json"));
    assert_eq!(oracle["stopReason"], "INPUT_LIMIT_EXCEEDED", "{oracle:#}");
}

/// A value the operator gives with `--tool-args` for a member that looks
/// secret (`api_token`) is never stored: the bundle's privacy scan redacts
/// it from every file (the requests sent included) and `contracts.json`
/// shows it as redacted; the contract is still exercised.
#[test]
fn an_operator_secret_given_as_a_tool_argument_is_never_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("contracts");
    let secret = "tok-0f3c9a7e51d2b84c";
    let args = format!(r#"{{"api_token": "{secret}"}}"#);
    let o = run(
        &out,
        &["--tool", "verify_token", "--tool-args", &args],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    assert!(!output_text(&o).contains(secret));
    let doc = contracts(&out);
    let t = tool(&doc, "verify_token");
    assert_eq!(t["result"], "PASS");
    assert_eq!(t["validInput"]["api_token"], "[REDACTED:tool-argument]");
    assert_eq!(control(t, "missing-api-token").0, "EXPECTED");
    for f in walk(&out) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the secret",
            f.display()
        );
    }
}
