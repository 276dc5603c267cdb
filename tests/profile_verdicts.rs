//! Verdicts the specification and the record support (issues "Right on real
//! servers" and "Judged from the record", item 3), through the real binary
//! against `tests/subjects/profile_subject.py`:
//!
//! - adversaries that must not be credited: a subject whose every
//!   `tools/call` answers `isError` (its refusal of an ill-typed call is not
//!   bound to the schema), a legacy subject answering `server/discover` with
//!   -32601 (no version refusal), a subject that answers -32022 to every
//!   invalid `_meta` (the non-syntax mutant survives): NOT_OBSERVED, never
//!   PASS;
//! - behaviour the specification allows or leaves open: NOT_OBSERVED (or
//!   PASS), never FAIL: a second `initialize` answered, a request before
//!   `initialize` answered, a valid 16 MiB line served, invalid UTF-8 inside
//!   `_meta` served, SIGINT ignored, `initialize` refused with -32022 after
//!   `server/discover` on the same process;
//! - the record decides: a control refused with an error and a mutant met
//!   with silence are different observations (PASS, not a surviving
//!   mutant); a tool whose only required argument has a type list is probed
//!   (PASS);
//! - a subject that writes debug lines on stdout from its fourth request on
//!   fails stdout-protocol-purity (its positive serves several requests);
//! - a subject slower to start than the answer bound (but within the
//!   start-up bound) passes the checks whose request is a fresh process's
//!   first line;
//! - a legacy-only subject at 2026-07-28: checks it never reached are
//!   NOT_OBSERVED (`MCP_RES_REVISION_NOT_SPOKEN`), the opening's own check
//!   fails on the revision's MUST;
//! - the honest twin of each passes (the healthy subject).
//!
//! Each run is re-judged by `mcpres validate`, which must agree with it.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;

const STDIO: &str = "mcp-res/stdio-transport/v1";
const REVISION: &str = "mcp-res/protocol-revision/v1";
const REV_2025: &str = "2025-11-25";
const REV_2026: &str = "2026-07-28";
const WATCHDOG: Duration = Duration::from_secs(180);

/// The checks observe signals and answer bounds: one run at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

thread_local! {
    /// The run.json of this thread's last [`run_with`].
    static LAST_RUN: std::cell::RefCell<Value> = const { std::cell::RefCell::new(Value::Null) };
}

/// The (verdict, reason) of every check of this thread's last run, by id.
fn last_verdicts() -> Vec<(String, String, String)> {
    LAST_RUN.with(|l| {
        l.borrow()["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let f = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                (f("id"), f("verdict"), f("reason"))
            })
            .collect()
    })
}

fn python3() -> &'static str {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 on PATH");
        support::text(&out.stdout).trim().to_string()
    })
}

fn subject_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/profile_subject.py")
}

/// A check that passes on every subject used here, run beside the one under
/// test so that a run whose check is NOT_OBSERVED still writes its record.
fn companion(profile: &str) -> &'static str {
    if profile == STDIO {
        "stdout-protocol-purity"
    } else {
        "extension-declaration"
    }
}

/// Run `check` of `profile` at `revision` against the subject with
/// `breaks`; return its run.json entry (verdict, reason, detail), after
/// `mcpres validate` re-judged the directory and agreed.
fn run(profile: &str, revision: &str, check: &str, breaks: &[&str]) -> (String, String, String) {
    run_beside(profile, revision, check, companion(profile), breaks)
}

/// [`run`], with `beside` as the companion check.
fn run_beside(
    profile: &str,
    revision: &str,
    check: &str,
    beside: &str,
    breaks: &[&str],
) -> (String, String, String) {
    run_with(profile, revision, check, beside, breaks, &[])
}

/// [`run_beside`], with `runner` given to `mcpres profile run` too.
fn run_with(
    profile: &str,
    revision: &str,
    check: &str,
    beside: &str,
    breaks: &[&str],
    runner: &[&str],
) -> (String, String, String) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let mut program = vec![python3().to_string(), subject_path().display().to_string()];
    for b in breaks {
        program.extend(["--break".to_string(), b.to_string()]);
    }
    let checks = if check == beside {
        check.to_string()
    } else {
        format!("{check},{beside}")
    };
    let child = support::command()
        .args(["profile", "run", profile, "-o"])
        .arg(&out)
        .args(["--revision", revision, "--checks", &checks])
        .args(runner)
        .arg("--")
        .args(&program)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcpres profile run");
    let what = format!("mcpres profile run {profile} --checks {check} {breaks:?}");
    let output = support::output_within(child, WATCHDOG, &what);
    let doc =
        read_run(&out).unwrap_or_else(|e| panic!("{what}: {e}\n{}", support::output_text(&output)));
    LAST_RUN.with(|l| *l.borrow_mut() = doc.clone());
    let entry = doc["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == check))
        .unwrap_or_else(|| panic!("{what}: run.json has no {check}: {doc}"))
        .clone();
    let field = |k: &str| entry[k].as_str().unwrap_or_default().to_string();
    let got = (field("verdict"), field("reason"), field("detail"));
    println!("{what}: {} {} ({})", got.0, got.1, got.2);
    // The record re-judged offline gives the same verdicts.
    let validated = support::mcpres(&[Path::new("validate"), &out]);
    let text = support::output_text(&validated);
    let want = if doc["result"] == "FAIL" { 1 } else { 0 };
    assert_eq!(
        validated.status.code(),
        Some(want),
        "{what}: validate re-judges the record as it was written:\n{text}"
    );
    assert!(
        !text.contains("NOT_FROM_RECORD"),
        "{what}: no judged disagreement:\n{text}"
    );
    got
}

fn read_run(out: &Path) -> Result<Value, String> {
    let bytes = std::fs::read(out.join("run.json")).map_err(|e| format!("no run.json: {e}"))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("run.json does not parse: {e}"))
}

fn assert_verdict(got: &(String, String, String), verdict: &str, reason: Option<&str>) {
    assert_eq!(got.0, verdict, "{got:?}");
    if let Some(r) = reason {
        assert_eq!(got.1, r, "{got:?}");
    }
}

// ---- adversaries not credited, with their honest twins -------------------

/// The five stdio checks whose controls a subject may meet with silence
/// (a dropped line, no output, no answer to a notification).
const SILENCE_CONTROLS: [&str; 5] = [
    "released-message-framing",
    "startup-timeout",
    "silent-process",
    "concurrent-requests",
    "discovery-versus-legacy-initialization",
];

/// A subject that meets every line it does not serve with silence (a parse
/// error, a method it does not have, a request before `initialize`, a
/// batch): its silence to each control cannot be bound to the control's
/// defect, since it does not answer the non-syntax mutant (a request for a
/// method no server has) either: NOT_OBSERVED
/// (`MCP_RES_WRONG_REASON_MUTANT_SURVIVED`), never PASS. The mutant of
/// discovery-versus-legacy-initialization is `server/discover` sent as a
/// request, which this subject serves: that silence to the notification is
/// bound to the missing id, and the check passes, unless `server/discover`
/// goes unanswered as well (`discover-hang`, at 2025-11-25 where the
/// opening is `initialize`). The twin, which answers those requests with
/// errors, passes all five on both revisions (the real SDKs do too:
/// `bundles/profiles/`).
#[test]
fn a_subject_silent_to_everything_unusual_decides_no_silence_control() {
    let (first, rest) = SILENCE_CONTROLS.split_first().unwrap();
    let survived = "MCP_RES_WRONG_REASON_MUTANT_SURVIVED";
    let discovery = SILENCE_CONTROLS[4];
    let cases: [(&str, &[&str], &str); 5] = [
        (REV_2025, &["silent-to-the-unusual"], "PASS"),
        (
            REV_2025,
            &["silent-to-the-unusual", "discover-hang"],
            "NOT_OBSERVED",
        ),
        (REV_2026, &["silent-to-the-unusual"], "PASS"),
        (REV_2025, &[], "PASS"),
        (REV_2026, &[], "PASS"),
    ];
    for (rev, breaks, discovery_verdict) in cases {
        // With a check any subject decides, so that the run has one.
        let beside = format!("{},executable-identity", rest.join(","));
        run_beside(STDIO, rev, first, &beside, breaks);
        let mut got = last_verdicts();
        got.retain(|(id, _, _)| SILENCE_CONTROLS.contains(&id.as_str()));
        assert_eq!(got.len(), 5, "{got:?}");
        for (id, verdict, reason) in &got {
            let what = format!("{rev} {breaks:?} {id}: {got:?}");
            if breaks.is_empty() {
                assert_eq!(verdict, "PASS", "{what}");
            } else if id == discovery {
                assert_eq!(verdict, discovery_verdict, "{what}");
                if verdict == "NOT_OBSERVED" {
                    assert_eq!(reason, survived, "{what}");
                }
            } else {
                assert_eq!(
                    (verdict.as_str(), reason.as_str()),
                    ("NOT_OBSERVED", survived),
                    "{what}"
                );
            }
        }
    }
}

/// The protocol-revision controls a subject may meet with silence (a
/// request with a null id, one with an object id, a stray response): the
/// same adversary leaves each NOT_OBSERVED
/// (`MCP_RES_WRONG_REASON_MUTANT_SURVIVED`), since it does not answer the
/// mutant's request for a method no server has (interleaved's under the
/// stray response's id) either; the twin passes all three.
#[test]
fn a_subject_silent_to_everything_unusual_decides_no_silent_id_control() {
    let checks = [
        "request-identity-metadata",
        "result-identity-metadata",
        "interleaved-unrelated-requests",
    ];
    for rev in [REV_2025, REV_2026] {
        for breaks in [&["silent-to-the-unusual"][..], &[][..]] {
            let beside = format!(
                "{},{},supported-version-advertisement",
                checks[1], checks[2]
            );
            run_beside(REVISION, rev, checks[0], &beside, breaks);
            let mut got = last_verdicts();
            got.retain(|(id, _, _)| checks.contains(&id.as_str()));
            assert_eq!(got.len(), 3, "{got:?}");
            for (id, verdict, reason) in &got {
                let what = format!("{rev} {breaks:?} {id}: {got:?}");
                if breaks.is_empty() {
                    assert_eq!(verdict, "PASS", "{what}");
                } else {
                    assert_eq!(
                        (verdict.as_str(), reason.as_str()),
                        ("NOT_OBSERVED", "MCP_RES_WRONG_REASON_MUTANT_SURVIVED"),
                        "{what}"
                    );
                }
            }
        }
    }
}

/// A legacy-only subject evaluated at 2026-07-28 (it answers `server/discover`
/// with -32601): a check that needs an opened conversation was never
/// exercised (NOT_OBSERVED, `MCP_RES_REVISION_NOT_SPOKEN`), while the check
/// whose positive is the opening itself fails on the revision's MUST to
/// implement `server/discover`. The twin, which speaks 2026-07-28, passes both.
#[test]
fn a_legacy_subject_at_2026_is_not_failed_on_checks_it_never_reached() {
    let opening = "discovery-versus-legacy-initialization";
    let got = run_beside(
        STDIO,
        REV_2026,
        "shell-free-argument-boundaries",
        opening,
        &["legacy-only"],
    );
    assert_verdict(&got, "NOT_OBSERVED", Some("MCP_RES_REVISION_NOT_SPOKEN"));
    let refused = run_beside(
        STDIO,
        REV_2026,
        opening,
        "shell-free-argument-boundaries",
        &["legacy-only"],
    );
    assert_verdict(&refused, "FAIL", Some("MCP_RES_ERA_OPENING_REFUSED"));
    let twin = run_beside(
        STDIO,
        REV_2026,
        "shell-free-argument-boundaries",
        opening,
        &[],
    );
    assert_verdict(&twin, "PASS", Some("MCP_RES_ARGV_PASSED_VERBATIM"));
}

/// stdio-transport's refusal controls are bound to a valid twin too: a
/// subject that refuses the liveness request (`ping`) on the same process
/// is not credited with refusing the unknown method for the property's
/// reason; the twin that answers `ping` passes.
#[test]
fn a_stdio_refusal_whose_valid_twin_was_refused_is_not_credited() {
    let beside = "shell-free-argument-boundaries";
    let got = run_beside(
        STDIO,
        REV_2025,
        "stdout-protocol-purity",
        beside,
        &["refuse-ping"],
    );
    assert_verdict(&got, "NOT_OBSERVED", Some("MCP_RES_VALID_TWIN_REFUSED"));
    let twin = run_beside(STDIO, REV_2025, "stdout-protocol-purity", beside, &[]);
    assert_verdict(&twin, "PASS", Some("MCP_RES_STDOUT_PROTOCOL_ONLY"));
}

/// A subject whose SIGTERM handler takes longer than the runner's first
/// grace (a clean-up on a loaded machine) still ends on SIGTERM: the kernel's
/// masks say the signal is caught, not ignored, so the runner waits for it;
/// its twin that ignores SIGTERM (SIG_IGN, read from the same masks) FAILs
/// at once.
#[test]
fn a_subject_slow_to_act_on_sigterm_is_not_one_that_needed_sigkill() {
    for check in ["process-exit", "startup-timeout"] {
        let slow = run(STDIO, REV_2025, check, &["slow-stop"]);
        assert_verdict(&slow, "PASS", None);
    }
    let ignoring = run(
        STDIO,
        REV_2025,
        "process-exit",
        &["ignore-sigterm-after-open"],
    );
    assert_verdict(
        &ignoring,
        "FAIL",
        Some("MCP_RES_TERMINATION_NEEDED_SIGKILL"),
    );
}

#[test]
fn stdout_noise_from_the_fourth_request_on_fails_purity() {
    let got = run(
        STDIO,
        REV_2025,
        "stdout-protocol-purity",
        &["noisy-after-3"],
    );
    assert_verdict(&got, "FAIL", Some("MCP_RES_STDOUT_POLLUTED"));
    let twin = run(STDIO, REV_2025, "stdout-protocol-purity", &[]);
    assert_verdict(&twin, "PASS", Some("MCP_RES_STDOUT_PROTOCOL_ONLY"));
}

#[test]
fn a_subject_whose_every_tool_call_fails_is_not_credited_with_the_schema() {
    for rev in [REV_2025, REV_2026] {
        let got = run(
            REVISION,
            rev,
            "json-schema-dialect-identity",
            &["tools-fail"],
        );
        assert_verdict(&got, "NOT_OBSERVED", Some("MCP_RES_VALID_TWIN_REFUSED"));
        let twin = run(REVISION, rev, "json-schema-dialect-identity", &[]);
        assert_verdict(&twin, "PASS", Some("MCP_RES_SCHEMA_DIALECT_IDENTIFIED"));
    }
}

#[test]
fn a_legacy_subject_answering_discover_with_method_not_found_is_no_version_refusal() {
    let got = run(
        REVISION,
        REV_2025,
        "modern-legacy-auto-behavior",
        &["legacy-only"],
    );
    assert_verdict(&got, "NOT_OBSERVED", Some("MCP_RES_VALID_TWIN_REFUSED"));
    assert_ne!(got.1, "MCP_RES_ERA_PROBE_VERSION_REFUSED");
    let twin = run(REVISION, REV_2025, "modern-legacy-auto-behavior", &[]);
    assert_verdict(&twin, "PASS", Some("MCP_RES_ERA_PROBE_ANSWERED"));
}

#[test]
fn a_subject_answering_every_invalid_meta_with_the_version_code_is_not_credited() {
    // The non-syntax mutant (no client capabilities) gets -32022 too.
    let got = run(
        REVISION,
        REV_2026,
        "unsupported-version-failure",
        &["version-error-for-all"],
    );
    assert_verdict(
        &got,
        "NOT_OBSERVED",
        Some("MCP_RES_WRONG_REASON_MUTANT_SURVIVED"),
    );
    let twin = run(REVISION, REV_2026, "unsupported-version-failure", &[]);
    assert_verdict(&twin, "PASS", Some("MCP_RES_SUPPORTED_VERSION_SERVED"));
}

// ---- the record decides ----------------------------------------------------

#[test]
fn an_error_answered_control_and_a_silent_mutant_are_different_observations() {
    // The control (id null) is refused -32600; the mutant (a request for a
    // method no server has, this control's since silence may refuse a null
    // id) is answered -32601: a different observation, the mutant is killed,
    // the check observed.
    let got = run(
        REVISION,
        REV_2025,
        "request-identity-metadata",
        &["silent-parse-errors"],
    );
    assert_verdict(&got, "PASS", Some("MCP_RES_REQUEST_ID_ECHOED"));
    // A control refused -32602 (invalid params): `"params": 5` for
    // `server/discover` at 2026-07-28; its syntax-defective mutant is dropped
    // without an answer.
    let got = run(
        REVISION,
        REV_2026,
        "server-discover",
        &["silent-parse-errors"],
    );
    assert_verdict(&got, "PASS", Some("MCP_RES_DISCOVER_COMPLETE"));
}

#[test]
fn a_tool_whose_required_argument_has_a_type_list_is_probed() {
    let got = run(
        REVISION,
        REV_2026,
        "json-schema-dialect-identity",
        &["union-tools-only"],
    );
    assert_verdict(&got, "PASS", Some("MCP_RES_SCHEMA_DIALECT_IDENTIFIED"));
}

// ---- what the specification allows is never a FAIL -------------------------

#[test]
fn initialize_refused_with_32022_after_discover_is_no_failed_fallback() {
    let got = run(
        REVISION,
        REV_2025,
        "modern-legacy-auto-behavior",
        &["discover-then-no-initialize"],
    );
    assert_verdict(&got, "PASS", Some("MCP_RES_ERA_PROBE_ANSWERED"));
}

#[test]
fn a_second_initialize_answered_is_left_open() {
    for rev in [REV_2025, REV_2026] {
        let got = run(
            REVISION,
            rev,
            "stdio-backward-compatibility",
            &["reinit-accepted"],
        );
        assert_verdict(&got, "NOT_OBSERVED", Some("MCP_RES_BEHAVIOUR_LEFT_OPEN"));
    }
}

#[test]
fn a_request_before_initialize_answered_is_left_open() {
    let got = run(
        REVISION,
        REV_2025,
        "no-connection-as-conversation",
        &["no-init-required"],
    );
    assert_verdict(&got, "NOT_OBSERVED", Some("MCP_RES_BEHAVIOUR_LEFT_OPEN"));
    let got = run(
        STDIO,
        REV_2025,
        "no-process-as-conversation",
        &["no-init-required"],
    );
    assert_verdict(&got, "NOT_OBSERVED", Some("MCP_RES_BEHAVIOUR_LEFT_OPEN"));
}

#[test]
fn a_served_16_mib_line_is_left_open() {
    for rev in [REV_2025, REV_2026] {
        let got = run(STDIO, rev, "oversized-line", &["unbounded-lines"]);
        assert_verdict(&got, "NOT_OBSERVED", Some("MCP_RES_BEHAVIOUR_LEFT_OPEN"));
    }
}

#[test]
fn invalid_utf8_inside_meta_served_is_left_open() {
    for rev in [REV_2025, REV_2026] {
        let got = run(STDIO, rev, "malformed-output", &["accept-invalid-utf8"]);
        assert_verdict(&got, "NOT_OBSERVED", Some("MCP_RES_BEHAVIOUR_LEFT_OPEN"));
    }
}

#[test]
fn an_ignored_sigint_is_left_open() {
    for rev in [REV_2025, REV_2026] {
        let got = run(STDIO, rev, "interruption", &["ignore-sigint"]);
        assert_verdict(&got, "NOT_OBSERVED", Some("MCP_RES_BEHAVIOUR_LEFT_OPEN"));
    }
}

/// A subject that takes 3 s before it reads its first line, with an answer
/// bound of 1.5 s and the default start-up bound (10 s): every first answer
/// of a fresh process is judged against the start-up bound, so the checks
/// whose request is the first line a process gets pass as they do for the
/// quick twin (`tests/profile_checks.rs`), never OPEN_FAILED, SUBJECT_EXITED
/// or a start-up timeout.
#[test]
fn a_subject_slower_to_start_than_the_answer_bound_is_judged_on_the_start_up_bound() {
    let runner = ["--answer-timeout-ms", "1500"];
    for rev in [REV_2025, REV_2026] {
        for (profile, check, beside) in [
            (STDIO, "startup-timeout", "no-process-as-conversation"),
            (STDIO, "no-process-as-conversation", "silent-process"),
            (
                REVISION,
                "no-connection-as-conversation",
                "explicit-protocol-revision",
            ),
        ] {
            let got = run_with(profile, rev, check, beside, &["slow-start"], &runner);
            assert_verdict(&got, "PASS", None);
        }
    }
}
