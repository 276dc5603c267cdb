//! `mcpres run` ended by SIGINT, SIGTERM or SIGHUP in the middle of a run
//! (issue 15, item 2): over stdio and HTTP, for one bundle and for a
//! campaign, every process of the subject (its group and a descendant that
//! left the group) is killed and reaped, the listener is closed, the scratch
//! directory is removed, no output is left, and the exit status is 128 + the
//! signal's number (spec/harness.md, "Signals").

mod support;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::{command, free_port, text};

/// A subject that never answers: it starts a descendant that leaves its
/// process group (`setsid`), listens on the port in HTTP mode, writes both
/// pids to `$PIDFILE` (the marker that it is fully started), then waits.
const SUBJECT: &str = r#"
import os, socket, sys, time
child = os.fork()
if child == 0:
    os.setsid()
    time.sleep(1000)
    os._exit(0)
listener = None
if sys.argv[1] == "http":
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(sys.argv[2])))
    listener.listen(16)
with open(os.environ["PIDFILE"], "a") as f:
    f.write(f"{child}\n{os.getpid()}\n")
held = []
while True:
    if listener is None:
        time.sleep(1000)
    else:
        held.append(listener.accept()[0])
"#;

const PYTHON: &str = "/usr/bin/python3";

/// The signals and the exit status each one gives (spec/harness.md).
const SIGNALS: [(&str, i32); 3] = [("INT", 130), ("TERM", 143), ("HUP", 129)];

/// The live processes (zombies too) whose command line names `script`.
fn marked(script: &Path) -> Vec<u32> {
    let needle = script.display().to_string();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let words: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        // The subject itself (python3 SCRIPT ...), not the sandbox's
        // helper on its way to it (`... -- python3 SCRIPT`).
        if words.get(1).is_some_and(|w| *w == needle) {
            out.push(pid);
        }
    }
    out
}

/// Every process `/proc` shows (zombies included) whose pid or process group
/// is one of `pids`.
fn left_over(pids: &[u32]) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let pgid: u32 = fields.get(2).and_then(|f| f.parse().ok()).unwrap_or(0);
        if pids.contains(&pid) || pids.contains(&pgid) {
            out.push(stat.trim().to_string());
        }
    }
    out
}

/// One case: start the run, wait until the subject is fully started, send
/// the signal, then check what is left.
fn interrupt(signal: &str, expected: i32, http: bool, campaign: bool) {
    let what = format!(
        "SIG{signal} over {} for {}",
        if http { "HTTP" } else { "stdio" },
        if campaign { "a campaign" } else { "one bundle" }
    );
    let tmp = tempfile::tempdir().unwrap();
    let scratch_root = tmp.path().join("tmpdir");
    std::fs::create_dir(&scratch_root).unwrap();
    let script = tmp.path().join("subject.py");
    std::fs::write(&script, SUBJECT).unwrap();
    let pidfile = tmp.path().join("pids");
    let out = tmp.path().join("out");
    let port = free_port();
    let mut args: Vec<String> = vec![
        "run".into(),
        "--scenario".into(),
        "generic".into(),
        "--env".into(),
        format!("PIDFILE={}", pidfile.display()),
        "-o".into(),
        out.display().to_string(),
    ];
    if campaign {
        // Far above what one bundle holds: a campaign directory of parts.
        args.extend(["--trials".into(), "100".into()]);
    }
    if http {
        args.extend(["--http".into(), format!("http://127.0.0.1:{port}/mcp")]);
    }
    args.extend([
        "--".into(),
        PYTHON.into(),
        script.display().to_string(),
        if http { "http" } else { "stdio" }.into(),
        port.to_string(),
    ]);
    let child = command()
        .args(&args)
        .env("TMPDIR", &scratch_root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    // The subject and its descendant, found by the script's unique path on
    // their command lines (in the sandbox, the pid file the subject writes
    // lands in the overlay, not where the test could read it); over HTTP,
    // also once it listens (in the network namespace of its own the
    // sandbox gives it, where the host's loopback does not reach: read in
    // that namespace's TCP table).
    let listening = |pids: &[u32]| {
        !http
            || pids
                .iter()
                .any(|&p| !mcpres::produce::drive::proc::listening_on(Some(p), port).is_empty())
    };
    let mut pids = marked(&script);
    while pids.len() < 2 || !listening(&pids) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{what}: the subject never started"
        );
        std::thread::sleep(Duration::from_millis(20));
        pids = marked(&script);
    }
    // Mid-run: the subject is alive, and a campaign's directory exists.
    assert!(left_over(&pids).len() >= 2, "{what}");
    assert_eq!(out.exists(), campaign, "{what}");
    let since = support::boot_ticks();
    let sent = std::process::Command::new("/bin/kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let o = support::output_within(child, Duration::from_secs(60), &what);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(expected), "{what}: stderr:\n{stderr}");
    assert!(
        stderr.contains(&format!("interrupted by SIG{signal}")),
        "{what}: stderr:\n{stderr}"
    );
    // Reaped as well as killed: not even a zombie, in the group or outside it.
    assert!(pids.len() >= 2, "{what}");
    let left = left_over(&pids);
    assert!(left.is_empty(), "{what}: left behind: {left:?}");
    if http {
        support::assert_port_released(port, since, &what);
    }
    let scratch: Vec<_> = std::fs::read_dir(&scratch_root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(scratch.is_empty(), "{what}: scratch left: {scratch:?}");
    assert!(!out.exists(), "{what}: output left at {}", out.display());
}

#[test]
fn termination_signals_kill_reap_and_remove_everything() {
    for (signal, code) in SIGNALS {
        for http in [false, true] {
            for campaign in [false, true] {
                interrupt(signal, code, http, campaign);
            }
        }
    }
}
