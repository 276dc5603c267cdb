//! The sandbox a subject runs in (spec/harness.md, "The sandbox"), through
//! the real binary and `tests/subjects/residue_server.py`: a subject that
//! leaves files in `/tmp` (not its `TMPDIR`) and under its home directory
//! gets no clean cleanup claim, the files are named (path, length, SHA-256)
//! and none of them reaches the host; its honest twin passes; an attempt to
//! reach an outside address is named (protocol, address, port) inside the
//! subject's own network namespace; a daemon the subject starts is held, named and killed through
//! its PID namespace; the process standing in for the subject ends as it
//! ends; and the fallback (`--sandbox off`) is labelled in the evidence.
//!
//! The runs that need the sandbox say `--sandbox require`: on a machine that
//! forbids namespaces they fail loudly instead of running unsandboxed (and,
//! for `--reach-out`, instead of trying a non-loopback address for real).
#![cfg(feature = "server")]

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use support::*;

const SERVER: &str = "tests/subjects/residue_server.py";

fn home() -> PathBuf {
    PathBuf::from(std::env::var("HOME").expect("HOME is set for the tests"))
}

/// `mcpres run --scenario generic --sandbox MODE -o out --env HOME=$HOME --
/// python3 SERVER extra...`.
fn run(out: &Path, mode: &str, extra: &[&str]) -> Output {
    let env_home = format!("HOME={}", home().display());
    let mut args = vec![
        "run",
        "--scenario",
        "generic",
        "--sandbox",
        mode,
        "--env",
        &env_home,
        "-o",
        out.to_str().unwrap(),
        "--",
        "python3",
        SERVER,
    ];
    args.extend_from_slice(extra);
    mcpres(&args)
}

fn sessions(out: &Path) -> Vec<Value> {
    let fs = read_json(&out.join("raw/filesystem-report.json"));
    assert_eq!(fs["sandbox"]["sandboxed"], true, "{fs}");
    fs["sandboxSessions"]["sessions"]
        .as_array()
        .expect("one record per session")
        .clone()
}

fn lifecycle_events(out: &Path, event: &str) -> Vec<Value> {
    let text =
        String::from_utf8(std::fs::read(out.join("raw/trial-1/lifecycle.jsonl")).unwrap()).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == event)
        .collect()
}

/// Removes the named host files if a broken sandbox let them through, so a
/// failing test leaves nothing either.
struct HostFiles(Vec<PathBuf>);

impl Drop for HostFiles {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[test]
fn files_left_in_tmp_and_at_home_are_named_and_none_reaches_the_host() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let marker = format!("mcpres-sandbox-test-{}", std::process::id());
    let tmp_name = format!("{marker}.tmp");
    let home_name = format!(".{marker}.home");
    let host = HostFiles(vec![
        Path::new("/tmp").join(&tmp_name),
        home().join(&home_name),
    ]);
    let o = run(
        &out,
        "require",
        &["--tmp-file", &tmp_name, "--home-file", &home_name],
    );
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    for p in &host.0 {
        assert!(!p.exists(), "{} reached the host", p.display());
    }
    let (doc, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
    assert_eq!(doc["statement"]["result"], "FAIL");
    let cleanup = read_json(&out.join("raw/cleanup-report.json"));
    assert_eq!(cleanup["passed"], false);
    assert_eq!(cleanup["reasonCode"], "RESIDUE_SUBJECT_FILES");
    let fs = read_json(&out.join("raw/filesystem-report.json"));
    assert_eq!(fs["subjectWroteFiles"], true);
    // Every session wrote both files (on initialize); each is named with
    // its length and digest, never its content.
    let all = sessions(&out);
    assert!(!all.is_empty());
    for s in &all {
        let left = s["entriesLeft"].as_array().unwrap();
        let find = |needle: &str| {
            left.iter()
                .find(|e| e["path"].as_str().is_some_and(|p| p.ends_with(needle)))
                .unwrap_or_else(|| panic!("{needle} not named in {s}"))
        };
        for (name, content) in [
            (
                tmp_name.as_str(),
                &b"left in /tmp by residue_server.py\n"[..],
            ),
            (
                home_name.as_str(),
                &b"left at home by residue_server.py\n"[..],
            ),
        ] {
            let e = find(name);
            assert_eq!(e["kind"], "file");
            assert_eq!(e["change"], "created");
            assert_eq!(e["bytes"], content.len());
            assert_eq!(
                e["sha256"],
                mcpres::json::canonical::sha256_hex(content),
                "{e}"
            );
        }
        // The /tmp file is named where the subject put it.
        assert_eq!(find(&tmp_name)["path"], format!("/tmp/{tmp_name}"));
        let scope = &s["scope"];
        assert_eq!(scope["reported"], true);
        assert_eq!(scope["rootReadOnly"], true, "{scope}");
        assert_eq!(scope["devShm"], "private");
        assert!(
            scope["overlaid"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d == "/tmp"),
            "{scope}"
        );
    }
    // The content is nowhere in the stored evidence.
    for entry in walk(&out) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(
            !bytes
                .windows(b"by residue_server.py".len())
                .any(|w| w == b"by residue_server.py"),
            "{} holds a file's content",
            entry.display()
        );
    }
}

/// A file the subject leaves in its working directory lands in that
/// session's overlay: named there (the run fails on it), never on the host.
/// What changes on the host's working directory meanwhile is not the
/// subject's (the overlay holds all it wrote), so the honest twin's runs
/// are not failed by another process's writes there (a unit test covers
/// the attribution: `the_working_directory_is_overlaid_only_when_every_session_says_so`).
#[test]
fn a_file_left_in_the_working_directory_is_named_from_the_overlay() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let out = tmp.path().join("bundle");
    let name = format!("mcpres-sandbox-cwd-{}.txt", std::process::id());
    let server = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(SERVER);
    let o = mcpres_in(
        &cwd,
        &[
            "run",
            "--scenario",
            "generic",
            "--sandbox",
            "require",
            "-o",
            out.to_str().unwrap(),
            "--",
            "python3",
            server.to_str().unwrap(),
            "--cwd-file",
            &name,
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    assert!(!cwd.join(&name).exists(), "the file reached the host");
    let fs = read_json(&out.join("raw/filesystem-report.json"));
    assert_eq!(fs["subjectWroteFiles"], true, "{fs}");
    assert_eq!(fs["workingDirectory"]["attributedToSubject"], false, "{fs}");
    for s in sessions(&out) {
        let left = s["entriesLeft"].as_array().unwrap();
        assert!(
            left.iter()
                .any(|e| e["path"].as_str().is_some_and(|p| p.ends_with(&name))
                    && e["change"] == "created"),
            "{name} not named in {s}"
        );
    }
    let cleanup = read_json(&out.join("raw/cleanup-report.json"));
    assert_eq!(cleanup["reasonCode"], "RESIDUE_SUBJECT_FILES");
}

#[test]
fn the_honest_twin_leaves_nothing_and_passes_in_the_sandbox() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&out, "require", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let cleanup = read_json(&out.join("raw/cleanup-report.json"));
    assert_eq!(cleanup["passed"], true, "{cleanup}");
    let all = sessions(&out);
    for s in &all {
        assert_eq!(s["entriesLeft"], serde_json::json!([]), "{s}");
        // What the process's first stage (the availability check) could not
        // overlay is named in every session and not tried again.
        assert_eq!(s["scope"]["overlaid"], all[0]["scope"]["overlaid"], "{s}");
        for n in s["scope"]["notCovered"].as_array().unwrap() {
            let path = n["path"].as_str().unwrap();
            if path.matches('/').count() == 1 && path != "/dev/shm" {
                assert!(
                    n["why"].as_str().unwrap().ends_with("not tried again)"),
                    "{n}"
                );
            }
        }
    }
    // Its own network namespace: nothing tried beyond loopback.
    let packets = lifecycle_events(&out, "unroutable-packets");
    assert!(!packets.is_empty());
    for e in packets {
        assert_eq!(e["packets"]["ipv4"], 0, "{e}");
    }
    let named = lifecycle_events(&out, "outside-destinations");
    assert!(!named.is_empty());
    for e in named {
        assert_eq!(e["destinations"], serde_json::json!([]), "{e}");
    }
    let spawned = lifecycle_events(&out, "spawned");
    assert!(
        spawned
            .iter()
            .all(|e| e["sandboxed"] == true && e["ownNetwork"] == true)
    );
    // Every session after the first was prepared while the one before it
    // ran (its sandbox set up ahead), and its subject started when it was
    // let go: the `spawned` offset, after the preparation began.
    let (first, later) = spawned.split_first().unwrap();
    assert!(first["sandboxPreparedAtMs"].is_null(), "{first}");
    assert!(!later.is_empty());
    for (e, before) in later.iter().zip(&spawned) {
        let prepared = e["sandboxPreparedAtMs"].as_u64().expect("prepared ahead");
        assert!(
            before["offsetMs"].as_u64().unwrap() <= prepared
                && prepared <= e["offsetMs"].as_u64().unwrap(),
            "{before}\n{e}"
        );
    }
    let ahead = all
        .iter()
        .filter(|s| s["scope"]["preparedAhead"] == true)
        .count();
    assert_eq!(ahead, later.len(), "{all:?}");
    // Each session had a PID namespace, and nothing was left in it.
    let ended = lifecycle_events(&out, "pid-namespace-ended");
    assert_eq!(ended.len(), spawned.len());
    for e in ended {
        assert!(e["initPid"].as_u64().is_some(), "{e}");
        assert_eq!(e["left"], serde_json::json!([]), "{e}");
    }
}

#[test]
fn an_attempt_to_reach_an_outside_address_is_named_and_goes_nowhere() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&out, "require", &["--reach-out"]);
    // The attempt failed inside (no route), so the server went on serving.
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    // Every outside address is local to the namespace: the attempts are
    // named (each session of the trial tried both, once each) and were
    // refused inside it.
    let named = lifecycle_events(&out, "outside-destinations");
    assert!(!named.is_empty());
    for e in &named {
        assert_eq!(
            e["destinations"],
            serde_json::json!([
                {"protocol": "tcp", "address": "192.0.2.1", "port": 443},
                {"protocol": "udp", "address": "2001:db8::53", "port": 53},
            ]),
            "{e}"
        );
    }
    for s in sessions(&out) {
        assert_eq!(s["scope"]["outsideLocal"], true, "{s}");
        assert_eq!(s["scope"]["outsideWatched"], true, "{s}");
        assert_eq!(s["scope"]["outsideFiltered"], true, "{s}");
    }
}

#[test]
fn without_the_sandbox_the_evidence_says_so_and_why() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = run(&out, "off", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no sandbox: the operator turned the sandbox off"),
        "{err}"
    );
    let fs = read_json(&out.join("raw/filesystem-report.json"));
    assert_eq!(fs["sandbox"]["sandboxed"], false);
    assert_eq!(fs["sandbox"]["chosenByOperator"], true);
    assert!(fs["sandboxSessions"].is_null());
    assert!(
        fs["notObserved"]
            .as_str()
            .unwrap()
            .contains("anywhere but the session's temporary directory"),
        "{fs}"
    );
    let spawned = lifecycle_events(&out, "spawned");
    assert!(spawned.iter().all(|e| e["sandboxed"] == false));
}

/// `mcpres profile run stdio-transport --checks stderr-diagnostics
/// --sandbox require --env HOME=$HOME -o out -- python3 SERVER extra...`.
/// A daemon the subject starts (a child that forks a grandchild into a
/// new session and exits) is an orphan that no parent of the subject's
/// waits for. In the sandbox it stays in the subject's PID namespace, held
/// by the namespace's init: it is named with where it was found, killed with
/// the namespace, and fails cleanup; nothing is left running.
#[test]
fn a_daemon_the_subject_starts_is_held_and_killed_through_its_pid_namespace() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let marker = format!("mcpres-daemon-{}", std::process::id());
    let _guard = KillMarked(marker.clone());
    let o = run(&out, "require", &["--daemonize", &marker]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    assert_eq!(alive_with(&marker), Vec::<String>::new());
    let ended = lifecycle_events(&out, "pid-namespace-ended");
    assert!(!ended.is_empty());
    let clean = ended
        .iter()
        .find(|e| e["session"] == "t1-clean")
        .expect("the clean session's namespace");
    let init = clean["initPid"].as_u64().expect("an init");
    let left = clean["left"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{clean}");
    // Re-parented to the namespace's init, in a session of its own.
    assert_eq!(left[0]["parentPid"], init, "{clean}");
    assert_eq!(left[0]["sessionId"], left[0]["pid"], "{clean}");
    let cleanup = read_json(&out.join("raw/cleanup-report.json"));
    assert_eq!(cleanup["passed"], false, "{cleanup}");
    let escaped = cleanup["escapedProcesses"].as_array().unwrap();
    assert!(
        escaped
            .iter()
            .any(|p| p["foundAfterSession"] == "clean" && p["foundIn"] == "pid-namespace"),
        "{cleanup}"
    );
    // The init itself is never a process the subject left.
    assert!(escaped.iter().all(|p| p["pid"] != init), "{cleanup}");
    let (_, report) = load(&out);
    assert!(report.valid, "{:?}", report.findings);
}

fn profile_run(out: &Path, extra: &[&str]) -> Output {
    let env_home = format!("HOME={}", home().display());
    let mut args = vec![
        "profile",
        "run",
        "stdio-transport",
        "--checks",
        "stderr-diagnostics",
        "--sandbox",
        "require",
        "--env",
        &env_home,
        "-o",
        out.to_str().unwrap(),
        "--",
        "python3",
        SERVER,
    ];
    args.extend_from_slice(extra);
    mcpres(&args)
}

#[test]
fn a_profile_run_names_what_each_probe_left_and_its_twin_keeps_cleanup() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = format!("mcpres-sandbox-profile-{}", std::process::id());
    let tmp_name = format!("{marker}.tmp");
    let home_name = format!(".{marker}.home");
    let host = HostFiles(vec![
        Path::new("/tmp").join(&tmp_name),
        home().join(&home_name),
    ]);
    let out = tmp.path().join("left");
    let o = profile_run(&out, &["--tmp-file", &tmp_name, "--home-file", &home_name]);
    let text = output_text(&o);
    for p in &host.0 {
        assert!(!p.exists(), "{} reached the host", p.display());
    }
    let cleanup = read_json(&out.join("artifacts/cleanup.json"));
    assert_eq!(cleanup["observed"], false, "{cleanup}\n{text}");
    assert_eq!(cleanup["sandbox"]["sandboxed"], true);
    let left = cleanup["probesThatLeftFiles"].as_array().unwrap();
    assert!(!left.is_empty(), "{cleanup}");
    assert!(
        left.iter().all(|l| l
            .as_str()
            .is_some_and(|l| l.contains(&tmp_name) && l.contains(&home_name))),
        "{cleanup}"
    );
    // The probe's own record names the files with their digests.
    let positive = read_json(&out.join("artifacts/stderr-diagnostics/positive.json"));
    let entries = positive["transcript"]["sandbox"]["entriesLeft"]
        .as_array()
        .unwrap_or_else(|| panic!("{positive}"));
    let tmp_entry = entries
        .iter()
        .find(|e| e["path"] == format!("/tmp/{tmp_name}"))
        .unwrap_or_else(|| panic!("{positive}"));
    assert_eq!(
        tmp_entry["sha256"],
        mcpres::json::canonical::sha256_hex(b"left in /tmp by residue_server.py\n")
    );
    // Required cleanup was not observed: the standard's profile rule makes
    // the evaluation invalid, on the cleanup record as stored.
    let v = mcpres(&["validate", out.to_str().unwrap()]);
    assert_eq!(v.status.code(), Some(1), "{}", output_text(&v));
    assert!(
        output_text(&v).contains("MCP_RES_PROFILE_CLEANUP_INCOMPLETE"),
        "{}",
        output_text(&v)
    );

    // The honest twin: nothing left, cleanup observed.
    let twin = tmp.path().join("twin");
    let o = profile_run(&twin, &[]);
    let cleanup = read_json(&twin.join("artifacts/cleanup.json"));
    assert_eq!(cleanup["observed"], true, "{cleanup}\n{}", output_text(&o));
    assert_eq!(cleanup["probesThatLeftFiles"], serde_json::json!([]));
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
}

/// A profile probe's subject that starts a daemon: the daemon is found in
/// the probe's PID namespace, named in the probe's record, killed, and the
/// run's cleanup is not observed (the honest twin's is, in the test above).
#[test]
fn a_profile_probe_names_the_daemon_its_subject_left_in_its_pid_namespace() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = format!("mcpres-profile-daemon-{}", std::process::id());
    let _guard = KillMarked(marker.clone());
    let out = tmp.path().join("left");
    let o = profile_run(&out, &["--daemonize", &marker]);
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert_eq!(alive_with(&marker), Vec::<String>::new());
    let cleanup = read_json(&out.join("artifacts/cleanup.json"));
    assert_eq!(cleanup["observed"], false, "{cleanup}\n{text}");
    let leaky = cleanup["probesThatLeftProcesses"].as_array().unwrap();
    assert!(
        !leaky.is_empty()
            && leaky
                .iter()
                .all(|l| l.as_str().unwrap().contains("(python")),
        "{cleanup}"
    );
    let positive = read_json(&out.join("artifacts/stderr-diagnostics/positive.json"));
    let end = &positive["transcript"]["end"];
    let left = end["leftBehindProcesses"].as_array().unwrap();
    assert!(
        left.iter()
            .any(|p| p["foundIn"] == "pid-namespace" && p["sessionId"] == p["pid"]),
        "{end}"
    );
    let v = mcpres(&["validate", out.to_str().unwrap()]);
    assert_eq!(v.status.code(), Some(1), "{}", output_text(&v));
    assert!(
        output_text(&v).contains("MCP_RES_PROFILE_CLEANUP_INCOMPLETE"),
        "{}",
        output_text(&v)
    );
    // The run's FAIL is the one its record gives: nothing else is refused.
    assert!(
        !output_text(&v).contains("but its checks give"),
        "{}",
        output_text(&v)
    );
}

/// The controlled faults the operational profile needs: a directory that
/// is a file system of 64 KiB (a larger write fails with "no space left on
/// device") and a read-only one, both recorded as injected, neither leaving
/// anything on the host.
#[test]
fn controlled_faults_are_injected_and_recorded() {
    use mcpres::produce::drive::sandbox::{Fault, Stage, tools_with};
    let tools = tools_with(&exe()).expect("the sandbox is available here");
    let parent = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let full = work.path().join("full");
    let ro = work.path().join("ro");
    std::fs::create_dir(&full).unwrap();
    std::fs::create_dir(&ro).unwrap();
    let mut stage = Stage::create(parent.path(), "s", true).unwrap();
    stage.inject(Fault::DiskFull {
        dir: full.clone(),
        bytes: 64 * 1024,
    });
    stage.inject(Fault::ReadOnly { path: ro.clone() });
    let script = format!(
        "head -c 1000 /dev/zero > {f}/small; echo small=$?; head -c 200000 /dev/zero > {f}/big; echo full=$?; echo x > {r}/f; echo ro=$?",
        f = full.display(),
        r = ro.display()
    );
    let (program, args) = stage.wrap(&tools, Path::new("/bin/sh"), &["-c".into(), script]);
    let out = std::process::Command::new(program)
        .args(args)
        .env_clear()
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("full=1"), "{stdout}{stderr}");
    assert!(stdout.contains("small=0"), "{stdout}{stderr}");
    assert!(
        stdout.contains("ro=2") || stdout.contains("ro=1"),
        "{stdout}{stderr}"
    );
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(stderr.contains("Read-only file system"), "{stderr}");
    let seen = stage.observe();
    let injected = seen["scope"]["injected"].as_array().unwrap();
    assert_eq!(injected.len(), 2, "{seen}");
    assert_eq!(injected[0]["fault"], "disk-full");
    assert_eq!(injected[0]["bytes"], 65536);
    assert_eq!(injected[1]["fault"], "read-only");
    assert_eq!(seen["scope"]["notInjected"], serde_json::json!([]));
    drop(stage);
    // Nothing reached the host.
    assert_eq!(std::fs::read_dir(&full).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(&ro).unwrap().count(), 0);
    // A fault on a directory that does not exist is named, not injected.
    let mut stage = Stage::create(parent.path(), "t", true).unwrap();
    stage.inject(Fault::DiskFull {
        dir: work.path().join("absent"),
        bytes: 1024,
    });
    let (program, args) = stage.wrap(&tools, Path::new("/bin/true"), &[]);
    let out = std::process::Command::new(program)
        .args(args)
        .env_clear()
        .output()
        .unwrap();
    assert!(out.status.success());
    let seen = stage.observe();
    assert_eq!(seen["scope"]["injected"], serde_json::json!([]), "{seen}");
    assert_eq!(
        seen["scope"]["notInjected"][0]["why"],
        "not an existing directory"
    );
}

/// Every regular file below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    out
}

/// The subject is the second process of its PID namespace; the process
/// mcpres started stands in for it: it names the subject's pid and ends as
/// the subject ends (its exit code, or its signal), and the subject can
/// start threads (a process that made the namespace for its children could
/// not).
#[test]
fn the_stand_in_ends_as_the_subject_ends_and_names_its_pid() {
    use mcpres::produce::drive::sandbox::{NAMING_LIMIT, Stage, tools_with};
    use std::os::unix::process::ExitStatusExt as _;
    let tools = tools_with(&exe()).expect("the sandbox is available here");
    let parent = tempfile::tempdir().unwrap();
    let run = |name: &str, script: &str| {
        let stage = Stage::create(parent.path(), name, true).unwrap();
        let (program, args) =
            stage.wrap(&tools, Path::new("/bin/sh"), &["-c".into(), script.into()]);
        let mut child = std::process::Command::new(program)
            .args(args)
            .env_clear()
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let leader = child.id();
        let subject = stage.subject_pid(leader, NAMING_LIMIT);
        let mut out = String::new();
        use std::io::Read as _;
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let status = child.wait().unwrap();
        (leader, subject, out, status)
    };
    // The subject prints its own view of itself: pid 2 of its namespace.
    let (leader, subject, out, status) = run(
        "exit",
        "while read -r l; do case $l in NSpid*) echo $l;; esac; done < /proc/self/status; exit 3",
    );
    assert_ne!(subject, leader);
    assert_eq!(out.trim(), format!("NSpid: {subject} 2"));
    assert_eq!(status.code(), Some(3));
    let (_, _, _, status) = run("signal", "kill -TERM $$");
    assert_eq!(status.signal(), Some(15), "{status:?}");
    // Threads: Python starts one and joins it.
    let (_, _, out, status) = run(
        "threads",
        "python3 -c 'import threading; t = threading.Thread(target=print, args=(\"thread ran\",)); t.start(); t.join()'",
    );
    assert_eq!(out.trim(), "thread ran");
    assert!(status.success());
}

const HTTP_SERVER: &str = "tests/subjects/http_subject.py";

/// Every outside destination named in `v` (any depth), in order.
fn outside_named(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "outsideDestinations" {
                    out.push(x.clone());
                } else {
                    outside_named(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| outside_named(x, out)),
        _ => {}
    }
}

/// An HTTP subject runs in a network namespace of its own too, reached
/// through the namespace's door: a profile run of it passes as before, its
/// attempts to reach outside addresses are named in every probe that
/// started it, and its honest twin names none.
#[test]
fn an_http_subject_in_its_own_network_namespace_is_reached_and_its_outside_attempts_named() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "profile",
            "run",
            "streamable-http",
            "--checks",
            "keepalive,listener-cleanup",
            "--sandbox",
            "require",
            "--http",
            "http://127.0.0.1:0/mcp",
            "-o",
            out.to_str().unwrap(),
            "--",
            "python3",
            HTTP_SERVER,
            "--port",
            "{port}",
        ];
        args.extend_from_slice(extra);
        mcpres(&args)
    };
    let expected = serde_json::json!([
        {"address": "192.0.2.1", "port": 443, "protocol": "tcp"},
        {"address": "2001:db8::53", "port": 53, "protocol": "udp"},
    ]);
    for (name, extra) in [("reaching", &["--reach-out"][..]), ("twin", &[][..])] {
        let out = tmp.path().join(name);
        let o = run(&out, extra);
        // Reached through the door: every check is observed and passes.
        assert_eq!(o.status.code(), Some(0), "{name}: {}", output_text(&o));
        let preflight = read_json(&out.join("artifacts/preflight.json"));
        let mut named = Vec::new();
        outside_named(&preflight, &mut named);
        for dir in ["keepalive", "listener-cleanup"] {
            for f in std::fs::read_dir(out.join("artifacts").join(dir)).unwrap() {
                outside_named(&read_json(&f.unwrap().path()), &mut named);
            }
        }
        assert!(named.len() >= 3, "{name}: {named:?}");
        for n in &named {
            if name == "twin" {
                assert_eq!(n, &serde_json::json!([]), "{name}");
            } else {
                assert_eq!(n, &expected, "{name}");
            }
        }
        let text = std::fs::read_to_string(out.join("artifacts/preflight.json")).unwrap();
        assert!(text.contains("\"door\":true"), "{name}: {text}");
        // The listener's addresses were read in its own namespace.
        let positive = read_json(&out.join("artifacts/listener-cleanup/positive.json"));
        let mut bound = Vec::new();
        find_key(&positive, "boundAddresses", &mut bound);
        assert_eq!(bound, vec![serde_json::json!(["127.0.0.1"])], "{name}");
        let v = mcpres(&["validate", out.to_str().unwrap()]);
        assert_eq!(v.status.code(), Some(0), "{name}: {}", output_text(&v));
    }
}

/// Every value of `key` in `v` (any depth).
fn find_key(v: &Value, key: &str, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == key {
                    out.push(x.clone());
                } else {
                    find_key(x, key, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| find_key(x, key, out)),
        _ => {}
    }
}

/// The harness over Streamable HTTP: its subject too listens in a network
/// namespace of its own and is reached through the door. The reference
/// server passes there; the HTTP test subject (built for the profile, which
/// the generic scenario fails on its own account, as without the sandbox)
/// gets the same verdicts whether or not it tries outside addresses, and
/// what it tried is a lifecycle event of every session; its twin's lists
/// are empty.
#[test]
fn a_harness_http_subject_is_reached_through_its_door_and_its_outside_attempts_named() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = env!("CARGO_BIN_EXE_mcpres");
    let run = |out: &Path, subject: &[&str], port: String| {
        let url = format!("http://127.0.0.1:{port}/mcp");
        let mut args = vec![
            "run",
            "--scenario",
            "generic",
            "--sandbox",
            "require",
            "--http",
            &url,
            "-o",
            out.to_str().unwrap(),
            "--",
        ];
        args.extend(
            subject
                .iter()
                .map(|a| if *a == "{port}" { port.as_str() } else { a }),
        );
        let o = mcpres(&args);
        let spawned = lifecycle_events(out, "spawned");
        assert!(!spawned.is_empty());
        assert!(
            spawned.iter().all(|e| e["ownNetwork"] == true),
            "{spawned:?}"
        );
        // The listener was read in the subject's namespace.
        let listening = lifecycle_events(out, "listening");
        assert!(!listening.is_empty());
        for e in listening {
            assert_eq!(e["boundAddresses"], serde_json::json!(["127.0.0.1"]), "{e}");
        }
        (
            o,
            lifecycle_events(out, "outside-destinations"),
            spawned.len(),
        )
    };
    // Another process holds the same port on this machine: the subject's
    // own namespace has it free.
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy_port = busy.local_addr().unwrap().port().to_string();
    let (o, named, sessions) = run(
        &tmp.path().join("reference"),
        &[exe, "serve", "--transport", "http", "--port", "{port}"],
        busy_port,
    );
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    drop(busy);
    assert_eq!(named.len(), sessions);
    let mut tables = Vec::new();
    for (name, reach) in [("reaching", true), ("twin", false)] {
        let mut subject = vec!["python3", HTTP_SERVER, "--port", "{port}"];
        if reach {
            subject.push("--reach-out");
        }
        let (o, named, sessions) = run(&tmp.path().join(name), &subject, free_port().to_string());
        assert_eq!(named.len(), sessions, "{name}: {named:?}");
        for e in &named {
            let want = if reach {
                serde_json::json!([
                    {"protocol": "tcp", "address": "192.0.2.1", "port": 443},
                    {"protocol": "udp", "address": "2001:db8::53", "port": 53},
                ])
            } else {
                serde_json::json!([])
            };
            assert_eq!(e["destinations"], want, "{name}: {e}");
        }
        let dir = tmp.path().join(name).display().to_string();
        tables.push((
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).replace(&dir, "OUT"),
        ));
    }
    assert_eq!(tables[0], tables[1]);
}

/// A session prepared ahead and never run (the clean control of a subject
/// that exits at once fails, so no control after it runs) starts nothing
/// and leaves nothing: its helper and init are gone once the run has
/// ended, and so is every directory it made.
#[test]
fn a_session_prepared_ahead_and_never_run_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let scratch = tmp.path().join("tmp");
    std::fs::create_dir(&scratch).unwrap();
    let out = tmp.path().join("bundle");
    let marker = format!("mcpres-never-run-{}", std::process::id());
    let _guard = KillMarked(marker.clone());
    let o = command()
        .args([
            "run",
            "--scenario",
            "generic",
            "--sandbox",
            "require",
            "-o",
            out.to_str().unwrap(),
            "--",
            "/bin/sh",
            "-c",
            "exit 3",
            &marker,
        ])
        .env("TMPDIR", &scratch)
        .output()
        .unwrap();
    let text = output_text(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("clean control"), "{text}");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !alive_with(&marker).is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(alive_with(&marker), Vec::<String>::new());
    let left: Vec<_> = std::fs::read_dir(&scratch)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}
