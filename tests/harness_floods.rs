//! Subjects that flood the harness (issue 16, item 3): endless two-byte lines
//! (`yes`), one endless line (`cat /dev/zero`), endless stderr, an endless
//! HTTP body and an endless event stream, plus subjects that swap the
//! injection log for a symlink, a hard link or a huge file. Each run must end
//! on its own, record no more than the documented per-session limits, remove
//! its scratch directory, and write a bundle that is a valid record and not
//! PASS. The subjects are small scripts under tests/subjects/floods/ and
//! tests/subjects/liars/.
#![cfg(feature = "server")]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use mcpres::produce::harness::record::{INPUT_LIMIT_BYTES, SESSION_FRAME_LIMIT, STDERR_KEEP_BYTES};
use serde_json::Value;

use support::*;

/// Hard limit on one `mcpres run`: only keeps a hung run from hanging the
/// suite (the harness's own budgets end every run here well before it).
const WATCHDOG: Duration = Duration::from_secs(240);

fn subject(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/subjects")
        .join(path)
}

/// One finished run: its output, its bundle, its private TMPDIR.
struct Flood {
    tmp: tempfile::TempDir,
    out: Output,
    dir: PathBuf,
}

impl Flood {
    /// `mcpres run ARGS -o DIR -- SUBJECT...` with TMPDIR set to a private
    /// directory (where the harness makes its scratch directory), killed if
    /// it outlives [`WATCHDOG`].
    fn run(args: &[&str], subject: &[&str]) -> Flood {
        let tmp = tempfile::tempdir().unwrap();
        let scratch_root = tmp.path().join("tmp");
        std::fs::create_dir(&scratch_root).unwrap();
        let dir = tmp.path().join("bundle");
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", dir.to_str().unwrap(), "--"]);
        all.extend_from_slice(subject);
        let child = command()
            .args(&all)
            .env("TMPDIR", &scratch_root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcpres");
        let out = output_within(child, WATCHDOG, &format!("mcpres {all:?}"));
        Flood { tmp, out, dir }
    }

    fn context(&self) -> String {
        output_text(&self.out)
    }

    /// What every flood must get: exit 1 (a failing result, not unusable
    /// input), a statement that is not PASS, no scratch directory left,
    /// every process group gone (the cleanup report passed), and
    /// a bundle the validator reads as a sound record: valid, or invalid only
    /// because the flooding subject never let a negative control or a
    /// JSON-RPC exchange happen (vacuous controls, unobserved wire surface).
    fn require_bounded_failure(&self) {
        assert_eq!(self.out.status.code(), Some(1), "{}", self.context());
        let statement = read_json(&self.dir.join("conformance-statement.json"));
        assert_eq!(statement["result"], "FAIL", "{}", self.context());
        let left: Vec<_> = std::fs::read_dir(self.tmp.path().join("tmp"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "scratch left behind: {left:?}");
        let cleanup = read_json(&self.dir.join("raw/cleanup-report.json"));
        assert_eq!(cleanup["passed"], true, "{cleanup}");
        let (_, report) = load(&self.dir);
        let codes: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
        assert!(
            codes.iter().all(|c| [
                "MCP_RES_VACUOUS_NEGATIVE_CONTROL",
                "MCP_RES_REQUIRED_SURFACE_UNOBSERVED"
            ]
            .contains(c)),
            "findings {codes:?}\n{}",
            self.context()
        );
        let validate = mcpres(&["validate", self.dir.to_str().unwrap()]);
        assert!(
            matches!(validate.status.code(), Some(0 | 1)),
            "{}",
            output_text(&validate)
        );
    }

    /// Every raw file of the bundle whose name ends with `suffix`.
    fn raw(&self, suffix: &str) -> Vec<PathBuf> {
        walk(&self.dir)
            .into_iter()
            .filter(|p| p.to_string_lossy().ends_with(suffix))
            .collect()
    }

    /// Every line of every trial's `name` (JSON Lines).
    fn lines(&self, name: &str) -> Vec<Value> {
        self.raw(name)
            .iter()
            .flat_map(|p| {
                text(&std::fs::read(p).unwrap())
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect::<Vec<Value>>()
            })
            .collect()
    }

    /// The `input-limit-exceeded` lifecycle events: `(session, limit)`.
    fn limits_hit(&self) -> Vec<(String, String)> {
        self.lines("lifecycle.jsonl")
            .into_iter()
            .filter(|e| e["event"] == "input-limit-exceeded")
            .map(|e| {
                (
                    e["session"].as_str().unwrap().to_string(),
                    e["limit"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// The most frames from the subject any one session logged.
    fn most_frames_in_a_session(&self) -> usize {
        let mut per: std::collections::BTreeMap<String, usize> = Default::default();
        for m in self.lines("messages.jsonl") {
            if m["direction"] == "server-to-client" {
                *per.entry(m["session"].as_str().unwrap().to_string())
                    .or_default() += 1;
            }
        }
        per.into_values().max().unwrap_or(0)
    }

    /// Every oracle's stop reason (clean and negative controls).
    fn stop_reasons(&self) -> Vec<String> {
        self.raw(".oracle.json")
            .iter()
            .map(|p| {
                read_json(p)["stopReason"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    }

    fn largest(&self, suffix: &str) -> u64 {
        self.raw(suffix)
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .max()
            .unwrap_or(0)
    }
}

fn sh(script: &str) -> [String; 2] {
    [
        "/bin/sh".to_string(),
        subject(script).to_str().unwrap().to_string(),
    ]
}

#[test]
fn a_yes_subject_stops_at_the_frame_limit() {
    let s = sh("floods/yes_stdout.sh");
    let r = Flood::run(&["--scenario", "generic", "--trials", "1"], &[&s[0], &s[1]]);
    r.require_bounded_failure();
    let hits = r.limits_hit();
    assert!(
        !hits.is_empty() && hits.iter().all(|(_, limit)| limit == "frames"),
        "{hits:?}\n{}",
        r.context()
    );
    assert!(r.most_frames_in_a_session() <= SESSION_FRAME_LIMIT);
    assert!(r.largest(".stdout.bin") <= INPUT_LIMIT_BYTES as u64);
    assert!(
        r.stop_reasons()
            .contains(&"INPUT_LIMIT_EXCEEDED".to_string()),
        "{:?}",
        r.stop_reasons()
    );
}

#[test]
fn a_flood_that_ignores_sigpipe_is_killed_at_the_limit() {
    let script = subject("floods/stubborn_stdout.py");
    let r = Flood::run(
        &["--scenario", "generic", "--trials", "1"],
        &["python3", script.to_str().unwrap()],
    );
    r.require_bounded_failure();
    assert!(r.most_frames_in_a_session() <= SESSION_FRAME_LIMIT);
    let kills: Vec<Value> = r
        .lines("lifecycle.jsonl")
        .into_iter()
        .filter(|e| e["event"] == "group-sigkill" && e["reason"] == "input limit exceeded")
        .collect();
    assert!(
        kills.iter().any(|e| e["result"] == "signalled"),
        "no process group killed when the limit was hit: {kills:?}\n{}",
        r.context()
    );
}

#[test]
fn an_endless_line_stops_at_the_input_limit() {
    let s = sh("floods/zero_stdout.sh");
    let r = Flood::run(&["--scenario", "generic", "--trials", "1"], &[&s[0], &s[1]]);
    r.require_bounded_failure();
    let hits = r.limits_hit();
    assert!(
        !hits.is_empty() && hits.iter().all(|(_, limit)| limit == "bytes"),
        "{hits:?}"
    );
    assert_eq!(r.largest(".stdout.bin"), INPUT_LIMIT_BYTES as u64);
    // No frame was ever complete.
    assert_eq!(r.most_frames_in_a_session(), 0);
    assert!(
        r.stop_reasons()
            .contains(&"INPUT_LIMIT_EXCEEDED".to_string()),
        "{:?}",
        r.stop_reasons()
    );
}

#[test]
fn endless_stderr_is_kept_up_to_its_limit() {
    let s = sh("floods/endless_stderr.sh");
    let r = Flood::run(&["--scenario", "generic", "--trials", "1"], &[&s[0], &s[1]]);
    r.require_bounded_failure();
    assert!(r.largest(".stderr.bin") <= STDERR_KEEP_BYTES as u64);
    let truncated = r
        .lines("lifecycle.jsonl")
        .into_iter()
        .filter(|e| e["event"] == "stderr-truncated")
        .count();
    assert!(truncated > 0, "no stderr-truncated event\n{}", r.context());
}

fn http_flood(mode: &str) -> Flood {
    let port = free_port().to_string();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let script = subject("floods/http_flood.py");
    Flood::run(
        &["--scenario", "generic", "--trials", "1", "--http", &url],
        &["python3", script.to_str().unwrap(), &port, mode],
    )
}

#[test]
fn an_endless_http_body_stops_at_the_input_limit() {
    let r = http_flood("body");
    r.require_bounded_failure();
    let hits = r.limits_hit();
    assert!(
        !hits.is_empty() && hits.iter().all(|(_, limit)| limit == "bytes"),
        "{hits:?}"
    );
    assert!(r.largest(".http-responses.bin") <= INPUT_LIMIT_BYTES as u64);
}

#[test]
fn an_endless_event_stream_stops_at_the_frame_limit() {
    let r = http_flood("events");
    r.require_bounded_failure();
    let hits = r.limits_hit();
    assert!(
        !hits.is_empty() && hits.iter().all(|(_, limit)| limit == "frames"),
        "{hits:?}"
    );
    assert!(r.most_frames_in_a_session() <= SESSION_FRAME_LIMIT);
    assert!(r.largest(".http-responses.bin") <= INPUT_LIMIT_BYTES as u64);
}

/// `log_swap.py MODE TARGET` under the reference-faults scenario, whose
/// negative controls hand the subject `--injection-log PATH`.
fn log_swap(mode: &str, target: &Path) -> Flood {
    let script = subject("liars/log_swap.py");
    Flood::run(
        &["--scenario", "reference-faults", "--trials", "1"],
        &[
            "python3",
            script.to_str().unwrap(),
            mode,
            target.to_str().unwrap(),
        ],
    )
}

/// A file outside the run that names a fault as injected, with a marker
/// that must not reach the bundle.
fn decoy(dir: &Path) -> (PathBuf, &'static str) {
    const MARK: &str = "decoy-file-outside-the-run-5f1c";
    let path = dir.join("decoy.jsonl");
    let mut text = String::new();
    for fault in [
        "protocol-error",
        "malformed-message",
        "timeout",
        "schema-violation",
    ] {
        text += &format!(
            "{{\"schema\":\"mcpres.injection-log/1\",\"event\":\"injection\",\"fault\":\"{fault}\",\"note\":\"{MARK}\"}}\n"
        );
    }
    std::fs::write(&path, text).unwrap();
    (path, MARK)
}

fn assert_not_in_bundle(r: &Flood, mark: &str) {
    for p in walk(&r.dir) {
        let bytes = std::fs::read(&p).unwrap();
        assert!(
            !text(&bytes).contains(mark),
            "{} holds the decoy's content: the injection log was followed",
            p.display()
        );
    }
}

#[test]
fn a_symlinked_injection_log_is_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    let (target, mark) = decoy(outside.path());
    let r = log_swap("symlink", &target);
    r.require_bounded_failure();
    assert_not_in_bundle(&r, mark);
    assert!(r.raw(".injection.jsonl").is_empty());
    assert!(target.exists(), "the decoy was removed");
}

#[test]
fn a_hard_linked_injection_log_is_not_read() {
    let outside = tempfile::tempdir().unwrap();
    let (target, mark) = decoy(outside.path());
    let r = log_swap("hardlink", &target);
    r.require_bounded_failure();
    assert_not_in_bundle(&r, mark);
}

#[test]
fn a_huge_injection_log_is_cut_at_its_limit() {
    let outside = tempfile::tempdir().unwrap();
    let r = log_swap("huge", &outside.path().join("unused"));
    r.require_bounded_failure();
    let logs = r.raw(".injection.jsonl");
    assert!(!logs.is_empty(), "no injection log kept\n{}", r.context());
    for p in logs {
        let bytes = std::fs::read(&p).unwrap();
        assert!(
            bytes.len() as u64 <= mcpres::produce::harness::files::INJECTION_LOG_LIMIT,
            "{}: {} bytes",
            p.display(),
            bytes.len()
        );
        assert!(bytes.ends_with(b"\n"), "a cut line was kept");
    }
}
