//! Adversarial subjects (issue 13, item 7): small stdio servers in
//! tests/subjects/liars/ that lie in one way each, run through the real binary
//! under `--scenario generic --trials 2`. Each test checks that the bundle
//! claims no more than the run observed; `honest.py`, the same code without
//! the lie, must still pass. Every failure message names the unearned claim
//! and prints the statement, the observations, the operations and the tail of
//! the run's output.
#![cfg(feature = "server")]

mod harness_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use harness_support::*;

/// Hard limit on one `mcpres` invocation; the harness has its own budgets,
/// this only keeps a hung run from hanging the test suite.
const WATCHDOG: Duration = Duration::from_secs(120);

/// Run `mcpres ARGS` with a watchdog that kills it after [`WATCHDOG`].
fn mcpres(args: &[&str]) -> Output {
    let child = Command::new(exe())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcpres");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let out = child.wait_with_output().expect("wait for mcpres");
        let _ = tx.send(());
        out
    });
    if rx.recv_timeout(WATCHDOG).is_err() {
        // Not reaped yet (the waiter has not returned), so the pid is still ours.
        let pid = rustix::process::Pid::from_raw(pid as i32).expect("child pid");
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        let out = waiter.join().expect("waiter thread");
        panic!(
            "mcpres {args:?} did not finish within {WATCHDOG:?} and was killed\n{}",
            tail(&out)
        );
    }
    waiter.join().expect("waiter thread")
}

fn liar(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/subjects/liars")
        .join(name)
}

/// The last few kilobytes of a command's stdout and stderr.
fn tail(o: &Output) -> String {
    let keep = |b: &[u8]| {
        let s = text(b);
        let start = s.len().saturating_sub(3000);
        let start = (start..=s.len()).find(|&i| s.is_char_boundary(i)).unwrap();
        s[start..].to_string()
    };
    format!(
        "exit: {:?}\nstdout (tail):\n{}\nstderr (tail):\n{}",
        o.status.code(),
        keep(&o.stdout),
        keep(&o.stderr)
    )
}

/// One finished `mcpres run` over a subject, with its bundle read back.
struct Run {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    out: Output,
    /// `{evidence, statement}` as written, or Null when the files are missing.
    doc: Value,
    /// `mcpres validate DIR`.
    validate: Output,
}

/// `mcpres run --scenario generic --trials 2 [extra] -o DIR -- python3 SUBJECT [args]`.
fn run_subject(name: &str, extra: &[&str], subject_args: &[&str]) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("bundle");
    let subject = liar(name);
    let mut args = vec!["run", "--scenario", "generic", "--trials", "2"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-o", dir.to_str().unwrap(), "--", "python3"]);
    args.push(subject.to_str().unwrap());
    args.extend_from_slice(subject_args);
    let out = mcpres(&args);
    let read = |file: &str| {
        let p = dir.join(file);
        if p.is_file() {
            read_json(&p)
        } else {
            Value::Null
        }
    };
    let doc = serde_json::json!({
        "evidence": read("evidence-envelope.json"),
        "statement": read("conformance-statement.json"),
    });
    let validate = mcpres(&["validate", dir.to_str().unwrap()]);
    Run {
        _tmp: tmp,
        dir,
        out,
        doc,
        validate,
    }
}

impl Run {
    fn result(&self) -> &Value {
        &self.doc["statement"]["result"]
    }

    fn evidence_class(&self) -> &Value {
        &self.doc["statement"]["evidenceClass"]
    }

    fn observations(&self, kind: &str) -> Vec<&Value> {
        let all = self.doc["evidence"]["observations"].as_array();
        all.into_iter()
            .flatten()
            .filter(|o| o["type"] == kind)
            .collect()
    }

    fn operations(&self, kind: &str) -> Vec<&Value> {
        let all = self.doc["evidence"]["operations"].as_array();
        all.into_iter()
            .flatten()
            .filter(|o| o["kind"] == kind)
            .collect()
    }

    /// Everything an assertion message needs: statement, class, observation
    /// and operation outcomes, the validator's verdict and the run's output.
    fn context(&self) -> String {
        let mut s = format!(
            "bundle: {}\nstatement.result: {}\nevidenceClass: {}\n",
            self.dir.display(),
            self.result(),
            self.evidence_class()
        );
        let obs = self.doc["evidence"]["observations"].as_array();
        for o in obs.into_iter().flatten() {
            s += &format!(
                "observation {} {} outcome={} reason={}\n",
                o["id"], o["type"], o["outcome"], o["reasonCode"]
            );
        }
        let ops = self.doc["evidence"]["operations"].as_array();
        for o in ops.into_iter().flatten() {
            s += &format!(
                "operation {} {} outcome={}\n",
                o["operationId"], o["kind"], o["outcome"]
            );
        }
        format!(
            "{s}--- mcpres run\n{}\n--- mcpres validate\n{}",
            tail(&self.out),
            tail(&self.validate)
        )
    }

    /// What every liar must get: a non-zero exit, no PASS, and a bundle that
    /// `mcpres validate` judges as a valid FAIL (0) or as vacuous (1), never
    /// unusable (2).
    fn assert_not_passed(&self, lie: &str) {
        let ctx = self.context();
        assert!(
            !self.doc["statement"].is_null(),
            "{lie}: no statement was written\n{ctx}"
        );
        assert_ne!(
            self.out.status.code(),
            Some(0),
            "unearned: `mcpres run` exited 0 for a subject that {lie}\n{ctx}"
        );
        assert_ne!(
            self.result(),
            "PASS",
            "unearned: statement.result PASS for a subject that {lie}\n{ctx}"
        );
        self.assert_validate_verdict(lie);
    }

    fn assert_validate_verdict(&self, lie: &str) {
        let ctx = self.context();
        match self.validate.status.code() {
            Some(0) => {}
            Some(1) => assert!(
                output_text(&self.validate).contains("MCP_RES_VACUOUS_NEGATIVE_CONTROL"),
                "`mcpres validate` refused the bundle of a subject that {lie} for a reason other \
                 than MCP_RES_VACUOUS_NEGATIVE_CONTROL: the producer wrote an invalid record\n{ctx}"
            ),
            other => panic!(
                "`mcpres validate` exit {other:?} (unusable input) on the bundle of a subject \
                 that {lie}\n{ctx}"
            ),
        }
    }

    fn outcomes(&self, kind: &str) -> Vec<String> {
        self.observations(kind)
            .iter()
            .map(|o| o["outcome"].as_str().unwrap_or("?").to_string())
            .collect()
    }

    /// The run FAILed and at least one negative control is recorded as a
    /// failed FAULT_CASE: the subject's acceptance of bad input was noticed.
    fn assert_rejection_tests_failed(&self, lie: &str) {
        let ctx = self.context();
        assert_eq!(
            self.result(),
            "FAIL",
            "unearned: statement.result is not FAIL for a subject that {lie}\n{ctx}"
        );
        let failed = self
            .operations("FAULT_CASE")
            .iter()
            .filter(|o| o["outcome"] == "FAIL")
            .count();
        assert!(
            failed > 0,
            "unearned: every negative control was credited (NEGATIVE_CONTROL, no failed \
             FAULT_CASE) although the subject {lie}: the controls never reached the subject\n{ctx}"
        );
    }
}

/// Every JSON string literal in `bytes`, decoded (escapes resolved). Bytes
/// that are not JSON are scanned for `"..."` runs and decoded one by one.
fn decoded_strings(bytes: &[u8]) -> Vec<String> {
    fn collect(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| collect(x, out)),
            Value::Object(m) => m.iter().for_each(|(k, x)| {
                out.push(k.clone());
                collect(x, out)
            }),
            _ => {}
        }
    }
    let mut out = Vec::new();
    let s = text(bytes);
    // Whole documents and JSON lines.
    for doc in std::iter::once(s.as_str()).chain(s.lines()) {
        if let Ok(v) = serde_json::from_str::<Value>(doc) {
            collect(&v, &mut out);
        }
    }
    // Any quoted run, wherever it sits (also inside non-JSON captures).
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            if j < b.len() {
                if let Ok(Value::String(d)) = serde_json::from_str::<Value>(&s[i..=j]) {
                    out.push(d);
                }
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

#[test]
fn accept_everything_fails_the_rejection_controls() {
    let lie = "accepts every line, malformed or not, with a success result";
    let r = run_subject("accept_everything.py", &[], &[]);
    r.assert_not_passed(lie);
    r.assert_rejection_tests_failed(lie);
}

#[test]
fn by_id_answers_fail_the_rejection_controls() {
    let lie = "answers by request id only, without reading the request";
    let r = run_subject("by_id.py", &[], &[]);
    r.assert_not_passed(lie);
    r.assert_rejection_tests_failed(lie);
}

#[test]
fn a_replayed_transcript_fails_its_clean_controls() {
    let lie = "never reads stdin and replays a canned transcript (with an unrelated \
               --subject-artifact)";
    let artifact = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let r = run_subject(
        "replay.py",
        &["--subject-artifact", artifact.to_str().unwrap()],
        &[],
    );
    r.assert_not_passed(lie);
    let ctx = r.context();
    assert_eq!(
        r.result(),
        "FAIL",
        "unearned: statement.result is not FAIL for a subject that {lie}\n{ctx}"
    );
    let clean = r.operations("CLEAN_CONTROL");
    assert!(!clean.is_empty(), "no CLEAN_CONTROL operation\n{ctx}");
    for op in clean {
        assert_eq!(
            op["outcome"], "FAIL",
            "unearned: clean control {} PASS for a subject that {lie}: its answers were not \
             bound to the requests that caused them\n{ctx}",
            op["operationId"]
        );
    }
}

#[test]
fn a_crash_after_initialize_is_recorded_with_its_exit_status() {
    let lie = "exits with status 3 after initialize";
    let r = run_subject("crash.py", &[], &[]);
    r.assert_not_passed(lie);
    let ctx = r.context();
    assert_eq!(
        r.result(),
        "FAIL",
        "unearned: not FAIL for a subject that {lie}\n{ctx}"
    );
    // The exit status must be in the lifecycle records of the raw artifacts.
    let recorded = walk(&r.dir).iter().any(|p| {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        name.contains("lifecycle")
            && text(&std::fs::read(p).unwrap())
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .any(|v| has_member(&v, "exitCode", &Value::from(3)))
    });
    assert!(
        recorded,
        "no lifecycle artifact records the subject's exit status 3 (the crash is not observed)\n{ctx}"
    );
}

/// Whether `v` holds, at any depth, an object member `key` equal to `want`.
fn has_member(v: &Value, key: &str, want: &Value) -> bool {
    match v {
        Value::Object(m) => m
            .iter()
            .any(|(k, x)| (k == key && x == want) || has_member(x, key, want)),
        Value::Array(a) => a.iter().any(|x| has_member(x, key, want)),
        _ => false,
    }
}

/// Pids of live processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            if text(&cmd).contains(marker) {
                pids.push(pid);
            }
        }
    }
    pids
}

#[test]
fn a_child_that_leaves_the_process_group_fails_cleanup() {
    let lie = "leaves a child running in a new session (setsid)";
    let tmp = tempfile::tempdir().unwrap();
    let marker = format!(
        "mcpres-liar-leak-{}",
        tmp.path().file_name().unwrap().to_string_lossy()
    );
    let r = run_subject("leak.py", &[], &[&marker]);
    // Whatever the bundle says, leave the machine clean before judging it.
    let left = processes_with(&marker);
    for &pid in &left {
        if let Some(pid) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
    r.assert_not_passed(lie);
    let ctx = r.context();
    assert_eq!(
        r.outcomes("CLEANUP_CHECK"),
        ["FAIL"],
        "unearned: CLEANUP_CHECK does not FAIL although the subject {lie}\n{ctx}"
    );
    assert!(
        left.is_empty(),
        "the harness returned with the leaked process(es) {left:?} (marker {marker}) still \
         alive: nothing tracked the subject's descendants\n{ctx}"
    );
}

#[test]
fn a_temporary_file_left_behind_is_observed() {
    let lie = "writes a temporary file on tools/call and never deletes it";
    let r = run_subject("leave_file.py", &[], &[]);
    // Remove what the subject left in the shared temp dir (it may have been
    // handed a private one instead).
    let shared = std::env::temp_dir();
    let mut left = Vec::new();
    for e in std::fs::read_dir(&shared).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with("mcpres-liar-left-") {
            left.push(e.path());
            let _ = std::fs::remove_file(e.path());
        }
    }
    r.assert_not_passed(lie);
    let ctx = format!(
        "files left in {}: {left:?}\n{}",
        shared.display(),
        r.context()
    );
    let cleanup_failed = r.outcomes("CLEANUP_CHECK") == ["FAIL"];
    let listed = r
        .observations("FILESYSTEM_EFFECT")
        .iter()
        .any(|o| o.to_string().contains("mcpres-liar-left-"));
    assert!(
        cleanup_failed || listed,
        "unearned: CLEANUP_CHECK is not FAIL and no FILESYSTEM_EFFECT observation lists the \
         file although the subject {lie}\n{ctx}"
    );
    let model = &r.doc["evidence"]["scenario"]["descriptor"]["sideEffectModel"];
    assert_ne!(
        model, "READ_ONLY",
        "unearned: sideEffectModel READ_ONLY for a subject that {lie}\n{ctx}"
    );
}

/// The values hide_secret.py derives (SHA-256 of fixed labels).
fn hidden_secrets() -> (String, String) {
    use sha2::Digest;
    let hex = |label: &[u8]| {
        sha2::Sha256::digest(label)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let key = format!("AKIA{}", &hex(b"mcpres-liar-aws-key").to_uppercase()[..16]);
    let token = hex(b"mcpres-liar-bearer-token")[..24].to_string();
    (key, token)
}

#[test]
fn secrets_behind_json_escapes_are_redacted() {
    let lie = "hides an AWS key and a bearer token behind JSON escapes";
    let (key, token) = hidden_secrets();
    let r = run_subject("hide_secret.py", &[], &[]);
    let ctx = r.context();
    assert!(
        !r.doc["statement"].is_null(),
        "{lie}: no statement was written\n{ctx}"
    );
    r.assert_validate_verdict(lie);
    let mut found = Vec::new();
    for p in walk(&r.dir) {
        let bytes = std::fs::read(&p).unwrap();
        let raw = text(&bytes);
        let decoded = decoded_strings(&bytes);
        for (what, secret) in [("AWS key", &key), ("bearer token", &token)] {
            if raw.contains(secret.as_str()) {
                found.push(format!("{what} raw in {}", p.display()));
            }
            if decoded.iter().any(|s| s.contains(secret.as_str())) {
                found.push(format!(
                    "{what} in a decoded JSON string of {}",
                    p.display()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a secret the subject sent is still in the bundle: {found:#?}\n{ctx}"
    );
    let scans = r.observations("PRIVACY_SCAN");
    assert!(
        scans.len() == 1
            && scans[0]["outcome"] == "PASS"
            && scans[0]["reasonCode"] == "SECRETS_REDACTED",
        "the PRIVACY_SCAN observation is not PASS/SECRETS_REDACTED although the subject sent \
         secrets: {scans:?}\n{ctx}"
    );
    // An echo server that does its job otherwise: the statement need not
    // fail, but the run must be a valid record either way.
}

#[test]
fn a_server_without_tools_does_not_get_a_tools_call_claim() {
    let lie = "lists no tools (no tools/call was ever made)";
    let r = run_subject("no_tools.py", &[], &[]);
    r.assert_not_passed(lie);
    let ctx = r.context();
    let class = &r.doc["evidence"]["scenario"]["descriptor"]["operationClass"];
    assert!(
        r.result() == "FAIL" || class != "tools/call",
        "unearned: operation class tools/call (with result {}) for a subject that {lie}\n{ctx}",
        r.result()
    );
}

#[test]
fn frames_that_are_not_jsonrpc_fail_the_protocol_exchange() {
    let lie = "answers with JSON objects and text lines that are not JSON-RPC";
    let r = run_subject("not_jsonrpc.py", &[], &[]);
    r.assert_not_passed(lie);
    let ctx = r.context();
    let outcomes = r.outcomes("PROTOCOL_EXCHANGE");
    assert!(
        !outcomes.is_empty() && outcomes.iter().all(|o| o == "FAIL"),
        "unearned: a PROTOCOL_EXCHANGE observation is not FAIL ({outcomes:?}) for a subject \
         that {lie}\n{ctx}"
    );
    assert_ne!(
        r.evidence_class(),
        "GENUINE_RUNTIME",
        "unearned: GENUINE_RUNTIME without a passing protocol exchange for a subject that {lie}\n{ctx}"
    );
}

#[test]
fn a_frame_above_the_declared_input_limit_fails() {
    let lie = "sends a 5 MB frame, above the declared 4 MiB input limit";
    let r = run_subject("big_frame.py", &[], &[]);
    r.assert_not_passed(lie);
    let ctx = r.context();
    assert_eq!(
        r.result(),
        "FAIL",
        "unearned: not FAIL for a subject that {lie}\n{ctx}"
    );
    let named = walk(&r.dir).iter().any(|p| {
        let name = p.to_string_lossy();
        name.ends_with(".json")
            && name.contains("oracle")
            && text(&std::fs::read(p).unwrap()).contains("LIMIT")
    });
    assert!(
        named,
        "no oracle artifact names the exceeded limit: the 5 MB frame was judged as if the \
         declared 4 MiB limit did not exist\n{ctx}"
    );
}

#[test]
fn the_honest_subject_passes() {
    let r = run_subject("honest.py", &[], &[]);
    let ctx = r.context();
    assert_eq!(
        r.out.status.code(),
        Some(0),
        "honest subject: run did not exit 0\n{ctx}"
    );
    assert_eq!(r.result(), "PASS", "honest subject: not PASS\n{ctx}");
    assert_eq!(
        r.evidence_class(),
        "GENUINE_RUNTIME",
        "honest subject: not GENUINE_RUNTIME\n{ctx}"
    );
    assert_eq!(
        r.validate.status.code(),
        Some(0),
        "honest subject: `mcpres validate` did not accept the bundle\n{ctx}"
    );
}
