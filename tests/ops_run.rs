//! `mcpres profile run operational-resilience` through the binary: the honest test
//! subject passes every check mcpres runs, and each subject with one operational defect
//! fails exactly the check about it; every evaluation written is validated, and a
//! record whose workload is not the run's, or whose label its record does not give, is
//! refused by `validate`.

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;

use support::{mcpres, output_text, read_json, reseal};

/// A short workload for tests (the built-in one soaks longer).
const WORKLOAD: &str = r#"
scenario = "mcpres tests: a short steady load"

[load]
mix = [{ kind = "live", weight = 3 }, { kind = "tools/list", weight = 1 }]
ratePerS = 50
concurrency = 4
warmupMs = 500
soakMs = 3500
controlSoakMs = 2500
coldStarts = 1
sampleIntervalMs = 50
floodLines = 100
floodValidEvery = 10
oversizedBytes = 1048576
inFlightAtShutdown = 4

[budgets]
coldStartMs = 2000
warmStartMs = 2000
p50Ms = 250
p95Ms = 750
p99Ms = 1500
errorPerMille = 10
rssKibPer1000Ops = 1024
fdsPer1000Ops = 4
listenersPer1000Ops = 1
childrenPer1000Ops = 1
shutdownMs = 2000
termMs = 2000
requestTimeoutMs = 3000

[controls]
defectFactor = 4
seed = 7
"#;

fn subject() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/ops_subject.py")
}

/// Run the profile (the named checks, or every one mcpres runs) against the ops test
/// subject with `flags`; the evaluation directory and run.json's verdicts by check.
fn run(
    tmp: &tempfile::TempDir,
    checks: &[&str],
    flags: &[&str],
) -> (PathBuf, Vec<(String, String, String)>) {
    run_with(tmp, WORKLOAD, checks, flags)
}

/// The test workload with the subject's limits declared (`--max-in-flight 4` and its
/// `slow` tool, one second a call).
fn declared_limits() -> String {
    format!(
        "{WORKLOAD}\n[subject]\nmaxInFlight = 4\nholdTool = \"slow\"\nholdArguments = {{ delayMs = 1000 }}\nholdMs = 1000\n"
    )
}

fn run_with(
    tmp: &tempfile::TempDir,
    workload_text: &str,
    checks: &[&str],
    flags: &[&str],
) -> (PathBuf, Vec<(String, String, String)>) {
    run_with_options(tmp, workload_text, checks, &[], flags)
}

/// [`run_with`], with `options` given to `mcpres profile run` (before the subject).
fn run_with_options(
    tmp: &tempfile::TempDir,
    workload_text: &str,
    checks: &[&str],
    options: &[&str],
    flags: &[&str],
) -> (PathBuf, Vec<(String, String, String)>) {
    let workload = tmp.path().join("workload.toml");
    std::fs::write(&workload, workload_text).unwrap();
    let out = tmp.path().join("eval");
    let mut args: Vec<String> = vec![
        "profile".into(),
        "run".into(),
        "operational-resilience".into(),
        "--workload".into(),
        workload.display().to_string(),
        "-o".into(),
        out.display().to_string(),
    ];
    if !checks.is_empty() {
        args.push("--checks".into());
        args.push(checks.join(","));
    }
    args.extend(options.iter().map(|o| o.to_string()));
    args.push("--".into());
    args.push("python3".into());
    args.push(subject().display().to_string());
    args.extend(flags.iter().map(|f| f.to_string()));
    let o = mcpres(&args);
    let verdicts = support::profile_verdicts(&out, &o);
    (out, verdicts)
}

/// Run `check` alone on the test subject with `flags`; its verdict must be `verdict`.
/// The evaluation's directory and the check's reason.
fn run_one(
    tmp: &tempfile::TempDir,
    check: &str,
    flags: &[&str],
    verdict: &str,
) -> (PathBuf, String) {
    let (dir, verdicts) = run(tmp, &[check], flags);
    assert_eq!(verdicts.len(), 1);
    let (id, got, reason) = &verdicts[0];
    assert_eq!(
        (id.as_str(), got.as_str()),
        (check, verdict),
        "{check} with {flags:?}: {reason}"
    );
    (dir, reason.clone())
}

fn validate(dir: &Path) -> (i32, String) {
    let o = mcpres(&["validate", "--format", "json", dir.to_str().unwrap()]);
    (o.status.code().unwrap_or(-1), output_text(&o))
}

/// The runner's options and the subject's flags for a run over Streamable HTTP.
const OVER_HTTP: (&[&str], &[&str]) = (
    &["--http", "http://127.0.0.1:0/mcp"],
    &["--http-port", "{port}"],
);

/// Run `checks` against the test subject with `flags` under `workload_text`, and hold the
/// verdicts to `want` (check, verdict, reason), and `validate` to exit 1 exactly when one
/// of them fails. The evaluation directory (in `tmp`).
fn expect_run(
    tmp: &tempfile::TempDir,
    workload_text: &str,
    (checks, options, flags): (&[&str], &[&str], &[&str]),
    want: &[(&str, &str, &str)],
) -> PathBuf {
    let (dir, verdicts) = run_with_options(tmp, workload_text, checks, options, flags);
    let got: Vec<(&str, &str, &str)> = verdicts
        .iter()
        .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
        .collect();
    assert_eq!(got, want, "{flags:?}");
    let (code, text) = validate(&dir);
    let fails = want.iter().any(|w| w.1 == "FAIL");
    assert_eq!(code, i32::from(fails), "{flags:?}: {text}");
    dir
}

#[test]
fn the_honest_subject_passes_every_check_and_its_evaluation_is_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, verdicts) = run(&tmp, &[], &[]);
    let ids: Vec<&str> = verdicts.iter().map(|v| v.0.as_str()).collect();
    assert_eq!(
        ids,
        [
            "cold-start",
            "warm-start",
            "bounded-concurrency",
            "queue-saturation",
            "backpressure",
            "overload-rejection",
            "rate-limiting",
            "retry-after",
            "timeout",
            "partial-outage",
            "process-crash",
            "restart",
            "rolling-version-skew",
            "downstream-failure",
            "disk-full",
            "permission-failure",
            "malformed-flood",
            "oversized-input",
            "duplicate-delivery",
            "graceful-shutdown",
            "forced-shutdown",
            "memory-resource-leak",
            "listener-leak",
            "child-process-leak",
            "bounded-soak",
            "cleanup"
        ]
    );
    // The limit checks need the subject's limits declared; this workload declares none.
    let limits = [
        "queue-saturation",
        "overload-rejection",
        "retry-after",
        "rate-limiting",
        "disk-full",
        "permission-failure",
        "partial-outage",
        "rolling-version-skew",
        "downstream-failure",
    ];
    for (id, verdict, reason) in &verdicts {
        if limits.contains(&id.as_str()) {
            assert_eq!(verdict, "NOT_OBSERVED", "{id}: {reason}");
        } else {
            assert_eq!(verdict, "PASS", "{id}: {reason}");
        }
    }
    let (code, text) = validate(&dir);
    assert_eq!(code, 0, "{text}");
    // The workload is bound, and the measurement report has what it must.
    let w = read_json(&dir.join("artifacts/workload.json"));
    assert_eq!(w["load"]["ratePerS"], 50);
    let m = read_json(&dir.join("artifacts/measurement.json"));
    for k in [
        "generator",
        "scenario",
        "operationMix",
        "concurrency",
        "durationMs",
        "warmupMs",
        "clock",
        "latency",
        "errorsByReason",
        "peakRssKib",
        "handles",
        "runtime",
        "platform",
        "architecture",
        "runner",
    ] {
        assert!(!m[k].is_null(), "measurement.json has no {k}: {m}");
    }
    assert!(
        m["generator"]["ceiling"]["ceilingPerS"].as_u64().unwrap() >= 100,
        "{m}"
    );
    assert!(m["latency"]["judgedRequests"].as_u64().unwrap() > 50, "{m}");
    assert!(m["peakRssKib"].as_u64().unwrap() > 0, "{m}");
}

/// Over Streamable HTTP the nine checks about the subject's process (its starts, a
/// crash, SIGTERM while serving and once its session was ended with DELETE, its
/// cleanup, and what it holds over a soak), the two about bad
/// input (a flood of bodies that are not JSON, one oversized body), the two whose
/// controls hold answers at the shim's front (`bounded-soak`, `timeout`),
/// `bounded-concurrency` (its control's queue at the front), `duplicate-delivery`
/// (its control and mutant meet the second copy at the front), `restart` (its control
/// and mutant rename the listed tools at the front) and `backpressure` (requests
/// pipelined on one connection; its control drops at the front) run, on both revisions:
/// the honest subject passes them, every other check is NOT_OBSERVED with the reason,
/// and `validate` accepts the evaluation.
#[test]
fn the_process_checks_run_over_streamable_http() {
    let http = ["--http", "http://127.0.0.1:0/mcp"];
    let over_http = [
        "cold-start",
        "warm-start",
        "process-crash",
        "graceful-shutdown",
        "forced-shutdown",
        "memory-resource-leak",
        "listener-leak",
        "child-process-leak",
        "cleanup",
        "malformed-flood",
        "oversized-input",
        "bounded-soak",
        "timeout",
        "bounded-concurrency",
        "duplicate-delivery",
        "restart",
        "backpressure",
    ];
    for revision in ["2025-11-25", "2026-07-28"] {
        let tmp = tempfile::tempdir().unwrap();
        let mut options = http.to_vec();
        options.extend(["--revision", revision]);
        // Long tool descriptions: backpressure's answers outgrow the send buffer in
        // fewer requests.
        let flags = ["--http-port", "{port}", "--describe-tools", "1000"];
        let (dir, verdicts) = run_with_options(&tmp, WORKLOAD, &[], &options, &flags);
        assert_eq!(verdicts.len(), 26);
        for (id, verdict, reason) in &verdicts {
            if over_http.contains(&id.as_str()) {
                assert_eq!(verdict, "PASS", "{revision} {id}: {reason}");
            } else {
                assert_eq!(verdict, "NOT_OBSERVED", "{revision} {id}: {reason}");
            }
        }
        let (code, text) = validate(&dir);
        assert_eq!(code, 0, "{revision}: {text}");
        // The record says which transport it was made over, and holds the HTTP bytes.
        let t = read_json(&dir.join("artifacts/process-crash/positive.json"));
        assert_eq!(
            t["transcript"]["observation"]["ops"]["transport"],
            "streamable-http"
        );
        assert!(t["transcript"]["http"]["connections"].as_u64().unwrap() >= 2);
        // The HTTP generator's ceiling is measured over HTTP and reported.
        let m = read_json(&dir.join("artifacts/measurement.json"));
        assert_eq!(m["generator"]["ceiling"]["transport"], "streamable-http");
        assert!(m["latency"]["judgedRequests"].as_u64().unwrap() > 50, "{m}");
    }
}

/// Over Streamable HTTP each defect fails its own check, with the reason its record
/// gives, and `validate` refuses it; the honest twin of `--orphan` passes.
#[test]
fn each_defect_fails_its_own_check_over_streamable_http() {
    let http = ["--http", "http://127.0.0.1:0/mcp"];
    let cases: [(&str, &[&str], &str); 15] = [
        // SIGTERM once the client ended its session: ignored, so no exit within the budget.
        (
            "graceful-shutdown",
            &["--ignore-sigterm"],
            "MCP_RES_OPS_SHUTDOWN_OVER_BUDGET",
        ),
        (
            "duplicate-delivery",
            &["--stall-on-duplicate-id"],
            "MCP_RES_OPS_DUPLICATE_STALLED",
        ),
        (
            "bounded-concurrency",
            &["--queue", "4"],
            "MCP_RES_OPS_BURST_UNANSWERED",
        ),
        (
            "bounded-soak",
            &["--slow-answer-ms", "2000"],
            "MCP_RES_OPS_SOAK_OVER_BUDGET",
        ),
        (
            "timeout",
            &["--hang-after-cancel"],
            "MCP_RES_OPS_DEADLINE_MISSED",
        ),
        (
            "malformed-flood",
            &["--die-after-malformed", "5"],
            "MCP_RES_SUBJECT_EXITED",
        ),
        (
            "oversized-input",
            &["--max-line-bytes", "100000"],
            "MCP_RES_SUBJECT_EXITED",
        ),
        (
            "memory-resource-leak",
            &["--leak-kib-per-call", "64"],
            "MCP_RES_OPS_RSS_GROWTH_OVER_BUDGET",
        ),
        (
            "listener-leak",
            &["--listener-every", "10"],
            "MCP_RES_OPS_LISTENERS_GROWTH_OVER_BUDGET",
        ),
        (
            "child-process-leak",
            &["--child-every", "10"],
            "MCP_RES_OPS_CHILDREN_GROWTH_OVER_BUDGET",
        ),
        (
            "cold-start",
            &["--slow-start-ms", "3000"],
            "MCP_RES_OPS_START_OVER_BUDGET",
        ),
        (
            "forced-shutdown",
            &["--ignore-sigterm"],
            "MCP_RES_OPS_TERM_OVER_BUDGET",
        ),
        ("cleanup", &["--orphan"], "MCP_RES_OPS_RESIDUE_LEFT"),
        ("process-crash", &["--orphan"], "MCP_RES_OPS_CRASH_RESIDUE"),
        (
            "restart",
            &["--random-tool-name"],
            "MCP_RES_OPS_SURFACE_CHANGED",
        ),
    ];
    for (check, flags, reason) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let mut subject_flags = vec!["--http-port", "{port}"];
        subject_flags.extend(flags);
        let (dir, verdicts) = run_with_options(&tmp, WORKLOAD, &[check], &http, &subject_flags);
        assert_eq!(verdicts.len(), 1);
        assert_eq!(
            (verdicts[0].1.as_str(), verdicts[0].2.as_str()),
            ("FAIL", reason),
            "{check} with {flags:?} over HTTP"
        );
        let (code, text) = validate(&dir);
        assert_eq!(code, 1, "{check}: {text}");
    }
    // queue-saturation needs the subject's limit declared: the subject that drops the
    // hold calls over its limit fails it; its honest twin, which refuses them, passes.
    let dropping: &[&str] = &["--max-in-flight", "4", "--drop-over-limit"];
    let refusing: &[&str] = &["--max-in-flight", "4"];
    for (flags, verdict, reason) in [
        (dropping, "FAIL", "MCP_RES_OPS_QUEUE_LOST"),
        (refusing, "PASS", "MCP_RES_OPS_QUEUE_BOUNDED"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let mut subject_flags = vec!["--http-port", "{port}"];
        subject_flags.extend(flags);
        let (dir, verdicts) = run_with_options(
            &tmp,
            &declared_limits(),
            &["queue-saturation"],
            &http,
            &subject_flags,
        );
        let got: Vec<(&str, &str, &str)> = verdicts
            .iter()
            .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
            .collect();
        assert_eq!(got, [("queue-saturation", verdict, reason)], "{flags:?}");
        let (code, text) = validate(&dir);
        assert_eq!(code, i32::from(verdict == "FAIL"), "{flags:?}: {text}");
    }
    // The honest twin of --orphan: a helper in the subject's own group; of
    // --random-tool-name: tools listed in another order at every start.
    let tmp = tempfile::tempdir().unwrap();
    let (_, verdicts) = run_with_options(
        &tmp,
        WORKLOAD,
        &["cleanup", "process-crash"],
        &http,
        &["--http-port", "{port}", "--helper"],
    );
    for (id, verdict, reason) in &verdicts {
        assert_eq!(verdict, "PASS", "{id} with --helper over HTTP: {reason}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let run = (
        &["restart"][..],
        OVER_HTTP.0,
        &["--http-port", "{port}", "--shuffle-tools"][..],
    );
    let want = [("restart", "PASS", "MCP_RES_OPS_RESTART_SAME_SURFACE")];
    expect_run(&tmp, WORKLOAD, run, &want);
}

/// Each defect fails its own check (with the reason the record gives), and the
/// evaluation is refused by `validate` with that check's finding.
#[test]
fn each_defect_fails_its_own_check() {
    let cases: [(&str, &[&str], &str); 19] = [
        (
            "cold-start",
            &["--slow-start-ms", "3000"],
            "MCP_RES_OPS_START_OVER_BUDGET",
        ),
        (
            "malformed-flood",
            &["--die-after-malformed", "5"],
            "MCP_RES_SUBJECT_EXITED",
        ),
        (
            "memory-resource-leak",
            &["--leak-kib-per-call", "64"],
            "MCP_RES_OPS_RSS_GROWTH_OVER_BUDGET",
        ),
        // A leak in a daemon that left the subject's process tree (forked twice, its
        // own session): the sandbox's PID namespace still holds it.
        (
            "memory-resource-leak",
            &["--daemon-leak-kib", "800"],
            "MCP_RES_OPS_RSS_GROWTH_OVER_BUDGET",
        ),
        // Memory within budget, a file descriptor kept every fifth request.
        (
            "memory-resource-leak",
            &["--fd-every", "5"],
            "MCP_RES_OPS_FDS_GROWTH_OVER_BUDGET",
        ),
        (
            "listener-leak",
            &["--listener-every", "10"],
            "MCP_RES_OPS_LISTENERS_GROWTH_OVER_BUDGET",
        ),
        (
            "child-process-leak",
            &["--child-every", "10"],
            "MCP_RES_OPS_CHILDREN_GROWTH_OVER_BUDGET",
        ),
        (
            "bounded-soak",
            &["--slow-answer-ms", "300"],
            "MCP_RES_OPS_SOAK_OVER_BUDGET",
        ),
        (
            "bounded-concurrency",
            &["--queue", "4"],
            "MCP_RES_OPS_BURST_UNANSWERED",
        ),
        // Answers written without waiting: what the runner's full pipe does not take is lost.
        (
            "backpressure",
            &["--drop-when-blocked"],
            "MCP_RES_OPS_BACKPRESSURE_LOST",
        ),
        (
            "oversized-input",
            &["--max-line-bytes", "100000"],
            "MCP_RES_SUBJECT_EXITED",
        ),
        (
            "graceful-shutdown",
            &["--ignore-eof"],
            "MCP_RES_OPS_SHUTDOWN_OVER_BUDGET",
        ),
        (
            "forced-shutdown",
            &["--ignore-sigterm"],
            "MCP_RES_OPS_TERM_OVER_BUDGET",
        ),
        ("cleanup", &["--orphan"], "MCP_RES_OPS_RESIDUE_LEFT"),
        // Every answer later than the workload's request timeout.
        (
            "timeout",
            &["--slow-answer-ms", "3500"],
            "MCP_RES_OPS_DEADLINE_MISSED",
        ),
        // Deaf once a request was cancelled: the request after it misses the deadline.
        (
            "timeout",
            &["--hang-after-cancel"],
            "MCP_RES_OPS_DEADLINE_MISSED",
        ),
        (
            "duplicate-delivery",
            &["--stall-on-duplicate-id"],
            "MCP_RES_OPS_DUPLICATE_STALLED",
        ),
        // A process in its own session: a crash of the subject's group does not reach it.
        ("process-crash", &["--orphan"], "MCP_RES_OPS_CRASH_RESIDUE"),
        // A tool named anew at every start: a reconnecting client does not find it.
        (
            "restart",
            &["--random-tool-name"],
            "MCP_RES_OPS_SURFACE_CHANGED",
        ),
    ];
    for (check, flags, reason) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, got) = run_one(&tmp, check, flags, "FAIL");
        assert_eq!(got, reason, "{check} with {flags:?}");
        let (code, text) = validate(&dir);
        assert_eq!(code, 1, "{check}: {text}");
    }
}

/// With the subject's limits declared, the subject that keeps them passes the three
/// limit checks, and each way of breaking them fails its own check with its reason; on
/// both transports. Over Streamable HTTP a subject that turns requests away with an HTTP
/// status alone (503, its hint a `Retry-After` header) keeps its limit as well.
#[test]
fn the_declared_limits_are_held_to() {
    limits_held_to(&[], &[], false);
    limits_held_to(OVER_HTTP.0, OVER_HTTP.1, true);
}

fn limits_held_to(options: &[&str], transport_flags: &[&str], http: bool) {
    let limits = ["queue-saturation", "overload-rejection", "retry-after"];
    /// Checks run, the subject's flags, and (check, verdict, reason) expected.
    type Case<'a> = (
        &'a [&'a str],
        &'a [&'a str],
        &'a [(&'a str, &'a str, &'a str)],
    );
    let mut cases: Vec<Case> = vec![
        (
            &limits,
            &["--max-in-flight", "4"],
            &[
                ("queue-saturation", "PASS", "MCP_RES_OPS_QUEUE_BOUNDED"),
                (
                    "overload-rejection",
                    "PASS",
                    "MCP_RES_OPS_OVERLOAD_REJECTED",
                ),
                ("retry-after", "PASS", "MCP_RES_OPS_RETRY_HONOURED"),
            ],
        ),
        (
            &["retry-after"],
            &["--max-in-flight", "4", "--no-retry-hint"],
            &[("retry-after", "FAIL", "MCP_RES_OPS_NO_RETRY_HINT")],
        ),
        (
            &["queue-saturation", "overload-rejection"],
            &["--max-in-flight", "4", "--drop-over-limit"],
            &[
                ("queue-saturation", "FAIL", "MCP_RES_OPS_QUEUE_LOST"),
                ("overload-rejection", "FAIL", "MCP_RES_OPS_OVERLOAD_LOST"),
            ],
        ),
        // Declared, not kept: every request served, however many are in flight.
        (
            &["overload-rejection", "retry-after"],
            &[],
            &[
                (
                    "overload-rejection",
                    "FAIL",
                    "MCP_RES_OPS_OVERLOAD_NOT_ENFORCED",
                ),
                ("retry-after", "NOT_OBSERVED", "MCP_RES_CHECK_NOT_OBSERVED"),
            ],
        ),
    ];
    if http {
        cases.extend([
            (
                &["overload-rejection", "retry-after"][..],
                &["--max-in-flight", "4", "--http-refusal"][..],
                &[
                    (
                        "overload-rejection",
                        "PASS",
                        "MCP_RES_OPS_OVERLOAD_REJECTED",
                    ),
                    ("retry-after", "PASS", "MCP_RES_OPS_RETRY_HONOURED"),
                ][..],
            ),
            (
                &["retry-after"],
                &["--max-in-flight", "4", "--http-refusal", "--no-retry-hint"],
                &[("retry-after", "FAIL", "MCP_RES_OPS_NO_RETRY_HINT")],
            ),
        ]);
    }
    for (checks, extra, want) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let mut flags = transport_flags.to_vec();
        flags.extend_from_slice(extra);
        expect_run(&tmp, &declared_limits(), (checks, options, &flags), want);
    }
}

/// With a rate limit declared (5 requests a second), the subject that keeps it passes
/// `rate-limiting`; one that drops what is over it, one that keeps no limit and one
/// stricter than declared each fail it with their reason; on both transports. Over
/// Streamable HTTP a subject that refuses with HTTP 429 alone keeps its limit as well.
#[test]
fn the_declared_rate_limit_is_held_to() {
    rate_held_to(&[], &[], false);
    rate_held_to(OVER_HTTP.0, OVER_HTTP.1, true);
}

fn rate_held_to(options: &[&str], transport_flags: &[&str], http: bool) {
    let declared = format!("{WORKLOAD}\n[rateLimit]\nrequests = 5\nwindowMs = 1000\n");
    let mut cases: Vec<(&[&str], &str, &str)> = vec![
        (
            &["--rate-limit", "5/1000"],
            "PASS",
            "MCP_RES_OPS_RATE_LIMIT_HELD",
        ),
        (
            &["--rate-limit", "5/1000", "--rate-drop"],
            "FAIL",
            "MCP_RES_OPS_RATE_LIMIT_LOST",
        ),
        (&[], "FAIL", "MCP_RES_OPS_RATE_NOT_ENFORCED"),
        (
            &["--rate-limit", "5/1000", "--rate-strict", "2"],
            "FAIL",
            "MCP_RES_OPS_RATE_UNDER_DECLARED",
        ),
    ];
    if http {
        cases.push((
            &["--rate-limit", "5/1000", "--http-refusal"],
            "PASS",
            "MCP_RES_OPS_RATE_LIMIT_HELD",
        ));
    }
    for (extra, verdict, reason) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let mut flags = transport_flags.to_vec();
        flags.extend_from_slice(extra);
        let run = (&["rate-limiting"][..], options, &flags[..]);
        expect_run(&tmp, &declared, run, &[("rate-limiting", verdict, reason)]);
    }
}

/// With a storage declared (a directory and the subject's `store` tool), the subject that
/// reports a failed write passes `disk-full` and `permission-failure`; one that claims
/// the write, and one that exits on it, fail both; one whose write never works earns no
/// verdict at all (NOT_OBSERVED), never a PASS. Over stdio and over Streamable HTTP.
#[test]
fn the_declared_storage_is_held_to() {
    storage_held_to(&[], &[]);
    storage_held_to(OVER_HTTP.0, OVER_HTTP.1);
}

fn storage_held_to(options: &[&str], transport_flags: &[&str]) {
    let checks = ["disk-full", "permission-failure"];
    let cases: [(&[&str], &str, &str); 4] = [
        (&[], "PASS", "MCP_RES_OPS_STORAGE_FAILURE_REPORTED"),
        (
            &["--store-claims"],
            "FAIL",
            "MCP_RES_OPS_STORAGE_WRITE_CLAIMED",
        ),
        (&["--store-crash"], "FAIL", "MCP_RES_SUBJECT_EXITED"),
        (
            &["--store-broken"],
            "NOT_OBSERVED",
            "MCP_RES_CHECK_NOT_OBSERVED",
        ),
    ];
    for (extra, verdict, reason) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let state = tmp.path().join("state");
        std::fs::create_dir(&state).unwrap();
        let state = state.display().to_string();
        let declared = format!(
            "{WORKLOAD}\n[storage]\npath = \"{state}\"\nwriteTool = \"store\"\nwriteArguments = {{ key = \"probe\", bytes = 4096 }}\n"
        );
        let mut flags = transport_flags.to_vec();
        flags.extend(["--state-dir", state.as_str()]);
        flags.extend_from_slice(extra);
        // A run that observes nothing writes no evaluation: `cleanup` runs beside the
        // two when neither is expected to be observed.
        let mut run_checks = checks.to_vec();
        if verdict == "NOT_OBSERVED" {
            run_checks.push("cleanup");
        }
        let (dir, verdicts) = run_with_options(&tmp, &declared, &run_checks, options, &flags);
        let got: Vec<(&str, &str, &str)> = verdicts
            .iter()
            .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
            .collect();
        let mut want: Vec<(&str, &str, &str)> =
            checks.iter().map(|c| (*c, verdict, reason)).collect();
        if verdict == "NOT_OBSERVED" {
            want.push(("cleanup", "PASS", "MCP_RES_OPS_CLEANUP_COMPLETE"));
        }
        assert_eq!(got, want, "{extra:?} {options:?}");
        let (code, text) = validate(&dir);
        assert_eq!(
            code,
            i32::from(verdict == "FAIL"),
            "{extra:?} {options:?}: {text}"
        );
        // Every write went to the sandbox's layers: the host's directory is untouched.
        assert_eq!(
            std::fs::read_dir(&state).unwrap().count(),
            0,
            "{extra:?} {options:?}"
        );
        if !options.is_empty() && verdict != "NOT_OBSERVED" {
            let t = read_json(&dir.join("artifacts/disk-full/positive.json"));
            assert_eq!(
                t["transcript"]["observation"]["ops"]["transport"],
                "streamable-http"
            );
        }
    }
}

/// The downstream stub's log in a stored control's server record (its stderr) shows a 503.
fn stub_answered_503(control: &serde_json::Value) {
    let stderr: String = control["transcript"]["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["stream"] == "stderr")
        .filter_map(|c| c["text"].as_str())
        .collect();
    assert!(stderr.contains("\"status\":503"), "{stderr}");
}

/// The declared downstream (served by the runner's stub beside the subject): a subject
/// that reports the downstream's failure and recovers passes both checks; one that
/// answers a failed call as a success, exits on it, or caches the failure for ever fails
/// the check that reads it; a breaker that closes within the declared recovery time is
/// the honest twin of the cached failure; a subject with no call that reaches the
/// downstream is not observed. Over stdio and over Streamable HTTP.
#[test]
fn the_declared_downstream_is_held_to() {
    downstream_held_to(&[], &[]);
    downstream_held_to(OVER_HTTP.0, OVER_HTTP.1);
}

fn downstream_held_to(options: &[&str], transport_flags: &[&str]) {
    let declared = format!(
        "{WORKLOAD}\n[downstream]\nurlEnv = \"MCPRES_TEST_DOWNSTREAM\"\ncallTool = \"fetch\"\ncallArguments = {{ path = \"/probe\" }}\nrecoveryMs = 2000\n"
    );
    let env = ["--downstream-env", "MCPRES_TEST_DOWNSTREAM"];
    let reported = ("PASS", "MCP_RES_OPS_DOWNSTREAM_FAILURE_REPORTED");
    let recovered = ("PASS", "MCP_RES_OPS_OUTAGE_RECOVERED");
    let exited = ("FAIL", "MCP_RES_SUBJECT_EXITED");
    let lied = ("FAIL", "MCP_RES_OPS_DOWNSTREAM_FALSE_SUCCESS");
    let not = ("NOT_OBSERVED", "MCP_RES_CHECK_NOT_OBSERVED");
    // Flags; partial-outage's verdict and reason; downstream-failure's.
    type Verdict<'a> = (&'a str, &'a str);
    let cases: [(&[&str], Verdict, Verdict); 6] = [
        (&env, recovered, reported),
        (
            &[env[0], env[1], "--downstream-breaker-ms", "300"],
            recovered,
            reported,
        ),
        (&[env[0], env[1], "--downstream-lies"], lied, lied),
        (&[env[0], env[1], "--downstream-crash"], exited, exited),
        (
            &[env[0], env[1], "--downstream-sticky"],
            ("FAIL", "MCP_RES_OPS_OUTAGE_NOT_RECOVERED"),
            reported,
        ),
        // No `fetch` tool: the declared call fails with the downstream up.
        (&[], not, not),
    ];
    for (extra, outage, failure) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let mut flags = transport_flags.to_vec();
        flags.extend_from_slice(extra);
        let mut checks = vec!["partial-outage", "downstream-failure"];
        let mut want = vec![
            ("partial-outage", outage.0, outage.1),
            ("downstream-failure", failure.0, failure.1),
        ];
        if outage.0 == "NOT_OBSERVED" {
            checks.push("cleanup");
            want.push(("cleanup", "PASS", "MCP_RES_OPS_CLEANUP_COMPLETE"));
        }
        let dir = expect_run(&tmp, &declared, (&checks, options, &flags), &want);
        if failure.0 == "PASS" {
            // The stub's log is in the stored (server) process record: the control's calls
            // reached the downstream, which answered 503.
            let control = read_json(&dir.join("artifacts/downstream-failure/negative.json"));
            stub_answered_503(&control);
            if !options.is_empty() {
                // Over HTTP the conversation is under `http`.
                let conns = control["transcript"]["http"]["connections"].as_u64();
                assert!(conns.unwrap() >= 3);
            }
        }
    }
}

/// The declared other version, run beside the subject: a next version that names itself
/// otherwise and adds a tool is compatible; one that lists other tools, or speaks only
/// another protocol revision, fails; one that cannot run while the subject holds a lock
/// on a shared file fails where the two share files (no sandbox: in the sandbox each
/// process has its own layer, which the test shows too); a command that cannot be
/// started is not observed.
#[test]
fn the_declared_other_version_is_held_to() {
    let tmp = tempfile::tempdir().unwrap();
    let lock = tmp.path().join("subject.lock").display().to_string();
    let state = tmp.path().display().to_string();
    let subject = subject().display().to_string();
    // The other version's flags, the subject's, `profile run`'s options, the verdict
    // and its reason.
    type Case<'a> = (
        &'a [&'a str],
        &'a [&'a str],
        &'a [&'a str],
        &'a str,
        &'a str,
    );
    let cases: [Case; 6] = [
        (
            &["--version", "0.2.0", "--state-dir", &state],
            &[],
            &[],
            "PASS",
            "MCP_RES_OPS_SKEW_COMPATIBLE",
        ),
        (
            &["--random-tool-name"],
            &[],
            &[],
            "FAIL",
            "MCP_RES_OPS_SKEW_TOOL_REMOVED",
        ),
        (
            &["--only-revision", "2025-06-18"],
            &[],
            &[],
            "FAIL",
            "MCP_RES_OPS_SKEW_REVISION_DROPPED",
        ),
        (
            &["--lock-file", &lock],
            &["--lock-file", &lock],
            &["--sandbox", "off"],
            "FAIL",
            "MCP_RES_OPS_SKEW_OTHER_FAILED",
        ),
        (
            &["--lock-file", &lock],
            &["--lock-file", &lock],
            &[],
            "PASS",
            "MCP_RES_OPS_SKEW_COMPATIBLE",
        ),
        (
            &["--no-such-program"],
            &[],
            &[],
            "NOT_OBSERVED",
            "MCP_RES_CHECK_NOT_OBSERVED",
        ),
    ];
    for (other, flags, options, verdict, reason) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let mut command = vec!["python3", subject.as_str()];
        command.extend_from_slice(other);
        if verdict == "NOT_OBSERVED" {
            command = vec!["/nonexistent/mcpres-other-version"];
        }
        let declared = format!(
            "{WORKLOAD}\n[versionSkew]\ncommand = {}\nlabel = \"next\"\n",
            serde_json::to_string(&command).unwrap()
        );
        let (dir, verdicts) = run_with_options(
            &tmp,
            &declared,
            &["rolling-version-skew", "cleanup"],
            options,
            flags,
        );
        assert_eq!(
            (verdicts[0].1.as_str(), verdicts[0].2.as_str()),
            (verdict, reason),
            "{other:?} {options:?}"
        );
        let (code, text) = validate(&dir);
        assert_eq!(code, i32::from(verdict == "FAIL"), "{other:?}: {text}");
    }
}

/// `rolling-version-skew` over Streamable HTTP: the other version serves on a port of its
/// own beside the running one; a next version that names itself otherwise passes, one
/// that lists other tools fails.
#[test]
fn the_declared_other_version_is_held_to_over_streamable_http() {
    let subject = subject().display().to_string();
    let cases: [(&[&str], &str, &str); 2] = [
        (
            &["--version", "0.2.0"],
            "PASS",
            "MCP_RES_OPS_SKEW_COMPATIBLE",
        ),
        (
            &["--random-tool-name"],
            "FAIL",
            "MCP_RES_OPS_SKEW_TOOL_REMOVED",
        ),
    ];
    for (other, verdict, reason) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let mut command = vec!["python3", subject.as_str(), "--http-port", "{port}"];
        command.extend_from_slice(other);
        let declared = format!(
            "{WORKLOAD}\n[versionSkew]\ncommand = {}\nlabel = \"next\"\n",
            serde_json::to_string(&command).unwrap()
        );
        let run = (&["rolling-version-skew"][..], OVER_HTTP.0, OVER_HTTP.1);
        expect_run(
            &tmp,
            &declared,
            run,
            &[("rolling-version-skew", verdict, reason)],
        );
    }
}

/// Twins of defects that stay within what the check asks: answers slower than usual but
/// within the request timeout, a helper process in the subject's own process group
/// (which a crash of the group takes along), and tools listed in another order at every
/// start (the order is no declared state), pass.
#[test]
fn a_defect_s_honest_twin_passes() {
    let cases: [(&str, &[&str]); 3] = [
        ("timeout", &["--slow-answer-ms", "500"]),
        ("process-crash", &["--helper"]),
        ("restart", &["--shuffle-tools"]),
    ];
    for (check, flags) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, _) = run_one(&tmp, check, flags, "PASS");
        let (code, text) = validate(&dir);
        assert_eq!(code, 0, "{check}: {text}");
    }
}

/// Over Streamable HTTP, backpressure needs answers that outgrow the subject's send
/// buffer: the test subject lists tools with long descriptions. Written to a connection
/// whose full send buffer it does not wait for, it loses answers and fails; its honest
/// twin waits and passes.
#[test]
fn backpressure_is_held_to_over_streamable_http() {
    let (options, transport) = OVER_HTTP;
    let long: &[&str] = &["--describe-tools", "1000"];
    let dropping: &[&str] = &["--describe-tools", "1000", "--drop-when-blocked"];
    for (flags, want) in [
        (long, ("PASS", "MCP_RES_OPS_BACKPRESSURE_HELD")),
        (dropping, ("FAIL", "MCP_RES_OPS_BACKPRESSURE_LOST")),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let all: Vec<&str> = transport.iter().chain(flags).copied().collect();
        let (dir, verdicts) = run_with_options(&tmp, WORKLOAD, &["backpressure"], options, &all);
        let got: Vec<(&str, &str)> = verdicts
            .iter()
            .map(|(_, b, c)| (b.as_str(), c.as_str()))
            .collect();
        assert_eq!(got, [want], "{flags:?}");
        let (code, text) = validate(&dir);
        assert_eq!(code, i32::from(want.0 == "FAIL"), "{flags:?}: {text}");
        held_with_queues(&dir);
    }
    // A subject with a declared rate limit gets the requests within it, window by window,
    // and the request after them a window later: it is held to backpressure, not to its
    // limit.
    let tmp = tempfile::tempdir().unwrap();
    let declared = format!("{WORKLOAD}\n[rateLimit]\nrequests = 50\nwindowMs = 500\n");
    let flags = [
        "--http-port",
        "{port}",
        "--describe-tools",
        "4000",
        "--rate-limit",
        "50/500",
    ];
    let dir = expect_run(
        &tmp,
        &declared,
        (&["backpressure"], options, &flags),
        &[("backpressure", "PASS", "MCP_RES_OPS_BACKPRESSURE_HELD")],
    );
    held_with_queues(&dir);
}

/// The positive's record holds the kernel's queues when the runner read again.
fn held_with_queues(dir: &Path) {
    let t = read_json(&dir.join("artifacts/backpressure/positive.json"));
    let resumed = t["transcript"]["http"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["event"] == "reading-resumed")
        .cloned()
        .unwrap();
    assert!(
        resumed["subjectUnsentBytes"].as_u64().is_some(),
        "{resumed}"
    );
}

/// A record read with a laxer workload than the run declared is refused, and so is a
/// label its record does not give.
#[test]
fn a_laxer_budget_or_a_label_not_in_the_record_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, verdicts) = run(&tmp, &["cold-start"], &["--slow-start-ms", "3000"]);
    assert_eq!(verdicts[0].1, "FAIL");
    let positive = dir.join("artifacts/cold-start/positive.json");
    // The budget raised in the record only, and the label made to agree with it.
    let mut doc: Value = read_json(&positive);
    doc["transcript"]["observation"]["ops"]["workload"]["budgets"]["coldStartMs"] = 60_000.into();
    doc["observedOutcome"] = "ACCEPT".into();
    doc["observedReasonCode"] = "MCP_RES_OPS_START_WITHIN_BUDGET".into();
    std::fs::write(&positive, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let resealed = tmp.path().join("resealed");
    reseal(&dir, &resealed);
    let (code, text) = validate(&resealed);
    assert_ne!(code, 0, "{text}");
    assert!(text.contains("another workload"), "{text}");
}
