//! A subject's life and time in `mcpres profile run` (mcp-res/stdio-transport/v1):
//! its identity is digested before and after every check, it is signalled at
//! more than one point of its life, a death is never a bounded refusal, the
//! windows come from its own measured pace, and a process counts as left
//! behind only when it descends from that check's own subject.
//!
//! Each adversary (a `--break` of `tests/subjects/profile_subject.py`) has an
//! honest twin that passes. No assertion is about how long anything took.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;

const STDIO: &str = "mcp-res/stdio-transport/v1";
const WATCHDOG: Duration = Duration::from_secs(300);

/// The runs watch signals and silences: they take turns.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn python3() -> &'static str {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 on PATH");
        let path = support::text(&out.stdout).trim().to_string();
        assert!(out.status.success() && Path::new(&path).is_absolute());
        path
    })
}

fn subject_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/subjects/profile_subject.py")
}

/// What one run left.
struct Ran {
    code: Option<i32>,
    out: PathBuf,
    run: Value,
    text: String,
}

impl Ran {
    fn check(&self, id: &str) -> &Value {
        self.run["checks"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["id"] == id))
            .unwrap_or_else(|| panic!("run.json has check {id}: {}", self.text))
    }

    fn verdict(&self, id: &str) -> (String, String) {
        let c = self.check(id);
        (
            c["verdict"].as_str().unwrap_or_default().to_string(),
            c["reason"].as_str().unwrap_or_default().to_string(),
        )
    }

    fn artifact(&self, rel: &str) -> Value {
        support::read_json(&self.out.join(rel))
    }
}

/// `mcpres profile run` of `checks` against `script` with `subject_args`.
fn run(work: &Path, script: &Path, checks: &str, subject_args: &[&str], extra: &[&str]) -> Ran {
    run_profile(STDIO, work, script, checks, subject_args, extra)
}

fn run_profile(
    profile: &str,
    work: &Path,
    script: &Path,
    checks: &str,
    subject_args: &[&str],
    extra: &[&str],
) -> Ran {
    let out = tempfile::tempdir_in(work).unwrap().keep().join("out");
    let child = support::command()
        .args(["profile", "run", profile, "-o"])
        .arg(&out)
        .args(["--revision", "2025-11-25", "--checks", checks])
        .args(extra)
        .arg("--")
        .arg(python3())
        .arg(script)
        .args(subject_args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcpres profile run");
    let output = support::output_within(child, WATCHDOG, "mcpres profile run");
    let text = support::output_text(&output);
    let run = std::fs::read(out.join("run.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| panic!("no run.json: {text}"));
    Ran {
        code: output.status.code(),
        out,
        run,
        text,
    }
}

fn validate(dir: &Path) -> (Option<i32>, String) {
    let out = support::mcpres(&[std::ffi::OsStr::new("validate"), dir.as_os_str()]);
    (out.status.code(), support::output_text(&out))
}

#[test]
fn a_subject_that_rewrites_its_own_file_fails_the_run_and_its_twin_passes() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let work = tempfile::tempdir().unwrap();
    // A copy: the adversary rewrites the file it runs from.
    let script = work.path().join("subject.py");
    std::fs::copy(subject_path(), &script).unwrap();
    let checks = "silent-process,process-exit";

    // In the sandbox, the rewrite lands in the stage: the file on the host
    // stays as it was (the identity holds), and the write is named as a
    // file the subject changed and left, so cleanup is not observed.
    let original = std::fs::read(&script).unwrap();
    let boxed = run(
        work.path(),
        &script,
        checks,
        &["--break", "rewrite-self"],
        &["--sandbox", "require"],
    );
    assert_eq!(
        std::fs::read(&script).unwrap(),
        original,
        "the host file changed"
    );
    assert_eq!(boxed.code, Some(1), "{}", boxed.text);
    assert_eq!(boxed.run["result"], "FAIL", "{}", boxed.text);
    assert_eq!(boxed.run["identity"]["changed"], false, "{}", boxed.run);
    let cleanup = boxed.artifact("artifacts/cleanup.json");
    assert_eq!(cleanup["observed"], false, "{cleanup}");
    let named = cleanup["probesThatLeftFiles"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l.as_str().is_some_and(|l| l.contains("subject.py")));
    assert!(named, "{cleanup}");
    // Required cleanup was not observed: the standard's profile rule.
    let (code, text) = validate(&boxed.out);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("MCP_RES_PROFILE_CLEANUP_INCOMPLETE"),
        "{text}"
    );

    // Without it, the rewrite reaches the file and the identity changes.
    let bad = run(
        work.path(),
        &script,
        checks,
        &["--break", "rewrite-self"],
        &["--sandbox", "off"],
    );
    assert_eq!(bad.code, Some(1), "{}", bad.text);
    assert_eq!(bad.run["result"], "FAIL", "{}", bad.text);
    assert_eq!(bad.run["identity"]["changed"], true, "{}", bad.run);
    assert_eq!(bad.run["identity"]["reason"], "MCP_RES_SUBJECT_CHANGED");
    let identity = bad.artifact("artifacts/identity.json");
    assert_eq!(identity["changed"], true, "{identity}");
    assert!(bad.text.contains("MCP_RES_SUBJECT_CHANGED"), "{}", bad.text);
    // The directory is consistent, and the validator re-derives the FAIL
    // from the stored digests: a run.json claiming otherwise is caught.
    let (code, text) = validate(&bad.out);
    assert_eq!(code, Some(0), "{text}");
    let mut forged = bad.run.clone();
    forged["result"] = "PASS".into();
    forged["identity"]["changed"] = false.into();
    forged["identity"]["reason"] = Value::Null;
    std::fs::write(
        bad.out.join("run.json"),
        serde_json::to_vec(&forged).unwrap(),
    )
    .unwrap();
    let (code, text) = validate(&bad.out);
    assert_eq!(code, Some(1), "a forged identity record is caught: {text}");
    assert!(text.contains("identity"), "{text}");

    // The twin: a fresh copy, not rewritten (in the sandbox, the default).
    std::fs::write(&script, &original).unwrap();
    let good = run(work.path(), &script, checks, &[], &[]);
    assert_eq!(good.run["identity"]["changed"], false, "{}", good.text);
    assert_eq!(good.run["result"], "PASS", "{}", good.text);
    assert_eq!(good.code, Some(0), "{}", good.text);
    // The pace the windows came from is on record.
    let preflight = good.artifact("artifacts/preflight.json");
    assert!(
        preflight["timing"]["startupMs"].is_u64(),
        "{}",
        preflight["timing"]
    );
    assert!(preflight["timing"]["windowsMs"]["fresh"].is_u64());
    assert!(preflight["timing"]["windowsMs"]["settle"].is_u64());
}

#[test]
fn sigterm_is_sent_again_once_the_subject_has_served_and_is_idle() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let work = tempfile::tempdir().unwrap();
    let script = subject_path();
    let bad = run(
        work.path(),
        &script,
        "process-exit",
        &["--break", "ignore-sigterm-after-requests"],
        &[],
    );
    assert_eq!(
        bad.verdict("process-exit"),
        ("FAIL".into(), "MCP_RES_TERMINATION_NEEDED_SIGKILL".into()),
        "{}",
        bad.text
    );
    let good = run(work.path(), &script, "process-exit", &[], &[]);
    assert_eq!(good.verdict("process-exit").0, "PASS", "{}", good.text);
    // The subject that obeyed SIGTERM is recorded as ended by mcpres, not
    // as having exited by itself; the earlier probe (SIGTERM right after
    // opening) is kept beside it.
    let negative = good.artifact("artifacts/process-exit/negative.json");
    let t = &negative["transcript"];
    assert_eq!(t["end"]["endedBy"]["mcpres"], "SIGTERM", "{t}");
    assert_eq!(t["observation"]["signalled"], "idle after requests", "{t}");
    assert_eq!(
        t["earlierProbe"]["observation"]["signalled"], "after opening",
        "{t}"
    );
}

#[test]
fn sigint_goes_out_when_the_subject_is_idle() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let work = tempfile::tempdir().unwrap();
    let script = subject_path();
    // Honours SIGINT only while busy: signalled right after the opening it
    // would pass; signalled when idle it does not. Ignoring SIGINT is left
    // open by the specification (the stdio shutdown sequence is stdin close,
    // SIGTERM, SIGKILL), so the record gives no PASS and no FAIL.
    // A check that passes runs beside it, so that the run, whose only
    // other check is not observed, still writes its record.
    let bad = run(
        work.path(),
        &script,
        "interruption,stdout-protocol-purity",
        &["--break", "ignore-sigint-when-idle"],
        &[],
    );
    assert_eq!(
        bad.verdict("interruption"),
        ("NOT_OBSERVED".into(), "MCP_RES_BEHAVIOUR_LEFT_OPEN".into()),
        "{}",
        bad.text
    );
    let good = run(
        work.path(),
        &script,
        "interruption,stdout-protocol-purity",
        &[],
        &[],
    );
    assert_eq!(good.verdict("interruption").0, "PASS", "{}", good.text);
}

#[test]
fn a_death_on_an_oversized_line_is_not_a_bounded_refusal() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let work = tempfile::tempdir().unwrap();
    let script = subject_path();
    let bad = run(
        work.path(),
        &script,
        "oversized-line",
        &["--break", "crash-on-long-line"],
        &[],
    );
    assert_eq!(
        bad.verdict("oversized-line"),
        ("FAIL".into(), "MCP_RES_OVERSIZED_LINE_CRASHED".into()),
        "{}",
        bad.text
    );
    // Twins: refused with an error while serving, or a clean exit.
    let refuses = run(work.path(), &script, "oversized-line", &[], &[]);
    assert_eq!(
        refuses.verdict("oversized-line").0,
        "PASS",
        "{}",
        refuses.text
    );
    let closes = run(
        work.path(),
        &script,
        "oversized-line",
        &["--close-on-long-line"],
        &[],
    );
    assert_eq!(
        closes.verdict("oversized-line").0,
        "PASS",
        "{}",
        closes.text
    );
}

/// Checks run two at a time, each starting fresh subjects (with a child
/// each) while the other ends its own: no probe is blamed for a process
/// that is not its own subject's descendant.
#[test]
fn concurrent_checks_blame_no_other_checks_subject() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let work = tempfile::tempdir().unwrap();
    let script = subject_path();
    let checks = "stdout-protocol-purity,silent-process,partial-line,process-exit,concurrent-requests,startup-timeout,interruption,discovery-versus-legacy-initialization";
    let ran = run(
        work.path(),
        &script,
        checks,
        &["--with-child"],
        &["--jobs", "2"],
    );
    let cleanup = ran.artifact("artifacts/cleanup.json");
    assert_eq!(
        cleanup["probesThatLeftProcesses"],
        serde_json::json!([]),
        "{cleanup}"
    );
    assert_eq!(cleanup["adoptedUnattributed"], serde_json::json!([]));
    assert_eq!(cleanup["observed"], true, "{cleanup}");
}

/// A subject that never opens: the checks whose control needs an opened
/// subject record only their positive; they are NOT_OBSERVED with the
/// reason (never a panic of the runner, never an evaluation entry without
/// its negative control). The honest subject passes the same checks.
#[test]
fn a_subject_that_never_opens_leaves_a_missing_control_not_observed() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let work = tempfile::tempdir().unwrap();
    let mute = work.path().join("mute.py");
    std::fs::write(&mute, "import sys\nsys.exit(0)\n").unwrap();
    let checks = "capability-declaration,json-schema-dialect-identity,explicit-protocol-revision";
    let revision = "mcp-res/protocol-revision/v1";
    let bad = run_profile(revision, work.path(), &mute, checks, &[], &[]);
    assert!(!bad.text.contains("panicked"), "{}", bad.text);
    for id in ["capability-declaration", "json-schema-dialect-identity"] {
        assert_eq!(
            bad.verdict(id),
            ("NOT_OBSERVED".into(), "MCP_RES_NO_ANSWER".into()),
            "{}",
            bad.text
        );
        assert!(bad.check(id)["negative"].is_null());
    }
    // The evaluation claims only the check observed on both sides.
    let evaluation = support::read_json(&bad.out.join("evaluation.json"));
    assert_eq!(
        evaluation["scope"]["claimedCheckIds"],
        serde_json::json!(["explicit-protocol-revision"]),
        "{evaluation}"
    );
    let good = run_profile(revision, work.path(), &subject_path(), checks, &[], &[]);
    for id in [
        "capability-declaration",
        "json-schema-dialect-identity",
        "explicit-protocol-revision",
    ] {
        assert_eq!(good.verdict(id).0, "PASS", "{}", good.text);
    }
}

/// A start-up notice the subject writes on stderr late (only once it has
/// answered its first message, so after the settle window the checks derive
/// from its measured start-up, whatever the machine's load) is a
/// diagnostic, not output: the checks that read its silence, its
/// stdout and its stderr give it the same verdicts as its twin without the
/// notice.
#[test]
fn a_late_start_up_notice_on_stderr_changes_no_verdict() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let work = tempfile::tempdir().unwrap();
    let script = subject_path();
    let checks = "silent-process,stdout-protocol-purity,stderr-diagnostics,startup-timeout";
    let late = run(
        work.path(),
        &script,
        checks,
        &["--break", "late-stderr-notice"],
        &[],
    );
    let twin = run(work.path(), &script, checks, &[], &[]);
    for id in checks.split(',') {
        assert_eq!(
            late.verdict(id),
            twin.verdict(id),
            "{id}: {}\n---\n{}",
            late.text,
            twin.text
        );
        assert_eq!(twin.verdict(id).0, "PASS", "{id}: {}", twin.text);
    }
    // The notice is in the record (the subject's stderr), where the checks
    // that ran long enough to see it stored it.
    let seen = checks.split(',').any(|id| {
        ["positive", "negative"].iter().any(|role| {
            late.artifact(&format!("artifacts/{id}/{role}.json"))
                .to_string()
                .contains("a late start-up notice")
        })
    });
    assert!(seen, "{}", late.text);
    assert_eq!(validate(&late.out).0, Some(0));
}
