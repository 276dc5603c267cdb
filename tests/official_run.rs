#![cfg(feature = "server")]
//! `mcpres official run` through the binary, with the official suite
//! (`@modelcontextprotocol/conformance` 0.1.16) installed where
//! `MCPRES_OFFICIAL_SUITE_DIR` says (CI installs it; without it the suite
//! tests print why and skip). Every attachment written is validated with
//! `mcpres validate --original-result`.

mod support;

mod server_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use server_support::HttpServer;

fn suite_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("MCPRES_OFFICIAL_SUITE_DIR").map(PathBuf::from);
    if dir.is_none() {
        eprintln!("SKIPPED official run: MCPRES_OFFICIAL_SUITE_DIR is not set");
    }
    dir
}

fn run(dir: &Path, work: &Path, extra: &[&str], server: &[&str]) -> Output {
    support::command()
        .args(["official", "run", "--suite"])
        .arg(dir)
        .args(extra)
        .arg("--")
        .args(server)
        .current_dir(work)
        .output()
        .expect("run mcpres official run")
}

fn reference(extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        support::exe().display().to_string(),
        "serve".into(),
        "--transport".into(),
        "http".into(),
        "--port".into(),
        "{port}".into(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("JSON")
}

/// The attachment's checks whose official outcome is FAILURE.
fn failures(doc: &Value) -> Vec<&Value> {
    doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["outcome"] == "FAILURE")
        .collect()
}

/// `mcpres validate --original-result ORIGINAL ATTACHMENT`: valid, and its status.
fn validated(work: &Path, attachment: &str, original: &str) -> String {
    let out = support::command()
        .args([
            "validate",
            "--format",
            "json",
            "--original-result",
            original,
            attachment,
        ])
        .current_dir(work)
        .output()
        .expect("run mcpres validate");
    let report: Value = serde_json::from_slice(&out.stdout).expect("report");
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["officialCertificationClaim"], false);
    report["importStatus"]
        .as_str()
        .expect("a status")
        .to_string()
}

/// `official run -o NAME.json --original-out NAME-original.json EXTRA --
/// SERVER` in `work`: it must exit with `code`, and the attachment must
/// validate against its original. The attachment's status, the attachment,
/// and what the run printed on stderr.
fn attached(
    dir: &Path,
    work: &Path,
    name: &str,
    extra: &[&str],
    server: &[&str],
    code: i32,
) -> (String, Value, String) {
    let (attachment, original) = (format!("{name}.json"), format!("{name}-original.json"));
    let mut args = vec!["-o", &attachment, "--original-out", &original];
    args.extend_from_slice(extra);
    let out = run(dir, work, &args, server);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    let status = validated(work, &attachment, &original);
    (status, read(&work.join(&attachment)), stderr)
}

#[test]
fn the_reference_server_gets_a_complete_attachment_from_one_command() {
    let Some(dir) = suite_dir() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path();
    let server = reference(&[]);
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let (status, doc, stderr) = attached(
        &dir,
        work,
        "official",
        &["--sanitized-out", "sanitized.json"],
        &server,
        0,
    );
    // Progress while the suite runs: one line per scenario.
    assert!(stderr.contains("scenario 1/"), "{stderr}");
    assert!(stderr.contains("importStatus COMPLETE"), "{stderr}");
    assert_eq!(status, "COMPLETE");
    // Observed, not typed in: the tarball's digest, the release's commit,
    // the listing's digest.
    let tarball = std::fs::read(dir.join("modelcontextprotocol-conformance-0.1.16.tgz"));
    if let Ok(bytes) = tarball {
        assert_eq!(
            doc["source"]["packageSha256"],
            mcpres::json::sha256_hex(&bytes)
        );
    }
    assert_eq!(doc["source"]["packageVersion"], "0.1.16");
    assert_eq!(
        doc["source"]["repositoryCommit"],
        "21a9a2febd7100d7c17ac1021ee7f2ed9f66a1e0"
    );
    let record = read(&work.join("official.run.json"));
    assert_eq!(
        record["requirementSet"]["sha256"],
        doc["requirementSet"]["sha256"]
    );
    assert!(
        record["requirementSet"]["scenarios"]
            .as_array()
            .is_some_and(|s| s.iter().any(|x| x == "ping"))
    );
    // The suite's command line, as it ran.
    let line: Vec<&str> = record["commandLine"]
        .as_array()
        .expect("commandLine")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(&line[..2], ["conformance", "server"]);
    assert!(line.contains(&"--spec-version"));
    // Every check the suite emitted, all SUCCESS; cleanup observed by mcpres.
    let checks = doc["checks"].as_array().expect("checks");
    assert!(checks.len() >= 30, "{}", checks.len());
    assert!(checks.iter().all(|c| c["outcome"] == "SUCCESS"));
    let cleanup = doc["observationCoverage"]
        .as_array()
        .expect("coverage")
        .iter()
        .find(|c| c["surface"] == "server-process-cleanup")
        .expect("the cleanup surface")["status"]
        .clone();
    assert!(
        cleanup == "INSTRUMENTED" || cleanup == "OBSERVED_INDIRECTLY",
        "{cleanup}"
    );
    assert_eq!(
        record["subject"]["cleanup"]["processesLeft"],
        serde_json::json!([])
    );
    assert_eq!(doc["harness"]["exitCode"], 0);
    // The derivative holds no loopback port of the run.
    let text = std::fs::read_to_string(work.join("sanitized.json")).expect("derivative");
    assert!(
        !regex::Regex::new(r"127\.0\.0\.1:\d")
            .unwrap()
            .is_match(&text)
    );
    // Nothing is overwritten: the same command again is refused before it runs.
    let again = run(&dir, work, &["-o", "official.json"], &server);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("never overwrites"));
}

#[test]
fn a_broken_server_keeps_its_official_failure_and_a_baseline_expects_it() {
    let Some(dir) = suite_dir() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path();
    // The reference server with `ping` broken (a JSON-RPC error instead of {}).
    let server = reference(&["--fault", "protocol-error@method-ping"]);
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    // Written and valid, and the run fails (exit 1): an official failure.
    let (status, doc, _) = attached(&dir, work, "broken", &[], &server, 1);
    assert_eq!(status, "INVALID");
    let failed = failures(&doc);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["scenarioId"], "ping");
    assert_eq!(failed[0]["baselineExpected"], false);
    assert_ne!(doc["harness"]["exitCode"], 0);
    // With the suite's own baseline naming the scenario: the failure is kept,
    // marked expected, and the suite (given the baseline too) exits 0.
    std::fs::write(work.join("baseline.yml"), "server:\n  - ping\n").expect("baseline");
    let (status, doc, _) = attached(
        &dir,
        work,
        "expected",
        &["--expected-failures", "baseline.yml"],
        &server,
        0,
    );
    assert_eq!(status, "COMPLETE");
    let kept = doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["outcome"] == "FAILURE")
        .expect("the failure is kept");
    assert_eq!(kept["scenarioId"], "ping");
    assert_eq!(kept["baselineExpected"], true);
    assert_eq!(doc["harness"]["exitCode"], 0);
}

#[test]
fn a_server_mcpres_did_not_start_is_incomplete_for_want_of_cleanup() {
    let Some(dir) = suite_dir() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path();
    let srv = HttpServer::start(&[]);
    let url = format!("http://127.0.0.1:{}/mcp", srv.port);
    let out = support::command()
        .args(["official", "run", "--suite"])
        .arg(&dir)
        .args(["--http", &url, "-o", "a.json", "--original-out", "o.json"])
        .current_dir(work)
        .output()
        .expect("run");
    let (status, _) = srv.stop();
    assert_eq!(status.code(), Some(0));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every check passed, but nothing observed the server's cleanup.
    assert_eq!(validated(work, "a.json", "o.json"), "INCOMPLETE");
}

#[test]
fn a_signal_while_the_suite_runs_leaves_no_process_and_no_attachment() {
    let Some(dir) = suite_dir() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path();
    let marker = format!("mcpres-official-signal-{}", std::process::id());
    // A server that accepts connections and never answers: the suite waits.
    let silent = "import socket,sys\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('127.0.0.1',int(sys.argv[1])))\ns.listen(64)\nheld=[]\nwhile True:\n    c,_=s.accept()\n    held.append(c)\n";
    let results = work.join(&marker);
    let mut child = support::command()
        .args(["official", "run", "--suite"])
        .arg(&dir)
        .args(["-o", "never.json", "--results-out"])
        .arg(&results)
        .args(["--", "python3", "-c", silent, "{port}", &marker])
        .current_dir(work)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Wait for the first scenario to start, then stop the run.
    let mut stderr = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        let mut seen = String::new();
        for line in std::io::BufReader::new(&mut stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line.contains("scenario 1/") {
                let _ = tx.send(());
            }
            seen.push_str(&line);
            seen.push('\n');
        }
        seen
    });
    rx.recv_timeout(Duration::from_secs(120))
        .expect("the first scenario started");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(Instant::now() < deadline, "mcpres did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!("mcpres ended with {status:?}");
    assert!(!status.success(), "{status:?}");
    assert!(
        !work.join("never.json").exists(),
        "no attachment after a signal"
    );
    assert!(!work.join("never.run.json").exists());
    assert!(!results.exists(), "the results folder is removed");
    // Neither the suite (its command line names the results folder) nor the
    // server (its arguments name the marker) is left.
    let left: Vec<String> = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&marker))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn unusable_requests_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path();
    // No suite installed where it is looked for: how to install it is said.
    let out = run(work, work, &["-o", "a.json"], &["true"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("npm install @modelcontextprotocol/conformance@0.1.16"),
        "{err}"
    );
    assert!(!work.join("a.json").exists());
    // `--help` says how to install the pinned suite.
    let help = support::mcpres(&["official", "run", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("npm install @modelcontextprotocol/conformance@0.1.16"),
        "{help}"
    );
    let Some(dir) = suite_dir() else { return };
    // Another version than the one installed.
    let out = run(
        &dir,
        work,
        &["-o", "a.json", "--suite-version", "0.1.15"],
        &["true"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not 0.1.15"));
    // A free port with nowhere to put it.
    let out = run(
        &dir,
        work,
        &["-o", "a.json", "--http", "http://127.0.0.1:0/mcp"],
        &["true"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("{port}"));
    // A revision the suite does not know.
    let server = reference(&[]);
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let out = run(
        &dir,
        work,
        &["-o", "a.json", "--revision", "2026-07-28"],
        &server,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("2026-07-28"));
    assert!(!work.join("a.json").exists());
}

#[test]
fn the_committed_attachments_validate_with_the_status_their_readme_gives() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("bundles/official");
    for (name, status, failures) in [
        ("reference-2025-11-25", "COMPLETE", 0),
        ("reference-stdio-2025-11-25", "INCOMPLETE", 0),
        ("everything-2025-11-25", "INVALID", 19),
        ("python-sdk-stdio-2025-11-25", "INVALID", 21),
    ] {
        let attachment = root.join(format!("{name}.json"));
        let out = support::command()
            .args(["validate", "--format", "json"])
            .arg(&attachment)
            .output()
            .expect("run mcpres validate");
        let report: Value = serde_json::from_slice(&out.stdout).expect("report");
        assert_eq!(out.status.code(), Some(0), "{name}: {report}");
        assert_eq!(report["importStatus"], status, "{name}");
        let doc = read(&attachment);
        let failed = doc["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .filter(|c| c["outcome"] == "FAILURE")
            .count();
        assert_eq!(failed, failures, "{name}");
        // The run record names the suite's command line and the digest the
        // attachment carries.
        let record = read(&root.join(format!("{name}.run.json")));
        assert_eq!(
            record["suite"]["packageSha256"],
            doc["source"]["packageSha256"]
        );
        assert_eq!(
            record["requirementSet"]["sha256"],
            doc["requirementSet"]["sha256"]
        );
        assert_eq!(record["commandLine"][1], "server");
    }
}

#[test]
fn a_stdio_server_is_reached_through_the_bridge_and_its_http_layer_is_not_scored() {
    let Some(dir) = suite_dir() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path();
    let exe = support::exe().display().to_string();
    // The reference server over stdio: one process per session of the suite.
    let (status, doc, stderr) = attached(&dir, work, "stdio", &[], &[&exe, "serve"], 0);
    assert!(stderr.contains("bridge"), "{stderr}");
    // Every check passed, but the bridge's own HTTP layer is not the server's:
    // those checks are not scored, so the import is not COMPLETE.
    assert_eq!(status, "INCOMPLETE");
    assert!(
        doc["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .all(|c| c["outcome"] == "SUCCESS")
    );
    let not_scored: Vec<&str> = doc["inventories"]["notScored"]
        .as_array()
        .expect("notScored")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        not_scored
            .iter()
            .any(|r| r.starts_with("dns-rebinding-protection:")),
        "{not_scored:?}"
    );
    assert!(not_scored.iter().all(|r| {
        [
            "dns-rebinding-protection:",
            "server-sse-multiple-streams:",
            "server-sse-polling:",
        ]
        .iter()
        .any(|p| r.starts_with(p))
    }));
    let record = read(&work.join("stdio.run.json"));
    assert_eq!(record["subject"]["transport"], "stdio");
    let sessions = record["subject"]["bridge"]["sessionsStarted"]
        .as_u64()
        .expect("sessions");
    let scenarios = record["harness"]["scenariosStarted"]
        .as_array()
        .expect("started")
        .len() as u64;
    // Each scenario opens a session of its own (some open more than one).
    assert!(sessions >= scenarios, "{sessions} < {scenarios}");
    assert_eq!(
        record["subject"]["transcripts"]
            .as_array()
            .expect("transcripts")
            .len() as u64,
        sessions,
        "every process the bridge started was ended and observed"
    );
    assert_eq!(
        record["subject"]["cleanup"]["processesLeft"],
        serde_json::json!([])
    );
    // At most eight processes alive at once: the others were ended for room,
    // and no request came back for them.
    let bridge = &record["subject"]["bridge"];
    assert!(bridge["sessionsEndedForRoom"].as_u64().expect("ended") + 8 >= sessions);
    assert_eq!(bridge["requestsForEndedSessions"], 0);
    // The same server with `ping` broken over stdio: the failure is the server's and kept.
    let broken = [
        exe.as_str(),
        "serve",
        "--fault",
        "protocol-error@method-ping",
    ];
    let (status, doc, _) = attached(&dir, work, "broken", &[], &broken, 1);
    assert_eq!(status, "INVALID");
    let failed = failures(&doc);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["scenarioId"], "ping");
    // A "server" that exits at once: every session gets the bridge's own 502,
    // said in the harness warnings; the scenarios fail as the suite reports them.
    let (status, doc, _) = attached(&dir, work, "gone", &[], &["true"], 1);
    assert_eq!(status, "INVALID");
    let warnings = doc["harness"]["warnings"].to_string();
    assert!(warnings.contains("bridge's own 502"), "{warnings}");
}

#[test]
fn a_declared_check_the_suite_did_not_emit_is_pending() {
    let Some(dir) = suite_dir() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let work = tmp.path();
    std::fs::write(
        work.join("declared.json"),
        r#"["ping:ping", "ping:ping-twice"]"#,
    )
    .expect("declared");
    let server = reference(&[]);
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let (status, doc, _) = attached(
        &dir,
        work,
        "ping",
        &["--scenario", "ping", "--declared", "declared.json"],
        &server,
        0,
    );
    // The one emitted check passed; the declared one the suite never emitted
    // is pending, which keeps the import from COMPLETE.
    assert_eq!(status, "INCOMPLETE");
    assert_eq!(doc["suite"], "ping");
    assert_eq!(
        doc["inventories"]["pending"],
        serde_json::json!(["ping:ping-twice"])
    );
}
