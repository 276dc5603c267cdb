//! `mcpres profile run mcp-res/streamable-http/v1` against real HTTP servers
//! on loopback: the reference server (started by mcpres for every check, and
//! a server the test starts itself), the evaluation directories validate,
//! the synthetic credential never reaches a file, and nothing is left
//! listening.

mod support;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const WATCHDOG: Duration = Duration::from_secs(240);

fn profile_run(out: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = support::command();
    cmd.args(["profile", "run", "streamable-http", "-o"])
        .arg(out)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("start mcpres profile run");
    support::output_within(child, WATCHDOG, "profile run streamable-http")
}

fn verdicts(run: &Value) -> Vec<(String, String, String)> {
    run["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
                c["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn validate(dir: &Path, code: i32) {
    let v = support::mcpres(&[Path::new("validate"), dir]);
    let text = support::output_text(&v);
    assert_eq!(
        v.status.code(),
        Some(code),
        "mcpres validate {}:\n{text}",
        dir.display(),
    );
    // Re-judged from its stored bytes, the record gives what the runner wrote.
    assert!(
        !text.contains("NOT_FROM_RECORD"),
        "mcpres validate {}: a judged disagreement:\n{text}",
        dir.display()
    );
}

/// A reference server the test starts itself, killed on drop.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve_http(port: u16, extra: &[&str], env: &[(&str, &str)]) -> Served {
    let mut cmd = support::command();
    cmd.args(["serve", "--transport", "http", "--port", &port.to_string()])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("start the reference server");
    let until = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < until,
            "the reference server did not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Served(child)
}

#[test]
fn a_server_mcpres_did_not_start_is_evaluated_without_its_process_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let port = support::free_port();
    let _server = serve_http(port, &[], &[]);
    let artifact = support::exe();
    let out = tmp.path().join("external");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let o = profile_run(
        &out,
        &[
            "--http",
            &url,
            "--subject-artifact",
            artifact.to_str().unwrap(),
            "--checks",
            "keepalive,json-versus-sse-response,listener-cleanup,socket-cleanup",
        ],
        &[],
    );
    // Not observed is not claimed: the evaluation itself is valid (exit 0).
    assert_eq!(o.status.code(), Some(0), "{}", support::output_text(&o));
    let run = support::read_json(&out.join("run.json"));
    let evaluation = support::read_json(&out.join("evaluation.json"));
    for (id, verdict, reason) in verdicts(&run) {
        let expected = if id.ends_with("-cleanup") {
            "NOT_OBSERVED"
        } else {
            "PASS"
        };
        assert_eq!(verdict, expected, "{id}: {reason}");
    }
    assert_eq!(run["result"], "INCOMPLETE");
    assert_eq!(evaluation["scope"]["targetKind"], "LOOPBACK_HTTP");
    assert_eq!(evaluation["scope"]["claim"], "BOUNDED_CHECK_SET");
    assert_eq!(
        evaluation["scope"]["claimedCheckIds"],
        serde_json::json!(["json-versus-sse-response", "keepalive"])
    );
    // The subject is what --subject-artifact names.
    let (sha, _) = mcpres::produce::drive::ident::artifact_digest(&artifact).unwrap();
    assert_eq!(evaluation["subject"]["artifactSha256"], Value::from(sha));
    validate(&out, 0);
    // The server the test started is untouched and still serving.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
}

#[test]
fn every_recorded_byte_of_a_request_holds_the_raw_http_exchange() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("raw");
    let exe = support::exe();
    let o = profile_run(
        &out,
        &[
            "--http",
            "http://127.0.0.1:0/mcp",
            "--revision",
            "2026-07-28",
            "--checks",
            "malformed-chunk",
            "--",
            exe.to_str().unwrap(),
            "serve",
            "--transport",
            "http",
            "--port",
            "{port}",
        ],
        &[],
    );
    let run = support::read_json(&out.join("run.json"));
    assert!(o.status.code().is_some(), "{}", support::output_text(&o));
    let negative = support::read_json(&out.join("artifacts/malformed-chunk/negative.json"));
    let sent: Vec<&str> = negative["transcript"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["stream"] == "sent")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert!(
        sent.iter()
            .any(|t| t.contains("Transfer-Encoding: chunked\r\n\r\nzz\r\n")),
        "the malformed chunk is recorded as it was written: {sent:?}"
    );
    assert!(
        sent.iter()
            .all(|t| t.contains("Mcp-Method: ") && t.contains("MCP-Protocol-Version: 2026-07-28")),
        "every 2026-07-28 request carries its headers"
    );
    let server = support::read_json(&out.join("artifacts/malformed-chunk/server.json"));
    assert_eq!(server["streamingTool"], "progress");
    assert_eq!(server["echoTool"], "echo");
    assert_eq!(server["process"]["observation"]["listenerLeftOpen"], false);
    assert!(run["checks"][0]["verdict"].is_string());
}

#[test]
fn a_killed_http_run_leaves_no_server_no_listener_and_no_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("killed");
    let seed = format!("{}", 710_000_000 + std::process::id());
    let exe = support::exe();
    let mut child = support::command()
        .args(["profile", "run", "streamable-http", "--json", "--http"])
        .arg("http://127.0.0.1:0/mcp")
        .arg("-o")
        .arg(&out)
        .arg("--")
        .arg(&exe)
        .args([
            "serve",
            "--transport",
            "http",
            "--port",
            "{port}",
            "--seed",
            &seed,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while support::marked_servers(&seed).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    let running = support::marked_servers(&seed);
    if running.is_empty() {
        // Say why: what the run had started, what it printed, and how it ended.
        let tree: Vec<String> = mcpres::produce::drive::proc::process_tree(child.id())
            .into_iter()
            .map(|pid| {
                let p = mcpres::produce::drive::proc::read(pid);
                let wchan =
                    std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
                format!(
                    "{pid} {:?} waiting in {wchan:?}: {}",
                    p.map(|p| p.to_json()["state"].clone()),
                    mcpres::produce::drive::proc::cmdline(pid).join(" ")
                )
            })
            .collect();
        let _ = child.kill();
        let o = child.wait_with_output().unwrap();
        panic!(
            "no server started within 60 s; the run's processes: {tree:#?}; {}",
            support::output_text(&o)
        );
    }
    // The ports those servers listen on, to see them closed afterwards.
    let ports: Vec<u16> = running
        .iter()
        .flat_map(|pid| listening_ports(*pid))
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let since = support::boot_ticks();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < until, "the run did not stop after SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(143));
    assert!(!out.exists(), "the half-written directory is removed");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        support::marked_servers(&seed),
        Vec::<u32>::new(),
        "servers left running"
    );
    for port in ports {
        support::assert_port_released(port, since, "after SIGTERM");
    }
}

/// The TCP ports process `pid` listens on.
fn listening_ports(pid: u32) -> Vec<u16> {
    mcpres::produce::drive::proc::sockets_of(&[pid])
        .into_iter()
        .filter(|(_, _, state)| state == "0A")
        .map(|(port, _, _)| port)
        .collect()
}

/// The Streamable HTTP test subject (`tests/subjects/http_subject.py`):
/// healthy, or with one check's defect switched on.
fn subject_run(
    out: &Path,
    revision: &str,
    checks: Option<&str>,
    breaks: Option<&str>,
) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/http_subject.py");
    let python = std::env::var("MCPRES_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut args: Vec<String> = vec![
        "--revision".into(),
        revision.into(),
        "--http".into(),
        "http://127.0.0.1:0/mcp".into(),
        "--bearer-env".into(),
        "MCPRES_TEST_TOKEN".into(),
        "--idle-timeout-ms".into(),
        "3000".into(),
    ];
    if let Some(c) = checks {
        args.extend(["--checks".into(), c.into()]);
    }
    args.extend([
        "--".into(),
        python,
        script.to_str().unwrap().into(),
        "--port".into(),
        "{port}".into(),
        "--bearer-env".into(),
        "MCPRES_TEST_TOKEN".into(),
    ]);
    if let Some(b) = breaks {
        args.extend(["--break".into(), b.into()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    profile_run(out, &args, &[])
}

#[test]
fn the_healthy_test_subject_passes_every_check_on_both_revisions() {
    let tmp = tempfile::tempdir().unwrap();
    for revision in ["2025-11-25", "2026-07-28"] {
        let out = tmp.path().join(revision);
        let o = subject_run(&out, revision, None, None);
        assert_eq!(o.status.code(), Some(0), "{}", support::output_text(&o));
        let run = support::read_json(&out.join("run.json"));
        for (id, verdict, reason) in verdicts(&run) {
            assert_eq!(verdict, "PASS", "{revision} {id}: {reason}");
        }
        let evaluation = support::read_json(&out.join("evaluation.json"));
        assert_eq!(evaluation["scope"]["claim"], "FULL_PROFILE");
        assert_eq!(evaluation["result"], "PASS");
        assert_eq!(evaluation["cleanup"]["observed"], true);
        validate(&out, 0);
        // The credential was sent on every request, and is in no file.
        let mut redacted = 0;
        for file in support::walk(&out) {
            let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).to_string();
            redacted += text.matches("Bearer <synthetic-bearer>").count();
            for line in text.split("Authorization: Bearer ").skip(1) {
                assert!(
                    line.starts_with("<synthetic-bearer>"),
                    "{}: a credential in clear: {}",
                    file.display(),
                    &line[..line.len().min(24)]
                );
            }
        }
        assert!(
            redacted > 23,
            "the credential's place is recorded ({redacted})"
        );
    }
}

/// Each check, against the subject with that check's defect, fails with
/// the reason the defect shows (both revisions).
macro_rules! breaks {
    ($($name:ident: $check:literal => $reason:literal,)*) => {$(
        #[test]
        fn $name() {
            let tmp = tempfile::tempdir().unwrap();
            for revision in ["2025-11-25", "2026-07-28"] {
                let out = tmp.path().join(revision);
                let o = subject_run(&out, revision, Some($check), Some($check));
                assert_eq!(o.status.code(), Some(1), "{revision}: {}", support::output_text(&o));
                let run = support::read_json(&out.join("run.json"));
                let (id, verdict, reason) = verdicts(&run).remove(0);
                assert_eq!(id, $check);
                assert_eq!((verdict.as_str(), reason.as_str()), ("FAIL", $reason), "{revision}: {}", run["checks"][0]["detail"]);
                assert_eq!(run["result"], "FAIL");
                // The failure is kept as observed: the evaluation is invalid.
                validate(&out, 1);
            }
        }
    )*};
}

breaks! {
    broken_authenticated_loopback_http: "authenticated-loopback-http" => "MCP_RES_HTTP_UNAUTHENTICATED_ACCEPTED",
    broken_request_response_binding: "request-response-binding" => "MCP_RES_HTTP_UNBINDABLE_ID_ACCEPTED",
    broken_json_versus_sse_response: "json-versus-sse-response" => "MCP_RES_HTTP_MEDIA_TYPE_MISMATCH",
    broken_long_lived_response_stream: "long-lived-response-stream" => "MCP_RES_HTTP_STREAM_ENDED_EARLY",
    broken_buffering_detection: "buffering-detection" => "MCP_RES_HTTP_EVENTS_BUFFERED",
    broken_keepalive: "keepalive" => "MCP_RES_HTTP_CONNECTION_NOT_REUSED",
    broken_header_body_separation: "transport-header-message-metadata-separation" => "MCP_RES_HTTP_HEADER_BODY_MISMATCH_ACCEPTED",
    broken_status_code_consistency: "status-code-consistency" => "MCP_RES_HTTP_NOTIFICATION_STATUS_WRONG",
    broken_content_type: "content-type" => "MCP_RES_HTTP_UNSUPPORTED_CONTENT_TYPE_ACCEPTED",
    broken_interrupted_body: "interrupted-body" => "MCP_RES_HTTP_INTERRUPTED_BODY_EXECUTED",
    broken_early_close: "early-close" => "MCP_RES_HTTP_STOPPED_SERVING",
    broken_retry: "retry" => "MCP_RES_HTTP_STALE_RETRY_ACCEPTED",
    broken_duplicate_delivery: "duplicate-delivery" => "MCP_RES_HTTP_STRAY_RESPONSE_ANSWERED",
    broken_cancellation_by_stream_close: "cancellation-by-stream-close" => "MCP_RES_SUBJECT_EXITED",
    broken_malformed_chunk: "malformed-chunk" => "MCP_RES_HTTP_MALFORMED_CHUNK_EXECUTED",
    broken_oversized_event: "oversized-event" => "MCP_RES_HTTP_OVERSIZED_BODY_ACCEPTED",
    broken_slow_consumer: "slow-consumer" => "MCP_RES_HTTP_STALL_BLOCKED_OTHERS",
    broken_backpressure: "backpressure" => "MCP_RES_HTTP_PIPELINE_REORDERED",
    broken_no_unauthorized_redirect: "no-unauthorized-redirect" => "MCP_RES_HTTP_REDIRECTED",
    broken_listener_cleanup: "listener-cleanup" => "MCP_RES_HTTP_SIGNAL_IGNORED",
    broken_socket_cleanup: "socket-cleanup" => "MCP_RES_HTTP_SOCKETS_HELD",
}

/// MCP makes validating `Origin` a MUST, not `Host`: a subject that serves
/// any Host (`proxy-added-headers`), or checks only the Host's port
/// (`host-port-only`), gets proxy-added-headers NOT_OBSERVED
/// (`MCP_RES_BEHAVIOUR_LEFT_OPEN`), never FAIL and never PASS. Its honest
/// twin is the unbroken subject, which refuses the foreign Host and passes
/// in `an_honest_subject_passes_the_host_checks` below.
#[test]
fn a_subject_that_serves_a_foreign_host_is_left_open() {
    let tmp = tempfile::tempdir().unwrap();
    for brk in ["proxy-added-headers", "host-port-only"] {
        for revision in ["2025-11-25", "2026-07-28"] {
            let out = tmp.path().join(format!("{brk}-{revision}"));
            // content-type beside it, so that the run has an observed check.
            let o = subject_run(
                &out,
                revision,
                Some("proxy-added-headers,content-type"),
                Some(brk),
            );
            assert_eq!(
                o.status.code(),
                Some(0),
                "{brk} {revision}: {}",
                support::output_text(&o)
            );
            let run = support::read_json(&out.join("run.json"));
            let (_, verdict, reason) = verdicts(&run)
                .into_iter()
                .find(|v| v.0 == "proxy-added-headers")
                .expect("run.json has proxy-added-headers");
            assert_eq!(
                (verdict.as_str(), reason.as_str()),
                ("NOT_OBSERVED", "MCP_RES_BEHAVIOUR_LEFT_OPEN"),
                "{brk} {revision}: {run}"
            );
            validate(&out, 0);
        }
    }
}

#[test]
fn an_honest_subject_passes_the_host_checks() {
    let tmp = tempfile::tempdir().unwrap();
    for revision in ["2025-11-25", "2026-07-28"] {
        let out = tmp.path().join(revision);
        let o = subject_run(
            &out,
            revision,
            Some("proxy-added-headers,no-unauthorized-redirect"),
            None,
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{revision}: {}",
            support::output_text(&o)
        );
        let run = support::read_json(&out.join("run.json"));
        for (id, verdict, reason) in verdicts(&run) {
            assert_eq!(verdict, "PASS", "{revision} {id}: {reason}");
        }
        validate(&out, 0);
    }
}

/// A local server SHOULD bind only to loopback (MCP security, both
/// revisions): a subject listening on 0.0.0.0 that stops on SIGTERM gets
/// listener-cleanup NOT_OBSERVED (`MCP_RES_BEHAVIOUR_LEFT_OPEN`), never FAIL;
/// one that also ignores SIGTERM FAILs on the profile's stop requirement
/// (`broken_listener_cleanup` above); the loopback twin passes.
#[test]
fn a_listener_beyond_loopback_is_left_open_and_its_twin_passes() {
    let tmp = tempfile::tempdir().unwrap();
    for revision in ["2025-11-25", "2026-07-28"] {
        for (brk, want) in [
            (
                Some("bind-all"),
                ("NOT_OBSERVED", "MCP_RES_BEHAVIOUR_LEFT_OPEN"),
            ),
            (None, ("PASS", "MCP_RES_HTTP_LISTENER_LOOPBACK_ONLY")),
            // Slower to act on SIGTERM than the first grace, not deaf to
            // it: the kernel's masks say it is caught, so it is waited for.
            (
                Some("slow-stop"),
                ("PASS", "MCP_RES_HTTP_LISTENER_LOOPBACK_ONLY"),
            ),
        ] {
            let out = tmp.path().join(format!("{brk:?}-{revision}"));
            let o = subject_run(&out, revision, Some("listener-cleanup,content-type"), brk);
            // (Should it not pass, the negative's server record says what
            // the kernel's masks showed: caught, pending, blocked.)
            let server = std::fs::read(out.join("artifacts/listener-cleanup/server.json"))
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .unwrap_or_default();
            assert_eq!(
                o.status.code(),
                Some(0),
                "{brk:?} {revision}: {}\nthe negative's server: {}",
                support::output_text(&o),
                server["processes"][1]["events"]
            );
            let run = support::read_json(&out.join("run.json"));
            let (_, verdict, reason) = verdicts(&run)
                .into_iter()
                .find(|v| v.0 == "listener-cleanup")
                .expect("run.json has listener-cleanup");
            assert_eq!(
                (verdict.as_str(), reason.as_str()),
                want,
                "{brk:?} {revision}: {run}\nthe negative's server: {}",
                server["processes"][1]["events"]
            );
            validate(&out, 0);
        }
    }
}

/// The README's Streamable HTTP command as written (default bounds on both
/// sides: the runner's idle bound and the server's header-read timeout).
#[test]
fn the_reference_server_passes_every_check_on_both_revisions() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = support::exe();
    for revision in ["2025-11-25", "2026-07-28"] {
        let out = tmp.path().join(revision);
        let o = profile_run(
            &out,
            &[
                "--revision",
                revision,
                "--http",
                "http://127.0.0.1:0/mcp",
                "--bearer-env",
                "MCPRES_TEST_TOKEN",
                "--",
                exe.to_str().unwrap(),
                "serve",
                "--transport",
                "http",
                "--port",
                "{port}",
                "--bearer-env",
                "MCPRES_TEST_TOKEN",
            ],
            &[],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{revision}: {}\ncleanup: {}",
            support::output_text(&o),
            std::fs::read_to_string(out.join("artifacts/cleanup.json")).unwrap_or_default()
        );
        let run = support::read_json(&out.join("run.json"));
        for (id, verdict, reason) in verdicts(&run) {
            assert_eq!(verdict, "PASS", "{revision} {id}: {reason}");
        }
        let evaluation = support::read_json(&out.join("evaluation.json"));
        assert_eq!(evaluation["scope"]["claim"], "FULL_PROFILE");
        assert_eq!(evaluation["scope"]["targetKind"], "LOOPBACK_HTTP");
        assert_eq!(evaluation["cleanup"]["observed"], true);
        validate(&out, 0);
    }
}

/// The specification asks for "an HTTP error status (e.g., 400)" for input a
/// server cannot accept: a subject that answers `Content-Type: text/plain`
/// with 400 instead of 415 passes content-type, as the honest subject (415)
/// does; the subject that serves it still fails (`broken_content_type`).
#[test]
fn an_unsupported_content_type_refused_with_400_passes() {
    let tmp = tempfile::tempdir().unwrap();
    for revision in ["2025-11-25", "2026-07-28"] {
        let out = tmp.path().join(revision);
        let o = subject_run(
            &out,
            revision,
            Some("content-type"),
            Some("content-type-400"),
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{revision}: {}",
            support::output_text(&o)
        );
        let run = support::read_json(&out.join("run.json"));
        let (id, verdict, reason) = verdicts(&run).remove(0);
        assert_eq!(id, "content-type");
        assert_eq!(
            (verdict.as_str(), reason.as_str()),
            ("PASS", "MCP_RES_HTTP_CONTENT_TYPE_DECLARED"),
            "{revision}: {}",
            run["checks"][0]["detail"]
        );
        validate(&out, 0);
    }
}

/// A 2025-era server evaluated on 2026-07-28 (it answers `server/discover`
/// with -32601): a check that needs an opened conversation was never
/// exercised, so it is NOT_OBSERVED (`MCP_RES_REVISION_NOT_SPOKEN`), never
/// FAIL; with nothing observed the run says so and writes no evaluation.
/// The honest twin, which speaks 2026-07-28, passes the same check.
#[test]
fn a_legacy_server_at_2026_is_not_failed_on_checks_it_never_reached() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("legacy");
    let o = subject_run(
        &out,
        "2026-07-28",
        Some("content-type"),
        Some("legacy-only"),
    );
    let text = support::output_text(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("content-type NOT_OBSERVED (MCP_RES_REVISION_NOT_SPOKEN)"),
        "{text}"
    );
    assert!(!text.contains(" FAIL "), "{text}");
    assert!(!out.exists(), "nothing observed, nothing written: {text}");
    let twin = tmp.path().join("twin");
    let o = subject_run(&twin, "2026-07-28", Some("content-type"), None);
    assert_eq!(o.status.code(), Some(0), "{}", support::output_text(&o));
    let run = support::read_json(&twin.join("run.json"));
    assert_eq!(verdicts(&run).remove(0).1, "PASS");
    validate(&twin, 0);
}

/// No MUST asks a server to time a stalled request out: a subject that holds
/// it open gets timeout NOT_OBSERVED (`MCP_RES_BEHAVIOUR_LEFT_OPEN`), never
/// FAIL; the honest subject, which closes it, passes
/// (`the_healthy_test_subject_passes_every_check_on_both_revisions`).
#[test]
fn a_stalled_request_held_open_is_left_open() {
    let tmp = tempfile::tempdir().unwrap();
    for revision in ["2025-11-25", "2026-07-28"] {
        let out = tmp.path().join(revision);
        let o = subject_run(
            &out,
            revision,
            Some("timeout,content-type"),
            Some("timeout"),
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{revision}: {}",
            support::output_text(&o)
        );
        let run = support::read_json(&out.join("run.json"));
        let (_, verdict, reason) = verdicts(&run)
            .into_iter()
            .find(|v| v.0 == "timeout")
            .expect("run.json has timeout");
        assert_eq!(
            (verdict.as_str(), reason.as_str()),
            ("NOT_OBSERVED", "MCP_RES_BEHAVIOUR_LEFT_OPEN"),
            "{revision}: {run}"
        );
        validate(&out, 0);
    }
}

/// A subject that, after two requests beyond its opening, refuses every
/// parsable request with 400 refuses the negative controls of content-type
/// and of the header/body separation with a status each credits, but for
/// no reason of theirs: the valid twin sent on the same conversation just
/// before each control is refused too, so neither refusal is credited
/// (NOT_OBSERVED, `MCP_RES_VALID_TWIN_REFUSED`), and with nothing observed
/// no evaluation is written. The honest twin passes both checks.
#[test]
fn a_blanket_http_refusal_is_not_credited_to_any_property() {
    const CHECKS: &str = "content-type,transport-header-message-metadata-separation";
    let tmp = tempfile::tempdir().unwrap();
    for revision in ["2025-11-25", "2026-07-28"] {
        let out = tmp.path().join(format!("refusing-{revision}"));
        let o = subject_run(&out, revision, Some(CHECKS), Some("refuse-after-two"));
        let text = support::output_text(&o);
        for check in CHECKS.split(',') {
            assert!(
                text.contains(&format!(
                    "{check} NOT_OBSERVED (MCP_RES_VALID_TWIN_REFUSED)"
                )),
                "{revision}: {text}"
            );
        }
        assert!(!text.contains(" PASS "), "{revision}: {text}");
        assert_eq!(o.status.code(), Some(1), "{revision}: {text}");
        assert!(
            !out.exists(),
            "{revision}: nothing observed, nothing written"
        );
        let twin = tmp.path().join(format!("honest-{revision}"));
        let o = subject_run(&twin, revision, Some(CHECKS), None);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{revision}: {}",
            support::output_text(&o)
        );
        let run = support::read_json(&twin.join("run.json"));
        for (check, verdict, reason) in verdicts(&run) {
            assert_eq!(verdict, "PASS", "{revision}: {check} ({reason})");
        }
        // The twin's answer is stored: the judge re-reads it from the
        // connection bytes (validate re-judges the directory).
        let negative = support::read_json(&twin.join("artifacts/content-type/negative.json"));
        assert!(
            negative
                .pointer("/transcript/observation/twin/id")
                .is_some(),
            "{negative}"
        );
        validate(&twin, 0);
    }
}

/// No MUST binds the receiver of a request whose id is null: a subject that
/// meets it with a parse error (as the TypeScript SDK does) serves nothing
/// and gets request-response-binding NOT_OBSERVED
/// (`MCP_RES_BEHAVIOUR_LEFT_OPEN`), never FAIL; the honest subject, which
/// refuses it with -32600, passes
/// (`the_healthy_test_subject_passes_every_check_on_both_revisions`).
#[test]
fn refusals_the_specification_leaves_open_are_never_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("parse-error");
    let o = subject_run(
        &out,
        "2025-11-25",
        Some("request-response-binding,content-type"),
        Some("null-id-parse-error"),
    );
    let text = support::output_text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let run = support::read_json(&out.join("run.json"));
    let (_, verdict, reason) = verdicts(&run)
        .into_iter()
        .find(|v| v.0 == "request-response-binding")
        .expect("run.json has request-response-binding");
    assert_eq!(
        (verdict.as_str(), reason.as_str()),
        ("NOT_OBSERVED", "MCP_RES_BEHAVIOUR_LEFT_OPEN"),
        "{run}"
    );
    validate(&out, 0);
    // The same for a session id never issued refused with 400 (the 404
    // MUST is stated for a terminated session only).
    let out = tmp.path().join("unknown-session-400");
    let o = subject_run(
        &out,
        "2025-11-25",
        Some("retry,content-type"),
        Some("unknown-session-400"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", support::output_text(&o));
    let run = support::read_json(&out.join("run.json"));
    let (_, verdict, reason) = verdicts(&run)
        .into_iter()
        .find(|v| v.0 == "retry")
        .expect("run.json has retry");
    assert_eq!(
        (verdict.as_str(), reason.as_str()),
        ("NOT_OBSERVED", "MCP_RES_BEHAVIOUR_LEFT_OPEN"),
        "{run}"
    );
    validate(&out, 0);
    // The same for PUT refused with 400: 405 is a SHOULD (RFC 9110).
    let out = tmp.path().join("put-400");
    let o = subject_run(
        &out,
        "2026-07-28",
        Some("status-code-consistency,content-type"),
        Some("put-400"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", support::output_text(&o));
    let run = support::read_json(&out.join("run.json"));
    let (_, verdict, reason) = verdicts(&run)
        .into_iter()
        .find(|v| v.0 == "status-code-consistency")
        .expect("run.json has status-code-consistency");
    assert_eq!(
        (verdict.as_str(), reason.as_str()),
        ("NOT_OBSERVED", "MCP_RES_BEHAVIOUR_LEFT_OPEN"),
        "{run}"
    );
    validate(&out, 0);
}

/// Issue 40, item 5: a server that repeats the request's `Authorization`
/// header in `serverInfo` (name and version) never puts the run's bearer
/// credential into the evaluation: the fields derived from what it said
/// (`subject.name`, `subject.version`) carry the redaction marker, as every
/// artifact does, and no file of the output holds a bearer value but the
/// marker.
#[test]
fn a_server_echoing_its_credential_never_writes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/http_subject.py");
    let python = std::env::var("MCPRES_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let marker = "<synthetic-bearer>";
    for revision in ["2025-11-25", "2026-07-28"] {
        let out = tmp.path().join(revision);
        let o = profile_run(
            &out,
            &[
                "--revision",
                revision,
                "--checks",
                "keepalive",
                "--http",
                "http://127.0.0.1:0/mcp",
                "--bearer-env",
                "MCPRES_TEST_TOKEN",
                "--",
                &python,
                script.to_str().unwrap(),
                "--port",
                "{port}",
                "--bearer-env",
                "MCPRES_TEST_TOKEN",
                "--echo-authorization",
            ],
            &[],
        );
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{revision}: {}",
            support::output_text(&o)
        );
        let evaluation = support::read_json(&out.join("evaluation.json"));
        let subject = &evaluation["subject"];
        assert_eq!(
            subject["name"],
            format!("heard Bearer {marker}"),
            "{revision}: {subject}"
        );
        assert_eq!(
            subject["version"],
            format!("0.1.0 Bearer {marker}"),
            "{revision}: {subject}"
        );
        let mut seen = 0;
        for entry in walk(&out) {
            let bytes = std::fs::read(&entry).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            for (at, _) in text.match_indices("Bearer ") {
                let after = &text[at + "Bearer ".len()..];
                // The challenge (`WWW-Authenticate: Bearer`) and prose name
                // the scheme alone; a value is only ever the marker.
                if after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-') {
                    panic!(
                        "{revision}: {} holds a bearer value: {}",
                        entry.display(),
                        &after[..after.len().min(40)]
                    );
                }
                seen += usize::from(after.starts_with(marker));
            }
        }
        assert!(
            seen > 0,
            "{revision}: the echoed header was not recorded at all"
        );
        validate(&out, o.status.code().unwrap());
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Issue 40, item 7: a started HTTP server that prints the run's synthetic
/// credential to its stderr has it recorded as the marker, never verbatim
/// (its stderr is kept in the server record and the preflight).
#[test]
fn a_server_printing_its_credential_to_stderr_is_redacted() {
    let tmp = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/http_subject.py");
    let python = std::env::var("MCPRES_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = tmp.path().join("out");
    let o = profile_run(
        &out,
        &[
            "--checks",
            "keepalive",
            "--http",
            "http://127.0.0.1:0/mcp",
            "--bearer-env",
            "MCPRES_TEST_TOKEN",
            "--",
            "/bin/sh",
            "-c",
            "echo \"credential=$MCPRES_TEST_TOKEN.\" >&2; exec \"$0\" \"$1\" --port \"$2\" --bearer-env MCPRES_TEST_TOKEN",
            &python,
            script.to_str().unwrap(),
            "{port}",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", support::output_text(&o));
    let mut redacted = 0;
    for f in walk(&out) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        for (at, _) in text.match_indices("credential=") {
            let after = &text[at + "credential=".len()..];
            if after.starts_with("<synthetic-bearer>.") {
                redacted += 1;
            } else {
                assert!(
                    after.starts_with("$MCPRES_TEST_TOKEN"),
                    "{}: {}",
                    f.display(),
                    &after[..after.len().min(40)]
                );
            }
        }
    }
    assert!(redacted > 0, "the server's stderr line was not recorded");
    validate(&out, 0);
}
