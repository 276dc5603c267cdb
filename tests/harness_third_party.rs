//! `mcpres run --scenario generic` against real third-party MCP servers: the
//! npm package `@modelcontextprotocol/server-everything` and a server on the
//! Python `mcp` SDK (tests/subjects/py_echo_server.py), both installed by
//! `.ci/run` (pinned versions). The negative controls send the subjects
//! requests they must refuse (an unknown method, an unlisted tool); the wire
//! faults are the harness's self-checks on a copy of the clean answer.
//!
//! The installed packages are found through `MCPRES_EVERYTHING_DIR` and
//! `MCPRES_PY_MCP_PYTHON`. When a variable is unset, its test prints why and
//! skips; when it is set, the subject must run and the bundle must be a valid
//! GENUINE_RUNTIME PASS.
//!
//! Also: the committed example bundles under `bundles/harness/` validate as
//! GENUINE_RUNTIME and hold no machine-specific paths.
#![cfg(feature = "server")]

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use support::*;

/// In the harness's environment only: it must not reach any artifact.
const MARKER_NAME: &str = "MCPRES_THIRD_PARTY_MARKER";
const MARKER_VALUE: &str = "harness-side-marker-5e1b9c";
/// Passed with `--env`: the subject must see it (the positive control of the scrub check).
const VISIBLE_NAME: &str = "MCPRES_SUBJECT_VISIBLE";
const VISIBLE_VALUE: &str = "subject-side-value-77a0";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> Output {
    command()
        .args(args)
        .current_dir(root())
        .env(MARKER_NAME, MARKER_VALUE)
        .output()
        .expect("run mcpres")
}

fn env_dir(name: &str) -> Option<PathBuf> {
    match std::env::var_os(name) {
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => {
            eprintln!("SKIP: {name} is not set (.ci/run sets it after installing the subject)");
            None
        }
    }
}

/// What every passing generic bundle must show: valid, GENUINE_RUNTIME, PASS,
/// and per trial three negative controls with harness-injected faults, each
/// rejected for its reason with its mutant killed.
fn assert_generic_pass(out: &Path, output: &Output, trials: usize) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let (doc, report) = load(out);
    assert!(report.valid, "{:?}", report.primary());
    assert_eq!(report.evidence_class.as_deref(), Some("GENUINE_RUNTIME"));
    assert_eq!(doc["statement"]["result"], "PASS");
    let ev = &doc["evidence"];
    // The subject's own controls: requests it must refuse. The wire faults are
    // the harness's self-checks and no fault of the experiment.
    let faults = ev["scenario"]["descriptor"]["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 2);
    assert!(
        faults
            .iter()
            .all(|f| f["method"] == "HARNESS_CLIENT_REQUEST")
    );
    let negatives: Vec<&Value> = ev["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "NEGATIVE_CONTROL")
        .collect();
    assert_eq!(negatives.len(), 2 * trials);
    let mut stops: Vec<&str> = negatives
        .iter()
        .map(|o| {
            let n = &o["negativeObservation"];
            assert_eq!(n["mutantKilled"], true);
            assert_eq!(n["propertyReached"], true);
            assert_eq!(n["observedStopReason"], n["expectedStopReason"]);
            assert!(
                n["prerequisitesReached"]
                    .as_array()
                    .unwrap()
                    .contains(&Value::from("FAULT_INJECTED"))
            );
            n["observedStopReason"].as_str().unwrap()
        })
        .collect();
    stops.sort();
    stops.dedup();
    assert_eq!(stops, ["REQUEST_REFUSED"]);
    let observations = ev["observations"].as_array().unwrap();
    for t in 1..=trials {
        for control in ["unknown-method", "unknown-tool"] {
            let log = std::fs::read_to_string(
                out.join(format!("raw/trial-{t}/{control}.injection.jsonl")),
            )
            .unwrap();
            let record: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
            assert_eq!(record["event"], "injection");
            assert!(
                record["boundary"]
                    .as_str()
                    .unwrap()
                    .contains("harness client")
            );
            assert!(record["request"]["id"].as_i64().unwrap() >= 1_000_000);
        }
        let checks = read_json(&out.join(format!("raw/trial-{t}/self-checks.json")));
        for check in checks["selfChecks"].as_array().unwrap() {
            assert_eq!(check["countedForSubject"], false);
            assert_eq!(check["behaved"], true, "{check}");
            assert_eq!(check["injection"]["trigger"], "response-to:tools/list");
            assert_eq!(check["injection"]["seed"], t as u64);
        }
        for control in ["wire-malformed", "wire-duplicate", "wire-schema"] {
            let o = observations
                .iter()
                .find(|o| o["id"] == format!("obs-t{t}-selfcheck-{control}"))
                .expect("self-check observation");
            assert_eq!(o["outcome"], "PASS");
            assert_eq!(o["operationRef"], Value::Null);
        }
    }
    doc
}

fn clean_steps(out: &Path, trial: usize) -> Vec<Value> {
    read_json(&out.join(format!("raw/trial-{trial}/clean.oracle.json")))["steps"]
        .as_array()
        .unwrap()
        .clone()
}

/// The clean control's step `k` (1: the handshake, 2: tools/list, 3: echo,
/// 4: get-env). Request ids are random per control: step `k` carries the
/// handshake's id plus `k - 1`.
fn step(steps: &[Value], k: i64) -> &Value {
    let base = steps[0]["id"].as_i64().expect("the handshake's id") - 1;
    assert!(
        base >= 999_999,
        "request ids are drawn at random from 1,000,000 up"
    );
    steps
        .iter()
        .find(|s| s["id"] == base + k)
        .expect("step recorded")
}

/// No file of the bundle holds the harness-only marker (name or value).
fn assert_marker_absent(out: &Path) {
    for f in walk(out) {
        let bytes = std::fs::read(&f).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(MARKER_VALUE) && !text.contains(MARKER_NAME),
            "{} holds the harness's marker",
            f.display()
        );
    }
}

#[test]
fn server_everything_over_stdio_is_genuine_runtime_and_its_environment_is_scrubbed() {
    let Some(dir) = env_dir("MCPRES_EVERYTHING_DIR") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("everything");
    let index = dir.join("dist/index.js");
    let visible = format!("{VISIBLE_NAME}={VISIBLE_VALUE}");
    let output = run(&[
        "run",
        "--scenario",
        "generic",
        "--trials",
        "2",
        "--env",
        &visible,
        "--subject-artifact",
        dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--",
        "node",
        index.to_str().unwrap(),
        "stdio",
    ]);
    let doc = assert_generic_pass(&out, &output, 2);
    assert_eq!(doc["statement"]["subjectName"], "mcp-servers/everything");
    assert_eq!(
        doc["evidence"]["trialSummary"]["classification"],
        "REPEATED_STABLE"
    );
    for t in 1..=2 {
        let steps = clean_steps(&out, t);
        // echo was called with the probe and get-env was called and judged.
        assert_eq!(step(&steps, 3)["judgement"]["verdict"], "PASS");
        assert_eq!(step(&steps, 4)["judgement"]["verdict"], "PASS");
        // The get-env answer really is the subject's environment: the --env
        // variable is in it, and nothing else but the temporary-directory
        // variables the harness provides.
        let stdout =
            std::fs::read_to_string(out.join(format!("raw/trial-{t}/clean.stdout.bin"))).unwrap();
        let answer = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|m| m["id"] == step(&steps, 4)["id"])
            .expect("get-env answered");
        let env: Value =
            serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        let mut keys: Vec<&str> = env
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        let mut expected = vec![VISIBLE_NAME, "TEMP", "TMP", "TMPDIR"];
        expected.sort_unstable();
        assert_eq!(keys, expected, "{env}");
        // (its value is redacted from the captures like every --env value).
        assert_eq!(env[VISIBLE_NAME], "[REDACTED:environment-value]");
        assert!(!stdout.contains(VISIBLE_VALUE));
    }
    assert_marker_absent(&out);
}

#[test]
fn an_environment_leak_is_caught_by_the_get_env_oracle() {
    let Some(dir) = env_dir("MCPRES_EVERYTHING_DIR") else {
        return;
    };
    // /usr/bin/env adds a variable the harness was not told about: the
    // subject's own report must expose it and the clean control must fail.
    let node = which("node");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("leak");
    let index = dir.join("dist/index.js");
    let output = run(&[
        "run",
        "--scenario",
        "generic",
        "--subject-artifact",
        dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--",
        "/usr/bin/env",
        "INJECTED_BY_WRAPPER=1",
        node.to_str().unwrap(),
        index.to_str().unwrap(),
        "stdio",
    ]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.primary());
    assert_eq!(doc["statement"]["result"], "FAIL");
    let steps = clean_steps(&out, 1);
    let judgement = &step(&steps, 4)["judgement"];
    assert_eq!(judgement["stopReason"], "ENVIRONMENT_LEAK");
    assert!(
        judgement["detail"]
            .as_str()
            .unwrap()
            .contains("INJECTED_BY_WRAPPER")
    );
}

#[test]
fn python_mcp_sdk_server_over_stdio_is_genuine_runtime() {
    let Some(python) = env_dir("MCPRES_PY_MCP_PYTHON") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("python");
    let output = run(&[
        "run",
        "--scenario",
        "generic",
        "--subject-artifact",
        "tests/subjects/py_echo_server.py",
        "-o",
        out.to_str().unwrap(),
        "--",
        python.to_str().unwrap(),
        "tests/subjects/py_echo_server.py",
    ]);
    let doc = assert_generic_pass(&out, &output, 1);
    assert_eq!(doc["statement"]["subjectName"], "mcpres-py-echo");
    let steps = clean_steps(&out, 1);
    assert_eq!(step(&steps, 3)["judgement"]["verdict"], "PASS");
    // No get-env tool: recorded as skipped, not as a pass.
    assert_eq!(step(&steps, 4)["judgement"]["verdict"], "SKIPPED");
    assert_eq!(
        step(&steps, 4)["judgement"]["stopReason"],
        "NO_GET_ENV_TOOL"
    );
    assert_marker_absent(&out);
}

#[test]
fn generic_scenario_runs_against_the_reference_server_without_its_fault_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("reference");
    let output = run(&[
        "run",
        "--scenario",
        "generic",
        "-o",
        out.to_str().unwrap(),
        "--",
        exe().to_str().unwrap(),
        "serve",
        "--transport",
        "stdio",
    ]);
    assert_generic_pass(&out, &output, 1);
    // The subject's argv carries no --fault flag: the harness injected the faults.
    let lifecycle = std::fs::read_to_string(out.join("raw/trial-1/lifecycle.jsonl")).unwrap();
    assert!(!lifecycle.contains("--fault"));
    let steps = clean_steps(&out, 1);
    assert_eq!(step(&steps, 3)["judgement"]["verdict"], "PASS");
    assert_eq!(step(&steps, 4)["judgement"]["verdict"], "SKIPPED");
}

/// What every HTTP bundle shows besides the generic pass: raw HTTP captures,
/// the HTTP surfaces instrumented (stdio not applicable), the listening
/// addresses measured, and no listener left.
fn assert_http_evidence(out: &Path, doc: &Value, port: u16) -> Vec<String> {
    let surfaces = doc["evidence"]["coverage"]["surfaces"].as_array().unwrap();
    let status = |name: &str| {
        surfaces.iter().find(|s| s["surface"] == name).unwrap()["status"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(status("RAW_HTTP_REQUESTS"), "INSTRUMENTED");
    assert_eq!(status("RAW_HTTP_RESPONSES"), "INSTRUMENTED");
    assert_eq!(status("STDIO_INPUT_OUTPUT"), "NOT_APPLICABLE");
    let requests = std::fs::read(out.join("raw/trial-1/clean.http-requests.bin")).unwrap();
    let responses = std::fs::read(out.join("raw/trial-1/clean.http-responses.bin")).unwrap();
    assert!(requests.starts_with(b"POST /mcp HTTP/1.1\r\n"));
    assert!(responses.starts_with(b"HTTP/1.1 200"));
    let cleanup = read_json(&out.join("raw/cleanup-report.json"));
    assert_eq!(cleanup["listener"]["port"], port);
    assert_eq!(cleanup["listener"]["acceptsConnections"], false);
    assert_eq!(cleanup["passed"], true);
    let lifecycle = std::fs::read_to_string(out.join("raw/trial-1/lifecycle.jsonl")).unwrap();
    let listening: Value = lifecycle
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["event"] == "listening")
        .expect("the subject listened");
    listening["boundAddresses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn server_everything_over_streamable_http_is_genuine_runtime() {
    let Some(dir) = env_dir("MCPRES_EVERYTHING_DIR") else {
        return;
    };
    let port = free_port();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("everything-http");
    let index = dir.join("dist/index.js");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let port_env = format!("PORT={port}");
    let output = run(&[
        "run",
        "--scenario",
        "generic",
        "--http",
        &url,
        "--env",
        &port_env,
        "--subject-artifact",
        dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--",
        "node",
        index.to_str().unwrap(),
        "streamableHttp",
    ]);
    let doc = assert_generic_pass(&out, &output, 1);
    let bound = assert_http_evidence(&out, &doc, port);
    // This package binds every interface; the evidence says so.
    assert!(!bound.is_empty());
    let steps = clean_steps(&out, 1);
    assert_eq!(step(&steps, 4)["judgement"]["verdict"], "PASS");
    assert_marker_absent(&out);
}

#[test]
fn python_mcp_sdk_server_over_streamable_http_is_genuine_runtime() {
    let Some(python) = env_dir("MCPRES_PY_MCP_PYTHON") else {
        return;
    };
    let port = free_port();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("python-http");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let port_arg = port.to_string();
    let output = run(&[
        "run",
        "--scenario",
        "generic",
        "--http",
        &url,
        "--subject-artifact",
        "tests/subjects/py_echo_server.py",
        "-o",
        out.to_str().unwrap(),
        "--",
        python.to_str().unwrap(),
        "tests/subjects/py_echo_server.py",
        "--http",
        &port_arg,
    ]);
    let doc = assert_generic_pass(&out, &output, 1);
    assert_eq!(assert_http_evidence(&out, &doc, port), ["127.0.0.1"]);
    assert_marker_absent(&out);
}

#[test]
fn reference_server_over_streamable_http_with_the_generic_scenario() {
    let port = free_port();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("reference-http");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let port_arg = port.to_string();
    let output = run(&[
        "run",
        "--scenario",
        "generic",
        "--http",
        &url,
        "-o",
        out.to_str().unwrap(),
        "--",
        exe().to_str().unwrap(),
        "serve",
        "--transport",
        "http",
        "--port",
        &port_arg,
    ]);
    let doc = assert_generic_pass(&out, &output, 1);
    assert_eq!(assert_http_evidence(&out, &doc, port), ["127.0.0.1"]);
    // The session was closed with a DELETE carrying the server's session id.
    let requests =
        std::fs::read_to_string(out.join("raw/trial-1/clean.http-requests.bin")).unwrap();
    assert!(requests.contains("DELETE /mcp HTTP/1.1\r\n"));
    assert!(requests.to_ascii_lowercase().contains("mcp-session-id: "));
}

#[test]
fn reference_faults_scenario_over_streamable_http() {
    // The subject's own faults travel inside HTTP bodies and SSE events; the
    // decoder must hand the invalid UTF-8 to the oracle unrepaired.
    let port = free_port();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("reference-faults-http");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let port_arg = port.to_string();
    let output = run(&[
        "run",
        "--http",
        &url,
        "-o",
        out.to_str().unwrap(),
        "--",
        exe().to_str().unwrap(),
        "serve",
        "--transport",
        "http",
        "--port",
        &port_arg,
    ]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.primary());
    assert_eq!(report.evidence_class.as_deref(), Some("GENUINE_RUNTIME"));
    let mut stops: Vec<String> = doc["evidence"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "NEGATIVE_CONTROL")
        .map(|o| {
            o["negativeObservation"]["observedStopReason"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    stops.sort();
    assert_eq!(
        stops,
        [
            "INVALID_UTF8",
            "SCHEMA_VIOLATION",
            "UNSOLICITED_RESPONSE_ID"
        ]
    );
    assert_eq!(assert_http_evidence(&out, &doc, port), ["127.0.0.1"]);
}

/// A non-loopback target is refused unless an allowlist names it with the
/// reviewed target digest. Tests never contact anything but loopback, so
/// this checks only the refusals (nothing is started or contacted); the
/// accepting side of the allowlist is covered by the unit tests in
/// `harness::http`.
#[test]
fn a_non_loopback_target_needs_a_reviewed_allowlist() {
    let tmp = tempfile::tempdir().unwrap();
    let (host, port) = ("192.0.2.10", 8080);
    let url = format!("http://{host}:{port}/mcp");
    let args = |out: &Path, allow: Option<&Path>| -> Output {
        let mut a: Vec<String> = vec!["run".into(), "--scenario".into(), "generic".into()];
        a.extend(["--http".into(), url.clone()]);
        if let Some(list) = allow {
            a.extend(["--allow-remote".into(), list.display().to_string()]);
        }
        a.extend([
            "-o".into(),
            out.display().to_string(),
            "--".into(),
            "/bin/true".into(),
        ]);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        run(&refs)
    };
    let digest = mcpres::produce::harness::http::target_digest(host, port, "/mcp");
    // Without an allowlist: refused, nothing started, the digest to review is shown.
    let refused = tmp.path().join("refused");
    let o = args(&refused, None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&digest));
    assert!(!refused.exists());
    // With a wrong reviewed digest: refused.
    let list = tmp.path().join("allow.json");
    std::fs::write(
        &list,
        format!(
            r#"{{"targets": [{{"url": "{url}", "reviewedTargetSha256": "{}"}}]}}"#,
            "0".repeat(64)
        ),
    )
    .unwrap();
    let o = args(&refused, Some(&list));
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!refused.exists());
}

#[test]
fn remote_http_targets_are_refused_before_anything_starts() {
    let tmp = tempfile::tempdir().unwrap();
    for url in ["http://192.0.2.10:80/mcp", "http://example.com:80/mcp"] {
        let out = tmp.path().join("remote");
        let output = run(&[
            "run",
            "--scenario",
            "generic",
            "--http",
            url,
            "-o",
            out.to_str().unwrap(),
            "--",
            "/bin/true",
        ]);
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("loopback") || stderr.contains("IP address"),
            "{stderr}"
        );
        assert!(!out.exists());
    }
}

#[test]
fn committed_harness_bundles_validate_as_genuine_runtime() {
    let dir = root().join("bundles/harness");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    names.sort();
    assert!(names.len() >= 4, "{names:?}");
    for bundle in &names {
        let (doc, report) = load(bundle);
        assert!(report.valid, "{}: {:?}", bundle.display(), report.primary());
        assert_eq!(
            report.evidence_class.as_deref(),
            Some("GENUINE_RUNTIME"),
            "{}",
            bundle.display()
        );
        assert_eq!(doc["statement"]["result"], "PASS");
        for f in walk(bundle) {
            let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
            for private in ["/root", "/home/", "/Users/", "/work/"] {
                assert!(!text.contains(private), "{} holds {private}", f.display());
            }
        }
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        let name = bundle.file_name().unwrap().to_str().unwrap();
        assert!(
            readme.contains(&format!("-o bundles/harness/{name} ")),
            "{name} has no command in the README"
        );
    }
}

fn which(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").expect("PATH");
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not on PATH"))
}

/// The `client-faults` scenario against both third-party subjects over
/// stdio: the broken input reaches the subject itself. What each pinned
/// version answers is recorded here, so a change in an SDK shows up as a
/// failing test rather than silently.
#[test]
fn client_faults_against_third_party_servers_record_their_answers() {
    let mut subjects: Vec<(&str, Vec<String>, String, [&str; 4])> = Vec::new();
    if let Some(dir) = env_dir("MCPRES_EVERYTHING_DIR") {
        let node = which("node");
        subjects.push((
            "server-everything",
            vec![
                node.display().to_string(),
                dir.join("dist/index.js").display().to_string(),
                "stdio".into(),
            ],
            dir.display().to_string(),
            // truncated JSON: silence; invalid UTF-8: decoded lossily and
            // answered; unknown method: -32601; call without a name: -32603.
            ["NONE", "ACCEPTED", "ERROR -32601", "ERROR -32603"],
        ));
    }
    if let Some(python) = env_dir("MCPRES_PY_MCP_PYTHON") {
        subjects.push((
            "python-sdk",
            vec![
                python.display().to_string(),
                "tests/subjects/py_echo_server.py".into(),
            ],
            "tests/subjects/py_echo_server.py".into(),
            ["NONE", "ACCEPTED", "ERROR -32601", "ERROR -32602"],
        ));
    }
    for (label, argv, artifact, answers) in subjects {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join(label);
        let mut args = vec![
            "run",
            "--scenario",
            "client-faults",
            "--subject-artifact",
            artifact.as_str(),
            "-o",
            out.to_str().unwrap(),
            "--",
        ];
        args.extend(argv.iter().map(String::as_str));
        let output = run(&args);
        let (doc, report) = load(&out);
        let oracle = read_json(&out.join("raw/trial-1/client.oracle.json"));
        assert_eq!(
            output.status.code(),
            Some(0),
            "{label}: {}\n{}\n{oracle}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(report.valid, "{label}: {:?}", report.primary());
        assert_eq!(report.evidence_class.as_deref(), Some("GENUINE_RUNTIME"));
        assert_eq!(doc["statement"]["result"], "PASS");
        let got: Vec<&str> = oracle["faults"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["answer"].as_str().unwrap())
            .collect();
        assert_eq!(got, answers, "{label}: {oracle}");
    }
}

/// Revision 2026-07-28 against third-party servers: the Python SDK speaks it
/// (stdio and Streamable HTTP, stateless); server-everything does not, and the
/// record says so rather than passing.
#[test]
fn python_mcp_sdk_server_speaks_revision_2026_07_28() {
    let Some(python) = env_dir("MCPRES_PY_MCP_PYTHON") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for http in [false, true] {
        let out = tmp.path().join(format!("python-2026-{http}"));
        let port = free_port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let port_arg = port.to_string();
        let mut args = vec!["run", "--scenario", "generic", "--revision", "2026-07-28"];
        if http {
            args.extend(["--http", url.as_str()]);
        }
        args.extend([
            "--subject-artifact",
            "tests/subjects/py_echo_server.py",
            "-o",
            out.to_str().unwrap(),
            "--",
            python.to_str().unwrap(),
            "tests/subjects/py_echo_server.py",
        ]);
        if http {
            args.extend(["--http", port_arg.as_str()]);
        }
        let output = run(&args);
        let doc = assert_generic_pass(&out, &output, 1);
        assert_eq!(doc["statement"]["protocolRevision"], "2026-07-28");
        // The identity comes from the discover result's _meta.
        assert_eq!(doc["statement"]["subjectName"], "mcpres-py-echo");
        let steps = clean_steps(&out, 1);
        assert_eq!(step(&steps, 1)["method"], "server/discover");
        assert_eq!(step(&steps, 3)["judgement"]["verdict"], "PASS");
        if http {
            let requests =
                std::fs::read_to_string(out.join("raw/trial-1/clean.http-requests.bin")).unwrap();
            assert!(requests.contains("Mcp-Method: tools/call\r\n"));
            assert!(!requests.to_ascii_lowercase().contains("mcp-session-id"));
        }
    }
}

#[test]
fn server_everything_does_not_speak_revision_2026_07_28() {
    let Some(dir) = env_dir("MCPRES_EVERYTHING_DIR") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("everything-2026");
    let index = dir.join("dist/index.js");
    let output = run(&[
        "run",
        "--scenario",
        "generic",
        "--revision",
        "2026-07-28",
        "--subject-artifact",
        dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--",
        "node",
        index.to_str().unwrap(),
        "stdio",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let steps = clean_steps(&out, 1);
    let discover = step(&steps, 1);
    assert_eq!(discover["method"], "server/discover");
    assert_eq!(discover["judgement"]["stopReason"], "ERROR_RESPONSE");
    assert!(
        discover["judgement"]["detail"]
            .as_str()
            .unwrap()
            .contains("-32601")
    );
    // Nothing passed, so nothing is claimed: no negative control reached its property.
    let (doc, _) = load(&out);
    assert_eq!(doc["statement"]["result"], "FAIL");
    assert_eq!(doc["evidence"]["evidenceClassClaim"], "DOCUMENTED_ONLY");
}
