//! `mcpres profile run` against the reference server over real pipes: the
//! evaluation directory it writes validates (with mcpres, and with the
//! reference Python validator when `MCPRES_REFERENCE_PY_VALIDATOR` names it),
//! packs to the evaluation's bytes, claims only what was observed, and an
//! interrupted run leaves neither processes nor files.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

const WATCHDOG: Duration = Duration::from_secs(240);

fn run_profile(profile: &str, revision: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    let exe = support::exe();
    let child = support::command()
        .args(["profile", "run", profile, "--revision", revision, "-o"])
        .arg(out)
        .args(extra)
        .arg("--")
        .arg(&exe)
        .arg("serve")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcpres profile run");
    support::output_within(
        child,
        WATCHDOG,
        &format!("profile run {profile} {revision}"),
    )
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

/// The reference Python validator's `profile` mode, when the kit is at hand.
fn reference_python(evaluation: &Path) -> Option<Value> {
    let script = std::env::var_os("MCPRES_REFERENCE_PY_VALIDATOR").map(PathBuf::from)?;
    let corpus = support::reference_corpus_dir()?.join("v0.2.0");
    let python = std::env::var("MCPRES_REFERENCE_PY").unwrap_or_else(|_| "python3".into());
    let out = std::process::Command::new(python)
        .arg(script)
        .arg("profile")
        .arg(evaluation)
        .arg("--schemas")
        .arg(corpus.join("schemas"))
        .arg("--profiles")
        .arg(corpus.join("profiles"))
        .output()
        .expect("run the reference Python validator");
    Some(serde_json::from_slice(&out.stdout).expect("the reference validator prints JSON"))
}

/// Validate, pack and (when available) cross-check one evaluation directory.
fn check_directory(dir: &Path, expect_valid: bool) {
    let v = support::mcpres(&[Path::new("validate"), dir]);
    assert_eq!(
        v.status.code(),
        Some(if expect_valid { 0 } else { 1 }),
        "mcpres validate {}:\n{}",
        dir.display(),
        support::output_text(&v)
    );
    assert!(
        !support::output_text(&v).contains("NOT_FROM_RECORD"),
        "mcpres validate {}: a judged disagreement:\n{}",
        dir.display(),
        support::output_text(&v)
    );
    let packed = dir.with_extension("packed.json");
    let p = support::mcpres(&[Path::new("pack"), dir, Path::new("-o"), packed.as_path()]);
    assert_eq!(p.status.code(), Some(0), "{}", support::output_text(&p));
    assert_eq!(
        std::fs::read(&packed).unwrap(),
        std::fs::read(dir.join("evaluation.json")).unwrap(),
        "pack writes the evaluation's own bytes"
    );
    match reference_python(&dir.join("evaluation.json")) {
        Some(r) => assert_eq!(
            r["valid"],
            Value::Bool(expect_valid),
            "the reference Python validator on {}: {r}",
            dir.display()
        ),
        None => eprintln!(
            "reference Python validator not configured (MCPRES_REFERENCE_PY_VALIDATOR): cross-check skipped"
        ),
    }
}

#[test]
fn the_reference_server_passes_the_stdio_transport_profile_as_far_as_it_can_be_observed() {
    let tmp = tempfile::tempdir().unwrap();
    for revision in ["2025-11-25", "2026-07-28"] {
        let out = tmp.path().join(format!("stdio-{revision}"));
        let o = run_profile("stdio-transport", revision, &out, &[]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}\ncleanup: {}",
            support::output_text(&o),
            std::fs::read_to_string(out.join("artifacts/cleanup.json")).unwrap_or_default()
        );
        let run = support::read_json(&out.join("run.json"));
        let evaluation = support::read_json(&out.join("evaluation.json"));
        for (id, verdict, reason) in verdicts(&run) {
            // The reference server starts no child: that check cannot be observed.
            let expected = if id == "child-tree-cleanup" {
                "NOT_OBSERVED"
            } else {
                "PASS"
            };
            assert_eq!(verdict, expected, "{revision} {id}: {reason}");
        }
        assert_eq!(run["result"], "INCOMPLETE");
        // Not observed is never claimed: a bounded claim of the other 16.
        assert_eq!(evaluation["scope"]["claim"], "BOUNDED_CHECK_SET");
        let claimed = evaluation["scope"]["claimedCheckIds"].as_array().unwrap();
        assert_eq!(claimed.len(), 16);
        assert!(!claimed.contains(&Value::from("child-tree-cleanup")));
        assert_eq!(evaluation["result"], "PASS");
        assert_eq!(evaluation["cleanup"]["observed"], true);
        assert_eq!(evaluation["profile"]["protocolRevision"], revision);
        // Each observation cites its own artifact, by the digest of its bytes.
        let mut cited: Vec<&str> = evaluation["checks"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| {
                [
                    &c["positive"]["artifactSha256"],
                    &c["negativeControl"]["artifactSha256"],
                ]
            })
            .map(|v| v.as_str().unwrap())
            .collect();
        let n = cited.len();
        cited.sort_unstable();
        cited.dedup();
        assert_eq!(cited.len(), n, "no two observations share an artifact");
        assert!(!String::from_utf8_lossy(&o.stdout).is_empty());
        check_directory(&out, true);
    }
}

#[test]
fn the_reference_server_on_the_protocol_revision_profile() {
    let tmp = tempfile::tempdir().unwrap();
    for revision in ["2025-11-25", "2026-07-28"] {
        let out = tmp.path().join(format!("revision-{revision}"));
        let o = run_profile("protocol-revision", revision, &out, &["--json"]);
        let run = support::read_json(&out.join("run.json"));
        let failed: Vec<_> = verdicts(&run)
            .into_iter()
            .filter(|(_, v, _)| v == "FAIL")
            .collect();
        assert!(failed.is_empty(), "{revision}: {failed:?}");
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}\ncleanup: {}",
            support::output_text(&o),
            std::fs::read_to_string(out.join("artifacts/cleanup.json")).unwrap_or_default()
        );
        // --json: one event per check and a closing run-finished event.
        let events: Vec<Value> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON Lines"))
            .collect();
        let checks = run["checks"].as_array().unwrap().len();
        assert_eq!(
            events
                .iter()
                .filter(|e| e["event"] == "check-finished")
                .count(),
            checks
        );
        assert_eq!(events.last().unwrap()["event"], "run-finished");
        check_directory(&out, true);
    }
}

#[test]
fn an_interrupted_run_leaves_no_process_and_no_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("interrupted");
    // A seed no other test uses marks this run's subjects.
    let seed = format!("{}", 700_000_000 + std::process::id());
    let exe = support::exe();
    let mut child = support::command()
        .args(["profile", "run", "stdio-transport", "--json", "-o"])
        .arg(&out)
        .arg("--")
        .arg(&exe)
        .args(["serve", "--seed", &seed])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the first subject is running.
    let until = Instant::now() + Duration::from_secs(60);
    while support::marked_servers(&seed).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        !support::marked_servers(&seed).is_empty(),
        "no subject started"
    );
    std::thread::sleep(Duration::from_millis(300));
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < until, "the run did not stop after SIGINT");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(130));
    assert!(!out.exists(), "the half-written directory is removed");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        support::marked_servers(&seed),
        Vec::<u32>::new(),
        "subjects left running"
    );
}

#[test]
fn bad_requests_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = support::exe();
    let exe = exe.to_str().unwrap();
    let out = tmp.path().join("x");
    let out = out.to_str().unwrap();
    for (args, says) in [
        (
            vec![
                "profile",
                "run",
                "no-such-profile",
                "-o",
                out,
                "--",
                exe,
                "serve",
            ],
            "no profile",
        ),
        (
            vec![
                "profile",
                "run",
                "oauth-boundary",
                "-o",
                out,
                "--",
                exe,
                "serve",
            ],
            "can run",
        ),
        (
            vec![
                "profile",
                "run",
                "stdio-transport",
                "--checks",
                "no-such-check",
                "-o",
                out,
                "--",
                exe,
                "serve",
            ],
            "has no check",
        ),
        (
            vec![
                "profile",
                "run",
                "protocol-revision",
                "--checks",
                "server-discover",
                "-o",
                out,
                "--",
                exe,
                "serve",
            ],
            "does not apply at revision 2025-11-25",
        ),
        (
            vec![
                "profile",
                "run",
                "stdio-transport",
                "-o",
                out,
                "--",
                "/nonexistent/mcpres-subject",
            ],
            "not an existing file",
        ),
    ] {
        let o = support::mcpres(&args);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            support::output_text(&o)
        );
        assert!(
            support::text(&o.stderr).contains(says),
            "{args:?}: {}",
            support::output_text(&o)
        );
        assert!(!Path::new(out).exists());
    }
    // An existing output is never touched.
    std::fs::create_dir(out).unwrap();
    std::fs::write(Path::new(out).join("keep"), "mine").unwrap();
    let o = support::mcpres(&[
        "profiles",
        "run",
        "stdio-transport",
        "-o",
        out,
        "--",
        exe,
        "serve",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", support::output_text(&o));
    assert!(support::text(&o.stderr).contains("never overwrites"));
    assert_eq!(
        std::fs::read_to_string(Path::new(out).join("keep")).unwrap(),
        "mine"
    );
}
