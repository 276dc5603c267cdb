#![cfg(feature = "server")]
//! The run-level parts of `mcpres oauth run` (spec/oauth-boundary.md, "Run
//! isolation"): the run in a network namespace of its own (an egress attempt
//! of the subject fails there, and the evaluation says the run was
//! isolated), the subject's sockets sampled, a subject mcpres did not start
//! (`--resource`), and cancellation by SIGINT/SIGTERM (exit 130/143, nothing
//! kept, no process and no listener left).
//!
//! A test that needs the namespace skips, saying why, when `unshare -rn` is
//! refused on this machine; the subject that tries to reach 192.0.2.1 is only
//! ever run with `--isolate-network`, which exits 2 instead of running
//! un-isolated (and the subject itself tries only when its namespace has the
//! loopback interface alone).

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{
    assert_port_released, boot_ticks, command, free_port, marked_servers, output_text, read_json,
    walk,
};

/// Why the network namespace cannot be used here, if it cannot.
fn namespace_unavailable() -> Option<String> {
    mcpres::produce::oauth::isolate::available().err()
}

fn exe() -> String {
    support::exe().to_str().expect("utf-8 path").to_string()
}

/// The reference subject, marked with `seed`, as the runner starts it.
fn reference(seed: &str) -> Vec<String> {
    [
        exe().as_str(),
        "serve",
        "--seed",
        seed,
        "--transport",
        "http",
        "--port",
        "{port}",
        "--auth",
        "loopback",
        "--auth-issuer",
        "{issuer}",
        "--auth-scope",
        "{scope}",
    ]
    .map(String::from)
    .to_vec()
}

/// A seed no other test uses, for [`marked_servers`].
fn seed(n: u32) -> String {
    format!("{}", 700_000_000 + n * 1000 + std::process::id() % 1000)
}

/// Start `mcpres ARGS` with stderr read line by line on a thread.
fn spawn(args: &[String]) -> (Child, Receiver<String>) {
    let mut child = command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcpres");
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Lines of `rx` until one holds `needle` (returned), or panic past `limit`.
fn wait_line(
    rx: &Receiver<String>,
    needle: &str,
    limit: Duration,
    seen: &mut Vec<String>,
) -> String {
    let until = Instant::now() + limit;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                seen.push(line.clone());
                if line.contains(needle) {
                    return line;
                }
            }
            Err(_) => panic!(
                "no stderr line with {needle:?} within {limit:?}; seen:\n{}",
                seen.join("\n")
            ),
        }
    }
}

/// Wait for `child` under a watchdog; its exit code (`None`: killed by a signal).
fn wait_exit(child: &mut Child, limit: Duration, what: &str) -> Option<i32> {
    let until = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status.code();
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every stderr text the subject wrote in the run's server transcripts.
fn subject_stderr(out: &Path) -> String {
    let mut text = String::new();
    for file in walk(&out.join("artifacts")) {
        let doc = read_json(&file);
        collect_stderr(&doc, &mut text);
    }
    text
}

fn collect_stderr(v: &Value, text: &mut String) {
    match v {
        Value::Object(map) => {
            if map.get("stream").and_then(Value::as_str) == Some("stderr")
                && let Some(t) = map.get("text").and_then(Value::as_str)
            {
                text.push_str(t);
            }
            map.values().for_each(|x| collect_stderr(x, text));
        }
        Value::Array(items) => items.iter().for_each(|x| collect_stderr(x, text)),
        _ => {}
    }
}

fn verdict_of(out: &Path, id: &str) -> Value {
    read_json(&out.join("run.json"))["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

fn findings(out: &Path) -> Vec<String> {
    let doc = read_json(&out.join("evaluation.json"));
    mcpres::validate::oauth::validate_oauth_evaluation(&doc)
        .findings
        .iter()
        .map(|f| f.code.as_str().to_string())
        .collect()
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn an_egress_attempt_of_the_subject_never_leaves_the_namespace_and_is_recorded() {
    if let Some(why) = namespace_unavailable() {
        println!("SKIP: a network namespace cannot be made here ({why})");
        return;
    }
    let Some(python) = mcpres::produce::oauth::isolate::find_tool("python3") else {
        println!("SKIP: python3 is not installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/oauth_egress.py");
    // --isolate-network: exit 2 rather than ever running this subject
    // outside the namespace.
    let o = command()
        .args(["oauth", "run", "--isolate-network", "-o"])
        .arg(&out)
        .arg("--")
        .arg(&python)
        .arg(&script)
        .arg("{port}")
        .output()
        .expect("run mcpres");
    // The subject refuses every token: its checks fail; the evaluation is
    // written all the same (the fixture's checks were observed).
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    assert!(
        support::text(&o.stderr).contains("network namespace: yes"),
        "{}",
        output_text(&o)
    );
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["networkNamespace"], true);
    assert_eq!(run["networkInterfaces"], serde_json::json!(["lo"]));
    // The attempt never left the namespace (routed to loopback, where
    // nothing listens on port 80) and is recorded from its opening packet.
    let attempt = serde_json::json!([{"protocol": "tcp", "address": "192.0.2.1", "port": 80}]);
    assert_eq!(
        run["externalRequests"]["subjectOutsideAttempts"], attempt,
        "{}",
        run["externalRequests"]
    );
    assert_eq!(run["externalRequests"]["total"], 1);
    assert!(
        run["externalRequests"]["subjectSocketSamples"]
            .as_u64()
            .unwrap()
            > 0
    );
    let stderr = subject_stderr(&out);
    assert!(
        stderr.contains("egress 192.0.2.1:80 failed: ECONNREFUSED"),
        "the subject's stderr: {stderr}"
    );
    assert!(!stderr.contains("connected"), "{stderr}");
    let cleanup = read_json(&out.join("artifacts/cleanup.json"));
    assert_eq!(cleanup["outsideAttempts"], attempt);
    assert_eq!(cleanup["outsideWatch"]["watched"], true, "{cleanup}");
    let doc = read_json(&out.join("evaluation.json"));
    assert_eq!(doc["fixture"]["loopbackOnly"], false);
    assert_eq!(doc["fixture"]["externalNetworkRequests"], 1);
    // Re-judged from the stored record, the count stands (the run fails
    // on the subject's refusals, not on it).
    let check = command().arg("validate").arg(&out).output().unwrap();
    let said = output_text(&check);
    assert!(
        !said.contains("externalNetworkRequests"),
        "the run's own count is what its record gives: {said}"
    );
}

/// The honest twin of the egress subject: the reference subject makes no
/// attempt beyond loopback, and the watch records none.
#[test]
fn a_subject_that_stays_on_loopback_has_no_outside_attempt_recorded() {
    if let Some(why) = namespace_unavailable() {
        println!("SKIP: a network namespace cannot be made here ({why})");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let mut args = s(&[
        "oauth",
        "run",
        "--isolate-network",
        "-o",
        out.to_str().unwrap(),
        "--",
    ]);
    args.extend(reference(&seed(7)));
    let o = command().args(&args).output().expect("run mcpres");
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let run = read_json(&out.join("run.json"));
    assert_eq!(
        run["externalRequests"]["subjectOutsideAttempts"],
        serde_json::json!([])
    );
    assert_eq!(run["externalRequests"]["total"], 0);
    let cleanup = read_json(&out.join("artifacts/cleanup.json"));
    assert_eq!(cleanup["outsideWatch"]["watched"], true, "{cleanup}");
    assert_eq!(cleanup["outsideWatch"]["filtered"], true, "{cleanup}");
    let doc = read_json(&out.join("evaluation.json"));
    assert_eq!(doc["fixture"]["loopbackOnly"], true);
}

#[test]
fn by_default_the_run_is_isolated_when_it_can_be_and_the_subject_is_sampled() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let mut args = s(&["oauth", "run", "-o", out.to_str().unwrap(), "--"]);
    args.extend(reference(&seed(1)));
    let o = command().args(&args).output().expect("run mcpres");
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let run = read_json(&out.join("run.json"));
    let isolated = namespace_unavailable().is_none();
    assert_eq!(run["networkNamespace"], isolated, "{}", output_text(&o));
    if !isolated {
        assert!(support::text(&o.stderr).contains("the network is not isolated"));
    }
    let ext = &run["externalRequests"];
    assert!(ext["subjectSocketSamples"].as_u64().unwrap() > 0, "{ext}");
    assert_eq!(ext["subjectPeersOffLoopback"], serde_json::json!([]));
    assert_eq!(ext["total"], 0);
    assert!(
        ext["subjectSocketSampling"]
            .as_str()
            .unwrap()
            .contains("missed"),
        "{ext}"
    );
    assert_eq!(findings(&out), Vec::<String>::new());
}

/// Start the runner on `--resource`, wait for the issuer it prints, then
/// start the reference subject (with `defect`) on that issuer; the runner's
/// exit code, its stderr, and the subject stopped afterwards.
fn resource_run(out: &Path, marker: &str, defect: Option<&str>) -> (Option<i32>, Vec<String>) {
    let issuer_port = free_port();
    let port = free_port();
    let (mut runner, rx) = spawn(&s(&[
        "oauth",
        "run",
        "--resource",
        &format!("http://127.0.0.1:{port}/mcp"),
        "--subject-artifact",
        &exe(),
        "--issuer-port",
        &issuer_port.to_string(),
        "-o",
        out.to_str().unwrap(),
    ]));
    let mut seen = Vec::new();
    let line = wait_line(
        &rx,
        "start the subject with the issuer",
        Duration::from_secs(30),
        &mut seen,
    );
    let issuer = format!("http://127.0.0.1:{issuer_port}");
    assert!(line.contains(&issuer), "{line}");
    let mut args = s(&[
        "serve",
        "--seed",
        marker,
        "--transport",
        "http",
        "--port",
        &port.to_string(),
        "--auth",
        "loopback",
        "--auth-issuer",
        &issuer,
    ]);
    if let Some(d) = defect {
        args.extend(s(&["--auth-defect", d]));
    }
    let mut subject = command()
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the subject");
    let code = wait_exit(
        &mut runner,
        Duration::from_secs(120),
        "mcpres oauth run --resource",
    );
    // The reader thread may still hold lines written before the exit: read
    // until it ends (the pipe closed), not only what has arrived.
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(30)) {
        seen.push(line);
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&subject),
        rustix::process::Signal::TERM,
    )
    .expect("SIGTERM the subject");
    wait_exit(&mut subject, Duration::from_secs(10), "the subject");
    (code, seen)
}

#[test]
fn a_subject_mcpres_did_not_start_is_evaluated_without_its_process() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let (code, stderr) = resource_run(&out, &seed(2), None);
    let stderr = stderr.join("\n");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("the network is not isolated"), "{stderr}");
    let storage = verdict_of(&out, "token-storage-omission");
    assert_eq!(storage["verdict"], "NOT_OBSERVED", "{storage}");
    assert!(
        storage["detail"]
            .as_str()
            .unwrap()
            .contains("not started by mcpres"),
        "{storage}"
    );
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["networkNamespace"], false);
    assert_eq!(run["subject"]["startedByMcpres"], false);
    assert_eq!(run["externalRequests"]["subjectSocketSamples"], 0);
    assert!(
        run["externalRequests"]["subjectSocketSampling"]
            .as_str()
            .unwrap()
            .starts_with("not observed"),
        "{run}"
    );
    // Nor is scope-minimization: the runner did not give this subject its
    // scope, so it knows no scope requirement to probe.
    let scope = verdict_of(&out, "scope-minimization");
    assert_eq!(scope["verdict"], "NOT_OBSERVED", "{scope}");
    // Every other check is observed against the running subject; the two
    // missing cases make the evaluation incomplete by coverage.
    for c in run["checks"].as_array().unwrap() {
        if c["id"] != "token-storage-omission" && c["id"] != "scope-minimization" {
            assert_eq!(c["verdict"], "PASS", "{c}");
        }
    }
    assert_eq!(
        findings(&out),
        vec!["MCP_RES_OAUTH_COVERAGE_MISMATCH".to_string()]
    );
    let doc = read_json(&out.join("evaluation.json"));
    assert_eq!(
        doc["flow"]["authorizationServerIssuer"],
        stderr
            .split("fixture issuer ")
            .nth(1)
            .and_then(|r| r.split(';').next())
            .unwrap()
    );
}

#[test]
fn a_subject_naming_another_authorization_server_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    // `off-origin-metadata`: the subject's metadata names 192.0.2.1 (never
    // contacted: the runner only reads the list from the subject).
    let (code, stderr) = resource_run(&out, &seed(3), Some("off-origin-metadata"));
    let stderr = stderr.join("\n");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("refusing to evaluate"), "{stderr}");
    assert!(stderr.contains("http://192.0.2.1"), "{stderr}");
    assert!(!out.exists(), "nothing is written for a refused subject");
}

/// Start a run on the reference subject (`extra` flags), wait until a
/// subject of it listens, send `signal`; the exit code, and every listener
/// (fixture, redirect listener, subject) that must be released.
fn interrupted(
    out: &Path,
    marker: &str,
    extra: &[&str],
    signal: rustix::process::Signal,
) -> (Option<i32>, Vec<(u16, &'static str)>, u64) {
    let mut args = s(&["oauth", "run", "-o", out.to_str().unwrap()]);
    args.extend(s(extra));
    args.push("--".into());
    args.extend(reference(marker));
    let (mut runner, rx) = spawn(&args);
    let mut seen = Vec::new();
    let started = wait_line(&rx, "fixture issuer ", Duration::from_secs(30), &mut seen);
    let port_after = |key: &str| -> u16 {
        let rest = started.split(key).nth(1).expect("printed");
        let addr = rest.split(';').next().unwrap().trim();
        addr.rsplit(':')
            .next()
            .unwrap()
            .trim_end_matches('/')
            .parse()
            .unwrap()
    };
    let mut ports = vec![
        (port_after("fixture issuer "), "the fixture"),
        (port_after("redirect listener "), "the redirect listener"),
    ];
    // Wait for a check's subject to run (and, outside a namespace, to
    // listen on this test's loopback), then stop the run under it.
    let isolated = extra.contains(&"--isolate-network");
    let until = Instant::now() + Duration::from_secs(60);
    let subject_ports = loop {
        let pids = marked_servers(marker);
        let listening: Vec<u16> = pids
            .iter()
            .flat_map(|pid| mcpres::produce::drive::proc::sockets_of(&[*pid]))
            .filter(|(_, _, state)| state == "0A")
            .map(|(port, _, _)| port)
            .collect();
        if !listening.is_empty() || (isolated && !pids.is_empty()) {
            break listening;
        }
        assert!(
            Instant::now() < until,
            "no subject listened; stderr:\n{}",
            seen.join("\n")
        );
        assert!(
            runner.try_wait().unwrap().is_none(),
            "the run ended before a subject was seen"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    ports.extend(subject_ports.into_iter().map(|p| (p, "a subject")));
    let since = boot_ticks();
    rustix::process::kill_process(rustix::process::Pid::from_child(&runner), signal)
        .expect("signal the run");
    let code = wait_exit(&mut runner, Duration::from_secs(30), "the interrupted run");
    (code, ports, since)
}

#[test]
fn sigint_stops_the_run_removes_its_output_and_leaves_no_process_or_listener() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let marker = seed(4);
    // Not isolated, so that the listeners are on this test's loopback and
    // their release can be observed from here.
    let (code, ports, since) = interrupted(
        &out,
        &marker,
        &["--no-isolate-network"],
        rustix::process::Signal::INT,
    );
    assert_eq!(code, Some(130));
    assert!(!out.exists(), "the output directory is removed");
    assert_eq!(
        marked_servers(&marker),
        Vec::<u32>::new(),
        "a subject survived"
    );
    for (port, what) in ports {
        assert_port_released(port, since, what);
    }
}

#[test]
fn sigterm_stops_an_isolated_run_and_leaves_no_process() {
    if let Some(why) = namespace_unavailable() {
        println!("SKIP: a network namespace cannot be made here ({why})");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let marker = seed(5);
    // The listeners live in the run's namespace, which ends with its last
    // process: no subject process left means nothing listens any more.
    let (code, _, _) = interrupted(
        &out,
        &marker,
        &["--isolate-network"],
        rustix::process::Signal::TERM,
    );
    assert_eq!(code, Some(143));
    assert!(!out.exists(), "the output directory is removed");
    assert_eq!(
        marked_servers(&marker),
        Vec::<u32>::new(),
        "a subject survived"
    );
}
