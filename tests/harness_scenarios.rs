//! Scenario files, recovery controls and client-to-server faults, end to end:
//! the real binary drives the reference server (`mcpres serve`), and every
//! bundle is loaded back from disk and validated.
#![cfg(feature = "server")]

mod support;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

use support::*;

/// `mcpres run [extra] -o out -- mcpres serve --transport stdio`.
fn run(extra: &[&str], out: &Path) -> Output {
    let exe = exe();
    let mut args = vec!["run"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "-o",
        out.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
        "serve",
        "--transport",
        "stdio",
    ]);
    mcpres(&args)
}

fn ops<'a>(doc: &'a Value, kind: &str) -> Vec<&'a Value> {
    doc["evidence"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == kind)
        .collect()
}

#[test]
fn reference_recovery_recovers_every_transient_fault_once() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&["--scenario", "reference-recovery", "--seed", "3"], &out);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(report.evidence_class.as_deref(), Some("GENUINE_RUNTIME"));
    assert_eq!(doc["statement"]["result"], "PASS");

    // The descriptor carries the declared policy, and the run the scenario itself.
    let descriptor = &doc["evidence"]["scenario"]["descriptor"];
    assert_eq!(
        descriptor["recoveryPolicies"][0]["id"],
        "retry-idempotent-counter"
    );
    assert_eq!(descriptor["recoveryPolicies"][0]["retryLimit"], 3);
    assert_eq!(descriptor["sideEffectModel"], "IDEMPOTENT");
    let scenario = read_json(&out.join("raw/scenario.json"));
    assert_eq!(scenario["name"], "reference-recovery");

    // Each recovery control: a fault case, then retries that point at it.
    let faults = ops(&doc, "FAULT_CASE");
    let retries = ops(&doc, "RECOVERY_ATTEMPT");
    assert_eq!(faults.len(), 4);
    assert!(retries.len() >= 4);
    for r in &retries {
        assert!(
            faults
                .iter()
                .any(|f| f["operationId"] == r["parentOperationId"])
        );
        assert_eq!(r["recoveryPolicyId"], "retry-idempotent-counter");
        assert!(r["attempt"].as_u64().unwrap() >= 1);
    }
    assert_eq!(surface(&doc, "RETRIES")["status"], "INSTRUMENTED");
    assert_eq!(surface(&doc, "RETRIES")["required"], true);

    let trial = out.join("raw/trial-1");
    let oracle = |name: &str| read_json(&trial.join(format!("{name}.recovery.json")));
    for name in [
        "recover-timeout",
        "recover-overload",
        "recover-disconnect",
        "recover-crash",
    ] {
        let o = oracle(name);
        assert_eq!(o["stopReason"], "RECOVERED", "{name}: {o}");
        assert_eq!(o["faultInjected"], true, "{name}");
        assert_eq!(o["effectsAfterRecovery"]["effects"], 1, "{name}");
        assert_ne!(o["attempts"][0]["observed"], "SUCCEEDED", "{name}");
        let injection =
            std::fs::read_to_string(trial.join(format!("{name}.injection.jsonl"))).unwrap();
        assert!(injection.contains("\"event\":\"injection\""), "{name}");
    }
    // Timeout: the abandoned request was cancelled before the retry, on the
    // same process.
    let timeout = oracle("recover-timeout");
    assert_eq!(timeout["attempts"][0]["observed"], "NO_RESPONSE_IN_TIME");
    assert_eq!(timeout["attempts"][0]["action"], "CANCEL_AND_RETRY");
    let stdin = std::fs::read_to_string(trial.join("recover-timeout.stdin.bin")).unwrap();
    assert!(stdin.contains("notifications/cancelled"));
    assert!(!trial.join("recover-timeout-restart.stdin.bin").exists());
    // Overload: the server said when to come back.
    assert_eq!(
        oracle("recover-overload")["attempts"][0]["observed"],
        "RETRYABLE_ERROR"
    );
    // Disconnect and crash: the transport closed and a replacement was started.
    for name in ["recover-disconnect", "recover-crash"] {
        let o = oracle(name);
        assert_eq!(o["attempts"][0]["observed"], "DISCONNECTED", "{name}");
        assert_eq!(o["disconnectObserved"], true);
        assert!(trial.join(format!("{name}-restart.stdin.bin")).exists());
    }
    assert_eq!(
        surface(&doc, "TRANSPORT_DISCONNECTS")["status"],
        "INSTRUMENTED"
    );
    // The crash was a real SIGABRT, seen by the harness when it reaped the process.
    let lifecycle = std::fs::read_to_string(trial.join("lifecycle.jsonl")).unwrap();
    let crashed = lifecycle.lines().any(|l| {
        let e: Value = serde_json::from_str(l).unwrap();
        e["session"] == "t1-recover-crash" && e["event"] == "reaped" && e["signal"] == 6
    });
    assert!(crashed, "no SIGABRT in the lifecycle:\n{lifecycle}");
}

/// A scenario file of our own, with policies that must not recover: a retry
/// limit of zero, and a side-effecting call that is never retried after an
/// ambiguous failure. Both expectations are declared, so the run passes.
#[test]
fn finite_and_unsafe_policies_stop_as_declared() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("limits.toml");
    let mut text = mcpres_show("reference-faults");
    text = text.replace("name = \"reference-faults\"", "name = \"limits\"");
    text.push_str(
        r#"
[[recoveryPolicies]]
id = "no-retries"
retryLimit = 0
initialBackoffMs = 10
maxBackoffMs = 10
attemptTimeoutMs = 300
timeLimitMs = 2000
cancellationBoundary = "none"
sideEffectModel = "IDEMPOTENT"
safetyMechanism = "none"

[[recoveryPolicies]]
id = "side-effecting"
retryLimit = 3
initialBackoffMs = 10
maxBackoffMs = 10
attemptTimeoutMs = 300
timeLimitMs = 2000
cancellationBoundary = "notifications/cancelled"
sideEffectModel = "SIDE_EFFECTING"
safetyMechanism = "never repeat a call that may have taken effect"

[[recoveryControls]]
name = "limit-zero"
fault = "resource-exhaustion"
policy = "no-retries"
expectRecovered = false

[[recoveryControls]]
name = "unsafe-timeout"
fault = "timeout"
policy = "side-effecting"
expectRecovered = false
"#,
    );
    std::fs::write(&file, &text).unwrap();
    let check = mcpres(&["scenarios", "check", file.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(0), "{}", output_text(&check));

    let out = tmp.path().join("bundle");
    let o = run(&["--scenario", file.to_str().unwrap()], &out);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    let trial = out.join("raw/trial-1");
    let zero = read_json(&trial.join("limit-zero.recovery.json"));
    assert_eq!(zero["stopReason"], "RETRY_LIMIT_REACHED");
    assert_eq!(zero["attempts"].as_array().unwrap().len(), 1);
    let unsafe_ = read_json(&trial.join("unsafe-timeout.recovery.json"));
    assert_eq!(unsafe_["stopReason"], "UNSAFE_TO_RETRY");
    assert_eq!(unsafe_["recovered"], false);
    assert!(ops(&doc, "RECOVERY_ATTEMPT").is_empty());
    assert_eq!(
        doc["evidence"]["scenario"]["descriptor"]["recoveryPolicies"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

fn mcpres_show(name: &str) -> String {
    let o = mcpres(&["scenarios", "show", name]);
    assert_eq!(o.status.code(), Some(0));
    text(&o.stdout)
}

#[test]
fn client_faults_are_answered_and_the_subject_stays_usable() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&["--scenario", "client-faults"], &out);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(doc["statement"]["result"], "PASS");
    let oracle = read_json(&out.join("raw/trial-1/client.oracle.json"));
    let faults = oracle["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 4);
    let answer = |name: &str| {
        faults.iter().find(|f| f["name"] == name).unwrap()["answer"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // The reference server answers a parse error with -32700 and an unknown
    // method with -32601, as JSON-RPC asks.
    assert_eq!(answer("truncated-json"), "ERROR -32700");
    assert_eq!(answer("unknown-method"), "ERROR -32601");
    // A call without a name is invalid params, answered by our transport pump
    // (the SDK alone would say -32601).
    assert_eq!(answer("call-without-name"), "ERROR -32602");
    // The broken bytes went to the subject exactly as written.
    let stdin = std::fs::read(out.join("raw/trial-1/client.stdin.bin")).unwrap();
    assert!(stdin.windows(3).any(|w| w == [0xC3, 0x28, 0xFF]));
    let cases = ops(&doc, "FAULT_CASE");
    assert_eq!(cases.len(), 4);
    assert!(cases.iter().all(|c| c["outcome"] == "PASS"));
    let declared: Vec<&str> = doc["evidence"]["scenario"]["descriptor"]["faults"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["method"] == "HARNESS_CLIENT_INPUT")
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(declared.len(), 4, "{declared:?}");
}

#[test]
fn client_faults_over_http_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = mcpres(&[
        "run",
        "--scenario",
        "client-faults",
        "--http",
        "http://127.0.0.1:9/mcp",
        "-o",
        out.to_str().unwrap(),
        "--",
        exe().to_str().unwrap(),
        "serve",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("stdio only"),
        "{}",
        output_text(&o)
    );
    assert!(!out.exists());
}

/// A file that declares the wrong expectation is not trusted: the control
/// is recorded as a failed fault case, and the run fails (exit 1) with a valid
/// bundle that says FAIL. A JSON file works the same as TOML.
#[test]
fn a_wrong_expectation_in_a_json_file_fails_the_run_honestly() {
    let tmp = tempfile::tempdir().unwrap();
    let mut scenario: Value = {
        let text = mcpres_show("reference-faults");
        let o = mcpres(&["scenarios", "show", "reference-faults"]);
        assert!(o.status.success());
        // TOML to JSON through the library (the same parser the CLI uses).
        let s = mcpres::produce::harness::scenario_file::parse_toml(&text, "t").unwrap();
        s.document
    };
    scenario["name"] = json!("wrong-expectation");
    scenario["negativeControls"][0]["expectedStopReason"] = json!("DUPLICATE_RESPONSE");
    let file = tmp.path().join("wrong.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&scenario).unwrap()).unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&["--scenario", file.to_str().unwrap()], &out);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(doc["statement"]["result"], "FAIL");
    let failed = ops(&doc, "FAULT_CASE");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["operationId"], "t1-schema-violation");
    assert_eq!(failed[0]["outcome"], "FAIL");
    assert_eq!(ops(&doc, "NEGATIVE_CONTROL").len(), 2);
    assert_eq!(read_json(&out.join("raw/scenario.json")), scenario);
}

#[test]
fn bad_scenario_files_are_refused_before_anything_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.toml");
    std::fs::write(
        &file,
        mcpres_show("reference-faults").replace(
            "mutant = \"oracle-decodes-lossily\"",
            "mutant = \"oracle-guesses\"",
        ),
    )
    .unwrap();
    let check = mcpres(&["scenarios", "check", file.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(1));
    assert!(
        text(&check.stderr).contains("/negativeControls/2/mutant"),
        "{}",
        output_text(&check)
    );
    let out = tmp.path().join("bundle");
    let o = run(&["--scenario", file.to_str().unwrap()], &out);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    assert!(!out.exists());
    let missing = mcpres(&["scenarios", "check", "/nonexistent/scenario.toml"]);
    assert_eq!(missing.status.code(), Some(2));
}

/// Over Streamable HTTP and on 2026-07-28: a closed connection with the
/// process alive is retried on a new connection to the same process; a dead
/// process is replaced; a 503 is retried after a backoff.
#[test]
fn recovery_over_http_on_the_stateless_revision() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let port = free_port().to_string();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let exe = exe();
    let o = mcpres(&[
        "run",
        "--scenario",
        "reference-recovery",
        "--revision",
        "2026-07-28",
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
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(doc["statement"]["protocolRevision"], "2026-07-28");
    let trial = out.join("raw/trial-1");
    let first = |name: &str| {
        let o = read_json(&trial.join(format!("{name}.recovery.json")));
        assert_eq!(o["stopReason"], "RECOVERED", "{name}: {o}");
        (
            o["attempts"][0]["observed"].as_str().unwrap().to_string(),
            o["attempts"][0]["action"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(
        first("recover-disconnect"),
        ("DISCONNECTED".into(), "RECONNECT_AND_RETRY".into())
    );
    assert_eq!(
        first("recover-crash"),
        ("DISCONNECTED".into(), "RESTART_AND_RETRY".into())
    );
    assert_eq!(
        first("recover-overload"),
        ("RETRYABLE_ERROR".into(), "BACKOFF_AND_RETRY".into())
    );
    // Same process after the reconnect: exactly one effect was counted.
    let d = read_json(&trial.join("recover-disconnect.recovery.json"));
    assert_eq!(d["effectsAfterRecovery"]["effects"], 1);
    assert!(
        !trial
            .join("recover-disconnect-restart.http-requests.bin")
            .exists()
    );
    // Stateless: no initialize anywhere, every request carries _meta.
    let requests =
        std::fs::read_to_string(trial.join("recover-timeout.http-requests.bin")).unwrap();
    assert!(!requests.contains("\"initialize\""));
    assert!(requests.contains("io.modelcontextprotocol/protocolVersion"));
}

/// `defaults.trials` applies when `--trials` is not given, and the scenario's
/// duration limit stops the run: a trial that would start after it is not
/// run, the trial summary says INCOMPLETE, and the run fails (exit 1) with a
/// valid bundle.
#[test]
fn the_scenario_duration_limit_stops_later_trials() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("short.toml");
    let mut body = mcpres_show("reference-faults");
    body = body.replace("name = \"reference-faults\"", "name = \"short\"");
    body.push_str(
        r#"
[defaults]
trials = 4
seed = 40

[limits]
scenarioDurationMs = 1000

[[recoveryPolicies]]
id = "slow"
retryLimit = 1
initialBackoffMs = 10
maxBackoffMs = 10
attemptTimeoutMs = 1200
timeLimitMs = 5000
cancellationBoundary = "notifications/cancelled"
sideEffectModel = "IDEMPOTENT"
safetyMechanism = "counter key"

[[recoveryControls]]
name = "wait"
fault = "timeout"
policy = "slow"
"#,
    );
    std::fs::write(&file, &body).unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&["--scenario", file.to_str().unwrap()], &out);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    assert!(
        text(&o.stderr).contains("scenario duration limit"),
        "{}",
        output_text(&o)
    );
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    let summary = &doc["evidence"]["trialSummary"];
    assert_eq!(summary["plannedTrials"], 4);
    assert_eq!(summary["completedTrials"], 1);
    assert_eq!(summary["seeds"], json!([40]));
    assert_eq!(summary["classification"], "INCOMPLETE");
    assert_eq!(doc["statement"]["result"], "FAIL");
}

/// Stops a server process started by a test when dropped.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `--http URL` without PROGRAM: a server the harness did not start (here one
/// this test starts on loopback). The run is driven and judged as usual, but
/// no process is observed, so the evidence is DOCUMENTED_ONLY, never
/// GENUINE_RUNTIME; the server is left running.
#[test]
fn a_server_the_harness_did_not_start_is_evaluated_without_process_claims() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port().to_string();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let exe = exe();
    let server = Server(
        Command::new(&exe)
            .args(["serve", "--transport", "http", "--port", &port])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_err() {
        assert!(
            std::time::Instant::now() < until,
            "the server did not listen"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Without --subject-artifact, and with subject faults, it is refused.
    let refused = mcpres(&[
        "run",
        "--http",
        &url,
        "-o",
        tmp.path().join("x").to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(text(&refused.stderr).contains("--subject-artifact"));
    // The reference server's fault scenario needs a subject the harness starts
    // (without --scenario, a server it did not start gets `generic`).
    let refused = mcpres(&[
        "run",
        "--scenario",
        "reference-faults",
        "--http",
        &url,
        "--subject-artifact",
        exe.to_str().unwrap(),
        "-o",
        tmp.path().join("y").to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("--fault"),
        "{}",
        output_text(&refused)
    );

    let out = tmp.path().join("bundle");
    let o = mcpres(&[
        "run",
        "--scenario",
        "generic",
        "--http",
        &url,
        "--subject-artifact",
        exe.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(report.evidence_class.as_deref(), Some("DOCUMENTED_ONLY"));
    assert_eq!(doc["statement"]["result"], "PASS");
    let observations = doc["evidence"]["observations"].as_array().unwrap();
    assert!(
        observations
            .iter()
            .all(|o| o["type"] != "PROCESS_EXECUTION")
    );
    assert_eq!(ops(&doc, "NEGATIVE_CONTROL").len(), 2);
    assert_eq!(
        surface(&doc, "CHILD_PROCESS_LIFECYCLE")["status"],
        "UNINSTRUMENTED"
    );
    let subject = read_json(&out.join("raw/subject-artifact.json"));
    assert_eq!(subject["target"]["startedByHarness"], false);
    // The harness left the server alone: it still answers.
    assert!(std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_ok());
    drop(server);
}

/// A subject that leaves a temporary file behind fails the cleanup check:
/// the reference server's `cleanup-failure` fault keeps a handle open in its
/// residue directory (a temporary directory here), the harness sees it in
/// /proc/PID/fd at the end of the session, and finds it still there after
/// the process group is gone.
#[test]
fn a_temporary_file_left_behind_fails_the_cleanup_check() {
    let tmp = tempfile::tempdir().unwrap();
    let residue = tmp.path().join("residue");
    std::fs::create_dir(&residue).unwrap();
    let out = tmp.path().join("bundle");
    let exe = exe();
    // Without the sandbox: the file reaches the host and is found from the
    // subject's open files.
    let o = mcpres(&[
        "run",
        "--sandbox",
        "off",
        "-o",
        out.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
        "serve",
        "--fault",
        "cleanup-failure@tool-echo",
        "--residue-dir",
        residue.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(doc["statement"]["result"], "FAIL");
    let cleanup = read_json(&out.join("raw/cleanup-report.json"));
    assert_eq!(cleanup["passed"], false);
    let left = cleanup["temporaryFilesLeft"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{cleanup}");
    assert_eq!(left[0]["session"], "clean");
    let path = left[0]["path"].as_str().unwrap();
    assert!(path.contains("mcpres-retained-"), "{path}");
    assert!(Path::new(path).is_file());
    let obs = doc["evidence"]["observations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["type"] == "CLEANUP_CHECK")
        .unwrap();
    assert_eq!(obs["outcome"], "FAIL");
    assert_eq!(
        surface(&doc, "FILESYSTEM_OUTPUTS")["status"],
        "OBSERVED_INDIRECTLY"
    );
    // In the sandbox, the same file is named from the overlay (length and
    // digest) and never reaches the host; the surface is instrumented.
    let boxed = tmp.path().join("boxed");
    let residue_boxed = tmp.path().join("residue-boxed");
    std::fs::create_dir(&residue_boxed).unwrap();
    let o = mcpres(&[
        "run",
        "--sandbox",
        "require",
        "-o",
        boxed.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
        "serve",
        "--fault",
        "cleanup-failure@tool-echo",
        "--residue-dir",
        residue_boxed.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let (doc, report) = load(&boxed);
    assert!(report.valid, "{:?}", report.findings);
    let cleanup = read_json(&boxed.join("raw/cleanup-report.json"));
    assert_eq!(cleanup["passed"], false);
    assert_eq!(cleanup["reasonCode"], "RESIDUE_SUBJECT_FILES");
    let fs = read_json(&boxed.join("raw/filesystem-report.json"));
    let sessions = fs["sandboxSessions"]["sessions"].as_array().unwrap();
    let clean_session = sessions.iter().find(|s| s["session"] == "clean").unwrap();
    let named = clean_session["entriesLeft"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["path"]
                .as_str()
                .is_some_and(|p| p.contains("mcpres-retained-"))
        })
        .count();
    assert_eq!(named, 1, "{clean_session}");
    assert_eq!(
        std::fs::read_dir(&residue_boxed).unwrap().count(),
        0,
        "the residue reached the host"
    );
    assert_eq!(
        surface(&doc, "FILESYSTEM_OUTPUTS")["status"],
        "INSTRUMENTED"
    );
    // Without the fault, the same run leaves nothing and passes.
    let clean = tmp.path().join("clean");
    let o = run(&[], &clean);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let cleanup = read_json(&clean.join("raw/cleanup-report.json"));
    assert_eq!(cleanup["temporaryFilesLeft"], json!([]));
}
