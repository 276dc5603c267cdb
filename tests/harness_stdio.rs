//! `mcpres run` and `mcpres demo` end to end: the real binary drives real
//! subject processes (the reference server, /usr/bin/env, a shell that forks a
//! sleeper), and every bundle is loaded back from disk and validated.
#![cfg(feature = "server")]

mod support;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use support::*;

const SERVER_NAME: &str = "mcpres-reference-server";

/// `mcpres ARGS` with a marker in its environment that no bundle may contain.
fn mcpres(args: &[&str]) -> Output {
    command()
        .args(args)
        .env("MCPRES_HARNESS_LEAK_MARKER", "harness-only-value-7f3a")
        .output()
        .expect("run mcpres")
}

#[test]
fn reference_server_run_is_a_valid_genuine_runtime_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let exe = exe();
    let o = mcpres(&[
        "run",
        "--trials",
        "2",
        "--seed",
        "7",
        "-o",
        out.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
        "serve",
        "--transport",
        "stdio",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(report.evidence_class.as_deref(), Some("GENUINE_RUNTIME"));
    assert_eq!(doc["statement"]["result"], "PASS");
    assert_eq!(doc["statement"]["subjectName"], SERVER_NAME);
    let ev = &doc["evidence"];
    assert_eq!(ev["trialSummary"]["classification"], "REPEATED_STABLE");
    assert_eq!(ev["trialSummary"]["seeds"], serde_json::json!([7, 8]));
    let negatives: Vec<&Value> = ev["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["kind"] == "NEGATIVE_CONTROL")
        .collect();
    assert_eq!(negatives.len(), 6, "three negative controls per trial");
    for n in &negatives {
        let neg = &n["negativeObservation"];
        assert_eq!(neg["mutantKilled"], true);
        assert_eq!(neg["observedStopReason"], neg["expectedStopReason"]);
    }
    let stops: Vec<&str> = negatives
        .iter()
        .map(|n| {
            n["negativeObservation"]["observedStopReason"]
                .as_str()
                .unwrap()
        })
        .collect();
    for want in [
        "SCHEMA_VIOLATION",
        "UNSOLICITED_RESPONSE_ID",
        "INVALID_UTF8",
    ] {
        assert!(stops.contains(&want), "{stops:?}");
    }
    // Raw bytes are captured before parsing: the malformed frame is in stdout as sent.
    let raw = std::fs::read(out.join("raw/trial-1/malformed-message.stdout.bin")).unwrap();
    assert!(
        raw.windows(2).any(|w| w == [0xC3, 0x28]),
        "the invalid UTF-8 pair is recorded raw"
    );
    let injection = text(&std::fs::read(out.join("raw/trial-1/reorder.injection.jsonl")).unwrap());
    assert!(injection.contains("\"fault\":\"reorder\""));
    // Observations of every kind the issue asks for are present and passing.
    let kinds: Vec<(&str, &str)> = ev["observations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["type"].as_str().unwrap(), o["outcome"].as_str().unwrap()))
        .collect();
    for k in [
        "PROCESS_EXECUTION",
        "PROTOCOL_EXCHANGE",
        "VALIDATOR_CHECK",
        "CLEANUP_CHECK",
        "PRIVACY_SCAN",
    ] {
        assert!(kinds.contains(&(k, "PASS")), "{k} missing in {kinds:?}");
    }
    assert_eq!(ev["coverage"]["surfaces"].as_array().unwrap().len(), 14);
    // Writing is exclusive: the same output again is a harness error.
    let again = mcpres(&[
        "run",
        "-o",
        out.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
        "serve",
    ]);
    assert_eq!(again.status.code(), Some(2));
}

#[test]
fn failing_clean_control_gives_exit_1_and_a_valid_fail_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let exe = exe();
    // The subject's own fault breaks only the clean control's echo call; the
    // negative controls fault `add` and still reach their properties.
    let o = mcpres(&[
        "run",
        "-o",
        out.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
        "serve",
        "--transport",
        "stdio",
        "--fault",
        "dependency-failure@tool-echo",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(doc["statement"]["result"], "FAIL");
    let clean = doc["evidence"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "CLEAN_CONTROL")
        .unwrap()
        .clone();
    assert_eq!(clean["outcome"], "FAIL");
    let oracle: Value =
        serde_json::from_slice(&std::fs::read(out.join("raw/trial-1/clean.oracle.json")).unwrap())
            .unwrap();
    assert_eq!(oracle["stopReason"], "TOOL_ERROR");
    assert!(text(&o.stdout).contains("result FAIL"));
}

#[test]
fn subject_environment_is_exactly_the_env_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    // /usr/bin/env prints its environment and exits: not an MCP server, so the
    // run fails (exit 1), but the raw stdout capture shows what it saw.
    let o = mcpres(&[
        "run",
        "--env",
        "FOO=visible-value",
        "--env",
        "LANG=C",
        "-o",
        out.to_str().unwrap(),
        "--",
        "/usr/bin/env",
    ]);
    assert_eq!(o.status.code(), Some(1), "stderr:\n{}", text(&o.stderr));
    let seen = text(&std::fs::read(out.join("raw/trial-1/clean.stdout.bin")).unwrap());
    let mut lines: Vec<&str> = seen.lines().collect();
    lines.sort_unstable();
    // Besides the --env pairs, only the session's private temporary directory,
    // which the harness hands over as TMPDIR, TMP and TEMP.
    let (temp, rest): (Vec<&str>, Vec<&str>) = lines.into_iter().partition(|l| {
        ["TMPDIR=", "TMP=", "TEMP="]
            .iter()
            .any(|k| l.starts_with(k))
    });
    // Every --env value is redacted from the captures, but a one-byte value
    // whose name is not secret-named (the privacy report names it).
    assert_eq!(rest, vec!["FOO=[REDACTED:environment-value]", "LANG=C"]);
    let privacy = read_json(&out.join("raw/privacy-report.json"));
    assert_eq!(privacy["environmentNotRedacted"][0]["name"], "LANG");
    assert_eq!(temp.len(), 3, "{temp:?}");
    let dirs: Vec<&str> = temp.iter().map(|l| l.split_once('=').unwrap().1).collect();
    assert!(
        dirs.iter()
            .all(|d| *d == dirs[0] && d.ends_with("/t1-clean")),
        "{dirs:?}"
    );
    assert!(!seen.contains("harness-only-value-7f3a"));
    // Nothing from the harness's environment reached any session.
    for entry in std::fs::read_dir(out.join("raw/trial-1")).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(!text(&bytes).contains("harness-only-value-7f3a"));
    }
    // Without an MCP round trip the evidence cannot claim a runtime class.
    let evidence: Value =
        serde_json::from_slice(&std::fs::read(out.join("evidence-envelope.json")).unwrap())
            .unwrap();
    assert_eq!(evidence["evidenceClassClaim"], "DOCUMENTED_ONLY");
    // No negative control could reach its property: the record is written, and
    // the validator calls it what it is.
    let (_, report) = load(&out);
    assert_eq!(
        report.primary(),
        Some(mcpres::validate::codes::VACUOUS_NEGATIVE_CONTROL)
    );
    assert!(text(&o.stdout).contains("INVALID: MCP_RES_VACUOUS_NEGATIVE_CONTROL"));
}

fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.trim_start())
                .unwrap_or("");
            !state.starts_with('Z')
        }
    }
}

#[test]
fn the_whole_process_tree_is_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let pids = tmp.path().join("pids");
    let exe = exe();
    // Each subject forks a sleeper into its process group, then becomes the server.
    let script = format!(
        "/usr/bin/sleep 300 >/dev/null 2>&1 </dev/null & echo $! >> \"$PIDFILE\"; exec {} serve --transport stdio \"$@\"",
        exe.display()
    );
    // Without the sandbox: the test reads the pid file the subject writes
    // on the host (in the sandbox it would land in the overlay).
    let o = mcpres(&[
        "run",
        "--sandbox",
        "off",
        "--env",
        &format!("PIDFILE={}", pids.display()),
        "-o",
        out.to_str().unwrap(),
        "--",
        "/bin/sh",
        "-c",
        &script,
        "mcpres-subject",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let list: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(
        list.len(),
        4,
        "one sleeper per subject process (clean + 3 negative controls)"
    );
    for pid in list {
        assert!(!pid_alive(pid), "sleeper {pid} survived");
    }
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    let cleanup: Value =
        serde_json::from_slice(&std::fs::read(out.join("raw/cleanup-report.json")).unwrap())
            .unwrap();
    assert_eq!(cleanup["passed"], true);
    let lifecycle = text(&std::fs::read(out.join("raw/trial-1/lifecycle.jsonl")).unwrap());
    assert!(lifecycle.contains("\"event\":\"group-sigkill\",\"offsetMs\""));
    assert!(
        lifecycle.contains("\"result\":\"signalled\""),
        "the sleepers were still there to kill"
    );
    assert_eq!(doc["statement"]["result"], "PASS");
}

#[test]
fn demo_runs_signs_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("demo");
    let o = mcpres(&["demo", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let stdout = text(&o.stdout);
    assert!(stdout.contains("verified:"), "{stdout}");
    let (doc, report) = load(&out);
    assert!(report.valid);
    assert_eq!(doc["evidence"]["trialSummary"]["completedTrials"], 3);
    let attested = tmp.path().join("demo.attested.json");
    let loaded = mcpres::bundle::load(&attested, &mcpres::json::Limits::default()).unwrap();
    let report = mcpres::validate::validate_document(&loaded.doc.unwrap(), &Default::default());
    assert!(report.valid, "{:?}", report.findings);
    // The ephemeral key never reaches the disk.
    let names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".key")), "{names:?}");
}

#[test]
fn scenarios_list_shows_the_builtin() {
    let o = mcpres(&["scenarios", "list"]);
    assert_eq!(o.status.code(), Some(0));
    let s = text(&o.stdout);
    assert!(s.contains("reference-faults (default for `mcpres serve`)"));
    assert!(s.contains("generic (default for any other subject)"));
    assert!(s.contains("mutant/oracle-ignores-response-ids"));
}

#[test]
fn ctrl_c_kills_the_subject_tree_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let pids = tmp.path().join("pids");
    // A subject that never answers: the harness is still waiting when SIGINT arrives.
    let script = "/usr/bin/sleep 300 >/dev/null 2>&1 </dev/null & echo $! >> \"$PIDFILE\"; echo $$ >> \"$PIDFILE\"; exec /usr/bin/sleep 300";
    let child = command()
        .args([
            "run",
            "--sandbox",
            "off",
            "--env",
            &format!("PIDFILE={}", pids.display()),
            "-o",
            out.to_str().unwrap(),
            "--",
            "/bin/sh",
            "-c",
            script,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let list = loop {
        let list: Vec<u32> = std::fs::read_to_string(&pids)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if list.len() == 2 {
            break list;
        }
        assert!(
            started.elapsed().as_secs() < 20,
            "the subject never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(list.iter().all(|p| pid_alive(*p)));
    let status = Command::new("/bin/kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "stderr:\n{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("interrupted by SIGINT"));
    // SIGKILL is delivered asynchronously: allow the kernel a moment to finish it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while list.iter().any(|p| pid_alive(*p)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for pid in list {
        assert!(!pid_alive(pid), "process {pid} survived Ctrl-C");
    }
    assert!(!out.exists(), "no bundle is written for an interrupted run");
}

#[test]
fn secrets_and_home_paths_are_redacted_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let exe = exe();
    let script = format!(
        "echo \"token=$MY_API_TOKEN at /home/alice/project\" >&2; exec {} serve --transport stdio \"$@\"",
        exe.display()
    );
    let o = mcpres(&[
        "run",
        "--env",
        "MY_API_TOKEN=s3cr3t-value-91",
        "-o",
        out.to_str().unwrap(),
        "--",
        "/bin/sh",
        "-c",
        &script,
        "mcpres-subject",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let stderr = text(&std::fs::read(out.join("raw/trial-1/clean.stderr.bin")).unwrap());
    assert!(
        stderr.contains("token=[REDACTED:environment-value]"),
        "{stderr}"
    );
    assert!(stderr.contains("[REDACTED:home-path]/project"), "{stderr}");
    for entry in walk(&out) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !text(&bytes).contains("s3cr3t-value-91"),
            "{}",
            entry.display()
        );
        assert!(!text(&bytes).contains("/home/alice"), "{}", entry.display());
    }
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("raw/privacy-report.json")).unwrap())
            .unwrap();
    assert_eq!(report["remainingAfterRedaction"], 0);
    let kinds: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"environment-value:MY_API_TOKEN") && kinds.contains(&"home-path"),
        "{kinds:?}"
    );
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    let privacy = doc["evidence"]["observations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["type"] == "PRIVACY_SCAN")
        .unwrap()
        .clone();
    assert_eq!(privacy["reasonCode"], "SECRETS_REDACTED");
    assert_eq!(privacy["outcome"], "PASS");
}

#[test]
fn harness_errors_exit_2_without_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let out_s = out.to_str().unwrap();
    let exe = exe();
    let cases: [Vec<&str>; 4] = [
        vec!["run", "-o", out_s, "--", "/no/such/program"],
        vec![
            "run",
            "--trials",
            "10001",
            "-o",
            out_s,
            "--",
            exe.to_str().unwrap(),
            "serve",
        ],
        vec![
            "run",
            "--scenario",
            "nope",
            "-o",
            out_s,
            "--",
            exe.to_str().unwrap(),
            "serve",
        ],
        vec![
            "run",
            "--env",
            "NOEQUALS",
            "-o",
            out_s,
            "--",
            exe.to_str().unwrap(),
            "serve",
        ],
    ];
    for args in cases {
        let o = mcpres(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("mcpres run: error:"), "{args:?}");
        assert!(!out.exists(), "{args:?}");
    }
}

// ---------------------------------------------------------------------------
// Streamable HTTP (persistent connections, judged statuses) and revision 2026-07-28
// ---------------------------------------------------------------------------

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `mcpres run [extra...] --http URL -o OUT -- mcpres serve --transport http --port P [serve_args...]`.
fn run_http(out: &Path, extra: &[&str], serve_args: &[&str]) -> Output {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let port_arg = port.to_string();
    let exe = exe();
    let mut args = vec!["run"];
    args.extend_from_slice(extra);
    args.extend(["--http", url.as_str(), "-o", out.to_str().unwrap(), "--"]);
    args.extend([
        exe.to_str().unwrap(),
        "serve",
        "--transport",
        "http",
        "--port",
        port_arg.as_str(),
    ]);
    args.extend_from_slice(serve_args);
    mcpres(&args)
}

fn negative_stops(doc: &Value) -> Vec<String> {
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
    stops
}

const REFERENCE_STOPS: [&str; 3] = [
    "INVALID_UTF8",
    "SCHEMA_VIOLATION",
    "UNSOLICITED_RESPONSE_ID",
];

#[test]
fn http_sessions_reuse_their_connection_and_record_its_lifecycle() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run_http(&out, &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(report.evidence_class.as_deref(), Some("GENUINE_RUNTIME"));
    assert_eq!(negative_stops(&doc), REFERENCE_STOPS);
    let events = jsonl(&out.join("raw/trial-1/lifecycle.jsonl"));
    let clean: Vec<&Value> = events
        .iter()
        .filter(|e| e["session"] == "t1-clean")
        .collect();
    let count = |name: &str| clean.iter().filter(|e| e["event"] == name).count();
    // initialize, notifications/initialized, tools/list, tools/call, DELETE: one connection.
    assert_eq!(count("http-request"), 5, "{clean:#?}");
    assert_eq!(count("connection-open"), 1, "{clean:#?}");
    assert_eq!(count("connection-closed"), 1, "{clean:#?}");
    let reused = clean
        .iter()
        .filter(|e| e["event"] == "http-request" && e["reused"] == true)
        .count();
    assert_eq!(reused, 4);
    assert!(
        clean
            .iter()
            .filter(|e| e["event"] == "http-request" || e["event"] == "http-response")
            .all(|e| e["connection"] == 1)
    );
    let close = clean
        .iter()
        .find(|e| e["event"] == "connection-closed")
        .unwrap();
    assert_eq!(close["by"], "client");
    assert_eq!(close["exchanges"], 5);
    // Several requests on one connection, none asking to close it.
    let requests = text(&std::fs::read(out.join("raw/trial-1/clean.http-requests.bin")).unwrap());
    assert_eq!(requests.matches("POST /mcp HTTP/1.1\r\n").count(), 4);
    assert!(!requests.to_ascii_lowercase().contains("connection: close"));
    // Every status was judged: the steps pass with their statuses.
    let oracle: Value =
        serde_json::from_slice(&std::fs::read(out.join("raw/trial-1/clean.oracle.json")).unwrap())
            .unwrap();
    assert_eq!(oracle["stopReason"], "COMPLETED", "{oracle}");
}

#[test]
fn http_error_statuses_are_judged_by_the_oracle() {
    // 503 (resource-exhaustion) on the clean control's echo call: the JSON-RPC
    // body is well formed, the status is not.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run_http(&out, &[], &["--fault", "resource-exhaustion@tool-echo"]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(doc["statement"]["result"], "FAIL");
    let oracle: Value =
        serde_json::from_slice(&std::fs::read(out.join("raw/trial-1/clean.oracle.json")).unwrap())
            .unwrap();
    assert_eq!(oracle["stopReason"], "HTTP_STATUS", "{oracle}");
    let echo = oracle["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["method"] == "tools/call")
        .unwrap();
    let detail = echo["judgement"]["detail"].as_str().unwrap();
    assert!(detail.contains("HTTP 503"), "{detail}");
    // The negative controls (which fault `add`) are unaffected.
    assert_eq!(negative_stops(&doc), REFERENCE_STOPS);
    let events = jsonl(&out.join("raw/trial-1/lifecycle.jsonl"));
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "http-response" && e["status"] == 503)
    );

    // 401 (authorization-rejection) on tools/list.
    let out = tmp.path().join("bundle-401");
    let o = run_http(
        &out,
        &[],
        &["--fault", "authorization-rejection@method-tools/list"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let oracle: Value =
        serde_json::from_slice(&std::fs::read(out.join("raw/trial-1/clean.oracle.json")).unwrap())
            .unwrap();
    assert_eq!(oracle["stopReason"], "HTTP_STATUS", "{oracle}");
    let (_, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
}

/// The checks every 2026-07-28 bundle passes: valid GENUINE_RUNTIME PASS,
/// revision recorded, server/discover with per-request `_meta`, no initialize.
fn assert_modern_pass(out: &Path, o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", output_text(o));
    let (doc, report) = load(out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(report.evidence_class.as_deref(), Some("GENUINE_RUNTIME"));
    assert_eq!(doc["statement"]["result"], "PASS");
    assert_eq!(doc["statement"]["protocolRevision"], "2026-07-28");
    assert_eq!(doc["evidence"]["protocolRevision"], "2026-07-28");
    assert_eq!(
        doc["evidence"]["scenario"]["descriptor"]["protocolRevision"],
        "2026-07-28"
    );
    // The subject identity comes from the discover result.
    assert_eq!(doc["statement"]["subjectName"], SERVER_NAME);
    assert_eq!(negative_stops(&doc), REFERENCE_STOPS);
    let messages = jsonl(&out.join("raw/trial-1/messages.jsonl"));
    let sent: Vec<&Value> = messages
        .iter()
        .filter(|m| m["direction"] == "client-to-server")
        .map(|m| &m["message"])
        .collect();
    assert!(!sent.is_empty());
    assert!(
        sent.iter()
            .all(|m| m["method"] != "initialize" && m["method"] != "notifications/initialized"),
        "no handshake on 2026-07-28"
    );
    let discovers = sent
        .iter()
        .filter(|m| m["method"] == "server/discover")
        .count();
    assert_eq!(
        discovers, 4,
        "one per process: clean plus three negative controls"
    );
    for m in &sent {
        let meta = &m["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
            "{m}"
        );
        assert!(
            meta["io.modelcontextprotocol/clientCapabilities"].is_object(),
            "{m}"
        );
    }
    // Every answer to the clean control says resultType complete.
    let clean_results: Vec<&Value> = messages
        .iter()
        .filter(|m| m["session"] == "t1-clean" && m["direction"] == "server-to-client")
        .filter_map(|m| m["message"].get("result"))
        .collect();
    assert_eq!(clean_results.len(), 3);
    assert!(clean_results.iter().all(|r| r["resultType"] == "complete"));
    let oracle: Value =
        serde_json::from_slice(&std::fs::read(out.join("raw/trial-1/clean.oracle.json")).unwrap())
            .unwrap();
    let methods: Vec<&str> = oracle["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        ["server/discover", "tools/list", "tools/call", "shutdown"]
    );
    doc
}

#[test]
fn revision_2026_07_28_over_stdio() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let exe = exe();
    let o = mcpres(&[
        "run",
        "--revision",
        "2026-07-28",
        "-o",
        out.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
        "serve",
        "--transport",
        "stdio",
    ]);
    assert_modern_pass(&out, &o);
    // The raw stdin capture: the first line is the discover probe, and no
    // initialize was ever written.
    let stdin = text(&std::fs::read(out.join("raw/trial-1/clean.stdin.bin")).unwrap());
    let first: Value = serde_json::from_str(stdin.lines().next().unwrap()).unwrap();
    assert_eq!(first["method"], "server/discover");
    assert!(!stdin.contains("\"initialize\""));
}

#[test]
fn revision_2026_07_28_over_http() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run_http(&out, &["--revision", "2026-07-28"], &[]);
    assert_modern_pass(&out, &o);
    let requests = text(&std::fs::read(out.join("raw/trial-1/clean.http-requests.bin")).unwrap());
    assert_eq!(requests.matches("POST /mcp HTTP/1.1\r\n").count(), 3);
    assert_eq!(
        requests
            .matches("MCP-Protocol-Version: 2026-07-28\r\n")
            .count(),
        3
    );
    for header in [
        "Mcp-Method: server/discover\r\n",
        "Mcp-Method: tools/list\r\n",
        "Mcp-Method: tools/call\r\n",
        "Mcp-Name: echo\r\n",
    ] {
        assert!(requests.contains(header), "{header:?} missing:\n{requests}");
    }
    // Stateless: no session id in either direction's use, and no DELETE.
    assert!(!requests.to_ascii_lowercase().contains("mcp-session-id"));
    assert!(!requests.contains("DELETE "));
    let faulted =
        text(&std::fs::read(out.join("raw/trial-1/schema-violation.http-requests.bin")).unwrap());
    assert!(faulted.contains("Mcp-Name: add\r\n"), "{faulted}");
}
